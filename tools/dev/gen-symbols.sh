#!/bin/sh
# SPDX-License-Identifier: MIT
# gen-symbols.sh MAP SONAME PACKAGE [NODE=VERSION ...] - the Debian symbols file
# (deb-symbols(5)) of a library from its version script: every name of node NAME_X.Y, and the
# node itself, with the package version that brought it. By default that is X.Y.0: the
# project's version is libperflib's newest node (Makefile), so for libperflib a node's version
# is the release that added it. libpdh's nodes count on their own: each needs NODE=VERSION
# (the project version of the first package holding it), and a node without one fails.
# debian/rules writes the packages' symbols files with it; tests/build/test_symbols.sh
# checks the result against nm -D of the built libraries.
set -eu
map=$1 soname=$2 pkg=$3
shift 3
given="$*"
printf '%s %s #MINVER#\n' "$soname" "$pkg"
printf '* Build-Depends-Package: libperflib-dev\n'
syms=$(awk -v given="$given" '
BEGIN {
	n = split(given, g, " ")
	for (i = 1; i <= n; i++) { split(g[i], kv, "="); at[kv[1]] = kv[2] }
	strict = n > 0
}
/^[A-Za-z_][A-Za-z0-9_]*_[0-9]+\.[0-9]+[ \t]*\{/ {
	node = $1; sub(/[ \t]*\{.*/, "", node)
	ver = node; sub(/^.*_/, "", ver); ver = ver ".0"
	if (node in at) ver = at[node]
	else if (strict) {
		print "gen-symbols.sh: node " node " has no NODE=VERSION" > "/dev/stderr"
		exit 1
	}
	print " " node "@" node " " ver
	next
}
/^[ \t]*local:/ { node = ""; next }
/^\}/ { node = ""; next }
node != "" && /^[ \t]*[A-Za-z_][A-Za-z0-9_]*;/ {
	s = $1; sub(/;.*/, "", s)
	print " " s "@" node " " ver
}' "$map")
printf '%s\n' "$syms" | LC_ALL=C sort
