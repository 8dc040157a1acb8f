// SPDX-License-Identifier: MIT
/*
 * test_strings.c - strings.c: UTF-16 helpers, UTF-8 <-> UTF-16 (surrogates, malformed
 * input, buffer limits), instance-name wildcards, GUID text in both directions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void test_wcs(void **state)
{
	const WCHAR nul_inside[] = {u'a', 0, u'b', 0};

	(void)state;
	assert_int_equal(perflib_wcslen(u""), 0);
	assert_int_equal(perflib_wcslen(u"Instance_1"), 10);
	assert_int_equal(perflib_wcslen(nul_inside), 1);
	assert_int_equal(perflib_wcsnlen(u"abcdef", 3), 3);
	assert_int_equal(perflib_wcsnlen(u"ab", 10), 2);
	assert_int_equal(perflib_wcsnlen(u"ab", 0), 0);
	assert_int_equal(perflib_wcscmp(u"abc", u"abc"), 0);
	assert_true(perflib_wcscmp(u"abc", u"abd") < 0);
	assert_true(perflib_wcscmp(u"abd", u"abc") > 0);
	assert_true(perflib_wcscmp(u"ab", u"abc") < 0);
	assert_true(perflib_wcscmp(u"abc", u"ab") > 0);
	assert_true(perflib_wcscmp(u"", u"a") < 0);
	/* unsigned units: U+FFFF sorts after ASCII */
	assert_true(perflib_wcscmp(u"\uFFFF", u"a") > 0);
}

static void test_guid_equal(void **state)
{
	GUID a = {1, 2, 3, {4, 5, 6, 7, 8, 9, 10, 11}}, b = a;

	(void)state;
	assert_true(perflib_guid_equal(&a, &b));
	b.Data4[7]++;
	assert_false(perflib_guid_equal(&a, &b));
	b = a;
	b.Data1 ^= 0x80000000u;
	assert_false(perflib_guid_equal(&a, &b));
}

/* ---- UTF-8 -> UTF-16 ------------------------------------------------------------------ */

static void expect_utf16(const char *utf8, const WCHAR *expect, size_t units)
{
	WCHAR out[64];
	int n;

	memset(out, 0xAA, sizeof(out));
	n = perflib_utf8_to_utf16(utf8, out, 64);
	assert_int_equal(n, units + 1);
	assert_memory_equal(out, expect, (units + 1) * 2);
}

static void test_utf8_to_utf16(void **state)
{
	(void)state;
	expect_utf16("", u"", 0);
	expect_utf16("Worker 1", u"Worker 1", 8);
	expect_utf16("\xc3\xa9", u"\u00e9", 1);		    /* 2 bytes */
	expect_utf16("\xe2\x82\xac", u"\u20ac", 1);	    /* 3 bytes */
	expect_utf16("\xef\xbf\xbf", u"\uffff", 1);	    /* last BMP */
	expect_utf16("\xf0\x90\x80\x80", u"\U00010000", 2); /* first surrogate pair */
	expect_utf16("\xf0\x9f\x98\x80", u"\U0001F600", 2); /* emoji: D83D DE00 */
	expect_utf16("\xf4\x8f\xbf\xbf", u"\U0010FFFF", 2); /* last code point */
	expect_utf16("a\xc3\xa9\xf0\x9f\x98\x80z", u"a\u00e9\U0001F600z", 5);
	{
		WCHAR out[4];

		assert_int_equal(perflib_utf8_to_utf16("\xf0\x9f\x98\x80", out, 4), 3);
		assert_int_equal(out[0], 0xD83D);
		assert_int_equal(out[1], 0xDE00);
		assert_int_equal(out[2], 0);
	}
}

static void test_utf8_invalid(void **state)
{
	static const char *const bad[] = {
		"\x80",			/* continuation without a lead */
		"a\xbf",		/* same, later */
		"\xc0\x80",		/* overlong NUL */
		"\xc1\xbf",		/* overlong 2 bytes */
		"\xe0\x80\x80",		/* overlong 3 bytes */
		"\xe0\x9f\xbf",		/* overlong U+07FF */
		"\xf0\x80\x80\x80",	/* overlong 4 bytes */
		"\xf0\x8f\xbf\xbf",	/* overlong U+FFFF */
		"\xed\xa0\x80",		/* U+D800, a surrogate */
		"\xed\xbf\xbf",		/* U+DFFF */
		"\xf4\x90\x80\x80",	/* U+110000 */
		"\xf8\x88\x80\x80\x80", /* 5-byte form */
		"\xfe",
		"\xff",
		"\xc3", /* truncated at the end */
		"\xe2\x82",
		"\xf0\x9f\x98",
		"\xe2\x28\xa1", /* bad continuation */
		"ok\xc3(",
	};
	WCHAR out[16];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int n = perflib_utf8_to_utf16(bad[i], out, 16);

		if (n != -EILSEQ)
			fail_msg("input %zu accepted (%d)", i, n);
	}
}

