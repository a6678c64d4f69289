/* SPDX-License-Identifier: MIT */
/*
 * The seccomp allowlist, compiled with libseccomp.
 *
 * The filter is built once in the supervisor (sbx_seccomp_build) and only installed in the
 * sandbox (sbx_seccomp_install), so the child pays for one seccomp(2) call, not for compiling.
 */
#pragma once

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fail.h"

struct pol_policy;

/* A compiled filter: classic BPF, owned by the struct. */
struct sbx_seccomp_prog {
	struct sock_filter *insns;
	size_t n_insns;
};

/*
 * Compiles the allowlist for pol into out (caller-owned storage). The result must be released
 * with sbx_seccomp_prog_done(). Returns 0, -EINVAL for a policy naming an unknown syscall
 * (or allowing one that is never allowed), -ENOMEM, or -EIO for any other libseccomp failure.
 * out is untouched on failure, and f (may be NULL) says why: for the policy's fault, err 0
 * and a one-line reason naming the entry at fault; otherwise the errno and "compile the
 * seccomp filter".
 */
int sbx_seccomp_build(const struct pol_policy *pol, struct sbx_seccomp_prog *out, struct fail *f);

/*
 * A canonical text naming every input the filter for pol is built from (and the native
 * architecture); two policies with the same key get the same filter. Stores a malloc'd
 * string in *out and returns 0, or -ENOMEM.
 */
int sbx_seccomp_key(const struct pol_policy *pol, char **out);

/* A filter compiled at build time, with the key of the policy it was compiled from. */
struct sbx_seccomp_precompiled {
	const char *key;
	const struct sock_filter *insns;
	size_t n_insns;
};

/*
 * As sbx_seccomp_build, but when pol's key equals pre's (the embedded default's, compiled
 * at build time) it copies that filter instead of compiling: the common case costs a
 * string compare, not libseccomp's ~10 ms. pre may be NULL.
 */
int sbx_seccomp_build_fast(const struct pol_policy *pol, const struct sbx_seccomp_precompiled *pre,
			   struct sbx_seccomp_prog *out, struct fail *f);

/*
 * Exports the filter libseccomp holds in ctx (borrowed; a scmp_filter_ctx) as BPF into out
 * (caller-owned storage, released with sbx_seccomp_prog_done), through a private memfd:
 * libseccomp 2.5 exports only to a descriptor. Refuses a filter the kernel would (empty, or
 * over BPF_MAXINSNS instructions). Returns 0, -ENOMEM or -EIO; out is untouched on failure.
 * sbx_seccomp_build ends here, and so do the confined children's own filters (judge.c).
 */
int sbx_seccomp_export(void *ctx, struct sbx_seccomp_prog *out);

/* Releases what sbx_seccomp_build stored. Safe on zeroed storage and when called twice. */
void sbx_seccomp_prog_done(struct sbx_seccomp_prog *prog);

/*
 * Writes the filter for pol in libseccomp's PFC text form to fd (borrowed). Returns 0 or a
 * negative errno, with f filled, as sbx_seccomp_build does.
 */
int sbx_seccomp_export_pfc(const struct pol_policy *pol, int fd, struct fail *f);

/*
 * Writes to stream, as PFC comment lines ("# ..."), which answer each syscall the filter for pol
 * names gets: allowed; allowed or refused by its arguments; known and deliberately refused
 * (EPERM, or the process killed in kill mode; seccomp.allow may lift these); never allowed;
 * refused by the policy's seccomp.deny; ENOSYS always (clone3, openat2); and that every other
 * syscall, unknown to the filter, gets the default action (ENOSYS, or kill). Returns 0, or a
 * negative errno with f filled as sbx_seccomp_build does (-EIO when stream fails).
 */
int sbx_seccomp_describe(const struct pol_policy *pol, FILE *stream, struct fail *f);

/*
 * Installs prog on the calling thread with SECCOMP_FILTER_FLAG_TSYNC off. The caller must have
 * set no_new_privs. Returns 0 or -errno from seccomp(2).
 */
int sbx_seccomp_install(const struct sbx_seccomp_prog *prog);
