// SPDX-License-Identifier: MIT
/*
 * aggregate.c - what a Windows consumer sees of the aggregate counter-set types, computed
 * from a snapshot of the live instances with each counter's aggregate function (info map):
 *
 *   MULTI_AGGREGATE           the instances, plus "_Total" (InstanceId 0) over all of them
 *   SINGLE_AGGREGATE          one instance (InstanceId 0, empty name) over all instances
 *   SINGLE_AGGREGATE_HISTORY  as SINGLE_AGGREGATE, plus the last values this process read
 *                             of instances that have vanished since (kept until exit)
 *   INSTANCE_AGGREGATE        one instance per distinct name (InstanceId = the lowest id of
 *                             its members), plus "_Total"
 *
 * Functions: TOTAL sums (modulo 2^32 for DWORD counters, 2^64 for LARGE ones); AVG is the
 * truncated mean; MIN and MAX compare unsigned; UNDEFINED and unknown values sum, like
 * TOTAL, so that counter sets created without a manifest still get a useful _Total. A value
 * whose by-reference address is NULL takes no part; an aggregate with no part is no data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer.h"

struct acc {
	unsigned __int128 sum; /* exact sum */
	uint64_t n;	       /* values taken */
	uint64_t min, max;
};

static void acc_add(struct acc *a, uint64_t v)
{
	if (!a->n || v < a->min)
		a->min = v;
	if (!a->n || v > a->max)
		a->max = v;
	a->sum += v;
	a->n++;
}

static void acc_merge(struct acc *a, const struct acc *b)
{
	if (!b->n)
		return;
	if (!a->n || b->min < a->min)
		a->min = b->min;
	if (!a->n || b->max > a->max)
		a->max = b->max;
	a->sum += b->sum;
	a->n += b->n;
}

static uint64_t acc_value(const struct acc *a, uint32_t func)
{
	switch (func) {
	case PERF_AGGREGATE_AVG:
		return (uint64_t)(a->sum / a->n);
	case PERF_AGGREGATE_MIN:
		return a->min;
	case PERF_AGGREGATE_MAX:
		return a->max;
	default:
		/* TOTAL, UNDEFINED and anything unknown: the sum */
		return (uint64_t)a->sum;
	}
}

/* add one row of @snap to the accumulators */
static void acc_row(struct acc *accs, const struct perflib_snap *snap, uint32_t row)
{
	const uint64_t *v = snap->vals + (size_t)row * snap->nr_counters;
	const uint8_t *nd = snap->nodata + (size_t)row * snap->nr_counters;
	uint32_t k;

	for (k = 0; k < snap->nr_counters; k++) {
		if (!nd[k])
			acc_add(&accs[k], v[k]);
	}
}

/* write the aggregate of @accs into the row of @in */
static void acc_store(const struct perflib_cset *cs, const struct acc *accs,
		      struct perflib_snap *snap, const struct perflib_snap_inst *in)
{
	uint64_t *v = snap->vals + (size_t)in->row * snap->nr_counters;
	uint8_t *nd = snap->nodata + (size_t)in->row * snap->nr_counters;
	uint32_t k;

	for (k = 0; k < snap->nr_counters; k++) {
		nd[k] = !accs[k].n;
		v[k] = accs[k].n ? acc_value(&accs[k], cs->map->counters[k].aggregate) & cs->mask[k]
				 : 0;
	}
}

/* ---- history of vanished instances (SINGLE_AGGREGATE_HISTORY) ----------------------------- */

struct hist {
	char key[PATH_MAX];   /* counter-set directory */
	uint32_t nr_counters; /* row length */
	size_t nr;	      /* instances seen live at the last read, in slot order */
	uint32_t *slot, *gen; /* their identity: slot and generation */
	uint64_t *vals;	      /* their last values */
	uint8_t *nodata;
	struct acc *gone; /* last values of vanished instances, folded */
	uint64_t nr_gone; /* vanished instances folded */
	struct hist *next;
};

static pthread_mutex_t hist_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hist *hists;

static void hist_free_rows(struct hist *h)
{
	free(h->slot);
	free(h->gen);
	free(h->vals);
	free(h->nodata);
	h->slot = h->gen = NULL;
	h->vals = NULL;
	h->nodata = NULL;
	h->nr = 0;
}

/* the history of @cs (created when @create), hist_lock held */
static struct hist *hist_find(const struct perflib_cset *cs, bool create)
{
	struct hist *h;

