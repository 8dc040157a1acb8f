#!/bin/sh
# SPDX-License-Identifier: MIT
# test_headers.sh - the installed headers as users include them (make check-headers runs it
# alone). `make install` into a temporary DESTDIR, then:
#  - every header of $(INCLUDEDIR)/perflib/ compiles alone, as C99 and C11 with gcc and
#    clang, before and after <string.h>, <wchar.h> and <arpa/inet.h> (glibc names parameters
#    __in there), and as C++11 and C++17 with g++ and clang++, before and after <string>,
#    <map> and <iostream> (libstdc++ names parameters __in and __out); then C11 and C++17
#    once more with -fshort-wchar. -Wall -Wextra -Werror throughout;
#  - the old spellings (<perflib.h>, <winperf.h>, <perflib-linux.h>, <perflib_bpf.h>) give the
#    same declarations, and no header is installed bare but those four;
#  - <perflib.h> defines no SAL name, <perflib/sal.h> defines __in/__out only on request;
#  - WCHAR is 16 bits in every mode, wchar_t in C++ with -fshort-wchar, and u"" and L""
#    literals convert as the README says; every library source compiles with -fshort-wchar;
#  - `make uninstall` leaves no file behind.
# Environment: OUTPUT (absolute build dir). Exit 0 pass, 1 fail.
set -u
: "${OUTPUT:?}"

top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
	echo "FAIL  $*"
	failures=$((failures + 1))
}

. "$top/tests/lib/install_tmp.sh"
dest=$tmp/dest
tmp_make install "$dest" || {
	cat "$dest.install.log"
	echo "FAIL  make install"
	exit 1
}
inc=$dest/usr/include

# ---- what is installed where ----------------------------------------------------------------
# pdh.h and pdhmsg.h are Windows' own spellings (<pdh.h>), installed bare on purpose
bare=$(cd "$inc" && find . -maxdepth 1 -type f | sed 's|^\./||' | grep -v '^pdh\(msg\)\?\.h$' |
	LC_ALL=C sort | tr '\n' ' ')
[ "$bare" = "perflib-linux.h perflib.h perflib_bpf.h winperf.h " ] ||
	fail "headers installed bare in the include directory: $bare"
