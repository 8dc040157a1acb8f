/* SPDX-License-Identifier: MIT */
/*
 * perfbuf.c - bounds-checked decoding of consumer-API buffers (see perfbuf.h); byte
 * layouts are those of perflib-api.md section 3 (asserted in userspace/provider.c). Each
 * reader checks a block's size field against the room its parent leaves before it reads
 * anything inside the block.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <perflib-linux.h>

#include "perfbuf.h"

/* a 32- or 64-bit field of a Windows structure at @p */
#define FIELD32(p, type, field) get_u32((p) + offsetof(type, field))
#define FIELD64(p, type, field) get_u64((p) + offsetof(type, field))

#define NO_STRING 0xFFFFFFFFu /* PERF_STRING_COUNTER_HEADER.dwOffset of an absent string */
/* the smallest PERF_INSTANCE_HEADER block: the header and an empty name's NUL */
#define INSTANCE_MIN (sizeof(PERF_INSTANCE_HEADER) + sizeof(WCHAR))
/* block payload readers: the payload broke a size rule (callback errors are negative) */
#define MALFORMED 1

static uint16_t get_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* ---- text ------------------------------------------------------------------------------ */

/* the conversions are the library's (perflib-linux.h); these add cut and allocation rules */
size_t perfbuf_utf16_to_utf8(const void *src, size_t max_units, char *dst, size_t dst_size)
{
	/* -ENOSPC leaves what fits, cut at a character boundary: the rule here */
	perflib_utf16_to_utf8(src, max_units, dst, dst_size);
	return strlen(dst);
}

char *perfbuf_utf16_dup(const void *src, size_t max_units)
{
	size_t units = 0, size;
	char *s;

	while (units < max_units && get_u16((const uint8_t *)src + 2 * units))
		units++;
	size = 3 * units + 1; /* a unit gives at most 3 bytes; a pair of units 4 */
	s = malloc(size);
	if (s)
		perflib_utf16_to_utf8(src, units, s, size);
	return s;
}

int perfbuf_utf8_to_utf16(const char *src, WCHAR **ret, size_t *ret_units)
{
	/* never more units than bytes, plus the NUL */
	size_t cap = strlen(src) + 1;
	WCHAR *out = calloc(cap, sizeof(*out));
	int n;

	if (!out)
		return -ENOMEM;
	n = perflib_utf8_to_utf16(src, out, cap);
	if (n < 0) {
		free(out);
		return -EINVAL;
	}
	*ret = out;
	*ret_units = (size_t)n;
	return 0;
}

/* the units of a NUL-terminated UTF-16 string in [p, p + size), or -1 without NUL */
static long wstr_units(const uint8_t *p, size_t size)
{
	size_t i;

	for (i = 0; i + 1 < size; i += 2)
		if (!get_u16(p + i))
			return (long)(i / 2);
	return -1;
}

