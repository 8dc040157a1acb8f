/* SPDX-License-Identifier: MIT */
/*
 * sample.c - typeperf's sampling, a PDH client as on Windows: every counter path is
 * expanded once at start (PdhExpandWildCardPathA: instances appearing later are not
 * added) and each match added to one PDH query; PdhOpenLog writes the header to -o or to
 * the console ("CON") and takes the priming sample, so that two-sample types (rates,
 * timers, sample fractions) have a value in the first row and -sc N writes N rows;
 * PdhUpdateLog writes one row per interval (values unscaled and uncapped, " " for an
 * instance that vanished until it comes back). Counter semantics, instance numbering,
 * cooking and the CSV/TSV format are libpdh's.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pdh.h"
#include "perflib/pdh-linux.h"
#include "typeperf.h"
#include "tool.h"

/* the paths @text expands to, as a malloc'd MULTI_SZ; NULL (with the status) when none */
static char *expand(const char *text, PDH_STATUS *ret)
{
	char *list = NULL, *grown;
	DWORD len = 0;
	int tries;

	for (tries = 0; tries < 4; tries++) {
		*ret = PdhExpandWildCardPathA(NULL, text, list, &len, 0);
		if (*ret != PDH_MORE_DATA)
			break;
		/* the catalog may grow between the calls: ask again with what it said */
		grown = realloc(list, len ? len : 1);
		if (!grown) {
			*ret = PDH_MEMORY_ALLOCATION_FAILURE;
			break;
		}
		list = grown;
	}
	if (*ret || !list || !*list) {
		free(list);
		return NULL;
	}
	return list;
}

/*
 * the computer of path @text (PdhParseCounterPath), without its "\\", into *@ret_machine
 * (malloc'd; NULL when the path names none). 0, -EINVAL for no valid path, -ENOMEM.
 */
static int path_machine(const char *text, char **ret_machine)
{
	PDH_COUNTER_PATH_ELEMENTS_A *e = NULL;
	const char *m;
	DWORD size = 0;
	PDH_STATUS st;
	int tries;

	st = PdhParseCounterPathA(text, NULL, &size, 0);
	for (tries = 0; st == PDH_MORE_DATA && tries < 2; tries++) {
		free(e);
		e = malloc(size);
		if (!e)
			return -ENOMEM;
		st = PdhParseCounterPathA(text, e, &size, 0);
	}
	if (st || !e) {
		free(e);
		return st == PDH_MEMORY_ALLOCATION_FAILURE ? -ENOMEM : -EINVAL;
	}
	*ret_machine = NULL;
	if (e->szMachineName) {
		for (m = e->szMachineName; *m == '\\'; m++)
			;
		*ret_machine = strdup(m);
		if (!*ret_machine) {
			free(e);
			return -ENOMEM;
		}
	}
	free(e);
	return 0;
}

/* add every counter @text names to @q; the number added, -ENOMEM */
static int add_path(PDH_HQUERY q, const char *text, const char *machine)
{
	PDH_STATUS st;
	char *full = NULL, *list, *own = NULL;
	const char *p;
	int added = 0, err;

	err = path_machine(text, &own);
	if (err == -ENOMEM)
		return err;
	if (err) {
		tool_warn("\"%s\" is not a valid counter path", text);
		return 0;
	}
	/* -s names the computer of paths without one */
	if (!own && machine) {
		full = malloc(strlen(machine) + strlen(text) + 3);
		if (!full)
			return -ENOMEM;
		sprintf(full, "\\\\%s%s", machine, text);
	}
	list = expand(full ? full : text, &st);
	if (st == PDH_MEMORY_ALLOCATION_FAILURE) {
		added = -ENOMEM;
	} else if (st == PDH_CSTATUS_NO_MACHINE) {
		tool_warn("%s: cannot read counter sets: the computer cannot be reached",
			  own ? own : machine);
	} else if (st == PDH_ACCESS_DENIED) {
		tool_warn("%s: cannot read counter sets: access denied", own ? own : machine);
	}
	for (p = list; p && *p; p += strlen(p) + 1) {
		PDH_HCOUNTER c;

		if (!PdhAddCounterA(q, p, 0, &c))
			added++;
	}
	if (!added)
		tool_warn("\"%s\" matches no counter", text);
	free(list);
	free(full);
	free(own);
	return added;
}

