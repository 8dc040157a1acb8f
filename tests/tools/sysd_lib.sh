# SPDX-License-Identifier: MIT
# sysd_lib.sh - sourced by the perflib-sysd tests (test_sysd.sh, test_sysd_sets.sh,
# test_cpuperf_port.sh), which define fail() and set S (the perflib-sysd binary) and work
# (a private directory) before calling these.

# sysd_start: run the service in the background (svc = its pid, output in $work/svc.out)
# and wait until it says it runs: up to 60 s (each counter set loads a reaper program,
# slow on a loaded machine)
sysd_start() {
	# emptied here, not by the child's redirection: the loop below could otherwise read the
	# previous run's "running" before the child truncates the file
	: >"$work/svc.out"
	"$S" run >>"$work/svc.out" 2>&1 &
	svc=$!
	i=0
	while ! grep -q running "$work/svc.out" && [ $i -lt 600 ]; do
		kill -0 $svc 2>/dev/null || fail "perflib-sysd run exited: $(cat "$work/svc.out")"
		sleep 0.1
		i=$((i + 1))
	done
	grep -q running "$work/svc.out" || fail "perflib-sysd did not start: $(cat "$work/svc.out")"
}

# within A B TOL: |A - B| <= TOL
within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
