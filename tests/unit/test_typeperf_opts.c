/* SPDX-License-Identifier: MIT */
/*
 * test_typeperf_opts.c - typeperf's command line, -cf and -config files
 * (tools/typeperf/tp_opts.c, on tool_parse): switch spellings, usage errors and their exit
 * status, refused formats, -si syntax. The CSV/TSV text it writes through PDH is
 * test_pdh_logtext.c's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "testlib.h"
#include "logtext.h"
#include "tool.h"
#include "tp_opts.h"

static char out[16384], err[1024]; /* what the parse wrote on stdout and stderr */

/* parse a NULL-terminated argument list (argv[0] added), stdout and stderr captured */
static int parse(struct tp_opts *o, ...)
{
	char *argv[32] = {"typeperf"};
	va_list ap;
	int argc = 1, status;

	va_start(ap, o);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	tl_capture();
	status = tp_opts_parse(argc, argv, o);
	tl_captured(out, sizeof(out), err, sizeof(err));
	return status;
}

/* a temporary file with @text; returns its malloc'd path */
static char *temp_file(const char *text)
{
	char *path = strdup("/tmp/test_typeperf_opts.XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_defaults_and_switches(void **state)
{
	struct tp_opts o;

	(void)state;
	assert_int_equal(parse(&o, "\\Memory\\Available Bytes", NULL), TOOL_CONTINUE);
	assert_int_equal(o.nr_counters, 1);
	assert_string_equal(o.counters[0], "\\Memory\\Available Bytes");
	assert_int_equal(o.format, PDH_LOG_TYPE_CSV);
	assert_int_equal(o.interval, 1);
	assert_int_equal(o.samples, 0);
	assert_null(o.output);
	assert_null(o.machine);
	assert_false(o.yes);
	tp_opts_free(&o);
	/* '-' or '/', any case */
	assert_int_equal(parse(&o, "\\A\\B", "/SI", "00:01:05", "-Sc", "3", "/F", "tsv", "-O",
			       "out.csv", "/y", "-S", "\\\\host", "\\C\\D", NULL),
			 TOOL_CONTINUE);
	assert_int_equal(o.nr_counters, 2);
	assert_string_equal(o.counters[1], "\\C\\D");
	assert_int_equal(o.interval, 65);
	assert_int_equal(o.samples, 3);
	assert_int_equal(o.format, PDH_LOG_TYPE_TSV);
	assert_string_equal(o.output, "out.csv");
	assert_true(o.yes);
	assert_string_equal(o.machine, "host");
	tp_opts_free(&o);
	/* values inline after ':' or '=', "--" spellings; the last -o wins */
	assert_int_equal(parse(&o, "/si:5", "--sc=2", "-f:TSV", "--o", "a.csv", "/O=b.csv", "--Y",
			       "--", "\\A\\B", NULL),
			 TOOL_CONTINUE);
	assert_int_equal(o.interval, 5);
	assert_int_equal(o.samples, 2);
	assert_int_equal(o.format, PDH_LOG_TYPE_TSV);
	assert_string_equal(o.output, "b.csv");
	assert_true(o.yes);
	assert_int_equal(o.nr_counters, 1);
	assert_string_equal(err, "");
	tp_opts_free(&o);
	/* after "--" every argument is a counter path, "-" is one anyway */
	assert_int_equal(parse(&o, "-", "--", "-sc", NULL), TOOL_CONTINUE);
	assert_int_equal(o.nr_counters, 2);
	assert_string_equal(o.counters[0], "-");
	assert_string_equal(o.counters[1], "-sc");
	assert_int_equal(o.samples, 0);
	tp_opts_free(&o);
}

static void test_help_and_query(void **state)
{
	static const char *const helps[] = {"-?", "/?", "-h", "/H", "--help"};
	struct tp_opts o;
	size_t i;

	(void)state;
	for (i = 0; i < 5; i++) {
		assert_int_equal(parse(&o, helps[i], NULL), TP_EXIT_OK);
		assert_non_null(strstr(out, "SYNOPSIS"));
		assert_non_null(strstr(out, "-config file"));
		assert_string_equal(err, "");
		tp_opts_free(&o);
	}
	/* help ends the parse: what follows is not looked at */
	assert_int_equal(parse(&o, "-?", "-bogus", NULL), TP_EXIT_OK);
	tp_opts_free(&o);
	assert_int_equal(parse(&o, "-q", NULL), TOOL_CONTINUE);
	assert_int_equal(o.query, TP_QUERY_Q);
	assert_null(o.query_object);
	tp_opts_free(&o);
	assert_int_equal(parse(&o, "/QX", "Processor Information", "-o", "list.txt", NULL),
			 TOOL_CONTINUE);
	assert_int_equal(o.query, TP_QUERY_QX);
	assert_string_equal(o.query_object, "Processor Information");
	assert_string_equal(o.output, "list.txt");
	tp_opts_free(&o);
	/* the object is optional: a switch after -q is not taken as one */
	assert_int_equal(parse(&o, "-qx", "-s", "host", NULL), TOOL_CONTINUE);
	assert_null(o.query_object);
	assert_string_equal(o.machine, "host");
	tp_opts_free(&o);
	assert_int_equal(parse(&o, "-q:Memory", NULL), TOOL_CONTINUE);
	assert_string_equal(o.query_object, "Memory");
	tp_opts_free(&o);
	/* -q with counter paths (a path after -q is no object), or nothing at all */
	assert_int_equal(parse(&o, "-q", "\\A\\B", NULL), TP_EXIT_USAGE);
	assert_string_equal(err, "Error: -q and -qx list counters; they take no counter paths\n"
				 "Type \"typeperf -?\" for help.\n");
	assert_null(o.query_object);
	tp_opts_free(&o);
	assert_int_equal(parse(&o, "-qx", "-", NULL), TP_EXIT_USAGE);
	assert_null(o.query_object);
	tp_opts_free(&o);
	assert_int_equal(parse(&o, "-q", "/nope", NULL), TP_EXIT_USAGE);
	assert_non_null(strstr(err, "unknown switch '/nope'"));
	tp_opts_free(&o);
	assert_int_equal(parse(&o, NULL), TP_EXIT_USAGE);
	assert_non_null(strstr(err, "no counters"));
	tp_opts_free(&o);
}

static void test_bad_values(void **state)
{
	static const struct {
		const char *a, *b, *msg;
	} cases[] = {
		{"-f", "BIN", "binary log"},
		{"-f", "SQL", "ODBC"},
		{"-f", "XML", "unknown format"},
		{"-si", "0", "-si 0"},
		{"-si", "1:60", "-si"},
		{"-si", "x", "-si"},
		{"-si", "1:2:3:4", "-si"},
		{"-sc", "0", "at least 1"},
		{"-sc", "-1", "-sc"},
		{"-sc", "1x", "-sc"},
		{"-o", "SQL:dsn!log", "SQL"},
		{"-cf", "/nonexistent/x", "-cf"},
		{"-config", "/nonexistent/x", "-config"},
		{"-bogus", NULL, "unknown switch"},
		{"/bogus", NULL, "unknown switch"},
		{"-si", NULL, "-si needs a value"},
		{"/O", NULL, "/O needs a value"},
		{"-s", "\\\\", "computer"},
		{"-y:yes", NULL, "-y:yes takes no value"},
		{"--", "/x", "unknown switch '/x'"},
		{"--bogus=1", NULL, "unknown switch '--bogus=1'"},
	};
	struct tp_opts o;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int e = parse(&o, "\\A\\B", cases[i].a, cases[i].b, NULL);

		if (e != TP_EXIT_USAGE || !strstr(err, cases[i].msg))
			print_error("%s %s: %d \"%s\"\n", cases[i].a, cases[i].b ? cases[i].b : "",
				    e, err);
		assert_int_equal(e, TP_EXIT_USAGE);
		assert_non_null(strstr(err, cases[i].msg));
		/* one message in the Windows form, nothing on stdout */
		assert_true(!strncmp(err, "Error: ", 7));
		assert_non_null(strstr(err, "\nType \"typeperf -?\" for help.\n"));
		assert_string_equal(out, "");
		tp_opts_free(&o);
	}
}

static void test_interval(void **state)
{
	unsigned int s;

	(void)state;
	assert_int_equal(tp_parse_interval("5", &s), 0);
	assert_int_equal(s, 5);
	assert_int_equal(tp_parse_interval("90", &s), 0); /* plain seconds may exceed 59 */
	assert_int_equal(s, 90);
	assert_int_equal(tp_parse_interval("2:30", &s), 0);
	assert_int_equal(s, 150);
	assert_int_equal(tp_parse_interval("1:00:01", &s), 0);
	assert_int_equal(s, 3601);
	assert_int_equal(tp_parse_interval("0:0:0", &s), -EINVAL);
	assert_int_equal(tp_parse_interval("", &s), -EINVAL);
	assert_int_equal(tp_parse_interval(":5", &s), -EINVAL);
	assert_int_equal(tp_parse_interval("5:", &s), -EINVAL);
	assert_int_equal(tp_parse_interval("1.5", &s), -EINVAL);
	assert_int_equal(tp_parse_interval("99999999999", &s), -EINVAL);
}

static void test_counter_file(void **state)
{
	char *cf = temp_file("\\A\\B\r\n\r\n  \\C(x)\\D  \n; comment\n# comment\n\\E\\F");
	struct tp_opts o;

	(void)state;
	/* -cf lines come where the switch is, between positionals */
	assert_int_equal(parse(&o, "\\First\\X", "-cf", cf, "\\Last\\Y", NULL), TOOL_CONTINUE);
	assert_int_equal(o.nr_counters, 5);
	assert_string_equal(o.counters[0], "\\First\\X");
	assert_string_equal(o.counters[1], "\\A\\B");
	assert_string_equal(o.counters[2], "\\C(x)\\D");
	assert_string_equal(o.counters[3], "\\E\\F");
	assert_string_equal(o.counters[4], "\\Last\\Y");
	tp_opts_free(&o);
	unlink(cf);
	free(cf);
}

static void test_config_file(void **state)
{
	char *cfg = temp_file("; typeperf settings\n[si]\n2\n[sc]\n4\n[c]\n\\A\\B\n\\C\\D\n"
			      "[f]\nTSV\n[y]\n[o]\nlog.tsv\n");
	char *bad1 = temp_file("\\A\\B\n[si]\n2\n");
	char *bad2 = temp_file("[si\n2\n");
	char *nested = temp_file("[config]\n/tmp/x\n");
	char *badval = temp_file("[Q]\nMemory\n[SC]\n0\n[o]\nx.csv\n");
	char *help = temp_file("[?]\n");
	struct tp_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-config", cfg, "-sc", "9", NULL), TOOL_CONTINUE);
	assert_int_equal(o.interval, 2);
	assert_int_equal(o.samples, 9); /* later switches override the file */
	assert_int_equal(o.nr_counters, 2);
	assert_string_equal(o.counters[1], "\\C\\D");
	assert_int_equal(o.format, PDH_LOG_TYPE_TSV);
	assert_true(o.yes);
	assert_string_equal(o.output, "log.tsv");
	tp_opts_free(&o);
	assert_int_equal(parse(&o, "-config", bad1, NULL), TP_EXIT_USAGE);
	assert_non_null(strstr(err, "outside"));
	tp_opts_free(&o);
	assert_int_equal(parse(&o, "-config", bad2, NULL), TP_EXIT_USAGE);
	assert_non_null(strstr(err, "section"));
	tp_opts_free(&o);
	assert_int_equal(parse(&o, "-config", nested, NULL), TP_EXIT_USAGE);
	assert_non_null(strstr(err, "another"));
	tp_opts_free(&o);
	/* a usage error inside the file ends the whole parse, with one message */
	assert_int_equal(parse(&o, "-config", badval, "-y", NULL), TP_EXIT_USAGE);
	assert_string_equal(err, "Error: -sc 0: the number of samples must be at least 1\n"
				 "Type \"typeperf -?\" for help.\n");
	assert_int_equal(o.query, TP_QUERY_Q);
	assert_string_equal(o.query_object, "Memory");
	assert_null(o.output);
	assert_false(o.yes);
	tp_opts_free(&o);
	/* [?] prints the manual, as -? does */
	assert_int_equal(parse(&o, "-config", help, "-bogus", NULL), TP_EXIT_OK);
	assert_non_null(strstr(out, "SYNOPSIS"));
	assert_string_equal(err, "");
	tp_opts_free(&o);
	unlink(cfg), unlink(bad1), unlink(bad2), unlink(nested), unlink(badval), unlink(help);
	free(cfg), free(bad1), free(bad2), free(nested), free(badval), free(help);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_switches),
		cmocka_unit_test(test_help_and_query),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_counter_file),
		cmocka_unit_test(test_config_file),
	};

	return cmocka_run_group_tests_name("typeperf_opts", tests, NULL, NULL);
}
