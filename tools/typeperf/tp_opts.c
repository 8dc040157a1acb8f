/* SPDX-License-Identifier: MIT */
/*
 * tp_opts.c - typeperf's command line: its manual, its switch table for tool_parse
 * (tools/common/tool.h) and the -cf/-config files. See tp_opts.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lines.h"
#include "tool.h"
#include "tp_opts.h"

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
	"    Switches are case-insensitive and start with '-', '/' or '--'; a value follows\n"
	"    as the next argument, or after ':' (/si:5) or '=' (--si=5). Every other\n"
	"    argument is a counter path; \"--\" ends the switches.\n"
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
	"        Computer for paths without \\\\Computer. This machine (its host name,\n"
	"        \"localhost\" or \".\") is read directly; another computer through its\n"
	"        perflib-exporter (docs/REMOTE.md: Computer or Computer:port, settings in\n"
	"        ~/.config/perflib/remote.conf and PERFLIB_REMOTE_* variables).\n"
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

/* decimal digits of [s, end) into *ret; -EINVAL when empty, not digits or too large */
static int parse_part(const char *s, const char *end, unsigned long *ret)
{
	unsigned long v = 0;

	if (s == end)
		return -EINVAL;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9' || v > 100000000UL)
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	*ret = v;
	return 0;
}

int tp_parse_interval(const char *s, unsigned int *ret_seconds)
{
	unsigned long part[3], total = 0;
	const char *p = s, *colon;
	int n = 0, i;

	/* split at up to two colons: ss, mm:ss or hh:mm:ss */
	for (;;) {
		colon = strchr(p, ':');
		if (n == 3 || parse_part(p, colon ? colon : p + strlen(p), &part[n]))
			return -EINVAL;
		n++;
		if (!colon)
			break;
		p = colon + 1;
	}
	for (i = 0; i < n; i++) {
		/* parts after the first are minutes or seconds of a clock */
		if (i > 0 && part[i] >= 60)
			return -EINVAL;
		total = total * 60 + part[i];
	}
	if (total < 1 || total > 366UL * 24 * 3600)
		return -EINVAL;
	*ret_seconds = (unsigned int)total;
	return 0;
}

void tp_opts_free(struct tp_opts *opts)
{
	tool_free_lines(opts->counters, opts->nr_counters);
	free(opts->output);
	free(opts->query_object);
	free(opts->machine);
	memset(opts, 0, sizeof(*opts));
}

/* the parse's context: the options, and what only the parse needs */
struct parser {
	struct tp_opts o;	   /* what the switch table fills */
	struct tool_strv counters; /* positionals and -cf lines, in order given */
	bool in_config;		   /* parsing the arguments of a -config file */
};

#define PARSER(p) ((struct parser *)(p)->ctx)

/* out of memory ends the parse with typeperf's error status */
static int no_memory(struct tool_parser *p)
{
	tool_error("Out of memory.");
	return tool_stop(p, TP_EXIT_ERROR);
}

/* a copy of @value in *@dst (the -config arguments are freed after their parse) */
static int set_string(struct tool_parser *p, char **dst, const char *value)
{
	char *copy = strdup(value);

	if (!copy)
		return no_memory(p);
	free(*dst);
	*dst = copy;
	return 0;
}

/* a counter path: an operand, a -cf line, or a -config [c] line */
static int add_counter(struct tool_parser *p, const char *path)
{
	/* counter paths start with '\': a '/' argument is a mistyped switch, not a path */
	if (path[0] == '/' && path[1])
		return tool_fail(p, "unknown switch '%s'", path);
	if (tool_strv_add(&PARSER(p)->counters, path))
		return no_memory(p);
	return 0;
}

