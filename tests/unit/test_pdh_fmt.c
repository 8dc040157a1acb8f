/* SPDX-License-Identifier: MIT */
/*
 * test_pdh_fmt.c - the steady-state formatted array kernels of libpdh (pdh/fmt_steady.h):
 * the C kernel against the rule written out here item by item (pdh.md 6.4: a count is its
 * value, a count per second the delta over the clock delta; NEW_DATA, VALID_DATA for the
 * same raw values as before, INVALID_DATA without a value or a second sample, or when the
 * counter went back), and the AVX-512 kernel, when this CPU has it, byte for byte against
 * the C kernel: every count of items around the 8-item steps, every 8-byte alignment of
 * the caller's buffer, values that need rounding or are above 2^63, both name widths; the
 * widening of names (pdh_widen) by both kernels.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fmt_steady.h"
#include "pdh.h"

#define MAX_ITEMS 203
#define BYTES (MAX_ITEMS * sizeof(PDH_FMT_COUNTERVALUE_ITEM_W))

static uint64_t vals[MAX_ITEMS], ovals[MAX_ITEMS];
static uint8_t sizes[MAX_ITEMS], osizes[MAX_ITEMS];
static uint32_t rel[MAX_ITEMS];
static char names[4096];

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* items whose values stay, change by a little, go back, are missing, or are huge */
static void fill_inputs(void)
{
	size_t i;

	for (i = 0; i < MAX_ITEMS; i++) {
		uint64_t r = next();

		ovals[i] = r % 5 == 0	? (1ull << 63) + (r >> 12)
			   : r % 5 == 1 ? (1ull << 53) + 1
					: r >> 40;
		switch (next() % 6) {
		case 0:
			vals[i] = ovals[i]; /* unchanged */
			break;
		case 1:
			vals[i] = ovals[i] - 1; /* went back */
			break;
		case 2:
			vals[i] = ovals[i] + (next() >> 1); /* may wrap: then it went back */
			break;
		default:
			vals[i] = ovals[i] + next() % 1000;
			break;
		}
		sizes[i] = next() % 7 == 0 ? 0 : 8;
		osizes[i] = next() % 7 == 0 ? 0 : 4;
		rel[i] = (uint32_t)(i * 7 + next() % 5);
	}
}

/* item @i of @s as the rule says: name, status word (with the padding), value */
static void expect_item(const struct fmt_steady *s, bool rate, size_t i,
			PDH_FMT_COUNTERVALUE_ITEM_W *ret)
{
	uint64_t v = s->vals[i], ov = s->ovals[i], st;
	double x = 0;

	memset(ret, 0, sizeof(*ret));
	ret->szName = (WCHAR *)(void *)(s->names + ((size_t)s->rel[i] << s->shift));
	if (!rate) {
		if (!s->sizes[i])
			st = (DWORD)PDH_CSTATUS_INVALID_DATA;
		else if (s->osizes[i] && ov == v)
			st = (DWORD)PDH_CSTATUS_VALID_DATA;
		else
			st = (DWORD)PDH_CSTATUS_NEW_DATA;
		if (s->sizes[i])
			x = (double)v;
	} else if (!s->sizes[i] || !s->osizes[i] || s->div == 0 || ov > v) {
		st = (DWORD)PDH_CSTATUS_INVALID_DATA;
	} else {
		st = ov == v && s->same_time ? (DWORD)PDH_CSTATUS_VALID_DATA
					     : (DWORD)PDH_CSTATUS_NEW_DATA;
		x = (double)(v - ov) / s->div;
	}
	ret->FmtValue.CStatus = (DWORD)st;
	ret->FmtValue.doubleValue = x;
}

