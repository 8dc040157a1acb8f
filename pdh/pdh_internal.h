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
#include "pdh_fetch.h"
#include "pdh_sets.h"
#include "perfcols.h"
#include "decode.h"
#include "catalog.h"
#include "logtext.h"
#include "names.h"

#define PDH_HIDDEN __attribute__((visibility("hidden")))

enum pdh_kind {
	PDH_KIND_QUERY = 1,
	PDH_KIND_COUNTER,
	PDH_KIND_LOG,
	PDH_KIND_EVENT,
	PDH_KIND_WAIT, /* a RegisterWaitForSingleObject registration (event.c) */
};

/* Log replay: one instance of a counter in one record. */
struct pdh_item {
	char *name;		     /* instance name (plain), NULL without instances */
	size_t len;		     /* strlen(name) */
	unsigned int dup;	     /* duplicate number within the sample */
	PDH_RAW_COUNTER raw;	     /* as pdh.md 6.5 */
	double logged;		     /* the logged value */
	const struct pdh_item *prev; /* this instance in the counter's previous sample */
};

/* Log replay: one record of a counter, its items (one for a counter without wildcard). */
struct pdh_sample {
	struct pdh_item *items;
	size_t nr, cap;
};

/* what PDH_RAW_COUNTER.SecondValue carries for a counter's type (pdh.md 6.5; calc.c) */
enum second {
	SECOND_NONE,
	SECOND_TIME,
	SECOND_100NS,
	SECOND_OBJECT,
	SECOND_BASE,
};

#define PDH_NO_COL UINT32_MAX

/* Real time: where a counter's values are in one decoded sample of its query. */
struct pdh_cols {
	size_t block; /* the block of its counter set, SIZE_MAX: none */
	/* columns of the block: the value, its base, multi count, time and frequency */
	uint32_t v, base, multi, time, freq;
};

/* One decoded sample of a query (real time); a query keeps the newest and the one before. */
struct pdh_data {
	struct pdh_perfbuf_data d;
	GUID *sets; /* per block: its counter set */
	size_t cap_sets;
	bool *in_order;	    /* per block: the instances of the sample before, in its order */
	size_t *pair_first; /* per block in order: the first item of its block before */
	size_t cap_in_order;
	unsigned long gen; /* the collection it came from, 0: none */
	int64_t stamp;	   /* local FILETIME of PerfTime100NSec */
	/*
	 * d.names widened a byte a unit (right for ASCII blocks), made by the first W array
	 * of the sample and copied by the others; wide_ok false until then
	 */
	uint16_t *wide;
	size_t cap_wide;
	bool wide_ok;
};

struct pdh_query;
struct pdh_log;

struct pdh_counter {
	enum pdh_kind kind;
	struct pdh_query *q;   /* its query: the handle's, locked for every call */
	struct pdh_query *src; /* where its samples are: q, or q's sub-query of its machine */
	DWORD_PTR user;
	char *full_path;       /* as given */
	struct pdh_cpath path; /* parsed */
	char *pattern;	       /* instance name pattern (pdh_cpath_instance_pattern), NULL: none */
	bool wildcard;	       /* the instance part matches many */
	GUID guid;	       /* counter set */
	bool multi;	       /* set has instances */
	struct pdh_cat_counter ctr; /* registration (name not owned) */
	uint32_t base_id;	    /* ctrtype's base rule, PERFLIB_NO_ID */
	int32_t def_scale;	    /* DefaultScale */
	LONG scale;		    /* PdhSetCounterScaleFactor */
	char *explain;		    /* cached help text */
	size_t *log_cols;	    /* log replay: matching columns */
	size_t nr_log_cols;
	struct pdh_sample cur, old; /* log replay: the newest record and the one before */
	/*
	 * real time: the newest sample is items of the query's newest data, chosen by the
	 * instance part (all of a block's items: sel_all, else the indexes in sel), read
	 * through cols; the one before is the same instances in the query's older data
	 * (pdh_query.prev_map), read through old_cols, if this counter was sampled then
	 */
	unsigned long gen, old_gen; /* collections of the two samples, 0: none */
	struct pdh_cols cols, old_cols;
	bool sel_all;
	size_t sel_first; /* sel_all: items sel_first .. sel_first + nr */
	size_t *sel, sel_cap;
	size_t nr;	  /* items of the newest sample */
	bool valid;	  /* collected at all (else: no sample yet) */
	DWORD status;	  /* CStatus of the newest sample for a non-wildcard counter */
	bool changed;	  /* new data since the last read */
	int64_t timebase; /* ticks per second of the newest sample, 0 = none */
	/* what the type implies, looked up once at add (collection reads it per instance) */
	bool match_all; /* pattern "*": every instance */
	uint8_t second; /* what PDH_RAW_COUNTER.SecondValue carries (pdh_second_of) */
	uint8_t tb;	/* enum ctrtype_timebase */
	uint8_t calc;	/* enum ctrtype_calc */
};