	for (h = hists; h; h = h->next) {
		if (!strcmp(h->key, cs->dir))
			break;
	}
	if (h && h->nr_counters != cs->nr_counters) {
		/* registered anew with other counters: the old values mean nothing now */
		hist_free_rows(h);
		free(h->gone);
		h->gone = calloc(cs->nr_counters, sizeof(*h->gone));
		h->nr_gone = 0;
		h->nr_counters = cs->nr_counters;
		if (!h->gone)
			h->nr_counters = 0;
	}
	if (h || !create)
		return h && h->nr_counters == cs->nr_counters ? h : NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->gone = calloc(cs->nr_counters, sizeof(*h->gone));
	if (!h->gone) {
		free(h);
		return NULL;
	}
	snprintf(h->key, sizeof(h->key), "%s", cs->dir);
	h->nr_counters = cs->nr_counters;
	h->next = hists;
	hists = h;
	return h;
}

static void hist_fold(struct hist *h, size_t j)
{
	const uint64_t *v = h->vals + j * h->nr_counters;
	const uint8_t *nd = h->nodata + j * h->nr_counters;
	uint32_t k;

	for (k = 0; k < h->nr_counters; k++) {
		if (!nd[k])
			acc_add(&h->gone[k], v[k]);
	}
	h->nr_gone++;
}

/*
 * Replace the remembered live instances by those of @snap (raw, in slot order); an
 * instance remembered but not read again (same slot and generation) has vanished: its last
 * values join the folded history.
 */
static int hist_update(struct hist *h, const struct perflib_snap *snap)
{
	size_t n = h->nr_counters, i, j = 0, nr = snap->nr;
	uint32_t *slot = malloc((nr ? nr : 1) * sizeof(*slot));
	uint32_t *gen = malloc((nr ? nr : 1) * sizeof(*gen));
	uint64_t *vals = malloc((nr ? nr : 1) * n * sizeof(*vals));
	uint8_t *nodata = malloc((nr ? nr : 1) * n);

	if (!slot || !gen || !vals || !nodata) {
		free(slot);
		free(gen);
		free(vals);
		free(nodata);
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		const struct perflib_snap_inst *in = &snap->inst[i];

		while (j < h->nr && h->slot[j] < in->slot)
			hist_fold(h, j++);
		if (j < h->nr && h->slot[j] == in->slot) {
			/* same slot, another generation: the old instance is gone */
			if (h->gen[j] != in->gen)
				hist_fold(h, j);
			j++;
		}
		slot[i] = in->slot;
		gen[i] = in->gen;
		memcpy(vals + i * n, snap->vals + (size_t)in->row * n, n * sizeof(*vals));
		memcpy(nodata + i * n, snap->nodata + (size_t)in->row * n, n);
	}
	while (j < h->nr)
		hist_fold(h, j++);
	hist_free_rows(h);
	h->slot = slot;
	h->gen = gen;
	h->vals = vals;
	h->nodata = nodata;
	h->nr = nr;
	return 0;
}

/* ---- the aggregate types ------------------------------------------------------------------ */

/* global aggregate: one instance, id 0, empty name */
static int aggregate_single(const struct perflib_cset *cs, struct perflib_snap *snap, bool history)
{
	bool hist_type = cs->instance_type == PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY;
	struct acc *accs = NULL;
	struct perflib_snap_inst *in;
	struct hist *h = NULL;
	uint64_t nr_gone = 0;
	size_t i, nr = snap->nr;
	int err = 0;

	if (snap->values) {
		accs = calloc(snap->nr_counters, sizeof(*accs));
		if (!accs)
			return -ENOMEM;
		for (i = 0; i < nr; i++)
			acc_row(accs, snap, snap->inst[i].row);
	}
	if (hist_type) {
		pthread_mutex_lock(&hist_lock);
		h = hist_find(cs, history && snap->values);
		if (h && history && snap->values)
			err = hist_update(h, snap);
		if (h) {
			nr_gone = h->nr_gone;
			for (i = 0; accs && i < snap->nr_counters; i++)
				acc_merge(&accs[i], &h->gone[i]);
		}
		pthread_mutex_unlock(&hist_lock);
	}
	/* the instances give way to their aggregate, which exists when anything went in */
	snap->nr = 0;
	if (!err && (nr || nr_gone)) {
		err = perflib_snap_add(snap, 0, u"", 0, &in);
		if (!err && accs)
			acc_store(cs, accs, snap, in);
	}
	free(accs);
	return err;
}

/* multiple instances plus _Total over all of them */
static int aggregate_total(const struct perflib_cset *cs, struct perflib_snap *snap)
{
	struct perflib_snap_inst *in;
	struct acc *accs = NULL;
	size_t i;
	int err;

	/* a provider's own "_Total" never reaches a snapshot (perflib_reader_next) */
	if (!snap->nr)
		return 0;
	if (snap->values) {
		accs = calloc(snap->nr_counters, sizeof(*accs));
		if (!accs)
			return -ENOMEM;
		for (i = 0; i < snap->nr; i++)
			acc_row(accs, snap, snap->inst[i].row);
	}
	err = perflib_snap_add(snap, 0, PERFLIB_TOTAL_NAME, PERFLIB_TOTAL_LEN, &in);
	if (!err && accs)
		acc_store(cs, accs, snap, in);
	free(accs);
	return err;
}

