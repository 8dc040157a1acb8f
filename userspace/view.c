// SPDX-License-Identifier: MIT
/*
 * view.c - what one process sees of a counter set's storage: the control word (class 0's
 * s0/live: segments published and retired per class), and the refresh that brings this
 * process's view of each class to it, opening what other processes grew and dropping what
 * they retired (docs/ARCHITECTURE.md, "The protocol as a state machine").
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
 * is segment @k of class @cls still the map this process opened? 1 yes, 0 no (its pin is
 * gone or another map), -errno when that cannot be told (the caller must not guess: a
 * segment wrongly kept is a retired map claimed in, one wrongly dropped is this process's
 * instances turned to zero pages)
 */
static int seg_same(const struct perflib_store *map, uint32_t cls, uint32_t k)
{
	char sdir[PATH_MAX + 48];
	uint32_t id;
	int fd, err;

	err = perflib_seg_path(map, cls, k, sdir, sizeof(sdir));
	if (err)
		return err;
	fd = perflib_pin_open(sdir, "data", true);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	id = perflib_map_id(fd);
	close(fd);
	if (!id)
		return -EIO;
	return id == perflib_seg_at(&map->cls[cls], k)->data_id;
}

/*
 * the control word at word @key of s0/live map @fd: the epochs first, then the whole word
 * (two batch lookups). A batch copies in key order, which puts nr_segs before epoch; read
 * that way, a retirement landing between the two gives an old count with the new epoch, and
 * the refresh would keep, as current, a segment being retired (tests/model/retire.pml).
 */
static int ctl_copy(int fd, __u32 key, struct perflib_ctl *ret)
{
	uint32_t first = (uint32_t)(offsetof(struct perflib_ctl, epoch) / 8);
	uint32_t last =
		(uint32_t)((offsetof(struct perflib_ctl, epoch) + sizeof(ret->epoch) - 1) / 8);
	uint64_t words[PERFLIB_CTL_WORDS];
	uint32_t epoch[PERFLIB_MAX_CLASSES];
	int err;

	err = perflib_array_copy(fd, key + first, last - first + 1, 8, (uint8_t *)words);
	if (err)
		return err;
	memcpy(epoch, (uint8_t *)words + offsetof(struct perflib_ctl, epoch) - first * 8,
	       sizeof(epoch));
	err = perflib_array_copy(fd, key, PERFLIB_CTL_WORDS, 8, (uint8_t *)ret);
	if (err)
		return err;
	memcpy(ret->epoch, epoch, sizeof(epoch));
	return ret->magic == PERFLIB_CTL_MAGIC ? 0 : -EBADMSG;
}

int perflib_ctl_read(int live_fd, struct perflib_ctl *ret)
{
	struct bpf_map_info mi;
	__u32 len = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	if (bpf_obj_get_info_by_fd(live_fd, &mi, &len))
		return -errno;
	if (mi.type != BPF_MAP_TYPE_ARRAY || mi.key_size != 4 || mi.value_size != 8 ||
	    mi.max_entries <= PERFLIB_CTL_WORDS)
		return -EBADMSG;
	return ctl_copy(live_fd, mi.max_entries - PERFLIB_CTL_WORDS, ret);
}

int perflib_store_ctl_read(const struct perflib_store *map, struct perflib_ctl *ret)
{
	const struct perflib_ctl *c = map->ctl;
	uint32_t i;

	if (!c) {
		/* an unmapped reader: the last words of class 0's s0/live */
		int fd = perflib_seg_at(&map->cls[0], 0)->live_fd;

		if (fd < 0)
			return -EBADF;
		return ctl_copy(fd, perflib_ctl_word(map->cls[0].seg0, map->info->nr_procs), ret);
	}
	memset(ret, 0, sizeof(*ret));
	ret->magic = __atomic_load_n(&c->magic, __ATOMIC_RELAXED);
	ret->exit_id = __atomic_load_n(&c->exit_id, __ATOMIC_ACQUIRE);
	for (i = 0; i < PERFLIB_MAX_CLASSES; i++) {
		ret->epoch[i] = __atomic_load_n(&c->epoch[i], __ATOMIC_ACQUIRE);
		ret->nr_segs[i] = __atomic_load_n(&c->nr_segs[i], __ATOMIC_ACQUIRE);
		ret->keep[i] = __atomic_load_n(&c->keep[i], __ATOMIC_RELAXED);
	}
	return ret->magic == PERFLIB_CTL_MAGIC ? 0 : -EBADMSG;
}

/* segments of class @cls published in the control word @ctl, and its retirements */
static void ctl_state(const struct perflib_store *map, const struct perflib_ctl *ctl, uint32_t cls,
		      uint32_t *ret_nr, uint32_t *ret_epoch)
{
	*ret_epoch = ctl->epoch[cls];
	*ret_nr = ctl->nr_segs[cls];
	if (*ret_nr > map->cls[cls].max_segs)
		*ret_nr = map->cls[cls].max_segs; /* garbage in ctl: the info bounds it */
}

int perflib_store_ctl_nr(const struct perflib_store *map, uint32_t cls, uint32_t *ret_nr)
{
	struct perflib_ctl ctl;
	uint32_t epoch;
	int err;

	err = perflib_store_ctl_read(map, &ctl);
	if (!err)
		ctl_state(map, &ctl, cls, ret_nr, &epoch);
	return err;
}

/*
 * Segments were retired since this process last looked (ctl.epoch moved; @want is
 * ctl.nr_segs[cls] in the same read): zero pages for those at or past @want and for any
 * whose pin is another map now (retired, then grown again: opened anew by the caller).
 * -errno when a pin could not be checked (nothing dropped past it). seg_lock held.
 */
