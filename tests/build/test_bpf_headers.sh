#!/bin/sh
# SPDX-License-Identifier: MIT
# test_bpf_headers.sh - include/perflib_bpf.h as BPF programs include it. A program using
# every helper family (slots, counters, keys, both lookups, the scan, instance create and
# delete) compiles with clang -target bpf after vmlinux.h and after <linux/bpf.h> (whose
# older versions lack struct bpf_iter_num), and the <linux/bpf.h> build loads (verifier)
# with bpftool into a private pin directory, which is removed. The PERFLIB_E* errors equal
# the kernel's errno-base.h numbers. What must not compile does not, with a message that
# says what to do: the header without either base header, and map arguments out of their
# order (data, index, live). Environment: OUTPUT (build dir with bpf/vmlinux.h).
# Exit 0 pass, 77 skip, other fail.
: "${OUTPUT:?}"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
command -v bpftool >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin"
command -v clang >/dev/null 2>&1 || skip "no clang"
[ -f "$OUTPUT/bpf/vmlinux.h" ] || skip "no $OUTPUT/bpf/vmlinux.h (make first)"
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
pin=/sys/fs/bpf/perflib-bpf-headers-$$
trap 'rm -rf "$work" "$pin"' EXIT INT TERM
# <linux/bpf.h> includes <asm/types.h>, which lives in the multiarch directory
arch=$(gcc -print-multiarch 2>/dev/null)
[ -n "$arch" ] || arch=$(uname -m)-linux-gnu
bpfcc() { # $1 = source, $2 = object, rest = extra flags
	src=$1 obj=$2
	shift 2
	clang -target bpf -g -O2 -Wall -Werror "$@" -idirafter "/usr/include/$arch" \
		-I"$top/include" -I"$top/bpf" -I"$OUTPUT/bpf" -c "$src" -o "$obj"
}

cat >"$work/prog.bpf.c" <<'EOF'
#ifdef USE_VMLINUX
#include "vmlinux.h"
#else
#include <linux/bpf.h>
#endif
#include <bpf/bpf_helpers.h>
#include "perflib_bpf.h"

PERFLIB_DATA_MAP_RAW(slots);
PERFLIB_INDEX_MAP(idx);
PERFLIB_LIVE_MAP(live);
PERFLIB_GEOMETRY(geo1); /* a second geometry: the g forms */
const volatile __u8 set_guid[16];

struct args {
	__u32 id;
	__u32 pad;
	__s64 ret;
};

SEC("syscall")
int hdr_create_ascii(struct args *a)
{
	char name[PERFLIB_BPF_KEY_MAX] = "hdr";
	__s64 s;

	s = perflib_instance_create_ascii(&slots, &idx, &live, &perflib_geo, set_guid, name,
					  a->id, 0);
	if (s >= 0) {
		perflib_counter_add(perflib_slot(&slots, (__u32)s), 0, 1);
		perflib_gcounter_set32(perflib_gslot(&slots, &geo1, (__u32)s), &geo1, 1, 2);
		s = perflib_instance_delete(&slots, &idx, &live, &perflib_geo, (__u32)s);
	}
	a->ret = s == -PERFLIB_EEXIST || s == -PERFLIB_ENOSPC ? 1 : s;
	return 0;
}

SEC("syscall")
int hdr_create_utf16(struct args *a)
{
	__u16 name[PERFLIB_BPF_KEY_MAX] = {'h', 'd', 'r'};

	a->ret = perflib_instance_create(&slots, &idx, &live, &perflib_geo, set_guid, name, 3,
					 a->id, 0);
	return 0;
}

SEC("syscall")
int hdr_find(struct args *a)
{
	struct perflib_index_key key;
	__s64 i;

	perflib_instance_key_ascii(&key, "hdr", a->id, 0);
	i = perflib_find_by_key(&slots, &idx, &key);
	if (i < 0)
		i = perflib_gfind_by_key(&slots, &idx, &geo1, &key);
	perflib_glive_set(&live, &geo1, 0, 0);
	a->ret = i + perflib_gnr_slots(&slots, &perflib_geo);
	return 0;
}

