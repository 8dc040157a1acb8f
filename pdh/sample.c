/* SPDX-License-Identifier: MIT */
/*
 * sample.c - a real-time query's samples and its counters' views of them (pdh.md 6.4, 6.5).
 *
 * A collection reads the perflib query once into columns (pdh_perfcols_read: per item its
 * values in one array, names in one arena), numbers duplicate instance names and
 * pairs each item with the same instance in the sample before (prev_map). A counter keeps
 * no copy of anything: its sample is the list of items its instance part selects and the
 * columns of its value and companions; raw values, rate statuses and formatted values are
 * computed from the two decoded samples when read. Log replay (replay.c) keeps its records
 * in pdh_sample; the accessors at the end serve both, and the arrays of array.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrtype.h"
#include "pdh_internal.h"

void pdh_data_free(struct pdh_query *q)
{
	size_t i;

	for (i = 0; i < 2; i++) {
		pdh_perfbuf_data_release(&q->dbuf[i].d);
		free(q->dbuf[i].sets);
		free(q->dbuf[i].in_order);
		free(q->dbuf[i].pair_first);
		free(q->dbuf[i].wide);
	}
	free(q->prev_map);
	pdh_perfcols_free(&q->cols);
	free(q->names);
	free(q->dups);
}

/* ---- numbering and pairing ------------------------------------------------------------ */

/*
 * the same instance in two samples: name, duplicate number and InstanceId (a name that moved
 * to another instance, as "burn#1" becoming "burn" when the first exits, pairs with nothing:
 * a rate across two instances is no value; Windows pairs by name alone, pdh.md 6.6)
 */
static bool item_same(const struct pdh_perfbuf_data *a, const struct pdh_perfbuf_item *x,
		      const struct pdh_perfbuf_data *b, const struct pdh_perfbuf_item *y)
{
	const char *nx = pdh_item_name(a, x), *ny = pdh_item_name(b, y);

	if (x->dup != y->dup || x->id != y->id)
		return false;
	if (!nx || !ny)
		return !nx == !ny;
	return (x->len == y->len && !memcmp(nx, ny, x->len)) || pdh_name_equal(nx, ny);
}

static uint64_t item_hash(const struct pdh_perfbuf_data *d, const struct pdh_perfbuf_item *it)
{
	const char *n = pdh_item_name(d, it);

	return (n ? pdh_name_hash(n) : 0) ^ (it->dup * 0x9E3779B97F4A7C15ull);
}

/* the names and InstanceIds of block @b the same, in the same order, as those of @ob? */
static bool same_names(const struct pdh_perfbuf_data *d, const struct pdh_perfbuf_block *b,
		       const struct pdh_perfbuf_data *od, const struct pdh_perfbuf_block *ob)
{
	size_t i;

	if (b->nr != ob->nr || b->name_bytes != ob->name_bytes)
		return false;
	for (i = 0; i < b->nr; i++) {
		const struct pdh_perfbuf_item *x = &d->items[b->first + i];
		const struct pdh_perfbuf_item *y = &od->items[ob->first + i];

		if (x->len != y->len || x->id != y->id ||
		    (x->name == PDH_PERFBUF_NO_NAME) != (y->name == PDH_PERFBUF_NO_NAME) ||
		    (x->name != PDH_PERFBUF_NO_NAME &&
		     memcmp(d->names + x->name, od->names + y->name, x->len)))
			return false;
	}
	return true;
}

/* number the duplicate names of block @b (Windows' way: pdh_dup_indexes) */
static int number_block(struct pdh_query *q, struct pdh_perfbuf_data *d,
			const struct pdh_perfbuf_block *b)
{
	size_t i;

	if (b->nr < 2)
		return 0; /* a lone item keeps number 0 */
	if (q->names_cap < b->nr) {
		const char **names = realloc(q->names, b->nr * sizeof(*names));
		unsigned int *dups;

		if (!names)
			return -ENOMEM;
		q->names = names;
		dups = realloc(q->dups, b->nr * sizeof(*dups));
		if (!dups)
			return -ENOMEM;
		q->dups = dups;
		q->names_cap = b->nr;
	}
	for (i = 0; i < b->nr; i++) {
		const char *n = pdh_item_name(d, &d->items[b->first + i]);

		q->names[i] = n ? n : ""; /* an item without a name counts as "" */
	}
	if (pdh_dup_indexes(q->names, b->nr, q->dups))
		return -ENOMEM;
	for (i = 0; i < b->nr; i++)
		d->items[b->first + i].dup = q->dups[i];
	return 0;
}

