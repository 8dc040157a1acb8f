// SPDX-License-Identifier: MIT
/*
 * resize.c - how a counter set's storage changes size, one process at a time under the set's
 * lock (perflib_store_lock): growing a size class by a segment (made, pinned in a private
 * directory, renamed to s<k>, entered in the outer maps, then counted in ctl.nr_segs), and
 * giving back the empty segments at its top (retirement). The protocol with the claimers that
 * run without the lock is docs/ARCHITECTURE.md's "The protocol as a state machine", checked
 * by tests/model/retire.pml.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "internal.h"

/*
 * enter published segment @k of class @cls in the outer maps and ctl (idempotent). The kernel
 * makes every update of an array of maps wait for an RCU grace period (no program still
 * runs with the old entry): two waits per segment. (Running the updates in threads shares
 * the waits and halves the cost of a grow, but a thread made in a child forked from a
 * threaded process can hang under the sanitizers: not worth it for a cost paid once per
 * segment, four times per doubling of the set.)
 */
static int seg_publish(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	struct perflib_seg_maps m = {{-1, -1}};
	char sdir[PATH_MAX + 48];
	uint32_t cur = k;
	__u32 key = k;
	int err, outer, j;

	err = perflib_seg_path(map, cls, k, sdir, sizeof(sdir));
	if (err)
		return err;
	for (j = 0; j < PERFLIB_SEG_NR; j++) {
		m.fd[j] = perflib_pin_open(sdir, perflib_seg_pins[j], false);
		outer = perflib_store_outer_fd(map, cls, j);
		if (m.fd[j] < 0 || outer < 0) {
			err = m.fd[j] < 0 ? m.fd[j] : outer;
			goto out;
		}
		if (bpf_map_update_elem(outer, &key, &m.fd[j], BPF_ANY)) {
			err = -errno;
			goto out;
		}
	}
	/* from k to k + 1 only: a later segment may already be there */
	__atomic_compare_exchange_n(&map->ctl->nr_segs[cls], &cur, k + 1, false, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
out:
	perflib_seg_maps_close(&m);
	return err;
}

/* the pins' owner, group and mode: those of the set (perflib_store_pin_stat) */
static int set_pin_opts(const char *dir, struct perflib_pin_opts *opts)
{
	struct stat st;
	int err = perflib_store_pin_stat(dir, &st);

	if (err)
		return err;
	memset(opts, 0, sizeof(*opts));
	opts->mode = st.st_mode & 0666;
	opts->uid = st.st_uid;
	opts->gid = st.st_gid;
	return 0;
}

/* grow class @cls to k + 1 segments, the set's lock held */
static int grow_locked(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	struct perflib_seg_maps m = {{-1, -1}};
	struct perflib_pin_opts opts;
	char dir[PATH_MAX], tmp[PATH_MAX + 64], sdir[PATH_MAX + 48];
	static _Atomic unsigned int seq;
	struct stat st;
	uint32_t nr;
	int err;

	err = perflib_store_ctl_nr(map, cls, &nr);
	if (err)
		return err;
	/* grown by another process meanwhile, or this one's view is behind a retirement */
	if (nr != k)
		return 0;
	if (k >= map->cls[cls].max_segs)
		return -ENOSPC;
	err = perflib_store_dir(&map->guid, dir, sizeof(dir));
	if (!err)
		err = set_pin_opts(dir, &opts);
	if (!err)
		err = perflib_seg_path(map, cls, k, sdir, sizeof(sdir));
	if (err)
		return err;
	/* a directory there: one a grower or retirer killed midway left, whole (renamed) */
	if (stat(sdir, &st)) {
		err = perflib_seg_create(map->info, cls, k, &m);
		if (err) {
			pr_debug("cannot grow size class %u of counter set to %u segments: %s\n",
				 cls, k + 1, strerror(-err));
			return err == -ENOMEM || err == -E2BIG ? -ENOSPC : err;
		}
		snprintf(tmp, sizeof(tmp), "%s/tmp-c%us%u-%d-%u", dir, cls, k, (int)getpid(),
			 seq++);
		err = perflib_seg_pin(&m, tmp, &opts);
		perflib_seg_maps_close(&m);
		if (!err && rename(tmp, sdir) && errno != EEXIST && errno != ENOTEMPTY)
			err = -errno;
		/* failed: nothing of it stays */
		perflib_remove_dir(tmp);
		if (err)
			return err;
	}
	return seg_publish(map, cls, k);
}

int perflib_store_grow_held(struct perflib_store *map, uint32_t cls)
{
	uint32_t nr;
	int err;

	if (!map->writable || !map->ctl)
		return -EBADF;
	err = perflib_store_ctl_nr(map, cls, &nr);
	if (!err)
		err = grow_locked(map, cls, nr);
	if (!err)
		err = perflib_store_refresh_held(map);
	return err;
}

int perflib_store_reserve(struct perflib_store *map, uint32_t cls, uint64_t slots)
{
	uint8_t keep, nr;
	int lock, err;

	if (!map->writable || !map->ctl)
		return -EBADF;
	lock = perflib_store_lock(map);
	if (lock < 0)
		return lock;
	err = perflib_store_refresh_held(map);
	while (!err && perflib_store_slots(map, cls) < slots)
		err = perflib_store_grow_held(map, cls);
	if (!err) {
		/* under the lock: no retirer sees the new segments before they are kept */
		nr = (uint8_t)perflib_store_nr_segs(map, cls);
		keep = __atomic_load_n(&map->ctl->keep[cls], __ATOMIC_RELAXED);
		while (keep < nr &&
		       !__atomic_compare_exchange_n(&map->ctl->keep[cls], &keep, nr, false,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
	}
	perflib_store_unlock(lock);
	return err;
}

/* ---- retirement: segments given back ------------------------------------------------- */

/* does segment @k of class @cls hold no claimed or live slot (its live bitmap all zero)? */
static bool seg_empty(const struct perflib_store *map, uint32_t cls, uint32_t k)
{
	const struct perflib_seg *s = perflib_seg_at(&map->cls[cls], k);
	size_t i, n = s->live_len / 8;

	for (i = 0; i < n; i++) {
		if (__atomic_load_n(&s->live[i], __ATOMIC_RELAXED))
			return false;
	}
	return true;
}

/* are the segments below @k of class @cls at most 3/4 full? (else @k is needed again soon) */
static bool below_roomy(const struct perflib_store *map, uint32_t cls, uint32_t k)
{
	const struct perflib_class *c = &map->cls[cls];
	uint64_t live = 0, room = perflib_seg_first(k, c->seg0);
	uint32_t j;
	size_t i;

	for (j = 0; j < k; j++) {
		const struct perflib_seg *s = perflib_seg_at(c, j);

		for (i = 0; i < s->live_len / 8; i++)
			live += (uint64_t)__builtin_popcountll(
				__atomic_load_n(&s->live[i], __ATOMIC_RELAXED));
	}
	return live * 4 <= room * 3;
}

bool perflib_store_shrinkable(struct perflib_store *map, uint32_t cls)
{
	uint32_t nr, k;

	if (!map->writable || !map->mapped || !map->ctl)
		return false;
	/*
	 * the view behind the control word (another process grew or retired since this one
	 * last looked): brought to it first, else the last delete of a set made in a view
	 * that was behind would leave the top segments to nobody
	 */
	if (__atomic_load_n(&map->ctl->nr_segs[cls], __ATOMIC_ACQUIRE) !=
		    perflib_store_nr_segs(map, cls) ||
	    __atomic_load_n(&map->ctl->epoch[cls], __ATOMIC_ACQUIRE) !=
		    __atomic_load_n(&map->cls[cls].epoch, __ATOMIC_ACQUIRE))
		perflib_store_refresh(map);
	nr = perflib_store_nr_segs(map, cls);
	k = nr - 1;
	if (nr < 2 || k < __atomic_load_n(&map->ctl->keep[cls], __ATOMIC_RELAXED))
		return false;
	if (__atomic_load_n(&map->ctl->nr_segs[cls], __ATOMIC_ACQUIRE) != nr)
		return false;
	/*
	 * our delete cleared its live bit before this look, and another process's delete
	 * did the same before its own: whichever looks last sees both bits clear
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return seg_empty(map, cls, k) && below_roomy(map, cls, k);
}

/* take segment @k of class @cls out of the outer maps (each update waits for the programs) */
static int seg_unpublish(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	__u32 key = k;
	int j, outer;

	for (j = 0; j < PERFLIB_SEG_NR; j++) {
		outer = perflib_store_outer_fd(map, cls, j);
		if (outer < 0)
			return outer;
		if (bpf_map_delete_elem(outer, &key) && errno != ENOENT)
			return -errno;
	}
	return 0;
}

/*
 * Retire top segment @k of class @cls (the set's lock held): 1 if retired, 0 if it is in use
 * after all, -errno. Claimers set a slot's live bit, then check that ctl.nr_segs still
 * covers its segment (instance.c); here nr_segs goes down first and the bits are looked at
 * after: one of the two sees the other. Programs claim in the segments the outer maps hold:
 * once the segment is out of them (the kernel waits for the programs running), none does.
 */
static int seg_retire(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	char dir[PATH_MAX], sdir[PATH_MAX + 48], tmp[PATH_MAX + 64];
	static _Atomic unsigned int seq;
	uint32_t cur = k + 1;
	int err;

	if (!__atomic_compare_exchange_n(&map->ctl->nr_segs[cls], &cur, k, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_RELAXED))
		return 0;
	err = seg_unpublish(map, cls, k);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (err || !seg_empty(map, cls, k)) {
		/* a claim came first: published again as it was (outer maps, then nr_segs) */
		seg_publish(map, cls, k);
		return err;
	}
	/*
	 * Decided. Other processes drop it at their next refresh; the epoch moves before the
	 * pins go, so that a segment k made anew later (after a retirer killed past this point)
	 * always comes with an epoch its users have not seen.
	 */
	__atomic_fetch_add(&map->ctl->epoch[cls], 1, __ATOMIC_SEQ_CST);
	/* unpinned in one step (a retirer killed here leaves a whole directory, or none) */
	err = perflib_store_dir(&map->guid, dir, sizeof(dir));
	if (!err)
		err = perflib_seg_path(map, cls, k, sdir, sizeof(sdir));
	if (!err) {
		snprintf(tmp, sizeof(tmp), "%s/tmp-gone-c%us%u-%d-%u", dir, cls, k, (int)getpid(),
			 seq++);
		if (rename(sdir, tmp) == 0)
			perflib_remove_dir(tmp);
		else
			perflib_remove_dir(sdir);
	}
	/* this process drops it as every other does: at its next refresh (the epoch moved) */
	return 1;
}

int perflib_store_shrink(struct perflib_store *map, uint32_t cls)
{
	int lock, err = 0, n = 0;

	if (!map->writable || !map->mapped || !map->ctl)
		return -EBADF;
	lock = perflib_store_lock(map);
	if (lock < 0)
		return lock;
	/* from the top down, as long as the top is empty and the rest has room (the refresh
	 * drops what the last turn retired) */
	for (;;) {
		err = perflib_store_refresh_held(map);
		if (err || !perflib_store_shrinkable(map, cls))
			break;
		err = seg_retire(map, cls, perflib_store_nr_segs(map, cls) - 1);
		if (err <= 0)
			break;
		n++;
	}
	perflib_store_unlock(lock);
	return err < 0 ? err : n;
}
