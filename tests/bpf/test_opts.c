// SPDX-License-Identifier: MIT
/*
 * test_opts.c - opts.c and the caller-buffer pin root: struct perflib_pin_opts read by its sz
 * (older and newer callers, bad sizes), the PERFLIB_1.0 entry points that took the options
 * without sz (called through dlvsym on the shared library), perflib_get_pin_root() with
 * short buffers and against a thread that keeps changing the root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const struct perflib_counter_reg counters[1] = {
	{1, PERF_COUNTER_RAWCOUNT, 0, PERF_DETAIL_NOVICE, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF,
	 0xFFFFFFFF, 0, "One", NULL},
};

static const struct perflib_counterset_reg reg = {
	.counterset_guid = {0x0fd7a1e5, 0x1111, 0x4222, {0x83, 0x33, 0x44, 0x44, 0x55, 0x55, 0, 1}},
	.instance_type = PERF_COUNTERSET_MULTI_INSTANCES,
	.name = "Opts",
	.nr_counters = 1,
	.counters = counters,
};

static void test_read_defaults(void **state)
{
	struct perflib_pin_opts o;

	(void)state;
	memset(&o, 0x5a, sizeof(o));
	assert_int_equal(perflib_pin_opts_read(NULL, &o), 0);
	assert_int_equal(o.sz, sizeof(o));
	assert_int_equal(o.mode, 0);
	assert_int_equal(o.uid, (uid_t)-1);
	assert_int_equal(o.gid, (gid_t)-1);
	assert_int_equal(o.capacity, 0);
	assert_int_equal(o.name_max, 0);
}

static void test_read_full_and_init_macro(void **state)
{
	struct perflib_pin_opts in = PERFLIB_PIN_OPTS_INIT, o;

	(void)state;
	assert_int_equal(in.sz, sizeof(in));
	assert_int_equal(in.uid, (uid_t)-1);
	assert_int_equal(in.gid, (gid_t)-1);
	in.mode = 0664;
	in.uid = 12;
	in.gid = 34;
	in.capacity = 8;
	in.name_max = 9;
	assert_int_equal(perflib_pin_opts_read(&in, &o), 0);
	assert_int_equal(o.mode, 0664);
	assert_int_equal(o.uid, 12);
	assert_int_equal(o.gid, 34);
	assert_int_equal(o.capacity, 8);
	assert_int_equal(o.name_max, 9);
}

/* an older caller knew fields up to gid: the later ones are defaults, whatever follows */
static void test_read_older_caller(void **state)
{
	struct perflib_pin_opts in = PERFLIB_PIN_OPTS_INIT, o;

	(void)state;
	in.sz = offsetof(struct perflib_pin_opts, capacity);
	in.mode = 0600;
	in.gid = 7;
	in.capacity = 999; /* beyond the caller's sz: must not be read */
	in.name_max = 999;
	assert_int_equal(perflib_pin_opts_read(&in, &o), 0);
	assert_int_equal(o.mode, 0600);
	assert_int_equal(o.gid, 7);
	assert_int_equal(o.capacity, 0);
	assert_int_equal(o.name_max, 0);
	/* only sz: every field a default */
	in.sz = sizeof(size_t);
	assert_int_equal(perflib_pin_opts_read(&in, &o), 0);
	assert_int_equal(o.mode, 0);
	assert_int_equal(o.uid, (uid_t)-1);
}

/* a newer caller: unknown trailing bytes must be zero */
static void test_read_newer_caller(void **state)
{
	struct {
		struct perflib_pin_opts known;
		unsigned long long future;
	} in;
	struct perflib_pin_opts o;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.known.sz = sizeof(in);
	in.known.uid = (uid_t)-1;
	in.known.gid = (gid_t)-1;
	in.known.capacity = 5;
	assert_int_equal(perflib_pin_opts_read(&in.known, &o), 0);
	assert_int_equal(o.capacity, 5);
	in.future = 1;
	assert_int_equal(perflib_pin_opts_read(&in.known, &o), -EINVAL);
}

static void test_read_bad_size(void **state)
{
	struct perflib_pin_opts in = PERFLIB_PIN_OPTS_INIT, o;
	struct perflib_layout l;

	(void)state;
	in.sz = 0;
	assert_int_equal(perflib_pin_opts_read(&in, &o), -EINVAL);
	in.sz = sizeof(size_t) - 1;
	assert_int_equal(perflib_pin_opts_read(&in, &o), -EINVAL);
	/* through the API: refused before anything is built */
	in.sz = 0;
	assert_int_equal(perflib_counterset_layout(&reg, &in, &l), -EINVAL);
	assert_int_equal(perflib_register_counterset(&reg, &in), -EINVAL);
	in.sz = sizeof(in);
	in.capacity = 16;
	assert_int_equal(perflib_counterset_layout(&reg, &in, &l), 0);
	assert_int_equal(l.capacity, 16);
	perflib_layout_free(&l);
}

