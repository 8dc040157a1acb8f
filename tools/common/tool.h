/* SPDX-License-Identifier: MIT */
/*
 * tool.h - the layer every command-line tool shares: the one argument parser (option
 * tables with the Windows and the GNU spellings, subcommands, operands, --help and the
 * usage errors), one error printer, one Win32-to-exit-code rule. Nothing else lives here;
 * what one tool alone uses stays under that tool.
 *
 * A switch is "-name", "/name" or "--name", compared without case; a value follows as the
 * next argument or after ':' or '=' ("/m:file", "-o file", "--mode=0664"). An argument
 * starting with '/' that names no switch is an operand (a path: Windows tools take
 * "/dir/file" on Linux); one starting with '-' that names none is an unknown switch. "--"
 * ends the switches; "-" alone is an operand.
 */
#ifndef TOOL_H
#define TOOL_H

#include <stdbool.h>
#include <stddef.h>

#include "perflib.h"

/* ---- the parser ---------------------------------------------------------------------- */

/* what an option does with its value */
enum tool_opt_kind {
	TOOL_FLAG, /* sets the bool at .off; takes no value */
	TOOL_STR,  /* stores the value (a pointer into argv) in the const char * at .off */
	TOOL_UINT, /* a decimal number from .min to .max into the unsigned int at .off */
	TOOL_CALL, /* .fn converts and stores the value, or acts */
	TOOL_HELP, /* prints the tool's manual on stdout; the tool then exits 0 */
};

/*
 * struct tool_opt flags. TOOL_OPTIONAL: the value may be left out; it is then the inline
 * one, else the next argument unless that is a switch (tool_peek), and .fn gets NULL
 * without one.
 */
#define TOOL_VALUE 0x1	  /* TOOL_CALL: takes a value (TOOL_STR and TOOL_UINT always do) */
#define TOOL_OPTIONAL 0x2 /* the value may be left out (see above) */
#define TOOL_ONCE 0x4	  /* TOOL_STR: given a second time is an error ("-o given twice") */

struct tool_parser;

/* one option of a tool's table; the table ends with TOOL_OPT_END */
struct tool_opt {
	const char *names; /* without prefix, aliases split by '|': "f|force", "?|h|help" */
	enum tool_opt_kind kind;
	unsigned int flags;    /* TOOL_VALUE, TOOL_OPTIONAL, TOOL_ONCE */
	size_t off;	       /* TOOL_FLAG, _STR, _UINT: the field's offset in the context */
	unsigned int min, max; /* TOOL_UINT: the accepted range */
	/*
	 * TOOL_CALL: @value is the value (NULL for a switch without one). Returns 0, or a
	 * negative errno: the parser then prints "bad value '<value>' for <switch>" unless
	 * .fn stopped the parse itself (tool_fail, tool_stop).
	 */
	int (*fn)(struct tool_parser *p, const char *value);
};

/* the offset of @field (of C type @ctype) in @type; a field of another type does not compile */
#define TOOL_FIELD(type, field, ctype)                                                             \
	(offsetof(type, field) + 0 * sizeof(_Generic(((type *)0)->field, ctype : 1)))
#define TOOL_OPT_FLAG(names, type, field)                                                          \
	{                                                                                          \
		(names), TOOL_FLAG, 0, TOOL_FIELD(type, field, bool), 0, 0, NULL                   \
	}
#define TOOL_OPT_STR(names, type, field, flags)                                                    \
	{                                                                                          \
		(names), TOOL_STR, (flags), TOOL_FIELD(type, field, const char *), 0, 0, NULL      \
	}
#define TOOL_OPT_UINT(names, type, field, lo, hi)                                                  \
	{                                                                                          \
		(names), TOOL_UINT, 0, TOOL_FIELD(type, field, unsigned int), (lo), (hi), NULL     \
	}
#define TOOL_OPT_CALL(names, flags, fn)                                                            \
	{                                                                                          \
		(names), TOOL_CALL, (flags), 0, 0, 0, (fn)                                         \
	}
#define TOOL_OPT_HELP(names)                                                                       \
	{                                                                                          \
		(names), TOOL_HELP, 0, 0, 0, 0, NULL                                               \
	}