static uint64_t name_hash(const WCHAR *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h ^ len;
}

/* same-named instances merged, then _Total */
static int aggregate_by_name(const struct perflib_cset *cs, struct perflib_snap *snap)
{
	size_t nr = snap->nr, cap = 16, i, g, t, nr_groups = 0;
	struct perflib_snap_inst *raw = NULL, *in;
	uint32_t *table = NULL, *member_of = NULL, *gid = NULL, *start = NULL, *order = NULL;
	struct acc *accs = NULL, *total = NULL;
	size_t n1 = nr ? nr : 1;
	int err = -ENOMEM;

	while (cap < 2 * nr)
		cap *= 2;
	raw = malloc(n1 * sizeof(*raw));
	table = malloc(cap * sizeof(*table));
	member_of = malloc(n1 * sizeof(*member_of));
	gid = malloc(n1 * sizeof(*gid));	/* group -> its first member, then its id */
	start = calloc(n1 + 1, sizeof(*start)); /* group -> first of its members in order */
	order = malloc(n1 * sizeof(*order));	/* members sorted by group */
	if (snap->values) {
		accs = malloc(snap->nr_counters * sizeof(*accs));
		total = calloc(snap->nr_counters, sizeof(*total));
	}
	if (!raw || !table || !member_of || !gid || !start || !order ||
	    (snap->values && (!accs || !total)))
		goto out;
	memcpy(raw, snap->inst, nr * sizeof(*raw));
	memset(table, 0xff, cap * sizeof(*table));
	for (i = 0; i < nr; i++) {
		const WCHAR *name = perflib_snap_name(snap, &raw[i]);
		size_t len = raw[i].name_len;

		for (t = name_hash(name, len) & (cap - 1); table[t] != UINT32_MAX;
		     t = (t + 1) & (cap - 1)) {
			const struct perflib_snap_inst *first = &raw[gid[table[t]]];

			if (first->name_len == len &&
			    !memcmp(perflib_snap_name(snap, first), name, len * 2))
				break;
		}
		if (table[t] == UINT32_MAX) {
			table[t] = (uint32_t)nr_groups;
			gid[nr_groups++] = (uint32_t)i;
		}
		member_of[i] = table[t];
		start[table[t] + 1]++;
	}
	/* counting sort: the members of group g are order[start[g] .. start[g + 1]) */
	for (g = 0; g < nr_groups; g++)
		start[g + 1] += start[g];
	for (i = 0; i < nr; i++)
		order[start[member_of[i]]++] = (uint32_t)i;
	for (g = nr_groups; g > 0; g--)
		start[g] = start[g - 1];
	start[0] = 0;

	snap->nr = 0;
	for (g = 0; g < nr_groups; g++) {
		const struct perflib_snap_inst *first = &raw[gid[g]];
		uint32_t id = first->id;

		for (i = start[g]; i < start[g + 1]; i++) {
			if (raw[order[i]].id < id)
				id = raw[order[i]].id;
		}
		err = perflib_snap_add(snap, id, perflib_snap_name(snap, first), first->name_len,
				       &in);
		if (err)
			goto out;
		if (!accs)
			continue;
		memset(accs, 0, snap->nr_counters * sizeof(*accs));
		for (i = start[g]; i < start[g + 1]; i++)
			acc_row(accs, snap, raw[order[i]].row);
		for (t = 0; t < snap->nr_counters; t++)
			acc_merge(&total[t], &accs[t]);
		acc_store(cs, accs, snap, in);
	}
	err = 0;
	if (nr) {
		err = perflib_snap_add(snap, 0, PERFLIB_TOTAL_NAME, PERFLIB_TOTAL_LEN, &in);
		if (!err && total)
			acc_store(cs, total, snap, in);
	}
out:
	free(raw);
	free(table);
	free(member_of);
	free(gid);
	free(start);
	free(order);
	free(accs);
	free(total);
	return err;
}

int perflib_snap_aggregate(const struct perflib_cset *cs, struct perflib_snap *snap, bool history)
{
	switch (cs->instance_type) {
	case PERF_COUNTERSET_SINGLE_AGGREGATE:
	case PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY:
		return aggregate_single(cs, snap, history);
	case PERF_COUNTERSET_MULTI_AGGREGATE:
		return aggregate_total(cs, snap);
	case PERF_COUNTERSET_INSTANCE_AGGREGATE:
		return aggregate_by_name(cs, snap);
	default:
		return 0;
	}
}
