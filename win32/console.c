/* SPDX-License-Identifier: MIT */
/*
 * console.c - what needs the terminal or the process's arguments: <conio.h>'s _getch and the
 * UTF-16 argv that wmain receives (the main() of libperflib-win32main.a calls
 * perflib_win32_wargv, then the program's wmain).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "internal.h"

/*
 * _getch - one byte of standard input without echo and without waiting for Enter when it is
 * a terminal (its mode is restored at once); a pipe or file is read as it is. -1 at the end
 * of input (Windows' console has none).
 */
int _getch(void)
{
	struct termios old, raw;
	unsigned char c;
	int tty = tcgetattr(0, &old) == 0;
	ssize_t n;

	if (tty) {
		raw = old;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		tcsetattr(0, TCSANOW, &raw);
	}
	fflush(stdout);
	do
		n = read(0, &c, 1);
	while (n < 0 && errno == EINTR);
	if (tty)
		tcsetattr(0, TCSANOW, &old);
	return n == 1 ? c : -1;
}

/* one UTF-8 string as a malloc'd NUL-terminated WCHAR string (U+FFFD for bad bytes) */
static WCHAR *widen(const char *s)
{
	struct w32_out o = {1, 0, 0, NULL, 0};

	w32_out_bytes(&o, s, strlen(s));
	if (o.err) {
		w32_out_free(&o);
		return NULL;
	}
	return o.buf;
}

int perflib_win32_wargv(int argc, char **argv, WCHAR ***ret_wargv)
{
	WCHAR **w;
	int i;

	if (argc < 0 || !argv || !ret_wargv)
		return -EINVAL;
	w = calloc((size_t)argc + 1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (i = 0; i < argc; i++) {
		w[i] = widen(argv[i] ? argv[i] : "");
		if (!w[i]) {
			while (i--)
				free(w[i]);
			free(w);
			return -ENOMEM;
		}
	}
	*ret_wargv = w;
	return 0;
}
