/* SPDX-License-Identifier: MIT */
/*
 * ctrtype.h - the one table of winperf.h counter types (tools.md 5.1, 5.2): for each type its
 * value size, subtype, how many samples its display value needs, what companion counter it
 * requires (base, multi count, object clock), its time base, whether it is displayable and
 * listed, its manifest spelling and the aggregation a _Total of it uses, plus named masks for
 * the bit fields of a type value.
 *
 * Compiled into libperflib (hidden), libpdh (hidden) and reached by the tools through the
 * static library: the manifest parser, cooking, the exporter and typeperf all read it, so no
 * other file keeps a per-type switch or a literal mask. Pure data and functions.
 */
#ifndef PERFLIB_CTRTYPE_H
#define PERFLIB_CTRTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The bit fields of a counter type (winperf.h; tools.md 5.1). */
#define CTRTYPE_SIZE_MASK 0x00000300u	  /* PERF_SIZE_DWORD/LARGE/ZERO/VARIABLE_LEN */
#define CTRTYPE_TYPE_MASK 0x00000C00u	  /* PERF_TYPE_NUMBER/COUNTER/TEXT/ZERO */
#define CTRTYPE_SUBTYPE_MASK 0x000F0000u  /* PERF_COUNTER_* subtype, PERF_NUMBER_*, PERF_TEXT_* */
#define CTRTYPE_TIMEBASE_MASK 0x00300000u /* PERF_TIMER_TICK/100NS, PERF_OBJECT_TIMER */
#define CTRTYPE_CALC_MASK 0x0FC00000u	  /* PERF_DELTA_COUNTER/BASE, INVERSE, MULTI */
#define CTRTYPE_DISPLAY_MASK 0xF0000000u  /* PERF_DISPLAY_* */

/* PERF_LARGE_RAW_BASE as the WMI CounterType table writes it (tools.md 5.2): accepted. */
#define CTRTYPE_WMI_LARGE_RAW_BASE 0x40030503u

/* How a type's display value is computed (the cooking family, tools.md 5.3). */
enum ctrtype_calc {
	CTRTYPE_CALC_UNKNOWN = 0,     /* histogram, values that are no winperf.h type */
	CTRTYPE_CALC_HIDDEN,	      /* text, no data: never a value */
	CTRTYPE_CALC_BASE,	      /* a base (denominator, multi count, precision clock) */
	CTRTYPE_CALC_RAW,	      /* N: raw counts */
	CTRTYPE_CALC_DELTA,	      /* delta(N), or delta(N) per second (rates) */
	CTRTYPE_CALC_TIMER,	      /* 100 * delta(N) / delta(D) and its inverse/multi forms */
	CTRTYPE_CALC_QUEUELEN,	      /* delta(N) / delta(D) */
	CTRTYPE_CALC_ELAPSED,	      /* (D - N) / F on the object clock */
	CTRTYPE_CALC_AVERAGE,	      /* delta(N) [/ F] / delta(B) */
	CTRTYPE_CALC_RAW_FRACTION,    /* 100 * N / B */
	CTRTYPE_CALC_SAMPLE_FRACTION, /* 100 * delta(N) / delta(B) */
};

/* The clock a type's time difference D is read from. */
enum ctrtype_timebase {
	CTRTYPE_TB_NONE = 0, /* no time in the formula */
	CTRTYPE_TB_TICK,     /* system clock: PerfTimeStamp at PerfFreq */
	CTRTYPE_TB_100NS,    /* PerfTime100NSec, 10^7 per second */
	CTRTYPE_TB_OBJECT,   /* the set's own clock: PerfTimeId at PerfFreqId */
};

/* What a counter of a type needs registered beside it (tools.md table 1.7a). */
#define CTRTYPE_NEEDS_BASE 0x1	    /* baseID naming a counter of type .base_type */
#define CTRTYPE_NEEDS_BASE_WARN 0x2 /* same, but the rule is uncertain: warn when missing */
#define CTRTYPE_NEEDS_MULTI 0x4	    /* multiCounterID (a rawcount) or baseID (.base_type) */
#define CTRTYPE_NEEDS_TIME 0x8	    /* perfTimeID and perfFreqID, both large rawcounts */

