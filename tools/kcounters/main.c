// SPDX-License-Identifier: MIT
/*
 * kcounters - a kernel counter provider: BPF programs on scheduler, system-call and
 * page-fault tracepoints (kcounters.bpf.c) count into the "Kernel CPU" counter set
 * (kcounters.man, compiled in), one instance per CPU. `load` registers the counter set,
 * creates the instances and hands them to the kernel, loads the programs and pins their
 * links beside the counter set's maps, then exits: the counters keep running without a
 * daemon. `unload` removes all of it. See usage_text.
 *
 * Only public API: the Windows provider and consumer functions, perflib-linux.h's
 * kernel-owned instances and the loader functions of perflib_bpf_loader.h.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <perflib.h>
#include <perflib-linux.h>

#include "manifest.h"
#include "perflib_bpf_loader.h" /* before the skeleton: struct perflib_bpf_geometry */
#include "kcounters.skel.h"
#include "regman.h"
#include "tool.h"

/* the manifest, embedded at build time (the Makefile makes main.o depend on it) */
__asm__(".section .rodata\n"
	".global kc_manifest\n"
	".hidden kc_manifest\n"
	"kc_manifest:\n"
	".incbin \"tools/kcounters/kcounters.man\"\n"
	".global kc_manifest_end\n"
	".hidden kc_manifest_end\n"
	"kc_manifest_end:\n"
	".byte 0\n"
	".previous\n");
extern const char kc_manifest[], kc_manifest_end[];

static const char usage_text[] =
	"NAME\n"
	"    kcounters - kernel counters in a perflib counter set, counted by BPF programs\n"
	"\n"
	"SYNOPSIS\n"
	"    kcounters load [--manifest FILE] [--mode MODE] [--group GROUP]\n"
	"    kcounters unload [--force]\n"
	"    kcounters status\n"
	"    kcounters --help\n"
	"\n"
	"DESCRIPTION\n"
	"    load registers the \"Kernel CPU\" counter set of the built-in manifest\n"
	"    (kcounters.man), creates one instance per possible CPU (\"0\", \"1\", ...;\n"
	"    InstanceId = CPU number), hands them to the kernel, and attaches BPF programs\n"
	"    to the tracepoints sched:sched_switch, raw_syscalls:sys_enter and\n"
	"    exceptions:page_fault_user/page_fault_kernel, which count into the instance\n"
	"    of the CPU they run on. The program links are pinned under\n"
	"    $PERFLIB_ROOT/<counter-set GUID>/link_<tracepoint>, so the counters keep\n"
	"    running after kcounters exits. A tracepoint this kernel lacks is skipped and\n"
	"    its counter stays 0. Loading twice is a no-op.\n"
	"\n"
	"    unload detaches the programs, deletes the instances and unregisters the\n"
	"    counter set: nothing stays pinned. It refuses (exit 1) while processes\n"
	"    provide other instances into the counter set, unless --force.\n"
	"\n"
	"    status prints the pins and the counters of each CPU; exit 0 when loaded, 3\n"
	"    when not.\n"
	"\n"
	"    Read the counters with typeperf (rates per second):\n"
	"        typeperf \"\\Kernel CPU(*)\\Context Switches/sec\"\n"
	"\n"
	"OPTIONS\n"
	"    --manifest FILE  register from FILE instead of the built-in manifest (it must\n"
	"                     describe the same counter ids 1-4)\n"
	"    --mode MODE      file mode of the pins (octal), default 0644\n"
	"    --group GROUP    group of the pins (name or number)\n"
	"    --force          unload even while other providers have instances\n"
	"\n"
	"ENVIRONMENT\n"
	"    PERFLIB_ROOT     pin root, default " PERFLIB_DEFAULT_ROOT "\n"
	"\n"
	"Needs root (CAP_BPF, CAP_PERFMON and the pins' permissions). Exit: 0 ok, 1 error,\n"
	"2 usage, 3 not loaded (status).\n";

/* the counters, by manifest id, and the tracepoints that feed them */
struct kc_prog {
	uint32_t id;	  /* counter id in kcounters.man */
	const char *tp;	  /* tracepoint (tp_btf name) */
	const char *prog; /* program in kcounters.bpf.c */
	const char *pin;  /* link pin in the counter set's directory */
};

