// SPDX-License-Identifier: MIT
/*
 * disk.c - PhysicalDisk (one instance per block device with a size, and _Total) and
 * LogicalDisk (one per mounted block device, and _Total), counted by the block_rq_complete
 * program; the instances are made and deleted in BPF (sd_disk_ctl) when uevents or the
 * mount table report a change, and the free space of each mount is polled once a second.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sysd.h"

/* LogicalDisk positions the service writes (free space) */
enum { LD_FREE_PCT = 7, LD_FREE_BASE, LD_FREE_MB };

/* create (@del 0) or delete the PhysicalDisk (@logical 0) or LogicalDisk instance of device
 * @devt, in BPF (sd_disk_ctl); the slot, 0, or -errno */
static int disk_ctl(struct sysd_bpf *skel, const char *text, __u32 devt, int logical, int del)
{
	struct {
		WCHAR name[64];
		__u32 len, id, devt, logical, del, pad;
		__s64 ret;
	} c;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof(c));
	int n = 0;

	memset(&c, 0, sizeof(c));
	if (text && (n = sd_inst_name(text, c.name)) < 0)
		return n;
	c.len = (__u32)n;
	c.id = devt; /* unique per device; the name may repeat (a disk gone and back) */
	c.devt = devt;
	c.logical = (__u32)logical;
	c.del = (__u32)del;
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sd_disk_ctl), &opts))
		return -errno;
	return (int)c.ret;
}

/* the devices of @map (pd_map, ld_map) in @keys (at most @max); how many */
static int map_keys(struct bpf_map *map, __u32 *keys, int max)
{
	__u32 k, *prev = NULL;
	int n = 0;

	while (n < max && !bpf_map__get_next_key(map, prev, &k, sizeof(k))) {
		keys[n] = k;
		prev = &keys[n++];
	}
	return n;
}

static bool has_key(const __u32 *keys, int n, __u32 k)
{
	while (n-- > 0) {
		if (keys[n] == k)
			return true;
	}
	return false;
}

/* a socket for the kernel's uevents (block devices coming, going, changing size); -1 when
 * there is none (disks are then those of the start) */
static int uevent_open(void)
{
	struct sockaddr_nl a = {.nl_family = AF_NETLINK, .nl_groups = 1};
	int fd =
		socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		sd_err("cannot follow block devices (uevents): %s", strerror(errno));
	return fd;
}

/* the uevents waiting on @fd: true when one was about a block device (or some were lost) */
static bool uevent_block(int fd)
{
	char buf[8192];
	bool block = false;
	ssize_t n, i;

	while ((n = recv(fd, buf, sizeof(buf) - 1, 0)) != 0) {
		if (n < 0) {
			if (errno == ENOBUFS)
				block = true; /* overrun: look again */
			if (errno != EINTR && errno != ENOBUFS)
				break;
			continue;
		}
		buf[n] = 0;
		/* "action@devpath\0KEY=value\0..." */
		for (i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1) {
			if (!strcmp(buf + i, "SUBSYSTEM=block"))
				block = true;
		}
	}
	return block;
}

/* PhysicalDisk: one instance per block device with a size (/sys/block), made for the new
 * ones, deleted for those gone or emptied (a loop device detached); at start and at every
 * block uevent */
static void sync_disks(struct sysd_bpf *skel)
{
	__u32 now[SD_MAX_DISKS], had[SD_MAX_DISKS];
	DIR *d = opendir("/sys/block");
	char path[PATH_MAX];
	struct dirent *de;
	unsigned long size, devt;
	int n = 0, nh, i, r;

	while (d && n < SD_MAX_DISKS && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/size", de->d_name);
		if (sd_sys_read(path, &size, false) || !size)
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/dev", de->d_name);
		if (sd_sys_read(path, &devt, true))
			continue;
		now[n++] = (__u32)devt;
		r = disk_ctl(skel, de->d_name, (__u32)devt, 0, 0);
		if (r < 0 && r != -EEXIST)
			sd_err("cannot create instance \"%s\" of \"PhysicalDisk\": %s", de->d_name,
			       strerror(-r));
	}
	if (d)
		closedir(d);
	nh = map_keys(skel->maps.pd_map, had, SD_MAX_DISKS);
	for (i = 0; i < nh; i++) {
		if (!has_key(now, n, had[i]))
			disk_ctl(skel, NULL, had[i], 0, 1);
	}
}

