/* SPDX-License-Identifier: MIT */
/*
 * perflib.h - the Windows performance-counter API (perflib V2) for Linux.
 *
 * Names, values and byte layouts are those of the Windows SDK: code written for Windows
 * builds with few changes. ULONG/DWORD are 32 bits (not unsigned long), WCHAR is a 16-bit
 * UTF-16LE code unit: char16_t, so u"name" literals work, or, in C++ built with -fshort-wchar,
 * wchar_t as on Windows, so L"name" and wchar_t arrays work (README "Wide strings"). Functions
 * return Win32 error codes (ERROR_*); the two that return a pointer report failures through
 * GetLastError(). Layouts are asserted in userspace/. Compiles as C99 and later and as C++11
 * and later. SAL annotations (__in, _In_, ...) are not defined here: <perflib/sal.h>.
 */
#ifndef PERFLIB_H
#define PERFLIB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <uchar.h>

#include "winperf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PERFLIB_API __attribute__((visibility("default")))

/* Win32 base types, with Windows' sizes on LP64. */
typedef uint32_t ULONG;
typedef uint32_t DWORD;
typedef int32_t LONG;
typedef uint16_t USHORT;
typedef uint16_t WORD;
typedef uint8_t BYTE;
typedef uint8_t UCHAR;
typedef uint64_t ULONGLONG;
typedef uint64_t ULONG64;
typedef int64_t LONGLONG;
typedef int32_t BOOL;
/*
 * WCHAR: one UTF-16LE code unit, 16 bits in every mode (the ABI does not change). In C,
 * char16_t and a -fshort-wchar wchar_t are the same type (unsigned short), so u"" and, with
 * -fshort-wchar, L"" both convert. In C++ they are distinct types: WCHAR is wchar_t when
 * wchar_t is 16 bits (-fshort-wchar), as on Windows, so that L"", wchar_t arrays and
 * std::wstring data pass as PCWSTR; u"" then goes through the char16_t overloads at the end
 * of this file. Without -fshort-wchar WCHAR is char16_t and u"" is the only wide literal.
 */
#if defined(__cplusplus) && defined(__SIZEOF_WCHAR_T__) && __SIZEOF_WCHAR_T__ == 2
#define PERFLIB_WCHAR_IS_WCHAR_T 1
typedef wchar_t WCHAR;
#else
#define PERFLIB_WCHAR_IS_WCHAR_T 0
typedef char16_t WCHAR;
#endif
/* PERFLIB_WTEXT("x") - a WCHAR string literal: L"x" when wchar_t is 16 bits, else u"x" */
#if defined(__SIZEOF_WCHAR_T__) && __SIZEOF_WCHAR_T__ == 2
#define PERFLIB_WTEXT(s) PERFLIB__WTEXT(L, s)
#else
#define PERFLIB_WTEXT(s) PERFLIB__WTEXT(u, s)
#endif
#define PERFLIB__WTEXT(p, s) p##s
typedef WCHAR *PWSTR, *LPWSTR;
typedef const WCHAR *PCWSTR, *LPCWSTR;
typedef void VOID;
typedef void *PVOID, *LPVOID, *HANDLE;
typedef HANDLE *PHANDLE;
typedef BYTE *PBYTE, *LPBYTE;
typedef ULONG *PULONG;
typedef DWORD *PDWORD, *LPDWORD;
typedef size_t SIZE_T;

/* 16-byte Windows GUID; Data1..Data3 little-endian, Data4 as bytes. */
typedef struct _GUID {
	uint32_t Data1;
	uint16_t Data2;
	uint16_t Data3;
	uint8_t Data4[8];
} GUID, *LPGUID;
typedef const GUID *LPCGUID;

typedef struct _SYSTEMTIME {
	WORD wYear;
	WORD wMonth;
	WORD wDayOfWeek; /* 0 = Sunday */
	WORD wDay;
	WORD wHour;
	WORD wMinute;
	WORD wSecond;
	WORD wMilliseconds;
} SYSTEMTIME, *PSYSTEMTIME, *LPSYSTEMTIME;