/* -q [object], -qx [object] */
static int set_query(struct tool_parser *p, const char *v, enum tp_query query)
{
	PARSER(p)->o.query = query;
	/*
	 * The object is optional: inline ("-q:obj"), else the next argument unless it is a
	 * switch, a counter path or "-". tool_take handed over that argument whenever it is
	 * no switch of the table (then @v is argv[p->i]; an inline value lies inside the
	 * switch's own argument): a path goes to the operands, as it would without -q.
	 */
	if (v && v == p->argv[p->i] && (!v[0] || strchr("-/\\", v[0])))
		return add_counter(p, v);
	return v ? set_string(p, &PARSER(p)->o.query_object, v) : 0;
}

static int set_q(struct tool_parser *p, const char *v)
{
	return set_query(p, v, TP_QUERY_Q);
}

static int set_qx(struct tool_parser *p, const char *v)
{
	return set_query(p, v, TP_QUERY_QX);
}

static int set_format(struct tool_parser *p, const char *v)
{
	if (!strcasecmp(v, "CSV"))
		PARSER(p)->o.format = PDH_LOG_TYPE_CSV;
	else if (!strcasecmp(v, "TSV"))
		PARSER(p)->o.format = PDH_LOG_TYPE_TSV;
	else if (!strcasecmp(v, "BIN"))
		return tool_fail(p, "-f BIN is not supported: the PDH binary log format (.blg) "
				    "is undocumented; use -f CSV or -f TSV");
	else if (!strcasecmp(v, "SQL"))
		return tool_fail(p, "-f SQL is not supported: SQL logging goes through an ODBC "
				    "data source, which this typeperf does not use; use -f CSV "
				    "or -f TSV");
	else
		return tool_fail(p, "-f %s: unknown format (CSV or TSV)", v);
	return 0;
}

static int set_interval(struct tool_parser *p, const char *v)
{
	if (tp_parse_interval(v, &PARSER(p)->o.interval))
		return tool_fail(p, "-si %s: expected [[hh:]mm:]ss, at least 1 second", v);
	return 0;
}

static int set_samples(struct tool_parser *p, const char *v)
{
	unsigned long n = 0;
	const char *s;

	for (s = v; *s; s++) {
		if (*s < '0' || *s > '9' || n > 100000000000UL)
			return tool_fail(p, "-sc %s: not a number of samples", v);
		n = n * 10 + (unsigned long)(*s - '0');
	}
	if (!*v || n == 0)
		return tool_fail(p, "-sc %s: the number of samples must be at least 1", v);
	PARSER(p)->o.samples = n;
	return 0;
}

static int set_output(struct tool_parser *p, const char *v)
{
	if (!strncasecmp(v, "SQL:", 4))
		return tool_fail(p, "-o %s: SQL logging (ODBC) is not supported", v);
	return set_string(p, &PARSER(p)->o.output, v);
}

/* -s computer: "\\host" or "host" */
static int set_machine(struct tool_parser *p, const char *v)
{
	while (*v == '\\')
		v++;
	if (!*v)
		return tool_fail(p, "-s needs a computer name");
	return set_string(p, &PARSER(p)->o.machine, v);
}

static int add_counter_file(struct tool_parser *p, const char *path)
{
	char **lines;
	size_t nr, i;
	int err;

	err = tool_read_lines(path, true, &lines, &nr);
	if (err == -ENOMEM)
		return no_memory(p);
	if (err)
		return tool_fail(p, "-cf %s: %s", path, strerror(-err));
	for (i = 0; !err && i < nr; i++)
		err = add_counter(p, lines[i]);
	tool_free_lines(lines, nr);
	return err;
}

/*
 * the arguments of the settings file @path (its @lines) into @args, after argv[0]: a line
 * "[si]" becomes "-si", the lines after it its values; the lines after [c], [counter] or
 * [counters] are counter paths, operands
 */
static int config_args(struct tool_parser *p, const char *path, char **lines, size_t nr,
		       struct tool_strv *args)
{
	bool section = false;
	const char *arg;
	char name[64];
	size_t i, len;

