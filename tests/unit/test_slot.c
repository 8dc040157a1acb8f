// SPDX-License-Identifier: MIT
/*
 * test_slot.c - the slot-state module on its own (userspace/slot.c): every transition of a
 * slot word, from the state it starts from and from every other, on plain memory; the owner
 * stamp moving with the word; procs entries claimed, reused after a dead owner, released.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "internal.h"

/* a slot: header and a little of the block, 16-byte aligned as in a data map */
static _Alignas(16) uint8_t slot[64];

static struct perflib_slot_hdr *hdr(void)
{
	return (struct perflib_slot_hdr *)slot;
}

static void set(uint32_t state, uint32_t gen, uint32_t pid, uint64_t stamp)
{
	memset(slot, 0, sizeof(slot));
	*(uint64_t *)slot = perflib_make_word(state, gen, pid);
	hdr()->owner_start = stamp;
}

static uint64_t word(void)
{
	return perflib_slot_word(slot);
}

static void test_lifecycle(void **state)
{
	uint64_t w, cw;

	(void)state;
	set(PERFLIB_SLOT_FREE, 7, 0, 0);
	/* claim: FREE(7) -> CLAIMED(8, 42), stamp with it */
	assert_true(perflib_slot_claim(slot, word(), 42, 4242, &cw));
	assert_int_equal(cw, word());
	assert_int_equal(perflib_word_state(cw), PERFLIB_SLOT_CLAIMED);
	assert_int_equal(perflib_word_gen(cw), 8);
	assert_int_equal(perflib_word_pid(cw), 42);
	assert_int_equal(hdr()->owner_start, 4242);
	/* a second claimer loses, and leaves the stamp alone */
	assert_false(perflib_slot_claim(slot, word(), 43, 4343, &w));
	assert_int_equal(hdr()->owner_start, 4242);
	/* publish: CLAIMED(8) -> LIVE(9), same owner */
	assert_true(perflib_slot_publish(slot, cw));
	assert_int_equal(word(), perflib_make_word(PERFLIB_SLOT_LIVE, 9, 42));
	/* publishing a word that is not the slot's fails */
	assert_false(perflib_slot_publish(slot, cw));
	/* hide: only the owner, only from LIVE */
	assert_false(perflib_slot_hide(slot, word(), 43, &w));
	assert_true(perflib_slot_hide(slot, word(), 42, &w));
	assert_int_equal(w, perflib_make_word(PERFLIB_SLOT_CLAIMED, 10, 42));
	/* free: CLAIMED(10) -> FREE(11, 0), stamp 0 with it */
	assert_true(perflib_slot_free(slot, w));
	assert_int_equal(word(), perflib_make_word(PERFLIB_SLOT_FREE, 11, 0));
	assert_int_equal(hdr()->owner_start, 0);
	/* nothing but a claim starts from FREE */
	assert_false(perflib_slot_free(slot, word()));
	assert_false(perflib_slot_publish(slot, word()));
	assert_false(perflib_slot_hide(slot, word(), 0, &w));
	assert_false(perflib_slot_take_dead(slot, word(), 1, 1, &w));
	assert_false(perflib_slot_to_kernel(slot, word()));
}

static void test_generation_wraps(void **state)
{
	uint64_t cw;

	(void)state;
	set(PERFLIB_SLOT_FREE, PERFLIB_GEN_MASK, 0, 0);
	assert_true(perflib_slot_claim(slot, word(), 5, 55, &cw));
	assert_int_equal(perflib_word_gen(cw), 0);
	assert_true(perflib_slot_publish(slot, cw));
	assert_int_equal(perflib_word_gen(word()), 1);
}

