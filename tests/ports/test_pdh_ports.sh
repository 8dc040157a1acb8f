#!/bin/sh
# SPDX-License-Identifier: MIT
# test_pdh_ports.sh - PDH consumers written as Windows code (tests/ports/pdh/: rewrites of the
# SDK docs' "Collecting Performance Data" and "Reading Performance Data from a Log File"
# samples, of a monitoring agent's wildcard-array collector and of a Nagios agent's
# threshold check with name indexes in wide strings), built with gcc and clang
# against the installed pdh.pc (`make install` into a temporary DESTDIR, `pkg-config
# --cflags --libs pdh`), run against tests/helpers/tp_provider; every printed value is
# checked against what the provider publishes.
# Environment: OUTPUT (absolute build dir). Exit 0 pass, 77 skip (no BPF), other fail.
set -u
: "${OUTPUT:?}"

top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
root=
pid=
cleanup() {
	[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
	[ -z "$root" ] || rm -rf "$root"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
	if [ "${PERFLIB_REQUIRE_BPF:-}" = 1 ]; then fail "$* (and PERFLIB_REQUIRE_BPF=1)"; fi
	echo "SKIP: $*"; exit 77
}

. "$top/tests/lib/install_tmp.sh"
dest=$tmp/dest
tmp_make install "$dest" || { cat "$dest.install.log"; fail "make install"; }
lib=$dest/usr/lib
export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
flags=$(pkg-config --cflags --libs pdh) || fail "pkg-config pdh"
san=
readelf -d "$lib/libpdh.so.1" | grep -q libasan && san="-fsanitize=address,undefined"
# clang's ASan runtime cannot run beside the gcc one libpdh.so carries in a sanitizer
# build: the clang binaries are built (and so checked to compile) but the gcc ones run
cl=clang
[ -z "$san" ] || cl=gcc
b=$tmp/build
mkdir -p "$b"
for src in sdk_collect sdk_readlog agent_array nsclient_check; do
	for cc in gcc clang; do
		# shellcheck disable=SC2086
		$cc -std=gnu11 -Wall -Wextra -Werror -fshort-wchar $san \
			"$top/tests/ports/pdh/$src.c" $flags -Wl,-rpath,"$lib" -o "$b/$src.$cc" \
			2>"$b/cc.err" || fail "$src does not build with $cc: $(head -5 "$b/cc.err")"
	done
	# only what pdh.pc names: libpdh (and libperflib through it)
	readelf -d "$b/$src.gcc" | grep -q 'NEEDED.*libpdh.so.1' || fail "$src: not linked to libpdh"
	echo "ok    $src built with gcc and clang against pdh.pc"
done

root=$(mktemp -d "${PERFLIB_TEST_BPFFS:-/sys/fs/bpf}/perflib-pdhports-XXXXXX" 2>/dev/null) ||
	skip "cannot create a directory in bpffs (builds passed)"
export PERFLIB_ROOT=$root LD_LIBRARY_PATH=$lib
"$OUTPUT/tests/helpers/tp_provider" >"$tmp/prov.out" 2>&1 &
pid=$!
n=0
until grep -q ready "$tmp/prov.out" 2>/dev/null; do
	kill -0 "$pid" 2>/dev/null || skip "tp_provider did not start: $(cat "$tmp/prov.out")"
	n=$((n + 1))
	[ $n -lt 500 ] || fail "tp_provider was not ready in 10 s"
	sleep 0.02
done

# ---- Collecting Performance Data: raw, fraction, duplicate, single-instance, rate ----------
check_collect() { # PATH WANT (exact, or lo:hi)
	"$b/sdk_collect.gcc" "$1" 2 500 >"$tmp/c.out" 2>&1 || fail "sdk_collect $1: $(cat "$tmp/c.out")"
	[ "$(wc -l <"$tmp/c.out")" -eq 2 ] || fail "sdk_collect $1: $(cat "$tmp/c.out")"
	while read -r i v; do
		case $2 in
		*:*) awk -v v="$v" -v r="$2" 'BEGIN { split(r, a, ":"); exit !(v >= a[1] && v <= a[2]) }' ||
			fail "sdk_collect $1 sample $i: $v not in $2" ;;
		*) [ "$v" = "$2" ] || fail "sdk_collect $1 sample $i: $v, expected $2" ;;
		esac
	done <"$tmp/c.out"
	echo "ok    sdk_collect $1 = $(tr '\n' ' ' <"$tmp/c.out")"
}
check_collect '\TP Demo(beta)\Items' 20.000000
check_collect '\TP Demo(alpha#1)\Items' 30.000000
check_collect '\TP Demo(alpha)\Big' 4294967296.000000
check_collect '\TP Demo(alpha)\Ratio' 25.000000
check_collect '\TP Demo(beta)\Hit %' 75.000000
check_collect '\TP Single\Total' 7000000000.000000
# +10 per 100 ms step: 100/s, 4 to 6 steps in each 500 ms (and some slack)
check_collect '\TP Demo(alpha)\Ops/sec' 60:140
# the only counter names no instance: PDH_NO_DATA from the collection (pdh.md 6.4)
"$b/sdk_collect.$cl" '\TP Demo(nope)\Items' 1 10 >"$tmp/c.out" 2>&1 &&
	fail "sdk_collect of a missing instance succeeded: $(cat "$tmp/c.out")"
