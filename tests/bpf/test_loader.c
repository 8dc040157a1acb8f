// SPDX-License-Identifier: MIT
/*
 * test_loader.c - userspace/loader.c, the loader functions of perflib_bpf_loader.h: the
 * geometry a loader reads equals the library's, the pins are looked for under the root the
 * library uses (perflib_set_pin_root, then $PERFLIB_ROOT with its trailing slashes, then
 * the default) or under a root given as perflib_set_pin_root() takes one, GUIDs are read
 * in every spelling the library reads and nothing else, and an info map the library would
 * refuse (another magic, another layout version) is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "internal.h"
#include "perflib_bpf_loader.h"
#include "testlib.h"
#include "../helpers/prov_util.h"

/* the private root of this test (tl_group_setup) */
static char root[PATH_MAX / 2];

static void assert_closed(const struct perflib_bpf_counterset *cs)
{
	assert_int_equal(cs->info_fd, -1);
	assert_int_equal(cs->data_fd, -1);
	assert_int_equal(cs->index_fd, -1);
	assert_int_equal(cs->live_fd, -1);
}

static int open_in(const char *r, const GUID *set, struct perflib_bpf_counterset *cs)
{
	char g[37];

	return perflib_bpf_counterset_open(r, perflib_guid_to_string(set, g), cs);
}

