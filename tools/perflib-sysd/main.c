// SPDX-License-Identifier: MIT
/*
 * perflib-sysd - the Windows system counter sets (Processor, Processor Information, System,
 * Memory, Process, Network Interface, PhysicalDisk, LogicalDisk, Cgroup; system.man, compiled
 * in) published from the kernel: registers them, creates the fixed instances (CPUs, totals) as
 * kernel-owned instances, loads and attaches sysd.bpf.c (which creates and deletes the
 * Process and Cgroup instances itself, and those of devices and mounts when this loop tells
 * it: rtnetlink, uevents, mountinfo), starts its publishing timer, and publishes Memory and
 * free space once a second until it is told to stop; stopping removes all of it.
 * Only public API (perflib.h, perflib-linux.h, perflib_bpf_loader.h). See usage_text.
 *
 * This file: the built-in manifest and the command line; sysd.h lists the others.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "sysd.h"
#include "tool.h"

/* the manifest, embedded at build time (the Makefile makes main.o depend on it) */
__asm__(".section .rodata\n"
	".global sd_manifest\n"
	".hidden sd_manifest\n"
	"sd_manifest:\n"
	".incbin \"tools/perflib-sysd/system.man\"\n"
	".global sd_manifest_end\n"
	".hidden sd_manifest_end\n"
	"sd_manifest_end:\n"
	".byte 0\n"
	".previous\n");
extern const char sd_manifest[], sd_manifest_end[];

static const char usage_text[] =
	"NAME\n"
	"    perflib-sysd - the Windows system counter sets, counted in the kernel\n"
	"\n"
	"SYNOPSIS\n"
	"    perflib-sysd run [--hz N] [--max-processes N] [--max-cgroups N] [--mode MODE]\n"
	"                     [--group GROUP]\n"
	"    perflib-sysd stop\n"
	"    perflib-sysd status\n"
	"    perflib-sysd --help\n"
	"\n"
	"DESCRIPTION\n"
	"    run registers the counter sets Processor, Processor Information, System,\n"
	"    Memory, Process, Network Interface, PhysicalDisk, LogicalDisk and Cgroup\n"
	"    (names, counter types and help as on Windows; the\n"
	"    manifest is built in), creates one instance per possible CPU plus the totals\n"
	"    (Processor: \"0\", \"1\", ..., \"_Total\"; Processor Information: \"0,0\",\n"
	"    \"0,1\", ..., \"0,_Total\", \"_Total\"), loads BPF programs that count into\n"
	"    them, and stays in the foreground publishing Memory from /proc/meminfo and\n"
	"    /proc/vmstat once a second. The BPF programs:\n"
	"      sched:sched_switch        idle, user and privileged time per CPU, context\n"
	"                                switches, CPU time of processes\n"
	"      perf cpu-clock sample     user/privileged split (--hz per CPU)\n"
	"      a BPF timer (--hz)        publishes the CPU counters (an idle CPU's idle\n"
	"                                stretch in progress included), the totals,\n"
	"                                System (Processor Queue Length from the run\n"
	"                                queues, System Up Time) and the Elapsed Time\n"
	"                                clock of the processes\n"
	"      raw_syscalls:sys_enter    System Calls/sec\n"
	"      irq:irq_handler_entry, irq_vectors:*_entry\n"
	"                                Interrupts/sec (devices, timer, IPIs)\n"
	"      sched_process_fork/exec/exit and a task iterator\n"
	"                                one Process instance per process (name = command,\n"
	"                                InstanceId = pid), created and deleted in the\n"
	"                                kernel, and Idle and _Total (ID Process 0);\n"
	"                                Processes and Threads; Handle Count\n"
	"                                (open fds), IO Read/Write Bytes/sec and\n"
	"                                Operations/sec (rchar, wchar, syscr, syscw) read\n"
	"                                from the task at switch-out; Elapsed Time\n"
	"      net_dev_xmit, netif_receive_skb\n"
	"                                Network Interface, one instance per device (made\n"
	"                                and deleted in BPF when rtnetlink reports a link)\n"
	"      block_rq_complete         PhysicalDisk (per disk) and LogicalDisk (per\n"
	"                                mounted block device; made and deleted in BPF\n"
	"                                when uevents or the mount table report a change;\n"
	"                                free space from statfs, polled once a second)\n"
	"      cgroup_mkdir/rmdir, page_fault_user\n"
	"                                Cgroup, one instance per cgroup v2 (name = path\n"
	"                                with '\\' for '/', InstanceId = cgroup id)\n"
	"    SIGTERM or SIGINT stops it: the programs are detached, every instance is\n"
	"    deleted and the counter sets are unregistered, so nothing stays pinned.\n"
	"    A run that finds leftovers of a killed one removes them first.\n"
	"\n"
	"    stop removes what a killed run left behind (instances, registrations). Stop a\n"
	"    running service with SIGTERM (systemctl stop perflib-sysd).\n"
	"\n"
	"    status lists the counter sets and whether they are registered; exit 0 when\n"
	"    all are, 3 when none is, 1 otherwise.\n"
	"\n"
	"    Read them as on Windows:\n"
	"        typeperf \"\\Processor(_Total)\\% Processor Time\" \"\\Process(*)\\% Processor "
	"Time\" \\\n"
	"                 \"\\Memory\\Available Bytes\" \"\\System\\Context Switches/sec\"\n"
	"\n"
	"OPTIONS\n"
	"    --hz N              samples per second and CPU that split user from privileged\n"
	"                        time, and publications per second of the CPU and System\n"
	"                        counters (default 100, 1-1000): values are at most 1/N s\n"
	"                        stale\n"
	"    --max-processes N   Process instances (slots), default 8192\n"
	"    --max-cgroups N     Cgroup instances (slots), default 4096\n"
	"    --mode MODE         file mode of the pins (octal), default 0644\n"
	"    --group GROUP       group of the pins (name or number)\n"
	"\n"
	"ENVIRONMENT\n"
	"    PERFLIB_ROOT        pin root, default " PERFLIB_DEFAULT_ROOT "\n"
	"\n"
	"FILES\n"
	"    perflib-sysd.service  the systemd unit (Type=simple; ExecStopPost runs stop)\n"
	"\n"
	"Needs root with CAP_BPF (maps, programs) and CAP_PERFMON (tracepoints, perf events,\n"
	"the task iterator). Exit: 0 ok, 1 error, 2 usage, 3 not registered (status).\n";

