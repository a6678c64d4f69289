/* SPDX-License-Identifier: MIT */
/*
 * Shared by the policy and task parsers: the bounded tree loader, diagnostics and the schema
 * walker with its generic value handlers. See yaml-util.h.
 *
 * The loader makes two passes possible: libyaml's event API builds a small tree of scalars,
 * sequences and mappings under limits the caller passes, and owns every generic rule (exactly
 * one document, no anchors, aliases, tags or directives, bounded nesting depth, list length,
 * string length and event count, no NUL byte inside a scalar); nothing schema-specific
 * happens there. The walker then applies a table of fields per mapping.
 *
 * Pure code: no file I/O, no syscalls, no global state. Every error fills struct pol_diag.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "cleanup.h"
#include "str-util.h"
#include "yaml-util.h"

/* ------------------------------------------------------------------------------------------ */
/* Diagnostics                                                                                */

/* Fills *d (when not NULL) with where and what. See yaml-util.h. */
__attribute__((format(printf, 5, 0))) void pol_diag_vset(struct pol_diag *d, const char *name,
							 unsigned line, unsigned column,
							 const char *fmt, va_list ap)
{
	if (!d)
		return;
	memset(d, 0, sizeof(*d));
	(void)snprintf(d->file, sizeof(d->file), "%s", name ? name : "<input>");
	d->line = line;
	d->column = column;
	(void)vsnprintf(d->message, sizeof(d->message), fmt, ap);
}

/* pol_diag_vset with arguments. See yaml-util.h. */
__attribute__((format(printf, 5, 6))) void pol_diag_set(struct pol_diag *d, const char *name,
							unsigned line, unsigned column,
							const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pol_diag_vset(d, name, line, column, fmt, ap);
	va_end(ap);
}

/* Escapes and caps s into b for a message; returns b->s. See yaml-util.h. */
const char *pol_quote(struct pol_qbuf *b, const char *s)
{
	return str_escape(s, b->s, sizeof(b->s), true);
}

static unsigned mark_line(yaml_mark_t m)
{
	return m.line < UINT_MAX ? (unsigned)m.line + 1 : UINT_MAX;
}

static unsigned mark_column(yaml_mark_t m)
{
	return m.column < UINT_MAX ? (unsigned)m.column + 1 : UINT_MAX;
}

/* ------------------------------------------------------------------------------------------ */
/* Pass 1: bytes to a bounded tree                                                            */

/* Frees n and its subtree; NULL-safe; returns NULL. See yaml-util.h. */
struct pol_node *pol_node_free(struct pol_node *n)
{
	/* Recursion is bounded by the limits' max_depth: the loader never builds a deeper tree. */
	if (!n)
		return NULL;
	for (size_t i = 0; i < n->n_kids; i++)
		pol_node_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
	return NULL;
}

static int node_push(struct pol_node *n, struct pol_node *kid)
{
	if (n->n_kids == n->cap_kids) {
		size_t cap = n->cap_kids ? n->cap_kids * 2 : 4;
		struct pol_node **k = reallocarray(n->kids, cap, sizeof(*k));
		if (!k)
			return -ENOMEM;
		n->kids = k;
		n->cap_kids = cap;
	}
	n->kids[n->n_kids++] = kid;
	return 0;
}

static void event_deletep(yaml_event_t *e)
{
	yaml_event_delete(e);
}

struct loader {
	yaml_parser_t parser;
	bool parser_ready;
	size_t n_events;
	const unsigned char *buf;
	size_t len;
	const char *name;
	const struct pol_yaml_limits *lim;
	struct pol_diag *diag;
};

static void loader_done(struct loader *l)
{
	if (l->parser_ready)
		yaml_parser_delete(&l->parser);
	l->parser_ready = false;
}

__attribute__((format(printf, 3, 4))) static void load_diag(struct loader *l, yaml_mark_t m,
							    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pol_diag_vset(l->diag, l->name, mark_line(m), mark_column(m), fmt, ap);
	va_end(ap);
}

/* Fills the diagnostic at mark m and evaluates to -EINVAL (visibly, for static analysers). */
#define load_fail(l, m, ...) (load_diag((l), (m), __VA_ARGS__), -EINVAL)

static int load_enomem(struct loader *l)
{
	pol_diag_set(l->diag, l->name, 0, 0, "out of memory (expected to parse the %s)", l->lim->what);
	return -ENOMEM;
}

/* The reader reports a byte offset, not a mark: count lines and characters up to it. */
static void offset_to_position(const struct loader *l, size_t offset, unsigned *line,
			       unsigned *column)
{
	unsigned ln = 1, col = 1;

	if (offset > l->len)
		offset = l->len;
	for (size_t i = 0; i < offset; i++) {
		if (l->buf[i] == '\n') {
			ln++;
			col = 1;
		} else if ((l->buf[i] & 0xc0) != 0x80) {
			col++;
		}
	}
	*line = ln;
	*column = col;
}

