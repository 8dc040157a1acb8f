// SPDX-License-Identifier: MIT
/*
 * perflib-demo - a provider written as for Windows: the header comes from ctrpp, the calls
 * are perflib's. Two workers serve simulated requests; their counters change every tick.
 * Runs until SIGINT/SIGTERM or for --seconds N.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "demo_counters.h"
#include "tool.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

#define SYNOPSIS "Usage: perflib-demo [--seconds N]\n"

static const char usage[] = SYNOPSIS
	"\n"
	"Publish the \"Demo Service\" counter set (tools/perflib-demo/demo.man) with two\n"
	"instances, worker-1 and worker-2, whose counters change ten times a second.\n"
	"Register the manifest first (lodctr /m:tools/perflib-demo/demo.man) or run as root.\n"
	"Stops on SIGINT/SIGTERM, or after N seconds.\n";

struct args {
	unsigned int seconds; /* --seconds N, 0: until a signal */
};

static const struct tool_opt switches[] = {
	TOOL_OPT_HELP("?|h|help"),
	TOOL_OPT_UINT("seconds", struct args, seconds, 0, UINT_MAX),
	TOOL_OPT_END,
};

static const struct tool_cli cli = {
	.name = "perflib-demo",
	.usage = usage,
	.synopsis = SYNOPSIS,
	.exit_usage = 2,
	.opts = switches,
};

int main(int argc, char **argv)
{
	struct args a = {0};
	struct tool_parser p;
	static const WCHAR *const names[] = {u"worker-1", u"worker-2"};
	PPERF_COUNTERSET_INSTANCE inst[2];
	unsigned long ticks = 0, limit;
	struct timespec tick = {0, 100 * 1000 * 1000};
	ULONG st;
	int i, status;

	status = tool_parse(&p, &cli, &a, argc, argv);
	if (status != TOOL_CONTINUE)
		return status;
	limit = a.seconds * 10ul;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	st = CounterInitialize();
	if (st != ERROR_SUCCESS) {
		fprintf(stderr, "perflib-demo: CounterInitialize failed, error %u\n", st);
		return 1;
	}
	for (i = 0; i < 2; i++) {
		inst[i] = PerfCreateInstance(PerflibDemo, &DemoServiceGuid, names[i], (ULONG)i + 1);
		if (!inst[i]) {
			fprintf(stderr, "perflib-demo: PerfCreateInstance failed, error %u\n",
				GetLastError());
			CounterCleanup();
			return 1;
		}
	}
	printf("perflib-demo: publishing Demo Service (worker-1, worker-2), pid %d\n",
	       (int)getpid());
	fflush(stdout);
	while (!stop && (!limit || ticks < limit)) {
		for (i = 0; i < 2; i++) {
			/* worker-2 is busier; the active count swings with time */
			ULONG reqs = (ULONG)(3 + 4 * i + ticks % 3);

			PerfIncrementULongCounterValue(PerflibDemo, inst[i], DEMO_REQUESTS, reqs);
			PerfIncrementULongLongCounterValue(PerflibDemo, inst[i], DEMO_BYTES,
							   reqs * 1500ull);
			PerfSetULongCounterValue(PerflibDemo, inst[i], DEMO_ACTIVE,
						 (ULONG)((ticks / 10 + i) % 7));
			PerfIncrementULongCounterValue(PerflibDemo, inst[i], DEMO_CACHE_LOOKUPS, 4);
			PerfIncrementULongCounterValue(PerflibDemo, inst[i], DEMO_CACHE_HITS,
						       (ULONG)(3 - i));
		}
		ticks++;
		nanosleep(&tick, NULL);
	}
	for (i = 0; i < 2; i++)
		PerfDeleteInstance(PerflibDemo, inst[i]);
	CounterCleanup();
	return 0;
}
