// SPDX-License-Identifier: MIT
/*
 * index.c - the cross-process unique index of instance keys, and giving a slot back (its
 * entries go with it): the key of a name and id in its set's scope, each leader's table of
 * entries (put, look up, sweep stale ones), the uniqueness check a create makes after its
 * entry is in, and the release and lazy reaping of slots.
 *
 * Invariants:
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
 */
#include <sched.h>
#include <string.h>

#include <bpf/bpf.h>

#include "internal.h"

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
void perflib_slot_key(const struct perflib_info *info, const WCHAR *name, size_t len, uint32_t id,
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

	perflib_slot_key(info, name, len, blk->InstanceId, perflib_slot_key_pid(stamp, w), key);
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
void perflib_slot_unindex(struct perflib_store *map, uint32_t id, uint64_t w)
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
	perflib_slot_unindex(map, i, w);
	perflib_slot_release(map, i, cw);
	pr_debug("reaped slot %#x of a dead process\n", i);
	return 1;
}

/* give a claimed slot back */
void perflib_slot_release(struct perflib_store *map, uint32_t i, uint64_t w)
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
int perflib_slot_index(struct perflib_ctrset *set, uint32_t id, uint64_t w,
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
