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
 */
#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/rtnetlink.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <perflib.h>
#include <perflib-linux.h>

#include "ctrtype.h"
#include "manifest.h"
#include "perflib_bpf_loader.h"
#include "regman.h"
#include "sysd.skel.h"

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
	"      irq:irq_handler_entry     Interrupts/sec\n"
	"      sched_process_fork/exec/exit and a task iterator\n"
	"                                one Process instance per process (name = command,\n"
	"                                InstanceId = pid), created and deleted in the\n"
	"                                kernel; Processes and Threads; Handle Count\n"
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
	"Needs root (CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN for the task iterator). Exit: 0 ok,\n"
	"1 error, 2 usage, 3 not registered (status).\n";

enum { SET_CPU, SET_PI, SET_SYS, SET_MEM, SET_PS, SET_NET, SET_PD, SET_LD, SET_CG, NR_SETS };
static const char *const set_names[NR_SETS] = {
	"Processor",	     "Processor Information", "System",	     "Memory", "Process",
	"Network Interface", "PhysicalDisk",	      "LogicalDisk", "Cgroup"};
/* counter ids in the order the BPF program writes them (positions) */
static const ULONG ids_cpu[] = {0, 1, 2, 3, 8};
static const ULONG ids_sys[] = {0, 1, 2, 3, 4, 5, 6, 7};
static const ULONG ids_mem[] = {0, 1, 2, 3, 4, 5};
static const ULONG ids_ps[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const ULONG ids_net[] = {0, 1, 2, 3, 4, 5};
static const ULONG ids_pd[] = {0, 1, 2, 3, 4, 5, 6};
static const ULONG ids_ld[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
static const ULONG ids_cg[] = {0, 1, 2, 3};
/* LogicalDisk positions the service writes (free space) */
enum { LD_FREE_PCT = 7, LD_FREE_BASE, LD_FREE_MB };
#define SD_MAX_MOUNTS 256
#define SD_MAX_DISKS 1024 /* pd_map's size */
/*
 * longest name the BPF programs create: those of size class 0 (layout.h), the class the
 * programs' maps (segs, lives) hold; the path sets are registered with it, so they
 * have that one class
 */
#define SD_NAME_MAX (PERFLIB_CLASS0_NAME - 1)

struct sd {
	struct manifest *man;
	struct regman rm;
	const struct perflib_counterset_reg *reg[NR_SETS];
	HANDLE prov;
	unsigned int nr_cpus, hz, max_ps, max_cg;
	struct perflib_pin_opts opts;
	/* LogicalDisk instances: device, slot, mount point now (slot of _Total in ld_total) */
	struct sd_mount {
		__u32 devt;
		int slot;
		char *path;
	} ld[SD_MAX_MOUNTS];
	int nr_ld, ld_total;
};

static void sd_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sd_err(const char *fmt, ...)
{
	va_list ap;

	fputs("perflib-sysd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

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
			if (sd->rm.sets[i].name && !strcmp(sd->rm.sets[i].name, set_names[k]))
				sd->reg[k] = &sd->rm.sets[i];
		}
		if (!sd->reg[k]) {
			sd_err("the manifest has no counter set \"%s\"", set_names[k]);
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

/* a started provider with every registered counter set of the manifest; 0 or a Win32 code */
static ULONG sd_provider(struct sd *sd)
{
	GUID provider = sd->reg[0]->provider_guid;
	ULONG st;
	int k;

	st = PerfStartProvider(&provider, NULL, &sd->prov);
	for (k = 0; !st && k < NR_SETS; k++) {
		const struct perflib_counterset_reg *r = sd->reg[k];
		size_t size =
			sizeof(PERF_COUNTERSET_INFO) + r->nr_counters * sizeof(PERF_COUNTER_INFO);
		PERF_COUNTERSET_INFO *tmpl = calloc(1, size);
		PERF_COUNTER_INFO *c = (PERF_COUNTER_INFO *)(tmpl + 1);
		unsigned int i;

		if (!tmpl) {
			st = ERROR_OUTOFMEMORY;
			break;
		}
		tmpl->CounterSetGuid = r->counterset_guid;
		tmpl->ProviderGuid = provider;
		tmpl->NumCounters = r->nr_counters;
		tmpl->InstanceType = r->instance_type;
		for (i = 0; i < r->nr_counters; i++) {
			c[i].CounterId = r->counters[i].id;
			c[i].Type = r->counters[i].type;
			c[i].Attrib = r->counters[i].attrib;
			c[i].Size = (r->counters[i].type & CTRTYPE_SIZE_MASK) == PERF_SIZE_LARGE
					    ? 8
					    : 4;
			c[i].DetailLevel = r->counters[i].detail_level;
			c[i].Scale = r->counters[i].scale;
		}
		st = PerfSetCounterSetInfo(sd->prov, tmpl, (ULONG)size);
		free(tmpl);
	}
	if (st && sd->prov) {
		PerfStopProvider(sd->prov);
		sd->prov = NULL;
	}
	return st;
}

static bool registered(const struct sd *sd, int k)
{
	char path[PATH_MAX], g[37];

	snprintf(path, sizeof(path), "%s/%s", perflib_pin_root(),
		 perflib_guid_to_string(&sd->reg[k]->counterset_guid, g));
	return access(path, F_OK) == 0;
}

/* delete every instance and unregister every counter set; 0 or -errno */
static int sd_remove(struct sd *sd)
{
	int k, n, err = 0;

	if (!sd->prov) {
		for (k = 0; k < NR_SETS && !registered(sd, k); k++)
			;
		if (k == NR_SETS)
			return 0;
		if (sd_provider(sd)) {
			sd_err("cannot open the counter sets to remove them");
			return -EIO;
		}
	}
	for (k = 0; k < NR_SETS; k++) {
		n = perflib_kernel_instances_delete(sd->prov, &sd->reg[k]->counterset_guid);
		if (n < 0 && n != -ENOENT)
			err = n;
	}
	PerfStopProvider(sd->prov);
	sd->prov = NULL;
	for (k = 0; k < NR_SETS; k++) {
		n = perflib_unregister_counterset(&sd->reg[k]->counterset_guid, true);
		if (n && n != -ENOENT) {
			sd_err("cannot unregister \"%s\": %s", set_names[k], strerror(-n));
			err = n;
		}
	}
	return err;
}

static int sd_register(struct sd *sd)
{
	struct perflib_pin_opts o;
	int k, err;

	for (k = 0; k < NR_SETS; k++) {
		o = sd->opts;
		o.name_max = 16; /* "0,_Total", a 15-character command or device name */
		if (k == SET_CPU || k == SET_PI)
			o.capacity = (sd->nr_cpus + 2 + 63) / 64 * 64;
		else if (k == SET_PS)
			o.capacity = sd->max_ps;
		else if (k == SET_CG)
			o.capacity = sd->max_cg;
		else if (k == SET_NET)
			o.capacity = 1024;
		else if (k == SET_LD)
			o.capacity = SD_MAX_MOUNTS + 1;
		else
			o.capacity = 64;
		if (k == SET_LD || k == SET_CG)
			o.name_max = SD_NAME_MAX + 1; /* paths */
		err = perflib_register_counterset(sd->reg[k], &o);
		if (err && err != -EEXIST) {
			sd_err("cannot register \"%s\": %s", set_names[k],
			       err == -EPERM ? "needs root (CAP_BPF)" : strerror(-err));
			return err;
		}
	}
	return sd_provider(sd) ? -EIO : 0;
}

/* @text as an instance name in @name (SD_NAME_MAX + 1 units): a longer path keeps its end,
 * as the BPF programs name it, and '/' is written '\\' (it separates parent and instance in a
 * counter path; Windows writes a mounted folder so). Its length in units, or -errno. */
static int inst_name(const char *text, WCHAR *name)
{
	WCHAR all[PATH_MAX];
	int n = perflib_utf8_to_utf16(text, all, PATH_MAX), from, i;

	if (n < 0)
		return n;
	n--; /* the NUL */
	from = n > SD_NAME_MAX ? n - SD_NAME_MAX : 0;
	if (from && all[from] >= 0xDC00 && all[from] <= 0xDFFF)
		from++; /* not half a surrogate pair */
	for (i = from; i <= n; i++)
		name[i - from] = all[i] == '/' ? '\\' : all[i];
	return n - from;
}

/* kernel-owned instance @text / @id of set @k; its slot or -errno */
static int kinst_quiet(struct sd *sd, int k, const char *text, ULONG id)
{
	WCHAR name[SD_NAME_MAX + 1];
	int n = inst_name(text, name);

	if (n < 0)
		return n;
	return perflib_kernel_instance_create(sd->prov, &sd->reg[k]->counterset_guid, name, id);
}

static int kinst(struct sd *sd, int k, const char *text, ULONG id)
{
	int idx = kinst_quiet(sd, k, text, id);

	if (idx < 0)
		sd_err("cannot create instance \"%s\" of \"%s\": %s", text, set_names[k],
		       strerror(-idx));
	return idx;
}

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

static int open_set(struct sd *sd, int k, struct perflib_bpf_counterset *cs)
{
	char g[37];
	int err = perflib_bpf_counterset_open(
		NULL, perflib_guid_to_string(&sd->reg[k]->counterset_guid, g), cs);

	if (err)
		sd_err("cannot open the pins of \"%s\": %s", set_names[k], strerror(-err));
	return err;
}

static int fill_instances(struct sd *sd, struct sysd_bpf *skel)
{
	bool one_node = true;
	char text[32];
	unsigned int cpu;
	int idx, node;

	for (cpu = 0; cpu < sd->nr_cpus; cpu++) {
		node = cpu_node(cpu);
		if (node > 0)
			one_node = false;
		snprintf(text, sizeof(text), "%u", cpu);
		idx = kinst(sd, SET_CPU, text, cpu);
		if (idx < 0)
			return idx;
		skel->rodata->cpu_slot[cpu] = (__u32)idx;
		snprintf(text, sizeof(text), "%d,%u", node < 0 ? 0 : node, cpu);
		idx = kinst(sd, SET_PI, text, cpu);
		if (idx < 0)
			return idx;
		skel->rodata->pi_slot[cpu] = (__u32)idx;
	}
	idx = kinst(sd, SET_CPU, "_Total", sd->nr_cpus);
	if (idx < 0)
		return idx;
	skel->rodata->cpu_total_slot = (__u32)idx;
	idx = kinst(sd, SET_PI, "_Total", sd->nr_cpus + 1);
	if (idx < 0)
		return idx;
	skel->rodata->pi_total_slot = (__u32)idx;
	/* a node total only where it equals _Total (one node); more nodes: left out */
	skel->rodata->pi_node_total_slot = 0xFFFFFFFF;
	if (one_node) {
		idx = kinst(sd, SET_PI, "0,_Total", sd->nr_cpus);
		if (idx < 0)
			return idx;
		skel->rodata->pi_node_total_slot = (__u32)idx;
	}
	idx = kinst(sd, SET_SYS, "", 0);
	if (idx < 0)
		return idx;
	skel->rodata->sys_slot = (__u32)idx;
	idx = kinst(sd, SET_PD, "_Total", 0);
	if (idx < 0)
		return idx;
	skel->rodata->pd_total_slot = (__u32)idx;
	idx = kinst(sd, SET_LD, "_Total", 0);
	if (idx < 0)
		return idx;
	skel->rodata->ld_total_slot = (__u32)idx;
	sd->ld_total = idx;
	return 0;
}

/* storage for @n instances of set @k, which BPF programs create (they cannot grow it) */
static int sd_reserve(struct sd *sd, int k, unsigned int n)
{
	int r = perflib_kernel_reserve(sd->prov, &sd->reg[k]->counterset_guid, n);

	if (r < 0)
		sd_err("cannot reserve %u instances of \"%s\": %s", n, set_names[k], strerror(-r));
	return r < 0 ? r : 0;
}

/* the first line of /sys file @path as an unsigned number (or "M:m" as a kernel dev_t) */
static int sys_read(const char *path, unsigned long *ret, bool devt)
{
	unsigned int ma, mi;
	char line[64];
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	if (ok && devt && sscanf(line, "%u:%u", &ma, &mi) == 2)
		*ret = (unsigned long)ma << 20 | mi;
	else if (ok && !devt)
		*ret = strtoul(line, NULL, 10);
	else
		return -EINVAL;
	return 0;
}

/* @name's instance (@k, @id), handed to the BPF programs under @key in @map; -EEXIST (the
 * programs made it first) is not an error */
static int kinst_map(struct sd *sd, int k, const char *name, ULONG id, struct bpf_map *map,
		     const void *key)
{
	int idx = kinst_quiet(sd, k, name, id);
	__u32 v;

	if (idx == -EEXIST)
		return 0;
	if (idx < 0) {
		sd_err("cannot create instance \"%s\" of \"%s\": %s", name, set_names[k],
		       strerror(-idx));
		return idx;
	}
	v = (__u32)idx;
	if (bpf_map__update_elem(map, key, bpf_map__key_size(map), &v, sizeof(v), BPF_NOEXIST))
		return -errno;
	return idx;
}

/* create (@del 0) or delete the Network Interface instance of @ifindex, in BPF (sd_net_ctl) */
static int net_ctl(struct sysd_bpf *skel, const char *name, __u32 ifindex, int del)
{
	struct {
		char name[16];
		__u32 ifindex, del;
		__s64 ret;
	} c;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof(c));

	memset(&c, 0, sizeof(c));
	if (name)
		strncpy(c.name, name, sizeof(c.name) - 1);
	c.ifindex = ifindex;
	c.del = (__u32)del;
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sd_net_ctl), &opts))
		return -errno;
	return (int)c.ret;
}

