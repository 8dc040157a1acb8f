// SPDX-License-Identifier: MIT
/*
 * instance.c - PerfCreateInstance, PerfDeleteInstance, PerfQueryInstance: claiming slots,
 * the cross-process unique index, and reaping the slots of dead processes.
 *
 * Invariants:
 *  - a slot is claimed by CAS of its word FREE -> CLAIMED with the claimer's pid;
 *  - only the holder of a slot inserts an index entry that names it, with the generation
 *    of its claim; an entry whose slot no longer holds that claim is stale (the slot was
 *    freed, reaped or claimed again) and anyone who meets it may clear it, so a reaper
 *    never has to find the keys of what it frees (the owner clears its own on delete);
 *  - an entry is only a hint: a lookup takes a current entry as a match once the slot's
 *    own name, id and scope give the key it looks for;
 *  - a key lives in the index table of the leader of the segment that holds its slot
 *    (perflib_idx_leader: one table per octave, in the leader's live map); after inserting
 *    it, the creator looks the key up in every leader's table: another live instance
 *    there, or a creation in progress at a lower slot, wins; one at a higher slot is
 *    waited for (it sees ours and gives up, or goes live and ours gives up). Two creators
 *    of one name cannot both miss each other: each inserts before it looks, with a full
 *    fence between.
 *  - the live bit of a slot is set once the slot is claimed and cleared before it is freed,
 *    so readers that visit only set bits miss no instance.
 */
#include <sched.h>
#include <string.h>

#include <bpf/bpf.h>

#include "internal.h"

#define CREATE_RETRIES 64
#define CREATE_WAIT_MS 1000 /* longest wait for another creator of the same key */

/* the key of (name, id) in a uniqueness scope; the hash lives in layout.h, shared with BPF */
static void index_key_scoped(const WCHAR *name, size_t len, uint32_t id, uint64_t scope,
			     struct perflib_index_key *key)
{
	struct perflib_hash_state st;
	size_t i;

	perflib_hash_init(&st, scope);
	for (i = 0; i < len; i++)
		perflib_hash_step(&st, name[i]);
	memset(key, 0, sizeof(*key));
	perflib_hash_final(&st, id, (uint32_t)len, key);
}

void perflib_index_key(const WCHAR *name, size_t len, uint32_t id, struct perflib_index_key *key)
{
	index_key_scoped(name, len, id, 0, key);
}

/*
 * The index key for an instance of @info: the key shape (singleton for single-instance
 * sets, per-process scope for the aggregated ones) comes from layout.h, so that the BPF
 * exit reaper computes exactly the same key.
 */
static void slot_key(const struct perflib_info *info, const WCHAR *name, size_t len, uint32_t id,
		     uint32_t pid, struct perflib_index_key *key)
{
	uint64_t scope = perflib_key_scope(info->instance_type, pid);

	if (perflib_key_singleton(info->instance_type)) {
		memset(key, 0, sizeof(*key));
		perflib_singleton_key(scope, key);
		return;
	}
	index_key_scoped(name, len, id, scope, key);
}

static void slot_release(struct perflib_store *map, uint32_t i, uint64_t w);

/* is the owner recorded in slot word @w (and start time in the slot) still running? */
static bool slot_owner_alive(const uint8_t *slot, uint64_t w)
{
	const struct perflib_slot_hdr *h = (const void *)slot;
	uint64_t start = __atomic_load_n(&h->owner_start, __ATOMIC_RELAXED);
	uint64_t now;

	/* start 0: the claimer has not written it yet; the pid alone decides */
	if (!start)
		return perflib_proc_start_time((pid_t)perflib_word_pid(w), &now) == 0;
	/* word and stamp change together (perflib_slot_take): the stamp is the holder's */
	return perflib_proc_alive(perflib_word_pid(w), start);
}

/* the key of the instance stored in slot @id (word @w), as its creator computed it */
static void slot_own_key(const struct perflib_store *map, uint32_t id, const uint8_t *slot,
			 uint64_t w, struct perflib_index_key *key)
{
	const struct perflib_info *info = map->info;
	const PERF_COUNTERSET_INSTANCE *blk = (const void *)(slot + PERFLIB_BLOCK_OFFSET);
	const struct perflib_slot_hdr *hdr = (const void *)slot;
	const WCHAR *name = (const WCHAR *)(slot + info->name_offset);
	size_t len = perflib_wcsnlen(name, map->cls[perflib_slot_id_class(id)].geo->name_max);
	uint64_t stamp = __atomic_load_n(&hdr->owner_start, __ATOMIC_RELAXED);

	slot_key(info, name, len, blk->InstanceId, perflib_slot_key_pid(stamp, w), key);
}

/* does slot @id, read with word @w, hold the instance of @key (and still that word)? */
static bool slot_has_key(const struct perflib_store *map, uint32_t id, const uint8_t *slot,
			 uint64_t w, const struct perflib_index_key *key)
{
	struct perflib_index_key k;

	slot_own_key(map, id, slot, w, &k);
	/* a name read while the slot changed hands is no answer */
	return !memcmp(&k, key, sizeof(k)) && perflib_slot_word(slot) == w;
}

