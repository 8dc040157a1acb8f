// SPDX-License-Identifier: MIT
/*
 * sysd.bpf.c - the Windows system counter sets of perflib-sysd (tools/perflib-sysd/system.man),
 * counted in the kernel:
 *
 *  - Processor and Processor Information (one instance per CPU, per NUMA node total, _Total;
 *    created by the loader as kernel-owned instances): idle time is charged exactly at every
 *    context switch (the CPU's idle task, pid 0, running or not); non-idle time is split into
 *    user and privileged time by the mode a periodic perf-event sample (cpu-clock, --hz) saw
 *    last, as the kernel's own tick accounting does. The sample also refreshes the CPU's
 *    slots, so a CPU that does not switch (a busy loop, a deep idle) is never staler than
 *    one sample period. Interrupts from irq:irq_handler_entry.
 *  - System: context switches (sched_switch), system calls (sys_enter), processes and
 *    threads (fork, exit, and a task iterator for those that existed at load).
 *  - Process: one instance per process, created by the BPF programs themselves at fork and
 *    for the processes found by the task iterator at load, renamed (deleted and created
 *    again, counters kept) at exec, deleted at exit. CPU time is charged to the process at
 *    every context switch and sample; thread count, working set and private bytes are read
 *    from the task when it leaves a CPU or is sampled.
 *
 * Per-CPU accumulators live in cpu_state (a per-CPU array); CPU 0's sample writes the
 * totals (_Total, node totals, System) from every CPU's accumulators.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "perflib_bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define SD_MAX_CPUS 1024
#define SD_PAGE_SIZE 4096
#define SD_PF_EXITING 0x4
#define SD_NS_PER_100NS 100

/* the counter sets' data maps; Processor and Processor Information share one geometry */
PERFLIB_DATA_MAP_RAW(cpu_slots);
PERFLIB_DATA_MAP_RAW(pi_slots);
PERFLIB_DATA_MAP_RAW(sys_slots);
PERFLIB_DATA_MAP_RAW(ps_slots);
PERFLIB_INDEX_MAP(ps_idx);
PERFLIB_LIVE_MAP(ps_live);
PERFLIB_GEOMETRY(geo_cpu);
PERFLIB_GEOMETRY(geo_sys);
PERFLIB_GEOMETRY(geo_ps);
const volatile __u8 ps_guid[16] = {};

/* counter positions (the manifest's order, checked by the loader) */
enum { PC_PROC_TIME, PC_USER, PC_PRIV, PC_INTERRUPTS, PC_IDLE };
enum { SYS_CTXSW, SYS_SYSCALLS, SYS_PROCESSES, SYS_THREADS };
enum { PS_TIME, PS_USER, PS_PRIV, PS_ID, PS_PARENT, PS_THREADS, PS_WS, PS_PRIVATE };

/* instance slots, filled by the loader (a value >= capacity: no such instance) */
const volatile __u32 nr_cpus = 1;
const volatile __u32 cpu_slot[SD_MAX_CPUS] = {};
const volatile __u32 pi_slot[SD_MAX_CPUS] = {};
const volatile __u32 cpu_total_slot = 0;
const volatile __u32 pi_total_slot = 0;
const volatile __u32 pi_node_total_slot = 0; /* single NUMA node only, else >= capacity */
const volatile __u32 sys_slot = 0;

struct cpu_state {
	__u64 last_ts;	 /* last charge, ns */
	__u64 idle;	 /* ns the idle task ran */
	__u64 user;	 /* ns of non-idle time in user mode */
	__u64 priv;	 /* ns of non-idle time in kernel mode */
	__u32 ctxsw;	 /* context switches */
	__u32 syscalls;	 /* system calls */
	__u32 irqs;	 /* hardware interrupts */
	__u32 user_mode; /* mode of the last sample */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct cpu_state);
	__uint(max_entries, 1);
} cpu_state SEC(".maps");

/* process (tgid) -> its Process slot */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 4096); /* the loader sets the Process capacity */
} ps_map SEC(".maps");

/* System's gauges and the loader's clock handshake */
__s64 nr_processes = 0;
__s64 nr_threads = 0;
__u64 attach_ns = 0;	    /* CLOCK_MONOTONIC when the fork and exit programs were attached */
__u32 iter_done = 0;	    /* the task iterator has run */
__u32 ps_hint = 0;	    /* where the next Process slot is looked for */
__s64 ps_create_errors = 0; /* creations that failed (no slot, ...), for status */

static __always_inline struct cpu_state *state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_state, &zero);
}

static __always_inline void *ps_slot_of(__u32 tgid)
{
	__u32 *s = bpf_map_lookup_elem(&ps_map, &tgid);

	return s ? perflib_gslot(&ps_slots, &geo_ps, *s) : NULL;
}

