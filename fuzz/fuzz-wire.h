/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fuzz targets that look at frame payloads (frame, status, dispatch): payload
 * lengths as docs/protocol.md states them, written down here rather than taken from the codec
 * so that a codec that drifts from the spec is caught, and a field-by-field identity compare.
 * Header-only, for fuzz targets only.
 */
#pragma once

#include <stdbool.h>

#include "wire.h"

/* The identity payload: pid, uid[4], gid[4], five capability sets, nnp, seccomp, filters. */
#define FUZZ_IDENTITY_LEN 82u
/* The EXITED payload: how, code, utime, stime, maxrss. */
#define FUZZ_EXITED_LEN 29u

/* Whether a and b hold the same identity, compared field by field (no padding compared). */
static inline bool fuzz_same_identity(const struct wire_identity *a,
				      const struct wire_identity *b)
{
	bool same = a->pid == b->pid && a->cap_inh == b->cap_inh && a->cap_prm == b->cap_prm &&
		    a->cap_eff == b->cap_eff && a->cap_bnd == b->cap_bnd &&
		    a->cap_amb == b->cap_amb && a->no_new_privs == b->no_new_privs &&
		    a->seccomp == b->seccomp && a->seccomp_filters == b->seccomp_filters;
	for (int i = 0; i < 4; i++)
		same = same && a->uid[i] == b->uid[i] && a->gid[i] == b->gid[i];
	return same;
}
