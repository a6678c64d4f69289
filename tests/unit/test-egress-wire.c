/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for what the egress proxy added to wire/: the text getters (wire/text.c) at
 * their bounds, and the report payloads (wire/egress.c): a golden CONN encoding, its
 * truncation and bit-flip sweeps, and each consistency rule the parent relies on.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wire-egress.h"
#include "wire-text.h"

/* ---- text getters --------------------------------------------------------------------------- */

static bool is_a(uint8_t b)
{
	return b == 'a';
}

static void test_get_until(void **state)
{
	(void)state;
	struct wire_rd r, out = { .p = NULL, .len = 77 };
	wire_rd_init(&r, "abc\nrest", 8);
	/* exact fit: 3 bytes before the delimiter, max 3 */
	assert_true(wire_get_until(&r, '\n', 3, &out));
	assert_int_equal(out.len, 3);
	assert_memory_equal(out.p, "abc", 3);
	assert_int_equal(r.len, 4);
	/* one byte short of the limit */
	wire_rd_init(&r, "abc\nrest", 8);
	out.len = 77;
	assert_false(wire_get_until(&r, '\n', 2, &out));
	assert_int_equal(r.len, 8);
	assert_int_equal(out.len, 77);
	/* no delimiter at all */
	wire_rd_init(&r, "abc", 3);
	assert_false(wire_get_until(&r, '\n', 100, &out));
	assert_int_equal(r.len, 3);
	/* empty body */
	wire_rd_init(&r, "\nx", 2);
	assert_true(wire_get_until(&r, '\n', 0, &out));
	assert_int_equal(out.len, 0);
	assert_int_equal(r.len, 1);
	wire_rd_init(&r, "", 0);
	assert_false(wire_get_until(&r, '\n', 5, &out));
}

static void test_get_while_and_lit(void **state)
{
	(void)state;
	struct wire_rd r, out;
	wire_rd_init(&r, "aaab", 4);
	assert_false(wire_get_while(&r, is_a, 2, &out)); /* run of 3 over max 2 */
	assert_int_equal(r.len, 4);
	assert_true(wire_get_while(&r, is_a, 3, &out));
	assert_int_equal(out.len, 3);
	assert_true(wire_get_while(&r, is_a, 0, &out)); /* empty run */
	assert_int_equal(out.len, 0);
	assert_int_equal(r.len, 1);

	wire_rd_init(&r, "HTTP/1.1", 8);
	assert_false(wire_get_lit(&r, "http/1.1", 8, false));
	assert_true(wire_get_lit(&r, "http/1.1", 8, true));
	assert_true(wire_done(&r));
	wire_rd_init(&r, "ab", 2);
	assert_false(wire_get_lit(&r, "abc", 3, true)); /* one byte long */
	assert_int_equal(r.len, 2);
	assert_true(wire_eq_ci(&r, "AB", 2));
	assert_false(wire_eq_ci(&r, "A", 1));
	assert_false(wire_eq_ci(&r, "ABC", 3));
}

static void test_u24_peek_trim(void **state)
{
	(void)state;
	struct wire_rd r;
	uint32_t v = 0xdead;
	uint8_t b = 0x5a;
	wire_rd_init(&r, "\x01\x02\x03\x04", 4);
	assert_true(wire_peek_u8(&r, &b));
	assert_int_equal(b, 1);
	assert_int_equal(r.len, 4);
	assert_true(wire_get_u24(&r, &v));
	assert_int_equal(v, 0x010203);
	assert_false(wire_get_u24(&r, &v)); /* one byte short */
	assert_int_equal(v, 0x010203);
	assert_int_equal(r.len, 1);
	wire_rd_init(&r, "", 0);
	b = 0x5a;
	assert_false(wire_peek_u8(&r, &b));
	assert_int_equal(b, 0x5a);

	wire_rd_init(&r, "xaa", 3);
	wire_trim_end(&r, is_a);
	assert_int_equal(r.len, 1);
	wire_rd_init(&r, "aa", 2);
	wire_trim_end(&r, is_a);
	assert_int_equal(r.len, 0);
	assert_true(wire_all(&r, is_a));
	wire_rd_init(&r, "aab", 3);
	assert_false(wire_all(&r, is_a));
}