headers=$(cd "$inc/perflib" && ls ./*.h | sed 's|^\./||' | sort)
for h in perflib.h winperf.h perflib-linux.h perflib_bpf.h perflib_bpf_loader.h layout.h sal.h \
	win32compat.h; do
	[ -f "$inc/perflib/$h" ] || fail "perflib/$h is not installed"
done

# ---- option structs can grow: each public struct *_opts starts with its size (as libbpf's) ---
nopts=0
for h in "$inc"/perflib/*.h; do
	for o in $(sed -n 's/^struct \([a-z0-9_]*_opts\) {.*/\1/p' "$h"); do
		nopts=$((nopts + 1))
		first=$(sed -n "/^struct $o {/{n;p;q}" "$h" | awk '{ print $1, $2 }')
		[ "$first" = "size_t sz;" ] ||
			fail "struct $o ($(basename "$h")) does not start with size_t sz: $first"
	done
done
[ "$nopts" -ge 1 ] || fail "no option struct found in the installed headers"

# ---- the matrix ------------------------------------------------------------------------------
# unit NAME LANG STD COMPILER EXTRA TEXT: one translation unit, compiled by the job list
n=0
unit() {
	n=$((n + 1))
	ext=c
	[ "$2" = c++ ] && ext=cc
	printf '%s\n' "$6" >"$tmp/u$n.$ext"
	printf '%s\n' "$1" >"$tmp/name.$n"
	printf '%s -std=%s %s -Wall -Wextra -Werror -I%s -fsyntax-only %s\n' \
		"$4" "$3" "$5" "$inc" "$tmp/u$n.$ext" >"$tmp/cmd.$n"
	echo $n >>"$tmp/jobs"
}
: >"$tmp/jobs"
for h in $headers; do
	for std in c99 c11; do
		for cc in gcc clang; do
			unit "perflib/$h alone, $cc -std=$std" c $std $cc "" "#include <perflib/$h>"
			for s in string.h wchar.h arpa/inet.h; do
				unit "perflib/$h before <$s>, $cc -std=$std" c $std $cc "" \
					"#include <perflib/$h>
#include <$s>"
				unit "perflib/$h after <$s>, $cc -std=$std" c $std $cc "" \
					"#include <$s>
#include <perflib/$h>"
			done
		done
	done
	for std in c++11 c++17; do
		for cc in g++ clang++; do
			unit "perflib/$h alone, $cc -std=$std" c++ $std $cc "" "#include <perflib/$h>"
			for s in string map iostream; do
				unit "perflib/$h before <$s>, $cc -std=$std" c++ $std $cc "" \
					"#include <perflib/$h>
#include <$s>"
				unit "perflib/$h after <$s>, $cc -std=$std" c++ $std $cc "" \
					"#include <$s>
#include <perflib/$h>"
			done
		done
	done
	for cc in gcc clang; do
		unit "perflib/$h, $cc -std=c11 -fshort-wchar" c c11 $cc -fshort-wchar \
			"#include <perflib/$h>
#include <wchar.h>
#include <perflib/$h>"
	done
	for cc in g++ clang++; do
		unit "perflib/$h, $cc -std=c++17 -fshort-wchar" c++ c++17 $cc -fshort-wchar \
			"#include <string>
#include <perflib/$h>
#include <map>
#include <iostream>"
	done
done
# the old spellings, alone and beside the new one, in C and C++
for h in perflib.h winperf.h perflib-linux.h perflib_bpf.h; do
	for cc in gcc clang; do
		unit "<$h> alone, $cc" c c11 $cc "" "#include <$h>"
		unit "<$h> with <perflib/$h>, $cc" c c99 $cc "" "#include <$h>
#include <perflib/$h>"
	done
	for cc in g++ clang++; do
		unit "<$h> before <string>, $cc" c++ c++11 $cc "" "#include <$h>
#include <string>"
	done
done
# SAL: nothing from perflib.h (nor the headers including it), __in/__out only on request
for h in perflib.h perflib-linux.h perflib_bpf.h; do
	unit "perflib/$h defines no SAL" c c11 gcc "" "#include <perflib/$h>
#if defined(__in) || defined(__out) || defined(__in_opt) || defined(_In_) || defined(_Out_)
#error SAL defined
#endif"
done
unit "sal.h without the request leaves __in, __out alone" c++ c++11 g++ "" \
	"#include <perflib/sal.h>
#include <string>
#if defined(__in) || defined(__out) || !defined(__in_opt) || !defined(_Success_)
#error wrong SAL set
#endif
_Success_(return == 0) _Check_return_ int f(__in_opt const char *a, _Out_writes_(n) char *b,
	__inout_bcount(n) void *c, unsigned n);"
unit "sal.h with PERFLIB_SAL_IN_OUT after the system headers" c++ c++17 clang++ "" \
	"#include <string>
#include <iostream>
#define PERFLIB_SAL_IN_OUT
#include <perflib/win32compat.h>
int f(__in int a, __out int *b);
int f(__in int a, __out int *b) { *b = a; return 0; }"
# PERFLIB_NO_ID: Windows' "none" id, a ULONG constant, usable in C and C++ constant expressions
for cc in gcc g++; do
	lang=c std=c99
	[ $cc = g++ ] && lang=c++ std=c++11
	unit "PERFLIB_NO_ID is 0xFFFFFFFF, $cc" $lang $std $cc "" "#include <perflib/perflib-linux.h>
typedef char no_id_value[PERFLIB_NO_ID == 0xFFFFFFFFu && PERFLIB_NO_ID == (ULONG)-1 ? 1 : -1];
typedef char no_id_size[sizeof(PERFLIB_NO_ID) == sizeof(ULONG) ? 1 : -1];
struct perflib_counter_reg r = {1, 0, 0, 0, 0, PERFLIB_NO_ID, PERFLIB_NO_ID, PERFLIB_NO_ID,
	PERFLIB_NO_ID, 0, 0, 0};"
done
unit "struct perflib_pin_opts: sz at offset 0, PERFLIB_PIN_OPTS_INIT compiles" c c11 gcc "" \
	"#include <stddef.h>
#include <perflib/perflib-linux.h>
_Static_assert(offsetof(struct perflib_pin_opts, sz) == 0, \"sz first\");
void f(void);
void f(void) { struct perflib_pin_opts o = PERFLIB_PIN_OPTS_INIT; (void)o; }"
# WCHAR: 16 bits everywhere; which literals convert
unit "WCHAR in C: u\"\"" c c11 gcc "" "#include <perflib/perflib.h>
_Static_assert(sizeof(WCHAR) == 2, \"WCHAR\");
const WCHAR *p = u\"x\", *q = PERF_AGGREGATE_INSTANCE;"
for cc in gcc clang; do
	unit "WCHAR in C -fshort-wchar: L\"\" and u\"\", $cc" c c99 $cc -fshort-wchar \
		"#include <perflib/perflib.h>
#include <wchar.h>
typedef char wchar_is_wchar[sizeof(WCHAR) == 2 ? 1 : -1];
wchar_t a[8];
const WCHAR *p = L\"x\", *q = a, *r = PERF_WILDCARD_INSTANCE;"
done
for cc in g++ clang++; do
	unit "WCHAR in C++: char16_t, u\"\", $cc" c++ c++11 $cc "" "#include <perflib/perflib.h>
#include <type_traits>
static_assert(std::is_same<WCHAR, char16_t>::value, \"WCHAR\");
const WCHAR *p = u\"x\", *q = PERF_AGGREGATE_INSTANCE;"
	unit "WCHAR in C++ -fshort-wchar: wchar_t, L\"\", u\"\" overloads, $cc" c++ c++11 $cc \
		-fshort-wchar "#include <perflib/perflib-linux.h>
#include <string>
#include <type_traits>
static_assert(std::is_same<WCHAR, wchar_t>::value && sizeof(WCHAR) == 2, \"WCHAR\");
wchar_t inst[8];
const WCHAR *p = L\"x\", *q = inst, *r = PERF_WILDCARD_INSTANCE;
const wchar_t wide[] = L\"abc\";
void f(HANDLE h, GUID *g, HANDLE *q2, char16_t *d);
void f(HANDLE h, GUID *g, HANDLE *q2, char16_t *d)
{
	(void)PerfCreateInstance(h, g, u\"u16\", 1);
	(void)PerfCreateInstance(h, g, L\"wide\", 1);
	(void)PerfCreateInstance(h, g, wide, 1);
	(void)PerfQueryInstance(h, g, u\"u16\", 1);
	(void)PerfOpenQueryHandle(NULL, q2);
	(void)PerfOpenQueryHandle(nullptr, q2);
	(void)PerfOpenQueryHandle(u\"localhost\", q2);
	(void)PerfOpenQueryHandle(L\"localhost\", q2);
	(void)PerfEnumerateCounterSet(NULL, NULL, 0, NULL);
	(void)PerfEnumerateCounterSetInstances(u\".\", g, NULL, 0, NULL);
	(void)PerfQueryCounterSetRegistrationInfo(NULL, g, PERF_REG_COUNTERSET_STRUCT, 0, NULL, 0, NULL);
	(void)perflib_utf8_to_utf16(\"a\", d, 2);
	(void)perflib_utf16_to_utf8(u\"a\", 1, NULL, 0);
}"
done
# and what must not compile: L"" where wchar_t is 32 bits
printf '#include <perflib/perflib.h>\nconst WCHAR *p = L"x";\n' >"$tmp/neg.cc"
if g++ -std=c++11 -I"$inc" -fsyntax-only "$tmp/neg.cc" 2>/dev/null; then
	fail "L\"\" converted to WCHAR without -fshort-wchar (32-bit wchar_t)"
fi

total=$(wc -l <"$tmp/jobs")
# two at a time (the machine is shared); a failure prints its first errors
xargs -P 2 -I{} sh -c 'sh "$1/cmd.$2" >"$1/out.$2" 2>&1 ||
	{ echo "FAIL  $(cat "$1/name.$2")"; head -6 "$1/out.$2" | sed "s/^/      /"; }' \
	sh "$tmp" {} <"$tmp/jobs" >"$tmp/matrix.out"
bad=$(grep -c '^FAIL' "$tmp/matrix.out")
cat "$tmp/matrix.out"
failures=$((failures + bad))
echo "matrix: $((total - bad)) of $total translation units compile"

# ---- the library's own sources with -fshort-wchar (WCHAR keeps its 16 bits and its ABI) ------
for f in "$top"/userspace/*.c; do
	gcc -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -fshort-wchar -I"$top/include" -I"$top/common" \
		-I"$top/bpf" -I"$OUTPUT/bpf" -fsyntax-only "$f" 2>"$tmp/lib.err" ||
		{
			fail "$(basename "$f") does not compile with -fshort-wchar"
			head -5 "$tmp/lib.err"
		}
done

# ---- uninstall ------------------------------------------------------------------------------
# shellcheck disable=SC2086
tmp_make uninstall "$dest" || fail "make uninstall: $(cat "$dest.uninstall.log")"
left=$(find "$dest" -type f -o -type l)
[ -z "$left" ] || fail "make uninstall left: $left"

[ "$failures" -eq 0 ] || exit 1
echo "ok: $total header units, library sources with -fshort-wchar, install layout, uninstall"
exit 0
