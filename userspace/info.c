// SPDX-License-Identifier: MIT
/*
 * info.c - the info value of a counter set (layout.h): building it from a registration,
 * checking one read from a map, its string pool, and the geometry that follows from it
 * (slot offsets and size, segment sizes and count).
 */
#include <stdlib.h>
#include <string.h>

#include "ctrtype.h"
#include "internal.h"

static uint32_t round_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

static uint32_t gcd32(uint32_t a, uint32_t b);

/* slots of segment 0 for slots of @slot_size bytes: whole pages, at least SEG0_MIN_BYTES */
static uint32_t seg0_slots(uint32_t slot_size)
{
	uint32_t seg0 = 4096 / gcd32(4096, slot_size);

	while ((uint64_t)seg0 * slot_size < PERFLIB_SEG0_MIN_BYTES)
		seg0 *= 2;
	return seg0;
}

static uint64_t seg0_bytes(uint32_t slot_size)
{
	return (uint64_t)seg0_slots(slot_size) * slot_size;
}

/*
 * may counter @c be kept per CPU: a value (by reference, the provider's own variable is the
 * value) of 4 or 8 bytes, whose parts then add up modulo its width
 */
static bool pcpu_allowed(const struct perflib_info_counter *c)
{
	uint32_t size = c->type & CTRTYPE_SIZE_MASK;

	return !(c->attrib & PERF_ATTRIB_BY_REFERENCE) &&
	       (size == PERF_SIZE_DWORD || size == PERF_SIZE_LARGE);
}

/* the per-CPU parts of a set's slots: @nr_cpus possible CPUs, @lines lines each (0: none) */
struct pcpu_geometry {
	uint32_t nr_cpus;
	uint32_t lines;
};

/*
 * The slot geometry of a class whose names hold @name_max units (incl. the NUL): the name
 * after the counters, the ASCII rendering after it (as many bytes as units, at most
 * PERFLIB_ASCII_MAX), the by-reference values, then the per-CPU parts on a line of their
 * own (@pc).
 */
static void slot_geometry(uint32_t nr_counters, uint32_t name_max, bool byref,
			  const struct pcpu_geometry *pc, struct perflib_info_class *c)
{
	uint32_t name = PERFLIB_COUNTERS_OFFSET + 8 * nr_counters;
	uint32_t ascii = round_up(name + 2 * name_max, 8);
	uint32_t ascii_max = name_max < PERFLIB_ASCII_MAX ? name_max : PERFLIB_ASCII_MAX;
	uint32_t end = round_up(ascii + ascii_max, 8);
	/* slots with per-CPU parts are whole lines, so a CPU's line is its own */
	uint32_t align = pc->lines ? PERFLIB_PCPU_LINE : PERFLIB_SLOT_ALIGN;

	c->name_max = name_max;
	c->ascii_offset = ascii;
	c->ascii_max = ascii_max;
	c->ref_offset = 0;
	c->pcpu_offset = 0;
	if (byref) {
		/* values, then a bitmap of counters whose address is NULL */
		c->ref_offset = end;
		end += 8 * nr_counters + 8 * ((nr_counters + 63) / 64);
	}
	if (pc->lines) {
		c->pcpu_offset = round_up(end, PERFLIB_PCPU_LINE);
		end = c->pcpu_offset + (uint32_t)perflib_pcpu_bytes(pc->nr_cpus, pc->lines);
	}
	/*
	 * The smallest multiple of 16 (the header's CAS; of 64 with per-CPU parts) whose
	 * segment 0 stays small: segments are whole pages, so a slot size with few factors of
	 * 2 makes segment 0 long (240-byte slots: 256 of them, 60 KiB); a few bytes more per
	 * slot keep it within PERFLIB_SEG0_MAX_BYTES.
	 */
	c->slot_size = round_up(end, align);
	/* (whole pages are the end: past PERFLIB_SEG0_MAX_BYTES, a slot is a segment alone) */
	while (seg0_bytes(c->slot_size) > PERFLIB_SEG0_MAX_BYTES && c->slot_size % 4096)
		c->slot_size += align;
}

/*
 * The name capacities of the size classes of a set whose names hold up to @name_max units:
 * those of class_names below it, then @name_max. Class 0 keeps an instance with a
 * 32-character name within 2x the Windows block; class 1 one of 63 characters; the last
 * class any name the set takes. Returns the number of classes.
 */
