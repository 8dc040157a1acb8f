// SPDX-License-Identifier: MIT
/*
 * query.c - query handles: PerfOpenQueryHandle, PerfCloseQueryHandle, PerfAddCounters,
 * PerfDeleteCounters, PerfQueryCounterInfo, PerfQueryCounterData.
 *
 * A handle is a number (never a pointer, never reused in the process) looked up in a
 * process-local list, so a stale or forged handle is refused, not followed. A query is a
 * list of specifications; a specification's Index is its position in the list, and
 * PerfQueryCounterData writes one PERF_COUNTER_HEADER per specification in that order.
 * Each call reads every counter set of the query once (one snapshot per set, shared by its
 * specifications), between PERF_COLLECT_START and PERF_COLLECT_END.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consumer.h"

#define QUERY_TAG 0x5051000000000000ull		 /* "PQ": handles are tag | sequence number */
#define FILETIME_UNIX_EPOCH 116444736000000000ll /* 1970-01-01 in 100 ns since 1601 */

struct spec {
	GUID guid;		      /* counter set */
	uint32_t counter_id;	      /* or PERF_WILDCARD_COUNTER */
	uint32_t instance_id;	      /* or 0xFFFFFFFF */
	bool has_name;		      /* the identifier carried a name (Size > 40) */
	uint32_t name_len;	      /* units without NUL */
	WCHAR *name;		      /* NUL-terminated copy, or NULL */
	uint32_t set;		      /* index into query->sets */
	struct perflib_filter filter; /* instance id and name pattern, for reading */
};

struct qset {
	GUID guid;		  /* counter set */
	struct perflib_cset *cs;  /* opening for the current call, NULL when status != 0 */
	ULONG status;		  /* Win32 status of the whole set for the current call */
	bool started;		  /* PERF_COLLECT_START sent */
	bool direct;		  /* read while its one specification is written (no snapshot) */
	uint32_t nr_specs;	  /* specifications reading it */
	struct perflib_snap snap; /* its instances; buffers kept between calls */
};

struct query {
	uint64_t handle;      /* QUERY_TAG | sequence */
	unsigned int refs;    /* users (queries_lock) */
	bool closed;	      /* removed from the list */
	pthread_mutex_t lock; /* serialises the operations on the query */
	struct spec *specs;
	size_t nr_specs, cap_specs;
	struct qset *sets; /* distinct counter sets of specs */
	size_t nr_sets;
	bool dirty; /* specs changed since sets were indexed */
	struct query *next;
};

static pthread_mutex_t queries_lock = PTHREAD_MUTEX_INITIALIZER;
static struct query *queries;
static uint64_t next_handle = 1;

static struct query *query_get(HANDLE h)
{
	uint64_t id = (uint64_t)(uintptr_t)h;
	struct query *q;

	if (!h || (id & 0xFFFF000000000000ull) != QUERY_TAG)
		return NULL;
	pthread_mutex_lock(&queries_lock);
	for (q = queries; q && q->handle != id; q = q->next)
		;
	if (q)
		q->refs++;
	pthread_mutex_unlock(&queries_lock);
	return q;
}