static void test_reaper_take(void **state)
{
	uint64_t w, cw;

	(void)state;
	/* a dead owner's LIVE slot: the reaper's pid and stamp at once */
	set(PERFLIB_SLOT_LIVE, 20, 999, 9999);
	w = word();
	assert_true(perflib_slot_take_dead(slot, w, 7, 777, &cw));
	assert_int_equal(cw, perflib_make_word(PERFLIB_SLOT_CLAIMED, 21, 7));
	assert_int_equal(hdr()->owner_start, 777);
	/* a second reaper with the dead owner's word in hand loses */
	assert_false(perflib_slot_take_dead(slot, w, 8, 888, &cw));
	assert_int_equal(hdr()->owner_start, 777);
	assert_true(perflib_slot_free(slot, word()));
	/* and a CLAIMED slot of a dead claimer */
	set(PERFLIB_SLOT_CLAIMED, 3, 999, 0);
	assert_true(perflib_slot_take_dead(slot, word(), 7, 777, &cw));
	assert_int_equal(perflib_word_gen(cw), 4);
}

static void test_kernel_handover(void **state)
{
	uint64_t w;

	(void)state;
	set(PERFLIB_SLOT_LIVE, 30, 42, 4242);
	/* to the kernel: pid 0, the kernel's stamp, the same generation (the key stays valid) */
	assert_true(perflib_slot_to_kernel(slot, word()));
	assert_int_equal(word(), perflib_make_word(PERFLIB_SLOT_LIVE, 30, 0));
	assert_true(hdr()->owner_start == PERFLIB_OWNER_KERNEL);
	/* a word that moved meanwhile: refused, the stamp put back */
	set(PERFLIB_SLOT_LIVE, 30, 42, 4242);
	w = word();
	*(uint64_t *)slot = perflib_make_word(PERFLIB_SLOT_CLAIMED, 31, 42);
	assert_false(perflib_slot_to_kernel(slot, w));
	assert_int_equal(hdr()->owner_start, 4242);
	/* back from the kernel: only a kernel-owned LIVE slot */
	set(PERFLIB_SLOT_LIVE, 30, 0, PERFLIB_OWNER_KERNEL);
	assert_true(perflib_slot_from_kernel(slot, word(), 55, 5555));
	assert_int_equal(word(), perflib_make_word(PERFLIB_SLOT_LIVE, 30, 55));
	assert_int_equal(hdr()->owner_start, 5555);
	assert_false(perflib_slot_from_kernel(slot, word(), 56, 5656));
	set(PERFLIB_SLOT_LIVE, 30, 0, 1234); /* pid 0 without the kernel's stamp */
	assert_false(perflib_slot_from_kernel(slot, word(), 55, 5555));
}

static void test_procs(void **state)
{
	struct perflib_proc procs[3];
	struct perflib_info info = {.nr_procs = 3};
	struct perflib_store map = {.info = &info, .procs = procs, .proc_index = -1};
	uint64_t pending[3] = {0};
	uint64_t start;
	uint32_t pid;
	int a, b;

	(void)state;
	memset(procs, 0, sizeof(procs));
	perflib_self(&pid, &start);
	a = perflib_proc_claim(&map, PERFLIB_PROC_CALLBACK, 77);
	assert_int_equal(a, 0);
	assert_int_equal(procs[0].state, PERFLIB_PROC_LIVE);
	assert_int_equal(procs[0].pid, pid);
	assert_int_equal(procs[0].start, start);
	assert_int_equal(procs[0].flags, PERFLIB_PROC_CALLBACK);
	assert_int_equal(procs[0].token, 77);
	/* two generations on: one while the identity is written, one to LIVE */
	assert_int_equal(procs[0].gen, 2);
	b = perflib_proc_claim(&map, 0, 78);
	assert_int_equal(b, 1);
	/* an entry left LIVE by a process that is gone is taken again */
	procs[2].state = PERFLIB_PROC_LIVE;
	procs[2].pid = 0x7ffffff0;
	procs[2].start = 1;
	assert_int_equal(perflib_proc_claim(&map, 0, 79), 2);
	assert_int_equal(procs[2].pid, pid);
	assert_int_equal(perflib_proc_claim(&map, 0, 80), -ENOSPC);
	/* released only while it is still this process's */
	procs[1].pid = pid + 1;
	perflib_proc_release(&map, b);
	assert_int_equal(procs[1].state, PERFLIB_PROC_LIVE);
	perflib_proc_release(&map, a);
	assert_int_equal(procs[0].state, PERFLIB_PROC_FREE);
	assert_int_equal(procs[0].gen, 3);
	perflib_proc_release(&map, -1);
	perflib_proc_release(&map, 3);
	/* the slot being freed, named by this process's pending word (in s0/live) */
	map.proc_index = 2;
	map.pending = pending;
	perflib_proc_pending(&map, perflib_slot_id_make(1, 5), true);
	assert_int_equal(pending[2], perflib_slot_id_make(1, 5) + 1ULL);
	assert_int_equal(pending[1], 0);
	perflib_proc_pending(&map, 0, false);
	assert_int_equal(pending[2], 0);
	/* no pending words (an unmapped reader's set): nothing written */
	map.pending = NULL;
	perflib_proc_pending(&map, 7, true);
	assert_int_equal(pending[2], 0);
}