static int load_yaml_error(struct loader *l)
{
	const yaml_parser_t *p = &l->parser;
	const char *problem = p->problem ? p->problem : "malformed YAML";
	unsigned line, column;

	if (p->error == YAML_MEMORY_ERROR)
		return load_enomem(l);
	if (p->error == YAML_READER_ERROR) {
		offset_to_position(l, p->problem_offset, &line, &column);
		pol_diag_set(l->diag, l->name, line, column,
			     "%s (expected UTF-8 text without control characters)", problem);
		return -EINVAL;
	}
	line = mark_line(p->problem_mark);
	column = mark_column(p->problem_mark);
	if (p->context)
		pol_diag_set(l->diag, l->name, line, column, "%s %s (expected valid YAML)", problem,
			     p->context);
	else
		pol_diag_set(l->diag, l->name, line, column, "%s (expected valid YAML)", problem);
	return -EINVAL;
}

/*
 * Fetches the next event and applies the rules that hold for every event: the event budget,
 * and no aliases, anchors, tags or directives. Anchors and aliases are refused outright, which
 * rules out "billion laughs" expansion and keeps each value at exactly one place in the file.
 */
static int load_next(struct loader *l, yaml_event_t *ev)
{
	struct pol_qbuf q;
	const yaml_char_t *anchor = NULL, *tag = NULL;

	if (!yaml_parser_parse(&l->parser, ev))
		return load_yaml_error(l);
	if (++l->n_events > l->lim->max_events)
		return load_fail(l, ev->start_mark,
				 "document has more than %zu YAML events (expected at most %zu)",
				 l->lim->max_events, l->lim->max_events);

	if (ev->type == YAML_ALIAS_EVENT)
		return load_fail(l, ev->start_mark,
				 "alias '*%s' is not allowed (expected plain values; anchors and aliases are rejected)",
				 pol_quote(&q, (const char *)ev->data.alias.anchor));
	if (ev->type == YAML_DOCUMENT_START_EVENT &&
	    (ev->data.document_start.version_directive ||
	     ev->data.document_start.tag_directives.start != ev->data.document_start.tag_directives.end))
		return load_fail(l, ev->start_mark,
				 "YAML directive is not allowed (expected a document without %% directives)");
	if (ev->type == YAML_SCALAR_EVENT) {
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
	} else if (ev->type == YAML_SEQUENCE_START_EVENT) {
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
	} else if (ev->type == YAML_MAPPING_START_EVENT) {
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
	}
	if (anchor)
		return load_fail(l, ev->start_mark,
				 "anchor '&%s' is not allowed (expected plain values; anchors and aliases are rejected)",
				 pol_quote(&q, (const char *)anchor));
	if (tag)
		return load_fail(l, ev->start_mark,
				 "tag '%s' is not allowed (expected untagged values)",
				 pol_quote(&q, (const char *)tag));
	return 0;
}

/* Builds the node that starts with ev (a scalar or a collection start) at nesting depth depth. */
static int load_node(struct loader *l, const yaml_event_t *ev, unsigned depth,
		     struct pol_node **out)
{
	_cleanup_(pol_node_freep) struct pol_node *n = calloc(1, sizeof(*n));
	bool is_map;
	int r;

	if (!n)
		return load_enomem(l);
	n->line = mark_line(ev->start_mark);
	n->column = mark_column(ev->start_mark);

	if (ev->type == YAML_SCALAR_EVENT) {
		size_t len = ev->data.scalar.length;
		if (len > l->lim->max_string)
			return load_fail(l, ev->start_mark,
					 "string of %zu bytes is too long (expected at most %zu bytes)",
					 len, l->lim->max_string);
		if (memchr(ev->data.scalar.value, '\0', len))
			return load_fail(l, ev->start_mark,
					 "string contains a NUL byte (expected text without NUL)");
		n->kind = POL_NODE_SCALAR;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		n->str = malloc(len + 1);
		if (!n->str)
			return load_enomem(l);
		memcpy(n->str, ev->data.scalar.value, len);
		n->str[len] = '\0';
		*out = TAKE_PTR(n);
		return 0;
	}

	if (ev->type == YAML_MAPPING_START_EVENT)
		is_map = true;
	else if (ev->type == YAML_SEQUENCE_START_EVENT)
		is_map = false;
	else
		return load_fail(l, ev->start_mark, "unexpected YAML event (expected a value)");

	if (depth > l->lim->max_depth)
		return load_fail(l, ev->start_mark,
				 "nesting is deeper than %u levels (expected at most %u)",
				 l->lim->max_depth, l->lim->max_depth);
	n->kind = is_map ? POL_NODE_MAP : POL_NODE_SEQ;

