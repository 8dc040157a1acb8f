/* SPDX-License-Identifier: MIT */
/*
 * typeperf - write performance-counter data to the console or a file, or list the
 * installed counters: the Windows tool (tools.md 4) on the perflib consumer API. The
 * command line and its manual are tp_opts.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "typeperf.h"
#include "tool.h"

FILE *tp_open_output(const struct tp_opts *opts)
{
	const char *path = opts->output;
	bool yes = opts->yes;
	char answer[16];
	struct stat st;
	FILE *f;

	if (!yes && stat(path, &st) == 0) {
		if (!isatty(STDIN_FILENO)) {
			tool_error("%s already exists (use -y to overwrite it).", path);
			return NULL;
		}
		fprintf(stderr, "%s already exists. Overwrite it? [y/n] ", path);
		if (!fgets(answer, sizeof(answer), stdin) ||
		    (answer[0] != 'y' && answer[0] != 'Y')) {
			tool_error("%s was not overwritten.", path);
			return NULL;
		}
	}
	f = fopen(path, "w");
	if (!f)
		tool_error("cannot open %s: %s", path, strerror(errno));
	return f;
}

/* -q / -qx */
static int query_list(const struct tp_opts *opts)
{
	struct tp_machine m;
	char *objects = NULL;
	FILE *out = stdout;
	PDH_STATUS st;
	int n, ret = TP_EXIT_ERROR;
	bool bad;

	if (tp_machine_init(&m, opts->machine)) {
		tool_error("Out of memory.");
		goto out;
	}
	st = tp_machine_objects(&m, &objects);
	if (st) {
		tool_error("%s: cannot read counter sets: %s", m.display, tp_pdh_str(st));
		goto out;
	}
	if (opts->output) {
		out = tp_open_output(opts);
		if (!out)
			goto out;
	}
	n = tp_list(&m, objects, opts->query_object, opts->query == TP_QUERY_QX, out);
	bad = n < 0 || fflush(out);
	if (out != stdout)
		bad |= fclose(out) != 0;
	if (bad) {
		tool_error("%s", n == -ENOMEM ? "Out of memory." : "Cannot write the output.");
		goto out;
	}
	if (n == 0 && opts->query_object) {
		tool_error("No object matches \"%s\".", opts->query_object);
		goto out;
	}
	fputs("The command completed successfully.\n", stdout);
	ret = TP_EXIT_OK;
out:
	free(objects);
	tp_machine_free(&m);
	return ret;
}

int main(int argc, char **argv)
{
	struct tp_opts opts;
	int ret;

	ret = tp_opts_parse(argc, argv, &opts);
	if (ret == TOOL_CONTINUE)
		ret = opts.query != TP_QUERY_NONE ? query_list(&opts) : tp_sample_run(&opts);
	tp_opts_free(&opts);
	return ret;
}
