/* SPDX-License-Identifier: MIT */
/* lines.c - lists of strings and line files for the tools' command lines. See lines.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"

int tool_strv_add(struct tool_strv *sv, const char *s)
{
	char **grown;
	char *copy;

	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	grown = realloc(sv->v, (sv->nr + 1) * sizeof(*grown));
	if (!grown) {
		free(copy);
		return -ENOMEM;
	}
	sv->v = grown;
	sv->v[sv->nr++] = copy;
	return 0;
}

void tool_free_lines(char **lines, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(lines[i]);
	free(lines);
}

int tool_read_lines(const char *path, bool comments, char ***ret_lines, size_t *ret_nr)
{
	struct tool_strv sv = {0};
	char *line = NULL, *s, *e;
	size_t cap = 0;
	int err = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (!err && getline(&line, &cap, f) >= 0) {
		/* trim blanks and line ends (files written on Windows end lines with CRLF) */
		for (s = line; *s == ' ' || *s == '\t'; s++)
			;
		for (e = s + strlen(s); e > s && strchr(" \t\r\n", e[-1]); e--)
			;
		*e = '\0';
		if (!*s || (comments && (*s == ';' || *s == '#')))
			continue;
		err = tool_strv_add(&sv, s);
	}
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	fclose(f);
	if (err) {
		tool_free_lines(sv.v, sv.nr);
		return err;
	}
	*ret_lines = sv.v;
	*ret_nr = sv.nr;
	return 0;
}
