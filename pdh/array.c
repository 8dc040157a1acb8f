/* SPDX-License-Identifier: MIT */
/*
 * array.c - a counter's newest sample as an array of items with names (pdh.md 5.4.2:
 * PdhGetFormattedCounterArray, PdhGetRawCounterArray, W and A): the size, then the items
 * and their names. A whole block's names are copied at once; a counter whose raw sample is
 * its value alone (a raw count, a count per second) is formatted without the raw-sample
 * detour, and in the steady state by fmt_steady.c's kernels; every other one item by item
 * through sample.c's accessors.
 */
#include <stdlib.h>
#include <string.h>

#include "ctrtype.h"
#include "fmt_steady.h"
#include "pdh_internal.h"

size_t pdh_array_size(const struct pdh_counter *c, size_t item_size, bool wide)
{
	size_t nr = pdh_counter_nr(c), need = nr * item_size, i;
	const struct pdh_perfbuf_data *d;
	unsigned int dup;

	if (!c->q->source && c->sel_all) {
		/* every item of a block, all named: the block's sums */
		const struct pdh_perfbuf_block *b = &c->src->data->d.blocks[c->cols.block];

		return need + (wide ? 2 * b->name_units : b->name_bytes);
	}
	for (i = 0; i < nr; i++) {
		const char *name;

		if (c->q->source) {
			name = pdh_counter_name(c, i, &dup);
			need += ((name ? pdh_chars(name, wide) : 0) + 1) * (wide ? 2 : 1);
			continue;
		}
		d = &c->src->data->d;
		need += (size_t)((wide ? d->items[pdh_sel_item(c, i)].units
				       : d->items[pdh_sel_item(c, i)].len) +
				 1) *
			(wide ? 2 : 1);
	}
	return need;
}

/* copy the name of data item @it to @dst in the variant; the bytes written */
static size_t put_name(const struct pdh_perfbuf_data *d, const struct pdh_perfbuf_item *it,
		       char *dst, bool wide)
{
	const char *name = pdh_item_name(d, it);
	uint16_t *w = (uint16_t *)(void *)dst;
	uint32_t k;

	if (!name)
		name = "";
	if (!wide) {
		memcpy(dst, name, it->len + 1);
		return it->len + 1;
	}
	if (it->units != it->len)
		return 2 * pdh_put(dst, name, true);
	for (k = 0; k <= it->len; k++)
		w[k] = (uint8_t)name[k]; /* ASCII: a byte a unit */
	return 2 * ((size_t)it->len + 1);
}

/*
 * the names of a real-time counter's items after its @nr items of @item_size at @buf (each
 * item's szName, its first member, set); a whole block's names in the A variant are one
 * copy (they are consecutive in the data); the bytes used
 */
static size_t put_names(const struct pdh_counter *c, bool wide, char *buf, size_t item_size,
			size_t off)
{
	const struct pdh_perfbuf_data *d = &c->src->data->d;
	size_t i, nr = c->nr;

	if (!wide && c->sel_all && nr) {
		const struct pdh_perfbuf_block *b = &d->blocks[c->cols.block];
		const struct pdh_perfbuf_item *it = &d->items[c->sel_first];

		memcpy(buf + off, d->names + it->name, b->name_bytes);
		for (i = 0; i < nr; i++, it++) {
			char *name = buf + off;

			memcpy(buf + i * item_size, &name, sizeof(name));
			off += it->len + 1;
		}
		return off;
	}
	if (wide && c->sel_all && nr &&
	    d->blocks[c->cols.block].name_units == d->blocks[c->cols.block].name_bytes) {
		/* ASCII: a byte a unit, the block's names widened in one pass */
		const struct pdh_perfbuf_block *b = &d->blocks[c->cols.block];
		const struct pdh_perfbuf_item *it = &d->items[c->sel_first];
		const uint8_t *src = (const uint8_t *)d->names + it->name;
		uint16_t *dst = (uint16_t *)(void *)(buf + off);

		pdh_widen(dst, src, b->name_bytes, FMT_KERNEL_C);
		for (i = 0; i < nr; i++, it++) {
			char *name = buf + off;

			memcpy(buf + i * item_size, &name, sizeof(name));
			off += 2 * ((size_t)it->len + 1);
		}
		return off;
	}
	for (i = 0; i < nr; i++) {
		char *name = buf + off;

		memcpy(buf + i * item_size, &name, sizeof(name));
		off += put_name(d, &d->items[pdh_sel_item(c, i)], name, wide);
	}
	return off;
}

