/* SPDX-License-Identifier: MIT */
/*
 * test_instances.h - the contexts of tests/bpf/test_instances.bpf.c, through which
 * tests/bpf/test_bpf_instances.c creates and deletes kernel-owned instances from BPF.
 */
#ifndef PERFLIB_TEST_INSTANCES_H
#define PERFLIB_TEST_INSTANCES_H

#define TI_NAME_UNITS 64 /* PERFLIB_BPF_KEY_MAX */

/*
 * ti_create (in: name, len or ascii, id, hint; out: ret), ti_delete (in: slot; out: ret) and
 * ti_add (in: slot, value; out: ret)
 */
struct ti_ctx {
	__u16 name16[TI_NAME_UNITS]; /* UTF-16 name (ascii == 0) */
	char name8[TI_NAME_UNITS];   /* ASCII name, NUL-terminated (ascii == 1) */
	__u32 len;		     /* units of name16 */
	__u32 ascii;		     /* 1: create from name8 */
	__u32 id;		     /* InstanceId */
	__u32 hint;		     /* first slot to try */
	__u32 slot;		     /* ti_delete, ti_add: the slot */
	__u32 pad;		     /* 0 */
	__u64 value;		     /* ti_add: added to counter position 0 */
	__s64 ret;		     /* out */
};

#endif /* PERFLIB_TEST_INSTANCES_H */
