// SPDX-License-Identifier: MIT
/*
 * collect.c - one scrape, as a PDH client (see collect.h):
 *
 *   PerfEnumerateCounterSet                  every registered counter set
 *   PerfQueryCounterSetRegistrationInfo      its registration's bytes: the set is rebuilt
 *                                            only when they changed
 *   PdhLinuxGetCounterSetRegistration        the registration decoded by libpdh, with
 *                                            names and help strings
 *   PdhLinuxSetQueryCounterSets              the sets, given to one PDH query in full
 *   PdhCollectQueryData                      PDH collects and decodes (with its steady
 *                                            state: blocks whose instances stayed only
 *                                            have their values read)
 *   PdhLinuxGetCounterSetSample              each set's part: counter ids, instances,
 *                                            names, raw values
 *
 * then exp_sample.c puts the raw values into the rendering view and exp_format.c renders.
 * The exporter uses the public APIs only: perflib.h's consumer functions, pdh.h and
 * libpdh's Linux extension (perflib/pdh-linux.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect.h"
#include "exp_sample.h"
#include "pdhmsg.h"
#include "perflib.h"
#include "perflib/pdh-linux.h"
#include "sized.h"

/* a registered counter set as last seen */
struct entry {
	GUID guid;
	struct exp_set *set; /* prepared for rendering */
	void *reg;	     /* the PERF_REG_COUNTERSET_STRUCT answer it was built from */
	size_t reg_len;
};

struct collector {
	struct entry *entries; /* sorted by GUID */
	size_t nr_entries;
	struct exp_set **order; /* the same sets in rendering order (exp_prepare) */
	PDH_HQUERY query;	/* NULL until opened */
	bool listed;		/* the query has the entries' sets (pdh_query_whole_sets) */
	void *buf;		/* scratch buffer for registration calls */
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
		PdhCloseQuery(c->query);
	c->query = NULL;
	c->listed = false;
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

/*
 * PerfEnumerateCounterSet (@guid NULL) or the PERF_REG_COUNTERSET_STRUCT of @guid into
 * c->buf, kept from scrape to scrape: the Win32 status, the answer's size in *@ret_len
 */
static ULONG sized(struct collector *c, const GUID *guid, size_t *ret_len)
{
	struct sized_reg r = {.code = PERF_REG_COUNTERSET_STRUCT};
	DWORD len = 0;
	ULONG st;

	if (guid)
		r.guid = *guid;
	st = sized_call(guid ? sized_reg : sized_sets, &r, &c->buf, &c->buf_cap, &len);

	*ret_len = len;
	return st;
}

/* the rendering view of counter set @guid as libpdh decodes its registration */
static int load_set(const GUID *guid, struct exp_set **ret)
{
	PDH_LINUX_COUNTERSET_REG *reg;
	PDH_STATUS st = PdhLinuxGetCounterSetRegistration(NULL, guid, &reg);
	int err;

	if (st == PDH_MEMORY_ALLOCATION_FAILURE)
		return -ENOMEM;
	if (st)
		return -EBADMSG; /* unregistered since, or unreadable: left out */
	err = exp_set_from_reg(reg, ret);
	PdhLinuxFreeCounterSetRegistration(reg);
	return err;
}

static int guid_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(GUID));
}

