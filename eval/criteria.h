/* SPDX-License-Identifier: MIT */
/*
 * criteria: what one evaluation criterion comes to (docs/eval.md, "Grading").
 *
 * The static checks (file_exists, file_absent, file_contains, file_matches, json_equals) come
 * in two halves, so that what the agent wrote is never read by a privileged process:
 *  - sup_crit_open(), in the supervisor: resolves the path relative to an fd of the
 *    workspace with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), notes what is there and,
 *    for the checks that read content, opens it for reading when it is a regular file of at
 *    most SUP_CRIT_MAX_FILE bytes (a FIFO or a device planted in the workspace is never
 *    opened for I/O). It reads no byte of any file.
 *  - sup_crit_judge_static(), in the judge (eval/confined.c: a child with no capabilities, no
 *    privilege it could regain, and a filter that leaves it read() on those fds and write()
 *    on its pipe): reads the opened file, bounded, and decides. A path that escapes or
 *    crosses a symlink scores 0 with the reason.
 * sup_crit_eval_static() is both halves in one process (the unit tests and fuzz targets).
 * The workspace is untrusted input: whatever the agent left there.
 *
 * A command criterion runs in a sandbox (eval/eval.c); this module only judges its
 * outcome against the criterion (exit code, stdout check). Its stdout is what the command
 * printed over the agent's work, so evaluations run a stdout check in a judge too
 * (ev_judge_command in eval/confined.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "task.h"

/* The most a static criterion reads of one file; a larger file scores 0 with the reason. */
#define SUP_CRIT_MAX_FILE (16u * 1024u * 1024u)

/*
 * A json_equals document is read by the strict JSON reader (eval/json-strict.h) with these
 * limits: objects and arrays nested at most this deep, numbers at most this many characters.
 */
#define SUP_CRIT_JSON_MAX_DEPTH 512u
#define SUP_CRIT_JSON_MAX_NUMBER 1024u

/* What one criterion came to. */
struct sup_crit_result {
	bool evaluated;        /* false: it could not be judged (error, or never run) */
	bool error;            /* a configuration error (an invalid pattern): the run is ERROR */
	uint32_t score_milli;  /* 0..1000; every check is pass/fail today: 0 or 1000 */
	bool passed;           /* score_milli >= the criterion's pass_threshold_milli */
	char details[512];     /* one line, printable: what was found, or why it scored 0 */
};

/* Where opening a file for reading failed, after its lookup succeeded. */
enum sup_crit_open_step {
	SUP_CRIT_OPEN_NONE = 0,  /* not attempted (not a content check, or nothing to read) */
	SUP_CRIT_OPEN_REOPEN,    /* open() through /proc/self/fd */
	SUP_CRIT_OPEN_STAT,      /* fstat() of what that gave */
	SUP_CRIT_OPEN_STALE,     /* it gave another file */
};

/*
 * What the supervisor found at a static criterion's path: everything the judge needs, and no
 * byte of the file. Caller-owned storage: sup_crit_input_init(), then sup_crit_open(), then
 * sup_crit_input_done() (which closes fd).
 */
struct sup_crit_input {
	int lookup_err;       /* 0, or the -errno of resolving the path beneath the workspace */
	mode_t mode;          /* with lookup_err 0: its type and mode (a symlink is S_IFLNK) */
	uint64_t size;        /* with lookup_err 0: its size */
	int fd;               /* content checks on a regular file within the cap: O_RDONLY, or -1 */
	enum sup_crit_open_step open_step; /* with fd -1 after a try: where it failed */
	int open_err;         /* -errno of that step */
};

void sup_crit_input_init(struct sup_crit_input *in);
void sup_crit_input_done(struct sup_crit_input *in);

