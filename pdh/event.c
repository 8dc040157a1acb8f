/* SPDX-License-Identifier: MIT */
/*
 * event.c - the Win32 event objects PdhCollectQueryDataEx signals (pdh.md 9.2) and the waits
 * on them: CreateEventW/A, SetEvent, ResetEvent, WaitForSingleObject, WaitForMultipleObjects,
 * CloseHandle, and the thread-pool waits RegisterWaitForSingleObject / UnregisterWait(Ex)
 * through which real consumers take that signal. Handles live in libpdh's handle table.
 *
 * All events share one lock and one condition variable: a wait on several events sleeps on
 * the one condition, and SetEvent wakes every waiter to look again. An auto-reset event is
 * consumed by the wait that sees it set. An event closed while a thread waits on it stays
 * allocated until that wait ends (as Windows keeps the object while a wait holds it).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "pdh_internal.h"
#include "perflib/win32/perflib-win32-sync.h"

struct pdh_event {
	enum pdh_kind kind;
	bool manual, set;
	bool closed;	  /* CloseHandle'd while waited on: the last waiter frees it */
	unsigned waiters; /* waits in progress on it */
};

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cond;
static pthread_once_t ev_once = PTHREAD_ONCE_INIT;

/* timed waits measure CLOCK_MONOTONIC: a change of the wall clock does not stretch them */
static void ev_init(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&ev_cond, &a);
	pthread_condattr_destroy(&a);
}

static HANDLE event_new(BOOL bManualReset, BOOL bInitialState)
{
	struct pdh_event *e = calloc(1, sizeof(*e));

	pthread_once(&ev_once, ev_init);
	if (!e) {
		SetLastError(ERROR_NOT_ENOUGH_MEMORY);
		return NULL;
	}
	e->kind = PDH_KIND_EVENT;
	e->manual = bManualReset;
	e->set = bInitialState;
	if (pdh_handle_add(e)) {
		free(e);
		SetLastError(ERROR_NOT_ENOUGH_MEMORY);
		return NULL;
	}
	return e;
}

PDH_API HANDLE WINAPI CreateEventW(void *lpEventAttributes, BOOL bManualReset, BOOL bInitialState,
				   LPCWSTR lpName)
{
	(void)lpEventAttributes;
	(void)lpName;
	return event_new(bManualReset, bInitialState);
}

PDH_API HANDLE WINAPI CreateEventA(void *lpEventAttributes, BOOL bManualReset, BOOL bInitialState,
				   LPCSTR lpName)
{
	(void)lpEventAttributes;
	(void)lpName;
	return event_new(bManualReset, bInitialState);
}

/* under ev_lock */
static struct pdh_event *event_get(HANDLE h)
{
	struct pdh_event *e = pdh_handle_get(h, PDH_KIND_EVENT);

	if (!e)
		SetLastError(ERROR_INVALID_HANDLE);
	return e;
}

static BOOL event_put(HANDLE h, bool set)
{
	struct pdh_event *e;

	pthread_once(&ev_once, ev_init);
	pthread_mutex_lock(&ev_lock);
	e = event_get(h);
	if (e) {
		e->set = set;
		if (set)
			pthread_cond_broadcast(&ev_cond);
	}
	pthread_mutex_unlock(&ev_lock);
	return e != NULL;
}

PDH_API BOOL WINAPI SetEvent(HANDLE hEvent)
{
	return event_put(hEvent, true);
}

PDH_API BOOL WINAPI ResetEvent(HANDLE hEvent)
{
	return event_put(hEvent, false);
}

/*
 * the wait of WaitForSingleObject and WaitForMultipleObjects: WAIT_OBJECT_0 + the lowest
 * index signalled (bWaitAll: WAIT_OBJECT_0 once all are), WAIT_TIMEOUT, WAIT_FAILED
 */