/* the geometry is class 0's of the info value the library keeps; GUID bytes are its GUID */
static void test_geometry(void **state)
{
	struct perflib_bpf_counterset cs;
	struct perflib_bpf_geometry geo;
	struct perflib_store *ro;
	__u8 bytes[16];
	uint32_t c;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	assert_int_equal(open_in(NULL, &set, &cs), 0);
	assert_int_equal(cs.geo.slot_size, ro->info->slot_size);
	assert_int_equal(cs.geo.capacity, ro->info->classes[0].capacity);
	assert_int_equal(cs.geo.nr_counters, 4);
	assert_int_equal(cs.geo.name_max, ro->info->classes[0].name_max);
	assert_int_equal(cs.geo.seg0_slots, ro->info->classes[0].seg0_slots);
	assert_int_equal(cs.geo.name_offset, ro->info->name_offset);
	assert_int_equal(cs.geo.instance_type, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(cs.geo.nr_procs, ro->info->nr_procs);
	assert_int_equal(perflib_bpf_counterset_guid(&cs, bytes), 0);
	assert_memory_equal(bytes, &set, 16);
	/* every class as the info says; past the last, zeros */
	for (c = 0; c < ro->info->nr_classes; c++) {
		perflib_bpf_geometry_from_class(ro->info, c, &geo);
		assert_int_equal(geo.slot_size, ro->info->classes[c].slot_size);
		assert_int_equal(geo.name_max, ro->info->classes[c].name_max);
		assert_int_equal(geo.seg0_slots, ro->info->classes[c].seg0_slots);
	}
	perflib_bpf_geometry_from_class(ro->info, ro->info->nr_classes, &geo);
	assert_int_equal(geo.slot_size, 0);
	assert_int_equal(geo.capacity, 0);
	perflib_bpf_geometry_from_info(ro->info, &geo);
	assert_memory_equal(&geo, &cs.geo, sizeof(geo));
	perflib_bpf_counterset_close(&cs);
	assert_closed(&cs);
	perflib_bpf_counterset_close(&cs); /* twice: nothing left to close */
	perflib_bpf_counterset_close(NULL);
	perflib_store_close(ro);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* the root: the library's own resolution when NULL, else what perflib_set_pin_root takes */
static void test_root(void **state)
{
	struct perflib_bpf_counterset cs;
	char slashes[PATH_MAX], *longer;
	size_t n;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	/* perflib_set_pin_root wins over the environment */
	assert_int_equal(setenv("PERFLIB_ROOT", "/nonexistent/perflib", 1), 0);
	assert_int_equal(open_in(NULL, &set, &cs), 0);
	perflib_bpf_counterset_close(&cs);
	/* then the environment, trailing slashes and all */
	assert_int_equal(perflib_set_pin_root(NULL), 0);
	assert_int_equal(open_in(NULL, &set, &cs), -ENOENT);
	assert_closed(&cs);
	snprintf(slashes, sizeof(slashes), "%s///", root);
	assert_int_equal(setenv("PERFLIB_ROOT", slashes, 1), 0);
	assert_int_equal(open_in(NULL, &set, &cs), 0);
	perflib_bpf_counterset_close(&cs);
	/* a relative or too long environment root is not taken: the default (elsewhere) is */
	assert_int_equal(setenv("PERFLIB_ROOT", root + 1, 1), 0);
	assert_string_equal(perflib_pin_root(), PERFLIB_DEFAULT_ROOT);
	assert_int_equal(open_in(NULL, &set, &cs), -ENOENT);
	/* an explicit root: absolute, below PATH_MAX / 2, trailing slashes dropped */
	assert_int_equal(open_in(root, &set, &cs), 0);
	perflib_bpf_counterset_close(&cs);
	assert_int_equal(open_in(slashes, &set, &cs), 0);
	perflib_bpf_counterset_close(&cs);
	assert_int_equal(open_in(root + 1, &set, &cs), -EINVAL);
	assert_closed(&cs);
	assert_int_equal(open_in("", &set, &cs), -EINVAL);
	n = PATH_MAX / 2;
	longer = malloc(n + 1);
	assert_non_null(longer);
	memset(longer, 'x', n);
	longer[0] = '/';
	longer[n] = 0;
	assert_int_equal(perflib_set_pin_root(longer), -EINVAL);
	assert_int_equal(open_in(longer, &set, &cs), -EINVAL);
	free(longer);
	assert_int_equal(setenv("PERFLIB_ROOT", root, 1), 0);
	assert_int_equal(perflib_set_pin_root(root), 0);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* the GUID: braces and upper case as perflib_guid_from_string reads; never a path */
static void test_guid_spelling(void **state)
{
	struct perflib_bpf_counterset cs;
	char g[37], s[48];
	size_t i;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	perflib_guid_to_string(&set, g);
	snprintf(s, sizeof(s), "{%s}", g);
	assert_int_equal(perflib_bpf_counterset_open(NULL, s, &cs), 0);
	perflib_bpf_counterset_close(&cs);
	for (i = 0; g[i]; i++)
		s[i] = (char)toupper((unsigned char)g[i]);
	s[i] = 0;
	assert_int_equal(perflib_bpf_counterset_open(NULL, s, &cs), 0);
	perflib_bpf_counterset_close(&cs);
	snprintf(s, sizeof(s), "../%s", g);
	assert_int_equal(perflib_bpf_counterset_open(NULL, s, &cs), -EINVAL);
	assert_closed(&cs);
	assert_int_equal(perflib_bpf_counterset_open(NULL, "exit-reaper", &cs), -EINVAL);
	assert_int_equal(perflib_bpf_counterset_open(NULL, NULL, &cs), -EINVAL);
	assert_closed(&cs);
	assert_int_equal(perflib_bpf_counterset_open(NULL, g, NULL), -EINVAL);
	/* not registered */
	set = prov_guid();
	assert_int_equal(open_in(NULL, &set, &cs), -ENOENT);
	assert_closed(&cs);
	assert_int_equal(perflib_bpf_counterset_reuse(NULL, NULL, NULL), -EINVAL);
	assert_int_equal(perflib_bpf_counterset_reuse_live(NULL, NULL), -EINVAL);
	assert_int_equal(perflib_bpf_counterset_guid(NULL, (__u8 *)s), -EINVAL);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* pin a map of @value_size bytes (1 entry, @value) as @dir/@name; the fd closed */
static void pin_array(const char *dir, const char *name, __u32 value_size, const void *value)
{
	char path[PATH_MAX];
	__u32 key = 0;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, value_size, 1, NULL);
	assert_true(fd >= 0);
	if (value)
		assert_int_equal(bpf_map_update_elem(fd, &key, value, 0), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(bpf_obj_pin(fd, path), 0);
	close(fd);
}

/* an info the library would not open is refused: another magic, another layout version */
static void test_forged_info(void **state)
{
	static const struct {
		__u32 magic, version;
		int err;
	} cases[] = {
		{PERFLIB_INFO_MAGIC ^ 1, PERFLIB_LAYOUT_VERSION, -EBADMSG},
		{PERFLIB_INFO_MAGIC, PERFLIB_LAYOUT_VERSION - 1, -EPROTO},
		{PERFLIB_INFO_MAGIC, PERFLIB_LAYOUT_VERSION, -EBADMSG}, /* the rest all zero */
	};
	struct perflib_bpf_counterset cs;
	struct perflib_info info;
	char dir[PATH_MAX], g[37];
	size_t i;
	GUID set;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		set = prov_guid();
		snprintf(dir, sizeof(dir), "%s/%s", root, perflib_guid_to_string(&set, g));
		assert_int_equal(mkdir(dir, 0755), 0);
		memset(&info, 0, sizeof(info));
		info.magic = cases[i].magic;
		info.layout_version = cases[i].version;
		info.info_size = sizeof(info);
		pin_array(dir, "info", sizeof(info), &info);
		pin_array(dir, "segs", 8, NULL);
		pin_array(dir, "lives", 8, NULL);
		assert_int_equal(perflib_bpf_counterset_open(NULL, g, &cs), cases[i].err);
		assert_closed(&cs);
		perflib_remove_dir(dir);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_root),
		cmocka_unit_test(test_guid_spelling),
		cmocka_unit_test(test_forged_info),
	};
	const char *r;

	tl_require_bpf();
	r = tl_root_create();
	if (!r)
		return 1;
	snprintf(root, sizeof(root), "%s", r);
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	return cmocka_run_group_tests_name("loader", tests, NULL, tl_group_teardown);
}
