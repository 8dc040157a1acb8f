/* SPDX-License-Identifier: MIT */
/*
 * path.c - counter paths (pdh.md 5.7; syntax tools.md 4.2, one parser: names.c): making,
 * parsing, instance strings, validation and wildcard expansion against the counter sets
 * registered now (catalog.c's resolution rules, the ones typeperf lists with -q/-qx).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrtype.h"
#include "pdh_internal.h"

/* ---- making and parsing ---------------------------------------------------------------- */

/* "[\\machine]\object[([parent/]instance[#index])]\counter" (UTF-8, malloc'd) */
static char *make_path(const char *machine, const char *object, const char *instance,
		       const char *parent, DWORD index, const char *counter)
{
	char idx[16] = "", *r;

	if (machine)
		while (*machine == '\\')
			machine++; /* a name that has its "\\" already: not doubled */
	/* "#0" is never written; 0xFFFFFFFF is "none" for pywin32-style callers */
	if (instance && index && index != 0xFFFFFFFFu)
		snprintf(idx, sizeof(idx), "#%u", index);
	if (asprintf(&r, "%s%s\\%s%s%s%s%s%s%s\\%s", machine && *machine ? "\\\\" : "",
		     machine ? machine : "", object, instance ? "(" : "",
		     instance && parent ? parent : "", instance && parent ? "/" : "",
		     instance ? instance : "", idx, instance ? ")" : "", counter) < 0)
		return NULL;
	return r;
}

static PDH_STATUS make_common(const char *machine, const char *object, const char *instance,
			      const char *parent, DWORD index, const char *counter, void *buf,
			      LPDWORD size, DWORD flags, bool wide)
{
	PDH_STATUS st;
	char *path;

	if (!size || !object || !counter || flags)
		return PDH_INVALID_ARGUMENT; /* WMI forms are not supported (port rule) */
	path = make_path(machine, object, instance, parent, index, counter);
	if (!path)
		return PDH_MEMORY_ALLOCATION_FAILURE;
	st = pdh_put_list(&path, 1, false, buf, size, wide);
	free(path);
	return st;
}

PDH_FUNCTION PdhMakeCounterPathA(PPDH_COUNTER_PATH_ELEMENTS_A e, LPSTR szFullPathBuffer,
				 LPDWORD pcchBufferSize, DWORD dwFlags)
{
	if (!e)
		return PDH_INVALID_ARGUMENT;
	return make_common(e->szMachineName, e->szObjectName, e->szInstanceName,
			   e->szParentInstance, e->dwInstanceIndex, e->szCounterName,
			   szFullPathBuffer, pcchBufferSize, dwFlags, false);
}

PDH_FUNCTION PdhMakeCounterPathW(PPDH_COUNTER_PATH_ELEMENTS_W e, LPWSTR szFullPathBuffer,
				 LPDWORD pcchBufferSize, DWORD dwFlags)
{
	char *m, *o, *i, *p, *c;
	PDH_STATUS st = 0;

	if (!e)
		return PDH_INVALID_ARGUMENT;
	m = pdh_w2u(e->szMachineName, &st);
	o = pdh_w2u(e->szObjectName, &st);
	i = pdh_w2u(e->szInstanceName, &st);
	p = pdh_w2u(e->szParentInstance, &st);
	c = pdh_w2u(e->szCounterName, &st);
	if (!st)
		st = make_common(m, o, i, p, e->dwInstanceIndex, c, szFullPathBuffer,
				 pcchBufferSize, dwFlags, true);
	free(m);
	free(o);
	free(i);
	free(p);
	free(c);
	return st;
}