#define TOOL_OPT_END                                                                               \
	{                                                                                          \
		NULL, TOOL_FLAG, 0, 0, 0, 0, NULL                                                  \
	}

/* one subcommand ("kcounters load"); the table ends with a NULL name */
struct tool_cmd {
	const char *name;      /* compared exactly */
	int (*run)(void *ctx); /* what the tool calls for it, with a context of its choice */
};

/* a tool's command line */
struct tool_cli {
	const char *name;	     /* "lodctr": in messages */
	const char *usage;	     /* the manual, printed on stdout by TOOL_HELP */
	const char *synopsis;	     /* printed on stderr after a usage error (NULL: a hint) */
	bool windows;		     /* Windows messages: "Error: ..." and "Type ..." */
	int exit_usage;		     /* the exit status of a bad command line */
	const struct tool_opt *opts; /* the switches */
	const struct tool_cmd *cmds; /* NULL, or the subcommands: the first operand names one */
	/* each other operand, in order; NULL: an operand is an error. Returns as .fn does. */
	int (*operand)(struct tool_parser *p, const char *arg);
};

/* the state of one parse; callbacks read it and change it through the functions below */
struct tool_parser {
	const struct tool_cli *cli;
	void *ctx;		    /* the tool's options, where .off fields are */
	const struct tool_cmd *cmd; /* the subcommand named, or NULL */
	const char *arg;	    /* the argument being handled, as typed ("/M:x", "--mode") */
	char sw[48];		    /* the switch being handled without its value ("/M") */
	int argc;
	char *const *argv;
	int i;	    /* index of the argument being handled */
	int status; /* TOOL_CONTINUE, or the exit status once the parse stopped */
};

#define TOOL_CONTINUE (-1) /* tool_parse: the command line is fine, go on */

/*
 * tool_parse - parse @argv[1 .. @argc) against @cli into @ctx, in order: each switch as its
 * table entry says, operands to @cli->operand (the first one to @cli->cmds when there are
 * subcommands; its entry is then in @p->cmd). Usage errors are printed in the tool's form
 * (tool_cli_error): an unknown switch or subcommand, a switch without its value or with one
 * it does not take, a bad value, an operand nobody takes, a missing subcommand.
 * Returns TOOL_CONTINUE when the tool should go on; otherwise the exit status: 0 after
 * --help, @cli->exit_usage after a usage error, or what a callback chose (tool_stop).
 */
int tool_parse(struct tool_parser *p, const struct tool_cli *cli, void *ctx, int argc,
	       char *const *argv);

/*
 * tool_peek - the argument after the current one when it is an operand (no switch of the
 * table, not "-x"), else NULL: for options that take more than one value. tool_take
 * consumes it and returns it.
 */
const char *tool_peek(const struct tool_parser *p);
const char *tool_take(struct tool_parser *p);

/* tool_fail - a usage error from a callback: printed as tool_cli_error; returns -EINVAL */
int tool_fail(struct tool_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* tool_stop - end the parse with exit @status (the callback printed what it had to); -EINVAL */
int tool_stop(struct tool_parser *p, int status);

/* tool_help - print the manual on stdout and end the parse with status 0; returns 0 */
int tool_help(struct tool_parser *p);

/*
 * tool_cli_error - a usage error in @cli's form: "Error: <message>" and "Type "<tool> -?"
 * for help." (windows), else "<tool>: <message>" and the synopsis, or "Try '<tool> --help'
 * for more information.". Returns @cli->exit_usage.
 */
int tool_cli_error(const struct tool_cli *cli, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- messages and exit codes ----------------------------------------------------------- */

/* tool_error - "Error: <message>" on stderr, the form of the Windows tools */
void tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* tool_warn - "<tool>: <message>" on stderr (program_invocation_short_name) */
void tool_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * tool_exit_win32 - the exit status for a Win32 code, as lodctr/unlodctr exit on
 * Windows: 0 for ERROR_SUCCESS, the code itself when it fits (1-255), else 1
 */
int tool_exit_win32(ULONG code);

#endif /* TOOL_H */
