#!/bin/sh
# SPDX-License-Identifier: MIT
# test_manpages.sh - the man pages (man/): each renders without a groff or man warning; every
# tool with a binary has a page; every option its --help lists ("-x", "--long", "-?") appears
# in that page. A tool that gains an option without its page fails here.
# Environment: TOOLS (the built tools).
set -u
: "${TOOLS:?}"
cd "$(dirname "$0")/../.."
nfail=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { echo "ok: $*"; }
command -v groff >/dev/null || { echo "groff missing (make deps installs it)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for page in man/*.[1-8]; do
	err=$(groff -man -ww -z "$page" 2>&1)
	[ -z "$err" ] || fail "$page: groff: $err"
	err=$(LC_ALL=C.UTF-8 MANROFFSEQ='' man --warnings -l "$page" 2>&1 >/dev/null)
	[ -z "$err" ] || fail "$page: man --warnings: $err"
	# NAME line: "name \- description" (whatis, lintian)
	sed -n '/^\.SH NAME/{n;p;}' "$page" | grep -q ' \\- ' || fail "$page: NAME has no '\\-'"
done
ok "$(ls man/*.[1-8] | wc -l) pages render without warnings"

# every binary in tools/ (each tools/NAME/main.c) and its page
for main in tools/*/main.c; do
	t=$(basename "$(dirname "$main")")
	page=$(ls man/"$t".[18] 2>/dev/null | head -1)
	[ -n "$page" ] || { fail "$t: no man page man/$t.1 or man/$t.8"; continue; }
	[ -x "$TOOLS/$t" ] || { fail "$t: not built ($TOOLS/$t)"; continue; }
	"$TOOLS/$t" --help >"$work/help" 2>&1
	# the page as text: no hyphenation, no adjustment, one long line per paragraph
	groff -man -Tascii -rHY=0 -rLL=2000n -P-c -P-b -P-u "$page" 2>/dev/null | \
		sed 's/^ *//' >"$work/page"
	# options: "-x", "--long" or "--dotted.name" after a blank, '[', '|', ',' or '(' and before
	# a blank, '=', ']', ',', ':', ')' or the end of the line, on the lines that define
	# options (first non-blank a '-') and the synopsis lines (the tool's name): prose names
	# other programs' options (mkpasswd -m) and ones a tool does not have ("no -a")
	opts=$(grep -E "^[[:space:]]*-|$t" "$work/help" |
		grep -oE '(^|[][[:space:]|,(])--?[A-Za-z?]([A-Za-z0-9?.-]*[A-Za-z0-9?])?([][[:space:]=,:)|]|$)' |
		sed -E 's/^[][[:space:]|,(]//; s/[][[:space:]=,:)|]$//' | sort -u)
	[ -n "$opts" ] || fail "$t: no option found in --help"
	missing=""
	for o in $opts; do
		grep -qE -- "(^|[^A-Za-z0-9-])$(printf '%s' "$o" | sed 's/[?.]/[&]/g')([^A-Za-z0-9-]|$)" \
			"$work/page" || missing="$missing $o"
	done
	if [ -n "$missing" ]; then
		fail "$t: options of --help missing from $page:$missing"
	else
		ok "$t: $page has the $(echo "$opts" | wc -l) options of --help"
	fi
done

# make install puts every page in its section
dest="$work/inst"
make -s --no-print-directory install DESTDIR="$dest" PREFIX=/usr OUTPUT="$OUTPUT/" \
	>"$work/install.log" 2>&1 || fail "make install: $(tail -5 "$work/install.log")"
for page in man/*.[1-8]; do
	sec=${page##*.}
	[ -f "$dest/usr/share/man/man$sec/$(basename "$page")" ] ||
		fail "make install did not install $page in man$sec"
	MANPATH="$dest/usr/share/man" man -w "$(basename "$page" ".$sec")" >/dev/null 2>&1 ||
		fail "man -w $(basename "$page" ".$sec") finds no page under DESTDIR"
done
ok "make install installs the pages"
[ "$nfail" -eq 0 ]
