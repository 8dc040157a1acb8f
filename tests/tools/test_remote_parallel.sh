#!/bin/sh
# SPDX-License-Identifier: MIT
# test_remote_parallel.sh - several machines at once and one request per sample (issue 30,
# docs/REMOTE.md): two perflib-exporters on 127.0.0.2 and 127.0.0.3, each also behind a TCP
# proxy of tests/tools/remote_parallel_check.py that counts data requests and can hold
# them unanswered; a PDH query over all of them and this machine, collected while two
# machines never answer; remote name tables (PdhLookupPerf*). Exit 0 pass, 77 skip, 1 fail.
here=$(cd "$(dirname "$0")/../.." && pwd)
data="$here/tests/data/exporter"
. "$data/lib.sh"

exp_preflight
ROOT_B="$EXP_ROOT-b"
ROOT_C="$EXP_ROOT-c"
cleanup() {
	rm -rf "$ROOT_B" "$ROOT_C"
	exp_cleanup
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
command -v python3 >/dev/null || exp_skip "python3 is not installed"
[ -e "$OUTPUT/libperflib-remote.so.1" ] || exp_fail "$OUTPUT/libperflib-remote.so.1 is not built"
mkdir "$ROOT_B" "$ROOT_C" || exp_fail "mkdir $ROOT_B $ROOT_C"

asan=$(ldd "$OUTPUT/libperflib.so" 2>/dev/null | awk '/libasan/ { print $3 }')
[ -z "$asan" ] || export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# no settings of the user running the test; a silent machine costs 4 s
HOME="$EXP_TMP" XDG_CONFIG_HOME="" PERFLIB_REMOTE_CONFIG="" PERFLIB_REMOTE_TIMEOUT=4 \
	LD_PRELOAD="$asan" LD_LIBRARY_PATH="$OUTPUT" PYTHONPATH="$here/tests/tools" \
	timeout 300 python3 "$here/tests/tools/remote_parallel_check.py" run "$OUTPUT" \
	"$EXP_ROOT" "$ROOT_B" "$ROOT_C" "$EXP_TMP" || exp_fail "remote parallel checks failed"
echo "ok: machines collected at once, one request per sample, remote name tables"
