// SPDX-License-Identifier: MIT
/*
 * collect.c - one scrape through the Windows consumer API (see collect.h):
 *
 *   PerfEnumerateCounterSet                  every registered counter set
 *   PerfQueryCounterSetRegistrationInfo      its counters (cached while unchanged), names
 *   PerfOpenQueryHandle + PerfAddCounters    one wildcard specification per counter set
 *   PerfQueryCounterInfo                     which Index each specification answers at
 *   PerfQueryCounterData                     the values, parsed by exp_parse.c
 *
 * Every call that fills a buffer follows the Windows protocol through libpdh's one helper
 * (pdh_fetch_into, pdh/pdh_fetch.h): ERROR_NOT_ENOUGH_MEMORY gives the needed size; the
 * buffer grows and the call is repeated a bounded number of times (instances can appear
 * between two calls). The buffers are kept from scrape to scrape.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "exp_parse.h"
#include "pdh_fetch.h"
#include "perfbuf.h"

/* a registered counter set as last seen */
struct entry {
	GUID guid;
	struct exp_set *set; /* prepared for rendering */
	void *reg;	     /* the PERF_REG_COUNTERSET_STRUCT answer it was built from */
	size_t reg_len;
	bool queried; /* its specification is part of the query */
};

struct collector {
	struct entry *entries; /* sorted by GUID */
	size_t nr_entries;
	struct exp_set **order;	   /* the same sets in rendering order (exp_prepare) */
	HANDLE query;		   /* NULL until built */
	struct exp_set **by_index; /* PERF_COUNTER_IDENTIFIER.Index -> set */
	size_t nr_index;
	void *data; /* PerfQueryCounterData buffer, kept between scrapes */
	DWORD data_cap;
	void *buf; /* scratch buffer for registration and identifier calls */
	DWORD buf_cap;
	struct collect_stats stats;
	char error[256];
};

int collector_new(struct collector **ret)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

static void entry_clear(struct entry *e)
{
	exp_set_free(e->set);
	free(e->reg);
	memset(e, 0, sizeof(*e));
}

static void query_close(struct collector *c)
{
	if (c->query)
		PerfCloseQueryHandle(c->query);
	c->query = NULL;
	free(c->by_index);
	c->by_index = NULL;
	c->nr_index = 0;
}

void collector_free(struct collector *c)
{
	size_t i;

	if (!c)
		return;
	query_close(c);
	for (i = 0; i < c->nr_entries; i++)
		entry_clear(&c->entries[i]);
	free(c->entries);
	free(c->order);
	free(c->data);
	free(c->buf);
	free(c);
}

const char *collector_error(const struct collector *c)
{
	return c->error;
}

const struct collect_stats *collector_stats(const struct collector *c)
{
	return &c->stats;
}

static int fail(struct collector *c, const char *call, ULONG status)
{
	snprintf(c->error, sizeof(c->error), "%s failed with Win32 error %u%s", call, status,
		 status == ERROR_ACCESS_DENIED ? " (access denied)" : "");
	return -EIO;
}

/* make *@buf hold at least @need bytes (never shrinks) */
static int grow(void **buf, DWORD *cap, size_t need)
{
	void *p;

	if (need <= *cap)
		return 0;
	if (need > UINT32_MAX)
		return -ENOMEM;
	p = realloc(*buf, need);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = (DWORD)need;
	return 0;
}

/*
 * one registration request into c->buf; returns the Win32 status (ERROR_OUTOFMEMORY when
 * the buffer cannot grow), the answer's size in *ret_len
 */
static ULONG reg_info(struct collector *c, const GUID *guid, PerfRegInfoType code, size_t *ret_len)
{
	struct pdh_reg_call r = {.guid = guid, .code = code};
	DWORD len = 0;
	ULONG status = pdh_fetch_into(pdh_call_reg, &r, &c->buf, &c->buf_cap, &len);

	*ret_len = len;
	return status;
}

