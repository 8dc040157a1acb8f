/* SPDX-License-Identifier: MIT */
/*
 * decode.c - typeperf's structures built from the consumer-API buffers that perfbuf.c
 * reads and checks (see decode.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "names.h"

int pdh_decode_reg(const void *buf, size_t size, struct pdh_cat_set *set)
{
	struct pdh_perfbuf_counter c;
	struct pdh_cat_counter *ctrs;
	struct pdh_perfbuf_reg reg;
	uint32_t i;
	int err;

	err = pdh_perfbuf_reg_parse(buf, size, &reg);
	if (err)
		return err;
	ctrs = calloc(reg.nr_counters ? reg.nr_counters : 1, sizeof(*ctrs));
	if (!ctrs)
		return -ENOMEM;
	for (i = 0; i < reg.nr_counters; i++) {
		pdh_perfbuf_reg_counter(&reg, i, &c);
		ctrs[i] = (struct pdh_cat_counter){.id = c.id,
						   .type = c.type,
						   .attrib = c.attrib,
						   .scale = c.scale,
						   .detail_level = c.detail_level,
						   .base_id = c.base_id,
						   .time_id = c.time_id,
						   .freq_id = c.freq_id,
						   .multi_id = c.multi_id};
	}
	set->guid = reg.guid;
	set->instance_type = reg.instance_type;
	set->counters = ctrs;
	set->nr_counters = reg.nr_counters;
	return 0;
}

/* pdh_perfbuf_strings_parse callback: name the first unnamed counter with this id */
static int name_counter(void *ctx, uint32_t id, const void *text, size_t units)
{
	struct pdh_cat_set *set = ctx;
	size_t k;

	for (k = 0; k < set->nr_counters; k++) {
		if (set->counters[k].id == id && !set->counters[k].name) {
			set->counters[k].name = pdh_perfbuf_utf16_dup(text, units);
			return set->counters[k].name ? 0 : -ENOMEM;
		}
	}
	return 0; /* unknown id or a second string for one id */
}

int pdh_decode_names(const void *buf, size_t size, struct pdh_cat_set *set)
{
	return pdh_perfbuf_strings_parse(buf, size, name_counter, set);
}

/* the duplicate numbers (pdh_dup_indexes) of @nr names, malloc'd; NULL on ENOMEM */
static unsigned int *dup_numbers(const char *const *names, size_t nr)
{
	unsigned int *num = calloc(nr ? nr : 1, sizeof(*num));

	if (num && pdh_dup_indexes(names, nr, num)) {
		free(num);
		return NULL;
	}
	return num;
}

/* number the duplicate names of @nr items; an item without a name counts as "" */
static int number_items(struct pdh_dec_item *items, size_t nr)
{
	unsigned int *num = NULL;
	const char **names;
	size_t i;

	if (nr < 2)
		return 0; /* a lone item keeps number 0 */
	names = calloc(nr, sizeof(*names));
	if (names) {
		for (i = 0; i < nr; i++)
			names[i] = items[i].name ? items[i].name : "";
		num = dup_numbers(names, nr);
		free(names);
	}
	if (!num)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		items[i].dup = num[i];
	free(num);
	return 0;
}

/* pdh_decode_instances's growing list */
struct inst_list {
	struct pdh_cat_instance *inst;
	size_t nr, cap;
};

