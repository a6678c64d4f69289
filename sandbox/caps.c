/* SPDX-License-Identifier: MIT */
/*
 * Dropping privilege: securebits, every capability set, no_new_privs.
 */
#include <cap-ng.h>
#include <errno.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <linux/capability.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <grp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fail.h"
#include "sandbox.h"

#define SBX_SECUREBITS                                                                    \
	(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |                  \
	 SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | \
	 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

int sbx_caps_read(uint64_t out[SBX_CAP_SETS])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	out[0] = (uint64_t)data[1].effective << 32 | data[0].effective;
	out[1] = (uint64_t)data[1].permitted << 32 | data[0].permitted;
	out[2] = (uint64_t)data[1].inheritable << 32 | data[0].inheritable;
	out[3] = out[4] = 0;
	for (unsigned cap = 0; cap < 64; cap++) {
		int b = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
		if (b < 0)
			break; /* past the last capability this kernel knows */
		if (b)
			out[3] |= 1ull << cap;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) > 0)
			out[4] |= 1ull << cap;
	}
	return 0;
}

int sbx_caps_drop(uint64_t keep, struct fail *f)
{
	/*
	 * Securebits first: locking them needs CAP_SETPCAP, which is about to go. With NOROOT
	 * locked, uid 0 inside the namespace could never regain capabilities through exec.
	 * Ambient raising stays possible only when the policy keeps capabilities, since that is
	 * how kept ones survive exec for a non-root uid.
	 */
	unsigned long bits = SBX_SECUREBITS;
	if (keep)
		bits &= ~(unsigned long)(SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED);
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
		return fail_set(f, -errno, "lock securebits");

	/*
	 * libcap-ng's state is per process image: this child inherited the supervisor's, which
	 * names the supervisor's pid. Point it at ourselves before applying anything.
	 */
	capng_setpid(getpid());
	capng_clear(CAPNG_SELECT_ALL);
	for (unsigned cap = 0; cap < 64; cap++) {
		if (!(keep & (1ull << cap)))
			continue;
		if (capng_update(CAPNG_ADD,
				 CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_INHERITABLE |
					 CAPNG_BOUNDING_SET | CAPNG_AMBIENT,
				 cap) < 0)
			return fail_set(f, -EINVAL, "select the capabilities to keep");
	}
	/* Bounding and ambient first, while CAP_SETPCAP is still effective, then the rest. */
	if (capng_apply(CAPNG_SELECT_BOUNDS) < 0)
		return fail_set(f, -EPERM, "drop the bounding set");
	if (capng_apply(CAPNG_SELECT_CAPS) < 0)
		return fail_set(f, -EPERM, "drop the effective, permitted and inheritable sets");
	if (!keep && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return fail_set(f, -errno, "clear ambient capabilities");
	if (keep && capng_apply(CAPNG_SELECT_AMBIENT) < 0)
		return fail_set(f, -EPERM, "set the ambient set");

	/* Verify rather than trust: every set must read back as exactly the kept mask. */
	uint64_t sets[SBX_CAP_SETS];
	int r = sbx_caps_read(sets);
	if (r < 0)
		return fail_set(f, r, "read back the capability sets");
	for (int i = 0; i < SBX_CAP_SETS; i++)
		if (sets[i] != keep)
			return fail_set(f, -EPERM, "%s", keep ? "verify the capability sets hold only the kept ones"
					      : "verify capabilities are empty");

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fail_set(f, -errno, "set no_new_privs");
	return 0;
}

int sbx_drop_privileges(uint64_t keep, char *step, size_t step_len)
{
	struct fail f;
	fail_init(&f);
	int r = sbx_caps_drop(keep, &f);
	if (r < 0 && step && step_len)
		(void)snprintf(step, step_len, "%s", f.what);
	return r;
}

int sbx_become_owner(uint32_t uid, uint32_t gid, uint64_t keep)
{
	/*
	 * With the uid fixup off, the switch below keeps this process's capabilities, so that
	 * sbx_caps_drop can still lock the securebits and then keep exactly `keep`.
	 */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP, 0, 0, 0) < 0)
		return -errno;
	gid_t g = (gid_t)gid;
	if (setgroups(1, &g) < 0 || setresgid(g, g, g) < 0 || setresuid(uid, uid, uid) < 0)
		return -errno;
	return sbx_caps_drop(keep, NULL);
}

int sbx_drop_privileges_unprivileged(void)
{
	/* Nothing to give up in the initial namespace but the chance to gain through exec. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

int sbx_caps_mask(char *const *names, size_t n, uint64_t *out)
{
	uint64_t mask = 0;
	for (size_t i = 0; i < n; i++) {
		int cap = capng_name_to_capability(names[i]);
		if (cap < 0 || cap > 63)
			return -EINVAL;
		mask |= 1ull << cap;
	}
	*out = mask;
	return 0;
}
