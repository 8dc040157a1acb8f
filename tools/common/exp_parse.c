// SPDX-License-Identifier: MIT
/*
 * exp_parse.c - read the consumer API's registration and data buffers into exp_set
 * snapshots (see exp_parse.h). Every size and offset is checked against the bytes that
 * are there before it is used.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exp_parse.h"

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* encode code point @cp as UTF-8 into @dst if @room allows; returns its length or 0 */
static size_t put_utf8(char *dst, size_t room, uint32_t cp)
{
	if (cp < 0x80 && room >= 1) {
		dst[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800 && room >= 2) {
		dst[0] = (char)(0xC0 | (cp >> 6));
		dst[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp >= 0x800 && cp < 0x10000 && room >= 3) {
		dst[0] = (char)(0xE0 | (cp >> 12));
		dst[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		dst[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	if (cp >= 0x10000 && room >= 4) {
		dst[0] = (char)(0xF0 | (cp >> 18));
		dst[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		dst[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		dst[3] = (char)(0x80 | (cp & 0x3F));
		return 4;
	}
	return 0;
}

size_t exp_utf16_to_utf8(const void *src, size_t max_units, char *dst, size_t dst_size)
{
	const uint8_t *p = src;
	size_t i, len = 0;

	for (i = 0; i < max_units; i++) {
		uint32_t cp = get16(p + 2 * i);
		size_t n;

		if (!cp)
			break;
		if (cp >= 0xD800 && cp < 0xDC00 && i + 1 < max_units) {
			uint32_t lo = get16(p + 2 * (i + 1));

			if (lo >= 0xDC00 && lo < 0xE000) {
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				i++;
			}
		}
		if (cp >= 0xD800 && cp < 0xE000)
			cp = 0xFFFD; /* a surrogate left unpaired */
		n = put_utf8(dst + len, dst_size - 1 - len, cp);
		if (!n)
			break;
		len += n;
	}
	dst[len] = '\0';
	return len;
}

char *exp_utf16_dup(const void *src, size_t max_units)
{
	size_t units = 0, size;
	char *s;

	while (units < max_units && get16((const uint8_t *)src + 2 * units))
		units++;
	size = 3 * units + 1; /* a unit gives at most 3 bytes; a pair of units 4 */
	s = malloc(size);
	if (s)
		exp_utf16_to_utf8(src, units, s, size);
	return s;
}

/* ---- registration ----------------------------------------------------------------- */

int exp_parse_reg(const void *buf, size_t len, struct exp_set **ret_set)
{
	const uint8_t *p = buf;
	struct exp_set *set;
	uint32_t nr, i;

	if (len < sizeof(PERF_COUNTERSET_REG_INFO))
		return -EINVAL;
	nr = get32(p + offsetof(PERF_COUNTERSET_REG_INFO, NumCounters));
	if (nr > (len - sizeof(PERF_COUNTERSET_REG_INFO)) / sizeof(PERF_COUNTER_REG_INFO))
		return -EINVAL;
	set = calloc(1, sizeof(*set));
	if (!set)
		return -ENOMEM;
	memcpy(&set->guid, p, sizeof(GUID));
	set->instance_type = get32(p + offsetof(PERF_COUNTERSET_REG_INFO, InstanceType));
	set->counters = calloc(nr ? nr : 1, sizeof(*set->counters));
	if (!set->counters) {
		exp_set_free(set);
		return -ENOMEM;
	}
	set->nr_counters = nr;
	for (i = 0; i < nr; i++) {
		const uint8_t *q = p + sizeof(PERF_COUNTERSET_REG_INFO) +
				   (size_t)i * sizeof(PERF_COUNTER_REG_INFO);
		struct exp_counter *c = &set->counters[i];

		c->id = get32(q + offsetof(PERF_COUNTER_REG_INFO, CounterId));
		c->type = get32(q + offsetof(PERF_COUNTER_REG_INFO, Type));
		c->attrib = get64(q + offsetof(PERF_COUNTER_REG_INFO, Attrib));
		c->base_id = get32(q + offsetof(PERF_COUNTER_REG_INFO, BaseCounterId));
		c->time_id = get32(q + offsetof(PERF_COUNTER_REG_INFO, PerfTimeId));
		c->freq_id = get32(q + offsetof(PERF_COUNTER_REG_INFO, PerfFreqId));
		c->multi_id = get32(q + offsetof(PERF_COUNTER_REG_INFO, MultiId));
		c->base = c->time = c->freq = -1;
	}
	*ret_set = set;
	return 0;
}

int exp_parse_strings(const void *buf, size_t len, struct exp_set *set, bool help)
{
	const uint8_t *p = buf;
	uint32_t size, nr, i;

	if (len < sizeof(PERF_STRING_BUFFER_HEADER))
		return -EINVAL;
	size = get32(p);
	nr = get32(p + 4);
	if (size > len || size < sizeof(PERF_STRING_BUFFER_HEADER) ||
	    nr > (size - sizeof(PERF_STRING_BUFFER_HEADER)) / sizeof(PERF_STRING_COUNTER_HEADER))
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		const uint8_t *h = p + sizeof(PERF_STRING_BUFFER_HEADER) +
				   (size_t)i * sizeof(PERF_STRING_COUNTER_HEADER);
		uint32_t id = get32(h), off = get32(h + 4);
		size_t c;
		char *s, **slot;

		if (off == 0xFFFFFFFFu)
			continue;
		if (off >= size)
			return -EINVAL;
		for (c = 0; c < set->nr_counters && set->counters[c].id != id; c++)
			;
		if (c == set->nr_counters)
			continue;
		s = exp_utf16_dup(p + off, (size - off) / 2);
		if (!s)
			return -ENOMEM;
		slot = help ? &set->counters[c].help : &set->counters[c].name;
		free(*slot);
		*slot = s;
	}
	return 0;
}

/* ---- collection ------------------------------------------------------------------- */

/* one PERF_COUNTER_DATA block at @p with @room bytes; false when malformed */
static bool counter_data(const uint8_t *p, size_t room, uint32_t *ret_size, bool *ret_have,
			 uint64_t *ret_value)
{
	uint32_t data_size, size;

	if (room < sizeof(PERF_COUNTER_DATA))
		return false;
	data_size = get32(p);
	size = get32(p + 4);
	if (size < sizeof(PERF_COUNTER_DATA) || size > room ||
	    data_size > size - sizeof(PERF_COUNTER_DATA))
		return false;
	*ret_size = size;
	*ret_have = data_size == 4 || data_size == 8;
	*ret_value = data_size == 8 ? get64(p + 8) : data_size == 4 ? get32(p + 8) : 0;
	return true;
}

/* the counter indices of a PERF_MULTI_COUNTERS block; -1 for ids the set lacks */
static int multi_counters(const uint8_t *p, size_t room, const struct exp_set *set, int **ret_idx,
			  uint32_t *ret_nr, uint32_t *ret_size)
{
	uint32_t size, nr, i;
	int *idx;

	if (room < sizeof(PERF_MULTI_COUNTERS))
		return -EINVAL;
	size = get32(p);
	nr = get32(p + 4);
	if (size > room || size < sizeof(PERF_MULTI_COUNTERS) ||
	    nr > (size - sizeof(PERF_MULTI_COUNTERS)) / 4)
		return -EINVAL;
	idx = malloc((nr ? nr : 1) * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		uint32_t id = get32(p + sizeof(PERF_MULTI_COUNTERS) + 4 * (size_t)i);
		size_t c;

		for (c = 0; c < set->nr_counters && set->counters[c].id != id; c++)
			;
		idx[i] = c < set->nr_counters ? (int)c : -1;
	}
	*ret_idx = idx;
	*ret_nr = nr;
	*ret_size = size;
	return 0;
}

/* @nr PERF_COUNTER_DATA blocks for instance @inst, counters @idx; returns bytes used */
static int read_values(struct exp_set *set, size_t inst, const int *idx, uint32_t nr,
		       const uint8_t *p, size_t room, size_t *ret_used)
{
	size_t used = 0;
	uint32_t j;

	for (j = 0; j < nr; j++) {
		uint32_t size;
		uint64_t v;
		bool have;

		if (!counter_data(p + used, room - used, &size, &have, &v))
			return -EINVAL;
		if (have && idx[j] >= 0)
			exp_set_value(set, inst, (size_t)idx[j], v);
		used += size;
	}
	*ret_used = used;
	return 0;
}

/* PERF_MULTI_INSTANCES at @p: each instance a header, then @nr data blocks (or one) */
static int read_instances(struct exp_set *set, const int *idx, uint32_t nr, const uint8_t *p,
			  size_t room)
{
	char name[EXP_NAME_MAX];
	uint32_t total, count, k;
	size_t off = sizeof(PERF_MULTI_INSTANCES);
	int err;

	if (room < sizeof(PERF_MULTI_INSTANCES))
		return -EINVAL;
	total = get32(p);
	count = get32(p + 4);
	if (total > room || total < sizeof(PERF_MULTI_INSTANCES))
		return -EINVAL;
	for (k = 0; k < count; k++) {
		uint32_t hsize;
		size_t inst, used;

		if (total - off < sizeof(PERF_INSTANCE_HEADER))
			return -EINVAL;
		hsize = get32(p + off);
		if (hsize < sizeof(PERF_INSTANCE_HEADER) || hsize > total - off)
			return -EINVAL;
		exp_utf16_to_utf8(p + off + sizeof(PERF_INSTANCE_HEADER),
				  (hsize - sizeof(PERF_INSTANCE_HEADER)) / 2, name, sizeof(name));
		err = exp_set_add_instance(set, get32(p + off + 4), name, &inst);
		if (err)
			return err;
		off += hsize;
		err = read_values(set, inst, idx, nr, p + off, total - off, &used);
		if (err)
			return err;
		off += used;
	}
	return 0;
}

/* the payload of one PERF_COUNTER_HEADER block for @set */
static int read_block(struct exp_set *set, uint32_t type, const uint8_t *p, size_t room)
{
	uint32_t nr = 0, msize;
	int *idx = NULL;
	size_t inst, used;
	int err;

	switch (type) {
	case PERF_MULTIPLE_COUNTERS:
		err = multi_counters(p, room, set, &idx, &nr, &msize);
		if (!err)
			err = exp_set_add_instance(set, 0, NULL, &inst);
		if (!err)
			err = read_values(set, inst, idx, nr, p + msize, room - msize, &used);
		break;
	case PERF_COUNTERSET:
		err = multi_counters(p, room, set, &idx, &nr, &msize);
		if (!err)
			err = read_instances(set, idx, nr, p + msize, room - msize);
		break;
	default:
		/* PERF_MULTIPLE_INSTANCES and PERF_SINGLE_COUNTER name their counter only in
		 * the query specification: the exporter asks for whole sets, never these */
		return 0;
	}
	free(idx);
	return err;
}

int exp_parse_data(const void *buf, size_t len, struct exp_set *const *by_index, size_t nr_index,
		   int64_t *ret_freq, size_t *ret_bad)
{
	const uint8_t *p = buf;
	uint32_t total, nr, i;
	size_t off = sizeof(PERF_DATA_HEADER), bad = 0;
	int err;

	if (len < sizeof(PERF_DATA_HEADER))
		return -EINVAL;
	total = get32(p);
	nr = get32(p + 4);
	if (total > len || total < sizeof(PERF_DATA_HEADER))
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		struct exp_set *set = i < nr_index ? by_index[i] : NULL;
		uint32_t status, type, size;
		size_t before;

		if (total - off < sizeof(PERF_COUNTER_HEADER))
			return -EINVAL;
		status = get32(p + off);
		type = get32(p + off + 4);
		size = get32(p + off + 8);
		if (size < sizeof(PERF_COUNTER_HEADER) || size > total - off)
			return -EINVAL;
		if (set && status == 0 && type != PERF_ERROR_RETURN) {
			before = set->nr_instances;
			err = read_block(set, type, p + off + sizeof(PERF_COUNTER_HEADER),
					 size - sizeof(PERF_COUNTER_HEADER));
			if (err == -ENOMEM)
				return err;
			if (err) {
				/* a half-read block would show some instances only: show none */
				set->nr_instances = before;
				bad++;
			}
		}
		off += size;
	}
	*ret_freq = (int64_t)get64(p + offsetof(PERF_DATA_HEADER, PerfFreq));
	*ret_bad = bad;
	return 0;
}
