// SPDX-License-Identifier: MIT
/*
 * bench_scale.c - counter sets at scale (issue 8): what a set costs as it grows, and what
 * enumeration, queries, fork() and process exit cost, in one table of min / median over
 * several rounds, with every ratio measured side by side (interleaved) in the same run.
 *
 * It uses only the public API (perflib.h, perflib-linux.h) and libbpf for map information,
 * so that the same program measures any storage layout of the library. Run it with --help
 * for the rows and the options. Runs as root under a private pin root that it removes.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bench_util.h"
#include "collect.h"
#include "perflib-linux.h"
#include "perflib.h"

#define NR_COUNTERS 8
#define NAME_CHARS 32 /* "conn-0000000000000000000000000042" */
#define MAX_SIZES 8
#define FORK_SETS 50		  /* registered sets of the fork row's provider */
#define FORK_INSTANCES 4	  /* instances in each of them */
#define EXIT_CAPACITY_BIG 1100000 /* the provider-exit rows' set: room for a holder's 1M */
#define EXIT_FEW 10
#define EXIT_MANY 10000

static const char usage[] =
	"usage: bench_scale [--quick] [--sizes N,N,...] [--rounds N] [--sets N]\n"
	"                   [--only growth|enum|fork|exit] [--help]\n"
	"\n"
	"Measures counter sets at scale through the public API and prints one table; every\n"
	"row gives the min and the median over the rounds, and each ratio is taken from the\n"
	"two measurements of the same round, made one after the other (interleaved).\n"
	"\n"
	"Rows:\n"
	"  growth  one counter set (8 counters, 32-character names) grown to the largest size:\n"
	"          ns per PerfCreateInstance between checkpoints (the sizes), and the kernel's\n"
	"          memlock of every map of the set (pinned maps, and maps held in map-in-map\n"
	"          maps) per instance at each checkpoint; the memory of the set registered\n"
	"          with no instance, and after every instance was deleted. With a fixed-\n"
	"          capacity layout the set is created with the largest size as capacity;\n"
	"          a size the layout refuses is reported as \"refused\".\n"
	"  enum    for each size N: a set where 10N instances were created and 9N deleted\n"
	"          (9 of every 10, spread across the set); PerfEnumerateCounterSetInstances\n"
	"          beside a plain loop that builds the same output buffer from the N live\n"
	"          PPERF_COUNTERSET_INSTANCE blocks PerfCreateInstance returned (checked\n"
	"          byte for byte once). Target: ratio <= 1.3.\n"
	"  query   the same sets: PerfQueryCounterData with one wildcard specification (every\n"
	"          counter, every instance) beside the plain loop building the same instance\n"
	"          records. Target: ratio <= 1.5.\n"
	"  export  the same sets up to 100,000 live: one perflib-exporter scrape (PDH\n"
	"          collection, sampling, OpenMetrics text; without HTTP) per live instance,\n"
	"          from a process of its own as the exporter runs, beside the same scrape\n"
	"          by another process of the same N instances (names, ids, values) in a\n"
	"          set that never churned, under a pin root of its own; rounds\n"
	"          interleaved. Target: ratio <= 1.3 (what was allocated before costs\n"
	"          nothing).\n"
	"  fork    fork + _exit + waitpid, from a provider process with 50 sets of 4\n"
	"          instances (registered before by another process, as lodctr does) against\n"
	"          the same program with none (two processes forked from the same\n"
	"          parent). Target: ratio <= 1.1. Then the floor of any\n"
	"          storage that maps each set's BPF map once: a process holding 50 one-page\n"
	"          maps mapped as a segment is (shared, MADV_DONTFORK) and nothing else;\n"
	"          the same with 100 maps, the two a provider maps per set (its slots and\n"
	"          live map); and the provider against those 100 maps: what the library\n"
	"          adds to the kernel's cost of its mappings. And 50 mappings that map no\n"
	"          BPF map (private anonymous pages, read-only, never touched, inherited):\n"
	"          what any 50 mappings add to a fork. Last, what a service forks\n"
	"          for: starting /bin/true and waiting for it, by fork + execve and by\n"
	"          posix_spawn (no copy of the address space), provider against plain.\n"
	"  exit    fork + _exit + waitpid of a process that provides nothing, with 1 and with\n"
	"          --sets counter sets registered on the machine (from a helper process that\n"
	"          stays alive; registration loads the kernel exit reaper as lodctr does);\n"
	"          a consumer in a process of its own enumerating the instances of each of\n"
	"          those sets in turn, five passes (the first opens them);\n"
	"          and a provider's own exit (exit to waitpid) owning 10 against 10,000\n"
	"          instances; then owning 10 while another provider holds N instances of\n"
	"          the same set (each size N), against the same exit once that provider\n"
	"          is gone, and the kernel's time in the exit program for those exits\n"
	"          (BPF_ENABLE_STATS: the machine's dispatcher and the set's reaper),\n"
	"          and its start (PerfStartProvider + PerfSetCounterSetInfo); the exit\n"
	"          program again with the last bitmap word of the N filled by a third\n"
	"          process (when N is no multiple of 64), so that the exiting provider's\n"
	"          slots have a word of their own: the reaper reads every live slot of a\n"
	"          word the exiting process held slots in, its own and others'.\n"
	"          Target: the exit program's ratio <= 1.3 (the reaper's cost follows\n"
	"          what the exiting process owned; a provider maps the chunks of the set's\n"
	"          slots it uses, so its start and exit follow that too).\n"
	"\n"
	"Options:\n"
	"  --quick        sizes 1000,10000, 3 rounds, 200 registered sets: a short run\n"
	"  --sizes LIST   comma-separated instance counts (default 1000,10000,100000,1000000)\n"
	"  --rounds N     rounds per row (default 5; growth: 3 unless --rounds is given)\n"
	"  --sets N       registered sets of the exit row (default 1000)\n"
	"  --only ROW     run one section: growth, enum (enum, query, export), fork or exit\n"
	"  --help         this text\n"
	"\n"
	"With a fixed-capacity layout, sets are created with the smallest capacity each row\n"
	"needs (the growth set: the largest size; the churn sets: 10N, names of up to 32\n"
	"characters; the exit row's sets: capacity 1, names of 1 character).\n"
	"Needs root (CAP_BPF, CAP_PERFMON) and a bpffs at /sys/fs/bpf.\n";

static struct {
	unsigned int sizes[MAX_SIZES];
	unsigned int nr_sizes;
	unsigned int rounds;
	unsigned int growth_rounds; /* growth to the largest size is long: at most 3 by default */
	unsigned int sets;
	bool quick;
	const char *only;
} opt = {{1000, 10000, 100000, 1000000}, 4, 5, 3, 1000, false, NULL};

static char root[256];
static char root2[300]; /* the exporter row's second pin root while it exists */
static pid_t main_pid;
static GUID provider_guid = {0xbe5ca1e0, 1, 2, {1, 2, 3, 4, 5, 6, 7, 8}};

/* ---- small helpers ------------------------------------------------------------------------ */

static void die(const char *what, long code)
{
	fprintf(stderr, "bench_scale: %s failed (%ld)\n", what, code);
	if (getpid() == main_pid) {
		if (root2[0])
			remove_tree(root2);
		remove_tree(root);
	}
	exit(1);
}

struct stat2 {
	double min, med;
};

static struct stat2 stats(const double *v, unsigned int n)
{
	double s[64];
	struct stat2 r = {0, 0};

	if (!n)
		return r;
	if (n > 64)
		n = 64;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	r.min = s[0];
	r.med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	return r;
}

/* counter set GUID number @idx of kind @kind, unique to this run */
static GUID set_guid(unsigned int kind, unsigned int idx)
{
	GUID g = {0xbe5c0000u | (kind & 0xffff),
		  (uint16_t)main_pid,
		  (uint16_t)(idx >> 16),
		  {9, 8, 7, 6, (uint8_t)(idx >> 8), (uint8_t)idx, 1, 2}};

	return g;
}

struct tmpl {
	PERF_COUNTERSET_INFO info;
	PERF_COUNTER_INFO c[NR_COUNTERS];
};

