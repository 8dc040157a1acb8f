/* SPDX-License-Identifier: MIT */
/*
 * enum.c - enumeration (pdh.md 5.8, 8.1), machines, name indexes (5.9, 8.6) and the version.
 * Objects are the registered counter sets; a set's detail level is the lowest of its
 * counters' (port rule). The lists hold what paths can name, in a fixed order: an object
 * name once (two sets of one name: the first, as paths resolve), counters in registration
 * order, each name once and none whose name an earlier hidden counter takes, instances in
 * enumeration order with duplicates repeated (port rules; Windows: order "undetermined").
 * Name indexes are even numbers derived from the name (FNV-1a of the
 * lower-cased name), so an index stays the same while its name is registered and
 * IndexByName round-trips through NameByIndex.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ctrtype.h"
#include "pdh_internal.h"

static DWORD set_level(const struct pdh_cat_set *set)
{
	DWORD lvl = PERF_DETAIL_WIZARD;
	size_t i;

	for (i = 0; i < set->nr_counters; i++)
		if (set->counters[i].detail_level && set->counters[i].detail_level < lvl)
			lvl = set->counters[i].detail_level;
	return set->nr_counters ? lvl : PERF_DETAIL_NOVICE;
}

/*
 * ---- snapshots (pdh.md 5.8.2) ----------------------------------------------------------
 * Windows answers enumeration from the machine's cached object list until PdhEnumObjects
 * with bRefresh TRUE: the two calls of the size-then-fill protocol see the same lists even
 * when a counter set or an instance appears or goes in between. Here each machine (by the
 * name given, NULL and "" alike) has one snapshot of its object names, taken by its first
 * PdhEnumObjects or by a refresh, and one of each object's counters and instances, taken
 * by the object's first PdhEnumObjectItems; a refresh drops them all. Names are kept with
 * their detail levels, so every level is answered from one snapshot. Logs are not cached.
 */
struct snap {
	struct snap *next;
	char *machine;	       /* as given, "" for the local default */
	char *object;	       /* NULL: the object list */
	struct pdh_strs names; /* objects, or the object's counters */
	DWORD *levels;	       /* detail level of each of names */
	struct pdh_strs insts; /* instances, duplicates repeated */
	bool multi;	       /* the object has instances */
};

static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct snap *snaps;

static void snap_free(struct snap *sn)
{
	if (!sn)
		return;
	free(sn->machine);
	free(sn->object);
	pdh_strs_free(&sn->names);
	pdh_strs_free(&sn->insts);
	free(sn->levels);
	free(sn);
}

/* under snap_lock: the snapshot of @object (NULL: the object list) on @machine, or NULL */
static struct snap *snap_find(const char *machine, const char *object)
{
	struct snap *sn;

	for (sn = snaps; sn; sn = sn->next)
		if (pdh_name_equal(sn->machine, machine ? machine : "") &&
		    (object ? sn->object && pdh_name_equal(sn->object, object) : !sn->object))
			return sn;
	return NULL;
}

/* under snap_lock: forget every snapshot of @machine (PdhEnumObjects with bRefresh TRUE) */
static void snap_drop(const char *machine)
{
	struct snap **p = &snaps, *sn;

	while ((sn = *p)) {
		if (pdh_name_equal(sn->machine, machine ? machine : "")) {
			*p = sn->next;
			snap_free(sn);
		} else {
			p = &sn->next;
		}
	}
}

static struct snap *snap_new(const char *machine, const char *object)
{
	struct snap *sn = calloc(1, sizeof(*sn));

	if (!sn)
		return NULL;
	sn->machine = strdup(machine ? machine : "");
	sn->object = object ? strdup(object) : NULL;
	if (!sn->machine || (object && !sn->object)) {
		snap_free(sn);
		return NULL;
	}
	return sn;
}

/* add @name at @level; -ENOMEM */
static int snap_add(struct snap *sn, const char *name, DWORD level)
{
	DWORD *l = realloc(sn->levels, (sn->names.nr + 1) * sizeof(*l));

	if (!l)
		return -ENOMEM;
	sn->levels = l;
	l[sn->names.nr] = level;
	return pdh_strs_add(&sn->names, name);
}

