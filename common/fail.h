/* SPDX-License-Identifier: MIT */
/*
 * fail: why a step failed, in one line, and the errno it failed with. The one failure context
 * of the run path: supervisor/run.c passes a struct fail down to every step that can fail for
 * a reason worth telling (the workspace checks, the changeset, the seccomp compiler, the
 * sandbox child's mounts and privilege drop), and each fills it where the failure is decided.
 * The sandbox child sends its struct fail to the supervisor as it is (sbx_release_child).
 *
 * The rules, the same everywhere:
 * - A function that takes a struct fail *f and fails returns -errno and has filled f once;
 *   on success it leaves f untouched. f may be NULL: nothing is filled then.
 * - what is one line, never the errno's text: fail_format appends that when err is not 0.
 * - err is 0 when no errno applies (a bad policy entry, a workspace refused by a rule).
 *
 * Header-only, no state.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define FAIL_WHAT_MAX 600

struct fail {
	int32_t err;               /* -errno, or 0 when no errno applies */
	char what[FAIL_WHAT_MAX];  /* NUL-terminated, one line; "" when nothing was said */
};

/* An empty context: no failure yet. */
static inline void fail_init(struct fail *f)
{
	f->err = 0;
	f->what[0] = '\0';
}

/* fail_set with a va_list. */
__attribute__((format(printf, 3, 0))) static inline int fail_vset(struct fail *f, int err,
								    const char *fmt, va_list ap)
{
	if (f) {
		f->err = err;
		(void)vsnprintf(f->what, sizeof(f->what), fmt, ap);
	}
	return err;
}

/*
 * Fills f (when not NULL) with err (-errno, or 0) and the printf-formatted reason, cut to fit.
 * Returns err, so that a failure is described and returned in one statement:
 * `return fail_set(f, -errno, "mount /proc");`.
 */
__attribute__((format(printf, 3, 4))) static inline int fail_set(struct fail *f, int err,
								   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)fail_vset(f, err, fmt, ap);
	va_end(ap);
	return err;
}

/*
 * A refusal that no errno explains (a bad policy entry, a workspace a rule refuses): fills f
 * (when not NULL) with err 0 and the reason, and returns ret, the caller's -errno.
 */
__attribute__((format(printf, 3, 4))) static inline int fail_refuse(struct fail *f, int ret,
								      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)fail_vset(f, 0, fmt, ap);
	va_end(ap);
	return ret;
}

/* True when f holds a reason (something was said, whatever err is). */
static inline bool fail_said(const struct fail *f)
{
	return f->what[0] != '\0';
}

/*
 * The one-line message of f into out (len bytes, always NUL-terminated when len > 0):
 * "what: strerror(-err)", or "what" alone when err is 0. Returns out.
 */
static inline const char *fail_format(const struct fail *f, char *out, size_t len)
{
	if (f->err)
		(void)snprintf(out, len, "%s: %s", f->what, strerror(-f->err));
	else
		(void)snprintf(out, len, "%s", f->what);
	return out;
}
