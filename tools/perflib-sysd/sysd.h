/* SPDX-License-Identifier: MIT */
/*
 * sysd.h - what the files of perflib-sysd share: the service's state, its counter sets, and
 * the sources of counters the run loop (run.c) drives through their table:
 *
 *	cpu.c      Processor, Processor Information, System (BPF timer and samples)
 *	process.c  Process (fork/exec/exit programs, the task iterator)
 *	net.c      Network Interface (rtnetlink)
 *	disk.c     PhysicalDisk (uevents) and LogicalDisk (mountinfo, free space)
 *	cgroup.c   Cgroup (cgroup_mkdir/rmdir, the cgroups of the start)
 *	memory.c   Memory (/proc/meminfo and /proc/vmstat, once a second)
 *
 * sets.c registers the sets and makes kernel-owned instances; main.c is the command line.
 */
#ifndef SYSD_H
#define SYSD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <perflib.h>
#include <perflib-linux.h>

#include "manifest.h"
#include "perflib_bpf_loader.h" /* before the skeleton: struct perflib_bpf_geometry */
#include "regman.h"
#include "sysd.skel.h"

/* the counter sets of system.man, in sd->reg[] and sd->cs[] */
enum { SET_CPU, SET_PI, SET_SYS, SET_MEM, SET_PS, SET_NET, SET_PD, SET_LD, SET_CG, NR_SETS };
extern const char *const sd_set_names[NR_SETS];

#define SD_MAX_MOUNTS 256
#define SD_MAX_DISKS 1024 /* pd_map's size */
/*
 * longest name the BPF programs create: those of size class 0 (layout.h), the class the
 * programs' maps (segs, lives) hold; the path sets are registered with it, so they
 * have that one class
 */
#define SD_NAME_MAX (PERFLIB_CLASS0_NAME - 1)

struct sd {
	/* the manifest and the command line */
	struct manifest *man;
	struct regman rm;
	const struct perflib_counterset_reg *reg[NR_SETS];
	HANDLE prov;
	unsigned int nr_cpus, hz, max_ps, max_cg;
	struct perflib_pin_opts opts;
	/* a run (run.c): the programs and the pins of each set */
	struct sysd_bpf *skel;
	struct perflib_bpf_counterset cs[NR_SETS];
	struct bpf_link **links;       /* the cpu-clock sample of each CPU (cpu.c) */
	PPERF_COUNTERSET_INSTANCE mem; /* the Memory instance (memory.c) */
	/* LogicalDisk instances: device, slot, mount point now (slot of _Total in ld_total) */
	struct sd_mount {
		__u32 devt;
		int slot;
		char *path;
	} ld[SD_MAX_MOUNTS];
	int nr_ld, ld_total;
};

/*
 * A source of counters: what the run loop calls, in the order of its table. Every hook may
 * be NULL. Messages go through sd_err(); the loop adds one naming the step that failed.
 */
struct sd_source {
	/* before the programs load: instances, storage, the programs' read-only data, map
	 * sizes, the maps they share with the library; 0 or -errno */
	int (*prepare)(struct sd *sd);
	/* once they are attached: what exists already. It may set *@fd (-1 before) to a
	 * descriptor the loop polls for .events and closes at the end; 0 or -errno */
	int (*start)(struct sd *sd, int *fd);
	short events;
	void (*event)(struct sd *sd, int fd, short revents); /* @fd has @revents */
	void (*tick)(struct sd *sd);			     /* once a second */
	void (*stop)(struct sd *sd); /* at the end of a run, whatever got done */
};

extern const struct sd_source sd_cpu, sd_process, sd_net, sd_disks, sd_mounts, sd_cgroup, sd_memory;

/* run.c: the run command (SIGTERM or SIGINT ends it); its exit status */
int sd_run(void *ctx);

/* sets.c: "perflib-sysd: <message>" on stderr */
void sd_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* sets.c: register every counter set and start the provider; 0 or -errno */
int sd_register(struct sd *sd);

/* sets.c: delete every instance and unregister every counter set; 0 or -errno */
int sd_remove(struct sd *sd);

/* sets.c: whether counter set @k is registered (pinned) */
bool sd_registered(const struct sd *sd, int k);

/*
 * sets.c: @text as an instance name in @name (SD_NAME_MAX + 1 units): a longer path keeps
 * its end, as the BPF programs name it, and '/' is written '\\'. Its length, or -errno.
 */
int sd_inst_name(const char *text, WCHAR *name);

/* sets.c: kernel-owned instance @text / @id of set @k; its slot or -errno (sd_kinst says
 * why on stderr, sd_kinst_quiet does not) */
int sd_kinst_quiet(struct sd *sd, int k, const char *text, ULONG id);
int sd_kinst(struct sd *sd, int k, const char *text, ULONG id);

/* sets.c: storage for @n instances of set @k, which BPF programs create; 0 or -errno */
int sd_reserve(struct sd *sd, int k, unsigned int n);

/* sets.c: the first line of /sys file @path as an unsigned number (or "M:m" as a dev_t) */
int sd_sys_read(const char *path, unsigned long *ret, bool devt);

/* sets.c: one field of a /proc/self/mountinfo line: mount point (5), device (3), or after
 * " - " the file-system type (1) and source (2); in @buf, NULL when there is none */
const char *sd_mi_field(const char *line, int n, bool after, char *buf, size_t size);

#endif /* SYSD_H */
