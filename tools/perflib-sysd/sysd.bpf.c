// SPDX-License-Identifier: MIT
/*
 * sysd.bpf.c - the Windows system counter sets of perflib-sysd (tools/perflib-sysd/system.man),
 * counted in the kernel:
 *
 *  - Processor and Processor Information (one instance per CPU, per NUMA node total, _Total;
 *    created by the loader as kernel-owned instances): idle time is charged exactly at every
 *    context switch (the CPU's idle task, pid 0, running or not); non-idle time is split into
 *    user and privileged time by the mode a periodic perf-event sample (cpu-clock, --hz) saw
 *    last, as the kernel's own tick accounting does. A BPF timer (sd_refresh, every 1/--hz
 *    s) publishes every CPU's accumulators, adding the idle stretch in progress of a CPU
 *    that is idle (an idle CPU may take no sample for seconds), so no value is staler than
 *    one period. Interrupts from irq:irq_handler_entry and the CPU's own vectors (timer,
 *    inter-processor: x86's irq_vectors tracepoints).
 *  - System: context switches (sched_switch), system calls (sys_enter), processes and
 *    threads (fork, exit, and a task iterator for those that existed at load; each thread
 *    counted once, marked in its task storage), Processor
 *    Queue Length (each CPU's run queue, read by the timer), System Up Time (an elapsed
 *    time on a CLOCK_BOOTTIME object clock the timer writes).
 *  - Process: one instance per process, created by the BPF programs themselves at fork and
 *    for the processes found by the task iterator at load, renamed (deleted and created
 *    again, counters kept) at exec, deleted at exit. CPU time is charged to the process at
 *    every context switch and sample; thread count, working set and private bytes are read
 *    from the task when it leaves a CPU or is sampled (and by the iterator at load), the
 *    memory with the CPUs' parts of the RSS counters folded in. IO Read/Write Bytes are the growth of
 *    each thread's ioac.rchar / ioac.wchar (/proc/<pid>/io) since it was last seen (task
 *    storage), charged to its process at the same points and when the thread exits. Handle
 *    Count is the number of bits set in the process's open_fds bitmap (its open file
 *    descriptors), counted at those points when the fd table looks changed (next_fd,
 *    max_fds) or SD_FD_PERIOD_NS passed since the thread last counted it. IO Read/Write
 *    Operations are syscr / syscw, as the bytes. Elapsed Time: the start (start_boottime)
 *    against a clock counter rewritten at those points and once a second by the timer.
 *    Idle (the CPUs' idle time) and _Total (all CPU time, the threads) are written by the
 *    timer; _Total's I/O and gauges change with every process's (ps_add, ps_gauge).
 *
 *  - Network Interface: one instance per device of the initial network namespace (name =
 *    device name, InstanceId = ifindex), created and deleted here (sd_net_ctl, a syscall
 *    program) when the service sees the device come and go on rtnetlink.
 *    Bytes and packets from net:net_dev_xmit and net:netif_receive_skb.
 *  - PhysicalDisk and LogicalDisk: one instance per disk and per mounted block device, made
 *    and deleted here (sd_disk_ctl, a syscall program) when the service sees the device or
 *    mount come and go (uevents, mountinfo), _Total made by the loader; reads, writes,
 *    bytes and the time-weighted queue
 *    length from block:block_rq_complete (whole disk: the request queue's disk; logical:
 *    the partition the request was for). Free space is polled by the loader (statfs) and
 *    stored through sd_ld_set.
 *  - Cgroup: one instance per cgroup of the unified (v2) hierarchy (name = path, InstanceId
 *    = cgroup id), created and deleted here at cgroup:cgroup_mkdir / cgroup_rmdir (the
 *    loader creates those that existed at start). CPU time and context switches are charged
 *    with the process's, page faults at exceptions:page_fault_user, to the task's cgroup
 *    and every ancestor (hierarchical, as cpu.stat); memory is the cgroup's memcg usage.
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
#define SD_FD_PERIOD_NS 100000000ULL /* Handle Count: recounted at least this often */
#define SD_FD_CHUNK 8		     /* open_fds words read at once */
#define SD_FD_CHUNKS 512	     /* at most 512 * 8 * 64 = 262144 descriptors counted */
#define SD_ONCE(x) (*(volatile typeof(x) *)&(x)) /* one plain load or store, not merged */
#define SD_CLOCK_HZ 10000000ULL /* the elapsed-time counters' clock: 100 ns units */
/* Process time stamps: rewritten when a thread of the process leaves a CPU or is sampled, and
 * for every process at least this often (a walk costs about 1.3 us per process) */
#define SD_STAMP_PERIOD_NS 1000000000ULL

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
PERFLIB_DATA_MAP_RAW(net_slots);
PERFLIB_INDEX_MAP(net_idx);
PERFLIB_LIVE_MAP(net_live);
PERFLIB_DATA_MAP_RAW(pd_slots);
PERFLIB_INDEX_MAP(pd_idx);
PERFLIB_LIVE_MAP(pd_live);
PERFLIB_DATA_MAP_RAW(ld_slots);
PERFLIB_INDEX_MAP(ld_idx);
PERFLIB_LIVE_MAP(ld_live);
PERFLIB_DATA_MAP_RAW(cg_slots);
PERFLIB_INDEX_MAP(cg_idx);
PERFLIB_LIVE_MAP(cg_live);
PERFLIB_GEOMETRY(geo_net);
PERFLIB_GEOMETRY(geo_pd);
PERFLIB_GEOMETRY(geo_ld);
PERFLIB_GEOMETRY(geo_cg);
const volatile __u8 net_guid[16] = {};
const volatile __u8 cg_guid[16] = {};
const volatile __u8 pd_guid[16] = {};
const volatile __u8 ld_guid[16] = {};

/* counter positions (the manifest's order, checked by the loader) */
enum { PC_PROC_TIME, PC_USER, PC_PRIV, PC_INTERRUPTS, PC_IDLE };
enum {
	SYS_CTXSW,
	SYS_SYSCALLS,
	SYS_PROCESSES,
	SYS_THREADS,
	SYS_QUEUE,  /* Processor Queue Length */
	SYS_UPTIME, /* System Up Time: its start (1) on the object clock */
	SYS_STAMP,  /* the object clock: CLOCK_BOOTTIME, 100 ns */
	SYS_FREQ    /* its frequency, SD_CLOCK_HZ */
};
enum {
	PS_TIME,
	PS_USER,
	PS_PRIV,
	PS_ID,
	PS_PARENT,
	PS_THREADS,
	PS_WS,
	PS_PRIVATE,
	PS_HANDLES,
	PS_IO_READ,
	PS_IO_WRITE,
	PS_IO_READ_OPS,
	PS_IO_WRITE_OPS,
	PS_ELAPSED, /* Elapsed Time: the process's start on the object clock */
	PS_STAMP,   /* the object clock: CLOCK_BOOTTIME, 100 ns */
	PS_FREQ	    /* its frequency, SD_CLOCK_HZ */
};
enum { NET_BYTES, NET_PACKETS, NET_PACKETS_RX, NET_PACKETS_TX, NET_BYTES_RX, NET_BYTES_TX };
/* PhysicalDisk: the first DK_NR_PHYS; LogicalDisk: all */
enum {
	DK_READS,
	DK_WRITES,
	DK_TRANSFERS,
	DK_READ_BYTES,
	DK_WRITE_BYTES,
	DK_BYTES,
	DK_QUEUE,
	DK_NR_PHYS,
	DK_FREE_PCT = DK_NR_PHYS,
	DK_FREE_BASE,
	DK_FREE_MB
};
enum { CG_TIME, CG_CTXSW, CG_FAULTS, CG_MEMORY };

