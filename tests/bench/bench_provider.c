// SPDX-License-Identifier: MIT
/*
 * bench_provider.c - what the provider API costs, from one run:
 *   - ns/op of PerfIncrementULongLongCounterValue next to a bare relaxed __atomic_fetch_add
 *     on the same mapped counter, same loop shape, best of several rounds, and their ratio
 *     (DESIGN.md goal: at most 1.5); through the static library, and through the shared
 *     library when it can be loaded from the build directory;
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
#define HOT_ID 3	    /* counter incremented by the hot loops */
#define HOT_OPS 20000000ULL /* per round */
#define ROUNDS 9
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
};

static double min_d(double a, double b)
{
	return a < b ? a : b;
}

/* the two hot loops: one counter, increment by a value the compiler cannot fold */
static __attribute__((noinline)) void loop_bare(ULONGLONG *p, ULONGLONG v, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static __attribute__((noinline)) ULONG
loop_api(const struct api *api, HANDLE h, PPERF_COUNTERSET_INSTANCE inst, ULONGLONG v, uint64_t n)
{
	ULONG err = 0;

	for (uint64_t i = 0; i < n; i++)
		err |= api->inc(h, inst, HOT_ID, v);
	return err;
}

static void make_tmpl(struct tmpl *t, const GUID *set, const GUID *prov)
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
}

static void wname(WCHAR *dst, const char *src)
{
	while ((*dst++ = (WCHAR)(unsigned char)*src++))
		;
}

/* best-of-ROUNDS ns/op of the bare add and of api->inc on one counter of a fresh instance */
static int bench_hot(const struct api *api, const GUID *set, double *ret_bare, double *ret_api)
{
	GUID pg = {0xbe4c0000, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};
	PPERF_COUNTERSET_INSTANCE inst;
	volatile ULONGLONG one = 1;
	struct tmpl t;
	WCHAR name[40];
	ULONGLONG *ctr, before;
	double best_bare = 1e30, best_api = 1e30, t0;
	HANDLE h;
	int r;

	make_tmpl(&t, set, &pg);
	if (api->start(&pg, NULL, &h) || api->setinfo(h, &t.set, sizeof(t)))
		return -1;
	wname(name, NAME32);
	inst = api->create(h, set, name, 1);
	if (!inst)
		return -1;
	ctr = (ULONGLONG *)((BYTE *)inst + sizeof(*inst) + t.c[HOT_ID - 1].Offset);
	/* warm up both paths */
	loop_bare(ctr, one, HOT_OPS / 10);
	loop_api(api, h, inst, one, HOT_OPS / 10);
	for (r = 0; r < ROUNDS; r++) {
		/* interleaved, so that both see the same machine */
		before = *ctr;
		t0 = now_ns();
		loop_bare(ctr, one, HOT_OPS);
		best_bare = min_d(best_bare, (now_ns() - t0) / HOT_OPS);
		t0 = now_ns();
		if (loop_api(api, h, inst, one, HOT_OPS))
			return -1;
		best_api = min_d(best_api, (now_ns() - t0) / HOT_OPS);
		if (*ctr - before != 2 * HOT_OPS) {
			fprintf(stderr, "bench: counter moved by %llu, expected %llu\n",
				(unsigned long long)(*ctr - before), 2 * HOT_OPS);
			return -1;
		}
	}
	api->del(h, inst);
	api->stop(h);
	*ret_bare = best_bare;
	*ret_api = best_api;
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
 * A provider of MANY_SETS sets (@sets), one instance each: best-of-ROUNDS ns/op of api->inc
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
		make_tmpl(&t, &sets[i], &pg);
		if (api->setinfo(h, &t.set, sizeof(t)))
			return -1;
		inst[i] = api->create(h, &sets[i], name, 1);
		if (!inst[i])
			return -1;
	}
	loop_api_turns(api, h, inst, MANY_SETS, one, HOT_OPS / 20);
	for (r = 0; r < ROUNDS; r++) {
		t0 = now_ns();
		if (loop_api(api, h, inst[0], one, HOT_OPS / 4))
			return -1;
		best_first = min_d(best_first, (now_ns() - t0) / (HOT_OPS / 4));
		t0 = now_ns();
		if (loop_api_turns(api, h, inst, MANY_SETS, one, HOT_OPS / 4))
			return -1;
		best_turns = min_d(best_turns, (now_ns() - t0) / (HOT_OPS / 4));
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
	make_tmpl(&t, set, &pg);
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
	if (!api->start || !api->stop || !api->setinfo || !api->create || !api->del || !api->inc) {
		dlclose(so);
		return NULL;
	}
	return so;
}

/* one hot-path run: the bare add and the API call, each measured beside the other */
static void print_hot(const char *lib, double bare, double api)
{
	char what[64];

	snprintf(what, sizeof(what), "bare __atomic_fetch_add, relaxed (%s run)", lib);
	printf("  %-56s %10.2f %8s\n", what, bare, "1.00");
	snprintf(what, sizeof(what), "PerfIncrementULongLongCounterValue, %s", lib);
	printf("  %-56s %10.2f %8.2f  %s\n", what, api, api / bare,
	       api / bare <= 1.5 ? "(goal <= 1.5: met)" : "(goal <= 1.5: MISSED)");
}

static GUID bench_guid(unsigned int n)
{
	GUID g = {0xbe4c0001, (uint16_t)getpid(), (uint16_t)n, {'b', 'e', 'n', 'c', 'h', 0, 0, 1}};

	return g;
}

int main(void)
{
	struct api st = {"static library",
			 PerfStartProvider,
			 PerfStopProvider,
			 PerfSetCounterSetInfo,
			 PerfCreateInstance,
			 PerfDeleteInstance,
			 PerfIncrementULongLongCounterValue};
	struct api sh;
	struct cd_result cd33, cddef;
	double bare_st, api_st, bare_sh = 0, api_sh = 0, many_first, many_turns;
	char root[128];
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
	if (err || bench_hot(&st, &sets[0], &bare_st, &api_st) ||
	    bench_instances(&sets[1], 33, &cd33) || bench_instances(&sets[2], 0, &cddef)) {
		fprintf(stderr, "bench_provider: a provider call failed (last error %u)\n",
			GetLastError());
		err = 1;
		goto out;
	}
	so = load_shared(&sh);
	if (so && bench_hot(&sh, &sets[3], &bare_sh, &api_sh))
		bare_sh = api_sh = 0;

	printf("perflib provider benchmark: best of %d rounds of %llu ops, one CPU\n\n", ROUNDS,
	       HOT_OPS);
	printf("%-58s %10s %8s\n", "hot path (one mapped 8-byte counter)", "ns/op", "ratio");
	print_hot("static library", bare_st, api_st);
	if (api_sh > 0)
		print_hot("shared library", bare_sh, api_sh);
	else
		printf("  %-56s %10s\n", "shared library: could not be loaded", "n/a");
	printf("  %-56s %10.2f %8.2f\n", "the same, provider of 50 sets: the first set's",
	       many_first, many_first / bare_st);
	printf("  %-56s %10.2f %8.2f\n", "the same, provider of 50 sets: the 50 in turn",
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
