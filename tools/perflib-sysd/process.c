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

/* the programs create the instances: storage for --max-processes of them, now */
static int process_prepare(struct sd *sd)
{
	struct perflib_bpf_counterset *cs = &sd->cs[SET_PS];
	struct sysd_bpf *skel = sd->skel;
	int err;

	skel->rodata->geo_ps = cs->geo;
	err = perflib_bpf_counterset_guid(cs, (__u8 *)skel->rodata->ps_guid);
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

static int process_start(struct sd *sd, int *fd)
{
	(void)fd;
	return run_iterator(sd->skel);
}

const struct sd_source sd_process = {.prepare = process_prepare, .start = process_start};
