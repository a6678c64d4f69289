/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the tests/reliability suite, on top of the tests/priv harness (harness.h): what
 * a run leaves behind on the host (cgroups, host id locks, network namespaces, zombies, mounts,
 * descriptors), the state of a record folder, the worker of a running warden, and a quiet
 * spawn of warden that reports the supervisor's rusage.
 *
 * Host-wide counts can move because of sandboxes that are not ours (another test program, or
 * another user of the machine). Two things keep the assertions exact anyway: what can be tied
 * to one run is checked for that run (its cgroup is named after its supervisor's pid), and
 * process-based counts are scoped to this program's own cgroup subtree (a leaked sandbox
 * process cannot leave it: moving a process to another cgroup needs privilege the sandbox
 * lacks), when this program has one below the root.
 */
#pragma once

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "harness.h"

/* Sleeps ms milliseconds. */
void rel_sleep_ms(unsigned ms);

/*
 * Moves this process into a mount namespace of its own, every mount private, so that the
 * test can mount (a small tmpfs, say) without touching the host's mount table. Warden runs
 * started afterwards inherit it. Fails the test.
 */
void rel_private_mounts(void);

/* The cgroup directories below which warden creates its per-sandbox cgroups. */
struct rel_cgroups {
	int n;                        /* 1 (v2) or up to 4 (v1: memory, pids, cpu, cpuacct) */
	int version;
	char parent[4][PATH_MAX];
};

/* Reads /proc/self/cgroup and the mounts the way warden does. Fails the test. */
void rel_cgroups_find(struct rel_cgroups *cg);

/*
 * Counts the warden-<pid>-<hex> directories in every parent: all of them (owner 0), only
 * those of supervisor pid owner (owner > 0), or only those whose supervisor is gone
 * (owner < 0: stale). When names is not NULL, the names found are appended (len bytes).
 */
int rel_cgroups_count(const struct rel_cgroups *cg, pid_t owner, char *names, size_t len);

/* Like rel_cgroups_count, for the cgroups of any of the n supervisors in owners. */
int rel_cgroups_count_of(const struct rel_cgroups *cg, const pid_t *owners, size_t n);

/* The number of processes listed in cgroup.procs of supervisor owner's cgroups. */
int rel_cgroups_procs(const struct rel_cgroups *cg, pid_t owner);

/* Host id lock files: how many entries, and how many of them some process holds an flock on. */
struct rel_ids {
	int total;
	int held;
};
void rel_ids_count(struct rel_ids *out);
/* The same, for the entries of ids base .. base + count - 1 only. */
void rel_ids_count_range(uint32_t base, uint32_t count, struct rel_ids *out);

/* State of TH_IDS_DIR/<id>: -1 absent, 0 present and not locked, 1 present and locked. */
int rel_id_state(uint32_t id);

/*
 * Removes TH_IDS_DIR/<id> if nobody holds it, the way a supervisor releases its id (flock,
 * check the name still leads to the locked file, unlink, unlock). Returns true when removed.
 */
bool rel_id_remove_stale(uint32_t id);

/*
 * True when pid belongs to this program's cgroup subtree (the deepest of its cgroup paths),
 * or when this program sits at the root of every hierarchy (then every process counts).
 */
bool rel_pid_in_scope(pid_t pid);

/* Distinct network namespaces of the processes in scope (rel_pid_in_scope). */
int rel_count_netns(void);
/* Distinct network namespaces of every process on the host. */
int rel_count_netns_host(void);
/* Zombies whose parent is in scope. */
int rel_count_zombies(void);
/* Zombies anywhere on the host. */
int rel_count_zombies_host(void);
/* This process's open descriptors. */
int rel_count_fds(void);
/* Lines of /proc/self/mountinfo. */
int rel_count_mounts(void);

/* The state of a --record folder. */
enum rel_record {
	REL_RECORD_ABSENT,  /* no record.json */
	REL_RECORD_VALID,   /* record.json is a JSON object */
	REL_RECORD_INVALID, /* record.json exists but does not parse: half-written */
};

/*
 * Looks at dir/record.json; with out != NULL and a valid record, *out gets the parsed JSON
 * (caller frees). *temps (when not NULL) gets the number of ".record.json.*" temporary files
 * left in dir (0 when dir does not exist).
 */
enum rel_record rel_record_state(const char *dir, cJSON **out, int *temps);

/*
 * The worker of the running warden supervisor: its child whose NSpid ends in 1 (pid 1 of
 * the sandbox's pid namespace). 0 when there is none.
 */
pid_t rel_find_worker(pid_t warden);

/* The last field of the NSpid line of pid's status; -1 when unreadable. */
long rel_nspid_inner(pid_t pid);

/* The real uid of pid from its status; -1 when unreadable. */
long rel_uid_of(pid_t pid);

/*
 * The state letter ('R', 'S', 'Z', ...) and the parent of pid from /proc/PID/stat, into
 * *out_state and, when not NULL, *out_ppid. Returns false, writing nothing, when unreadable.
 */
bool rel_proc_stat(pid_t pid, char *out_state, pid_t *out_ppid);

/*
 * Waits up to ms for th_count_procs(marker, argv0_suffix, exclude) to reach want (or more
 * with at_least). Returns the last count.
 */
int rel_wait_procs(const char *marker, const char *argv0_suffix, pid_t exclude, int want,
		   bool at_least, unsigned ms);

/* A process started by rel_spawn: stdin /dev/null, stdout and stderr kept in memfds. */
struct rel_run {
	pid_t pid;
	int pidfd;
	int outfd, errfd;
	uint64_t t0;
};

/* A completed rel_run. */
struct rel_done {
	int code;               /* as th_out.code: exit status, 128+N, -1 after the hard timeout */
	bool hard_timeout;
	uint64_t elapsed_ms;
	pid_t child;            /* from rel-rusage's report (rel_spawn_measured): the command's pid */
	long maxrss_kib;        /* and its ru_maxrss; -1 without a report */
	char out[1024];         /* the start of its stdout */
	char err[4096];         /* the start of its stderr */
};

/*
 * Starts what th_spawn would start for o and cmd (th_exec_build: the argument vector and the
 * environment) in its own process group, stdout and stderr into memfds. Unlike th_spawn, stdin
 * is /dev/null and the working directory / whatever o says, and TH_WARDEN_PID stays as it is.
 * Returns 0 or -errno.
 */
int rel_spawn(const struct th_opts *o, const char *const *cmd, struct rel_run *r);

/*
 * rel_spawn through rel-rusage ($REL_RUSAGE, which replaces o->prefix), which reports the
 * peak RSS of what it runs: see rusage.c for why the test program cannot measure it itself.
 */
int rel_spawn_measured(const struct th_opts *o, const char *const *cmd, struct rel_run *r);

/* Waits for r up to timeout_ms (then SIGKILLs its process group) and reaps it. */
void rel_reap(struct rel_run *r, unsigned timeout_ms, struct rel_done *d);