/* Decorations used by Windows code and by CTRPP-generated headers. */
#ifndef WINAPI
#define WINAPI
#endif
#ifndef CALLBACK
#define CALLBACK
#endif
#ifndef CDECL
#define CDECL
#endif
#ifndef EXTERN_C
#ifdef __cplusplus
#define EXTERN_C extern "C"
#else
#define EXTERN_C
#endif
#endif
#ifndef DECLSPEC_SELECTANY
#define DECLSPEC_SELECTANY __attribute__((weak)) /* one definition across translation units */
#endif
#ifndef FORCEINLINE
#ifdef __cplusplus
/* C++: an inline function may have C linkage (EXTERN_C FORCEINLINE), one copy per program */
#define FORCEINLINE inline __attribute__((always_inline))
#else
#define FORCEINLINE static inline __attribute__((always_inline, unused))
#endif
#endif
#ifndef ZeroMemory
#define ZeroMemory(Destination, Length) memset((Destination), 0, (Length))
#endif
#ifndef RtlZeroMemory
#define RtlZeroMemory(Destination, Length) memset((Destination), 0, (Length))
#endif
#ifndef CopyMemory
#define CopyMemory(Destination, Source, Length) memcpy((Destination), (Source), (Length))
#endif
#ifndef TRUE
#define TRUE 1
#define FALSE 0
#endif
/* Win32 error codes used by this API (Windows' values). */
#define ERROR_SUCCESS 0
#define ERROR_FILE_NOT_FOUND 2
#define ERROR_ACCESS_DENIED 5
#define ERROR_INVALID_HANDLE 6
#define ERROR_NOT_ENOUGH_MEMORY 8
#define ERROR_INVALID_DATA 13
#define ERROR_OUTOFMEMORY 14
#define ERROR_GEN_FAILURE 31
#define ERROR_NOT_SUPPORTED 50
#define ERROR_BAD_NETPATH 53
#define ERROR_INVALID_PARAMETER 87
#define ERROR_CALL_NOT_IMPLEMENTED 120
#define ERROR_INSUFFICIENT_BUFFER 122
#define ERROR_BUSY 170
#define ERROR_ALREADY_EXISTS 183
#define ERROR_NO_DATA 232
#define ERROR_MORE_DATA 234
#define ERROR_NO_MORE_ITEMS 259
#define ERROR_NOT_FOUND 1168
#define ERROR_TIMEOUT 1460
#define ERROR_WMI_GUID_NOT_FOUND 4200
#define ERROR_WMI_INSTANCE_NOT_FOUND 4201

/* Counter-set instance types (PERF_COUNTERSET_INFO.InstanceType). */
#define PERF_COUNTERSET_FLAG_MULTIPLE 0x00000002
#define PERF_COUNTERSET_FLAG_AGGREGATE 0x00000004
#define PERF_COUNTERSET_FLAG_HISTORY 0x00000008
#define PERF_COUNTERSET_FLAG_INSTANCE 0x00000010
#define PERF_COUNTERSET_SINGLE_INSTANCE 0x00000000
#define PERF_COUNTERSET_MULTI_INSTANCES (PERF_COUNTERSET_FLAG_MULTIPLE)
#define PERF_COUNTERSET_SINGLE_AGGREGATE (PERF_COUNTERSET_FLAG_AGGREGATE)
#define PERF_COUNTERSET_MULTI_AGGREGATE                                                            \
	(PERF_COUNTERSET_FLAG_AGGREGATE | PERF_COUNTERSET_FLAG_MULTIPLE)
#define PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY                                                   \
	(PERF_COUNTERSET_FLAG_HISTORY | PERF_COUNTERSET_SINGLE_AGGREGATE)
#define PERF_COUNTERSET_INSTANCE_AGGREGATE                                                         \
	(PERF_COUNTERSET_MULTI_AGGREGATE | PERF_COUNTERSET_FLAG_INSTANCE)

/* Counter attributes (PERF_COUNTER_INFO.Attrib). */
#define PERF_ATTRIB_BY_REFERENCE 0x0000000000000001ULL
#define PERF_ATTRIB_NO_DISPLAYABLE 0x0000000000000002ULL
#define PERF_ATTRIB_NO_GROUP_SEPARATOR 0x0000000000000004ULL
#define PERF_ATTRIB_DISPLAY_AS_REAL 0x0000000000000008ULL
#define PERF_ATTRIB_DISPLAY_AS_HEX 0x0000000000000010ULL

/* Provider types. */
#define PERF_PROVIDER_USER_MODE 0
#define PERF_PROVIDER_KERNEL_MODE 1
#define PERF_PROVIDER_DRIVER 2

/* Aggregation functions (PERF_COUNTER_REG_INFO.AggregateFunc). */
#define PERF_AGGREGATE_UNDEFINED 0
#define PERF_AGGREGATE_TOTAL 1
#define PERF_AGGREGATE_AVG 2
#define PERF_AGGREGATE_MIN 3
#define PERF_AGGREGATE_MAX 4

/* Wildcards, special names, limits. */
#define PERF_WILDCARD_COUNTER 0xFFFFFFFF
#define PERF_WILDCARD_INSTANCE PERFLIB_WTEXT("*")
#define PERF_AGGREGATE_INSTANCE PERFLIB_WTEXT("_Total")
#define PERF_MAX_INSTANCE_NAME 1024

