// SPDX-License-Identifier: MIT
/*
 * bench_threads.c - many threads incrementing one counter of one instance (issue 34, item
 * 2): 1, 2, 4 and 8 threads, each doing the same number of
 * PerfIncrementULongLongCounterValue calls on a counter kept per CPU
 * (PERF_ATTRIB_LINUX_PER_CPU) and on a plain one, with a bare relaxed atomic add on the
 * plain counter's mapped 8 bytes for reference. Per row: the per-thread ns/op (each
 * thread's own CPU time over its calls, the median of the threads, the median of the
 * rounds: what an update costs the thread that makes it, a cache line's transfer included,
 * the time it waits for a CPU on a loaded or oversubscribed machine not) and its ratio to
 * one thread alone, and the aggregate ns/op (the run's wall time over every call). After every run the total is read back through the consumer API
 * (PerfQueryCounterData) and checked exact. Goal: a per-CPU counter's per-thread cost with
 * 2 threads within 1.2x of one thread. Uses a private pin root and removes it; prints SKIP
 * and exits 0 when BPF maps cannot be created here.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bench_util.h"
#include "internal.h"
#include "testlib.h"

#define HOT_ID 1
#define OPS 4000000ULL /* per thread per run */
#define ROUNDS 7
#define MAX_THREADS 8

enum kind { BARE, PLAIN, PER_CPU, NR_KINDS };

static const char *const kind_name[NR_KINDS] = {
	"bare __atomic_fetch_add (plain counter)",
	"PerfIncrementULongLongCounterValue, plain",
	"PerfIncrementULongLongCounterValue, per CPU",
};

struct tmpl {
	PERF_COUNTERSET_INFO set;
	PERF_COUNTER_INFO c[2];
};

static HANDLE prov;
static GUID guid[2]; /* plain, per CPU */
static PPERF_COUNTERSET_INSTANCE inst[2];
static pthread_barrier_t barrier;

struct run {
	enum kind kind;
	double ns[MAX_THREADS]; /* per thread: its CPU time per call */
};

/* this thread's CPU time in nanoseconds */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct thread_arg {
	struct run *run;
	int i;
};

static void *thread_run(void *p)
{
	struct thread_arg *a = p;
	PPERF_COUNTERSET_INSTANCE in = inst[a->run->kind == PER_CPU];
	uint64_t *bare = (uint64_t *)((uint8_t *)inst[0] + sizeof(PERF_COUNTERSET_INSTANCE));
	uint64_t t0, i;
	ULONG err = 0;
	cpu_set_t cpu;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	/* thread i on CPU i mod the CPUs: 2 threads are 2 CPUs (their own parts, or one line) */
	CPU_ZERO(&cpu);
	CPU_SET(n > 0 ? a->i % (int)n : 0, &cpu);
	sched_setaffinity(0, sizeof(cpu), &cpu);
	pthread_barrier_wait(&barrier);
	t0 = cpu_ns();
	if (a->run->kind == BARE) {
		for (i = 0; i < OPS; i++) {
			__atomic_fetch_add(bare, 1, __ATOMIC_RELAXED);
			__asm__ volatile("" ::: "memory");
		}
	} else {
		for (i = 0; i < OPS; i++)
			err |= PerfIncrementULongLongCounterValue(prov, in, HOT_ID, 1);
	}
	a->run->ns[a->i] = (double)(cpu_ns() - t0) / (double)OPS;
	return err ? (void *)1 : NULL;
}

