/* SPDX-License-Identifier: MIT */
/* winerror.h - perflib-win32's <winerror.h>: what <windows.h> defines of it (and the rest of <windows.h>) */
#include "windows.h"
