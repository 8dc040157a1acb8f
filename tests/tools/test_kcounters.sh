#!/bin/sh
# SPDX-License-Identifier: MIT
# test_kcounters.sh - the kernel counter provider end to end: load, counters grow (seen
# with bpftool and through the consumer API with typeperf), status, load twice, unload,
# nothing left pinned, programs gone; and the same with --manifest FILE.
# Environment: OUTPUT, TOOLS (built tools), SHARED. Exit 0 pass, 77 skip, other fail.
: "${TOOLS:?}"
K="$TOOLS/kcounters"
TP="$TOOLS/typeperf"
SET=df75996b-42f9-4c1e-a30b-9db93f06be49

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ -x "$K" ] || skip "kcounters is not built"
[ "$(id -u)" = 0 ] || skip "kcounters needs root (CAP_BPF, CAP_PERFMON)"
command -v bpftool >/dev/null 2>&1 || [ -x /usr/sbin/bpftool ] || skip "no bpftool"
command -v bpftool >/dev/null 2>&1 || PATH="$PATH:/usr/sbin"
mountpoint -q /sys/fs/bpf 2>/dev/null || [ -d /sys/fs/bpf ] || skip "no bpffs at /sys/fs/bpf"

PERFLIB_ROOT=/sys/fs/bpf/perflib-test-$$
export PERFLIB_ROOT
DIR="$PERFLIB_ROOT/$SET"
cleanup() {
	"$K" unload --force >/dev/null 2>&1
	rm -rf "$PERFLIB_ROOT"
}
trap cleanup EXIT INT TERM

# sum of one counter field over all slots, from bpftool's BTF-formatted dump
field_sum() {
	bpftool map dump pinned "$DIR/s0/data" |
		awk -v f="\"$1\":" '$1 == f { gsub(",", "", $2); s += $2 } END { print s + 0 }'
}

# some context switches, system calls and page faults
activity() {
	i=0
	while [ $i -lt 20 ]; do
		ls / >/dev/null
		sleep 0.01
		i=$((i + 1))
	done
}

# programs of kcounters still loaded in the kernel
progs_loaded() {
	bpftool prog show 2>/dev/null | grep -c ' name kc_' || true
}

out=$("$K" status 2>&1)
rc=$?
[ $rc -eq 3 ] || fail "status before load: exit $rc (want 3): $out"

out=$("$K" load 2>&1) || fail "load: $out"
echo "$out"
for p in info segs lives s0/data s0/live link_sched_switch link_sys_enter reaper; do
	[ -e "$DIR/$p" ] || fail "load: $DIR/$p is not pinned"
done
# a kernel that lacks a tracepoint gets no link for it (load says so)
for p in link_page_fault_user link_page_fault_kernel; do
	[ -e "$DIR/$p" ] || echo "note: $p not pinned (tracepoint missing on this kernel)"
done

# one kernel-owned instance per possible CPU: pid 0 and the PERFLIB_OWNER_KERNEL marker
ncpu=$(bpftool map dump pinned "$DIR/s0/data" | grep -c '"owner_start": 18446744073709551615')
possible=$(awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { split($i, r, "-");
	n += (r[2] == "" ? 1 : r[2] - r[1] + 1) } print n }' /sys/devices/system/cpu/possible)
[ "$ncpu" -eq "$possible" ] || fail "$ncpu kernel-owned instances, want $possible (possible CPUs)"

# the counters grow
cs0=$(field_sum Context_Switches_sec_1)
sc0=$(field_sum System_Calls_sec_2)
pf0=$(field_sum Page_Faults_sec_3)
activity
cs1=$(field_sum Context_Switches_sec_1)
sc1=$(field_sum System_Calls_sec_2)
pf1=$(field_sum Page_Faults_sec_3)
echo "context switches $cs0 -> $cs1, system calls $sc0 -> $sc1, page faults $pf0 -> $pf1"
[ "$cs1" -gt "$cs0" ] || fail "context switches did not grow ($cs0 -> $cs1)"
[ "$sc1" -gt "$sc0" ] || fail "system calls did not grow ($sc0 -> $sc1)"
if [ -e "$DIR/link_page_fault_user" ]; then
	[ "$pf1" -gt "$pf0" ] || fail "page faults did not grow ($pf0 -> $pf1)"
