// SPDX-License-Identifier: MIT
/*
 * bench_provider.c - what the provider API costs, from one run:
 *   - each of the seven value functions, one thread, beside its baseline on the same mapped
 *     counter in the same rounds: a bare relaxed atomic add or sub of the same width for the
 *     increments and decrements, a plain relaxed store for the setters (issue 34's goal: at
 *     most 1.1 times the add, 1.0 times the store), and beside the floor (a noinline
 *     function doing only that operation, called through a pointer as the value function
 *     is); the medians of the per-round ratios and the best ns/op, through the static
 *     library and through the shared library when it can be loaded from the build
 *     directory; every counter checked exact after every loop;
 *   - an update in a provider of 50 counter sets;
 *   - ns per PerfCreateInstance + PerfDeleteInstance;
 *   - map memory per instance beside the Windows instance block for the same instance.
 * Uses a private pin root under /sys/fs/bpf and removes it. Prints SKIP and exits 0 when
 * BPF maps cannot be created here.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bench_util.h"
#include "internal.h"
#include "testlib.h"

#define NR_COUNTERS 8
#define HOT_ID 3   /* counter incremented by the hot loops: 8 bytes */
#define DWORD_ID 2 /* a 4-byte counter (the value rows' template) */
#define REF_ID 4   /* a by-reference counter (the value rows' template) */
#define NR_VALUE_FNS 7
/* the many-sets rows: short rounds, so that most run in one time slice of a loaded machine */
#define MANY_OPS 200000ULL /* per round */
#define MANY_ROUNDS 51
#define CD_OPS 20000 /* create + delete pairs per round */
#define CD_ROUNDS 3
#define LIVE 1000				  /* instances for the create-at-scale rows */
#define NAME32 "worker-thread-0000-of-pool-alpha" /* 32 characters */

struct tmpl {
	PERF_COUNTERSET_INFO set;
	PERF_COUNTER_INFO c[NR_COUNTERS];
};

/* the provider functions, from the static library or from a dlopen'ed libperflib.so */
struct api {
	const char *name;
	ULONG (*start)(GUID *, PERFLIBREQUEST, HANDLE *);
	ULONG (*stop)(HANDLE);
	ULONG (*setinfo)(HANDLE, PERF_COUNTERSET_INFO *, ULONG);
	PPERF_COUNTERSET_INSTANCE (*create)(HANDLE, const GUID *, const WCHAR *, ULONG);
	ULONG (*del)(HANDLE, PPERF_COUNTERSET_INSTANCE);
	ULONG (*inc)(HANDLE, PPERF_COUNTERSET_INSTANCE, ULONG, ULONGLONG);
	void *value[NR_VALUE_FNS]; /* the seven value functions, in the order of vrows[] */
};

static double min_d(double a, double b)
{
	return a < b ? a : b;
}

static __attribute__((noinline)) ULONG
loop_api(const struct api *api, HANDLE h, PPERF_COUNTERSET_INSTANCE inst, ULONGLONG v, uint64_t n)
{
	ULONG err = 0;

	for (uint64_t i = 0; i < n; i++)
		err |= api->inc(h, inst, HOT_ID, v);
	return err;
}

/*
 * The counters of the template: all 8-byte bulk counts, or (@mixed, the value rows) a 4-byte
 * one at DWORD_ID and a by-reference one at REF_ID beside the 8-byte HOT_ID
 */
static void make_tmpl(struct tmpl *t, const GUID *set, const GUID *prov, bool mixed)
{
	memset(t, 0, sizeof(*t));
	t->set.CounterSetGuid = *set;
	t->set.ProviderGuid = *prov;
	t->set.NumCounters = NR_COUNTERS;
	t->set.InstanceType = PERF_COUNTERSET_MULTI_INSTANCES;
	for (int i = 0; i < NR_COUNTERS; i++) {
		t->c[i].CounterId = (ULONG)i + 1;
		t->c[i].Type = PERF_COUNTER_BULK_COUNT;
		t->c[i].Size = sizeof(ULONGLONG);
		t->c[i].DetailLevel = PERF_DETAIL_NOVICE;
	}
	if (!mixed)
		return;
	t->c[DWORD_ID - 1].Type = PERF_COUNTER_COUNTER;
	t->c[DWORD_ID - 1].Size = sizeof(ULONG);
	t->c[REF_ID - 1].Type = PERF_COUNTER_LARGE_RAWCOUNT;
	t->c[REF_ID - 1].Attrib = PERF_ATTRIB_BY_REFERENCE;
	t->c[REF_ID - 1].Size = sizeof(PVOID);
}

