/* SPDX-License-Identifier: MIT */
/*
 * ctrtype.c - the counter-type table (see ctrtype.h). Rows are the 37 types a manifest may
 * name (tools.md 5.2), in the schema's order; columns as in struct ctrtype.
 */
#include <string.h>

#include "perflib.h"
#include "ctrtype.h"

/* columns: samples, time base, companion needs, base type; aggregation is the sum */
#define ROW(nm, macro, calc, samples, tb, needs, base)                                             \
	{                                                                                          \
		(uint32_t)(macro), nm, #macro, CTRTYPE_CALC_##calc, samples, CTRTYPE_TB_##tb,      \
			needs, base, PERF_AGGREGATE_TOTAL,                                         \
			((uint32_t)(macro)&CTRTYPE_DISPLAY_MASK) == PERF_DISPLAY_PERCENT           \
	}

#define B CTRTYPE_NEEDS_BASE
#define BW CTRTYPE_NEEDS_BASE_WARN
#define M CTRTYPE_NEEDS_MULTI
#define T CTRTYPE_NEEDS_TIME

static const struct ctrtype table[] = {
	ROW("perf_counter_counter", PERF_COUNTER_COUNTER, DELTA, 2, TICK, 0, 0),
	ROW("perf_counter_timer", PERF_COUNTER_TIMER, TIMER, 2, TICK, 0, 0),
	ROW("perf_counter_queuelen_type", PERF_COUNTER_QUEUELEN_TYPE, QUEUELEN, 2, TICK, 0, 0),
	ROW("perf_counter_large_queuelen_type", PERF_COUNTER_LARGE_QUEUELEN_TYPE, QUEUELEN, 2, TICK,
	    0, 0),
	ROW("perf_counter_100ns_queuelen_type", PERF_COUNTER_100NS_QUEUELEN_TYPE, QUEUELEN, 2,
	    100NS, 0, 0),
	ROW("perf_counter_obj_time_queuelen_type", PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, QUEUELEN, 2,
	    OBJECT, T, 0),
	ROW("perf_counter_bulk_count", PERF_COUNTER_BULK_COUNT, DELTA, 2, TICK, 0, 0),
	ROW("perf_counter_text", PERF_COUNTER_TEXT, HIDDEN, 0, NONE, 0, 0),
	ROW("perf_counter_rawcount", PERF_COUNTER_RAWCOUNT, RAW, 1, NONE, 0, 0),
	ROW("perf_counter_large_rawcount", PERF_COUNTER_LARGE_RAWCOUNT, RAW, 1, NONE, 0, 0),
	ROW("perf_counter_rawcount_hex", PERF_COUNTER_RAWCOUNT_HEX, RAW, 1, NONE, 0, 0),
	ROW("perf_counter_large_rawcount_hex", PERF_COUNTER_LARGE_RAWCOUNT_HEX, RAW, 1, NONE, 0, 0),
	ROW("perf_sample_fraction", PERF_SAMPLE_FRACTION, SAMPLE_FRACTION, 2, NONE, B,
	    PERF_SAMPLE_BASE),
	ROW("perf_sample_counter", PERF_SAMPLE_COUNTER, DELTA, 2, TICK, 0, 0),
	ROW("perf_counter_timer_inv", PERF_COUNTER_TIMER_INV, TIMER, 2, TICK, 0, 0),
	ROW("perf_sample_base", PERF_SAMPLE_BASE, BASE, 0, NONE, 0, 0),
	/* no DELTA flag, but both values are differenced */
	ROW("perf_average_timer", PERF_AVERAGE_TIMER, AVERAGE, 2, TICK, B, PERF_AVERAGE_BASE),
	ROW("perf_average_base", PERF_AVERAGE_BASE, BASE, 0, NONE, 0, 0),
	ROW("perf_average_bulk", PERF_AVERAGE_BULK, AVERAGE, 2, NONE, B, PERF_AVERAGE_BASE),
	ROW("perf_obj_time_timer", PERF_OBJ_TIME_TIMER, TIMER, 2, OBJECT, T, 0),
	ROW("perf_100nsec_timer", PERF_100NSEC_TIMER, TIMER, 2, 100NS, 0, 0),
	ROW("perf_100nsec_timer_inv", PERF_100NSEC_TIMER_INV, TIMER, 2, 100NS, 0, 0),
	ROW("perf_counter_multi_timer", PERF_COUNTER_MULTI_TIMER, TIMER, 2, TICK, M,
	    PERF_COUNTER_MULTI_BASE),
	ROW("perf_counter_multi_timer_inv", PERF_COUNTER_MULTI_TIMER_INV, TIMER, 2, TICK, M,
	    PERF_COUNTER_MULTI_BASE),
	ROW("perf_counter_multi_base", PERF_COUNTER_MULTI_BASE, BASE, 0, NONE, 0, 0),
	ROW("perf_100nsec_multi_timer", PERF_100NSEC_MULTI_TIMER, TIMER, 2, 100NS, M,
	    PERF_COUNTER_MULTI_BASE),
	ROW("perf_100nsec_multi_timer_inv", PERF_100NSEC_MULTI_TIMER_INV, TIMER, 2, 100NS, M,
	    PERF_COUNTER_MULTI_BASE),
	ROW("perf_raw_fraction", PERF_RAW_FRACTION, RAW_FRACTION, 1, NONE, B, PERF_RAW_BASE),
	ROW("perf_large_raw_fraction", PERF_LARGE_RAW_FRACTION, RAW_FRACTION, 1, NONE, B,
	    PERF_LARGE_RAW_BASE),
	ROW("perf_raw_base", PERF_RAW_BASE, BASE, 0, NONE, 0, 0),
	/* also PERF_PRECISION_TIMESTAMP */
	ROW("perf_large_raw_base", PERF_LARGE_RAW_BASE, BASE, 0, NONE, 0, 0),
	ROW("perf_elapsed_time", PERF_ELAPSED_TIME, ELAPSED, 1, OBJECT, T, 0),
	ROW("perf_counter_delta", PERF_COUNTER_DELTA, DELTA, 2, NONE, 0, 0),
	ROW("perf_counter_large_delta", PERF_COUNTER_LARGE_DELTA, DELTA, 2, NONE, 0, 0),
	/* D is the companion time stamp, carried as the base */
	ROW("perf_precision_system_timer", PERF_PRECISION_SYSTEM_TIMER, TIMER, 2, TICK, BW,
	    PERF_LARGE_RAW_BASE),
	ROW("perf_precision_100ns_timer", PERF_PRECISION_100NS_TIMER, TIMER, 2, 100NS, B,
	    PERF_LARGE_RAW_BASE),
	ROW("perf_precision_object_timer", PERF_PRECISION_OBJECT_TIMER, TIMER, 2, OBJECT, T, 0),
};

