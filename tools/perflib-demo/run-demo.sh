#!/bin/sh
# SPDX-License-Identifier: MIT
# run-demo.sh - `make demo`: register the demo manifest with lodctr, start the demo provider,
# watch its live counters with typeperf for a few samples, show one slot with bpftool, and
# clean up (provider stopped, counter set unregistered, pins removed).
set -e
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
OUTPUT=${OUTPUT:-$(pwd)/.output}
T=$OUTPUT/tools
MAN=tools/perflib-demo/demo.man
SET=8c4c9b1e-3f7a-4d2b-9a51-6e0f2d7c1a02
SAMPLES=${DEMO_SAMPLES:-5}
export PERFLIB_ROOT=${PERFLIB_ROOT:-/sys/fs/bpf/perflib-demo}

if [ "$(id -u)" != 0 ]; then
	echo "make demo: run as root (lodctr creates BPF maps)" >&2
	exit 1
fi
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

pid=
cleanup() {
	[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }
	"$T/unlodctr" "/m:$MAN" >/dev/null 2>&1 || true
	rmdir "$PERFLIB_ROOT" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

echo "== lodctr /m:$MAN"
"$T/lodctr" "/m:$MAN"
echo
echo "== starting the demo provider"
"$T/perflib-demo" &
pid=$!
sleep 1
echo
echo "== typeperf (${SAMPLES} samples, one per second)"
"$T/typeperf" "\\Demo Service(*)\\Requests/sec" "\\Demo Service(*)\\Active Requests" \
	"\\Demo Service(_Total)\\Bytes Sent/sec" "\\Demo Service(*)\\Cache Hit %" \
	-si 1 -sc "$SAMPLES"
echo
echo "== bpftool map dump pinned $PERFLIB_ROOT/$SET/s0/data (first slot)"
# the UTF-16 InstanceName array is long: show its ASCII rendering ("name") instead
bpftool map dump pinned "$PERFLIB_ROOT/$SET/s0/data" |
	awk '/"InstanceName":/ { skip = 1; next } skip { skip = 0; next } { print } /"name"/ { exit }'
echo "..."
echo
echo "== cleaning up"
