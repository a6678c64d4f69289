/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the supervisor's readers of what a confined child answers (eval/verdict.c):
 * the static criteria judge's RESULT frames and `warden grade`'s run folder summary. Each
 * gets a golden encoding, a truncation sweep and a bit-flip sweep, and one test per way a
 * hostile child could lie (a forged, replayed, reordered, oversized or garbled frame, a
 * verdict on another criterion, a score or a details line outside the layout, a summary
 * field outside its form), each asserting the specific error and that nothing was written.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cleanup.h"
#include "eval.h"
#include "verdict.h"
#include "wire.h"

#define N 3

static const size_t indexes[N] = { 0, 2, 5 };

struct fx {
	struct wire_mac *mac;
	uint8_t buf[N * EV_VERDICT_FRAME_MAX + 64];
	size_t len;
	size_t frame_len[N];
};

static struct wire_mac *mac_of(uint8_t fill)
{
	uint8_t key[WIRE_KEY_LEN];
	memset(key, fill, sizeof(key));
	return wire_mac_new(key);
}

static void result(struct sup_crit_result *r, bool error, uint32_t score, const char *details)
{
	memset(r, 0, sizeof(*r));
	r->evaluated = !error;
	r->error = error;
	r->score_milli = score;
	r->passed = score == 1000;
	(void)snprintf(r->details, sizeof(r->details), "%s", details);
}

/* Three verdicts: a pass, a fail, an error. */
static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || !(f->mac = mac_of(0x11)))
		return -1;
	struct sup_crit_result r[N];
	result(&r[0], false, 1000, "'a.txt': exists (a regular file)");
	result(&r[1], false, 0, "'b.json': not valid JSON (at byte 0: a missing value)");
	result(&r[2], true, 0, "'c': regex '(' does not compile: Unmatched ( or \\(");
	for (size_t i = 0; i < N; i++) {
		int n = ev_verdict_seal(f->mac, i, indexes[i], &r[i], f->buf + f->len,
					sizeof(f->buf) - f->len);
		if (n < 0)
			return -1;
		f->frame_len[i] = (size_t)n;
		f->len += (size_t)n;
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	wire_mac_free(f->mac);
	free(f);
	return 0;
}

/* Decodes buf; on failure checks that out was left alone and why names expect. */
static void expect_refused(struct wire_mac *mac, const uint8_t *buf, size_t len,
			   const size_t *idx, size_t n, const char *expect)
{
	struct ev_verdict out[N];
	char why[256] = "";
	memset(out, 0x5a, sizeof(out));
	assert_int_equal(ev_verdict_open_all(mac, buf, len, idx, n, out, why, sizeof(why)),
			 -EBADMSG);
	for (size_t i = 0; i < sizeof(out); i++)
		assert_int_equal(((const uint8_t *)out)[i], 0x5a);
	if (expect && !strstr(why, expect))
		fail_msg("expected a reason naming '%s', got '%s'", expect, why);
}

static void test_golden(void **state)
{
	struct fx *f = *state;
	/* Frame 0: the header (RESULT, seq 0), then str name, u32 score, str detail. */
	static const uint8_t head[] = { 1, 13, 0, 0 };
	assert_memory_equal(f->buf, head, sizeof(head));
	const uint8_t *p = f->buf + WIRE_HEADER_LEN;
	assert_memory_equal(p, "\0\0\0\x0b" "criteria[0]" "\0\0\x03\xe8", 4 + 11 + 4);
	assert_int_equal(f->frame_len[0], WIRE_HEADER_LEN + 4 + 11 + 4 + 4 +
						  strlen("'a.txt': exists (a regular file)") +
						  WIRE_MAC_LEN);
	/* Frame 2 is the error: its name says so. */
	const uint8_t *q = f->buf + f->frame_len[0] + f->frame_len[1] + WIRE_HEADER_LEN;
	assert_memory_equal(q, "\0\0\0\x11" "criteria[5] error" "\0\0\0\0", 4 + 17 + 4);

	struct ev_verdict out[N];
	char why[128] = "untouched";
	assert_int_equal(ev_verdict_open_all(f->mac, f->buf, f->len, indexes, N, out, why,
					     sizeof(why)), 0);
	assert_string_equal(why, "untouched");
	assert_false(out[0].error);
	assert_int_equal(out[0].score_milli, 1000);
	assert_string_equal(out[0].details, "'a.txt': exists (a regular file)");
	assert_false(out[1].error);
	assert_int_equal(out[1].score_milli, 0);
	assert_true(out[2].error);
	assert_int_equal(out[2].score_milli, 0);
	assert_string_equal(out[2].details, "'c': regex '(' does not compile: Unmatched ( or \\(");
}

