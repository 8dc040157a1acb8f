// SPDX-License-Identifier: MIT
/*
 * test_errors.c - errors.c: every entry of the errno -> Win32 table, errnos without an
 * entry, the buffer-size rule, and the thread-local last error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <pthread.h>

#include "internal.h"

/* errno -> the Win32 value, by number (spec 2.11), so a wrong constant shows too */
#define ROW(e, code)                                                                               \
	{                                                                                          \
		e, code, #e                                                                        \
	}
static const struct row {
	int err;
	ULONG code;
	const char *name;
} rows[] = {
	ROW(0, 0),	     ROW(ENOENT, 1168),	   ROW(EINVAL, 87),
	ROW(EFAULT, 87),     ROW(EBADF, 6),	   ROW(EEXIST, 183),
	ROW(ENOTUNIQ, 183),  ROW(ENOMEM, 14),	   ROW(ENOSPC, 8),
	ROW(E2BIG, 8),	     ROW(EPERM, 5),	   ROW(EACCES, 5),
	ROW(EROFS, 5),	     ROW(EBADMSG, 13),	   ROW(ENODATA, 232),
	ROW(EBUSY, 170),     ROW(ETIMEDOUT, 1460), ROW(EHOSTUNREACH, 53),
	ROW(EOPNOTSUPP, 50), ROW(ENOSYS, 50),	   ROW(ENODEV, 2),
	ROW(ESRCH, 4200),
};

/* the Windows values the table produces (spec 2.11, winerror.h) */
static void test_win32_values(void **state)
{
	(void)state;
	assert_int_equal(ERROR_SUCCESS, 0);
	assert_int_equal(ERROR_FILE_NOT_FOUND, 2);
	assert_int_equal(ERROR_ACCESS_DENIED, 5);
	assert_int_equal(ERROR_INVALID_HANDLE, 6);
	assert_int_equal(ERROR_NOT_ENOUGH_MEMORY, 8);
	assert_int_equal(ERROR_INVALID_DATA, 13);
	assert_int_equal(ERROR_OUTOFMEMORY, 14);
	assert_int_equal(ERROR_GEN_FAILURE, 31);
	assert_int_equal(ERROR_NOT_SUPPORTED, 50);
	assert_int_equal(ERROR_BAD_NETPATH, 53);
	assert_int_equal(ERROR_INVALID_PARAMETER, 87);
	assert_int_equal(ERROR_BUSY, 170);
	assert_int_equal(ERROR_ALREADY_EXISTS, 183);
	assert_int_equal(ERROR_NO_DATA, 232);
	assert_int_equal(ERROR_NOT_FOUND, 1168);
	assert_int_equal(ERROR_TIMEOUT, 1460);
	assert_int_equal(ERROR_WMI_GUID_NOT_FOUND, 4200);
}

static void test_every_entry(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ULONG neg = perflib_win32_error(-rows[i].err);
		ULONG pos = perflib_win32_error(rows[i].err);

		/* negative errnos as the library returns them, positive ones as errno holds them */
		if (neg != rows[i].code || pos != rows[i].code)
			fail_msg("%s: %u / %u, expected %u", rows[i].name, neg, pos, rows[i].code);
	}
}

static void test_unknown_errno(void **state)
{
	static const int unknown[] = {EIO, EXDEV, EAGAIN, EINTR, EMFILE, ELOOP, 4095, INT_MAX};
	size_t i;

	(void)state;
	/* no Win32 meaning: a plain failure, never success */
	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		assert_int_equal(perflib_win32_error(-unknown[i]), ERROR_GEN_FAILURE);
		assert_int_equal(perflib_win32_error(unknown[i]), ERROR_GEN_FAILURE);
	}
	assert_int_equal(perflib_win32_error(INT_MIN), ERROR_GEN_FAILURE);
}

static void test_buffer_result(void **state)
{
	DWORD actual = 0xDEADBEEF;

	(void)state;
	assert_int_equal(perflib_buffer_result(48, 48, &actual), ERROR_SUCCESS);
	assert_int_equal(actual, 48);
	actual = 0;
	assert_int_equal(perflib_buffer_result(48, 100, &actual), ERROR_SUCCESS);
	assert_int_equal(actual, 48);
	/* spec 7.1: too small, the needed size is written */
	actual = 0;
	assert_int_equal(perflib_buffer_result(48, 47, &actual), ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(actual, 48);
	actual = 0;
	assert_int_equal(perflib_buffer_result(48, 0, &actual), ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(actual, 48);
	assert_int_equal(perflib_buffer_result(0, 0, &actual), ERROR_SUCCESS);
	assert_int_equal(actual, 0);
}

static void *set_in_thread(void *arg)
{
	DWORD *seen = arg;

	seen[0] = GetLastError(); /* a new thread starts at 0 */
	SetLastError(1168);
	seen[1] = GetLastError();
	return NULL;
}

static void test_last_error_per_thread(void **state)
{
	DWORD seen[2] = {1, 1};
	pthread_t t;

	(void)state;
	SetLastError(0xDEADBEEF);
	assert_int_equal(GetLastError(), 0xDEADBEEF);
	assert_int_equal(pthread_create(&t, NULL, set_in_thread, seen), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(seen[0], 0);
	assert_int_equal(seen[1], 1168);
	assert_int_equal(GetLastError(), 0xDEADBEEF);
	SetLastError(0);
	assert_int_equal(GetLastError(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_win32_values),	      cmocka_unit_test(test_every_entry),
		cmocka_unit_test(test_unknown_errno),	      cmocka_unit_test(test_buffer_result),
		cmocka_unit_test(test_last_error_per_thread),
	};

	return cmocka_run_group_tests_name("errors", tests, NULL, NULL);
}
