/* SPDX-License-Identifier: MIT */
/*
 * test_pdh_logtext.c - the CSV/TSV text of PDH logs (pdh/logtext.c, tools.md 4.3, pdh.md
 * 7.2): the header with its time zone (name and Windows bias) and typeperf's without, the
 * reading of both and of nothing else, this machine's zone under several TZ values,
 * quoting, CRLF, six decimals, " " for no value, the record's time stamp.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "logtext.h"

/* the header line of @paths as a string */
static char *capture_header(enum pdh_text_format fmt, const struct pdh_text_zone *zone,
			    char *const *paths, size_t nr)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	assert_int_equal(pdh_text_header(f, fmt, zone, paths, nr), 0);
	fclose(f);
	return buf;
}

static void test_header(void **state)
{
	char *paths[] = {"\\\\host\\Obj(a)\\C", "\\\\host\\Say \"hi\"\\C"};
	struct pdh_text_zone pdt = {true, 420, "Pacific Daylight Time"};
	struct pdh_text_zone ist = {true, -330, "IST"}, none = {0};
	char *s;

	(void)state;
	/* typeperf's: the format alone */
	s = capture_header(PDH_TEXT_CSV, NULL, paths, 2);
	assert_string_equal(s, "\"(PDH-CSV 4.0)\",\"\\\\host\\Obj(a)\\C\","
			       "\"\\\\host\\Say \"\"hi\"\"\\C\"\r\n");
	free(s);
	s = capture_header(PDH_TEXT_TSV, &none, paths, 1);
	assert_string_equal(s, "\"(PDH-TSV 4.0)\"\t\"\\\\host\\Obj(a)\\C\"\r\n");
	free(s);
	/* a PDH log's: the zone and its bias (pdh.md 7.2's examples) */
	s = capture_header(PDH_TEXT_CSV, &pdt, paths, 1);
	assert_string_equal(s, "\"(PDH-CSV 4.0) (Pacific Daylight Time)(420)\","
			       "\"\\\\host\\Obj(a)\\C\"\r\n");
	free(s);
	s = capture_header(PDH_TEXT_TSV, &ist, paths, 1);
	assert_string_equal(s, "\"(PDH-TSV 4.0) (IST)(-330)\"\t\"\\\\host\\Obj(a)\\C\"\r\n");
	free(s);
}

/* @field read as a header's first field: 0 and what it names, or -EINVAL */
static int parse(const char *field, enum pdh_text_format *fmt, struct pdh_text_zone *zone)
{
	memset(zone, 0x5a, sizeof(*zone));
	*fmt = (enum pdh_text_format)99;
	return pdh_text_header_parse(field, fmt, zone);
}