static __always_inline __u64 rss(struct mm_struct *mm, int i)
{
	__s64 v = BPF_CORE_READ(mm, rss_stat[i].count);

	return v > 0 ? (__u64)v : 0;
}

/* thread count, working set and private bytes of @t's process, read from the task */
static __always_inline void ps_gauges(struct task_struct *t)
{
	void *slot = ps_slot_of(BPF_CORE_READ(t, tgid));
	struct mm_struct *mm;

	if (!slot)
		return;
	perflib_gcounter_set32(slot, &geo_ps, PS_THREADS, BPF_CORE_READ(t, signal, nr_threads));
	mm = BPF_CORE_READ(t, mm);
	if (!mm)
		return;
	perflib_gcounter_set(
		slot, &geo_ps, PS_WS,
		(rss(mm, MM_FILEPAGES) + rss(mm, MM_ANONPAGES) + rss(mm, MM_SHMEMPAGES)) *
			SD_PAGE_SIZE);
	perflib_gcounter_set(slot, &geo_ps, PS_PRIVATE,
			     (rss(mm, MM_ANONPAGES) + rss(mm, MM_SWAPENTS)) * SD_PAGE_SIZE);
}

/* charge the time since the CPU's last charge to @t (idle when its pid is 0) */
static __always_inline void charge(struct cpu_state *st, struct task_struct *t, __u64 now)
{
	__u64 delta = st->last_ts && now > st->last_ts ? now - st->last_ts : 0;
	void *slot;

	st->last_ts = now;
	if (!BPF_CORE_READ(t, pid)) {
		st->idle += delta;
		return;
	}
	if (st->user_mode)
		st->user += delta;
	else
		st->priv += delta;
	slot = ps_slot_of(BPF_CORE_READ(t, tgid));
	if (!slot || delta < SD_NS_PER_100NS)
		return;
	perflib_gcounter_add(slot, &geo_ps, PS_TIME, delta / SD_NS_PER_100NS);
	perflib_gcounter_add(slot, &geo_ps, st->user_mode ? PS_USER : PS_PRIV,
			     delta / SD_NS_PER_100NS);
}

/* the counters of one Processor (or Processor Information) instance */
static __always_inline void cpu_write(void *map, __u32 idx, __u64 idle, __u64 user, __u64 priv,
				      __u32 irqs)
{
	void *slot = perflib_gslot(map, &geo_cpu, idx);

	if (!slot)
		return;
	/* % Processor Time is PERF_100NSEC_TIMER_INV: its raw value is the idle time */
	perflib_gcounter_set(slot, &geo_cpu, PC_PROC_TIME, idle / SD_NS_PER_100NS);
	perflib_gcounter_set(slot, &geo_cpu, PC_USER, user / SD_NS_PER_100NS);
	perflib_gcounter_set(slot, &geo_cpu, PC_PRIV, priv / SD_NS_PER_100NS);
	perflib_gcounter_set32(slot, &geo_cpu, PC_INTERRUPTS, irqs);
	perflib_gcounter_set(slot, &geo_cpu, PC_IDLE, idle / SD_NS_PER_100NS);
}

/* _Total (the average of the CPUs, as Windows shows it), node total and System */
static __always_inline void write_totals(void)
{
	__u64 idle = 0, user = 0, priv = 0, n = nr_cpus ? nr_cpus : 1;
	__u32 irqs = 0, ctxsw = 0, syscalls = 0, zero = 0;
	struct bpf_iter_num it;
	void *slot;
	int *k;

	perflib__for(it, k, nr_cpus)
	{
		struct cpu_state *st = bpf_map_lookup_percpu_elem(&cpu_state, &zero, (__u32)*k);

		if (!st)
			continue;
		idle += st->idle;
		user += st->user;
		priv += st->priv;
		irqs += st->irqs;
		ctxsw += st->ctxsw;
		syscalls += st->syscalls;
	}
	bpf_iter_num_destroy(&it);
	cpu_write(&cpu_slots, cpu_total_slot, idle / n, user / n, priv / n, irqs);
	cpu_write(&pi_slots, pi_total_slot, idle / n, user / n, priv / n, irqs);
	cpu_write(&pi_slots, pi_node_total_slot, idle / n, user / n, priv / n, irqs);
	slot = perflib_gslot(&sys_slots, &geo_sys, sys_slot);
	perflib_gcounter_set32(slot, &geo_sys, SYS_CTXSW, ctxsw);
	perflib_gcounter_set32(slot, &geo_sys, SYS_SYSCALLS, syscalls);
	perflib_gcounter_set32(slot, &geo_sys, SYS_PROCESSES, (__u32)nr_processes);
	perflib_gcounter_set32(slot, &geo_sys, SYS_THREADS, (__u32)nr_threads);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sd_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct cpu_state *st = state();

	if (!st)
		return 0;
	charge(st, prev, bpf_ktime_get_ns());
	st->ctxsw++;
	if (prev->pid)
		ps_gauges(prev);
	return 0;
}

