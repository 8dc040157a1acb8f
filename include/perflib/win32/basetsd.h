/* SPDX-License-Identifier: MIT */
/* basetsd.h - perflib-win32's <basetsd.h>: what <windows.h> defines of it (and the rest of <windows.h>) */
#include "windows.h"
