/* SPDX-License-Identifier: MIT */
/*
 * perfcols.c - one sample of a perflib query as columns (perfcols.h): perflib_query_columns
 * writes the values into the data's arrays; items and names of the rows it finds unchanged
 * are taken from the sample before, the new rows' names converted to UTF-8.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfcols.h"

#define READ_TRIES 8	 /* reads while instances keep coming (each -ENOSPC grows the arrays) */
#define MIN_ROWS 16	 /* rows of a block at first */
#define MIN_COLS 16	 /* columns of a block at first */
#define UNITS_PER_ROW 16 /* name units per row at first */

/* room for @need elements of @elem bytes in *@p of *@cap (doubling); -ENOMEM */
static int reserve(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *grown;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	grown = realloc(*(void **)p, n * elem);
	if (!grown)
		return -ENOMEM;
	*(void **)p = grown;
	*cap = n;
	return 0;
}

void pdh_perfbuf_data_release(struct pdh_perfbuf_data *d)
{
	free(d->blocks);
	free(d->items);
	free(d->rel);
	free(d->values);
	free(d->sizes);
	free(d->ids);
	free(d->names);
	memset(d, 0, sizeof(*d));
}

void pdh_perfcols_forget(struct perfcols *cols)
{
	cols->data = NULL;
}

void pdh_perfcols_free(struct perfcols *cols)
{
	size_t i;

	for (i = 0; i < cols->cap; i++) {
		struct pdh_perfcols_block *b = &cols->b[i];

		free(b->keys);
		free(b->inst_ids);
		free(b->name_offs);
		free(b->name_lens);
		free(b->names);
	}
	free(cols->b);
	free(cols->lib);
	free(cols->rbuf);
	memset(cols, 0, sizeof(*cols));
}

/* @n blocks, each with room for its rows and names; -ENOMEM */
static int blocks_reserve(struct perfcols *cols, size_t n)
{
	size_t i, cap = cols->cap;

	if (n > cap) {
		struct pdh_perfcols_block *b = realloc(cols->b, n * sizeof(*b));
		struct perflib_column_block *lib;

		if (!b)
			return -ENOMEM;
		cols->b = b;
		memset(b + cap, 0, (n - cap) * sizeof(*b));
		lib = realloc(cols->lib, n * sizeof(*lib));
		if (!lib)
			return -ENOMEM;
		cols->lib = lib;
		cols->cap = n;
		for (i = cap; i < n; i++) {
			b[i].rows = MIN_ROWS;
			b[i].cols = MIN_COLS;
		}
	}
	for (i = 0; i < n; i++) {
		struct pdh_perfcols_block *b = &cols->b[i];
		size_t rows = b->cap_rows, units = b->cap_units;

		if (reserve(&b->keys, &rows, b->rows, sizeof(*b->keys)))
			return -ENOMEM;
		rows = b->cap_rows;
		if (reserve(&b->inst_ids, &rows, b->rows, sizeof(*b->inst_ids)))
			return -ENOMEM;
		rows = b->cap_rows;
		if (reserve(&b->name_offs, &rows, b->rows, sizeof(*b->name_offs)))
			return -ENOMEM;
		rows = b->cap_rows;
		if (reserve(&b->name_lens, &rows, b->rows, sizeof(*b->name_lens)))
			return -ENOMEM;
		b->cap_rows = rows;
		if (reserve(&b->names, &units, b->rows * UNITS_PER_ROW, sizeof(*b->names)))
			return -ENOMEM;
		b->cap_units = units;
	}
	cols->nr = n;
	return 0;
}

/* the call's blocks over the arrays: values of block i at @d's values from *val0 */
static int lay_out(struct perfcols *cols, struct pdh_perfbuf_data *d, bool keep)
{
	size_t i, values = 0, ids = 0;

	for (i = 0; i < cols->nr; i++) {
		values += cols->b[i].cap_rows * cols->b[i].cols;
		ids += cols->b[i].cols;
	}
	if (reserve(&d->values, &d->cap_values, values, sizeof(*d->values)) ||
	    reserve(&d->sizes, &d->cap_sizes, values, sizeof(*d->sizes)) ||
	    reserve(&d->ids, &d->cap_ids, ids, sizeof(*d->ids)))
		return -ENOMEM;
	values = ids = 0;
	for (i = 0; i < cols->nr; i++) {
		struct pdh_perfcols_block *b = &cols->b[i];

		cols->lib[i] = (struct perflib_column_block){
			.max_rows = (ULONG)b->cap_rows,
			.max_cols = (ULONG)b->cols,
			.max_name_units = (ULONG)b->cap_units,
			.nr_known = keep ? b->known : 0,
			.counter_ids = d->ids + ids,
			.values = d->values + values,
			.sizes = d->sizes + values,
			.instance_ids = b->inst_ids,
			.keys = b->keys,
			.name_offsets = b->name_offs,
			.name_lengths = b->name_lens,
			.names = b->names,
		};
		values += b->cap_rows * b->cols;
		ids += b->cols;
	}
	return 0;
}

