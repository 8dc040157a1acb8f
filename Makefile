# SPDX-License-Identifier: MIT
# perflib-bpf: the one build file. make, make check, make bench, make install, make demo.
# V=1 shows the commands; SANITIZE=address,undefined (or SAN=1) builds with sanitizers.

SHELL := /bin/bash
OUTPUT ?= .output/
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/perflib
# systemd reads units and sysusers.d files under /usr/local/lib too; Debian's packages give
# the directories of pkg-config's systemd module (debian/rules)
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc
DESTDIR ?=
CC ?= gcc
CLANG ?= clang
# Debian installs bpftool in /usr/sbin, which a non-login PATH may lack
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
PKG_CONFIG ?= pkg-config

# each library's version is its newest symbol version node (userspace/perflib.map,
# pdh/pdh.map): `pkg-config --atleast-version 1.3 perflib` holds exactly when the library
# has PERFLIB_1.3's symbols (tests/build/test_pkgconfig.sh checks it)
node_version = $(shell sed -n 's/^$(1)_\([0-9]*\)\.\([0-9]*\) {.*/\1.\2.0/p' $(2) | tail -1)
VERSION := $(call node_version,PERFLIB,userspace/perflib.map)
VERSION_MAJOR := $(firstword $(subst ., ,$(VERSION)))
PDH_VERSION := $(call node_version,PDH,pdh/pdh.map)
PDH_MAJOR := $(firstword $(subst ., ,$(PDH_VERSION)))
W32_VERSION := $(call node_version,PERFLIB_WIN32,win32/win32.map)
W32_MAJOR := $(firstword $(subst ., ,$(W32_VERSION)))

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

ifeq ($(SAN),1)
SANITIZE ?= address,undefined
endif

CFLAGS ?= -O2 -g -Werror
ALL_CFLAGS := $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -Iinclude -Ibpf -I$(OUTPUT)bpf \
	-Icommon -Ipdh -Itools/common -I$(OUTPUT)gen
ALL_LDFLAGS := $(LDFLAGS)
# a slot's word and its owner stamp change together in one 16-byte CAS (internal.h)
ifeq ($(shell uname -m),x86_64)
ALL_CFLAGS += -mcx16
endif
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
ALL_LDFLAGS += -fsanitize=$(SANITIZE)
endif

# Debian packages the build needs: pkg-config module or command -> package.
DEPS_PKGS := libbpf-dev libelf-dev zlib1g-dev libxml2-dev libcmocka-dev libmicrohttpd-dev \
	bpftool clang llvm pkg-config make gcc curl python3 python3-prometheus-client spin iproute2 \
	libyaml-dev libgnutls28-dev libcrypt-dev openssl whois groff man-db systemd bash-completion \
	libcurl4-openssl-dev
# and what `make deb` and its test need besides (debhelper 13: dh_installsysusers)
DEB_DEPS_PKGS := debhelper dpkg-dev fakeroot lintian
XML_CFLAGS = $(shell $(PKG_CONFIG) --cflags libxml-2.0 2>/dev/null)
XML_LIBS = $(shell $(PKG_CONFIG) --libs libxml-2.0 2>/dev/null)
LIB_LIBS := -lbpf -lelf -lz -lpthread
# the exporter: HTTP, TLS (GnuTLS, as libmicrohttpd), its web configuration (libyaml), bcrypt
HTTP_LIBS = $(shell $(PKG_CONFIG) --libs libmicrohttpd gnutls yaml-0.1 libxcrypt 2>/dev/null)
# the remote module of libperflib (remote/): libcurl
CURL_CFLAGS = $(shell $(PKG_CONFIG) --cflags libcurl 2>/dev/null)
CURL_LIBS = $(shell $(PKG_CONFIG) --libs libcurl 2>/dev/null)