static void make_tmpl(struct tmpl *t, const GUID *set)
{
	memset(t, 0, sizeof(*t));
	t->info.CounterSetGuid = *set;
	t->info.ProviderGuid = provider_guid;
	t->info.NumCounters = NR_COUNTERS;
	t->info.InstanceType = PERF_COUNTERSET_MULTI_INSTANCES;
	for (unsigned int k = 0; k < NR_COUNTERS; k++) {
		t->c[k].CounterId = k + 1;
		t->c[k].Type = PERF_COUNTER_LARGE_RAWCOUNT;
		t->c[k].Attrib = 0;
		t->c[k].Size = 8;
		t->c[k].DetailLevel = PERF_DETAIL_NOVICE;
		t->c[k].Offset = 8 * k;
	}
}

/* the same counter set as a full registration, for perflib_register_counterset */
static void make_reg(struct perflib_counterset_reg *reg, struct perflib_counter_reg *c,
		     const GUID *set)
{
	memset(reg, 0, sizeof(*reg));
	memset(c, 0, NR_COUNTERS * sizeof(*c));
	reg->provider_guid = provider_guid;
	reg->counterset_guid = *set;
	reg->instance_type = PERF_COUNTERSET_MULTI_INSTANCES;
	reg->detail_level = PERF_DETAIL_NOVICE;
	reg->provider_name = "bench_scale";
	reg->name = "bench_scale set";
	reg->help = "a counter set of bench_scale";
	reg->nr_counters = NR_COUNTERS;
	reg->counters = c;
	for (unsigned int k = 0; k < NR_COUNTERS; k++) {
		c[k].id = k + 1;
		c[k].type = PERF_COUNTER_LARGE_RAWCOUNT;
		c[k].attrib = 0;
		c[k].detail_level = PERF_DETAIL_NOVICE;
		c[k].base_id = c[k].perf_time_id = c[k].perf_freq_id = c[k].multi_id = 0xFFFFFFFF;
	}
}

/* the 32-character name of instance @id */
static void inst_name(WCHAR *dst, unsigned int id)
{
	char a[NAME_CHARS + 1];

	snprintf(a, sizeof(a), "conn-%027u", id);
	for (unsigned int i = 0; i <= NAME_CHARS; i++)
		dst[i] = (WCHAR)(unsigned char)a[i];
}

/* a provider process with counter set @set created on demand (capacity @cap, 0 = default) */
static ULONG provide(const GUID *set, unsigned int cap, unsigned int name_max, HANDLE *ret)
{
	struct tmpl t;
	ULONG st;
	int err;

	make_tmpl(&t, set);
	err = perflib_set_capacity(cap, name_max);
	if (err)
		return perflib_win32_error(err);
	st = PerfStartProvider(&provider_guid, NULL, ret);
	if (st)
		return st;
	st = PerfSetCounterSetInfo(*ret, &t.info, sizeof(t));
	perflib_set_capacity(0, 0);
	if (st)
		PerfStopProvider(*ret);
	return st;
}

/* ---- the kernel's memory of a counter set ------------------------------------------------- */

struct fdinfo {
	unsigned long long memlock;
	unsigned int map_id, map_type, key_size, value_size, max_entries;
	bool is_map;
};

static void read_fdinfo(int fd, struct fdinfo *fi)
{
	char path[64], line[160];
	FILE *f;

	memset(fi, 0, sizeof(*fi));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "map_id: %u", &fi->map_id) == 1)
			fi->is_map = true;
		sscanf(line, "memlock: %llu", &fi->memlock);
		sscanf(line, "map_type: %u", &fi->map_type);
		sscanf(line, "key_size: %u", &fi->key_size);
		sscanf(line, "value_size: %u", &fi->value_size);
		sscanf(line, "max_entries: %u", &fi->max_entries);
	}
	fclose(f);
}

struct memwalk {
	unsigned int *ids; /* maps counted already */
	size_t nr, cap;
	unsigned long long bytes;
	FILE *list; /* print each map here, or NULL */
};

static bool memwalk_seen(struct memwalk *w, unsigned int id)
{
	for (size_t i = 0; i < w->nr; i++)
		if (w->ids[i] == id)
			return true;
	if (w->nr == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 64;
		w->ids = realloc(w->ids, w->cap * sizeof(*w->ids));
		if (!w->ids)
			die("realloc", ENOMEM);
	}
	w->ids[w->nr++] = id;
	return false;
}

static void memwalk_fd(struct memwalk *w, int fd, const char *what);

/* the maps whose ids an ARRAY_OF_MAPS or HASH_OF_MAPS holds */
static void memwalk_inner(struct memwalk *w, int fd, const struct fdinfo *fi, const char *what)
{
	unsigned char key[256], next[256];
	char name[PATH_MAX];
	unsigned int id;
	bool first = true;
	int inner;

	if (fi->key_size > sizeof(key))
		return;
	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, fi->key_size);
		if (bpf_map_lookup_elem(fd, key, &id))
			continue;
		inner = bpf_map_get_fd_by_id(id);
		if (inner < 0)
			continue;
		snprintf(name, sizeof(name), "%s[%u]", what,
			 fi->key_size == 4 ? *(unsigned int *)key : 0);
		memwalk_fd(w, inner, name);
		close(inner);
	}
}

static void memwalk_fd(struct memwalk *w, int fd, const char *what)
{
	static const char *const types[] = {
		[1] = "hash",	       [2] = "array",	    [12] = "array_of_maps",
		[13] = "hash_of_maps", [5] = "percpu_hash", [6] = "percpu_array",
		[9] = "lru_hash"};
	struct fdinfo fi;

	read_fdinfo(fd, &fi);
	if (!fi.is_map || memwalk_seen(w, fi.map_id))
		return;
	w->bytes += fi.memlock;
	if (w->list && !strchr(what, '[')) {
		const char *t = fi.map_type < sizeof(types) / sizeof(*types) && types[fi.map_type]
					? types[fi.map_type]
					: "?";

		fprintf(w->list, "#   %-22s %-14s %9u x %6u B   memlock %llu\n", what, t,
			fi.max_entries, fi.value_size, fi.memlock);
	}
	if (fi.map_type == 12 || fi.map_type == 13)
		memwalk_inner(w, fd, &fi, what);
}

static void memwalk_dir(struct memwalk *w, const char *dir, const char *rel)
{
	char path[PATH_MAX], name[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);
	int fd;

	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		snprintf(name, sizeof(name), "%s%s%s", rel, *rel ? "/" : "", de->d_name);
		if (lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			memwalk_dir(w, path, name);
			continue;
		}
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		memwalk_fd(w, fd, name);
		close(fd);
	}
	if (d)
		closedir(d);
}

/* memlock bytes of every map under @dir (recursively) and of the maps they hold */
static unsigned long long mem_of_dir(const char *dir, FILE *list)
{
	struct memwalk w = {.list = list};

	memwalk_dir(&w, dir, "");
	free(w.ids);
	return w.bytes;
}

static unsigned long long mem_of_set(const GUID *set, FILE *list)
{
	char dir[PATH_MAX], g[37];

	snprintf(dir, sizeof(dir), "%s/%s", root, perflib_guid_to_string(set, g));
	return mem_of_dir(dir, list);
}

/* ---- table -------------------------------------------------------------------------------- */

static void table_header(void)
{
	printf("%-7s %-30s %9s %-11s %11s %11s %11s %11s %7s %7s %s\n", "section", "row", "n",
	       "unit", "min", "median", "base min", "base med", "ratio", "r.min", "target");
}

/* a value in 12 columns: one decimal below 100,000 */
static void put_value(double v)
{
	printf(v < 1e5 ? " %11.1f" : " %11.0f", v);
}

/* a row: the measured values, and optionally the baseline and per-round ratios */
static void row(const char *sec, const char *what, unsigned int n, const char *unit,
		const double *v, const double *base, unsigned int rounds, double target)
{
	struct stat2 a = stats(v, rounds), b, r;
	double ratio[64];

	printf("%-7s %-30s %9u %-11s", sec, what, n, unit);
	put_value(a.min);
	put_value(a.med);
	if (!base) {
		printf("\n");
		return;
	}
	for (unsigned int i = 0; i < rounds && i < 64; i++)
		ratio[i] = v[i] / base[i];
	b = stats(base, rounds);
	r = stats(ratio, rounds);
	put_value(b.min);
	put_value(b.med);
	printf(" %7.2f %7.2f", r.med, r.min);
	if (target > 0)
		printf(" <= %.2f %s", target, r.med <= target ? "ok" : "ABOVE");
	printf("\n");
}

