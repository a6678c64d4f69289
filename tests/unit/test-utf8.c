/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for common/utf8.h, the one UTF-8 validator, and for the printers that use it:
 * every sequence of one to three bytes and every four-byte sequence over a spread of bytes is
 * checked against a reference decoder written from RFC 3629's definition (shortest form,
 * scalar values only), and the policy printer refuses what the validator refuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy.h"
#include "utf8.h"

/*
 * The reference: decodes n bytes as one sequence by the bit pattern alone, then applies the
 * three rules (shortest form, no surrogate, at most U+10FFFF). True when they make one scalar.
 */
static bool ref_one(const unsigned char *p, size_t n)
{
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	uint32_t v;
	size_t want;
	if (p[0] < 0x80) {
		want = 1;
		v = p[0];
	} else if ((p[0] & 0xe0) == 0xc0) {
		want = 2;
		v = p[0] & 0x1fu;
	} else if ((p[0] & 0xf0) == 0xe0) {
		want = 3;
		v = p[0] & 0x0fu;
	} else if ((p[0] & 0xf8) == 0xf0) {
		want = 4;
		v = p[0] & 0x07u;
	} else {
		return false;
	}
	if (want != n)
		return false;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return false;
		v = v << 6 | (p[i] & 0x3fu);
	}
	return v >= min[n] && v <= 0x10ffff && !(v >= 0xd800 && v <= 0xdfff);
}

static void check_seq(const unsigned char *p, size_t n)
{
	bool want = ref_one(p, n);
	bool got = utf8_seq_len(p, n) == n && utf8_valid_mem(p, n);
	if (want != got)
		fail_msg("%02x %02x %02x %02x (%zu bytes): the validator says %s, the reference %s",
			 p[0], n > 1 ? p[1] : 0, n > 2 ? p[2] : 0, n > 3 ? p[3] : 0, n,
			 got ? "valid" : "invalid", want ? "valid" : "invalid");
}

static void test_all_short_sequences(void **state)
{
	(void)state;
	unsigned char b[4];
	for (unsigned i = 0; i < 256; i++) {
		b[0] = (unsigned char)i;
		check_seq(b, 1);
		for (unsigned j = 0; j < 256; j++) {
			b[1] = (unsigned char)j;
			check_seq(b, 2);
			for (unsigned k = 0; k < 256; k++) {
				b[2] = (unsigned char)k;
				check_seq(b, 3);
			}
		}
	}
}

static void test_four_byte_sequences(void **state)
{
	(void)state;
	static const unsigned char tails[] = { 0x00, 0x7f, 0x80, 0x8f, 0x90, 0xbf, 0xc0, 0xff };
	unsigned char b[4];
	for (unsigned i = 0xe0; i < 256; i++) {
		b[0] = (unsigned char)i;
		for (unsigned j = 0; j < 256; j++) {
			b[1] = (unsigned char)j;
			for (size_t k = 0; k < sizeof(tails); k++) {
				b[2] = tails[k];
				for (size_t l = 0; l < sizeof(tails); l++) {
					b[3] = tails[l];
					check_seq(b, 4);
				}
			}
		}
	}
}

/* The edges by name: what the looser checks that were here before let through. */
static void test_edges(void **state)
{
	(void)state;
	assert_true(utf8_valid("plain ASCII"));
	assert_true(utf8_valid("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80")); /* é € 😀 */
	assert_true(utf8_valid("\xed\x9f\xbf"));     /* U+D7FF, the last before the surrogates */
	assert_true(utf8_valid("\xee\x80\x80"));     /* U+E000, the first after them */
	assert_true(utf8_valid("\xf4\x8f\xbf\xbf")); /* U+10FFFF */
	assert_false(utf8_valid("\xed\xa0\x80"));    /* U+D800: a surrogate */
	assert_false(utf8_valid("\xed\xbf\xbf"));    /* U+DFFF */
	assert_false(utf8_valid("\xf4\x90\x80\x80")); /* U+110000 */
	assert_false(utf8_valid("\xf7\xbf\xbf\xbf")); /* U+1FFFFF */
	assert_false(utf8_valid("\xc0\x80"));        /* NUL, overlong */
	assert_false(utf8_valid("\xe0\x9f\xbf"));    /* U+07FF in three bytes */
	assert_false(utf8_valid("\xf0\x8f\xbf\xbf")); /* U+FFFF in four bytes */
	assert_false(utf8_valid("\x80"));
	assert_false(utf8_valid("\xc3"));            /* truncated */
	assert_false(utf8_valid("\xe2\x82"));
	assert_false(utf8_valid("a\xf0\x9f\x98"));
	/* Bounded by length, not by a NUL: a NUL inside is one byte like any other. */
	assert_true(utf8_valid_mem("a\0b", 3));
	assert_false(utf8_valid_mem("\xc3\xa9", 1));
	assert_true(utf8_valid_mem("", 0));
	assert_int_equal(utf8_seq_len((const unsigned char *)"\xf0\x9f\x98\x80", 3), 0);
	assert_int_equal(utf8_seq_len((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
}

/* The policy printer refuses a string the validator refuses (libyaml alone took surrogates). */
static void test_policy_printer(void **state)
{
	(void)state;
	static const char *const bad[] = { "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\x80" };
	size_t len = 0;
	const char *yaml = pol_default_yaml(&len);
	struct pol_diag diag;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pol_policy *p = NULL;
		assert_int_equal(pol_parse("default", yaml, len, &p, &diag), 0);
		char *text = NULL;
		assert_int_equal(pol_to_yaml(p, &text), 0); /* the control */
		free(text);
		text = NULL;
		free(p->hostname);
		p->hostname = strdup(bad[i]);
		assert_non_null(p->hostname);
		assert_int_equal(pol_to_yaml(p, &text), -EINVAL);
		assert_null(text);
		pol_free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_short_sequences),
		cmocka_unit_test(test_four_byte_sequences),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_policy_printer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