/* an rtnetlink socket for link messages; -1 outside the initial network namespace */
static int net_open(void)
{
	struct sockaddr_nl a = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK};
	struct stat st;
	int fd;

	if (stat("/proc/self/ns/net", &st) == 0 && st.st_ino != 0xEFFFFFF9U) {
		sd_err("not in the initial network namespace: no Network Interface instances");
		return -1;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		sd_err("cannot follow network devices (rtnetlink): %s", strerror(errno));
	return fd;
}

/* the link messages waiting on @fd: a device came (created) or went (deleted) */
static void net_events(struct sysd_bpf *skel, int fd)
{
	char buf[16384], name[IFNAMSIZ];
	struct nlmsghdr *h;
	struct ifinfomsg *ifi;
	struct rtattr *a;
	ssize_t n;
	int len;

	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type != RTM_NEWLINK && h->nlmsg_type != RTM_DELLINK)
				continue;
			ifi = NLMSG_DATA(h);
			if (h->nlmsg_type == RTM_DELLINK) {
				net_ctl(skel, NULL, (__u32)ifi->ifi_index, 1);
				continue;
			}
			name[0] = 0;
			len = (int)IFLA_PAYLOAD(h);
			for (a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
				if (a->rta_type == IFLA_IFNAME)
					snprintf(name, sizeof(name), "%s", (char *)RTA_DATA(a));
			}
			if (name[0])
				net_ctl(skel, name, (__u32)ifi->ifi_index, 0); /* -EEXIST: known */
		}
	}
}