int perfbuf_string(const void *buf, size_t size, char **ret)
{
	long units = wstr_units(buf, size);
	char *s;

	if (units < 0)
		return -EBADMSG;
	s = perfbuf_utf16_dup(buf, (size_t)units);
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

/* ---- registration ---------------------------------------------------------------------- */

int perfbuf_reg_parse(const void *buf, size_t size, struct perfbuf_reg *ret)
{
	const uint8_t *p = buf;
	uint32_t n;

	if (size < sizeof(PERF_COUNTERSET_REG_INFO))
		return -EBADMSG;
	n = FIELD32(p, PERF_COUNTERSET_REG_INFO, NumCounters);
	/* every record must lie inside what was returned */
	if (n > (size - sizeof(PERF_COUNTERSET_REG_INFO)) / sizeof(PERF_COUNTER_REG_INFO))
		return -EBADMSG;
	memcpy(&ret->guid, p + offsetof(PERF_COUNTERSET_REG_INFO, CounterSetGuid), sizeof(GUID));
	ret->instance_type = FIELD32(p, PERF_COUNTERSET_REG_INFO, InstanceType);
	ret->nr_counters = n;
	ret->counters = p + sizeof(PERF_COUNTERSET_REG_INFO);
	return 0;
}

void perfbuf_reg_counter(const struct perfbuf_reg *reg, uint32_t i, struct perfbuf_counter *ret)
{
	const uint8_t *c = reg->counters + (size_t)i * sizeof(PERF_COUNTER_REG_INFO);

	ret->id = FIELD32(c, PERF_COUNTER_REG_INFO, CounterId);
	ret->type = FIELD32(c, PERF_COUNTER_REG_INFO, Type);
	ret->attrib = FIELD64(c, PERF_COUNTER_REG_INFO, Attrib);
	ret->scale = (int32_t)FIELD32(c, PERF_COUNTER_REG_INFO, DefaultScale);
	ret->detail_level = FIELD32(c, PERF_COUNTER_REG_INFO, DetailLevel);
	ret->base_id = FIELD32(c, PERF_COUNTER_REG_INFO, BaseCounterId);
	ret->time_id = FIELD32(c, PERF_COUNTER_REG_INFO, PerfTimeId);
	ret->freq_id = FIELD32(c, PERF_COUNTER_REG_INFO, PerfFreqId);
	ret->multi_id = FIELD32(c, PERF_COUNTER_REG_INFO, MultiId);
}

int perfbuf_strings_parse(const void *buf, size_t size,
			  int (*fn)(void *ctx, uint32_t id, const void *text, size_t units),
			  void *ctx)
{
	const uint8_t *p = buf, *h;
	uint32_t total, n, i, off;
	long units;
	int err;

	if (size < sizeof(PERF_STRING_BUFFER_HEADER))
		return -EBADMSG;
	total = FIELD32(p, PERF_STRING_BUFFER_HEADER, dwSize);
	n = FIELD32(p, PERF_STRING_BUFFER_HEADER, dwCounters);
	/* the block is dwSize bytes, which must lie inside what was returned */
	if (total > size || total < sizeof(PERF_STRING_BUFFER_HEADER) ||
	    n > (total - sizeof(PERF_STRING_BUFFER_HEADER)) / sizeof(PERF_STRING_COUNTER_HEADER))
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		h = p + sizeof(PERF_STRING_BUFFER_HEADER) +
		    (size_t)i * sizeof(PERF_STRING_COUNTER_HEADER);
		off = FIELD32(h, PERF_STRING_COUNTER_HEADER, dwOffset);
		if (off == NO_STRING)
			continue;
		if (off >= total)
			return -EBADMSG;
		units = wstr_units(p + off, total - off);
		if (units < 0)
			return -EBADMSG;
		err = fn(ctx, FIELD32(h, PERF_STRING_COUNTER_HEADER, dwCounterId), p + off,
			 (size_t)units);
		if (err)
			return err;
	}
	return 0;
}

/* ---- instances ------------------------------------------------------------------------- */

/*
 * the PERF_INSTANCE_HEADER block at @off inside [0, @end) of @p: its Size in *@ret_size
 * and the units of its name in *@ret_units; false when it does not fit its parent or the
 * name has no NUL inside the block
 */
static bool instance_block(const uint8_t *p, size_t off, size_t end, uint32_t *ret_size,
			   size_t *ret_units)
{
	uint32_t size;
	long units;

	if (end - off < INSTANCE_MIN)
		return false;
	size = FIELD32(p + off, PERF_INSTANCE_HEADER, Size);
	if (size < INSTANCE_MIN || size > end - off)
		return false;
	units = wstr_units(p + off + sizeof(PERF_INSTANCE_HEADER),
			   size - sizeof(PERF_INSTANCE_HEADER));
	if (units < 0)
		return false;
	*ret_size = size;
	*ret_units = (size_t)units;
	return true;
}

int perfbuf_instances_parse(const void *buf, size_t size,
			    int (*fn)(void *ctx, uint32_t id, const void *name, size_t units),
			    void *ctx)
{
	const uint8_t *p = buf;
	size_t off = 0, units;
	uint32_t bsize;
	int err;

	/* the blocks fill the buffer: the next starts Size bytes after this one */
	while (off < size) {
		if (!instance_block(p, off, size, &bsize, &units))
			return -EBADMSG;
		err = fn(ctx, FIELD32(p + off, PERF_INSTANCE_HEADER, InstanceId),
			 p + off + sizeof(PERF_INSTANCE_HEADER), units);
		if (err)
			return err;
		off += bsize;
	}
	return 0;
}

/* ---- PerfQueryCounterData -------------------------------------------------------------- */

