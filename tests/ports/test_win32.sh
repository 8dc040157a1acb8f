#!/bin/sh
# SPDX-License-Identifier: MIT
# test_win32.sh - the perflib-win32 pkg-config module as a user meets it (issue 32): `make
# install` into a temporary DESTDIR, then Windows-style programs (tests/ports/win32/) built
# with nothing but `$(pkg-config --cflags --libs perflib-win32 pdh)` and the Windows build
# flags, in C and C++, ANSI and UNICODE, with gcc, clang, g++ and clang++:
#  - wide_crt.c: wmain with UTF-16 arguments (non-ASCII, a surrogate pair), the wide C
#    runtime with Microsoft's formats, the secure copies, lstr*, strsafe.h (-fshort-wchar;
#    also compiled as C++);
#  - tchar_events.c: generic text, events, waits, RegisterWaitForSingleObject, Interlocked*
#    (ANSI, UNICODE, UNICODE with -fshort-wchar; C and C++): one output for all;
#  - pdh_wait.c: the two-call PdhEnumObjectItems and PdhCollectQueryDataEx consumed by a
#    thread-pool wait, against tests/helpers/tp_provider (ANSI and UNICODE, C and C++);
#  - cpp_monitor.cpp: a C++ consumer with std::map and std::u16string, the Windows headers
#    before and after <string>, <map>, <iostream>;
# each output compared byte for byte with tests/data/win32/. Also: the module's headers come
# first on the include path and nowhere else (pdh.pc alone does not bring them), a Windows
# name the module lacks is a compile error, a program with neither main nor wmain does not
# link, <sal.h> included first and <conio.h>'s _kbhit/_getch work, and the library exports exactly win32/win32.map under its SONAME.
# Environment: OUTPUT (absolute build dir). Exit 0 pass, 77 skip (no BPF), other fail.
set -u
: "${OUTPUT:?}"

top=$(cd "$(dirname "$0")/../.." && pwd)
src=$top/tests/ports/win32
data=$top/tests/data/win32
tmp=$(mktemp -d)
root=
pid=
cleanup() {
	[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
	[ -z "$root" ] || rm -rf "$root"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
	if [ "${PERFLIB_REQUIRE_BPF:-}" = 1 ]; then fail "$* (and PERFLIB_REQUIRE_BPF=1)"; fi
	echo "SKIP: $*"; exit 77
}

. "$top/tests/lib/install_tmp.sh"
dest=$tmp/dest
tmp_make install "$dest" || { cat "$dest.install.log"; fail "make install"; }
lib=$dest/usr/lib
inc=$dest/usr/include
for f in windows.h tchar.h strsafe.h conio.h sal.h windef.h basetsd.h winnt.h \
	perflib-win32-rt.h perflib-win32-sync.h; do
	[ -f "$inc/perflib/win32/$f" ] || fail "perflib/win32/$f is not installed"
done
for f in libperflib-win32.so.1 libperflib-win32.so libperflib-win32main.a \
	pkgconfig/perflib-win32.pc; do
	[ -e "$lib/$f" ] || fail "$f is not installed"
done

# ---- the library: SONAME, exports = its version script ------------------------------------
so=$(readlink -f "$lib/libperflib-win32.so.1")
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libperflib-win32.so.1 ] || fail "SONAME is '$soname'"
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVWiu]$/ { sub(/@.*/, "", $3); print $3 }' |
	sort -u >"$tmp/exported"
sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' "$top/win32/win32.map" |
	grep -v '^local$' | sort -u >"$tmp/listed"
cmp -s "$tmp/exported" "$tmp/listed" ||
	fail "exports differ from win32/win32.map: $(diff "$tmp/exported" "$tmp/listed" | tr '\n' ' ')"
nm -D --defined-only "$so" | grep -q ' perflib_win32_wprintf@@PERFLIB_WIN32_1.0$' ||
	fail "perflib_win32_wprintf has no PERFLIB_WIN32_1.0 version"

