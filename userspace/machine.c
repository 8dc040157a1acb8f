// SPDX-License-Identifier: MIT
/*
 * machine.c - machine names: which names mean this machine (every consumer function takes
 * one; the others are reached through remote.c, and this machine's never leave the
 * process), and this host's name as carried by every notification to a provider.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "consumer.h"

static bool name_equal_ascii(const WCHAR *w, size_t len, const char *s)
{
	size_t i;

	for (i = 0; i < len; i++) {
		WCHAR c = w[i];
		unsigned char d = (unsigned char)s[i];

		if (!d || c >= 0x80)
			return false;
		if (c >= 'A' && c <= 'Z')
			c = (WCHAR)(c - 'A' + 'a');
		if (d >= 'A' && d <= 'Z')
			d = (unsigned char)(d - 'A' + 'a');
		if (c != d)
			return false;
	}
	return s[len] == 0;
}

int perflib_machine_check(LPCWSTR machine, char *ret_host)
{
	char host[PERFLIB_MACHINE_MAX + 1];
	size_t len;

	if (!machine)
		return 0;
	len = perflib_wcsnlen(machine, PERFLIB_MACHINE_MAX + 1);
	if (len > PERFLIB_MACHINE_MAX)
		return -EHOSTUNREACH;
	if (len == 0)
		return 0;
	/* UNC form: "\\name" (Windows takes any number of leading backslashes) */
	while (len && machine[0] == u'\\') {
		machine++;
		len--;
	}
	if (!len)
		return -EHOSTUNREACH;
	if (name_equal_ascii(machine, len, ".") || name_equal_ascii(machine, len, "localhost"))
		return 0;
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = 0;
		if (name_equal_ascii(machine, len, host))
			return 0;
	}
	/* another machine: its name for remote.c (at most 3 bytes of UTF-8 per unit) */
	if (perflib_utf16_to_utf8(machine, len, ret_host, PERFLIB_HOST_MAX + 1) < 0)
		return -EHOSTUNREACH;
	return 1;
}

size_t perflib_machine_name(WCHAR *buf, size_t units)
{
	/* looked up at most once a second per thread: every notification carries it */
	static __thread WCHAR name[PERFLIB_MACHINE_MAX + 1];
	static __thread size_t name_units;
	static __thread uint64_t when;
	char host[PERFLIB_MACHINE_MAX + 1];
	uint64_t now = perflib_coarse_ns();
	int n = -1;

	if (!name_units || now - when > PERFLIB_RECHECK_NS) {
		if (gethostname(host, sizeof(host)) == 0) {
			host[sizeof(host) - 1] = 0;
			n = perflib_utf8_to_utf16(host, name, PERFLIB_MACHINE_MAX + 1);
		}
		if (n <= 1)
			n = perflib_utf8_to_utf16("localhost", name, PERFLIB_MACHINE_MAX + 1);
		name_units = n > 0 ? (size_t)n : 0;
		when = now;
	}
	if (name_units > units)
		return 0;
	memcpy(buf, name, name_units * 2);
	return name_units * 2;
}