static void test_header_parse(void **state)
{
	static const char *const bad[] = {
		"",
		"PDH-CSV 4.0",
		"(PDH-CSV)",
		"(PDH-CSV 4.0",
		"(PDH-BIN 4.0)",
		"(PDH-csv 4.0)",
		"(PDH-CSV x)",
		"(PDH-CSV 4.0)x",
		"(PDH-CSV 4.0) ",
		"(PDH-CSV 4.0) (UTC)",
		"(PDH-CSV 4.0) (UTC)()",
		"(PDH-CSV 4.0) ()(0)",
		"(PDH-CSV 4.0) (UTC)(+60)",
		"(PDH-CSV 4.0) (UTC)(60",
		"(PDH-CSV 4.0) (UTC)(60)x",
		"(PDH-CSV 4.0) (UTC)(1440)",
		"(PDH-CSV 4.0) (UTC)(-1440)",
		"(PDH-CSV 4.0) (UTC)(6 0)",
		"(PDH-CSV 4.0)(UTC)(0)",
		"(PDH-CSV 4.0) (UTC) (0)",
	};
	static const char long_name[] =
		"0123456789012345678901234567890123456789012345678901234567890123456789";
	struct pdh_text_zone z;
	enum pdh_text_format fmt;
	char field[128];
	size_t i;

	(void)state;
	assert_int_equal(parse("(PDH-CSV 4.0)", &fmt, &z), 0);
	assert_int_equal(fmt, PDH_TEXT_CSV);
	assert_false(z.known);
	assert_int_equal(parse("(PDH-TSV 4.0)", &fmt, &z), 0);
	assert_int_equal(fmt, PDH_TEXT_TSV);
	assert_false(z.known);
	assert_int_equal(parse("(PDH-CSV 4.0) (Pacific Daylight Time)(420)", &fmt, &z), 0);
	assert_int_equal(fmt, PDH_TEXT_CSV);
	assert_true(z.known);
	assert_string_equal(z.name, "Pacific Daylight Time");
	assert_int_equal(z.bias, 420);
	assert_int_equal(parse("(PDH-TSV 4.0) (India Standard Time)(-330)", &fmt, &z), 0);
	assert_int_equal(fmt, PDH_TEXT_TSV);
	assert_string_equal(z.name, "India Standard Time");
	assert_int_equal(z.bias, -330);
	assert_int_equal(parse("(PDH-CSV 4.0) (UTC)(0)", &fmt, &z), 0);
	assert_string_equal(z.name, "UTC");
	assert_int_equal(z.bias, 0);
	/* a name may hold parentheses; the bias is after the last "(" */
	assert_int_equal(parse("(PDH-CSV 4.0) ((UTC+01:00) Paris)(-60)", &fmt, &z), 0);
	assert_string_equal(z.name, "(UTC+01:00) Paris");
	assert_int_equal(z.bias, -60);
	/* 63 characters fit, 64 do not */
	snprintf(field, sizeof(field), "(PDH-CSV 4.0) (%.63s)(0)", long_name);
	assert_int_equal(parse(field, &fmt, &z), 0);
	assert_int_equal(strlen(z.name), 63);
	snprintf(field, sizeof(field), "(PDH-CSV 4.0) (%.64s)(0)", long_name);
	assert_int_equal(parse(field, &fmt, &z), -EINVAL);
	assert_int_equal(parse("(PDH-CSV 10.2)", &fmt, &z), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &fmt, &z) != -EINVAL)
			fail_msg("\"%s\" was read as a header", bad[i]);
		assert_int_equal(fmt, 99); /* untouched */
	}
}

/* this machine's zone under TZ @tz at Unix time @t */
static void expect_zone(const char *tz, int64_t t, const char *name, int bias)
{
	struct pdh_text_zone z;

	setenv("TZ", tz, 1);
	pdh_text_zone_local(t, &z);
	assert_true(z.known);
	assert_string_equal(z.name, name);
	assert_int_equal(z.bias, bias);
}

static void test_zone_local(void **state)
{
	(void)state;
	/* the bias is minutes to add to local time for UTC: west of Greenwich positive */
	expect_zone("UTC", 1700000000, "UTC", 0);
	expect_zone("PST8PDT", 1689400000, "PDT", 420); /* July 2023 */
	expect_zone("PST8PDT", 1700000000, "PST", 480); /* November 2023 */
	expect_zone("IST-5:30", 1700000000, "IST", -330);
	expect_zone("CET-1CEST,M3.5.0,M10.5.0/3", 1689400000, "CEST", -120);
	unsetenv("TZ");
	tzset();
}

static void test_rows(void **state)
{
	double values[] = {99.98299, 3332.0, 0.0};
	bool valid[] = {true, false, true};
	char *buf = NULL, v[64];
	size_t size = 0;
	FILE *f;

	(void)state;
	f = open_memstream(&buf, &size);
	/* 2016-09-15 09:20:56.002 (tools.md 4.3's transcript): the local FILETIME */
	assert_int_equal(pdh_text_row(f, PDH_TEXT_CSV, 131184048560020000LL, values, valid, 3), 0);
	assert_int_equal(pdh_text_row(f, PDH_TEXT_TSV, 0, values, valid, 1), 0);
	fclose(f);
	assert_string_equal(buf, "\"09/15/2016 09:20:56.002\",\"99.982990\",\" \",\"0.000000\"\r\n"
				 "\"01/01/1601 00:00:00.000\"\t\"99.982990\"\r\n");
	free(buf);
	pdh_text_value(v, sizeof(v), 1e12 + 0.5);
	assert_string_equal(v, "1000000000000.500000");
	pdh_text_value(v, sizeof(v), 1.0 / 3);
	assert_string_equal(v, "0.333333");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_header_parse),
		cmocka_unit_test(test_zone_local),
		cmocka_unit_test(test_rows),
	};

	return cmocka_run_group_tests_name("pdh_logtext", tests, NULL, NULL);
}
