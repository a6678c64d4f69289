/* SPDX-License-Identifier: MIT */
/*
 * yaml-util: the pieces the policy parser (policy/policy.c) and the task parser (eval/task.c)
 * share, so that neither reaches into the other. The supervisor includes policy.h and task.h,
 * never this header.
 *
 *  - the bounded tree loader: libyaml events to a small tree of scalars, sequences and
 *    mappings, with every generic rule (one document; no anchors, aliases, tags or directives;
 *    bounded depth, list length, string length and event count; no NUL in a scalar) and the
 *    limits passed in, so each language keeps its own;
 *  - diagnostics (struct pol_diag) and the quoting of user text in messages;
 *  - the schema walker: a table of struct pol_field per mapping, pol_walk_map() to apply it,
 *    and the generic value handlers (numbers with units, booleans, strings, string lists,
 *    normalised and relative paths).
 *
 * Pure code: no file I/O, no syscalls, no global state. Every function that fails fills the
 * diagnostic it is given (when not NULL) and returns -EINVAL or -ENOMEM.
 */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cleanup.h"
#include "diag.h"

#define POL_COMPONENT_MAX 255u /* NAME_MAX: bytes in one path component */
#define POL_LABEL_MAX 96       /* bytes in a label such as "criteria[3].command.run[2]" */

/* ------------------------------------------------------------------------------------------ */
/* Diagnostics                                                                                */

/* Fills *d (when not NULL) with name ("<input>" when NULL), line, column and the message. */
__attribute__((format(printf, 5, 0))) void pol_diag_vset(struct pol_diag *d, const char *name,
							 unsigned line, unsigned column,
							 const char *fmt, va_list ap);
__attribute__((format(printf, 5, 6))) void pol_diag_set(struct pol_diag *d, const char *name,
							unsigned line, unsigned column,
							const char *fmt, ...);

/* User text in a message: capped, quoted by the caller, non-printable bytes escaped. */
struct pol_qbuf {
	char s[96];
};

/* Writes s (borrowed) escaped and capped into b; returns b->s. Cannot fail. */
const char *pol_quote(struct pol_qbuf *b, const char *s);

/* ------------------------------------------------------------------------------------------ */
/* The tree                                                                                   */

enum pol_node_kind {
	POL_NODE_SCALAR,
	POL_NODE_SEQ,
	POL_NODE_MAP,
};

struct pol_node {
	enum pol_node_kind kind;
	unsigned line;    /* 1-based */
	unsigned column;  /* 1-based */
	bool plain;       /* scalar written without quotes or block style */
	char *str;        /* scalar: NUL-terminated, no NUL inside */
	struct pol_node **kids; /* sequence: items; mapping: key, value, key, value, ... */
	size_t n_kids;
	size_t cap_kids;
};

/* Frees n and its subtree. NULL-safe. Returns NULL. */
struct pol_node *pol_node_free(struct pol_node *n);
DEFINE_CLEANUP(struct pol_node *, pol_node_free)

/* What one language allows; every field is an inclusive maximum. */
struct pol_yaml_limits {
	unsigned max_depth;    /* nested mappings/sequences; the top-level collection is level 1 */
	size_t max_list;       /* entries in one sequence, keys in one mapping */
	size_t max_string;     /* bytes in one scalar */
	size_t max_events;     /* libyaml events in one input */
	const char *what;      /* "policy" or "task", for "out of memory (expected to parse the policy)" */
	const char *root_expected; /* for an empty document: "a mapping of policy sections" */
};

/*
 * Loads buf (len bytes, borrowed, not necessarily NUL-terminated; may be NULL when len is 0)
 * into a tree under lim. name names the input in diagnostics. On success stores the root (the
 * caller owns it; free with pol_node_free) in *out and returns 0. On failure returns -EINVAL
 * or -ENOMEM, fills *diag at the offending event and leaves *out untouched.
 */
int pol_yaml_load(const char *name, const void *buf, size_t len,
		  const struct pol_yaml_limits *lim, struct pol_node **out, struct pol_diag *diag);

/*
 * Checks that the subtree root (borrowed; taken as level 1) keeps within lim's depth, list,
 * string and event limits, as if it had been loaded from a document of its own, so a subtree
 * of a larger document (an inline policy in a task) meets the bounds a file would. Returns 0,
 * or -EINVAL with *diag filled (in name) at the first node in document order that breaks one,
 * with the loader's own message.
 */
