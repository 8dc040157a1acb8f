#!/bin/sh
# SPDX-License-Identifier: MIT
# test_remote_parallel.sh - several machines at once and one request per sample (issue 30,
# docs/REMOTE.md): two perflib-exporters on 127.0.0.2 and 127.0.0.3, each also behind a TCP
# proxy of tests/tools/remote_parallel_check.py that counts data requests and can hold
# them unanswered; a PDH query over all of them and this machine, collected while two
# machines never answer; remote name tables (PdhLookupPerf*); relog of a log typeperf
# recorded from three machines. Exit 0 pass, 77 skip, 1 fail.
here=$(cd "$(dirname "$0")/../.." && pwd)
data="$here/tests/data/exporter"
. "$data/lib.sh"

exp_preflight
trap exp_remote_cleanup EXIT
trap 'exit 1' INT TERM HUP
# a machine that never answers costs 4 s
exp_remote_check remote_parallel_check.py PERFLIB_REMOTE_CONFIG="" PERFLIB_REMOTE_TIMEOUT=4 ||
	exp_fail "remote parallel checks failed"
echo "ok: machines collected at once, one request per sample, remote name tables"
