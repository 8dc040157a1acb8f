// SPDX-License-Identifier: MIT
/*
 * heartbeat_provider.cpp - a C++ provider in the shape of HPX's heartbeat example: a class
 * around the ctrpp-generated header, wchar_t instance names built with L"" (compiled with
 * -fshort-wchar), <iostream> for its messages, standard containers holding the instances.
 * Only the includes differ from Windows.
 *
 * Values: Queue Length instances "console#0" (id 0) and "worker#1" (id 1); counter 1 =
 * 5 + 10 * id (set, then incremented by 2 and decremented by 1: 6 and 16), counter 2 = 3.
 * Prints "ready", exits when standard input closes.
 */
#include <iostream>
#include <map>
#include <string>
#include <perflib/win32compat.h>
#include "heartbeat.h" /* ctrpp -o heartbeat.h heartbeat.man */

class queue_length_counters
{
      public:
	queue_length_counters() : status_(CounterInitialize(NULL, NULL, NULL, NULL))
	{
	}
	~queue_length_counters()
	{
		for (auto &i : instances_)
			PerfDeleteInstance(HPXHeartBeat, i.second);
		CounterCleanup();
	}
	ULONG status() const
	{
		return status_;
	}
	bool add(const wchar_t *prefix, ULONG id)
	{
		wchar_t name[64];

		if (wcscpy_s(name, prefix) ||
		    _itow_s(static_cast<int>(id), name + wcsnlen(name, 64), 64 - wcsnlen(name, 64),
			    10))
			return false;
		PPERF_COUNTERSET_INSTANCE inst =
			PerfCreateInstance(HPXHeartBeat, &QueueLengthGuid, name, id);
		if (!inst)
			return false;
		instances_[id] = inst;
		return PerfSetULongCounterValue(HPXHeartBeat, inst, 1, 5 + 10 * id) ==
			       ERROR_SUCCESS &&
		       PerfIncrementULongCounterValue(HPXHeartBeat, inst, 1, 2) == ERROR_SUCCESS &&
		       PerfDecrementULongCounterValue(HPXHeartBeat, inst, 1, 1) == ERROR_SUCCESS &&
		       PerfSetULongCounterValue(HPXHeartBeat, inst, 2, 3) == ERROR_SUCCESS;
	}

      private:
	ULONG status_;
	std::map<ULONG, PPERF_COUNTERSET_INSTANCE> instances_;
};

int __cdecl main()
{
	queue_length_counters counters;

	if (counters.status() != ERROR_SUCCESS) {
		std::cerr << "CounterInitialize failed with " << counters.status() << std::endl;
		return 1;
	}
	if (!counters.add(L"console#", 0) || !counters.add(L"worker#", 1)) {
		std::cerr << "adding an instance failed: " << GetLastError() << std::endl;
		return 1;
	}
	std::cout << "ready" << std::endl;
	while (!_kbhit())
		Sleep(20);
	return 0;
}