struct pdh_query {
	enum pdh_kind kind;
	pthread_mutex_t lock;
	DWORD_PTR user;
	struct pdh_log *source; /* log replay, NULL for real time */
	/*
	 * real time, other machines: a sub-query per machine (no handle; under the lock of
	 * the query holding it) collects the counters of paths naming it, with its own
	 * catalog and perflib query on that machine; they stay in the owner's counters for
	 * order, logs and handles, and in the sub-query's (not owned) for collection
	 */
	char *machine; /* a sub-query's machine, NULL: this one */
	struct pdh_query **subs;
	size_t nr_subs;
	bool own_source;	/* source read by PdhOpenQuery (no handle): freed with the query */
	struct pdh_catalog cat; /* this machine's counter sets (instances not loaded) */
	bool have_cat;
	HANDLE perf;	    /* perflib query, NULL before the first collection */
	bool specs_dirty;   /* counters changed: rebuild perf */
	GUID *sets;	    /* per spec Index: the counter set */
	uint32_t *spec_ids; /* per spec Index: CounterId */
	size_t nr_specs;
	GUID *whole;	   /* pdh_query_whole_sets: counter sets collected in full */
	bool *whole_multi; /* per whole set: it has instances */
	size_t nr_whole;
	struct perfcols cols; /* the column reads of perf (perfcols.h) */
	struct pdh_data dbuf[2];
	struct pdh_data *data, *data_old; /* the newest decoded sample, the one before */
	size_t *prev_map,
		prev_cap; /* per item of data: its item in data_old, SIZE_MAX (blocks not in order) */
	unsigned long gen;  /* collections so far */
	const char **names; /* scratch: a block's names for numbering */
	unsigned int *dups;
	size_t names_cap;
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
	bool console; /* writing to "CON": standard output, not closed */
	enum pdh_text_format fmt;
	struct pdh_text_zone zone; /* the header's time zone (known false: typeperf's header) */
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
	int64_t *times; /* per record: its time stamp, a local FILETIME */
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
#define PDH_MACHINE_UNITS 257 /* a machine name for the consumer calls, NUL included */
#define PDH_BAD_MACHINE ((const WCHAR *)-1)
/*
 * pdh_machine_w - the consumer calls' szMachine for PDH machine @name ("\\\\web01", "web01",
 * NULL): NULL for this machine, else its name without backslashes as UTF-16 in @buf
 * (PDH_MACHINE_UNITS); PDH_BAD_MACHINE when it does not fit or is not UTF-8
 */
PDH_HIDDEN const WCHAR *pdh_machine_w(const char *name, WCHAR *buf);
/* remember another machine @name (connected, or in a query) once; append them to @l; -ENOMEM */
PDH_HIDDEN int pdh_machine_seen(const char *name);
PDH_HIDDEN int pdh_machines_seen(struct pdh_strs *l);

/* Win32 code of the consumer API -> PDH status (pdh.md 9.4) */
PDH_HIDDEN PDH_STATUS pdh_from_win32(ULONG code);

/* the buffer protocol: pdh_fetch.h */

/* the help text of counter @id of set @guid on @machine (NULL: this one; malloc'd UTF-8), NULL when none */
PDH_HIDDEN char *pdh_explain(const char *machine, const GUID *guid, uint32_t id);

/* FILETIME helpers: local FILETIME of a UTC FILETIME; current local FILETIME */
PDH_HIDDEN int64_t pdh_local_filetime(int64_t utc_filetime);

/* ---- queries (query.c) ---- */
/* collect @q (locked): a real-time sample, or a log's next record; PDH status */
PDH_HIDDEN PDH_STATUS pdh_collect_locked(struct pdh_query *q);
/* PdhAddCounter with a UTF-8 path */
PDH_HIDDEN PDH_STATUS pdh_counter_add(PDH_HQUERY hq, const char *path, DWORD_PTR user,
				      PDH_HCOUNTER *ret);

/* ---- a query on a log (replay.c) ---- */
/* free the items of a replayed sample and empty it */
PDH_HIDDEN void pdh_sample_clear(struct pdh_sample *s);
/*
 * pdh_replay_resolve - the columns of @q's log that counter @c's path names into
 * c->log_cols; PDH_CSTATUS_NO_OBJECT, PDH_CSTATUS_NO_COUNTER, PDH_MEMORY_ALLOCATION_FAILURE
 */
PDH_HIDDEN PDH_STATUS pdh_replay_resolve(struct pdh_query *q, struct pdh_counter *c);
/* the next record of @q's log into every counter: PDH_NO_MORE_DATA after the last */
PDH_HIDDEN PDH_STATUS pdh_replay_step(struct pdh_query *q);

/* ---- samples (sample.c) ---- */
/* the decoded data a query keeps */
PDH_HIDDEN void pdh_data_free(struct pdh_query *q);
/* read the query's perflib query as its newest data, counters sampled from it */
PDH_HIDDEN PDH_STATUS pdh_data_update(struct pdh_query *q);
/* the items of a counter's newest sample: how many, name, raw value, formatted */
PDH_HIDDEN size_t pdh_counter_nr(const struct pdh_counter *c);
/* the instance name of item @i (NULL without instances), its duplicate number in *@dup */
PDH_HIDDEN const char *pdh_counter_name(const struct pdh_counter *c, size_t i, unsigned int *dup);
PDH_HIDDEN void pdh_counter_raw(const struct pdh_counter *c, size_t i, PDH_RAW_COUNTER *ret);
/* item @i cooked with its previous sample (pdh.md 6.3); PDH status, CStatus in @ret */
PDH_HIDDEN PDH_STATUS pdh_counter_format(const struct pdh_counter *c, size_t i, DWORD fmt,
					 PDH_FMT_COUNTERVALUE *ret);
/*
 * pdh_counter_find - the item of instance @name (NULL: none) with duplicate number @dup,
 * SIZE_MAX when absent; the item at *@cursor is tried first (instances keep their order
 * from one sample to the next) and *@cursor is left after the item found
 */
PDH_HIDDEN size_t pdh_counter_find(const struct pdh_counter *c, const char *name, unsigned int dup,
				   size_t *cursor);
/* the name of item @it of @d, NULL for an item without one */
static inline const char *pdh_item_name(const struct pdh_perfbuf_data *d,
					const struct pdh_perfbuf_item *it)
{
	return it->name == PDH_PERFBUF_NO_NAME ? NULL : d->names + it->name;
}

/* the data item of item @i of real-time counter @c's newest sample */
static inline size_t pdh_sel_item(const struct pdh_counter *c, size_t i)
{
	return c->sel_all ? c->sel_first + i : c->sel[i];
}

/*
 * the item of the query's older data that item @item of block @block of its newest data
 * pairs with (the same instance), SIZE_MAX: none; inline, the arrays call it per item
 */
static inline size_t pdh_prev_item(const struct pdh_query *q, size_t block, size_t item)
{
	const struct pdh_data *pd = q->data;

	if (pd->in_order[block])
		return pd->pair_first[block] + (item - pd->d.blocks[block].first);
	return q->prev_map[item];
}

/* ---- arrays (array.c) ---- */
/* the bytes of the newest sample as an array of @item_size items with names (pdh.md 5.4.2) */
PDH_HIDDEN size_t pdh_array_size(const struct pdh_counter *c, size_t item_size, bool wide);
/* the array itself into @buf (pdh_array_size bytes): the bytes written */
PDH_HIDDEN size_t pdh_array_fill(const struct pdh_counter *c, DWORD fmt, bool raw, bool wide,
				 void *buf);

/* ---- display values from raw samples (calc.c) ---- */
#define PDH_DEFAULT_FREQ 1000000000LL /* this port's PerfFreq (CLOCK_MONOTONIC ns) */
/*
 * pdh_second_of - what PDH_RAW_COUNTER.SecondValue carries for counter type @type: the one
 * rule (bases of fractions and averages, the precision timers' own time stamps, else the
 * clock of the time base)
 */
PDH_HIDDEN enum second pdh_second_of(uint32_t type);
/* the display value of @newer (and @older: NULL for none) of a counter of @type; PDH status */
PDH_HIDDEN PDH_STATUS pdh_calc(uint32_t type, int64_t timebase, LONG scale, DWORD fmt,
			       const PDH_RAW_COUNTER *newer, const PDH_RAW_COUNTER *older,
			       PDH_FMT_COUNTERVALUE *ret);
/* scale, x1000, cap and convert a cooked value @v into @ret (pdh.md 6.3) */
PDH_HIDDEN void pdh_finish(uint32_t type, LONG scale, DWORD fmt, double v,
			   PDH_FMT_COUNTERVALUE *ret);
/* the time base of counter @c: its newest sample's, else this port's clocks */
PDH_HIDDEN int64_t pdh_timebase(const struct pdh_counter *c);

/* ---- reading logs (logread.c) ---- */
/*
 * pdh_log_read - log @file read whole into a new log object (not a handle), *@ret for
 * pdh_log_free. PDH_FILE_NOT_FOUND, PDH_LOG_FILE_OPEN_ERROR, PDH_UNABLE_READ_LOG_HEADER (no
 * header of logtext.c's forms), PDH_INVALID_DATA (a record with a bad time stamp or too
 * many fields), PDH_MEMORY_ALLOCATION_FAILURE
 */
PDH_HIDDEN PDH_STATUS pdh_log_read(const char *file, struct pdh_log **ret);
/* pdh_log_read, the log registered as a handle (PdhBindInputDataSource, PdhOpenLog) */
PDH_HIDDEN PDH_STATUS pdh_log_open_read(const char *file, struct pdh_log **ret);
/* free a log object of either kind (closes its file unless the console); NULL is fine */
PDH_HIDDEN void pdh_log_free(struct pdh_log *log);

#endif /* PDH_INTERNAL_H */