static void query_free(struct query *q)
{
	size_t i;

	for (i = 0; i < q->nr_specs; i++)
		free(q->specs[i].name);
	for (i = 0; i < q->nr_sets; i++)
		perflib_snap_free(&q->sets[i].snap);
	free(q->specs);
	free(q->sets);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

static void query_put(struct query *q)
{
	bool last;

	pthread_mutex_lock(&queries_lock);
	last = --q->refs == 0 && q->closed;
	pthread_mutex_unlock(&queries_lock);
	if (last)
		query_free(q);
}

ULONG PerfOpenQueryHandle(LPCWSTR szMachine, HANDLE *phQuery)
{
	struct query *q;
	int err;

	if (!phQuery)
		return ERROR_INVALID_PARAMETER;
	err = perflib_machine_check(szMachine);
	if (err)
		return perflib_win32_error(err);
	q = calloc(1, sizeof(*q));
	if (!q)
		return ERROR_OUTOFMEMORY;
	pthread_mutex_init(&q->lock, NULL);
	pthread_mutex_lock(&queries_lock);
	q->handle = QUERY_TAG | next_handle++;
	q->next = queries;
	queries = q;
	pthread_mutex_unlock(&queries_lock);
	*phQuery = (HANDLE)(uintptr_t)q->handle;
	return ERROR_SUCCESS;
}

/* ---- notifications -------------------------------------------------------------------------- */

/*
 * PERF_ADD_COUNTER / PERF_REMOVE_COUNTER for one specification. The buffer is spec 8.6
 * without a WNODE_HEADER (perflib_cb_identity): PERF_COUNTER_IDENTITY, the machine name,
 * then the instance name (NameOffset 0 when the specification has none).
 */
static int notify_spec(const struct perflib_cset *cs, ULONG request, const struct spec *sp,
		       ULONG *ret_status)
{
	WCHAR machine[PERFLIB_MACHINE_MAX + 1];
	size_t len;
	void *buf;
	int err;

	*ret_status = ERROR_SUCCESS;
	perflib_machine_name(machine, PERFLIB_MACHINE_MAX + 1);
	err = perflib_cb_identity(&sp->guid, sp->counter_id, sp->instance_id, machine,
				  sp->has_name ? sp->name : NULL, &buf, &len);
	if (!err) {
		err = perflib_notify_providers(cs->map, request, buf, len, ret_status);
		free(buf);
	}
	if (err)
		pr_debug("counter notification %u failed: %s\n", request, strerror(-err));
	return err;
}

/* ---- identifier blocks ---------------------------------------------------------------------- */

/*
 * Walk the packed PERF_COUNTER_IDENTIFIER blocks: each Size >= 40, a multiple of 8, inside
 * cbCounters, and nothing left over. Anything else rejects the whole call, before any block
 * is acted on.
 */
static bool blocks_valid(const uint8_t *p, DWORD cb)
{
	size_t off = 0;
	ULONG size;

	if (!p || cb < sizeof(PERF_COUNTER_IDENTIFIER))
		return false;
	while (off < cb) {
		if (cb - off < sizeof(PERF_COUNTER_IDENTIFIER))
			return false;
		memcpy(&size, p + off + offsetof(PERF_COUNTER_IDENTIFIER, Size), sizeof(size));
		if (size < sizeof(PERF_COUNTER_IDENTIFIER) || size % 8 || size > cb - off)
			return false;
		off += size;
	}
	return true;
}

/* parse one block into @sp (name not copied: points into the block); a Status on error */
static ULONG block_parse(const uint8_t *blk, struct spec *sp, const WCHAR **ret_name)
{
	PERF_COUNTER_IDENTIFIER id;
	size_t units, len;
	const uint8_t *name = blk + sizeof(id);
	WCHAR c;

	memcpy(&id, blk, sizeof(id));
	memset(sp, 0, sizeof(*sp));
	sp->guid = id.CounterSetGuid;
	sp->counter_id = id.CounterId;
	sp->instance_id = id.InstanceId;
	*ret_name = NULL;
	if (id.Size == sizeof(id))
		return ERROR_SUCCESS;
	/* the name must end inside the block (the caller's buffer may be unaligned) */
	units = (id.Size - sizeof(id)) / 2;
	for (len = 0; len < units; len++) {
		memcpy(&c, name + 2 * len, 2);
		if (!c)
			break;
	}
	if (len == units || len > PERF_MAX_INSTANCE_NAME)
		return ERROR_INVALID_PARAMETER;
	sp->has_name = true;
	sp->name_len = (uint32_t)len;
	*ret_name = (const WCHAR *)name;
	return ERROR_SUCCESS;
}

static bool name_all_stars(const WCHAR *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] != u'*')
			return false;
	}
	return len > 0;
}

/* same specification? A missing name and an empty one are the same (single-instance sets) */
static bool spec_same(const struct spec *a, const struct spec *b)
{
	return perflib_guid_equal(&a->guid, &b->guid) && a->counter_id == b->counter_id &&
	       a->instance_id == b->instance_id && a->name_len == b->name_len &&
	       (!a->name_len || !memcmp(a->name, b->name, a->name_len * 2));
}

