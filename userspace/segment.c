// SPDX-License-Identifier: MIT
/*
 * segment.c - a counter set's segments: in each size class, segments of slots, each a data
 * map and a live map (bitmap, owner summaries, and in a group's leader the group's index
 * table) pinned in <set>/[c<c>]s<k>/, made, pinned, opened and mapped at their fixed place
 * in the class's range (layout.h): by readers whole, by providers by chunks as they need
 * them (perflib_slot_map); zero pages where a retired one was; and the set's structure
 * lock. Which segments a process has open is view.c's; growing and giving back is
 * resize.c's.
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
int perflib_seg_path(const struct perflib_store *map, uint32_t cls, uint32_t k, char *buf,
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
uint32_t perflib_map_id(int fd)
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
void perflib_seg_blank(struct perflib_store *map, uint32_t cls, uint32_t k)
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
	err = perflib_seg_path(map, cls, k, sdir, sizeof(sdir));
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
	s->data_id = perflib_map_id(m.fd[PERFLIB_SEG_DATA]);
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
		perflib_seg_blank(map, cls, k);
	else
		perflib_seg_close(map, cls, k);
	return err;
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

void perflib_live_set(struct perflib_store *map, uint32_t i, bool on)
{
	uint64_t bit, *w = perflib_live_word(map, i, &bit);

	if (on)
		__atomic_fetch_or(w, bit, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(w, ~bit, __ATOMIC_RELEASE);
}