/* one walk of perfbuf_data_parse */
struct walk {
	const uint8_t *p; /* the buffer */
	const struct perfbuf_data_ops *ops;
	void *ctx;
};

/*
 * the PERF_COUNTER_DATA block at *@off inside [.., @end): its value (zero-extended) and
 * size (4, 8, or 0 when dwDataSize was neither); MALFORMED when it does not fit
 */
static int read_counter_data(const uint8_t *buf, size_t *off, size_t end, uint32_t *ret_size,
			     uint64_t *ret)
{
	const uint8_t *p = buf + *off;
	uint32_t dsize, bsize;

	if (end - *off < sizeof(PERF_COUNTER_DATA))
		return MALFORMED;
	dsize = FIELD32(p, PERF_COUNTER_DATA, dwDataSize);
	bsize = FIELD32(p, PERF_COUNTER_DATA, dwSize);
	/* the sample's sanity rule: the value fits the block, the block fits the parent */
	if (bsize < sizeof(PERF_COUNTER_DATA) || bsize > end - *off ||
	    dsize > bsize - sizeof(PERF_COUNTER_DATA))
		return MALFORMED;
	*ret_size = 0;
	*ret = 0;
	if (dsize == 8) {
		*ret = get_u64(p + sizeof(PERF_COUNTER_DATA));
		*ret_size = 8;
	} else if (dsize == 4) {
		*ret = get_u32(p + sizeof(PERF_COUNTER_DATA));
		*ret_size = 4;
	}
	*off += bsize;
	return 0;
}

/* the same, reported as a value of counter @id */
static int counter_data(const struct walk *w, size_t *off, size_t end, uint32_t id)
{
	uint32_t vsize;
	uint64_t v;

	if (read_counter_data(w->p, off, end, &vsize, &v))
		return MALFORMED;
	return w->ops->value(w->ctx, id, vsize, v);
}

/* PERF_MULTI_COUNTERS at *@off: the ids (a pointer into the buffer) and their count */
static int multi_counters(const struct walk *w, size_t *off, size_t end, const uint8_t **ret_ids,
			  uint32_t *ret_n)
{
	const uint8_t *p = w->p + *off;
	uint32_t bsize, n;

	if (end - *off < sizeof(PERF_MULTI_COUNTERS))
		return MALFORMED;
	bsize = FIELD32(p, PERF_MULTI_COUNTERS, dwSize);
	n = FIELD32(p, PERF_MULTI_COUNTERS, dwCounters);
	/* dwSize may be rounded up to 8 (odd counts); it must hold the ids */
	if (bsize > end - *off || bsize < sizeof(PERF_MULTI_COUNTERS) ||
	    n > (bsize - sizeof(PERF_MULTI_COUNTERS)) / sizeof(uint32_t))
		return MALFORMED;
	*ret_ids = p + sizeof(PERF_MULTI_COUNTERS);
	*ret_n = n;
	*off += bsize;
	return 0;
}

/*
 * PERF_MULTI_INSTANCES at *@off, then per instance a header and @n counter data blocks
 * with the ids at @ids, or without @ids one block of counter @single_id
 */
static int multi_instances(const struct walk *w, size_t *off, size_t end, const uint8_t *ids,
			   uint32_t n, uint32_t single_id)
{
	const uint8_t *p = w->p;
	size_t ioff, iend, units;
	uint32_t total, count, i, k, hsize;
	int err;

	if (end - *off < sizeof(PERF_MULTI_INSTANCES))
		return MALFORMED;
	total = FIELD32(p + *off, PERF_MULTI_INSTANCES, dwTotalSize);
	count = FIELD32(p + *off, PERF_MULTI_INSTANCES, dwInstances);
	if (total < sizeof(PERF_MULTI_INSTANCES) || total > end - *off)
		return MALFORMED;
	ioff = *off + sizeof(PERF_MULTI_INSTANCES);
	iend = *off + total;
	/* each instance takes at least a header: bound the count before using it */
	if (count > (iend - ioff) / sizeof(PERF_INSTANCE_HEADER))
		return MALFORMED;
	for (i = 0; i < count; i++) {
		if (!instance_block(p, ioff, iend, &hsize, &units))
			return MALFORMED;
		err = w->ops->item(w->ctx, FIELD32(p + ioff, PERF_INSTANCE_HEADER, InstanceId),
				   p + ioff + sizeof(PERF_INSTANCE_HEADER), units);
		if (err)
			return err;
		ioff += hsize;
		for (k = 0; k < (ids ? n : 1); k++) {
			err = counter_data(w, &ioff, iend, ids ? get_u32(ids + 4 * k) : single_id);
			if (err)
				return err;
		}
	}
	*off = iend;
	return 0;
}