static void block_status(uint8_t *blk, ULONG status)
{
	memcpy(blk + offsetof(PERF_COUNTER_IDENTIFIER, Status), &status, sizeof(status));
}

/* rebuild the list of distinct counter sets after the specifications changed */
static int query_index_sets(struct query *q)
{
	struct qset *sets;
	size_t i, j, k, nr = 0;

	sets = calloc(q->nr_specs ? q->nr_specs : 1, sizeof(*sets));
	if (!sets)
		return -ENOMEM;
	for (i = 0; i < q->nr_specs; i++) {
		for (j = 0; j < nr && !perflib_guid_equal(&sets[j].guid, &q->specs[i].guid); j++)
			;
		if (j == nr) {
			sets[nr].guid = q->specs[i].guid;
			/* keep the snapshot buffers of a set that stays in the query */
			for (k = 0; k < q->nr_sets; k++) {
				if (perflib_guid_equal(&q->sets[k].guid, &sets[nr].guid)) {
					sets[nr].snap = q->sets[k].snap;
					memset(&q->sets[k].snap, 0, sizeof(q->sets[k].snap));
					break;
				}
			}
			nr++;
		}
		q->specs[i].set = (uint32_t)j;
		sets[j].nr_specs++;
	}
	for (i = 0; i < q->nr_sets; i++)
		perflib_snap_free(&q->sets[i].snap);
	free(q->sets);
	q->sets = sets;
	q->nr_sets = nr;
	q->dirty = false;
	return 0;
}

/* add one parsed specification to @q: its Status */
static ULONG spec_add(struct query *q, struct spec *sp, const WCHAR *name)
{
	struct perflib_cset *cs;
	ULONG status = ERROR_SUCCESS;
	size_t i;
	int err;

	err = perflib_cset_get(&sp->guid, &cs);
	if (err)
		return perflib_win32_error(err); /* unknown GUID: ERROR_WMI_GUID_NOT_FOUND */
	if (sp->has_name) {
		/* an aligned copy: the caller's block may be anywhere */
		sp->name = malloc(((size_t)sp->name_len + 1) * 2);
		if (!sp->name) {
			status = ERROR_OUTOFMEMORY;
			goto out;
		}
		memcpy(sp->name, name, (size_t)sp->name_len * 2);
		sp->name[sp->name_len] = 0;
	}
	sp->filter.instance_id = sp->instance_id;
	sp->filter.name = sp->name;
	sp->filter.match_all = sp->name && name_all_stars(sp->name, sp->name_len);
	if (sp->counter_id != PERF_WILDCARD_COUNTER && perflib_cset_counter(cs, sp->counter_id) < 0)
		status = ERROR_NOT_FOUND;
	else if (perflib_cset_multi(cs) && !sp->has_name)
		status =
			ERROR_INVALID_PARAMETER; /* multiple instances: a name filter is required */
	else if (!perflib_cset_multi(cs) && sp->name_len &&
		 !(sp->name_len == 1 && sp->filter.match_all))
		status = ERROR_INVALID_PARAMETER; /* single instance: no name, "" or "*" only */
	for (i = 0; !status && i < q->nr_specs; i++) {
		if (spec_same(&q->specs[i], sp))
			status = ERROR_ALREADY_EXISTS;
	}
	if (!status && q->nr_specs == q->cap_specs) {
		size_t cap = q->cap_specs ? q->cap_specs * 2 : 8;
		void *p = realloc(q->specs, cap * sizeof(*q->specs));

		if (p) {
			q->specs = p;
			q->cap_specs = cap;
		} else {
			status = ERROR_OUTOFMEMORY;
		}
	}
	if (status)
		goto out;
	/* the provider may refuse: its code becomes the Status and the spec is not added */
	notify_spec(cs, PERF_ADD_COUNTER, sp, &status);
	if (status)
		goto out;
	q->specs[q->nr_specs++] = *sp;
	q->dirty = true;
	sp->name = NULL; /* owned by the query now */
out:
	free(sp->name);
	sp->name = NULL;
	perflib_cset_put(cs);
	return status;
}