/*
 * pair the items of block @b of @d with those of block @ob of @od (the same instance:
 * name, duplicate number and InstanceId, item_same): the next one in order first, then by a hash of the old
 * block, built when the order first fails (instances came or went)
 */
static int map_block(const struct pdh_perfbuf_data *d, const struct pdh_perfbuf_block *b,
		     const struct pdh_perfbuf_data *od, const struct pdh_perfbuf_block *ob,
		     size_t *map)
{
	size_t i, j, cursor = ob->first, cap = 16, *table = NULL;

	while (cap < 2 * ob->nr)
		cap *= 2;
	for (i = b->first; i < b->first + b->nr; i++) {
		const struct pdh_perfbuf_item *it = &d->items[i];

		if (cursor < ob->first + ob->nr && item_same(od, &od->items[cursor], d, it)) {
			map[i] = cursor++;
			continue;
		}
		if (!table) {
			table = malloc(cap * sizeof(*table));
			if (!table)
				return -ENOMEM;
			memset(table, 0xff, cap * sizeof(*table));
			for (j = ob->first; j < ob->first + ob->nr; j++) {
				size_t h = item_hash(od, &od->items[j]) & (cap - 1);

				while (table[h] != SIZE_MAX)
					h = (h + 1) & (cap - 1);
				table[h] = j;
			}
		}
		for (j = item_hash(d, it) & (cap - 1); table[j] != SIZE_MAX;
		     j = (j + 1) & (cap - 1)) {
			if (item_same(od, &od->items[table[j]], d, it)) {
				map[i] = table[j];
				cursor = table[j] + 1;
				break;
			}
		}
	}
	free(table);
	return 0;
}

/* the block of counter set @guid in @pd, SIZE_MAX */
static size_t block_of(const struct pdh_data *pd, const GUID *guid)
{
	size_t k;

	for (k = 0; k < pd->d.nr_blocks; k++)
		if (!memcmp(&pd->sets[k], guid, sizeof(GUID)))
			return k;
	return SIZE_MAX;
}

/*
 * number the names of @pd and pair its items with @old's (blocks matched by counter set):
 * a block whose names are those of the sample before, in order (the steady state), takes
 * its numbers and pairs item by item
 */
static int number_and_map(struct pdh_query *q, struct pdh_data *pd, const struct pdh_data *old)
{
	struct pdh_perfbuf_data *d = &pd->d;
	size_t k, i, ok;
	size_t *map;
	int err;

	if (q->prev_cap < d->nr_items) {
		map = realloc(q->prev_map, d->nr_items * sizeof(*map));
		if (!map)
			return -ENOMEM;
		q->prev_map = map;
		q->prev_cap = d->nr_items;
	}
	map = q->prev_map;
	if (pd->cap_in_order < d->nr_blocks) {
		bool *grown = realloc(pd->in_order, d->nr_blocks * sizeof(*grown));
		size_t *first;

		if (!grown)
			return -ENOMEM;
		pd->in_order = grown;
		first = realloc(pd->pair_first, d->nr_blocks * sizeof(*first));
		if (!first)
			return -ENOMEM;
		pd->pair_first = first;
		pd->cap_in_order = d->nr_blocks;
	}
	for (k = 0; k < d->nr_blocks; k++) {
		const struct pdh_perfbuf_block *b = &d->blocks[k], *ob = NULL;

		pd->in_order[k] = false;
		ok = old->gen ? block_of(old, &pd->sets[k]) : SIZE_MAX;
		if (ok != SIZE_MAX && !old->d.blocks[ok].status)
			ob = &old->d.blocks[ok];
		if (b->status)
			continue;
		/* the read took the items of the sample before (the steady state) */
		pd->in_order[k] = ob && ((b->same && ok == k) || same_names(d, b, &old->d, ob));
		if (pd->in_order[k]) {
			/* paired by place (pdh_prev_item), not through the map */
			pd->pair_first[k] = ob->first;
			for (i = 0; !(b->same && ok == k) && i < b->nr; i++)
				d->items[b->first + i].dup = old->d.items[ob->first + i].dup;
			continue;
		}
		memset(map + b->first, 0xff, b->nr * sizeof(*map));
		err = number_block(q, d, b);
		if (!err && ob)
			err = map_block(d, b, &old->d, ob, map);
		if (err)
			return err;
	}
	return 0;
}

