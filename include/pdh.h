/* SPDX-License-Identifier: MIT */
/*
 * pdh.h - the Windows Performance Data Helper (PDH) for Linux, on top of the perflib V2
 * consumer API (as pdh.dll sits on perflib). Names, values, prototypes and structure layouts
 * are those of the Windows SDK (../shared/spec/pdh.md; layouts asserted in pdh/).
 *
 * Strings: W functions take UTF-16 (WCHAR, u"..." or L"..." with -fshort-wchar); A functions
 * take UTF-8 and count UTF-8 bytes. Sizes named pcch... count characters of the variant,
 * sizes named pdw...BufferSize count bytes (pdh.md 4.3). Link with
 * `pkg-config --cflags --libs pdh`.
 *
 * Choices where Windows is undocumented (pdh.md "port rule" and "uncertain" items):
 * - only PdhSetCounterScaleFactor's factor is applied (initially 0), never the counter's
 *   default scale; percentages above 100 are capped unless PDH_FMT_NOCAP100;
 * - PdhGetFormattedCounterArray succeeds after one sample of a two-sample counter, with
 *   CStatus PDH_CSTATUS_INVALID_DATA on each item; items carry the plain instance name,
 *   duplicates repeated; a formatted read of a wildcard counter reads its first instance;
 * - instances are matched by name and duplicate number "#n" (enumeration order, names
 *   compared case-insensitively), as Windows does;
 * - name indexes (PdhLookupPerfIndexByName) are even numbers derived from the name, stable
 *   while the name is registered;
 * - logs: CSV and TSV exactly as typeperf writes them (values with six decimals, " " for no
 *   value); a counter read back from a log reports type PERF_COUNTER_LARGE_RAWCOUNT and its
 *   logged value.
 */
#ifndef _PDH_H_
#define _PDH_H_

#include "perflib.h"
#include "pdhmsg.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PDH_API PERFLIB_API

typedef LONG PDH_STATUS;
typedef HANDLE PDH_HQUERY, PDH_HCOUNTER, PDH_HLOG, HQUERY, HCOUNTER, HLOG;
typedef uint64_t DWORD_PTR;
typedef uint8_t BOOLEAN;
typedef char *LPSTR;
typedef const char *LPCSTR;
typedef int64_t *PLONGLONG;

#ifndef _FILETIME_
#define _FILETIME_
typedef struct _FILETIME {
	DWORD dwLowDateTime;
	DWORD dwHighDateTime;
} FILETIME, *PFILETIME, *LPFILETIME;
#endif

#define PDH_FUNCTION PDH_API PDH_STATUS WINAPI

/* Format flags (dwFormat). */
#define PDH_FMT_RAW ((DWORD)0x00000010)
#define PDH_FMT_ANSI ((DWORD)0x00000020)
#define PDH_FMT_UNICODE ((DWORD)0x00000040)
#define PDH_FMT_LONG ((DWORD)0x00000100)
#define PDH_FMT_DOUBLE ((DWORD)0x00000200)
#define PDH_FMT_LARGE ((DWORD)0x00000400)
#define PDH_FMT_NOSCALE ((DWORD)0x00001000)
#define PDH_FMT_1000 ((DWORD)0x00002000)
#define PDH_FMT_NODATA ((DWORD)0x00004000)
#define PDH_FMT_NOCAP100 ((DWORD)0x00008000)
#define PERF_DETAIL_COSTLY ((DWORD)0x00010000)
#define PERF_DETAIL_STANDARD ((DWORD)0x0000FFFF)

