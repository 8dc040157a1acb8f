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

/* one block being written: counts go on past the capacities (what -ENOSPC reports) */
struct col_out {
	struct perflib_column_block *b;
	const struct perflib_cset *cs;
	int pos;	   /* the one counter's position, -1: every counter */
	uint32_t nr_cols;  /* columns */
	uint32_t nr, units; /* rows and name units so far */
	bool matching;	   /* every row so far is the instance of the key given */
	bool nospace;
};

static inline uint64_t col_key(uint32_t slot, uint32_t gen)
{
	return slot == UINT32_MAX ? PERFLIB_COLUMN_KEY_COMPUTED : (uint64_t)slot << 32 | gen;
}

/* one row: its id, key, values and (unless the caller holds it) name; @name NULL: none */
static inline __attribute__((always_inline)) void
put_row(struct col_out *o, uint32_t id, uint64_t key, const WCHAR *name, uint32_t len,
	const uint64_t *vals, const uint8_t *nodata)
{
	struct perflib_column_block *b = o->b;
	uint32_t r = o->nr++, c, k;
	size_t at;

	if (o->matching && (r >= b->nr_known || key == PERFLIB_COLUMN_KEY_COMPUTED ||
			    b->keys[r] != key)) {
		o->matching = false;
		b->first_named = r;
	}
	if (!o->matching && name) {
		uint32_t need = len + 1;

		if (r < b->max_rows && o->units <= b->max_name_units &&
		    b->max_name_units - o->units >= need) {
			memcpy(b->names + o->units, name, (size_t)len * 2);
			b->names[o->units + len] = 0;
			b->name_offsets[r] = o->units;
			b->name_lengths[r] = len;
		} else {
			o->nospace = true;
		}
		o->units += need;
	}
	if (r >= b->max_rows) {
		o->nospace = true;
		return;
	}
	b->keys[r] = key;
	b->instance_ids[r] = id;
	if (o->nr_cols > b->max_cols)
		return;
	for (c = 0, at = r; c < o->nr_cols; c++, at += b->max_rows) {
		k = o->pos < 0 ? c : (uint32_t)o->pos;
		/* no value: a counter of size zero, or a by-reference address NULL */
		b->values[at] = nodata[k] ? 0 : vals[k];
		b->sizes[at] = nodata[k] ? 0 : (uint8_t)o->cs->data_size[k];
	}
}

/* the instances of a plain multiple-instance set read by one specification: from the slots */
static int put_direct(struct col_out *o, const struct perflib_filter *f)
{
	const struct perflib_cset *cs = o->cs;
	size_t n = cs->nr_counters, name_room = perflib_round8(2 * (size_t)cs->map->info->name_max);
	struct perflib_reader r;
	struct perflib_found c;
	uint64_t *vals;
	uint8_t *nodata;
	WCHAR *name;
	int err;

	/* one instance's values and name, reused: they stay in L1 */
	vals = malloc(n * (sizeof(*vals) + 1) + name_room);
	if (!vals)
		return -ENOMEM;
	nodata = (uint8_t *)(vals + n);
	name = (WCHAR *)(nodata + n);
	memset(nodata, 0, n); /* the reader sets the flags of by-reference counters only */
	err = perflib_reader_init(&r, cs, true);
	while (!err) {
		if (!perflib_reader_next(&r, name, vals, nodata, &c)) {
			err = r.err;
			break;
		}
		if (perflib_filter_match(f, c.id, name, c.len))
			put_row(o, c.id, col_key(c.slot, c.gen), name, c.len, vals, nodata);
	}
	perflib_reader_fini(&r);
	free(vals);
	return err;
}