/* ControlCallback request codes. */
#define PERF_ADD_COUNTER 1
#define PERF_REMOVE_COUNTER 2
#define PERF_ENUM_INSTANCES 3
#define PERF_COLLECT_START 5
#define PERF_COLLECT_END 6
#define PERF_FILTER 9

/* PERF_COUNTER_HEADER.dwType. */
typedef enum _PerfCounterDataType {
	PERF_ERROR_RETURN = 0,
	PERF_SINGLE_COUNTER = 1,
	PERF_MULTIPLE_COUNTERS = 2,
	PERF_MULTIPLE_INSTANCES = 4,
	PERF_COUNTERSET = 6,
} PerfCounterDataType;

/* PerfQueryCounterSetRegistrationInfo requestCode. */
typedef enum _PerfRegInfoType {
	PERF_REG_COUNTERSET_STRUCT = 1,
	PERF_REG_COUNTER_STRUCT,
	PERF_REG_COUNTERSET_NAME_STRING,
	PERF_REG_COUNTERSET_HELP_STRING,
	PERF_REG_COUNTER_NAME_STRINGS,
	PERF_REG_COUNTER_HELP_STRINGS,
	PERF_REG_PROVIDER_NAME,
	PERF_REG_PROVIDER_GUID,
	PERF_REG_COUNTERSET_ENGLISH_NAME,
	PERF_REG_COUNTER_ENGLISH_NAMES,
} PerfRegInfoType;

/* Counter-set template header; NumCounters PERF_COUNTER_INFO follow it. */
typedef struct _PERF_COUNTERSET_INFO {
	GUID CounterSetGuid;
	GUID ProviderGuid;
	ULONG NumCounters;
	ULONG InstanceType;
} PERF_COUNTERSET_INFO, *PPERF_COUNTERSET_INFO;

typedef struct _PERF_COUNTER_INFO {
	ULONG CounterId;
	ULONG Type;
	ULONGLONG Attrib;
	ULONG Size;
	ULONG DetailLevel;
	LONG Scale;
	ULONG Offset; /* from the end of PERF_COUNTERSET_INSTANCE; written back as 8 * index */
} PERF_COUNTER_INFO, *PPERF_COUNTER_INFO;

/* Head of an instance block; 8-byte counter slots and the UTF-16LE name follow. */
typedef struct _PERF_COUNTERSET_INSTANCE {
	GUID CounterSetGuid;
	ULONG dwSize;
	ULONG InstanceId;
	ULONG InstanceNameOffset;
	ULONG InstanceNameSize;
} PERF_COUNTERSET_INSTANCE, *PPERF_COUNTERSET_INSTANCE;

typedef ULONG(CALLBACK *PERFLIBREQUEST)(ULONG RequestCode, PVOID Buffer, ULONG BufferSize);
typedef LPVOID(CALLBACK *PERF_MEM_ALLOC)(SIZE_T AllocSize, LPVOID pContext);
typedef void(CALLBACK *PERF_MEM_FREE)(LPVOID pBuffer, LPVOID pContext);

typedef struct _PROVIDER_CONTEXT {
	DWORD ContextSize;
	DWORD Reserved;
	PERFLIBREQUEST ControlCallback;
	PERF_MEM_ALLOC MemAllocRoutine;
	PERF_MEM_FREE MemFreeRoutine;
	LPVOID pMemContext;
} PERF_PROVIDER_CONTEXT, *PPERF_PROVIDER_CONTEXT;

/* ControlCallback input for PERF_ADD_COUNTER / PERF_REMOVE_COUNTER. */
typedef struct _PERF_COUNTER_IDENTITY {
	GUID CounterSetGuid;
	ULONG BufferSize;
	ULONG CounterId;
	ULONG InstanceId;
	ULONG MachineOffset;
	ULONG NameOffset;
	ULONG Reserved;
} PERF_COUNTER_IDENTITY, *PPERF_COUNTER_IDENTITY;

typedef struct _PERF_INSTANCE_HEADER {
	ULONG Size;
	ULONG InstanceId;
} PERF_INSTANCE_HEADER, *PPERF_INSTANCE_HEADER;

typedef struct _PERF_COUNTER_IDENTIFIER {
	GUID CounterSetGuid;
	ULONG Status;
	ULONG Size;
	ULONG CounterId;
	ULONG InstanceId;
	ULONG Index;
	ULONG Reserved;
} PERF_COUNTER_IDENTIFIER, *PPERF_COUNTER_IDENTIFIER;

