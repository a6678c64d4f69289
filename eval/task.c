/* SPDX-License-Identifier: MIT */
/*
 * The task parser: YAML bytes to a validated struct pol_task, and the task as JSON.
 *
 * The same two passes as the policy parser, with the same machinery (yaml-util.c):
 *
 *  1. load, under task_limits: the bounded tree, every generic YAML rule. Scalars may be as
 *     long as one workspace file's content (TASK_MAX_CONTENT); every other value is held to
 *     TASK_MAX_STRING by its handler.
 *  2. apply: the schema tables below, one per mapping. schema_version is checked first and
 *     `reference` is read next, wherever they stand, so that no key is judged under the wrong
 *     version and every {reference} placeholder knows whether there is a reference. Rules
 *     that tie parts together (required keys, a criterion's single check, the total weight,
 *     folders that must not hold each other) run once the mapping they concern is read.
 *
 * The policy is a layer stack of its own: `policy: PATH` is fetched through the caller's
 * loader and parsed with pol_parse_file (errors inside it carry that file's position), and an
 * inline mapping is handed, as the tree it already is, to pol_parse_tree, so its errors keep
 * the task file's line and column and its relative paths resolve like the task's.
 *
 * Pure code: no file I/O, no syscalls, no global state. regcomp/regfree (pure libc) validate
 * regular expressions; strtod reads JSON numbers in the C locale, which warden never changes.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cleanup.h"
#include "policy.h"
#include "task.h"
#include "utf8.h"
#include "yaml-util.h"

DEFINE_CLEANUP(cJSON *, cJSON_Delete)

#define DEFAULT_POLICY_NAME "<default>"
#define REGEX_MAX_NESTING 32u /* nested groups in one regex: regcomp recurses per level */
#define MODE_MAX 0777u

static bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static const struct pol_yaml_limits task_limits = {
	.max_depth = TASK_MAX_DEPTH,
	.max_list = TASK_MAX_LIST,
	.max_string = TASK_MAX_CONTENT,
	.max_events = TASK_MAX_EVENTS,
	.what = "task",
	.root_expected = "a mapping of task fields",
};

/*
 * The walker handlers get: the generic one first (so &tw->w is the pointer they are handed),
 * then what only the task parser needs.
 */
struct task_walker {
	struct pol_walker w;
	const unsigned char *buf; /* the task file, to place a brace inside a scalar */
	size_t len;
	pol_loader load;
	void *load_ctx;
	bool has_reference;
};

static const struct task_walker *task_walker_of(const struct pol_walker *w)
{
	_Static_assert(offsetof(struct task_walker, w) == 0, "the generic walker comes first");
	return (const struct task_walker *)(const void *)w;
}

static int fail_at(const struct pol_walker *w, unsigned line, unsigned column, const char *fmt,
		   ...) __attribute__((format(printf, 4, 5)));