static uint32_t class_names(uint32_t name_max, uint32_t *ret)
{
	static const uint32_t names[] = {PERFLIB_CLASS0_NAME, 64, 256};
	uint32_t n = 0, i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]) && n < PERFLIB_MAX_CLASSES - 1; i++) {
		if (names[i] < name_max)
			ret[n++] = names[i];
	}
	ret[n++] = name_max;
	return n;
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
 * The slots PERFLIB_MAX_SEGS segments of a class with @seg0 slots in segment 0 reach
 * (perflib_seg_first), at most PERFLIB_CAPACITY_MAX: 262,140 * seg0, at least 1,048,560
 * for slots of up to 4 KiB (segment 0 is at least 16 KiB)
 */
static uint32_t seg_reach(uint32_t seg0)
{
	uint64_t n = perflib_seg_first(PERFLIB_MAX_SEGS, seg0);

	return n < PERFLIB_CAPACITY_MAX ? (uint32_t)n : PERFLIB_CAPACITY_MAX;
}

/* the capacity of a class with @seg0 slots in segment 0, under a limit of @limit slots */
static uint32_t class_capacity(uint32_t limit, uint32_t seg0)
{
	uint32_t reach = seg_reach(seg0);

	return limit < reach ? limit : reach;
}

/*
 * The segment geometry for slots of @slot_size and a limit of @limit slots: segment 0 is
 * whole pages (so every segment starts on a page of the reservation) and at least
 * PERFLIB_SEG0_MIN_BYTES; segments grow by quarter octaves (perflib_seg_first); the
 * capacity is @limit exactly (the last segment may hold slots past it, never used), or
 * what PERFLIB_MAX_SEGS segments reach if that is less.
 */
