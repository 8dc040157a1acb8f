// SPDX-License-Identifier: MIT
/*
 * test_exporter_format.c - perflib-exporter's pure part (tools/perflib-exporter/exp_format.c):
 * metric-name derivation, escaping, counter-type mapping, Accept negotiation, number
 * formatting, instance naming and whole renderings in both exposition formats.
 * No BPF needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exp_format.h"

/* ---- helpers ------------------------------------------------------------------------ */

struct ctr_def {
	uint32_t id, type;
	uint64_t attrib;
	uint32_t base_id;
	const char *name, *help;
};

static struct exp_set *mkset(uint32_t guid1, const char *name, uint32_t itype,
			     const struct ctr_def *defs, size_t n)
{
	struct exp_set *set = calloc(1, sizeof(*set));
	size_t i;

	assert_non_null(set);
	set->guid.Data1 = guid1;
	set->guid.Data2 = 0x1234;
	set->name = name ? strdup(name) : NULL;
	set->instance_type = itype;
	set->counters = calloc(n, sizeof(*set->counters));
	set->nr_counters = n;
	for (i = 0; i < n; i++) {
		struct exp_counter *c = &set->counters[i];

		c->id = defs[i].id;
		c->type = defs[i].type;
		c->attrib = defs[i].attrib;
		c->base_id = defs[i].base_id ? defs[i].base_id : PERFLIB_NO_ID;
		c->time_id = c->freq_id = c->multi_id = PERFLIB_NO_ID;
		c->name = defs[i].name ? strdup(defs[i].name) : NULL;
		c->help = defs[i].help ? strdup(defs[i].help) : NULL;
	}
	return set;
}

/* add an instance numbered @dup among its name's repeats, with values for the first nr counters */
static void add_dup(struct exp_set *set, uint32_t id, const char *name, unsigned int dup,
		    const uint64_t *values, size_t nr)
{
	size_t i, c;

	assert_int_equal(exp_set_add_instance(set, id, name, dup, &i), 0);
	for (c = 0; c < nr; c++)
		exp_set_value(set, i, c, values[c]);
}

/* add the first instance of a name */
static void add(struct exp_set *set, uint32_t id, const char *name, const uint64_t *values,
		size_t nr)
{
	add_dup(set, id, name, 0, values, nr);
}

static char *render(struct exp_set **sets, size_t n, int64_t freq, enum exp_format fmt)
{
	struct exp_buf b = {0};

	exp_render(sets, n, freq, fmt, &b);
	assert_int_equal(b.err, 0);
	return b.data;
}