/* the name of row @r of @lb (UTF-16) appended to @d as item @it of @b; -ENOMEM */
static int new_name(struct pdh_perfbuf_data *d, struct pdh_perfbuf_block *b,
		    struct pdh_perfbuf_item *it, const struct perflib_column_block *lb, size_t r)
{
	const WCHAR *name = lb->names + lb->name_offsets[r];
	size_t units = lb->name_lengths[r], i, len;
	char *dst;

	/* a unit gives at most 3 bytes, a pair 4; offsets are 32 bits */
	if (d->names_len + 3 * units + 1 >= PDH_PERFBUF_NO_NAME ||
	    reserve(&d->names, &d->cap_names, d->names_len + 3 * units + 1, 1))
		return -ENOMEM;
	dst = d->names + d->names_len;
	for (i = 0; i < units && name[i] < 0x80; i++)
		dst[i] = (char)name[i];
	if (i == units) {
		dst[i] = '\0'; /* ASCII, the common case */
		len = units;
	} else {
		len = (size_t)perflib_utf16_to_utf8(name, units, dst, 3 * units + 1);
	}
	it->name = (uint32_t)d->names_len;
	it->len = (uint32_t)len;
	it->units = (uint32_t)units;
	d->names_len += len + 1;
	b->nr_named++;
	b->name_bytes += len + 1;
	b->name_units += units + 1;
	return 0;
}

/* item @r of @ob in @prev appended to @d as @it of @b, with its name */
static void old_item(struct pdh_perfbuf_data *d, struct pdh_perfbuf_block *b,
		     struct pdh_perfbuf_item *it, const struct pdh_perfbuf_data *prev,
		     const struct pdh_perfbuf_block *ob, size_t r)
{
	const struct pdh_perfbuf_item *oit = &prev->items[ob->first + r];

	*it = *oit;
	it->name = (uint32_t)d->names_len;
	memcpy(d->names + d->names_len, prev->names + oit->name, oit->len + 1);
	d->names_len += oit->len + 1;
	b->nr_named++;
	b->name_bytes += oit->len + 1;
	b->name_units += oit->units + 1;
}

/*
 * block @i of @d from the call's block: items and names (values are in place); -ENOMEM,
 * -EAGAIN when @prev is not the data the keys were read with
 */
static int fill_block(struct perfcols *cols, size_t i, const struct pdh_perfbuf_data *prev,
		      struct pdh_perfbuf_data *d, size_t val0, size_t ids0)
{
	const struct perflib_column_block *lb = &cols->lib[i];
	struct pdh_perfbuf_block *b = &d->blocks[i];
	const struct pdh_perfbuf_block *ob = NULL;
	bool named = lb->type == PERF_MULTIPLE_INSTANCES || lb->type == PERF_COUNTERSET;
	size_t r, nr = lb->nr_rows, known = named ? nr - lb->nr_named : 0;
	struct pdh_perfbuf_item *it;
	bool same;

