#!/bin/sh
# SPDX-License-Identifier: MIT
# test_sysd_counters.sh - the perflib-sysd counters issue 31 found wrong, each against the same
# independent source, read around typeperf's samples:
#  - processes that exist before the service starts and stay idle (a python process holding
#    48 MB, 40 more files and 8 threads waiting on an event; a sleep): Working Set, Private
#    Bytes, Handle Count and Thread Count equal VmRSS, RssAnon + VmSwap, the entries of
#    /proc/<pid>/fd and Threads of /proc/<pid>/status, read just before or just after typeperf
#    (exactly: an idle process's values do not move; before, they read 0, 0, 0, 1 until the
#    process ran). A small process (sleep) started after the service: the same four, exactly
#    (the CPUs' parts of the kernel's RSS counters folded in: Private Bytes read 0 for 94 KB);
#  - pid 1 is listed (ID Process 1) with /proc/1/status's Threads;
#  - \System\Threads and \System\Processes against /proc/loadavg's thread total and the
#    /proc/<pid> directories, polled every 20 ms: the value of typeperf's last sample lies
#    within what the polls read 150 ms either side of it (processes and threads come and go
#    on a loaded machine), the lower end less the zombie and exiting (PF_EXITING) tasks each
#    poll saw (they count in /proc until reaped; a thread or process that exited is no longer
#    counted here, as on Windows);
#  - \Processor(_Total)\Interrupts/sec against /proc/stat's intr total: the interrupts over
#    typeperf's samples 1 to 4 (its rates times their intervals) lie within the bounds the
#    polls around the first and last sample give, widened by 100 ms of interrupts (typeperf
#    stamps a sample near, not at, its read: a scheduling delay apart, up to 50 ms seen at
#    each end on a loaded machine), 20 ms more (sysd publishes every 10 ms at each end) and
#    2 % (lines sysd does not count: NMI, PMI, and TLB, which /proc counts a second time
#    beside CAL);
#  - \Network Interface(lo)\Bytes Total/sec with 48-byte UDP packets against /proc/net/dev's
#    lo bytes the same way, widened by 100 ms of traffic (the stamps, as above) and 1 % (what
#    the docs promise; the tracepoints see the packets the driver counts);
#  - \Process(_Total)\% Processor Time is 100 % per CPU (within 3 points per CPU: the user and
#    privileged time of a busy CPU is published up to 10 ms late at each end),
#    \Process(Idle)\% Processor Time the CPUs' idle time of /proc/stat (10 points per CPU, as
#    test_sysd.sh per CPU), Idle's Thread Count the CPUs, both ID Process 0;
#  - \Process(_Total)\Working Set, Private Bytes and Handle Count are the sums of the other
#    instances of the same read, exactly, while a process's memory and handles change every
#    20 ms (in 6 of 10 reads or more: below);
#  - the name of a process moving to another (two busy loops named sdburn; the one shown as
#    "sdburn" is killed, "sdburn#1" becomes "sdburn"): the sample where its ID Process changes
#    has no % Processor Time (PDH pairs by InstanceId), every other is at most 100 % + 5
#    (one thread; seen before: 540.8 % on 2 CPUs).
# Environment: TOOLS (built tools). Exit 0 pass, 77 skip, other fail.
: "${TOOLS:?}"
S="$TOOLS/perflib-sysd"
TP="$TOOLS/typeperf"

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/sysd_lib.sh"

[ -x "$S" ] && [ -x "$TP" ] || skip "perflib-sysd or typeperf is not built"
[ "$(id -u)" = 0 ] || skip "perflib-sysd needs root"
command -v python3 >/dev/null 2>&1 || skip "no python3"

