// SPDX-License-Identifier: MIT
/*
 * exp_sample.c - the exporter's snapshot from libpdh's registration model and decoded
 * samples (see exp_sample.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exp_sample.h"

/* ---- registration ----------------------------------------------------------------- */

/* a copy of @s (NULL stays NULL); false when out of memory */
static bool dup_str(const char *s, char **ret)
{
	*ret = s ? strdup(s) : NULL;
	return !s || *ret;
}

int exp_set_from_reg(const PDH_LINUX_COUNTERSET_REG *reg, struct exp_set **ret_set)
{
	struct exp_set *set = calloc(1, sizeof(*set));
	bool ok;
	DWORD i;

	if (!set)
		return -ENOMEM;
	set->guid = reg->CounterSet;
	set->instance_type = reg->InstanceType;
	set->counters = calloc(reg->NumCounters ? reg->NumCounters : 1, sizeof(*set->counters));
	ok = set->counters && dup_str(reg->Name, &set->name) && dup_str(reg->Help, &set->help);
	if (set->counters)
		set->nr_counters = reg->NumCounters;
	for (i = 0; ok && i < reg->NumCounters; i++) {
		const PDH_LINUX_COUNTER_REG *r = &reg->Counters[i];
		struct exp_counter *c = &set->counters[i];

		*c = (struct exp_counter){
			.id = r->CounterId,
			.type = r->CounterType,
			.attrib = r->Attrib,
			.base_id = r->BaseCounterId,
			.time_id = r->PerfTimeId,
			.freq_id = r->PerfFreqId,
			.multi_id = r->MultiId,
			.base = -1, /* resolved by exp_prepare */
			.time = -1,
			.freq = -1,
		};
		ok = dup_str(r->Name, &c->name) && dup_str(r->Help, &c->help);
	}
	if (!ok) {
		exp_set_free(set);
		return -ENOMEM;
	}
	*ret_set = set;
	return 0;
}

/* ---- collection ------------------------------------------------------------------- */

/* the length of @name cut to fit EXP_NAME_MAX with its NUL, at a UTF-8 character boundary */
static size_t name_cut(const char *name, size_t len)
{
	if (len < EXP_NAME_MAX)
		return len;
	len = EXP_NAME_MAX - 1;
	while (len && ((unsigned char)name[len] & 0xC0) == 0x80)
		len--; /* name[len] would start the cut-off part: not a continuation byte */
	return len;
}

/* the instances of @sample into @set, values through @cols (counter index per value, -1) */
static int fill_block(const PDH_LINUX_COUNTERSET_SAMPLE *sample, const int *cols, ULONGLONG *values,
		      BYTE *sizes, struct exp_set *set)
{
	char cut[EXP_NAME_MAX];
	PDH_LINUX_INSTANCE in;
	const char *name;
	size_t inst;
	DWORD i, k;
	int err;

	for (i = 0; i < sample->NumInstances; i++) {
		if (PdhLinuxGetSampleInstance(sample, i, &in, values, sizes))
			return -EBADMSG;
		name = in.Name;
		if (name && name_cut(name, in.NameLength) != in.NameLength) {
			size_t n = name_cut(name, in.NameLength);

			memcpy(cut, name, n);
			cut[n] = '\0';
			name = cut;
		}
		err = exp_set_add_instance(set, in.InstanceId, name, in.Duplicate, &inst);
		if (err)
			return err;
		for (k = 0; k < sample->NumCounters; k++) {
			if (cols[k] >= 0 && sizes[k])
				exp_set_value(set, inst, (size_t)cols[k], values[k]);
		}
	}
	return 0;
}

int exp_fill_block(const PDH_LINUX_COUNTERSET_SAMPLE *sample, struct exp_set *set)
{
	size_t n = sample->NumCounters ? sample->NumCounters : 1;
	ULONGLONG *values;
	BYTE *sizes;
	int *cols;
	DWORD k;
	int err = -ENOMEM;

	/*
	 * PERF_MULTIPLE_INSTANCES and PERF_SINGLE_COUNTER name their counter only in the query
	 * specification: the exporter asks for whole sets, never these
	 */
	if (sample->DataType != PERF_MULTIPLE_COUNTERS && sample->DataType != PERF_COUNTERSET)
		return 0;
	if (sample->CStatus != ERROR_SUCCESS)
		return 0;
	cols = malloc(n * sizeof(*cols));
	values = malloc(n * sizeof(*values));
	sizes = malloc(n * sizeof(*sizes));
	if (cols && values && sizes) {
		/* each value's counter looked up once: the first of the set with its id */
		for (k = 0; k < sample->NumCounters; k++) {
			size_t c;

			for (c = 0;
			     c < set->nr_counters && set->counters[c].id != sample->CounterIds[k];
			     c++)
				;
			cols[k] = c < set->nr_counters ? (int)c : -1;
		}
		err = fill_block(sample, cols, values, sizes, set);
	}
	free(cols);
	free(values);
	free(sizes);
	return err;
}
