/* SPDX-License-Identifier: MIT */
/*
 * common.c - libpdh's shared plumbing: the handle table (handles are looked up, never
 * dereferenced blindly: pdh.md 4.2), strings for the W and A variants and the character
 * protocol (4.3, 4.4), the local computer, Win32 -> PDH codes, and reading the catalog of
 * counter sets through the consumer API with its grow-and-retry buffer protocol.
 */
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "perflib-linux.h"
#include "perfbuf.h"
#include "pdh_internal.h"
#include "filetime.h"

#define SIZE_RETRIES 8 /* data growing between the sizing call and the real one */

/* ---- handles ------------------------------------------------------------------------- */

static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static void *handles; /* tsearch tree of live objects */

static int ptr_cmp(const void *a, const void *b)
{
	return a < b ? -1 : a > b;
}

int pdh_handle_add(void *obj)
{
	void *r;

	pthread_mutex_lock(&handles_lock);
	r = tsearch(obj, &handles, ptr_cmp);
	pthread_mutex_unlock(&handles_lock);
	return r ? 0 : -ENOMEM;
}

void *pdh_handle_get(const void *h, enum pdh_kind kind)
{
	void **r;
	void *obj = NULL;

	if (!h)
		return NULL;
	pthread_mutex_lock(&handles_lock);
	r = tfind(h, &handles, ptr_cmp);
	if (r && *(const enum pdh_kind *)*r == kind)
		obj = *r;
	pthread_mutex_unlock(&handles_lock);
	return obj;
}

void pdh_handle_del(const void *h)
{
	pthread_mutex_lock(&handles_lock);
	tdelete(h, &handles, ptr_cmp);
	pthread_mutex_unlock(&handles_lock);
}

struct pdh_query *pdh_query_lock(PDH_HQUERY h)
{
	struct pdh_query *q = pdh_handle_get(h, PDH_KIND_QUERY);

	if (q)
		pthread_mutex_lock(&q->lock);
	return q;
}

struct pdh_counter *pdh_counter_lock(PDH_HCOUNTER h)
{
	struct pdh_counter *c = pdh_handle_get(h, PDH_KIND_COUNTER);
	struct pdh_query *q;

	if (!c)
		return NULL;
	q = c->q;
	pthread_mutex_lock(&q->lock);
	/* removed while we waited for the lock? */
	if (pdh_handle_get(h, PDH_KIND_COUNTER) != c) {
		pthread_mutex_unlock(&q->lock);
		return NULL;
	}
	return c;
}

void pdh_unlock(struct pdh_query *q)
{
	pthread_mutex_unlock(&q->lock);
}

/* ---- strings ------------------------------------------------------------------------- */

static size_t wlen(LPCWSTR s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

char *pdh_w2u(LPCWSTR s, PDH_STATUS *err)
{
	char *r;

	if (!s)
		return NULL;
	r = pdh_perfbuf_utf16_dup(s, wlen(s) + 1);
	if (!r)
		*err = PDH_MEMORY_ALLOCATION_FAILURE;
	return r;
}

char *pdh_w2u_multi(LPCWSTR s, PDH_STATUS *err)
{
	size_t total = 0, n, off = 0;
	const WCHAR *p;
	char *r, *u;

	if (!s)
		return NULL;
	for (p = s; *p; p += wlen(p) + 1)
		total += wlen(p) * 3 + 1;
	r = malloc(total + 1);
	if (!r) {
		*err = PDH_MEMORY_ALLOCATION_FAILURE;
		return NULL;
	}
	for (p = s; *p; p += wlen(p) + 1) {
		u = pdh_perfbuf_utf16_dup(p, wlen(p) + 1);
		if (!u) {
			free(r);
			*err = PDH_MEMORY_ALLOCATION_FAILURE;
			return NULL;
		}
		n = strlen(u) + 1;
		memcpy(r + off, u, n);
		off += n;
		free(u);
	}
	r[off] = '\0';
	return r;
}

size_t pdh_chars(const char *s, bool wide)
{
	size_t n = 0;
	const unsigned char *p = (const unsigned char *)s;

	if (!wide)
		return strlen(s);
	for (; *p; p++) {
		if ((*p & 0xC0) == 0x80)
			continue;
		n += *p >= 0xF0 ? 2 : 1; /* 4-byte sequences are surrogate pairs */
	}
	return n;
}

size_t pdh_put(void *dst, const char *s, bool wide)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n, i;
	WCHAR *w = dst;
	int r;

	if (!wide) {
		n = strlen(s) + 1;
		memcpy(dst, s, n);
		return n;
	}
	/* ASCII, the usual name, unit by unit; anything else through the converter */
	for (i = 0; p[i] && p[i] < 0x80; i++)
		w[i] = p[i];
	if (!p[i]) {
		w[i] = 0;
		return i + 1;
	}
	n = pdh_chars(s, true) + 1;
	r = perflib_utf8_to_utf16(s, w, n);
	if (r < 0) {
		/* not valid UTF-8 (cannot come from the catalog): an empty string */
		memset(dst, 0, 2);
		return 1;
	}
	return (size_t)r;
}

