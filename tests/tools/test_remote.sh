#!/bin/sh
# SPDX-License-Identifier: MIT
# test_remote.sh - the consumer operations perflib-exporter serves over HTTP (issue 30,
# docs/REMOTE.md), against the same calls made locally (tests/tools/remote_check.py calls
# libperflib.so through ctypes): the counter sets, every registration request code, the
# instances, and a query (add, info, data, delete, close) give the local call's exact
# bytes (the data's time stamps apart); errors (unknown set, bad identifiers, unknown query,
# bad spellings, methods, an oversized body) come back as HTTP codes or Win32 statuses; the
# server's query table is bounded.
# Exit 0 pass, 77 skip, 1 fail.
here=$(cd "$(dirname "$0")/../.." && pwd)
data="$here/tests/data/exporter"
. "$data/lib.sh"

exp_preflight
trap exp_cleanup EXIT
trap 'exit 1' INT TERM HUP
command -v python3 >/dev/null || exp_skip "python3 is not installed"

exp_start_provider
exp_start_exporter
base=$(echo "$EXP_URL" | sed 's|/metrics$||')
# a sanitizer build's library needs its runtime first in python (and python's own leaks
# are not the library's)
asan=$(ldd "$OUTPUT/libperflib.so" 2>/dev/null | awk '/libasan/ { print $3 }')
[ -z "$asan" ] || export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
LD_PRELOAD="$asan" LD_LIBRARY_PATH="$OUTPUT" python3 "$here/tests/tools/remote_check.py" \
	"$base" "$OUTPUT/libperflib.so" || exp_fail "remote checks failed"

# a peer that is not on a loopback address is refused (403), /metrics still served: in a
# network namespace of this test, where 10.99.0.1 is an address of lo but not loopback
command -v unshare >/dev/null && command -v ip >/dev/null ||
	exp_fail "unshare (util-linux) and ip (iproute2, make deps) are needed"
{
	unshare -n sh -c '
		ip link set lo up && ip addr add 10.99.0.1/32 dev lo || exit 2
		"$1" --listen 0.0.0.0:0 2>"$2/ns.err" &
		pid=$!
		n=0
		until grep -qs "listening on" "$2/ns.err"; do
			n=$((n + 1)); [ $n -lt 100 ] || { kill $pid; exit 3; }; sleep 0.1
		done
		port=$(sed -n "s/.*listening on http:[^ ]*:\([0-9]*\)\/metrics$/\1/p" "$2/ns.err")
		far=$(curl -sS -o /dev/null -w "%{http_code}" --interface 10.99.0.1 \
			"http://10.99.0.1:$port/perflib/v1/countersets")
		near=$(curl -sS -o /dev/null -w "%{http_code}" "http://127.0.0.1:$port/perflib/v1/countersets")
		metrics=$(curl -sS -o /dev/null -w "%{http_code}" --interface 10.99.0.1 \
			"http://10.99.0.1:$port/metrics")
		kill $pid
		echo "far $far near $near metrics $metrics"
		[ "$far" = 403 ] && [ "$near" = 200 ] && [ "$metrics" = 200 ]
	' sh "$TOOLS/perflib-exporter" "$EXP_TMP" || exp_fail "a non-loopback peer was not refused"
	echo "ok    a peer off loopback: 403 for the consumer operations, /metrics served"
}
echo "ok: the consumer operations over HTTP answer with the local calls' bytes"
