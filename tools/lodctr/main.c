// SPDX-License-Identifier: MIT
/*
 * lodctr - register the counter sets of an instrumentation manifest: create and pin each
 * counter set's maps (info with names, help strings and counter metadata; data with BTF
 * field names) with the requested owner, group and mode, as `lodctr /m:` does on Windows.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "regman.h"
#include "slot_hdr.h"
#include "tool.h"

static const char usage[] =
	"Usage: lodctr /m:MANIFEST [INSTALL_PATH] [OPTIONS]\n"
	"       lodctr -m MANIFEST [INSTALL_PATH] [OPTIONS]\n"
	"\n"
	"Register the performance counter sets of an instrumentation manifest (the\n"
	"<counters> section) so that providers can publish them and consumers, typeperf,\n"
	"bpftool and BPF programs can read them. For every counterSet, lodctr creates and\n"
	"pins under the pin root ($PERFLIB_ROOT, default " PERFLIB_DEFAULT_ROOT ")\n"
	"a directory named by the counter set's GUID holding the maps info (the\n"
	"registration: names, help strings, types, bases, aggregation, detail levels,\n"
	"scales; frozen), the first segment of instance storage (s0/data: one slot\n"
	"per instance, with BTF field names taken from the counter names; s0/live:\n"
	"which slots are in use and which each provider process holds, the index of\n"
	"instance names, then the provider processes and the set's control word),\n"
	"for each size class of instance names the maps that list its segments\n"
	"(segs, lives; segs1, ... for longer names; segments are added as instances\n"
	"are created and given back when they are deleted), and the program reaper\n"
	"(frees the instances of a provider that exits without deleting them).\n"
	"docs/ARCHITECTURE.md has the layout.\n"
	"\n"
	"Registering a manifest that is already registered identically does nothing.\n"
	"A counter set registered with a different definition is refused: remove it\n"
	"first with unlodctr /m:MANIFEST.\n"
	"\n"
	"Options:\n"
	"  /m:MANIFEST, -m MANIFEST  the manifest to register (required)\n"
	"  INSTALL_PATH              accepted for compatibility (the resource binary of\n"
	"                            applicationIdentity is not needed: strings are\n"
	"                            stored in the info map)\n"
	"  --mode OCTAL              file mode of the pins (default 0644: root writes,\n"
	"                            everybody reads); 0664 with --group lets a group\n"
	"                            of unprivileged providers publish\n"
	"  --group GROUP             group of the pins (name or number; default root)\n"
	"  --owner USER              owner of the pins (default: the caller, root)\n"
	"  --capacity N              instance limit per counter set (default 1048576;\n"
	"                            storage grows with the instances)\n"
	"  --name-max N              UTF-16 units per instance name, including the NUL\n"
	"                            (default and maximum 1025: names of up to\n"
	"                            PERF_MAX_INSTANCE_NAME characters; a smaller value\n"
	"                            saves map memory: 33 gives a 320-byte slot for 8\n"
	"                            counters instead of 2,304)\n"
	"  --per-cpu [SET/]COUNTER   keep COUNTER per CPU (repeatable; COUNTER is the\n"
	"                            counter's name or id, SET the counter set's name or\n"
	"                            GUID, else every set of MANIFEST that has it): each\n"
	"                            CPU increments its own part, on a cache line of its\n"
	"                            own, and readers see the sum; the provider's code\n"
	"                            does not change. For counters of 4 or 8 bytes by\n"
	"                            value among the set's first 64; 64 bytes per\n"
	"                            instance per possible CPU for\n"
	"                            each 8 of them (docs/PORTING.md, \"Per-CPU counters\")\n"
	"  --root PATH               pin root (overrides $PERFLIB_ROOT)\n"
	"  -q, /q[:GUID]             list registered counter sets (all, or one)\n"
	"  --dump                    register nothing: print the slot layout each\n"
	"                            counter set of MANIFEST would get (offsets, sizes\n"
	"                            and the field names bpftool shows), with the\n"
	"                            --capacity and --name-max given\n"
	"  -h, --help, /?            show this help\n"
	"\n"
	"Needs CAP_BPF (root) to create maps. Exit status 0 on success; otherwise the\n"
	"Win32 error code (1 if it does not fit), after a line\n"
	"  Error: Unable to install performance counters in MANIFEST, error code is N\n"
	"\n"
	"Windows-only forms (INI files, /c /h /l /s /r /t /e /d) manage V1 counters,\n"
	"which do not exist here; lodctr refuses them with an explanation.\n";

/*
 * --dump: the per-CPU parts of class 0's slots, after everything else on a line of their
 * own (bpf/layout.h): where they start, and what a CPU's line holds
 */
