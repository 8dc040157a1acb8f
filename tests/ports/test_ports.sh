#!/bin/sh
# SPDX-License-Identifier: MIT
# test_ports.sh - Windows counter code built as Windows code is written (tests/ports/: the
# shapes of the SDK's ucs sample in C with L"" and -fshort-wchar, HPX's heartbeat provider in
# C++ with wchar_t and <iostream>, node's provider loading the API at run time, and the docs'
# raw consumer in C++ with SAL), against the installed headers and library (`make install`
# into a temporary DESTDIR; headers from the installed ctrpp), each built with gcc and clang;
# the gcc builds run against a private pin root and the consumer checks every value.
# Environment: OUTPUT (absolute build dir). Exit 0 pass, 77 skip (no BPF), other fail.
set -u
: "${OUTPUT:?}"

top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
root=
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	[ -z "$root" ] || rm -rf "$root"
	rm -rf "$tmp"
}
trap cleanup EXIT
failures=0
fail() {
	echo "FAIL  $*"
	failures=$((failures + 1))
}
skip() {
	if [ "${PERFLIB_REQUIRE_BPF:-}" = 1 ]; then
		echo "FAIL: $* (and PERFLIB_REQUIRE_BPF=1)"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}

. "$top/tests/lib/install_tmp.sh"
dest=$tmp/dest
tmp_make install "$dest" || {
	cat "$dest.install.log"
	echo "FAIL  make install"
	exit 1
}
inc=$dest/usr/include
lib=$dest/usr/lib
[ "$(readlink "$lib/libadvapi32.so")" = libperflib.so.1 ] ||
	fail "libadvapi32.so is not installed as a link to libperflib.so.1"
san=
readelf -d "$lib/libperflib.so.1" | grep -q libasan && san="-fsanitize=address,undefined"

# the providers' headers, from their manifests, by the installed ctrpp
b=$tmp/build
mkdir -p "$b"
for m in ucs heartbeat node_perfctr_provider; do
	"$dest/usr/bin/ctrpp" -o "$b/$m.h" "$top/tests/data/ports/$m.man" >/dev/null 2>"$b/ctrpp.err" ||
		fail "ctrpp $m.man: $(cat "$b/ctrpp.err")"
done

# build NAME COMPILER FLAGS...: tests/ports/<source> -> $b/NAME.<compiler>
build() {
	name=$1 cc=$2 src=$3
	shift 3
	# shellcheck disable=SC2086
	if $cc -Wall -Wextra -Werror $san -I"$inc" -I"$b" "$top/tests/ports/$src" "$@" \
		-o "$b/$name.$cc" 2>"$b/cc.err"; then
		echo "ok    $src built with $cc $*"
	else
		fail "$src does not build with $cc $*"
		head -10 "$b/cc.err" | sed 's/^/      /'
	fi
}
link="-L$lib -Wl,-rpath,$lib -lperflib"
for cc in gcc clang; do
	# shellcheck disable=SC2086
	build ucs $cc ucs_provider.c -std=gnu11 -fshort-wchar $link
done
for cxx in g++ clang++; do
	# shellcheck disable=SC2086
	build heartbeat $cxx heartbeat_provider.cpp -std=c++17 -fshort-wchar $link
	build node $cxx node_provider.cpp -std=c++17 -fshort-wchar
	# shellcheck disable=SC2086
	build consumer $cxx raw_consumer.cpp -std=c++11 $link
done
[ "$failures" -eq 0 ] || exit 1
# run-time loading only: no libperflib (nor libadvapi32) among the node shape's libraries
if readelf -d "$b/node.g++" | grep -q 'NEEDED.*perflib\|NEEDED.*advapi'; then
	fail "node_provider is linked to the library it should load at run time"
fi
if [ ! -e /usr/lib/libadvapi32.so ] && [ ! -e /usr/local/lib/libadvapi32.so ]; then
	LD_LIBRARY_PATH=$tmp/nowhere "$b/node.g++" </dev/null >/dev/null 2>&1
	rc=$?
	[ "$rc" = 3 ] || fail "node_provider without libadvapi32.so on its path exited $rc, not 3"
