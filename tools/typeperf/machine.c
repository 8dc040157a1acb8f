/* SPDX-License-Identifier: MIT */
/*
 * machine.c - what -q/-qx read of a computer, through the public PDH API as the Windows
 * tool reads it: the object names (PdhEnumObjects), then each object's counters and
 * instances (PdhEnumObjectItems), every list with the size-then-fill protocol, asked
 * again while it grows between the two calls. Other computers are PDH's to reach.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "typeperf.h"

/* how often a list that grew between the size and the fill call is asked again */
#define TP_LIST_TRIES 8

/*
 * every detail level: typeperf lists all counters (PERF_DETAIL_STANDARD is the whole
 * level word, above PERF_DETAIL_WIZARD)
 */
#define TP_LEVEL PERF_DETAIL_STANDARD

const char *tp_pdh_str(PDH_STATUS status)
{
	switch (status) {
	case ERROR_SUCCESS:
		return "success";
	case PDH_CSTATUS_NO_MACHINE:
		return "the computer cannot be reached (no perflib-exporter answers there)";
	case PDH_ACCESS_DENIED:
		return "access denied";
	case PDH_MEMORY_ALLOCATION_FAILURE:
		return "out of memory";
	case PDH_CSTATUS_NO_OBJECT:
	case PDH_CSTATUS_NO_COUNTER:
		return "not found";
	case PDH_CSTATUS_NO_INSTANCE:
		return "instance not found";
	case PDH_CSTATUS_INVALID_DATA:
		return "invalid data";
	case PDH_INVALID_ARGUMENT:
		return "invalid parameter";
	case PDH_MORE_DATA:
		return "the list kept changing while it was read";
	case PDH_NOT_IMPLEMENTED:
		return "not implemented";
	default:
		return "error";
	}
}

int tp_machine_init(struct tp_machine *m, const char *name)
{
	char host[256];

	memset(m, 0, sizeof(*m));
	if (name) {
		/* PDH takes the computer as "\\name" */
		if (asprintf(&m->name, "\\\\%s", name) < 0) {
			m->name = NULL;
			return -ENOMEM;
		}
		m->display = strdup(name);
		return m->display ? 0 : -ENOMEM;
	}
	/* the short host name, as Windows shows its computer name */
	if (gethostname(host, sizeof(host)) || !host[0])
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	host[strcspn(host, ".")] = '\0';
	m->display = strdup(host);
	return m->display ? 0 : -ENOMEM;
}

void tp_machine_free(struct tp_machine *m)
{
	free(m->name);
	free(m->display);
	memset(m, 0, sizeof(*m));
}

/* *@buf resized to @len bytes (at least 1); false on ENOMEM (*@buf kept) */
static bool grow(char **buf, DWORD len)
{
	char *p = realloc(*buf, len ? len : 1);

	if (!p)
		return false;
	*buf = p;
	return true;
}

PDH_STATUS tp_machine_objects(const struct tp_machine *m, char **ret_list)
{
	char *list = NULL;
	DWORD len = 0;
	PDH_STATUS st;
	int tries;

	/* the documented pattern: the size with a refresh, then the list without */
	st = PdhEnumObjectsA(NULL, m->name, NULL, &len, TP_LEVEL, TRUE);
	for (tries = 0; st == PDH_MORE_DATA && tries < TP_LIST_TRIES; tries++) {
		if (!grow(&list, len)) {
			st = PDH_MEMORY_ALLOCATION_FAILURE;
			break;
		}
		st = PdhEnumObjectsA(NULL, m->name, list, &len, TP_LEVEL, FALSE);
	}
	/* a size call never succeeds: success means the list was written */
	if (st || !list) {
		free(list);
		return st ? st : PDH_CSTATUS_INVALID_DATA;
	}
	*ret_list = list;
	return 0;
}

PDH_STATUS tp_machine_items(const struct tp_machine *m, const char *object, char **ret_counters,
			    char **ret_instances)
{
	char *ctrs = NULL, *insts = NULL;
	DWORD cl = 0, il = 0;
	PDH_STATUS st;
	int tries;

	st = PdhEnumObjectItemsA(NULL, m->name, object, NULL, &cl, NULL, &il, TP_LEVEL, 0);
	for (tries = 0; st == PDH_MORE_DATA && tries < TP_LIST_TRIES; tries++) {
		/* an instance size of 0: the object has no instances, no list to fill */
		if (!grow(&ctrs, cl) || (il && !grow(&insts, il))) {
			st = PDH_MEMORY_ALLOCATION_FAILURE;
			break;
		}
		st = PdhEnumObjectItemsA(NULL, m->name, object, ctrs, &cl, il ? insts : NULL, &il,
					 TP_LEVEL, 0);
	}
	if (st || !ctrs) {
		free(ctrs);
		free(insts);
		return st ? st : PDH_CSTATUS_INVALID_DATA;
	}
	/* size 0 after the fill: single-instance; 2 or more (an empty list): multi-instance */
	if (!il) {
		free(insts);
		insts = NULL;
	}
	*ret_counters = ctrs;
	*ret_instances = insts;
	return 0;
}
