#!/bin/sh
# SPDX-License-Identifier: MIT
# test_tool_links.sh - each tool links only what it uses (issue 11): tools/common is linked
# as an archive and libxml2 as needed, so only the tools that read manifests (ctrpp, lodctr,
# unlodctr, kcounters, perflib-sysd) need libxml2, and only the exporter libmicrohttpd.
# Environment: OUTPUT (absolute build dir), TOOLS (default $OUTPUT/tools). Exit 0 pass.
set -u
: "${OUTPUT:?}"
TOOLS=${TOOLS:-$OUTPUT/tools}
fail() { echo "FAIL: $*" >&2; exit 1; }
needs() { readelf -d "$TOOLS/$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
for t in ctrpp lodctr unlodctr kcounters perflib-sysd perflib-demo typeperf relog \
	perflib-exporter; do
	[ -x "$TOOLS/$t" ] || fail "$TOOLS/$t is not built"
	n=$(needs "$t")
	case $t in
	ctrpp | lodctr | unlodctr | kcounters | perflib-sysd)
		echo "$n" | grep -q '^libxml2' || fail "$t does not need libxml2 (manifest reader?)" ;;
	*) echo "$n" | grep -q '^libxml2' && fail "$t needs libxml2: $(echo $n)" ;;
	esac
	case $t in
	perflib-exporter) echo "$n" | grep -q '^libmicrohttpd' || fail "$t lacks libmicrohttpd" ;;
	*) echo "$n" | grep -q '^libmicrohttpd' && fail "$t needs libmicrohttpd: $(echo $n)" ;;
	esac
	echo "ok    $t: $(echo $n)"
done
# the manifest reader is not even in the binaries that do not read manifests
for t in perflib-demo typeperf relog perflib-exporter; do
	nm "$TOOLS/$t" 2>/dev/null | grep -q ' T manifest_\| T perflib_manifest' &&
		fail "$t contains the manifest reader"
done
echo "tool links: all checks passed"
