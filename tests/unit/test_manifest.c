// SPDX-License-Identifier: MIT
/*
 * test_manifest.c - tools/common/manifest.c: the ten real manifests of ../shared/manifests,
 * the worked example of tools.md 2.7, a schema 2.0 manifest with every auxiliary-counter
 * kind, one bad manifest per rule with its exact diagnostics, and the lookup tables.
 * Paths: SHARED (default ../shared) and TEST_DATA (default tests/data), relative to the
 * repository root where tests/run.sh runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout.h"
#include "manifest.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *data_dir(void)
{
	const char *d = getenv("TEST_DATA");

	return d && *d ? d : "tests/data";
}

static const char *shared_dir(void)
{
	const char *d = getenv("SHARED");

	return d && *d ? d : "../shared";
}

/* manifest_load() with the diagnostics captured in *ret_diag (caller frees). */
static int load(const char *path, struct manifest **ret_man, char **ret_diag)
{
	size_t len = 0;
	FILE *f;
	int err;

	*ret_diag = NULL;
	f = open_memstream(ret_diag, &len);
	assert_non_null(f);
	err = manifest_load(path, ret_man, f);
	assert_int_equal(fclose(f), 0);
	return err;
}

/* "LINE: severity: text" lines -> "PATH:LINE: severity: text\n" ... */
static char *expect_text(const char *path, const char *const *lines)
{
	size_t len = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	for (; lines && *lines; lines++)
		fprintf(f, "%s:%s\n", path, *lines);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/*
 * Load a manifest that must succeed, with exactly the warnings @warnings. @dir/@name is
 * skipped when the file is absent (the shared corpus is outside the repository).
 */
static struct manifest *load_ok(const char *dir, const char *name, const char *const *warnings)
{
	struct manifest *man = NULL;
	char path[512], *diag, *want;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (access(path, R_OK))
		skip();
	err = load(path, &man, &diag);
	want = expect_text(path, warnings);
	assert_string_equal(diag, want);
	assert_int_equal(err, 0);
	assert_non_null(man);
	assert_string_equal(man->path, path);
	free(diag);
	free(want);
	return man;
}

static struct manifest *load_real(const char *name, const char *const *warnings)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/manifests", shared_dir());
	return load_ok(dir, name, warnings);
}

static struct manifest *load_data(const char *name, const char *const *warnings)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/manifests", data_dir());
	return load_ok(dir, name, warnings);
}

static void assert_guid(const GUID *g, const char *text)
{
	GUID want;

	assert_int_equal(manifest_parse_guid(text, &want), 0);
	assert_memory_equal(g, &want, sizeof(want));
}

/* Shape of one counter: id, type, attributes, aggregate, scale. */
static void assert_counter(const struct manifest_counter *c, uint32_t id, uint32_t type,
			   uint64_t attrib, uint32_t aggregate, int32_t scale)
{
	assert_int_equal(c->id, id);
	assert_non_null(c->type);
	assert_int_equal(c->type->value, type);
	assert_int_equal(c->attrib, attrib);
	assert_int_equal(c->aggregate, aggregate);
	assert_int_equal(c->default_scale, scale);
}

/* ---- the ten real manifests ---- */

