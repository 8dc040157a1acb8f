// SPDX-License-Identifier: MIT
/*
 * reaper.c - help from the kernel with instance lifetimes:
 *  - the exit reaper: a BPF program on sched_process_exit (bpf/reaper.bpf.c) that frees a
 *    dead provider's slots and index keys as the process exits, loaded once per counter
 *    set and kept attached by its link pinned at <root>/<guid>/reaper. Loaded by
 *    perflib_register_counterset (lodctr) and by the first privileged provider of the
 *    counter set; without CAP_BPF nothing happens and the lazy reaping of instance.c
 *    stays the only cleanup;
 *  - kernel-owned instances: slots handed to a BPF program (kcounters), which stay live
 *    without any process (owner pid 0, owner_start PERFLIB_OWNER_KERNEL) until a loader
 *    takes them back and deletes them.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "internal.h"
#include "perflib_bpf.h"
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

/* libbpf's messages go through the library's print hook, as debug output */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg;

	if (level == LIBBPF_DEBUG || vasprintf(&msg, fmt, ap) < 0)
		return 0;
	pr_debug("%s", msg); /* "libbpf: ..." */
	free(msg);
	return 0;
}

int perflib_reaper_attach(const struct perflib_set_map *map)
{
	struct reaper_bpf *skel = NULL;
	struct bpf_link *link = NULL;
	libbpf_print_fn_t old_print;
	char dir[PATH_MAX], path[PATH_MAX + 16];
	long tck;
	int err;

	if (!reaper_enabled())
		return -EOPNOTSUPP;
	if (!map->writable)
		return -EBADF;
	err = perflib_set_dir(&map->guid, dir, sizeof(dir));
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/" REAPER_PIN, dir);
	/* the common case: attached by lodctr or by an earlier provider */
	if (access(path, F_OK) == 0)
		return 0;
	if (!may_trace()) {
		pr_debug("no CAP_BPF/CAP_PERFMON: dead providers are reaped lazily\n");
		return -EPERM;
	}
	/* libbpf's print hook is process-wide: borrowed for the load, then given back */
	old_print = libbpf_set_print(libbpf_print);
	skel = reaper_bpf__open();
	if (!skel) {
		err = -errno;
		goto out;
	}
	perflib_bpf_geometry_from_info(map->info, &skel->rodata->perflib_geo);
	tck = sysconf(_SC_CLK_TCK);
	skel->rodata->clk_tck = tck > 0 ? (uint64_t)tck : 100;
	err = bpf_map__reuse_fd(skel->maps.slots, map->segs_fd);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.idx, map->idxs_fd);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.live, map->lives_fd);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.procs, map->procs_fd);
	if (!err)
		err = reaper_bpf__load(skel);
	if (err)
		goto out;
	link = bpf_program__attach(skel->progs.perflib_reaper);
	if (!link) {
		err = -errno;
		goto out;
	}
	/* the pin keeps it attached; if another process pinned one first, ours goes away */
	err = bpf_link__pin(link, path);
	if (err == -EEXIST)
		err = 0;
	else if (!err)
		pr_debug("exit reaper attached at %s\n", path);
out:
	if (err)
		pr_debug("exit reaper not attached (%s): dead providers are reaped lazily\n",
			 strerror(-err));
	bpf_link__destroy(link);
	reaper_bpf__destroy(skel);
	libbpf_set_print(old_print);
	return err;
}

/* ---- kernel-owned instances ------------------------------------------------------------- */

int perflib_instance_to_kernel(HANDLE provider, PPERF_COUNTERSET_INSTANCE inst)
{
	struct perflib_provider *prov = perflib_provider_lookup(provider);
	struct perflib_ctrset *set;
	struct perflib_slot_hdr *h;
	uint64_t w, start;
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
	h = (void *)perflib_slot(set->map, idx);
	w = perflib_slot_word((uint8_t *)h);
	start = __atomic_load_n(&h->owner_start, __ATOMIC_RELAXED);
	/* the marker first: from now on every liveness check says alive, whatever the pid */
	__atomic_store_n(&h->owner_start, PERFLIB_OWNER_KERNEL, __ATOMIC_RELAXED);
	h->proc_index = 0xFFFFFFFF;
	/* same generation: the index key's generation keeps matching the slot */
	if (!perflib_slot_cas((uint8_t *)h, w,
			      perflib_make_word(PERFLIB_SLOT_LIVE, perflib_word_gen(w), 0))) {
		__atomic_store_n(&h->owner_start, start, __ATOMIC_RELAXED);
		err = -EBUSY;
		goto out;
	}
	atomic_store_explicit(&set->owned[idx], 0, memory_order_release);
	set->nr_live--;
out:
	pthread_mutex_unlock(&prov->lock);
	return err;
}

int perflib_kernel_instances_take(HANDLE provider, const GUID *counterset_guid)
{
	struct perflib_provider *prov = perflib_provider_lookup(provider);
	struct perflib_ctrset *set;
	struct perflib_slot_hdr *h;
	uint64_t w, start;
	uint32_t pid, i;
	int n = 0;

	if (!prov || !counterset_guid)
		return -EINVAL;
	perflib_self(&pid, &start);
	pthread_mutex_lock(&prov->lock);
	set = perflib_ctrset_find(prov, counterset_guid);
	for (i = 0; set && i < perflib_set_slots(set->map); i++) {
		h = (void *)perflib_slot(set->map, i);
		w = perflib_slot_word((uint8_t *)h);
		if (perflib_word_state(w) != PERFLIB_SLOT_LIVE || perflib_word_pid(w) != 0 ||
		    __atomic_load_n(&h->owner_start, __ATOMIC_RELAXED) != PERFLIB_OWNER_KERNEL)
			continue;
		/* pid first (the marker still says alive), then this process's start time */
		if (!perflib_slot_cas(
			    (uint8_t *)h, w,
			    perflib_make_word(PERFLIB_SLOT_LIVE, perflib_word_gen(w), pid)))
			continue;
		__atomic_store_n(&h->owner_start, start, __ATOMIC_RELAXED);
		h->proc_index = set->proc_index < 0 ? 0xFFFFFFFF : (uint32_t)set->proc_index;
		atomic_store_explicit(&set->owned[i], 1, memory_order_release);
		set->nr_live++;
		n++;
	}
	pthread_mutex_unlock(&prov->lock);
	return set ? n : -ENOENT;
}
