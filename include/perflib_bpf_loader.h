/* SPDX-License-Identifier: MIT */
/*
 * perflib_bpf_loader.h - what the user-space loader of a BPF program that uses perflib_bpf.h
 * needs (PERFLIB_1.4): open a counter set's pins, read its slot geometry, hand the pins to
 * libbpf before the program loads. The functions are libperflib's (link -lperflib,
 * `pkg-config --libs perflib`): the layout checks live in the library, not in every loader.
 *
 *	struct perflib_bpf_counterset cs;
 *
 *	err = perflib_bpf_counterset_open(NULL, "<counter-set GUID>", &cs);
 *	skel = demo_bpf__open();
 *	skel->rodata->perflib_geo = cs.geo;
 *	err = perflib_bpf_counterset_reuse(&cs, skel->maps.slots, skel->maps.idx);
 *	err = demo_bpf__load(skel);
 *	perflib_bpf_counterset_close(&cs);	(the loaded program keeps its maps)
 *
 * Include this header before the program's skeleton: the skeleton's read-only data names
 * struct perflib_bpf_geometry (layout.h). Map arguments come in one order everywhere, in
 * these functions and in the BPF helpers alike: data, index, live (docs/BPF.md).
 *
 * The reuse functions call bpf_map__reuse_fd() of the libbpf libperflib is linked with: a
 * loader must use that same libbpf (the shared one, or both static archives in one link).
 * Functions return 0 or a negative errno.
 */
#ifndef PERFLIB_BPF_LOADER_H
#define PERFLIB_BPF_LOADER_H

#include "perflib-linux.h"
#include "layout.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpf_map; /* libbpf's <bpf/libbpf.h> */

/* the pins of one counter set, opened for a loader (size class 0: layout.h) */
struct perflib_bpf_counterset {
	int info_fd;			 /* info pin, read-only */
	int data_fd;			 /* segs pin (segment -> data map), read-write */
	int index_fd;			 /* lives pin again: the index tables, read-write */
	int live_fd;			 /* lives pin (segment -> live bitmap), read-write */
	struct perflib_bpf_geometry geo; /* size class 0's, from the info map */
};

/*
 * perflib_bpf_counterset_open - open the pins of counter set @guid (text form, with or
 * without braces, any case) under @root and read its geometry into @cs->geo. @root NULL
 * is the root the library uses: perflib_set_pin_root(), else $PERFLIB_ROOT, else
 * PERFLIB_DEFAULT_ROOT (perflib_pin_root()); any other must be an absolute path shorter
 * than PATH_MAX/2, as perflib_set_pin_root() takes. The segs and lives pins need write
 * permission. On failure every fd of @cs is -1. Returns 0; -EINVAL (NULL @guid or @cs, a
 * malformed GUID, a bad @root), -ENOENT (not registered), -EACCES, -EBADMSG (the info map
 * is not a valid perflib info value), -EPROTO (a layout version this library does not
 * know), -ENAMETOOLONG, -ENOMEM. Close with perflib_bpf_counterset_close(). (PERFLIB_1.4; the
 * geometry's per-CPU fields PERFLIB_1.5: a loader built before gets the 32 bytes it knows)
 */
PERFLIB_API int perflib_bpf_counterset_open(const char *root, const char *guid,
					    struct perflib_bpf_counterset *cs);

/* perflib_bpf_counterset_close - close the fds of @cs (NULL ignored); they become -1. */
PERFLIB_API void perflib_bpf_counterset_close(struct perflib_bpf_counterset *cs);

/*
 * perflib_bpf_counterset_reuse - make the program's PERFLIB_DATA_MAP @data and
 * PERFLIB_INDEX_MAP @index (either may be NULL) the pinned ones: bpf_map__reuse_fd() before
 * the program is loaded. Returns 0, -EINVAL (NULL @cs), or libbpf's -errno.
 */
PERFLIB_API int perflib_bpf_counterset_reuse(const struct perflib_bpf_counterset *cs,
					     struct bpf_map *data, struct bpf_map *index);

/*
 * perflib_bpf_counterset_reuse_live - make the program's PERFLIB_LIVE_MAP @live the set's
 * lives pin (programs that create or delete instances). 0, -EINVAL, or libbpf's -errno.
 */
PERFLIB_API int perflib_bpf_counterset_reuse_live(const struct perflib_bpf_counterset *cs,
						  struct bpf_map *live);

/*
 * perflib_bpf_counterset_guid - the counter-set GUID of @cs as the 16 bytes of a
 * PERF_COUNTERSET_INSTANCE (Windows byte order) into @guid, for the program's read-only data
 * (the guid argument of perflib_instance_create). 0, -EINVAL, -EBADMSG, -ENOMEM, or the
 * kernel's -errno.
 */
PERFLIB_API int perflib_bpf_counterset_guid(const struct perflib_bpf_counterset *cs, __u8 guid[16]);

/*
 * perflib_bpf_geometry_from_class - the geometry of size class @cls of info value @info
 * (read from a counter set's info map and checked) into @geo: the slots of the class's pins
 * (segs<cls>, lives<cls>; layout.h), and where its per-CPU counters keep their parts
 * (PERFLIB_1.5). @cls at or past info->nr_classes gives zeros.
 */
PERFLIB_API void perflib_bpf_geometry_from_class(const struct perflib_info *info, __u32 cls,
						 struct perflib_bpf_geometry *geo);

/*
 * perflib_bpf_geometry_from_info - the geometry of size class 0 of @info: the class of the
 * names a program may create and the one the segs and lives pins hold
 */
PERFLIB_API void perflib_bpf_geometry_from_info(const struct perflib_info *info,
						struct perflib_bpf_geometry *geo);

#ifdef __cplusplus
}
#endif

#endif /* PERFLIB_BPF_LOADER_H */
