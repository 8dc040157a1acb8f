// SPDX-License-Identifier: MIT
/*
 * bench_exporter.c - how long perflib-exporter takes to scrape 10,000 instances x 8
 * counters, through the code path of its HTTP handler (collector_scrape: registrations,
 * one PDH query collecting every counter set, exp_sample, exp_render) but in-process,
 * without HTTP. Prints milliseconds per scrape (mean, best, and the best of the collecting
 * part: everything before rendering) and bytes for both formats, and PerfQueryCounterData
 * alone for comparison.
 *
 * The benchmark rule links one source with the static library, so the exporter's sources
 * are included here rather than linked. Needs BPF (root): prints "skip" and exits 0
 * without it, so that `make bench` goes on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perflib.h"
#include "perflib-linux.h"

#include "collect.h"

#define NR_INSTANCES 10000
#define NR_COUNTERS 8
#define NR_SCRAPES 20
#define NO_ID 0xFFFFFFFF

#define CTR(id, type, base, name)                                                                  \
	{                                                                                          \
		id, type, 0, PERF_DETAIL_NOVICE, 0, base, NO_ID, NO_ID, NO_ID,                     \
			PERF_AGGREGATE_TOTAL, name, name " (help)"                                 \
	}

static const struct perflib_counter_reg counters[NR_COUNTERS] = {
	CTR(1, PERF_COUNTER_COUNTER, NO_ID, "Requests/sec"),
	CTR(2, PERF_COUNTER_BULK_COUNT, NO_ID, "Bytes/sec"),
	CTR(3, PERF_COUNTER_RAWCOUNT, NO_ID, "Queue Length"),
	CTR(4, PERF_COUNTER_LARGE_RAWCOUNT, NO_ID, "Open Handles"),
	CTR(5, PERF_100NSEC_TIMER, NO_ID, "Busy Time"),
	CTR(6, PERF_AVERAGE_TIMER, 7, "Avg. Latency"),
	CTR(7, PERF_AVERAGE_BASE, NO_ID, "Latency Base"),
	CTR(8, PERF_COUNTER_LARGE_RAWCOUNT, NO_ID, "Memory Bytes"),
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int skip(const char *why)
{
	printf("bench_exporter: skip: %s\n", why);
	return 0;
}

/* register, start and fill the counter set; returns the provider handle or NULL */
static HANDLE provide(const GUID *set, const GUID *pg)
{
	struct perflib_counterset_reg reg = {
		.provider_guid = *pg,
		.counterset_guid = *set,
		.instance_type = PERF_COUNTERSET_MULTI_INSTANCES,
		.detail_level = PERF_DETAIL_NOVICE,
		.provider_name = "bench_exporter",
		.name = "Bench Exporter",
		.help = "10,000 instances of 8 counters",
		.nr_counters = NR_COUNTERS,
		.counters = counters,
	};
	struct {
		PERF_COUNTERSET_INFO set;
		PERF_COUNTER_INFO c[NR_COUNTERS];
	} tmpl = {0};
	WCHAR name[32];
	HANDLE h;
	int err, i, c, k;

	err = perflib_register_counterset(&reg, NULL);
	if (err) {
		fprintf(stderr, "bench_exporter: register: %s\n", strerror(-err));
		return NULL;
	}
	tmpl.set.CounterSetGuid = *set;
	tmpl.set.ProviderGuid = *pg;
	tmpl.set.NumCounters = NR_COUNTERS;
	tmpl.set.InstanceType = PERF_COUNTERSET_MULTI_INSTANCES;
	for (c = 0; c < NR_COUNTERS; c++) {
		tmpl.c[c].CounterId = counters[c].id;
		tmpl.c[c].Type = counters[c].type;
		tmpl.c[c].Size = (counters[c].type & 0x300) == PERF_SIZE_LARGE ? 8 : 4;
	}
	if (PerfStartProvider((GUID *)pg, NULL, &h))
		return NULL;
	if (PerfSetCounterSetInfo(h, &tmpl.set, sizeof(tmpl))) {
		fprintf(stderr, "bench_exporter: PerfSetCounterSetInfo failed\n");
		PerfStopProvider(h);
		return NULL;
	}
	for (i = 0; i < NR_INSTANCES; i++) {
		PPERF_COUNTERSET_INSTANCE inst;
		char ascii[32];

		snprintf(ascii, sizeof(ascii), "worker-%05d", i);
		for (k = 0; ascii[k]; k++)
			name[k] = (WCHAR)ascii[k];
		name[k] = 0;
		inst = PerfCreateInstance(h, set, name, (ULONG)i);
		if (!inst) {
			fprintf(stderr, "bench_exporter: PerfCreateInstance #%d: %u\n", i,
				GetLastError());
			PerfStopProvider(h);
			return NULL;
		}
		for (c = 0; c < NR_COUNTERS; c++) {
			ULONGLONG v = (ULONGLONG)(i + 1) * 1000003u * (c + 1);

			if (tmpl.c[c].Size == 8)
				PerfSetULongLongCounterValue(h, inst, counters[c].id, v);
			else
				PerfSetULongCounterValue(h, inst, counters[c].id, (ULONG)v);
		}
	}
	return h;
}

