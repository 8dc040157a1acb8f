/* SPDX-License-Identifier: MIT */
/*
 * test_helpers.h - the contexts of tests/bpf/test_helpers.bpf.c, the program through which
 * tests/bpf/test_bpf_helpers.c runs the perflib_bpf.h helpers (BPF_PROG_TEST_RUN of
 * syscall programs: the kernel copies the context back, results included).
 */
#ifndef PERFLIB_TEST_HELPERS_H
#define PERFLIB_TEST_HELPERS_H

#define TH_NAME_UNITS 64 /* PERFLIB_BPF_KEY_MAX */
#define TH_NAME_BYTES 64 /* PERFLIB_BPF_NAME_MAX */

/* th_key_utf16, th_key_ascii, th_slot_key, th_find_key: names in, keys and slots out */
struct th_key_ctx {
	__u16 name16[TH_NAME_UNITS]; /* UTF-16 name (th_key_utf16) */
	char name8[TH_NAME_BYTES]; /* ASCII name, NUL-terminated (th_key_ascii, th_instance_key) */
	__u32 len;		   /* units of name16 */
	__u32 id;		   /* InstanceId */
	__u64 scope;		   /* uniqueness scope */
	__u32 slot;		   /* slot index (th_slot_key) */
	__u32 pid;		   /* owner pid (th_slot_key, th_instance_key) */
	struct perflib_index_key key; /* out (in for th_find_key) */
	__s64 found;		      /* out: slot index or -1 (th_find_key, th_find) */
	__u32 flags;		      /* PERFLIB_FIND_* (th_find) */
	__u32 pad;		      /* 0 */
};

/* th_counter: one counter operation on slot @slot, position @pos */
enum th_op {
	TH_ADD,
	TH_ADD32,
	TH_SET,
	TH_SET32,
	TH_READ,
	TH_READ32,
};

struct th_counter_ctx {
	__u32 slot;  /* slot index */
	__u32 pos;   /* counter position */
	__u32 op;    /* enum th_op */
	__s32 ret;   /* out: helper's return (0 / -1) */
	__u64 value; /* in: operand; out: value read */
};

#endif /* PERFLIB_TEST_HELPERS_H */
