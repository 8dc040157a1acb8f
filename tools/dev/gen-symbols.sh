#!/bin/sh
# SPDX-License-Identifier: MIT
# gen-symbols.sh MAP SONAME PACKAGE - the Debian symbols file (deb-symbols(5)) of a library
# from its version script: every name of node NAME_X.Y, and the node itself, with the
# minimal version X.Y.0 (the Makefile's rule: a library's version is its newest node).
# debian/rules writes the packages' symbols files with it; tests/tools/test_symbols.sh
# checks the result against nm -D of the built libraries.
set -eu
map=$1 soname=$2 pkg=$3
printf '%s %s #MINVER#\n' "$soname" "$pkg"
printf '* Build-Depends-Package: libperflib-dev\n'
awk '
/^[A-Za-z_][A-Za-z0-9_]*_[0-9]+\.[0-9]+[ \t]*\{/ {
	node = $1; sub(/[ \t]*\{.*/, "", node)
	ver = node; sub(/^.*_/, "", ver); ver = ver ".0"
	print " " node "@" node " " ver
	next
}
/^[ \t]*local:/ { node = ""; next }
/^\}/ { node = ""; next }
node != "" && /^[ \t]*[A-Za-z_][A-Za-z0-9_]*;/ {
	s = $1; sub(/;.*/, "", s)
	print " " s "@" node " " ver
}' "$map" | LC_ALL=C sort
