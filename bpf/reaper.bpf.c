// SPDX-License-Identifier: MIT
/*
 * reaper.bpf.c - kernel-assisted cleanup of one counter set: when a process exits, free
 * the slots it still holds, exactly as the user-space reaper would (perflib_slot_reap in
 * instance.c), before its parent can even wait for it.
 *
 * Attached to sched_process_exit, which every exiting thread passes before the process
 * becomes a zombie. The process is gone when its last thread exits: do_exit() decrements
 * signal->live before the tracepoint, so live == 0 means "this is the last thread" on
 * every kernel (the group_dead argument exists only from 6.16 on). Owners are recorded
 * with the pid the provider sees (getpid()) and its stamp (layout.h: /proc/self/stat
 * starttime and a tag of its pid namespace), so the exiting process is identified the same
 * way: its tgid in its own pid namespace, its group leader's start_boottime in clock
 * ticks and the inode of that namespace.
 *
 * Per exit: the procs map first (fast path: no entry for this process, nothing to do),
 * then every slot of every segment (bpf_loop). A slot whose word names the process is taken by CAS to
 * CLAIMED(gen + 1, pid), its index key deleted if it points to the slot, the slot zeroed
 * from the Windows block on, its live bit cleared, and stored FREE(gen + 2, 0), as user
 * space does.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "perflib_bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

PERFLIB_DATA_MAP_RAW(slots);
PERFLIB_INDEX_MAP(idx);
PERFLIB_LIVE_MAP(live);
PERFLIB_PROCS_MAP(procs);

/* sysconf(_SC_CLK_TCK): /proc's start time unit */
const volatile __u64 clk_tck = 100;

/* slots freed since load, for tests and `bpftool map dump` */
__u64 nr_reaped = 0;

struct reap_ctx {
	__u32 tgid;    /* exiting process, in its own pid namespace */
	__u32 nr_live; /* LIVE procs entries seen */
	__u64 start;   /* its stamp: start time in clock ticks since boot, namespace tag */
	__u32 found;   /* it has a procs entry */
	__u32 reaped;  /* slots freed */
};

/*
 * Is the recorded (pid, start) the exiting process? Only an exact match: a start of 0
 * (a claimer killed before it wrote its start time, or a process that could not read
 * /proc) is left to the lazy reaper, which checks the pid alone. Matching on the pid
 * alone here could free a slot that a process of another pid namespace, with the same
 * pid, is claiming right now.
 */
static __always_inline int start_matches(__u64 recorded, __u64 start)
{
	return recorded == start;
}

/* procs entries checked in straight-line code before bpf_loop takes over (the default 64) */
#define PROCS_INLINE PERFLIB_PROCS_DEFAULT

/* the fast path: is procs entry @i the exiting process's? (then free it) */
static __always_inline void procs_check(struct reap_ctx *r, __u32 i)
{
	struct perflib_proc *e = bpf_map_lookup_elem(&procs, &i);
	__u64 w;

	if (!e)
		return;
	/* {state, gen}: one 8-byte word, state in the low half (callback.c) */
	w = *(volatile __u64 *)e;
	if ((__u32)w != PERFLIB_PROC_LIVE)
		return;
	r->nr_live++;
	if (e->pid != r->tgid || !start_matches(e->start, r->start))
		return;
	r->found = 1;
	__sync_val_compare_and_swap((__u64 *)e, w, (w & 0xFFFFFFFF00000000ULL) + (1ULL << 32));
}

static long procs_cb(__u32 i, void *c)
{
	procs_check(c, PROCS_INLINE + i);
	return 0;
}

/* delete the index key of the name stored in claimed slot @i if it points to @i */
static __always_inline void slot_unindex(void *slot, __u32 i, __u32 pid)
{
	struct perflib_index_key key;
	struct perflib_index_val *v;

	void *seg = perflib_segment(&idx, perflib_seg_of(i, perflib_geo.seg0_slots));

	if (!seg)
		return;
	perflib_slot_key(slot, pid, &key);
	v = bpf_map_lookup_elem(seg, &key);
	if (v && v->slot == i)
		bpf_map_delete_elem(seg, &key);
}

