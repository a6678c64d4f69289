/* SPDX-License-Identifier: MIT */
/*
 * verdict: the answers of a confined child and the supervisor's readers of them (verdict.h).
 *
 * Readers follow the codec's rules (wire/wire.c): one cursor, a getter per field, the whole
 * answer refused once one getter fails, wire_done() at the end, outputs written only after
 * everything checked. Nothing the child says is repaired or partly used.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "eval.h"
#include "evrecord.h"
#include "json-strict.h"
#include "utf8.h"
#include "verdict.h"

__attribute__((format(printf, 3, 4))) static int bad(char *why, size_t why_len, const char *fmt,
						     ...)
{
	if (why && why_len) {
		va_list ap;
		va_start(ap, fmt);
		(void)vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

static bool printable(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

/* ---- the static criteria judge ---- */

static void verdict_name(char *buf, size_t cap, size_t index, bool error)
{
	(void)snprintf(buf, cap, "criteria[%zu]%s", index, error ? " error" : "");
}

int ev_verdict_seal(struct wire_mac *mac, uint64_t seq, size_t index,
		    const struct sup_crit_result *r, uint8_t *out, size_t cap)
{
	char name[48];
	size_t dlen = strnlen(r->details, sizeof(r->details));
	bool error = !r->evaluated;
	uint32_t score = error ? 0 : r->score_milli;
	if (dlen == 0 || dlen > EV_VERDICT_DETAILS_MAX || !printable(r->details, dlen) ||
	    (score != 0 && score != 1000))
		return -EINVAL;
	verdict_name(name, sizeof(name), index, error);

	uint8_t payload[4 + WIRE_MAX_RESULT_NAME + 4 + 4 + WIRE_MAX_RESULT_TEXT];
	struct wire_wr w;
	wire_wr_init(&w, payload, sizeof(payload));
	if (!wire_put_result(&w, name, strlen(name), score, r->details, dlen))
		return -EINVAL;
	return wire_seal(mac, WIRE_DIR_TO_SUPERVISOR, WIRE_RESULT, seq, payload, w.len, out, cap);
}

/* Decodes frame i (at *r's front) into *out. Returns 0 or -EBADMSG with why. */
static int open_one(struct wire_mac *mac, struct wire_rd *r, uint64_t seq, size_t index,
		    struct ev_verdict *out, char *why, size_t why_len)
{
	/* The header's payload_len finds the frame's end; the MAC is checked before the rest. */
	struct wire_rd peek = *r, frame, payload;
	uint8_t version, type;
	uint16_t flags;
	uint32_t plen;
	if (!wire_get_u8(&peek, &version) || !wire_get_u8(&peek, &type) ||
	    !wire_get_u16(&peek, &flags) || !wire_get_u32(&peek, &plen))
		return bad(why, why_len, "verdict %" PRIu64 ": a short frame header", seq);
	if (plen > WIRE_MAX_PAYLOAD ||
	    WIRE_HEADER_LEN + (size_t)plen + WIRE_MAC_LEN > EV_VERDICT_FRAME_MAX)
		return bad(why, why_len, "verdict %" PRIu64 ": a frame of %" PRIu32
			   " payload bytes is oversized", seq, plen);
	size_t flen = WIRE_HEADER_LEN + (size_t)plen + WIRE_MAC_LEN;
	if (!wire_get_view(r, flen, &frame))
		return bad(why, why_len, "verdict %" PRIu64 ": a truncated frame", seq);
	struct wire_hdr hdr;
	int rc = wire_open(mac, WIRE_DIR_TO_SUPERVISOR, seq, frame.p, frame.len, &hdr, &payload);
	if (rc < 0)
		return bad(why, why_len, "verdict %" PRIu64 ": %s", seq,
			   rc == -EPROTO ? "out of sequence"
					 : "a frame that does not authenticate or decode");
	if (hdr.type != WIRE_RESULT)
		return bad(why, why_len, "verdict %" PRIu64 ": type %u, not RESULT", seq, hdr.type);

