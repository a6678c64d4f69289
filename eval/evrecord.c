/* SPDX-License-Identifier: MIT */
/*
 * evrecord: the strict reader of an evaluation run record (docs/eval.md, "The run record").
 *
 * A run folder handed to `warden grade` may come from anyone, so record.json is read like
 * worker bytes, in three passes, each of which must accept the input before the next runs:
 *
 *  1. syntax: no NUL byte anywhere, then the strict RFC 8259 checker that every hostile JSON
 *     text goes through (eval/json-strict.c: no "\u0000", no raw control character in a
 *     string, strict UTF-8, the JSON number grammar exactly, only JSON whitespace, nothing
 *     after the value), with this schema's limits: EVREC_MAX_DEPTH levels and numbers of at
 *     most EVREC_MAX_NUMBER_CHARS characters. It builds nothing.
 *  2. tree: cJSON over the text the first pass accepted (the same module), so a failure here
 *     can only be cJSON running out of memory (-ENOMEM); the fuzz targets check that the two
 *     passes agree.
 *  3. schema: the tables below, one struct ev_obj per JSON object, applied by check_value().
 *     Every key present (only identity.failure is optional), no other key, no key twice
 *     (cJSON keeps duplicates as separate items), every type, range, length and format; then
 *     each object's cross-field rules (ev_obj.check) once all its fields are valid.
 *
 * Messages name the JSON path ("phases.agent.stdout.file: ..."), are one line, and quote
 * record text only through quote(): escaped, at most QUOTE_MAX bytes of the value.
 *
 * Pure code: no syscalls, no global state (cJSON's own global error pointer is not used).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cleanup.h"
#include "evrecord.h"
#include "json-strict.h"
#include "task.h"

DEFINE_CLEANUP(cJSON *, cJSON_Delete)

#define QUOTE_MAX 60u            /* bytes of a quoted value in a message, escapes included */
#define PATH_MAX_LEN 96u         /* "phases.teardown.steps[31].peak_memory_bytes" and the like */
#define MAX_RUN_ID 128u          /* bytes of run_id */
#define MAX_SOURCE 4095u         /* bytes of task.source: with its NUL it fits PATH_MAX */
#define MAX_COMPONENT 255u       /* bytes of one component of task.source (NAME_MAX) */
#define MAX_TEXT 4096u           /* bytes of a free-text string */
#define MAX_DETAILS 512u         /* criteria[].details */
#define MAX_STEP_DETAIL 640u     /* STEP.detail */
#define MAX_FAILURE 159u         /* identity.failure: struct sup_identity's failure[160] */
#define MAX_SHORT 64u            /* warden_version, host.kernel (uname release) */
#define MAX_WORDS 16u            /* policy.weakenings, stamps */
#define MAX_GRADES 1000000.0
#define MAX_WEIGHT 1000000.0     /* TASK_MAX_WEIGHT */
#define MAX_U32 4294967295.0
#define SHORT_FORMAT_MAX 128u    /* longer formatted strings get their own "too long" message */
#define STAMP_LEN 16u            /* YYYYMMDDTHHMMSSZ in run_id */
#define RANDOM_LEN 8u            /* lowercase hex digits at the end of run_id */

static bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Messages                                                                                   */

struct ev_ctx {
	char *why;
	size_t why_len;
};