/* PdhParseCounterPath: the elements, strings after the structure; size in bytes */
static PDH_STATUS parse_common(const char *text, PDH_COUNTER_PATH_ELEMENTS_W *e, LPDWORD size,
			       DWORD flags, bool wide)
{
	size_t need = sizeof(*e), off, i, unit = wide ? 2 : 1;
	char machine[PDH_MAX_COUNTER_NAME + 3];
	const char *strs[5];
	void **ptrs[5];
	struct pdh_cpath p;
	int err;

	if (!text || !size || flags || (!e && *size))
		return PDH_INVALID_ARGUMENT;
	err = pdh_cpath_parse(text, &p);
	if (err)
		return err == -ENOMEM ? PDH_MEMORY_ALLOCATION_FAILURE : PDH_INVALID_PATH;
	if (p.machine)
		snprintf(machine, sizeof(machine), "\\\\%s", p.machine);
	strs[0] = p.machine ? machine : NULL;
	strs[1] = p.object;
	strs[2] = p.instance;
	strs[3] = p.parent;
	strs[4] = p.counter;
	for (i = 0; i < 5; i++)
		if (strs[i])
			need += (pdh_chars(strs[i], wide) + 1) * unit;
	if (!e || *size < need) {
		*size = (DWORD)need;
		pdh_cpath_free(&p);
		return PDH_MORE_DATA;
	}
	memset(e, 0, sizeof(*e));
	e->dwInstanceIndex = p.index > 0 ? (DWORD)p.index : 0;
	ptrs[0] = (void **)&e->szMachineName;
	ptrs[1] = (void **)&e->szObjectName;
	ptrs[2] = (void **)&e->szInstanceName;
	ptrs[3] = (void **)&e->szParentInstance;
	ptrs[4] = (void **)&e->szCounterName;
	for (off = sizeof(*e), i = 0; i < 5; i++) {
		if (!strs[i])
			continue;
		*ptrs[i] = (char *)e + off;
		off += pdh_put((char *)e + off, strs[i], wide) * unit;
	}
	*size = (DWORD)need;
	pdh_cpath_free(&p);
	return 0;
}

PDH_FUNCTION PdhParseCounterPathA(LPCSTR szFullPathBuffer, PPDH_COUNTER_PATH_ELEMENTS_A e,
				  LPDWORD pdwBufferSize, DWORD dwFlags)
{
	return parse_common(szFullPathBuffer, (PDH_COUNTER_PATH_ELEMENTS_W *)(void *)e,
			    pdwBufferSize, dwFlags, false);
}

PDH_FUNCTION PdhParseCounterPathW(LPCWSTR szFullPathBuffer, PPDH_COUNTER_PATH_ELEMENTS_W e,
				  LPDWORD pdwBufferSize, DWORD dwFlags)
{
	PDH_STATUS st = 0;
	char *text = pdh_w2u(szFullPathBuffer, &st);

	if (st)
		return st;
	st = parse_common(text, e, pdwBufferSize, dwFlags, true);
	free(text);
	return st;
}

/* "[parent/]instance[#index]" (shorter than MAX_PATH, 260) */
static PDH_STATUS instance_common(const char *s, void *inst, LPDWORD inst_len, void *parent,
				  LPDWORD parent_len, LPDWORD index, bool wide)
{
	char *copy, *slash, *hash, *name, *par = "", *end;
	PDH_STATUS st, st2;
	unsigned long n = 0;

	if (!s || !inst_len || !parent_len)
		return PDH_INVALID_ARGUMENT;
	if (!*s || strlen(s) >= 260)
		return PDH_INVALID_INSTANCE;
	copy = strdup(s);
	if (!copy)
		return PDH_MEMORY_ALLOCATION_FAILURE;
	name = copy;
	slash = strchr(copy, '/');
	if (slash) {
		*slash = '\0';
		par = copy;
		name = slash + 1;
	}
	hash = strrchr(name, '#');
	if (hash && hash[1] >= '0' && hash[1] <= '9') {
		n = strtoul(hash + 1, &end, 10);
		if (*end) {
			free(copy);
			return PDH_INVALID_INSTANCE;
		}
		*hash = '\0';
	}
	if (!*name || (slash && !*par)) {
		free(copy);
		return PDH_INVALID_INSTANCE;
	}
	/* both sizes are answered, each with its own protocol */
	st = pdh_put_list(&name, 1, false, inst, inst_len, wide);
	st2 = pdh_put_list(&par, 1, false, parent, parent_len, wide);
	free(copy);
	if (st == PDH_INVALID_ARGUMENT || st2 == PDH_INVALID_ARGUMENT)
		return PDH_INVALID_ARGUMENT;
	if (st || st2)
		return PDH_MORE_DATA;
	if (index)
		*index = (DWORD)n;
	return 0;
}

PDH_FUNCTION PdhParseInstanceNameA(LPCSTR szInstanceString, LPSTR szInstanceName,
				   LPDWORD pcchInstanceNameLength, LPSTR szParentName,
				   LPDWORD pcchParentNameLength, LPDWORD lpIndex)
{
	return instance_common(szInstanceString, szInstanceName, pcchInstanceNameLength,
			       szParentName, pcchParentNameLength, lpIndex, false);
}

