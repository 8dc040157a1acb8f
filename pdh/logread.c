/* SPDX-License-Identifier: MIT */
/*
 * logread.c - reading CSV and TSV logs (pdh.md 7.3): a log file read whole into a log
 * object (its counter paths, per record the time stamp, parsed by common/stamp.c, and the
 * values as text), either header form (logtext.c: with or without the time zone), lines
 * that are no records skipped (typeperf's console messages); logs as data sources
 * (PdhBindInputDataSource), their time range and a query's window on them
 * (PdhGetDataSourceTimeRange, PdhSetQueryTimeRange). The query replays the records
 * (replay.c); log.c writes logs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pdh_internal.h"
#include "stamp.h"

/* split one line into quoted fields ("" inside is a quote); @sep ',' or '\t' */
static int split_line(const char *line, char sep, struct pdh_strs *out)
{
	const char *p = line;
	char *field, *f;

	while (*p && *p != '\r' && *p != '\n') {
		field = malloc(strlen(p) + 1);
		if (!field)
			return -ENOMEM;
		f = field;
		if (*p == '"') {
			for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
				if (*p == '"')
					p++; /* a doubled quote */
				*f++ = *p;
			}
			if (*p == '"')
				p++;
		} else {
			while (*p && *p != sep && *p != '\r' && *p != '\n')
				*f++ = *p++;
		}
		*f = '\0';
		if (pdh_strs_take(out, field))
			return -ENOMEM;
		if (*p != sep)
			break;
		p++;
	}
	return 0;
}

void pdh_log_free(struct pdh_log *log)
{
	size_t i, k;

	if (!log)
		return;
	if (log->f && !log->console)
		fclose(log->f);
	for (i = 0; i < log->nr_paths; i++)
		free(log->paths[i]);
	free(log->paths);
	for (i = 0; i < log->nr_records; i++) {
		for (k = 0; k < log->nr_paths; k++)
			free(log->values[i][k]);
		free(log->values[i]);
	}
	free(log->values);
	free(log->times);
	for (i = 0; i < log->nr_cols; i++) {
		free(log->col_inst[i]);
		free(log->col_path[i]);
	}
	free(log->col_ctr);
	free(log->col_inst);
	free(log->col_dup);
	free(log->col_path);
	free(log->file);
	free(log);
}

/*
 * one data line, time stamp @stamp, into the next record; short lines get no value in
 * missing columns
 */
static int add_record(struct pdh_log *log, int64_t stamp, struct pdh_strs *fields)
{
	char ***vg, **row;
	int64_t *tg;
	size_t k;

	vg = realloc(log->values, (log->nr_records + 1) * sizeof(*vg));
	if (vg)
		log->values = vg;
	tg = realloc(log->times, (log->nr_records + 1) * sizeof(*tg));
	if (tg)
		log->times = tg;
	row = calloc(log->nr_paths ? log->nr_paths : 1, sizeof(*row));
	if (!vg || !tg || !row) {
		free(row);
		return -ENOMEM;
	}
	for (k = 0; k < log->nr_paths; k++) {
		row[k] = strdup(k + 1 < fields->nr ? fields->v[k + 1] : " ");
		if (!row[k]) {
			while (k--)
				free(row[k]);
			free(row);
			return -ENOMEM;
		}
	}
	log->times[log->nr_records] = stamp;
	log->values[log->nr_records++] = row;
	return 0;
}

PDH_STATUS pdh_log_read(const char *file, struct pdh_log **ret)
{
	struct pdh_strs fields = {0}, paths = {0};
	struct pdh_log *log;
	char *line = NULL;
	size_t cap = 0, i;
	bool header = false;
	PDH_STATUS st = PDH_MEMORY_ALLOCATION_FAILURE;
	FILE *f;
	char sep = ',';
	int64_t stamp;

	f = fopen(file, "r");
	if (!f)
		return errno == ENOENT ? PDH_FILE_NOT_FOUND : PDH_LOG_FILE_OPEN_ERROR;
	log = calloc(1, sizeof(*log));
	if (!log)
		goto out;
	log->kind = PDH_KIND_LOG;
	log->file = strdup(file);
	if (!log->file)
		goto out;
	while (getline(&line, &cap, f) > 0) {
		if (!header && (line[0] == '\r' || line[0] == '\n'))
			continue; /* typeperf's console output starts with an empty line */
		if (!header) {
			/* the separator from the format's name, then the field as a whole */
			sep = !strncmp(line, "\"(PDH-TSV ", 10) ? '\t' : ',';
			st = PDH_MEMORY_ALLOCATION_FAILURE;
			if (split_line(line, sep, &fields))
				goto out;
			st = PDH_UNABLE_READ_LOG_HEADER;
			if (!fields.nr || line[0] != '"' ||
			    pdh_text_header_parse(fields.v[0], &log->fmt, &log->zone) ||
			    (log->fmt == PDH_TEXT_TSV) != (sep == '\t'))
				goto out;
			st = PDH_MEMORY_ALLOCATION_FAILURE;
			/* column 0 is the format; with a user string (TSV) it may be last */
			for (i = 1; i < fields.nr; i++) {
				if (fields.v[i][0] != '\\')
					continue;
				if (pdh_strs_add(&paths, fields.v[i]))
					goto out;
			}
			log->paths = paths.v;
			log->nr_paths = paths.nr;
			memset(&paths, 0, sizeof(paths));
			header = true;
			pdh_strs_free(&fields);
			continue;
		}
		/* records are quoted; other lines are typeperf's console messages */
		if (line[0] != '"')
			continue;
		if (split_line(line, sep, &fields))
			goto out;
		/* a record needs its time stamp and no more fields than the header has;
		 * a short one (the writer stopped mid-line) has no value in what is missing */
		st = PDH_INVALID_DATA;
		if (perflib_stamp_parse(fields.v[0], &stamp) || fields.nr > log->nr_paths + 1)
			goto out;
		st = PDH_MEMORY_ALLOCATION_FAILURE;
		if (add_record(log, stamp, &fields))
			goto out;
		pdh_strs_free(&fields);
	}
	st = header ? 0 : PDH_UNABLE_READ_LOG_HEADER;
	log->limit = log->nr_records;
out:
	pdh_strs_free(&fields);
	pdh_strs_free(&paths);
	free(line);
	fclose(f);
	if (st) {
		pdh_log_free(log);
		return st;
	}
	*ret = log;
	return 0;
}

