/* SPDX-License-Identifier: MIT */
/*
 * test_pdh_perfbuf.c - decoding of consumer-API buffers (pdh/perfbuf.c) and the two views
 * built on it, libpdh's catalog (pdh/decode.c) and perflib-exporter's (exp_sample.c): the
 * byte-level examples of perflib-api.md 8.1, 8.2 and 8.5, every PerfCounterDataType, UTF-16
 * conversion, malformed buffers (sizes, counts, offsets, missing NULs), truncation and
 * corruption at every byte and at random. A malformed buffer must give an error or fewer
 * instances, never a read out of bounds (run this test under valgrind or
 * SANITIZE=address to see that). No BPF needed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "exp_sample.h"
#include "perfbuf.h"
#include "decode.h"
#include "pdh_sets.h"

/* perflib-api.md 8.1: instances Id 1 "A1" and Id 7 "Worker" */
static const uint8_t instances_81[] = {
	0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x41, 0x00, 0x31, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x57, 0x00, 0x6f, 0x00,
	0x72, 0x00, 0x6b, 0x00, 0x65, 0x00, 0x72, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/*
 * perflib-api.md 8.2: S (single instance, counter 1 = 42, PERF_SINGLE_COUNTER) at Index 0,
 * M (two counters, instances "a" = 5, 0x100000000 and "bb" = 6, 7) at Index 1
 */
static const uint8_t data_82[] = {
	0xd8, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x90, 0x78, 0x56, 0x34, 0x12, 0x00, 0x00,
	0x00, 0xe0, 0x34, 0xb0, 0x58, 0x28, 0x3d, 0xda, 0x01, 0x80, 0x96, 0x98, 0x00, 0x00, 0x00,
	0x00, 0x00, 0xe8, 0x07, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x03, 0x00, 0x04, 0x00, 0x05,
	0x00, 0xa6, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x88, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x68, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
	0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x61, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x04, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x62, 0x00, 0x62, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x07, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* perflib-api.md 8.5: counter 1 "Reads", counter 2 without a string */
static const uint8_t names_85[] = {
	0x24, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x18, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
	0x52, 0x00, 0x65, 0x00, 0x61, 0x00, 0x64, 0x00, 0x73, 0x00, 0x00, 0x00,
};

/* ---- buffer builders ------------------------------------------------------------------- */

/* a little-endian buffer builder for hand-made cases */
struct bb {
	uint8_t b[4096];
	size_t n;
};

static size_t put32(struct bb *b, uint32_t v)
{
	size_t at = b->n;

	memcpy(b->b + b->n, &v, 4);
	b->n += 4;
	return at;
}

static void put64(struct bb *b, uint64_t v)
{
	memcpy(b->b + b->n, &v, 8);
	b->n += 8;
}

static void set32(struct bb *b, size_t at, uint32_t v)
{
	memcpy(b->b + at, &v, 4);
}

/* ASCII as UTF-16 with NUL, padded to 8 */
static void put_wstr(struct bb *b, const char *s)
{
	do {
		b->b[b->n++] = (uint8_t)*s;
		b->b[b->n++] = 0;
	} while (*s++);
	while (b->n % 8)
		b->b[b->n++] = 0;
}

/* an instance block: header + name */
static void put_instance(struct bb *b, uint32_t id, const char *name)
{
	size_t at = put32(b, 0);

	put32(b, id);
	put_wstr(b, name);
	set32(b, at, (uint32_t)(b->n - at));
}

static void put_value(struct bb *b, uint32_t size, uint64_t v)
{
	put32(b, size);
	put32(b, 16);
	put64(b, v);
}

static void put_data_header(struct bb *b, uint32_t nr)
{
	put32(b, 0); /* total, set by finish */
	put32(b, nr);
	put64(b, 1000);			 /* PerfTimeStamp */
	put64(b, 133486382456780000ULL); /* PerfTime100NSec */
	put64(b, 1000000000);		 /* PerfFreq */
	put64(b, 0);			 /* SystemTime */
	put64(b, 0);
}

static void finish(struct bb *b)
{
	set32(b, 0, (uint32_t)b->n);
}

/* ---- perfbuf itself -------------------------------------------------------------------- */

static void test_utf(void **state)
{
	/* "A", U+00E9, U+20AC, U+1F600 (surrogates), NUL, then ignored */
	const uint16_t w[] = {0x41, 0xE9, 0x20AC, 0xD83D, 0xDE00, 0, 0x42};
	const uint16_t bad[] = {0xD800, 0x41, 0xDC00};
	char *s;

	(void)state;
	s = pdh_perfbuf_utf16_dup(w, 7);
	assert_string_equal(s, "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	free(s);
	/* unpaired surrogates become U+FFFD */
	s = pdh_perfbuf_utf16_dup(bad, 3);
	assert_string_equal(s, "\xef\xbf\xbd"
			       "A\xef\xbf\xbd");
	free(s);
}

static void test_utf_bounded(void **state)
{
	/* "aé€" U+1F600, an unpaired high surrogate, then "z" */
	static const uint16_t text[] = {'a', 0xe9, 0x20ac, 0xd83d, 0xde00, 0xd800, 'z', 0};
	char out[32], *dup;
	size_t n;

	(void)state;
	n = pdh_perfbuf_utf16_to_utf8(text, 8, out, sizeof(out));
	assert_string_equal(out, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbdz");
	assert_int_equal(n, strlen(out));
	/* cut at a character boundary when the output is small */
	n = pdh_perfbuf_utf16_to_utf8(text, 8, out, 5);
	assert_string_equal(out, "a\xc3\xa9");
	assert_int_equal(n, 3);
	/* stop after max units, even inside a pair */
	pdh_perfbuf_utf16_to_utf8(text, 4, out, sizeof(out));
	assert_string_equal(out, "a\xc3\xa9\xe2\x82\xac\xef\xbf\xbd");
	dup = pdh_perfbuf_utf16_dup(text, 100);
	assert_string_equal(dup, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbdz");
	free(dup);
	dup = pdh_perfbuf_utf16_dup(text, 0);
	assert_string_equal(dup, "");
	free(dup);
}

static void test_string(void **state)
{
	const uint8_t name[] = {'D', 0, 'e', 0, 'm', 0, 'o', 0, 0, 0, 0xAA, 0xBB};
	char *s;

	(void)state;
	assert_int_equal(pdh_perfbuf_string(name, sizeof(name), &s), 0);
	assert_string_equal(s, "Demo");
	free(s);
	/* no NUL inside the bytes returned */
	assert_int_equal(pdh_perfbuf_string(name, 8, &s), -EBADMSG);
	assert_int_equal(pdh_perfbuf_string(name, 9, &s), -EBADMSG);
	assert_int_equal(pdh_perfbuf_string(name, 0, &s), -EBADMSG);
}

/* what a walk reported, for the walker's own rules */
struct rec {
	bool decode;	     /* what block() answers */
	int fail_begin;	     /* returned by begin() */
	int fail_item;	     /* returned by item() */
	uint32_t nr_blocks;  /* from begin() */
	unsigned int blocks; /* block() calls */
	unsigned int items, named, values, ends, malformed;
	uint32_t ids[8]; /* counter ids of the first values */
};

static int rec_begin(void *ctx, const struct pdh_perfbuf_data_header *hdr)
{
	struct rec *r = ctx;

	r->nr_blocks = hdr->nr_blocks;
	return r->fail_begin;
}

static bool rec_block(void *ctx, uint32_t index, uint32_t status, uint32_t type)
{
	struct rec *r = ctx;

	(void)status, (void)type;
	assert_int_equal(index, r->blocks);
	r->blocks++;
	return r->decode;
}

static int rec_item(void *ctx, uint32_t id, const void *name, size_t units)
{
	struct rec *r = ctx;

	(void)id;
	r->items++;
	r->named += name != NULL;
	/* a name's NUL is inside the buffer, right after its units */
	if (name)
		assert_int_equal(((const uint8_t *)name)[2 * units], 0);
	return r->fail_item;
}

static int rec_value(void *ctx, uint32_t counter_id, uint32_t size, uint64_t value)
{
	struct rec *r = ctx;

	(void)size, (void)value;
	if (r->values < 8)
		r->ids[r->values] = counter_id;
	r->values++;
	return 0;
}

static int rec_block_end(void *ctx, bool malformed)
{
	struct rec *r = ctx;

	r->ends++;
	r->malformed += malformed;
	return 0;
}

static const struct pdh_perfbuf_data_ops rec_ops = {
	.begin = rec_begin,
	.block = rec_block,
	.item = rec_item,
	.value = rec_value,
	.block_end = rec_block_end,
};

/* pdh_perfbuf_strings_parse / pdh_perfbuf_instances_parse callback: fail with -ECANCELED */
static int cancel(void *ctx, uint32_t id, const void *text, size_t units)
{
	unsigned int *calls = ctx;

	(void)id, (void)text, (void)units;
	(*calls)++;
	return -ECANCELED;
}

static void test_walk(void **state)
{
	const uint32_t spec_ids[] = {1, PERF_WILDCARD_COUNTER};
	uint8_t buf[sizeof(data_82)];
	struct rec r = {.decode = true};
	unsigned int calls = 0;

	(void)state;
	/* every block decoded: S's value carries its spec's id, M's those of its list */
	assert_int_equal(
		pdh_perfbuf_data_parse(data_82, sizeof(data_82), spec_ids, 2, &rec_ops, &r), 0);
	assert_int_equal(r.nr_blocks, 2);
	assert_int_equal(r.blocks, 2);
	assert_int_equal(r.items, 3);
	assert_int_equal(r.named, 2);
	assert_int_equal(r.values, 5);
	assert_int_equal(r.ids[0], 1);
	assert_int_equal(r.ids[3], 1);
	assert_int_equal(r.ids[4], 2);
	assert_int_equal(r.ends, 2);
	assert_int_equal(r.malformed, 0);
	/* a skipped block is neither reported nor checked inside */
	memcpy(buf, data_82, sizeof(buf));
	buf[0x40] = 0x20; /* dwDataSize 32 in a 16-byte PERF_COUNTER_DATA */
	r = (struct rec){.decode = false};
	assert_int_equal(pdh_perfbuf_data_parse(buf, sizeof(buf), NULL, 0, &rec_ops, &r), 0);
	assert_int_equal(r.blocks, 2);
	assert_int_equal(r.items + r.values + r.ends, 0);
	r = (struct rec){.decode = true};
	assert_int_equal(pdh_perfbuf_data_parse(buf, sizeof(buf), NULL, 0, &rec_ops, &r), 0);
	assert_int_equal(r.ends, 2);
	assert_int_equal(r.malformed, 1);
	/* a callback's error stops the walk and is returned */
	r = (struct rec){.decode = true, .fail_item = -ECANCELED};
	assert_int_equal(pdh_perfbuf_data_parse(data_82, sizeof(data_82), NULL, 0, &rec_ops, &r),
			 -ECANCELED);
	assert_int_equal(r.items, 1);
	assert_int_equal(r.ends, 0);
	r = (struct rec){.decode = true, .fail_begin = -ENOMEM};
	assert_int_equal(pdh_perfbuf_data_parse(data_82, sizeof(data_82), NULL, 0, &rec_ops, &r),
			 -ENOMEM);
	assert_int_equal(r.blocks, 0);
	/* a broken data header is found before any callback */
	r = (struct rec){.decode = true};
	assert_int_equal(pdh_perfbuf_data_parse(data_82, 47, NULL, 0, &rec_ops, &r), -EBADMSG);
	assert_int_equal(r.nr_blocks + r.blocks, 0);
	assert_int_equal(pdh_perfbuf_strings_parse(names_85, sizeof(names_85), cancel, &calls),
			 -ECANCELED);
	assert_int_equal(
		pdh_perfbuf_instances_parse(instances_81, sizeof(instances_81), cancel, &calls),
		-ECANCELED);
	assert_int_equal(calls, 2);
}

/* ---- typeperf's view (decode.c) -------------------------------------------------------- */

static void test_instances_81(void **state)
{
	struct pdh_cat_instance *in;
	size_t nr;

	(void)state;
	assert_int_equal(pdh_decode_instances(instances_81, sizeof(instances_81), &in, &nr), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(in[0].id, 1);
	assert_string_equal(in[0].name, "A1");
	assert_int_equal(in[1].id, 7);
	assert_string_equal(in[1].name, "Worker");
	assert_int_equal(in[0].dup + in[1].dup, 0);
	free(in[0].name);
	free(in[1].name);
	free(in);
	/* empty: a counter set without instances */
	assert_int_equal(pdh_decode_instances(instances_81, 0, &in, &nr), 0);
	assert_int_equal(nr, 0);
	free(in);
	/* truncated inside the second block, and the first block alone */
	assert_int_equal(pdh_decode_instances(instances_81, 39, &in, &nr), -EBADMSG);
	assert_int_equal(pdh_decode_instances(instances_81, 16, &in, &nr), 0);
	assert_int_equal(nr, 1);
	free(in[0].name);
	free(in);
}

static void test_instances_dup_and_bad(void **state)
{
	struct pdh_cat_instance *in;
	struct bb b = {0};
	size_t nr, i;

	(void)state;
	put_instance(&b, 1, "alpha");
	put_instance(&b, 2, "beta");
	put_instance(&b, 3, "alpha");
	put_instance(&b, 4, "ALPHA");
	assert_int_equal(pdh_decode_instances(b.b, b.n, &in, &nr), 0);
	assert_int_equal(nr, 4);
	assert_int_equal(in[0].dup, 0);
	assert_int_equal(in[1].dup, 0);
	assert_int_equal(in[2].dup, 1);
	assert_int_equal(in[3].dup, 2);
	for (i = 0; i < nr; i++)
		free(in[i].name);
	free(in);
	/* Size smaller than a header plus a NUL, larger than the buffer, zero */
	set32(&b, 0, 9);
	assert_int_equal(pdh_decode_instances(b.b, b.n, &in, &nr), -EBADMSG);
	set32(&b, 0, (uint32_t)b.n + 8);
	assert_int_equal(pdh_decode_instances(b.b, b.n, &in, &nr), -EBADMSG);
	set32(&b, 0, 0);
	assert_int_equal(pdh_decode_instances(b.b, b.n, &in, &nr), -EBADMSG);
	/* a name without NUL inside its block */
	b.n = 0;
	put32(&b, 16);
	put32(&b, 1);
	put64(&b, 0x0041004100410041ULL);
	assert_int_equal(pdh_decode_instances(b.b, b.n, &in, &nr), -EBADMSG);
}

static void test_tp_reg_and_names(void **state)
{
	struct pdh_cat_set set = {0};
	struct bb b = {0};
	size_t i;

	(void)state;
	/* PERF_COUNTERSET_REG_INFO + two PERF_COUNTER_REG_INFO */
	put64(&b, 0x1122334455667788ULL); /* GUID */
	put64(&b, 0x99aabbccddeeff00ULL);
	put32(&b, 0); /* CounterSetType */
	put32(&b, PERF_DETAIL_NOVICE);
	put32(&b, 2); /* NumCounters */
	put32(&b, PERF_COUNTERSET_MULTI_INSTANCES);
	for (i = 1; i <= 2; i++) {
		put32(&b, (uint32_t)i);				       /* CounterId */
		put32(&b, i == 1 ? PERF_RAW_FRACTION : PERF_RAW_BASE); /* Type */
		put64(&b, i == 2 ? PERF_ATTRIB_NO_DISPLAYABLE : 0);    /* Attrib */
		put32(&b, PERF_DETAIL_NOVICE);
		put32(&b, (uint32_t)-3);	    /* DefaultScale */
		put32(&b, i == 1 ? 2 : 0xFFFFFFFF); /* BaseCounterId */
		put32(&b, 0xFFFFFFFF);		    /* PerfTimeId */
		put32(&b, 0xFFFFFFFF);		    /* PerfFreqId */
		put32(&b, 0xFFFFFFFF);		    /* MultiId */
		put32(&b, PERF_AGGREGATE_UNDEFINED);
		put32(&b, 0);
	}
	assert_int_equal(b.n, 32 + 2 * 48);
	assert_int_equal(pdh_decode_reg(b.b, b.n, &set), 0);
	assert_int_equal(set.instance_type, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(set.nr_counters, 2);
	assert_int_equal(set.counters[0].type, PERF_RAW_FRACTION);
	assert_int_equal(set.counters[0].base_id, 2);
	assert_int_equal(set.counters[0].scale, -3);
	assert_int_equal(set.counters[1].attrib, PERF_ATTRIB_NO_DISPLAYABLE);
	assert_int_equal(set.counters[1].time_id, PERFLIB_NO_ID);
	assert_int_equal(set.guid.Data1, 0x55667788);
	/* 8.5: names by id, absent string skipped */
	assert_int_equal(pdh_decode_names(names_85, sizeof(names_85), &set), 0);
	assert_string_equal(set.counters[0].name, "Reads");
	assert_null(set.counters[1].name);
	assert_int_equal(pdh_cat_set_finish(&set), 0);
	assert_string_equal(set.counters[1].name, "2");
	assert_string_equal(set.name, "55667788-3344-1122-00ff-eeddccbbaa99");
	pdh_cat_set_free(&set);
	/* NumCounters larger than the buffer, buffer below the header */
	set32(&b, 24, 3);
	assert_int_equal(pdh_decode_reg(b.b, b.n, &set), -EBADMSG);
	assert_int_equal(pdh_decode_reg(b.b, 31, &set), -EBADMSG);
}

static void test_tp_names_bad(void **state)
{
	uint8_t buf[sizeof(names_85)];
	struct pdh_cat_counter c = {.id = 1};
	struct pdh_cat_set set = {.nr_counters = 1, .counters = &c};

	(void)state;
	memcpy(buf, names_85, sizeof(buf));
	/* dwSize above the bytes returned */
	buf[0] = 0x40;
	assert_int_equal(pdh_decode_names(buf, sizeof(buf), &set), -EBADMSG);
	/* an offset outside the block */
	memcpy(buf, names_85, sizeof(buf));
	buf[12] = 0x30;
	assert_int_equal(pdh_decode_names(buf, sizeof(buf), &set), -EBADMSG);
	/* the string cut before its NUL by dwSize */
	memcpy(buf, names_85, sizeof(buf));
	buf[0] = 0x22;
	assert_int_equal(pdh_decode_names(buf, sizeof(buf), &set), -EBADMSG);
	/* dwCounters larger than the block */
	memcpy(buf, names_85, sizeof(buf));
	buf[4] = 0x10;
	assert_int_equal(pdh_decode_names(buf, sizeof(buf), &set), -EBADMSG);
	assert_null(c.name);
}

static void test_tp_data_82(void **state)
{
	const uint32_t spec_ids[] = {1, PERF_WILDCARD_COUNTER};
	const struct pdh_dec_item *it;
	struct pdh_dec_data d;
	uint64_t v;

	(void)state;
	assert_int_equal(pdh_decode_data(data_82, sizeof(data_82), spec_ids, 2, &d), 0);
	assert_int_equal(d.time, 0x1234567890LL);
	assert_int_equal(d.time_100ns, 133486382456780000LL);
	assert_int_equal(d.freq, 10000000);
	assert_int_equal(d.nr_blocks, 2);
	assert_int_equal(d.blocks[0].type, PERF_SINGLE_COUNTER);
	assert_int_equal(d.blocks[1].type, PERF_COUNTERSET);
	/* Index 0: the single counter carries the spec's id */
	it = pdh_dec_data_item(&d, 0, NULL, 0);
	assert_non_null(it);
	assert_null(it->name);
	assert_true(pdh_dec_item_value(&d, it, 1, &v));
	assert_int_equal(v, 42);
	/* Index 1: instances by name and duplicate number */
	it = pdh_dec_data_item(&d, 1, "a", 0);
	assert_non_null(it);
	assert_int_equal(it->instance_id, 0);
	assert_true(pdh_dec_item_value(&d, it, 1, &v));
	assert_int_equal(v, 5);
	assert_true(pdh_dec_item_value(&d, it, 2, &v));
	assert_int_equal(v, 0x100000000ULL);
	it = pdh_dec_data_item(&d, 1, "BB", 0);
	assert_non_null(it);
	assert_int_equal(it->instance_id, 1);
	assert_true(pdh_dec_item_value(&d, it, 2, &v));
	assert_int_equal(v, 7);
	assert_false(pdh_dec_item_value(&d, it, 3, &v));
	assert_null(pdh_dec_data_item(&d, 1, "a", 1));
	assert_null(pdh_dec_data_item(&d, 1, "c", 0));
	assert_null(pdh_dec_data_item(&d, 2, NULL, 0));
	pdh_dec_data_free(&d);
	/* without spec ids the single counter's id is the wildcard */
	assert_int_equal(pdh_decode_data(data_82, sizeof(data_82), NULL, 0, &d), 0);
	assert_true(pdh_dec_item_value(&d, pdh_dec_data_item(&d, 0, NULL, 0), PERF_WILDCARD_COUNTER,
				       &v));
	pdh_dec_data_free(&d);
}

static void test_tp_data_types(void **state)
{
	const uint32_t spec_ids[] = {9, 4, PERF_WILDCARD_COUNTER, 3};
	const struct pdh_dec_item *it;
	struct pdh_dec_data d;
	struct bb b = {0};
	size_t h, mi;
	uint64_t v;

	(void)state;
	put_data_header(&b, 4);
	/* Index 0: error return */
	put32(&b, ERROR_NO_DATA);
	put32(&b, PERF_ERROR_RETURN);
	put32(&b, 16);
	put32(&b, 0);
	/* Index 1: multiple instances of counter 4, two instances "x", one "y" */
	put32(&b, 0);
	put32(&b, PERF_MULTIPLE_INSTANCES);
	h = put32(&b, 0);
	put32(&b, 0);
	mi = put32(&b, 0);
	put32(&b, 3);
	put_instance(&b, 10, "x");
	put_value(&b, 4, 100);
	put_instance(&b, 11, "y");
	put_value(&b, 4, 200);
	put_instance(&b, 12, "x");
	put_value(&b, 8, 300);
	set32(&b, mi, (uint32_t)(b.n - mi));
	set32(&b, h, (uint32_t)(b.n - h + 8));
	/* Index 2: multiple counters, odd count (3 ids, dwSize rounded up to 24) */
	put32(&b, 0);
	put32(&b, PERF_MULTIPLE_COUNTERS);
	h = put32(&b, 0);
	put32(&b, 0);
	put32(&b, 24);
	put32(&b, 3);
	put32(&b, 5);
	put32(&b, 6);
	put32(&b, 7);
	put32(&b, 0);
	put_value(&b, 4, 55);
	put_value(&b, 8, 66);
	/* a data size that is neither 4 nor 8: present but without a value */
	put32(&b, 2);
	put32(&b, 16);
	put64(&b, 77);
	set32(&b, h, (uint32_t)(b.n - h + 8));
	/* Index 3: single counter */
	put32(&b, 0);
	put32(&b, PERF_SINGLE_COUNTER);
	put32(&b, 32);
	put32(&b, 0);
	put_value(&b, 8, 1ULL << 40);
	finish(&b);

	assert_int_equal(pdh_decode_data(b.b, b.n, spec_ids, 4, &d), 0);
	assert_int_equal(d.blocks[0].status, ERROR_NO_DATA);
	assert_null(pdh_dec_data_item(&d, 0, NULL, 0));
	it = pdh_dec_data_item(&d, 1, "x", 1);
	assert_non_null(it);
	assert_int_equal(it->instance_id, 12);
	assert_true(pdh_dec_item_value(&d, it, 4, &v));
	assert_int_equal(v, 300);
	it = pdh_dec_data_item(&d, 1, "y", 0);
	assert_true(pdh_dec_item_value(&d, it, 4, &v));
	assert_int_equal(v, 200);
	it = pdh_dec_data_item(&d, 2, NULL, 0);
	assert_true(pdh_dec_item_value(&d, it, 6, &v));
	assert_int_equal(v, 66);
	assert_false(pdh_dec_item_value(&d, it, 7, &v));
	it = pdh_dec_data_item(&d, 3, NULL, 0);
	assert_true(pdh_dec_item_value(&d, it, 3, &v));
	assert_int_equal(v, 1ULL << 40);
	pdh_dec_data_free(&d);
}

static void test_tp_data_bad(void **state)
{
	uint8_t buf[sizeof(data_82)];
	struct pdh_dec_data d;
	uint64_t v;

	(void)state;
	/* shorter than the header, shorter than dwTotalSize */
	assert_int_equal(pdh_decode_data(data_82, 47, NULL, 0, &d), -EBADMSG);
	assert_int_equal(pdh_decode_data(data_82, sizeof(data_82) - 1, NULL, 0, &d), -EBADMSG);
	/* dwNumCounters larger than the headers that fit */
	memcpy(buf, data_82, sizeof(buf));
	buf[4] = 0xff;
	assert_int_equal(pdh_decode_data(buf, sizeof(buf), NULL, 0, &d), -EBADMSG);
	/* a counter header whose dwSize runs past the end breaks navigation */
	memcpy(buf, data_82, sizeof(buf));
	buf[0x58] = 0x90;
	assert_int_equal(pdh_decode_data(buf, sizeof(buf), NULL, 0, &d), -EBADMSG);
	memcpy(buf, data_82, sizeof(buf));
	buf[0x38] = 0x08; /* dwSize below a header */
	assert_int_equal(pdh_decode_data(buf, sizeof(buf), NULL, 0, &d), -EBADMSG);
	/* bad payloads spoil only their own block */
	memcpy(buf, data_82, sizeof(buf));
	buf[0x40] = 0x20; /* dwDataSize 32 in a 16-byte PERF_COUNTER_DATA */
	assert_int_equal(pdh_decode_data(buf, sizeof(buf), NULL, 0, &d), 0);
	assert_int_equal(d.blocks[0].status, ERROR_INVALID_DATA);
	assert_null(pdh_dec_data_item(&d, 0, NULL, 0));
	assert_true(pdh_dec_item_value(&d, pdh_dec_data_item(&d, 1, "bb", 0), 1, &v));
	assert_int_equal(v, 6);
	pdh_dec_data_free(&d);
	memcpy(buf, data_82, sizeof(buf));
	buf[0x74] = 0x50; /* dwInstances 80 */
	assert_int_equal(pdh_decode_data(buf, sizeof(buf), NULL, 0, &d), 0);
	assert_int_equal(d.blocks[1].status, ERROR_INVALID_DATA);
	assert_int_equal(d.nr_items, 1);
	pdh_dec_data_free(&d);
	memcpy(buf, data_82, sizeof(buf));
	buf[0x64] = 0x09; /* dwCounters 9 in a 16-byte PERF_MULTI_COUNTERS */
	assert_int_equal(pdh_decode_data(buf, sizeof(buf), NULL, 0, &d), 0);
	assert_int_equal(d.blocks[1].status, ERROR_INVALID_DATA);
	pdh_dec_data_free(&d);
	memcpy(buf, data_82, sizeof(buf));
	buf[0x54] = 0x03; /* unknown dwType */
	assert_int_equal(pdh_decode_data(buf, sizeof(buf), NULL, 0, &d), 0);
	assert_int_equal(d.blocks[1].status, ERROR_INVALID_DATA);
	pdh_dec_data_free(&d);
	memcpy(buf, data_82, sizeof(buf));
	buf[0x82] = 0x41, buf[0x83] = 0; /* instance name "aA" loses its NUL */
	buf[0x84] = 0x41, buf[0x85] = 0, buf[0x86] = 0x41, buf[0x87] = 0;
	assert_int_equal(pdh_decode_data(buf, sizeof(buf), NULL, 0, &d), 0);
	assert_int_equal(d.blocks[1].status, ERROR_INVALID_DATA);
	pdh_dec_data_free(&d);
}

/* random corruption and truncation: errors are fine, crashes and overreads are not */
static void test_tp_fuzz(void **state)
{
	const uint32_t spec_ids[] = {1, PERF_WILDCARD_COUNTER};
	unsigned int seed = 12345, i, k, n, items = 0;
	struct pdh_dec_data d;
	uint8_t *buf;
	size_t size;

	(void)state;
	for (i = 0; i < 20000; i++) {
		size = sizeof(data_82) - (i % 7 == 0 ? rand_r(&seed) % sizeof(data_82) : 0);
		/* an exact-size heap copy, so an overread hits the redzone */
		buf = malloc(size ? size : 1);
		assert_non_null(buf);
		memcpy(buf, data_82, size);
		n = 1 + rand_r(&seed) % 4;
		for (k = 0; k < n && size; k++)
			buf[rand_r(&seed) % size] = (uint8_t)rand_r(&seed);
		if (!pdh_decode_data(buf, size, i % 2 ? spec_ids : NULL, 2, &d)) {
			items += (unsigned int)d.nr_items;
			pdh_dec_data_free(&d);
		}
		free(buf);
	}
	assert_true(items > 10000); /* most corruptions leave items to read */
	for (i = 0; i < 5000; i++) {
		struct pdh_cat_instance *in;
		size_t nr, j;

		size = sizeof(instances_81) - rand_r(&seed) % 5;
		buf = malloc(size);
		assert_non_null(buf);
		memcpy(buf, instances_81, size);
		buf[rand_r(&seed) % size] = (uint8_t)rand_r(&seed);
		if (pdh_decode_instances(buf, size, &in, &nr) == 0) {
			for (j = 0; j < nr; j++)
				free(in[j].name);
			free(in);
		}
		free(buf);
	}
}

/* ---- perflib-exporter's view (exp_sample.c) -------------------------------------------- */

/*
 * the columns PDH hands the exporter (perfcols.h) of the sample in a PerfQueryCounterData
 * buffer, read by the reference walk (pdh_decode_data): a block's values by column
 */
static int columns_of(const void *buf, size_t len, struct pdh_perfbuf_data *pd)
{
	struct pdh_dec_data d;
	size_t i, j, k, names = 0, values = 0, ids = 0;
	int err = pdh_decode_data(buf, len, NULL, 0, &d);

	if (err)
		return err;
	memset(pd, 0, sizeof(*pd));
	for (i = 0; i < d.nr_items; i++)
		names += d.items[i].name ? d.items[i].len + 1 : 0;
	pd->blocks = calloc(d.nr_blocks + 1, sizeof(*pd->blocks));
	pd->items = calloc(d.nr_items + 1, sizeof(*pd->items));
	pd->values = calloc(d.nr_values + 1, sizeof(*pd->values));
	pd->sizes = calloc(d.nr_values + 1, 1);
	pd->ids = calloc(d.nr_values + 1, sizeof(*pd->ids));
	pd->names = calloc(names + 1, 1);
	assert_true(pd->blocks && pd->items && pd->values && pd->sizes && pd->ids && pd->names);
	pd->hdr.freq = d.freq;
	pd->hdr.time = d.time;
	pd->nr_blocks = d.nr_blocks;
	for (i = 0; i < d.nr_blocks; i++) {
		const struct pdh_dec_block *tb = &d.blocks[i];
		struct pdh_perfbuf_block *b = &pd->blocks[i];

		*b = (struct pdh_perfbuf_block){.status = tb->status,
						.type = tb->type,
						.first = pd->nr_items,
						.nr = tb->nr,
						.cols = ids,
						.val0 = values,
						.stride = tb->nr,
						.names0 = pd->names_len};
		/* the ids of the first item's values are the block's columns */
		b->nr_cols = tb->nr ? (uint32_t)d.items[tb->first].nr : 0;
		for (k = 0; k < b->nr_cols; k++)
			pd->ids[ids++] = d.values[d.items[tb->first].first + k].counter_id;
		for (j = 0; j < tb->nr; j++) {
			const struct pdh_dec_item *ti = &d.items[tb->first + j];
			struct pdh_perfbuf_item *it = &pd->items[pd->nr_items++];

			*it = (struct pdh_perfbuf_item){.id = ti->instance_id,
							.name = PDH_PERFBUF_NO_NAME};
			if (ti->name) {
				it->name = (uint32_t)pd->names_len;
				it->len = it->units = (uint32_t)ti->len;
				memcpy(pd->names + pd->names_len, ti->name, ti->len + 1);
				pd->names_len += ti->len + 1;
				b->nr_named++;
				b->name_bytes += ti->len + 1;
			}
			for (k = 0; k < b->nr_cols && k < ti->nr; k++) {
				size_t at = pdh_perfbuf_value(b, b->first + j, (uint32_t)k);

				pd->values[at] = d.values[ti->first + k].value;
				pd->sizes[at] = (uint8_t)d.values[ti->first + k].size;
			}
		}
		values += (size_t)tb->nr * b->nr_cols;
	}
	pdh_dec_data_free(&d);
	return 0;
}

/* the exporter's collection of one buffer: its columns, then exp_fill_block by Index */
static int exp_collect(const void *buf, size_t len, struct exp_set *const *by_index, size_t nr,
		       int64_t *freq)
{
	struct pdh_perfbuf_data d;
	int err = columns_of(buf, len, &d);
	size_t i;

	if (err)
		return err;
	for (i = 0; !err && i < d.nr_blocks && i < nr; i++) {
		PDH_LINUX_COUNTERSET_SAMPLE sample;

		if (!by_index[i])
			continue;
		pdh_linux_sample(&d, &d.blocks[i], &sample);
		err = exp_fill_block(&sample, by_index[i]);
	}
	*freq = d.hdr.freq;
	pdh_perfbuf_data_release(&d);
	return err;
}

/* the exporter's view of a registration: libpdh's model laid out as the extension's, then exp_set_from_reg */
static int exp_reg(const void *buf, size_t len, struct exp_set **ret)
{
	struct pdh_cat_set model = {0};
	PDH_LINUX_COUNTERSET_REG *reg = NULL;
	int err = pdh_decode_reg(buf, len, &model);

	if (!err) {
		reg = pdh_linux_reg_layout(&model, NULL, NULL, NULL);
		err = reg ? exp_set_from_reg(reg, ret) : -ENOMEM;
	}
	free(reg);
	pdh_cat_set_free(&model);
	return err;
}

static struct exp_set *mkset(uint32_t itype, const uint32_t *ids, size_t n)
{
	struct exp_set *set = calloc(1, sizeof(*set));
	size_t i;

	assert_non_null(set);
	set->instance_type = itype;
	set->counters = calloc(n, sizeof(*set->counters));
	set->nr_counters = n;
	for (i = 0; i < n; i++)
		set->counters[i].id = ids[i];
	return set;
}

static uint64_t value(const struct exp_set *set, size_t inst, size_t c)
{
	size_t row = set->instances[inst].row;

	assert_true(set->present[row * set->nr_counters + c]);
	return set->values[row * set->nr_counters + c];
}

static const char *name_of(const struct exp_set *set, size_t inst)
{
	return set->strings.data + set->instances[inst].name;
}

static void test_exp_data_example(void **state)
{
	static const uint32_t s_ids[] = {1}, m_ids[] = {2, 1};
	struct exp_set *s = mkset(PERF_COUNTERSET_SINGLE_INSTANCE, s_ids, 1);
	struct exp_set *m = mkset(PERF_COUNTERSET_MULTI_INSTANCES, m_ids, 2);
	struct exp_set *by_index[2] = {s, m};
	int64_t freq = 0;

	(void)state;
	assert_int_equal(exp_collect(data_82, sizeof(data_82), by_index, 2, &freq), 0);
	assert_int_equal(freq, 10000000);
	/* the example's S is returned as PERF_SINGLE_COUNTER, which the exporter never
	 * asks for: no instance */
	assert_int_equal(s->nr_instances, 0);
	assert_int_equal(m->nr_instances, 2);
	assert_string_equal(name_of(m, 0), "a");
	assert_int_equal(m->instances[0].id, 0);
	assert_int_equal(value(m, 0, 1), 5); /* counter id 1 is index 1 here */
	assert_int_equal(value(m, 0, 0), 0x100000000ull);
	assert_string_equal(name_of(m, 1), "bb");
	assert_int_equal(m->instances[1].id, 1);
	assert_int_equal(value(m, 1, 1), 6);
	assert_int_equal(value(m, 1, 0), 7);

	/* an Index past by_index, or a NULL entry, is skipped */
	exp_set_reset(m);
	by_index[1] = NULL;
	assert_int_equal(exp_collect(data_82, sizeof(data_82), by_index, 1, &freq), 0);
	assert_int_equal(m->nr_instances, 0);
	exp_set_free(s);
	exp_set_free(m);
}

/* build a PERF_DATA_HEADER with one PERF_MULTIPLE_COUNTERS block (odd counter count) */
static size_t single_instance_block(uint8_t *buf)
{
	size_t off = sizeof(PERF_DATA_HEADER);
	uint32_t v32;

	memset(buf, 0, 256);
	/* counter header: status 0, type, size = 16 + 16 (3 ids, padded) + 2 * 16 */
	v32 = PERF_MULTIPLE_COUNTERS;
	memcpy(buf + off + 4, &v32, 4);
	v32 = 16 + 24 + 32;
	memcpy(buf + off + 8, &v32, 4);
	off += 16;
	v32 = 24; /* 8 + 3 * 4 rounded up to 8 */
	memcpy(buf + off, &v32, 4);
	v32 = 3;
	memcpy(buf + off + 4, &v32, 4);
	v32 = 7;
	memcpy(buf + off + 8, &v32, 4);
	v32 = 9;
	memcpy(buf + off + 12, &v32, 4);
	v32 = 99; /* not in the set: ignored */
	memcpy(buf + off + 16, &v32, 4);
	off += 24;
	/* counter 7: 4 bytes = 70; counter 9: 8 bytes = 2^40 */
	v32 = 4;
	memcpy(buf + off, &v32, 4);
	v32 = 16;
	memcpy(buf + off + 4, &v32, 4);
	v32 = 70;
	memcpy(buf + off + 8, &v32, 4);
	off += 16;
	v32 = 8;
	memcpy(buf + off, &v32, 4);
	v32 = 16;
	memcpy(buf + off + 4, &v32, 4);
	buf[off + 8 + 5] = 1;
	off += 16;
	/* the third counter's data is missing: its block is malformed */
	v32 = (uint32_t)off;
	memcpy(buf, &v32, 4);
	v32 = 1;
	memcpy(buf + 4, &v32, 4);
	return off;
}

static void test_exp_data_single(void **state)
{
	static const uint32_t ids[] = {9, 7};
	struct exp_set *set = mkset(PERF_COUNTERSET_SINGLE_INSTANCE, ids, 2);
	uint8_t buf[256];
	size_t len = single_instance_block(buf);
	int64_t freq;
	uint32_t v32 = 2;

	(void)state;
	/* three ids but two data blocks: malformed, the set gets nothing */
	assert_int_equal(exp_collect(buf, len, &set, 1, &freq), 0);
	assert_int_equal(set->nr_instances, 0);
	/* say two counters: now consistent */
	memcpy(buf + sizeof(PERF_DATA_HEADER) + 16 + 4, &v32, 4);
	assert_int_equal(exp_collect(buf, len, &set, 1, &freq), 0);
	assert_int_equal(set->nr_instances, 1);
	assert_int_equal(value(set, 0, 1), 70);
	assert_int_equal(value(set, 0, 0), 1ull << 40);
	exp_set_free(set);
}

static void test_exp_data_errors(void **state)
{
	static const uint32_t ids[] = {1, 2};
	struct exp_set *set = mkset(PERF_COUNTERSET_MULTI_INSTANCES, ids, 2);
	struct exp_set *by_index[2] = {NULL, set};
	uint8_t buf[sizeof(data_82)];
	int64_t freq;
	size_t len, i;
	uint32_t v32;
	int err;

	(void)state;
	/* shorter than the header, or a total size past the buffer */
	assert_int_equal(exp_collect(data_82, 47, by_index, 2, &freq), -EBADMSG);
	for (len = 48; len < sizeof(data_82); len++)
		assert_int_equal(exp_collect(data_82, len, by_index, 2, &freq), -EBADMSG);
	/* truncated with a consistent total size: error or fewer instances */
	for (len = 48; len <= sizeof(data_82); len++) {
		memcpy(buf, data_82, len);
		v32 = (uint32_t)len;
		memcpy(buf, &v32, 4);
		exp_set_reset(set);
		err = exp_collect(buf, len, by_index, 2, &freq);
		assert_true(err == 0 || err == -EBADMSG);
		assert_true(set->nr_instances == 0 || len == sizeof(data_82));
	}
	/* an instance name without its NUL spoils its block */
	memcpy(buf, data_82, sizeof(buf));
	buf[0x82] = 0x41, buf[0x83] = 0;
	buf[0x84] = 0x41, buf[0x85] = 0, buf[0x86] = 0x41, buf[0x87] = 0;
	exp_set_reset(set);
	assert_int_equal(exp_collect(buf, sizeof(buf), by_index, 2, &freq), 0);
	assert_int_equal(set->nr_instances, 0);
	/* every byte set to 0xff or 0: no crash, no instance beyond the two */
	for (i = 0; i < sizeof(data_82); i++) {
		int pass;

		for (pass = 0; pass < 2; pass++) {
			memcpy(buf, data_82, sizeof(buf));
			buf[i] = pass ? 0xff : 0x00;
			exp_set_reset(set);
			err = exp_collect(buf, sizeof(buf), by_index, 2, &freq);
			assert_true(err == 0 || err == -EBADMSG);
			assert_true(set->nr_instances <= 2);
		}
	}
	exp_set_free(set);
}

/* a name longer than EXP_NAME_MAX - 1 bytes of UTF-8 is cut at a character boundary */
static void test_exp_long_name(void **state)
{
	static const uint32_t ids[] = {1};
	struct exp_set *set = mkset(PERF_COUNTERSET_MULTI_INSTANCES, ids, 1);
	size_t h, mi, ih, i;
	struct bb b = {0};
	int64_t freq;

	(void)state;
	put_data_header(&b, 1);
	put32(&b, 0);
	put32(&b, PERF_COUNTERSET);
	h = put32(&b, 0);
	put32(&b, 0);
	put32(&b, 16); /* PERF_MULTI_COUNTERS: counter 1 */
	put32(&b, 1);
	put32(&b, 1);
	put32(&b, 0);
	mi = put32(&b, 0);
	put32(&b, 1);
	ih = put32(&b, 0);
	put32(&b, 3);
	/* 1100 units of U+20AC, 3 bytes each in UTF-8: 3300 bytes */
	for (i = 0; i < 1100; i++) {
		b.b[b.n++] = 0xac;
		b.b[b.n++] = 0x20;
	}
	put32(&b, 0); /* NUL and padding */
	set32(&b, ih, (uint32_t)(b.n - ih));
	put_value(&b, 4, 12);
	set32(&b, mi, (uint32_t)(b.n - mi));
	set32(&b, h, (uint32_t)(b.n - h + 8));
	finish(&b);

	assert_int_equal(exp_collect(b.b, b.n, &set, 1, &freq), 0);
	assert_int_equal(set->nr_instances, 1);
	assert_int_equal(set->instances[0].id, 3);
	assert_int_equal(strlen(name_of(set, 0)), (EXP_NAME_MAX - 1) / 3 * 3);
	assert_memory_equal(name_of(set, 0), "\xe2\x82\xac", 3);
	assert_int_equal(value(set, 0, 0), 12);
	exp_set_free(set);
}

static void test_exp_reg(void **state)
{
	uint8_t buf[sizeof(PERF_COUNTERSET_REG_INFO) + 2 * sizeof(PERF_COUNTER_REG_INFO)];
	PERF_COUNTERSET_REG_INFO head = {
		.CounterSetGuid = {0x12345678, 0x1234, 0x5678, {1, 2, 3, 4, 5, 6, 7, 8}},
		.NumCounters = 2,
		.InstanceType = PERF_COUNTERSET_MULTI_INSTANCES,
	};
	PERF_COUNTER_REG_INFO c[2] = {
		{.CounterId = 3,
		 .Type = PERF_RAW_FRACTION,
		 .BaseCounterId = 4,
		 .PerfTimeId = 0xFFFFFFFF,
		 .PerfFreqId = 0xFFFFFFFF,
		 .MultiId = 0xFFFFFFFF},
		{.CounterId = 4,
		 .Type = PERF_RAW_BASE,
		 .Attrib = PERF_ATTRIB_NO_DISPLAYABLE,
		 .BaseCounterId = 0xFFFFFFFF,
		 .PerfTimeId = 5,
		 .PerfFreqId = 6,
		 .MultiId = 7},
	};
	struct exp_set *set = NULL;

	(void)state;
	memcpy(buf, &head, sizeof(head));
	memcpy(buf + sizeof(head), c, sizeof(c));
	assert_int_equal(exp_reg(buf, sizeof(buf), &set), 0);
	assert_int_equal(set->guid.Data1, 0x12345678);
	assert_int_equal(set->guid.Data4[7], 8);
	assert_int_equal(set->instance_type, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(set->nr_counters, 2);
	assert_int_equal(set->counters[0].id, 3);
	assert_int_equal(set->counters[0].type, PERF_RAW_FRACTION);
	assert_int_equal(set->counters[0].base_id, 4);
	assert_int_equal(set->counters[0].base, -1);
	assert_int_equal(set->counters[1].attrib, PERF_ATTRIB_NO_DISPLAYABLE);
	assert_int_equal(set->counters[1].time_id, 5);
	assert_int_equal(set->counters[1].freq_id, 6);
	assert_int_equal(set->counters[1].multi_id, 7);
	exp_set_free(set);
	set = NULL;
	/* NumCounters past the buffer, or no room for the header */
	assert_int_equal(exp_reg(buf, sizeof(buf) - 1, &set), -EBADMSG);
	assert_int_equal(exp_reg(buf, 31, &set), -EBADMSG);
	assert_null(set);
}

static void test_exp_strings(void **state)
{
	struct pdh_cat_counter ctrs[2] = {{.id = 2}, {.id = 1}};
	struct pdh_cat_set model = {.nr_counters = 2, .counters = ctrs};
	PDH_LINUX_COUNTERSET_REG *reg;
	struct exp_set *set = NULL;
	char *helps[2] = {NULL, NULL};
	uint8_t buf[sizeof(names_85)];
	size_t len;

	(void)state;
	/* names: libpdh's parser, laid out by the extension, copied into the view */
	assert_int_equal(pdh_decode_names(names_85, sizeof(names_85), &model), 0);
	/* help strings, by the same rule: the first counter with the id without one */
	assert_int_equal(pdh_linux_helps(names_85, sizeof(names_85), &model, helps), 0);
	assert_null(helps[0]);
	assert_string_equal(helps[1], "Reads");
	reg = pdh_linux_reg_layout(&model, "Set", NULL, helps);
	assert_non_null(reg);
	assert_int_equal(exp_set_from_reg(reg, &set), 0);
	free(reg);
	assert_string_equal(set->name, "Set");
	assert_null(set->help);
	assert_null(set->counters[0].name);
	assert_string_equal(set->counters[1].name, "Reads");
	assert_int_equal(set->counters[1].base, -1);
	assert_null(set->counters[0].help);
	assert_string_equal(set->counters[1].help, "Reads");
	exp_set_free(set);
	/* dwSize past the buffer, offset past dwSize */
	assert_int_equal(pdh_linux_helps(names_85, sizeof(names_85) - 1, &model, helps), -EBADMSG);
	memcpy(buf, names_85, sizeof(buf));
	buf[12] = 0x24;
	assert_int_equal(pdh_linux_helps(buf, sizeof(buf), &model, helps), -EBADMSG);
	/* a string whose NUL lies past dwSize is malformed: whole code units left, or half a
	 * unit; the help given before stays */
	memcpy(buf, names_85, sizeof(buf));
	buf[0] = 0x22;
	assert_int_equal(pdh_linux_helps(buf, sizeof(buf), &model, helps), -EBADMSG);
	buf[0] = 0x21;
	assert_int_equal(pdh_linux_helps(buf, sizeof(buf), &model, helps), -EBADMSG);
	assert_string_equal(helps[1], "Reads");
	for (len = 0; len < sizeof(names_85); len++)
		pdh_linux_helps(names_85, len, &model, helps);
	free(helps[0]);
	free(helps[1]);
	free(ctrs[0].name);
	free(ctrs[1].name);
}

int main(void)
{
	const struct CMUnitTest decoder[] = {
		cmocka_unit_test(test_utf),
		cmocka_unit_test(test_utf_bounded),
		cmocka_unit_test(test_string),
		cmocka_unit_test(test_walk),
	};
	const struct CMUnitTest typeperf[] = {
		cmocka_unit_test(test_instances_81),
		cmocka_unit_test(test_instances_dup_and_bad),
		cmocka_unit_test(test_tp_reg_and_names),
		cmocka_unit_test(test_tp_names_bad),
		cmocka_unit_test(test_tp_data_82),
		cmocka_unit_test(test_tp_data_types),
		cmocka_unit_test(test_tp_data_bad),
		cmocka_unit_test(test_tp_fuzz),
	};
	const struct CMUnitTest exporter[] = {
		cmocka_unit_test(test_exp_data_example), cmocka_unit_test(test_exp_data_single),
		cmocka_unit_test(test_exp_data_errors),	 cmocka_unit_test(test_exp_long_name),
		cmocka_unit_test(test_exp_reg),		 cmocka_unit_test(test_exp_strings),
	};
	int failed;

	failed = cmocka_run_group_tests_name("perfbuf", decoder, NULL, NULL);
	failed +=
		cmocka_run_group_tests_name("pdh_perfbuf_typeperf (tp_buf)", typeperf, NULL, NULL);
	failed += cmocka_run_group_tests_name("pdh_perfbuf_exporter (exp_sample)", exporter, NULL,
					      NULL);
	return failed;
}
