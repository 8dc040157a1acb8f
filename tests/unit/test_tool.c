/* SPDX-License-Identifier: MIT */
/*
 * test_tool.c - the tools' one argument parser (tools/common/tool.c): every spelling of a
 * switch and its value, each option kind, operands, subcommands, --help, and every usage
 * error with its message (in the Windows and the Unix form) and its exit status.
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
#include "tool.h"

#define EXIT_USAGE 2

/* what the options of the test table fill */
struct args {
	const char *out;
	const char *once;
	const char *q;
	const char *ops[8];
	unsigned int nr_ops;
	unsigned int hz;
	unsigned int calls;
	bool force;
	bool q_given;
	const char *call_value;
	const char *list[8];
	unsigned int nr_list;
};

#define ARGS(p) ((struct args *)(p)->ctx)

/* accepts "good", refuses "bad" quietly (the parser's message), "fail" with its own */
static int check_value(struct tool_parser *p, const char *v)
{
	ARGS(p)->calls++;
	ARGS(p)->call_value = v;
	if (!strcmp(v, "bad"))
		return -EINVAL;
	if (!strcmp(v, "fail"))
		return tool_fail(p, "%s: 'fail' is refused", p->sw);
	if (!strcmp(v, "stop")) {
		fputs("stopped\n", stderr);
		return tool_stop(p, 50);
	}
	return 0;
}

static int set_q(struct tool_parser *p, const char *v)
{
	ARGS(p)->q_given = true;
	ARGS(p)->q = v;
	return 0;
}

/* -l a [b ...]: the value, then every operand that follows */
static int set_list(struct tool_parser *p, const char *v)
{
	struct args *a = ARGS(p);

	a->list[a->nr_list++] = v;
	while (tool_peek(p) && a->nr_list < 8)
		a->list[a->nr_list++] = tool_take(p);
	return 0;
}

static int operand(struct tool_parser *p, const char *arg)
{
	struct args *a = ARGS(p);

	if (!strcmp(arg, "refused"))
		return -EINVAL;
	a->ops[a->nr_ops++] = arg;
	return 0;
}

static int cmd_run(void *ctx)
{
	(void)ctx;
	return 7;
}

static const struct tool_opt opts[] = {
	TOOL_OPT_STR("o|output", struct args, out, 0),
	TOOL_OPT_STR("one", struct args, once, TOOL_ONCE),
	TOOL_OPT_FLAG("f|force", struct args, force),
	TOOL_OPT_UINT("hz", struct args, hz, 1, 1000),
	TOOL_OPT_CALL("c|check", TOOL_VALUE, check_value),
	TOOL_OPT_CALL("q", TOOL_VALUE | TOOL_OPTIONAL, set_q),
	TOOL_OPT_CALL("l", TOOL_VALUE, set_list),
	TOOL_OPT_HELP("?|h|help"),
	TOOL_OPT_END,
};

static const struct tool_cmd cmds[] = {
	{"run", cmd_run},
	{"status", cmd_run},
	{NULL, NULL},
};

static const struct tool_cli unix_cli = {
	.name = "tt",
	.usage = "MANUAL\n",
	.exit_usage = EXIT_USAGE,
	.opts = opts,
	.operand = operand,
};

static const struct tool_cli win_cli = {
	.name = "wt",
	.usage = "MANUAL\n",
	.windows = true,
	.exit_usage = 87,
	.opts = opts,
};

static const struct tool_cli cmd_cli = {
	.name = "ct",
	.usage = "MANUAL\n",
	.synopsis = "usage: ct run | status\n",
	.exit_usage = EXIT_USAGE,
	.opts = opts,
	.cmds = cmds,
};

static struct args a;
static struct tool_parser p;
static char out[1024], err[1024]; /* what the parse wrote on stdout and stderr */

/* what was written since tl_capture(), in out[] and err[] */
static void captured(void)
{
	tl_captured(out, sizeof(out), err, sizeof(err));
}

/* tool_parse of a NULL-terminated argument list (argv[0] added), stdout and stderr captured */
static int parse(const struct tool_cli *cli, ...)
{
	char *argv[32] = {"tool"};
	int argc = 1, status;
	va_list ap;

	va_start(ap, cli);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	memset(&a, 0, sizeof(a));
	tl_capture();
	status = tool_parse(&p, cli, &a, argc, argv);
	captured();
	return status;
}