typedef struct _PERF_DATA_HEADER {
	ULONG dwTotalSize;
	ULONG dwNumCounters;
	LONGLONG PerfTimeStamp;
	LONGLONG PerfTime100NSec;
	LONGLONG PerfFreq;
	SYSTEMTIME SystemTime;
} PERF_DATA_HEADER, *PPERF_DATA_HEADER;

typedef struct _PERF_COUNTER_HEADER {
	ULONG dwStatus;
	PerfCounterDataType dwType;
	ULONG dwSize;
	ULONG Reserved;
} PERF_COUNTER_HEADER, *PPERF_COUNTER_HEADER;

typedef struct _PERF_MULTI_INSTANCES {
	ULONG dwTotalSize;
	ULONG dwInstances;
} PERF_MULTI_INSTANCES, *PPERF_MULTI_INSTANCES;

typedef struct _PERF_MULTI_COUNTERS {
	ULONG dwSize;
	ULONG dwCounters;
} PERF_MULTI_COUNTERS, *PPERF_MULTI_COUNTERS;

typedef struct _PERF_COUNTER_DATA {
	ULONG dwDataSize;
	ULONG dwSize;
} PERF_COUNTER_DATA, *PPERF_COUNTER_DATA;

typedef struct _PERF_COUNTERSET_REG_INFO {
	GUID CounterSetGuid;
	ULONG CounterSetType;
	ULONG DetailLevel;
	ULONG NumCounters;
	ULONG InstanceType;
} PERF_COUNTERSET_REG_INFO, *PPERF_COUNTERSET_REG_INFO;

typedef struct _PERF_COUNTER_REG_INFO {
	ULONG CounterId;
	ULONG Type;
	ULONGLONG Attrib;
	ULONG DetailLevel;
	LONG DefaultScale;
	ULONG BaseCounterId;
	ULONG PerfTimeId;
	ULONG PerfFreqId;
	ULONG MultiId;
	ULONG AggregateFunc;
	ULONG Reserved;
} PERF_COUNTER_REG_INFO, *PPERF_COUNTER_REG_INFO;

typedef struct _STRING_BUFFER_HEADER {
	DWORD dwSize;
	DWORD dwCounters;
} PERF_STRING_BUFFER_HEADER, *PPERF_STRING_BUFFER_HEADER;

typedef struct _STRING_COUNTER_HEADER {
	DWORD dwCounterId;
	DWORD dwOffset;
} PERF_STRING_COUNTER_HEADER, *PPERF_STRING_COUNTER_HEADER;

/* Thread-local last error, as kernel32's. */
PERFLIB_API DWORD GetLastError(void);
PERFLIB_API void SetLastError(DWORD dwErrCode);

/*
 * Provider API. A provider handle is the address of provider state in this process.
 * Unless stated otherwise every function returns ERROR_SUCCESS or a Win32 error code
 * and never calls SetLastError.
 */

/*
 * PerfStartProvider - register a provider. @ProviderGuid: provider id (required).
 * @ControlCallback: optional notification callback, run on a perflib thread when
 * consumers add/remove counters, enumerate or collect. @phProvider: out, the handle.
 * Returns ERROR_INVALID_PARAMETER for NULL arguments (*phProvider untouched),
 * ERROR_OUTOFMEMORY when allocation fails.
 */
PERFLIB_API ULONG PerfStartProvider(GUID *ProviderGuid, PERFLIBREQUEST ControlCallback,
				    HANDLE *phProvider);

/*
 * PerfStartProviderEx - as PerfStartProvider with a PERF_PROVIDER_CONTEXT. A NULL context
 * is accepted (as documented: optional) and means no callback and the default allocator.
 * ERROR_INVALID_PARAMETER when ContextSize < sizeof(PERF_PROVIDER_CONTEXT) or when
 * MemFreeRoutine is set without MemAllocRoutine (or the reverse).
 */
PERFLIB_API ULONG PerfStartProviderEx(GUID *ProviderGuid, PERF_PROVIDER_CONTEXT *ProviderContext,
				      HANDLE *Provider);

/*
 * PerfStopProvider - delete every instance of the provider, drop its counter sets and free
 * the handle. ERROR_INVALID_PARAMETER for NULL or a handle that is not a live provider of
 * this process (a second stop is detected, not a crash).
 */
PERFLIB_API ULONG PerfStopProvider(HANDLE ProviderHandle);

