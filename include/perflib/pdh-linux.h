/* SPDX-License-Identifier: MIT */
/*
 * perflib/pdh-linux.h - libpdh's Linux extension (symbol version PDH_1.1): what a
 * collector of whole counter sets needs and the PDH API does not carry, for
 * perflib-exporter and programs like it. Windows has no such functions; code that must
 * build on Windows uses pdh.h only.
 *
 * A registration: PdhLinuxGetCounterSetRegistration gives a counter set's counters (ids,
 * types, attributes, companions) with their names and help texts, decoded from the
 * consumer API's registration buffers (English names where the set has them).
 *
 * Whole counter sets in a real-time query: PdhLinuxSetQueryCounterSets has
 * PdhCollectQueryData collect every counter of every instance of the given sets (besides
 * the sets its counters use), and PdhLinuxGetCounterSetSample / PdhLinuxGetSampleInstance
 * hand out each set's raw values of the newest collection: counter ids, instance ids and
 * names, values as perflib stored them (PDH's steady state applies: a set whose instances
 * stayed only has its values read).
 *
 * Strings are UTF-8. The functions return the PDH status codes of pdhmsg.h.
 */
#ifndef PERFLIB_PDH_LINUX_H
#define PERFLIB_PDH_LINUX_H

#include "../pdh.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * PDH_LINUX_LOG_NO_ZONE - a PdhOpenLog dwAccessFlags bit of this PDH's own (outside every
 * PDH_LOG_* mask): a CSV or TSV log written with it has typeperf's header, which names no
 * time zone ("(PDH-CSV 4.0)"), where PDH's logs name theirs ("(PDH-CSV 4.0) (<zone>)(<bias>)",
 * pdh.md 7.2). typeperf passes it for its console and -o output.
 */
#define PDH_LINUX_LOG_NO_ZONE 0x10000000u

/* PdhLinuxGetCounterSetRegistration: one counter of a set, in registration order */
typedef struct _PDH_LINUX_COUNTER_REG {
	DWORD CounterId;
	DWORD CounterType;   /* PERF_COUNTER_* of winperf.h */
	ULONGLONG Attrib;    /* PERF_ATTRIB_* */
	DWORD DetailLevel;   /* PERF_DETAIL_* */
	LONG DefaultScale;   /* power of ten; PDH does not apply it to raw values */
	DWORD BaseCounterId; /* the companions' CounterIds, or 0xFFFFFFFF (none) */
	DWORD PerfTimeId;
	DWORD PerfFreqId;
	DWORD MultiId;
	LPSTR Name; /* English name, else the localized one; NULL: none */
	LPSTR Help; /* NULL: none */
} PDH_LINUX_COUNTER_REG, *PPDH_LINUX_COUNTER_REG;

typedef struct _PDH_LINUX_COUNTERSET_REG {
	GUID CounterSet;
	ULONG InstanceType; /* PERF_COUNTERSET_* */
	LPSTR Name;	    /* English name, else the localized one; NULL: none */
	LPSTR Help;	    /* NULL: none */
	DWORD NumCounters;
	PDH_LINUX_COUNTER_REG *Counters;
} PDH_LINUX_COUNTERSET_REG, *PPDH_LINUX_COUNTERSET_REG;

/*
 * PdhLinuxGetCounterSetRegistration - the registration of counter set @CounterSet on this
 * computer (@szMachineName NULL, "" or this computer's name) in one allocation at
 * *@Registration, freed with PdhLinuxFreeCounterSetRegistration. A malformed string block
 * costs the strings, not the registration. Returns ERROR_SUCCESS; PDH_INVALID_ARGUMENT
 * (NULL pointers); PDH_CSTATUS_NO_MACHINE (another computer); PDH_CSTATUS_NO_OBJECT (not
 * registered); PDH_ACCESS_DENIED; PDH_INVALID_DATA (a registration that cannot be read);
 * PDH_MEMORY_ALLOCATION_FAILURE.
 */
PDH_FUNCTION PdhLinuxGetCounterSetRegistration(LPCSTR szMachineName, const GUID *CounterSet,
					       PDH_LINUX_COUNTERSET_REG **Registration);

/* PdhLinuxFreeCounterSetRegistration - free what the function above gave (NULL is ignored) */
PDH_API VOID WINAPI PdhLinuxFreeCounterSetRegistration(PDH_LINUX_COUNTERSET_REG *Registration);