static const struct kc_prog progs[] = {
	{1, "sched_switch", "kc_sched_switch", "link_sched_switch"},
	{2, "sys_enter", "kc_sys_enter", "link_sys_enter"},
	{3, "page_fault_user", "kc_page_fault_user", "link_page_fault_user"},
	{4, "page_fault_kernel", "kc_page_fault_kernel", "link_page_fault_kernel"},
};
#define NR_PROGS (sizeof(progs) / sizeof(progs[0]))

struct kc {
	/* the command line */
	const char *manifest;	     /* --manifest, NULL: the built-in one */
	struct perflib_pin_opts pin; /* --mode, --group */
	bool force;		     /* --force */
	/* the counter set, from kc_open() */
	struct manifest *man;
	struct regman rm;
	const struct perflib_counterset_reg *reg; /* the one counter set */
	int pos[NR_PROGS];			  /* template position of each progs[] counter */
	char dir[PATH_MAX];			  /* <root>/<guid> */
};

static void kc_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void kc_err(const char *fmt, ...)
{
	va_list ap;

	fputs("kcounters: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- the manifest ----------------------------------------------------------------------- */

/* load kc->manifest, or the built-in manifest (through a memfd: the parser reads files) */
static int kc_open(struct kc *kc)
{
	const char *path = kc->manifest;
	char memfd_path[64], g[37];
	size_t i, p;
	int fd = -1, err;

	if (!path) {
		size_t len = (size_t)(kc_manifest_end - kc_manifest);

		fd = memfd_create("kcounters.man", MFD_CLOEXEC);
		if (fd < 0 || write(fd, kc_manifest, len) != (ssize_t)len) {
			kc_err("cannot stage the built-in manifest: %s", strerror(errno));
			if (fd >= 0)
				close(fd);
			return -EIO;
		}
		snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", fd);
		path = memfd_path;
	}
	err = manifest_load(path, &kc->man, stderr);
	if (fd >= 0)
		close(fd);
	if (err)
		return err;
	err = regman_build(kc->man, &kc->rm);
	if (err)
		return err;
	if (kc->rm.nr_sets != 1) {
		kc_err("the manifest must hold exactly one counter set (it has %zu)",
		       kc->rm.nr_sets);
		return -EINVAL;
	}
	kc->reg = &kc->rm.sets[0];
	for (p = 0; p < NR_PROGS; p++) {
		kc->pos[p] = -1;
		for (i = 0; i < kc->reg->nr_counters; i++) {
			if (kc->reg->counters[i].id == progs[p].id)
				kc->pos[p] = (int)i;
		}
		if (kc->pos[p] < 0 || ctrtype_size(kc->reg->counters[kc->pos[p]].type) != 8) {
			kc_err("the manifest needs a 64-bit counter with id %u (%s)", progs[p].id,
			       progs[p].tp);
			return -EINVAL;
		}
	}
	if (!(kc->reg->instance_type & PERF_COUNTERSET_FLAG_MULTIPLE)) {
		kc_err("the counter set must have multiple instances (one per CPU)");
		return -EINVAL;
	}
	snprintf(kc->dir, sizeof(kc->dir), "%s/%s", perflib_pin_root(),
		 perflib_guid_to_string(&kc->reg->counterset_guid, g));
	return 0;
}

static void kc_close(struct kc *kc)
{
	regman_free(&kc->rm);
	manifest_free(kc->man);
}

/* ---- a provider for the counter set (to create, take back and delete instances) ---------- */

static ULONG kc_provider(const struct kc *kc, HANDLE *ret_h)
{
	size_t size =
		sizeof(PERF_COUNTERSET_INFO) + kc->reg->nr_counters * sizeof(PERF_COUNTER_INFO);
	PERF_COUNTERSET_INFO *tmpl = calloc(1, size);
	PERF_COUNTER_INFO *c = (PERF_COUNTER_INFO *)(tmpl + 1);
	GUID provider = kc->reg->provider_guid;
	unsigned int i;
	ULONG st;

	if (!tmpl)
		return ERROR_OUTOFMEMORY;
	tmpl->CounterSetGuid = kc->reg->counterset_guid;
	tmpl->ProviderGuid = provider;
	tmpl->NumCounters = kc->reg->nr_counters;
	tmpl->InstanceType = kc->reg->instance_type;
	for (i = 0; i < kc->reg->nr_counters; i++) {
		const struct perflib_counter_reg *r = &kc->reg->counters[i];

		c[i].CounterId = r->id;
		c[i].Type = r->type;
		c[i].Attrib = r->attrib;
		c[i].Size = ctrtype_size(r->type) == 8 ? 8 : 4;
		c[i].DetailLevel = r->detail_level;
		c[i].Scale = r->scale;
	}
	st = PerfStartProvider(&provider, NULL, ret_h);
	if (!st) {
		st = PerfSetCounterSetInfo(*ret_h, tmpl, (ULONG)size);
		if (st)
			PerfStopProvider(*ret_h);
	}
	free(tmpl);
	return st;
}

/* delete the kernel-owned instances: take them back into a provider, then stop it */
static int kc_delete_instances(const struct kc *kc)
{
	HANDLE h;
	ULONG st;
	int n;

	st = kc_provider(kc, &h);
	if (st) {
		kc_err("cannot open the counter set as a provider (error %u)", st);
		return -EIO;
	}
	n = perflib_kernel_instances_delete(h, &kc->reg->counterset_guid);
	PerfStopProvider(h);
	if (n < 0)
		kc_err("cannot delete the kernel-owned instances: %s", strerror(-n));
	return n;
}

static bool pin_exists(const struct kc *kc, const char *name)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", kc->dir, name);
	return access(path, F_OK) == 0;
}

static void unpin_links(const struct kc *kc)
{
	char path[PATH_MAX + 64];
	size_t p;

	for (p = 0; p < NR_PROGS; p++) {
		snprintf(path, sizeof(path), "%s/%s", kc->dir, progs[p].pin);
		unlink(path);
	}
}

static bool loaded(const struct kc *kc)
{
	size_t p;

	for (p = 0; p < NR_PROGS; p++) {
		if (pin_exists(kc, progs[p].pin))
			return true;
	}
	return false;
}

/* ---- load ------------------------------------------------------------------------------- */

/* create one instance per CPU and hand each to the kernel; slot of each CPU in @slots */
static int create_instances(const struct kc *kc, unsigned int nr_cpus, uint32_t *slots)
{
	WCHAR name[16];
	char text[16];
	unsigned int cpu;
	HANDLE h;
	ULONG st;
	int idx, err = 0;

	st = kc_provider(kc, &h);
	if (st) {
		kc_err("cannot register the instances (error %u)", st);
		return -EIO;
	}
	for (cpu = 0; cpu < nr_cpus && !err; cpu++) {
		snprintf(text, sizeof(text), "%u", cpu);
		perflib_utf8_to_utf16(text, name, 16);
		idx = perflib_kernel_instance_create(h, &kc->reg->counterset_guid, name, cpu);
		if (idx < 0) {
			kc_err("cannot create instance \"%s\": %s", text, strerror(-idx));
			err = idx;
			break;
		}
		slots[cpu] = (uint32_t)idx;
	}
	/* instances handed over stay; any other goes with the provider */
	PerfStopProvider(h);
	return err;
}

static int attach_programs(const struct kc *kc, const uint32_t *slots, unsigned int nr_cpus)
{
	struct perflib_bpf_counterset cs;
	struct kcounters_bpf *skel = NULL;
	struct bpf_link *link;
	char g[37], path[PATH_MAX + 64];
	unsigned int cpu, cap;
	size_t p;
	int err;

	err = perflib_bpf_counterset_open(
		perflib_pin_root(), perflib_guid_to_string(&kc->reg->counterset_guid, g), &cs);
	if (err) {
		kc_err("cannot open the counter set's pins: %s", strerror(-err));
		return err;
	}
	skel = kcounters_bpf__open();
	if (!skel) {
		err = -errno;
		goto out;
	}
	skel->rodata->perflib_geo = cs.geo;
	cap = sizeof(skel->rodata->cpu_slot) / sizeof(skel->rodata->cpu_slot[0]);
	for (cpu = 0; cpu < cap; cpu++)
		skel->rodata->cpu_slot[cpu] = cpu < nr_cpus ? slots[cpu] : cs.geo.capacity;
	skel->rodata->pos_ctxsw = (uint32_t)kc->pos[0];
	skel->rodata->pos_syscalls = (uint32_t)kc->pos[1];
	skel->rodata->pos_faults = (uint32_t)kc->pos[2];
	skel->rodata->pos_kfaults = (uint32_t)kc->pos[3];
	for (p = 0; p < NR_PROGS; p++) {
		/* a tracepoint this kernel does not have: its counter stays 0 */
		if (libbpf_find_vmlinux_btf_id(progs[p].tp, BPF_TRACE_RAW_TP) < 0) {
			fprintf(stderr, "kcounters: no tracepoint %s here: counter %u stays 0\n",
				progs[p].tp, progs[p].id);
			bpf_program__set_autoload(
				bpf_object__find_program_by_name(skel->obj, progs[p].prog), false);
		}
	}
	err = perflib_bpf_counterset_reuse(&cs, skel->maps.slots, NULL);
	if (!err)
		err = kcounters_bpf__load(skel);
	if (err) {
		kc_err("cannot load the BPF programs: %s", strerror(-err));
		goto out;
	}
	for (p = 0; p < NR_PROGS; p++) {
		struct bpf_program *prog =
			bpf_object__find_program_by_name(skel->obj, progs[p].prog);

		if (!bpf_program__autoload(prog))
			continue;
		link = bpf_program__attach(prog);
		if (!link) {
			err = -errno;
			kc_err("cannot attach to %s: %s", progs[p].tp, strerror(-err));
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%s", kc->dir, progs[p].pin);
		err = bpf_link__pin(link, path);
		bpf_link__destroy(link);
		if (err) {
			kc_err("cannot pin %s: %s", path, strerror(-err));
			goto out;
		}
	}
out:
	kcounters_bpf__destroy(skel);
	perflib_bpf_counterset_close(&cs);
	return err;
}

static int cmd_load(void *ctx)
{
	struct kc *kc = ctx;
	struct perflib_pin_opts o = kc->pin;
	uint32_t *slots = NULL;
	int nr_cpus, err;

	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus <= 0) {
		kc_err("cannot count the CPUs: %s", strerror(-nr_cpus));
		return 1;
	}
	/* one slot per CPU and at least 16 spare (others may provide into the set too) */
	o.capacity = ((unsigned int)nr_cpus + 16 + 63) / 64 * 64;
	err = perflib_register_counterset(kc->reg, &o);
	if (err == -EEXIST && loaded(kc)) {
		printf("kcounters: already loaded (%s)\n", kc->dir);
		return 0;
	}
	if (err && err != -EEXIST) {
		if (err == -EPERM)
			kc_err("registering needs root (CAP_BPF)");
		else if (err == -ENOTUNIQ)
			kc_err("%s holds a different registration; unload it first", kc->dir);
		else
			kc_err("cannot register the counter set: %s", strerror(-err));
		return 1;
	}
	/* a half-done earlier load may have left kernel-owned instances: start clean */
	unpin_links(kc);
	if (kc_delete_instances(kc) < 0)
		return 1;
	slots = calloc((size_t)nr_cpus, sizeof(*slots));
	if (!slots)
		return 1;
	err = create_instances(kc, (unsigned int)nr_cpus, slots);
	if (!err)
		err = attach_programs(kc, slots, (unsigned int)nr_cpus);
	free(slots);
	if (err) {
		/* leave nothing half-attached */
		unpin_links(kc);
		kc_delete_instances(kc);
		return 1;
	}
	printf("kcounters: loaded \"%s\": %d CPUs, pins in %s\n", kc->reg->name, nr_cpus, kc->dir);
	return 0;
}

/* ---- unload, status --------------------------------------------------------------------- */

static int cmd_unload(void *ctx)
{
	struct kc *kc = ctx;
	int err;

	if (access(kc->dir, F_OK)) {
		printf("kcounters: not loaded\n");
		return 0;
	}
	/* programs first: nothing writes to the slots once they are deleted */
	unpin_links(kc);
	if (kc_delete_instances(kc) < 0)
		return 1;
	err = perflib_unregister_counterset(&kc->reg->counterset_guid, kc->force);
	if (err == -EBUSY) {
		kc_err("other processes provide instances into \"%s\"; stop them or use --force",
		       kc->reg->name);
		return 1;
	}
	if (err && err != -ENOENT) {
		kc_err("cannot unregister %s: %s", kc->dir, strerror(-err));
		return 1;
	}
	printf("kcounters: unloaded\n");
	return 0;
}

/* the program id behind a pinned link, or 0 */
static uint32_t link_prog_id(const char *path)
{
	struct bpf_link_info li;
	__u32 len = sizeof(li);
	int fd = bpf_obj_get(path);

	if (fd < 0)
		return 0;
	memset(&li, 0, sizeof(li));
	if (bpf_obj_get_info_by_fd(fd, &li, &len))
		li.prog_id = 0;
	close(fd);
	return li.prog_id;
}

/*
 * open pin @name of the counter set read-only (what a reader with read permission only
 * can do; such an fd cannot be mmapped, so slots are read with lookups)
 */
static int open_ro(const struct kc *kc, const char *name)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = BPF_F_RDONLY);
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", kc->dir, name);
	return bpf_obj_get_opts(path, &o);
}

