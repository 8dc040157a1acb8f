// SPDX-License-Identifier: MIT
/*
 * store.c - counter sets in bpffs: creating, pinning, opening, mapping, removing and
 * listing the maps of a counter set (the pin root is config.c's, the info value info.c's,
 * its BTF btf.c's, the segments segment.c's).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "internal.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

/* ---- bpffs root ------------------------------------------------------------------------- */

/* -ENODEV with a hint when the root's filesystem is not bpffs */
static int check_bpffs(const char *path)
{
	char buf[PATH_MAX];
	struct statfs st;
	char *slash;

	snprintf(buf, sizeof(buf), "%s", path);
	/* the root itself may not exist yet: test the nearest existing ancestor */
	while (statfs(buf, &st)) {
		slash = strrchr(buf, '/');
		if (!slash || slash == buf) {
			strcpy(buf, "/");
			if (statfs(buf, &st))
				return -errno;
			break;
		}
		*slash = 0;
	}
	if ((unsigned long)st.f_type != BPF_FS_MAGIC) {
		pr_warn("%s is not on a bpffs mount; mount one with: mount -t bpf bpf "
			"/sys/fs/bpf\n",
			path);
		return -ENODEV;
	}
	return 0;
}

/* mkdir -p for the root (0755 so that readers can reach the counter sets) */
static int make_root(void)
{
	char buf[PATH_MAX];
	size_t i;

	snprintf(buf, sizeof(buf), "%s", perflib_root_path());
	for (i = 1; buf[i]; i++) {
		if (buf[i] != '/')
			continue;
		buf[i] = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		buf[i] = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* ---- create, pin, open ------------------------------------------------------------------ */

void perflib_store_close(struct perflib_store *map)
{
	uint32_t k;
	uint32_t c;

	if (!map)
		return;
	for (c = 0; c < PERFLIB_MAX_CLASSES; c++) {
		for (k = 0; k < PERFLIB_MAX_SEGS; k++) {
			if (perflib_seg_find(&map->cls[c], k))
				perflib_seg_close(map, c, k);
		}
		for (k = 0; k < PERFLIB_MAX_SEGS / PERFLIB_SEG_GROUP; k++)
			free(map->cls[c].seg_groups[k]);
		for (k = 0; k < PERFLIB_SEG_NR; k++) {
			if (map->cls[c].outer_fd[k] >= 0)
				close(map->cls[c].outer_fd[k]);
		}
	}
	/* one range holds every class, class 0 first; its segments are unmapped now */
	perflib_vspace_put(&map->vs);
	if (map->info_fd >= 0)
		close(map->info_fd);
	pthread_mutex_destroy(&map->seg_lock);
	free(map->info);
	free(map);
}

static struct perflib_store *map_alloc(const GUID *guid, bool writable)
{
	struct perflib_store *map = calloc(1, sizeof(*map));
	uint32_t c, k;

	if (!map)
		return NULL;
	map->guid = *guid;
	map->writable = writable;
	map->info_fd = -1;
	map->proc_index = -1;
	for (c = 0; c < PERFLIB_MAX_CLASSES; c++) {
		for (k = 0; k < PERFLIB_SEG_NR; k++)
			map->cls[c].outer_fd[k] = -1;
	}
	pthread_mutex_init(&map->seg_lock, NULL);
	return map;
}

/*
 * Read the info value, reserve the address space of every slot the set may ever
 * hold, open class 0's segment 0 (its live map holds the control word) and the published
 * segments; fds are open. @unmapped: a reader whose
 * fds are read-only, which the kernel will not let mmap the maps (see perflib_store_open):
 * nothing is mapped, and readers use lookup syscalls.
 */
/* read and check the info value of @map (info_fd open) into map->info */
static int map_read_info(struct perflib_store *map)
{
	struct perflib_info *info;
	__u32 key = 0;
	int size, err;

	size = perflib_map_check(map->info_fd, BPF_MAP_TYPE_ARRAY, 4, 0, 1, 0);
	if (size < 0)
		return size;
	info = malloc((size_t)size);
	if (!info)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map->info_fd, &key, info)) {
		err = -errno;
		free(info);
		return err;
	}
	err = perflib_info_check(info, (size_t)size);
	if (err == -EPROTO) {
		char g[37];

		pr_warn("counter set %s was created by another perflib layout (version %u, this "
			"library reads %u): remove it (unlodctr --force, or rm -r %s/%s) and "
			"register it again\n",
			perflib_guid_to_string(&map->guid, g), info->layout_version,
			PERFLIB_LAYOUT_VERSION, perflib_root_path(), g);
	}
	if (err) {
		free(info);
		return err;
	}
	map->info = info;
	map->info_size = (size_t)size;
	return 0;
}

