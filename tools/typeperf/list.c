/* SPDX-License-Identifier: MIT */
/*
 * list.c - typeperf's -q/-qx listing, built from the lists PDH gives (machine.c): objects
 * by name, each object's counters in the order PDH lists them, with -qx each counter's
 * instances in enumeration order (counter-major), duplicates numbered "#1", "#2", ... as
 * PDH numbers them in paths. See typeperf.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "typeperf.h"

/* ASCII letters without case, every other byte as it is (PDH's name comparison) */
static int fold(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* strcmp without case (ASCII) */
static int name_cmp(const char *a, const char *b)
{
	while (*a && fold((unsigned char)*a) == fold((unsigned char)*b))
		a++, b++;
	return fold((unsigned char)*a) - fold((unsigned char)*b);
}

/* the @n bytes of @piece are at @s (without case) */
static bool piece_at(const char *s, const char *piece, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!s[i] || fold((unsigned char)s[i]) != fold((unsigned char)piece[i]))
			return false;
	return true;
}

bool tp_name_match(const char *pattern, const char *name)
{
	const char *star = strchr(pattern, '*');
	size_t n, len;

	if (!star)
		return !name_cmp(pattern, name);
	/* the pieces between the stars: the first starts the name, the last ends it ... */
	n = (size_t)(star - pattern);
	if (!piece_at(name, pattern, n))
		return false;
	name += n;
	pattern = star + 1;
	/* ... and each one between is taken where it first occurs after the one before */
	while ((star = strchr(pattern, '*'))) {
		n = (size_t)(star - pattern);
		while (!piece_at(name, pattern, n)) {
			if (!*name)
				return false;
			name++;
		}
		name += n;
		pattern = star + 1;
	}
	n = strlen(pattern);
	len = strlen(name);
	return len >= n && piece_at(name + len - n, pattern, n);
}

/* the strings of the MULTI_SZ @list as a malloc'd array of pointers into it */
static int split(const char *list, const char ***ret, size_t *ret_nr)
{
	const char **v, *p;
	size_t nr = 0;

	for (p = list; *p; p += strlen(p) + 1)
		nr++;
	v = malloc((nr ? nr : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	nr = 0;
	for (p = list; *p; p += strlen(p) + 1)
		v[nr++] = p;
	*ret = v;
	*ret_nr = nr;
	return 0;
}

/* listing order of objects: without case, then byte order */
static int cmp_object(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	int c = name_cmp(x, y);

	return c ? c : strcmp(x, y);
}

int tp_sort_names(const char *list, const char ***ret, size_t *ret_nr)
{
	const char **v;
	size_t nr, i, kept = 0;
	int err;

	err = split(list, &v, &nr);
	if (err)
		return err;
	qsort(v, nr, sizeof(*v), cmp_object);
	/* a name PDH resolves without case names one object */
	for (i = 0; i < nr; i++)
		if (!kept || name_cmp(v[kept - 1], v[i]))
			v[kept++] = v[i];
	*ret = v;
	*ret_nr = kept;
	return 0;
}

struct dup_key {
	const char *name;
	size_t pos; /* index in the list */
};

static int cmp_dup(const void *a, const void *b)
{
	const struct dup_key *x = a, *y = b;
	int c = name_cmp(x->name, y->name);

	if (c)
		return c;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int tp_dup_numbers(const char *const *names, size_t nr, unsigned int *ret_dup)
{
	struct dup_key *k;
	size_t i;

	if (!nr)
		return 0;
	k = malloc(nr * sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		k[i] = (struct dup_key){names[i], i};
	/* equal names side by side, each run in the order of appearance: n log n */
	qsort(k, nr, sizeof(*k), cmp_dup);
	for (i = 0; i < nr; i++)
		ret_dup[k[i].pos] =
			i && !name_cmp(k[i - 1].name, k[i].name) ? ret_dup[k[i - 1].pos] + 1 : 0;
	free(k);
	return 0;
}

int tp_list_object(const char *object, const char *counters, const char *instances, bool qx,
		   FILE *out)
{
	const char **names = NULL, *c;
	unsigned int *dup = NULL;
	size_t nr = 0, i;
	int err = 0;

	if (instances && qx) {
		err = split(instances, &names, &nr);
		if (!err) {
			dup = calloc(nr ? nr : 1, sizeof(*dup));
			err = dup ? tp_dup_numbers(names, nr, dup) : -ENOMEM;
		}
	}
	for (c = counters; !err && *c; c += strlen(c) + 1) {
		if (!instances) {
			fprintf(out, "\\%s\\%s\n", object, c);
		} else if (!qx) {
			fprintf(out, "\\%s(*)\\%s\n", object, c);
		} else {
			/* an empty instance list: no line (no instance-less path) */
			for (i = 0; i < nr; i++) {
				if (dup[i])
					fprintf(out, "\\%s(%s#%u)\\%s\n", object, names[i], dup[i],
						c);
				else
					fprintf(out, "\\%s(%s)\\%s\n", object, names[i], c);
			}
		}
	}
	free(names);
	free(dup);
	if (err)
		return err;
	return ferror(out) ? -EIO : 0;
}

int tp_list(const struct tp_machine *m, const char *objects, const char *pattern, bool qx,
	    FILE *out)
{
	const char **names;
	char *ctrs, *insts;
	size_t nr, i;
	PDH_STATUS st;
	int listed = 0, err;

	err = tp_sort_names(objects, &names, &nr);
	if (err)
		return err;
	for (i = 0; !err && i < nr; i++) {
		if (pattern && !tp_name_match(pattern, names[i]))
			continue;
		st = tp_machine_items(m, names[i], &ctrs, &insts);
		if (st == PDH_MEMORY_ALLOCATION_FAILURE) {
			err = -ENOMEM;
			break;
		}
		if (st) {
			/* unregistered since the object list was read, or unreadable */
			tool_warn("counter set \"%s\" skipped: %s", names[i], tp_pdh_str(st));
			continue;
		}
		err = tp_list_object(names[i], ctrs, insts, qx, out);
		free(ctrs);
		free(insts);
		listed++;
	}
	free(names);
	return err ? err : listed;
}
