/* SPDX-License-Identifier: MIT */
/*
 * typeperf - write performance-counter data to the console or a file, or list the
 * installed counters: the Windows tool (tools.md 4) on the perflib consumer API. See
 * usage_text for the command line and what differs from Windows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "typeperf.h"
#include "tool.h"

static const char usage_text[] =
	"NAME\n"
	"    typeperf - write performance counter data to the console or a file\n"
	"\n"
	"SYNOPSIS\n"
	"    typeperf { counter [counter ...] | -cf file | -q [object] | -qx [object] }\n"
	"             [-f CSV|TSV] [-si [[hh:]mm:]ss] [-o file] [-y] [-sc samples]\n"
	"             [-s computer] [-config file]\n"
	"    typeperf -? | /? | -h | --help\n"
	"\n"
	"DESCRIPTION\n"
	"    typeperf samples perflib counters every interval and writes one line per\n"
	"    sample in the PDH CSV format of the Windows tool, or lists the counters that\n"
	"    are installed (-q, -qx). Like the Windows tool it is a PDH client: counters\n"
	"    are read and cooked by libpdh with the formulas of each counter type (rates\n"
	"    per second, percentages, averages, elapsed times), and the rows are written\n"
	"    by PdhUpdateLog.\n"
	"\n"
	"    Switches are case-insensitive and start with '-' or '/'. Every other argument\n"
	"    is a counter path.\n"
	"\n"
	"COUNTER PATHS\n"
	"    \\\\Computer\\Object(Parent/Instance#Index)\\Counter\n"
	"\n"
	"    Object is a counter-set name, Counter a counter name, Instance an instance\n"
	"    name; names compare case-insensitively. \\\\Computer is optional (default:\n"
	"    -s, else this machine). Multi-instance objects need (Instance), single-\n"
	"    instance objects take none. '*' is a wildcard in the instance, the parent and\n"
	"    the counter, alone or inside a name (\\Process(svc*)\\*). Instances with the\n"
	"    same name are told apart by #1, #2, ... in order of appearance (the first one\n"
	"    has no #); a name without #n means the first one, a wildcard all of them.\n"
	"    Perflib counter sets have no parent objects: \"Parent/Instance\" matches an\n"
	"    instance whose name is exactly that. Base counters, counters with the\n"
	"    noDisplay attribute and hidden types are neither listed nor matched by '*';\n"
	"    such a counter named exactly is sampled when its type has a value.\n"
	"    Wildcards are expanded once, at start.\n"
	"\n"
	"OPTIONS\n"
	"    counter\n"
	"        A counter path to sample.\n"
	"    -cf file\n"
	"        Read counter paths from file, one per line (blank lines and lines\n"
	"        starting with ';' or '#' are skipped; CRLF line ends are accepted).\n"
	"    -f CSV|TSV\n"
	"        Output format; default CSV. TSV separates fields with TAB and starts with\n"
	"        \"(PDH-TSV 4.0)\". BIN and SQL are refused: the binary log format is\n"
	"        undocumented and SQL logging needs ODBC.\n"
	"    -si [[hh:]mm:]ss\n"
	"        Time between samples; default 1 second, at least 1 second.\n"
	"    -o file\n"
	"        Write the samples (or the -q/-qx list) to file instead of the console.\n"
	"        An existing file is overwritten after a y answer on the terminal, or with\n"
	"        -y; when standard input is not a terminal typeperf refuses instead of\n"
	"        asking. \"SQL:dsn!log\" is refused.\n"
	"    -y\n"
	"        Answer yes to the overwrite question.\n"
	"    -q [object]\n"
	"        List the counters of all objects, or of the objects matching object, one\n"
	"        path per line without computer: \\Object\\Counter for single-instance\n"
	"        objects, \\Object(*)\\Counter for multi-instance ones.\n"
	"    -qx [object]\n"
	"        Like -q with one line per instance: \\Object(Instance)\\Counter. An object\n"
	"        without instances lists nothing.\n"
	"    -sc samples\n"
	"        Number of samples to write; default: until Ctrl+C.\n"
	"    -s computer\n"
	"        Computer for paths without \\\\Computer. Only this machine can be read\n"
	"        (its host name, \"localhost\" or \".\"); other names give no counters.\n"
	"    -config file\n"
	"        Read switches from a settings file: a line \"[switch]\" (name without '-',\n"
	"        e.g. [si]) followed by its values, one per line; [c] (or [counter],\n"
	"        [counters]) holds counter paths; lines starting with ';' are comments.\n"
	"        The settings apply where -config stands, so later switches override them.\n"
	"    -?, /?, -h, --help\n"
	"        Print this help and exit.\n"
	"\n"
	"OUTPUT\n"
	"    On the console: an empty line, the header \"(PDH-CSV 4.0)\" with each counter's\n"
	"    full path (\\\\HOST\\Object(Instance)\\Counter, after wildcard expansion), then\n"
	"    one line per sample: the local time \"MM/DD/YYYY HH:MM:SS.mmm\" and each value\n"
	"    with six decimals. Every field is quoted ('\"' doubled), lines end with CRLF,\n"
	"    a missing value is \" \". A file written with -o has no empty first line.\n"
	"    typeperf takes one sample before the first line, so rates and other\n"
	"    two-sample counters have a value from the first line on and -sc N writes N\n"
	"    lines. Values are not scaled by the counter's default scale and not capped at\n"
	"    100. At the end (also after Ctrl+C) \"Exiting, please wait...\" and \"The\n"
	"    command completed successfully.\" are written to the console.\n"
	"    Messages about paths that match nothing go to standard error, as does\n"
	"    \"Error: No valid counters.\" when no path matches.\n"
	"\n"
	"EXIT STATUS\n"
	"    0 success (also after Ctrl+C), 1 no valid counters or an I/O error,\n"
	"    2 a bad command line.\n"
	"\n"
	"ENVIRONMENT\n"
	"    PERFLIB_ROOT   bpffs directory of the counter sets (default /sys/fs/bpf/perflib).\n"
	"\n"
	"EXAMPLES\n"
	"    typeperf \"\\Processor Information(_Total)\\% Processor Time\" -si 3 -sc 5\n"
	"    typeperf -qx \"My Service\" -o counters.txt\n"
	"    typeperf -cf counters.txt -f TSV -o log.tsv -y\n";

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
	char err[512];
	int ret;

	ret = tp_opts_parse(argc, argv, &opts, err, sizeof(err));
	if (ret == 0 && opts.help) {
		fputs(usage_text, stdout);
		tp_opts_free(&opts);
		return TP_EXIT_OK;
	}
	if (ret) {
		if (ret == -ENOMEM)
			tool_error("Out of memory.");
		else
			tool_usage_error("typeperf", "%s", err);
		tp_opts_free(&opts);
		return ret == -ENOMEM ? TP_EXIT_ERROR : TP_EXIT_USAGE;
	}
	if (opts.query != TP_QUERY_NONE)
		ret = query_list(&opts);
	else
		ret = tp_sample_run(&opts);
	tp_opts_free(&opts);
	return ret;
}
