/* SPDX-License-Identifier: MIT */
/*
 * names.h - PDH counter paths for typeperf (tools.md 4.2):
 *
 *	\\Computer\Object(Parent/Instance#Index)\Counter
 *
 * in the ten legal shapes (with or without \\Computer; with (p/i#n), (p/i), (i#n), (i) or
 * no instance part). Strings are UTF-8. Names compare case-insensitively (ASCII letters),
 * as PDH does; '*' matches any run of characters, also inside a name ("pro*").
 */
#ifndef PDH_NAMES_H
#define PDH_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* PDH limits (pdh.h): whole path, counter name, instance name, in bytes here */
#define PDH_MAX_PATH_TEXT 2048
#define PDH_MAX_NAME_TEXT 1024

#define PDH_INDEX_NONE (-1) /* no "#n" in the path */
#define PDH_INDEX_ANY (-2)  /* "#*" */

struct pdh_cpath {
	char *machine;	/* after "\\", NULL when the path has no computer */
	char *object;	/* never NULL */
	char *parent;	/* before '/' in the instance part, NULL when absent */
	char *instance; /* NULL when the path has no "(...)" */
	int index;	/* n of "#n", or PDH_INDEX_NONE / PDH_INDEX_ANY */
	char *counter;	/* never NULL */
};

/*
 * pdh_cpath_parse - split @text into @ret_path (its strings are malloc'd; free with
 * pdh_cpath_free). Trailing CR/LF and surrounding blanks are ignored. Returns 0, -EINVAL
 * for a malformed path, -ENAMETOOLONG beyond the PDH limits, -ENOMEM. The index is
 * recognised only as '#' followed by digits (or '*') at the end of the instance part;
 * any other '#' belongs to the name. Parent and instance split at the first '/'.
 */
int pdh_cpath_parse(const char *text, struct pdh_cpath *ret_path);

/* pdh_cpath_free - free the strings of @path (accepts a zeroed or half-filled struct) */
void pdh_cpath_free(struct pdh_cpath *path);

/*
 * pdh_cpath_instance_pattern - the name pattern instances are matched against:
 * "parent/instance" when the path has a parent (V2 counter sets have no parent objects, so
 * a parent is part of the instance name), else the instance. malloc'd, NULL on ENOMEM or
 * when the path has no instance part.
 */
char *pdh_cpath_instance_pattern(const struct pdh_cpath *path);

/*
 * pdh_cpath_format - "\\machine\object(instance)\counter" (malloc'd). @machine and
 * @instance may be NULL to leave that part out. NULL on ENOMEM.
 */
char *pdh_cpath_format(const char *machine, const char *object, const char *instance,
		       const char *counter);

/*
 * pdh_instance_display - the name typeperf shows for the @dup-th instance (0-based) of
 * those called @name: "name" for 0, else "name#dup". malloc'd, NULL on ENOMEM.
 */
char *pdh_instance_display(const char *name, unsigned int dup);

/* pdh_has_wildcard - @s contains '*' */
bool pdh_has_wildcard(const char *s);

/* pdh_match - @s matches @pattern: '*' any run, ASCII case-insensitive, else exact */
bool pdh_match(const char *pattern, const char *s);

/* pdh_name_equal - ASCII case-insensitive equality */
bool pdh_name_equal(const char *a, const char *b);

/* pdh_name_hash - FNV-1a of the lower-cased name: names pdh_name_equal hash alike */
uint64_t pdh_name_hash(const char *s);

/*
 * pdh_dup_indexes - number duplicate names in order of appearance: @ret_dup[i] = how many
 * of @names[0..i-1] equal @names[i] (pdh_name_equal). First occurrence 0, then 1, 2, ...
 * Returns 0 or -ENOMEM.
 */
int pdh_dup_indexes(const char *const *names, size_t nr, unsigned int *ret_dup);

#endif /* PDH_NAMES_H */