/* the struct of PERFLIB_1.0, which programs linked against 1.0 still pass */
struct pin_opts_1_0 {
	mode_t mode;
	uid_t uid;
	gid_t gid;
	unsigned int capacity;
	unsigned int name_max;
};

static void test_compat_1_0(void **state)
{
	int (*layout_1_0)(const struct perflib_counterset_reg *, const struct pin_opts_1_0 *,
			  struct perflib_layout *);
	int (*layout_1_1)(const struct perflib_counterset_reg *, const struct perflib_pin_opts *,
			  struct perflib_layout *);
	struct pin_opts_1_0 old = {0, (uid_t)-1, (gid_t)-1, 24, 17};
	struct perflib_pin_opts cur = PERFLIB_PIN_OPTS_INIT;
	const char *out = getenv("OUTPUT");
	struct perflib_layout l;
	char path[PATH_MAX];
	void *so;

	(void)state;
	snprintf(path, sizeof(path), "%s/libperflib.so.1", out ? out : ".output");
	so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!so)
		skip(); /* the static build alone: nothing versioned to call */
	*(void **)&layout_1_0 = dlvsym(so, "perflib_counterset_layout", "PERFLIB_1.0");
	*(void **)&layout_1_1 = dlvsym(so, "perflib_counterset_layout", "PERFLIB_1.1");
	assert_non_null(layout_1_0);
	assert_non_null(layout_1_1);
	assert_non_null(dlvsym(so, "perflib_register_counterset", "PERFLIB_1.0"));
	assert_non_null(dlvsym(so, "perflib_register_counterset", "PERFLIB_1.1"));
	assert_non_null(dlvsym(so, "perflib_get_pin_root", "PERFLIB_1.1"));
	/* dlsym finds the default version */
	assert_ptr_equal(dlsym(so, "perflib_counterset_layout"), *(void **)&layout_1_1);
	assert_int_equal(layout_1_0(&reg, &old, &l), 0);
	assert_int_equal(l.capacity, 24);
	assert_int_equal(l.name_max, 17);
	perflib_layout_free(&l);
	assert_int_equal(layout_1_0(&reg, NULL, &l), 0);
	perflib_layout_free(&l);
	cur.capacity = 24;
	cur.name_max = 17;
	assert_int_equal(layout_1_1(&reg, &cur, &l), 0);
	assert_int_equal(l.capacity, 24);
	perflib_layout_free(&l);
	dlclose(so);
}

static void test_get_pin_root(void **state)
{
	char saved[PATH_MAX], buf[PATH_MAX];
	int len;

	(void)state;
	len = perflib_get_pin_root(saved, sizeof(saved));
	assert_true(len > 0);
	assert_int_equal((size_t)len, strlen(saved));
	assert_string_equal(saved, perflib_pin_root());
	assert_int_equal(perflib_get_pin_root(NULL, 10), -EINVAL);
	assert_int_equal(perflib_set_pin_root("/sys/fs/bpf/abc"), 0);
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(perflib_get_pin_root(buf, 15), -ENOSPC); /* needs 16 with the NUL */
	assert_int_equal(buf[0], 'x');
	assert_int_equal(perflib_get_pin_root(buf, 16), 15);
	assert_string_equal(buf, "/sys/fs/bpf/abc");
	assert_int_equal(perflib_get_pin_root(buf, 0), -ENOSPC);
	assert_int_equal(perflib_set_pin_root(saved), 0);
}

static volatile int stop;
static _Atomic unsigned int flips; /* pairs of roots the flipper has set */