/*
 * The frame of PerfAddCounters and PerfDeleteCounters: validate every block first (a bad
 * one fails the whole call and touches nothing), then apply @op to each parsed
 * specification under the query lock and write its Status.
 */
static ULONG blocks_apply(HANDLE hQuery, PPERF_COUNTER_IDENTIFIER pCounters, DWORD cbCounters,
			  ULONG (*op)(struct query *q, struct spec *sp, const WCHAR *name))
{
	struct query *q = query_get(hQuery);
	uint8_t *p = (uint8_t *)pCounters;
	const WCHAR *name;
	struct spec sp;
	ULONG status, size;
	size_t off;

	if (!q)
		return ERROR_INVALID_HANDLE;
	if (!blocks_valid(p, cbCounters)) {
		query_put(q);
		return ERROR_INVALID_PARAMETER;
	}
	pthread_mutex_lock(&q->lock);
	for (off = 0; off < cbCounters; off += size) {
		memcpy(&size, p + off + offsetof(PERF_COUNTER_IDENTIFIER, Size), sizeof(size));
		status = block_parse(p + off, &sp, &name);
		if (!status)
			status = op(q, &sp, name);
		block_status(p + off, status);
	}
	pthread_mutex_unlock(&q->lock);
	query_put(q);
	return ERROR_SUCCESS;
}

ULONG PerfAddCounters(HANDLE hQuery, PPERF_COUNTER_IDENTIFIER pCounters, DWORD cbCounters)
{
	return blocks_apply(hQuery, pCounters, cbCounters, spec_add);
}

/* remove specification @i of @q; the provider hears of it, its answer does not matter */
static void spec_remove(struct query *q, size_t i)
{
	struct perflib_cset *cs;
	ULONG ignored;

	if (!perflib_cset_get(&q->specs[i].guid, &cs)) {
		notify_spec(cs, PERF_REMOVE_COUNTER, &q->specs[i], &ignored);
		perflib_cset_put(cs);
	}
	free(q->specs[i].name);
	memmove(&q->specs[i], &q->specs[i + 1], (q->nr_specs - i - 1) * sizeof(*q->specs));
	q->nr_specs--;
	q->dirty = true;
}

/* PerfDeleteCounters' operation: remove the same specification, or ERROR_NOT_FOUND */
static ULONG spec_delete(struct query *q, struct spec *sp, const WCHAR *name)
{
	size_t i;

	/* compared with memcmp only: the caller's name may be unaligned */
	sp->name = (WCHAR *)name;
	for (i = 0; i < q->nr_specs && !spec_same(&q->specs[i], sp); i++)
		;
	if (i == q->nr_specs)
		return ERROR_NOT_FOUND;
	spec_remove(q, i);
	return ERROR_SUCCESS;
}

ULONG PerfDeleteCounters(HANDLE hQuery, PPERF_COUNTER_IDENTIFIER pCounters, DWORD cbCounters)
{
	return blocks_apply(hQuery, pCounters, cbCounters, spec_delete);
}

ULONG PerfCloseQueryHandle(HANDLE hQuery)
{
	struct query *q = query_get(hQuery), **pp;
	struct perflib_cset *cs;
	ULONG ignored;
	size_t i;

	if (!q)
		return ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&queries_lock);
	for (pp = &queries; *pp && *pp != q; pp = &(*pp)->next)
		;
	if (*pp) {
		*pp = q->next;
		q->closed = true;
	}
	pthread_mutex_unlock(&queries_lock);
	/* providers hear that the counters are gone, as for PerfDeleteCounters */
	pthread_mutex_lock(&q->lock);
	for (i = 0; i < q->nr_specs; i++) {
		if (!perflib_cset_get(&q->specs[i].guid, &cs)) {
			notify_spec(cs, PERF_REMOVE_COUNTER, &q->specs[i], &ignored);
			perflib_cset_put(cs);
		}
	}
	pthread_mutex_unlock(&q->lock);
	query_put(q);
	return ERROR_SUCCESS;
}

/* ---- PerfQueryCounterInfo ------------------------------------------------------------------- */

