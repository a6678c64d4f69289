/* SPDX-License-Identifier: MIT */
/*
 * task: an evaluation task file (YAML) to a validated struct pol_task, and back to JSON.
 *
 * A task says what an agent is asked to do and how the result is graded: the policy its
 * sandbox runs under, the workspace it starts from, setup steps, the agent's command, a
 * hidden reference folder, the criteria and teardown steps. docs/eval.md is the reference.
 *
 * Pure code, like the policy parser it builds on (and shares its tree loader, yaml-util.c):
 * given bytes, it makes no syscalls and does no file I/O; a policy file the task names is
 * fetched through the caller's loader. Folders the task names are resolved by string work
 * only; whether they exist, and what symlinks in them point to, is the caller's business.
 *
 * Strictness is the policy language's: unknown keys, duplicate keys, wrong node types, empty
 * values, anchors, aliases, tags, directives, a second document, and everything over the
 * bounds below are errors at FILE:LINE:COLUMN with a message "what is wrong (expected ...)".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

/* The only schema_version this parser reads. */
#define TASK_SCHEMA_VERSION 1

/* Parser limits: everything a task file can hold is bounded. */
#define TASK_MAX_INPUT_BYTES (1024u * 1024u) /* larger input: -E2BIG before any parsing */
#define TASK_MAX_DEPTH 9        /* nesting; an inline policy (level 2) keeps its own 8 levels */
#define TASK_MAX_LIST 256       /* entries in one sequence, keys in one mapping */
#define TASK_MAX_STRING 4096    /* bytes in one scalar, except workspace file content */
#define TASK_MAX_CONTENT (64u * 1024u) /* bytes of one workspace file's content */
#define TASK_MAX_EVENTS 131072  /* libyaml events in one input */
#define TASK_MAX_ID 64          /* bytes of task_id */
#define TASK_MAX_FILES 256      /* workspace.files entries */
#define TASK_MAX_STEPS 32       /* setup steps; teardown steps */
#define TASK_MAX_ARGV 256       /* elements of one run list */
#define TASK_MAX_CRITERIA 64    /* criteria entries */
#define TASK_MAX_TIMEOUT_MS (24u * 3600u * 1000u) /* any timeout: 1ms..24h */
#define TASK_MAX_WEIGHT 1000000u /* a criterion's weight, in whole units */
#define TASK_MAX_REGEX_REPEAT 255u  /* the largest bound in a regex {m,n} (POSIX RE_DUP_MAX) */
#define TASK_MAX_REGEX_COST 8192u   /* a regex's size once its bounded repeats are expanded */

/* Defaults for what a task may leave out. */
#define TASK_DEFAULT_STEP_TIMEOUT_MS (30u * 1000u)      /* setup and teardown steps */
#define TASK_DEFAULT_AGENT_TIMEOUT_MS (10u * 60u * 1000u)
#define TASK_DEFAULT_COMMAND_TIMEOUT_MS (60u * 1000u)   /* command criteria */
#define TASK_DEFAULT_FILE_MODE 0644u
#define TASK_DEFAULT_WEIGHT_MILLI 1000u                 /* weight 1 */
#define TASK_DEFAULT_THRESHOLD_MILLI 1000u              /* pass_threshold 1.0 */

/*
 * Where the policy came from. Whatever the source, ->policy is the effective policy: the
 * embedded default, a file (->policy_path), or a mapping written in the task file itself.
 */
enum pol_task_policy_from {
	POL_TASK_POLICY_DEFAULT = 0, /* no policy key, or policy: default */
	POL_TASK_POLICY_FILE = 1,    /* policy: PATH */
	POL_TASK_POLICY_INLINE = 2,  /* policy: { ...a policy document... } */
};

/* A file written into the workspace before setup runs. */
struct pol_task_file {
	char *path;          /* workspace-relative, normalised (no leading /, '.', '..' or //) */
	char *content;       /* NUL-terminated, no NUL inside, at most TASK_MAX_CONTENT bytes */
	size_t content_len;
	uint32_t mode;       /* permission bits, 0..0777; TASK_DEFAULT_FILE_MODE when left out */
};

