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