static size_t spec_block_size(const struct spec *sp)
{
	return sp->has_name ? perflib_round8(sizeof(PERF_COUNTER_IDENTIFIER) +
					     ((size_t)sp->name_len + 1) * 2)
			    : sizeof(PERF_COUNTER_IDENTIFIER);
}

ULONG PerfQueryCounterInfo(HANDLE hQuery, PPERF_COUNTER_IDENTIFIER pCounters, DWORD cbCounters,
			   LPDWORD pcbCountersActual)
{
	struct query *q = query_get(hQuery);
	struct perflib_obuf o = {.p = (uint8_t *)pCounters, .cap = pCounters ? cbCounters : 0};
	ULONG ret;
	size_t i;

	if (!q)
		return ERROR_INVALID_HANDLE;
	if (!pcbCountersActual || (!pCounters && cbCounters)) {
		query_put(q);
		return ERROR_INVALID_PARAMETER;
	}
	pthread_mutex_lock(&q->lock);
	for (i = 0; i < q->nr_specs; i++) {
		const struct spec *sp = &q->specs[i];
		size_t size = spec_block_size(sp);
		PERF_COUNTER_IDENTIFIER id = {
			.CounterSetGuid = sp->guid,
			.Status = ERROR_SUCCESS,
			.Size = (ULONG)size,
			.CounterId = sp->counter_id,
			.InstanceId = sp->instance_id,
			.Index = (ULONG)i,
		};
		uint8_t *b = perflib_obuf_put(&o, size);

		if (!b)
			continue;
		memcpy(b, &id, sizeof(id));
		memset(b + sizeof(id), 0, size - sizeof(id));
		if (sp->has_name)
			memcpy(b + sizeof(id), sp->name, (size_t)sp->name_len * 2);
	}
	ret = perflib_obuf_result(&o, pcbCountersActual);
	pthread_mutex_unlock(&q->lock);
	query_put(q);
	return ret;
}

/* ---- PerfQueryCounterData ------------------------------------------------------------------- */

static void data_header_times(PERF_DATA_HEADER *h)
{
	struct timespec mono, real;
	struct tm tm;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	/* PerfTimeStamp ticks at PerfFreq: the monotonic clock in nanoseconds */
	h->PerfTimeStamp = (LONGLONG)mono.tv_sec * 1000000000ll + mono.tv_nsec;
	h->PerfFreq = 1000000000ll;
	/* FILETIME (UTC, 100 ns since 1601) and SYSTEMTIME of the same instant */
	h->PerfTime100NSec =
		(LONGLONG)real.tv_sec * 10000000ll + real.tv_nsec / 100 + FILETIME_UNIX_EPOCH;
	gmtime_r(&real.tv_sec, &tm);
	h->SystemTime.wYear = (WORD)(tm.tm_year + 1900);
	h->SystemTime.wMonth = (WORD)(tm.tm_mon + 1);
	h->SystemTime.wDayOfWeek = (WORD)tm.tm_wday;
	h->SystemTime.wDay = (WORD)tm.tm_mday;
	h->SystemTime.wHour = (WORD)tm.tm_hour;
	h->SystemTime.wMinute = (WORD)tm.tm_min;
	h->SystemTime.wSecond = (WORD)tm.tm_sec;
	h->SystemTime.wMilliseconds = (WORD)(real.tv_nsec / 1000000);
}

/* PERF_MULTI_COUNTERS: the ids in template order; dwSize rounded up to a multiple of 8 */
static void put_counter_ids(struct perflib_obuf *o, const struct perflib_cset *cs)
{
	size_t size = perflib_round8(sizeof(PERF_MULTI_COUNTERS) + 4 * (size_t)cs->nr_counters);
	PERF_MULTI_COUNTERS mc = {.dwSize = (ULONG)size, .dwCounters = cs->nr_counters};
	uint8_t *p = perflib_obuf_put(o, size);
	uint32_t k;

	if (!p)
		return;
	memcpy(p, &mc, sizeof(mc));
	for (k = 0; k < cs->nr_counters; k++)
		memcpy(p + sizeof(mc) + 4 * k, &cs->map->counters[k].id, 4);
	memset(p + sizeof(mc) + 4 * cs->nr_counters, 0, size - sizeof(mc) - 4 * cs->nr_counters);
}