/*
 * Owner summaries and their heads in a big segment, where a head bit stands for two
 * summary words (segment 48 of seg0 128: 8,192 bitmap words, 128 summary words per entry):
 * the head bit is set with the first mark of its span and cleared only once both words are;
 * the entry's head in segment 0 has bit 48 (the segments bit) while its head in segment 48
 * is non-zero, beside segment 0's own head bit 0
 */
static void test_owner_heads(void **state)
{
	const uint32_t seg0 = 128, k = 48, nr_procs = 4, me = 1;
	struct perflib_info info = {.nr_procs = nr_procs};
	struct perflib_store map = {
		.info = &info, .proc_index = (int)me, .writable = true, .nr_classes = 1};
	uint32_t first = (uint32_t)perflib_seg_first(k, seg0);
	struct perflib_seg segs[56] = {{0}}; /* segment 48: 2^19 slots */
	uint64_t *live, *live0, *head, *sum, *segbits;
	const uint64_t bit48 = 1ULL << 48;

	(void)state;
	assert_int_equal(perflib_seg_sum_words(k, seg0), 128);
	assert_int_equal(perflib_sum_head_span(k, seg0), 2);
	assert_int_equal(perflib_sum_head_span(k - 1, seg0), 1);
	assert_int_equal(perflib_seg_sum_words(0, seg0), 1);
	live = calloc(perflib_seg_live_words(k, seg0, nr_procs), sizeof(*live));
	live0 = calloc(perflib_seg_live_words(0, seg0, nr_procs), sizeof(*live0));
	assert_non_null(live);
	assert_non_null(live0);
	map.cls[0].seg0 = seg0;
	map.cls[0].nr_segs = map.cls[0].max_segs = k + 1;
	for (uint32_t g = 0; g < 56 / PERFLIB_SEG_GROUP; g++)
		map.cls[0].seg_groups[g] = segs + g * PERFLIB_SEG_GROUP;
	segs[0].live = live0;
	segs[k].live = live;
	head = live + perflib_sum_head(k, seg0, nr_procs, me);
	sum = live + perflib_sum_word(k, seg0, me, 0);
	segbits = live0 + perflib_sum_head(0, seg0, nr_procs, me);
	/* summary words 0 and 1 share head bit 0, word 2 has bit 1 */
	perflib_owner_mark(&map, first + 5, true);
	assert_int_equal(sum[0], 1);
	assert_int_equal(*head, 1);
	assert_int_equal(*segbits, bit48);
	perflib_owner_mark(&map, first + 4096 + 64, true);
	assert_int_equal(sum[1], 2);
	assert_int_equal(*head, 1);
	perflib_owner_mark(&map, first + 8192, true);
	assert_int_equal(sum[2], 1);
	assert_int_equal(*head, 3);
	/* a slot of segment 0: its own head bit 0 beside the segments bit */
	perflib_owner_mark(&map, 3, true);
	assert_int_equal(*segbits, bit48 | 1);
	/* no other entry's words, nothing past this entry's head */
	assert_int_equal(live[perflib_sum_head(k, seg0, nr_procs, me + 1)], 0);
	assert_int_equal(live[perflib_sum_word(k, seg0, me + 1, 0)], 0);
	assert_int_equal(live0[perflib_sum_head(0, seg0, nr_procs, me + 1)], 0);
	/* word 0 clear, word 1 not: the head bit stays */
	perflib_owner_mark(&map, first + 5, false);
	assert_int_equal(sum[0], 0);
	assert_int_equal(*head, 3);
	perflib_owner_mark(&map, first + 4096 + 64, false);
	assert_int_equal(sum[1], 0);
	assert_int_equal(*head, 2);
	/* clearing a bit that is not set changes nothing */
	perflib_owner_mark(&map, first + 4096 + 64, false);
	assert_int_equal(*head, 2);
	assert_int_equal(*segbits, bit48 | 1);
	/* segment 0's slot gone: bit 0 goes, the segments bit stays */
	perflib_owner_mark(&map, 3, false);
	assert_int_equal(*segbits, bit48);
	/* the last slot of segment 48 gone: its head is 0, then the segments bit goes */
	perflib_owner_mark(&map, first + 8192, false);
	assert_int_equal(*head, 0);
	assert_int_equal(*segbits, 0);
	/* the stop clears summaries, heads and segments bits */
	perflib_owner_mark(&map, first + 8192, true);
	assert_int_equal(*segbits, bit48);
	perflib_owner_clear_all(&map, (int)me);
	assert_int_equal(sum[2], 0);
	assert_int_equal(*head, 0);
	assert_int_equal(*segbits, 0);
	/* no procs entry: nothing written */
	map.proc_index = -1;
	perflib_owner_mark(&map, first + 5, true);
	assert_int_equal(sum[0], 0);
	assert_int_equal(*head, 0);
	assert_int_equal(*segbits, 0);
	free(live);
	free(live0);
}

