/* SPDX-License-Identifier: MIT */
/*
 * The confinement of a child that reads hostile bytes for the supervisor (see judge.h).
 *
 * The order in sbx_judge_confine() has its reasons: fds are closed first, while nothing has
 * been read; the id switch comes before the capability check (it is what empties the sets);
 * the parent-death signal after the switch (a credential change clears it); the filter last,
 * since prctl(), setrlimit() and close_range() are not in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "judge.h"
#include "sandbox.h"

DEFINE_CLEANUP(scmp_filter_ctx, seccomp_release)

/* A build with AddressSanitizer (a test build): its runtime makes calls of its own. */
#if defined(__SANITIZE_ADDRESS__)
#define JUDGE_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JUDGE_SANITIZER 1
#endif
#endif
#ifndef JUDGE_SANITIZER
#define JUDGE_SANITIZER 0
#endif

/*
 * What the judge needs, and nothing else: read() on the fds it was handed, write() on its
 * answer fd (checked below), and what malloc needs for memory. Not fstat: glibc makes it
 * newfstatat, which names a path; the judge sizes what it reads by reading it.
 *
 * Knowingly excluded: open, openat, openat2 and every other call that names a path (the
 * judge reads only what the parent opened), socket and every network call, fork, clone and
 * execve, kill (a confined child signals no one), ioctl, mprotect (no page becomes
 * executable), madvise, prctl, and everything else: the filter's default kills the process.
 */
static const char *const judge_allow[] = {
	"read", "munmap", "mremap", "brk", "exit", "exit_group",
};

/* What the AddressSanitizer runtime calls in malloc, free and _exit; never in a normal build. */
static const char *const judge_sanitizer_allow[] = {
	"madvise", "sched_yield", "getpid", "gettid", "futex", "sigaltstack",
};

/* Narrows a libseccomp return code to 0, -ENOMEM or -EIO. */
static int scmp_rc(int rc)
{
	if (rc >= 0)
		return 0;
	return rc == -ENOMEM ? -ENOMEM : -EIO;
}

static int allow_names(scmp_filter_ctx ctx, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int nr = seccomp_syscall_resolve_name(names[i]);
		if (nr == __NR_SCMP_ERROR)
			return -EIO; /* every name here exists on every architecture warden builds for */
		int r = scmp_rc(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0));
		if (r < 0)
			return r;
	}
	return 0;
}

int sbx_judge_filter_build(int out_fd, struct sbx_seccomp_prog *out)
{
	if (out_fd < 0 || !out)
		return -EINVAL;
	_cleanup_(seccomp_releasep) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -ENOMEM;
	/* The native architecture only; any other syscall table kills (x32 included). */
	int r = scmp_rc(seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS));
	if (r >= 0)
		r = allow_names(ctx, judge_allow, ELEMENTSOF(judge_allow));
	if (r >= 0 && JUDGE_SANITIZER)
		r = allow_names(ctx, judge_sanitizer_allow, ELEMENTSOF(judge_sanitizer_allow));
	/* write() to the answer fd only: libseccomp compares all 64 bits of the argument. */
	const struct scmp_arg_cmp fd_is_out = {
		.arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)out_fd, .datum_b = 0,
	};
	if (r >= 0)
		r = scmp_rc(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1, fd_is_out));
	/* mmap() never maps anything executable (prot is an int: its low 32 bits). */
	if (r >= 0)
		r = scmp_rc(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
					     SCMP_A2_32(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)));
	if (r >= 0 && JUDGE_SANITIZER)
		r = scmp_rc(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
					     SCMP_A2_32(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)));
	if (r < 0)
		return r;
	return sbx_seccomp_export(ctx, out);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Closes every fd but the n in keep (sorted here). Returns 0 or -errno. */
static int close_others(int *keep, size_t n)
{
	qsort(keep, n, sizeof(*keep), cmp_int);
	unsigned lo = 0;
	for (size_t i = 0; i < n; i++) {
		if (fcntl(keep[i], F_GETFD) < 0)
			return -EBADF; /* an fd to keep that is not open */
		if ((unsigned)keep[i] > lo &&
		    syscall(SYS_close_range, lo, (unsigned)keep[i] - 1, 0u) < 0)
			return -errno;
		lo = (unsigned)keep[i] + 1;
	}
	if (syscall(SYS_close_range, lo, ~0u, 0u) < 0)
		return -errno;
	return 0;
}

