// SPDX-License-Identifier: MIT
/*
 * segment.c - how a counter set grows: in each size class, segments of slots, each a data
 * map and a live map (bitmap, owner summaries, and in a group's leader the group's index
 * table) pinned in <set>/[c<c>]s<k>/, published in the control word (class 0's s0/live)
 * and the class's outer maps, and mapped at their fixed place in the class's range
 * (layout.h): by readers whole, by providers by chunks as they need them
 * (perflib_slot_map); the empty ones at the top given back.
 *
 * Growing: the process that finds no free slot creates segment k's maps, pins them in a
 * private directory and renames it to s<k>; a loser of that race removes its copy. Then
 * whoever sees s<k> enters it in the outer maps and moves ctl.nr_segs from k to k + 1, so a
 * grower that dies after the rename only delays the next one. Readers open the segments
 * below ctl.nr_segs[c] (perflib_store_refresh), so they see new storage without reopening.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "internal.h"

const char *const perflib_seg_pins[PERFLIB_SEG_NR] = {"data", "live"};
const char *const perflib_outer_pins[PERFLIB_SEG_NR] = {"segs", "lives"};

void perflib_outer_pin(uint32_t cls, int j, char *buf, size_t size)
{
	if (cls)
		snprintf(buf, size, "%s%u", perflib_outer_pins[j], cls);
	else
		snprintf(buf, size, "%s", perflib_outer_pins[j]);
}

void perflib_seg_dirname(uint32_t cls, uint32_t k, char *buf, size_t size)
{
	if (cls)
		snprintf(buf, size, "c%us%u", cls, k);
	else
		snprintf(buf, size, "s%u", k);
}

/* "<set dir>/[c<c>]s<k>" */
static int seg_dir(const struct perflib_store *map, uint32_t cls, uint32_t k, char *buf,
		   size_t size)
{
	char dir[PATH_MAX], name[32];
	int err = perflib_store_dir(&map->guid, dir, sizeof(dir));

	if (err)
		return err;
	perflib_seg_dirname(cls, k, name, sizeof(name));
	if ((size_t)snprintf(buf, size, "%s/%s", dir, name) >= size)
		return -ENAMETOOLONG;
	return 0;
}

void perflib_seg_maps_close(struct perflib_seg_maps *m)
{
	int j;

	for (j = 0; j < PERFLIB_SEG_NR; j++) {
		if (m->fd[j] >= 0)
			close(m->fd[j]);
		m->fd[j] = -1;
	}
}

int perflib_seg_create(const struct perflib_info *info, uint32_t cls, uint32_t k,
		       struct perflib_seg_maps *ret)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts);
	const struct perflib_info_class *ic = &info->classes[cls];
	uint32_t slots = (uint32_t)perflib_seg_slots(k, ic->seg0_slots);
	struct perflib_seg_maps m = {{-1, -1}};
	int btf_fd, key_id, val_id, err, j;

	err = perflib_data_btf(info, cls, &btf_fd, &key_id, &val_id);
	if (err)
		return err;
	mopts.btf_fd = btf_fd;
	mopts.btf_key_type_id = key_id;
	mopts.btf_value_type_id = val_id;
	/* BPF_F_INNER_MAP: segments of different sizes share the outer map's template */
	mopts.map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP;
	m.fd[PERFLIB_SEG_DATA] =
		bpf_map_create(BPF_MAP_TYPE_ARRAY, "pl_data", 4, ic->slot_size, slots, &mopts);
	close(btf_fd);
	memset(&mopts, 0, sizeof(mopts));
	mopts.sz = sizeof(mopts);
	/* bitmap, owner summaries and heads; a leader's index table (layout.h) */
	mopts.map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP;
	m.fd[PERFLIB_SEG_LIVE] = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pl_live", 4, 8,
						perflib_live_words(info, cls, k), &mopts);
	for (j = 0; j < PERFLIB_SEG_NR; j++) {
		if (m.fd[j] < 0) {
			err = -errno;
			perflib_seg_maps_close(&m);
			return err;
		}
	}
	*ret = m;
	return 0;
}

int perflib_seg_pin(const struct perflib_seg_maps *m, const char *dir,
		    const struct perflib_pin_opts *opts)
{
	int err, j;

	if (mkdir(dir, 0755))
		return -errno;
	for (j = 0, err = 0; j < PERFLIB_SEG_NR && !err; j++) {
		err = perflib_pin_one(m->fd[j], dir, perflib_seg_pins[j], opts);
	}
	if (!err && (opts->uid != (uid_t)-1 || opts->gid != (gid_t)-1) &&
	    chown(dir, opts->uid, opts->gid))
		err = -errno;
	return err;
}

