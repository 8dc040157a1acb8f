// SPDX-License-Identifier: MIT
/*
 * process.c - Process: the programs on sched_process_fork/exec/exit create and delete one
 * instance per process (name = command, InstanceId = pid) and count Processes and Threads;
 * the task iterator, run once at the start, adds the processes that existed before them.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sysd.h"

/* kernel-owned instance @name (InstanceId 0) of Process; its slot in *@slot */
static int special(struct sd *sd, const char *name, volatile __u32 *slot)
{
	int idx = sd_kinst(sd, SET_PS, name, 0);

	if (idx < 0)
		return idx;
	*slot = (__u32)idx;
	return 0;
}

/* the programs create the instances: storage for --max-processes of them, now */
static int process_prepare(struct sd *sd)
{
	struct perflib_bpf_counterset *cs = &sd->cs[SET_PS];
	struct sysd_bpf *skel = sd->skel;
	int err;

	skel->rodata->geo_ps = cs->geo;
	err = perflib_bpf_counterset_guid(cs, (__u8 *)skel->rodata->ps_guid);
	/* Idle and _Total, as Windows lists them (ID Process 0), kernel-owned: the programs'
	 * timer writes them */
	if (!err)
		err = special(sd, "Idle", &skel->rodata->ps_idle_slot);
	if (!err)
		err = special(sd, "_Total", &skel->rodata->ps_total_slot);
	if (!err) {
		err = perflib_kernel_reserve(sd->prov, &sd->reg[SET_PS]->counterset_guid,
					     sd->max_ps);
		if (err > 0)
			err = 0;
		else if (err < 0)
			sd_err("cannot reserve %u processes: %s", sd->max_ps, strerror(-err));
	}
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.ps_map, cs->geo.capacity);
	if (!err)
		err = perflib_bpf_counterset_reuse(cs, skel->maps.ps_slots, skel->maps.ps_idx);
	if (!err)
		err = perflib_bpf_counterset_reuse_live(cs, skel->maps.ps_live);
	return err;
}

/* run the task iterator once: the processes and threads that exist now */
static int run_iterator(struct sysd_bpf *skel)
{
	struct bpf_link *link = bpf_program__attach_iter(skel->progs.sd_iter_task, NULL);
	char buf[64];
	int fd, err = 0;
	ssize_t n;

	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		err = -errno;
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
	}
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	return err;
}

/* the per-CPU offsets the programs add up the memory counters with (sd_pcpu_init) */
static int pcpu_init(struct sysd_bpf *skel)
{
	struct {
		__s64 ret;
	} c = {0};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof(c));

	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sd_pcpu_init), &opts))
		return -errno;
	if (c.ret)
		sd_err("cannot find the per-CPU offsets: Working Set and Private Bytes leave out "
		       "the CPUs' parts");
	return 0;
}

static int process_start(struct sd *sd, int *fd)
{
	int err;

	(void)fd;
	err = pcpu_init(sd->skel);
	if (!err)
		err = run_iterator(sd->skel);
	return err;
}

const struct sd_source sd_process = {.prepare = process_prepare, .start = process_start};
