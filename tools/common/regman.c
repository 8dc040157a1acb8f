// SPDX-License-Identifier: MIT
/* regman.c - manifest counter sets -> perflib registrations; Windows-style switches. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "regman.h"

int regman_build(const struct manifest *man, struct regman *rm)
{
	size_t nr_sets = 0, nr_counters = 0, p, s, c, si = 0, ci = 0;

	memset(rm, 0, sizeof(*rm));
	for (p = 0; p < man->nr_providers; p++) {
		nr_sets += man->providers[p].nr_sets;
		for (s = 0; s < man->providers[p].nr_sets; s++)
			nr_counters += man->providers[p].sets[s].nr_counters;
	}
	rm->sets = calloc(nr_sets ? nr_sets : 1, sizeof(*rm->sets));
	rm->counters = calloc(nr_counters ? nr_counters : 1, sizeof(*rm->counters));
	if (!rm->sets || !rm->counters) {
		regman_free(rm);
		return -ENOMEM;
	}
	for (p = 0; p < man->nr_providers; p++) {
		const struct manifest_provider *prov = &man->providers[p];

		for (s = 0; s < prov->nr_sets; s++) {
			const struct manifest_counterset *ms = &prov->sets[s];
			struct perflib_counterset_reg *reg = &rm->sets[si++];

			reg->provider_guid = prov->guid;
			reg->counterset_guid = ms->guid;
			reg->instance_type = ms->instance_type;
			reg->detail_level = PERF_DETAIL_NOVICE;
			reg->provider_name = prov->provider_name;
			reg->name = ms->name;
			reg->help = ms->description;
			reg->nr_counters = (unsigned int)ms->nr_counters;
			reg->counters = &rm->counters[ci];
			for (c = 0; c < ms->nr_counters; c++) {
				const struct manifest_counter *mc = &ms->counters[c];
				struct perflib_counter_reg *r = &rm->counters[ci++];

				r->id = mc->id;
				r->type = mc->type->value;
				r->attrib = mc->attrib;
				r->detail_level = mc->detail_level;
				r->scale = mc->default_scale;
				r->base_id = mc->base_id.set ? mc->base_id.value : PERFLIB_NO_ID;
				r->perf_time_id = mc->perf_time_id.set ? mc->perf_time_id.value
								       : PERFLIB_NO_ID;
				r->perf_freq_id = mc->perf_freq_id.set ? mc->perf_freq_id.value
								       : PERFLIB_NO_ID;
				r->multi_id = mc->multi_counter_id.set ? mc->multi_counter_id.value
								       : PERFLIB_NO_ID;
				r->aggregate = mc->aggregate;
				r->name = mc->name;
				r->help = mc->description;
			}
		}
	}
	rm->nr_sets = nr_sets;
	return 0;
}

void regman_free(struct regman *rm)
{
	free(rm->sets);
	free(rm->counters);
	memset(rm, 0, sizeof(*rm));
}

int parse_mode(const char *s, mode_t *ret_mode)
{
	char *end;
	unsigned long m;

	errno = 0;
	m = strtoul(s, &end, 8);
	if (errno || *end || !*s || (m & ~0666ul))
		return -EINVAL;
	*ret_mode = (mode_t)m;
	return 0;
}

int parse_user(const char *s, uid_t *ret_uid)
{
	struct passwd *pw;
	char *end;
	unsigned long v;

	v = strtoul(s, &end, 10);
	if (*s && !*end) {
		*ret_uid = (uid_t)v;
		return 0;
	}
	pw = getpwnam(s);
	if (!pw)
		return -EINVAL;
	*ret_uid = pw->pw_uid;
	return 0;
}

int parse_group(const char *s, gid_t *ret_gid)
{
	struct group *gr;
	char *end;
	unsigned long v;

	v = strtoul(s, &end, 10);
	if (*s && !*end) {
		*ret_gid = (gid_t)v;
		return 0;
	}
	gr = getgrnam(s);
	if (!gr)
		return -EINVAL;
	*ret_gid = gr->gr_gid;
	return 0;
}