/* a socket for the kernel's uevents (block devices coming, going, changing size); -1 when
 * there is none (disks are then those of the start) */
static int uevent_open(void)
{
	struct sockaddr_nl a = {.nl_family = AF_NETLINK, .nl_groups = 1};
	int fd =
		socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		sd_err("cannot follow block devices (uevents): %s", strerror(errno));
	return fd;
}

/* the uevents waiting on @fd: true when one was about a block device (or some were lost) */
static bool uevent_block(int fd)
{
	char buf[8192];
	bool block = false;
	ssize_t n, i;

	while ((n = recv(fd, buf, sizeof(buf) - 1, 0)) != 0) {
		if (n < 0) {
			if (errno == ENOBUFS)
				block = true; /* overrun: look again */
			if (errno != EINTR && errno != ENOBUFS)
				break;
			continue;
		}
		buf[n] = 0;
		/* "action@devpath\0KEY=value\0..." */
		for (i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1) {
			if (!strcmp(buf + i, "SUBSYSTEM=block"))
				block = true;
		}
	}
	return block;
}

/* the network devices that exist now (after net_open, so that none is missed) */
static int add_netdevs(struct sysd_bpf *skel)
{
	DIR *d = opendir("/sys/class/net");
	char path[PATH_MAX];
	struct dirent *de;
	unsigned long ifindex;
	int r, err = 0;

	while (d && !err && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/net/%s/ifindex", de->d_name);
		if (sys_read(path, &ifindex, false))
			continue; /* gone meanwhile */
		r = net_ctl(skel, de->d_name, (__u32)ifindex, 0);
		if (r < 0 && r != -EEXIST) {
			sd_err("cannot create instance \"%s\" of \"Network Interface\": %s",
			       de->d_name, strerror(-r));
			err = r;
		}
	}
	if (d)
		closedir(d);
	return err;
}