/* Limits and versions. */
#define MAX_COUNTER_PATH 256
#define PDH_MAX_COUNTER_NAME 1024
#define PDH_MAX_INSTANCE_NAME 1024
#define PDH_MAX_COUNTER_PATH 2048
#define PDH_MAX_DATASOURCE_PATH 1024
#define PDH_MAX_SCALE (7L)
#define PDH_MIN_SCALE (-7L)
#define PDH_CVERSION_WIN40 ((DWORD)(0x0400))
#define PDH_CVERSION_WIN50 ((DWORD)(0x0500))
#define PDH_VERSION ((DWORD)((PDH_CVERSION_WIN50) + 0x0003))
#define PDH_OBJECT_HAS_INSTANCES ((DWORD)0x00000001)
#define H_REALTIME_DATASOURCE NULL
#define H_WBEM_DATASOURCE ((HANDLE)(intptr_t)-1)
#define MAX_TIME_VALUE ((LONGLONG)0x7FFFFFFFFFFFFFFF)
#define MIN_TIME_VALUE ((LONGLONG)0)
#define PDH_NOEXPANDCOUNTERS 1
#define PDH_NOEXPANDINSTANCES 2
#define PDH_REFRESHCOUNTERS 4
#define PDH_PATH_WBEM_NONE ((DWORD)0x00000000)
#define PDH_PATH_WBEM_RESULT ((DWORD)0x00000001)
#define PDH_PATH_WBEM_INPUT ((DWORD)0x00000002)
#define PDH_PATH_LANG_FLAGS(LangId, Flags)                                                         \
	((DWORD)(((LangId & 0x0000FFFF) << 16) | (Flags & 0x0000FFFF)))
#define DATA_SOURCE_REGISTRY ((DWORD)0x00000001)
#define DATA_SOURCE_LOGFILE ((DWORD)0x00000002)
#define DATA_SOURCE_WBEM ((DWORD)0x00000004)
#define PDH_FLAGS_CLOSE_QUERY ((DWORD)0x00000001)
#define PDH_FLAGS_FILE_BROWSER_ONLY ((DWORD)0x00000001)

/* Log access flags and types (PdhOpenLog). */
#define PDH_LOG_READ_ACCESS ((DWORD)0x00010000)
#define PDH_LOG_WRITE_ACCESS ((DWORD)0x00020000)
#define PDH_LOG_UPDATE_ACCESS ((DWORD)0x00040000)
#define PDH_LOG_ACCESS_MASK ((DWORD)0x000F0000)
#define PDH_LOG_CREATE_NEW ((DWORD)0x00000001)
#define PDH_LOG_CREATE_ALWAYS ((DWORD)0x00000002)
#define PDH_LOG_OPEN_ALWAYS ((DWORD)0x00000003)
#define PDH_LOG_OPEN_EXISTING ((DWORD)0x00000004)
#define PDH_LOG_CREATE_MASK ((DWORD)0x0000000F)
#define PDH_LOG_OPT_USER_STRING ((DWORD)0x01000000)
#define PDH_LOG_OPT_CIRCULAR ((DWORD)0x02000000)
#define PDH_LOG_OPT_MAX_IS_BYTES ((DWORD)0x04000000)
#define PDH_LOG_OPT_APPEND ((DWORD)0x08000000)
#define PDH_LOG_OPT_MASK ((DWORD)0x0F000000)
#define PDH_LOG_TYPE_UNDEFINED 0
#define PDH_LOG_TYPE_CSV 1
#define PDH_LOG_TYPE_TSV 2
#define PDH_LOG_TYPE_RETIRED_BIN 3
#define PDH_LOG_TYPE_TRACE_KERNEL 4
#define PDH_LOG_TYPE_TRACE_GENERIC 5
#define PDH_LOG_TYPE_PERFMON 6
#define PDH_LOG_TYPE_SQL 7
#define PDH_LOG_TYPE_BINARY 8

/* Structures (x86-64 layouts of pdh.md 2; sizes and offsets asserted in pdh/). */
typedef struct _PDH_RAW_COUNTER {
	DWORD CStatus;
	FILETIME TimeStamp;
	LONGLONG FirstValue;
	LONGLONG SecondValue;
	DWORD MultiCount;
} PDH_RAW_COUNTER, *PPDH_RAW_COUNTER;

typedef struct _PDH_RAW_COUNTER_ITEM_A {
	LPSTR szName;
	PDH_RAW_COUNTER RawValue;
} PDH_RAW_COUNTER_ITEM_A, *PPDH_RAW_COUNTER_ITEM_A;

typedef struct _PDH_RAW_COUNTER_ITEM_W {
	LPWSTR szName;
	PDH_RAW_COUNTER RawValue;
} PDH_RAW_COUNTER_ITEM_W, *PPDH_RAW_COUNTER_ITEM_W;

typedef struct _PDH_FMT_COUNTERVALUE {
	DWORD CStatus;
	union {
		LONG longValue;
		double doubleValue;
		LONGLONG largeValue;
		LPCSTR AnsiStringValue;
		LPCWSTR WideStringValue;
	};
} PDH_FMT_COUNTERVALUE, *PPDH_FMT_COUNTERVALUE;

