#!/bin/sh
# SPDX-License-Identifier: MIT
# test_exporter_fuzz.sh - random and malformed requests at a running perflib-exporter
# (tests/tools/fuzz_http.py: request lines, paths, query strings, headers, chunking, bodies of
# PERF_COUNTER_IDENTIFIER blocks for a real query, random bytes). The exporter must keep
# answering GET /metrics, answer no malformed request with a 5xx (503 apart), log its
# refusals, stop cleanly on SIGTERM, and, in a sanitizer build (make check SANITIZE=...,
# as .ci/run does), report no sanitizer error or leak. FUZZ_SEED=N replays a run (the seed
# is printed); FUZZ_COUNT=N requests (1500). Exit 0 pass, 77 skip, 1 fail.
here=$(cd "$(dirname "$0")/../.." && pwd)
data="$here/tests/data/exporter"
. "$data/lib.sh"

exp_preflight
trap exp_cleanup EXIT
trap 'exit 1' INT TERM HUP
command -v python3 >/dev/null || exp_skip "python3 is not installed"

sanitized=no
nm "$TOOLS/perflib-exporter" 2>/dev/null | grep -q '__asan_init\|__ubsan_handle' && sanitized=yes
# a UBSan report must fail the test, not scroll by
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
exp_start_provider
exp_start_exporter
port=$(echo "$EXP_URL" | sed 's|.*:\([0-9]*\)/metrics$|\1|')
seed=${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
python3 "$here/tests/tools/fuzz_http.py" 127.0.0.1 "$port" "$seed" "${FUZZ_COUNT:-1500}" ||
	exp_fail "fuzzing (seed $seed, replay with FUZZ_SEED=$seed) broke the server: $(tail -5 "$EXP_TMP/exporter.err")"
exp_alive "$EXP_PID" || exp_fail "the exporter died (seed $seed): $(tail -20 "$EXP_TMP/exporter.err")"
got=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 "$EXP_URL")
[ "$got" = 200 ] || exp_fail "after fuzzing, /metrics gave $got"
grep -Eq ': (400|404|405|413) ' "$EXP_TMP/exporter.err" ||
	exp_fail "no refusal was logged: $(head -5 "$EXP_TMP/exporter.err")"
exp_stop "$EXP_PID"
EXP_PID=""
[ "$EXP_STATUS" = 0 ] || exp_fail "the exporter exited $EXP_STATUS on SIGTERM after fuzzing"
if grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer' \
	"$EXP_TMP/exporter.err"; then
	grep -E -A30 'Sanitizer|runtime error:' "$EXP_TMP/exporter.err" | head -60
	exp_fail "a sanitizer report (seed $seed)"
fi
echo "ok: ${FUZZ_COUNT:-1500} fuzzed requests (seed $seed, sanitizer build: $sanitized), still serving"
