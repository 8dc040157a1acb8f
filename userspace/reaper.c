// SPDX-License-Identifier: MIT
/*
 * reaper.c - help from the kernel with instance lifetimes:
 *  - the exit reaper: a BPF program on sched_process_exit (bpf/reaper.bpf.c) that frees a
 *    dead provider's slots as the process exits, loaded once per counter
 *    set and kept attached by its link pinned at <root>/<guid>/reaper. Loaded by
 *    perflib_register_counterset (lodctr) and by the first privileged provider of the
 *    counter set; without CAP_BPF nothing happens and the lazy reaping of instance.c
 *    stays the only cleanup;
 *  - kernel-owned instances: slots handed to a BPF program (kcounters), which stay live
 *    without any process (owner pid 0, owner_start PERFLIB_OWNER_KERNEL) until a loader
 *    takes them back and deletes them.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/capability.h>

#include "internal.h"
#include "perflib_bpf_loader.h"
#include "exit.skel.h"
#include "reaper.skel.h"

#define REAPER_PIN "reaper"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* ---- the exit reaper -------------------------------------------------------------------- */

/* PERFLIB_KERNEL_REAPER=0 keeps the reaper out (tests of the lazy reaping use it) */
static bool reaper_enabled(void)
{
	const char *s = getenv("PERFLIB_KERNEL_REAPER");

	return !s || strcmp(s, "0") != 0;
}

static bool cap_effective(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap >> 5].effective & (1u << (cap & 31));
}

/* may this process load and attach a tracing program? (CAP_BPF+CAP_PERFMON or SYS_ADMIN) */
static bool may_trace(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return false;
	return cap_effective(d, CAP_SYS_ADMIN) ||
	       (cap_effective(d, CAP_BPF) && cap_effective(d, CAP_PERFMON));
}

/* "<root>/exit-reaper/<name>" into @buf */
static void exit_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/" PERFLIB_EXIT_DIR "%s%s", perflib_root_path(), name ? "/" : "",
		 name ? name : "");
}

static int exit_pin_open(const char *name)
{
	char path[PATH_MAX + 32];
	int fd;

	exit_path(path, sizeof(path), name);
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

/*
 * The machine's exit dispatcher (bpf/exit.bpf.c) and its maps in <root>/exit-reaper/,
 * created once: loaded, attached and pinned in a private directory, then renamed into place
 * (the loser of a race removes its copy). `provs` is writable by every user: providers of
 * any user register themselves (docs/ARCHITECTURE.md, "Crash cleanup", says what that
 * allows). Needs CAP_BPF and CAP_PERFMON.
 */
static int exit_dir_ensure(void)
{
	static const struct {
		const char *name;
		mode_t mode;
	} pins[] = {{"provs", 0666},
		    {"progs", 0600},
		    {"exit_ctx", 0600},
		    {"ids", 0600},
		    {"walk", 0600}};
	/* the ids taken: as many elements as counter sets with a reaper, not PERFLIB_EXIT_IDS */
	LIBBPF_OPTS(bpf_map_create_opts, mopts, .map_flags = BPF_F_NO_PREALLOC);
	static _Atomic unsigned int seq;
	struct exit_bpf *skel = NULL;
	struct bpf_link *link = NULL;
	char dir[PATH_MAX], tmp[PATH_MAX + 64], path[PATH_MAX + 96];
	int fds[5] = {-1, -1, -1, -1, -1}, err = 0;
	size_t i;
	long tck;

	exit_path(path, sizeof(path), "link");
	if (access(path, F_OK) == 0)
		return 0;
	exit_path(dir, sizeof(dir), NULL);
	snprintf(tmp, sizeof(tmp), "%s/tmp-exit-%d-%u", perflib_root_path(), (int)getpid(), seq++);
	skel = exit_bpf__open();
	if (!skel)
		return -errno;
	tck = sysconf(_SC_CLK_TCK);
	skel->rodata->clk_tck = tck > 0 ? (uint64_t)tck : 100;
	err = exit_bpf__load(skel);
	if (err)
		goto out;
	link = bpf_program__attach(skel->progs.perflib_exit);
	if (!link) {
		err = -errno;
		goto out;
	}
	fds[0] = bpf_map__fd(skel->maps.provs);
	fds[1] = bpf_map__fd(skel->maps.progs);
	fds[2] = bpf_map__fd(skel->maps.exit_ctx);
	fds[4] = bpf_map__fd(skel->maps.walk);
	/* which exit ids are taken, and by which counter set */
	fds[3] = bpf_map_create(BPF_MAP_TYPE_HASH, "pl_exit_ids", 4, 16, PERFLIB_EXIT_IDS, &mopts);
	if (fds[3] < 0 || mkdir(tmp, 0755)) {
		err = -errno;
		goto out;
	}
	for (i = 0; i < 5 && !err; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, pins[i].name);
		if (bpf_obj_pin(fds[i], path) || chmod(path, pins[i].mode))
			err = -errno;
	}
	if (!err) {
		snprintf(path, sizeof(path), "%s/link", tmp);
		err = bpf_link__pin(link, path);
	}
	if (!err && rename(tmp, dir) && errno != EEXIST && errno != ENOTEMPTY)
		err = -errno;
	perflib_remove_dir(tmp); /* nothing left after a rename; the loser's copy otherwise */
out:
	if (fds[3] >= 0)
		close(fds[3]);
	bpf_link__destroy(link);
	exit_bpf__destroy(skel);
	return err;
}