static int map_attach(struct perflib_store *map, bool unmapped)
{
	const struct perflib_info *info = map->info;
	size_t len = 0;
	uint32_t c;
	int err;

	map->counters = (const struct perflib_info_counter *)(info + 1);
	map->nr_classes = info->nr_classes;
	for (c = 0; c < map->nr_classes; c++) {
		struct perflib_class *cl = &map->cls[c];

		cl->geo = &info->classes[c];
		cl->slot_size = cl->geo->slot_size;
		cl->seg0 = cl->geo->seg0_slots;
		cl->max_segs = perflib_info_segs(info, c);
		cl->data_len = (size_t)perflib_seg_first(cl->max_segs, cl->seg0) * cl->slot_size;
		len += cl->data_len;
	}
	if (!unmapped) {
		/*
		 * address space only, one range for every class (class regions are whole pages:
		 * their segments are): segments are mapped into it as they are published
		 */
		err = perflib_vspace_get(len, map->writable, &map->vs);
		if (err)
			return err;
		for (c = 0, len = 0; c < map->nr_classes; c++) {
			map->cls[c].data = (uint8_t *)map->vs.base + len;
			len += map->cls[c].data_len;
		}
		map->mapped = true;
	}
	/*
	 * class 0's segment 0, never retired, holds the procs entries and the control word
	 * the refresh reads
	 */
	err = perflib_seg_open(map, 0, 0);
	if (err)
		return err;
	atomic_store_explicit(&map->cls[0].nr_segs, 1, memory_order_release);
	return perflib_store_refresh(map);
}

int perflib_store_open(const GUID *guid, bool writable, struct perflib_store **ret_map)
{
	struct perflib_store *map;
	char dir[PATH_MAX], name[32];
	bool unmapped = false;
	uint32_t c;
	int err, i;

	err = perflib_store_dir(guid, dir, sizeof(dir));
	if (err)
		return err;
	map = map_alloc(guid, writable);
	if (!map)
		return -ENOMEM;
	/*
	 * The kernel checks the pin's file mode: read for readers, read-write for providers.
	 * info is frozen: always opened read-only, and first: a set of another layout is named
	 * as such, whatever it pins.
	 */
	map->info_fd = perflib_pin_open(dir, "info", true);
	if (map->info_fd < 0) {
		err = map->info_fd;
		if (err == -ENOENT) {
			int e2 = check_bpffs(perflib_root_path());

			if (e2)
				err = e2;
		}
		goto out;
	}
	err = map_read_info(map);
	if (err)
		goto out;
	/*
	 * The kernel cannot mmap a BPF_F_RDONLY fd (mmap drops VM_SHARED for a file not open
	 * for writing and bpf_map_mmap() refuses private mappings), so readers open the
	 * mmapable maps read-write when the pins allow it and map them PROT_READ all the same;
	 * a reader with read permission only opens them read-only and gets an unmapped set
	 * (map_attach). The kernel's check of a pin is the file's permission bits: asked of
	 * s0/live, which every process maps, with the effective ids, as BPF_OBJ_GET asks.
	 */
	if (!writable) {
		char live[PATH_MAX + 16];

		snprintf(live, sizeof(live), "%s/s0/live", dir);
		if (faccessat(AT_FDCWD, live, R_OK | W_OK, AT_EACCESS)) {
			if (errno != EACCES) {
				err = -errno;
				goto out;
			}
			unmapped = true;
		}
	}
	if (writable) {
		/* the outer maps of every class, to enter new segments */
		for (c = 0; c < map->info->nr_classes; c++) {
			for (i = 0; i < PERFLIB_SEG_NR; i++) {
				perflib_outer_pin(c, i, name, sizeof(name));
				map->cls[c].outer_fd[i] = perflib_pin_open(dir, name, false);
				if (map->cls[c].outer_fd[i] < 0) {
					err = map->cls[c].outer_fd[i];
					goto out;
				}
			}
		}
	}
	err = map_attach(map, unmapped);
	if (err)
		goto out;
	*ret_map = map;
	return 0;
out:
	perflib_store_close(map);
	return err;
}