grep -q 'PdhCollectQueryData failed with 0x800007d5' "$tmp/c.out" ||
	fail "missing instance: $(cat "$tmp/c.out")"

# ---- the agent's wildcard array --------------------------------------------------------
"$b/agent_array.$cl" '\TP Demo(*)\Items' >"$tmp/a.out" 2>&1 || fail "agent_array: $(cat "$tmp/a.out")"
# expanded paths keep the form given (no computer here)
for line in "expanded \\TP Demo(alpha)\\Items" "expanded \\TP Demo(beta)\\Items" \
	"expanded \\TP Demo(alpha#1)\\Items" "alpha 10.000000" "beta 20.000000" \
	"alpha 30.000000" end; do
	grep -qxF -- "$line" "$tmp/a.out" || fail "agent_array: no '$line' in $(cat "$tmp/a.out")"
done
[ "$(grep -c '^alpha \|^beta ' "$tmp/a.out")" -eq 3 ] || fail "agent_array items: $(cat "$tmp/a.out")"
"$b/agent_array.gcc" '\TP Demo(*)\Ops/sec' >"$tmp/a.out" 2>&1 || fail "agent_array rates: $(cat "$tmp/a.out")"
awk '$1 == "alpha" || $1 == "beta" { n++; if ($2 < 60 || $2 > 140) bad = 1 }
	END { exit !(n == 3 && !bad) }' "$tmp/a.out" || fail "agent_array rates: $(cat "$tmp/a.out")"
echo "ok    agent_array: instances and rates"

# ---- Reading Performance Data from a Log File: a typeperf log, read back -------------------
"$OUTPUT/tools/typeperf" '\TP Demo(*)\Items' '\TP Single\Value' -sc 3 -o "$tmp/log.csv" -y \
	>/dev/null 2>&1 || fail "typeperf log"
"$b/sdk_readlog.gcc" "$tmp/log.csv" '\TP Demo(alpha#1)\Items' >"$tmp/r.out" 2>&1 ||
	fail "sdk_readlog: $(cat "$tmp/r.out")"
[ "$(tr '\n' ' ' <"$tmp/r.out")" = "1 30.000000 2 30.000000 3 30.000000 end " ] ||
	fail "sdk_readlog: $(cat "$tmp/r.out")"
"$b/sdk_readlog.$cl" "$tmp/log.csv" '\TP Single\Value' >"$tmp/r.out" 2>&1 ||
	fail "sdk_readlog single: $(cat "$tmp/r.out")"
[ "$(tr '\n' ' ' <"$tmp/r.out")" = "1 42.000000 2 42.000000 3 42.000000 end " ] ||
	fail "sdk_readlog single: $(cat "$tmp/r.out")"
