/* SPDX-License-Identifier: MIT */
/* minwinbase.h - perflib-win32's <minwinbase.h>: what <windows.h> defines of it (and the rest of <windows.h>) */
#include "windows.h"