/* a key's place in leader @k's table of class @cls, and the table */
struct idx_ref {
	uint64_t *t;
	uint64_t nb;
	uint32_t cls, k;
	struct perflib_idx_place p;
};

/* a current entry's slot: its id, mapping and word, and the entry */
struct idx_hit {
	uint32_t id;
	uint8_t *slot;
	uint64_t w, e;
};

/* @key's place in leader @k's table of class @cls; false if that table is not mapped */
static bool idx_ref(const struct perflib_store *map, uint32_t cls, uint32_t k,
		    const struct perflib_index_key *key, struct idx_ref *r)
{
	r->t = perflib_idx_table(map, cls, k, &r->nb);
	if (!r->t)
		return false;
	r->cls = cls;
	r->k = k;
	perflib_idx_place(key, r->nb, &r->p);
	return true;
}

/* entry @j of bucket @b (0 or 1) of the key's place @r */
static uint64_t *idx_at(const struct idx_ref *r, int b, uint32_t j)
{
	return r->t + (uint64_t)r->p.b[b] * PERFLIB_IDX_BUCKET + j;
}

/* the buckets of place @r: two, or one in a table of one bucket */
static int idx_nr_buckets(const struct idx_ref *r)
{
	return r->p.b[1] == r->p.b[0] ? 1 : 2;
}

/*
 * The next non-empty entry of place @r from position *@pos on (entry pos % 16 of bucket
 * pos / 16; start at 0), with @tagged only one with the place's tag: its address, its value
 * in *@ret_e; NULL past the last
 */
static uint64_t *idx_next(const struct idx_ref *r, uint32_t *pos, bool tagged, uint64_t *ret_e)
{
	uint32_t end = (uint32_t)idx_nr_buckets(r) * PERFLIB_IDX_BUCKET;
	uint64_t *ep, e;

	for (; *pos < end; (*pos)++) {
		ep = idx_at(r, (int)(*pos / PERFLIB_IDX_BUCKET), *pos % PERFLIB_IDX_BUCKET);
		e = __atomic_load_n(ep, __ATOMIC_ACQUIRE);
		if (e && (!tagged || perflib_idx_entry_tag(e) == r->p.tag)) {
			(*pos)++;
			*ret_e = e;
			return ep;
		}
	}
	return NULL;
}

/*
 * Entry @e, read at @ep in the table of @r: 1 if current (its slot holds the claim that
 * inserted it: *@h), 0 if stale (cleared, when this process may write), or if it names no
 * slot this process has opened (past the segments it sees, or outside the leader's group:
 * left alone); -ENOMEM when the slot cannot be mapped.
 */
static int idx_entry(struct perflib_store *map, const struct idx_ref *r, uint64_t *ep, uint64_t e,
		     struct idx_hit *h)
{
	uint32_t i = perflib_idx_entry_slot(e);

	if (i >= perflib_store_slots(map, r->cls) ||
	    perflib_idx_of(i, map->cls[r->cls].seg0) != r->k)
		return 0;
	h->id = perflib_slot_id_make(r->cls, i);
	h->slot = map->writable ? perflib_slot_map(map, h->id) : perflib_slot(map, h->id);
	if (!h->slot)
		return -ENOMEM;
	h->w = perflib_slot_word(h->slot);
	h->e = e;
	if (!perflib_idx_current(e, h->w)) {
		if (map->writable)
			__atomic_compare_exchange_n(ep, &e, 0, false, __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED);
		return 0;
	}
	return 1;
}

/*
 * The next instance of @key in place @r from *@pos on, but the one of slot @skip: a current
 * entry with the key's tag whose slot's own name, id and scope give @key (stale entries met
 * are cleared). 1 and *@h, 0 past the last, -ENOMEM.
 */
static int idx_next_match(struct perflib_store *map, const struct idx_ref *r, uint32_t *pos,
			  const struct perflib_index_key *key, uint32_t skip, struct idx_hit *h)
{
	uint64_t *ep, e;
	int err;

	while ((ep = idx_next(r, pos, true, &e))) {
		if (perflib_slot_id_make(r->cls, perflib_idx_entry_slot(e)) == skip)
			continue;
		err = idx_entry(map, r, ep, e, h);
		if (err < 0)
			return err;
		if (err && slot_has_key(map, h->id, h->slot, h->w, key))
			return 1;
	}
	return 0;
}

/*
 * Remove the entries of key @key that name slot @id from its leader's table (its owner
 * deleting it, or a reaper freeing it: older entries of the slot go with them)
 */
static void slot_unindex_key(struct perflib_store *map, uint32_t id,
			     const struct perflib_index_key *key)
{
	uint32_t pos = 0;
	struct idx_ref r;
	uint64_t *ep, e;

	if (!idx_ref(map, perflib_slot_id_class(id), perflib_slot_leader(map, id), key, &r))
		return;
	while ((ep = idx_next(&r, &pos, true, &e))) {
		if (perflib_idx_entry_slot(e) == perflib_slot_id_index(id))
			__atomic_compare_exchange_n(ep, &e, 0, false, __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED);
	}
}

