/* SPDX-License-Identifier: MIT */
/*
 * judge.c: the confinement of a child that reads hostile bytes on the supervisor's behalf
 * (eval/judge.c runs the static criteria and `warden grade`'s run folder reader in one), so
 * that a privileged process never parses what a sandbox wrote.
 *
 * Such a child is forked from the supervisor, handed the fds it may read (opened by the
 * parent) and one fd to answer on, and then, before it looks at any input, it
 * sbx_judge_confine()s itself: every other fd closed, resource limits, no capabilities in any
 * set as an unprivileged id, no_new_privs, not dumpable, and a seccomp filter that kills the
 * process (SIGSYS) on any syscall but read(), write() to its answer fd, memory
 * management and exit.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx-seccomp.h"

/* Limits the confined child runs under. */
#define SBX_JUDGE_CPU_SECONDS 30u    /* CPU time for one criterion, below the 60 s deadline */
#define SBX_JUDGE_DATA_BYTES (1ull << 30) /* RLIMIT_DATA: heap and private mappings */
#define SBX_JUDGE_MAX_FDS 128u       /* fds it may be handed, its answer fd included */

struct sbx_judge_spec {
	/*
	 * Privileged (warden's privilege mode): become uid/gid, groups gid alone, with every
	 * capability set empty. Unprivileged: stay the user, with the effective, permitted,
	 * inheritable and ambient sets empty (the bounding set cannot be lowered without
	 * CAP_SETPCAP; with no_new_privs and no exec it gives nothing).
	 */
	bool privileged;
	uint32_t uid, gid;
	const int *read_fds;  /* fds the child keeps to read (borrowed), n_read_fds of them */
	size_t n_read_fds;
	int out_fd;           /* the one fd it may write to */
};

/*
 * Compiles the filter for a child answering on out_fd into *out (caller-owned; release with
 * sbx_seccomp_prog_done). Allowed: read, write with fd == out_fd, mmap without
 * PROT_EXEC, munmap, mremap, brk, exit and exit_group; anything else, and any other
 * architecture, kills the process. A build with AddressSanitizer (a test build) also admits
 * the calls its runtime makes in malloc and at exit (madvise, mprotect without PROT_EXEC,
 * sched_yield, getpid, gettid, futex, sigaltstack); a normal build never does. Returns 0,
 * -EINVAL (out_fd < 0), -ENOMEM or -EIO.
 */
int sbx_judge_filter_build(int out_fd, struct sbx_seccomp_prog *out);

/*
 * In the forked child, before it reads any input, in this order: closes every fd but
 * spec->read_fds and spec->out_fd; lowers RLIMIT_CPU to SBX_JUDGE_CPU_SECONDS, RLIMIT_DATA to
 * SBX_JUDGE_DATA_BYTES (not under a sanitizer), RLIMIT_CORE to
 * 0 and RLIMIT_NOFILE to what it holds; drops privilege as spec says (sbx_become_owner with
 * no capability kept, or the unprivileged equivalent) and checks that every capability set
 * it could empty reads back empty; sets no_new_privs, PR_SET_DUMPABLE 0 and a parent-death
 * SIGKILL (after the id change, which would clear it); installs prog (from
 * sbx_judge_filter_build). Returns 0, or -errno naming no step: the caller must _exit() at
 * once, never go on half confined.
 */
int sbx_judge_confine(const struct sbx_judge_spec *spec, const struct sbx_seccomp_prog *prog);
