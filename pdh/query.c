/* SPDX-License-Identifier: MIT */
/*
 * query.c - PDH queries and counters on the perflib consumer API (pdh.md 5.1-5.3, 8.2, 8.3):
 * a query holds one perflib query with one wildcard specification per counter set its
 * counters use (all counters, all instances: bases, clocks and multi counts come along);
 * instance selection (name, "#n", wildcards) happens here, on each sample, because "#n"
 * numbering needs every same-named instance. PdhCollectQueryDataEx runs a thread, which
 * signals the event objects of event.c. A query on a log replays it (replay.c).
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
	struct pdh_query *q;
	struct pdh_log *log;
	PDH_STATUS st;

	if (!phQuery)
		return PDH_INVALID_ARGUMENT;
	if (!szDataSource || !*szDataSource)
		return query_new(NULL, dwUserData, phQuery);
	/* a log file: read as the query's own data source, closed with it (G-ReadLog) */
	if (strlen(szDataSource) > PDH_MAX_DATASOURCE_PATH)
		return PDH_INVALID_ARGUMENT;
	st = pdh_log_read(szDataSource, &log);
	if (st)
		return st;
	st = query_new(log, dwUserData, phQuery);
	if (st) {
		pdh_log_free(log);
		return st;
	}
	q = *phQuery;
	q->own_source = true;
	return 0;
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

