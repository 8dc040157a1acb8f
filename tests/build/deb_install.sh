#!/bin/bash
# SPDX-License-Identifier: MIT
# deb_install.sh DEBDIR - the Debian packages of make deb on this machine, as an operator
# gets them (make check-deb; CI runs it as root):
#   install (apt-get, dependencies from the archive): the files of every package, the group
#     perflib-monitor and the user perflib-exporter in it, /etc/default, the units
#     (systemd-analyze verify, enabled), man -w for every tool, bash completion through
#     bash-completion's loader; the services' commands run as their units run them (sysd
#     with CAP_BPF and CAP_PERFMON only and the group; the exporter as its user with no
#     capability): typeperf reads the system counters, the exporter exports them, a user
#     outside the group reads nothing, typeperf completes "\Proc from the live sets;
#   install the same version again; upgrade to a version built here (X.Y.Z-N+1) keeping a
#     changed /etc/default;
#   remove with sysd killed (its pins left) and kcounters loaded: nothing pinned stays,
#     /etc/default stays (conffiles); purge: nothing stays but the system group and user,
#     which Debian keeps (and this test then deletes, when it made them).
# Whatever fails, the packages are purged at the end: none stays installed.
set -u
debdir=$(cd "${1:?usage: deb_install.sh DEBDIR}" && pwd)
cd "$(dirname "$0")/../.."
PKGS="libperflib1 libpdh1 libperflib-win32-1 libperflib-dev perflib-tools perflib-sysd perflib-exporter"
nfail=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { echo "ok: $*"; }
die() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "installs packages: run as root"
export PATH="$PATH:/usr/sbin:/sbin" DEBIAN_FRONTEND=noninteractive
unset PERFLIB_ROOT
ROOT=/sys/fs/bpf/perflib
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' &&
		die "$p is installed already: this test installs and purges it (remove it first)"
done
[ -e "$ROOT" ] && die "$ROOT exists (a perflib-sysd or provider uses the default root now)"
ls "$debdir"/perflib-tools_*.deb >/dev/null 2>&1 || die "no packages in $debdir (make deb)"
version=$(dpkg-deb -f "$debdir"/perflib-tools_*.deb Version)