static void test_truncated(void **state)
{
	struct fx *f = *state;
	for (size_t cut = 0; cut < f->len; cut++)
		expect_refused(f->mac, f->buf, cut, indexes, N, NULL);
}

static void test_bit_flips(void **state)
{
	struct fx *f = *state;
	uint8_t copy[sizeof(f->buf)];
	for (size_t i = 0; i < f->len * 8; i++) {
		memcpy(copy, f->buf, f->len);
		copy[i / 8] ^= (uint8_t)(1u << (i % 8));
		expect_refused(f->mac, copy, f->len, indexes, N, NULL);
	}
}

/* A frame sealed with another key: another judge's, or a forgery. */
static void test_forged(void **state)
{
	struct fx *f = *state;
	struct wire_mac *other = mac_of(0x22);
	assert_non_null(other);
	expect_refused(other, f->buf, f->len, indexes, N, "does not authenticate");
	wire_mac_free(other);
}

/* Frames out of order, replayed, missing, extra, or trailing bytes. */
static void test_sequence(void **state)
{
	struct fx *f = *state;
	uint8_t b[sizeof(f->buf)];
	size_t a = f->frame_len[0], c = f->frame_len[1];
	/* frames 1, 0, 2 */
	memcpy(b, f->buf + a, c);
	memcpy(b + c, f->buf, a);
	memcpy(b + a + c, f->buf + a + c, f->len - a - c);
	expect_refused(f->mac, b, f->len, indexes, N, "out of sequence");
	/* frame 0 twice */
	memcpy(b, f->buf, a);
	memcpy(b + a, f->buf, a);
	expect_refused(f->mac, b, 2 * a, indexes, 2, "out of sequence");
	/* two of three */
	expect_refused(f->mac, f->buf, a + c, indexes, N, "2 of 3 frames");
	/* three of two */
	expect_refused(f->mac, f->buf, f->len, indexes, 2, NULL);
	/* a trailing byte */
	memcpy(b, f->buf, f->len);
	b[f->len] = 0;
	expect_refused(f->mac, b, f->len + 1, indexes, N, "after the last frame");
	/* nothing at all, for criteria that were to be judged */
	expect_refused(f->mac, NULL, 0, indexes, N, "0 of 3 frames");
}

/* A verdict for another criterion than the one in its place. */
static void test_other_criterion(void **state)
{
	struct fx *f = *state;
	static const size_t shifted[N] = { 0, 3, 5 };
	expect_refused(f->mac, f->buf, f->len, shifted, N, "another criterion than criteria[3]");
}

/* Seals one hand-made RESULT payload as frame 0. */
static size_t seal_raw(struct wire_mac *mac, uint8_t type, const char *name, uint32_t score,
		       const char *detail, size_t detail_len, uint8_t *out, size_t cap)
{
	uint8_t payload[4 + WIRE_MAX_RESULT_NAME + 8 + WIRE_MAX_RESULT_TEXT];
	struct wire_wr w;
	wire_wr_init(&w, payload, sizeof(payload));
	assert_true(wire_put_str(&w, name, strlen(name), WIRE_MAX_RESULT_NAME));
	assert_true(wire_put_u32(&w, score));
	assert_true(wire_put_str(&w, detail, detail_len, WIRE_MAX_RESULT_TEXT));
	int n = wire_seal(mac, WIRE_DIR_TO_SUPERVISOR, type, 0, payload, w.len, out, cap);
	assert_true(n > 0);
	return (size_t)n;
}

