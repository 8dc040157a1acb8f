/* SPDX-License-Identifier: MIT */
/*
 * perflib-win32-sync.h - events, waits, thread-pool waits (libpdh: pdh/event.c, the event
 * objects PdhCollectQueryDataEx signals) and the Interlocked functions (inline, GCC atomics,
 * sequentially consistent as on Windows). Part of the perflib-win32 module, through
 * <windows.h>. Security attributes and event names are ignored (pass NULL): events are
 * private to the process.
 */
#ifndef PERFLIB_WIN32_SYNC_H
#define PERFLIB_WIN32_SYNC_H

#include "perflib-win32-rt.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef PDH_API
#define PDH_API PERFLIB_API
#endif
#define WAIT_OBJECT_0 ((DWORD)0x00000000)
#define WAIT_TIMEOUT ((DWORD)0x00000102)
#define WAIT_FAILED ((DWORD)0xFFFFFFFF)
#ifndef INFINITE
#define INFINITE ((DWORD)0xFFFFFFFF)
#endif
#define MAXIMUM_WAIT_OBJECTS 64

/*
 * CreateEventW / CreateEventA - a new event: manual-reset (stays set until ResetEvent) or
 * auto-reset (consumed by the one wait it releases), set or not. NULL and GetLastError()
 * ERROR_NOT_ENOUGH_MEMORY when out of memory. CloseHandle frees it.
 */
PDH_API HANDLE WINAPI CreateEventW(void *lpEventAttributes, BOOL bManualReset, BOOL bInitialState,
				   LPCWSTR lpName);
PDH_API HANDLE WINAPI CreateEventA(void *lpEventAttributes, BOOL bManualReset, BOOL bInitialState,
				   LPCSTR lpName);
/* SetEvent / ResetEvent / CloseHandle: TRUE, or FALSE and ERROR_INVALID_HANDLE */
PDH_API BOOL WINAPI SetEvent(HANDLE hEvent);
PDH_API BOOL WINAPI ResetEvent(HANDLE hEvent);
PDH_API BOOL WINAPI CloseHandle(HANDLE hObject);
/*
 * WaitForSingleObject / WaitForMultipleObjects - wait up to @dwMilliseconds (INFINITE: no
 * limit, 0: just look) for one event, or for any (WAIT_OBJECT_0 + the lowest index set) or
 * all (@bWaitAll) of 1..MAXIMUM_WAIT_OBJECTS events. WAIT_TIMEOUT; WAIT_FAILED with
 * ERROR_INVALID_HANDLE (not an event) or ERROR_INVALID_PARAMETER (count, a handle twice).
 */
PDH_API DWORD WINAPI WaitForSingleObject(HANDLE hHandle, DWORD dwMilliseconds);
PDH_API DWORD WINAPI WaitForMultipleObjects(DWORD nCount, const HANDLE *lpHandles, BOOL bWaitAll,
					    DWORD dwMilliseconds);

/* thread-pool waits */
typedef VOID(CALLBACK *WAITORTIMERCALLBACK)(PVOID lpParameter, BOOLEAN TimerOrWaitFired);
typedef WAITORTIMERCALLBACK WAITORTIMERCALLBACKFUNC;
#define WT_EXECUTEDEFAULT 0x00000000
#define WT_EXECUTEINIOTHREAD 0x00000001
#define WT_EXECUTEINWAITTHREAD 0x00000004
#define WT_EXECUTEONLYONCE 0x00000008
#define WT_EXECUTELONGFUNCTION 0x00000010
#define WT_EXECUTEINPERSISTENTTHREAD 0x00000080
#define WT_TRANSFER_IMPERSONATION 0x00000100
/*
 * RegisterWaitForSingleObject - run @Callback(@Context, FALSE) each time event @hObject is
 * signalled (an auto-reset one is consumed), @Callback(@Context, TRUE) after
 * @dwMilliseconds without a signal (INFINITE: never); WT_EXECUTEONLYONCE: once. The other
 * WT_* flags are accepted: each registration has its own thread, so its callbacks never
 * overlap. *@phNewWaitObject is for UnregisterWait(Ex). FALSE and ERROR_INVALID_PARAMETER
 * (NULL out-pointer or callback), ERROR_INVALID_HANDLE (not an event), ERROR_NOT_ENOUGH_MEMORY.
 */
PDH_API BOOL WINAPI RegisterWaitForSingleObject(PHANDLE phNewWaitObject, HANDLE hObject,
						WAITORTIMERCALLBACK Callback, PVOID Context,
						ULONG dwMilliseconds, ULONG dwFlags);
