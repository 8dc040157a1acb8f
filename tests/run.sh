#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - run every test binary and shell test, folder by folder, then print one summary
# line: N passed, N failed, N skipped
# The folders say what their tests need (docs/ARCHITECTURE.md, "Tests"): unit/ nothing,
# bpf/ BPF maps and programs, model/ spin, build/ the built tree, tools/ the built tools and
# BPF, ports/ compilers and BPF, stress/ BPF and time. cmocka binaries report per test; a
# binary or script exiting 77 counts as one skip; a script that passes but skipped a part
# says so on a line "SKIP: <reason>", and each such line counts as a skip.
# Environment: OUTPUT (build dir, absolute), SHARED (../shared, absolute), TEST_DIRS (the
# folders to run, all by default), TEST_TIMEOUT (seconds a test may run, 900: one that runs
# longer is hung, and fails with its log kept; the slowest takes about a minute on a loaded
# 2-core machine).
: "${OUTPUT:?}"
test_timeout=${TEST_TIMEOUT:-900}
export OUTPUT SHARED TOOLS="$OUTPUT/tools"
# bpftool, mount and su live in /usr/sbin and /sbin on Debian
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
passed=0 failed=0 skipped=0 failures=""
# the tests pin maps under /sys/fs/bpf: mount bpffs when root and it is missing
if [ "$(id -u)" = 0 ] && ! mountpoint -q /sys/fs/bpf 2>/dev/null; then
	mount -t bpf bpf /sys/fs/bpf || echo "warning: cannot mount bpffs on /sys/fs/bpf" >&2
fi
log="$OUTPUT/test-logs"
rm -rf "$log" && mkdir -p "$log"

sum_of() { # $1 = cmocka status word, $2 = log file
	sed -n "s/^\[  $1 *\] \([0-9]*\) test.*/\1/p" "$2" | awk '{s+=$1} END {print s+0}'
}

run_one() { # $1 = name, rest = command
	name=$1; shift
	out="$log/$(echo "$name" | tr '/ ' '__').log"
	start=$(date +%s)
	CMOCKA_MESSAGE_OUTPUT=stdout timeout -k 10 "$test_timeout" "$@" >"$out" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "timed out after ${test_timeout}s: hung (TEST_TIMEOUT)" >>"$out"
		failed=$((failed + 1)); failures="$failures $name"
		echo "FAIL  $name (timed out after ${secs}s)"; tail -20 "$out" | sed 's/^/      /'
		return
	fi
	if grep -q '^\[==========\]' "$out"; then
		p=$(sum_of PASSED "$out"); f=$(sum_of FAILED "$out"); s=$(sum_of SKIPPED "$out")
		passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
		set -- "$p" "$f"
		if [ "$rc" -ne 0 ] && [ "$2" -eq 0 ]; then
			# crashed or exited non-zero without a cmocka failure line
			failed=$((failed + 1)); failures="$failures $name"
			echo "FAIL  $name (exit $rc, ${secs}s)"; tail -20 "$out" | sed 's/^/      /'
		elif [ "$2" -ne 0 ]; then
			failures="$failures $name"
			echo "FAIL  $name ($1 passed, $2 failed, ${secs}s)"
			grep -E '^\[  (FAILED|ERROR)|^\[  FAILED|error:|Failure' "$out" | head -20 | sed 's/^/      /'
		else
			echo "ok    $name ($1 passed, ${secs}s)"
		fi
	elif [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		parts=$(grep -c '^SKIP: ' "$out")
		if [ "$parts" -eq 0 ]; then
			echo "ok    $name (${secs}s)"
		else
			skipped=$((skipped + parts))
			echo "ok    $name (${secs}s), $parts part(s) skipped:"
			sed -n 's/^SKIP: /      /p' "$out"
		fi
	elif [ "$rc" -eq 77 ]; then
		skipped=$((skipped + 1)); echo "skip  $name: $(tail -1 "$out")"
	else
		failed=$((failed + 1)); failures="$failures $name"
		echo "FAIL  $name (exit $rc, ${secs}s)"; tail -30 "$out" | sed 's/^/      /'
	fi
}

for dir in ${TEST_DIRS:-unit bpf model build tools ports stress}; do
	for t in "$OUTPUT/tests/$dir"/test_*; do
		[ -x "$t" ] || continue
		run_one "$dir/$(basename "$t")" "$t"
	done
	for t in "tests/$dir"/test_*.sh; do
		[ -f "$t" ] || continue
		run_one "$dir/$(basename "$t")" sh "$t"
	done
done

echo
[ -z "$failures" ] || echo "failed:$failures (logs in $log)"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
