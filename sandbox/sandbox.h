/* SPDX-License-Identifier: MIT */
/*
 * sandbox: the only code in warden that makes isolation syscalls.
 *
 * The supervisor prepares a struct sbx_config (every fd opened, every id chosen, the seccomp
 * filter compiled), then sbx_spawn() clones a child into new namespaces. The child runs
 * sbx_child_main(), which builds the filesystem, drops every privilege and finally execs the
 * worker through an fd opened beforehand. Nothing here logs above debug level; failures come
 * back as -errno plus a struct fail (common/fail.h) naming the step that failed.
 */
#pragma once

#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "fail.h"
#include "sbx-seccomp.h"

struct pol_policy;
struct sbx_cg_join;

/*
 * A workspace entry that mode direct binds read-only inside the sandbox, besides .git and the
 * policy's protect list: a placeholder the supervisor created for a missing protected path
 * (and removes afterwards), an existing non-directory standing in the way of one, the
 * directory a top-level .git file points to (and its commondir), or an existing top-level
 * HEAD (sbx_placeholders_create).
 */
struct sbx_placeholder {
	char *rel;       /* workspace-relative path */
	dev_t dev;
	ino_t ino;
	bool created;    /* made by us (an empty file or directory): remove it afterwards */
};

struct sbx_config {
	const struct pol_policy *pol;

	/* Privilege mode, decided once by the supervisor from its capabilities, never from euid. */
	bool privileged;
	uint32_t host_uid;        /* the host uid that the sandbox uid maps to */
	uint32_t host_gid;        /* the host gid that the sandbox gid maps to */

	int workspace_fd;         /* O_PATH directory fd of the host workspace */
	const char *workspace_path; /* its canonical path, re-resolved in the child's mount ns */
	int workspace_tree_fd;    /* detached (idmapped when privileged) tree of it, or -1 */
	int worker_fd;            /* O_PATH fd of the worker executable */
	int channel_fd;           /* the worker's end of the channel, becomes fd 3 */
	int sync_fd;              /* the child's end of the setup socket */
	const struct sbx_cg_join *cg_join; /* how the child enters its cgroup, or NULL (none) */

	const struct sbx_seccomp_prog *seccomp;
	char *const *worker_argv; /* argv for the worker, NULL-terminated */
	char *const *envp;        /* the sandbox environment, NULL-terminated */
	const sigset_t *old_mask; /* the signal mask to restore before exec */
	uint64_t caps_keep;       /* capabilities the policy keeps (mask); 0 = none */
	const struct sbx_placeholder *placeholders; /* bound read-only in the workspace */
	size_t n_placeholders;
	char *const *hidden;      /* workspace-relative paths masked (filesystem.hide, expanded) */
	size_t n_hidden;

	/* Evaluations (eval/eval.c); a plain run leaves these at -1, NULL and false. */
	int stdio_fds[3];         /* become the worker's fds 0, 1, 2; -1 keeps the supervisor's */
	const char *reference_path; /* host folder bound read-only at SBX_REFERENCE, or NULL */

	/*
	 * Workspace mode "changes", or a command whose writes vanish (eval's command criteria):
	 * the workspace is the overlay's read-only lower layer, and its upper/ and work/ folders
	 * live in this directory (a changeset's or a scratch layer/, owned by host_uid),
	 * re-resolved in the child's mount namespace and checked against the fd.
	 */
	int changes_layer_fd;     /* -1: no overlay */
	const char *changes_layer_path;
};

/* Inside the sandbox */
#define SBX_WORKSPACE "/workspace"
#define SBX_CHANNEL_FD 3
#define SBX_REFERENCE "/reference"

/*
 * Clones a child into new user, pid, mount, net, uts and ipc namespaces (the cgroup namespace
 * follows once it sits in its cgroup). The child runs sbx_child_main(cfg) and never returns.
 * With cfg->cg_join the child enters its cgroup without a migration (see struct sbx_cg_join):
 * born in it on v2, or joining it first thing on v1. *out_joined says whether that was
 * arranged; when it is false (no cg_join, or a kernel without CLONE_INTO_CGROUP) the caller
 * must move the child itself before releasing it. On success stores the child's pid and a
 * pidfd (close-on-exec) and returns 0; on failure returns -errno and leaves the outputs
 * untouched.
 */
int sbx_spawn(const struct sbx_config *cfg, pid_t *out_pid, int *out_pidfd, bool *out_joined);

/*
 * Writes the child's uid_map, gid_map (and setgroups when unprivileged) so that cfg->pol->uid
 * maps to cfg->host_uid. Returns 0 or -errno.
 */
int sbx_write_id_maps(const struct sbx_config *cfg, pid_t pid);

/*
 * Tells the child to go on (once the id maps, and the cgroup move when sbx_spawn left that to
 * the caller, are in place), then waits for it to exec the worker. Returns 0 when the child
 * exec'd; the child's -errno with f filled ("sandbox setup failed: " and its step) when it
 * reported a failed step; another -errno, with f saying so, on a transport failure.
 */
int sbx_release_child(int sync_fd, struct fail *f);

/*
 * Root mode: makes a detached, idmapped clone of the workspace in which files owned by
 * ws_uid/ws_gid on the host appear as owned by host_uid/host_gid (the sandbox user), so the
 * sandbox user can write there and what it creates belongs to the workspace's owner on the
 * host. Returns the tree fd (close-on-exec) or -errno.
 */