typedef struct _PDH_FMT_COUNTERVALUE_ITEM_A {
	LPSTR szName;
	PDH_FMT_COUNTERVALUE FmtValue;
} PDH_FMT_COUNTERVALUE_ITEM_A, *PPDH_FMT_COUNTERVALUE_ITEM_A;

typedef struct _PDH_FMT_COUNTERVALUE_ITEM_W {
	LPWSTR szName;
	PDH_FMT_COUNTERVALUE FmtValue;
} PDH_FMT_COUNTERVALUE_ITEM_W, *PPDH_FMT_COUNTERVALUE_ITEM_W;

typedef struct _PDH_STATISTICS {
	DWORD dwFormat;
	DWORD count;
	PDH_FMT_COUNTERVALUE min;
	PDH_FMT_COUNTERVALUE max;
	PDH_FMT_COUNTERVALUE mean;
} PDH_STATISTICS, *PPDH_STATISTICS;

typedef struct _PDH_COUNTER_PATH_ELEMENTS_A {
	LPSTR szMachineName;
	LPSTR szObjectName;
	LPSTR szInstanceName;
	LPSTR szParentInstance;
	DWORD dwInstanceIndex;
	LPSTR szCounterName;
} PDH_COUNTER_PATH_ELEMENTS_A, *PPDH_COUNTER_PATH_ELEMENTS_A;

typedef struct _PDH_COUNTER_PATH_ELEMENTS_W {
	LPWSTR szMachineName;
	LPWSTR szObjectName;
	LPWSTR szInstanceName;
	LPWSTR szParentInstance;
	DWORD dwInstanceIndex;
	LPWSTR szCounterName;
} PDH_COUNTER_PATH_ELEMENTS_W, *PPDH_COUNTER_PATH_ELEMENTS_W;

typedef struct _PDH_DATA_ITEM_PATH_ELEMENTS_A {
	LPSTR szMachineName;
	GUID ObjectGUID;
	DWORD dwItemId;
	LPSTR szInstanceName;
} PDH_DATA_ITEM_PATH_ELEMENTS_A, *PPDH_DATA_ITEM_PATH_ELEMENTS_A;

typedef struct _PDH_DATA_ITEM_PATH_ELEMENTS_W {
	LPWSTR szMachineName;
	GUID ObjectGUID;
	DWORD dwItemId;
	LPWSTR szInstanceName;
} PDH_DATA_ITEM_PATH_ELEMENTS_W, *PPDH_DATA_ITEM_PATH_ELEMENTS_W;

typedef struct _PDH_COUNTER_INFO_A {
	DWORD dwLength;
	DWORD dwType;
	DWORD CVersion;
	DWORD CStatus;
	LONG lScale;
	LONG lDefaultScale;
	DWORD_PTR dwUserData;
	DWORD_PTR dwQueryUserData;
	LPSTR szFullPath;
	union {
		PDH_DATA_ITEM_PATH_ELEMENTS_A DataItemPath;
		PDH_COUNTER_PATH_ELEMENTS_A CounterPath;
		struct {
			LPSTR szMachineName;
			LPSTR szObjectName;
			LPSTR szInstanceName;
			LPSTR szParentInstance;
			DWORD dwInstanceIndex;
			LPSTR szCounterName;
		};
	};
	LPSTR szExplainText;
	DWORD DataBuffer[1];
} PDH_COUNTER_INFO_A, *PPDH_COUNTER_INFO_A;

typedef struct _PDH_COUNTER_INFO_W {
	DWORD dwLength;
	DWORD dwType;
	DWORD CVersion;
	DWORD CStatus;
	LONG lScale;
	LONG lDefaultScale;
	DWORD_PTR dwUserData;
	DWORD_PTR dwQueryUserData;
	LPWSTR szFullPath;
	union {
		PDH_DATA_ITEM_PATH_ELEMENTS_W DataItemPath;
		PDH_COUNTER_PATH_ELEMENTS_W CounterPath;
		struct {
			LPWSTR szMachineName;
			LPWSTR szObjectName;
			LPWSTR szInstanceName;
			LPWSTR szParentInstance;
			DWORD dwInstanceIndex;
			LPWSTR szCounterName;
		};
	};
	LPWSTR szExplainText;
	DWORD DataBuffer[1];
} PDH_COUNTER_INFO_W, *PPDH_COUNTER_INFO_W;

