#!/bin/sh
# SPDX-License-Identifier: MIT
# test_model.sh - the protocol by which processes grow, retire and open the segments of a
# counter set and claim slots in them: tests/model/retire.pml (its header says what is modelled
# and checked) verified exhaustively by spin (safety: assertions and end states; no bitstate,
# no hash compaction):
#  - the protocol of today must pass: 0 errors, the full state space within the depth;
#  - the old one (-DOLD) must fail, and so must each half of it: -DOLD_CLAIM (claim_scan checks
#    nr_segs, not the epoch) with a claim in a retired segment (p1_claim_live: the ABA on
#    nr_segs, the SIGSEGV in perflib_slot_publish), -DOLD_REFRESH (an open a retirement raced
#    fails) with a create failing (p4_create_ok: ERROR_NOT_FOUND); their shortest
#    counterexamples are printed, and the violations of -DOLD counted (smaller bounds, pan -c0);
#  - the loads of the control word in the wrong order must fail too: nr_segs before the
#    epoch in the refresh (-DCTL_NR_FIRST), the epoch before nr_segs in claim_scan's check
#    (-DCLAIM_EPOCH_FIRST).
# States, depth and seconds are printed for each. About 10 s on one core, 350 MB.
# Exit: 0 passed, 1 failed, 77 skipped (spin or cc not installed: CI installs spin).
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
model=$root/tests/model/retire.pml
for t in spin cc; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "$t is not installed"
		exit 77
	fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_model.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
failures=0

ok() { echo "ok    $*"; }
fail() {
	echo "FAIL  $*"
	failures=$((failures + 1))
}

# verify <name> <cc options> <pan options> -- <spin options>: pan's report in $tmp/<name>/out
verify() {
	name=$1
	copts=$2
	popts=$3
	shift 4
	d=$tmp/$name
	mkdir "$d" && cp "$model" "$d/retire.pml" || return 1
	(
		cd "$d" || exit 1
		if ! spin -a "$@" retire.pml >spin.log 2>&1; then
			cat spin.log
			exit 1
		fi
		# exhaustive: no BITSTATE nor hash compaction; a state vector of ~80 bytes
		# shellcheck disable=SC2086
		if ! cc $copts -DSAFETY -DVECTORSZ=1024 -o pan pan.c >cc.log 2>&1; then
			tail -20 cc.log
			exit 1
		fi
		# shellcheck disable=SC2086
		./pan -m10000 -w22 $popts >out 2>&1
		exit 0
	)
}

# figures <name>: "<states> states, depth <depth>, <seconds> s" of its run
figures() {
	o=$tmp/$1/out
	printf '%s states, depth %s, %s s' \
		"$(sed -n 's/^ *\([0-9][0-9]*\) states, stored.*/\1/p' "$o")" \
		"$(sed -n 's/.*depth reached \([0-9][0-9]*\).*/\1/p' "$o")" \
		"$(sed -n 's/^pan: elapsed time \([0-9.e+-]*\) seconds.*/\1/p' "$o")"
}

errors() { sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$tmp/$1/out"; }

# violated <name>: the property of its (first) violation
violated() {
	sed -n 's/^pan:1: assertion violated .*(\(p[0-9]_[a-z_]*\)&&.*/\1/p' "$tmp/$1/out" | head -1
}

# trail <name> <spin options>: the steps of its counterexample (not those on counters and
# temporaries, nor conditions and assertions that held), then the assertion violated
trail() {
	name=$1
	shift
	(cd "$tmp/$name" && spin -t -p "$@" retire.pml 2>&1) |
		sed -n 's/^ *[0-9]*:[[:space:]]*proc  *\([1-9]\) (\([A-Za-z]*\):1) [^[]*\[\(.*\)\]$/\2 \1: \3/p' |
		grep -Ev ': (made|t) = |: [cednl] = 0$|: kept = |: \(\(|: else$|: \.\(goto\)$' |
		grep -Ev ': break$|: (skip|1|\(1\))$|: assert\(' | tail -30 | sed 's/^/      /'
	(cd "$tmp/$name" && spin -t "$@" retire.pml 2>&1) |
		sed -n -e 's/^spin: \(text of failed assertion\)/      \1/p' \
			-e 's/^spin: \(trail ends\)/      \1/p'
}

# ---- the protocol of today: must pass -----------------------------------------------------
if ! verify new -O2 "" --; then
	fail "new protocol: spin or cc failed"
else
	o=$tmp/new/out
	n=$(errors new)
	if [ -z "$n" ]; then
		fail "new protocol: pan did not finish"
		tail -5 "$o" | sed 's/^/      /'
	elif [ "$n" != 0 ]; then
		fail "new protocol: $n errors ($(figures new))"
		trail new
	elif grep -q 'max search depth too small' "$o" || grep -q 'Search not completed' "$o" ||
		! grep -q 'Full statespace search' "$o"; then
		fail "new protocol: the state space was not explored in full ($(figures new))"
	else
		ok "new protocol: 0 errors, full state space ($(figures new))"
	fi
fi

# ---- the old protocol: must fail ----------------------------------------------------------
if ! verify old -O0 "" -- -DOLD; then
	fail "old protocol: spin or cc failed"
elif [ "$(errors old)" -ge 1 ] 2>/dev/null; then
	ok "old protocol fails: $(violated old) ($(figures old))"
	grep '^pan:1:' "$tmp/old/out" | sed 's/^/      /'
else
	fail "old protocol: no violation found ($(figures old))"
fi

# each half of it alone, with its shortest counterexample (pan -i: -DREACH)
for half in OLD_CLAIM:p1_claim_live OLD_REFRESH:p4_create_ok; do
	v=${half%%:*}
	p=${half#*:}
	if ! verify "$v" "-O0 -DREACH" "-i" -- "-D$v"; then
		fail "-D$v: spin or cc failed"
	elif [ "$(violated "$v")" = "$p" ]; then
		ok "-D$v fails: $p ($(figures "$v")), the shortest counterexample:"
		trail "$v" "-D$v"
	else
		fail "-D$v: $p not violated but '$(violated "$v")' ($(figures "$v"))"
	fi
done

# every violation of the old protocol, counted (smaller bounds: pan goes on past each)
if ! verify old_all -O0 "-c0" -- -DOLD -DRETIRES=1 -DCREATES=1; then
	fail "old protocol (all violations): spin or cc failed"
else
	found=$(sed -n 's/^pan:[0-9]*: assertion violated .*(\(p[0-9]_[a-z_]*\)&&.*/\1/p' \
		"$tmp/old_all/out" | sort | uniq -c | awk '{printf " %s x%s", $2, $1}')
	case $found in
	*" p1_claim_live x"*" p4_create_ok x"*)
		ok "old protocol, all violations: $(errors old_all) errors ($(figures old_all))," \
			"the first ones reported:$found" ;;
	*) fail "old protocol, all violations: p1_claim_live and p4_create_ok not both in:$found" ;;
	esac
fi

# ---- loads of the control word in the wrong order: must fail --------------------------------
for v in CTL_NR_FIRST CLAIM_EPOCH_FIRST; do
	if ! verify "$v" -O0 "" -- "-D$v"; then
		fail "-D$v: spin or cc failed"
	elif [ "$(errors "$v")" -ge 1 ] 2>/dev/null; then
		ok "-D$v fails: $(violated "$v") ($(figures "$v"))"
	else
		fail "-D$v: no violation found ($(figures "$v"))"
	fi
done

[ "$failures" -eq 0 ] || exit 1
exit 0
