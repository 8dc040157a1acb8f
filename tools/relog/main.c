/* SPDX-License-Identifier: MIT */
/*
 * relog - convert and filter typeperf CSV/TSV counter logs, as Windows' relog does for these
 * formats: a PDH client (PdhBindInputDataSource, PdhOpenQueryH, PdhExpandWildCardPathH,
 * PdhSetQueryTimeRange, PdhOpenLog/PdhUpdateLog). See usage_text.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pdh.h"
#include "pdhmsg.h"
#include "lines.h"
#include "tool.h"
#include "stamp.h"

#define EXIT_OK 0
#define EXIT_ERROR 1 /* unreadable or corrupt input, unknown counters, I/O */
#define EXIT_USAGE 2 /* bad command line */

static const char usage_text[] =
	"NAME\n"
	"    relog - convert and filter performance counter logs (CSV, TSV)\n"
	"\n"
	"SYNOPSIS\n"
	"    relog file [-f CSV|TSV] [-o file] [-y] [-t N] [-b M/D/YYYY H:MM:SS]\n"
	"          [-e M/D/YYYY H:MM:SS] [-c path [path ...]] [-cf file]\n"
	"    relog file -q [-o file] [-y]\n"
	"    relog -? | /? | -h | --help\n"
	"\n"
	"DESCRIPTION\n"
	"    relog reads a counter log written by typeperf (or by PdhOpenLog/PdhUpdateLog),\n"
	"    keeps the records of a time window, every Nth of them and the counters asked\n"
	"    for, and writes them as a new CSV or TSV log in the same format. It reads the\n"
	"    log through PDH (PdhBindInputDataSource and a query on it) as Windows' relog\n"
	"    does; values are copied as logged (they are already cooked).\n"
	"\n"
	"    Switches are case-insensitive and start with '-' or '/'; a value follows as\n"
	"    the next argument, or after ':' (/f:TSV) or '=' (--f=TSV).\n"
	"\n"
	"OPTIONS\n"
	"    file\n"
	"        The input log: a CSV or TSV file whose first line is \"(PDH-CSV 4.0)\" or\n"
	"        \"(PDH-TSV 4.0)\", with or without the time zone PDH writes after it\n"
	"        (\" (UTC)(0)\"), and the counter paths. One input file.\n"
	"    -f CSV|TSV\n"
	"        Output format; default CSV. BIN and SQL are refused (the binary format is\n"
	"        undocumented, SQL needs ODBC).\n"
	"    -o file\n"
	"        The output log (required unless -q). An existing file is overwritten only\n"
	"        with -y; otherwise relog asks on a terminal and refuses elsewhere.\n"
	"    -y\n"
	"        Answer yes to the overwrite question.\n"
	"    -t N\n"
	"        Keep every Nth record of the window: the 1st, the (N+1)th, ... Default 1.\n"
	"    -b M/D/YYYY H:MM:SS, -e M/D/YYYY H:MM:SS\n"
	"        Begin and end of the time window (local time, as the log's time stamps),\n"
	"        both included. The time may be H, H:MM or H:MM:SS and may follow the date\n"
	"        as a separate argument (-b 3/27/2026 15:28:06). Default: the whole log.\n"
	"    -c path [path ...]\n"
	"        The counters to keep: paths as in the log (\\\\HOST\\Object(Instance)\\Counter,\n"
	"        or without \\\\HOST), '*' wildcards allowed. A computer is matched by its\n"
	"        name as the log writes it, in any case (\\\\web01, \\\\10.0.0.7:9500 from\n"
	"        typeperf -s); none is contacted or resolved. Without \\\\HOST, or with\n"
	"        \\\\*, a path matches every computer's columns. Every argument after -c\n"
	"        that does not start with '-' is a path. Default: every counter.\n"
	"    -cf file\n"
	"        Read counter paths from file, one per line (blank lines and lines\n"
	"        starting with ';' or '#' are skipped).\n"
	"    -q\n"
	"        Describe the input instead of converting it: the Input block and the\n"
	"        log's counter paths, one per line (into -o file when given).\n"
	"    -?, /?, -h, --help\n"
	"        Print this help and exit.\n"
	"\n"
	"OUTPUT\n"
	"    On standard output an \"Input\" block (File(s), Begin, End, Samples of the\n"
	"    input), then an \"Output\" block (File, Begin, End, Samples written), then\n"
	"    \"The command completed successfully.\" Times are printed as M/D/YYYY H:MM:SS.\n"
	"    The output log has the header of the kept counters and one record per kept\n"
	"    sample, time stamps and values as in the input (six decimals, \" \" where the\n"
	"    input had no value). The header names the time zone of the time stamps: the\n"
	"    input's, or this machine's when the input (typeperf's) names none. Errors go\n"
	"    to standard error as \"Error: ...\".\n"
	"\n"
	"EXIT STATUS\n"
	"    0 success, 1 a missing, unreadable or corrupt input log, a counter or time\n"
	"    window that selects nothing, an I/O error, 2 a bad command line.\n"
	"\n"
	"DIFFERENCES FROM WINDOWS\n"
	"    One input file; no -a (append), -config or BIN/SQL output; the default output\n"
	"    format is CSV (Windows: BIN).\n"
	"\n"
	"EXAMPLES\n"
	"    relog log.csv -q\n"
	"    relog log.csv -f TSV -o log.tsv -y\n"
	"    relog log.csv -t 10 -c \"\\Demo(*)\\Requests/sec\" -o every10th.csv\n"
	"    relog log.csv -b 3/27/2026 15:00:00 -e 3/27/2026 16:00:00 -o hour.csv\n";

