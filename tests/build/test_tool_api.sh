#!/bin/sh
# SPDX-License-Identifier: MIT
# test_tool_api.sh - the tools use the library through its exported API only (issue 10):
#  - no file under tools/ includes a header of userspace/ (internal.h, consumer.h, ...);
#  - no tool object references a symbol that a library object (userspace/*.o) defines but
#    libperflib.so does not export (the tools link the static archive, where hidden
#    functions would otherwise resolve). common/ (the counter-type table) is shared source,
#    not the library's API, and is not judged here.
# The same two rules for libpdh (issue 33: no tool includes a library's private header):
# pdh/*.h, and what pdh/*.o define but libpdh.so does not export, for every tool (the
# exporter reads through the Linux extension <perflib/pdh-linux.h>); and libpdh.a defines
# only the exported API and names with the library's prefix pdh_.
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

# ---- includes --------------------------------------------------------------------------------
for h in "$top"/userspace/*.h; do
	n=$(basename "$h")
	hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]([^>\"]*/)?$n[>\"]" \
		"$top/tools" --include='*.c' --include='*.h' --include='*.cc' --include='*.cpp')
	[ -z "$hits" ] || fail "a tool includes userspace/$n: $hits"
done
hits=$(grep -rn "userspace/" "$top/tools" --include='*.c' --include='*.h' | grep '#[[:space:]]*include')
[ -z "$hits" ] || fail "a tool includes a path under userspace/: $hits"

# ---- symbols ---------------------------------------------------------------------------------
so=$OUTPUT/libperflib.so
[ -f "$so" ] || { echo "FAIL  $so is not built"; exit 1; }
nm -D --defined-only "$so" | awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/exported"
ls "$OUTPUT"/static/userspace/*.o >/dev/null 2>&1 || { echo "FAIL  no library objects"; exit 1; }
nm --defined-only -g "$OUTPUT"/static/userspace/*.o | awk 'NF == 3 { print $3 }' |
	sort -u >"$tmp/defined"
[ -s "$tmp/exported" ] && [ -s "$tmp/defined" ] || { echo "FAIL  cannot read symbols"; exit 1; }
comm -23 "$tmp/defined" "$tmp/exported" >"$tmp/hidden"
[ -s "$tmp/hidden" ] || fail "the library hides nothing: the check below would prove nothing"
n=0
for d in "$OUTPUT"/tools-obj/*/; do
	t=$(basename "$d")
	ls "$d"*.o >/dev/null 2>&1 || continue
	n=$((n + 1))
	nm -u "$d"*.o | awk 'NF { print $NF }' | sort -u >"$tmp/undef"
	bad=$(comm -12 "$tmp/undef" "$tmp/hidden" | tr '\n' ' ')
	[ -z "$bad" ] || fail "tools/$t calls hidden library functions: $bad"
done
[ "$n" -ge 5 ] || fail "only $n tool object directories under $OUTPUT/tools-obj"

# ---- libpdh: pdh.h only -----------------------------------------------------------------------
pso=$OUTPUT/libpdh.so
[ -f "$pso" ] || { echo "FAIL  $pso is not built"; exit 1; }
nm -D --defined-only "$pso" | awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/pdh_exported"
nm --defined-only -g "$OUTPUT/libpdh.a" 2>/dev/null | awk 'NF == 3 { print $3 }' |
	sort -u >"$tmp/pdh_defined"
comm -23 "$tmp/pdh_defined" "$tmp/pdh_exported" >"$tmp/pdh_hidden"
[ -s "$tmp/pdh_hidden" ] || fail "libpdh hides nothing: the check below would prove nothing"
for d in "$top"/tools/*/; do
	t=$(basename "$d")
	for h in "$top"/pdh/*.h; do
		hn=$(basename "$h")
		hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]([^>\"]*/)?${hn}[>\"]" \
			"$d" --include='*.c' --include='*.h')
		[ -z "$hits" ] || fail "tools/$t includes libpdh's private pdh/$hn: $hits"
	done
	ls "$OUTPUT/tools-obj/$t/"*.o >/dev/null 2>&1 || continue
	nm -u "$OUTPUT/tools-obj/$t/"*.o | awk 'NF { print $NF }' | sort -u >"$tmp/undef"
	bad=$(comm -12 "$tmp/undef" "$tmp/pdh_hidden" | tr '\n' ' ')
	[ -z "$bad" ] || fail "tools/$t calls libpdh internals: $bad"
done
# the static archive: the API, or the library's prefix (sanitizer builds add __asan names)
bad=$(nm -g --defined-only "$OUTPUT/libpdh.a" 2>/dev/null | awk 'NF == 3 { print $3 }' |
	sort -u | comm -23 - "$tmp/pdh_exported" | grep -v -e '^pdh_' -e '^__' | tr '\n' ' ')
[ -z "$bad" ] || fail "libpdh.a defines names outside the API without the pdh_ prefix: $bad"
grep -q '^Pdh' "$tmp/pdh_exported" || fail "libpdh.so exports no Pdh function"
# and the Win32 events and waits of pdh/event.c (PDH_1.2 adds the perflib-win32 module's)
bad=$(grep -v -e '^Pdh' -e '^CreateEventW$' -e '^SetEvent$' -e '^ResetEvent$' \
	-e '^WaitForSingleObject$' -e '^CloseHandle$' -e '^CreateEventA$' \
	-e '^WaitForMultipleObjects$' -e '^RegisterWaitForSingleObject$' -e '^UnregisterWait$' \
	-e '^UnregisterWaitEx$' -e '^PDH_' "$tmp/pdh_exported" | tr '\n' ' ')
[ -z "$bad" ] || fail "libpdh.so exports names beyond the PDH API: $bad"

# the check itself: an object calling a hidden function is caught (a C name: sanitizer builds
# also define names such as __odr_asan.x)
probe=$(grep -m1 '^perflib_[a-z0-9_]*$' "$tmp/hidden")
printf 'int %s(void);\nint f(void) { return %s(); }\n' "$probe" "$probe" >"$tmp/probe.c"
[ -n "$probe" ] && cc -c -w -o "$tmp/probe.o" "$tmp/probe.c" 2>/dev/null &&
	nm -u "$tmp/probe.o" | awk 'NF { print $NF }' | sort -u | comm -12 - "$tmp/hidden" |
	grep -q . || fail "a probe calling hidden '$probe' is not caught"
probe=$(grep -m1 '^pdh_[a-z0-9_]*$' "$tmp/pdh_hidden")
printf 'int %s(void);\nint f(void) { return %s(); }\n' "$probe" "$probe" >"$tmp/probe.c"
[ -n "$probe" ] && cc -c -w -o "$tmp/probe.o" "$tmp/probe.c" 2>/dev/null &&
	nm -u "$tmp/probe.o" | awk 'NF { print $NF }' | sort -u | comm -12 - "$tmp/pdh_hidden" |
	grep -q . || fail "a probe calling libpdh's hidden '$probe' is not caught"

[ "$failures" -eq 0 ] || exit 1
echo "ok: no tool includes userspace/; $n tool directories call exported functions only;"
echo "ok: no tool includes pdh/ or calls libpdh internals; libpdh exports the API only"
