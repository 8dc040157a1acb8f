/* SPDX-License-Identifier: MIT */
/*
 * exit.h - what the machine's exit dispatcher (exit.bpf.c) and the counter sets' reaper
 * programs (reaper.bpf.c) share: the maps of <root>/exit-reaper/ (layout.h), the exiting
 * process's identity, and the tail call to the next counter set.
 */
#ifndef PERFLIB_EXIT_H
#define PERFLIB_EXIT_H

#include "layout.h"

/*
 * Not preallocated: its elements are the provider processes there are, not room for
 * PERFLIB_EXIT_PROVS of them (9.4 MB of kernel memory per root when preallocated; 1 MB of
 * buckets now). Elements are added and updated from user space, deleted by the dispatcher.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct perflib_exit_key);
	__type(value, struct perflib_exit_val);
	__uint(max_entries, PERFLIB_EXIT_PROVS);
} provs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, PERFLIB_EXIT_IDS);
} progs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct perflib_exit_ctx);
	__uint(max_entries, 1);
} exit_ctx SEC(".maps");

/* a counter set's reaper program walking the exiting process's slots (reaper.bpf.c) */
struct perflib_exit_walk {
	__u32 tgid;    /* exiting process, in its own pid namespace */
	__u64 start;   /* its stamp: start time in clock ticks since boot, namespace tag */
	__u32 found;   /* procs entries it holds */
	__u32 reaped;  /* slots freed */
	__u32 ent[2];  /* the first two of them */
	__u64 all;     /* ~0: walk every live slot (no entry, or more than two), else 0 */
	__u64 segs;    /* segments bits of the class walked (layout.h): segments to walk */
	__u32 seg;     /* segment being walked */
	__u32 segn;    /* its slots */
	__u32 first;   /* the class's slot of its entry 0 */
	__u64 heads;   /* the summary heads of that segment: which summary words to read */
	__u32 shift;   /* a head bit stands for 2^shift summary words in that segment */
	__u32 sj0;     /* the first summary word the heads name */
	__u32 word;    /* the class's slot of bit 0 of the live word being walked */
	__u64 bits;    /* the bitmap word */
	__u64 pending; /* slot + 1 its procs entry names as being freed, 0 = none */
	__u32 release; /* perflib_reaper_proc frees the entries it finds (after the walk) */
	__u64 cls;     /* the size class being walked */
};

/*
 * That walk's state, per CPU: the exit tracepoint runs with preemption disabled, and the
 * kernel skips a program that would run again on the CPU it runs on, so one walk at a time
 * uses a CPU's element; each reaper program writes every field before it reads it. Created
 * with the dispatcher and shared by the root's reaper programs (a reaper program given
 * none, under a root made by an earlier version, makes its own).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct perflib_exit_walk);
	__uint(max_entries, 1);
} walk SEC(".maps");

/* sysconf(_SC_CLK_TCK): /proc's start time unit */
const volatile __u64 clk_tck = 100;

/*
 * The tgid of @p in its own pid namespace (what getpid() returned to it), and that
 * namespace's inode in *ret_ns_ino: the owner identity user space records (layout.h).
 */
static __always_inline __u32 perflib_task_ns_tgid(struct task_struct *p, __u32 *ret_ns_ino)
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

/* the owner stamp of @p: its group leader's start time in clock ticks, namespace tag */
static __always_inline __u64 perflib_task_stamp(struct task_struct *p, __u32 ns_ino)
{
	__u64 boot = BPF_CORE_READ(p, group_leader, start_boottime);

	if (!clk_tck)
		return 0;
	return perflib_owner_stamp(boot / (1000000000ULL / clk_tck), ns_ino);
}

/*
 * Tail-call the reaper program of the next counter set @c names (a tail call does not
 * return; a missing program is skipped). @prog_ctx is the program's context.
 */
static __always_inline void perflib_exit_next(void *prog_ctx, struct perflib_exit_ctx *c)
{
	__u32 i, id;

	for (i = 0; i < PERFLIB_EXIT_SETS; i++) {
		if (c->pos >= c->v.nr || c->pos >= PERFLIB_EXIT_SETS)
			return;
		id = c->v.ids[c->pos];
		c->pos++;
		bpf_tail_call(prog_ctx, &progs, id);
	}
}

#endif /* PERFLIB_EXIT_H */
