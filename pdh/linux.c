// SPDX-License-Identifier: MIT
/*
 * linux.c - libpdh's Linux extension (include/perflib/pdh-linux.h, symbol version PDH_1.1):
 * a counter set's registration decoded, and whole counter sets collected through a PDH
 * query, on the internals PDH's own enumeration and collection use (decode.c, perfbuf.c,
 * query.c's whole-set list, sample.c's blocks).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perflib/pdh-linux.h"
#include "pdhmsg.h"
#include "decode.h"
#include "pdh_fetch.h"
#include "pdh_internal.h"
#include "pdh_sets.h"
#include "perfbuf.h"

/* ---- registration ----------------------------------------------------------------- */

/* what a registration is decoded into before it is laid out in one allocation */
struct reg_parts {
	struct pdh_cat_set model; /* counters with their names */
	char *name, *help;	  /* the set's */
	char **helps;		  /* per counter, NULL: none */
};

static void parts_free(struct reg_parts *p)
{
	size_t i;

	for (i = 0; p->helps && i < p->model.nr_counters; i++)
		free(p->helps[i]);
	free(p->helps);
	free(p->name);
	free(p->help);
	pdh_cat_set_free(&p->model);
}

/* one registration request of set @guid into *@buf (grown, kept): the Win32 status */
static ULONG reg_call(const GUID *guid, PerfRegInfoType code, void **buf, DWORD *cap, DWORD *len)
{
	struct pdh_reg_call r = {.guid = guid, .code = code};

	*len = 0;
	return pdh_fetch_into(pdh_call_reg, &r, buf, cap, len);
}

/* a string request as a malloc'd UTF-8 string; NULL when absent or malformed; -ENOMEM */
static int reg_string(const GUID *guid, PerfRegInfoType code, void **buf, DWORD *cap, char **ret)
{
	DWORD len;
	ULONG st = reg_call(guid, code, buf, cap, &len);

	*ret = NULL;
	if (st == ERROR_OUTOFMEMORY)
		return -ENOMEM;
	if (st != ERROR_SUCCESS || pdh_perfbuf_string(*buf, len, ret))
		*ret = NULL; /* absent, or a string without its NUL: malformed, left out */
	return 0;
}

/* pdh_perfbuf_strings_parse context: the counters and their help strings */
struct helps_ctx {
	const struct pdh_cat_set *m;
	char **helps;
};

/* pdh_perfbuf_strings_parse callback: the help of the first counter with the id without one */
static int help_string(void *ctx, uint32_t id, const void *text, size_t units)
{
	struct helps_ctx *h = ctx;
	size_t k;

	for (k = 0; k < h->m->nr_counters; k++) {
		if (h->m->counters[k].id == id && !h->helps[k]) {
			h->helps[k] = pdh_perfbuf_utf16_dup(text, units);
			return h->helps[k] ? 0 : -ENOMEM;
		}
	}
	return 0;
}

int pdh_linux_helps(const void *buf, size_t len, const struct pdh_cat_set *m, char **helps)
{
	struct helps_ctx h = {.m = m, .helps = helps};

	return pdh_perfbuf_strings_parse(buf, len, help_string, &h);
}

/*
 * decode the registration of @guid into @p: 0; -EIO when the registration call failed (its
 * Win32 status in *@st), -EBADMSG when it cannot be read, -ENOMEM
 */
