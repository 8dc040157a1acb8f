/* SPDX-License-Identifier: MIT */
/*
 * pdh_internal.h - what the files of libpdh share: the query, counter and log objects behind
 * the opaque handles, the handle table, string conversion for the W/A variants, the buffer
 * protocols of pdh.md 4.3 and the catalog loader. Everything is UTF-8 inside; W functions
 * convert at the boundary.
 */
#ifndef PDH_INTERNAL_H
#define PDH_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "pdh.h"
#include "cook.h"
#include "tp_buf.h"
#include "tp_catalog.h"
#include "tp_out.h"
#include "tp_path.h"

#define PDH_HIDDEN __attribute__((visibility("hidden")))

enum pdh_kind {
	PDH_KIND_QUERY = 1,
	PDH_KIND_COUNTER,
	PDH_KIND_LOG,
	PDH_KIND_EVENT,
};

/* One instance of a counter in one sample. */
struct pdh_item {
	char *name;		     /* instance name (plain), NULL without instances */
	size_t len;		     /* strlen(name) */
	unsigned int dup;	     /* duplicate number within the sample */
	PDH_RAW_COUNTER raw;	     /* as pdh.md 6.5 */
	double logged;		     /* log replay: the logged value */
	const struct pdh_item *prev; /* this instance in the counter's previous sample */
	size_t src;		     /* its item in the query's data (real time) */
};

/* One sample of a counter: its items (one for a counter without wildcard). */
struct pdh_sample {
	struct pdh_item *items;
	size_t nr, cap;
	bool valid;	/* collected at all (else: no sample yet) */
	bool own_names; /* names malloc'd (log replay); else they point into the query's data */
};

struct pdh_query;
struct pdh_log;

struct pdh_counter {
	enum pdh_kind kind;
	struct pdh_query *q;
	DWORD_PTR user;
	char *full_path;       /* as given */
	struct tp_path path;   /* parsed */
	char *pattern;	       /* instance name pattern (tp_path_instance_pattern), NULL: none */
	bool wildcard;	       /* the instance part matches many */
	GUID guid;	       /* counter set */
	bool multi;	       /* set has instances */
	struct tp_counter ctr; /* registration (name not owned) */
	uint32_t base_id;      /* ctrtype's base rule, TP_NO_ID */
	int32_t def_scale;     /* DefaultScale */
	LONG scale;	       /* PdhSetCounterScaleFactor */
	char *explain;	       /* cached help text */
	size_t log_col;	       /* log replay: first column */
	size_t *log_cols;      /* log replay: matching columns */
	size_t nr_log_cols;
	struct pdh_sample cur, old;
	DWORD status;	  /* CStatus of the newest sample for a non-wildcard counter */
	bool changed;	  /* new data since the last read */
	int64_t timebase; /* ticks per second of the newest sample, 0 = none */
	/* what the type implies, looked up once at add (collection reads it per instance) */
	bool match_all; /* pattern "*": every instance */
	uint8_t second; /* what PDH_RAW_COUNTER.SecondValue carries (query.c) */
	uint8_t tb;	/* enum ctrtype_timebase */
	uint8_t calc;	/* enum ctrtype_calc */
};

struct pdh_query {
	enum pdh_kind kind;
	pthread_mutex_t lock;
	DWORD_PTR user;
	struct pdh_log *source; /* log replay, NULL for real time */
	struct tp_catalog cat;	/* this machine's counter sets (instances not loaded) */
	bool have_cat;
	HANDLE perf;	    /* perflib query, NULL before the first collection */
	bool specs_dirty;   /* counters changed: rebuild perf */
	GUID *sets;	    /* per spec Index: the counter set */
	uint32_t *spec_ids; /* per spec Index: CounterId */
	size_t nr_specs;
	void *buf;
	DWORD buf_size;
	struct tp_data data;	 /* the newest decoded sample */
	struct tp_data data_old; /* the one before: the names of the counters' old samples */
	bool have_data, have_old;
	size_t *prev_map; /* per item of data: its item in data_old, or SIZE_MAX */
	bool map_ok;	  /* prev_map holds (data and data_old have the same specs) */
	unsigned long specs_gen, data_gen; /* rebuild_specs count; the count data came with */
	struct pdh_counter **counters;
	size_t nr_counters;
	int64_t stamp; /* local FILETIME of the newest collection */
	/* PdhCollectQueryDataEx */
	pthread_t thread;
	bool thread_on, thread_stop;
	pthread_cond_t cond;
	DWORD interval;
	HANDLE event;
};

/* A CSV/TSV log: written from a query, or read (replayed). */
struct pdh_log {
	enum pdh_kind kind;
	bool writing;
	enum tp_format fmt;
	FILE *f;
	char *file;
	struct pdh_query *q; /* writing: the query */
	/* writing: one column per (counter, instance) at open */
	struct pdh_counter **col_ctr;
	char **col_inst;
	unsigned int *col_dup;
	char **col_path;
	size_t nr_cols;
	/* reading: the whole file */
	char **paths; /* per column */
	size_t nr_paths;
	char **stamps;	/* per record */
	char ***values; /* per record, per column; " " or "" = no value */
	size_t nr_records;
	size_t next;  /* replay position */
	size_t limit; /* replay ends before this record (PdhSetQueryTimeRange) */
};