/* the block of specification @sp of set @s into o->b; -ENOMEM, or 0 (o->nospace) */
static int put_block(struct col_out *o, const struct perflib_query_spec *sp,
		     const struct perflib_query_set *s)
{
	struct perflib_column_block *b = o->b;
	const struct perflib_snap *snap = &s->snap;
	const struct perflib_snap_inst *in;
	const struct perflib_cset *cs = s->cs;
	uint32_t c;
	size_t i;
	int err = 0;

	b->status = s->status;
	b->type = PERF_ERROR_RETURN;
	b->nr_cols = b->nr_rows = b->first_named = b->name_units = 0;
	if (b->status)
		return 0;
	o->cs = cs;
	o->pos = -1;
	o->nr_cols = cs->nr_counters;
	o->matching = true;
	if (sp->counter_id != PERF_WILDCARD_COUNTER) {
		o->pos = perflib_cset_counter(cs, sp->counter_id);
		if (o->pos < 0) {
			b->status = ERROR_NOT_FOUND; /* re-registered without this counter */
			return 0;
		}
		o->nr_cols = 1;
	}
	if (o->nr_cols > b->max_cols)
		o->nospace = true;
	for (c = 0; c < o->nr_cols && c < b->max_cols; c++)
		b->counter_ids[c] = cs->map->counters[o->pos < 0 ? c : (uint32_t)o->pos].id;
	if (!perflib_cset_multi(cs)) {
		/* the one instance (or the aggregate), no name; filters do not apply to it */
		const uint8_t *nodata;

		if (!snap->nr) {
			b->status = ERROR_WMI_INSTANCE_NOT_FOUND;
			return 0;
		}
		in = &snap->inst[0];
		nodata = snap->nodata + (size_t)in->row * snap->nr_counters;
		if (o->pos >= 0 && nodata[o->pos]) {
			b->status = ERROR_NO_DATA; /* by-reference address NULL */
			return 0;
		}
		b->type = o->pos >= 0 ? PERF_SINGLE_COUNTER : PERF_MULTIPLE_COUNTERS;
		put_row(o, 0, col_key(in->slot, in->gen), NULL, 0,
			snap->vals + (size_t)in->row * snap->nr_counters, nodata);
	} else {
		b->type = o->pos >= 0 ? PERF_MULTIPLE_INSTANCES : PERF_COUNTERSET;
		if (s->direct)
			err = put_direct(o, &sp->filter);
		for (i = 0; !s->direct && i < snap->nr; i++) {
			in = &snap->inst[i];
			if (!perflib_filter_match(&sp->filter, in->id, perflib_snap_name(snap, in),
						  in->name_len))
				continue;
			put_row(o, in->id, col_key(in->slot, in->gen), perflib_snap_name(snap, in),
				in->name_len, snap->vals + (size_t)in->row * snap->nr_counters,
				snap->nodata + (size_t)in->row * snap->nr_counters);
		}
	}
	if (err) {
		b->status = perflib_win32_error(err);
		b->type = PERF_ERROR_RETURN;
		b->nr_cols = b->nr_rows = b->first_named = b->name_units = 0;
		o->nospace = false;
		return err == -ENOMEM ? err : 0;
	}
	if (o->matching || !perflib_cset_multi(cs))
		b->first_named = o->nr;
	b->nr_cols = o->nr_cols;
	b->nr_rows = o->nr;
	b->name_units = o->units;
	return 0;
}

static bool block_bad(const struct perflib_column_block *b)
{
	return b->nr_known > b->max_rows ||
	       (b->max_rows && (!b->instance_ids || !b->keys || !b->name_offsets ||
				!b->name_lengths)) ||
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
	for (i = 0; i < q->nr_specs && !err; i++) {
		struct col_out o = {.b = &blocks[i]};

		err = put_block(&o, &q->specs[i], &q->sets[q->specs[i].set]);
		nospace |= o.nospace;
	}
	perflib_query_collect_end(q, machine, machine_bytes);
	if (!err && nospace)
		err = -ENOSPC;
out:
	pthread_mutex_unlock(&q->lock);
	perflib_query_put(q);
	return err;
}