static int reg_decode(const GUID *guid, struct reg_parts *p, ULONG *st)
{
	void *buf = NULL;
	DWORD cap = 0, len;
	int err;

	*st = reg_call(guid, PERF_REG_COUNTERSET_STRUCT, &buf, &cap, &len);
	if (*st != ERROR_SUCCESS) {
		free(buf);
		return *st == ERROR_OUTOFMEMORY ? -ENOMEM : -EIO;
	}
	err = pdh_decode_reg(buf, len, &p->model);
	if (!err) {
		p->helps =
			calloc(p->model.nr_counters ? p->model.nr_counters : 1, sizeof(*p->helps));
		if (!p->helps)
			err = -ENOMEM;
	}
	/* a malformed string block costs its strings, not the counter set */
	if (!err &&
	    (reg_call(guid, PERF_REG_COUNTER_ENGLISH_NAMES, &buf, &cap, &len) == 0 ||
	     reg_call(guid, PERF_REG_COUNTER_NAME_STRINGS, &buf, &cap, &len) == 0) &&
	    pdh_decode_names(buf, len, &p->model) == -ENOMEM)
		err = -ENOMEM;
	if (!err && reg_call(guid, PERF_REG_COUNTER_HELP_STRINGS, &buf, &cap, &len) == 0 &&
	    pdh_linux_helps(buf, len, &p->model, p->helps) == -ENOMEM)
		err = -ENOMEM;
	if (!err)
		err = reg_string(guid, PERF_REG_COUNTERSET_ENGLISH_NAME, &buf, &cap, &p->name);
	if (!err && !p->name)
		err = reg_string(guid, PERF_REG_COUNTERSET_NAME_STRING, &buf, &cap, &p->name);
	if (!err)
		err = reg_string(guid, PERF_REG_COUNTERSET_HELP_STRING, &buf, &cap, &p->help);
	free(buf);
	return err;
}

