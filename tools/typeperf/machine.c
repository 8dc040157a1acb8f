/* SPDX-License-Identifier: MIT */
/*
 * machine.c - reading a computer's counter sets through the consumer API: counter-set
 * GUIDs (PerfEnumerateCounterSet), registration and names
 * (PerfQueryCounterSetRegistrationInfo), instances (PerfEnumerateCounterSetInstances).
 * The catalog is read by libpdh's loader (pdh_catalog_load, pdh/common.c: the one
 * buffer-protocol helper), decoded by perfbuf.c and decode.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perflib-linux.h"
#include "perfbuf.h"
#include "decode.h"
#include "tool.h"
#include "typeperf.h"

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
		err = pdh_perfbuf_utf8_to_utf16(name, &m->wname, &units);
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

static void skipped(const GUID *set, ULONG code)
{
	char g[37];

	tool_warn("counter set %s skipped: %s", perflib_guid_to_string(set, g), tp_win32_str(code));
}

void tp_machine_load(struct tp_machine *m, bool instances)
{
	if (m->name && !m->wname)
		return; /* a name that is no valid UTF-8: keeps ERROR_BAD_NETPATH */
	/* remote computers are not supported by the consumer API */
	if (m->name) {
		GUID g;
		DWORD n = 0;
		ULONG st = PerfEnumerateCounterSet(m->wname, &g, 0, &n);

		if (st == ERROR_BAD_NETPATH) {
			m->load_status = st;
			return;
		}
	}
	m->load_status = pdh_catalog_load(&m->cat, instances, skipped);
}

void tp_machine_free(struct tp_machine *m)
{
	pdh_catalog_free(&m->cat);
	free(m->name);
	free(m->display);
	free(m->wname);
	memset(m, 0, sizeof(*m));
}
