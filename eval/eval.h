/* SPDX-License-Identifier: MIT */
/*
 * eval: the phases of an evaluation run (docs/eval.md), shared by `warden eval`, which runs
 * them all, and `warden grade`, which runs only grade and teardown on a recorded run.
 *
 * Every command runs through sup_run() in a fresh sandbox of the task's one policy: setup
 * steps write the workspace directly; the agent's and teardown's writes are a changeset that
 * the apply rules bring into the workspace (supervisor/apply.c); command criteria see it
 * through a throwaway overlay, with the reference read-only at /reference; teardown sees
 * both. Between the agent and the criteria the workspace is settled: nothing set-id or
 * special is left in it (sup_rundir_scrub). The verdict comes from exit codes, pipes the
 * supervisor owns and the workspace as a confined judge reads it from files the supervisor
 * opened (eval/criteria.c, eval/confined.c), never from a file the agent could write
 * standing for a verdict.
 */
#pragma once

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "criteria.h"
#include "run.h"
#include "task.h"
#include "verdict.h"

/* Exit codes of `warden eval` and `warden grade` (docs/eval.md). */
#define EV_EXIT_SUCCESS 0
#define EV_EXIT_FAILURE 1   /* FAILURE or TIMEOUT */
#define EV_EXIT_ERROR 2     /* ERROR, SETUP_FAILED, bad usage, a task that does not validate */
#define EV_EXIT_REFUSED 3   /* the trust gate refused */
#define EV_EXIT_HOST 4      /* the host cannot provide the isolation asked for */
/* Interrupted by signal N (SIGINT, SIGTERM or SIGHUP): 128 + N, as a shell reports it. */
#define EV_EXIT_SIGNAL_BASE 128

/* The cap on each of the agent's streams when the policy's limits.output is 0. */
#define EV_DEFAULT_OUTPUT_CAP (16u * 1024u * 1024u)
/* How much of a command criterion's stdout is kept for its check (and of stderr for the log). */
#define EV_CRITERION_OUTPUT_CAP (1024u * 1024u)

/* EV_FAILURE stays last: the run folder reader's answer checks a status against it. */
enum ev_status {
	EV_SETUP_FAILED,
	EV_ERROR,
	EV_TIMEOUT,
	EV_NOT_GRADED,
	EV_INTERRUPTED,
	EV_SUCCESS,
	EV_FAILURE,
};

const char *ev_status_name(enum ev_status s);

/* Stamps: gaps between phases, written to the record (docs/eval.md). */
enum ev_stamp {
	EV_STAMP_GRADED_WITHOUT_SETUP = 1u << 0,
	EV_STAMP_REGRADED = 1u << 1,
	EV_STAMP_OUTPUT_TRUNCATED = 1u << 2,
	EV_STAMP_TEARDOWN_FAILED = 1u << 3,
	EV_STAMP_REFERENCE_MISSING = 1u << 4,
	EV_STAMP_NO_CGROUP = 1u << 5,
};

/* One command in one sandbox, and what became of it. */
struct ev_step {
	bool ran;                   /* sup_run was called */
	struct sup_run_result res;
};

struct ev_criterion {
	struct sup_crit_result result;
	struct ev_step step;        /* command criteria */
};

/* One evaluation run: the task, its folder and everything each phase found. */
struct ev_run {
	const struct pol_task *task;  /* borrowed */
	char task_digest[72];
	char policy_digest[72];
	const char *weakenings[16];
	char run_dir[4096];           /* as given or created */
	char run_id[160];
	int dirfd;                    /* the run folder (owned) */
	char workspace[4200];         /* run_dir/workspace */
	struct timespec created;
	bool no_grade;
	bool graded_by_grade;         /* `warden grade`, not `eval` */
	bool host_failed;             /* a sandbox could not be built: exit 4 */
	char kernel[65];
	bool privileged;
	int cgroup_version;

	/* setup */
	struct ev_step setup[TASK_MAX_STEPS];
	size_t n_setup_ran;
	bool setup_failed;
	uint64_t setup_ms;
	/* agent */
	struct ev_step agent;
	struct sup_sink agent_out, agent_err;
	/* reap */
	bool reap_ok;
	uint64_t reap_ms;
	/* settle: the workspace could not be made safe, so it was set aside and never graded */
	bool unsettled;
	char unsettled_why[640];
	/* grade */
	bool graded;
	bool grade_error;
	struct timespec grade_started;
	uint64_t grade_ms;
	struct ev_criterion crit[TASK_MAX_CRITERIA];
	uint32_t score_milli;
	/* teardown */
	struct ev_step teardown[TASK_MAX_STEPS];
	size_t n_teardown_ran;
	bool teardown_failed;
	uint64_t teardown_ms;

	uint32_t stamps;
	enum ev_status status;
	uint64_t grades;
	/* The signal (SIGINT, SIGTERM, SIGHUP) that stopped the run, or 0 (ev_stop_check). */
	int interrupted;
};

