/* SPDX-License-Identifier: MIT */
/* synchapi.h - perflib-win32's <synchapi.h>: what <windows.h> defines of it (and the rest of <windows.h>) */
#include "windows.h"