static void wname(WCHAR *dst, const char *src)
{
	while ((*dst++ = (WCHAR)(unsigned char)*src++))
		;
}

/*
 * The value rows. For each value function three loops on the same mapped counter, each
 * VAL_OPS calls with the value VAL(v, i) (v = 1 read from a volatile: the compiler folds
 * nothing): the baseline inline in the loop (a bare relaxed atomic add or sub of the
 * function's width, or a plain relaxed store), the floor (a noinline function doing only
 * that operation, called through a function pointer as the function is) and the function
 * itself. After each loop the counter must hold exactly what the loop wrote.
 */
#define VAL_OPS 200000ULL
#define VAL_ROUNDS 101
#define BLOCK sizeof(PERF_COUNTERSET_INSTANCE)
#define OFFSET_OF(id) (BLOCK + 8 * ((id)-1)) /* template position id - 1 */

enum { LOOP_BARE, LOOP_FLOOR, LOOP_API, NR_LOOPS };

static ULONGLONG ref_targets[2]; /* what the by-reference row points at, in turn */

#define ADD(p, x) __atomic_fetch_add(p, x, __ATOMIC_RELAXED)
#define SUB(p, x) __atomic_fetch_sub(p, x, __ATOMIC_RELAXED)
#define STORE(p, x) __atomic_store_n(p, x, __ATOMIC_RELAXED)
#define VAL_ONE(type, v, i) ((type)(v))
#define VAL_SEQ(type, v, i) ((type)((v) + (i)))
#define VAL_REF(type, v, i) ((type)&ref_targets[((v) + (i)) & 1])
/* what the counter must hold after a loop of n calls, from what it held before */
#define AFTER_ADD(type, before, v, n) ((type)((before) + (type)(n)))
#define AFTER_SUB(type, before, v, n) ((type)((before) - (type)(n)))

/*
 * row @tag: counter @id of type @type, operation @OP with values @VAL; @AFTER the counter
 * after a loop (stores: the last value, the counter first set to another)
 */
