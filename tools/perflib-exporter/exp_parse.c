/* SPDX-License-Identifier: MIT */
/*
 * exp_parse.c - exp_set snapshots built from the consumer API's registration and data
 * buffers that perfbuf.c reads and checks (see exp_parse.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exp_parse.h"

/* ---- registration ----------------------------------------------------------------- */

int exp_parse_reg(const void *buf, size_t len, struct exp_set **ret_set)
{
	struct perfbuf_counter r;
	struct perfbuf_reg reg;
	struct exp_set *set;
	uint32_t i;
	int err;

	err = perfbuf_reg_parse(buf, len, &reg);
	if (err)
		return err;
	set = calloc(1, sizeof(*set));
	if (!set)
		return -ENOMEM;
	set->guid = reg.guid;
	set->instance_type = reg.instance_type;
	set->counters = calloc(reg.nr_counters ? reg.nr_counters : 1, sizeof(*set->counters));
	if (!set->counters) {
		exp_set_free(set);
		return -ENOMEM;
	}
	set->nr_counters = reg.nr_counters;
	for (i = 0; i < reg.nr_counters; i++) {
		struct exp_counter *c = &set->counters[i];

		perfbuf_reg_counter(&reg, i, &r);
		c->id = r.id;
		c->type = r.type;
		c->attrib = r.attrib;
		c->base_id = r.base_id;
		c->time_id = r.time_id;
		c->freq_id = r.freq_id;
		c->multi_id = r.multi_id;
		c->base = c->time = c->freq = -1; /* resolved by exp_prepare */
	}
	*ret_set = set;
	return 0;
}

/* exp_parse_strings' target */
struct strings {
	struct exp_set *set;
	bool help; /* help strings rather than names */
};

/* perfbuf_strings_parse callback: the string of the first counter with this id */
static int set_string(void *ctx, uint32_t id, const void *text, size_t units)
{
	const struct strings *s = ctx;
	struct exp_set *set = s->set;
	char *str, **slot;
	size_t c;

	for (c = 0; c < set->nr_counters && set->counters[c].id != id; c++)
		;
	if (c == set->nr_counters)
		return 0;
	str = perfbuf_utf16_dup(text, units);
	if (!str)
		return -ENOMEM;
	slot = s->help ? &set->counters[c].help : &set->counters[c].name;
	free(*slot);
	*slot = str;
	return 0;
}

int exp_parse_strings(const void *buf, size_t len, struct exp_set *set, bool help)
{
	struct strings s = {.set = set, .help = help};

	return perfbuf_strings_parse(buf, len, set_string, &s);
}

/* ---- collection ------------------------------------------------------------------- */

/* where the values at one position of a block's PERF_MULTI_COUNTERS list go */
struct slot {
	uint32_t id; /* the counter id at this position */
	int index;   /* its index in set->counters, -1 when the set has no such counter */
};

/* one exp_parse_data walk */
struct collection {
	struct exp_set *const *by_index;
	size_t nr_index;
	int64_t freq;	     /* PerfFreq */
	size_t bad;	     /* malformed blocks */
	struct exp_set *set; /* the set of the block being read */
	size_t before;	     /* its nr_instances when the block started */
	size_t inst;	     /* the instance values go to */
	size_t pos;	     /* position of the next value within that instance */
	struct slot *slots;  /* by position, for the block being read */
	size_t nr_slots, cap_slots;
};

static int collect_begin(void *ctx, const struct perfbuf_data_header *hdr)
{
	struct collection *c = ctx;

	c->freq = hdr->freq;
	return 0;
}

static bool collect_block(void *ctx, uint32_t index, uint32_t status, uint32_t type)
{
	struct collection *c = ctx;

	c->set = index < c->nr_index ? c->by_index[index] : NULL;
	/* PERF_MULTIPLE_INSTANCES and PERF_SINGLE_COUNTER name their counter only in the
	 * query specification: the exporter asks for whole sets, never these */
	if (!c->set || status != ERROR_SUCCESS ||
	    (type != PERF_MULTIPLE_COUNTERS && type != PERF_COUNTERSET))
		return false;
	c->before = c->set->nr_instances;
	c->nr_slots = 0;
	return true;
}

static int collect_item(void *ctx, uint32_t id, const void *name, size_t units)
{
	struct collection *c = ctx;
	char utf8[EXP_NAME_MAX];

	c->pos = 0;
	if (!name)
		return exp_set_add_instance(c->set, id, NULL, &c->inst);
	perfbuf_utf16_to_utf8(name, units, utf8, sizeof(utf8));
	return exp_set_add_instance(c->set, id, utf8, &c->inst);
}

/* the slot of position @pos for counter @id: looked up in the set, appended or replaced */
static int find_slot(struct collection *c, size_t pos, uint32_t id)
{
	const struct exp_set *set = c->set;
	struct slot *grown;
	size_t k;

	if (pos == c->cap_slots) {
		c->cap_slots = c->cap_slots ? 2 * c->cap_slots : 16;
		grown = realloc(c->slots, c->cap_slots * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		c->slots = grown;
	}
	for (k = 0; k < set->nr_counters && set->counters[k].id != id; k++)
		;
	c->slots[pos] = (struct slot){.id = id, .index = k < set->nr_counters ? (int)k : -1};
	if (pos == c->nr_slots)
		c->nr_slots++;
	return 0;
}

static int collect_value(void *ctx, uint32_t id, uint32_t size, uint64_t value)
{
	struct collection *c = ctx;
	size_t pos = c->pos++;
	int err;

	/* the instances of a block share one id list: each id is looked up once */
	if (pos == c->nr_slots || c->slots[pos].id != id) {
		err = find_slot(c, pos, id);
		if (err)
			return err;
	}
	if (size && c->slots[pos].index >= 0)
		exp_set_value(c->set, c->inst, (size_t)c->slots[pos].index, value);
	return 0;
}

static int collect_block_end(void *ctx, bool malformed)
{
	struct collection *c = ctx;

	if (malformed) {
		/* a half-read block would show some instances only: show none */
		c->set->nr_instances = c->before;
		c->bad++;
	}
	return 0;
}

static const struct perfbuf_data_ops collect_ops = {
	.begin = collect_begin,
	.block = collect_block,
	.item = collect_item,
	.value = collect_value,
	.block_end = collect_block_end,
};

int exp_parse_data(const void *buf, size_t len, struct exp_set *const *by_index, size_t nr_index,
		   int64_t *ret_freq, size_t *ret_bad)
{
	struct collection c = {.by_index = by_index, .nr_index = nr_index};
	int err;

	err = perfbuf_data_parse(buf, len, NULL, 0, &collect_ops, &c);
	free(c.slots);
	if (err)
		return err;
	*ret_freq = c.freq;
	*ret_bad = c.bad;
	return 0;
}