static DWORD wait_events(DWORD n, const HANDLE *h, bool all, DWORD ms)
{
	struct pdh_event *e[MAXIMUM_WAIT_OBJECTS];
	struct timespec at;
	DWORD i, j, r = WAIT_FAILED;

	if (!n || n > MAXIMUM_WAIT_OBJECTS || !h) {
		SetLastError(ERROR_INVALID_PARAMETER);
		return WAIT_FAILED;
	}
	pthread_once(&ev_once, ev_init);
	clock_gettime(CLOCK_MONOTONIC, &at);
	at.tv_sec += ms / 1000;
	at.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (at.tv_nsec >= 1000000000L)
		at.tv_sec++, at.tv_nsec -= 1000000000L;
	pthread_mutex_lock(&ev_lock);
	for (i = 0; i < n; i++) {
		e[i] = event_get(h[i]);
		for (j = 0; e[i] && j < i; j++)
			if (e[j] == e[i]) { /* Windows refuses a handle given twice */
				SetLastError(ERROR_INVALID_PARAMETER);
				e[i] = NULL;
			}
		if (!e[i])
			goto out;
	}
	for (i = 0; i < n; i++)
		e[i]->waiters++;
	for (;;) {
		bool timed_out = false;
		DWORD nset = 0, first = n;

		for (i = 0; i < n; i++)
			if (e[i]->set) {
				nset++;
				if (first == n)
					first = i;
			}
		if (all ? nset == n : nset > 0) {
			/* consume what this wait was satisfied by */
			for (i = 0; i < n; i++)
				if ((all || i == first) && !e[i]->manual)
					e[i]->set = false;
			r = WAIT_OBJECT_0 + (all ? 0 : first);
			break;
		}
		if (ms == 0) {
			r = WAIT_TIMEOUT;
			break;
		}
		if (ms == INFINITE)
			pthread_cond_wait(&ev_cond, &ev_lock);
		else
			timed_out = pthread_cond_timedwait(&ev_cond, &ev_lock, &at) == ETIMEDOUT;
		if (timed_out)
			ms = 0; /* look once more, then give up */
	}
	for (i = 0; i < n; i++)
		if (!--e[i]->waiters && e[i]->closed)
			free(e[i]);
out:
	pthread_mutex_unlock(&ev_lock);
	return r;
}

PDH_API DWORD WINAPI WaitForSingleObject(HANDLE hHandle, DWORD dwMilliseconds)
{
	return wait_events(1, &hHandle, false, dwMilliseconds);
}

PDH_API DWORD WINAPI WaitForMultipleObjects(DWORD nCount, const HANDLE *lpHandles, BOOL bWaitAll,
					    DWORD dwMilliseconds)
{
	return wait_events(nCount, lpHandles, bWaitAll, dwMilliseconds);
}

PDH_API BOOL WINAPI CloseHandle(HANDLE hObject)
{
	struct pdh_event *e;

	pthread_mutex_lock(&ev_lock);
	e = event_get(hObject);
	if (e) {
		pdh_handle_del(e);
		if (e->waiters)
			e->closed = true;
		else
			free(e);
	}
	pthread_mutex_unlock(&ev_lock);
	return e != NULL;
}

/* ---- thread-pool waits ------------------------------------------------------------------ */

/*
 * One thread per registration waits on its object and a private cancel event, and runs the
 * callback (TimerOrWaitFired TRUE on a timeout); callbacks of one registration never overlap,
 * whatever WT_* flags say. Unregistering signals the cancel event; the thread then ends and
 * the registration is freed by whoever comes last: UnregisterWaitEx waiting for it, or the
 * thread itself once detached.
 */
struct pdh_wait {
	enum pdh_kind kind;
	HANDLE object, cancel;
	WAITORTIMERCALLBACK callback;
	PVOID context;
	DWORD ms;
	ULONG flags;
	pthread_t thread;
	pthread_mutex_t lock; /* the four fields below */
	bool in_callback;
	bool finished;	   /* the thread has run its last callback */
	bool detached;	   /* the thread frees the registration */
	HANDLE completion; /* UnregisterWaitEx's event, signalled when finished */
};

