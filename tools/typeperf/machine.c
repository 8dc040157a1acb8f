/* SPDX-License-Identifier: MIT */
/*
 * machine.c - reading a computer's counter sets through the consumer API: counter-set
 * GUIDs (PerfEnumerateCounterSet), registration and names
 * (PerfQueryCounterSetRegistrationInfo), instances (PerfEnumerateCounterSetInstances).
 * Every buffer is sized by the Windows protocol (call, ERROR_NOT_ENOUGH_MEMORY with the
 * size, call again; retried because the data may change in between) and decoded by
 * tools/common/perfbuf.c (into typeperf's structures by tp_buf.c), which checks every
 * size against what came back.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perflib-linux.h"
#include "perfbuf.h"
#include "tp_buf.h"
#include "typeperf.h"

#define SIZE_RETRIES 8 /* data growing between the sizing call and the real one */

void tp_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("typeperf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *tp_win32_str(ULONG code)
{
	switch (code) {
	case ERROR_SUCCESS:
		return "success";
	case ERROR_FILE_NOT_FOUND:
		return "not found";
	case ERROR_ACCESS_DENIED:
		return "access denied";
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return "out of memory";
	case ERROR_INVALID_DATA:
		return "invalid data";
	case ERROR_BAD_NETPATH:
		return "the computer is not this machine (remote computers are not supported)";
	case ERROR_INVALID_PARAMETER:
		return "invalid parameter";
	case ERROR_NO_DATA:
		return "no data";
	case ERROR_NOT_FOUND:
		return "not found";
	case ERROR_TIMEOUT:
		return "timed out";
	case ERROR_WMI_GUID_NOT_FOUND:
		return "counter set not registered";
	case ERROR_WMI_INSTANCE_NOT_FOUND:
		return "instance not found";
	case ERROR_CALL_NOT_IMPLEMENTED:
		return "not implemented";
	default:
		return "error";
	}
}

/* one consumer-API call with the buffer protocol, behind a common signature */
struct call {
	const WCHAR *machine;
	const GUID *guid;
	PerfRegInfoType code;
};

typedef ULONG (*call_fn)(const struct call *c, void *buf, DWORD size, DWORD *actual);

static ULONG call_reg(const struct call *c, void *buf, DWORD size, DWORD *actual)
{
	return PerfQueryCounterSetRegistrationInfo(c->machine, c->guid, c->code, 0, buf, size,
						   actual);
}

static ULONG call_instances(const struct call *c, void *buf, DWORD size, DWORD *actual)
{
	return PerfEnumerateCounterSetInstances(c->machine, c->guid, buf, size, actual);
}

/*
 * run @fn until the buffer is large enough; *@ret (malloc'd, at least 8 bytes, 8-aligned)
 * holds *@ret_size valid bytes. Returns the last Win32 code.
 */
static ULONG fetch(call_fn fn, const struct call *c, void **ret, DWORD *ret_size)
{
	DWORD size = 0, actual = 0;
	void *buf = NULL, *grown;
	ULONG st;
	int i;

	st = fn(c, NULL, 0, &actual);
	for (i = 0; st == ERROR_NOT_ENOUGH_MEMORY && i < SIZE_RETRIES; i++) {
		/* a little slack in case the data grows before the next call */
		size = actual + 256;
		grown = realloc(buf, size);
		if (!grown) {
			free(buf);
			return ERROR_OUTOFMEMORY;
		}
		buf = grown;
		st = fn(c, buf, size, &actual);
	}
	if (st != ERROR_SUCCESS || actual > size) {
		free(buf);
		return st == ERROR_SUCCESS ? ERROR_INVALID_DATA : st;
	}
	if (!buf) {
		buf = calloc(1, 8); /* success with nothing to return */
		if (!buf)
			return ERROR_OUTOFMEMORY;
	}
	*ret = buf;
	*ret_size = actual;
	return ERROR_SUCCESS;
}

/* the counter-set GUIDs of @machine */
static ULONG enum_sets(const WCHAR *machine, GUID **ret, DWORD *ret_nr)
{
	DWORD n = 0, have = 0;
	GUID *g = NULL, *grown;
	ULONG st;
	int i;

	st = PerfEnumerateCounterSet(machine, NULL, 0, &n);
	for (i = 0; st == ERROR_NOT_ENOUGH_MEMORY && i < SIZE_RETRIES; i++) {
		have = n + 8;
		grown = realloc(g, have * sizeof(*g));
		if (!grown) {
			free(g);
			return ERROR_OUTOFMEMORY;
		}
		g = grown;
		st = PerfEnumerateCounterSet(machine, g, have, &n);
	}
	if (st != ERROR_SUCCESS || n > have) {
		free(g);
		return st == ERROR_SUCCESS ? ERROR_INVALID_DATA : st;
	}
	*ret = g;
	*ret_nr = n;
	return ERROR_SUCCESS;
}

/* registration, names and (when wanted) instances of one counter set into @set */
static ULONG load_set(const WCHAR *machine, const GUID *guid, bool instances, struct tp_set *set)
{
	struct call c = {.machine = machine, .guid = guid};
	DWORD size;
	void *buf;
	ULONG st;
	int err;

	c.code = PERF_REG_COUNTERSET_STRUCT;
	st = fetch(call_reg, &c, &buf, &size);
	if (st)
		return st;
	err = tp_reg_parse(buf, size, set);
	free(buf);
	if (err)
		return err == -ENOMEM ? ERROR_OUTOFMEMORY : ERROR_INVALID_DATA;
	set->guid = *guid;
	/* the display name; the English name when no localized one is registered */
	c.code = PERF_REG_COUNTERSET_NAME_STRING;
	st = fetch(call_reg, &c, &buf, &size);
	if (st) {
		c.code = PERF_REG_COUNTERSET_ENGLISH_NAME;
		st = fetch(call_reg, &c, &buf, &size);
	}
	if (!st) {
		err = perfbuf_string(buf, size, &set->name);
		free(buf);
		if (err == -ENOMEM)
			return ERROR_OUTOFMEMORY;
	}
	c.code = PERF_REG_COUNTER_NAME_STRINGS;
	st = fetch(call_reg, &c, &buf, &size);
	if (st) {
		c.code = PERF_REG_COUNTER_ENGLISH_NAMES;
		st = fetch(call_reg, &c, &buf, &size);
	}
	if (!st) {
		/* a malformed name block leaves the counters named by id */
		err = tp_names_parse(buf, size, set);
		free(buf);
		if (err == -ENOMEM)
			return ERROR_OUTOFMEMORY;
	}
	if (tp_set_finish(set))
		return ERROR_OUTOFMEMORY;
	if (!instances || !tp_set_multi(set))
		return ERROR_SUCCESS;
	st = fetch(call_instances, &c, &buf, &size);
	if (st)
		return st;
	err = tp_instances_parse(buf, size, &set->instances, &set->nr_instances);
	free(buf);
	if (err)
		return err == -ENOMEM ? ERROR_OUTOFMEMORY : ERROR_INVALID_DATA;
	return ERROR_SUCCESS;
}

int tp_machine_init(struct tp_machine *m, const char *name)
{
	char host[256];
	size_t units;
	int err;

	memset(m, 0, sizeof(*m));
	m->load_status = ERROR_NOT_FOUND;
	if (name) {
		m->name = strdup(name);
		m->display = strdup(name);
		if (!m->name || !m->display)
			return -ENOMEM;
		err = perfbuf_utf8_to_utf16(name, &m->wname, &units);
		if (err == -ENOMEM)
			return err;
		if (err)
			m->wname = NULL, m->load_status = ERROR_BAD_NETPATH;
		return 0;
	}
	/* the short host name, as Windows shows its computer name */
	if (gethostname(host, sizeof(host)) || !host[0])
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	host[strcspn(host, ".")] = '\0';
	m->display = strdup(host);
	return m->display ? 0 : -ENOMEM;
}

void tp_machine_load(struct tp_machine *m, bool instances)
{
	struct tp_set *sets;
	DWORD nr = 0, i;
	GUID *guids;
	ULONG st;

	if (m->name && !m->wname)
		return; /* a name that is no valid UTF-8: keeps ERROR_BAD_NETPATH */
	st = enum_sets(m->wname, &guids, &nr);
	if (st) {
		m->load_status = st;
		return;
	}
	sets = calloc(nr ? nr : 1, sizeof(*sets));
	if (!sets) {
		free(guids);
		m->load_status = ERROR_OUTOFMEMORY;
		return;
	}
	m->cat.sets = sets;
	for (i = 0; i < nr; i++) {
		st = load_set(m->wname, &guids[i], instances, &sets[m->cat.nr_sets]);
		if (st == ERROR_OUTOFMEMORY) {
			tp_set_free(&sets[m->cat.nr_sets]);
			break;
		}
		if (st) {
			/* unregistered since the enumeration, or unreadable: leave it out */
			char g[37];

			tp_warn("counter set %s skipped: %s", perflib_guid_to_string(&guids[i], g),
				tp_win32_str(st));
			tp_set_free(&sets[m->cat.nr_sets]);
			continue;
		}
		m->cat.nr_sets++;
	}
	free(guids);
	m->load_status = st == ERROR_OUTOFMEMORY ? st : ERROR_SUCCESS;
}

void tp_machine_free(struct tp_machine *m)
{
	if (m->query)
		PerfCloseQueryHandle(m->query);
	tp_catalog_free(&m->cat);
	free(m->name);
	free(m->display);
	free(m->wname);
	free(m->set_index);
	free(m->spec_ids);
	memset(m, 0, sizeof(*m));
}
