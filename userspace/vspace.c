// SPDX-License-Identifier: MIT
/*
 * vspace.c - the address space a process gives counter sets, so that a set costs fork() as
 * little as can be: every mapping is a VMA, and fork() handles each VMA of the parent, even
 * one it does not copy (MADV_DONTFORK: about 0.6 µs per VMA and fork on the 2-core machine,
 * docs/SCALE.md).
 *
 * - Slot ranges: a set's slots of every class sit at fixed offsets of one range (pointers
 *   never move). The range was a PROT_NONE reservation: one more VMA per set, cut in two by
 *   segment 0. Now ranges come from a region of the address space that Linux does not hand
 *   out on its own (VSPACE_BASE..VSPACE_END: above the sanitizers' shadow memory, below
 *   where mmap() places mappings top-down, from 0x7f..., or bottom-up, from 1/3 of the
 *   address space, and below PIE executables and their heap, at 0x55...), and segments are
 *   mapped there with MAP_FIXED_NOREPLACE: nothing is reserved, nothing of anyone else is
 *   ever replaced (a taken address fails the mapping with EEXIST). When the region is full,
 *   or disabled (PERFLIB_VSPACE=0), a range is a reservation as before.
 * - Slot tables: a provider's per-slot tables (owned slots, by-reference addresses) of every
 *   set are parts of one process-wide mapping (one VMA for all sets), not one mapping each.
 *
 * Both are ranges handed out first-fit from a sorted free list and given back (coalesced)
 * when a set is closed. The lists are the process's own: a fork() child starts with a copy
 * (whose ranges it does not map: it only loses them).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define VSPACE_BASE 0x110000000000ULL /* 17 TiB: past ASan's high shadow (16 TiB) */
#define VSPACE_END 0x2a0000000000ULL  /* 42 TiB: below the bottom-up mmap base (42.6) */
#define TABLES_SIZE (64ULL << 30)     /* address space of the tables mapping (NORESERVE) */

struct extent {
	uintptr_t start, len;
	struct extent *next;
};

/* free ranges of [base, base + size), sorted by address */
struct arena {
	pthread_mutex_t lock;
	bool ready, broken; /* broken: could not be set up, callers fall back */
	uintptr_t base, size;
	struct extent *free;
};

/* whole pages; an empty table still takes one */
static size_t page_round(size_t len)
{
	return len ? (len + 4095) & ~(size_t)4095 : 4096;
}

static struct arena slots_arena = {.lock = PTHREAD_MUTEX_INITIALIZER};
static struct arena tables_arena = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void free_list(struct arena *a);

/*
 * fork() child: only the forking thread runs, so the locks start fresh. The tables mapping
 * is not inherited (MADV_DONTFORK): the child makes its own when it needs one. The slot
 * arena's list stays: the ranges it says are taken are the parent's, lost to the child.
 */
static void vspace_forked(void)
{
	pthread_mutex_init(&slots_arena.lock, NULL);
	pthread_mutex_init(&tables_arena.lock, NULL);
	free_list(&tables_arena);
	tables_arena.ready = tables_arena.broken = false;
}

static void free_list(struct arena *a)
{
	struct extent *e;

	while ((e = a->free)) {
		a->free = e->next;
		free(e);
	}
}

/*
 * The library unloaded (dlclose: ports that LoadLibrary it): the lists go, and the tables
 * mapping when every table was given back (a provider still started keeps it).
 */
__attribute__((destructor)) static void vspace_unload(void)
{
	struct arena *t = &tables_arena;

	if (t->ready && !t->broken && t->free && t->free->start == t->base &&
	    t->free->len == t->size && !t->free->next)
		munmap((void *)t->base, t->size);
	free_list(t);
	free_list(&slots_arena);
	t->ready = slots_arena.ready = false;
}

static void vspace_atfork(void)
{
	pthread_atfork(NULL, NULL, vspace_forked);
}

static bool vspace_enabled(void)
{
	const char *e = getenv("PERFLIB_VSPACE");

	return !e || strcmp(e, "0") != 0;
}

/* first fit of @len bytes; 0 or -ENOMEM (lock held) */
static int arena_take(struct arena *a, size_t len, uintptr_t *ret)
{
	struct extent **pp, *e;

	for (pp = &a->free; (e = *pp); pp = &e->next) {
		if (e->len < len)
			continue;
		*ret = e->start;
		e->start += len;
		e->len -= len;
		if (!e->len) {
			*pp = e->next;
			free(e);
		}
		return 0;
	}
	return -ENOMEM;
}

