/* SPDX-License-Identifier: MIT */
/*
 * typeperf.h - what the files of typeperf share. Sampling is a PDH client (sample.c:
 * PdhExpandWildCardPath, PdhAddCounter, PdhOpenLog, PdhUpdateLog); the -q/-qx listing
 * reads the catalog with libpdh's loader (machine.c, tp_list).
 */
#ifndef TYPEPERF_H
#define TYPEPERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "perflib.h"
#include "catalog.h"
#include "tp_opts.h"

#define TP_EXIT_OK 0
#define TP_EXIT_ERROR 1 /* no valid counters, I/O and API errors */
#define TP_EXIT_USAGE 2 /* bad command line */

/* The computer of -q/-qx, with its catalog. */
struct tp_machine {
	char *name;		/* as written (path or -s), NULL for this machine */
	char *display;		/* name used in output paths: @name or the host name */
	WCHAR *wname;		/* @name in UTF-16 for the API, NULL for this machine */
	struct pdh_catalog cat; /* counter sets, names, instances at start */
	ULONG load_status;	/* ERROR_SUCCESS, or why the catalog could not be read */
};

/* messages: tool_warn ("typeperf: ..."), tool_error ("Error: ..."): tools/common/tool.h */

/* tp_win32_str - a short text for a Win32 code returned by the consumer API */
const char *tp_win32_str(ULONG code);

/*
 * tp_machine_init - fill @m for computer @name (NULL: this machine); tp_machine_load reads
 * its catalog (instances too when @instances) and records failure in m->load_status.
 * tp_machine_free releases everything, the query included. -ENOMEM or 0.
 */
int tp_machine_init(struct tp_machine *m, const char *name);
void tp_machine_load(struct tp_machine *m, bool instances);
void tp_machine_free(struct tp_machine *m);

/*
 * tp_open_output - open opts->output for writing. An existing file needs -y, or a yes
 * typed on the terminal; when stdin is no terminal typeperf refuses (a script must say
 * -y). Called only once the counters resolved, so a failed run leaves the file alone.
 * NULL (message printed) on refusal or error.
 */
FILE *tp_open_output(const struct tp_opts *opts);

/*
 * tp_sample_run - expand the counter paths of @opts into a PDH query, write the log (CSV
 * or TSV) to the console ("CON"), after an empty first line, or to -o, and sample until
 * -sc or SIGINT. Returns a
 * TP_EXIT_* code; prints "Error: No valid counters." when nothing resolves.
 */
int tp_sample_run(const struct tp_opts *opts);

/*
 * tp_list - write the -q (@instances false) or -qx (@instances true) listing of the
 * objects matching @object (all when NULL; '*' allowed) to @out, one path per line, no
 * machine prefix. -q shows "\Object(*)\Counter" for multi-instance objects; -qx one line
 * per instance and nothing for a multi-instance object without instances. Returns the
 * number of objects that matched, or -errno on a write error.
 */
int tp_list(const struct pdh_catalog *cat, const char *object, bool instances, FILE *out);

#endif /* TYPEPERF_H */
