// SPDX-License-Identifier: MIT
/*
 * node_provider.cpp - a C++ provider in the shape of node's perfctr provider: it does not
 * link the perflib library but loads it at run time (LoadLibrary("advapi32.dll") and
 * GetProcAddress), declares the entry points with legacy SAL (__in, __out, __inout_bcount),
 * names its instance "node_<pid>" in a wchar_t array (wcscpy_s, _itow_s,
 * GetCurrentProcessId; built with -fshort-wchar) and reads QueryPerformanceCounter. Changes
 * from the Windows code: the includes (with PERFLIB_SAL_IN_OUT, after every system header),
 * and node's own "EXTERN_C DECLSPEC_SELECTANY HANDLE NodeCounterProvider = NULL;" dropped:
 * the ctrpp header defines it (README, "Porting Windows code").
 *
 * Values: HTTP server requests 3, HTTP client responses 1, active server connections 1
 * (2 opened, 1 closed), network bytes sent 1500 and received 700 (64-bit), %Time in GC 42,
 * pipe bytes sent 5000000000 (past 32 bits). Prints "ready <pid>" and exits when standard
 * input closes; exits 3 when the library cannot be loaded.
 */
#include <cstdint>
#include <iostream>
#include <string>

#define PERFLIB_SAL_IN_OUT
#define __INIT_node_perfctr_provider_IMP
#include <perflib/win32compat.h>
#include "node_perfctr_provider.h" /* ctrpp -o node_perfctr_provider.h node_perfctr_provider.man */

typedef ULONG(WINAPI *PerfStartProviderExFunc)(__in LPGUID ProviderGuid,
					       __in_opt PPERF_PROVIDER_CONTEXT ProviderContext,
					       __out PHANDLE Provider);
typedef ULONG(WINAPI *PerfStopProviderFunc)(__in HANDLE ProviderHandle);
typedef ULONG(WINAPI *PerfSetCounterSetInfoFunc)(__in HANDLE ProviderHandle,
						 __inout_bcount(TemplateSize)
							 PPERF_COUNTERSET_INFO Template,
						 __in ULONG TemplateSize);
typedef PPERF_COUNTERSET_INSTANCE(WINAPI *PerfCreateInstanceFunc)(__in HANDLE ProviderHandle,
								  __in LPCGUID CounterSetGuid,
								  __in PCWSTR Name, __in ULONG Id);
typedef ULONG(WINAPI *PerfULongFunc)(__in HANDLE Provider,
				     __inout PPERF_COUNTERSET_INSTANCE Instance,
				     __in ULONG CounterId, __in ULONG Value);
typedef ULONG(WINAPI *PerfULongLongFunc)(__in HANDLE Provider,
					 __inout PPERF_COUNTERSET_INSTANCE Instance,
					 __in ULONG CounterId, __in ULONGLONG Value);

static HMODULE advapi;
static PerfStartProviderExFunc start_provider;
static PerfStopProviderFunc stop_provider;
static PerfSetCounterSetInfoFunc set_counterset_info;
static PerfCreateInstanceFunc create_instance;
static PerfULongFunc set_ulong, increment_ulong, decrement_ulong;
static PerfULongLongFunc increment_ulonglong;
static PPERF_COUNTERSET_INSTANCE instance;

namespace node
{

static bool init_counters()
{
	PERF_PROVIDER_CONTEXT context;
	wchar_t inst[32];

	wcscpy_s(inst, 32, L"node_");
	_itow_s(static_cast<int>(GetCurrentProcessId()), inst + 5, 32 - 5, 10);
	advapi = LoadLibrary("advapi32.dll");
	if (!advapi)
		return false;
	start_provider = (PerfStartProviderExFunc)GetProcAddress(advapi, "PerfStartProviderEx");
	stop_provider = (PerfStopProviderFunc)GetProcAddress(advapi, "PerfStopProvider");
	set_counterset_info =
		(PerfSetCounterSetInfoFunc)GetProcAddress(advapi, "PerfSetCounterSetInfo");
	create_instance = (PerfCreateInstanceFunc)GetProcAddress(advapi, "PerfCreateInstance");
	set_ulong = (PerfULongFunc)GetProcAddress(advapi, "PerfSetULongCounterValue");
	increment_ulong = (PerfULongFunc)GetProcAddress(advapi, "PerfIncrementULongCounterValue");
	decrement_ulong = (PerfULongFunc)GetProcAddress(advapi, "PerfDecrementULongCounterValue");
	increment_ulonglong =
		(PerfULongLongFunc)GetProcAddress(advapi, "PerfIncrementULongLongCounterValue");
	if (!start_provider || !stop_provider || !set_counterset_info || !create_instance ||
	    !set_ulong || !increment_ulong || !decrement_ulong || !increment_ulonglong)
		return false;
	ZeroMemory(&context, sizeof(context));
	context.ContextSize = sizeof(context);
	if (start_provider(&NodeCounterProviderGuid, &context, &NodeCounterProvider) !=
	    ERROR_SUCCESS)
		return false;
	if (set_counterset_info(NodeCounterProvider, &NodeCounterSetInfo.CounterSet,
				sizeof(NodeCounterSetInfo)) != ERROR_SUCCESS)
		return false;
	instance = create_instance(NodeCounterProvider, &NodeCounterSetGuid, inst, 1);
	return instance != NULL;
}

static uint64_t gc_rawtime()
{
	LARGE_INTEGER t;

	if (QueryPerformanceCounter(&t))
		return t.QuadPart;
	return static_cast<uint64_t>(GetTickCount());
}

} // namespace node

int __cdecl main()
{
	uint64_t t0 = node::gc_rawtime();

	if (!node::init_counters()) {
		std::cerr << "perf counters unavailable" << std::endl;
		return 3;
	}
	for (int i = 0; i < 3; i++)
		increment_ulong(NodeCounterProvider, instance, 1, 1);
	increment_ulong(NodeCounterProvider, instance, 4, 1);
	increment_ulong(NodeCounterProvider, instance, 5, 1);
	increment_ulong(NodeCounterProvider, instance, 5, 1);
	decrement_ulong(NodeCounterProvider, instance, 5, 1);
	increment_ulonglong(NodeCounterProvider, instance, 6, 1000);
	increment_ulonglong(NodeCounterProvider, instance, 6, 500);
	increment_ulonglong(NodeCounterProvider, instance, 7, 700);
	increment_ulonglong(NodeCounterProvider, instance, 9, 5000000000ULL);
	set_ulong(NodeCounterProvider, instance, 8, 42);
	if (node::gc_rawtime() < t0)
		return 4;
	std::cout << "ready " << GetCurrentProcessId() << std::endl;
	while (!_kbhit())
		Sleep(20);
	stop_provider(NodeCounterProvider);
	NodeCounterProvider = NULL;
	FreeLibrary(advapi);
	return 0;
}
