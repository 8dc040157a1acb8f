// SPDX-License-Identifier: MIT
/*
 * test_exporter_parse.c - perflib-exporter's readers of consumer-API buffers
 * (tools/common/exp_parse.c): the worked examples of perflib-api.md section 8, registration
 * blocks, UTF-16 conversion, and malformed input (truncated or corrupted at every byte
 * must give an error or fewer instances, never a read outside the buffer; run under
 * SANITIZE=address to see the latter). No BPF needed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exp_parse.h"

/* perflib-api.md 8.2: S (single instance, counter 1 = 42) at Index 0, M (two counters,
 * instances "a" = 5, 0x100000000 and "bb" = 6, 7) at Index 1 */
static const uint8_t example_8_2[] = {
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
static const uint8_t example_8_5[] = {
	0x24, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x18, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
	0x52, 0x00, 0x65, 0x00, 0x61, 0x00, 0x64, 0x00, 0x73, 0x00, 0x00, 0x00,
};

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

static void test_data_example(void **state)
{
	static const uint32_t s_ids[] = {1}, m_ids[] = {2, 1};
	struct exp_set *s = mkset(PERF_COUNTERSET_SINGLE_INSTANCE, s_ids, 1);
	struct exp_set *m = mkset(PERF_COUNTERSET_MULTI_INSTANCES, m_ids, 2);
	struct exp_set *by_index[2] = {s, m};
	int64_t freq = 0;
	size_t bad = 99;

	(void)state;
	assert_int_equal(exp_parse_data(example_8_2, sizeof(example_8_2), by_index, 2, &freq, &bad),
			 0);
	assert_int_equal(bad, 0);
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
	assert_int_equal(exp_parse_data(example_8_2, sizeof(example_8_2), by_index, 1, &freq, &bad),
			 0);
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

static void test_data_single(void **state)
{
	static const uint32_t ids[] = {9, 7};
	struct exp_set *set = mkset(PERF_COUNTERSET_SINGLE_INSTANCE, ids, 2);
	uint8_t buf[256];
	size_t len = single_instance_block(buf), bad;
	int64_t freq;
	uint32_t v32 = 2;

	(void)state;
	/* three ids but two data blocks: malformed, the set gets nothing */
	assert_int_equal(exp_parse_data(buf, len, &set, 1, &freq, &bad), 0);
	assert_int_equal(bad, 1);
	assert_int_equal(set->nr_instances, 0);
	/* say two counters: now consistent */
	memcpy(buf + sizeof(PERF_DATA_HEADER) + 16 + 4, &v32, 4);
	assert_int_equal(exp_parse_data(buf, len, &set, 1, &freq, &bad), 0);
	assert_int_equal(bad, 0);
	assert_int_equal(set->nr_instances, 1);
	assert_int_equal(value(set, 0, 1), 70);
	assert_int_equal(value(set, 0, 0), 1ull << 40);
	exp_set_free(set);
}

static void test_data_errors(void **state)
{
	static const uint32_t ids[] = {1, 2};
	struct exp_set *set = mkset(PERF_COUNTERSET_MULTI_INSTANCES, ids, 2);
	struct exp_set *by_index[2] = {NULL, set};
	uint8_t buf[sizeof(example_8_2)];
	int64_t freq;
	size_t len, i, bad;
	uint32_t v32;
	int err;

	(void)state;
	/* shorter than the header, or a total size past the buffer */
	assert_int_equal(exp_parse_data(example_8_2, 47, by_index, 2, &freq, &bad), -EINVAL);
	for (len = 48; len < sizeof(example_8_2); len++)
		assert_int_equal(exp_parse_data(example_8_2, len, by_index, 2, &freq, &bad),
				 -EINVAL);
	/* truncated with a consistent total size: error or fewer instances */
	for (len = 48; len <= sizeof(example_8_2); len++) {
		memcpy(buf, example_8_2, len);
		v32 = (uint32_t)len;
		memcpy(buf, &v32, 4);
		exp_set_reset(set);
		err = exp_parse_data(buf, len, by_index, 2, &freq, &bad);
		assert_true(err == 0 || err == -EINVAL);
		assert_true(set->nr_instances == 0 || len == sizeof(example_8_2));
	}
	/* every byte set to 0xff or 0: no crash, no instance beyond the two */
	for (i = 0; i < sizeof(example_8_2); i++) {
		int pass;

		for (pass = 0; pass < 2; pass++) {
			memcpy(buf, example_8_2, sizeof(buf));
			buf[i] = pass ? 0xff : 0x00;
			exp_set_reset(set);
			err = exp_parse_data(buf, sizeof(buf), by_index, 2, &freq, &bad);
			assert_true(err == 0 || err == -EINVAL);
			assert_true(set->nr_instances <= 2);
		}
	}
	exp_set_free(set);
}

static void test_reg(void **state)
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
	assert_int_equal(exp_parse_reg(buf, sizeof(buf), &set), 0);
	assert_int_equal(set->guid.Data1, 0x12345678);
	assert_int_equal(set->guid.Data4[7], 8);
	assert_int_equal(set->instance_type, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(set->nr_counters, 2);
	assert_int_equal(set->counters[0].id, 3);
	assert_int_equal(set->counters[0].type, PERF_RAW_FRACTION);
	assert_int_equal(set->counters[0].base_id, 4);
	assert_int_equal(set->counters[1].attrib, PERF_ATTRIB_NO_DISPLAYABLE);
	assert_int_equal(set->counters[1].time_id, 5);
	assert_int_equal(set->counters[1].freq_id, 6);
	assert_int_equal(set->counters[1].multi_id, 7);
	exp_set_free(set);
	set = NULL;
	/* NumCounters past the buffer, or no room for the header */
	assert_int_equal(exp_parse_reg(buf, sizeof(buf) - 1, &set), -EINVAL);
	assert_int_equal(exp_parse_reg(buf, 31, &set), -EINVAL);
	assert_null(set);
}

static void test_strings(void **state)
{
	static const uint32_t ids[] = {2, 1};
	struct exp_set *set = mkset(PERF_COUNTERSET_MULTI_INSTANCES, ids, 2);
	uint8_t buf[sizeof(example_8_5)];
	size_t len;

	(void)state;
	assert_int_equal(exp_parse_strings(example_8_5, sizeof(example_8_5), set, false), 0);
	assert_null(set->counters[0].name);
	assert_string_equal(set->counters[1].name, "Reads");
	assert_int_equal(exp_parse_strings(example_8_5, sizeof(example_8_5), set, true), 0);
	assert_string_equal(set->counters[1].help, "Reads");
	/* dwSize past the buffer, offset past dwSize */
	assert_int_equal(exp_parse_strings(example_8_5, sizeof(example_8_5) - 1, set, false),
			 -EINVAL);
	memcpy(buf, example_8_5, sizeof(buf));
	buf[12] = 0x24;
	assert_int_equal(exp_parse_strings(buf, sizeof(buf), set, false), -EINVAL);
	/* a string without its NUL ends at dwSize */
	memcpy(buf, example_8_5, sizeof(buf));
	buf[0] = 0x22;
	assert_int_equal(exp_parse_strings(buf, sizeof(buf), set, false), 0);
	assert_string_equal(set->counters[1].name, "Reads");
	buf[0] = 0x21; /* half a code unit left: cut */
	assert_int_equal(exp_parse_strings(buf, sizeof(buf), set, false), 0);
	assert_string_equal(set->counters[1].name, "Read");
	for (len = 0; len < sizeof(example_8_5); len++)
		exp_parse_strings(example_8_5, len, set, false);
	exp_set_free(set);
}

static void test_utf16(void **state)
{
	/* "aé€" U+1F600, an unpaired high surrogate, then "z" */
	static const uint16_t text[] = {'a', 0xe9, 0x20ac, 0xd83d, 0xde00, 0xd800, 'z', 0};
	char out[32], *dup;
	size_t n;

	(void)state;
	n = exp_utf16_to_utf8(text, 8, out, sizeof(out));
	assert_string_equal(out, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbdz");
	assert_int_equal(n, strlen(out));
	/* cut at a character boundary when the output is small */
	n = exp_utf16_to_utf8(text, 8, out, 5);
	assert_string_equal(out, "a\xc3\xa9");
	/* stop after max units, even inside a pair */
	exp_utf16_to_utf8(text, 4, out, sizeof(out));
	assert_string_equal(out, "a\xc3\xa9\xe2\x82\xac\xef\xbf\xbd");
	dup = exp_utf16_dup(text, 100);
	assert_string_equal(dup, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbdz");
	free(dup);
	dup = exp_utf16_dup(text, 0);
	assert_string_equal(dup, "");
	free(dup);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_example), cmocka_unit_test(test_data_single),
		cmocka_unit_test(test_data_errors),  cmocka_unit_test(test_reg),
		cmocka_unit_test(test_strings),	     cmocka_unit_test(test_utf16),
	};

	return cmocka_run_group_tests_name("exporter_parse", tests, NULL, NULL);
}
