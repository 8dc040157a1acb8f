#!/bin/sh
# SPDX-License-Identifier: MIT
# test_pkgconfig.sh - the installed library as a user sees it: `make install` into a temporary
# DESTDIR, a provider written only from Microsoft's documentation (tests/helpers/prov_msdoc.c)
# compiled with `pkg-config --cflags --libs perflib` and linked to the shared library, its
# instances visible in bpftool; the SONAME, and no exported name outside the public headers.
# Environment: OUTPUT (absolute build dir). Exit 0 pass, 77 skip, other fail.
set -u
: "${OUTPUT:?}"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
	if [ "${PERFLIB_REQUIRE_BPF:-}" = 1 ]; then fail "$* (and PERFLIB_REQUIRE_BPF=1)"; fi
	echo "SKIP: $*"; exit 77
}

top=$(cd "$(dirname "$0")/../.." && pwd)
CC=${CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
BPFTOOL=${BPFTOOL:-$(command -v bpftool || echo /usr/sbin/bpftool)}
command -v "$PKG_CONFIG" >/dev/null 2>&1 || skip "pkg-config not found"
tmp=$(mktemp -d)
root=
pid=
cleanup() {
	exec 3>&- 2>/dev/null
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	[ -z "$root" ] || rm -rf "$root"
	rm -rf "$tmp"
}
trap cleanup EXIT

# install what this build made (install_tmp.sh)
. "$top/tests/lib/install_tmp.sh"
tmp_make install "$tmp/dest" || { cat "$tmp/dest.install.log" >&2; fail "make install"; }
dest=$tmp/dest
lib=$dest/usr/lib
# the version is the newest symbol version node of the map (PERFLIB_1.3 -> 1.3.0)
ver=$(sed -n 's/^PERFLIB_\([0-9]*\)\.\([0-9]*\) {.*/\1.\2.0/p' "$top/userspace/perflib.map" | tail -1)
[ -n "$ver" ] || fail "no version node in userspace/perflib.map"
for f in usr/include/perflib.h usr/include/winperf.h usr/include/perflib-linux.h \
	usr/include/perflib/perflib.h usr/include/perflib/win32compat.h usr/include/perflib/sal.h \
	usr/include/perflib/perflib_bpf.h usr/include/perflib/perflib_bpf_loader.h \
	usr/lib/libperflib.a "usr/lib/libperflib.so.$ver" usr/lib/pkgconfig/perflib.pc; do
	[ -f "$dest/$f" ] || fail "make install did not install /$f"
done
[ "$(readlink "$lib/libperflib.so.1")" = "libperflib.so.$ver" ] || fail "libperflib.so.1 link"
[ "$(readlink "$lib/libperflib.so")" = libperflib.so.1 ] || fail "libperflib.so link"

# the .pc must describe where it was installed: /usr. Should it not (generated at build time
# with another PREFIX), say so, then go on with a corrected copy to test the rest
pc=$lib/pkgconfig/perflib.pc
pc_bad=
if ! grep -qx 'prefix=/usr' "$pc" || ! grep -qx 'libdir=/usr/lib' "$pc" ||
	! grep -qx 'includedir=/usr/include' "$pc"; then
	pc_bad="installed perflib.pc has $(grep -E '^(prefix|libdir|includedir)=' "$pc" | tr '\n' ' ')after make install PREFIX=/usr"
	echo "FAIL: $pc_bad" >&2
	sed -i -e 's|^prefix=.*|prefix=/usr|' -e 's|^libdir=.*|libdir=/usr/lib|' \
		-e 's|^includedir=.*|includedir=/usr/include|' "$pc"
fi

# the sysroot points the /usr of the .pc at the DESTDIR
export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest"
[ "$($PKG_CONFIG --modversion perflib)" = "$ver" ] || fail "pkg-config --modversion: not $ver"
# a program that needs the newest symbols can ask for them by version
newest=${ver%.0}
$PKG_CONFIG --atleast-version "$newest" perflib || fail "pkg-config --atleast-version $newest"
flags=$($PKG_CONFIG --cflags --libs perflib) || fail "pkg-config --cflags --libs perflib"
case " $flags " in *" -I$dest/usr/include "*) ;; *) fail "cflags: $flags" ;; esac
case " $flags " in *" -L$lib "*) ;; *) fail "libs: $flags" ;; esac
case " $flags " in *" -lperflib "*) ;; *) fail "libs: $flags" ;; esac

# SONAME and exports
so=$lib/libperflib.so.$ver
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libperflib.so.1 ] || fail "SONAME is '$soname'"
# every exported function or object is declared PERFLIB_API in an installed header
sed -n 's/^PERFLIB_API[^(]*[ *]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' \
	"$dest"/usr/include/perflib/*.h | sort -u >"$tmp/api"
[ -s "$tmp/api" ] || fail "no PERFLIB_API declarations found in the installed headers"
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVWiu]$/ {print $3}' | sed 's/@.*//' |
	sort -u >"$tmp/exported"
extra=$(comm -23 "$tmp/exported" "$tmp/api")
[ -z "$extra" ] || fail "exported but not public API: $(echo $extra)"
grep -qx PerfIncrementULongLongCounterValue "$tmp/exported" || fail "API not exported"
# versioned symbols (perflib.map)
nm -D --defined-only "$so" | grep -q ' PerfCreateInstance@@PERFLIB_1.0$' ||
	fail "PerfCreateInstance has no PERFLIB_1.0 version"
