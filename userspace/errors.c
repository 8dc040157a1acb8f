// SPDX-License-Identifier: MIT
/* errors.c - the one errno -> Win32 table, the last-error slot and the buffer-size rule. */
#include "internal.h"

static __thread DWORD last_error;

static const struct {
	int err;
	ULONG code;
} errno_table[] = {
	{0, ERROR_SUCCESS},
	{ENOENT, ERROR_NOT_FOUND},
	{EINVAL, ERROR_INVALID_PARAMETER},
	{EFAULT, ERROR_INVALID_PARAMETER},
	{EBADF, ERROR_INVALID_HANDLE},
	{EEXIST, ERROR_ALREADY_EXISTS},
	{ENOTUNIQ, ERROR_ALREADY_EXISTS},
	{ENOMEM, ERROR_OUTOFMEMORY},
	{ENOSPC, ERROR_NOT_ENOUGH_MEMORY},
	{E2BIG, ERROR_NOT_ENOUGH_MEMORY},
	{EPERM, ERROR_ACCESS_DENIED},
	{EACCES, ERROR_ACCESS_DENIED},
	{EROFS, ERROR_ACCESS_DENIED},
	{EBADMSG, ERROR_INVALID_DATA},
	{EPROTO, ERROR_INVALID_DATA},
	{ENODATA, ERROR_NO_DATA},
	{EBUSY, ERROR_BUSY},
	{ETIMEDOUT, ERROR_TIMEOUT},
	{EHOSTUNREACH, ERROR_BAD_NETPATH},
	{EOPNOTSUPP, ERROR_NOT_SUPPORTED},
	{ENOSYS, ERROR_NOT_SUPPORTED},
	{ENODEV, ERROR_FILE_NOT_FOUND},
	{ESRCH, ERROR_WMI_GUID_NOT_FOUND},
};

ULONG perflib_win32_error(int err)
{
	size_t i;

	if (err > 0)
		err = -err;
	for (i = 0; i < sizeof(errno_table) / sizeof(errno_table[0]); i++) {
		if (-errno_table[i].err == err)
			return errno_table[i].code;
	}
	/* an errno with no Win32 meaning is a failure the caller cannot fix: say so plainly */
	return ERROR_GEN_FAILURE;
}

ULONG perflib_buffer_result(DWORD needed, DWORD have, DWORD *ret_actual)
{
	*ret_actual = needed;
	return have >= needed ? ERROR_SUCCESS : ERROR_NOT_ENOUGH_MEMORY;
}

DWORD GetLastError(void)
{
	return last_error;
}

void SetLastError(DWORD dwErrCode)
{
	last_error = dwErrCode;
}