PERFLIB_ROOT=/sys/fs/bpf/perflib-sysd-ctr-$$
export PERFLIB_ROOT
mkdir -p "$PERFLIB_ROOT" || skip "no bpffs at /sys/fs/bpf"
work=$(mktemp -d)
# the names of this run's processes (comm, 15 characters): the Process set lists every process
# of the machine, another run of this test's among them
u=$(($$ % 100000))
pids=""
svc=""
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	[ -n "$svc" ] && kill -TERM "$svc" 2>/dev/null && wait "$svc"
	"$S" stop >/dev/null 2>&1
	rm -rf "$PERFLIB_ROOT" "$work"
}
trap cleanup EXIT INT TERM
ncpu=$(awk '/^cpu[0-9]/ { n++ } END { print n }' /proc/stat)

# ---- processes of the start, idle --------------------------------------------------------
ln -s "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" "$work/sdidle$u"
"$work/sdidle$u" -c '
import threading
b = bytearray(48 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
files = [open("/dev/null") for i in range(40)]
ev = threading.Event()
for i in range(8):
    threading.Thread(target=ev.wait, daemon=True).start()
print("ready", flush=True)
ev.wait()
' >"$work/idle.out" &
idle=$!
pids="$pids $idle"
ln -s "$(command -v sleep)" "$work/sdsmall$u"
"$work/sdsmall$u" 600 &
small=$!
pids="$pids $small"
i=0
until grep -q ready "$work/idle.out"; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "the idle process did not start in 60 s"
	sleep 0.1
done
sleep 0.3
sysd_start
ln -s "$(command -v sleep)" "$work/sdlate$u"
"$work/sdlate$u" 600 &
late=$!
pids="$pids $late"
sleep 0.5

# "<Working Set> <Private Bytes> <Handle Count> <Thread Count>" of /proc/<pid>
status() {
	awk '$1 == "VmRSS:" { ws = $2 } $1 == "RssAnon:" { a = $2 } $1 == "VmSwap:" { s = $2 }
		$1 == "Threads:" { t = $2 } END { printf "%d %d ", ws * 1024, (a + s) * 1024;
		print t }' "/proc/$1/status" | { read -r w p t; echo "$w $p $(ls "/proc/$1/fd" | wc -l) $t"; }
}
for p in $idle $small $late; do echo "$(status "$p")" >"$work/before.$p"; done
set --
for n in sdidle$u sdsmall$u sdlate$u; do
	set -- "$@" "\\Process($n)\\Working Set" "\\Process($n)\\Private Bytes" \
		"\\Process($n)\\Handle Count" "\\Process($n)\\Thread Count"
done
out=$("$TP" "$@" -sc 1 2>&1) || fail "typeperf: $out"
for p in $idle $small $late; do echo "$(status "$p")" >"$work/after.$p"; done
echo "$out"
vals=$(printf '%s\n' "$out" | grep '^"[0-9]' | tail -1 | cut -d, -f2- | tr -d '"\r' | tr ',' ' ')
k=0
for p in $idle $small $late; do
	# shellcheck disable=SC2086
	set -- $vals
	shift $((4 * k))
	got=$(awk -v a="$1" -v b="$2" -v c="$3" -v d="$4" 'BEGIN { printf "%d %d %d %d\n", a, b, c, d }')
	echo "pid $p: typeperf $got; /proc before $(cat "$work/before.$p"), after $(cat "$work/after.$p")"
	[ "$got" = "$(cat "$work/before.$p")" ] || [ "$got" = "$(cat "$work/after.$p")" ] ||
		fail "pid $p: Working Set, Private Bytes, Handle Count, Thread Count $got vs /proc $(cat "$work/before.$p") / $(cat "$work/after.$p")"
	k=$((k + 1))
done
# shellcheck disable=SC2086
set -- $(cat "$work/before.$idle")
awk -v w="$1" -v h="$3" -v t="$4" 'BEGIN { exit !(w >= 48 * 1048576 && h >= 43 && t >= 9) }' ||
	fail "the idle process holds less than it should: $*"

# ---- pid 1 -------------------------------------------------------------------------------
out=$("$TP" "\\Process(*)\\ID Process" "\\Process(*)\\Thread Count" -sc 1 2>&1) ||
	fail "typeperf Process(*): $out"
t0=$(awk '$1 == "Threads:" { print $2 }' /proc/1/status)
res=$(printf '%s\n' "$out" | python3 -c '
import csv, sys
rows = [r for r in csv.reader(sys.stdin) if r and (r[0].startswith("(PDH") or r[0][:1].isdigit())]
head, vals = rows[0], rows[-1]
col = dict(zip(head, vals))
for path, v in col.items():
    if path.endswith("\\ID Process") and v.strip() and float(v) == 1:
        inst = path.split("\\Process(")[1].rsplit(")\\", 1)[0]
        print(inst, float(col[path[:-len("ID Process")] + "Thread Count"]))
')
t1=$(awk '$1 == "Threads:" { print $2 }' /proc/1/status)
echo "pid 1: $res; /proc/1/status Threads $t0 .. $t1"
[ -n "$res" ] || fail "no Process instance with ID Process 1"
set -- $res
awk -v v="$2" -v a="$t0" -v b="$t1" 'BEGIN { exit !(v == a || v == b) }' ||
	fail "Process($1) (pid 1) Thread Count $2 vs /proc/1/status $t0 / $t1"

# ---- System, interrupts, loopback, Process(_Total) and Process(Idle) -----------------------
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.time() + 30
open(sys.argv[1], "w").close()
while time.time() < end:
    c.sendto(b"x" * 20, s.getsockname())
    s.recv(64)
    time.sleep(0.001)
' "$work/lo.ready" &
pids="$pids $!"
# every 20 ms (one python process: a shell loop takes 0.5 s a round on a loaded machine): time,
# loadavg's threads, /proc/<pid> dirs, zombie or exiting ones among them, intr, lo bytes, idle
# jiffies, zombie or exiting threads, tasks created since boot (/proc/stat processes)
python3 -c '
import os, sys, time
out = open(sys.argv[1], "w")
while True:
    t = time.time()
    threads = open("/proc/loadavg").read().split()[3].split("/")[1]
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    zp = zt = 0
    for p in pids:
        try:
            for k, tid in enumerate([p] + [x for x in os.listdir("/proc/" + p + "/task") if x != p]):
                f = open("/proc/%s/task/%s/stat" % (p, tid)).read().rsplit(")", 1)[1].split()
                gone = f[0] in "ZX" or int(f[6]) & 4  # a zombie, or exiting (PF_EXITING)
                zt += gone
                zp += gone and not k
        except (OSError, IndexError, ValueError):
            pass
    intr = idle = lo = forks = 0
    for l in open("/proc/stat"):
        f = l.split()
        if f[0] == "intr":
            intr = f[1]
        elif f[0] == "processes":
            forks = int(f[1])
        elif f[0] == "cpu":
            idle = int(f[4]) + int(f[5])
    for l in open("/proc/net/dev"):
        f = l.replace(":", " ").split()
        if f[0] == "lo":
            lo = int(f[1]) + int(f[9])
    out.write("%.6f %s %d %d %s %d %d %d %d\n" % (t, threads, len(pids), zp, intr, lo, idle, zt, forks))
    out.flush()
    time.sleep(0.02)
' "$work/poll" &
poller=$!
pids="$pids $poller"
i=0
until [ -e "$work/lo.ready" ] && [ -s "$work/poll" ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "the loopback sender or the poller did not start in 60 s"
	sleep 0.1
done
sleep 0.2
out=$("$TP" "\\System\\Threads" "\\System\\Processes" "\\Processor(_Total)\\Interrupts/sec" \
	"\\Network Interface(lo)\\Bytes Total/sec" "\\Process(_Total)\\% Processor Time" \
	"\\Process(Idle)\\% Processor Time" "\\Process(Idle)\\Thread Count" \
	"\\Process(Idle)\\ID Process" "\\Process(_Total)\\ID Process" -sc 4 2>&1) ||
	fail "typeperf: $out"
sleep 0.3
kill "$poller"
echo "$out"
printf '%s\n' "$out" | python3 -c '
import csv, sys, datetime
rows = [r for r in csv.reader(sys.stdin) if r and r[0][:1].isdigit()]
polls = [list(map(float, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 9]
ncpu = int(sys.argv[2])
def t(r):
    return datetime.datetime.strptime(r[0], "%m/%d/%Y %H:%M:%S.%f").timestamp()
def v(r, c):
    return float(r[c])
bad = []
# gauges at the last sample, against the polls 150 ms either side
last, tl = rows[-1], t(rows[-1])
near = [p for p in polls if abs(p[0] - tl) <= 0.15]
if not near:
    sys.exit("FAIL: no poll near the last sample")
# a task created and gone between two polls (20 ms apart) is one the sample may count and
# no poll saw: each task created in the window allows one more (any process of the machine)
born = max(p[8] for p in near) - min(p[8] for p in near)
for col, f, g, name in ((1, 1, 7, "System Threads (loadavg)"), (2, 2, 3, "System Processes (/proc)")):
    lo, hi, got = min(p[f] - p[g] for p in near), max(p[f] for p in near) + born, v(last, col)
    print("%s: typeperf %d, polls %d..%d (less the zombies and exiting; %d tasks created near the sample)" % (name, got, lo, hi, born))
    if not lo <= got <= hi:
        bad.append(name)
# counts over samples 1..4 against the bounds of the polls around sample 1 and sample 4
t1, t4 = t(rows[0]), t(rows[-1])
def bounds(f):
    before = lambda x: max((p for p in polls if p[0] <= x), key=lambda p: p[0])[f]
    after = lambda x: min((p for p in polls if p[0] >= x), key=lambda p: p[0])[f]
    return before(t4) - after(t1), after(t4) - before(t1)
def counted(col):
    return sum(v(rows[i], col) * (t(rows[i]) - t(rows[i - 1])) for i in range(1, len(rows)))
for col, f, name, tol in ((3, 4, "Interrupts (/proc/stat intr)", 0.02), (4, 5, "lo bytes (/proc/net/dev)", 0.01)):
    lo, hi = bounds(f)
    got = counted(col)
    # typeperf stamps a sample near, not at, its read of the counters: on a loaded machine
    # the read may come a scheduling delay later (tens of ms) at either end; the publishing
    # timer adds up to 10 ms more to the interrupts
    slack = hi * tol + got / (t4 - t1) * (0.1 + (0.02 if col == 3 else 0))
    print("%s over %.3f s: typeperf %.0f, /proc %.0f..%.0f (allowed %.0f more either way)" % (name, t4 - t1, got, lo, hi, slack))
    if not lo - slack <= got <= hi + slack:
        bad.append(name)
    if col == 3 and got / (t4 - t1) < 50 * ncpu:
        bad.append("interrupts: the timer alone gives more than %.1f/s" % (got / (t4 - t1)))
    if col == 4 and got / (t4 - t1) < 10000:
        bad.append("no loopback traffic seen")
tot = sum(v(r, 5) for r in rows[1:]) / (len(rows) - 1)
lo, hi = bounds(6)
idle_proc = 100 * (lo + hi) / 2 / (t4 - t1) / float(sys.argv[3])
idle = sum(v(rows[i], 6) * (t(rows[i]) - t(rows[i - 1])) for i in range(1, len(rows))) / (t4 - t1)
print("Process(_Total) %% Processor Time %.2f (want %d); Process(Idle) %.2f, /proc/stat idle %.2f" % (tot, 100 * ncpu, idle, idle_proc))
if abs(tot - 100 * ncpu) > 3 * ncpu:
    bad.append("Process(_Total) % Processor Time")
if abs(idle - idle_proc) > 10 * ncpu:
    bad.append("Process(Idle) % Processor Time")
if v(last, 7) != ncpu or v(last, 8) != 0 or v(last, 9) != 0:
    bad.append("Process(Idle) Thread Count / ID Process, Process(_Total) ID Process")
if bad:
    sys.exit("FAIL: " + ", ".join(bad))
' "$work/poll" "$ncpu" "$(getconf CLK_TCK)" || fail "System, interrupts, loopback, _Total or Idle (above)"

# ---- Process(_Total)'s gauges: the sum of the instances of the same read -------------------
# A process whose memory (64 MB) and handles (20 files) come and go every 20 ms, and ten reads
# of every instance at once (perflib-exporter --once: one collection per set). _Total's
# Working Set, Private Bytes and Handle Count must equal the sums of the other instances
# (Idle holds none) in at least 6 of the 10 reads, exactly. Not in all: the read copies the
# slots one after another, and a process whose gauge is written between its slot's copy and
# _Total's makes that read differ (a few in a thousand under a make check). Summed by a walk
# once a second, as before, they differed in 18 of 20 reads here, by up to 58 % (Working
# Set), and the test failed.
EXP="$TOOLS/perflib-exporter"
[ -x "$EXP" ] || fail "perflib-exporter is not built"
ln -s "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" "$work/sdchurn$u"
"$work/sdchurn$u" -c '
import time
while True:
    b = b"\1" * (64 << 20)
    f = [open("/dev/null") for i in range(20)]
    time.sleep(0.02)
    del b, f
    time.sleep(0.02)
' &
pids="$pids $!"
sleep 0.5
exact=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	"$EXP" --once >"$work/scrape" 2>&1 || fail "perflib-exporter --once: $(cat "$work/scrape")"
	line=$(awk '
		/^perflib_process_(working_set|private_bytes|handle_count)\{/ {
			m = $0; sub(/\{.*/, "", m); v = $NF
			if ($0 ~ /perf_instance="_Total"/) total[m] = v
			else if ($0 !~ /perf_instance="Idle"/) { sum[m] += v; n[m]++ }
		}
		END {
			same = 1; k = 0
			for (m in sum) { k++; printf "%s %.0f/%.0f (%d) ", substr(m, 17), total[m], sum[m], n[m]
				if (total[m] != sum[m]) same = 0 }
			if (k != 3) same = 0
			print same ? "equal" : "DIFFERENT"
		}' "$work/scrape")
	echo "read $i: _Total/sum of the instances: $line"
	case $line in *" equal") exact=$((exact + 1)) ;; esac
done
[ "$exact" -ge 6 ] ||
	fail "Process(_Total)'s Working Set, Private Bytes, Handle Count equal the instances' sums in $exact of 10 reads (want 6 or more)"

# ---- a name that moves to another process --------------------------------------------------
ln -s "$(command -v sh)" "$work/sdburn$u"
"$work/sdburn$u" -c 'while :; do :; done' &
pids="$pids $!"
"$work/sdburn$u" -c 'while :; do :; done' &
pids="$pids $!"
sleep 0.3
"$TP" "\\Process(sdburn$u)\\% Processor Time" "\\Process(sdburn$u)\\ID Process" -sc 5 \
	>"$work/burn.out" 2>&1 &
tp=$!
# after typeperf's second sample, the process it shows as sdburn goes
i=0
while [ "$(grep -c '^"[0-9]' "$work/burn.out")" -lt 2 ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "typeperf printed no second sample in 60 s: $(cat "$work/burn.out")"
	sleep 0.1
done
first=$(grep '^"[0-9]' "$work/burn.out" | tail -1 | cut -d, -f3 | tr -d '"\r' | cut -d. -f1)
kill -9 "$first"
wait $tp || fail "typeperf sdburn: $(cat "$work/burn.out")"
cat "$work/burn.out"
grep '^"[0-9]' "$work/burn.out" | tr -d '"\r' | awk -F, -v first="$first" '
	NR > 1 && $3 != id { moved++; if ($2 != " ") bad = "a value across two processes: " $2 }
	NR > 1 && $3 == id && $2 != " " && $2 > 105 { bad = "% Processor Time " $2 " of one thread" }
	{ id = $3 }
	END { if (!moved) bad = bad " the name never moved (killed " first ")"; if (bad) { print bad; exit 1 } }' ||
	fail "Process(sdburn$u) across the move (above)"

kill -TERM "$svc"
wait "$svc"
rc=$?
svc=""
[ $rc -eq 0 ] || fail "perflib-sysd exit $rc on SIGTERM: $(cat "$work/svc.out")"
echo "perflib-sysd counters: ok"
