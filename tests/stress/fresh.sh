#!/bin/sh
# SPDX-License-Identifier: MIT
# fresh.sh - `make check` as a new user runs it, again and again: each run clones the commit
# into a new directory (no build output, no pins, nothing left by an earlier run), puts the
# project's ../shared beside the clone and runs `PERFLIB_REQUIRE_BPF=1 make check` there, with
# one busy loop per core beside every odd run (issue 29: a fresh clone's first `make check`
# failed once on a loaded machine, and a check that fails rarely shows only across many runs).
# Every run is made, whatever the one before gave; each prints one line, and a failing run's
# test logs are kept.
#
#   sh tests/stress/fresh.sh                  (make check-fresh; FRESH_RUNS=20 FRESH_REV=HEAD)
#
# Environment: FRESH_RUNS (runs, 20), FRESH_REV (the commit, HEAD), FRESH_DIR (where clones and
# logs go, a new directory under /tmp), FRESH_BUSY (0: no busy loops at all).
# Exit: 0 every run passed, 1 one failed, 77 not root (make check installs packages as root).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
runs=${FRESH_RUNS:-20}
busy_on=${FRESH_BUSY:-1}
if [ "$(id -u)" != 0 ]; then
	echo "fresh.sh: needs root, as make check on a fresh machine does"
	exit 77
fi
case $runs in
'' | *[!0-9]*)
	echo "fresh.sh: FRESH_RUNS must be a count: $runs"
	exit 1
	;;
esac
rev=$(git -C "$top" rev-parse -q --verify "${FRESH_REV:-HEAD}^{commit}") || {
	echo "fresh.sh: no such commit: ${FRESH_REV:-HEAD}"
	exit 1
}
shared=$(cd "$top/.." && pwd)/shared
[ -d "$shared" ] || {
	echo "fresh.sh: $shared is missing (make check reads the spec's manifests there)"
	exit 1
}
dir=${FRESH_DIR:-$(mktemp -d /tmp/perflib-fresh.XXXXXX)}
mkdir -p "$dir" && ln -sfn "$shared" "$dir/shared" || exit 1
echo "fresh.sh: $runs fresh-clone runs of $(git -C "$top" log -1 --format='%h %s' "$rev" |
	cut -c1-60) in $dir"

# shellcheck source=tests/lib/busy.sh
. "$top/tests/lib/busy.sh"
run=""
trap 'busy_stop; [ -z "$run" ] || kill "$run" 2>/dev/null; exit 1' INT TERM

failed=0 i=0
while [ "$i" -lt "$runs" ]; do
	i=$((i + 1))
	clone=$dir/perflib-bpf
	rm -rf "$clone"
	if ! git clone -q "$top" "$clone" || ! git -C "$clone" checkout -q "$rev"; then
		echo "fresh.sh: cannot clone $top"
		exit 1
	fi
	with=idle
	if [ "$busy_on" != 0 ] && [ $((i % 2)) = 1 ]; then
		with="busy loops on $cores cores"
		busy_start
	fi
	start=$(date +%s)
	# in the background: a shell runs its traps only between commands, and wait is one
	(cd "$clone" && PERFLIB_REQUIRE_BPF=1 exec make check) >"$dir/run$i.log" 2>&1 &
	run=$!
	wait "$run"
	rc=$?
	run=""
	busy_stop
	result=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$dir/run$i.log" | tail -1)
	if [ "$rc" = 0 ]; then
		echo "ok    run $i ($with, $(($(date +%s) - start))s): $result"
	else
		failed=$((failed + 1))
		cp -r "$clone/.output/test-logs" "$dir/fail$i" 2>/dev/null
		echo "FAIL  run $i ($with, $(($(date +%s) - start))s, exit $rc): ${result:-no result}"
		grep -E '^FAIL' "$dir/run$i.log" | sed 's/^/      /'
		echo "      log: $dir/run$i.log, test logs: $dir/fail$i"
	fi
done
rm -rf "$dir/perflib-bpf"
echo "$((runs - failed)) of $runs fresh-clone runs passed (logs in $dir)"
[ "$failed" = 0 ]
