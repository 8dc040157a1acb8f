// SPDX-License-Identifier: MIT
/*
 * exp_provider.c - the provider of the perflib-exporter tests (tests/tools/test_exporter.sh,
 * test_prometheus.sh): registers two counter sets with names and help (as lodctr would),
 * publishes instances with known values, prints "ready" and then reads commands on stdin
 * until EOF (or SIGTERM/SIGINT), then stops the provider.
 *
 *   exp_provider            PERFLIB_ROOT chooses the pin root
 *
 * Commands (one per line, answered "ok" or "error ..."):
 *   set SET INSTANCE COUNTER VALUE    SET 0 or 1, INSTANCE index below, COUNTER id
 *   add SET INSTANCE COUNTER VALUE    increment
 *   delete SET INSTANCE               PerfDeleteInstance (the instance disappears)
 *   create SET INSTANCE               PerfCreateInstance again, with its start values
 *
 * "Exporter Test" {e4b0e7a0-0001-4e5f-8a6b-000000000001}, multi-instance; instances
 * (index: name, id): 0 "alpha" 0, 1 "beta" 1, 2 quote"back\slash 2, 3 "café €" 3,
 * 4 "alpha" 7 (a repeated name: exported as "alpha#1"). Counters (id, type, name):
 *   1 PERF_COUNTER_COUNTER     Requests/sec           (i+1)*100
 *   2 PERF_COUNTER_BULK_COUNT  Bytes Total            (i+1)*1000000000000
 *   3 PERF_COUNTER_RAWCOUNT    Queue Length           i+5
 *   4 PERF_100NSEC_TIMER       Busy Time              (i+1)*12345678 (1.2345678 s per step)
 *   5 PERF_AVERAGE_TIMER       Avg. Latency (base 6)  (i+1)*250000000 (0.25 s at 1 GHz)
 *   6 PERF_AVERAGE_BASE        Latency Base, hidden   (i+1)*10
 *   7 PERF_RAW_FRACTION        Hit Ratio (base 8)     (i+1)*3
 *   8 PERF_RAW_BASE            Hit Ratio Base, hidden (i+1)*4
 *   9 PERF_COUNTER_RAWCOUNT    Internal, hidden       99
 * "Exporter Single" {e4b0e7a0-0002-4e5f-8a6b-000000000002}, single instance:
 *   1 PERF_COUNTER_LARGE_RAWCOUNT  Connections  12345678901234
 *   2 PERF_COUNTER_COUNTER         Errors/sec   7
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perflib.h"
#include "perflib-linux.h"

#define PROVIDER_GUID "{e4b0e7a0-0000-4e5f-8a6b-000000000000}"
#define NO_ID 0xFFFFFFFF
#define MAX_COUNTERS 9
#define MAX_INSTANCES 5

struct set_def {
	const char *guid;
	const char *name, *help;
	ULONG instance_type;
	unsigned int nr_counters;
	struct perflib_counter_reg counters[MAX_COUNTERS];
	unsigned int nr_instances;
	const WCHAR *names[MAX_INSTANCES];
	ULONG ids[MAX_INSTANCES];
};

#define CTR(id, type, attrib, base, name, help)                                                    \
	{                                                                                          \
		id, type, attrib, PERF_DETAIL_NOVICE, 0, base, NO_ID, NO_ID, NO_ID,                \
			PERF_AGGREGATE_TOTAL, name, help                                           \
	}

static const struct set_def sets[2] = {
	{
		"{e4b0e7a0-0001-4e5f-8a6b-000000000001}",
		"Exporter Test",
		"Counters of the perflib-exporter test provider",
		PERF_COUNTERSET_MULTI_INSTANCES,
		9,
		{
			CTR(1, PERF_COUNTER_COUNTER, 0, NO_ID, "Requests/sec",
			    "Requests served since the start."),
			CTR(2, PERF_COUNTER_BULK_COUNT, 0, NO_ID, "Bytes Total", "Bytes sent."),
			CTR(3, PERF_COUNTER_RAWCOUNT, 0, NO_ID, "Queue Length",
			    "Requests \"waiting\" in the queue,\nback\\slash."),
			CTR(4, PERF_100NSEC_TIMER, 0, NO_ID, "Busy Time", "Time spent busy."),
			CTR(5, PERF_AVERAGE_TIMER, 0, 6, "Avg. Latency", "Latency of a request."),
			CTR(6, PERF_AVERAGE_BASE, PERF_ATTRIB_NO_DISPLAYABLE, NO_ID, "Latency Base",
			    "Requests timed."),
			CTR(7, PERF_RAW_FRACTION, 0, 8, "Hit Ratio", "Cache hits."),
			CTR(8, PERF_RAW_BASE, PERF_ATTRIB_NO_DISPLAYABLE, NO_ID, "Hit Ratio Base",
			    "Cache lookups."),
			CTR(9, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_NO_DISPLAYABLE, NO_ID, "Internal",
			    "Not for display."),
		},
		5,
		{u"alpha", u"beta", u"quote\"back\\slash", u"caf\u00e9 \u20ac", u"alpha"},
		{0, 1, 2, 3, 7},
	},
	{
		"{e4b0e7a0-0002-4e5f-8a6b-000000000002}",
		"Exporter Single",
		"A single-instance counter set",
		PERF_COUNTERSET_SINGLE_INSTANCE,
		2,
		{
			CTR(1, PERF_COUNTER_LARGE_RAWCOUNT, 0, NO_ID, "Connections",
			    "Open connections."),
			CTR(2, PERF_COUNTER_COUNTER, 0, NO_ID, "Errors/sec", "Errors seen."),
		},
		1,
		{u""},
		{0},
	},
};

static HANDLE provider;
static volatile sig_atomic_t stopping;
static PPERF_COUNTERSET_INSTANCE inst[2][MAX_INSTANCES];

static bool is_large(ULONG type)
{
	return (type & 0x300) == PERF_SIZE_LARGE;
}

/* the type of counter @id in set @s, 0 if none */
static ULONG type_of(unsigned int s, ULONG id)
{
	unsigned int c;

	for (c = 0; c < sets[s].nr_counters; c++)
		if (sets[s].counters[c].id == id)
			return sets[s].counters[c].type;
	return 0;
}

