#!/bin/sh
# SPDX-License-Identifier: MIT
# test_remote_client.sh - the consumer API reaching other machines (issue 30, docs/REMOTE.md
# "The client"): two perflib-exporters on 127.0.0.2 and 127.0.0.3, each with the test
# provider under its own PERFLIB_ROOT, and a client (tests/tools/remote_client_check.py,
# libperflib.so through ctypes) whose own root is empty: every call gives the bytes of the
# same call made on the server's side; sizes, handles, a kept connection, an instance that
# goes and comes back, a server killed and restarted in the middle of a query, refused,
# silent and unknown machines, and this machine's names that never leave the process.
# Exit 0 pass, 77 skip, 1 fail.
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
# no settings of the user running the test
HOME="$EXP_TMP" XDG_CONFIG_HOME="" LD_PRELOAD="$asan" LD_LIBRARY_PATH="$OUTPUT" \
	timeout 300 python3 "$here/tests/tools/remote_client_check.py" run "$OUTPUT" \
	"$EXP_ROOT" "$ROOT_B" "$ROOT_C" "$EXP_TMP" || exp_fail "remote client checks failed"
echo "ok: the consumer API reads other machines through their exporters"