/* a free exit id for counter set @guid, taken in the ids map: 1..PERFLIB_EXIT_IDS-1 */
static int exit_id_take(int ids_fd, const GUID *guid)
{
	uint32_t h = 0, k, id;
	size_t i;

	for (i = 0; i < sizeof(*guid); i++)
		h = h * 31 + ((const uint8_t *)guid)[i];
	for (k = 0; k < PERFLIB_EXIT_IDS - 1; k++) {
		id = 1 + (h + k) % (PERFLIB_EXIT_IDS - 1);
		if (!bpf_map_update_elem(ids_fd, &id, guid, BPF_NOEXIST))
			return (int)id;
		if (errno != EEXIST)
			return -errno;
	}
	return -ENOSPC;
}

/* does the root's dispatcher hold exit id @id for counter set @guid? */
static bool exit_id_held(uint32_t id, const GUID *guid)
{
	uint8_t owner[16];
	int fd = exit_pin_open("ids");
	bool held;

	if (fd < 0)
		return false;
	held = !bpf_map_lookup_elem(fd, &id, owner) && !memcmp(owner, guid, 16);
	close(fd);
	return held;
}

/* the set's exit id from its control word, 0 if none (or garbage) */
static uint32_t exit_id_of(const struct perflib_store *map)
{
	uint32_t id = __atomic_load_n(&map->ctl->exit_id, __ATOMIC_ACQUIRE);

	return id < PERFLIB_EXIT_IDS ? id : 0;
}

/*
 * the root's walk state for @m (the dispatcher's, exit.h), if it has one of the program's
 * shape: a root made by an earlier version has none, and the program then makes its own
 */
static int reuse_walk(struct bpf_map *m)
{
	struct bpf_map_info mi;
	__u32 len = sizeof(mi);
	int fd = exit_pin_open("walk"), err = 0;

	if (fd < 0)
		return 0;
	memset(&mi, 0, sizeof(mi));
	if (!bpf_obj_get_info_by_fd(fd, &mi, &len) && mi.type == BPF_MAP_TYPE_PERCPU_ARRAY &&
	    mi.key_size == 4 && mi.value_size == bpf_map__value_size(m) && mi.max_entries == 1)
		err = bpf_map__reuse_fd(m, fd);
	close(fd);
	return err;
}

/* the reaper's maps of class @cls: the class's outer maps (class 0's if none) */
static int reuse_class(struct bpf_map *slots, struct bpf_map *live, const struct perflib_store *map,
		       uint32_t cls)
{
	struct perflib_store *m = (struct perflib_store *)map; /* opens only (a cache) */
	struct bpf_map *maps[PERFLIB_SEG_NR] = {slots, live};
	int err = 0, j, fd;

	cls = perflib_class_or0(map, cls);
	for (j = 0; j < PERFLIB_SEG_NR && !err; j++) {
		fd = perflib_store_outer_fd(m, cls, j);
		err = fd < 0 ? fd : bpf_map__reuse_fd(maps[j], fd);
	}
	return err;
}