/* the payload of one specification; its type, or PERF_ERROR_RETURN with *ret_status */
static PerfCounterDataType put_spec(struct perflib_obuf *o, const struct spec *sp,
				    const struct qset *s, ULONG *ret_status)
{
	const struct perflib_cset *cs = s->cs;
	const struct perflib_snap *snap = &s->snap;
	const struct perflib_snap_inst *in;
	PERF_MULTI_INSTANCES mi = {0};
	const uint64_t *vals;
	const uint8_t *nodata;
	size_t mi_off, i;
	uint8_t *p;
	int pos = -1, err;

	if (sp->counter_id != PERF_WILDCARD_COUNTER) {
		pos = perflib_cset_counter(cs, sp->counter_id);
		if (pos < 0) {
			*ret_status = ERROR_NOT_FOUND; /* re-registered without this counter */
			return PERF_ERROR_RETURN;
		}
	}
	if (!perflib_cset_multi(cs)) {
		/* the one instance (or the aggregate); filters do not apply to it */
		if (!snap->nr) {
			*ret_status = ERROR_WMI_INSTANCE_NOT_FOUND;
			return PERF_ERROR_RETURN;
		}
		in = &snap->inst[0];
		vals = snap->vals + (size_t)in->row * snap->nr_counters;
		nodata = snap->nodata + (size_t)in->row * snap->nr_counters;
		if (pos >= 0) {
			if (nodata[pos]) {
				*ret_status = ERROR_NO_DATA; /* by-reference address NULL */
				return PERF_ERROR_RETURN;
			}
			perflib_obuf_values(o, cs, vals, nodata, pos);
			return PERF_SINGLE_COUNTER;
		}
		put_counter_ids(o, cs);
		perflib_obuf_values(o, cs, vals, nodata, -1);
		return PERF_MULTIPLE_COUNTERS;
	}
	if (pos < 0)
		put_counter_ids(o, cs);
	mi_off = o->len;
	perflib_obuf_put(o, sizeof(mi));
	if (s->direct) {
		/* the only reader of its set: from the slots into the buffer */
		err = perflib_obuf_direct(cs, &sp->filter, pos, o, &mi.dwInstances);
		if (err) {
			*ret_status = perflib_win32_error(err);
			return PERF_ERROR_RETURN;
		}
	}
	for (i = 0; !s->direct && i < snap->nr; i++) {
		in = &snap->inst[i];
		if (!perflib_filter_match(&sp->filter, in->id, perflib_snap_name(snap, in),
					  in->name_len))
			continue;
		perflib_obuf_snap_instance(o, snap, in);
		perflib_obuf_values(o, cs, snap->vals + (size_t)in->row * snap->nr_counters,
				    snap->nodata + (size_t)in->row * snap->nr_counters, pos);
		mi.dwInstances++;
	}
	mi.dwTotalSize = (ULONG)(o->len - mi_off);
	p = perflib_obuf_at(o, mi_off, sizeof(mi));
	if (p)
		memcpy(p, &mi, sizeof(mi));
	return pos >= 0 ? PERF_MULTIPLE_INSTANCES : PERF_COUNTERSET;
}

static void put_counter_header(struct perflib_obuf *o, const struct spec *sp, const struct qset *s)
{
	size_t start = o->len;
	PERF_COUNTER_HEADER h = {.dwStatus = s->status, .dwType = PERF_ERROR_RETURN};
	uint8_t *p;

	perflib_obuf_put(o, sizeof(h));
	if (!h.dwStatus)
		h.dwType = put_spec(o, sp, s, &h.dwStatus);
	if (h.dwType == PERF_ERROR_RETURN)
		o->len = start + sizeof(h); /* an error has no payload */
	h.dwSize = (ULONG)(o->len - start);
	p = perflib_obuf_at(o, start, sizeof(h));
	if (p)
		memcpy(p, &h, sizeof(h));
}

