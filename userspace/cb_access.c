// SPDX-License-Identifier: MIT
/*
 * cb_access.c - who may ask the callback service of this process (docs/CALLBACKS.md,
 * "Access rule"): a peer may make requests about a counter set when it could read the
 * set's data pin, judged from its credentials at connect time (SO_PEERCRED, SO_PEERGROUPS)
 * against the pin's owner, group and mode as the kernel's permission check does (owner
 * class, else group class, else other). Effective uid 0 may always. The I/O thread asks
 * first, at accept, whether the peer may read any counter set of this process at all.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cb_svc.h"

/* is @gid among the peer's groups (effective and supplementary, as at connect time)? */
static bool peer_in_group(int fd, gid_t egid, gid_t gid)
{
	gid_t small[64], *groups = small;
	socklen_t len = sizeof(small);
	bool found = false;
	size_t i;

	if (egid == gid)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len)) {
		if (errno != ERANGE || len > SVC_MAX_GROUPS * sizeof(gid_t))
			return false;
		groups = malloc(len);
		if (!groups || getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len)) {
			free(groups);
			return false;
		}
	}
	for (i = 0; i < len / sizeof(gid_t) && !found; i++)
		found = groups[i] == gid;
	if (groups != small)
		free(groups);
	return found;
}

int perflib_cb_peer_may_read(int fd, uid_t uid, gid_t gid, const GUID *guid)
{
	char dir[PATH_MAX];
	struct stat st;
	mode_t bit;

	if (uid == 0)
		return 0;
	if (perflib_store_dir(guid, dir, sizeof(dir)) || perflib_store_pin_stat(dir, &st))
		return -EACCES;
	if (st.st_uid == uid)
		bit = S_IRUSR;
	else if (peer_in_group(fd, gid, st.st_gid))
		bit = S_IRGRP;
	else
		bit = S_IROTH;
	if (st.st_mode & bit)
		return 0;
	pr_debug("callback service: uid %u may not read %s\n", (unsigned int)uid, dir);
	return -EACCES;
}

bool perflib_cb_peer_may_read_any(int fd, uid_t uid, gid_t gid)
{
	struct perflib_provider *prov;
	struct perflib_ctrset *set;
	bool may = uid == 0;

	/* the list lock keeps every listed provider and its sets alive */
	perflib_providers_lock();
	for (prov = perflib_providers_first(); prov && !may; prov = prov->next) {
		for (set = atomic_load(&prov->sets); set && !may; set = set->next)
			may = !perflib_cb_peer_may_read(fd, uid, gid, &set->guid);
	}
	perflib_providers_unlock();
	return may;
}
