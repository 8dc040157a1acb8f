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

	for (i = 0; i < s->nr; i++)
		free(s->items[i].name);
	free(s->items);
	memset(s, 0, sizeof(*s));
}

static void counter_free(struct pdh_counter *c)
{
	sample_clear(&c->cur);
	sample_clear(&c->old);
	free(c->sel);
	pdh_cpath_free(&c->path);
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
	pdh_data_free(q);
	pdh_catalog_free(&q->cat);
	free(q->sets);
	free(q->whole);
	free(q->whole_multi);
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

static const struct pdh_cat_set *find_set(struct pdh_query *q, const char *name)
{
	long i;

	if (!q->have_cat) {
		if (pdh_catalog_load(&q->cat, false, NULL))
			return NULL;
		q->have_cat = true;
	}
	i = pdh_cat_set_find(&q->cat, name);
	if (i < 0) {
		/* registered since the catalog was read? */
		pdh_catalog_free(&q->cat);
		q->have_cat = false;
		if (pdh_catalog_load(&q->cat, false, NULL))
			return NULL;
		q->have_cat = true;
		i = pdh_cat_set_find(&q->cat, name);
	}
	return i < 0 ? NULL : &q->cat.sets[i];
}

/* a log query: the columns of the log the path names */
static PDH_STATUS log_resolve(struct pdh_query *q, struct pdh_counter *c)
{
	const struct pdh_log *log = q->source;
	bool object = false;
	struct pdh_cpath p;
	size_t i;

	for (i = 0; i < log->nr_paths; i++) {
		bool match;
		size_t *grown;

		if (pdh_cpath_parse(log->paths[i], &p))
			continue;
		/* a path with a computer matches that computer's columns only */
		match = pdh_match(c->path.object, p.object) &&
			(!c->path.machine || !p.machine || pdh_match(c->path.machine, p.machine));
		object |= match;
		match = match && pdh_match(c->path.counter, p.counter) &&
			!c->path.instance == !p.instance;
		if (match && c->pattern) {
			char *pat = pdh_cpath_instance_pattern(&p);

			int idx = p.index < 0 ? 0 : p.index;

			/* "#n" that column, a wildcard every one, a plain name the first */
			match = pat && pdh_match(c->pattern, pat) &&
				(c->path.index >= 0 ? c->path.index == idx : c->wildcard || !idx);
			free(pat);
		}
		pdh_cpath_free(&p);
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
	c->base_id = PERFLIB_NO_ID;
	return 0;
}

/* a real-time query: the counter set and counter the path names */
static PDH_STATUS catalog_resolve(struct pdh_query *q, struct pdh_counter *c)
{
	const struct pdh_cat_set *set = find_set(q, c->path.object);
	size_t i;

	if (!set)
		return PDH_CSTATUS_NO_OBJECT;
	for (i = 0; i < set->nr_counters; i++)
		if (pdh_name_equal(set->counters[i].name, c->path.counter))
			break;
	/* bases, text and no-data counters have no value to add (pdh.md 8.2) */
	if (i == set->nr_counters || !ctrtype_displayable(set->counters[i].type))
		return PDH_CSTATUS_NO_COUNTER;
	c->multi = pdh_cat_set_multi(set);
	if (c->multi != !!c->path.instance)
		return PDH_CSTATUS_NO_INSTANCE;
	c->guid = set->guid;
	c->ctr = set->counters[i];
	c->ctr.name = NULL;
	c->base_id = pdh_cat_counter_base(set, i);
	c->def_scale = set->counters[i].scale;
	return 0;
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
	if (pdh_cpath_parse(path, &c->path))
		goto fail;
	/* a log holds any computer's counters; real time reads this one only */
	st = PDH_CSTATUS_NO_MACHINE;
	if (!q->source && !pdh_machine_local(c->path.machine))
		goto fail;
	if (c->path.instance) {
		c->pattern = pdh_cpath_instance_pattern(&c->path);
		st = PDH_MEMORY_ALLOCATION_FAILURE;
		if (!c->pattern)
			goto fail;
		c->wildcard = pdh_has_wildcard(c->pattern) || c->path.index == PDH_INDEX_ANY;
	}
	st = q->source ? log_resolve(q, c) : catalog_resolve(q, c);
	if (st)
		goto fail;
	c->match_all = c->pattern && !strcmp(c->pattern, "*") && c->path.index < 0;
	c->second = (uint8_t)pdh_second_of(c->ctr.type);
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

/* append a wildcard spec for counter set @guid to @buf at *@off unless it is there */
static void add_spec(struct pdh_query *q, uint8_t *buf, size_t *off, const GUID *guid, bool multi)
{
	PERF_COUNTER_IDENTIFIER id = {0};
	size_t k;

	for (k = 0; k < q->nr_specs; k++)
		if (!memcmp(&q->sets[k], guid, sizeof(GUID)))
			return;
	q->sets[q->nr_specs] = *guid;
	q->spec_ids[q->nr_specs++] = PERF_WILDCARD_COUNTER;
	id.CounterSetGuid = *guid;
	id.CounterId = PERF_WILDCARD_COUNTER;
	id.InstanceId = PERFLIB_NO_ID;
	/* multi-instance sets need a name filter: "*" (single-instance ones take none) */
	id.Size = sizeof(id) + (multi ? 8 : 0);
	memcpy(buf + *off, &id, sizeof(id));
	if (multi)
		memcpy(buf + *off + sizeof(id), PERF_WILDCARD_INSTANCE "\0\0", 8);
	*off += id.Size;
}

/*
 * one spec per counter set the counters use, then the whole sets (pdh_query_whole_sets).
 * perflib numbers the specs it accepted: one it refused (a set unregistered meanwhile) has
 * no Index, so it leaves q->sets and the Index of each block is its place there.
 */
static PDH_STATUS rebuild_specs(struct pdh_query *q)
{
	size_t i, k, nr = q->nr_counters + q->nr_whole, off = 0;
	uint8_t *buf;
	ULONG st;

	if (q->perf)
		PerfCloseQueryHandle(q->perf);
	q->perf = NULL;
	pdh_perfcols_forget(&q->cols); /* other specifications: other blocks */
	free(q->sets);
	free(q->spec_ids);
	q->sets = calloc(nr + 1, sizeof(*q->sets));
	q->spec_ids = calloc(nr + 1, sizeof(*q->spec_ids));
	buf = calloc(nr + 1, sizeof(PERF_COUNTER_IDENTIFIER) + 8);
	q->nr_specs = 0;
	if (!q->sets || !q->spec_ids || !buf) {
		free(buf);
		return PDH_MEMORY_ALLOCATION_FAILURE;
	}
	for (i = 0; i < q->nr_counters; i++)
		add_spec(q, buf, &off, &q->counters[i]->guid, q->counters[i]->multi);
	for (i = 0; i < q->nr_whole; i++)
		add_spec(q, buf, &off, &q->whole[i], q->whole_multi[i]);
	st = PerfOpenQueryHandle(NULL, &q->perf);
	if (st) {
		q->perf = NULL;
		q->nr_specs = 0;
		free(buf);
		return pdh_from_win32(st);
	}
	if (off)
		st = PerfAddCounters(q->perf, (PERF_COUNTER_IDENTIFIER *)buf, (DWORD)off);
	if (!st) {
		/* the specs perflib refused (Status set) have no Index: drop their sets */
		for (i = k = off = 0; i < q->nr_specs; i++) {
			PERF_COUNTER_IDENTIFIER id;

			memcpy(&id, buf + off, sizeof(id));
			off += id.Size;
			if (id.Status != ERROR_SUCCESS)
				continue;
			q->sets[k] = q->sets[i];
			q->spec_ids[k++] = q->spec_ids[i];
		}
		q->nr_specs = k;
	}
	free(buf);
	if (st) {
		q->nr_specs = 0;
		return pdh_from_win32(st);
	}
	q->specs_dirty = false;
	return 0;
}

PDH_STATUS pdh_query_whole_sets(PDH_HQUERY hQuery, const GUID *sets, const bool *multi, size_t nr)
{
	struct pdh_query *q;
	GUID *g = NULL;
	bool *m = NULL;

	if (nr && (!sets || !multi))
		return PDH_INVALID_ARGUMENT;
	q = pdh_query_lock(hQuery);
	if (!q)
		return PDH_INVALID_HANDLE;
	if (q->source) {
		pdh_unlock(q);
		return PDH_INVALID_ARGUMENT; /* a log has no counter sets to ask for */
	}
	if (nr == q->nr_whole && (!nr || (!memcmp(sets, q->whole, nr * sizeof(*sets)) &&
					  !memcmp(multi, q->whole_multi, nr * sizeof(*multi))))) {
		pdh_unlock(q); /* the same list: the perflib query stays */
		return 0;
	}
	if (nr) {
		g = malloc(nr * sizeof(*g));
		m = malloc(nr * sizeof(*m));
		if (!g || !m) {
			free(g);
			free(m);
			pdh_unlock(q);
			return PDH_MEMORY_ALLOCATION_FAILURE;
		}
		memcpy(g, sets, nr * sizeof(*g));
		memcpy(m, multi, nr * sizeof(*m));
	}
	free(q->whole);
	free(q->whole_multi);
	q->whole = g;
	q->whole_multi = m;
	q->nr_whole = nr;
	q->specs_dirty = true;
	pdh_unlock(q);
	return 0;
}

/* log replay: append an item named @name (taken) to @s; -ENOMEM (@name freed) */
static int replay_add(struct pdh_sample *s, char *name, unsigned int dup, struct pdh_item **ret)
{
	struct pdh_item *grown;

	if (s->nr == s->cap) {
		grown = realloc(s->items, (s->cap ? 2 * s->cap : 16) * sizeof(*grown));
		if (!grown) {
			free(name);
			return -ENOMEM;
		}
		s->items = grown;
		s->cap = s->cap ? 2 * s->cap : 16;
	}
	*ret = &s->items[s->nr++];
	**ret = (struct pdh_item){.name = name, .len = name ? strlen(name) : 0, .dup = dup};
	return 0;
}

/* log replay: the item of @s for (@name, @dup), from *@cursor first, then all */
static const struct pdh_item *replay_find(const struct pdh_sample *s, const char *name,
					  unsigned int dup, size_t *cursor)
{
	size_t i;

	for (i = 0; i <= s->nr; i++) {
		size_t at = i ? i - 1 : *cursor;
		const struct pdh_item *it = &s->items[at];

		if (at >= s->nr || it->dup != dup || !it->name != !name ||
		    (name && !pdh_name_equal(it->name, name)))
			continue;
		*cursor = at + 1;
		return it;
	}
	return NULL;
}

/* log replay: the next record into every counter */
static PDH_STATUS log_step(struct pdh_query *q)
{
	struct pdh_log *log = q->source;
	size_t i, k, cursor;
	char *end;

	if (log->next >= log->limit)
		return PDH_NO_MORE_DATA;
	q->stamp = log->times[log->next];
	for (i = 0; i < q->nr_counters; i++) {
		struct pdh_counter *c = q->counters[i];

		sample_clear(&c->old);
		c->old = c->cur;
		memset(&c->cur, 0, sizeof(c->cur));
		c->valid = true;
		c->changed = true;
		c->status = 0;
		cursor = 0;
		for (k = 0; k < c->nr_log_cols; k++) {
			const char *v = log->values[log->next][c->log_cols[k]];
			struct pdh_cpath p = {0};
			struct pdh_item *it;
			char *name = NULL;
			unsigned int dup = 0;

			if (!pdh_cpath_parse(log->paths[c->log_cols[k]], &p) && p.instance) {
				name = pdh_cpath_instance_pattern(&p);
				if (!name) {
					pdh_cpath_free(&p);
					return PDH_MEMORY_ALLOCATION_FAILURE;
				}
			}
			dup = p.index > 0 ? (unsigned int)p.index : 0;
			pdh_cpath_free(&p);
			if (replay_add(&c->cur, name, dup, &it))
				return PDH_MEMORY_ALLOCATION_FAILURE;
			it->prev = replay_find(&c->old, it->name, it->dup, &cursor);
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
	PDH_STATUS st;

	if (!q->nr_counters && !q->nr_whole)
		return PDH_NO_DATA;
	if (q->source)
		return log_step(q);
	if (q->specs_dirty || !q->perf) {
		st = rebuild_specs(q);
		if (st)
			return st == PDH_CSTATUS_NO_OBJECT ? PDH_NO_DATA : st;
	}
	st = pdh_data_update(q);
	if (st)
		return st;
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