int pol_yaml_check_bounds(const char *name, const struct pol_node *root,
			  const struct pol_yaml_limits *lim, struct pol_diag *diag);

/* YAML's null spellings; a plain one is "no value", never a string. */
bool pol_node_is_null(const struct pol_node *n);

/* The value of key in the mapping m (the first one), or NULL; NULL for a node that is no mapping. */
const struct pol_node *pol_map_get(const struct pol_node *m, const char *key);

/* "empty", "a mapping", "a sequence" or "a scalar" (static strings). */
const char *pol_describe(const struct pol_node *n);

/* ------------------------------------------------------------------------------------------ */
/* The walker                                                                                 */

struct pol_walker {
	const char *name; /* the file, for diagnostics */
	const char *dir;  /* the file's directory, absolute and normalised; NULL when unknown */
	const char *what; /* "policy" or "task": "expected a path below the policy file's directory" */
	struct pol_diag *diag;
};

/* Fills the diagnostic at node n. */
__attribute__((format(printf, 3, 4))) void pol_walk_diag(const struct pol_walker *w,
							 const struct pol_node *n,
							 const char *fmt, ...);

/* Fills the diagnostic at node n and evaluates to -EINVAL (visibly, for static analysers). */
#define pol_fail(w, n, ...) (pol_walk_diag((w), (n), __VA_ARGS__), -EINVAL)

/* Fills "out of memory (expected to parse the <what>)" and returns -ENOMEM. */
int pol_walk_enomem(const struct pol_walker *w);

/*
 * Value checks: each returns 0 or fails at n with "<label> is <what it is> (expected <expected>)".
 * pol_want_scalar refuses a collection and an empty (null) value; pol_want_plain also refuses
 * a quoted one (numbers and booleans); pol_want_seq refuses anything but a sequence.
 */
int pol_want_scalar(const struct pol_walker *w, const char *label, const struct pol_node *n,
		    const char *expected);
int pol_want_plain(const struct pol_walker *w, const char *label, const struct pol_node *n,
		   const char *expected);
int pol_want_seq(const struct pol_walker *w, const char *label, const struct pol_node *v);

/*
 * A scalar that must be one of the n words in names: stores its index in *out and returns 0;
 * otherwise fails at v with "<label> '<value>' is not a <noun> (expected <expected>)".
 */
int pol_want_word(const struct pol_walker *w, const char *label, const struct pol_node *v,
		  const char *const *names, size_t n, const char *noun, const char *expected,
		  size_t *out);

/* Stores a copy of s in *out; returns 0 or pol_walk_enomem(). */
int pol_dup_string(const struct pol_walker *w, const char *s, char **out);

/* Frees the first n strings of v and v itself. NULL-safe. */
void pol_strv_free(char **v, size_t n);
bool pol_strv_contains(char *const *v, size_t n, const char *s);

/* "where.key", or "key" when where is "". */
void pol_make_label(char *buf, size_t size, const char *where, const char *key);

enum pol_unit {
	POL_UNIT_U32,    /* plain decimal, stored as uint32_t */
	POL_UNIT_COUNT,  /* plain decimal, stored as uint64_t */
	POL_UNIT_SIZE,   /* bytes with an optional K/M/G/T suffix */
	POL_UNIT_TIME,   /* seconds, or a number with an ms/s/m/h suffix; stored in ms */
	POL_UNIT_CPU,    /* CPUs with up to three decimals; stored in millicpus */
};

/*
 * One key of a mapping. fn validates the value node v and stores it in target (the struct the
 * mapping describes); label names the key in messages ("limits.memory").
 */
struct pol_field {
	const char *key;
	int (*fn)(const struct pol_walker *w, void *target, const struct pol_field *f,
		  const char *label, const struct pol_node *v);
	size_t off;      /* offset of the value (or list) in the target struct */
	size_t n_off;    /* lists: offset of the element count */
	/* string lists: validates one entry; dup_by_name compares only up to '=' */
	int (*check)(const struct pol_walker *w, const char *label, const struct pol_node *item);
	bool dup_by_name;
	bool locked;     /* booleans: false is refused (a namespace warden is built on) */
	enum pol_unit unit; /* numbers */
	uint64_t min, max;
};

