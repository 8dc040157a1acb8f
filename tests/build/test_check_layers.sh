#!/bin/sh
# SPDX-License-Identifier: MIT
# test_check_layers.sh - tools/dev/check-layers.sh (make check-layers) on small objects
# built here: a layered graph passes; a cycle, a call to a higher layer and an object in no
# layer each fail and are named; a cycle inside a "cycles-tolerated" layer passes and is
# shown; the libraries' own objects pass (when built): libperflib, libpdh (without any cycle)
# and tools/common. Exit 0 pass, 1 fail.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
check=$top/tools/dev/check-layers.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc=${CC:-cc}
failures=0
fail() {
	echo "FAIL  $*"
	failures=$((failures + 1))
}

# obj NAME 'C source': $tmp/NAME.o
obj() {
	printf '%s\n' "$2" > "$tmp/$1.c"
	"$cc" -c -o "$tmp/$1.o" "$tmp/$1.c" || { echo "cannot compile $1"; exit 1; }
}
obj low 'int low_f(void) { return 1; }'
obj mid 'int low_f(void); int mid_f(void) { return low_f() + 1; }'
obj top 'int mid_f(void); int low_f(void); int top_f(void) { return mid_f() + low_f(); }'
obj ping 'int pong_f(void); int ping_f(int n) { return n ? pong_f() : 0; }'
obj pong 'int ping_f(int); int low_f(void); int pong_f(void) { return ping_f(0) + low_f(); }'

# expect RC PATTERN LAYERS OBJECTS...: exit status and a line of the output
expect() {
	want=$1 pattern=$2
	shift 2
	out=$(sh "$check" "$@" 2>&1)
	rc=$?
	[ "$rc" -eq "$want" ] || fail "exit $rc, not $want, for $*: $out"
	echo "$out" | grep -q -- "$pattern" || fail "no '$pattern' for $*: $out"
}

printf 'base: low\nmiddle: mid\napi: top\n' > "$tmp/ok"
expect 0 'OK, no cycle' "$tmp/ok" "$tmp/low.o" "$tmp/mid.o" "$tmp/top.o"
expect 0 '3 files, 3 dependencies, 3 layers' "$tmp/ok" "$tmp/low.o" "$tmp/mid.o" "$tmp/top.o"

# a cycle
printf 'base: low\nboth: ping pong\n' > "$tmp/cyc"
expect 1 'cycle of 2 files: ping pong$' "$tmp/cyc" "$tmp/low.o" "$tmp/ping.o" "$tmp/pong.o"
expect 1 'FAILED' "$tmp/cyc" "$tmp/low.o" "$tmp/ping.o" "$tmp/pong.o"

# tolerated inside its layer
printf 'base: low\nboth cycles-tolerated: ping pong\n' > "$tmp/tol"
expect 0 'cycle of 2 files: ping pong (tolerated: layer both)' "$tmp/tol" \
	"$tmp/low.o" "$tmp/ping.o" "$tmp/pong.o"
expect 0 'OK (with tolerated cycles)' "$tmp/tol" "$tmp/low.o" "$tmp/ping.o" "$tmp/pong.o"

# a cycle across layers is never tolerated
printf 'base: low\nping cycles-tolerated: ping\npong cycles-tolerated: pong\n' > "$tmp/split"
expect 1 'cycle of 2 files: ping pong$' "$tmp/split" "$tmp/low.o" "$tmp/ping.o" "$tmp/pong.o"

# a call upwards
printf 'base: mid\nupper: low\napi: top\n' > "$tmp/up"
expect 1 'mid (layer base) calls low (layer upper, above it): low_f' "$tmp/up" \
	"$tmp/low.o" "$tmp/mid.o" "$tmp/top.o"

# an object in no layer
printf 'base: low\napi: top\n' > "$tmp/missing"
expect 1 'mid.o is in no layer' "$tmp/missing" "$tmp/low.o" "$tmp/mid.o" "$tmp/top.o"

# bad usage
sh "$check" "$tmp/ok" >/dev/null 2>&1
[ $? -eq 2 ] || fail "usage error not exit 2"

# the libraries themselves (when built): each directory's objects against its layers file
# (userspace/ with common/, pdh/, tools/common/), as make check-layers runs them
out=${OUTPUT:-$top/.output}
# objs DIR SRC-DIR...: the objects under $out/DIR whose source is in one of SRC-DIR
objs() {
	d=$1
	shift
	ls "$out"/$d/*.o 2>/dev/null | while read -r o; do
		for s in "$@"; do
			[ -f "$top/$s/$(basename "$o" .o).c" ] && echo "$o" && break
		done
	done
}
# lib LAYERS OBJECTS...: check them, output in $tmp/lib.out
lib() {
	layers=$1
	shift
	[ $# -gt 0 ] || return 1
	sh "$check" "$top/$layers" "$@" > "$tmp/lib.out" 2>&1 ||
		{ fail "the objects break $layers"; cat "$tmp/lib.out"; }
	return 0
}
# shellcheck disable=SC2046
if lib userspace/layers $(objs static/userspace userspace) $(objs static/common common); then
	# the callback service calls one way: no cycle of its files, none tolerated
	grep -q 'cycle of.* \(callback\|cb_[a-z]*\)\( \|$\)' "$tmp/lib.out" &&
		fail "the callback service has a cycle: $(grep 'cycle of' "$tmp/lib.out")"
	grep -q 'cycles-tolerated:.* \(callback\|cb_[a-z]*\)\( \|$\)' "$top/userspace/layers" &&
		fail "a callback service file is in a cycles-tolerated layer"
fi
# shellcheck disable=SC2046
if lib pdh/layers $(objs static/pdh pdh); then
	# libpdh has no cycle at all, tolerated or not (issue 33 broke log <-> query and
	# sample <-> value), and every file of pdh/ is in its layers
	grep -q 'cycle of' "$tmp/lib.out" && fail "libpdh has a cycle: $(grep 'cycle of' "$tmp/lib.out")"
	grep -q 'cycles-tolerated' "$top/pdh/layers" && fail "pdh/layers tolerates cycles"
	for c in "$top"/pdh/*.c; do
		grep -q "^[^#]*:.* $(basename "$c" .c)\( \|$\)" "$top/pdh/layers" ||
			fail "pdh/$(basename "$c") is in no layer of pdh/layers"
	done
fi
# shellcheck disable=SC2046
lib tools/common/layers $(objs tools-obj/common tools/common) || true

[ "$failures" -eq 0 ] && echo "check-layers: all cases pass"
[ "$failures" -eq 0 ]