/* Writes the message into why (when there is room) and returns -EBADMSG. */
__attribute__((format(printf, 2, 3))) static int bad(struct ev_ctx *c, const char *fmt, ...)
{
	if (c->why && c->why_len > 0) {
		va_list ap;
		va_start(ap, fmt);
		(void)vsnprintf(c->why, c->why_len, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

struct ev_q {
	char s[QUOTE_MAX + 4];
};

/* Record text for a message: printable ASCII kept, anything else (and ' and \) as \xNN, capped. */
static const char *quote(struct ev_q *q, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; s[i]; i++) {
		unsigned char ch = (unsigned char)s[i];
		size_t need = (ch >= 0x20 && ch < 0x7f && ch != '\'' && ch != '\\') ? 1 : 4;
		if (o + need > QUOTE_MAX) {
			memcpy(q->s + o, "...", 3);
			o += 3;
			break;
		}
		if (need == 1) {
			q->s[o++] = (char)ch;
		} else {
			q->s[o++] = '\\';
			q->s[o++] = 'x';
			q->s[o++] = hex[ch >> 4];
			q->s[o++] = hex[ch & 0xf];
		}
	}
	q->s[o] = '\0';
	return q->s;
}

struct ev_num {
	char s[40];
};

/* A number as cJSON prints it: 15 significant digits, or 17 when 15 do not round-trip. */
static const char *show_num(struct ev_num *b, double d)
{
	(void)snprintf(b->s, sizeof(b->s), "%.15g", d);
	if (strtod(b->s, NULL) != d)
		(void)snprintf(b->s, sizeof(b->s), "%.17g", d);
	return b->s;
}

struct ev_path {
	char s[PATH_MAX_LEN];
};

/* The path of a value for messages; the record itself is "record". */
static const char *show(const char *path)
{
	return path[0] ? path : "record";
}

static const char *path_key(struct ev_path *p, const char *parent, const char *key)
{
	(void)snprintf(p->s, sizeof(p->s), "%s%s%s", parent, parent[0] ? "." : "", key);
	return p->s;
}

static const char *path_index(struct ev_path *p, const char *parent, size_t i)
{
	(void)snprintf(p->s, sizeof(p->s), "%s[%zu]", parent, i);
	return p->s;
}

/* ------------------------------------------------------------------------------------------ */
/* Passes 1 and 2: strict JSON, then the tree (eval/json-strict.c)                            */

static const struct ev_json_limits record_limits = {
	.max_depth = EVREC_MAX_DEPTH,
	.max_number_chars = EVREC_MAX_NUMBER_CHARS,
};

/* Returns 0 with *out, -EBADMSG with the reason in c, or -ENOMEM. */
static int read_json(struct ev_ctx *c, const void *buf, size_t len, cJSON **out)
{
	const void *nul = memchr(buf, '\0', len);
	if (nul)
		return bad(c, "record: a NUL byte at byte %zu (expected JSON text)",
			   (size_t)((const char *)nul - (const char *)buf));
	struct ev_json_err err = { 0 };
	int r = ev_json_parse(buf, len, &record_limits, out, &err);
	if (r == -EBADMSG)
		return bad(c, "record: invalid JSON at byte %zu: %s (expected one JSON object)",
			   err.pos, err.what);
	if (r < 0) {
		/* Pass 1 accepted the text, so cJSON can only have run out of memory. */
		(void)bad(c, "record: out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Formats of strings                                                                         */

struct ev_format {
	bool (*ok)(const char *s, size_t len);
	const char *noun;   /* "'x' is not <noun>" */
	const char *expect; /* "(expected <expect>)" */
};

static bool is_lower_hex(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static bool digest_ok(const char *s, size_t len)
{
	if (len != 7 + 64 || memcmp(s, "sha256:", 7) != 0)
		return false;
	for (size_t i = 7; i < len; i++)
		if (!is_lower_hex(s[i]))
			return false;
	return true;
}

static bool name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || is_digit(ch) || ch == '.' ||
	       ch == '_' || ch == '-';
}

/* The task-id characters, not starting with '.' or '-': so never "", "." or "..". */
static bool plain_name_ok(const char *s, size_t len)
{
	if (len == 0 || s[0] == '.' || s[0] == '-')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!name_char(s[i]))
			return false;
	return true;
}

static unsigned digits(const char *s, size_t n)
{
	unsigned v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10u + (unsigned)(s[i] - '0');
	return v;
}

/* A real UTC date and time; the fields are digits already. */
static bool date_ok(unsigned y, unsigned mo, unsigned d, unsigned h, unsigned mi, unsigned sec)
{
	static const unsigned mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59)
		return false;
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	unsigned max = mdays[mo - 1] + (mo == 2 && leap ? 1u : 0u);
	return d <= max;
}

/* "YYYY-MM-DDTHH:MM:SSZ": RFC 3339 in UTC, whole seconds. */
static bool time_ok(const char *s, size_t len)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
	if (len != sizeof(shape) - 1)
		return false;
	for (size_t i = 0; i < len; i++)
		if (shape[i] == 'd' ? !is_digit(s[i]) : s[i] != shape[i])
			return false;
	return date_ok(digits(s, 4), digits(s + 5, 2), digits(s + 8, 2), digits(s + 11, 2),
		       digits(s + 14, 2), digits(s + 17, 2));
}

/* "YYYYMMDDTHHMMSSZ", the time in a run folder's name. */
static bool stamp_ok(const char *s, size_t len)
{
	static const char shape[] = "ddddddddTddddddZ";
	if (len != sizeof(shape) - 1)
		return false;
	for (size_t i = 0; i < len; i++)
		if (shape[i] == 'd' ? !is_digit(s[i]) : s[i] != shape[i])
			return false;
	return date_ok(digits(s, 4), digits(s + 4, 2), digits(s + 6, 2), digits(s + 9, 2),
		       digits(s + 11, 2), digits(s + 13, 2));
}

/*
 * An absolute, normalised path naming a file: "/" then components separated by one "/", none
 * empty, "." or "..", each at most NAME_MAX bytes; no control character anywhere.
 */
static bool abs_path_ok(const char *s, size_t len)
{
	if (len < 2 || s[0] != '/' || s[len - 1] == '/')
		return false;
	size_t start = 1;
	for (size_t i = 1; i <= len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (i < len && (ch < 0x20 || ch == 0x7f))
			return false;
		if (i < len && ch != '/')
			continue;
		size_t n = i - start;
		if (n == 0 || n > MAX_COMPONENT || (n == 1 && s[start] == '.') ||
		    (n == 2 && s[start] == '.' && s[start + 1] == '.'))
			return false;
		start = i + 1;
	}
	return true;
}

/* Printable ASCII without space: versions and kernel releases. */
static bool token_ok(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f)
			return false;
	return true;
}

static bool cap_hex_ok(const char *s, size_t len)
{
	if (len != 16)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_lower_hex(s[i]))
			return false;
	return true;
}

static const struct ev_format fmt_digest = { digest_ok, "a digest",
					     "sha256: and 64 lowercase hex digits" };
static const struct ev_format fmt_time = { time_ok, "a UTC time",
					   "YYYY-MM-DDTHH:MM:SSZ, RFC 3339 in UTC" };
static const struct ev_format fmt_task_id = {
	plain_name_ok, "a task id",
	"1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.' or '-'"
};
static const struct ev_format fmt_run_id = {
	plain_name_ok, "a plain name",
	"1 to 128 of A-Z a-z 0-9 . _ -, not starting with '.' or '-'"
};
static const struct ev_format fmt_abs_path = {
	abs_path_ok, "an absolute, normalised file path",
	"'/' and components that are not empty, '.' or '..', without control characters"
};
static const struct ev_format fmt_token = { token_ok, "a printable word",
					    "1 to 64 printable ASCII characters, no space" };
static const struct ev_format fmt_cap_hex = { cap_hex_ok, "a capability set",
					      "16 lowercase hex digits" };

/* ------------------------------------------------------------------------------------------ */
/* The schema                                                                                 */

enum ev_kind {
	EV_INT,  /* a JSON number with an integral value in min..max */
	EV_NUM,  /* a JSON number in min..max */
	EV_BOOL,
	EV_STR,  /* min_len..max_len bytes; then one of words, or format */
	EV_OBJ,  /* obj */
	EV_ARR,  /* min..max entries, each an item */
};

enum {
	EV_NULLABLE = 1u << 0, /* null is allowed */
	EV_OPTIONAL = 1u << 1, /* the key may be left out */
	EV_UNIQUE = 1u << 2,   /* EV_ARR of strings: no string twice */
	EV_MILLI = 1u << 3,    /* EV_NUM: a whole number of thousandths */
};

struct ev_obj;

struct ev_field {
	const char *key;
	enum ev_kind kind;
	unsigned flags;
	double min, max;                /* EV_INT, EV_NUM: value; EV_ARR: entries */
	size_t min_len, max_len;        /* EV_STR: bytes */
	const char *const *words;       /* EV_STR: NULL-terminated set of allowed values */
	const struct ev_format *format; /* EV_STR */
	const char *expect;             /* EV_STR with words, EV_ARR: what is expected */
	const struct ev_obj *obj;       /* EV_OBJ */
	const struct ev_field *item;    /* EV_ARR */
};

struct ev_obj {
	const char *noun; /* "unknown key 'x' (expected only the keys of <noun>)" */
	const struct ev_field *fields;
	size_t n_fields;
	/* Rules across fields, run once every field is valid; NULL when there are none. */
	int (*check)(struct ev_ctx *c, const char *path, const cJSON *o);
};

