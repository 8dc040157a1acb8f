/* SPDX-License-Identifier: MIT */
/*
 * replay.c - a query on a log (pdh.md 7.3): a counter's path resolved to the log's columns
 * (a path with a computer matches that computer's columns only; an instance as real time
 * takes it: a plain name the first of that name, "#n" that one, a wildcard every one), and
 * each collection the next record of the log (logread.c) into every counter's sample,
 * each item paired with the same instance in the record before. The values are logged
 * values, already cooked (PERF_COUNTER_LARGE_RAWCOUNT).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pdh_internal.h"

void pdh_sample_clear(struct pdh_sample *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		free(s->items[i].name);
	free(s->items);
	memset(s, 0, sizeof(*s));
}

PDH_STATUS pdh_replay_resolve(struct pdh_query *q, struct pdh_counter *c)
{
	const struct pdh_log *log = q->source;
	bool object = false;
	struct pdh_cpath p;
	size_t i;

	for (i = 0; i < log->nr_paths; i++) {
		bool match;
		size_t *grown;

		if (pdh_cpath_parse(log->paths[i], &p))
			continue;
		/* a path with a computer matches that computer's columns only */
		match = pdh_match(c->path.object, p.object) &&
			(!c->path.machine || !p.machine || pdh_match(c->path.machine, p.machine));
		object |= match;
		match = match && pdh_match(c->path.counter, p.counter) &&
			!c->path.instance == !p.instance;
		if (match && c->pattern) {
			char *pat = pdh_cpath_instance_pattern(&p);

			int idx = p.index < 0 ? 0 : p.index;

			/* "#n" that column, a wildcard every one, a plain name the first */
			match = pat && pdh_match(c->pattern, pat) &&
				(c->path.index >= 0 ? c->path.index == idx : c->wildcard || !idx);
			free(pat);
		}
		pdh_cpath_free(&p);
		if (!match)
			continue;
		grown = realloc(c->log_cols, (c->nr_log_cols + 1) * sizeof(*grown));
		if (!grown)
			return PDH_MEMORY_ALLOCATION_FAILURE;
		c->log_cols = grown;
		c->log_cols[c->nr_log_cols++] = i;
	}
	if (!c->nr_log_cols)
		return object ? PDH_CSTATUS_NO_COUNTER : PDH_CSTATUS_NO_OBJECT;
	c->ctr.type = PERF_COUNTER_LARGE_RAWCOUNT;
	c->ctr.id = (uint32_t)c->log_cols[0];
	c->base_id = PERFLIB_NO_ID;
	return 0;
}

/* append an item named @name (taken) to @s; -ENOMEM (@name freed) */
static int replay_add(struct pdh_sample *s, char *name, unsigned int dup, struct pdh_item **ret)
{
	struct pdh_item *grown;

	if (s->nr == s->cap) {
		grown = realloc(s->items, (s->cap ? 2 * s->cap : 16) * sizeof(*grown));
		if (!grown) {
			free(name);
			return -ENOMEM;
		}
		s->items = grown;
		s->cap = s->cap ? 2 * s->cap : 16;
	}
	*ret = &s->items[s->nr++];
	**ret = (struct pdh_item){.name = name, .len = name ? strlen(name) : 0, .dup = dup};
	return 0;
}

/* the item of @s for (@name, @dup), from *@cursor first, then all */
static const struct pdh_item *replay_find(const struct pdh_sample *s, const char *name,
					  unsigned int dup, size_t *cursor)
{
	size_t i;

	for (i = 0; i <= s->nr; i++) {
		size_t at = i ? i - 1 : *cursor;
		const struct pdh_item *it = &s->items[at];

		if (at >= s->nr || it->dup != dup || !it->name != !name ||
		    (name && !pdh_name_equal(it->name, name)))
			continue;
		*cursor = at + 1;
		return it;
	}
	return NULL;
}

PDH_STATUS pdh_replay_step(struct pdh_query *q)
{
	struct pdh_log *log = q->source;
	size_t i, k, cursor;
	char *end;

	if (log->next >= log->limit)
		return PDH_NO_MORE_DATA;
	q->stamp = log->times[log->next];
	for (i = 0; i < q->nr_counters; i++) {
		struct pdh_counter *c = q->counters[i];

		pdh_sample_clear(&c->old);
		c->old = c->cur;
		memset(&c->cur, 0, sizeof(c->cur));
		c->valid = true;
		c->changed = true;
		c->status = 0;
		cursor = 0;
		for (k = 0; k < c->nr_log_cols; k++) {
			const char *v = log->values[log->next][c->log_cols[k]];
			struct pdh_cpath p = {0};
			struct pdh_item *it;
			char *name = NULL;
			unsigned int dup = 0;

			if (!pdh_cpath_parse(log->paths[c->log_cols[k]], &p) && p.instance) {
				name = pdh_cpath_instance_pattern(&p);
				if (!name) {
					pdh_cpath_free(&p);
					return PDH_MEMORY_ALLOCATION_FAILURE;
				}
			}
			dup = p.index > 0 ? (unsigned int)p.index : 0;
			pdh_cpath_free(&p);
			if (replay_add(&c->cur, name, dup, &it))
				return PDH_MEMORY_ALLOCATION_FAILURE;
			it->prev = replay_find(&c->old, it->name, it->dup, &cursor);
			it->raw.TimeStamp.dwLowDateTime = (DWORD)q->stamp;
			it->raw.TimeStamp.dwHighDateTime = (DWORD)((uint64_t)q->stamp >> 32);
			it->logged = strtod(v, &end);
			if (end == v || *end) {
				it->raw.CStatus = (DWORD)PDH_CSTATUS_INVALID_DATA;
				continue;
			}
			it->raw.CStatus = (DWORD)PDH_CSTATUS_NEW_DATA;
			it->raw.FirstValue = (LONGLONG)it->logged;
			it->raw.MultiCount = 1;
		}
	}
	log->next++;
	return 0;
}