#define VROW(tag, type, id, OP, VAL, AFTER)                                                        \
	static __attribute__((noinline)) void bare_##tag(type *p, ULONGLONG v, uint64_t n)         \
	{                                                                                          \
		for (uint64_t i = 0; i < n; i++)                                                   \
			OP(p, VAL(type, v, i));                                                    \
	}                                                                                          \
	static __attribute__((noinline)) ULONG floor_##tag(                                        \
		HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance, ULONG CounterId, type Value)  \
	{                                                                                          \
		(void)Provider;                                                                    \
		(void)CounterId;                                                                   \
		OP((type *)((BYTE *)Instance + OFFSET_OF(id)), Value);                             \
		return ERROR_SUCCESS;                                                              \
	}                                                                                          \
	static __attribute__((noinline))                                                           \
	ULONG call_##tag(ULONG (*fn)(HANDLE, PPERF_COUNTERSET_INSTANCE, ULONG, type), HANDLE h,    \
			 PPERF_COUNTERSET_INSTANCE inst, ULONGLONG v, uint64_t n)                  \
	{                                                                                          \
		ULONG err = 0;                                                                     \
                                                                                                   \
		for (uint64_t i = 0; i < n; i++)                                                   \
			err |= fn(h, inst, id, VAL(type, v, i));                                   \
		return err;                                                                        \
	}                                                                                          \
	static int run_##tag(void *api_fn, HANDLE h, PPERF_COUNTERSET_INSTANCE inst, int loop,     \
			     ULONGLONG v, uint64_t n, double *ret_ns)                              \
	{                                                                                          \
		ULONG (*fn)(HANDLE, PPERF_COUNTERSET_INSTANCE, ULONG, type);                       \
		type *p = (type *)((BYTE *)inst + OFFSET_OF(id));                                  \
		type before, want;                                                                 \
		double t0;                                                                         \
		ULONG err = 0;                                                                     \
                                                                                                   \
		*(void **)&fn = loop == LOOP_API ? api_fn : (void *)floor_##tag;                   \
		*p = VAL(type, v, n); /* a setter's loop must change it */                         \
		before = *p;                                                                       \
		t0 = now_ns();                                                                     \
		if (loop == LOOP_BARE)                                                             \
			bare_##tag(p, v, n);                                                       \
		else                                                                               \
			err = call_##tag(fn, h, inst, v, n);                                       \
		*ret_ns = (now_ns() - t0) / n;                                                     \
		want = AFTER(type, before, v, n);                                                  \
		(void)before; /* a store's counter holds the last value whatever it held */        \
		if (err || *p != want) {                                                           \
			fprintf(stderr,                                                            \
				"bench: %s loop %d: error %u, counter %llu, expected %llu\n",      \
				#tag, loop, err, (unsigned long long)(uintptr_t)*p,                \
				(unsigned long long)(uintptr_t)want);                              \
			return -1;                                                                 \
		}                                                                                  \
		return 0;                                                                          \
	}

#define AFTER_SEQ(type, before, v, n) VAL_SEQ(type, v, (n)-1)
#define AFTER_REF(type, before, v, n) VAL_REF(type, v, (n)-1)

VROW(set_ul, ULONG, DWORD_ID, STORE, VAL_SEQ, AFTER_SEQ)
VROW(set_ull, ULONGLONG, HOT_ID, STORE, VAL_SEQ, AFTER_SEQ)
VROW(inc_ul, ULONG, DWORD_ID, ADD, VAL_ONE, AFTER_ADD)
VROW(inc_ull, ULONGLONG, HOT_ID, ADD, VAL_ONE, AFTER_ADD)
VROW(dec_ul, ULONG, DWORD_ID, SUB, VAL_ONE, AFTER_SUB)
VROW(dec_ull, ULONGLONG, HOT_ID, SUB, VAL_ONE, AFTER_SUB)
VROW(set_ref, PVOID, REF_ID, STORE, VAL_REF, AFTER_REF)

struct vrow {
	const char *fn;	  /* the exported name */
	const char *base; /* the baseline */
	double goal;	  /* the ratio to meet against the baseline */
	int (*run)(void *api_fn, HANDLE h, PPERF_COUNTERSET_INSTANCE inst, int loop, ULONGLONG v,
		   uint64_t n, double *ret_ns);
};

static const struct vrow vrows[NR_VALUE_FNS] = {
	{"PerfSetULongCounterValue", "relaxed 4-byte store", 1.0, run_set_ul},
	{"PerfSetULongLongCounterValue", "relaxed 8-byte store", 1.0, run_set_ull},
	{"PerfIncrementULongCounterValue", "lock add, 4 bytes", 1.1, run_inc_ul},
	{"PerfIncrementULongLongCounterValue", "lock add, 8 bytes", 1.1, run_inc_ull},
	{"PerfDecrementULongCounterValue", "lock sub, 4 bytes", 1.1, run_dec_ul},
	{"PerfDecrementULongLongCounterValue", "lock sub, 8 bytes", 1.1, run_dec_ull},
	{"PerfSetCounterRefValue", "relaxed pointer store", 1.0, run_set_ref},
};

/* a row's result: best ns/op of each loop, medians of the per-round ratios */
struct vresult {
	double best[NR_LOOPS];
	double ratio;	    /* the function / the baseline */
	double floor_ratio; /* the floor / the baseline */
	double over_floor;  /* the function / the floor */
};

