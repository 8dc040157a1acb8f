/* SPDX-License-Identifier: MIT */
/*
 * test_pdh_names.c - counter paths as PDH parses them (pdh/names.c): the ten legal
 * shapes of tools.md 4.2, malformed paths, limits, wildcard matching, "#n" indexes and
 * the numbering of duplicate instance names.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "testlib.h"
#include "names.h"

/* compare a possibly NULL string */
static void assert_str_or_null(const char *got, const char *want)
{
	if (!want) {
		if (got)
			print_error("got \"%s\", expected NULL\n", got);
		assert_null(got);
	} else {
		if (!got)
			print_error("got NULL, expected \"%s\"\n", want);
		assert_non_null(got);
		assert_string_equal(got, want);
	}
}

static void check(const char *text, const char *machine, const char *object, const char *parent,
		  const char *instance, int index, const char *counter)
{
	struct pdh_cpath p;

	assert_int_equal(pdh_cpath_parse(text, &p), 0);
	assert_str_or_null(p.machine, machine);
	assert_str_or_null(p.object, object);
	assert_str_or_null(p.parent, parent);
	assert_str_or_null(p.instance, instance);
	assert_int_equal(p.index, index);
	assert_str_or_null(p.counter, counter);
	pdh_cpath_free(&p);
}

static void test_ten_shapes(void **state)
{
	(void)state;
	/* \\c\o(p/i#n)\k, \\c\o(p/i)\k, \\c\o(i#n)\k, \\c\o(i)\k, \\c\o\k */
	check("\\\\host\\Thread(explorer/0#2)\\% Processor Time", "host", "Thread", "explorer", "0",
	      2, "% Processor Time");
	check("\\\\host\\Thread(explorer/0)\\Context Switches/sec", "host", "Thread", "explorer",
	      "0", PDH_INDEX_NONE, "Context Switches/sec");
	check("\\\\10.0.0.1\\Process(svchost#1)\\Handle Count", "10.0.0.1", "Process", NULL,
	      "svchost", 1, "Handle Count");
	check("\\\\host\\Processor Information(0,0)\\% Idle Time", "host", "Processor Information",
	      NULL, "0,0", PDH_INDEX_NONE, "% Idle Time");
	check("\\\\host\\UDPv6\\Datagrams/sec", "host", "UDPv6", NULL, NULL, PDH_INDEX_NONE,
	      "Datagrams/sec");
	/* the same five without a computer */
	check("\\Thread(explorer/0#2)\\% Processor Time", NULL, "Thread", "explorer", "0", 2,
	      "% Processor Time");
	check("\\Thread(explorer/0)\\Priority", NULL, "Thread", "explorer", "0", PDH_INDEX_NONE,
	      "Priority");
	check("\\Process(svchost#0)\\Handle Count", NULL, "Process", NULL, "svchost", 0,
	      "Handle Count");
	check("\\Process(svchost)\\Handle Count", NULL, "Process", NULL, "svchost", PDH_INDEX_NONE,
	      "Handle Count");
	check("\\Memory\\Available Bytes", NULL, "Memory", NULL, NULL, PDH_INDEX_NONE,
	      "Available Bytes");
}

static void test_special_names(void **state)
{
	(void)state;
	/* wildcards anywhere a name goes */
	check("\\Process(*)\\*", NULL, "Process", NULL, "*", PDH_INDEX_NONE, "*");
	check("\\Process(pro*)\\% Proc*", NULL, "Process", NULL, "pro*", PDH_INDEX_NONE, "% Proc*");
	check("\\Thread(*/*#*)\\x", NULL, "Thread", "*", "*", PDH_INDEX_ANY, "x");
	/* a '#' not followed by digits belongs to the name */
	check("\\Obj(a#b)\\C", NULL, "Obj", NULL, "a#b", PDH_INDEX_NONE, "C");
	check("\\Obj(#1)\\C", NULL, "Obj", NULL, "#1", PDH_INDEX_NONE, "C");
	check("\\Obj(a#)\\C", NULL, "Obj", NULL, "a#", PDH_INDEX_NONE, "C");
	check("\\Obj(a#1#2)\\C", NULL, "Obj", NULL, "a#1", 2, "C");
	/* parentheses inside an instance name (Intel(R) ...) */
	check("\\Network Interface(Intel(R) Ethernet)\\Bytes Total/sec", NULL, "Network Interface",
	      NULL, "Intel(R) Ethernet", PDH_INDEX_NONE, "Bytes Total/sec");
	/* surrounding blanks and a CRLF from a -cf file written on Windows */
	check("  \\Memory\\Pages/sec\r\n", NULL, "Memory", NULL, NULL, PDH_INDEX_NONE, "Pages/sec");
	/* spaces inside names are kept */
	check("\\My Set(my inst)\\my counter", NULL, "My Set", NULL, "my inst", PDH_INDEX_NONE,
	      "my counter");
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"Memory\\Available Bytes", /* no leading separator */
		"\\",
		"\\Memory",	    /* no counter */
		"\\Memory\\",	    /* empty counter */
		"\\\\host",	    /* computer only */
		"\\\\\\Memory\\X",  /* empty computer */
		"\\\\host\\Memory", /* no counter */
		"\\(i)\\C",	    /* no object */
		"\\\\Memory\\X",    /* \\Memory is a computer: no object left */
		"\\Obj()\\C",	    /* empty instance */
		"\\Obj(i\\C",	    /* unclosed */
		"\\Obj(i)x\\C",	    /* text after ')' */
		"\\Obj(/i)\\C",	    /* empty parent */
		"\\Obj(p/)\\C",	    /* empty instance after parent */
	};
	struct pdh_cpath p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = pdh_cpath_parse(bad[i], &p);

		if (err != -EINVAL)
			print_error("\"%s\" gave %d\n", bad[i], err);
		assert_int_equal(err, -EINVAL);
	}
	/* \Obj(i)\a\b: a counter cannot contain '\' */
	assert_int_equal(pdh_cpath_parse("\\Obj(i)\\a\\b", &p), -EINVAL);
	assert_int_equal(pdh_cpath_parse("\\A\\B\\C", &p), -EINVAL);
}

