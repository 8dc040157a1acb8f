/* SPDX-License-Identifier: MIT */
/* sal.h - perflib-win32's <sal.h>: the annotations of <perflib/sal.h>, with the MSVC integer
 * keywords (__int64, ...) that SAL-annotated code uses next to them */
#ifndef PERFLIB_WIN32_SAL_H
#define PERFLIB_WIN32_SAL_H
#include "../sal.h"
#ifndef __int64
#define __int64 long long
#endif
#ifndef __int32
#define __int32 int
#endif
#ifndef __int16
#define __int16 short
#endif
#ifndef __int8
#define __int8 char
#endif
#endif /* PERFLIB_WIN32_SAL_H */
