// SPDX-License-Identifier: MIT
/*
 * run.c - `perflib-sysd run`: register the counter sets, let each source make its fixed
 * instances and set up the programs, load and attach them, let each source add what exists
 * already, then poll the sources' descriptors and tick them once a second until SIGTERM,
 * SIGINT or SIGHUP; at the end remove everything.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "sysd.h"

/*
 * The sources, in the order each step visits them. The order of the steps matters (the
 * programs see the instances that exist before they load; descriptors are opened before
 * the devices of the start are listed); the order of the sources does not.
 */
static const struct sd_source *const sources[] = {
	&sd_cpu, &sd_process, &sd_net, &sd_disks, &sd_mounts, &sd_cgroup, &sd_memory,
};
#define NR_SOURCES (sizeof(sources) / sizeof(sources[0]))

static int open_set(struct sd *sd, int k)
{
	char g[37];
	int err = perflib_bpf_counterset_open(
		NULL, perflib_guid_to_string(&sd->reg[k]->counterset_guid, g), &sd->cs[k]);

	if (err)
		sd_err("cannot open the pins of \"%s\": %s", sd_set_names[k], strerror(-err));
	return err;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* registered sets, their pins, the sources' instances and the programs loaded; 0 or -errno */
static int load(struct sd *sd)
{
	size_t i;
	int k, err;

	/* leftovers of a killed run */
	err = sd_remove(sd);
	if (!err)
		err = sd_register(sd);
	for (k = 0; k < NR_SETS && !err; k++)
		err = open_set(sd, k);
	if (err)
		return err;
	sd->skel = sysd_bpf__open();
	if (!sd->skel)
		return -errno;
	for (i = 0; i < NR_SOURCES && !err; i++) {
		if (sources[i]->prepare)
			err = sources[i]->prepare(sd);
	}
	if (!err)
		err = sysd_bpf__load(sd->skel);
	if (err)
		sd_err("cannot load the BPF programs: %s", strerror(-err));
	return err;
}

/* the event programs attached, then what existed before them; 0 or -errno */
static int attach(struct sd *sd, struct pollfd *pf)
{
	size_t i;
	int err;

	err = sysd_bpf__attach(sd->skel);
	for (i = 0; i < NR_SOURCES && !err; i++) {
		if (sources[i]->start)
			err = sources[i]->start(sd, &pf[i].fd);
		pf[i].events = sources[i]->events;
	}
	if (err) {
		sd_err("cannot attach the BPF programs: %s", strerror(-err));
		return err;
	}
	sd->skel->bss->iter_done = 1;
	return 0;
}

/* poll the sources and tick them once a second until a signal in @sigs; the signal */
static int loop(struct sd *sd, struct pollfd *pf, const sigset_t *sigs)
{
	struct pollfd *sig_pf = &pf[NR_SOURCES];
	struct signalfd_siginfo si;
	uint64_t next = 0;
	size_t i;

	sig_pf->fd = signalfd(-1, sigs, SFD_CLOEXEC);
	if (sig_pf->fd < 0)
		return -errno;
	sig_pf->events = POLLIN;
	for (;;) {
		if (mono_ns() >= next) {
			for (i = 0; i < NR_SOURCES; i++) {
				if (sources[i]->tick)
					sources[i]->tick(sd);
			}
			next = mono_ns() + 1000000000ull;
		}
		if (poll(pf, NR_SOURCES + 1, (int)((next - mono_ns()) / 1000000) + 1) < 0 &&
		    errno != EINTR)
			return 0;
		for (i = 0; i < NR_SOURCES; i++) {
			if (pf[i].revents && sources[i]->event)
				sources[i]->event(sd, pf[i].fd, pf[i].revents);
		}
		if ((sig_pf->revents & POLLIN) && read(sig_pf->fd, &si, sizeof(si)) == sizeof(si))
			return (int)si.ssi_signo;
	}
}

int sd_run(void *ctx)
{
	struct pollfd pf[NR_SOURCES + 1]; /* each source's descriptor, then the signals' */
	struct sd *sd = ctx;
	sigset_t sigs;
	size_t i;
	int k, sig, err, n;

	for (k = 0; k < NR_SETS; k++)
		sd->cs[k].info_fd = sd->cs[k].data_fd = sd->cs[k].index_fd = sd->cs[k].live_fd = -1;
	for (i = 0; i < NR_SOURCES + 1; i++)
		pf[i] = (struct pollfd){.fd = -1};
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	err = load(sd);
	if (!err)
		err = attach(sd, pf);
	if (!err) {
		printf("perflib-sysd: running: %u CPUs, %lld processes, %u samples/s; SIGTERM "
		       "stops\n",
		       sd->nr_cpus, (long long)sd->skel->bss->nr_processes, sd->hz);
		fflush(stdout);
		sig = loop(sd, pf, &sigs);
		if (sig < 0)
			err = sig;
		else
			printf("perflib-sysd: stopping (signal %d)\n", sig);
	}
	for (i = 0; i < NR_SOURCES + 1; i++) {
		if (pf[i].fd >= 0)
			close(pf[i].fd);
	}
	for (i = 0; i < NR_SOURCES; i++) {
		if (sources[i]->stop)
			sources[i]->stop(sd);
	}
	sysd_bpf__destroy(sd->skel);
	sd->skel = NULL;
	for (k = 0; k < NR_SETS; k++)
		perflib_bpf_counterset_close(&sd->cs[k]);
	n = sd_remove(sd);
	if (!err && !n)
		printf("perflib-sysd: stopped, nothing left registered\n");
	return err || n ? 1 : 0;
}
