/* SPDX-License-Identifier: MIT */
/*
 * A per-sandbox cgroup: created and removed by the supervisor, on cgroup v2 (a delegated
 * subtree) or v1 (memory, pids, cpu and cpuacct hierarchies).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct pol_policy;

enum sbx_cg_ctl {
	SBX_CG_MEMORY,
	SBX_CG_PIDS,
	SBX_CG_CPU,
	SBX_CG_CPUACCT,
	SBX_CG_N,
};

struct sbx_cgroup {
	int version;            /* 1 or 2; 0 when none */
	int dirfd[SBX_CG_N];    /* v1: one directory per controller; v2: all equal */
	char *path[SBX_CG_N];   /* absolute paths, for messages and removal */
};

/* What a cgroup measured; fields the hierarchy cannot report are left 0 with the flag off. */
struct sbx_cg_stats {
	uint64_t memory_peak_bytes;
	uint64_t cpu_usec;
	uint64_t oom_kills;
	uint64_t pids_max_events;
	bool have_memory_peak;
	bool have_cpu;
};

/* Zeroed storage with every fd -1. */
void sbx_cgroup_init(struct sbx_cgroup *cg);

/*
 * Creates a cgroup named name below the supervisor's own cgroup and applies pol's memory,
 * pids and cpu limits. Returns 0, or -errno with *out_what naming the step (a static string).
 * On failure anything created is removed again.
 */
int sbx_cgroup_create(struct sbx_cgroup *cg, const char *name, const struct pol_policy *pol,
		      const char **out_what);

/* Moves pid into the cgroup (every hierarchy). Returns 0 or -errno. */
int sbx_cgroup_attach(const struct sbx_cgroup *cg, pid_t pid);

/* Reads what the cgroup measured. Returns 0 or -errno. */
int sbx_cgroup_stats(const struct sbx_cgroup *cg, struct sbx_cg_stats *out);

/*
 * Kills every process in the cgroup and waits (bounded) until it is empty. Returns 0 when
 * empty, -EBUSY when processes remain after the bound, or another -errno.
 */
int sbx_cgroup_kill(const struct sbx_cgroup *cg);

/* Removes the cgroup directories and closes the fds. Safe to call twice. Returns 0 or -errno. */
int sbx_cgroup_destroy(struct sbx_cgroup *cg);

/* Counts the processes in the cgroup (its memory or v2 directory). Returns >= 0 or -errno. */
int sbx_cgroup_count_procs(const struct sbx_cgroup *cg);
