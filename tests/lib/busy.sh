# shellcheck shell=sh
# SPDX-License-Identifier: MIT
# busy.sh - one busy loop per core beside a test run, for tests/stress/load.sh and fresh.sh
# (sourced). busy_start starts them; busy_stop (also on EXIT, INT and TERM, which it traps)
# stops them. $cores is the count.
busy=""
cores=$(nproc)
busy_stop() {
	# shellcheck disable=SC2086
	[ -z "$busy" ] || kill $busy 2>/dev/null
	busy=""
}
trap 'busy_stop' EXIT
trap 'busy_stop; exit 1' INT TERM
busy_start() {
	_b=0
	while [ "$_b" -lt "$cores" ]; do
		sh -c 'while :; do :; done' &
		busy="$busy $!"
		_b=$((_b + 1))
	done
}
