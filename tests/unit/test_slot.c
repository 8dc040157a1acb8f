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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifecycle),
		cmocka_unit_test(test_generation_wraps),
		cmocka_unit_test(test_reaper_take),
		cmocka_unit_test(test_kernel_handover),
		cmocka_unit_test(test_procs),
	};

	return cmocka_run_group_tests_name("slot", tests, NULL, NULL);
}