static void row_note(const char *sec, const char *what, unsigned int n, const char *note)
{
	printf("%-7s %-30s %9u %s\n", sec, what, n, note);
}

/* ---- growth ------------------------------------------------------------------------------- */

static void section_growth(void)
{
	unsigned int max = 0, nr_cp = 0, cp[MAX_SIZES], i, r, k;
	double create[MAX_SIZES][64], mem[MAX_SIZES][64], del[64], empty[64], after[64];
	PPERF_COUNTERSET_INSTANCE *live;
	WCHAR name[NAME_CHARS + 1];
	char note[128];
	HANDLE h;
	ULONG st = 0;

	/* the largest size the layout takes: a fixed capacity must hold it */
	for (i = 0; i < opt.nr_sizes; i++) {
		if (opt.sizes[i] > max)
			max = opt.sizes[i];
	}
	for (;;) {
		GUID set = set_guid(1, max);

		st = provide(&set, max, 0, &h);
		if (!st) {
			PerfStopProvider(h);
			perflib_unregister_counterset(&set, true);
			break;
		}
		snprintf(note, sizeof(note), "refused: a set of capacity %u (Win32 error %lu)", max,
			 (unsigned long)st);
		row_note("growth", "create", max, note);
		for (k = 0, i = 0; i < opt.nr_sizes; i++)
			if (opt.sizes[i] < max && opt.sizes[i] > k)
				k = opt.sizes[i];
		if (!k)
			return;
		max = k;
	}
	for (i = 0; i < opt.nr_sizes; i++)
		if (opt.sizes[i] <= max)
			cp[nr_cp++] = opt.sizes[i];
	/* the checkpoints in increasing order */
	for (i = 0; i < nr_cp; i++)
		for (k = i + 1; k < nr_cp; k++)
			if (cp[k] < cp[i]) {
				unsigned int x = cp[i];

				cp[i] = cp[k];
				cp[k] = x;
			}
	live = malloc((size_t)max * sizeof(*live));
	if (!live)
		die("malloc", ENOMEM);
	for (r = 0; r < opt.growth_rounds; r++) {
		GUID set = set_guid(2, r);
		unsigned int done = 0;
		double t0;

		st = provide(&set, max, 0, &h);
		if (st)
			die("PerfSetCounterSetInfo (growth)", (long)st);
		if (r == 0)
			printf("# the maps of the growth set as registered, before any "
			       "instance:\n");
		empty[r] = (double)mem_of_set(&set, r == 0 ? stdout : NULL);
		for (i = 0; i < nr_cp; i++) {
			t0 = now_ns();
			for (; done < cp[i]; done++) {
				inst_name(name, done);
				live[done] = PerfCreateInstance(h, &set, name, done);
				if (!live[done])
					die("PerfCreateInstance (growth)", (long)GetLastError());
			}
			create[i][r] = (now_ns() - t0) / (cp[i] - (i ? cp[i - 1] : 0));
			mem[i][r] = (double)mem_of_set(&set, NULL) / cp[i];
		}
		t0 = now_ns();
		for (i = 0; i < done; i++) {
			st = PerfDeleteInstance(h, live[i]);
			if (st)
				die("PerfDeleteInstance (growth)", (long)st);
		}
		del[r] = (now_ns() - t0) / done;
		after[r] = (double)mem_of_set(&set, NULL);
		PerfStopProvider(h);
		perflib_unregister_counterset(&set, true);
	}
	free(live);
	for (i = 0; i < nr_cp; i++) {
		snprintf(note, sizeof(note), "create %u..%u", i ? cp[i - 1] + 1 : 1, cp[i]);
		row("growth", note, cp[i], "ns/create", create[i], NULL, opt.growth_rounds, 0);
	}
	row("growth", "delete all", max, "ns/delete", del, NULL, opt.growth_rounds, 0);
	for (i = 0; i < nr_cp; i++)
		row("growth", "memory per instance", cp[i], "B/instance", mem[i], NULL,
		    opt.growth_rounds, 0);
	row("growth", "memory, set with no instance", 0, "bytes", empty, NULL, opt.growth_rounds,
	    0);
	row("growth", "memory, all deleted", max, "bytes", after, NULL, opt.growth_rounds, 0);
}

/* ---- enumerate and query after churn ------------------------------------------------------ */

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* units before the NUL of the name of @blk, reading only inside its InstanceNameSize bytes */
static size_t block_name_len(const PERF_COUNTERSET_INSTANCE *blk, const WCHAR **ret_name)
{
	const WCHAR *s = (const WCHAR *)((const BYTE *)blk + blk->InstanceNameOffset);
	size_t n = 0, units = blk->InstanceNameSize / 2;
	uint64_t w;

	for (; n + 4 <= units; n += 4) {
		memcpy(&w, s + n, 8);
		if ((w - 0x0001000100010001ull) & ~w & 0x8000800080008000ull)
			break;
	}
	while (n < units && s[n])
		n++;
	*ret_name = s;
	return n;
}

/*
 * The plain loop: the records PerfEnumerateCounterSetInstances (@values false) or a wildcard
 * PerfQueryCounterData (@values true: and the 8 PERF_COUNTER_DATA) writes for the live
 * blocks @blk, built into @out. Returns the bytes written.
 */
static size_t plain_build(PPERF_COUNTERSET_INSTANCE const *blk, unsigned int n, uint8_t *out,
			  bool values)
{
	PERF_COUNTER_DATA d = {.dwDataSize = 8, .dwSize = 16};
	uint8_t *p = out;

	for (unsigned int i = 0; i < n; i++) {
		const PERF_COUNTERSET_INSTANCE *b = blk[i];
		PERF_INSTANCE_HEADER hdr = {.InstanceId = b->InstanceId};
		const WCHAR *name;
		size_t len = block_name_len(b, &name), used = sizeof(hdr) + (len + 1) * 2;
		const uint8_t *ctr = (const uint8_t *)(b + 1);

		hdr.Size = (ULONG)round8(used);
		memcpy(p, &hdr, sizeof(hdr));
		memcpy(p + sizeof(hdr), name, len * 2);
		memset(p + sizeof(hdr) + len * 2, 0, hdr.Size - sizeof(hdr) - len * 2);
		p += hdr.Size;
		if (!values)
			continue;
		for (unsigned int k = 0; k < NR_COUNTERS; k++, p += 16) {
			memcpy(p, &d, sizeof(d));
			memcpy(p + sizeof(d), ctr + 8 * k, 8);
		}
	}
	return (size_t)(p - out);
}

/* ns per call of @body repeated for at least @min_ns (at least once) */
#define TIMED(result, min_ns, body)                                                                \
	do {                                                                                       \
		double t0_ = now_ns(), t_;                                                         \
		unsigned long reps_ = 0;                                                           \
		do {                                                                               \
			body;                                                                      \
			reps_++;                                                                   \
			t_ = now_ns() - t0_;                                                       \
		} while (t_ < (min_ns));                                                           \
		(result) = t_ / (double)reps_;                                                     \
	} while (0)

/* the counter values of churn instance @i (the enum and export rows read them back) */
static void churn_values(HANDLE h, PPERF_COUNTERSET_INSTANCE inst, unsigned long long i)
{
	for (unsigned int k = 0; k < NR_COUNTERS; k++)
		PerfSetULongLongCounterValue(h, inst, k + 1, i * 16 + k);
}

/* exporter scrapes of @n live instances at most (1M x 8 counters is 0.6 GB of text) */
#define EXPORT_MAX 100000

static void exporter_rows(unsigned int n);

