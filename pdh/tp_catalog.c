/* SPDX-License-Identifier: MIT */
/*
 * tp_catalog.c - counter-set catalog of typeperf: hidden-counter rules, path resolution
 * with wildcards and duplicate-instance indexes, and the -q/-qx listings. See
 * tp_catalog.h for the rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "perflib-linux.h"
#include "ctrtype.h"
#include "tp_catalog.h"

bool tp_set_multi(const struct tp_set *set)
{
	return (set->instance_type & PERF_COUNTERSET_FLAG_MULTIPLE) != 0;
}

int tp_set_finish(struct tp_set *set)
{
	char buf[37];
	size_t i;

	if (!set->name) {
		set->name = strdup(perflib_guid_to_string(&set->guid, buf));
		if (!set->name)
			return -ENOMEM;
	}
	for (i = 0; i < set->nr_counters; i++) {
		if (set->counters[i].name)
			continue;
		if (asprintf(&set->counters[i].name, "%u", set->counters[i].id) < 0) {
			set->counters[i].name = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

void tp_set_free(struct tp_set *set)
{
	size_t i;

	for (i = 0; i < set->nr_counters; i++)
		free(set->counters[i].name);
	for (i = 0; i < set->nr_instances; i++)
		free(set->instances[i].name);
	free(set->counters);
	free(set->instances);
	free(set->name);
	memset(set, 0, sizeof(*set));
}

void tp_catalog_free(struct tp_catalog *cat)
{
	size_t i;

	for (i = 0; i < cat->nr_sets; i++)
		tp_set_free(&cat->sets[i]);
	free(cat->sets);
	memset(cat, 0, sizeof(*cat));
}

const struct tp_counter *tp_counter_find(const struct tp_set *set, uint32_t id)
{
	size_t i;

	for (i = 0; i < set->nr_counters; i++)
		if (set->counters[i].id == id)
			return &set->counters[i];
	return NULL;
}

/* the index of counter @id in @set, -1 */
static long counter_index(const struct tp_set *set, uint32_t id)
{
	size_t i;

	for (i = 0; id != PERFLIB_NO_ID && i < set->nr_counters; i++)
		if (set->counters[i].id == id)
			return (long)i;
	return -1;
}

uint32_t tp_counter_base(const struct tp_set *set, size_t idx)
{
	const struct tp_counter *c = &set->counters[idx];
	long base;

	/* the one rule (ctrtype.c): BaseCounterId, MultiId for multi types, the V1 neighbour */
	base = ctrtype_base_index(c->type, counter_index(set, c->base_id),
				  counter_index(set, c->multi_id), idx, set->nr_counters,
				  idx + 1 < set->nr_counters ? set->counters[idx + 1].type : 0);
	return base < 0 ? PERFLIB_NO_ID : set->counters[base].id;
}

bool tp_counter_selectable(const struct tp_counter *c)
{
	return ctrtype_displayable(c->type);
}

bool tp_counter_listed(const struct tp_counter *c)
{
	/* PERF_DISPLAY_NOSHOW types (PERF_AVERAGE_BULK) are hidden although they cook */
	return ctrtype_listed(c->type) && !(c->attrib & PERF_ATTRIB_NO_DISPLAYABLE);
}

long tp_set_find(const struct tp_catalog *cat, const char *name)
{
	size_t i;

	for (i = 0; i < cat->nr_sets; i++)
		if (tp_name_equal(cat->sets[i].name, name))
			return (long)i;
	return -1;
}

