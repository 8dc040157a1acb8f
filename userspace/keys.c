// SPDX-License-Identifier: MIT
/*
 * keys.c - the <set>/keys program (bpf/keys.bpf.c): the lookups of an index key in every
 * segment of a counter set, done in the kernel in one system call instead of one per
 * segment. Loaded and pinned by the first grower of a class to a second segment (CAP_BPF, as
 * growing is: a set whose classes have one segment each has nothing to look through, and
 * saves the program's 4 KiB of kernel memory), opened by providers when they need it; a set
 * without it (where the load failed) is served by the lookups one by one, which give the
 * same answer. PERFLIB_KEYS_PROG=0 turns it off (tests and benches compare the two ways).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "perflib_bpf.h"
#include "keys.skel.h"

#define KEYS_PIN "keys"

static bool keys_enabled(void)
{
	const char *e = getenv("PERFLIB_KEYS_PROG");

	return !e || strcmp(e, "0") != 0;
}

int perflib_keys_pin(const int idxs[PERFLIB_MAX_CLASSES], const char *dir,
		     const struct perflib_pin_opts *opts)
{
	char path[PATH_MAX + 8];
	libbpf_print_fn_t old_print;
	struct keys_bpf *skel;
	int err;

	if (!keys_enabled())
		return -EOPNOTSUPP;
	snprintf(path, sizeof(path), "%s/" KEYS_PIN, dir);
	if (!access(path, F_OK))
		return 0;
	old_print = libbpf_set_print(perflib_libbpf_print);
	skel = keys_bpf__open();
	err = skel ? 0 : -errno;
	/* each class's idxs; a set with fewer classes gives class 0's for the others */
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.idx, idxs[0]);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.idx1, idxs[1]);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.idx2, idxs[2]);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.idx3, idxs[3]);
	if (!err)
		err = keys_bpf__load(skel);
	if (!err)
		err = perflib_pin_one(bpf_program__fd(skel->progs.perflib_keys), dir, KEYS_PIN,
				      opts);
	if (err)
		pr_debug("no keys program for the counter set (%s): creates look segment by "
			 "segment\n",
			 strerror(-err));
	keys_bpf__destroy(skel);
	libbpf_set_print(old_print);
	return err;
}

void perflib_keys_unpin(const struct perflib_store *map)
{
	char dir[PATH_MAX], path[PATH_MAX + 8];

	if (perflib_store_dir(&map->guid, dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/" KEYS_PIN, dir);
	if (!unlink(path))
		pr_debug("keys program of %s unpinned: every class has one segment\n", dir);
}

void perflib_keys_open(struct perflib_store *map)
{
	/* opened when a class first has a second segment: one fd fewer per set till then */
	map->keys_fd = keys_enabled() ? PERFLIB_KEYS_LAZY : -1;
}

/* the pinned program, opened on first use; -1 when there is none */
static int keys_fd_get(struct perflib_store *map)
{
	int fd = __atomic_load_n(&map->keys_fd, __ATOMIC_ACQUIRE), lazy = PERFLIB_KEYS_LAZY;
	char dir[PATH_MAX], path[PATH_MAX + 8];

	if (fd != PERFLIB_KEYS_LAZY)
		return fd;
	fd = -1;
	if (!perflib_store_dir(&map->guid, dir, sizeof(dir))) {
		snprintf(path, sizeof(path), "%s/" KEYS_PIN, dir);
		fd = bpf_obj_get(path);
		if (fd < 0)
			fd = -1;
	}
	if (__atomic_compare_exchange_n(&map->keys_fd, &lazy, fd, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return fd;
	/* another thread opened it first */
	if (fd >= 0)
		close(fd);
	return lazy;
}

int perflib_keys_where(struct perflib_store *map, uint32_t cls, const struct perflib_index_key *key,
		       uint32_t nr_segs, uint32_t skip, uint64_t *ret_mask)
{
	struct perflib_keys_args args = {.key = *key, .nr_segs = nr_segs, .skip = skip, .cls = cls};
	/* a syscall program writes its context back into ctx_in */
	LIBBPF_OPTS(bpf_test_run_opts, topts, .ctx_in = &args, .ctx_size_in = sizeof(args));
	int fd;

	if (cls >= map->nr_classes)
		return -ENOENT;
	fd = keys_fd_get(map);
	if (fd < 0)
		return -ENOENT;
	if (bpf_prog_test_run_opts(fd, &topts)) {
		int err = -errno;

		/* not allowed here (or gone): the lookups one by one from now on */
		pr_debug("keys program cannot run (%s)\n", strerror(-err));
		if (__atomic_exchange_n(&map->keys_fd, -1, __ATOMIC_RELAXED) == fd)
			close(fd);
		return err;
	}
	*ret_mask = args.mask;
	return 0;
}