static void test_limits(void **state)
{
	static char s[4000];
	struct pdh_cpath p;

	(void)state;
	/* counter name of 1024 bytes is accepted, 1025 is not */
	strcpy(s, "\\Obj\\");
	memset(s + 5, 'c', 1024);
	s[5 + 1024] = '\0';
	assert_int_equal(pdh_cpath_parse(s, &p), 0);
	pdh_cpath_free(&p);
	strcat(s, "c");
	assert_int_equal(pdh_cpath_parse(s, &p), -ENAMETOOLONG);
	/* instance name of 1025 bytes */
	strcpy(s, "\\Obj(");
	memset(s + 5, 'i', 1025);
	strcpy(s + 5 + 1025, ")\\C");
	assert_int_equal(pdh_cpath_parse(s, &p), -ENAMETOOLONG);
	/* whole path above 2048 bytes */
	strcpy(s, "\\\\");
	memset(s + 2, 'h', 2100);
	strcpy(s + 2102, "\\O\\C");
	assert_int_equal(pdh_cpath_parse(s, &p), -ENAMETOOLONG);
}

static void test_match(void **state)
{
	(void)state;
	assert_true(pdh_match("*", ""));
	assert_true(pdh_match("*", "anything"));
	assert_true(pdh_match("pro*", "Process"));
	assert_true(pdh_match("PRO*", "process"));
	assert_false(pdh_match("pro*", "xprocess"));
	assert_true(pdh_match("*cess", "Process"));
	assert_true(pdh_match("p*c*s", "Process"));
	assert_true(pdh_match("a*b*c", "aXbYbZc"));
	assert_false(pdh_match("a*b*c", "aXbYbZ"));
	assert_true(pdh_match("exact", "EXACT"));
	assert_false(pdh_match("exact", "exactly"));
	assert_true(pdh_match("**", "x"));
	assert_false(pdh_match("", "x"));
	/* '?' is no wildcard in PDH paths */
	assert_false(pdh_match("a?", "ab"));
	assert_true(pdh_match("a?", "a?"));
	/* non-ASCII bytes compare exactly */
	assert_true(pdh_match("caf\xc3\xa9*", "caf\xc3\xa9 au lait"));
	assert_false(pdh_match("CAF\xc3\x89", "caf\xc3\xa9"));
	assert_true(pdh_has_wildcard("a*"));
	assert_false(pdh_has_wildcard("a#1"));
	assert_true(pdh_name_equal("Memory", "mEMORY"));
	assert_false(pdh_name_equal("Memory", "Memor"));
}

static void test_dup_indexes(void **state)
{
	/* first occurrence plain, then #1, #2 in order of appearance; case-insensitive */
	const char *names[] = {"svchost", "a", "svchost", "B", "SVCHOST", "b", "a", "c"};
	unsigned int dup[8], want[8] = {0, 0, 1, 0, 2, 1, 1, 0};
	size_t i;

	(void)state;
	assert_int_equal(pdh_dup_indexes(names, 8, dup), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(dup[i], want[i]);
	assert_int_equal(pdh_dup_indexes(names, 0, dup), 0);
}

static void test_format(void **state)
{
	struct pdh_cpath p;
	char *s;

	(void)state;
	s = pdh_cpath_format("host", "Process", "svchost#1", "Handle Count");
	assert_string_equal(s, "\\\\host\\Process(svchost#1)\\Handle Count");
	free(s);
	s = pdh_cpath_format(NULL, "Memory", NULL, "Available Bytes");
	assert_string_equal(s, "\\Memory\\Available Bytes");
	free(s);
	s = pdh_instance_display("svchost", 0);
	assert_string_equal(s, "svchost");
	free(s);
	s = pdh_instance_display("svchost", 12);
	assert_string_equal(s, "svchost#12");
	free(s);
	/* the instance pattern glues a parent back: V2 sets have no parent objects */
	assert_int_equal(pdh_cpath_parse("\\Thread(explorer/0#1)\\X", &p), 0);
	s = pdh_cpath_instance_pattern(&p);
	assert_string_equal(s, "explorer/0");
	free(s);
	pdh_cpath_free(&p);
	assert_int_equal(pdh_cpath_parse("\\Memory\\X", &p), 0);
	assert_null(pdh_cpath_instance_pattern(&p));
	pdh_cpath_free(&p);
	/* formatting a parsed path gives it back */
	assert_int_equal(pdh_cpath_parse("\\\\h\\O(i#3)\\C", &p), 0);
	s = pdh_cpath_format(p.machine, p.object, "i#3", p.counter);
	assert_string_equal(s, "\\\\h\\O(i#3)\\C");
	free(s);
	pdh_cpath_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ten_shapes), cmocka_unit_test(test_special_names),
		cmocka_unit_test(test_malformed),  cmocka_unit_test(test_limits),
		cmocka_unit_test(test_match),	   cmocka_unit_test(test_dup_indexes),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests_name("typeperf_path", tests, NULL, NULL);
}
