// SPDX-License-Identifier: MIT
/*
 * test_helpers.bpf.c - every perflib_bpf.h helper behind a syscall program, run with
 * BPF_PROG_TEST_RUN by tests/bpf/test_bpf_helpers.c (contexts: test_helpers.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "perflib_bpf.h"
#include "test_helpers.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

PERFLIB_DATA_MAP_RAW(slots);
PERFLIB_INDEX_MAP(idx);

SEC("syscall")
int th_key_utf16(struct th_key_ctx *ctx)
{
	__u16 name[TH_NAME_UNITS];
	struct perflib_index_key key;

	/* the helper reads at variable offsets: from the stack, not the context */
	__builtin_memcpy(name, ctx->name16, sizeof(name));
	perflib_key_utf16(&key, name, ctx->len, ctx->id, ctx->scope);
	ctx->key = key;
	return 0;
}

SEC("syscall")
int th_key_ascii(struct th_key_ctx *ctx)
{
	char name[TH_NAME_BYTES];
	struct perflib_index_key key;

	__builtin_memcpy(name, ctx->name8, sizeof(name));
	perflib_key_ascii(&key, name, ctx->id, ctx->scope);
	ctx->key = key;
	return 0;
}

SEC("syscall")
int th_instance_key(struct th_key_ctx *ctx)
{
	char name[TH_NAME_BYTES];
	struct perflib_index_key key;

	__builtin_memcpy(name, ctx->name8, sizeof(name));
	perflib_instance_key_ascii(&key, name, ctx->id, ctx->pid);
	ctx->key = key;
	ctx->found = perflib_find_by_key(&slots, &idx, &key);
	return 0;
}

SEC("syscall")
int th_slot_key(struct th_key_ctx *ctx)
{
	struct perflib_index_key key;
	void *slot = perflib_slot(&slots, ctx->slot);

	if (!slot)
		return -1;
	perflib_slot_key(slot, ctx->pid, &key);
	ctx->key = key;
	return 0;
}

SEC("syscall")
int th_find_key(struct th_key_ctx *ctx)
{
	struct perflib_index_key key = ctx->key;

	ctx->found = perflib_find_by_key(&slots, &idx, &key);
	return 0;
}

SEC("syscall")
int th_find(struct th_key_ctx *ctx)
{
	char name[TH_NAME_BYTES];

	__builtin_memcpy(name, ctx->name8, sizeof(name));
	ctx->found = perflib_find_instance(slots, ctx->id, name, ctx->flags);
	return 0;
}

SEC("syscall")
int th_counter(struct th_counter_ctx *ctx)
{
	void *slot = perflib_slot(&slots, ctx->slot);
	__u32 pos = ctx->pos;
	__u64 v = ctx->value;

	switch (ctx->op) {
	case TH_ADD:
		ctx->ret = perflib_counter_add(slot, pos, v);
		break;
	case TH_ADD32:
		ctx->ret = perflib_counter_add32(slot, pos, (__u32)v);
		break;
	case TH_SET:
		ctx->ret = perflib_counter_set(slot, pos, v);
		break;
	case TH_SET32:
		ctx->ret = perflib_counter_set32(slot, pos, (__u32)v);
		break;
	case TH_READ:
		ctx->value = perflib_counter_read(slot, pos);
		ctx->ret = perflib_counter_ptr(slot, pos) ? 0 : -1;
		break;
	case TH_READ32:
		ctx->value = perflib_counter_read32(slot, pos);
		ctx->ret = perflib_counter_ptr(slot, pos) ? 0 : -1;
		break;
	default:
		ctx->ret = -1;
	}
	return 0;
}
