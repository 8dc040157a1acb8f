#!/bin/sh
# SPDX-License-Identifier: MIT
# test_e2e.sh - the Windows workflow end to end on a real manifest (the SDK's ucs.man):
# ctrpp -> build the provider -> lodctr -> run it -> typeperf (values by value, by reference
# through the callback channel, and the _Total aggregate) -> unlodctr (refused while live,
# then done) -> nothing left pinned.
: "${OUTPUT:?}" "${SHARED:?}"
T=$OUTPUT/tools
MAN=$SHARED/manifests/microsoft_Windows-classic-samples_ucs.man
export PERFLIB_ROOT=/sys/fs/bpf/perflib-test-e2e-$$
work=$(mktemp -d)
pid=
fails=0
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	wait 2>/dev/null
	"$T/unlodctr" "/m:$MAN" --force >/dev/null 2>&1
	rm -rf "$work" "$PERFLIB_ROOT"
}
trap cleanup EXIT
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

[ -f "$MAN" ] || { echo "SKIP: $MAN not found"; exit 77; }

# 1. ctrpp
"$T/ctrpp" -o "$work/ucs.h" -rc "$work/ucs.rc" "$MAN" >"$work/ctrpp.out" 2>&1 &&
	ok "ctrpp generated ucs.h" || { fail "ctrpp: $(cat "$work/ctrpp.out")"; exit 1; }

# 2. build the provider against the generated header and the static library (with the
# library's sanitizers when it was built with them)
san=
nm "$OUTPUT/libperflib.a" 2>/dev/null | grep -q __asan_init && san="$san -fsanitize=address"
nm "$OUTPUT/libperflib.a" 2>/dev/null | grep -q __ubsan_handle && san="$san -fsanitize=undefined"
cc -std=gnu11 -fshort-wchar -Wall -Wextra -Werror $san -Iinclude -I"$work" tests/ports/ucs_provider.c \
	"$OUTPUT/libperflib.a" -lbpf -lelf -lz -lpthread -o "$work/ucs_provider" 2>"$work/cc.out" &&
	ok "provider built with -Wall -Wextra -Werror" || { fail "build: $(cat "$work/cc.out")"; exit 1; }

# 3. lodctr
"$T/lodctr" "/m:$MAN" >"$work/lodctr.out" 2>&1 && ok "lodctr registered ucs.man" ||
	fail "lodctr: $(cat "$work/lodctr.out")"
[ "$(ls "$PERFLIB_ROOT" | grep -c ffeeaadd)" = 2 ] && ok "two counter sets pinned" ||
	fail "pins: $(ls "$PERFLIB_ROOT")"

# 4. run the provider (the test_ports.sh program: it stops when its standard input closes)
mkfifo "$work/in"
"$work/ucs_provider" <"$work/in" >"$work/provider.out" 2>&1 &
pid=$!
exec 3>"$work/in"
i=0
while ! grep -q ready "$work/provider.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || { fail "provider did not start: $(cat "$work/provider.out")"; exit 1; }
	sleep 0.1
done
ok "provider running"

# 5. typeperf: by value, _Total (sum and avg), by reference (dereferenced in the provider)
"$T/typeperf" "\\Geometric Waves(*)\\Triangle Wave" "\\Geometric Waves(_Total)\\Square Wave" \
	"\\Trignometric Waves\\Cosine Wave" "\\Trignometric Waves\\Constant Value" \
	"\\Trignometric Waves\\Raw Fraction" -sc 2 -si 1 >"$work/tp.csv" 2>&1 ||
	fail "typeperf exit $?: $(cat "$work/tp.csv")"
sed -n 2,3p "$work/tp.csv" | sed 's/^/   /'
sed -n 2p "$work/tp.csv" | grep -q 'Geometric Waves(Instance_1)\\Triangle Wave","\\\\[^\\]*\\Geometric Waves(Instance_2)\\Triangle Wave","\\\\[^\\]*\\Geometric Waves(_Total)\\Triangle Wave"' &&
	ok "typeperf header lists both instances and _Total" || fail "header: $(sed -n 2p "$work/tp.csv")"
# Instance_1 10, Instance_2 20, _Total Triangle sum 30, _Total Square avg(101, 102) = 101 (the
# aggregate of raw integers is an integer),
# Cosine 8, Constant 9 (typeperf shows raw, unscaled values), Raw Fraction 100*3/4 = 75
sed -n 3p "$work/tp.csv" | tr -d '\r' | grep -Eq '^"[0-9/]+ [0-9:.]+","10\.000000","20\.000000","30\.000000","101\.000000","8\.000000","9\.000000","75\.000000"$' &&
	ok "values by value, aggregate and by reference are right" || fail "row: $(sed -n 3p "$work/tp.csv")"

# 6. unlodctr refuses while the provider lives, then removes everything
"$T/unlodctr" "/m:$MAN" >"$work/un.out" 2>&1
rc=$?
[ $rc = 170 ] && grep -q 'live instances' "$work/un.out" && ok "unlodctr refuses with live instances (170)" ||
	fail "unlodctr while live: rc $rc $(cat "$work/un.out")"
exec 3>&-
wait "$pid"; pid=
n=$(sed -n 's/^callbacks //p' "$work/provider.out")
[ "${n:-0}" -ge 4 ] && ok "the provider's ControlCallback ran $n times (add, collect start/end)" ||
	fail "callbacks: $(cat "$work/provider.out")"
"$T/unlodctr" "/m:$MAN" >"$work/un.out" 2>&1 && ok "unlodctr after the provider stopped" ||
	fail "unlodctr: $(cat "$work/un.out")"
[ -z "$(ls "$PERFLIB_ROOT")" ] && ok "nothing left pinned" || fail "left: $(ls -R "$PERFLIB_ROOT")"

[ $fails = 0 ] || exit 1