static void counter_free(struct pdh_counter *c)
{
	pdh_sample_clear(&c->cur);
	pdh_sample_clear(&c->old);
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

/* a sub-query and what it holds (not its counters: the owner's) */
static void sub_free(struct pdh_query *s)
{
	free(s->counters);
	if (s->perf)
		PerfCloseQueryHandle(s->perf);
	pdh_data_free(s);
	pdh_catalog_free(&s->cat);
	free(s->sets);
	free(s->spec_ids);
	free(s->machine);
	free(s);
}

/*
 * the sub-query of @q for machine @name (PDH's spelling), made the first time: *@ret.
 * PDH_MEMORY_ALLOCATION_FAILURE.
 */
static PDH_STATUS sub_get(struct pdh_query *q, const char *name, struct pdh_query **ret)
{
	struct pdh_query *s, **grown;
	size_t i;

	while (*name == '\\')
		name++;
	for (i = 0; i < q->nr_subs; i++) {
		if (!strcasecmp(q->subs[i]->machine, name)) {
			*ret = q->subs[i];
			return 0;
		}
	}
	grown = realloc(q->subs, (q->nr_subs + 1) * sizeof(*grown));
	if (!grown)
		return PDH_MEMORY_ALLOCATION_FAILURE;
	q->subs = grown;
	s = calloc(1, sizeof(*s));
	if (!s)
		return PDH_MEMORY_ALLOCATION_FAILURE;
	s->kind = PDH_KIND_QUERY;
	s->machine = strdup(name);
	if (!s->machine || pdh_machine_seen(name)) {
		free(s->machine);
		free(s);
		return PDH_MEMORY_ALLOCATION_FAILURE;
	}
	s->cols.remote = true;
	q->subs[q->nr_subs++] = s;
	*ret = s;
	return 0;
}

/* remove @c from sub-query @s's counters */
static void sub_remove(struct pdh_query *s, const struct pdh_counter *c)
{
	size_t i;

	for (i = 0; i < s->nr_counters; i++) {
		if (s->counters[i] == c) {
			memmove(&s->counters[i], &s->counters[i + 1],
				(s->nr_counters - i - 1) * sizeof(*s->counters));
			s->nr_counters--;
			s->specs_dirty = true;
			return;
		}
	}
}

PDH_FUNCTION PdhCloseQuery(PDH_HQUERY hQuery)
{
	struct pdh_query *q = pdh_query_lock(hQuery);
	size_t i;

	if (!q)
		return PDH_INVALID_HANDLE;
	stop_thread(q);
	pdh_handle_del(q);
	for (i = 0; i < q->nr_subs; i++)
		sub_free(q->subs[i]);
	free(q->subs);
	for (i = 0; i < q->nr_counters; i++) {
		pdh_handle_del(q->counters[i]);
		counter_free(q->counters[i]);
	}
	free(q->counters);
	if (q->perf)
		PerfCloseQueryHandle(q->perf);
	pdh_data_free(q);
	pdh_catalog_free(&q->cat);
	if (q->own_source)
		pdh_log_free(q->source);
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

/* the set named @name of @q's machine, NULL (*@ret_ws: why the catalog could not be read) */
static const struct pdh_cat_set *find_set(struct pdh_query *q, const char *name, ULONG *ret_ws)
{
	long i;

	*ret_ws = 0;
	if (!q->have_cat) {
		*ret_ws = pdh_catalog_load(&q->cat, q->machine, false, NULL);
		if (*ret_ws)
			return NULL;
		q->have_cat = true;
	}
	i = pdh_cat_set_find(&q->cat, name);
	if (i < 0) {
		/* registered since the catalog was read? */
		pdh_catalog_free(&q->cat);
		q->have_cat = false;
		*ret_ws = pdh_catalog_load(&q->cat, q->machine, false, NULL);
		if (*ret_ws)
			return NULL;
		q->have_cat = true;
		i = pdh_cat_set_find(&q->cat, name);
	}
	return i < 0 ? NULL : &q->cat.sets[i];
}

/* a real-time query: the counter set and counter the path names */
static PDH_STATUS catalog_resolve(struct pdh_query *q, struct pdh_counter *c)
{
	ULONG ws;
	const struct pdh_cat_set *set = find_set(q, c->path.object, &ws);
	size_t i;

	/* a machine that cannot be reached or refuses: its own status (pdh.md 9.4) */
	if (!set && (ws == ERROR_BAD_NETPATH || ws == ERROR_ACCESS_DENIED))
		return pdh_from_win32(ws);
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
	struct pdh_query *q, *src;
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
	/* a log holds any computer's counters; real time reads another through a sub-query */
	src = q;
	if (!q->source && !pdh_machine_local(c->path.machine)) {
		st = sub_get(q, c->path.machine, &src);
		if (st)
			goto fail;
	}
	if (c->path.instance) {
		c->pattern = pdh_cpath_instance_pattern(&c->path);
		st = PDH_MEMORY_ALLOCATION_FAILURE;
		if (!c->pattern)
			goto fail;
		c->wildcard = pdh_has_wildcard(c->pattern) || c->path.index == PDH_INDEX_ANY;
	}
	st = q->source ? pdh_replay_resolve(q, c) : catalog_resolve(src, c);
	if (st)
		goto fail;
	c->src = src;
	c->match_all = c->pattern && !strcmp(c->pattern, "*") && c->path.index < 0;
	c->second = (uint8_t)pdh_second_of(c->ctr.type);
	c->tb = (uint8_t)ctrtype_timebase(c->ctr.type);
	c->calc = (uint8_t)ctrtype_calc(c->ctr.type);
	st = PDH_MEMORY_ALLOCATION_FAILURE;
	grown = realloc(q->counters, (q->nr_counters + 1) * sizeof(*grown));
	if (!grown)
		goto fail;
	q->counters = grown;
	if (src != q) {
		grown = realloc(src->counters, (src->nr_counters + 1) * sizeof(*grown));
		if (!grown)
			goto fail;
		src->counters = grown;
	}
	if (pdh_handle_add(c))
		goto fail;
	q->counters[q->nr_counters++] = c;
	q->specs_dirty = true;
	if (src != q) {
		src->counters[src->nr_counters++] = c;
		src->specs_dirty = true;
	}
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
	if (c->src != q)
		sub_remove(c->src, c);
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
		if (q->counters[i]->src == q)
			add_spec(q, buf, &off, &q->counters[i]->guid, q->counters[i]->multi);
	for (i = 0; i < q->nr_whole; i++)
		add_spec(q, buf, &off, &q->whole[i], q->whole_multi[i]);
	{
		WCHAR mbuf[PDH_MACHINE_UNITS];
		const WCHAR *m = pdh_machine_w(q->machine, mbuf);

		st = m == PDH_BAD_MACHINE ? ERROR_BAD_NETPATH : PerfOpenQueryHandle(m, &q->perf);
	}
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

/* the counters of sub-query @s after a collection that failed with @st: no sample */
static void sub_failed(struct pdh_query *s, PDH_STATUS st)
{
	size_t i;

	for (i = 0; i < s->nr_counters; i++) {
		struct pdh_counter *c = s->counters[i];

		c->valid = true;
		c->changed = true;
		c->status = (DWORD)st;
		c->nr = 0;
		c->sel_all = false;
		c->gen = c->old_gen = 0;
		c->cols.block = SIZE_MAX;
	}
}

static PDH_STATUS collect_own(struct pdh_query *q);

/* one machine's collection, run in a thread of its own by collect_all */
struct sub_run {
	struct pdh_query *s;
	PDH_STATUS st;
	pthread_t thread;
	bool threaded; /* (false: the thread could not start; collected in the caller's) */
};

static void *sub_thread(void *arg)
{
	struct sub_run *r = arg;

	r->st = collect_own(r->s);
	return NULL;
}

/*
 * a real-time query with counters of other machines: every other machine in a thread of its
 * own, this machine's in the caller's, all at once, so a machine that cannot be reached
 * costs its timeout once whatever the number of such machines, and never delays the others'
 * samples. Its counters get PDH_CSTATUS_NO_MACHINE, the others are read, and it is tried
 * again at the next collection. A sub-query is touched by its own thread only (its perflib
 * query, catalog and samples are its own; its counters are no other sub-query's), the
 * owner's lock is held throughout.
 */
static PDH_STATUS collect_all(struct pdh_query *q)
{
	PDH_STATUS st = PDH_NO_DATA;
	bool own = q->nr_whole > 0, any;
	struct sub_run *runs;
	size_t i;

	for (i = 0; !own && i < q->nr_counters; i++)
		own = q->counters[i]->src == q;
	runs = calloc(q->nr_subs, sizeof(*runs));
	if (!runs)
		return PDH_MEMORY_ALLOCATION_FAILURE;
	for (i = 0; i < q->nr_subs; i++) {
		runs[i].s = q->subs[i];
		if (q->subs[i]->nr_counters)
			runs[i].threaded =
				!pthread_create(&runs[i].thread, NULL, sub_thread, &runs[i]);
	}
	if (own)
		st = collect_own(q);
	any = !st;
	for (i = 0; i < q->nr_subs; i++) {
		struct sub_run *r = &runs[i];

		if (!r->s->nr_counters)
			continue;
		if (r->threaded)
			pthread_join(r->thread, NULL);
		else
			r->st = collect_own(r->s);
		if (r->st) {
			sub_failed(r->s, r->st == PDH_NO_DATA ? PDH_CSTATUS_NO_OBJECT : r->st);
			if (!own && st == PDH_NO_DATA)
				st = r->st;
			continue;
		}
		if (!any)
			q->stamp = r->s->stamp; /* the time of the first machine read */
		any = true;
	}
	free(runs);
	return any ? 0 : st == PDH_CSTATUS_NO_MACHINE || st == PDH_ACCESS_DENIED ? PDH_NO_DATA : st;
}

PDH_STATUS pdh_collect_locked(struct pdh_query *q)
{
	if (!q->nr_counters && !q->nr_whole)
		return PDH_NO_DATA;
	if (q->source)
		return pdh_replay_step(q);
	return q->nr_subs ? collect_all(q) : collect_own(q);
}

/* collect the counters of @q's own machine (@q a query or a sub-query) */
static PDH_STATUS collect_own(struct pdh_query *q)
{
	PDH_STATUS st;

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
