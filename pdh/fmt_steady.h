/* SPDX-License-Identifier: MIT */
/*
 * fmt_steady.h - the steady state of a formatted array (sample.c's fmt_fast): PDH_FMT_DOUBLE
 * with nothing to scale or cap, every item of a block whose instances are those of the
 * sample before in the same order, a raw count or a count per second, names placed by
 * offset, and the widening of a block's ASCII names for the W arrays. One kernel in C (here,
 * inlined) and, on x86-64 CPUs with AVX-512, one that does 8 items at a time
 * (fmt_steady.c); both write the same bytes.
 */
#ifndef FMT_STEADY_H
#define FMT_STEADY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pdh.h"

struct fmt_steady {
	size_t nr;
	char *names;		      /* where the block's names were copied */
	unsigned int shift;	      /* 1 for W */
	const uint32_t *rel;	      /* per item: its name's place among the block's names */
	const uint64_t *vals, *ovals; /* the column, now and before, by item */
	const uint8_t *sizes, *osizes;
	double div;	/* pdh_cook_per_second_divisor, 0: none (no valid rate) */
	bool same_time; /* the two samples have the same time stamp */
};

/* a formatted item's CStatus (and the padding after it, as one word) and value */
static inline void fmt_put(PDH_FMT_COUNTERVALUE *f, uint64_t st, double x)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	st <<= 32;
#endif
	memcpy(f, &st, sizeof(st));
	f->doubleValue = x;
}

/*
 * items [@from, @to) of @s in C, one loop per kind (a raw count, a count per second). The
 * loops copy what they read into locals first: the stores into the items would otherwise
 * make the compiler reload every field of @s for each item.
 */
static inline __attribute__((always_inline)) void fmt_steady_c(const struct fmt_steady *s,
							       PDH_FMT_COUNTERVALUE_ITEM_W *items,
							       bool rate, size_t from, size_t to)
{
	const uint64_t *const vals = s->vals, *const ovals = s->ovals;
	const uint8_t *const sizes = s->sizes, *const osizes = s->osizes;
	const uint32_t *const rel = s->rel;
	char *const names = s->names;
	const unsigned int shift = s->shift;
	const double div = s->div;
	const bool same_time = s->same_time;
	size_t i;

	for (i = from; !rate && i < to; i++) {
		uint64_t v = vals[i];
		bool ok = sizes[i];

		items[i].szName = (WCHAR *)(void *)(names + ((size_t)rel[i] << shift));
		fmt_put(&items[i].FmtValue,
			!ok			     ? (DWORD)PDH_CSTATUS_INVALID_DATA
			: osizes[i] && ovals[i] == v ? (DWORD)PDH_CSTATUS_VALID_DATA
						     : (DWORD)PDH_CSTATUS_NEW_DATA,
			ok ? (double)v : 0);
	}
	for (i = from; rate && i < to; i++) {
		uint64_t v = vals[i], ov = ovals[i];
		/* one sample, or a clock or counter that went back: no value (pdh_cook_per_second) */
		bool ok = sizes[i] && osizes[i] && div != 0 && ov <= v;

		items[i].szName = (WCHAR *)(void *)(names + ((size_t)rel[i] << shift));
		fmt_put(&items[i].FmtValue,
			!ok		       ? (DWORD)PDH_CSTATUS_INVALID_DATA
			: ov == v && same_time ? (DWORD)PDH_CSTATUS_VALID_DATA
					       : (DWORD)PDH_CSTATUS_NEW_DATA,
			ok ? (double)(v - ov) / div : 0);
	}
}

enum fmt_kernel {
	FMT_KERNEL_C,	   /* fmt_steady_c */
	FMT_KERNEL_AVX512, /* x86-64 with AVX-512 F, DQ and BW: 8 items, 32 name bytes at a time */
};

/* the fastest kernel this CPU runs */
__attribute__((visibility("hidden"))) enum fmt_kernel pdh_fmt_kernel(void);

/*
 * pdh_fmt_steady - the @s->nr items of @s at @items with kernel @k (pdh_fmt_kernel(), or
 * FMT_KERNEL_C; another kernel than the CPU runs is FMT_KERNEL_C): the same bytes whichever
 */
__attribute__((visibility("hidden"))) void pdh_fmt_steady(const struct fmt_steady *s,
							  PDH_FMT_COUNTERVALUE_ITEM_W *items,
							  bool rate, enum fmt_kernel k);

/*
 * pdh_widen - @n ASCII bytes at @src as UTF-16 units at @dst, with kernel @k as
 * pdh_fmt_steady (the C one does eight at a time in a register)
 */
__attribute__((visibility("hidden"))) void pdh_widen(uint16_t *dst, const uint8_t *src, size_t n,
						     enum fmt_kernel k);

#endif /* FMT_STEADY_H */
