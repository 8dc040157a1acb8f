// SPDX-License-Identifier: MIT
/*
 * columns.c - perflib_query_columns: a query read as PerfQueryCounterData reads it
 * (perflib_query_collect, the slot reader or the set's snapshot, the same specifications,
 * instances and values) into the caller's arrays, a column per counter and a row per
 * instance, instead of a buffer of Windows blocks. A row that is the instance the caller
 * already holds at that row (same key: slot and generation) gets no name: in the steady
 * state of a sampling consumer only values are written.
 */
#include <stdlib.h>
#include <string.h>

#include "query.h"
#include "reader.h"

/*
 * one block being written, its arrays copied here: the loops keep them in registers (a
 * byte store could change anything reached through a pointer). Counts go on past the
 * capacities: what -ENOSPC reports.
 */
struct col_out {
	uint64_t *values, *keys;
	uint8_t *sizes;
	uint32_t *ids, *name_offs, *name_lens;
	WCHAR *names;
	size_t stride;	    /* max_rows */
	uint32_t max_units; /* max_name_units */
	uint32_t known;	    /* nr_known */
	const uint32_t *data_size;
	bool byref;	    /* values may have no data: sizes by row */
	int pos;	    /* the one counter's position, -1: every counter */
	uint32_t nr_cols;   /* columns */
	uint32_t nr, units; /* rows and name units so far */
	uint32_t nr_named;  /* rows given a name */
	uint32_t offs_done; /* rows whose name_offs is written (only once a row has a name) */
	bool same_set;	    /* the keys given are of this opening of the set */
	bool nospace;
};

static inline uint64_t col_key(uint32_t slot, uint32_t gen)
{
	return slot == UINT32_MAX ? PERFLIB_COLUMN_KEY_COMPUTED : (uint64_t)slot << 32 | gen;
}

/*
 * one row: its id, key, values (value k at vals[k * @vstride]) and (unless the caller holds
 * it) name; @name NULL: none
 */
static inline __attribute__((always_inline)) void put_row(struct col_out *o, uint32_t id,
							  uint64_t key, const WCHAR *name,
							  uint32_t len, const uint64_t *vals,
							  size_t vstride, const uint8_t *nodata)
{
	uint32_t r = o->nr++, c, k;
	uint64_t *v;

	/* the instance the caller holds at this row: no name (its key and id are there) */
	if (name && !(r < o->known && o->same_set && key != PERFLIB_COLUMN_KEY_COMPUTED &&
		      o->keys[r] == key)) {
		uint32_t need = len + 1;

		/* the rows before without a name say so, now that one has a name */
		for (; o->offs_done < r && o->offs_done < o->stride; o->offs_done++)
			o->name_offs[o->offs_done] = PERFLIB_COLUMN_NO_NAME;
		if (r < o->stride && o->units <= o->max_units && o->max_units - o->units >= need) {
			memcpy(o->names + o->units, name, (size_t)len * 2);
			o->names[o->units + len] = 0;
			o->name_offs[r] = o->units;
			o->name_lens[r] = len;
		} else {
			o->nospace = true;
		}
		o->units += need;
		o->nr_named++;
		o->offs_done = r + 1;
	} else if (o->nr_named && r < o->stride) {
		o->name_offs[r] = PERFLIB_COLUMN_NO_NAME;
		o->offs_done = r + 1;
	}
	if (r >= o->stride) {
		o->nospace = true;
		return;
	}
	o->keys[r] = key;
	o->ids[r] = id;
	if (!o->values)
		return; /* columns do not fit */
	v = o->values + r;
	if (o->pos >= 0) {
		*v = nodata[o->pos] ? 0 : vals[o->pos * vstride];
		if (o->byref)
			o->sizes[r] = nodata[o->pos] ? 0 : (uint8_t)o->data_size[o->pos];
		return;
	}
	if (!o->byref) {
		/* every value has data (sizes are written by column at the end) */
		for (c = 0; c < o->nr_cols; c++, v += o->stride)
			*v = vals[c * vstride];
		return;
	}
	for (c = 0, k = r; c < o->nr_cols; c++, v += o->stride, k += (uint32_t)o->stride) {
		/* no value: a counter of size zero, or a by-reference address NULL */
		*v = nodata[c] ? 0 : vals[c * vstride];
		o->sizes[k] = nodata[c] ? 0 : (uint8_t)o->data_size[c];
	}
}

/* put_row, not inlined: the rows put_direct does not write itself */
static __attribute__((noinline)) void put_row_slow(struct col_out *o, uint32_t id, uint64_t key,
						   const WCHAR *name, uint32_t len,
						   const uint64_t *vals, size_t vstride,
						   const uint8_t *nodata)
{
	put_row(o, id, key, name, len, vals, vstride, nodata);
}

