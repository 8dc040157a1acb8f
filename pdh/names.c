/* SPDX-License-Identifier: MIT */
/*
 * names.c - parsing and formatting PDH counter paths, wildcard matching, numbering of
 * duplicate instance names (tools.md 4.2). See names.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

static int lower(int c)
{
	/* ASCII only: bytes of UTF-8 sequences compare exactly */
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

bool pdh_name_equal(const char *a, const char *b)
{
	while (*a && lower((unsigned char)*a) == lower((unsigned char)*b))
		a++, b++;
	return *a == *b;
}

bool pdh_has_wildcard(const char *s)
{
	return strchr(s, '*') != NULL;
}

bool pdh_match(const char *pattern, const char *s)
{
	const char *star = NULL, *resume = NULL;

	/* greedy scan; on a mismatch let the last '*' swallow one more character */
	while (*s) {
		if (*pattern == '*') {
			star = ++pattern;
			resume = s;
		} else if (lower((unsigned char)*pattern) == lower((unsigned char)*s)) {
			pattern++, s++;
		} else if (star) {
			pattern = star;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*pattern == '*')
		pattern++;
	return *pattern == '\0';
}

static char *dup_range(const char *s, const char *end)
{
	return strndup(s, (size_t)(end - s));
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* "#n" or "#*" at the end of the instance part [s, *pend): shortens *pend, sets *index */
static int split_index(const char *s, const char **pend, int *index)
{
	const char *end = *pend, *hash = NULL, *q;
	long n = 0;

	for (q = s; q < end; q++)
		if (*q == '#')
			hash = q;
	if (!hash || hash == s || hash + 1 == end)
		return 0; /* no index: a '#' that is part of the name, or none */
	if (hash + 2 == end && hash[1] == '*') {
		*index = PDH_INDEX_ANY;
		*pend = hash;
		return 0;
	}
	for (q = hash + 1; q < end; q++) {
		if (*q < '0' || *q > '9')
			return 0; /* "#abc": part of the name */
		n = n * 10 + (*q - '0');
		if (n > INT32_MAX)
			return -EINVAL;
	}
	*index = (int)n;
	*pend = hash;
	return 0;
}

int pdh_cpath_parse(const char *text, struct pdh_cpath *ret_path)
{
	struct pdh_cpath p = {.index = PDH_INDEX_NONE};
	const char *s = text, *end, *obj, *last, *open, *q, *inst, *inst_end, *slash = NULL;
	int err = -EINVAL;

	while (is_blank(*s))
		s++;
	end = s + strlen(s);
	while (end > s && is_blank(end[-1]))
		end--;
	if (end - s > PDH_MAX_PATH_TEXT)
		return -ENAMETOOLONG;
	if (end - s < 2 || *s != '\\')
		return -EINVAL;
	if (s[1] == '\\') {
		/* \\computer: up to the next separator */
		q = memchr(s + 2, '\\', (size_t)(end - s - 2));
		if (!q || q == s + 2)
			return -EINVAL;
		p.machine = dup_range(s + 2, q);
		if (!p.machine)
			return -ENOMEM;
		s = q;
	}
	obj = s + 1;
	/* the counter follows the last separator (names cannot contain '\') */
	for (last = end - 1; last >= obj && *last != '\\'; last--)
		;
	if (last < obj || last + 1 == end || last == obj)
		goto out;
	if (end - (last + 1) > PDH_MAX_NAME_TEXT) {
		err = -ENAMETOOLONG;
		goto out;
	}
	open = memchr(obj, '(', (size_t)(last - obj));
	if (open) {
		/* (instance) must close right before the separator */
		inst = open + 1;
		inst_end = last - 1;
		if (*inst_end != ')' || inst_end <= inst || open == obj)
			goto out;
		if (inst_end - inst > PDH_MAX_NAME_TEXT) {
			err = -ENAMETOOLONG;
			goto out;
		}
		if (split_index(inst, &inst_end, &p.index))
			goto out;
		slash = memchr(inst, '/', (size_t)(inst_end - inst));
		if (slash) {
			if (slash == inst || slash + 1 == inst_end)
				goto out;
			p.parent = dup_range(inst, slash);
			inst = slash + 1;
		}
		p.instance = dup_range(inst, inst_end);
		p.object = dup_range(obj, open);
	} else {
		p.object = dup_range(obj, last);
	}
	p.counter = dup_range(last + 1, end);
	if (!p.object || !p.counter || (open && !p.instance) || (slash && !p.parent)) {
		err = -ENOMEM;
		goto out;
	}
	/* the object is a plain name */
	if (strchr(p.object, '\\') || strchr(p.object, ')'))
		goto out;
	*ret_path = p;
	return 0;
out:
	pdh_cpath_free(&p);
	return err;
}

void pdh_cpath_free(struct pdh_cpath *path)
{
	free(path->machine);
	free(path->object);
	free(path->parent);
	free(path->instance);
	free(path->counter);
	memset(path, 0, sizeof(*path));
	path->index = PDH_INDEX_NONE;
}

char *pdh_cpath_instance_pattern(const struct pdh_cpath *path)
{
	char *s;

	if (!path->instance)
		return NULL;
	if (!path->parent)
		return strdup(path->instance);
	if (asprintf(&s, "%s/%s", path->parent, path->instance) < 0)
		return NULL;
	return s;
}

char *pdh_cpath_format(const char *machine, const char *object, const char *instance,
		       const char *counter)
{
	char *s;
	int n;

	n = asprintf(&s, "%s%s\\%s%s%s%s\\%s", machine ? "\\\\" : "", machine ? machine : "",
		     object, instance ? "(" : "", instance ? instance : "", instance ? ")" : "",
		     counter);
	return n < 0 ? NULL : s;
}

char *pdh_instance_display(const char *name, unsigned int dup)
{
	char *s;

	if (!dup)
		return strdup(name);
	if (asprintf(&s, "%s#%u", name, dup) < 0)
		return NULL;
	return s;
}

uint64_t pdh_name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++)
		h = (h ^ (uint64_t)lower((unsigned char)*s)) * 1099511628211ull;
	return h;
}

int pdh_dup_indexes(const char *const *names, size_t nr, unsigned int *ret_dup)
{
	size_t cap = 16, *last, i, j;

	if (!nr)
		return 0;
	while (cap < 2 * nr)
		cap *= 2;
	/* open addressing: per distinct name, the position of its latest occurrence */
	last = malloc(cap * sizeof(*last));
	if (!last)
		return -ENOMEM;
	memset(last, 0xff, cap * sizeof(*last));
	for (i = 0; i < nr; i++) {
		for (j = pdh_name_hash(names[i]) & (cap - 1); last[j] != SIZE_MAX;
		     j = (j + 1) & (cap - 1))
			if (pdh_name_equal(names[last[j]], names[i]))
				break;
		ret_dup[i] = last[j] == SIZE_MAX ? 0 : ret_dup[last[j]] + 1;
		last[j] = i;
	}
	free(last);
	return 0;
}
