// SPDX-License-Identifier: MIT
/*
 * prov_hold.c - a provider process for the reliability tests (test_pidns): registers the
 * standard test template (tests/helpers/prov_util.h) for a counter set, creates one
 * instance per NAME (ids 0, 1, ...), prints "ready <getpid()>" on stdout and holds them
 * until stdin reaches EOF; then it dies by SIGKILL, leaving its instances behind as a
 * crashed provider does.
 *
 *   prov_hold hold COUNTERSET-GUID NAME...
 *   prov_hold zombie COUNTERSET-GUID NAME...
 *
 * zombie: the main thread ends with pthread_exit() once ready (the thread-group leader
 * becomes a zombie) while a worker thread keeps incrementing counter 1 of every instance
 * every millisecond and waits for the EOF. PERFLIB_ROOT chooses the pin root.
 * Exit: 2 bad usage or registration, 3 an instance could not be created.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "perflib.h"
#include "perflib-linux.h"

#define MAX_NAMES 16

static HANDLE prov;
static PPERF_COUNTERSET_INSTANCE insts[MAX_NAMES];
static int nr_insts;

/* until stdin reaches EOF, incrementing counter 1 of the instances when @work */
static void hold(int work)
{
	struct pollfd pfd = {.fd = 0, .events = POLLIN};
	char buf[64];
	int i;

	for (;;) {
		if (poll(&pfd, 1, work ? 1 : -1) > 0 && read(0, buf, sizeof(buf)) <= 0)
			break;
		for (i = 0; work && i < nr_insts; i++)
			PerfIncrementULongCounterValue(prov, insts[i], 1, 1);
	}
	raise(SIGKILL);
}

static void *worker(void *arg)
{
	(void)arg;
	hold(1);
	return NULL;
}

int main(int argc, char **argv)
{
	struct {
		PERF_COUNTERSET_INFO set;
		PERF_COUNTER_INFO c[2];
	} t;
	GUID set, pg;
	WCHAR name[64];
	pthread_t th;
	int i, k;

	if (argc < 4 || argc - 3 > MAX_NAMES ||
	    (strcmp(argv[1], "hold") && strcmp(argv[1], "zombie")) ||
	    perflib_guid_from_string(argv[2], &set) ||
	    perflib_guid_from_string("{5a1e0b7e-0000-4d2c-9a3b-0000000000ff}", &pg)) {
		fprintf(stderr, "usage: prov_hold hold|zombie COUNTERSET-GUID NAME...\n");
		return 2;
	}
	memset(&t, 0, sizeof(t));
	t.set.CounterSetGuid = set;
	t.set.ProviderGuid = pg;
	t.set.NumCounters = 2;
	t.set.InstanceType = PERF_COUNTERSET_MULTI_INSTANCES;
	t.c[0] = (PERF_COUNTER_INFO){.CounterId = 1,
				     .Type = PERF_COUNTER_RAWCOUNT,
				     .Size = 4,
				     .DetailLevel = PERF_DETAIL_NOVICE};
	t.c[1] = (PERF_COUNTER_INFO){.CounterId = 2,
				     .Type = PERF_COUNTER_LARGE_RAWCOUNT,
				     .Size = 8,
				     .DetailLevel = PERF_DETAIL_NOVICE};
	if (PerfStartProvider(&pg, NULL, &prov) || PerfSetCounterSetInfo(prov, &t.set, sizeof(t)))
		return 2;
	for (i = 3; i < argc; i++) {
		for (k = 0; argv[i][k] && k < 63; k++)
			name[k] = (WCHAR)(unsigned char)argv[i][k];
		name[k] = 0;
		insts[nr_insts] = PerfCreateInstance(prov, &set, name, (ULONG)nr_insts);
		if (!insts[nr_insts])
			return 3;
		nr_insts++;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!strcmp(argv[1], "hold")) {
		hold(0);
		return 0;
	}
	if (pthread_create(&th, NULL, worker, NULL))
		return 2;
	pthread_exit(NULL);
}