PDH_FUNCTION PdhParseInstanceNameW(LPCWSTR szInstanceString, LPWSTR szInstanceName,
				   LPDWORD pcchInstanceNameLength, LPWSTR szParentName,
				   LPDWORD pcchParentNameLength, LPDWORD lpIndex)
{
	PDH_STATUS st = 0;
	char *s = pdh_w2u(szInstanceString, &st);

	if (st)
		return st;
	st = instance_common(s, szInstanceName, pcchInstanceNameLength, szParentName,
			     pcchParentNameLength, lpIndex, true);
	free(s);
	return st;
}

/* ---- validation and expansion -------------------------------------------------------- */

/*
 * Parse counter path @text into *@p and load the counter sets of its machine,
 * instances included, into *@cat; the caller frees both. PDH status; on failure nothing is
 * left to free.
 */
static PDH_STATUS path_load(const char *text, struct pdh_cpath *p, struct pdh_catalog *cat)
{
	ULONG ws;

	if (pdh_cpath_parse(text, p))
		return PDH_CSTATUS_BAD_COUNTERNAME;
	/* the path's machine: this one, or another through its exporter */
	ws = pdh_catalog_load(cat, p->machine, true, NULL);
	if (ws) {
		pdh_cpath_free(p);
		return pdh_from_win32(ws);
	}
	return 0;
}

static PDH_STATUS validate(PDH_HLOG source, const char *text)
{
	struct pdh_catalog cat;
	const struct pdh_cat_set *set;
	struct pdh_cpath p;
	PDH_STATUS st;
	size_t i;
	long k;

	if (!text || !*text)
		return PDH_INVALID_ARGUMENT;
	if (source) {
		/* a log: the path must name one of its columns */
		PDH_HQUERY q;
		PDH_HCOUNTER c;

		st = PdhOpenQueryH(source, 0, &q);
		if (st)
			return st;
		st = pdh_counter_add(q, text, 0, &c);
		PdhCloseQuery(q);
		return st;
	}
	st = path_load(text, &p, &cat);
	if (st)
		return st;
	k = pdh_cat_set_find(&cat, p.object);
	st = PDH_CSTATUS_NO_OBJECT;
	if (k < 0)
		goto out_cat;
	set = &cat.sets[k];
	for (i = 0; i < set->nr_counters; i++)
		if (pdh_name_equal(set->counters[i].name, p.counter) &&
		    ctrtype_displayable(set->counters[i].type))
			break;
	st = PDH_CSTATUS_NO_COUNTER;
	if (i == set->nr_counters)
		goto out_cat;
	st = PDH_CSTATUS_NO_INSTANCE;
	if (!pdh_cat_set_multi(set) != !p.instance)
		goto out_cat;
	if (p.instance && !pdh_has_wildcard(p.instance) && p.index != PDH_INDEX_ANY) {
		char *pat = pdh_cpath_instance_pattern(&p);
		int idx = p.index < 0 ? 0 : p.index;

		for (i = 0; pat && i < set->nr_instances; i++)
			if (pdh_name_equal(set->instances[i].name, pat) &&
			    set->instances[i].dup == (unsigned int)idx)
				break;
		if (!pat || i == set->nr_instances) {
			st = pat ? PDH_CSTATUS_NO_INSTANCE : PDH_MEMORY_ALLOCATION_FAILURE;
			free(pat);
			goto out_cat;
		}
		free(pat);
	}
	st = 0;
out_cat:
	pdh_catalog_free(&cat);
	pdh_cpath_free(&p);
	return st;
}

PDH_FUNCTION PdhValidatePathA(LPCSTR szFullPathBuffer)
{
	return validate(NULL, szFullPathBuffer);
}

PDH_FUNCTION PdhValidatePathExA(PDH_HLOG hDataSource, LPCSTR szFullPathBuffer)
{
	return validate(hDataSource, szFullPathBuffer);
}

PDH_FUNCTION PdhValidatePathW(LPCWSTR szFullPathBuffer)
{
	return PdhValidatePathExW(NULL, szFullPathBuffer);
}