#define SD_INIT_NET_INO 0xEFFFFFF9U /* PROC_NET_INIT_INO: the initial network namespace */
#define SD_CG_DEPTH 16		    /* cgroup levels charged (deeper ones are not) */
#define SD_REQ_OP_MASK 0xff	    /* REQ_OP_BITS = 8 */

/* instance slots, filled by the loader (a value >= capacity: no such instance) */
const volatile __u32 nr_cpus = 1;
const volatile __u32 cpu_slot[SD_MAX_CPUS] = {};
const volatile __u32 pi_slot[SD_MAX_CPUS] = {};
const volatile __u32 cpu_total_slot = 0;
const volatile __u32 pi_total_slot = 0;
const volatile __u32 pi_node_total_slot = 0; /* single NUMA node only, else >= capacity */
const volatile __u32 sys_slot = 0;
const volatile __u32 ps_idle_slot = 0xFFFFFFFF;	 /* Process(Idle): the CPUs' idle time */
const volatile __u32 ps_total_slot = 0xFFFFFFFF; /* Process(_Total): the sum, Idle included */
const volatile __u32 pd_total_slot = 0xFFFFFFFF;
const volatile __u32 ld_total_slot = 0xFFFFFFFF;
const volatile __u64 refresh_ns = 10000000; /* the publishing timer's period (1 / --hz) */

/*
 * One CPU's accumulators, written only by that CPU (sched_switch, its samples); the
 * publishing timer (sd_refresh) reads every CPU's. idle_start is when the idle stretch in
 * progress began (0: the CPU runs a task): stored after idle, read after it, so a reader
 * that races with the owner can only undercount (see sd_refresh).
 */
struct cpu_state {
	__u64 last_ts;	  /* last charge, ns */
	__u64 idle;	  /* ns the idle task ran, up to last_ts */
	__u64 idle_start; /* the idle task runs since (ns), or 0 */
	__u64 user;	  /* ns of non-idle time in user mode */
	__u64 priv;	  /* ns of non-idle time in kernel mode */
	__u64 rq;	  /* the CPU's struct rq (its run queue), 0 until seen */
	__u32 ctxsw;	  /* context switches */
	__u32 syscalls;	  /* system calls */
	__u32 irqs;	  /* hardware interrupts */
	__u32 user_mode;  /* mode of the last sample */
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

/* per thread: the ioac bytes already charged to its process, the fd-table state last counted */
struct ps_task {
	__u64 rchar;
	__u64 wchar;
	__u64 syscr;
	__u64 syscw;
	__u64 fd_ts;
	__u32 fd_next;
	__u32 fd_max;
	__u64 counted; /* in System\Threads: 0 not yet, 1 counted, 2 gone (see thread_in) */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ps_task);
} ps_task SEC(".maps");

/* ifindex (initial network namespace) -> its Network Interface slot */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1024);
} net_map SEC(".maps");

/* device number (kernel encoding, major << 20 | minor) -> PhysicalDisk / LogicalDisk slot */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1024);
} pd_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1024);
} ld_map SEC(".maps");

/* cgroup id -> its Cgroup slot */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, __u32);
	__uint(max_entries, 4096); /* the loader sets the Cgroup capacity */
} cg_map SEC(".maps");

/* System's gauges and the loader's clock handshake */
__s64 nr_processes = 0;
__s64 nr_threads = 0;
__u32 iter_done = 0;	    /* the task iterator has run */
__u32 init_seen = 0;	    /* the iterator met pid 1 (1) or reached it through a child (2) */
__u64 init_ns = 0;	    /* when pid 1's threads were counted at once (init_seen 2) */
__s64 init_early = 0;	    /* pid 1's threads counted by the fork program before that */
__u32 ps_hint = 0;	    /* where the next Process slot is looked for */
__s64 ps_create_errors = 0; /* creations that failed (no slot, ...), for status */
__s64 net_create_errors = 0;
__s64 cg_create_errors = 0;

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

/* add @v to counter @pos of a process's @slot and of Process(_Total) (what processes were
 * charged since the start: it never goes back when a process exits) */
static __always_inline void ps_add(void *slot, __u32 pos, __u64 v)
{
	perflib_gcounter_add(slot, &geo_ps, pos, v);
	perflib_gcounter_add(perflib_gslot(&ps_slots, &geo_ps, ps_total_slot), &geo_ps, pos, v);
}

/*
 * make gauge @pos (Working Set, Private Bytes, Handle Count; @dword: a DWORD) of a process's
 * @slot @v, and Process(_Total)'s with it. _Total's gauges are the sum of every instance's at
 * every moment, as Windows sums the instances of one collection: each write exchanges the new
 * value in and adds the difference to _Total's (two CPUs writing one process's gauge at once
 * add differences that add up to the last value written), and ps_delete takes a process's
 * back. The writers are the process's own threads in their own context (switch-out, sample,
 * exec) and the start's iterator; a thread past PF_EXITING writes none (ps_gauges), so no
 * write lands between ps_delete's take-back and the delete's zeroing of the slot. Before, a
 * walk summed them once a second: _Total lagged its instances by up to a second (18 % to
 * 270 % apart in one typeperf sample while builds ran).
 */
static __always_inline void ps_gauge(void *slot, __u32 pos, __u64 v, int dword)
{
	__u64 *c = perflib_gcounter(slot, &geo_ps, pos), *tc, old;

	/* a DWORD's cell too (its high 4 bytes are 0, BPF.md): a 32-bit exchange needs alu32 */
	if (dword)
		v = (__u32)v;
	/* unchanged, most switch-outs: no locked instruction (a writer racing this one wins) */
	if (!c || *(volatile __u64 *)c == v)
		return;
	old = __sync_lock_test_and_set(c, v);
	tc = perflib_gcounter(perflib_gslot(&ps_slots, &geo_ps, ps_total_slot), &geo_ps, pos);
	if (!tc || old == v)
		return;
	if (dword)
		__sync_fetch_and_add((__u32 *)tc, (__u32)v - (__u32)old);
	else
		__sync_fetch_and_add(tc, v - old);
}

/*
 * The per-CPU offsets (__per_cpu_offset[cpu]), found once by sd_pcpu_init: this kernel has no
 * CONFIG_KALLSYMS_ALL (no per-CPU ksym) and its BTF carries no __percpu tags, so
 * bpf_per_cpu_ptr cannot take a kernel per-CPU pointer. A per-CPU array map of ours gives
 * them: its element's per-CPU pointer (bpf_array.pptrs[0]) and that element's address on
 * each CPU (bpf_map_lookup_percpu_elem) differ by the CPU's offset.
 */
__u64 pcpu_off[SD_MAX_CPUS] = {};
__u32 pcpu_ok = 0;	/* pcpu_off is filled */
__u64 pcpu_scratch = 0; /* a pointer turned into a number (stored, read back) */

/* the value of a pointer, as a number (the service runs with CAP_PERFMON: pointers may be
 * stored) */
static __always_inline __u64 ptr_value(void *p)
{
	SD_ONCE(pcpu_scratch) = (__u64)p;
	barrier();
	return SD_ONCE(pcpu_scratch);
}

/*
 * The pages of @mm by kind (MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS, MM_SHMEMPAGES) in @v,
 * as /proc/<pid>/status reads them (get_mm_counter_sum: percpu_counter_sum_positive): each
 * counter's central count plus the parts the CPUs hold back (up to the counter's batch per
 * CPU). The four counters' per-CPU parts are one per-CPU allocation (percpu_counter_init_many:
 * four s32 in a row), read with one copy per CPU.
 */
