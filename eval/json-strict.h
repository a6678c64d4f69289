/* SPDX-License-Identifier: MIT */
/*
 * json-strict: the one reader of hostile JSON in warden. A run's record.json (eval/evrecord.c)
 * and the files a json_equals criterion reads (eval/criteria.c) both come through here; each
 * caller then applies its own schema or pointer to the tree.
 *
 * Two passes, the second only when the first accepted the text:
 *  1. syntax: a recursive-descent checker of RFC 8259 over the raw bytes (a cursor that never
 *     reads past len), stricter than cJSON on purpose: no "\u0000" (a C string would end
 *     early, so two different keys or values could compare equal), no raw control character
 *     in a string, well-formed UTF-8 in strings (common/utf8.h: no overlong form, surrogate or
 *     code point above U+10FFFF) and paired surrogate escapes, the JSON number grammar exactly
 *     (cJSON's strtod also takes "01", "1." and "-.5"), only the four JSON whitespace bytes
 *     (cJSON skips every byte <= 0x20), no byte-order mark, nesting and number length
 *     bounded by the caller's limits, and nothing after the value. It builds nothing.
 *  2. tree: cJSON over a NUL-terminated copy, which must consume the whole input. Pass 1
 *     accepted the text, so a failure here can only be cJSON running out of memory; the json
 *     fuzz target (fuzz/fuzz-json.c) checks that the two passes never disagree.
 *
 * Pure: no syscalls, no global state (cJSON's global error pointer is not used).
 */
#pragma once

#include <stddef.h>

#include <cjson/cJSON.h>

/* The deepest nesting any caller may ask for: cJSON itself refuses deeper (CJSON_NESTING_LIMIT). */
#define EV_JSON_MAX_DEPTH 512u

/* What the reader accepts beyond the grammar. */
struct ev_json_limits {
	unsigned max_depth;       /* objects and arrays inside each other; the outermost is 1 */
	size_t max_number_chars;  /* characters in one number */
};

/* Why a text was refused: where, and what was wrong there. */
struct ev_json_err {
	size_t pos;       /* the byte offset of the fault */
	char what[64];    /* one short line: "a control character in a string" */
};

/*
 * Reads len bytes at buf (borrowed; need not be NUL-terminated; NULL only with len 0) as one
 * JSON text under lim (borrowed; max_depth 1..EV_JSON_MAX_DEPTH). On success stores the tree
 * in *out (the caller frees it with cJSON_Delete) and returns 0. Returns -EBADMSG with *err
 * filled when the text is not strict JSON (an empty text included), -EINVAL for limits out of
 * range, or -ENOMEM; *out is untouched on failure, *err on success.
 */
int ev_json_parse(const void *buf, size_t len, const struct ev_json_limits *lim, cJSON **out,
		  struct ev_json_err *err);

/*
 * Pass 1 alone: 0 when the text is strict JSON under lim, else -EBADMSG with *err filled, or
 * -EINVAL for limits out of range.
 */
int ev_json_check(const void *buf, size_t len, const struct ev_json_limits *lim,
		  struct ev_json_err *err);