/* the counter's value as a consumer reads it: PerfQueryCounterData of the one counter */
static int read_total(const GUID *g, uint64_t *ret)
{
	struct {
		PERF_COUNTER_IDENTIFIER id;
		WCHAR name[8];
	} spec;
	static BYTE buf[4096];
	const PERF_COUNTER_HEADER *h;
	const PERF_MULTI_INSTANCES *mi;
	const PERF_INSTANCE_HEADER *ih;
	const PERF_COUNTER_DATA *d;
	HANDLE q;
	DWORD got;
	int err = -1;

	if (PerfOpenQueryHandle(NULL, &q))
		return -1;
	memset(&spec, 0, sizeof(spec));
	spec.id.CounterSetGuid = *g;
	spec.id.Size = sizeof(spec);
	spec.id.CounterId = HOT_ID;
	spec.id.InstanceId = PERFLIB_NO_ID;
	spec.name[0] = 'h';
	if (PerfAddCounters(q, &spec.id, sizeof(spec)) || spec.id.Status ||
	    PerfQueryCounterData(q, (PPERF_DATA_HEADER)buf, sizeof(buf), &got))
		goto out;
	/* one instance named h: its header, then the counter's data */
	h = (const PERF_COUNTER_HEADER *)(buf + sizeof(PERF_DATA_HEADER));
	if (h->dwStatus || h->dwType != PERF_MULTIPLE_INSTANCES)
		goto out;
	mi = (const PERF_MULTI_INSTANCES *)(h + 1);
	ih = (const PERF_INSTANCE_HEADER *)(mi + 1);
	if (mi->dwInstances != 1)
		goto out;
	d = (const PERF_COUNTER_DATA *)((const BYTE *)ih + ih->Size);
	if (d->dwDataSize != 8)
		goto out;
	memcpy(ret, d + 1, 8);
	err = 0;
out:
	PerfCloseQueryHandle(q);
	return err;
}

/* one run of @n threads of @kind: per-thread ns/op (median of the threads), aggregate ns/op */
static int one_run(enum kind kind, int n, double *ret_thread, double *ret_aggr)
{
	struct thread_arg args[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	struct run r = {.kind = kind};
	const GUID *g = &guid[kind == PER_CPU];
	uint64_t before, after = 0, t0;
	void *ret;
	int i, err = 0;

	if (read_total(g, &before))
		return -1;
	pthread_barrier_init(&barrier, NULL, (unsigned int)n + 1);
	for (i = 0; i < n; i++) {
		args[i] = (struct thread_arg){&r, i};
		if (pthread_create(&th[i], NULL, thread_run, &args[i]))
			return -1;
	}
	pthread_barrier_wait(&barrier);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		pthread_join(th[i], &ret);
		err |= ret != NULL;
	}
	*ret_aggr = (double)(now_ns() - t0) / ((double)OPS * n);
	pthread_barrier_destroy(&barrier);
	/* exact: every call counted once */
	if (err || read_total(g, &after) || after - before != OPS * (uint64_t)n) {
		fprintf(stderr,
			"bench_threads: %s, %d threads: total moved by %llu, expected %llu\n",
			kind_name[kind], n, (unsigned long long)(after - before),
			(unsigned long long)(OPS * (uint64_t)n));
		return -1;
	}
	*ret_thread = median(r.ns, n);
	return 0;
}

static int setup(void)
{
	GUID pg = {0x7468726d, 0x6265, 0x6e63, {0x68, 0, 0, 0, 0, 0, 0, 1}};
	struct tmpl t;
	int k;

	if (PerfStartProvider(&pg, NULL, &prov))
		return -1;
	for (k = 0; k < 2; k++) {
		memset(&t, 0, sizeof(t));
		guid[k] = pg;
		guid[k].Data4[7] = (unsigned char)(2 + k);
		t.set.CounterSetGuid = guid[k];
		t.set.ProviderGuid = pg;
		t.set.NumCounters = 1;
		t.set.InstanceType = PERF_COUNTERSET_MULTI_INSTANCES;
		t.c[0].CounterId = HOT_ID;
		t.c[0].Type = PERF_COUNTER_BULK_COUNT;
		t.c[0].Attrib = k ? PERF_ATTRIB_LINUX_PER_CPU : 0;
		t.c[0].Size = 8;
		t.c[0].DetailLevel = PERF_DETAIL_NOVICE;
		if (PerfSetCounterSetInfo(prov, &t.set, sizeof(t.set) + sizeof(t.c[0])))
			return -1;
		inst[k] = PerfCreateInstance(prov, &guid[k], u"h", 0);
		if (!inst[k])
			return -1;
	}
	return 0;
}