PDH_FUNCTION PdhValidatePathExW(PDH_HLOG hDataSource, LPCWSTR szFullPathBuffer)
{
	PDH_STATUS st = 0;
	char *s = pdh_w2u(szFullPathBuffer, &st);

	if (st)
		return st;
	st = validate(hDataSource, s);
	free(s);
	return st;
}

/* the instance part of @p as written: "parent/instance#index" */
static char *instance_text(const struct pdh_cpath *p)
{
	char *r;

	if (asprintf(&r, "%s%s%s%s", p->parent ? p->parent : "", p->parent ? "/" : "", p->instance,
		     p->index == PDH_INDEX_ANY ? "#*" : "") < 0)
		return NULL;
	if (p->index >= 0) {
		char *r2;

		if (asprintf(&r2, "%s#%d", r, p->index) < 0)
			r2 = NULL;
		free(r);
		r = r2;
	}
	return r;
}

/* every path of this machine matching @text (pdh.md 5.7.5), into @out */
static PDH_STATUS expand(const char *text, DWORD flags, struct pdh_strs *out)
{
	struct pdh_target *targets = NULL;
	struct pdh_catalog cat;
	struct pdh_cpath p;
	size_t i, nr = 0;
	bool any = false, multi = false;
	PDH_STATUS st;

	if (!text || !*text)
		return PDH_INVALID_ARGUMENT;
	st = path_load(text, &p, &cat);
	if (st)
		return st;
	for (i = 0; i < cat.nr_sets; i++) {
		if (pdh_match(p.object, cat.sets[i].name)) {
			any = true;
			multi |= pdh_cat_set_multi(&cat.sets[i]);
		}
	}
	st = PDH_CSTATUS_NO_OBJECT;
	if (!any)
		goto out_cat;
	/* an object without instances has no instance part: use \object\counter */
	st = PDH_INVALID_PATH;
	if (p.instance && !multi)
		goto out_cat;
	st = PDH_MEMORY_ALLOCATION_FAILURE;
	/* object wildcards ("pro*") too: each matching set in turn */
	for (i = 0; i < cat.nr_sets; i++) {
		struct pdh_cpath one = p;

		if (!pdh_match(p.object, cat.sets[i].name))
			continue;
		one.object = cat.sets[i].name;
		if (pdh_cat_resolve(&cat, &one, &targets, &nr) < 0)
			goto out_targets;
	}
	for (i = 0; i < nr; i++) {
		const struct pdh_cat_set *set = &cat.sets[targets[i].set];
		const struct pdh_cat_counter *ctr = &set->counters[targets[i].counter];
		const char *counter = ctr->name;
		char *inst = NULL, *path;

		if ((flags & PDH_NOEXPANDCOUNTERS) && pdh_has_wildcard(p.counter))
			counter = p.counter;
		if (targets[i].instance != PDH_NO_INSTANCE) {
			const struct pdh_cat_instance *in = &set->instances[targets[i].instance];

			inst = (flags & PDH_NOEXPANDINSTANCES)
				       ? instance_text(&p)
				       : pdh_instance_display(in->name, in->dup);
			if (!inst)
				goto out_targets;
		}
		path = pdh_cpath_format(p.machine, set->name, inst, counter);
		free(inst);
		if (!path)
			goto out_targets;
		if (pdh_strs_has(out, path)) {
			free(path);
			continue;
		}
		if (pdh_strs_take(out, path))
			goto out_targets;
	}
	st = 0;
out_targets:
	free(targets);
out_cat:
	pdh_catalog_free(&cat);
	pdh_cpath_free(&p);
	return st;
}

static PDH_STATUS expand_common(PDH_HLOG source, const char *text, void *list, LPDWORD len,
				DWORD flags, bool wide)
{
	struct pdh_strs out = {0};
	PDH_STATUS st;

	if (!len || (!list && *len))
		return PDH_INVALID_ARGUMENT;
	if (source) {
		struct pdh_log *log = pdh_handle_get(source, PDH_KIND_LOG);
		struct pdh_cpath p, lp;
		size_t i;

		if (!log || log->writing)
			return PDH_INVALID_HANDLE;
		if (!text || pdh_cpath_parse(text, &p))
			return text ? PDH_CSTATUS_BAD_COUNTERNAME : PDH_INVALID_ARGUMENT;
		/* a log lists what it holds (G-Logs) */
		for (i = 0; i < log->nr_paths; i++) {
			if (pdh_cpath_parse(log->paths[i], &lp))
				continue;
			if (pdh_match(p.object, lp.object) && pdh_match(p.counter, lp.counter) &&
			    (!p.instance || (lp.instance && pdh_match(p.instance, lp.instance))) &&
			    pdh_strs_add(&out, log->paths[i])) {
				pdh_cpath_free(&lp);
				pdh_cpath_free(&p);
				pdh_strs_free(&out);
				return PDH_MEMORY_ALLOCATION_FAILURE;
			}
			pdh_cpath_free(&lp);
		}
		pdh_cpath_free(&p);
		st = 0;
	} else {
		st = expand(text, flags, &out);
	}
	if (!st)
		st = pdh_put_list(out.v, out.nr, true, list, len, wide);
	pdh_strs_free(&out);
	return st;
}