work=$(mktemp -d)
had_group=$(getent group perflib-monitor >/dev/null && echo yes)
had_user=$(getent passwd perflib-exporter >/dev/null && echo yes)
sysd=""
# the paths packages may touch, listed before and after (files, not contents)
snapshot() {
	find /usr/bin /usr/lib/x86_64-linux-gnu /usr/include /usr/share/man /usr/share/doc \
		/usr/share/bash-completion /usr/share/lintian /lib/systemd/system /usr/lib/sysusers.d \
		/etc /var/lib/systemd/deb-systemd-helper-enabled /var/lib/dpkg/info \
		-xdev 2>/dev/null | grep -v -e '^/etc/ld.so.cache' -e '-$' -e '\.dpkg-' | LC_ALL=C sort
	ls -d "$ROOT" 2>/dev/null
}
cleanup() {
	[ -n "$sysd" ] && kill -9 "$sysd" 2>/dev/null
	[ -x /usr/bin/perflib-sysd ] && /usr/bin/perflib-sysd stop >/dev/null 2>&1
	[ -x /usr/bin/kcounters ] && /usr/bin/kcounters unload --force >/dev/null 2>&1
	for p in $PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'installed' && purge=1
	done
	if [ -n "${purge:-}" ]; then
		echo "cleanup: purging the packages"
		dpkg --purge $PKGS >/dev/null 2>&1
	fi
	rmdir "$ROOT" 2>/dev/null
	[ -z "$had_user" ] && getent passwd perflib-exporter >/dev/null && userdel perflib-exporter
	[ -z "$had_group" ] && getent group perflib-exporter >/dev/null &&
		groupdel perflib-exporter 2>/dev/null
	[ -z "$had_group" ] && getent group perflib-monitor >/dev/null && groupdel perflib-monitor
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
snapshot >"$work/before"

debs() { # $1 = directory: the six packages, no debug symbols
	for p in $PKGS; do ls "$1/${p}_"*.deb; done
}

# ---- install ------------------------------------------------------------------------------
# shellcheck disable=SC2046
apt-get install -y -qq --no-install-recommends $(debs "$debdir") >"$work/install" 2>&1 ||
	die "apt-get install: $(tail -20 "$work/install")"
for p in $PKGS; do
	[ "$(dpkg-query -W -f='${Version}' "$p")" = "$version" ] || fail "$p is not $version"
	missing=$(dpkg -L "$p" | while read -r f; do [ -e "$f" ] || echo "$f"; done)
	[ -z "$missing" ] || fail "$p: files missing: $missing"
done
for f in /usr/bin/typeperf /usr/bin/relog /usr/bin/ctrpp /usr/bin/lodctr /usr/bin/unlodctr \
	/usr/bin/kcounters /usr/bin/perflib-sysd /usr/bin/perflib-exporter \
	/usr/lib/x86_64-linux-gnu/libperflib.so.1 /usr/lib/x86_64-linux-gnu/libpdh.so.1 \
	/usr/lib/x86_64-linux-gnu/libadvapi32.so /usr/include/perflib/perflib_bpf.h \
	/usr/lib/x86_64-linux-gnu/libperflib-win32.so.1 /usr/include/perflib/win32/windows.h \
	/usr/lib/x86_64-linux-gnu/libperflib-remote.so.1 \
	/usr/include/pdh.h /usr/lib/x86_64-linux-gnu/libperflib.a \
	/lib/systemd/system/perflib-sysd.service /lib/systemd/system/perflib-exporter.service \
	/etc/default/perflib-sysd /etc/default/perflib-exporter \
	/usr/share/doc/perflib-tools/SYSTEM-COUNTERS.md.gz; do
	[ -e "$f" ] || fail "not installed: $f"
done
[ "$(pkg-config --modversion perflib)" = "${version%-*}" ] || fail "pkg-config perflib: $(pkg-config --modversion perflib)"
printf '#include <pdh.h>\n#include <perflib/perflib.h>\nint main(void) { PDH_HQUERY q; return PdhOpenQueryW(NULL, 0, &q) != ERROR_SUCCESS; }\n' >"$work/c.c"
# shellcheck disable=SC2046
cc "$work/c.c" -o "$work/c" $(pkg-config --cflags --libs pdh) && "$work/c" ||
	fail "a PDH program built with pkg-config pdh against the -dev package does not run"
ok "installed $version: files, libraries, pkg-config, headers"

# the group, the user
getent group perflib-monitor >/dev/null || fail "no group perflib-monitor"
id -nG perflib-exporter 2>/dev/null | tr ' ' '\n' | grep -qx perflib-monitor ||
	fail "perflib-exporter is not in perflib-monitor: $(id perflib-exporter 2>&1)"
[ "$(getent passwd perflib-exporter | cut -d: -f6,7)" = "/nonexistent:/usr/sbin/nologin" ] ||
	fail "perflib-exporter: home and shell $(getent passwd perflib-exporter | cut -d: -f6,7)"
[ "$(id -u perflib-exporter)" -lt 1000 ] || fail "perflib-exporter is not a system user"
ok "group perflib-monitor, system user perflib-exporter in it"

# the units
systemd-analyze verify /lib/systemd/system/perflib-sysd.service \
	/lib/systemd/system/perflib-exporter.service >"$work/verify" 2>&1 ||
	fail "systemd-analyze verify: $(cat "$work/verify")"
grep -q '^ExecStart=/usr/bin/perflib-sysd run' /lib/systemd/system/perflib-sysd.service ||
	fail "sysd unit: ExecStart is not /usr/bin"
for u in perflib-sysd perflib-exporter; do
	[ -L /etc/systemd/system/multi-user.target.wants/$u.service ] || fail "$u is not enabled"
	grep -qx 'ARGS=""' /etc/default/$u || fail "/etc/default/$u has no ARGS=\"\""
done
ok "units verified and enabled, /etc/default files"

# man pages, completion
for t in typeperf relog ctrpp lodctr unlodctr kcounters perflib-sysd perflib-exporter \
	"5 perflib-exporter" "5 perflib-manifest" "7 perflib"; do
	# shellcheck disable=SC2086
	man -w $t >/dev/null 2>&1 || fail "man -w $t finds no page"
done
ok "man -w finds a page for every tool, perflib(7), perflib-manifest(5), perflib-exporter(5)"
for t in typeperf relog ctrpp lodctr unlodctr kcounters perflib-sysd perflib-exporter; do
	bash -c '. /usr/share/bash-completion/bash_completion; _completion_loader "$1"
		complete -p "$1"' sh "$t" 2>/dev/null | grep -q -- "-F _perflib" ||
		fail "bash-completion loads no completion for $t"
done
ok "bash-completion loads a completion for every tool"

# perflib-sysd as its unit runs it: root, CAP_BPF and CAP_PERFMON, in perflib-monitor
setpriv --bounding-set=-all,+bpf,+perfmon --inh-caps=-all --groups perflib-monitor \
	/usr/bin/perflib-sysd run --group perflib-monitor --mode 0640 >"$work/sysd" 2>&1 &
sysd=$!
i=0
until grep -q running "$work/sysd" || [ $i -ge 600 ]; do
	kill -0 $sysd 2>/dev/null || break
	sleep 0.1
	i=$((i + 1))
done
grep -q running "$work/sysd" || fail "perflib-sysd with the unit's capabilities: $(cat "$work/sysd")"
stat -c '%a %U:%G' "$ROOT"/*/info | sort -u | grep -qx '640 root:perflib-monitor' ||
	fail "pins: $(stat -c '%a %U:%G' "$ROOT"/*/info | sort -u)"
typeperf "\\Processor(_Total)\\% Processor Time" -sc 1 >"$work/tp" 2>&1 &&
	grep -q '"[0-9.]*"$' <(tr -d '\r' <"$work/tp") || fail "typeperf: $(cat "$work/tp")"