/*
 * the names of @pd widened once for every W array of the sample (pdh_data.wide); false when
 * out of memory (the caller widens itself)
 */
static bool wide_names(struct pdh_data *pd)
{
	const struct pdh_perfbuf_data *d = &pd->d;

	if (pd->wide_ok)
		return true;
	if (pd->cap_wide < d->names_len) {
		uint16_t *grown = realloc(pd->wide, d->names_len * sizeof(*grown));

		if (!grown)
			return false;
		pd->wide = grown;
		pd->cap_wide = d->names_len;
	}
	pdh_widen(pd->wide, (const uint8_t *)d->names, d->names_len, FMT_KERNEL_C);
	pd->wide_ok = true;
	return true;
}

/*
 * a formatted array of a counter whose raw sample is its value alone (no companion
 * counter), a raw count or a count per second, specialised: a load per item (two for a
 * rate, whose clock delta is computed once per sample), the status from the same
 * instance's value before (found without the pairing map when the block's instances are
 * those of the sample before, in order), no raw-sample detour; the bytes written
 */
static size_t fmt_fast(const struct pdh_counter *c, DWORD fmt, bool wide, char *buf, size_t off)
{
	const struct pdh_query *q = c->src;
	const struct pdh_perfbuf_data *d = &q->data->d, *od = &q->data_old->d;
	bool have_old = c->old_gen && c->old_gen == q->data_old->gen &&
			c->old_cols.block != SIZE_MAX && c->old_cols.v != PDH_NO_COL;
	bool plain = (fmt & ~(DWORD)(PDH_FMT_NOSCALE | PDH_FMT_NOCAP100)) == PDH_FMT_DOUBLE &&
		     (!c->scale || (fmt & PDH_FMT_NOSCALE)) &&
		     (!ctrtype_percent(c->ctr.type) || (fmt & PDH_FMT_NOCAP100));
	bool rate = c->calc != CTRTYPE_CALC_RAW, same_time = d->hdr.time == od->hdr.time;
	const struct pdh_perfbuf_block *b = &d->blocks[c->cols.block];
	const struct pdh_perfbuf_block *ob = have_old ? &od->blocks[c->old_cols.block] : NULL;
	bool in_order = have_old && c->sel_all && q->data->in_order[c->cols.block];
	uint32_t col = c->cols.v, ocol = c->old_cols.v;
	const uint64_t *vals = NULL, *ovals = NULL;
	const uint8_t *sizes = NULL, *osizes = NULL;
	enum pdh_cook_status div_st = PDH_COOK_BAD_DATA;
	PDH_FMT_COUNTERVALUE_ITEM_W *items = (PDH_FMT_COUNTERVALUE_ITEM_W *)(void *)buf;
	size_t i, nr = c->nr, names0 = b->names0;
	/* a whole block's names, ASCII for W: copied at once, each item's found by offset */
	bool bulk = c->sel_all && nr && (!wide || b->name_units == b->name_bytes);
	const uint32_t *rel = d->rel + b->first;
	char *names = buf + off;
	unsigned int shift = wide ? 1 : 0;
	enum fmt_kernel kernel = pdh_fmt_kernel();
	double div = 0, x;

	if (bulk) {
		/* W: widened in one pass by a vector kernel, else a copy of the sample's */
		if (wide && (kernel != FMT_KERNEL_C || !wide_names(q->data)))
			pdh_widen((uint16_t *)(void *)names, (const uint8_t *)d->names + names0,
				  b->name_bytes, kernel);
		else if (wide)
			memcpy(names, q->data->wide + names0, 2 * b->name_bytes);
		else
			memcpy(names, d->names + names0, b->name_bytes);
		off += b->name_bytes << shift;
	} else {
		off = put_names(c, wide, buf, sizeof(*items), off);
	}
	/* a column's values are consecutive: index them by the item's place in its block */
	if (col != PDH_NO_COL) {
		vals = d->values + pdh_perfbuf_value(b, b->first, col);
		sizes = d->sizes + pdh_perfbuf_value(b, b->first, col);
	}
	if (ob) {
		ovals = od->values + pdh_perfbuf_value(ob, ob->first, ocol);
		osizes = od->sizes + pdh_perfbuf_value(ob, ob->first, ocol);
	}
	if (rate && have_old)
		div_st = pdh_cook_per_second_divisor(od->hdr.time, d->hdr.time, pdh_timebase(c),
						     &div);
	if (bulk && in_order && plain && col != PDH_NO_COL) {
		const struct fmt_steady st = {
			.nr = nr,
			.names = names,
			.shift = shift,
			.rel = rel,
			.vals = vals,
			.sizes = sizes,
			.ovals = ovals,
			.osizes = osizes,
			.div = div_st == PDH_COOK_OK ? div : 0,
			.same_time = same_time,
		};

		pdh_fmt_steady(&st, items, rate, kernel);
		return off;
	}
	/* each item written once, field by field (with its name's place when bulk) */
	for (i = 0; i < nr; i++) {
		PDH_FMT_COUNTERVALUE *f = &items[i].FmtValue;
		size_t k = c->sel_all ? i : c->sel[i] - b->first, o = SIZE_MAX;
		uint64_t v, ov = 0, st = (DWORD)PDH_CSTATUS_INVALID_DATA;
		bool old_ok = false;

		if (bulk)
			items[i].szName = (WCHAR *)(void *)(names + ((size_t)rel[i] << shift));
		x = 0;
		if (col == PDH_NO_COL || !sizes[k])
			goto store;
		v = vals[k];
		if (in_order)
			o = k;
		else if (have_old && pdh_prev_item(q, c->cols.block, b->first + k) != SIZE_MAX)
			o = pdh_prev_item(q, c->cols.block, b->first + k) - ob->first;
		if (o != SIZE_MAX) {
			old_ok = osizes[o];
			ov = ovals[o];
		}
		if (!rate) {
			x = (double)v;
		} else if (!old_ok || div_st != PDH_COOK_OK ||
			   pdh_cook_per_second(ov, v, div, &x)) {
			x = 0;
			goto store; /* one sample, or a clock or counter that went back */
		}
		/* the same raw values as before are valid, not new (pdh.md 6.4) */
		st = old_ok && ov == v && (!rate || same_time) ? (DWORD)PDH_CSTATUS_VALID_DATA
							       : (DWORD)PDH_CSTATUS_NEW_DATA;
		if (!plain) {
			memset(f, 0, sizeof(*f));
			f->CStatus = (DWORD)st;
			pdh_finish(c->ctr.type, c->scale, fmt, x, f);
			continue;
		}
	store:
		fmt_put(f, st, x);
	}
	return off;
}