/* counter ids in the order the BPF program writes them (positions) */
static const ULONG ids_cpu[] = {0, 1, 2, 3, 8};
static const ULONG ids_sys[] = {0, 1, 2, 3, 4, 5, 6, 7};
static const ULONG ids_mem[] = {0, 1, 2, 3, 4, 5};
static const ULONG ids_ps[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const ULONG ids_net[] = {0, 1, 2, 3, 4, 5};
static const ULONG ids_pd[] = {0, 1, 2, 3, 4, 5, 6};
static const ULONG ids_ld[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
static const ULONG ids_cg[] = {0, 1, 2, 3};

static bool ids_match(const struct perflib_counterset_reg *r, const ULONG *ids, size_t n)
{
	size_t i;

	if (r->nr_counters != n)
		return false;
	for (i = 0; i < n; i++) {
		if (r->counters[i].id != ids[i])
			return false;
	}
	return true;
}

static int sd_open(struct sd *sd)
{
	size_t len = (size_t)(sd_manifest_end - sd_manifest), i, k;
	char path[64];
	int fd, err;

	fd = memfd_create("system.man", MFD_CLOEXEC);
	if (fd < 0 || write(fd, sd_manifest, len) != (ssize_t)len) {
		sd_err("cannot stage the built-in manifest: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err = manifest_load(path, &sd->man, stderr);
	close(fd);
	if (!err)
		err = regman_build(sd->man, &sd->rm);
	if (err)
		return err;
	for (k = 0; k < NR_SETS; k++) {
		for (i = 0; i < sd->rm.nr_sets; i++) {
			if (sd->rm.sets[i].name && !strcmp(sd->rm.sets[i].name, sd_set_names[k]))
				sd->reg[k] = &sd->rm.sets[i];
		}
		if (!sd->reg[k]) {
			sd_err("the manifest has no counter set \"%s\"", sd_set_names[k]);
			return -EINVAL;
		}
	}
#define SD_IDS_MATCH(set, ids) ids_match(sd->reg[set], ids, sizeof(ids) / sizeof(ids[0]))
	if (!SD_IDS_MATCH(SET_CPU, ids_cpu) || !SD_IDS_MATCH(SET_PI, ids_cpu) ||
	    !SD_IDS_MATCH(SET_SYS, ids_sys) || !SD_IDS_MATCH(SET_MEM, ids_mem) ||
	    !SD_IDS_MATCH(SET_PS, ids_ps) || !SD_IDS_MATCH(SET_NET, ids_net) ||
	    !SD_IDS_MATCH(SET_PD, ids_pd) || !SD_IDS_MATCH(SET_LD, ids_ld) ||
	    !SD_IDS_MATCH(SET_CG, ids_cg)) {
		sd_err("the manifest's counter ids are not the ones the BPF programs write");
		return -EINVAL;
	}
	return 0;
}

static void sd_close(struct sd *sd)
{
	regman_free(&sd->rm);
	manifest_free(sd->man);
}

static int cmd_status(void *ctx)
{
	struct sd *sd = ctx;
	int k, n = 0;

	for (k = 0; k < NR_SETS; k++) {
		bool r = sd_registered(sd, k);
		char g[37];

		n += r;
		printf("  %-22s %s  %s\n", sd_set_names[k],
		       perflib_guid_to_string(&sd->reg[k]->counterset_guid, g),
		       r ? "registered" : "not registered");
	}
	return n == NR_SETS ? 0 : n ? 1 : 3;
}

/* stop: what a killed run left behind */
static int cmd_stop(void *ctx)
{
	return sd_remove(ctx) ? 1 : 0;
}

static int set_mode(struct tool_parser *p, const char *v)
{
	return parse_mode(v, &((struct sd *)p->ctx)->opts.mode);
}

static int set_group(struct tool_parser *p, const char *v)
{
	return parse_group(v, &((struct sd *)p->ctx)->opts.gid);
}

/* every switch goes with every command, before or after it */
static const struct tool_opt switches[] = {
	TOOL_OPT_HELP("?|h|help"),
	TOOL_OPT_UINT("hz", struct sd, hz, 1, 1000),
	TOOL_OPT_UINT("max-processes", struct sd, max_ps, 64, 1u << 22),
	TOOL_OPT_UINT("max-cgroups", struct sd, max_cg, 64, 1u << 20),
	TOOL_OPT_CALL("mode", TOOL_VALUE, set_mode),
	TOOL_OPT_CALL("group", TOOL_VALUE, set_group),
	TOOL_OPT_END,
};

static const struct tool_cmd commands[] = {
	{"run", sd_run},
	{"stop", cmd_stop},
	{"status", cmd_status},
	{NULL, NULL},
};

static const struct tool_cli cli = {
	.name = "perflib-sysd",
	.usage = usage_text,
	.synopsis = "usage: perflib-sysd run [--hz N] [--max-processes N] [--max-cgroups N] "
		    "[--mode MODE]\n"
		    "                        [--group G]\n"
		    "       perflib-sysd stop | status | --help\n",
	.exit_usage = 2,
	.opts = switches,
	.cmds = commands,
};

int main(int argc, char **argv)
{
	struct sd sd = {.hz = 100,
			.max_ps = 8192,
			.max_cg = 4096,
			.opts = {.sz = sizeof(struct perflib_pin_opts),
				 .mode = 0644,
				 .uid = (uid_t)-1,
				 .gid = (gid_t)-1}};
	struct tool_parser p;
	int rc, n;

	rc = tool_parse(&p, &cli, &sd, argc, argv);
	if (rc != TOOL_CONTINUE)
		return rc;
	n = libbpf_num_possible_cpus();
	if (n <= 0 || n > 1024) {
		sd_err("cannot use the CPU count (%d)", n);
		return 1;
	}
	sd.nr_cpus = (unsigned int)n;
	if (sd_open(&sd)) {
		sd_close(&sd);
		return 1;
	}
	rc = p.cmd->run(&sd);
	sd_close(&sd);
	return rc;
}