/*
 * Open, notify and read every counter set of the query. A set of the plain multiple-instance
 * type read by a single specification is read later, while that specification is written.
 */
static void query_collect(struct query *q, PERF_DATA_HEADER *dh, const WCHAR *machine,
			  size_t machine_bytes)
{
	ULONG status;
	size_t i;
	int err;

	for (i = 0; i < q->nr_sets; i++) {
		struct qset *s = &q->sets[i];

		s->cs = NULL;
		s->started = false;
		s->direct = false;
		err = perflib_cset_get(&s->guid, &s->cs);
		if (err) {
			s->status = perflib_win32_error(err);
			continue;
		}
		/* providers may flush and lock; a refusal fails every spec of the set */
		status = ERROR_SUCCESS;
		err = perflib_notify_providers(s->cs->map, PERF_COLLECT_START, machine,
					       machine_bytes, &status);
		if (err)
			pr_debug("PERF_COLLECT_START notification failed: %s\n", strerror(-err));
		s->started = true;
		s->status = status;
		if (!status && s->cs->byref) {
			/* providers write their dereferenced values into the ref area */
			err = perflib_collect_refs(s->cs->map);
			if (err)
				pr_debug("by-reference collection incomplete: %s\n",
					 strerror(-err));
		}
	}
	data_header_times(dh);
	for (i = 0; i < q->nr_sets; i++) {
		struct qset *s = &q->sets[i];

		if (s->status)
			continue;
		s->direct =
			s->nr_specs == 1 && s->cs->instance_type == PERF_COUNTERSET_MULTI_INSTANCES;
		if (s->direct)
			continue;
		err = perflib_snap_read(s->cs, true, &s->snap);
		if (!err)
			err = perflib_snap_aggregate(s->cs, &s->snap, true);
		if (err)
			s->status = perflib_win32_error(err);
	}
}

ULONG PerfQueryCounterData(HANDLE hQuery, PPERF_DATA_HEADER pCounterBlock, DWORD cbCounterBlock,
			   LPDWORD pcbCounterBlockActual)
{
	struct query *q = query_get(hQuery);
	struct perflib_obuf o = {.p = (uint8_t *)pCounterBlock,
				 .cap = pCounterBlock ? cbCounterBlock : 0};
	WCHAR machine[PERFLIB_MACHINE_MAX + 1];
	size_t machine_bytes;
	PERF_DATA_HEADER dh = {0};
	ULONG ret, ignored;
	uint8_t *p;
	size_t i;

	if (!q)
		return ERROR_INVALID_HANDLE;
	if (!pcbCounterBlockActual || (!pCounterBlock && cbCounterBlock)) {
		query_put(q);
		return ERROR_INVALID_PARAMETER;
	}
	pthread_mutex_lock(&q->lock);
	if (q->dirty && query_index_sets(q)) {
		pthread_mutex_unlock(&q->lock);
		query_put(q);
		return ERROR_OUTOFMEMORY;
	}
	machine_bytes = perflib_machine_name(machine, PERFLIB_MACHINE_MAX + 1);
	query_collect(q, &dh, machine, machine_bytes);
	perflib_obuf_put(&o, sizeof(dh));
	for (i = 0; i < q->nr_specs; i++)
		put_counter_header(&o, &q->specs[i], &q->sets[q->specs[i].set]);
	/* every read is done, the direct ones included: providers may unlock */
	for (i = 0; i < q->nr_sets; i++) {
		if (q->sets[i].started)
			perflib_notify_providers(q->sets[i].cs->map, PERF_COLLECT_END, machine,
						 machine_bytes, &ignored);
		perflib_cset_put(q->sets[i].cs);
		q->sets[i].cs = NULL;
	}
	dh.dwTotalSize = (ULONG)o.len;
	dh.dwNumCounters = (ULONG)q->nr_specs;
	p = perflib_obuf_at(&o, 0, sizeof(dh));
	if (p)
		memcpy(p, &dh, sizeof(dh));
	ret = perflib_obuf_result(&o, pcbCounterBlockActual);
	pthread_mutex_unlock(&q->lock);
	query_put(q);
	return ret;
}