/* the payload [off, end) of one counter header of @type */
static int block_payload(const struct walk *w, size_t off, size_t end, uint32_t type,
			 uint32_t spec_id)
{
	const uint8_t *ids = NULL;
	uint32_t n = 0, k;
	int err;

	switch (type) {
	case PERF_ERROR_RETURN:
		return 0;
	case PERF_SINGLE_COUNTER:
		err = w->ops->item(w->ctx, 0, NULL, 0);
		return err ? err : counter_data(w, &off, end, spec_id);
	case PERF_MULTIPLE_COUNTERS:
		err = multi_counters(w, &off, end, &ids, &n);
		if (!err)
			err = w->ops->item(w->ctx, 0, NULL, 0);
		for (k = 0; !err && k < n; k++)
			err = counter_data(w, &off, end, get_u32(ids + 4 * k));
		return err;
	case PERF_MULTIPLE_INSTANCES:
		return multi_instances(w, &off, end, NULL, 0, spec_id);
	case PERF_COUNTERSET:
		err = multi_counters(w, &off, end, &ids, &n);
		return err ? err : multi_instances(w, &off, end, ids, n, 0);
	default:
		return MALFORMED;
	}
}

int perfbuf_data_parse(const void *buf, size_t size, const uint32_t *spec_ids, size_t nr_specs,
		       const struct perfbuf_data_ops *ops, void *ctx)
{
	struct walk w = {.p = buf, .ops = ops, .ctx = ctx};
	struct perfbuf_data_header hdr;
	uint32_t total, i, hsize, status, type, spec_id;
	size_t off = sizeof(PERF_DATA_HEADER);
	int err;

	if (size < sizeof(PERF_DATA_HEADER))
		return -EBADMSG;
	total = FIELD32(w.p, PERF_DATA_HEADER, dwTotalSize);
	hdr.nr_blocks = FIELD32(w.p, PERF_DATA_HEADER, dwNumCounters);
	if (total < sizeof(PERF_DATA_HEADER) || total > size ||
	    hdr.nr_blocks > (total - sizeof(PERF_DATA_HEADER)) / sizeof(PERF_COUNTER_HEADER))
		return -EBADMSG;
	hdr.time = (int64_t)FIELD64(w.p, PERF_DATA_HEADER, PerfTimeStamp);
	hdr.time_100ns = (int64_t)FIELD64(w.p, PERF_DATA_HEADER, PerfTime100NSec);
	hdr.freq = (int64_t)FIELD64(w.p, PERF_DATA_HEADER, PerfFreq);
	err = ops->begin(ctx, &hdr);
	if (err)
		return err;
	/* off <= total throughout: each step adds a dwSize checked against the room left */
	for (i = 0; i < hdr.nr_blocks; i++) {
		if (total - off < sizeof(PERF_COUNTER_HEADER))
			return -EBADMSG;
		hsize = FIELD32(w.p + off, PERF_COUNTER_HEADER, dwSize);
		if (hsize < sizeof(PERF_COUNTER_HEADER) || hsize > total - off)
			return -EBADMSG;
		status = FIELD32(w.p + off, PERF_COUNTER_HEADER, dwStatus);
		type = FIELD32(w.p + off, PERF_COUNTER_HEADER, dwType);
		if (ops->block(ctx, i, status, type)) {
			spec_id = spec_ids && i < nr_specs ? spec_ids[i] : PERF_WILDCARD_COUNTER;
			err = block_payload(&w, off + sizeof(PERF_COUNTER_HEADER), off + hsize,
					    type, spec_id);
			if (err < 0)
				return err;
			/* a bad payload spoils its own block only: dwSize still finds the next */
			err = ops->block_end(ctx, err == MALFORMED);
			if (err)
				return err;
		}
		off += hsize;
	}
	return 0;
}

/* ---- PerfQueryCounterData as columns --------------------------------------------------- */

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