/* handles: register, look up (NULL if not a live handle of @kind), forget */
PDH_HIDDEN int pdh_handle_add(void *obj);
PDH_HIDDEN void *pdh_handle_get(const void *h, enum pdh_kind kind);
PDH_HIDDEN void pdh_handle_del(const void *h);

/* lock the query a handle belongs to; pdh_counter_lock also validates the counter */
PDH_HIDDEN struct pdh_query *pdh_query_lock(PDH_HQUERY h);
PDH_HIDDEN struct pdh_counter *pdh_counter_lock(PDH_HCOUNTER h);
PDH_HIDDEN void pdh_unlock(struct pdh_query *q);

/* UTF-16 -> malloc'd UTF-8 (NULL in, NULL out); *@err set to PDH_MEMORY_ALLOCATION_FAILURE */
PDH_HIDDEN char *pdh_w2u(LPCWSTR s, PDH_STATUS *err);
/* a MULTI_SZ of UTF-16 into a malloc'd UTF-8 MULTI_SZ */
PDH_HIDDEN char *pdh_w2u_multi(LPCWSTR s, PDH_STATUS *err);
/* characters of UTF-8 @s in the variant (UTF-16 units when @wide), without NUL */
PDH_HIDDEN size_t pdh_chars(const char *s, bool wide);
/* copy UTF-8 @s (NUL included) into @dst as the variant; returns characters written */
PDH_HIDDEN size_t pdh_put(void *dst, const char *s, bool wide);

/*
 * pdh_put_list - the character-count protocol for a string (@multi false) or MULTI_SZ of
 * @nr strings: *@size in characters of the variant. PDH_MORE_DATA with the required size,
 * PDH_INVALID_ARGUMENT for a NULL size or a NULL buffer with *size > 0, else 0.
 */
PDH_HIDDEN PDH_STATUS pdh_put_list(char *const *strs, size_t nr, bool multi, void *buf,
				   LPDWORD size, bool wide);

/* a growing list of strings */
struct pdh_strs {
	char **v;
	size_t nr, cap;
};
PDH_HIDDEN int pdh_strs_add(struct pdh_strs *l, const char *s); /* copies; -ENOMEM */
PDH_HIDDEN int pdh_strs_take(struct pdh_strs *l, char *s);	/* takes; NULL: -ENOMEM */
PDH_HIDDEN bool pdh_strs_has(const struct pdh_strs *l, const char *s);
PDH_HIDDEN void pdh_strs_free(struct pdh_strs *l);

/* the local computer's short name; @name is local (NULL, "", ".", localhost, host) */
PDH_HIDDEN const char *pdh_host(void);
PDH_HIDDEN bool pdh_machine_local(const char *name);

/* Win32 code of the consumer API -> PDH status (pdh.md 9.4) */
PDH_HIDDEN PDH_STATUS pdh_from_win32(ULONG code);

/*
 * pdh_fetch - one call of the consumer API's buffer protocol (ERROR_NOT_ENOUGH_MEMORY with
 * the size, call again; retried because data changes in between): *@ret malloc'd (at least
 * 8 bytes) holding *@ret_size bytes. Win32 code.
 */
typedef ULONG (*pdh_fetch_fn)(void *ctx, void *buf, DWORD size, DWORD *actual);
PDH_HIDDEN ULONG pdh_fetch(pdh_fetch_fn fn, void *ctx, void **ret, DWORD *ret_size);

/* the help text of counter @id of set @guid (malloc'd UTF-8), NULL when none */
PDH_HIDDEN char *pdh_explain(const GUID *guid, uint32_t id);

/* FILETIME helpers: local FILETIME of a UTC FILETIME; current local FILETIME */
PDH_HIDDEN int64_t pdh_local_filetime(int64_t utc_filetime);

/* query internals shared with the log writer */
PDH_HIDDEN PDH_STATUS pdh_collect_locked(struct pdh_query *q);
PDH_HIDDEN PDH_STATUS pdh_format_item(const struct pdh_counter *c, DWORD fmt,
				      const struct pdh_item *cur, const struct pdh_item *old,
				      PDH_FMT_COUNTERVALUE *ret);
PDH_HIDDEN const struct pdh_item *pdh_item_find(const struct pdh_sample *s, const char *name,
						unsigned int dup);
/*
 * pdh_item_seek - pdh_item_find for a walk in sample order: the item at *@cursor is tried
 * first (instances keep their order from one sample to the next), then all; *@cursor is
 * left after the item found
 */
PDH_HIDDEN const struct pdh_item *pdh_item_seek(const struct pdh_sample *s, const char *name,
						unsigned int dup, size_t *cursor);
PDH_HIDDEN PDH_STATUS pdh_counter_add(PDH_HQUERY hq, const char *path, DWORD_PTR user,
				      PDH_HCOUNTER *ret);

/* log internals shared with the query (replay) */
PDH_HIDDEN PDH_STATUS pdh_log_read(const char *file, struct pdh_log **ret);
PDH_HIDDEN void pdh_log_free(struct pdh_log *log);
PDH_HIDDEN int64_t pdh_log_stamp(const char *stamp); /* local FILETIME, 0 if malformed */

#endif /* PDH_INTERNAL_H */
