// SPDX-License-Identifier: MIT
/*
 * segment.c - how a counter set grows: in each size class, segments of slots, each a data
 * map, an index map and a live bitmap pinned in <set>/[c<c>]s<k>/, published in the control entry (procs' last)
 * and the class's outer maps, and mapped by every process at their fixed place in the
 * class's reservation (layout.h).
 *
 * Growing: the process that finds no free slot creates segment k's maps, pins them in a
 * private directory and renames it to s<k>; a loser of that race removes its copy. Then
 * whoever sees s<k> enters it in the outer maps and moves ctl.nr_segs from k to k + 1, so a
 * grower that dies after the rename only delays the next one. Readers open the segments
 * below ctl.nr_segs[c] (perflib_store_refresh), so they see new storage without reopening.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "internal.h"

const char *const perflib_seg_pins[PERFLIB_SEG_NR] = {"data", "index", "live"};
const char *const perflib_outer_pins[PERFLIB_SEG_NR] = {"segs", "idxs", "lives"};

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
	struct perflib_seg_maps m = {{-1, -1, -1}};
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
	/* keys are allocated as instances are created: memory follows the live instances */
	mopts.map_flags = BPF_F_NO_PREALLOC;
	m.fd[PERFLIB_SEG_INDEX] =
		bpf_map_create(BPF_MAP_TYPE_HASH, "pl_index", sizeof(struct perflib_index_key),
			       sizeof(struct perflib_index_val), slots, &mopts);
	mopts.map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP;
	m.fd[PERFLIB_SEG_LIVE] =
		bpf_map_create(BPF_MAP_TYPE_ARRAY, "pl_live", 4, 8,
			       (uint32_t)perflib_seg_words(k, ic->seg0_slots), &mopts);
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
	for (j = 0, err = 0; j < PERFLIB_SEG_NR && !err; j++)
		err = perflib_pin_one(m->fd[j], dir, perflib_seg_pins[j], opts);
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

void perflib_seg_close(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	struct perflib_seg *s = &map->cls[cls].segs[k];
	struct perflib_seg_maps m = {{s->data_fd, s->index_fd, s->live_fd}};

	const struct perflib_class *c = &map->cls[cls];

	if (s->data_mapped)
		perflib_vspace_unmap(&map->vs, seg_offset(map, cls, k),
				     perflib_seg_slots(k, c->seg0) * c->slot_size);
	s->data_mapped = false;
	if (s->live)
		munmap(s->live, s->live_len);
	s->live = NULL;
	perflib_seg_maps_close(&m);
	s->data_fd = s->index_fd = s->live_fd = -1;
}

int perflib_seg_open(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	struct perflib_class *c = &map->cls[cls];
	struct perflib_seg *s = &c->segs[k];
	uint64_t slots = perflib_seg_slots(k, c->seg0), words = perflib_seg_words(k, c->seg0);
	bool rdonly = !map->writable && !map->mapped;
	char sdir[PATH_MAX + 48];
	int err;

	err = seg_dir(map, cls, k, sdir, sizeof(sdir));
	if (err)
		return err;
	s->data_fd = perflib_pin_open(sdir, "data", rdonly);
	s->index_fd = perflib_pin_open(sdir, "index", !map->writable);
	s->live_fd = perflib_pin_open(sdir, "live", rdonly);
	err = s->data_fd < 0 ? s->data_fd : s->index_fd < 0 ? s->index_fd : s->live_fd;
	if (err < 0)
		goto fail;
	err = perflib_map_check(s->data_fd, BPF_MAP_TYPE_ARRAY, 4, c->slot_size, (uint32_t)slots,
				BPF_F_MMAPABLE);
	if (err >= 0)
		err = perflib_map_check(s->index_fd, BPF_MAP_TYPE_HASH,
					sizeof(struct perflib_index_key),
					sizeof(struct perflib_index_val), (uint32_t)slots, 0);
	if (err >= 0)
		err = perflib_map_check(s->live_fd, BPF_MAP_TYPE_ARRAY, 4, 8, (uint32_t)words,
					BPF_F_MMAPABLE);
	if (err < 0)
		goto fail;
	if (!map->mapped)
		return 0;
	/* the segment's slots at their fixed place in the class's reservation */
	if (!perflib_vspace_map(&map->vs, seg_offset(map, cls, k), slots * c->slot_size,
				map->writable, s->data_fd)) {
		err = -errno;
		if (err == -EEXIST)
			pr_warn("cannot map a segment of a counter set: its address is taken\n");
		goto fail;
	}
	s->data_mapped = true;
	s->live_len = words * 8;
	s->live = perflib_map_shared(NULL, s->live_len, map->writable, false, s->live_fd);
	if (!s->live) {
		err = -errno;
		goto fail;
	}
	/* mapped: the mappings hold the maps; fork() copies every fd a process keeps */
	close(s->data_fd);
	close(s->live_fd);
	s->data_fd = s->live_fd = -1;
	return 0;
fail:
	perflib_seg_close(map, cls, k);
	return err;
}

