// SPDX-License-Identifier: MIT
/*
 * instance.c - PerfCreateInstance, PerfDeleteInstance, PerfQueryInstance: claiming slots
 * (without the set's lock in the common case, with it when the class is full or a segment is
 * retired under the claim), filling them, and the lazy reaping of dead processes' slots in
 * a full class. The index of keys and the release of slots are index.c's.
 *
 * Invariants:
 *  - a slot is claimed by CAS of its word FREE -> CLAIMED with the claimer's pid;
 *  - the live bit of a slot is set once the slot is claimed and cleared before it is freed,
 *    so readers that visit only set bits miss no instance; only a slot's holder touches its
 *    bit, and a claim refused or lost never leaves it set on a FREE slot (slot_try);
 *  - a claim is good only in the segment map published now: its bit, a full fence, then
 *    ctl.nr_segs and ctl.epoch checked (docs/ARCHITECTURE.md, "The protocol as a state
 *    machine").
 */
#include <string.h>

#include "internal.h"

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
	perflib_slot_release(map, id, cw);
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
	/* the per-CPU parts too (a release zeroed them already: this is the creator's word) */
	if (ic->pcpu_offset)
		memset(slot + ic->pcpu_offset, 0, ic->slot_size - ic->pcpu_offset);
	blk->CounterSetGuid = set->guid;
	blk->InstanceId = id;
	blk->InstanceNameOffset = (uint32_t)sizeof(*blk) + 8 * info->nr_counters;
	blk->InstanceNameSize = name_bytes;
	blk->dwSize = (blk->InstanceNameOffset + name_bytes + 7) & ~7u;
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
	perflib_slot_key(set->map->info, Name, len, Id, pid, &key);
	err = perflib_slot_index(set, idx, w, &key);
	if (err) {
		perflib_slot_release(set->map, idx, w);
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
	perflib_slot_unindex(set->map, idx, w);
	perflib_slot_release(set->map, idx, cw);
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
