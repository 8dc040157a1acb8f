#!/bin/sh
# SPDX-License-Identifier: MIT
# test_exporter.sh - perflib-exporter end to end, without Prometheus: a provider
# (tests/helpers/exp_provider) publishes two counter sets in a private PERFLIB_ROOT; the
# exporter serves them on a free loopback port; /metrics in both formats is compared with
# tests/data/exporter/metrics.{prom,om}, checked by promtool (and by the Python OpenMetrics
# parser when python3-prometheus-client is installed); then live updates, HTTP errors,
# the --textfile modes, --once, bad options and clean stops on SIGTERM/SIGINT.
# Exit 0 pass, 77 skip (consumer API not built yet, no BPF, no tools), 1 fail.
here=$(cd "$(dirname "$0")/../.." && pwd)
data="$here/tests/data/exporter"
. "$data/lib.sh"

exp_preflight
trap exp_cleanup EXIT
trap 'exit 1' INT TERM HUP
exp_need_prometheus
t=$EXP_TMP
fails=0

check() { # description, then a command that must succeed
	what=$1
	shift
	if "$@"; then
		echo "ok    $what"
	else
		echo "FAIL  $what"
		fails=$((fails + 1))
	fi
}

same() { # golden, actual: identical, or show the difference
	diff -u "$1" "$2" >"$t/diff" && return 0
	head -40 "$t/diff"
	return 1
}

fetch() { # name, curl arguments...: body to $t/name, headers to $t/name.h
	name=$1
	shift
	curl -sS --max-time 10 -D "$t/$name.h" -o "$t/$name" "$@"
}

header_is() { # headers file, header name, expected value
	v=$(tr -d '\r' <"$1" | sed -n "s/^$2: //Ip" | head -1)
	[ "$v" = "$3" ] || { echo "    $2: '$v', expected '$3'"; return 1; }
}

status_is() { # headers file, code
	head -1 "$1" | grep -q " $2" || { echo "    status: $(head -1 "$1")"; return 1; }
}

promtool_ok() {
	promtool check metrics <"$1" >"$t/promtool.out" 2>&1 || { cat "$t/promtool.out"; return 1; }
}

openmetrics_ok() { # strict parse with the reference client's parser, when installed
	/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null || {
		echo "    (python3-prometheus-client not installed: OpenMetrics parser check skipped)"
		return 0
	}
	/usr/bin/python3 - "$1" <<'EOF'
import sys
from prometheus_client.openmetrics import parser
text = open(sys.argv[1], encoding="utf-8").read()
families = list(parser.text_string_to_metric_families(text))
assert len(families) >= 10, len(families)
EOF
}

exp_start_provider
exp_start_exporter

# ---- HTTP, both formats -----------------------------------------------------------------
om_accept='application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
fetch om -H "Accept: $om_accept" "$EXP_URL"
check "GET /metrics as Prometheus asks: OpenMetrics, golden" same "$data/metrics.om" "$t/om"
check "OpenMetrics Content-Type" header_is "$t/om.h" Content-Type \
	'application/openmetrics-text; version=1.0.0; charset=utf-8'
check "OpenMetrics parses" openmetrics_ok "$t/om"
fetch prom -H 'Accept: text/plain;version=0.0.4' "$EXP_URL"
check "GET /metrics with Accept text/plain: Prometheus text, golden" \
	same "$data/metrics.prom" "$t/prom"
check "Prometheus text Content-Type" header_is "$t/prom.h" Content-Type \
	'text/plain; version=0.0.4; charset=utf-8'
check "promtool check metrics" promtool_ok "$t/prom"
fetch any "$EXP_URL"
check "GET /metrics with curl's Accept */*: Prometheus text" same "$data/metrics.prom" "$t/any"

# ---- other requests -----------------------------------------------------------------------
base=${EXP_URL%/metrics}
fetch index "$base/"
check "GET / is 200" status_is "$t/index.h" 200
fetch missing "$base/nothing"
check "GET /nothing is 404" status_is "$t/missing.h" 404
fetch post -X POST "$EXP_URL"
check "POST /metrics is 405" status_is "$t/post.h" 405
check "405 says Allow: GET, HEAD" header_is "$t/post.h" Allow 'GET, HEAD'
fetch head -I "$EXP_URL"
check "HEAD /metrics is 200" status_is "$t/head.h" 200

# ---- live values ----------------------------------------------------------------------------
exp_provider_cmd "set 0 1 1 4242"
exp_provider_cmd "add 1 0 2 3"
fetch live "$EXP_URL"
check "a value set by the provider shows in the next scrape" \
	grep -qx 'perflib_exporter_test_requests_total{perf_instance="beta"} 4242' "$t/live"
