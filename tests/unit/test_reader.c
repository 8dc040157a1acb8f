// SPDX-License-Identifier: MIT
/*
 * test_reader.c - the lower layers of the consumer pipeline on their own: owner liveness
 * (liveness.c), the slot reader and its visibility rules (reader.c), snapshots (snap.c),
 * and the direct writer (obuf.c), which must give the same bytes as a snapshot written
 * block by block: the two paths share the reader and cannot drift.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "reader.h"
#include "testlib.h"
#include "../helpers/prov_util.h"
#include "../helpers/cons_util.h"

#define NAME_ROOM 4096 /* >= round8(2 * name_max) at the default name_max */

/* a provider in this process: a set of two counters (DWORD, LARGE) and named instances */
struct prov {
	GUID set;
	HANDLE h;
	PPERF_COUNTERSET_INSTANCE inst[8];
};

static void prov_start(struct prov *p, ULONG instance_type)
{
	struct prov_tmpl t;
	GUID pg = prov_provider_guid();

	p->set = prov_guid();
	prov_tmpl_init(&t, p->set, instance_type);
	prov_tmpl_add(&t, 1, PERF_COUNTER_RAWCOUNT, 0);
	prov_tmpl_add(&t, 2, PERF_COUNTER_LARGE_RAWCOUNT, 0);
	assert_int_equal(PerfStartProvider(&pg, NULL, &p->h), ERROR_SUCCESS);
	assert_int_equal(prov_tmpl_register(p->h, &t), ERROR_SUCCESS);
}

static void prov_add(struct prov *p, unsigned int i, const char *name, ULONG id, ULONG v)
{
	p->inst[i] = PerfCreateInstance(p->h, &p->set, cons_w(name), id);
	assert_non_null(p->inst[i]);
	assert_int_equal(PerfSetULongCounterValue(p->h, p->inst[i], 1, v), ERROR_SUCCESS);
	assert_int_equal(PerfSetULongLongCounterValue(p->h, p->inst[i], 2, 1000ull * v + 7),
			 ERROR_SUCCESS);
}

/* a well-formed slot of @cs owned by this process, named @name */
static uint8_t *make_slot(const struct perflib_cset *cs, uint32_t state, const char *name,
			  uint32_t id)
{
	const struct perflib_info *info = cs->map->info;
	uint8_t *slot = calloc(1, info->slot_size);
	struct perflib_slot_hdr *h = (struct perflib_slot_hdr *)slot;
	WCHAR *dst = (WCHAR *)(slot + info->name_offset);
	uint32_t pid;
	uint64_t start;

	assert_non_null(slot);
	perflib_self(&pid, &start);
	*(uint64_t *)slot = perflib_make_word(state, 77, pid);
	h->owner_start = start;
	memcpy(dst, cons_w(name), 2 * (strlen(name) + 1));
	((PERF_COUNTERSET_INSTANCE *)(slot + PERFLIB_BLOCK_OFFSET))->InstanceId = id;
	memset(slot + PERFLIB_COUNTERS_OFFSET, 0xEE, 16);
	return slot;
}

struct seen {
	int nr;
	struct perflib_found f[16];
	char names[16][32];
	uint64_t v[16][2];
};

/* every instance the reader returns for @set */
static void read_all(const GUID *set, bool values, struct seen *s)
{
	struct perflib_cset *cs;
	struct perflib_reader r;
	WCHAR *name = malloc(NAME_ROOM);
	uint64_t vals[2];
	uint8_t nodata[2] = {0, 0};
	size_t k;

	assert_non_null(name);
	memset(s, 0, sizeof(*s));
	assert_int_equal(perflib_cset_get(set, &cs), 0);
	assert_true(2 * (size_t)cs->map->info->name_max + 8 <= NAME_ROOM);
	assert_int_equal(perflib_reader_init(&r, cs, values), 0);
	while (s->nr < 16) {
		vals[0] = vals[1] = 0x5555;
		if (!perflib_reader_next(&r, name, vals, nodata, &s->f[s->nr]))
			break;
		for (k = 0; k < s->f[s->nr].len && k < 31; k++)
			s->names[s->nr][k] = (char)name[k];
		assert_int_equal(name[s->f[s->nr].len], 0); /* the NUL comes along */
		s->v[s->nr][0] = vals[0];
		s->v[s->nr][1] = vals[1];
		s->nr++;
	}
	assert_int_equal(r.err, 0);
	/* the end stays the end */
	assert_false(perflib_reader_next(&r, name, vals, nodata, &s->f[15]));
	perflib_reader_fini(&r);
	perflib_cset_put(cs);
	free(name);
}