/*
 * Every value row on one fresh instance, VAL_ROUNDS rounds; in each round the three loops of
 * a row run one after the other (in an order that turns with the round), so that the
 * ratios compare loops that saw the same machine
 */
static int bench_values(const struct api *api, const GUID *set, struct vresult *res)
{
	GUID pg = {0xbe4c0000, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};
	double ns[NR_LOOPS], ratio[VAL_ROUNDS], floor_r[VAL_ROUNDS], over[VAL_ROUNDS];
	PPERF_COUNTERSET_INSTANCE inst;
	volatile ULONGLONG one = 1;
	struct tmpl t;
	WCHAR name[40];
	HANDLE h;
	int f, r, k;

	make_tmpl(&t, set, &pg, true);
	if (api->start(&pg, NULL, &h) || api->setinfo(h, &t.set, sizeof(t)))
		return -1;
	/* the floor functions address the counters by template position */
	for (k = 0; k < NR_COUNTERS; k++) {
		if (BLOCK + t.c[k].Offset != OFFSET_OF((ULONG)k + 1))
			return -1;
	}
	wname(name, NAME32);
	inst = api->create(h, set, name, 1);
	if (!inst)
		return -1;
	for (f = 0; f < NR_VALUE_FNS; f++) {
		struct vresult *out = &res[f];

		for (k = 0; k < NR_LOOPS; k++) {
			out->best[k] = 1e30;
			/* warm up */
			if (vrows[f].run(api->value[f], h, inst, k, one, VAL_OPS / 10, &ns[k]))
				return -1;
		}
		for (r = 0; r < VAL_ROUNDS; r++) {
			for (k = 0; k < NR_LOOPS; k++) {
				int loop = (r + k) % NR_LOOPS;

				if (vrows[f].run(api->value[f], h, inst, loop, one, VAL_OPS,
						 &ns[loop]))
					return -1;
				out->best[loop] = min_d(out->best[loop], ns[loop]);
			}
			ratio[r] = ns[LOOP_API] / ns[LOOP_BARE];
			floor_r[r] = ns[LOOP_FLOOR] / ns[LOOP_BARE];
			over[r] = ns[LOOP_API] / ns[LOOP_FLOOR];
		}
		out->ratio = median(ratio, VAL_ROUNDS);
		out->floor_ratio = median(floor_r, VAL_ROUNDS);
		out->over_floor = median(over, VAL_ROUNDS);
	}
	api->del(h, inst);
	api->stop(h);
	return 0;
}

#define MANY_SETS 50

/* the API call on the instances of @n sets in turn, @ops calls */
static __attribute__((noinline)) ULONG loop_api_turns(const struct api *api, HANDLE h,
						      PPERF_COUNTERSET_INSTANCE *inst,
						      unsigned int n, ULONGLONG v, uint64_t ops)
{
	ULONG err = 0;
	unsigned int k = 0;

	for (uint64_t i = 0; i < ops; i++) {
		err |= api->inc(h, inst[k], HOT_ID, v);
		k = k + 1 == n ? 0 : k + 1;
	}
	return err;
}

/*
 * A provider of MANY_SETS sets (@sets), one instance each: best-of-MANY_ROUNDS ns/op of api->inc
 * on the first set's instance (the set registered first: the one a walk of the provider's
 * sets, newest first, found last) and on the instances of every set in turn
 */