SEC("perf_event")
int sd_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_state *st = state();

	if (!st || cpu >= SD_MAX_CPUS)
		return 0;
	/* the mode the CPU was interrupted in (x86: CPL in the low bits of CS) */
	st->user_mode = (*(volatile unsigned long *)&ctx->regs.cs & 3) == 3; /* 8-byte ctx load */
	charge(st, t, bpf_ktime_get_ns());
	if (BPF_CORE_READ(t, pid))
		ps_gauges(t);
	cpu_write(&cpu_slots, cpu_slot[cpu], st->idle, st->user, st->priv, st->irqs);
	cpu_write(&pi_slots, pi_slot[cpu], st->idle, st->user, st->priv, st->irqs);
	if (cpu == 0)
		write_totals();
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sd_sys_enter)
{
	struct cpu_state *st = state();

	if (st)
		st->syscalls++;
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(sd_irq)
{
	struct cpu_state *st = state();

	if (st)
		st->irqs++;
	return 0;
}

/* create the Process instance of @t (a thread-group leader); its slot, or < 0 */
static __always_inline __s64 ps_create(struct task_struct *t, __u32 ppid)
{
	char name[PERFLIB_BPF_KEY_MAX] = {};
	__u32 tgid = BPF_CORE_READ(t, tgid);
	__s64 s;
	void *slot;

	bpf_probe_read_kernel_str(name, 16, BPF_CORE_READ(t, comm));
	s = perflib_instance_create_ascii(&ps_slots, &ps_idx, &ps_live, &geo_ps, ps_guid, name, tgid,
					  ps_hint);
	if (s < 0) {
		if (s != -17)
			__sync_fetch_and_add(&ps_create_errors, 1);
		return s;
	}
	ps_hint = (__u32)s + 1;
	slot = perflib_gslot(&ps_slots, &geo_ps, (__u32)s);
	perflib_gcounter_set32(slot, &geo_ps, PS_ID, tgid);
	perflib_gcounter_set32(slot, &geo_ps, PS_PARENT, ppid);
	perflib_gcounter_set32(slot, &geo_ps, PS_THREADS, 1);
	bpf_map_update_elem(&ps_map, &tgid, &(__u32){(__u32)s}, BPF_ANY);
	__sync_fetch_and_add(&nr_processes, 1);
	return s;
}

/* delete the Process instance of @tgid; 0 or -ENOENT */
static __always_inline int ps_delete(__u32 tgid)
{
	__u32 *s = bpf_map_lookup_elem(&ps_map, &tgid);
	__u32 idx;

	if (!s)
		return -2;
	idx = *s;
	bpf_map_delete_elem(&ps_map, &tgid);
	if (perflib_instance_delete(&ps_slots, &ps_idx, &ps_live, &geo_ps, idx))
		return -2;
	__sync_fetch_and_sub(&nr_processes, 1);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sd_fork, struct task_struct *parent, struct task_struct *child)
{
	__sync_fetch_and_add(&nr_threads, 1);
	if (child->pid == child->tgid)
		ps_create(child, parent->tgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sd_exec, struct task_struct *p)
{
	__u64 time, user, priv;
	__u32 tgid = p->tgid, ppid;
	void *slot = ps_slot_of(tgid);
	__s64 s;

	if (!slot)
		return 0;
	/* the name changes: the instance is made again under it, its counters kept */
	time = perflib_gcounter_read(slot, &geo_ps, PS_TIME);
	user = perflib_gcounter_read(slot, &geo_ps, PS_USER);
	priv = perflib_gcounter_read(slot, &geo_ps, PS_PRIV);
	ppid = (__u32)perflib_gcounter_read(slot, &geo_ps, PS_PARENT);
	if (ps_delete(tgid))
		return 0;
	s = ps_create(p, ppid);
	slot = s >= 0 ? perflib_gslot(&ps_slots, &geo_ps, (__u32)s) : NULL;
	perflib_gcounter_set(slot, &geo_ps, PS_TIME, time);
	perflib_gcounter_set(slot, &geo_ps, PS_USER, user);
	perflib_gcounter_set(slot, &geo_ps, PS_PRIV, priv);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sd_exit, struct task_struct *p, bool group_dead)
{
	/* threads that existed before the iterator ran are counted by it */
	if (iter_done || p->start_time >= attach_ns)
		__sync_fetch_and_sub(&nr_threads, 1);
	if (group_dead)
		ps_delete(p->tgid);
	return 0;
}

/* the processes and threads that existed when the service started */
SEC("iter/task")
int sd_iter_task(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	if (!t || (t->flags & SD_PF_EXITING) || t->start_time >= attach_ns)
		return 0;
	__sync_fetch_and_add(&nr_threads, 1);
	if (t->pid == t->tgid)
		ps_create(t, BPF_CORE_READ(t, real_parent, tgid));
	return 0;
}
