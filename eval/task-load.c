/* SPDX-License-Identifier: MIT */
/*
 * Loading a task file for eval, grade and check: a careful open, one bounded read, the
 * digest, then the pure parser (task.c). The task's policy and what it extends come through
 * the supervisor's policy loader, so a policy means the same in a task as on `warden run`'s
 * command line.
 *
 * The open never blocks and never opens anything but a regular file for reading: a FIFO
 * would hang warden and a device could act on being opened. A path that a run folder's
 * record names is trusted less than one the user names (see ev_load_task_from).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "eval.h"
#include "io-util.h"
#include "supervisor.h"
#include "task.h"

/* Refuses path: a one-line reason in diag, -EPERM. */
__attribute__((format(printf, 3, 4))) static int refuse(struct pol_diag *diag, const char *path,
						       const char *fmt, ...)
{
	(void)snprintf(diag->file, sizeof(diag->file), "%s", path);
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(diag->message, sizeof(diag->message), fmt, ap);
	va_end(ap);
	return -EPERM;
}

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISLNK(m)  ? "a symlink"
			     : "not a regular file";
}

/*
 * Opens path for reading as origin allows; returns the fd, or -EPERM with the reason in diag,
 * or another -errno.
 */
static int open_task(const char *path, enum ev_task_origin origin, struct pol_diag *diag)
{
	bool recorded = origin == EV_TASK_RECORDED;
	/* O_NONBLOCK: opening a FIFO does not wait for a writer; a regular file ignores it. */
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
						    (recorded ? O_NOFOLLOW : 0));
	if (fd < 0 && errno == ELOOP && recorded)
		return refuse(diag, path, "is a symlink (the task a record names is read only "
			      "through its own path; pass --task FILE to choose a task file)");
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return refuse(diag, path, "is %s, not a regular file (expected a task file)",
			      kind_of(st.st_mode));
	if (!recorded)
		return TAKE_FD(fd);

	/*
	 * `eval` recorded the task's canonical path (realpath): the path of the file opened,
	 * as the kernel names it, is that path exactly unless a symlink stands somewhere above
	 * it or the file was moved.
	 */
	char link[64], actual[4096];
	(void)snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, actual, sizeof(actual) - 1);
	if (n < 0)
		return -errno;
	actual[n] = '\0';
	if (strcmp(actual, path) != 0)
		return refuse(diag, path, "resolves to '%.1000s' (the task a record names is read "
			      "only through its own path; pass --task FILE to choose a task file)",
			      actual);
	/* Someone else's file could be YAML the record's author wrote: root parses none. */
	if (st.st_uid != 0 && st.st_uid != getuid())
		return refuse(diag, path, "belongs to uid %u, neither root nor you (pass --task "
			      "FILE to vouch for a task file)", (unsigned)st.st_uid);
	if ((st.st_mode & S_IWOTH) ||
	    ((st.st_mode & S_IWGRP) && st.st_gid != 0 && st.st_gid != getgid()))
		return refuse(diag, path, "is writable by others (mode %04o; pass --task FILE to "
			      "vouch for a task file)", (unsigned)(st.st_mode & 07777));
	return TAKE_FD(fd);
}

int ev_load_task(const char *path, struct pol_task **out, struct pol_diag *diag)
{
	return ev_load_task_from(path, EV_TASK_NAMED, out, diag, NULL, NULL);
}

int ev_load_task_from(const char *path, enum ev_task_origin origin, struct pol_task **out,
		      struct pol_diag *diag, char digest[72], const char *expect)
{
	memset(diag, 0, sizeof(*diag));
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	_cleanup_close_ int fd = open_task(path, origin, diag);
	if (fd < 0)
		return fd;
	int r = io_read_alloc(fd, TASK_MAX_INPUT_BYTES, &text, &len);
	if (r == -E2BIG) {
		(void)snprintf(diag->file, sizeof(diag->file), "%s", path);
		(void)snprintf(diag->message, sizeof(diag->message),
			       "task file is larger than %u bytes (expected a smaller file)",
			       (unsigned)TASK_MAX_INPUT_BYTES);
		return r;
	}
	if (r < 0)
		return r;
	/* A recorded path was checked to be canonical above; a named one is made so. */
	_cleanup_free_ char *abs = origin == EV_TASK_RECORDED ? strdup(path) : realpath(path, NULL);
	if (!abs)
		return -errno;
	if (digest)
		sup_digest_hex(text, len, digest);
	if (digest && expect && strcmp(digest, expect) != 0)
		return -ESTALE; /* not the recorded task: not even parsed */
	return pol_task_parse(abs, text, len, sup_policy_loader, NULL, out, diag);
}