static int bench_many(const struct api *api, const GUID *sets, double *ret_first, double *ret_turns)
{
	GUID pg = {0xbe4c0000, 1, 2, {3, 4, 5, 6, 7, 8, 9, 11}};
	PPERF_COUNTERSET_INSTANCE inst[MANY_SETS];
	volatile ULONGLONG one = 1;
	double best_first = 1e30, best_turns = 1e30, t0;
	struct tmpl t;
	WCHAR name[40];
	HANDLE h;
	int r, i;

	if (api->start(&pg, NULL, &h))
		return -1;
	wname(name, NAME32);
	for (i = 0; i < MANY_SETS; i++) {
		make_tmpl(&t, &sets[i], &pg, false);
		if (api->setinfo(h, &t.set, sizeof(t)))
			return -1;
		inst[i] = api->create(h, &sets[i], name, 1);
		if (!inst[i])
			return -1;
	}
	loop_api_turns(api, h, inst, MANY_SETS, one, MANY_OPS * 5);
	for (r = 0; r < MANY_ROUNDS; r++) {
		t0 = now_ns();
		if (loop_api(api, h, inst[0], one, MANY_OPS))
			return -1;
		best_first = min_d(best_first, (now_ns() - t0) / MANY_OPS);
		t0 = now_ns();
		if (loop_api_turns(api, h, inst, MANY_SETS, one, MANY_OPS))
			return -1;
		best_turns = min_d(best_turns, (now_ns() - t0) / MANY_OPS);
	}
	api->stop(h);
	*ret_first = best_first;
	*ret_turns = best_turns;
	return 0;
}

struct cd_result {
	double pair, create, del; /* ns/op */
	uint32_t slot_size;	  /* data map value */
	double memlock;		  /* bytes of all maps per live instance, kernel accounting */
	uint32_t capacity;
};

static int bench_instances(const GUID *set, unsigned int name_max, struct cd_result *res)
{
	GUID pg = {0xbe4c0000, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};
	static PPERF_COUNTERSET_INSTANCE live[LIVE];
	PPERF_COUNTERSET_INSTANCE inst;
	struct perflib_ctrset *cs;
	struct perflib_store *m;
	struct tmpl t;
	WCHAR name[40];
	char dir[PATH_MAX];
	unsigned long long maps, progs = 0;
	double t0, best = 1e30, best_c = 1e30, best_d = 1e30;
	HANDLE h;
	int r, i;

	perflib_set_capacity(PERFLIB_CAPACITY_DEFAULT, name_max);
	make_tmpl(&t, set, &pg, false);
	if (PerfStartProvider(&pg, NULL, &h) || PerfSetCounterSetInfo(h, &t.set, sizeof(t)))
		return -1;
	perflib_set_capacity(0, PERFLIB_NAME_MAX_DEFAULT);
	wname(name, NAME32);
	if (perflib_store_dir(set, dir, sizeof(dir)))
		return -1;
	for (r = 0; r < CD_ROUNDS; r++) {
		t0 = now_ns();
		for (i = 0; i < CD_OPS; i++) {
			inst = PerfCreateInstance(h, set, name, (ULONG)i);
			if (!inst || PerfDeleteInstance(h, inst))
				return -1;
		}
		best = min_d(best, (now_ns() - t0) / CD_OPS);
		/* at scale: LIVE instances at once */
		t0 = now_ns();
		for (i = 0; i < LIVE; i++) {
			live[i] = PerfCreateInstance(h, set, name, (ULONG)i);
			if (!live[i])
				return -1;
		}
		best_c = min_d(best_c, (now_ns() - t0) / LIVE);
		/* every map of the set (segments included) while they live, per instance */
		maps = 0;
		tl_dir_memlock(dir, &maps, &progs);
		res->memlock = (double)maps / LIVE;
		t0 = now_ns();
		for (i = 0; i < LIVE; i++) {
			if (PerfDeleteInstance(h, live[i]))
				return -1;
		}
		best_d = min_d(best_d, (now_ns() - t0) / LIVE);
	}
	cs = perflib_ctrset_find(perflib_provider_get(h), set);
	m = cs->map;
	res->pair = best;
	res->create = best_c;
	res->del = best_d;
	res->slot_size = m->info->slot_size;
	res->capacity = m->info->capacity;
	PerfStopProvider(h);
	return 0;
}