/* Lowers resource to at most v (soft and hard), never raising a lower hard limit. */
static int lower_limit(int resource, rlim_t soft, rlim_t hard)
{
	struct rlimit cur;
	if (getrlimit(resource, &cur) < 0)
		return -errno;
	struct rlimit want = {
		.rlim_cur = soft < cur.rlim_max ? soft : cur.rlim_max,
		.rlim_max = hard < cur.rlim_max ? hard : cur.rlim_max,
	};
	if (want.rlim_cur > want.rlim_max)
		want.rlim_cur = want.rlim_max;
	return setrlimit(resource, &want) < 0 ? -errno : 0;
}

/*
 * Unprivileged mode: no id to switch to. Where the process holds CAP_SETPCAP (root of a user
 * namespace) every set goes, the bounding set included, with securebits locked
 * (sbx_caps_drop); else the effective, permitted, inheritable and ambient sets are
 * emptied, which lowering alone allows, and no_new_privs set.
 */
static int drop_unprivileged(void)
{
	uint64_t sets[SBX_CAP_SETS];
	int r = sbx_caps_read(sets);
	if (r < 0)
		return r;
	if (sets[0] & (1ull << CAP_SETPCAP))
		return sbx_caps_drop(0, NULL);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct none[2];
	memset(none, 0, sizeof(none));
	if (syscall(SYS_capset, &hdr, none) < 0)
		return -errno;
	return sbx_drop_privileges_unprivileged();
}

/* Every set this process could empty reads back empty, ambient included. */
static int check_no_caps(void)
{
	uint64_t sets[SBX_CAP_SETS];
	int r = sbx_caps_read(sets);
	if (r < 0)
		return r;
	if (sets[0] || sets[1] || sets[2] || sets[4]) /* all but the bounding set */
		return -EPERM;
	return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : -EPERM;
}

int sbx_judge_confine(const struct sbx_judge_spec *spec, const struct sbx_seccomp_prog *prog)
{
	if (!spec || !prog || spec->out_fd < 0 || spec->n_read_fds >= SBX_JUDGE_MAX_FDS ||
	    (spec->n_read_fds && !spec->read_fds))
		return -EINVAL;
	pid_t parent = getppid();

	/* Only the fds the parent opened for this child stay; the rest of the supervisor's go. */
	int keep[SBX_JUDGE_MAX_FDS];
	size_t n = 0;
	for (size_t i = 0; i < spec->n_read_fds; i++) {
		if (spec->read_fds[i] < 0)
			return -EBADF;
		keep[n++] = spec->read_fds[i];
	}
	keep[n++] = spec->out_fd;
	int r = close_others(keep, n);
	if (r < 0)
		return r;

	/* The limits come before the id switch, which takes the right to raise them away too. */
	r = lower_limit(RLIMIT_CPU, SBX_JUDGE_CPU_SECONDS, SBX_JUDGE_CPU_SECONDS + 1);
	if (r >= 0)
		r = lower_limit(RLIMIT_CORE, 0, 0);
	/* Memory: a hostile file cannot make the judge's tree outgrow this (the sanitizer's
	 * shadow mappings count as data: its builds go without). */
	if (r >= 0 && !JUDGE_SANITIZER)
		r = lower_limit(RLIMIT_DATA, SBX_JUDGE_DATA_BYTES, SBX_JUDGE_DATA_BYTES);
	if (r >= 0)
		r = lower_limit(RLIMIT_NOFILE, (rlim_t)keep[n - 1] + 1, (rlim_t)keep[n - 1] + 1);
	if (r < 0)
		return r;

	r = spec->privileged ? sbx_become_owner(spec->uid, spec->gid, 0) : drop_unprivileged();
	if (r < 0)
		return r;
	r = check_no_caps();
	if (r < 0)
		return r;

	/* Not dumpable, so that another process of the same id cannot ptrace or read it. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -errno;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return -errno;
	if (getppid() != parent)
		return -ESRCH; /* the parent died before the signal was armed */

	return sbx_seccomp_install(prog);
}