/* ---- liveness.c ----------------------------------------------------------------------------- */

static void test_liveness(void **state)
{
	struct perflib_alive ac;
	uint32_t pid;
	uint64_t start;
	pid_t child;
	int status;

	(void)state;
	memset(&ac, 0, sizeof(ac));
	perflib_self(&pid, &start);
	assert_true(perflib_owner_alive(&ac, pid, start));
	assert_true(perflib_owner_alive(&ac, pid, start));	    /* remembered */
	assert_false(perflib_owner_alive(&ac, pid, start + 12345)); /* a reused pid */
	assert_true(perflib_owner_alive(&ac, pid, start));
	assert_false(perflib_owner_alive(&ac, 0, start));
	assert_true(perflib_owner_alive(&ac, 0, PERFLIB_OWNER_KERNEL)); /* kernel-owned */
	assert_true(perflib_owner_alive(&ac, pid, 0)); /* start unknown: the pid decides */
	assert_false(perflib_owner_alive(&ac, 0x7ffffff0, 0));
	/* a process that ran and exited */
	child = fork();
	assert_true(child >= 0);
	if (!child)
		_exit(0);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_false(perflib_owner_alive(&ac, (uint32_t)child, 0));
	perflib_alive_fini(&ac);
	assert_null(ac.tab);
	/* a fresh cache after fini gives the same answers */
	assert_true(perflib_owner_alive(&ac, pid, start));
	assert_false(perflib_owner_alive(&ac, pid, start + 1));
	perflib_alive_fini(&ac);
}

/* ---- reader.c: visibility rules ------------------------------------------------------------ */

static void test_reader_rules(void **state)
{
	struct perflib_cset *cs;
	struct prov p;
	struct seen s;
	uint8_t *slot;
	uint32_t i, name_max;
	WCHAR *name;

	(void)state;
	prov_start(&p, PERF_COUNTERSET_MULTI_INSTANCES);
	prov_add(&p, 0, "real", 1, 3);
	prov_add(&p, 1, "_Total", 2, 5); /* an ordinary name in a plain multiple-instance set */
	assert_int_equal(perflib_cset_get(&p.set, &cs), 0);
	/* the slots forged below are of class 0 (s0/data) */
	name_max = cs->map->cls[0].geo->name_max;
	for (i = 10; i <= 15; i++) {
		slot = make_slot(cs, PERFLIB_SLOT_LIVE, "ghost", 0xFFFFFFFF);
		name = (WCHAR *)(slot + cs->map->info->name_offset);
		switch (i) {
		case 10: /* no NUL inside name_max */
			for (uint32_t n = 0; n < name_max; n++)
				name[n] = u'A';
			break;
		case 11: /* claimed, not live */
			*(uint64_t *)slot = perflib_make_word(PERFLIB_SLOT_CLAIMED, 77, getpid());
			break;
		case 12: /* our pid, another start time */
			((struct perflib_slot_hdr *)slot)->owner_start += 12345;
			break;
		case 13: /* pid 0 */
			*(uint64_t *)slot = perflib_make_word(PERFLIB_SLOT_LIVE, 77, 0);
			break;
		case 14: /* free */
			*(uint64_t *)slot = perflib_make_word(PERFLIB_SLOT_FREE, 78, 0);
			break;
		default: /* well formed: shown */
			break;
		}
		assert_int_equal(tl_poke_slot(&p.set, i, slot), 0);
		free(slot);
	}
	perflib_cset_put(cs);

	read_all(&p.set, true, &s);
	assert_int_equal(s.nr, 3);
	assert_string_equal(s.names[0], "real");
	assert_string_equal(s.names[1], "_Total");
	assert_string_equal(s.names[2], "ghost");
	assert_int_equal(s.f[0].id, 1);
	assert_int_equal(s.f[1].id, 2);
	assert_int_equal(s.f[2].id, 0xFFFFFFFF);
	assert_true(s.f[0].slot < s.f[1].slot); /* slot order */
	assert_int_equal(s.f[2].slot, 15);
	assert_int_equal(s.f[2].gen, 77);
	assert_int_equal(s.f[2].len, 5);
	assert_int_equal(s.v[0][0], 3);
	assert_int_equal(s.v[0][1], 3007);
	assert_int_equal(s.v[2][0], 0xEEEEEEEEull); /* DWORD: the low 4 bytes of the slot */
	assert_int_equal(s.v[2][1], 0xEEEEEEEEEEEEEEEEull);
	/* without values, the value buffers are not touched */
	read_all(&p.set, false, &s);
	assert_int_equal(s.nr, 3);
	assert_int_equal(s.v[0][0], 0x5555);
	/* a deleted instance is gone at once */
	assert_int_equal(PerfDeleteInstance(p.h, p.inst[0]), ERROR_SUCCESS);
	read_all(&p.set, true, &s);
	assert_int_equal(s.nr, 2);
	assert_string_equal(s.names[0], "_Total");
	assert_int_equal(PerfStopProvider(p.h), ERROR_SUCCESS);
}