static void wait_free(struct pdh_wait *w)
{
	CloseHandle(w->cancel);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

static void *wait_thread(void *arg)
{
	struct pdh_wait *w = arg;
	HANDLE h[2] = {w->cancel, w->object};
	bool detached;

	for (;;) {
		DWORD r = WaitForMultipleObjects(2, h, FALSE, w->ms);

		/* cancelled (index 0 is looked at first), or the object was closed */
		if (r != WAIT_OBJECT_0 + 1 && r != WAIT_TIMEOUT)
			break;
		pthread_mutex_lock(&w->lock);
		w->in_callback = true;
		pthread_mutex_unlock(&w->lock);
		w->callback(w->context, r == WAIT_TIMEOUT);
		pthread_mutex_lock(&w->lock);
		w->in_callback = false;
		pthread_mutex_unlock(&w->lock);
		if (w->flags & WT_EXECUTEONLYONCE) {
			WaitForSingleObject(w->cancel, INFINITE);
			break;
		}
	}
	pthread_mutex_lock(&w->lock);
	w->finished = true;
	if (w->completion)
		SetEvent(w->completion);
	detached = w->detached;
	pthread_mutex_unlock(&w->lock);
	if (detached)
		wait_free(w);
	return NULL;
}

PDH_API BOOL WINAPI RegisterWaitForSingleObject(PHANDLE phNewWaitObject, HANDLE hObject,
						WAITORTIMERCALLBACK Callback, PVOID Context,
						ULONG dwMilliseconds, ULONG dwFlags)
{
	struct pdh_wait *w;

	if (!phNewWaitObject || !Callback || !pdh_handle_get(hObject, PDH_KIND_EVENT)) {
		SetLastError(phNewWaitObject && Callback ? ERROR_INVALID_HANDLE
							 : ERROR_INVALID_PARAMETER);
		return FALSE;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		goto nomem;
	w->kind = PDH_KIND_WAIT;
	w->object = hObject;
	w->callback = Callback;
	w->context = Context;
	w->ms = dwMilliseconds;
	w->flags = dwFlags;
	pthread_mutex_init(&w->lock, NULL);
	w->cancel = CreateEventW(NULL, TRUE, FALSE, NULL);
	if (!w->cancel) {
		pthread_mutex_destroy(&w->lock);
		free(w);
		goto nomem;
	}
	if (pdh_handle_add(w)) {
		wait_free(w);
		goto nomem;
	}
	if (pthread_create(&w->thread, NULL, wait_thread, w)) {
		pdh_handle_del(w);
		wait_free(w);
		goto nomem;
	}
	*phNewWaitObject = w;
	return TRUE;
nomem:
	SetLastError(ERROR_NOT_ENOUGH_MEMORY);
	return FALSE;
}

PDH_API BOOL WINAPI UnregisterWaitEx(HANDLE WaitHandle, HANDLE CompletionEvent)
{
	struct pdh_wait *w = pdh_handle_get(WaitHandle, PDH_KIND_WAIT);
	bool self, running;

	if (!w) {
		SetLastError(ERROR_INVALID_HANDLE);
		return FALSE;
	}
	pdh_handle_del(w);
	SetEvent(w->cancel);
	self = pthread_equal(pthread_self(), w->thread);
	/* INVALID_HANDLE_VALUE: return once no callback runs (from a callback: cannot wait) */
	if (CompletionEvent == INVALID_HANDLE_VALUE && !self) {
		pthread_join(w->thread, NULL);
		wait_free(w);
		return TRUE;
	}
	pthread_mutex_lock(&w->lock);
	if (CompletionEvent != INVALID_HANDLE_VALUE)
		w->completion = CompletionEvent;
	if (w->finished && !self) {
		pthread_mutex_unlock(&w->lock);
		if (w->completion)
			SetEvent(w->completion);
		pthread_join(w->thread, NULL);
		wait_free(w);
		return TRUE;
	}
	running = w->in_callback;
	w->detached = true;
	pthread_detach(w->thread);
	pthread_mutex_unlock(&w->lock);
	/* Windows: unregistered, but a callback still runs and nobody waits for it */
	if (!CompletionEvent && running) {
		SetLastError(ERROR_IO_PENDING);
		return FALSE;
	}
	return TRUE;
}

PDH_API BOOL WINAPI UnregisterWait(HANDLE WaitHandle)
{
	return UnregisterWaitEx(WaitHandle, NULL);
}