static void churn_one(unsigned int n)
{
	struct {
		PERF_COUNTER_IDENTIFIER id;
		WCHAR name[4];
	} spec;
	double api_e[64], plain_e[64], api_q[64], plain_q[64], min_ns = opt.quick ? 2e7 : 1e8;
	unsigned long long total = 10ull * n, i;
	PPERF_COUNTERSET_INSTANCE *all, *order;
	uint8_t *ebuf, *qbuf, *out;
	WCHAR name[NAME_CHARS + 1];
	DWORD esize = 0, qsize = 0, got;
	GUID set = set_guid(3, n);
	size_t len, off;
	unsigned int r, nr;
	char note[160];
	HANDLE h, q;
	ULONG st;

	if (total > (1u << 31)) {
		row_note("enum", "10x churn", n, "skipped: 10N instances past 2^31");
		return;
	}
	st = provide(&set, (unsigned int)total, NAME_CHARS + 1, &h);
	if (st) {
		snprintf(note, sizeof(note), "refused: a set of capacity %llu (Win32 error %lu)",
			 total, (unsigned long)st);
		row_note("enum", "10x churn", n, note);
		row_note("query", "10x churn", n, note);
		return;
	}
	all = malloc(total * sizeof(*all));
	order = malloc((size_t)n * sizeof(*order));
	if (!all || !order)
		die("malloc", ENOMEM);
	for (i = 0; i < total; i++) {
		inst_name(name, (unsigned int)i);
		all[i] = PerfCreateInstance(h, &set, name, (ULONG)i);
		if (!all[i]) {
			snprintf(note, sizeof(note),
				 "PerfCreateInstance number %llu of %llu failed (Win32 error %lu)",
				 i + 1, total, (unsigned long)GetLastError());
			row_note("enum", "10x churn", n, note);
			row_note("query", "10x churn", n, note);
			while (i--)
				PerfDeleteInstance(h, all[i]);
			goto out;
		}
	}
	/* keep every tenth: the live instances are spread over everything ever allocated */
	for (i = 0; i < total; i++) {
		if (i % 10 == 0) {
			churn_values(h, all[i], i);
		} else if ((st = PerfDeleteInstance(h, all[i]))) {
			die("PerfDeleteInstance (churn)", (long)st);
		}
	}

	/* the API's output, and the live blocks in the order it lists them */
	st = PerfEnumerateCounterSetInstances(NULL, &set, NULL, 0, &esize);
	if (st != ERROR_NOT_ENOUGH_MEMORY)
		die("sizing PerfEnumerateCounterSetInstances", (long)st);
	ebuf = malloc(esize);
	out = malloc((size_t)n * (sizeof(PERF_INSTANCE_HEADER) + round8(2 * (NAME_CHARS + 1)) +
				  16 * NR_COUNTERS));
	if (!ebuf || !out)
		die("malloc", ENOMEM);
	st = PerfEnumerateCounterSetInstances(NULL, &set, (PPERF_INSTANCE_HEADER)ebuf, esize, &got);
	if (st || got != esize)
		die("PerfEnumerateCounterSetInstances", (long)st);
	for (nr = 0, off = 0; off < got; nr++) {
		const PERF_INSTANCE_HEADER *ih = (const void *)(ebuf + off);

		if (nr >= n || ih->InstanceId % 10 || ih->InstanceId >= total || !ih->Size)
			die("PerfEnumerateCounterSetInstances output", (long)ih->InstanceId);
		order[nr] = all[ih->InstanceId];
		off += ih->Size;
	}
	if (nr != n)
		die("PerfEnumerateCounterSetInstances count", (long)nr);
	len = plain_build(order, n, out, false);
	if (len != got || memcmp(out, ebuf, len))
		die("plain enumeration differs from the API's", (long)len);

	memset(&spec, 0, sizeof(spec));
	spec.id.CounterSetGuid = set;
	spec.id.Size = sizeof(spec);
	spec.id.CounterId = PERF_WILDCARD_COUNTER;
	spec.id.InstanceId = 0xFFFFFFFF;
	spec.name[0] = u'*';
	st = PerfOpenQueryHandle(NULL, &q);
	if (!st)
		st = PerfAddCounters(q, &spec.id, sizeof(spec));
	if (st || spec.id.Status)
		die("PerfAddCounters", (long)(st ? st : spec.id.Status));
	st = PerfQueryCounterData(q, NULL, 0, &qsize);
	if (st != ERROR_NOT_ENOUGH_MEMORY)
		die("sizing PerfQueryCounterData", (long)st);
	qbuf = malloc(qsize);
	if (!qbuf)
		die("malloc", ENOMEM);
	st = PerfQueryCounterData(q, (PPERF_DATA_HEADER)qbuf, qsize, &got);
	len = plain_build(order, n, out, true);
	if (st || got != qsize || len > got || memcmp(out, qbuf + got - len, len))
		die("plain query records differ from the API's", (long)st);

	for (r = 0; r < opt.rounds; r++) {
		TIMED(api_e[r], min_ns, {
			st = PerfEnumerateCounterSetInstances(
				NULL, &set, (PPERF_INSTANCE_HEADER)ebuf, esize, &got);
			if (st || got != esize)
				die("PerfEnumerateCounterSetInstances", (long)st);
		});
		TIMED(plain_e[r], min_ns, {
			if (!plain_build(order, n, out, false))
				die("plain enumeration", 0);
		});
		TIMED(api_q[r], min_ns, {
			st = PerfQueryCounterData(q, (PPERF_DATA_HEADER)qbuf, qsize, &got);
			if (st || got != qsize)
				die("PerfQueryCounterData", (long)st);
		});
		TIMED(plain_q[r], min_ns, {
			if (!plain_build(order, n, out, true))
				die("plain query", 0);
		});
		api_e[r] /= n;
		plain_e[r] /= n;
		api_q[r] /= n;
		plain_q[r] /= n;
	}
	row("enum", "PerfEnumerateCounterSetInst..", n, "ns/instance", api_e, plain_e, opt.rounds,
	    1.3);
	row("query", "PerfQueryCounterData wildcard", n, "ns/instance", api_q, plain_q, opt.rounds,
	    1.5);
	PerfCloseQueryHandle(q);
	free(qbuf);
	free(ebuf);
	free(out);
	exporter_rows(n);
	for (i = 0; i < total; i += 10)
		PerfDeleteInstance(h, all[i]);
out:
	free(all);
	free(order);
	PerfStopProvider(h);
	perflib_unregister_counterset(&set, true);
}

/* ---- fork --------------------------------------------------------------------------------- */

static void run_child(void (*fn)(unsigned int), unsigned int arg);

static void xwrite(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		die("write", errno);
}

static void xread(int fd, void *p, size_t n)
{
	if (read(fd, p, n) != (ssize_t)n)
		die("read", errno);
}

/* ns per fork + _exit + waitpid, over @iters iterations */
static double fork_loop(unsigned int iters)
{
	double t0 = now_ns();
	int status;
	pid_t pid;

	for (unsigned int i = 0; i < iters; i++) {
		pid = fork();
		if (pid < 0)
			die("fork", errno);
		if (!pid)
			_exit(0);
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid", errno);
	}
	return (now_ns() - t0) / iters;
}

/*
 * ns per start and wait of /bin/true, over @iters iterations: by fork + execve, or by
 * posix_spawn (glibc: clone(CLONE_VM | CLONE_VFORK), no copy of the address space; what
 * system() and popen() use)
 */
static double exec_loop(unsigned int iters, bool spawn)
{
	char *argv[] = {"true", NULL};
	double t0 = now_ns();
	int status;
	pid_t pid;

	for (unsigned int i = 0; i < iters; i++) {
		if (spawn) {
			errno = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);
			if (errno)
				die("posix_spawn", errno);
		} else {
			pid = fork();
			if (pid < 0)
				die("fork", errno);
			if (!pid) {
				execve("/bin/true", argv, environ);
				_exit(127);
			}
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			die("/bin/true", status);
	}
	return (now_ns() - t0) / iters;
}

/* a worker's commands: an iteration count, with the loop to run in the top bits */
#define LOOP_FORK 0
#define LOOP_EXEC (1u << 30)
#define LOOP_SPAWN (2u << 30)
#define LOOP_SCRAPE (3u << 30) /* exporter scrapes for at least 10^count ns (a worker_scrape) */
#define LOOP_KIND(c) ((c) & (3u << 30))
#define LOOP_ITERS(c) ((c) & ~(3u << 30))

static double worker_scrape(unsigned int log10_ns);

/*
 * A worker process: runs @setup (may be NULL), says it is ready, then for each command
 * (an iteration count and a loop: LOOP_*) runs that loop and answers with its ns per
 * iteration; a count of 0 ends it.
 */
struct worker {
	pid_t pid;
	int cmd, res;
};

/*
 * Fork loops run on one CPU, the last: the child runs where its parent waits for it, and
 * neither is moved between CPUs mid-loop. On the 2-vCPU machine this took the spread of the
 * plain loop's minima across runs from about 1.6x (190-310 us) to about 1.2x.
 */
static void pin_last_cpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(n > 0 ? (int)n - 1 : 0, &set);
	sched_setaffinity(0, sizeof(set), &set); /* a loop on any CPU if refused */
}

