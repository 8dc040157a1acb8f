// SPDX-License-Identifier: MIT
/*
 * sets.c - perflib-sysd's counter sets: registering and removing them, the provider that
 * holds their kernel-owned instances, instance names, and the /sys and /proc lines the
 * sources read. See sysd.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctrtype.h"
#include "sysd.h"

const char *const sd_set_names[NR_SETS] = {
	"Processor",	     "Processor Information", "System",	     "Memory", "Process",
	"Network Interface", "PhysicalDisk",	      "LogicalDisk", "Cgroup"};

void sd_err(const char *fmt, ...)
{
	va_list ap;

	fputs("perflib-sysd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* a started provider with every registered counter set of the manifest; 0 or a Win32 code */
static ULONG sd_provider(struct sd *sd)
{
	GUID provider = sd->reg[0]->provider_guid;
	ULONG st;
	int k;

	st = PerfStartProvider(&provider, NULL, &sd->prov);
	for (k = 0; !st && k < NR_SETS; k++) {
		const struct perflib_counterset_reg *r = sd->reg[k];
		size_t size =
			sizeof(PERF_COUNTERSET_INFO) + r->nr_counters * sizeof(PERF_COUNTER_INFO);
		PERF_COUNTERSET_INFO *tmpl = calloc(1, size);
		PERF_COUNTER_INFO *c = (PERF_COUNTER_INFO *)(tmpl + 1);
		unsigned int i;

		if (!tmpl) {
			st = ERROR_OUTOFMEMORY;
			break;
		}
		tmpl->CounterSetGuid = r->counterset_guid;
		tmpl->ProviderGuid = provider;
		tmpl->NumCounters = r->nr_counters;
		tmpl->InstanceType = r->instance_type;
		for (i = 0; i < r->nr_counters; i++) {
			c[i].CounterId = r->counters[i].id;
			c[i].Type = r->counters[i].type;
			c[i].Attrib = r->counters[i].attrib;
			c[i].Size = (r->counters[i].type & CTRTYPE_SIZE_MASK) == PERF_SIZE_LARGE
					    ? 8
					    : 4;
			c[i].DetailLevel = r->counters[i].detail_level;
			c[i].Scale = r->counters[i].scale;
		}
		st = PerfSetCounterSetInfo(sd->prov, tmpl, (ULONG)size);
		free(tmpl);
	}
	if (st && sd->prov) {
		PerfStopProvider(sd->prov);
		sd->prov = NULL;
	}
	return st;
}

bool sd_registered(const struct sd *sd, int k)
{
	char path[PATH_MAX], g[37];

	snprintf(path, sizeof(path), "%s/%s", perflib_pin_root(),
		 perflib_guid_to_string(&sd->reg[k]->counterset_guid, g));
	return access(path, F_OK) == 0;
}

int sd_remove(struct sd *sd)
{
	int k, n, err = 0;

	if (!sd->prov) {
		for (k = 0; k < NR_SETS && !sd_registered(sd, k); k++)
			;
		if (k == NR_SETS)
			return 0;
		if (sd_provider(sd)) {
			sd_err("cannot open the counter sets to remove them");
			return -EIO;
		}
	}
	for (k = 0; k < NR_SETS; k++) {
		n = perflib_kernel_instances_delete(sd->prov, &sd->reg[k]->counterset_guid);
		if (n < 0 && n != -ENOENT)
			err = n;
	}
	PerfStopProvider(sd->prov);
	sd->prov = NULL;
	for (k = 0; k < NR_SETS; k++) {
		n = perflib_unregister_counterset(&sd->reg[k]->counterset_guid, true);
		if (n && n != -ENOENT) {
			sd_err("cannot unregister \"%s\": %s", sd_set_names[k], strerror(-n));
			err = n;
		}
	}
	return err;
}