/* ---- CONN --------------------------------------------------------------------------------- */

static struct wire_egress_conn sample(void)
{
	struct wire_egress_conn c;
	memset(&c, 0, sizeof(c));
	c.start_usec = 0x0102030405060708ull;
	c.duration_usec = 1000;
	c.kind = WIRE_EGRESS_KIND_CONNECT;
	memcpy(c.host, "a.test", 7);
	c.port = 443;
	c.family = 4;
	c.addr[0] = 127;
	c.addr[3] = 1;
	c.verdict = WIRE_EGRESS_ALLOWED;
	c.reason = WIRE_EGRESS_OK;
	memcpy(c.rule, "*.test:443", 11);
	c.bytes_up = 10;
	c.bytes_down = 20;
	return c;
}

static const uint8_t sample_golden[] = {
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,         /* start_usec */
	0, 0, 0, 0, 0, 0, 0x03, 0xe8,                           /* duration_usec */
	1,                                                      /* kind */
	0, 0, 0, 6, 'a', '.', 't', 'e', 's', 't',               /* host */
	0x01, 0xbb,                                             /* port */
	4,                                                      /* family */
	127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,       /* addr */
	1, 1,                                                   /* verdict, reason */
	0, 0, 0, 10, '*', '.', 't', 'e', 's', 't', ':', '4', '4', '3', /* rule */
	0, 0, 0, 0, 0, 0, 0, 10,                                /* bytes_up */
	0, 0, 0, 0, 0, 0, 0, 20,                                /* bytes_down */
};

static size_t encode(const struct wire_egress_conn *c, uint8_t *buf, size_t cap)
{
	struct wire_wr w;
	wire_wr_init(&w, buf, cap);
	assert_true(wire_put_egress_conn(&w, c));
	return w.len;
}

static int decode(const uint8_t *buf, size_t len, struct wire_egress_conn *out)
{
	struct wire_rd r;
	wire_rd_init(&r, buf, len);
	return wire_get_egress_conn(&r, out);
}

static void test_conn_golden(void **state)
{
	(void)state;
	struct wire_egress_conn c = sample(), d;
	uint8_t buf[WIRE_EGRESS_CONN_MAX_LEN];
	size_t len = encode(&c, buf, sizeof(buf));
	assert_int_equal(len, sizeof(sample_golden));
	assert_memory_equal(buf, sample_golden, len);
	assert_int_equal(len, WIRE_EGRESS_CONN_MIN_LEN + 6 + 10);
	assert_int_equal(decode(buf, len, &d), 0);
	assert_memory_equal(&c, &d, sizeof(c));
}

static void test_conn_truncation_and_trailing(void **state)
{
	(void)state;
	struct wire_egress_conn c = sample(), d;
	uint8_t buf[WIRE_EGRESS_CONN_MAX_LEN + 1];
	size_t len = encode(&c, buf, sizeof(buf));
	for (size_t n = 0; n < len; n++) {
		memset(&d, 0x5a, sizeof(d));
		struct wire_egress_conn untouched = d;
		assert_int_equal(decode(buf, n, &d), -EBADMSG);
		assert_memory_equal(&d, &untouched, sizeof(d));
	}
	buf[len] = 0;
	assert_int_equal(decode(buf, len + 1, &d), -EBADMSG);
}

