/* SPDX-License-Identifier: MIT */
/*
 * cook.c - the PDH cooking formulas (tools.md 5.3) for every counter type of the master
 * table (tools.md 5.2). See cook.h for the notation and the scale rule.
 *
 * Choices where the sources disagree or are silent (each also noted at its case):
 * - a zero base difference (or a zero base for raw fractions) gives 0, not an error: an
 *   average over no events is shown as 0 by perfmon, and .NET maps the status to 0 too;
 *   a base that went back is PDH_COOK_NEGATIVE_DENOMINATOR;
 * - time that did not advance (delta(D) <= 0) or a frequency <= 0 is
 *   PDH_COOK_NEGATIVE_TIMEBASE: a rate over no time has no value;
 * - PERF_SAMPLE_COUNTER is a rate per second over the system clock ([WS03], [CALC]);
 * - queue lengths divide by the time difference in the type's own time base, without a
 *   further factor (the 100NS variant too);
 * - PERF_COUNTER_MULTI_TIMER and PERF_100NSEC_MULTI_TIMER: 100 * delta(N) / delta(D) / B1
 *   (the same shape for both time bases; N and D are in the same ticks, so no F);
 * - the *_MULTI_TIMER_INV types: 100 * (B1 - delta(N) / delta(D)) ([WS03], [CALC]);
 * - PERF_PRECISION_SYSTEM_TIMER and _100NS_TIMER take D from the base counter (the
 *   companion time stamp), PERF_PRECISION_OBJECT_TIMER from the object clock (obj_time);
 * - PERF_ELAPSED_TIME with a start time of 0 gives 0 (nothing started; as .NET).
 */
#include <math.h>
#include <stddef.h>

#include "winperf.h"
#include "cook.h"
#include "ctrtype.h"

/* PDH status codes (pdh.h / PDH error codes page), for pdh_cook_status_pdh() only. */
#define PDH_VALID 0x00000000u
#define PDH_CSTATUS_INVALID 0xC0000BBAu
#define PDH_NEG_DENOMINATOR 0x800007D6u
#define PDH_NEG_TIMEBASE 0x800007D7u
#define PDH_NEG_VALUE 0x800007D8u
#define PDH_NO_DATA 0x800007D5u
#define PDH_INVALID_DATA 0xC0000BC6u

/* delta(N) of an increasing counter; PDH_COOK_BAD_DATA when it went back ([CALC]) */
static enum pdh_cook_status value_delta(const struct pdh_cook_raw *old,
					const struct pdh_cook_raw *cur, double *ret)
{
	if (old->value > cur->value)
		return PDH_COOK_BAD_DATA;
	*ret = (double)(cur->value - old->value);
	return PDH_COOK_OK;
}

/* delta(D) of a signed time stamp; it must advance */
static enum pdh_cook_status time_delta(int64_t d0, int64_t d1, double *ret)
{
	if (d1 <= d0)
		return PDH_COOK_NEGATIVE_TIMEBASE;
	*ret = (double)((uint64_t)d1 - (uint64_t)d0);
	return PDH_COOK_OK;
}

/* delta of an unsigned clock held in a counter (object clock, precision time stamp) */
static enum pdh_cook_status clock_delta(uint64_t d0, uint64_t d1, double *ret)
{
	if (d1 <= d0)
		return PDH_COOK_NEGATIVE_TIMEBASE;
	*ret = (double)(d1 - d0);
	return PDH_COOK_OK;
}

/* the time difference a two-sample timer or queue length divides by, per time base */
static enum pdh_cook_status type_time_delta(uint32_t type, const struct pdh_cook_raw *old,
					    const struct pdh_cook_raw *cur, double *ret)
{
	switch (ctrtype_timebase(type)) {
	case CTRTYPE_TB_100NS:
		return time_delta(old->time_100ns, cur->time_100ns, ret);
	case CTRTYPE_TB_OBJECT:
		return clock_delta(old->obj_time, cur->obj_time, ret);
	default:
		return time_delta(old->time, cur->time, ret);
	}
}

/* delta(N) / delta(D) for the type's time base: the building block of timers */
static enum pdh_cook_status time_ratio(uint32_t type, const struct pdh_cook_raw *old,
				       const struct pdh_cook_raw *cur, double *ret)
{
	enum pdh_cook_status st;
	double dn, dd;

	st = type_time_delta(type, old, cur, &dd);
	if (st == PDH_COOK_OK)
		st = value_delta(old, cur, &dn);
	if (st == PDH_COOK_OK)
		*ret = dn / dd;
	return st;
}

bool pdh_cook_per_second_type(uint32_t type)
{
	/* PERF_SAMPLE_COUNTER: [WS03]/[CALC]/.NET, not [PSDK]'s base form */
	return type == PERF_COUNTER_COUNTER || type == PERF_COUNTER_BULK_COUNT ||
	       type == PERF_SAMPLE_COUNTER;
}

