# SPDX-License-Identifier: MIT
# lib.sh - shell helpers of the perflib-exporter tests, sourced by tests/tools/test_exporter.sh
# and tests/tools/test_prometheus.sh (POSIX sh). Every wait is bounded; everything started
# is recorded and stopped by exp_cleanup (the callers' EXIT trap), by its own pid.
#
# Environment from tests/run.sh: OUTPUT (absolute .output), TOOLS ($OUTPUT/tools).

EXP_TMP=""
EXP_ROOT=""
PROV_PID=""
EXP_PID=""
EXP_URL=""

exp_skip() { # reason: run.sh shows the last line of a skipped test
	echo "SKIP: $*"
	exit 77
}

exp_fail() {
	echo "FAIL: $*"
	exit 1
}

# exp_wait TENTHS CMD...: run CMD every 0.1 s until it succeeds, at most TENTHS times
exp_wait() {
	n=$1
	shift
	while [ "$n" -gt 0 ]; do
		"$@" 2>/dev/null && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

# exp_alive PID: the process runs (a zombie, exited but not yet waited for, does not)
exp_alive() {
	[ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

exp_gone() {
	! exp_alive "$1"
}

# exp_stop PID [TENTHS] [SIGNAL]: signal (TERM), wait, SIGKILL if still there; the exit
# status goes to EXP_STATUS (137 after SIGKILL). Not in $(...): wait needs this shell.
exp_stop() {
	kill -"${3:-TERM}" "$1" 2>/dev/null
	exp_wait "${2:-50}" exp_gone "$1" || kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	EXP_STATUS=$?
}

# the remote client tests (test_remote_client.sh, test_remote_parallel.sh): three pin roots,
# the exporters' two ($EXP_ROOT, $EXP_ROOT-b) and the client's ($EXP_ROOT-c); the caller's
# EXIT trap is exp_remote_cleanup
exp_remote_cleanup() {
	[ -z "$EXP_ROOT" ] || rm -rf "$EXP_ROOT-b" "$EXP_ROOT-c"
	exp_cleanup
}

# exp_remote_check SCRIPT [NAME=VALUE ...]: tests/tools/SCRIPT run OUTPUT ROOT_A ROOT_B ROOT_C
# TMP with the variables given, the libraries of $OUTPUT (the sanitizer's runtime preloaded
# in a sanitizer build) and none of the settings of the user running the test
exp_remote_check() {
	script="$(cd "$(dirname "$0")" && pwd)/$1"
	shift
	command -v python3 >/dev/null || exp_skip "python3 is not installed"
	[ -e "$OUTPUT/libperflib-remote.so.1" ] || exp_fail "$OUTPUT/libperflib-remote.so.1 is not built"
	mkdir "$EXP_ROOT-b" "$EXP_ROOT-c" || exp_fail "mkdir $EXP_ROOT-b $EXP_ROOT-c"
	asan=$(ldd "$OUTPUT/libperflib.so" 2>/dev/null | awk '/libasan/ { print $3 }')
	[ -z "$asan" ] || export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
	env HOME="$EXP_TMP" XDG_CONFIG_HOME="" LD_PRELOAD="$asan" LD_LIBRARY_PATH="$OUTPUT" \
		PYTHONPATH="$(dirname "$script")" "$@" timeout 300 python3 "$script" run "$OUTPUT" \
		"$EXP_ROOT" "$EXP_ROOT-b" "$EXP_ROOT-c" "$EXP_TMP"
}

# the checks every exporter test needs before it starts anything
exp_preflight() {
	: "${OUTPUT:?}" "${TOOLS:=$OUTPUT/tools}"
	nm "$OUTPUT/libperflib.a" 2>/dev/null | grep -q ' T PerfQueryCounterData$' ||
		exp_skip "the consumer API is not built yet ($OUTPUT/libperflib.a defines no PerfQueryCounterData)"
	[ -x "$TOOLS/perflib-exporter" ] || exp_fail "$TOOLS/perflib-exporter is not built"
	[ -x "$OUTPUT/tests/helpers/exp_provider" ] ||
		exp_fail "$OUTPUT/tests/helpers/exp_provider is not built"
	command -v curl >/dev/null || exp_skip "curl is not installed"
	if [ "$(id -u)" != 0 ] || ! mkdir "/sys/fs/bpf/perflib-test-$$" 2>/dev/null; then
		[ "$PERFLIB_REQUIRE_BPF" = 1 ] &&
			exp_fail "cannot create /sys/fs/bpf/perflib-test-$$ and PERFLIB_REQUIRE_BPF=1"
		exp_skip "needs root and a bpffs at /sys/fs/bpf"
	fi
	EXP_ROOT="/sys/fs/bpf/perflib-test-$$"
	PERFLIB_ROOT=$EXP_ROOT
	export PERFLIB_ROOT
	EXP_TMP=$(mktemp -d "${TMPDIR:-/tmp}/perflib-exporter-test.XXXXXX") || exp_fail "mktemp"
}

# install Debian's prometheus package (prometheus + promtool) when a tool is missing;
# a service its postinst may have started is stopped and disabled: tests run their own
exp_need_prometheus() {
	command -v promtool >/dev/null && command -v prometheus >/dev/null && return 0
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null ||
		exp_skip "prometheus/promtool are missing and cannot be installed (not root)"
	echo "installing Debian's prometheus package"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >"$EXP_TMP/apt.log" 2>&1; then
		apt-get update -qq >/dev/null 2>&1
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >"$EXP_TMP/apt.log" 2>&1 ||
			exp_skip "apt-get install prometheus failed: $(tail -1 "$EXP_TMP/apt.log")"
	fi
	if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
		systemctl stop prometheus
		systemctl disable prometheus >/dev/null 2>&1
	elif command -v service >/dev/null; then
		service prometheus stop >/dev/null 2>&1
	fi
	command -v promtool >/dev/null || exp_skip "the prometheus package has no promtool"
}

# the test provider, commands on fd 3, "ready" on its stdout
exp_start_provider() {
	mkfifo "$EXP_TMP/provider.in" || exp_fail "mkfifo"
	"$OUTPUT/tests/helpers/exp_provider" <"$EXP_TMP/provider.in" >"$EXP_TMP/provider.out" \
		2>"$EXP_TMP/provider.err" &
	PROV_PID=$!
	exec 3>"$EXP_TMP/provider.in"
	exp_wait 100 grep -q '^ready$' "$EXP_TMP/provider.out" ||
		exp_fail "the provider did not start: $(cat "$EXP_TMP/provider.err")"
}

# exp_more_lines FILE N: FILE has more than N lines (re-read at every call of exp_wait)
exp_more_lines() {
	[ "$(wc -l <"$1")" -gt "$2" ]
}

# exp_provider_cmd LINE: send a command, wait for its answer (the n-th line after ready)
exp_provider_cmd() {
	before=$(wc -l <"$EXP_TMP/provider.out")
	echo "$1" >&3
	exp_wait 50 exp_more_lines "$EXP_TMP/provider.out" "$before" ||
		exp_fail "the provider did not answer '$1' (alive: $(exp_alive "$PROV_PID" &&
			echo yes || echo no); output: $(tr '\n' ' ' <"$EXP_TMP/provider.out");" \
			"errors: $(cat "$EXP_TMP/provider.err"))"
	[ "$(tail -1 "$EXP_TMP/provider.out")" = ok ] ||
		exp_fail "provider: '$1': $(tail -1 "$EXP_TMP/provider.out")"
}

# the exporter on a free loopback port; sets EXP_PID and EXP_URL (.../metrics)
exp_start_exporter() {
	# emptied here, not by the child's redirection: the wait must not read an earlier line
	: >"$EXP_TMP/exporter.err"
	"$TOOLS/perflib-exporter" --listen 127.0.0.1:0 "$@" 2>"$EXP_TMP/exporter.err" &
	EXP_PID=$!
	exp_wait 100 grep -q 'listening on http://' "$EXP_TMP/exporter.err" ||
		exp_fail "the exporter did not start: $(cat "$EXP_TMP/exporter.err")"
	EXP_URL=$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$EXP_TMP/exporter.err")
}

exp_cleanup() {
	[ -z "$EXP_PID" ] || exp_stop "$EXP_PID"
	if [ -n "$PROV_PID" ]; then
		exec 3>&- # EOF on the provider's stdin: it stops its provider and exits
		exp_wait 50 exp_gone "$PROV_PID" || kill -KILL "$PROV_PID" 2>/dev/null
		wait "$PROV_PID" 2>/dev/null
	fi
	[ -z "$EXP_ROOT" ] || rm -rf "$EXP_ROOT"
	[ -z "$EXP_TMP" ] || rm -rf "$EXP_TMP"
}

# test certificates in $pki (set by the caller): mk_ca NAME; mk_cert NAME CA SAN. EC P-256
# keys, valid two days; NAME.key, NAME.crt
mk_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-keyout "$pki/$1.key" -out "$pki/$1.crt" -subj "/CN=perflib test $1" \
		>"$pki/openssl.log" 2>&1 || exp_fail "openssl: CA $1: $(cat "$pki/openssl.log")"
}
mk_cert() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$pki/$1.key" \
		-out "$pki/$1.csr" -subj "/CN=$1" >"$pki/openssl.log" 2>&1 &&
		printf 'subjectAltName=%s\n' "$3" >"$pki/$1.ext" &&
		openssl x509 -req -in "$pki/$1.csr" -CA "$pki/$2.crt" -CAkey "$pki/$2.key" \
			-CAcreateserial -days 2 -extfile "$pki/$1.ext" -out "$pki/$1.crt" \
			>"$pki/openssl.log" 2>&1 || exp_fail "openssl: $1: $(cat "$pki/openssl.log")"
}
