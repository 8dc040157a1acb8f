/* SPDX-License-Identifier: MIT */
/*
 * log.c - writing CSV and TSV logs (pdh.md 5.10, 7.1, 7.2) from a query (logtext.c: the
 * header "(PDH-CSV 4.0) (<zone>)(<bias>)", or typeperf's "(PDH-CSV 4.0)" with
 * PDH_LINUX_LOG_NO_ZONE; quoted fields, CRLF, six decimals, " " for no value), and the log
 * handle calls of both kinds: PdhOpenLog (reading: logread.c), PdhCloseLog, the file size.
 *
 * Writing: wildcard paths are expanded once, when the log is opened (G-Logs): the open
 * collects the query once, which also gives two-sample counters their first sample, so the
 * first record has values (typeperf's priming sample). Logged values are unscaled and
 * uncapped (PDH_FMT_NOSCALE | PDH_FMT_NOCAP100), as typeperf prints them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "pdh_internal.h"

/* the display names of counter @c: its set's and counter's registered names */
static void names_of(const struct pdh_query *q, const struct pdh_counter *c, const char **object,
		     const char **counter)
{
	size_t i, k;

	*object = c->path.object;
	*counter = c->path.counter;
	for (i = 0; i < q->cat.nr_sets; i++) {
		const struct pdh_cat_set *s = &q->cat.sets[i];

		if (memcmp(&s->guid, &c->guid, sizeof(GUID)))
			continue;
		*object = s->name;
		for (k = 0; k < s->nr_counters; k++)
			if (s->counters[k].id == c->ctr.id)
				*counter = s->counters[k].name;
	}
}

static int add_column(struct pdh_log *log, struct pdh_counter *c, const char *inst,
		      unsigned int dup, char *path)
{
	size_t n = log->nr_cols + 1;
	void *g1, *g2, *g3, *g4;

	g1 = realloc(log->col_ctr, n * sizeof(*log->col_ctr));
	if (g1)
		log->col_ctr = g1;
	g2 = realloc(log->col_inst, n * sizeof(*log->col_inst));
	if (g2)
		log->col_inst = g2;
	g3 = realloc(log->col_dup, n * sizeof(*log->col_dup));
	if (g3)
		log->col_dup = g3;
	g4 = realloc(log->col_path, n * sizeof(*log->col_path));
	if (g4)
		log->col_path = g4;
	if (!path || !g1 || !g2 || !g3 || !g4) {
		free(path);
		return -ENOMEM;
	}
	log->col_ctr[log->nr_cols] = c;
	log->col_inst[log->nr_cols] = inst ? strdup(inst) : NULL;
	log->col_dup[log->nr_cols] = dup;
	log->col_path[log->nr_cols] = path;
	log->nr_cols++;
	return inst && !log->col_inst[log->nr_cols - 1] ? -ENOMEM : 0;
}

/* the columns: the query's counters, wildcards expanded by one collection */
static int columns(struct pdh_log *log, struct pdh_query *q)
{
	size_t i, k;

	if (!q->source)
		pdh_collect_locked(q);
	for (i = 0; i < q->nr_counters; i++) {
		struct pdh_counter *c = q->counters[i];
		const char *object, *counter, *machine;

		if (q->source) {
			for (k = 0; k < c->nr_log_cols; k++)
				if (add_column(log, c, NULL, (unsigned int)k,
					       strdup(q->source->paths[c->log_cols[k]])))
					return -ENOMEM;
			continue;
		}
		names_of(q, c, &object, &counter);
		/* the computer as the counter's path names it (\\localhost stays), else this one */
		machine = c->path.machine ? c->path.machine : pdh_host();
		if (!c->multi || !c->wildcard) {
			char *inst = NULL;

			if (c->multi) {
				inst = pdh_instance_display(
					c->pattern,
					c->path.index > 0 ? (unsigned)c->path.index : 0);
				if (!inst)
					return -ENOMEM;
			}
			k = (size_t)add_column(log, c, c->multi ? c->pattern : NULL,
					       c->path.index > 0 ? (unsigned)c->path.index : 0,
					       pdh_cpath_format(machine, object, inst, counter));
			free(inst);
			if (k)
				return -ENOMEM;
			continue;
		}
		for (k = 0; k < pdh_counter_nr(c); k++) {
			unsigned int dup;
			const char *name = pdh_counter_name(c, k, &dup);
			char *inst = pdh_instance_display(name, dup);

			if (!inst || add_column(log, c, name, dup,
						pdh_cpath_format(machine, object, inst, counter))) {
				free(inst);
				return -ENOMEM;
			}
			free(inst);
		}
	}
	return 0;
}