static ULONG set_value(unsigned int s, unsigned int i, ULONG id, ULONGLONG v, bool add)
{
	ULONG type = type_of(s, id);

	if (is_large(type))
		return add ? PerfIncrementULongLongCounterValue(provider, inst[s][i], id, v)
			   : PerfSetULongLongCounterValue(provider, inst[s][i], id, v);
	return add ? PerfIncrementULongCounterValue(provider, inst[s][i], id, (ULONG)v)
		   : PerfSetULongCounterValue(provider, inst[s][i], id, (ULONG)v);
}

/* the documented start value of counter @id of instance @i in set @s */
static ULONGLONG start_value(unsigned int s, unsigned int i, ULONG id)
{
	static const ULONGLONG step[2][10] = {
		{0, 100, 1000000000000ULL, 1, 12345678, 250000000, 10, 3, 4, 0},
		{0, 12345678901234ULL, 7},
	};

	if (s == 0 && id == 3)
		return i + 5;
	if (s == 0 && id == 9)
		return 99;
	return s == 0 ? (i + 1) * step[0][id] : step[1][id];
}

static int start(void)
{
	struct {
		PERF_COUNTERSET_INFO set;
		PERF_COUNTER_INFO c[MAX_COUNTERS];
	} tmpl;
	GUID pg;
	unsigned int s, c, i;
	int err;

	perflib_guid_from_string(PROVIDER_GUID, &pg);
	if (PerfStartProvider(&pg, NULL, &provider)) {
		fprintf(stderr, "exp_provider: PerfStartProvider failed\n");
		return 1;
	}
	for (s = 0; s < 2; s++) {
		const struct set_def *d = &sets[s];
		struct perflib_counterset_reg reg = {
			.provider_guid = pg,
			.instance_type = d->instance_type,
			.detail_level = PERF_DETAIL_NOVICE,
			.provider_name = "exp_provider",
			.name = d->name,
			.help = d->help,
			.nr_counters = d->nr_counters,
			.counters = d->counters,
		};
		ULONG status;

		perflib_guid_from_string(d->guid, &reg.counterset_guid);
		err = perflib_register_counterset(&reg, NULL);
		if (err && err != -EEXIST) {
			fprintf(stderr, "exp_provider: register %s: %s\n", d->name, strerror(-err));
			return 1;
		}
		memset(&tmpl, 0, sizeof(tmpl));
		tmpl.set.CounterSetGuid = reg.counterset_guid;
		tmpl.set.ProviderGuid = pg;
		tmpl.set.NumCounters = d->nr_counters;
		tmpl.set.InstanceType = d->instance_type;
		for (c = 0; c < d->nr_counters; c++) {
			tmpl.c[c].CounterId = d->counters[c].id;
			tmpl.c[c].Type = d->counters[c].type;
			tmpl.c[c].Attrib = d->counters[c].attrib;
			tmpl.c[c].Size = is_large(d->counters[c].type) ? 8 : 4;
			tmpl.c[c].DetailLevel = PERF_DETAIL_NOVICE;
		}
		status = PerfSetCounterSetInfo(
			provider, &tmpl.set, sizeof(tmpl.set) + d->nr_counters * sizeof(tmpl.c[0]));
		if (status) {
			fprintf(stderr, "exp_provider: PerfSetCounterSetInfo %s: %u\n", d->name,
				status);
			return 1;
		}
		for (i = 0; i < d->nr_instances; i++) {
			inst[s][i] = PerfCreateInstance(provider, &reg.counterset_guid, d->names[i],
							d->ids[i]);
			if (!inst[s][i]) {
				fprintf(stderr, "exp_provider: PerfCreateInstance %s #%u: %u\n",
					d->name, i, GetLastError());
				return 1;
			}
			for (c = 0; c < d->nr_counters; c++) {
				ULONG id = d->counters[c].id;

				status = set_value(s, i, id, start_value(s, i, id), false);
				if (status) {
					fprintf(stderr, "exp_provider: set %s #%u counter %u: %u\n",
						d->name, i, id, status);
					return 1;
				}
			}
		}
	}
	return 0;
}