	_cleanup_free_ char *name = NULL, *detail = NULL;
	uint32_t score = 0;
	if (wire_get_result(&payload, &name, &score, &detail) < 0)
		return bad(why, why_len, "verdict %" PRIu64 ": a malformed RESULT payload", seq);
	char judged[48], error[48];
	verdict_name(judged, sizeof(judged), index, false);
	verdict_name(error, sizeof(error), index, true);
	bool is_error = strcmp(name, error) == 0;
	if (!is_error && strcmp(name, judged) != 0)
		return bad(why, why_len, "verdict %" PRIu64 ": it names another criterion than "
			   "criteria[%zu]", seq, index);
	if (is_error ? score != 0 : score != 0 && score != 1000)
		return bad(why, why_len, "verdict %" PRIu64 ": score %" PRIu32 " (expected %s)", seq,
			   score, is_error ? "0 with an error" : "0 or 1000");
	size_t dlen = strlen(detail);
	if (dlen == 0 || dlen > EV_VERDICT_DETAILS_MAX || !printable(detail, dlen))
		return bad(why, why_len, "verdict %" PRIu64 ": details that are not one line of "
			   "at most %zu printable characters", seq, (size_t)EV_VERDICT_DETAILS_MAX);
	out->error = is_error;
	out->score_milli = score;
	memcpy(out->details, detail, dlen + 1);
	return 0;
}

int ev_verdict_open_all(struct wire_mac *mac, const uint8_t *buf, size_t len,
			const size_t *indexes, size_t n, struct ev_verdict *out, char *why,
			size_t why_len)
{
	if (!mac || (!buf && len) || (n && (!indexes || !out)) || n > TASK_MAX_CRITERIA)
		return bad(why, why_len, "verdicts: no input");
	if (len > n * EV_VERDICT_FRAME_MAX)
		return bad(why, why_len, "verdicts: %zu bytes is more than %zu frames can hold", len,
			   n);
	_cleanup_free_ struct ev_verdict *tmp = n ? calloc(n, sizeof(*tmp)) : NULL;
	if (n && !tmp)
		return bad(why, why_len, "verdicts: out of memory");
	struct wire_rd r;
	wire_rd_init(&r, buf, len);
	for (size_t i = 0; i < n; i++) {
		if (wire_done(&r))
			return bad(why, why_len, "verdicts: %zu of %zu frames", i, n);
		int rc = open_one(mac, &r, i, indexes[i], &tmp[i], why, why_len);
		if (rc < 0)
			return rc;
	}
	if (!wire_done(&r))
		return bad(why, why_len, "verdicts: %zu bytes after the last frame", r.len);
	if (n)
		memcpy(out, tmp, n * sizeof(*out));
	return 0;
}

/* ---- `warden grade`'s run folder reader ---- */

void ev_folder_init(struct ev_folder *f)
{
	memset(f, 0, sizeof(*f));
}

void ev_folder_done(struct ev_folder *f)
{
	for (size_t i = 0; i < EV_N_PARTS; i++) {
		free(f->parts[i]);
		f->parts[i] = NULL;
		f->part_len[i] = 0;
	}
}

static bool name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '.' || ch == '_' || ch == '-';
}

/* task_id and run_id: the task-id alphabet, not starting with '.' or '-'. */
static bool plain_name_ok(const char *s)
{
	if (!s[0] || s[0] == '.' || s[0] == '-')
		return false;
	for (const char *p = s; *p; p++)
		if (!name_char(*p))
			return false;
	return true;
}