#undef B
#undef BW
#undef M
#undef T

const struct ctrtype *ctrtype_find(uint32_t type)
{
	/* callers ask for one type many times in a row (a counter's values): remember it */
	static __thread const struct ctrtype *last;
	const struct ctrtype *t = last;
	size_t i;

	if (t && t->value == type)
		return t;
	if (type == CTRTYPE_WMI_LARGE_RAW_BASE)
		type = PERF_LARGE_RAW_BASE;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (table[i].value == type) {
			last = &table[i];
			return last;
		}
	}
	return NULL;
}

const struct ctrtype *ctrtype_by_name(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

const struct ctrtype *ctrtype_at(size_t i)
{
	return i < sizeof(table) / sizeof(table[0]) ? &table[i] : NULL;
}

size_t ctrtype_count(void)
{
	return sizeof(table) / sizeof(table[0]);
}

uint32_t ctrtype_size(uint32_t type)
{
	switch (type & CTRTYPE_SIZE_MASK) {
	case PERF_SIZE_DWORD:
		return 4;
	case PERF_SIZE_LARGE:
		return 8;
	default:
		return 0; /* PERF_SIZE_ZERO, PERF_SIZE_VARIABLE_LEN */
	}
}

uint32_t ctrtype_subtype(uint32_t type)
{
	return type & CTRTYPE_SUBTYPE_MASK;
}

enum ctrtype_calc ctrtype_calc(uint32_t type)
{
	const struct ctrtype *t = ctrtype_find(type);

	if (t)
		return (enum ctrtype_calc)t->calc;
	if (type == PERF_COUNTER_HISTOGRAM_TYPE)
		return CTRTYPE_CALC_UNKNOWN;
	/* not in the table: decide by the bit fields (tools.md 5.1) */
	if ((type & CTRTYPE_SIZE_MASK) >= PERF_SIZE_ZERO ||
	    (type & CTRTYPE_TYPE_MASK) >= PERF_TYPE_TEXT)
		return CTRTYPE_CALC_HIDDEN;
	if ((type & CTRTYPE_TYPE_MASK) == PERF_TYPE_COUNTER &&
	    ctrtype_subtype(type) == PERF_COUNTER_BASE)
		return CTRTYPE_CALC_BASE;
	return CTRTYPE_CALC_UNKNOWN;
}

bool ctrtype_is_base(uint32_t type)
{
	return ctrtype_calc(type) == CTRTYPE_CALC_BASE;
}

unsigned int ctrtype_samples(uint32_t type)
{
	const struct ctrtype *t = ctrtype_find(type);

	return t ? t->samples : 0;
}

bool ctrtype_displayable(uint32_t type)
{
	return ctrtype_samples(type) > 0;
}

bool ctrtype_listed(uint32_t type)
{
	return ctrtype_displayable(type) && (type & CTRTYPE_DISPLAY_MASK) != PERF_DISPLAY_NOSHOW;
}

enum ctrtype_timebase ctrtype_timebase(uint32_t type)
{
	const struct ctrtype *t = ctrtype_find(type);

	return t ? (enum ctrtype_timebase)t->timebase : CTRTYPE_TB_NONE;
}

bool ctrtype_percent(uint32_t type)
{
	const struct ctrtype *t = ctrtype_find(type);

	return t && t->percent;
}

bool ctrtype_wants_base(uint32_t type)
{
	const struct ctrtype *t = ctrtype_find(type);

	return t &&
	       (t->needs & (CTRTYPE_NEEDS_BASE | CTRTYPE_NEEDS_BASE_WARN | CTRTYPE_NEEDS_MULTI));
}

bool ctrtype_next_is_base(uint32_t type, uint32_t next_type)
{
	return ctrtype_wants_base(type) && ctrtype_is_base(next_type);
}

long ctrtype_base_index(uint32_t type, long base_idx, long multi_idx, size_t self, size_t n,
			uint32_t next_type)
{
	if (base_idx >= 0)
		return base_idx;
	if ((type & PERF_MULTI_COUNTER) && multi_idx >= 0)
		return multi_idx;
	if (self + 1 < n && ctrtype_next_is_base(type, next_type))
		return (long)self + 1;
	return -1;
}