/* every spelling of a switch with a value: '-', '/', "--", ':' or '=', the next argument */
static void test_spellings(void **state)
{
	static const char *const one[] = {"-o:x",      "/o:x",	     "--o=x",	 "-O=x",
					  "/OUTPUT:x", "--output=x", "-output:x"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		assert_int_equal(parse(&unix_cli, one[i], NULL), TOOL_CONTINUE);
		assert_string_equal(a.out, "x");
	}
	assert_int_equal(parse(&unix_cli, "-o", "y", NULL), TOOL_CONTINUE);
	assert_string_equal(a.out, "y");
	assert_int_equal(parse(&unix_cli, "/o", "y", NULL), TOOL_CONTINUE);
	assert_string_equal(a.out, "y");
	assert_int_equal(parse(&unix_cli, "--output", "y", NULL), TOOL_CONTINUE);
	assert_string_equal(a.out, "y");
	/* a value that looks like a switch is still the value */
	assert_int_equal(parse(&unix_cli, "-o", "-f", NULL), TOOL_CONTINUE);
	assert_string_equal(a.out, "-f");
	assert_false(a.force);
	/* an empty inline value ("/o:") takes the next argument, as "/m: file" on Windows */
	assert_int_equal(parse(&unix_cli, "/o:", "z", NULL), TOOL_CONTINUE);
	assert_string_equal(a.out, "z");
	/* the last one given wins */
	assert_int_equal(parse(&unix_cli, "-o", "1", "-o", "2", NULL), TOOL_CONTINUE);
	assert_string_equal(a.out, "2");
	assert_string_equal(err, "");
	assert_string_equal(out, "");
}

static void test_flags_and_numbers(void **state)
{
	(void)state;
	assert_int_equal(parse(&unix_cli, "-f", NULL), TOOL_CONTINUE);
	assert_true(a.force);
	assert_int_equal(parse(&unix_cli, "--FORCE", NULL), TOOL_CONTINUE);
	assert_true(a.force);
	assert_int_equal(parse(&unix_cli, "--hz", "1", NULL), TOOL_CONTINUE);
	assert_int_equal(a.hz, 1);
	assert_int_equal(parse(&unix_cli, "/hz:1000", NULL), TOOL_CONTINUE);
	assert_int_equal(a.hz, 1000);
	assert_int_equal(parse(&unix_cli, "-hz=0250", NULL), TOOL_CONTINUE);
	assert_int_equal(a.hz, 250);
}

/* TOOL_CALL, an optional value, a switch that takes the operands after it */
static void test_callbacks(void **state)
{
	(void)state;
	assert_int_equal(parse(&unix_cli, "-c", "good", "--check=good", NULL), TOOL_CONTINUE);
	assert_int_equal(a.calls, 2);
	assert_string_equal(a.call_value, "good");
	/* -q [value]: inline, the next operand, or none before a switch or at the end */
	assert_int_equal(parse(&unix_cli, "-q:v", NULL), TOOL_CONTINUE);
	assert_string_equal(a.q, "v");
	assert_int_equal(parse(&unix_cli, "-q", "v", "w", NULL), TOOL_CONTINUE);
	assert_string_equal(a.q, "v");
	assert_int_equal(a.nr_ops, 1);
	assert_string_equal(a.ops[0], "w");
	assert_int_equal(parse(&unix_cli, "-q", "-f", NULL), TOOL_CONTINUE);
	assert_true(a.q_given);
	assert_null(a.q);
	assert_true(a.force);
	assert_int_equal(parse(&unix_cli, "-q", "--", "x", NULL), TOOL_CONTINUE);
	assert_null(a.q);
	assert_string_equal(a.ops[0], "x");
	assert_int_equal(parse(&unix_cli, "/q", NULL), TOOL_CONTINUE);
	assert_true(a.q_given);
	assert_null(a.q);
	/* tool_peek stops at a switch of the table and at an unknown "-x"; "/x" is a path */
	assert_int_equal(parse(&unix_cli, "-l", "a", "b", "/c/d", "-f", "e", NULL), TOOL_CONTINUE);
	assert_int_equal(a.nr_list, 3);
	assert_string_equal(a.list[2], "/c/d");
	assert_string_equal(a.ops[0], "e");
	assert_int_equal(parse(&unix_cli, "-l", "a", "b", "-zz", NULL), EXIT_USAGE);
	assert_int_equal(a.nr_list, 2);
}