/* the provider functions of libperflib.so from the build directory, if it loads */
static void *load_shared(struct api *api)
{
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	void *so;
	int f;

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	/* $(OUTPUT)bench/bench_provider -> $(OUTPUT)libperflib.so.1 */
	snprintf(path, sizeof(path), "%s/../libperflib.so.1", dirname(exe));
	so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!so)
		return NULL;
	api->name = "shared library";
	*(void **)&api->start = dlsym(so, "PerfStartProvider");
	*(void **)&api->stop = dlsym(so, "PerfStopProvider");
	*(void **)&api->setinfo = dlsym(so, "PerfSetCounterSetInfo");
	*(void **)&api->create = dlsym(so, "PerfCreateInstance");
	*(void **)&api->del = dlsym(so, "PerfDeleteInstance");
	*(void **)&api->inc = dlsym(so, "PerfIncrementULongLongCounterValue");
	for (f = 0; f < NR_VALUE_FNS; f++) {
		api->value[f] = dlsym(so, vrows[f].fn);
		if (!api->value[f])
			api->start = NULL;
	}
	if (!api->start || !api->stop || !api->setinfo || !api->create || !api->del || !api->inc) {
		dlclose(so);
		return NULL;
	}
	return so;
}

/* the value rows of one library: each function beside its baseline and the floor */
static void print_values(const char *lib, const struct vresult *res)
{
	char head[64];
	int f;

	snprintf(head, sizeof(head), "value functions, %s", lib);
	printf("%-38s %7s %7s %7s %7s %7s %7s\n", head, "ns/op", "base", "floor", "ratio",
	       "floor/b", "fn/flr");
	for (f = 0; f < NR_VALUE_FNS; f++) {
		const struct vresult *r = &res[f];

		printf("  %-36s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f  goal <= %.1f: %s\n",
		       vrows[f].fn, r->best[LOOP_API], r->best[LOOP_BARE], r->best[LOOP_FLOOR],
		       r->ratio, r->floor_ratio, r->over_floor, vrows[f].goal,
		       r->ratio <= vrows[f].goal ? "met" : "MISSED");
	}
}

static GUID bench_guid(unsigned int n)
{
	GUID g = {0xbe4c0001, (uint16_t)getpid(), (uint16_t)n, {'b', 'e', 'n', 'c', 'h', 0, 0, 1}};

	return g;
}

