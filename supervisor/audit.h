/* SPDX-License-Identifier: MIT */
/*
 * `warden audit`: build the sandbox a policy describes and check every guarantee from both
 * sides: the worker's probes inside, the kernel's view read by the supervisor outside.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "channel.h"

struct pol_policy;
struct sup_run_result;

enum sup_verdict {
	SUP_HELD,
	SUP_VIOLATED,
	SUP_NA,
};

struct sup_audit_row {
	char id[48];
	enum sup_verdict verdict;
	bool inside;           /* observed by a probe inside; otherwise read outside */
	char evidence[512];
};

#define SUP_AUDIT_MAX_ROWS 128

struct sup_audit {
	struct sup_audit_row rows[SUP_AUDIT_MAX_ROWS];
	size_t n_rows;
	int listen_fd;         /* host 127.0.0.1 listener the probes must not reach; -1 */
	uint16_t port;
	bool net_shared;       /* the policy shares the host network */

	/*
	 * fs.changeset: the host's workspace (an O_PATH directory sup_cmd_audit opens, or -1),
	 * the name the write-workspace probe uses (".warden-audit-PORT"), and what was seen.
	 */
	int ws_fd;
	char ws_name[32];
	bool ws_changes;       /* the run is in workspace mode changes */
	char ws_mount[336];    /* /workspace in the worker's mountinfo: "fstype (super options)" */
	bool ws_overlay;       /* that mount is an overlay */
	int ws_before;         /* fstatat of ws_name in the host's tree before the probes: 0 or
				  -errno */
	int ws_during;         /* the same once the probes ran, before any apply */
	int ws_after;          /* the same once the run ended (its changeset is never applied) */
	bool ws_probed;        /* the probe reported writing ws_name inside */
	char ws_probe[320];    /* what it reported */

	/* seccomp.setid: the worker's seccomp mode and filter count, as the kernel says. */
	unsigned seccomp_mode, seccomp_filters;
};

/* Empty audit, no listener yet, no workspace. */
void sup_audit_init(struct sup_audit *a);

/* Opens the host loopback listener (127.0.0.1, ephemeral port). Returns 0 or -errno. */
int sup_audit_listen(struct sup_audit *a);

/*
 * The outside view, while the sandbox is up and before the probes run: identity and
 * namespaces (from res->identity), the worker's mount table, interfaces, cgroup limits and
 * rlimits, read from /proc/<pid> and the cgroup by the supervisor itself.
 */
void sup_audit_outside(struct sup_audit *a, const struct pol_policy *pol, pid_t pid,
		       const struct sbx_cgroup *cg, const struct sup_run_result *res);

/* The inside view: maps each PROBE the worker sent to its guarantee and verdict. */
void sup_audit_inside(struct sup_audit *a, const struct pol_policy *pol,
		      const struct sup_probe *probes, size_t n);

/*
 * After teardown: nothing survived, the listener saw no connection (closes the listener);
 * the changeset row from what was seen before and res->changes, the report of the run's
 * changeset (which, for the audit's run, was not applied).
 */
void sup_audit_finish(struct sup_audit *a, const struct sup_run_result *res);

/*
 * fs.workspace-place: the checks `warden run` makes of a workspace (wspath.h), made on "/"
 * and "/etc" without building a sandbox; held when both are refused. unsafe holds the
 * policy's POL_UNSAFE_* bits (with workspace-anywhere the row is n/a).
 */
void sup_audit_workspace_place(struct sup_audit *a, uint32_t unsafe);

/* True when no row is violated. */
bool sup_audit_held(const struct sup_audit *a);

int sup_cmd_audit(int argc, char **argv);
