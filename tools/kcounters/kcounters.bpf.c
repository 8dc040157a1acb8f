// SPDX-License-Identifier: MIT
/*
 * kcounters.bpf.c - a kernel counter provider: per-CPU context switches, system calls and
 * page faults counted straight into the slots of the "Kernel CPU" counter set
 * (tools/kcounters/kcounters.man). Instance k is CPU k; `kcounters load` creates the
 * instances, hands them to the kernel (owner_start PERFLIB_OWNER_KERNEL) and fills
 * cpu_slot[] and the counter positions before loading. Each CPU writes only its own
 * slot, so the adds never contend.
 *
 * BTF-enabled raw tracepoints (tp_btf): no tracefs needed, no argument copying. A
 * tracepoint the kernel lacks is left out by the loader (its counter stays 0).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "perflib_bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define KC_MAX_CPUS 1024

PERFLIB_DATA_MAP_RAW(slots);

/* slot of each CPU's instance; capacity (out of range) = no instance */
const volatile __u32 cpu_slot[KC_MAX_CPUS] = {};
/* counter positions in the registration (the manifest's order) */
const volatile __u32 pos_ctxsw = 0;
const volatile __u32 pos_syscalls = 1;
const volatile __u32 pos_faults = 2;
const volatile __u32 pos_kfaults = 3;

static __always_inline void count(__u32 pos)
{
	__u32 cpu = bpf_get_smp_processor_id();

	if (cpu >= KC_MAX_CPUS)
		return;
	perflib_counter_add(perflib_slot(&slots, cpu_slot[cpu]), pos, 1);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(kc_sched_switch)
{
	count(pos_ctxsw);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(kc_sys_enter)
{
	count(pos_syscalls);
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(kc_page_fault_user)
{
	count(pos_faults);
	return 0;
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(kc_page_fault_kernel)
{
	count(pos_kfaults);
	return 0;
}