# common/: sources compiled into more than one binary (libperflib, libpdh), hidden in each
SHARED_SRCS := $(wildcard common/*.c)
LIB_SRCS := $(wildcard userspace/*.c) $(SHARED_SRCS)
LIB_SHARED_OBJS := $(patsubst %.c,$(OUTPUT)shared/%.o,$(LIB_SRCS))
LIB_STATIC_OBJS := $(patsubst %.c,$(OUTPUT)static/%.o,$(LIB_SRCS))
# BPF programs live beside their users: the library's in bpf/ (with layout.h), each tool's in
# its directory, the tests' in tests/bpf/ and the benches' in tests/bench/. Every skeleton goes
# to $(OUTPUT)bpf/ (names are unique across the directories).
BPF_DIRS := bpf $(patsubst %/main.c,%,$(wildcard tools/*/main.c)) tests/bpf tests/bench
BPF_SRCS := $(wildcard $(addsuffix /*.bpf.c,$(BPF_DIRS)))
SKELS := $(patsubst %.bpf.c,$(OUTPUT)bpf/%.skel.h,$(notdir $(BPF_SRCS)))

# libpdh: pdh/ (and common/ in the shared object; libperflib.a carries it for static links)
PDH_SRCS := $(wildcard pdh/*.c)
PDH_SHARED_OBJS := $(patsubst %.c,$(OUTPUT)shared/%.o,$(PDH_SRCS) $(SHARED_SRCS))
PDH_STATIC_OBJS := $(patsubst %.c,$(OUTPUT)static/%.o,$(PDH_SRCS))
PDH_SO := $(OUTPUT)libpdh.so.$(PDH_VERSION)
PDH_A := $(OUTPUT)libpdh.a
PDH_PC := $(OUTPUT)pdh.pc

# libperflib-win32 (win32/): the code behind the perflib-win32 module's Windows headers
# (include/perflib/win32/), and libperflib-win32main.a, the main() that calls a program's wmain
W32_SRCS := $(filter-out win32/wmain.c,$(wildcard win32/*.c))
W32_SHARED_OBJS := $(patsubst %.c,$(OUTPUT)shared/%.o,$(W32_SRCS))
W32_SO := $(OUTPUT)libperflib-win32.so.$(W32_VERSION)
W32_MAIN_A := $(OUTPUT)libperflib-win32main.a
W32_PC := $(OUTPUT)perflib-win32.pc
W32_HEADERS := $(wildcard include/perflib/win32/*.h)

COMMON_SRCS := $(wildcard tools/common/*.c)
COMMON_OBJS := $(patsubst tools/%.c,$(OUTPUT)tools-obj/%.o,$(COMMON_SRCS))
# tools link tools/common as an archive: each takes the modules it calls, and libxml2 only
# when the manifest reader is among them (--as-needed)
COMMON_A := $(OUTPUT)libtoolcommon.a
# tool-private modules that tests and benches link, and where their headers are
TOOL_LIBS := $(OUTPUT)libtool-perflib-exporter.a $(OUTPUT)libtool-typeperf.a
TOOL_INCLUDES := -Itools/perflib-exporter -Itools/typeperf
TOOLS := $(sort $(patsubst tools/%/main.c,%,$(wildcard tools/*/main.c)))
TOOL_BINS := $(addprefix $(OUTPUT)tools/,$(TOOLS))

