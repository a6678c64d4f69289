/* SPDX-License-Identifier: MIT */
/*
 * Loading a task file for eval, grade and check: one bounded read, the digest, then the pure
 * parser (task.c). The task's policy and what it extends come through the supervisor's
 * policy loader, so a policy means the same in a task as on `warden run`'s command line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "eval.h"
#include "io-util.h"
#include "supervisor.h"
#include "task.h"

int ev_load_task(const char *path, struct pol_task **out, struct pol_diag *diag)
{
	return ev_load_task_digest(path, out, diag, NULL, NULL);
}

int ev_load_task_digest(const char *path, struct pol_task **out, struct pol_diag *diag,
			 char digest[72], const char *expect)
{
	memset(diag, 0, sizeof(*diag));
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
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
	_cleanup_free_ char *abs = realpath(path, NULL);
	if (!abs)
		return -errno;
	if (digest)
		sup_digest_hex(text, len, digest);
	if (digest && expect && strcmp(digest, expect) != 0)
		return -ESTALE; /* not the recorded task: not even parsed */
	return pol_task_parse(abs, text, len, sup_policy_loader, NULL, out, diag);
}
