/* SPDX-License-Identifier: MIT */
/*
 * catalog.c - counter-set catalog of libpdh: hidden-counter rules, path resolution with
 * wildcards and duplicate-instance indexes, which counter of a name paths and lists take.
 * See catalog.h for the rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "perflib-linux.h"
#include "ctrtype.h"
#include "catalog.h"

bool pdh_cat_set_multi(const struct pdh_cat_set *set)
{
	return (set->instance_type & PERF_COUNTERSET_FLAG_MULTIPLE) != 0;
}

int pdh_cat_set_finish(struct pdh_cat_set *set)
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

void pdh_cat_set_free(struct pdh_cat_set *set)
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

void pdh_catalog_free(struct pdh_catalog *cat)
{
	size_t i;

	for (i = 0; i < cat->nr_sets; i++)
		pdh_cat_set_free(&cat->sets[i]);
	free(cat->sets);
	memset(cat, 0, sizeof(*cat));
}

const struct pdh_cat_counter *pdh_cat_counter_find(const struct pdh_cat_set *set, uint32_t id)
{
	size_t i;

	for (i = 0; i < set->nr_counters; i++)
		if (set->counters[i].id == id)
			return &set->counters[i];
	return NULL;
}

/* the index of counter @id in @set, -1 */
static long counter_index(const struct pdh_cat_set *set, uint32_t id)
{
	size_t i;

	for (i = 0; id != PERFLIB_NO_ID && i < set->nr_counters; i++)
		if (set->counters[i].id == id)
			return (long)i;
	return -1;
}

uint32_t pdh_cat_counter_base(const struct pdh_cat_set *set, size_t idx)
{
	const struct pdh_cat_counter *c = &set->counters[idx];
	long base;

	/* the one rule (ctrtype.c): BaseCounterId, MultiId for multi types, the V1 neighbour */
	base = ctrtype_base_index(c->type, counter_index(set, c->base_id),
				  counter_index(set, c->multi_id), idx, set->nr_counters,
				  idx + 1 < set->nr_counters ? set->counters[idx + 1].type : 0);
	return base < 0 ? PERFLIB_NO_ID : set->counters[base].id;
}

bool pdh_cat_counter_selectable(const struct pdh_cat_counter *c)
{
	return ctrtype_displayable(c->type);
}

bool pdh_cat_counter_listed(const struct pdh_cat_counter *c)
{
	/* PERF_DISPLAY_NOSHOW types (PERF_AVERAGE_BULK) are hidden although they cook */
	return ctrtype_listed(c->type) && !(c->attrib & PERF_ATTRIB_NO_DISPLAYABLE);
}

long pdh_cat_set_find(const struct pdh_catalog *cat, const char *name)
{
	size_t i;

	for (i = 0; i < cat->nr_sets; i++)
		if (pdh_name_equal(cat->sets[i].name, name))
			return (long)i;
	return -1;
}

static int add_target(struct pdh_target **targets, size_t *nr, size_t set, size_t counter,
		      size_t instance)
{
	struct pdh_target *grown;

	/* grow in steps of 64: *nr is the only count the caller keeps */
	if (*nr % 64 == 0) {
		grown = realloc(*targets, (*nr + 64) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		*targets = grown;
	}
	(*targets)[(*nr)++] = (struct pdh_target){set, counter, instance};
	return 0;
}

/* does instance @in match the instance part (@pattern, @index) of a path? */
static bool instance_matches(const struct pdh_cat_instance *in, const char *pattern, int index)
{
	if (!pdh_match(pattern, in->name))
		return false;
	if (index == PDH_INDEX_ANY)
		return true;
	if (index >= 0)
		return in->dup == (unsigned int)index;
	/* no "#n": a wildcard takes every duplicate, a plain name the first one */
	return pdh_has_wildcard(pattern) || in->dup == 0;
}

/* does counter @c match the counter part @pattern of a path? */
static bool counter_matches(const struct pdh_cat_counter *c, const char *pattern)
{
	if (pdh_has_wildcard(pattern))
		return pdh_cat_counter_listed(c) && pdh_match(pattern, c->name);
	return pdh_cat_counter_selectable(c) && pdh_name_equal(pattern, c->name);
}

/* the first counter of @set with the name @name, so duplicate names resolve once */
bool pdh_cat_counter_first(const struct pdh_cat_set *set, size_t idx)
{
	size_t i;

	for (i = 0; i < idx; i++)
		if (pdh_name_equal(set->counters[i].name, set->counters[idx].name))
			return false;
	return true;
}

int pdh_cat_resolve(const struct pdh_catalog *cat, const struct pdh_cpath *path,
		    struct pdh_target **targets, size_t *nr)
{
	const struct pdh_cat_set *set;
	char *pattern = NULL;
	size_t c, i, before = *nr;
	long s;
	int err = 0;

	s = pdh_cat_set_find(cat, path->object);
	if (s < 0)
		return 0;
	set = &cat->sets[s];
	/* instances are required by multi-instance sets and refused by the others */
	if (pdh_cat_set_multi(set) != (path->instance != NULL))
		return 0;
	if (path->instance) {
		pattern = pdh_cpath_instance_pattern(path);
		if (!pattern)
			return -ENOMEM;
	}
	for (c = 0; !err && c < set->nr_counters; c++) {
		if (!counter_matches(&set->counters[c], path->counter) ||
		    !pdh_cat_counter_first(set, c))
			continue;
		if (!pattern) {
			err = add_target(targets, nr, (size_t)s, c, PDH_NO_INSTANCE);
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
