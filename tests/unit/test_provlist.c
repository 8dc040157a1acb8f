// SPDX-License-Identifier: MIT
/*
 * test_provlist.c - the provider list on its own (provlist.c): add, lookup, remove, the
 * list walk, counter-set lookup by GUID, the quarantine of stopped providers (a structure
 * is not reused before more than 64 others wait), and fork(): the child's list is empty and
 * every inherited provider reads DEAD. No BPF needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

static struct perflib_provider *started(void)
{
	struct perflib_provider *p = perflib_prov_new();

	assert_non_null(p);
	memset(p, 0, sizeof(*p));
	atomic_store(&p->magic, PERFLIB_PROVIDER_MAGIC);
	perflib_providers_add(p);
	return p;
}

static void stopped(struct perflib_provider *p)
{
	assert_ptr_equal(perflib_providers_remove(p), p);
	atomic_store(&p->magic, PERFLIB_PROVIDER_DEAD);
	perflib_prov_retire(p);
}

static void test_list(void **state)
{
	struct perflib_provider *a, *b, *p;
	int n = 0, seen_a = 0, seen_b = 0;

	(void)state;
	a = started();
	b = started();
	assert_ptr_equal(perflib_provider_lookup(a), a);
	assert_ptr_equal(perflib_provider_lookup(b), b);
	assert_null(perflib_provider_lookup(NULL));
	assert_null(perflib_provider_lookup((HANDLE)&n)); /* not a provider */
	perflib_providers_lock();
	for (p = perflib_providers_first(); p; p = p->next, n++) {
		seen_a += p == a;
		seen_b += p == b;
	}
	perflib_providers_unlock();
	assert_int_equal(n, 2);
	assert_int_equal(seen_a, 1);
	assert_int_equal(seen_b, 1);
	stopped(a);
	assert_null(perflib_provider_lookup(a));
	assert_null(perflib_providers_remove(a)); /* a second stop */
	assert_ptr_equal(perflib_provider_lookup(b), b);
	stopped(b);
	assert_null(perflib_providers_first());
}

static void test_ctrset_find(void **state)
{
	struct perflib_provider *p;
	struct perflib_ctrset s1, s2;
	GUID g1 = {.Data1 = 1}, g2 = {.Data1 = 2}, g3 = {.Data1 = 3};

	(void)state;
	p = started();
	assert_null(perflib_ctrset_find(p, &g1));
	memset(&s1, 0, sizeof(s1));
	memset(&s2, 0, sizeof(s2));
	s1.guid = g1;
	s2.guid = g2;
	s1.next = &s2;
	atomic_store(&p->sets, &s1);
	/* found by GUID in its bucket, as PerfSetCounterSetInfo puts them (chained if shared) */
	s2.guid_next =
		atomic_load(&p->by_guid[perflib_bucket(perflib_guid_key(&g2), PERFLIB_GUID_BITS)]);
	atomic_store(&p->by_guid[perflib_bucket(perflib_guid_key(&g2), PERFLIB_GUID_BITS)], &s2);
	s1.guid_next =
		atomic_load(&p->by_guid[perflib_bucket(perflib_guid_key(&g1), PERFLIB_GUID_BITS)]);
	atomic_store(&p->by_guid[perflib_bucket(perflib_guid_key(&g1), PERFLIB_GUID_BITS)], &s1);
	assert_ptr_equal(perflib_ctrset_find(p, &g1), &s1);
	assert_ptr_equal(perflib_ctrset_find(p, &g2), &s2);
	assert_null(perflib_ctrset_find(p, &g3));
	/* in the list but not in its bucket: not found (the buckets are the index) */
	atomic_store(&p->by_guid[perflib_bucket(perflib_guid_key(&g1), PERFLIB_GUID_BITS)],
		     s1.guid_next);
	assert_null(perflib_ctrset_find(p, &g1));
	assert_ptr_equal(perflib_ctrset_find(p, &g2), &s2);
	atomic_store(&p->sets, NULL);
	for (unsigned int i = 0; i < 1u << PERFLIB_GUID_BITS; i++)
		atomic_store(&p->by_guid[i], NULL);
	stopped(p);
}

static void test_quarantine(void **state)
{
	struct perflib_provider *first, *p = NULL, *all[80];
	int i;

	(void)state;
	first = started();
	stopped(first);
	/* 64 more wait after it: the first is not handed out again before then */
	for (i = 0; i < 64; i++) {
		all[i] = started();
		assert_ptr_not_equal(all[i], first);
	}
	for (i = 0; i < 64; i++)
		stopped(all[i]);
	/* more than 64 wait now: the oldest come back first, ours among the first few */
	for (i = 0; i < 16; i++) {
		p = started();
		all[i] = p;
		if (p == first)
			break;
	}
	assert_true(i < 16);
	assert_int_equal(atomic_load(&p->magic), PERFLIB_PROVIDER_MAGIC);
	for (; i >= 0; i--)
		stopped(all[i]);
}

static void test_fork(void **state)
{
	struct perflib_provider *p;
	pid_t pid;
	int status;

	(void)state;
	p = started();
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		/* inherited: off the list, DEAD */
		_exit(perflib_providers_first() == NULL && !perflib_provider_lookup(p) &&
				      atomic_load(&p->magic) == PERFLIB_PROVIDER_DEAD
			      ? 0
			      : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the parent keeps its provider */
	assert_ptr_equal(perflib_provider_lookup(p), p);
	assert_int_equal(atomic_load(&p->magic), PERFLIB_PROVIDER_MAGIC);
	stopped(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_ctrset_find),
		cmocka_unit_test(test_quarantine),
		cmocka_unit_test(test_fork),
	};

	return cmocka_run_group_tests_name("provlist", tests, NULL, NULL);
}
