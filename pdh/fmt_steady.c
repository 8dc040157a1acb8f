/* SPDX-License-Identifier: MIT */
/*
 * fmt_steady.c - the steady-state formatted array kernels (fmt_steady.h) and the choice
 * between them.
 *
 * Why a vector kernel: the arrays of a sample are written where the caller's buffers are,
 * megabytes that are not in the core's cache. On the machine measured (AMD EPYC, Zen 4)
 * writing 1.9 MB there takes 65 us in 8-byte stores, 42 in 16-byte, 20 in 64-byte ones,
 * and the C loop also spends a few instructions per item on its status and value. With
 * AVX-512 (F: 64-bit lanes and masks, DQ: unsigned 64-bit to double) 8 items are computed
 * in registers and written as three 64-byte stores; the W arrays' ASCII names are widened
 * 32 bytes into 64 (BW) from the sample's names, reading half the bytes that a copy of
 * names widened once per sample reads. The library is built for baseline x86-64: the
 * kernels are compiled for AVX-512 alone (a target attribute) and chosen when the CPU and
 * the OS's saved state support F, DQ and BW (every AVX-512 CPU but the Xeon Phi). The
 * conversions and the division are IEEE's, rounded as the C loop's: the same bytes.
 */
#include "fmt_steady.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX512_KERNEL 1
#include <immintrin.h>
#endif

#ifdef HAVE_AVX512_KERNEL
#define AVX512 __attribute__((target("avx512f,avx512dq,avx512bw")))

/* 8 flags (bytes) at @p as a mask: which are not 0 */
static inline AVX512 __mmask8 nonzero8(const uint8_t *p)
{
	__m512i z = _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(const void *)p));

	return _mm512_test_epi64_mask(z, z);
}

/*
 * items [@from, @to) of @s, a multiple of 8, 8 at a time: the names' addresses (P), the
 * statuses (S, with the padding after them: one word) and the values (X) in three registers
 * of 8 words, interleaved into the items' order P0 S0 X0 P1 ... S7 X7 (24 words) by two
 * permutations per 64-byte store
 */
static AVX512 void fmt_avx512(const struct fmt_steady *s, PDH_FMT_COUNTERVALUE_ITEM_W *items,
			      bool rate, size_t from, size_t to)
{
	const __m512i names = _mm512_set1_epi64((long long)(uintptr_t)s->names);
	const __m128i shift = _mm_cvtsi32_si128((int)s->shift);
	const __m512i invalid = _mm512_set1_epi64((DWORD)PDH_CSTATUS_INVALID_DATA);
	const __m512i fresh = _mm512_set1_epi64((DWORD)PDH_CSTATUS_NEW_DATA);
	const __m512i valid = _mm512_set1_epi64((DWORD)PDH_CSTATUS_VALID_DATA);
	const __m512d div = _mm512_set1_pd(s->div);
	const __mmask8 div_ok = s->div != 0 ? 0xFF : 0, same_time = s->same_time ? 0xFF : 0;
	/* lane j of store k: P or S by the first permutation (8 + n: S), X by the second */
	const __m512i ps0 = _mm512_set_epi64(8 + 2, 2, 0, 8 + 1, 1, 0, 8 + 0, 0);
	const __m512i ps1 = _mm512_set_epi64(5, 0, 8 + 4, 4, 0, 8 + 3, 3, 0);
	const __m512i ps2 = _mm512_set_epi64(0, 8 + 7, 7, 0, 8 + 6, 6, 0, 8 + 5);
	const __m512i x0 = _mm512_set_epi64(0, 0, 1, 0, 0, 0, 0, 0);
	const __m512i x1 = _mm512_set_epi64(0, 4, 0, 0, 3, 0, 0, 2);
	const __m512i x2 = _mm512_set_epi64(7, 0, 0, 6, 0, 0, 5, 0);
	size_t i;

	for (i = from; i < to; i += 8) {
		__m512i v = _mm512_loadu_si512(s->vals + i), ov = _mm512_loadu_si512(s->ovals + i);
		__m512i rel = _mm512_cvtepu32_epi64(
			_mm256_loadu_si256((const __m256i *)(const void *)(s->rel + i)));
		__m512i p = _mm512_add_epi64(names, _mm512_sll_epi64(rel, shift));
		__mmask8 ok = nonzero8(s->sizes + i), old_ok = nonzero8(s->osizes + i);
		__mmask8 same = _mm512_cmpeq_epi64_mask(v, ov);
		__m512i st, xb;
		__m512d x;
		char *dst = (char *)(items + i);

		if (!rate) {
			same &= ok & old_ok;
			x = _mm512_maskz_cvtepu64_pd(ok, v);
		} else {
			ok &= old_ok & div_ok & _mm512_cmple_epu64_mask(ov, v);
			same &= ok & same_time;
			x = _mm512_maskz_div_pd(ok, _mm512_cvtepu64_pd(_mm512_sub_epi64(v, ov)),
						div);
		}
		st = _mm512_mask_mov_epi64(_mm512_mask_mov_epi64(invalid, ok, fresh), same, valid);
		xb = _mm512_castpd_si512(x);
		_mm512_storeu_si512(
			dst, _mm512_mask_permutexvar_epi64(_mm512_permutex2var_epi64(p, ps0, st),
							   0x24, x0, xb));
		_mm512_storeu_si512(dst + 64,
				    _mm512_mask_permutexvar_epi64(
					    _mm512_permutex2var_epi64(p, ps1, st), 0x49, x1, xb));
		_mm512_storeu_si512(dst + 128,
				    _mm512_mask_permutexvar_epi64(
					    _mm512_permutex2var_epi64(p, ps2, st), 0x92, x2, xb));
	}
}