/*
 * the instances of a plain multiple-instance set read by one specification: from the slots.
 * The common row (every counter, none by reference, the instance the caller holds at that
 * row, room for it) is written here: the reader puts its values straight into the row of
 * the columns (a filtered or skipped instance's are overwritten by the next one's), nothing
 * else is written. Any other row goes through put_row.
 */
static int put_direct(struct col_out *out, const struct perflib_cset *cs,
		      const struct perflib_filter *f)
{
	struct col_out o = *out;
	uint64_t *const values = o.values, *const keys = o.keys;
	const bool all = f->instance_id == PERFLIB_NO_ID && (f->match_all || !f->name);
	const size_t stride = o.stride;
	/* rows below it may be written here */
	const uint32_t fast = o.values && o.pos < 0 && !o.byref && o.same_set
				      ? (o.known < o.stride ? o.known : (uint32_t)o.stride)
				      : 0;
	struct perflib_reader r;
	struct perflib_found c;
	struct perflib_row row;
	uint64_t *vals;
	uint8_t *nodata;
	WCHAR *name;
	int err;

	err = perflib_row_alloc(&row, cs);
	if (err)
		return err;
	vals = row.vals;
	nodata = row.nodata;
	name = row.name;
	err = perflib_reader_init(&r, cs, true);
	while (!err) {
		uint32_t row = o.nr;
		bool in_row = row < fast;
		uint64_t key;
		bool next;

		/* names are read only for rows that need them: the filter's, the new rows' */
		if (in_row)
			next = perflib_reader_next_strided(&r, all ? NULL : name, values + row,
							   stride, nodata, &c);
		else
			next = perflib_reader_next(&r, name, vals, nodata, &c);
		if (!next) {
			err = r.err;
			break;
		}
		if (!all && !perflib_filter_match(f, c.id, name, c.len))
			continue;
		key = col_key(c.slot, c.gen);
		if (in_row && keys[row] == key) {
			/* the instance of the row before: its key and id are there, no name */
			o.nr = row + 1;
			continue;
		}
		if (in_row && all && !perflib_reader_name(&r, &c, name, &c.len))
			continue; /* changed since: shows next time */
		put_row_slow(&o, c.id, key, name, c.len, in_row ? values + row : vals,
			     in_row ? stride : 1, nodata);
	}
	perflib_reader_fini(&r);
	perflib_row_free(&row);
	*out = o;
	return err;
}

/* the block of specification @sp of set @s into @b; -ENOMEM, or 0 (*@nospace) */
static int put_block(struct perflib_column_block *b, const struct perflib_query_spec *sp,
		     const struct perflib_query_set *s, bool *nospace)
{
	const struct perflib_snap *snap = &s->snap;
	const struct perflib_snap_inst *in;
	const struct perflib_cset *cs = s->cs;
	struct col_out o = {
		.values = b->values,
		.keys = b->keys,
		.sizes = b->sizes,
		.ids = b->instance_ids,
		.name_offs = b->name_offsets,
		.name_lens = b->name_lengths,
		.names = b->names,
		.stride = b->max_rows,
		.max_units = b->max_name_units,
		.known = b->nr_known,
		.pos = -1,
	};
	uint32_t c, k;
	size_t i;
	int err = 0;

	b->status = s->status;
	b->type = PERF_ERROR_RETURN;
	b->nr_cols = b->nr_rows = b->nr_named = b->name_units = 0;
	if (b->status)
		return 0;
	o.data_size = cs->data_size;
	o.byref = cs->byref;
	o.nr_cols = cs->nr_counters;
	/* keys name slots of one opening: a set registered again has other instances */
	o.same_set = cs->dev == s->keys_dev && cs->ino == s->keys_ino;
	if (sp->counter_id != PERF_WILDCARD_COUNTER) {
		o.pos = perflib_cset_counter(cs, sp->counter_id);
		if (o.pos < 0) {
			b->status = ERROR_NOT_FOUND; /* re-registered without this counter */
			return 0;
		}
		o.nr_cols = 1;
	}
	if (o.nr_cols > b->max_cols) {
		o.values = NULL;
		o.nospace = true;
	}
	for (c = 0; c < o.nr_cols && c < b->max_cols; c++)
		b->counter_ids[c] = cs->map->counters[o.pos < 0 ? c : (uint32_t)o.pos].id;
	if (!perflib_cset_multi(cs)) {
		/* the one instance (or the aggregate), no name; filters do not apply to it */
		const uint8_t *nodata;

		if (!snap->nr) {
			b->status = ERROR_WMI_INSTANCE_NOT_FOUND;
			return 0;
		}
		in = &snap->inst[0];
		nodata = snap->nodata + (size_t)in->row * snap->nr_counters;
		if (o.pos >= 0 && nodata[o.pos]) {
			b->status = ERROR_NO_DATA; /* by-reference address NULL */
			return 0;
		}
		b->type = o.pos >= 0 ? PERF_SINGLE_COUNTER : PERF_MULTIPLE_COUNTERS;
		put_row(&o, 0, col_key(in->slot, in->gen), NULL, 0,
			snap->vals + (size_t)in->row * snap->nr_counters, 1, nodata);
	} else {
		b->type = o.pos >= 0 ? PERF_MULTIPLE_INSTANCES : PERF_COUNTERSET;
		if (s->direct)
			err = put_direct(&o, cs, &sp->filter);
		for (i = 0; !s->direct && i < snap->nr; i++) {
			in = &snap->inst[i];
			if (!perflib_filter_match(&sp->filter, in->id, perflib_snap_name(snap, in),
						  in->name_len))
				continue;
			put_row(&o, in->id, col_key(in->slot, in->gen), perflib_snap_name(snap, in),
				in->name_len, snap->vals + (size_t)in->row * snap->nr_counters, 1,
				snap->nodata + (size_t)in->row * snap->nr_counters);
		}
	}
	if (err) {
		b->status = perflib_win32_error(err);
		b->type = PERF_ERROR_RETURN;
		return err == -ENOMEM ? err : 0;
	}
	/* without by-reference counters a column's sizes are all its counter's */
	for (c = 0; !o.byref && o.values && c < o.nr_cols; c++) {
		k = o.pos < 0 ? c : (uint32_t)o.pos;
		memset(o.sizes + (size_t)c * o.stride, (int)o.data_size[k],
		       o.nr < o.stride ? o.nr : o.stride);
	}
	*nospace |= o.nospace;
	/* a row the fast loop wrote after the last named one: no name either */
	for (; o.nr_named && o.offs_done < o.nr && o.offs_done < o.stride; o.offs_done++)
		o.name_offs[o.offs_done] = PERFLIB_COLUMN_NO_NAME;
	b->nr_named = o.nr_named;
	b->nr_cols = o.nr_cols;
	b->nr_rows = o.nr;
	b->name_units = o.units;
	return 0;
}