static void test_total_hidden(void **state)
{
	static const ULONG types[] = {PERF_COUNTERSET_MULTI_AGGREGATE,
				      PERF_COUNTERSET_INSTANCE_AGGREGATE};
	struct prov p;
	struct seen s;
	unsigned int t;

	(void)state;
	assert_true(perflib_total_hidden(PERF_COUNTERSET_MULTI_AGGREGATE, u"_Total", 6));
	assert_true(perflib_total_hidden(PERF_COUNTERSET_INSTANCE_AGGREGATE, u"_Total", 6));
	assert_false(perflib_total_hidden(PERF_COUNTERSET_MULTI_INSTANCES, u"_Total", 6));
	assert_false(perflib_total_hidden(PERF_COUNTERSET_SINGLE_AGGREGATE, u"_Total", 6));
	assert_false(perflib_total_hidden(PERF_COUNTERSET_MULTI_AGGREGATE, u"_Totals", 7));
	assert_false(perflib_total_hidden(PERF_COUNTERSET_MULTI_AGGREGATE, u"_total", 6));
	assert_false(perflib_total_hidden(PERF_COUNTERSET_MULTI_AGGREGATE, u"_Tota", 5));
	for (t = 0; t < 2; t++) {
		prov_start(&p, types[t]);
		prov_add(&p, 0, "_Total", 1, 5);
		prov_add(&p, 1, "a", 2, 6);
		read_all(&p.set, true, &s);
		assert_int_equal(s.nr, 1);
		assert_string_equal(s.names[0], "a");
		assert_int_equal(PerfStopProvider(p.h), ERROR_SUCCESS);
	}
}

static void test_single_cutoff(void **state)
{
	struct perflib_cset *cs;
	struct prov p;
	struct seen s;
	uint8_t *slot;

	(void)state;
	prov_start(&p, PERF_COUNTERSET_SINGLE_INSTANCE);
	read_all(&p.set, true, &s);
	assert_int_equal(s.nr, 0);
	prov_add(&p, 0, "", 0, 9);
	/* a second live slot can only be garbage: the first one in slot order is the instance */
	assert_int_equal(perflib_cset_get(&p.set, &cs), 0);
	slot = make_slot(cs, PERFLIB_SLOT_LIVE, "", 0);
	perflib_cset_put(cs);
	assert_int_equal(tl_poke_slot(&p.set, 20, slot), 0);
	free(slot);
	read_all(&p.set, true, &s);
	assert_int_equal(s.nr, 1);
	assert_int_equal(s.v[0][0], 9);
	assert_true(s.f[0].slot < 20);
	assert_int_equal(PerfStopProvider(p.h), ERROR_SUCCESS);
}

/* ---- snap.c and obuf.c: the two paths give the same bytes ------------------------------------ */