static void dump_pcpu(const struct perflib_counterset_reg *reg, const struct perflib_layout *l,
		      unsigned int ascii_max)
{
	unsigned int i, nr_pcpu = 0, end, lines;
	int cpus = libbpf_num_possible_cpus();

	for (i = 0; i < reg->nr_counters; i++)
		nr_pcpu += !!(reg->counters[i].attrib & PERF_ATTRIB_LINUX_PER_CPU);
	if (!nr_pcpu || cpus <= 0)
		return;
	end = l->ref_offset ? l->ref_offset + 8 * l->nr_counters + 8 * ((l->nr_counters + 63) / 64)
			    : (l->ascii_offset + ascii_max + 7) / 8 * 8;
	end = (end + PERFLIB_PCPU_LINE - 1) / PERFLIB_PCPU_LINE * PERFLIB_PCPU_LINE;
	lines = perflib_pcpu_lines(nr_pcpu);
	printf("  %6u %6u  per-CPU parts: %u possible CPUs x %u line(s) of %u bytes\n", end,
	       (unsigned int)perflib_pcpu_bytes((unsigned int)cpus, lines), (unsigned int)cpus,
	       lines, PERFLIB_PCPU_LINE);
	for (i = 0, nr_pcpu = 0; i < reg->nr_counters; i++) {
		if (!(reg->counters[i].attrib & PERF_ATTRIB_LINUX_PER_CPU))
			continue;
		printf("  %6u %6u  part of counter %u on CPU 0 (CPU c: + %u * c)\n",
		       (unsigned int)perflib_pcpu_part(end, lines, 0, nr_pcpu), 8u,
		       reg->counters[i].id, lines * PERFLIB_PCPU_LINE);
		nr_pcpu++;
	}
}

/* --dump: the layout of one counter set's slots, as bpf/layout.h describes it */
static int dump_layout(const struct perflib_counterset_reg *reg,
		       const struct perflib_pin_opts *opts)
{
	struct perflib_class_layout cl[PERFLIB_MAX_CLASSES];
	struct perflib_layout l;
	unsigned int i, c;
	char gs[37];
	int err, nr;

	err = perflib_counterset_layout(reg, opts, &l);
	if (err)
		return err;
	printf("counter set {%s} (%s)\n", perflib_guid_to_string(&reg->counterset_guid, gs),
	       reg->name ? reg->name : "");
	nr = perflib_counterset_classes(reg, opts, cl, PERFLIB_MAX_CLASSES);
	if (nr < 0) {
		perflib_layout_free(&l);
		return nr;
	}
	/* the size classes: where each puts its names; the slot below is class 0's */
	printf("  size classes: up to %u slots each\n", l.capacity);
	for (c = 0; c < (unsigned int)nr; c++)
		printf("    class %u: slots of %u bytes, names up to %u UTF-16 units with the "
		       "NUL (name at %u, ASCII at %u)\n",
		       c, cl[c].slot_size, cl[c].name_max, cl[c].name_offset, cl[c].ascii_offset);
	printf("  slot of class 0: %u bytes\n", l.slot_size);
	printf("  %6s %6s  %s\n", "offset", "bytes", "field");
	/* the header: the table the library's BTF is built from */
	for (i = 0; i < PERFLIB_SLOT_HDR_NR_FIELDS; i++) {
		const struct perflib_slot_hdr_field *f = &perflib_slot_hdr_fields[i];

		printf("  %6u %6u  %s%s%s%s\n", f->offset, f->size, f->name, f->what ? " (" : "",
		       f->what ? f->what : "", f->what ? ")" : "");
	}
	printf("  %6u %6u  %s\n", l.block_offset, (unsigned int)sizeof(PERF_COUNTERSET_INSTANCE),
	       "instance (PERF_COUNTERSET_INSTANCE)");
	for (i = 0; i < l.nr_counters; i++) {
		const struct ctrtype *t = ctrtype_find(reg->counters[i].type);

		unsigned int bytes = ctrtype_size(reg->counters[i].type);

		/* a by-reference slot holds an address; a DWORD value the low half of its slot */
		if (l.counters[i].ref_offset || !bytes)
			bytes = 8;
		printf("  %6u %6u  %s (counter %u, %s)\n", l.counters[i].offset, bytes,
		       l.counters[i].field, l.counters[i].id, t ? t->macro : "?");
	}
	printf("  %6u %6u  %s\n", l.name_offset, 2 * l.name_max, "InstanceName (UTF-16LE)");
	printf("  %6u %6u  %s\n", l.ascii_offset, nr > 0 ? cl[0].ascii_max : 0u,
	       "name (ASCII rendering)");
	for (i = 0; i < l.nr_counters; i++) {
		if (l.counters[i].ref_offset)
			printf("  %6u %6u  %s (dereferenced value of counter %u)\n",
			       l.counters[i].ref_offset,
			       ctrtype_size(reg->counters[i].type) == 8 ? 8u : 4u,
			       l.counters[i].ref_field, l.counters[i].id);
	}
	if (l.ref_offset)
		printf("  %6u %6u  %s\n", l.ref_offset + 8 * l.nr_counters,
		       8 * ((l.nr_counters + 63) / 64), "NULL-address bitmap");
	dump_pcpu(reg, &l, nr > 0 ? cl[0].ascii_max : 0u);
	perflib_layout_free(&l);
	return 0;
}

