// SPDX-License-Identifier: MIT
/*
 * keys.bpf.c - which segments of one size class of a counter set hold an index key, in one
 * system call.
 *
 * PerfCreateInstance inserts an instance's (name, id) key into the index of the leader of the
 * segment holding its slot, then must look in every other leader's index of the class
 * (layout.h): one bpf(BPF_MAP_LOOKUP_ELEM) per leader, the whole cost of a create in a set
 * that has grown. This program, pinned as <set>/keys and run with BPF_PROG_RUN, does those
 * lookups in the kernel and returns a bitmask of the leaders whose index holds the key
 * (bit k for leader k). It only reads:
 * the library still decides (instance.c, key_unique) by looking again at the segments named.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "perflib_bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* the idxs pins of the classes (a set with fewer classes gives class 0's for the others) */
PERFLIB_INDEX_MAP(idx);
PERFLIB_INDEX_MAP(idx1);
PERFLIB_INDEX_MAP(idx2);
PERFLIB_INDEX_MAP(idx3);

static __always_inline __u64 where(void *outer, const struct perflib_index_key *key, __u32 nr,
				   __u32 skip)
{
	struct bpf_iter_num it;
	__u64 mask = 0;
	void *seg;
	int *kp;

	if (nr > PERFLIB_MAX_SEGS)
		nr = PERFLIB_MAX_SEGS;
	bpf_iter_num_new(&it, 0, (int)nr);
	while ((kp = bpf_iter_num_next(&it))) {
		__u32 k = (__u32)*kp;

		/* the leaders only: the others' indexes hold nothing (perflib_idx_leader) */
		if (k == skip || !perflib_idx_leads(k))
			continue;
		seg = bpf_map_lookup_elem(outer, &k);
		if (!seg)
			break;
		if (bpf_map_lookup_elem(seg, key))
			mask |= 1ULL << (k & 63);
	}
	bpf_iter_num_destroy(&it);
	return mask;
}

SEC("syscall")
int perflib_keys(struct perflib_keys_args *args)
{
	struct perflib_index_key key = args->key;
	__u32 skip = args->skip, nr = args->nr_segs;

	switch (args->cls) {
	case 0:
		args->mask = where(&idx, &key, nr, skip);
		return 0;
	case 1:
		args->mask = where(&idx1, &key, nr, skip);
		return 0;
	case 2:
		args->mask = where(&idx2, &key, nr, skip);
		return 0;
	case 3:
		args->mask = where(&idx3, &key, nr, skip);
		return 0;
	}
	return 1;
}