static bool digest_ok(const char *s)
{
	if (strlen(s) != EV_FOLDER_DIGEST_LEN || strncmp(s, "sha256:", 7) != 0)
		return false;
	for (const char *p = s + 7; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

/* Absolute, no empty, "." or ".." component, UTF-8 without a control character. */
static bool abs_path_ok(const char *s)
{
	size_t len = strlen(s);
	if (len < 2 || s[0] != '/' || s[len - 1] == '/' || !utf8_valid_mem(s, len))
		return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	for (const char *c = s + 1, *e; *c; c = *e ? e + 1 : e) {
		e = strchr(c, '/');
		if (!e)
			e = c + strlen(c);
		size_t n = (size_t)(e - c);
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	return true;
}

/* A carried part is one subtree of a record, so the record's own limits bound it. */
static const struct ev_json_limits part_limits = {
	.max_depth = EVREC_MAX_DEPTH,
	.max_number_chars = EVREC_MAX_NUMBER_CHARS,
};

/*
 * Each carried part is exactly one JSON value of its kind (an object, the created_at string,
 * or null), in the compact form: the strict scanner reads it whole, so that a part such as
 * {},"status":"SUCCESS","x":{} (an object at each end, three members in between) cannot
 * splice members into the record it is written into.
 */
static bool part_ok(enum ev_folder_part k, const char *s, size_t len)
{
	if (len < 2 || !utf8_valid_mem(s, len))
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20)
			return false;
	struct ev_json_err jerr;
	if (ev_json_check(s, len, &part_limits, &jerr) < 0)
		return false;
	/* One value, with no whitespace before it (a control character, refused above, or ' '). */
	bool object = s[0] == '{';
	bool null = len == 4 && memcmp(s, "null", 4) == 0;
	switch (k) {
	case EV_PART_CREATED_AT:
		return s[0] == '"';
	case EV_PART_AGENT:
	case EV_PART_IDENTITY:
		return object || null;
	case EV_PART_POLICY:
	case EV_PART_HOST:
	case EV_PART_SETUP:
	case EV_PART_REAP:
		return object;
	case EV_N_PARTS:
		break;
	}
	return false;
}

static const char *const part_names[EV_N_PARTS] = {
	[EV_PART_POLICY] = "policy",	       [EV_PART_CREATED_AT] = "created_at",
	[EV_PART_HOST] = "host",	       [EV_PART_SETUP] = "phases.setup",
	[EV_PART_AGENT] = "phases.agent",      [EV_PART_REAP] = "phases.reap",
	[EV_PART_IDENTITY] = "identity",
};

int ev_folder_encode(uint32_t err, const char *why, const struct ev_folder *f, uint8_t **out,
		     size_t *out_len)
{
	size_t cap = 64u * 1024u;
	if (err > 4095 || (!err && !f))
		return -EINVAL;
	for (size_t i = 0; !err && i < EV_N_PARTS; i++) {
		if (!f->parts[i] || f->part_len[i] > EV_FOLDER_MAX_CARRIED)
			return -EINVAL;
		cap += 4 + f->part_len[i];
	}
	if (cap > EV_FOLDER_MAX_ANSWER)
		return -EINVAL;
	_cleanup_free_ uint8_t *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	struct wire_wr w;
	wire_wr_init(&w, buf, cap);
	const char *text = err && why ? why : "";
	bool ok = wire_put_u32(&w, err) &&
		  wire_put_str(&w, text, strnlen(text, EV_FOLDER_MAX_WHY), EV_FOLDER_MAX_WHY);
	if (ok && !err) {
		uint8_t stamps = (uint8_t)((f->output_truncated ? 1u : 0u) | (f->no_cgroup ? 2u : 0u));
		ok = wire_put_str(&w, f->run_id, strlen(f->run_id), EV_FOLDER_MAX_RUN_ID) &&
		     wire_put_str(&w, f->task_id, strlen(f->task_id), TASK_MAX_ID) &&
		     wire_put_str(&w, f->task_source, strlen(f->task_source),
				  EV_FOLDER_MAX_SOURCE) &&
		     wire_put_str(&w, f->task_digest, strlen(f->task_digest),
				  EV_FOLDER_DIGEST_LEN) &&
		     wire_put_str(&w, f->policy_digest, strlen(f->policy_digest),
				  EV_FOLDER_DIGEST_LEN) &&
		     wire_put_u8(&w, f->status) && wire_put_u64(&w, f->grades) &&
		     wire_put_u8(&w, (uint8_t)f->setup) && wire_put_u8(&w, (uint8_t)f->agent) &&
		     wire_put_u8(&w, (uint8_t)f->reap) && wire_put_u8(&w, stamps) &&
		     wire_put_u64(&w, f->stdout_kept) && wire_put_u64(&w, f->stderr_kept) &&
		     wire_put_bytes(&w, f->agent_digest, sizeof(f->agent_digest));
		for (size_t i = 0; ok && i < EV_N_PARTS; i++)
			ok = wire_put_str(&w, f->parts[i], f->part_len[i], EV_FOLDER_MAX_CARRIED);
	}
	if (!ok)
		return -EINVAL;
	*out = TAKE_PTR(buf);
	*out_len = w.len;
	return 0;
}

/* A string field into fixed storage (cap bytes with the NUL). */
static bool get_fixed(struct wire_rd *r, size_t max, char *dst, size_t cap)
{
	_cleanup_free_ char *s = NULL;
	if (!wire_get_str(r, max, &s))
		return false;
	size_t n = strlen(s);
	if (n >= cap)
		return false;
	memcpy(dst, s, n + 1);
	return true;
}

/* Escapes the reader's reason for one line of the supervisor's output. */
static void escape_line(const char *s, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	for (const char *p = s; *p && o + 5 < cap; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
			out[o++] = (char)ch;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 0xf];
		}
	}
	if (cap)
		out[o < cap ? o : cap - 1] = '\0';
}