static int class_retired(struct perflib_store *map, uint32_t cls, uint32_t want)
{
	struct perflib_class *c = &map->cls[cls];
	uint32_t nr = perflib_store_nr_segs(map, cls), k, bad;
	int same = 1;

	for (bad = 1; bad < nr && bad < want; bad++) {
		same = seg_same(map, cls, bad);
		if (same <= 0)
			break;
	}
	if (same < 0)
		return same;
	if (bad >= nr)
		return 0;
	/* readers of nr_segs stop at the retired ones before they turn to zero pages */
	atomic_store_explicit(&c->nr_segs, bad, memory_order_release);
	for (k = nr; k-- > bad;)
		perflib_seg_blank(map, cls, k);
	return 0;
}

/* segment @k of class @cls opened, then found not to be the one published: none of it kept */
static void seg_drop(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	if (map->mapped)
		perflib_seg_blank(map, cls, k); /* zero pages where it was mapped */
	else
		perflib_seg_close(map, cls, k);
}

/* ctl.epoch[@cls] now (one batch lookup for an unmapped reader) */
static int ctl_epoch(const struct perflib_store *map, uint32_t cls, uint32_t *ret_epoch)
{
	struct perflib_ctl ctl;
	uint32_t nr;
	int err = perflib_store_ctl_read(map, &ctl);

	if (!err)
		ctl_state(map, &ctl, cls, &nr, ret_epoch);
	return err;
}

/* is the set's registration gone from its directory (unregistered while open)? */
static bool set_removed(const struct perflib_store *map)
{
	char dir[PATH_MAX], path[PATH_MAX + 8];
	struct stat st;

	if (perflib_store_dir(&map->guid, dir, sizeof(dir)))
		return false;
	snprintf(path, sizeof(path), "%s/info", dir);
	return stat(path, &st) && errno == ENOENT;
}

/*
 * Bring class @cls's view to control word @ctl: drop what was retired, open what was
 * published. -EAGAIN when a retirement moved the epoch meanwhile (a pin gone, or maps opened
 * that may straddle two incarnations of a segment): the caller reads the control word again.
 *
 * The view is {segments 0..nr_segs-1, epoch}: every segment in it was the published one
 * when ctl.epoch[cls] was c->epoch. A retirement moves the epoch before it removes the pins,
 * so a segment opened with the epoch unchanged from before its pins were opened to after is
 * the one published (its data and live maps of one incarnation); and a claimer that finds
 * the epoch still c->epoch after setting its live bit claims in the map published now, never
 * in one retired and grown again under the same count (instance.c claim_scan).
 */
static int class_refresh(struct perflib_store *map, const struct perflib_ctl *ctl, uint32_t cls)
{
	struct perflib_class *c = &map->cls[cls];
	uint32_t want, epoch, now, k;
	int err = 0;

	ctl_state(map, ctl, cls, &want, &epoch);
	if (want <= perflib_store_nr_segs(map, cls) &&
	    epoch == __atomic_load_n(&c->epoch, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&map->seg_lock);
	if (epoch != c->epoch) {
		err = class_retired(map, cls, want);
		if (err)
			goto out;
		__atomic_store_n(&c->epoch, epoch, __ATOMIC_RELEASE);
	}
	for (k = perflib_store_nr_segs(map, cls); k < want; k++) {
		err = perflib_seg_open(map, cls, k);
		if (!err || err == -ENOENT) {
			int e = ctl_epoch(map, cls, &now);

			if (e) {
				if (!err)
					seg_drop(map, cls, k);
				err = e;
			} else if (now != epoch) {
				/* retired meanwhile: what was opened may be the old maps, or half */
				if (!err)
					seg_drop(map, cls, k);
				err = -EAGAIN;
			} else if (err && set_removed(map)) {
				/* unregistered (unlodctr) while open: -ENOENT, as for any set gone */
			} else if (err) {
				/* published and not retired, yet not pinned: removed by hand */
				pr_warn("counter set storage damaged: segment %u of size class "
					"%u is published but not pinned\n",
					k, cls);
				err = -EBADMSG;
			}
		}
		if (err)
			break;
		/* readers of nr_segs see the segment's fds and mappings */
		atomic_store_explicit(&c->nr_segs, k + 1, memory_order_release);
	}
out:
	pthread_mutex_unlock(&map->seg_lock);
	return err;
}

/* the view of every class brought to the control word; -EAGAIN: it moved meanwhile */
static int refresh_once(struct perflib_store *map)
{
	struct perflib_ctl ctl;
	uint32_t c;
	int err, e, again = 0;

	/* one read of the control word for every class (lookups for an unmapped reader) */
	err = perflib_store_ctl_read(map, &ctl);
	if (err)
		return err;
	for (c = 0; c < map->nr_classes; c++) {
		e = class_refresh(map, &ctl, c);
		if (e == -EAGAIN)
			again = e;
		else if (e && !err)
			err = e;
	}
	return err ? err : again;
}

/*
 * With the set's lock held nothing is grown or retired, so one pass settles. Without it,
 * every -EAGAIN is a retirement another process made meanwhile: a few passes, then one with
 * the lock, which always settles.
 */
#define REFRESH_TRIES 8

static int store_refresh(struct perflib_store *map, bool locked)
{
	int err = -EAGAIN, lock, tries;

	for (tries = 0; tries < REFRESH_TRIES && err == -EAGAIN; tries++)
		err = refresh_once(map);
	if (err != -EAGAIN || locked)
		return err;
	lock = perflib_store_lock(map);
	if (lock < 0)
		return lock;
	err = refresh_once(map);
	perflib_store_unlock(lock);
	return err;
}

int perflib_store_refresh(struct perflib_store *map)
{
	return store_refresh(map, false);
}

int perflib_store_refresh_held(struct perflib_store *map)
{
	return store_refresh(map, true);
}
