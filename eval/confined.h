/* SPDX-License-Identifier: MIT */
/*
 * confined: what an evaluation reads of what a sandbox wrote, it reads in a confined child,
 * never in the privileged supervisor (docs/eval.md, "Who reads what").
 *
 *   warden (root, or the user)          the judge child (SUP_RUNDIR_OWNER, or the user)
 *   --------------------------          -----------------------------------------------
 *   resolves and opens the files   -->  inherits only those fds and one pipe; no
 *   (openat2 RESOLVE_BENEATH |          capabilities, no_new_privs, not dumpable, a
 *    RESOLVE_NO_SYMLINKS)               filter of read, write to the pipe and memory
 *                                       calls (sandbox/judge.c)
 *   decodes the answer strictly    <--  parses JSON, runs regexes, reads the record, and
 *   (eval/verdict.c), or fails          writes one RESULT frame or one summary to the pipe
 *   closed
 *
 * ev_judge_static() judges a task's static criteria there, one child per criterion, and
 * ev_judge_command() a command criterion's stdout check; ev_read_folder() reads a run folder
 * for `warden grade` there, before the trust gate. ev_confined_run() is the runner all three
 * use (and the privileged tests, to prove what such a child can and cannot do). No child
 * outlives its deadline (EV_CONFINED_DEADLINE_MS), and a stop signal the caller holds blocked
 * ends the wait at once.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "criteria.h"
#include "verdict.h"

/* Who a confined child runs as. */
struct ev_confined_ids {
	bool privileged;   /* warden's privilege mode */
	uint32_t uid, gid; /* privileged: the id it becomes (never 0) */
};

/*
 * The ids of the children of a run folder: privileged, SUP_RUNDIR_OWNER, the owner of its
 * workspace; else the user (who owns it then).
 */
struct ev_confined_ids ev_confined_ids_for(bool privileged);

/*
 * The longest a confined child may run, from fork to exit, by the monotonic clock: 60 s. A
 * judge of one criterion needs a fraction of a second for the largest file it reads (16 MiB);
 * the kernel's CPU limit (SBX_JUDGE_CPU_SECONDS) does not count while a child is stopped.
 */
#define EV_CONFINED_DEADLINE_MS 60000u

struct ev_confined {
	struct ev_confined_ids ids;
	const int *read_fds;   /* what the child keeps to read (borrowed), n_read_fds of them */
	size_t n_read_fds;
	size_t max_out;        /* the most the child may write; one byte more kills it */
	unsigned deadline_ms;  /* 0: EV_CONFINED_DEADLINE_MS (tests give a shorter one) */
	/* Called in the parent once the child exists, before its answer is read (tests). */
	void (*on_spawn)(void *ctx, pid_t pid);
	void *on_spawn_ctx;
};

/* What a child answered. */
struct ev_confined_out {
	uint8_t *buf;  /* owned; NULL when it wrote nothing */
	size_t len;
};

/*
 * Forks a child that confines itself (sbx_judge_confine: c's ids, c's fds and the pipe it
 * answers on, the filter compiled here beforehand) and then returns fn(arg, out_fd), fn's 0
 * or -errno becoming its exit status 0 or 1. Reads what the child writes (poll, never a
 * blocking read) until it has exited, then reaps it; a child still running at its deadline
 * (c->deadline_ms) is killed and reaped. Returns 0 when it exited 0 having written at most
 * c->max_out bytes, with out->buf (the caller frees it) and out->len. Otherwise, the child
 * killed and reaped in every case, and a one-line reason naming what (e.g. "the judge of
 * criteria[2]") in why and *out untouched:
 *  -ETIMEDOUT  it took too long while busy: the kernel killed it at its CPU limit (SIGXCPU,
 *              or SIGKILL at the hard limit, having used that CPU time), or it ran past its
 *              deadline having had at least a quarter of the time on a CPU;
 *  -ETIME      it was held up past its deadline: stopped (SIGSTOP from someone else), or
 *              given less than a quarter of the time on a CPU;
 *  -EINTR      SIGINT, SIGTERM or SIGHUP, blocked by the caller (ev_stop_block), became
 *              pending; the signal stays pending, for ev_stop_check();
 *  -ECHILD     it ended otherwise (killed by a signal, say SIGSYS from the filter; a status
 *              other than 0; or it could not confine itself);
 *  -EMSGSIZE   it wrote more than c->max_out bytes;
 *  or another -errno of pipe, signalfd, fork, pidfd_open, poll or read.
 */
int ev_confined_run(const struct ev_confined *c, const char *what, int (*fn)(void *arg, int out_fd),
		    void *arg, struct ev_confined_out *out, char *why, size_t why_len);

/*
 * Judges every static criterion of task (borrowed) against the workspace ws (borrowed, an
 * O_PATH directory fd), each in a confined child of its own run as ids: the supervisor opens
 * (sup_crit_open), the child judges (sup_crit_judge_static) and answers with one RESULT frame,
 * and the supervisor reads it with ev_verdict_open_all() under a key drawn for that child
 * alone. Fills results[i] for each static criterion i (command criteria are left alone):
 *  - the verdict, passed decided here from the score and the criterion's pass_threshold;
 *  - score 0 (evaluated, a FAILURE of that criterion) when its child, reading a file the
 *    agent left, was killed for the time it took (-ETIMEDOUT above): what the agent can cause
 *    counts against it, never as an error of the run;
 *  - an error naming why when its child failed otherwise (held up, died, answered out of
 *    form): a fault of warden's or the host's, never the agent's pass or failure;
 *  - after a stop signal (-EINTR above), the rest an error "not judged: interrupted".
 * One child per criterion, so that one criterion's file costs no other criterion its
 * verdict, and a child that is killed is known to have been judging that criterion.
 */
void ev_judge_static(const struct ev_confined_ids *ids, const struct pol_task *task, int ws,
		     struct sup_crit_result results[TASK_MAX_CRITERIA]);

/*
 * Judges the command criterion c (borrowed; criteria[index] of its task) from o (borrowed:
 * how its sandbox ended and the stdout it captured) into *res. Without a stdout check it is
 * sup_crit_judge_command() here, since nothing the command printed is read; with one (exact,
 * contains, regex) that runs in a confined child run as ids, which reads o->out from the
 * memory it inherits and answers as ev_judge_static()'s children do, with the same outcomes:
 * a child killed for the time the check took scores 0, any other failure is an error.
 */
void ev_judge_command(const struct ev_confined_ids *ids, const struct pol_task_criterion *c,
		      size_t index, const struct sup_crit_outcome *o, struct sup_crit_result *res);

/*
 * Reads the run folder dirfd (borrowed; sup_rundir_open made it) for `warden grade` in a
 * confined child run as ids: the supervisor opens record.json, agent.stdout and agent.stderr
 * (regular files only, never through a symlink) and hands them over; the child parses the
 * record strictly (pol_evrec_parse), checks that each stream file holds the bytes the record
 * says were kept, and answers with a struct ev_folder, which the supervisor decodes with
 * ev_folder_decode(). Returns 0 with *out filled (release with ev_folder_done); -EPERM when
 * the folder is refused, -EBADMSG when the answer does not decode, or another -errno (those
 * of ev_confined_run(): -EINTR for a stop signal, -ETIME or -ETIMEDOUT past the deadline,
 * ...); each with why ("record.json is invalid: ..."), *out untouched.
 */
int ev_read_folder(const struct ev_confined_ids *ids, int dirfd, struct ev_folder *out, char *why,
		   size_t why_len);
