// SPDX-License-Identifier: MIT
/*
 * bench_instances.bpf.c - the cost of an instance created and deleted by a BPF program
 * (tests/bench/bench_sysd.c): a syscall program (BPF_PROG_TEST_RUN) runs @n
 * perflib_instance_create_ascii + perflib_instance_delete pairs in a bpf_loop and times them
 * with bpf_ktime_get_ns (a syscall program takes no repeat count).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "perflib_bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

PERFLIB_DATA_MAP_RAW(slots);
PERFLIB_INDEX_MAP(idx);
PERFLIB_LIVE_MAP(live);
PERFLIB_GEOMETRY(bi_geo);
const volatile __u8 bi_guid[16] = {};

/* in: n; out: failed (creates or deletes that did not return success), ns */
struct bi_ctx {
	__u32 n;
	__u32 failed;
	__u64 ns;
};

static long bi_pair(__u64 i, void *arg)
{
	char name[PERFLIB_BPF_KEY_MAX] = "bench pair";
	struct bi_ctx *c = arg;
	__s64 s;

	s = perflib_instance_create_ascii(&slots, &idx, &live, &bi_geo, bi_guid, name, (__u32)i, 0);
	if (s < 0 || perflib_instance_delete(&slots, &idx, &live, &bi_geo, (__u32)s)) {
		c->failed++;
		return 1;
	}
	return 0;
}

SEC("syscall")
int bi_pairs(struct bi_ctx *ctx)
{
	struct bi_ctx c = {.n = ctx->n};
	__u64 t0 = bpf_ktime_get_ns();

	bpf_loop(c.n, bi_pair, &c, 0);
	ctx->ns = bpf_ktime_get_ns() - t0;
	ctx->failed = c.failed;
	return 0;
}