	for (;;) {
		_cleanup_(event_deletep) yaml_event_t kid_ev = { 0 };
		struct pol_node *kid = NULL;

		r = load_next(l, &kid_ev);
		if (r < 0)
			return r;
		if (kid_ev.type == (is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT))
			break;
		if (n->n_kids >= (is_map ? 2u * l->lim->max_list : l->lim->max_list))
			return load_fail(l, kid_ev.start_mark,
					 is_map ? "mapping has more than %zu keys (expected at most %zu)"
						: "sequence has more than %zu entries (expected at most %zu)",
					 l->lim->max_list, l->lim->max_list);
		r = load_node(l, &kid_ev, depth + 1, &kid);
		if (r < 0)
			return r;
		r = node_push(n, kid);
		if (r < 0) {
			pol_node_free(kid);
			return load_enomem(l);
		}
	}
	*out = TAKE_PTR(n);
	return 0;
}

static int load_document(struct loader *l, struct pol_node **out)
{
	_cleanup_(pol_node_freep) struct pol_node *root = NULL;
	_cleanup_(event_deletep) yaml_event_t ev = { 0 };
	int r;

	if (!yaml_parser_initialize(&l->parser))
		return load_enomem(l);
	l->parser_ready = true;
	yaml_parser_set_input_string(&l->parser, l->buf, l->len);
	yaml_parser_set_encoding(&l->parser, YAML_UTF8_ENCODING);

	r = load_next(l, &ev); /* STREAM-START */
	if (r < 0)
		return r;
	yaml_event_delete(&ev);

	r = load_next(l, &ev);
	if (r < 0)
		return r;
	if (ev.type == YAML_STREAM_END_EVENT)
		return load_fail(l, ev.start_mark,
				 "document is empty (expected %s)", l->lim->root_expected);
	if (ev.type != YAML_DOCUMENT_START_EVENT)
		return load_fail(l, ev.start_mark, "unexpected YAML event (expected a document)");
	yaml_event_delete(&ev);

	r = load_next(l, &ev);
	if (r < 0)
		return r;
	r = load_node(l, &ev, 1, &root);
	if (r < 0)
		return r;
	yaml_event_delete(&ev);

	r = load_next(l, &ev);
	if (r < 0)
		return r;
	if (ev.type != YAML_DOCUMENT_END_EVENT)
		return load_fail(l, ev.start_mark, "unexpected YAML event (expected the document end)");
	yaml_event_delete(&ev);

	r = load_next(l, &ev);
	if (r < 0)
		return r;
	if (ev.type == YAML_DOCUMENT_START_EVENT)
		return load_fail(l, ev.start_mark,
				 "a second document starts here (expected exactly one document)");
	if (ev.type != YAML_STREAM_END_EVENT)
		return load_fail(l, ev.start_mark, "unexpected YAML event (expected the end of input)");

	*out = TAKE_PTR(root);
	return 0;
}

/* Loads buf under lim into a tree. See yaml-util.h. */
int pol_yaml_load(const char *name, const void *buf, size_t len,
		  const struct pol_yaml_limits *lim, struct pol_node **out, struct pol_diag *diag)
{
	struct loader l = {
		.buf = buf ? buf : (const void *)"",
		.len = buf ? len : 0,
		.name = name,
		.lim = lim,
		.diag = diag,
	};
	struct pol_node *root = NULL;
	int r;

	assert(lim && out);
	r = load_document(&l, &root);
	loader_done(&l);
	if (r < 0)
		return r;
	*out = root;
	return 0;
}

/* State of one pol_yaml_check_bounds walk. */
struct bounds {
	const char *name;
	const struct pol_yaml_limits *lim;
	size_t n_events;
	struct pol_diag *diag;
};