/* where segment @k of class @cls sits in the set's range: its first slot's offset */
static size_t seg_offset(const struct perflib_store *map, uint32_t cls, uint32_t k)
{
	const struct perflib_class *c = &map->cls[cls];

	return (size_t)(c->data - (uint8_t *)map->vs.base) +
	       perflib_seg_first(k, c->seg0) * c->slot_size;
}

/* bytes of segment @k's slots of class @cls */
static size_t seg_bytes(const struct perflib_store *map, uint32_t cls, uint32_t k)
{
	const struct perflib_class *c = &map->cls[cls];

	return perflib_seg_slots(k, c->seg0) * c->slot_size;
}

static bool chunk_mapped(const struct perflib_seg *s, uint32_t j)
{
	return __atomic_load_n(&s->chunks[j / 64], __ATOMIC_ACQUIRE) >> (j % 64) & 1;
}

/* chunk @j of segment @k and its length (the last one may be shorter) */
static size_t chunk_len(const struct perflib_store *map, uint32_t cls, uint32_t k, uint32_t j)
{
	size_t all = seg_bytes(map, cls, k), at = (size_t)j * PERFLIB_CHUNK_BYTES;

	return all - at < PERFLIB_CHUNK_BYTES ? all - at : PERFLIB_CHUNK_BYTES;
}

static void chunk_unmap(struct perflib_store *map, uint32_t cls, uint32_t k, uint32_t j)
{
	perflib_vspace_unmap(&map->vs, seg_offset(map, cls, k) + (size_t)j * PERFLIB_CHUNK_BYTES,
			     chunk_len(map, cls, k, j));
}

static void chunk_blank(struct perflib_store *map, uint32_t cls, uint32_t k, uint32_t j)
{
	perflib_map_blank((uint8_t *)map->vs.base + seg_offset(map, cls, k) +
				  (size_t)j * PERFLIB_CHUNK_BYTES,
			  chunk_len(map, cls, k, j), map->writable);
}

/* @fn on every mapped chunk of a provider's segment @k */
static void chunks_each(struct perflib_store *map, uint32_t cls, uint32_t k,
			void (*fn)(struct perflib_store *, uint32_t, uint32_t, uint32_t))
{
	const struct perflib_seg *s = perflib_seg_at(&map->cls[cls], k);
	uint32_t j;

	for (j = 0; j < s->nr_chunks; j++) {
		if (chunk_mapped(s, j))
			fn(map, cls, k, j);
	}
}

uint8_t *perflib_slot_map(struct perflib_store *map, uint32_t id)
{
	struct perflib_class *c = &map->cls[perflib_slot_id_class(id)];
	uint32_t i = perflib_slot_id_index(id), k = perflib_seg_of(i, c->seg0), j, last;
	struct perflib_seg *s = perflib_seg_at(c, k);
	size_t off = (i - perflib_seg_first(k, c->seg0)) * c->slot_size;
	int err = 0;

	j = (uint32_t)(off / PERFLIB_CHUNK_BYTES);
	last = (uint32_t)((off + c->slot_size - 1) / PERFLIB_CHUNK_BYTES);
	if (!s->chunks || (chunk_mapped(s, j) && chunk_mapped(s, last)))
		return perflib_slot(map, id);
	pthread_mutex_lock(&map->seg_lock);
	for (; s->chunks && j <= last && !err; j++) {
		if (chunk_mapped(s, j))
			continue;
		if (!perflib_vspace_map(&map->vs,
					seg_offset(map, perflib_slot_id_class(id), k) +
						(size_t)j * PERFLIB_CHUNK_BYTES,
					chunk_len(map, perflib_slot_id_class(id), k, j), true,
					false, s->data_fd, (size_t)j * PERFLIB_CHUNK_BYTES)) {
			err = errno;
			if (err == EEXIST)
				pr_warn("cannot map a segment of a counter set: its address is "
					"taken\n");
			break;
		}
		__atomic_fetch_or(&s->chunks[j / 64], 1ULL << (j % 64), __ATOMIC_RELEASE);
	}
	/* all of it mapped: the mappings hold the map (fork() copies every fd kept) */
	if (s->chunks && s->data_fd >= 0) {
		for (j = 0; j < s->nr_chunks && chunk_mapped(s, j); j++)
			;
		if (j == s->nr_chunks) {
			close(s->data_fd);
			s->data_fd = -1;
		}
	}
	pthread_mutex_unlock(&map->seg_lock);
	if (err) {
		errno = err;
		return NULL;
	}
	return perflib_slot(map, id);
}

