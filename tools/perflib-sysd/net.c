// SPDX-License-Identifier: MIT
/*
 * net.c - Network Interface: one instance per network device, counted by the net_dev_xmit
 * and netif_receive_skb programs; made and deleted in BPF (sd_net_ctl) for the devices of
 * the start and as rtnetlink reports links coming and going.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sysd.h"

static int net_prepare(struct sd *sd)
{
	struct perflib_bpf_counterset *cs = &sd->cs[SET_NET];
	struct sysd_bpf *skel = sd->skel;
	int err;

	skel->rodata->geo_net = cs->geo;
	err = perflib_bpf_counterset_guid(cs, (__u8 *)skel->rodata->net_guid);
	if (!err)
		err = sd_reserve(sd, SET_NET, cs->geo.capacity);
	if (!err)
		err = perflib_bpf_counterset_reuse(cs, skel->maps.net_slots, skel->maps.net_idx);
	if (!err)
		err = perflib_bpf_counterset_reuse_live(cs, skel->maps.net_live);
	return err;
}

/* create (@del 0) or delete the Network Interface instance of @ifindex, in BPF (sd_net_ctl) */
static int net_ctl(struct sysd_bpf *skel, const char *name, __u32 ifindex, int del)
{
	struct {
		char name[16];
		__u32 ifindex, del;
		__s64 ret;
	} c;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof(c));

	memset(&c, 0, sizeof(c));
	if (name)
		strncpy(c.name, name, sizeof(c.name) - 1);
	c.ifindex = ifindex;
	c.del = (__u32)del;
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sd_net_ctl), &opts))
		return -errno;
	return (int)c.ret;
}

/* an rtnetlink socket for link messages; -1 outside the initial network namespace */
static int net_open(void)
{
	struct sockaddr_nl a = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK};
	struct stat st;
	int fd;

	if (stat("/proc/self/ns/net", &st) == 0 && st.st_ino != 0xEFFFFFF9U) {
		sd_err("not in the initial network namespace: no Network Interface instances");
		return -1;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		sd_err("cannot follow network devices (rtnetlink): %s", strerror(errno));
	return fd;
}

/* the link messages waiting on @fd: a device came (created) or went (deleted) */
static void net_events(struct sysd_bpf *skel, int fd)
{
	char buf[16384], name[IFNAMSIZ];
	struct nlmsghdr *h;
	struct ifinfomsg *ifi;
	struct rtattr *a;
	ssize_t n;
	int len;

	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type != RTM_NEWLINK && h->nlmsg_type != RTM_DELLINK)
				continue;
			ifi = NLMSG_DATA(h);
			if (h->nlmsg_type == RTM_DELLINK) {
				net_ctl(skel, NULL, (__u32)ifi->ifi_index, 1);
				continue;
			}
			name[0] = 0;
			len = (int)IFLA_PAYLOAD(h);
			for (a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
				if (a->rta_type == IFLA_IFNAME)
					snprintf(name, sizeof(name), "%s", (char *)RTA_DATA(a));
			}
			if (name[0])
				net_ctl(skel, name, (__u32)ifi->ifi_index, 0); /* -EEXIST: known */
		}
	}
}

/* the network devices that exist now (after net_open, so that none is missed) */
static int add_netdevs(struct sysd_bpf *skel)
{
	DIR *d = opendir("/sys/class/net");
	char path[PATH_MAX];
	struct dirent *de;
	unsigned long ifindex;
	int r, err = 0;

	while (d && !err && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/net/%s/ifindex", de->d_name);
		if (sd_sys_read(path, &ifindex, false))
			continue; /* gone meanwhile */
		r = net_ctl(skel, de->d_name, (__u32)ifindex, 0);
		if (r < 0 && r != -EEXIST) {
			sd_err("cannot create instance \"%s\" of \"Network Interface\": %s",
			       de->d_name, strerror(-r));
			err = r;
		}
	}
	if (d)
		closedir(d);
	return err;
}

/* the devices there are now, then those rtnetlink reports (opened first: none is missed) */
static int net_start(struct sd *sd, int *fd)
{
	*fd = net_open();
	return *fd >= 0 ? add_netdevs(sd->skel) : 0;
}

static void net_event(struct sd *sd, int fd, short revents)
{
	if (revents & POLLIN)
		net_events(sd->skel, fd);
}

const struct sd_source sd_net = {
	.prepare = net_prepare, .start = net_start, .events = POLLIN, .event = net_event};
