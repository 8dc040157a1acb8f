/* SPDX-License-Identifier: MIT */
/*
 * query.c - PDH queries and counters on the perflib consumer API (pdh.md 5.1-5.3, 8.2, 8.3):
 * a query holds one perflib query with one wildcard specification per counter set its
 * counters use (all counters, all instances: bases, clocks and multi counts come along);
 * instance selection (name, "#n", wildcards) happens here, on each sample, because "#n"
 * numbering needs every same-named instance. PdhCollectQueryDataEx runs a thread; the event
 * objects it signals are at the end of the file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrtype.h"
#include "pdh_internal.h"

#define DATA_RETRIES 8

/* ---- lifecycle ----------------------------------------------------------------------- */

static PDH_STATUS query_new(struct pdh_log *source, DWORD_PTR user, PDH_HQUERY *ret)
{
	struct pdh_query *q = calloc(1, sizeof(*q));

	if (!q)
		return PDH_MEMORY_ALLOCATION_FAILURE;
	q->kind = PDH_KIND_QUERY;
	q->user = user;
	q->source = source;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	if (pdh_handle_add(q)) {
		free(q);
		return PDH_MEMORY_ALLOCATION_FAILURE;
	}
	*ret = q;
	return 0;
}

PDH_FUNCTION PdhOpenQueryH(PDH_HLOG hDataSource, DWORD_PTR dwUserData, PDH_HQUERY *phQuery)
{
	struct pdh_log *log = NULL;

	if (!phQuery)
		return PDH_INVALID_ARGUMENT;
	if (hDataSource) {
		log = pdh_handle_get(hDataSource, PDH_KIND_LOG);
		if (!log || log->writing)
			return PDH_INVALID_HANDLE;
	}
	return query_new(log, dwUserData, phQuery);
}

PDH_FUNCTION PdhOpenQueryA(LPCSTR szDataSource, DWORD_PTR dwUserData, PDH_HQUERY *phQuery)
{
	PDH_HLOG log = NULL;
	PDH_STATUS st;
	char list[PDH_MAX_DATASOURCE_PATH + 2];
	size_t n;

	if (!phQuery)
		return PDH_INVALID_ARGUMENT;
	if (!szDataSource)
		return query_new(NULL, dwUserData, phQuery);
	/* a log file: bound as the query's data source (G-ReadLog) */
	n = strlen(szDataSource);
	if (n > PDH_MAX_DATASOURCE_PATH)
		return PDH_INVALID_ARGUMENT;
	memcpy(list, szDataSource, n + 1);
	list[n + 1] = '\0';
	st = PdhBindInputDataSourceA(&log, list);
	if (st)
		return st;
	st = query_new(pdh_handle_get(log, PDH_KIND_LOG), dwUserData, phQuery);
	if (st)
		PdhCloseLog(log, 0);
	return st;
}

PDH_FUNCTION PdhOpenQueryW(LPCWSTR szDataSource, DWORD_PTR dwUserData, PDH_HQUERY *phQuery)
{
	PDH_STATUS st = 0;
	char *src;

	if (!phQuery)
		return PDH_INVALID_ARGUMENT;
	src = pdh_w2u(szDataSource, &st);
	if (st)
		return st;
	st = PdhOpenQueryA(src, dwUserData, phQuery);
	free(src);
	return st;
}

static void sample_clear(struct pdh_sample *s)
{
	size_t i;

	for (i = 0; s->own_names && i < s->nr; i++)
		free(s->items[i].name);
	free(s->items);
	memset(s, 0, sizeof(*s));
}

static void counter_free(struct pdh_counter *c)
{
	sample_clear(&c->cur);
	sample_clear(&c->old);
	tp_path_free(&c->path);
	free(c->full_path);
	free(c->pattern);
	free(c->explain);
	free(c->log_cols);
	free(c);
}

static void stop_thread(struct pdh_query *q)
{
	pthread_t t;

	if (!q->thread_on)
		return;
	q->thread_stop = true;
	pthread_cond_broadcast(&q->cond);
	t = q->thread;
	q->thread_on = false;
	pthread_mutex_unlock(&q->lock);
	pthread_join(t, NULL);
	pthread_mutex_lock(&q->lock);
	q->thread_stop = false;
}

PDH_FUNCTION PdhCloseQuery(PDH_HQUERY hQuery)
{
	struct pdh_query *q = pdh_query_lock(hQuery);
	size_t i;

	if (!q)
		return PDH_INVALID_HANDLE;
	stop_thread(q);
	pdh_handle_del(q);
	for (i = 0; i < q->nr_counters; i++) {
		pdh_handle_del(q->counters[i]);
		counter_free(q->counters[i]);
	}
	free(q->counters);
	if (q->perf)
		PerfCloseQueryHandle(q->perf);
	if (q->have_data)
		tp_data_free(&q->data);
	if (q->have_old)
		tp_data_free(&q->data_old);
	free(q->prev_map);
	tp_catalog_free(&q->cat);
	free(q->buf);
	free(q->sets);
	free(q->spec_ids);
	pthread_mutex_unlock(&q->lock);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond);
	free(q);
	return 0;
}