/* list registered counter sets through the consumer API */
static int query(const char *guid_str)
{
	GUID *guids = NULL, one;
	DWORD n = 0, i, size;
	ULONG st;
	char gs[37];

	if (guid_str) {
		if (perflib_guid_from_string(guid_str, &one)) {
			tool_error("%s is not a GUID", guid_str);
			return tool_exit_win32(ERROR_INVALID_PARAMETER);
		}
		guids = malloc(sizeof(GUID));
		if (!guids)
			return tool_exit_win32(ERROR_OUTOFMEMORY);
		guids[0] = one;
		n = 1;
	} else {
		st = PerfEnumerateCounterSet(NULL, NULL, 0, &n);
		if (st != ERROR_SUCCESS && st != ERROR_NOT_ENOUGH_MEMORY) {
			tool_error("cannot enumerate counter sets, error code is %u", st);
			return tool_exit_win32(st);
		}
		guids = calloc(n ? n : 1, sizeof(GUID));
		if (!guids)
			return tool_exit_win32(ERROR_OUTOFMEMORY);
		st = PerfEnumerateCounterSet(NULL, guids, n, &n);
		if (st) {
			tool_error("cannot enumerate counter sets, error code is %u", st);
			free(guids);
			return tool_exit_win32(st);
		}
	}
	for (i = 0; i < n; i++) {
		WCHAR name[512], prov[512];
		char name8[1024], prov8[1024];
		unsigned char buf[64];
		PERF_COUNTERSET_REG_INFO *ri = (void *)buf;

		name8[0] = prov8[0] = 0;
		if (!PerfQueryCounterSetRegistrationInfo(NULL, &guids[i],
							 PERF_REG_COUNTERSET_NAME_STRING, 0,
							 (BYTE *)name, sizeof(name), &size))
			perflib_utf16_to_utf8(name, 512, name8, sizeof(name8));
		if (!PerfQueryCounterSetRegistrationInfo(NULL, &guids[i], PERF_REG_PROVIDER_NAME, 0,
							 (BYTE *)prov, sizeof(prov), &size))
			perflib_utf16_to_utf8(prov, 512, prov8, sizeof(prov8));
		st = PerfQueryCounterSetRegistrationInfo(
			NULL, &guids[i], PERF_REG_COUNTERSET_STRUCT, 0, buf, sizeof(buf), &size);
		printf("{%s}  %s\n", perflib_guid_to_string(&guids[i], gs), name8);
		printf("    provider:      %s\n", prov8);
		if (st == ERROR_SUCCESS || st == ERROR_NOT_ENOUGH_MEMORY)
			printf("    instance type: %u\n    counters:      %u\n", ri->InstanceType,
			       ri->NumCounters);
		else
			printf("    error code %u reading the registration\n", st);
	}
	free(guids);
	return 0;
}

/* register one counter set; a Win32 code (ERROR_SUCCESS when it was already registered) */
static ULONG register_set(const struct perflib_counterset_reg *reg,
			  const struct perflib_pin_opts *opts, const char *manifest)
{
	char gs[37];
	int err;

	perflib_guid_to_string(&reg->counterset_guid, gs);
	err = perflib_register_counterset(reg, opts);
	if (err == -EEXIST) {
		printf("Info: counter set {%s} (%s) is already registered\n", gs, reg->name);
		return ERROR_SUCCESS;
	}
	if (err == -ENOTUNIQ) {
		fprintf(stderr,
			"Error: counter set {%s} (%s) is registered with a different "
			"definition; run unlodctr /m:%s first\n",
			gs, reg->name, manifest);
		return ERROR_ALREADY_EXISTS;
	}
	if (err) {
		tool_error("counter set {%s} (%s): %s%s", gs, reg->name, strerror(-err),
			   err == -EPERM ? " (creating BPF maps needs CAP_BPF: run as root)" : "");
		return perflib_win32_error(err);
	}
	printf("Info: registered counter set {%s} (%s) under %s\n", gs, reg->name,
	       perflib_pin_root());
	return ERROR_SUCCESS;
}