/* every registered counter set's GUID, sorted, into a malloc'd array */
static int enumerate(struct collector *c, GUID **ret_guids, size_t *ret_nr)
{
	size_t len = 0, nr;
	ULONG status = sized(c, NULL, &len);
	GUID *guids;

	if (status == ERROR_OUTOFMEMORY)
		return -ENOMEM;
	if (status != ERROR_SUCCESS)
		return fail(c, "PerfEnumerateCounterSet", status);
	nr = len / sizeof(GUID);
	guids = malloc((nr ? nr : 1) * sizeof(*guids));
	if (!guids)
		return -ENOMEM;
	if (nr) {
		memcpy(guids, c->buf, nr * sizeof(*guids));
		qsort(guids, nr, sizeof(GUID), guid_cmp);
	}
	*ret_guids = guids;
	*ret_nr = nr;
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

		status = sized(c, &guids[i], &len);
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
		err = load_set(&guids[i], &e->set);
		if (err == -EBADMSG) {
			/* a registration we cannot read: leave the counter set out */
			free(e->reg);
			memset(e, 0, sizeof(*e));
			err = 0;
			continue;
		}
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

/* the entries' counter sets, given to the query in full (opened the first time) */
static int list_sets(struct collector *c)
{
	PDH_LINUX_COUNTERSET_REF *refs =
		malloc((c->nr_entries ? c->nr_entries : 1) * sizeof(*refs));
	PDH_STATUS st = PDH_MEMORY_ALLOCATION_FAILURE;
	size_t i;

	if (refs && !c->query) {
		st = PdhOpenQueryA(NULL, 0, &c->query);
		if (st)
			c->query = NULL;
	}
	if (refs && c->query) {
		for (i = 0; i < c->nr_entries; i++) {
			refs[i].CounterSet = c->entries[i].guid;
			refs[i].InstanceType = c->entries[i].set->instance_type;
		}
		st = PdhLinuxSetQueryCounterSets(c->query, refs, (DWORD)c->nr_entries);
	}
	free(refs);
	if (st == PDH_MEMORY_ALLOCATION_FAILURE)
		return -ENOMEM;
	if (st) {
		snprintf(c->error, sizeof(c->error), "PDH query failed with status 0x%08X",
			 (unsigned int)st);
		return -EIO;
	}
	c->listed = true;
	return 0;
}

/*
 * collect and put each set's instances into its view; *@ret_freq: the collection's
 * PerfFreq (0 when nothing was collected: no counter set)
 */
static int collect(struct collector *c, int64_t *ret_freq)
{
	PDH_STATUS ps = PdhCollectQueryData(c->query);
	PDH_LINUX_COUNTERSET_SAMPLE sample;
	size_t i;
	int err = 0;

	*ret_freq = 0;
	c->stats.data_bytes = 0;
	for (i = 0; i < c->nr_entries; i++)
		exp_set_reset(c->entries[i].set);
	if (ps == PDH_NO_DATA)
		return 0; /* nothing to collect: no counter set is registered any more */
	if (ps == PDH_MEMORY_ALLOCATION_FAILURE)
		return -ENOMEM;
	if (ps == PDH_INVALID_DATA) {
		snprintf(c->error, sizeof(c->error), "the counter sets' data could not be read");
		return -EBADMSG;
	}
	if (ps) {
		snprintf(c->error, sizeof(c->error),
			 "PdhCollectQueryData failed with status 0x%08X%s", (unsigned int)ps,
			 ps == PDH_ACCESS_DENIED ? " (access denied)" : "");
		return -EIO;
	}
	for (i = 0; i < c->nr_entries && !err; i++) {
		/* a set unregistered since the enumeration has no sample: no instances */
		if (PdhLinuxGetCounterSetSample(c->query, &c->entries[i].guid, &sample))
			continue;
		err = exp_fill_block(&sample, c->entries[i].set);
		*ret_freq = sample.PerfFreq;
		/* a value and its size byte per counter and instance */
		c->stats.data_bytes += (size_t)sample.NumInstances * sample.NumCounters * 9;
	}
	return err;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int collector_scrape(struct collector *c, enum exp_format fmt, struct exp_buf *out)
{
	double start = now_ms();
	struct collect_stats st = {0};
	int64_t freq = 0;
	bool changed = false;
	size_t nr = 0, i;
	GUID *guids = NULL;
	int err;

	c->error[0] = '\0';
	err = enumerate(c, &guids, &nr);
	if (!err)
		err = refresh(c, guids, nr, &changed);
	free(guids);
	if (!err && (changed || !c->listed)) {
		st.rebuilt = true;
		err = prepare(c);
		if (!err)
			err = list_sets(c);
		if (err)
			c->listed = false; /* listed again on the next scrape */
	}
	if (!err)
		err = collect(c, &freq);
	st.collect_ms = now_ms() - start;
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
	st.data_bytes = c->stats.data_bytes;
	c->stats = st;
	return 0;
}