/*
 * the names of @sn up to @level (what a call at that level lists) in @out->v: the pointers
 * are the snapshot's strings, so only @out->v is freed
 */
static int snap_names(const struct snap *sn, DWORD level, struct pdh_strs *out)
{
	size_t i;

	out->v = calloc(sn->names.nr + 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (i = 0; i < sn->names.nr; i++)
		if ((level & 0xFFFF) >= sn->levels[i])
			out->v[out->nr++] = sn->names.v[i];
	return 0;
}

/* the object list of the registered sets, as a new snapshot */
static PDH_STATUS snap_objects(const char *machine, struct snap **ret)
{
	struct pdh_catalog cat;
	struct snap *sn;
	ULONG ws;
	size_t i;
	int err = 0;

	ws = pdh_catalog_load(&cat, machine, false, NULL);
	if (ws)
		return pdh_from_win32(ws);
	sn = snap_new(machine, NULL);
	for (i = 0; sn && !err && i < cat.nr_sets; i++)
		/* a name once: the set a path with it names (the first, port rule) */
		if (pdh_cat_set_find(&cat, cat.sets[i].name) == (long)i)
			err = snap_add(sn, cat.sets[i].name, set_level(&cat.sets[i]));
	pdh_catalog_free(&cat);
	if (!sn || err) {
		snap_free(sn);
		return PDH_MEMORY_ALLOCATION_FAILURE;
	}
	*ret = sn;
	return 0;
}

static PDH_STATUS objects_common(PDH_HLOG source, const char *machine, void *list, LPDWORD len,
				 DWORD level, bool wide, bool refresh)
{
	struct pdh_strs out = {0};
	struct snap *sn;
	PDH_STATUS st = 0;
	size_t i;

	if (!len)
		return PDH_INVALID_ARGUMENT;
	/* another machine: its counter sets through its exporter (docs/REMOTE.md) */
	if (source && !pdh_machine_local(machine))
		return PDH_CSTATUS_NO_MACHINE;
	if (source) {
		struct pdh_log *log = pdh_handle_get(source, PDH_KIND_LOG);
		struct pdh_cpath p;

		if (!log || log->writing)
			return PDH_INVALID_HANDLE;
		for (i = 0; !st && i < log->nr_paths; i++) {
			if (pdh_cpath_parse(log->paths[i], &p))
				continue;
			if (!pdh_strs_has(&out, p.object) && pdh_strs_add(&out, p.object))
				st = PDH_MEMORY_ALLOCATION_FAILURE;
			pdh_cpath_free(&p);
		}
		if (!st)
			st = pdh_put_list(out.v, out.nr, true, list, len, wide);
		pdh_strs_free(&out);
		return st;
	}
	pthread_mutex_lock(&snap_lock);
	if (refresh)
		snap_drop(machine);
	sn = snap_find(machine, NULL);

	if (!sn) {
		st = snap_objects(machine, &sn);
		if (!st) {
			sn->next = snaps;
			snaps = sn;
		}
	}
	if (!st && snap_names(sn, level, &out))
		st = PDH_MEMORY_ALLOCATION_FAILURE;
	if (!st)
		st = pdh_put_list(out.v, out.nr, true, list, len, wide);
	pthread_mutex_unlock(&snap_lock);
	free(out.v); /* the strings are the snapshot's */
	return st;
}

PDH_FUNCTION PdhEnumObjectsHA(PDH_HLOG hDataSource, LPCSTR szMachineName, LPSTR mszObjectList,
			      LPDWORD pcchBufferSize, DWORD dwDetailLevel, BOOL bRefresh)
{
	return objects_common(hDataSource, szMachineName, mszObjectList, pcchBufferSize,
			      dwDetailLevel, false, bRefresh);
}

PDH_FUNCTION PdhEnumObjectsA(LPCSTR szDataSource, LPCSTR szMachineName, LPSTR mszObjectList,
			     LPDWORD pcchBufferSize, DWORD dwDetailLevel, BOOL bRefresh)
{
	char list[PDH_MAX_DATASOURCE_PATH + 2];
	PDH_HLOG log = NULL;
	PDH_STATUS st;

	if (szDataSource) {
		if (strlen(szDataSource) > PDH_MAX_DATASOURCE_PATH)
			return PDH_INVALID_ARGUMENT;
		memcpy(list, szDataSource, strlen(szDataSource) + 1);
		list[strlen(szDataSource) + 1] = '\0';
		st = PdhBindInputDataSourceA(&log, list);
		if (st)
			return st;
	}
	st = PdhEnumObjectsHA(log, szMachineName, mszObjectList, pcchBufferSize, dwDetailLevel,
			      bRefresh);
	if (log)
		PdhCloseLog(log, 0);
	return st;
}

PDH_FUNCTION PdhEnumObjectsHW(PDH_HLOG hDataSource, LPCWSTR szMachineName, LPWSTR mszObjectList,
			      LPDWORD pcchBufferSize, DWORD dwDetailLevel, BOOL bRefresh)
{
	PDH_STATUS st = 0;
	char *m = pdh_w2u(szMachineName, &st);

	if (!st)
		st = objects_common(hDataSource, m, mszObjectList, pcchBufferSize, dwDetailLevel,
				    true, bRefresh);
	free(m);
	return st;
}

PDH_FUNCTION PdhEnumObjectsW(LPCWSTR szDataSource, LPCWSTR szMachineName, LPWSTR mszObjectList,
			     LPDWORD pcchBufferSize, DWORD dwDetailLevel, BOOL bRefresh)
{
	PDH_STATUS st = 0;
	char *src = pdh_w2u(szDataSource, &st), *m = pdh_w2u(szMachineName, &st);
	char list[PDH_MAX_DATASOURCE_PATH + 2];
	PDH_HLOG log = NULL;

	if (!st && src) {
		if (strlen(src) > PDH_MAX_DATASOURCE_PATH) {
			st = PDH_INVALID_ARGUMENT;
		} else {
			memcpy(list, src, strlen(src) + 1);
			list[strlen(src) + 1] = '\0';
			st = PdhBindInputDataSourceA(&log, list);
		}
	}
	if (!st)
		st = objects_common(log, m, mszObjectList, pcchBufferSize, dwDetailLevel, true,
				    bRefresh);
	if (log)
		PdhCloseLog(log, 0);
	free(src);
	free(m);
	return st;
}

/* @object's counters and instances, as a new snapshot */
static PDH_STATUS snap_items(const char *machine, const char *object, struct snap **ret)
{
	struct pdh_catalog cat;
	const struct pdh_cat_set *set;
	struct snap *sn = NULL;
	ULONG ws;
	size_t i;
	long k;
	int err = 0;

	/* every set's registration (to find the name), the instances of that one only */
	ws = pdh_catalog_load(&cat, machine, false, NULL);
	if (ws)
		return pdh_from_win32(ws);
	k = pdh_cat_set_find(&cat, object);
	ws = k < 0 ? ERROR_WMI_GUID_NOT_FOUND : pdh_cat_set_load_instances(&cat.sets[k], machine);
	if (ws) {
		pdh_catalog_free(&cat);
		return pdh_from_win32(ws);
	}
	set = &cat.sets[k];
	sn = snap_new(machine, object);
	/*
	 * registration order; each name once, and only when a path with that name can name
	 * the counter: the first counter of a name is the one paths resolve to (port rule)
	 */
	for (i = 0; sn && !err && i < set->nr_counters; i++) {
		const struct pdh_cat_counter *t = &set->counters[i];

		if (pdh_cat_counter_listed(t) && pdh_cat_counter_first(set, i))
			err = snap_add(sn, t->name, t->detail_level);
	}
	/* duplicates repeated, no "#n" (port rule, pdh.md 5.8.2) */
	for (i = 0; sn && !err && i < set->nr_instances; i++)
		err = pdh_strs_add(&sn->insts, set->instances[i].name);
	if (sn)
		sn->multi = pdh_cat_set_multi(set);
	pdh_catalog_free(&cat);
	if (!sn || err) {
		snap_free(sn);
		return PDH_MEMORY_ALLOCATION_FAILURE;
	}
	*ret = sn;
	return 0;
}

static PDH_STATUS items_common(PDH_HLOG source, const char *machine, const char *object, void *ctrs,
			       LPDWORD ctrs_len, void *insts, LPDWORD insts_len, DWORD level,
			       DWORD flags, bool wide)
{
	struct pdh_strs c = {0};
	struct snap *sn;
	PDH_STATUS st = 0, st2;

	if (!object || !ctrs_len || !insts_len || flags || (!ctrs && *ctrs_len) ||
	    (!insts && *insts_len))
		return PDH_INVALID_ARGUMENT;
	if (source)
		return pdh_machine_local(machine)
			       ? PDH_NOT_IMPLEMENTED /* logs: see PdhExpandWildCardPathH */
			       : PDH_CSTATUS_NO_MACHINE;
	pthread_mutex_lock(&snap_lock);
	sn = snap_find(machine, object);
	if (!sn) {
		st = snap_items(machine, object, &sn);
		if (!st) {
			sn->next = snaps;
			snaps = sn;
		}
	}
	if (!st && snap_names(sn, level, &c))
		st = PDH_MEMORY_ALLOCATION_FAILURE;
	if (!st) {
		st = pdh_put_list(c.v, c.nr, true, ctrs, ctrs_len, wide);
		if (!sn->multi) {
			*insts_len = 0; /* no instances: size 0 (DOC) */
			st2 = 0;
		} else {
			st2 = pdh_put_list(sn->insts.v, sn->insts.nr, true, insts, insts_len, wide);
		}
		if (st == PDH_INVALID_ARGUMENT || st2 == PDH_INVALID_ARGUMENT)
			st = PDH_INVALID_ARGUMENT;
		else if (st || st2)
			st = PDH_MORE_DATA;
	}
	pthread_mutex_unlock(&snap_lock);
	free(c.v); /* the strings are the snapshot's */
	return st;
}

PDH_FUNCTION PdhEnumObjectItemsHA(PDH_HLOG hDataSource, LPCSTR szMachineName, LPCSTR szObjectName,
				  LPSTR mszCounterList, LPDWORD pcchCounterListLength,
				  LPSTR mszInstanceList, LPDWORD pcchInstanceListLength,
				  DWORD dwDetailLevel, DWORD dwFlags)
{
	return items_common(hDataSource, szMachineName, szObjectName, mszCounterList,
			    pcchCounterListLength, mszInstanceList, pcchInstanceListLength,
			    dwDetailLevel, dwFlags, false);
}

PDH_FUNCTION PdhEnumObjectItemsA(LPCSTR szDataSource, LPCSTR szMachineName, LPCSTR szObjectName,
				 LPSTR mszCounterList, LPDWORD pcchCounterListLength,
				 LPSTR mszInstanceList, LPDWORD pcchInstanceListLength,
				 DWORD dwDetailLevel, DWORD dwFlags)
{
	if (szDataSource)
		return PDH_NOT_IMPLEMENTED;
	return items_common(NULL, szMachineName, szObjectName, mszCounterList,
			    pcchCounterListLength, mszInstanceList, pcchInstanceListLength,
			    dwDetailLevel, dwFlags, false);
}

PDH_FUNCTION PdhEnumObjectItemsHW(PDH_HLOG hDataSource, LPCWSTR szMachineName, LPCWSTR szObjectName,
				  LPWSTR mszCounterList, LPDWORD pcchCounterListLength,
				  LPWSTR mszInstanceList, LPDWORD pcchInstanceListLength,
				  DWORD dwDetailLevel, DWORD dwFlags)
{
	PDH_STATUS st = 0;
	char *m = pdh_w2u(szMachineName, &st), *o = pdh_w2u(szObjectName, &st);

	if (!st)
		st = items_common(hDataSource, m, o, mszCounterList, pcchCounterListLength,
				  mszInstanceList, pcchInstanceListLength, dwDetailLevel, dwFlags,
				  true);
	free(m);
	free(o);
	return st;
}

PDH_FUNCTION PdhEnumObjectItemsW(LPCWSTR szDataSource, LPCWSTR szMachineName, LPCWSTR szObjectName,
				 LPWSTR mszCounterList, LPDWORD pcchCounterListLength,
				 LPWSTR mszInstanceList, LPDWORD pcchInstanceListLength,
				 DWORD dwDetailLevel, DWORD dwFlags)
{
	if (szDataSource)
		return PDH_NOT_IMPLEMENTED;
	return PdhEnumObjectItemsHW(NULL, szMachineName, szObjectName, mszCounterList,
				    pcchCounterListLength, mszInstanceList, pcchInstanceListLength,
				    dwDetailLevel, dwFlags);
}

/* ---- machines ---------------------------------------------------------------------- */

/* this computer, then the others connected or named in a query's paths (pdh.md 5.8.3) */
static PDH_STATUS machines_common(void *list, LPDWORD len, bool wide)
{
	struct pdh_strs all = {0};
	char *host;
	PDH_STATUS st = PDH_MEMORY_ALLOCATION_FAILURE;

	if (asprintf(&host, "\\\\%s", pdh_host()) < 0)
		return PDH_MEMORY_ALLOCATION_FAILURE;
	if (!pdh_strs_take(&all, host) && !pdh_machines_seen(&all))
		st = pdh_put_list(all.v, all.nr, true, list, len, wide);
	pdh_strs_free(&all);
	return st;
}

PDH_FUNCTION PdhEnumMachinesA(LPCSTR szDataSource, LPSTR mszMachineList, LPDWORD pcchBufferSize)
{
	(void)szDataSource;
	return machines_common(mszMachineList, pcchBufferSize, false);
}

PDH_FUNCTION PdhEnumMachinesW(LPCWSTR szDataSource, LPWSTR mszMachineList, LPDWORD pcchBufferSize)
{
	(void)szDataSource;
	return machines_common(mszMachineList, pcchBufferSize, true);
}

PDH_FUNCTION PdhEnumMachinesHA(PDH_HLOG hDataSource, LPSTR mszMachineList, LPDWORD pcchBufferSize)
{
	(void)hDataSource;
	return machines_common(mszMachineList, pcchBufferSize, false);
}

PDH_FUNCTION PdhEnumMachinesHW(PDH_HLOG hDataSource, LPWSTR mszMachineList, LPDWORD pcchBufferSize)
{
	(void)hDataSource;
	return machines_common(mszMachineList, pcchBufferSize, true);
}

PDH_FUNCTION PdhConnectMachineA(LPCSTR szMachineName)
{
	WCHAR buf[PDH_MACHINE_UNITS];
	const WCHAR *m = pdh_machine_w(szMachineName, buf);
	DWORD n = 0;
	ULONG ws;

	if (!m)
		return 0; /* this computer */
	if (m == PDH_BAD_MACHINE)
		return PDH_CSTATUS_NO_MACHINE;
	/* the machine answers its list of counter sets: connected */
	ws = PerfEnumerateCounterSet(m, NULL, 0, &n);
	if (ws && ws != ERROR_NOT_ENOUGH_MEMORY)
		return pdh_from_win32(ws);
	return pdh_machine_seen(szMachineName) ? PDH_MEMORY_ALLOCATION_FAILURE : 0;
}

PDH_FUNCTION PdhConnectMachineW(LPCWSTR szMachineName)
{
	PDH_STATUS st = 0;
	char *m = pdh_w2u(szMachineName, &st);

	if (!st)
		st = PdhConnectMachineA(m);
	free(m);
	return st;
}

/* ---- name indexes ------------------------------------------------------------------ */

static DWORD name_index(const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name; name++) {
		unsigned char ch = (unsigned char)*name;

		h ^= ch >= 'A' && ch <= 'Z' ? ch + 32 : ch;
		h *= 16777619u;
	}
	return 2 * (1 + h % 0x3FFFFFFEu);
}