void perflib_store_trim(struct perflib_store *map)
{
	uint32_t c;
	int j;

	if (!map->mapped)
		return;
	for (c = 0; c < map->nr_classes; c++) {
		for (j = 0; j < PERFLIB_SEG_NR; j++) {
			int fd =
				__atomic_exchange_n(&map->cls[c].outer_fd[j], -1, __ATOMIC_ACQ_REL);

			if (fd >= 0)
				close(fd);
		}
	}
	/* the info is copied: its fd serves no one */
	close(map->info_fd);
	map->info_fd = -1;
}

/*
 * the outer map @pin ("segs", ...: kernel name "pl_<pin>"), an ARRAY_OF_MAPS of
 * PERFLIB_MAX_SEGS entries whose inner maps look like @inner_fd
 */
static int outer_create(const char *pin, int inner_fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts);
	char name[16];
	int fd;

	/* map names hold 15 characters: "pl_lives3" fits */
	snprintf(name, sizeof(name), "pl_%.12s", pin);
	mopts.inner_map_fd = inner_fd;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, name, 4, 4, PERFLIB_MAX_SEGS, &mopts);
	return fd < 0 ? -errno : fd;
}

int perflib_store_create(const struct perflib_info *info, size_t info_size,
			 const struct perflib_pin_opts *opts, struct perflib_store **ret_map)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts);
	struct perflib_ctl ctl = {.magic = PERFLIB_CTL_MAGIC};
	struct perflib_seg_maps seg0;
	struct perflib_store *map;
	char dir[PATH_MAX], tmp[PATH_MAX], sdir[PATH_MAX + 8], name[32];
	static _Atomic unsigned int seq;
	int btf_fd = -1, key_id, val_id, err, j;
	__u32 key = 0, c;
	GUID guid;

	memcpy(&guid, info->counterset_guid, sizeof(guid));
	err = perflib_store_dir(&guid, dir, sizeof(dir));
	if (err)
		return err;
	err = check_bpffs(perflib_root_path());
	if (err)
		return err;
	err = make_root();
	if (err)
		return err;
	map = map_alloc(&guid, true);
	if (!map)
		return -ENOMEM;
	map->nr_classes = info->nr_classes;
	for (j = 0; j < PERFLIB_SEG_NR; j++)
		seg0.fd[j] = -1;

	/* info: one frozen entry */
	err = perflib_info_btf(info_size, &btf_fd, &key_id, &val_id);
	if (err)
		goto out;
	mopts.btf_fd = btf_fd;
	mopts.btf_key_type_id = key_id;
	mopts.btf_value_type_id = val_id;
	map->info_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pl_info", 4, info_size, 1, &mopts);
	close(btf_fd);
	btf_fd = -1;
	if (map->info_fd < 0 || bpf_map_update_elem(map->info_fd, &key, info, BPF_ANY) ||
	    bpf_map_freeze(map->info_fd)) {
		err = -errno;
		goto out;
	}
	/*
	 * Segment 0 of class 0 exists from the start (programs that know no classes find it);
	 * the other classes get segments as names of their sizes come. A class's segment 0
	 * maps are the template of its outer maps: class 0's are kept, the others' closed.
	 */
	for (c = 0; c < info->nr_classes; c++) {
		struct perflib_seg_maps tmpl = {{-1, -1}}, *m = c ? &tmpl : &seg0;

		err = perflib_seg_create(info, c, 0, m);
		for (j = 0; j < PERFLIB_SEG_NR && !err; j++) {
			perflib_outer_pin(c, j, name, sizeof(name));
			map->cls[c].outer_fd[j] = outer_create(name, m->fd[j]);
			if (map->cls[c].outer_fd[j] < 0)
				err = map->cls[c].outer_fd[j];
			else if (!c && bpf_map_update_elem(map->cls[c].outer_fd[j], &key,
							   &seg0.fd[j], BPF_ANY))
				err = -errno;
		}
		perflib_seg_maps_close(&tmpl);
		if (err)
			goto out;
	}
	/* the control word: the last words of class 0's s0/live, after the pending words */
	ctl.nr_segs[0] = 1;
	key = perflib_ctl_word(info->classes[0].seg0_slots, info->nr_procs);
	for (j = 0; j < PERFLIB_CTL_WORDS; j++, key++) {
		__u64 w;

		memcpy(&w, (const char *)&ctl + 8 * j, sizeof(w));
		if (bpf_map_update_elem(seg0.fd[PERFLIB_SEG_LIVE], &key, &w, BPF_ANY)) {
			err = -errno;
			goto out;
		}
	}

	/* pin into a private directory, then publish it with one rename */
	snprintf(tmp, sizeof(tmp), "%s/tmp-%d-%u", perflib_root_path(), (int)getpid(), seq++);
	if (mkdir(tmp, 0755)) {
		err = -errno;
		goto out;
	}
	err = perflib_pin_one(map->info_fd, tmp, "info", opts);
	for (c = 0; c < info->nr_classes; c++) {
		for (j = 0; j < PERFLIB_SEG_NR && !err; j++) {
			perflib_outer_pin(c, j, name, sizeof(name));
			err = perflib_pin_one(map->cls[c].outer_fd[j], tmp, name, opts);
		}
	}
	if (!err) {
		snprintf(sdir, sizeof(sdir), "%s/s0", tmp);
		err = perflib_seg_pin(&seg0, sdir, opts);
	}
	if (!err && (opts->uid != (uid_t)-1 || opts->gid != (gid_t)-1) &&
	    chown(tmp, opts->uid, opts->gid))
		err = -errno;
	if (!err && rename(tmp, dir)) {
		err = -errno;
		perflib_remove_dir(tmp);
		if (err == -EEXIST || err == -ENOTEMPTY) {
			/* another process published it first: use theirs */
			perflib_seg_maps_close(&seg0);
			perflib_store_close(map);
			err = perflib_store_open(&guid, true, ret_map);
			return err ? err : 1;
		}
		goto out;
	}
	if (err) {
		perflib_remove_dir(tmp);
		goto out;
	}
	perflib_seg_maps_close(&seg0);
	err = map_read_info(map);
	if (!err)
		err = map_attach(map, false);
	if (err)
		goto out;
	*ret_map = map;
	return 0;