typedef struct _PDH_TIME_INFO {
	LONGLONG StartTime;
	LONGLONG EndTime;
	DWORD SampleCount;
} PDH_TIME_INFO, *PPDH_TIME_INFO;

typedef struct _PDH_RAW_LOG_RECORD {
	DWORD dwStructureSize;
	DWORD dwRecordType;
	DWORD dwItems;
	UCHAR RawBytes[1];
} PDH_RAW_LOG_RECORD, *PPDH_RAW_LOG_RECORD;

/* Query lifecycle. */
PDH_FUNCTION PdhOpenQueryW(LPCWSTR szDataSource, DWORD_PTR dwUserData, PDH_HQUERY *phQuery);
PDH_FUNCTION PdhOpenQueryA(LPCSTR szDataSource, DWORD_PTR dwUserData, PDH_HQUERY *phQuery);
PDH_FUNCTION PdhOpenQueryH(PDH_HLOG hDataSource, DWORD_PTR dwUserData, PDH_HQUERY *phQuery);
PDH_FUNCTION PdhCloseQuery(PDH_HQUERY hQuery);
PDH_API BOOL WINAPI PdhIsRealTimeQuery(PDH_HQUERY hQuery);

/* Counters. */
PDH_FUNCTION PdhAddCounterW(PDH_HQUERY hQuery, LPCWSTR szFullCounterPath, DWORD_PTR dwUserData,
			    PDH_HCOUNTER *phCounter);
PDH_FUNCTION PdhAddCounterA(PDH_HQUERY hQuery, LPCSTR szFullCounterPath, DWORD_PTR dwUserData,
			    PDH_HCOUNTER *phCounter);
PDH_FUNCTION PdhAddEnglishCounterW(PDH_HQUERY hQuery, LPCWSTR szFullCounterPath,
				   DWORD_PTR dwUserData, PDH_HCOUNTER *phCounter);
PDH_FUNCTION PdhAddEnglishCounterA(PDH_HQUERY hQuery, LPCSTR szFullCounterPath,
				   DWORD_PTR dwUserData, PDH_HCOUNTER *phCounter);
PDH_FUNCTION PdhRemoveCounter(PDH_HCOUNTER hCounter);

/* Collection. */
PDH_FUNCTION PdhCollectQueryData(PDH_HQUERY hQuery);
PDH_FUNCTION PdhCollectQueryDataWithTime(PDH_HQUERY hQuery, LONGLONG *pllTimeStamp);
PDH_FUNCTION PdhCollectQueryDataEx(PDH_HQUERY hQuery, DWORD dwIntervalTime, HANDLE hNewDataEvent);

/* Values. */
PDH_FUNCTION PdhGetFormattedCounterValue(PDH_HCOUNTER hCounter, DWORD dwFormat, LPDWORD lpdwType,
					 PPDH_FMT_COUNTERVALUE pValue);
PDH_FUNCTION PdhGetFormattedCounterArrayW(PDH_HCOUNTER hCounter, DWORD dwFormat,
					  LPDWORD lpdwBufferSize, LPDWORD lpdwItemCount,
					  PPDH_FMT_COUNTERVALUE_ITEM_W ItemBuffer);
PDH_FUNCTION PdhGetFormattedCounterArrayA(PDH_HCOUNTER hCounter, DWORD dwFormat,
					  LPDWORD lpdwBufferSize, LPDWORD lpdwItemCount,
					  PPDH_FMT_COUNTERVALUE_ITEM_A ItemBuffer);
PDH_FUNCTION PdhGetRawCounterValue(PDH_HCOUNTER hCounter, LPDWORD lpdwType,
				   PPDH_RAW_COUNTER pValue);
PDH_FUNCTION PdhGetRawCounterArrayW(PDH_HCOUNTER hCounter, LPDWORD lpdwBufferSize,
				    LPDWORD lpdwItemCount, PPDH_RAW_COUNTER_ITEM_W ItemBuffer);
