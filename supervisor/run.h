/* SPDX-License-Identifier: MIT */
/*
 * `warden run`: one command in one sandbox, and what became of it.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cgroup.h"
#include "policy.h"
#include "host.h"
#include "identity.h"
#include "wire.h"
#include "apply.h"

/* Phases of a run, timed from the monotonic clock (docs/run.md, and bench/). */
enum sup_phase {
	SUP_PHASE_PREPARE,   /* policy, ids, workspace, cgroup, seccomp compile, fds */
	SUP_PHASE_SANDBOX,   /* clone, id maps, the child's setup up to exec of the worker */
	SUP_PHASE_HANDSHAKE, /* key, CHALLENGE, HELLO */
	SUP_PHASE_ATTEST,    /* reading the kernel's view of the worker */
	SUP_PHASE_COMMAND,   /* GO to EXITED: the command's own run (or the audit probes) */
	SUP_PHASE_TEARDOWN,  /* kill, cgroup emptied and read, removed, placeholders gone */
	SUP_PHASE_N,
};

extern const char *const sup_phase_names[SUP_PHASE_N];

/* Exit codes of `warden run` (see --help and docs/run.md). */
#define SUP_EXIT_TIMEOUT 124     /* the wall-clock limit killed the command */
#define SUP_EXIT_SETUP 125       /* warden failed before the command started */
#define SUP_EXIT_NOT_EXEC 126    /* the command was found but could not be executed */
#define SUP_EXIT_NOT_FOUND 127   /* the command was not found inside the sandbox */
#define SUP_EXIT_VIOLATION 123   /* the sandbox broke the protocol or failed attestation */

/* Why a run ended: a closed set, documented in docs/run.md and written to records. */
enum sup_reason {
	SUP_REASON_EXITED,
	SUP_REASON_SIGNALED,
	SUP_REASON_WALL_TIMEOUT,
	SUP_REASON_CPU_LIMIT,
	SUP_REASON_OOM,
	SUP_REASON_PIDS_LIMIT,
	SUP_REASON_OUTPUT_CAP,
	SUP_REASON_SETUP_FAILED,
	SUP_REASON_ATTESTATION_FAILED,
	SUP_REASON_PROTOCOL_VIOLATION,
	SUP_REASON_INTERNAL_ERROR, /* warden's own fault while the sandbox lived (exit 125) */
};

const char *sup_reason_name(enum sup_reason r);

/*
 * Where a captured output stream goes (evaluations): appended to fd, or kept in memory, up to
 * cap bytes; the rest is read (so the sandbox never blocks on a full pipe) and dropped, and
 * counted. sup_run fills the counters; the caller owns fd and frees buf.
 */
struct sup_sink {
	int fd;              /* file to append to, or -1 to keep the bytes in buf */
	uint64_t cap;        /* bytes kept at most */
	char *buf;           /* fd == -1: the kept bytes (malloc'ed by sup_run, NUL-terminated) */
	uint64_t kept;       /* bytes kept (written to fd or buf) */
	uint64_t total;      /* bytes the sandbox wrote */
	bool truncated;      /* total > kept */
	int error;           /* the first write error on fd (-errno), else 0 */
};

struct sup_run_opts {
	const char *policy_path;  /* NULL: the embedded default */
	const struct pol_policy *policy; /* non-NULL: this policy (borrowed), not policy_path */
	const char *policy_label; /* with policy: its name in records and messages */
	const char *workspace;    /* NULL: the current directory */
	const char *record_dir;   /* NULL: no record */
	uint64_t timeout_ms;      /* 0: the policy's wall limit */
	bool timeout_set;
	char **argv;              /* the command, NULL-terminated */
	struct sup_audit *audit;  /* non-NULL: run the audit probes instead of the command */
	bool ws_mode_set;         /* --workspace-mode: overrides the policy's workspace.mode */
	enum pol_ws_mode ws_mode;
	bool apply_set;           /* --apply: overrides the policy's workspace.apply */
	enum pol_ws_apply apply;

	/* Evaluations (eval/eval.c); a plain run leaves these NULL and false. */
	struct sup_sink *out, *err; /* non-NULL: capture stdout/stderr; stdin is /dev/null */
	char *const *env_force;   /* NAME=value entries that override the policy's, or NULL */
	char *const *env_extra;   /* NAME=value entries added unless the policy sets the name */
	bool no_env_pass;         /* ignore the policy's env.pass: no host variable gets in */
	const char *reference;    /* host folder bound read-only at /reference, or NULL */
	bool workspace_overlay;   /* the command's writes to the workspace vanish with it */
	bool direct_workspace;    /* workspace mode direct whatever the policy says */
	bool changes_workspace;   /* mode changes, applied safe, whatever the policy says */
};