static __always_inline void mm_pages(struct mm_struct *mm, __u64 v[NR_MM_COUNTERS])
{
	__s64 sum[NR_MM_COUNTERS];
	__u64 c0 = (__u64)BPF_CORE_READ(mm, rss_stat[0].counters);
	struct bpf_iter_num it;
	int i, *k, folded = pcpu_ok && c0;

	for (i = 0; i < NR_MM_COUNTERS; i++) {
		sum[i] = BPF_CORE_READ(mm, rss_stat[i].count);
		if ((__u64)BPF_CORE_READ(mm, rss_stat[i].counters) != c0 + i * sizeof(__s32))
			folded = 0; /* not one allocation: the central counts only */
	}
	if (folded) {
		perflib__for(it, k, nr_cpus)
		{
			__u32 cpu = (__u32)*k;
			__s32 part[NR_MM_COUNTERS] = {};

			if (cpu >= SD_MAX_CPUS)
				break;
			if (bpf_probe_read_kernel(part, sizeof(part), (void *)(c0 + pcpu_off[cpu])))
				continue;
			for (i = 0; i < NR_MM_COUNTERS; i++)
				sum[i] += part[i];
		}
		bpf_iter_num_destroy(&it);
	}
	for (i = 0; i < NR_MM_COUNTERS; i++)
		v[i] = sum[i] > 0 ? (__u64)sum[i] : 0;
}

static __always_inline __u32 popcount64(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (__u32)((x * 0x0101010101010101ULL) >> 56);
}

/* the open file descriptors of @files: the bits set in its fd table's open_fds */
static __always_inline __u32 fd_count(struct fdtable *fdt)
{
	__u32 words = (BPF_CORE_READ(fdt, max_fds) + 63) / 64, n = 0, i;
	unsigned long *bits = BPF_CORE_READ(fdt, open_fds);
	struct bpf_iter_num it;
	int *k;

	perflib__for(it, k, SD_FD_CHUNKS)
	{
		__u64 w[SD_FD_CHUNK] = {};
		__u32 base = (__u32)*k * SD_FD_CHUNK;

		if (base >= words)
			break;
		if (bpf_probe_read_kernel(w, sizeof(w), bits + base))
			break;
		for (i = 0; i < SD_FD_CHUNK; i++) {
			/* the bitmap may end inside the chunk: what follows is not read */
			if (base + i < words)
				n += popcount64(w[i]);
		}
	}
	bpf_iter_num_destroy(&it);
	return n;
}

/* charge @t's read and written bytes and read and write calls since it was last seen,
 * recount the handles when due */
static __always_inline void ps_io(struct task_struct *t, void *slot, int final)
{
	/* an exiting thread never seen before had nothing charged: no storage is made for it,
	 * sd_exit charges all its bytes (its switches after that must not do it again) */
	int exiting = final || (BPF_CORE_READ(t, flags) & SD_PF_EXITING);
	struct ps_task *pt = bpf_task_storage_get(&ps_task, t, NULL,
						  exiting ? 0 : BPF_LOCAL_STORAGE_GET_F_CREATE);
	__u64 r = BPF_CORE_READ(t, ioac.rchar), w = BPF_CORE_READ(t, ioac.wchar), now;
	__u64 rops = BPF_CORE_READ(t, ioac.syscr), wops = BPF_CORE_READ(t, ioac.syscw);
	struct files_struct *files;
	struct fdtable *fdt;
	__u32 next, max;

	if (!pt) {
		if (final) {
			ps_add(slot, PS_IO_READ, r);
			ps_add(slot, PS_IO_WRITE, w);
			ps_add(slot, PS_IO_READ_OPS, rops);
			ps_add(slot, PS_IO_WRITE_OPS, wops);
		}
		return;
	}
	if (rops > pt->syscr) {
		ps_add(slot, PS_IO_READ_OPS, rops - pt->syscr);
		pt->syscr = rops;
	}
	if (wops > pt->syscw) {
		ps_add(slot, PS_IO_WRITE_OPS, wops - pt->syscw);
		pt->syscw = wops;
	}
	if (r > pt->rchar) {
		ps_add(slot, PS_IO_READ, r - pt->rchar);
		pt->rchar = r;
	}
	if (w > pt->wchar) {
		ps_add(slot, PS_IO_WRITE, w - pt->wchar);
		pt->wchar = w;
	}
	files = BPF_CORE_READ(t, files);
	/* an exiting thread writes no handle count (ps_gauge says why) */
	if (exiting || !files)
		return;
	fdt = BPF_CORE_READ(files, fdt);
	next = BPF_CORE_READ(files, next_fd);
	max = BPF_CORE_READ(fdt, max_fds);
	now = bpf_ktime_get_ns();
	if (next == pt->fd_next && max == pt->fd_max && now - pt->fd_ts < SD_FD_PERIOD_NS)
		return;
	pt->fd_next = next;
	pt->fd_max = max;
	pt->fd_ts = now;
	ps_gauge(slot, PS_HANDLES, fd_count(fdt), 1);
}

/* thread count, working set, private bytes, I/O and handles of @t's process, read from the
 * task, and its Elapsed Time clock */
static __always_inline void ps_gauges(struct task_struct *t)
{
	void *slot = ps_slot_of(BPF_CORE_READ(t, tgid));
	int exiting = BPF_CORE_READ(t, flags) & SD_PF_EXITING;
	__u64 pages[NR_MM_COUNTERS];
	struct mm_struct *mm;

	if (!slot)
		return;
	ps_io(t, slot, 0);
	perflib_gcounter_set(slot, &geo_ps, PS_STAMP, bpf_ktime_get_boot_ns() / SD_NS_PER_100NS);
	perflib_gcounter_set32(slot, &geo_ps, PS_THREADS, BPF_CORE_READ(t, signal, nr_threads));
	mm = BPF_CORE_READ(t, mm);
	if (!mm || exiting)
		return;
	mm_pages(mm, pages);
	/* VmRSS and RssAnon + VmSwap of /proc/<pid>/status */
	ps_gauge(slot, PS_WS,
		 (pages[MM_FILEPAGES] + pages[MM_ANONPAGES] + pages[MM_SHMEMPAGES]) * SD_PAGE_SIZE,
		 0);
	ps_gauge(slot, PS_PRIVATE, (pages[MM_ANONPAGES] + pages[MM_SWAPENTS]) * SD_PAGE_SIZE, 0);
}

/* add @v to counter @pos of the Cgroup instances of @t's cgroup (unified hierarchy) and its
 * ancestors; @large: a 64-bit counter */
static __always_inline void cg_charge(struct task_struct *t, __u32 pos, __u64 v, int large)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp), *a;
	int level = BPF_CORE_READ(cg, level), i;
	__u32 *s;
	__u64 id;
	void *slot;

	for (i = 0; i < SD_CG_DEPTH; i++) {
		if (i > level)
			break;
		a = NULL;
		bpf_core_read(&a, sizeof(a), &cg->ancestors[i]);
		id = BPF_CORE_READ(a, kn, id);
		s = bpf_map_lookup_elem(&cg_map, &id);
		if (!s)
			continue;
		slot = perflib_gslot(&cg_slots, &geo_cg, *s);
		if (large)
			perflib_gcounter_add(slot, &geo_cg, pos, v);
		else
			perflib_gcounter_add32(slot, &geo_cg, pos, (__u32)v);
	}
}

