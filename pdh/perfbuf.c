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
size_t pdh_perfbuf_utf16_to_utf8(const void *src, size_t max_units, char *dst, size_t dst_size)
{
	/* -ENOSPC leaves what fits, cut at a character boundary: the rule here */
	perflib_utf16_to_utf8(src, max_units, dst, dst_size);
	return strlen(dst);
}

char *pdh_perfbuf_utf16_dup(const void *src, size_t max_units)
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

/* the units of a NUL-terminated UTF-16 string in [p, p + size), or -1 without NUL */
static long wstr_units(const uint8_t *p, size_t size)
{
	size_t i;

	for (i = 0; i + 1 < size; i += 2)
		if (!get_u16(p + i))
			return (long)(i / 2);
	return -1;
}

int pdh_perfbuf_string(const void *buf, size_t size, char **ret)
{
	long units = wstr_units(buf, size);
	char *s;

	if (units < 0)
		return -EBADMSG;
	s = pdh_perfbuf_utf16_dup(buf, (size_t)units);
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

/* ---- registration ---------------------------------------------------------------------- */

int pdh_perfbuf_reg_parse(const void *buf, size_t size, struct pdh_perfbuf_reg *ret)
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

void pdh_perfbuf_reg_counter(const struct pdh_perfbuf_reg *reg, uint32_t i,
			     struct pdh_perfbuf_counter *ret)
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

int pdh_perfbuf_strings_parse(const void *buf, size_t size,
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

int pdh_perfbuf_instances_parse(const void *buf, size_t size,
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

/* one walk of pdh_perfbuf_data_parse */
struct walk {
	const uint8_t *p; /* the buffer */
	const struct pdh_perfbuf_data_ops *ops;
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

int pdh_perfbuf_data_parse(const void *buf, size_t size, const uint32_t *spec_ids, size_t nr_specs,
			   const struct pdh_perfbuf_data_ops *ops, void *ctx)
{
	struct walk w = {.p = buf, .ops = ops, .ctx = ctx};
	struct pdh_perfbuf_data_header hdr;
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
