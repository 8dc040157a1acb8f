// SPDX-License-Identifier: MIT
/*
 * memory.c - Memory: one instance the service owns (not the kernel: no BPF program can
 * reach the kernel's memory statistics here, docs/SYSTEM-COUNTERS.md), its counters read
 * from /proc/meminfo and /proc/vmstat once a second.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysd.h"

/* one field of /proc/meminfo (kB -> bytes) or /proc/vmstat; 0 when missing */
static uint64_t proc_field(const char *file, const char *name, bool kb)
{
	size_t len = strlen(name);
	char line[256];
	uint64_t v = 0;
	FILE *f = fopen(file, "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, len) && (line[len] == ':' || line[len] == ' ')) {
			v = strtoull(line + len + 1, NULL, 10);
			break;
		}
	}
	if (f)
		fclose(f);
	return kb ? v * 1024 : v;
}

static void memory_tick(struct sd *sd)
{
	PPERF_COUNTERSET_INSTANCE mem = sd->mem;
	const char *mi = "/proc/meminfo", *vm = "/proc/vmstat";

	PerfSetULongLongCounterValue(sd->prov, mem, 0, proc_field(mi, "MemAvailable", true));
	PerfSetULongLongCounterValue(sd->prov, mem, 1, proc_field(mi, "Committed_AS", true));
	PerfSetULongLongCounterValue(sd->prov, mem, 2, proc_field(mi, "CommitLimit", true));
	PerfSetULongLongCounterValue(
		sd->prov, mem, 3, proc_field(mi, "Cached", true) + proc_field(mi, "Buffers", true));
	PerfSetULongCounterValue(sd->prov, mem, 4, (ULONG)proc_field(vm, "pgfault", false));
	PerfSetULongCounterValue(
		sd->prov, mem, 5,
		(ULONG)(proc_field(vm, "pswpin", false) + proc_field(vm, "pswpout", false)));
}

static int memory_start(struct sd *sd, int *fd)
{
	(void)fd;
	sd->mem = PerfCreateInstance(sd->prov, &sd->reg[SET_MEM]->counterset_guid, u"", 0);
	if (!sd->mem) {
		sd_err("cannot create the Memory instance (error %u)", GetLastError());
		return -EIO;
	}
	return 0;
}

const struct sd_source sd_memory = {.start = memory_start, .tick = memory_tick};