/* charge the time since the CPU's last charge to @t (idle when its pid is 0) */
static __always_inline void charge(struct cpu_state *st, struct task_struct *t, __u64 now)
{
	__u64 delta = st->last_ts && now > st->last_ts ? now - st->last_ts : 0;
	void *slot;

	st->last_ts = now;
	if (!BPF_CORE_READ(t, pid)) {
		st->idle += delta;
		barrier();
		SD_ONCE(st->idle_start) = now; /* after idle (sd_refresh reads it after idle) */
		return;
	}
	SD_ONCE(st->idle_start) = 0;
	if (st->user_mode)
		st->user += delta;
	else
		st->priv += delta;
	if (delta >= SD_NS_PER_100NS)
		cg_charge(t, CG_TIME, delta / SD_NS_PER_100NS, 1);
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
	void *slot = (perflib_gslot)(map, &geo_cpu, idx); /* either set: unchecked */

	if (!slot)
		return;
	/* % Processor Time is PERF_100NSEC_TIMER_INV: its raw value is the idle time */
	perflib_gcounter_set(slot, &geo_cpu, PC_PROC_TIME, idle / SD_NS_PER_100NS);
	perflib_gcounter_set(slot, &geo_cpu, PC_USER, user / SD_NS_PER_100NS);
	perflib_gcounter_set(slot, &geo_cpu, PC_PRIV, priv / SD_NS_PER_100NS);
	perflib_gcounter_set32(slot, &geo_cpu, PC_INTERRUPTS, irqs);
	perflib_gcounter_set(slot, &geo_cpu, PC_IDLE, idle / SD_NS_PER_100NS);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sd_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct cpu_state *st = state();
	__u64 now = bpf_ktime_get_ns();

	if (!st)
		return 0;
	charge(st, prev, now);
	if (!next->pid)
		SD_ONCE(st->idle_start) = now; /* an idle stretch begins */
	else if (!st->rq)
		/* this CPU's run queue (Processor Queue Length), through a task queued on it */
		st->rq = (__u64)BPF_CORE_READ(next, se.cfs_rq, rq);
	st->ctxsw++;
	if (prev->pid) {
		ps_gauges(prev);
		cg_charge(prev, CG_CTXSW, 1, 0);
	}
	return 0;
}

/* Memory of the cgroups of @t: their memcg usage, where the memory controller is on the
 * unified hierarchy (else it stays 0) */
static __always_inline void cg_memory(struct task_struct *t)
{
	int mem_id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp), *a;
	int level = BPF_CORE_READ(cg, level), i;
	struct cgroup_subsys_state *css;
	struct mem_cgroup *memcg;
	__u32 *s;
	__u64 id;
	long pages;

	if (mem_id < 0 || mem_id >= CGROUP_SUBSYS_COUNT)
		return;
	for (i = 0; i < SD_CG_DEPTH; i++) {
		if (i > level)
			break;
		a = NULL;
		bpf_core_read(&a, sizeof(a), &cg->ancestors[i]);
		id = BPF_CORE_READ(a, kn, id);
		s = bpf_map_lookup_elem(&cg_map, &id);
		if (!s)
			continue;
		css = NULL;
		bpf_core_read(&css, sizeof(css), &a->subsys[mem_id]);
		if (!css)
			continue;
		memcg = (struct mem_cgroup *)css; /* css is its first member */
		pages = BPF_CORE_READ(memcg, memory.usage.counter);
		perflib_gcounter_set(perflib_gslot(&cg_slots, &geo_cg, *s), &geo_cg, CG_MEMORY,
				     pages > 0 ? (__u64)pages * SD_PAGE_SIZE : 0);
	}
}

SEC("perf_event")
int sd_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct cpu_state *st = state();

	if (!st)
		return 0;
	/* the mode the CPU was interrupted in (x86: CPL in the low bits of CS) */
	st->user_mode = (*(volatile unsigned long *)&ctx->regs.cs & 3) == 3; /* 8-byte ctx load */
	charge(st, t, bpf_ktime_get_ns());
	if (BPF_CORE_READ(t, pid)) {
		ps_gauges(t);
		cg_memory(t);
	}
	return 0;
}

/* ---- publishing: the CPU slots, the totals, System, the time stamps ---------------------- */

/*
 * What the CPUs' accumulators say is published every refresh_ns by one BPF timer (sd_refresh,
 * below), not by each CPU: an idle CPU may take no sample for seconds (NOHZ idle: no tick,
 * and perf throttles a sampling event that fires without ticks in between; seen: 1 s
 * without a sample), so a CPU cannot be relied on to publish its own idle time. The timer
 * adds the idle stretch still in progress (now - idle_start) to each idle CPU's idle time.
 * Racing with the CPU's owner (idle read before idle_start, stored in the other order) can
 * only undercount; the idle time published is never less than the last one published
 * (pub_idle), so a rate is never negative, and the next refresh is exact again.
 */
__u64 pub_idle[SD_MAX_CPUS] = {};
__u64 stamp_ts = 0;  /* when the Process time stamps were last written */
__u32 queue_len = 0; /* the last Processor Queue Length published (for status, tests) */

struct sd_timer {
	struct bpf_timer t;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct sd_timer);
	__uint(max_entries, 1);
} refresh_timer SEC(".maps");

/* the tasks waiting for a CPU on run queue @rq: queued, not running (the idle task does not
 * count in nr_running) */
static __always_inline __u32 rq_waiting(__u64 rq)
{
	struct rq *r = (struct rq *)rq;
	__u32 n;

	if (!r)
		return 0;
	n = BPF_CORE_READ(r, nr_running);
	if (n && BPF_CORE_READ(r, curr) != BPF_CORE_READ(r, idle))
		n--;
	return n;
}

/* what the publishing costs, for make bench (the kernel's run-time statistics do not see a
 * timer callback) */
struct sd_stats {
	__u64 refresh_runs;
	__u64 refresh_ns;
	__u64 stamp_runs; /* the part of it that rewrote the Process time stamps */
	__u64 stamp_ns;
	__u64 stamp_procs;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct sd_stats);
	__uint(max_entries, 1);
} sd_stats SEC(".maps");

/* the once-a-second walk over the processes: their clocks written */
struct stamp_ctx {
	__u64 stamp; /* the object clock now */
};

static long stamp_one(void *map, __u32 *tgid, __u32 *idx, struct stamp_ctx *c)
{
	perflib_gcounter_set(perflib_gslot(&ps_slots, &geo_ps, *idx), &geo_ps, PS_STAMP, c->stamp);
	return 0;
}

/*
 * Process(Idle) and Process(_Total), as Windows has them: Idle is the CPUs' idle time (its
 * threads are the idle tasks, one per CPU; privileged time), _Total the sum of every process
 * and Idle: the time of all CPUs (idle, user and privileged), the threads of System\Threads
 * and the idle tasks. Both: ID Process 0, running since boot. The I/O of _Total is charged
 * with each process's (ps_add), its gauges with each process's (ps_gauge).
 */
static __always_inline void ps_special(void *slot, __u64 time, __u64 user, __u64 priv,
				       __u32 threads, __u64 stamp)
{
	perflib_gcounter_set(slot, &geo_ps, PS_TIME, time / SD_NS_PER_100NS);
	perflib_gcounter_set(slot, &geo_ps, PS_USER, user / SD_NS_PER_100NS);
	perflib_gcounter_set(slot, &geo_ps, PS_PRIV, priv / SD_NS_PER_100NS);
	perflib_gcounter_set32(slot, &geo_ps, PS_THREADS, threads);
	perflib_gcounter_set(slot, &geo_ps, PS_ELAPSED, 1); /* since boot, as System Up Time */
	perflib_gcounter_set(slot, &geo_ps, PS_STAMP, stamp);
	perflib_gcounter_set(slot, &geo_ps, PS_FREQ, SD_CLOCK_HZ);
}