static int add_target(struct tp_target **targets, size_t *nr, size_t set, size_t counter,
		      size_t instance)
{
	struct tp_target *grown;

	/* grow in steps of 64: *nr is the only count the caller keeps */
	if (*nr % 64 == 0) {
		grown = realloc(*targets, (*nr + 64) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		*targets = grown;
	}
	(*targets)[(*nr)++] = (struct tp_target){set, counter, instance};
	return 0;
}

/* does instance @in match the instance part (@pattern, @index) of a path? */
static bool instance_matches(const struct tp_instance *in, const char *pattern, int index)
{
	if (!tp_match(pattern, in->name))
		return false;
	if (index == TP_INDEX_ANY)
		return true;
	if (index >= 0)
		return in->dup == (unsigned int)index;
	/* no "#n": a wildcard takes every duplicate, a plain name the first one */
	return tp_has_wildcard(pattern) || in->dup == 0;
}

/* does counter @c match the counter part @pattern of a path? */
static bool counter_matches(const struct tp_counter *c, const char *pattern)
{
	if (tp_has_wildcard(pattern))
		return tp_counter_listed(c) && tp_match(pattern, c->name);
	return tp_counter_selectable(c) && tp_name_equal(pattern, c->name);
}

/* the first counter of @set with the name @name, so duplicate names resolve once */
static bool first_of_name(const struct tp_set *set, size_t idx)
{
	size_t i;

	for (i = 0; i < idx; i++)
		if (tp_name_equal(set->counters[i].name, set->counters[idx].name))
			return false;
	return true;
}

int tp_resolve(const struct tp_catalog *cat, const struct tp_path *path, struct tp_target **targets,
	       size_t *nr)
{
	const struct tp_set *set;
	char *pattern = NULL;
	size_t c, i, before = *nr;
	long s;
	int err = 0;

	s = tp_set_find(cat, path->object);
	if (s < 0)
		return 0;
	set = &cat->sets[s];
	/* instances are required by multi-instance sets and refused by the others */
	if (tp_set_multi(set) != (path->instance != NULL))
		return 0;
	if (path->instance) {
		pattern = tp_path_instance_pattern(path);
		if (!pattern)
			return -ENOMEM;
	}
	for (c = 0; !err && c < set->nr_counters; c++) {
		if (!counter_matches(&set->counters[c], path->counter) || !first_of_name(set, c))
			continue;
		if (!pattern) {
			err = add_target(targets, nr, (size_t)s, c, TP_NO_INSTANCE);
			continue;
		}
		for (i = 0; !err && i < set->nr_instances; i++)
			if (instance_matches(&set->instances[i], pattern, path->index))
				err = add_target(targets, nr, (size_t)s, c, i);
	}
	free(pattern);
	if (err)
		return err;
	return (int)(*nr - before);
}

/* qsort context for the object order */
static const struct tp_catalog *sort_cat;

static int cmp_set_name(const void *a, const void *b)
{
	const struct tp_set *x = &sort_cat->sets[*(const size_t *)a];
	const struct tp_set *y = &sort_cat->sets[*(const size_t *)b];
	int c = strcasecmp(x->name, y->name);

	return c ? c : strcmp(x->name, y->name);
}

/* the lines of one object */
static int list_set(const struct tp_set *set, bool instances, FILE *out)
{
	const struct tp_instance *in;
	size_t c, i;

	for (c = 0; c < set->nr_counters; c++) {
		const struct tp_counter *ctr = &set->counters[c];

		if (!tp_counter_listed(ctr) || !first_of_name(set, c))
			continue;
		if (!tp_set_multi(set)) {
			fprintf(out, "\\%s\\%s\n", set->name, ctr->name);
		} else if (!instances) {
			fprintf(out, "\\%s(*)\\%s\n", set->name, ctr->name);
		} else {
			for (i = 0; i < set->nr_instances; i++) {
				in = &set->instances[i];
				if (in->dup)
					fprintf(out, "\\%s(%s#%u)\\%s\n", set->name, in->name,
						in->dup, ctr->name);
				else
					fprintf(out, "\\%s(%s)\\%s\n", set->name, in->name,
						ctr->name);
			}
		}
	}
	return ferror(out) ? -EIO : 0;
}

int tp_list(const struct tp_catalog *cat, const char *object, bool instances, FILE *out)
{
	size_t *order, i;
	int matched = 0, err = 0;

	if (!cat->nr_sets)
		return 0;
	order = calloc(cat->nr_sets, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < cat->nr_sets; i++)
		order[i] = i;
	sort_cat = cat;
	qsort(order, cat->nr_sets, sizeof(*order), cmp_set_name);
	sort_cat = NULL;
	for (i = 0; !err && i < cat->nr_sets; i++) {
		const struct tp_set *set = &cat->sets[order[i]];

		if (object && !tp_match(object, set->name))
			continue;
		matched++;
		err = list_set(set, instances, out);
	}
	free(order);
	return err ? err : matched;
}