/* create (@del 0) or delete the PhysicalDisk (@logical 0) or LogicalDisk instance of device
 * @devt, in BPF (sd_disk_ctl); the slot, 0, or -errno */
static int disk_ctl(struct sysd_bpf *skel, const char *text, __u32 devt, int logical, int del)
{
	struct {
		WCHAR name[64];
		__u32 len, id, devt, logical, del, pad;
		__s64 ret;
	} c;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof(c));
	int n = 0;

	memset(&c, 0, sizeof(c));
	if (text && (n = inst_name(text, c.name)) < 0)
		return n;
	c.len = (__u32)n;
	c.id = devt; /* unique per device; the name may repeat (a disk gone and back) */
	c.devt = devt;
	c.logical = (__u32)logical;
	c.del = (__u32)del;
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sd_disk_ctl), &opts))
		return -errno;
	return (int)c.ret;
}

/* the devices of @map (pd_map, ld_map) in @keys (at most @max); how many */
static int map_keys(struct bpf_map *map, __u32 *keys, int max)
{
	__u32 k, *prev = NULL;
	int n = 0;

	while (n < max && !bpf_map__get_next_key(map, prev, &k, sizeof(k))) {
		keys[n] = k;
		prev = &keys[n++];
	}
	return n;
}

static bool has_key(const __u32 *keys, int n, __u32 k)
{
	while (n-- > 0) {
		if (keys[n] == k)
			return true;
	}
	return false;
}

/* PhysicalDisk: one instance per block device with a size (/sys/block), made for the new
 * ones, deleted for those gone or emptied (a loop device detached); at start and at every
 * block uevent */
static void sync_disks(struct sysd_bpf *skel)
{
	__u32 now[SD_MAX_DISKS], had[SD_MAX_DISKS];
	DIR *d = opendir("/sys/block");
	char path[PATH_MAX];
	struct dirent *de;
	unsigned long size, devt;
	int n = 0, nh, i, r;

	while (d && n < SD_MAX_DISKS && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/size", de->d_name);
		if (sys_read(path, &size, false) || !size)
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/dev", de->d_name);
		if (sys_read(path, &devt, true))
			continue;
		now[n++] = (__u32)devt;
		r = disk_ctl(skel, de->d_name, (__u32)devt, 0, 0);
		if (r < 0 && r != -EEXIST)
			sd_err("cannot create instance \"%s\" of \"PhysicalDisk\": %s", de->d_name,
			       strerror(-r));
	}
	if (d)
		closedir(d);
	nh = map_keys(skel->maps.pd_map, had, SD_MAX_DISKS);
	for (i = 0; i < nh; i++) {
		if (!has_key(now, n, had[i]))
			disk_ctl(skel, NULL, had[i], 0, 1);
	}
}

/* one field of a /proc/self/mountinfo line: mount point (5), device (3), or after " - " the
 * file-system type (1) and source (2); in @buf */
