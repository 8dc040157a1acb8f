// SPDX-License-Identifier: MIT
/*
 * exp_sample.c - the exporter's snapshot from libpdh's registration model and decoded
 * samples (see exp_sample.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exp_sample.h"

/* ---- registration ----------------------------------------------------------------- */

int exp_set_from_reg(struct pdh_cat_set *reg, struct exp_set **ret_set)
{
	struct exp_set *set = calloc(1, sizeof(*set));
	size_t i;

	if (!set)
		return -ENOMEM;
	set->guid = reg->guid;
	set->instance_type = reg->instance_type;
	set->counters = calloc(reg->nr_counters ? reg->nr_counters : 1, sizeof(*set->counters));
	if (!set->counters) {
		free(set);
		return -ENOMEM;
	}
	set->nr_counters = reg->nr_counters;
	for (i = 0; i < reg->nr_counters; i++) {
		struct pdh_cat_counter *r = &reg->counters[i];

		set->counters[i] = (struct exp_counter){
			.id = r->id,
			.type = r->type,
			.attrib = r->attrib,
			.base_id = r->base_id,
			.time_id = r->time_id,
			.freq_id = r->freq_id,
			.multi_id = r->multi_id,
			.name = r->name,
			.base = -1, /* resolved by exp_prepare */
			.time = -1,
			.freq = -1,
		};
		r->name = NULL;
	}
	*ret_set = set;
	return 0;
}

/* pdh_perfbuf_strings_parse callback: the help of the first counter with this id without one */
static int help_string(void *ctx, uint32_t id, const void *text, size_t units)
{
	struct exp_set *set = ctx;
	size_t k;

	for (k = 0; k < set->nr_counters; k++) {
		if (set->counters[k].id == id && !set->counters[k].help) {
			set->counters[k].help = pdh_perfbuf_utf16_dup(text, units);
			return set->counters[k].help ? 0 : -ENOMEM;
		}
	}
	return 0;
}

int exp_help_strings(const void *buf, size_t len, struct exp_set *set)
{
	return pdh_perfbuf_strings_parse(buf, len, help_string, set);
}

/* ---- collection ------------------------------------------------------------------- */

/* the length of @name cut to fit EXP_NAME_MAX with its NUL, at a UTF-8 character boundary */
static size_t name_cut(const char *name, size_t len)
{
	if (len < EXP_NAME_MAX)
		return len;
	len = EXP_NAME_MAX - 1;
	while (len && ((unsigned char)name[len] & 0xC0) == 0x80)
		len--; /* name[len] would start the cut-off part: not a continuation byte */
	return len;
}

/* the items of block @b into @set, values through @cols (counter index per column, -1) */
static int fill_block(const struct pdh_perfbuf_data *d, const struct pdh_perfbuf_block *b,
		      const int *cols, struct exp_set *set)
{
	char cut[EXP_NAME_MAX];
	size_t i, inst;
	uint32_t k;
	int err;

	for (i = b->first; i < b->first + b->nr; i++) {
		const struct pdh_perfbuf_item *it = &d->items[i];
		const char *name = it->name == PDH_PERFBUF_NO_NAME ? NULL : d->names + it->name;

		if (name && name_cut(name, it->len) != it->len) {
			size_t n = name_cut(name, it->len);

			memcpy(cut, name, n);
			cut[n] = '\0';
			name = cut;
		}
		err = exp_set_add_instance(set, it->id, name, &inst);
		if (err)
			return err;
		for (k = 0; k < b->nr_cols; k++) {
			size_t at = pdh_perfbuf_value(b, i, k);

			if (cols[k] >= 0 && d->sizes[at])
				exp_set_value(set, inst, (size_t)cols[k], d->values[at]);
		}
	}
	return 0;
}

int exp_fill_block(const struct pdh_perfbuf_data *d, const struct pdh_perfbuf_block *b,
		   struct exp_set *set)
{
	int *cols;
	uint32_t k;
	int err;

	/*
	 * PERF_MULTIPLE_INSTANCES and PERF_SINGLE_COUNTER name their counter only in the query
	 * specification: the exporter asks for whole sets, never these
	 */
	if (b->type != PERF_MULTIPLE_COUNTERS && b->type != PERF_COUNTERSET)
		return 0;
	if (b->status != ERROR_SUCCESS)
		return 0;
	cols = malloc((b->nr_cols ? b->nr_cols : 1) * sizeof(*cols));
	if (!cols)
		return -ENOMEM;
	/* each column's counter looked up once: the first of the set with its id */
	for (k = 0; k < b->nr_cols; k++) {
		size_t c;

		for (c = 0; c < set->nr_counters && set->counters[c].id != d->ids[b->cols + k]; c++)
			;
		cols[k] = c < set->nr_counters ? (int)c : -1;
	}
	err = fill_block(d, b, cols, set);
	free(cols);
	return err;
}
