// SPDX-License-Identifier: MIT
/*
 * test_btf.c - the slot header's one field list (common/slot_hdr.h) against the layout
 * (bpf/layout.h, include/perflib/layout.h): it covers struct perflib_slot_hdr field after
 * field up to the Windows block; and the BTF userspace/btf.c builds for a slot of every size
 * class names exactly those fields at those offsets and sizes, then the block, where
 * perflib_counterset_layout() puts it. lodctr --dump prints the same table
 * (tests/tools/test_lodctr.sh compares it with its golden files). No BPF needed: the BTF is
 * built, not loaded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <bpf/btf.h>

#include "testlib.h"
#include "internal.h"
#include "slot_hdr.h"

static void test_table_covers_header(void **state)
{
	uint32_t end = 0;
	size_t i, k;

	(void)state;
	assert_true(PERFLIB_SLOT_HDR_NR_FIELDS > 0);
	for (i = 0; i < PERFLIB_SLOT_HDR_NR_FIELDS; i++) {
		const struct perflib_slot_hdr_field *f = &perflib_slot_hdr_fields[i];

		/* in order, no gap, no overlap; naturally aligned words */
		assert_int_equal(f->offset, end);
		assert_true(f->size == 4 || f->size == 8);
		assert_int_equal(f->offset % f->size, 0);
		end = f->offset + f->size;
		for (k = 0; k < i; k++)
			assert_string_not_equal(f->name, perflib_slot_hdr_fields[k].name);
	}
	/* the whole header, which ends where the Windows block starts */
	assert_int_equal(end, sizeof(struct perflib_slot_hdr));
	assert_int_equal(end, PERFLIB_BLOCK_OFFSET);
	/* the fields the slot words are made of are named */
	assert_string_equal(perflib_slot_hdr_fields[0].name, "seq");
	assert_int_equal(perflib_slot_hdr_fields[0].offset, offsetof(struct perflib_slot_hdr, seq));
}

static struct perflib_counterset_reg *make_reg(void)
{
	static const struct perflib_counter_reg c[2] = {
		{1, PERF_COUNTER_COUNTER, 0, PERF_DETAIL_NOVICE, 0, PERFLIB_NO_ID, PERFLIB_NO_ID,
		 PERFLIB_NO_ID, PERFLIB_NO_ID, PERF_AGGREGATE_TOTAL, "Reads", NULL},
		{2, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE, PERF_DETAIL_NOVICE, 0,
		 PERFLIB_NO_ID, PERFLIB_NO_ID, PERFLIB_NO_ID, PERFLIB_NO_ID, PERF_AGGREGATE_TOTAL,
		 "Bytes", NULL},
	};
	static struct perflib_counterset_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.counterset_guid.Data1 = 0x51074d12;
	reg.instance_type = PERF_COUNTERSET_MULTI_INSTANCES;
	reg.name = "Slot header test";
	reg.nr_counters = 2;
	reg.counters = c;
	return &reg;
}

static void test_slot_btf(void **state)
{
	struct perflib_pin_opts opts;
	struct perflib_layout l;
	struct perflib_info *info;
	size_t size, i;
	uint32_t cls;

	(void)state;
	perflib_pin_defaults(&opts);
	assert_int_equal(
		perflib_info_build(make_reg(), PERFLIB_INFO_HAS_NAMES, &opts, &info, &size), 0);
	assert_int_equal(perflib_counterset_layout(make_reg(), NULL, &l), 0);
	assert_int_equal(l.block_offset, PERFLIB_BLOCK_OFFSET);
	perflib_layout_free(&l);
	assert_true(info->nr_classes > 0);
	for (cls = 0; cls < info->nr_classes; cls++) {
		const struct btf_member *m;
		const struct btf_type *t;
		struct btf *btf;
		int key, value;

		assert_int_equal(perflib_data_btf_build(info, cls, &btf, &key, &value), 0);
		t = btf__type_by_id(btf, (uint32_t)value);
		assert_non_null(t);
		assert_true(btf_is_struct(t));
		assert_string_equal(btf__name_by_offset(btf, t->name_off), "perflib_slot");
		assert_true(btf_vlen(t) > PERFLIB_SLOT_HDR_NR_FIELDS);
		m = btf_members(t);
		/* the header's fields first, as the table lists them */
		for (i = 0; i < PERFLIB_SLOT_HDR_NR_FIELDS; i++) {
			const struct perflib_slot_hdr_field *f = &perflib_slot_hdr_fields[i];

			assert_string_equal(btf__name_by_offset(btf, m[i].name_off), f->name);
			assert_int_equal(btf_member_bit_offset(t, (uint32_t)i), 8 * f->offset);
			assert_int_equal(btf__resolve_size(btf, m[i].type), f->size);
		}
		/* then the Windows block, right after the header */
		assert_string_equal(btf__name_by_offset(btf, m[i].name_off), "instance");
		assert_int_equal(btf_member_bit_offset(t, (uint32_t)i), 8 * PERFLIB_BLOCK_OFFSET);
		btf__free(btf);
	}
	free(info);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_covers_header),
		cmocka_unit_test(test_slot_btf),
	};

	return cmocka_run_group_tests_name("btf", tests, NULL, NULL);
}