PDH_FUNCTION PdhGetRawCounterArrayA(PDH_HCOUNTER hCounter, LPDWORD lpdwBufferSize,
				    LPDWORD lpdwItemCount, PPDH_RAW_COUNTER_ITEM_A ItemBuffer);

/* Computation. */
PDH_FUNCTION PdhCalculateCounterFromRawValue(PDH_HCOUNTER hCounter, DWORD dwFormat,
					     PPDH_RAW_COUNTER rawValue1, PPDH_RAW_COUNTER rawValue2,
					     PPDH_FMT_COUNTERVALUE fmtValue);
PDH_FUNCTION PdhFormatFromRawValue(DWORD dwCounterType, DWORD dwFormat, LONGLONG *pTimeBase,
				   PPDH_RAW_COUNTER pRawValue1, PPDH_RAW_COUNTER pRawValue2,
				   PPDH_FMT_COUNTERVALUE pFmtValue);
PDH_FUNCTION PdhComputeCounterStatistics(PDH_HCOUNTER hCounter, DWORD dwFormat, DWORD dwFirstEntry,
					 DWORD dwNumEntries, PPDH_RAW_COUNTER lpRawValueArray,
					 PPDH_STATISTICS data);
PDH_FUNCTION PdhGetCounterTimeBase(PDH_HCOUNTER hCounter, LONGLONG *pTimeBase);
PDH_FUNCTION PdhSetCounterScaleFactor(PDH_HCOUNTER hCounter, LONG lFactor);

/* Counter information. */
PDH_FUNCTION PdhGetCounterInfoW(PDH_HCOUNTER hCounter, BOOLEAN bRetrieveExplainText,
				LPDWORD pdwBufferSize, PPDH_COUNTER_INFO_W lpBuffer);
PDH_FUNCTION PdhGetCounterInfoA(PDH_HCOUNTER hCounter, BOOLEAN bRetrieveExplainText,
				LPDWORD pdwBufferSize, PPDH_COUNTER_INFO_A lpBuffer);

/* Paths. */
PDH_FUNCTION PdhMakeCounterPathW(PPDH_COUNTER_PATH_ELEMENTS_W pCounterPathElements,
				 LPWSTR szFullPathBuffer, LPDWORD pcchBufferSize, DWORD dwFlags);
PDH_FUNCTION PdhMakeCounterPathA(PPDH_COUNTER_PATH_ELEMENTS_A pCounterPathElements,
				 LPSTR szFullPathBuffer, LPDWORD pcchBufferSize, DWORD dwFlags);
PDH_FUNCTION PdhParseCounterPathW(LPCWSTR szFullPathBuffer,
				  PPDH_COUNTER_PATH_ELEMENTS_W pCounterPathElements,
				  LPDWORD pdwBufferSize, DWORD dwFlags);
PDH_FUNCTION PdhParseCounterPathA(LPCSTR szFullPathBuffer,
				  PPDH_COUNTER_PATH_ELEMENTS_A pCounterPathElements,
				  LPDWORD pdwBufferSize, DWORD dwFlags);
PDH_FUNCTION PdhParseInstanceNameW(LPCWSTR szInstanceString, LPWSTR szInstanceName,
				   LPDWORD pcchInstanceNameLength, LPWSTR szParentName,
				   LPDWORD pcchParentNameLength, LPDWORD lpIndex);
PDH_FUNCTION PdhParseInstanceNameA(LPCSTR szInstanceString, LPSTR szInstanceName,
				   LPDWORD pcchInstanceNameLength, LPSTR szParentName,
				   LPDWORD pcchParentNameLength, LPDWORD lpIndex);
PDH_FUNCTION PdhValidatePathW(LPCWSTR szFullPathBuffer);
PDH_FUNCTION PdhValidatePathA(LPCSTR szFullPathBuffer);
PDH_FUNCTION PdhValidatePathExW(PDH_HLOG hDataSource, LPCWSTR szFullPathBuffer);
PDH_FUNCTION PdhValidatePathExA(PDH_HLOG hDataSource, LPCSTR szFullPathBuffer);
PDH_FUNCTION PdhExpandWildCardPathW(LPCWSTR szDataSource, LPCWSTR szWildCardPath,
				    LPWSTR mszExpandedPathList, LPDWORD pcchPathListLength,
				    DWORD dwFlags);