/* operands: "/path" is one, "-" is one, "--" ends the switches */
static void test_operands(void **state)
{
	(void)state;
	assert_int_equal(parse(&unix_cli, "/etc/x.man", "-", "y", NULL), TOOL_CONTINUE);
	assert_int_equal(a.nr_ops, 3);
	assert_string_equal(a.ops[0], "/etc/x.man");
	assert_string_equal(a.ops[1], "-");
	assert_int_equal(parse(&unix_cli, "--", "-f", "--", "-o", NULL), TOOL_CONTINUE);
	assert_false(a.force);
	assert_int_equal(a.nr_ops, 3);
	assert_string_equal(a.ops[0], "-f");
	assert_string_equal(a.ops[1], "--");
	assert_string_equal(a.ops[2], "-o");
	/* refused by the tool's operand callback */
	assert_int_equal(parse(&unix_cli, "refused", NULL), EXIT_USAGE);
	assert_string_equal(err, "tt: unexpected argument 'refused'\n"
				 "Try 'tt --help' for more information.\n");
	/* no operand callback */
	assert_int_equal(parse(&win_cli, "x", NULL), 87);
	assert_string_equal(err, "Error: unexpected argument 'x'\nType \"wt -?\" for help.\n");
}

static void test_help(void **state)
{
	static const char *const spellings[] = {"-?", "/?", "-h", "--help", "/HELP", "-Help"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
		assert_int_equal(parse(&unix_cli, spellings[i], NULL), 0);
		assert_string_equal(out, "MANUAL\n");
		assert_string_equal(err, "");
	}
	/* help ends the parse: what follows is not looked at */
	assert_int_equal(parse(&unix_cli, "-f", "--help", "-nosuch", NULL), 0);
	assert_string_equal(err, "");
	/* but an error before it stands */
	assert_int_equal(parse(&unix_cli, "-nosuch", "--help", NULL), EXIT_USAGE);
	assert_string_equal(out, "");
	assert_int_equal(parse(&unix_cli, "--help=x", NULL), EXIT_USAGE);
	assert_string_equal(err, "tt: --help=x takes no value\n"
				 "Try 'tt --help' for more information.\n");
}

/* every usage error, with its message in the Unix form */
static void test_errors(void **state)
{
	(void)state;
	assert_int_equal(parse(&unix_cli, "-x", NULL), EXIT_USAGE);
	assert_string_equal(err,
			    "tt: unknown switch '-x'\nTry 'tt --help' for more information.\n");
	assert_int_equal(parse(&unix_cli, "--forc", NULL), EXIT_USAGE);
	assert_string_equal(err, "tt: unknown switch '--forc'\n"
				 "Try 'tt --help' for more information.\n");
	assert_int_equal(parse(&unix_cli, "-o", NULL), EXIT_USAGE);
	assert_string_equal(err, "tt: -o needs a value\nTry 'tt --help' for more information.\n");
	assert_int_equal(parse(&unix_cli, "--output=", NULL), EXIT_USAGE);
	assert_string_equal(err, "tt: --output needs a value\n"
				 "Try 'tt --help' for more information.\n");
	assert_int_equal(parse(&unix_cli, "-f:yes", NULL), EXIT_USAGE);
	assert_string_equal(err, "tt: -f:yes takes no value\n"
				 "Try 'tt --help' for more information.\n");
	assert_int_equal(parse(&unix_cli, "-one", "a", "/ONE:b", NULL), EXIT_USAGE);
	assert_string_equal(err, "tt: /ONE given twice\nTry 'tt --help' for more information.\n");
	assert_string_equal(a.once, "a");
	/* numbers: range, sign, blanks, garbage, overflow */
	assert_int_equal(parse(&unix_cli, "--hz", "0", NULL), EXIT_USAGE);
	assert_string_equal(err, "tt: bad value '0' for --hz: expected a number from 1 to 1000\n"
				 "Try 'tt --help' for more information.\n");
	assert_int_equal(parse(&unix_cli, "--hz=1001", NULL), EXIT_USAGE);
	assert_int_equal(parse(&unix_cli, "--hz", "-1", NULL), EXIT_USAGE);
	assert_int_equal(parse(&unix_cli, "--hz", "+5", NULL), EXIT_USAGE);
	assert_int_equal(parse(&unix_cli, "--hz", " 5", NULL), EXIT_USAGE);
	assert_int_equal(parse(&unix_cli, "--hz", "5x", NULL), EXIT_USAGE);
	assert_int_equal(parse(&unix_cli, "--hz", "99999999999999999999999", NULL), EXIT_USAGE);
	assert_int_equal(a.hz, 0);
	/* callbacks: refused quietly, refused with a message, stopped with a status */
	assert_int_equal(parse(&unix_cli, "/C:bad", NULL), EXIT_USAGE);
	assert_string_equal(err,
			    "tt: bad value 'bad' for /C\nTry 'tt --help' for more information.\n");
	assert_int_equal(parse(&unix_cli, "-check", "fail", NULL), EXIT_USAGE);
	assert_string_equal(err, "tt: -check: 'fail' is refused\n"
				 "Try 'tt --help' for more information.\n");
	assert_int_equal(parse(&unix_cli, "-c", "stop", "-f", NULL), 50);
	assert_string_equal(err, "stopped\n");
	assert_false(a.force); /* the parse ended there */
	/* the first error ends the parse */
	assert_int_equal(parse(&unix_cli, "-x", "-y", NULL), EXIT_USAGE);
	assert_string_equal(err,
			    "tt: unknown switch '-x'\nTry 'tt --help' for more information.\n");
}

