// SPDX-License-Identifier: MIT
/*
 * test_instances.bpf.c - perflib_instance_create / perflib_instance_delete behind a syscall
 * program (BPF_PROG_TEST_RUN) and a tracing program (tp_btf/sys_enter, for the process
 * target_tgid: getppid creates instance "tp" with id tp_id, getpgrp deletes it), for
 * tests/bpf/test_bpf_instances.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "perflib_bpf.h"
#include "test_instances.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

PERFLIB_DATA_MAP_RAW(slots);
PERFLIB_INDEX_MAP(idx);
PERFLIB_LIVE_MAP(live);
PERFLIB_GEOMETRY(ti_geo);
const volatile __u8 ti_guid[16] = {};

/* the tracing program's target and results */
__u32 target_tgid = 0;
__u32 tp_id = 0;
__s64 tp_created = -1;
__s64 tp_deleted = -1;

SEC("syscall")
int ti_create(struct ti_ctx *ctx)
{
	__u16 name[TI_NAME_UNITS];
	char ascii[TI_NAME_UNITS];

	if (ctx->ascii) {
		__builtin_memcpy(ascii, ctx->name8, sizeof(ascii));
		ascii[TI_NAME_UNITS - 1] = 0;
		ctx->ret = perflib_instance_create_ascii(&slots, &idx, &live, &ti_geo, ti_guid,
							 ascii, ctx->id, ctx->hint);
	} else {
		__builtin_memcpy(name, ctx->name16, sizeof(name));
		ctx->ret = perflib_instance_create(&slots, &idx, &live, &ti_geo, ti_guid, name,
						   ctx->len, ctx->id, ctx->hint);
	}
	return 0;
}

SEC("syscall")
int ti_delete(struct ti_ctx *ctx)
{
	ctx->ret = perflib_instance_delete(&slots, &idx, &live, &ti_geo, ctx->slot);
	return 0;
}

/* what a counting program does: add to counter 0 of the slot it was given */
SEC("syscall")
int ti_add(struct ti_ctx *ctx)
{
	ctx->ret = perflib_gcounter_add(perflib_gslot(&slots, &ti_geo, ctx->slot), &ti_geo, 0,
					ctx->value);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(ti_sys_enter, struct pt_regs *regs, long nr)
{
	if (!target_tgid || bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	if (nr == 110) { /* getppid */
		char name[TI_NAME_UNITS] = "tp";

		tp_created = perflib_instance_create_ascii(&slots, &idx, &live, &ti_geo, ti_guid,
							   name, tp_id, 0);
	} else if (nr == 111 && tp_created >= 0) /* getpgrp */
		tp_deleted =
			perflib_instance_delete(&slots, &idx, &live, &ti_geo, (__u32)tp_created);
	return 0;
}
