// SPDX-License-Identifier: MIT
/*
 * cpu.c - Processor, Processor Information and System: one kernel-owned instance per
 * possible CPU and the totals, counted by the sched_switch, sys_enter and irq programs,
 * split into user and privileged time by a cpu-clock sample on each CPU, and published by
 * the programs' BPF timer (--hz times a second), which also writes System.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sysd.h"

/* the NUMA node of @cpu, or -1 when unknown */
static int cpu_node(unsigned int cpu)
{
	char path[96];
	struct dirent *de;
	DIR *d;
	int node = -1;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u", cpu);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		if (!strncmp(de->d_name, "node", 4) && de->d_name[4] >= '0' && de->d_name[4] <= '9')
			node = atoi(de->d_name + 4);
	}
	if (d)
		closedir(d);
	return node;
}

static bool same_geometry(const struct perflib_bpf_geometry *a,
			  const struct perflib_bpf_geometry *b)
{
	return a->slot_size == b->slot_size && a->capacity == b->capacity &&
	       a->nr_counters == b->nr_counters && a->name_max == b->name_max &&
	       a->name_offset == b->name_offset && a->instance_type == b->instance_type;
}

/* the instances of each CPU and the totals; their slots go to the programs' rodata */
static int cpu_instances(struct sd *sd)
{
	struct sysd_bpf *skel = sd->skel;
	bool one_node = true;
	char text[32];
	unsigned int cpu;
	int idx, node;

	for (cpu = 0; cpu < sd->nr_cpus; cpu++) {
		node = cpu_node(cpu);
		if (node > 0)
			one_node = false;
		snprintf(text, sizeof(text), "%u", cpu);
		idx = sd_kinst(sd, SET_CPU, text, cpu);
		if (idx < 0)
			return idx;
		skel->rodata->cpu_slot[cpu] = (__u32)idx;
		snprintf(text, sizeof(text), "%d,%u", node < 0 ? 0 : node, cpu);
		idx = sd_kinst(sd, SET_PI, text, cpu);
		if (idx < 0)
			return idx;
		skel->rodata->pi_slot[cpu] = (__u32)idx;
	}
	idx = sd_kinst(sd, SET_CPU, "_Total", sd->nr_cpus);
	if (idx < 0)
		return idx;
	skel->rodata->cpu_total_slot = (__u32)idx;
	idx = sd_kinst(sd, SET_PI, "_Total", sd->nr_cpus + 1);
	if (idx < 0)
		return idx;
	skel->rodata->pi_total_slot = (__u32)idx;
	/* a node total only where it equals _Total (one node); more nodes: left out */
	skel->rodata->pi_node_total_slot = 0xFFFFFFFF;
	if (one_node) {
		idx = sd_kinst(sd, SET_PI, "0,_Total", sd->nr_cpus);
		if (idx < 0)
			return idx;
		skel->rodata->pi_node_total_slot = (__u32)idx;
	}
	idx = sd_kinst(sd, SET_SYS, "", 0);
	if (idx < 0)
		return idx;
	skel->rodata->sys_slot = (__u32)idx;
	return 0;
}

/* the interrupt programs on the CPU's own vectors (x86's irq_vectors tracepoints): left out
 * where the kernel has no such tracepoint */
static int irq_vectors(struct sysd_bpf *skel)
{
	struct bpf_program *const progs[] = {
		skel->progs.sd_irq_timer, skel->progs.sd_irq_resched, skel->progs.sd_irq_call,
		skel->progs.sd_irq_call1, skel->progs.sd_irq_work,    skel->progs.sd_irq_spurious,
		skel->progs.sd_irq_error, skel->progs.sd_irq_thermal, skel->progs.sd_irq_platform,
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		/* "tp_btf/<tracepoint>" */
		const char *tp = strchr(bpf_program__section_name(progs[i]), '/') + 1;

		if (libbpf_find_vmlinux_btf_id(tp, BPF_TRACE_RAW_TP) > 0)
			continue;
		err = bpf_program__set_autoload(progs[i], false);
		if (err)
			return err;
	}
	return 0;
}

static int cpu_prepare(struct sd *sd)
{
	struct sysd_bpf *skel = sd->skel;
	int err;

	/* the programs write both sets with one geometry (geo_cpu) */
	if (!same_geometry(&sd->cs[SET_CPU].geo, &sd->cs[SET_PI].geo)) {
		sd_err("Processor and Processor Information must have the same geometry");
		return -EINVAL;
	}
	skel->rodata->geo_cpu = sd->cs[SET_CPU].geo;
	skel->rodata->geo_sys = sd->cs[SET_SYS].geo;
	skel->rodata->nr_cpus = sd->nr_cpus;
	skel->rodata->refresh_ns = 1000000000ull / sd->hz;
	err = cpu_instances(sd);
	if (!err)
		err = irq_vectors(skel);
	if (!err)
		err = perflib_bpf_counterset_reuse(&sd->cs[SET_CPU], skel->maps.cpu_slots, NULL);
	if (!err)
		err = perflib_bpf_counterset_reuse(&sd->cs[SET_PI], skel->maps.pi_slots, NULL);
	if (!err)
		err = perflib_bpf_counterset_reuse(&sd->cs[SET_SYS], skel->maps.sys_slots, NULL);
	return err;
}

/* the per-CPU cpu-clock sample, @hz times a second */
static int attach_samples(struct sd *sd)
{
	struct perf_event_attr a;
	unsigned int cpu;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = sd->hz;
	for (cpu = 0; cpu < sd->nr_cpus; cpu++) {
		fd = (int)syscall(SYS_perf_event_open, &a, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV || errno == EINVAL)
				continue; /* a possible CPU that is not online */
			sd_err("cannot open the cpu-clock event of CPU %u: %s", cpu,
			       strerror(errno));
			return -errno;
		}
		sd->links[cpu] = bpf_program__attach_perf_event(sd->skel->progs.sd_sample, fd);
		if (!sd->links[cpu]) {
			close(fd);
			return -errno;
		}
	}
	return 0;
}

/* start the timer that publishes the CPU counters, totals, System and the time stamps */
static int start_refresh(struct sysd_bpf *skel)
{
	struct {
		__s64 ret;
	} c = {0};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof(c));

	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sd_refresh_start), &opts))
		return -errno;
	if (c.ret)
		sd_err("cannot start the publishing timer: %s", strerror((int)-c.ret));
	return (int)c.ret;
}

static int cpu_start(struct sd *sd, int *fd)
{
	int err;

	(void)fd;
	sd->links = calloc(sd->nr_cpus, sizeof(*sd->links));
	if (!sd->links)
		return -ENOMEM;
	err = attach_samples(sd);
	if (!err)
		err = start_refresh(sd->skel);
	return err;
}

static void cpu_stop(struct sd *sd)
{
	unsigned int cpu;

	for (cpu = 0; sd->links && cpu < sd->nr_cpus; cpu++)
		bpf_link__destroy(sd->links[cpu]);
	free(sd->links);
	sd->links = NULL;
}

const struct sd_source sd_cpu = {.prepare = cpu_prepare, .start = cpu_start, .stop = cpu_stop};