#define OBJ(noun_, fields_, check_) \
	{ .noun = noun_, .fields = fields_, .n_fields = ELEMENTSOF(fields_), .check = check_ }

#define F_INT(k, lo, hi) { .key = k, .kind = EV_INT, .min = lo, .max = hi }
#define F_INT_OR_NULL(k, lo, hi) { .key = k, .kind = EV_INT, .flags = EV_NULLABLE, .min = lo, .max = hi }
/* Keys that records written before they existed lack (docs/eval.md says which). */
#define F_INT_OPT_OR_NULL(k, lo, hi) \
	{ .key = k, .kind = EV_INT, .flags = EV_NULLABLE | EV_OPTIONAL, .min = lo, .max = hi }
#define F_NUM(k, lo, hi, fl) { .key = k, .kind = EV_NUM, .flags = fl, .min = lo, .max = hi }
#define F_BOOL(k) { .key = k, .kind = EV_BOOL }
#define F_TEXT(k, lo, hi, fl) { .key = k, .kind = EV_STR, .flags = fl, .min_len = lo, .max_len = hi }
#define F_FMT(k, hi, fmt, fl) \
	{ .key = k, .kind = EV_STR, .flags = fl, .min_len = 1, .max_len = hi, .format = &fmt }
#define F_WORD(k, set, what) \
	{ .key = k, .kind = EV_STR, .min_len = 1, .max_len = MAX_SHORT, .words = set, .expect = what }
#define F_OBJ(k, o, fl) { .key = k, .kind = EV_OBJ, .flags = fl, .obj = &o }
#define F_ARR(k, lo, hi, it, fl, what) \
	{ .key = k, .kind = EV_ARR, .flags = fl, .min = lo, .max = hi, .item = &it, .expect = what }

static const char *const step_status_words[] = { "ok", "failed", "timeout", "error", NULL };
static const char *const agent_status_words[] = { "ok", "timeout", "error", "skipped", NULL };
static const char *const steps_status_words[] = { "ok", "failed", "skipped", NULL };
static const char *const grade_status_words[] = { "ok", "error", "skipped", NULL };
static const char *const by_words[] = { "eval", "grade", NULL };
static const char *const reason_words[] = { "exited", "signaled", "wall-timeout", "cpu-limit",
					   "oom", "pids-limit", "output-cap", "setup-failed",
					   "attestation-failed", "protocol-violation",
					   "internal-error", NULL };
static const char *const check_words[] = { "file_exists", "file_absent", "file_contains",
					   "file_matches", "json_equals", "command", NULL };
static const char *const status_words[] = { "SETUP_FAILED", "ERROR", "TIMEOUT", "NOT_GRADED",
					    "INTERRUPTED", "SUCCESS", "FAILURE", NULL };
static const char *const stamp_words[] = { "graded_without_setup", "regraded",
					   "agent_output_truncated", "teardown_failed",
					   "reference_missing", "no_cgroup", NULL };
static const char *const weakening_words[] = { "no-cgroup", "io_uring", "bind-host-root",
					       "bind-container-socket", "bind-kernel-fs", "workspace-anywhere",
					       "share-net", "share-uts", "share-ipc", "share-cgroup",
					       "keep-capabilities", NULL };
static const char *const mode_words[] = { "privileged", "unprivileged", NULL };
static const char *const kind_words[] = { "warden-eval-run", NULL };
static const char *const stdout_words[] = { "agent.stdout", NULL };
static const char *const stderr_words[] = { "agent.stderr", NULL };
static const char *const log_words[] = { "grade.log", NULL };

static const cJSON *get(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

static bool is_word(const cJSON *v, const char *word)
{
	return cJSON_IsString(v) && v->valuestring && streq(v->valuestring, word);
}

static bool has_word(const cJSON *arr, const char *word)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
		if (is_word(it, word))
			return true;
	return false;
}

/* --- cross-field rules --------------------------------------------------------------------- */

/*
 * The status a STEP (or the agent) must have for its reason: a sandbox that failed (it never
 * ran the command as asked, or broke the protocol) is "error"; the wall-clock limit is
 * "timeout"; otherwise a step is "ok" exactly when it exited with 0 and "failed" when it
 * exited otherwise or was ended by a signal or a limit, and the agent, whose exit code is not
 * a verdict, is "ok" whenever it ended by itself or by such a limit.
 */
static const char *status_for(const char *reason, double exit_code, bool agent)
{
	if (streq(reason, "setup-failed") || streq(reason, "attestation-failed") ||
	    streq(reason, "protocol-violation") || streq(reason, "internal-error"))
		return "error";
	if (streq(reason, "wall-timeout"))
		return "timeout";
	if (agent)
		return "ok";
	return streq(reason, "exited") && exit_code == 0 ? "ok" : "failed";
}

/* exit_code, signal, reason and status of a STEP or of the agent agree. */
static int step_rules(struct ev_ctx *c, const char *path, const cJSON *o, bool agent)
{
	const char *status = get(o, "status")->valuestring, *reason = get(o, "reason")->valuestring;
	const cJSON *code = get(o, "exit_code"), *sig = get(o, "signal");

	if (streq(reason, "exited") && cJSON_IsNull(code))
		return bad(c, "%s.exit_code: null with reason exited (expected the exit code)", path);
	if (streq(reason, "signaled") && cJSON_IsNull(sig))
		return bad(c, "%s.signal: null with reason signaled (expected the signal)", path);
	const char *want = status_for(reason, cJSON_IsNull(code) ? -1 : code->valuedouble, agent);
	if (!streq(status, want))
		return bad(c, "%s.status: '%s' does not fit reason %s%s (expected %s)", path, status,
			   reason,
			   agent || !streq(reason, "exited") ? ""
			   : code->valuedouble == 0 ? " with exit code 0" : " with a non-zero exit code",
			   want);
	return 0;
}

static int step_check(struct ev_ctx *c, const char *path, const cJSON *o)
{
	return step_rules(c, show(path), o, false);
}

static int agent_check(struct ev_ctx *c, const char *path, const cJSON *o)
{
	return step_rules(c, show(path), o, true);
}

static int stream_check(struct ev_ctx *c, const char *path, const cJSON *o)
{
	double bytes = get(o, "bytes")->valuedouble, kept = get(o, "kept")->valuedouble;
	bool truncated = cJSON_IsTrue(get(o, "truncated"));
	struct ev_num a, b;

	if (kept > bytes)
		return bad(c, "%s.kept: %s is more than bytes %s (expected at most bytes)", path,
			   show_num(&a, kept), show_num(&b, bytes));
	if (truncated != (kept < bytes))
		return bad(c, "%s.truncated: %s with kept %s of %s bytes (expected kept < bytes)",
			   path, truncated ? "true" : "false", show_num(&a, kept),
			   show_num(&b, bytes));
	return 0;
}