/* one 8-byte word of what user space's slot_release clears: everything from the block on */
static long zero_cb(__u32 k, void *c)
{
	__u32 idx = *(__u32 *)c;
	__u64 off = PERFLIB_BLOCK_OFFSET + 8 * (__u64)k;
	void *slot;

	/* the bound must hold for the register the store uses */
	barrier_var(off);
	if (off + 8 > perflib_geo.slot_size)
		return 1;
	barrier_var(off);
	slot = perflib_slot(&slots, idx);
	if (!slot)
		return 1;
	*(__u64 *)(slot + off) = 0;
	return 0;
}

static long slot_cb(__u32 i, void *c)
{
	struct reap_ctx *r = c;
	__u64 w, claimed;
	void *slot;
	__u32 gen;

	slot = perflib_slot(&slots, i);
	if (!slot)
		return 1;
	w = perflib_slot_word(slot);
	if (perflib_word_state(w) == PERFLIB_SLOT_FREE || perflib_word_pid(w) != r->tgid)
		return 0;
	if (!start_matches(((struct perflib_slot_hdr *)slot)->owner_start, r->start))
		return 0;
	/* take it as the user-space reaper does: the dead owner's pid stays in the word */
	gen = perflib_word_gen(w);
	claimed = perflib_make_word(PERFLIB_SLOT_CLAIMED, perflib_gen_add(gen, 1), r->tgid);
	if (__sync_val_compare_and_swap((__u64 *)slot, w, claimed) != w)
		return 0;
	slot_unindex(slot, i, r->tgid);
	/* a loop the verifier checks once, whatever the slot size */
	bpf_loop((perflib_geo.slot_size - PERFLIB_BLOCK_OFFSET) / 8, zero_cb, &i, 0);
	((struct perflib_slot_hdr *)slot)->owner_start = 0;
	/* readers stop visiting it before anyone can claim it again */
	perflib_glive_set(&live, &perflib_geo, i, 0);
	/* a full barrier, like the user-space release store: the zeroes are visible first */
	__sync_val_compare_and_swap(
		(__u64 *)slot, claimed,
		perflib_make_word(PERFLIB_SLOT_FREE, perflib_gen_add(gen, 2), 0));
	r->reaped++;
	return 0;
}

/*
 * The tgid of @p in its own pid namespace (what getpid() returned to it), and that
 * namespace's inode in *ret_ns_ino: the owner identity user space records (layout.h).
 */
static __always_inline __u32 task_ns_tgid(struct task_struct *p, __u32 *ret_ns_ino)
{
	struct pid *pid = BPF_CORE_READ(p, signal, pids[PIDTYPE_TGID]);
	unsigned int level;
	struct upid up;

	*ret_ns_ino = PERFLIB_PIDNS_INIT_INO;
	if (!pid)
		return BPF_CORE_READ(p, tgid);
	level = BPF_CORE_READ(pid, level);
	if (level > 64)
		return 0;
	if (bpf_core_read(&up, sizeof(up),
			  (void *)pid + bpf_core_field_offset(struct pid, numbers) +
				  level * bpf_core_type_size(struct upid)))
		return 0;
	*ret_ns_ino = BPF_CORE_READ(up.ns, ns.inum);
	return up.nr;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(perflib_reaper, struct task_struct *p)
{
	struct reap_ctx r = {};
	__u32 i, ns_ino;
	__u64 boot;

	/* not the last thread: the process lives on */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	r.tgid = task_ns_tgid(p, &ns_ino);
	if (!r.tgid || !clk_tck)
		return 0;
	boot = BPF_CORE_READ(p, group_leader, start_boottime);
	r.start = perflib_owner_stamp(boot / (1000000000ULL / clk_tck), ns_ino);
	for (i = 0; i < PROCS_INLINE; i++) {
		if (i >= perflib_geo.nr_procs)
			break;
		procs_check(&r, i);
	}
	if (perflib_geo.nr_procs > PROCS_INLINE)
		bpf_loop(perflib_geo.nr_procs - PROCS_INLINE, procs_cb, &r, 0);
	/*
	 * No entry: the process never provided into this counter set, unless every entry was
	 * taken when it started providing (then it has none): walk the slots in that case too.
	 */
	if (!r.found && r.nr_live < perflib_geo.nr_procs)
		return 0;
	/* the slots of every segment there is: slot_cb stops at the first one missing */
	bpf_loop(perflib_geo.capacity < PERFLIB_BPF_LOOP_MAX ? perflib_geo.capacity
							     : PERFLIB_BPF_LOOP_MAX,
		 slot_cb, &r, 0);
	if (r.reaped)
		__sync_fetch_and_add(&nr_reaped, r.reaped);
	return 0;
}