/* remove the index entries of the instance slot @id (word @w) holds */
static void slot_unindex(struct perflib_store *map, uint32_t id, uint64_t w)
{
	struct perflib_index_key key;

	slot_own_key(map, id, perflib_slot(map, id), w, &key);
	slot_unindex_key(map, id, &key);
}

int perflib_slot_reap(struct perflib_store *map, uint32_t i)
{
	uint8_t *slot = perflib_slot_map(map, i);
	uint64_t w, cw, self_start;
	uint32_t self;

	if (!slot)
		return 0;
	w = perflib_slot_word(slot);
	if (perflib_word_state(w) == PERFLIB_SLOT_FREE || slot_owner_alive(slot, w))
		return 0;
	/*
	 * Take it with this reaper's pid and stamp in one step: a second reaper then sees a
	 * live owner, never the dead one, and leaves it.
	 */
	perflib_self(&self, &self_start);
	/* a provider holds it for a moment: in its owner summary first (a bit left costs a look) */
	perflib_owner_mark(map, i, true);
	if (!perflib_slot_take_dead(slot, w, self, self_start, &cw))
		return 0;
	/* the key was made under the dead owner's pid (its scope for aggregate sets) */
	slot_unindex(map, i, w);
	slot_release(map, i, cw);
	pr_debug("reaped slot %#x of a dead process\n", i);
	return 1;
}

int perflib_reap_counterset(const GUID *counterset_guid)
{
	struct perflib_store *map;
	uint32_t c, i, n_slots;
	int err, n = 0;

	if (!counterset_guid)
		return -EINVAL;
	err = perflib_store_open(counterset_guid, true, &map);
	if (err)
		return err;
	for (c = 0; c < map->nr_classes; c++) {
		n_slots = perflib_store_slots(map, c);
		for (i = 0; i < n_slots; i++)
			n += perflib_slot_reap(map, perflib_slot_id_make(c, i));
	}
	perflib_store_close(map);
	return n;
}

/*
 * Undo a claim refused after our live bit went into slot @id (FREE when we looked): only the
 * holder of a slot touches its bit, so take it first, then give it back as any holder
 * does. Held by another process meanwhile: that holder clears the bit when it frees the slot.
 */
static void claim_undo(struct perflib_store *map, uint32_t id, uint8_t *slot, uint32_t pid,
		       uint64_t start)
{
	uint64_t w, cw;

	do {
		w = perflib_slot_word(slot);
		if (perflib_word_state(w) != PERFLIB_SLOT_FREE)
			return;
	} while (!perflib_slot_claim(slot, w, pid, start, &cw));
	slot_release(map, id, cw);
}

/*
 * Claim slot @id of segment @k (mapped at @slot) if it is FREE: 0 and its word in *@ret_word;
 * -EBUSY when another process holds it; -EAGAIN when segment @k is being retired, or this
 * process's map of it was retired (the claim undone: the caller refreshes its view).
 */
static int slot_try(struct perflib_store *map, uint32_t k, uint32_t id, uint8_t *slot, uint32_t pid,
		    uint64_t start, uint64_t *ret_word)
{
	uint32_t cls = perflib_slot_id_class(id);
	uint64_t w;

	for (;;) {
		w = perflib_slot_word(slot);
		if (perflib_word_state(w) != PERFLIB_SLOT_FREE)
			return -EBUSY;
		/*
		 * Our owner summary's bit, then the live bit (a kill right after the claim
		 * leaves a slot the exit reaper walks to), then word and stamp at once: the
		 * slot is never ours without our stamp.
		 */
		perflib_owner_mark(map, id, true);
		perflib_live_set(map, id, true);
		/*
		 * a segment being retired (perflib_store_shrink): our bit, then its count and
		 * the class's epoch; the retirer lowers the count, then looks at the bits, and
		 * moves the epoch before the pins go. One sees the other. The epoch, not the
		 * count alone: segment k retired and grown again since this process's view was
		 * made has the count it had, and our bit went into the old map.
		 */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (k >= __atomic_load_n(&map->ctl->nr_segs[cls], __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&map->ctl->epoch[cls], __ATOMIC_ACQUIRE) !=
			    __atomic_load_n(&map->cls[cls].epoch, __ATOMIC_ACQUIRE)) {
			claim_undo(map, id, slot, pid, start);
			return -EAGAIN;
		}
		if (perflib_slot_claim(slot, w, pid, start, ret_word))
			return 0;
		/*
		 * The word moved: another process claimed it (its free clears our bit with
		 * its own), or claimed and freed it already, maybe clearing the bit before
		 * ours went in: then it is FREE again and claimed anew here, never left FREE
		 * with our bit on it (a bit on a FREE slot keeps its segment from retirement)
		 */
	}
}

