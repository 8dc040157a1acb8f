// SPDX-License-Identifier: MIT
/*
 * slot.c - every change of a slot word and of a procs entry word (layout.h), in one place:
 * the states a slot and a provider process's entry go through, and the one atomic step
 * that takes each from one state to the next. instance.c (claims, creation, deletion,
 * reaping), reaper.c (kernel-owned slots) and callback.c (procs entries) call these; BPF
 * programs make the same steps with the helpers of layout.h and perflib_bpf.h.
 *
 * A slot:   FREE(g, 0) -> CLAIMED(g+1, pid) -> LIVE(g+2, pid) -> CLAIMED(g+3, pid) -> FREE(g+4, 0)
 *           claim           publish           hide                free
 *           a reaper:  CLAIMED/LIVE(g, dead) -> CLAIMED(g+1, reaper) -> FREE(g+2, 0)
 *           the kernel: LIVE(g, pid) <-> LIVE(g, 0) with the stamp PERFLIB_OWNER_KERNEL
 * The owner stamp changes with the word in the steps that change the holder (claim, take,
 * free: one 16-byte CAS where the CPU has it), so a slot is never held without its
 * holder's stamp.
 * A procs entry: FREE(g) -> FREE(g+1) while its identity is written -> LIVE(g+2) -> FREE(g+3).
 */
#include "internal.h"