static void test_vista_sample(void **state)
{
	static const char *const warnings[] = {
		"3: warning: <counters> has no schemaVersion (required); read as a Vista-era "
		"manifest",
		"4: warning: user-mode <provider> has no symbol attribute (documented as required "
		"since Windows 7)",
		"70: warning: aggregate has no effect: counterSet instances is single",
		NULL,
	};
	struct manifest *man =
		load_real("Aliceljm1_WinSDKV6.0Samples_PerflibV2SampleProvider.man", warnings);
	const struct manifest_provider *p = &man->providers[0];
	const struct manifest_counterset *s0 = &p->sets[0], *s1 = &p->sets[1];

	(void)state;
	assert_false(man->has_namespace);
	assert_int_equal(man->schema_version, MANIFEST_SCHEMA_NONE);
	assert_int_equal(man->nr_warnings, 3);
	assert_int_equal(man->nr_providers, 1);
	assert_null(p->symbol);
	assert_string_equal(p->provider_name, "CounterProviderSample");
	assert_string_equal(p->application_identity, "PerflibV2SampleProvider.exe");
	assert_true(p->callback_custom);
	assert_int_equal(p->provider_type, PERF_PROVIDER_USER_MODE);
	assert_guid(&p->guid, "{ffeeddbb-965a-4cf9-9c07-fe25378c2a23}");
	assert_int_equal(p->nr_sets, 2);

	assert_null(s0->symbol);
	assert_string_equal(s0->name, "TestMultiInstanceObject");
	assert_string_equal(s0->description, "This is a test CounterSet with multiple instances");
	assert_string_equal(s0->instances, "multiple");
	assert_int_equal(s0->instance_type, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(s0->nr_counters, 2);
	assert_string_equal(s0->counters[1].name, "Square Wave");

	assert_string_equal(s1->name, "TestSingleInstanceObject");
	assert_int_equal(s1->instance_type, PERF_COUNTERSET_SINGLE_INSTANCE);
	assert_int_equal(s1->nr_counters, 5);
	assert_counter(&s1->counters[0], 3, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE,
		       PERF_AGGREGATE_UNDEFINED, 0);
	assert_counter(&s1->counters[2], 5, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE,
		       PERF_AGGREGATE_UNDEFINED, 1);
	assert_counter(&s1->counters[3], 6, PERF_RAW_BASE, PERF_ATTRIB_NO_DISPLAYABLE,
		       PERF_AGGREGATE_MAX, 0);
	assert_true(s1->counters[3].has_aggregate);
	assert_counter(&s1->counters[4], 7, PERF_RAW_FRACTION, PERF_ATTRIB_BY_REFERENCE,
		       PERF_AGGREGATE_UNDEFINED, 0);
	assert_true(s1->counters[4].base_id.set);
	assert_int_equal(s1->counters[4].base_id.value, 6);
	assert_string_equal(s1->counters[4].description,
			    "RawFraction ; Takes counter with ID = 6 as base counter");
	/* The start tag of counter 7 is on line 76, its attributes run to line 81. */
	assert_int_equal(s1->counters[4].line, 76);
	assert_ptr_equal(manifest_counter_find(s1, 6), &s1->counters[3]);
	assert_null(manifest_counter_find(s1, 1));
	manifest_free(man);
}

static void test_kcs(void **state)
{
	struct manifest *man = load_real("KunYi_WDK7.1-Samples_kcs.man", NULL);
	const struct manifest_provider *p = &man->providers[0];
	const struct manifest_counterset *s0 = &p->sets[0];

	(void)state;
	assert_true(man->has_namespace);
	assert_int_equal(man->schema_version, MANIFEST_SCHEMA_1_1);
	assert_int_equal(p->provider_type, PERF_PROVIDER_KERNEL_MODE);
	assert_null(p->symbol);
	assert_string_equal(p->provider_name, "KernelCountersSample");
	assert_int_equal(p->nr_sets, 2);
	assert_string_equal(s0->symbol, "GeometricWave");
	assert_int_equal(s0->instance_type, PERF_COUNTERSET_MULTI_AGGREGATE);
	assert_int_equal(s0->nr_structs, 1);
	assert_string_equal(s0->structs[0].name, "GeometricWaveValues");
	assert_string_equal(s0->structs[0].type, "GEOMETRIC_WAVE_VALUES");
	assert_int_equal(s0->nr_counters, 2);
	assert_counter(&s0->counters[0], 1, PERF_COUNTER_RAWCOUNT, 0, PERF_AGGREGATE_AVG, 0);
	assert_string_equal(s0->counters[0].struct_name, "GeometricWaveValues");
	assert_int_equal(s0->counters[0].struct_index, 0);
	assert_string_equal(s0->counters[0].field, "Triangle");
	assert_int_equal(p->sets[1].nr_counters, 3);
	assert_counter(&p->sets[1].counters[2], 3, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE,
		       PERF_AGGREGATE_UNDEFINED, 0);
	manifest_free(man);
}

static void test_hpx(void **state)
{
	struct manifest *man = load_real("STEllAR-GROUP_hpx_heartbeat.man", NULL);
	const struct manifest_provider *p = &man->providers[0];
	const struct manifest_counterset *s = &p->sets[0];

	(void)state;
	assert_string_equal(p->symbol, "HPXHeartBeat");
	assert_true(p->callback_custom);
	/* {1178C091-4A8D-4657-B656-CE030059C34F}, as in the real hpx_counters.hpp. */
	assert_int_equal(p->guid.Data1, 0x1178c091);
	assert_int_equal(p->guid.Data2, 0x4a8d);
	assert_int_equal(p->guid.Data3, 0x4657);
	assert_memory_equal(p->guid.Data4, "\xb6\x56\xce\x03\x00\x59\xc3\x4f", 8);
	assert_int_equal(p->nr_sets, 1);
	assert_string_equal(s->symbol, "QueueLength");
	assert_string_equal(s->uri, "Hpx.Counters.Queue.Length");
	assert_int_equal(s->nr_counters, 2);
	assert_false(s->counters[0].has_aggregate);
	assert_counter(&s->counters[0], 1, PERF_COUNTER_RAWCOUNT, 0, PERF_AGGREGATE_UNDEFINED, 0);
	assert_counter(&s->counters[1], 2, PERF_COUNTER_RAWCOUNT, 0, PERF_AGGREGATE_AVG, 0);
	assert_int_equal(s->counters[0].detail_level, PERF_DETAIL_NOVICE);
	assert_int_equal(s->counters[0].line, 28); /* CRLF file */
	manifest_free(man);
}

static void test_corefx(void **state)
{
	static const char *const warnings[] = {
		"8: warning: <counters> has no schemaVersion (required); read as a Vista-era "
		"manifest",
		"9: warning: user-mode <provider> has no symbol attribute (documented as required "
		"since Windows 7)",
		NULL,
	};
	struct manifest *man = load_real("dotnet_corefx_provider.man", warnings);
	const struct manifest_counterset *s = &man->providers[0].sets[0];

	(void)state;
	assert_true(man->has_namespace);
	assert_false(man->providers[0].callback_custom);
	assert_string_equal(man->providers[0].provider_name, "Counters"); /* the default */
	assert_null(s->symbol);
	assert_string_equal(s->name, "Typing");
	assert_int_equal(s->nr_counters, 6);
	assert_string_equal(s->counters[0].name, "Total Words Typed");
	assert_counter(&s->counters[1], 2, PERF_COUNTER_DELTA, 0, PERF_AGGREGATE_UNDEFINED, 0);
	assert_counter(&s->counters[4], 5, PERF_SAMPLE_FRACTION, PERF_ATTRIB_DISPLAY_AS_REAL,
		       PERF_AGGREGATE_UNDEFINED, 0);
	assert_int_equal(s->counters[4].base_id.value, 6);
	assert_counter(&s->counters[5], 6, PERF_SAMPLE_BASE, PERF_ATTRIB_NO_DISPLAYABLE,
		       PERF_AGGREGATE_UNDEFINED, 0);
	assert_null(s->counters[5].name);
	assert_null(s->counters[5].description);
	assert_null(s->counters[5].symbol);
	manifest_free(man);
}

static void test_gas(void **state)
{
	struct manifest *man = load_real("microsoft_Windows-classic-samples_gas.man", NULL);
	const struct manifest_counterset *s = &man->providers[0].sets[0];

	(void)state;
	assert_string_equal(man->providers[0].symbol, "GlobalAggregateSample");
	assert_string_equal(man->providers[0].provider_name, "Global Aggregate Sample");
	assert_int_equal(s->instance_type, PERF_COUNTERSET_SINGLE_AGGREGATE);
	assert_int_equal(s->nr_counters, 5);
	assert_counter(&s->counters[0], 1, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE,
		       PERF_AGGREGATE_TOTAL, 0);
	assert_counter(&s->counters[1], 2, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE,
		       PERF_AGGREGATE_AVG, 0);
	assert_false(s->counters[2].has_aggregate);
	assert_false(s->counters[3].has_aggregate);
	assert_counter(&s->counters[4], 5, PERF_RAW_FRACTION, PERF_ATTRIB_BY_REFERENCE,
		       PERF_AGGREGATE_MAX, 0);
	assert_int_equal(s->counters[4].base_id.value, 4);
	manifest_free(man);
}

static void test_ucs(void **state)
{
	struct manifest *man = load_real("microsoft_Windows-classic-samples_ucs.man", NULL);
	const struct manifest_provider *p = &man->providers[0];

	(void)state;
	assert_string_equal(p->symbol, "UserModeCountersSample");
	assert_int_equal(p->nr_sets, 2);
	assert_string_equal(p->sets[0].symbol, "GeometricWave");
	assert_string_equal(p->sets[0].name, "Geometric Waves");
	assert_int_equal(p->sets[0].instance_type, PERF_COUNTERSET_MULTI_AGGREGATE);
	assert_int_equal(p->sets[0].nr_counters, 2);
	assert_int_equal(p->sets[0].counters[0].aggregate, PERF_AGGREGATE_TOTAL);
	assert_int_equal(p->sets[0].counters[1].aggregate, PERF_AGGREGATE_AVG);
	assert_string_equal(p->sets[1].symbol, "TrignometricWave");
	assert_int_equal(p->sets[1].nr_counters, 5);
	assert_counter(&p->sets[1].counters[2], 3, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE,
		       PERF_AGGREGATE_UNDEFINED, 1);
	assert_counter(&p->sets[1].counters[3], 4, PERF_RAW_BASE, PERF_ATTRIB_NO_DISPLAYABLE,
		       PERF_AGGREGATE_UNDEFINED, 0);
	assert_int_equal(p->sets[1].counters[4].base_id.value, 4);
	assert_guid(&p->sets[1].guid, "{FFEEAADD-EAA6-45BA-BF6D-4C7CB0D6EF73}");
	manifest_free(man);
}

static void test_ktl_logger(void **state)
{
	struct manifest *man = load_real("microsoft_service-fabric_KtlLoggerCounters.um.man", NULL);
	const struct manifest_provider *p = &man->providers[0];
	size_t i, j;

	(void)state;
	assert_string_equal(p->symbol, "KTLLogger");
	assert_int_equal(p->nr_sets, 3);
	assert_int_equal(p->sets[0].nr_counters, 9);
	assert_int_equal(p->sets[1].nr_counters, 2);
	assert_int_equal(p->sets[2].nr_counters, 2);
	/* Counters name a field but no struct: the set's only struct is theirs. */
	for (i = 0; i < p->nr_sets; i++) {
		assert_int_equal(p->sets[i].nr_structs, 1);
		for (j = 0; j < p->sets[i].nr_counters; j++) {
			assert_null(p->sets[i].counters[j].struct_name);
			assert_int_equal(p->sets[i].counters[j].struct_index, 0);
			assert_non_null(p->sets[i].counters[j].field);
			assert_int_equal(ctrtype_size(p->sets[i].counters[j].type->value), 8);
		}
	}
	assert_string_equal(p->sets[2].structs[0].type, "KTL_LOG_MANAGER");
	assert_string_equal(p->sets[0].counters[0].field, "ApplicationBytesWrittenPerSecond");
	assert_int_equal(p->sets[0].counters[0].type->value, PERF_COUNTER_BULK_COUNT);
	assert_int_equal(p->sets[0].counters[8].type->value, PERF_COUNTER_LARGE_RAWCOUNT);
	manifest_free(man);
}

static void test_kperfcounter(void **state)
{
	struct manifest *man = load_real("microsoft_service-fabric_kperfcounter.um.man", NULL);
	const struct manifest_provider *p = &man->providers[0];
	size_t i, j;

	(void)state;
	assert_string_equal(p->symbol, "RVDSample");
	assert_int_equal(p->nr_sets, 2);
	assert_int_equal(p->sets[0].nr_counters, 3);
	assert_int_equal(p->sets[1].nr_counters, 4);
	for (i = 0; i < p->nr_sets; i++)
		for (j = 0; j < p->sets[i].nr_counters; j++) {
			assert_int_equal(p->sets[i].counters[j].attrib, PERF_ATTRIB_BY_REFERENCE);
			assert_int_equal(p->sets[i].counters[j].default_scale, 1);
		}
	assert_int_equal(p->sets[1].counters[0].type->value, PERF_COUNTER_LARGE_RAWCOUNT);
	assert_int_equal(p->sets[1].counters[1].type->value, PERF_COUNTER_RAWCOUNT);
	manifest_free(man);
}

static void test_node(void **state)
{
	struct manifest *man = load_real("nodejs_node_node_perfctr_provider.man", NULL);
	const struct manifest_counterset *s = &man->providers[0].sets[0];

	(void)state;
	assert_false(man->providers[0].callback_custom);
	assert_string_equal(man->providers[0].application_identity, "iojs.exe");
	assert_int_equal(s->nr_counters, 10);
	assert_counter(&s->counters[0], 1, PERF_COUNTER_COUNTER, 0, PERF_AGGREGATE_TOTAL, 0);
	assert_int_equal(s->counters[0].type->value, 0x10410400);
	assert_counter(&s->counters[5], 6, PERF_COUNTER_BULK_COUNT, 0, PERF_AGGREGATE_TOTAL, -3);
	assert_counter(&s->counters[7], 8, PERF_COUNTER_RAWCOUNT, 0, PERF_AGGREGATE_AVG, 0);
	assert_string_equal(s->counters[7].name, "%Time in GC");
	assert_counter(&s->counters[9], 10, PERF_COUNTER_BULK_COUNT, 0, PERF_AGGREGATE_TOTAL, -3);
	manifest_free(man);
}

static void test_zfsin(void **state)
{
	static const char *const warnings[] = {
		"40: warning: struct 'read_iops' of counter 1 names no <struct> of this counterSet",
		"50: warning: struct 'write_iops' of counter 2 names no <struct> of this "
		"counterSet",
		"60: warning: struct 'total_iops' of counter 3 names no <struct> of this "
		"counterSet",
		"70: warning: struct 'read_mbytes' of counter 4 names no <struct> of this "
		"counterSet",
		"80: warning: struct 'write_mbytes' of counter 5 names no <struct> of this "
		"counterSet",
		"90: warning: struct 'total_mbytes' of counter 6 names no <struct> of this "
		"counterSet",
		NULL,
	};
	struct manifest *man = load_real("openzfsonwindows_ZFSin_OpenZFS.man", warnings);
	const struct manifest_counterset *s = &man->providers[0].sets[0];

	(void)state;
	assert_int_equal(man->providers[0].provider_type, PERF_PROVIDER_KERNEL_MODE);
	assert_int_equal(s->nr_counters, 6);
	assert_int_equal(s->counters[0].struct_index, -1);
	assert_string_equal(s->counters[0].struct_name, "read_iops");
	assert_int_equal(s->counters[0].type->value, PERF_COUNTER_COUNTER);
	manifest_free(man);
}

/* ---- test data of this repository ---- */

static void test_demo(void **state)
{
	struct manifest *man = load_data("demo.man", NULL);
	const struct manifest_counterset *s = &man->providers[0].sets[0];

	(void)state;
	assert_string_equal(man->providers[0].symbol, "DemoProvider");
	assert_int_equal(s->nr_counters, 4);
	assert_string_equal(s->counters[0].symbol, "DEMO_REQ_RATE");
	assert_counter(&s->counters[1], 2, PERF_COUNTER_LARGE_RAWCOUNT, 0, PERF_AGGREGATE_UNDEFINED,
		       -3);
	assert_int_equal(s->counters[1].detail_level, PERF_DETAIL_ADVANCED);
	assert_counter(&s->counters[2], 3, PERF_AVERAGE_TIMER, PERF_ATTRIB_DISPLAY_AS_REAL,
		       PERF_AGGREGATE_UNDEFINED, 0);
	assert_int_equal(s->counters[2].base_id.value, 4);
	assert_counter(&s->counters[3], 4, PERF_AVERAGE_BASE, PERF_ATTRIB_NO_DISPLAYABLE,
		       PERF_AGGREGATE_UNDEFINED, 0);
	manifest_free(man);
}

static void test_v20(void **state)
{
	static const char *const warnings[] = {
		"54: warning: counter 8 of type perf_precision_system_timer has no baseID (a "
		"perf_large_raw_base counter expected)",
		"61: warning: instances=\"instanceAggregate\" is not in the published schema; "
		"accepted as an extension (PERF_COUNTERSET_INSTANCE_AGGREGATE)",
		NULL,
	};
	struct manifest *man = load_data("good_v20.man", warnings);
	const struct manifest_provider *p = &man->providers[0];
	const struct manifest_counterset *t = &p->sets[0], *o = &p->sets[1];

	(void)state;
	assert_int_equal(man->schema_version, MANIFEST_SCHEMA_2_0);
	/* en-US wins although de-DE comes first; entities are decoded. */
	assert_string_equal(t->name, "Timing & \"latency\"");
	assert_string_equal(t->description, "Timers with a back\\slash");
	assert_true(t->name_id.set);
	assert_int_equal(t->name_id.value, 100);
	assert_int_equal(t->description_id.value, 102);
	assert_int_equal(t->instance_type, PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY);
	assert_counter(&t->counters[0], 1, PERF_AVERAGE_TIMER,
		       PERF_ATTRIB_DISPLAY_AS_REAL | PERF_ATTRIB_NO_GROUP_SEPARATOR,
		       PERF_AGGREGATE_AVG, -10);
	assert_int_equal(t->counters[0].base_id.value, 2);
	assert_int_equal(t->counters[0].name_id.value, 104);
	assert_int_equal(t->counters[0].struct_index, 0);
	assert_string_equal(t->counters[0].field, "Avg");
	assert_null(t->counters[1].name); /* hidden base: no name needed with 2.0 */
	assert_false(t->counters[1].name_id.set);
	assert_int_equal(t->counters[2].default_scale, 10);
	assert_int_equal(t->counters[5].attrib,
			 PERF_ATTRIB_DISPLAY_AS_HEX | PERF_ATTRIB_BY_REFERENCE);
	assert_int_equal(t->counters[6].base_id.value, 6);
	assert_false(t->counters[7].base_id.set);

	assert_int_equal(o->instance_type, PERF_COUNTERSET_INSTANCE_AGGREGATE);
	assert_int_equal(o->instance_type, 0x16);
	assert_int_equal(o->counters[2].perf_time_id.value, 1);
	assert_int_equal(o->counters[2].perf_freq_id.value, 2);
	assert_counter(&o->counters[2], 3, PERF_ELAPSED_TIME, 0, PERF_AGGREGATE_MAX, 0);
	assert_counter(&o->counters[3], 4, PERF_OBJ_TIME_TIMER, 0, PERF_AGGREGATE_MIN, 0);
	assert_int_equal(o->counters[5].multi_counter_id.value, 5);
	assert_true(o->counters[5].has_aggregate);
	assert_int_equal(o->counters[5].aggregate, PERF_AGGREGATE_UNDEFINED);
	assert_int_equal(o->counters[7].base_id.value, 7);
	assert_int_equal(o->counters[7].struct_index, -1);
	manifest_free(man);
}

static void test_two_providers(void **state)
{
	static const char *const warnings[] = {
		"7: warning: <counters> has 2 providers; the schema allows one",
		NULL,
	};
	struct manifest *man = load_data("good_two_providers.man", warnings);
	const struct manifest_provider *k = &man->providers[0], *u = &man->providers[1];

	(void)state;
	assert_int_equal(man->nr_providers, 2);
	assert_int_equal(k->provider_type, PERF_PROVIDER_KERNEL_MODE);
	assert_false(k->resource_base.set);
	assert_int_equal(k->sets[0].counters[0].type->value, PERF_COUNTER_TEXT);
	assert_int_equal(u->provider_type, PERF_PROVIDER_USER_MODE);
	assert_true(u->resource_base.set);
	assert_int_equal(u->resource_base.value, 1000);
	assert_counter(&u->sets[0].counters[0], 1, PERF_COUNTER_LARGE_RAWCOUNT_HEX,
		       PERF_ATTRIB_BY_REFERENCE | PERF_ATTRIB_NO_DISPLAYABLE |
			       PERF_ATTRIB_NO_GROUP_SEPARATOR | PERF_ATTRIB_DISPLAY_AS_REAL |
			       PERF_ATTRIB_DISPLAY_AS_HEX,
		       PERF_AGGREGATE_UNDEFINED, -1);
	manifest_free(man);
}

/* ---- one bad manifest per rule ---- */

struct bad_case {
	const char *file;
	const char *const *diag; /* expected "LINE: error: ..." lines, in order */
};

#define BAD(f, ...)                                                                                \
	{                                                                                          \
		f, (const char *const[])                                                           \
		{                                                                                  \
			__VA_ARGS__, NULL                                                          \
		}                                                                                  \
	}

static const struct bad_case bad_cases[] = {
	BAD("bad_missing_attr.man",
	    "13: error: missing required attribute detailLevel on <counter>"),
	BAD("bad_guid.man",
	    "8: error: invalid GUID '11111111-2222-3333-4444-555555555555' in providerGuid on "
	    "<provider> (expected {xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx})"),
	BAD("bad_dup_id.man", "13: error: duplicate counter id '1' (first at line 11)"),
	BAD("bad_dup_name.man", "13: error: duplicate counter name 'One' (first at line 11)"),
	BAD("bad_dup_symbol.man",
	    "16: error: duplicate counter symbol 'TEST_ONE' (first at line 11)"),
	BAD("bad_dup_uri.man",
	    "13: error: duplicate counter uri 'Test.Set.TEST_ONE' (first at line 11)"),
	BAD("bad_dup_set_guid.man", "14: error: duplicate counterSet guid "
				    "'11111111-2222-3333-4444-666666666666' (first at line 9)"),
	BAD("bad_base_missing.man",
	    "13: error: baseID 7 of counter 1 names no counter of this counterSet"),
	BAD("bad_base_type.man", "13: error: baseID 2 of counter 1 is a perf_sample_base counter; "
				 "perf_raw_fraction needs a perf_raw_base counter"),
	BAD("bad_no_base.man", "11: error: counter 1 of type perf_average_timer needs a baseID "
			       "naming a perf_average_base counter"),
	BAD("bad_multi.man",
	    "11: error: counter 1 of type perf_100nsec_multi_timer needs a multiCounterID (a "
	    "perf_counter_rawcount counter) or a baseID (a perf_counter_multi_base counter)"),
	BAD("bad_time.man",
	    "11: error: counter 1 of type perf_obj_time_timer needs perfTimeID and perfFreqID "
	    "(perf_counter_large_rawcount counters)",
	    "13: error: perfTimeID 2 of counter 1 is a perf_counter_rawcount counter; "
	    "perf_obj_time_timer needs a perf_counter_large_rawcount counter"),
	BAD("bad_type.man", "12: error: unknown counter type 'perf_counter_rawcounter'"),
	BAD("bad_instances.man",
	    "11: error: unknown instances value 'many' (expected single, multiple, "
	    "globalAggregate, multipleAggregate, globalAggregateHistory or instanceAggregate)"),
	BAD("bad_attribute.man",
	    "15: error: unknown counterAttribute name 'bold' (expected reference, noDisplay, "
	    "noDigitGrouping, displayAsReal or displayAsHex)"),
	BAD("bad_dup_attribute.man", "15: error: duplicate counterAttribute 'noDisplay'"),
	BAD("bad_detail.man",
	    "12: error: unknown detailLevel 'expert' (expected standard or advanced)"),
	BAD("bad_aggregate.man",
	    "13: error: unknown aggregate 'total' (expected undefined, sum, avg, min or max)"),
	BAD("bad_scale.man", "13: error: defaultScale 11 is out of range -10..10"),
	BAD("bad_uint32.man", "11: error: invalid UInt32 '0x100000000' in id on <counter> (decimal "
			      "0..4294967295 or 0x and 1-8 hex digits)"),
	BAD("bad_wildcard_id.man",
	    "11: error: counter id 4294967295 is PERF_WILDCARD_COUNTER, which names every counter"),
	BAD("bad_struct.man", "12: error: empty name on <struct>",
	    "14: warning: struct 'TestValues' of counter 1 names no <struct> of this counterSet"),
	BAD("bad_symbol.man", "11: error: invalid C symbol '1st_counter' in symbol on <counter> "
			      "(expected [_a-zA-Z][_0-9a-zA-Z]*)"),
	BAD("bad_unknown_xml_attr.man", "13: error: unknown attribute defaultscale on <counter>"),
	BAD("bad_schema.man", "6: error: unsupported schemaVersion '3.0' (expected 1.1 or 2.0)"),
	BAD("bad_nameid.man", "12: error: nameID on <counter> needs schemaVersion 2.0"),
	BAD("bad_v20_missing_ids.man",
	    "9: error: missing required attribute nameID on <counterSet>",
	    "9: error: missing required attribute descriptionID on <counterSet>",
	    "11: error: missing required attribute nameID on <counter>",
	    "11: error: missing required attribute descriptionID on <counter>"),
	BAD("bad_no_counter.man", "9: error: <counterSet> needs at least one <counter>"),
	BAD("bad_string_ref.man", "11: error: name refers to string 'Counter.One.Name', which "
				  "cannot be resolved: the manifest has no stringTable"),
	BAD("bad_structs_order.man",
	    "13: error: <structs> must come once, before the first <counter>"),
	BAD("bad_element.man", "13: error: unexpected element <counterGroup> in <counterSet>"),
	BAD("bad_xml.man",
	    "13: error: Opening and ending tag mismatch: counterSet line 9 and counter"),
	BAD("bad_no_counters.man", "4: error: no <counters> section in <instrumentation>"),
	BAD("bad_counters_ns.man", "6: error: <counters> is in namespace "
				   "'http://schemas.microsoft.com/win/2004/08/events', expected "
				   "'http://schemas.microsoft.com/win/2005/12/counters'"),
};

/* a manifest file with one counter set of @nr raw counters; its <counterSet> is on line 8 */
static void write_big(const char *path, unsigned int nr)
{
	FILE *f = fopen(path, "w");
	unsigned int i;

	assert_non_null(f);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
		   "<instrumentationManifest "
		   "xmlns=\"http://schemas.microsoft.com/win/2004/08/events\">\n"
		   "<instrumentation>\n"
		   "<counters xmlns=\"http://schemas.microsoft.com/win/2005/12/counters\" "
		   "schemaVersion=\"1.1\">\n"
		   "<provider symbol=\"BigProvider\" applicationIdentity=\"big.exe\"\n"
		   " providerType=\"userMode\" "
		   "providerGuid=\"{4B1D6C3E-2F7A-4C55-9E10-8A2B3C4D5E60}\">\n"
		   "<!-- the counter set -->\n"
		   "<counterSet symbol=\"BigSet\" guid=\"{0A1B2C3D-4E5F-4061-8273-94A5B6C7D8E0}\" "
		   "uri=\"Big.Set\" name=\"Big Set\" description=\"d\" instances=\"multiple\">\n");
	for (i = 1; i <= nr; i++)
		fprintf(f,
			"<counter id=\"%u\" uri=\"Big.C%u\" name=\"C%u\" description=\"d\" "
			"type=\"perf_counter_rawcount\" detailLevel=\"standard\"/>\n",
			i, i, i);
	fprintf(f, "</counterSet>\n</provider>\n</counters>\n</instrumentation>\n"
		   "</instrumentationManifest>\n");
	assert_int_equal(fclose(f), 0);
}