static const char *mi_field(const char *line, int n, bool after, char *buf, size_t size)
{
	const char *p = line, *e;
	size_t len;
	int i;

	if (after) {
		p = strstr(line, " - ");
		if (!p)
			return NULL;
		p += 3;
		n--;
	} else {
		n--;
	}
	for (i = 0; i < n && p; i++) {
		p = strchr(p, ' ');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		return NULL;
	e = strpbrk(p, " \n");
	len = e ? (size_t)(e - p) : strlen(p);
	if (len >= size)
		return NULL;
	memcpy(buf, p, len);
	buf[len] = 0;
	return buf;
}

/* LogicalDisk: one instance per mounted block device (named by its first mount point), made
 * for the devices mounted since, deleted for those no longer mounted; at start and whenever
 * mountinfo says the mount table changed. A device that stays mounted keeps its instance and
 * name; its free space is read where it is mounted now. */
static void sync_mounts(struct sd *sd, struct sysd_bpf *skel)
{
	char line[4096], mp[PATH_MAX], dev[32], src[PATH_MAX];
	__u32 now[SD_MAX_MOUNTS], key;
	char *where[SD_MAX_MOUNTS];
	unsigned int ma, mi;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int n = 0, i, k, r;

	while (f && n < SD_MAX_MOUNTS && fgets(line, sizeof(line), f)) {
		if (!mi_field(line, 5, false, mp, sizeof(mp)) ||
		    !mi_field(line, 3, false, dev, sizeof(dev)) ||
		    !mi_field(line, 2, true, src, sizeof(src)) || strncmp(src, "/dev/", 5) ||
		    sscanf(dev, "%u:%u", &ma, &mi) != 2 || !ma)
			continue;
		key = ma << 20 | mi;
		if (has_key(now, n, key))
			continue; /* mounted twice: the first mount point names it */
		now[n] = key;
		where[n++] = strdup(mp);
	}
	if (f)
		fclose(f);
	/* gone */
	for (i = 0; i < sd->nr_ld;) {
		if (has_key(now, n, sd->ld[i].devt)) {
			i++;
			continue;
		}
		disk_ctl(skel, NULL, sd->ld[i].devt, 1, 1);
		free(sd->ld[i].path);
		sd->ld[i] = sd->ld[--sd->nr_ld];
	}
	/* new, and where the others are mounted now */
	for (k = 0; k < n; k++) {
		for (i = 0; i < sd->nr_ld && sd->ld[i].devt != now[k]; i++)
			;
		if (i < sd->nr_ld) {
			free(sd->ld[i].path);
			sd->ld[i].path = where[k];
			continue;
		}
		r = where[k] ? disk_ctl(skel, where[k], now[k], 1, 0) : -ENOMEM;
		if (r < 0) {
			if (r != -EEXIST)
				sd_err("cannot create instance \"%s\" of \"LogicalDisk\": %s",
				       where[k] ? where[k] : "?", strerror(-r));
			free(where[k]);
			continue;
		}
		sd->ld[sd->nr_ld++] = (struct sd_mount){now[k], r, where[k]};
	}
}

/* the cgroup2 mount point, in @buf; NULL when there is none */
static const char *cgroup2_root(char *buf, size_t size)
{
	char line[4096], fs[32];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	const char *ret = NULL;

	while (f && !ret && fgets(line, sizeof(line), f)) {
		if (mi_field(line, 1, true, fs, sizeof(fs)) && !strcmp(fs, "cgroup2"))
			ret = mi_field(line, 5, false, buf, size);
	}
	if (f)
		fclose(f);
	return ret;
}

/* the cgroups that existed at start (the programs add the ones made since) */
static struct sd *walk_sd;
static struct sysd_bpf *walk_skel;
static size_t walk_root_len;
static int walk_err;

static int cg_visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *rel = path + walk_root_len;
	__u64 key = st->st_ino;
	int idx;

	(void)ftw;
	if (type != FTW_D)
		return 0;
	idx = kinst_map(walk_sd, SET_CG, *rel ? rel : "/", (ULONG)key, walk_skel->maps.cg_map,
			&key);
	if (idx < 0 && idx != -ENOSPC) {
		walk_err = idx;
		return 1;
	}
	return 0;
}

static int add_cgroups(struct sd *sd, struct sysd_bpf *skel)
{
	char root[PATH_MAX];

	if (!cgroup2_root(root, sizeof(root))) {
		sd_err("no cgroup2 mount: no Cgroup instances");
		return 0;
	}
	walk_sd = sd;
	walk_skel = skel;
	walk_root_len = strlen(root);
	walk_err = 0;
	nftw(root, cg_visit, 16, FTW_PHYS | FTW_MOUNT);
	return walk_err;
}

/* LogicalDisk free space: statfs of each mount point, stored through sd_ld_set */
static void ld_set(struct sysd_bpf *skel, int slot, __u32 pos, __u32 value)
{
	struct {
		__u32 slot, pos, value;
		__s32 ret;
	} c = {(__u32)slot, pos, value, 0};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof(c));

	bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sd_ld_set), &opts);
}