#define POL_FIELD_PTR(target, off, type) ((type *)(void *)((char *)(target) + (off)))

/*
 * Applies the mapping n to target with the handlers in fields (at most 32). where names the
 * mapping in messages ("" for the top level). Every key must be a scalar naming a field, at
 * most once; handlers run in document order.
 */
int pol_walk_map(const struct pol_walker *w, void *target, const char *where,
		 const struct pol_node *n, const struct pol_field *fields, size_t n_fields);

/* ---- numbers ---- */

/*
 * Decimal numbers without sign or leading zeros, so nobody mistakes 0755 for octal:
 * pol_parse_count a plain integer, pol_parse_size one with an optional K/M/G/T suffix,
 * pol_parse_time_ms seconds or a number with an ms/s/m/h suffix (stored in ms),
 * pol_parse_milli a number with up to three decimals (stored in thousandths). Each returns 0,
 * -EINVAL (not such a number) or -ERANGE (overflows 64 bits), and writes *out only on success.
 */
int pol_parse_count(const char *s, uint64_t *out);
int pol_parse_size(const char *s, uint64_t *out);
int pol_parse_time_ms(const char *s, uint64_t *out);
int pol_parse_milli(const char *s, uint64_t *out);

/* Field handlers: a number of f->unit in f->min..f->max; true or false (f->locked refuses false). */
int pol_fld_number(const struct pol_walker *w, void *target, const struct pol_field *f,
		   const char *label, const struct pol_node *v);
int pol_fld_bool(const struct pol_walker *w, void *target, const struct pol_field *f,
		 const char *label, const struct pol_node *v);

/* ---- strings ---- */

/* Replaces the string at target + off with a copy of s. */
int pol_replace_string(const struct pol_walker *w, void *target, size_t off, const char *s);

/*
 * Builds a NULL-terminated array from the sequence v (every entry validated by f->check and
 * listed once) and stores it in place of the list at f->off (count at f->n_off), freeing the
 * old one.
 */
int pol_fld_str_list(const struct pol_walker *w, void *target, const struct pol_field *f,
		     const char *label, const struct pol_node *v);

/* [A-Za-z_][A-Za-z0-9_]*, len bytes of s. */
bool pol_is_env_name(const char *s, size_t len);
int pol_check_env_name(const struct pol_walker *w, const char *label,
		       const struct pol_node *item);

/* ---- paths ---- */

enum pol_path_flaw {
	POL_PATH_OK,
	POL_PATH_EMPTY_COMPONENT,
	POL_PATH_DOT,
	POL_PATH_DOTDOT,
	POL_PATH_LONG_COMPONENT,
	POL_PATH_CONTROL,
};

/*
 * The first flaw in the components of s, which starts right after a leading '/' (if any).
 * allow_dot accepts '.' components (a relative path that will be resolved drops them).
 */
enum pol_path_flaw pol_path_flaw_ex(const char *s, bool allow_dot);
enum pol_path_flaw pol_path_flaw(const char *s);

/* Fails at v with the message for flaw; returns 0 for POL_PATH_OK. */
int pol_path_flaw_fail(const struct pol_walker *w, const char *label, const struct pol_node *v,
		       enum pol_path_flaw flaw);

/* An absolute, normalised path under PATH_MAX; a relative, normalised one without a leading /. */
int pol_check_abs_path(const struct pol_walker *w, const char *label, const struct pol_node *v);
int pol_check_rel_path(const struct pol_walker *w, const char *label, const struct pol_node *v);

/* True iff path is strictly below dir (both normalised and absolute; dir is not "/"). */
bool pol_path_is_under(const char *path, const char *dir);

/*
 * The directory of the file path name when name is an absolute, normalised path, else NULL in
 * *out (relative paths in the file then cannot be resolved and are errors). Returns 0 or -ENOMEM.
 */
int pol_dir_of(const char *name, char **out);

/*
 * Resolves the relative path in v against w->dir: '.' components are dropped; '..', empty
 * components and control characters are refused, so the result never leaves the directory
 * lexically. Pure string work: symlinks are the reader's business. On success stores a new
 * absolute, normalised path in *out.
 */
int pol_resolve_relative(const struct pol_walker *w, const char *label, const struct pol_node *v,
			 char **out);
