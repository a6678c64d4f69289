/* SPDX-License-Identifier: MIT */
/*
 * json-strict: the one reader of hostile JSON (see json-strict.h).
 *
 * Pass 1 is a cursor over the raw bytes: js_more() is the one bounds check, and every read of
 * s->p happens after it said yes. A fault stops the scan at once with its offset and a short
 * reason; nothing is built until the whole text passed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-strict.h"
#include "utf8.h"

struct jscan {
	const unsigned char *p;
	size_t len;
	size_t pos;
	const struct ev_json_limits *lim;
	struct ev_json_err *err;
};

__attribute__((format(printf, 2, 3))) static bool js_fail(struct jscan *s, const char *fmt, ...)
{
	va_list ap;
	s->err->pos = s->pos;
	va_start(ap, fmt);
	(void)vsnprintf(s->err->what, sizeof(s->err->what), fmt, ap);
	va_end(ap);
	return false;
}

static bool js_more(const struct jscan *s, size_t n)
{
	return s->pos <= s->len && n <= s->len - s->pos;
}

static void js_ws(struct jscan *s)
{
	while (js_more(s, 1) && (s->p[s->pos] == ' ' || s->p[s->pos] == '\t' ||
				 s->p[s->pos] == '\n' || s->p[s->pos] == '\r'))
		s->pos++;
}

static bool js_digit(const struct jscan *s)
{
	return js_more(s, 1) && s->p[s->pos] >= '0' && s->p[s->pos] <= '9';
}

static bool js_literal(struct jscan *s, const char *word)
{
	size_t n = strlen(word);
	if (!js_more(s, n) || memcmp(s->p + s->pos, word, n) != 0)
		return js_fail(s, "not a JSON value");
	s->pos += n;
	return true;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, at most lim->max_number_chars long. */
static bool js_number(struct jscan *s)
{
	size_t start = s->pos;
	if (js_more(s, 1) && s->p[s->pos] == '-')
		s->pos++;
	if (!js_digit(s))
		return js_fail(s, "a number without digits");
	if (s->p[s->pos] == '0') {
		s->pos++;
	} else {
		while (js_digit(s))
			s->pos++;
	}
	if (js_more(s, 1) && s->p[s->pos] == '.') {
		s->pos++;
		if (!js_digit(s))
			return js_fail(s, "a number without digits after '.'");
		while (js_digit(s))
			s->pos++;
	}
	if (js_more(s, 1) && (s->p[s->pos] == 'e' || s->p[s->pos] == 'E')) {
		s->pos++;
		if (js_more(s, 1) && (s->p[s->pos] == '+' || s->p[s->pos] == '-'))
			s->pos++;
		if (!js_digit(s))
			return js_fail(s, "a number without digits in its exponent");
		while (js_digit(s))
			s->pos++;
	}
	if (s->pos - start > s->lim->max_number_chars) {
		s->pos = start;
		return js_fail(s, "a number longer than %zu characters", s->lim->max_number_chars);
	}
	return true;
}

static bool js_hex4(struct jscan *s, unsigned *out)
{
	unsigned v = 0;
	if (!js_more(s, 4))
		return js_fail(s, "a \\u escape without 4 hex digits");
	for (size_t i = 0; i < 4; i++) {
		unsigned char ch = s->p[s->pos + i];
		unsigned d;
		if (ch >= '0' && ch <= '9')
			d = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			d = ch - 'a' + 10u;
		else if (ch >= 'A' && ch <= 'F')
			d = ch - 'A' + 10u;
		else
			return js_fail(s, "a \\u escape without 4 hex digits");
		v = v * 16u + d;
	}
	s->pos += 4;
	*out = v;
	return true;
}

static bool js_string(struct jscan *s)
{
	s->pos++; /* the opening quote */
	for (;;) {
		if (!js_more(s, 1))
			return js_fail(s, "an unterminated string");
		unsigned char ch = s->p[s->pos];
		if (ch == '"') {
			s->pos++;
			return true;
		}
		if (ch < 0x20)
			return js_fail(s, "a control character in a string (it must be escaped)");
		if (ch >= 0x80) {
			size_t n = utf8_seq_len(s->p + s->pos, s->len - s->pos);
			if (n == 0)
				return js_fail(s, "invalid UTF-8");
			s->pos += n;
			continue;
		}
		if (ch != '\\') {
			s->pos++;
			continue;
		}
		if (!js_more(s, 2))
			return js_fail(s, "an unterminated string");
		ch = s->p[s->pos + 1];
		if (ch == '"' || ch == '\\' || ch == '/' || ch == 'b' || ch == 'f' || ch == 'n' ||
		    ch == 'r' || ch == 't') {
			s->pos += 2;
			continue;
		}
		if (ch != 'u')
			return js_fail(s, "an invalid escape in a string");
		size_t at = s->pos;
		s->pos += 2;
		unsigned u;
		if (!js_hex4(s, &u))
			return false;
		if (u == 0) {
			s->pos = at;
			return js_fail(s, "\\u0000 in a string (NUL is not allowed)");
		}
		if (u >= 0xdc00 && u <= 0xdfff) {
			s->pos = at;
			return js_fail(s, "an unpaired surrogate in a string");
		}
		if (u >= 0xd800 && u <= 0xdbff) {
			if (!js_more(s, 2) || s->p[s->pos] != '\\' || s->p[s->pos + 1] != 'u') {
				s->pos = at;
				return js_fail(s, "an unpaired surrogate in a string");
			}
			s->pos += 2;
			if (!js_hex4(s, &u))
				return false;
			if (u < 0xdc00 || u > 0xdfff) {
				s->pos = at;
				return js_fail(s, "an unpaired surrogate in a string");
			}
		}
	}
}

