/* SPDX-License-Identifier: MIT */
/*
 * tp_opts.h - typeperf's command line (tools.md 4.1), parsed by the tools' one parser
 * (tool_parse, tools/common/tool.h): switches are case-insensitive and written "-si 5",
 * "/si:5" or "--si=5"; everything else is a counter path ("--" ends the switches).
 *
 *	typeperf { counter [counter ...] | -cf file | -q [object] | -qx [object] }
 *		 [-f CSV|TSV] [-si [[hh:]mm:]ss] [-o file] [-y] [-sc samples]
 *		 [-s computer] [-config file]
 *
 * -config file format (Windows leaves it undocumented; this is the logman/relog settings
 * layout): a line "[name]" opens a switch (name without '-', e.g. [si], [sc], [o], [y],
 * [f], [s], [cf], [q], [qx]); the non-empty lines after it are its values, one per line.
 * [c], [counter] and [counters] hold counter paths, one per line. Lines starting with ';'
 * are comments. The settings take effect where -config appears on the command line, so a
 * later switch overrides them; a -config inside a settings file is refused.
 */
#ifndef TP_OPTS_H
#define TP_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "pdh.h"

#define TP_EXIT_OK 0
#define TP_EXIT_ERROR 1 /* no valid counters, I/O and API errors */
#define TP_EXIT_USAGE 2 /* bad command line */

enum tp_query {
	TP_QUERY_NONE,
	TP_QUERY_Q,  /* -q: counters without instances */
	TP_QUERY_QX, /* -qx: counters with instances */
};

struct tp_opts {
	char **counters; /* counter paths: positionals and -cf lines, in order given */
	size_t nr_counters;
	DWORD format;	       /* -f: PDH_LOG_TYPE_CSV (default) or PDH_LOG_TYPE_TSV */
	unsigned int interval; /* -si in seconds, default 1 */
	char *output;	       /* -o file, NULL for stdout */
	bool yes;	       /* -y: overwrite -o without asking */
	enum tp_query query;   /* -q / -qx */
	char *query_object;    /* object of -q/-qx, NULL for all */
	unsigned long samples; /* -sc, 0 = until Ctrl+C */
	char *machine;	       /* -s (without a leading "\\"), NULL for this machine */
};

/*
 * tp_opts_parse - parse @argv[1 .. @argc) into @ret (zeroed first; free with
 * tp_opts_free, also after an error). -cf and -config files are read here: a missing
 * file is a usage error with the reason. Returns TOOL_CONTINUE when typeperf should go
 * on, else its exit status: TP_EXIT_OK after -? (the manual printed on stdout),
 * TP_EXIT_USAGE after a usage error ("Error: <message>" and "Type "typeperf -?" for
 * help." on stderr), TP_EXIT_ERROR when out of memory ("Error: Out of memory.").
 */
int tp_opts_parse(int argc, char *const *argv, struct tp_opts *ret);

/* tp_opts_free - free what tp_opts_parse allocated */
void tp_opts_free(struct tp_opts *opts);

/*
 * tp_parse_interval - "-si [[hh:]mm:]ss" into seconds. Each part is decimal digits;
 * minutes and seconds after a colon must be below 60; the total must be 1 second to one
 * year. -EINVAL otherwise.
 */
int tp_parse_interval(const char *s, unsigned int *ret_seconds);

#endif /* TP_OPTS_H */