	*b = (struct pdh_perfbuf_block){
		.status = lb->status,
		.type = lb->type,
		.nr_cols = lb->nr_cols,
		.cols = ids0,
		.first = d->nr_items,
		.nr = nr,
		.val0 = val0,
		.stride = cols->b[i].cap_rows,
		.names0 = d->names_len,
	};
	if (named && prev && i < prev->nr_blocks && prev->blocks[i].type == lb->type)
		ob = &prev->blocks[i];
	/* rows the library found unchanged are those of the read before at the same place */
	if (known && (!ob || !cols->keep))
		return -EAGAIN;
	if (reserve(&d->items, &d->cap_items, d->nr_items + nr, sizeof(*d->items)))
		return -ENOMEM;
	it = d->items + d->nr_items;
	d->nr_items += nr;
	if (known == nr && nr) {
		/* the steady state: every row is the item before, names along in one copy */
		const struct pdh_perfbuf_item *oit = prev->items + ob->first;
		size_t bytes;

		if (nr > ob->nr)
			return -EAGAIN;
		bytes = (nr < ob->nr ? oit[nr].name : ob->names0 + ob->name_bytes) - ob->names0;
		if (reserve(&d->names, &d->cap_names, d->names_len + bytes, 1))
			return -ENOMEM;
		memcpy(d->names + d->names_len, prev->names + ob->names0, bytes);
		memcpy(it, oit, nr * sizeof(*it));
		/* names at the same place as before (the steady state of every block): as they are */
		for (r = 0; d->names_len != ob->names0 && r < nr; r++)
			it[r].name = (uint32_t)(it[r].name - ob->names0 + d->names_len);
		d->names_len += bytes;
		b->nr_named = nr;
		b->name_bytes = bytes;
		b->name_units = nr == ob->nr ? ob->name_units : 0;
		for (r = 0; nr != ob->nr && r < nr; r++)
			b->name_units += it[r].units + 1;
		b->same = nr == ob->nr;
		return 0;
	}
	same = named && ob && nr == ob->nr;
	for (r = 0; r < nr; r++) {
		if (!named) {
			it[r] = (struct pdh_perfbuf_item){.id = 0, .name = PDH_PERFBUF_NO_NAME};
			continue;
		}
		if (lb->name_offsets[r] == PERFLIB_COLUMN_NO_NAME) {
			if (r >= ob->nr)
				return -EAGAIN;
			if (reserve(&d->names, &d->cap_names,
				    d->names_len + prev->items[ob->first + r].len + 1, 1))
				return -ENOMEM;
			old_item(d, b, &it[r], prev, ob, r);
			continue;
		}
		it[r] = (struct pdh_perfbuf_item){.id = lb->instance_ids[r],
						  .name = PDH_PERFBUF_NO_NAME};
		if (new_name(d, b, &it[r], lb, r))
			return -ENOMEM;
		/* an instance computed again (_Total): the same item when id and name are */
		if (same) {
			const struct pdh_perfbuf_item *oit = &prev->items[ob->first + r];

			same = oit->id == it[r].id && oit->len == it[r].len &&
			       !memcmp(prev->names + oit->name, d->names + it[r].name, oit->len);
			if (same)
				it[r].dup = oit->dup;
		}
	}
	b->same = same;
	return 0;
}

/* one call, the arrays grown until it fits; @keep: the keys of the last read are given */
static int read_once(HANDLE query, struct perfcols *cols, struct pdh_perfbuf_data *d, bool keep,
		     PERF_DATA_HEADER *hdr)
{
	int err = -ENOSPC, tries;
	size_t i;

	for (tries = 0; tries < READ_TRIES && err == -ENOSPC; tries++) {
		if (blocks_reserve(cols, cols->nr ? cols->nr : 1) || lay_out(cols, d, keep))
			return -ENOMEM;
		/* (a remote sample is walked again, not read again: tries > 0) */
		err = cols->remote
			      ? pdh_remote_columns(query, hdr, cols->lib, (ULONG)cols->nr,
						   &cols->rbuf, &cols->rcap, &cols->rlen, tries > 0)
			      : perflib_query_columns(query, hdr, cols->lib, (ULONG)cols->nr);
		if (err != -ENOSPC)
			break;
		/* grow what did not fit, and read again: every name (keys were overwritten) */
		keep = false;
		if (hdr->dwNumCounters > cols->nr) {
			if (blocks_reserve(cols, hdr->dwNumCounters))
				return -ENOMEM;
			continue;
		}
		for (i = 0; i < cols->nr; i++) {
			const struct perflib_column_block *lb = &cols->lib[i];
			struct pdh_perfcols_block *b = &cols->b[i];

			if (lb->nr_rows > b->rows)
				b->rows = lb->nr_rows + lb->nr_rows / 4;
			if (lb->nr_cols > b->cols)
				b->cols = lb->nr_cols;
			if (lb->name_units > b->cap_units) {
				size_t units = b->cap_units;

				if (reserve(&b->names, &units, lb->name_units, sizeof(*b->names)))
					return -ENOMEM;
				b->cap_units = units;
			}
		}
	}
	if (!err && hdr->dwNumCounters < cols->nr)
		cols->nr = hdr->dwNumCounters;
	return err;
}

/*
 * the steady state of every block: each has the instances of @prev at the same rows (the
 * library gave no name), so @d's items and names are @prev's, laid out alike
 */
static bool all_steady(const struct perfcols *cols, const struct pdh_perfbuf_data *prev)
{
	size_t i, items = 0;

	if (!cols->keep || prev->nr_blocks != cols->nr)
		return false;
	for (i = 0; i < cols->nr; i++) {
		const struct perflib_column_block *lb = &cols->lib[i];
		const struct pdh_perfbuf_block *ob = &prev->blocks[i];
		bool named = lb->type == PERF_MULTIPLE_INSTANCES || lb->type == PERF_COUNTERSET;

		if (lb->type != ob->type || lb->nr_rows != ob->nr || ob->first != items ||
		    (named && (lb->nr_named || ob->nr_named != ob->nr)))
			return false;
		items += ob->nr;
	}
	return items == prev->nr_items;
}

