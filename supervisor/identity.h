/* SPDX-License-Identifier: MIT */
/*
 * Kernel identity: what the kernel says about the worker, read by the supervisor itself from
 * /proc/<host pid>/status and /proc/<host pid>/ns/ entries, compared with what the policy requires
 * and with what the worker claimed.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire.h"

#define SUP_N_NS 7

struct sup_identity {
	struct wire_identity kernel;     /* the kernel's word, host view */
	unsigned nspid_depth;            /* number of NSpid values; >= 2 when nested */
	uint64_t ns_self[SUP_N_NS];      /* our namespace inodes */
	uint64_t ns_worker[SUP_N_NS];    /* the worker's */
	bool checked;                    /* every check ran */
	bool held;                       /* and every check passed */
	char failure[160];               /* the first failed check */
};

/* Namespace names, in the order of the ns_* arrays. */
extern const char *const sup_ns_names[SUP_N_NS];

/* What the policy requires the kernel to show. */
struct sup_expect {
	bool init_userns;         /* the supervisor runs in the initial user namespace */
	uint32_t host_uid, host_gid;
	uint32_t inside_uid, inside_gid;
	uint64_t caps;            /* the capability mask every set must equal (0 by default) */
	bool ns_new[SUP_N_NS];    /* per sup_ns_names[]: a new namespace (else shared with us) */
};

/*
 * Reads the worker's kernel identity from /proc/<pid> (the whole status file, however long the
 * kernel prints it, and the namespace inodes, ours and its) and judges it with
 * sup_judge_identity. Fills *out in every case. Returns what sup_judge_identity returns, or
 * -errno when the evidence could not be read: -E2BIG for a status longer than the kernel can
 * print (WIRE_STATUS_MAX_BYTES; too long for us), -ENOMEM, or what reading /proc said.
 */
int sup_check_identity(pid_t pid, const struct sup_expect *want, const struct wire_identity *claimed,
		       struct sup_identity *out);

/*
 * Judges a worker's identity from the text of its status file (len bytes) and the namespace
 * inodes (ours, its, in sup_ns_names order) against *want: uids and gids are the expected host
 * ids (and, when the supervisor is in the initial user namespace, never 0; in a nested one, 0
 * is the namespace's own root, an unprivileged host user); every capability set equals
 * want->caps (empty by default); NoNewPrivs 1; Seccomp 2 with at least one filter; a nested pid
 * namespace in which the worker is pid 1 (its innermost NSpid value); each namespace differs
 * from ours where the policy asks for a new one and is ours where the policy shares it. Then it
 * compares the worker's claim (inside view), when claimed is not NULL. Fills *out in every case.
 * Returns 0 when the identity holds, -EPERM when a check failed (out->failure says the first),
 * or -EBADMSG when the status text does not parse.
 */
int sup_judge_identity(const char *status, size_t len, const uint64_t ns_self[SUP_N_NS],
		       const uint64_t ns_worker[SUP_N_NS], const struct sup_expect *want,
		       const struct wire_identity *claimed, struct sup_identity *out);
