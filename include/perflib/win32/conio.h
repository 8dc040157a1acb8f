/* SPDX-License-Identifier: MIT */
/*
 * conio.h - perflib-win32's <conio.h>: _kbhit (perflib/win32compat.h: standard input polled;
 * end of input counts as a key) and _getch (one byte without echo or Enter on a terminal,
 * -1 at the end of input). Nothing else of the console API.
 */
#ifndef PERFLIB_WIN32_CONIO_H
#define PERFLIB_WIN32_CONIO_H

#include "perflib-win32-rt.h"

#ifdef __cplusplus
extern "C" {
#endif
PERFLIB_WIN32_API int _getch(void);
#ifdef __cplusplus
}
#endif

#endif /* PERFLIB_WIN32_CONIO_H */
