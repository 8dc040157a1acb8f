#!/bin/sh
# SPDX-License-Identifier: MIT
# test_relog.sh - relog end to end on the logs of tests/data/relog/ (10 records, 2 s apart,
# four counters, one of them with gaps): the identity copy, CSV <-> TSV, -t, -b/-e in every
# spelling, -c with wildcards and computers, -cf, -q, -o/-y; bad command lines, bad times,
# missing, foreign, corrupt (bad time stamp, extra fields, a bad time zone), truncated and
# empty logs, unknown counters; the header's time zone (pdh.md 7.2: in.csv names one, kept;
# typeperf's logs name none, the output gets this machine's); then a log typeperf wrote from
# a live provider (tp_provider), relogged.
# Environment: OUTPUT (absolute build dir), TOOLS (default $OUTPUT/tools).
# Exit 0 pass, 77 skip (live part only with BPF), other fail.
set -u
: "${OUTPUT:?}"
TOOLS=${TOOLS:-$OUTPUT/tools}
# this machine's time zone, as a log header names it: "(UTC)(0)"
TZ=UTC
export TZ
data=$(cd "$(dirname "$0")/../data/relog" && pwd)
rl=$TOOLS/relog
tmp=$(mktemp -d)
root=/sys/fs/bpf/perflib-test-relog-$$
pid=
cleanup() {
	[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
	rm -rf "$tmp" "$root"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$rl" ] || fail "$rl is not built"

# run relog: stdout in $tmp/out, stderr in $tmp/err, exit code in $rc
run() {
	"$rl" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	! grep -q 'Sanitizer\|runtime error' "$tmp/err" || fail "relog $*: $(cat "$tmp/err")"
}
expect_rc() { # $1 = code, $2 = what
	[ "$rc" -eq "$1" ] || fail "$2: exit $rc, expected $1; stderr: $(cat "$tmp/err")"
}
expect_err() { # $1 = fixed string on stderr, $2 = what
	grep -qF -- "$1" "$tmp/err" || fail "$2: stderr lacks '$1': $(cat "$tmp/err")"
}
expect_out() { # $1 = fixed string on stdout, $2 = what
	grep -qF -- "$1" "$tmp/out" || fail "$2: stdout lacks '$1': $(cat "$tmp/out")"
}
# the time stamps (first fields) of log $1, one per line
stamps() { sed -n 's/^"\([0-9][^"]*\)".*/\1/p' "$1" | tr -d '\r'; }
records() { stamps "$1" | wc -l; }

cd "$tmp" || exit 1
in=$data/in.csv

# ---- help and command-line errors ----------------------------------------------------------
for h in -? /? -h --help; do
	run "$h"
	expect_rc 0 "$h"
	expect_out "SYNOPSIS" "$h"
	expect_out "EXIT STATUS" "$h"
done
run
expect_rc 2 "no arguments"
expect_err "no input log given" "no arguments"
run "$in"
expect_rc 2 "no -o"
expect_err "no output file given" "no -o"
run "$in" -o x.csv -f BIN
expect_rc 2 "-f BIN"
expect_err 'output format "BIN" is not supported' "-f BIN"
run "$in" -o x.csv -t 0
expect_rc 2 "-t 0"
run "$in" -o x.csv -t -3
expect_rc 2 "-t -3"
run "$in" -o x.csv -t 2x
expect_rc 2 "-t 2x"
run "$in" -o x.csv -bogus
expect_rc 2 "unknown switch"
expect_err "unknown switch '-bogus'" "unknown switch"
expect_err 'Type "relog -?" for help.' "unknown switch: hint"
run "$in" -o
expect_rc 2 "-o without value"
expect_err "-o needs a value" "-o without value"
run "$in" -o x.csv -y:yes
expect_rc 2 "-y with a value"
expect_err "-y:yes takes no value" "-y with a value"
run "$in" "$in" -o x.csv
expect_rc 2 "two inputs"
# the one stamp parser (common/stamp.c): a real date, a 24-hour clock, nothing after
for t in 13/1/2026 2/30/2026 2/29/2025 2/29/2100 4/31/2026 "3/27/2026 25:00:00" \
	"3/27/2026 24:00:00" "3/27/2026 15:61" "3/27/2026 15:28:60" 3-27-2026 "3/27/2026 x" \
	"3/27/2026 15:28:06junk" 3/27/2026x 3/27/26; do
	run "$in" -o x.csv -b "$t"
	expect_rc 2 "bad time '$t'"
	expect_err "bad time" "bad time '$t'"
done
# February 29 of a leap year is a date: a window that misses the log, not a usage error
run "$in" -o x.csv -e 2/29/2024
expect_rc 1 "-e 2/29/2024"
expect_err "no record of the log lies in the time window" "-e 2/29/2024"
run "$in" -o x.csv -b "3/27/2026 15:30:00" -e "3/27/2026 15:28:00"
expect_rc 2 "-b after -e"
run "$in" -o x.csv -c
expect_rc 2 "-c without paths"
run "$in" -o x.csv -cf "$tmp/none.txt"
expect_rc 2 "-cf missing file"
expect_err "cannot read" "-cf missing file"
[ ! -e x.csv ] || fail "a refused command line wrote x.csv"

# ---- bad input logs ------------------------------------------------------------------------
run "$tmp/missing.csv" -q
expect_rc 1 "missing input"
expect_err "The file was not found" "missing input"
run "$data/notalog.csv" -o x.csv
expect_rc 1 "not a log"
expect_err "not a CSV or TSV counter log" "not a log"
run "$data/badstamp.csv" -o x.csv
expect_rc 1 "bad time stamp"
expect_err "corrupt" "bad time stamp"
run "$data/extra.csv" -q
expect_rc 1 "extra fields"
expect_err "corrupt" "extra fields"
run "$data/badzone.csv" -q
expect_rc 1 "bad time zone in the header"
expect_err "not a CSV or TSV counter log" "bad time zone in the header"
run "$data/headeronly.csv" -o x.csv
expect_rc 1 "no records"
expect_err "no record of the log lies in the time window" "no records"
run "$data/headeronly.csv" -q
expect_rc 0 "-q of a log without records"
expect_out "Samples:  0" "-q of a log without records"
[ ! -e x.csv ] || fail "a failed relog wrote x.csv"
# a record cut short: kept, its missing values empty
run "$data/truncated.csv" -o t.csv
expect_rc 0 "truncated log"
[ "$(records t.csv)" -eq 4 ] || fail "truncated log: $(records t.csv) records, expected 4"
# its header (typeperf's) names no time zone: the output names this machine's
head -n 1 t.csv | grep -q '^"(PDH-CSV 4.0) (UTC)(0)","' ||
	fail "truncated log: header $(head -n 1 t.csv)"
tail -n 1 t.csv | grep -q '^"03/27/2026 15:28:06.000","3.000000","30.500000"," "," "' ||
	fail "truncated log: last record $(tail -n 1 t.csv | cat -A)"
# typeperf's console output (empty first line, closing messages) is a log too
run "$data/console.csv" -o c.csv
expect_rc 0 "console log"
[ "$(records c.csv)" -eq 3 ] || fail "console log: $(records c.csv) records"
# unknown counters
run "$in" -o x.csv -c '\Demo(*)\Nope'
expect_rc 1 "unknown counter"
expect_err 'The counter is not in the log' "unknown counter"
run "$in" -o x.csv -c '\Nope\Free'
expect_rc 1 "unknown object"
run "$in" -o x.csv -c '\\other\Memory\Free'
expect_rc 1 "other computer"
run "$in" -o x.csv -c 'Demo(a)'
expect_rc 1 "malformed path"
expect_err 'malformed' "malformed path"
[ ! -e x.csv ] || fail "a failed relog wrote x.csv"

# ---- -q ------------------------------------------------------------------------------------
run "$in" -q
expect_rc 0 "-q"
for s in "Input" "File(s):" "$in (CSV)" "Begin:    3/27/2026 15:28:00" \
	"End:      3/27/2026 15:28:18" "Samples:  10" '\\host1\Demo(a)\Requests/sec' \
	'\\host1\Memory\Free' "The command completed successfully."; do
	expect_out "$s" "-q"
done
run "$in" -q -o list.txt
expect_rc 0 "-q -o"
[ "$(wc -l <list.txt)" -eq 4 ] || fail "-q -o: $(cat list.txt)"
head -n 1 list.txt | grep -qxF '\\host1\Demo(a)\Requests/sec' || fail "-q -o order"

# ---- conversions ---------------------------------------------------------------------------
# in.csv's header names its time zone: the copy keeps it (its stamps are that zone's)
run "$in" -o same.csv
expect_rc 0 "identity"
cmp -s same.csv "$in" || fail "relog of a CSV log into CSV changed it"
for s in "Output" "File:     same.csv" "Samples:  10" "End:      3/27/2026 15:28:18"; do
	expect_out "$s" "identity"
done
run "$in" -f tsv -o log.tsv
expect_rc 0 "to TSV"
head -n 1 log.tsv | grep -q '^"(PDH-TSV 4.0) (Central European Standard Time)(-60)"'"$(printf '\t')" ||
	fail "TSV header: $(head -n 1 log.tsv)"
[ "$(tr -cd '\t' <log.tsv | wc -c)" -eq 44 ] || fail "TSV: 4 tabs per line expected"
run log.tsv -o back.csv
expect_rc 0 "from TSV"
cmp -s back.csv "$in" || fail "CSV -> TSV -> CSV changed the log"
expect_out "log.tsv (TSV)" "from TSV"
# an existing output: refused without -y (no terminal to ask), replaced with -y
run "$in" -o back.csv -t 5
expect_rc 1 "existing output without -y"
expect_err "already exists" "existing output without -y"
cmp -s back.csv "$in" || fail "a refused overwrite changed the file"
run "$in" -o back.csv -t 5 -y
expect_rc 0 "-y"
[ "$(records back.csv)" -eq 2 ] || fail "-y: not overwritten"

# ---- -t, -b, -e ----------------------------------------------------------------------------
run "$in" -o t3.csv -t 3
expect_rc 0 "-t 3"
[ "$(stamps t3.csv | cut -c18-19 | tr '\n' ' ')" = "00 06 12 18 " ] ||
	fail "-t 3 kept $(stamps t3.csv | tr '\n' ' ')"
expect_out "Samples:  4" "-t 3"
run "$in" -o t99.csv -t 99
expect_rc 0 "-t 99"
[ "$(records t99.csv)" -eq 1 ] || fail "-t 99: $(records t99.csv) records"
run "$in" -o w1.csv -b 3/27/2026 15:28:04 -e "3/27/2026 15:28:12"
expect_rc 0 "-b/-e"
[ "$(stamps w1.csv | cut -c18-19 | tr '\n' ' ')" = "04 06 08 10 12 " ] ||
	fail "-b/-e kept $(stamps w1.csv | tr '\n' ' ')"
for s in "Begin:    3/27/2026 15:28:04" "End:      3/27/2026 15:28:12" "Samples:  5"; do
	expect_out "$s" "-b/-e Output block"
done
# /switch:value, --switch=value, hours only, and a window between two records
run "$in" "/o:w2.csv" "/b:3/27/2026 15:28:05" "--e=3/27/2026 15:28:11" "/T:2"
expect_rc 0 "/b: --e= /T:"
[ "$(stamps w2.csv | cut -c18-19 | tr '\n' ' ')" = "06 10 " ] ||
	fail "/b: --e= /T: kept $(stamps w2.csv | tr '\n' ' ')"
run "$in" -o w3.csv -e 3/27/2026 15
expect_rc 1 "window before the log"
expect_err "no record of the log lies in the time window" "window before the log"
run "$in" -o w4.csv -b 3/28/2026
expect_rc 1 "window after the log"
run "$in" -o w5.csv -b 3/27/2026 -e "3/27/2026 15:28"
expect_rc 0 "date only, H:MM"
[ "$(records w5.csv)" -eq 1 ] || fail "date only, H:MM: $(records w5.csv) records"

# ---- counters ------------------------------------------------------------------------------
run "$in" -o c1.csv -c '\Demo(*)\Requests/sec' '\\HOST1\Memory\Free'
expect_rc 0 "-c"
head -n 1 c1.csv | tr -d '\r' | grep -qxF '"(PDH-CSV 4.0) (Central European Standard Time)(-60)","\\host1\Demo(a)\Requests/sec","\\host1\Demo(b)\Requests/sec","\\host1\Memory\Free"' ||
	fail "-c header: $(head -n 1 c1.csv)"
sed -n 3p c1.csv | tr -d '\r' | grep -qxF '"03/27/2026 15:28:02.000","1.000000","10.500000"," "' ||
	fail "-c values: $(sed -n 3p c1.csv)"
run "$in" -o c2.csv -cf "$data/counters.txt"
expect_rc 0 "-cf"
cmp -s c1.csv c2.csv || fail "-cf and -c differ"
run "$in" -o c3.csv -c '\Demo(a)\*'
expect_rc 0 "-c counter wildcard"
[ "$(head -n 1 c3.csv | tr -cd ',' | wc -c)" -eq 2 ] || fail "-c wildcard: $(head -n 1 c3.csv)"

# repeated instance names: a plain name is the first, #1 the second, (*) every one
for c in 'a:1.000000' 'a#1:2.000000' 'A#1:2.000000' '*:1.000000,2.000000,3.000000'; do
	run "$data/dup.csv" -o d.csv -y -c "\\Demo(${c%%:*})\\Queue"
	expect_rc 0 "dup ${c%%:*}"
	v=$(sed -n 2p d.csv | tr -d '\r"' | cut -d, -f2-)
	[ "$v" = "${c#*:}" ] || fail "dup ${c%%:*}: values $v, expected ${c#*:}"
done

# ---- a log typeperf wrote from a live provider ---------------------------------------------
prov=$OUTPUT/tests/helpers/tp_provider
tp=$TOOLS/typeperf
if [ ! -x "$prov" ] || [ ! -x "$tp" ] || ! mkdir "$root" 2>/dev/null; then
	echo "SKIP: the live part (no BPF or helpers; the offline checks passed)"
	exit 0
fi
export PERFLIB_ROOT=$root
"$prov" >"$tmp/prov.out" 2>&1 &
pid=$!
n=0
until grep -q ready "$tmp/prov.out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 500 ] || fail "tp_provider did not start: $(cat "$tmp/prov.out")"
	sleep 0.02
done
"$tp" '\TP Demo(*)\*' -sc 4 -si 1 -o live.csv -y >/dev/null 2>"$tmp/tp.err" ||
	fail "typeperf: $(cat "$tmp/tp.err")"
run live.csv -o live2.csv
expect_rc 0 "live log"
# typeperf's header has no time zone, relog's names this machine's; the rest is the same
head -n 1 live.csv | grep -q '^"(PDH-CSV 4.0)","' || fail "typeperf header: $(head -n 1 live.csv)"
[ "$(head -n 1 live2.csv)" = "$(head -n 1 live.csv | sed 's/^"(PDH-CSV 4.0)"/"(PDH-CSV 4.0) (UTC)(0)"/')" ] ||
	fail "relog of typeperf's live log: header $(head -n 1 live2.csv)"
[ "$(tail -n +2 live.csv)" = "$(tail -n +2 live2.csv)" ] || fail "relog of typeperf's live log changed it"
run live.csv -o live3.csv -t 2 -c '\TP Demo(alpha#1)\*'
expect_rc 0 "live log, duplicate instance"
[ "$(records live3.csv)" -eq 2 ] || fail "live -t 2: $(records live3.csv) records"
head -n 1 live3.csv | grep -qF '(alpha#1)' || fail "live #1 column: $(head -n 1 live3.csv)"
head -n 1 live3.csv | grep -q '(alpha)\|(beta)' && fail "live #1 kept others: $(head -n 1 live3.csv)"
# the kept values are typeperf's values of those columns, records 1 and 3
col=$(head -n 1 live.csv | tr ',' '\n' | grep -n '(alpha#1)' | head -n 1 | cut -d: -f1)
want=$(sed -n 2p live.csv | cut -d, -f"$col")
got=$(sed -n 2p live3.csv | cut -d, -f2)
[ "$want" = "$got" ] || fail "live value: relog $got, typeperf $want"
echo "relog: all checks passed"
