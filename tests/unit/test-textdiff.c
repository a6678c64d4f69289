/* SPDX-License-Identifier: MIT */
/*
 * Unified diffs and their escaping (supervisor/textdiff.h): exact hunks for the cases
 * `diff -u` users know (one line, new and deleted files, a missing last newline, the merging
 * of nearby changes), bounds, and on many generated pairs that the hunks, applied by a patcher
 * written here, turn the old text into the new, with as few changed lines as a longest common
 * subsequence allows.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cleanup.h"
#include "textdiff.h"

/* The hunks of a -> b with 3 lines of context, as a string ("" when equal). */
static char *diff3(const char *a, const char *b)
{
	char *out = (char *)(uintptr_t)1;
	size_t len = 7;
	int r = sup_textdiff(a, strlen(a), b, strlen(b), SUP_TEXTDIFF_CONTEXT, &out, &len);
	assert_int_equal(r, 0);
	char *s = malloc(len + 1);
	assert_non_null(s);
	if (len)
		memcpy(s, out, len);
	s[len] = '\0';
	if (len == 0)
		assert_null(out);
	free(out);
	return s;
}

static void expect_diff(const char *a, const char *b, const char *want)
{
	_cleanup_free_ char *got = diff3(a, b);
	if (strcmp(got, want) != 0)
		fail_msg("diff of '%s' -> '%s':\n--- got\n%s--- want\n%s", a, b, got, want);
}

static void test_equal(void **state)
{
	(void)state;
	expect_diff("", "", "");
	expect_diff("a\nb\n", "a\nb\n", "");
	expect_diff("no newline", "no newline", "");
}

static void test_one_line(void **state)
{
	(void)state;
	expect_diff("a\n", "b\n", "@@ -1 +1 @@\n-a\n+b\n");
}

static void test_new_and_deleted(void **state)
{
	(void)state;
	expect_diff("", "a\nb\nc\n", "@@ -0,0 +1,3 @@\n+a\n+b\n+c\n");
	expect_diff("a\nb\nc\n", "", "@@ -1,3 +0,0 @@\n-a\n-b\n-c\n");
	expect_diff("", "x\n", "@@ -0,0 +1 @@\n+x\n");
}