size_t pdh_array_fill(const struct pdh_counter *c, DWORD fmt, bool raw, bool wide, void *buf)
{
	size_t item_size =
		raw ? sizeof(PDH_RAW_COUNTER_ITEM_W) : sizeof(PDH_FMT_COUNTERVALUE_ITEM_W);
	size_t nr = pdh_counter_nr(c), off = nr * item_size, i;
	unsigned int dup;

	if (!c->q->source && !raw && c->base_id == PERFLIB_NO_ID &&
	    c->ctr.multi_id == PERFLIB_NO_ID && c->ctr.time_id == PERFLIB_NO_ID &&
	    c->ctr.freq_id == PERFLIB_NO_ID &&
	    ((c->calc == CTRTYPE_CALC_RAW && c->second == SECOND_NONE) ||
	     (pdh_cook_per_second_type(c->ctr.type) && c->second == SECOND_TIME))) {
		return fmt_fast(c, fmt, wide, buf, off);
	}
	if (!c->q->source)
		off = put_names(c, wide, buf, item_size, off);
	for (i = 0; i < nr; i++) {
		char *name = (char *)buf + off;

		if (c->q->source) {
			const char *n = pdh_counter_name(c, i, &dup);

			memcpy((char *)buf + i * item_size, &name, sizeof(name));
			off += pdh_put(name, n ? n : "", wide) * (wide ? 2 : 1);
		}
		if (raw)
			pdh_counter_raw(c, i, &((PDH_RAW_COUNTER_ITEM_W *)buf)[i].RawValue);
		else /* per item: a failed value keeps its CStatus (S-TELEGRAF, S-WINEXP) */
			pdh_counter_format(c, i, fmt,
					   &((PDH_FMT_COUNTERVALUE_ITEM_W *)buf)[i].FmtValue);
	}
	return off;
}