void ev_run_init(struct ev_run *ev);
void ev_run_done(struct ev_run *ev);

/*
 * Interruption. ev_stop_block() blocks SIGINT, SIGTERM and SIGHUP in the calling process (and
 * so in the children it forks), so that a stop request waits, pending, until a phase looks
 * at it instead of killing warden half-way through a record; sup_run takes such a signal as
 * its own and ends its sandbox (the result's reason is signaled, with no report of the
 * command). Returns 0 or -errno.
 *
 * ev_stop_check() records in ev->interrupted a stop signal that is pending (taking it) or
 * that ended the last sandbox step, and returns true once ev was interrupted.
 */
int ev_stop_block(void);
bool ev_stop_check(struct ev_run *ev);

/* The stop signals (docs/eval.md "Interruption"): SIGINT, SIGTERM and SIGHUP, into *set. */
void ev_stop_signals(sigset_t *set);

/*
 * Refuses a task whose policy would show the agent its grading material: a bind at or below
 * /reference, or a bind source that holds the reference folder or the task file. Returns 0
 * or -EPERM with why.
 */
int ev_check_exposure(const struct pol_task *task, char *why, size_t why_len);

/* Grade (criteria) then verdict then teardown; the agent phase must be done (or recorded). */
void ev_grade(struct ev_run *ev, int log_fd);
void ev_verdict(struct ev_run *ev);
void ev_teardown(struct ev_run *ev, int log_fd);

/* The exit code one run stands for (128 + N for a run interrupted by signal N). */
int ev_exit_code(const struct ev_run *ev);

/*
 * The record of ev as JSON (docs/eval.md). base, when not NULL, is what the run folder reader
 * found in the record being regraded (eval/confined.h): its setup, agent, reap, identity,
 * created_at, host and policy are carried over unchanged, as the reader printed them.
 */
cJSON *ev_record_json(const struct ev_run *ev, const struct ev_folder *base);

/* Writes the record atomically into the run folder. Returns 0 or -errno. */
int ev_record_write(const struct ev_run *ev, const struct ev_folder *base);

/* Opens a fresh log (grade.log, setup.log) to be renamed into place by ev_log_commit. */
int ev_log_open(int dirfd, const char *name, char *tmp, size_t tmp_len);
int ev_log_commit(int dirfd, int *fd, const char *tmp, const char *name);

/* One row of the --json summary of eval or grade (task_id may be NULL, run_dir NULL: null). */
void ev_summary_add(cJSON *arr, const char *task_id, const char *run_dir, const char *status,
		    bool graded, uint32_t score_milli, const char *error);
/* Prints the summary array to stdout (nothing when arr is NULL). */
void ev_summary_print(cJSON *arr);

/* Placeholders substituted element by element (docs/eval.md). Returns a new argv or NULL. */
char **ev_substitute(char *const *argv, size_t n, const char *task_id);
void ev_argv_free(char **argv);

/* Who names a task file, which decides how far its path is trusted (ev_load_task_from). */
enum ev_task_origin {
	EV_TASK_NAMED,     /* the user: `eval` and `check` operands, `grade --task` */
	EV_TASK_RECORDED,  /* a run folder's record (task.source), which anyone may have written */
};

/*
 * Loads an evaluation task file (bounded read; its policy file and what that extends go
 * through the supervisor's policy loader), as ev_load_task_from(path, EV_TASK_NAMED, ...)
 * without a digest.
 */
int ev_load_task(const char *path, struct pol_task **out, struct pol_diag *diag);

/*
 * Loads the task file path (borrowed) into *out, storing the digest of its bytes
 * (sup_digest_hex) in digest when that is not NULL. The file is opened with O_RDONLY |
 * O_NONBLOCK | O_NOCTTY (never waiting on a FIFO, never a controlling terminal) and must be a
 * regular file. EV_TASK_RECORDED adds, before a byte is read: O_NOFOLLOW; the path of the
 * file opened (read back from /proc/self/fd) must be path itself, so no symlink stands
 * anywhere in it; and the file must belong to root or to the invoking user, and be writable
 * by no one else (group write only for group 0 or the user's own group). With expect (and
 * digest) set, a file whose digest differs is not parsed at all. Returns 0 with *out set;
 * -EPERM when the file is refused for what it is or where it lies, with a reason phrase
 * ("is a FIFO, not a regular file ...") in diag->message and path in diag->file; -ESTALE for
 * another digest; -EINVAL or -E2BIG with *diag filled for a bad task; another -errno for a
 * file that cannot be read.
 */
int ev_load_task_from(const char *path, enum ev_task_origin origin, struct pol_task **out,
		      struct pol_diag *diag, char digest[72], const char *expect);

/* The commands (docs/eval.md); each returns its exit code. */
int ev_cmd_eval(int argc, char **argv);
int ev_cmd_grade(int argc, char **argv);
int ev_cmd_check(int argc, char **argv);
