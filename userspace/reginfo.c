// SPDX-License-Identifier: MIT
/*
 * reginfo.c - PerfQueryCounterSetRegistrationInfo: the registration of a counter set as
 * Windows returns it, from the (checked, private) copy of the counter set's info map.
 *
 * Strings are stored once, in the language of the manifest: requestLangId is accepted and
 * ignored for every string request. A counter set created on demand by a provider without
 * a manifest has no strings; so that tools still work it gets: counter-set name = its GUID
 * in registry form "{XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX}" (upper case), counter names =
 * the decimal counter id, help strings and provider name = "" (present, empty).
 */
#include <stdio.h>
#include <string.h>

#include "consumer.h"
#include "remote_client.h"

#define NUMBER_UNITS 16 /* a decimal ULONG and its NUL, in UTF-16 units */

/* a NUL-terminated UTF-16 string into @o */
static void put_string(struct perflib_obuf *o, const WCHAR *s, size_t len)
{
	static const WCHAR nul;
	uint8_t *p = perflib_obuf_put(o, (len + 1) * 2);

	if (!p)
		return;
	memcpy(p, s, len * 2);
	memcpy(p + len * 2, &nul, sizeof(nul));
}

/* an ASCII string as UTF-16 into @buf (units), returns its length */
static size_t ascii_to_utf16(const char *s, WCHAR *buf, size_t units)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < units; i++)
		buf[i] = (WCHAR)(unsigned char)s[i];
	buf[i] = 0;
	return i;
}

enum which {
	COUNTER_NAME,
	COUNTER_HELP,
};

/* the string of counter @k, or NULL when absent; @buf holds generated ones */
static const WCHAR *counter_string(const struct perflib_cset *cs, uint32_t k, enum which which,
				   WCHAR *buf, size_t *ret_len)
{
	const struct perflib_info *info = cs->map->info;
	const struct perflib_info_counter *c = &cs->map->counters[k];
	char num[NUMBER_UNITS];

	if (info->flags & PERFLIB_INFO_HAS_NAMES)
		return perflib_info_string(info, which == COUNTER_NAME ? c->name : c->help,
					   ret_len);
	/* no manifest: the id names the counter, help is empty */
	if (which == COUNTER_HELP) {
		buf[0] = 0;
		*ret_len = 0;
		return buf;
	}
	snprintf(num, sizeof(num), "%u", c->id);
	*ret_len = ascii_to_utf16(num, buf, NUMBER_UNITS);
	return buf;
}

/* PERF_STRING_BUFFER_HEADER, one PERF_STRING_COUNTER_HEADER per counter, then the strings */
static void put_string_block(struct perflib_obuf *o, const struct perflib_cset *cs,
			     enum which which)
{
	size_t table = sizeof(PERF_STRING_BUFFER_HEADER) +
		       (size_t)cs->nr_counters * sizeof(PERF_STRING_COUNTER_HEADER);
	PERF_STRING_BUFFER_HEADER bh = {.dwCounters = cs->nr_counters};
	WCHAR buf[NUMBER_UNITS];
	uint8_t *p;
	uint32_t k;

	/* the block is the whole output: offsets from its start are offsets into o */
	perflib_obuf_put(o, table);
	for (k = 0; k < cs->nr_counters; k++) {
		PERF_STRING_COUNTER_HEADER sh = {.dwCounterId = cs->map->counters[k].id,
						 .dwOffset = PERFLIB_STR_NONE};
		const WCHAR *s;
		size_t len;

		s = counter_string(cs, k, which, buf, &len);
		if (s) {
			sh.dwOffset = (DWORD)o->len;
			put_string(o, s, len);
		}
		p = perflib_obuf_at(o, sizeof(bh) + k * sizeof(sh), sizeof(sh));
		if (p)
			memcpy(p, &sh, sizeof(sh));
	}
	bh.dwSize = (DWORD)o->len;
	p = perflib_obuf_at(o, 0, sizeof(bh));
	if (p)
		memcpy(p, &bh, sizeof(bh));
}

static void put_counter_reg(struct perflib_obuf *o, const struct perflib_info_counter *c)
{
	PERF_COUNTER_REG_INFO r = {
		.CounterId = c->id,
		.Type = c->type,
		.Attrib = c->attrib,
		.DetailLevel = c->detail_level,
		.DefaultScale = c->scale,
		.BaseCounterId = c->base_id,
		.PerfTimeId = c->perf_time_id,
		.PerfFreqId = c->perf_freq_id,
		.MultiId = c->multi_id,
		.AggregateFunc = c->aggregate,
	};
	uint8_t *p = perflib_obuf_put(o, sizeof(r));

	if (p)
		memcpy(p, &r, sizeof(r));
}

