/* SPDX-License-Identifier: MIT */
/*
 * wmain.c - libperflib-win32main.a: a main() for programs that define wmain (or _tmain in a
 * UNICODE build) instead. It is taken from the archive only when the program has no main of
 * its own, and is weak so that a program's main wins wherever the archive comes on the link
 * line. The arguments and the environment reach wmain as UTF-16, converted from UTF-8; they
 * are freed when wmain returns.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

extern char **environ;
/* the program's: int wmain(int argc, wchar_t **argv[, wchar_t **envp]) */
int wmain(int argc, WCHAR **argv, WCHAR **envp);

static void free_all(WCHAR **v)
{
	WCHAR **p;

	for (p = v; *p; p++)
		free(*p);
	free(v);
}

__attribute__((weak)) int main(int argc, char **argv)
{
	WCHAR **wargv, **wenvp;
	int nenv = 0, ret;

	while (environ && environ[nenv])
		nenv++;
	if (perflib_win32_wargv(argc, argv, &wargv) ||
	    perflib_win32_wargv(nenv, environ ? environ : argv + argc, &wenvp)) {
		fprintf(stderr, "%s: out of memory converting the arguments to UTF-16\n",
			argc ? argv[0] : "wmain");
		return 255;
	}
	ret = wmain(argc, wargv, wenvp);
	free_all(wargv);
	free_all(wenvp);
	return ret;
}