# ---- pkg-config: the Windows names first, and only with the module --------------------------
export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
flags=$(pkg-config --cflags --libs perflib-win32 pdh) || fail "pkg-config perflib-win32 pdh"
first=$(pkg-config --cflags perflib-win32 pdh | awk '{ print $1 }')
[ "$first" = "-I$inc/perflib/win32" ] || fail "the first include directory is '$first'"
case " $(pkg-config --cflags --libs pdh) " in
*perflib/win32* | *perflib-win32*) fail "pdh.pc brings the module: $(pkg-config --cflags --libs pdh)" ;;
esac
echo "ok    installed: $soname ($(wc -l <"$tmp/exported") names), cflags and libs: $flags"

san=
readelf -d "$lib/libpdh.so.1" | grep -q libasan && san="-fsanitize=address,undefined"
b=$tmp/build
mkdir -p "$b"
# build NAME COMPILER SOURCE FLAGS...: as a user would, the module's flags after the source
build() {
	name=$1 cc=$2 file=$3
	shift 3
	# shellcheck disable=SC2086
	$cc -Wall -Wextra -Werror $san "$@" "$src/$file" -x none $flags -Wl,-rpath,"$lib" \
		-o "$b/$name" 2>"$b/cc.err" || fail "$file does not build with $cc $*: $(head -5 "$b/cc.err")"
}
uni="-DUNICODE -D_UNICODE"
# the clang builds run unless libpdh carries gcc's ASan runtime (test_pdh_ports.sh says why)
runners="gcc g++ clang clang++"
[ -z "$san" ] || runners="gcc g++"

for cc in gcc clang; do
	build wide_crt.$cc $cc wide_crt.c -std=gnu11 -fshort-wchar $uni
	build tchar_events.ansi.$cc $cc tchar_events.c -std=gnu11
	build tchar_events.uni.$cc $cc tchar_events.c -std=gnu11 $uni
	build tchar_events.short.$cc $cc tchar_events.c -std=gnu11 -fshort-wchar $uni
	build pdh_wait.ansi.$cc $cc pdh_wait.c -std=gnu11
	build pdh_wait.short.$cc $cc pdh_wait.c -std=gnu11 -fshort-wchar $uni
done
for cxx in g++ clang++; do
	build wide_crt.$cxx $cxx wide_crt.c -x c++ -std=c++17 -fshort-wchar $uni
	build tchar_events.ansi.$cxx $cxx tchar_events.c -x c++ -std=c++11
	build tchar_events.short.$cxx $cxx tchar_events.c -x c++ -std=c++17 -fshort-wchar $uni
	build pdh_wait.short.$cxx $cxx pdh_wait.c -x c++ -std=c++11 -fshort-wchar $uni
	for order in win std; do
		o=
		[ $order = std ] && o=-DSTD_HEADERS_FIRST
		build cpp_monitor.ansi.$order.$cxx $cxx cpp_monitor.cpp -std=c++11 $o
		build cpp_monitor.short.$order.$cxx $cxx cpp_monitor.cpp -std=c++17 -fshort-wchar \
			$uni $o
	done
done
echo "ok    built: C (gcc, clang) and C++ (g++, clang++), ANSI and UNICODE"

# ---- what the module does not have, and does not do -------------------------------------
printf '#include <windows.h>\nint main(void) { return (int)CreateMutexW(NULL, FALSE, NULL); }\n' \
	>"$tmp/missing.c"
gcc -std=gnu11 -Werror "$tmp/missing.c" $flags -o "$tmp/missing" 2>"$b/cc.err" &&
	fail "a program calling CreateMutexW (not in the module) built"
grep -q CreateMutexW "$b/cc.err" || fail "no error naming CreateMutexW: $(head -3 "$b/cc.err")"
printf '#include <windows.h>\nint helper(void) { return 1; }\n' >"$tmp/nomain.c"
gcc -std=gnu11 "$tmp/nomain.c" $flags -o "$tmp/nomain" 2>"$b/cc.err" &&
	fail "a program with neither main nor wmain linked"
grep -q 'wmain' "$b/cc.err" || fail "no link error naming wmain: $(head -3 "$b/cc.err")"
# without the module glibc's wide functions stay glibc's (32-bit wchar_t, L"" as is)
printf '#include <wchar.h>\n#include <pdh.h>\nint main(void) { return wcslen(L"ab\\U0001D11E") != 3; }\n' \
	>"$tmp/plain.c"