/*
 * PerfSetCounterSetInfo - register a counter-set template (PERF_COUNTERSET_INFO followed by
 * NumCounters PERF_COUNTER_INFO) with the provider. The counter set's pinned maps are opened,
 * or created when this process has CAP_BPF and the set is not registered (lodctr).
 * Counter Offsets are assigned by the library (8 * position) and written back to Template.
 * ERROR_INVALID_PARAMETER: NULL arguments, NumCounters 0, TemplateSize too small, an
 * unknown InstanceType, duplicate counter ids, PERF_SIZE_VARIABLE_LEN counters;
 * ERROR_ALREADY_EXISTS: the counter set is already registered on this provider, or the
 * pinned registration differs from Template; ERROR_ACCESS_DENIED: no permission to
 * create or to open the pins for writing; ERROR_OUTOFMEMORY: allocation failed.
 */
PERFLIB_API ULONG PerfSetCounterSetInfo(HANDLE ProviderHandle, PERF_COUNTERSET_INFO *Template,
					ULONG TemplateSize);

/*
 * PerfCreateInstance - create an instance of a counter set. Returns the instance block
 * (PERF_COUNTERSET_INSTANCE, 8-byte counter slots, name), which lives in the mapped BPF
 * data map, or NULL with the last error set: ERROR_INVALID_PARAMETER (a NULL, stopped or
 * unknown provider handle, a NULL GUID or name, a name longer than the counter set's name capacity, or a second instance
 * of a single-instance counter set), ERROR_NOT_FOUND (counter set not registered on this
 * provider, or unregistered by unlodctr while it runs and more storage is needed), ERROR_ALREADY_EXISTS (same counter set, name and id already live, in any
 * process; names compare case-sensitively), ERROR_NOT_ENOUGH_MEMORY (every slot of the
 * counter set's capacity is in use, or the kernel is out of memory for a new segment),
 * ERROR_OUTOFMEMORY (this process cannot map more memory), ERROR_ACCESS_DENIED (the set must
 * grow and this process may not create BPF maps: no CAP_BPF), ERROR_BUSY (another process
 * creating the same name and id did not finish within a second), ERROR_INVALID_DATA (the
 * set's storage was damaged: a segment removed by hand). Never an error because another
 * process grew or gave back the set's storage meanwhile. On success the last error is left
 * unchanged.
 */
PERFLIB_API PPERF_COUNTERSET_INSTANCE PerfCreateInstance(HANDLE ProviderHandle,
							 const GUID *CounterSetGuid,
							 const WCHAR *Name, ULONG Id);

/*
 * PerfDeleteInstance - delete an instance created by this provider; readers stop seeing it
 * at once and its slot is reused. ERROR_INVALID_PARAMETER for NULL, a block that is not a
 * live instance of this provider, or one already deleted.
 */
PERFLIB_API ULONG PerfDeleteInstance(HANDLE Provider, PPERF_COUNTERSET_INSTANCE InstanceBlock);

/*
 * PerfQueryInstance - find an instance this provider created with the same counter set,
 * name and id. NULL with last error ERROR_INVALID_PARAMETER (NULL arguments) or
 * ERROR_NOT_FOUND.
 */
PERFLIB_API PPERF_COUNTERSET_INSTANCE PerfQueryInstance(HANDLE ProviderHandle,
							const GUID *CounterSetGuid,
							const WCHAR *Name, ULONG Id);

/*
 * Value functions. They do no syscall, no lock and no allocation. @Instance must be a live
 * block from PerfCreateInstance of this provider. ERROR_INVALID_PARAMETER: NULL provider
 * or instance, an instance not of this provider, a by-reference counter (numeric setters),
 * a by-value counter (PerfSetCounterRefValue), a counter whose size class (Type bits 8-9)
 * is not the function's (ULong: PERF_SIZE_DWORD, ULongLong: PERF_SIZE_LARGE);
 * ERROR_NOT_FOUND: no counter with CounterId. Increments and decrements are atomic and
 * wrap modulo 2^32 / 2^64.
 */
PERFLIB_API ULONG PerfSetCounterRefValue(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance,
					 ULONG CounterId, PVOID Address);
PERFLIB_API ULONG PerfSetULongCounterValue(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance,
					   ULONG CounterId, ULONG Value);
PERFLIB_API ULONG PerfSetULongLongCounterValue(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance,
					       ULONG CounterId, ULONGLONG Value);
PERFLIB_API ULONG PerfIncrementULongCounterValue(HANDLE Provider,
						 PPERF_COUNTERSET_INSTANCE Instance,
						 ULONG CounterId, ULONG Value);
PERFLIB_API ULONG PerfIncrementULongLongCounterValue(HANDLE Provider,
						     PPERF_COUNTERSET_INSTANCE Instance,
						     ULONG CounterId, ULONGLONG Value);