/* a string request (set name or help) as a malloc'd UTF-8 string, NULL if unavailable */
static char *reg_string(struct collector *c, const GUID *guid, PerfRegInfoType code)
{
	char *s = NULL;
	size_t len;

	/* a string without its NUL is malformed: treated as absent */
	if (reg_info(c, guid, code, &len) != ERROR_SUCCESS || perfbuf_string(c->buf, len, &s))
		return NULL;
	return s;
}

/* names and help of a set and its counters; absent strings just stay NULL */
static int reg_strings(struct collector *c, struct exp_set *set)
{
	size_t len;
	int err = 0;

	set->name = reg_string(c, &set->guid, PERF_REG_COUNTERSET_ENGLISH_NAME);
	if (!set->name)
		set->name = reg_string(c, &set->guid, PERF_REG_COUNTERSET_NAME_STRING);
	set->help = reg_string(c, &set->guid, PERF_REG_COUNTERSET_HELP_STRING);
	if (reg_info(c, &set->guid, PERF_REG_COUNTER_ENGLISH_NAMES, &len) == ERROR_SUCCESS ||
	    reg_info(c, &set->guid, PERF_REG_COUNTER_NAME_STRINGS, &len) == ERROR_SUCCESS)
		err = exp_parse_strings(c->buf, len, set, false);
	if (err != -ENOMEM &&
	    reg_info(c, &set->guid, PERF_REG_COUNTER_HELP_STRINGS, &len) == ERROR_SUCCESS)
		err = exp_parse_strings(c->buf, len, set, true);
	/* a malformed string block costs the names, not the counter set */
	return err == -ENOMEM ? err : 0;
}

static int guid_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(GUID));
}

/* every registered counter set's GUID, sorted, into a malloc'd array */
static int enumerate(struct collector *c, GUID **ret_guids, size_t *ret_nr)
{
	void *guids = NULL;
	DWORD size = 0;
	ULONG status = pdh_fetch(pdh_call_sets, NULL, &guids, &size);

	if (status == ERROR_OUTOFMEMORY)
		return -ENOMEM;
	if (status != ERROR_SUCCESS)
		return fail(c, "PerfEnumerateCounterSet", status);
	if (size / sizeof(GUID))
		qsort(guids, size / sizeof(GUID), sizeof(GUID), guid_cmp);
	*ret_guids = guids;
	*ret_nr = size / sizeof(GUID);
	return 0;
}

static struct entry *find_entry(struct collector *c, const GUID *guid)
{
	if (!c->nr_entries)
		return NULL;
	return bsearch(guid, c->entries, c->nr_entries, sizeof(*c->entries), guid_cmp);
}

/*
 * bring the entries in line with @guids: keep sets whose registration is byte-identical,
 * (re)build the others. *@ret_changed tells whether anything differs from before.
 */
static int refresh(struct collector *c, const GUID *guids, size_t nr, bool *ret_changed)
{
	struct entry *fresh = calloc(nr ? nr : 1, sizeof(*fresh));
	bool changed = nr != c->nr_entries;
	size_t i, n = 0;
	int err = 0;

	if (!fresh)
		return -ENOMEM;
	for (i = 0; i < nr && !err; i++) {
		struct entry *old = find_entry(c, &guids[i]), *e = &fresh[n];
		size_t len;
		ULONG status;

		status = reg_info(c, &guids[i], PERF_REG_COUNTERSET_STRUCT, &len);
		if (status == ERROR_OUTOFMEMORY) {
			err = -ENOMEM;
			break;
		}
		if (status != ERROR_SUCCESS) {
			/* unregistered since the enumeration, or unreadable: leave it out */
			changed = true;
			continue;
		}
		if (old && old->reg_len == len && !memcmp(old->reg, c->buf, len)) {
			*e = *old;
			memset(old, 0, sizeof(*old));
			n++;
			continue;
		}
		changed = true;
		e->guid = guids[i];
		e->reg = malloc(len ? len : 1);
		if (!e->reg) {
			err = -ENOMEM;
			break;
		}
		memcpy(e->reg, c->buf, len);
		e->reg_len = len;
		err = exp_parse_reg(e->reg, len, &e->set);
		if (err == -EBADMSG) {
			/* a registration we cannot read: leave the counter set out */
			free(e->reg);
			memset(e, 0, sizeof(*e));
			err = 0;
			continue;
		}
		if (!err)
			err = reg_strings(c, e->set);
		n++;
	}
	if (err) {
		/* start from nothing on the next scrape: entries were moved out of c */
		for (i = 0; i < nr; i++)
			entry_clear(&fresh[i]);
		free(fresh);
		for (i = 0; i < c->nr_entries; i++)
			entry_clear(&c->entries[i]);
		c->nr_entries = 0;
		query_close(c);
		return err;
	}
	for (i = 0; i < c->nr_entries; i++)
		entry_clear(&c->entries[i]);
	free(c->entries);
	c->entries = fresh;
	c->nr_entries = n;
	*ret_changed = changed;
	return 0;
}

