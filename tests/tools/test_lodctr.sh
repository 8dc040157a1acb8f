#!/bin/sh
# SPDX-License-Identifier: MIT
# test_lodctr.sh - lodctr and unlodctr: registration of every real manifest, identical
# re-registration, changed manifests, bad manifests and switches with their Win32 codes,
# pin owner/group/mode, /q, removal by manifest, provider GUID and provider name, --force,
# and an unprivileged provider publishing into a registered counter set.
: "${OUTPUT:?}" "${SHARED:?}"
T=$OUTPUT/tools
export PERFLIB_ROOT=/sys/fs/bpf/perflib-test-lodctr-$$
work=$(mktemp -d)
chmod 755 "$work"
DEMO=tools/perflib-demo/demo.man
SET=8c4c9b1e-3f7a-4d2b-9a51-6e0f2d7c1a02
fails=0
pid=
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work" "$PERFLIB_ROOT"
}
trap cleanup EXIT
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect CODE DESCRIPTION COMMAND...: exit status and, for errors, the Windows error line
expect() {
	code=$1; what=$2; shift 2
	"$@" >"$work/out" 2>&1
	rc=$?
	if [ "$rc" != "$code" ]; then
		fail "$what: exit $rc, expected $code: $(cat "$work/out")"
	elif [ "$code" != 0 ] && ! grep -q '^Error: ' "$work/out"; then
		fail "$what: no 'Error:' line: $(cat "$work/out")"
	else
		ok "$what (exit $rc)"
	fi
}

expect 0 "lodctr --help" "$T/lodctr" --help
grep -q 'Usage: lodctr /m:MANIFEST' "$work/out" || fail "lodctr --help text"
expect 0 "unlodctr /?" "$T/unlodctr" /?
expect 87 "lodctr without a manifest" "$T/lodctr"
expect 87 "unlodctr without /m, /g or /p" "$T/unlodctr"
expect 2 "lodctr /m: of a missing file" "$T/lodctr" /m:/nonexistent.man
grep -q 'Error: Unable to install performance counters in /nonexistent.man, error code is 2' \
	"$work/out" || fail "Windows error line: $(cat "$work/out")"
expect 13 "lodctr of an invalid manifest" "$T/lodctr" /m:tests/data/manifests/bad_dup_id.man
grep -q 'bad_dup_id.man:[0-9]*: error:' "$work/out" || fail "FILE:LINE diagnostic missing"
expect 50 "lodctr /c: (V1 counters) refused" "$T/lodctr" /c:counters.ini
expect 50 "lodctr of an .ini file refused" "$T/lodctr" counters.ini
expect 87 "lodctr --mode with a bad value" "$T/lodctr" /m:$DEMO --mode 0999
# the command line (tools/common/tool.c): usage errors are 87, the V1 forms 50
expect 87 "lodctr with an unknown switch" "$T/lodctr" --frobnicate
expect 87 "lodctr /m without its file" "$T/lodctr" /m
expect 87 "lodctr --capacity 0" "$T/lodctr" /m:$DEMO --capacity 0
expect 87 "lodctr with an argument after INSTALL_PATH" "$T/lodctr" /m:$DEMO /opt/demo extra
expect 50 "lodctr /r (V1 rebuild) refused" "$T/lodctr" /R
expect 0 "lodctr --dump with an absolute INSTALL_PATH" "$T/lodctr" --dump -m $DEMO /opt/demo

# --dump prints the slot layout (golden files) and registers nothing; the layout is the
# one the maps then get
expect 0 "lodctr --dump demo.man" "$T/lodctr" --dump "/m:$DEMO" --capacity 16 --name-max 33
diff -u tests/data/lodctr/demo.dump.golden "$work/out" >"$work/diff" &&
	ok "demo layout matches tests/data/lodctr/demo.dump.golden" || fail "layout: $(cat "$work/diff")"