int main(void)
{
	struct api st = {
		"static library",
		PerfStartProvider,
		PerfStopProvider,
		PerfSetCounterSetInfo,
		PerfCreateInstance,
		PerfDeleteInstance,
		PerfIncrementULongLongCounterValue,
		{(void *)PerfSetULongCounterValue, (void *)PerfSetULongLongCounterValue,
		 (void *)PerfIncrementULongCounterValue, (void *)PerfIncrementULongLongCounterValue,
		 (void *)PerfDecrementULongCounterValue, (void *)PerfDecrementULongLongCounterValue,
		 (void *)PerfSetCounterRefValue}};
	struct api sh;
	struct vresult val_st[NR_VALUE_FNS], val_sh[NR_VALUE_FNS];
	struct cd_result cd33, cddef;
	double bare_st, many_first, many_turns;
	bool have_sh = false;
	char root[128], head[64];
	void *so;
	GUID sets[4], many[MANY_SETS];
	int fd, i, err = 0;
	cpu_set_t cpu;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bench_probe", 4, 8, 1, NULL);
	if (fd < 0) {
		printf("SKIP: bench_provider: BPF maps cannot be created here\n");
		return 0;
	}
	close(fd);
	snprintf(root, sizeof(root), "/sys/fs/bpf/perflib-bench-%d", (int)getpid());
	if (mkdir(root, 0755)) {
		printf("SKIP: bench_provider: cannot create %s\n", root);
		return 0;
	}
	setenv("PERFLIB_ROOT", root, 1); /* for the shared library's copy of the state */
	perflib_set_pin_root(root);
	/* one CPU: no migrations in the middle of a round */
	CPU_ZERO(&cpu);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &cpu);
	sched_setaffinity(0, sizeof(cpu), &cpu);
	for (i = 0; i < 4; i++)
		sets[i] = bench_guid((unsigned int)i);
	for (i = 0; i < MANY_SETS; i++)
		many[i] = bench_guid(16 + (unsigned int)i);

	/* the sets of the many-sets rows without the exit reaper: the hot path does not use it */
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	err = bench_many(&st, many, &many_first, &many_turns);
	unsetenv("PERFLIB_KERNEL_REAPER");
	if (err || bench_values(&st, &sets[0], val_st) || bench_instances(&sets[1], 33, &cd33) ||
	    bench_instances(&sets[2], 0, &cddef)) {
		fprintf(stderr, "bench_provider: a provider call failed (last error %u)\n",
			GetLastError());
		err = 1;
		goto out;
	}
	so = load_shared(&sh);
	if (so && bench_values(&sh, &sets[3], val_sh)) {
		fprintf(stderr, "bench_provider: a shared-library provider call failed\n");
		err = 1;
		goto out;
	}
	have_sh = so != NULL;
	bare_st = val_st[3].best[LOOP_BARE]; /* the 8-byte add */

	printf("perflib provider benchmark: one thread on one CPU\n\n");
	printf("value functions: best ns/op of %d rounds of %llu calls; ratios are medians of the\n"
	       "per-round ratios, the loops of a round side by side on the same mapped counter;\n"
	       "base: the bare operation inline in the loop (relaxed lock add/sub of the width,\n"
	       "or a plain relaxed store); floor: a noinline function doing only that operation,\n"
	       "called through a pointer as the value function is; every counter checked exact\n\n",
	       VAL_ROUNDS, VAL_OPS);
	print_values("static library", val_st);
	if (have_sh)
		print_values("shared library", val_sh);
	else
		printf("  %-56s %10s\n", "shared library: could not be loaded", "n/a");
	snprintf(head, sizeof(head), "one 8-byte counter, best of %d rounds of %llu", MANY_ROUNDS,
		 MANY_OPS);
	printf("\n%-58s %10s %8s\n", head, "ns/op", "ratio (to the bare add)");
	printf("  %-56s %10.2f %8.2f\n", "PerfIncrementULongLongCounterValue, 50 sets: the first",
	       many_first, many_first / bare_st);
	printf("  %-56s %10.2f %8.2f\n", "PerfIncrementULongLongCounterValue, 50 sets in turn",
	       many_turns, many_turns / bare_st);
	printf("\n%-58s %10s\n", "instances (32-character name, 8 counters)", "ns/op");
	printf("  %-56s %10.0f\n", "PerfCreateInstance + PerfDeleteInstance", cd33.pair);
	printf("  %-56s %10.0f\n", "PerfCreateInstance, filling 1000 instances", cd33.create);
	printf("  %-56s %10.0f\n", "PerfDeleteInstance, emptying 1000 instances", cd33.del);
	printf("\n%-58s %10s\n", "memory per instance (8 counters, 32-character name)", "bytes");
	printf("  %-56s %10u\n", "Windows instance block: 32 + 8*8 + 66, rounded to 8",
	       (32 + 8 * NR_COUNTERS + 66 + 7) / 8 * 8);
	printf("  %-56s %10u\n", "perflib slot (data map value), name capacity 33 units",
	       cd33.slot_size);
	printf("  %-56s %10u\n", "perflib slot (data map value), default capacity 1025 units",
	       cddef.slot_size);
	printf("  %-56s %10.0f\n", "every map of the set, kernel memlock / live (33 units)",
	       cd33.memlock);
	printf("  %-56s %10.0f\n", "every map of the set, kernel memlock / live (1025 units)",
	       cddef.memlock);
	printf("  (%d live instances, a limit of %u per counter set; a slot holds a 16-byte\n"
	       "   perflib header, the Windows block and an ASCII copy of the name for bpftool)\n",
	       LIVE, cd33.capacity);
out:
	for (i = 0; i < 4; i++)
		perflib_unregister_counterset(&sets[i], true);
	for (i = 0; i < MANY_SETS; i++)
		perflib_unregister_counterset(&many[i], true);
	rmdir(root);
	return err;
}