/*
 * The supervisor's half: resolves c->path beneath workspace_fd (borrowed: an O_PATH or
 * O_RDONLY directory fd) without following any symlink, and for file_contains, file_matches
 * and json_equals opens the file for reading when it is a regular file of at most
 * SUP_CRIT_MAX_FILE bytes (re-opened from the O_PATH fd, checked to be the same inode). Fills
 * *in (closing what it held first); every failure is recorded in it for the judge to turn
 * into a verdict. Reads no file content. A command criterion, or none, leaves *in as
 * sup_crit_input_init() made it.
 */
void sup_crit_open(int workspace_fd, const struct pol_task_criterion *c, struct sup_crit_input *in);

/*
 * The judge's half: judges a static criterion (every check but command) from what
 * sup_crit_open() found (in borrowed; the only syscall it makes is read() on in->fd). Always
 * fills *out; never fails: a file that is missing, escapes, is a symlink, is not a regular
 * file or is too large, or whose content makes the regex match or the JSON tree need more
 * memory than the process may have (the judge's RLIMIT_DATA), is a score of 0 with the reason
 * in details; a pattern that does not compile is error = true, evaluated = false. A command
 * criterion is error = true.
 */
void sup_crit_judge_static(const struct pol_task_criterion *c, const struct sup_crit_input *in,
			   struct sup_crit_result *out);

/*
 * Both halves in this process: sup_crit_open() then sup_crit_judge_static(), with the same
 * contract. For tests and fuzzing; evaluations judge through eval/confined.c.
 */
void sup_crit_eval_static(int workspace_fd, const struct pol_task_criterion *c,
			  struct sup_crit_result *out);

/*
 * The json_equals check on a document already in memory: sup_crit_eval_static() runs it on
 * the file it read, and the fuzz target runs it on untrusted bytes directly. buf (len bytes,
 * borrowed, may hold NULs, need not be NUL-terminated) must be one JSON value and nothing but
 * JSON whitespace after it; more than SUP_CRIT_MAX_FILE bytes, or anything the strict JSON
 * reader refuses (eval/json-strict.h: not RFC 8259, not UTF-8, \u0000, deeper or longer
 * numbers than the SUP_CRIT_JSON_* limits) scores 0, with the byte and the reason, and so
 * does a document whose tree does not fit in memory. Reads only c's check, pointer, op,
 * value_* and pass_threshold_milli. Always fills *out as sup_crit_eval_static() does (without
 * the path in details); a criterion that is not json_equals, or whose pointer is not RFC 6901
 * or whose value does not suit its op, is error = true.
 */
void sup_crit_json_eval(const struct pol_task_criterion *c, const void *buf, size_t len,
			struct sup_crit_result *out);

/* How a command criterion's sandbox ended, as the runner saw it. */
struct sup_crit_outcome {
	bool started;          /* false: the sandbox could not be built (error says why) */
	bool timed_out;        /* killed at the criterion's timeout */
	bool signaled;         /* ended by signal `signal` */
	int signal;
	int exit_code;         /* when neither timed out nor signaled: 0..255 */
	const char *out;       /* the captured stdout (borrowed; not NUL-terminated) */
	size_t out_len;
	bool out_truncated;    /* stdout was longer than the capture */
	const char *error;     /* when !started: why (borrowed), else NULL */
};

/*
 * Judges a command criterion from its outcome: it passes when the command exited with
 * expect_exit and its stdout passes the stdout check (exact, contains, regex; a truncated
 * stdout never passes `exact`, and a regex's `$` does not match at the end of a truncated
 * capture). stdout is searched whole, NULs included; a regex match that runs out of memory on
 * it scores 0. A sandbox that could not be built, or a stdout regex that does not compile, is
 * error = true. Always fills *out. o->out is read only by a stdout check (exact, contains,
 * regex), once the command exited as expected: that is hostile input, which evaluations
 * therefore hand to a confined judge (ev_judge_command).
 */
void sup_crit_judge_command(const struct pol_task_criterion *c, const struct sup_crit_outcome *o,
			    struct sup_crit_result *out);