/*
 * the time zone a new log's header names (pdh.md 7.2): none for typeperf's
 * (PDH_LINUX_LOG_NO_ZONE); a replayed log's own when it names one (the stamps are copied
 * as logged, in its local time); else this machine's, now
 */
static void zone_of(struct pdh_log *log, DWORD flags)
{
	const struct pdh_log *source = log->q->source;

	if (flags & PDH_LINUX_LOG_NO_ZONE)
		memset(&log->zone, 0, sizeof(log->zone));
	else if (source && source->zone.known)
		log->zone = source->zone;
	else
		pdh_text_zone_local(time(NULL), &log->zone);
}

static PDH_STATUS open_write(const char *name, DWORD flags, DWORD type, PDH_HQUERY hq,
			     PDH_HLOG *ret)
{
	struct pdh_log *log;
	struct pdh_query *q;
	/* "CON", the Windows console device: standard output, never appended to */
	bool console = !strcasecmp(name, "CON");
	struct stat stb;
	bool exists = !console && !stat(name, &stb), append;
	DWORD create = flags & PDH_LOG_CREATE_MASK;
	PDH_STATUS st;

	if (type == PDH_LOG_TYPE_UNDEFINED)
		return PDH_INVALID_ARGUMENT;
	if (type != PDH_LOG_TYPE_CSV && type != PDH_LOG_TYPE_TSV)
		return PDH_LOG_TYPE_NOT_FOUND; /* binary, SQL, trace: not installed here */
	if (create == PDH_LOG_CREATE_NEW && exists)
		return PDH_FILE_ALREADY_EXISTS;
	if (!create || create > PDH_LOG_OPEN_EXISTING)
		return PDH_INVALID_ARGUMENT;
	q = pdh_query_lock(hq);
	if (!q)
		return PDH_INVALID_HANDLE;
	st = PDH_MEMORY_ALLOCATION_FAILURE;
	log = calloc(1, sizeof(*log));
	if (!log)
		goto out;
	log->kind = PDH_KIND_LOG;
	log->writing = true;
	log->fmt = type == PDH_LOG_TYPE_TSV ? PDH_TEXT_TSV : PDH_TEXT_CSV;
	log->q = q;
	log->file = strdup(name);
	if (!log->file || columns(log, q))
		goto fail;
	append = exists && stb.st_size > 0 &&
		 ((flags & PDH_LOG_OPT_APPEND) || create == PDH_LOG_OPEN_EXISTING ||
		  create == PDH_LOG_OPEN_ALWAYS);
	log->console = console;
	log->f = console ? stdout : fopen(name, append ? "a" : "w");
	st = PDH_LOG_FILE_CREATE_ERROR;
	if (!log->f)
		goto fail;
	st = PDH_LOG_FILE_CREATE_ERROR;
	zone_of(log, flags);
	if (!append &&
	    (pdh_text_header(log->f, log->fmt, &log->zone, log->col_path, log->nr_cols) ||
	     fflush(log->f)))
		goto fail;
	st = PDH_MEMORY_ALLOCATION_FAILURE;
	if (pdh_handle_add(log))
		goto fail;
	*ret = log;
	pdh_unlock(q);
	return 0;
fail:
	pdh_log_free(log);
out:
	pdh_unlock(q);
	return st;
}

PDH_FUNCTION PdhOpenLogA(LPCSTR szLogFileName, DWORD dwAccessFlags, LPDWORD lpdwLogType,
			 PDH_HQUERY hQuery, DWORD dwMaxSize, LPCSTR szUserCaption, PDH_HLOG *phLog)
{
	struct pdh_log *log;
	PDH_STATUS st;

	(void)dwMaxSize; /* text logs are not circular: no limit */
	(void)szUserCaption;
	if (!szLogFileName || !lpdwLogType || !phLog)
		return PDH_INVALID_ARGUMENT;
	switch (dwAccessFlags & PDH_LOG_ACCESS_MASK) {
	case PDH_LOG_READ_ACCESS:
		if (hQuery)
			return PDH_INVALID_ARGUMENT; /* no query when reading (DOC) */
		st = pdh_log_open_read(szLogFileName, &log);
		if (st)
			return st;
		*lpdwLogType = log->fmt == PDH_TEXT_TSV ? PDH_LOG_TYPE_TSV : PDH_LOG_TYPE_CSV;
		*phLog = log;
		return 0;
	case PDH_LOG_WRITE_ACCESS:
	case PDH_LOG_UPDATE_ACCESS:
		return open_write(szLogFileName, dwAccessFlags, *lpdwLogType, hQuery, phLog);
	default:
		return PDH_INVALID_ARGUMENT;
	}
}