PERFLIB_API ULONG PerfDecrementULongCounterValue(HANDLE Provider,
						 PPERF_COUNTERSET_INSTANCE Instance,
						 ULONG CounterId, ULONG Value);
PERFLIB_API ULONG PerfDecrementULongLongCounterValue(HANDLE Provider,
						     PPERF_COUNTERSET_INSTANCE Instance,
						     ULONG CounterId, ULONGLONG Value);

/*
 * Consumer API (docs/CONSUMER.md). Counter sets are read from their pinned maps, read-only;
 * nothing is trusted (a slot that is malformed, being created or deleted, or owned by a dead
 * process is skipped). Common rules:
 *  - szMachine: NULL, "", ".", "localhost" or this host's name (case-insensitive, with or
 *    without a leading "\\") is this machine; any other name gives ERROR_BAD_NETPATH at once,
 *    without network traffic.
 *  - Buffers (spec 7.1): the *Actual argument is mandatory (NULL: ERROR_INVALID_PARAMETER);
 *    a NULL buffer is allowed only with size 0. Too small: ERROR_NOT_ENOUGH_MEMORY and the size
 *    needed in *Actual; the buffer's contents are then unspecified (it may be partly written).
 *    A result that would exceed 4 GiB: ERROR_OUTOFMEMORY. Output blocks are written with
 *    memcpy: any buffer alignment works.
 *  - An unknown counter set is ERROR_WMI_GUID_NOT_FOUND (as Status for PerfAddCounters, WT);
 *    pins the caller may not read: ERROR_ACCESS_DENIED; a corrupt registration:
 *    ERROR_INVALID_DATA.
 *  - Query handles are numbers checked against a list of this process, never reused: NULL,
 *    closed or forged handles give ERROR_INVALID_HANDLE. A query may be used from several
 *    threads (calls on one query are serialised).
 */

/*
 * PerfOpenQueryHandle - create an empty query. @szMachine: see above. @phQuery: out.
 * ERROR_INVALID_PARAMETER when @phQuery is NULL (WT), ERROR_BAD_NETPATH, ERROR_OUTOFMEMORY.
 */
PERFLIB_API ULONG PerfOpenQueryHandle(LPCWSTR szMachine, HANDLE *phQuery);

/*
 * PerfCloseQueryHandle - close a query; providers with a ControlCallback get
 * PERF_REMOVE_COUNTER for each specification still in it. ERROR_INVALID_HANDLE for NULL or a
 * handle that is not an open query of this process.
 */
PERFLIB_API ULONG PerfCloseQueryHandle(HANDLE hQuery);

/*
 * PerfEnumerateCounterSet - the GUIDs of the counter sets registered (pinned) under the pin
 * root, sorted, each once. Sizes count GUIDs, not bytes: @cCounterSetIds is the room,
 * *@pcCounterSetIdsActual the number written or needed (ERROR_NOT_ENOUGH_MEMORY). Sets the
 * caller may not read are listed too.
 */
PERFLIB_API ULONG PerfEnumerateCounterSet(LPCWSTR szMachine, LPGUID pCounterSetIds,
					  DWORD cCounterSetIds, LPDWORD pcCounterSetIdsActual);

/*
 * PerfEnumerateCounterSetInstances - the active instances of a counter set as packed
 * PERF_INSTANCE_HEADER blocks (spec 8.1): header, NUL-terminated UTF-16LE name, zero padding
 * to a multiple of 8. A set without instances gives ERROR_SUCCESS and 0 bytes. Providers with
 * a ControlCallback get PERF_ENUM_INSTANCES first (buffer: this machine's name, UTF-16LE with
 * its NUL); a non-zero answer is returned as is. Aggregate types show what a Windows consumer
 * sees: MULTI_AGGREGATE the instances and "_Total" (InstanceId 0, last); SINGLE_AGGREGATE
 * and SINGLE_AGGREGATE_HISTORY one instance (InstanceId 0, empty name); INSTANCE_AGGREGATE
 * one instance per distinct name (the lowest InstanceId of the name) and "_Total".
 * ERROR_INVALID_PARAMETER for a NULL @pCounterSetId.
 */
PERFLIB_API ULONG PerfEnumerateCounterSetInstances(LPCWSTR szMachine, LPCGUID pCounterSetId,
						   PPERF_INSTANCE_HEADER pInstances,
						   DWORD cbInstances, LPDWORD pcbInstancesActual);