static void *flipper(void *arg)
{
	(void)arg;
	while (!stop) {
		perflib_set_pin_root("/sys/fs/bpf/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
		perflib_set_pin_root("/sys/fs/bpf/b");
		atomic_fetch_add(&flips, 1);
	}
	return NULL;
}

/*
 * until the flipper has set both roots again since the call: what the test checks happened
 * in between, however loaded the machine (a fixed number of sched_yield()s was no such
 * promise, and on a machine with every core busy 100,000 rounds of them took minutes)
 */
static void await_flips(void)
{
	unsigned int f = atomic_load(&flips);

	while (atomic_load(&flips) < f + 2)
		sched_yield();
}

/* every copy is a whole root (the first, or one of the two set): never a mix */
static void test_get_pin_root_threads(void **state)
{
	char saved[PATH_MAX], buf[PATH_MAX];
	pthread_t t;
	int i;

	(void)state;
	assert_true(perflib_get_pin_root(saved, sizeof(saved)) > 0);
	stop = 0;
	assert_int_equal(pthread_create(&t, NULL, flipper, NULL), 0);
	for (i = 0; i < 2000; i++) {
		assert_true(perflib_get_pin_root(buf, sizeof(buf)) > 0);
		if (strcmp(buf, saved) && strcmp(buf, "/sys/fs/bpf/b") &&
		    strcmp(buf, "/sys/fs/bpf/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))
			fail_msg("torn pin root copy: %s", buf);
		await_flips();
	}
	stop = 1;
	pthread_join(t, NULL);
	assert_int_equal(perflib_set_pin_root(saved), 0);
}

/* what perflib_pin_root() returned is never rewritten: not by a new root, nor by NULL */
static void test_pin_root_kept(void **state)
{
	char saved[PATH_MAX], env[PATH_MAX];
	const char *a, *b, *again, *e;
	const char *old_env = getenv("PERFLIB_ROOT");

	(void)state;
	assert_true(perflib_get_pin_root(saved, sizeof(saved)) > 0);
	snprintf(env, sizeof(env), "%s", old_env ? old_env : "");
	assert_int_equal(perflib_set_pin_root("/sys/fs/bpf/kept-a"), 0);
	a = perflib_pin_root();
	assert_string_equal(a, "/sys/fs/bpf/kept-a");
	assert_int_equal(perflib_set_pin_root("/sys/fs/bpf/kept-b"), 0);
	b = perflib_pin_root();
	assert_string_equal(b, "/sys/fs/bpf/kept-b");
	assert_string_equal(a, "/sys/fs/bpf/kept-a");
	/* a root used again is the string kept the first time: memory does not grow per call */
	assert_int_equal(perflib_set_pin_root("/sys/fs/bpf/kept-a"), 0);
	again = perflib_pin_root();
	assert_ptr_equal(again, a);
	/* from the environment, trailing slashes dropped; the set roots stay as they were */
	setenv("PERFLIB_ROOT", "/sys/fs/bpf/kept-env//", 1);
	assert_int_equal(perflib_set_pin_root(NULL), 0);
	e = perflib_pin_root();
	assert_string_equal(e, "/sys/fs/bpf/kept-env");
	setenv("PERFLIB_ROOT", "/sys/fs/bpf/kept-env2", 1);
	assert_string_equal(perflib_pin_root(), "/sys/fs/bpf/kept-env2");
	assert_string_equal(e, "/sys/fs/bpf/kept-env");
	assert_string_equal(a, "/sys/fs/bpf/kept-a");
	assert_string_equal(b, "/sys/fs/bpf/kept-b");
	if (old_env)
		setenv("PERFLIB_ROOT", env, 1);
	else
		unsetenv("PERFLIB_ROOT");
	assert_int_equal(perflib_set_pin_root(saved), 0);
	assert_string_equal(perflib_pin_root(), saved);
}

/* a string read while another thread sets roots stays whole and unchanged afterwards */
static void test_pin_root_threads(void **state)
{
	char saved[PATH_MAX], copy[PATH_MAX];
	const char *p;
	pthread_t t;
	int i;

	(void)state;
	assert_true(perflib_get_pin_root(saved, sizeof(saved)) > 0);
	stop = 0;
	assert_int_equal(pthread_create(&t, NULL, flipper, NULL), 0);
	for (i = 0; i < 2000; i++) {
		p = perflib_pin_root();
		snprintf(copy, sizeof(copy), "%s", p);
		if (strcmp(copy, saved) && strcmp(copy, "/sys/fs/bpf/b") &&
		    strcmp(copy, "/sys/fs/bpf/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))
			fail_msg("torn pin root: %s", copy);
		await_flips();
		if (strcmp(copy, p))
			fail_msg("pin root rewritten under the caller: %s, then %s", copy, p);
	}
	stop = 1;
	pthread_join(t, NULL);
	assert_int_equal(perflib_set_pin_root(saved), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_defaults),
		cmocka_unit_test(test_read_full_and_init_macro),
		cmocka_unit_test(test_read_older_caller),
		cmocka_unit_test(test_read_newer_caller),
		cmocka_unit_test(test_read_bad_size),
		cmocka_unit_test(test_compat_1_0),
		cmocka_unit_test(test_get_pin_root),
		cmocka_unit_test(test_get_pin_root_threads),
		cmocka_unit_test(test_pin_root_kept),
		cmocka_unit_test(test_pin_root_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