/* the command line */
struct args {
	struct perflib_pin_opts pin; /* --mode, --group, --owner, --capacity, --name-max */
	const char *manifest;	     /* /m: */
	const char *install;	     /* INSTALL_PATH */
	const char *query_guid;	     /* /q:GUID */
	bool query;		     /* /q */
	bool dump;		     /* --dump */
	const char **per_cpu;	     /* --per-cpu [SET/]COUNTER, as given */
	size_t nr_per_cpu;
};

#define ARGS(p) ((struct args *)(p)->ctx)

static int set_mode(struct tool_parser *p, const char *v)
{
	return parse_mode(v, &ARGS(p)->pin.mode);
}

static int set_group(struct tool_parser *p, const char *v)
{
	return parse_group(v, &ARGS(p)->pin.gid);
}

static int set_owner(struct tool_parser *p, const char *v)
{
	return parse_user(v, &ARGS(p)->pin.uid);
}

static int set_root(struct tool_parser *p, const char *v)
{
	(void)p;
	return perflib_set_pin_root(v);
}

static int add_per_cpu(struct tool_parser *p, const char *v)
{
	struct args *a = ARGS(p);
	const char **n = realloc(a->per_cpu, (a->nr_per_cpu + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	n[a->nr_per_cpu++] = v;
	a->per_cpu = n;
	return 0;
}

/* does @s name counter @c: its name, or its id in decimal or 0x hex? */
static bool names_counter(const char *s, size_t len, const struct perflib_counter_reg *c)
{
	char buf[16], *end;
	unsigned long id;

	if (c->name && strlen(c->name) == len && !strncmp(s, c->name, len))
		return true;
	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	id = strtoul(buf, &end, 0);
	return !errno && !*end && id == c->id;
}

/* does @s (up to @len bytes) name counter set @set: its name or its GUID? */
static bool names_set(const char *s, size_t len, const struct perflib_counterset_reg *set)
{
	char buf[64];
	GUID g;

	if (set->name && strlen(set->name) == len && !strncmp(s, set->name, len))
		return true;
	if (len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	return !perflib_guid_from_string(buf, &g) && !memcmp(&g, &set->counterset_guid, sizeof(g));
}

/*
 * --per-cpu: PERF_ATTRIB_LINUX_PER_CPU on the counters each entry names; a Win32 code
 * (ERROR_INVALID_PARAMETER for an entry that names no counter, or one that cannot be kept
 * per CPU)
 */
static ULONG mark_per_cpu(const struct args *a, struct regman *rm)
{
	size_t e, i, j;

	for (e = 0; e < a->nr_per_cpu; e++) {
		const char *v = a->per_cpu[e], *slash = strrchr(v, '/');
		const char *ctr = slash ? slash + 1 : v;
		size_t found = 0;

		for (i = 0; i < rm->nr_sets; i++) {
			const struct perflib_counterset_reg *set = &rm->sets[i];
			struct perflib_counter_reg *c =
				rm->counters + (set->counters - rm->counters);

			if (slash && !names_set(v, (size_t)(slash - v), set))
				continue;
			for (j = 0; j < set->nr_counters; j++) {
				unsigned int size = c[j].type & PERF_SIZE_VARIABLE_LEN;

				if (!names_counter(ctr, strlen(ctr), &c[j]))
					continue;
				if ((c[j].attrib & PERF_ATTRIB_BY_REFERENCE) ||
				    (size != PERF_SIZE_DWORD && size != PERF_SIZE_LARGE)) {
					tool_error(
						"--per-cpu %s: counter %u of %s is not a value of "
						"4 or 8 bytes",
						v, c[j].id, set->name);
					return ERROR_INVALID_PARAMETER;
				}
				c[j].attrib |= PERF_ATTRIB_LINUX_PER_CPU;
				found++;
			}
		}
		if (!found) {
			tool_error("--per-cpu %s: no such counter in %s", v, a->manifest);
			return ERROR_INVALID_PARAMETER;
		}
	}
	return ERROR_SUCCESS;
}

static int set_query(struct tool_parser *p, const char *v)
{
	ARGS(p)->query = true;
	ARGS(p)->query_guid = v;
	return 0;
}

/* the Windows forms for V1 counters (/c /h /l /s /r /t /e /d): refused; "-h" is help */
static int v1_switch(struct tool_parser *p, const char *v)
{
	(void)v;
	if (!strcmp(p->arg, "-h"))
		return tool_help(p);
	fprintf(stderr,
		"Error: %s is not supported here: only manifest-based (V2) counters exist on "
		"Linux; see lodctr --help\n",
		p->arg);
	return tool_stop(p, tool_exit_win32(ERROR_NOT_SUPPORTED));
}

/* INSTALL_PATH after /m: (one), else an INI file (V1 counters): refused */
static int operand(struct tool_parser *p, const char *arg)
{
	if (ARGS(p)->install)
		return -EINVAL; /* "unexpected argument" */
	if (ARGS(p)->manifest) {
		ARGS(p)->install = arg; /* Installation-Path: strings live in the info map */
		return 0;
	}
	fprintf(stderr, "Error: %s: INI-file (V1) counters are not supported; use /m:MANIFEST\n",
		arg);
	return tool_stop(p, tool_exit_win32(ERROR_NOT_SUPPORTED));
}

/* lodctr's switches (tools/common/tool.h: "/m:file", "-m file", "--mode=0664", ...) */
static const struct tool_opt switches[] = {
	TOOL_OPT_HELP("?|help"),
	TOOL_OPT_STR("m", struct args, manifest, 0),
	TOOL_OPT_FLAG("dump", struct args, dump),
	TOOL_OPT_CALL("q", TOOL_VALUE | TOOL_OPTIONAL, set_query),
	TOOL_OPT_CALL("mode", TOOL_VALUE, set_mode),
	TOOL_OPT_CALL("group", TOOL_VALUE, set_group),
	TOOL_OPT_CALL("owner", TOOL_VALUE, set_owner),
	TOOL_OPT_UINT("capacity", struct args, pin.capacity, 1, UINT_MAX),
	TOOL_OPT_UINT("name-max", struct args, pin.name_max, 2, UINT_MAX),
	TOOL_OPT_CALL("root", TOOL_VALUE, set_root),
	TOOL_OPT_CALL("per-cpu", TOOL_VALUE, add_per_cpu),
	TOOL_OPT_CALL("c|h|l|s|r|t|e|d", TOOL_VALUE | TOOL_OPTIONAL, v1_switch),
	TOOL_OPT_END,
};

static const struct tool_cli cli = {
	.name = "lodctr",
	.usage = usage,
	.windows = true,
	.exit_usage = ERROR_INVALID_PARAMETER, /* 87, as tool_exit_win32 gives it */
	.opts = switches,
	.operand = operand,
};

/* register (or with --dump, describe) the counter sets of the manifest; a Win32 code */
static ULONG install(const struct args *a)
{
	struct manifest *man = NULL;
	struct regman rm = {0};
	ULONG code = ERROR_SUCCESS;
	size_t i;
	int err;

	err = manifest_load(a->manifest, &man, stderr);
	if (err) {
		code = err == -ENOENT	? ERROR_FILE_NOT_FOUND
		       : err == -EINVAL ? ERROR_INVALID_DATA
					: perflib_win32_error(err);
		goto out;
	}
	err = regman_build(man, &rm);
	if (err) {
		code = ERROR_OUTOFMEMORY;
		goto out;
	}
	if (!rm.nr_sets)
		printf("Info: %s declares no counter sets\n", a->manifest);
	code = mark_per_cpu(a, &rm);
	if (code)
		goto out;
	for (i = 0; a->dump && i < rm.nr_sets; i++) {
		err = dump_layout(&rm.sets[i], &a->pin);
		if (err) {
			tool_error("counter set %s: %s", rm.sets[i].name, strerror(-err));
			code = perflib_win32_error(err);
			goto out;
		}
	}
	for (i = 0; !a->dump && i < rm.nr_sets && !code; i++)
		code = register_set(&rm.sets[i], &a->pin, a->manifest);
out:
	if (code)
		tool_error("Unable to install performance counters in %s, error code is %u",
			   a->manifest, code);
	regman_free(&rm);
	manifest_free(man);
	return code;
}

int main(int argc, char **argv)
{
	struct args a = {
		.pin = {.sz = sizeof(a.pin), .uid = (uid_t)-1, .gid = (gid_t)-1, .mode = 0644}};
	struct tool_parser p;
	int status;

	status = tool_parse(&p, &cli, &a, argc, argv);
	if (status != TOOL_CONTINUE)
		return status;
	if (a.query)
		return query(a.query_guid);
	if (!a.manifest) {
		tool_error("no manifest given: lodctr /m:MANIFEST (see lodctr --help)");
		return tool_exit_win32(ERROR_INVALID_PARAMETER);
	}
	status = tool_exit_win32(install(&a));
	free(a.per_cpu);
	return status;
}
