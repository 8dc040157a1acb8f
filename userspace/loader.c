// SPDX-License-Identifier: MIT
/*
 * loader.c - the user-space side of perflib_bpf.h (perflib_bpf_loader.h, PERFLIB_1.4): a
 * loader opens a counter set's pins where the library keeps them (the pin root as
 * config.c resolves it), reads its geometry from an info value the library checked
 * (perflib_info_check: magic, layout version, every size), and hands the pins to libbpf.
 * The library's own loader (reaper.c) takes its geometry from here too.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "perflib_bpf_loader.h"

/*
 * The versioned entry points (opts.c's way): the geometry grew in PERFLIB_1.5 (the per-CPU
 * fields at its end), so what a loader built before holds, a 32-byte geometry alone or in
 * its struct perflib_bpf_counterset, gets the 1.4 functions: the same values, the first
 * 32 bytes. perflib_bpf_counterset_close, _reuse, _reuse_live and _guid read only the fds,
 * at the same offsets in both.
 */
#define PERFLIB_SYMVER(impl, name, ver) __asm__(".symver " #impl "," #name ver)

struct perflib_bpf_counterset_1_4 {
	int info_fd, data_fd, index_fd, live_fd;
	__u8 geo[PERFLIB_BPF_GEOMETRY_1_4_SIZE];
};

PERFLIB_API void perflib_bpf_geometry_from_class_1_5(const struct perflib_info *info, __u32 cls,
						     struct perflib_bpf_geometry *geo);
PERFLIB_API void perflib_bpf_geometry_from_class_1_4(const struct perflib_info *info, __u32 cls,
						     void *geo);
PERFLIB_API void perflib_bpf_geometry_from_info_1_5(const struct perflib_info *info,
						    struct perflib_bpf_geometry *geo);
PERFLIB_API void perflib_bpf_geometry_from_info_1_4(const struct perflib_info *info, void *geo);
PERFLIB_API int perflib_bpf_counterset_open_1_5(const char *root, const char *guid,
						struct perflib_bpf_counterset *cs);
PERFLIB_API int perflib_bpf_counterset_open_1_4(const char *root, const char *guid,
						struct perflib_bpf_counterset_1_4 *cs);

void perflib_bpf_geometry_from_class_1_5(const struct perflib_info *info, __u32 cls,
					 struct perflib_bpf_geometry *geo)
{
	const struct perflib_info_counter *ic = (const void *)(info + 1);
	const struct perflib_info_class *c;
	__u32 i, nr_pcpu = 0;

	memset(geo, 0, sizeof(*geo));
	if (cls >= info->nr_classes || cls >= PERFLIB_MAX_CLASSES)
		return;
	c = &info->classes[cls];
	geo->slot_size = c->slot_size;
	geo->capacity = c->capacity;
	geo->nr_counters = info->nr_counters;
	geo->name_max = c->name_max;
	geo->name_offset = info->name_offset;
	geo->instance_type = info->instance_type;
	geo->nr_procs = info->nr_procs;
	geo->seg0_slots = c->seg0_slots;
	/* per-CPU counters: among the first PERFLIB_PCPU_MAX_POS positions (perflib_info_check) */
	for (i = 0; i < info->nr_counters && i < PERFLIB_PCPU_MAX_POS; i++) {
		if (ic[i].pcpu) {
			geo->pcpu_mask |= 1ULL << i;
			nr_pcpu++;
		}
	}
	if (nr_pcpu && info->nr_cpus) {
		geo->pcpu_offset = c->pcpu_offset;
		geo->nr_cpus = info->nr_cpus;
		geo->pcpu_lines = perflib_pcpu_lines(nr_pcpu);
	} else {
		geo->pcpu_mask = 0;
	}
}
PERFLIB_SYMVER(perflib_bpf_geometry_from_class_1_5, perflib_bpf_geometry_from_class,
	       "@@PERFLIB_1.5");

void perflib_bpf_geometry_from_class_1_4(const struct perflib_info *info, __u32 cls, void *geo)
{
	struct perflib_bpf_geometry g;

	perflib_bpf_geometry_from_class_1_5(info, cls, &g);
	memcpy(geo, &g, PERFLIB_BPF_GEOMETRY_1_4_SIZE);
}
PERFLIB_SYMVER(perflib_bpf_geometry_from_class_1_4, perflib_bpf_geometry_from_class,
	       "@PERFLIB_1.4");

void perflib_bpf_geometry_from_info_1_5(const struct perflib_info *info,
					struct perflib_bpf_geometry *geo)
{
	perflib_bpf_geometry_from_class_1_5(info, 0, geo);
}
PERFLIB_SYMVER(perflib_bpf_geometry_from_info_1_5, perflib_bpf_geometry_from_info, "@@PERFLIB_1.5");

void perflib_bpf_geometry_from_info_1_4(const struct perflib_info *info, void *geo)
{
	perflib_bpf_geometry_from_class_1_4(info, 0, geo);
}
PERFLIB_SYMVER(perflib_bpf_geometry_from_info_1_4, perflib_bpf_geometry_from_info, "@PERFLIB_1.4");

