// SPDX-License-Identifier: MIT
/*
 * info.c - the info value of a counter set (layout.h): building it from a registration,
 * checking one read from a map, its string pool, and the geometry that follows from it
 * (slot offsets and size, segment sizes and count).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static uint32_t round_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

/* the slot geometry that follows from the counters and the name capacity */
static void slot_geometry(uint32_t nr_counters, uint32_t name_max, bool byref, uint32_t *ret_name,
			  uint32_t *ret_ascii, uint32_t *ret_ref, uint32_t *ret_size)
{
	uint32_t name = PERFLIB_COUNTERS_OFFSET + 8 * nr_counters;
	uint32_t ascii = round_up(name + 2 * name_max, 8);
	uint32_t end = ascii + PERFLIB_ASCII_MAX;
	uint32_t ref = 0;

	if (byref) {
		/* values, then a bitmap of counters whose address is NULL */
		ref = end;
		end += 8 * nr_counters + 8 * ((nr_counters + 63) / 64);
	}
	*ret_name = name;
	*ret_ascii = ascii;
	*ret_ref = ref;
	*ret_size = round_up(end, PERFLIB_SLOT_ALIGN);
}

static uint32_t gcd32(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * The segment geometry for slots of @slot_size and a limit of @limit slots: segment 0 is
 * whole pages (so every segment starts on a page of the reservation) and at least
 * PERFLIB_SEG0_MIN_BYTES; segments double; the capacity is @limit exactly (the last
 * segment may hold slots past it, never used). -E2BIG for more than PERFLIB_MAX_SEGS
 * segments.
 */
static int seg_geometry(uint32_t slot_size, uint32_t limit, uint32_t *ret_seg0,
			uint32_t *ret_capacity)
{
	uint32_t seg0 = 4096 / gcd32(4096, slot_size), k;

	while ((uint64_t)seg0 * slot_size < PERFLIB_SEG0_MIN_BYTES)
		seg0 *= 2;
	for (k = 1; k <= PERFLIB_MAX_SEGS; k++) {
		if (perflib_seg_first(k, seg0) >= limit)
			break;
	}
	if (k > PERFLIB_MAX_SEGS || perflib_seg_first(k, seg0) > UINT32_MAX)
		return -E2BIG;
	*ret_seg0 = seg0;
	*ret_capacity = limit;
	return 0;
}

/* segments that hold a capacity (0 if more than PERFLIB_MAX_SEGS) */
static uint32_t seg_count(uint32_t capacity, uint32_t seg0)
{
	uint32_t k;

	for (k = 1; k <= PERFLIB_MAX_SEGS; k++) {
		if (perflib_seg_first(k, seg0) >= capacity)
			return k;
	}
	return 0;
}

uint32_t perflib_info_segs(const struct perflib_info *info)
{
	return seg_count(info->capacity, info->seg0_slots);
}

const WCHAR *perflib_info_string(const struct perflib_info *info, uint32_t off, size_t *ret_units)
{
	const WCHAR *s;

	if (off == PERFLIB_STR_NONE || off >= info->strings_size)
		return NULL;
	s = (const WCHAR *)((const uint8_t *)info + info->strings_offset + off);
	if (ret_units)
		*ret_units = perflib_wcsnlen(s, (info->strings_size - off) / 2);
	return s;
}

static bool string_ok(const struct perflib_info *info, uint32_t off)
{
	size_t units;
	const WCHAR *s;

	if (off == PERFLIB_STR_NONE)
		return true;
	if (off % 2 || off >= info->strings_size)
		return false;
	s = perflib_info_string(info, off, &units);
	/* the terminating NUL must lie inside the pool */
	return s && units < (info->strings_size - off) / 2;
}

int perflib_info_check(const void *buf, size_t size)
{
	const struct perflib_info *info = buf;
	const struct perflib_info_counter *c;
	uint32_t name, ascii, ref, slot, i;
	bool byref = false;

	if (size < sizeof(*info) || info->magic != PERFLIB_INFO_MAGIC || info->info_size != size)
		return -EBADMSG;
	if (info->layout_version != PERFLIB_LAYOUT_VERSION)
		return -EPROTO;
	if (info->nr_counters == 0 || info->nr_counters > PERFLIB_MAX_COUNTERS)
		return -EBADMSG;
	if (info->strings_offset < sizeof(*info) + (size_t)info->nr_counters * sizeof(*c) ||
	    info->strings_offset > size || info->strings_size > size - info->strings_offset ||
	    info->strings_offset % 2 || info->strings_size % 2)
		return -EBADMSG;
	if (info->name_max < 2 || info->name_max > PERF_MAX_INSTANCE_NAME + 1 ||
	    info->capacity == 0 || info->capacity > PERFLIB_CAPACITY_MAX || info->nr_procs == 0 ||
	    info->nr_procs > 65536)
		return -EBADMSG;
	c = (const struct perflib_info_counter *)(info + 1);
	for (i = 0; i < info->nr_counters; i++) {
		if (c[i].attrib & PERF_ATTRIB_BY_REFERENCE)
			byref = true;
		if (!string_ok(info, c[i].name) || !string_ok(info, c[i].help))
			return -EBADMSG;
	}
	slot_geometry(info->nr_counters, info->name_max, byref, &name, &ascii, &ref, &slot);
	if (info->name_offset != name || info->ascii_offset != ascii || info->ref_offset != ref ||
	    info->slot_size != slot)
		return -EBADMSG;
	/* the segments must be whole pages, and at most PERFLIB_MAX_SEGS */
	if (!info->seg0_slots || ((uint64_t)info->seg0_slots * slot) % 4096 ||
	    !seg_count(info->capacity, info->seg0_slots) ||
	    perflib_seg_first(seg_count(info->capacity, info->seg0_slots), info->seg0_slots) *
			    slot >
		    (1ULL << 38))
		return -EBADMSG;
	if (!string_ok(info, info->counterset_name) || !string_ok(info, info->counterset_help) ||
	    !string_ok(info, info->provider_name))
		return -EBADMSG;
	return 0;
}

/* append a UTF-8 string to the pool as UTF-16; returns its offset or PERFLIB_STR_NONE */
static uint32_t pool_add(uint8_t *pool, size_t cap, size_t *used, const char *s)
{
	int n;

	if (!s)
		return PERFLIB_STR_NONE;
	n = perflib_utf8_to_utf16(s, (WCHAR *)(pool + *used), (cap - *used) / 2);
	if (n < 0)
		return PERFLIB_STR_NONE;
	*used += (size_t)n * 2;
	return (uint32_t)(*used - (size_t)n * 2);
}

/*
 * perflib_info_build - the info value for a registration (names may be NULL: a counter set
 * created on demand). *ret_info is malloc'd.
 */
int perflib_info_build(const struct perflib_counterset_reg *reg, unsigned int flags,
		       const struct perflib_pin_opts *opts, struct perflib_info **ret_info,
		       size_t *ret_size)
{
	struct perflib_info_counter *c;
	struct perflib_info *info;
	size_t strings = 0, used = 0, size;
	uint32_t i, slot;
	bool byref = false;
	uint8_t *pool;

	if (!reg->nr_counters || reg->nr_counters > PERFLIB_MAX_COUNTERS)
		return -EINVAL;
		/* worst case: every UTF-8 byte becomes one UTF-16 unit, plus the NUL */
#define STRCOST(s) ((s) ? (strlen(s) + 1) * 2 : 0)
	strings += STRCOST(reg->provider_name) + STRCOST(reg->name) + STRCOST(reg->help);
	for (i = 0; i < reg->nr_counters; i++)
		strings += STRCOST(reg->counters[i].name) + STRCOST(reg->counters[i].help);
#undef STRCOST
	size = sizeof(*info) + reg->nr_counters * sizeof(*c) + strings;
	info = calloc(1, size);
	if (!info)
		return -ENOMEM;
	info->magic = PERFLIB_INFO_MAGIC;
	info->layout_version = PERFLIB_LAYOUT_VERSION;
	info->flags = flags;
	memcpy(info->provider_guid, &reg->provider_guid, 16);
	memcpy(info->counterset_guid, &reg->counterset_guid, 16);
	info->instance_type = reg->instance_type;
	info->nr_counters = reg->nr_counters;
	info->detail_level = reg->detail_level ? reg->detail_level : PERF_DETAIL_NOVICE;
	info->capacity = opts->capacity;
	info->name_max = opts->name_max;
	info->nr_procs = PERFLIB_PROCS_DEFAULT;
	info->strings_offset = sizeof(*info) + reg->nr_counters * sizeof(*c);
	pool = (uint8_t *)info + info->strings_offset;
	c = (struct perflib_info_counter *)(info + 1);
	for (i = 0; i < reg->nr_counters; i++) {
		const struct perflib_counter_reg *r = &reg->counters[i];

		c[i].id = r->id;
		c[i].type = r->type;
		c[i].attrib = r->attrib;
		c[i].detail_level = r->detail_level ? r->detail_level : PERF_DETAIL_NOVICE;
		c[i].scale = r->scale;
		c[i].base_id = r->base_id;
		c[i].perf_time_id = r->perf_time_id;
		c[i].perf_freq_id = r->perf_freq_id;
		c[i].multi_id = r->multi_id;
		c[i].aggregate = r->aggregate;
		c[i].name = pool_add(pool, strings, &used, r->name);
		c[i].help = pool_add(pool, strings, &used, r->help);
		if (r->attrib & PERF_ATTRIB_BY_REFERENCE)
			byref = true;
	}
	info->counterset_name = pool_add(pool, strings, &used, reg->name);
	info->counterset_help = pool_add(pool, strings, &used, reg->help);
	info->provider_name = pool_add(pool, strings, &used, reg->provider_name);
	info->strings_size = (uint32_t)used;
	info->info_size = (uint32_t)(info->strings_offset + used);
	slot_geometry(info->nr_counters, info->name_max, byref, &info->name_offset,
		      &info->ascii_offset, &info->ref_offset, &slot);
	info->slot_size = slot;
	if (seg_geometry(slot, opts->capacity, &info->seg0_slots, &info->capacity) ||
	    perflib_seg_first(seg_count(info->capacity, info->seg0_slots), info->seg0_slots) *
			    slot >
		    (1ULL << 38)) {
		free(info);
		return -E2BIG;
	}
	*ret_info = info;
	*ret_size = info->info_size;
	return 0;
}