/* a counter-set level string: name, help or provider name ("" when absent) */
static void put_set_string(struct perflib_obuf *o, const struct perflib_cset *cs, uint32_t off,
			   bool is_name)
{
	const struct perflib_info *info = cs->map->info;
	char text[40];
	WCHAR buf[40];
	const WCHAR *s = NULL;
	size_t len = 0;

	if (info->flags & PERFLIB_INFO_HAS_NAMES) {
		s = perflib_info_string(info, off, &len);
	} else if (is_name) {
		/* no manifest: the GUID in registry form names the counter set */
		const GUID *g = &cs->map->guid;

		snprintf(text, sizeof(text), "{%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X}",
			 g->Data1, g->Data2, g->Data3, g->Data4[0], g->Data4[1], g->Data4[2],
			 g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
		len = ascii_to_utf16(text, buf, sizeof(buf) / sizeof(buf[0]));
		s = buf;
	}
	if (!s) {
		len = 0;
		s = u"";
	}
	put_string(o, s, len);
}

static ULONG reg_info(const struct perflib_cset *cs, PerfRegInfoType code, DWORD lang,
		      struct perflib_obuf *o)
{
	const struct perflib_info *info = cs->map->info;
	uint32_t k;
	int pos;
	uint8_t *p;

	switch (code) {
	case PERF_REG_COUNTERSET_STRUCT: {
		PERF_COUNTERSET_REG_INFO r = {
			.CounterSetType = 0, /* reserved */
			.DetailLevel = info->detail_level,
			.NumCounters = cs->nr_counters,
			.InstanceType = cs->instance_type,
		};

		memcpy(&r.CounterSetGuid, info->counterset_guid, sizeof(GUID));
		p = perflib_obuf_put(o, sizeof(r));
		if (p)
			memcpy(p, &r, sizeof(r));
		for (k = 0; k < cs->nr_counters; k++)
			put_counter_reg(o, &cs->map->counters[k]);
		return ERROR_SUCCESS;
	}
	case PERF_REG_COUNTER_STRUCT:
		/* requestLangId carries the counter id */
		pos = perflib_cset_counter(cs, lang);
		if (pos < 0)
			return ERROR_NOT_FOUND;
		put_counter_reg(o, &cs->map->counters[pos]);
		return ERROR_SUCCESS;
	case PERF_REG_COUNTERSET_NAME_STRING:
	case PERF_REG_COUNTERSET_ENGLISH_NAME:
		put_set_string(o, cs, info->counterset_name, true);
		return ERROR_SUCCESS;
	case PERF_REG_COUNTERSET_HELP_STRING:
		put_set_string(o, cs, info->counterset_help, false);
		return ERROR_SUCCESS;
	case PERF_REG_COUNTER_NAME_STRINGS:
	case PERF_REG_COUNTER_ENGLISH_NAMES:
		put_string_block(o, cs, COUNTER_NAME);
		return ERROR_SUCCESS;
	case PERF_REG_COUNTER_HELP_STRINGS:
		put_string_block(o, cs, COUNTER_HELP);
		return ERROR_SUCCESS;
	case PERF_REG_PROVIDER_NAME:
		put_set_string(o, cs, info->provider_name, false);
		return ERROR_SUCCESS;
	case PERF_REG_PROVIDER_GUID:
		p = perflib_obuf_put(o, sizeof(GUID));
		if (p)
			memcpy(p, info->provider_guid, sizeof(GUID));
		return ERROR_SUCCESS;
	default:
		return ERROR_INVALID_PARAMETER;
	}
}

ULONG PerfQueryCounterSetRegistrationInfo(LPCWSTR szMachine, LPCGUID pCounterSetId,
					  PerfRegInfoType requestCode, DWORD requestLangId,
					  LPBYTE pbRegInfo, DWORD cbRegInfo,
					  LPDWORD pcbRegInfoActual)
{
	struct perflib_obuf o = {.p = pbRegInfo, .cap = pbRegInfo ? cbRegInfo : 0};
	char host[PERFLIB_HOST_MAX + 1];
	struct perflib_cset *cs;
	ULONG ret;
	int err;

	if (!pCounterSetId || !pcbRegInfoActual || (!pbRegInfo && cbRegInfo) ||
	    requestCode < PERF_REG_COUNTERSET_STRUCT ||
	    requestCode > PERF_REG_COUNTER_ENGLISH_NAMES)
		return ERROR_INVALID_PARAMETER;
	err = perflib_machine_check(szMachine, host);
	if (err == 1)
		return perflib_remote_reg(host, pCounterSetId, requestCode, requestLangId,
					  pbRegInfo, cbRegInfo, pcbRegInfoActual);
	if (!err)
		err = perflib_cset_get(pCounterSetId, &cs);
	if (err)
		return perflib_win32_error(err);
	ret = reg_info(cs, requestCode, requestLangId, &o);
	perflib_cset_put(cs);
	if (ret)
		return ret;
	return perflib_obuf_result(&o, pcbRegInfoActual);
}
