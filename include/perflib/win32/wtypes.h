/* SPDX-License-Identifier: MIT */
/* wtypes.h - perflib-win32's <wtypes.h>: what <windows.h> defines of it (and the rest of <windows.h>) */
#include "windows.h"
