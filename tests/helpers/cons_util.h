/* SPDX-License-Identifier: MIT */
/*
 * cons_util.h - what the consumer tests share: identifier blocks, calls that follow the
 * Windows buffer protocol (size, allocate, call again), and checkers that walk a returned
 * buffer by its size fields and fail the test on anything malformed. Public headers only
 * (test_api_consumer.c also runs against the shared library). Include after prov_util.h.
 */
#ifndef CONS_UTIL_H
#define CONS_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "perflib.h"
#include "prov_util.h"

#define CONS_ANY_INSTANCE 0xFFFFFFFF

/* a UTF-16 copy of an ASCII string (one of 8 rotating static buffers) */
static inline const WCHAR *cons_w(const char *s)
{
	static WCHAR bufs[8][1100];
	static unsigned int next;
	WCHAR *b = bufs[next++ % 8];

	return prov_wname(b, 1100, "%s", s);
}

static inline size_t cons_wlen(const WCHAR *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

/* does the UTF-16 @w of @units units equal ASCII @s? */
static inline int cons_weq(const WCHAR *w, size_t units, const char *s)
{
	size_t i;

	for (i = 0; i < units && s[i]; i++) {
		if (w[i] != (WCHAR)(unsigned char)s[i])
			return 0;
	}
	return i == units && !s[i];
}

/*
 * Append one PERF_COUNTER_IDENTIFIER block to @buf at @off (name NULL: no name, Size 40);
 * returns the new offset.
 */
static inline size_t cons_ident(void *buf, size_t off, const GUID *set, ULONG counter,
				ULONG instance, const char *name)
{
	PERF_COUNTER_IDENTIFIER id;
	size_t size = sizeof(id), len = name ? strlen(name) : 0, i;
	BYTE *p = (BYTE *)buf + off;

	if (name)
		size = (sizeof(id) + (len + 1) * 2 + 7) & ~(size_t)7;
	memset(&id, 0, sizeof(id));
	id.CounterSetGuid = *set;
	id.Size = (ULONG)size;
	id.CounterId = counter;
	id.InstanceId = instance;
	memset(p, 0, size);
	memcpy(p, &id, sizeof(id));
	for (i = 0; name && i < len; i++) {
		WCHAR c = (WCHAR)(unsigned char)name[i];

		memcpy(p + sizeof(id) + 2 * i, &c, 2);
	}
	return off + size;
}

/* Status of the block at @off */
static inline ULONG cons_ident_status(const void *buf, size_t off)
{
	ULONG st;

	memcpy(&st, (const BYTE *)buf + off + offsetof(PERF_COUNTER_IDENTIFIER, Status), 4);
	return st;
}

/* add one specification; returns its Status (the call itself must succeed) */
static inline ULONG cons_add(HANDLE q, const GUID *set, ULONG counter, ULONG instance,
			     const char *name)
{
	BYTE buf[2200];
	size_t len = cons_ident(buf, 0, set, counter, instance, name);
	ULONG ret = PerfAddCounters(q, (PPERF_COUNTER_IDENTIFIER)buf, (DWORD)len);

	return ret ? 0x80000000u | ret : cons_ident_status(buf, 0);
}

static inline ULONG cons_delete(HANDLE q, const GUID *set, ULONG counter, ULONG instance,
				const char *name)
{
	BYTE buf[2200];
	size_t len = cons_ident(buf, 0, set, counter, instance, name);
	ULONG ret = PerfDeleteCounters(q, (PPERF_COUNTER_IDENTIFIER)buf, (DWORD)len);

	return ret ? 0x80000000u | ret : cons_ident_status(buf, 0);
}

/* PerfEnumerateCounterSetInstances with the sizing loop; *ret_buf malloc'd */
static inline ULONG cons_enum(const GUID *set, BYTE **ret_buf, DWORD *ret_len)
{
	DWORD need = 0, got;
	BYTE *buf = NULL;
	ULONG st;
	int tries;

	*ret_buf = NULL;
	*ret_len = 0;
	for (tries = 0; tries < 100; tries++) {
		st = PerfEnumerateCounterSetInstances(NULL, set, (PPERF_INSTANCE_HEADER)buf, need,
						      &got);
		if (st != ERROR_NOT_ENOUGH_MEMORY)
			break;
		free(buf);
		need = got;
		buf = malloc(need ? need : 1);
	}
	if (st) {
		free(buf);
		return st;
	}
	*ret_buf = buf;
	*ret_len = got;
	return st;
}

/* PerfQueryCounterData with the sizing loop; *ret_buf malloc'd */
static inline ULONG cons_data(HANDLE q, BYTE **ret_buf, DWORD *ret_len)
{
	DWORD need = 0, got = 0;
	BYTE *buf = NULL;
	ULONG st;
	int tries;

	*ret_buf = NULL;
	for (tries = 0; tries < 100; tries++) {
		st = PerfQueryCounterData(q, (PPERF_DATA_HEADER)buf, need, &got);
		if (st != ERROR_NOT_ENOUGH_MEMORY)
			break;
		free(buf);
		need = got;
		buf = malloc(need);
	}
	if (st) {
		free(buf);
		return st;
	}
	*ret_buf = buf;
	*ret_len = got;
	return st;
}

/* one PERF_INSTANCE_HEADER block, as checked by cons_instance() */
struct cons_inst {
	ULONG id;
	const WCHAR *name; /* inside the buffer (2-aligned) */
	size_t len;	   /* units without NUL */
	ULONG size;	   /* block Size */
};

/*
 * Check the block at @p (@room bytes left): Size a multiple of 8, >= 8 + 2, inside @room,
 * the name NUL-terminated inside it, padding zero. 0 if well formed, else a line number.
 */
static inline int cons_instance(const BYTE *p, size_t room, struct cons_inst *ret)
{
	PERF_INSTANCE_HEADER h;
	size_t i, n;

	if (room < sizeof(h))
		return __LINE__;
	memcpy(&h, p, sizeof(h));
	if (h.Size % 8 || h.Size < sizeof(h) + 2 || h.Size > room)
		return __LINE__;
	n = (h.Size - sizeof(h)) / 2;
	for (i = 0; i < n && ((const WCHAR *)(p + sizeof(h)))[i]; i++)
		;
	if (i == n)
		return __LINE__; /* no NUL */
	if (((sizeof(h) + 2 * (i + 1) + 7) & ~(size_t)7) != h.Size)
		return __LINE__; /* not the smallest multiple of 8 */
	for (n = sizeof(h) + 2 * (i + 1); n < h.Size; n++) {
		if (p[n])
			return __LINE__; /* padding not zero */
	}
	ret->id = h.InstanceId;
	ret->name = (const WCHAR *)(p + sizeof(h));
	ret->len = i;
	ret->size = h.Size;
	return 0;
}

/* walk an enumeration buffer; the number of instances, or -(line) if malformed */
static inline int cons_instances(const BYTE *buf, size_t len, struct cons_inst *out, int max)
{
	size_t off = 0;
	int n = 0, err;
	struct cons_inst in;

	while (off < len) {
		err = cons_instance(buf + off, len - off, &in);
		if (err)
			return -err;
		if (out && n < max)
			out[n] = in;
		n++;
		off += in.size;
	}
	return n;
}

/* the PERF_COUNTER_HEADER number @index of a PerfQueryCounterData buffer, or NULL */
static inline const PERF_COUNTER_HEADER *cons_header(const BYTE *buf, ULONG index)
{
	const PERF_DATA_HEADER *dh = (const PERF_DATA_HEADER *)buf;
	size_t off = sizeof(*dh);
	ULONG i;

	if (index >= dh->dwNumCounters)
		return NULL;
	for (i = 0; i < index; i++)
		off += ((const PERF_COUNTER_HEADER *)(buf + off))->dwSize;
	return off + sizeof(PERF_COUNTER_HEADER) <= dh->dwTotalSize
		       ? (const PERF_COUNTER_HEADER *)(buf + off)
		       : NULL;
}

/* PERF_COUNTER_DATA at @p: its value (4 or 8 bytes), -1 if no data */
static inline long long cons_value(const BYTE *p)
{
	const PERF_COUNTER_DATA *d = (const PERF_COUNTER_DATA *)p;
	ULONGLONG v8;
	ULONG v4;

	if (d->dwDataSize == 4) {
		memcpy(&v4, p + sizeof(*d), 4);
		return v4;
	}
	if (d->dwDataSize == 8) {
		memcpy(&v8, p + sizeof(*d), 8);
		return (long long)v8;
	}
	return -1;
}

/* one instance of a PERF_COUNTERSET / PERF_MULTIPLE_INSTANCES payload */
struct cons_row {
	ULONG id;
	char name[64];	 /* ASCII rendering */
	long long v[16]; /* values by position in the block, -1 = no data */
};

/*
 * Check a PERF_COUNTER_HEADER block of type PERF_COUNTERSET or PERF_MULTIPLE_INSTANCES and
 * return its instances (up to @max) in @rows; *ret_nr gets dwInstances, *ret_nc the number
 * of values per instance. 0 if well formed, else a line number.
 */
static inline int cons_multi(const PERF_COUNTER_HEADER *h, struct cons_row *rows, int max,
			     int *ret_nr, int *ret_nc)
{
	const BYTE *p = (const BYTE *)(h + 1), *end = (const BYTE *)h + h->dwSize;
	const PERF_MULTI_INSTANCES *mi;
	ULONG nc = 1, i, k;

	if (h->dwSize % 8 || h->Reserved)
		return __LINE__;
	if (h->dwType == PERF_COUNTERSET) {
		const PERF_MULTI_COUNTERS *mc = (const PERF_MULTI_COUNTERS *)p;

		nc = mc->dwCounters;
		if (mc->dwSize != ((8 + 4 * nc + 7) & ~7u))
			return __LINE__;
		p += mc->dwSize;
	} else if (h->dwType != PERF_MULTIPLE_INSTANCES) {
		return __LINE__;
	}
	mi = (const PERF_MULTI_INSTANCES *)p;
	if (p + mi->dwTotalSize != end || mi->dwTotalSize % 8)
		return __LINE__;
	p += sizeof(*mi);
	for (i = 0; i < mi->dwInstances; i++) {
		struct cons_inst in;
		int err = cons_instance(p, (size_t)(end - p), &in);

		if (err)
			return err;
		if ((int)i < max) {
			size_t c;

			rows[i].id = in.id;
			for (c = 0; c < in.len && c < sizeof(rows[i].name) - 1; c++)
				rows[i].name[c] = (char)in.name[c];
			rows[i].name[c] = 0;
		}
		p += in.size;
		for (k = 0; k < nc; k++) {
			const PERF_COUNTER_DATA *d = (const PERF_COUNTER_DATA *)p;

			if (p + 16 > end || d->dwSize != 16 || d->dwDataSize > 8)
				return __LINE__;
			if ((int)i < max && k < 16)
				rows[i].v[k] = cons_value(p);
			p += d->dwSize;
		}
	}
	if (p != end)
		return __LINE__;
	*ret_nr = (int)mi->dwInstances;
	*ret_nc = (int)nc;
	return 0;
}

#endif /* CONS_UTIL_H */
