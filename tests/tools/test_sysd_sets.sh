#!/bin/sh
# SPDX-License-Identifier: MIT
# test_sysd_sets.sh - the device and cgroup sets of perflib-sysd end to end, in one typeperf
# run next to the issue's four counters, compared with /proc and /sys over the same interval
# (rates: /proc/net/dev and cpu.stat polled every 50 ms, read at the first and last sample's
# timestamps):
#   - a cgroup this test creates (unified hierarchy) with a busy loop in it: its instance
#     appears, \Cgroup(<path>)\% Processor Time agrees with the cgroup's cpu.stat usage_usec
#     (15 points), and the instance goes when the cgroup is removed;
#   - a loopback TCP transfer this test makes: \Network Interface(lo)\Bytes Total/sec agrees
#     with /proc/net/dev's lo rx+tx bytes over the same window (30 %; exactly in
#     test_sysd_counters.sh);
#   - a file this test writes with fsync: \PhysicalDisk(<disk>)\Disk Write Bytes/sec agrees
#     with what the disk's /sys/block/<disk>/stat says it wrote over the same window (30 %),
#     \LogicalDisk(<mount>)\Disk Write Bytes/sec is no more; both at least 1 MB; % Free Space
#     and Free Megabytes agree with statfs (1 %);
#   - a veth pair this test adds appears as two Network Interface instances, and goes;
#   - a loop device and a file system on it, attached and mounted after the start, appear as
#     PhysicalDisk and LogicalDisk instances counting a write made on them, and go when
#     unmounted and detached (details at that step).
# The typeperf interval is 1 s, -sc 4: the rates of samples 2-4 are used.
# Environment: TOOLS (built tools). Exit 0 pass, 77 skip, other fail.
: "${TOOLS:?}"
S="$TOOLS/perflib-sysd"
TP="$TOOLS/typeperf"

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/sysd_lib.sh"

[ -x "$S" ] && [ -x "$TP" ] || skip "perflib-sysd or typeperf is not built"
[ "$(id -u)" = 0 ] || skip "perflib-sysd needs root"
command -v python3 >/dev/null 2>&1 || skip "no python3 (the loopback transfer)"
command -v bpftool >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin"

PERFLIB_ROOT=/sys/fs/bpf/perflib-sysd-sets-$$
export PERFLIB_ROOT
mkdir -p "$PERFLIB_ROOT" || skip "no bpffs at /sys/fs/bpf"
work=$(mktemp -d)
# the file goes on a block device: the repository's file system (not /tmp, often tmpfs)
data=$(mktemp -d "$PWD/.sysd-sets.XXXXXX")
cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
cg=""
veth=""
pids=""
svc=""
loop=""
mounted=""
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	[ -n "$mounted" ] && umount "$mounted" 2>/dev/null
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
	[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
	[ -n "$veth" ] && ip link del "$veth" 2>/dev/null
	[ -n "$svc" ] && kill -TERM "$svc" 2>/dev/null && wait "$svc"
	"$S" stop >/dev/null 2>&1
	rm -rf "$PERFLIB_ROOT" "$work" "$data"
}
trap cleanup EXIT INT TERM

[ -n "$cg2" ] || skip "no cgroup2 mount"
sysd_start

listed() { "$TP" -qx "$1" 2>/dev/null | grep -qF "\\$1($2)\\"; }

# a cgroup with a busy loop in it; its instance name is the path with '\' for '/'
name="sdsets$$"
cg="$cg2/$name"
mkdir "$cg" || fail "mkdir $cg"
sleep 0.2
listed Cgroup "\\$name" || fail "no Cgroup(\\$name) after mkdir"
sh -c 'while :; do :; done' &
busy=$!
pids="$pids $busy"
echo "$busy" >"$cg/cgroup.procs" || fail "cannot move the busy loop into $cg"

# a veth pair comes and goes
if command -v ip >/dev/null 2>&1 && ip link add "sdv$$" type veth peer name "sdw$$" 2>/dev/null; then
	veth="sdv$$"
	sleep 0.3
	listed "Network Interface" "sdv$$" || fail "no Network Interface(sdv$$)"
	listed "Network Interface" "sdw$$" || fail "no Network Interface(sdw$$)"
	ip link del "sdv$$"
	veth=""
	sleep 0.3
	listed "Network Interface" "sdv$$" && fail "Network Interface(sdv$$) still listed"
	listed "Network Interface" "sdw$$" && fail "Network Interface(sdw$$) still listed"
