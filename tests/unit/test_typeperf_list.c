/* SPDX-License-Identifier: MIT */
/*
 * test_typeperf_list.c - typeperf's -q/-qx listing (tools/typeperf/list.c, machine.c)
 * without BPF: the lines of an object from the lists PdhEnumObjectItems gives (hidden
 * counters are PDH's to leave out), "#n" for duplicate instances, objects in name order,
 * the object pattern (checked against libpdh's matcher), and the PDH calls against an
 * empty counter-set root: unknown object, wildcard pattern, a computer that is not this
 * one. The listing of live counter sets is compared with golden files by
 * tests/tools/test_typeperf.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "testlib.h"
#include "names.h"
#include "typeperf.h"

/* run tp_list_object into a string; its return value in *@ret */
static char *object_lines(const char *object, const char *counters, const char *instances, bool qx,
			  int *ret)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	assert_non_null(f);
	*ret = tp_list_object(object, counters, instances, qx, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* the MULTI_SZ lists of the objects below, as PdhEnumObjectItems gives them */
#define DEMO_COUNTERS "Items\0Ratio\0Ops/sec\0"
#define DEMO_INSTANCES "alpha\0beta\0alpha\0Alpha\0pa/ch\0"

static void test_object_lines(void **state)
{
	char *s;
	int err;

	(void)state;
	/* -q: "(*)" for a multi-instance object, counters in the order given */
	s = object_lines("TP Demo", DEMO_COUNTERS, DEMO_INSTANCES, false, &err);
	assert_int_equal(err, 0);
	assert_string_equal(s, "\\TP Demo(*)\\Items\n"
			       "\\TP Demo(*)\\Ratio\n"
			       "\\TP Demo(*)\\Ops/sec\n");
	free(s);
	/* -qx: counter-major, duplicates numbered without case, '/' part of the name */
	s = object_lines("TP Demo", DEMO_COUNTERS, DEMO_INSTANCES, true, &err);
	assert_int_equal(err, 0);
	assert_string_equal(s, "\\TP Demo(alpha)\\Items\n"
			       "\\TP Demo(beta)\\Items\n"
			       "\\TP Demo(alpha#1)\\Items\n"
			       "\\TP Demo(Alpha#2)\\Items\n"
			       "\\TP Demo(pa/ch)\\Items\n"
			       "\\TP Demo(alpha)\\Ratio\n"
			       "\\TP Demo(beta)\\Ratio\n"
			       "\\TP Demo(alpha#1)\\Ratio\n"
			       "\\TP Demo(Alpha#2)\\Ratio\n"
			       "\\TP Demo(pa/ch)\\Ratio\n"
			       "\\TP Demo(alpha)\\Ops/sec\n"
			       "\\TP Demo(beta)\\Ops/sec\n"
			       "\\TP Demo(alpha#1)\\Ops/sec\n"
			       "\\TP Demo(Alpha#2)\\Ops/sec\n"
			       "\\TP Demo(pa/ch)\\Ops/sec\n");
	free(s);
	/* single-instance (no instance list): no instance part, with -q and -qx */
	s = object_lines("TP Single", "Value\0Total\0", NULL, false, &err);
	assert_int_equal(err, 0);
	assert_string_equal(s, "\\TP Single\\Value\n\\TP Single\\Total\n");
	free(s);
	s = object_lines("TP Single", "Value\0Total\0", NULL, true, &err);
	assert_string_equal(s, "\\TP Single\\Value\n\\TP Single\\Total\n");
	free(s);
	/* multi-instance without instances now: "(*)" with -q, nothing with -qx */
	s = object_lines("Empty Multi", "X\0", "\0", false, &err);
	assert_int_equal(err, 0);
	assert_string_equal(s, "\\Empty Multi(*)\\X\n");
	free(s);
	s = object_lines("Empty Multi", "X\0", "\0", true, &err);
	assert_int_equal(err, 0);
	assert_string_equal(s, "");
	free(s);
	/* no listed counter: nothing */
	s = object_lines("Hidden", "\0", DEMO_INSTANCES, true, &err);
	assert_int_equal(err, 0);
	assert_string_equal(s, "");
	free(s);
}

static void test_write_error(void **state)
{
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(tp_list_object("TP Single", "Value\0", NULL, false, f), -EIO);
	fclose(f);
}

static void test_dup_numbers(void **state)
{
	static const char *const names[] = {"alpha",	"beta",	    "alpha", "Alpha", "pa/ch",
					    "\xc3\xa9", "\xc3\x89", "ALPHA", "beta"};
	static const unsigned int want[] = {0, 0, 1, 2, 0, 0, 0, 3, 1};
	enum { NR = 600 };
	const char *many[NR];
	unsigned int dup[NR], ref[NR];
	char pool[NR][4];
	size_t i;

	(void)state;
	assert_int_equal(tp_dup_numbers(names, 9, dup), 0);
	/* ASCII letters only without case: "é" and "É" are two names */
	for (i = 0; i < 9; i++)
		assert_int_equal(dup[i], want[i]);
	assert_int_equal(tp_dup_numbers(names, 0, dup), 0);
	/* the numbers libpdh gives paths (pdh_dup_indexes), on many short names */
	srand(33);
	for (i = 0; i < NR; i++) {
		pool[i][0] = (char)((rand() & 1 ? 'a' : 'A') + rand() % 3);
		pool[i][1] = (char)((rand() & 1 ? 'x' : 'X') + rand() % 2);
		pool[i][2] = rand() % 4 ? '\0' : '#';
		pool[i][3] = '\0';
		many[i] = pool[i];
	}
	assert_int_equal(tp_dup_numbers(many, NR, dup), 0);
	assert_int_equal(pdh_dup_indexes(many, NR, ref), 0);
	for (i = 0; i < NR; i++)
		assert_int_equal(dup[i], ref[i]);
}

static void test_name_match(void **state)
{
	static const char *const patterns[] = {
		"TP Demo", "tp demo", "TP*", "*", "**", "*Demo", "*demo*",   "T*P*D*o", "TP D*o*",
		"*a*a",	   "a*a",     "x*",  "",  "TP", "*TP",	 "TP Demo*", "*o",	"T**o",
	};
	static const char *const names[] = {"TP Demo", "tp demo", "TP Single", "Demo TP", "a", "aa",
					    "aXa",     "",	  "TP",	       "TP Demox"};
	size_t p, n;

	(void)state;
	assert_true(tp_name_match("tp DEMO", "TP Demo"));
	assert_true(tp_name_match("TP Sing*", "TP Single"));
	assert_false(tp_name_match("TP Demo*x", "TP Demo"));
	assert_false(tp_name_match("TP", "TP Demo"));
	assert_false(tp_name_match("a*a", "a"));
	assert_true(tp_name_match("*", ""));
	/* the same answers as libpdh's matcher, which resolves paths */
	for (p = 0; p < sizeof(patterns) / sizeof(patterns[0]); p++)
		for (n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
			if (tp_name_match(patterns[p], names[n]) ==
			    pdh_match(patterns[p], names[n]))
				continue;
			print_error("\"%s\" on \"%s\" differs\n", patterns[p], names[n]);
			fail();
		}
}

static void test_sort_names(void **state)
{
	const char **v;
	size_t nr;

	(void)state;
	/* by name without case, then bytes; a name equal without case once */
	assert_int_equal(tp_sort_names("TP Single\0tp demo\0Empty Multi\0TP Demo\0b\0", &v, &nr),
			 0);
	assert_int_equal(nr, 4);
	assert_string_equal(v[0], "b");
	assert_string_equal(v[1], "Empty Multi");
	assert_string_equal(v[2], "TP Demo");
	assert_string_equal(v[3], "TP Single");
	free(v);
	assert_int_equal(tp_sort_names("\0", &v, &nr), 0);
	assert_int_equal(nr, 0);
	free(v);
}

/* an empty counter-set root (no bpffs needed): nothing registered */
static char root[64];

static int root_setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/test_typeperf_list.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	setenv("PERFLIB_ROOT", root, 1);
	return 0;
}