PDH_API BOOL WINAPI PdhIsRealTimeQuery(PDH_HQUERY hQuery)
{
	struct pdh_query *q = pdh_query_lock(hQuery);
	BOOL r;

	if (!q)
		return 0;
	r = !q->source;
	pdh_unlock(q);
	return r;
}

/* ---- adding counters ----------------------------------------------------------------- */

static const struct tp_set *find_set(struct pdh_query *q, const char *name)
{
	long i;

	if (!q->have_cat) {
		if (tp_catalog_load(&q->cat, false, NULL))
			return NULL;
		q->have_cat = true;
	}
	i = tp_set_find(&q->cat, name);
	if (i < 0) {
		/* registered since the catalog was read? */
		tp_catalog_free(&q->cat);
		q->have_cat = false;
		if (tp_catalog_load(&q->cat, false, NULL))
			return NULL;
		q->have_cat = true;
		i = tp_set_find(&q->cat, name);
	}
	return i < 0 ? NULL : &q->cat.sets[i];
}

/* a log query: the columns of the log the path names */
static PDH_STATUS log_resolve(struct pdh_query *q, struct pdh_counter *c)
{
	const struct pdh_log *log = q->source;
	bool object = false;
	struct tp_path p;
	size_t i;

	for (i = 0; i < log->nr_paths; i++) {
		bool match;
		size_t *grown;

		if (tp_path_parse(log->paths[i], &p))
			continue;
		/* a path with a computer matches that computer's columns only */
		match = tp_match(c->path.object, p.object) &&
			(!c->path.machine || !p.machine || tp_match(c->path.machine, p.machine));
		object |= match;
		match = match && tp_match(c->path.counter, p.counter) &&
			!c->path.instance == !p.instance;
		if (match && c->pattern) {
			char *pat = tp_path_instance_pattern(&p);

			int idx = p.index < 0 ? 0 : p.index;

			/* "#n" that column, a wildcard every one, a plain name the first */
			match = pat && tp_match(c->pattern, pat) &&
				(c->path.index >= 0 ? c->path.index == idx : c->wildcard || !idx);
			free(pat);
		}
		tp_path_free(&p);
		if (!match)
			continue;
		grown = realloc(c->log_cols, (c->nr_log_cols + 1) * sizeof(*grown));
		if (!grown)
			return PDH_MEMORY_ALLOCATION_FAILURE;
		c->log_cols = grown;
		c->log_cols[c->nr_log_cols++] = i;
	}
	if (!c->nr_log_cols)
		return object ? PDH_CSTATUS_NO_COUNTER : PDH_CSTATUS_NO_OBJECT;
	c->ctr.type = PERF_COUNTER_LARGE_RAWCOUNT;
	c->ctr.id = (uint32_t)c->log_cols[0];
	c->base_id = TP_NO_ID;
	return 0;
}

/* a real-time query: the counter set and counter the path names */
static PDH_STATUS catalog_resolve(struct pdh_query *q, struct pdh_counter *c)
{
	const struct tp_set *set = find_set(q, c->path.object);
	size_t i;

	if (!set)
		return PDH_CSTATUS_NO_OBJECT;
	for (i = 0; i < set->nr_counters; i++)
		if (tp_name_equal(set->counters[i].name, c->path.counter))
			break;
	/* bases, text and no-data counters have no value to add (pdh.md 8.2) */
	if (i == set->nr_counters || !ctrtype_displayable(set->counters[i].type))
		return PDH_CSTATUS_NO_COUNTER;
	c->multi = tp_set_multi(set);
	if (c->multi != !!c->path.instance)
		return PDH_CSTATUS_NO_INSTANCE;
	c->guid = set->guid;
	c->ctr = set->counters[i];
	c->ctr.name = NULL;
	c->base_id = tp_counter_base(set, i);
	c->def_scale = set->counters[i].scale;
	return 0;
}

/* what PDH_RAW_COUNTER.SecondValue carries for a type (pdh.md 6.5) */
enum second {
	SECOND_NONE,
	SECOND_TIME,
	SECOND_100NS,
	SECOND_OBJECT,
	SECOND_BASE,
};