/* pdh_perfbuf_instances_parse callback: append one instance */
static int add_instance(void *ctx, uint32_t id, const void *name, size_t units)
{
	struct inst_list *l = ctx;
	struct pdh_cat_instance *grown;

	if (l->nr == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		grown = realloc(l->inst, l->cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		l->inst = grown;
	}
	l->inst[l->nr] =
		(struct pdh_cat_instance){.id = id, .name = pdh_perfbuf_utf16_dup(name, units)};
	if (!l->inst[l->nr].name)
		return -ENOMEM;
	l->nr++;
	return 0;
}

int pdh_decode_instances(const void *buf, size_t size, struct pdh_cat_instance **ret,
			 size_t *ret_nr)
{
	struct inst_list l = {0};
	unsigned int *num = NULL;
	const char **names;
	size_t i;
	int err;

	err = pdh_perfbuf_instances_parse(buf, size, add_instance, &l);
	if (!err && l.nr > 1) {
		names = calloc(l.nr, sizeof(*names));
		if (names) {
			for (i = 0; i < l.nr; i++)
				names[i] = l.inst[i].name;
			num = dup_numbers(names, l.nr);
			free(names);
		}
		for (i = 0; num && i < l.nr; i++)
			l.inst[i].dup = num[i];
		err = num ? 0 : -ENOMEM;
		free(num);
	}
	if (err) {
		for (i = 0; i < l.nr; i++)
			free(l.inst[i].name);
		free(l.inst);
		return err;
	}
	*ret = l.inst;
	*ret_nr = l.nr;
	return 0;
}

/* ---- PerfQueryCounterData ------------------------------------------------------------ */

/* a pdh_dec_data under construction by the pdh_perfbuf_data_parse callbacks */
struct builder {
	struct pdh_dec_data *d;
	size_t item_cap, value_cap;
	struct pdh_dec_block *block; /* the block being read */
	size_t values0;		     /* d->nr_values when it started */
};

static int build_begin(void *ctx, const struct pdh_perfbuf_data_header *hdr)
{
	struct builder *b = ctx;
	struct pdh_dec_data *d = b->d;

	d->time = hdr->time;
	d->time_100ns = hdr->time_100ns;
	d->freq = hdr->freq;
	d->blocks = calloc(hdr->nr_blocks ? hdr->nr_blocks : 1, sizeof(*d->blocks));
	if (!d->blocks)
		return -ENOMEM;
	d->nr_blocks = hdr->nr_blocks;
	return 0;
}

static bool build_block(void *ctx, uint32_t index, uint32_t status, uint32_t type)
{
	struct builder *b = ctx;

	/* perfbuf reports every Index below hdr->nr_blocks once, in order */
	b->block = &b->d->blocks[index];
	*b->block = (struct pdh_dec_block){.status = status, .type = type, .first = b->d->nr_items};
	b->values0 = b->d->nr_values;
	return true; /* typeperf reads every type */
}

static int build_item(void *ctx, uint32_t id, const void *name, size_t units)
{
	struct builder *b = ctx;
	struct pdh_dec_data *d = b->d;
	struct pdh_dec_item *grown, *item;

	if (d->nr_items == b->item_cap) {
		b->item_cap = b->item_cap ? 2 * b->item_cap : 16;
		grown = realloc(d->items, b->item_cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		d->items = grown;
	}
	item = &d->items[d->nr_items++];
	*item = (struct pdh_dec_item){.instance_id = id, .first = d->nr_values};
	if (name) {
		item->name = pdh_perfbuf_utf16_dup(name, units);
		if (!item->name)
			return -ENOMEM;
		item->len = strlen(item->name);
	}
	return 0;
}

static int build_value(void *ctx, uint32_t id, uint32_t size, uint64_t value)
{
	struct builder *b = ctx;
	struct pdh_dec_data *d = b->d;
	struct pdh_dec_value *grown;

	if (d->nr_values == b->value_cap) {
		b->value_cap = b->value_cap ? 2 * b->value_cap : 64;
		grown = realloc(d->values, b->value_cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		d->values = grown;
	}
	d->values[d->nr_values++] =
		(struct pdh_dec_value){.counter_id = id, .size = size, .value = value};
	d->items[d->nr_items - 1].nr++; /* perfbuf reports an item before its values */
	return 0;
}

static int build_block_end(void *ctx, bool malformed)
{
	struct builder *b = ctx;
	struct pdh_dec_block *blk = b->block;
	struct pdh_dec_data *d = b->d;

	if (malformed) {
		/* keep the block, unusable: drop what it appended */
		while (d->nr_items > blk->first)
			free(d->items[--d->nr_items].name);
		d->nr_values = b->values0;
		blk->status = ERROR_INVALID_DATA;
	}
	blk->nr = d->nr_items - blk->first;
	return number_items(d->items + blk->first, blk->nr);
}

static const struct pdh_perfbuf_data_ops build_ops = {
	.begin = build_begin,
	.block = build_block,
	.item = build_item,
	.value = build_value,
	.block_end = build_block_end,
};

int pdh_decode_data(const void *buf, size_t size, const uint32_t *spec_ids, size_t nr_specs,
		    struct pdh_dec_data *ret)
{
	struct pdh_dec_data d = {0};
	struct builder b = {.d = &d};
	int err;

	err = pdh_perfbuf_data_parse(buf, size, spec_ids, nr_specs, &build_ops, &b);
	if (err) {
		pdh_dec_data_free(&d);
		return err;
	}
	*ret = d;
	return 0;
}

void pdh_dec_data_free(struct pdh_dec_data *data)
{
	size_t i;

	for (i = 0; i < data->nr_items; i++)
		free(data->items[i].name);
	free(data->items);
	free(data->values);
	free(data->blocks);
	memset(data, 0, sizeof(*data));
}

const struct pdh_dec_item *pdh_dec_data_item(const struct pdh_dec_data *data, size_t block,
					     const char *name, unsigned int dup)
{
	const struct pdh_dec_block *b;
	size_t i;

	if (block >= data->nr_blocks)
		return NULL;
	b = &data->blocks[block];
	if (b->status != ERROR_SUCCESS || !b->nr)
		return NULL;
	if (!name)
		return &data->items[b->first];
	for (i = b->first; i < b->first + b->nr; i++) {
		const struct pdh_dec_item *it = &data->items[i];

		if (it->name && it->dup == dup && pdh_name_equal(it->name, name))
			return it;
	}
	return NULL;
}

bool pdh_dec_item_value(const struct pdh_dec_data *data, const struct pdh_dec_item *item,
			uint32_t id, uint64_t *ret)
{
	size_t i;

	for (i = item->first; i < item->first + item->nr; i++) {
		if (data->values[i].counter_id == id && data->values[i].size) {
			*ret = data->values[i].value;
			return true;
		}
	}
	return false;
}
