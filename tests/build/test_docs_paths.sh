#!/bin/sh
# SPDX-License-Identifier: MIT
# test_docs_paths.sh - the docs name what is there: every path of this tree named in
# backquotes in README.md, docs/*.md and the tools' READMEs exists, and docs/ARCHITECTURE.md's
# file table lists every source file of userspace/ and nothing that is gone. A file moved,
# split or removed without its docs fails here (issue 33: docs named keys.c long after it
# was removed).
# Exit: 0 passed, 1 failed.
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
failures=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# 1. paths in backquotes: `userspace/x.c`, `tests/tools/`, `bpf/layout.h` ...
docs="README.md docs/*.md tools/*/README.md"
checked=0
# shellcheck disable=SC2086
for f in $docs; do
	[ -f "$f" ] || continue
	grep -oE '`(\.ci|bpf|common|docs|include|pdh|tests|tools|userspace)/[][{},A-Za-z0-9_./-]*`' "$f" |
		tr -d '`' | sort -u | while read -r p; do
		# test_x_{a,b}.c names test_x_a.c and test_x_b.c; lines.[ch] names lines.c and lines.h
		for alt in $(bash -c "printf '%s\\n' $p"); do
			case $alt in
			*'['*) for m in $alt; do [ -e "$m" ] || echo "$f names $alt ($p), which does not exist"; done ;;
			*) [ -e "$alt" ] || echo "$f names $alt, which does not exist" ;;
			esac
		done
	done
done >"${TMPDIR:-/tmp}/docs_paths.$$"
checked=$(grep -hoE '`(\.ci|bpf|common|docs|include|pdh|tests|tools|userspace)/[][{},A-Za-z0-9_./-]*`' \
	README.md docs/*.md tools/*/README.md 2>/dev/null | sort -u | wc -l)
while read -r line; do
	fail "$line"
done <"${TMPDIR:-/tmp}/docs_paths.$$"
rm -f "${TMPDIR:-/tmp}/docs_paths.$$"

# 2. ARCHITECTURE.md's file table against userspace/
listed=$(sed -n 's/^| `\(userspace\/[^`]*\)` |.*/\1/p' docs/ARCHITECTURE.md | sort -u)
for p in $listed; do
	[ -e "$p" ] || fail "docs/ARCHITECTURE.md's file table lists $p, which does not exist"
done
for p in userspace/*.c userspace/*.h; do
	echo "$listed" | grep -qx "$p" || fail "docs/ARCHITECTURE.md's file table does not list $p"
done

if [ "$failures" -ne 0 ]; then
	echo "$failures paths named in the docs do not match the tree"
	exit 1
fi
echo "ok: $checked paths named in the docs exist; the file table lists the $(echo "$listed" | wc -l) files of userspace/"