/* Authentic frames whose content breaks the layout: what a compromised judge could send. */
static void test_layout(void **state)
{
	struct fx *f = *state;
	static const size_t one[1] = { 4 };
	uint8_t b[EV_VERDICT_FRAME_MAX];
	char long_detail[EV_VERDICT_DETAILS_MAX + 2];
	memset(long_detail, 'x', sizeof(long_detail));
	size_t n;

	n = seal_raw(f->mac, WIRE_RESULT, "criteria[4]", 1000, "fine", 4, b, sizeof(b));
	struct ev_verdict ok[1];
	assert_int_equal(ev_verdict_open_all(f->mac, b, n, one, 1, ok, NULL, 0), 0); /* control */

	n = seal_raw(f->mac, WIRE_RESULT, "criteria[4]", 500, "fine", 4, b, sizeof(b));
	expect_refused(f->mac, b, n, one, 1, "score 500");
	n = seal_raw(f->mac, WIRE_RESULT, "criteria[4] error", 1000, "fine", 4, b, sizeof(b));
	expect_refused(f->mac, b, n, one, 1, "score 1000");
	n = seal_raw(f->mac, WIRE_RESULT, "criteria[4] passed", 1000, "fine", 4, b, sizeof(b));
	expect_refused(f->mac, b, n, one, 1, "another criterion");
	n = seal_raw(f->mac, WIRE_RESULT, "criteria[04]", 1000, "fine", 4, b, sizeof(b));
	expect_refused(f->mac, b, n, one, 1, "another criterion");
	n = seal_raw(f->mac, WIRE_RESULT, "criteria[4]", 0, "", 0, b, sizeof(b));
	expect_refused(f->mac, b, n, one, 1, "details");
	n = seal_raw(f->mac, WIRE_RESULT, "criteria[4]", 0, "two\nlines", 9, b, sizeof(b));
	expect_refused(f->mac, b, n, one, 1, "details");
	n = seal_raw(f->mac, WIRE_RESULT, "criteria[4]", 0, "\x1b[2J", 4, b, sizeof(b));
	expect_refused(f->mac, b, n, one, 1, "details");
	n = seal_raw(f->mac, WIRE_RESULT, "criteria[4]", 0, "caf\xc3\xa9", 5, b, sizeof(b));
	expect_refused(f->mac, b, n, one, 1, "details");
	n = seal_raw(f->mac, WIRE_RESULT, "criteria[4]", 0, long_detail, sizeof(long_detail) - 1,
		     b, sizeof(b));
	expect_refused(f->mac, b, n, one, 1, "details");
	n = seal_raw(f->mac, WIRE_RESULT, "criteria[4]", 0, long_detail, EV_VERDICT_DETAILS_MAX, b,
		     sizeof(b));
	assert_int_equal(ev_verdict_open_all(f->mac, b, n, one, 1, ok, NULL, 0), 0); /* at the cap */
	n = seal_raw(f->mac, WIRE_EVENT, "criteria[4]", 0, "fine", 4, b, sizeof(b));
	expect_refused(f->mac, b, n, one, 1, "not RESULT");
}

/* A header claiming more than any verdict frame, or more bytes than n frames can hold. */
static void test_oversized(void **state)
{
	struct fx *f = *state;
	uint8_t b[sizeof(f->buf)];
	memcpy(b, f->buf, f->len);
	b[4] = 0x00;
	b[5] = 0x01; /* payload_len 65536 + the rest */
	expect_refused(f->mac, b, f->len, indexes, N, "oversized");
	uint8_t *big = calloc(1, N * EV_VERDICT_FRAME_MAX + 1);
	assert_non_null(big);
	expect_refused(f->mac, big, N * EV_VERDICT_FRAME_MAX + 1, indexes, N, "more than");
	free(big);
	expect_refused(f->mac, f->buf, f->len, indexes, TASK_MAX_CRITERIA + 1, "no input");
}

/* The child's side never seals what the reader would refuse. */
static void test_seal_refuses(void **state)
{
	struct fx *f = *state;
	struct sup_crit_result r;
	uint8_t b[EV_VERDICT_FRAME_MAX];
	result(&r, false, 500, "half");
	assert_int_equal(ev_verdict_seal(f->mac, 0, 0, &r, b, sizeof(b)), -EINVAL);
	result(&r, false, 0, "");
	assert_int_equal(ev_verdict_seal(f->mac, 0, 0, &r, b, sizeof(b)), -EINVAL);
	result(&r, false, 0, "a\tb");
	assert_int_equal(ev_verdict_seal(f->mac, 0, 0, &r, b, sizeof(b)), -EINVAL);
}

/* ---- the run folder summary ---- */

static const char *const good_parts[EV_N_PARTS] = {
	[EV_PART_POLICY] = "{\"digest\":\"x\",\"weakenings\":[]}",
	[EV_PART_CREATED_AT] = "\"2026-01-01T00:00:00Z\"",
	[EV_PART_HOST] = "{\"kernel\":\"6.1\"}",
	[EV_PART_SETUP] = "{\"status\":\"skipped\"}",
	[EV_PART_AGENT] = "{\"status\":\"ok\"}",
	[EV_PART_REAP] = "{\"status\":\"ok\"}",
	[EV_PART_IDENTITY] = "null",
};