static void worker_start(struct worker *w, void (*setup)(void))
{
	int c[2], r[2];
	unsigned int iters;
	double ns;

	if (pipe(c) || pipe(r))
		die("pipe", errno);
	fflush(NULL);
	w->pid = fork();
	if (w->pid < 0)
		die("fork", errno);
	if (!w->pid) {
		close(c[1]);
		close(r[0]);
		pin_last_cpu();
		if (setup)
			setup();
		ns = 0;
		xwrite(r[1], &ns, sizeof(ns));
		for (;;) {
			xread(c[0], &iters, sizeof(iters));
			if (!iters)
				_exit(0);
			switch (LOOP_KIND(iters)) {
			case LOOP_EXEC:
				ns = exec_loop(LOOP_ITERS(iters), false);
				break;
			case LOOP_SPAWN:
				ns = exec_loop(LOOP_ITERS(iters), true);
				break;
			case LOOP_SCRAPE:
				ns = worker_scrape(LOOP_ITERS(iters));
				break;
			case LOOP_FORK:
				ns = fork_loop(iters);
				break;
			}
			xwrite(r[1], &ns, sizeof(ns));
		}
	}
	close(c[0]);
	close(r[1]);
	w->cmd = c[1];
	w->res = r[0];
	xread(w->res, &ns, sizeof(ns));
}

static double worker_run(struct worker *w, unsigned int iters)
{
	double ns;

	xwrite(w->cmd, &iters, sizeof(iters));
	xread(w->res, &ns, sizeof(ns));
	return ns;
}

static void worker_stop(struct worker *w)
{
	unsigned int zero = 0;
	int status;

	xwrite(w->cmd, &zero, sizeof(zero));
	waitpid(w->pid, &status, 0);
	close(w->cmd);
	close(w->res);
}

/* ---- the exporter after churn ---------------------------------------------------------- */

/*
 * What the exporter workers share: the live instances of a row, and in each scraping
 * worker its collector and output (the set that never churned is under root2)
 */
static struct {
	unsigned int n;
	struct collector *col;
	struct exp_buf out;
} ex;

/* use pin root @path in this process (a worker of the set that never churned) */
static void use_root(const char *path)
{
	if (setenv("PERFLIB_ROOT", path, 1) || perflib_set_pin_root(path))
		die("perflib_set_pin_root", errno);
}

/* ns per scrape of the root, scraping for at least 10^@log10_ns ns (one scrape at least) */
static double worker_scrape(unsigned int log10_ns)
{
	double ns, min_ns = 1;

	while (log10_ns--)
		min_ns *= 10;
	TIMED(ns, min_ns, {
		ex.out.len = 0;
		if (collector_scrape(ex.col, EXP_FMT_OPENMETRICS, &ex.out))
			die(collector_error(ex.col), 0);
	});
	if (collector_stats(ex.col)->nr_instances != ex.n)
		die("exporter scrape: instances exported",
		    (long)collector_stats(ex.col)->nr_instances);
	return ns;
}

/* a scraping worker of the root it was given (its first scrape builds the collector) */
static void scraper_setup(void)
{
	if (collector_new(&ex.col))
		die("collector_new", ENOMEM);
	worker_scrape(0);
}

static void compact_scraper_setup(void)
{
	use_root(root2);
	scraper_setup();
}

/*
 * The provider of the set that never churned: ex.n instances with the names, ids and
 * values of the churned set's live ones (every tenth id), in the lowest slots. It stays
 * until stopped (its exit frees them).
 */
static void compact_provider_setup(void)
{
	GUID set = set_guid(7, ex.n);
	WCHAR name[NAME_CHARS + 1];
	PPERF_COUNTERSET_INSTANCE inst;
	HANDLE h;
	ULONG st;

	use_root(root2);
	if ((st = provide(&set, 0, NAME_CHARS + 1, &h)))
		die("provide (export)", (long)st);
	for (unsigned long long i = 0; i < 10ull * ex.n; i += 10) {
		inst_name(name, (unsigned int)i);
		inst = PerfCreateInstance(h, &set, name, (ULONG)i);
		if (!inst)
			die("PerfCreateInstance (export)", (long)GetLastError());
		churn_values(h, inst, i);
	}
}

/*
 * The exporter (PDH collection, sampling, OpenMetrics text), in processes of its own as it
 * runs: one scrapes the churned set of this process (@n live instances among 10 x @n ever
 * made, every tenth live), the other the same @n instances in a set that never churned,
 * under a pin root of its own (each scrape takes every set of its root). Rounds
 * interleaved, as every other row's: the ratio is the cost of the history.
 */
static void exporter_rows(unsigned int n)
{
	unsigned int log10_ns = opt.quick ? 7 : 8;
	double churned[64], compact[64];
	struct worker prov, a, b;

	if (n > EXPORT_MAX) {
		row_note("export", "exporter scrape", n, "skipped: 8N series of text per scrape");
		return;
	}
	ex.n = n;
	snprintf(root2, sizeof(root2), "%s-compact", root);
	if (mkdir(root2, 0755)) {
		root2[0] = 0;
		die("mkdir (export root)", errno);
	}
	worker_start(&prov, compact_provider_setup);
	worker_start(&a, scraper_setup);
	worker_start(&b, compact_scraper_setup);
	for (unsigned int r = 0; r < opt.rounds; r++) {
		if (r % 2) {
			compact[r] = worker_run(&b, LOOP_SCRAPE | log10_ns) / n;
			churned[r] = worker_run(&a, LOOP_SCRAPE | log10_ns) / n;
		} else {
			churned[r] = worker_run(&a, LOOP_SCRAPE | log10_ns) / n;
			compact[r] = worker_run(&b, LOOP_SCRAPE | log10_ns) / n;
		}
	}
	worker_stop(&a);
	worker_stop(&b);
	worker_stop(&prov);
	remove_tree(root2);
	root2[0] = 0;
	row("export", "exporter scrape, churned/new", n, "ns/instance", churned, compact,
	    opt.rounds, 1.3);
}

/*
 * The fork row's @n sets, registered as lodctr does, in a process of their own (run_child):
 * the provider then only opens them, as in a service whose sets were registered at install
 * or boot (a registration in the provider left it 590 KB of heap, 117 KB without: libbpf's
 * parse of the kernel's BTF for the set's reaper, freed but kept by malloc, and fork()
 * copies it).
 */
static void fork_register_sets(unsigned int n)
{
	struct perflib_counter_reg c[NR_COUNTERS];
	struct perflib_counterset_reg reg;
	int err;

	for (unsigned int s = 0; s < n; s++) {
		GUID set = set_guid(4, s);

		make_reg(&reg, c, &set);
		err = perflib_register_counterset(&reg, NULL);
		if (err && err != -EEXIST)
			die("perflib_register_counterset (fork)", err);
	}
}

/* the fork row's provider: FORK_SETS sets of FORK_INSTANCES instances, default capacity */
static void fork_provider_setup(void)
{
	WCHAR name[NAME_CHARS + 1];
	HANDLE h;
	ULONG st;

	for (unsigned int s = 0; s < FORK_SETS; s++) {
		GUID set = set_guid(4, s);
		struct tmpl t;

		make_tmpl(&t, &set);
		if (!s && (st = PerfStartProvider(&provider_guid, NULL, &h)))
			die("PerfStartProvider (fork)", (long)st);
		if ((st = PerfSetCounterSetInfo(h, &t.info, sizeof(t))))
			die("PerfSetCounterSetInfo (fork)", (long)st);
		for (unsigned int i = 0; i < FORK_INSTANCES; i++) {
			inst_name(name, i);
			if (!PerfCreateInstance(h, &set, name, i))
				die("PerfCreateInstance (fork)", (long)GetLastError());
		}
	}
	/* the handle stays open: the process stays a provider until it ends */
}

/*
 * @n one-page mmapable array maps, each mapped once as the library maps a segment (shared,
 * MADV_DONTFORK), and nothing else
 */
static void fork_maps(unsigned int n)
{
	for (unsigned int s = 0; s < n; s++) {
		LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
		int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 512, &o);
		void *p;

		if (fd < 0)
			die("bpf_map_create (fork floor)", errno);
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED || madvise(p, 4096, MADV_DONTFORK))
			die("mmap (fork floor)", errno);
		close(fd);
	}
}

/*
 * The floor of any storage where a provider writes its counters through a mapping of each
 * set's BPF map: one mapping per set
 */
