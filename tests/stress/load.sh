#!/bin/sh
# SPDX-License-Identifier: MIT
# load.sh - the multi-process tests again and again on a loaded machine: one busy loop per
# core for the whole run, so that every process is preempted at any instruction, where an
# idle machine lets each run its steps in one go. Races between processes that grow,
# retire, claim and reap storage show here (issue 29: a create failing once in 30 runs
# under load, never on an idle machine). Any failure fails the run; its log is kept.
#
#   OUTPUT=<build dir> sh tests/stress/load.sh        (make check-load; CI runs it in both builds)
#
# Environment: OUTPUT (build dir, absolute), LOAD_RUNS (runs of the quick tests, 30),
# LOAD_SLOW_RUNS (runs of the slow ones, 3), LOAD_RETIRE (grow/retire race rounds of the
# stress program, 200).
# Exit: 0 passed, 1 failed, 77 skipped (not root: the tests pin maps and attach programs).
: "${OUTPUT:?}"
runs=${LOAD_RUNS:-30}
slow_runs=${LOAD_SLOW_RUNS:-3}
retire=${LOAD_RETIRE:-200}
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin" TOOLS="$OUTPUT/tools"
if [ "$(id -u)" != 0 ]; then
	echo "load.sh: needs root (the tests pin maps and attach BPF programs)"
	exit 77
fi
if ! mountpoint -q /sys/fs/bpf 2>/dev/null; then
	mount -t bpf bpf /sys/fs/bpf || exit 1
fi
log="$OUTPUT/load-logs"
rm -rf "$log" && mkdir -p "$log"

# one busy loop per core, stopped however this script ends
# shellcheck source=tests/lib/busy.sh
. "$(dirname "$0")/../lib/busy.sh"
busy_start

failed=0 total=0
# repeat <runs> <name> <command...>: the command <runs> times; a failure's log is kept
repeat() {
	n=$1 name=$2
	shift 2
	fails=0 r=0 start=$(date +%s)
	while [ "$r" -lt "$n" ]; do
		r=$((r + 1))
		out="$log/$name.$r.log"
		if CMOCKA_MESSAGE_OUTPUT=stdout "$@" >"$out" 2>&1; then
			rm -f "$out"
		else
			fails=$((fails + 1))
		fi
	done
	total=$((total + n))
	failed=$((failed + fails))
	if [ "$fails" -eq 0 ]; then
		echo "ok    $name x$n under load ($(($(date +%s) - start))s)"
	else
		echo "FAIL  $name: $fails of $n runs failed under load (logs: $log/$name.*.log)"
		for f in "$log/$name".*.log; do
			grep -E '^\[  (FAILED|ERROR) |error:|runtime error|ERROR: AddressSanitizer' "$f" |
				head -5 | sed 's/^/      /'
		done
	fi
}

# bin NAME: the test binary, in the folder of what it needs (tests/unit or tests/bpf)
bin() {
	if [ -x "$OUTPUT/tests/bpf/$1" ]; then echo "$OUTPUT/tests/bpf/$1"; else echo "$OUTPUT/tests/unit/$1"; fi
}

echo "load: $cores busy loops; the multi-process tests $runs times (slow ones $slow_runs), the grow/retire race $retire rounds"
# growth, retirement, lifetime, the classes' storage, claims and the index across processes
for t in growth shrink lifetime classes store slot index; do
	repeat "$runs" "test_$t" "$(bin "test_$t")"
done
# the exit reaper and the provider API's multi-process tests take seconds each; per-CPU
# counters' threads, processes and kills too
for t in reaper provider pidns percpu; do
	repeat "$slow_runs" "test_$t" "$(bin "test_$t")"
done
# the stress program's grow/retire race: creates that fail, crashes, wrong listings
repeat 1 "stress-retire" "$OUTPUT/stress/stress" --strict --kills 0 --corrupt 0 --race 0 \
	--grow 0 --retire "$retire"
busy_stop
echo
echo "load: $total runs, $failed failed"
[ "$failed" -eq 0 ]
