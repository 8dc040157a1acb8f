/* SPDX-License-Identifier: MIT */
/*
 * tool.h - the layer every command-line tool shares: switch tables with the Windows and
 * the GNU spellings, one error printer, one Win32-to-exit-code rule. Nothing else lives
 * here; what one tool alone uses stays under that tool.
 */
#ifndef TOOL_H
#define TOOL_H

#include <stdbool.h>
#include <stddef.h>

#include "perflib.h"

/* One switch of a tool's table (the table ends with a NULL name). */
struct tool_switch {
	const char *name; /* without prefix, compared without case: "f", "si", "config", "?" */
	int id;		  /* what tool_switch_of() reports for it */
	bool value;	  /* takes a value: "/x:v", "/x v", "-x v", "-x:v", "--x=v", "--x v" */
};

/*
 * tool_switch_of - @arg against @table: a switch is "-name", "/name" or "--name", with an
 * inline value after ':' or '=' (*@inline_val, else NULL). Returns the entry, or NULL
 * when @arg is no switch of the table: *@unknown then says whether it looked like one
 * ('-' or "--" with a name; an argument starting with '/' that names no switch is a path,
 * as Windows tools take "/dir/file" on Linux) or is a positional argument.
 */
const struct tool_switch *tool_switch_of(const struct tool_switch *table, const char *arg,
					 const char **inline_val, bool *unknown);

/*
 * win_switch - @arg as the one switch @name (a table of one): "-name", "/name", "--name",
 * without case, with an inline value after ':' or '=' in *@ret_value (else NULL)
 */
bool win_switch(const char *arg, const char *name, const char **ret_value);

/*
 * tool_value - the value of the switch at argv[*@i]: @inline_val when given, else the next
 * argument (*@i advanced); NULL when there is none.
 */
const char *tool_value(int argc, char *const *argv, int *i, const char *inline_val);

/* tool_error - "Error: <message>" on stderr, the form of the Windows tools */
void tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* tool_usage_error - tool_error, then "Type "<tool> -?" for help." */
void tool_usage_error(const char *tool, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* tool_warn - "<tool>: <message>" on stderr (program_invocation_short_name) */
void tool_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * tool_exit_win32 - the exit status for a Win32 code, as lodctr/unlodctr exit on
 * Windows: 0 for ERROR_SUCCESS, the code itself when it fits (1-255), else 1
 */
int tool_exit_win32(ULONG code);

#endif /* TOOL_H */
