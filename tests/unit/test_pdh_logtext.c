/* SPDX-License-Identifier: MIT */
/*
 * test_pdh_logtext.c - the CSV/TSV text of PDH logs (pdh/logtext.c, tools.md 4.3, pdh.md
 * 7.2): the header, quoting, CRLF, six decimals, " " for no value, the record's time stamp.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "logtext.h"

/* the header line of @paths as a string */
static char *capture_header(enum pdh_text_format fmt, char *const *paths, size_t nr)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	assert_int_equal(pdh_text_header(f, fmt, paths, nr), 0);
	fclose(f);
	return buf;
}

static void test_header(void **state)
{
	char *paths[] = {"\\\\host\\Obj(a)\\C", "\\\\host\\Say \"hi\"\\C"};
	char *s;

	(void)state;
	s = capture_header(PDH_TEXT_CSV, paths, 2);
	assert_string_equal(s, "\"(PDH-CSV 4.0)\",\"\\\\host\\Obj(a)\\C\","
			       "\"\\\\host\\Say \"\"hi\"\"\\C\"\r\n");
	free(s);
	s = capture_header(PDH_TEXT_TSV, paths, 1);
	assert_string_equal(s, "\"(PDH-TSV 4.0)\"\t\"\\\\host\\Obj(a)\\C\"\r\n");
	free(s);
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
		cmocka_unit_test(test_rows),
	};

	return cmocka_run_group_tests_name("pdh_logtext", tests, NULL, NULL);
}