PDH_FUNCTION PdhExpandWildCardPathA(LPCSTR szDataSource, LPCSTR szWildCardPath,
				    LPSTR mszExpandedPathList, LPDWORD pcchPathListLength,
				    DWORD dwFlags);
PDH_FUNCTION PdhExpandWildCardPathHW(PDH_HLOG hDataSource, LPCWSTR szWildCardPath,
				     LPWSTR mszExpandedPathList, LPDWORD pcchPathListLength,
				     DWORD dwFlags);
PDH_FUNCTION PdhExpandWildCardPathHA(PDH_HLOG hDataSource, LPCSTR szWildCardPath,
				     LPSTR mszExpandedPathList, LPDWORD pcchPathListLength,
				     DWORD dwFlags);
PDH_FUNCTION PdhExpandCounterPathW(LPCWSTR szWildCardPath, LPWSTR mszExpandedPathList,
				   LPDWORD pcchPathListLength);
PDH_FUNCTION PdhExpandCounterPathA(LPCSTR szWildCardPath, LPSTR mszExpandedPathList,
				   LPDWORD pcchPathListLength);

/* Enumeration. */
PDH_FUNCTION PdhEnumObjectsW(LPCWSTR szDataSource, LPCWSTR szMachineName, LPWSTR mszObjectList,
			     LPDWORD pcchBufferSize, DWORD dwDetailLevel, BOOL bRefresh);
PDH_FUNCTION PdhEnumObjectsA(LPCSTR szDataSource, LPCSTR szMachineName, LPSTR mszObjectList,
			     LPDWORD pcchBufferSize, DWORD dwDetailLevel, BOOL bRefresh);
PDH_FUNCTION PdhEnumObjectsHW(PDH_HLOG hDataSource, LPCWSTR szMachineName, LPWSTR mszObjectList,
			      LPDWORD pcchBufferSize, DWORD dwDetailLevel, BOOL bRefresh);
PDH_FUNCTION PdhEnumObjectsHA(PDH_HLOG hDataSource, LPCSTR szMachineName, LPSTR mszObjectList,
			      LPDWORD pcchBufferSize, DWORD dwDetailLevel, BOOL bRefresh);
PDH_FUNCTION PdhEnumObjectItemsW(LPCWSTR szDataSource, LPCWSTR szMachineName, LPCWSTR szObjectName,
				 LPWSTR mszCounterList, LPDWORD pcchCounterListLength,
				 LPWSTR mszInstanceList, LPDWORD pcchInstanceListLength,
				 DWORD dwDetailLevel, DWORD dwFlags);
PDH_FUNCTION PdhEnumObjectItemsA(LPCSTR szDataSource, LPCSTR szMachineName, LPCSTR szObjectName,
				 LPSTR mszCounterList, LPDWORD pcchCounterListLength,
				 LPSTR mszInstanceList, LPDWORD pcchInstanceListLength,
				 DWORD dwDetailLevel, DWORD dwFlags);
PDH_FUNCTION PdhEnumObjectItemsHW(PDH_HLOG hDataSource, LPCWSTR szMachineName, LPCWSTR szObjectName,
				  LPWSTR mszCounterList, LPDWORD pcchCounterListLength,
				  LPWSTR mszInstanceList, LPDWORD pcchInstanceListLength,
				  DWORD dwDetailLevel, DWORD dwFlags);
PDH_FUNCTION PdhEnumObjectItemsHA(PDH_HLOG hDataSource, LPCSTR szMachineName, LPCSTR szObjectName,
				  LPSTR mszCounterList, LPDWORD pcchCounterListLength,
				  LPSTR mszInstanceList, LPDWORD pcchInstanceListLength,
				  DWORD dwDetailLevel, DWORD dwFlags);
PDH_FUNCTION PdhEnumMachinesW(LPCWSTR szDataSource, LPWSTR mszMachineList, LPDWORD pcchBufferSize);
PDH_FUNCTION PdhEnumMachinesA(LPCSTR szDataSource, LPSTR mszMachineList, LPDWORD pcchBufferSize);
PDH_FUNCTION PdhEnumMachinesHW(PDH_HLOG hDataSource, LPWSTR mszMachineList, LPDWORD pcchBufferSize);
PDH_FUNCTION PdhEnumMachinesHA(PDH_HLOG hDataSource, LPSTR mszMachineList, LPDWORD pcchBufferSize);
PDH_FUNCTION PdhConnectMachineW(LPCWSTR szMachineName);
PDH_FUNCTION PdhConnectMachineA(LPCSTR szMachineName);