/* ---- counters ------------------------------------------------------------------------ */

/* the first column of block @b of @d that carries counter @id, PDH_NO_COL */
static uint32_t col_of(const struct pdh_perfbuf_data *d, const struct pdh_perfbuf_block *b,
		       uint32_t id)
{
	uint32_t k;

	if (id == PERFLIB_NO_ID)
		return PDH_NO_COL;
	for (k = 0; k < b->nr_cols; k++)
		if (d->ids[b->cols + k] == id)
			return k;
	return PDH_NO_COL;
}

/* does item @it of @d match the instance part of @c? */
static bool item_matches(const struct pdh_counter *c, const struct pdh_perfbuf_data *d,
			 const struct pdh_perfbuf_item *it)
{
	const char *name = pdh_item_name(d, it);

	if (!name || !pdh_match(c->pattern, name))
		return false;
	if (c->path.index >= 0)
		return it->dup == (unsigned int)c->path.index;
	/* "\Obj(name)\C" is the first of that name; "(*)" and "#*" take every one */
	return c->wildcard || it->dup == 0;
}

static bool value_at(const struct pdh_perfbuf_data *d, const struct pdh_perfbuf_block *b,
		     size_t item, uint32_t col, uint64_t *ret)
{
	size_t at;

	if (col == PDH_NO_COL)
		return false;
	at = pdh_perfbuf_value(b, item, col);
	if (!d->sizes[at])
		return false;
	*ret = d->values[at];
	return true;
}

/*
 * the raw sample (pdh.md 6.5) of item @item of @pd read through @cols, CStatus NEW_DATA or
 * INVALID_DATA (a registered companion counter must be there: a missing one spoils it);
 * the time base it implies in *@tb
 */
static void raw_of(const struct pdh_counter *c, const struct pdh_data *pd,
		   const struct pdh_cols *cols, size_t item, PDH_RAW_COUNTER *r, int64_t *tb)
{
	const struct pdh_perfbuf_data *d = &pd->d;
	const struct pdh_perfbuf_block *b = &d->blocks[cols->block];
	uint64_t v = 0, base = 0, multi = 0, otime = (uint64_t)d->hdr.time;
	uint64_t ofreq = (uint64_t)d->hdr.freq;
	uint32_t type = c->ctr.type;
	bool ok;

	memset(r, 0, sizeof(*r));
	r->TimeStamp.dwLowDateTime = (DWORD)pd->stamp;
	r->TimeStamp.dwHighDateTime = (DWORD)((uint64_t)pd->stamp >> 32);
	r->MultiCount = 1;
	ok = value_at(d, b, item, cols->v, &v);
	if (c->base_id != PERFLIB_NO_ID)
		ok = ok && value_at(d, b, item, cols->base, &base);
	if (c->ctr.multi_id != PERFLIB_NO_ID)
		ok = ok && value_at(d, b, item, cols->multi, &multi);
	else
		multi = base; /* multi count from the base (PERF_COUNTER_MULTI_BASE) */
	if (c->ctr.time_id != PERFLIB_NO_ID)
		ok = ok && value_at(d, b, item, cols->time, &otime);
	else if (type == PERF_PRECISION_OBJECT_TIMER)
		otime = base; /* its object clock is its base (pdh_second_of: SECOND_OBJECT) */
	if (c->ctr.freq_id != PERFLIB_NO_ID)
		ok = ok && value_at(d, b, item, cols->freq, &ofreq);
	switch ((enum ctrtype_timebase)c->tb) {
	case CTRTYPE_TB_100NS:
		*tb = 10000000;
		break;
	case CTRTYPE_TB_OBJECT:
		*tb = (int64_t)ofreq;
		break;
	case CTRTYPE_TB_TICK:
		*tb = d->hdr.freq;
		break;
	default:
		*tb = 0;
		break;
	}
	if (!ok) {
		r->CStatus = (DWORD)PDH_CSTATUS_INVALID_DATA;
		return;
	}
	r->CStatus = (DWORD)PDH_CSTATUS_NEW_DATA;
	r->FirstValue = (LONGLONG)v;
	/* the second value by the one rule (pdh_second_of), looked up when the counter was added */
	switch ((enum second)c->second) {
	case SECOND_TIME:
		r->SecondValue = d->hdr.time;
		break;
	case SECOND_100NS:
		r->SecondValue = d->hdr.time_100ns;
		break;
	case SECOND_OBJECT:
		r->SecondValue = (LONGLONG)otime;
		break;
	case SECOND_BASE:
		r->SecondValue = (LONGLONG)base;
		break;
	default:
		break;
	}
	if (type & PERF_MULTI_COUNTER)
		r->MultiCount = (DWORD)multi;
}