static int root_teardown(void **state)
{
	(void)state;
	return rmdir(root);
}

static void test_machine(void **state)
{
	struct tp_machine m;
	char *objects = NULL, *ctrs = NULL, *insts = NULL, *s = NULL, host[256];
	size_t size = 0;
	FILE *f;

	(void)state;
	/* this machine: no name for PDH, the short host name in messages */
	assert_int_equal(tp_machine_init(&m, NULL), 0);
	assert_null(m.name);
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	host[sizeof(host) - 1] = '\0';
	host[strcspn(host, ".")] = '\0';
	assert_string_equal(m.display, host);
	/* nothing registered: an empty list, and no object to match */
	assert_int_equal(tp_machine_objects(&m, &objects), 0);
	assert_int_equal(objects[0], '\0');
	f = open_memstream(&s, &size);
	assert_non_null(f);
	assert_int_equal(tp_list(&m, objects, NULL, false, f), 0);
	assert_int_equal(tp_list(&m, objects, "No Such Object", true, f), 0);
	assert_int_equal(tp_list(&m, objects, "TP*", false, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(s, "");
	free(s);
	free(objects);
	/* an object that is not there */
	assert_int_equal(tp_machine_items(&m, "No Such Object", &ctrs, &insts),
			 PDH_CSTATUS_NO_OBJECT);
	tp_machine_free(&m);
	/* this machine by name, in PDH's "\\name" form */
	assert_int_equal(tp_machine_init(&m, "localhost"), 0);
	assert_string_equal(m.name, "\\\\localhost");
	assert_string_equal(m.display, "localhost");
	assert_int_equal(tp_machine_objects(&m, &objects), 0);
	free(objects);
	tp_machine_free(&m);
	/* another computer: refused, with the message typeperf prints */
	assert_int_equal(tp_machine_init(&m, "no-such-computer.invalid"), 0);
	assert_int_equal(tp_machine_objects(&m, &objects), PDH_CSTATUS_NO_MACHINE);
	assert_int_equal(tp_machine_items(&m, "TP Demo", &ctrs, &insts), PDH_CSTATUS_NO_MACHINE);
	assert_non_null(strstr(tp_pdh_str(PDH_CSTATUS_NO_MACHINE), "cannot be reached"));
	tp_machine_free(&m);
	assert_string_equal(tp_pdh_str(PDH_MEMORY_ALLOCATION_FAILURE), "out of memory");
	assert_string_equal(tp_pdh_str(PDH_CSTATUS_NO_OBJECT), "not found");
}

int main(void)
{
	const struct CMUnitTest lines[] = {
		cmocka_unit_test(test_object_lines), cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_dup_numbers),  cmocka_unit_test(test_name_match),
		cmocka_unit_test(test_sort_names),
	};
	const struct CMUnitTest pdh[] = {
		cmocka_unit_test(test_machine),
	};
	int failed;

	failed = cmocka_run_group_tests_name("typeperf_list", lines, NULL, NULL);
	failed += cmocka_run_group_tests_name("typeperf_list_pdh", pdh, root_setup, root_teardown);
	return failed;
}