/*
 * Claim a FREE slot among the first @n_slots of class @cls, from the hint on; the live bitmap
 * tells which slots are taken, so a full stretch costs one load per 64 slots. *ret_id gets
 * the slot id.
 */
static int claim_scan(struct perflib_ctrset *set, uint32_t cls, uint32_t pid, uint64_t start,
		      uint32_t n_slots, uint32_t *ret_id, uint64_t *ret_word)
{
	struct perflib_store *map = set->map;
	struct perflib_class *cl = &map->cls[cls];
	struct perflib_ctrset_class *cc = &set->cls[cls];
	uint32_t i = cc->alloc_hint < n_slots ? cc->alloc_hint : 0, left = n_slots, id;
	uint8_t *slot;

	while (left) {
		uint32_t k = perflib_seg_of(i, cl->seg0);
		uint32_t first = (uint32_t)perflib_seg_first(k, cl->seg0);
		uint32_t end = first + (uint32_t)perflib_seg_slots(k, cl->seg0);
		uint32_t off = i - first, bit = off % 64, span, c;
		uint64_t free_bits, nw;
		int err;

		if (end > n_slots)
			end = n_slots;
		span = end - i < 64 - bit ? end - i : 64 - bit;
		if (span > left)
			span = left;
		free_bits = ~__atomic_load_n(&perflib_seg_at(cl, k)->live[off / 64],
					     __ATOMIC_ACQUIRE) >>
			    bit;
		if (span < 64)
			free_bits &= (1ULL << span) - 1;
		if (!free_bits) {
			left -= span;
			i = i + span >= n_slots ? 0 : i + span;
			continue;
		}
		c = i + (uint32_t)__builtin_ctzll(free_bits);
		left -= c - i + 1;
		i = c + 1 >= n_slots ? 0 : c + 1;
		id = perflib_slot_id_make(cls, c);
		/* a provider maps the chunks it claims in when it first claims there */
		slot = perflib_slot_map(map, id);
		if (!slot)
			return -ENOMEM;
		err = slot_try(map, k, id, slot, pid, start, &nw);
		if (err == -EAGAIN)
			return err;
		if (err)
			continue; /* another process holds it */
		cc->alloc_hint = i;
		*ret_id = id;
		*ret_word = nw;
		return 0;
	}
	return -ENOSPC;
}

/*
 * Clear the live bit of FREE slot @i left set by a process that died between claiming and
 * freeing (or by the kernel reaper): only the holder of a slot may touch its bit, so claim
 * it first. 1 if cleared.
 */
static int slot_scrub(struct perflib_store *map, uint32_t i, uint32_t pid, uint64_t start)
{
	uint8_t *slot = perflib_slot_map(map, i);
	uint64_t w, cw;

	if (!slot)
		return 0;
	w = perflib_slot_word(slot);

	if (perflib_word_state(w) != PERFLIB_SLOT_FREE)
		return 0;
	perflib_owner_mark(map, i, true); /* as any claim: a bit left costs a look */
	if (!perflib_slot_claim(slot, w, pid, start, &cw))
		return 0;
	perflib_live_set(map, i, false);
	perflib_slot_free(slot, cw);
	return 1;
}

/* free what dead processes hold among the first @n_slots of class @cls; the slots freed */
static uint32_t reap_all(struct perflib_store *map, uint32_t cls, uint32_t n_slots, uint32_t pid,
			 uint64_t start)
{
	uint32_t i, id, n = 0;
	uint64_t bit;

	for (i = 0; i < n_slots; i++) {
		id = perflib_slot_id_make(cls, i);
		n += (uint32_t)perflib_slot_reap(map, id);
		if (__atomic_load_n(perflib_live_word(map, id, &bit), __ATOMIC_RELAXED) & bit)
			n += (uint32_t)slot_scrub(map, id, pid, start);
	}
	return n;
}

/*
 * Claim with the set's lock held: nothing is grown or retired meanwhile, so the view the
 * refresh makes stays the published one, and a full class is reaped, then grown, here.
 */
static int claim_held(struct perflib_ctrset *set, uint32_t cls, uint32_t pid, uint64_t start,
		      uint32_t *ret_id, uint64_t *ret_word)
{
	struct perflib_store *map = set->map;
	uint32_t n, tries;
	bool reaped = false;
	int err, lock;

	lock = perflib_store_lock(map);
	if (lock < 0)
		return lock;
	for (tries = 0; tries <= PERFLIB_MAX_SEGS + 1; tries++) {
		err = perflib_store_refresh_held(map);
		if (err)
			break;
		/*
		 * a retirer killed midway left the count below this view (its segment whole):
		 * published again before anything is claimed there
		 */
		if (__atomic_load_n(&map->ctl->nr_segs[cls], __ATOMIC_ACQUIRE) <
		    perflib_store_nr_segs(map, cls)) {
			err = perflib_store_grow_held(map, cls);
			if (err)
				break;
			continue;
		}
		/* the last segment's slots past the capacity stay unused */
		n = perflib_ctrset_slots(set, cls);
		err = claim_scan(set, cls, pid, start, n, ret_id, ret_word);
		if (err != -ENOSPC)
			break;
		if (!reaped) {
			reaped = true;
			if (reap_all(map, cls, n, pid, start))
				continue;
		}
		err = perflib_store_grow_held(map, cls);
		if (err) {
			pr_debug("size class %u of counter set full at %u slots: %s\n", cls, n,
				 strerror(-err));
			break;
		}
	}
	perflib_store_unlock(lock);
	/* -EAGAIN cannot come with the lock held: it would be a claim refused forever */
	return err == -EAGAIN ? -EBUSY : err;
}