fi

# through the consumer API: typeperf cooks the bulk counts into rates
if [ -x "$TP" ]; then
	out=$("$TP" '\Kernel CPU(*)\System Calls/sec' '\Kernel CPU(*)\Context Switches/sec' \
		-sc 2 -si 1 2>&1) || fail "typeperf: $out"
	echo "$out"
	echo "$out" | grep -q 'Kernel CPU(0)\\System Calls/sec' || fail "typeperf: no header"
	# the second sample has rates: some CPU made system calls (an idle CPU may not have)
	n=$(echo "$out" | grep -F '(PDH-CSV 4.0)' | grep -o 'System Calls/sec' | wc -l)
	rates=$(echo "$out" | grep '^"[0-9]' | tail -1 | tr -d '"\r' | cut -d, -f2-$((n + 1)))
	echo "$rates" | awk -F, '{ for (i = 1; i <= NF; i++) if ($i + 0 > 0) ok = 1 } END { exit !ok }' ||
		fail "typeperf: no CPU shows System Calls/sec > 0: '$rates'"
else
	echo "SKIP: the consumer API part (typeperf is not built)"
fi

out=$("$K" status 2>&1) || fail "status while loaded: exit $?: $out"
echo "$out" | grep -q 'link_sched_switch' || fail "status does not list the links: $out"
# an unprivileged reader of pins registered 0644 (the default): read-only fds, no mapping
# (this used to die with SIGSEGV reading a NULL mapping)
chmod 0755 "$PERFLIB_ROOT" 2>/dev/null
out=$(su nobody -s /bin/sh -c "PERFLIB_ROOT=$PERFLIB_ROOT $K status" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "status as nobody: exit $rc (want 0): $out"
echo "$out" | grep -Eq '^  0 +[0-9]+ +[1-9]' ||
	fail "status as nobody: no counters of CPU 0: $out"
out=$("$K" load 2>&1) || fail "second load: $out"
echo "$out" | grep -q 'already loaded' || fail "second load: $out"

out=$("$K" unload 2>&1) || fail "unload: $out"
[ -z "$(ls -A "$PERFLIB_ROOT" 2>/dev/null)" ] || fail "unload left pins: $(ls -R "$PERFLIB_ROOT")"
# links unpinned: the programs go (their release is deferred a little)
i=0
while [ "$(progs_loaded)" -gt 0 ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ "$(progs_loaded)" -eq 0 ] || fail "kcounters programs still loaded after unload"
out=$("$K" status 2>&1)
[ $? -eq 3 ] || fail "status after unload: $out"

# the manifest file registers the same counter set as the built-in copy
if [ -f tools/kcounters/kcounters.man ]; then
	out=$("$K" load --manifest tools/kcounters/kcounters.man 2>&1) || fail "load --manifest: $out"
	[ -e "$DIR/link_sched_switch" ] || fail "load --manifest: no link"
	out=$("$K" unload 2>&1) || fail "unload after --manifest: $out"
	[ -z "$(ls -A "$PERFLIB_ROOT" 2>/dev/null)" ] || fail "unload left pins"
fi
out=$("$K" bogus 2>&1)
[ $? -eq 2 ] || fail "bad command: not a usage error: $out"
echo "$out" | grep -qx "kcounters: unknown command 'bogus'" || fail "bad command: message: $out"
# the shared parser's usage errors (tools/common/tool.c), each followed by the synopsis
for args in "--bogus status:kcounters: unknown switch '--bogus'" \
	"load --mode:kcounters: --mode needs a value" \
	"load --mode 0999:kcounters: bad value '0999' for --mode" \
	"status unload:kcounters: unexpected argument 'unload'" "--force:kcounters: no command given"; do
	# shellcheck disable=SC2086
	out=$("$K" ${args%%:*} 2>&1)
	rc=$?
	[ $rc -eq 2 ] || fail "kcounters ${args%%:*}: exit $rc, want 2: $out"
	echo "$out" | grep -qxF "${args#*:}" || fail "kcounters ${args%%:*}: message: $out"
	echo "$out" | grep -q '^usage: kcounters load' || fail "kcounters ${args%%:*}: no synopsis"
done
echo "kcounters: ok"
