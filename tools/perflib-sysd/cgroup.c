// SPDX-License-Identifier: MIT
/*
 * cgroup.c - Cgroup: one instance per cgroup v2 (name = path with '\' for '/', InstanceId =
 * cgroup id), made and deleted by the cgroup_mkdir/rmdir programs, counted by the sample and
 * page-fault programs; the cgroups that existed at the start are added by a walk.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sysd.h"

static int cgroup_prepare(struct sd *sd)
{
	struct perflib_bpf_counterset *cs = &sd->cs[SET_CG];
	struct sysd_bpf *skel = sd->skel;
	int err;

	skel->rodata->geo_cg = cs->geo;
	err = perflib_bpf_counterset_guid(cs, (__u8 *)skel->rodata->cg_guid);
	if (!err)
		err = sd_reserve(sd, SET_CG, sd->max_cg);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.cg_map, cs->geo.capacity);
	if (!err)
		err = perflib_bpf_counterset_reuse(cs, skel->maps.cg_slots, skel->maps.cg_idx);
	if (!err)
		err = perflib_bpf_counterset_reuse_live(cs, skel->maps.cg_live);
	return err;
}

/* @name's instance (@k, @id), handed to the BPF programs under @key in @map; -EEXIST (the
 * programs made it first) is not an error */
static int kinst_map(struct sd *sd, int k, const char *name, ULONG id, struct bpf_map *map,
		     const void *key)
{
	int idx = sd_kinst_quiet(sd, k, name, id);
	__u32 v;

	if (idx == -EEXIST)
		return 0;
	if (idx < 0) {
		sd_err("cannot create instance \"%s\" of \"%s\": %s", name, sd_set_names[k],
		       strerror(-idx));
		return idx;
	}
	v = (__u32)idx;
	if (bpf_map__update_elem(map, key, bpf_map__key_size(map), &v, sizeof(v), BPF_NOEXIST))
		return -errno;
	return idx;
}

/* the cgroup2 mount point, in @buf; NULL when there is none */
static const char *cgroup2_root(char *buf, size_t size)
{
	char line[4096], fs[32];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	const char *ret = NULL;

	while (f && !ret && fgets(line, sizeof(line), f)) {
		if (sd_mi_field(line, 1, true, fs, sizeof(fs)) && !strcmp(fs, "cgroup2"))
			ret = sd_mi_field(line, 5, false, buf, size);
	}
	if (f)
		fclose(f);
	return ret;
}

/* the cgroups that existed at start (the programs add the ones made since) */
static struct sd *walk_sd;
static size_t walk_root_len;
static int walk_err;

static int cg_visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *rel = path + walk_root_len;
	__u64 key = st->st_ino;
	int idx;

	(void)ftw;
	if (type != FTW_D)
		return 0;
	idx = kinst_map(walk_sd, SET_CG, *rel ? rel : "/", (ULONG)key, walk_sd->skel->maps.cg_map,
			&key);
	if (idx < 0 && idx != -ENOSPC) {
		walk_err = idx;
		return 1;
	}
	return 0;
}

static int cgroup_start(struct sd *sd, int *fd)
{
	char root[PATH_MAX];

	(void)fd;
	if (!cgroup2_root(root, sizeof(root))) {
		sd_err("no cgroup2 mount: no Cgroup instances");
		return 0;
	}
	walk_sd = sd;
	walk_root_len = strlen(root);
	walk_err = 0;
	nftw(root, cg_visit, 16, FTW_PHYS | FTW_MOUNT);
	return walk_err;
}

const struct sd_source sd_cgroup = {.prepare = cgroup_prepare, .start = cgroup_start};
