/* SPDX-License-Identifier: MIT */
/*
 * The reader's getters for delimited text and 24-bit lengths (wire-text.h). Every advance is a
 * wire_get_view() or wire_get_u8(); byte inspection stays below the view's length.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wire-text.h"

static uint8_t ascii_lower(uint8_t b)
{
	return (b >= 'A' && b <= 'Z') ? (uint8_t)(b + ('a' - 'A')) : b;
}

bool wire_peek_u8(const struct wire_rd *r, uint8_t *out)
{
	if (r->len == 0)
		return false;
	*out = r->p[0];
	return true;
}

bool wire_get_u24(struct wire_rd *r, uint32_t *out)
{
	struct wire_rd save = *r;
	uint8_t hi;
	uint16_t lo;
	if (!wire_get_u8(r, &hi) || !wire_get_u16(r, &lo)) {
		*r = save;
		return false;
	}
	*out = (uint32_t)hi << 16 | lo;
	return true;
}

bool wire_get_until(struct wire_rd *r, uint8_t delim, size_t max, struct wire_rd *out)
{
	/* Only the first max + 1 bytes can hold the delimiter of an acceptable result. */
	size_t window = r->len;
	if (max < SIZE_MAX && window > max + 1)
		window = max + 1;
	const uint8_t *hit = window ? memchr(r->p, delim, window) : NULL;
	if (!hit)
		return false;
	size_t n = (size_t)(hit - r->p);
	struct wire_rd save = *r, body, skip;
	if (!wire_get_view(r, n, &body) || !wire_get_view(r, 1, &skip)) {
		*r = save;
		return false;
	}
	*out = body;
	return true;
}

bool wire_get_while(struct wire_rd *r, bool (*pred)(uint8_t b), size_t max, struct wire_rd *out)
{
	size_t n = 0;
	while (n < r->len && pred(r->p[n])) {
		if (n == max)
			return false;
		n++;
	}
	return wire_get_view(r, n, out);
}

bool wire_get_lit(struct wire_rd *r, const char *lit, size_t n, bool ci)
{
	if (n > r->len)
		return false;
	for (size_t i = 0; i < n; i++) {
		uint8_t a = r->p[i], b = (uint8_t)lit[i];
		if (ci ? ascii_lower(a) != ascii_lower(b) : a != b)
			return false;
	}
	struct wire_rd skip;
	return wire_get_view(r, n, &skip);
}

void wire_trim_end(struct wire_rd *r, bool (*pred)(uint8_t b))
{
	while (r->len > 0 && pred(r->p[r->len - 1]))
		r->len--;
}

bool wire_all(const struct wire_rd *r, bool (*pred)(uint8_t b))
{
	for (size_t i = 0; i < r->len; i++)
		if (!pred(r->p[i]))
			return false;
	return true;
}

bool wire_eq_ci(const struct wire_rd *r, const char *s, size_t n)
{
	struct wire_rd copy = *r;
	return r->len == n && wire_get_lit(&copy, s, n, true);
}