/* Setup and teardown: "skipped" exactly when no step ran; "failed" only when a step did not pass. */
static int steps_rules(struct ev_ctx *c, const char *path, const cJSON *o, bool teardown)
{
	const cJSON *status = get(o, "status"), *steps = get(o, "steps"), *it;
	bool any_bad = false;
	cJSON_ArrayForEach(it, steps)
		any_bad = any_bad || !is_word(get(it, "status"), "ok");

	if (is_word(status, "skipped") != (steps->child == NULL))
		return bad(c, "%s.status: '%s' with %s steps (expected skipped exactly when no step ran)",
			   path, status->valuestring, steps->child ? "some" : "no");
	if (is_word(status, "failed") && !any_bad)
		return bad(c, "%s.status: failed while every step is ok (expected a failed step)", path);
	if (teardown && is_word(status, "ok") && any_bad)
		return bad(c, "%s.status: ok with a step that is not ok (expected failed)", path);
	return 0;
}

static int setup_check(struct ev_ctx *c, const char *path, const cJSON *o)
{
	return steps_rules(c, path, o, false);
}

static int teardown_check(struct ev_ctx *c, const char *path, const cJSON *o)
{
	return steps_rules(c, path, o, true);
}

static int grade_check(struct ev_ctx *c, const char *path, const cJSON *o)
{
	bool skipped = is_word(get(o, "status"), "skipped");
	if (skipped != cJSON_IsNull(get(o, "started_at")))
		return bad(c, "%s.started_at: %s with status %s (expected null exactly when skipped)",
			   path, skipped ? "a time" : "null", get(o, "status")->valuestring);
	return 0;
}

static int criterion_check(struct ev_ctx *c, const char *path, const cJSON *o)
{
	bool evaluated = cJSON_IsTrue(get(o, "evaluated")), passed = cJSON_IsTrue(get(o, "passed"));
	const cJSON *score = get(o, "score");
	struct ev_num a, b;

	if (evaluated == cJSON_IsNull(score))
		return bad(c, "%s.score: %s with evaluated %s (expected null exactly when not evaluated)",
			   path, evaluated ? "null" : "a number", evaluated ? "true" : "false");
	if (!evaluated && passed)
		return bad(c, "%s.passed: true while not evaluated (expected false)", path);
	double threshold = get(o, "pass_threshold")->valuedouble;
	if (evaluated && passed != (score->valuedouble >= threshold))
		return bad(c, "%s.passed: %s with score %s and pass_threshold %s (expected score >= pass_threshold)",
			   path, passed ? "true" : "false", show_num(&a, score->valuedouble),
			   show_num(&b, threshold));
	if (!cJSON_IsNull(get(o, "run")) && !is_word(get(o, "check"), "command"))
		return bad(c, "%s.run: a step for a %s check (expected null unless the check is command)",
			   path, get(o, "check")->valuestring);
	return 0;
}

static int namespace_check(struct ev_ctx *c, const char *path, const cJSON *o)
{
	bool separate = cJSON_IsTrue(get(o, "separate"));
	if (separate != (get(o, "supervisor")->valuedouble != get(o, "sandbox")->valuedouble))
		return bad(c, "%s.separate: %s (expected true exactly when supervisor and sandbox differ)",
			   path, separate ? "true" : "false");
	return 0;
}

static int identity_check(struct ev_ctx *c, const char *path, const cJSON *o)
{
	/* The writer records an identity only once every check ran (else null). */
	if (!cJSON_IsTrue(get(o, "checked")))
		return bad(c, "%s.checked: false (expected true; an identity that was not checked is null)",
			   path);
	bool held = cJSON_IsTrue(get(o, "held")), failure = get(o, "failure") != NULL;
	if (held == failure)
		return bad(c, "%s.failure: %s with held %s (expected a failure exactly when it did not hold)",
			   path, failure ? "present" : "missing", held ? "true" : "false");
	return 0;
}

/* run_id is "<task.id>-YYYYMMDDTHHMMSSZ-<8 lowercase hex>", the run folder's name. */
static int run_id_rule(struct ev_ctx *c, const cJSON *o)
{
	const char *run_id = get(o, "run_id")->valuestring;
	const char *task_id = get(get(o, "task"), "id")->valuestring;
	size_t n = strlen(task_id), len = strlen(run_id);
	struct ev_q q;
	bool ok = len == n + 1 + STAMP_LEN + 1 + RANDOM_LEN && memcmp(run_id, task_id, n) == 0 &&
		  run_id[n] == '-' && stamp_ok(run_id + n + 1, STAMP_LEN) &&
		  run_id[n + 1 + STAMP_LEN] == '-';
	for (size_t i = len - RANDOM_LEN; ok && i < len; i++)
		ok = is_lower_hex(run_id[i]);
	if (!ok)
		return bad(c, "run_id: '%s' is not the run folder of task '%s' (expected %s-YYYYMMDDTHHMMSSZ-<8 lowercase hex digits>)",
			   quote(&q, run_id), task_id, task_id);
	return 0;
}

/* A stamp is present exactly when (or, for one_way, only when) the record shows its cause. */
static int stamp_rule(struct ev_ctx *c, const cJSON *stamps, const char *stamp, bool cause,
		      bool one_way, const char *why)
{
	bool has = has_word(stamps, stamp);
	if (has && !cause)
		return bad(c, "stamps: %s without its cause (expected it only when %s)", stamp, why);
	if (!has && cause && !one_way)
		return bad(c, "stamps: %s is missing (expected it when %s)", stamp, why);
	return 0;
}