enum pdh_cook_status pdh_cook_per_second_divisor(int64_t time0, int64_t time1, int64_t freq,
						 double *ret)
{
	enum pdh_cook_status st;
	double dd;

	if (freq <= 0)
		return PDH_COOK_NEGATIVE_TIMEBASE;
	st = time_delta(time0, time1, &dd);
	if (st == PDH_COOK_OK)
		*ret = dd / (double)freq;
	return st;
}

/* delta(N) / (delta(D) / F) over the system clock: counts per second */
static enum pdh_cook_status per_second(const struct pdh_cook_raw *old,
				       const struct pdh_cook_raw *cur, double *ret)
{
	enum pdh_cook_status st;
	double div;

	st = pdh_cook_per_second_divisor(old->time, cur->time, cur->freq, &div);
	return st == PDH_COOK_OK ? pdh_cook_per_second(old->value, cur->value, div, ret) : st;
}

/* delta(N) / delta(B): sample fractions and averages; a zero delta(B) gives 0 */
static enum pdh_cook_status base_ratio(const struct pdh_cook_raw *old,
				       const struct pdh_cook_raw *cur, double *ret)
{
	enum pdh_cook_status st;
	double dn;

	if (old->base > cur->base)
		return PDH_COOK_NEGATIVE_DENOMINATOR;
	st = value_delta(old, cur, &dn);
	if (st != PDH_COOK_OK)
		return st;
	*ret = cur->base == old->base ? 0.0 : dn / (double)(cur->base - old->base);
	return PDH_COOK_OK;
}

/* multi timers: 100 * ratio / B1, or 100 * (B1 - ratio) for the inverse ones */
static enum pdh_cook_status multi_timer(uint32_t type, const struct pdh_cook_raw *old,
					const struct pdh_cook_raw *cur, double *ret)
{
	enum pdh_cook_status st;
	double r, v;

	if (cur->multi == 0)
		return PDH_COOK_NEGATIVE_DENOMINATOR;
	st = time_ratio(type, old, cur, &r);
	if (st != PDH_COOK_OK)
		return st;
	if (type & PERF_INVERSE_COUNTER)
		v = 100.0 * ((double)cur->multi - r);
	else
		v = 100.0 * r / (double)cur->multi;
	if (v < 0)
		return PDH_COOK_NEGATIVE_VALUE;
	*ret = v;
	return PDH_COOK_OK;
}

/* (D - N) / F on one sample, D and F from the object clock (perfTimeID, perfFreqID) */
static enum pdh_cook_status elapsed(const struct pdh_cook_raw *cur, double *ret)
{
	if (cur->value == 0) {
		*ret = 0.0; /* start time 0: not started (.NET does the same) */
		return PDH_COOK_OK;
	}
	if (cur->obj_freq == 0 || (int64_t)cur->obj_freq < 0)
		return PDH_COOK_NEGATIVE_TIMEBASE;
	if (cur->value > cur->obj_time)
		return PDH_COOK_NEGATIVE_VALUE;
	*ret = (double)(cur->obj_time - cur->value) / (double)cur->obj_freq;
	return PDH_COOK_OK;
}

/* the single-sample types: raw counts, raw fractions, elapsed time */
static enum pdh_cook_status one_sample(uint32_t type, const struct pdh_cook_raw *cur, double *ret)
{
	switch (type) {
	case PERF_COUNTER_RAWCOUNT:
	case PERF_COUNTER_LARGE_RAWCOUNT:
	case PERF_COUNTER_RAWCOUNT_HEX: /* N; typeperf prints it in decimal like PDH_FMT_DOUBLE */
	case PERF_COUNTER_LARGE_RAWCOUNT_HEX:
		*ret = (double)cur->value;
		return PDH_COOK_OK;
	case PERF_RAW_FRACTION:
	case PERF_LARGE_RAW_FRACTION:
		/* 100 * N / B; a zero base gives 0 like a zero base difference */
		*ret = cur->base ? 100.0 * (double)cur->value / (double)cur->base : 0.0;
		return PDH_COOK_OK;
	case PERF_ELAPSED_TIME:
		return elapsed(cur, ret);
	default:
		return PDH_COOK_UNSUPPORTED;
	}
}

