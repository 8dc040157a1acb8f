/* SPDX-License-Identifier: MIT */
/*
 * lines.h - shared by the tools' command lines (typeperf, relog): a growable list of
 * strings and files of one item per line (-cf, -config).
 */
#ifndef TOOL_LINES_H
#define TOOL_LINES_H

#include <stdbool.h>
#include <stddef.h>

/* a growable list of strings (zeroed to start) */
struct tool_strv {
	char **v;
	size_t nr;
};

/* tool_strv_add - append a copy of @s; 0 or -ENOMEM */
int tool_strv_add(struct tool_strv *sv, const char *s);

/*
 * tool_read_lines - the lines of @path without CR/LF and surrounding blanks, skipping
 * empty lines (and, when @comments, lines starting with ';' or '#'). *@ret_lines is a
 * malloc'd array of malloc'd strings. 0 or -errno.
 */
int tool_read_lines(const char *path, bool comments, char ***ret_lines, size_t *ret_nr);

/* tool_free_lines - free what tool_read_lines returned (or a tool_strv's v and nr) */
void tool_free_lines(char **lines, size_t nr);

#endif /* TOOL_LINES_H */
