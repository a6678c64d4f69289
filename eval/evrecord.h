/* SPDX-License-Identifier: MIT */
/*
 * evrecord: the strict reader of an evaluation run record (record.json, docs/eval.md "The run
 * record"). A run folder handed to `warden grade` may come from anyone, so its record is
 * untrusted input: this parser accepts exactly the documented schema (every key present, no
 * other key, every type and range checked) and nothing else.
 *
 * Pure, like the other parsers in policy/: bytes in, a validated tree out; no syscalls.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define EVREC_SCHEMA_VERSION 1
#define EVREC_MAX_INPUT_BYTES (4u * 1024u * 1024u)
#define EVREC_MAX_DEPTH 8          /* nested objects and arrays; the record itself is level 1 */
#define EVREC_MAX_NUMBER_CHARS 32  /* characters in one JSON number */
#define EVREC_MAX_INT 9007199254740991.0 /* 2^53 - 1: above it, a double is not exact */

struct pol_evrec {
	cJSON *json;               /* the whole validated record (owned) */
	/* Views into json (borrowed from it; valid while json is): */
	const char *run_id;
	const char *task_id;
	const char *task_source;   /* absolute path */
	const char *task_digest;   /* "sha256:" + 64 lowercase hex */
	const char *policy_digest;
	const char *status;        /* SUCCESS, FAILURE, ... */
	uint64_t grades;
	/*
	 * The agent phase in a canonical form (phases.setup, phases.agent, phases.reap and
	 * identity, printed unformatted in that order), owned: `warden grade` compares it before
	 * and after grading.
	 */
	char *agent_canon;
};

/*
 * Parses and validates len bytes at buf (borrowed; need not be NUL-terminated). On success
 * stores a new record in *out (free with pol_evrec_free) and returns 0. On failure returns
 * -EBADMSG (not the schema: invalid JSON, unknown or missing key, wrong type, out of range),
 * -E2BIG (over EVREC_MAX_INPUT_BYTES) or -ENOMEM, writes a one-line reason naming the field
 * ("phases.agent.exit_code: 300 is out of range (expected 0..255 or null)") into why, and
 * leaves *out untouched. why (why_len bytes, may be NULL when why_len is 0) is not touched on
 * success.
 */
int pol_evrec_parse(const void *buf, size_t len, struct pol_evrec **out, char *why, size_t why_len);

/* Frees a record and everything it owns. NULL-safe. Returns NULL. */
struct pol_evrec *pol_evrec_free(struct pol_evrec *r);

/*
 * The canonical agent-phase text of an already validated tree (see agent_canon), as a new
 * malloc()ed string, or NULL when out of memory (or when json is not an object holding
 * phases.setup, phases.agent, phases.reap and identity). json is borrowed and not modified.
 * Used by the writer so that both sides agree.
 */
char *pol_evrec_agent_canon(const cJSON *json);
