#!/bin/sh
# SPDX-License-Identifier: MIT
# test_completion.sh - bash completion (completion/): typeperf completes counter paths from
# the live registrations of a test provider (the demo manifest registered with lodctr,
# perflib-demo publishing worker-1 and worker-2): object, instances, counters, quoted or not,
# any case, hidden counters left out, a lone object or instance offered with its next step;
# the other tools' switches and values.
# Environment: TOOLS. Exit 0 pass, 77 skip (no BPF), other fail.
set -u
: "${TOOLS:?}"
cd "$(dirname "$0")/../.."
skip() { echo "SKIP: $*"; exit 77; }
nfail=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
command -v bash >/dev/null || skip "no bash"
[ "$(id -u)" = 0 ] || skip "registering the test provider needs root (CAP_BPF)"
[ -d /sys/fs/bpf ] || skip "no bpffs at /sys/fs/bpf"

PERFLIB_ROOT=/sys/fs/bpf/perflib-test-comp-$$
export PERFLIB_ROOT
work=$(mktemp -d)
demo=""
cleanup() {
	[ -n "$demo" ] && kill "$demo" 2>/dev/null && wait "$demo" 2>/dev/null
	"$TOOLS/unlodctr" /m:tools/perflib-demo/demo.man --force >/dev/null 2>&1
	rm -rf "$PERFLIB_ROOT" "$work"
}
trap cleanup EXIT INT TERM
"$TOOLS/lodctr" /m:tools/perflib-demo/demo.man >"$work/lodctr" 2>&1 ||
	skip "lodctr refused: $(cat "$work/lodctr")"
"$TOOLS/perflib-demo" --seconds 120 >"$work/demo" 2>&1 &
demo=$!
i=0
until "$TOOLS/typeperf" -qx "Demo Service" 2>/dev/null | grep -q worker-2 || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done

# comp WORDS... : COMPREPLY of the completion function for the last word, one per line
cat >"$work/comp.bash" <<'EOS'
PATH="$TOOLS:$PATH"
. completion/typeperf
. completion/perflib-sysd
. completion/perflib-exporter
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMP_LINE="$*"
fn=$(complete -p "$1" | sed 's/.*-F \([^ ]*\) .*/\1/')
"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\n' "${COMPREPLY[@]}"
EOS
comp() { bash "$work/comp.bash" "$@"; }
expect() { # $1 = what, $2 = expected lines (sorted), rest = words
	what=$1 want=$2
	shift 2
	got=$(comp "$@" | LC_ALL=C sort)
	if [ "$got" = "$(printf '%s\n' "$want" | LC_ALL=C sort)" ]; then
		echo "ok: $what"
	else
		fail "$what: got [$got], expected [$want]"
	fi
}
Q='"'
B='\'
inst="$Q${B}Demo Service(*)$B
$Q${B}Demo Service(_Total)$B
$Q${B}Demo Service(worker-1)$B
$Q${B}Demo Service(worker-2)$B"
# one object alone comes with its instances: readline puts in the common part and keeps the
# quote open (a single match would be closed, as if complete)
expect 'typeperf "\De -> the object with its "(", and its instances' "$Q${B}Demo Service(
$inst" typeperf "$Q${B}De"
expect 'unquoted, any case: \demo -> the same, in double quotes' "$Q${B}Demo Service(
$inst" typeperf "${B}demo"
expect '"\Demo Service( -> the instances, "*" and _Total' "$inst" typeperf "$Q${B}Demo Service("
expect '"\Demo Service(worker-1 -> the instance with its counters' \
	"$Q${B}Demo Service(worker-1)$B
$Q${B}Demo Service(worker-1)${B}Active Requests
$Q${B}Demo Service(worker-1)${B}Bytes Sent/sec
$Q${B}Demo Service(worker-1)${B}Cache Hit %
$Q${B}Demo Service(worker-1)${B}Requests/sec" typeperf "$Q${B}Demo Service(worker-1"
expect '"\Demo Service(w -> the workers' \
	"$Q${B}Demo Service(worker-1)$B
$Q${B}Demo Service(worker-2)$B" typeperf "$Q${B}Demo Service(w"
expect '"\Demo Service(worker-1)\ -> the counters, the noDisplay base left out' \
	"$Q${B}Demo Service(worker-1)${B}Active Requests
$Q${B}Demo Service(worker-1)${B}Bytes Sent/sec
$Q${B}Demo Service(worker-1)${B}Cache Hit %
$Q${B}Demo Service(worker-1)${B}Requests/sec" typeperf "$Q${B}Demo Service(worker-1)$B"
expect 'a wildcard instance keeps what was typed' \
	"$Q${B}Demo Service(*)${B}Requests/sec" typeperf "$Q${B}Demo Service(*)${B}Req"
expect 'after -qx: the object names' "Demo Service" typeperf -qx "Dem"
expect 'typeperf -f' "CSV
TSV" typeperf -f ""
expect 'an unknown object: nothing' "" typeperf "$Q${B}NoSuchObject"

# the same provider gone: nothing to complete (the registrations are read at each TAB)
kill "$demo" && wait "$demo" 2>/dev/null
demo=""
"$TOOLS/unlodctr" /m:tools/perflib-demo/demo.man >/dev/null 2>&1
expect 'after unlodctr: no Demo Service' "" typeperf "$Q${B}De"

expect 'lodctr --gr' "--group" lodctr --gr
expect 'kcounters: its commands' "--help
load
status
unload" kcounters ""
expect 'kcounters load --' "--group
--manifest
--mode" kcounters load --
expect 'perflib-sysd run --m' "--max-cgroups
--max-processes
--mode" perflib-sysd run --m
expect 'perflib-exporter --format' "openmetrics
prometheus" perflib-exporter --format ""
expect 'relog -f T' "TSV" relog -f T
expect 'ctrpp -No' "-NotificationCallback" ctrpp -No
[ "$nfail" -eq 0 ]
