// SPDX-License-Identifier: MIT
/* sized.c - the Windows buffer protocol for the exporter's consumer calls. See sized.h. */
#include <stdlib.h>

#include "sized.h"

/* tries of a call whose answer keeps growing */
#define SIZED_TRIES 8

ULONG sized_call(sized_fn fn, void *ctx, void **buf, DWORD *cap, DWORD *ret_len)
{
	DWORD need = 0, size;
	ULONG st = fn(ctx, *buf, *cap, &need);
	void *grown;
	int i;

	for (i = 0; st == ERROR_NOT_ENOUGH_MEMORY && i < SIZED_TRIES; i++) {
		/* slack: the answer may grow again before the next call */
		size = need + need / 4 + 256;
		if (size <= *cap || size < need)
			return ERROR_NOT_ENOUGH_MEMORY; /* an answer that cannot be sized */
		grown = realloc(*buf, size);
		if (!grown)
			return ERROR_OUTOFMEMORY;
		*buf = grown;
		*cap = size;
		st = fn(ctx, *buf, *cap, &need);
	}
	if (st != ERROR_SUCCESS)
		return st;
	if (need > *cap)
		return ERROR_INVALID_DATA;
	*ret_len = need;
	return ERROR_SUCCESS;
}

ULONG sized_sets(void *ctx, void *buf, DWORD size, DWORD *actual)
{
	ULONG st = PerfEnumerateCounterSet(NULL, buf, size / sizeof(GUID), actual);

	(void)ctx;
	*actual *= sizeof(GUID);
	return st;
}

ULONG sized_reg(void *ctx, void *buf, DWORD size, DWORD *actual)
{
	const struct sized_reg *r = ctx;

	return PerfQueryCounterSetRegistrationInfo(NULL, &r->guid, r->code, r->lang, buf, size,
						   actual);
}
