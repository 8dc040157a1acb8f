/* SPDX-License-Identifier: MIT */
/*
 * tp_buf.c - bounds-checked decoding of consumer-API buffers for typeperf. See tp_buf.h;
 * byte layouts are those of perflib-api.md section 3 (asserted in userspace/provider.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tp_buf.h"
#include "tp_path.h"

/* sizes of the Windows structures, from perflib.h */
#define REG_SET_SIZE sizeof(PERF_COUNTERSET_REG_INFO) /* 32 */
#define REG_CTR_SIZE sizeof(PERF_COUNTER_REG_INFO)    /* 48 */
#define DATA_HDR_SIZE sizeof(PERF_DATA_HEADER)	      /* 48 */
#define CTR_HDR_SIZE sizeof(PERF_COUNTER_HEADER)      /* 16 */
#define SMALL_HDR_SIZE 8 /* PERF_INSTANCE_HEADER, PERF_MULTI_*, PERF_COUNTER_DATA */

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

static uint16_t get_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* append the UTF-8 encoding of @cp to @out (room for 4 bytes is the caller's) */
static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

char *tp_utf16_to_utf8(const void *src, size_t units)
{
	const uint8_t *p = src;
	size_t i, len = 0;
	uint32_t cp, lo;
	char *out;

	/* at most 3 bytes per unit (a surrogate pair is 4 bytes for 2 units) */
	out = malloc(units * 3 + 1);
	if (!out)
		return NULL;
	for (i = 0; i < units; i++) {
		cp = get_u16(p + 2 * i);
		if (!cp)
			break;
		if (cp >= 0xD800 && cp < 0xDC00 && i + 1 < units) {
			lo = get_u16(p + 2 * (i + 1));
			if (lo >= 0xDC00 && lo < 0xE000) {
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				i++;
			} else {
				cp = 0xFFFD;
			}
		} else if (cp >= 0xD800 && cp < 0xE000) {
			cp = 0xFFFD;
		}
		len += put_utf8(out + len, cp);
	}
	out[len] = '\0';
	return out;
}

/* one code point from UTF-8 at *ps; -1 when invalid */
static long get_utf8(const unsigned char **ps)
{
	const unsigned char *s = *ps;
	long cp;
	int n, i;

	if (s[0] < 0x80) {
		*ps = s + 1;
		return s[0];
	}
	if ((s[0] & 0xE0) == 0xC0)
		n = 1, cp = s[0] & 0x1F;
	else if ((s[0] & 0xF0) == 0xE0)
		n = 2, cp = s[0] & 0x0F;
	else if ((s[0] & 0xF8) == 0xF0)
		n = 3, cp = s[0] & 0x07;
	else
		return -1;
	for (i = 1; i <= n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return -1;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	/* overlong forms, surrogates and values past U+10FFFF are invalid */
	if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
	    (cp >= 0xD800 && cp < 0xE000) || cp > 0x10FFFF)
		return -1;
	*ps = s + n + 1;
	return cp;
}

int tp_utf8_to_utf16(const char *src, WCHAR **ret, size_t *ret_units)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t n = 0;
	WCHAR *out;
	long cp;

	/* never more units than bytes, plus the NUL */
	out = calloc(strlen(src) + 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	while (*s) {
		cp = get_utf8(&s);
		if (cp < 0) {
			free(out);
			return -EINVAL;
		}
		if (cp >= 0x10000) {
			out[n++] = (WCHAR)(0xD800 + ((cp - 0x10000) >> 10));
			out[n++] = (WCHAR)(0xDC00 + ((cp - 0x10000) & 0x3FF));
		} else {
			out[n++] = (WCHAR)cp;
		}
	}
	out[n++] = 0;
	*ret = out;
	*ret_units = n;
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

/* a NUL-terminated UTF-16 string inside [p, p + size) as UTF-8 */
static int wstr_dup(const uint8_t *p, size_t size, char **ret)
{
	long units = wstr_units(p, size);

	if (units < 0)
		return -EBADMSG;
	*ret = tp_utf16_to_utf8(p, (size_t)units);
	return *ret ? 0 : -ENOMEM;
}

int tp_string_parse(const void *buf, size_t size, char **ret)
{
	return wstr_dup(buf, size, ret);
}

int tp_reg_parse(const void *buf, size_t size, struct tp_set *set)
{
	const uint8_t *p = buf, *c;
	struct tp_counter *ctrs;
	uint32_t n, i;

	if (size < REG_SET_SIZE)
		return -EBADMSG;
	n = get_u32(p + offsetof(PERF_COUNTERSET_REG_INFO, NumCounters));
	if (n > (size - REG_SET_SIZE) / REG_CTR_SIZE)
		return -EBADMSG;
	ctrs = calloc(n ? n : 1, sizeof(*ctrs));
	if (!ctrs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		c = p + REG_SET_SIZE + (size_t)i * REG_CTR_SIZE;
		ctrs[i].id = get_u32(c + offsetof(PERF_COUNTER_REG_INFO, CounterId));
		ctrs[i].type = get_u32(c + offsetof(PERF_COUNTER_REG_INFO, Type));
		ctrs[i].attrib = get_u64(c + offsetof(PERF_COUNTER_REG_INFO, Attrib));
		ctrs[i].scale = (int32_t)get_u32(c + offsetof(PERF_COUNTER_REG_INFO, DefaultScale));
		ctrs[i].base_id = get_u32(c + offsetof(PERF_COUNTER_REG_INFO, BaseCounterId));
		ctrs[i].time_id = get_u32(c + offsetof(PERF_COUNTER_REG_INFO, PerfTimeId));
		ctrs[i].freq_id = get_u32(c + offsetof(PERF_COUNTER_REG_INFO, PerfFreqId));
		ctrs[i].multi_id = get_u32(c + offsetof(PERF_COUNTER_REG_INFO, MultiId));
	}
	memcpy(&set->guid, p, sizeof(GUID));
	set->instance_type = get_u32(p + offsetof(PERF_COUNTERSET_REG_INFO, InstanceType));
	set->counters = ctrs;
	set->nr_counters = n;
	return 0;
}

int tp_names_parse(const void *buf, size_t size, struct tp_set *set)
{
	const uint8_t *p = buf, *h;
	uint32_t total, n, i, id, off;
	size_t k;
	char *name;
	int err;

	if (size < SMALL_HDR_SIZE)
		return -EBADMSG;
	total = get_u32(p);
	n = get_u32(p + 4);
	/* the block is dwSize bytes, which must lie inside what was returned */
	if (total > size || total < SMALL_HDR_SIZE || n > (total - SMALL_HDR_SIZE) / 8)
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		h = p + SMALL_HDR_SIZE + (size_t)i * 8;
		id = get_u32(h);
		off = get_u32(h + 4);
		if (off == 0xFFFFFFFFu)
			continue; /* string absent */
		if (off >= total)
			return -EBADMSG;
		err = wstr_dup(p + off, total - off, &name);
		if (err)
			return err;
		for (k = 0; k < set->nr_counters; k++) {
			if (set->counters[k].id == id && !set->counters[k].name) {
				set->counters[k].name = name;
				name = NULL;
				break;
			}
		}
		free(name); /* unknown id or a second string for one id */
	}
	return 0;
}

/* number the duplicate names of items[first .. first + nr) */
static int number_items(struct tp_item *items, size_t nr)
{
	const char **names;
	unsigned int *dup;
	size_t i;
	int err;

	if (!nr)
		return 0;
	names = calloc(nr, sizeof(*names));
	dup = calloc(nr, sizeof(*dup));
	err = -ENOMEM;
	if (names && dup) {
		for (i = 0; i < nr; i++)
			names[i] = items[i].name ? items[i].name : "";
		err = tp_dup_indexes(names, nr, dup);
		for (i = 0; !err && i < nr; i++)
			items[i].dup = dup[i];
	}
	free(names);
	free(dup);
	return err;
}

/* the name of the instance header block at @p (@size bytes, Size already checked) */
static int instance_name(const uint8_t *p, uint32_t size, char **ret)
{
	return wstr_dup(p + SMALL_HDR_SIZE, size - SMALL_HDR_SIZE, ret);
}

int tp_instances_parse(const void *buf, size_t size, struct tp_instance **ret, size_t *ret_nr)
{
	const uint8_t *p = buf;
	struct tp_instance *inst = NULL, *grown;
	size_t off = 0, nr = 0, cap = 0, i;
	const char **names = NULL;
	unsigned int *dup = NULL;
	uint32_t bsize;
	int err = 0;

	while (off < size) {
		if (size - off < SMALL_HDR_SIZE + 2) {
			err = -EBADMSG;
			goto out;
		}
		bsize = get_u32(p + off);
		if (bsize < SMALL_HDR_SIZE + 2 || bsize > size - off) {
			err = -EBADMSG;
			goto out;
		}
		if (nr == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(inst, cap * sizeof(*inst));
			if (!grown) {
				err = -ENOMEM;
				goto out;
			}
			inst = grown;
		}
		inst[nr].id = get_u32(p + off + 4);
		inst[nr].dup = 0;
		err = instance_name(p + off, bsize, &inst[nr].name);
		if (err)
			goto out;
		nr++;
		off += bsize;
	}
	if (nr) {
		names = calloc(nr, sizeof(*names));
		dup = calloc(nr, sizeof(*dup));
		if (!names || !dup) {
			err = -ENOMEM;
			goto out;
		}
		for (i = 0; i < nr; i++)
			names[i] = inst[i].name;
		err = tp_dup_indexes(names, nr, dup);
		for (i = 0; !err && i < nr; i++)
			inst[i].dup = dup[i];
	}
out:
	free(names);
	free(dup);
	if (err) {
		for (i = 0; i < nr; i++)
			free(inst[i].name);
		free(inst);
		return err;
	}
	*ret = inst;
	*ret_nr = nr;
	return 0;
}

/* ---- PerfQueryCounterData ------------------------------------------------------------ */

/* growable arrays of a tp_data under construction */
static int add_item(struct tp_data *d, size_t *cap, struct tp_item **ret)
{
	struct tp_item *grown;

	if (d->nr_items == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		grown = realloc(d->items, *cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		d->items = grown;
	}
	*ret = &d->items[d->nr_items++];
	memset(*ret, 0, sizeof(**ret));
	(*ret)->first = d->nr_values;
	return 0;
}

static int add_value(struct tp_data *d, size_t *cap, uint32_t id, uint32_t size, uint64_t v)
{
	struct tp_value *grown;

	if (d->nr_values == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		grown = realloc(d->values, *cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		d->values = grown;
	}
	d->values[d->nr_values++] = (struct tp_value){.counter_id = id, .size = size, .value = v};
	return 0;
}

struct builder {
	struct tp_data *d;
	size_t item_cap, value_cap;
};

/*
 * one PERF_COUNTER_DATA block at *@off inside [0, @end) of @p: value appended to the
 * current item; -EBADMSG when it does not fit
 */
static int counter_data(struct builder *b, const uint8_t *p, size_t *off, size_t end, uint32_t id)
{
	uint32_t dsize, bsize, vsize = 0;
	uint64_t v = 0;
	int err;

	if (end - *off < SMALL_HDR_SIZE)
		return -EBADMSG;
	dsize = get_u32(p + *off);
	bsize = get_u32(p + *off + 4);
	/* the sample's sanity rule: the value fits the block, the block fits the parent */
	if (bsize < SMALL_HDR_SIZE || bsize > end - *off || dsize > bsize - SMALL_HDR_SIZE)
		return -EBADMSG;
	if (dsize == 4) {
		v = get_u32(p + *off + SMALL_HDR_SIZE);
		vsize = 4;
	} else if (dsize == 8) {
		v = get_u64(p + *off + SMALL_HDR_SIZE);
		vsize = 8;
	}
	err = add_value(b->d, &b->value_cap, id, vsize, v);
	if (err)
		return err;
	b->d->items[b->d->nr_items - 1].nr++;
	*off += bsize;
	return 0;
}

/* PERF_MULTI_COUNTERS at *@off: the ids (pointer into @p) and their count */
static int multi_counters(const uint8_t *p, size_t *off, size_t end, const uint8_t **ret_ids,
			  uint32_t *ret_n)
{
	uint32_t bsize, n;

	if (end - *off < SMALL_HDR_SIZE)
		return -EBADMSG;
	bsize = get_u32(p + *off);
	n = get_u32(p + *off + 4);
	/* dwSize may be rounded up to 8 (odd counts); it must hold the ids */
	if (bsize > end - *off || bsize < SMALL_HDR_SIZE || n > (bsize - SMALL_HDR_SIZE) / 4)
		return -EBADMSG;
	*ret_ids = p + *off + SMALL_HDR_SIZE;
	*ret_n = n;
	*off += bsize;
	return 0;
}

/* PERF_MULTI_INSTANCES at *@off, then per instance a header and @n counter data blocks */
static int multi_instances(struct builder *b, const uint8_t *p, size_t *off, size_t end,
			   const uint8_t *ids, uint32_t n, uint32_t single_id)
{
	size_t ioff, iend, first_item = b->d->nr_items;
	uint32_t total, count, i, k, hsize;
	struct tp_item *item;
	int err;

	if (end - *off < SMALL_HDR_SIZE)
		return -EBADMSG;
	total = get_u32(p + *off);
	count = get_u32(p + *off + 4);
	if (total < SMALL_HDR_SIZE || total > end - *off)
		return -EBADMSG;
	ioff = *off + SMALL_HDR_SIZE;
	iend = *off + total;
	/* each instance takes at least a header: bound the count before using it */
	if (count > (iend - ioff) / SMALL_HDR_SIZE)
		return -EBADMSG;
	for (i = 0; i < count; i++) {
		if (iend - ioff < SMALL_HDR_SIZE + 2)
			return -EBADMSG;
		hsize = get_u32(p + ioff);
		if (hsize < SMALL_HDR_SIZE + 2 || hsize > iend - ioff)
			return -EBADMSG;
		err = add_item(b->d, &b->item_cap, &item);
		if (err)
			return err;
		item->instance_id = get_u32(p + ioff + 4);
		err = instance_name(p + ioff, hsize, &item->name);
		if (err)
			return err;
		ioff += hsize;
		for (k = 0; k < (ids ? n : 1); k++) {
			err = counter_data(b, p, &ioff, iend,
					   ids ? get_u32(ids + 4 * k) : single_id);
			if (err)
				return err;
		}
	}
	*off = iend;
	return number_items(b->d->items + first_item, b->d->nr_items - first_item);
}

/* the payload of one counter header: [off, end) of @p */
static int block_payload(struct builder *b, const uint8_t *p, size_t off, size_t end, uint32_t type,
			 uint32_t spec_id)
{
	const uint8_t *ids = NULL;
	struct tp_item *item;
	uint32_t n = 0, k;
	int err;

	switch (type) {
	case PERF_ERROR_RETURN:
		return 0;
	case PERF_SINGLE_COUNTER:
		err = add_item(b->d, &b->item_cap, &item);
		return err ? err : counter_data(b, p, &off, end, spec_id);
	case PERF_MULTIPLE_COUNTERS:
		err = multi_counters(p, &off, end, &ids, &n);
		if (!err)
			err = add_item(b->d, &b->item_cap, &item);
		for (k = 0; !err && k < n; k++)
			err = counter_data(b, p, &off, end, get_u32(ids + 4 * k));
		return err;
	case PERF_MULTIPLE_INSTANCES:
		return multi_instances(b, p, &off, end, NULL, 0, spec_id);
	case PERF_COUNTERSET:
		err = multi_counters(p, &off, end, &ids, &n);
		return err ? err : multi_instances(b, p, &off, end, ids, n, 0);
	default:
		return -EBADMSG;
	}
}

/* drop what a failed block appended: items and values from the marks on */
static void block_rollback(struct tp_data *d, size_t nr_items, size_t nr_values)
{
	while (d->nr_items > nr_items)
		free(d->items[--d->nr_items].name);
	d->nr_values = nr_values;
}

int tp_data_parse(const void *buf, size_t size, const uint32_t *spec_ids, size_t nr_specs,
		  struct tp_data *ret)
{
	struct tp_data d = {0};
	struct builder b = {.d = &d};
	const uint8_t *p = buf;
	uint32_t total, n, i, hsize, type, spec_id;
	size_t off, items0, values0;
	int err = -EBADMSG;

	if (size < DATA_HDR_SIZE)
		return -EBADMSG;
	total = get_u32(p);
	n = get_u32(p + 4);
	if (total < DATA_HDR_SIZE || total > size || n > (total - DATA_HDR_SIZE) / CTR_HDR_SIZE)
		return -EBADMSG;
	d.time = (int64_t)get_u64(p + offsetof(PERF_DATA_HEADER, PerfTimeStamp));
	d.time_100ns = (int64_t)get_u64(p + offsetof(PERF_DATA_HEADER, PerfTime100NSec));
	d.freq = (int64_t)get_u64(p + offsetof(PERF_DATA_HEADER, PerfFreq));
	d.blocks = calloc(n ? n : 1, sizeof(*d.blocks));
	if (!d.blocks)
		return -ENOMEM;
	d.nr_blocks = n;
	off = DATA_HDR_SIZE;
	for (i = 0; i < n; i++) {
		if (total - off < CTR_HDR_SIZE)
			goto out;
		hsize = get_u32(p + off + offsetof(PERF_COUNTER_HEADER, dwSize));
		if (hsize < CTR_HDR_SIZE || hsize > total - off)
			goto out;
		type = get_u32(p + off + offsetof(PERF_COUNTER_HEADER, dwType));
		d.blocks[i].status = get_u32(p + off);
		d.blocks[i].type = type;
		d.blocks[i].first = d.nr_items;
		spec_id = spec_ids && i < nr_specs ? spec_ids[i] : PERF_WILDCARD_COUNTER;
		items0 = d.nr_items;
		values0 = d.nr_values;
		err = block_payload(&b, p, off + CTR_HDR_SIZE, off + hsize, type, spec_id);
		if (err == -ENOMEM)
			goto out;
		if (err) {
			/* this block is unusable; the next one is still found by dwSize */
			block_rollback(&d, items0, values0);
			d.blocks[i].status = ERROR_INVALID_DATA;
		}
		d.blocks[i].nr = d.nr_items - d.blocks[i].first;
		off += hsize;
	}
	*ret = d;
	return 0;
out:
	tp_data_free(&d);
	return err == -ENOMEM ? err : -EBADMSG;
}

void tp_data_free(struct tp_data *data)
{
	size_t i;

	for (i = 0; i < data->nr_items; i++)
		free(data->items[i].name);
	free(data->items);
	free(data->values);
	free(data->blocks);
	memset(data, 0, sizeof(*data));
}

const struct tp_item *tp_data_item(const struct tp_data *data, size_t block, const char *name,
				   unsigned int dup)
{
	const struct tp_block *b;
	size_t i;

	if (block >= data->nr_blocks)
		return NULL;
	b = &data->blocks[block];
	if (b->status != ERROR_SUCCESS || !b->nr)
		return NULL;
	if (!name)
		return &data->items[b->first];
	for (i = b->first; i < b->first + b->nr; i++) {
		const struct tp_item *it = &data->items[i];

		if (it->name && it->dup == dup && tp_name_equal(it->name, name))
			return it;
	}
	return NULL;
}

bool tp_item_value(const struct tp_data *data, const struct tp_item *item, uint32_t id,
		   uint64_t *ret)
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
