// SPDX-License-Identifier: MIT
/*
 * CpuPerfCounters.h - the counter-reading class of the CpuPerfCounters sample in Microsoft's
 * "Using the PerfLib Functions to Consume Counter Data", written again for this project. The
 * class keeps one query handle on the "Processor Information" counter set (every counter of
 * every instance) and hands back raw values; turning them into percentages or rates takes two
 * samples and is left to the caller.
 *
 * Mechanical changes against the Windows code: <sal.h> comes from <perflib/sal.h> (through
 * <perflib/win32compat.h>); the program is built with -fshort-wchar so that wchar_t is the
 * 16-bit WCHAR the API returns. Nothing else.
 */
#pragma once
#include <perflib/win32compat.h>

// Time of one collection, as PERF_DATA_HEADER reports it.
struct CpuPerfTimestamp {
	__int64 PerfTimeStamp;	 // the high-resolution clock
	__int64 PerfTime100NSec; // 100 ns units since 1601-01-01 UTC (the clock of the timers)
	__int64 PerfFreq;	 // ticks of PerfTimeStamp per second
};

// The raw values of one "Processor Information" instance. A counter the provider does not
// publish stays 0. The "% Processor Time" of an interval [s0, s1] is
// 100 * (1 - (s1.ProcessorTime - s0.ProcessorTime) / (t1.PerfTime100NSec - t0.PerfTime100NSec))
// (PERF_100NSEC_TIMER_INV); the PERF_100NSEC_TIMER counters drop the "1 -"; the
// PERF_COUNTER_COUNTER ones divide their difference by the seconds between the samples.
struct CpuPerfData {
	wchar_t Name[16];			   // "node,cpu", "node,_Total" or "_Total"
	__int64 unsigned ProcessorTime;		   // id 0, PERF_100NSEC_TIMER_INV
	__int64 unsigned UserTime;		   // id 1, PERF_100NSEC_TIMER
	__int64 unsigned PrivilegedTime;	   // id 2, PERF_100NSEC_TIMER
	__int32 unsigned Interrupts;		   // id 3, PERF_COUNTER_COUNTER
	__int64 unsigned DpcTime;		   // id 4, PERF_100NSEC_TIMER
	__int64 unsigned InterruptTime;		   // id 5, PERF_100NSEC_TIMER
	__int32 unsigned DpcsQueued;		   // id 6, PERF_COUNTER_COUNTER
	__int32 unsigned Dpcs;			   // id 7, PERF_COUNTER_RAWCOUNT
	__int64 unsigned IdleTime;		   // id 8, PERF_100NSEC_TIMER
	__int64 unsigned C1Time;		   // id 9, PERF_100NSEC_TIMER
	__int64 unsigned C2Time;		   // id 10, PERF_100NSEC_TIMER
	__int64 unsigned C3Time;		   // id 11, PERF_100NSEC_TIMER
	__int64 unsigned C1Transitions;		   // id 12, PERF_COUNTER_BULK_COUNT
	__int64 unsigned C2Transitions;		   // id 13, PERF_COUNTER_BULK_COUNT
	__int64 unsigned C3Transitions;		   // id 14, PERF_COUNTER_BULK_COUNT
	__int64 unsigned PriorityTime;		   // id 15, PERF_100NSEC_TIMER_INV
	__int32 unsigned ParkingStatus;		   // id 16, PERF_COUNTER_RAWCOUNT
	__int32 unsigned ProcessorFrequency;	   // id 17, PERF_COUNTER_RAWCOUNT
	__int32 unsigned PercentMaximumFrequency;  // id 18, PERF_COUNTER_RAWCOUNT
	__int32 unsigned ProcessorStateFlags;	   // id 19, PERF_COUNTER_RAWCOUNT
	__int32 unsigned ClockInterrupts;	   // id 20, PERF_COUNTER_COUNTER
	__int64 unsigned AverageIdleTime;	   // id 21, PERF_PRECISION_100NS_TIMER
	__int64 unsigned AverageIdleTimeBase;	   // id 22, PERF_PRECISION_TIMESTAMP
	__int64 unsigned IdleBreakEvents;	   // id 23, PERF_COUNTER_BULK_COUNT
	__int64 unsigned ProcessorPerformance;	   // id 24, PERF_AVERAGE_BULK
	__int32 unsigned ProcessorPerformanceBase; // id 25, PERF_AVERAGE_BASE
	__int64 unsigned ProcessorUtility;	   // id 26, PERF_AVERAGE_BULK
	__int64 unsigned PrivilegedUtility;	   // id 28, PERF_AVERAGE_BULK
	__int32 unsigned UtilityBase;		   // id 27, PERF_AVERAGE_BASE
	__int32 unsigned PercentPerformanceLimit;  // id 30, PERF_COUNTER_RAWCOUNT
	__int32 unsigned PerformanceLimitFlags;	   // id 31, PERF_COUNTER_RAWCOUNT
};

// Collects "Processor Information" through the PerfLib V2 consumer functions.
class CpuPerfCounters
{
      public:
	CpuPerfCounters(CpuPerfCounters const &) = delete;
	void operator=(CpuPerfCounters const &) = delete;

	~CpuPerfCounters();
	CpuPerfCounters() noexcept;

	// One sample: every instance's raw values into buffer (up to bufferCount of them).
	// ERROR_SUCCESS, ERROR_MORE_DATA (bufferCount too small; *bufferUsed says how many
	// there are), ERROR_INVALID_DATA (a malformed result) or the API's error.
	_Success_(return == 0) unsigned ReadData(_Out_opt_ CpuPerfTimestamp *timestamp,
						 _Out_cap_post_count_(bufferCount, *bufferUsed)
							 CpuPerfData *buffer,
						 unsigned bufferCount,
						 _Out_ unsigned *bufferUsed) noexcept;

      private:
	void *m_hQuery;
	void *m_pData;
	unsigned m_cbData;
};