/* @n bytes at @src widened into @dst, 64 at a time (BW: bytes to 16-bit lanes) */
static AVX512 size_t widen_avx512(uint16_t *dst, const uint8_t *src, size_t n)
{
	size_t i;

	for (i = 0; i + 64 <= n; i += 64) {
		__m256i lo = _mm256_loadu_si256((const __m256i *)(const void *)(src + i));
		__m256i hi = _mm256_loadu_si256((const __m256i *)(const void *)(src + i + 32));

		_mm512_storeu_si512(dst + i, _mm512_cvtepu8_epi16(lo));
		_mm512_storeu_si512(dst + i + 32, _mm512_cvtepu8_epi16(hi));
	}
	return i;
}
#endif /* HAVE_AVX512_KERNEL */

enum fmt_kernel pdh_fmt_kernel(void)
{
	static int kernel = -1; /* not known yet */
	int k = __atomic_load_n(&kernel, __ATOMIC_RELAXED);

	if (k >= 0)
		return (enum fmt_kernel)k;
	k = FMT_KERNEL_C;
#ifdef HAVE_AVX512_KERNEL
	/* libgcc's check includes the OS saving the AVX-512 registers (XCR0) */
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512bw"))
		k = FMT_KERNEL_AVX512;
#endif
	__atomic_store_n(&kernel, k, __ATOMIC_RELAXED);
	return (enum fmt_kernel)k;
}

/* the C kernel, one copy per kind (fmt_steady_c is specialised by its constant @rate) */
static void fmt_c(const struct fmt_steady *s, PDH_FMT_COUNTERVALUE_ITEM_W *items, bool rate,
		  size_t from, size_t to)
{
	if (rate)
		fmt_steady_c(s, items, true, from, to);
	else
		fmt_steady_c(s, items, false, from, to);
}

void pdh_fmt_steady(const struct fmt_steady *s, PDH_FMT_COUNTERVALUE_ITEM_W *items, bool rate,
		    enum fmt_kernel k)
{
	size_t head = 0, body;

	if (k != FMT_KERNEL_AVX512 || pdh_fmt_kernel() != FMT_KERNEL_AVX512) {
		fmt_c(s, items, rate, 0, s->nr);
		return;
	}
#ifdef HAVE_AVX512_KERNEL
	/* the items before the first that starts a cache line, when one does (8-byte aligned) */
	while (head < 8 && head < s->nr && ((uintptr_t)(items + head) & 63))
		head++;
	if (head == 8)
		head = 0;
	body = head + (s->nr - head) / 8 * 8;
	fmt_c(s, items, rate, 0, head);
	fmt_avx512(s, items, rate, head, body);
	fmt_c(s, items, rate, body, s->nr);
#else
	(void)head;
	(void)body;
#endif
}

void pdh_widen(uint16_t *dst, const uint8_t *src, size_t n, enum fmt_kernel k)
{
	size_t i = 0;

#ifdef HAVE_AVX512_KERNEL
	if (k == FMT_KERNEL_AVX512 && pdh_fmt_kernel() == FMT_KERNEL_AVX512)
		i = widen_avx512(dst, src, n);
#else
	(void)k;
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; i + 8 <= n; i += 8) {
		uint64_t x, lo, hi;

		memcpy(&x, src + i, sizeof(x));
		/* bytes 0-3 and 4-7 into four 16-bit lanes each */
		lo = x & 0xFFFFFFFFu;
		hi = x >> 32;
		lo = (lo | (lo << 16)) & 0x0000FFFF0000FFFFull;
		hi = (hi | (hi << 16)) & 0x0000FFFF0000FFFFull;
		lo = (lo | (lo << 8)) & 0x00FF00FF00FF00FFull;
		hi = (hi | (hi << 8)) & 0x00FF00FF00FF00FFull;
		memcpy(dst + i, &lo, sizeof(lo));
		memcpy(dst + i + 4, &hi, sizeof(hi));
	}
#endif
	for (; i < n; i++)
		dst[i] = src[i];
}