/*
 * the name registered on @machine (PDH's spelling; NULL: this one) with index @index, or
 * equal to @want (set or counter name), malloc'd, or NULL. Another machine's names are its
 * own counter sets', read over its connection as PdhEnumObjects reads them (docs/REMOTE.md);
 * an index is a function of the name, so a name has the same index on every machine that
 * registers it. A machine that cannot be reached gives PDH_CSTATUS_NO_MACHINE, one that
 * refuses this client PDH_ACCESS_DENIED, as Windows does for a remote name table.
 */
static char *name_of(const char *machine, DWORD index, const char *want, PDH_STATUS *st)
{
	struct pdh_catalog cat;
	char *r = NULL;
	size_t i, k;
	ULONG ws = pdh_catalog_load(&cat, machine, false, NULL);

	if (ws) {
		*st = pdh_from_win32(ws);
		return NULL;
	}
	for (i = 0; !r && i < cat.nr_sets; i++) {
		const struct pdh_cat_set *s = &cat.sets[i];

		if (want ? pdh_name_equal(want, s->name) : name_index(s->name) == index)
			r = strdup(s->name);
		for (k = 0; !r && k < s->nr_counters; k++)
			if (want ? pdh_name_equal(want, s->counters[k].name)
				 : name_index(s->counters[k].name) == index)
				r = strdup(s->counters[k].name);
	}
	pdh_catalog_free(&cat);
	*st = r ? 0 : PDH_STRING_NOT_FOUND;
	return r;
}

