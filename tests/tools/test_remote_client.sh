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
trap exp_remote_cleanup EXIT
trap 'exit 1' INT TERM HUP
exp_remote_check remote_client_check.py || exp_fail "remote client checks failed"
echo "ok: the consumer API reads other machines through their exporters"
