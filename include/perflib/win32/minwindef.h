/* SPDX-License-Identifier: MIT */
/* minwindef.h - perflib-win32's <minwindef.h>: what <windows.h> defines of it (and the rest of <windows.h>) */
#include "windows.h"