static PDH_STATUS name_by_index(const char *machine, DWORD index, void *buf, LPDWORD len, bool wide)
{
	PDH_STATUS st;
	char *name;

	if (!len || (!buf && *len))
		return PDH_INVALID_ARGUMENT;
	name = name_of(machine, index, NULL, &st);
	if (!name)
		return st == PDH_STRING_NOT_FOUND ? PDH_INVALID_ARGUMENT : st;
	st = pdh_put_list(&name, 1, false, buf, len, wide);
	free(name);
	return st;
}

static PDH_STATUS index_by_name(const char *machine, const char *name, LPDWORD index)
{
	PDH_STATUS st;
	char *found;

	if (!name || !index)
		return PDH_INVALID_ARGUMENT;
	found = name_of(machine, 0, name, &st);
	if (!found)
		return st;
	*index = name_index(found);
	free(found);
	return 0;
}

PDH_FUNCTION PdhLookupPerfNameByIndexA(LPCSTR szMachineName, DWORD dwNameIndex, LPSTR szNameBuffer,
				       LPDWORD pcchNameBufferSize)
{
	return name_by_index(szMachineName, dwNameIndex, szNameBuffer, pcchNameBufferSize, false);
}

PDH_FUNCTION PdhLookupPerfNameByIndexW(LPCWSTR szMachineName, DWORD dwNameIndex,
				       LPWSTR szNameBuffer, LPDWORD pcchNameBufferSize)
{
	PDH_STATUS st = 0;
	char *m = pdh_w2u(szMachineName, &st);

	if (!st)
		st = name_by_index(m, dwNameIndex, szNameBuffer, pcchNameBufferSize, true);
	free(m);
	return st;
}

PDH_FUNCTION PdhLookupPerfIndexByNameA(LPCSTR szMachineName, LPCSTR szNameBuffer, LPDWORD pdwIndex)
{
	return index_by_name(szMachineName, szNameBuffer, pdwIndex);
}

PDH_FUNCTION PdhLookupPerfIndexByNameW(LPCWSTR szMachineName, LPCWSTR szNameBuffer,
				       LPDWORD pdwIndex)
{
	PDH_STATUS st = 0;
	char *m = pdh_w2u(szMachineName, &st), *n = pdh_w2u(szNameBuffer, &st);

	if (!st)
		st = index_by_name(m, n, pdwIndex);
	free(m);
	free(n);
	return st;
}

PDH_FUNCTION PdhGetDllVersion(LPDWORD lpdwVersion)
{
	/* NULL is accepted on Vista and later (WT) */
	if (lpdwVersion)
		*lpdwVersion = PDH_VERSION;
	return 0;
}