static void check_name(const char *in, const char *want)
{
	char *got = exp_name_part(in);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

/* ---- names ------------------------------------------------------------------------- */

static void test_name_part(void **state)
{
	(void)state;
	check_name("Requests/sec", "requests_sec");
	check_name("% Processor Time", "processor_time");
	check_name("%Time in GC", "time_in_gc");
	check_name("Avg. Disk sec/Read", "avg_disk_sec_read");
	check_name("TestMultiInstanceObject", "test_multi_instance_object");
	check_name("HTTPServer requests", "http_server_requests");
	check_name("ZFSinPerfValues", "zf_sin_perf_values");
	check_name("Node.js", "node_js");
	check_name("abc123Def", "abc123_def");
	check_name("IPv4 Datagrams", "i_pv4_datagrams");
	check_name("__A--b__", "a_b");
	check_name("  leading and trailing  ", "leading_and_trailing");
	check_name("Gr\xc3\xb6\xc3\x9f"
		   "e",
		   "gr_e");
	check_name("%", "");
	check_name("", "");
	check_name(NULL, "");
}

/* ---- type mapping ------------------------------------------------------------------- */

static void check_type(uint32_t type, enum exp_kind kind, enum exp_timebase tb)
{
	struct exp_type_info ti;

	exp_type_map(type, &ti);
	if (ti.kind != kind || ti.timebase != tb)
		fail_msg("type 0x%08x: kind %d timebase %d, want %d %d", type, ti.kind, ti.timebase,
			 kind, tb);
}

static void test_type_map(void **state)
{
	struct exp_type_info ti;

	(void)state;
	check_type(PERF_COUNTER_COUNTER, EXP_COUNTER, EXP_TB_NONE);
	check_type(PERF_COUNTER_BULK_COUNT, EXP_COUNTER, EXP_TB_NONE);
	check_type(PERF_SAMPLE_COUNTER, EXP_COUNTER, EXP_TB_NONE);
	check_type(PERF_COUNTER_DELTA, EXP_COUNTER, EXP_TB_NONE);
	check_type(PERF_COUNTER_LARGE_DELTA, EXP_COUNTER, EXP_TB_NONE);
	check_type(PERF_COUNTER_RAWCOUNT, EXP_GAUGE, EXP_TB_NONE);
	check_type(PERF_COUNTER_LARGE_RAWCOUNT, EXP_GAUGE, EXP_TB_NONE);
	check_type(PERF_COUNTER_RAWCOUNT_HEX, EXP_GAUGE, EXP_TB_NONE);
	check_type(PERF_COUNTER_LARGE_RAWCOUNT_HEX, EXP_GAUGE, EXP_TB_NONE);
	check_type(PERF_COUNTER_TIMER, EXP_TIMER, EXP_TB_TICK);
	check_type(PERF_COUNTER_TIMER_INV, EXP_TIMER, EXP_TB_TICK);
	check_type(PERF_100NSEC_TIMER, EXP_TIMER, EXP_TB_100NS);
	check_type(PERF_100NSEC_TIMER_INV, EXP_TIMER, EXP_TB_100NS);
	check_type(PERF_OBJ_TIME_TIMER, EXP_TIMER, EXP_TB_OBJECT);
	check_type(PERF_COUNTER_MULTI_TIMER, EXP_TIMER, EXP_TB_TICK);
	check_type(PERF_COUNTER_MULTI_TIMER_INV, EXP_TIMER, EXP_TB_TICK);
	check_type(PERF_100NSEC_MULTI_TIMER, EXP_TIMER, EXP_TB_100NS);
	check_type(PERF_100NSEC_MULTI_TIMER_INV, EXP_TIMER, EXP_TB_100NS);
	check_type(PERF_PRECISION_SYSTEM_TIMER, EXP_TIMER, EXP_TB_TICK);
	check_type(PERF_PRECISION_100NS_TIMER, EXP_TIMER, EXP_TB_100NS);
	check_type(PERF_PRECISION_OBJECT_TIMER, EXP_TIMER, EXP_TB_OBJECT);
	check_type(PERF_COUNTER_QUEUELEN_TYPE, EXP_QUEUELEN, EXP_TB_TICK);
	check_type(PERF_COUNTER_LARGE_QUEUELEN_TYPE, EXP_QUEUELEN, EXP_TB_TICK);
	check_type(PERF_COUNTER_100NS_QUEUELEN_TYPE, EXP_QUEUELEN, EXP_TB_100NS);
	check_type(PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, EXP_QUEUELEN, EXP_TB_OBJECT);
	check_type(PERF_ELAPSED_TIME, EXP_ELAPSED, EXP_TB_OBJECT);
	check_type(PERF_AVERAGE_TIMER, EXP_AVERAGE, EXP_TB_TICK);
	check_type(PERF_AVERAGE_BULK, EXP_AVERAGE, EXP_TB_NONE);
	check_type(PERF_RAW_FRACTION, EXP_RAW_FRACTION, EXP_TB_NONE);
	check_type(PERF_LARGE_RAW_FRACTION, EXP_RAW_FRACTION, EXP_TB_NONE);
	check_type(PERF_SAMPLE_FRACTION, EXP_SAMPLE_FRACTION, EXP_TB_NONE);
	check_type(PERF_SAMPLE_BASE, EXP_BASE, EXP_TB_NONE);
	check_type(PERF_AVERAGE_BASE, EXP_BASE, EXP_TB_NONE);
	check_type(PERF_RAW_BASE, EXP_BASE, EXP_TB_NONE);
	check_type(PERF_LARGE_RAW_BASE, EXP_BASE, EXP_TB_NONE);
	check_type(0x40030503, EXP_BASE, EXP_TB_NONE); /* WMI's PERF_LARGE_RAW_BASE */
	check_type(PERF_COUNTER_MULTI_BASE, EXP_BASE, EXP_TB_NONE);
	check_type(PERF_COUNTER_TEXT, EXP_SKIP, EXP_TB_NONE);
	check_type(PERF_COUNTER_NODATA, EXP_SKIP, EXP_TB_NONE);
	check_type(PERF_COUNTER_HISTOGRAM_TYPE, EXP_SKIP, EXP_TB_NONE);
	/* not winperf.h constants: decided by the bit fields */
	check_type(PERF_SIZE_LARGE | PERF_TYPE_NUMBER | PERF_NUMBER_DEC_1000, EXP_GAUGE,
		   EXP_TB_NONE);
	check_type(PERF_SIZE_DWORD | PERF_TYPE_COUNTER | PERF_COUNTER_BASE | 7, EXP_BASE,
		   EXP_TB_NONE);
	check_type(PERF_SIZE_LARGE | PERF_TYPE_COUNTER | PERF_DELTA_COUNTER, EXP_COUNTER,
		   EXP_TB_NONE);
	check_type(PERF_SIZE_VARIABLE_LEN | PERF_TYPE_TEXT | PERF_TEXT_ASCII, EXP_SKIP,
		   EXP_TB_NONE);

	exp_type_map(PERF_100NSEC_TIMER_INV, &ti);
	assert_true(ti.inverse);
	assert_false(ti.multi);
	exp_type_map(PERF_100NSEC_MULTI_TIMER, &ti);
	assert_true(ti.multi);
	assert_false(ti.inverse);
	exp_type_map(PERF_PRECISION_100NS_TIMER, &ti);
	assert_true(ti.precision);
	exp_type_map(PERF_100NSEC_TIMER, &ti);
	assert_false(ti.inverse || ti.multi || ti.precision);
}

/* ---- escaping ------------------------------------------------------------------------ */

static void test_escape(void **state)
{
	struct exp_buf b = {0};

	(void)state;
	exp_escape_label(&b, "a\\b\"c\nd\te");
	assert_string_equal(b.data, "a\\\\b\\\"c\\nd\te");
	b.len = 0;
	exp_escape_label(&b, "");
	assert_int_equal(b.len, 0);
	exp_escape_help(&b, "say \"hi\"\\\nbye", EXP_FMT_PROMETHEUS);
	assert_string_equal(b.data, "say \"hi\"\\\\\\nbye");
	b.len = 0;
	exp_escape_help(&b, "say \"hi\"\\\nbye", EXP_FMT_OPENMETRICS);
	assert_string_equal(b.data, "say \\\"hi\\\"\\\\\\nbye");
	b.len = 0;
	/* UTF-8 passes through untouched */
	exp_escape_label(&b, "caf\xc3\xa9 \xe2\x82\xac");
	assert_string_equal(b.data, "caf\xc3\xa9 \xe2\x82\xac");
	exp_buf_free(&b);
}

/* ---- negotiation ------------------------------------------------------------------- */

static void test_negotiate(void **state)
{
	(void)state;
	assert_int_equal(exp_negotiate(NULL), EXP_FMT_PROMETHEUS);
	assert_int_equal(exp_negotiate(""), EXP_FMT_PROMETHEUS);
	assert_int_equal(exp_negotiate("*/*"), EXP_FMT_PROMETHEUS);
	assert_int_equal(exp_negotiate("text/plain"), EXP_FMT_PROMETHEUS);
	assert_int_equal(exp_negotiate("application/openmetrics-text"), EXP_FMT_OPENMETRICS);
	assert_int_equal(exp_negotiate("Application/OpenMetrics-Text; Version=1.0.0"),
			 EXP_FMT_OPENMETRICS);
	/* what Prometheus 2.x sends */
	assert_int_equal(exp_negotiate("application/openmetrics-text;version=1.0.0,"
				       "application/openmetrics-text;version=0.0.1;q=0.75,"
				       "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
			 EXP_FMT_OPENMETRICS);
	assert_int_equal(exp_negotiate("application/openmetrics-text; version=0.0.1; q=0.75, "
				       "text/plain; version=0.0.4; q=0.5"),
			 EXP_FMT_OPENMETRICS);
	assert_int_equal(exp_negotiate("application/openmetrics-text;version=2.0.0"),
			 EXP_FMT_PROMETHEUS);
	assert_int_equal(exp_negotiate("application/openmetrics-text;q=0, */*"),
			 EXP_FMT_PROMETHEUS);
	assert_int_equal(exp_negotiate("text/plain;q=1, application/openmetrics-text;q=0.5"),
			 EXP_FMT_PROMETHEUS);
	assert_int_equal(exp_negotiate("text/*;q=0.2, application/openmetrics-text;q=0.5"),
			 EXP_FMT_OPENMETRICS);
	assert_int_equal(exp_negotiate("application/json"), EXP_FMT_PROMETHEUS);
	assert_string_equal(exp_content_type(EXP_FMT_OPENMETRICS),
			    "application/openmetrics-text; version=1.0.0; charset=utf-8");
	assert_string_equal(exp_content_type(EXP_FMT_PROMETHEUS),
			    "text/plain; version=0.0.4; charset=utf-8");
}

/* ---- numbers ------------------------------------------------------------------------ */

static void check_ratio(uint64_t num, uint64_t den, const char *want)
{
	struct exp_buf b = {0};

	exp_buf_ratio(&b, num, den);
	assert_string_equal(b.data, want);
	exp_buf_free(&b);
}

static void test_numbers(void **state)
{
	struct exp_buf b = {0};

	(void)state;
	exp_buf_u64(&b, 0);
	exp_buf_putc(&b, ' ');
	exp_buf_u64(&b, UINT64_MAX);
	assert_string_equal(b.data, "0 18446744073709551615");
	exp_buf_free(&b);
	check_ratio(12345678, 10000000, "1.2345678");
	check_ratio(20000000, 10000000, "2");
	check_ratio(0, 10000000, "0");
	check_ratio(5, 1000000000, "0.000000005");
	check_ratio(UINT64_MAX, 1, "18446744073709551615");
	check_ratio(3, 2, "1.5");
	check_ratio(1, 3, "0.33333333333333331");
	check_ratio(1, 4, "0.25");
	check_ratio(7, 0, "NaN");
}

/* ---- instances ------------------------------------------------------------------------ */

static void test_instances(void **state)
{
	static const struct ctr_def defs[] = {
		{1, PERF_COUNTER_RAWCOUNT, 0, 0, "Items", NULL},
	};
	struct exp_set *set = mkset(1, "Dup", PERF_COUNTERSET_MULTI_INSTANCES, defs, 1);
	static const char *const names[] = {"b", "a", "a#1", "a", "a", ""};
	static const unsigned int dups[] = {0, 0, 0, 1, 2, 0}; /* PDH's numbering of them */
	static const char *const want[] = {
		"{perf_instance=\"\"}",	   "{perf_instance=\"a\"}", "{perf_instance=\"a#1\"}",
		"{perf_instance=\"a#2\"}", "{perf_instance=\"b\"}",
	};
	uint64_t v = 1;
	size_t i;

	(void)state;
	/* PDH numbered the repeats in enumeration order: "a" (9), "a#1" (7), "a#2" (6); the
	 * real "a#1" (8) then repeats the renamed one and, having the higher id, is dropped */
	for (i = 0; i < 6; i++)
		add_dup(set, (uint32_t)(10 - i), names[i], dups[i], &v, 1);
	assert_int_equal(exp_set_finish(set), 0);
	assert_int_equal(set->nr_instances, 5);
	assert_int_equal(set->nr_dropped, 1);
	for (i = 0; i < 5 && i < set->nr_instances; i++)
		assert_string_equal(set->strings.data + set->instances[i].label, want[i]);

	/*
	 * the labels carry PDH's numbers, not the order of ids or a case-sensitive one: the
	 * first enumerated keeps the name (id 5 before id 3), "Worker" repeats "worker"
	 * (test_pdh_names tests the numbering; test_exporter.sh the two together)
	 */
	exp_set_reset(set);
	add_dup(set, 5, "a", 0, &v, 1);
	add_dup(set, 3, "a", 1, &v, 1);
	add_dup(set, 1, "worker", 0, &v, 1);
	add_dup(set, 2, "Worker", 1, &v, 1);
	assert_int_equal(exp_set_finish(set), 0);
	assert_int_equal(set->nr_instances, 4);
	for (i = 0; i < 4; i++) {
		const char *label = set->strings.data + set->instances[i].label;

		switch (set->instances[i].id) {
		case 5:
			assert_string_equal(label, "{perf_instance=\"a\"}");
			break;
		case 3:
			assert_string_equal(label, "{perf_instance=\"a#1\"}");
			break;
		case 1:
			assert_string_equal(label, "{perf_instance=\"worker\"}");
			break;
		default:
			assert_string_equal(label, "{perf_instance=\"Worker#1\"}");
			break;
		}
	}

	/* a new collection starts empty */
	exp_set_reset(set);
	add(set, 1, "x\"y", &v, 1);
	assert_int_equal(exp_set_finish(set), 0);
	assert_int_equal(set->nr_instances, 1);
	assert_string_equal(set->strings.data + set->instances[0].label,
			    "{perf_instance=\"x\\\"y\"}");
	exp_set_free(set);

	/* single-instance sets have no label and at most one instance */
	set = mkset(2, "One", PERF_COUNTERSET_SINGLE_INSTANCE, defs, 1);
	add(set, 5, NULL, &v, 1);
	add(set, 3, NULL, &v, 1);
	assert_int_equal(exp_set_finish(set), 0);
	assert_int_equal(set->nr_instances, 1);
	assert_int_equal(set->instances[0].id, 3);
	assert_string_equal(set->strings.data + set->instances[0].label, "");
	exp_set_free(set);
	exp_set_free(NULL);
}

/* ---- whole renderings ------------------------------------------------------------- */

static const struct ctr_def demo_defs[] = {
	{1, PERF_COUNTER_COUNTER, 0, 0, "Requests/sec", "Requests served."},
	{2, PERF_COUNTER_RAWCOUNT, 0, 0, "Queue Length", "Requests \"waiting\"\\now."},
	{3, PERF_100NSEC_TIMER, 0, 0, "Busy Time", "Time spent busy."},
	{4, PERF_AVERAGE_TIMER, 0, 5, "Avg. Latency", "Latency per request."},
	{5, PERF_AVERAGE_BASE, PERF_ATTRIB_NO_DISPLAYABLE, 0, "Latency Base", NULL},
	{6, PERF_RAW_FRACTION, 0, 7, "Hit Ratio", "Cache hits\nper lookup."},
	{7, PERF_RAW_BASE, PERF_ATTRIB_NO_DISPLAYABLE, 0, "Lookups", "Cache lookups."},
	{8, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_NO_DISPLAYABLE, 0, "Hidden", NULL},
	{9, PERF_COUNTER_BULK_COUNT, 0, 0, "Requests per second", NULL},
	{10, PERF_100NSEC_TIMER_INV, 0, 0, "% Idle Time", "Idle."},
	{11, PERF_SAMPLE_FRACTION, 0, 0, "Sampled Busy", "Busy samples."},
	{12, PERF_SAMPLE_BASE, 0, 0, "Samples", NULL},
	{13, PERF_COUNTER_TEXT, 0, 0, "Label", NULL},
	{14, PERF_AVERAGE_BULK, 0, 5, "Bytes per Request", NULL},
};

static const char want_prometheus[] =
	"# HELP perflib_counterset_instances Instances of each perflib counter set.\n"
	"# TYPE perflib_counterset_instances gauge\n"
	"perflib_counterset_instances{counterset=\"Demo "
	"Set\",guid=\"00000001-1234-0000-0000-000000000000\"} 2\n"
	"perflib_counterset_instances{counterset=\"Empty\",guid=\"00000003-1234-0000-0000-"
	"000000000000\"} 0\n"
	"perflib_counterset_instances{counterset=\"Single\",guid=\"00000002-1234-0000-0000-"
	"000000000000\"} 1\n"
	"# HELP perflib_demo_set_requests_total Requests served.\n"
	"# TYPE perflib_demo_set_requests_total counter\n"
	"perflib_demo_set_requests_total{perf_instance=\"a\\\"q\\\\\"} 10\n"
	"perflib_demo_set_requests_total{perf_instance=\"b\"} 1\n"
	"# HELP perflib_demo_set_queue_length Requests \"waiting\"\\\\now.\n"
	"# TYPE perflib_demo_set_queue_length gauge\n"
	"perflib_demo_set_queue_length{perf_instance=\"a\\\"q\\\\\"} 20\n"
	"perflib_demo_set_queue_length{perf_instance=\"b\"} 2\n"
	"# HELP perflib_demo_set_busy_time_seconds_total Time spent busy.\n"
	"# TYPE perflib_demo_set_busy_time_seconds_total counter\n"
	"perflib_demo_set_busy_time_seconds_total{perf_instance=\"a\\\"q\\\\\"} 1.2345678\n"
	"perflib_demo_set_busy_time_seconds_total{perf_instance=\"b\"} 0.0000003\n"
	"# HELP perflib_demo_set_avg_latency_seconds Latency per request.\n"
	"# TYPE perflib_demo_set_avg_latency_seconds summary\n"
	"perflib_demo_set_avg_latency_seconds_sum{perf_instance=\"a\\\"q\\\\\"} 3\n"
	"perflib_demo_set_avg_latency_seconds_count{perf_instance=\"a\\\"q\\\\\"} 50\n"
	"perflib_demo_set_avg_latency_seconds_sum{perf_instance=\"b\"} 0.000000004\n"
	"perflib_demo_set_avg_latency_seconds_count{perf_instance=\"b\"} 5\n"
	"# HELP perflib_demo_set_hit_ratio Cache hits\\nper lookup.\n"
	"# TYPE perflib_demo_set_hit_ratio gauge\n"
	"perflib_demo_set_hit_ratio{perf_instance=\"a\\\"q\\\\\"} 60\n"
	"perflib_demo_set_hit_ratio{perf_instance=\"b\"} 6\n"
	"# HELP perflib_demo_set_hit_ratio_base Base of perflib_demo_set_hit_ratio: Cache "
	"lookups.\n"
	"# TYPE perflib_demo_set_hit_ratio_base gauge\n"
	"perflib_demo_set_hit_ratio_base{perf_instance=\"a\\\"q\\\\\"} 70\n"
	"perflib_demo_set_hit_ratio_base{perf_instance=\"b\"} 7\n"
	"# HELP perflib_demo_set_requests_9_total Requests per second\n"
	"# TYPE perflib_demo_set_requests_9_total counter\n"
	"perflib_demo_set_requests_9_total{perf_instance=\"a\\\"q\\\\\"} 90\n"
	"perflib_demo_set_requests_9_total{perf_instance=\"b\"} 9\n"
	"# HELP perflib_demo_set_idle_time_seconds_total Idle. (inverse timer: counts the time the "
	"resource was not busy)\n"
	"# TYPE perflib_demo_set_idle_time_seconds_total counter\n"
	"perflib_demo_set_idle_time_seconds_total{perf_instance=\"a\\\"q\\\\\"} 0.00001\n"
	"perflib_demo_set_idle_time_seconds_total{perf_instance=\"b\"} 0.000001\n"
	"# HELP perflib_demo_set_sampled_busy_total Busy samples.\n"
	"# TYPE perflib_demo_set_sampled_busy_total counter\n"
	"perflib_demo_set_sampled_busy_total{perf_instance=\"a\\\"q\\\\\"} 110\n"
	"perflib_demo_set_sampled_busy_total{perf_instance=\"b\"} 11\n"
	"# HELP perflib_demo_set_sampled_busy_base_total Base of perflib_demo_set_sampled_busy: "
	"Samples\n"
	"# TYPE perflib_demo_set_sampled_busy_base_total counter\n"
	"perflib_demo_set_sampled_busy_base_total{perf_instance=\"a\\\"q\\\\\"} 120\n"
	"perflib_demo_set_sampled_busy_base_total{perf_instance=\"b\"} 12\n"
	"# HELP perflib_demo_set_bytes_per_request Bytes per Request\n"
	"# TYPE perflib_demo_set_bytes_per_request summary\n"
	"perflib_demo_set_bytes_per_request_sum{perf_instance=\"a\\\"q\\\\\"} 140\n"
	"perflib_demo_set_bytes_per_request_count{perf_instance=\"a\\\"q\\\\\"} 50\n"
	"perflib_demo_set_bytes_per_request_sum{perf_instance=\"b\"} 14\n"
	"perflib_demo_set_bytes_per_request_count{perf_instance=\"b\"} 5\n"
	"# HELP perflib_single_items Items\n"
	"# TYPE perflib_single_items gauge\n"
	"perflib_single_items 42\n";

static const char want_openmetrics[] =
	"# HELP perflib_counterset_instances Instances of each perflib counter set.\n"
	"# TYPE perflib_counterset_instances gauge\n"
	"perflib_counterset_instances{counterset=\"Demo "
	"Set\",guid=\"00000001-1234-0000-0000-000000000000\"} 2\n"
	"perflib_counterset_instances{counterset=\"Empty\",guid=\"00000003-1234-0000-0000-"
	"000000000000\"} 0\n"
	"perflib_counterset_instances{counterset=\"Single\",guid=\"00000002-1234-0000-0000-"
	"000000000000\"} 1\n"
	"# HELP perflib_demo_set_requests Requests served.\n"
	"# TYPE perflib_demo_set_requests counter\n"
	"perflib_demo_set_requests_total{perf_instance=\"a\\\"q\\\\\"} 10\n"
	"perflib_demo_set_requests_total{perf_instance=\"b\"} 1\n"
	"# HELP perflib_demo_set_queue_length Requests \\\"waiting\\\"\\\\now.\n"
	"# TYPE perflib_demo_set_queue_length gauge\n"
	"perflib_demo_set_queue_length{perf_instance=\"a\\\"q\\\\\"} 20\n"
	"perflib_demo_set_queue_length{perf_instance=\"b\"} 2\n"
	"# HELP perflib_demo_set_busy_time_seconds Time spent busy.\n"
	"# TYPE perflib_demo_set_busy_time_seconds counter\n"
	"# UNIT perflib_demo_set_busy_time_seconds seconds\n"
	"perflib_demo_set_busy_time_seconds_total{perf_instance=\"a\\\"q\\\\\"} 1.2345678\n"
	"perflib_demo_set_busy_time_seconds_total{perf_instance=\"b\"} 0.0000003\n"
	"# HELP perflib_demo_set_avg_latency_seconds Latency per request.\n"
	"# TYPE perflib_demo_set_avg_latency_seconds summary\n"
	"# UNIT perflib_demo_set_avg_latency_seconds seconds\n"
	"perflib_demo_set_avg_latency_seconds_sum{perf_instance=\"a\\\"q\\\\\"} 3\n"
	"perflib_demo_set_avg_latency_seconds_count{perf_instance=\"a\\\"q\\\\\"} 50\n"
	"perflib_demo_set_avg_latency_seconds_sum{perf_instance=\"b\"} 0.000000004\n"
	"perflib_demo_set_avg_latency_seconds_count{perf_instance=\"b\"} 5\n"
	"# HELP perflib_demo_set_hit_ratio Cache hits\\nper lookup.\n"
	"# TYPE perflib_demo_set_hit_ratio gauge\n"
	"perflib_demo_set_hit_ratio{perf_instance=\"a\\\"q\\\\\"} 60\n"
	"perflib_demo_set_hit_ratio{perf_instance=\"b\"} 6\n"
	"# HELP perflib_demo_set_hit_ratio_base Base of perflib_demo_set_hit_ratio: Cache "
	"lookups.\n"
	"# TYPE perflib_demo_set_hit_ratio_base gauge\n"
	"perflib_demo_set_hit_ratio_base{perf_instance=\"a\\\"q\\\\\"} 70\n"
	"perflib_demo_set_hit_ratio_base{perf_instance=\"b\"} 7\n"
	"# HELP perflib_demo_set_requests_9 Requests per second\n"
	"# TYPE perflib_demo_set_requests_9 counter\n"
	"perflib_demo_set_requests_9_total{perf_instance=\"a\\\"q\\\\\"} 90\n"
	"perflib_demo_set_requests_9_total{perf_instance=\"b\"} 9\n"
	"# HELP perflib_demo_set_idle_time_seconds Idle. (inverse timer: counts the time the "
	"resource was not busy)\n"
	"# TYPE perflib_demo_set_idle_time_seconds counter\n"
	"# UNIT perflib_demo_set_idle_time_seconds seconds\n"
	"perflib_demo_set_idle_time_seconds_total{perf_instance=\"a\\\"q\\\\\"} 0.00001\n"
	"perflib_demo_set_idle_time_seconds_total{perf_instance=\"b\"} 0.000001\n"
	"# HELP perflib_demo_set_sampled_busy Busy samples.\n"
	"# TYPE perflib_demo_set_sampled_busy counter\n"
	"perflib_demo_set_sampled_busy_total{perf_instance=\"a\\\"q\\\\\"} 110\n"
	"perflib_demo_set_sampled_busy_total{perf_instance=\"b\"} 11\n"
	"# HELP perflib_demo_set_sampled_busy_base Base of perflib_demo_set_sampled_busy: Samples\n"
	"# TYPE perflib_demo_set_sampled_busy_base counter\n"
	"perflib_demo_set_sampled_busy_base_total{perf_instance=\"a\\\"q\\\\\"} 120\n"
	"perflib_demo_set_sampled_busy_base_total{perf_instance=\"b\"} 12\n"
	"# HELP perflib_demo_set_bytes_per_request Bytes per Request\n"
	"# TYPE perflib_demo_set_bytes_per_request summary\n"
	"perflib_demo_set_bytes_per_request_sum{perf_instance=\"a\\\"q\\\\\"} 140\n"
	"perflib_demo_set_bytes_per_request_count{perf_instance=\"a\\\"q\\\\\"} 50\n"
	"perflib_demo_set_bytes_per_request_sum{perf_instance=\"b\"} 14\n"
	"perflib_demo_set_bytes_per_request_count{perf_instance=\"b\"} 5\n"
	"# HELP perflib_single_items Items\n"
	"# TYPE perflib_single_items gauge\n"
	"perflib_single_items 42\n"
	"# EOF\n";

static void test_render(void **state)
{
	static const struct ctr_def single_defs[] = {
		{1, PERF_COUNTER_RAWCOUNT, 0, 0, "Items", NULL},
		{2, PERF_COUNTER_COUNTER, 0, 0, "Never Set", NULL},
	};
	uint64_t a[14], b[14], one = 42;
	struct exp_set *sets[3];
	char *text;
	size_t i;

	(void)state;
	for (i = 0; i < 14; i++) {
		a[i] = 10 * (i + 1);
		b[i] = i + 1;
	}
	a[2] = 12345678;   /* 100-ns timer: 1.2345678 s */
	a[3] = 3000000000; /* average timer: 3 s at 1 GHz */
	b[3] = 4;
	sets[0] = mkset(1, "Demo Set", PERF_COUNTERSET_MULTI_INSTANCES, demo_defs, 14);
	sets[1] = mkset(2, "Single", PERF_COUNTERSET_SINGLE_INSTANCE, single_defs, 2);
	sets[2] = mkset(3, "Empty", PERF_COUNTERSET_MULTI_INSTANCES, single_defs, 2);
	add(sets[0], 1, "b", b, 14);
	add(sets[0], 2, "a\"q\\", a, 14);
	add(sets[1], 0, NULL, &one, 1);
	for (i = 0; i < 3; i++)
		assert_int_equal(exp_set_finish(sets[i]), 0);
	assert_int_equal(exp_prepare(sets, 3), 0);
	/* hidden: the bases (5, 7, 12), NO_DISPLAYABLE (8), text (13) */
	assert_false(sets[0]->counters[4].emit);
	assert_false(sets[0]->counters[6].emit);
	assert_false(sets[0]->counters[7].emit);
	assert_false(sets[0]->counters[11].emit);
	assert_false(sets[0]->counters[12].emit);
	assert_int_equal(sets[0]->counters[10].base, 11); /* sample fraction: next counter */

	text = render(sets, 3, 1000000000, EXP_FMT_PROMETHEUS);
	assert_string_equal(text, want_prometheus);
	free(text);
	text = render(sets, 3, 1000000000, EXP_FMT_OPENMETRICS);
	assert_string_equal(text, want_openmetrics);
	free(text);
	for (i = 0; i < 3; i++)
		exp_set_free(sets[i]);
}

/* object clocks, elapsed time, multi timers, queue lengths, a clock that is no power of 10 */
static void test_render_timers(void **state)
{
	static const struct ctr_def defs[] = {
		{1, PERF_OBJ_TIME_TIMER, 0, 0, "Object Busy", "Busy on the object clock."},
		{2, PERF_COUNTER_LARGE_RAWCOUNT, 0, 0, "Object Time", NULL},
		{3, PERF_COUNTER_LARGE_RAWCOUNT, 0, 0, "Object Freq", NULL},
		{4, PERF_ELAPSED_TIME, 0, 0, "Up Time", "Since start."},
		{5, PERF_OBJ_TIME_TIMER, 0, 0, "No Clock", "Unknown clock."},
		{6, PERF_100NSEC_MULTI_TIMER, 0, 7, "Multi Busy", "Busy over processors."},
		{7, PERF_COUNTER_MULTI_BASE, 0, 0, "Processors", "Processors."},
		{8, PERF_COUNTER_100NS_QUEUELEN_TYPE, 0, 0, "Disk Queue", "Queued."},
		{9, PERF_COUNTER_TIMER, 0, 0, "Tick Busy Seconds", "Ticks."},
		{10, PERF_ELAPSED_TIME, 0, 0, "Future", NULL},
	};
	static const char want[] =
		"# HELP perflib_clocks_object_busy_seconds_total Busy on the object clock.\n"
		"# TYPE perflib_clocks_object_busy_seconds_total counter\n"
		"perflib_clocks_object_busy_seconds_total 2.5\n"
		"# HELP perflib_clocks_up_time_seconds Since start.\n"
		"# TYPE perflib_clocks_up_time_seconds gauge\n"
		"perflib_clocks_up_time_seconds 2\n"
		"# HELP perflib_clocks_no_clock_total Unknown clock. (raw ticks of the counter "
		"set's clock: no frequency counter)\n"
		"# TYPE perflib_clocks_no_clock_total counter\n"
		"perflib_clocks_no_clock_total 77\n"
		"# HELP perflib_clocks_multi_busy_seconds_total Busy over processors.\n"
		"# TYPE perflib_clocks_multi_busy_seconds_total counter\n"
		"perflib_clocks_multi_busy_seconds_total 3\n"
		"# HELP perflib_clocks_multi_busy_base Base of perflib_clocks_multi_busy_seconds: "
		"Processors.\n"
		"# TYPE perflib_clocks_multi_busy_base gauge\n"
		"perflib_clocks_multi_busy_base 4\n"
		"# HELP perflib_clocks_disk_queue_total Queued. (queue length x seconds: rate() "
		"gives the average queue length)\n"
		"# TYPE perflib_clocks_disk_queue_total counter\n"
		"perflib_clocks_disk_queue_total 1.5\n"
		"# HELP perflib_clocks_tick_busy_seconds_total Ticks.\n"
		"# TYPE perflib_clocks_tick_busy_seconds_total counter\n"
		"perflib_clocks_tick_busy_seconds_total 3.3333333333333335\n"
		"# HELP perflib_clocks_future_seconds Future\n"
		"# TYPE perflib_clocks_future_seconds gauge\n"
		"perflib_clocks_future_seconds 0\n";
	uint64_t v[10] = {2500, 5000, 1000, 3000, 77, 30000000, 4, 15000000, 10, 6000};
	struct exp_set *set = mkset(1, "Clocks", PERF_COUNTERSET_SINGLE_INSTANCE, defs, 10);
	const char *meta_end;
	char *text;

	(void)state;
	set->counters[0].time_id = set->counters[3].time_id = set->counters[9].time_id = 2;
	set->counters[0].freq_id = set->counters[3].freq_id = set->counters[9].freq_id = 3;
	add(set, 0, NULL, v, 10);
	assert_int_equal(exp_set_finish(set), 0);
	assert_int_equal(exp_prepare(&set, 1), 0);
	/* the clock counters are folded into the counters that read them */
	assert_false(set->counters[1].emit);
	assert_false(set->counters[2].emit);
	assert_false(set->counters[6].emit);
	text = render(&set, 1, 3, EXP_FMT_PROMETHEUS);
	meta_end = strstr(text, "# HELP perflib_clocks_object");
	assert_non_null(meta_end);
	assert_string_equal(meta_end, want);
	free(text);
	/* without its companions an elapsed time is not exported */
	set->counters[3].freq_id = PERFLIB_NO_ID;
	assert_int_equal(exp_prepare(&set, 1), 0);
	assert_false(set->counters[3].emit);
	exp_set_free(set);
}

static void test_name_collisions(void **state)
{
	static const struct ctr_def defs[] = {
		{1, PERF_COUNTER_RAWCOUNT, 0, 0, "Foo Total", NULL},
		{2, PERF_COUNTER_COUNTER, 0, 0, "Foo", NULL},
		{3, PERF_COUNTER_COUNTER, 0, 0, "foo/sec", NULL},
		{4, PERF_COUNTER_RAWCOUNT, 0, 0, NULL, NULL},
		{5, PERF_COUNTER_RAWCOUNT, 0, 0, "%", NULL},
		{6, PERF_COUNTER_RAWCOUNT, 0, 0, "Instances", NULL},
	};
	static const struct ctr_def meta[] = {
		{1, PERF_COUNTER_RAWCOUNT, 0, 0, "Instances", NULL},
	};
	struct exp_set *sets[4];
	size_t i;

	(void)state;
	sets[0] = mkset(0xb, "Same", PERF_COUNTERSET_MULTI_INSTANCES, defs, 6);
	sets[1] = mkset(0xa, "same", PERF_COUNTERSET_MULTI_INSTANCES, defs, 6);
	sets[2] = mkset(0xc, NULL, PERF_COUNTERSET_MULTI_INSTANCES, defs, 1);
	sets[3] = mkset(0xd, "Counterset", PERF_COUNTERSET_MULTI_INSTANCES, meta, 1);
	assert_int_equal(exp_prepare(sets, 4), 0);
	/* sorted by prefix, then GUID: the lower GUID keeps the plain name */
	assert_int_equal(sets[0]->guid.Data1, 0xd);
	assert_string_equal(sets[0]->prefix, "perflib_counterset");
	assert_string_equal(sets[1]->prefix, "perflib_cs_0000000c123400000000000000000000");
	assert_int_equal(sets[2]->guid.Data1, 0xa);
	assert_string_equal(sets[2]->prefix, "perflib_same");
	assert_string_equal(sets[3]->prefix, "perflib_same_0000000b");
	/* a trailing "total" goes from every name: the gauge takes "foo" first */
	assert_string_equal(sets[2]->counters[0].family, "perflib_same_foo");
	assert_string_equal(sets[2]->counters[1].family, "perflib_same_foo_2");
	assert_string_equal(sets[2]->counters[2].family, "perflib_same_foo_3");
	assert_string_equal(sets[2]->counters[3].family, "perflib_same_counter_4");
	assert_string_equal(sets[2]->counters[4].family, "perflib_same_counter_5");
	assert_string_equal(sets[2]->counters[5].family, "perflib_same_instances");
	assert_string_equal(sets[3]->counters[1].family, "perflib_same_0000000b_foo_2");
	/* the exporter's own perflib_counterset_instances is taken first */
	assert_string_equal(sets[0]->counters[0].family, "perflib_counterset_instances_1");
	for (i = 0; i < 4; i++)
		exp_set_free(sets[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_part),	cmocka_unit_test(test_type_map),
		cmocka_unit_test(test_escape),		cmocka_unit_test(test_negotiate),
		cmocka_unit_test(test_numbers),		cmocka_unit_test(test_instances),
		cmocka_unit_test(test_render),		cmocka_unit_test(test_render_timers),
		cmocka_unit_test(test_name_collisions),
	};

	return cmocka_run_group_tests_name("exporter_format", tests, NULL, NULL);
}
