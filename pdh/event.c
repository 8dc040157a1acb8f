/* SPDX-License-Identifier: MIT */
/*
 * event.c - the Win32 event objects PdhCollectQueryDataEx signals (pdh.md 9.2): CreateEventW,
 * SetEvent, ResetEvent, WaitForSingleObject, CloseHandle on a mutex and a condition
 * variable; handles in libpdh's handle table. An auto-reset event is consumed by the wait
 * that sees it set.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "pdh_internal.h"

struct pdh_event {
	enum pdh_kind kind;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool manual, set;
};

PDH_API HANDLE WINAPI CreateEventW(void *lpEventAttributes, BOOL bManualReset, BOOL bInitialState,
				   LPCWSTR lpName)
{
	struct pdh_event *e = calloc(1, sizeof(*e));

	(void)lpEventAttributes;
	(void)lpName;
	if (!e) {
		SetLastError(ERROR_NOT_ENOUGH_MEMORY);
		return NULL;
	}
	e->kind = PDH_KIND_EVENT;
	e->manual = bManualReset;
	e->set = bInitialState;
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	if (pdh_handle_add(e)) {
		free(e);
		SetLastError(ERROR_NOT_ENOUGH_MEMORY);
		return NULL;
	}
	return e;
}

static struct pdh_event *event_get(HANDLE h)
{
	struct pdh_event *e = pdh_handle_get(h, PDH_KIND_EVENT);

	if (!e)
		SetLastError(ERROR_INVALID_HANDLE);
	return e;
}

static BOOL event_put(HANDLE h, bool set)
{
	struct pdh_event *e = event_get(h);

	if (!e)
		return 0;
	pthread_mutex_lock(&e->lock);
	e->set = set;
	if (set)
		pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	return 1;
}

PDH_API BOOL WINAPI SetEvent(HANDLE hEvent)
{
	return event_put(hEvent, true);
}

PDH_API BOOL WINAPI ResetEvent(HANDLE hEvent)
{
	return event_put(hEvent, false);
}

PDH_API DWORD WINAPI WaitForSingleObject(HANDLE hHandle, DWORD dwMilliseconds)
{
	struct pdh_event *e = event_get(hHandle);
	struct timespec at;
	DWORD r = WAIT_OBJECT_0;

	if (!e)
		return WAIT_FAILED;
	clock_gettime(CLOCK_REALTIME, &at);
	at.tv_sec += dwMilliseconds / 1000;
	at.tv_nsec += (long)(dwMilliseconds % 1000) * 1000000L;
	if (at.tv_nsec >= 1000000000L)
		at.tv_sec++, at.tv_nsec -= 1000000000L;
	pthread_mutex_lock(&e->lock);
	while (!e->set) {
		if (dwMilliseconds == INFINITE)
			pthread_cond_wait(&e->cond, &e->lock);
		else if (pthread_cond_timedwait(&e->cond, &e->lock, &at) == ETIMEDOUT) {
			r = e->set ? WAIT_OBJECT_0 : WAIT_TIMEOUT;
			break;
		}
	}
	if (r == WAIT_OBJECT_0 && !e->manual)
		e->set = false; /* an auto-reset event is consumed by the wait */
	pthread_mutex_unlock(&e->lock);
	return r;
}

PDH_API BOOL WINAPI CloseHandle(HANDLE hObject)
{
	struct pdh_event *e = event_get(hObject);

	if (!e)
		return 0;
	pdh_handle_del(e);
	pthread_mutex_destroy(&e->lock);
	pthread_cond_destroy(&e->cond);
	free(e);
	return 1;
}