/* the blocks of the instances of @snap that @f accepts, as query_data.c writes them */
static void write_snap(const struct perflib_cset *cs, const struct perflib_snap *snap,
		       const struct perflib_filter *f, int pos, struct perflib_obuf *o,
		       uint32_t *ret_nr)
{
	size_t i;

	*ret_nr = 0;
	for (i = 0; i < snap->nr; i++) {
		const struct perflib_snap_inst *in = &snap->inst[i];

		if (f &&
		    !perflib_filter_match(f, in->id, perflib_snap_name(snap, in), in->name_len))
			continue;
		perflib_obuf_snap_instance(o, snap, in);
		if (pos != PERFLIB_NO_VALUES)
			perflib_obuf_values(o, cs, snap->vals + (size_t)in->row * snap->nr_counters,
					    snap->nodata + (size_t)in->row * snap->nr_counters,
					    pos);
		(*ret_nr)++;
	}
}

static void test_direct_equals_snapshot(void **state)
{
	static const int positions[] = {-1, 0, 1, PERFLIB_NO_VALUES};
	struct perflib_filter any = {.instance_id = 0xFFFFFFFF},
			      b_only = {.instance_id = 0xFFFFFFFF, .name = u"b*"},
			      id_3 = {.instance_id = 3};
	const struct perflib_filter *filters[] = {NULL, &any, &b_only, &id_3};
	static const char *names[] = {"a", "bb", "bcd", "a long name of some length", "b"};
	struct perflib_snap snap;
	struct perflib_cset *cs;
	struct prov p;
	unsigned int i, k, fi;
	uint8_t *a = malloc(65536), *b = malloc(65536);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	prov_start(&p, PERF_COUNTERSET_MULTI_INSTANCES);
	for (i = 0; i < 5; i++)
		prov_add(&p, i, names[i], i + 1, 10 * i + 1);
	assert_int_equal(perflib_cset_get(&p.set, &cs), 0);
	memset(&snap, 0, sizeof(snap));
	assert_int_equal(perflib_snap_read(cs, true, &snap), 0);
	assert_int_equal(snap.nr, 5);
	for (k = 0; k < 4; k++) {
		for (fi = 0; fi < 4; fi++) {
			/* a buffer with room, then one too small: equal sizes either way */
			for (size_t cap = 65536; cap; cap = cap == 65536 ? 40 : 0) {
				struct perflib_obuf oa = {.p = a, .cap = cap},
						    ob = {.p = b, .cap = cap};
				uint32_t na, nb;

				memset(a, 0xA5, 65536);
				memset(b, 0xA5, 65536);
				assert_int_equal(perflib_obuf_direct(cs, filters[fi], positions[k],
								     &oa, &na),
						 0);
				write_snap(cs, &snap, filters[fi], positions[k], &ob, &nb);
				assert_int_equal(na, nb);
				assert_int_equal(oa.len, ob.len);
				if (cap >= oa.len)
					assert_memory_equal(a, b, oa.len);
				assert_int_equal(na, fi == 0 || fi == 1 ? 5 : fi == 2 ? 3 : 1);
			}
		}
	}
	/* snapshots: perflib_snap_add keeps a name taken from the pool when the pool grows */
	for (i = 0; i < 2000; i++) {
		struct perflib_snap_inst *in;

		assert_int_equal(perflib_snap_add(&snap, 0, perflib_snap_name(&snap, &snap.inst[1]),
						  snap.inst[1].name_len, &in),
				 0);
	}
	assert_int_equal(snap.nr, 2005);
	assert_true(cons_weq(perflib_snap_name(&snap, &snap.inst[2004]), 2, "bb"));
	perflib_snap_free(&snap);
	perflib_cset_put(cs);
	assert_int_equal(PerfStopProvider(p.h), ERROR_SUCCESS);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_liveness),
		cmocka_unit_test(test_reader_rules),
		cmocka_unit_test(test_total_hidden),
		cmocka_unit_test(test_single_cutoff),
		cmocka_unit_test(test_direct_equals_snapshot),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("reader", tests, tl_group_setup, tl_group_teardown);
}