static void publish_free_space(struct sd *sd, struct sysd_bpf *skel)
{
	uint64_t free_all = 0, size_all = 0, fr, sz;
	struct statvfs v;
	int i;

	for (i = 0; i < sd->nr_ld; i++) {
		if (statvfs(sd->ld[i].path, &v))
			continue;
		fr = (uint64_t)v.f_bavail * v.f_frsize >> 20;
		sz = (uint64_t)v.f_blocks * v.f_frsize >> 20;
		free_all += fr;
		size_all += sz;
		ld_set(skel, sd->ld[i].slot, LD_FREE_PCT, (__u32)fr);
		ld_set(skel, sd->ld[i].slot, LD_FREE_BASE, (__u32)sz);
		ld_set(skel, sd->ld[i].slot, LD_FREE_MB, (__u32)fr);
	}
	ld_set(skel, sd->ld_total, LD_FREE_PCT, (__u32)free_all);
	ld_set(skel, sd->ld_total, LD_FREE_BASE, (__u32)size_all);
	ld_set(skel, sd->ld_total, LD_FREE_MB, (__u32)free_all);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the per-CPU cpu-clock sample, @hz times a second */
static int attach_samples(struct sd *sd, struct sysd_bpf *skel, struct bpf_link **links)
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
		links[cpu] = bpf_program__attach_perf_event(skel->progs.sd_sample, fd);
		if (!links[cpu]) {
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

/* one field of /proc/meminfo (kB -> bytes) or /proc/vmstat; 0 when missing */
static uint64_t proc_field(const char *file, const char *name, bool kb)
{
	size_t len = strlen(name);
	char line[256];
	uint64_t v = 0;
	FILE *f = fopen(file, "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, len) && (line[len] == ':' || line[len] == ' ')) {
			v = strtoull(line + len + 1, NULL, 10);
			break;
		}
	}
	if (f)
		fclose(f);
	return kb ? v * 1024 : v;
}

/* Memory: no BPF program can reach the kernel's memory statistics here (docs) */
static void publish_memory(struct sd *sd, PPERF_COUNTERSET_INSTANCE mem)
{
	const GUID *g = &sd->reg[SET_MEM]->counterset_guid;
	const char *mi = "/proc/meminfo", *vm = "/proc/vmstat";

	PerfSetULongLongCounterValue(sd->prov, mem, 0, proc_field(mi, "MemAvailable", true));
	PerfSetULongLongCounterValue(sd->prov, mem, 1, proc_field(mi, "Committed_AS", true));
	PerfSetULongLongCounterValue(sd->prov, mem, 2, proc_field(mi, "CommitLimit", true));
	PerfSetULongLongCounterValue(
		sd->prov, mem, 3, proc_field(mi, "Cached", true) + proc_field(mi, "Buffers", true));
	PerfSetULongCounterValue(sd->prov, mem, 4, (ULONG)proc_field(vm, "pgfault", false));
	PerfSetULongCounterValue(
		sd->prov, mem, 5,
		(ULONG)(proc_field(vm, "pswpin", false) + proc_field(vm, "pswpout", false)));
	(void)g;
}

static bool same_geometry(const struct perflib_bpf_geometry *a,
			  const struct perflib_bpf_geometry *b)
{
	return a->slot_size == b->slot_size && a->capacity == b->capacity &&
	       a->nr_counters == b->nr_counters && a->name_max == b->name_max &&
	       a->name_offset == b->name_offset && a->instance_type == b->instance_type;
}

static int cmd_run(struct sd *sd)
{
	struct perflib_bpf_counterset cs[NR_SETS];
	struct bpf_link **links = NULL;
	PPERF_COUNTERSET_INSTANCE mem;
	struct sysd_bpf *skel = NULL;
	struct signalfd_siginfo si;
	struct pollfd pf[4];
	int netfd = -1, sigfd = -1, ufd = -1, mfd = -1;
	uint64_t next;
	sigset_t sigs;
	int k, sig = 0, err, n;

	memset(cs, 0, sizeof(cs));
	for (k = 0; k < NR_SETS; k++)
		cs[k].info_fd = cs[k].data_fd = cs[k].index_fd = cs[k].live_fd = -1;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	/* leftovers of a killed run */
	err = sd_remove(sd);
	if (!err)
		err = sd_register(sd);
	if (err)
		goto out;
	for (k = 0; k < NR_SETS && !err; k++)
		err = open_set(sd, k, &cs[k]);
	if (err)
		goto out;
	if (!same_geometry(&cs[SET_CPU].geo, &cs[SET_PI].geo)) {
		sd_err("Processor and Processor Information must have the same geometry");
		err = -EINVAL;
		goto out;
	}
	skel = sysd_bpf__open();
	if (!skel) {
		err = -errno;
		goto out;
	}
	skel->rodata->geo_cpu = cs[SET_CPU].geo;
	skel->rodata->geo_sys = cs[SET_SYS].geo;
	skel->rodata->geo_ps = cs[SET_PS].geo;
	skel->rodata->geo_net = cs[SET_NET].geo;
	skel->rodata->geo_pd = cs[SET_PD].geo;
	skel->rodata->geo_ld = cs[SET_LD].geo;
	skel->rodata->geo_cg = cs[SET_CG].geo;
	skel->rodata->nr_cpus = sd->nr_cpus;
	skel->rodata->refresh_ns = 1000000000ull / sd->hz;
	err = perflib_bpf_counterset_guid(&cs[SET_PS], (__u8 *)skel->rodata->ps_guid);
	if (!err)
		err = perflib_bpf_counterset_guid(&cs[SET_NET], (__u8 *)skel->rodata->net_guid);
	if (!err)
		err = perflib_bpf_counterset_guid(&cs[SET_CG], (__u8 *)skel->rodata->cg_guid);
	if (!err)
		err = perflib_bpf_counterset_guid(&cs[SET_PD], (__u8 *)skel->rodata->pd_guid);
	if (!err)
		err = perflib_bpf_counterset_guid(&cs[SET_LD], (__u8 *)skel->rodata->ld_guid);
	if (!err)
		err = fill_instances(sd, skel);
	/* the Process set's programs create instances: storage for max_ps of them, now */
	if (!err) {
		err = perflib_kernel_reserve(sd->prov, &sd->reg[SET_PS]->counterset_guid,
					     sd->max_ps);
		if (err > 0)
			err = 0;
		else if (err < 0)
			sd_err("cannot reserve %u processes: %s", sd->max_ps, strerror(-err));
	}
	/* and those of the Network Interface and Cgroup sets */
	if (!err)
		err = sd_reserve(sd, SET_NET, cs[SET_NET].geo.capacity);
	if (!err)
		err = sd_reserve(sd, SET_CG, sd->max_cg);
	if (!err)
		err = sd_reserve(sd, SET_PD, cs[SET_PD].geo.capacity);
	if (!err)
		err = sd_reserve(sd, SET_LD, cs[SET_LD].geo.capacity);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.ps_map, cs[SET_PS].geo.capacity);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.cg_map, cs[SET_CG].geo.capacity);
	if (!err)
		err = perflib_bpf_counterset_reuse(&cs[SET_CPU], skel->maps.cpu_slots, NULL);
	if (!err)
		err = perflib_bpf_counterset_reuse(&cs[SET_PI], skel->maps.pi_slots, NULL);
	if (!err)
		err = perflib_bpf_counterset_reuse(&cs[SET_SYS], skel->maps.sys_slots, NULL);
	if (!err)
		err = perflib_bpf_counterset_reuse(&cs[SET_PS], skel->maps.ps_slots,
						   skel->maps.ps_idx);
	if (!err)
		err = perflib_bpf_counterset_reuse_live(&cs[SET_PS], skel->maps.ps_live);
	if (!err)
		err = perflib_bpf_counterset_reuse(&cs[SET_NET], skel->maps.net_slots,
						   skel->maps.net_idx);
	if (!err)
		err = perflib_bpf_counterset_reuse(&cs[SET_PD], skel->maps.pd_slots,
						   skel->maps.pd_idx);
	if (!err)
		err = perflib_bpf_counterset_reuse_live(&cs[SET_PD], skel->maps.pd_live);
	if (!err)
		err = perflib_bpf_counterset_reuse(&cs[SET_LD], skel->maps.ld_slots,
						   skel->maps.ld_idx);
	if (!err)
		err = perflib_bpf_counterset_reuse_live(&cs[SET_LD], skel->maps.ld_live);
	if (!err)
		err = perflib_bpf_counterset_reuse(&cs[SET_CG], skel->maps.cg_slots,
						   skel->maps.cg_idx);
	if (!err)
		err = perflib_bpf_counterset_reuse_live(&cs[SET_NET], skel->maps.net_live);
	if (!err)
		err = perflib_bpf_counterset_reuse_live(&cs[SET_CG], skel->maps.cg_live);
	if (!err)
		err = sysd_bpf__load(skel);
	if (err) {
		sd_err("cannot load the BPF programs: %s", strerror(-err));
		goto out;
	}
	/* event programs first, then the iterator for what existed before them */
	err = sysd_bpf__attach(skel);
	skel->bss->attach_ns = mono_ns();
	links = calloc(sd->nr_cpus, sizeof(*links));
	if (!err && !links)
		err = -ENOMEM;
	if (!err)
		err = attach_samples(sd, skel, links);
	if (!err)
		err = run_iterator(skel);
	if (!err)
		err = start_refresh(skel);
	netfd = net_open();
	if (!err && netfd >= 0)
		err = add_netdevs(skel);
	/* disks and mounts now, and whenever they change (uevents, mountinfo) */
	ufd = uevent_open();
	mfd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (!err) {
		sync_disks(skel);
		sync_mounts(sd, skel);
	}
	if (!err)
		err = add_cgroups(sd, skel);
	if (err) {
		sd_err("cannot attach the BPF programs: %s", strerror(-err));
		goto out;
	}
	skel->bss->iter_done = 1;
	mem = PerfCreateInstance(sd->prov, &sd->reg[SET_MEM]->counterset_guid, u"", 0);
	if (!mem) {
		sd_err("cannot create the Memory instance (error %u)", GetLastError());
		err = -EIO;
		goto out;
	}
	printf("perflib-sysd: running: %u CPUs, %lld processes, %u samples/s; SIGTERM stops\n",
	       sd->nr_cpus, (long long)skel->bss->nr_processes, sd->hz);
	fflush(stdout);
	sigfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sigfd < 0) {
		err = -errno;
		goto out;
	}
	pf[0] = (struct pollfd){.fd = sigfd, .events = POLLIN};
	pf[1] = (struct pollfd){.fd = netfd, .events = POLLIN};
	pf[2] = (struct pollfd){.fd = ufd, .events = POLLIN};
	pf[3] = (struct pollfd){.fd = mfd, .events = POLLPRI}; /* the mount table changed */
	next = 0;
	for (;;) {
		if (mono_ns() >= next) {
			publish_memory(sd, mem);
			publish_free_space(sd, skel);
			next = mono_ns() + 1000000000ull;
		}
		if (poll(pf, 4, (int)((next - mono_ns()) / 1000000) + 1) < 0 && errno != EINTR)
			break;
		if (pf[1].revents & POLLIN)
			net_events(skel, netfd);
		if ((pf[2].revents & POLLIN) && uevent_block(ufd))
			sync_disks(skel);
		if (pf[3].revents & (POLLPRI | POLLERR))
			sync_mounts(sd, skel);
		if ((pf[0].revents & POLLIN) && read(sigfd, &si, sizeof(si)) == sizeof(si)) {
			sig = (int)si.ssi_signo;
			break;
		}
	}
	printf("perflib-sysd: stopping (signal %d)\n", sig);
