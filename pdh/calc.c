/* SPDX-License-Identifier: MIT */
/*
 * calc.c - a counter's display value from its raw samples (pdh.md 6.1-6.3, 6.5): the one
 * rule of what PDH_RAW_COUNTER.SecondValue carries for a counter type (the collection fills
 * it by this rule, the computation reads it back by the same), the way every display value
 * goes (PDH_RAW_COUNTER pair -> struct pdh_cook_raw -> pdh_cook_value() (tools.md 5.3) ->
 * scale, x1000, cap at 100 -> the requested type), and a counter's time base.
 */
#include <string.h>

#include "ctrtype.h"
#include "pdh_internal.h"

enum second pdh_second_of(uint32_t type)
{
	/* a fraction's or an average's denominator: the base counter */
	switch (ctrtype_calc(type)) {
	case CTRTYPE_CALC_AVERAGE:
	case CTRTYPE_CALC_RAW_FRACTION:
	case CTRTYPE_CALC_SAMPLE_FRACTION:
		return SECOND_BASE;
	default:
		break;
	}
	/*
	 * the precision timers of the system clock and of 100 ns carry their own time stamp in
	 * the base counter (tools.md 5.3); PERF_PRECISION_OBJECT_TIMER takes the object clock,
	 * as every object timer (its collection reads that clock from the base counter)
	 */
	if (type == PERF_PRECISION_SYSTEM_TIMER || type == PERF_PRECISION_100NS_TIMER)
		return SECOND_BASE;
	/* else the clock of the type's time base */
	switch (ctrtype_timebase(type)) {
	case CTRTYPE_TB_TICK:
		return SECOND_TIME;
	case CTRTYPE_TB_100NS:
		return SECOND_100NS;
	case CTRTYPE_TB_OBJECT:
		return SECOND_OBJECT;
	default:
		return SECOND_NONE;
	}
}

/* a PDH_RAW_COUNTER as the inputs of pdh_cook_value() (the inverse of pdh.md 6.5) */
static void to_cook(uint32_t type, int64_t timebase, const PDH_RAW_COUNTER *r,
		    struct pdh_cook_raw *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->value = (uint64_t)r->FirstValue;
	ret->freq = timebase;
	ret->obj_freq = (uint64_t)timebase;
	ret->multi = r->MultiCount;
	switch (pdh_second_of(type)) {
	case SECOND_BASE:
		ret->base = (uint64_t)r->SecondValue;
		break;
	case SECOND_TIME:
		ret->time = r->SecondValue;
		break;
	case SECOND_100NS:
		ret->time_100ns = r->SecondValue;
		break;
	case SECOND_OBJECT:
		ret->obj_time = (uint64_t)r->SecondValue;
		break;
	default:
		break;
	}
}

/* scale, x1000, cap and convert a cooked value (pdh.md 6.3) */
void pdh_finish(uint32_t type, LONG scale, DWORD fmt, double v, PDH_FMT_COUNTERVALUE *ret)
{
	if (!(fmt & PDH_FMT_NOSCALE) && scale)
		v = pdh_cook_scale(v, scale);
	if (fmt & PDH_FMT_1000)
		v *= 1000.0;
	if (!(fmt & PDH_FMT_NOCAP100) && ctrtype_percent(type) && v > 100.0)
		v = 100.0;
	/* LONG wins over LARGE over DOUBLE when several are set (as Wine); C truncation */
	if (fmt & PDH_FMT_LONG)
		ret->longValue = (LONG)v;
	else if (fmt & PDH_FMT_LARGE)
		ret->largeValue = (LONGLONG)v;
	else
		ret->doubleValue = v;
}

static bool raw_valid(const PDH_RAW_COUNTER *r)
{
	return r->CStatus == (DWORD)PDH_CSTATUS_VALID_DATA ||
	       r->CStatus == (DWORD)PDH_CSTATUS_NEW_DATA;
}

/* the display value of @newer (and @older) of a counter of @type; PDH status */
PDH_STATUS pdh_calc(uint32_t type, int64_t timebase, LONG scale, DWORD fmt,
		    const PDH_RAW_COUNTER *newer, const PDH_RAW_COUNTER *older,
		    PDH_FMT_COUNTERVALUE *ret)
{
	struct pdh_cook_raw cur, old;
	enum pdh_cook_status cs;
	double v = 0;

	memset(ret, 0, sizeof(*ret));
	if (!raw_valid(newer)) {
		ret->CStatus = newer->CStatus;
		return PDH_INVALID_DATA;
	}
	if (older && !raw_valid(older))
		older = NULL;
	to_cook(type, timebase, newer, &cur);
	if (older)
		to_cook(type, timebase, older, &old);
	cs = pdh_cook_value(type, older ? &old : NULL, &cur, &v);
	switch (cs) {
	case PDH_COOK_OK:
		break;
	case PDH_COOK_NEGATIVE_DENOMINATOR:
	case PDH_COOK_NEGATIVE_TIMEBASE:
	case PDH_COOK_NEGATIVE_VALUE:
		ret->CStatus = (DWORD)PDH_CSTATUS_INVALID_DATA;
		return (PDH_STATUS)pdh_cook_status_pdh(cs);
	default:
		/* one sample of a two-sample type, a counter that went back */
		ret->CStatus = (DWORD)PDH_CSTATUS_INVALID_DATA;
		return PDH_INVALID_DATA;
	}
	ret->CStatus = newer->CStatus;
	pdh_finish(type, scale, fmt, v, ret);
	return 0;
}

/* the time base of counter @c: its newest sample's, else this port's clocks */
int64_t pdh_timebase(const struct pdh_counter *c)
{
	if (c->timebase)
		return c->timebase;
	switch (ctrtype_timebase(c->ctr.type)) {
	case CTRTYPE_TB_100NS:
		return 10000000;
	case CTRTYPE_TB_TICK:
	case CTRTYPE_TB_OBJECT:
		return PDH_DEFAULT_FREQ;
	default:
		return 0;
	}
}