	if (tool_strv_add(args, p->argv[0]))
		return no_memory(p);
	for (i = 0; i < nr; i++) {
		len = strlen(lines[i]);
		arg = lines[i];
		if (lines[i][0] == '[') {
			if (len < 3 || lines[i][len - 1] != ']' || len - 2 >= sizeof(name) - 1)
				return tool_fail(p, "-config %s: bad section line \"%s\"", path,
						 lines[i]);
			snprintf(name, sizeof(name), "-%.*s", (int)(len - 2), lines[i] + 1);
			section = true;
			if (!strcasecmp(name, "-c") || !strcasecmp(name, "-counter") ||
			    !strcasecmp(name, "-counters"))
				continue;
			arg = name;
		} else if (!section) {
			return tool_fail(p, "-config %s: \"%s\" is outside a [switch] section",
					 path, lines[i]);
		}
		if (tool_strv_add(args, arg))
			return no_memory(p);
	}
	return 0;
}

/* -config: the settings file's arguments, parsed where -config stands by the same table */
static int add_config(struct tool_parser *p, const char *path)
{
	struct tool_strv args = {0};
	struct tool_parser sub;
	char **lines;
	size_t nr;
	int err, status;

	if (PARSER(p)->in_config)
		return tool_fail(p, "-config %s: a settings file cannot load another one", path);
	err = tool_read_lines(path, true, &lines, &nr);
	if (err == -ENOMEM)
		return no_memory(p);
	if (err)
		return tool_fail(p, "-config %s: %s", path, strerror(-err));
	err = config_args(p, path, lines, nr, &args);
	tool_free_lines(lines, nr);
	if (!err) {
		PARSER(p)->in_config = true;
		status = tool_parse(&sub, p->cli, p->ctx, (int)args.nr, args.v);
		PARSER(p)->in_config = false;
		/* the file's parse printed its own error (or the manual, for [?]) */
		if (status != TOOL_CONTINUE)
			err = tool_stop(p, status);
	}
	tool_free_lines(args.v, args.nr);
	return err;
}

/* typeperf's switches (tools/common/tool.h: "-si 5", "/si:5", "--si=5", ...) */
static const struct tool_opt switches[] = {
	TOOL_OPT_HELP("?|h|help"),
	TOOL_OPT_FLAG("y", struct parser, o.yes),
	TOOL_OPT_CALL("q", TOOL_VALUE | TOOL_OPTIONAL, set_q),
	TOOL_OPT_CALL("qx", TOOL_VALUE | TOOL_OPTIONAL, set_qx),
	TOOL_OPT_CALL("cf", TOOL_VALUE, add_counter_file),
	TOOL_OPT_CALL("f", TOOL_VALUE, set_format),
	TOOL_OPT_CALL("si", TOOL_VALUE, set_interval),
	TOOL_OPT_CALL("o", TOOL_VALUE, set_output),
	TOOL_OPT_CALL("sc", TOOL_VALUE, set_samples),
	TOOL_OPT_CALL("s", TOOL_VALUE, set_machine),
	TOOL_OPT_CALL("config", TOOL_VALUE, add_config),
	TOOL_OPT_END,
};

static const struct tool_cli cli = {
	.name = "typeperf",
	.usage = usage_text,
	.windows = true,
	.exit_usage = TP_EXIT_USAGE,
	.opts = switches,
	.operand = add_counter,
};

int tp_opts_parse(int argc, char *const *argv, struct tp_opts *ret)
{
	struct parser ctx = {.o = {.interval = 1, .format = PDH_LOG_TYPE_CSV}};
	struct tool_parser p;
	int status;

	status = tool_parse(&p, &cli, &ctx, argc, argv);
	*ret = ctx.o;
	ret->counters = ctx.counters.v;
	ret->nr_counters = ctx.counters.nr;
	if (status != TOOL_CONTINUE)
		return status;
	if (ret->query != TP_QUERY_NONE && ret->nr_counters)
		return tool_cli_error(&cli, "-q and -qx list counters; they take no counter paths");
	if (ret->query == TP_QUERY_NONE && !ret->nr_counters)
		return tool_cli_error(&cli,
				      "no counters given (counter paths, -cf file, -q or -qx)");
	return TOOL_CONTINUE;
}
