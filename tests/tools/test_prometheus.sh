#!/bin/sh
# SPDX-License-Identifier: MIT
# test_prometheus.sh - perflib-exporter scraped by a real Prometheus (Debian's prometheus
# package, installed with apt-get when missing). A provider publishes known values in a
# private PERFLIB_ROOT, the exporter serves them on a free loopback port, and a private
# Prometheus (loopback only, generated config scraping every second, its own TSDB in a
# temporary directory) scrapes it. The test waits until the target is up, then checks
# values, names with escaped label values, and the types and units Prometheus learned
# through OpenMetrics, through /api/v1/query and /api/v1/metadata; then a value changed by
# the provider shows up. The kernel counter provider (kcounters: BPF programs on tracepoints
# filling a registered counter set) is loaded beside the user-space provider, and both
# counter sets are checked through typeperf, bpftool and Prometheus in the same run.
# Everything started is stopped and removed at the end.
# Exit 0 pass, 77 skip (consumer API not built yet, no BPF, no prometheus), 1 fail.
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/data/exporter/lib.sh"

PROM_PID=""
KC_LOADED=""
stop_all() {
	[ -z "$PROM_PID" ] || exp_stop "$PROM_PID" 150
	[ -z "$KC_LOADED" ] || "$TOOLS/kcounters" unload --force >/dev/null 2>&1
	exp_cleanup
}

exp_preflight
trap stop_all EXIT
trap 'exit 1' INT TERM HUP
exp_need_prometheus
command -v prometheus >/dev/null || exp_skip "the prometheus package has no prometheus binary"
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

