#!/bin/sh
# SPDX-License-Identifier: MIT
# test_run.sh - the test runner (tests/run.sh) on made-up tests in a scratch tree: how it
# counts cmocka binaries, scripts that pass, fail, skip (exit 77) or skip a part ("SKIP:"
# lines), a test that hangs past TEST_TIMEOUT, and the folders TEST_DIRS names.
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

mkdir -p "$tmp/out/tests/a" "$tmp/tests/a" "$tmp/tests/b"
# a cmocka-like binary: 3 passed, 1 skipped
cat >"$tmp/out/tests/a/test_cm" <<'X'
#!/bin/sh
echo "[==========] tests: Running 4 test(s)."
echo "[  PASSED  ] 3 test(s)."
echo "[  SKIPPED ] 1 test(s), listed below:"
exit 0
X
printf '#!/bin/sh\nexit 0\n' >"$tmp/tests/a/test_pass.sh"
printf '#!/bin/sh\necho "SKIP: part one (no widget)"\necho "SKIP: part two"\nexit 0\n' \
	>"$tmp/tests/a/test_part.sh"
printf '#!/bin/sh\necho "SKIP: no gadget"\nexit 77\n' >"$tmp/tests/a/test_skip.sh"
printf '#!/bin/sh\necho broken\nexit 3\n' >"$tmp/tests/b/test_fail.sh"
printf '#!/bin/sh\nsleep 30\n' >"$tmp/tests/b/test_hang.sh"
chmod +x "$tmp/out/tests/a/test_cm"

run() { # $1 = TEST_DIRS
	(cd "$tmp" && OUTPUT="$tmp/out" TEST_DIRS="$1" TEST_TIMEOUT=2 sh "$top/tests/run.sh") \
		>"$tmp/run.out" 2>&1
}
run a
rc=$?
[ $rc = 0 ] || fail "folder a: exit $rc"
tail -1 "$tmp/run.out" | grep -qx '5 passed, 0 failed, 4 skipped' ||
	fail "folder a: $(tail -1 "$tmp/run.out")"
grep -q '^ok    a/test_part.sh ([0-9]*s), 2 part(s) skipped:' "$tmp/run.out" &&
	grep -q '^      part one (no widget)$' "$tmp/run.out" || fail "partial skips not listed"
grep -q '^skip  a/test_skip.sh: SKIP: no gadget' "$tmp/run.out" || fail "skip not reported"

run b
rc=$?
[ $rc != 0 ] || fail "folder b: exit 0 with failures"
tail -1 "$tmp/run.out" | grep -qx '0 passed, 2 failed, 0 skipped' ||
	fail "folder b: $(tail -1 "$tmp/run.out")"
grep -q '^FAIL  b/test_hang.sh (timed out' "$tmp/run.out" || fail "hung test not reported"
grep -q '^failed: b/test_fail.sh b/test_hang.sh' "$tmp/run.out" || fail "failures not listed"

if [ $fails != 0 ]; then
	cat "$tmp/run.out"
	exit 1
fi
echo "ok: the runner's counts, skips, partial skips, timeouts and folders"