/*
 * Claim a FREE slot of class @cls for this process. First without the set's lock, in the
 * segments this process sees: the common case, loads and a CAS. When they are full, or a
 * segment is being retired under the claim, again with the lock (claim_held): reaping dead
 * processes' slots, growing, and never refused because of what another process did.
 * -ENOSPC only when the class is at its capacity or the kernel's memory is out.
 */
static int slot_claim(struct perflib_ctrset *set, uint32_t cls, uint32_t pid, uint64_t start,
		      uint32_t *ret_id, uint64_t *ret_word)
{
	int err;

	/* segments other processes added (or retired) meanwhile */
	err = perflib_store_refresh(set->map);
	if (!err)
		err = claim_scan(set, cls, pid, start, perflib_ctrset_slots(set, cls), ret_id,
				 ret_word);
	if (err == -ENOSPC || err == -EAGAIN)
		err = claim_held(set, cls, pid, start, ret_id, ret_word);
	return err;
}

/* give a claimed slot back */
static void slot_release(struct perflib_store *map, uint32_t i, uint64_t w)
{
	uint8_t *slot = perflib_slot(map, i);

	/* a free slot shows nothing of its last instance (bpftool dumps every slot) */
	memset(slot + PERFLIB_BLOCK_OFFSET, 0,
	       map->cls[perflib_slot_id_class(i)].slot_size - PERFLIB_BLOCK_OFFSET);

	/*
	 * Readers stop visiting it before anyone can claim it again. From here the kernel's
	 * exit reaper, which walks the live bits, would not see the slot: the procs entry
	 * names it until it is FREE.
	 */
	perflib_proc_pending(map, i, true);
	perflib_live_set(map, i, false);
	/*
	 * FREE and stamp 0 together: until then the slot shows its holder's stamp, so a kill
	 * landing here leaves a slot the kernel's exit reaper still matches
	 */
	if (!perflib_slot_free(slot, w))
		pr_warn("slot %#x changed while being freed\n", i);
	perflib_proc_pending(map, i, false);
}

/*
 * Slot @id was given back: if this provider holds no other slot of its bitmap word, clear
 * the word's bit in its owner summary (the exit reaper then skips the 64 slots).
 */
static void owner_unmark(struct perflib_ctrset *set, uint32_t id)
{
	const struct perflib_class *c = &set->map->cls[perflib_slot_id_class(id)];
	uint32_t i = perflib_slot_id_index(id), k = perflib_seg_of(i, c->seg0);
	uint32_t first = (uint32_t)perflib_seg_first(k, c->seg0);
	uint32_t g = first + (i - first) / 64 * 64, end = g + 64, n;

	n = perflib_ctrset_slots(set, perflib_slot_id_class(id));
	if (end > n)
		end = n;
	for (; g < end; g++) {
		if (g != i &&
		    atomic_load_explicit(
			    perflib_ctrset_owned(
				    set, perflib_slot_id_make(perflib_slot_id_class(id), g)),
			    memory_order_relaxed))
			return;
	}
	perflib_owner_mark(set->map, id, false);
}

/* fill the Windows block and the perflib fields of a claimed slot */
static void slot_fill(struct perflib_ctrset *set, uint32_t i, const WCHAR *name, size_t len,
		      uint32_t id)
{
	const struct perflib_info *info = set->map->info;
	const struct perflib_info_class *ic = set->map->cls[perflib_slot_id_class(i)].geo;
	uint8_t *slot = perflib_slot(set->map, i);
	PERF_COUNTERSET_INSTANCE *blk = (void *)(slot + PERFLIB_BLOCK_OFFSET);
	char *ascii = (char *)(slot + ic->ascii_offset);
	WCHAR *dst = (WCHAR *)(slot + info->name_offset);
	uint32_t name_bytes = (uint32_t)(len + 1) * 2;
	size_t k;

	/* owner_start: written with the claim (perflib_slot_take) */
	/* counters start at zero, as in Windows' zero-filled blocks */
	memset(slot + PERFLIB_COUNTERS_OFFSET, 0, 8 * (size_t)info->nr_counters);
	memcpy(dst, name, len * 2);
	memset(dst + len, 0, ((size_t)ic->name_max - len) * 2);
	for (k = 0; k + 1 < ic->ascii_max && k < len; k++)
		ascii[k] = name[k] >= 0x20 && name[k] < 0x7f ? (char)name[k] : '?';
	memset(ascii + k, 0, ic->ascii_max - k);
	if (ic->ref_offset)
		memset(slot + ic->ref_offset, 0,
		       8 * (size_t)info->nr_counters + 8 * ((info->nr_counters + 63) / 64));
	blk->CounterSetGuid = set->guid;
	blk->InstanceId = id;
	blk->InstanceNameOffset = (uint32_t)sizeof(*blk) + 8 * info->nr_counters;
	blk->InstanceNameSize = name_bytes;
	blk->dwSize = (blk->InstanceNameOffset + name_bytes + 7) & ~7u;
}