exp_start_provider
"$TOOLS/kcounters" load >"$t/kc.out" 2>&1 || exp_fail "kcounters load: $(cat "$t/kc.out")"
KC_LOADED=1
KC_SET=df75996b-42f9-4c1e-a30b-9db93f06be49
exp_start_exporter
target=${EXP_URL#http://}
target=${target%/metrics}

# ---- a private Prometheus ------------------------------------------------------------------
cat >"$t/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: perflib
    static_configs:
      - targets: ['$target']
EOF
promtool check config "$t/prometheus.yml" >"$t/promtool.out" 2>&1 ||
	exp_fail "generated config rejected: $(cat "$t/promtool.out")"

prom_ready() {
	curl -sf --max-time 2 "$PROM/-/ready" >/dev/null
}

# a random port can be taken: try a few, each until Prometheus is ready or has exited
tries=0
while [ -z "$PROM_PID" ] && [ $tries -lt 5 ]; do
	tries=$((tries + 1))
	port=$(awk -v s="$$$tries" 'BEGIN { srand(s); print 20000 + int(rand() * 40000) }')
	PROM="http://127.0.0.1:$port"
	prometheus --config.file="$t/prometheus.yml" --storage.tsdb.path="$t/data" \
		--web.listen-address="127.0.0.1:$port" --storage.tsdb.retention.time=1h \
		>"$t/prometheus.log" 2>&1 &
	PROM_PID=$!
	n=300
	while [ $n -gt 0 ] && exp_alive "$PROM_PID" && ! prom_ready; do
		sleep 0.1
		n=$((n - 1))
	done
	if ! prom_ready; then
		exp_stop "$PROM_PID" 50
		PROM_PID=""
	fi
done
[ -n "$PROM_PID" ] || exp_fail "Prometheus did not start: $(tail -5 "$t/prometheus.log")"
echo "Prometheus on $PROM scrapes $target"

# prom_value QUERY: the single value of an instant query ("" when not exactly one)
prom_value() {
	curl -sS --max-time 5 -G --data-urlencode "query=$1" "$PROM/api/v1/query" >"$t/q.json" ||
		return 1
	[ "$(grep -o '"value":' "$t/q.json" | wc -l)" = 1 ] || return 0
	sed -n 's/.*"value":\[[^,]*,"\([^"]*\)"\].*/\1/p' "$t/q.json"
}

is_value() { # QUERY EXPECTED
	[ "$(prom_value "$1")" = "$2" ]
}

value_is() { # QUERY EXPECTED, explaining a mismatch
	v=$(prom_value "$1")
	[ "$v" = "$2" ] || { echo "    $1 = '$v', expected '$2'"; return 1; }
}

metadata_has() { # METRIC, then fragments the metadata JSON must contain
	m=$1
	shift
	curl -sS --max-time 5 -G --data-urlencode "metric=$m" "$PROM/api/v1/metadata" >"$t/m.json"
	for frag; do
		grep -qF "$frag" "$t/m.json" || { echo "    $m: no $frag in $(cat "$t/m.json")"; return 1; }
	done
}

check "the target is up within 30 s" exp_wait 300 is_value 'up{job="perflib"}' 1
check "requests of instance beta" \
	value_is 'perflib_exporter_test_requests_total{perf_instance="beta"}' 200
check "a repeated instance name is alpha#1" \
	value_is 'perflib_exporter_test_requests_total{perf_instance="alpha#1"}' 500
check "a label value with a quote and a backslash" \
	value_is 'perflib_exporter_test_queue_length{perf_instance="quote\"back\\slash"}' 7
check "a UTF-8 label value" \
	value_is 'perflib_exporter_test_queue_length{perf_instance="café €"}' 8
check "a 100-ns timer in seconds" \
	value_is 'perflib_exporter_test_busy_time_seconds_total{perf_instance="alpha"}' 1.2345678
check "an average timer's _sum in seconds" \
	value_is 'perflib_exporter_test_avg_latency_seconds_sum{perf_instance="beta"}' 0.5
check "and its _count from the base counter" \
	value_is 'perflib_exporter_test_avg_latency_seconds_count{perf_instance="beta"}' 20
check "a fraction over its base" \
	value_is 'perflib_exporter_test_hit_ratio{perf_instance="beta"} / perflib_exporter_test_hit_ratio_base{perf_instance="beta"}' 0.75
check "a single-instance counter set, no label" \
	value_is 'perflib_exporter_single_connections' 12345678901234
check "hidden counters are not exported" \
	value_is 'count({__name__=~"perflib_exporter_test_(internal|latency_base|hit_ratio_base_.*)"}) or vector(0)' 0
check "instances per counter set" \
	value_is 'perflib_counterset_instances{counterset="Exporter Test"}' 5
check "Prometheus learned the counter type" \
	metadata_has perflib_exporter_test_requests '"type":"counter"' '"help":"Requests served since the start."'
check "the summary type and the unit (so it scraped OpenMetrics)" \
	metadata_has perflib_exporter_test_avg_latency_seconds '"type":"summary"' '"unit":"seconds"'

exp_provider_cmd "set 0 1 1 4321"
check "a value the provider changes reaches Prometheus within 15 s" \
	exp_wait 150 is_value 'perflib_exporter_test_requests_total{perf_instance="beta"}' 4321
exp_provider_cmd "add 0 1 1 1000"
check "and its rate is positive" exp_wait 150 is_value \
	'rate(perflib_exporter_test_requests_total{perf_instance="beta"}[1m]) > bool 0' 1

# ---- the BPF-filled and the user-space counter sets, side by side ------------------------
check "Prometheus: kernel context switches on CPU 0 grow (BPF-filled counter set)" exp_wait 150 \
	is_value 'perflib_kernel_cpu_context_switches_total{perf_instance="0"} > bool 0' 1
check "Prometheus: system calls are counted on some CPU" exp_wait 150 \
	is_value 'sum(perflib_kernel_cpu_system_calls_total) > bool 0' 1
"$TOOLS/typeperf" "\\Kernel CPU(*)\\Context Switches/sec" \
	"\\Exporter Test(beta)\\Queue Length" -sc 1 >"$t/tp.csv" 2>&1
check "typeperf: both counter sets in one sample" sh -c "
	sed -n 2p '$t/tp.csv' | grep -q 'Kernel CPU(0)' &&
	sed -n 2p '$t/tp.csv' | grep -q 'Exporter Test(beta)' &&
	sed -n 3p '$t/tp.csv' | grep -Eq '^\"[0-9/]+ [0-9:.]+\",\"[0-9]+\\.[0-9]{6}\"'"
bpftool map dump pinned "$PERFLIB_ROOT/$KC_SET/s0/data" >"$t/kc.dump" 2>&1
check "bpftool: the kernel counter set shows named, growing counters" sh -c "
	grep -q '\"name\": \"0\"' '$t/kc.dump' &&
	grep -Eq '\"Context_Switches_sec_[0-9]+\": [1-9]' '$t/kc.dump'"

check "the exporter logged no error" sh -c "! grep -v 'listening on' '$t/exporter.err'"
exp_stop "$PROM_PID" 150
PROM_PID=""
check "Prometheus stops on SIGTERM" test "$EXP_STATUS" = 0

echo
if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed"
	tail -20 "$t/prometheus.log"
	exit 1
fi
echo "all checks passed"