static void test_utf8_buffer(void **state)
{
	WCHAR out[8];

	(void)state;
	/* units include the NUL */
	assert_int_equal(perflib_utf8_to_utf16("abc", out, 4), 4);
	assert_int_equal(perflib_utf8_to_utf16("abc", out, 3), -ENOSPC);
	assert_int_equal(perflib_utf8_to_utf16("", out, 1), 1);
	assert_int_equal(perflib_utf8_to_utf16("", out, 0), -ENOSPC);
	/* a surrogate pair is never split */
	assert_int_equal(perflib_utf8_to_utf16("\xf0\x9f\x98\x80", out, 3), 3);
	assert_int_equal(perflib_utf8_to_utf16("\xf0\x9f\x98\x80", out, 2), -ENOSPC);
	assert_int_equal(perflib_utf8_to_utf16("a\xf0\x9f\x98\x80", out, 3), -ENOSPC);
}

/* ---- UTF-16 -> UTF-8 ------------------------------------------------------------------ */

static void expect_utf8(const WCHAR *src, size_t units, const char *expect)
{
	char out[64];
	int n;

	memset(out, 0xAA, sizeof(out));
	n = perflib_utf16_to_utf8(src, units, out, sizeof(out));
	assert_int_equal(n, strlen(expect));
	assert_string_equal(out, expect);
}

static void test_utf16_to_utf8(void **state)
{
	const WCHAR lone_high[] = {u'a', 0xD83D, u'b', 0};
	const WCHAR lone_low[] = {0xDE00, u'x', 0};
	const WCHAR high_at_end[] = {u'x', 0xD83D};
	const WCHAR swapped[] = {0xDE00, 0xD83D, 0};

	(void)state;
	expect_utf8(u"", 10, "");
	expect_utf8(u"Worker 1", 100, "Worker 1");
	expect_utf8(u"\u00e9\u20ac\uffff", 100, "\xc3\xa9\xe2\x82\xac\xef\xbf\xbf");
	expect_utf8(u"\U0001F600", 100, "\xf0\x9f\x98\x80");
	expect_utf8(u"\U00010000\U0010FFFF", 100, "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf");
	/* lone surrogates become U+FFFD */
	expect_utf8(lone_high, 100,
		    "a\xef\xbf\xbd"
		    "b");
	expect_utf8(lone_low, 100, "\xef\xbf\xbdx");
	expect_utf8(high_at_end, 2, "x\xef\xbf\xbd");
	expect_utf8(swapped, 100, "\xef\xbf\xbd\xef\xbf\xbd");
	/* a pair cut by src_units is a lone surrogate */
	expect_utf8(u"\U0001F600", 1, "\xef\xbf\xbd");
	/* src_units bounds the read; a NUL ends early */
	expect_utf8(u"abcdef", 3, "abc");
	expect_utf8(u"ab", 0, "");
}

static void test_utf16_buffer(void **state)
{
	char out[8];

	(void)state;
	/* the NUL needs room too */
	assert_int_equal(perflib_utf16_to_utf8(u"abc", 3, out, 4), 3);
	assert_string_equal(out, "abc");
	assert_int_equal(perflib_utf16_to_utf8(u"abc", 3, out, 3), -ENOSPC);
	assert_string_equal(out, "ab"); /* what fits, terminated */
	assert_int_equal(perflib_utf16_to_utf8(u"", 1, out, 0), -ENOSPC);
	assert_int_equal(perflib_utf16_to_utf8(u"", 1, out, 1), 0);
	/* a multi-byte character is never split */
	assert_int_equal(perflib_utf16_to_utf8(u"\U0001F600", 2, out, 5), 4);
	assert_int_equal(perflib_utf16_to_utf8(u"\U0001F600", 2, out, 4), -ENOSPC);
	assert_int_equal(perflib_utf16_to_utf8(u"a\u20ac", 2, out, 4), -ENOSPC);
	assert_string_equal(out, "a"); /* cut before the 3-byte character */
}