/* print the counters of every kernel-owned instance (one per CPU) */
static int print_cpus(const struct kc *kc)
{
	struct perflib_info info;
	struct bpf_map_info mi;
	__u32 len = sizeof(mi), key = 0, i, p, k, pcpu[NR_PROGS] = {0}, lines = 0, nr_pcpu = 0;
	uint8_t *buf = NULL, *slot = NULL;
	int info_fd, data_fd = -1, err = -EBADMSG;
	char seg[16];

	info_fd = open_ro(kc, "info");
	if (info_fd >= 0)
		data_fd = open_ro(kc, "s0/data");
	if (info_fd < 0 || data_fd < 0) {
		err = -errno;
		goto out;
	}
	memset(&mi, 0, sizeof(mi));
	if (bpf_obj_get_info_by_fd(info_fd, &mi, &len) || mi.value_size < sizeof(info))
		goto out;
	buf = calloc(1, mi.value_size);
	if (!buf || bpf_map_lookup_elem(info_fd, &key, buf))
		goto out;
	memcpy(&info, buf, sizeof(info));
	/* nothing read from a map is trusted: the slot geometry is checked before use */
	if (info.magic != PERFLIB_INFO_MAGIC || info.slot_size < PERFLIB_COUNTERS_OFFSET ||
	    info.slot_size > (1u << 20) || info.nr_counters > PERFLIB_MAX_COUNTERS ||
	    !info.classes[0].ascii_max || info.classes[0].ascii_max > PERFLIB_ASCII_MAX ||
	    info.ascii_offset + info.classes[0].ascii_max > info.slot_size ||
	    PERFLIB_COUNTERS_OFFSET + 8 * (size_t)info.nr_counters > info.slot_size)
		goto out;
	for (p = 0; p < NR_PROGS; p++) {
		if ((uint32_t)kc->pos[p] >= info.nr_counters)
			goto out;
	}
	/*
	 * counters kept per CPU (lodctr --per-cpu): their parts summed as every reader does
	 * (perflib_pcpu_sum), inside the slot whatever the info says
	 */
	if (info.nr_cpus) {
		const struct perflib_info_counter *ic = (const void *)(buf + sizeof(info));

		if (mi.value_size < sizeof(info) + (size_t)info.nr_counters * sizeof(*ic) ||
		    info.nr_cpus > PERFLIB_PCPU_MAX_CPUS)
			goto out;
		for (i = 0; i < info.nr_counters; i++)
			nr_pcpu += !!ic[i].pcpu;
		lines = perflib_pcpu_lines(nr_pcpu);
		if (!nr_pcpu || info.classes[0].pcpu_offset % PERFLIB_PCPU_LINE ||
		    info.classes[0].pcpu_offset < PERFLIB_COUNTERS_OFFSET ||
		    info.classes[0].pcpu_offset + perflib_pcpu_bytes(info.nr_cpus, lines) >
			    info.slot_size)
			goto out;
		for (p = 0; p < NR_PROGS; p++) {
			pcpu[p] = ic[kc->pos[p]].pcpu;
			if (pcpu[p] > nr_pcpu)
				goto out;
		}
	}
	slot = malloc(info.slot_size);
	if (!slot) {
		err = -ENOMEM;
		goto out;
	}
	printf("  %-6s", "CPU");
	for (p = 0; p < NR_PROGS; p++)
		printf(" %22s", progs[p].tp);
	printf("\n");
	/* the slots of every segment (s<k>/data), each read with lookups until it ends */
	for (k = 0, i = 0; data_fd >= 0;) {
		const struct perflib_slot_hdr *h = (const void *)slot;
		uint64_t w, v;

		if (bpf_map_lookup_elem(data_fd, &i, slot)) {
			close(data_fd);
			snprintf(seg, sizeof(seg), "s%u/data", ++k);
			data_fd = k < PERFLIB_MAX_SEGS ? open_ro(kc, seg) : -1;
			i = 0;
			continue;
		}
		i++;
		memcpy(&w, slot, sizeof(w));
		if (perflib_word_state(w) != PERFLIB_SLOT_LIVE || perflib_word_pid(w) ||
		    h->owner_start != PERFLIB_OWNER_KERNEL)
			continue;
		/* the ASCII name of class 0's slots (the kernel's instances are there) */
		slot[info.ascii_offset + info.classes[0].ascii_max - 1] = 0;
		printf("  %-6.6s", (const char *)(slot + info.ascii_offset));
		for (p = 0; p < NR_PROGS; p++) {
			memcpy(&v, slot + PERFLIB_COUNTERS_OFFSET + 8 * (size_t)kc->pos[p],
			       sizeof(v));
			if (pcpu[p])
				v += perflib_pcpu_sum(slot, info.classes[0].pcpu_offset, lines,
						      info.nr_cpus, pcpu[p] - 1);
			printf(" %22llu", (unsigned long long)v);
		}
		printf("\n");
	}
	err = 0;
out:
	free(slot);
	free(buf);
	if (data_fd >= 0)
		close(data_fd);
	if (info_fd >= 0)
		close(info_fd);
	return err;
}

