// SPDX-License-Identifier: MIT
/*
 * bench.bpf.c - the cost of a counter update from BPF (tests/bench/bench_bpf.c): the same
 * loop of BENCH_INNER 8-byte atomic adds, once bare on a plain array map value, once
 * through the perflib_bpf.h helpers on a counter set's data map; with the map lookup in
 * every iteration and hoisted out of the loop. XDP programs, for BPF_PROG_TEST_RUN's
 * repeat count.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "perflib_bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define BENCH_INNER 64

PERFLIB_DATA_MAP_RAW(slots);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} plain SEC(".maps");

const volatile __u32 bench_slot = 0; /* slot of the benchmark's instance */
const volatile __u32 bench_pos = 0;  /* counter position */

SEC("xdp")
int bench_empty(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("xdp")
int bench_bare_lookup(struct xdp_md *ctx)
{
	__u32 k = 0;
	int i;

	for (i = 0; i < BENCH_INNER; i++) {
		__u64 *v = bpf_map_lookup_elem(&plain, &k);

		if (v)
			__sync_fetch_and_add(v, 1);
	}
	return XDP_PASS;
}

SEC("xdp")
int bench_perflib_lookup(struct xdp_md *ctx)
{
	int i;

	for (i = 0; i < BENCH_INNER; i++)
		perflib_counter_add(perflib_slot(&slots, bench_slot), bench_pos, 1);
	return XDP_PASS;
}

SEC("xdp")
int bench_bare(struct xdp_md *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&plain, &k);
	int i;

	if (!v)
		return XDP_PASS;
	for (i = 0; i < BENCH_INNER; i++)
		__sync_fetch_and_add(v, 1);
	return XDP_PASS;
}

SEC("xdp")
int bench_perflib(struct xdp_md *ctx)
{
	void *slot = perflib_slot(&slots, bench_slot);
	int i;

	for (i = 0; i < BENCH_INNER; i++)
		perflib_counter_add(slot, bench_pos, 1);
	return XDP_PASS;
}
