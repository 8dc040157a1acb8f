// SPDX-License-Identifier: MIT
/*
 * CpuPerfCountersConsumer.cpp - the sample's program: ten samples a second apart through
 * CpuPerfCounters, printing each call's status and the "% Processor Time" of the first
 * instance over the last second.
 *
 * Mechanical changes against the Windows code: wmain is main; <windows.h> is
 * <perflib/win32compat.h> (Sleep); "%ls" is "%s" of the name narrowed by Narrow(), because
 * glibc's "%ls" reads 32-bit wchar_t and -fshort-wchar makes the names 16-bit. Nothing else.
 */
#include <perflib/win32compat.h>
#include <stdio.h>
#include "CpuPerfCounters.h"
#include <utility>

// the ASCII of a 16-bit name, for printf
struct Narrow {
	char s[16];
	explicit Narrow(wchar_t const *w)
	{
		unsigned i = 0;
		for (; i != sizeof(s) - 1 && w[i]; i += 1)
			s[i] = w[i] < 0x80 ? static_cast<char>(w[i]) : '?';
		s[i] = 0;
	}
};

int main()
{
	unsigned status;
	unsigned const dataMax = 30; // room for 30 instances
	CpuPerfCounters cpc;
	CpuPerfTimestamp timestamp[2];
	CpuPerfTimestamp *t0 = timestamp + 0;
	CpuPerfTimestamp *t1 = timestamp + 1;
	CpuPerfData data[dataMax * 2];
	CpuPerfData *d0 = data + 0;
	CpuPerfData *d1 = data + dataMax;
	unsigned used;

	status = cpc.ReadData(t0, d0, dataMax, &used);
	printf("ReadData0 used=%u, status=%u\n", used, status);

	for (unsigned iSample = 1; iSample != 10; iSample += 1) {
		Sleep(1000);
		status = cpc.ReadData(t1, d1, dataMax, &used);
		printf("ReadData%u used=%u, status=%u\n", iSample, used, status);

		if (status == ERROR_SUCCESS && used != 0) {
			// instance 0 over the last interval (on Windows usually "_Total")
			auto &s0 = d0[0];
			auto &s1 = d1[0];
			printf("  %s/%s = %f\n", Narrow(s0.Name).s, Narrow(s1.Name).s,
			       100.0 * (1.0 -
					static_cast<double>(s1.ProcessorTime - s0.ProcessorTime) /
						static_cast<double>(t1->PerfTime100NSec -
								    t0->PerfTime100NSec)));

			std::swap(t0, t1); // this sample is the next one's previous
			std::swap(d0, d1);
		}
	}

	return status;
}