PDH_STATUS pdh_log_open_read(const char *file, struct pdh_log **ret)
{
	struct pdh_log *log;
	PDH_STATUS st;

	st = pdh_log_read(file, &log);
	if (st)
		return st;
	if (pdh_handle_add(log)) {
		pdh_log_free(log);
		return PDH_MEMORY_ALLOCATION_FAILURE;
	}
	*ret = log;
	return 0;
}

PDH_FUNCTION PdhBindInputDataSourceA(PDH_HLOG *phDataSource, LPCSTR LogFileNameList)
{
	struct pdh_log *log;
	PDH_STATUS st;

	if (!phDataSource)
		return PDH_INVALID_ARGUMENT;
	if (!LogFileNameList || !*LogFileNameList) {
		*phDataSource = H_REALTIME_DATASOURCE;
		return 0;
	}
	/* at most one CSV or TSV file (D-Bind) */
	if (LogFileNameList[strlen(LogFileNameList) + 1])
		return PDH_INVALID_ARGUMENT;
	st = pdh_log_open_read(LogFileNameList, &log);
	if (st)
		return st;
	*phDataSource = log;
	return 0;
}

PDH_FUNCTION PdhBindInputDataSourceW(PDH_HLOG *phDataSource, LPCWSTR LogFileNameList)
{
	PDH_STATUS st = 0;
	char *list = pdh_w2u_multi(LogFileNameList, &st);

	if (st)
		return st;
	st = PdhBindInputDataSourceA(phDataSource, list);
	free(list);
	return st;
}

static PDH_STATUS time_range(struct pdh_log *log, LPDWORD entries, PDH_TIME_INFO *info,
			     LPDWORD size)
{
	if (!entries || !size || (!info && *size))
		return PDH_INVALID_ARGUMENT;
	if (!info || *size < sizeof(*info)) {
		*size = sizeof(*info);
		return PDH_MORE_DATA;
	}
	memset(info, 0, sizeof(*info));
	if (log->nr_records) {
		info->StartTime = log->times[0];
		info->EndTime = log->times[log->nr_records - 1];
	}
	info->SampleCount = (DWORD)log->nr_records;
	*entries = 1;
	*size = sizeof(*info);
	return 0;
}

PDH_FUNCTION PdhGetDataSourceTimeRangeH(PDH_HLOG hDataSource, LPDWORD pdwNumEntries,
					PPDH_TIME_INFO pInfo, LPDWORD pdwBufferSize)
{
	struct pdh_log *log;

	if (!hDataSource)
		return PDH_DATA_SOURCE_IS_REAL_TIME;
	log = pdh_handle_get(hDataSource, PDH_KIND_LOG);
	if (!log || log->writing)
		return PDH_INVALID_HANDLE;
	return time_range(log, pdwNumEntries, pInfo, pdwBufferSize);
}

PDH_FUNCTION PdhGetDataSourceTimeRangeA(LPCSTR szDataSource, LPDWORD pdwNumEntries,
					PPDH_TIME_INFO pInfo, LPDWORD pdwBufferSize)
{
	struct pdh_log *log;
	PDH_STATUS st;

	if (!szDataSource)
		return PDH_DATA_SOURCE_IS_REAL_TIME;
	st = pdh_log_read(szDataSource, &log);
	if (st)
		return st;
	st = time_range(log, pdwNumEntries, pInfo, pdwBufferSize);
	pdh_log_free(log);
	return st;
}

PDH_FUNCTION PdhGetDataSourceTimeRangeW(LPCWSTR szDataSource, LPDWORD pdwNumEntries,
					PPDH_TIME_INFO pInfo, LPDWORD pdwBufferSize)
{
	PDH_STATUS st = 0;
	char *src = pdh_w2u(szDataSource, &st);

	if (st)
		return st;
	st = PdhGetDataSourceTimeRangeA(src, pdwNumEntries, pInfo, pdwBufferSize);
	free(src);
	return st;
}

PDH_FUNCTION PdhSetQueryTimeRange(PDH_HQUERY hQuery, PPDH_TIME_INFO pInfo)
{
	struct pdh_query *q;
	struct pdh_log *log;
	PDH_STATUS st = 0;
	size_t i;

	if (!pInfo)
		return PDH_INVALID_ARGUMENT;
	q = pdh_query_lock(hQuery);
	if (!q)
		return PDH_INVALID_HANDLE;
	log = q->source;
	if (!log) {
		st = PDH_DATA_SOURCE_IS_REAL_TIME;
	} else if (pInfo->StartTime > pInfo->EndTime) {
		st = PDH_INVALID_ARGUMENT;
	} else {
		for (i = 0; i < log->nr_records; i++)
			if (log->times[i] >= pInfo->StartTime)
				break;
		log->next = i;
		for (; i < log->nr_records; i++)
			if (log->times[i] > pInfo->EndTime)
				break;
		log->limit = i;
	}
	pdh_unlock(q);
	return st;
}
