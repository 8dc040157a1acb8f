// SPDX-License-Identifier: MIT
/*
 * query.c - query handles: PerfOpenQueryHandle, PerfCloseQueryHandle, PerfAddCounters,
 * PerfDeleteCounters, PerfQueryCounterInfo (PerfQueryCounterData: query_data.c).
 *
 * A handle is a number (never a pointer, never reused in the process) looked up in a
 * process-local list, so a stale or forged handle is refused, not followed. A query is a
 * list of specifications; a specification's Index is its position in the list, and
 * PerfQueryCounterData writes one PERF_COUNTER_HEADER per specification in that order.
 * PerfQueryCounterData (query_data.c) reads every counter set of the query once (one
 * snapshot per set), between PERF_COLLECT_START and PERF_COLLECT_END.
 */
#include <stdlib.h>
#include <string.h>

#include "query.h"
#include "remote_client.h"

#define QUERY_TAG 0x5051000000000000ull /* "PQ": handles are tag | sequence number */

static pthread_mutex_t queries_lock = PTHREAD_MUTEX_INITIALIZER;
static struct perflib_query *queries;
static uint64_t next_handle = 1;

struct perflib_query *perflib_query_get(HANDLE h)
{
	uint64_t id = (uint64_t)(uintptr_t)h;
	struct perflib_query *q;

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

static void query_free(struct perflib_query *q)
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

void perflib_query_put(struct perflib_query *q)
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
	char host[PERFLIB_HOST_MAX + 1];
	struct perflib_query *q;
	int err;

	if (!phQuery)
		return ERROR_INVALID_PARAMETER;
	err = perflib_machine_check(szMachine, host);
	if (err == 1)
		return perflib_remote_open(host, phQuery);
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
static int notify_spec(const struct perflib_cset *cs, ULONG request,
		       const struct perflib_query_spec *sp, ULONG *ret_status)
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
static ULONG block_parse(const uint8_t *blk, struct perflib_query_spec *sp, const WCHAR **ret_name)
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
static bool spec_same(const struct perflib_query_spec *a, const struct perflib_query_spec *b)
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
int perflib_query_index_sets(struct perflib_query *q)
{
	struct perflib_query_set *sets;
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
static ULONG spec_add(struct perflib_query *q, struct perflib_query_spec *sp, const WCHAR *name)
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
			  ULONG (*op)(struct perflib_query *q, struct perflib_query_spec *sp,
				      const WCHAR *name))
{
	struct perflib_query *q;
	uint8_t *p = (uint8_t *)pCounters;
	const WCHAR *name;
	struct perflib_query_spec sp;
	ULONG status, size;
	size_t off;

	/* a remote query's blocks are checked here too: the server sees only good ones */
	if (perflib_remote_handle(hQuery))
		return blocks_valid(p, cbCounters)
			       ? perflib_remote_counters(hQuery, pCounters, cbCounters,
							 op == spec_add)
			       : ERROR_INVALID_PARAMETER;
	q = perflib_query_get(hQuery);
	if (!q)
		return ERROR_INVALID_HANDLE;
	if (!blocks_valid(p, cbCounters)) {
		perflib_query_put(q);
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
	perflib_query_put(q);
	return ERROR_SUCCESS;
}

ULONG PerfAddCounters(HANDLE hQuery, PPERF_COUNTER_IDENTIFIER pCounters, DWORD cbCounters)
{
	return blocks_apply(hQuery, pCounters, cbCounters, spec_add);
}

/* remove specification @i of @q; the provider hears of it, its answer does not matter */
static void spec_remove(struct perflib_query *q, size_t i)
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
static ULONG spec_delete(struct perflib_query *q, struct perflib_query_spec *sp, const WCHAR *name)
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
	struct perflib_query *q, **pp;
	struct perflib_cset *cs;
	ULONG ignored;
	size_t i;

	if (perflib_remote_handle(hQuery))
		return perflib_remote_close(hQuery);
	q = perflib_query_get(hQuery);
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
	perflib_query_put(q);
	return ERROR_SUCCESS;
}

/* ---- PerfQueryCounterInfo ------------------------------------------------------------------- */

static size_t spec_block_size(const struct perflib_query_spec *sp)
{
	return sp->has_name ? perflib_round8(sizeof(PERF_COUNTER_IDENTIFIER) +
					     ((size_t)sp->name_len + 1) * 2)
			    : sizeof(PERF_COUNTER_IDENTIFIER);
}

ULONG PerfQueryCounterInfo(HANDLE hQuery, PPERF_COUNTER_IDENTIFIER pCounters, DWORD cbCounters,
			   LPDWORD pcbCountersActual)
{
	struct perflib_query *q;
	struct perflib_obuf o = {.p = (uint8_t *)pCounters, .cap = pCounters ? cbCounters : 0};
	ULONG ret;
	size_t i;

	if (perflib_remote_handle(hQuery))
		return perflib_remote_info(hQuery, pCounters, cbCounters, pcbCountersActual);
	q = perflib_query_get(hQuery);
	if (!q)
		return ERROR_INVALID_HANDLE;
	if (!pcbCountersActual || (!pCounters && cbCounters)) {
		perflib_query_put(q);
		return ERROR_INVALID_PARAMETER;
	}
	pthread_mutex_lock(&q->lock);
	for (i = 0; i < q->nr_specs; i++) {
		const struct perflib_query_spec *sp = &q->specs[i];
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
	perflib_query_put(q);
	return ret;
}
