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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
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

/* with @extra more LARGE counters (ids 3, 4, ...) after the first two */
static void prov_start_n(struct prov *p, ULONG instance_type, unsigned int extra)
{
	struct prov_tmpl t;
	GUID pg = prov_provider_guid();

	p->set = prov_guid();
	prov_tmpl_init(&t, p->set, instance_type);
	prov_tmpl_add(&t, 1, PERF_COUNTER_RAWCOUNT, 0);
	prov_tmpl_add(&t, 2, PERF_COUNTER_LARGE_RAWCOUNT, 0);
	for (unsigned int k = 0; k < extra; k++)
		prov_tmpl_add(&t, 3 + k, PERF_COUNTER_LARGE_RAWCOUNT, 0);
	assert_int_equal(PerfStartProvider(&pg, NULL, &p->h), ERROR_SUCCESS);
	assert_int_equal(prov_tmpl_register(p->h, &t), ERROR_SUCCESS);
}

static void prov_start(struct prov *p, ULONG instance_type)
{
	prov_start_n(p, instance_type, 0);
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

/*
 * perflib_obuf_direct on @cs against the snapshot written block by block: every position,
 * filter and buffer size from 0 to the whole output (and one more), in an aligned buffer
 * and one that is not (the direct writer then builds each block aside); @nr instances
 */
static void check_direct(const struct perflib_cset *cs, unsigned int nr)
{
	static const int positions[] = {-1, 0, 1, PERFLIB_NO_VALUES};
	struct perflib_filter any = {.instance_id = 0xFFFFFFFF},
			      b_only = {.instance_id = 0xFFFFFFFF, .name = u"b*"},
			      id_3 = {.instance_id = 3};
	const struct perflib_filter *filters[] = {NULL, &any, &b_only, &id_3};
	uint8_t *a = malloc(65536 + 8), *b = malloc(65536);
	struct perflib_snap snap;
	unsigned int k, fi;

	assert_non_null(a);
	assert_non_null(b);
	memset(&snap, 0, sizeof(snap));
	assert_int_equal(perflib_snap_read(cs, true, &snap), 0);
	assert_int_equal(snap.nr, nr);
	for (k = 0; k < 4; k++) {
		for (fi = 0; fi < 4; fi++) {
			struct perflib_obuf ob = {.p = b, .cap = 65536};
			uint32_t nb, na;
			size_t full;

			write_snap(cs, &snap, filters[fi], positions[k], &ob, &nb);
			full = ob.len;
			assert_true(full < 65536);
			for (size_t cap = 0; cap <= full + 1; cap++) {
				for (size_t shift = 0; shift <= 3; shift += 3) {
					struct perflib_obuf oa = {.p = a + shift, .cap = cap};

					memset(a, 0xA5, 65536 + 8);
					assert_int_equal(perflib_obuf_direct(cs, filters[fi],
									     positions[k], &oa,
									     &na),
							 0);
					assert_int_equal(na, nb);
					assert_int_equal(oa.len, full);
					/* what fits is written, nothing before the buffer */
					if (cap >= full)
						assert_memory_equal(a + shift, b, full);
					assert_int_equal(a[shift ? shift - 1 : 0],
							 shift ? 0xA5 : a[0]);
				}
			}
		}
	}
	perflib_snap_free(&snap);
	free(a);
	free(b);
}

static void test_direct_equals_snapshot(void **state)
{
	static const char *names[] = {"a", "bb", "bcd", "a long name of some length", "b"};
	struct perflib_snap snap;
	struct perflib_cset *cs;
	struct prov p;
	unsigned int i;

	(void)state;
	prov_start(&p, PERF_COUNTERSET_MULTI_INSTANCES);
	for (i = 0; i < 5; i++)
		prov_add(&p, i, names[i], i + 1, 10 * i + 1);
	assert_int_equal(perflib_cset_get(&p.set, &cs), 0);
	check_direct(cs, 5);
	/* snapshots: perflib_snap_add keeps a name taken from the pool when the pool grows */
	memset(&snap, 0, sizeof(snap));
	assert_int_equal(perflib_snap_read(cs, true, &snap), 0);
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
}

/*
 * the direct writer's other loops give the snapshot's bytes too: a set with more counters
 * than it writes as records itself, a MULTI_AGGREGATE set (its provider's own "_Total"
 * hidden), a SINGLE_INSTANCE set with a second, forged live slot (cut off)
 */
static void test_direct_other_sets(void **state)
{
	static const char *names[] = {"a", "bb", "_Total", "b"};
	struct perflib_cset *cs;
	struct prov p;
	uint8_t *slot;
	unsigned int i;

	(void)state;
	prov_start_n(&p, PERF_COUNTERSET_MULTI_INSTANCES, PERFLIB_RECORDS_MAX - 1);
	for (i = 0; i < 4; i++)
		prov_add(&p, i, names[i], i + 1, 10 * i + 1);
	assert_int_equal(
		PerfSetULongLongCounterValue(p.h, p.inst[2], 3 + PERFLIB_RECORDS_MAX - 2, 77),
		ERROR_SUCCESS);
	assert_int_equal(perflib_cset_get(&p.set, &cs), 0);
	assert_true(cs->nr_counters > PERFLIB_RECORDS_MAX);
	check_direct(cs, 4);
	perflib_cset_put(cs);
	assert_int_equal(PerfStopProvider(p.h), ERROR_SUCCESS);

	prov_start(&p, PERF_COUNTERSET_MULTI_AGGREGATE);
	for (i = 0; i < 4; i++)
		prov_add(&p, i, names[i], i + 1, 10 * i + 1);
	assert_int_equal(perflib_cset_get(&p.set, &cs), 0);
	check_direct(cs, 3);
	perflib_cset_put(cs);
	assert_int_equal(PerfStopProvider(p.h), ERROR_SUCCESS);

	prov_start(&p, PERF_COUNTERSET_SINGLE_INSTANCE);
	prov_add(&p, 0, "", 0, 9);
	assert_int_equal(perflib_cset_get(&p.set, &cs), 0);
	slot = make_slot(cs, PERFLIB_SLOT_LIVE, "bx", 3);
	assert_int_equal(tl_poke_slot(&p.set, 20, slot), 0);
	free(slot);
	check_direct(cs, 1);
	perflib_cset_put(cs);
	assert_int_equal(PerfStopProvider(p.h), ERROR_SUCCESS);
}

/* ---- the name copy --------------------------------------------------------------------------- */

static void test_name_copy(void **state)
{
	static const size_t maxes[] = {1, 3, 4, 5, 8, 9, 12, 16, 17, 35, 36, 37, 64, 1025};
	WCHAR src[1100];
	uint8_t dst[2300];
	unsigned int m;

	(void)state;
	for (m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
		size_t max = maxes[m], room = (2 * max + 7) & ~(size_t)7;

		for (size_t len = 0; len <= max + 1 && len < 1090; len++) {
			size_t k, got, end;

			/* the name, its NUL, then garbage (a slot's leftovers) */
			for (k = 0; k < 1100; k++)
				src[k] = k < len ? (WCHAR)(u'A' + k % 26) : k == len ? 0 : 0x7777;
			memset(dst, 0xEE, sizeof(dst));
			got = perflib_name_copy(dst, src, max);
			assert_int_equal(perflib_name_len(src, max), got);
			if (len >= max) {
				/* no NUL inside max units */
				assert_int_equal(got, max);
			} else {
				assert_int_equal(got, len);
				assert_memory_equal(dst, src, 2 * len);
				/* the NUL and the rest of its 8-byte word are 0 */
				end = (2 * (len + 1) + 7) & ~(size_t)7;
				for (k = 2 * len; k < end; k++)
					assert_int_equal(dst[k], 0);
				/* anything written after it is 0 as well, and at most 8 bytes */
				for (k = end; k < end + 8 && dst[k] != 0xEE; k++)
					assert_int_equal(dst[k], 0);
				assert_true(k <= room);
			}
			/* never past round8(2 * max) */
			for (k = room; k < room + 16; k++)
				assert_int_equal(dst[k], 0xEE);
		}
	}
}

/* ---- a slot read while it changes ------------------------------------------------------------ */

#define FAKE_SLOT 256	  /* a slot of a made-up class: */
#define FAKE_NAME_OFF 112 /* name at 112, */
#define FAKE_NAME_MAX 36  /* 36 units */
#define FAKE_COUNTERS 2	  /* two counters at 48 */

struct flipper {
	uint8_t *slot;
	uint32_t pid;
	uint32_t gen, id;
	unsigned long flips;
};

/* instance @id's name: 10 'a' for id 1, 30 'b' for id 2; its values id * 1000 + k */
static void fake_fill(uint8_t *slot, uint32_t id)
{
	WCHAR *name = (WCHAR *)(slot + FAKE_NAME_OFF);
	uint64_t *v = (uint64_t *)(slot + PERFLIB_COUNTERS_OFFSET);
	unsigned int k, len = id == 1 ? 10 : 30;

	for (k = 0; k < FAKE_NAME_MAX; k++)
		__atomic_store_n(&name[k], k < len ? (WCHAR)(id == 1 ? u'a' : u'b') : 0,
				 __ATOMIC_RELAXED);
	for (k = 0; k < FAKE_COUNTERS; k++)
		__atomic_store_n(&v[k], id * 1000 + k, __ATOMIC_RELAXED);
	__atomic_store_n(&((PERF_COUNTERSET_INSTANCE *)(slot + PERFLIB_BLOCK_OFFSET))->InstanceId,
			 id, __ATOMIC_RELAXED);
}

static struct flipper flipper;

/*
 * a writer as instance.c is one: hide (CLAIMED), rewrite as the other instance, publish
 * (LIVE). Run from a timer signal, it lands anywhere inside the reader's copy.
 */
static void flip(int sig)
{
	struct flipper *fl = &flipper;
	uint64_t *word = (uint64_t *)fl->slot;

	(void)sig;
	__atomic_store_n(word, perflib_make_word(PERFLIB_SLOT_CLAIMED, fl->gen++, fl->pid),
			 __ATOMIC_RELEASE);
	fl->id = 3 - fl->id;
	fake_fill(fl->slot, fl->id);
	__atomic_store_n(word, perflib_make_word(PERFLIB_SLOT_LIVE, fl->gen++, fl->pid),
			 __ATOMIC_RELEASE);
	fl->flips++;
}

static struct perflib_span fake_span(const uint8_t *a, const uint8_t *b, const uint64_t *live)
{
	struct perflib_span sp = {
		.live = live,
		.a = a,
		.b = b,
		.last_mask = 1,
		.nwords = 1,
		.slot_size = FAKE_SLOT,
		.name_offset = FAKE_NAME_OFF,
		.name_max = FAKE_NAME_MAX,
	};

	return sp;
}

static volatile unsigned long ticks;

static void tick(int sig)
{
	(void)sig;
	ticks++;
}

/*
 * a running owner stays running while signals rain on the reader: its pidfd's poll()
 * interrupted (EINTR, never restarted) is no exit. Each fresh cache asks the process-wide
 * one, which polls the remembered pidfd: 20,000 polls under a 20 µs interval timer (without
 * the retry the first poll already failed here).
 */
static void test_alive_under_signals(void **state)
{
	struct itimerval it = {{0, 20}, {0, 20}}, off = {{0, 0}, {0, 0}};
	struct perflib_alive ac;
	unsigned long i;
	uint64_t start;
	uint32_t pid;

	(void)state;
	perflib_self(&pid, &start);
	signal(SIGALRM, tick);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	for (i = 0; i < 20000; i++) {
		memset(&ac, 0, sizeof(ac));
		if (!perflib_owner_alive(&ac, pid, start))
			break;
	}
	assert_int_equal(setitimer(ITIMER_REAL, &off, NULL), 0);
	signal(SIGALRM, SIG_DFL);
	print_message("%lu lookups, %lu signals\n", i, ticks);
	assert_int_equal(i, 20000);
	assert_true(ticks > 0);
}

static void test_read_slot_changing(void **state)
{
	static const uint64_t live = 1;
	uint8_t *slot = aligned_alloc(64, FAKE_SLOT), out[512];
	struct itimerval it = {{0, 37}, {0, 37}}, off = {{0, 0}, {0, 0}};
	struct perflib_alive ac;
	struct perflib_owners ow = {.ac = &ac};
	struct perflib_vals_out vo = {.n = FAKE_COUNTERS};
	struct perflib_span sp;
	struct perflib_found f;
	unsigned long seen[3] = {0, 0, 0}, i;
	uint64_t start;

	(void)state;
	assert_non_null(slot);
	memset(slot, 0, FAKE_SLOT);
	memset(&ac, 0, sizeof(ac));
	flipper.slot = slot;
	flipper.id = 1;
	flipper.gen = 1;
	perflib_self(&flipper.pid, &start);
	((struct perflib_slot_hdr *)slot)->owner_start = start;
	fake_fill(slot, 1);
	*(uint64_t *)slot = perflib_make_word(PERFLIB_SLOT_LIVE, 0, flipper.pid);
	for (i = 0; i < FAKE_COUNTERS; i++) {
		vo.hdr[i] = 0x1000000008ull;
		vo.mask[i] = ~0ull;
	}
	sp = fake_span(slot, slot, &live);
	signal(SIGALRM, flip);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	/*
	 * every instance returned is one the writer published whole: name, id and values agree
	 * (the writer interrupts the reads some thousand times)
	 */
	for (i = 0; flipper.flips < 5000 && i < 100000000; i++) {
		WCHAR *name = (WCHAR *)(out + sizeof(PERF_INSTANCE_HEADER));
		uint64_t *rec;

		if (!perflib_read_slot(&sp, 0, NULL, &ow, name, PERFLIB_VALS_RECORDS, &vo, &f))
			continue;
		assert_true(f.id == 1 || f.id == 2);
		assert_int_equal(f.len, f.id == 1 ? 10 : 30);
		assert_int_equal(f.slot, 0);
		for (unsigned int k = 0; k < f.len; k++)
			assert_int_equal(name[k], f.id == 1 ? u'a' : u'b');
		assert_int_equal(name[f.len], 0);
		rec = (uint64_t *)((uint8_t *)name + ((2 * (f.len + 1) + 7) & ~7u));
		for (unsigned int k = 0; k < FAKE_COUNTERS; k++) {
			assert_int_equal(rec[2 * k], 0x1000000008ull);
			assert_int_equal(rec[2 * k + 1], f.id * 1000 + k);
		}
		seen[f.id]++;
	}
	assert_int_equal(setitimer(ITIMER_REAL, &off, NULL), 0);
	signal(SIGALRM, SIG_DFL);
	assert_true(seen[1] > 0 && seen[2] > 0);
	perflib_alive_fini(&ac);
	free(slot);
}

/*
 * unmapped: two copies of a slot; kept only when its word is the same in both, never
 * retried (the copies do not change). A name that fills the capacity without a NUL, and
 * an owner that is not running, are skipped either way.
 */
static void test_read_slot_copies(void **state)
{
	static const uint64_t live = 1;
	uint8_t *a = calloc(1, FAKE_SLOT), *b = calloc(1, FAKE_SLOT);
	WCHAR name[FAKE_NAME_MAX + 8];
	struct perflib_alive ac;
	struct perflib_owners ow = {.ac = &ac};
	struct perflib_vals_out vo = {.n = 0};
	struct perflib_span sp;
	struct perflib_found f;
	WCHAR *n;
	uint64_t start;
	uint32_t pid;
	pid_t child;
	int status;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	memset(&ac, 0, sizeof(ac));
	perflib_self(&pid, &start);
	((struct perflib_slot_hdr *)a)->owner_start = start;
	fake_fill(a, 2);
	*(uint64_t *)a = perflib_make_word(PERFLIB_SLOT_LIVE, 5, pid);
	memcpy(b, a, FAKE_SLOT);
	sp = fake_span(a, b, &live);
	assert_true(perflib_read_slot(&sp, 0, NULL, &ow, name, PERFLIB_VALS_NONE, &vo, &f));
	assert_int_equal(f.id, 2);
	assert_int_equal(f.len, 30);
	assert_int_equal(f.gen, 5);
	/* the second copy saw another generation: skipped */
	*(uint64_t *)b = perflib_make_word(PERFLIB_SLOT_LIVE, 6, pid);
	assert_false(perflib_read_slot(&sp, 0, NULL, &ow, name, PERFLIB_VALS_NONE, &vo, &f));
	*(uint64_t *)b = *(uint64_t *)a;
	/* a name of 35 units ends inside the capacity; one of 36 does not */
	n = (WCHAR *)(a + FAKE_NAME_OFF);
	for (unsigned int k = 0; k < FAKE_NAME_MAX; k++)
		n[k] = u'x';
	n[FAKE_NAME_MAX - 1] = 0;
	assert_true(perflib_read_slot(&sp, 0, NULL, &ow, name, PERFLIB_VALS_NONE, &vo, &f));
	assert_int_equal(f.len, FAKE_NAME_MAX - 1);
	n[FAKE_NAME_MAX - 1] = u'x';
	assert_false(perflib_read_slot(&sp, 0, NULL, &ow, name, PERFLIB_VALS_NONE, &vo, &f));
	/* without a name (a caller that holds it), the same slot is returned */
	assert_true(perflib_read_slot(&sp, 0, NULL, &ow, NULL, PERFLIB_VALS_NONE, &vo, &f));
	assert_int_equal(f.len, 0);
	n[0] = 0;
	/* an owner that ran and exited, then this process again: the answers of each */
	child = fork();
	assert_true(child >= 0);
	if (!child)
		_exit(0);
	assert_int_equal(waitpid(child, &status, 0), child);
	*(uint64_t *)a = *(uint64_t *)b = perflib_make_word(PERFLIB_SLOT_LIVE, 5, (uint32_t)child);
	((struct perflib_slot_hdr *)a)->owner_start = 0;
	assert_false(perflib_read_slot(&sp, 0, NULL, &ow, name, PERFLIB_VALS_NONE, &vo, &f));
	*(uint64_t *)a = *(uint64_t *)b = perflib_make_word(PERFLIB_SLOT_LIVE, 5, pid);
	((struct perflib_slot_hdr *)a)->owner_start = start;
	assert_true(perflib_read_slot(&sp, 0, NULL, &ow, name, PERFLIB_VALS_NONE, &vo, &f));
	assert_int_equal(f.len, 0);
	perflib_alive_fini(&ac);
	free(a);
	free(b);
}

/*
 * a provider process dies between reads: the reads after it (in this process, whose epoll
 * instance holds the provider's pidfd after the first read, and in a child forked after
 * that, whose instance is its own) show none of its instances
 */
static void test_owner_exits_between_reads(void **state)
{
	struct prov p;
	BYTE *buf;
	DWORD len;
	int up[2], status;
	pid_t pid, reader;
	char c;

	(void)state;
	p.set = prov_guid();
	/* the provider: a child that registers the set, creates one instance and waits */
	assert_int_equal(pipe(up), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		GUID pg = prov_provider_guid();
		struct prov_tmpl t;
		HANDLE h;

		close(up[0]);
		prov_tmpl_init(&t, p.set, PERF_COUNTERSET_MULTI_INSTANCES);
		prov_tmpl_add(&t, 1, PERF_COUNTER_RAWCOUNT, 0);
		if (PerfStartProvider(&pg, NULL, &h) || prov_tmpl_register(h, &t) ||
		    !PerfCreateInstance(h, &p.set, cons_w("child"), 1))
			_exit(1);
		if (write(up[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(up[1]);
	assert_int_equal(read(up[0], &c, 1), 1);
	close(up[0]);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(cons_enum(&p.set, &buf, &len), ERROR_SUCCESS);
		assert_int_equal(cons_instances(buf, len, NULL, 0), 1);
		free(buf);
	}
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(tl_wait(pid, 10000), 128 + SIGKILL);
	reader = fork();
	assert_true(reader >= 0);
	if (!reader) {
		if (cons_enum(&p.set, &buf, &len) != ERROR_SUCCESS || len != 0)
			_exit(1);
		_exit(0);
	}
	assert_int_equal(waitpid(reader, &status, 0), reader);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(cons_enum(&p.set, &buf, &len), ERROR_SUCCESS);
	assert_int_equal(len, 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_liveness),
		cmocka_unit_test(test_reader_rules),
		cmocka_unit_test(test_total_hidden),
		cmocka_unit_test(test_single_cutoff),
		cmocka_unit_test(test_direct_equals_snapshot),
		cmocka_unit_test(test_direct_other_sets),
		cmocka_unit_test(test_name_copy),
		cmocka_unit_test(test_alive_under_signals),
		cmocka_unit_test(test_read_slot_changing),
		cmocka_unit_test(test_read_slot_copies),
		cmocka_unit_test(test_owner_exits_between_reads),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("reader", tests, tl_group_setup, tl_group_teardown);
}