/*
 * PerfQueryCounterSetRegistrationInfo - registration of a counter set (spec 2.9, 3.15-3.18):
 * PERF_REG_COUNTERSET_STRUCT (PERF_COUNTERSET_REG_INFO, CounterSetType 0, then one
 * PERF_COUNTER_REG_INFO per counter in template order), PERF_REG_COUNTER_STRUCT (the counter
 * whose id is @requestLangId; ERROR_NOT_FOUND if none), name and help strings (NUL-terminated
 * UTF-16LE; "" when absent), PERF_STRING_BUFFER_HEADER blocks for counter names and help
 * (unpadded, spec 8.5; dwOffset 0xFFFFFFFF for an absent string), the provider name and GUID.
 * Strings are stored once, in the manifest's language: @requestLangId is ignored for string
 * requests (any LCID, 0 included) and for the codes that take 0. A counter set created on
 * demand (no manifest) reports its GUID in registry form "{XXXXXXXX-...}" as its name, the
 * decimal id as each counter's name, and "" for help strings and the provider name.
 * ERROR_INVALID_PARAMETER for a NULL @pCounterSetId or an unknown @requestCode.
 */
PERFLIB_API ULONG PerfQueryCounterSetRegistrationInfo(LPCWSTR szMachine, LPCGUID pCounterSetId,
						      PerfRegInfoType requestCode,
						      DWORD requestLangId, LPBYTE pbRegInfo,
						      DWORD cbRegInfo, LPDWORD pcbRegInfoActual);

/*
 * PerfAddCounters - add the specifications of @cbCounters bytes of packed
 * PERF_COUNTER_IDENTIFIER blocks to a query, and write each block's Status. The whole call is
 * refused with ERROR_INVALID_PARAMETER, before any block is acted on, when @pCounters is NULL,
 * @cbCounters < 40 (WT), a block's Size is < 40 (WT), not a multiple of 8, or runs past
 * @cbCounters, or bytes are left over. Otherwise it returns ERROR_SUCCESS and each block's
 * Status says: 0 added; ERROR_WMI_GUID_NOT_FOUND counter set not registered (WT);
 * ERROR_NOT_FOUND no counter with CounterId; ERROR_INVALID_PARAMETER name without its NUL
 * inside the block or longer than PERF_MAX_INSTANCE_NAME, no name for a multiple-instance set,
 * a name other than "" or "*" for a single-instance set; ERROR_ALREADY_EXISTS the same
 * specification is in the query (a missing and an empty name are the same); ERROR_ACCESS_DENIED,
 * ERROR_INVALID_DATA as above; the non-zero answer of a provider's ControlCallback to
 * PERF_ADD_COUNTER (buffer: PERF_COUNTER_IDENTITY, machine name, instance name, as spec 8.6
 * without a WNODE_HEADER; NameOffset 0 when the block has no name). A block with a non-zero
 * Status is not part of the query.
 */
PERFLIB_API ULONG PerfAddCounters(HANDLE hQuery, PPERF_COUNTER_IDENTIFIER pCounters,
				  DWORD cbCounters);

/*
 * PerfDeleteCounters - remove specifications; same input and call-level errors as
 * PerfAddCounters. Status: 0 removed (providers get PERF_REMOVE_COUNTER; their answer is
 * ignored), ERROR_NOT_FOUND when the query has no such specification (same counter set,
 * CounterId, InstanceId and name).
 */
PERFLIB_API ULONG PerfDeleteCounters(HANDLE hQuery, PPERF_COUNTER_IDENTIFIER pCounters,
				     DWORD cbCounters);

/*
 * PerfQueryCounterInfo - the query's specifications as packed PERF_COUNTER_IDENTIFIER blocks
 * (as added, Status 0, name and padding kept), each with Index = its position in the
 * PerfQueryCounterData output. Indexes are positions in the query, in the order of addition;
 * a deletion renumbers the ones after it.
 */
PERFLIB_API ULONG PerfQueryCounterInfo(HANDLE hQuery, PPERF_COUNTER_IDENTIFIER pCounters,
				       DWORD cbCounters, LPDWORD pcbCountersActual);