/*
 * A command: argv is NULL-terminated (argv[n_argv] == NULL), 1..TASK_MAX_ARGV elements, and
 * argv[0] is not empty. Elements may hold placeholders ({workspace}, {task_id}, and for
 * criteria and teardown {reference}) and the literal braces {{ and }}, all checked; they are
 * substituted element by element by the runner. No shell is implied.
 */
struct pol_task_step {
	char **argv;
	size_t n_argv;
	uint64_t timeout_ms;   /* 1..TASK_MAX_TIMEOUT_MS */
	bool fail_on_error;    /* setup: a failing step ends the run (default true) */
};

struct pol_task_agent {
	char **argv;
	size_t n_argv;
	uint64_t timeout_ms;   /* 1..TASK_MAX_TIMEOUT_MS, default 10 minutes */
	char **env_pass;       /* host variables handed to the agent; NULL-terminated, may be NULL */
	size_t n_env_pass;
};

enum pol_task_check {
	POL_TASK_FILE_EXISTS,
	POL_TASK_FILE_ABSENT,
	POL_TASK_FILE_CONTAINS,
	POL_TASK_FILE_MATCHES,
	POL_TASK_JSON_EQUALS,
	POL_TASK_COMMAND,
};

enum pol_task_json_op {
	POL_TASK_JSON_EQ,
	POL_TASK_JSON_NE,
	POL_TASK_JSON_EXISTS,
	POL_TASK_JSON_LT,
	POL_TASK_JSON_LE,
	POL_TASK_JSON_GT,
	POL_TASK_JSON_GE,
};

enum pol_task_json_type {
	POL_TASK_JSON_NULL,
	POL_TASK_JSON_BOOL,
	POL_TASK_JSON_NUMBER,
	POL_TASK_JSON_STRING,
};

enum pol_task_stdout {
	POL_TASK_STDOUT_ANY = 0,   /* no stdout check */
	POL_TASK_STDOUT_EXACT,     /* stdout is exactly the text */
	POL_TASK_STDOUT_CONTAINS,  /* stdout holds the text */
	POL_TASK_STDOUT_REGEX,     /* stdout matches the POSIX ERE */
};

struct pol_task_command {
	char **argv;              /* as struct pol_task_step; may use {reference} */
	size_t n_argv;
	uint64_t timeout_ms;      /* default 60s */
	uint32_t expect_exit;     /* 0..255, default 0 */
	enum pol_task_stdout stdout_kind;
	char *stdout_text;        /* NULL for POL_TASK_STDOUT_ANY */
	char **env_pass;          /* NULL-terminated, may be NULL */
	size_t n_env_pass;
};

/*
 * One criterion. Which members mean something depends on check; the others are zero/NULL.
 * Numbers that may have decimals are in thousandths: weight 2.5 is 2500, pass_threshold 0.75
 * is 750.
 */
struct pol_task_criterion {
	char *description;               /* required, 1..TASK_MAX_STRING bytes */
	uint32_t weight_milli;           /* 0..TASK_MAX_WEIGHT*1000; 0: informational */
	uint32_t pass_threshold_milli;   /* 0..1000 */
	enum pol_task_check check;

	/* every check but command: a workspace-relative, normalised path */
	char *path;

	/* file_contains: at least one entry in the two lists together; no entry empty or in both */
	char **includes;
	size_t n_includes;
	char **excludes;
	size_t n_excludes;

	/* file_matches: a POSIX ERE that regcomp(REG_EXTENDED | REG_NOSUB) accepts */
	char *regex;

	/* json_equals */
	char *pointer;                   /* RFC 6901, as written: "" or "/a/0/b~1c" */
	enum pol_task_json_op op;
	enum pol_task_json_type value_type; /* not meaningful for POL_TASK_JSON_EXISTS */
	char *value_text;                /* string: the string; number: its JSON text; else NULL */
	bool value_bool;
	double value_number;             /* number: the value (finite); lt/le/gt/ge need a number */

