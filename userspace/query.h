/* SPDX-License-Identifier: MIT */
/*
 * query.h - what the query files share: query.c (handles and their specifications,
 * PerfOpenQueryHandle ... PerfQueryCounterInfo), query_data.c (PerfQueryCounterData) and
 * columns.c (perflib_query_columns).
 */
#ifndef PERFLIB_QUERY_H
#define PERFLIB_QUERY_H

#include "consumer.h"

struct perflib_query_spec {
	GUID guid;		      /* counter set */
	uint32_t counter_id;	      /* or PERF_WILDCARD_COUNTER */
	uint32_t instance_id;	      /* or PERFLIB_NO_ID: any */
	bool has_name;		      /* the identifier carried a name (Size > 40) */
	uint32_t name_len;	      /* units without NUL */
	WCHAR *name;		      /* NUL-terminated copy, or NULL */
	uint32_t set;		      /* index into query->sets */
	struct perflib_filter filter; /* instance id and name pattern, for reading */
};

struct perflib_query_set {
	GUID guid;		  /* counter set */
	struct perflib_cset *cs;  /* opening for the current call, NULL when status != 0 */
	ULONG status;		  /* Win32 status of the whole set for the current call */
	bool started;		  /* PERF_COLLECT_START sent */
	bool direct;		  /* read while its one specification is written (no snapshot) */
	uint32_t nr_specs;	  /* specifications reading it */
	struct perflib_snap snap; /* its instances; buffers kept between calls */
	dev_t keys_dev;		  /* the opening the keys of the last column read came from */
	ino_t keys_ino;		  /* (perflib_query_columns, columns.c) */
};

struct perflib_query {
	uint64_t handle;      /* QUERY_TAG | sequence */
	unsigned int refs;    /* users (queries_lock) */
	bool closed;	      /* removed from the list */
	pthread_mutex_t lock; /* serialises the operations on the query */
	struct perflib_query_spec *specs;
	size_t nr_specs, cap_specs;
	struct perflib_query_set *sets; /* distinct counter sets of specs */
	size_t nr_sets;
	bool dirty; /* specs changed since sets were indexed */
	struct perflib_query *next;
};

/* the query of handle @h with a reference, or NULL for a stale or forged handle */
struct perflib_query *perflib_query_get(HANDLE h);
void perflib_query_put(struct perflib_query *q);
/* rebuild q->sets after the specifications changed (q->dirty); -ENOMEM */
int perflib_query_index_sets(struct perflib_query *q);

/*
 * perflib_query_collect - open every counter set of @q (locked), notify its providers
 * (PERF_COLLECT_START), collect by-reference values and read the sets that are not read
 * direct (s->direct: a plain multiple-instance set of one specification, read while that
 * specification is written); the sample's times into @dh. perflib_query_collect_end
 * follows once every specification is written: PERF_COLLECT_END, the openings released.
 * Used by PerfQueryCounterData and perflib_query_columns (columns.c).
 */
void perflib_query_collect(struct perflib_query *q, PERF_DATA_HEADER *dh, const WCHAR *machine,
			   size_t machine_bytes);
void perflib_query_collect_end(struct perflib_query *q, const WCHAR *machine, size_t machine_bytes);

#endif /* PERFLIB_QUERY_H */
