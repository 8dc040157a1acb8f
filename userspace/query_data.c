// SPDX-License-Identifier: MIT
/*
 * query_data.c - PerfQueryCounterData: read every counter set of a query once (one
 * snapshot per set, shared by its specifications, or the direct writer for a set of plain
 * multiple instances read by one specification), between PERF_COLLECT_START and
 * PERF_COLLECT_END, and write one PERF_COUNTER_HEADER per specification in their order.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "query.h"
#include "remote_client.h"
#include "filetime.h"

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
	h->PerfTime100NSec = (LONGLONG)perflib_filetime_from_unix(real.tv_sec, real.tv_nsec);
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
static PerfCounterDataType put_spec(struct perflib_obuf *o, const struct perflib_query_spec *sp,
				    const struct perflib_query_set *s, ULONG *ret_status)
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

static void put_counter_header(struct perflib_obuf *o, const struct perflib_query_spec *sp,
			       const struct perflib_query_set *s)
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
void perflib_query_collect(struct perflib_query *q, PERF_DATA_HEADER *dh, const WCHAR *machine,
			   size_t machine_bytes)
{
	ULONG status;
	size_t i;
	int err;

	for (i = 0; i < q->nr_sets; i++) {
		struct perflib_query_set *s = &q->sets[i];

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
		struct perflib_query_set *s = &q->sets[i];

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

void perflib_query_collect_end(struct perflib_query *q, const WCHAR *machine, size_t machine_bytes)
{
	ULONG ignored;
	size_t i;

	for (i = 0; i < q->nr_sets; i++) {
		if (q->sets[i].started)
			perflib_notify_providers(q->sets[i].cs->map, PERF_COLLECT_END, machine,
						 machine_bytes, &ignored);
		perflib_cset_put(q->sets[i].cs);
		q->sets[i].cs = NULL;
	}
}

ULONG PerfQueryCounterData(HANDLE hQuery, PPERF_DATA_HEADER pCounterBlock, DWORD cbCounterBlock,
			   LPDWORD pcbCounterBlockActual)
{
	struct perflib_query *q;
	struct perflib_obuf o = {.p = (uint8_t *)pCounterBlock,
				 .cap = pCounterBlock ? cbCounterBlock : 0};
	WCHAR machine[PERFLIB_MACHINE_MAX + 1];
	size_t machine_bytes;
	PERF_DATA_HEADER dh = {0};
	ULONG ret;
	uint8_t *p;
	size_t i;

	if (perflib_remote_handle(hQuery))
		return perflib_remote_data(hQuery, pCounterBlock, cbCounterBlock,
					   pcbCounterBlockActual);
	q = perflib_query_get(hQuery);
	if (!q)
		return ERROR_INVALID_HANDLE;
	if (!pcbCounterBlockActual || (!pCounterBlock && cbCounterBlock)) {
		perflib_query_put(q);
		return ERROR_INVALID_PARAMETER;
	}
	pthread_mutex_lock(&q->lock);
	if (q->dirty && perflib_query_index_sets(q)) {
		pthread_mutex_unlock(&q->lock);
		perflib_query_put(q);
		return ERROR_OUTOFMEMORY;
	}
	machine_bytes = perflib_machine_name(machine, PERFLIB_MACHINE_MAX + 1);
	perflib_query_collect(q, &dh, machine, machine_bytes);
	perflib_obuf_put(&o, sizeof(dh));
	for (i = 0; i < q->nr_specs; i++)
		put_counter_header(&o, &q->specs[i], &q->sets[q->specs[i].set]);
	perflib_query_collect_end(q, machine, machine_bytes);
	dh.dwTotalSize = (ULONG)o.len;
	dh.dwNumCounters = (ULONG)q->nr_specs;
	p = perflib_obuf_at(&o, 0, sizeof(dh));
	if (p)
		memcpy(p, &dh, sizeof(dh));
	ret = perflib_obuf_result(&o, pcbCounterBlockActual);
	pthread_mutex_unlock(&q->lock);
	perflib_query_put(q);
	return ret;
}