/* give [start, start + len) back, merged with its neighbours (lock held) */
static void arena_give(struct arena *a, uintptr_t start, size_t len)
{
	struct extent **pp = &a->free, *prev = NULL, *e;

	while (*pp && (*pp)->start < start) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (prev && prev->start + prev->len == start) {
		prev->len += len;
		if (prev->next && start + len == prev->next->start) {
			e = prev->next;
			prev->len += e->len;
			prev->next = e->next;
			free(e);
		}
		return;
	}
	if (*pp && start + len == (*pp)->start) {
		(*pp)->start = start;
		(*pp)->len += len;
		return;
	}
	e = malloc(sizeof(*e));
	if (!e)
		return; /* the range is lost to this process, nothing else */
	e->start = start;
	e->len = len;
	e->next = *pp;
	*pp = e;
}

static bool arena_init(struct arena *a, uintptr_t base, size_t size)
{
	if (a->ready)
		return !a->broken;
	a->ready = true;
	a->base = base;
	a->size = size;
	arena_give(a, base, size);
	a->broken = !a->free;
	return !a->broken;
}

int perflib_vspace_get(size_t len, bool dontfork, struct perflib_vspace *ret)
{
	uintptr_t at = 0;
	int err = -ENOMEM;
	void *p;

	pthread_once(&atfork_once, vspace_atfork);
	len = page_round(len);
	if (vspace_enabled()) {
		pthread_mutex_lock(&slots_arena.lock);
		if (arena_init(&slots_arena, VSPACE_BASE, VSPACE_END - VSPACE_BASE))
			err = arena_take(&slots_arena, len, &at);
		pthread_mutex_unlock(&slots_arena.lock);
	}
	if (!err) {
		ret->base = (void *)at;
		ret->len = len;
		ret->reserved = false;
		return 0;
	}
	/* address space only: segments are mapped into it with MAP_FIXED */
	p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (dontfork)
		madvise(p, len, MADV_DONTFORK);
	ret->base = p;
	ret->len = len;
	ret->reserved = true;
	return 0;
}

void perflib_vspace_put(struct perflib_vspace *v)
{
	if (!v->base)
		return;
	if (v->reserved) {
		munmap(v->base, v->len);
	} else {
		pthread_mutex_lock(&slots_arena.lock);
		arena_give(&slots_arena, (uintptr_t)v->base, v->len);
		pthread_mutex_unlock(&slots_arena.lock);
	}
	v->base = NULL;
}

void *perflib_vspace_map(const struct perflib_vspace *v, size_t off, size_t len, bool writable,
			 bool over_blank, int fd, size_t foff)
{
	if (off > v->len || len > v->len - off) {
		errno = EINVAL;
		return NULL;
	}
	return perflib_map_shared_at((uint8_t *)v->base + off, len, writable,
				     v->reserved || over_blank, fd, foff);
}

void perflib_vspace_unmap(const struct perflib_vspace *v, size_t off, size_t len)
{
	/* in a reservation the hole is closed again, so that nothing else lands in it */
	if (v->reserved)
		mmap((uint8_t *)v->base + off, len, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	else
		munmap((uint8_t *)v->base + off, len);
}

/* the process-wide tables mapping, made on first use; false when it cannot be */
static bool tables_ready(void)
{
	void *p;

	if (tables_arena.ready)
		return !tables_arena.broken;
	if (!vspace_enabled()) {
		tables_arena.ready = tables_arena.broken = true;
		return false;
	}
	p = mmap(NULL, TABLES_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		/* strict overcommit (mode 2) counts NORESERVE too: a mapping per table then */
		tables_arena.ready = tables_arena.broken = true;
		return false;
	}
	/* a fork() child's provider handles are dead (provlist.c): it never reads these */
	madvise(p, TABLES_SIZE, MADV_DONTFORK);
	return arena_init(&tables_arena, (uintptr_t)p, TABLES_SIZE);
}

void *perflib_table_alloc(size_t size)
{
	uintptr_t at;
	void *p;

	size = page_round(size);
	pthread_once(&atfork_once, vspace_atfork);
	pthread_mutex_lock(&tables_arena.lock);
	if (tables_ready() && !arena_take(&tables_arena, size, &at)) {
		pthread_mutex_unlock(&tables_arena.lock);
		return (void *)at; /* zero: fresh, or given back with MADV_DONTNEED */
	}
	pthread_mutex_unlock(&tables_arena.lock);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, size, MADV_DONTFORK);
	return p;
}

void perflib_table_free(void *p, size_t size)
{
	uintptr_t at = (uintptr_t)p;

	if (!p)
		return;
	size = page_round(size);
	pthread_mutex_lock(&tables_arena.lock);
	if (tables_arena.ready && !tables_arena.broken && at >= tables_arena.base &&
	    at - tables_arena.base < tables_arena.size) {
		/* the memory goes back to the system, the zeroed range to the next table */
		madvise(p, size, MADV_DONTNEED);
		arena_give(&tables_arena, at, size);
		pthread_mutex_unlock(&tables_arena.lock);
		return;
	}
	pthread_mutex_unlock(&tables_arena.lock);
	munmap(p, size);
}
