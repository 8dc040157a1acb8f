/* SPDX-License-Identifier: MIT */
/* tool.c - switch tables, error printing and exit codes of the tools. See tool.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tool.h"

const struct tool_switch *tool_switch_of(const struct tool_switch *table, const char *arg,
					 const char **inline_val, bool *unknown)
{
	bool slash = arg[0] == '/';
	const char *name;
	size_t n;

	*inline_val = NULL;
	*unknown = false;
	if ((arg[0] != '-' && !slash) || !arg[1])
		return NULL; /* a positional argument ("-" alone too) */
	name = arg + ((arg[0] == '-' && arg[1] == '-') ? 2 : 1);
	n = strcspn(name, ":=");
	for (; table->name; table++) {
		if (strlen(table->name) == n && !strncasecmp(name, table->name, n)) {
			if (name[n])
				*inline_val = name + n + 1;
			return table;
		}
	}
	*unknown = !slash;
	return NULL;
}

bool win_switch(const char *arg, const char *name, const char **ret_value)
{
	const struct tool_switch one[] = {{name, 0, true}, {NULL, 0, false}};
	bool unknown;

	return tool_switch_of(one, arg, ret_value, &unknown) != NULL;
}

const char *tool_value(int argc, char *const *argv, int *i, const char *inline_val)
{
	if (inline_val)
		return inline_val;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static void vprint(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void tool_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint("Error: ", fmt, ap);
	va_end(ap);
}

void tool_usage_error(const char *tool, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint("Error: ", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Type \"%s -?\" for help.\n", tool);
}

void tool_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vprint("", fmt, ap);
	va_end(ap);
}

int tool_exit_win32(ULONG code)
{
	return code == 0 ? 0 : code <= 255 ? (int)code : 1;
}
