// SPDX-License-Identifier: MIT
/*
 * bench_bpf.c - what a counter update costs a BPF program (tests/bench/bench.bpf.c): ns per
 * perflib_counter_add() on a counter set's data map next to a bare __sync_fetch_and_add
 * on a plain array map value, same loop, measured with BPF_PROG_TEST_RUN (repeat) in one
 * run; with the map lookup in each update and hoisted out of the loop. The cost of an
 * empty program run is subtracted; best of several rounds. Uses a private pin root under
 * /sys/fs/bpf and removes it. Prints SKIP and exits 0 when BPF is not available here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "perflib_bpf_loader.h"
#include "bench.skel.h"

#define BENCH_INNER 64 /* updates per program run (bench.bpf.c) */
#define REPEAT 200000  /* program runs per measurement */
#define ROUNDS 7
#define POS 1 /* counter position updated */

/* best average ns per program run of @prog over ROUNDS measurements */
static double run_ns(struct bpf_program *prog)
{
	char pkt[64] = {0};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = REPEAT);
	double best = 1e30;
	int r;

	for (r = 0; r < ROUNDS; r++) {
		if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts)) {
			perror("bench_bpf: BPF_PROG_TEST_RUN");
			exit(1);
		}
		if (opts.duration < best)
			best = opts.duration;
	}
	return best;
}

static int start_counterset(HANDLE *ret_h, GUID *set, PPERF_COUNTERSET_INSTANCE *ret_inst)
{
	struct {
		PERF_COUNTERSET_INFO set;
		PERF_COUNTER_INFO c[2];
	} t = {.set = {.CounterSetGuid = *set,
		       .NumCounters = 2,
		       .InstanceType = PERF_COUNTERSET_MULTI_INSTANCES}};
	GUID pg = {0xbe9c0001, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};

	t.set.ProviderGuid = pg;
	t.c[0] = (PERF_COUNTER_INFO){.CounterId = 1, .Type = PERF_COUNTER_RAWCOUNT, .Size = 4};
	t.c[1] = (PERF_COUNTER_INFO){.CounterId = 2, .Type = PERF_COUNTER_BULK_COUNT, .Size = 8};
	if (PerfStartProvider(&pg, NULL, ret_h) || PerfSetCounterSetInfo(*ret_h, &t.set, sizeof(t)))
		return -1;
	*ret_inst = PerfCreateInstance(*ret_h, set, u"bench", 0);
	return *ret_inst ? 0 : -1;
}

int main(void)
{
	GUID set = {0xbe9c0002, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};
	double empty, bare_l, lib_l, bare, lib;
	struct perflib_bpf_counterset cs;
	PPERF_COUNTERSET_INSTANCE inst;
	struct perflib_ctrset *pset;
	struct bench_bpf *skel = NULL;
	unsigned long long before;
	char root[128], g[37];
	int64_t idx;
	HANDLE h;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bench_probe", 4, 8, 1, NULL);
	if (fd < 0) {
		printf("SKIP: bench_bpf: BPF maps cannot be created here\n");
		return 0;
	}
	close(fd);
	snprintf(root, sizeof(root), "/sys/fs/bpf/perflib-bench-bpf-%d", (int)getpid());
	if (perflib_set_pin_root(root) || setenv("PERFLIB_ROOT", root, 1))
		return 1;
	/* the exit reaper is not measured here */
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	if (start_counterset(&h, &set, &inst)) {
		printf("SKIP: bench_bpf: cannot create a counter set under %s (error %u)\n", root,
		       GetLastError());
		rmdir(root);
		return 0;
	}
	pset = perflib_ctrset_find(perflib_provider_get(h), &set);
	idx = perflib_ctrset_instance_index(pset, inst);
	if (idx < 0 || perflib_bpf_counterset_open(root, perflib_guid_to_string(&set, g), &cs))
		goto fail;
	skel = bench_bpf__open();
	if (!skel)
		goto fail;
	skel->rodata->perflib_geo = cs.geo;
	skel->rodata->bench_slot = (uint32_t)idx;
	skel->rodata->bench_pos = POS;
	if (perflib_bpf_counterset_reuse(&cs, skel->maps.slots, NULL) || bench_bpf__load(skel)) {
		printf("SKIP: bench_bpf: the benchmark programs cannot be loaded here\n");
		perflib_bpf_counterset_close(&cs);
		bench_bpf__destroy(skel);
		PerfStopProvider(h);
		perflib_unregister_counterset(&set, true);
		rmdir(root);
		return 0;
	}
	perflib_bpf_counterset_close(&cs);

	before = *(volatile ULONGLONG *)((BYTE *)inst + sizeof(*inst) + 8 * POS);
	empty = run_ns(skel->progs.bench_empty);
	bare_l = (run_ns(skel->progs.bench_bare_lookup) - empty) / BENCH_INNER;
	lib_l = (run_ns(skel->progs.bench_perflib_lookup) - empty) / BENCH_INNER;
	bare = (run_ns(skel->progs.bench_bare) - empty) / BENCH_INNER;
	lib = (run_ns(skel->progs.bench_perflib) - empty) / BENCH_INNER;
	/* the provider sees every update the programs made */
	if (*(volatile ULONGLONG *)((BYTE *)inst + sizeof(*inst) + 8 * POS) - before !=
	    2ULL * ROUNDS * REPEAT * BENCH_INNER) {
		fprintf(stderr, "bench_bpf: the instance's counter did not get every update\n");
		goto fail;
	}

	printf("perflib BPF counter update: BPF_PROG_TEST_RUN (XDP), %d updates per run, best of "
	       "%d x %d runs\n\n",
	       BENCH_INNER, ROUNDS, REPEAT);
	printf("%-58s %10s %8s\n", "one 8-byte counter update from BPF", "ns/op", "ratio");
	printf("  %-56s %10.2f\n", "(empty program run, subtracted; ns per run)", empty);
	printf("  %-56s %10.2f %8s\n", "bare lookup + __sync_fetch_and_add, array map", bare_l,
	       "1.00");
	printf("  %-56s %10.2f %8.2f\n", "perflib_slot + perflib_counter_add, data map", lib_l,
	       bare_l > 0 ? lib_l / bare_l : 0);
	printf("  %-56s %10.2f %8s\n", "bare __sync_fetch_and_add, value looked up once", bare,
	       "1.00");
	printf("  %-56s %10.2f %8.2f\n", "perflib_counter_add, slot looked up once", lib,
	       bare > 0 ? lib / bare : 0);

	bench_bpf__destroy(skel);
	PerfStopProvider(h);
	perflib_unregister_counterset(&set, true);
	rmdir(root);
	return 0;
fail:
	fprintf(stderr, "bench_bpf: setup failed\n");
	bench_bpf__destroy(skel);
	PerfStopProvider(h);
	perflib_unregister_counterset(&set, true);
	rmdir(root);
	return 1;
}