int main(void)
{
	static const int threads[] = {1, 2, 4, 8};
	double per[NR_KINDS][4][ROUNDS], aggr[NR_KINDS][4][ROUNDS], one[NR_KINDS];
	double load[3] = {0, 0, 0};
	int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN), fd, k, t, r, err = 0;
	char root[128];
	FILE *f;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bench_probe", 4, 8, 1, NULL);
	if (fd < 0) {
		printf("SKIP: bench_threads: BPF maps cannot be created here\n");
		return 0;
	}
	close(fd);
	snprintf(root, sizeof(root), "/sys/fs/bpf/perflib-bench-threads-%d", (int)getpid());
	if (mkdir(root, 0755)) {
		printf("SKIP: bench_threads: cannot create %s\n", root);
		return 0;
	}
	perflib_set_pin_root(root);
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	if (setup()) {
		fprintf(stderr, "bench_threads: a provider call failed\n");
		err = 1;
		goto out;
	}
	/* rounds interleave the rows, so that a burst of other load falls on all of them */
	for (r = 0; r < ROUNDS && !err; r++) {
		for (t = 0; t < 4 && !err; t++) {
			for (k = 0; k < NR_KINDS && !err; k++)
				err = one_run((enum kind)k, threads[t], &per[k][t][r],
					      &aggr[k][t][r]);
		}
	}
	if (err)
		goto out;
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
			load[0] = load[1] = load[2] = 0;
		fclose(f);
	}
	printf("perflib threads benchmark: one counter of one instance, %llu calls per thread per "
	       "run, median of %d runs; %d CPUs online, load average %.2f %.2f %.2f\n",
	       OPS, ROUNDS, cpus, load[0], load[1], load[2]);
	printf("every run's total read back through PerfQueryCounterData: exact\n");
	printf("thread i runs on CPU i mod %d\n", cpus);
	printf("per thread: each thread's CPU time per call (the median thread: what an update "
	       "costs the thread,\na contended cache line included, waiting for a CPU not); vs 1: "
	       "against one thread alone;\naggregate: the run's wall time per call of all "
	       "threads\n");
	if (cpus > 0 && cpus < 8)
		printf("on %d CPUs, %s oversubscribe: the threads are time-sliced (at most %d run "
		       "at once), so\nthe aggregate cannot drop below one thread's cost / %d and "
		       "contention shows only\nbetween the threads that share the CPUs at a time\n",
		       cpus, cpus < 4 ? "4 and 8 threads" : "8 threads", cpus, cpus);
	printf("\n%-46s %7s %10s %7s %10s\n", "counter", "threads", "per thread", "vs 1",
	       "aggregate");
	for (k = 0; k < NR_KINDS; k++) {
		for (t = 0; t < 4; t++) {
			double p = median(per[k][t], ROUNDS), a = median(aggr[k][t], ROUNDS);

			if (t == 0)
				one[k] = p;
			printf("  %-44s %7d %10.2f %7.2f %10.2f\n", t ? "" : kind_name[k],
			       threads[t], p, p / one[k], a);
		}
	}
	printf("\ngoal: per-CPU, 2 threads within 1.2x of one thread: %.2fx (%s)\n",
	       median(per[PER_CPU][1], ROUNDS) / one[PER_CPU],
	       median(per[PER_CPU][1], ROUNDS) / one[PER_CPU] <= 1.2 ? "met" : "NOT met");
out:
	if (prov)
		PerfStopProvider(prov);
	remove_tree(root);
	return err;
}