/* size of the PERF_COUNTER_IDENTIFIER block for @set: "*" for multi-instance sets */
static size_t spec_size(const struct exp_set *set)
{
	if (set->instance_type & PERF_COUNTERSET_FLAG_MULTIPLE)
		return sizeof(PERF_COUNTER_IDENTIFIER) + 8; /* L"*" + NUL, padded to 8 */
	return sizeof(PERF_COUNTER_IDENTIFIER);
}

/* the Index of each specification, from PerfQueryCounterInfo */
static int map_indices(struct collector *c)
{
	DWORD need = 0;
	size_t off, max = 0;
	ULONG status = pdh_fetch_into(pdh_call_info, c->query, &c->buf, &c->buf_cap, &need);
	int i;

	if (status == ERROR_OUTOFMEMORY)
		return -ENOMEM;
	if (status != ERROR_SUCCESS)
		return fail(c, "PerfQueryCounterInfo", status);
	/* two passes: the largest Index, then the table */
	for (i = 0; i < 2; i++) {
		for (off = 0; off + sizeof(PERF_COUNTER_IDENTIFIER) <= need;) {
			PERF_COUNTER_IDENTIFIER id;
			struct entry *e;

			memcpy(&id, (uint8_t *)c->buf + off, sizeof(id));
			if (id.Size < sizeof(id))
				break;
			e = find_entry(c, &id.CounterSetGuid);
			if (i == 0 && id.Index >= max)
				max = (size_t)id.Index + 1;
			else if (i == 1 && e && e->queried && id.Index < c->nr_index)
				c->by_index[id.Index] = e->set;
			off += id.Size;
		}
		if (i == 0) {
			/* Index values are positions in the data block: a few per set at most */
			if (max > 4 * (c->nr_entries + 1))
				max = 4 * (c->nr_entries + 1);
			c->by_index = calloc(max ? max : 1, sizeof(*c->by_index));
			if (!c->by_index)
				return -ENOMEM;
			c->nr_index = max;
		}
	}
	return 0;
}