/*
 * the outer map @j (segs, idxs, lives) of class @cls, opened from its pin the first time it
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

int perflib_ctl_read(int procs_fd, struct perflib_ctl *ret)
{
	struct bpf_map_info mi;
	__u32 len = sizeof(mi), key;

	memset(&mi, 0, sizeof(mi));
	if (bpf_obj_get_info_by_fd(procs_fd, &mi, &len))
		return -errno;
	if (mi.type != BPF_MAP_TYPE_ARRAY || mi.key_size != 4 ||
	    mi.value_size != sizeof(struct perflib_ctl) || mi.max_entries < 2)
		return -EBADMSG;
	key = mi.max_entries - 1;
	if (bpf_map_lookup_elem(procs_fd, &key, ret))
		return -errno;
	return ret->magic == PERFLIB_CTL_MAGIC ? 0 : -EBADMSG;
}

/* segments of class @cls published in the control entry */
static int ctl_nr_segs(const struct perflib_store *map, uint32_t cls, uint32_t *ret_nr)
{
	struct perflib_ctl ctl;
	int err;

	if (map->ctl) {
		*ret_nr = __atomic_load_n(&map->ctl->nr_segs[cls], __ATOMIC_ACQUIRE);
	} else {
		err = perflib_ctl_read(map->procs_fd, &ctl);
		if (err)
			return err;
		*ret_nr = ctl.nr_segs[cls];
	}
	if (*ret_nr > map->cls[cls].max_segs)
		*ret_nr = map->cls[cls].max_segs; /* garbage in ctl: the info bounds it */
	return 0;
}

static int class_refresh(struct perflib_store *map, uint32_t cls)
{
	struct perflib_class *c = &map->cls[cls];
	uint32_t want, k;
	int err;

	err = ctl_nr_segs(map, cls, &want);
	if (err || want <= perflib_store_nr_segs(map, cls))
		return err;
	pthread_mutex_lock(&map->seg_lock);
	for (k = perflib_store_nr_segs(map, cls); k < want; k++) {
		err = perflib_seg_open(map, cls, k);
		if (err)
			break;
		/* readers of nr_segs see the segment's fds and mappings */
		atomic_store_explicit(&c->nr_segs, k + 1, memory_order_release);
	}
	pthread_mutex_unlock(&map->seg_lock);
	return err;
}

int perflib_store_refresh(struct perflib_store *map)
{
	uint32_t c;
	int err = 0, e;

	for (c = 0; c < map->nr_classes; c++) {
		e = class_refresh(map, c);
		if (e && !err)
			err = e;
	}
	return err;
}

/*
 * enter published segment @k of class @cls in the outer maps and ctl (idempotent). The kernel
 * makes every update of an array of maps wait for an RCU grace period (no program still
 * runs with the old entry): three waits per segment. (Running the three updates in threads
 * shares the waits and halves the cost of a grow, but a thread made in a child forked from
 * a threaded process can hang under the sanitizers: not worth it for a cost paid once per
 * doubling.)
 */
static int seg_publish(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	struct perflib_seg_maps m = {{-1, -1, -1}};
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

/* the pins' owner, group and mode: those of the set's procs pin */
static int set_pin_opts(const char *dir, struct perflib_pin_opts *opts)
{
	char path[PATH_MAX + 8];
	struct stat st;

	snprintf(path, sizeof(path), "%s/procs", dir);
	if (stat(path, &st))
		return -errno;
	memset(opts, 0, sizeof(*opts));
	opts->mode = st.st_mode & 0666;
	opts->uid = st.st_uid;
	opts->gid = st.st_gid;
	return 0;
}

int perflib_store_grow(struct perflib_store *map, uint32_t cls, uint32_t k)
{
	struct perflib_seg_maps m = {{-1, -1, -1}};
	struct perflib_pin_opts opts;
	char dir[PATH_MAX], tmp[PATH_MAX + 64], sdir[PATH_MAX + 48];
	static _Atomic unsigned int seq;
	struct stat st;
	uint32_t nr;
	int err;

	if (!map->writable || !map->ctl)
		return -EBADF;
	err = ctl_nr_segs(map, cls, &nr);
	if (err)
		return err;
	if (nr > k)
		return perflib_store_refresh(map);
	if (k >= map->cls[cls].max_segs)
		return -ENOSPC;
	err = perflib_store_dir(&map->guid, dir, sizeof(dir));
	if (!err)
		err = set_pin_opts(dir, &opts);
	if (!err)
		err = seg_dir(map, cls, k, sdir, sizeof(sdir));
	if (err)
		return err;
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
		/* lost the race (or failed): the winner's directory stays */
		perflib_remove_dir(tmp);
		if (err)
			return err;
	}
	err = seg_publish(map, cls, k);
	if (err)
		return err;
	return perflib_store_refresh(map);
}

void perflib_live_set(struct perflib_store *map, uint32_t i, bool on)
{
	uint64_t bit, *w = perflib_live_word(map, i, &bit);

	if (on)
		__atomic_fetch_or(w, bit, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(w, ~bit, __ATOMIC_RELEASE);
}

int perflib_index_lookup(const struct perflib_store *map, uint32_t cls,
			 const struct perflib_index_key *key, struct perflib_index_val *ret_val)
{
	uint32_t k, n = perflib_store_nr_segs(map, cls);

	for (k = 0; k < n; k++) {
		if (!bpf_map_lookup_elem(map->cls[cls].segs[k].index_fd, key, ret_val))
			return 0;
	}
	return -ENOENT;
}