/* PdhLinuxSetQueryCounterSets: a counter set to collect in full */
typedef struct _PDH_LINUX_COUNTERSET_REF {
	GUID CounterSet;
	ULONG InstanceType; /* its PERF_COUNTERSET_* (single or multiple instances) */
} PDH_LINUX_COUNTERSET_REF, *PPDH_LINUX_COUNTERSET_REF;

/*
 * PdhLinuxSetQueryCounterSets - have real-time query @hQuery collect the @dwCount counter
 * sets @Sets in full, in place of the list given before (0 sets: none). An unchanged list
 * keeps the query's perflib query and its steady state; another takes effect at the next
 * PdhCollectQueryData, which then succeeds with no counter added. A set not registered is
 * left out of the collection (PdhLinuxGetCounterSetSample: PDH_CSTATUS_NO_OBJECT).
 * Returns ERROR_SUCCESS, PDH_INVALID_HANDLE, PDH_INVALID_ARGUMENT (NULL @Sets with a
 * count, a log query), PDH_MEMORY_ALLOCATION_FAILURE.
 */
PDH_FUNCTION PdhLinuxSetQueryCounterSets(PDH_HQUERY hQuery, const PDH_LINUX_COUNTERSET_REF *Sets,
					 DWORD dwCount);

/*
 * One counter set's part of the newest collection. Valid until the query's next
 * collection or its close; the caller serializes those with its reads.
 */
typedef struct _PDH_LINUX_COUNTERSET_SAMPLE {
	DWORD CStatus;		 /* ERROR_SUCCESS, or the Win32 status of the set's block */
	DWORD DataType;		 /* PERF_COUNTERSET (instances) or PERF_MULTIPLE_COUNTERS */
	DWORD NumCounters;	 /* values per instance */
	const DWORD *CounterIds; /* their CounterIds, in value order */
	DWORD NumInstances;	 /* 1 for a set without instances */
	LONGLONG PerfFreq;	 /* the collection's PERF_DATA_HEADER times */
	LONGLONG PerfTime;
	LONGLONG PerfTime100NSec;
	const void *Reserved[3]; /* libpdh's */
} PDH_LINUX_COUNTERSET_SAMPLE, *PPDH_LINUX_COUNTERSET_SAMPLE;

/*
 * PdhLinuxGetCounterSetSample - counter set @CounterSet's part of @hQuery's newest
 * collection. Returns ERROR_SUCCESS; PDH_INVALID_HANDLE; PDH_INVALID_ARGUMENT (NULL
 * pointers, a log query); PDH_NO_DATA before the first collection; PDH_CSTATUS_NO_OBJECT
 * when the set was not collected.
 */
PDH_FUNCTION PdhLinuxGetCounterSetSample(PDH_HQUERY hQuery, const GUID *CounterSet,
					 PDH_LINUX_COUNTERSET_SAMPLE *Sample);

/* PdhLinuxGetSampleInstance: one instance of a sample */
typedef struct _PDH_LINUX_INSTANCE {
	DWORD InstanceId; /* 0 in a set without instances */
	DWORD Duplicate;  /* the "#n" of its name: 0 for the first instance of a name */
	DWORD NameLength; /* bytes of Name without its NUL */
	LPCSTR Name;	  /* NULL in a set without instances */
} PDH_LINUX_INSTANCE, *PPDH_LINUX_INSTANCE;

/*
 * PdhLinuxGetSampleInstance - instance @dwIndex (below NumInstances, in perflib's order) of
 * @Sample into *@Instance; when @Values is not NULL its NumCounters raw values into
 * @Values, with @Sizes (not NULL then) telling each value's size in bytes: 4 or 8, 0 when
 * the instance has none (the value is then 0). Returns ERROR_SUCCESS, PDH_INVALID_ARGUMENT
 * (NULL pointers, an index out of range, a failed set's sample).
 */
PDH_FUNCTION PdhLinuxGetSampleInstance(const PDH_LINUX_COUNTERSET_SAMPLE *Sample, DWORD dwIndex,
				       PDH_LINUX_INSTANCE *Instance, ULONGLONG *Values,
				       BYTE *Sizes);

#ifdef __cplusplus
}
#endif

#endif /* PERFLIB_PDH_LINUX_H */
