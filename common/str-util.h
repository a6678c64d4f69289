/* SPDX-License-Identifier: MIT */
/*
 * Small string primitives every part may use, one copy of each: equality, NULL-terminated
 * string vectors, hex digits, and the escaper that makes any bytes fit one line of a message.
 * Header-only and pure: no global state, no syscalls; only strv_push allocates.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* a and b (both non-NULL, borrowed) are the same string. */
static inline bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

/* Frees a NULL-terminated vector of strings and the strings. NULL-safe. */
static inline void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/*
 * Appends a copy of s to the NULL-terminated vector *v of *n strings (both updated; *v may
 * start NULL with *n 0), keeping it NULL-terminated. Returns 0, or -ENOMEM with *v and *n
 * untouched.
 */
static inline int strv_push(char ***v, size_t *n, const char *s)
{
	char *copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	char **grown = reallocarray(*v, *n + 2, sizeof(char *));
	if (!grown) {
		free(copy);
		return -ENOMEM;
	}
	grown[(*n)++] = copy;
	grown[*n] = NULL;
	*v = grown;
	return 0;
}

/* The lowercase hex digit of v's low four bits. */
static inline char hex_digit(unsigned v)
{
	return "0123456789abcdef"[v & 15u];
}

/* The len bytes at buf (borrowed) as 2 * len lowercase hex digits and a NUL, into out. */
static inline void hex_encode(const void *buf, size_t len, char *out)
{
	const unsigned char *p = buf;
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = hex_digit(p[i] >> 4);
		out[2 * i + 1] = hex_digit(p[i]);
	}
	out[2 * len] = '\0';
}

/*
 * Copies the NUL-terminated in (borrowed) into out (size bytes; nothing is written when size
 * is 0, else out is NUL-terminated) fit for one line of a message, quoted in '...': printable
 * ASCII stays but for ' and \, and every other byte becomes \xNN. What does not fit is cut
 * between characters, never inside an escape. With ellipsis, the cut is made while fewer than
 * 8 bytes are left (a worst-case escape, "..." and the NUL) and the text then ends in "...";
 * without, as late as the next character still fits. Returns out.
 */
static inline char *str_escape(const char *in, char *out, size_t size, bool ellipsis)
{
	size_t o = 0;
	if (size == 0)
		return out;
	if (size < 8)
		ellipsis = false;
	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		bool plain = *p >= 0x20 && *p < 0x7f && *p != '\\' && *p != '\'';
		if (ellipsis ? o + 8 > size : o + (plain ? 1 : 4) >= size) {
			if (ellipsis) {
				memcpy(out + o, "...", 3);
				o += 3;
			}
			break;
		}
		if (plain) {
			out[o++] = (char)*p;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex_digit(*p >> 4);
			out[o++] = hex_digit(*p);
		}
	}
	out[o] = '\0';
	return out;
}