int ev_folder_decode(const uint8_t *buf, size_t len, struct ev_folder *out, char *why,
		     size_t why_len)
{
	if (!out || (!buf && len))
		return bad(why, why_len, "run folder reader: no answer");
	if (len > EV_FOLDER_MAX_ANSWER)
		return bad(why, why_len, "run folder reader: an answer of %zu bytes is oversized",
			   len);
	struct wire_rd r;
	wire_rd_init(&r, buf, len);
	uint32_t err = 0;
	_cleanup_free_ char *text = NULL;
	if (!wire_get_u32(&r, &err) || !wire_get_str(&r, EV_FOLDER_MAX_WHY, &text))
		return bad(why, why_len, "run folder reader: a malformed answer");
	if (err) {
		if (err > 4095 || !text[0] || !wire_done(&r))
			return bad(why, why_len, "run folder reader: a malformed refusal");
		escape_line(text, why, why_len);
		return -EPERM;
	}
	if (text[0])
		return bad(why, why_len, "run folder reader: a reason without a refusal");

	struct ev_folder f;
	ev_folder_init(&f);
	uint8_t status = 0, setup = 0, agent = 0, reap = 0, stamps = 0;
	bool ok = get_fixed(&r, EV_FOLDER_MAX_RUN_ID, f.run_id, sizeof(f.run_id)) &&
		  get_fixed(&r, TASK_MAX_ID, f.task_id, sizeof(f.task_id)) &&
		  get_fixed(&r, EV_FOLDER_MAX_SOURCE, f.task_source, sizeof(f.task_source)) &&
		  get_fixed(&r, EV_FOLDER_DIGEST_LEN, f.task_digest, sizeof(f.task_digest)) &&
		  get_fixed(&r, EV_FOLDER_DIGEST_LEN, f.policy_digest, sizeof(f.policy_digest)) &&
		  wire_get_u8(&r, &status) && wire_get_u64(&r, &f.grades) &&
		  wire_get_u8(&r, &setup) && wire_get_u8(&r, &agent) && wire_get_u8(&r, &reap) &&
		  wire_get_u8(&r, &stamps) && wire_get_u64(&r, &f.stdout_kept) &&
		  wire_get_u64(&r, &f.stderr_kept) &&
		  wire_get_bytes(&r, f.agent_digest, sizeof(f.agent_digest));
	for (size_t i = 0; ok && i < EV_N_PARTS; i++) {
		ok = wire_get_str(&r, EV_FOLDER_MAX_CARRIED, &f.parts[i]);
		if (ok)
			f.part_len[i] = strlen(f.parts[i]);
	}
	const char *wrong = NULL;
	if (!ok || !wire_done(&r))
		wrong = "a malformed answer";
	else if (!plain_name_ok(f.run_id))
		wrong = "a run_id outside its alphabet";
	else if (!plain_name_ok(f.task_id) || strncmp(f.run_id, f.task_id, strlen(f.task_id)) != 0)
		wrong = "a task_id outside its alphabet, or not the run_id's";
	else if (!abs_path_ok(f.task_source))
		wrong = "a task source that is not an absolute path";
	else if (!digest_ok(f.task_digest) || !digest_ok(f.policy_digest))
		wrong = "a digest that is not sha256:<64 lowercase hex digits>";
	else if (status > EV_FAILURE || f.grades > 1000000u || setup > EV_FOLDER_SETUP_FAILED ||
		 agent > EV_FOLDER_AGENT_SKIPPED || reap > EV_FOLDER_REAP_FAILED || stamps > 3)
		wrong = "a status, count or stamp out of range";
	if (wrong) {
		ev_folder_done(&f);
		return bad(why, why_len, "run folder reader: %s", wrong);
	}
	for (size_t i = 0; i < EV_N_PARTS; i++) {
		if (!part_ok((enum ev_folder_part)i, f.parts[i], f.part_len[i])) {
			ev_folder_done(&f);
			return bad(why, why_len, "run folder reader: the carried %s is not the "
				   "compact JSON it must be", part_names[i]);
		}
	}
	f.status = status;
	f.setup = (enum ev_folder_setup)setup;
	f.agent = (enum ev_folder_agent)agent;
	f.reap = (enum ev_folder_reap)reap;
	f.output_truncated = stamps & 1u;
	f.no_cgroup = stamps & 2u;
	*out = f;
	return 0;
}
