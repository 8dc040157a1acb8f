// SPDX-License-Identifier: MIT
/*
 * exit.bpf.c - the machine's exit reaper: one program on sched_process_exit for every
 * counter set under a perflib root (layout.h, "The machine's exit reaper").
 *
 * Every process exit on the machine runs it once: the last thread of a process computes
 * the process's identity (its tgid in its own pid namespace and its owner stamp, exactly as
 * user space records them) and looks it up in `provs`, one hash lookup. A process that
 * provides nothing ends there, whatever the number of counter sets. A provider's entry names
 * the counter sets it provides into (their exit ids): the entry is copied to the per-CPU
 * `ctx` and removed, and the program tail-calls the first set's reaper program (reaper.bpf.c),
 * which frees the process's slots in its set and tail-calls the next.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "exit.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* exits seen and provider exits dispatched, for tests and `bpftool map dump` */
__u64 nr_exits = 0;
__u64 nr_dispatched = 0;

SEC("tp_btf/sched_process_exit")
int BPF_PROG(perflib_exit, struct task_struct *p)
{
	struct perflib_exit_key key = {};
	struct perflib_exit_val *v;
	struct perflib_exit_ctx *c;
	__u32 zero = 0, ns_ino;

	/* not the last thread: the process lives on */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	__sync_fetch_and_add(&nr_exits, 1);
	key.pid = perflib_task_ns_tgid(p, &ns_ino);
	if (!key.pid)
		return 0;
	key.stamp = perflib_task_stamp(p, ns_ino);
	v = bpf_map_lookup_elem(&provs, &key);
	if (!v)
		return 0;
	c = bpf_map_lookup_elem(&exit_ctx, &zero);
	if (!c)
		return 0;
	c->tgid = key.pid;
	c->stamp = key.stamp;
	c->pos = 0;
	__builtin_memcpy(&c->v, v, sizeof(c->v));
	/*
	 * Two threads ending at once may both see live == 0: only the one whose delete takes the
	 * entry dispatches, so a slot is reaped once.
	 */
	if (bpf_map_delete_elem(&provs, &key))
		return 0;
	__sync_fetch_and_add(&nr_dispatched, 1);
	perflib_exit_next(ctx, c);
	return 0;
}