else
	echo "note: cannot add a veth pair here: device arrival not checked"
fi

# the disk and mount point of the data directory
src=$(stat -c '%Hd:%Ld %m' "$data")
devnum=${src%% *}
mnt=${src#* }
disk=""
if [ -n "$devnum" ] && [ -e "/sys/dev/block/$devnum" ]; then
	disk=$(basename "$(readlink -f "/sys/dev/block/$devnum")")
	[ -e "/sys/dev/block/$devnum/partition" ] &&
		disk=$(basename "$(readlink -f "/sys/dev/block/$devnum/..")")
fi
[ -n "$disk" ] && listed PhysicalDisk "$disk" || disk=""
mntname=$(echo "$mnt" | tr '/' '\\')
[ -n "$disk" ] || echo "note: $data is not on a listed disk: disk counters not checked"

# the workload, running through the whole typeperf run: loopback transfer, file + fsync
python3 - "$work/net.go" <<'EOF' &
import os, socket, sys, threading, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
def rx():
    c, _ = s.accept()
    while c.recv(1 << 16):
        pass
t = threading.Thread(target=rx)
t.start()
c = socket.create_connection(s.getsockname())
buf = b"x" * (1 << 18)
end = time.time() + 600  # until typeperf is done (killed then): its start may take long
while time.time() < end:
    c.sendall(buf)
    if not os.path.exists(sys.argv[1]):
        open(sys.argv[1], "w").close()  # the transfer runs
    time.sleep(0.01)
c.close()
t.join()
EOF
lo_tx=$!
pids="$pids $lo_tx"
size=$((64 * 1048576))
# the transfer running before typeperf starts (python may take seconds to start when the
# machine is loaded: typeperf's window once fell before it, 0 bytes both ways)
i=0
until [ -e "$work/net.go" ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "the loopback transfer did not start in 60 s"
	sleep 0.1
done
# the file is written once typeperf has its first sample (zeros: no CPU to make them, so
# the write is not held back by a loaded machine's queue as /dev/urandom's 64 MB once were,
# until after typeperf's run)
(until grep -q '^"[0-9]' "$work/tp.out" 2>/dev/null; do sleep 0.05; done
	dd if=/dev/zero of="$data/f" bs=1M count=64 conv=fsync 2>/dev/null) &
pids="$pids $!"

lo() { awk '$1 == "lo:" { printf "%.0f\n", $2 + $10 }' /proc/net/dev; }
wr() { [ -n "$disk" ] && awk '{ printf "%.0f\n", $7 * 512 }' "/sys/block/$disk/stat" || echo 0; }
cgu() { awk '/^usage_usec/ { print $2 }' "$cg/cpu.stat"; }
w0=$(wr)
# /proc/net/dev and cpu.stat every 50 ms through the typeperf run, with the time: the rates
# are compared over the samples' own window (the first to the last timestamp typeperf
# prints), not over the whole run, whose start-up a loaded machine stretches
(while :; do echo "$(date +%s.%N) $(lo) $(cgu) $(wr)"; sleep 0.05; done) >"$work/poll" &
poller=$!
pids="$pids $poller"
set -- "\\Processor(_Total)\\% Processor Time" "\\Process(*)\\% Processor Time" \
	"\\Memory\\Available Bytes" "\\System\\Context Switches/sec" \
	"\\Cgroup(\\$name)\\% Processor Time" "\\Network Interface(lo)\\Bytes Total/sec"
[ -n "$disk" ] && set -- "$@" "\\PhysicalDisk($disk)\\Disk Write Bytes/sec" \
	"\\LogicalDisk($mntname)\\Disk Write Bytes/sec" "\\LogicalDisk($mntname)\\% Free Space" \
	"\\LogicalDisk($mntname)\\Free Megabytes"
"$TP" "$@" -sc 4 >"$work/tp.out" 2>&1 &
tp=$!
wait $tp || fail "typeperf: $(cat "$work/tp.out")"
out=$(cat "$work/tp.out")
w1=$(wr)
kill "$lo_tx" 2>/dev/null
# a poll after typeperf's last sample (a round of the loop takes up to 0.5 s when loaded)
t1=$(date +%s.%N)
i=0
until awk -v t="$t1" '$1 > t { f = 1 } END { exit !f }' "$work/poll"; do
	i=$((i + 1))
	[ $i -lt 1200 ] || fail "the poller logged nothing in 60 s"
	sleep 0.05
done
kill "$poller" 2>/dev/null
wait "$poller" 2>/dev/null
printf '%s\n' "$out" | grep '^"[0-9]' | cut -d, -f1
# the column of a counter (by its path's end), and the mean / sum of samples 2-4
colno() { printf '%s\n' "$out" | grep '^"(PDH-CSV' | tr ',' '\n' | grep -nF "$1\"" | head -1 | cut -d: -f1; }
mean() { c=$(colno "$1"); printf '%s\n' "$out" | grep '^"[0-9]' | tail -3 | cut -d, -f"$c" | tr -d '"\r' |
	awk '{ s += $1 } END { print s / NR }'; }
sum() { c=$(colno "$1"); printf '%s\n' "$out" | grep '^"[0-9]' | tail -3 | cut -d, -f"$c" | tr -d '"\r' |
	awk '{ s += $1 } END { print s }'; }
last() { c=$(colno "$1"); printf '%s\n' "$out" | grep '^"[0-9]' | tail -1 | cut -d, -f"$c" | tr -d '"\r'; }
# the window of samples 2-4: from sample 1's timestamp to sample 4's (typeperf's local time)
stamp() { date -d "$(printf '%s\n' "$out" | grep '^"[0-9]' | sed -n "$1p" | cut -d, -f1 | tr -d '"')" +%s.%N; }
ts1=$(stamp 1)
ts4=$(stamp 4)
# field $2 of the last poll at or before time $1: lo bytes (2) or cgroup usage_usec (3)
polled() { awk -v t="$1" -v f="$2" '$1 <= t { v = $f } END { print v }' "$work/poll"; }
# field $2 of the first poll at or after time $1 (disk bytes written: 4)
polled_after() { awk -v t="$1" -v f="$2" '$1 >= t { print $f; exit }' "$work/poll"; }
wdt=$(awk -v a="$ts1" -v b="$ts4" 'BEGIN { print b - a }')
awk -v d="$wdt" 'BEGIN { exit !(d > 1) }' || fail "typeperf's samples span $wdt s"

tp_cg=$(mean "Cgroup(\\$name)\\% Processor Time")
proc_cg=$(awk -v a="$(polled "$ts1" 3)" -v b="$(polled "$ts4" 3)" -v t="$wdt" \
	'BEGIN { print (b - a) / 10000 / t }')
echo "cgroup: typeperf $tp_cg%, cpu.stat $proc_cg%"
within "$tp_cg" "$proc_cg" 15 || fail "Cgroup % Processor Time $tp_cg vs cpu.stat $proc_cg"
# that it ran at all, so the comparison above compared something: an idle cgroup reads 0;
# the loop competes with the machine's load (8.6% of a CPU beside two busy loops and two
# builds on two cores), so no share of the CPU is promised
awk -v v="$tp_cg" 'BEGIN { exit !(v >= 1) }' || fail "the cgroup's busy loop shows $tp_cg%"

tp_lo=$(mean "Network Interface(lo)\\Bytes Total/sec")
# the bytes of samples 2-4 (three rates over about 1 s each) against what /proc/net/dev counted
# between the polls inside and those outside the window (a poll takes up to 0.5 s on a loaded
# machine: a rate over the polls nearest to the samples was 49 % off once), 30 % either way
tp_lo_b=$(sum "Network Interface(lo)\\Bytes Total/sec")
lo_b=$(awk -v a="$(polled_after "$ts1" 2)" -v b="$(polled "$ts4" 2)" 'BEGIN { printf "%.0f", b - a }')
hi_b=$(awk -v a="$(polled "$ts1" 2)" -v b="$(polled_after "$ts4" 2)" 'BEGIN { printf "%.0f", b - a }')
echo "lo: typeperf $tp_lo B/s, $tp_lo_b bytes in samples 2-4; /proc/net/dev $lo_b..$hi_b"
awk -v v="$tp_lo_b" -v a="$lo_b" -v b="$hi_b" 'BEGIN { exit !(v >= a * 0.7 && v <= b * 1.3) }' ||
	fail "Network Interface(lo) Bytes Total/sec: $tp_lo_b bytes vs /proc/net/dev $lo_b..$hi_b"
# that the transfer ran (it gets what the machine leaves it: 0.3 MB/s seen with 17 tasks
# queued on 2 CPUs; the byte count itself is checked exactly by test_sysd_counters.sh)
awk -v v="$tp_lo" 'BEGIN { exit !(v > 10000) }' || fail "no loopback transfer seen ($tp_lo)"

if [ -n "$disk" ]; then
	pd=$(sum "PhysicalDisk($disk)\\Disk Write Bytes/sec")
	ld=$(sum "LogicalDisk($mntname)\\Disk Write Bytes/sec")
	# what /sys/block/<disk>/stat says was written between samples 1 and 4: at least what
	# the polls after sample 1 and before sample 4 saw, at most what those before and after
	# saw (both count a request at its completion); 30 % either way (the three rates'
	# intervals are taken as 1 s). Whether the 64 MB land in the window depends on the load
	# (once they all came after typeperf's run): at least 1 MB must, so that something was
	# compared (the machine's other writes count too).
	lo_w=$(awk -v a="$(polled_after "$ts1" 4)" -v b="$(polled "$ts4" 4)" 'BEGIN { printf "%.0f", b - a }')
	hi_w=$(awk -v a="$(polled "$ts1" 4)" -v b="$(polled_after "$ts4" 4)" 'BEGIN { printf "%.0f", b - a }')
	echo "disk $disk: typeperf $pd bytes in 3 s ($mnt: $ld), /sys/block stat $lo_w..$hi_w"
	awk -v v="$pd" -v a="$lo_w" -v b="$hi_w" 'BEGIN { exit !(v >= a * 0.7 && v <= b * 1.3 && v >= 1048576) }' ||
		fail "PhysicalDisk($disk) wrote $pd: /sys/block $lo_w..$hi_w"
	awk -v v="$ld" -v b="$hi_w" 'BEGIN { exit !(v <= b * 1.3 && v >= 1048576) }' ||
		fail "LogicalDisk($mnt) wrote $ld: /sys/block $lo_w..$hi_w"
	free_tp=$(last "LogicalDisk($mntname)\\Free Megabytes")
	pct_tp=$(last "LogicalDisk($mntname)\\% Free Space")
	set -- $(stat -f -c '%a %b %S' "$data")
	free_fs=$(awk -v a="$1" -v s="$3" 'BEGIN { print int(a * s / 1048576) }')
	pct_fs=$(awk -v a="$1" -v b="$2" 'BEGIN { print 100 * a / b }')
	echo "free: typeperf $free_tp MB $pct_tp%, statfs $free_fs MB $pct_fs%"
	within "$free_tp" "$free_fs" "$(awk -v v="$free_fs" 'BEGIN { print v * 0.01 + 2 }')" ||
		fail "Free Megabytes $free_tp vs statfs $free_fs"
	within "$pct_tp" "$pct_fs" 1 || fail "% Free Space $pct_tp vs statfs $pct_fs"
fi

# the issue's four counters were there and read
for c in "Processor(_Total)\\% Processor Time" "Memory\\Available Bytes" \
	"System\\Context Switches/sec"; do
	[ -n "$(colno "$c")" ] || fail "no column for $c"
done

# the cgroup goes: its instance goes
kill -9 "$busy"
wait "$busy" 2>/dev/null
sleep 0.2
rmdir "$cg" || fail "rmdir $cg"
cg=""
sleep 0.2
listed Cgroup "\\$name" && fail "Cgroup(\\$name) still listed after rmdir"

# a disk and a mount that come after the start: a loop device this test attaches appears as a
# PhysicalDisk instance, its ext4 file system mounted as a LogicalDisk instance (name: the
# mount point with '\' for '/'); an 8 MB write + fsync on it, started after typeperf's first
# sample, shows in both within [95 % of the file (the sum of three rates over intervals a
# little longer than 1 s), /sys/block/<loop>/stat's written bytes + 30 %]; Free Megabytes
# equals statfs (1 % + 2 MB); unmounted, the LogicalDisk instance goes; detached, the
# PhysicalDisk instance goes (each within 3 s: uevents and mountinfo, not polling)
appears() { # appears SET NAME [gone]: wait up to 3 s for the instance to be (or not be) listed
	i=0
	while [ $i -lt 30 ]; do
		if listed "$1" "$2"; then [ -z "${3:-}" ] && return 0; else [ -n "${3:-}" ] && return 0; fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
if command -v losetup >/dev/null 2>&1 && command -v mkfs.ext4 >/dev/null 2>&1 &&
	truncate -s 64M "$work/img" && loop=$(losetup -f --show "$work/img" 2>/dev/null); then
	ln=$(basename "$loop")
	appears PhysicalDisk "$ln" || fail "no PhysicalDisk($ln) after losetup"
	mkfs.ext4 -q -F "$loop" >/dev/null 2>&1 || fail "mkfs.ext4 $loop"
	mkdir "$work/mnt"
	mount "$loop" "$work/mnt" || fail "mount $loop"
	mounted="$work/mnt"
	lname=$(echo "$work/mnt" | tr '/' '\\')
	appears LogicalDisk "$lname" || fail "no LogicalDisk($lname) after mount"
	lw() { awk '{ printf "%.0f\n", $7 * 512 }' "/sys/block/$ln/stat"; }
	w0=$(lw)
	"$TP" "\\PhysicalDisk($ln)\\Disk Write Bytes/sec" "\\PhysicalDisk($ln)\\Disk Writes/sec" \
		"\\LogicalDisk($lname)\\Disk Write Bytes/sec" "\\LogicalDisk($lname)\\Free Megabytes" \
		-sc 4 >"$work/loop.out" 2>&1 &
	tp=$!
	# the write starts once typeperf has its first sample: all of it falls in samples 2-4
	i=0
	while ! grep -q '^"[0-9]' "$work/loop.out" && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	dd if=/dev/urandom of="$work/mnt/f" bs=1M count=8 conv=fsync 2>/dev/null
	wait $tp || fail "typeperf on the loop device: $(cat "$work/loop.out")"
	w1=$(lw)
	out=$(cat "$work/loop.out")
	printf '%s\n' "$out"
	pd=$(sum "PhysicalDisk($ln)\\Disk Write Bytes/sec")
	pw=$(sum "PhysicalDisk($ln)\\Disk Writes/sec")
	ld=$(sum "LogicalDisk($lname)\\Disk Write Bytes/sec")
	free_tp=$(last "LogicalDisk($lname)\\Free Megabytes")
	sys_w=$(awk -v a="$w0" -v b="$w1" 'BEGIN { printf "%.0f", b - a }')
	set -- $(stat -f -c '%a %b %S' "$work/mnt")
	free_fs=$(awk -v a="$1" -v s="$3" 'BEGIN { print int(a * s / 1048576) }')
	printf '%s\n' "$ln: typeperf $pd bytes, $pw writes in 3 s ($lname: $ld), /sys/block stat $sys_w; free $free_tp MB, statfs $free_fs MB"
	size=$((8 * 1048576))
	# the sum of three 1 s rates: the bytes over intervals a little longer than 1 s
	awk -v v="$pd" -v s="$size" -v w="$sys_w" 'BEGIN { exit !(v >= s * 0.95 && v <= w * 1.3) }' ||
		fail "PhysicalDisk($ln) wrote $pd: file $size, /sys/block $sys_w"
	awk -v v="$ld" -v s="$size" -v w="$sys_w" 'BEGIN { exit !(v >= s * 0.95 && v <= w * 1.3) }' ||
		fail "LogicalDisk($lname) wrote $ld: file $size, /sys/block $sys_w"
	awk -v v="$pw" 'BEGIN { exit !(v >= 1) }' || fail "PhysicalDisk($ln) shows no write operation"
	within "$free_tp" "$free_fs" "$(awk -v v="$free_fs" 'BEGIN { print v * 0.01 + 2 }')" ||
		fail "LogicalDisk($lname) Free Megabytes $free_tp vs statfs $free_fs"
	umount "$work/mnt" || fail "umount"
	mounted=""
	appears LogicalDisk "$lname" gone || fail "LogicalDisk($lname) still listed after umount"
	listed PhysicalDisk "$ln" || fail "PhysicalDisk($ln) went with the unmount"
	losetup -d "$loop" || fail "losetup -d $loop"
	loop=""
	appears PhysicalDisk "$ln" gone || fail "PhysicalDisk($ln) still listed after losetup -d"
else
	echo "note: no loop device here (losetup, mkfs.ext4 or /dev/loop-control missing): disks and mounts added after the start not checked"
fi

kill -TERM "$svc"
wait "$svc"
rc=$?
svc=""
[ $rc -eq 0 ] || fail "perflib-sysd exit $rc on SIGTERM: $(cat "$work/svc.out")"
# the root's exit dispatcher (exit-reaper/) stays by design; the cleanup removes it
[ -z "$(ls -A "$PERFLIB_ROOT" | grep -vx exit-reaper)" ] ||
	fail "SIGTERM left pins: $(ls -R "$PERFLIB_ROOT")"
echo "perflib-sysd sets: ok"