/*
 * PerfQueryCounterData - read every specification of the query: PERF_DATA_HEADER (PerfTimeStamp
 * = CLOCK_MONOTONIC in ns, PerfFreq = 1e9, PerfTime100NSec = UTC FILETIME, SystemTime the same
 * instant) and one PERF_COUNTER_HEADER per specification in Index order (spec 8.2): a single-
 * instance set gives PERF_SINGLE_COUNTER (one counter) or PERF_MULTIPLE_COUNTERS (wildcard);
 * a multiple-instance set PERF_MULTIPLE_INSTANCES or PERF_COUNTERSET with the instances that
 * match InstanceId (0xFFFFFFFF: any) and the name pattern ('*', '?', case-sensitive), possibly
 * none. PERF_MULTI_COUNTERS.dwSize is rounded up to a multiple of 8 (zero padding after the
 * ids). Every PERF_COUNTER_DATA block is 16 bytes: dwDataSize 4 or 8 by the counter type's
 * size class (0 for PERF_SIZE_ZERO and for a by-reference counter whose address is NULL). A
 * specification that cannot be read gives PERF_ERROR_RETURN (dwSize 16) with dwStatus:
 * ERROR_WMI_GUID_NOT_FOUND counter set gone; ERROR_NOT_FOUND counter gone (re-registered);
 * ERROR_WMI_INSTANCE_NOT_FOUND single-instance set without an instance; ERROR_NO_DATA
 * PERF_SINGLE_COUNTER whose by-reference address is NULL; the non-zero answer of a provider's
 * ControlCallback to PERF_COLLECT_START (for every specification of that set). Each counter set
 * of the query is read once per call, between PERF_COLLECT_START and PERF_COLLECT_END (END is
 * sent even when START was refused), after the providers dereferenced their by-reference
 * counters. An empty query gives 48 bytes (WT); (q, NULL, 0, NULL) and (q, buf, 48, NULL) are
 * ERROR_INVALID_PARAMETER (WT).
 */
PERFLIB_API ULONG PerfQueryCounterData(HANDLE hQuery, PPERF_DATA_HEADER pCounterBlock,
				       DWORD cbCounterBlock, LPDWORD pcbCounterBlockActual);

#ifdef __cplusplus
}
#endif

#if defined(__cplusplus) && PERFLIB_WCHAR_IS_WCHAR_T
/*
 * C++ with -fshort-wchar: WCHAR is wchar_t, and these overloads take u"" (char16_t) strings
 * too. They are templates so that a NULL or nullptr machine name still picks the function
 * above, unambiguously; only T = char16_t instantiates them.
 */
template <typename T, typename R> struct perflib_char16_only {
};
template <typename R> struct perflib_char16_only<char16_t, R> {
	typedef R type;
};
template <typename T>
inline typename perflib_char16_only<T, PPERF_COUNTERSET_INSTANCE>::type
PerfCreateInstance(HANDLE ProviderHandle, const GUID *CounterSetGuid, const T *Name, ULONG Id)
{
	return PerfCreateInstance(ProviderHandle, CounterSetGuid,
				  reinterpret_cast<const WCHAR *>(Name), Id);
}
template <typename T>
inline typename perflib_char16_only<T, PPERF_COUNTERSET_INSTANCE>::type
PerfQueryInstance(HANDLE ProviderHandle, const GUID *CounterSetGuid, const T *Name, ULONG Id)
{
	return PerfQueryInstance(ProviderHandle, CounterSetGuid,
				 reinterpret_cast<const WCHAR *>(Name), Id);
}
template <typename T>
inline typename perflib_char16_only<T, ULONG>::type PerfOpenQueryHandle(const T *szMachine,
									HANDLE *phQuery)
{
	return PerfOpenQueryHandle(reinterpret_cast<LPCWSTR>(szMachine), phQuery);
}
template <typename T>
inline typename perflib_char16_only<T, ULONG>::type
PerfEnumerateCounterSet(const T *szMachine, LPGUID pCounterSetIds, DWORD cCounterSetIds,
			LPDWORD pcCounterSetIdsActual)
{
	return PerfEnumerateCounterSet(reinterpret_cast<LPCWSTR>(szMachine), pCounterSetIds,
				       cCounterSetIds, pcCounterSetIdsActual);
}
template <typename T>
inline typename perflib_char16_only<T, ULONG>::type
PerfEnumerateCounterSetInstances(const T *szMachine, LPCGUID pCounterSetId,
				 PPERF_INSTANCE_HEADER pInstances, DWORD cbInstances,
				 LPDWORD pcbInstancesActual)
{
	return PerfEnumerateCounterSetInstances(reinterpret_cast<LPCWSTR>(szMachine), pCounterSetId,
						pInstances, cbInstances, pcbInstancesActual);
}
template <typename T>
inline typename perflib_char16_only<T, ULONG>::type
PerfQueryCounterSetRegistrationInfo(const T *szMachine, LPCGUID pCounterSetId,
				    PerfRegInfoType requestCode, DWORD requestLangId,
				    LPBYTE pbRegInfo, DWORD cbRegInfo, LPDWORD pcbRegInfoActual)
{
	return PerfQueryCounterSetRegistrationInfo(reinterpret_cast<LPCWSTR>(szMachine),
						   pCounterSetId, requestCode, requestLangId,
						   pbRegInfo, cbRegInfo, pcbRegInfoActual);
}
#endif

#endif /* PERFLIB_H */