static int record_check(struct ev_ctx *c, const char *path, const cJSON *o)
{
	(void)path;
	const cJSON *phases = get(o, "phases"), *agent = get(phases, "agent");
	const cJSON *grade = get(phases, "grade"), *stamps = get(o, "stamps");
	const cJSON *status = get(o, "status"), *score = get(o, "score"), *it;
	const char *grade_status = get(grade, "status")->valuestring;
	int r;

	r = run_id_rule(c, o);
	if (r < 0)
		return r;

	bool truncated = !cJSON_IsNull(agent) && (cJSON_IsTrue(get(get(agent, "stdout"), "truncated")) ||
						  cJSON_IsTrue(get(get(agent, "stderr"), "truncated")));
	bool regraded = is_word(get(grade, "by"), "grade");
	if ((r = stamp_rule(c, stamps, "agent_output_truncated", truncated, false,
			    "phases.agent.stdout or .stderr is truncated")) < 0 ||
	    (r = stamp_rule(c, stamps, "regraded", regraded, false, "phases.grade.by is grade")) < 0 ||
	    (r = stamp_rule(c, stamps, "graded_without_setup", regraded, true,
			    "the run was regraded")) < 0 ||
	    (r = stamp_rule(c, stamps, "teardown_failed",
			    is_word(get(get(phases, "teardown"), "status"), "failed"), false,
			    "phases.teardown.status is failed")) < 0)
		return r;

	if (cJSON_IsNull(agent)) {
		if (!cJSON_IsNull(get(o, "identity")))
			return bad(c, "identity: present while phases.agent is null (expected null: an agent that never started never attested)");
		if (!is_word(get(get(phases, "reap"), "status"), "skipped"))
			return bad(c, "phases.reap.status: '%s' while phases.agent is null (expected skipped)",
				   get(get(phases, "reap"), "status")->valuestring);
	}

	/* Grading: skipped means no criterion evaluated and no score; ok means all of them and a score. */
	bool skipped = streq(grade_status, "skipped"), graded_ok = streq(grade_status, "ok");
	size_t i = 0;
	cJSON_ArrayForEach(it, get(o, "criteria")) {
		bool evaluated = cJSON_IsTrue(get(it, "evaluated"));
		if ((skipped && evaluated) || (graded_ok && !evaluated))
			return bad(c, "criteria[%zu].evaluated: %s with phases.grade.status %s (expected %s)",
				   i, evaluated ? "true" : "false", grade_status,
				   evaluated ? "false" : "true");
		i++;
	}
	if ((skipped && !cJSON_IsNull(score)) || (graded_ok && cJSON_IsNull(score)))
		return bad(c, "score: %s with phases.grade.status %s (expected %s)",
			   cJSON_IsNull(score) ? "null" : "a number", grade_status,
			   skipped ? "null" : "a number");
	double grades = get(o, "grades")->valuedouble;
	if (!skipped && grades < 1)
		return bad(c, "grades: 0 with phases.grade.status %s (expected at least 1)", grade_status);

	const char *st = status->valuestring;
	if (streq(st, "NOT_GRADED") && (!skipped || grades != 0))
		return bad(c, "status: NOT_GRADED with phases.grade.status %s and %s grades (expected skipped and 0)",
			   grade_status, grades != 0 ? "some" : "no");
	if (streq(st, "SETUP_FAILED") &&
	    (!is_word(get(get(phases, "setup"), "status"), "failed") || !cJSON_IsNull(agent)))
		return bad(c, "status: SETUP_FAILED without a failed setup (expected phases.setup.status failed and phases.agent null)");
	if (streq(st, "TIMEOUT") && (cJSON_IsNull(agent) || !is_word(get(agent, "status"), "timeout")))
		return bad(c, "status: TIMEOUT while the agent did not time out (expected phases.agent.status timeout)");
	if (streq(st, "SUCCESS") || streq(st, "FAILURE")) {
		if (!graded_ok)
			return bad(c, "status: %s with phases.grade.status %s (expected ok)", st,
				   grade_status);
		bool all = true;
		cJSON_ArrayForEach(it, get(o, "criteria"))
			if (get(it, "weight")->valuedouble > 0 && !cJSON_IsTrue(get(it, "passed")))
				all = false;
		if (all != streq(st, "SUCCESS"))
			return bad(c, "status: %s while %s (expected %s)", st,
				   all ? "every weighted criterion passed" : "a weighted criterion failed",
				   all ? "SUCCESS" : "FAILURE");
	}
	return 0;
}

/* --- the tables ---------------------------------------------------------------------------- */

#define STEP_FIELDS(status_set)                                                     \
	F_WORD("status", status_set, "a step status"),                               \
	F_WORD("reason", reason_words, "a reason"),                                  \
	F_INT_OR_NULL("exit_code", 0, 255),                                          \
	F_INT_OR_NULL("signal", 1, 64),                                              \
	F_TEXT("detail", 1, MAX_STEP_DETAIL, EV_NULLABLE),                           \
	F_FMT("started_at", 20, fmt_time, 0),                                        \
	F_INT("duration_ms", 0, EVREC_MAX_INT),                                      \
	F_INT_OR_NULL("peak_memory_bytes", 0, EVREC_MAX_INT),                        \
	F_INT_OR_NULL("cpu_usec", 0, EVREC_MAX_INT),                                 \
	F_INT_OPT_OR_NULL("oom_kills", 0, EVREC_MAX_INT),                            \
	F_INT_OPT_OR_NULL("pids_limit_hits", 0, EVREC_MAX_INT)

static const struct ev_field step_fields[] = { STEP_FIELDS(step_status_words) };
static const struct ev_obj step_obj = OBJ("a STEP", step_fields, step_check);
static const struct ev_field step_item = { .kind = EV_OBJ, .obj = &step_obj };

#define STREAM_FIELDS(file_set, file_name)                                          \
	F_WORD("file", file_set, file_name),                                         \
	F_INT("bytes", 0, EVREC_MAX_INT),                                            \
	F_INT("kept", 0, EVREC_MAX_INT),                                             \
	F_BOOL("truncated")

static const struct ev_field stdout_fields[] = { STREAM_FIELDS(stdout_words, "agent.stdout") };
static const struct ev_field stderr_fields[] = { STREAM_FIELDS(stderr_words, "agent.stderr") };
static const struct ev_obj stdout_obj = OBJ("a STREAM", stdout_fields, stream_check);
static const struct ev_obj stderr_obj = OBJ("a STREAM", stderr_fields, stream_check);

static const struct ev_field agent_fields[] = {
	STEP_FIELDS(agent_status_words),
	F_OBJ("stdout", stdout_obj, 0),
	F_OBJ("stderr", stderr_obj, 0),
};
static const struct ev_obj agent_obj = OBJ("phases.agent", agent_fields, agent_check);

static const struct ev_field steps_phase_fields[] = {
	F_WORD("status", steps_status_words, "a phase status"),
	F_INT("duration_ms", 0, EVREC_MAX_INT),
	F_ARR("steps", 0, TASK_MAX_STEPS, step_item, 0, "0..32 STEP objects"),
};
static const struct ev_obj setup_obj = OBJ("phases.setup", steps_phase_fields, setup_check);
static const struct ev_obj teardown_obj = OBJ("phases.teardown", steps_phase_fields, teardown_check);