/* a UTF-16 string inside a packed buffer may be unaligned */
static void test_utf16_unaligned(void **state)
{
	static const WCHAR text[] = u"h\u00e9!";
	char buf[1 + sizeof(text)], out[8];

	(void)state;
	memcpy(buf + 1, text, sizeof(text));
	assert_int_equal(perflib_utf16_to_utf8((const WCHAR *)(buf + 1), 4, out, sizeof(out)), 4);
	assert_string_equal(out, "h\xc3\xa9!");
}

/* every code point survives UTF-16 -> UTF-8 -> UTF-16 */
static void test_round_trip_all(void **state)
{
	WCHAR in[3], back[3];
	char utf8[8];
	uint32_t cp;
	size_t units;
	int n;

	(void)state;
	for (cp = 1; cp <= 0x10FFFF; cp++) {
		if (cp >= 0xD800 && cp <= 0xDFFF)
			continue;
		if (cp < 0x10000) {
			in[0] = (WCHAR)cp;
			units = 1;
		} else {
			in[0] = (WCHAR)(0xD800 | ((cp - 0x10000) >> 10));
			in[1] = (WCHAR)(0xDC00 | ((cp - 0x10000) & 0x3FF));
			units = 2;
		}
		in[units] = 0;
		n = perflib_utf16_to_utf8(in, units, utf8, sizeof(utf8));
		if (n != (cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4))
			fail_msg("U+%04X: %d UTF-8 bytes", cp, n);
		n = perflib_utf8_to_utf16(utf8, back, 3);
		if (n != (int)units + 1 || memcmp(in, back, (units + 1) * 2))
			fail_msg("U+%04X does not survive the round trip (%d)", cp, n);
	}
}

/* ---- wildcards (spec 2.6: '*' any run, '?' one unit) ---------------------------------- */

static bool match(const WCHAR *pattern, const WCHAR *s)
{
	return perflib_wildcard_match(pattern, s, perflib_wcslen(s));
}