/*
 * Does leader @k's table hold @key for an instance other than ours (slot @id) that wins
 * over it? -EEXIST: a live one, or a creation in progress at a lower slot; -EAGAIN: one at
 * a higher slot, still undecided (wait and look again); 0: nothing that counts; -ENOMEM.
 */
static int key_in_leader(struct perflib_store *map, uint32_t k, uint32_t id,
			 const struct perflib_index_key *key)
{
	uint32_t pos = 0;
	struct idx_ref r;
	struct idx_hit h;
	int ret = 0, err;

	if (!idx_ref(map, perflib_slot_id_class(id), k, key, &r))
		return 0;
	while ((err = idx_next_match(map, &r, &pos, key, id, &h)) > 0) {
		if (!slot_owner_alive(h.slot, h.w)) {
			perflib_slot_reap(map, h.id);
			continue;
		}
		if (perflib_word_state(h.w) == PERFLIB_SLOT_LIVE || h.id < id)
			return -EEXIST;
		ret = -EAGAIN;
	}
	return err < 0 ? err : ret;
}

/*
 * after our entry is in our leader's table: does any leader's table beat it? (Only the
 * segments of our class: a name's length decides its class, so the key is nowhere else.)
 */
static int key_unique(struct perflib_store *map, uint32_t id, const struct perflib_index_key *key)
{
	uint32_t cls = perflib_slot_id_class(id), k, n;
	uint64_t deadline = 0;
	int err;

	/* our insert before every look (the other creator does the same: one sees the other) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (;;) {
		perflib_store_refresh(map);
		n = perflib_store_nr_segs(map, cls);
		for (k = 0, err = 0; k < n && !err; k = perflib_idx_next(k))
			err = key_in_leader(map, k, id, key);
		if (err != -EAGAIN)
			return err;
		if (!deadline)
			deadline = perflib_now_ms() + CREATE_WAIT_MS;
		else if (perflib_now_ms() > deadline)
			return -EBUSY;
		sched_yield();
	}
}

/* free entries of bucket @b of place @r */
static uint32_t idx_free(const struct idx_ref *r, int b)
{
	uint32_t j, n = 0;

	for (j = 0; j < PERFLIB_IDX_BUCKET; j++)
		n += !__atomic_load_n(idx_at(r, b, j), __ATOMIC_RELAXED);
	return n;
}

/* clear the stale entries of the buckets of place @r */
static void idx_sweep(struct perflib_store *map, const struct idx_ref *r)
{
	uint32_t pos = 0;
	struct idx_hit h;
	uint64_t *ep, e;

	while ((ep = idx_next(r, &pos, false, &e)))
		idx_entry(map, r, ep, e, &h);
}

/*
 * Put entry @e in the emptier of the two buckets of place @r, clearing stale entries there
 * when both are full: where it went, or NULL if both stay full
 */
static uint64_t *idx_put(struct perflib_store *map, const struct idx_ref *r, uint64_t e)
{
	uint64_t zero;
	uint32_t j, tries;
	int b;

	for (tries = 0; tries < 4; tries++) {
		b = idx_nr_buckets(r) > 1 && idx_free(r, 1) > idx_free(r, 0);
		for (j = 0; j < PERFLIB_IDX_BUCKET; j++) {
			zero = 0;
			if (__atomic_compare_exchange_n(idx_at(r, b, j), &zero, e, false,
							__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
				return idx_at(r, b, j);
		}
		if (!idx_free(r, 0) && !idx_free(r, idx_nr_buckets(r) - 1))
			idx_sweep(map, r);
	}
	return NULL;
}

/*
 * the entry of slot @id, claimed at generation @gen, under @key in its leader's table:
 * where it went (the entry in *@ret_e), or NULL (both buckets full of current entries, or
 * the table not mapped)
 */
static uint64_t *slot_entry_put(struct perflib_store *map, uint32_t id, uint32_t gen,
				const struct perflib_index_key *key, uint64_t *ret_e)
{
	struct idx_ref r;

	if (!idx_ref(map, perflib_slot_id_class(id), perflib_slot_leader(map, id), key, &r))
		return NULL;
	*ret_e = perflib_idx_entry(r.p.tag, gen, perflib_slot_id_index(id));
	return idx_put(map, &r, *ret_e);
}

/*
 * Index claimed slot @id (word @w) under @key. -EEXIST: a live instance holds it (or, for a
 * single-instance set, any instance); -EBUSY: another creator of it did not decide in
 * time; -ENOSPC: both of the key's buckets are full of current entries.
 */
static int slot_index(struct perflib_ctrset *set, uint32_t id, uint64_t w,
		      const struct perflib_index_key *key)
{
	uint64_t e, *at = slot_entry_put(set->map, id, perflib_word_gen(w), key, &e);
	int err;

	if (!at) {
		pr_warn("index of size class %u of a counter set: both buckets of a key full\n",
			perflib_slot_id_class(id));
		return -ENOSPC;
	}
	err = key_unique(set->map, id, key);
	if (err)
		__atomic_compare_exchange_n(at, &e, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	return err;
}

int perflib_index_put(struct perflib_store *map, uint32_t id, uint32_t gen,
		      const struct perflib_index_key *key)
{
	uint64_t e;

	if (!map->writable)
		return -EBADF;
	return slot_entry_put(map, id, gen, key, &e) ? 0 : -ENOSPC;
}

int perflib_index_lookup(struct perflib_store *map, uint32_t cls,
			 const struct perflib_index_key *key, struct perflib_index_val *ret_val)
{
	uint32_t k, n = perflib_store_nr_segs(map, cls), pos;
	struct idx_ref r;
	struct idx_hit h;

	for (k = 0; k < n; k = perflib_idx_next(k)) {
		pos = 0;
		if (idx_ref(map, cls, k, key, &r) &&
		    idx_next_match(map, &r, &pos, key, UINT32_MAX, &h) > 0) {
			ret_val->slot = perflib_slot_id_index(h.id);
			ret_val->gen = perflib_idx_entry_gen(h.e);
			return 0;
		}
	}
	return -ENOENT;
}

uint64_t perflib_index_count(struct perflib_store *map)
{
	struct idx_ref r = {0};
	struct idx_hit h;
	uint64_t n = 0, i, *ep, e;

	for (r.cls = 0; r.cls < map->nr_classes; r.cls++) {
		for (r.k = 0; r.k < perflib_store_nr_segs(map, r.cls);
		     r.k = perflib_idx_next(r.k)) {
			r.t = perflib_idx_table(map, r.cls, r.k, &r.nb);
			for (i = 0; r.t && i < r.nb * PERFLIB_IDX_BUCKET; i++) {
				ep = r.t + i;
				e = __atomic_load_n(ep, __ATOMIC_ACQUIRE);
				n += e && idx_entry(map, &r, ep, e, &h) > 0;
			}
		}
	}
	return n;
}

int perflib_instance_create(struct perflib_provider *prov, const GUID *CounterSetGuid,
			    const WCHAR *Name, ULONG Id, PPERF_COUNTERSET_INSTANCE *ret_inst,
			    uint32_t *ret_idx)
{
	struct perflib_index_key key;
	struct perflib_ctrset *set;
	void *_Atomic *refs;
	uint64_t start, w;
	uint32_t pid, idx;
	size_t len;
	int err;

	if (!prov || !CounterSetGuid || !Name)
		return -EINVAL;
	pthread_mutex_lock(&prov->lock);
	set = perflib_ctrset_find(prov, CounterSetGuid);
	if (!set) {
		err = -ENOENT;
		goto out;
	}
	len = perflib_wcsnlen(Name, set->map->info->name_max);
	if (len + 1 > set->map->info->name_max) {
		pr_debug("instance name longer than the counter set's %u units\n",
			 set->map->info->name_max - 1);
		err = -EINVAL;
		goto out;
	}
	perflib_self(&pid, &start);
	/* the size class of the name's length */
	err = slot_claim(set, perflib_info_class_of(set->map->info, len), pid, start, &idx, &w);
	if (err)
		goto out;
	slot_fill(set, idx, Name, len, Id);
	refs = perflib_ctrset_refs(set, idx);
	if (refs) {
		uint32_t k;

		/* a new instance has no addresses yet: consumers get ERROR_NO_DATA */
		for (k = 0; k < set->nr_counters; k++)
			atomic_store_explicit(&refs[k], NULL, memory_order_relaxed);
	}
	slot_key(set->map->info, Name, len, Id, pid, &key);
	err = slot_index(set, idx, w, &key);
	if (err) {
		slot_release(set->map, idx, w);
		owner_unmark(set, idx);
		/* a second instance of a single-instance set is a bad parameter, as for .NET */
		if (err == -EEXIST && perflib_key_singleton(set->instance_type))
			err = -EINVAL;
		goto out;
	}
	/* publish: name and id are in place before readers can see LIVE */
	if (!perflib_slot_publish(perflib_slot(set->map, idx), w)) {
		/* taken by a reaper that thought this process dead: it frees the slot */
		pr_warn("slot %#x was taken while being created\n", idx);
		err = -EBUSY;
		goto out;
	}
	atomic_store_explicit(perflib_ctrset_owned(set, idx), 1, memory_order_release);
	set->nr_live++;
	pthread_mutex_unlock(&prov->lock);
	*ret_inst = perflib_ctrset_block(set, idx);
	if (ret_idx)
		*ret_idx = idx;
	return 0;
out:
	pthread_mutex_unlock(&prov->lock);
	return err;
}

PPERF_COUNTERSET_INSTANCE PerfCreateInstance(HANDLE ProviderHandle, const GUID *CounterSetGuid,
					     const WCHAR *Name, ULONG Id)
{
	PPERF_COUNTERSET_INSTANCE inst;
	int err;

	err = perflib_instance_create(perflib_provider_lookup(ProviderHandle), CounterSetGuid, Name,
				      Id, &inst, NULL);
	if (err) {
		SetLastError(perflib_win32_error(err));
		return NULL;
	}
	return inst;
}

/* retire live slot @idx of @set (caller holds the provider lock and owns the slot) */
void perflib_instance_retire(struct perflib_ctrset *set, uint32_t idx)
{
	uint8_t *slot = perflib_slot(set->map, idx);
	uint64_t w = perflib_slot_word(slot), cw;
	uint64_t start, bit;
	uint32_t pid, cls;

	atomic_store_explicit(perflib_ctrset_owned(set, idx), 0, memory_order_release);
	set->nr_live--;
	perflib_self(&pid, &start);
	/* hide from readers first, then drop the key, then free; only our own live slot */
	if (!perflib_slot_hide(slot, w, pid, &cw)) {
		pr_warn("slot %#x changed under its owner (word %#llx)\n", idx,
			(unsigned long long)w);
		return;
	}
	slot_unindex(set->map, idx, w);
	slot_release(set->map, idx, cw);
	owner_unmark(set, idx);
	/*
	 * a live word emptied, or 64 more deletes: the class's top segments may be given back
	 * (a look at the live bitmaps; rarely more)
	 */
	cls = perflib_slot_id_class(idx);
	if ((!__atomic_load_n(perflib_live_word(set->map, idx, &bit), __ATOMIC_RELAXED) ||
	     !(++set->cls[cls].deletes % 64)) &&
	    perflib_store_shrinkable(set->map, cls))
		perflib_store_shrink(set->map, cls);
}

struct perflib_ctrset *perflib_instance_lookup(struct perflib_provider *prov, const void *inst,
					       uint32_t *ret_idx)
{
	int64_t idx = -1;
	struct perflib_ctrset *set = perflib_provider_set_of(prov, inst, &idx);

	if (set)
		*ret_idx = (uint32_t)idx;
	return set;
}

ULONG PerfDeleteInstance(HANDLE Provider, PPERF_COUNTERSET_INSTANCE InstanceBlock)
{
	struct perflib_provider *prov = perflib_provider_lookup(Provider);
	struct perflib_ctrset *set;
	uint32_t idx;

	if (!prov || !InstanceBlock)
		return ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&prov->lock);
	set = perflib_instance_lookup(prov, InstanceBlock, &idx);
	if (!set) {
		pthread_mutex_unlock(&prov->lock);
		return ERROR_INVALID_PARAMETER;
	}
	perflib_instance_retire(set, idx);
	pthread_mutex_unlock(&prov->lock);
	return ERROR_SUCCESS;
}

PPERF_COUNTERSET_INSTANCE PerfQueryInstance(HANDLE ProviderHandle, const GUID *CounterSetGuid,
					    const WCHAR *Name, ULONG Id)
{
	struct perflib_provider *prov = perflib_provider_lookup(ProviderHandle);
	struct perflib_ctrset *set;
	const struct perflib_info *info;
	PERF_COUNTERSET_INSTANCE *blk;
	uint32_t i, cls;
	size_t len;

	if (!prov || !CounterSetGuid || !Name) {
		SetLastError(ERROR_INVALID_PARAMETER);
		return NULL;
	}
	pthread_mutex_lock(&prov->lock);
	set = perflib_ctrset_find(prov, CounterSetGuid);
	if (!set)
		goto out;
	info = set->map->info;
	len = perflib_wcsnlen(Name, info->name_max);
	/* the class of the name's length holds it, if anything does */
	cls = perflib_info_class_of(info, len);
	/* only this provider's own instances: the process-local table says which */
	for (i = 0; i < perflib_ctrset_slots(set, cls) && len < info->name_max; i++) {
		if (!atomic_load_explicit(&set->cls[cls].owned[i], memory_order_relaxed))
			continue;
		blk = perflib_ctrset_block(set, perflib_slot_id_make(cls, i));
		/* offsets come from the private info copy, never from the shared block */
		if (blk->InstanceId == Id &&
		    !memcmp((uint8_t *)blk + (info->name_offset - PERFLIB_BLOCK_OFFSET), Name,
			    (len + 1) * 2)) {
			pthread_mutex_unlock(&prov->lock);
			return blk;
		}
	}
out:
	pthread_mutex_unlock(&prov->lock);
	SetLastError(ERROR_NOT_FOUND);
	return NULL;
}
