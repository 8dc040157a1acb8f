#!/bin/sh
# SPDX-License-Identifier: MIT
# test_symbols.sh - the Debian symbols files that tools/dev/gen-symbols.sh makes from the
# version scripts (debian/rules writes them) list exactly what the built libraries export,
# with the version node nm -D shows for each symbol; and a node without its package version
# is refused. Environment: OUTPUT (the build).
set -u
: "${OUTPUT:?}"
cd "$(dirname "$0")/../.."
nfail=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pdh_nodes=$(sed -n 's/^PDH_NODES := //p' debian/rules)
w32_nodes=$(sed -n 's/^W32_NODES := //p' debian/rules)

check() { # $1 = library, $2 = map, $3 = soname, $4 = package, rest = NODE=VERSION
	lib=$1 map=$2 soname=$3 pkg=$4
	shift 4
	sh tools/dev/gen-symbols.sh "$map" "$soname" "$pkg" "$@" >"$work/sym" ||
		{ fail "gen-symbols.sh $map failed"; return; }
	head -1 "$work/sym" | grep -qx "$soname $pkg #MINVER#" || fail "$pkg: header $(head -1 "$work/sym")"
	[ "$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" = "$soname" ] ||
		fail "$lib: soname is not $soname"
	# "name@node" from the file; "name@node" (default @@ or hidden @) from nm, without
	# the version nodes' own symbols, which nm -D shows as absolute entries
	sed -n 's/^ \([^ ]*\) .*/\1/p' "$work/sym" | LC_ALL=C sort >"$work/listed"
	# nm -D shows a version node's own symbol bare ("PDH_1.0", absolute): as NODE@NODE
	nm -D --defined-only "$lib" | awk '{ print $3 }' | sed 's/@@*/@/' |
		awk -F@ 'NF == 1 { $0 = $1 "@" $1 } { print }' | LC_ALL=C sort -u >"$work/exported"
	if diff "$work/listed" "$work/exported" >"$work/diff"; then
		echo "ok: $pkg.symbols lists the $(wc -l <"$work/listed") symbols $(basename "$lib") exports"
	else
		fail "$pkg.symbols differs from nm -D $lib (< symbols file, > library):"
		sed 's/^/      /' "$work/diff"
	fi
	# every version is a Debian version and no symbol appears before its node's release
	awk 'NR > 2 && $2 !~ /^[0-9]+\.[0-9]+\.[0-9]+$/ { exit 1 }' "$work/sym" ||
		fail "$pkg: a minimal version is not X.Y.Z"
}
check "$OUTPUT/libperflib.so.1" userspace/perflib.map libperflib.so.1 libperflib1
# shellcheck disable=SC2086
check "$OUTPUT/libpdh.so.1" pdh/pdh.map libpdh.so.1 libpdh1 $pdh_nodes
# shellcheck disable=SC2086
check "$OUTPUT/libperflib-win32.so.1" win32/win32.map libperflib-win32.so.1 libperflib-win32-1 \
	$w32_nodes

# a libpdh node that debian/rules does not list fails the generation
sh tools/dev/gen-symbols.sh pdh/pdh.map libpdh.so.1 libpdh1 PDH_1.0=1.4.0 >/dev/null 2>"$work/err" &&
	fail "a node without its version was accepted"
grep -q "PDH_1.1 has no NODE=VERSION" "$work/err" || fail "no message for the missing node: $(cat "$work/err")"
[ "$nfail" -eq 0 ] && echo "ok: an unlisted node is refused"
[ "$nfail" -eq 0 ]
