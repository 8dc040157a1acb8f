// SPDX-License-Identifier: MIT
/*
 * prov_demo.c - a provider for the tool tests (tests/tools): registers a counter set with named counters
 * (as lodctr would), provides one instance "Worker 1" (id 7) with known values, prints
 * "ready <guid>" and waits until stdin reaches EOF or SIGTERM/SIGINT arrives, then stops.
 *
 *   prov_demo [counter-set-guid]      PERFLIB_ROOT chooses the pin root
 *
 * Counters (id, type, name, value):
 *   1  PERF_COUNTER_COUNTER         "Requests"       42
 *   2  PERF_COUNTER_BULK_COUNT      "Bytes Sent"     1234567890123
 *   3  PERF_COUNTER_RAWCOUNT        "Queue Length"   5
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "perflib.h"
#include "perflib-linux.h"

#define DEMO_GUID "{5a1e0b7e-0001-4d2c-9a3b-000000000001}"
#define PROVIDER_GUID "{5a1e0b7e-0000-4d2c-9a3b-000000000000}"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	static const struct perflib_counter_reg counters[3] = {
		{1, PERF_COUNTER_COUNTER, 0, PERF_DETAIL_NOVICE, 0, 0xFFFFFFFF, 0xFFFFFFFF,
		 0xFFFFFFFF, 0xFFFFFFFF, PERF_AGGREGATE_TOTAL, "Requests", "Requests served"},
		{2, PERF_COUNTER_BULK_COUNT, 0, PERF_DETAIL_NOVICE, 0, 0xFFFFFFFF, 0xFFFFFFFF,
		 0xFFFFFFFF, 0xFFFFFFFF, PERF_AGGREGATE_TOTAL, "Bytes Sent", "Bytes sent"},
		{3, PERF_COUNTER_RAWCOUNT, 0, PERF_DETAIL_NOVICE, 0, 0xFFFFFFFF, 0xFFFFFFFF,
		 0xFFFFFFFF, 0xFFFFFFFF, PERF_AGGREGATE_MAX, "Queue Length", "Requests waiting"},
	};
	struct {
		PERF_COUNTERSET_INFO CounterSet;
		PERF_COUNTER_INFO Counter[3];
	} tmpl;
	struct perflib_counterset_reg reg;
	struct sigaction sa;
	PPERF_COUNTERSET_INSTANCE inst;
	struct pollfd pfd = {.fd = 0, .events = POLLIN};
	GUID set, pg;
	HANDLE h;
	char buf[64];
	int err, i;

	if (perflib_guid_from_string(argc > 1 ? argv[1] : DEMO_GUID, &set) ||
	    perflib_guid_from_string(PROVIDER_GUID, &pg)) {
		fprintf(stderr, "usage: prov_demo [counter-set-guid]\n");
		return 2;
	}
	memset(&reg, 0, sizeof(reg));
	reg.provider_guid = pg;
	reg.counterset_guid = set;
	reg.instance_type = PERF_COUNTERSET_MULTI_INSTANCES;
	reg.provider_name = "prov_demo";
	reg.name = "Demo Service";
	reg.help = "Counters of the test demo provider";
	reg.nr_counters = 3;
	reg.counters = counters;
	err = perflib_register_counterset(&reg, NULL);
	if (err && err != -EEXIST) {
		fprintf(stderr, "prov_demo: register: %s\n", strerror(-err));
		return 1;
	}

	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.CounterSet.CounterSetGuid = set;
	tmpl.CounterSet.ProviderGuid = pg;
	tmpl.CounterSet.NumCounters = 3;
	tmpl.CounterSet.InstanceType = PERF_COUNTERSET_MULTI_INSTANCES;
	for (i = 0; i < 3; i++) {
		tmpl.Counter[i].CounterId = counters[i].id;
		tmpl.Counter[i].Type = counters[i].type;
		tmpl.Counter[i].Size = (counters[i].type & 0x300) == PERF_SIZE_LARGE ? 8 : 4;
		tmpl.Counter[i].DetailLevel = PERF_DETAIL_NOVICE;
	}
	if (PerfStartProvider(&pg, NULL, &h) ||
	    PerfSetCounterSetInfo(h, &tmpl.CounterSet, sizeof(tmpl))) {
		fprintf(stderr, "prov_demo: cannot start the provider\n");
		return 1;
	}
	inst = PerfCreateInstance(h, &set, u"Worker 1", 7);
	if (!inst || PerfSetULongCounterValue(h, inst, 1, 42) ||
	    PerfSetULongLongCounterValue(h, inst, 2, 1234567890123ULL) ||
	    PerfSetULongCounterValue(h, inst, 3, 5)) {
		fprintf(stderr, "prov_demo: cannot create the instance (%u)\n", GetLastError());
		return 1;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready %s\n", perflib_guid_to_string(&set, buf));
	fflush(stdout);
	/* until stdin closes (or a signal interrupts the wait) */
	while (!stop) {
		if (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			continue;
		if (pfd.revents & (POLLIN | POLLHUP)) {
			if (read(0, buf, sizeof(buf)) <= 0)
				break;
		}
	}
	return PerfStopProvider(h) == ERROR_SUCCESS ? 0 : 1;
}
