#!/bin/sh
# SPDX-License-Identifier: MIT
# test_typeperf.sh - typeperf end to end: command-line errors, "Error: No valid counters.",
# then against tests/helpers/tp_provider (counter sets "TP Demo" with instances alpha, beta,
# alpha and "TP Single"): -q/-qx listings and the deterministic CSV columns compared with
# golden files in tests/data/typeperf/, rates within one provider step, TSV, -o/-y, -cf,
# -config, -s, Ctrl+C.
# Environment: OUTPUT (absolute build dir), TOOLS (default $OUTPUT/tools), SHARED.
# Exit 0 pass, 77 skip, other fail. REGEN=1 rewrites the golden files instead of comparing.
set -u
: "${OUTPUT:?}"
TOOLS=${TOOLS:-$OUTPUT/tools}
data=$(cd "$(dirname "$0")/../data/typeperf" && pwd)

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
	if [ "${PERFLIB_REQUIRE_BPF:-}" = 1 ]; then fail "$* (and PERFLIB_REQUIRE_BPF=1)"; fi
	echo "SKIP: $*"; exit 77
}

tp=$TOOLS/typeperf
prov=$OUTPUT/tests/helpers/tp_provider
for sym in PerfOpenQueryHandle PerfAddCounters PerfQueryCounterInfo PerfQueryCounterData \
	PerfEnumerateCounterSet PerfEnumerateCounterSetInstances \
	PerfQueryCounterSetRegistrationInfo PerfCloseQueryHandle; do
	nm "$OUTPUT/libperflib.a" 2>/dev/null | grep -q " T $sym\$" ||
		skip "libperflib.a has no consumer API yet ($sym missing)"
done
[ -x "$tp" ] || fail "$tp is not built"
[ -x "$prov" ] || fail "$prov is not built"