expect 0 "lodctr --dump ucs.man (by-reference counters)" "$T/lodctr" --dump \
	"/m:$SHARED/manifests/microsoft_Windows-classic-samples_ucs.man" --capacity 1024 --name-max 1025
diff -u tests/data/lodctr/ucs.dump.golden "$work/out" >"$work/diff" &&
	ok "ucs layout matches tests/data/lodctr/ucs.dump.golden" || fail "layout: $(cat "$work/diff")"
[ -z "$(ls -A "$PERFLIB_ROOT" 2>/dev/null)" ] && ok "--dump pinned nothing" || fail "--dump pinned: $(ls "$PERFLIB_ROOT")"
expect 0 "lodctr demo.man with the dumped geometry" "$T/lodctr" "/m:$DEMO" --capacity 16 --name-max 33
bpftool map show pinned "$PERFLIB_ROOT/$SET/s0/data" | grep -q 'value 224B  max_entries 128' &&
	ok "segment 0 has the dumped slot size and 28 KiB of slots" ||
	fail "data map: $(bpftool map show pinned "$PERFLIB_ROOT/$SET/s0/data")"
expect 0 "unlodctr demo.man" "$T/unlodctr" "/m:$DEMO"

# every real manifest registers, lists and unregisters
for m in "$SHARED"/manifests/*.man; do
	expect 0 "lodctr $(basename "$m")" "$T/lodctr" "/m:$m"
done
n=$(ls "$PERFLIB_ROOT" | wc -l)
[ "$n" -ge 15 ] && ok "$n counter sets pinned from the real manifests" || fail "only $n sets"
"$T/lodctr" -q >"$work/q" 2>&1
grep -q 'Geometric Waves' "$work/q" && grep -q 'Node.js' "$work/q" &&
	ok "lodctr -q lists them by name" || fail "lodctr -q: $(head "$work/q")"
# switches after -q still count (the whole command line is parsed first)
PERFLIB_ROOT=/nonexistent "$T/lodctr" -q --root "$PERFLIB_ROOT" >"$work/q" 2>&1
grep -q 'Geometric Waves' "$work/q" && ok "lodctr -q --root ROOT" ||
	fail "lodctr -q --root: $(head "$work/q")"
for m in "$SHARED"/manifests/*.man; do
	expect 0 "unlodctr $(basename "$m")" "$T/unlodctr" "/m:$m"
done
[ -z "$(ls "$PERFLIB_ROOT")" ] && ok "nothing left after unlodctr" || fail "left: $(ls "$PERFLIB_ROOT")"

# identical re-registration is a no-op; a changed manifest is refused
expect 0 "lodctr demo.man" "$T/lodctr" "/M:$DEMO"
stat -c '%a %U %G' "$PERFLIB_ROOT/$SET/s0/data" | grep -q '^644 root root$' &&
	ok "default pins are 0644 root:root" || fail "pin mode: $(stat -c '%a %U %G' "$PERFLIB_ROOT/$SET/s0/data")"
expect 0 "lodctr demo.man again" "$T/lodctr" "/m:$DEMO"
grep -q 'already registered' "$work/out" || fail "no 'already registered' notice"
sed 's/perf_counter_rawcount/perf_counter_large_rawcount/' $DEMO >"$work/changed.man"
expect 183 "lodctr of a changed manifest" "$T/lodctr" "/m:$work/changed.man"
grep -q 'run unlodctr' "$work/out" || fail "no hint to run unlodctr: $(cat "$work/out")"
bpftool map dump pinned "$PERFLIB_ROOT/$SET/s0/data" >"$work/dump" 2>&1
grep -q '"Requests_sec_1": 0' "$work/dump" && grep -q '"Cache_Lookups_5": 0' "$work/dump" &&
	ok "bpftool shows the manifest's counter names" || fail "bpftool: $(head -30 "$work/dump")"

# removal by provider GUID and by provider name; unknown provider
expect 0 "unlodctr /g:{provider}" "$T/unlodctr" "/g:{8c4c9b1e-3f7a-4d2b-9a51-6e0f2d7c1a01}"
[ ! -e "$PERFLIB_ROOT/$SET" ] && ok "removed by provider GUID" || fail "still pinned"
expect 0 "lodctr demo.man" "$T/lodctr" "/m:$DEMO"
expect 0 "unlodctr /p:PerflibDemo" "$T/unlodctr" /p:PerflibDemo
[ ! -e "$PERFLIB_ROOT/$SET" ] && ok "removed by provider name" || fail "still pinned"
expect 1 "unlodctr /p: of an unknown provider (1168)" "$T/unlodctr" /p:NoSuchProvider
grep -q 'error code is 1168' "$work/out" || fail "1168 expected: $(cat "$work/out")"
expect 87 "unlodctr /g: with a bad GUID" "$T/unlodctr" /g:not-a-guid
expect 87 "unlodctr with an unknown switch" "$T/unlodctr" --frobnicate /m:$DEMO
expect 87 "unlodctr /p without its name" "$T/unlodctr" /p
expect 50 "unlodctr SERVICE (V1 counters) refused" "$T/unlodctr" someservice

# group-writable registration: an unprivileged provider publishes, consumers read names
expect 0 "lodctr --group nogroup --mode 0664" "$T/lodctr" "/m:$DEMO" --group nogroup --mode 0664
stat -c '%a %G' "$PERFLIB_ROOT/$SET/s0/data" | grep -q '^664 nogroup$' &&
	ok "pins are 0664 root:nogroup" || fail "pins: $(stat -c '%a %G' "$PERFLIB_ROOT/$SET/s0/data")"
cp "$T/perflib-demo" "$work/perflib-demo"
su nobody -s /bin/sh -c "PERFLIB_ROOT=$PERFLIB_ROOT $work/perflib-demo --seconds 30" \
	>"$work/demo.out" 2>&1 &
pid=$!
i=0
while ! grep -q publishing "$work/demo.out" 2>/dev/null && [ $i -lt 50 ]; do
	i=$((i + 1)); sleep 0.1
done
grep -q publishing "$work/demo.out" && ok "user nobody (no CAP_BPF) publishes after lodctr" ||
	fail "unprivileged provider: $(cat "$work/demo.out")"
su nobody -s /bin/sh -c "PERFLIB_ROOT=$PERFLIB_ROOT $T/typeperf -qx 'Demo Service'" \
	>"$work/qx" 2>&1
grep -q '\\Demo Service(worker-1)\\Requests/sec' "$work/qx" &&
	ok "an unprivileged consumer sees its instances and counter names" ||
	fail "typeperf -qx as nobody: $(cat "$work/qx")"
expect 170 "unlodctr with live instances" "$T/unlodctr" "/m:$DEMO"
expect 0 "unlodctr --force" "$T/unlodctr" "/m:$DEMO" --force
[ ! -e "$PERFLIB_ROOT/$SET" ] && ok "forced removal" || fail "still pinned"
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=

# a locked-down registration: nobody cannot publish (ERROR_ACCESS_DENIED)
expect 0 "lodctr --mode 0640" "$T/lodctr" "/m:$DEMO" --mode 0640
su nobody -s /bin/sh -c "PERFLIB_ROOT=$PERFLIB_ROOT $work/perflib-demo --seconds 1" \
	>"$work/demo.out" 2>&1
grep -q 'CounterInitialize failed, error 5' "$work/demo.out" &&
	ok "without write access: ERROR_ACCESS_DENIED" || fail "expected error 5: $(cat "$work/demo.out")"
expect 0 "unlodctr demo.man" "$T/unlodctr" "/m:$DEMO"
expect 0 "unlodctr of an unregistered manifest" "$T/unlodctr" "/m:$DEMO"
grep -q 'not registered' "$work/out" || fail "no 'not registered' notice"

[ $fails = 0 ] || exit 1
