// SPDX-License-Identifier: MIT
/*
 * test_values.c - the counter descriptor of the value functions (userspace/internal.h,
 * used by userspace/values.c): perflib_counter_pack and its unpackers agree for every
 * offset, size and by-reference flag a counter set can have, and the one compare the hot
 * path makes ("a by-value counter of this size") holds for exactly those; the slot of an
 * instance's address (perflib_class_slot_at: one multiply by a reciprocal, its low half
 * saying whether the division is exact; perflib_ctrset_class_index, perflib_ctrset_owns0)
 * agrees with a division for every slot size and offset tried. The value functions
 * themselves run in test_api_provider.c and test_api_columns.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "testlib.h"
#include "internal.h"

static void test_round_trip(void **state)
{
	static const uint8_t sizes[] = {0, 4, 8};
	struct perflib_counter c = {0};
	uint32_t off, d, k;
	size_t s;
	int byref;

	(void)state;
	/* every counter offset: 32 + 8 * position, up to the 16-bit field's end */
	for (off = sizeof(PERF_COUNTERSET_INSTANCE); off <= 0xFFF8; off += 8) {
		for (s = 0; s < sizeof(sizes); s++) {
			for (byref = 0; byref < 2; byref++) {
				c.offset = off;
				c.size = sizes[s];
				c.byref = (uint8_t)byref;
				d = perflib_counter_pack(&c);
				assert_int_not_equal(d, 0); /* 0 is "no such counter" */
				assert_int_equal(perflib_desc_offset(d), off);
				k = perflib_desc_kind(d);
				assert_int_equal(k & ~PERFLIB_DESC_BYREF, sizes[s]);
				assert_int_equal(!!(k & PERFLIB_DESC_BYREF), byref);
				/* the value functions' check: by value and of the size asked */
				assert_int_equal(k == 4, !byref && sizes[s] == 4);
				assert_int_equal(k == 8, !byref && sizes[s] == 8);
			}
		}
	}
}

/* a class of @size-byte slots at its reciprocal, of @capacity slots owned as @owned says */
static void class_init(struct perflib_ctrset_class *c, uint32_t size, uint32_t capacity,
		       _Atomic uint8_t *owned)
{
	memset(c, 0, sizeof(*c));
	c->slot_size = size;
	c->capacity = capacity;
	c->span = (size_t)size * capacity;
	c->recip_span = c->span < PERFLIB_RECIP_SPAN ? c->span : PERFLIB_RECIP_SPAN;
	c->recip = perflib_class_recip(size);
	c->owned = owned;
}

/* perflib_class_slot_at at offset @off (below 2^32) against a division */
static void check_slot_at(const struct perflib_ctrset_class *c, uint64_t off)
{
	int64_t want = off % c->slot_size ? -1 : (int64_t)(off / c->slot_size);
	int64_t got = perflib_class_slot_at(c, off);

	if (got != want)
		fail_msg("slot size %u, offset %llu: %lld, expected %lld", c->slot_size,
			 (unsigned long long)off, (long long)got, (long long)want);
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void test_slot_at(void **state)
{
	struct perflib_ctrset_class c;
	uint64_t off, last, x = 88172645463325252ull;
	uint32_t size, k;
	int d;

	(void)state;
	/* every slot size of 16-byte steps to 8 KiB: every byte of the first three slots */
	for (size = 32; size <= 8192; size += 16) {
		class_init(&c, size, 1, NULL);
		for (off = 0; off < 3 * (uint64_t)size; off++)
			check_slot_at(&c, off);
		/* the last slots that start below 2^32, and the bytes around their starts */
		last = (PERFLIB_RECIP_SPAN - 1) / size * size;
		for (k = 0; k < 3; k++) {
			for (d = -17; d <= 17; d++) {
				off = last - (uint64_t)k * size + (uint64_t)(int64_t)d;
				if (off < PERFLIB_RECIP_SPAN)
					check_slot_at(&c, off);
			}
		}
	}
	/* slot sizes to 2 GiB, 32-bit offsets: any, and slot starts (exact divisions) */
	for (k = 0; k < 2000000; k++) {
		size = (uint32_t)(16 * (2 + xorshift(&x) % (1u << 27)));
		class_init(&c, size, 1, NULL);
		off = (uint32_t)xorshift(&x);
		check_slot_at(&c, off);
		check_slot_at(&c, off / size * size);
	}
}

/*
 * perflib_ctrset_class_index (the full path: a division past 4 GiB of a class) and
 * perflib_ctrset_owns0 (the fast path: class 0, nothing past 4 GiB) against a division and
 * the owned table, with slot sizes from the smallest to ones whose classes pass 2^32 and
 * 2^36 bytes
 */
static void test_class_index(void **state)
{
	static const uint32_t sizes[] = {48, 224, 4112, 1u << 20, (1u << 24) + 16, 1u << 28};
	static _Atomic uint8_t owned[4096];
	static struct perflib_ctrset set;
	struct perflib_ctrset_class *c = &set.cls[0];
	uint64_t off;
	int64_t want, got;
	uint32_t s, i;
	int d;

	(void)state;
	for (i = 0; i < 4096; i++)
		owned[i] = i % 3 != 0;
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		class_init(c, sizes[s], 4096, owned);
		/* an address the tables never dereference: only owned[] is read */
		c->base = (uint8_t *)(uintptr_t)(1ull << 44);
		for (i = 0; i < 4096; i++) {
			for (d = -16; d <= 16; d += 1) {
				off = (uint64_t)i * sizes[s] + (uint64_t)(int64_t)d;
				if ((int64_t)off < 0 || off >= c->span)
					continue;
				want = off % sizes[s] || !owned[off / sizes[s]]
					       ? -1
					       : (int64_t)(off / sizes[s]);
				got = perflib_ctrset_class_index(c, off);
				if (got != want)
					fail_msg("slot size %u, offset %llu: %lld, expected %lld",
						 sizes[s], (unsigned long long)off, (long long)got,
						 (long long)want);
				/* the fast path: the same below 4 GiB, the full path's past it */
				assert_int_equal(perflib_ctrset_owns0(&set, c->base + off),
						 want >= 0 && off < PERFLIB_RECIP_SPAN);
			}
		}
		/* before the class and past its end: no slot */
		assert_false(perflib_ctrset_owns0(&set, c->base - PERFLIB_SLOT_ALIGN));
		assert_false(perflib_ctrset_owns0(&set, c->base + c->span));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_slot_at),
		cmocka_unit_test(test_class_index),
	};

	return cmocka_run_group_tests_name("values", tests, NULL, NULL);
}