struct ctrtype {
	uint32_t value;	    /* winperf.h value */
	const char *name;   /* manifest spelling: "perf_counter_counter" */
	const char *macro;  /* winperf.h macro: "PERF_COUNTER_COUNTER" */
	uint8_t calc;	    /* enum ctrtype_calc */
	uint8_t samples;    /* samples the display value needs: 0 (none), 1 or 2 */
	uint8_t timebase;   /* enum ctrtype_timebase */
	uint8_t needs;	    /* CTRTYPE_NEEDS_* */
	uint32_t base_type; /* type the baseID counter must have, 0 = none */
	uint32_t aggregate; /* PERF_AGGREGATE_* a _Total of an "undefined" counter uses */
	bool percent;	    /* PERF_DISPLAY_PERCENT: capped at 100 unless PDH_FMT_NOCAP100 */
};

/*
 * ctrtype_find - the table row of @type (CTRTYPE_WMI_LARGE_RAW_BASE finds PERF_LARGE_RAW_BASE),
 * or NULL for a value that is no winperf.h type of the table (PERF_COUNTER_NODATA,
 * PERF_COUNTER_HISTOGRAM_TYPE and unknown values are classified by ctrtype_calc()).
 */
const struct ctrtype *ctrtype_find(uint32_t type);

/* ctrtype_by_name - the row whose manifest spelling is @name (case-sensitive), or NULL */
const struct ctrtype *ctrtype_by_name(const char *name);

/* ctrtype_at - row @i of the table (0 .. ctrtype_count() - 1), in manifest schema order */
const struct ctrtype *ctrtype_at(size_t i);
size_t ctrtype_count(void);

/* ctrtype_size - bytes of a value from the size bits: 4, 8, or 0 (zero, variable length) */
uint32_t ctrtype_size(uint32_t type);

/* ctrtype_subtype - the subtype bits (type & CTRTYPE_SUBTYPE_MASK) */
uint32_t ctrtype_subtype(uint32_t type);

/*
 * ctrtype_calc - the cooking family of @type; for values outside the table it decides by the
 * bit fields (tools.md 5.1): zero or variable size and text are HIDDEN, counter types with
 * the BASE subtype BASE, the rest UNKNOWN.
 */
enum ctrtype_calc ctrtype_calc(uint32_t type);

/* ctrtype_is_base - a base type (including PERF_PRECISION_TIMESTAMP and the WMI spelling) */
bool ctrtype_is_base(uint32_t type);

/* ctrtype_samples - samples @type's display value needs: 0 (never displayable), 1 or 2 */
unsigned int ctrtype_samples(uint32_t type);

/* ctrtype_displayable - a display value can be computed (ctrtype_samples() > 0) */
bool ctrtype_displayable(uint32_t type);

/*
 * ctrtype_listed - displayable and not PERF_DISPLAY_NOSHOW (PERF_AVERAGE_BULK cooks but
 * perfmon and typeperf do not list it)
 */
bool ctrtype_listed(uint32_t type);

/* ctrtype_timebase - the clock of @type's time difference */
enum ctrtype_timebase ctrtype_timebase(uint32_t type);

/* ctrtype_percent - displayed as a percentage (PERF_DISPLAY_PERCENT) */
bool ctrtype_percent(uint32_t type);

/* ctrtype_wants_base - @type divides by a base counter (fractions, averages, multi and
 * precision timers: the CTRTYPE_NEEDS_BASE* and CTRTYPE_NEEDS_MULTI rows) */
bool ctrtype_wants_base(uint32_t type);

/*
 * ctrtype_next_is_base - the one base-counter rule for a counter registered without a
 * BaseCounterId: a counter of @type takes the counter registered right after it (of type
 * @next_type) as its base when @type wants a base and @next_type is a base type (the Windows
 * V1 convention). A registered BaseCounterId always wins over this rule.
 */
bool ctrtype_next_is_base(uint32_t type, uint32_t next_type);

/*
 * ctrtype_base_index - the one base-counter rule over a registration (libpdh, typeperf,
 * perflib-exporter): the index of the base of counter @self (of @type, one of @n counters;
 * @next_type the type of counter @self + 1 when there is one) given the indexes its
 * BaseCounterId and MultiId name (-1: none, or no such counter): the BaseCounterId's
 * counter; else, for a PERF_MULTI_COUNTER type, the MultiId's counter; else the counter
 * right after it when ctrtype_next_is_base() says so; else -1.
 */
long ctrtype_base_index(uint32_t type, long base_idx, long multi_idx, size_t self, size_t n,
			uint32_t next_type);

#endif /* PERFLIB_CTRTYPE_H */