/*
 * UnregisterWaitEx - end a registration. @CompletionEvent INVALID_HANDLE_VALUE: return once
 * no callback runs (from the callback itself: return at once); an event: signal it then;
 * NULL: do not wait, and if a callback is running return FALSE with ERROR_IO_PENDING (the
 * wait is unregistered all the same). FALSE and ERROR_INVALID_HANDLE for an unknown handle.
 * UnregisterWait(h) is UnregisterWaitEx(h, NULL).
 */
PDH_API BOOL WINAPI UnregisterWaitEx(HANDLE WaitHandle, HANDLE CompletionEvent);
PDH_API BOOL WINAPI UnregisterWait(HANDLE WaitHandle);

#ifdef UNICODE
#define CreateEvent CreateEventW
#else
#define CreateEvent CreateEventA
#endif

/* ---- Interlocked: the value after the operation (Increment, Decrement) or before it ---- */

#define PERFLIB_WIN32__SC __ATOMIC_SEQ_CST
FORCEINLINE LONG InterlockedIncrement(LONG volatile *Addend)
{
	return __atomic_add_fetch(Addend, 1, PERFLIB_WIN32__SC);
}
FORCEINLINE LONG InterlockedDecrement(LONG volatile *Addend)
{
	return __atomic_sub_fetch(Addend, 1, PERFLIB_WIN32__SC);
}
FORCEINLINE LONG InterlockedExchange(LONG volatile *Target, LONG Value)
{
	return __atomic_exchange_n(Target, Value, PERFLIB_WIN32__SC);
}
FORCEINLINE LONG InterlockedExchangeAdd(LONG volatile *Addend, LONG Value)
{
	return __atomic_fetch_add(Addend, Value, PERFLIB_WIN32__SC);
}
FORCEINLINE LONG InterlockedCompareExchange(LONG volatile *Destination, LONG ExChange,
					    LONG Comperand)
{
	__atomic_compare_exchange_n(Destination, &Comperand, ExChange, 0, PERFLIB_WIN32__SC,
				    PERFLIB_WIN32__SC);
	return Comperand;
}
FORCEINLINE LONG InterlockedOr(LONG volatile *Destination, LONG Value)
{
	return __atomic_fetch_or(Destination, Value, PERFLIB_WIN32__SC);
}
FORCEINLINE LONG InterlockedAnd(LONG volatile *Destination, LONG Value)
{
	return __atomic_fetch_and(Destination, Value, PERFLIB_WIN32__SC);
}
FORCEINLINE LONGLONG InterlockedIncrement64(LONGLONG volatile *Addend)
{
	return __atomic_add_fetch(Addend, 1, PERFLIB_WIN32__SC);
}
FORCEINLINE LONGLONG InterlockedDecrement64(LONGLONG volatile *Addend)
{
	return __atomic_sub_fetch(Addend, 1, PERFLIB_WIN32__SC);
}
FORCEINLINE LONGLONG InterlockedExchange64(LONGLONG volatile *Target, LONGLONG Value)
{
	return __atomic_exchange_n(Target, Value, PERFLIB_WIN32__SC);
}
FORCEINLINE LONGLONG InterlockedExchangeAdd64(LONGLONG volatile *Addend, LONGLONG Value)
{
	return __atomic_fetch_add(Addend, Value, PERFLIB_WIN32__SC);
}
FORCEINLINE LONGLONG InterlockedCompareExchange64(LONGLONG volatile *Destination, LONGLONG ExChange,
						  LONGLONG Comperand)
{
	__atomic_compare_exchange_n(Destination, &Comperand, ExChange, 0, PERFLIB_WIN32__SC,
				    PERFLIB_WIN32__SC);
	return Comperand;
}
FORCEINLINE PVOID InterlockedExchangePointer(PVOID volatile *Target, PVOID Value)
{
	return __atomic_exchange_n(Target, Value, PERFLIB_WIN32__SC);
}
FORCEINLINE PVOID InterlockedCompareExchangePointer(PVOID volatile *Destination, PVOID ExChange,
						    PVOID Comperand)
{
	__atomic_compare_exchange_n(Destination, &Comperand, ExChange, 0, PERFLIB_WIN32__SC,
				    PERFLIB_WIN32__SC);
	return Comperand;
}

#ifdef __cplusplus
}
#endif

#endif /* PERFLIB_WIN32_SYNC_H */
