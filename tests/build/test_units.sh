#!/bin/sh
# SPDX-License-Identifier: MIT
# test_units.sh - the systemd units of systemd/*.service.in: make fills in the installed
# paths for the PREFIX given (no /usr/local in a /usr build); systemd-analyze verify accepts
# them (executables, man pages of Documentation=, the bpffs ordering); the sandbox is what
# the units promise (systemd-analyze security --offline: the exposure levels, the exporter's
# user and empty capability set, sysd's two capabilities).
# Environment: OUTPUT, TOOLS. systemd does not need to be PID 1.
set -u
: "${OUTPUT:?}" "${TOOLS:?}"
cd "$(dirname "$0")/../.."
nfail=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { echo "ok: $*"; }
command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing (make deps)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# make units with PREFIX=/usr: the paths of the packages
make -s --no-print-directory units PREFIX=/usr OUTPUT="$work/out/" >/dev/null 2>&1 ||
	fail "make units PREFIX=/usr failed"
for u in perflib-sysd perflib-exporter; do
	f="$work/out/systemd/$u.service"
	grep -q "^ExecStart=/usr/bin/$u " "$f" || fail "$u: ExecStart is not /usr/bin/$u: $(grep ^ExecStart "$f")"
	! grep -q /usr/local "$f" || fail "$u: /usr/local in a PREFIX=/usr unit"
	! grep -q @BINDIR@ "$f" || fail "$u: @BINDIR@ left"
done
[ "$nfail" -eq 0 ] && ok "make units PREFIX=/usr: ExecStart=/usr/bin/..."

# the units as they run the built tools, the pages where man finds them
mkdir -p "$work/units" "$work/man"
for u in systemd/*.service.in; do
	sed "s|@BINDIR@|$TOOLS|g" "$u" >"$work/units/$(basename "$u" .in)"
done
for p in man/*.[1-8]; do
	mkdir -p "$work/man/man${p##*.}" && cp "$p" "$work/man/man${p##*.}/"
done
cd "$work/units"
if MANPATH="$work/man" systemd-analyze verify ./perflib-sysd.service ./perflib-exporter.service \
	>"$work/verify" 2>&1; then
	ok "systemd-analyze verify accepts both units"
else
	fail "systemd-analyze verify: $(cat "$work/verify")"
fi
# a Documentation= page that does not exist is what verify reports (it checks them)
sed 's|man:perflib-sysd(8)|man:perflib-nosuch(8)|' perflib-sysd.service >"$work/bad.service"
MANPATH="$work/man" systemd-analyze verify "$work/bad.service" >/dev/null 2>&1 &&
	fail "verify accepted a missing man page: the check checks nothing"

exposure() { # $1 = unit: its overall exposure level ("1.6")
	systemd-analyze security --offline=true "./$1.service" 2>/dev/null |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}
for u in perflib-sysd perflib-exporter; do
	e=$(exposure $u)
	[ -n "$e" ] || { fail "$u: no exposure level"; continue; }
	awk -v e="$e" 'BEGIN { exit !(e <= 2.0) }' && ok "$u: exposure $e (at most 2.0)" ||
		fail "$u: exposure $e, more than 2.0"
done
systemd-analyze security --offline=true ./perflib-exporter.service >"$work/exp" 2>&1
grep -q '✓ User=/DynamicUser=' "$work/exp" || fail "exporter: runs as root?"
grep -q '✗ CapabilityBoundingSet' "$work/exp" && fail "exporter: capabilities left: $(grep '✗ CapabilityBoundingSet' "$work/exp")"
grep -q '^User=perflib-exporter$' perflib-exporter.service || fail "exporter: User= is not perflib-exporter"
grep -q '^SupplementaryGroups=perflib-monitor$' perflib-exporter.service ||
	fail "exporter: not in perflib-monitor"
grep -q '^CapabilityBoundingSet=CAP_BPF CAP_PERFMON$' perflib-sysd.service ||
	fail "sysd: capabilities are not CAP_BPF CAP_PERFMON"
systemd-analyze security --offline=true ./perflib-sysd.service >"$work/sysd" 2>&1
for c in CAP_SYS_ADMIN CAP_SYS_PTRACE CAP_NET_ADMIN CAP_DAC_OVERRIDE CAP_CHOWN CAP_SYS_MODULE; do
	grep -q "✗ CapabilityBoundingSet=~.*$c" "$work/sysd" && fail "sysd keeps $c"
done
[ "$nfail" -eq 0 ] && ok "exporter: user perflib-exporter, no capability; sysd: CAP_BPF CAP_PERFMON only"
[ "$nfail" -eq 0 ]