struct opts {
	const char *input;
	const char *output;
	DWORD format; /* PDH_LOG_TYPE_CSV / _TSV */
	unsigned long every;
	int64_t begin, end; /* local FILETIME; 0 / INT64_MAX = open */
	char **paths;
	size_t nr_paths;
	bool yes, query;
};

/*
 * "M/D/YYYY" and "H[:MM[:SS]]" (@time may be NULL: midnight) into a local FILETIME, by the
 * one stamp parser (common/stamp.h: a real date, a 24-hour clock); 0 when malformed
 */
static int64_t parse_time(const char *date, const char *time)
{
	char s[64];
	int64_t ft;

	if ((size_t)snprintf(s, sizeof(s), "%s%s%s", date, time ? " " : "", time ? time : "") >=
	    sizeof(s))
		return 0;
	return perflib_stamp_parse(s, &ft) ? 0 : ft;
}

static bool looks_like_time(const char *s)
{
	return s && *s >= '0' && *s <= '9' && strspn(s, "0123456789:") == strlen(s);
}

static int add_path(struct opts *o, const char *p)
{
	char **grown = realloc(o->paths, (o->nr_paths + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	o->paths = grown;
	o->paths[o->nr_paths] = strdup(p);
	if (!o->paths[o->nr_paths])
		return -ENOMEM;
	o->nr_paths++;
	return 0;
}

#define OPTS(p) ((struct opts *)(p)->ctx)

/* a path of -c or -cf into o->paths; out of memory ends the parse (EXIT_ERROR) */
static int take_path(struct tool_parser *p, const char *path)
{
	if (add_path(OPTS(p), path)) {
		tool_error("Out of memory.");
		return tool_stop(p, EXIT_ERROR);
	}
	return 0;
}

/* -c path [path ...]: the value, then the paths up to the next switch */
static int set_counters(struct tool_parser *p, const char *v)
{
	int err = 0;

	if (!v)
		return tool_fail(p, "%s needs at least one counter path", p->sw);
	for (; v && !err; v = tool_take(p))
		err = take_path(p, v);
	return err;
}

static int set_counter_file(struct tool_parser *p, const char *v)
{
	char **lines;
	size_t nr, k;
	int err;

	err = tool_read_lines(v, true, &lines, &nr);
	if (err) {
		tool_error("cannot read %s: %s", v, strerror(-err));
		return tool_stop(p, EXIT_USAGE);
	}
	for (k = 0; k < nr && !err; k++)
		err = take_path(p, lines[k]);
	tool_free_lines(lines, nr);
	return err;
}

static int set_format(struct tool_parser *p, const char *v)
{
	if (!strcasecmp(v, "csv"))
		OPTS(p)->format = PDH_LOG_TYPE_CSV;
	else if (!strcasecmp(v, "tsv"))
		OPTS(p)->format = PDH_LOG_TYPE_TSV;
	else
		return tool_fail(p, "output format \"%s\" is not supported (CSV or TSV)", v);
	return 0;
}

static int set_every(struct tool_parser *p, const char *v)
{
	char *end;

	errno = 0;
	OPTS(p)->every = strtoul(v, &end, 10);
	if (errno || *end || !OPTS(p)->every || v[0] == '-')
		return tool_fail(p, "-t needs a whole number of at least 1, not \"%s\"", v);
	return 0;
}

/* -b/-e: "date time" in one argument or two, into *@ret */
static int set_time(struct tool_parser *p, const char *v, int64_t *ret)
{
	const char *time = NULL, *next = tool_peek(p);
	char date[32], *sp;

	snprintf(date, sizeof(date), "%s", v);
	sp = strchr(date, ' ');
	if (sp) {
		*sp = '\0';
		time = sp + 1;
	} else if (looks_like_time(next)) {
		time = tool_take(p);
	}
	*ret = strlen(v) < sizeof(date) ? parse_time(date, time) : 0;
	if (!*ret)
		return tool_fail(p, "bad time \"%s\" (M/D/YYYY H:MM:SS)", v);
	return 0;
}

static int set_begin(struct tool_parser *p, const char *v)
{
	return set_time(p, v, &OPTS(p)->begin);
}

static int set_end(struct tool_parser *p, const char *v)
{
	return set_time(p, v, &OPTS(p)->end);
}

static int set_input(struct tool_parser *p, const char *arg)
{
	if (OPTS(p)->input)
		return tool_fail(p, "only one input log is supported (\"%s\")", arg);
	OPTS(p)->input = arg;
	return 0;
}

/* relog's switches (tools/common/tool.h: "-f CSV", "/f:CSV", "--f=CSV", ...) */
static const struct tool_opt switches[] = {
	TOOL_OPT_HELP("?|h|help"),
	TOOL_OPT_FLAG("y", struct opts, yes),
	TOOL_OPT_FLAG("q", struct opts, query),
	TOOL_OPT_CALL("c", TOOL_VALUE | TOOL_OPTIONAL, set_counters),
	TOOL_OPT_CALL("cf", TOOL_VALUE, set_counter_file),
	TOOL_OPT_CALL("f", TOOL_VALUE, set_format),
	TOOL_OPT_STR("o", struct opts, output, 0),
	TOOL_OPT_CALL("t", TOOL_VALUE, set_every),
	TOOL_OPT_CALL("b", TOOL_VALUE, set_begin),
	TOOL_OPT_CALL("e", TOOL_VALUE, set_end),
	TOOL_OPT_END,
};

static const struct tool_cli cli = {
	.name = "relog",
	.usage = usage_text,
	.windows = true,
	.exit_usage = EXIT_USAGE,
	.opts = switches,
	.operand = set_input,
};

/* the command line into @o (free it with opts_free); TOOL_CONTINUE or the exit status */
static int parse_args(int argc, char **argv, struct opts *o)
{
	struct tool_parser p;
	int status;

	memset(o, 0, sizeof(*o));
	o->format = PDH_LOG_TYPE_CSV;
	o->every = 1;
	o->end = INT64_MAX;
	status = tool_parse(&p, &cli, o, argc, argv);
	if (status != TOOL_CONTINUE)
		return status;
	if (!o->input)
		return tool_cli_error(&cli, "no input log given");
	if (!o->query && !o->output)
		return tool_cli_error(&cli, "no output file given (-o file)");
	if (o->begin > o->end)
		return tool_cli_error(&cli, "the begin time (-b) is after the end time (-e)");
	return TOOL_CONTINUE;
}

static void opts_free(struct opts *o)
{
	size_t i;

	for (i = 0; i < o->nr_paths; i++)
		free(o->paths[i]);
	free(o->paths);
}

/* a PDH status as a sentence */
static const char *pdh_text(PDH_STATUS st)
{
	switch (st) {
	case PDH_FILE_NOT_FOUND:
		return "The file was not found.";
	case PDH_LOG_FILE_OPEN_ERROR:
		return "The log file cannot be opened.";
	case PDH_UNABLE_READ_LOG_HEADER:
		return "The file is not a CSV or TSV counter log (no \"(PDH-CSV 4.0)\" header).";
	case PDH_INVALID_DATA:
		return "The log file is corrupt (a record without a valid time stamp, or with "
		       "more fields than the header).";
	case PDH_MEMORY_ALLOCATION_FAILURE:
		return "Out of memory.";
	case PDH_CSTATUS_NO_OBJECT:
	case PDH_CSTATUS_NO_COUNTER:
		return "The counter is not in the log.";
	case PDH_CSTATUS_BAD_COUNTERNAME:
		return "The counter path is malformed.";
	case PDH_LOG_FILE_CREATE_ERROR:
		return "The output file cannot be written.";
	default:
		return "Unexpected PDH error.";
	}
}

static void pdh_error(const char *what, PDH_STATUS st)
{
	tool_error("%s: %s (0x%08X)", what, pdh_text(st), (unsigned int)st);
}

/* "M/D/YYYY H:MM:SS" of a local FILETIME */
static void time_text(int64_t ft, char *buf, size_t size)
{
	struct perflib_stamp t;

	if (ft <= 0 || perflib_stamp_split(ft, &t)) {
		snprintf(buf, size, "-");
		return;
	}
	snprintf(buf, size, "%u/%u/%u %u:%02u:%02u", t.month, t.day, t.year, t.hour, t.minute,
		 t.second);
}

static void block(FILE *f, const char *title, const char *files_label, const char *file,
		  const char *kind, int64_t begin, int64_t end, unsigned long samples)
{
	char b[40], e[40];

	time_text(begin, b, sizeof(b));
	time_text(end, e, sizeof(e));
	fprintf(f, "\n%s\n----------------\n", title);
	if (kind)
		fprintf(f, "%s\n     %s (%s)\n\n", files_label, file, kind);
	else
		fprintf(f, "%-10s%s\n\n", files_label, file);
	fprintf(f, "Begin:    %s\nEnd:      %s\nSamples:  %lu\n", b, e, samples);
}

/* the log's counter paths in log order: PdhExpandWildCardPathH of "\\*\*\*" */
static PDH_STATUS log_paths(PDH_HLOG log, char **ret)
{
	static const char pattern[] = "\\\\*\\*\\*";
	DWORD size = 0;
	PDH_STATUS st;
	char *buf;

	*ret = NULL;
	st = PdhExpandWildCardPathHA(log, pattern, NULL, &size, 0);
	if (st == PDH_CSTATUS_NO_OBJECT || st == PDH_CSTATUS_NO_COUNTER ||
	    st == PDH_CSTATUS_NO_INSTANCE || (!st && !size))
		return 0;
	if (st != PDH_MORE_DATA)
		return st;
	buf = calloc(size + 2, 1);
	if (!buf)
		return PDH_MEMORY_ALLOCATION_FAILURE;
	st = PdhExpandWildCardPathHA(log, pattern, buf, &size, 0);
	if (st) {
		free(buf);
		return st;
	}
	*ret = buf;
	return 0;
}

static bool may_write(const struct opts *o)
{
	char answer[16];
	struct stat st;

	if (o->yes || stat(o->output, &st))
		return true;
	if (!isatty(STDIN_FILENO)) {
		tool_error("%s already exists (use -y to overwrite it).", o->output);
		return false;
	}
	fprintf(stderr, "%s already exists. Overwrite it? [y/n] ", o->output);
	if (fgets(answer, sizeof(answer), stdin) && (answer[0] == 'y' || answer[0] == 'Y'))
		return true;
	tool_error("%s was not overwritten.", o->output);
	return false;
}

/* -q: the Input block and the log's counters */
static int describe(const struct opts *o, PDH_HLOG log, const PDH_TIME_INFO *ti, const char *kind)
{
	FILE *out = stdout;
	char *list;
	const char *p;
	PDH_STATUS st;
	int ret = EXIT_OK;

	block(stdout, "Input", "File(s):", o->input, kind, ti->StartTime, ti->EndTime,
	      ti->SampleCount);
	if (o->output) {
		if (!may_write(o))
			return EXIT_ERROR;
		out = fopen(o->output, "w");
		if (!out) {
			tool_error("cannot open %s: %s", o->output, strerror(errno));
			return EXIT_ERROR;
		}
	} else {
		fputc('\n', stdout);
	}
	st = log_paths(log, &list);
	if (st) {
		pdh_error("listing the counters", st);
		ret = EXIT_ERROR;
	}
	for (p = list; p && *p; p += strlen(p) + 1)
		fprintf(out, "%s\n", p);
	free(list);
	if (out != stdout && fclose(out)) {
		tool_error("cannot write %s", o->output);
		ret = EXIT_ERROR;
	}
	if (!ret)
		fputs("\nThe command completed successfully.\n", stdout);
	return ret;
}

/* the query's counters: every logged counter, or the -c/-cf paths (each must match) */
static int add_counters(const struct opts *o, PDH_HLOG log, PDH_HQUERY q, PDH_HCOUNTER *first)
{
	PDH_HCOUNTER c;
	PDH_STATUS st;
	const char *p;
	char *list;
	size_t i;

	if (!o->nr_paths) {
		/* every logged counter, in the log's order */
		st = log_paths(log, &list);
		for (p = list; !st && p && *p; p += strlen(p) + 1) {
			st = PdhAddCounterA(q, p, 0, &c);
			if (p == list)
				*first = c;
		}
		free(list);
		if (st)
			pdh_error("adding the logged counters", st);
		return st || !*first ? -1 : 0;
	}
	for (i = 0; i < o->nr_paths; i++) {
		st = PdhAddCounterA(q, o->paths[i], 0, &c);
		if (!i)
			*first = c;
		if (st) {
			tool_error("\"%s\": %s (0x%08X)", o->paths[i], pdh_text(st),
				   (unsigned int)st);
			return -1;
		}
	}
	return 0;
}

static int convert(const struct opts *o, PDH_HLOG src, const PDH_TIME_INFO *ti, const char *kind)
{
	PDH_TIME_INFO window = *ti;
	PDH_HQUERY q = NULL;
	PDH_HLOG out = NULL;
	DWORD type = o->format;
	int64_t first = 0, last = 0;
	unsigned long written = 0, k;
	PDH_HCOUNTER first_ctr = NULL;
	PDH_RAW_COUNTER raw;
	PDH_STATUS st;
	int ret = EXIT_ERROR;

	block(stdout, "Input", "File(s):", o->input, kind, ti->StartTime, ti->EndTime,
	      ti->SampleCount);
	st = PdhOpenQueryH(src, 0, &q);
	if (st) {
		pdh_error("opening a query on the log", st);
		return EXIT_ERROR;
	}
	if (add_counters(o, src, q, &first_ctr)) {
		if (!o->nr_paths && !first_ctr)
			tool_error("the log has no counters.");
		goto out;
	}
	window.StartTime = o->begin > ti->StartTime ? o->begin : ti->StartTime;
	window.EndTime = o->end < ti->EndTime ? o->end : ti->EndTime;
	if (!ti->SampleCount || window.StartTime > window.EndTime ||
	    PdhSetQueryTimeRange(q, &window)) {
		tool_error("no record of the log lies in the time window.");
		goto out;
	}
	if (!may_write(o))
		goto out;
	st = PdhOpenLogA(o->output, PDH_LOG_WRITE_ACCESS | PDH_LOG_CREATE_ALWAYS, &type, q, 0, NULL,
			 &out);
	if (st) {
		pdh_error(o->output, st);
		goto out;
	}
	for (;;) {
		/* each kept record: PdhUpdateLog reads and writes it, then skip N-1 */
		st = PdhUpdateLogA(out, NULL);
		if (st == PDH_NO_MORE_DATA)
			break;
		if (st && st != PDH_NO_DATA && st != PDH_INVALID_DATA) {
			pdh_error(o->output, st);
			goto out;
		}
		/* the record's time stamp: every replayed item carries it */
		if (!PdhGetRawCounterValue(first_ctr, NULL, &raw)) {
			last = (int64_t)raw.TimeStamp.dwLowDateTime |
			       (int64_t)raw.TimeStamp.dwHighDateTime << 32;
			if (!written)
				first = last;
		}
		written++;
		for (k = 1; k < o->every; k++)
			if (PdhCollectQueryData(q) == PDH_NO_MORE_DATA)
				break;
		if (k < o->every)
			break;
	}
	if (PdhCloseLog(out, 0)) {
		out = NULL;
		tool_error("cannot write %s", o->output);
		goto out;
	}
	out = NULL;
	block(stdout, "Output", "File:", o->output, NULL, first, last, written);
	fputs("\nThe command completed successfully.\n", stdout);
	ret = EXIT_OK;
out:
	if (out)
		PdhCloseLog(out, 0);
	PdhCloseQuery(q);
	return ret;
}

int main(int argc, char **argv)
{
	PDH_TIME_INFO ti;
	PDH_HLOG log = NULL;
	DWORD entries = 0, size = sizeof(ti);
	char list[4096 + 2];
	const char *kind;
	struct opts o;
	PDH_STATUS st;
	size_t n;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret != TOOL_CONTINUE) {
		opts_free(&o);
		return ret;
	}
	n = strlen(o.input);
	if (n >= sizeof(list) - 2) {
		ret = tool_cli_error(&cli, "input file name too long: %s", o.input);
		opts_free(&o);
		return ret;
	}
	memcpy(list, o.input, n + 1);
	list[n + 1] = '\0';
	st = PdhBindInputDataSourceA(&log, list);
	if (!st)
		st = PdhGetDataSourceTimeRangeH(log, &entries, &ti, &size);
	if (st) {
		pdh_error(o.input, st);
		if (log)
			PdhCloseLog(log, 0);
		opts_free(&o);
		return EXIT_ERROR;
	}
	kind = "CSV";
	{
		FILE *f = fopen(o.input, "r");
		char head[16] = "";

		if (f) {
			while (fgets(head, sizeof(head), f) && (head[0] == '\r' || head[0] == '\n'))
				;
			fclose(f);
		}
		if (!strncmp(head, "\"(PDH-TSV", 9))
			kind = "TSV";
	}
	ret = o.query ? describe(&o, log, &ti, kind) : convert(&o, log, &ti, kind);
	PdhCloseLog(log, 0);
	opts_free(&o);
	return ret;
}