bool perflib_slot_cas(uint8_t *slot, uint64_t old, uint64_t new)
{
	return __atomic_compare_exchange_n((uint64_t *)slot, &old, new, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

bool perflib_slot_take(uint8_t *slot, uint64_t old, uint64_t new, uint64_t stamp)
{
#if defined(__x86_64__) && defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16)
	unsigned __int128 *p = (unsigned __int128 *)slot, o, n;
	uint64_t start;
	int tries;

	/* the stamp may change under us (a reaper zeroing it): retry while the word holds */
	for (tries = 0; tries < 16; tries++) {
		start = __atomic_load_n((uint64_t *)(slot + 8), __ATOMIC_ACQUIRE);
		o = (unsigned __int128)start << 64 | old;
		n = (unsigned __int128)stamp << 64 | new;
		if (__sync_bool_compare_and_swap(p, o, n))
			return true;
		if (__atomic_load_n((uint64_t *)slot, __ATOMIC_ACQUIRE) != old)
			return false;
	}
	return false;
#else
	if (!perflib_slot_cas(slot, old, new))
		return false;
	__atomic_store_n((uint64_t *)(slot + 8), stamp, __ATOMIC_RELEASE);
	return true;
#endif
}

bool perflib_slot_claim(uint8_t *slot, uint64_t w, uint32_t pid, uint64_t stamp, uint64_t *ret_word)
{
	uint64_t nw = perflib_make_word(PERFLIB_SLOT_CLAIMED,
					perflib_gen_add(perflib_word_gen(w), 1), pid);

	if (perflib_word_state(w) != PERFLIB_SLOT_FREE || !perflib_slot_take(slot, w, nw, stamp))
		return false;
	*ret_word = nw;
	return true;
}

bool perflib_slot_publish(uint8_t *slot, uint64_t w)
{
	return perflib_word_state(w) == PERFLIB_SLOT_CLAIMED &&
	       perflib_slot_cas(slot, w,
				perflib_make_word(PERFLIB_SLOT_LIVE,
						  perflib_gen_add(perflib_word_gen(w), 1),
						  perflib_word_pid(w)));
}

bool perflib_slot_hide(uint8_t *slot, uint64_t w, uint32_t pid, uint64_t *ret_word)
{
	uint64_t nw = perflib_make_word(PERFLIB_SLOT_CLAIMED,
					perflib_gen_add(perflib_word_gen(w), 1), pid);

	if (perflib_word_state(w) != PERFLIB_SLOT_LIVE || perflib_word_pid(w) != pid ||
	    !perflib_slot_cas(slot, w, nw))
		return false;
	*ret_word = nw;
	return true;
}

bool perflib_slot_free(uint8_t *slot, uint64_t w)
{
	return perflib_word_state(w) == PERFLIB_SLOT_CLAIMED &&
	       perflib_slot_take(slot, w,
				 perflib_make_word(PERFLIB_SLOT_FREE,
						   perflib_gen_add(perflib_word_gen(w), 1), 0),
				 0);
}

bool perflib_slot_take_dead(uint8_t *slot, uint64_t w, uint32_t self, uint64_t self_stamp,
			    uint64_t *ret_word)
{
	uint64_t nw = perflib_make_word(PERFLIB_SLOT_CLAIMED,
					perflib_gen_add(perflib_word_gen(w), 1), self);

	if (perflib_word_state(w) == PERFLIB_SLOT_FREE ||
	    !perflib_slot_take(slot, w, nw, self_stamp))
		return false;
	*ret_word = nw;
	return true;
}

bool perflib_slot_to_kernel(uint8_t *slot, uint64_t w)
{
	struct perflib_slot_hdr *h = (void *)slot;
	uint64_t start = __atomic_load_n(&h->owner_start, __ATOMIC_RELAXED);

	if (perflib_word_state(w) != PERFLIB_SLOT_LIVE)
		return false;
	/* the marker first: from now on every liveness check says alive, whatever the pid */
	__atomic_store_n(&h->owner_start, PERFLIB_OWNER_KERNEL, __ATOMIC_RELAXED);
	/* same generation: the index key's generation keeps matching the slot */
	if (!perflib_slot_cas(slot, w,
			      perflib_make_word(PERFLIB_SLOT_LIVE, perflib_word_gen(w), 0))) {
		__atomic_store_n(&h->owner_start, start, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

bool perflib_slot_from_kernel(uint8_t *slot, uint64_t w, uint32_t pid, uint64_t stamp)
{
	struct perflib_slot_hdr *h = (void *)slot;

	if (perflib_word_state(w) != PERFLIB_SLOT_LIVE || perflib_word_pid(w) != 0 ||
	    __atomic_load_n(&h->owner_start, __ATOMIC_RELAXED) != PERFLIB_OWNER_KERNEL)
		return false;
	/* pid first (the marker still says alive), then this process's stamp */
	if (!perflib_slot_cas(slot, w,
			      perflib_make_word(PERFLIB_SLOT_LIVE, perflib_word_gen(w), pid)))
		return false;
	__atomic_store_n(&h->owner_start, stamp, __ATOMIC_RELAXED);
	return true;
}

/* ---- procs entries ------------------------------------------------------------------------ */

static bool proc_entry_alive(const struct perflib_proc *e)
{
	return perflib_proc_alive(__atomic_load_n(&e->pid, __ATOMIC_RELAXED),
				  __atomic_load_n(&e->start, __ATOMIC_RELAXED));
}

int perflib_proc_claim(struct perflib_store *map, uint32_t flags, uint64_t token)
{
	uint32_t pid, i, nr = map->info->nr_procs;
	uint64_t start, w, nw;

	perflib_self(&pid, &start);
	for (i = 0; i < nr; i++) {
		struct perflib_proc *e = &map->procs[i];

		w = __atomic_load_n((uint64_t *)e, __ATOMIC_ACQUIRE);
		if (perflib_proc_word_state(w) != PERFLIB_PROC_FREE && proc_entry_alive(e))
			continue;
		/* FREE with a new generation until the identity is written: LIVE last */
		nw = perflib_proc_word_next(w, PERFLIB_PROC_FREE);
		if (!__atomic_compare_exchange_n((uint64_t *)e, &w, nw, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		__atomic_store_n(&e->pid, pid, __ATOMIC_RELAXED);
		__atomic_store_n(&e->start, start, __ATOMIC_RELAXED);
		__atomic_store_n(&e->flags, flags, __ATOMIC_RELAXED);
		__atomic_store_n(&e->token, token, __ATOMIC_RELAXED);
		if (map->pending) /* a slot a dead holder of the entry was freeing: not ours */
			__atomic_store_n(&map->pending[i], 0, __ATOMIC_RELAXED);
		/*
		 * the owner summaries of the entry's last holder: gone with a FREE entry (its
		 * holder, or the exit reaper after its walk, released it). A LIVE entry of a dead
		 * holder keeps them: an exit reaper may be walking them right now; bits left
		 * set cost its next walk a look, never a miss.
		 */
		if (perflib_proc_word_state(w) == PERFLIB_PROC_FREE)
			perflib_owner_clear_all(map, (int)i);
		__atomic_store_n((uint64_t *)e, perflib_proc_word_next(nw, PERFLIB_PROC_LIVE),
				 __ATOMIC_RELEASE);
		return (int)i;
	}
	pr_warn("counter set has no free provider-process entry (%u in use)\n", nr);
	return -ENOSPC;
}

void perflib_proc_release(struct perflib_store *map, int i)
{
	struct perflib_proc *e;
	uint64_t start, w;
	uint32_t pid;

	if (i < 0 || (uint32_t)i >= map->info->nr_procs || !map->procs)
		return;
	e = &map->procs[i];
	perflib_self(&pid, &start);
	w = __atomic_load_n((uint64_t *)e, __ATOMIC_ACQUIRE);
	if (perflib_proc_word_state(w) != PERFLIB_PROC_LIVE ||
	    __atomic_load_n(&e->pid, __ATOMIC_RELAXED) != pid ||
	    __atomic_load_n(&e->start, __ATOMIC_RELAXED) != start)
		return;
	/* CAS: never free an entry that changed hands meanwhile */
	__atomic_compare_exchange_n((uint64_t *)e, &w, perflib_proc_word_next(w, PERFLIB_PROC_FREE),
				    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* are procs entry @proc's summary words of head bit @b in segment @k all clear? */
static bool owner_span_clear(const struct perflib_class *c, uint32_t k, uint32_t proc, uint64_t b)
{
	uint64_t span = perflib_sum_head_span(k, c->seg0),
		 words = perflib_seg_sum_words(k, c->seg0);
	uint64_t j, end = (b + 1) * span < words ? (b + 1) * span : words;
	const uint64_t *live = perflib_seg_at(c, k)->live;

	for (j = b * span; j < end; j++) {
		if (__atomic_load_n(&live[perflib_sum_word(k, c->seg0, proc, (uint32_t)j)],
				    __ATOMIC_SEQ_CST))
			return false;
	}
	return true;
}

void perflib_owner_mark(struct perflib_store *map, uint32_t id, bool on)
{
	const struct perflib_class *c = &map->cls[perflib_slot_id_class(id)];
	uint32_t i = perflib_slot_id_index(id), k = perflib_seg_of(i, c->seg0);
	uint32_t nr_procs = map->info->nr_procs, p = (uint32_t)map->proc_index;
	uint64_t g = (i - perflib_seg_first(k, c->seg0)) / 64; /* the slot's bitmap word */
	uint64_t hb, bit, hbit, sbit = k ? 1ULL << k : 0, *live, *w, *head, *segs;

	if (map->proc_index < 0 || p >= nr_procs)
		return;
	live = perflib_seg_at(c, k)->live;
	w = &live[perflib_sum_word(k, c->seg0, p, (uint32_t)(g / 64))];
	head = &live[perflib_sum_head(k, c->seg0, nr_procs, p)];
	/* the segments bits: in segment 0's head, mapped whenever segment k is (opened in order) */
	segs = &perflib_seg_at(c, 0)->live[perflib_sum_head(0, c->seg0, nr_procs, p)];
	hb = g / 64 / perflib_sum_head_span(k, c->seg0);
	bit = 1ULL << (g % 64);
	hbit = 1ULL << hb;
	/*
	 * Only this process writes its words (its provider's lock held): a load spares the
	 * store when nothing changes. The segment's bit before the head bit, the head bit
	 * before the summary bit, the summary bit before the claim: a kill anywhere leaves
	 * bits that lead to the slot.
	 */
	if (on) {
		if (sbit && !(__atomic_load_n(segs, __ATOMIC_RELAXED) & sbit))
			__atomic_fetch_or(segs, sbit, __ATOMIC_SEQ_CST);
		if (!(__atomic_load_n(head, __ATOMIC_RELAXED) & hbit))
			__atomic_fetch_or(head, hbit, __ATOMIC_SEQ_CST);
		if (!(__atomic_load_n(w, __ATOMIC_RELAXED) & bit))
			__atomic_fetch_or(w, bit, __ATOMIC_SEQ_CST);
		return;
	}
	if (!(__atomic_load_n(w, __ATOMIC_RELAXED) & bit))
		return;
	/*
	 * the head bit after the last summary word of its span went clear, the segment's bit
	 * after its head did (segment 0's own head bit is bit 0, never a segment's)
	 */
	if (__atomic_and_fetch(w, ~bit, __ATOMIC_SEQ_CST) || !owner_span_clear(c, k, p, hb))
		return;
	if (!__atomic_and_fetch(head, ~hbit, __ATOMIC_SEQ_CST) && sbit)
		__atomic_fetch_and(segs, ~sbit, __ATOMIC_RELEASE);
}

void perflib_owner_clear_all(struct perflib_store *map, int proc)
{
	uint32_t c, k, n, j, words, nr_procs = map->info->nr_procs;
	struct perflib_class *cl;
	uint64_t *live;

	if (proc < 0 || (uint32_t)proc >= nr_procs || !map->writable)
		return;
	for (c = 0; c < map->nr_classes; c++) {
		cl = &map->cls[c];
		n = perflib_store_nr_segs(map, c);
		for (k = 0; k < n; k++) {
			live = perflib_seg_at(cl, k)->live;
			if (!live)
				continue;
			words = (uint32_t)perflib_seg_sum_words(k, cl->seg0);
			for (j = 0; j < words; j++)
				__atomic_store_n(
					&live[perflib_sum_word(k, cl->seg0, (uint32_t)proc, j)], 0,
					__ATOMIC_RELAXED);
			__atomic_store_n(
				&live[perflib_sum_head(k, cl->seg0, nr_procs, (uint32_t)proc)], 0,
				__ATOMIC_RELAXED);
		}
	}
}

void perflib_proc_pending(struct perflib_store *map, uint32_t id, bool on)
{
	/* the process's pending word, in s0/live after the bitmap (layout.h) */
	if (map->proc_index >= 0 && map->pending)
		__atomic_store_n(&map->pending[map->proc_index], on ? (uint64_t)id + 1 : 0,
				 __ATOMIC_RELEASE);
}