static bool block_bad(const struct perflib_column_block *b)
{
	return b->nr_known > b->max_rows ||
	       (b->max_rows &&
		(!b->instance_ids || !b->keys || !b->name_offsets || !b->name_lengths)) ||
	       (b->max_cols && !b->counter_ids) ||
	       (b->max_rows && b->max_cols && (!b->values || !b->sizes)) ||
	       (b->max_name_units && !b->names);
}

int perflib_query_columns(HANDLE query, PERF_DATA_HEADER *hdr, struct perflib_column_block *blocks,
			  ULONG nr_blocks)
{
	struct perflib_query *q = perflib_query_get(query);
	WCHAR machine[PERFLIB_MACHINE_MAX + 1];
	size_t machine_bytes, i;
	bool nospace = false;
	int err = 0;

	if (!q)
		return -EBADF;
	if (!hdr || (!blocks && nr_blocks)) {
		perflib_query_put(q);
		return -EINVAL;
	}
	for (i = 0; i < nr_blocks; i++) {
		if (block_bad(&blocks[i])) {
			perflib_query_put(q);
			return -EINVAL;
		}
	}
	pthread_mutex_lock(&q->lock);
	if (q->dirty && perflib_query_index_sets(q)) {
		err = -ENOMEM;
		goto out;
	}
	memset(hdr, 0, sizeof(*hdr));
	hdr->dwTotalSize = sizeof(*hdr);
	hdr->dwNumCounters = (ULONG)q->nr_specs;
	if (q->nr_specs > nr_blocks) {
		err = -ENOSPC;
		goto out;
	}
	machine_bytes = perflib_machine_name(machine, PERFLIB_MACHINE_MAX + 1);
	perflib_query_collect(q, hdr, machine, machine_bytes);
	hdr->dwTotalSize = sizeof(*hdr);
	hdr->dwNumCounters = (ULONG)q->nr_specs;
	for (i = 0; i < q->nr_specs && !err; i++)
		err = put_block(&blocks[i], &q->specs[i], &q->sets[q->specs[i].set], &nospace);
	for (i = 0; i < q->nr_sets; i++) {
		if (q->sets[i].cs) {
			q->sets[i].keys_dev = q->sets[i].cs->dev;
			q->sets[i].keys_ino = q->sets[i].cs->ino;
		}
	}
	perflib_query_collect_end(q, machine, machine_bytes);
	if (!err && nospace)
		err = -ENOSPC;
out:
	pthread_mutex_unlock(&q->lock);
	perflib_query_put(q);
	return err;
}
