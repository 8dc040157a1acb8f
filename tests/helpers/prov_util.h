/* SPDX-License-Identifier: MIT */
/*
 * prov_util.h - what the provider tests share: counter-set templates built the way CTRPP
 * lays them out, fresh GUIDs, UTF-16 names. Public headers only, so that the test_api_*
 * files (built against the shared library too) can use it. Include after testlib.h.
 */
#ifndef PROV_UTIL_H
#define PROV_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "perflib.h"
#include "testlib.h"

#define PROV_MAX_COUNTERS 32
/* slots of a counter set when perflib_set_capacity() was not called (perflib-linux.h) */
#define PROV_CAPACITY_DEFAULT 1024

/* a template as CTRPP emits it: the header, then the counters, no padding between */
struct prov_tmpl {
	PERF_COUNTERSET_INFO set;
	PERF_COUNTER_INFO c[PROV_MAX_COUNTERS];
};

_Static_assert(offsetof(struct prov_tmpl, c) == sizeof(PERF_COUNTERSET_INFO), "template");

/* the provider GUID every test uses (counter sets are what keeps tests apart) */
static inline GUID prov_provider_guid(void)
{
	return tl_guid(0xFFFF);
}

/* a GUID no other call of this process returned: each test gets its own counter sets */
static inline GUID prov_guid(void)
{
	static unsigned int n = 0x100;

	return tl_guid(__atomic_fetch_add(&n, 1, __ATOMIC_RELAXED));
}

static inline void prov_tmpl_init(struct prov_tmpl *t, GUID set, ULONG instance_type)
{
	memset(t, 0, sizeof(*t));
	t->set.CounterSetGuid = set;
	t->set.ProviderGuid = prov_provider_guid();
	t->set.InstanceType = instance_type;
}

/* append a counter; Size as CTRPP writes it, Offset left as garbage (the library sets it) */
static inline PERF_COUNTER_INFO *prov_tmpl_add(struct prov_tmpl *t, ULONG id, ULONG type,
					       ULONGLONG attrib)
{
	PERF_COUNTER_INFO *c = &t->c[t->set.NumCounters++];

	c->CounterId = id;
	c->Type = type;
	c->Attrib = attrib;
	c->Size = (attrib & PERF_ATTRIB_BY_REFERENCE) ? sizeof(void *)
		  : (type & 0x300) == PERF_SIZE_LARGE ? sizeof(ULONGLONG)
						      : sizeof(ULONG);
	c->DetailLevel = PERF_DETAIL_NOVICE;
	c->Offset = 0xDEADBEEF;
	return c;
}

static inline ULONG prov_tmpl_size(const struct prov_tmpl *t)
{
	return (ULONG)(sizeof(PERF_COUNTERSET_INFO) +
		       t->set.NumCounters * sizeof(PERF_COUNTER_INFO));
}

static inline ULONG prov_tmpl_register(HANDLE h, struct prov_tmpl *t)
{
	return PerfSetCounterSetInfo(h, &t->set, prov_tmpl_size(t));
}

/* register counter set @set of @n counters (@ids[i], @types[i]) with provider @h */
static inline ULONG prov_set_register(HANDLE h, GUID set, ULONG instance_type, unsigned int n,
				      const ULONG *ids, const ULONG *types)
{
	struct prov_tmpl t;
	unsigned int i;

	prov_tmpl_init(&t, set, instance_type);
	for (i = 0; i < n; i++)
		prov_tmpl_add(&t, ids[i], types[i], 0);
	return prov_tmpl_register(h, &t);
}

/*
 * The standard counter set of these tests, in template order:
 *   id 1  PERF_COUNTER_COUNTER (DWORD)         position 0
 *   id 2  PERF_COUNTER_BULK_COUNT (LARGE)      position 1
 *   id 3  PERF_COUNTER_LARGE_RAWCOUNT by ref   position 2
 *   id 4  PERF_COUNTER_RAWCOUNT (DWORD)        position 3
 */
#define PROV_STD_DWORD 1
#define PROV_STD_LARGE 2
#define PROV_STD_REF 3
#define PROV_STD_DWORD2 4
static inline void prov_tmpl_std(struct prov_tmpl *t, GUID set, ULONG instance_type)
{
	prov_tmpl_init(t, set, instance_type);
	prov_tmpl_add(t, PROV_STD_DWORD, PERF_COUNTER_COUNTER, 0);
	prov_tmpl_add(t, PROV_STD_LARGE, PERF_COUNTER_BULK_COUNT, 0);
	prov_tmpl_add(t, PROV_STD_REF, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE);
	prov_tmpl_add(t, PROV_STD_DWORD2, PERF_COUNTER_RAWCOUNT, 0);
}

/* start a provider of the standard multi-instance set @set; 0 or a Win32 code */
static inline ULONG prov_std_provide(const GUID *set, HANDLE *ret_h)
{
	GUID pg = prov_provider_guid();
	struct prov_tmpl t;
	ULONG st;

	prov_tmpl_std(&t, *set, PERF_COUNTERSET_MULTI_INSTANCES);
	st = PerfStartProvider(&pg, NULL, ret_h);
	if (st)
		return st;
	st = prov_tmpl_register(*ret_h, &t);
	if (st)
		PerfStopProvider(*ret_h);
	return st;
}

/* start a provider and register a fresh standard multi-instance set; 0 or a Win32 code */
static inline ULONG prov_std_start(HANDLE *ret_h, GUID *ret_set)
{
	*ret_set = prov_guid();
	return prov_std_provide(ret_set, ret_h);
}

/* an ASCII printf into a UTF-16 buffer of @units units */
static inline WCHAR *prov_wname(WCHAR *buf, size_t units, const char *fmt, ...)
{
	char tmp[1100];
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	for (i = 0; tmp[i] && i + 1 < units; i++)
		buf[i] = (WCHAR)(unsigned char)tmp[i];
	buf[i] = 0;
	return buf;
}

/* the 8-byte counter slot at template position @pos of an instance block */
static inline void *prov_slot(PPERF_COUNTERSET_INSTANCE inst, unsigned int pos)
{
	return (BYTE *)inst + sizeof(PERF_COUNTERSET_INSTANCE) + 8 * pos;
}

#endif /* PROV_UTIL_H */
