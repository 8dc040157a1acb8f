// SPDX-License-Identifier: MIT
/*
 * snap.c - snapshots: the instances the slot reader returns, copied into growable arrays
 * (ids, names in a pool, rows of raw values) for the paths that need more than one pass
 * over them: aggregation, and a counter set read by several specifications of a query.
 */
#include <stdlib.h>
#include <string.h>

#include "reader.h"

void perflib_snap_free(struct perflib_snap *snap)
{
	if (!snap)
		return;
	free(snap->inst);
	free(snap->pool);
	free(snap->vals);
	free(snap->nodata);
	memset(snap, 0, sizeof(*snap));
}

/* pool units of a name of @len units: the NUL and padding to a whole 8-byte word */
static inline size_t pool_units(size_t len)
{
	return (len + 1 + 3) & ~(size_t)3;
}

/* room for one more instance, @units more name units and one more row */
static int snap_reserve(struct perflib_snap *snap, size_t units)
{
	size_t n = snap->nr_counters;

	if (snap->nr == snap->cap) {
		size_t cap = snap->cap ? snap->cap * 2 : 64;
		void *p = realloc(snap->inst, cap * sizeof(*snap->inst));

		if (!p)
			return -ENOMEM;
		snap->inst = p;
		snap->cap = cap;
	}
	if (snap->pool_len + units > snap->pool_cap) {
		size_t cap = snap->pool_cap ? snap->pool_cap * 2 : 4096;
		void *p;

		while (cap < snap->pool_len + units)
			cap *= 2;
		p = realloc(snap->pool, cap * sizeof(WCHAR));
		if (!p)
			return -ENOMEM;
		snap->pool = p;
		snap->pool_cap = cap;
	}
	if (snap->values && snap->nr_rows == snap->rows_cap) {
		size_t cap = snap->rows_cap ? snap->rows_cap * 2 : 64;
		void *v = realloc(snap->vals, cap * n * sizeof(*snap->vals)), *d;

		if (!v)
			return -ENOMEM;
		snap->vals = v;
		d = realloc(snap->nodata, cap * n);
		if (!d)
			return -ENOMEM;
		snap->nodata = d;
		snap->rows_cap = cap;
	}
	return 0;
}

int perflib_snap_add(struct perflib_snap *snap, uint32_t id, const WCHAR *name, size_t len,
		     struct perflib_snap_inst **ret_inst)
{
	struct perflib_snap_inst *in;
	size_t off = 0;
	bool in_pool = snap->pool && name >= snap->pool && name < snap->pool + snap->pool_len;
	int err;

	/* a name already in the pool moves with it when the pool grows */
	if (in_pool)
		off = (size_t)(name - snap->pool);
	err = snap_reserve(snap, len + 4);
	if (err)
		return err;
	if (in_pool)
		name = snap->pool + off;
	in = &snap->inst[snap->nr++];
	in->id = id;
	in->name_len = (uint32_t)len;
	in->name_off = (uint32_t)snap->pool_len;
	in->slot = UINT32_MAX;
	in->gen = 0;
	in->row = snap->values ? (uint32_t)snap->nr_rows++ : 0;
	memmove(snap->pool + snap->pool_len, name, len * 2);
	/* the NUL, and zeros to the end of its 8-byte word (names are copied by words) */
	memset(snap->pool + snap->pool_len + len, 0, (pool_units(len) - len) * 2);
	snap->pool_len += pool_units(len);
	if (snap->values) {
		memset(snap->vals + (size_t)in->row * snap->nr_counters, 0,
		       snap->nr_counters * sizeof(*snap->vals));
		memset(snap->nodata + (size_t)in->row * snap->nr_counters, 0, snap->nr_counters);
	}
	*ret_inst = in;
	return 0;
}

int perflib_snap_read(const struct perflib_cset *cs, bool values, struct perflib_snap *snap)
{
	const struct perflib_info *info = cs->map->info;
	uint32_t n = cs->nr_counters;
	struct perflib_reader r;
	struct perflib_found f;
	int err;

	/* rows are per counter set: different widths cannot share the buffers */
	if (snap->nr_counters != n) {
		free(snap->vals);
		free(snap->nodata);
		snap->vals = NULL;
		snap->nodata = NULL;
		snap->rows_cap = 0;
	}
	snap->nr_counters = n;
	snap->values = values;
	snap->nr = snap->pool_len = snap->nr_rows = 0;
	err = perflib_reader_init(&r, cs, values);
	while (!err) {
		struct perflib_snap_inst *in;
		uint64_t *row = NULL;
		uint8_t *nd = NULL;

		/* room for the longest name and a row: the reader copies straight into them */
		err = snap_reserve(snap, pool_units(info->name_max));
		if (err)
			break;
		if (values) {
			row = snap->vals + snap->nr_rows * n;
			nd = snap->nodata + snap->nr_rows * n;
		}
		if (!perflib_reader_next(&r, snap->pool + snap->pool_len, row, nd, &f)) {
			err = r.err;
			break;
		}
		in = &snap->inst[snap->nr++];
		in->id = f.id;
		in->name_len = f.len;
		in->name_off = (uint32_t)snap->pool_len;
		in->slot = f.slot;
		in->gen = f.gen;
		in->row = values ? (uint32_t)snap->nr_rows++ : 0;
		snap->pool_len += pool_units(f.len);
	}
	/* without by-reference counters every value has data (the reader leaves the flags) */
	if (values && !cs->byref && snap->nr_rows)
		memset(snap->nodata, 0, snap->nr_rows * n);
	perflib_reader_fini(&r);
	return err;
}
