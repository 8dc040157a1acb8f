// SPDX-License-Identifier: MIT
/*
 * provlist.c - the providers of this process: the list the started ones are on, the
 * lookups in it (a handle, a counter set of a provider), the quarantine of stopped
 * providers, and what fork() does to them. At the bottom of the provider side: every other
 * provider file (provider.c, instance.c, callback.c, cb_*.c, reaper.c, kernel.c) calls it,
 * and it calls none of them.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static pthread_mutex_t providers_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct perflib_provider *providers;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

void perflib_providers_lock(void)
{
	pthread_mutex_lock(&providers_mutex);
}

void perflib_providers_unlock(void)
{
	pthread_mutex_unlock(&providers_mutex);
}

/*
 * fork(): a provider's mappings are not inherited (MADV_DONTFORK: the child's fork costs
 * nothing per counter set), so in the child every inherited handle is dead: its value
 * functions return ERROR_INVALID_PARAMETER and the other functions refuse it, as for a
 * stopped provider. The child starts its own provider to publish (docs/ARCHITECTURE.md).
 * Its state stays allocated (the child cannot know which thread held which lock).
 */
static void providers_forked(void)
{
	struct perflib_provider *prov;

	for (prov = providers; prov; prov = prov->next)
		atomic_store(&prov->magic, PERFLIB_PROVIDER_DEAD);
	providers = NULL;
	pthread_mutex_init(&providers_mutex, NULL);
}

/*
 * No prepare handler takes providers_mutex: the callback thread may hold it while a
 * consumer waits on this process. The child has only the forking thread; it walks its copy
 * of the list (pointer stores only: a snapshot is a list) and starts with a fresh mutex.
 */
static void providers_atfork(void)
{
	pthread_atfork(NULL, NULL, providers_forked);
}

struct perflib_provider *perflib_providers_first(void)
{
	return providers;
}

/*
 * Provider structures are never given back to the allocator. The value functions check a
 * handle by its magic alone (no lock, no list walk: the hot path), so a handle kept after
 * PerfStopProvider must still point at a structure, one whose magic is DEAD. Stopped
 * providers wait in a FIFO and are reused only once more than PROV_QUARANTINE wait: a stale
 * handle reads DEAD (ERROR_INVALID_PARAMETER) for at least the next PROV_QUARANTINE starts,
 * and is never a write into memory that the application or the allocator reuses. They
 * come from malloc, never from the provider's MemAllocRoutine, since they outlive it, and are
 * freed when the library is unloaded or the process exits. Under providers_mutex.
 */
#define PROV_QUARANTINE 64
static struct perflib_provider *dead_head, *dead_tail;
static unsigned int nr_dead;

struct perflib_provider *perflib_prov_new(void)
{
	struct perflib_provider *prov = NULL;

	pthread_mutex_lock(&providers_mutex);
	if (nr_dead > PROV_QUARANTINE) {
		prov = dead_head;
		dead_head = prov->next;
		nr_dead--;
	}
	pthread_mutex_unlock(&providers_mutex);
	if (!prov)
		prov = malloc(sizeof(*prov));
	return prov;
}

/* @prov (magic DEAD, no counter sets, lock destroyed) joins the quarantine */
void perflib_prov_retire(struct perflib_provider *prov)
{
	pthread_mutex_lock(&providers_mutex);
	prov->next = NULL;
	if (dead_head)
		dead_tail->next = prov;
	else
		dead_head = prov;
	dead_tail = prov;
	nr_dead++;
	pthread_mutex_unlock(&providers_mutex);
}

/*
 * The library is unloaded (dlclose) or the process exits: no handle can be used any more,
 * the quarantine goes back to the allocator (and leak checkers see nothing left behind).
 */
__attribute__((destructor)) static void prov_quarantine_free(void)
{
	struct perflib_provider *prov, *next;

	pthread_mutex_lock(&providers_mutex);
	for (prov = dead_head; prov; prov = next) {
		next = prov->next;
		free(prov);
	}
	dead_head = dead_tail = NULL;
	nr_dead = 0;
	pthread_mutex_unlock(&providers_mutex);
}

/* a started provider of this process, checked against the list (safe for stale handles) */
struct perflib_provider *perflib_provider_lookup(HANDLE h)
{
	struct perflib_provider *p;

	if (!h)
		return NULL;
	pthread_mutex_lock(&providers_mutex);
	for (p = providers; p && p != h; p = p->next)
		;
	pthread_mutex_unlock(&providers_mutex);
	return p;
}

void *perflib_prov_alloc(struct perflib_provider *prov, size_t size)
{
	void *p;

	if (prov->ctx.MemAllocRoutine) {
		p = prov->ctx.MemAllocRoutine(size, prov->ctx.pMemContext);
		if (p)
			memset(p, 0, size);
		return p;
	}
	return calloc(1, size);
}

void perflib_prov_free(struct perflib_provider *prov, void *p)
{
	if (!p)
		return;
	if (prov->ctx.MemFreeRoutine)
		prov->ctx.MemFreeRoutine(p, prov->ctx.pMemContext);
	else
		free(p);
}

void perflib_providers_add(struct perflib_provider *prov)
{
	pthread_once(&atfork_once, providers_atfork);
	pthread_mutex_lock(&providers_mutex);
	prov->next = providers;
	providers = prov;
	pthread_mutex_unlock(&providers_mutex);
}

struct perflib_provider *perflib_providers_remove(HANDLE h)
{
	struct perflib_provider *prov, **pp;

	pthread_mutex_lock(&providers_mutex);
	for (pp = &providers; *pp && *pp != h; pp = &(*pp)->next)
		;
	prov = *pp;
	if (prov)
		*pp = prov->next;
	pthread_mutex_unlock(&providers_mutex);
	return prov;
}

struct perflib_ctrset *perflib_ctrset_find(struct perflib_provider *prov, const GUID *guid)
{
	const struct perflib_ctrset *set;

	for (set = atomic_load_explicit(
		     &prov->by_guid[perflib_bucket(perflib_guid_key(guid), PERFLIB_GUID_BITS)],
		     memory_order_acquire);
	     set; set = set->guid_next) {
		if (perflib_guid_equal(&set->guid, guid))
			return (struct perflib_ctrset *)set;
	}
	return NULL;
}
