/* SPDX-License-Identifier: MIT */
/*
 * More getters for the bounded reader of wire.h (struct wire_rd), for untrusted formats that
 * are not frames: the egress proxy's HTTP request heads (text, delimited) and TLS ClientHello
 * messages (binary, 24-bit lengths). They advance only through wire_get_view(), so the one
 * bounds check of wire.c stays the only place that moves a cursor; the few places here that
 * look at a byte do so at an index below the view's length.
 *
 * Like every getter in wire.h: on failure the cursor and the outputs are untouched.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* The next byte, without consuming it. Fails on an empty view. */
bool wire_peek_u8(const struct wire_rd *r, uint8_t *out);

/* A 24-bit big-endian unsigned integer (TLS handshake lengths). */
bool wire_get_u24(struct wire_rd *r, uint32_t *out);

/*
 * The bytes before the first delim, as a sub-cursor, consuming the delimiter too. Fails when
 * none of the first max + 1 bytes is delim (so the result is at most max bytes long).
 */
bool wire_get_until(struct wire_rd *r, uint8_t delim, size_t max, struct wire_rd *out);

/*
 * The longest prefix whose bytes all satisfy pred, as a sub-cursor (possibly empty). Fails
 * when that prefix is longer than max.
 */
bool wire_get_while(struct wire_rd *r, bool (*pred)(uint8_t b), size_t max, struct wire_rd *out);

/*
 * Consumes the n bytes of lit when the view starts with them: exactly, or ignoring ASCII case
 * when ci. Fails (consuming nothing) otherwise.
 */
bool wire_get_lit(struct wire_rd *r, const char *lit, size_t n, bool ci);

/* Drops trailing bytes that satisfy pred from the end of the view. Never fails. */
void wire_trim_end(struct wire_rd *r, bool (*pred)(uint8_t b));

/* True iff every byte of the view satisfies pred (true for an empty view). */
bool wire_all(const struct wire_rd *r, bool (*pred)(uint8_t b));

/* True iff the view holds exactly the n bytes of s, ignoring ASCII case. */
bool wire_eq_ci(const struct wire_rd *r, const char *s, size_t n);