static void test_no_newline(void **state)
{
	(void)state;
	expect_diff("a\nb", "a\nb\n",
		    "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
	expect_diff("a\n", "a\nb",
		    "@@ -1 +1,2 @@\n a\n+b\n\\ No newline at end of file\n");
}

static void test_context(void **state)
{
	(void)state;
	/* a change in the middle of ten lines: three lines of context on each side */
	expect_diff("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n",
		    "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
	/* an insertion at the start: the range before it is line 0 */
	expect_diff("1\n2\n3\n4\n5\n", "0\n1\n2\n3\n4\n5\n", "@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n");
	/* a deletion at the end */
	expect_diff("1\n2\n3\n4\n5\n", "1\n2\n3\n4\n", "@@ -2,4 +2,3 @@\n 2\n 3\n 4\n-5\n");
	/* a line added between two */
	expect_diff("1\n2\n", "1\nx\n2\n", "@@ -1,2 +1,3 @@\n 1\n+x\n 2\n");
}

static void test_one_kind(void **state)
{
	(void)state;
	/* only removals, or only additions, around a kept line: the search's edge diagonals */
	expect_diff("x\nc\ny\n", "c\n", "@@ -1,3 +1 @@\n-x\n c\n-y\n");
	expect_diff("c\n", "x\nc\ny\n", "@@ -1 +1,3 @@\n+x\n c\n+y\n");
	expect_diff("1\nx\n2\nx\n3\n", "1\n2\n3\n", "@@ -1,5 +1,3 @@\n 1\n-x\n 2\n-x\n 3\n");
}

static void test_merging(void **state)
{
	(void)state;
	/* six equal lines between two changes (2 x context): one hunk */
	expect_diff("a\n1\n2\n3\n4\n5\n6\nb\n", "A\n1\n2\n3\n4\n5\n6\nB\n",
		    "@@ -1,8 +1,8 @@\n-a\n+A\n 1\n 2\n 3\n 4\n 5\n 6\n-b\n+B\n");
	/* seven: two hunks */
	expect_diff("a\n1\n2\n3\n4\n5\n6\n7\nb\n", "A\n1\n2\n3\n4\n5\n6\n7\nB\n",
		    "@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n"
		    "@@ -6,4 +6,4 @@\n 5\n 6\n 7\n-b\n+B\n");
}

static void test_zero_context(void **state)
{
	(void)state;
	char *out = NULL;
	size_t len = 0;
	assert_int_equal(sup_textdiff("a\nb\nc\n", 6, "a\nB\nc\n", 6, 0, &out, &len), 0);
	assert_int_equal(len, strlen("@@ -2 +2 @@\n-b\n+B\n"));
	assert_memory_equal(out, "@@ -2 +2 @@\n-b\n+B\n", len);
	free(out);
}

static void test_bounds(void **state)
{
	(void)state;
	char *out = (char *)(uintptr_t)1;
	size_t len = 7;
	/* one byte over the size bound, on either side */
	size_t big = SUP_TEXTDIFF_MAX_BYTES + 1;
	char *buf = calloc(big, 1);
	assert_non_null(buf);
	memset(buf, 'x', big);
	assert_int_equal(sup_textdiff(buf, big, "", 0, 3, &out, &len), -E2BIG);
	assert_int_equal(sup_textdiff("", 0, buf, big, 3, &out, &len), -E2BIG);
	/* exactly at it: fine */
	assert_int_equal(sup_textdiff(buf, big - 1, buf, big - 1, 3, &out, &len), 0);
	assert_null(out);
	out = (char *)(uintptr_t)1;
	len = 7;
	/* one line over the line bound ("\n" x (MAX + 1)), and exactly at it */
	memset(buf, '\n', SUP_TEXTDIFF_MAX_LINES + 1);
	assert_int_equal(sup_textdiff(buf, SUP_TEXTDIFF_MAX_LINES + 1, "", 0, 3, &out, &len),
			 -E2BIG);
	assert_true(out == (char *)(uintptr_t)1 && len == 7); /* untouched */
	assert_int_equal(sup_textdiff(buf, SUP_TEXTDIFF_MAX_LINES, "", 0, 3, &out, &len), 0);
	assert_true(len > 2 * SUP_TEXTDIFF_MAX_LINES);
	free(out);
	free(buf);
}

static void test_is_text(void **state)
{
	(void)state;
	assert_true(sup_textdiff_is_text("", 0));
	assert_true(sup_textdiff_is_text("abc\n\t\x1b", 6));
	assert_false(sup_textdiff_is_text("ab\0c", 4));
}

/* ---- generated pairs ------------------------------------------------------------------- */

static uint64_t rng = 0x243f6a8885a308d3ull;

static unsigned next_rand(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* A text of n lines from a small alphabet, maybe without its last newline. */
static char *gen_text(unsigned n, unsigned alphabet)
{
	char *s = malloc(n * 3 + 1);
	assert_non_null(s);
	size_t len = 0;
	for (unsigned i = 0; i < n; i++) {
		s[len++] = (char)('a' + next_rand(alphabet));
		s[len++] = '\n';
	}
	if (len && next_rand(4) == 0)
		len--;
	s[len] = '\0';
	return s;
}

/* A text that starts as base and has some lines changed, dropped or added. */
static char *gen_edit(const char *base, unsigned edits)
{
	size_t len = strlen(base);
	char *s = malloc(len * 2 + edits * 4 + 4);
	assert_non_null(s);
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(base + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (base + i)) + 1 : len - i;
		unsigned what = edits ? next_rand(8) : 7;
		if (what == 0) {
			edits--; /* dropped */
		} else if (what == 1) {
			edits--;
			s[o++] = 'z';
			s[o++] = '\n';
			memcpy(s + o, base + i, l);
			o += l;
		} else if (what == 2) {
			edits--;
			s[o++] = 'y';
			s[o++] = '\n';
		} else {
			memcpy(s + o, base + i, l);
			o += l;
		}
		i += l;
	}
	s[o] = '\0';
	return s;
}

/* Lines of s as a NULL-terminated array of copies (each with its '\n' when it had one). */
static char **lines_of(const char *s, size_t *out_n)
{
	size_t n = 0, len = strlen(s);
	char **v = calloc(len + 2, sizeof(char *));
	assert_non_null(v);
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(s + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (s + i)) + 1 : len - i;
		v[n] = strndup(s + i, l);
		assert_non_null(v[n]);
		n++;
		i += l;
	}
	*out_n = n;
	return v;
}

static void free_lines(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/*
 * Applies the hunks in d to a, checking each context and removed line against a, and returns
 * the result; *changed counts the removed and added lines.
 */
static char *patch(const char *a, const char *d, size_t *changed)
{
	size_t na;
	char **la = lines_of(a, &na);
	size_t cap = strlen(a) + strlen(d) + 1, o = 0, at = 0;
	char *out = malloc(cap);
	assert_non_null(out);
	*changed = 0;
	const char *p = d;
	char last = 0; /* the sign of the previous line, for "\ No newline" */
	while (*p) {
		const char *nl = strchr(p, '\n');
		assert_non_null(nl);
		size_t l = (size_t)(nl - p);
		if (p[0] == '@') {
			unsigned long start, count = 1;
			int used = 0;
			assert_true(sscanf(p, "@@ -%lu%n", &start, &used) == 1);
			if (p[used] == ',')
				assert_true(sscanf(p + used, ",%lu", &count) == 1);
			/* lines before the hunk are copied: count 0 names the line before */
			size_t first = count ? start - 1 : start;
			assert_true(first >= at && first <= na);
			for (; at < first; at++) {
				memcpy(out + o, la[at], strlen(la[at]));
				o += strlen(la[at]);
			}
		} else if (p[0] == '\\') {
			/* the line just handled had no newline */
			assert_true(last == ' ' || last == '-' || last == '+');
			if (last != '-') {
				assert_true(o > 0 && out[o - 1] == '\n');
				o--;
			}
		} else {
			assert_true(p[0] == ' ' || p[0] == '-' || p[0] == '+');
			if (p[0] != '+') {
				/* the line of a, without its newline, is the rest of this one */
				assert_true(at < na);
				size_t al = strlen(la[at]);
				size_t body = al && la[at][al - 1] == '\n' ? al - 1 : al;
				assert_true(body == l - 1 && !memcmp(la[at], p + 1, body));
				at++;
			}
			if (p[0] != '-') {
				memcpy(out + o, p + 1, l - 1);
				o += l - 1;
				out[o++] = '\n';
			}
			*changed += p[0] != ' ';
			last = p[0];
		}
		p = nl + 1;
	}
	for (; at < na; at++) {
		memcpy(out + o, la[at], strlen(la[at]));
		o += strlen(la[at]);
	}
	out[o] = '\0';
	free_lines(la, na);
	return out;
}

/* The fewest changed lines: n + m - 2 * LCS, by the textbook table. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t n, m;
	char **la = lines_of(a, &n), **lb = lines_of(b, &m);
	size_t *t = calloc((n + 1) * (m + 1), sizeof(size_t));
	assert_non_null(t);
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			size_t *c = &t[i * (m + 1) + j];
			if (!strcmp(la[i - 1], lb[j - 1]))
				*c = t[(i - 1) * (m + 1) + j - 1] + 1;
			else
				*c = t[(i - 1) * (m + 1) + j] > t[i * (m + 1) + j - 1]
					     ? t[(i - 1) * (m + 1) + j]
					     : t[i * (m + 1) + j - 1];
		}
	size_t lcs = t[n * (m + 1) + m];
	free(t);
	free_lines(la, n);
	free_lines(lb, m);
	return n + m - 2 * lcs;
}

static void check_pair(const char *a, const char *b, bool minimal)
{
	_cleanup_free_ char *d = diff3(a, b);
	size_t changed;
	_cleanup_free_ char *got = patch(a, d, &changed);
	if (strcmp(got, b) != 0)
		fail_msg("the hunks do not turn\n%s\ninto\n%s\n(got\n%s)\nhunks:\n%s", a, b, got, d);
	if (minimal && changed != edit_distance(a, b))
		fail_msg("%zu changed lines, the least is %zu:\n%s", changed, edit_distance(a, b),
			 d);
}

static void test_generated(void **state)
{
	(void)state;
	for (unsigned round = 0; round < 3000; round++) {
		_cleanup_free_ char *a = gen_text(next_rand(30), 2 + next_rand(5));
		_cleanup_free_ char *b = next_rand(3) ? gen_edit(a, next_rand(6))
						      : gen_text(next_rand(30), 2 + next_rand(5));
		check_pair(a, b, true);
	}
}

static void test_edit_bound(void **state)
{
	(void)state;
	/* More changed lines than the search allows: still a correct diff, the middle whole. */
	unsigned n = SUP_TEXTDIFF_MAX_EDITS + 200;
	char *a = malloc(n * 8 + 64), *b = malloc(n * 8 + 64);
	assert_non_null(a);
	assert_non_null(b);
	size_t la = 0, lb = 0;
	la += (size_t)sprintf(a + la, "same\n");
	lb += (size_t)sprintf(b + lb, "same\n");
	for (unsigned i = 0; i < n; i++) {
		la += (size_t)sprintf(a + la, "a%u\n", i);
		lb += (size_t)sprintf(b + lb, "b%u\n", i);
	}
	la += (size_t)sprintf(a + la, "end\n");
	lb += (size_t)sprintf(b + lb, "end\n");
	_cleanup_free_ char *d = diff3(a, b);
	size_t changed;
	_cleanup_free_ char *got = patch(a, d, &changed);
	assert_string_equal(got, b);
	assert_int_equal(changed, 2 * n);
	/* and a large file with a few changes is searched, not replaced */
	lb = 0;
	lb += (size_t)sprintf(b + lb, "same\n");
	for (unsigned i = 0; i < n; i++)
		lb += (size_t)sprintf(b + lb, "%c%u\n", i == 10 || i == 700 ? 'c' : 'a', i);
	lb += (size_t)sprintf(b + lb, "end\n");
	_cleanup_free_ char *d2 = diff3(a, b);
	_cleanup_free_ char *got2 = patch(a, d2, &changed);
	assert_string_equal(got2, b);
	assert_int_equal(changed, 4);
	free(a);
	free(b);
}

/* ---- escaping --------------------------------------------------------------------------- */

static void expect_escape(const char *in, size_t len, const char *want)
{
	char *out = NULL;
	size_t out_len = 0;
	assert_int_equal(sup_textdiff_escape(in, len, &out, &out_len), 0);
	assert_int_equal(out_len, strlen(out));
	if (strcmp(out, want) != 0)
		fail_msg("escape: got '%s', want '%s'", out, want);
	free(out);
}

#define ESC(lit, want) expect_escape(lit, sizeof(lit) - 1, want)

static void test_escape(void **state)
{
	(void)state;
	ESC("plain text\twith tab\n", "plain text\twith tab\n");
	ESC("", "");
	ESC("\x1b[2J\r\a", "\\x1b[2J\\x0d\\x07");
	ESC("a\0b", "a\\x00b");
	ESC("del\x7f", "del\\x7f");
	ESC("back\\slash 'q'", "back\\slash 'q'");
	/* printable UTF-8 stays */
	ESC("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* C1 controls, also when well-formed UTF-8 (U+009B is a CSI) */
	ESC("\x9b" "2J", "\\x9b2J");
	ESC("\xc2\x9b" "2J", "\\xc2\\x9b2J");
	/* bidirectional overrides and isolates, zero-width and tag characters */
	ESC("a\xe2\x80\xae" "b", "a\\xe2\\x80\\xaeb");
	ESC("\xe2\x81\xa6x\xe2\x81\xa9", "\\xe2\\x81\\xa6x\\xe2\\x81\\xa9");
	ESC("\xe2\x80\x8b", "\\xe2\\x80\\x8b");
	ESC("\xef\xbb\xbf" "bom", "\\xef\\xbb\\xbfbom");
	ESC("\xf3\xa0\x81\x81", "\\xf3\\xa0\\x81\\x81");
	ESC("\xc2\xad", "\\xc2\\xad");
	/* malformed: overlong, surrogate, past U+10FFFF, truncated, lone continuation */
	ESC("\xc0\xaf", "\\xc0\\xaf");
	ESC("\xe0\x80\xaf", "\\xe0\\x80\\xaf");
	ESC("\xed\xa0\x80", "\\xed\\xa0\\x80");
	ESC("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
	ESC("\xe2\x82", "\\xe2\\x82");
	ESC("\x80" "a", "\\x80a");
	/* a bad lead byte does not swallow the good sequence after it */
	ESC("\xe2\xc3\xa9", "\\xe2\xc3\xa9");
	/* noncharacters */
	ESC("\xef\xbf\xbe", "\\xef\\xbf\\xbe");
	ESC("\xf0\x9f\xbf\xbf", "\\xf0\\x9f\\xbf\\xbf");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equal),       cmocka_unit_test(test_one_line),
		cmocka_unit_test(test_new_and_deleted), cmocka_unit_test(test_no_newline),
		cmocka_unit_test(test_context),     cmocka_unit_test(test_one_kind),
		cmocka_unit_test(test_merging),
		cmocka_unit_test(test_zero_context), cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_is_text),     cmocka_unit_test(test_generated),
		cmocka_unit_test(test_edit_bound),  cmocka_unit_test(test_escape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