/* the library's limit (PERFLIB_MAX_COUNTERS) is the manifest's: 4,096 load, 4,097 do not */
static void test_counter_limit(void **state)
{
	char path[] = "/tmp/test_manifest_big.XXXXXX", want[256], *diag;
	struct manifest *man = NULL;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_big(path, PERFLIB_MAX_COUNTERS);
	assert_int_equal(load(path, &man, &diag), 0);
	assert_non_null(man);
	assert_int_equal(man->providers[0].sets[0].nr_counters, PERFLIB_MAX_COUNTERS);
	manifest_free(man);
	free(diag);
	man = NULL;

	write_big(path, PERFLIB_MAX_COUNTERS + 1);
	assert_int_equal(load(path, &man, &diag), -EINVAL);
	assert_null(man);
	snprintf(want, sizeof(want),
		 "%s:8: error: <counterSet> has %d counters; at most %d are "
		 "allowed\n",
		 path, PERFLIB_MAX_COUNTERS + 1, PERFLIB_MAX_COUNTERS);
	assert_string_equal(diag, want);
	free(diag);
	unlink(path);
}

static void test_bad(void **state)
{
	const struct bad_case *bc = *state;
	struct manifest *man = NULL;
	char path[512], *diag, *want;
	int err;

	snprintf(path, sizeof(path), "%s/manifests/%s", data_dir(), bc->file);
	err = load(path, &man, &diag);
	want = expect_text(path, bc->diag);
	assert_string_equal(diag, want);
	assert_int_equal(err, -EINVAL);
	assert_null(man);
	/* Without a diagnostics stream the result is the same, silently. */
	assert_int_equal(manifest_load(path, &man, NULL), -EINVAL);
	assert_null(man);
	free(diag);
	free(want);
}