PDH_FUNCTION PdhOpenLogW(LPCWSTR szLogFileName, DWORD dwAccessFlags, LPDWORD lpdwLogType,
			 PDH_HQUERY hQuery, DWORD dwMaxSize, LPCWSTR szUserCaption, PDH_HLOG *phLog)
{
	PDH_STATUS st = 0;
	char *name = pdh_w2u(szLogFileName, &st), *cap = pdh_w2u(szUserCaption, &st);

	if (!st)
		st = PdhOpenLogA(name, dwAccessFlags, lpdwLogType, hQuery, dwMaxSize, cap, phLog);
	free(name);
	free(cap);
	return st;
}

PDH_FUNCTION PdhUpdateLogA(PDH_HLOG hLog, LPCSTR szUserString)
{
	struct pdh_log *log = pdh_handle_get(hLog, PDH_KIND_LOG);
	struct pdh_query *q;
	size_t i, cursor = 0;
	double *values;
	bool *valid;
	PDH_STATUS st;

	if (!log || !log->writing)
		return PDH_INVALID_HANDLE;
	if (szUserString && !*szUserString)
		return PDH_INVALID_ARGUMENT;
	q = pdh_query_lock(log->q);
	if (!q)
		return PDH_INVALID_HANDLE;
	st = pdh_collect_locked(q);
	if (st == PDH_NO_MORE_DATA || st == PDH_MEMORY_ALLOCATION_FAILURE)
		goto out;
	values = calloc(log->nr_cols + 1, sizeof(*values));
	valid = calloc(log->nr_cols + 1, sizeof(*valid));
	if (!values || !valid) {
		free(values);
		free(valid);
		st = PDH_MEMORY_ALLOCATION_FAILURE;
		goto out;
	}
	for (i = 0; i < log->nr_cols; i++) {
		const struct pdh_counter *c = log->col_ctr[i];
		PDH_FMT_COUNTERVALUE v;
		size_t at;

		/* a counter's columns are neighbours, in the order of its items at open */
		if (!i || log->col_ctr[i - 1] != c)
			cursor = 0;
		at = q->source ? (log->col_dup[i] < pdh_counter_nr(c) ? log->col_dup[i] : SIZE_MAX)
			       : pdh_counter_find(c, log->col_inst[i], log->col_dup[i], &cursor);
		if (at == SIZE_MAX)
			continue;
		valid[i] = !pdh_counter_format(
			c, at, PDH_FMT_DOUBLE | PDH_FMT_NOSCALE | PDH_FMT_NOCAP100, &v);
		values[i] = v.doubleValue;
	}
	if (pdh_text_row(log->f, log->fmt, q->stamp, values, valid, log->nr_cols) || fflush(log->f))
		st = PDH_LOG_FILE_CREATE_ERROR;
	else if (st == PDH_NO_DATA)
		st = 0; /* the record is written, with no values */
	free(values);
	free(valid);
out:
	pdh_unlock(q);
	return st;
}

PDH_FUNCTION PdhUpdateLogW(PDH_HLOG hLog, LPCWSTR szUserString)
{
	PDH_STATUS st = 0;
	char *s = pdh_w2u(szUserString, &st);

	if (!st)
		st = PdhUpdateLogA(hLog, s);
	free(s);
	return st;
}

PDH_FUNCTION PdhUpdateLogFileCatalog(PDH_HLOG hLog)
{
	/* text logs have no catalog to update */
	return pdh_handle_get(hLog, PDH_KIND_LOG) ? 0 : PDH_INVALID_HANDLE;
}

PDH_FUNCTION PdhGetLogFileSize(PDH_HLOG hLog, LONGLONG *llSize)
{
	struct pdh_log *log = pdh_handle_get(hLog, PDH_KIND_LOG);
	struct stat st;

	if (!log)
		return PDH_INVALID_HANDLE;
	if (!llSize)
		return PDH_INVALID_ARGUMENT;
	if (log->f)
		fflush(log->f);
	if (stat(log->file, &st))
		return PDH_FILE_NOT_FOUND;
	*llSize = st.st_size;
	return 0;
}

PDH_FUNCTION PdhCloseLog(PDH_HLOG hLog, DWORD dwFlags)
{
	struct pdh_log *log = pdh_handle_get(hLog, PDH_KIND_LOG);
	PDH_HQUERY q;
	bool failed = false;

	if (!log)
		return PDH_INVALID_HANDLE;
	pdh_handle_del(log);
	q = log->q;
	if (log->f) {
		failed = log->console ? fflush(log->f) != 0 : fclose(log->f) != 0;
		log->f = NULL;
	}
	pdh_log_free(log);
	if ((dwFlags & PDH_FLAGS_CLOSE_QUERY) && q)
		PdhCloseQuery(q);
	return failed ? PDH_LOG_FILE_CREATE_ERROR : 0;
}
