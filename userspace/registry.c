// SPDX-License-Identifier: MIT
/*
 * registry.c - registering and unregistering counter sets from full registrations (what
 * lodctr and unlodctr do with a manifest).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* the registration-defining part of two info values: everything but capacity and sizes */
static bool same_registration(const struct perflib_info *a, const struct perflib_info *b)
{
	size_t ca = a->nr_counters * sizeof(struct perflib_info_counter);

	if (a->instance_type != b->instance_type || a->nr_counters != b->nr_counters ||
	    memcmp(a->provider_guid, b->provider_guid, 16) || a->flags != b->flags ||
	    a->strings_size != b->strings_size || a->detail_level != b->detail_level)
		return false;
	/* counters and strings are laid out identically for identical registrations */
	return !memcmp(a + 1, b + 1, ca) &&
	       !memcmp((const uint8_t *)a + a->strings_offset,
		       (const uint8_t *)b + b->strings_offset, a->strings_size);
}

/* perflib_register_counterset() of the API, behind the opts.c versions: @user_opts read by sz */
int perflib_registry_register(const struct perflib_counterset_reg *reg,
			      const struct perflib_pin_opts *user_opts)
{
	struct perflib_store *map = NULL;
	struct perflib_pin_opts opts;
	struct perflib_info *info;
	size_t size;
	int err;

	if (!reg || !reg->counters || !reg->nr_counters)
		return -EINVAL;
	perflib_pin_defaults(&opts);
	if (user_opts) {
		if (user_opts->mode & ~0666)
			return -EINVAL;
		if (user_opts->mode)
			opts.mode = user_opts->mode;
		opts.uid = user_opts->uid;
		if (user_opts->gid != (gid_t)-1)
			opts.gid = user_opts->gid;
		if (user_opts->capacity)
			opts.capacity = user_opts->capacity;
		if (user_opts->name_max)
			opts.name_max = user_opts->name_max;
	}
	if (opts.capacity > PERFLIB_CAPACITY_MAX || opts.name_max < 2 ||
	    opts.name_max > PERF_MAX_INSTANCE_NAME + 1)
		return -EINVAL;
	err = perflib_info_build(reg, PERFLIB_INFO_REGISTERED | PERFLIB_INFO_HAS_NAMES, &opts,
				 &info, &size);
	if (err)
		return err;
	err = perflib_store_open(&reg->counterset_guid, false, &map);
	if (err == -ENOENT) {
		err = perflib_store_create(info, size, &opts, &map);
		if (err == 0) {
			/* kernel-assisted cleanup of dead providers, when privileged (reaper.c) */
			perflib_reaper_attach(map);
			perflib_store_close(map);
			free(info);
			return 0;
		}
		if (err < 0) {
			free(info);
			return err;
		}
	} else if (err) {
		free(info);
		return err;
	}
	/* already pinned (by us just now racing, or before): identical is a no-op */
	err = same_registration(map->info, info) ? -EEXIST : -ENOTUNIQ;
	perflib_store_close(map);
	free(info);
	return err;
}

/* unpin a counter set; its reaper program leaves the root's exit dispatcher first, and the
 * dispatcher goes with the root's last set */
static int registry_remove(const GUID *counterset_guid)
{
	int err;

	perflib_reaper_set_removing(counterset_guid);
	err = perflib_store_remove(counterset_guid);
	if (!err)
		perflib_reaper_root_done();
	return err;
}

int perflib_unregister_counterset(const GUID *counterset_guid, bool force)
{
	struct perflib_store *map;
	uint32_t c, i, live = 0;
	uint64_t w;
	int err;

	if (!counterset_guid)
		return -EINVAL;
	err = perflib_store_open(counterset_guid, true, &map);
	if (err == -EBADMSG || err == -EPROTO) {
		/* a corrupt counter set, or one of another layout, can still be removed */
		return force ? registry_remove(counterset_guid) : err;
	}
	if (err)
		return err;
	for (c = 0; c < map->nr_classes; c++) {
		for (i = 0; i < perflib_store_slots(map, c); i++) {
			uint32_t id = perflib_slot_id_make(c, i);

			if (!perflib_slot_map(map, id)) {
				live++; /* cannot be read: not known to be free */
				continue;
			}
			w = perflib_slot_word(perflib_slot(map, id));
			if (perflib_word_state(w) == PERFLIB_SLOT_FREE)
				continue;
			if (!perflib_slot_reap(map, id))
				live++;
		}
	}
	perflib_store_close(map);
	if (live && !force)
		return -EBUSY;
	return registry_remove(counterset_guid);
}
