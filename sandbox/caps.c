/* SPDX-License-Identifier: MIT */
/*
 * Dropping privilege: securebits, every capability set, no_new_privs.
 */
#include <cap-ng.h>
#include <errno.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "sandbox.h"

#define SBX_SECUREBITS                                                                    \
	(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |                  \
	 SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | \
	 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

static int fail_step(char *step, size_t step_len, const char *what, int err)
{
	(void)snprintf(step, step_len, "%s", what);
	return err;
}

int sbx_drop_privileges(char *step, size_t step_len)
{
	/*
	 * Securebits first: locking them needs CAP_SETPCAP, which is about to go. With NOROOT
	 * locked, uid 0 inside the namespace could never regain capabilities through exec.
	 */
	if (prctl(PR_SET_SECUREBITS, SBX_SECUREBITS, 0, 0, 0) < 0)
		return fail_step(step, step_len, "lock securebits", -errno);

	/* Effective, permitted, inheritable, bounding and ambient: all empty. */
	/*
	 * libcap-ng's state is per process image: this child inherited the supervisor's, which
	 * names the supervisor's pid. Point it at ourselves before applying anything.
	 */
	capng_setpid(getpid());
	capng_clear(CAPNG_SELECT_ALL);
	if (capng_apply(CAPNG_SELECT_BOUNDS) < 0)
		return fail_step(step, step_len, "drop the bounding set", -EPERM);
	if (capng_apply(CAPNG_SELECT_AMBIENT) < 0)
		return fail_step(step, step_len, "drop the ambient set", -EPERM);
	if (capng_apply(CAPNG_SELECT_CAPS) < 0)
		return fail_step(step, step_len, "drop the effective, permitted and inheritable sets",
				 -EPERM);

	/* Verify rather than trust: every set must read back empty. */
	capng_get_caps_process();
	if (capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE ||
	    capng_have_capabilities(CAPNG_SELECT_BOUNDS) != CAPNG_NONE)
		return fail_step(step, step_len, "verify capabilities are empty", -EPERM);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return fail_step(step, step_len, "clear ambient capabilities", -errno);

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fail_step(step, step_len, "set no_new_privs", -errno);
	return 0;
}