/* room for @items items and their values (@cols each) after those decoded; -ENOMEM */
static int reserve_items(struct perfbuf_data *d, size_t items, size_t cols)
{
	if (reserve(&d->items, &d->cap_items, d->nr_items + items, sizeof(*d->items)) ||
	    reserve(&d->values, &d->cap_values, d->nr_values + items * cols, sizeof(*d->values)) ||
	    reserve(&d->sizes, &d->cap_sizes, d->nr_values + items * cols, 1))
		return -ENOMEM;
	return 0;
}

/* append an item (@name NULL: none; room reserved); -ENOMEM */
static int decode_item(struct perfbuf_data *d, struct perfbuf_block *b, uint32_t id,
		       const uint8_t *name, size_t units)
{
	struct perfbuf_item *it;
	size_t i, len;
	char *dst;

	it = &d->items[d->nr_items++];
	*it = (struct perfbuf_item){.id = id, .name = PERFBUF_NO_NAME};
	if (!name)
		return 0;
	/* a unit gives at most 3 bytes, a pair 4; offsets are 32 bits */
	if (d->names_len + 3 * units + 1 >= PERFBUF_NO_NAME ||
	    reserve(&d->names, &d->cap_names, d->names_len + 3 * units + 1, 1))
		return -ENOMEM;
	dst = d->names + d->names_len;
	for (i = 0; i < units; i++) {
		uint16_t u = get_u16(name + 2 * i);

		if (u >= 0x80)
			break;
		dst[i] = (char)u;
	}
	if (i == units) {
		dst[i] = '\0'; /* ASCII, the common case */
		len = units;
	} else {
		len = (size_t)perflib_utf16_to_utf8((const WCHAR *)(const void *)name, units, dst,
						    3 * units + 1);
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

/*
 * the values of an item: @n counter data blocks at *@off into values[@first + k * @stride]
 * (room reserved; through locals, so that the stores do not make the compiler reload the
 * arrays)
 */
static int decode_values(struct perfbuf_data *d, const uint8_t *p, size_t *off, size_t end,
			 uint32_t n, size_t first, size_t stride)
{
	uint64_t *values = d->values + first;
	uint8_t *sizes = d->sizes + first;
	size_t at = *off;
	uint32_t k, size;

	for (k = 0; k < n; k++) {
		if (read_counter_data(p, &at, end, &size, &values[k * stride]))
			return MALFORMED;
		sizes[k * stride] = (uint8_t)size;
	}
	*off = at;
	return 0;
}

/*
 * the @n counter data headers of an item at @at into @hdrs (@first: the first item), a
 * column's kept while every item has the same, else 0; stops where they leave [@at, @end)
 * (decode_values finds that malformed)
 */
static void column_headers(uint64_t *hdrs, const uint8_t *p, size_t at, size_t end, uint32_t n,
			   bool first)
{
	uint32_t k;

	for (k = 0; k < n && end - at >= sizeof(PERF_COUNTER_DATA); k++) {
		uint64_t h = get_u64(p + at);
		uint32_t bsize = FIELD32(p + at, PERF_COUNTER_DATA, dwSize);

		if (first)
			hdrs[k] = h;
		else if (hdrs[k] != h)
			hdrs[k] = 0;
		if (bsize < sizeof(PERF_COUNTER_DATA) || bsize > end - at)
			return;
		at += bsize;
	}
}

/* PERF_MULTI_INSTANCES at *@off: per instance a header and b->nr_cols counter data blocks */
static int decode_instances(struct perfbuf_data *d, struct perfbuf_block *b, const uint8_t *p,
			    size_t off, size_t end)
{
	size_t ioff, iend, units;
	uint32_t total, count, i, hsize;
	uint64_t *hdrs = NULL;
	int err;

	if (end - off < sizeof(PERF_MULTI_INSTANCES))
		return MALFORMED;
	total = FIELD32(p + off, PERF_MULTI_INSTANCES, dwTotalSize);
	count = FIELD32(p + off, PERF_MULTI_INSTANCES, dwInstances);
	if (total < sizeof(PERF_MULTI_INSTANCES) || total > end - off)
		return MALFORMED;
	ioff = off + sizeof(PERF_MULTI_INSTANCES);
	iend = off + total;
	if (count > (iend - ioff) / sizeof(PERF_INSTANCE_HEADER))
		return MALFORMED;
	/* room for every instance at once; the values by column (perfbuf_value) */
	if (reserve_items(d, count, b->nr_cols))
		return -ENOMEM;
	if (b->type == PERF_COUNTERSET) {
		b->raw_items = ioff;
		if (reserve(&d->hdrs, &d->cap_hdrs, b->cols + b->nr_cols, sizeof(*d->hdrs)))
			return -ENOMEM;
		hdrs = d->hdrs + b->cols;
		memset(hdrs, 0, b->nr_cols * sizeof(*hdrs));
	}
	for (i = 0; i < count; i++) {
		if (!instance_block(p, ioff, iend, &hsize, &units))
			return MALFORMED;
		err = decode_item(d, b, FIELD32(p + ioff, PERF_INSTANCE_HEADER, InstanceId),
				  p + ioff + sizeof(PERF_INSTANCE_HEADER), units);
		if (err)
			return err;
		d->items[d->nr_items - 1].size = hsize;
		ioff += hsize;
		if (hdrs)
			column_headers(hdrs, p, ioff, iend, b->nr_cols, i == 0);
		if (decode_values(d, p, &ioff, iend, b->nr_cols, b->val0 + i, count))
			return MALFORMED;
	}
	d->nr_values += (size_t)count * b->nr_cols;
	return 0;
}

/* the payload [off, end) of block @b: its columns, items and values */
static int decode_payload(struct perfbuf_data *d, struct perfbuf_block *b, const uint8_t *p,
			  size_t off, size_t end, uint32_t spec_id)
{
	const struct walk w = {.p = p};
	const uint8_t *ids = NULL;
	uint32_t n = 1, k;
	int err;

	switch (b->type) {
	case PERF_ERROR_RETURN:
		return 0;
	case PERF_SINGLE_COUNTER:
	case PERF_MULTIPLE_INSTANCES:
		break;
	case PERF_MULTIPLE_COUNTERS:
	case PERF_COUNTERSET:
		if (multi_counters(&w, &off, end, &ids, &n))
			return MALFORMED;
		break;
	default:
		return MALFORMED;
	}
	if (reserve(&d->ids, &d->cap_ids, d->nr_ids + n, sizeof(*d->ids)))
		return -ENOMEM;
	for (k = 0; k < n; k++)
		d->ids[d->nr_ids + k] = ids ? get_u32(ids + 4 * k) : spec_id;
	d->nr_ids += n;
	b->nr_cols = n;
	if (b->type == PERF_MULTIPLE_INSTANCES || b->type == PERF_COUNTERSET)
		return decode_instances(d, b, p, off, end);
	err = reserve_items(d, 1, n);
	if (!err)
		err = decode_item(d, b, 0, NULL, 0);
	if (!err)
		err = decode_values(d, p, &off, end, n, b->val0, 1);
	if (!err)
		d->nr_values += n;
	return err;
}

/* are the @n UTF-16LE units at @w the @n ASCII bytes at @a? (four at a time) */
static bool same_ascii(const uint8_t *w, const uint8_t *a, size_t n)
{
	size_t i = 0;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; i + 4 <= n; i += 4) {
		uint64_t x = get_u32(a + i);

		x = (x | (x << 16)) & 0x0000FFFF0000FFFFull;
		x = (x | (x << 8)) & 0x00FF00FF00FF00FFull;
		if (get_u64(w + 2 * i) != x)
			return false;
	}
#endif
	for (; i < n; i++)
		if (get_u16(w + 2 * i) != a[i])
			return false;
	return true;
}

/*
 * block @index at @off (@hsize bytes, header already read into @b) taken from the same
 * block of @prev when every byte but the values is the same (see perfbuf_data_decode):
 * 0; 1 when something differs (nothing taken: decode it in full); -ENOMEM
 */
static int decode_same(struct perfbuf_data *d, struct perfbuf_block *b, const uint8_t *p,
		       size_t off, size_t hsize, const struct perfbuf_prev *prev, uint32_t index)
{
	const struct perfbuf_data *od = prev->d;
	const uint8_t *op = prev->buf, *osizes;
	const struct perfbuf_item *oitems;
	const struct perfbuf_block *ob;
	const uint64_t *ohdrs;
	size_t ioff, at, j, nr, rec;
	uint32_t k, cols;
	uint64_t *values;

	if (index >= od->nr_blocks)
		return 1;
	ob = &od->blocks[index];
	if (b->status || b->type != PERF_COUNTERSET || ob->status || ob->type != PERF_COUNTERSET ||
	    !ob->raw_items || ob->raw_off != off || ob->raw_size != hsize ||
	    off + hsize > prev->size)
		return 1;
	/* the counter header, the counter ids and the PERF_MULTI_INSTANCES header */
	if (memcmp(p + off, op + off, ob->raw_items - off))
		return 1;
	nr = ob->nr;
	cols = ob->nr_cols;
	if (d->names_len + ob->name_bytes >= PERFBUF_NO_NAME ||
	    reserve(&d->ids, &d->cap_ids, d->nr_ids + cols, sizeof(*d->ids)) ||
	    reserve(&d->hdrs, &d->cap_hdrs, d->nr_ids + cols, sizeof(*d->hdrs)) ||
	    reserve_items(d, nr, cols) ||
	    reserve(&d->names, &d->cap_names, d->names_len + ob->name_bytes, 1))
		return -ENOMEM;
	/*
	 * the walk the previous decode checked, at the same offsets: each instance's header
	 * and name, each counter data header compared; the values read by the sizes it found
	 */
	/*
	 * every column's headers alike: one stride and value size per column, compared once
	 * per item without the previous buffer
	 */
	ohdrs = od->hdrs + ob->cols;
	if (reserve(&d->pos, &d->cap_pos, cols, sizeof(*d->pos)))
		return -ENOMEM;
	for (k = 0, rec = 0; k < cols; k++) {
		PERF_COUNTER_DATA h;

		if (!ohdrs[k])
			return 1;
		memcpy(&h, &ohdrs[k], sizeof(h));
		d->pos[k] = (struct perfbuf_colpos){.off = (uint32_t)rec, .size = h.dwDataSize};
		rec += h.dwSize;
	}
	values = d->values + d->nr_values;
	osizes = od->sizes + ob->val0;
	oitems = od->items + ob->first;
	ioff = ob->raw_items;
	for (j = 0; j < nr; j++) {
		const struct perfbuf_item *oit = &oitems[j];

		/* the instance: its size, id and name; ASCII against the decoded name */
		if (FIELD32(p + ioff, PERF_INSTANCE_HEADER, Size) != oit->size ||
		    FIELD32(p + ioff, PERF_INSTANCE_HEADER, InstanceId) != oit->id)
			return 1;
		if (oit->len == oit->units
			    ? !same_ascii(p + ioff + sizeof(PERF_INSTANCE_HEADER),
					  (const uint8_t *)od->names + oit->name, oit->len + 1)
			    : memcmp(p + ioff, op + ioff, oit->size))
			return 1;
		/*
		 * the places come from the previous decode, not from the bytes being checked,
		 * so that the loads do not wait for one another
		 */
		at = ioff + oit->size;
		for (k = 0; k < cols; k++) {
			size_t v = (size_t)k * nr + j;
			const uint8_t *cd = p + at + d->pos[k].off;

			if (get_u64(cd) != ohdrs[k]) /* dwDataSize, dwSize */
				return 1;
			/* the column's one data size: its sizes are those before */
			values[v] = d->pos[k].size == 8	  ? get_u64(cd + sizeof(PERF_COUNTER_DATA))
				    : d->pos[k].size == 4 ? get_u32(cd + sizeof(PERF_COUNTER_DATA))
							  : 0;
		}
		ioff = at + rec;
	}
	memcpy(d->ids + d->nr_ids, od->ids + ob->cols, cols * sizeof(*d->ids));
	memcpy(d->hdrs + d->nr_ids, ohdrs, cols * sizeof(*d->hdrs));
	b->cols = d->nr_ids;
	b->nr_cols = cols;
	d->nr_ids += cols;
	memcpy(d->sizes + d->nr_values, osizes, nr * cols);
	d->nr_values += nr * cols;
	memcpy(d->names + d->names_len, od->names + ob->names0, ob->name_bytes);
	for (j = 0; j < nr; j++) {
		struct perfbuf_item *it = &d->items[d->nr_items++];

		*it = od->items[ob->first + j];
		if (it->name != PERFBUF_NO_NAME)
			it->name = (uint32_t)(it->name - ob->names0 + d->names_len);
	}
	d->names_len += ob->name_bytes;
	b->nr_named = ob->nr_named;
	b->name_bytes = ob->name_bytes;
	b->name_units = ob->name_units;
	b->raw_items = ob->raw_items;
	b->same = true;
	return 0;
}

_Static_assert(sizeof(PERF_COUNTER_DATA) == 8, "a counter data header is one 64-bit word");

int perfbuf_data_decode(const void *buf, size_t size, const uint32_t *spec_ids, size_t nr_specs,
			const struct perfbuf_prev *prev, struct perfbuf_data *d)
{
	const uint8_t *p = buf;
	uint32_t total, i, hsize;
	size_t off = sizeof(PERF_DATA_HEADER);
	int err;

	d->nr_blocks = d->nr_items = d->nr_values = d->nr_ids = d->names_len = 0;
	if (size < sizeof(PERF_DATA_HEADER))
		return -EBADMSG;
	total = FIELD32(p, PERF_DATA_HEADER, dwTotalSize);
	d->hdr.nr_blocks = FIELD32(p, PERF_DATA_HEADER, dwNumCounters);
	if (total < sizeof(PERF_DATA_HEADER) || total > size ||
	    d->hdr.nr_blocks > (total - sizeof(PERF_DATA_HEADER)) / sizeof(PERF_COUNTER_HEADER))
		return -EBADMSG;
	d->hdr.time = (int64_t)FIELD64(p, PERF_DATA_HEADER, PerfTimeStamp);
	d->hdr.time_100ns = (int64_t)FIELD64(p, PERF_DATA_HEADER, PerfTime100NSec);
	d->hdr.freq = (int64_t)FIELD64(p, PERF_DATA_HEADER, PerfFreq);
	d->hdr.total = total;
	if (reserve(&d->blocks, &d->cap_blocks, d->hdr.nr_blocks, sizeof(*d->blocks)))
		return -ENOMEM;
	for (i = 0; i < d->hdr.nr_blocks; i++) {
		struct perfbuf_block *b = &d->blocks[i];
		size_t items0 = d->nr_items, values0 = d->nr_values, ids0 = d->nr_ids;
		size_t names0 = d->names_len;

		if (total - off < sizeof(PERF_COUNTER_HEADER))
			return -EBADMSG;
		hsize = FIELD32(p + off, PERF_COUNTER_HEADER, dwSize);
		if (hsize < sizeof(PERF_COUNTER_HEADER) || hsize > total - off)
			return -EBADMSG;
		*b = (struct perfbuf_block){
			.status = FIELD32(p + off, PERF_COUNTER_HEADER, dwStatus),
			.type = FIELD32(p + off, PERF_COUNTER_HEADER, dwType),
			.cols = d->nr_ids,
			.first = d->nr_items,
			.val0 = d->nr_values,
			.names0 = d->names_len,
			.raw_off = off,
			.raw_size = hsize,
		};
		err = prev && prev->d ? decode_same(d, b, p, off, hsize, prev, i) : 1;
		if (err < 0)
			return err;
		if (err)
			err = decode_payload(
				d, b, p, off + sizeof(PERF_COUNTER_HEADER), off + hsize,
				spec_ids && i < nr_specs ? spec_ids[i] : PERF_WILDCARD_COUNTER);
		if (err < 0)
			return err;
		if (err == MALFORMED) {
			/* a bad payload spoils its own block only: dwSize still finds the next */
			d->nr_items = items0;
			d->nr_values = values0;
			d->nr_ids = ids0;
			d->names_len = names0;
			*b = (struct perfbuf_block){.status = ERROR_INVALID_DATA,
						    .malformed = true,
						    .type = b->type,
						    .cols = ids0,
						    .first = items0,
						    .val0 = values0,
						    .names0 = names0,
						    .raw_off = off,
						    .raw_size = hsize};
		}
		b->nr = d->nr_items - b->first;
		d->nr_blocks = i + 1;
		off += hsize;
	}
	return 0;
}

void perfbuf_data_release(struct perfbuf_data *d)
{
	free(d->blocks);
	free(d->items);
	free(d->values);
	free(d->sizes);
	free(d->ids);
	free(d->hdrs);
	free(d->pos);
	free(d->names);
	memset(d, 0, sizeof(*d));
}