check "an increment too" grep -qx 'perflib_exporter_single_errors_total 10' "$t/live"
exp_provider_cmd "set 0 1 1 200"
exp_provider_cmd "set 1 0 2 7"

# ---- --once and --textfile ----------------------------------------------------------------
"$TOOLS/perflib-exporter" --once >"$t/once.prom" 2>"$t/once.err"
check "--once to stdout, exit 0, golden" same "$data/metrics.prom" "$t/once.prom"
"$TOOLS/perflib-exporter" --once --format openmetrics >"$t/once.om" 2>"$t/once.err"
check "--once --format openmetrics, golden" same "$data/metrics.om" "$t/once.om"
mkdir "$t/textfile"
"$TOOLS/perflib-exporter" --textfile "$t/textfile/perflib.prom" --once 2>"$t/tf.err"
check "--textfile --once writes the golden file" same "$data/metrics.prom" "$t/textfile/perflib.prom"
check "the textfile has mode 0644" test "$(stat -c %a "$t/textfile/perflib.prom")" = 644
check "no temporary file is left" test "$(ls -A "$t/textfile")" = perflib.prom
rm "$t/textfile/perflib.prom"

"$TOOLS/perflib-exporter" --textfile "$t/textfile/perflib.prom" --interval 0.2 2>"$t/loop.err" &
loop=$!
check "--textfile --interval 0.2 writes the file" exp_wait 50 test -s "$t/textfile/perflib.prom"
exp_provider_cmd "set 0 0 3 77"
check "and rewrites it with new values" exp_wait 50 \
	grep -qx 'perflib_exporter_test_queue_length{perf_instance="alpha"} 77' \
	"$t/textfile/perflib.prom"
exp_provider_cmd "set 0 0 3 5"
check "rewritten file passes promtool" promtool_ok "$t/textfile/perflib.prom"
exp_stop "$loop" 50 INT
check "SIGINT stops the textfile loop with status 0" test "$EXP_STATUS" = 0
check "the loop leaves only the .prom file" test "$(ls -A "$t/textfile")" = perflib.prom

"$TOOLS/perflib-exporter" --textfile "$t/no/such/dir/x.prom" --once 2>"$t/bad.err"
check "--textfile into a missing directory fails with status 1" test $? = 1
check "and says why" grep -q 'No such file or directory' "$t/bad.err"

# ---- command line errors ------------------------------------------------------------------
usage() { # expected status, arguments...
	want=$1
	shift
	"$TOOLS/perflib-exporter" "$@" >"$t/usage.out" 2>"$t/usage.err"
	rc=$?
	[ "$rc" = "$want" ] || { echo "    status $rc, expected $want: $(cat "$t/usage.err")"; return 1; }
	[ "$want" = 0 ] || grep -q "^perflib-exporter: " "$t/usage.err"
}
check "--help prints the manual, status 0" usage 0 --help
check "--help names every option" sh -c "grep -q -- '--listen ADDR:PORT' '$t/usage.out' &&
	grep -q -- '--textfile PATH' '$t/usage.out' && grep -q -- '--interval SECONDS' '$t/usage.out'"
check "unknown option: status 2" usage 2 --frobnicate
check "missing argument: status 2" usage 2 --listen
check "bad --listen: status 2" usage 2 --listen 127.0.0.1
check "bad port: status 2" usage 2 --listen 127.0.0.1:70000
check "bad --interval: status 2" usage 2 --textfile x.prom --interval 0
check "--interval without --textfile: status 2" usage 2 --interval 5
check "--once with --interval: status 2" usage 2 --textfile x.prom --once --interval 5
check "bad --format: status 2" usage 2 --once --format json
hostport=${EXP_URL#http://}
check "a port in use: status 1" usage 1 --listen "${hostport%/metrics}"
check "and says so" grep -q 'Address already in use' "$t/usage.err"

# ---- clean stop -------------------------------------------------------------------------------
exp_stop "$EXP_PID" 50
EXP_PID=""
check "SIGTERM stops the HTTP server with status 0" test "$EXP_STATUS" = 0
quiet() { # nothing but the "listening on" line and the refusals on stderr
	! grep -v -e 'listening on' -e '^perflib-exporter: 127\.0\.0\.1: [A-Z]* [^ ]*: 40[0-9] ' "$1" ||
		return 1
}
check "nothing but the address and the refusals were logged" quiet "$t/exporter.err"
check "a 404 is logged with the client's address" \
	grep -q '^perflib-exporter: 127.0.0.1: GET /nothing: 404 no such path$' "$t/exporter.err"

echo
if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed"
	exit 1
fi
echo "all checks passed"