out:
	if (netfd >= 0)
		close(netfd);
	if (ufd >= 0)
		close(ufd);
	if (mfd >= 0)
		close(mfd);
	if (sigfd >= 0)
		close(sigfd);
	if (links) {
		for (n = 0; n < (int)sd->nr_cpus; n++)
			bpf_link__destroy(links[n]);
		free(links);
	}
	sysd_bpf__destroy(skel);
	for (k = 0; k < NR_SETS; k++)
		perflib_bpf_counterset_close(&cs[k]);
	while (sd->nr_ld > 0)
		free(sd->ld[--sd->nr_ld].path);
	n = sd_remove(sd);
	if (!err && !n)
		printf("perflib-sysd: stopped, nothing left registered\n");
	return err || n ? 1 : 0;
}

static int cmd_status(struct sd *sd)
{
	int k, n = 0;

	for (k = 0; k < NR_SETS; k++) {
		bool r = registered(sd, k);
		char g[37];

		n += r;
		printf("  %-22s %s  %s\n", set_names[k],
		       perflib_guid_to_string(&sd->reg[k]->counterset_guid, g),
		       r ? "registered" : "not registered");
	}
	return n == NR_SETS ? 0 : n ? 1 : 3;
}

static int parse_uint(const char *s, unsigned int lo, unsigned int hi, unsigned int *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v < lo || v > hi)
		return -EINVAL;
	*ret = (unsigned int)v;
	return 0;
}