"$b/sdk_readlog.gcc" "$tmp/none.csv" '\TP Single\Value' >"$tmp/r.out" 2>&1 &&
	fail "sdk_readlog of a missing log succeeded"
grep -q 'PdhOpenQuery failed with 0xc0000bd1' "$tmp/r.out" || fail "missing log: $(cat "$tmp/r.out")"
echo "ok    sdk_readlog: a typeperf log replayed"
# ---- a Nagios agent's check: name indexes, counter info, thresholds, exit codes ---------
check_nsc() { # WANT_EXIT WANT_LINE PATH WARN CRIT [MS]
	want=$1 line=$2
	shift 2
	"$b/nsclient_check.gcc" "$@" >"$tmp/n.out" 2>&1
	rc=$?
	[ "$rc" -eq "$want" ] || fail "nsclient_check $*: exit $rc, expected $want: $(cat "$tmp/n.out")"
	grep -qxF -- "$line" "$tmp/n.out" || fail "nsclient_check $*: no '$line' in $(cat "$tmp/n.out")"
}
path='\TP Demo(beta)\Items'
check_nsc 0 "OK: $path = 20|'$path'=20;50;80" "$path" 50 80 100
check_nsc 1 "WARNING: $path = 20|'$path'=20;10;30" "$path" 10 30 100
check_nsc 2 "CRITICAL: $path = 20|'$path'=20;5;15" "$path" 5 15 100
grep -q '^type 0x00010000 Items: ' "$tmp/n.out" || fail "nsclient_check type: $(cat "$tmp/n.out")"
# the same counter by its name indexes, which the agent translates back
idx=$(sed -n 's/^index \([0-9]*\) \([0-9]*\)$/\\\1(beta)\\\2/p' "$tmp/n.out")
[ -n "$idx" ] || fail "nsclient_check printed no indexes: $(cat "$tmp/n.out")"
"$b/nsclient_check.$cl" "$idx" 50 80 100 >"$tmp/n2.out" 2>&1 ||
	fail "nsclient_check $idx: $(cat "$tmp/n2.out")"
grep -qxF "OK: $path = 20|'$path'=20;50;80" "$tmp/n2.out" ||
	fail "nsclient_check by index $idx: $(cat "$tmp/n2.out")"
# a percentage above 100 is not capped (PDH_FMT_NOCAP100); a rate over 300 ms
path='\TP Demo(beta)\Hit %'
check_nsc 1 "WARNING: $path = 75|'$path'=75;70;90" "$path" 70 90 100
"$b/nsclient_check.gcc" '\TP Demo(alpha)\Ops/sec' 1000 2000 300 >"$tmp/n.out" 2>&1 ||
	fail "nsclient_check rate: $(cat "$tmp/n.out")"
awk -F'[=|]' '/^OK: / { v = $2 + 0; ok = v >= 60 && v <= 140 } END { exit !ok }' "$tmp/n.out" ||
	fail "nsclient_check rate: $(cat "$tmp/n.out")"
# unknown: a malformed path, an unknown counter, an index no name has
check_nsc 3 "UNKNOWN: Invalid counter path: not a path (0xc0000bc0)" "not a path" 1 2 10
"$b/nsclient_check.gcc" '\TP Demo(beta)\Nope' 1 2 10 >"$tmp/n.out" 2>&1
[ $? -eq 3 ] && grep -q '^UNKNOWN: Invalid counter path' "$tmp/n.out" ||
	fail "nsclient_check unknown counter: $(cat "$tmp/n.out")"
"$b/nsclient_check.gcc" '\TP Demo(beta)\7' 1 2 10 >"$tmp/n.out" 2>&1
[ $? -eq 3 ] && grep -q '^UNKNOWN: ' "$tmp/n.out" || fail "nsclient_check bad index: $(cat "$tmp/n.out")"
echo "ok    nsclient_check: thresholds, name indexes, counter info, unknowns"
echo "pdh ports: all checks passed"