static bool js_value(struct jscan *s, unsigned depth);

/* An object or an array (close is '}' or ']'), at nesting level depth. */
static bool js_container(struct jscan *s, unsigned depth, char close)
{
	if (depth > s->lim->max_depth)
		return js_fail(s, "nesting deeper than %u levels", s->lim->max_depth);
	s->pos++;
	js_ws(s);
	if (js_more(s, 1) && s->p[s->pos] == (unsigned char)close) {
		s->pos++;
		return true;
	}
	for (;;) {
		if (close == '}') {
			js_ws(s);
			if (!js_more(s, 1) || s->p[s->pos] != '"')
				return js_fail(s, "an object key that is not a string");
			if (!js_string(s))
				return false;
			js_ws(s);
			if (!js_more(s, 1) || s->p[s->pos] != ':')
				return js_fail(s, "a missing ':' after an object key");
			s->pos++;
		}
		if (!js_value(s, depth))
			return false;
		js_ws(s);
		if (js_more(s, 1) && s->p[s->pos] == ',') {
			s->pos++;
			continue;
		}
		if (js_more(s, 1) && s->p[s->pos] == (unsigned char)close) {
			s->pos++;
			return true;
		}
		return js_fail(s, close == '}' ? "a missing ',' or '}' in an object"
					       : "a missing ',' or ']' in an array");
	}
}

static bool js_value(struct jscan *s, unsigned depth)
{
	js_ws(s);
	if (!js_more(s, 1))
		return js_fail(s, "a missing value");
	switch (s->p[s->pos]) {
	case '{':
		return js_container(s, depth + 1, '}');
	case '[':
		return js_container(s, depth + 1, ']');
	case '"':
		return js_string(s);
	case 't':
		return js_literal(s, "true");
	case 'f':
		return js_literal(s, "false");
	case 'n':
		return js_literal(s, "null");
	default:
		if (s->p[s->pos] == '-' || js_digit(s))
			return js_number(s);
		return js_fail(s, "not a JSON value");
	}
}

static bool limits_ok(const struct ev_json_limits *lim)
{
	return lim && lim->max_depth >= 1 && lim->max_depth <= EV_JSON_MAX_DEPTH &&
	       lim->max_number_chars >= 1;
}

int ev_json_check(const void *buf, size_t len, const struct ev_json_limits *lim,
		  struct ev_json_err *err)
{
	struct ev_json_err scratch;
	if (!limits_ok(lim) || (!buf && len > 0))
		return -EINVAL;
	struct jscan s = { .p = buf ? buf : (const void *)"", .len = len, .lim = lim,
			   .err = err ? err : &scratch };
	bool ok = js_value(&s, 0);
	if (ok) {
		js_ws(&s);
		if (js_more(&s, 1))
			ok = js_fail(&s, "bytes after the JSON value");
	}
	return ok ? 0 : -EBADMSG;
}

int ev_json_parse(const void *buf, size_t len, const struct ev_json_limits *lim, cJSON **out,
		  struct ev_json_err *err)
{
	if (!out)
		return -EINVAL;
	int r = ev_json_check(buf, len, lim, err);
	if (r < 0)
		return r;
	/* cJSON reads a NUL-terminated copy and must stop exactly at its end. */
	char *text = len < SIZE_MAX ? malloc(len + 1) : NULL;
	if (!text)
		return -ENOMEM;
	if (len > 0)
		memcpy(text, buf, len);
	text[len] = '\0';
	const char *end = NULL;
	cJSON *json = cJSON_ParseWithLengthOpts(text, len + 1, &end, true);
	free(text);
	if (!json)
		return -ENOMEM; /* pass 1 accepted the text: cJSON can only have run out of memory */
	*out = json;
	return 0;
}