static void fork_floor_setup(void)
{
	fork_maps(FORK_SETS);
}

/*
 * 50 mappings that are no BPF map at all: private anonymous pages, read-only, never
 * touched, one page apart, which the child inherits (no page to copy). What any 50
 * mappings add to a fork, whatever they map.
 */
static void fork_anon_setup(void)
{
	for (unsigned int s = 0; s < FORK_SETS; s++) {
		void *p = mmap(NULL, 2 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		/* one page kept, one given back: a gap, so the kernel cannot merge them */
		if (p == MAP_FAILED || munmap((char *)p + 4096, 4096))
			die("mmap (fork floor)", errno);
	}
}

/* the provider's own mappings without the library: two per set (slots and live map) */
static void fork_pairs_setup(void)
{
	fork_maps(2 * FORK_SETS);
}

static void section_fork(void)
{
	unsigned int iters = opt.quick ? 100 : 300, r;
	double with[64], without[64], bare[64], pairs[64], anon[64];
	double exec_with[64], exec_without[64], spawn_with[64], spawn_without[64];
	struct worker a, b, f, p, m;

	run_child(fork_register_sets, FORK_SETS);
	worker_start(&a, fork_provider_setup);
	worker_start(&b, NULL);
	worker_start(&f, fork_floor_setup);
	worker_start(&p, fork_pairs_setup);
	worker_start(&m, fork_anon_setup);
	worker_run(&a, iters / 10); /* warm up all */
	worker_run(&b, iters / 10);
	worker_run(&f, iters / 10);
	worker_run(&p, iters / 10);
	worker_run(&m, iters / 10);
	for (r = 0; r < opt.rounds; r++) {
		if (r % 2) {
			with[r] = worker_run(&a, iters);
			pairs[r] = worker_run(&p, iters);
			bare[r] = worker_run(&f, iters);
			anon[r] = worker_run(&m, iters);
			without[r] = worker_run(&b, iters);
		} else {
			without[r] = worker_run(&b, iters);
			anon[r] = worker_run(&m, iters);
			bare[r] = worker_run(&f, iters);
			pairs[r] = worker_run(&p, iters);
			with[r] = worker_run(&a, iters);
		}
		with[r] /= 1000;
		without[r] /= 1000;
		bare[r] /= 1000;
		pairs[r] /= 1000;
		anon[r] /= 1000;
	}
	/* what a service does with fork: start a program, by fork + exec or by posix_spawn */
	for (r = 0; r < opt.rounds; r++) {
		unsigned int n = iters / 3;

		if (r % 2) {
			exec_with[r] = worker_run(&a, n | LOOP_EXEC);
			exec_without[r] = worker_run(&b, n | LOOP_EXEC);
			spawn_with[r] = worker_run(&a, n | LOOP_SPAWN);
			spawn_without[r] = worker_run(&b, n | LOOP_SPAWN);
		} else {
			exec_without[r] = worker_run(&b, n | LOOP_EXEC);
			exec_with[r] = worker_run(&a, n | LOOP_EXEC);
			spawn_without[r] = worker_run(&b, n | LOOP_SPAWN);
			spawn_with[r] = worker_run(&a, n | LOOP_SPAWN);
		}
		exec_with[r] /= 1000;
		exec_without[r] /= 1000;
		spawn_with[r] /= 1000;
		spawn_without[r] /= 1000;
	}
	worker_stop(&a);
	worker_stop(&b);
	worker_stop(&f);
	worker_stop(&p);
	worker_stop(&m);
	for (unsigned int s = 0; s < FORK_SETS; s++) {
		GUID set = set_guid(4, s);

		perflib_unregister_counterset(&set, true);
	}
	row("fork", "fork+_exit+wait, 50 sets", FORK_SETS, "us/fork", with, without, opt.rounds,
	    1.1);
	row("fork", "floor: 50 maps mapped once", FORK_SETS, "us/fork", bare, without, opt.rounds,
	    0);
	row("fork", "floor: 100 maps (2 per set)", FORK_SETS, "us/fork", pairs, without, opt.rounds,
	    0);
	row("fork", "50 anonymous mappings", FORK_SETS, "us/fork", anon, without, opt.rounds, 0);
	/* what the library adds to the mappings it keeps: the provider against that floor */
	row("fork", "50 sets against 100 maps", FORK_SETS, "us/fork", with, pairs, opt.rounds, 0);
	row("fork", "fork+exec /bin/true, 50 sets", FORK_SETS, "us/start", exec_with, exec_without,
	    opt.rounds, 0);
	row("fork", "posix_spawn /bin/true, 50 sets", FORK_SETS, "us/start", spawn_with,
	    spawn_without, opt.rounds, 0);
}

/* ---- exit --------------------------------------------------------------------------------- */

/* register (@add) or unregister exit-row sets [@from, @to); ns per set */
static double exit_sets(bool add, unsigned int from, unsigned int to)
{
	struct perflib_pin_opts po = PERFLIB_PIN_OPTS_INIT;
	struct perflib_counter_reg c[NR_COUNTERS];
	struct perflib_counterset_reg reg;
	double t0 = now_ns();
	int err;

	po.capacity = 1; /* the smallest set a fixed-capacity layout allows */
	po.name_max = 2;
	for (unsigned int i = from; i < to; i++) {
		GUID set = set_guid(5, i);

		if (add) {
			make_reg(&reg, c, &set);
			err = perflib_register_counterset(&reg, &po);
		} else {
			err = perflib_unregister_counterset(&set, true);
		}
		if (err)
			die(add ? "perflib_register_counterset" : "perflib_unregister_counterset",
			    err);
	}
	return to > from ? (now_ns() - t0) / (to - from) : 0;
}

/*
 * The registrar: a helper process that registers the exit row's sets and stays alive.
 * Commands: 1 = register sets 1..S-1, 2 = unregister them, 0 = unregister set 0 and end.
 */
static void registrar_start(struct worker *w)
{
	int c[2], r[2], cmd;
	double ns;

	if (pipe(c) || pipe(r))
		die("pipe", errno);
	fflush(NULL);
	w->pid = fork();
	if (w->pid < 0)
		die("fork", errno);
	if (!w->pid) {
		close(c[1]);
		close(r[0]);
		ns = exit_sets(true, 0, 1);
		xwrite(r[1], &ns, sizeof(ns));
		for (;;) {
			xread(c[0], &cmd, sizeof(cmd));
			if (!cmd) {
				exit_sets(false, 0, 1);
				_exit(0);
			}
			ns = exit_sets(cmd == 1, 1, opt.sets);
			xwrite(r[1], &ns, sizeof(ns));
		}
	}
	close(c[0]);
	close(r[1]);
	w->cmd = c[1];
	w->res = r[0];
	xread(w->res, &ns, sizeof(ns));
}

static double registrar_cmd(struct worker *w, int cmd)
{
	double ns = 0;

	xwrite(w->cmd, &cmd, sizeof(cmd));
	if (cmd)
		xread(w->res, &ns, sizeof(ns));
	return ns;
}

/*
 * The machine's exit program (the dispatcher that tail-calls the sets' reapers), from its
 * pinned link, for its run time (BPF_ENABLE_STATS); -1 without it
 */
static int exit_prog_fd(void)
{
	struct bpf_link_info li;
	__u32 len = sizeof(li);
	char path[512];
	int lfd, fd;

	snprintf(path, sizeof(path), "%s/exit-reaper/link", root);
	lfd = bpf_obj_get(path);
	if (lfd < 0)
		return -1;
	memset(&li, 0, sizeof(li));
	fd = bpf_obj_get_info_by_fd(lfd, &li, &len) ? -1 : bpf_prog_get_fd_by_id(li.prog_id);
	close(lfd);
	return fd;
}

/* ns the kernel has spent in program @fd since stats were enabled (0 without) */
static double prog_run_ns(int fd)
{
	struct bpf_prog_info pi;
	__u32 len = sizeof(pi);

	memset(&pi, 0, sizeof(pi));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &pi, &len))
		return 0;
	return (double)pi.run_time_ns;
}

/*
 * the exit program's ns in the last provider_exit() (its run time moved by that much), and
 * that provider's start (PerfStartProvider + PerfSetCounterSetInfo)
 */
static double exit_prog_ns, provider_start_ns;
static int exit_prog = -1;

