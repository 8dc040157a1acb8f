/* SPDX-License-Identifier: MIT */
/*
 * value.c - values of PDH counters (pdh.md 5.4-5.6, 6.1-6.3): formatted and raw values and
 * arrays, computations from caller-held raw samples, time base, scale and PdhGetCounterInfo.
 * Every display value is computed one way, by calc.c.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ctrtype.h"
#include "pdh_internal.h"

/* the layouts of pdh.md 2 (x86-64) */
#define LAYOUT(type, size, field, off)                                                             \
	_Static_assert(sizeof(type) == (size) && offsetof(type, field) == (off), #type)
LAYOUT(PDH_RAW_COUNTER, 40, MultiCount, 32);
LAYOUT(PDH_RAW_COUNTER, 40, FirstValue, 16);
LAYOUT(PDH_RAW_COUNTER, 40, TimeStamp, 4);
LAYOUT(PDH_RAW_COUNTER_ITEM_W, 48, RawValue, 8);
LAYOUT(PDH_RAW_COUNTER_ITEM_A, 48, RawValue, 8);
LAYOUT(PDH_FMT_COUNTERVALUE, 16, doubleValue, 8);
LAYOUT(PDH_FMT_COUNTERVALUE, 16, longValue, 8);
LAYOUT(PDH_FMT_COUNTERVALUE_ITEM_W, 24, FmtValue, 8);
LAYOUT(PDH_FMT_COUNTERVALUE_ITEM_A, 24, FmtValue, 8);
LAYOUT(PDH_STATISTICS, 56, min, 8);
LAYOUT(PDH_STATISTICS, 56, max, 24);
LAYOUT(PDH_STATISTICS, 56, mean, 40);
LAYOUT(PDH_COUNTER_PATH_ELEMENTS_W, 48, dwInstanceIndex, 32);
LAYOUT(PDH_COUNTER_PATH_ELEMENTS_W, 48, szCounterName, 40);
LAYOUT(PDH_COUNTER_PATH_ELEMENTS_A, 48, szCounterName, 40);
LAYOUT(PDH_DATA_ITEM_PATH_ELEMENTS_W, 40, dwItemId, 24);
LAYOUT(PDH_DATA_ITEM_PATH_ELEMENTS_W, 40, szInstanceName, 32);
LAYOUT(PDH_COUNTER_INFO_W, 112, lScale, 16);
LAYOUT(PDH_COUNTER_INFO_W, 112, dwUserData, 24);
LAYOUT(PDH_COUNTER_INFO_W, 112, szFullPath, 40);
LAYOUT(PDH_COUNTER_INFO_W, 112, szMachineName, 48);
LAYOUT(PDH_COUNTER_INFO_W, 112, CounterPath, 48);
LAYOUT(PDH_COUNTER_INFO_W, 112, dwInstanceIndex, 80);
LAYOUT(PDH_COUNTER_INFO_W, 112, szCounterName, 88);
LAYOUT(PDH_COUNTER_INFO_W, 112, szExplainText, 96);
LAYOUT(PDH_COUNTER_INFO_W, 112, DataBuffer, 104);
LAYOUT(PDH_COUNTER_INFO_A, 112, szExplainText, 96);
LAYOUT(PDH_TIME_INFO, 24, SampleCount, 16);
LAYOUT(PDH_RAW_LOG_RECORD, 16, RawBytes, 12);
LAYOUT(FILETIME, 8, dwHighDateTime, 4);
_Static_assert(_Alignof(FILETIME) == 4 && sizeof(PDH_STATUS) == 4 && sizeof(DWORD_PTR) == 8 &&
		       sizeof(BOOLEAN) == 1,
	       "pdh.md 1.2 types");

static bool format_ok(DWORD fmt)
{
	return fmt & (PDH_FMT_LONG | PDH_FMT_DOUBLE | PDH_FMT_LARGE);
}

PDH_FUNCTION PdhGetFormattedCounterValue(PDH_HCOUNTER hCounter, DWORD dwFormat, LPDWORD lpdwType,
					 PPDH_FMT_COUNTERVALUE pValue)
{
	struct pdh_counter *c;
	PDH_STATUS st;

	if (!pValue)
		return PDH_INVALID_ARGUMENT;
	c = pdh_counter_lock(hCounter);
	if (!c)
		return PDH_INVALID_HANDLE;
	st = PDH_INVALID_ARGUMENT;
	if (!format_ok(dwFormat))
		goto out;
	if (lpdwType)
		*lpdwType = c->ctr.type;
	memset(pValue, 0, sizeof(*pValue));
	if (!c->valid) {
		/* nothing collected yet */
		pValue->CStatus = (DWORD)PDH_CSTATUS_INVALID_DATA;
		st = c->wildcard ? PDH_NO_DATA : PDH_INVALID_DATA;
		goto out;
	}
	if (!pdh_counter_nr(c)) {
		pValue->CStatus = c->status;
		st = PDH_INVALID_DATA;
		goto out;
	}
	st = pdh_counter_format(c, 0, dwFormat, pValue);
	if (!st) {
		/* a read clears the data-changed flag (D-FmtValue) */
		pValue->CStatus =
			c->changed ? (DWORD)PDH_CSTATUS_NEW_DATA : (DWORD)PDH_CSTATUS_VALID_DATA;
		c->changed = false;
	}
out:
	pdh_unlock(c->q);
	return st;
}

/* the array protocol shared by the formatted and raw, W and A arrays (pdh.md 5.4.2) */
static PDH_STATUS get_array(PDH_HCOUNTER h, DWORD fmt, bool raw, bool wide, LPDWORD size,
			    LPDWORD count, void *buf)
{
	size_t item_size =
		raw ? sizeof(PDH_RAW_COUNTER_ITEM_W) : sizeof(PDH_FMT_COUNTERVALUE_ITEM_W);
	size_t need, off;
	struct pdh_counter *c;
	PDH_STATUS st = PDH_INVALID_ARGUMENT;

	if (!size || !count)
		return PDH_INVALID_ARGUMENT;
	c = pdh_counter_lock(h);
	if (!c)
		return PDH_INVALID_HANDLE;
	if ((!raw && !format_ok(fmt)) || (!buf && *size))
		goto out;
	st = PDH_NO_DATA;
	if (!c->valid)
		goto out;
	need = pdh_array_size(c, item_size, wide);
	*count = (DWORD)pdh_counter_nr(c);
	if (!buf || *size < need) {
		*size = (DWORD)need;
		st = PDH_MORE_DATA;
		goto out;
	}
	off = pdh_array_fill(c, fmt, raw, wide, buf);
	if (!raw)
		c->changed = false;
	*size = (DWORD)off;
	st = 0;
out:
	pdh_unlock(c->q);
	return st;
}

PDH_FUNCTION PdhGetFormattedCounterArrayW(PDH_HCOUNTER hCounter, DWORD dwFormat,
					  LPDWORD lpdwBufferSize, LPDWORD lpdwItemCount,
					  PPDH_FMT_COUNTERVALUE_ITEM_W ItemBuffer)
{
	return get_array(hCounter, dwFormat, false, true, lpdwBufferSize, lpdwItemCount,
			 ItemBuffer);
}

PDH_FUNCTION PdhGetFormattedCounterArrayA(PDH_HCOUNTER hCounter, DWORD dwFormat,
					  LPDWORD lpdwBufferSize, LPDWORD lpdwItemCount,
					  PPDH_FMT_COUNTERVALUE_ITEM_A ItemBuffer)
{
	return get_array(hCounter, dwFormat, false, false, lpdwBufferSize, lpdwItemCount,
			 ItemBuffer);
}

PDH_FUNCTION PdhGetRawCounterArrayW(PDH_HCOUNTER hCounter, LPDWORD lpdwBufferSize,
				    LPDWORD lpdwItemCount, PPDH_RAW_COUNTER_ITEM_W ItemBuffer)
{
	return get_array(hCounter, 0, true, true, lpdwBufferSize, lpdwItemCount, ItemBuffer);
}

PDH_FUNCTION PdhGetRawCounterArrayA(PDH_HCOUNTER hCounter, LPDWORD lpdwBufferSize,
				    LPDWORD lpdwItemCount, PPDH_RAW_COUNTER_ITEM_A ItemBuffer)
{
	return get_array(hCounter, 0, true, false, lpdwBufferSize, lpdwItemCount, ItemBuffer);
}

PDH_FUNCTION PdhGetRawCounterValue(PDH_HCOUNTER hCounter, LPDWORD lpdwType, PPDH_RAW_COUNTER pValue)
{
	struct pdh_counter *c = pdh_counter_lock(hCounter);

	if (!c)
		return PDH_INVALID_HANDLE;
	if (!pValue) {
		pdh_unlock(c->q);
		return PDH_INVALID_ARGUMENT;
	}
	if (lpdwType)
		*lpdwType = c->ctr.type;
	memset(pValue, 0, sizeof(*pValue));
	if (pdh_counter_nr(c))
		pdh_counter_raw(c, 0, pValue);
	else if (c->valid)
		pValue->CStatus = c->status; /* instance missing: success, CStatus says so */
	pdh_unlock(c->q);
	return 0;
}

PDH_FUNCTION PdhCalculateCounterFromRawValue(PDH_HCOUNTER hCounter, DWORD dwFormat,
					     PPDH_RAW_COUNTER rawValue1, PPDH_RAW_COUNTER rawValue2,
					     PPDH_FMT_COUNTERVALUE fmtValue)
{
	struct pdh_counter *c;
	PDH_STATUS st;

	if (!fmtValue)
		return PDH_INVALID_ARGUMENT;
	c = pdh_counter_lock(hCounter);
	if (!c)
		return PDH_INVALID_HANDLE;
	if (!rawValue1 || !format_ok(dwFormat))
		st = PDH_INVALID_ARGUMENT;
	else
		st = pdh_calc(c->ctr.type, pdh_timebase(c), c->scale, dwFormat, rawValue1,
			      rawValue2, fmtValue);
	pdh_unlock(c->q);
	return st;
}

PDH_FUNCTION PdhFormatFromRawValue(DWORD dwCounterType, DWORD dwFormat, LONGLONG *pTimeBase,
				   PPDH_RAW_COUNTER pRawValue1, PPDH_RAW_COUNTER pRawValue2,
				   PPDH_FMT_COUNTERVALUE pFmtValue)
{
	int64_t tb = pTimeBase ? *pTimeBase : 0;

	if (!pFmtValue || !pRawValue1 || !format_ok(dwFormat))
		return PDH_INVALID_ARGUMENT;
	if (!pTimeBase && ctrtype_timebase(dwCounterType) != CTRTYPE_TB_NONE &&
	    ctrtype_timebase(dwCounterType) != CTRTYPE_TB_100NS)
		return PDH_INVALID_ARGUMENT; /* a time-based type needs its time base */
	if (!pTimeBase && ctrtype_timebase(dwCounterType) == CTRTYPE_TB_100NS)
		tb = 10000000;
	if (!ctrtype_displayable(dwCounterType))
		return PDH_FUNCTION_NOT_FOUND;
	return pdh_calc(dwCounterType, tb, 0, dwFormat, pRawValue1, pRawValue2, pFmtValue);
}

PDH_FUNCTION PdhComputeCounterStatistics(PDH_HCOUNTER hCounter, DWORD dwFormat, DWORD dwFirstEntry,
					 DWORD dwNumEntries, PPDH_RAW_COUNTER lpRawValueArray,
					 PPDH_STATISTICS data)
{
	double min = 0, max = 0, sum = 0;
	DWORD i, n = 0, two;
	struct pdh_counter *c;
	PDH_STATUS st = PDH_INVALID_ARGUMENT;

	if (!data || !lpRawValueArray)
		return PDH_INVALID_ARGUMENT;
	c = pdh_counter_lock(hCounter);
	if (!c)
		return PDH_INVALID_HANDLE;
	if (!format_ok(dwFormat) || !dwNumEntries || dwFirstEntry >= dwNumEntries)
		goto out;
	two = ctrtype_samples(c->ctr.type) == 2;
	/* oldest at dwFirstEntry, wrapping; two-sample types use consecutive pairs */
	for (i = two; i < dwNumEntries; i++) {
		const PDH_RAW_COUNTER *cur = &lpRawValueArray[(dwFirstEntry + i) % dwNumEntries];
		const PDH_RAW_COUNTER *prev =
			two ? &lpRawValueArray[(dwFirstEntry + i - 1) % dwNumEntries] : NULL;
		PDH_FMT_COUNTERVALUE v;

		if (pdh_calc(c->ctr.type, pdh_timebase(c), c->scale,
			     PDH_FMT_DOUBLE | PDH_FMT_NOCAP100 | (dwFormat & PDH_FMT_NOSCALE) |
				     (dwFormat & PDH_FMT_1000),
			     cur, prev, &v))
			continue; /* invalid entries are skipped */
		if (!n || v.doubleValue < min)
			min = v.doubleValue;
		if (!n || v.doubleValue > max)
			max = v.doubleValue;
		sum += v.doubleValue;
		n++;
	}
	memset(data, 0, sizeof(*data));
	data->dwFormat = dwFormat;
	data->count = n;
	if (n) {
		pdh_finish(c->ctr.type, 0, dwFormat | PDH_FMT_NOSCALE, min, &data->min);
		pdh_finish(c->ctr.type, 0, dwFormat | PDH_FMT_NOSCALE, max, &data->max);
		pdh_finish(c->ctr.type, 0, dwFormat | PDH_FMT_NOSCALE, sum / n, &data->mean);
	} else {
		data->min.CStatus = data->max.CStatus = data->mean.CStatus =
			(DWORD)PDH_CSTATUS_INVALID_DATA;
	}
	st = 0;
out:
	pdh_unlock(c->q);
	return st;
}

PDH_FUNCTION PdhGetCounterTimeBase(PDH_HCOUNTER hCounter, LONGLONG *pTimeBase)
{
	struct pdh_counter *c;
	int64_t tb;

	if (!pTimeBase)
		return PDH_INVALID_ARGUMENT;
	c = pdh_counter_lock(hCounter);
	if (!c)
		return PDH_INVALID_HANDLE;
	tb = pdh_timebase(c);
	if (ctrtype_calc(c->ctr.type) == CTRTYPE_CALC_AVERAGE && !tb)
		tb = PDH_DEFAULT_FREQ;
	pdh_unlock(c->q);
	if (!tb)
		return PDH_INVALID_ARGUMENT; /* no time base (DOC D-TimeBase) */
	*pTimeBase = tb;
	return 0;
}

PDH_FUNCTION PdhSetCounterScaleFactor(PDH_HCOUNTER hCounter, LONG lFactor)
{
	struct pdh_counter *c = pdh_counter_lock(hCounter);

	if (!c)
		return PDH_INVALID_HANDLE;
	if (lFactor < PDH_MIN_SCALE || lFactor > PDH_MAX_SCALE) {
		pdh_unlock(c->q);
		return PDH_INVALID_ARGUMENT;
	}
	c->scale = lFactor;
	pdh_unlock(c->q);
	return 0;
}

/* PdhGetCounterInfo for both variants: the layouts differ only in the string type */
static PDH_STATUS counter_info(PDH_HCOUNTER h, BOOLEAN explain, LPDWORD size,
			       PDH_COUNTER_INFO_W *info, bool wide)
{
	const char *strs[7];
	char machine[PDH_MAX_COUNTER_NAME + 3] = "";
	size_t need = sizeof(*info), i, off, unit = wide ? 2 : 1;
	struct pdh_counter *c = pdh_counter_lock(h);
	PDH_STATUS st = PDH_INVALID_ARGUMENT;
	void **ptrs[7];

	if (!c)
		return PDH_INVALID_HANDLE;
	if (!size || (!info && *size))
		goto out;
	if (explain && !c->explain && !c->q->source)
		c->explain = pdh_explain(c->src->machine, &c->guid, c->ctr.id);
	if (c->path.machine)
		snprintf(machine, sizeof(machine), "\\\\%s", c->path.machine);
	strs[0] = c->full_path;
	strs[1] = c->path.machine ? machine : NULL;
	strs[2] = c->path.object;
	strs[3] = c->path.instance;
	strs[4] = c->path.parent;
	strs[5] = c->path.counter;
	strs[6] = explain && !c->q->source ? c->explain : NULL;
	for (i = 0; i < 7; i++)
		if (strs[i])
			need += (pdh_chars(strs[i], wide) + 1) * unit;
	if (!info || (*size < need && *size != sizeof(*info))) {
		*size = (DWORD)need;
		st = PDH_MORE_DATA;
		goto out;
	}
	memset(info, 0, sizeof(*info));
	info->dwLength = (DWORD)(*size < need ? sizeof(*info) : need);
	info->dwType = c->ctr.type;
	info->CVersion = PDH_VERSION;
	info->CStatus = c->valid ? (pdh_counter_nr(c) ? 0 : c->status) : 0;
	info->lScale = c->scale;
	info->lDefaultScale = c->def_scale;
	info->dwUserData = c->user;
	info->dwQueryUserData = c->q->user;
	info->dwInstanceIndex = c->path.index > 0 ? (DWORD)c->path.index : 0;
	st = 0;
	if (*size < need)
		goto out; /* exactly the fixed part: succeeds without strings (WT) */
	ptrs[0] = (void **)&info->szFullPath;
	ptrs[1] = (void **)&info->szMachineName;
	ptrs[2] = (void **)&info->szObjectName;
	ptrs[3] = (void **)&info->szInstanceName;
	ptrs[4] = (void **)&info->szParentInstance;
	ptrs[5] = (void **)&info->szCounterName;
	ptrs[6] = (void **)&info->szExplainText;
	off = sizeof(*info);
	for (i = 0; i < 7; i++) {
		if (!strs[i])
			continue;
		*ptrs[i] = (char *)info + off;
		off += pdh_put((char *)info + off, strs[i], wide) * unit;
	}
	*size = (DWORD)need;
out:
	pdh_unlock(c->q);
	return st;
}

PDH_FUNCTION PdhGetCounterInfoW(PDH_HCOUNTER hCounter, BOOLEAN bRetrieveExplainText,
				LPDWORD pdwBufferSize, PPDH_COUNTER_INFO_W lpBuffer)
{
	return counter_info(hCounter, bRetrieveExplainText, pdwBufferSize, lpBuffer, true);
}

PDH_FUNCTION PdhGetCounterInfoA(PDH_HCOUNTER hCounter, BOOLEAN bRetrieveExplainText,
				LPDWORD pdwBufferSize, PPDH_COUNTER_INFO_A lpBuffer)
{
	return counter_info(hCounter, bRetrieveExplainText, pdwBufferSize,
			    (PDH_COUNTER_INFO_W *)(void *)lpBuffer, false);
}