static int cmd_status(void *ctx)
{
	struct kc *kc = ctx;
	char path[PATH_MAX + 300];
	struct dirent *de;
	DIR *d;
	int err;

	if (access(kc->dir, F_OK)) {
		printf("kcounters: not loaded\n");
		return 3;
	}
	printf("%s (%s): %s\n", kc->reg->name, kc->dir, loaded(kc) ? "loaded" : "not loaded");
	d = opendir(kc->dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", kc->dir, de->d_name);
		if (!strncmp(de->d_name, "link_", 5) || !strcmp(de->d_name, "reaper"))
			printf("  %-24s prog %u\n", de->d_name, link_prog_id(path));
		else
			printf("  %-24s map\n", de->d_name);
	}
	if (d)
		closedir(d);
	err = print_cpus(kc);
	if (err) {
		kc_err("cannot read %s: %s", kc->dir, strerror(-err));
		return 1;
	}
	return loaded(kc) ? 0 : 3;
}

/* ---- command line ----------------------------------------------------------------------- */

static int set_mode(struct tool_parser *p, const char *v)
{
	return parse_mode(v, &((struct kc *)p->ctx)->pin.mode);
}

static int set_group(struct tool_parser *p, const char *v)
{
	return parse_group(v, &((struct kc *)p->ctx)->pin.gid);
}

