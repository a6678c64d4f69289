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
	char evidence[256];
};

#define SUP_AUDIT_MAX_ROWS 128

struct sup_audit {
	struct sup_audit_row rows[SUP_AUDIT_MAX_ROWS];
	size_t n_rows;
	int listen_fd;         /* host 127.0.0.1 listener the probes must not reach; -1 */
	uint16_t port;
	bool net_shared;       /* the policy shares the host network */
};

/* Empty audit, no listener yet. */
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

/* After teardown: nothing survived, the listener saw no connection. Closes the listener. */
void sup_audit_finish(struct sup_audit *a, const struct sup_run_result *res);

/* True when no row is violated. */
bool sup_audit_held(const struct sup_audit *a);

int sup_cmd_audit(int argc, char **argv);
