/* SPDX-License-Identifier: MIT */
/*
 * testlib.h - what the tests share: a private PERFLIB_ROOT per test binary, the BPF
 * availability check (skip, or fail when PERFLIB_REQUIRE_BPF=1), GUIDs, child processes
 * with deadlines. Include after <setjmp.h>, <stdarg.h>, <stddef.h> and <cmocka.h>.
 */
#ifndef PERFLIB_TESTLIB_H
#define PERFLIB_TESTLIB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "perflib.h"
#include "perflib-linux.h"

/* exit code that tests/run.sh counts as "skipped" */
#define TL_SKIP 77

/*
 * tl_require_bpf - call first in main(): exits TL_SKIP with a reason when BPF maps cannot
 * be created here, or exits 1 when PERFLIB_REQUIRE_BPF=1 demands BPF.
 */
void tl_require_bpf(void);

/* create a private bpffs root, export it as PERFLIB_ROOT and perflib_set_pin_root() */
const char *tl_root_create(void);
/* remove everything under the private root and the root itself */
void tl_root_remove(void);
/* cmocka group setup/teardown wrappers around the two above */
int tl_group_setup(void **state);
int tl_group_teardown(void **state);

/* a GUID unique within this test run: {tl_run_id, n, ...} */
GUID tl_guid(unsigned int n);

/*
 * tl_fork - run @fn(@arg) in a child; the child's exit code is fn's return value.
 * tl_wait - wait for @pid at most @timeout_ms; returns the exit code, 128+signal when
 * killed, or -1 on timeout (the child is then killed).
 */
pid_t tl_fork(int (*fn)(void *arg), void *arg);
int tl_wait(pid_t pid, int timeout_ms);

/* pipes to sequence processes: tl_sync_* write/read one byte, with a deadline */
int tl_pipe(int fds[2]);
int tl_signal(int fd);
int tl_await(int fd, int timeout_ms);

/* run a shell command, capture stdout into a malloc'd string; returns exit status */
int tl_run(const char *cmd, char **ret_out);
/*
 * tl_capture - send this process's stdout and stderr to temporary files, until
 * tl_captured, which restores both and puts what was written into @out and @err,
 * NUL-terminated and cut to @out_size and @err_size. Exits 1 when it cannot redirect.
 */
void tl_capture(void);
void tl_captured(char *out, size_t out_size, char *err, size_t err_size);
/*
 * every pin under @dir (a counter set's directory, segments included) to @mode, @uid,
 * @gid; its directories to 0755. 0 or -1.
 */
int tl_pins_chmod(const char *dir, mode_t mode, uid_t uid, gid_t gid);
/*
 * write slot @i (in segment 0) of counter set @set with the bytes at @slot (the data map's
 * value size) and set its live bit, as a forger with root would. 0 or -1.
 */
int tl_poke_slot(const GUID *set, uint32_t i, const void *slot);
/* segments of size class @cls of counter set @set its control entry publishes (-1: none) */
int tl_published_segs(const GUID *set, uint32_t cls);
/* slots of segment 0 of size class @cls of counter set @set, from its info (0: none) */
uint32_t tl_seg0(const GUID *set, uint32_t cls);
/*
 * the kernel's memory ("memlock:" of fdinfo) of every map and program pinned under @dir,
 * its subdirectories included, added to *@maps and *@progs
 */
void tl_dir_memlock(const char *dir, unsigned long long *maps, unsigned long long *progs);

#endif /* PERFLIB_TESTLIB_H */