#define DIGEST "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void folder(struct ev_folder *f)
{
	ev_folder_init(f);
	strcpy(f->run_id, "t1-20260101T000000Z-0123abcd");
	strcpy(f->task_id, "t1");
	strcpy(f->task_source, "/srv/tasks/t1/task.yaml");
	strcpy(f->task_digest, DIGEST);
	strcpy(f->policy_digest, DIGEST);
	f->status = EV_SUCCESS;
	f->grades = 2;
	f->setup = EV_FOLDER_SETUP_SKIPPED;
	f->agent = EV_FOLDER_AGENT_TIMEOUT;
	f->reap = EV_FOLDER_REAP_OK;
	f->output_truncated = true;
	f->stdout_kept = 15;
	f->stderr_kept = 3;
	memset(f->agent_digest, 0xab, sizeof(f->agent_digest));
	for (size_t i = 0; i < EV_N_PARTS; i++) {
		f->parts[i] = strdup(good_parts[i]);
		assert_non_null(f->parts[i]);
		f->part_len[i] = strlen(good_parts[i]);
	}
}

/* Encodes f and expects the decoder to refuse it naming expect. */
static void folder_refused(struct ev_folder *f, const char *expect)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	assert_int_equal(ev_folder_encode(0, NULL, f, &buf, &len), 0);
	struct ev_folder out;
	memset(&out, 0x5a, sizeof(out));
	char why[256] = "";
	assert_int_equal(ev_folder_decode(buf, len, &out, why, sizeof(why)), -EBADMSG);
	assert_int_equal(((uint8_t *)&out)[0], 0x5a);
	if (!strstr(why, expect))
		fail_msg("expected a reason naming '%s', got '%s'", expect, why);
	free(buf);
	ev_folder_done(f);
}

static void test_folder_roundtrip(void **state)
{
	(void)state;
	struct ev_folder f, out;
	folder(&f);
	uint8_t *buf = NULL;
	size_t len = 0;
	assert_int_equal(ev_folder_encode(0, NULL, &f, &buf, &len), 0);
	assert_int_equal(ev_folder_decode(buf, len, &out, NULL, 0), 0);
	assert_string_equal(out.run_id, f.run_id);
	assert_string_equal(out.task_source, f.task_source);
	assert_int_equal(out.status, EV_SUCCESS);
	assert_int_equal(out.grades, 2);
	assert_int_equal(out.agent, EV_FOLDER_AGENT_TIMEOUT);
	assert_true(out.output_truncated);
	assert_false(out.no_cgroup);
	assert_int_equal(out.stdout_kept, 15);
	assert_memory_equal(out.agent_digest, f.agent_digest, sizeof(f.agent_digest));
	for (size_t i = 0; i < EV_N_PARTS; i++)
		assert_string_equal(out.parts[i], good_parts[i]);
	ev_folder_done(&out);

	/* Every prefix is refused, and so is every single flipped byte that changes a form. */
	for (size_t cut = 0; cut < len; cut++) {
		char why[128];
		assert_int_equal(ev_folder_decode(buf, cut, &out, why, sizeof(why)), -EBADMSG);
	}
	uint8_t *copy = malloc(len + 1);
	assert_non_null(copy);
	memcpy(copy, buf, len);
	copy[len] = 0;
	assert_int_equal(ev_folder_decode(copy, len + 1, &out, NULL, 0), -EBADMSG);
	free(copy);
	free(buf);
	ev_folder_done(&f);
}

static void test_folder_refusal(void **state)
{
	(void)state;
	uint8_t *buf = NULL;
	size_t len = 0;
	assert_int_equal(ev_folder_encode(EBADMSG, "record.json is invalid: \x1b[31mred", NULL,
					  &buf, &len), 0);
	struct ev_folder out;
	char why[256];
	assert_int_equal(ev_folder_decode(buf, len, &out, why, sizeof(why)), -EPERM);
	assert_string_equal(why, "record.json is invalid: \\x1b[31mred");
	free(buf);
	assert_int_equal(ev_folder_encode(0, NULL, NULL, &buf, &len), -EINVAL);
	assert_int_equal(ev_folder_encode(5000, "x", NULL, &buf, &len), -EINVAL);
}