fi

root=$(mktemp -d "${PERFLIB_TEST_BPFFS:-/sys/fs/bpf}/perflib-ports-XXXXXX" 2>/dev/null) ||
	skip "cannot create a directory in bpffs (builds passed)"
export PERFLIB_ROOT="$root" LD_LIBRARY_PATH="$lib"

# start NAME: run $b/NAME.<gcc build> with its standard input on a fifo kept open by fd 3..5
nfd=3
start() {
	mkfifo "$tmp/$1.in"
	"$b/$1" <"$tmp/$1.in" >"$tmp/$1.out" 2>"$tmp/$1.err" &
	pid=$!
	pids="$pids $pid"
	eval "exec $nfd>\"$tmp/$1.in\""
	nfd=$((nfd + 1))
	i=0
	until grep -q '^ready' "$tmp/$1.out" 2>/dev/null; do
		if ! kill -0 "$pid" 2>/dev/null; then
			cat "$tmp/$1.out" "$tmp/$1.err"
			grep -q 'failed with 5$' "$tmp/$1.out" "$tmp/$1.err" &&
				skip "no BPF permission (builds passed)"
			fail "$1 exited before it was ready"
			return 1
		fi
		i=$((i + 1))
		[ $i -lt 1000 ] || {
			fail "$1 was not ready in 10 s"
			return 1
		}
		sleep 0.01
	done
}

# expect WHAT GUID IDS -- LINES...: the consumer's output for GUID and IDS holds each line
expect() {
	what=$1 guid=$2 ids=$3
	shift 4
	# shellcheck disable=SC2086
	if ! "$b/consumer.g++" "$guid" $ids >"$tmp/cons.out" 2>"$tmp/cons.err"; then
		fail "$what: consumer failed: $(cat "$tmp/cons.err")"
		return
	fi
	for line in "$@"; do
		grep -qxF -- "$line" "$tmp/cons.out" || {
			fail "$what: no '$line' in the consumer's output:"
			sed 's/^/      /' "$tmp/cons.out"
			return
		}
	done
	echo "ok    $what: $# values read back"
}

start ucs.gcc || exit 1
expect "ucs (C, L\"\", -fshort-wchar)" ffeeaadd-c923-4794-b696-70577630b5cf "1 2" -- \
	"Instance_1 1 10" "Instance_2 1 20" "Instance_1 2 101" "Instance_2 2 102"
expect "ucs single-instance set, by-reference counters" ffeeaadd-eaa6-45ba-bf6d-4c7cb0d6ef73 \
	"1 2 3 4 5" -- "- 1 7" "- 2 8" "- 3 9" "- 4 4" "- 5 3"
start heartbeat.g++ || exit 1
expect "heartbeat (C++, wchar_t, <iostream>)" 9a7a620e-19d0-4697-b6fa-a803845d7329 "1 2" -- \
	"console#0 1 6" "worker#1 1 16" "console#0 2 3" "worker#1 2 3"
start node.g++ || exit 1
npid=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$tmp/node.g++.out")
expect "node (C++, LoadLibrary + GetProcAddress)" 3a22a8ec-297c-48ac-ab15-33ec93033fd8 \
	"1 4 5 6 7 8 9" -- "node_$npid 1 3" "node_$npid 4 1" "node_$npid 5 1" \
	"node_$npid 6 1500" "node_$npid 7 700" "node_$npid 8 42" "node_$npid 9 5000000000"

# closing their input ends the _kbhit() loops: each provider exits 0 and cleans up
exec 3>&- 4>&- 5>&-
for p in $pids; do
	wait "$p" || fail "a provider (pid $p) exited with $?"
done
pids=
left=$(find "$root" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
[ "$failures" -eq 0 ] || exit 1
echo "ok: four Windows-shaped programs built with gcc and clang, values read back ($left counter sets pinned)"
exit 0