/* LogicalDisk: one instance per mounted block device (named by its first mount point), made
 * for the devices mounted since, deleted for those no longer mounted; at start and whenever
 * mountinfo says the mount table changed. A device that stays mounted keeps its instance and
 * name; its free space is read where it is mounted now. */
static void sync_mounts(struct sd *sd, struct sysd_bpf *skel)
{
	char line[4096], mp[PATH_MAX], dev[32], src[PATH_MAX];
	__u32 now[SD_MAX_MOUNTS], key;
	char *where[SD_MAX_MOUNTS];
	unsigned int ma, mi;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int n = 0, i, k, r;

	while (f && n < SD_MAX_MOUNTS && fgets(line, sizeof(line), f)) {
		if (!sd_mi_field(line, 5, false, mp, sizeof(mp)) ||
		    !sd_mi_field(line, 3, false, dev, sizeof(dev)) ||
		    !sd_mi_field(line, 2, true, src, sizeof(src)) || strncmp(src, "/dev/", 5) ||
		    sscanf(dev, "%u:%u", &ma, &mi) != 2 || !ma)
			continue;
		key = ma << 20 | mi;
		if (has_key(now, n, key))
			continue; /* mounted twice: the first mount point names it */
		now[n] = key;
		where[n++] = strdup(mp);
	}
	if (f)
		fclose(f);
	/* gone */
	for (i = 0; i < sd->nr_ld;) {
		if (has_key(now, n, sd->ld[i].devt)) {
			i++;
			continue;
		}
		disk_ctl(skel, NULL, sd->ld[i].devt, 1, 1);
		free(sd->ld[i].path);
		sd->ld[i] = sd->ld[--sd->nr_ld];
	}
	/* new, and where the others are mounted now */
	for (k = 0; k < n; k++) {
		for (i = 0; i < sd->nr_ld && sd->ld[i].devt != now[k]; i++)
			;
		if (i < sd->nr_ld) {
			free(sd->ld[i].path);
			sd->ld[i].path = where[k];
			continue;
		}
		r = where[k] ? disk_ctl(skel, where[k], now[k], 1, 0) : -ENOMEM;
		if (r < 0) {
			if (r != -EEXIST)
				sd_err("cannot create instance \"%s\" of \"LogicalDisk\": %s",
				       where[k] ? where[k] : "?", strerror(-r));
			free(where[k]);
			continue;
		}
		sd->ld[sd->nr_ld++] = (struct sd_mount){now[k], r, where[k]};
	}
}

/* LogicalDisk free space: statfs of each mount point, stored through sd_ld_set */
static void ld_set(struct sysd_bpf *skel, int slot, __u32 pos, __u32 value)
{
	struct {
		__u32 slot, pos, value;
		__s32 ret;
	} c = {(__u32)slot, pos, value, 0};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof(c));

	bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sd_ld_set), &opts);
}