void perflib_seg_close(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	struct perflib_seg *s = perflib_seg_at(&map->cls[cls], k);
	struct perflib_seg_maps m = {{s->data_fd, s->live_fd}};

	const struct perflib_class *c = &map->cls[cls];

	/* its slots, or the zero pages a retirement left in their place */
	if (s->chunks)
		chunks_each(map, cls, k, chunk_unmap); /* a provider's chunks, or their blanks */
	else if (s->data_mapped || (s->blank && map->mapped))
		perflib_vspace_unmap(&map->vs, seg_offset(map, cls, k),
				     perflib_seg_slots(k, c->seg0) * c->slot_size);
	free(s->chunks);
	s->chunks = NULL;
	s->nr_chunks = 0;
	s->data_mapped = s->blank = false;
	if (s->live)
		munmap(s->live, s->live_map);
	s->live = NULL;
	if (!cls && !k) {
		map->ctl = NULL;
		map->pending = NULL;
		map->procs = NULL;
	}
	perflib_seg_maps_close(&m);
	s->data_fd = s->live_fd = -1;
}

/* the kernel's id of map @fd, 0 if unknown */
static uint32_t map_id(int fd)
{
	struct bpf_map_info mi;
	__u32 len = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : mi.id;
}

/*
 * @fd becomes *@slot: the same number if *@slot has one (a thread using the old number
 * meanwhile reaches the new map or the old, never an unrelated file), else its own
 */
static void fd_install(int *slot, int fd)
{
	if (*slot >= 0 && fd >= 0 && dup3(fd, *slot, O_CLOEXEC) >= 0) {
		close(fd);
		return;
	}
	if (*slot >= 0)
		close(*slot);
	*slot = fd;
}

/*
 * Retired segment @k of class @cls in this process: zero pages where its slots and live
 * map were (a reader walking them meanwhile sees no live slot and no index entry, never a
 * fault). The maps' memory goes with the last process to do so. A reader that cannot map
 * (read permission only) keeps its fds until the segment is opened again or the set
 * closed. seg_lock held.
 */
static void seg_blank(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	struct perflib_class *c = &map->cls[cls];
	struct perflib_seg *s = perflib_seg_at(c, k);

	if (!map->mapped)
		return;
	/* (again when an open over them failed: a failed MAP_FIXED may leave a hole) */
	if (s->chunks) {
		if (!s->blank)
			chunks_each(map, cls, k, chunk_blank); /* a provider's: what it mapped */
	} else if (s->data_mapped || s->blank)
		perflib_map_blank((uint8_t *)map->vs.base + seg_offset(map, cls, k),
				  perflib_seg_slots(k, c->seg0) * c->slot_size, map->writable);
	if (s->live)
		perflib_map_blank(s->live, s->live_map, map->writable);
	s->data_mapped = false;
	s->blank = true;
}

/*
 * segment @k's entry, its group allocated when it is the first opened (seg_lock held, or
 * the set not yet shared): published before the segment is (nr_segs), never moved
 */
static struct perflib_seg *seg_entry(struct perflib_class *c, uint32_t k)
{
	struct perflib_seg *g = perflib_seg_find(c, k);
	uint32_t j;

	if (g)
		return g;
	g = malloc(PERFLIB_SEG_GROUP * sizeof(*g));
	if (!g)
		return NULL;
	for (j = 0; j < PERFLIB_SEG_GROUP; j++)
		g[j] = (struct perflib_seg){.data_fd = -1, .live_fd = -1};
	__atomic_store_n(&c->seg_groups[k / PERFLIB_SEG_GROUP], g, __ATOMIC_RELEASE);
	return g + k % PERFLIB_SEG_GROUP;
}