static size_t str_room(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

/* copy @s to *@at (advanced) and return the copy; NULL stays NULL */
static char *str_place(char **at, const char *s)
{
	char *r = *at;
	size_t n = str_room(s);

	if (!s)
		return NULL;
	memcpy(r, s, n);
	*at += n;
	return r;
}

PDH_LINUX_COUNTERSET_REG *pdh_linux_reg_layout(const struct pdh_cat_set *m, const char *name,
					       const char *help, char *const *helps)
{
	size_t room =
		sizeof(PDH_LINUX_COUNTERSET_REG) + m->nr_counters * sizeof(PDH_LINUX_COUNTER_REG);
	PDH_LINUX_COUNTERSET_REG *r;
	char *at;
	size_t i;

	room += str_room(name) + str_room(help);
	for (i = 0; i < m->nr_counters; i++)
		room += str_room(m->counters[i].name) + str_room(helps ? helps[i] : NULL);
	r = calloc(1, room);
	if (!r)
		return NULL;
	r->CounterSet = m->guid;
	r->InstanceType = m->instance_type;
	r->NumCounters = (DWORD)m->nr_counters;
	r->Counters = (PDH_LINUX_COUNTER_REG *)(r + 1);
	at = (char *)(r->Counters + m->nr_counters);
	r->Name = str_place(&at, name);
	r->Help = str_place(&at, help);
	for (i = 0; i < m->nr_counters; i++) {
		const struct pdh_cat_counter *c = &m->counters[i];

		r->Counters[i] = (PDH_LINUX_COUNTER_REG){
			.CounterId = c->id,
			.CounterType = c->type,
			.Attrib = c->attrib,
			.DetailLevel = c->detail_level,
			.DefaultScale = c->scale,
			.BaseCounterId = c->base_id,
			.PerfTimeId = c->time_id,
			.PerfFreqId = c->freq_id,
			.MultiId = c->multi_id,
			.Name = str_place(&at, c->name),
			.Help = str_place(&at, helps ? helps[i] : NULL),
		};
	}
	return r;
}

PDH_STATUS PdhLinuxGetCounterSetRegistration(LPCSTR szMachineName, const GUID *CounterSet,
					     PDH_LINUX_COUNTERSET_REG **Registration)
{
	struct reg_parts p = {0};
	PDH_STATUS st = 0;
	ULONG win32 = 0;
	int err;

	if (!CounterSet || !Registration)
		return PDH_INVALID_ARGUMENT;
	*Registration = NULL;
	if (!pdh_machine_local(szMachineName))
		return PDH_CSTATUS_NO_MACHINE;
	err = reg_decode(CounterSet, &p, &win32);
	if (err == -EIO)
		st = pdh_from_win32(win32);
	else if (err == -ENOMEM)
		st = PDH_MEMORY_ALLOCATION_FAILURE;
	else if (err)
		st = PDH_INVALID_DATA; /* a PERF_REG_COUNTERSET_STRUCT that cannot be read */
	else if (!(*Registration = pdh_linux_reg_layout(&p.model, p.name, p.help, p.helps)))
		st = PDH_MEMORY_ALLOCATION_FAILURE;
	parts_free(&p);
	return st;
}

VOID PdhLinuxFreeCounterSetRegistration(PDH_LINUX_COUNTERSET_REG *Registration)
{
	free(Registration);
}

/* ---- whole counter sets ----------------------------------------------------------- */

PDH_STATUS PdhLinuxSetQueryCounterSets(PDH_HQUERY hQuery, const PDH_LINUX_COUNTERSET_REF *Sets,
				       DWORD dwCount)
{
	GUID *guids;
	bool *multi;
	PDH_STATUS st;
	DWORD i;

	if (dwCount && !Sets)
		return PDH_INVALID_ARGUMENT;
	guids = malloc((dwCount ? dwCount : 1) * sizeof(*guids));
	multi = malloc((dwCount ? dwCount : 1) * sizeof(*multi));
	if (!guids || !multi) {
		free(guids);
		free(multi);
		return PDH_MEMORY_ALLOCATION_FAILURE;
	}
	for (i = 0; i < dwCount; i++) {
		guids[i] = Sets[i].CounterSet;
		multi[i] = Sets[i].InstanceType & PERF_COUNTERSET_FLAG_MULTIPLE;
	}
	st = pdh_query_whole_sets(hQuery, guids, multi, dwCount);
	free(guids);
	free(multi);
	return st;
}

void pdh_linux_sample(const struct pdh_perfbuf_data *d, const struct pdh_perfbuf_block *b,
		      PDH_LINUX_COUNTERSET_SAMPLE *s)
{
	*s = (PDH_LINUX_COUNTERSET_SAMPLE){
		.CStatus = b->status,
		.DataType = b->type,
		.NumCounters = b->status ? 0 : b->nr_cols,
		.CounterIds = d->ids + b->cols,
		.NumInstances = b->status ? 0 : (DWORD)b->nr,
		.PerfFreq = d->hdr.freq,
		.PerfTime = d->hdr.time,
		.PerfTime100NSec = d->hdr.time_100ns,
		.Reserved = {d, b},
	};
}

PDH_STATUS PdhLinuxGetCounterSetSample(PDH_HQUERY hQuery, const GUID *CounterSet,
				       PDH_LINUX_COUNTERSET_SAMPLE *Sample)
{
	const struct pdh_perfbuf_data *d;
	const struct pdh_perfbuf_block *b;
	PDH_STATUS st;

	if (!Sample)
		return PDH_INVALID_ARGUMENT;
	st = pdh_query_set_block(hQuery, CounterSet, &d, &b);
	if (st)
		return st;
	pdh_linux_sample(d, b, Sample);
	return 0;
}

PDH_STATUS PdhLinuxGetSampleInstance(const PDH_LINUX_COUNTERSET_SAMPLE *Sample, DWORD dwIndex,
				     PDH_LINUX_INSTANCE *Instance, ULONGLONG *Values, BYTE *Sizes)
{
	const struct pdh_perfbuf_data *d;
	const struct pdh_perfbuf_block *b;
	const struct pdh_perfbuf_item *it;
	size_t item, at;
	uint32_t k;

	if (!Sample || !Instance || (Values && !Sizes) || !Sample->Reserved[0] ||
	    dwIndex >= Sample->NumInstances)
		return PDH_INVALID_ARGUMENT;
	d = Sample->Reserved[0];
	b = Sample->Reserved[1];
	item = b->first + dwIndex;
	it = &d->items[item];
	Instance->InstanceId = it->id;
	Instance->Duplicate = it->dup;
	Instance->Name = it->name == PDH_PERFBUF_NO_NAME ? NULL : d->names + it->name;
	Instance->NameLength = Instance->Name ? it->len : 0;
	for (k = 0; Values && k < b->nr_cols; k++) {
		at = pdh_perfbuf_value(b, item, k);
		Sizes[k] = d->sizes[at];
		Values[k] = d->sizes[at] ? d->values[at] : 0;
	}
	return 0;
}