# shellcheck disable=SC2046
gcc -std=gnu11 -Wall -Werror $san "$tmp/plain.c" $(pkg-config --cflags --libs pdh) \
	-Wl,-rpath,"$lib" -o "$tmp/plain" 2>"$b/cc.err" || fail "a plain pdh program: $(head -3 "$b/cc.err")"
LD_LIBRARY_PATH=$lib "$tmp/plain" || fail "wcslen without the module is not glibc's"
# <sal.h> first, then an MSVC integer keyword (a program including it first used to fail)
printf '#include <sal.h>\n#include <windows.h>\nstatic unsigned __int64 twice(_In_ unsigned __int64 v)\n{\n\treturn 2 * v;\n}\nint main(void)\n{\n\treturn twice(21) != 42;\n}\n' \
	>"$tmp/sal.c"
# shellcheck disable=SC2086
gcc -std=gnu11 -Wall -Wextra -Werror $san "$tmp/sal.c" $flags -Wl,-rpath,"$lib" -o "$tmp/sal" \
	2>"$b/cc.err" || fail "<sal.h> first: $(head -3 "$b/cc.err")"
LD_LIBRARY_PATH=$lib "$tmp/sal" || fail "<sal.h> first: the program failed"
# <conio.h>: _kbhit sees piped input, _getch reads it a byte at a time, -1 at its end
printf '#include <conio.h>\n#include <stdio.h>\nint main(void)\n{\n\tint k = _kbhit() != 0, a = _getch(), b = _getch(), c = _getch();\n\n\tprintf("%%d %%c %%c %%d\\n", k, a, b, c);\n\treturn 0;\n}\n' \
	>"$tmp/conio.c"
# shellcheck disable=SC2086
gcc -std=gnu11 -Wall -Wextra -Werror $san "$tmp/conio.c" $flags -Wl,-rpath,"$lib" \
	-o "$tmp/conio" 2>"$b/cc.err" || fail "<conio.h>: $(head -3 "$b/cc.err")"
[ "$(printf ab | LD_LIBRARY_PATH=$lib "$tmp/conio")" = "1 a b -1" ] ||
	fail "<conio.h>: $(printf ab | LD_LIBRARY_PATH=$lib "$tmp/conio")"
echo "ok    a missing name is a compile error, no main is a link error, nothing leaks, <sal.h> first, <conio.h>"

# ---- the runs: the same bytes from every build ---------------------------------------------
export LD_LIBRARY_PATH=$lib
# same NAME EXPECTED ARGS...: every runnable build of NAME prints EXPECTED
same() {
	name=$1 want=$2
	shift 2
	n=0
	for exe in "$b/$name".*; do
		case $exe in *.out) continue ;; esac
		ok=
		for r in $runners; do
			case $exe in *."$r") ok=1 ;; esac
		done
		[ -n "$ok" ] || continue
		"$exe" "$@" >"$exe.out" 2>&1 || fail "$(basename "$exe") exited $?: $(head -5 "$exe.out")"
		cmp -s "$exe.out" "$data/$want" || {
			diff "$data/$want" "$exe.out" | head -20
			fail "$(basename "$exe"): output differs from tests/data/win32/$want"
		}
		n=$((n + 1))
	done
	[ $n -gt 0 ] || fail "no build of $name ran"
	echo "ok    $name: $n builds print tests/data/win32/$want"
}
same wide_crt wide_crt.out plain 'héllo' '𝄞clef' '日本'
same tchar_events tchar_events.out Processor

root=$(mktemp -d "${PERFLIB_TEST_BPFFS:-/sys/fs/bpf}/perflib-win32-XXXXXX" 2>/dev/null) ||
	skip "cannot create a directory in bpffs (builds and runtime checks passed)"
export PERFLIB_ROOT=$root
"$OUTPUT/tests/helpers/tp_provider" >"$tmp/prov.out" 2>&1 &
pid=$!
n=0
until grep -q ready "$tmp/prov.out" 2>/dev/null; do
	kill -0 "$pid" 2>/dev/null || skip "tp_provider did not start: $(cat "$tmp/prov.out")"
	n=$((n + 1))
	[ $n -lt 500 ] || fail "tp_provider was not ready in 10 s"
	sleep 0.02
done
same pdh_wait pdh_wait.out "TP Demo" Items beta 3
same cpp_monitor cpp_monitor.out "TP Demo" Items
echo "win32: all checks passed"