/* the branch-free logarithms of layout.h, which BPF programs use too */
static void test_log2(void **state)
{
	uint64_t q;
	uint32_t b;

	(void)state;
	for (b = 0; b < 64; b++) {
		q = 1ULL << b;
		assert_int_equal(perflib_log2_64(q), b);
		assert_int_equal(perflib_log2_64(q | (q >> 1) | 1), b);
		if (b < 63)
			assert_int_equal(perflib_log2_64((q << 1) - 1), b);
		if (b < 32)
			assert_int_equal(perflib_log2_32(q), b);
	}
	assert_int_equal(perflib_log2_64(~0ULL), 63);
	assert_int_equal(perflib_log2_64(0xFFFFFFFFULL), 31);
	assert_int_equal(perflib_log2_64(0x100000000ULL), 32);
	/* the lowest set bit, as the exit reaper finds the first summary head bit */
	q = 0x8000000000000100ULL;
	assert_int_equal(perflib_log2_64(q & -q), 8);
	/* segments: slot i of seg0 128 */
	assert_int_equal(perflib_seg_of(0, 128), 0);
	assert_int_equal(perflib_seg_of(127, 128), 0);
	assert_int_equal(perflib_seg_of(128, 128), 1);
	assert_int_equal(perflib_seg_of(perflib_seg_first(12, 128), 128), 12);
	assert_int_equal(perflib_seg_of(perflib_seg_first(13, 128) - 1, 128), 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifecycle),   cmocka_unit_test(test_generation_wraps),
		cmocka_unit_test(test_reaper_take), cmocka_unit_test(test_kernel_handover),
		cmocka_unit_test(test_procs),	    cmocka_unit_test(test_owner_heads),
		cmocka_unit_test(test_log2),
	};

	return cmocka_run_group_tests_name("slot", tests, NULL, NULL);
}
