/* SPDX-License-Identifier: MIT */
/*
 * A per-sandbox cgroup: created and removed by the supervisor, on cgroup v2 (warden's own
 * subtree at the top of the hierarchy, or a subtree delegated to it) or v1 (memory, pids, cpu
 * and cpuacct hierarchies).
 */
#pragma once

#include <limits.h>
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
	bool oom_group;         /* v2: memory.oom.group is 1 (an OOM kill takes every process) */
};

/* What a cgroup measured; fields the hierarchy cannot report are left 0 with the flag off. */
struct sbx_cg_stats {
	uint64_t memory_peak_bytes;
	uint64_t cpu_usec;
	uint64_t oom_kills;
	uint64_t oom_group_kills; /* v2 memory.events oom_group_kill (Linux 5.17+), else 0 */
	uint64_t pids_max_events;
	bool have_memory_peak;
	bool have_cpu;
	bool oom_group;           /* copied from the cgroup */
};

/*
 * Whether the kernel's OOM killer killed every process of the cgroup at once (v2 with
 * memory.oom.group), the worker included: then the worker could not report the command's end.
 */
bool sbx_cgroup_group_oom_killed(const struct sbx_cg_stats *s);

/* Where the sandbox cgroups of this host go (sbx_cgroup_place). */
enum sbx_cg_where {
	SBX_CG_NOWHERE,  /* no cgroup hierarchy is mounted */
	SBX_CG_V1,       /* v1: below warden's own cgroup in each hierarchy */
	SBX_CG_V2_TOP,   /* v2: warden's own subtree at the top, SBX_CG_V2_TOP_DIR */
	SBX_CG_V2_OWN,   /* v2: below warden's own cgroup (delegated to it, or a namespace's) */
	SBX_CG_V2_SCOPE, /* v2: below a scope the user's systemd starts for warden (sdscope.h) */
};

#define SBX_CG_V2_TOP_DIR "/sys/fs/cgroup/warden"

struct sbx_cg_place {
	enum sbx_cg_where where;
	char own[PATH_MAX];     /* warden's cgroup as /proc/self/cgroup names it (v1: memory's) */
	char base[PATH_MAX];    /* v2: the directory the sandbox cgroups are made in ("" for
				 * SBX_CG_V2_SCOPE until the scope exists) */
	bool delegated;         /* v2: own is delegated to warden (mark says how that is known) */
	bool shared;            /* v2: own holds processes other than warden */
	const char *mark;       /* v2: how delegation was (or was not) found; static storage,
				 * valid until the next sbx_cgroup_place */
	const char *why;        /* static text: why this placement */
	char systemd[108];      /* v2: the user's systemd's socket, "" when none was found */
};

/*
 * Decides where sandbox cgroups go, without changing anything (on v2 it may ask the user's
 * systemd a question, below). In order, on v2:
 *  - warden's own cgroup when it is delegated to warden and warden is alone in it. Delegated
 *    means: systemd's delegate xattr (trusted.delegate or user.delegate) is "1"; or warden
 *    asked for that very scope itself (SBX_CG_V2_SCOPE, earlier in this process); or, when
 *    warden may write the cgroup's cgroup.procs and cgroup.subtree_control but finds no
 *    xattr, the user's systemd says Delegate=yes for the unit that holds it (sdscope.h):
 *    systemd 252's user manager (Debian 12) marks no delegated cgroup with an xattr, and
 *    ownership proves nothing there, since a user manager's every cgroup belongs to the user
 *    and systemd rewrites the controllers of the ones it did not delegate;
 *  - warden's own subtree at the top when warden may manage the root cgroup (root, and the
 *    hierarchy's top is the kernel's root cgroup rather than a cgroup namespace's): its own
 *    cgroup (a systemd service, a login session) holds processes, so the no-internal-processes
 *    rule forbids controllers below it, and warden moves no process of the unit or session
 *    that started it. The root cgroup is exempt from that rule;
 *  - a scope of its own from the user's systemd when one is reachable (sbx_sd_find): warden
 *    asks for a transient scope with Delegate=yes holding only itself, as
 *    `systemd-run --user --scope -p Delegate=yes` would;
 *  - otherwise below its own cgroup, which must then be delegated to it some other way (a
 *    cgroup namespace's top, in a container).
 * Returns 0 or -errno.
 */
int sbx_cgroup_place(struct sbx_cg_place *out);

/* Zeroed storage with every fd -1. */
void sbx_cgroup_init(struct sbx_cgroup *cg);

/*
 * Creates a cgroup named name where sbx_cgroup_place says and applies pol's memory, pids and
 * cpu limits. For SBX_CG_V2_SCOPE it first asks the user's systemd for the scope, which moves
 * this process (and only it) there, and checks /proc/self/cgroup that it did. Returns 0, or
 * -errno with *out_what naming the step (static storage, valid until the next call). On
 * failure anything created is removed again (a v2 top subtree stays, for the next run, and so
 * does a scope systemd started: it ends with this process).
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
