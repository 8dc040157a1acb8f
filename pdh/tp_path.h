/* SPDX-License-Identifier: MIT */
/*
 * tp_path.h - PDH counter paths for typeperf (tools.md 4.2):
 *
 *	\\Computer\Object(Parent/Instance#Index)\Counter
 *
 * in the ten legal shapes (with or without \\Computer; with (p/i#n), (p/i), (i#n), (i) or
 * no instance part). Strings are UTF-8. Names compare case-insensitively (ASCII letters),
 * as PDH does; '*' matches any run of characters, also inside a name ("pro*").
 */
#ifndef TP_PATH_H
#define TP_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* PDH limits (pdh.h): whole path, counter name, instance name, in bytes here */
#define TP_MAX_PATH 2048
#define TP_MAX_NAME 1024

#define TP_INDEX_NONE (-1) /* no "#n" in the path */
#define TP_INDEX_ANY (-2)  /* "#*" */

struct tp_path {
	char *machine;	/* after "\\", NULL when the path has no computer */
	char *object;	/* never NULL */
	char *parent;	/* before '/' in the instance part, NULL when absent */
	char *instance; /* NULL when the path has no "(...)" */
	int index;	/* n of "#n", or TP_INDEX_NONE / TP_INDEX_ANY */
	char *counter;	/* never NULL */
};

/*
 * tp_path_parse - split @text into @ret_path (its strings are malloc'd; free with
 * tp_path_free). Trailing CR/LF and surrounding blanks are ignored. Returns 0, -EINVAL
 * for a malformed path, -ENAMETOOLONG beyond the PDH limits, -ENOMEM. The index is
 * recognised only as '#' followed by digits (or '*') at the end of the instance part;
 * any other '#' belongs to the name. Parent and instance split at the first '/'.
 */
int tp_path_parse(const char *text, struct tp_path *ret_path);

/* tp_path_free - free the strings of @path (accepts a zeroed or half-filled struct) */
void tp_path_free(struct tp_path *path);

/*
 * tp_path_instance_pattern - the name pattern instances are matched against:
 * "parent/instance" when the path has a parent (V2 counter sets have no parent objects, so
 * a parent is part of the instance name), else the instance. malloc'd, NULL on ENOMEM or
 * when the path has no instance part.
 */
char *tp_path_instance_pattern(const struct tp_path *path);

/*
 * tp_path_format - "\\machine\object(instance)\counter" (malloc'd). @machine and
 * @instance may be NULL to leave that part out. NULL on ENOMEM.
 */
char *tp_path_format(const char *machine, const char *object, const char *instance,
		     const char *counter);

/*
 * tp_instance_display - the name typeperf shows for the @dup-th instance (0-based) of
 * those called @name: "name" for 0, else "name#dup". malloc'd, NULL on ENOMEM.
 */
char *tp_instance_display(const char *name, unsigned int dup);

/* tp_has_wildcard - @s contains '*' */
bool tp_has_wildcard(const char *s);

/* tp_match - @s matches @pattern: '*' any run, ASCII case-insensitive, else exact */
bool tp_match(const char *pattern, const char *s);

/* tp_name_equal - ASCII case-insensitive equality */
bool tp_name_equal(const char *a, const char *b);

/* tp_name_hash - FNV-1a of the lower-cased name: names tp_name_equal hash alike */
uint64_t tp_name_hash(const char *s);

/*
 * tp_dup_indexes - number duplicate names in order of appearance: @ret_dup[i] = how many
 * of @names[0..i-1] equal @names[i] (tp_name_equal). First occurrence 0, then 1, 2, ...
 * Returns 0 or -ENOMEM.
 */
int tp_dup_indexes(const char *const *names, size_t nr, unsigned int *ret_dup);

#endif /* TP_PATH_H */
