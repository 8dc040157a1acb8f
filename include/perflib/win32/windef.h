/* SPDX-License-Identifier: MIT */
/* windef.h - perflib-win32's <windef.h>: what <windows.h> defines of it (and the rest of <windows.h>) */
#include "windows.h"
