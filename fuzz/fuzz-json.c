/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the one reader of hostile JSON: what record.json and a json_equals
 * criterion's file go through before anything looks at their tree.
 *
 * Target functions: ev_json_check() and ev_json_parse() (eval/json-strict.c), under the
 * record's limits (EVREC_MAX_DEPTH, EVREC_MAX_NUMBER_CHARS) and the criteria's
 * (SUP_CRIT_JSON_MAX_DEPTH, SUP_CRIT_JSON_MAX_NUMBER); cJSON_PrintUnformatted() re-prints
 * what was accepted.
 *
 * Input: the bytes of a JSON text, at most JSON_FUZZ_MAX_INPUT (larger ones are rejected
 * first). No time, no randomness, no global state.
 *
 * Beyond "no crash, no leak, no UB", it checks on every input:
 *  - the syntax pass and the tree agree: ev_json_parse() fails with -ENOMEM never (nothing
 *    fails allocation here), and with -EBADMSG exactly when ev_json_check() does, at the same
 *    byte with the same reason;
 *  - a refusal names a byte within the input and a non-empty printable reason;
 *  - what is accepted is UTF-8 throughout (common/utf8.h) and holds no NUL byte;
 *  - the tighter limits accept a subset of what the looser ones accept;
 *  - an accepted text, re-printed by cJSON, is accepted again and re-prints to the same bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "criteria.h"
#include "evrecord.h"
#include "fuzz-util.h"
#include "json-strict.h"
#include "utf8.h"

#define JSON_FUZZ_MAX_INPUT 65536u

static const struct ev_json_limits tight = {
	.max_depth = EVREC_MAX_DEPTH,
	.max_number_chars = EVREC_MAX_NUMBER_CHARS,
};
static const struct ev_json_limits loose = {
	.max_depth = SUP_CRIT_JSON_MAX_DEPTH,
	.max_number_chars = SUP_CRIT_JSON_MAX_NUMBER,
};

static bool printable_line(const char *s, size_t cap)
{
	const char *end = memchr(s, '\0', cap);
	if (!end || end == s)
		return false;
	for (const char *p = s; p < end; p++)
		if (*p < 0x20 || *p > 0x7e)
			return false;
	return true;
}

/* Reads data under lim both ways; returns the verdict (0 or -EBADMSG) and the tree on 0. */
static int read_both(const uint8_t *data, size_t size, const struct ev_json_limits *lim,
		     cJSON **out)
{
	struct ev_json_err e1, e2;
	memset(&e1, 0, sizeof(e1));
	memset(&e2, 0, sizeof(e2));
	int c = ev_json_check(data, size, lim, &e1);
	CHECK(c == 0 || c == -EBADMSG);
	cJSON *json = NULL;
	int p = ev_json_parse(data, size, lim, &json, &e2);
	CHECK(p == c);
	if (c < 0) {
		CHECK(!json);
		CHECK(e1.pos <= size && e1.pos == e2.pos);
		CHECK(printable_line(e1.what, sizeof(e1.what)));
		CHECK(strcmp(e1.what, e2.what) == 0);
		return c;
	}
	CHECK(json);
	*out = json;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > JSON_FUZZ_MAX_INPUT)
		return -1; /* keep it out of the corpus */

	cJSON *a = NULL, *b = NULL;
	int rt = read_both(data, size, &tight, &a);
	int rl = read_both(data, size, &loose, &b);
	if (rt == 0)
		CHECK(rl == 0);
	if (rl < 0)
		return 0;

	CHECK(!memchr(data, '\0', size));
	CHECK(utf8_valid_mem(data, size));

	char *flat = cJSON_PrintUnformatted(b);
	CHECK(flat);
	cJSON *again = NULL;
	CHECK(read_both((const uint8_t *)flat, strlen(flat), &loose, &again) == 0);
	char *flat2 = cJSON_PrintUnformatted(again);
	CHECK(flat2 && strcmp(flat, flat2) == 0);
	if (a) {
		char *flat_a = cJSON_PrintUnformatted(a);
		CHECK(flat_a && strcmp(flat_a, flat) == 0);
		free(flat_a);
	}

	free(flat);
	free(flat2);
	cJSON_Delete(again);
	cJSON_Delete(a);
	cJSON_Delete(b);
	return 0;
}