root=/sys/fs/bpf/perflib-test-$$
tmp=$(mktemp -d)
pid=
cleanup() {
	[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
	rm -rf "$root" "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir "$root" 2>/dev/null || skip "cannot create $root (bpffs not mounted or no permission)"
export PERFLIB_ROOT=$root
host=$(hostname | cut -d. -f1)
CR=$(printf '\r')

# run typeperf: stdout in $tmp/out, stderr in $tmp/err, exit code in $rc
run() {
	"$tp" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	# a SANITIZE=address,undefined build reports here, whatever the exit code; UBSan
	# reports inside the library (userspace/) are its own tests' business: noted only
	grep 'Sanitizer\|runtime error' "$tmp/err" | grep -v '^userspace/' >"$tmp/san"
	[ ! -s "$tmp/san" ] || fail "typeperf $*: $(cat "$tmp/err")"
	if grep -q '^userspace/.*runtime error' "$tmp/err" && [ -z "${lib_noted:-}" ]; then
		lib_noted=1
		echo "note: library UBSan report: $(grep -m1 '^userspace/' "$tmp/err")"
	fi
}
expect_rc() { # $1 = code, $2 = what
	[ "$rc" -eq "$1" ] || fail "$2: exit $rc, expected $1; stderr: $(cat "$tmp/err")"
}
expect_err() { # $1 = fixed string on stderr, $2 = what
	grep -qF -- "$1" "$tmp/err" || fail "$2: stderr lacks '$1': $(cat "$tmp/err")"
}
# wait (10 s at most) until the typeperf writing $1 in the background printed a row
first_row() {
	n=0
	until grep -q '^"[0-9]' "$1" 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 1000 ] || fail "no first row in $1 after 10 s"
		sleep 0.01
	done
}
# compare $1 with golden file $2 (or rewrite it with REGEN=1)
golden() {
	if [ "${REGEN:-}" = 1 ]; then cp "$1" "$data/$2"; return; fi
	cmp -s "$1" "$data/$2" || { diff "$data/$2" "$1" | cat -A | head -20 >&2;
		fail "output differs from tests/data/typeperf/$2"; }
}

# ---- without a provider ---------------------------------------------------------------------
for h in -? /? -h --help /H; do
	run "$h"
	expect_rc 0 "typeperf $h"
	grep -q '^SYNOPSIS' "$tmp/out" && grep -q 'COUNTER PATHS' "$tmp/out" ||
		fail "typeperf $h: no usage text"
done
run
expect_rc 2 "no arguments"
expect_err "Error: no counters given" "no arguments"
for bad in "-f BIN|binary log" "-f SQL|ODBC" "-f xml|unknown format" "-si 0|-si 0" \
	"-si 1:75|-si" "-sc 0|at least 1" "-sc x|-sc x" "-bogus|unknown switch" \
	"/nope|unknown switch" "-o SQL:dsn!set|SQL" "-cf /nonexistent|-cf /nonexistent" \
	"-config /nonexistent|-config"; do
	args=${bad%%|*}
	# shellcheck disable=SC2086 # split the switch and its value
	run '\TP Single\Value' $args
	expect_rc 2 "typeperf $args"
	expect_err "${bad#*|}" "typeperf $args"
	grep -q '^Error: ' "$tmp/err" || fail "typeperf $args: no 'Error: ' line"
done
run -q '\TP Single\Value'
expect_rc 2 "-q with a counter path"
run '\Nope\Counter' -sc 1
expect_rc 1 "unknown object"
expect_err "Error: No valid counters." "unknown object"
[ ! -s "$tmp/out" ] || fail "unknown object: stdout not empty: $(cat "$tmp/out")"
run 'not a path' -sc 1
expect_rc 1 "malformed path"
expect_err "is not a valid counter path" "malformed path"
expect_err "Error: No valid counters." "malformed path"

# ---- with the provider ----------------------------------------------------------------------
"$prov" >"$tmp/prov.out" 2>"$tmp/prov.err" </dev/null &
pid=$!
i=0
until grep -q '^ready' "$tmp/prov.out" 2>/dev/null; do
	if ! kill -0 "$pid" 2>/dev/null; then
		pid=
		cat "$tmp/prov.err" >&2
		grep -q 'not permitted' "$tmp/prov.err" && skip "tp_provider: no BPF permission here"
		fail "tp_provider exited before it was ready"
	fi
	i=$((i + 1))
	[ $i -lt 1000 ] || fail "tp_provider did not get ready in 10 s"
	sleep 0.01
done

# -q / -qx listings
run -q
expect_rc 0 "-q"
golden "$tmp/out" q_all.txt
run -qx 'tp demo'
expect_rc 0 "-qx 'tp demo'"
golden "$tmp/out" qx_demo.txt
run /QX 'TP Sing*' -o "$tmp/list.txt"
expect_rc 0 "-qx -o"
printf '\\TP Single\\Value\n\\TP Single\\Total\n' | cmp -s - "$tmp/list.txt" ||
	fail "-qx -o wrote: $(cat "$tmp/list.txt")"
grep -qx 'The command completed successfully.' "$tmp/out" || fail "-qx -o: no completion line"
run -q 'No Such Object'
expect_rc 1 "-q unknown object"
expect_err 'No object matches' "-q unknown object"
# a wildcard object pattern lists what the name lists; another computer lists nothing
run -qx '*demo'
expect_rc 0 "-qx '*demo'"
cmp -s "$tmp/out" "$data/qx_demo.txt" || fail "-qx '*demo' is not -qx 'tp demo': $(cat "$tmp/out")"
run -q -s no-such-computer.invalid
expect_rc 1 "-q on another computer"
expect_err 'Error: no-such-computer.invalid: cannot read counter sets: the computer cannot be reached' \
	"-q on another computer"
[ ! -s "$tmp/out" ] || fail "-q on another computer: stdout $(cat "$tmp/out")"

# deterministic columns: every ratio is exact at any sampling time
set -- '\TP Demo(*)\Items' '\TP Demo(alpha#1)\Big' '\TP Demo(alpha#*)\Flags' \
	'\TP Demo(a*)\Ratio' '\TP Demo(beta)\Hit %' '\tp demo(ALPHA)\busy %' \
	'\TP Demo(alpha#0)\Uptime' '\TP Demo(beta)\Avg Bulk' '\TP Demo(beta)\Secret' \
	'\TP Single\*' '\TP Demo(gamma)\Items' '\TP Demo(beta)\Ratio Base'
run "$@" -sc 3
expect_rc 0 "deterministic sample"
expect_err '"\TP Demo(gamma)\Items" matches no counter' "deterministic sample"
expect_err '"\TP Demo(beta)\Ratio Base" matches no counter' "deterministic sample"
[ "$(wc -l <"$tmp/out")" -eq 7 ] || fail "deterministic sample: $(wc -l <"$tmp/out") lines, expected 7"
grep -vq "$CR\$" "$tmp/out" && fail "a line does not end with CRLF"
[ "$(head -1 "$tmp/out")" = "$CR" ] || fail "no empty first line"
want=$(printf '"(PDH-CSV 4.0)","\\\\%s\\TP Demo(alpha)\\Items",' "$host")
sed -n 2p "$tmp/out" | grep -qF "$want" || fail "header: $(sed -n 2p "$tmp/out")"
sed -n '3,5p' "$tmp/out" | tr -d '\r' | grep -Evq \
	'^"[01][0-9]/[0-3][0-9]/[0-9]{4} [0-2][0-9]:[0-5][0-9]:[0-5][0-9]\.[0-9]{3}"(,"([0-9]+\.[0-9]{6}| )")+$' &&
	fail "bad data row: $(sed -n '3,5p' "$tmp/out")"
# a row's time is within a few seconds of now
now=$(date +%s)
stamp=$(sed -n 5p "$tmp/out" | cut -d'"' -f2 | cut -d. -f1)
t=$(date -d "$(echo "$stamp" | sed 's#^\(..\)/\(..\)/\(....\) #\3-\1-\2 #')" +%s) ||
	fail "cannot read time stamp $stamp"
[ $((now - t)) -ge 0 ] && [ $((now - t)) -le 5 ] || fail "time stamp $stamp is not local now"
sed -e 's/^"[0-9][^"]*",/"TIME",/' -e 's/"\\\\[^\\"]*\\/"\\\\HOST\\/g' "$tmp/out" >"$tmp/masked"
golden "$tmp/masked" sample.csv

# rates, deltas and 100-ns timers: 100/s, 10000/s, 10 and 25 %, known within a few 100 ms
# provider steps (the windows allow for a loaded machine); a value also in row 1
run '\TP Demo(beta)\Ops/sec' '\TP Demo(beta)\Bytes/sec' '\TP Demo(beta)\Delta' \
	'\TP Demo(beta)\Load %' -si 1 -sc 3
expect_rc 0 "rates"
sed -n '3,5p' "$tmp/out" | tr -d '"\r' | awk -F, '
	function within(v, lo, hi, what) {
		if (v == "" || v < lo || v > hi) { print what " = " v; bad = 1 } }
	{ within($2, 70, 130, "Ops/sec"); within($3, 7000, 13000, "Bytes/sec");
	  within($4, 7, 13, "Delta"); within($5, 10, 40, "Load %") }
	END { exit bad }' >&2 || fail "rates out of range: $(cat "$tmp/out")"

# TSV
run '\TP Single\Value' -f tsv -sc 1
expect_rc 0 "-f TSV"
want=$(printf '"(PDH-TSV 4.0)"\t"\\\\%s\\TP Single\\Value"\r' "$host")
[ "$(sed -n 2p "$tmp/out")" = "$want" ] || fail "TSV header: $(sed -n 2p "$tmp/out" | cat -A)"
sed -n 3p "$tmp/out" | grep -q "	\"42.000000\"$CR\$" || fail "TSV row: $(sed -n 3p "$tmp/out")"

# -o: the file has no empty first line; an existing file needs -y (no terminal to ask on)
run '\TP Single\Total' -sc 2 -o "$tmp/log.csv"
expect_rc 0 "-o"
head -1 "$tmp/log.csv" | grep -q '^"(PDH-CSV 4.0)",' || fail "-o: first line $(head -1 "$tmp/log.csv")"
[ "$(grep -c '"7000000000.000000"' "$tmp/log.csv")" -eq 2 ] || fail "-o: rows $(cat "$tmp/log.csv")"
printf 'Exiting, please wait...\r\nThe command completed successfully.\r\n' | cmp -s - "$tmp/out" ||
	fail "-o: console $(cat -A "$tmp/out")"
cp "$tmp/log.csv" "$tmp/keep.csv"
run '\TP Single\Total' -sc 1 -o "$tmp/log.csv"
expect_rc 1 "-o existing file without -y"
expect_err "already exists" "-o existing file without -y"
cmp -s "$tmp/log.csv" "$tmp/keep.csv" || fail "-o without -y changed the file"
run '\TP Single\Total' -sc 1 -o "$tmp/log.csv" /Y
expect_rc 0 "-o -y"
[ "$(wc -l <"$tmp/log.csv")" -eq 2 ] || fail "-o -y: $(cat "$tmp/log.csv")"
run '\Nope\X' -sc 1 -o "$tmp/log.csv" -y
expect_rc 1 "-o -y, nothing resolves"
[ "$(wc -l <"$tmp/log.csv")" -eq 2 ] || fail "a run without valid counters changed -o"
# on a terminal typeperf asks (script(1) gives it one)
if command -v script >/dev/null 2>&1; then
	cp "$tmp/log.csv" "$tmp/keep.csv"
	printf 'n\n' | script -qec "'$tp' '\\TP Single\\Total' -sc 1 -o '$tmp/log.csv'" \
		/dev/null >"$tmp/tty.out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || fail "answer n: exit $rc: $(cat "$tmp/tty.out")"
	grep -q 'Overwrite it? \[y/n\]' "$tmp/tty.out" || fail "no question: $(cat "$tmp/tty.out")"
	cmp -s "$tmp/log.csv" "$tmp/keep.csv" || fail "answer n changed the file"
	printf 'y\n' | script -qec "'$tp' '\\TP Single\\Total' -sc 2 -o '$tmp/log.csv'" \
		/dev/null >"$tmp/tty.out" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || fail "answer y: exit $rc: $(cat "$tmp/tty.out")"
	[ "$(wc -l <"$tmp/log.csv")" -eq 3 ] || fail "answer y: $(cat "$tmp/log.csv")"
fi

# -cf and -config give the same columns as the command line
printf '; counters\r\n\\TP Single\\Value\r\n\r\n\\TP Demo(beta)\\Items\r\n' >"$tmp/cf.txt"
run -cf "$tmp/cf.txt" -sc 1
expect_rc 0 "-cf"
sed -n 2p "$tmp/out" | grep -q 'TP Single\\Value","\\\\[^"]*\\TP Demo(beta)\\Items"' ||
	fail "-cf header: $(sed -n 2p "$tmp/out")"
sed -n 3p "$tmp/out" | grep -q '"42.000000","20.000000"' || fail "-cf row: $(sed -n 3p "$tmp/out")"
printf '[c]\n\\TP Single\\Value\n[sc]\n2\n[f]\nTSV\n' >"$tmp/cfg.txt"
run -config "$tmp/cfg.txt"
expect_rc 0 "-config"
[ "$(wc -l <"$tmp/out")" -eq 6 ] || fail "-config: $(cat "$tmp/out")"
grep -q '^"(PDH-TSV 4.0)"' "$tmp/out" || fail "-config: not TSV"

# -s and \\computer: this machine by any of its names, other computers give nothing
run '\TP Single\Value' -s localhost -sc 1
expect_rc 0 "-s localhost"
grep -qF '"\\localhost\TP Single\Value"' "$tmp/out" || fail "-s localhost: $(sed -n 2p "$tmp/out")"
run "\\\\$host\\TP Single\\Value" -sc 1
expect_rc 0 "\\\\$host path"
# two computer names, two queries, one row
run '\\localhost\TP Single\Value' '\TP Demo(beta)\Items' '\\.\TP Single\Total' -sc 1
expect_rc 0 "three computer names"
sed -n 3p "$tmp/out" | grep -q '"42.000000","20.000000","7000000000.000000"' ||
	fail "three computer names: $(sed -n 2,3p "$tmp/out")"
run '\TP Single\Value' -s no-such-computer.invalid -sc 1
expect_rc 1 "-s other computer"
expect_err "Error: No valid counters." "-s other computer"
run '\TP Single(x)\Value' '\TP Demo\Items' '\TP Demo(gamma*)\Items' -sc 1
expect_rc 1 "instance rules"
expect_err "Error: No valid counters." "instance rules"

# a vanishing instance: its values become " " (the provider drops "beta" on SIGUSR1)
"$tp" '\TP Demo(beta)\Items' '\TP Demo(beta)\Ops/sec' '\TP Demo(alpha)\Items' -sc 4 \
	>"$tmp/gone.out" 2>"$tmp/gone.err" </dev/null &
tpid=$!
first_row "$tmp/gone.out"
kill -USR1 "$pid"
wait "$tpid" || fail "vanishing instance: exit $?: $(cat "$tmp/gone.err")"
sed -n 3p "$tmp/gone.out" | grep -q '^"[^"]*","20.000000","[0-9.]*","10.000000"' ||
	fail "vanishing instance, row 1: $(sed -n 3p "$tmp/gone.out")"
sed -n 6p "$tmp/gone.out" | grep -q '^"[^"]*"," "," ","10.000000"' ||
	fail "vanishing instance, row 4: $(sed -n 6p "$tmp/gone.out")"

# Ctrl+C: the closing lines and exit 0
"$tp" '\TP Demo(alpha)\Ops/sec' >"$tmp/int.out" 2>"$tmp/int.err" </dev/null &
tpid=$!
first_row "$tmp/int.out"
kill -INT "$tpid"
wait "$tpid"
rc=$?
[ "$rc" -eq 0 ] || fail "SIGINT: exit $rc: $(cat "$tmp/int.err")"
! grep -q 'Sanitizer' "$tmp/int.err" || fail "SIGINT: $(cat "$tmp/int.err")"
[ "$(grep -c '^"[0-9]' "$tmp/int.out")" -ge 1 ] || fail "SIGINT: no rows"
tail -2 "$tmp/int.out" | tr -d '\r' | tr '\n' '|' | grep -qx \
	'Exiting, please wait...|The command completed successfully.|' ||
	fail "SIGINT: ends with $(tail -2 "$tmp/int.out")"

kill "$pid" && wait "$pid"
pid=
echo "typeperf: all checks passed"