static const struct ev_field reap_fields[] = {
	F_WORD("status", steps_status_words, "a phase status"),
	F_BOOL("cgroup_emptied"),
	F_INT("duration_ms", 0, EVREC_MAX_INT),
};
static const struct ev_obj reap_obj = OBJ("phases.reap", reap_fields, NULL);

static const struct ev_field grade_fields[] = {
	F_WORD("status", grade_status_words, "a grade status"),
	F_WORD("by", by_words, "eval or grade"),
	F_FMT("started_at", 20, fmt_time, EV_NULLABLE),
	F_INT("duration_ms", 0, EVREC_MAX_INT),
	F_WORD("log", log_words, "grade.log"),
};
static const struct ev_obj grade_obj = OBJ("phases.grade", grade_fields, grade_check);

static const struct ev_field phases_fields[] = {
	F_OBJ("setup", setup_obj, 0),
	F_OBJ("agent", agent_obj, EV_NULLABLE),
	F_OBJ("reap", reap_obj, 0),
	F_OBJ("grade", grade_obj, 0),
	F_OBJ("teardown", teardown_obj, 0),
};
static const struct ev_obj phases_obj = OBJ("phases", phases_fields, NULL);

static const struct ev_field criterion_fields[] = {
	F_TEXT("description", 1, MAX_TEXT, 0),
	F_WORD("check", check_words, "a check name"),
	F_NUM("weight", 0, MAX_WEIGHT, EV_MILLI),
	F_NUM("pass_threshold", 0, 1, EV_MILLI),
	F_BOOL("evaluated"),
	F_NUM("score", 0, 1, EV_NULLABLE),
	F_BOOL("passed"),
	F_TEXT("details", 0, MAX_DETAILS, 0),
	F_OBJ("run", step_obj, EV_NULLABLE),
};
static const struct ev_obj criterion_obj = OBJ("a criterion", criterion_fields, criterion_check);
static const struct ev_field criterion_item = { .kind = EV_OBJ, .obj = &criterion_obj };

static const struct ev_field task_fields[] = {
	F_FMT("id", TASK_MAX_ID, fmt_task_id, 0),
	F_FMT("source", MAX_SOURCE, fmt_abs_path, 0),
	F_FMT("digest", 71, fmt_digest, 0),
};
static const struct ev_obj task_obj = OBJ("task", task_fields, NULL);

static const struct ev_field weakening_item = {
	.kind = EV_STR, .min_len = 1, .max_len = MAX_SHORT, .words = weakening_words,
	.expect = "a weakening",
};
static const struct ev_field policy_fields[] = {
	F_FMT("digest", 71, fmt_digest, 0),
	F_ARR("weakenings", 0, MAX_WORDS, weakening_item, EV_UNIQUE, "at most 16 distinct weakenings"),
};
static const struct ev_obj policy_obj = OBJ("policy", policy_fields, NULL);

static const struct ev_field host_fields[] = {
	F_FMT("kernel", MAX_SHORT, fmt_token, 0),
	F_WORD("mode", mode_words, "a host mode"),
	F_INT("cgroup_version", 0, 2),
};
static const struct ev_obj host_obj = OBJ("host", host_fields, NULL);

static const struct ev_field namespace_fields[] = {
	F_INT("supervisor", 1, EVREC_MAX_INT),
	F_INT("sandbox", 1, EVREC_MAX_INT),
	F_BOOL("separate"),
};
static const struct ev_obj namespace_obj = OBJ("a namespace", namespace_fields, namespace_check);

static const struct ev_field namespaces_fields[] = {
	F_OBJ("user", namespace_obj, 0), F_OBJ("pid", namespace_obj, 0),
	F_OBJ("mnt", namespace_obj, 0),  F_OBJ("net", namespace_obj, 0),
	F_OBJ("uts", namespace_obj, 0),  F_OBJ("ipc", namespace_obj, 0),
	F_OBJ("cgroup", namespace_obj, 0),
};
static const struct ev_obj namespaces_obj = OBJ("identity.namespaces", namespaces_fields, NULL);

static const struct ev_field identity_fields[] = {
	F_BOOL("checked"),
	F_BOOL("held"),
	F_TEXT("failure", 1, MAX_FAILURE, EV_OPTIONAL),
	F_INT("uid", 0, MAX_U32),
	F_INT("gid", 0, MAX_U32),
	F_FMT("CapInh", 16, fmt_cap_hex, 0),
	F_FMT("CapPrm", 16, fmt_cap_hex, 0),
	F_FMT("CapEff", 16, fmt_cap_hex, 0),
	F_FMT("CapBnd", 16, fmt_cap_hex, 0),
	F_FMT("CapAmb", 16, fmt_cap_hex, 0),
	F_INT("NoNewPrivs", 0, 1),
	F_INT("Seccomp", 0, 2),
	F_INT("Seccomp_filters", 0, MAX_U32),
	F_INT("nspid_depth", 1, 64),
	F_OBJ("namespaces", namespaces_obj, 0),
};
static const struct ev_obj identity_obj = OBJ("identity", identity_fields, identity_check);

static const struct ev_field stamp_item = {
	.kind = EV_STR, .min_len = 1, .max_len = MAX_SHORT, .words = stamp_words, .expect = "a stamp",
};

static const struct ev_field record_fields[] = {
	F_INT("schema_version", EVREC_SCHEMA_VERSION, EVREC_SCHEMA_VERSION),
	F_WORD("kind", kind_words, "warden-eval-run"),
	F_FMT("warden_version", MAX_SHORT, fmt_token, 0),
	F_FMT("run_id", MAX_RUN_ID, fmt_run_id, 0),
	F_OBJ("task", task_obj, 0),
	F_OBJ("policy", policy_obj, 0),
	F_FMT("created_at", 20, fmt_time, 0),
	F_FMT("updated_at", 20, fmt_time, 0),
	F_OBJ("host", host_obj, 0),
	F_OBJ("phases", phases_obj, 0),
	F_ARR("criteria", 1, TASK_MAX_CRITERIA, criterion_item, 0, "1..64 criteria"),
	F_NUM("score", 0, 1, EV_NULLABLE),
	F_WORD("status", status_words, "a run status"),
	F_ARR("stamps", 0, MAX_WORDS, stamp_item, EV_UNIQUE, "at most 16 distinct stamps"),
	F_INT("grades", 0, MAX_GRADES),
	F_OBJ("identity", identity_obj, EV_NULLABLE),
};
static const struct ev_obj record_obj = OBJ("the record", record_fields, record_check);
static const struct ev_field record_root = { .kind = EV_OBJ, .obj = &record_obj };