void perflib_bpf_counterset_close(struct perflib_bpf_counterset *cs)
{
	int *fds[4];
	int i;

	if (!cs)
		return;
	fds[0] = &cs->info_fd;
	fds[1] = &cs->data_fd;
	fds[2] = &cs->index_fd;
	fds[3] = &cs->live_fd;
	for (i = 0; i < 4; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/*
 * the info value of the set behind @info_fd, checked as the library checks what it opens
 * (perflib_info_check); *ret_info is malloc'd. 0, -EBADMSG, -EPROTO, -ENOMEM, -errno
 */
static int info_read(int info_fd, struct perflib_info **ret_info)
{
	struct bpf_map_info mi;
	__u32 len = sizeof(mi), key = 0;
	void *buf;
	int err;

	memset(&mi, 0, sizeof(mi));
	if (bpf_obj_get_info_by_fd(info_fd, &mi, &len))
		return -errno;
	if (mi.type != BPF_MAP_TYPE_ARRAY || mi.key_size != sizeof(key) || mi.max_entries != 1 ||
	    mi.value_size < sizeof(struct perflib_info))
		return -EBADMSG;
	buf = calloc(1, mi.value_size);
	if (!buf)
		return -ENOMEM;
	err = bpf_map_lookup_elem(info_fd, &key, buf) ? -errno : 0;
	if (!err)
		err = perflib_info_check(buf, mi.value_size);
	if (err) {
		free(buf);
		return err;
	}
	*ret_info = buf;
	return 0;
}

int perflib_bpf_counterset_open_1_5(const char *root, const char *guid,
				    struct perflib_bpf_counterset *cs)
{
	/* the index is in the lives: its PERFLIB_INDEX_MAP gets a second fd of that pin */
	static const char *const names[4] = {"info", "segs", "lives", "lives"};
	struct perflib_info *info = NULL;
	char dir[PATH_MAX];
	int *fds[4], i, err;
	GUID id;

	if (!cs)
		return -EINVAL;
	memset(cs, 0, sizeof(*cs));
	cs->info_fd = cs->data_fd = cs->index_fd = cs->live_fd = -1;
	if (!guid)
		return -EINVAL;
	/* the canonical spelling: braces and upper case find the set, nothing else is a path */
	err = perflib_guid_from_string(guid, &id);
	if (!err)
		err = perflib_root_dir(root, &id, dir, sizeof(dir));
	if (err)
		return err;
	fds[0] = &cs->info_fd;
	fds[1] = &cs->data_fd;
	fds[2] = &cs->index_fd;
	fds[3] = &cs->live_fd;
	for (i = 0; i < 4; i++) {
		*fds[i] = perflib_pin_open(dir, names[i], i == 0);
		if (*fds[i] < 0) {
			err = *fds[i];
			*fds[i] = -1;
			goto out;
		}
	}
	err = info_read(cs->info_fd, &info);
	if (err)
		goto out;
	perflib_bpf_geometry_from_info_1_5(info, &cs->geo);
	free(info);
	return 0;
out:
	perflib_bpf_counterset_close(cs);
	return err;
}
PERFLIB_SYMVER(perflib_bpf_counterset_open_1_5, perflib_bpf_counterset_open, "@@PERFLIB_1.5");

int perflib_bpf_counterset_open_1_4(const char *root, const char *guid,
				    struct perflib_bpf_counterset_1_4 *cs)
{
	struct perflib_bpf_counterset now;
	int err;

	if (!cs)
		return -EINVAL;
	err = perflib_bpf_counterset_open_1_5(root, guid, &now);
	cs->info_fd = now.info_fd;
	cs->data_fd = now.data_fd;
	cs->index_fd = now.index_fd;
	cs->live_fd = now.live_fd;
	memcpy(cs->geo, &now.geo, sizeof(cs->geo));
	return err;
}
PERFLIB_SYMVER(perflib_bpf_counterset_open_1_4, perflib_bpf_counterset_open, "@PERFLIB_1.4");

int perflib_bpf_counterset_reuse(const struct perflib_bpf_counterset *cs, struct bpf_map *data,
				 struct bpf_map *index)
{
	int err = 0;

	if (!cs)
		return -EINVAL;
	if (data)
		err = bpf_map__reuse_fd(data, cs->data_fd);
	if (!err && index)
		err = bpf_map__reuse_fd(index, cs->index_fd);
	return err;
}

int perflib_bpf_counterset_reuse_live(const struct perflib_bpf_counterset *cs, struct bpf_map *live)
{
	if (!cs || !live)
		return -EINVAL;
	return bpf_map__reuse_fd(live, cs->live_fd);
}

int perflib_bpf_counterset_guid(const struct perflib_bpf_counterset *cs, __u8 guid[16])
{
	struct perflib_info *info;
	int err;

	if (!cs || !guid)
		return -EINVAL;
	err = info_read(cs->info_fd, &info);
	if (err)
		return err;
	memcpy(guid, info->counterset_guid, 16);
	free(info);
	return 0;
}