int sbx_idmap_workspace(int workspace_fd, uint32_t ws_uid, uint32_t ws_gid, uint32_t host_uid,
			uint32_t host_gid);

/*
 * Takes the workspace's lock: a file named after the workspace's device and inode in
 * lock_dir_fd (borrowed; a directory only warden writes), held shared for the whole run.
 * *out_alone says whether no other run held it at that moment (stale placeholders may then
 * be collected). Returns 0 with the lock fd (close-on-exec) or -errno.
 */
int sbx_workspace_lock(int lock_dir_fd, int workspace_fd, int *out_fd, bool *out_alone);

/*
 * Workspace mode direct, before the sandbox exists: lists what the sandbox must get read-only
 * beyond .git and the protect list, creating placeholders for what is missing, so that the
 * sandbox can create none of it:
 * - the top-level .git: an empty directory (mode 0555) when missing; when it is a gitfile
 *   ("gitdir: PATH"), the directory PATH names and that directory's "commondir", where they
 *   lie in the workspace (a missing one gets an empty directory at its first missing
 *   component); where they lie outside, nothing;
 * - the top-level HEAD when .git is missing or has no HEAD (so that the workspace cannot be
 *   made a bare repository): listed when it exists, else an empty directory;
 * - each protect entry that is missing (but those at or below .git, and those allow_create
 *   names): a placeholder at its first missing component, an empty directory when the entry
 *   ends in '/' or the component is not its last, else an empty file (mode 0444); where an
 *   existing non-directory already stands in the way, it is listed (not created).
 * Placeholders carry a mark naming this process. A placeholder another run made is adopted;
 * one left by a dead supervisor is replaced, but only when alone is true. Resolution inside
 * the workspace is fd-relative and refuses symlinks. Fails with -ELOOP when a gitfile's path
 * reaches the workspace through a symlink, -EINVAL when it names the workspace itself. On
 * success stores a new array in *out (free with sbx_placeholders_remove) and returns 0; on
 * failure removes what it created.
 */
int sbx_placeholders_create(int workspace_fd, const struct pol_policy *pol, bool alone,
			    struct sbx_placeholder **out, size_t *out_n);

/*
 * Frees the array from sbx_placeholders_create and, when this run is the last one on the
 * workspace (it can take lock_fd exclusively, or lock_fd is -1), removes the placeholders it
 * made or adopted (only those still empty files or directories with the same inode). Returns
 * the number that could not be removed (0 in the normal case).
 */
int sbx_placeholders_remove(int workspace_fd, int lock_fd, struct sbx_placeholder *ph, size_t n);

/* The child side. Never returns: execs the worker or _exit()s after reporting the failure. */
_Noreturn void sbx_child_main(const struct sbx_config *cfg);

/* net.c: brings the loopback link up in the current network namespace. Returns 0 or -errno. */
int sbx_net_lo_up(void);

/*
 * mount.c, in the child, in this order: sbx_mount_capture makes every mount private and
 * captures the host sources (policy binds, /etc entries, the workspace) as detached trees,
 * still with the child's original host credentials, so that a bind reads what the policy's
 * author could; sbx_mount_setup then (as the sandbox user) builds the new root from them and
 * pivots into it. Both return 0, or -errno with f naming the step that failed.
 */
int sbx_mount_capture(const struct sbx_config *cfg, struct fail *f);
int sbx_mount_setup(const struct sbx_config *cfg, struct fail *f);

/*
 * caps.c: locks securebits, reduces every capability set (effective, permitted, inheritable,
 * bounding, ambient) to exactly keep (a mask of CAP_* bits; 0 = none), verifies them by
 * reading them back, and sets no_new_privs. Returns 0, or -errno with f (may be NULL) naming
 * the step that failed.
 */
int sbx_caps_drop(uint64_t keep, struct fail *f);

/*
 * caps.c: this process's capability sets as masks, straight from the kernel (capget, and
 * prctl for the bounding and ambient sets), in this order: effective, permitted,
 * inheritable, bounding, ambient. Returns 0 or -errno.
 */
#define SBX_CAP_SETS 5
int sbx_caps_read(uint64_t out[SBX_CAP_SETS]);

/*
 * sbx_caps_drop for a caller that still passes a step buffer (sandbox/egress-jail.c): the
 * step's name goes to step (step_len bytes). Goes once that caller takes a struct fail.
 */
int sbx_drop_privileges(uint64_t keep, char *step, size_t step_len);

/*
 * caps.c, for the children that apply a changeset (supervisor/apply.c), as root: becomes
 * uid/gid (supplementary groups: gid alone) keeping only the capabilities in keep (a mask),
 * securebits locked and no_new_privs set. Returns 0 or -errno; the process must then exit
 * rather than go on with half its privilege.
 */
int sbx_become_owner(uint32_t uid, uint32_t gid, uint64_t keep);

/* The same without privilege to give up: no_new_privs only. Returns 0 or -errno. */
int sbx_drop_privileges_unprivileged(void);

/*
 * Maps capability names (lower case, without CAP_) to a mask. Returns 0, or -EINVAL for a name
 * this system does not know (*out untouched).
 */
int sbx_caps_mask(char *const *names, size_t n, uint64_t *out);