/* --- the walker ---------------------------------------------------------------------------- */

static const char *json_type(const cJSON *v)
{
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsArray(v))
		return "an array";
	if (cJSON_IsObject(v))
		return "an object";
	return "an unknown value";
}

struct ev_text {
	char s[256];
};

/* What a field expects, for "(expected ...)". */
static const char *describe(struct ev_text *t, const struct ev_field *f)
{
	struct ev_num a, b;
	const char *or_null = (f->flags & EV_NULLABLE) ? " or null" : "";

	switch (f->kind) {
	case EV_INT:
		if (f->min == f->max)
			(void)snprintf(t->s, sizeof(t->s), "%s%s", show_num(&a, f->min), or_null);
		else
			(void)snprintf(t->s, sizeof(t->s), "%s..%s%s", show_num(&a, f->min),
				       show_num(&b, f->max), or_null);
		break;
	case EV_NUM:
		(void)snprintf(t->s, sizeof(t->s), "a number %s..%s%s%s", show_num(&a, f->min),
			       show_num(&b, f->max), (f->flags & EV_MILLI) ? " with at most 3 decimals" : "",
			       or_null);
		break;
	case EV_BOOL:
		(void)snprintf(t->s, sizeof(t->s), "true or false");
		break;
	case EV_STR:
		if (f->format)
			(void)snprintf(t->s, sizeof(t->s), "%s%s", f->format->expect, or_null);
		else if (f->expect)
			(void)snprintf(t->s, sizeof(t->s), "%s%s", f->expect, or_null);
		else
			(void)snprintf(t->s, sizeof(t->s), "a string of %zu..%zu bytes%s", f->min_len,
				       f->max_len, or_null);
		break;
	case EV_OBJ:
		(void)snprintf(t->s, sizeof(t->s), "%s%s", f->obj->noun, or_null);
		break;
	case EV_ARR:
		(void)snprintf(t->s, sizeof(t->s), "an array of %s%s", f->expect, or_null);
		break;
	}
	return t->s;
}

static const char *kind_noun(enum ev_kind k)
{
	switch (k) {
	case EV_INT:
		return "an integer";
	case EV_NUM:
		return "a number";
	case EV_BOOL:
		return "a boolean";
	case EV_STR:
		return "a string";
	case EV_OBJ:
		return "an object";
	case EV_ARR:
		return "an array";
	}
	return "a value";
}

static bool kind_matches(enum ev_kind k, const cJSON *v)
{
	switch (k) {
	case EV_INT:
	case EV_NUM:
		return cJSON_IsNumber(v);
	case EV_BOOL:
		return cJSON_IsBool(v);
	case EV_STR:
		return cJSON_IsString(v) && v->valuestring;
	case EV_OBJ:
		return cJSON_IsObject(v);
	case EV_ARR:
		return cJSON_IsArray(v);
	}
	return false;
}

static int check_value(struct ev_ctx *c, const char *path, const struct ev_field *f,
		       const cJSON *v);

static int check_number(struct ev_ctx *c, const char *path, const struct ev_field *f,
			const cJSON *v)
{
	struct ev_num a;
	struct ev_text t;
	double d = v->valuedouble;

	/* Beyond ±2^63 every double is a whole number; -0 is written by no writer. */
	bool integral = !(d > -9.2e18 && d < 9.2e18) || d == (double)(int64_t)d;
	if (f->kind == EV_INT && !integral)
		return bad(c, "%s: %s is not an integer (expected %s)", show(path), show_num(&a, d),
			   describe(&t, f));
	if (!(d >= f->min && d <= f->max) || (d == 0 && signbit(d)))
		return bad(c, "%s: %s is out of range (expected %s)", show(path), show_num(&a, d),
			   describe(&t, f));
	if (f->flags & EV_MILLI) {
		/* As the task wrote it: a whole number of thousandths, printed exactly. */
		double milli = (double)(int64_t)(d * 1000.0 + 0.5);
		if (milli / 1000.0 != d)
			return bad(c, "%s: %s has more than 3 decimals (expected %s)", show(path),
				   show_num(&a, d), describe(&t, f));
	}
	return 0;
}

static int check_string(struct ev_ctx *c, const char *path, const struct ev_field *f,
			const cJSON *v)
{
	struct ev_q q;
	struct ev_text t;
	const char *s = v->valuestring;
	size_t len = strlen(s); /* pass 1 refused NUL and \u0000: this is the whole string */

	/* A short formatted value that is too long is reported as not of its format. */
	bool short_format = f->format && f->max_len <= SHORT_FORMAT_MAX;
	if (len > f->max_len && !short_format)
		return bad(c, "%s: a string of %zu bytes is too long (expected at most %zu bytes)",
			   show(path), len, f->max_len);
	if (len < f->min_len)
		return bad(c, "%s: an empty string is not allowed (expected %s)", show(path),
			   describe(&t, f));
	if (f->words) {
		for (size_t i = 0; f->words[i]; i++)
			if (streq(s, f->words[i]))
				return 0;
		char list[256];
		size_t o = 0;
		list[0] = '\0';
		for (size_t i = 0; f->words[i] && o < sizeof(list); i++) {
			int n = snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", f->words[i]);
			if (n < 0)
				break;
			o += (size_t)n;
		}
		return bad(c, "%s: '%s' is not one of %s (expected %s)", show(path), quote(&q, s), list,
			   f->expect);
	}
	if (f->format && (len > f->max_len || !f->format->ok(s, len)))
		return bad(c, "%s: '%s' is not %s (expected %s)", show(path), quote(&q, s),
			   f->format->noun, f->format->expect);
	return 0;
}

static int check_array(struct ev_ctx *c, const char *path, const struct ev_field *f,
		       const cJSON *v)
{
	struct ev_path p;
	struct ev_q q;
	struct ev_text t;
	size_t n = 0;
	const cJSON *it;

	cJSON_ArrayForEach(it, v) {
		if ((double)n >= f->max)
			return bad(c, "%s: more than %zu entries (expected %s)", show(path),
				   (size_t)f->max, describe(&t, f));
		n++;
	}
	if ((double)n < f->min)
		return bad(c, "%s: %zu entries are too few (expected %s)", show(path), n,
			   describe(&t, f));
	n = 0;
	cJSON_ArrayForEach(it, v) {
		const char *ip = path_index(&p, path, n);
		int r = check_value(c, ip, f->item, it);
		if (r < 0)
			return r;
		if (f->flags & EV_UNIQUE) {
			for (const cJSON *prev = v->child; prev != it; prev = prev->next)
				if (streq(prev->valuestring, it->valuestring))
					return bad(c, "%s: '%s' appears twice (expected each value at most once)",
						   ip, quote(&q, it->valuestring));
		}
		n++;
	}
	return 0;
}