/* wait until @deadline (CLOCK_MONOTONIC); false when SIGINT/SIGTERM came first */
static bool wait_until(const struct timespec *deadline, const sigset_t *sigs)
{
	struct timespec now, left;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = deadline->tv_sec - now.tv_sec;
		left.tv_nsec = deadline->tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0)
			left.tv_nsec += 1000000000L, left.tv_sec--;
		if (left.tv_sec < 0)
			return true;
		/* the signals are blocked, so one arriving at any time is seen here */
		if (sigtimedwait(sigs, NULL, &left) >= 0)
			return false;
		if (errno != EAGAIN && errno != EINTR)
			return true;
	}
}

/* the log's status is an output error (else a sample that had no data: a row of " ") */
static bool write_failed(PDH_STATUS st)
{
	return st == PDH_LOG_FILE_CREATE_ERROR || st == PDH_MEMORY_ALLOCATION_FAILURE ||
	       st == PDH_INVALID_HANDLE;
}

int tp_sample_run(const struct tp_opts *opts)
{
	DWORD type = opts->format; /* PDH_LOG_TYPE_CSV or _TSV */
	struct timespec deadline, now;
	PDH_HLOG log = NULL;
	PDH_HQUERY q = NULL;
	unsigned long row;
	sigset_t sigs, old;
	PDH_STATUS st;
	int ret = TP_EXIT_ERROR, n, added = 0;
	size_t i;
	FILE *f;

	/* Ctrl+C ends sampling cleanly: blocked here, taken by sigtimedwait() */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, &old);
	if (PdhOpenQueryA(NULL, 0, &q)) {
		tool_warn("%s", strerror(ENOMEM));
		goto out;
	}
	for (i = 0; i < opts->nr_counters; i++) {
		n = add_path(q, opts->counters[i], opts->machine);
		if (n < 0) {
			tool_warn("%s", strerror(-n));
			goto out;
		}
		added += n;
	}
	if (!added) {
		tool_error("No valid counters.");
		goto out;
	}
	if (opts->output) {
		/* asked (or refused) only now: a run without counters leaves the file alone */
		sigprocmask(SIG_SETMASK, &old, NULL); /* Ctrl+C works at the question */
		f = tp_open_output(opts);
		sigprocmask(SIG_BLOCK, &sigs, NULL);
		if (!f)
			goto out;
		fclose(f);
	} else {
		fputs("\r\n", stdout); /* the console output starts with an empty line */
		if (fflush(stdout))
			goto io_error;
	}
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	/* the header (typeperf's, without the time zone), and the priming sample */
	st = PdhOpenLogA(opts->output ? opts->output : "CON",
			 PDH_LOG_WRITE_ACCESS | PDH_LOG_CREATE_ALWAYS | PDH_LINUX_LOG_NO_ZONE,
			 &type, q, 0, NULL, &log);
	if (st)
		goto io_error;
	for (row = 0; !opts->samples || row < opts->samples; row++) {
		deadline.tv_sec += opts->interval;
		/* a collection that overran a whole interval restarts the schedule, no burst */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > deadline.tv_sec + (time_t)opts->interval)
			deadline = now;
		if (!wait_until(&deadline, &sigs))
			break;
		st = PdhUpdateLogA(log, NULL);
		if (write_failed(st))
			goto io_error;
		if (st)
			tool_warn("collecting failed: 0x%08X", (unsigned int)st);
	}
	/* as Windows: also after Ctrl+C, on the console */
	fputs("Exiting, please wait...\r\n", stdout);
	st = PdhCloseLog(log, 0);
	log = NULL;
	if (st)
		goto io_error;
	fputs("The command completed successfully.\r\n", stdout);
	ret = TP_EXIT_OK;
	goto out;
io_error:
	tool_error("Cannot write the output.");
out:
	if (log)
		PdhCloseLog(log, 0);
	if (q)
		PdhCloseQuery(q);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}
