#!/bin/sh
# SPDX-License-Identifier: MIT
# check-layers.sh - the dependency graph of the library's objects, from nm: file A depends
# on file B when A has an undefined symbol that B defines. Fails (exit 1) when the graph has
# a cycle outside a layer marked "cycles-tolerated", when a file calls a file of a higher
# layer, or when an object is in no layer. Prints the layers with their files, every
# cross-file edge that breaks a rule, and every cycle (strongly connected component).
#
# usage: check-layers.sh LAYERS-FILE OBJECT.o...
#   LAYERS-FILE  lines "name [cycles-tolerated]: file file ...", bottom layer first;
#                '#' starts a comment; files are object names without directory and ".o"
# Environment: NM (default nm).
set -u
[ $# -ge 2 ] || { echo "usage: check-layers.sh LAYERS-FILE OBJECT.o..." >&2; exit 2; }
layers=$1
shift
nm=${NM:-nm}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for o in "$@"; do
	f=$(basename "$o" .o)
	"$nm" --defined-only -g "$o" | awk -v f="$f" 'NF == 3 { print "D", f, $3 }' || exit 2
	"$nm" -u "$o" | awk -v f="$f" '{ print "U", f, $NF }' || exit 2
	echo "N $f"
done > "$tmp"

awk -v layers="$layers" '
BEGIN {
	nl = 0
	while ((getline line < layers) > 0) {
		sub(/#.*/, "", line)
		if (line !~ /:/)
			continue
		head = substr(line, 1, index(line, ":") - 1)
		rest = substr(line, index(line, ":") + 1)
		nh = split(head, h, " ")
		nl++
		lname[nl] = h[1]
		tolerant[nl] = (nh > 1 && h[2] == "cycles-tolerated")
		n = split(rest, fs, " ")
		for (i = 1; i <= n; i++) {
			layer[fs[i]] = nl
			members[nl] = members[nl] " " fs[i]
		}
	}
}
$1 == "N" { node[++nn] = $2; idx[$2] = nn }
$1 == "D" { def[$3] = $2 }
$1 == "U" { und[++nu] = $2 SUBSEP $3 }
END {
	bad = 0
	for (i = 1; i <= nn; i++) {
		if (!(node[i] in layer)) {
			printf "check-layers: %s.o is in no layer of %s\n", node[i], layers
			bad = 1
		}
	}
	for (k = 1; k <= nu; k++) {
		split(und[k], p, SUBSEP)
		if (!(p[2] in def) || def[p[2]] == p[1])
			continue
		a = idx[p[1]]; b = idx[def[p[2]]]
		if (!((a, b) in edge)) {
			edge[a, b] = p[2]
			reach[a, b] = 1
			ne++
		}
	}
	# transitive closure: a cycle is a pair of files that reach each other
	for (m = 1; m <= nn; m++)
		for (i = 1; i <= nn; i++)
			if ((i, m) in reach)
				for (j = 1; j <= nn; j++)
					if ((m, j) in reach)
						reach[i, j] = 1
	for (a = 1; a <= nn; a++)
		for (b = 1; b <= nn; b++)
			if ((a, b) in edge && layer[node[b]] > layer[node[a]]) {
				printf "check-layers: %s (layer %s) calls %s (layer %s, above it): %s\n", \
					node[a], lname[layer[node[a]]], node[b], \
					lname[layer[node[b]]], edge[a, b]
				bad = 1
			}
	for (l = 1; l <= nl; l++)
		printf "  %-10s%s%s\n", lname[l], members[l], \
			tolerant[l] ? "   (cycles tolerated)" : ""
	for (i = 1; i <= nn; i++) {
		if (done[i] || !((i, i) in reach))
			continue
		scc = ""; n = 0; tol = 1
		for (j = 1; j <= nn; j++)
			if ((i, j) in reach && (j, i) in reach) {
				done[j] = 1
				scc = scc " " node[j]
				n++
				if (!tolerant[layer[node[j]]] || layer[node[j]] != layer[node[i]])
					tol = 0
			}
		printf "check-layers: cycle of %d files:%s%s\n", n, scc, \
			tol ? " (tolerated: layer " lname[layer[node[i]]] ")" : ""
		if (!tol)
			bad = 1
		else
			tolerated++
	}
	printf "check-layers: %d files, %d dependencies, %d layers: %s\n", nn, ne, nl, \
		bad ? "FAILED" : tolerated ? "OK (with tolerated cycles)" : "OK, no cycle"
	exit bad
}' "$tmp"