static int check_object(struct ev_ctx *c, const char *path, const struct ev_obj *o,
			const cJSON *v)
{
	struct ev_path p;
	struct ev_q q;
	struct ev_text t;
	uint64_t seen = 0;

	_Static_assert(sizeof(seen) * 8 >= ELEMENTSOF(record_fields), "too many keys for the mask");
	for (const cJSON *k = v->child; k; k = k->next) {
		size_t i = 0;
		while (i < o->n_fields && !(k->string && streq(k->string, o->fields[i].key)))
			i++;
		if (i == o->n_fields)
			return bad(c, "%s: unknown key '%s' (expected only the keys of %s)", show(path),
				   quote(&q, k->string ? k->string : ""), o->noun);
		if (seen & (UINT64_C(1) << i))
			return bad(c, "%s: duplicate key (expected each key once)",
				   path_key(&p, path, o->fields[i].key));
		seen |= UINT64_C(1) << i;
	}
	for (size_t i = 0; i < o->n_fields; i++) {
		const struct ev_field *f = &o->fields[i];
		if (!(seen & (UINT64_C(1) << i)) && !(f->flags & EV_OPTIONAL))
			return bad(c, "%s: missing (expected %s)", path_key(&p, path, f->key),
				   describe(&t, f));
	}
	for (size_t i = 0; i < o->n_fields; i++) {
		const cJSON *item = get(v, o->fields[i].key);
		if (!item)
			continue;
		int r = check_value(c, path_key(&p, path, o->fields[i].key), &o->fields[i], item);
		if (r < 0)
			return r;
	}
	return o->check ? o->check(c, path, v) : 0;
}

static int check_value(struct ev_ctx *c, const char *path, const struct ev_field *f,
		       const cJSON *v)
{
	struct ev_text t;

	if (cJSON_IsNull(v)) {
		if (f->flags & EV_NULLABLE)
			return 0;
		return bad(c, "%s: null is not allowed (expected %s)", show(path), describe(&t, f));
	}
	if (!kind_matches(f->kind, v))
		return bad(c, "%s: %s is not %s (expected %s)", show(path), json_type(v),
			   kind_noun(f->kind), describe(&t, f));
	switch (f->kind) {
	case EV_INT:
	case EV_NUM:
		return check_number(c, path, f, v);
	case EV_BOOL:
		return 0;
	case EV_STR:
		return check_string(c, path, f, v);
	case EV_OBJ:
		return check_object(c, path, f->obj, v);
	case EV_ARR:
		return check_array(c, path, f, v);
	}
	return bad(c, "%s: unexpected schema entry", show(path));
}

/* ------------------------------------------------------------------------------------------ */
/* The API                                                                                    */

char *pol_evrec_agent_canon(const cJSON *json)
{
	const cJSON *phases = cJSON_IsObject(json) ? get(json, "phases") : NULL;
	const cJSON *parts[4] = {
		cJSON_IsObject(phases) ? get(phases, "setup") : NULL,
		cJSON_IsObject(phases) ? get(phases, "agent") : NULL,
		cJSON_IsObject(phases) ? get(phases, "reap") : NULL,
		cJSON_IsObject(json) ? get(json, "identity") : NULL,
	};
	_cleanup_(cJSON_Deletep) cJSON *arr = cJSON_CreateArray();
	if (!arr)
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
		if (!parts[i])
			return NULL;
		cJSON *dup = cJSON_Duplicate(parts[i], true);
		if (!dup)
			return NULL;
		if (!cJSON_AddItemToArray(arr, dup)) {
			cJSON_Delete(dup);
			return NULL;
		}
	}
	return cJSON_PrintUnformatted(arr);
}

struct pol_evrec *pol_evrec_free(struct pol_evrec *r)
{
	if (!r)
		return NULL;
	cJSON_Delete(r->json);
	free(r->agent_canon);
	free(r);
	return NULL;
}

int pol_evrec_parse(const void *buf, size_t len, struct pol_evrec **out, char *why, size_t why_len)
{
	struct ev_ctx c = { .why = why, .why_len = why_len };

	if (!out || (!buf && len > 0))
		return bad(&c, "record: no input (expected JSON text)");
	if (len > EVREC_MAX_INPUT_BYTES) {
		(void)bad(&c, "record: %zu bytes is too large (expected at most %u bytes)", len,
			  EVREC_MAX_INPUT_BYTES);
		return -E2BIG;
	}
	_cleanup_(cJSON_Deletep) cJSON *json = NULL;
	int r = read_json(&c, buf ? buf : "", len, &json);
	if (r < 0)
		return r;

	/* The version decides what every other key means, so it is judged first. */
	const cJSON *version = cJSON_IsObject(json) ? get(json, "schema_version") : NULL;
	if (version && cJSON_IsNumber(version) && version->valuedouble != EVREC_SCHEMA_VERSION) {
		struct ev_num a;
		return bad(&c, "schema_version: %s is not supported (expected %d)",
			   show_num(&a, version->valuedouble), EVREC_SCHEMA_VERSION);
	}
	r = check_value(&c, "", &record_root, json);
	if (r < 0)
		return r;

	_cleanup_free_ char *canon = pol_evrec_agent_canon(json);
	struct pol_evrec *rec = canon ? calloc(1, sizeof(*rec)) : NULL;
	if (!rec) {
		(void)bad(&c, "record: out of memory");
		return -ENOMEM;
	}
	rec->agent_canon = TAKE_PTR(canon);
	const cJSON *task = get(json, "task");
	rec->run_id = get(json, "run_id")->valuestring;
	rec->task_id = get(task, "id")->valuestring;
	rec->task_source = get(task, "source")->valuestring;
	rec->task_digest = get(task, "digest")->valuestring;
	rec->policy_digest = get(get(json, "policy"), "digest")->valuestring;
	rec->status = get(json, "status")->valuestring;
	rec->grades = (uint64_t)get(json, "grades")->valuedouble;
	rec->json = TAKE_PTR(json);
	*out = rec;
	return 0;
}