PDH_STATUS pdh_put_list(char *const *strs, size_t nr, bool multi, void *buf, LPDWORD size,
			bool wide)
{
	size_t need = 0, i, off = 0, unit = wide ? 2 : 1;

	if (!size || (!buf && *size))
		return PDH_INVALID_ARGUMENT;
	for (i = 0; i < nr; i++)
		need += pdh_chars(strs[i], wide) + 1;
	if (multi)
		need += 1 + (nr == 0); /* the final NUL; an empty list is two */
	if (need > 0xFFFFFFFFu)
		return PDH_MEMORY_ALLOCATION_FAILURE;
	if (!buf || *size < need) {
		*size = (DWORD)need;
		return PDH_MORE_DATA;
	}
	for (i = 0; i < nr; i++)
		off += pdh_put((char *)buf + off * unit, strs[i], wide);
	if (multi) {
		memset((char *)buf + off * unit, 0, unit * (1 + (nr == 0)));
		off += 1 + (nr == 0);
	}
	*size = (DWORD)off;
	return 0;
}

int pdh_strs_take(struct pdh_strs *l, char *s)
{
	char **grown;

	if (!s)
		return -ENOMEM;
	if (l->nr == l->cap) {
		grown = realloc(l->v, (l->cap ? l->cap * 2 : 16) * sizeof(*grown));
		if (!grown) {
			free(s);
			return -ENOMEM;
		}
		l->v = grown;
		l->cap = l->cap ? l->cap * 2 : 16;
	}
	l->v[l->nr++] = s;
	return 0;
}

int pdh_strs_add(struct pdh_strs *l, const char *s)
{
	return pdh_strs_take(l, strdup(s));
}

