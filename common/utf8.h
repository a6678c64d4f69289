/* SPDX-License-Identifier: MIT */
/*
 * utf8: the one UTF-8 validator (RFC 3629). Every check of "is this UTF-8" in warden uses it:
 * the task parser's JSON output, the policy printer's YAML output and the strict JSON reader
 * of hostile files (eval/json-strict.c).
 *
 * Strict on purpose: a sequence is well-formed only when it is the shortest encoding of a
 * Unicode scalar value, so overlong forms (C0 80 for NUL), UTF-16 surrogates (ED A0 80 ..
 * ED BF BF) and code points above U+10FFFF (F4 90 80 80 and up, F5..FF) are all refused. A
 * looser check lets two spellings of one character through, or bytes that another reader
 * turns into something else.
 *
 * Header-only and pure: no allocation, no global state, no syscalls.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/*
 * The length (1..4) of the well-formed UTF-8 sequence at the start of p (left bytes, borrowed,
 * left > 0), or 0 when there is none (a stray continuation byte, a lead byte that can start
 * nothing, a truncated, overlong, surrogate or out-of-range sequence). Any byte below 0x80,
 * NUL included, is a sequence of one.
 */
static inline size_t utf8_seq_len(const unsigned char *p, size_t left)
{
	unsigned char b = p[0];
	unsigned char lo = 0x80, hi = 0xbf; /* the bounds of the second byte */
	size_t n;

	if (b < 0x80)
		return 1;
	if (b >= 0xc2 && b <= 0xdf) {
		n = 2;
	} else if (b >= 0xe0 && b <= 0xef) {
		n = 3;
		if (b == 0xe0)
			lo = 0xa0; /* below: overlong */
		else if (b == 0xed)
			hi = 0x9f; /* above: a surrogate */
	} else if (b >= 0xf0 && b <= 0xf4) {
		n = 4;
		if (b == 0xf0)
			lo = 0x90; /* below: overlong */
		else if (b == 0xf4)
			hi = 0x8f; /* above: past U+10FFFF */
	} else {
		return 0; /* 0x80..0xc1 (a continuation, or overlong) and 0xf5..0xff */
	}
	if (n > left)
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* True when the len bytes at p (borrowed; NULs allowed) are well-formed UTF-8 throughout. */
static inline bool utf8_valid_mem(const void *p, size_t len)
{
	const unsigned char *s = p;
	size_t i = 0;

	while (i < len) {
		size_t n = utf8_seq_len(s + i, len - i);
		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

/* True when the NUL-terminated string s (borrowed) is well-formed UTF-8. */
static inline bool utf8_valid(const char *s)
{
	return utf8_valid_mem(s, strlen(s));
}
