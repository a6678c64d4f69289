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

/*
 * How the sandbox's first process enters the cgroup without being migrated into it. A
 * migration (a pid written to cgroup.procs) write-locks a global per-cpu rwsem whose writer
 * waits for an RCU grace period: 5 to 20 ms on an idle host, the largest single cost of a
 * launch. Instead, on v2 the process is created inside the cgroup (clone3 with
 * CLONE_INTO_CGROUP and clone_fd); on v1 the new process writes "0" to each hierarchy's
 * "tasks" file itself, which moves only the calling thread and so skips that lock (Linux
 * elides it for a thread moving itself; an older kernel takes it, and is only slower). The
 * files are opened here by the supervisor: cgroup v1 checks the opener's credentials.
 */
struct sbx_cg_join {
	int clone_fd;            /* v2: the cgroup directory (O_PATH), or -1 */
	int tasks_fd[SBX_CG_N];  /* v1: each distinct hierarchy's "tasks" (write-only), or -1 */
};

/* Opens what the child needs to join cg. Returns 0 or -errno; *out is all -1 on failure. */
int sbx_cgroup_open_join(const struct sbx_cgroup *cg, struct sbx_cg_join *out);

/* Closes every fd in j and sets it to -1. Safe to call twice. */
void sbx_cgroup_close_join(struct sbx_cg_join *j);

/* Child side, v1: moves the calling (single-threaded) process into every hierarchy of j. */
int sbx_cgroup_join_self(const struct sbx_cg_join *j);

/* Moves pid into the cgroup (every hierarchy): the fallback when the join above was not used. */
int sbx_cgroup_attach(const struct sbx_cgroup *cg, pid_t pid);

/*
 * Whether the kernel lists pid in every hierarchy's cgroup.procs of cg: 1 when it does, 0
 * when some hierarchy lacks it, or -errno.
 */
int sbx_cgroup_holds(const struct sbx_cgroup *cg, pid_t pid);

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