	/* command */
	struct pol_task_command command;
};

/*
 * A parsed task. Every string is owned by the struct and freed by pol_task_free(). Folders
 * are absolute, normalised paths (relative ones in the file are resolved against the task
 * file's directory), or NULL when the task leaves them out.
 */
struct pol_task {
	char *source;            /* the task file as named to pol_task_parse ("<input>" if none) */
	char *task_id;           /* 1..64 of [A-Za-z0-9._-], not starting with '.' or '-' */
	char *description;       /* NULL when left out */

	enum pol_task_policy_from policy_from;
	char *policy_path;       /* POL_TASK_POLICY_FILE: the file, absolute; else NULL */
	struct pol_policy *policy; /* the effective policy, never NULL */

	char *workspace_template;  /* folder copied into the workspace first, or NULL */
	struct pol_task_file *files; /* written after the template, in order */
	size_t n_files;

	struct pol_task_step *setup;
	size_t n_setup;

	struct pol_task_agent agent;

	char *reference;         /* hidden from setup and the agent; read-only for criteria, or NULL */

	struct pol_task_criterion *criteria; /* 1..TASK_MAX_CRITERIA, total weight > 0 */
	size_t n_criteria;

	struct pol_task_step *teardown; /* fail_on_error is false: teardown never changes a verdict */
	size_t n_teardown;
};

/*
 * Parses the task file at path from buf (len bytes, not necessarily NUL-terminated; both
 * borrowed). path names the file in diagnostics and in ->source; when it is an absolute,
 * normalised path, relative folders and a relative policy path resolve against its directory
 * (pure string work: `.` components are dropped, `..` is refused); otherwise (NULL:
 * "<input>") relative paths are errors. A policy file the task names is fetched through load
 * (see pol_loader in policy.h; ctx is passed through) and parsed with pol_parse_file, so its
 * own `extends` go through load too; load may be NULL, and then only an inline policy or the
 * default is accepted.
 *
 * On success stores a new task in *out (the caller owns it; free with pol_task_free) and
 * returns 0; *reterr is not touched. On failure returns -EINVAL (bad input, including a
 * policy that is bad, missing or unreadable), -E2BIG (input over TASK_MAX_INPUT_BYTES, or a
 * policy file over POL_MAX_INPUT_BYTES) or -ENOMEM; fills *reterr (when not NULL) with the
 * file the error is in (the task file, or for an error inside a policy file that file's
 * absolute path), the 1-based line and column of the offending node (0 when there is none)
 * and a one-line message "what is wrong (expected ...)"; and leaves *out untouched.
 */
int pol_task_parse(const char *path, const void *buf, size_t len, pol_loader load, void *ctx,
		   struct pol_task **out, struct pol_diag *reterr);

/* Frees a task and everything it owns. NULL-safe. Returns NULL. */
struct pol_task *pol_task_free(struct pol_task *t);

/*
 * The task as one normalised JSON object, for run records and `warden check --json`: every
 * field with its default filled in, keys in the order of docs/eval.md, times in ms
 * (timeout_ms), weights and thresholds as decimal numbers, modes as octal strings ("0644"),
 * folders as absolute paths, and the effective policy as pol_to_json() writes it under
 * policy.effective. Takes t borrowed (normally from pol_task_parse); stores a NUL-terminated
 * malloc()ed string the caller frees with free() in *out and returns 0; or returns -ENOMEM,
 * or -EINVAL when t holds something the format cannot spell (a NULL required string, an
 * unknown enum, text that is not UTF-8, a non-finite number), and leaves *out untouched.
 */
int pol_task_to_json(const struct pol_task *t, char **out);

/*
 * Names as the task format spells them (static strings), or NULL for an unknown value:
 * "file_exists" ... "command"; "eq" ... "ge"; "default", "file", "inline".
 */
const char *pol_task_check_name(enum pol_task_check check);
const char *pol_task_json_op_name(enum pol_task_json_op op);
const char *pol_task_policy_from_name(enum pol_task_policy_from from);