__attribute__((format(printf, 3, 4))) static int bounds_fail(const struct bounds *b,
							     const struct pol_node *n,
							     const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pol_diag_vset(b->diag, b->name, n->line, n->column, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * The loader's checks, in its order, on a tree that exists already. Each node is one event (a
 * collection two: its start, checked at the node, and its end). Recursion is bounded by the
 * depth of the tree, which the loader that built it bounded.
 */
static int bounds_node(struct bounds *b, const struct pol_node *n, unsigned depth)
{
	const struct pol_yaml_limits *lim = b->lim;
	bool is_map = n->kind == POL_NODE_MAP;
	int r;

	if (++b->n_events > lim->max_events)
		return bounds_fail(b, n, "document has more than %zu YAML events (expected at most %zu)",
				   lim->max_events, lim->max_events);
	if (n->kind == POL_NODE_SCALAR) {
		size_t len = strlen(n->str);
		if (len > lim->max_string)
			return bounds_fail(b, n,
					   "string of %zu bytes is too long (expected at most %zu bytes)",
					   len, lim->max_string);
		return 0;
	}
	if (depth > lim->max_depth)
		return bounds_fail(b, n, "nesting is deeper than %u levels (expected at most %u)",
				   lim->max_depth, lim->max_depth);
	for (size_t i = 0; i < n->n_kids; i++) {
		if (i >= (is_map ? 2u * lim->max_list : lim->max_list))
			return bounds_fail(b, n->kids[i],
					   is_map ? "mapping has more than %zu keys (expected at most %zu)"
						  : "sequence has more than %zu entries (expected at most %zu)",
					   lim->max_list, lim->max_list);
		r = bounds_node(b, n->kids[i], depth + 1);
		if (r < 0)
			return r;
	}
	if (++b->n_events > lim->max_events)
		return bounds_fail(b, n, "document has more than %zu YAML events (expected at most %zu)",
				   lim->max_events, lim->max_events);
	return 0;
}

/* Checks a subtree against lim as if it were a document. See yaml-util.h. */
int pol_yaml_check_bounds(const char *name, const struct pol_node *root,
			  const struct pol_yaml_limits *lim, struct pol_diag *diag)
{
	/* STREAM-START and DOCUMENT-START come first in a file of its own. */
	struct bounds b = { .name = name, .lim = lim, .n_events = 2, .diag = diag };

	return bounds_node(&b, root, 1);
}

/* Fills the walker's diagnostic at node n. See yaml-util.h. */
__attribute__((format(printf, 3, 4))) void pol_walk_diag(const struct pol_walker *w,
							 const struct pol_node *n, const char *fmt,
							 ...)
{
	va_list ap;
	va_start(ap, fmt);
	pol_diag_vset(w->diag, w->name, n->line, n->column, fmt, ap);
	va_end(ap);
}

/* Fills "out of memory" and returns -ENOMEM. See yaml-util.h. */
int pol_walk_enomem(const struct pol_walker *w)
{
	pol_diag_set(w->diag, w->name, 0, 0, "out of memory (expected to parse the %s)",
		     w->what ? w->what : "policy");
	return -ENOMEM;
}

/* YAML's null spellings; a plain one is "no value", never a string. */
bool pol_node_is_null(const struct pol_node *n)
{
	return n->kind == POL_NODE_SCALAR && n->plain &&
	       (!n->str[0] || streq(n->str, "~") || streq(n->str, "null") ||
		streq(n->str, "Null") || streq(n->str, "NULL"));
}

/* The value of key in the mapping m (the first one), or NULL; NULL for a node that is no mapping. */
const struct pol_node *pol_map_get(const struct pol_node *m, const char *key)
{
	if (!m || m->kind != POL_NODE_MAP)
		return NULL;
	for (size_t i = 0; i + 1 < m->n_kids; i += 2)
		if (m->kids[i]->kind == POL_NODE_SCALAR && streq(m->kids[i]->str, key))
			return m->kids[i + 1];
	return NULL;
}

/* True iff one of the n strings of v is s. */
bool pol_strv_contains(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (streq(v[i], s))
			return true;
	return false;
}

/* What n is, for "X is a mapping (expected ...)". See yaml-util.h. */
const char *pol_describe(const struct pol_node *n)
{
	if (pol_node_is_null(n))
		return "empty";
	if (n->kind == POL_NODE_MAP)
		return "a mapping";
	if (n->kind == POL_NODE_SEQ)
		return "a sequence";
	return "a scalar";
}

/* A non-empty scalar, or an error at n. See yaml-util.h. */
int pol_want_scalar(const struct pol_walker *w, const char *label, const struct pol_node *n,
		    const char *expected)
{
	if (n->kind != POL_NODE_SCALAR || pol_node_is_null(n))
		return pol_fail(w, n, "%s is %s (expected %s)", label, pol_describe(n), expected);
	return 0;
}

/* An unquoted non-empty scalar, or an error at n. See yaml-util.h. */
int pol_want_plain(const struct pol_walker *w, const char *label, const struct pol_node *n,
		   const char *expected)
{
	int r = pol_want_scalar(w, label, n, expected);
	if (r < 0)
		return r;
	if (!n->plain)
		return pol_fail(w, n, "%s is a quoted string (expected %s)", label, expected);
	return 0;
}

/* Stores a copy of s in *out. See yaml-util.h. */
int pol_dup_string(const struct pol_walker *w, const char *s, char **out)
{
	char *d = strdup(s);
	if (!d)
		return pol_walk_enomem(w);
	*out = d;
	return 0;
}

/* Frees the first n strings of v and v. NULL-safe. */
void pol_strv_free(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* "where.key" into buf, or "key" at the top level. */
void pol_make_label(char *buf, size_t size, const char *where, const char *key)
{
	if (where[0])
		(void)snprintf(buf, size, "%s.%s", where, key);
	else
		(void)snprintf(buf, size, "%s", key);
}

/* ---- numbers ---- */

/*
 * Reads decimal digits at s[*i]: at least one, no leading zero unless the number is 0 (so that
 * nobody can mistake 0755 for octal). Returns 0, -EINVAL (not a number) or -ERANGE.
 */
static int scan_decimal(const char *s, size_t *i, uint64_t *out)
{
	size_t start = *i;
	uint64_t v = 0;

	while (s[*i] >= '0' && s[*i] <= '9') {
		if (__builtin_mul_overflow(v, 10u, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s[*i] - '0'), &v))
			return -ERANGE;
		(*i)++;
	}
	if (*i == start)
		return -EINVAL;
	if (s[start] == '0' && *i - start > 1)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A decimal integer. See yaml-util.h. */
int pol_parse_count(const char *s, uint64_t *out)
{
	size_t i = 0;
	uint64_t v;
	int r = scan_decimal(s, &i, &v);
	if (r < 0)
		return r;
	if (s[i])
		return -EINVAL;
	*out = v;
	return 0;
}

/* Bytes with an optional K/M/G/T suffix. See yaml-util.h. */
int pol_parse_size(const char *s, uint64_t *out)
{
	size_t i = 0;
	uint64_t v, mult = 1;
	int r = scan_decimal(s, &i, &v);
	if (r < 0)
		return r;
	if (s[i]) {
		if (s[i + 1])
			return -EINVAL;
		switch (s[i]) {
		case 'K': mult = UINT64_C(1) << 10; break;
		case 'M': mult = UINT64_C(1) << 20; break;
		case 'G': mult = UINT64_C(1) << 30; break;
		case 'T': mult = UINT64_C(1) << 40; break;
		default: return -EINVAL;
		}
	}
	if (__builtin_mul_overflow(v, mult, &v))
		return -ERANGE;
	*out = v;
	return 0;
}

/* A time in ms: seconds or a number with an ms/s/m/h suffix. See yaml-util.h. */
int pol_parse_time_ms(const char *s, uint64_t *out)
{
	size_t i = 0;
	uint64_t v, mult;
	int r = scan_decimal(s, &i, &v);
	if (r < 0)
		return r;
	if (!s[i] || streq(s + i, "s"))
		mult = 1000;
	else if (streq(s + i, "ms"))
		mult = 1;
	else if (streq(s + i, "m"))
		mult = 60u * 1000u;
	else if (streq(s + i, "h"))
		mult = 3600u * 1000u;
	else
		return -EINVAL;
	if (__builtin_mul_overflow(v, mult, &v))
		return -ERANGE;
	*out = v;
	return 0;
}

/* A number with up to three decimals, in thousandths. See yaml-util.h. */
int pol_parse_milli(const char *s, uint64_t *out)
{
	size_t i = 0;
	uint64_t whole, frac = 0, v;
	unsigned decimals = 0;
	int r = scan_decimal(s, &i, &whole);
	if (r < 0)
		return r;
	if (s[i] == '.') {
		i++;
		while (s[i] >= '0' && s[i] <= '9') {
			if (++decimals > 3)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(s[i] - '0');
			i++;
		}
		if (!decimals)
			return -EINVAL;
		for (unsigned d = decimals; d < 3; d++)
			frac *= 10;
	}
	if (s[i])
		return -EINVAL;
	if (__builtin_mul_overflow(whole, 1000u, &v) || __builtin_add_overflow(v, frac, &v))
		return -ERANGE;
	*out = v;
	return 0;
}

static const char *unit_expected(enum pol_unit u)
{
	switch (u) {
	case POL_UNIT_U32:
	case POL_UNIT_COUNT:
		return "a decimal integer without sign or leading zeros";
	case POL_UNIT_SIZE:
		return "bytes or a number with a K, M, G or T suffix, like 512M";
	case POL_UNIT_TIME:
		return "seconds or a number with an ms, s, m or h suffix, like 30s";
	case POL_UNIT_CPU:
		return "a number of CPUs with at most 3 decimals, like 0.5";
	}
	return "a number";
}

static const char *unit_name(enum pol_unit u)
{
	switch (u) {
	case POL_UNIT_SIZE:
		return " bytes";
	case POL_UNIT_TIME:
		return " ms";
	case POL_UNIT_CPU:
		return " millicpus";
	case POL_UNIT_U32:
	case POL_UNIT_COUNT:
		break;
	}
	return "";
}

/* A number of f->unit in f->min..f->max into target + f->off. See yaml-util.h. */
int pol_fld_number(const struct pol_walker *w, void *target, const struct pol_field *f,
		   const char *label, const struct pol_node *v)
{
	const char *expected = unit_expected(f->unit);
	struct pol_qbuf q;
	uint64_t val = 0;
	int r = pol_want_plain(w, label, v, expected);
	if (r < 0)
		return r;

	switch (f->unit) {
	case POL_UNIT_U32:
	case POL_UNIT_COUNT:
		r = pol_parse_count(v->str, &val);
		break;
	case POL_UNIT_SIZE:
		r = pol_parse_size(v->str, &val);
		break;
	case POL_UNIT_TIME:
		r = pol_parse_time_ms(v->str, &val);
		break;
	case POL_UNIT_CPU:
		r = pol_parse_milli(v->str, &val);
		break;
	}
	if (r == -ERANGE)
		return pol_fail(w, v, "%s '%s' overflows (expected at most %" PRIu64 "%s)", label,
				pol_quote(&q, v->str), f->max, unit_name(f->unit));
	if (r < 0)
		return pol_fail(w, v, "%s '%s' is not a valid number (expected %s)", label,
				pol_quote(&q, v->str), expected);
	if (val < f->min || val > f->max)
		return pol_fail(w, v, "%s '%s' is out of range (expected %" PRIu64 "..%" PRIu64 "%s)",
				label, pol_quote(&q, v->str), f->min, f->max, unit_name(f->unit));

	if (f->unit == POL_UNIT_U32)
		*POL_FIELD_PTR(target, f->off, uint32_t) = (uint32_t)val;
	else
		*POL_FIELD_PTR(target, f->off, uint64_t) = val;
	return 0;
}

/* true or false into target + f->off (f->locked refuses false). See yaml-util.h. */
int pol_fld_bool(const struct pol_walker *w, void *target, const struct pol_field *f,
		 const char *label, const struct pol_node *v)
{
	struct pol_qbuf q;
	int r = pol_want_plain(w, label, v, "true or false");
	if (r < 0)
		return r;
	if (streq(v->str, "true"))
		*POL_FIELD_PTR(target, f->off, bool) = true;
	else if (streq(v->str, "false") && f->locked)
		return pol_fail(w, v,
				"%s cannot be turned off (expected true; warden's isolation is built on it)",
				label);
	else if (streq(v->str, "false"))
		*POL_FIELD_PTR(target, f->off, bool) = false;
	else
		return pol_fail(w, v, "%s '%s' is not a boolean (expected true or false)", label,
				pol_quote(&q, v->str));
	return 0;
}

/* Replaces the string at target + off with a copy of s. See yaml-util.h. */
int pol_replace_string(const struct pol_walker *w, void *target, size_t off, const char *s)
{
	char *d = NULL;
	int r = pol_dup_string(w, s, &d);
	if (r < 0)
		return r;
	char **slot = POL_FIELD_PTR(target, off, char *);
	free(*slot);
	*slot = d;
	return 0;
}

/* ---- paths ---- */

/*
 * Checks the components of s, which starts right after a leading '/' (if any). allow_dot
 * accepts '.' components (a relative path that will be resolved drops them).
 */
enum pol_path_flaw pol_path_flaw_ex(const char *s, bool allow_dot)
{
	const char *c = s;

	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return POL_PATH_CONTROL;
	for (;;) {
		const char *slash = strchr(c, '/');
		size_t len = slash ? (size_t)(slash - c) : strlen(c);
		if (len == 0)
			return POL_PATH_EMPTY_COMPONENT;
		if (len == 1 && c[0] == '.' && !allow_dot)
			return POL_PATH_DOT;
		if (len == 2 && c[0] == '.' && c[1] == '.')
			return POL_PATH_DOTDOT;
		if (len > POL_COMPONENT_MAX)
			return POL_PATH_LONG_COMPONENT;
		if (!slash)
			return POL_PATH_OK;
		c = slash + 1;
	}
}

/* pol_path_flaw_ex without '.' components. */
enum pol_path_flaw pol_path_flaw(const char *s)
{
	return pol_path_flaw_ex(s, false);
}

/* The message for flaw, at v; 0 for POL_PATH_OK. See yaml-util.h. */
int pol_path_flaw_fail(const struct pol_walker *w, const char *label, const struct pol_node *v,
		       enum pol_path_flaw flaw)
{
	struct pol_qbuf q;
	const char *s = pol_quote(&q, v->str);

	switch (flaw) {
	case POL_PATH_OK:
		return 0;
	case POL_PATH_EMPTY_COMPONENT:
		return pol_fail(w, v, "%s '%s' has an empty component or a trailing / (expected a normalised path)",
				label, s);
	case POL_PATH_DOT:
		return pol_fail(w, v, "%s '%s' has a '.' component (expected a normalised path)", label, s);
	case POL_PATH_DOTDOT:
		return pol_fail(w, v, "%s '%s' has a '..' component (expected a normalised path without ..)",
				label, s);
	case POL_PATH_LONG_COMPONENT:
		return pol_fail(w, v, "%s '%s' has a component longer than %u bytes (expected at most %u)",
				label, s, POL_COMPONENT_MAX, POL_COMPONENT_MAX);
	case POL_PATH_CONTROL:
		return pol_fail(w, v, "%s '%s' contains a control character (expected printable characters)",
				label, s);
	}
	return pol_fail(w, v, "%s '%s' is not a valid path (expected a normalised path)", label, s);
}

/* An absolute, normalised path under PATH_MAX, or an error at v. See yaml-util.h. */
int pol_check_abs_path(const struct pol_walker *w, const char *label, const struct pol_node *v)
{
	static const char expected[] = "an absolute path";
	struct pol_qbuf q;
	size_t len;
	int r = pol_want_scalar(w, label, v, expected);
	if (r < 0)
		return r;
	len = strlen(v->str);
	if (v->str[0] != '/')
		return pol_fail(w, v, "%s '%s' is not absolute (expected a path starting with /)", label,
				pol_quote(&q, v->str));
	/* PATH_MAX counts the terminating NUL, so the longest usable path is one byte shorter. */
	if (len >= PATH_MAX)
		return pol_fail(w, v, "%s is %zu bytes long (expected less than %d)", label, len, PATH_MAX);
	if (len == 1)
		return 0;
	return pol_path_flaw_fail(w, label, v, pol_path_flaw(v->str + 1));
}

/* A relative, normalised path under PATH_MAX, or an error at v. See yaml-util.h. */
int pol_check_rel_path(const struct pol_walker *w, const char *label, const struct pol_node *v)
{
	static const char expected[] = "a relative path";
	struct pol_qbuf q;
	size_t len;
	int r = pol_want_scalar(w, label, v, expected);
	if (r < 0)
		return r;
	len = strlen(v->str);
	if (v->str[0] == '/')
		return pol_fail(w, v, "%s '%s' is absolute (expected a relative path without leading /)",
				label, pol_quote(&q, v->str));
	if (len >= PATH_MAX)
		return pol_fail(w, v, "%s is %zu bytes long (expected less than %d)", label, len, PATH_MAX);
	return pol_path_flaw_fail(w, label, v, pol_path_flaw(v->str));
}

/* True iff path is strictly below dir. See yaml-util.h. */
bool pol_path_is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/*
 * The directory of the file path name when name is an absolute, normalised path (what the
 * supervisor hands over after realpath), else NULL: relative paths in the file then cannot be
 * resolved and are errors. Returns 0 or -ENOMEM.
 */
int pol_dir_of(const char *name, char **out)
{
	const char *slash;
	char *d;

	*out = NULL;
	if (!name || name[0] != '/' || strlen(name) >= PATH_MAX || pol_path_flaw(name + 1) != POL_PATH_OK)
		return 0;
	slash = strrchr(name, '/');
	d = slash == name ? strdup("/") : strndup(name, (size_t)(slash - name));
	if (!d)
		return -ENOMEM;
	*out = d;
	return 0;
}

/*
 * Resolves the relative path in v against the file's directory: '.' components are dropped;
 * '..', empty components and control characters are refused, so the result never leaves the
 * directory lexically. Pure string work: symlinks are the reader's business. On success stores
 * a new absolute, normalised path in *out.
 */
int pol_resolve_relative(const struct pol_walker *w, const char *label, const struct pol_node *v,
			 char **out)
{
	struct pol_qbuf q, qn;
	const char *rel = v->str;
	enum pol_path_flaw flaw;
	size_t dlen, o;
	char *res;

	if (!w->dir)
		return pol_fail(w, v,
				"%s '%s' is relative, and '%s' is not a normalised absolute file path to resolve it against (expected a path starting with /)",
				label, pol_quote(&q, rel), pol_quote(&qn, w->name));
	flaw = pol_path_flaw_ex(rel, true);
	if (flaw == POL_PATH_DOTDOT)
		return pol_fail(w, v,
			    "%s '%s' has a '..' component (expected a path below the %s file's directory, or an absolute one)",
			    label, pol_quote(&q, rel), w->what ? w->what : "policy");
	if (flaw != POL_PATH_OK)
		return pol_path_flaw_fail(w, label, v, flaw);

	dlen = strlen(w->dir);
	res = malloc(dlen + 1 + strlen(rel) + 1);
	if (!res)
		return pol_walk_enomem(w);
	o = dlen == 1 ? 0 : dlen; /* the root directory contributes only the '/' below */
	memcpy(res, w->dir, o);
	for (const char *c = rel;;) {
		const char *slash = strchr(c, '/');
		size_t len = slash ? (size_t)(slash - c) : strlen(c);
		if (!(len == 1 && c[0] == '.')) {
			res[o++] = '/';
			memcpy(res + o, c, len);
			o += len;
		}
		if (!slash)
			break;
		c = slash + 1;
	}
	if (o == 0)
		res[o++] = '/';
	res[o] = '\0';
	if (o >= PATH_MAX) {
		free(res);
		return pol_fail(w, v, "%s '%s' resolves to a path of %zu bytes (expected less than %d)",
				label, pol_quote(&q, rel), o, PATH_MAX);
	}
	*out = res;
	return 0;
}

/* True iff the len bytes of s are [A-Za-z_][A-Za-z0-9_]*. */
bool pol_is_env_name(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
		if (!alpha && (i == 0 || !(c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

/* A variable name, or an error at item. See yaml-util.h. */
int pol_check_env_name(const struct pol_walker *w, const char *label, const struct pol_node *item)
{
	static const char expected[] = "a variable name matching [A-Za-z_][A-Za-z0-9_]*";
	struct pol_qbuf q;
	int r = pol_want_scalar(w, label, item, expected);
	if (r < 0)
		return r;
	if (!pol_is_env_name(item->str, strlen(item->str)))
		return pol_fail(w, item, "%s '%s' is not a variable name (expected %s)", label,
				pol_quote(&q, item->str), expected);
	return 0;
}

/* ---- lists ---- */

static size_t entry_key_len(const struct pol_field *f, const char *s)
{
	if (f->dup_by_name) {
		const char *eq = strchr(s, '=');
		if (eq)
			return (size_t)(eq - s);
	}
	return strlen(s);
}

/* A sequence, or an error at v. See yaml-util.h. */
int pol_want_seq(const struct pol_walker *w, const char *label, const struct pol_node *v)
{
	if (v->kind != POL_NODE_SEQ)
		return pol_fail(w, v, "%s is %s (expected a sequence; write [] for none)", label,
				pol_describe(v));
	return 0;
}

/*
 * Builds a NULL-terminated array from the sequence v (every entry validated by f->check and
 * listed once) and stores it in place of the list at f->off, freeing the old one.
 */
int pol_fld_str_list(const struct pol_walker *w, void *target, const struct pol_field *f,
		     const char *label, const struct pol_node *v)
{
	char **items = NULL;
	size_t n = 0;
	int r = pol_want_seq(w, label, v);
	if (r < 0)
		return r;

	items = calloc(v->n_kids + 1, sizeof(*items));
	if (!items)
		return pol_walk_enomem(w);
	for (; n < v->n_kids; n++) {
		const struct pol_node *item = v->kids[n];
		char item_label[POL_LABEL_MAX];
		struct pol_qbuf q;

		(void)snprintf(item_label, sizeof(item_label), "%s[%zu]", label, n);
		r = pol_want_scalar(w, item_label, item, "a string");
		if (r >= 0)
			r = f->check(w, item_label, item);
		for (size_t j = 0; r >= 0 && j < n; j++) {
			size_t klen = entry_key_len(f, item->str);
			if (entry_key_len(f, items[j]) == klen && !memcmp(items[j], item->str, klen))
				r = pol_fail(w, item,
					     "%s '%s' repeats an earlier entry (expected each entry once; first at line %u)",
					     item_label, pol_quote(&q, item->str), v->kids[j]->line);
		}
		if (r >= 0)
			r = pol_dup_string(w, item->str, &items[n]);
		if (r < 0) {
			pol_strv_free(items, n);
			return r;
		}
	}

	char ***slot = POL_FIELD_PTR(target, f->off, char **);
	size_t *n_slot = POL_FIELD_PTR(target, f->n_off, size_t);
	pol_strv_free(*slot, *n_slot);
	*slot = items;
	*n_slot = n;
	return 0;
}

/* Lists the keys of a table for an "unknown key" message. */
static void key_list(char *buf, size_t size, const struct pol_field *fields, size_t n_fields)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n_fields && o < size; i++) {
		int k = snprintf(buf + o, size - o, "%s%s", i ? ", " : "", fields[i].key);
		if (k < 0)
			break;
		o += (size_t)k;
	}
}

/*
 * Applies the mapping n to target with the handlers in fields. where names the mapping in
 * messages ("" for the top level). Every key must be a scalar naming a field, at most once.
 */
int pol_walk_map(const struct pol_walker *w, void *target, const char *where,
		 const struct pol_node *n, const struct pol_field *fields, size_t n_fields)
{
	const char *display = where[0] ? where : "the top level";
	const struct pol_node *first[32] = { 0 };

	assert(n_fields <= ELEMENTSOF(first));
	if (n->kind != POL_NODE_MAP)
		return pol_fail(w, n, "%s is %s (expected a mapping)", display, pol_describe(n));
	assert(n->n_kids % 2 == 0);

	for (size_t i = 0; i < n->n_kids; i += 2) {
		const struct pol_node *k = n->kids[i], *v = n->kids[i + 1];
		char label[POL_LABEL_MAX];
		struct pol_qbuf q;
		size_t j;
		int r;

		if (k->kind != POL_NODE_SCALAR)
			return pol_fail(w, k, "key in %s is %s (expected a scalar key)", display,
					pol_describe(k));
		for (j = 0; j < n_fields; j++)
			if (streq(k->str, fields[j].key))
				break;
		if (j == n_fields) {
			char keys[256];
			key_list(keys, sizeof(keys), fields, n_fields);
			return pol_fail(w, k, "unknown key '%s' in %s (expected one of: %s)",
					pol_quote(&q, k->str), display, keys);
		}
		if (first[j])
			return pol_fail(w, k,
					"duplicate key '%s' in %s (expected each key once; first at line %u)",
					fields[j].key, display, first[j]->line);
		first[j] = k;

		pol_make_label(label, sizeof(label), where, fields[j].key);
		r = fields[j].fn(w, target, &fields[j], label, v);
		if (r < 0)
			return r;
	}
	return 0;
}


int pol_want_word(const struct pol_walker *w, const char *label, const struct pol_node *v,
		  const char *const *names, size_t n, const char *noun, const char *expected,
		  size_t *out)
{
	int r = pol_want_scalar(w, label, v, expected);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v->str, names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	struct pol_qbuf q;
	return pol_fail(w, v, "%s '%s' is not a %s (expected %s)", label, pol_quote(&q, v->str), noun,
			expected);
}