/* NR_SCRAPES scrapes in @fmt; prints ms per scrape and the size of one */
static int time_scrapes(struct collector *col, enum exp_format fmt, const char *what)
{
	struct exp_buf out = {0};
	double start, best = 1e30, total = 0, cbest = 1e30;
	size_t bytes = 0;
	int i, err = 0;

	for (i = 0; i < NR_SCRAPES && !err; i++) {
		out.len = 0;
		start = now_ms();
		err = collector_scrape(col, fmt, &out);
		start = now_ms() - start;
		total += start;
		best = start < best ? start : best;
		if (collector_stats(col)->collect_ms < cbest)
			cbest = collector_stats(col)->collect_ms;
		bytes = out.len;
	}
	if (err) {
		fprintf(stderr, "bench_exporter: scrape: %s\n", collector_error(col));
		exp_buf_free(&out);
		return 1;
	}
	printf("exporter %-11s %d instances x %d counters: %7.2f ms/scrape (best %.2f, of which "
	       "collecting %.2f), %zu bytes, %zu instances exported\n",
	       what, NR_INSTANCES, NR_COUNTERS, total / NR_SCRAPES, best, cbest, bytes,
	       collector_stats(col)->nr_instances);
	exp_buf_free(&out);
	return 0;
}

/* the consumer API alone: one wildcard query, PerfQueryCounterData repeated */
static void time_api(const GUID *set)
{
	struct {
		PERF_COUNTER_IDENTIFIER id;
		WCHAR name[4];
	} spec = {.id = {.CounterSetGuid = *set,
			 .Size = sizeof(spec),
			 .CounterId = PERF_WILDCARD_COUNTER,
			 .InstanceId = 0xFFFFFFFF},
		  .name = {'*', 0}};
	HANDLE q;
	void *buf = NULL;
	DWORD need = 0;
	double start, total = 0;
	int i;

	if (PerfOpenQueryHandle(NULL, &q))
		return;
	if (PerfAddCounters(q, &spec.id, sizeof(spec)) ||
	    PerfQueryCounterData(q, NULL, 0, &need) != ERROR_NOT_ENOUGH_MEMORY)
		goto out;
	need += need / 4;
	buf = malloc(need);
	for (i = 0; buf && i < NR_SCRAPES; i++) {
		DWORD got;

		start = now_ms();
		if (PerfQueryCounterData(q, buf, need, &got))
			goto out;
		total += now_ms() - start;
	}
	if (buf)
		printf("PerfQueryCounterData alone:                       %7.2f ms/call, "
		       "%u bytes\n",
		       total / NR_SCRAPES, ((PERF_DATA_HEADER *)buf)->dwTotalSize);
out:
	free(buf);
	PerfCloseQueryHandle(q);
}

int main(void)
{
	GUID set, pg;
	char root[64];
	struct collector *col = NULL;
	HANDLE h;
	int rc = 1;

	if (geteuid() != 0)
		return skip("needs root for BPF maps");
	snprintf(root, sizeof(root), "/sys/fs/bpf/perflib-bench-%d", (int)getpid());
	if (mkdir(root, 0755))
		return skip("cannot create a pin root under /sys/fs/bpf");
	setenv("PERFLIB_ROOT", root, 1);
	perflib_set_pin_root(root);
	perflib_set_capacity(NR_INSTANCES, 64); /* 63-character names: compact slots */
	perflib_guid_from_string("{b3c4e7a0-0001-4e5f-8a6b-0000000000b1}", &set);
	perflib_guid_from_string("{b3c4e7a0-0000-4e5f-8a6b-0000000000b0}", &pg);

	h = provide(&set, &pg);
	if (!h)
		goto out;
	if (collector_new(&col))
		goto out;
	rc = time_scrapes(col, EXP_FMT_OPENMETRICS, "OpenMetrics") ||
	     time_scrapes(col, EXP_FMT_PROMETHEUS, "Prometheus");
	time_api(&set);
out:
	collector_free(col);
	if (h)
		PerfStopProvider(h);
	perflib_unregister_counterset(&set, true);
	rmdir(root);
	return rc;
}
