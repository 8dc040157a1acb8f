#!/bin/sh
# SPDX-License-Identifier: MIT
# test_bpf_doc.sh - the complete minimal BPF program of docs/BPF.md ("myprov.bpf.c": creates,
# updates and deletes its own instances) is extracted, compiled with clang -target bpf
# against include/perflib_bpf.h and loaded (verifier) with bpftool into a private pin
# directory, which is removed. Environment: OUTPUT (build dir with bpf/vmlinux.h).
# Exit 0 pass, 77 skip, other fail.
: "${OUTPUT:?}"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
command -v bpftool >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin"
command -v clang >/dev/null 2>&1 || skip "no clang"
[ -f "$OUTPUT/bpf/vmlinux.h" ] || skip "no $OUTPUT/bpf/vmlinux.h (make first)"
work=$(mktemp -d)
pin=/sys/fs/bpf/perflib-bpf-doc-$$
trap 'rm -rf "$work" "$pin"' EXIT INT TERM
# the first c block after the program's introduction
awk '/complete minimal program \(`myprov.bpf.c`\)/ { f = 1 }
	f && /^```c$/ { c = 1; next } c && /^```$/ { exit } c { print }' docs/BPF.md >"$work/myprov.bpf.c"
grep -q perflib_instance_create "$work/myprov.bpf.c" || fail "no program found in docs/BPF.md"
grep -q perflib_instance_delete "$work/myprov.bpf.c" || fail "the program deletes nothing"
grep -q perflib_gcounter_add "$work/myprov.bpf.c" || fail "the program updates nothing"
clang -target bpf -g -O2 -D__TARGET_ARCH_x86 -Iinclude -Ibpf -I"$OUTPUT/bpf" \
	-c "$work/myprov.bpf.c" -o "$work/myprov.bpf.o" || fail "docs/BPF.md's program does not compile"
[ "$(id -u)" = 0 ] || { echo "compiled (not root: not loaded)"; exit 0; }
mountpoint -q /sys/fs/bpf 2>/dev/null || { echo "compiled (no bpffs: not loaded)"; exit 0; }
bpftool prog loadall "$work/myprov.bpf.o" "$pin" >"$work/load.log" 2>&1 ||
	fail "docs/BPF.md's program does not load: $(tail -20 "$work/load.log")"
for p in my_exec my_sys_enter my_exit; do
	[ -e "$pin/$p" ] || fail "program $p not loaded"
done
echo "docs/BPF.md minimal program: compiles and loads"