/* the two-sample types; @old is present */
static enum pdh_cook_status two_samples(uint32_t type, const struct pdh_cook_raw *old,
					const struct pdh_cook_raw *cur, double *ret)
{
	enum pdh_cook_status st;
	double r;

	if (pdh_cook_per_second_type(type))
		return per_second(old, cur, ret);
	switch (type) {
	case PERF_COUNTER_QUEUELEN_TYPE:
	case PERF_COUNTER_LARGE_QUEUELEN_TYPE:
	case PERF_COUNTER_100NS_QUEUELEN_TYPE:
	case PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE:
		/* delta(N) / delta(D), D in the type's time base */
		return time_ratio(type, old, cur, ret);
	case PERF_COUNTER_TIMER:
	case PERF_100NSEC_TIMER:
	case PERF_OBJ_TIME_TIMER:
		st = time_ratio(type, old, cur, &r);
		if (st == PDH_COOK_OK)
			*ret = 100.0 * r;
		return st;
	case PERF_COUNTER_TIMER_INV:
	case PERF_100NSEC_TIMER_INV:
		st = time_ratio(type, old, cur, &r);
		if (st != PDH_COOK_OK)
			return st;
		if (r > 1.0)
			return PDH_COOK_NEGATIVE_VALUE;
		*ret = 100.0 * (1.0 - r);
		return PDH_COOK_OK;
	case PERF_COUNTER_MULTI_TIMER:
	case PERF_100NSEC_MULTI_TIMER:
	case PERF_COUNTER_MULTI_TIMER_INV:
	case PERF_100NSEC_MULTI_TIMER_INV:
		return multi_timer(type, old, cur, ret);
	case PERF_SAMPLE_FRACTION:
		st = base_ratio(old, cur, &r);
		if (st == PDH_COOK_OK)
			*ret = 100.0 * r;
		return st;
	case PERF_AVERAGE_TIMER:
		/* (delta(N) / F) / delta(B): N in system ticks, result in seconds */
		if (cur->freq <= 0)
			return PDH_COOK_NEGATIVE_TIMEBASE;
		st = base_ratio(old, cur, &r);
		if (st == PDH_COOK_OK)
			*ret = r / (double)cur->freq;
		return st;
	case PERF_AVERAGE_BULK:
		return base_ratio(old, cur, ret);
	case PERF_COUNTER_DELTA:
	case PERF_COUNTER_LARGE_DELTA:
		return value_delta(old, cur, ret);
	case PERF_PRECISION_SYSTEM_TIMER:
	case PERF_PRECISION_100NS_TIMER:
		/* D is the companion time-stamp counter, carried in base */
		st = clock_delta(old->base, cur->base, &r);
		if (st == PDH_COOK_OK)
			st = value_delta(old, cur, ret);
		if (st == PDH_COOK_OK)
			*ret = 100.0 * *ret / r;
		return st;
	case PERF_PRECISION_OBJECT_TIMER:
		st = clock_delta(old->obj_time, cur->obj_time, &r);
		if (st == PDH_COOK_OK)
			st = value_delta(old, cur, ret);
		if (st == PDH_COOK_OK)
			*ret = 100.0 * *ret / r;
		return st;
	default:
		return PDH_COOK_UNSUPPORTED;
	}
}

enum pdh_cook_status pdh_cook_value(uint32_t type, const struct pdh_cook_raw *old,
				    const struct pdh_cook_raw *cur, double *ret_value)
{
	enum pdh_cook_status st;
	double v = 0;

	switch (ctrtype_samples(type)) {
	case 1:
		if (!cur)
			return PDH_COOK_FIRST_SAMPLE;
		st = one_sample(type, cur, &v);
		break;
	case 2:
		if (!old || !cur)
			return PDH_COOK_FIRST_SAMPLE;
		st = two_samples(type, old, cur, &v);
		break;
	default:
		/* bases, text, no data; histograms and unknown values */
		return ctrtype_calc(type) == CTRTYPE_CALC_UNKNOWN ? PDH_COOK_UNSUPPORTED
								  : PDH_COOK_NOT_DISPLAYABLE;
	}
	if (st == PDH_COOK_OK)
		*ret_value = v;
	return st;
}

double pdh_cook_scale(double value, int32_t scale)
{
	return value * pow(10.0, (double)scale);
}

uint32_t pdh_cook_status_pdh(enum pdh_cook_status status)
{
	switch (status) {
	case PDH_COOK_OK:
		return PDH_VALID;
	case PDH_COOK_FIRST_SAMPLE:
	case PDH_COOK_BAD_DATA:
		return PDH_CSTATUS_INVALID;
	case PDH_COOK_NEGATIVE_DENOMINATOR:
		return PDH_NEG_DENOMINATOR;
	case PDH_COOK_NEGATIVE_TIMEBASE:
		return PDH_NEG_TIMEBASE;
	case PDH_COOK_NEGATIVE_VALUE:
		return PDH_NEG_VALUE;
	case PDH_COOK_NOT_DISPLAYABLE:
		return PDH_NO_DATA;
	case PDH_COOK_UNSUPPORTED:
	default:
		return PDH_INVALID_DATA;
	}
}

const char *pdh_cook_status_str(enum pdh_cook_status status)
{
	switch (status) {
	case PDH_COOK_OK:
		return "valid";
	case PDH_COOK_FIRST_SAMPLE:
		return "needs a second sample";
	case PDH_COOK_BAD_DATA:
		return "counter went back";
	case PDH_COOK_NEGATIVE_DENOMINATOR:
		return "negative denominator";
	case PDH_COOK_NEGATIVE_TIMEBASE:
		return "time did not advance";
	case PDH_COOK_NEGATIVE_VALUE:
		return "negative value";
	case PDH_COOK_NOT_DISPLAYABLE:
		return "not displayable";
	case PDH_COOK_UNSUPPORTED:
	default:
		return "unsupported counter type";
	}
}