static enum second second_of(uint32_t type)
{
	switch (ctrtype_calc(type)) {
	case CTRTYPE_CALC_AVERAGE:
	case CTRTYPE_CALC_RAW_FRACTION:
	case CTRTYPE_CALC_SAMPLE_FRACTION:
		return SECOND_BASE;
	default:
		break;
	}
	if (type == PERF_PRECISION_SYSTEM_TIMER || type == PERF_PRECISION_100NS_TIMER)
		return SECOND_BASE;
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

PDH_STATUS pdh_counter_add(PDH_HQUERY hq, const char *path, DWORD_PTR user, PDH_HCOUNTER *ret)
{
	struct pdh_counter *c, **grown;
	struct pdh_query *q;
	PDH_STATUS st;

	if (!ret)
		return PDH_INVALID_ARGUMENT;
	q = pdh_query_lock(hq);
	if (!q)
		return PDH_INVALID_HANDLE;
	st = PDH_INVALID_ARGUMENT;
	if (!path)
		goto out;
	st = PDH_CSTATUS_NO_COUNTERNAME;
	if (!path[0])
		goto out;
	st = PDH_MEMORY_ALLOCATION_FAILURE;
	c = calloc(1, sizeof(*c));
	if (!c)
		goto out;
	c->kind = PDH_KIND_COUNTER;
	c->q = q;
	c->user = user;
	c->full_path = strdup(path);
	if (!c->full_path)
		goto fail;
	st = PDH_CSTATUS_BAD_COUNTERNAME;
	if (tp_path_parse(path, &c->path))
		goto fail;
	/* a log holds any computer's counters; real time reads this one only */
	st = PDH_CSTATUS_NO_MACHINE;
	if (!q->source && !pdh_machine_local(c->path.machine))
		goto fail;
	if (c->path.instance) {
		c->pattern = tp_path_instance_pattern(&c->path);
		st = PDH_MEMORY_ALLOCATION_FAILURE;
		if (!c->pattern)
			goto fail;
		c->wildcard = tp_has_wildcard(c->pattern) || c->path.index == TP_INDEX_ANY;
	}
	st = q->source ? log_resolve(q, c) : catalog_resolve(q, c);
	if (st)
		goto fail;
	c->match_all = c->pattern && !strcmp(c->pattern, "*") && c->path.index < 0;
	c->second = (uint8_t)second_of(c->ctr.type);
	c->tb = (uint8_t)ctrtype_timebase(c->ctr.type);
	c->calc = (uint8_t)ctrtype_calc(c->ctr.type);
	st = PDH_MEMORY_ALLOCATION_FAILURE;
	grown = realloc(q->counters, (q->nr_counters + 1) * sizeof(*grown));
	if (!grown)
		goto fail;
	q->counters = grown;
	if (pdh_handle_add(c))
		goto fail;
	q->counters[q->nr_counters++] = c;
	q->specs_dirty = true;
	*ret = c;
	pdh_unlock(q);
	return 0;
fail:
	counter_free(c);
out:
	if (st == PDH_CSTATUS_NO_COUNTER || st == PDH_CSTATUS_NO_OBJECT)
		*ret = NULL;
	pdh_unlock(q);
	return st;
}

PDH_FUNCTION PdhAddCounterA(PDH_HQUERY hQuery, LPCSTR szFullCounterPath, DWORD_PTR dwUserData,
			    PDH_HCOUNTER *phCounter)
{
	return pdh_counter_add(hQuery, szFullCounterPath, dwUserData, phCounter);
}

PDH_FUNCTION PdhAddCounterW(PDH_HQUERY hQuery, LPCWSTR szFullCounterPath, DWORD_PTR dwUserData,
			    PDH_HCOUNTER *phCounter)
{
	PDH_STATUS st = 0;
	char *path;

	if (!phCounter)
		return PDH_INVALID_ARGUMENT;
	path = pdh_w2u(szFullCounterPath, &st);
	if (st)
		return st;
	st = pdh_counter_add(hQuery, path, dwUserData, phCounter);
	free(path);
	return st;
}

/* names are registered in one language: English paths are the localized ones (pdh.md 8.1) */
PDH_FUNCTION PdhAddEnglishCounterA(PDH_HQUERY hQuery, LPCSTR szFullCounterPath,
				   DWORD_PTR dwUserData, PDH_HCOUNTER *phCounter)
{
	return PdhAddCounterA(hQuery, szFullCounterPath, dwUserData, phCounter);
}

PDH_FUNCTION PdhAddEnglishCounterW(PDH_HQUERY hQuery, LPCWSTR szFullCounterPath,
				   DWORD_PTR dwUserData, PDH_HCOUNTER *phCounter)
{
	return PdhAddCounterW(hQuery, szFullCounterPath, dwUserData, phCounter);
}

PDH_FUNCTION PdhRemoveCounter(PDH_HCOUNTER hCounter)
{
	struct pdh_counter *c = pdh_counter_lock(hCounter);
	struct pdh_query *q;
	size_t i;

	if (!c)
		return PDH_INVALID_HANDLE;
	q = c->q;
	for (i = 0; i < q->nr_counters; i++) {
		if (q->counters[i] == c) {
			memmove(&q->counters[i], &q->counters[i + 1],
				(q->nr_counters - i - 1) * sizeof(*q->counters));
			q->nr_counters--;
			break;
		}
	}
	pdh_handle_del(c);
	counter_free(c);
	q->specs_dirty = true;
	pdh_unlock(q);
	return 0;
}

/* ---- collection ---------------------------------------------------------------------- */

/* one spec per counter set the counters use, Index in order of addition */
static PDH_STATUS rebuild_specs(struct pdh_query *q)
{
	size_t i, k, nr = 0, off = 0;
	uint8_t *buf;
	ULONG st;

	if (q->perf)
		PerfCloseQueryHandle(q->perf);
	q->perf = NULL;
	free(q->sets);
	free(q->spec_ids);
	q->sets = calloc(q->nr_counters + 1, sizeof(*q->sets));
	q->spec_ids = calloc(q->nr_counters + 1, sizeof(*q->spec_ids));
	buf = calloc(q->nr_counters + 1, sizeof(PERF_COUNTER_IDENTIFIER) + 8);
	q->nr_specs = 0;
	if (!q->sets || !q->spec_ids || !buf) {
		free(buf);
		return PDH_MEMORY_ALLOCATION_FAILURE;
	}
	for (i = 0; i < q->nr_counters; i++) {
		const struct pdh_counter *c = q->counters[i];
		PERF_COUNTER_IDENTIFIER id = {0};

		for (k = 0; k < nr; k++)
			if (!memcmp(&q->sets[k], &c->guid, sizeof(GUID)))
				break;
		if (k < nr)
			continue;
		q->sets[nr] = c->guid;
		q->spec_ids[nr++] = PERF_WILDCARD_COUNTER;
		id.CounterSetGuid = c->guid;
		id.CounterId = PERF_WILDCARD_COUNTER;
		id.InstanceId = 0xFFFFFFFF;
		/* multi-instance sets need a name filter: "*" (single-instance ones take none) */
		id.Size = sizeof(id) + (c->multi ? 8 : 0);
		memcpy(buf + off, &id, sizeof(id));
		if (c->multi)
			memcpy(buf + off + sizeof(id), PERF_WILDCARD_INSTANCE "\0\0", 8);
		off += id.Size;
	}
	st = PerfOpenQueryHandle(NULL, &q->perf);
	if (st) {
		q->perf = NULL;
		free(buf);
		return pdh_from_win32(st);
	}
	if (off)
		st = PerfAddCounters(q->perf, (PERF_COUNTER_IDENTIFIER *)buf, (DWORD)off);
	free(buf);
	if (st)
		return pdh_from_win32(st);
	q->nr_specs = nr;
	q->specs_dirty = false;
	q->specs_gen++;
	return 0;
}

/* the block (spec Index) of counter set @guid in the newest data, or SIZE_MAX */
static size_t block_of(const struct pdh_query *q, const GUID *guid)
{
	size_t k;

	for (k = 0; k < q->nr_specs && k < q->data.nr_blocks; k++)
		if (!memcmp(&q->sets[k], guid, sizeof(GUID)))
			return k;
	return SIZE_MAX;
}

static bool aux(const struct tp_data *d, const struct tp_item *it, uint32_t id, uint64_t *v)
{
	return id != TP_NO_ID && tp_item_value(d, it, id, v);
}

/* the raw sample of @c from item @it of the newest data (pdh.md 6.5) */
static void fill_raw(struct pdh_counter *c, const struct tp_data *d, const struct tp_item *it,
		     int64_t stamp, PDH_RAW_COUNTER *r)
{
	uint64_t v = 0, base = 0, multi = 0, otime = (uint64_t)d->time, ofreq = (uint64_t)d->freq;
	uint32_t type = c->ctr.type;
	bool ok;

	if (c->calc == CTRTYPE_CALC_RAW && c->base_id == TP_NO_ID && c->ctr.multi_id == TP_NO_ID &&
	    c->ctr.time_id == TP_NO_ID && c->ctr.freq_id == TP_NO_ID) {
		/* the common case, a count: the value and nothing else */
		memset(r, 0, sizeof(*r));
		r->TimeStamp.dwLowDateTime = (DWORD)stamp;
		r->TimeStamp.dwHighDateTime = (DWORD)((uint64_t)stamp >> 32);
		r->MultiCount = 1;
		c->timebase = 0;
		if (!tp_item_value(d, it, c->ctr.id, &v)) {
			r->CStatus = (DWORD)PDH_CSTATUS_INVALID_DATA;
			return;
		}
		r->FirstValue = (LONGLONG)v;
		return;
	}

	memset(r, 0, sizeof(*r));
	r->TimeStamp.dwLowDateTime = (DWORD)stamp;
	r->TimeStamp.dwHighDateTime = (DWORD)((uint64_t)stamp >> 32);
	ok = tp_item_value(d, it, c->ctr.id, &v);
	/* a registered companion counter must be there; a missing one spoils the sample */
	if (c->base_id != TP_NO_ID)
		ok = ok && aux(d, it, c->base_id, &base);
	if (c->ctr.multi_id != TP_NO_ID)
		ok = ok && aux(d, it, c->ctr.multi_id, &multi);
	else
		multi = base; /* multi count from the base (PERF_COUNTER_MULTI_BASE) */
	if (c->ctr.time_id != TP_NO_ID)
		ok = ok && aux(d, it, c->ctr.time_id, &otime);
	else if (type == PERF_PRECISION_OBJECT_TIMER)
		otime = base; /* the companion time stamp is the base */
	if (c->ctr.freq_id != TP_NO_ID)
		ok = ok && aux(d, it, c->ctr.freq_id, &ofreq);
	if (!ok) {
		r->CStatus = (DWORD)PDH_CSTATUS_INVALID_DATA;
		return;
	}
	r->FirstValue = (LONGLONG)v;
	switch ((enum second)c->second) {
	case SECOND_TIME:
		r->SecondValue = d->time;
		break;
	case SECOND_100NS:
		r->SecondValue = d->time_100ns;
		break;
	case SECOND_OBJECT:
		r->SecondValue = (LONGLONG)otime;
		break;
	case SECOND_BASE:
		r->SecondValue = (LONGLONG)base;
		break;
	default:
		break;
	}
	r->MultiCount = (type & PERF_MULTI_COUNTER) ? (DWORD)multi : 1;
	switch ((enum ctrtype_timebase)c->tb) {
	case CTRTYPE_TB_100NS:
		c->timebase = 10000000;
		break;
	case CTRTYPE_TB_OBJECT:
		c->timebase = (int64_t)ofreq;
		break;
	case CTRTYPE_TB_TICK:
		c->timebase = d->freq;
		break;
	default:
		c->timebase = 0;
		break;
	}
}

/* append an item: @name copied when the sample owns its names, else referenced */
static int sample_add(struct pdh_sample *s, const char *name, size_t len, unsigned int dup,
		      struct pdh_item **ret)
{
	struct pdh_item *grown, *it;