bool pdh_strs_has(const struct pdh_strs *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->nr; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

void pdh_strs_free(struct pdh_strs *l)
{
	size_t i;

	for (i = 0; i < l->nr; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- machines, codes, time ----------------------------------------------------------- */

static char host[256];

static void host_init(void)
{
	/* the short host name, as Windows shows its computer name */
	if (gethostname(host, sizeof(host)) || !host[0])
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	host[strcspn(host, ".")] = '\0';
}

const char *pdh_host(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, host_init);
	return host;
}

const WCHAR *pdh_machine_w(const char *name, WCHAR *buf)
{
	if (pdh_machine_local(name))
		return NULL;
	while (*name == '\\')
		name++;
	if (perflib_utf8_to_utf16(name, buf, PDH_MACHINE_UNITS) < 0)
		return PDH_BAD_MACHINE;
	return buf;
}

/* the other machines connected or named in a query: PdhEnumMachines lists them */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pdh_strs seen;

int pdh_machine_seen(const char *name)
{
	char *s;
	int err = 0;

	while (*name == '\\')
		name++;
	if (asprintf(&s, "\\\\%s", name) < 0)
		return -ENOMEM;
	pthread_mutex_lock(&seen_lock);
	if (!pdh_strs_has(&seen, s))
		err = pdh_strs_take(&seen, s);
	else
		free(s);
	pthread_mutex_unlock(&seen_lock);
	return err;
}

int pdh_machines_seen(struct pdh_strs *l)
{
	size_t i;
	int err = 0;

	pthread_mutex_lock(&seen_lock);
	for (i = 0; !err && i < seen.nr; i++)
		err = pdh_strs_add(l, seen.v[i]);
	pthread_mutex_unlock(&seen_lock);
	return err;
}

bool pdh_machine_local(const char *name)
{
	char full[256];

	if (!name)
		return true;
	while (*name == '\\')
		name++;
	if (!*name || !strcmp(name, ".") || !strcasecmp(name, "localhost") ||
	    !strcasecmp(name, pdh_host()))
		return true;
	return !gethostname(full, sizeof(full)) && (full[sizeof(full) - 1] = '\0', 1) &&
	       !strcasecmp(name, full);
}

PDH_STATUS pdh_from_win32(ULONG code)
{
	switch (code) {
	case ERROR_SUCCESS:
		return 0;
	case ERROR_BAD_NETPATH:
		return PDH_CSTATUS_NO_MACHINE;
	case ERROR_ACCESS_DENIED:
		return PDH_ACCESS_DENIED;
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return PDH_MEMORY_ALLOCATION_FAILURE;
	case ERROR_FILE_NOT_FOUND:
	case ERROR_WMI_GUID_NOT_FOUND:
		return PDH_CSTATUS_NO_OBJECT;
	case ERROR_NOT_FOUND:
		return PDH_CSTATUS_NO_COUNTER;
	case ERROR_WMI_INSTANCE_NOT_FOUND:
		return PDH_CSTATUS_NO_INSTANCE;
	default:
		return PDH_CSTATUS_INVALID_DATA;
	}
}

int64_t pdh_local_filetime(int64_t utc)
{
	struct tm tm;
	time_t t = (time_t)perflib_filetime_to_unix(utc);

	if (!localtime_r(&t, &tm))
		return utc;
	return utc + (int64_t)tm.tm_gmtoff * 10000000;
}

/* ---- the catalog --------------------------------------------------------------------- */

ULONG pdh_fetch_into(pdh_fetch_fn fn, void *ctx, void **buf, DWORD *cap, DWORD *ret_size)
{
	DWORD actual = 0, size;
	void *grown;
	ULONG st;
	int i;

	st = fn(ctx, *buf, *cap, &actual);
	for (i = 0; st == ERROR_NOT_ENOUGH_MEMORY && i < SIZE_RETRIES; i++) {
		/* slack: the data may grow before the next call (instances come and go) */
		size = actual + actual / 4 + 256;
		if (size < actual || size <= *cap)
			return ERROR_NOT_ENOUGH_MEMORY; /* an answer that cannot be sized */
		grown = realloc(*buf, size);
		if (!grown)
			return ERROR_OUTOFMEMORY;
		*buf = grown;
		*cap = size;
		st = fn(ctx, *buf, *cap, &actual);
	}
	if (st != ERROR_SUCCESS)
		return st;
	if (actual > *cap)
		return ERROR_INVALID_DATA;
	*ret_size = actual;
	return ERROR_SUCCESS;
}

ULONG pdh_fetch(pdh_fetch_fn fn, void *ctx, void **ret, DWORD *ret_size)
{
	void *buf = NULL;
	DWORD cap = 0;
	ULONG st = pdh_fetch_into(fn, ctx, &buf, &cap, ret_size);

	if (st == ERROR_SUCCESS && !buf)
		buf = calloc(1, 8); /* success with nothing to return */
	if (st == ERROR_SUCCESS && !buf)
		st = ERROR_OUTOFMEMORY;
	if (st) {
		free(buf);
		return st;
	}
	*ret = buf;
	return ERROR_SUCCESS;
}

ULONG pdh_call_reg(void *ctx, void *buf, DWORD size, DWORD *actual)
{
	const struct pdh_reg_call *c = ctx;

	return PerfQueryCounterSetRegistrationInfo(c->machine, c->guid, c->code, 0, buf, size,
						   actual);
}

ULONG pdh_call_instances(void *ctx, void *buf, DWORD size, DWORD *actual)
{
	const struct pdh_reg_call *c = ctx;

	return PerfEnumerateCounterSetInstances(c->machine, c->guid, buf, size, actual);
}

struct guids {
	GUID *v;
	DWORD nr;
};

ULONG pdh_call_sets(void *ctx, void *buf, DWORD size, DWORD *actual)
{
	const struct pdh_reg_call *c = ctx;
	ULONG st = PerfEnumerateCounterSet(c ? c->machine : NULL, buf, size / sizeof(GUID), actual);

	*actual *= sizeof(GUID);
	return st;
}

static ULONG load_instances(const WCHAR *machine, struct pdh_cat_set *set);

/* registration, names and (when wanted) instances of one counter set into @set */
static ULONG load_set(const WCHAR *machine, const GUID *guid, bool instances,
		      struct pdh_cat_set *set)
{
	struct pdh_reg_call c = {.guid = guid, .machine = machine};
	DWORD size;
	void *buf;
	ULONG st;
	int err;

	c.code = PERF_REG_COUNTERSET_STRUCT;
	st = pdh_fetch(pdh_call_reg, &c, &buf, &size);
	if (st)
		return st;
	err = pdh_decode_reg(buf, size, set);
	free(buf);
	if (err)
		return err == -ENOMEM ? ERROR_OUTOFMEMORY : ERROR_INVALID_DATA;
	set->guid = *guid;
	/* the display name; the English name when no localized one is registered */
	c.code = PERF_REG_COUNTERSET_NAME_STRING;
	st = pdh_fetch(pdh_call_reg, &c, &buf, &size);
	if (st) {
		c.code = PERF_REG_COUNTERSET_ENGLISH_NAME;
		st = pdh_fetch(pdh_call_reg, &c, &buf, &size);
	}
	if (!st) {
		err = pdh_perfbuf_string(buf, size, &set->name);
		free(buf);
		if (err == -ENOMEM)
			return ERROR_OUTOFMEMORY;
	}
	c.code = PERF_REG_COUNTER_NAME_STRINGS;
	st = pdh_fetch(pdh_call_reg, &c, &buf, &size);
	if (st) {
		c.code = PERF_REG_COUNTER_ENGLISH_NAMES;
		st = pdh_fetch(pdh_call_reg, &c, &buf, &size);
	}
	if (!st) {
		/* a malformed name block leaves the counters named by id */
		err = pdh_decode_names(buf, size, set);
		free(buf);
		if (err == -ENOMEM)
			return ERROR_OUTOFMEMORY;
	}
	if (pdh_cat_set_finish(set))
		return ERROR_OUTOFMEMORY;
	return instances ? load_instances(machine, set) : ERROR_SUCCESS;
}

ULONG pdh_cat_set_load_instances(struct pdh_cat_set *set, const char *machine)
{
	WCHAR buf[PDH_MACHINE_UNITS];
	const WCHAR *m = pdh_machine_w(machine, buf);

	return m == PDH_BAD_MACHINE ? ERROR_BAD_NETPATH : load_instances(m, set);
}

static ULONG load_instances(const WCHAR *machine, struct pdh_cat_set *set)
{
	struct pdh_reg_call c = {.guid = &set->guid, .machine = machine};
	DWORD size;
	void *buf;
	ULONG st;
	int err;

	if (!pdh_cat_set_multi(set))
		return ERROR_SUCCESS;
	st = pdh_fetch(pdh_call_instances, &c, &buf, &size);
	if (st)
		return st;
	err = pdh_decode_instances(buf, size, &set->instances, &set->nr_instances);
	free(buf);
	if (err)
		return err == -ENOMEM ? ERROR_OUTOFMEMORY : ERROR_INVALID_DATA;
	return ERROR_SUCCESS;
}

ULONG pdh_catalog_load(struct pdh_catalog *cat, const char *machine, bool instances,
		       void (*warn)(const GUID *set, ULONG code))
{
	WCHAR mbuf[PDH_MACHINE_UNITS];
	const WCHAR *m = pdh_machine_w(machine, mbuf);
	struct pdh_reg_call call = {.machine = m};
	struct pdh_cat_set *sets;
	DWORD size = 0, nr, i;
	GUID *guids;
	ULONG st;

	memset(cat, 0, sizeof(*cat));
	if (m == PDH_BAD_MACHINE)
		return ERROR_BAD_NETPATH;
	st = pdh_fetch(pdh_call_sets, &call, (void **)&guids, &size);
	if (st)
		return st;
	nr = size / sizeof(GUID);
	sets = calloc(nr ? nr : 1, sizeof(*sets));
	if (!sets) {
		free(guids);
		return ERROR_OUTOFMEMORY;
	}
	cat->sets = sets;
	for (i = 0; i < nr; i++) {
		st = load_set(m, &guids[i], instances, &sets[cat->nr_sets]);
		if (st == ERROR_OUTOFMEMORY) {
			pdh_cat_set_free(&sets[cat->nr_sets]);
			break;
		}
		if (st) {
			/* unregistered since the enumeration, or unreadable: leave it out */
			if (warn)
				warn(&guids[i], st);
			pdh_cat_set_free(&sets[cat->nr_sets]);
			continue;
		}
		cat->nr_sets++;
	}
	free(guids);
	if (st == ERROR_OUTOFMEMORY) {
		pdh_catalog_free(cat);
		return st;
	}
	return ERROR_SUCCESS;
}

struct explain_ctx {
	uint32_t id;
	char *text;
};

static int explain_fn(void *ctx, uint32_t id, const void *text, size_t units)
{
	struct explain_ctx *e = ctx;

	if (id != e->id || e->text)
		return 0;
	e->text = pdh_perfbuf_utf16_dup(text, units);
	return e->text ? 0 : -ENOMEM;
}

char *pdh_explain(const char *machine, const GUID *guid, uint32_t id)
{
	WCHAR mbuf[PDH_MACHINE_UNITS];
	const WCHAR *m = pdh_machine_w(machine, mbuf);
	struct pdh_reg_call c = {.guid = guid, .code = PERF_REG_COUNTER_HELP_STRINGS, .machine = m};
	struct explain_ctx e = {.id = id};
	DWORD size;
	void *buf;

	if (m == PDH_BAD_MACHINE || pdh_fetch(pdh_call_reg, &c, &buf, &size))
		return NULL;
	if (pdh_perfbuf_strings_parse(buf, size, explain_fn, &e)) {
		free(e.text);
		e.text = NULL;
	}
	free(buf);
	return e.text;
}