int main(int argc, char **argv)
{
	struct sd sd = {.hz = 100,
			.max_ps = 8192,
			.max_cg = 4096,
			.opts = {.sz = sizeof(struct perflib_pin_opts),
				 .mode = 0644,
				 .uid = (uid_t)-1,
				 .gid = (gid_t)-1}};
	const char *cmd = NULL, *v;
	int i, rc, n;

	for (i = 1; i < argc; i++) {
		if (win_switch(argv[i], "help", &v) || win_switch(argv[i], "h", &v) ||
		    win_switch(argv[i], "?", &v)) {
			fputs(usage_text, stdout);
			return 0;
		} else if (win_switch(argv[i], "hz", &v)) {
			v = v ? v : (i + 1 < argc ? argv[++i] : NULL);
			if (!v || parse_uint(v, 1, 1000, &sd.hz))
				goto usage;
		} else if (win_switch(argv[i], "max-processes", &v)) {
			v = v ? v : (i + 1 < argc ? argv[++i] : NULL);
			if (!v || parse_uint(v, 64, 1u << 22, &sd.max_ps))
				goto usage;
		} else if (win_switch(argv[i], "max-cgroups", &v)) {
			v = v ? v : (i + 1 < argc ? argv[++i] : NULL);
			if (!v || parse_uint(v, 64, 1u << 20, &sd.max_cg))
				goto usage;
		} else if (win_switch(argv[i], "mode", &v)) {
			v = v ? v : (i + 1 < argc ? argv[++i] : NULL);
			if (!v || parse_mode(v, &sd.opts.mode))
				goto usage;
		} else if (win_switch(argv[i], "group", &v)) {
			v = v ? v : (i + 1 < argc ? argv[++i] : NULL);
			if (!v || parse_group(v, &sd.opts.gid))
				goto usage;
		} else if (!cmd && argv[i][0] != '-') {
			cmd = argv[i];
		} else {
			goto usage;
		}
	}
	if (!cmd || (strcmp(cmd, "run") && strcmp(cmd, "stop") && strcmp(cmd, "status")))
		goto usage;
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
	if (!strcmp(cmd, "run"))
		rc = cmd_run(&sd);
	else if (!strcmp(cmd, "stop"))
		rc = sd_remove(&sd) ? 1 : 0;
	else
		rc = cmd_status(&sd);
	sd_close(&sd);
	return rc;
usage:
	fputs("usage: perflib-sysd run [--hz N] [--max-processes N] [--max-cgroups N] [--mode "
	      "MODE]\n"
	      "                        [--group G]\n"
	      "       perflib-sysd stop | status | --help\n",
	      stderr);
	return 2;
}