#define EXCHANGE(a, b)                                                                             \
	do {                                                                                       \
		__typeof__(a) tmp_ = (a);                                                          \
		(a) = (b);                                                                         \
		(b) = tmp_;                                                                        \
	} while (0)

/*
 * take @prev's items and names for @d by exchanging the arrays (no copy): @prev, the sample
 * before, is only read for its values from now on, and is the next read's storage
 */
static void take_steady(struct perfcols *cols, struct pdh_perfbuf_data *prev,
			struct pdh_perfbuf_data *d)
{
	size_t i, val0 = 0, ids0 = 0;

	EXCHANGE(d->items, prev->items);
	EXCHANGE(d->cap_items, prev->cap_items);
	EXCHANGE(d->rel, prev->rel);
	EXCHANGE(d->cap_rel, prev->cap_rel);
	EXCHANGE(d->names, prev->names);
	EXCHANGE(d->cap_names, prev->cap_names);
	d->nr_items = prev->nr_items;
	d->names_len = prev->names_len;
	for (i = 0; i < cols->nr; i++) {
		const struct perflib_column_block *lb = &cols->lib[i];
		struct pdh_perfbuf_block *b = &d->blocks[i];

		*b = prev->blocks[i];
		b->status = lb->status;
		b->nr_cols = lb->nr_cols;
		b->cols = ids0;
		b->val0 = val0;
		b->stride = cols->b[i].cap_rows;
		b->same = true; /* the pairing must not look at @prev's items: they are gone */
		val0 += cols->b[i].cap_rows * cols->b[i].cols;
		ids0 += cols->b[i].cols;
	}
}

int pdh_perfcols_read(HANDLE query, struct perfcols *cols, struct pdh_perfbuf_data *prev,
		      struct pdh_perfbuf_data *d)
{
	bool keep = prev && prev == cols->data;
	PERF_DATA_HEADER hdr;
	size_t i, val0, ids0;
	int err;

	cols->data = NULL;
again:
	cols->keep = keep;
	d->taken = false;
	d->nr_blocks = d->nr_items = d->nr_ids = d->names_len = 0;
	err = read_once(query, cols, d, keep, &hdr);
	if (err)
		return err;
	d->hdr = (struct pdh_perfbuf_data_header){
		.time = hdr.PerfTimeStamp,
		.time_100ns = hdr.PerfTime100NSec,
		.freq = hdr.PerfFreq,
		.nr_blocks = (uint32_t)cols->nr,
	};
	if (reserve(&d->blocks, &d->cap_blocks, cols->nr, sizeof(*d->blocks)))
		return -ENOMEM;
	if (keep && all_steady(cols, prev)) {
		take_steady(cols, prev, d);
		for (i = 0; i < cols->nr; i++) {
			d->hdr.total += cols->lib[i].nr_rows * cols->lib[i].nr_cols *
					(sizeof(*d->values) + 1);
			d->nr_ids += cols->b[i].cols;
			cols->b[i].known = cols->lib[i].nr_rows;
		}
		d->nr_blocks = cols->nr;
		d->taken = true;
		cols->data = d;
		return 0;
	}
	for (i = val0 = ids0 = 0; i < cols->nr; i++) {
		const struct perflib_column_block *lb = &cols->lib[i];

		err = fill_block(cols, i, prev, d, val0, ids0);
		if (err == -EAGAIN && keep) {
			keep = false; /* read again, every name */
			goto again;
		}
		if (err)
			return err == -EAGAIN ? -EBADMSG : err;
		d->hdr.total += lb->nr_rows * lb->nr_cols * (sizeof(*d->values) + 1);
		val0 += cols->b[i].cap_rows * cols->b[i].cols;
		ids0 += cols->b[i].cols;
		cols->b[i].known = lb->nr_rows;
		d->nr_blocks = i + 1;
	}
	d->nr_ids = ids0;
	if (reserve(&d->rel, &d->cap_rel, d->nr_items, sizeof(*d->rel)))
		return -ENOMEM;
	for (i = 0; i < d->nr_blocks; i++) {
		const struct pdh_perfbuf_block *b = &d->blocks[i];
		size_t r;

		for (r = b->first; r < b->first + b->nr; r++)
			d->rel[r] = d->items[r].name == PDH_PERFBUF_NO_NAME
					    ? 0
					    : (uint32_t)(d->items[r].name - b->names0);
	}
	cols->data = d;
	return 0;
}