# the exporter as its unit runs it: its user and groups, no capability
setpriv --reuid perflib-exporter --regid perflib-exporter --init-groups --bounding-set=-all \
	--inh-caps=-all --no-new-privs /usr/bin/perflib-exporter --once >"$work/prom" 2>"$work/prom.err" ||
	fail "perflib-exporter --once as perflib-exporter: $(cat "$work/prom.err")"
grep -q '^perflib_processor_.*perf_instance="_Total"' "$work/prom" ||
	fail "the exporter's user does not read Processor: $(head -5 "$work/prom")"
# a user outside the group reads nothing of them
setpriv --reuid nobody --regid nogroup --clear-groups typeperf "\\Processor(_Total)\\% Processor Time" \
	-sc 1 >"$work/nobody" 2>&1 && fail "nobody read the system counters: $(cat "$work/nobody")"
ok "perflib-sysd with CAP_BPF+CAP_PERFMON: pins 0640 root:perflib-monitor; root and the exporter's user read them, nobody does not"
got=$(bash -c '. /usr/share/bash-completion/bash_completion; _completion_loader typeperf
	COMP_WORDS=(typeperf "\"\\Proc"); COMP_CWORD=1; _perflib_typeperf; printf "%s\n" "${COMPREPLY[@]}"')
if [ "$got" = "$(printf '"\\Process(\n"\\Processor(\n"\\Processor Information(')" ]; then
	ok "typeperf completes \"\\Proc to \"\\Process(, \"\\Processor( and \"\\Processor Information( from the live sets"
else
	fail "typeperf completion of \"\\Proc: [$got]"
fi

# ---- the same version again, then an upgrade --------------------------------------------
# shellcheck disable=SC2046
dpkg -i $(debs "$debdir") >"$work/again" 2>&1 || fail "installing $version again: $(tail "$work/again")"
echo 'ARGS="--listen :9419"' >>/etc/default/perflib-exporter
# X.Y.Z-N+1: the same packages with the next Debian revision (control files rewritten)
next="${version%-*}-$((${version##*-} + 1))"
mkdir -p "$work/next"
for d in $(debs "$debdir"); do
	x="$work/x/$(basename "$d")"
	mkdir -p "$x" && dpkg-deb -R "$d" "$x"
	sed -i "s/(= $version)/(= $next)/g; s/^Version: .*/Version: $next/" "$x/DEBIAN/control"
	dpkg-deb -b "$x" "$work/next/" >/dev/null || fail "repacking $d as $next"
done
# shellcheck disable=SC2046
dpkg -i $(debs "$work/next") >"$work/upgrade" 2>&1 || fail "upgrade to $next: $(tail "$work/upgrade")"
for p in $PKGS; do
	[ "$(dpkg-query -W -f='${Version}' "$p")" = "$next" ] || fail "$p not upgraded to $next"
done
grep -q 'ARGS="--listen :9419"' /etc/default/perflib-exporter || fail "the upgrade lost a change to /etc/default"
id -nG perflib-exporter | tr ' ' '\n' | grep -qx perflib-monitor || fail "the upgrade lost the membership"
[ -L /etc/systemd/system/multi-user.target.wants/perflib-sysd.service ] || fail "the upgrade disabled sysd"
ok "installed again, upgraded to $next: settings, group and enablement kept"

# ---- remove, purge ------------------------------------------------------------------------
# sysd killed: its pins stay until the package goes; kcounters loaded: its programs too
kill -9 "$sysd"; wait "$sysd" 2>/dev/null; sysd=""
ls "$ROOT" | grep -q . || fail "sysd left nothing to clean (the test needs its leftovers)"
kcounters load >"$work/kc" 2>&1 || fail "kcounters load: $(cat "$work/kc")"
dpkg -r $PKGS >"$work/remove" 2>&1 || fail "dpkg -r: $(tail "$work/remove")"
[ -e "$ROOT" ] && fail "pins left after remove: $(ls -R "$ROOT" | head)"
bpftool link show 2>/dev/null | grep -q kc_ && fail "kcounters' programs still attached"
for f in /usr/bin/typeperf /usr/bin/perflib-sysd /lib/systemd/system/perflib-sysd.service \
	/usr/lib/x86_64-linux-gnu/libperflib.so.1; do
	[ -e "$f" ] && fail "$f left after remove"
done
[ -f /etc/default/perflib-exporter ] || fail "remove deleted the conffile /etc/default/perflib-exporter"
ok "removed: nothing pinned, no programs, the conffiles kept"
dpkg --purge $PKGS >"$work/purge" 2>&1 || fail "dpkg --purge: $(tail "$work/purge")"
snapshot >"$work/after"
if diff "$work/before" "$work/after" >"$work/diff"; then
	ok "purged: no file, pin, unit link or dpkg entry left"
else
	fail "left after purge (< before, > after): $(head -30 "$work/diff")"
fi
getent group perflib-monitor >/dev/null && echo "note: group perflib-monitor and user perflib-exporter stay after purge (Debian keeps system users); the test deletes them"
[ "$nfail" -eq 0 ] && echo "deb_install: all passed"
[ "$nfail" -eq 0 ]
