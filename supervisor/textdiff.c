/* SPDX-License-Identifier: MIT */
/*
 * Unified diffs (textdiff.h): lines are split and hashed, the common start and end are set
 * aside, and the shortest edit script of the rest comes from the greedy forward search over
 * diagonals (Myers, 1986), keeping each round's furthest reach so that the path can be
 * walked back. The search is bounded by SUP_TEXTDIFF_MAX_EDITS rounds, which bounds both its
 * time and its memory ((MAX_EDITS + 1)^2 reaches); past that the middle is replaced whole.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "str-util.h"
#include "textdiff.h"
#include "utf8.h"

struct line {
	const char *p;
	size_t len;    /* with its '\n', when it has one */
	uint64_t hash;
};

bool sup_textdiff_is_text(const char *p, size_t len)
{
	return len == 0 || !memchr(p, '\0', len);
}

/* FNV-1a: only to skip most unequal comparisons; equality is always checked byte for byte. */
static uint64_t hash_bytes(const char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static bool line_eq(const struct line *x, const struct line *y)
{
	return x->hash == y->hash && x->len == y->len && !memcmp(x->p, y->p, x->len);
}

/* Splits s into lines (a new array in *out, NULL when s is empty). 0, -E2BIG or -ENOMEM. */
static int split_lines(const char *s, size_t len, struct line **out, size_t *out_n)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	if (len && s[len - 1] != '\n')
		n++;
	if (n > SUP_TEXTDIFF_MAX_LINES)
		return -E2BIG;
	struct line *v = NULL;
	if (n) {
		v = calloc(n, sizeof(*v));
		if (!v)
			return -ENOMEM;
	}
	size_t k = 0, start = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\n' && i + 1 < len)
			continue;
		v[k].p = s + start;
		v[k].len = i + 1 - start;
		v[k].hash = hash_bytes(v[k].p, v[k].len);
		k++;
		start = i + 1;
	}
	*out = v;
	*out_n = n;
	return 0;
}

/*
 * Marks the lines of a (n) to delete and of b (m) to insert for a shortest edit script, in
 * del and ins (zeroed by the caller). -E2BIG when it needs more than SUP_TEXTDIFF_MAX_EDITS
 * edits (nothing marked), -ENOMEM.
 */
static int shortest_edit(const struct line *a, size_t n, const struct line *b, size_t m,
			 bool *del, bool *ins)
{
	size_t total = n + m;
	if (n == 0 || m == 0) {
		/* all added or all removed: nothing to search */
		for (size_t i = 0; i < n; i++)
			del[i] = true;
		for (size_t j = 0; j < m; j++)
			ins[j] = true;
		return 0;
	}
	size_t dmax = total < SUP_TEXTDIFF_MAX_EDITS ? total : SUP_TEXTDIFF_MAX_EDITS;
	/*
	 * Round d keeps the furthest x on diagonals -d..d (2d + 1 of them), from offset d * d;
	 * x <= n <= SUP_TEXTDIFF_MAX_LINES fits an int32_t.
	 */
	int32_t *reach = malloc((dmax + 1) * (dmax + 1) * sizeof(*reach));
	if (!reach)
		return -ENOMEM;
	long ln = (long)n, lm = (long)m;
	for (long d = 0; d <= (long)dmax; d++) {
		int32_t *row = reach + d * d;
		const int32_t *prev = d ? reach + (d - 1) * (d - 1) : NULL;
		for (long k = -d; k <= d; k += 2) {
			long x;
			if (d == 0)
				x = 0;
			else if (k == -d || (k != d && prev[k - 1 + d - 1] < prev[k + 1 + d - 1]))
				x = prev[k + 1 + d - 1];     /* down: insert b[y - 1] */
			else
				x = prev[k - 1 + d - 1] + 1; /* right: delete a[x - 1] */
			long y = x - k;
			while (x < ln && y < lm && line_eq(&a[x], &b[y])) {
				x++;
				y++;
			}
			row[k + d] = (int32_t)x;
			/* Moves only grow x and y: (n, m) is reached only from inside the grid. */
			if (x != ln || y != lm)
				continue;
			/* Walk back: each round undoes one move and the diagonal run after it. */
			for (long dd = d; dd > 0; dd--) {
				const int32_t *p = reach + (dd - 1) * (dd - 1);
				long kk = x - y;
				bool down = kk == -dd ||
					    (kk != dd && p[kk - 1 + dd - 1] < p[kk + 1 + dd - 1]);
				long pk = down ? kk + 1 : kk - 1;
				long px = p[pk + dd - 1], py = px - pk;
				if (down)
					ins[py] = true;
				else
					del[px] = true;
				x = px;
				y = py;
			}
			free(reach);
			return 0;
		}
	}
	free(reach);
	return -E2BIG;
}