static void cols_of(const struct pdh_counter *c, const struct pdh_data *pd, size_t block,
		    struct pdh_cols *ret)
{
	const struct pdh_perfbuf_block *b = &pd->d.blocks[block];

	ret->block = block;
	ret->v = col_of(&pd->d, b, c->ctr.id);
	ret->base = col_of(&pd->d, b, c->base_id);
	ret->multi = col_of(&pd->d, b, c->ctr.multi_id);
	ret->time = col_of(&pd->d, b, c->ctr.time_id);
	ret->freq = col_of(&pd->d, b, c->ctr.freq_id);
}

/* the new sample of counter @c from the query's newest data */
static int counter_sample(struct pdh_query *q, struct pdh_counter *c)
{
	const struct pdh_data *pd = q->data;
	const struct pdh_perfbuf_block *b;
	size_t block = block_of(pd, &c->guid), i;
	PDH_RAW_COUNTER r;

	/* the sample before is kept if it was this counter's last one */
	c->old_gen = c->gen == q->data_old->gen ? c->gen : 0;
	c->old_cols = c->cols;
	c->gen = q->gen;
	c->valid = true;
	c->changed = true;
	c->nr = 0;
	c->sel_all = false;
	c->cols.block = SIZE_MAX;
	if (block == SIZE_MAX) {
		c->status = (DWORD)PDH_CSTATUS_NO_OBJECT;
		return 0;
	}
	b = &pd->d.blocks[block];
	if (b->status) {
		c->status = (DWORD)pdh_from_win32(b->status);
		return 0;
	}
	cols_of(c, pd, block, &c->cols);
	c->status = (DWORD)PDH_CSTATUS_NO_INSTANCE;
	if (c->multi && c->match_all && b->nr_named == b->nr) {
		/* every instance: the block itself */
		c->sel_all = true;
		c->sel_first = b->first;
		c->nr = b->nr;
	} else {
		if (c->sel_cap < b->nr) {
			size_t *grown = realloc(c->sel, b->nr * sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			c->sel = grown;
			c->sel_cap = b->nr;
		}
		for (i = b->first; i < b->first + b->nr; i++) {
			if (c->multi && !item_matches(c, &pd->d, &pd->d.items[i]))
				continue;
			c->sel[c->nr++] = i;
			if (!c->wildcard)
				break;
		}
	}
	if (c->nr) {
		c->status = 0;
		/* the time base of the sample: its last item's (pdh.md 6.1) */
		raw_of(c, pd, &c->cols, pdh_sel_item(c, c->nr - 1), &r, &c->timebase);
	}
	return 0;
}

PDH_STATUS pdh_data_update(struct pdh_query *q)
{
	struct pdh_data *pd = q->data == &q->dbuf[0] ? &q->dbuf[1] : &q->dbuf[0];
	size_t i;
	int err;

	if (!q->data) {
		q->data = &q->dbuf[1];
		q->data_old = &q->dbuf[0];
		pd = &q->dbuf[0];
	}
	/* read into the storage of the sample before the one before, which goes */
	pd->gen = 0;
	pd->wide_ok = false;
	err = pdh_perfcols_read(q->perf, &q->cols, q->data->gen ? &q->data->d : NULL, &pd->d);
	if (err) {
		pdh_perfcols_forget(&q->cols);
		return err == -ENOMEM	 ? PDH_MEMORY_ALLOCATION_FAILURE
		       : err == -EBADF	 ? PDH_INVALID_HANDLE
		       : err == -ENOSPC	 ? pdh_from_win32(ERROR_NOT_ENOUGH_MEMORY)
		       : err == -EBADMSG ? PDH_INVALID_DATA
					 : pdh_from_win32(perflib_win32_error(err));
	}
	if (pd->cap_sets < pd->d.nr_blocks) {
		GUID *sets = realloc(pd->sets, pd->d.nr_blocks * sizeof(*sets));

		if (!sets) {
			pdh_perfcols_forget(&q->cols);
			return PDH_MEMORY_ALLOCATION_FAILURE;
		}
		pd->sets = sets;
		pd->cap_sets = pd->d.nr_blocks;
	}
	for (i = 0; i < pd->d.nr_blocks; i++)
		pd->sets[i] = i < q->nr_specs ? q->sets[i] : (GUID){0};
	if (number_and_map(q, pd, q->data)) {
		pdh_perfcols_forget(&q->cols);
		return PDH_MEMORY_ALLOCATION_FAILURE;
	}
	if (pd->d.taken && q->data->wide_ok) {
		/* the names of the sample before: so are their widened copies */
		uint16_t *wide = pd->wide;
		size_t cap = pd->cap_wide;

		pd->wide = q->data->wide;
		pd->cap_wide = q->data->cap_wide;
		pd->wide_ok = true;
		q->data->wide = wide;
		q->data->cap_wide = cap;
		q->data->wide_ok = false;
	}
	pd->gen = ++q->gen;
	pd->stamp = pdh_local_filetime(pd->d.hdr.time_100ns);
	q->data_old = q->data;
	q->data = pd;
	q->stamp = pd->stamp;
	for (i = 0; i < q->nr_counters; i++) {
		/* (a counter of another machine is its sub-query's) */
		if (q->counters[i]->src == q && counter_sample(q, q->counters[i])) {
			/* partly sampled: no counter keeps a sample */
			for (i = 0; i < q->nr_counters; i++)
				if (q->counters[i]->src == q)
					q->counters[i]->gen = q->counters[i]->old_gen = 0;
			return PDH_MEMORY_ALLOCATION_FAILURE;
		}
	}
	return 0;
}

PDH_STATUS pdh_query_set_block(PDH_HQUERY hQuery, const GUID *set,
			       const struct pdh_perfbuf_data **ret_data,
			       const struct pdh_perfbuf_block **ret_block)
{
	struct pdh_query *q;
	PDH_STATUS st = 0;
	size_t k;

	if (!set || !ret_data || !ret_block)
		return PDH_INVALID_ARGUMENT;
	q = pdh_query_lock(hQuery);
	if (!q)
		return PDH_INVALID_HANDLE;
	if (q->source)
		st = PDH_INVALID_ARGUMENT;
	else if (!q->data || !q->data->gen)
		st = PDH_NO_DATA;
	else if ((k = block_of(q->data, set)) == SIZE_MAX)
		st = PDH_CSTATUS_NO_OBJECT;
	if (!st) {
		*ret_data = &q->data->d;
		*ret_block = &q->data->d.blocks[k];
	}
	pdh_unlock(q);
	return st;
}

/* ---- reading a counter's sample ------------------------------------------------------- */

size_t pdh_counter_nr(const struct pdh_counter *c)
{
	if (c->q->source)
		return c->cur.nr;
	return c->gen ? c->nr : 0;
}

const char *pdh_counter_name(const struct pdh_counter *c, size_t i, unsigned int *dup)
{
	const struct pdh_perfbuf_item *it;

	if (c->q->source) {
		*dup = c->cur.items[i].dup;
		return c->cur.items[i].name;
	}
	it = &c->src->data->d.items[pdh_sel_item(c, i)];
	*dup = it->dup;
	return pdh_item_name(&c->src->data->d, it);
}

/* the raw samples of item @i and of its instance before (false: none) */
static bool raw_pair(const struct pdh_counter *c, size_t i, PDH_RAW_COUNTER *cur,
		     PDH_RAW_COUNTER *old, int64_t *tb)
{
	const struct pdh_query *q = c->src;
	size_t item = pdh_sel_item(c, i), o;
	int64_t otb;
	bool have;

	raw_of(c, q->data, &c->cols, item, cur, tb);
	o = pdh_prev_item(q, c->cols.block, item);
	have = c->old_gen && c->old_gen == q->data_old->gen && o != SIZE_MAX &&
	       c->old_cols.block != SIZE_MAX;
	if (have)
		raw_of(c, q->data_old, &c->old_cols, o, old, &otb);
	/* the rate status: the same raw values as before are valid, not new (pdh.md 6.4) */
	if (have && cur->CStatus == (DWORD)PDH_CSTATUS_NEW_DATA &&
	    old->CStatus == (DWORD)PDH_CSTATUS_NEW_DATA && old->FirstValue == cur->FirstValue &&
	    old->SecondValue == cur->SecondValue)
		cur->CStatus = (DWORD)PDH_CSTATUS_VALID_DATA;
	return have;
}

void pdh_counter_raw(const struct pdh_counter *c, size_t i, PDH_RAW_COUNTER *ret)
{
	PDH_RAW_COUNTER old;
	int64_t tb;

	if (c->q->source)
		*ret = c->cur.items[i].raw;
	else
		raw_pair(c, i, ret, &old, &tb);
}

PDH_STATUS pdh_counter_format(const struct pdh_counter *c, size_t i, DWORD fmt,
			      PDH_FMT_COUNTERVALUE *ret)
{
	PDH_RAW_COUNTER cur, old;
	const struct pdh_item *it;
	int64_t tb;
	bool have;

	if (c->q->source) {
		/* a logged value is already cooked */
		it = &c->cur.items[i];
		memset(ret, 0, sizeof(*ret));
		ret->CStatus = it->raw.CStatus;
		if (it->raw.CStatus != (DWORD)PDH_CSTATUS_NEW_DATA &&
		    it->raw.CStatus != (DWORD)PDH_CSTATUS_VALID_DATA)
			return PDH_INVALID_DATA;
		pdh_finish(c->ctr.type, c->scale, fmt, it->logged, ret);
		return 0;
	}
	have = raw_pair(c, i, &cur, &old, &tb);
	if (c->calc == CTRTYPE_CALC_RAW && cur.CStatus != (DWORD)PDH_CSTATUS_INVALID_DATA) {
		/* a count is its value (pdh_cook_value's one_sample, without the detour) */
		memset(ret, 0, sizeof(*ret));
		ret->CStatus = cur.CStatus;
		pdh_finish(c->ctr.type, c->scale, fmt, (double)(uint64_t)cur.FirstValue, ret);
		return 0;
	}
	return pdh_calc(c->ctr.type, pdh_timebase(c), c->scale, fmt, &cur, have ? &old : NULL, ret);
}

size_t pdh_counter_find(const struct pdh_counter *c, const char *name, unsigned int dup,
			size_t *cursor)
{
	size_t nr = pdh_counter_nr(c), i, len = name ? strlen(name) : 0;
	const char *n;
	unsigned int d;

	for (i = 0; i <= nr; i++) {
		/* the item at the cursor, then all from the start */
		size_t at = i ? i - 1 : *cursor;

		if (at >= nr)
			continue;
		n = pdh_counter_name(c, at, &d);
		if (d != dup || !n != !name)
			continue;
		if (n && !(strlen(n) == len && !memcmp(n, name, len)) && !pdh_name_equal(n, name))
			continue;
		*cursor = at + 1;
		return at;
	}
	return SIZE_MAX;
}