static __always_inline void refresh(void)
{
	__u64 idle = 0, user = 0, priv = 0, n = nr_cpus ? nr_cpus : 1, now, stamp;
	__u32 irqs = 0, ctxsw = 0, syscalls = 0, queue = 0, zero = 0;
	struct bpf_iter_num it;
	void *slot;
	int *k;

	perflib__for(it, k, nr_cpus)
	{
		__u32 cpu = (__u32)*k;
		struct cpu_state *st = bpf_map_lookup_percpu_elem(&cpu_state, &zero, cpu);
		__u64 i, since, t;

		if (!st || cpu >= SD_MAX_CPUS)
			continue;
		i = SD_ONCE(st->idle);
		barrier();
		since = SD_ONCE(st->idle_start);
		t = bpf_ktime_get_ns();
		if (since && t > since)
			i += t - since; /* the idle stretch in progress */
		if (i < pub_idle[cpu])
			i = pub_idle[cpu];
		pub_idle[cpu] = i;
		cpu_write(&cpu_slots, cpu_slot[cpu], i, st->user, st->priv, st->irqs);
		cpu_write(&pi_slots, pi_slot[cpu], i, st->user, st->priv, st->irqs);
		idle += i;
		user += st->user;
		priv += st->priv;
		irqs += st->irqs;
		ctxsw += st->ctxsw;
		syscalls += st->syscalls;
		queue += rq_waiting(st->rq);
	}
	bpf_iter_num_destroy(&it);
	/* _Total (the average of the CPUs, as Windows shows it), node total and System */
	cpu_write(&cpu_slots, cpu_total_slot, idle / n, user / n, priv / n, irqs);
	cpu_write(&pi_slots, pi_total_slot, idle / n, user / n, priv / n, irqs);
	cpu_write(&pi_slots, pi_node_total_slot, idle / n, user / n, priv / n, irqs);
	queue_len = queue;
	stamp = bpf_ktime_get_boot_ns() / SD_NS_PER_100NS;
	slot = perflib_gslot(&sys_slots, &geo_sys, sys_slot);
	perflib_gcounter_set32(slot, &geo_sys, SYS_CTXSW, ctxsw);
	perflib_gcounter_set32(slot, &geo_sys, SYS_SYSCALLS, syscalls);
	perflib_gcounter_set32(slot, &geo_sys, SYS_PROCESSES, (__u32)nr_processes);
	perflib_gcounter_set32(slot, &geo_sys, SYS_THREADS, (__u32)nr_threads);
	perflib_gcounter_set32(slot, &geo_sys, SYS_QUEUE, queue);
	perflib_gcounter_set(slot, &geo_sys, SYS_UPTIME, 1); /* booted at the clock's start */
	perflib_gcounter_set(slot, &geo_sys, SYS_STAMP, stamp);
	perflib_gcounter_set(slot, &geo_sys, SYS_FREQ, SD_CLOCK_HZ);
	ps_special(perflib_gslot(&ps_slots, &geo_ps, ps_idle_slot), idle, 0, idle, (__u32)n, stamp);
	slot = perflib_gslot(&ps_slots, &geo_ps, ps_total_slot);
	ps_special(slot, idle + user + priv, user, idle + priv, (__u32)(nr_threads + n), stamp);
	/* the Process instances' clocks, less often (one write per process) */
	now = bpf_ktime_get_ns();
	if (now - stamp_ts >= SD_STAMP_PERIOD_NS) {
		struct sd_stats *stats = bpf_map_lookup_elem(&sd_stats, &zero);
		struct stamp_ctx c = {.stamp = stamp};
		long n;

		stamp_ts = now;
		n = bpf_for_each_map_elem(&ps_map, stamp_one, &c, 0);
		if (stats) {
			stats->stamp_runs++;
			stats->stamp_ns += bpf_ktime_get_ns() - now;
			stats->stamp_procs += n > 0 ? (__u64)n : 0;
		}
	}
}

static int sd_refresh(void *map, int *key, struct sd_timer *v)
{
	__u32 zero = 0;
	struct sd_stats *stats = bpf_map_lookup_elem(&sd_stats, &zero);
	__u64 t0 = bpf_ktime_get_ns();

	refresh();
	if (stats) {
		stats->refresh_runs++;
		stats->refresh_ns += bpf_ktime_get_ns() - t0;
	}
	bpf_timer_start(&v->t, refresh_ns, 0);
	return 0;
}

/* started once by the service (BPF_PROG_TEST_RUN); the timer then re-arms itself until the
 * map goes with the service. ret: 0 or -errno */
SEC("syscall")
int sd_refresh_start(struct { __s64 ret; } * c)
{
	__u32 zero = 0;
	struct sd_timer *v = bpf_map_lookup_elem(&refresh_timer, &zero);
	long err;

	if (!v)
		return 0;
	err = bpf_timer_init(&v->t, &refresh_timer, 1 /* CLOCK_MONOTONIC */);
	if (!err)
		err = bpf_timer_set_callback(&v->t, sd_refresh);
	if (!err)
		err = bpf_timer_start(&v->t, 0, 0);
	c->ret = err;
	return 0;
}

/* fill pcpu_off (see mm_pages), run once by the service before the programs attach; ret: 0,
 * or -EINVAL when an offset looks wrong (then the Working Set and Private Bytes are the
 * counters' central counts, as before) */