struct sup_audit;

struct sup_run_result {
	enum sup_reason reason;
	int exit_code;                 /* what warden exits with */
	int status;                    /* exit status, when reason is exited */
	int signal;                    /* signal number, when signaled (or by a limit) */
	char error[640];               /* setup failure or violation, human-readable */

	bool have_exited;
	struct wire_exited exited;     /* the worker's report of the command, accepted */

	/*
	 * The worker's own end, in the kernel's words (waitid on its pidfd), and its claim about
	 * the command (EXITED), kept even when the run ended in a violation.
	 */
	bool worker_exit_known;
	int worker_exit_status;        /* its exit status, or -1 when a signal ended it */
	int worker_exit_signal;        /* the signal that ended it, or 0 */
	bool have_claim;
	struct wire_exited claim;

	/* --record: the folder, opened before anything ran (a zeroed result holds none). */
	bool have_record_fd;
	int record_fd;
	bool have_cg;
	struct sbx_cg_stats cg;
	int cg_version;                /* 0 when no cgroup was used */
	bool cg_emptied;               /* the cgroup was verified empty at the end */

	bool privileged;
	bool init_userns;              /* warden itself runs in the initial user namespace */
	uint32_t host_uid, host_gid;
	struct sup_identity identity;

	bool violated;
	uint64_t violation_frame;
	int violation_type;
	char violation_reason[160];

	char policy_source[PATH_MAX];
	char policy_digest[72];        /* "sha256:" + 64 hex */
	uint32_t unsafe;               /* the policy's opted-in weakenings */
	const char *weakenings[16];    /* weakenings in effect (static names), NULL-terminated */
	char caps_kept[256];           /* the policy's kept capabilities, comma-separated */

	struct timespec started_real, ended_real;
	uint64_t duration_ms;          /* from the monotonic clock */
	uint64_t phase_us[SUP_PHASE_N]; /* time spent in each phase, microseconds */
	uint64_t placeholders;         /* protected paths covered by a placeholder */
	uint64_t hidden;               /* workspace paths masked by filesystem.hide */
	struct sbx_host_facts host;    /* the host's capability facts (cheap probes) */
	char kernel[65];               /* uname release */

	/* Workspace mode changes: the run's changeset and what its end did with it. */
	char ws_fs[24];                /* the workspace's filesystem */
	bool ws_owner_id;              /* not idmappable: the sandbox runs as the workspace's owner */
	bool ws_copied;                /* not idmappable: the overlay's lower layer is a copy */
	bool changes_mode;
	char changes_id[40];           /* "" when no changeset was made */
	bool changes_kept;             /* something is pending in it */
	bool changes_applied;          /* the apply ran (policy workspace.apply safe) */
	int changes_error;             /* -errno when the end of the changeset failed */
	struct sup_chg_report changes; /* owned: free with sup_run_result_done */
};

/* Frees what a result owns (the changeset report, the record folder's fd). */
void sup_run_result_done(struct sup_run_result *res);

/* Runs opts->argv in a sandbox. Always fills *res; returns the exit code to use. */
int sup_run(const struct sup_run_opts *opts, struct sup_run_result *res);

/*
 * Opens the record folder dir for sup_record_write: created (0755) if its last component is
 * missing, and the whole path resolved with openat2(RESOLVE_NO_SYMLINKS), so that no symlink
 * anywhere in it (one planted by an earlier sandbox, say) can redirect root's write. sup_run
 * calls it before anything else, so that a bad --record refuses the run before the command
 * ran. Stores the fd (O_DIRECTORY, close-on-exec) in *out_fd and returns 0, or -errno.
 */
int sup_record_open(const char *dir, int *out_fd);

/*
 * Writes res as DIR/record.json atomically (temporary file, fsync, rename, fsync of DIR), in
 * the folder sup_run opened (res->record_fd), or else opened now by sup_record_open(dir).
 * Returns 0 or -errno.
 */
int sup_record_write(const char *dir, const struct sup_run_opts *opts,
		     const struct sup_run_result *res);

/* The identity evidence as run and eval records carry it (a new cJSON object, or NULL). */
struct cJSON;
struct cJSON *sup_identity_json(const struct sup_identity *id);