# tests/ is laid out by what a test needs (docs/ARCHITECTURE.md, "Tests"): tests/unit/ the
# pure ones, tests/bpf/ those that make BPF maps (beside the BPF programs they load); each
# binary goes to $(OUTPUT)tests/<folder>/
UNIT_SRCS := $(filter-out %.bpf.c,$(wildcard tests/unit/test_*.c tests/bpf/test_*.c))
UNIT_BINS := $(patsubst tests/%.c,$(OUTPUT)tests/%,$(UNIT_SRCS))
# API tests run a second time against the shared library.
API_SRCS := $(wildcard tests/bpf/test_api_*.c)
API_SO_BINS := $(patsubst tests/%.c,$(OUTPUT)tests/%.so-test,$(API_SRCS))
HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_BINS := $(patsubst tests/helpers/%.c,$(OUTPUT)tests/helpers/%,$(HELPER_SRCS))
TESTLIB_SRCS := $(wildcard tests/lib/*.c)
TESTLIB_OBJS := $(patsubst tests/lib/%.c,$(OUTPUT)tests/lib/%.o,$(TESTLIB_SRCS))
STRESS_SRCS := $(wildcard tests/stress/*.c)
STRESS_BINS := $(patsubst tests/stress/%.c,$(OUTPUT)stress/%,$(STRESS_SRCS))
BENCH_SRCS := $(filter-out %.bpf.c,$(wildcard tests/bench/bench_*.c))
BENCH_BINS := $(patsubst tests/bench/%.c,$(OUTPUT)bench/%,$(BENCH_SRCS))

SO := $(OUTPUT)libperflib.so.$(VERSION)
# the remote module (remote/, on libcurl): dlopened by libperflib for other machines only
REMOTE_SONAME := libperflib-remote.so.1
REMOTE_SO := $(OUTPUT)$(REMOTE_SONAME)
REMOTE_SRCS := $(wildcard remote/*.c)
# LoadLibrary("advapi32.dll") (perflib/win32compat.h) dlopens this name
ADVAPI_ALIAS := libadvapi32.so
# installed as $(INCLUDEDIR)/perflib/*.h (include/perflib/ holds them, or links to them), and
# the old spellings <perflib.h>, <winperf.h>, ... as one-line headers including those
HEADERS := $(wildcard include/perflib/*.h)
OLD_HEADERS := perflib.h winperf.h perflib-linux.h perflib_bpf.h
COMPAT_HEADERS := $(addprefix $(OUTPUT)include-compat/,$(OLD_HEADERS))
A := $(OUTPUT)libperflib.a
PC := $(OUTPUT)perflib.pc

.PHONY: all lib tools tests check bench bench-scale install uninstall clean deps deps-check \
	demo check-load check-fresh check-abi check-headers check-layers format-check dupcheck stress \
	units deb deb-deps check-deb
.DELETE_ON_ERROR:
.SECONDARY:

all: deps-check lib tools units

lib: $(SO) $(A) $(PC) $(PDH_SO) $(PDH_A) $(PDH_PC) $(COMPAT_HEADERS) $(W32_SO) $(W32_MAIN_A) \
	$(W32_PC) $(REMOTE_SO)

$(OUTPUT)include-compat/%.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)printf '/* SPDX-License-Identifier: MIT */\n/* %s - the old spelling of <perflib/%s> */\n#include "perflib/%s"\n' \
		$*.h $*.h $*.h > $@

tools: $(TOOL_BINS)

# the systemd units with the installed paths (systemd/*.service.in: @BINDIR@)
UNITS := $(patsubst systemd/%.in,$(OUTPUT)systemd/%,$(wildcard systemd/*.service.in))
units: $(UNITS)
$(OUTPUT)systemd/%: systemd/%.in Makefile
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)sed -e 's|@BINDIR@|$(BINDIR)|g' $< > $@

# man pages (man/*.[1578], man(7) roff written by hand) and bash completion (completion/:
# one file per package, linked to each tool name it completes)
MANPAGES := $(wildcard man/*.[1-8])
COMPLETIONS := typeperf:relog:ctrpp:lodctr:unlodctr:kcounters:perflib-demo \
	perflib-sysd perflib-exporter

# ---- dependencies -------------------------------------------------------------------------
deps-check:
	@missing=""; \
	for m in libbpf libelf zlib libxml-2.0 cmocka libmicrohttpd gnutls yaml-0.1 libxcrypt \
		libcurl; do \
		$(PKG_CONFIG) --exists $$m 2>/dev/null || missing="$$missing $$m"; done; \
	for c in $(CLANG) $(BPFTOOL); do command -v $$c >/dev/null 2>&1 || \
		[ -x /usr/sbin/$$c ] || missing="$$missing $$c"; done; \
	if [ -n "$$missing" ]; then \
		echo "perflib: missing build dependencies:$$missing" >&2; \
		echo "perflib: run 'make deps' (apt-get install $(DEPS_PKGS))" >&2; exit 1; fi

deps deb-deps: PKGS = $(DEPS_PKGS) $(if $(filter deb-deps,$@),$(DEB_DEPS_PKGS))
deps deb-deps:
	@if [ "$$(id -u)" != 0 ]; then echo "make $@: run as root (apt-get)" >&2; exit 1; fi
	@need=""; for p in $(PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || \
		need="$$need $$p"; done; \
	if [ -n "$$need" ]; then echo "make $@: installing$$need"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need; \
	else echo "make $@: all build dependencies are installed"; fi

# ---- BPF ----------------------------------------------------------------------------------
$(OUTPUT)bpf/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

# one pattern rule per directory: make takes the one whose source exists
define bpf_rule
$(OUTPUT)bpf/%.bpf.o: $(1)/%.bpf.c $(wildcard $(1)/*.h) bpf/*.h include/*.h $(OUTPUT)bpf/vmlinux.h
	$$(call msg,BPF,$$@)
	$(Q)mkdir -p $$(@D)
	$(Q)$(CLANG) -target bpf -g -O2 -D__TARGET_ARCH_x86 -Iinclude -Ibpf -I$(1) -I$(OUTPUT)bpf \
		-c $$< -o $$@.tmp
	$(Q)$(BPFTOOL) gen object $$@ $$@.tmp && rm -f $$@.tmp
endef
$(foreach d,$(BPF_DIRS),$(eval $(call bpf_rule,$(d))))

$(OUTPUT)bpf/%.skel.h: $(OUTPUT)bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

skeletons: $(SKELS)

# ---- library ------------------------------------------------------------------------------
$(OUTPUT)shared/%.o: %.c | skeletons
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -MMD -MP -c $< -o $@

$(OUTPUT)static/%.o: %.c | skeletons
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fvisibility=hidden -MMD -MP -c $< -o $@

$(SO): $(LIB_SHARED_OBJS) userspace/perflib.map
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -shared -Wl,--version-script=userspace/perflib.map \
		-Wl,-soname,libperflib.so.$(VERSION_MAJOR) -Wl,--no-undefined \
		$(LIB_SHARED_OBJS) $(LIB_LIBS) -o $@
	$(Q)ln -sf libperflib.so.$(VERSION) $(OUTPUT)libperflib.so.$(VERSION_MAJOR)
	$(Q)ln -sf libperflib.so.$(VERSION_MAJOR) $(OUTPUT)libperflib.so
	$(Q)ln -sf libperflib.so.$(VERSION_MAJOR) $(OUTPUT)$(ADVAPI_ALIAS)

# where the remote module is looked for last (userspace/remote.c)
$(OUTPUT)shared/userspace/remote.o $(OUTPUT)static/userspace/remote.o: \
	ALL_CFLAGS += -DPERFLIB_LIBDIR='"$(LIBDIR)"'

$(REMOTE_SO): $(REMOTE_SRCS) common/remote_module.h
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(CURL_CFLAGS) -fPIC -fvisibility=hidden $(ALL_LDFLAGS) -shared \
		-Wl,-soname,$(REMOTE_SONAME) -Wl,--no-undefined $(REMOTE_SRCS) $(CURL_LIBS) \
		-lpthread -o $@
	$(Q)mkdir -p $(OUTPUT)tools
	$(Q)ln -sf ../$(REMOTE_SONAME) $(OUTPUT)tools/$(REMOTE_SONAME)

$(A): $(LIB_STATIC_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(PDH_SO): $(PDH_SHARED_OBJS) pdh/pdh.map $(SO)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -shared -Wl,--version-script=pdh/pdh.map \
		-Wl,-soname,libpdh.so.$(PDH_MAJOR) -Wl,--no-undefined \
		$(PDH_SHARED_OBJS) -L$(OUTPUT) -lperflib -lpthread -lm -o $@
	$(Q)ln -sf libpdh.so.$(PDH_VERSION) $(OUTPUT)libpdh.so.$(PDH_MAJOR)
	$(Q)ln -sf libpdh.so.$(PDH_MAJOR) $(OUTPUT)libpdh.so

$(PDH_A): $(PDH_STATIC_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(PDH_PC): pdh/pdh.pc.in pdh/pdh.map Makefile
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(PDH_VERSION)|' $< > $@

# libperflib-win32 needs only the C library: its events come from libpdh (perflib-win32.pc)
$(W32_SO): $(W32_SHARED_OBJS) win32/win32.map
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -shared -Wl,--version-script=win32/win32.map \
		-Wl,-soname,libperflib-win32.so.$(W32_MAJOR) -Wl,--no-undefined \
		$(W32_SHARED_OBJS) -o $@
	$(Q)ln -sf libperflib-win32.so.$(W32_VERSION) $(OUTPUT)libperflib-win32.so.$(W32_MAJOR)
	$(Q)ln -sf libperflib-win32.so.$(W32_MAJOR) $(OUTPUT)libperflib-win32.so

# position-independent: it is linked into PIE executables
$(W32_MAIN_A): $(OUTPUT)shared/win32/wmain.o
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(W32_PC): win32/perflib-win32.pc.in win32/win32.map Makefile
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(W32_VERSION)|' $< > $@

$(PC): userspace/perflib.pc.in userspace/perflib.map Makefile
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' $< > $@

# ---- tools --------------------------------------------------------------------------------
$(OUTPUT)tools-obj/%.o: tools/%.c | skeletons
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(XML_CFLAGS) -MMD -MP -c $< -o $@

.SECONDEXPANSION:
tool_objs = $(patsubst tools/%.c,$(OUTPUT)tools-obj/%.o,$(filter-out %.bpf.c,$(wildcard tools/$(1)/*.c)))
$(COMMON_A): $(COMMON_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# a tool's private modules (its objects but main.o) for the unit tests and benches that
# reach them; the tools themselves link their own objects
$(OUTPUT)libtool-%.a: $$(filter-out %/main.o,$$(call tool_objs,$$*))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUTPUT)tools/%: $$(call tool_objs,$$*) \
		$(COMMON_A) $(PDH_A) $(A)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) $(filter %.o,$^) $(COMMON_A) $(PDH_A) $(A) $(LIB_LIBS) \
		-Wl,--as-needed $(XML_LIBS) $(if $(filter exporter perflib-exporter,$*),$(HTTP_LIBS)) \
		-lm -Wl,--no-as-needed -o $@

# the demo provider's header comes from its manifest, through ctrpp
$(OUTPUT)gen/demo_counters.h: tools/perflib-demo/demo.man $(OUTPUT)tools/ctrpp
	$(call msg,CTRPP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(OUTPUT)tools/ctrpp -o $@ tools/perflib-demo/demo.man >/dev/null
$(OUTPUT)tools-obj/perflib-demo/main.o: $(OUTPUT)gen/demo_counters.h

# kcounters embeds its manifest (.incbin), which -MMD does not see
$(OUTPUT)tools-obj/kcounters/main.o: tools/kcounters/kcounters.man
$(OUTPUT)tools-obj/perflib-sysd/main.o: tools/perflib-sysd/system.man

# ---- tests --------------------------------------------------------------------------------
$(OUTPUT)tests/lib/%.o: tests/lib/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib $(XML_CFLAGS) -MMD -MP -c $< -o $@

$(UNIT_BINS): $(OUTPUT)tests/%: tests/%.c $(A) $(PDH_A) $(COMMON_OBJS) $(TOOL_LIBS) \
		$(TESTLIB_OBJS) | skeletons
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib -Itests/bpf $(TOOL_INCLUDES) $(XML_CFLAGS) -Iuserspace $(ALL_LDFLAGS) \
		-MMD -MP -MF $@.d $< $(TESTLIB_OBJS) $(TOOL_LIBS) $(COMMON_OBJS) $(PDH_A) $(A) \
		-lcmocka $(LIB_LIBS) $(XML_LIBS) -lm -o $@

$(API_SO_BINS): $(OUTPUT)tests/%.so-test: tests/%.c $(SO) $(TESTLIB_OBJS)
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib $(ALL_LDFLAGS) -DPERFLIB_TEST_SHARED -MMD -MP \
		-MF $@.d $< $(TESTLIB_OBJS) -L$(OUTPUT) -Wl,-rpath,$(abspath $(OUTPUT)) -lperflib \
		-lcmocka $(LIB_LIBS) -lm -o $@

$(OUTPUT)tests/helpers/%: tests/helpers/%.c $(A) $(TESTLIB_OBJS)
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib $(ALL_LDFLAGS) $< $(TESTLIB_OBJS) $(A) $(LIB_LIBS) \
		-lm -o $@

# the stress program uses the public API and the pins' layout only (tests/stress/stress.c)
$(OUTPUT)stress/%: tests/stress/%.c $(A) | skeletons
	$(call msg,STRESS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $< $(A) $(LIB_LIBS) -lm -o $@

# the benches are built too (not run): a bench that no longer compiles fails the check
tests: lib tools $(UNIT_BINS) $(API_SO_BINS) $(HELPER_BINS) $(STRESS_BINS) $(BENCH_BINS)

# the reliability soak at full count (1,000 kills per reaper mode, 200 corruption rounds,
# 40 claim/reap rounds, 60 growth kills, 1,000 grow/retire race rounds); `make check` runs a
# short one (tests/stress/test_stress.sh)
stress:
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)TOOLS=$(abspath $(OUTPUT))/tools $(OUTPUT)stress/stress --strict $(STRESS_ARGS)

check:
	@[ "$$(id -u)" != 0 ] || $(MAKE) --no-print-directory deps
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)$(MAKE) --no-print-directory check-abi
	$(Q)$(MAKE) --no-print-directory check-layers
	$(Q)OUTPUT=$(abspath $(OUTPUT)) SHARED=$(abspath ../shared) sh tests/run.sh
	@echo "make check-load: the multi-process tests many times with every core busy (CI runs it)"

# the multi-process tests again and again under CPU pressure (tests/stress/load.sh); CI runs it in
# the plain and the sanitizer build. LOAD_RUNS=N, LOAD_SLOW_RUNS=N, LOAD_RETIRE=N
check-load:
	@[ "$$(id -u)" != 0 ] || $(MAKE) --no-print-directory deps
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)OUTPUT=$(abspath $(OUTPUT)) sh tests/stress/load.sh

# `make check` on a fresh clone, FRESH_RUNS times (20), busy loops beside the odd runs
# (tests/stress/fresh.sh). FRESH_REV=commit, FRESH_DIR=dir, FRESH_BUSY=0
check-fresh:
	$(Q)sh tests/stress/fresh.sh

# ---- benchmarks ---------------------------------------------------------------------------
# a bench links the library, tools/common, the tools' private modules and tests/lib
$(OUTPUT)bench/%: tests/bench/%.c $(A) $(PDH_A) $(COMMON_OBJS) $(TOOL_LIBS) $(TESTLIB_OBJS) \
		| skeletons
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Iuserspace -Itests/lib $(TOOL_INCLUDES) $(XML_CFLAGS) \
		$(ALL_LDFLAGS) $< $(TESTLIB_OBJS) $(TOOL_LIBS) $(COMMON_OBJS) $(PDH_A) $(A) \
		$(LIB_LIBS) $(XML_LIBS) $(HTTP_LIBS) -lm -o $@

bench: lib $(BENCH_BINS) $(OUTPUT)tools/perflib-sysd
	$(Q)for b in $(BENCH_BINS); do echo "== $$b"; $$b || exit 1; done

# counter sets at scale (issue 8) alone, with options: make bench-scale BENCH_SCALE_ARGS=--quick
bench-scale: lib $(OUTPUT)bench/bench_scale
	$(Q)$(OUTPUT)bench/bench_scale $(BENCH_SCALE_ARGS)

# ---- demo ---------------------------------------------------------------------------------
demo:
	@[ "$$(id -u)" != 0 ] || $(MAKE) --no-print-directory deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)OUTPUT=$(abspath $(OUTPUT)) sh tools/perflib-demo/run-demo.sh

# ---- install ------------------------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(INCLUDEDIR)/perflib $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR)
	install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/perflib/
	install -m 644 $(COMPAT_HEADERS) include/pdh.h include/pdhmsg.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(A) $(PDH_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SO) $(PDH_SO) $(REMOTE_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libpdh.so.$(PDH_VERSION) $(DESTDIR)$(LIBDIR)/libpdh.so.$(PDH_MAJOR)
	ln -sf libpdh.so.$(PDH_MAJOR) $(DESTDIR)$(LIBDIR)/libpdh.so
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(PDH_VERSION)|' pdh/pdh.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/pdh.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/pdh.pc
	ln -sf libperflib.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libperflib.so.$(VERSION_MAJOR)
	ln -sf libperflib.so.$(VERSION_MAJOR) $(DESTDIR)$(LIBDIR)/libperflib.so
	ln -sf libperflib.so.$(VERSION_MAJOR) $(DESTDIR)$(LIBDIR)/$(ADVAPI_ALIAS)
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' userspace/perflib.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/perflib.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/perflib.pc
	install -d $(DESTDIR)$(INCLUDEDIR)/perflib/win32
	install -m 644 $(W32_HEADERS) $(DESTDIR)$(INCLUDEDIR)/perflib/win32/
	install -m 755 $(W32_SO) $(DESTDIR)$(LIBDIR)/
	install -m 644 $(W32_MAIN_A) $(DESTDIR)$(LIBDIR)/
	ln -sf libperflib-win32.so.$(W32_VERSION) $(DESTDIR)$(LIBDIR)/libperflib-win32.so.$(W32_MAJOR)
	ln -sf libperflib-win32.so.$(W32_MAJOR) $(DESTDIR)$(LIBDIR)/libperflib-win32.so
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(W32_VERSION)|' win32/perflib-win32.pc.in \
		> $(DESTDIR)$(LIBDIR)/pkgconfig/perflib-win32.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/perflib-win32.pc
	for t in $(TOOL_BINS); do install -m 755 $$t $(DESTDIR)$(BINDIR)/; done
	for m in $(MANPAGES); do sec=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$sec && \
		install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$sec/; done
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/default
	install -m 644 $(UNITS) $(DESTDIR)$(SYSTEMDUNITDIR)/
	install -m 644 systemd/perflib.sysusers $(DESTDIR)$(SYSUSERSDIR)/perflib.conf
	install -m 644 systemd/perflib-exporter.sysusers $(DESTDIR)$(SYSUSERSDIR)/perflib-exporter.conf
	for d in perflib-sysd perflib-exporter; do [ -e $(DESTDIR)$(SYSCONFDIR)/default/$$d ] || \
		install -m 644 systemd/$$d.default $(DESTDIR)$(SYSCONFDIR)/default/$$d; done
	for c in $(COMPLETIONS); do first=$${c%%:*}; \
		install -m 644 completion/$$first $(DESTDIR)$(BASHCOMPDIR)/$$first; \
		for t in $$(echo $$c | tr : ' '); do [ $$t = $$first ] || \
			ln -sf $$first $(DESTDIR)$(BASHCOMPDIR)/$$t; done; done
	install -m 644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/

# everything install put there, and nothing else
uninstall:
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/perflib/,$(notdir $(HEADERS))) \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(OLD_HEADERS)) \
		$(DESTDIR)$(LIBDIR)/libperflib.a $(DESTDIR)$(LIBDIR)/libperflib.so.$(VERSION) \
		$(DESTDIR)$(LIBDIR)/libperflib.so.$(VERSION_MAJOR) $(DESTDIR)$(LIBDIR)/libperflib.so \
		$(DESTDIR)$(LIBDIR)/$(ADVAPI_ALIAS) $(DESTDIR)$(LIBDIR)/pkgconfig/perflib.pc \
		$(DESTDIR)$(LIBDIR)/$(REMOTE_SONAME) \
		$(DESTDIR)$(INCLUDEDIR)/pdh.h $(DESTDIR)$(INCLUDEDIR)/pdhmsg.h \
		$(DESTDIR)$(LIBDIR)/libpdh.* $(DESTDIR)$(LIBDIR)/pkgconfig/pdh.pc \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/perflib/win32/,$(notdir $(W32_HEADERS))) \
		$(DESTDIR)$(LIBDIR)/libperflib-win32.so.$(W32_VERSION) \
		$(DESTDIR)$(LIBDIR)/libperflib-win32.so.$(W32_MAJOR) \
		$(DESTDIR)$(LIBDIR)/libperflib-win32.so $(DESTDIR)$(LIBDIR)/libperflib-win32main.a \
		$(DESTDIR)$(LIBDIR)/pkgconfig/perflib-win32.pc
	rmdir $(DESTDIR)$(INCLUDEDIR)/perflib/win32 2>/dev/null || true
	rmdir $(DESTDIR)$(INCLUDEDIR)/perflib 2>/dev/null || true
	for t in $(TOOLS); do rm -f $(DESTDIR)$(BINDIR)/$$t; done
	for m in $(MANPAGES); do rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m#man/}; done
	rm -f $(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(notdir $(UNITS))) \
		$(DESTDIR)$(SYSUSERSDIR)/perflib.conf $(DESTDIR)$(SYSUSERSDIR)/perflib-exporter.conf \
		$(addprefix $(DESTDIR)$(BASHCOMPDIR)/,$(subst :, ,$(COMPLETIONS)))
	rm -rf $(DESTDIR)$(DOCDIR)
	for d in perflib-sysd perflib-exporter; do f=$(DESTDIR)$(SYSCONFDIR)/default/$$d; \
		if cmp -s systemd/$$d.default $$f; then rm -f $$f; \
		elif [ -e $$f ]; then echo "uninstall: $$f is kept (changed settings)"; fi; done

# ---- Debian packages ----------------------------------------------------------------------
# make deb: the packages of debian/ built by dpkg-buildpackage from a copy of the tree (git's
# files, committed or not) in $(OUTPUT)deb/, where the .deb files land, then lintian over
# them (an error or a warning fails: each kept warning is overridden with its reason in
# debian/*.lintian-overrides). The version is the project's ($(VERSION), from perflib.map)
# with Debian revision 1; DEB_VERSION=X.Y.Z-N builds another (the upgrade test does).
DEB_VERSION ?= $(VERSION)-1
DEB_SRC := $(OUTPUT)deb/perflib-bpf-$(VERSION)
deb:
	@[ "$$(id -u)" != 0 ] || $(MAKE) --no-print-directory deb-deps
	$(Q)rm -rf $(OUTPUT)deb && mkdir -p $(DEB_SRC)
	$(Q)git ls-files -co --exclude-standard -z | xargs -0 sh -c \
		'for f; do [ -e "$$f" ] || [ -L "$$f" ] && printf "%s\0" "$$f"; done' sh | \
		tar --null -T - -cf - | tar -xf - -C $(DEB_SRC)
	$(Q)date=$$(date -R -d @$$(git log -1 --format=%ct 2>/dev/null || date +%s)); \
	printf '%s\n' "perflib-bpf ($(DEB_VERSION)) unstable; urgency=medium" "" \
		"  * perflib-bpf $(VERSION) (libperflib $(VERSION), libpdh $(PDH_VERSION))." "" \
		" -- perflib-bpf maintainers <maintainers@users.noreply.a-seed-7c386024.example>  $$date" \
		> $(DEB_SRC)/debian/changelog
	$(Q)cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b -Jauto > ../build.log 2>&1 || \
		{ tail -40 ../build.log; echo "make deb: dpkg-buildpackage failed ($(OUTPUT)deb/build.log)"; exit 1; }
	$(Q)lintian --fail-on error,warning --suppress-tags-from-file /dev/null \
		$(OUTPUT)deb/perflib-bpf_$(DEB_VERSION)_*.changes
	@ls $(OUTPUT)deb/*.deb

# the packages on this machine: install, again, upgrade, remove, purge (root; CI runs it).
# It purges them whatever happens and refuses to run when one is installed already.
check-deb: deb
	$(Q)TOOLS=$(abspath $(OUTPUT))/tools bash tests/build/deb_install.sh $(OUTPUT)deb

check-headers: lib
	$(Q)OUTPUT=$(abspath $(OUTPUT)) sh tests/build/test_headers.sh

# ---- checks -------------------------------------------------------------------------------
# exported symbols of a shared library = the names of its version script
abi_check = exported=$$(nm -D --defined-only $(1) | awk '{print $$3}' | sed 's/@.*//' | \
		grep -v '^$(3)' | sort -u); \
	listed=$$(sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' $(2) \
		| grep -v '^local$$' | sort -u); \
	if [ "$$exported" = "$$listed" ]; then \
		echo "check-abi: $(notdir $(1)) OK ($$(echo "$$listed" | wc -l) symbols)"; \
	else echo "check-abi: exported symbols of $(1) differ from $(2)"; \
		diff <(echo "$$exported") <(echo "$$listed"); exit 1; fi

check-abi: $(SO) $(PDH_SO) $(W32_SO)
	@$(call abi_check,$(SO),userspace/perflib.map,PERFLIB_)
	@$(call abi_check,$(PDH_SO),pdh/pdh.map,PDH_1)
	@$(call abi_check,$(W32_SO),win32/win32.map,PERFLIB_WIN32_)

# the libraries' files form layers that call one way (userspace/layers, pdh/layers,
# tools/common/layers; docs/ARCHITECTURE.md, docs/PDH.md)
check-layers: $(LIB_STATIC_OBJS) $(PDH_STATIC_OBJS) $(COMMON_OBJS)
	$(Q)sh tools/dev/check-layers.sh userspace/layers $(LIB_STATIC_OBJS)
	$(Q)sh tools/dev/check-layers.sh pdh/layers $(PDH_STATIC_OBJS)
	$(Q)sh tools/dev/check-layers.sh tools/common/layers $(COMMON_OBJS)

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

dupcheck:
	duplicates --change || true

clean:
	rm -rf $(OUTPUT)

-include $(wildcard $(OUTPUT)*/*.d $(OUTPUT)*/*/*.d $(OUTPUT)*/*/*/*.d)
