// SPDX-License-Identifier: MIT
/*
 * CpuPerfCounters.cpp - the sample's class: one query (PerfOpenQueryHandle + PerfAddCounters
 * with the wildcard counter, every instance id and the name "*"), PerfQueryCounterData into a
 * buffer grown on ERROR_NOT_ENOUGH_MEMORY, and a walk of the result that checks every size
 * before it trusts it, as the docs ask of a consumer.
 *
 * Mechanical changes against the Windows code: <windows.h>, <perflib.h> and <winperf.h> are
 * <perflib/win32compat.h> (which also gives wcsnlen and wcsncpy_s for the 16-bit wchar_t of
 * -fshort-wchar). Nothing else.
 */
#include "CpuPerfCounters.h"
#include <perflib/win32compat.h>
#include <stdlib.h>

_Check_return_ _Ret_maybenull_
_Post_writable_byte_size_(cb) static void *AllocateBytes(unsigned cb) noexcept
{
	return malloc(cb);
}

static void FreeBytes(_Pre_maybenull_ _Post_invalid_ void *p) noexcept
{
	if (p) {
		free(p);
	}
	return;
}

// a 4-byte field takes a 4- or 8-byte value (the low half)
static void AssignCounterValue(_Inout_ __int32 unsigned *pVar,
			       _In_ PERF_COUNTER_DATA const *pData) noexcept
{
	if (pData->dwDataSize == 4 || pData->dwDataSize == 8) {
		*pVar = *reinterpret_cast<__int32 unsigned const *>(pData + 1);
	}
}

// an 8-byte field takes an 8-byte value, or widens a 4-byte one
static void AssignCounterValue(_Inout_ __int64 unsigned *pVar,
			       _In_ PERF_COUNTER_DATA const *pData) noexcept
{
	if (pData->dwDataSize == 8) {
		*pVar = *reinterpret_cast<__int64 unsigned const *>(pData + 1);
	} else if (pData->dwDataSize == 4) {
		*pVar = *reinterpret_cast<__int32 unsigned const *>(pData + 1);
	}
}

CpuPerfCounters::~CpuPerfCounters()
{
	if (m_hQuery) {
		PerfCloseQueryHandle(m_hQuery);
	}

	FreeBytes(m_pData);
}

CpuPerfCounters::CpuPerfCounters() noexcept : m_hQuery(), m_pData(), m_cbData()
{
	return;
}