int perflib_seg_open(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	struct perflib_class *c;
	struct perflib_seg *s;
	uint64_t slots, words;
	bool rdonly = !map->writable && !map->mapped, blank;
	struct perflib_seg_maps m = {{-1, -1}};
	char sdir[PATH_MAX + 48];
	uint64_t *live;
	int err, j;

	if (cls >= map->nr_classes || k >= map->cls[cls].max_segs)
		return -EINVAL;
	c = &map->cls[cls];
	s = seg_entry(c, k);
	if (!s)
		return -ENOMEM;
	slots = perflib_seg_slots(k, c->seg0);
	words = perflib_live_words(map->info, cls, k);
	blank = s->blank;
	err = seg_dir(map, cls, k, sdir, sizeof(sdir));
	if (err)
		return err;
	m.fd[PERFLIB_SEG_DATA] = perflib_pin_open(sdir, "data", rdonly);
	m.fd[PERFLIB_SEG_LIVE] = perflib_pin_open(sdir, "live", rdonly);
	for (j = 0, err = 0; j < PERFLIB_SEG_NR && !err; j++) {
		if (m.fd[j] < 0)
			err = m.fd[j];
	}
	if (err < 0)
		goto fail;
	err = perflib_map_check(m.fd[PERFLIB_SEG_DATA], BPF_MAP_TYPE_ARRAY, 4, c->slot_size,
				(uint32_t)slots, BPF_F_MMAPABLE);
	if (err >= 0)
		err = perflib_map_check(m.fd[PERFLIB_SEG_LIVE], BPF_MAP_TYPE_ARRAY, 4, 8,
					(uint32_t)words, BPF_F_MMAPABLE);
	if (err < 0)
		goto fail;
	s->data_id = map_id(m.fd[PERFLIB_SEG_DATA]);
	if (!map->mapped) {
		fd_install(&s->data_fd, m.fd[PERFLIB_SEG_DATA]);
		fd_install(&s->live_fd, m.fd[PERFLIB_SEG_LIVE]);
		s->blank = false;
		return 0;
	}
	if (map->writable) {
		/*
		 * A provider's: by chunks, when it first needs one (perflib_slot_map); the zero
		 * pages of a retired segment it had go first (nothing of its own is there)
		 */
		if (s->chunks) {
			chunks_each(map, cls, k, chunk_unmap);
			free(s->chunks);
			s->chunks = NULL;
		}
		s->nr_chunks = (uint32_t)((slots * c->slot_size + PERFLIB_CHUNK_BYTES - 1) /
					  PERFLIB_CHUNK_BYTES);
		s->chunks = calloc((s->nr_chunks + 63) / 64, sizeof(*s->chunks));
		if (!s->chunks) {
			s->nr_chunks = 0;
			err = -ENOMEM;
			goto fail;
		}
		fd_install(&s->data_fd, m.fd[PERFLIB_SEG_DATA]);
		m.fd[PERFLIB_SEG_DATA] = -1;
	} else {
		/* its slots at their fixed place in the class's range (over its zero pages) */
		if (!perflib_vspace_map(&map->vs, seg_offset(map, cls, k), slots * c->slot_size,
					false, blank, m.fd[PERFLIB_SEG_DATA], 0)) {
			err = -errno;
			if (err == -EEXIST)
				pr_warn("cannot map a segment of a counter set: its address is "
					"taken\n");
			goto fail;
		}
		s->data_mapped = true;
	}
	/* the live bitmap where its zero pages are: a reader may hold the address */
	live = perflib_map_shared(blank ? s->live : NULL, words * 8, map->writable, blank,
				  m.fd[PERFLIB_SEG_LIVE]);
	if (!live) {
		err = -errno;
		goto fail;
	}
	s->live = live;
	s->live_len = (uint32_t)(perflib_seg_words(k, c->seg0) * 8);
	s->live_map = (uint32_t)(words * 8);
	if (!cls && !k) {
		/* the procs entries, pending words and control word, after the heads (layout.h) */
		map->procs =
			(struct perflib_proc *)(live + perflib_procs_word(c->seg0,
									  map->info->nr_procs, 0));
		map->pending = live + perflib_pending_word(c->seg0, map->info->nr_procs, 0);
		map->ctl = (struct perflib_ctl *)(live +
						  perflib_ctl_word(c->seg0, map->info->nr_procs));
	}
	s->blank = false;
	/* mapped: the mappings hold the maps; fork() copies every fd a process keeps */
	perflib_seg_maps_close(&m);
	return 0;
fail:
	perflib_seg_maps_close(&m);
	/* over zero pages: readers may be walking them, so zero pages again, never a hole */
	if (blank)
		seg_blank(map, cls, k);
	else
		perflib_seg_close(map, cls, k);
	return err;
}

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

	err = seg_dir(map, cls, k, sdir, sizeof(sdir));
	if (err)
		return err;
	fd = perflib_pin_open(sdir, "data", true);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	id = map_id(fd);
	close(fd);
	if (!id)
		return -EIO;
	return id == perflib_seg_at(&map->cls[cls], k)->data_id;
}