	if (s->nr == s->cap) {
		grown = realloc(s->items, (s->cap ? 2 * s->cap : 16) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		s->items = grown;
		s->cap = s->cap ? 2 * s->cap : 16;
	}
	it = &s->items[s->nr];
	memset(it, 0, sizeof(*it));
	if (name) {
		it->name = s->own_names ? strdup(name) : (char *)name;
		if (!it->name)
			return -ENOMEM;
		it->len = len;
	}
	it->dup = dup;
	s->nr++;
	*ret = it;
	return 0;
}

static bool item_same(const struct pdh_item *a, const char *name, size_t len, unsigned int dup)
{
	if (a->dup != dup)
		return false;
	if (!name || !a->name)
		return !name == !a->name;
	return (a->len == len && !memcmp(a->name, name, len)) || tp_name_equal(a->name, name);
}

const struct pdh_item *pdh_item_seek(const struct pdh_sample *s, const char *name, unsigned int dup,
				     size_t *cursor)
{
	const struct pdh_item *o = NULL;
	size_t len = name ? strlen(name) : 0;

	if (*cursor < s->nr && item_same(&s->items[*cursor], name, len, dup))
		o = &s->items[*cursor];
	else
		o = pdh_item_find(s, name, dup);
	if (o)
		*cursor = (size_t)(o - s->items) + 1;
	return o;
}

const struct pdh_item *pdh_item_find(const struct pdh_sample *s, const char *name, unsigned int dup)
{
	size_t i;

	for (i = 0; i < s->nr; i++) {
		const struct pdh_item *it = &s->items[i];

		if (item_same(it, name, name ? strlen(name) : 0, dup))
			return it;
	}
	return NULL;
}

/*
 * the counter's samples move on: the old one goes, the newest becomes old, and the new one
 * starts empty in the old one's item array
 */
static void sample_recycle(struct pdh_counter *c)
{
	struct pdh_item *items = c->old.items;
	size_t cap = c->old.cap, i;

	for (i = 0; c->old.own_names && i < c->old.nr; i++)
		free(c->old.items[i].name);
	c->old = c->cur;
	memset(&c->cur, 0, sizeof(c->cur));
	c->cur.items = items;
	c->cur.cap = cap;
	c->cur.valid = true;
	c->changed = true;
}

/* the item of @s that came from data item @src (items are in data order), from *@cursor */
static const struct pdh_item *seek_src(const struct pdh_sample *s, size_t src, size_t *cursor)
{
	size_t lo = 0, hi = s->nr, mid;

	if (*cursor < s->nr && s->items[*cursor].src == src) {
		mid = *cursor;
	} else {
		for (;;) {
			if (lo >= hi)
				return NULL;
			mid = lo + (hi - lo) / 2;
			if (s->items[mid].src == src)
				break;
			if (s->items[mid].src < src)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	*cursor = mid + 1;
	return &s->items[mid];
}

static bool data_item_same(const struct tp_item *a, const struct tp_item *b)
{
	if (a->dup != b->dup)
		return false;
	if (!a->name || !b->name)
		return !a->name == !b->name;
	return (a->len == b->len && !memcmp(a->name, b->name, a->len)) ||
	       tp_name_equal(a->name, b->name);
}

static uint64_t data_item_hash(const struct tp_item *it)
{
	return (it->name ? tp_name_hash(it->name) : 0) ^ (it->dup * 0x9E3779B97F4A7C15ull);
}

/*
 * map_block - for the items of block @nb of @new, the item of the same instance (name and
 * duplicate number) in block @ob of @old: the next one in order first, then by a hash of
 * the old block, built when the order first fails (instances came or went)
 */
static int map_block(const struct tp_data *new, const struct tp_block *nb,
		     const struct tp_data *old, const struct tp_block *ob, size_t *map)
{
	size_t i, j, cursor = ob->first, cap = 16, *table = NULL;

	while (cap < 2 * ob->nr)
		cap *= 2;
	for (i = nb->first; i < nb->first + nb->nr; i++) {
		const struct tp_item *it = &new->items[i];

		map[i] = SIZE_MAX;
		if (cursor < ob->first + ob->nr && data_item_same(&old->items[cursor], it)) {
			map[i] = cursor++;
			continue;
		}
		if (!table) {
			table = malloc(cap * sizeof(*table));
			if (!table)
				return -ENOMEM;
			memset(table, 0xff, cap * sizeof(*table));
			for (j = ob->first; j < ob->first + ob->nr; j++) {
				size_t h = data_item_hash(&old->items[j]) & (cap - 1);

				while (table[h] != SIZE_MAX)
					h = (h + 1) & (cap - 1);
				table[h] = j;
			}
		}
		for (j = data_item_hash(it) & (cap - 1); table[j] != SIZE_MAX;
		     j = (j + 1) & (cap - 1)) {
			if (data_item_same(&old->items[table[j]], it)) {
				map[i] = table[j];
				cursor = table[j] + 1;
				break;
			}
		}
	}
	free(table);
	return 0;
}

/* q->prev_map from the current data (about to be the old one) to @new */
static void map_data(struct pdh_query *q, const struct tp_data *new)
{
	size_t k, *map;

	q->map_ok = false;
	if (!q->have_data || q->data_gen != q->specs_gen)
		return; /* the specs changed: blocks do not correspond */
	map = realloc(q->prev_map, (new->nr_items ? new->nr_items : 1) * sizeof(*map));
	if (!map)
		return; /* the counters find their old items by name */
	q->prev_map = map;
	memset(map, 0xff, new->nr_items * sizeof(*map));
	for (k = 0; k < new->nr_blocks &&k < q->data.nr_blocks; k++) {
		if (new->blocks[k].status || q->data.blocks[k].status)
			continue;
		if (map_block(new, &new->blocks[k], &q->data, &q->data.blocks[k], map))
			return;
	}
	q->map_ok = true;
}

/* does item @it of the data match the instance part of @c? */
static bool item_matches(const struct pdh_counter *c, const struct tp_item *it)
{
	if (!it->name || !tp_match(c->pattern, it->name))
		return false;
	if (c->path.index >= 0)
		return it->dup == (unsigned int)c->path.index;
	/* "\Obj(name)\C" is the first of that name; "(*)" and "#*" take every one */
	return c->wildcard || it->dup == 0;
}

/* the new sample of counter @c from the newest data */
static int counter_sample(struct pdh_query *q, struct pdh_counter *c)
{
	const struct tp_data *d = &q->data;
	size_t block = block_of(q, &c->guid), i;
	const struct tp_block *b;
	struct pdh_item *item;
	size_t cursor = 0;
	int err;

	sample_recycle(c);
	if (block == SIZE_MAX) {
		c->status = (DWORD)PDH_CSTATUS_NO_OBJECT;
		return 0;
	}
	b = &d->blocks[block];
	if (b->status) {
		c->status = (DWORD)pdh_from_win32(b->status);
		return 0;
	}
	c->status = (DWORD)PDH_CSTATUS_NO_INSTANCE;
	if (c->cur.cap < b->nr) {
		/* room for every instance at once (the array is reused from sample to sample) */
		item = realloc(c->cur.items, b->nr * sizeof(*item));
		if (!item)
			return -ENOMEM;
		c->cur.items = item;
		c->cur.cap = b->nr;
	}
	for (i = b->first; i < b->first + b->nr; i++) {
		const struct tp_item *it = &d->items[i];

		if (c->multi && !(c->match_all && it->name) && !item_matches(c, it))
			continue;
		err = sample_add(&c->cur, it->name, it->len, it->dup, &item);
		if (err)
			return err;
		item->src = i;
		fill_raw(c, d, it, q->stamp, &item->raw);
		if (q->map_ok)
			item->prev = q->prev_map[i] == SIZE_MAX
					     ? NULL
					     : seek_src(&c->old, q->prev_map[i], &cursor);
		else
			item->prev = pdh_item_seek(&c->old, item->name, item->dup, &cursor);
		if (!item->raw.CStatus) {
			const struct pdh_item *o = item->prev;

			item->raw.CStatus =
				o && !o->raw.CStatus && o->raw.FirstValue == item->raw.FirstValue &&
						o->raw.SecondValue == item->raw.SecondValue
					? (DWORD)PDH_CSTATUS_VALID_DATA
					: (DWORD)PDH_CSTATUS_NEW_DATA;
		}
		c->status = 0;
		if (!c->wildcard)
			break;
	}
	return 0;
}

/* log replay: the next record into every counter */
static PDH_STATUS log_step(struct pdh_query *q)
{
	struct pdh_log *log = q->source;
	size_t i, k, cursor;
	char *end;

	if (log->next >= log->limit)
		return PDH_NO_MORE_DATA;
	q->stamp = pdh_log_stamp(log->stamps[log->next]);
	for (i = 0; i < q->nr_counters; i++) {
		struct pdh_counter *c = q->counters[i];

		sample_clear(&c->old);
		c->old = c->cur;
		memset(&c->cur, 0, sizeof(c->cur));
		c->cur.valid = true;
		c->cur.own_names = true;
		c->changed = true;
		c->status = 0;
		cursor = 0;
		for (k = 0; k < c->nr_log_cols; k++) {
			const char *v = log->values[log->next][c->log_cols[k]];
			struct tp_path p = {0};
			struct pdh_item *it;
			char *name = NULL;

			if (!tp_path_parse(log->paths[c->log_cols[k]], &p) && p.instance)
				name = tp_path_instance_pattern(&p);
			if (sample_add(&c->cur, name, name ? strlen(name) : 0,
				       p.index > 0 ? (unsigned int)p.index : 0, &it)) {
				free(name);
				tp_path_free(&p);
				return PDH_MEMORY_ALLOCATION_FAILURE;
			}
			free(name);
			tp_path_free(&p);
			it->prev = pdh_item_seek(&c->old, it->name, it->dup, &cursor);
			it->raw.TimeStamp.dwLowDateTime = (DWORD)q->stamp;
			it->raw.TimeStamp.dwHighDateTime = (DWORD)((uint64_t)q->stamp >> 32);
			it->logged = strtod(v, &end);
			if (end == v || *end) {
				it->raw.CStatus = (DWORD)PDH_CSTATUS_INVALID_DATA;
				continue;
			}
			it->raw.CStatus = (DWORD)PDH_CSTATUS_NEW_DATA;
			it->raw.FirstValue = (LONGLONG)it->logged;
			it->raw.MultiCount = 1;
		}
	}
	log->next++;
	return 0;
}

PDH_STATUS pdh_collect_locked(struct pdh_query *q)
{
	struct tp_data data;
	DWORD actual = 0;
	size_t i, tries;
	PDH_STATUS st;
	ULONG ws;
	void *grown;

	if (!q->nr_counters)
		return PDH_NO_DATA;
	if (q->source)
		return log_step(q);
	if (q->specs_dirty || !q->perf) {
		st = rebuild_specs(q);
		if (st)
			return st == PDH_CSTATUS_NO_OBJECT ? PDH_NO_DATA : st;
	}
	for (tries = 0; tries < DATA_RETRIES; tries++) {
		ws = PerfQueryCounterData(q->perf, q->buf, q->buf_size, &actual);
		if (ws != ERROR_NOT_ENOUGH_MEMORY)
			break;
		/* grow with slack: instances come and go between samples */
		grown = realloc(q->buf, actual + actual / 4 + 256);
		if (!grown)
			return PDH_MEMORY_ALLOCATION_FAILURE;
		q->buf = grown;
		q->buf_size = actual + actual / 4 + 256;
	}
	if (ws != ERROR_SUCCESS || actual > q->buf_size)
		return ws == ERROR_FILE_NOT_FOUND ? PDH_NO_DATA : pdh_from_win32(ws);
	if (tp_data_parse(q->buf, actual, q->spec_ids, q->nr_specs, &data))
		return PDH_INVALID_DATA;
	/*
	 * the counters' samples reference the names of the data they came from: the new
	 * sample the new data, the old one the data before, the one before that is dropped
	 */
	map_data(q, &data);
	if (q->have_old)
		tp_data_free(&q->data_old);
	q->data_old = q->data;
	q->have_old = q->have_data;
	q->data = data;
	q->have_data = true;
	q->data_gen = q->specs_gen;
	q->stamp = pdh_local_filetime(q->data.time_100ns);
	for (i = 0; i < q->nr_counters; i++) {
		if (counter_sample(q, q->counters[i])) {
			/* partly sampled: no sample may point at data that goes next time */
			for (i = 0; i < q->nr_counters; i++) {
				sample_clear(&q->counters[i]->cur);
				sample_clear(&q->counters[i]->old);
			}
			return PDH_MEMORY_ALLOCATION_FAILURE;
		}
	}
	/* the only counter of the query has no instance: no data (pdh.md 6.4) */
	if (q->nr_counters == 1 && q->counters[0]->status && !q->counters[0]->wildcard)
		return PDH_NO_DATA;
	return 0;
}

PDH_FUNCTION PdhCollectQueryData(PDH_HQUERY hQuery)
{
	struct pdh_query *q = pdh_query_lock(hQuery);
	PDH_STATUS st;

	if (!q)
		return PDH_INVALID_HANDLE;
	st = pdh_collect_locked(q);
	pdh_unlock(q);
	return st;
}

PDH_FUNCTION PdhCollectQueryDataWithTime(PDH_HQUERY hQuery, LONGLONG *pllTimeStamp)
{
	struct pdh_query *q;
	PDH_STATUS st;

	if (!pllTimeStamp)
		return hQuery && !pdh_handle_get(hQuery, PDH_KIND_QUERY) ? PDH_INVALID_HANDLE
									 : PDH_INVALID_ARGUMENT;
	q = pdh_query_lock(hQuery);
	if (!q)
		return PDH_INVALID_HANDLE;
	st = pdh_collect_locked(q);
	if (!st || st == PDH_NO_DATA)
		*pllTimeStamp = q->stamp;
	pdh_unlock(q);
	return st;
}

static void *collect_thread(void *arg)
{
	struct pdh_query *q = arg;
	struct timespec at;

	pthread_mutex_lock(&q->lock);
	clock_gettime(CLOCK_REALTIME, &at);
	while (!q->thread_stop) {
		/* collect, signal, then wait one interval (D-CollectEx) */
		pdh_collect_locked(q);
		if (q->event)
			SetEvent(q->event);
		at.tv_sec += q->interval ? q->interval : 1;
		while (!q->thread_stop && pthread_cond_timedwait(&q->cond, &q->lock, &at) == 0)
			;
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

PDH_FUNCTION PdhCollectQueryDataEx(PDH_HQUERY hQuery, DWORD dwIntervalTime, HANDLE hNewDataEvent)
{
	struct pdh_query *q = pdh_query_lock(hQuery);
	PDH_STATUS st = 0;

	if (!q)
		return PDH_INVALID_HANDLE;
	if (hNewDataEvent && !pdh_handle_get(hNewDataEvent, PDH_KIND_EVENT)) {
		st = PDH_INVALID_HANDLE;
		goto out;
	}
	if (!q->nr_counters) {
		st = PDH_NO_DATA;
		goto out;
	}
	stop_thread(q);
	q->interval = dwIntervalTime;
	q->event = hNewDataEvent;
	if (pthread_create(&q->thread, NULL, collect_thread, q)) {
		st = PDH_MEMORY_ALLOCATION_FAILURE;
		goto out;
	}
	q->thread_on = true;
out:
	pdh_unlock(q);
	return st;
}

/* ---- events (pdh.md 9.2) ------------------------------------------------------------- */

struct pdh_event {
	enum pdh_kind kind;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool manual, set;
};

PDH_API HANDLE WINAPI CreateEventW(void *lpEventAttributes, BOOL bManualReset, BOOL bInitialState,
				   LPCWSTR lpName)
{
	struct pdh_event *e = calloc(1, sizeof(*e));

	(void)lpEventAttributes;
	(void)lpName;
	if (!e) {
		SetLastError(ERROR_NOT_ENOUGH_MEMORY);
		return NULL;
	}
	e->kind = PDH_KIND_EVENT;
	e->manual = bManualReset;
	e->set = bInitialState;
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	if (pdh_handle_add(e)) {
		free(e);
		SetLastError(ERROR_NOT_ENOUGH_MEMORY);
		return NULL;
	}
	return e;
}

static struct pdh_event *event_get(HANDLE h)
{
	struct pdh_event *e = pdh_handle_get(h, PDH_KIND_EVENT);

	if (!e)
		SetLastError(ERROR_INVALID_HANDLE);
	return e;
}

static BOOL event_put(HANDLE h, bool set)
{
	struct pdh_event *e = event_get(h);

	if (!e)
		return 0;
	pthread_mutex_lock(&e->lock);
	e->set = set;
	if (set)
		pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	return 1;
}

PDH_API BOOL WINAPI SetEvent(HANDLE hEvent)
{
	return event_put(hEvent, true);
}

PDH_API BOOL WINAPI ResetEvent(HANDLE hEvent)
{
	return event_put(hEvent, false);
}

PDH_API DWORD WINAPI WaitForSingleObject(HANDLE hHandle, DWORD dwMilliseconds)
{
	struct pdh_event *e = event_get(hHandle);
	struct timespec at;
	DWORD r = WAIT_OBJECT_0;

	if (!e)
		return WAIT_FAILED;
	clock_gettime(CLOCK_REALTIME, &at);
	at.tv_sec += dwMilliseconds / 1000;
	at.tv_nsec += (long)(dwMilliseconds % 1000) * 1000000L;
	if (at.tv_nsec >= 1000000000L)
		at.tv_sec++, at.tv_nsec -= 1000000000L;
	pthread_mutex_lock(&e->lock);
	while (!e->set) {
		if (dwMilliseconds == INFINITE)
			pthread_cond_wait(&e->cond, &e->lock);
		else if (pthread_cond_timedwait(&e->cond, &e->lock, &at) == ETIMEDOUT) {
			r = e->set ? WAIT_OBJECT_0 : WAIT_TIMEOUT;
			break;
		}
	}
	if (r == WAIT_OBJECT_0 && !e->manual)
		e->set = false; /* an auto-reset event is consumed by the wait */
	pthread_mutex_unlock(&e->lock);
	return r;
}

PDH_API BOOL WINAPI CloseHandle(HANDLE hObject)
{
	struct pdh_event *e = event_get(hObject);

	if (!e)
		return 0;
	pdh_handle_del(e);
	pthread_mutex_destroy(&e->lock);
	pthread_cond_destroy(&e->cond);
	free(e);
	return 1;
}
