#!/bin/sh
# SPDX-License-Identifier: MIT
# test_bpftool.sh - a counter set is readable with plain bpftool: the BTF of the data map names
# every counter after its manifest name, and the instance shows its id and ASCII name.
# Runs tests/helpers/prov_demo ("Worker 1", id 7: Requests 42, Bytes Sent 1234567890123,
# Queue Length 5), dumps its data map as text and as JSON, and checks the values.
# Environment: OUTPUT (absolute build dir). Exit 0 pass, 77 skip, other fail.
set -u
: "${OUTPUT:?}"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
	if [ "${PERFLIB_REQUIRE_BPF:-}" = 1 ]; then fail "$* (and PERFLIB_REQUIRE_BPF=1)"; fi
	echo "SKIP: $*"; exit 77
}

demo=$OUTPUT/tests/helpers/prov_demo
[ -x "$demo" ] || fail "$demo is not built"
BPFTOOL=${BPFTOOL:-$(command -v bpftool || echo /usr/sbin/bpftool)}
[ -x "$BPFTOOL" ] || skip "bpftool not found"
if command -v python3 >/dev/null 2>&1; then json=python3
elif command -v jq >/dev/null 2>&1; then json=jq
else skip "neither python3 nor jq to read bpftool -j"; fi

guid=5a1e0b7e-0001-4d2c-9a3b-00000000b7f1
root=$(mktemp -d "${PERFLIB_TEST_BPFFS:-/sys/fs/bpf}/perflib-bpftool-XXXXXX" 2>/dev/null) ||
	skip "cannot create a directory in bpffs"
tmp=$(mktemp -d)
pid=
cleanup() {
	exec 3>&- 2>/dev/null
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	rm -rf "$root" "$tmp"
}
trap cleanup EXIT
export PERFLIB_ROOT=$root

# the provider runs until its stdin (a fifo we hold open) closes
mkfifo "$tmp/in"
"$demo" "$guid" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
pid=$!
exec 3>"$tmp/in"
i=0
until grep -q '^ready' "$tmp/out" 2>/dev/null; do
	if ! kill -0 "$pid" 2>/dev/null; then
		pid=
		cat "$tmp/err" >&2
		grep -q 'not permitted' "$tmp/err" && skip "prov_demo: no BPF permission here"
		fail "prov_demo exited before it was ready"
	fi
	i=$((i + 1))
	[ $i -lt 1000 ] || fail "prov_demo did not get ready in 10 s"
	sleep 0.01
done
grep -q "^ready $guid\$" "$tmp/out" || fail "prov_demo said: $(cat "$tmp/out")"
data=$root/$guid/s0/data

# text dump: fields by counter name, values, id, ASCII name
"$BPFTOOL" map dump pinned "$data" >"$tmp/dump.txt" 2>"$tmp/dump.err" ||
	fail "bpftool map dump: $(cat "$tmp/dump.err")"
for want in '"Requests_1": 42,' '"Bytes_Sent_2": 1234567890123,' '"Queue_Length_3": 5,' \
	'"InstanceId": 7,' '"name": "Worker 1"' '"dwSize": 80,' '"InstanceNameOffset": 56,' \
	'"InstanceNameSize": 18'; do
	grep -qF "$want" "$tmp/dump.txt" || fail "bpftool map dump has no $want"
done

# JSON dump, parsed
"$BPFTOOL" -j map dump pinned "$data" >"$tmp/dump.json" || fail "bpftool -j map dump"
if [ "$json" = python3 ]; then
	python3 - "$tmp/dump.json" "$guid" <<'EOF' || fail "bpftool -j output does not match"
import json, sys, uuid
# with BTF, bpftool -j gives raw bytes in key/value and the typed view in "formatted"
entries = [e["formatted"] for e in json.load(open(sys.argv[1]))]
live = [e for e in entries if e["value"]["seq"] & 3 == 2]
assert len(live) == 1, "live slots: %d" % len(live)
v = live[0]["value"]
inst = v["instance"]
checks = {
    "Requests_1": (v["Requests_1"], 42),
    "Bytes_Sent_2": (v["Bytes_Sent_2"], 1234567890123),
    "Queue_Length_3": (v["Queue_Length_3"], 5),
    "InstanceId": (inst["InstanceId"], 7),
    "dwSize": (inst["dwSize"], 80),
    "InstanceNameOffset": (inst["InstanceNameOffset"], 56),
    "InstanceNameSize": (inst["InstanceNameSize"], 18),
    "name": (v["name"], "Worker 1"),
    "CounterSetGuid": (bytes(inst["CounterSetGuid"]), uuid.UUID(sys.argv[2]).bytes_le),
}
units = v["InstanceName"]
checks["InstanceName"] = ("".join(chr(u) for u in units[:units.index(0)]), "Worker 1")
bad = {k: got for k, (got, want) in checks.items() if got != want}
assert not bad, "wrong fields: %r" % bad
# every other slot is free and shows nothing
for e in entries:
    if e is not live[0]:
        assert e["value"]["seq"] & 3 == 0 and e["value"]["name"] == "", e["key"]
print("json ok: %d slots, 1 live" % len(entries))
EOF
else
	n=$(jq '[.[].formatted | select(.value.seq % 4 == 2)] | length' "$tmp/dump.json")
	[ "$n" = 1 ] || fail "live slots: $n"
	got=$(jq -c '.[].formatted | select(.value.seq % 4 == 2) | .value |
		[.Requests_1, .Bytes_Sent_2, .Queue_Length_3, .instance.InstanceId, .name]' \
		"$tmp/dump.json")
	[ "$got" = '[42,1234567890123,5,7,"Worker 1"]' ] || fail "jq read $got"
fi

# the info map shows the registration header by name
"$BPFTOOL" -j map dump pinned "$root/$guid/info" >"$tmp/info.json" || fail "bpftool info dump"
version=$(sed -n 's/^#define PERFLIB_LAYOUT_VERSION \([0-9]*\).*/\1/p' bpf/layout.h)
for want in '"magic":1112294992' '"nr_counters":3' '"capacity":1048576' "\"layout_version\":$version" '"seg0_slots":'; do
	grep -qF "$want" "$tmp/info.json" || fail "info dump has no $want"
done

# once the provider stops, no slot shows the instance any more
exec 3>&-
wait "$pid" || fail "prov_demo exited with $?"
pid=
"$BPFTOOL" map dump pinned "$data" >"$tmp/after.txt" || fail "bpftool dump after stop"
if grep -q 'Worker 1' "$tmp/after.txt"; then fail "stopped instance still visible"; fi
grep -q '"Requests_1": 42' "$tmp/after.txt" && fail "stopped instance's values still visible"
echo "ok: bpftool shows \"Worker 1\" by counter name"
exit 0