/* @s's items by kernel @k at every 8-byte place in a line, with guard bytes around */
static void check_kernel(const struct fmt_steady *s, bool rate, enum fmt_kernel k)
{
	static unsigned char mem[BYTES + 256], want[sizeof(PDH_FMT_COUNTERVALUE_ITEM_W)];
	size_t at, i, bytes = s->nr * sizeof(PDH_FMT_COUNTERVALUE_ITEM_W);
	unsigned char *base = (unsigned char *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);

	for (at = 0; at < 64; at += 8) {
		PDH_FMT_COUNTERVALUE_ITEM_W *items = (void *)(base + at);

		memset(mem, 0xA5, sizeof(mem));
		pdh_fmt_steady(s, items, rate, k);
		for (i = 0; i < s->nr; i++) {
			expect_item(s, rate, i, (PDH_FMT_COUNTERVALUE_ITEM_W *)(void *)want);
			assert_memory_equal(&items[i], want, sizeof(want));
		}
		/* nothing written around the items */
		for (i = 0; i < at; i++)
			assert_int_equal(base[i], 0xA5);
		for (i = at + bytes; i < at + bytes + 64; i++)
			assert_int_equal(base[i], 0xA5);
	}
}

static void test_kernels(void **state)
{
	static const double divs[] = {0, 1.0 / 3, 7.0, 1e9 / 3};
	static const size_t counts[] = {0, 1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 64, 100, MAX_ITEMS};
	enum fmt_kernel best = pdh_fmt_kernel();
	size_t n, d, t, w;

	(void)state;
	fill_inputs();
	if (best == FMT_KERNEL_C)
		printf("[     INFO ] this CPU runs the C kernel only\n");
	for (n = 0; n < sizeof(counts) / sizeof(counts[0]); n++) {
		for (d = 0; d < sizeof(divs) / sizeof(divs[0]); d++) {
			for (t = 0; t < 4; t++) {
				struct fmt_steady s = {
					.nr = counts[n],
					.names = names,
					.shift = (unsigned int)(t & 1),
					.rel = rel,
					.vals = vals,
					.ovals = ovals,
					.sizes = sizes,
					.osizes = osizes,
					.div = divs[d],
					.same_time = t >> 1,
				};

				for (w = 0; w < 2; w++) {
					check_kernel(&s, w, FMT_KERNEL_C);
					check_kernel(&s, w, best);
				}
			}
		}
	}
}

/* both kernels on the same inputs: the same bytes (a second, independent pattern) */
static void test_kernels_agree(void **state)
{
	static PDH_FMT_COUNTERVALUE_ITEM_W a[MAX_ITEMS], b[MAX_ITEMS];
	unsigned int round;

	(void)state;
	for (round = 0; round < 50; round++) {
		struct fmt_steady s = {
			.nr = MAX_ITEMS - round,
			.names = names + round,
			.shift = round & 1,
			.rel = rel,
			.vals = vals,
			.ovals = ovals,
			.sizes = sizes,
			.osizes = osizes,
			.div = (double)(round + 1) / 7,
			.same_time = round % 3 == 0,
		};

		fill_inputs();
		memset(a, 0x5A, sizeof(a));
		memset(b, 0xC3, sizeof(b));
		pdh_fmt_steady(&s, a, round & 2, FMT_KERNEL_C);
		pdh_fmt_steady(&s, b, round & 2, pdh_fmt_kernel());
		assert_memory_equal(a, b, s.nr * sizeof(a[0]));
	}
}

/* every byte value widened to its unit, each length around the 64-byte steps, each place */
static void test_widen(void **state)
{
	static uint8_t src[300];
	static uint16_t dst[300 + 40];
	enum fmt_kernel kernels[2] = {FMT_KERNEL_C, pdh_fmt_kernel()};
	size_t n, at, i, k;

	(void)state;
	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 37 + 11);
	for (k = 0; k < 2; k++) {
		for (n = 0; n <= 260; n += n < 70 ? 1 : 63) {
			for (at = 0; at < 32; at += 3) {
				memset(dst, 0xEE, sizeof(dst));
				pdh_widen(dst + at, src + at % 7, n, kernels[k]);
				for (i = 0; i < at; i++)
					assert_int_equal(dst[i], 0xEEEE);
				for (i = 0; i < n; i++)
					assert_int_equal(dst[at + i], src[at % 7 + i]);
				assert_int_equal(dst[at + n], 0xEEEE);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernels),
		cmocka_unit_test(test_kernels_agree),
		cmocka_unit_test(test_widen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