/*
 * the outer map @j (segs, lives) of class @cls, opened from its pin the first time it
 * is needed after perflib_store_trim() closed it (-errno). Writers only.
 */
int perflib_store_outer_fd(struct perflib_store *map, uint32_t cls, int j)
{
	int fd = __atomic_load_n(&map->cls[cls].outer_fd[j], __ATOMIC_ACQUIRE), none = -1;
	char dir[PATH_MAX], name[32];
	int err;

	if (fd >= 0)
		return fd;
	if (!map->writable)
		return -EBADF;
	err = perflib_store_dir(&map->guid, dir, sizeof(dir));
	if (err)
		return err;
	perflib_outer_pin(cls, j, name, sizeof(name));
	fd = perflib_pin_open(dir, name, false);
	if (fd < 0)
		return fd;
	if (!__atomic_compare_exchange_n(&map->cls[cls].outer_fd[j], &none, fd, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		close(fd); /* another thread opened it first */
		fd = none;
	}
	return fd;
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

static int ctl_nr_segs(const struct perflib_store *map, uint32_t cls, uint32_t *ret_nr)
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
		seg_blank(map, cls, k);
	return 0;
}

/* segment @k of class @cls opened, then found not to be the one published: none of it kept */
static void seg_drop(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	if (map->mapped)
		seg_blank(map, cls, k); /* zero pages where it was mapped */
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

	err = seg_dir(map, cls, k, sdir, sizeof(sdir));
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

/*
 * Remove the private directories (tmp-*) of growers and retirers that died holding the lock:
 * every one is made and removed under it, so with the lock held, any there is a dead one's
 * (a grower killed between pinning and renaming, a retirer between renaming and removing).
 * Their maps were never published or no longer are; the kernel frees them with the pins.
 */
static void sweep_leftovers(const char *dir)
{
	char path[PATH_MAX + 256];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "tmp-", 4))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		pr_debug("removing %s, left by a grower or retirer that died\n", path);
		perflib_remove_dir(path);
	}
	closedir(d);
}

/*
 * The set's structure lock: segments are grown and retired by one process at a time. An
 * flock on the set's directory, so the kernel releases it with a holder that dies. The
 * directory's fd (the lock's), or -errno.
 */
int perflib_store_lock(const struct perflib_store *map)
{
	char dir[PATH_MAX];
	int fd, err;

	err = perflib_store_dir(&map->guid, dir, sizeof(dir));
	if (err)
		return err;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX)) {
		if (errno != EINTR) {
			err = -errno;
			close(fd);
			return err;
		}
	}
	sweep_leftovers(dir);
	return fd;
}

void perflib_store_unlock(int fd)
{
	flock(fd, LOCK_UN);
	close(fd);
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

	err = ctl_nr_segs(map, cls, &nr);
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
		err = seg_dir(map, cls, k, sdir, sizeof(sdir));
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

int perflib_store_grow(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	uint32_t nr;
	int err, lock;

	if (!map->writable || !map->ctl)
		return -EBADF;
	err = ctl_nr_segs(map, cls, &nr);
	if (err)
		return err;
	if (nr > k)
		return perflib_store_refresh(map);
	if (k >= map->cls[cls].max_segs)
		return -ENOSPC;
	lock = perflib_store_lock(map);
	if (lock < 0)
		return lock;
	err = grow_locked(map, cls, k);
	if (!err)
		err = store_refresh(map, true);
	perflib_store_unlock(lock);
	return err;
}

int perflib_store_refresh_held(struct perflib_store *map)
{
	return store_refresh(map, true);
}

int perflib_store_grow_held(struct perflib_store *map, uint32_t cls)
{
	uint32_t nr;
	int err;

	if (!map->writable || !map->ctl)
		return -EBADF;
	err = ctl_nr_segs(map, cls, &nr);
	if (!err)
		err = grow_locked(map, cls, nr);
	if (!err)
		err = store_refresh(map, true);
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
	err = store_refresh(map, true);
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
		err = seg_dir(map, cls, k, sdir, sizeof(sdir));
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
		err = store_refresh(map, true);
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

void perflib_live_set(struct perflib_store *map, uint32_t i, bool on)
{
	uint64_t bit, *w = perflib_live_word(map, i, &bit);

	if (on)
		__atomic_fetch_or(w, bit, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(w, ~bit, __ATOMIC_RELEASE);
}
