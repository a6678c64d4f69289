/* SPDX-License-Identifier: MIT */
/*
 * confined: what an evaluation reads of what a sandbox wrote, it reads in a confined child,
 * never in the privileged supervisor (docs/eval.md, "Who reads what").
 *
 *   warden (root, or the user)          the judge child (SUP_RUNDIR_OWNER, or the user)
 *   --------------------------          -----------------------------------------------
 *   resolves and opens the files   -->  inherits only those fds and one pipe; no
 *   (openat2 RESOLVE_BENEATH |          capabilities, no_new_privs, not dumpable, a
 *    RESOLVE_NO_SYMLINKS)               filter of read, write to the pipe, fstat and
 *                                       memory calls (sandbox/judge.c)
 *   decodes the answer strictly    <--  parses JSON, runs regexes, reads the record, and
 *   (eval/verdict.c), or fails          writes RESULT frames or one summary to the pipe
 *   closed
 *
 * ev_judge_static() judges a task's static criteria there; ev_read_folder() reads a run
 * folder for `warden grade` there, before the trust gate. ev_confined_run() is the runner
 * both use (and the privileged tests, to prove what such a child can and cannot do).
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

struct ev_confined {
	struct ev_confined_ids ids;
	const int *read_fds;   /* what the child keeps to read (borrowed), n_read_fds of them */
	size_t n_read_fds;
	size_t max_out;        /* the most the child may write; one byte more kills it */
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
 * or -errno becoming its exit status 0 or 1. Reads what the child writes, then reaps it.
 * Returns 0 when it exited 0 having written at most c->max_out bytes, with out->buf (the
 * caller frees it) and out->len; -ECHILD when it ended otherwise (killed by a signal, say
 * SIGSYS from the filter; a status other than 0; or it could not confine itself), -EMSGSIZE
 * when it wrote more (it is killed), or another -errno of pipe, fork or read; each with a
 * one-line reason naming what (e.g. "the criteria judge") in why, and *out untouched.
 */
int ev_confined_run(const struct ev_confined *c, const char *what, int (*fn)(void *arg, int out_fd),
		    void *arg, struct ev_confined_out *out, char *why, size_t why_len);

/*
 * Judges every static criterion of task (borrowed) against the workspace ws (borrowed, an
 * O_PATH directory fd) in one confined child run as ids: the supervisor opens (sup_crit_open),
 * the child judges (sup_crit_judge_static) and answers with RESULT frames, and the
 * supervisor reads them with ev_verdict_open_all() under a key drawn for this judge alone.
 * Fills results[i] for each static criterion i (command criteria are left alone); when the
 * child fails or its answer does not decode, every static criterion is an error naming why.
 */
void ev_judge_static(const struct ev_confined_ids *ids, const struct pol_task *task, int ws,
		     struct sup_crit_result results[TASK_MAX_CRITERIA]);

/*
 * Reads the run folder dirfd (borrowed; sup_rundir_open made it) for `warden grade` in a
 * confined child run as ids: the supervisor opens record.json, agent.stdout and agent.stderr
 * (regular files only, never through a symlink) and hands them over; the child parses the
 * record strictly (pol_evrec_parse), checks that each stream file holds the bytes the record
 * says were kept, and answers with a struct ev_folder, which the supervisor decodes with
 * ev_folder_decode(). Returns 0 with *out filled (release with ev_folder_done); -EPERM when
 * the folder is refused, -EBADMSG when the answer does not decode, or another -errno; each
 * with why ("record.json is invalid: ..."), *out untouched.
 */
int ev_read_folder(const struct ev_confined_ids *ids, int dirfd, struct ev_folder *out, char *why,
		   size_t why_len);