/* An output buffer that fails once it would pass SUP_TEXTDIFF_MAX_OUT. */
struct out {
	char *p;
	size_t len, cap;
	int err;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->err)
		return;
	if (n > SUP_TEXTDIFF_MAX_OUT - o->len) {
		o->err = -E2BIG;
		return;
	}
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap < o->len + n)
			cap *= 2;
		if (cap > SUP_TEXTDIFF_MAX_OUT)
			cap = SUP_TEXTDIFF_MAX_OUT;
		char *grown = realloc(o->p, cap);
		if (!grown) {
			o->err = -ENOMEM;
			return;
		}
		o->p = grown;
		o->cap = cap;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void put_str(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* One side's range in a hunk header: "start,count", "start" for one line, "before,0". */
static void put_range(struct out *o, char sign, size_t first, size_t count)
{
	char buf[64];
	if (count == 1)
		(void)snprintf(buf, sizeof(buf), "%c%zu", sign, first + 1);
	else if (count == 0)
		(void)snprintf(buf, sizeof(buf), "%c%zu,0", sign, first);
	else
		(void)snprintf(buf, sizeof(buf), "%c%zu,%zu", sign, first + 1, count);
	put_str(o, buf);
}

static void put_line(struct out *o, char sign, const struct line *l)
{
	bool nl = l->len && l->p[l->len - 1] == '\n';
	put(o, &sign, 1);
	put(o, l->p, l->len - nl);
	put_str(o, nl ? "\n" : "\n\\ No newline at end of file\n");
}

enum op_type { OP_EQ, OP_DEL, OP_INS };

struct op {
	enum op_type type;
	size_t ai, bi; /* the old and new line it is at (for OP_INS, ai is the next old line) */
};

/* The hunks of the edit script ops (n_ops) into o. */
static void put_hunks(struct out *o, const struct op *ops, size_t n_ops, const struct line *a,
		      const struct line *b, size_t context)
{
	size_t at = 0;
	while (at < n_ops) {
		size_t first = at;
		while (first < n_ops && ops[first].type == OP_EQ)
			first++;
		if (first == n_ops)
			break;
		/* The last change of this hunk: later ones join it while the gap is at most 2C. */
		size_t last = first;
		for (size_t j = first + 1; j < n_ops; j++) {
			if (ops[j].type != OP_EQ)
				last = j;
			else if (j - last > 2 * context)
				break;
		}
		size_t start = first - (first - at < context ? first - at : context);
		size_t end = last + 1 + (n_ops - last - 1 < context ? n_ops - last - 1 : context);
		size_t na = 0, nb = 0;
		for (size_t j = start; j < end; j++) {
			na += ops[j].type != OP_INS;
			nb += ops[j].type != OP_DEL;
		}
		put_str(o, "@@ ");
		put_range(o, '-', ops[start].ai, na);
		put_str(o, " ");
		put_range(o, '+', ops[start].bi, nb);
		put_str(o, " @@\n");
		for (size_t j = start; j < end; j++) {
			if (ops[j].type == OP_EQ)
				put_line(o, ' ', &a[ops[j].ai]);
			else if (ops[j].type == OP_DEL)
				put_line(o, '-', &a[ops[j].ai]);
			else
				put_line(o, '+', &b[ops[j].bi]);
		}
		at = end;
	}
}

int sup_textdiff(const char *a, size_t a_len, const char *b, size_t b_len, unsigned context,
		 char **out, size_t *out_len)
{
	if (a_len > SUP_TEXTDIFF_MAX_BYTES || b_len > SUP_TEXTDIFF_MAX_BYTES)
		return -E2BIG;
	struct line *la = NULL, *lb = NULL;
	size_t n = 0, m = 0;
	int r = split_lines(a, a_len, &la, &n);
	if (r >= 0)
		r = split_lines(b, b_len, &lb, &m);
	bool *del = NULL, *ins = NULL;
	struct op *ops = NULL;
	struct out o = { 0 };
	if (r >= 0) {
		del = calloc(n + 1, sizeof(*del));
		ins = calloc(m + 1, sizeof(*ins));
		ops = calloc(n + m + 1, sizeof(*ops));
		if (!del || !ins || !ops)
			r = -ENOMEM;
	}
	if (r >= 0) {
		/* The common start and end need no search. */
		size_t pre = 0, suf = 0;
		while (pre < n && pre < m && line_eq(&la[pre], &lb[pre]))
			pre++;
		while (suf < n - pre && suf < m - pre && line_eq(&la[n - 1 - suf], &lb[m - 1 - suf]))
			suf++;
		r = shortest_edit(la + pre, n - pre - suf, lb + pre, m - pre - suf, del + pre,
				  ins + pre);
		if (r == -E2BIG) {
			for (size_t i = pre; i < n - suf; i++)
				del[i] = true;
			for (size_t j = pre; j < m - suf; j++)
				ins[j] = true;
			r = 0;
		}
	}
	if (r >= 0) {
		size_t n_ops = 0, i = 0, j = 0;
		while (r >= 0 && (i < n || j < m)) {
			struct op *p = &ops[n_ops++];
			p->ai = i;
			p->bi = j;
			if (i < n && del[i]) {
				p->type = OP_DEL;
				i++;
			} else if (j < m && ins[j]) {
				p->type = OP_INS;
				j++;
			} else if (i < n && j < m) {
				p->type = OP_EQ; /* both have a line here: the script pairs them */
				i++;
				j++;
			} else {
				r = -EINVAL; /* a script that does not add up: our bug */
			}
		}
		if (r >= 0) {
			put_hunks(&o, ops, n_ops, la, lb, context);
			r = o.err;
		}
	}
	free(la);
	free(lb);
	free(del);
	free(ins);
	free(ops);
	if (r < 0) {
		free(o.p);
		return r;
	}
	*out = o.len ? o.p : NULL;
	if (!o.len)
		free(o.p);
	*out_len = o.len;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Escaping                                                                                   */

/*
 * Characters shown as their bytes: they are invisible, or change the direction or the look
 * of the text around them, so that what a reviewer reads would not be what lands.
 */
static bool hidden_char(uint32_t c)
{
	static const struct {
		uint32_t lo, hi;
	} ranges[] = {
		{ 0x80, 0x9f },       /* C1 controls */
		{ 0xad, 0xad },       /* soft hyphen */
		{ 0x34f, 0x34f },     /* combining grapheme joiner */
		{ 0x61c, 0x61c },     /* Arabic letter mark */
		{ 0x115f, 0x1160 },   /* Hangul fillers */
		{ 0x17b4, 0x17b5 },   /* Khmer inherent vowels */
		{ 0x180b, 0x180f },   /* Mongolian variation selectors and vowel separator */
		{ 0x200b, 0x200f },   /* zero-width characters, directional marks */
		{ 0x2028, 0x202e },   /* line and paragraph separators, embeddings, overrides */
		{ 0x2060, 0x206f },   /* word joiner, invisible operators, isolates */
		{ 0x3164, 0x3164 },   /* Hangul filler */
		{ 0xfe00, 0xfe0f },   /* variation selectors */
		{ 0xfeff, 0xfeff },   /* zero-width no-break space */
		{ 0xffa0, 0xffa0 },   /* halfwidth Hangul filler */
		{ 0xfff0, 0xfffb },   /* unassigned specials, interlinear annotation */
		{ 0xfffe, 0xffff },   /* noncharacters */
		{ 0x1d173, 0x1d17a }, /* musical formatting controls */
		{ 0xe0000, 0xe0fff }, /* tags, variation selectors supplement */
	};
	if ((c & 0xfffe) == 0xfffe || (c >= 0xfdd0 && c <= 0xfdef))
		return true; /* noncharacters in every plane */
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (c >= ranges[i].lo && c <= ranges[i].hi)
			return true;
	return false;
}

/*
 * The length of the well-formed UTF-8 sequence of a printable character at p (at most left
 * bytes), or 0 when there is none.
 */
static size_t printable_utf8(const unsigned char *p, size_t left)
{
	size_t n = utf8_seq_len(p, left);
	if (n < 2)
		return 0; /* none, or a single byte, which the caller judges itself */
	/* Well-formed, so the lead byte's payload bits are known by the length. */
	uint32_t c = p[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
	for (size_t i = 1; i < n; i++)
		c = c << 6 | (p[i] & 0x3f);
	return hidden_char(c) ? 0 : n;
}

int sup_textdiff_escape(const char *in, size_t len, char **out, size_t *out_len)
{
	if (len > (SIZE_MAX - 1) / 4)
		return -ENOMEM;
	char *buf = malloc(len * 4 + 1);
	if (!buf)
		return -ENOMEM;
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t n = 0;
		if (p[i] == '\n' || p[i] == '\t' || (p[i] >= 0x20 && p[i] < 0x7f))
			n = 1;
		else if (p[i] >= 0x80)
			n = printable_utf8(p + i, len - i);
		if (n) {
			memcpy(buf + o, p + i, n);
			o += n;
			i += n;
			continue;
		}
		/* One byte at a time: a bad sequence's next byte may start a good one. */
		buf[o++] = '\\';
		buf[o++] = 'x';
		buf[o++] = hex_digit(p[i] >> 4);
		buf[o++] = hex_digit(p[i]);
		i++;
	}
	buf[o] = '\0';
	*out = buf;
	*out_len = o;
	return 0;
}