/*
 * (a program of its own: with perflib_find_by_key beside it, Linux 6.18 refuses the program,
 * "verifier bug: No program to jit ... (subprog < 0)", whichever base header)
 */
SEC("syscall")
int hdr_scan(struct args *a)
{
	a->ret = perflib_find_instance(slots, a->id, "hdr", PERFLIB_FIND_ID | PERFLIB_FIND_NAME);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
EOF

bpfcc "$work/prog.bpf.c" "$work/vmlinux.o" -DUSE_VMLINUX 2>"$work/cc.log" ||
	fail "the helpers do not compile after vmlinux.h: $(head -20 "$work/cc.log")"
bpfcc "$work/prog.bpf.c" "$work/uapi.o" 2>"$work/cc.log" ||
	fail "the helpers do not compile after <linux/bpf.h>: $(head -20 "$work/cc.log")"

# the error numbers, beside the kernel's own
cat >"$work/errno.bpf.c" <<'EOF'
#include <linux/bpf.h>
#include <asm-generic/errno-base.h>
#include <bpf/bpf_helpers.h>
#include "perflib_bpf.h"
_Static_assert(PERFLIB_ENOENT == ENOENT, "ENOENT");
_Static_assert(PERFLIB_E2BIG == E2BIG, "E2BIG");
_Static_assert(PERFLIB_EBUSY == EBUSY, "EBUSY");
_Static_assert(PERFLIB_EEXIST == EEXIST, "EEXIST");
_Static_assert(PERFLIB_EINVAL == EINVAL, "EINVAL");
_Static_assert(PERFLIB_ENOSPC == ENOSPC, "ENOSPC");
EOF
bpfcc "$work/errno.bpf.c" "$work/errno.o" 2>"$work/cc.log" ||
	fail "PERFLIB_E* differ from errno-base.h: $(head -10 "$work/cc.log")"

# what must not compile, and what it says
printf '#include "perflib_bpf.h"\n' >"$work/bare.bpf.c"
bpfcc "$work/bare.bpf.c" "$work/bare.o" 2>"$work/cc.log" &&
	fail "perflib_bpf.h compiled without vmlinux.h or <linux/bpf.h>"
grep -q 'vmlinux.h.* or <linux/bpf.h> before it' "$work/cc.log" ||
	fail "no clear message without a base header: $(head -5 "$work/cc.log")"
sed 's/perflib_find_by_key(&slots, &idx, &key)/perflib_find_by_key(\&idx, \&slots, \&key)/' \
	"$work/prog.bpf.c" >"$work/swapped.bpf.c"
grep -q 'perflib_find_by_key(&idx, &slots' "$work/swapped.bpf.c" || fail "no swap made"
bpfcc "$work/swapped.bpf.c" "$work/swapped.o" 2>"$work/cc.log" &&
	fail "perflib_find_by_key(index, data, ...) compiled"
grep -q 'map order: data, index, live' "$work/cc.log" ||
	fail "no clear message for swapped maps: $(head -5 "$work/cc.log")"

[ "$(id -u)" = 0 ] || { echo "compiled (not root: not loaded)"; exit 0; }
mountpoint -q /sys/fs/bpf 2>/dev/null || { echo "compiled (no bpffs: not loaded)"; exit 0; }
bpftool prog loadall "$work/uapi.o" "$pin" >"$work/load.log" 2>&1 ||
	fail "the <linux/bpf.h> build does not load: $(tail -20 "$work/load.log")"
for p in hdr_create_ascii hdr_create_utf16 hdr_find hdr_scan; do
	[ -e "$pin/$p" ] || fail "program $p not loaded"
done
echo "perflib_bpf.h: compiles after vmlinux.h and <linux/bpf.h>, loads, refuses what it must"