out:
	if (btf_fd >= 0)
		close(btf_fd);
	perflib_seg_maps_close(&seg0);
	perflib_store_close(map);
	return err;
}

int perflib_store_remove(const GUID *guid)
{
	char dir[PATH_MAX];
	struct stat st;
	int err;

	err = perflib_store_dir(guid, dir, sizeof(dir));
	if (err)
		return err;
	if (stat(dir, &st))
		return -errno;
	perflib_remove_dir(dir);
	if (!stat(dir, &st))
		return -EBUSY;
	return 0;
}

int perflib_store_list(GUID **ret_guids, size_t *ret_nr)
{
	GUID *guids = NULL, *tmp, g;
	size_t nr = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	d = opendir(perflib_root_path());
	if (!d) {
		if (errno == ENOENT) {
			*ret_guids = NULL;
			*ret_nr = 0;
			return 0;
		}
		return -errno;
	}
	while ((de = readdir(d))) {
		if (perflib_guid_from_string(de->d_name, &g))
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 16;
			tmp = realloc(guids, cap * sizeof(*guids));
			if (!tmp) {
				free(guids);
				closedir(d);
				return -ENOMEM;
			}
			guids = tmp;
		}
		guids[nr++] = g;
	}
	closedir(d);
	*ret_guids = guids;
	*ret_nr = nr;
	return 0;
}
