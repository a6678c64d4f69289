/* SPDX-License-Identifier: MIT */
/*
 * verdict: what a confined child (eval/confined.c) tells the supervisor, and the
 * supervisor's strict readers of it. The child has parsed hostile bytes, so whatever it
 * answers is untrusted input: every reader here is bounded, decodes field by field through
 * the codec's cursor (wire/wire.h), checks each field's range and form again, rejects a
 * trailing byte, and writes its outputs only on success.
 *
 * Two answers:
 *  - the static criteria judge's: one RESULT frame of the worker protocol (docs/protocol.md)
 *    per static criterion, in task order, sealed with a key drawn for that judge alone, seq
 *    counting from 0. name is "criteria[N]" for a verdict (score 0 or 1000) or
 *    "criteria[N] error" for a criterion that could not be judged (score 0); detail is the
 *    details line, 1..EV_VERDICT_DETAILS_MAX bytes of printable ASCII.
 *  - `warden grade`'s run folder reader's: one answer (layout below) holding either why the
 *    folder is refused or a struct ev_folder.
 *
 * Pure: no syscalls, no global state.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "criteria.h"
#include "wire.h"

/* ---- the static criteria judge ---- */

#define EV_VERDICT_DETAILS_MAX (sizeof(((struct sup_crit_result *)0)->details) - 1)
/* The largest RESULT frame: header, name, score, detail and MAC. */
#define EV_VERDICT_FRAME_MAX                                                                  \
	(WIRE_HEADER_LEN + 4u + WIRE_MAX_RESULT_NAME + 4u + 4u + WIRE_MAX_RESULT_TEXT +        \
	 WIRE_MAC_LEN)

/* One decoded verdict. */
struct ev_verdict {
	bool error;            /* the criterion could not be judged */
	uint32_t score_milli;  /* 0 or 1000; 0 when error */
	char details[EV_VERDICT_DETAILS_MAX + 1];
};

/*
 * The child's side: seals r, the verdict on criterion index (its place in the task), as the
 * RESULT frame number seq into out (cap bytes; EV_VERDICT_FRAME_MAX is always enough).
 * Returns the frame's length, -EINVAL for a verdict that breaks the layout (a details line
 * that is empty, too long or not printable ASCII, a score other than 0 or 1000), or what
 * wire_seal() returns.
 */
int ev_verdict_seal(struct wire_mac *mac, uint64_t seq, size_t index,
		    const struct sup_crit_result *r, uint8_t *out, size_t cap);

/*
 * The supervisor's side: reads buf (len bytes, untrusted) as exactly n RESULT frames sealed
 * with mac, seq 0..n-1, frame i naming criterion indexes[i]; nothing may follow. On success
 * fills out[0..n-1] and returns 0. Otherwise returns -EBADMSG with a one-line reason in why
 * (a short, oversized, forged, replayed or reordered frame, another type, a name, score or
 * detail outside the layout, a missing or extra frame) and leaves out untouched.
 */
int ev_verdict_open_all(struct wire_mac *mac, const uint8_t *buf, size_t len,
			const size_t *indexes, size_t n, struct ev_verdict *out, char *why,
			size_t why_len);

/* ---- `warden grade`'s run folder reader ---- */

#define EV_FOLDER_MAX_RUN_ID 128u
#define EV_FOLDER_MAX_SOURCE 4095u
#define EV_FOLDER_DIGEST_LEN 71u      /* "sha256:" and 64 lowercase hex digits */
#define EV_FOLDER_MAX_CARRIED (4u * 1024u * 1024u) /* one carried part; the record's cap */
#define EV_FOLDER_MAX_WHY 1024u
/* The largest answer: the fixed fields, the strings and every carried part's prefix. */
#define EV_FOLDER_MAX_ANSWER (EV_FOLDER_MAX_CARRIED + 64u * 1024u)