/* the Windows form: "Error: ..." and "Type ..." */
static void test_windows_errors(void **state)
{
	(void)state;
	assert_int_equal(parse(&win_cli, "/x", NULL), 87); /* no operands: "/x" is refused */
	assert_string_equal(err, "Error: unexpected argument '/x'\nType \"wt -?\" for help.\n");
	assert_int_equal(parse(&win_cli, "-x", NULL), 87);
	assert_string_equal(err, "Error: unknown switch '-x'\nType \"wt -?\" for help.\n");
	assert_int_equal(parse(&win_cli, "/o", NULL), 87);
	assert_string_equal(err, "Error: /o needs a value\nType \"wt -?\" for help.\n");
	tl_capture();
	assert_int_equal(tool_cli_error(&win_cli, "no %s", "manifest"), 87);
	captured();
	assert_string_equal(err, "Error: no manifest\nType \"wt -?\" for help.\n");
	tl_capture();
	assert_int_equal(tool_cli_error(&cmd_cli, "no %s", "manifest"), EXIT_USAGE);
	captured();
	assert_string_equal(err, "ct: no manifest\nusage: ct run | status\n");
}

static void test_commands(void **state)
{
	(void)state;
	assert_int_equal(parse(&cmd_cli, "run", NULL), TOOL_CONTINUE);
	assert_non_null(p.cmd);
	assert_string_equal(p.cmd->name, "run");
	assert_int_equal(p.cmd->run(NULL), 7);
	/* switches before and after the command */
	assert_int_equal(parse(&cmd_cli, "--hz", "5", "status", "-f", NULL), TOOL_CONTINUE);
	assert_string_equal(p.cmd->name, "status");
	assert_int_equal(a.hz, 5);
	assert_true(a.force);
	/* errors: the synopsis follows the message */
	assert_int_equal(parse(&cmd_cli, NULL), EXIT_USAGE);
	assert_string_equal(err, "ct: no command given\nusage: ct run | status\n");
	assert_int_equal(parse(&cmd_cli, "-f", NULL), EXIT_USAGE);
	assert_string_equal(err, "ct: no command given\nusage: ct run | status\n");
	assert_int_equal(parse(&cmd_cli, "bogus", NULL), EXIT_USAGE);
	assert_string_equal(err, "ct: unknown command 'bogus'\nusage: ct run | status\n");
	assert_int_equal(parse(&cmd_cli, "RUN", NULL), EXIT_USAGE); /* commands keep their case */
	assert_int_equal(parse(&cmd_cli, "run", "status", NULL), EXIT_USAGE);
	assert_string_equal(err, "ct: unexpected argument 'status'\nusage: ct run | status\n");
	/* help needs no command */
	assert_int_equal(parse(&cmd_cli, "--help", NULL), 0);
	assert_string_equal(out, "MANUAL\n");
}

/* the exit status of a Win32 code */
static void test_exit_win32(void **state)
{
	(void)state;
	assert_int_equal(tool_exit_win32(0), 0);
	assert_int_equal(tool_exit_win32(87), 87);
	assert_int_equal(tool_exit_win32(1168), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spellings),      cmocka_unit_test(test_flags_and_numbers),
		cmocka_unit_test(test_callbacks),      cmocka_unit_test(test_operands),
		cmocka_unit_test(test_help),	       cmocka_unit_test(test_errors),
		cmocka_unit_test(test_windows_errors), cmocka_unit_test(test_commands),
		cmocka_unit_test(test_exit_win32),
	};

	return cmocka_run_group_tests_name("tool", tests, NULL, NULL);
}
