/* SPDX-License-Identifier: MIT */
/* list.c - typeperf's -q/-qx listing of a machine's catalog. See typeperf.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "names.h"
#include "typeperf.h"

/* qsort context for the object order */
static const struct pdh_catalog *sort_cat;

static int cmp_set_name(const void *a, const void *b)
{
	const struct pdh_cat_set *x = &sort_cat->sets[*(const size_t *)a];
	const struct pdh_cat_set *y = &sort_cat->sets[*(const size_t *)b];
	int c = strcasecmp(x->name, y->name);

	return c ? c : strcmp(x->name, y->name);
}

/* the lines of one object */
static int list_set(const struct pdh_cat_set *set, bool instances, FILE *out)
{
	const struct pdh_cat_instance *in;
	size_t c, i;

	for (c = 0; c < set->nr_counters; c++) {
		const struct pdh_cat_counter *ctr = &set->counters[c];

		if (!pdh_cat_counter_listed(ctr) || !pdh_cat_counter_first(set, c))
			continue;
		if (!pdh_cat_set_multi(set)) {
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

int tp_list(const struct pdh_catalog *cat, const char *object, bool instances, FILE *out)
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
		const struct pdh_cat_set *set = &cat->sets[order[i]];

		if (object && !pdh_match(object, set->name))
			continue;
		matched++;
		err = list_set(set, instances, out);
	}
	free(order);
	return err ? err : matched;
}