static void seg_geometry(uint32_t slot_size, uint32_t limit, uint32_t *ret_seg0,
			 uint32_t *ret_capacity)
{
	uint32_t seg0 = seg0_slots(slot_size);

	*ret_seg0 = seg0;
	*ret_capacity = class_capacity(limit, seg0);
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

uint32_t perflib_info_segs(const struct perflib_info *info, uint32_t cls)
{
	return seg_count(info->classes[cls].capacity, info->classes[cls].seg0_slots);
}

/* the class of the set of @info that holds names of @units units (without the NUL) */
uint32_t perflib_info_class_of(const struct perflib_info *info, size_t units)
{
	uint32_t c;

	for (c = 0; c + 1 < info->nr_classes; c++) {
		if (units + 1 <= info->classes[c].name_max)
			break;
	}
	return c;
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
	uint32_t names[PERFLIB_MAX_CLASSES], nr, i, nr_pcpu = 0;
	struct pcpu_geometry pc = {0, 0};
	bool byref = false, per_cpu;

	if (size < sizeof(*info) || info->magic != PERFLIB_INFO_MAGIC || info->info_size != size)
		return -EBADMSG;
	if (info->layout_version != PERFLIB_LAYOUT_VERSION &&
	    info->layout_version != PERFLIB_LAYOUT_VERSION_PER_CPU)
		return -EPROTO;
	/* version 12 and the flag say the same: a set with per-CPU parts on every CPU line */
	per_cpu = info->layout_version == PERFLIB_LAYOUT_VERSION_PER_CPU;
	if (per_cpu != !!(info->flags & PERFLIB_INFO_PER_CPU) ||
	    (per_cpu ? !info->nr_cpus || info->nr_cpus > PERFLIB_PCPU_MAX_CPUS : info->nr_cpus))
		return -EBADMSG;
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
		/* per-CPU counters numbered 1, 2, ... by position, each one that may be one */
		if (!!c[i].pcpu != !!(c[i].attrib & PERF_ATTRIB_LINUX_PER_CPU) ||
		    (c[i].pcpu &&
		     (c[i].pcpu != ++nr_pcpu || !pcpu_allowed(&c[i]) || i >= PERFLIB_PCPU_MAX_POS)))
			return -EBADMSG;
	}
	if (per_cpu != !!nr_pcpu)
		return -EBADMSG;
	if (per_cpu) {
		pc.nr_cpus = info->nr_cpus;
		pc.lines = perflib_pcpu_lines(nr_pcpu);
	}
	/* the classes: exactly what the counters and the name capacity give */
	nr = class_names(info->name_max, names);
	if (info->nr_classes != nr ||
	    info->name_offset != PERFLIB_COUNTERS_OFFSET + 8 * info->nr_counters)
		return -EBADMSG;
	for (i = 0; i < nr; i++) {
		const struct perflib_info_class *ic = &info->classes[i];
		struct perflib_info_class want;

		slot_geometry(info->nr_counters, names[i], byref, &pc, &want);
		if (ic->name_max != want.name_max || ic->ascii_offset != want.ascii_offset ||
		    ic->ascii_max != want.ascii_max || ic->ref_offset != want.ref_offset ||
		    ic->pcpu_offset != want.pcpu_offset || ic->slot_size != want.slot_size ||
		    ic->capacity != class_capacity(info->capacity, ic->seg0_slots))
			return -EBADMSG;
		/*
		 * the segments must be whole pages, and at most PERFLIB_MAX_SEGS; segment 0 has
		 * one summary word (its heads' other bits are the segments bits, layout.h)
		 */
		if (!ic->seg0_slots || ((uint64_t)ic->seg0_slots * ic->slot_size) % 4096 ||
		    perflib_seg_sum_words(0, ic->seg0_slots) != 1 ||
		    !seg_count(ic->capacity, ic->seg0_slots) ||
		    perflib_seg_first(seg_count(ic->capacity, ic->seg0_slots), ic->seg0_slots) *
				    ic->slot_size >
			    (1ULL << 40))
			return -EBADMSG;
	}
	/* the header's copy of class 0, for programs that know no classes */
	if (info->slot_size != info->classes[0].slot_size ||
	    info->ascii_offset != info->classes[0].ascii_offset ||
	    info->ref_offset != info->classes[0].ref_offset ||
	    info->seg0_slots != info->classes[0].seg0_slots)
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
	uint32_t i, names[PERFLIB_MAX_CLASSES], nr_pcpu = 0;
	struct pcpu_geometry pc = {0, 0};
	bool byref = false;
	uint8_t *pool;
	int cpus;

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
		if (r->attrib & PERF_ATTRIB_LINUX_PER_CPU) {
			c[i].pcpu = ++nr_pcpu;
			if (!pcpu_allowed(&c[i]) || i >= PERFLIB_PCPU_MAX_POS) {
				free(info);
				return -EINVAL;
			}
		}
	}
	if (nr_pcpu) {
		/* the CPUs that may ever run an updater: a part each, kept for the set's life */
		cpus = libbpf_num_possible_cpus();
		if (cpus <= 0 || cpus > PERFLIB_PCPU_MAX_CPUS) {
			free(info);
			return cpus < 0 ? cpus : -ERANGE;
		}
		pc.nr_cpus = (uint32_t)cpus;
		pc.lines = perflib_pcpu_lines(nr_pcpu);
		info->nr_cpus = pc.nr_cpus;
		info->flags |= PERFLIB_INFO_PER_CPU;
		info->layout_version = PERFLIB_LAYOUT_VERSION_PER_CPU;
	}
	info->counterset_name = pool_add(pool, strings, &used, reg->name);
	info->counterset_help = pool_add(pool, strings, &used, reg->help);
	info->provider_name = pool_add(pool, strings, &used, reg->provider_name);
	info->strings_size = (uint32_t)used;
	info->info_size = (uint32_t)(info->strings_offset + used);
	info->name_offset = PERFLIB_COUNTERS_OFFSET + 8 * info->nr_counters;
	info->nr_classes = class_names(info->name_max, names);
	for (i = 0; i < info->nr_classes; i++) {
		struct perflib_info_class *ic = &info->classes[i];

		slot_geometry(info->nr_counters, names[i], byref, &pc, ic);
		/*
		 * class 0's reach bounds the set's capacity, each class's its own (a class
		 * reserves at most 262,140 * 32 KiB, or as many slots of one segment 0 each)
		 */
		seg_geometry(ic->slot_size, i ? info->classes[0].capacity : opts->capacity,
			     &ic->seg0_slots, &ic->capacity);
	}
	info->capacity = info->classes[0].capacity;
	info->slot_size = info->classes[0].slot_size;
	info->ascii_offset = info->classes[0].ascii_offset;
	info->ref_offset = info->classes[0].ref_offset;
	info->seg0_slots = info->classes[0].seg0_slots;
	*ret_info = info;
	*ret_size = info->info_size;
	return 0;
}