SEC("syscall")
int sd_pcpu_init(struct { __s64 ret; } * c)
{
	__u64 base = 0, map = ptr_value(&cpu_state);
	struct bpf_iter_num it;
	__u32 zero = 0;
	int *k, bad = 0;

	/* the per-CPU pointer of the array's element 0 */
	if (bpf_probe_read_kernel(&base, sizeof(base),
				  (void *)(map + bpf_core_field_offset(struct bpf_array, pptrs))) ||
	    !base) {
		c->ret = -PERFLIB_EINVAL;
		return 0;
	}
	perflib__for(it, k, nr_cpus)
	{
		__u32 cpu = (__u32)*k;
		void *p = bpf_map_lookup_percpu_elem(&cpu_state, &zero, cpu);

		if (cpu >= SD_MAX_CPUS)
			break;
		if (!p) {
			bad = 1;
			continue;
		}
		pcpu_off[cpu] = ptr_value(p) - base;
	}
	bpf_iter_num_destroy(&it);
	pcpu_ok = !bad;
	c->ret = bad ? -PERFLIB_EINVAL : 0;
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

static __always_inline int irq_count(void)
{
	struct cpu_state *st = state();

	if (st)
		st->irqs++;
	return 0;
}

/* device interrupts: one per handler run (a shared line runs each of its handlers) */
SEC("tp_btf/irq_handler_entry")
int BPF_PROG(sd_irq)
{
	return irq_count();
}

/*
 * The interrupts that have no irq handler: the CPU's own vectors (x86 irq_vectors), counted
 * in /proc/interrupts as LOC, RES, CAL, IWI, SPU, ERR, TRM, PLT (a TLB shootdown is a
 * function call interrupt: CAL; /proc/interrupts counts it twice, in CAL and TLB). Windows'
 * Interrupts/sec counts the clock and inter-processor interrupts too. The service leaves out
 * a program whose tracepoint the kernel lacks (other architectures).
 */
SEC("tp_btf/local_timer_entry")
int BPF_PROG(sd_irq_timer)
{
	return irq_count();
}

SEC("tp_btf/reschedule_entry")
int BPF_PROG(sd_irq_resched)
{
	return irq_count();
}

SEC("tp_btf/call_function_entry")
int BPF_PROG(sd_irq_call)
{
	return irq_count();
}

SEC("tp_btf/call_function_single_entry")
int BPF_PROG(sd_irq_call1)
{
	return irq_count();
}

SEC("tp_btf/irq_work_entry")
int BPF_PROG(sd_irq_work)
{
	return irq_count();
}

SEC("tp_btf/spurious_apic_entry")
int BPF_PROG(sd_irq_spurious)
{
	return irq_count();
}

SEC("tp_btf/error_apic_entry")
int BPF_PROG(sd_irq_error)
{
	return irq_count();
}

SEC("tp_btf/thermal_apic_entry")
int BPF_PROG(sd_irq_thermal)
{
	return irq_count();
}

SEC("tp_btf/x86_platform_ipi_entry")
int BPF_PROG(sd_irq_platform)
{
	return irq_count();
}

/* create the Process instance of @t (a thread-group leader); its slot, or < 0 */
static __always_inline __s64 ps_create(struct task_struct *t, __u32 ppid)
{
	char name[PERFLIB_BPF_KEY_MAX] = {};
	__u32 tgid = BPF_CORE_READ(t, tgid);
	__u64 start;
	__s64 s;
	void *slot;

	bpf_probe_read_kernel_str(name, 16, BPF_CORE_READ(t, comm));
	s = perflib_instance_create_ascii(&ps_slots, &ps_idx, &ps_live, &geo_ps, ps_guid, name,
					  tgid, ps_hint);
	if (s < 0) {
		if (s != -PERFLIB_EEXIST)
			__sync_fetch_and_add(&ps_create_errors, 1);
		return s;
	}
	ps_hint = (__u32)s + 1;
	slot = perflib_gslot(&ps_slots, &geo_ps, (__u32)s);
	perflib_gcounter_set32(slot, &geo_ps, PS_ID, tgid);
	perflib_gcounter_set32(slot, &geo_ps, PS_PARENT, ppid);
	perflib_gcounter_set32(slot, &geo_ps, PS_THREADS, 1);
	/* Elapsed Time: the start on the object clock (CLOCK_BOOTTIME, as /proc/<pid>/stat's
	 * starttime), the clock read now; the publishing timer keeps it current */
	start = BPF_CORE_READ(t, group_leader, start_boottime) / SD_NS_PER_100NS;
	perflib_gcounter_set(slot, &geo_ps, PS_ELAPSED, start ? start : 1);
	perflib_gcounter_set(slot, &geo_ps, PS_STAMP, bpf_ktime_get_boot_ns() / SD_NS_PER_100NS);
	perflib_gcounter_set(slot, &geo_ps, PS_FREQ, SD_CLOCK_HZ);
	bpf_map_update_elem(&ps_map, &tgid, &(__u32){(__u32)s}, BPF_ANY);
	__sync_fetch_and_add(&nr_processes, 1);
	return s;
}

/* delete the Process instance of @tgid; 0 or -ENOENT */
static __always_inline int ps_delete(__u32 tgid)
{
	__u32 *s = bpf_map_lookup_elem(&ps_map, &tgid);
	void *slot;
	__u32 idx;

	if (!s)
		return -PERFLIB_ENOENT;
	idx = *s;
	bpf_map_delete_elem(&ps_map, &tgid);
	/* its gauges out of _Total's (the delete zeroes the slot) */
	slot = perflib_gslot(&ps_slots, &geo_ps, idx);
	ps_gauge(slot, PS_WS, 0, 0);
	ps_gauge(slot, PS_PRIVATE, 0, 0);
	ps_gauge(slot, PS_HANDLES, 0, 1);
	if (perflib_instance_delete(&ps_slots, &ps_idx, &ps_live, &geo_ps, idx))
		return -PERFLIB_ENOENT;
	__sync_fetch_and_sub(&nr_processes, 1);
	return 0;
}

/*
 * System\Threads: each thread is counted once, by whichever sees it first, the fork program
 * or the task iterator of the start (a thread forked while the programs attach is seen by
 * both; the child is visible to the iterator before its fork tracepoint runs), and uncounted
 * once at its exit, only if it was counted: its storage's mark goes 0 -> 1 (counted) or
 * -> 2 (gone, at exit) exactly once. Before, a time stamp split them, and a thread forked
 * while the programs attached was counted twice and uncounted once (89 against 107 seen).
 */
static __always_inline void thread_in(struct task_struct *t)
{
	struct ps_task *pt =
		bpf_task_storage_get(&ps_task, t, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (pt && __sync_val_compare_and_swap(&pt->counted, 0, 1) == 0) {
		__sync_fetch_and_add(&nr_threads, 1);
		if (!init_seen && BPF_CORE_READ(t, tgid) == 1)
			__sync_fetch_and_add(&init_early, 1);
	}
}

/* the exit of thread @t: uncounted if it was counted, by its mark or, for a thread of pid 1
 * counted at once at the start, by its start time */
static __always_inline void thread_out(struct task_struct *t)
{
	struct ps_task *pt = bpf_task_storage_get(&ps_task, t, NULL,
						  iter_done ? 0 : BPF_LOCAL_STORAGE_GET_F_CREATE);
	__u64 old = pt ? __sync_lock_test_and_set(&pt->counted, 2) : 0;

	if (old == 1 || (!old && init_seen == 2 && BPF_CORE_READ(t, tgid) == 1 &&
			 BPF_CORE_READ(t, start_time) < init_ns))
		__sync_fetch_and_sub(&nr_threads, 1);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sd_fork, struct task_struct *parent, struct task_struct *child)
{
	thread_in(child);
	if (child->pid == child->tgid)
		ps_create(child, parent->tgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sd_exec, struct task_struct *p)
{
	__u64 time, user, priv, rd, wr, rops, wops;
	__u32 tgid = p->tgid, ppid, handles;
	void *slot = ps_slot_of(tgid);
	struct ps_task *pt;
	__s64 s;

	if (!slot)
		return 0;
	/* the name changes: the instance is made again under it, its counters kept */
	time = perflib_gcounter_read(slot, &geo_ps, PS_TIME);
	user = perflib_gcounter_read(slot, &geo_ps, PS_USER);
	priv = perflib_gcounter_read(slot, &geo_ps, PS_PRIV);
	rd = perflib_gcounter_read(slot, &geo_ps, PS_IO_READ);
	wr = perflib_gcounter_read(slot, &geo_ps, PS_IO_WRITE);
	rops = perflib_gcounter_read(slot, &geo_ps, PS_IO_READ_OPS);
	wops = perflib_gcounter_read(slot, &geo_ps, PS_IO_WRITE_OPS);
	ppid = (__u32)perflib_gcounter_read(slot, &geo_ps, PS_PARENT);
	handles = perflib_gcounter_read32(slot, &geo_ps, PS_HANDLES);
	if (ps_delete(tgid))
		return 0;
	s = ps_create(p, ppid);
	slot = s >= 0 ? perflib_gslot(&ps_slots, &geo_ps, (__u32)s) : NULL;
	perflib_gcounter_set(slot, &geo_ps, PS_TIME, time);
	perflib_gcounter_set(slot, &geo_ps, PS_USER, user);
	perflib_gcounter_set(slot, &geo_ps, PS_PRIV, priv);
	perflib_gcounter_set(slot, &geo_ps, PS_IO_READ, rd);
	perflib_gcounter_set(slot, &geo_ps, PS_IO_WRITE, wr);
	perflib_gcounter_set(slot, &geo_ps, PS_IO_READ_OPS, rops);
	perflib_gcounter_set(slot, &geo_ps, PS_IO_WRITE_OPS, wops);
	/* the handles as last counted: a switch-out during the exec (after close-on-exec) may
	 * have counted them into the old instance, and ps_gauges recounts only a changed table */
	ps_gauge(slot, PS_HANDLES, handles, 1);
	/*
	 * close-on-exec changed the table: recount it now. A switch-out inside the closes (they
	 * reschedule between bitmap words) may have recorded next_fd and max_fds as they are now
	 * with only part of the closes counted; left to the period, a process that sleeps from
	 * here on would keep that count (seen: 304 handles published for 105 open).
	 */
	pt = bpf_task_storage_get(&ps_task, p, NULL, 0);
	if (pt)
		pt->fd_ts = 0;
	ps_gauges(p); /* the handles exec closed (close-on-exec) */
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sd_exit, struct task_struct *p, bool group_dead)
{
	void *slot;

	/* a thread the iterator may still meet is marked gone (storage made for it): the
	 * iterator then leaves it out; once it ran, a thread without storage was never counted */
	thread_out(p);
	slot = ps_slot_of(p->tgid);
	if (slot)
		ps_io(p, slot, 1); /* the thread's last reads and writes */
	if (group_dead)
		ps_delete(p->tgid);
	return 0;
}

/* the Process instance of @t, a thread-group leader that existed at the start */
static __always_inline void ps_start(struct task_struct *t)
{
	void *slot;

	if (ps_create(t, BPF_CORE_READ(t, real_parent, tgid)) < 0)
		return;
	slot = ps_slot_of(BPF_CORE_READ(t, tgid));
	/* the bytes of the threads that had exited before (their own are charged when they are
	 * seen) */
	ps_add(slot, PS_IO_READ, BPF_CORE_READ(t, signal, ioac.rchar));
	ps_add(slot, PS_IO_WRITE, BPF_CORE_READ(t, signal, ioac.wchar));
	ps_add(slot, PS_IO_READ_OPS, BPF_CORE_READ(t, signal, ioac.syscr));
	ps_add(slot, PS_IO_WRITE_OPS, BPF_CORE_READ(t, signal, ioac.syscw));
	ps_gauges(t);
}

/* the processes and threads that existed when the service started */
SEC("iter/task")
int sd_iter_task(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	struct task_struct *p;

	if (!t || (t->flags & SD_PF_EXITING))
		return 0;
	if (t->tgid == 1)
		init_seen = 1;
	/*
	 * pid 1 comes first when the iterator yields it (pids are visited in order). Where it
	 * does not (the VM's init here: neither the iterator, bpf_task_from_pid nor the
	 * open-coded task iterator over its threads finds its thread group; /proc does), it is
	 * reached as the parent of the first of its children.
	 */
	p = t->real_parent;
	if (!init_seen && p && p->tgid == 1) {
		p = p->group_leader;
		if (p) {
			/* its threads at once (the fork program counted those it saw already),
			 * uncounted one by one at their exits (thread_out) */
			init_ns = bpf_ktime_get_ns();
			barrier();
			init_seen = 2;
			__sync_fetch_and_add(&nr_threads,
					     BPF_CORE_READ(p, signal, nr_threads) - init_early);
			ps_start(p);
		}
	}
	thread_in(t);
	if (t->pid == t->tgid)
		ps_start(t);
	/* what the process holds now (it may sleep for long): threads, memory, handles, and the
	 * thread's I/O so far */
	ps_gauges(t);
	return 0;
}

/* ---- Network Interface ------------------------------------------------------------------ */

static __always_inline int in_init_net(struct net_device *dev)
{
	return BPF_CORE_READ(dev, nd_net.net, ns.inum) == SD_INIT_NET_INO;
}

static __always_inline void net_count(struct net_device *dev, __u64 bytes, int rx)
{
	__u32 ifindex = BPF_CORE_READ(dev, ifindex), *s = bpf_map_lookup_elem(&net_map, &ifindex);
	void *slot;

	if (!s || !in_init_net(dev))
		return;
	slot = perflib_gslot(&net_slots, &geo_net, *s);
	perflib_gcounter_add(slot, &geo_net, NET_BYTES, bytes);
	perflib_gcounter_add(slot, &geo_net, rx ? NET_BYTES_RX : NET_BYTES_TX, bytes);
	perflib_gcounter_add32(slot, &geo_net, NET_PACKETS, 1);
	perflib_gcounter_add32(slot, &geo_net, rx ? NET_PACKETS_RX : NET_PACKETS_TX, 1);
}

#define SD_IFF_LOOPBACK 0x8

/*
 * Bytes as the device's driver counts them (/proc/net/dev): with the link-layer header, except
 * on loopback, whose driver counts a packet once its Ethernet header is pulled (loopback_xmit:
 * eth_type_trans, then skb->len), so without its 14 bytes, sent and received alike.
 */
static __always_inline int is_loopback(struct net_device *dev)
{
	return BPF_CORE_READ(dev, flags) & SD_IFF_LOOPBACK;
}

SEC("tp_btf/net_dev_xmit")
int BPF_PROG(sd_net_xmit, struct sk_buff *skb, int rc, struct net_device *dev, unsigned int len)
{
	__u32 hh = BPF_CORE_READ(dev, hard_header_len);

	if (rc)
		return 0;
	if (is_loopback(dev))
		len = len > hh ? len - hh : 0; /* the header loopback_xmit pulls before counting */
	net_count(dev, len, 0);
	return 0;
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(sd_net_rx, struct sk_buff *skb)
{
	__u16 mac = skb->mac_header;
	__u64 data = (__u64)skb->data - (__u64)skb->head, bytes = skb->len;

	/* the link-layer header, pulled by now, counts as the driver counts it (not loopback's) */
	if (mac != (__u16)~0U && data > mac && data - mac <= 128 && !is_loopback(skb->dev))
		bytes += data - mac;
	net_count(skb->dev, bytes, 1);
	return 0;
}

/*
 * Network Interface instances are made and deleted here, on the service's request: it
 * follows rtnetlink's link messages (this kernel has no tracepoint where devices register
 * or unregister, and refuses kprobes and fentry/fexit programs). ctl: 0 create (name,
 * ifindex) unless the ifindex has one, 1 delete the ifindex's. ret: slot, 0, or -errno.
 */
struct sd_net_ctx {
	char name[16];
	__u32 ifindex;
	__u32 del;
	__s64 ret;
};

SEC("syscall")
int sd_net_ctl(struct sd_net_ctx *c)
{
	char name[PERFLIB_BPF_KEY_MAX] = {};
	__u32 ifindex = c->ifindex, *s = bpf_map_lookup_elem(&net_map, &ifindex);
	__s64 r;

	if (c->del) {
		if (!s) {
			c->ret = -PERFLIB_ENOENT;
			return 0;
		}
		c->ret = perflib_instance_delete(&net_slots, &net_idx, &net_live, &geo_net, *s);
		bpf_map_delete_elem(&net_map, &ifindex);
		return 0;
	}
	if (s) {
		c->ret = -PERFLIB_EEXIST;
		return 0;
	}
	__builtin_memcpy(name, c->name, sizeof(c->name));
	name[15] = 0;
	r = perflib_instance_create_ascii(&net_slots, &net_idx, &net_live, &geo_net, net_guid, name,
					  ifindex, 0);
	if (r >= 0)
		bpf_map_update_elem(&net_map, &ifindex, &(__u32){(__u32)r}, BPF_ANY);
	else
		__sync_fetch_and_add(&net_create_errors, 1);
	c->ret = r;
	return 0;
}

/* ---- PhysicalDisk, LogicalDisk ------------------------------------------------------------ */

static __always_inline void disk_count(void *map, const volatile struct perflib_bpf_geometry *g,
				       __u32 idx, int write, __u64 bytes, __u64 queue)
{
	void *slot = (perflib_gslot)(map, g, idx); /* either set: unchecked */

	if (!slot)
		return;
	perflib_gcounter_add32(slot, g, write ? DK_WRITES : DK_READS, 1);
	perflib_gcounter_add32(slot, g, DK_TRANSFERS, 1);
	perflib_gcounter_add(slot, g, write ? DK_WRITE_BYTES : DK_READ_BYTES, bytes);
	perflib_gcounter_add(slot, g, DK_BYTES, bytes);
	perflib_gcounter_add(slot, g, DK_QUEUE, queue);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(sd_rq_done, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u32 op = BPF_CORE_READ(rq, cmd_flags) & SD_REQ_OP_MASK, devt, *s;
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);
	__u64 start = BPF_CORE_READ(rq, start_time_ns), now = bpf_ktime_get_ns(), queue;

	if (op > 1) /* REQ_OP_READ 0, REQ_OP_WRITE 1; flushes, discards, ... are not counted */
		return 0;
	/* the request's time in the queue, 100 ns: its share of the queue-length integral */
	queue = start && now > start ? (now - start) / SD_NS_PER_100NS : 0;
	devt = ((__u32)BPF_CORE_READ(disk, major) << 20) | (__u32)BPF_CORE_READ(disk, first_minor);
	s = bpf_map_lookup_elem(&pd_map, &devt);
	if (s) {
		disk_count(&pd_slots, &geo_pd, *s, op, nr_bytes, queue);
		disk_count(&pd_slots, &geo_pd, pd_total_slot, op, nr_bytes, queue);
	}
	devt = BPF_CORE_READ(rq, part, bd_dev);
	s = bpf_map_lookup_elem(&ld_map, &devt);
	if (s) {
		disk_count(&ld_slots, &geo_ld, *s, op, nr_bytes, queue);
		disk_count(&ld_slots, &geo_ld, ld_total_slot, op, nr_bytes, queue);
	}
	return 0;
}

/*
 * PhysicalDisk and LogicalDisk instances, made and deleted on the service's request when a
 * disk or a mount comes or goes (BPF_PROG_TEST_RUN). name: len UTF-16 units (the service
 * converts and shortens it); devt: the device (kernel encoding), key of pd_map / ld_map;
 * logical: 0 PhysicalDisk, 1 LogicalDisk; del: 1 delete the devt's instance. ret: the slot,
 * 0 (deleted), -ENOENT, -EEXIST (the devt has one) or what perflib_instance_create returns.
 */
struct sd_disk_ctx {
	__u16 name[PERFLIB_BPF_KEY_MAX];
	__u32 len;
	__u32 id;
	__u32 devt;
	__u32 logical;
	__u32 del;
	__u32 pad;
	__s64 ret;
};

SEC("syscall")
int sd_disk_ctl(struct sd_disk_ctx *c)
{
	__u16 name[PERFLIB_BPF_KEY_MAX] = {};
	__u32 devt = c->devt, len = c->len, *s;
	void *map = c->logical ? (void *)&ld_map : (void *)&pd_map;
	__s64 r;

	s = bpf_map_lookup_elem(map, &devt);
	if (c->del) {
		if (!s) {
			c->ret = -PERFLIB_ENOENT;
			return 0;
		}
		if (c->logical)
			r = perflib_instance_delete(&ld_slots, &ld_idx, &ld_live, &geo_ld, *s);
		else
			r = perflib_instance_delete(&pd_slots, &pd_idx, &pd_live, &geo_pd, *s);
		bpf_map_delete_elem(map, &devt);
		c->ret = r;
		return 0;
	}
	if (s) {
		c->ret = -PERFLIB_EEXIST;
		return 0;
	}
	if (len > PERFLIB_BPF_CREATE_NAME_MAX) {
		c->ret = -PERFLIB_EINVAL;
		return 0;
	}
	__builtin_memcpy(name, c->name, sizeof(name));
	/*
	 * one create for both sets (each inlined copy takes its own stack, and the index
	 * lookup's frame counts toward the 512 bytes with this one's)
	 */
	r = (perflib_instance_create)(c->logical ? (void *)&ld_slots : (void *)&pd_slots,
				      c->logical ? (void *)&ld_idx : (void *)&pd_idx,
				      c->logical ? (void *)&ld_live : (void *)&pd_live,
				      c->logical ? &geo_ld : &geo_pd,
				      c->logical ? ld_guid : pd_guid, name, len, c->id, 0);
	if (r >= 0)
		bpf_map_update_elem(map, &devt, &(__u32){(__u32)r}, BPF_ANY);
	c->ret = r;
	return 0;
}

/* the loader's polled LogicalDisk counters (free space), one DWORD counter at a time */
struct sd_set_ctx {
	__u32 slot;
	__u32 pos;
	__u32 value;
	__s32 ret;
};

SEC("syscall")
int sd_ld_set(struct sd_set_ctx *c)
{
	c->ret = perflib_gcounter_set32(perflib_gslot(&ld_slots, &geo_ld, c->slot), &geo_ld, c->pos,
					c->value);
	return 0;
}

/* ---- Cgroup ----------------------------------------------------------------------------- */

#define SD_PATH_MAX 256

/* longest cgroup instance name: those of size class 0 (layout.h) */
#define SD_CG_NAME_MAX (PERFLIB_CLASS0_NAME - 1)

/* room to measure a cgroup path (the stack has none) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, char[SD_PATH_MAX]);
	__uint(max_entries, 1);
} path_buf SEC(".maps");

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(sd_cg_mkdir, struct cgroup *cgrp, const char *path)
{
	char name[PERFLIB_BPF_KEY_MAX] = {};
	__u64 id = BPF_CORE_READ(cgrp, kn, id);
	__u32 zero = 0;
	char *buf = bpf_map_lookup_elem(&path_buf, &zero);
	long n;
	__s64 s;

	if (!buf || BPF_CORE_READ(cgrp, root, hierarchy_id) != 0) /* cgroup v1 hierarchies */
		return 0;
	n = bpf_probe_read_kernel_str(buf, SD_PATH_MAX, path);
	if (n <= 0)
		return 0;
	/*
	 * a path longer than the names of the set's size class 0 (where programs create
	 * instances, 35 units) keeps its end (the cgroup's own name)
	 */
	n = n - 1 > SD_CG_NAME_MAX ? n - 1 - SD_CG_NAME_MAX : 0;
	bpf_probe_read_kernel_str(name, SD_CG_NAME_MAX + 1, path + (n & 0xff));
	/* '/' separates parent and instance in a counter path: a path is written as Windows
	 * writes a mounted folder, with '\\' */
	for (n = 0; n < SD_CG_NAME_MAX; n++) {
		if (name[n] == '/')
			name[n] = '\\';
	}
	s = perflib_instance_create_ascii(&cg_slots, &cg_idx, &cg_live, &geo_cg, cg_guid, name,
					  (__u32)id, 0);
	if (s < 0) {
		__sync_fetch_and_add(&cg_create_errors, 1);
		return 0;
	}
	bpf_map_update_elem(&cg_map, &id, &(__u32){(__u32)s}, BPF_ANY);
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(sd_cg_rmdir, struct cgroup *cgrp, const char *path)
{
	__u64 id = BPF_CORE_READ(cgrp, kn, id);
	__u32 *s;

	if (BPF_CORE_READ(cgrp, root, hierarchy_id) != 0)
		return 0;
	s = bpf_map_lookup_elem(&cg_map, &id);
	if (!s)
		return 0;
	perflib_instance_delete(&cg_slots, &cg_idx, &cg_live, &geo_cg, *s);
	bpf_map_delete_elem(&cg_map, &id);
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(sd_fault)
{
	cg_charge((struct task_struct *)bpf_get_current_task(), CG_FAULTS, 1, 0);
	return 0;
}
