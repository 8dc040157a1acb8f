/* SPDX-License-Identifier: MIT */
/*
 * cook.h - the PDH cooking formulas: turn raw counter samples into displayed values
 * (rates per second, percentages, averages, elapsed times) for every counter type of
 * winperf.h. Pure functions on plain structs: no I/O, no allocation, no global state.
 *
 * Rules are those of ../shared/spec/tools.md section 5.3 ("cooked value" table and edge
 * rules). Where the sources disagree, the choice made here is written next to the type in
 * cook.c. Notation: N = raw value, B = base-counter value, D = time stamp, F = ticks per
 * second, suffix 0 = older sample, 1 = newer sample, delta(X) = X1 - X0.
 *
 * Scale: pdh_cook_value() never applies PERF_COUNTER_REG_INFO.DefaultScale and never caps at
 * 100 (as PDH_FMT_NOSCALE | PDH_FMT_NOCAP100). typeperf prints the values that way
 * (tools.md 4.3: values appear unscaled and uncapped); pdh_cook_scale() is there for consumers
 * that want the scaled value.
 */
#ifndef PDH_COOK_H
#define PDH_COOK_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Result of cooking one value. Only PDH_COOK_OK carries a value. The PDH status each one
 * stands for is given by pdh_cook_status_pdh().
 */
enum pdh_cook_status {
	PDH_COOK_OK = 0,       /* valid value (PDH_CSTATUS_VALID_DATA) */
	PDH_COOK_FIRST_SAMPLE, /* two-sample type without an older sample (PDH_CSTATUS_INVALID_DATA) */
	PDH_COOK_BAD_DATA,     /* N0 > N1: the counter went back; drop the older sample */
	PDH_COOK_NEGATIVE_DENOMINATOR, /* base or multi count went back or is zero where it divides */
	PDH_COOK_NEGATIVE_TIMEBASE,    /* time did not advance, or a frequency <= 0 */
	PDH_COOK_NEGATIVE_VALUE,  /* the formula gave a negative value (inverse timers, elapsed) */
	PDH_COOK_NOT_DISPLAYABLE, /* base, text and no-data types: never a value */
	PDH_COOK_UNSUPPORTED,	  /* histogram or an unknown type */
};

/*
 * One raw sample of one counter, with everything a formula may need. The caller fills
 * what the counter's registration provides and leaves the rest 0; each type reads only
 * its own fields (see cook.c).
 */
struct pdh_cook_raw {
	uint64_t value;	    /* N: the counter's raw value; 4-byte counters zero-extended */
	uint64_t base;	    /* B: base counter value (BaseCounterId); PRECISION: time stamp */
	uint64_t multi;	    /* multi count of PERF_MULTI_COUNTER types (MultiId counter) */
	int64_t time;	    /* system time stamp, PERF_DATA_HEADER.PerfTimeStamp, ticks */
	int64_t freq;	    /* ticks per second of time, PERF_DATA_HEADER.PerfFreq */
	int64_t time_100ns; /* PERF_DATA_HEADER.PerfTime100NSec, 100-ns units */
	uint64_t obj_time;  /* object clock: value of the PerfTimeId counter, ticks */
	uint64_t obj_freq;  /* object clock ticks per second: value of the PerfFreqId counter */
};

/*
 * pdh_cook_value - the displayed value of a counter of winperf.h type @type.
 * @old: the older sample, or NULL when there is none (first sample).
 * @cur: the newest sample (required).
 * @ret_value: out, written only when PDH_COOK_OK is returned.
 * Two-sample types return PDH_COOK_FIRST_SAMPLE without @old; single-sample types ignore it.
 * On PDH_COOK_BAD_DATA the caller should keep @cur as the next older sample (PDH drops the
 * older one), which is what a caller that always keeps the newest sample does anyway.
 */
enum pdh_cook_status pdh_cook_value(uint32_t type, const struct pdh_cook_raw *old,
				    const struct pdh_cook_raw *cur, double *ret_value);

/*
 * Which types need two samples, are displayable or are bases: ctrtype_samples(),
 * ctrtype_displayable(), ctrtype_is_base() (ctrtype.h, the one counter-type table).
 */

/*
 * The counts-per-second types (PERF_COUNTER_COUNTER, PERF_COUNTER_BULK_COUNT,
 * PERF_SAMPLE_COUNTER) in two steps, for callers that cook many instances of one sample
 * pair: pdh_cook_per_second_divisor() once (delta(D) / F of the system clock: the data
 * headers' PerfTimeStamp and PerfFreq), then pdh_cook_per_second() per instance. pdh_cook_value()
 * computes these types the same way.
 */
bool pdh_cook_per_second_type(uint32_t type);
enum pdh_cook_status pdh_cook_per_second_divisor(int64_t time0, int64_t time1, int64_t freq,
						 double *ret);
static inline enum pdh_cook_status pdh_cook_per_second(uint64_t n0, uint64_t n1, double divisor,
						       double *ret)
{
	if (n0 > n1)
		return PDH_COOK_BAD_DATA; /* a counter that went back, as pdh_cook_value says */
	*ret = (double)(n1 - n0) / divisor;
	return PDH_COOK_OK;
}

/* pdh_cook_scale - @value * 10^@scale, the default scale of a counter (-10..10). */
double pdh_cook_scale(double value, int32_t scale);

/* pdh_cook_status_pdh - the PDH status code @status stands for (0 for PDH_COOK_OK). */
uint32_t pdh_cook_status_pdh(enum pdh_cook_status status);

/* pdh_cook_status_str - a short English description of @status (static string). */
const char *pdh_cook_status_str(enum pdh_cook_status status);

#endif /* PDH_COOK_H */