/*
 * Fork a provider holding @n instances of @set (ids from @first on): it says so on @ready
 * (the ns its PerfStartProvider and PerfSetCounterSetInfo took, a double) and exits when @go
 * gives it a byte or is closed. Pipes made here; the pid is returned.
 */
static pid_t provider_fork(const GUID *set, unsigned int n, unsigned int first, int ready[2],
			   int go[2])
{
	WCHAR name[NAME_CHARS + 1];
	double start_ns;
	struct tmpl t;
	pid_t pid;
	HANDLE h;
	char b = 0;

	if (pipe(ready) || pipe(go))
		die("pipe", errno);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid)
		return pid;
	close(go[1]);
	make_tmpl(&t, set);
	start_ns = now_ns();
	if (PerfStartProvider(&provider_guid, NULL, &h) ||
	    PerfSetCounterSetInfo(h, &t.info, sizeof(t)))
		die("provider (exit)", 0);
	start_ns = now_ns() - start_ns;
	for (unsigned int i = 0; i < n; i++) {
		inst_name(name, first + i);
		if (!PerfCreateInstance(h, set, name, first + i))
			die("PerfCreateInstance (exit)", (long)GetLastError());
	}
	/* ready, with what its start took */
	xwrite(ready[1], &start_ns, sizeof(start_ns));
	while (read(go[0], &b, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* a provider owning @n instances of @set: ns from its _exit to waitpid's return */
static double provider_exit(const GUID *set, unsigned int n, unsigned int idx)
{
	int ready[2], go[2], status;
	double t0;
	pid_t pid;
	char b = 0;

	pid = provider_fork(set, n, idx * EXIT_MANY, ready, go);
	xread(ready[0], &provider_start_ns, sizeof(provider_start_ns));
	exit_prog_ns = prog_run_ns(exit_prog);
	t0 = now_ns();
	xwrite(go[1], &b, 1);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("provider (exit) child", status);
	t0 = now_ns() - t0;
	exit_prog_ns = prog_run_ns(exit_prog) - exit_prog_ns;
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	return t0;
}

/*
 * a provider holding @n instances of @set (ids from @first on) until told to go: *ret_go
 * gets the pipe end to close for that; the pid is returned
 */
static pid_t holder_start(const GUID *set, unsigned int n, unsigned int first, int *ret_go)
{
	int ready[2], go[2];
	double start_ns;
	pid_t pid;

	pid = provider_fork(set, n, first, ready, go);
	close(go[0]);
	close(ready[1]);
	xread(ready[0], &start_ns, sizeof(start_ns));
	close(ready[0]);
	*ret_go = go[1];
	return pid;
}

/*
 * opt.rounds rounds of @each exits of a provider owning 10 instances of @set: µs per exit in
 * whole[r], of them in the exit program in prog[r], and of its start in start[r]
 */
static void few_exits(const GUID *set, unsigned int each, double *whole, double *prog,
		      double *start)
{
	for (unsigned int r = 0; r < opt.rounds; r++) {
		whole[r] = prog[r] = start[r] = 0;
		for (unsigned int j = 0; j < each; j++) {
			whole[r] += provider_exit(set, EXIT_FEW, 2 * j + 1);
			prog[r] += exit_prog_ns;
			start[r] += provider_start_ns;
		}
		whole[r] /= 1000.0 * each;
		prog[r] /= 1000.0 * each;
		start[r] /= 1000.0 * each;
	}
}

#define CONSUMER_PASSES 5

static double *consumer_us; /* consumer_child's answers: a shared page */

/*
 * A consumer, in a process of its own (run_child), enumerates the instances of each of the
 * @n exit-row sets in turn, CONSUMER_PASSES times: us per set of each pass in consumer_us
 * (the first pass opens every set; the others find them open, or open them again if they
 * were let go)
 */
static void consumer_child(unsigned int n)
{
	PERF_INSTANCE_HEADER buf[8];
	DWORD got;

	for (unsigned int pass = 0; pass < CONSUMER_PASSES; pass++) {
		double t0 = now_ns();

		for (unsigned int i = 0; i < n; i++) {
			GUID set = set_guid(5, i);

			if (PerfEnumerateCounterSetInstances(NULL, &set, buf, sizeof(buf), &got))
				die("PerfEnumerateCounterSetInstances (many sets)", i);
		}
		consumer_us[pass] = (now_ns() - t0) / 1000 / n;
	}
}

/* consumer_child over @n sets: us per set of each pass into @ret */
static void consumer_passes(unsigned int n, double *ret)
{
	consumer_us = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (consumer_us == MAP_FAILED)
		die("mmap", errno);
	run_child(consumer_child, n);
	memcpy(ret, consumer_us, CONSUMER_PASSES * sizeof(*ret));
	munmap(consumer_us, 4096);
}

static void section_exit(void)
{
	unsigned int iters = opt.quick ? 200 : 500, r, j, each = 5;
	double one[64], many[64], few[64], lots[64], reg_ns[64], unreg_ns[64], mem[64];
	double passes[CONSUMER_PASSES] = {0};
	unsigned int nr_reg = 0, nr_unreg = 0;
	int stats_fd;
	struct perflib_pin_opts po = PERFLIB_PIN_OPTS_INIT;
	struct perflib_counter_reg c[NR_COUNTERS];
	struct perflib_counterset_reg reg;
	GUID set = set_guid(6, 0);
	struct worker w;
	char what[64];
	DWORD size = 0;
	pid_t pid;
	int status, err;

	/* a process that provides nothing, with 1 and with opt.sets sets on the machine */
	registrar_start(&w);
	fork_loop(iters / 10);
	for (r = 0; r < opt.rounds; r++) {
		if (r % 2 == 0) {
			one[r] = fork_loop(iters) / 1000;
			reg_ns[nr_reg++] = registrar_cmd(&w, 1) / 1e6;
			mem[r] = (double)mem_of_dir(root, NULL) / 1024;
			many[r] = fork_loop(iters) / 1000;
			if (!r)
				consumer_passes(opt.sets, passes);
		} else {
			many[r] = fork_loop(iters) / 1000;
			unreg_ns[nr_unreg++] = registrar_cmd(&w, 2) / 1e6;
			mem[r] = mem[r - 1];
			one[r] = fork_loop(iters) / 1000;
		}
	}
	if (opt.rounds % 2)
		unreg_ns[nr_unreg++] = registrar_cmd(&w, 2) / 1e6;
	registrar_cmd(&w, 0);
	waitpid(w.pid, &status, 0);
	snprintf(what, sizeof(what), "plain fork loop, %u sets", opt.sets);
	row("exit", what, opt.sets, "us/fork", many, one, opt.rounds, 0);
	row("exit", "(register a set, lodctr's way)", opt.sets, "ms/set", reg_ns, NULL, nr_reg, 0);
	row("exit", "(unregister a set)", opt.sets, "ms/set", unreg_ns, NULL, nr_unreg, 0);
	row("exit", "memory of the registered sets", opt.sets, "KiB", mem, NULL, opt.rounds, 0);
	row("exit", "consumer: each set in turn, opened", opt.sets, "us/set", passes, NULL, 1, 0);
	row("exit", "  the same, again", opt.sets, "us/set", passes + 1, NULL, CONSUMER_PASSES - 1,
	    0);

	/* a provider's own exit: 10 against 10,000 instances */
	fflush(NULL);
	pid = fork();
	if (!pid) {
		po.capacity = EXIT_CAPACITY_BIG;
		po.name_max = NAME_CHARS + 1;
		make_reg(&reg, c, &set);
		err = perflib_register_counterset(&reg, &po);
		_exit(err ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		row_note("exit", "provider exit", EXIT_MANY, "refused: a set of capacity 1100000");
		return;
	}
	for (r = 0; r < opt.rounds; r++) {
		few[r] = lots[r] = 0;
		for (j = 0; j < each; j++) {
			if ((r + j) % 2) {
				lots[r] += provider_exit(&set, EXIT_MANY, 2 * j);
				few[r] += provider_exit(&set, EXIT_FEW, 2 * j + 1);
			} else {
				few[r] += provider_exit(&set, EXIT_FEW, 2 * j + 1);
				lots[r] += provider_exit(&set, EXIT_MANY, 2 * j);
			}
		}
		few[r] /= 1000.0 * each;
		lots[r] /= 1000.0 * each;
	}
	row("exit", "provider exit, 10 instances", EXIT_FEW, "us/exit", few, NULL, opt.rounds, 0);
	row("exit", "provider exit, 10000 instances", EXIT_MANY, "us/exit", lots, few, opt.rounds,
	    0);
	/*
	 * the same exit of a provider owning 10, while another provider holds N instances of
	 * the set: what the exit costs must follow what the exiting process owned
	 */
	/* the kernel's time in the exit program, per exit (BPF_ENABLE_STATS while measured) */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	exit_prog = stats_fd < 0 ? -1 : exit_prog_fd();
	for (unsigned int i = 0; i < opt.nr_sizes; i++) {
		unsigned int n = opt.sizes[i];
		double beside[64], alone[64], kbeside[64], kalone[64], sbeside[64], salone[64];
		double own[64], kown[64], sown[64];
		int go_fd, pad_go = -1, st;
		pid_t holder, pad = 0;

		if (n + 2 * EXIT_MANY > EXIT_CAPACITY_BIG)
			continue;
		holder = holder_start(&set, n, 100 * EXIT_MANY, &go_fd);
		few_exits(&set, each, beside, kbeside, sbeside);
		/*
		 * The exiting provider's slots follow the holder's, in the bitmap word of its last
		 * slots when N is no multiple of 64: the reaper reads the holder's slots there too
		 * (it cannot tell whose they are before it reads them). Another process fills that
		 * word, and the same exits are measured with a word of their own.
		 */
		if (n % 64)
			pad = holder_start(&set, 64 - n % 64, 200 * EXIT_MANY, &pad_go);
		few_exits(&set, each, own, kown, sown);
		if (pad) {
			close(pad_go);
			if (waitpid(pad, &st, 0) != pad || !WIFEXITED(st) || WEXITSTATUS(st))
				die("holder (pad)", st);
		}
		close(go_fd);
		if (waitpid(holder, &st, 0) != holder || !WIFEXITED(st) || WEXITSTATUS(st))
			die("holder", st);
		/* and alone again, right after, for the ratio */
		few_exits(&set, each, alone, kalone, salone);
		row("exit", "provider exit, 10 beside N", n, "us/exit", beside, alone, opt.rounds,
		    0);
		if (exit_prog >= 0) {
			row("exit", "its exit program, 10 beside N", n, "us/exit", kbeside, kalone,
			    opt.rounds, 1.3);
			row("exit", "  the same, a word of its own", n, "us/exit", kown, kalone,
			    opt.rounds, 1.3);
		}
		row("exit", "its start, beside N", n, "us/start", sbeside, salone, opt.rounds, 0);
	}
	if (exit_prog >= 0)
		close(exit_prog);
	if (stats_fd >= 0)
		close(stats_fd);
	/* what the exits left behind (the kernel reaper frees a dead provider's instances) */
	if (PerfEnumerateCounterSetInstances(NULL, &set, NULL, 0, &size) == ERROR_NOT_ENOUGH_MEMORY)
		printf("#   note: instances of exited providers still listed (%lu bytes of "
		       "enumeration): not freed at exit\n",
		       (unsigned long)size);
	perflib_unregister_counterset(&set, true);
}

/* ---- main --------------------------------------------------------------------------------- */

/* run @fn(@arg) in a child, so that what it mapped is gone before the next row */
static void run_child(void (*fn)(unsigned int), unsigned int arg)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid) {
		fn(arg);
		fflush(NULL);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("a section of the bench", status);
}

static void growth_fn(unsigned int a)
{
	(void)a;
	section_growth();
}

static void fork_fn(unsigned int a)
{
	(void)a;
	section_fork();
}

static void exit_fn(unsigned int a)
{
	(void)a;
	section_exit();
}

static bool wanted(const char *s)
{
	return !opt.only || !strcmp(opt.only, s);
}

static void parse_sizes(const char *s)
{
	char *end;
	unsigned long v;

	opt.nr_sizes = 0;
	for (;;) {
		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || end == s || !v || v > 100000000ul || opt.nr_sizes == MAX_SIZES ||
		    (*end && *end != ',')) {
			fprintf(stderr,
				"bench_scale: bad --sizes (1 to %d counts of 1..100000000)\n",
				MAX_SIZES);
			exit(2);
		}
		opt.sizes[opt.nr_sizes++] = (unsigned int)v;
		if (!*end)
			break;
		s = end + 1;
	}
}

static unsigned int parse_count(const char *name, const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || !v || v > max) {
		fprintf(stderr, "bench_scale: bad %s (1..%lu)\n", name, max);
		exit(2);
	}
	return (unsigned int)v;
}

