// SPDX-License-Identifier: MIT
/* print.c - the library's only output: a replaceable hook, warnings to stderr by default. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

static int default_print(enum perflib_log_level level, const char *fmt, va_list ap)
{
	static int debug = -1;

	if (debug < 0)
		debug = getenv("PERFLIB_DEBUG") != NULL;
	if (level == PERFLIB_DEBUG && !debug)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static perflib_print_fn_t print_fn = default_print;

perflib_print_fn_t perflib_set_print(perflib_print_fn_t fn)
{
	perflib_print_fn_t old = print_fn;

	print_fn = fn;
	return old;
}

void perflib_print(enum perflib_log_level level, const char *fmt, ...)
{
	perflib_print_fn_t fn = print_fn;
	int saved = errno; /* printing never changes errno */
	va_list ap;

	if (fn) {
		va_start(ap, fmt);
		fn(level, fmt, ap);
		va_end(ap);
	}
	errno = saved;
}
