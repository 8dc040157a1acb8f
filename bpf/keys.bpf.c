// SPDX-License-Identifier: MIT
/*
 * keys.bpf.c - which segments of one counter set hold an index key, in one system call.
 *
 * PerfCreateInstance inserts an instance's (name, id) key into the index of the segment
 * holding its slot, then must look in every other segment's index (layout.h): one
 * bpf(BPF_MAP_LOOKUP_ELEM) per segment, the whole cost of a create in a set that has grown.
 * This program, pinned as <set>/keys and run with BPF_PROG_RUN, does those lookups in the
 * kernel and returns a bitmask of the segments whose index holds the key. It only reads: the
 * library still decides (instance.c, key_unique) by looking again at the segments named.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "perflib_bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

PERFLIB_INDEX_MAP(idx);

SEC("syscall")
int perflib_keys(struct perflib_keys_args *args)
{
	struct perflib_index_key key = args->key;
	__u32 skip = args->skip, nr = args->nr_segs;
	struct bpf_iter_num it;
	__u64 mask = 0;
	void *seg;
	int *kp;

	if (nr > PERFLIB_MAX_SEGS)
		nr = PERFLIB_MAX_SEGS;
	bpf_iter_num_new(&it, 0, (int)nr);
	while ((kp = bpf_iter_num_next(&it))) {
		__u32 k = (__u32)*kp;

		if (k == skip)
			continue;
		seg = bpf_map_lookup_elem(&idx, &k);
		if (!seg)
			break;
		if (bpf_map_lookup_elem(seg, &key))
			mask |= 1ULL << (k & 63);
	}
	bpf_iter_num_destroy(&it);
	args->mask = mask;
	return 0;
}