/* Every single-bit flip either still decodes to something valid, or fails with -EBADMSG. */
static void test_conn_bit_flips(void **state)
{
	(void)state;
	struct wire_egress_conn c = sample(), d;
	uint8_t buf[WIRE_EGRESS_CONN_MAX_LEN];
	size_t len = encode(&c, buf, sizeof(buf));
	unsigned rejected = 0;
	for (size_t i = 0; i < len * 8; i++) {
		buf[i / 8] ^= (uint8_t)(1u << (i % 8));
		int r = decode(buf, len, &d);
		assert_true(r == 0 || r == -EBADMSG);
		if (r < 0)
			rejected++;
		buf[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	/* Lengths, kind, family, verdict, reason, unused address bytes and text all catch flips. */
	assert_true(rejected > len * 2);
}

static void test_conn_consistency(void **state)
{
	(void)state;
	uint8_t buf[WIRE_EGRESS_CONN_MAX_LEN];
	struct wire_egress_conn d;
	struct wire_egress_conn c;
#define EXPECT_BAD(stmt)                                                          \
	do {                                                                      \
		c = sample();                                                     \
		stmt;                                                             \
		assert_int_equal(decode(buf, encode(&c, buf, sizeof(buf)), &d), -EBADMSG); \
	} while (0)
	EXPECT_BAD(c.kind = 3);
	EXPECT_BAD(c.verdict = 3);
	EXPECT_BAD(c.reason = 0);
	EXPECT_BAD(c.reason = WIRE_EGRESS_REASON_MAX + 1);
	EXPECT_BAD(c.reason = WIRE_EGRESS_DENY_RULE);          /* with ALLOWED */
	EXPECT_BAD(c.verdict = WIRE_EGRESS_DENIED);            /* with OK */
	EXPECT_BAD(c.verdict = WIRE_EGRESS_UNDECIDED);
	EXPECT_BAD(c.family = 5);
	EXPECT_BAD(c.addr[4] = 1);                             /* past IPv4's 4 bytes */
	EXPECT_BAD((c.family = 0, c.addr[0] = 1));
	EXPECT_BAD(c.host[0] = 'A');                           /* upper case */
	EXPECT_BAD(c.host[1] = ' ');
	EXPECT_BAD(c.host[0] = '\0');                          /* CONNECT without a host */
	EXPECT_BAD(c.port = 0);
	EXPECT_BAD(c.rule[0] = '"');
	EXPECT_BAD((c.kind = WIRE_EGRESS_KIND_NONE, c.host[0] = '\0', c.port = 0));
#undef EXPECT_BAD

	/* NONE is fine when undecided, without host or port. */
	c = sample();
	c.kind = WIRE_EGRESS_KIND_NONE;
	c.host[0] = '\0';
	c.port = 0;
	c.verdict = WIRE_EGRESS_UNDECIDED;
	c.reason = WIRE_EGRESS_INCOMPLETE;
	c.rule[0] = '\0';
	c.family = 0;
	memset(c.addr, 0, sizeof(c.addr));
	assert_int_equal(decode(buf, encode(&c, buf, sizeof(buf)), &d), 0);
	/* MAX_BYTES is the one reason with two verdicts. */
	c = sample();
	c.reason = WIRE_EGRESS_MAX_BYTES;
	assert_int_equal(decode(buf, encode(&c, buf, sizeof(buf)), &d), 0);
}

static void test_conn_string_limits(void **state)
{
	(void)state;
	uint8_t buf[WIRE_EGRESS_CONN_MAX_LEN + 8];
	struct wire_egress_conn c = sample(), d;
	memset(c.host, 'a', WIRE_EGRESS_MAX_HOST);
	c.host[WIRE_EGRESS_MAX_HOST] = '\0';
	memset(c.rule, 'b', WIRE_EGRESS_MAX_RULE);
	c.rule[WIRE_EGRESS_MAX_RULE] = '\0';
	size_t len = encode(&c, buf, sizeof(buf));
	assert_int_equal(len, WIRE_EGRESS_CONN_MAX_LEN);
	assert_int_equal(decode(buf, len, &d), 0);
	/* A host one byte over its limit, written by hand. */
	uint8_t over[WIRE_EGRESS_CONN_MAX_LEN + 8];
	struct wire_wr w;
	wire_wr_init(&w, over, sizeof(over));
	assert_true(wire_put_u64(&w, 1) && wire_put_u64(&w, 1) && wire_put_u8(&w, 1) &&
		    wire_put_u32(&w, WIRE_EGRESS_MAX_HOST + 1));
	for (unsigned i = 0; i <= WIRE_EGRESS_MAX_HOST; i++)
		assert_true(wire_put_u8(&w, 'a'));
	assert_true(wire_put_u16(&w, 443) && wire_put_u8(&w, 0));
	for (int i = 0; i < 16; i++)
		assert_true(wire_put_u8(&w, 0));
	assert_true(wire_put_u8(&w, 1) && wire_put_u8(&w, 1) && wire_put_u32(&w, 0) &&
		    wire_put_u64(&w, 0) && wire_put_u64(&w, 0));
	assert_int_equal(decode(over, w.len, &d), -EBADMSG);
}

static void test_limit_and_failed(void **state)
{
	(void)state;
	uint8_t buf[256];
	struct wire_wr w;
	struct wire_rd r;
	uint8_t which = 0;
	uint64_t limit = 0;
	wire_wr_init(&w, buf, sizeof(buf));
	assert_true(wire_put_egress_limit(&w, WIRE_EGRESS_LIMIT_BYTES, 4096));
	assert_int_equal(w.len, 9);
	wire_rd_init(&r, buf, w.len);
	assert_int_equal(wire_get_egress_limit(&r, &which, &limit), 0);
	assert_int_equal(which, WIRE_EGRESS_LIMIT_BYTES);
	assert_int_equal(limit, 4096);
	buf[0] = 3;
	wire_rd_init(&r, buf, w.len);
	assert_int_equal(wire_get_egress_limit(&r, &which, &limit), -EBADMSG);
	wire_rd_init(&r, buf, w.len - 1);
	assert_int_equal(wire_get_egress_limit(&r, &which, &limit), -EBADMSG);

	char step[WIRE_EGRESS_MAX_STEP + 1];
	uint32_t err = 0;
	wire_wr_init(&w, buf, sizeof(buf));
	assert_true(wire_put_egress_failed(&w, EPERM, "install seccomp", 15));
	wire_rd_init(&r, buf, w.len);
	assert_int_equal(wire_get_egress_failed(&r, &err, step), 0);
	assert_int_equal(err, EPERM);
	assert_string_equal(step, "install seccomp");
	for (size_t n = 0; n < w.len; n++) {
		wire_rd_init(&r, buf, n);
		assert_int_equal(wire_get_egress_failed(&r, &err, step), -EBADMSG);
	}
	wire_wr_init(&w, buf, sizeof(buf));
	assert_true(wire_put_egress_failed(&w, 0, "x", 1));
	wire_rd_init(&r, buf, w.len);
	assert_int_equal(wire_get_egress_failed(&r, &err, step), -EBADMSG);
	wire_wr_init(&w, buf, sizeof(buf));
	assert_true(wire_put_egress_failed(&w, 1, "", 0));
	wire_rd_init(&r, buf, w.len);
	assert_int_equal(wire_get_egress_failed(&r, &err, step), -EBADMSG);
	wire_wr_init(&w, buf, sizeof(buf));
	assert_true(wire_put_egress_failed(&w, 1, "a\nb", 3));
	wire_rd_init(&r, buf, w.len);
	assert_int_equal(wire_get_egress_failed(&r, &err, step), -EBADMSG);
	char longstep[WIRE_EGRESS_MAX_STEP + 1];
	memset(longstep, 's', sizeof(longstep));
	wire_wr_init(&w, buf, sizeof(buf));
	assert_false(wire_put_egress_failed(&w, 1, longstep, sizeof(longstep)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_until),
		cmocka_unit_test(test_get_while_and_lit),
		cmocka_unit_test(test_u24_peek_trim),
		cmocka_unit_test(test_conn_golden),
		cmocka_unit_test(test_conn_truncation_and_trailing),
		cmocka_unit_test(test_conn_bit_flips),
		cmocka_unit_test(test_conn_consistency),
		cmocka_unit_test(test_conn_string_limits),
		cmocka_unit_test(test_limit_and_failed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
