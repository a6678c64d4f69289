/* SPDX-License-Identifier: MIT */
/*
 * The egress proxy's confinement (docs/egress.md, "The proxy process"). The proxy runs in the
 * host's network namespace, since it is the one thing that reaches the network for a
 * sandbox, and it parses hostile bytes; this takes from it everything else:
 *
 *   - every capability, and in privileged mode root itself: it becomes an unprivileged
 *     uid/gid (supplementary groups: the gid alone) with securebits locked;
 *   - no_new_privs, not dumpable, killed when its parent dies, no core files;
 *   - Landlock: no file may be read but the resolver's own configuration (/etc/hosts,
 *     /etc/resolv.conf, /etc/nsswitch.conf, /etc/host.conf, /etc/gai.conf, those that
 *     exist), each opened before the ruleset is sealed; nothing may be written, created,
 *     executed or removed; no TCP port bound (ABI 4+); no abstract unix socket outside its
 *     own domain reached and no signal sent outside it (ABI 6+);
 *   - a seccomp allowlist (sbx_egress_seccomp_build) of what a poll loop of sockets, splice
 *     pipes and the libc resolver need, and nothing else.
 *
 * Every step is required: one that cannot be applied fails the whole confinement, and the
 * proxy must then exit without serving anyone.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sbx-seccomp.h"

struct sbx_egress_jail {
	/*
	 * Privileged mode (the caller holds CAP_SETUID and friends in the initial user
	 * namespace): switch to uid/gid, which must not be 0. Otherwise the process keeps its
	 * ids, and any capability it holds (in a user namespace of its own) is dropped.
	 */
	bool privileged;
	uint32_t uid;
	uint32_t gid;
	/* The pid the process must still have as its parent once the death signal is armed
	 * (0: not checked). */
	pid_t parent;
	/*
	 * Tests only, never set by warden: also allow what a sanitizer's runtime calls on its
	 * own (sigaltstack, before every call that does not return), so that a sanitized build
	 * of the proxy can run under its filter.
	 */
	bool sanitizer_runtime;
};

/*
 * Confines the calling process, which must be single-threaded, in the order: resolver warmed
 * up (its configuration read and any module it loads mapped), the seccomp filter compiled,
 * credentials and capabilities, death signal, Landlock, seccomp installed last. On failure
 * returns -errno and names the step in step (step_len bytes, NUL-terminated); the process is
 * then partly confined and must exit.
 */
int sbx_egress_jail_apply(const struct sbx_egress_jail *cfg, char *step, size_t step_len);

/*
 * Compiles the proxy's seccomp allowlist into out (release with sbx_seccomp_prog_done), with
 * the sanitizer allowance when sanitizer_runtime (tests only). The unit tests run it through
 * a BPF simulator. Returns 0, -ENOMEM or -EIO; out untouched on failure.
 */
int sbx_egress_seccomp_build(bool sanitizer_runtime, struct sbx_seccomp_prog *out);