int sd_register(struct sd *sd)
{
	struct perflib_pin_opts o;
	int k, err;

	for (k = 0; k < NR_SETS; k++) {
		o = sd->opts;
		o.name_max = 16; /* "0,_Total", a 15-character command or device name */
		if (k == SET_CPU || k == SET_PI)
			o.capacity = (sd->nr_cpus + 2 + 63) / 64 * 64;
		else if (k == SET_PS)
			o.capacity = sd->max_ps;
		else if (k == SET_CG)
			o.capacity = sd->max_cg;
		else if (k == SET_NET)
			o.capacity = 1024;
		else if (k == SET_LD)
			o.capacity = SD_MAX_MOUNTS + 1;
		else
			o.capacity = 64;
		if (k == SET_LD || k == SET_CG)
			o.name_max = SD_NAME_MAX + 1; /* paths */
		err = perflib_register_counterset(sd->reg[k], &o);
		if (err && err != -EEXIST) {
			sd_err("cannot register \"%s\": %s", sd_set_names[k],
			       err == -EPERM ? "permission denied (creating maps needs CAP_BPF; "
					       "giving the pins to --group needs membership of it)"
					     : strerror(-err));
			return err;
		}
	}
	return sd_provider(sd) ? -EIO : 0;
}

/* '/' separates parent and instance in a counter path; Windows writes a mounted folder so */
int sd_inst_name(const char *text, WCHAR *name)
{
	WCHAR all[PATH_MAX];
	int n = perflib_utf8_to_utf16(text, all, PATH_MAX), from, i;

	if (n < 0)
		return n;
	n--; /* the NUL */
	from = n > SD_NAME_MAX ? n - SD_NAME_MAX : 0;
	if (from && all[from] >= 0xDC00 && all[from] <= 0xDFFF)
		from++; /* not half a surrogate pair */
	for (i = from; i <= n; i++)
		name[i - from] = all[i] == '/' ? '\\' : all[i];
	return n - from;
}

int sd_kinst_quiet(struct sd *sd, int k, const char *text, ULONG id)
{
	WCHAR name[SD_NAME_MAX + 1];
	int n = sd_inst_name(text, name);

	if (n < 0)
		return n;
	return perflib_kernel_instance_create(sd->prov, &sd->reg[k]->counterset_guid, name, id);
}

int sd_kinst(struct sd *sd, int k, const char *text, ULONG id)
{
	int idx = sd_kinst_quiet(sd, k, text, id);

	if (idx < 0)
		sd_err("cannot create instance \"%s\" of \"%s\": %s", text, sd_set_names[k],
		       strerror(-idx));
	return idx;
}

/* the programs cannot grow a set: its storage is reserved before they run */
int sd_reserve(struct sd *sd, int k, unsigned int n)
{
	int r = perflib_kernel_reserve(sd->prov, &sd->reg[k]->counterset_guid, n);

	if (r < 0)
		sd_err("cannot reserve %u instances of \"%s\": %s", n, sd_set_names[k],
		       strerror(-r));
	return r < 0 ? r : 0;
}

/* ---- the lines of /sys and /proc files the sources read ------------------------------- */

int sd_sys_read(const char *path, unsigned long *ret, bool devt)
{
	unsigned int ma, mi;
	char line[64];
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	if (ok && devt && sscanf(line, "%u:%u", &ma, &mi) == 2)
		*ret = (unsigned long)ma << 20 | mi;
	else if (ok && !devt)
		*ret = strtoul(line, NULL, 10);
	else
		return -EINVAL;
	return 0;
}

const char *sd_mi_field(const char *line, int n, bool after, char *buf, size_t size)
{
	const char *p = line, *e;
	size_t len;
	int i;

	if (after) {
		p = strstr(line, " - ");
		if (!p)
			return NULL;
		p += 3;
		n--;
	} else {
		n--;
	}
	for (i = 0; i < n && p; i++) {
		p = strchr(p, ' ');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		return NULL;
	e = strpbrk(p, " \n");
	len = e ? (size_t)(e - p) : strlen(p);
	if (len >= size)
		return NULL;
	memcpy(buf, p, len);
	buf[len] = 0;
	return buf;
}