/* Name indexes. */
PDH_FUNCTION PdhLookupPerfNameByIndexW(LPCWSTR szMachineName, DWORD dwNameIndex,
				       LPWSTR szNameBuffer, LPDWORD pcchNameBufferSize);
PDH_FUNCTION PdhLookupPerfNameByIndexA(LPCSTR szMachineName, DWORD dwNameIndex, LPSTR szNameBuffer,
				       LPDWORD pcchNameBufferSize);
PDH_FUNCTION PdhLookupPerfIndexByNameW(LPCWSTR szMachineName, LPCWSTR szNameBuffer,
				       LPDWORD pdwIndex);
PDH_FUNCTION PdhLookupPerfIndexByNameA(LPCSTR szMachineName, LPCSTR szNameBuffer, LPDWORD pdwIndex);

/* Logs (CSV and TSV). */
PDH_FUNCTION PdhOpenLogW(LPCWSTR szLogFileName, DWORD dwAccessFlags, LPDWORD lpdwLogType,
			 PDH_HQUERY hQuery, DWORD dwMaxSize, LPCWSTR szUserCaption,
			 PDH_HLOG *phLog);
PDH_FUNCTION PdhOpenLogA(LPCSTR szLogFileName, DWORD dwAccessFlags, LPDWORD lpdwLogType,
			 PDH_HQUERY hQuery, DWORD dwMaxSize, LPCSTR szUserCaption, PDH_HLOG *phLog);
PDH_FUNCTION PdhUpdateLogW(PDH_HLOG hLog, LPCWSTR szUserString);
PDH_FUNCTION PdhUpdateLogA(PDH_HLOG hLog, LPCSTR szUserString);
PDH_FUNCTION PdhUpdateLogFileCatalog(PDH_HLOG hLog);
PDH_FUNCTION PdhGetLogFileSize(PDH_HLOG hLog, LONGLONG *llSize);
PDH_FUNCTION PdhCloseLog(PDH_HLOG hLog, DWORD dwFlags);
PDH_FUNCTION PdhBindInputDataSourceW(PDH_HLOG *phDataSource, LPCWSTR LogFileNameList);
PDH_FUNCTION PdhBindInputDataSourceA(PDH_HLOG *phDataSource, LPCSTR LogFileNameList);
PDH_FUNCTION PdhGetDataSourceTimeRangeW(LPCWSTR szDataSource, LPDWORD pdwNumEntries,
					PPDH_TIME_INFO pInfo, LPDWORD pdwBufferSize);
PDH_FUNCTION PdhGetDataSourceTimeRangeA(LPCSTR szDataSource, LPDWORD pdwNumEntries,
					PPDH_TIME_INFO pInfo, LPDWORD pdwBufferSize);
PDH_FUNCTION PdhGetDataSourceTimeRangeH(PDH_HLOG hDataSource, LPDWORD pdwNumEntries,
					PPDH_TIME_INFO pInfo, LPDWORD pdwBufferSize);
PDH_FUNCTION PdhSetQueryTimeRange(PDH_HQUERY hQuery, PPDH_TIME_INFO pInfo);

/* Misc. */
PDH_FUNCTION PdhGetDllVersion(LPDWORD lpdwVersion);

/*
 * Event objects for PdhCollectQueryDataEx (pdh.md 9.2), with Windows prototypes. Attributes
 * and names are ignored; an auto-reset event is reset by the wait that consumes it.
 */
#define WAIT_OBJECT_0 ((DWORD)0x00000000)
#define WAIT_TIMEOUT ((DWORD)0x00000102)
#define WAIT_FAILED ((DWORD)0xFFFFFFFF)
#ifndef INFINITE
#define INFINITE ((DWORD)0xFFFFFFFF)
#endif
PDH_API HANDLE WINAPI CreateEventW(void *lpEventAttributes, BOOL bManualReset, BOOL bInitialState,
				   LPCWSTR lpName);