int perflib_reaper_attach(const struct perflib_store *map)
{
	struct reaper_bpf *skel = NULL;
	libbpf_print_fn_t old_print;
	char dir[PATH_MAX], path[PATH_MAX + 16];
	int ids_fd = -1, progs_fd = -1, ctx_fd = -1, provs_fd = -1, prog_fd, id = -1, err;
	uint32_t none;
	long tck;

	if (!reaper_enabled())
		return -EOPNOTSUPP;
	if (!map->writable || !map->ctl)
		return -EBADF;
	err = perflib_store_dir(&map->guid, dir, sizeof(dir));
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/" REAPER_PIN, dir);
	/* the common case: attached by lodctr or by an earlier provider, dispatcher in place */
	none = exit_id_of(map);
	if (none && access(path, F_OK) == 0 && exit_id_held(none, &map->guid))
		return 0;
	if (!may_trace()) {
		pr_debug("no CAP_BPF/CAP_PERFMON: dead providers are reaped lazily\n");
		return -EPERM;
	}
	/* libbpf's print hook is process-wide: borrowed for the load, then given back */
	old_print = libbpf_set_print(perflib_libbpf_print);
	err = exit_dir_ensure();
	if (err)
		goto out;
	ids_fd = exit_pin_open("ids");
	progs_fd = exit_pin_open("progs");
	ctx_fd = exit_pin_open("exit_ctx");
	provs_fd = exit_pin_open("provs");
	err = ids_fd < 0 ? ids_fd : progs_fd < 0 ? progs_fd : ctx_fd < 0 ? ctx_fd : provs_fd;
	if (err < 0)
		goto out;
	id = exit_id_take(ids_fd, &map->guid);
	if (id < 0) {
		err = id;
		goto out;
	}
	skel = reaper_bpf__open();
	if (!skel) {
		err = -errno;
		goto out;
	}
	/* every class's geometry and maps; missing classes get class 0's, never walked */
	skel->rodata->nr_classes = map->nr_classes;
	skel->rodata->procs_word0 = perflib_procs_word(map->cls[0].seg0, map->info->nr_procs, 0);
	skel->rodata->pending_word0 =
		perflib_pending_word(map->cls[0].seg0, map->info->nr_procs, 0);
	perflib_bpf_geometry_from_class(map->info, 0, &skel->rodata->perflib_geo);
	perflib_bpf_geometry_from_class(map->info, perflib_class_or0(map, 1), &skel->rodata->geo1);
	perflib_bpf_geometry_from_class(map->info, perflib_class_or0(map, 2), &skel->rodata->geo2);
	perflib_bpf_geometry_from_class(map->info, perflib_class_or0(map, 3), &skel->rodata->geo3);
	tck = sysconf(_SC_CLK_TCK);
	skel->rodata->clk_tck = tck > 0 ? (uint64_t)tck : 100;
	err = reuse_class(skel->maps.slots, skel->maps.live, map, 0);
	if (!err)
		err = reuse_class(skel->maps.slots1, skel->maps.live1, map, 1);
	if (!err)
		err = reuse_class(skel->maps.slots2, skel->maps.live2, map, 2);
	if (!err)
		err = reuse_class(skel->maps.slots3, skel->maps.live3, map, 3);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.progs, progs_fd);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.exit_ctx, ctx_fd);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.provs, provs_fd);
	if (!err)
		err = reuse_walk(skel->maps.walk);
	if (!err)
		err = reaper_bpf__load(skel);
	if (err)
		goto out;
	/*
	 * one id per set: a racing attacher that published first keeps its own (@none: the id
	 * seen above, 0 or one the root's dispatcher no longer knows, after it was removed
	 * with the root's last counter set)
	 */
	if (!__atomic_compare_exchange_n(&map->ctl->exit_id, &none, (uint32_t)id, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		goto out;
	prog_fd = bpf_program__fd(skel->progs.perflib_reaper);
	if (bpf_map_update_elem(progs_fd, &id, &prog_fd, BPF_ANY)) {
		err = -errno;
		goto out;
	}
	id = -1; /* kept */
	/* the pin names the program (bpftool prog show pinned ...) and keeps it loaded */
	unlink(path); /* a program of a dispatcher that is gone */
	if (bpf_obj_pin(prog_fd, path) && errno != EEXIST)
		err = -errno;
	else
		pr_debug("exit reaper of %s ready (exit id %u)\n", dir, exit_id_of(map));
out:
	if (id > 0)
		bpf_map_delete_elem(ids_fd, &id);
	if (err)
		pr_debug("exit reaper not attached (%s): dead providers are reaped lazily\n",
			 strerror(-err));
	reaper_bpf__destroy(skel);
	libbpf_set_print(old_print);
	if (ids_fd >= 0)
		close(ids_fd);
	if (progs_fd >= 0)
		close(progs_fd);
	if (ctx_fd >= 0)
		close(ctx_fd);
	if (provs_fd >= 0)
		close(provs_fd);
	return err;
}

/* the control word of a set of layout 4 (the last entry of procs, @last) or 3 (a ctl map) */
static int old_ctl_read(int fd, struct perflib_ctl *ret, bool last)
{
	struct bpf_map_info mi;
	__u32 len = sizeof(mi), key = 0;

	memset(&mi, 0, sizeof(mi));
	if (bpf_obj_get_info_by_fd(fd, &mi, &len))
		return -errno;
	if (mi.type != BPF_MAP_TYPE_ARRAY || mi.key_size != 4 || mi.value_size != sizeof(*ret) ||
	    mi.max_entries < (last ? 2u : 1u))
		return -EBADMSG;
	if (last)
		key = mi.max_entries - 1;
	if (bpf_map_lookup_elem(fd, &key, ret))
		return -errno;
	return ret->magic == PERFLIB_CTL_MAGIC ? 0 : -EBADMSG;
}

void perflib_reaper_set_removing(const GUID *guid)
{
	char dir[PATH_MAX], path[PATH_MAX + 24];
	struct perflib_ctl ctl;
	int fd, err;

	if (perflib_store_dir(guid, dir, sizeof(dir)))
		return;
	/*
	 * the control word, last of s0/live; layout 4 had it as the last entry of procs, layout
	 * 3 in a ctl map of its own (a set of another layout is removed with its exit id too)
	 */
	snprintf(path, sizeof(path), "%s/s0/live", dir);
	fd = bpf_obj_get(path);
	err = fd < 0 ? -errno : perflib_ctl_read(fd, &ctl);
	if (fd >= 0)
		close(fd);
	if (err) {
		snprintf(path, sizeof(path), "%s/procs", dir);
		fd = bpf_obj_get(path);
		err = fd < 0 ? -errno : old_ctl_read(fd, &ctl, true);
		if (fd >= 0)
			close(fd);
	}
	if (err) {
		snprintf(path, sizeof(path), "%s/ctl", dir);
		fd = bpf_obj_get(path);
		if (fd < 0)
			return;
		err = old_ctl_read(fd, &ctl, false);
		close(fd);
		if (err)
			return;
	}
	perflib_reaper_forget(guid, &ctl);
}

void perflib_reaper_root_done(void)
{
	char dir[PATH_MAX];
	GUID *guids = NULL;
	size_t nr = 1;

	/* the root's last counter set is gone: so goes its dispatcher (and its pins) */
	if (perflib_store_list(&guids, &nr) || nr)
		goto out;
	exit_path(dir, sizeof(dir), NULL);
	if (access(dir, F_OK) == 0)
		perflib_remove_dir(dir);
out:
	free(guids);
}

void perflib_reaper_forget(const GUID *guid, const struct perflib_ctl *ctl)
{
	uint8_t owner[16];
	uint32_t id;
	int ids_fd, progs_fd;

	if (!ctl->exit_id || ctl->exit_id >= PERFLIB_EXIT_IDS)
		return;
	id = ctl->exit_id;
	ids_fd = exit_pin_open("ids");
	progs_fd = exit_pin_open("progs");
	/* only if the id is still this set's */
	if (ids_fd >= 0 && progs_fd >= 0 && !bpf_map_lookup_elem(ids_fd, &id, owner) &&
	    !memcmp(owner, guid, 16)) {
		bpf_map_delete_elem(progs_fd, &id);
		bpf_map_delete_elem(ids_fd, &id);
	}
	if (ids_fd >= 0)
		close(ids_fd);
	if (progs_fd >= 0)
		close(progs_fd);
}

/* ---- providers in the dispatcher's table ---------------------------------------------- */

static pthread_mutex_t exit_lock = PTHREAD_MUTEX_INITIALIZER;

/* add (@join) or remove exit id @id in this process's entry of `provs` */
static void exit_entry(uint32_t id, bool join)
{
	struct perflib_exit_key key = {0};
	struct perflib_exit_val v;
	uint32_t i, pid;
	uint64_t stamp;
	int fd;

	if (!id)
		return;
	fd = exit_pin_open("provs");
	if (fd < 0)
		return; /* no dispatcher, or no access: lazy reaping */
	perflib_self(&pid, &stamp);
	key.pid = pid;
	key.stamp = stamp;
	pthread_mutex_lock(&exit_lock);
	if (bpf_map_lookup_elem(fd, &key, &v))
		memset(&v, 0, sizeof(v));
	if (v.nr > PERFLIB_EXIT_SETS)
		v.nr = PERFLIB_EXIT_SETS;
	for (i = 0; i < v.nr && v.ids[i] != id; i++)
		;
	if (join && i == v.nr) {
		if (v.nr < PERFLIB_EXIT_SETS)
			v.ids[v.nr++] = id;
		else
			v.overflow = 1;
		if (bpf_map_update_elem(fd, &key, &v, BPF_ANY))
			pr_debug("exit reaper: no entry for this process (%s): lazy reaping\n",
				 strerror(errno));
	} else if (!join && i < v.nr) {
		v.ids[i] = v.ids[--v.nr];
		if (!v.nr && !v.overflow)
			bpf_map_delete_elem(fd, &key);
		else
			bpf_map_update_elem(fd, &key, &v, BPF_ANY);
	}
	pthread_mutex_unlock(&exit_lock);
	close(fd);
}

void perflib_exit_join(const struct perflib_store *map)
{
	if (map->ctl)
		exit_entry(exit_id_of(map), true);
}

void perflib_exit_leave(const struct perflib_store *map)
{
	if (map->ctl)
		exit_entry(exit_id_of(map), false);
}

/* ---- kernel-owned instances ------------------------------------------------------------- */

int perflib_instance_to_kernel(HANDLE provider, PPERF_COUNTERSET_INSTANCE inst)
{
	struct perflib_provider *prov = perflib_provider_lookup(provider);
	struct perflib_ctrset *set;
	uint8_t *slot;
	uint32_t idx;
	int err = 0;

	if (!prov || !inst)
		return -EINVAL;
	pthread_mutex_lock(&prov->lock);
	set = perflib_instance_lookup(prov, inst, &idx);
	if (!set) {
		err = -EINVAL;
		goto out;
	}
	slot = perflib_slot(set->map, idx);
	if (!perflib_slot_to_kernel(slot, perflib_slot_word(slot))) {
		err = -EBUSY;
		goto out;
	}
	atomic_store_explicit(perflib_ctrset_owned(set, idx), 0, memory_order_release);
	set->nr_live--;
out:
	pthread_mutex_unlock(&prov->lock);
	return err;
}

int perflib_kernel_instances_take(HANDLE provider, const GUID *counterset_guid)
{
	struct perflib_provider *prov = perflib_provider_lookup(provider);
	struct perflib_ctrset *set;
	uint8_t *slot;
	uint64_t start, w;
	uint32_t pid, i, c, id;
	int n = 0;

	if (!prov || !counterset_guid)
		return -EINVAL;
	perflib_self(&pid, &start);
	pthread_mutex_lock(&prov->lock);
	set = perflib_ctrset_find(prov, counterset_guid);
	for (c = 0; set && c < set->nr_classes; c++) {
		for (i = 0; i < perflib_ctrset_slots(set, c); i++) {
			id = perflib_slot_id_make(c, i);
			slot = perflib_slot_map(set->map, id);
			if (!slot)
				continue;
			w = perflib_slot_word(slot);
			if (perflib_word_state(w) != PERFLIB_SLOT_LIVE || perflib_word_pid(w))
				continue;
			/* in our owner summary before it is ours (the exit reaper walks it) */
			perflib_owner_mark(set->map, id, true);
			if (!perflib_slot_from_kernel(slot, w, pid, start))
				continue;
			atomic_store_explicit(perflib_ctrset_owned(set, id), 1,
					      memory_order_release);
			set->nr_live++;
			n++;
		}
	}
	pthread_mutex_unlock(&prov->lock);
	return set ? n : -ENOENT;
}