/* every switch goes with every command, before or after it */
static const struct tool_opt switches[] = {
	TOOL_OPT_HELP("?|h|help"),
	TOOL_OPT_STR("manifest", struct kc, manifest, 0),
	TOOL_OPT_CALL("mode", TOOL_VALUE, set_mode),
	TOOL_OPT_CALL("group", TOOL_VALUE, set_group),
	TOOL_OPT_FLAG("force", struct kc, force),
	TOOL_OPT_END,
};

static const struct tool_cmd commands[] = {
	{"load", cmd_load},
	{"unload", cmd_unload},
	{"status", cmd_status},
	{NULL, NULL},
};

static const struct tool_cli cli = {
	.name = "kcounters",
	.usage = usage_text,
	.synopsis = "usage: kcounters load [--manifest FILE] [--mode MODE] [--group GROUP]\n"
		    "       kcounters unload [--force] | status | --help\n",
	.exit_usage = 2,
	.opts = switches,
	.cmds = commands,
};

int main(int argc, char **argv)
{
	struct kc kc = {
		.pin = {.sz = sizeof(kc.pin), .mode = 0644, .uid = (uid_t)-1, .gid = (gid_t)-1}};
	struct tool_parser p;
	int rc;

	rc = tool_parse(&p, &cli, &kc, argc, argv);
	if (rc != TOOL_CONTINUE)
		return rc;
	if (kc_open(&kc)) {
		kc_close(&kc);
		return 1;
	}
	rc = p.cmd->run(&kc);
	kc_close(&kc);
	return rc;
}