static void test_folder_fields(void **state)
{
	(void)state;
	struct ev_folder f;
	folder(&f);
	strcpy(f.run_id, "../elsewhere");
	folder_refused(&f, "run_id");
	folder(&f);
	strcpy(f.run_id, "other-20260101T000000Z-0123abcd");
	folder_refused(&f, "task_id");
	folder(&f);
	strcpy(f.task_source, "relative/task.yaml");
	folder_refused(&f, "absolute path");
	folder(&f);
	strcpy(f.task_source, "/srv/../etc/shadow");
	folder_refused(&f, "absolute path");
	folder(&f);
	strcpy(f.task_source, "/srv/t\x1b]0;x\x07.yaml");
	folder_refused(&f, "absolute path");
	folder(&f);
	f.task_digest[10] = 'A';
	folder_refused(&f, "digest");
	folder(&f);
	f.status = EV_FAILURE + 1;
	folder_refused(&f, "out of range");
	folder(&f);
	f.grades = 1000001;
	folder_refused(&f, "out of range");
	folder(&f);
	f.agent = (enum ev_folder_agent)9;
	folder_refused(&f, "out of range");
	folder(&f);
	free(f.parts[EV_PART_AGENT]);
	f.parts[EV_PART_AGENT] = strdup("[1]");
	f.part_len[EV_PART_AGENT] = 3;
	folder_refused(&f, "phases.agent");
	folder(&f);
	free(f.parts[EV_PART_HOST]);
	f.parts[EV_PART_HOST] = strdup("{\"k\":\n1}");
	f.part_len[EV_PART_HOST] = 8;
	folder_refused(&f, "host");
	folder(&f);
	free(f.parts[EV_PART_POLICY]);
	f.parts[EV_PART_POLICY] = strdup("null");
	f.part_len[EV_PART_POLICY] = 4;
	folder_refused(&f, "policy");
	folder(&f);
	free(f.parts[EV_PART_CREATED_AT]);
	f.parts[EV_PART_CREATED_AT] = strdup("\"\xed\xa0\x80\"");
	f.part_len[EV_PART_CREATED_AT] = 5;
	folder_refused(&f, "created_at");
}

/* Sets part k of f to text. */
static void set_part(struct ev_folder *f, enum ev_folder_part k, const char *text)
{
	free(f->parts[k]);
	f->parts[k] = strdup(text);
	assert_non_null(f->parts[k]);
	f->part_len[k] = strlen(text);
}

/*
 * A reader that lies cannot splice members into the record a regrade writes: a part that
 * begins and ends as an object but holds more than one value is refused, and so is any part
 * that is not exactly one strict JSON value of its kind.
 */
static void test_folder_part_injection(void **state)
{
	(void)state;
	static const struct {
		enum ev_folder_part k;
		const char *text;
	} bad[] = {
		{ EV_PART_AGENT, "{},\"status\":\"SUCCESS\",\"score\":1,\"x\":{}" },
		{ EV_PART_HOST, "{\"kernel\":\"6.1\"},\"status\":\"SUCCESS\",\"y\":{}" },
		{ EV_PART_IDENTITY, "{}}{" },
		{ EV_PART_SETUP, "{\"a\":1}{\"b\":2}" },
		{ EV_PART_CREATED_AT, "\"2026\",\"status\":\"SUCCESS\",\"z\":\"x\"" },
		{ EV_PART_REAP, "{\"a\":01}" },
		{ EV_PART_POLICY, "{\"a\":[[[[[[[[[1]]]]]]]]]}" },
		{ EV_PART_AGENT, " {}" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ev_folder f;
		folder(&f);
		set_part(&f, bad[i].k, bad[i].text);
		folder_refused(&f, "compact JSON");
	}
	/* The control: one object of each kind, nested as deep as a record may be, is carried. */
	struct ev_folder f, out;
	folder(&f);
	set_part(&f, EV_PART_AGENT, "{\"a\":[[[[[[1]]]]]],\"b\":\"},{\"}");
	uint8_t *buf = NULL;
	size_t len = 0;
	assert_int_equal(ev_folder_encode(0, NULL, &f, &buf, &len), 0);
	assert_int_equal(ev_folder_decode(buf, len, &out, NULL, 0), 0);
	assert_string_equal(out.parts[EV_PART_AGENT], f.parts[EV_PART_AGENT]);
	ev_folder_done(&out);
	ev_folder_done(&f);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_golden, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_truncated, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_bit_flips, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_forged, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_sequence, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_other_criterion, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_layout, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_oversized, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_seal_refuses, fx_setup, fx_teardown),
		cmocka_unit_test(test_folder_roundtrip),
		cmocka_unit_test(test_folder_refusal),
		cmocka_unit_test(test_folder_fields),
		cmocka_unit_test(test_folder_part_injection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