static void test_wildcard(void **state)
{
	(void)state;
	assert_true(match(u"*", u""));
	assert_true(match(u"*", u"anything at all"));
	assert_true(match(u"**", u"x"));
	assert_true(match(u"", u""));
	assert_false(match(u"", u"a"));
	assert_true(match(u"Instance_1", u"Instance_1"));
	assert_false(match(u"Instance_1", u"Instance_10"));
	assert_false(match(u"Instance_10", u"Instance_1"));
	assert_true(match(u"Instance_?", u"Instance_7"));
	assert_false(match(u"Instance_?", u"Instance_"));
	assert_false(match(u"Instance_?", u"Instance_12"));
	assert_true(match(u"?", u"x"));
	assert_false(match(u"?", u""));
	assert_true(match(u"Inst*", u"Inst"));
	assert_true(match(u"Inst*", u"Instance_3"));
	assert_true(match(u"*_3", u"Instance_3"));
	assert_false(match(u"*_3", u"Instance_4"));
	assert_true(match(u"a*b*c", u"aXXbYYc"));
	assert_true(match(u"a*b*c", u"abc"));
	assert_false(match(u"a*b*c", u"aXXbYY"));
	assert_true(match(u"*a*", u"bbbabbb"));
	assert_true(match(u"*ab", u"aaab")); /* needs a backtrack */
	assert_true(match(u"*aab", u"aaaab"));
	assert_true(match(u"a*?", u"ab"));
	assert_false(match(u"a*?", u"a"));
	assert_true(match(u"*?*", u"z"));
	/* case-sensitive */
	assert_false(match(u"instance_1", u"Instance_1"));
	/* non-ASCII units are compared as units */
	assert_true(match(u"caf?", u"caf\u00e9"));
	assert_true(match(u"\U0001F600*", u"\U0001F600!"));
	/* the name need not be NUL-terminated: s_len bounds it */
	assert_true(perflib_wildcard_match(u"ab", u"abc", 2));
	assert_false(perflib_wildcard_match(u"abc", u"abc", 2));
	/* a long pathological case ends quickly */
	assert_false(match(u"*a*a*a*a*a*a*a*a*b",
			   u"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

/* ---- GUID text ------------------------------------------------------------------------ */

static void test_guid_to_string(void **state)
{
	GUID g = {0x12345678, 0x1234, 0x5678, {0x12, 0x34, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33}};
	GUID d = {0xDEADBEEF, 0x0002, 0x0003, {0x0F, 0x04, 0x05, 0x06, 0x07, 0x08, 0x00, 0x0A}};
	GUID zero;
	char buf[37];

	(void)state;
	memset(&zero, 0, sizeof(zero));
	assert_ptr_equal(perflib_guid_to_string(&g, buf), buf);
	assert_string_equal(buf, "12345678-1234-5678-1234-111122223333");
	assert_string_equal(perflib_guid_to_string(&d, buf),
			    "deadbeef-0002-0003-0f04-05060708000a");
	assert_string_equal(perflib_guid_to_string(&zero, buf),
			    "00000000-0000-0000-0000-000000000000");
}

static void test_guid_from_string(void **state)
{
	static const uint8_t bytes[16] = {0x78, 0x56, 0x34, 0x12, 0x34, 0x12, 0x78, 0x56,
					  0x12, 0x34, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33};
	GUID g, d;
	char buf[37];

	(void)state;
	/* spec 3.1: the Windows byte encoding */
	assert_int_equal(perflib_guid_from_string("12345678-1234-5678-1234-111122223333", &g), 0);
	assert_memory_equal(&g, bytes, 16);
	assert_int_equal(perflib_guid_from_string("{12345678-1234-5678-1234-111122223333}", &d), 0);
	assert_memory_equal(&d, bytes, 16);
	assert_int_equal(perflib_guid_from_string("DEADBEEF-0002-0003-0F04-05060708000A", &g), 0);
	assert_string_equal(perflib_guid_to_string(&g, buf),
			    "deadbeef-0002-0003-0f04-05060708000a");
	assert_int_equal(perflib_guid_from_string("{DeadBeef-0002-0003-0f04-05060708000A}", &d), 0);
	assert_memory_equal(&g, &d, 16);
}

static void test_guid_from_string_bad(void **state)
{
	static const char *const bad[] = {
		"",
		"{}",
		"12345678-1234-5678-1234-11112222333",	 /* one digit short */
		"12345678-1234-5678-1234-1111222233334", /* one digit long */
		"12345678-1234-5678-1234-11112222333g",	 /* not hex */
		"12345678-1234-5678-1234_111122223333",	 /* not a dash */
		"1234567-81234-5678-1234-111122223333",	 /* dash moved */
		"12345678-1234-5678-12341-11122223333",
		"123456789123456781234111122223333abc",	 /* no dashes, same length */
		"{12345678-1234-5678-1234-111122223333", /* unbalanced braces */
		"12345678-1234-5678-1234-111122223333}",
		"(12345678-1234-5678-1234-111122223333)",
		"{{2345678-1234-5678-1234-111122223333}}",
		" 12345678-1234-5678-1234-11112222333",
		"+2345678-1234-5678-1234-111122223333",
		"12345678-1234-5678-1234-1111-22223333",
		"12-45678-1234-5678-1234-111122223333",
	};
	GUID g;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (perflib_guid_from_string(bad[i], &g) != -EINVAL)
			fail_msg("\"%s\" accepted", bad[i]);
	}
	assert_int_equal(perflib_guid_from_string(NULL, &g), -EINVAL);
	assert_int_equal(perflib_guid_from_string("12345678-1234-5678-1234-111122223333", NULL),
			 -EINVAL);
}

static void test_guid_round_trip(void **state)
{
	unsigned int seed = 7, i, k;
	char buf[37];
	GUID g, back;

	(void)state;
	for (i = 0; i < 10000; i++) {
		for (k = 0; k < sizeof(g); k++)
			((uint8_t *)&g)[k] = (uint8_t)rand_r(&seed);
		assert_int_equal(perflib_guid_from_string(perflib_guid_to_string(&g, buf), &back),
				 0);
		assert_memory_equal(&g, &back, sizeof(g));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf16_unaligned),
		cmocka_unit_test(test_wcs),
		cmocka_unit_test(test_guid_equal),
		cmocka_unit_test(test_utf8_to_utf16),
		cmocka_unit_test(test_utf8_invalid),
		cmocka_unit_test(test_utf8_buffer),
		cmocka_unit_test(test_utf16_to_utf8),
		cmocka_unit_test(test_utf16_buffer),
		cmocka_unit_test(test_round_trip_all),
		cmocka_unit_test(test_wildcard),
		cmocka_unit_test(test_guid_to_string),
		cmocka_unit_test(test_guid_from_string),
		cmocka_unit_test(test_guid_from_string_bad),
		cmocka_unit_test(test_guid_round_trip),
	};

	return cmocka_run_group_tests_name("strings", tests, NULL, NULL);
}