/* a new query with one wildcard specification per counter set */
static int build_query(struct collector *c)
{
	size_t i, total = 0, off = 0;
	ULONG status;
	int err;

	query_close(c);
	for (i = 0; i < c->nr_entries; i++)
		total += spec_size(c->entries[i].set);
	status = PerfOpenQueryHandle(NULL, &c->query);
	if (status != ERROR_SUCCESS) {
		c->query = NULL;
		return fail(c, "PerfOpenQueryHandle", status);
	}
	if (!total)
		return 0;
	err = grow(&c->buf, &c->buf_cap, total);
	if (err)
		return err;
	memset(c->buf, 0, total);
	for (i = 0; i < c->nr_entries; i++) {
		PERF_COUNTER_IDENTIFIER id = {
			.CounterSetGuid = c->entries[i].guid,
			.Size = (ULONG)spec_size(c->entries[i].set),
			.CounterId = PERF_WILDCARD_COUNTER,
			.InstanceId = PERFLIB_NO_ID,
		};

		memcpy((uint8_t *)c->buf + off, &id, sizeof(id));
		if (id.Size > sizeof(id))
			memcpy((uint8_t *)c->buf + off + sizeof(id), PERF_WILDCARD_INSTANCE,
			       sizeof(PERF_WILDCARD_INSTANCE));
		off += id.Size;
	}
	status = PerfAddCounters(c->query, c->buf, (DWORD)total);
	if (status != ERROR_SUCCESS)
		return fail(c, "PerfAddCounters", status);
	/* a specification with a Status is not part of the query (set gone meanwhile) */
	for (i = 0, off = 0; i < c->nr_entries; i++) {
		PERF_COUNTER_IDENTIFIER id;

		memcpy(&id, (uint8_t *)c->buf + off, sizeof(id));
		c->entries[i].queried = id.Status == ERROR_SUCCESS;
		off += id.Size;
	}
	return map_indices(c);
}

/* rendering order: the same sets, sorted and named by exp_prepare */
static int prepare(struct collector *c)
{
	struct exp_set **order = malloc((c->nr_entries ? c->nr_entries : 1) * sizeof(*order));
	size_t i;
	int err;

	if (!order)
		return -ENOMEM;
	for (i = 0; i < c->nr_entries; i++)
		order[i] = c->entries[i].set;
	err = exp_prepare(order, c->nr_entries);
	if (err) {
		free(order);
		return err;
	}
	free(c->order);
	c->order = order;
	return 0;
}

/* PerfQueryCounterData into c->data; returns its size in *ret_len */
static int query_data(struct collector *c, size_t *ret_len)
{
	DWORD need = 0;
	ULONG status = pdh_fetch_into(pdh_call_data, c->query, &c->data, &c->data_cap, &need);

	if (status == ERROR_OUTOFMEMORY)
		return -ENOMEM;
	if (status != ERROR_SUCCESS)
		return fail(c, "PerfQueryCounterData", status);
	*ret_len = need;
	return 0;
}

int collector_scrape(struct collector *c, enum exp_format fmt, struct exp_buf *out)
{
	struct collect_stats st = {0};
	bool changed = false;
	size_t nr = 0, len = 0, i;
	GUID *guids = NULL;
	int64_t freq = 0;
	int err;

	c->error[0] = '\0';
	err = enumerate(c, &guids, &nr);
	if (!err)
		err = refresh(c, guids, nr, &changed);
	free(guids);
	if (!err && (changed || !c->query)) {
		st.rebuilt = true;
		err = prepare(c);
		if (!err)
			err = build_query(c);
		if (err)
			query_close(c); /* rebuilt on the next scrape */
	}
	if (!err)
		err = query_data(c, &len);
	for (i = 0; !err && i < c->nr_entries; i++)
		exp_set_reset(c->entries[i].set);
	if (!err) {
		err = exp_parse_data(c->data, len, c->by_index, c->nr_index, &freq, &st.nr_bad);
		if (err == -EBADMSG)
			snprintf(c->error, sizeof(c->error),
				 "PerfQueryCounterData returned a malformed block");
	}
	for (i = 0; !err && i < c->nr_entries; i++) {
		struct exp_set *set = c->entries[i].set;

		err = exp_set_finish(set);
		st.nr_instances += set->nr_instances;
		st.nr_bad += set->nr_dropped;
	}
	if (err) {
		if (err == -ENOMEM && !c->error[0])
			snprintf(c->error, sizeof(c->error), "out of memory");
		return err;
	}
	exp_render(c->order, c->nr_entries, freq, fmt, out);
	if (out->err) {
		snprintf(c->error, sizeof(c->error), "out of memory");
		return out->err;
	}
	st.nr_sets = c->nr_entries;
	st.data_bytes = len;
	c->stats = st;
	return 0;
}