static void print_header(void)
{
	struct perflib_counter_reg c[NR_COUNTERS];
	struct perflib_counterset_reg reg;
	struct perflib_layout lay;
	GUID set = set_guid(0, 0);
	struct utsname u;
	char model[256] = "?", line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	uname(&u);
	printf("# bench_scale: counter sets at scale (issue 8)\n");
	printf("# machine: %s, nproc %ld, %s, kernel %s %s\n", u.nodename,
	       sysconf(_SC_NPROCESSORS_ONLN), model, u.release, u.machine);
	make_reg(&reg, c, &set);
	if (!perflib_counterset_layout(&reg, NULL, &lay)) {
		printf("# layout of a set of 8 counters at the defaults "
		       "(perflib_counterset_layout): "
		       "slot %u B, capacity %u, name_max %u units, block at %u, name at %u\n",
		       lay.slot_size, lay.capacity, lay.name_max, lay.block_offset,
		       lay.name_offset);
		perflib_layout_free(&lay);
	}
	printf("# rounds %u (growth %u), sizes", opt.rounds, opt.growth_rounds);
	for (unsigned int i = 0; i < opt.nr_sizes; i++)
		printf(" %u", opt.sizes[i]);
	printf("; min and median over the rounds; ratio = median (r.min = min) of the per-round\n"
	       "# ratios row / base, the two measured one after the other in each round\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"quick", no_argument, NULL, 'q'},
					   {"sizes", required_argument, NULL, 's'},
					   {"rounds", required_argument, NULL, 'r'},
					   {"sets", required_argument, NULL, 'S'},
					   {"only", required_argument, NULL, 'o'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	bool sizes = false, rounds = false, sets = false;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'q':
			opt.quick = true;
			break;
		case 's':
			parse_sizes(optarg);
			sizes = true;
			break;
		case 'r':
			opt.rounds = parse_count("--rounds", optarg, 64);
			rounds = true;
			break;
		case 'S':
			opt.sets = parse_count("--sets", optarg, 100000);
			sets = true;
			break;
		case 'o':
			if (strcmp(optarg, "growth") && strcmp(optarg, "enum") &&
			    strcmp(optarg, "fork") && strcmp(optarg, "exit")) {
				fprintf(stderr,
					"bench_scale: --only takes growth, enum, fork or exit\n");
				return 2;
			}
			opt.only = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bench_scale: unexpected argument '%s'\n%s", argv[optind], usage);
		return 2;
	}
	if (rounds || opt.growth_rounds > opt.rounds)
		opt.growth_rounds = opt.rounds;
	if (opt.quick) {
		if (!sizes) {
			opt.sizes[0] = 1000;
			opt.sizes[1] = 10000;
			opt.nr_sizes = 2;
		}
		if (!rounds)
			opt.rounds = opt.growth_rounds = 3;
		if (!sets)
			opt.sets = 200;
	}
	main_pid = getpid();
	signal(SIGPIPE, SIG_IGN);
	snprintf(root, sizeof(root), "/sys/fs/bpf/perflib-bench-scale-%d", (int)main_pid);
	if (mkdir(root, 0755)) {
		if (errno == EACCES || errno == EPERM || errno == ENOENT) {
			printf("bench_scale: SKIP (cannot create %s: %s)\n", root, strerror(errno));
			return 0;
		}
		perror(root);
		return 1;
	}
	setenv("PERFLIB_ROOT", root, 1);
	perflib_set_pin_root(root);
	perflib_set_print(NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	print_header();
	table_header();
	if (wanted("growth"))
		run_child(growth_fn, 0);
	if (wanted("enum"))
		for (unsigned int i = 0; i < opt.nr_sizes; i++)
			run_child(churn_one, opt.sizes[i]);
	if (wanted("fork"))
		run_child(fork_fn, 0);
	if (wanted("exit"))
		run_child(exit_fn, 0);
	remove_tree(root);
	return 0;
}
