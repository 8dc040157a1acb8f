/* SPDX-License-Identifier: MIT */
/* winbase.h - perflib-win32's <winbase.h>: what <windows.h> defines of it (and the rest of <windows.h>) */
#include "windows.h"