PDH_API BOOL WINAPI SetEvent(HANDLE hEvent);
PDH_API BOOL WINAPI ResetEvent(HANDLE hEvent);
PDH_API DWORD WINAPI WaitForSingleObject(HANDLE hHandle, DWORD dwMilliseconds);
PDH_API BOOL WINAPI CloseHandle(HANDLE hObject);

/* A/W generic names: W when UNICODE is defined, else A. */
#ifdef UNICODE
#define PDH_TNAME(n) n##W
#else
#define PDH_TNAME(n) n##A
#endif
#define PdhOpenQuery PDH_TNAME(PdhOpenQuery)
#define PdhAddCounter PDH_TNAME(PdhAddCounter)
#define PdhAddEnglishCounter PDH_TNAME(PdhAddEnglishCounter)
#define PdhGetFormattedCounterArray PDH_TNAME(PdhGetFormattedCounterArray)
#define PdhGetRawCounterArray PDH_TNAME(PdhGetRawCounterArray)
#define PdhGetCounterInfo PDH_TNAME(PdhGetCounterInfo)
#define PdhMakeCounterPath PDH_TNAME(PdhMakeCounterPath)
#define PdhParseCounterPath PDH_TNAME(PdhParseCounterPath)
#define PdhParseInstanceName PDH_TNAME(PdhParseInstanceName)
#define PdhValidatePath PDH_TNAME(PdhValidatePath)
#define PdhValidatePathEx PDH_TNAME(PdhValidatePathEx)
#define PdhExpandWildCardPath PDH_TNAME(PdhExpandWildCardPath)
#define PdhExpandWildCardPathH PDH_TNAME(PdhExpandWildCardPathH)
#define PdhExpandCounterPath PDH_TNAME(PdhExpandCounterPath)
#define PdhEnumObjects PDH_TNAME(PdhEnumObjects)
#define PdhEnumObjectsH PDH_TNAME(PdhEnumObjectsH)
#define PdhEnumObjectItems PDH_TNAME(PdhEnumObjectItems)
#define PdhEnumObjectItemsH PDH_TNAME(PdhEnumObjectItemsH)
#define PdhEnumMachines PDH_TNAME(PdhEnumMachines)
#define PdhEnumMachinesH PDH_TNAME(PdhEnumMachinesH)
#define PdhConnectMachine PDH_TNAME(PdhConnectMachine)
#define PdhLookupPerfNameByIndex PDH_TNAME(PdhLookupPerfNameByIndex)
#define PdhLookupPerfIndexByName PDH_TNAME(PdhLookupPerfIndexByName)
#define PdhOpenLog PDH_TNAME(PdhOpenLog)
#define PdhUpdateLog PDH_TNAME(PdhUpdateLog)
#define PdhBindInputDataSource PDH_TNAME(PdhBindInputDataSource)
#define PdhGetDataSourceTimeRange PDH_TNAME(PdhGetDataSourceTimeRange)
#ifdef UNICODE
typedef PDH_RAW_COUNTER_ITEM_W PDH_RAW_COUNTER_ITEM, *PPDH_RAW_COUNTER_ITEM;
typedef PDH_FMT_COUNTERVALUE_ITEM_W PDH_FMT_COUNTERVALUE_ITEM, *PPDH_FMT_COUNTERVALUE_ITEM;
typedef PDH_COUNTER_PATH_ELEMENTS_W PDH_COUNTER_PATH_ELEMENTS, *PPDH_COUNTER_PATH_ELEMENTS;
typedef PDH_COUNTER_INFO_W PDH_COUNTER_INFO, *PPDH_COUNTER_INFO;
#else
typedef PDH_RAW_COUNTER_ITEM_A PDH_RAW_COUNTER_ITEM, *PPDH_RAW_COUNTER_ITEM;
typedef PDH_FMT_COUNTERVALUE_ITEM_A PDH_FMT_COUNTERVALUE_ITEM, *PPDH_FMT_COUNTERVALUE_ITEM;
typedef PDH_COUNTER_PATH_ELEMENTS_A PDH_COUNTER_PATH_ELEMENTS, *PPDH_COUNTER_PATH_ELEMENTS;
typedef PDH_COUNTER_INFO_A PDH_COUNTER_INFO, *PPDH_COUNTER_INFO;
#endif

#ifdef __cplusplus
}
#endif

#endif /* _PDH_H_ */