# the loader functions whose geometry grew: 1.5 the default, 1.4 kept for loaders built before
for f in perflib_bpf_counterset_open perflib_bpf_geometry_from_class perflib_bpf_geometry_from_info; do
	nm -D --defined-only "$so" | grep -q " $f@@PERFLIB_1.5\$" ||
		fail "$f has no default PERFLIB_1.5 version"
	nm -D --defined-only "$so" | grep -q " $f@PERFLIB_1.4\$" ||
		fail "$f has no PERFLIB_1.4 version (loaders built before 1.5)"
done

# programs linked to it need the sanitizers it was built with
san=
readelf -d "$so" | grep -q 'libasan' && san="-fsanitize=address,undefined"

# a BPF program's loader calls the library's loader functions (PERFLIB_1.4, the open with the
# per-CPU geometry PERFLIB_1.5): they are linked from libperflib.so, not compiled into the loader
cat >"$tmp/loader.c" <<'EOF'
#include <errno.h>
#include <perflib/perflib_bpf_loader.h>
int main(void)
{
	struct perflib_bpf_counterset cs;
	int err = perflib_bpf_counterset_open(NULL, "{4C4BD1D1-5A8B-4F3E-8D2E-119C2A6F00FF}", &cs);

	perflib_bpf_counterset_close(&cs);
	return err == -ENOENT && cs.data_fd == -1 ? 0 : 1;
}
EOF
# shellcheck disable=SC2086
$CC -std=gnu11 -Wall -Wextra -Werror $san $flags "$tmp/loader.c" $flags -o "$tmp/loader" \
	2>"$tmp/cc.log" || { cat "$tmp/cc.log" >&2; fail "compiling a loader"; }
nm -u "$tmp/loader" | grep -q ' perflib_bpf_counterset_open@PERFLIB_1.5$' ||
	fail "the loader does not call libperflib's perflib_bpf_counterset_open@PERFLIB_1.5"
PERFLIB_ROOT=/nonexistent/perflib-pkgconfig LD_LIBRARY_PATH=$lib "$tmp/loader" ||
	fail "the loader's perflib_bpf_counterset_open did not answer -ENOENT for a missing set"

# the documentation-only provider, compiled and linked like a user's program
# shellcheck disable=SC2086
$CC -std=gnu11 -Wall -Wextra -Werror $san $flags "$top/tests/helpers/prov_msdoc.c" $flags \
	-o "$tmp/msdoc" 2>"$tmp/cc.log" || { cat "$tmp/cc.log" >&2; fail "compiling prov_msdoc.c"; }
readelf -d "$tmp/msdoc" | grep -q 'NEEDED.*\[libperflib.so.1\]' ||
	fail "prov_msdoc is not linked to libperflib.so.1"
LD_LIBRARY_PATH=$lib ldd "$tmp/msdoc" | grep -q "libperflib.so.1 => $lib/" ||
	fail "prov_msdoc does not load the installed library"

# run it and look at its counter set with bpftool
[ -x "$BPFTOOL" ] || skip "bpftool not found (build and link checks passed)"
root=$(mktemp -d "${PERFLIB_TEST_BPFFS:-/sys/fs/bpf}/perflib-pkgconfig-XXXXXX" 2>/dev/null) ||
	skip "cannot create a directory in bpffs (build and link checks passed)"
mkfifo "$tmp/in"
PERFLIB_ROOT=$root LD_LIBRARY_PATH=$lib "$tmp/msdoc" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
pid=$!
exec 3>"$tmp/in"
i=0
until grep -q '^ready' "$tmp/out" 2>/dev/null; do
	if ! kill -0 "$pid" 2>/dev/null; then
		pid=
		cat "$tmp/out" "$tmp/err" >&2
		grep -q 'failed with 5$' "$tmp/out" && skip "no BPF permission (build and link checks passed)"
		fail "prov_msdoc exited before it was ready"
	fi
	i=$((i + 1))
	[ $i -lt 1000 ] || fail "prov_msdoc did not get ready in 10 s"
	sleep 0.01
done
data=$root/4c4bd1d1-5a8b-4f3e-8d2e-119c2a6f0002/s0/data
"$BPFTOOL" map dump pinned "$data" >"$tmp/dump.txt" 2>&1 || fail "bpftool: $(cat "$tmp/dump.txt")"
# counters without a manifest are named counter_<id>; Instance_1 then Instance_2, id 0 both
tr -d ' \n' <"$tmp/dump.txt" >"$tmp/flat"
for want in '"InstanceId":0,"InstanceNameOffset":48,"InstanceNameSize":22},"counter_1":10,"counter_2":5000000000,' \
	'"counter_1":20,"counter_2":7,' '"name":"Instance_1"' '"name":"Instance_2"'; do
	grep -qF "$want" "$tmp/flat" || fail "bpftool dump has no $want"
done
exec 3>&-
wait "$pid" || fail "prov_msdoc exited with $?"
pid=
[ -z "$pc_bad" ] || fail "$pc_bad (everything else passed)"
echo "ok: installed, pkg-config, SONAME $soname, $(wc -l <"$tmp/exported") exported API names, provider visible"
exit 0
