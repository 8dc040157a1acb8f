#!/bin/sh
# SPDX-License-Identifier: MIT
# test_ctrpp.sh - ctrpp: generated files against the golden files in tests/data/ctrpp/,
# exit codes and messages of bad command lines, and, for every manifest of ../shared and
# tests/data, the generated header compiled into two translation units linked together
# (gcc, and clang when present, -std=gnu11 -Wall -Wextra -Werror).
# Environment (tests/run.sh): OUTPUT, SHARED, TOOLS. PERFLIB_INCLUDE overrides the include
# directory (default: include/ of this tree). UPDATE_GOLDEN=1 rewrites the golden files.
# Exit: 0 all passed, 1 a check failed, 77 skipped (ctrpp not built).
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
ctrpp=${TOOLS:-${OUTPUT:-$root/.output}/tools}/ctrpp
shared=${SHARED:-$root/../shared}
inc=${PERFLIB_INCLUDE:-$root/include}
golden=$root/tests/data/ctrpp
data=$root/tests/data/manifests
if [ ! -x "$ctrpp" ]; then
	echo "ctrpp is not built ($ctrpp)"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_ctrpp.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
failures=0

ok() { echo "ok    $*"; }
fail() {
	echo "FAIL  $*"
	failures=$((failures + 1))
}

