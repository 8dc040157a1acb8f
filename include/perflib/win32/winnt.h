/* SPDX-License-Identifier: MIT */
/* winnt.h - perflib-win32's <winnt.h>: what <windows.h> defines of it (and the rest of <windows.h>) */
#include "windows.h"