_Success_(return == 0) unsigned CpuPerfCounters::ReadData(
	_Out_opt_ CpuPerfTimestamp *timestamp,
	_Out_cap_post_count_(bufferCount, *bufferUsed) CpuPerfData *buffer, unsigned bufferCount,
	_Out_ unsigned *bufferUsed) noexcept
{
	unsigned status;
	DWORD cbData;
	PERF_DATA_HEADER *pDataHeader;
	PERF_COUNTER_HEADER const *pCounterHeader;
	PERF_MULTI_COUNTERS const *pMultiCounters;
	PERF_MULTI_INSTANCES const *pMultiInstances;
	PERF_INSTANCE_HEADER const *pInstanceHeader;
	unsigned cInstances = 0;

	// the query is opened at the first call and kept
	if (m_hQuery == nullptr) {
		HANDLE hQuery = 0;
		status = PerfOpenQueryHandle(nullptr, &hQuery);
		if (ERROR_SUCCESS != status) {
			goto Done;
		}

		// one specification: the set, every counter, every instance id, any name
		struct {
			PERF_COUNTER_IDENTIFIER Identifier;
			WCHAR Name[4];
		} querySpec = {{// Processor Information
				{0xb4fc721a,
				 0x378,
				 0x476f,
				 {0x89, 0xba, 0xa5, 0xa7, 0x9f, 0x81, 0xb, 0x36}},
				0,
				sizeof(querySpec),
				PERF_WILDCARD_COUNTER,
				0xFFFFFFFF},
			       L"*"};

		status = PerfAddCounters(hQuery, &querySpec.Identifier, sizeof(querySpec));
		if (ERROR_SUCCESS == status) {
			status = querySpec.Identifier.Status;
		}

		if (ERROR_SUCCESS != status) {
			PerfCloseQueryHandle(hQuery);
			goto Done;
		}

		// With several specifications on the handle the order of the results would
		// have to be read with PerfQueryCounterInfo; this one has a single one.
		m_hQuery = hQuery;
	}

	// collect, growing the buffer to the size the call asks for
	for (;;) {
		cbData = 0;
		pDataHeader = static_cast<PERF_DATA_HEADER *>(m_pData);
		status = PerfQueryCounterData(m_hQuery, pDataHeader, m_cbData, &cbData);
		if (ERROR_SUCCESS == status) {
			break;
		} else if (ERROR_NOT_ENOUGH_MEMORY != status) {
			goto Done;
		}

		FreeBytes(m_pData);
		m_cbData = 0;

		m_pData = AllocateBytes(cbData);
		if (nullptr == m_pData) {
			status = ERROR_OUTOFMEMORY;
			goto Done;
		}

		m_cbData = cbData;
	}

	// PERF_DATA_HEADER, then one PERF_COUNTER_HEADER block per specification (one here)
	if (cbData < sizeof(PERF_DATA_HEADER) || cbData < pDataHeader->dwTotalSize ||
	    pDataHeader->dwTotalSize < sizeof(PERF_DATA_HEADER) ||
	    pDataHeader->dwNumCounters != 1) {
		status = ERROR_INVALID_DATA;
		goto Done;
	}

	// a PERF_COUNTERSET block: the header, the counter ids, the instances
	cbData = pDataHeader->dwTotalSize - sizeof(PERF_DATA_HEADER);
	pCounterHeader = reinterpret_cast<PERF_COUNTER_HEADER *>(pDataHeader + 1);
	if (cbData < sizeof(PERF_COUNTER_HEADER) || cbData < pCounterHeader->dwSize ||
	    pCounterHeader->dwSize < sizeof(PERF_COUNTER_HEADER) ||
	    PERF_COUNTERSET != pCounterHeader->dwType) {
		status = ERROR_INVALID_DATA;
		goto Done;
	}

	// PERF_MULTI_COUNTERS, followed by dwCounters DWORD counter ids
	cbData = pCounterHeader->dwSize - sizeof(PERF_COUNTER_HEADER);
	pMultiCounters = reinterpret_cast<PERF_MULTI_COUNTERS const *>(pCounterHeader + 1);
	if (cbData < sizeof(PERF_MULTI_COUNTERS) || cbData < pMultiCounters->dwSize ||
	    pMultiCounters->dwSize < sizeof(PERF_MULTI_COUNTERS) ||
	    (pMultiCounters->dwSize - sizeof(PERF_MULTI_COUNTERS)) / sizeof(DWORD) <
		    pMultiCounters->dwCounters) {
		status = ERROR_INVALID_DATA;
		goto Done;
	}

	// PERF_MULTI_INSTANCES, followed by dwInstances instance blocks
	cbData -= pMultiCounters->dwSize;
	pMultiInstances = reinterpret_cast<PERF_MULTI_INSTANCES const *>((LPCBYTE)pMultiCounters +
									 pMultiCounters->dwSize);
	if (cbData < sizeof(PERF_MULTI_INSTANCES) || cbData < pMultiInstances->dwTotalSize ||
	    pMultiInstances->dwTotalSize < sizeof(PERF_MULTI_INSTANCES)) {
		status = ERROR_INVALID_DATA;
		goto Done;
	}

	cInstances = pMultiInstances->dwInstances;
	if (bufferCount < cInstances) {
		status = ERROR_MORE_DATA;
		goto Done;
	}

	memset(buffer, 0, sizeof(buffer[0]) * cInstances);

	cbData = pMultiInstances->dwTotalSize - sizeof(PERF_MULTI_INSTANCES);
	pInstanceHeader = reinterpret_cast<PERF_INSTANCE_HEADER const *>(pMultiInstances + 1);
	for (unsigned iInstance = 0; iInstance != pMultiInstances->dwInstances; iInstance += 1) {
		CpuPerfData &d = buffer[iInstance];

		// an instance: PERF_INSTANCE_HEADER and its name, then one
		// PERF_COUNTER_DATA block per counter id
		if (cbData < sizeof(PERF_INSTANCE_HEADER) || cbData < pInstanceHeader->Size ||
		    pInstanceHeader->Size < sizeof(PERF_INSTANCE_HEADER)) {
			status = ERROR_INVALID_DATA;
			goto Done;
		}

		unsigned const instanceNameMax =
			(pInstanceHeader->Size - sizeof(PERF_INSTANCE_HEADER)) / sizeof(WCHAR);
		WCHAR const *const instanceName =
			reinterpret_cast<WCHAR const *>(pInstanceHeader + 1);
		if (instanceNameMax == wcsnlen(instanceName, instanceNameMax)) {
			status = ERROR_INVALID_DATA; // no terminating NUL inside the block
			goto Done;
		}

		wcsncpy_s(d.Name, instanceName, _TRUNCATE);

		cbData -= pInstanceHeader->Size;
		PERF_COUNTER_DATA const *pCounterData = reinterpret_cast<PERF_COUNTER_DATA const *>(
			(LPCBYTE)pInstanceHeader + pInstanceHeader->Size);
		for (unsigned iCounter = 0; iCounter != pMultiCounters->dwCounters; iCounter += 1) {
			if (cbData < sizeof(PERF_COUNTER_DATA) || cbData < pCounterData->dwSize ||
			    pCounterData->dwSize < sizeof(PERF_COUNTER_DATA) + 8 ||
			    pCounterData->dwSize - sizeof(PERF_COUNTER_DATA) <
				    pCounterData->dwDataSize) {
				status = ERROR_INVALID_DATA;
				goto Done;
			}

			// the ids follow PERF_MULTI_COUNTERS in the order of the values
			DWORD const *pCounterIds =
				reinterpret_cast<DWORD const *>(pMultiCounters + 1);
			switch (pCounterIds[iCounter]) {
			case 0:
				AssignCounterValue(&d.ProcessorTime, pCounterData);
				break;
			case 1:
				AssignCounterValue(&d.UserTime, pCounterData);
				break;
			case 2:
				AssignCounterValue(&d.PrivilegedTime, pCounterData);
				break;
			case 3:
				AssignCounterValue(&d.Interrupts, pCounterData);
				break;
			case 4:
				AssignCounterValue(&d.DpcTime, pCounterData);
				break;
			case 5:
				AssignCounterValue(&d.InterruptTime, pCounterData);
				break;
			case 6:
				AssignCounterValue(&d.DpcsQueued, pCounterData);
				break;
			case 7:
				AssignCounterValue(&d.Dpcs, pCounterData);
				break;
			case 8:
				AssignCounterValue(&d.IdleTime, pCounterData);
				break;
			case 9:
				AssignCounterValue(&d.C1Time, pCounterData);
				break;
			case 10:
				AssignCounterValue(&d.C2Time, pCounterData);
				break;
			case 11:
				AssignCounterValue(&d.C3Time, pCounterData);
				break;
			case 12:
				AssignCounterValue(&d.C1Transitions, pCounterData);
				break;
			case 13:
				AssignCounterValue(&d.C2Transitions, pCounterData);
				break;
			case 14:
				AssignCounterValue(&d.C3Transitions, pCounterData);
				break;
			case 15:
				AssignCounterValue(&d.PriorityTime, pCounterData);
				break;
			case 16:
				AssignCounterValue(&d.ParkingStatus, pCounterData);
				break;
			case 17:
				AssignCounterValue(&d.ProcessorFrequency, pCounterData);
				break;
			case 18:
				AssignCounterValue(&d.PercentMaximumFrequency, pCounterData);
				break;
			case 19:
				AssignCounterValue(&d.ProcessorStateFlags, pCounterData);
				break;
			case 20:
				AssignCounterValue(&d.ClockInterrupts, pCounterData);
				break;
			case 21:
				AssignCounterValue(&d.AverageIdleTime, pCounterData);
				break;
			case 22:
				AssignCounterValue(&d.AverageIdleTimeBase, pCounterData);
				break;
			case 23:
				AssignCounterValue(&d.IdleBreakEvents, pCounterData);
				break;
			case 24:
				AssignCounterValue(&d.ProcessorPerformance, pCounterData);
				break;
			case 25:
				AssignCounterValue(&d.ProcessorPerformanceBase, pCounterData);
				break;
			case 26:
				AssignCounterValue(&d.ProcessorUtility, pCounterData);
				break;
			case 27:
				AssignCounterValue(&d.UtilityBase, pCounterData);
				break;
			case 28:
				AssignCounterValue(&d.PrivilegedUtility, pCounterData);
				break;
			case 30:
				AssignCounterValue(&d.PercentPerformanceLimit, pCounterData);
				break;
			case 31:
				AssignCounterValue(&d.PerformanceLimitFlags, pCounterData);
				break;
			}

			cbData -= pCounterData->dwSize;
			pCounterData = reinterpret_cast<PERF_COUNTER_DATA const *>(
				(LPCBYTE)pCounterData + pCounterData->dwSize);
		}

		pInstanceHeader = reinterpret_cast<PERF_INSTANCE_HEADER const *>(pCounterData);
	}

	if (nullptr != timestamp) {
		timestamp->PerfTimeStamp = pDataHeader->PerfTimeStamp;
		timestamp->PerfTime100NSec = pDataHeader->PerfTime100NSec;
		timestamp->PerfFreq = pDataHeader->PerfFreq;
	}

	status = ERROR_SUCCESS;

Done:

	*bufferUsed = cInstances;
	return status;
}