# run DIR ARGS...: run ctrpp in DIR; sets $rc, stdout in $tmp/out, stderr in $tmp/err.
run() {
	dir=$1
	shift
	(cd "$dir" && "$ctrpp" "$@") >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# same FILE GOLDEN WHAT: FILE must equal GOLDEN byte for byte. While $updating is 1
# (the golden section with UPDATE_GOLDEN=1) FILE replaces GOLDEN instead.
updating=0
same() {
	if [ "$updating" = 1 ]; then
		cp "$1" "$2" && ok "$3 (golden $(basename "$2") rewritten)"
	elif cmp -s "$1" "$2"; then
		ok "$3"
	else
		fail "$3: differs from $(basename "$2")"
		diff -u "$2" "$1" | head -20 | sed 's/^/      /'
	fi
}

# expect_err TEXT WHAT: stderr of the last run contains the line TEXT.
expect_err() {
	if grep -qxF -- "$1" "$tmp/err"; then
		ok "$2"
	else
		fail "$2: stderr lacks '$1'"
		sed 's/^/      /' "$tmp/err" | head -10
	fi
}

# expect_rc CODE WHAT
expect_rc() {
	if [ "$rc" -eq "$1" ]; then
		ok "$2 (exit $rc)"
	else
		fail "$2: exit $rc, expected $1"
		sed 's/^/      /' "$tmp/err" | head -10
	fi
}

echo "== golden files"
[ "${UPDATE_GOLDEN:-0}" = 1 ] && updating=1
# gold NAME DIR MANIFEST OPTION [ARGS...]: ctrpp ARGS OPTION $tmp/gen MANIFEST == NAME.
gold() {
	name=$1 dir=$2 man=$3 opt=$4
	shift 4
	rm -f "$tmp/gen"
	run "$dir" "$@" "$opt" "$tmp/gen" "$man"
	if [ "$rc" -ne 0 ]; then
		fail "$name: ctrpp exit $rc"
		sed 's/^/      /' "$tmp/err" | head -10
		return
	fi
	same "$tmp/gen" "$golden/$name.golden" "$name: ctrpp $* $opt ... $man"
}

m=$shared/manifests
if [ -d "$m" ]; then
	gold hpx_heartbeat.h "$m" STEllAR-GROUP_hpx_heartbeat.man -o
	gold hpx_heartbeat.rc "$m" STEllAR-GROUP_hpx_heartbeat.man -rc
	gold ucs.h "$m" microsoft_Windows-classic-samples_ucs.man -o
	gold ucs_prefix.h "$m" microsoft_Windows-classic-samples_ucs.man -o -prefix Ucs
	gold ucs_sym.h "$m" microsoft_Windows-classic-samples_ucs.man -ch
	gold node.h "$m" nodejs_node_node_perfctr_provider.man -o
	gold node_prefix.h "$m" nodejs_node_node_perfctr_provider.man -o -prefix Node
	gold node_callback.h "$m" nodejs_node_node_perfctr_provider.man -o -NotificationCallback
	gold corefx.h "$m" dotnet_corefx_provider.man -o
	gold corefx.rc "$m" dotnet_corefx_provider.man -rc
	gold kcs.h "$m" KunYi_WDK7.1-Samples_kcs.man -o
else
	echo "SKIP: golden files of $m: directory absent"
fi
gold demo.h "$data" demo.man -o
gold demo.rc "$data" demo.man -rc
gold good_v20.h "$data" good_v20.man -o
gold good_v20.rc "$data" good_v20.man -rc
gold good_v20_sym.h "$data" good_v20.man -ch -prefix V20
gold two_providers.h "$data" good_two_providers.man -o
gold two_providers.rc "$data" good_two_providers.man -rc

updating=0

echo "== switches"
# Case-insensitive switches, '/' prefix, and -MemoryRoutines as -NotificationCallback.
gold demo.h "$data" demo.man -O
gold demo.h "$data" demo.man /o
gold demo.rc "$data" demo.man /RC
run "$data" "-o:$tmp/colon.h" "--RC=$tmp/equals.rc" demo.man
expect_rc 0 "-o:file and --rc=file"
same "$tmp/colon.h" "$golden/demo.h.golden" "-o:file writes demo.h"
same "$tmp/equals.rc" "$golden/demo.rc.golden" "--rc=file writes demo.rc"
gold demo.h "$data" demo.man -o -notificationcallback
gold demo.h "$data" demo.man -o -MemoryRoutines
expect_err "ctrpp: note: -MemoryRoutines is deprecated; treated as -NotificationCallback" \
	"-MemoryRoutines prints a note"
if [ -d "$m" ]; then
	gold node_callback.h "$m" nodejs_node_node_perfctr_provider.man -o -MEMORYROUTINES
fi
# An absolute manifest path starting with '/' is a path, not a switch.
run "$tmp" -o "$tmp/abs.h" "$data/demo.man"
expect_rc 0 "absolute input path"
sed 1d "$tmp/abs.h" >"$tmp/abs_body"
sed 1d "$golden/demo.h.golden" >"$tmp/demo_body"
same "$tmp/abs_body" "$tmp/demo_body" "absolute path: same code as demo.h"
# '--' ends the switches: a manifest whose name starts with '-'.
cp "$data/demo.man" "$tmp/-dash.man"
run "$tmp" -o "$tmp/dash.h" -- -dash.man
expect_rc 0 "'--' then a manifest named -dash.man"
# All three outputs in one run, then validation only.
run "$data" -o "$tmp/a.h" -rc "$tmp/a.rc" -ch "$tmp/a_sym.h" demo.man
expect_rc 0 "-o -rc -ch together"
same "$tmp/a.rc" "$golden/demo.rc.golden" "-rc beside -o and -ch"
run "$data" demo.man
expect_rc 0 "no output switch: validate only"
expect_err "ctrpp: demo.man is valid; nothing to generate (use -o, -rc or -ch)" "validation note"
for sw in -BackCompat "-summary x" "-sumPath x"; do
	# shellcheck disable=SC2086
	run "$data" $sw demo.man
	expect_rc 0 "$sw accepted"
done
run "$data" -BackCompat demo.man
expect_err "ctrpp: note: -BackCompat only changes kernel-mode code, which is not generated; ignored" \
	"-BackCompat note"
run "$data" -SUMMARY x demo.man
expect_err "ctrpp: note: -SUMMARY is reserved; ignored" "-summary note"
for h in "-?" -h --help "/?" -HELP; do
	run "$data" "$h"
	if [ "$rc" -eq 0 ] && grep -q '^SYNOPSIS' "$tmp/out" && grep -q '^EXIT STATUS' "$tmp/out"; then
		ok "$h prints the manual"
	else
		fail "$h: exit $rc or no manual on stdout"
	fi
done

echo "== notes and warnings"
if [ -d "$m" ]; then
	run "$m" -o "$tmp/k.h" KunYi_WDK7.1-Samples_kcs.man
	expect_err "KunYi_WDK7.1-Samples_kcs.man:15: note: kernel-mode provider skipped: perflib is user-mode, no kernel code is generated" \
		"kernel-mode provider note"
	run "$m" -o "$tmp/c.h" dotnet_corefx_provider.man
	expect_err "dotnet_corefx_provider.man:9: warning: provider has no symbol; generated names use 'dotnet_corefx_provider'" \
		"missing provider symbol"
	expect_err "dotnet_corefx_provider.man:14: warning: counterSet has no symbol; generated names use 'dotnet_corefx_provider_CounterSet1'" \
		"missing counterSet symbol"
fi

echo "== bad command lines"
# bad CODE MESSAGE WHAT ARGS...: ctrpp ARGS (in tests/data/manifests) fails with CODE and
# prints the line MESSAGE on stderr, and writes no $tmp/none.h.
bad() {
	code=$1 msg=$2 what=$3
	shift 3
	rm -f "$tmp/none.h"
	run "$data" "$@"
	expect_rc "$code" "$what"
	expect_err "$msg" "$what: message"
	if [ -e "$tmp/none.h" ]; then
		fail "$what: wrote an output file"
	fi
}
# the messages of the tools' one parser (tools/common/tool.c), each followed by a hint line
bad 2 "ctrpp: no input manifest" "no argument"
expect_err "Try 'ctrpp --help' for more information." "no argument: hint"
bad 2 "ctrpp: unknown switch '-foo'" "unknown switch" -foo demo.man
bad 2 "ctrpp: unknown switch '--foo=x'" "unknown GNU switch" --foo=x demo.man
bad 2 "ctrpp: -o needs a value" "-o without file" demo.man -o
bad 2 "ctrpp: -rc given twice" "--rc twice" --RC "$tmp/none.h" -rc:"$tmp/none.h" demo.man
bad 2 "ctrpp: -NotificationCallback=1 takes no value" "value on a flag" \
	-NotificationCallback=1 demo.man
bad 2 "ctrpp: -BackCompat:yes takes no value" "value on a plain switch" -BackCompat:yes demo.man
bad 2 "ctrpp: -prefix '9x' is not a C identifier" "bad prefix" -prefix 9x demo.man
bad 2 "ctrpp: -o given twice" "-o twice" -o "$tmp/none.h" -o "$tmp/none.h" demo.man
bad 2 "ctrpp: -prefix given twice" "-prefix twice" -prefix A -prefix B demo.man
bad 2 "ctrpp: more than one input manifest ('demo.man' and 'good_v20.man')" "two inputs" \
	demo.man good_v20.man
bad 2 "ctrpp: -legacy is not supported: the Vista templates (PerfAutoInitialize) have no perflib counterpart; use -o" \
	"-legacy refused" -legacy demo.man
bad 2 "ctrpp: -migrate is not supported: schema 1.1 and 2.0 manifests are both read as they are" \
	"-migrate refused" -migrate "$tmp/none.h" demo.man
bad 2 "ctrpp: output file demo.man is the input manifest" "output over input" -o demo.man demo.man
bad 2 "ctrpp: $tmp/none.h is given for two outputs" "one file for two outputs" \
	-o "$tmp/none.h" -rc "$tmp/none.h" demo.man
bad 1 "bad_dup_id.man:13: error: duplicate counter id '1' (first at line 11)" "invalid manifest" \
	-o "$tmp/none.h" bad_dup_id.man
bad 1 "ctrpp_text_counter.man:11: error: counter 1: type perf_counter_text has no fixed size; perflib cannot register it" \
	"text counter refused" -o "$tmp/none.h" ctrpp_text_counter.man
bad 1 "ctrpp_name_clash.man:10: error: generated name 'ClashGuid' is also generated for line 8" \
	"generated name clash" -o "$tmp/none.h" ctrpp_name_clash.man
bad 1 "ctrpp_rc_clash.man:10: error: resource ID 11 is already used by the string of line 10" \
	"resource ID clash" -rc "$tmp/none.h" ctrpp_rc_clash.man
run "$data" -rc "$tmp/none.h" ctrpp_text_counter.man
expect_rc 0 "a text counter is fine for -rc alone"
bad 1 "no-such.man: error: cannot read: No such file or directory" "missing manifest" \
	-o "$tmp/none.h" no-such.man
bad 1 "ctrpp: cannot write $tmp/no/such/dir.h: No such file or directory" "unwritable output" \
	-o "$tmp/no/such/dir.h" demo.man

echo "== every header compiles in two translation units"
# check_build MANIFEST: generate -o and -ch, compile main.c (header twice + symbols) and
# other.c (header again), link, run: one object per DECLSPEC_SELECTANY variable, template
# sizes = PERF_COUNTERSET_INFO + n * PERF_COUNTER_INFO.
compilers=gcc
command -v clang >/dev/null 2>&1 && compilers="gcc clang"
check_build() {
	man=$1 b=$tmp/build
	rm -rf "$b" && mkdir -p "$b"
	if ! "$ctrpp" -o "$b/gen.h" -ch "$b/gen_sym.h" "$man" >/dev/null 2>"$b/err"; then
		fail "$(basename "$man"): ctrpp failed"
		sed 's/^/      /' "$b/err" | head -5
		return
	fi
	# Template names and counter counts, from the generated text.
	awk '/^EXTERN_C DECLSPEC_SELECTANY struct \{$/ { n = 0; next }
	     /^    PERF_COUNTER_INFO Counter[0-9]+;$/ { n++; next }
	     /^\} [A-Za-z_0-9]+ = \{$/ { print $2, n }' "$b/gen.h" >"$b/sets"
	prov=$(sed -n 's/^EXTERN_C DECLSPEC_SELECTANY HANDLE \([A-Za-z_0-9]*\) = NULL;$/\1/p' "$b/gen.h")
	{
		echo '#include "gen.h"'
		echo '#include "gen.h"'
		echo '#include "gen_sym.h"'
		echo 'const void *other(int i);'
		while read -r info n; do
			echo "_Static_assert(sizeof($info) == sizeof(PERF_COUNTERSET_INFO) + $n * sizeof(PERF_COUNTER_INFO), \"$info\");"
		done <"$b/sets"
		echo 'int main(void)'
		echo '{'
		i=0
		if [ -n "$prov" ]; then
			echo "	if (other(0) != (const void *)&${prov}Guid || other(1) != (const void *)&$prov) return 1;"
			i=2
		fi
		while read -r info n; do
			echo "	if (other($i) != (const void *)&$info || $info.CounterSet.NumCounters != $n) return 1;"
			i=$((i + 1))
		done <"$b/sets"
		echo '	return 0;'
		echo '}'
	} >"$b/main.c"
	{
		echo '#include "gen.h"'
		echo 'const void *other(int i);'
		echo 'const void *other(int i)'
		echo '{'
		echo '	const void *v[] = {'
		[ -z "$prov" ] || echo "		&${prov}Guid, &$prov,"
		while read -r info n; do
			echo "		&$info,"
		done <"$b/sets"
		echo '		0 };'
		echo '	return v[i];'
		echo '}'
	} >"$b/other.c"
	for cc in $compilers; do
		if ! $cc -std=gnu11 -Wall -Wextra -Werror -I "$inc" -I "$b" "$b/main.c" "$b/other.c" \
			-o "$b/prog" 2>"$b/cc.err"; then
			fail "$(basename "$man"): $cc cannot build it"
			sed 's/^/      /' "$b/cc.err" | head -8
			continue
		fi
		if ! "$b/prog"; then
			fail "$(basename "$man"): $cc build: the two units disagree"
			continue
		fi
		ok "$(basename "$man"): $cc, $(wc -l <"$b/sets") counter set(s)${prov:+, provider $prov}"
	done
	# C++ providers (Windows services often are): two C++ units agree on the variables, with
	# the headers before and after libstdc++'s (which names parameters __in and __out), with
	# and without -fshort-wchar (the -ch names are then L"" literals, WCHAR wchar_t).
	name=$(sed -n 's/^#define \([A-Za-z_0-9]*_NAME\) .*/\1/p' "$b/gen_sym.h" | head -1)
	namecheck=
	[ -z "$name" ] || namecheck="	const WCHAR *name = $name;
	if (!name[0])
		return 2;
"
	if [ -n "$prov" ]; then
		printf '#include <string>\n#include "gen.h"\n#include "gen.h"\n#include "gen_sym.h"\n#include <map>\n#include <iostream>\nconst void *other();\nint main()\n{\n%s\treturn other() == (const void *)&%s ? 0 : 1;\n}\n' \
			"$namecheck" "$prov" >"$b/main.cpp"
		printf '#include "gen.h"\n#include <string>\n#include <map>\n#include <iostream>\nconst void *other();\nconst void *other()\n{\n\treturn &%s;\n}\n' \
			"$prov" >"$b/other.cpp"
		for cxx in g++ clang++; do
			command -v $cxx >/dev/null 2>&1 || continue
			for mode in "-std=c++11" "-std=gnu++17 -fshort-wchar"; do
				# shellcheck disable=SC2086
				if $cxx $mode -Wall -Wextra -Werror -I "$inc" -I "$b" "$b/main.cpp" \
					"$b/other.cpp" -o "$b/cxx" 2>"$b/cc.err" && "$b/cxx"; then
					ok "$(basename "$man"): $cxx $mode, two C++ units"
				else
					fail "$(basename "$man"): $cxx $mode cannot build it"
					sed 's/^/      /' "$b/cc.err" | head -8
				fi
			done
		done
	fi
	# With the library built, CounterInitialize/CounterCleanup must link too.
	if [ -n "$prov" ] && [ -n "$lib" ]; then
		args=
		grep -q '^    __in_opt PERFLIBREQUEST NotificationCallback,$' "$b/gen.h" &&
			args="NULL, NULL, NULL, NULL"
		pfx=$(sed -n 's/^\([A-Za-z_0-9]*\)CounterCleanup($/\1/p' "$b/gen.h")
		printf '#include "gen.h"\nint main(void)\n{\n\tULONG s = %sCounterInitialize(%s);\n\t%sCounterCleanup();\n\treturn s == ERROR_SUCCESS ? 0 : 1;\n}\n' \
			"$pfx" "$args" "$pfx" >"$b/link.c"
		if gcc -std=gnu11 -Wall -Wextra -Werror ${san:+-fsanitize=$san} -I "$inc" -I "$b" \
			"$b/link.c" "$lib" -lbpf -lelf -lz -lpthread -o "$b/linked" 2>"$b/cc.err"; then
			ok "$(basename "$man"): CounterInitialize links with libperflib.a"
		else
			fail "$(basename "$man"): CounterInitialize does not link with libperflib.a"
			sed 's/^/      /' "$b/cc.err" | head -8
		fi
	fi
}
# The library, if built; a sanitized build (make SANITIZE=...) needs the same runtime.
lib= san=
if [ -f "${OUTPUT:-/nonexistent}/libperflib.a" ]; then
	lib=$OUTPUT/libperflib.a
	nm "$lib" 2>/dev/null | grep -q __asan_ && san=address
	nm "$lib" 2>/dev/null | grep -q __ubsan_ && san=${san:+$san,}undefined
else
	echo "SKIP: linking CounterInitialize: $OUTPUT/libperflib.a is not built"
fi
for man in "$m"/*.man "$data"/demo.man "$data"/good_*.man; do
	[ -f "$man" ] || continue
	check_build "$man"
done

echo "== counter limit (PERFLIB_MAX_COUNTERS, the library's and lodctr's)"
# big N: a manifest with one counter set of N counters in $tmp/big.man (<counterSet> on line 3)
big() {
	{
		echo '<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events"><instrumentation><counters xmlns="http://schemas.microsoft.com/win/2005/12/counters" schemaVersion="1.1">'
		echo '<provider symbol="BigProvider" applicationIdentity="big.exe" providerType="userMode" providerGuid="{4B1D6C3E-2F7A-4C55-9E10-8A2B3C4D5E60}">'
		echo '<counterSet symbol="BigSet" guid="{0A1B2C3D-4E5F-4061-8273-94A5B6C7D8E0}" uri="Big.Set" name="Big Set" description="d" instances="multiple">'
		i=1
		while [ "$i" -le "$1" ]; do
			echo "<counter id=\"$i\" uri=\"Big.C$i\" name=\"C$i\" description=\"d\" type=\"perf_counter_rawcount\" detailLevel=\"standard\"/>"
			i=$((i + 1))
		done
		echo '</counterSet></provider></counters></instrumentation></instrumentationManifest>'
	} >"$tmp/big.man"
}
big 4096
run "$tmp" -o "$tmp/big.h" big.man
expect_rc 0 "4,096 counters accepted"
big 4097
rm -f "$tmp/big.h"
run "$tmp" -o "$tmp/big.h" big.man
expect_rc 1 "4,097 counters refused"
expect_err "big.man:3: error: <counterSet> has 4097 counters; at most 4096 are allowed" \
	"4,097 counters: FILE:LINE error"
if [ -e "$tmp/big.h" ]; then
	fail "4,097 counters: wrote a header"
fi

echo
if [ "$failures" -ne 0 ]; then
	echo "$failures check(s) failed"
	exit 1
fi
echo "all checks passed"
exit 0