enum ev_folder_setup { EV_FOLDER_SETUP_SKIPPED, EV_FOLDER_SETUP_OK, EV_FOLDER_SETUP_FAILED };
enum ev_folder_agent {
	EV_FOLDER_AGENT_NONE,     /* phases.agent is null */
	EV_FOLDER_AGENT_OK,
	EV_FOLDER_AGENT_TIMEOUT,
	EV_FOLDER_AGENT_ERROR,
	EV_FOLDER_AGENT_SKIPPED,
};
enum ev_folder_reap { EV_FOLDER_REAP_SKIPPED, EV_FOLDER_REAP_OK, EV_FOLDER_REAP_FAILED };

/*
 * The parts of the record a regrade carries into the record it writes, unchanged: each the
 * compact JSON text the reader printed from the validated tree. The supervisor scans each
 * with the strict JSON scanner (ev_json_check, no tree built) for exactly one value of its
 * kind, then places them as they are (cJSON raw items).
 */
enum ev_folder_part {
	EV_PART_POLICY,
	EV_PART_CREATED_AT,
	EV_PART_HOST,
	EV_PART_SETUP,
	EV_PART_AGENT,
	EV_PART_REAP,
	EV_PART_IDENTITY,
	EV_N_PARTS,
};

/* What the reader found in a run folder, validated; all the supervisor learns of it. */
struct ev_folder {
	char run_id[EV_FOLDER_MAX_RUN_ID + 1];
	char task_id[TASK_MAX_ID + 1];
	char task_source[EV_FOLDER_MAX_SOURCE + 1];  /* absolute */
	char task_digest[EV_FOLDER_DIGEST_LEN + 1];
	char policy_digest[EV_FOLDER_DIGEST_LEN + 1];
	uint8_t status;                 /* enum ev_status */
	uint64_t grades;                /* 0..1000000 */
	enum ev_folder_setup setup;
	enum ev_folder_agent agent;
	enum ev_folder_reap reap;
	bool output_truncated;          /* the record has the agent_output_truncated stamp */
	bool no_cgroup;                 /* ... and no_cgroup */
	uint64_t stdout_kept, stderr_kept; /* what the stream files hold (0 without an agent) */
	uint8_t agent_digest[32];       /* SHA-256 of the agent phase's canonical text */
	char *parts[EV_N_PARTS];        /* owned */
	size_t part_len[EV_N_PARTS];
};

void ev_folder_init(struct ev_folder *f);
void ev_folder_done(struct ev_folder *f);

/*
 * The reader's answer:
 *   u32 err (0, or a positive errno: the folder is refused) | str why (at most
 *   EV_FOLDER_MAX_WHY bytes; empty when err is 0)
 * and when err is 0 the folder:
 *   str run_id | str task_id | str task_source | str task_digest | str policy_digest |
 *   u8 status | u64 grades | u8 setup | u8 agent | u8 reap | u8 stamps (bit 0 truncated,
 *   bit 1 no_cgroup) | u64 stdout_kept | u64 stderr_kept | bytes agent_digest[32] |
 *   EV_N_PARTS times str part
 */

/*
 * Encodes an answer: f when err is 0, else err (a positive errno) and why. Stores a new
 * buffer in *out (the caller frees it) and its length, and returns 0; or -EINVAL (a field
 * over its bound, err out of 1..4095) or -ENOMEM, *out untouched.
 */
int ev_folder_encode(uint32_t err, const char *why, const struct ev_folder *f, uint8_t **out,
		     size_t *out_len);

/*
 * Decodes an answer (buf, len bytes, untrusted). A refusal returns -EPERM with the reader's
 * reason (escaped, one line) in why; an answer that breaks the layout or any field's form (a
 * run_id or task_id outside their alphabet, a task_source that is not an absolute path of
 * printable characters, a digest that is not "sha256:" and 64 lowercase hex digits, an enum
 * or count out of range, a carried part that holds a control character or is not exactly one
 * strict JSON value of its kind, under the record's limits) returns -EBADMSG with the reason in
 * why. On success fills *out (which the caller releases with ev_folder_done) and returns 0;
 * else *out is untouched.
 */
int ev_folder_decode(const uint8_t *buf, size_t len, struct ev_folder *out, char *why,
		     size_t why_len);