/* "delete SET INSTANCE" / "create SET INSTANCE": an instance that goes and comes back */
static void command_instance(const char *verb, unsigned int s, unsigned int i)
{
	GUID g;
	unsigned int c;
	ULONG status = ERROR_SUCCESS;

	perflib_guid_from_string(sets[s].guid, &g);
	if (!strcmp(verb, "delete")) {
		status = inst[s][i] ? PerfDeleteInstance(provider, inst[s][i]) : ERROR_NOT_FOUND;
		inst[s][i] = NULL;
	} else if (!inst[s][i]) {
		inst[s][i] = PerfCreateInstance(provider, &g, sets[s].names[i], sets[s].ids[i]);
		status = inst[s][i] ? ERROR_SUCCESS : GetLastError();
		for (c = 0; !status && c < sets[s].nr_counters; c++)
			status = set_value(s, i, sets[s].counters[c].id,
					   start_value(s, i, sets[s].counters[c].id), false);
	}
	if (status)
		printf("error %u\n", status);
	else
		printf("ok\n");
}

static void command(const char *line)
{
	unsigned int s, i;
	unsigned long id;
	unsigned long long v;
	char verb[8];
	ULONG status;

	if (sscanf(line, "%7s %u %u", verb, &s, &i) == 3 &&
	    (!strcmp(verb, "delete") || !strcmp(verb, "create")) && s <= 1 &&
	    i < sets[s].nr_instances) {
		command_instance(verb, s, i);
		return;
	}
	if (sscanf(line, "%7s %u %u %lu %llu", verb, &s, &i, &id, &v) != 5 || s > 1 ||
	    i >= sets[s].nr_instances || !type_of(s, (ULONG)id) ||
	    (strcmp(verb, "set") && strcmp(verb, "add"))) {
		printf("error: expected 'set|add SET INSTANCE COUNTER VALUE'\n");
		return;
	}
	status = set_value(s, i, (ULONG)id, v, !strcmp(verb, "add"));
	if (status)
		printf("error %u\n", status);
	else
		printf("ok\n");
}

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

int main(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	char line[256];
	int rc;

	rc = start();
	if (rc) {
		if (provider)
			PerfStopProvider(provider);
		return rc;
	}
	/* SIGTERM/SIGINT interrupt fgets (no SA_RESTART): the loop ends and we stop */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!stopping && fgets(line, sizeof(line), stdin)) {
		command(line);
		fflush(stdout);
	}
	return PerfStopProvider(provider) == ERROR_SUCCESS ? 0 : 1;
}