/* Fills the diagnostic at line:column (not at a node) and returns -EINVAL. */
static int fail_at(const struct pol_walker *w, unsigned line, unsigned column, const char *fmt,
		   ...)
{
	va_list ap;
	va_start(ap, fmt);
	pol_diag_vset(w->diag, w->name, line, column, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ------------------------------------------------------------------------------------------ */
/* Generic values                                                                             */

/* A scalar of at most max bytes; empty only when allow_empty (and then only quoted: ""). */
static int want_text(const struct pol_walker *w, const char *label, const struct pol_node *v,
		     size_t max, bool allow_empty, const char *expected)
{
	size_t len;
	int r = pol_want_scalar(w, label, v, expected);
	if (r < 0)
		return r;
	len = strlen(v->str);
	if (len == 0 && !allow_empty)
		return pol_fail(w, v, "%s is an empty string (expected %s)", label, expected);
	if (len > max)
		return pol_fail(w, v, "%s is %zu bytes long (expected at most %zu bytes)", label, len,
				max);
	return 0;
}

/* Text up to f->max bytes (TASK_MAX_STRING when 0), not empty. */
static int fld_text(const struct pol_walker *w, void *target, const struct pol_field *f,
		    const char *label, const struct pol_node *v)
{
	int r = want_text(w, label, v, f->max ? f->max : TASK_MAX_STRING, false, "text");
	if (r < 0)
		return r;
	return pol_replace_string(w, target, f->off, v->str);
}

/* A workspace-relative, normalised path. */
static int check_rel(const struct pol_walker *w, const char *label, const struct pol_node *v)
{
	static const char expected[] = "a workspace-relative path like src/main.c";
	int r = want_text(w, label, v, TASK_MAX_STRING, false, expected);
	if (r < 0)
		return r;
	return pol_check_rel_path(w, label, v);
}

static int fld_rel_path(const struct pol_walker *w, void *target, const struct pol_field *f,
			const char *label, const struct pol_node *v)
{
	int r = check_rel(w, label, v);
	if (r < 0)
		return r;
	return pol_replace_string(w, target, f->off, v->str);
}

/*
 * A folder or file next to the task: an absolute, normalised path, or a relative one resolved
 * against the task file's directory (`.` alone is that directory). Stores the absolute path.
 */
static int resolve_task_path(const struct pol_walker *w, const char *label,
			     const struct pol_node *v, char **out)
{
	static const char expected[] = "a path relative to the task file, or an absolute one";
	int r = want_text(w, label, v, TASK_MAX_STRING, false, expected);
	if (r < 0)
		return r;
	if (v->str[0] != '/')
		return pol_resolve_relative(w, label, v, out);
	r = pol_check_abs_path(w, label, v);
	if (r < 0)
		return r;
	return pol_dup_string(w, v->str, out);
}

static int fld_folder(const struct pol_walker *w, void *target, const struct pol_field *f,
		      const char *label, const struct pol_node *v)
{
	char *path = NULL;
	int r = resolve_task_path(w, label, v, &path);
	if (r < 0)
		return r;
	char **slot = POL_FIELD_PTR(target, f->off, char *);
	free(*slot);
	*slot = path;
	return 0;
}

/* Keys a mapping's table accepts but that were acted on before the table was walked. */
static int fld_applied_early(const struct pol_walker *w, void *target, const struct pol_field *f,
			     const char *label, const struct pol_node *v)
{
	(void)w, (void)target, (void)f, (void)label, (void)v;
	return 0;
}

/* An environment variable name for env.pass lists. */
static int check_env(const struct pol_walker *w, const char *label, const struct pol_node *item)
{
	int r = want_text(w, label, item, TASK_MAX_STRING, false,
			  "a variable name matching [A-Za-z_][A-Za-z0-9_]*");
	if (r < 0)
		return r;
	return pol_check_env_name(w, label, item);
}

/* A string that includes/excludes look for: not empty, which would match every file. */
static int check_needle(const struct pol_walker *w, const char *label, const struct pol_node *item)
{
	return want_text(w, label, item, TASK_MAX_STRING, false,
			 "a non-empty string to look for");
}

/*
 * A number with up to 3 decimals, stored in thousandths in a uint32_t, in f->min..f->max
 * thousandths; expected says the range the way a person writes it.
 */
static int fld_milli(const struct pol_walker *w, void *target, const struct pol_field *f,
		     const char *label, const struct pol_node *v, const char *expected)
{
	struct pol_qbuf q;
	uint64_t val = 0;
	int r = pol_want_plain(w, label, v, expected);
	if (r < 0)
		return r;
	r = pol_parse_milli(v->str, &val);
	if (r == -EINVAL)
		return pol_fail(w, v, "%s '%s' is not a valid number (expected %s)", label,
				pol_quote(&q, v->str), expected);
	if (r < 0 || val < f->min || val > f->max)
		return pol_fail(w, v, "%s '%s' is out of range (expected %s)", label,
				pol_quote(&q, v->str), expected);
	*POL_FIELD_PTR(target, f->off, uint32_t) = (uint32_t)val;
	return 0;
}

static int fld_weight(const struct pol_walker *w, void *target, const struct pol_field *f,
		      const char *label, const struct pol_node *v)
{
	return fld_milli(w, target, f, label, v,
			 "a number from 0 to 1000000 with at most 3 decimals, like 2.5");
}

static int fld_threshold(const struct pol_walker *w, void *target, const struct pol_field *f,
			 const char *label, const struct pol_node *v)
{
	return fld_milli(w, target, f, label, v,
			 "a number from 0 to 1 with at most 3 decimals, like 0.75");
}

/*
 * The first key of the mapping n that is in keys, and refusal of a second, different one:
 * for mappings that hold exactly one of several alternatives (a criterion's check, stdout).
 */
static int only_one_of(const struct pol_walker *w, const char *label, const struct pol_node *n,
		       const char *const *keys, size_t n_keys, const char *expected)
{
	const struct pol_node *first = NULL;

	if (n->kind != POL_NODE_MAP)
		return 0; /* pol_walk_map says what it is */
	for (size_t i = 0; i + 1 < n->n_kids; i += 2) {
		const struct pol_node *k = n->kids[i];
		bool listed = false;

		if (k->kind != POL_NODE_SCALAR)
			continue;
		for (size_t j = 0; j < n_keys; j++)
			listed = listed || streq(k->str, keys[j]);
		if (!listed)
			continue;
		if (!first)
			first = k;
		else if (!streq(first->str, k->str))
			return pol_fail(w, k, "%s has both %s and %s (expected exactly one of: %s)",
					label, first->str, k->str, expected);
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Placeholders in run lists                                                                  */

enum placeholder {
	PH_WORKSPACE = 1u << 0,
	PH_TASK_ID = 1u << 1,
	PH_REFERENCE = 1u << 2,
};

static const struct {
	const char *name;
	unsigned bit;
} placeholders[] = {
	{ "workspace", PH_WORKSPACE },
	{ "task_id", PH_TASK_ID },
	{ "reference", PH_REFERENCE },
};

/* Who runs a command: which placeholders it may use and, if not {reference}, why not. */
struct run_ctx {
	unsigned allowed;
	const char *no_reference; /* "the agent never sees the reference" */
};

static const struct run_ctx agent_run = {
	PH_WORKSPACE | PH_TASK_ID, "the agent never sees the reference",
};
static const struct run_ctx setup_run = {
	PH_WORKSPACE | PH_TASK_ID, "setup builds what the agent sees and never sees the reference",
};
static const struct run_ctx grading_run = { PH_WORKSPACE | PH_TASK_ID | PH_REFERENCE, NULL };

static const char *allowed_text(unsigned allowed)
{
	return (allowed & PH_REFERENCE) ? "{workspace}, {reference} or {task_id}"
					 : "{workspace} or {task_id}";
}

/* Byte offset in buf of 1-based line and column (columns count characters), or false. */
static bool position_to_offset(const unsigned char *buf, size_t len, unsigned line,
			       unsigned column, size_t *out)
{
	unsigned ln = 1, col = 1;

	for (size_t i = 0; i <= len; i++) {
		if (ln == line && col == column) {
			*out = i;
			return true;
		}
		if (i == len || ln > line)
			break;
		if (buf[i] == '\n') {
			ln++;
			col = 1;
		} else if ((buf[i] & 0xc0) != 0x80) {
			col++;
		}
	}
	return false;
}

/*
 * The line and column of byte off of scalar n's value. Exact when the value stands in the file
 * as written (plain, or quoted without escapes, on one line); otherwise the scalar's start.
 */
static void scalar_position(const struct task_walker *tw, const struct pol_node *n, size_t off,
			    unsigned *out_line, unsigned *out_column)
{
	size_t start, quote = 0, vlen = strlen(n->str);
	unsigned chars = 0;

	*out_line = n->line;
	*out_column = n->column;
	if (!tw->buf || !position_to_offset(tw->buf, tw->len, n->line, n->column, &start))
		return;
	if (!n->plain) {
		if (start >= tw->len || (tw->buf[start] != '"' && tw->buf[start] != '\''))
			return; /* a block scalar */
		quote = 1;
	}
	if (start + quote > tw->len || vlen > tw->len - start - quote ||
	    memcmp(tw->buf + start + quote, n->str, vlen) != 0 || memchr(n->str, '\n', vlen))
		return;
	for (size_t i = 0; i < off && i < vlen; i++)
		if (((unsigned char)n->str[i] & 0xc0) != 0x80)
			chars++;
	if (n->column <= UINT_MAX - 1 - chars)
		*out_column = n->column + (unsigned)quote + chars;
}

/* What is wrong with a run element's braces. */
enum brace_flaw {
	BRACE_OK,
	BRACE_LONE_CLOSE,   /* a '}' without its '{' */
	BRACE_UNCLOSED,     /* a '{' without its '}' */
	BRACE_UNKNOWN,      /* {name} with a name nobody knows */
	BRACE_NO_REFERENCE, /* {reference} where it is not allowed */
	BRACE_REFERENCE_UNSET, /* {reference} in a task without a reference folder */
};

/*
 * The first flaw in s for rc, with the offset of its brace in *out_at and, for an unknown
 * placeholder, its name's length in *out_len.
 */
static enum brace_flaw brace_flaw(const char *s, const struct run_ctx *rc, bool has_reference,
				  size_t *out_at, size_t *out_len)
{
	for (size_t i = 0; s[i];) {
		size_t j;
		unsigned bit = 0;

		if ((s[i] == '{' || s[i] == '}') && s[i + 1] == s[i]) {
			i += 2;
			continue;
		}
		*out_at = i;
		if (s[i] == '}')
			return BRACE_LONE_CLOSE;
		if (s[i] != '{') {
			i++;
			continue;
		}
		for (j = i + 1; s[j] && s[j] != '}' && s[j] != '{'; j++)
			;
		if (s[j] != '}')
			return BRACE_UNCLOSED;
		*out_len = j - i - 1;
		for (size_t k = 0; k < ELEMENTSOF(placeholders); k++)
			if (strlen(placeholders[k].name) == *out_len &&
			    !memcmp(placeholders[k].name, s + i + 1, *out_len))
				bit = placeholders[k].bit;
		if (!bit)
			return BRACE_UNKNOWN;
		if (!(bit & rc->allowed))
			return BRACE_NO_REFERENCE;
		if (bit == PH_REFERENCE && !has_reference)
			return BRACE_REFERENCE_UNSET;
		i = j + 1;
	}
	return BRACE_OK;
}

/*
 * Checks the placeholders in one run element: {name} with a name rc allows, {{ and }} for
 * literal braces. Fails at the offending brace.
 */
static int check_placeholders(const struct pol_walker *w, const char *label,
			      const struct pol_node *v, const struct run_ctx *rc)
{
	const struct task_walker *tw = task_walker_of(w);
	const char *s = v->str;
	size_t at = 0, len = 0;
	struct pol_qbuf q, qn;
	unsigned line, column;
	enum brace_flaw flaw = brace_flaw(s, rc, tw->has_reference, &at, &len);

	if (flaw == BRACE_OK)
		return 0;
	/* Placing the brace reads the file up to it: only done for an error. */
	scalar_position(tw, v, at, &line, &column);
	switch (flaw) {
	case BRACE_OK:
		break;
	case BRACE_LONE_CLOSE:
		return fail_at(w, line, column,
			       "%s '%s' has a '}' without an opening '{' (expected {name}, or }} for a literal })",
			       label, pol_quote(&q, s));
	case BRACE_UNCLOSED:
		return fail_at(w, line, column,
			       "%s '%s' has a '{' without a closing '}' (expected {name}, or {{ for a literal {)",
			       label, pol_quote(&q, s));
	case BRACE_UNKNOWN: {
		_cleanup_free_ char *name = strndup(s + at + 1, len);
		if (!name)
			return pol_walk_enomem(w);
		return fail_at(w, line, column,
			       "%s '%s' has an unknown placeholder {%s} (expected %s, or {{ and }} for literal braces)",
			       label, pol_quote(&q, s), pol_quote(&qn, name),
			       allowed_text(rc->allowed));
	}
	case BRACE_NO_REFERENCE:
		return fail_at(w, line, column, "%s '%s' uses {reference}, and %s (expected %s)", label,
			       pol_quote(&q, s), rc->no_reference, allowed_text(rc->allowed));
	case BRACE_REFERENCE_UNSET:
		return fail_at(w, line, column,
			       "%s '%s' uses {reference}, and the task has no reference folder (expected a top-level reference: FOLDER, or no {reference})",
			       label, pol_quote(&q, s));
	}
	return fail_at(w, line, column, "%s '%s' has a misplaced brace (expected {name})", label,
		       pol_quote(&q, s));
}

/*
 * A run list: a non-empty sequence of at most TASK_MAX_ARGV strings whose first is not empty
 * (later ones may be ""), placeholders checked for rc. Stored NULL-terminated at f->off, with
 * the count at f->n_off.
 */
static int fld_argv(const struct pol_walker *w, void *target, const struct pol_field *f,
		    const char *label, const struct pol_node *v, const struct run_ctx *rc)
{
	static const char expected[] = "a command and its arguments, like [make, test]";
	char **argv = NULL;
	size_t n = 0;
	int r = pol_want_seq(w, label, v);
	if (r < 0)
		return r;
	if (v->n_kids == 0)
		return pol_fail(w, v, "%s is empty (expected %s)", label, expected);
	if (v->n_kids > TASK_MAX_ARGV)
		return pol_fail(w, v->kids[TASK_MAX_ARGV],
				"%s has more than %u elements (expected at most %u)", label,
				(unsigned)TASK_MAX_ARGV, (unsigned)TASK_MAX_ARGV);

	argv = calloc(v->n_kids + 1, sizeof(*argv));
	if (!argv)
		return pol_walk_enomem(w);
	for (; n < v->n_kids; n++) {
		const struct pol_node *item = v->kids[n];
		char item_label[POL_LABEL_MAX];

		(void)snprintf(item_label, sizeof(item_label), "%s[%zu]", label, n);
		r = want_text(w, item_label, item, TASK_MAX_STRING, n > 0,
			      n == 0 ? "a command name or path" : "a string");
		if (r >= 0)
			r = check_placeholders(w, item_label, item, rc);
		if (r >= 0)
			r = pol_dup_string(w, item->str, &argv[n]);
		if (r < 0) {
			pol_strv_free(argv, n);
			return r;
		}
	}

	char ***slot = POL_FIELD_PTR(target, f->off, char **);
	size_t *n_slot = POL_FIELD_PTR(target, f->n_off, size_t);
	pol_strv_free(*slot, *n_slot);
	*slot = argv;
	*n_slot = n;
	return 0;
}

static int fld_agent_run(const struct pol_walker *w, void *target, const struct pol_field *f,
			 const char *label, const struct pol_node *v)
{
	return fld_argv(w, target, f, label, v, &agent_run);
}

static int fld_setup_run(const struct pol_walker *w, void *target, const struct pol_field *f,
			 const char *label, const struct pol_node *v)
{
	return fld_argv(w, target, f, label, v, &setup_run);
}

static int fld_grading_run(const struct pol_walker *w, void *target, const struct pol_field *f,
			   const char *label, const struct pol_node *v)
{
	return fld_argv(w, target, f, label, v, &grading_run);
}

/* ------------------------------------------------------------------------------------------ */
/* Regular expressions                                                                        */

/* The end of the bracket expression that starts at s[i] == '[' (just past its ']'). */
static size_t skip_bracket(const char *s, size_t i)
{
	size_t j = i + 1;

	if (s[j] == '^')
		j++;
	if (s[j] == ']')
		j++;
	while (s[j] && s[j] != ']') {
		if (s[j] == '[' && (s[j + 1] == ':' || s[j + 1] == '=' || s[j + 1] == '.')) {
			char close[3] = { s[j + 1], ']', '\0' };
			const char *e = strstr(s + j + 2, close);
			if (!e)
				return strlen(s); /* unterminated: regcomp says so */
			j = (size_t)(e - s) + 2;
		} else {
			j++;
		}
	}
	return s[j] ? j + 1 : j;
}

/*
 * Reads an interval {m}, {m,}, {m,n} or {,n} at s[i] == '{'. Returns false when it is not
 * one (regcomp then decides what the brace is). A bound over 9999 reads as 10000.
 */
static bool read_interval(const char *s, size_t i, size_t *out_end, unsigned *out_max)
{
	unsigned m = 0, n = 0;
	bool has_m = false, comma = false, has_n = false;
	size_t j = i + 1;

	for (; s[j] >= '0' && s[j] <= '9'; j++, has_m = true)
		m = m < 10000 ? m * 10 + (unsigned)(s[j] - '0') : 10000;
	if (s[j] == ',') {
		comma = true;
		for (j++; s[j] >= '0' && s[j] <= '9'; j++, has_n = true)
			n = n < 10000 ? n * 10 + (unsigned)(s[j] - '0') : 10000;
	}
	if (s[j] != '}' || (!has_m && !has_n))
		return false;
	*out_end = j + 1;
	if (!comma)
		*out_max = m;
	else if (has_n)
		*out_max = n > m ? n : m;
	else
		*out_max = m + 1; /* x{m,} is m copies and a star */
	return true;
}

/*
 * What regcomp would build, roughly: glibc copies the operand of x{m,n} max(m,n) times and
 * that of x+ once more, so nested bounds multiply ((a{255}){255}){255} is 16 million nodes).
 * Each atom counts 1, a group the sum of its parts, a repeat its operand times its bound; the
 * total must stay within TASK_MAX_REGEX_COST. Also refuses back-references, which glibc
 * accepts in an ERE and which make matching exponential, and nesting deeper than
 * REGEX_MAX_NESTING.
 */
static int check_regex_shape(const struct pol_walker *w, const char *label,
			     const struct pol_node *v)
{
	const char *s = v->str;
	uint64_t cost[REGEX_MAX_NESTING + 1] = { 0 };
	uint64_t last = 0, total = 0;
	unsigned depth = 0;
	struct pol_qbuf q;

	for (size_t i = 0; s[i];) {
		uint64_t atom = 1;
		size_t end;
		unsigned bound;

		switch (s[i]) {
		case '(':
			if (depth == REGEX_MAX_NESTING)
				return pol_fail(w, v,
						"%s '%s' nests groups more than %u deep (expected at most %u)",
						label, pol_quote(&q, s), REGEX_MAX_NESTING,
						REGEX_MAX_NESTING);
			cost[++depth] = 0;
			last = 0;
			i++;
			continue;
		case ')':
			if (depth > 0) {
				atom = cost[depth] ? cost[depth] : 1;
				depth--;
			}
			i++;
			break;
		case '|':
			last = 0;
			i++;
			continue;
		case '[':
			i = skip_bracket(s, i);
			break;
		case '\\':
			if (s[i + 1] >= '1' && s[i + 1] <= '9')
				return pol_fail(w, v,
						"%s '%s' has the back-reference \\%c (expected a POSIX extended regex without back-references)",
						label, pol_quote(&q, s), s[i + 1]);
			i += s[i + 1] ? 2 : 1;
			break;
		case '*':
		case '?':
			i++;
			continue;
		case '+':
			cost[depth] += last;
			last *= 2;
			i++;
			atom = 0;
			break;
		case '{':
			if (!read_interval(s, i, &end, &bound)) {
				i++;
				break;
			}
			if (bound > TASK_MAX_REGEX_REPEAT)
				return pol_fail(w, v,
						"%s '%s' repeats something up to %u times (expected bounds of at most %u)",
						label, pol_quote(&q, s), bound,
						(unsigned)TASK_MAX_REGEX_REPEAT);
			if (bound > 1)
				cost[depth] += last * (bound - 1);
			last *= bound ? bound : 1;
			i = end;
			atom = 0;
			break;
		default:
			i++;
			break;
		}
		if (atom) {
			cost[depth] += atom;
			last = atom;
		}
		if (cost[depth] > TASK_MAX_REGEX_COST || last > TASK_MAX_REGEX_COST)
			return pol_fail(w, v,
					"%s '%s' is too complex once its repeats are expanded (expected at most %u atoms; nested {m,n} multiply)",
					label, pol_quote(&q, s), (unsigned)TASK_MAX_REGEX_COST);
	}
	for (unsigned d = 0; d <= depth; d++)
		total += cost[d];
	if (total > TASK_MAX_REGEX_COST)
		return pol_fail(w, v,
				"%s '%s' is too complex once its repeats are expanded (expected at most %u atoms; nested {m,n} multiply)",
				label, pol_quote(&q, s), (unsigned)TASK_MAX_REGEX_COST);
	return 0;
}

/* A POSIX extended regex that regcomp(REG_EXTENDED | REG_NOSUB) accepts; compiled and freed. */
static int check_regex(const struct pol_walker *w, const char *label, const struct pol_node *v)
{
	static const char expected[] = "a POSIX extended regular expression";
	char msg[128];
	struct pol_qbuf q;
	regex_t re;
	int r = want_text(w, label, v, TASK_MAX_STRING, false, expected);
	if (r < 0)
		return r;
	r = check_regex_shape(w, label, v);
	if (r < 0)
		return r;
	r = regcomp(&re, v->str, REG_EXTENDED | REG_NOSUB);
	if (r == 0) {
		regfree(&re);
		return 0;
	}
	if (r == REG_ESPACE)
		return pol_walk_enomem(w);
	(void)regerror(r, &re, msg, sizeof(msg));
	return pol_fail(w, v, "%s '%s' is not a valid regex: %s (expected %s)", label,
			pol_quote(&q, v->str), msg, expected);
}

static int fld_regex(const struct pol_walker *w, void *target, const struct pol_field *f,
		     const char *label, const struct pol_node *v)
{
	int r = check_regex(w, label, v);
	if (r < 0)
		return r;
	return pol_replace_string(w, target, f->off, v->str);
}

/* ------------------------------------------------------------------------------------------ */
/* The top level                                                                              */

static int fld_task_id(const struct pol_walker *w, void *target, const struct pol_field *f,
		       const char *label, const struct pol_node *v)
{
	static const char expected[] =
		"1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-', not starting with '.' or '-'";
	struct pol_qbuf q;
	int r = want_text(w, label, v, TASK_MAX_ID, false, expected);
	if (r < 0)
		return r;
	if (v->str[0] == '.' || v->str[0] == '-')
		return pol_fail(w, v, "%s '%s' starts with '%c' (expected %s)", label,
				pol_quote(&q, v->str), v->str[0], expected);
	for (const char *c = v->str; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-'))
			return pol_fail(w, v, "%s '%s' is not a valid task id (expected %s)", label,
					pol_quote(&q, v->str), expected);
	return pol_replace_string(w, target, f->off, v->str);
}

/* Reports a loader failure for the policy file abs_path, named by the value v. */
static int policy_load_failed(const struct pol_walker *w, const struct pol_node *v,
			      const char *abs_path, int err)
{
	char buf[128];
	struct pol_qbuf q, qa;

	if (err == -ENOMEM)
		return pol_walk_enomem(w);
	if (err == -E2BIG) {
		pol_walk_diag(w, v, "policy '%s': '%s' is over %u bytes (expected at most %u bytes)",
			      pol_quote(&q, v->str), pol_quote(&qa, abs_path),
			      (unsigned)POL_MAX_INPUT_BYTES, (unsigned)POL_MAX_INPUT_BYTES);
		return -E2BIG;
	}
	const char *msg = strerror_r(err < 0 ? -err : EIO, buf, sizeof(buf)); /* the GNU one */
	return pol_fail(w, v, "policy '%s': '%s' cannot be read: %s (expected a readable policy file)",
			pol_quote(&q, v->str), pol_quote(&qa, abs_path), msg);
}

/*
 * policy: default, a policy file (relative to the task file or absolute), or an inline
 * mapping that is a whole policy document.
 */
static int fld_policy(const struct pol_walker *w, void *target, const struct pol_field *f,
		      const char *label, const struct pol_node *v)
{
	static const char expected[] =
		"default, the path of a policy file, or a policy written inline as a mapping";
	const struct task_walker *tw = task_walker_of(w);
	struct pol_task *t = target;
	_cleanup_free_ char *abs_path = NULL;
	_cleanup_free_ char *buf = NULL;
	struct pol_policy *p = NULL;
	struct pol_qbuf q;
	size_t len = 0;
	int r;
	(void)f;

	if (v->kind == POL_NODE_MAP) {
		r = pol_parse_tree(w->name, "task", v, tw->load, tw->load_ctx, &p, w->diag);
		if (r < 0)
			return r;
		t->policy = p;
		t->policy_from = POL_TASK_POLICY_INLINE;
		return 0;
	}
	r = want_text(w, label, v, TASK_MAX_STRING, false, expected);
	if (r < 0)
		return r;
	if (streq(v->str, "default")) {
		size_t dlen;
		const char *text = pol_default_yaml(&dlen);
		r = pol_parse(DEFAULT_POLICY_NAME, text, dlen, &p, w->diag);
		if (r < 0)
			return r;
		t->policy = p;
		t->policy_from = POL_TASK_POLICY_DEFAULT;
		return 0;
	}
	if (!tw->load)
		return pol_fail(w, v,
				"%s '%s' names a file, and this task is parsed without file access (expected default or an inline policy)",
				label, pol_quote(&q, v->str));
	r = resolve_task_path(w, label, v, &abs_path);
	if (r < 0)
		return r;
	r = tw->load(tw->load_ctx, abs_path, &buf, &len);
	if (r < 0)
		return policy_load_failed(w, v, abs_path, r);
	if (len > POL_MAX_INPUT_BYTES)
		return policy_load_failed(w, v, abs_path, -E2BIG);
	if (!buf && len > 0)
		return policy_load_failed(w, v, abs_path, -EIO);
	r = pol_parse_file(abs_path, buf, len, tw->load, tw->load_ctx, &p, w->diag);
	if (r < 0)
		return r;
	t->policy = p;
	t->policy_from = POL_TASK_POLICY_FILE;
	t->policy_path = TAKE_PTR(abs_path);
	return 0;
}

/* ---- workspace ---- */

/* An octal mode with a leading 0 ("0644", quoted or not), permission bits only. */
static int fld_mode(const struct pol_walker *w, void *target, const struct pol_field *f,
		    const char *label, const struct pol_node *v)
{
	static const char expected[] = "an octal mode with a leading 0, like 0644";
	struct pol_qbuf q;
	uint32_t mode = 0;
	size_t len;
	int r = want_text(w, label, v, TASK_MAX_STRING, false, expected);
	if (r < 0)
		return r;
	len = strlen(v->str);
	if (v->str[0] != '0') {
		bool digits = strspn(v->str, "0123456789") == len;
		return pol_fail(w, v, "%s '%s' %s (expected %s)", label, pol_quote(&q, v->str),
				digits ? "has no leading 0, so it would read as decimal"
				       : "is not an octal mode",
				expected);
	}
	if (len > 5 || strspn(v->str, "01234567") != len)
		return pol_fail(w, v, "%s '%s' is not an octal mode (expected %s)", label,
				pol_quote(&q, v->str), expected);
	for (size_t i = 1; i < len; i++)
		mode = mode * 8 + (uint32_t)(v->str[i] - '0');
	if (mode > MODE_MAX)
		return pol_fail(w, v,
				"%s '%s' sets the setuid, setgid or sticky bit (expected permission bits from 0000 to 0777)",
				label, pol_quote(&q, v->str));
	*POL_FIELD_PTR(target, f->off, uint32_t) = mode;
	return 0;
}

static int fld_content(const struct pol_walker *w, void *target, const struct pol_field *f,
		       const char *label, const struct pol_node *v)
{
	struct pol_task_file *file = target;
	int r = want_text(w, label, v, TASK_MAX_CONTENT, true,
			  "the file's text; write \"\" for an empty file");
	if (r < 0)
		return r;
	(void)f;
	r = pol_replace_string(w, file, offsetof(struct pol_task_file, content), v->str);
	if (r < 0)
		return r;
	file->content_len = strlen(v->str);
	return 0;
}

static const struct pol_field file_fields[] = {
	{ .key = "path", .fn = fld_rel_path, .off = offsetof(struct pol_task_file, path) },
	{ .key = "content", .fn = fld_content },
	{ .key = "mode", .fn = fld_mode, .off = offsetof(struct pol_task_file, mode) },
};

/* True iff path is dir or below it (dir a file: the other path could not exist). */
static bool rel_is_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int fld_files(const struct pol_walker *w, void *target, const struct pol_field *f,
		     const char *label, const struct pol_node *v)
{
	struct pol_task *t = target;
	struct pol_qbuf q, qo;
	int r = pol_want_seq(w, label, v);
	if (r < 0)
		return r;
	(void)f;
	if (v->n_kids > TASK_MAX_FILES)
		return pol_fail(w, v->kids[TASK_MAX_FILES],
				"%s has more than %u entries (expected at most %u)", label,
				(unsigned)TASK_MAX_FILES, (unsigned)TASK_MAX_FILES);

	t->files = calloc(v->n_kids ? v->n_kids : 1, sizeof(*t->files));
	if (!t->files)
		return pol_walk_enomem(w);
	t->n_files = v->n_kids; /* zeroed entries free cleanly */
	for (size_t i = 0; i < v->n_kids; i++) {
		const struct pol_node *item = v->kids[i];
		struct pol_task_file *file = &t->files[i];
		char item_label[POL_LABEL_MAX];

		(void)snprintf(item_label, sizeof(item_label), "%s[%zu]", label, i);
		file->mode = TASK_DEFAULT_FILE_MODE;
		r = pol_walk_map(w, file, item_label, item, file_fields, ELEMENTSOF(file_fields));
		if (r < 0)
			return r;
		if (!file->path || !file->content)
			return pol_fail(w, item, "%s has no %s (expected a mapping with path and content)",
					item_label, file->path ? "content" : "path");
		for (size_t j = 0; j < i; j++) {
			const char *other = t->files[j].path;
			const struct pol_node *pn = pol_map_get(item, "path");

			if (streq(file->path, other))
				return pol_fail(w, pn,
						"%s.path '%s' repeats %s[%zu] (expected each path once)",
						item_label, pol_quote(&q, file->path), label, j);
			if (rel_is_within(file->path, other) || rel_is_within(other, file->path))
				return pol_fail(w, pn,
						"%s.path '%s' and %s[%zu].path '%s' cannot both be files (expected no file below another)",
						item_label, pol_quote(&q, file->path), label, j,
						pol_quote(&qo, other));
		}
	}
	return 0;
}

static const struct pol_field workspace_fields[] = {
	{ .key = "template", .fn = fld_folder, .off = offsetof(struct pol_task, workspace_template) },
	{ .key = "files", .fn = fld_files },
};

static int fld_workspace(const struct pol_walker *w, void *target, const struct pol_field *f,
			 const char *label, const struct pol_node *v)
{
	(void)f;
	return pol_walk_map(w, target, label, v, workspace_fields, ELEMENTSOF(workspace_fields));
}

/* ---- setup, teardown ---- */

#define STEP_TIMEOUT                                                                     \
	{ .key = "timeout", .fn = pol_fld_number, .off = offsetof(struct pol_task_step, timeout_ms), \
	  .unit = POL_UNIT_TIME, .min = 1, .max = TASK_MAX_TIMEOUT_MS }

static const struct pol_field setup_fields[] = {
	{ .key = "run", .fn = fld_setup_run, .off = offsetof(struct pol_task_step, argv),
	  .n_off = offsetof(struct pol_task_step, n_argv) },
	STEP_TIMEOUT,
	{ .key = "fail_on_error", .fn = pol_fld_bool,
	  .off = offsetof(struct pol_task_step, fail_on_error) },
};

static int fld_teardown_fail_on_error(const struct pol_walker *w, void *target,
				      const struct pol_field *f, const char *label,
				      const struct pol_node *v)
{
	(void)target, (void)f;
	return pol_fail(w, v,
			"%s is not allowed in teardown (expected only run and timeout; teardown runs after the verdict and never changes it)",
			label);
}

static const struct pol_field teardown_fields[] = {
	{ .key = "run", .fn = fld_grading_run, .off = offsetof(struct pol_task_step, argv),
	  .n_off = offsetof(struct pol_task_step, n_argv) },
	STEP_TIMEOUT,
	{ .key = "fail_on_error", .fn = fld_teardown_fail_on_error },
};

static int read_steps(const struct pol_walker *w, const char *label, const struct pol_node *v,
		      const struct pol_field *fields, size_t n_fields, bool fail_on_error,
		      struct pol_task_step **steps, size_t *n_steps)
{
	int r = pol_want_seq(w, label, v);
	if (r < 0)
		return r;
	if (v->n_kids > TASK_MAX_STEPS)
		return pol_fail(w, v->kids[TASK_MAX_STEPS],
				"%s has more than %u steps (expected at most %u)", label,
				(unsigned)TASK_MAX_STEPS, (unsigned)TASK_MAX_STEPS);
	*steps = calloc(v->n_kids ? v->n_kids : 1, sizeof(**steps));
	if (!*steps)
		return pol_walk_enomem(w);
	*n_steps = v->n_kids; /* zeroed entries free cleanly */
	for (size_t i = 0; i < v->n_kids; i++) {
		struct pol_task_step *step = &(*steps)[i];
		char item_label[POL_LABEL_MAX];

		(void)snprintf(item_label, sizeof(item_label), "%s[%zu]", label, i);
		step->timeout_ms = TASK_DEFAULT_STEP_TIMEOUT_MS;
		step->fail_on_error = fail_on_error;
		r = pol_walk_map(w, step, item_label, v->kids[i], fields, n_fields);
		if (r < 0)
			return r;
		if (!step->argv)
			return pol_fail(w, v->kids[i],
					"%s has no run (expected a mapping with run: [COMMAND, ARGS...])",
					item_label);
	}
	return 0;
}

static int fld_setup(const struct pol_walker *w, void *target, const struct pol_field *f,
		     const char *label, const struct pol_node *v)
{
	struct pol_task *t = target;
	(void)f;
	return read_steps(w, label, v, setup_fields, ELEMENTSOF(setup_fields), true, &t->setup,
			  &t->n_setup);
}

static int fld_teardown(const struct pol_walker *w, void *target, const struct pol_field *f,
			const char *label, const struct pol_node *v)
{
	struct pol_task *t = target;
	(void)f;
	return read_steps(w, label, v, teardown_fields, ELEMENTSOF(teardown_fields), false,
			  &t->teardown, &t->n_teardown);
}

/* ---- agent ---- */

static const struct pol_field agent_env_fields[] = {
	{ .key = "pass", .fn = pol_fld_str_list, .off = offsetof(struct pol_task_agent, env_pass),
	  .n_off = offsetof(struct pol_task_agent, n_env_pass), .check = check_env },
};

static int fld_agent_env(const struct pol_walker *w, void *target, const struct pol_field *f,
			 const char *label, const struct pol_node *v)
{
	(void)f;
	return pol_walk_map(w, target, label, v, agent_env_fields, ELEMENTSOF(agent_env_fields));
}

static const struct pol_field agent_fields[] = {
	{ .key = "run", .fn = fld_agent_run, .off = offsetof(struct pol_task_agent, argv),
	  .n_off = offsetof(struct pol_task_agent, n_argv) },
	{ .key = "timeout", .fn = pol_fld_number, .off = offsetof(struct pol_task_agent, timeout_ms),
	  .unit = POL_UNIT_TIME, .min = 1, .max = TASK_MAX_TIMEOUT_MS },
	{ .key = "env", .fn = fld_agent_env },
};

static int fld_agent(const struct pol_walker *w, void *target, const struct pol_field *f,
		     const char *label, const struct pol_node *v)
{
	struct pol_task *t = target;
	int r = pol_walk_map(w, &t->agent, label, v, agent_fields, ELEMENTSOF(agent_fields));
	if (r < 0)
		return r;
	(void)f;
	if (!t->agent.argv)
		return pol_fail(w, v, "%s has no run (expected a mapping with run: [COMMAND, ARGS...])",
				label);
	return 0;
}

/* ---- criteria ---- */

static const char *const check_keys[] = {
	"file_exists", "file_absent", "file_contains", "file_matches", "json_equals", "command",
};
#define CHECKS_EXPECTED "file_exists, file_absent, file_contains, file_matches, json_equals, command"

static int fld_file_exists(const struct pol_walker *w, void *target, const struct pol_field *f,
			   const char *label, const struct pol_node *v)
{
	struct pol_task_criterion *c = target;
	int r = fld_rel_path(w, c, f, label, v);
	if (r < 0)
		return r;
	c->check = POL_TASK_FILE_EXISTS;
	return 0;
}

static int fld_file_absent(const struct pol_walker *w, void *target, const struct pol_field *f,
			   const char *label, const struct pol_node *v)
{
	struct pol_task_criterion *c = target;
	int r = fld_rel_path(w, c, f, label, v);
	if (r < 0)
		return r;
	c->check = POL_TASK_FILE_ABSENT;
	return 0;
}

static const struct pol_field contains_fields[] = {
	{ .key = "path", .fn = fld_rel_path, .off = offsetof(struct pol_task_criterion, path) },
	{ .key = "includes", .fn = pol_fld_str_list,
	  .off = offsetof(struct pol_task_criterion, includes),
	  .n_off = offsetof(struct pol_task_criterion, n_includes), .check = check_needle },
	{ .key = "excludes", .fn = pol_fld_str_list,
	  .off = offsetof(struct pol_task_criterion, excludes),
	  .n_off = offsetof(struct pol_task_criterion, n_excludes), .check = check_needle },
};

static int fld_file_contains(const struct pol_walker *w, void *target, const struct pol_field *f,
			     const char *label, const struct pol_node *v)
{
	struct pol_task_criterion *c = target;
	const struct pol_node *excludes;
	struct pol_qbuf q;
	int r = pol_walk_map(w, c, label, v, contains_fields, ELEMENTSOF(contains_fields));
	if (r < 0)
		return r;
	(void)f;
	if (!c->path)
		return pol_fail(w, v, "%s has no path (expected a mapping with path and includes or excludes)",
				label);
	if (c->n_includes + c->n_excludes == 0)
		return pol_fail(w, v,
				"%s has no includes or excludes entry (expected at least one string to look for)",
				label);
	excludes = pol_map_get(v, "excludes");
	for (size_t i = 0; i < c->n_excludes; i++)
		if (pol_strv_contains(c->includes, c->n_includes, c->excludes[i]))
			return pol_fail(w, excludes->kids[i],
					"%s.excludes[%zu] '%s' is also in %s.includes (expected a string in at most one list)",
					label, i, pol_quote(&q, c->excludes[i]), label);
	c->check = POL_TASK_FILE_CONTAINS;
	return 0;
}

static const struct pol_field matches_fields[] = {
	{ .key = "path", .fn = fld_rel_path, .off = offsetof(struct pol_task_criterion, path) },
	{ .key = "regex", .fn = fld_regex, .off = offsetof(struct pol_task_criterion, regex) },
};

static int fld_file_matches(const struct pol_walker *w, void *target, const struct pol_field *f,
			    const char *label, const struct pol_node *v)
{
	struct pol_task_criterion *c = target;
	int r = pol_walk_map(w, c, label, v, matches_fields, ELEMENTSOF(matches_fields));
	if (r < 0)
		return r;
	(void)f;
	if (!c->path || !c->regex)
		return pol_fail(w, v, "%s has no %s (expected a mapping with path and regex)", label,
				c->path ? "regex" : "path");
	c->check = POL_TASK_FILE_MATCHES;
	return 0;
}

/* RFC 6901: "" (the whole document) or "/"-separated tokens; '~' only as ~0 and ~1. */
static int fld_pointer(const struct pol_walker *w, void *target, const struct pol_field *f,
		       const char *label, const struct pol_node *v)
{
	static const char expected[] = "a JSON pointer like /items/0/name, or \"\" for the whole document";
	struct pol_qbuf q;
	int r = want_text(w, label, v, TASK_MAX_STRING, true, expected);
	if (r < 0)
		return r;
	if (v->str[0] && v->str[0] != '/')
		return pol_fail(w, v, "%s '%s' does not start with / (expected %s)", label,
				pol_quote(&q, v->str), expected);
	for (const char *c = v->str; *c; c++)
		if (c[0] == '~' && c[1] != '0' && c[1] != '1')
			return pol_fail(w, v,
					"%s '%s' has a '~' that is not ~0 or ~1 (expected ~0 for ~ and ~1 for / inside a token)",
					label, pol_quote(&q, v->str));
	return pol_replace_string(w, target, f->off, v->str);
}

static const struct {
	const char *name;
	enum pol_task_json_op op;
} json_ops[] = {
	{ "eq", POL_TASK_JSON_EQ }, { "ne", POL_TASK_JSON_NE }, { "exists", POL_TASK_JSON_EXISTS },
	{ "lt", POL_TASK_JSON_LT }, { "le", POL_TASK_JSON_LE }, { "gt", POL_TASK_JSON_GT },
	{ "ge", POL_TASK_JSON_GE },
};

#define JSON_OPS_EXPECTED "one of: eq, ne, exists, lt, le, gt, ge"

static int fld_json_op(const struct pol_walker *w, void *target, const struct pol_field *f,
		       const char *label, const struct pol_node *v)
{
	struct pol_qbuf q;
	int r = want_text(w, label, v, TASK_MAX_STRING, false, JSON_OPS_EXPECTED);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(json_ops); i++) {
		if (streq(v->str, json_ops[i].name)) {
			*POL_FIELD_PTR(target, f->off, enum pol_task_json_op) = json_ops[i].op;
			return 0;
		}
	}
	return pol_fail(w, v, "%s '%s' is not a comparison (expected %s)", label,
			pol_quote(&q, v->str), JSON_OPS_EXPECTED);
}

/* True iff s is a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool is_json_number(const char *s)
{
	size_t i = 0;

	if (s[i] == '-')
		i++;
	if (s[i] == '0')
		i++;
	else if (s[i] >= '1' && s[i] <= '9')
		while (s[i] >= '0' && s[i] <= '9')
			i++;
	else
		return false;
	if (s[i] == '.') {
		if (!(s[++i] >= '0' && s[i] <= '9'))
			return false;
		while (s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (s[i] == 'e' || s[i] == 'E') {
		i++;
		if (s[i] == '+' || s[i] == '-')
			i++;
		if (!(s[i] >= '0' && s[i] <= '9'))
			return false;
		while (s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return s[i] == '\0';
}

/* Plain scalars that some YAML reader takes for a boolean or a special float. */
static bool is_yaml11_special(const char *s)
{
	static const char *const words[] = {
		"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON",
		"off", "Off", "OFF", "True", "TRUE", "False", "FALSE", ".inf", ".Inf", ".INF",
		".nan", ".NaN", ".NAN",
	};

	for (size_t i = 0; i < ELEMENTSOF(words); i++)
		if (streq(s, words[i]))
			return true;
	return false;
}

/*
 * json_equals.value: a quoted scalar is a string; a plain one is null, true, false, a JSON
 * number, or else a string unless a YAML reader could take it for something else (a number
 * in another spelling, yes/no/on/off, .inf): those must be quoted.
 */
static int fld_json_value(const struct pol_walker *w, void *target, const struct pol_field *f,
			  const char *label, const struct pol_node *v)
{
	static const char expected[] = "a string, a number, true, false or null";
	struct pol_task_criterion *c = target;
	const char *s = v->str;
	struct pol_qbuf q;
	int r;
	(void)f;

	if (v->kind == POL_NODE_SCALAR && streq(s, "null") && v->plain) {
		c->value_type = POL_TASK_JSON_NULL;
		return 0;
	}
	if (pol_node_is_null(v))
		return pol_fail(w, v, "%s is %s (expected %s; write null for JSON null)", label,
				s[0] ? "a null spelling other than null" : "empty", expected);
	r = want_text(w, label, v, TASK_MAX_STRING, true, expected);
	if (r < 0)
		return r;
	if (!v->plain) {
		c->value_type = POL_TASK_JSON_STRING;
		return pol_replace_string(w, c, offsetof(struct pol_task_criterion, value_text), s);
	}
	if (streq(s, "true") || streq(s, "false")) {
		c->value_type = POL_TASK_JSON_BOOL;
		c->value_bool = streq(s, "true");
		return 0;
	}
	if (is_json_number(s)) {
		double d = strtod(s, NULL);
		if (!isfinite(d))
			return pol_fail(w, v, "%s '%s' is out of range (expected a finite number)",
					label, pol_quote(&q, s));
		c->value_type = POL_TASK_JSON_NUMBER;
		c->value_number = d;
		return pol_replace_string(w, c, offsetof(struct pol_task_criterion, value_text), s);
	}
	if ((s[0] >= '0' && s[0] <= '9') ||
	    ((s[0] == '-' || s[0] == '+' || s[0] == '.') &&
	     ((s[1] >= '0' && s[1] <= '9') || s[1] == '.')))
		return pol_fail(w, v,
				"%s '%s' is not a JSON number (expected a number like 42, -1.5 or 2e3, or a quoted string)",
				label, pol_quote(&q, s));
	if (is_yaml11_special(s))
		return pol_fail(w, v,
				"%s '%s' is ambiguous in YAML (expected true, false or a number unquoted, or a quoted string)",
				label, pol_quote(&q, s));
	c->value_type = POL_TASK_JSON_STRING;
	return pol_replace_string(w, c, offsetof(struct pol_task_criterion, value_text), s);
}

static const struct pol_field json_fields[] = {
	{ .key = "path", .fn = fld_rel_path, .off = offsetof(struct pol_task_criterion, path) },
	{ .key = "pointer", .fn = fld_pointer, .off = offsetof(struct pol_task_criterion, pointer) },
	{ .key = "op", .fn = fld_json_op, .off = offsetof(struct pol_task_criterion, op) },
	{ .key = "value", .fn = fld_json_value },
};

static int fld_json_equals(const struct pol_walker *w, void *target, const struct pol_field *f,
			   const char *label, const struct pol_node *v)
{
	static const char *const required[] = { "path", "pointer", "op" };
	struct pol_task_criterion *c = target;
	const struct pol_node *value;
	struct pol_qbuf q;
	int r = pol_walk_map(w, c, label, v, json_fields, ELEMENTSOF(json_fields));
	if (r < 0)
		return r;
	(void)f;
	for (size_t i = 0; i < ELEMENTSOF(required); i++)
		if (!pol_map_get(v, required[i]))
			return pol_fail(w, v,
					"%s has no %s (expected a mapping with path, pointer, op and, unless op is exists, value)",
					label, required[i]);
	value = pol_map_get(v, "value");
	if (c->op == POL_TASK_JSON_EXISTS && value)
		return pol_fail(w, value, "%s.value is set, but op is exists (expected no value with exists)",
				label);
	if (c->op != POL_TASK_JSON_EXISTS && !value)
		return pol_fail(w, v, "%s has no value (expected a value to compare with op %s)", label,
				pol_task_json_op_name(c->op));
	if ((c->op == POL_TASK_JSON_LT || c->op == POL_TASK_JSON_LE || c->op == POL_TASK_JSON_GT ||
	     c->op == POL_TASK_JSON_GE) && c->value_type != POL_TASK_JSON_NUMBER)
		return pol_fail(w, value, "%s.value '%s' is not a number, but op is %s (expected a number)",
				label, pol_quote(&q, value->str), pol_task_json_op_name(c->op));
	c->check = POL_TASK_JSON_EQUALS;
	return 0;
}

/* ---- command ---- */

static const char *const stdout_keys[] = { "exact", "contains", "regex" };

static int set_stdout(const struct pol_walker *w, void *target, enum pol_task_stdout kind,
		      const char *s)
{
	struct pol_task_command *cmd = target;
	int r = pol_replace_string(w, cmd, offsetof(struct pol_task_command, stdout_text), s);
	if (r < 0)
		return r;
	cmd->stdout_kind = kind;
	return 0;
}

static int fld_stdout_exact(const struct pol_walker *w, void *target, const struct pol_field *f,
			    const char *label, const struct pol_node *v)
{
	int r = want_text(w, label, v, TASK_MAX_STRING, true,
			  "the whole output; write \"\" for none");
	if (r < 0)
		return r;
	(void)f;
	return set_stdout(w, target, POL_TASK_STDOUT_EXACT, v->str);
}

static int fld_stdout_contains(const struct pol_walker *w, void *target,
			       const struct pol_field *f, const char *label,
			       const struct pol_node *v)
{
	int r = check_needle(w, label, v);
	if (r < 0)
		return r;
	(void)f;
	return set_stdout(w, target, POL_TASK_STDOUT_CONTAINS, v->str);
}

static int fld_stdout_regex(const struct pol_walker *w, void *target, const struct pol_field *f,
			    const char *label, const struct pol_node *v)
{
	int r = check_regex(w, label, v);
	if (r < 0)
		return r;
	(void)f;
	return set_stdout(w, target, POL_TASK_STDOUT_REGEX, v->str);
}

static const struct pol_field stdout_fields[] = {
	{ .key = "exact", .fn = fld_stdout_exact },
	{ .key = "contains", .fn = fld_stdout_contains },
	{ .key = "regex", .fn = fld_stdout_regex },
};

static int fld_stdout(const struct pol_walker *w, void *target, const struct pol_field *f,
		      const char *label, const struct pol_node *v)
{
	const struct pol_task_command *cmd = target;
	int r = only_one_of(w, label, v, stdout_keys, ELEMENTSOF(stdout_keys),
			    "exact, contains, regex");
	if (r < 0)
		return r;
	r = pol_walk_map(w, target, label, v, stdout_fields, ELEMENTSOF(stdout_fields));
	if (r < 0)
		return r;
	(void)f;
	if (cmd->stdout_kind == POL_TASK_STDOUT_ANY)
		return pol_fail(w, v, "%s has no check (expected one of: exact, contains, regex)", label);
	return 0;
}

static const struct pol_field command_env_fields[] = {
	{ .key = "pass", .fn = pol_fld_str_list,
	  .off = offsetof(struct pol_task_command, env_pass),
	  .n_off = offsetof(struct pol_task_command, n_env_pass), .check = check_env },
};

static int fld_command_env(const struct pol_walker *w, void *target, const struct pol_field *f,
			   const char *label, const struct pol_node *v)
{
	(void)f;
	return pol_walk_map(w, target, label, v, command_env_fields,
			    ELEMENTSOF(command_env_fields));
}

static const struct pol_field command_fields[] = {
	{ .key = "run", .fn = fld_grading_run, .off = offsetof(struct pol_task_command, argv),
	  .n_off = offsetof(struct pol_task_command, n_argv) },
	{ .key = "timeout", .fn = pol_fld_number,
	  .off = offsetof(struct pol_task_command, timeout_ms), .unit = POL_UNIT_TIME, .min = 1,
	  .max = TASK_MAX_TIMEOUT_MS },
	{ .key = "expect_exit", .fn = pol_fld_number,
	  .off = offsetof(struct pol_task_command, expect_exit), .unit = POL_UNIT_U32, .min = 0,
	  .max = 255 },
	{ .key = "stdout", .fn = fld_stdout },
	{ .key = "env", .fn = fld_command_env },
};

static int fld_command(const struct pol_walker *w, void *target, const struct pol_field *f,
		       const char *label, const struct pol_node *v)
{
	struct pol_task_criterion *c = target;
	int r;
	(void)f;

	c->command.timeout_ms = TASK_DEFAULT_COMMAND_TIMEOUT_MS;
	r = pol_walk_map(w, &c->command, label, v, command_fields, ELEMENTSOF(command_fields));
	if (r < 0)
		return r;
	if (!c->command.argv)
		return pol_fail(w, v, "%s has no run (expected a mapping with run: [COMMAND, ARGS...])",
				label);
	c->check = POL_TASK_COMMAND;
	return 0;
}

static const struct pol_field criterion_fields[] = {
	{ .key = "description", .fn = fld_text,
	  .off = offsetof(struct pol_task_criterion, description) },
	{ .key = "weight", .fn = fld_weight,
	  .off = offsetof(struct pol_task_criterion, weight_milli), .min = 0,
	  .max = (uint64_t)TASK_MAX_WEIGHT * 1000u },
	{ .key = "pass_threshold", .fn = fld_threshold,
	  .off = offsetof(struct pol_task_criterion, pass_threshold_milli), .min = 0, .max = 1000 },
	{ .key = "file_exists", .fn = fld_file_exists,
	  .off = offsetof(struct pol_task_criterion, path) },
	{ .key = "file_absent", .fn = fld_file_absent,
	  .off = offsetof(struct pol_task_criterion, path) },
	{ .key = "file_contains", .fn = fld_file_contains },
	{ .key = "file_matches", .fn = fld_file_matches },
	{ .key = "json_equals", .fn = fld_json_equals },
	{ .key = "command", .fn = fld_command },
};

static int fld_criteria(const struct pol_walker *w, void *target, const struct pol_field *f,
			const char *label, const struct pol_node *v)
{
	struct pol_task *t = target;
	uint64_t total = 0;
	int r = pol_want_seq(w, label, v);
	if (r < 0)
		return r;
	(void)f;
	if (v->n_kids == 0)
		return pol_fail(w, v, "%s is empty (expected 1 to %u criteria)", label,
				(unsigned)TASK_MAX_CRITERIA);
	if (v->n_kids > TASK_MAX_CRITERIA)
		return pol_fail(w, v->kids[TASK_MAX_CRITERIA],
				"%s has more than %u entries (expected at most %u)", label,
				(unsigned)TASK_MAX_CRITERIA, (unsigned)TASK_MAX_CRITERIA);

	t->criteria = calloc(v->n_kids, sizeof(*t->criteria));
	if (!t->criteria)
		return pol_walk_enomem(w);
	t->n_criteria = v->n_kids; /* zeroed entries free cleanly */
	for (size_t i = 0; i < v->n_kids; i++) {
		const struct pol_node *item = v->kids[i];
		struct pol_task_criterion *c = &t->criteria[i];
		char item_label[POL_LABEL_MAX];

		(void)snprintf(item_label, sizeof(item_label), "%s[%zu]", label, i);
		c->weight_milli = TASK_DEFAULT_WEIGHT_MILLI;
		c->pass_threshold_milli = TASK_DEFAULT_THRESHOLD_MILLI;
		r = only_one_of(w, item_label, item, check_keys, ELEMENTSOF(check_keys),
				CHECKS_EXPECTED);
		if (r >= 0)
			r = pol_walk_map(w, c, item_label, item, criterion_fields,
					 ELEMENTSOF(criterion_fields));
		if (r < 0)
			return r;
		if (!c->description)
			return pol_fail(w, item,
					"%s has no description (expected a mapping with description and a check)",
					item_label);
		bool has_check = false;
		for (size_t k = 0; k < ELEMENTSOF(check_keys); k++)
			has_check = has_check || pol_map_get(item, check_keys[k]);
		if (!has_check)
			return pol_fail(w, item, "%s has no check (expected one of: " CHECKS_EXPECTED ")",
					item_label);
		total += c->weight_milli;
	}
	if (total == 0)
		return pol_fail(w, v,
				"%s all have weight 0 (expected at least one criterion with a weight above 0)",
				label);
	return 0;
}

/* ---- the top level ---- */

static const struct pol_field root_fields[] = {
	{ .key = "schema_version", .fn = fld_applied_early },
	{ .key = "task_id", .fn = fld_task_id, .off = offsetof(struct pol_task, task_id) },
	{ .key = "description", .fn = fld_text, .off = offsetof(struct pol_task, description) },
	{ .key = "policy", .fn = fld_policy },
	{ .key = "workspace", .fn = fld_workspace },
	{ .key = "setup", .fn = fld_setup },
	{ .key = "agent", .fn = fld_agent },
	{ .key = "reference", .fn = fld_applied_early },
	{ .key = "criteria", .fn = fld_criteria },
	{ .key = "teardown", .fn = fld_teardown },
};

static const struct pol_field reference_field = {
	.key = "reference", .fn = fld_folder, .off = offsetof(struct pol_task, reference),
};

static bool is_same_or_below(const char *path, const char *dir)
{
	return streq(path, dir) || streq(dir, "/") || pol_path_is_under(path, dir);
}

/*
 * Folders must not hand the agent what it must not see: the reference inside the workspace
 * template (it would be copied into the workspace), or the task file itself, which holds the
 * criteria. Lexical only: symlinks are the caller's business.
 */
static int check_folders(const struct pol_walker *w, const struct pol_task *t,
			 const struct pol_node *root)
{
	struct pol_qbuf q, qt;

	if (!t->workspace_template)
		return 0;
	const struct pol_node *tmpl = pol_map_get(pol_map_get(root, "workspace"), "template");
	assert(tmpl);
	if (t->reference && is_same_or_below(t->reference, t->workspace_template))
		return pol_fail(w, pol_map_get(root, "reference"),
				"reference '%s' is inside workspace.template '%s' (expected a folder outside the template, which the agent sees)",
				pol_quote(&q, t->reference), pol_quote(&qt, t->workspace_template));
	if (w->dir && is_same_or_below(w->name, t->workspace_template))
		return pol_fail(w, tmpl,
				"workspace.template '%s' holds this task file (expected a folder without it; the agent would see the criteria)",
				pol_quote(&q, t->workspace_template));
	return 0;
}

static int apply_task(struct task_walker *tw, struct pol_task *t, const struct pol_node *root)
{
	static const char *const required[] = { "task_id", "agent", "criteria" };
	const struct pol_walker *w = &tw->w;
	const struct pol_node *v;
	struct pol_qbuf q;
	int r;

	if (root->kind != POL_NODE_MAP)
		return pol_fail(w, root, "document is %s (expected a mapping of task fields)",
				pol_describe(root));

	/* The version decides what every other key means: it is checked before them. */
	v = pol_map_get(root, "schema_version");
	if (!v)
		return pol_fail(w, root, "the top level has no schema_version (expected schema_version: %d)",
				TASK_SCHEMA_VERSION);
	r = pol_want_plain(w, "schema_version", v, "1");
	if (r < 0)
		return r;
	if (!streq(v->str, "1"))
		return pol_fail(w, v, "schema_version '%s' is not supported (expected %d)",
				pol_quote(&q, v->str), TASK_SCHEMA_VERSION);

	v = pol_map_get(root, "reference");
	if (v) {
		r = fld_folder(w, t, &reference_field, "reference", v);
		if (r < 0)
			return r;
	}
	tw->has_reference = v != NULL;

	t->agent.timeout_ms = TASK_DEFAULT_AGENT_TIMEOUT_MS;
	r = pol_walk_map(w, t, "", root, root_fields, ELEMENTSOF(root_fields));
	if (r < 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(required); i++)
		if (!pol_map_get(root, required[i]))
			return pol_fail(w, root,
					"the top level has no %s (expected schema_version, task_id, agent and criteria)",
					required[i]);
	r = check_folders(w, t, root);
	if (r < 0)
		return r;

	if (!t->policy) {
		size_t len;
		const char *text = pol_default_yaml(&len);
		r = pol_parse(DEFAULT_POLICY_NAME, text, len, &t->policy, w->diag);
		if (r < 0)
			return r;
		t->policy_from = POL_TASK_POLICY_DEFAULT;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Public interface                                                                           */

static void steps_free(struct pol_task_step *s, size_t n)
{
	if (!s)
		return;
	for (size_t i = 0; i < n; i++)
		pol_strv_free(s[i].argv, s[i].n_argv);
	free(s);
}

static void criterion_done(struct pol_task_criterion *c)
{
	free(c->description);
	free(c->path);
	pol_strv_free(c->includes, c->n_includes);
	pol_strv_free(c->excludes, c->n_excludes);
	free(c->regex);
	free(c->pointer);
	free(c->value_text);
	pol_strv_free(c->command.argv, c->command.n_argv);
	free(c->command.stdout_text);
	pol_strv_free(c->command.env_pass, c->command.n_env_pass);
}

/* Frees t and everything it owns; NULL-safe; returns NULL. See task.h. */
struct pol_task *pol_task_free(struct pol_task *t)
{
	if (!t)
		return NULL;
	free(t->source);
	free(t->task_id);
	free(t->description);
	free(t->policy_path);
	pol_free(t->policy);
	free(t->workspace_template);
	for (size_t i = 0; t->files && i < t->n_files; i++) {
		free(t->files[i].path);
		free(t->files[i].content);
	}
	free(t->files);
	steps_free(t->setup, t->n_setup);
	pol_strv_free(t->agent.argv, t->agent.n_argv);
	pol_strv_free(t->agent.env_pass, t->agent.n_env_pass);
	free(t->reference);
	for (size_t i = 0; t->criteria && i < t->n_criteria; i++)
		criterion_done(&t->criteria[i]);
	free(t->criteria);
	steps_free(t->teardown, t->n_teardown);
	free(t);
	return NULL;
}
DEFINE_CLEANUP(struct pol_task *, pol_task_free)

/*
 * Parses the task file path (buf, len bytes, borrowed). On success stores a new task the
 * caller owns in *out and returns 0; on failure returns -EINVAL, -E2BIG or -ENOMEM, fills
 * *reterr when not NULL and leaves *out untouched. See task.h.
 */
int pol_task_parse(const char *path, const void *buf, size_t len, pol_loader load, void *ctx,
		   struct pol_task **out, struct pol_diag *reterr)
{
	_cleanup_(pol_node_freep) struct pol_node *root = NULL;
	_cleanup_(pol_task_freep) struct pol_task *t = NULL;
	_cleanup_free_ char *dir = NULL;
	const char *name = path ? path : "<input>";
	int r;

	assert(out);
	if (len > TASK_MAX_INPUT_BYTES) {
		pol_diag_set(reterr, name, 0, 0, "input is %zu bytes (expected at most %u bytes)", len,
			     (unsigned)TASK_MAX_INPUT_BYTES);
		return -E2BIG;
	}
	if (!buf && len > 0) {
		pol_diag_set(reterr, name, 0, 0, "no input buffer (expected bytes)");
		return -EINVAL;
	}
	if (pol_dir_of(name, &dir) < 0) {
		pol_diag_set(reterr, name, 0, 0, "out of memory (expected to parse the task)");
		return -ENOMEM;
	}
	struct task_walker tw = {
		.w = { .name = name, .dir = dir, .what = "task", .diag = reterr },
		.buf = buf,
		.len = buf ? len : 0,
		.load = load,
		.load_ctx = ctx,
	};

	r = pol_yaml_load(name, buf, len, &task_limits, &root, reterr);
	if (r < 0)
		return r;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->source = strdup(name)))
		return pol_walk_enomem(&tw.w);
	r = apply_task(&tw, t, root);
	if (r < 0)
		return r;
	*out = TAKE_PTR(t);
	return 0;
}

const char *pol_task_check_name(enum pol_task_check check)
{
	switch (check) {
	case POL_TASK_FILE_EXISTS:
	case POL_TASK_FILE_ABSENT:
	case POL_TASK_FILE_CONTAINS:
	case POL_TASK_FILE_MATCHES:
	case POL_TASK_JSON_EQUALS:
	case POL_TASK_COMMAND:
		return check_keys[check];
	}
	return NULL;
}

const char *pol_task_json_op_name(enum pol_task_json_op op)
{
	for (size_t i = 0; i < ELEMENTSOF(json_ops); i++)
		if (json_ops[i].op == op)
			return json_ops[i].name;
	return NULL;
}

const char *pol_task_policy_from_name(enum pol_task_policy_from from)
{
	switch (from) {
	case POL_TASK_POLICY_DEFAULT:
		return "default";
	case POL_TASK_POLICY_FILE:
		return "file";
	case POL_TASK_POLICY_INLINE:
		return "inline";
	}
	return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* JSON                                                                                       */

/* Adds item to o under key (o an object) or to o (an array, key NULL); takes item. */
static int j_add(cJSON *o, const char *key, cJSON *item)
{
	if (!item)
		return -ENOMEM;
	if (key ? !cJSON_AddItemToObject(o, key, item) : !cJSON_AddItemToArray(o, item)) {
		cJSON_Delete(item);
		return -ENOMEM;
	}
	return 0;
}

static int j_str(cJSON *o, const char *key, const char *s)
{
	if (!s || !utf8_valid(s))
		return -EINVAL;
	return j_add(o, key, cJSON_CreateString(s));
}

static int j_str_or_null(cJSON *o, const char *key, const char *s)
{
	return s ? j_str(o, key, s) : j_add(o, key, cJSON_CreateNull());
}

/* Integers go in as raw digits: cJSON's numbers are doubles, exact only up to 2^53. */
static int j_u64(cJSON *o, const char *key, uint64_t v)
{
	char digits[24];
	(void)snprintf(digits, sizeof(digits), "%" PRIu64, v);
	return j_add(o, key, cJSON_CreateRaw(digits));
}

/* Thousandths as the shortest exact decimal: 2500 is 2.5, 1000 is 1, 1 is 0.001. */
static int j_milli(cJSON *o, const char *key, uint32_t m)
{
	char digits[24];
	int k = snprintf(digits, sizeof(digits), "%" PRIu32 ".%03" PRIu32, m / 1000, m % 1000);
	assert(k > 0 && (size_t)k < sizeof(digits));
	while (digits[k - 1] == '0')
		digits[--k] = '\0';
	if (digits[k - 1] == '.')
		digits[--k] = '\0';
	return j_add(o, key, cJSON_CreateRaw(digits));
}

static int j_bool(cJSON *o, const char *key, bool b)
{
	return j_add(o, key, cJSON_CreateBool(b));
}

static int j_strv(cJSON *o, const char *key, char *const *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	int r = j_add(o, key, a);
	if (r < 0)
		return r;
	if (n && !v)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		r = j_str(a, NULL, v[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A new object added to o under key; NULL when out of memory. */
static cJSON *j_obj(cJSON *o, const char *key)
{
	cJSON *n = cJSON_CreateObject();
	return j_add(o, key, n) < 0 ? NULL : n;
}

static cJSON *j_arr(cJSON *o, const char *key)
{
	cJSON *n = cJSON_CreateArray();
	return j_add(o, key, n) < 0 ? NULL : n;
}

static int j_env(cJSON *o, char *const *pass, size_t n_pass)
{
	cJSON *env = j_obj(o, "env");
	return env ? j_strv(env, "pass", pass, n_pass) : -ENOMEM;
}

static int j_run(cJSON *o, char *const *argv, size_t n_argv, uint64_t timeout_ms)
{
	int r;
	if (n_argv == 0)
		return -EINVAL;
	r = j_strv(o, "run", argv, n_argv);
	if (r >= 0)
		r = j_u64(o, "timeout_ms", timeout_ms);
	return r;
}

/*
 * The formatted text of pol_to_json, indented by depth tabs after every line break so that it
 * sits in cJSON_Print's output as if cJSON had printed it (its numbers stay exact: raw text).
 */
static int policy_raw(const struct pol_policy *p, unsigned depth, char **out)
{
	_cleanup_free_ char *text = NULL;
	size_t lines = 0, o = 0;
	char *res;
	int r;

	if (!p)
		return -EINVAL;
	r = pol_to_json(p, &text);
	if (r < 0)
		return r;
	for (const char *c = text; *c; c++)
		lines += *c == '\n';
	res = malloc(strlen(text) + lines * depth + 1);
	if (!res)
		return -ENOMEM;
	for (const char *c = text; *c; c++) {
		res[o++] = *c;
		if (*c == '\n')
			for (unsigned i = 0; i < depth; i++)
				res[o++] = '\t';
	}
	res[o] = '\0';
	*out = res;
	return 0;
}

static int j_policy(cJSON *root, const struct pol_task *t)
{
	_cleanup_free_ char *raw = NULL;
	const char *from = pol_task_policy_from_name(t->policy_from);
	cJSON *pol = j_obj(root, "policy");
	int r;

	if (!pol)
		return -ENOMEM;
	if (!from || (t->policy_from == POL_TASK_POLICY_FILE) != (t->policy_path != NULL))
		return -EINVAL;
	r = j_str(pol, "from", from);
	if (r >= 0)
		r = j_str_or_null(pol, "path", t->policy_path);
	if (r >= 0)
		r = policy_raw(t->policy, 2, &raw);
	if (r >= 0)
		r = j_add(pol, "effective", cJSON_CreateRaw(raw));
	return r;
}

static int j_workspace(cJSON *root, const struct pol_task *t)
{
	cJSON *ws = j_obj(root, "workspace"), *files;
	int r;

	if (!ws)
		return -ENOMEM;
	r = j_str_or_null(ws, "template", t->workspace_template);
	if (r < 0)
		return r;
	if (!(files = j_arr(ws, "files")))
		return -ENOMEM;
	if (t->n_files && !t->files)
		return -EINVAL;
	for (size_t i = 0; i < t->n_files; i++) {
		const struct pol_task_file *f = &t->files[i];
		cJSON *o = j_obj(files, NULL);
		char mode[8];

		if (!o)
			return -ENOMEM;
		if (f->mode > MODE_MAX || !f->content || strlen(f->content) != f->content_len)
			return -EINVAL;
		(void)snprintf(mode, sizeof(mode), "%04" PRIo32, f->mode);
		r = j_str(o, "path", f->path);
		if (r >= 0)
			r = j_str(o, "mode", mode);
		if (r >= 0)
			r = j_str(o, "content", f->content);
		if (r < 0)
			return r;
	}
	return 0;
}

static int j_steps(cJSON *root, const char *key, const struct pol_task_step *steps, size_t n,
		   bool with_fail_on_error)
{
	cJSON *a = j_arr(root, key);

	if (!a)
		return -ENOMEM;
	if (n && !steps)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		cJSON *o = j_obj(a, NULL);
		int r;

		if (!o)
			return -ENOMEM;
		r = j_run(o, steps[i].argv, steps[i].n_argv, steps[i].timeout_ms);
		if (r >= 0 && with_fail_on_error)
			r = j_bool(o, "fail_on_error", steps[i].fail_on_error);
		if (r < 0)
			return r;
	}
	return 0;
}

static int j_agent(cJSON *root, const struct pol_task_agent *a)
{
	cJSON *o = j_obj(root, "agent");
	int r;

	if (!o)
		return -ENOMEM;
	r = j_run(o, a->argv, a->n_argv, a->timeout_ms);
	if (r >= 0)
		r = j_env(o, a->env_pass, a->n_env_pass);
	return r;
}

static int j_json_value(cJSON *o, const struct pol_task_criterion *c)
{
	switch (c->value_type) {
	case POL_TASK_JSON_NULL:
		return j_add(o, "value", cJSON_CreateNull());
	case POL_TASK_JSON_BOOL:
		return j_bool(o, "value", c->value_bool);
	case POL_TASK_JSON_NUMBER:
		if (!c->value_text || !is_json_number(c->value_text))
			return -EINVAL;
		return j_add(o, "value", cJSON_CreateRaw(c->value_text));
	case POL_TASK_JSON_STRING:
		return j_str(o, "value", c->value_text);
	}
	return -EINVAL;
}

static int j_command(cJSON *o, const struct pol_task_command *cmd)
{
	static const char *const kinds[] = { NULL, "exact", "contains", "regex" };
	cJSON *c = j_obj(o, "command"), *out;
	int r;

	if (!c)
		return -ENOMEM;
	r = j_run(c, cmd->argv, cmd->n_argv, cmd->timeout_ms);
	if (r >= 0)
		r = j_u64(c, "expect_exit", cmd->expect_exit);
	if (r < 0)
		return r;
	switch (cmd->stdout_kind) {
	case POL_TASK_STDOUT_ANY:
		r = j_add(c, "stdout", cJSON_CreateNull());
		break;
	case POL_TASK_STDOUT_EXACT:
	case POL_TASK_STDOUT_CONTAINS:
	case POL_TASK_STDOUT_REGEX:
		out = j_obj(c, "stdout");
		r = out ? j_str(out, kinds[cmd->stdout_kind], cmd->stdout_text) : -ENOMEM;
		break;
	default:
		return -EINVAL;
	}
	if (r >= 0)
		r = j_env(c, cmd->env_pass, cmd->n_env_pass);
	return r;
}

static int j_criterion(cJSON *a, const struct pol_task_criterion *c)
{
	const char *name = pol_task_check_name(c->check);
	cJSON *o = j_obj(a, NULL), *k;
	int r;

	if (!o)
		return -ENOMEM;
	if (!name)
		return -EINVAL;
	r = j_str(o, "description", c->description);
	if (r >= 0)
		r = j_milli(o, "weight", c->weight_milli);
	if (r >= 0)
		r = c->pass_threshold_milli <= 1000 ? j_milli(o, "pass_threshold",
							      c->pass_threshold_milli)
						    : -EINVAL;
	if (r < 0)
		return r;

	switch (c->check) {
	case POL_TASK_FILE_EXISTS:
	case POL_TASK_FILE_ABSENT:
		return j_str(o, name, c->path);
	case POL_TASK_FILE_CONTAINS:
		if (!(k = j_obj(o, name)))
			return -ENOMEM;
		r = j_str(k, "path", c->path);
		if (r >= 0)
			r = j_strv(k, "includes", c->includes, c->n_includes);
		if (r >= 0)
			r = j_strv(k, "excludes", c->excludes, c->n_excludes);
		return r;
	case POL_TASK_FILE_MATCHES:
		if (!(k = j_obj(o, name)))
			return -ENOMEM;
		r = j_str(k, "path", c->path);
		if (r >= 0)
			r = j_str(k, "regex", c->regex);
		return r;
	case POL_TASK_JSON_EQUALS:
		if (!(k = j_obj(o, name)))
			return -ENOMEM;
		r = j_str(k, "path", c->path);
		if (r >= 0)
			r = j_str(k, "pointer", c->pointer);
		if (r >= 0)
			r = pol_task_json_op_name(c->op) ? j_str(k, "op", pol_task_json_op_name(c->op))
							 : -EINVAL;
		if (r >= 0 && c->op != POL_TASK_JSON_EXISTS)
			r = j_json_value(k, c);
		return r;
	case POL_TASK_COMMAND:
		return j_command(o, &c->command);
	}
	return -EINVAL;
}

/* The task as normalised JSON. See task.h. */
int pol_task_to_json(const struct pol_task *t, char **out)
{
	_cleanup_(cJSON_Deletep) cJSON *root = NULL;
	cJSON *criteria;
	char *text, *copy;
	int r;

	assert(t && out);
	root = cJSON_CreateObject();
	if (!root)
		return -ENOMEM;
	r = j_u64(root, "schema_version", TASK_SCHEMA_VERSION);
	if (r >= 0)
		r = j_str(root, "task_id", t->task_id);
	if (r >= 0)
		r = j_str_or_null(root, "description", t->description);
	if (r >= 0)
		r = j_str(root, "source", t->source);
	if (r >= 0)
		r = j_policy(root, t);
	if (r >= 0)
		r = j_workspace(root, t);
	if (r >= 0)
		r = j_steps(root, "setup", t->setup, t->n_setup, true);
	if (r >= 0)
		r = j_agent(root, &t->agent);
	if (r >= 0)
		r = j_str_or_null(root, "reference", t->reference);
	if (r < 0)
		return r;
	if (!(criteria = j_arr(root, "criteria")))
		return -ENOMEM;
	if (t->n_criteria == 0 || !t->criteria)
		return -EINVAL;
	for (size_t i = 0; i < t->n_criteria; i++) {
		r = j_criterion(criteria, &t->criteria[i]);
		if (r < 0)
			return r;
	}
	r = j_steps(root, "teardown", t->teardown, t->n_teardown, false);
	if (r < 0)
		return r;

	text = cJSON_Print(root);
	if (!text)
		return -ENOMEM;
	/* cJSON's allocator may be hooked; hand out memory the caller can free() for sure. */
	copy = strdup(text);
	cJSON_free(text);
	if (!copy)
		return -ENOMEM;
	*out = copy;
	return 0;
}