static void publish_free_space(struct sd *sd)
{
	struct sysd_bpf *skel = sd->skel;
	uint64_t free_all = 0, size_all = 0, fr, sz;
	struct statvfs v;
	int i;

	for (i = 0; i < sd->nr_ld; i++) {
		if (statvfs(sd->ld[i].path, &v))
			continue;
		fr = (uint64_t)v.f_bavail * v.f_frsize >> 20;
		sz = (uint64_t)v.f_blocks * v.f_frsize >> 20;
		free_all += fr;
		size_all += sz;
		ld_set(skel, sd->ld[i].slot, LD_FREE_PCT, (__u32)fr);
		ld_set(skel, sd->ld[i].slot, LD_FREE_BASE, (__u32)sz);
		ld_set(skel, sd->ld[i].slot, LD_FREE_MB, (__u32)fr);
	}
	ld_set(skel, sd->ld_total, LD_FREE_PCT, (__u32)free_all);
	ld_set(skel, sd->ld_total, LD_FREE_BASE, (__u32)size_all);
	ld_set(skel, sd->ld_total, LD_FREE_MB, (__u32)free_all);
}

/* PhysicalDisk's _Total, the programs' view of the set, its storage */
static int disks_prepare(struct sd *sd)
{
	struct perflib_bpf_counterset *cs = &sd->cs[SET_PD];
	struct sysd_bpf *skel = sd->skel;
	int idx, err;

	skel->rodata->geo_pd = cs->geo;
	err = perflib_bpf_counterset_guid(cs, (__u8 *)skel->rodata->pd_guid);
	if (err)
		return err;
	idx = sd_kinst(sd, SET_PD, "_Total", 0);
	if (idx < 0)
		return idx;
	skel->rodata->pd_total_slot = (__u32)idx;
	err = sd_reserve(sd, SET_PD, cs->geo.capacity);
	if (!err)
		err = perflib_bpf_counterset_reuse(cs, skel->maps.pd_slots, skel->maps.pd_idx);
	if (!err)
		err = perflib_bpf_counterset_reuse_live(cs, skel->maps.pd_live);
	return err;
}

/* the disks there are now, and again at each block uevent */
static int disks_start(struct sd *sd, int *fd)
{
	*fd = uevent_open();
	sync_disks(sd->skel);
	return 0;
}

static void disks_event(struct sd *sd, int fd, short revents)
{
	if ((revents & POLLIN) && uevent_block(fd))
		sync_disks(sd->skel);
}

/* LogicalDisk's _Total (its slot in sd->ld_total too), the programs' view, the storage */
static int mounts_prepare(struct sd *sd)
{
	struct perflib_bpf_counterset *cs = &sd->cs[SET_LD];
	struct sysd_bpf *skel = sd->skel;
	int idx, err;

	skel->rodata->geo_ld = cs->geo;
	err = perflib_bpf_counterset_guid(cs, (__u8 *)skel->rodata->ld_guid);
	if (err)
		return err;
	idx = sd_kinst(sd, SET_LD, "_Total", 0);
	if (idx < 0)
		return idx;
	skel->rodata->ld_total_slot = (__u32)idx;
	sd->ld_total = idx;
	err = sd_reserve(sd, SET_LD, cs->geo.capacity);
	if (!err)
		err = perflib_bpf_counterset_reuse(cs, skel->maps.ld_slots, skel->maps.ld_idx);
	if (!err)
		err = perflib_bpf_counterset_reuse_live(cs, skel->maps.ld_live);
	return err;
}

/* the mounts there are now, and again whenever mountinfo says the table changed */
static int mounts_start(struct sd *sd, int *fd)
{
	*fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	sync_mounts(sd, sd->skel);
	return 0;
}

static void mounts_event(struct sd *sd, int fd, short revents)
{
	(void)fd;
	if (revents & (POLLPRI | POLLERR))
		sync_mounts(sd, sd->skel);
}

static void mounts_stop(struct sd *sd)
{
	while (sd->nr_ld > 0)
		free(sd->ld[--sd->nr_ld].path);
}

const struct sd_source sd_disks = {
	.prepare = disks_prepare, .start = disks_start, .events = POLLIN, .event = disks_event};
const struct sd_source sd_mounts = {.prepare = mounts_prepare,
				    .start = mounts_start,
				    .events = POLLPRI, /* the mount table changed */
				    .event = mounts_event,
				    .tick = publish_free_space,
				    .stop = mounts_stop};