/* ---- other inputs ---- */

static void test_missing_file(void **state)
{
	struct manifest *man = NULL;
	char *diag;

	(void)state;
	assert_int_equal(load("tests/data/manifests/no-such.man", &man, &diag), -ENOENT);
	assert_string_equal(diag, "tests/data/manifests/no-such.man: error: cannot read: No such "
				  "file or directory\n");
	assert_null(man);
	free(diag);
	assert_int_equal(manifest_load(".", &man, NULL), -EISDIR);
	manifest_free(NULL);
}

/* Write @text to a temporary file; returns its path (static buffer). */
static const char *temp_manifest(const void *text, size_t len)
{
	static char path[] = "/tmp/test_manifest_XXXXXX";
	int fd;

	strcpy(path, "/tmp/test_manifest_XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

static const char small_manifest[] =
	"<?xml version=\"1.0\"?>\n"
	"<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\"\n"
	"    xmlns:x=\"urn:example:other\">\n"
	"  <instrumentation>\n"
	"    <counters xmlns=\"http://schemas.microsoft.com/win/2005/12/counters\"\n"
	"              schemaVersion=\"1.1\" x:note=\"foreign attributes are ignored\">\n"
	"      <provider symbol=\"P\" applicationIdentity=\"p.exe\"\n"
	"                providerGuid=\"{01234567-89AB-CDEF-0123-456789abcdef}\">\n"
	"        <x:extension>foreign elements are ignored</x:extension>\n"
	"        <counterSet symbol=\"S\" guid=\"{01234567-89AB-CDEF-0123-456789abcde0}\"\n"
	"                    uri=\"S\" name=\"S\" description=\"D\">\n"
	"          <counter id=\"7\" uri=\"S.C\" type=\"perf_counter_large_delta\"\n"
	"                   detailLevel=\"standard\" defaultScale=\"-0\"/>\n"
	"        </counterSet>\n"
	"      </provider>\n"
	"    </counters>\n"
	"  </instrumentation>\n"
	"</instrumentationManifest>\n";

/* A UTF-16LE manifest (BOM): parsed; lines then come from libxml2 itself. */
static void test_utf16(void **state)
{
	size_t i, n = strlen(small_manifest);
	char *buf = malloc(2 + 2 * n), *diag;
	struct manifest *man = NULL;
	const char *path;

	(void)state;
	assert_non_null(buf);
	buf[0] = (char)0xff;
	buf[1] = (char)0xfe;
	for (i = 0; i < n; i++) {
		buf[2 + 2 * i] = small_manifest[i];
		buf[3 + 2 * i] = 0;
	}
	path = temp_manifest(buf, 2 + 2 * n);
	assert_int_equal(load(path, &man, &diag), 0);
	assert_string_equal(diag, "");
	assert_int_equal(man->providers[0].nr_sets, 1);
	assert_int_equal(man->providers[0].sets[0].counters[0].id, 7);
	assert_int_equal(man->providers[0].sets[0].counters[0].type->value,
			 PERF_COUNTER_LARGE_DELTA);
	assert_guid(&man->providers[0].guid, "{01234567-89ab-cdef-0123-456789ABCDEF}");
	manifest_free(man);
	free(diag);
	free(buf);
	unlink(path);
}

/* The same text in UTF-8: foreign attributes and elements are skipped, lines exact. */
static void test_foreign_namespaces(void **state)
{
	struct manifest *man = NULL;
	const char *path;
	char *diag;

	(void)state;
	path = temp_manifest(small_manifest, strlen(small_manifest));
	assert_int_equal(load(path, &man, &diag), 0);
	assert_string_equal(diag, "");
	assert_int_equal(man->providers[0].line, 7);
	assert_int_equal(man->providers[0].sets[0].counters[0].line, 12);
	assert_int_equal(man->providers[0].sets[0].counters[0].default_scale, 0);
	manifest_free(man);
	free(diag);
	unlink(path);
}

/* ---- tables ---- */

static void test_counter_types(void **state)
{
	static const char *const names[] = {
		"perf_counter_counter",
		"perf_counter_timer",
		"perf_counter_queuelen_type",
		"perf_counter_large_queuelen_type",
		"perf_counter_100ns_queuelen_type",
		"perf_counter_obj_time_queuelen_type",
		"perf_counter_bulk_count",
		"perf_counter_text",
		"perf_counter_rawcount",
		"perf_counter_large_rawcount",
		"perf_counter_rawcount_hex",
		"perf_counter_large_rawcount_hex",
		"perf_sample_fraction",
		"perf_sample_counter",
		"perf_counter_timer_inv",
		"perf_sample_base",
		"perf_average_timer",
		"perf_average_base",
		"perf_average_bulk",
		"perf_obj_time_timer",
		"perf_100nsec_timer",
		"perf_100nsec_timer_inv",
		"perf_counter_multi_timer",
		"perf_counter_multi_timer_inv",
		"perf_counter_multi_base",
		"perf_100nsec_multi_timer",
		"perf_100nsec_multi_timer_inv",
		"perf_raw_fraction",
		"perf_large_raw_fraction",
		"perf_raw_base",
		"perf_large_raw_base",
		"perf_elapsed_time",
		"perf_counter_delta",
		"perf_counter_large_delta",
		"perf_precision_system_timer",
		"perf_precision_100ns_timer",
		"perf_precision_object_timer",
	};
	const struct ctrtype *t;
	size_t i;

	(void)state;
	assert_int_equal(ARRAY_SIZE(names), 37);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		t = ctrtype_by_name(names[i]);
		assert_non_null(t);
		assert_string_equal(t->name, names[i]);
		assert_ptr_equal(ctrtype_find(t->value), t);
	}
	/* Decimal values of tools.md 5.2. */
	t = ctrtype_by_name("perf_counter_timer");
	assert_string_equal(t->macro, "PERF_COUNTER_TIMER");
	assert_int_equal(t->value, 541132032);
	assert_int_equal(ctrtype_by_name("perf_100nsec_multi_timer_inv")->value, 592512256);
	assert_int_equal(ctrtype_by_name("perf_counter_rawcount_hex")->value, 0);
	assert_int_equal(ctrtype_by_name("perf_large_raw_base")->value, 1073939712);
	assert_string_equal(ctrtype_find(0x40030503)->name, "perf_large_raw_base");
	assert_null(ctrtype_by_name("perf_counter_composite"));
	assert_null(ctrtype_by_name("PERF_COUNTER_COUNTER"));
	assert_null(ctrtype_by_name(NULL));
	assert_null(ctrtype_find(PERF_COUNTER_NODATA));
	assert_int_equal(ctrtype_size(PERF_COUNTER_RAWCOUNT), 4);
	assert_int_equal(ctrtype_size(PERF_COUNTER_BULK_COUNT), 8);
	assert_int_equal(ctrtype_size(PERF_COUNTER_TEXT), 0);
	assert_int_equal(ctrtype_size(PERF_COUNTER_NODATA), 0);
}

static void test_enums(void **state)
{
	static const struct {
		const char *name;
		uint32_t value;
	} instances[] = {
		{"single", 0x0},
		{"multiple", 0x2},
		{"globalAggregate", 0x4},
		{"multipleAggregate", 0x6},
		{"globalAggregateHistory", 0xc},
		{"instanceAggregate", 0x16},
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(instances); i++) {
		assert_int_equal(manifest_instances_by_name(instances[i].name)->value,
				 instances[i].value);
		assert_string_equal(manifest_instances_by_value(instances[i].value)->name,
				    instances[i].name);
	}
	assert_string_equal(manifest_instances_by_value(6)->macro,
			    "PERF_COUNTERSET_MULTI_AGGREGATE");
	assert_null(manifest_instances_by_name("Single"));
	assert_null(manifest_instances_by_value(1));
	assert_int_equal(manifest_aggregate_by_name("undefined")->value, 0);
	assert_int_equal(manifest_aggregate_by_name("sum")->value, 1);
	assert_int_equal(manifest_aggregate_by_name("avg")->value, 2);
	assert_int_equal(manifest_aggregate_by_name("min")->value, 3);
	assert_int_equal(manifest_aggregate_by_name("max")->value, 4);
	assert_string_equal(manifest_aggregate_by_value(1)->macro, "PERF_AGGREGATE_TOTAL");
	assert_null(manifest_aggregate_by_name("total"));
	assert_int_equal(manifest_detail_by_name("standard")->value, 100);
	assert_int_equal(manifest_detail_by_name("advanced")->value, 200);
	assert_string_equal(manifest_detail_by_value(200)->macro, "PERF_DETAIL_ADVANCED");
	assert_null(manifest_detail_by_value(300));
	assert_int_equal(manifest_attribute_by_name("reference")->value, 0x1);
	assert_int_equal(manifest_attribute_by_name("noDisplay")->value, 0x2);
	assert_int_equal(manifest_attribute_by_name("noDigitGrouping")->value, 0x4);
	assert_int_equal(manifest_attribute_by_name("displayAsReal")->value, 0x8);
	assert_int_equal(manifest_attribute_by_name("displayAsHex")->value, 0x10);
	assert_string_equal(manifest_attribute_by_value(0x10)->macro, "PERF_ATTRIB_DISPLAY_AS_HEX");
	assert_null(manifest_attribute_by_name("nodisplay"));
}

static void test_guid_and_symbol(void **state)
{
	static const char *const bad[] = {
		"5b2fc63a-8af4-44cb-960c-aefdced908d6",	   /* no braces */
		"{5b2fc63a-8af4-44cb-960c-aefdced908d}",   /* short */
		"{5b2fc63a-8af4-44cb-960c-aefdced908d6 }", /* long */
		"{5b2fc63a-8af4-44cb-960c_aefdced908d6}",  /* separator */
		"{5b2fc63g-8af4-44cb-960c-aefdced908d6}",  /* not hex */
		"{5b2fc63a8-af4-44cb-960c-aefdced908d6}",  /* dash moved */
		"",
	};
	GUID g = {0}, before;
	size_t i;

	(void)state;
	assert_int_equal(manifest_parse_guid("{5B2FC63A-8af4-44CB-960c-AEFDCED908D6}", &g), 0);
	assert_int_equal(g.Data1, 0x5b2fc63a);
	assert_int_equal(g.Data2, 0x8af4);
	assert_int_equal(g.Data3, 0x44cb);
	assert_memory_equal(g.Data4, "\x96\x0c\xae\xfd\xce\xd9\x08\xd6", 8);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		before = g;
		assert_int_equal(manifest_parse_guid(bad[i], &g), -EINVAL);
		assert_memory_equal(&g, &before, sizeof(g)); /* untouched on failure */
	}
	assert_int_equal(manifest_parse_guid(NULL, &g), -EINVAL);

	assert_true(manifest_is_csymbol("_a1"));
	assert_true(manifest_is_csymbol("QueueLength"));
	assert_false(manifest_is_csymbol(""));
	assert_false(manifest_is_csymbol("1a"));
	assert_false(manifest_is_csymbol("a-b"));
	assert_false(manifest_is_csymbol("a b"));
	assert_false(manifest_is_csymbol(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vista_sample),
		cmocka_unit_test(test_kcs),
		cmocka_unit_test(test_hpx),
		cmocka_unit_test(test_corefx),
		cmocka_unit_test(test_gas),
		cmocka_unit_test(test_ucs),
		cmocka_unit_test(test_ktl_logger),
		cmocka_unit_test(test_kperfcounter),
		cmocka_unit_test(test_node),
		cmocka_unit_test(test_zfsin),
		cmocka_unit_test(test_demo),
		cmocka_unit_test(test_v20),
		cmocka_unit_test(test_two_providers),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_utf16),
		cmocka_unit_test(test_counter_limit),
		cmocka_unit_test(test_foreign_namespaces),
		cmocka_unit_test(test_counter_types),
		cmocka_unit_test(test_enums),
		cmocka_unit_test(test_guid_and_symbol),
	};
	struct CMUnitTest bad[ARRAY_SIZE(bad_cases)];
	size_t i;
	int failed;

	/* One named test per bad manifest, so a failure names its file. */
	for (i = 0; i < ARRAY_SIZE(bad_cases); i++)
		bad[i] = (struct CMUnitTest){
			.name = bad_cases[i].file,
			.test_func = test_bad,
			.initial_state = (void *)&bad_cases[i],
		};
	failed = cmocka_run_group_tests_name("manifest", tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("bad manifests", bad, NULL, NULL);
	return failed ? 1 : 0;
}