PDH_FUNCTION PdhExpandWildCardPathHA(PDH_HLOG hDataSource, LPCSTR szWildCardPath,
				     LPSTR mszExpandedPathList, LPDWORD pcchPathListLength,
				     DWORD dwFlags)
{
	return expand_common(hDataSource, szWildCardPath, mszExpandedPathList, pcchPathListLength,
			     dwFlags, false);
}

PDH_FUNCTION PdhExpandWildCardPathHW(PDH_HLOG hDataSource, LPCWSTR szWildCardPath,
				     LPWSTR mszExpandedPathList, LPDWORD pcchPathListLength,
				     DWORD dwFlags)
{
	PDH_STATUS st = 0;
	char *s = pdh_w2u(szWildCardPath, &st);

	if (st)
		return st;
	st = expand_common(hDataSource, s, mszExpandedPathList, pcchPathListLength, dwFlags, true);
	free(s);
	return st;
}

/* a named data source: a log file bound for the call */
static PDH_STATUS with_source(LPCSTR source, PDH_HLOG *ret)
{
	char list[PDH_MAX_DATASOURCE_PATH + 2];
	size_t n;

	*ret = NULL;
	if (!source)
		return 0;
	n = strlen(source);
	if (n > PDH_MAX_DATASOURCE_PATH)
		return PDH_INVALID_ARGUMENT;
	memcpy(list, source, n + 1);
	list[n + 1] = '\0';
	return PdhBindInputDataSourceA(ret, list);
}

PDH_FUNCTION PdhExpandWildCardPathA(LPCSTR szDataSource, LPCSTR szWildCardPath,
				    LPSTR mszExpandedPathList, LPDWORD pcchPathListLength,
				    DWORD dwFlags)
{
	PDH_HLOG log;
	PDH_STATUS st = with_source(szDataSource, &log);

	if (st)
		return st;
	st = PdhExpandWildCardPathHA(log, szWildCardPath, mszExpandedPathList, pcchPathListLength,
				     dwFlags);
	if (log)
		PdhCloseLog(log, 0);
	return st;
}

PDH_FUNCTION PdhExpandWildCardPathW(LPCWSTR szDataSource, LPCWSTR szWildCardPath,
				    LPWSTR mszExpandedPathList, LPDWORD pcchPathListLength,
				    DWORD dwFlags)
{
	PDH_STATUS st = 0;
	char *src = pdh_w2u(szDataSource, &st);
	PDH_HLOG log = NULL;

	if (!st)
		st = with_source(src, &log);
	free(src);
	if (st)
		return st;
	st = PdhExpandWildCardPathHW(log, szWildCardPath, mszExpandedPathList, pcchPathListLength,
				     dwFlags);
	if (log)
		PdhCloseLog(log, 0);
	return st;
}

/* the old form: PdhExpandWildCardPath(NULL, path, list, len, 0) (D-ExpandOld) */
PDH_FUNCTION PdhExpandCounterPathA(LPCSTR szWildCardPath, LPSTR mszExpandedPathList,
				   LPDWORD pcchPathListLength)
{
	return PdhExpandWildCardPathA(NULL, szWildCardPath, mszExpandedPathList, pcchPathListLength,
				      0);
}

PDH_FUNCTION PdhExpandCounterPathW(LPCWSTR szWildCardPath, LPWSTR mszExpandedPathList,
				   LPDWORD pcchPathListLength)
{
	return PdhExpandWildCardPathW(NULL, szWildCardPath, mszExpandedPathList, pcchPathListLength,
				      0);
}
