/* SPDX-License-Identifier: MIT */
/*
 * The codec's own SHA-256 (wire/sha256.c): the FIPS 180-4 example vectors, every length
 * across several blocks split at random points, the padding boundaries, and contexts copied
 * mid-stream, each on both the portable code and the SHA extensions (where the CPU has
 * them), against OpenSSL's SHA-256 as the reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/sha.h>

#include "sha256.h"

static void hex(const uint8_t d[WIRE_SHA256_LEN], char out[2 * WIRE_SHA256_LEN + 1])
{
	for (int i = 0; i < WIRE_SHA256_LEN; i++)
		(void)snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void digest(const void *data, size_t len, uint8_t out[WIRE_SHA256_LEN])
{
	struct wire_sha256 c;
	wire_sha256_init(&c);
	wire_sha256_update(&c, data, len);
	wire_sha256_final(&c, out);
}

/* Runs fn once on the portable code and once on the SHA extensions, when the CPU has them. */
static void on_each_impl(void (*fn)(void))
{
	int was = wire_sha256_force_portable(1);
	fn();
	(void)wire_sha256_force_portable(0);
	if (wire_sha256_accelerated())
		fn();
	else
		print_message("no SHA extensions on this CPU: the portable code only\n");
	(void)wire_sha256_force_portable(was);
}

static void expect_hex(const void *data, size_t len, const char *want)
{
	uint8_t d[WIRE_SHA256_LEN];
	char got[2 * WIRE_SHA256_LEN + 1];
	digest(data, len, d);
	hex(d, got);
	assert_string_equal(got, want);
}

/* FIPS 180-4's examples (as published with the standard) and the empty message. */
static void vectors(void)
{
	expect_hex("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	expect_hex("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	expect_hex(two, strlen(two),
		   "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* One million 'a', fed in pieces that straddle the blocks. */
	struct wire_sha256 c;
	wire_sha256_init(&c);
	char chunk[1000];
	memset(chunk, 'a', sizeof(chunk));
	for (int i = 0; i < 1000; i++)
		wire_sha256_update(&c, chunk, sizeof(chunk));
	uint8_t d[WIRE_SHA256_LEN];
	char got[2 * WIRE_SHA256_LEN + 1];
	wire_sha256_final(&c, d);
	hex(d, got);
	assert_string_equal(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_vectors(void **state)
{
	(void)state;
	on_each_impl(vectors);
}

/* Every length up to 4 KiB, each split at pseudo-random points, against OpenSSL. */
static void against_openssl(void)
{
	static uint8_t buf[4200];
	uint32_t x = 0x9e3779b9u;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1664525u + 1013904223u;
		buf[i] = (uint8_t)(x >> 24);
	}
	for (size_t len = 0; len <= 4160; len++) {
		uint8_t want[SHA256_DIGEST_LENGTH], got[WIRE_SHA256_LEN];
		SHA256(buf, len, want);
		struct wire_sha256 c;
		wire_sha256_init(&c);
		for (size_t off = 0; off < len;) {
			x = x * 1664525u + 1013904223u;
			/* Up to 700 bytes: many blocks in one update drive the multi-block path. */
			size_t k = 1 + (x >> 16) % 700;
			if (k > len - off)
				k = len - off;
			wire_sha256_update(&c, buf + off, k);
			off += k;
		}
		wire_sha256_final(&c, got);
		if (memcmp(want, got, sizeof(got)) != 0)
			fail_msg("SHA-256 of %zu bytes differs from OpenSSL's", len);
	}
}

static void test_against_openssl(void **state)
{
	(void)state;
	on_each_impl(against_openssl);
}

/* A context copied mid-stream goes on independently (the HMAC keeps its pad states so). */
static void copies(void)
{
	static const char msg[] = "the quick brown fox jumps over the lazy dog, twice over";
	struct wire_sha256 a, b;
	wire_sha256_init(&a);
	wire_sha256_update(&a, msg, 20);
	b = a;
	wire_sha256_update(&a, msg + 20, sizeof(msg) - 21);
	wire_sha256_update(&b, msg + 20, sizeof(msg) - 21);
	uint8_t da[WIRE_SHA256_LEN], db[WIRE_SHA256_LEN], want[SHA256_DIGEST_LENGTH];
	wire_sha256_final(&a, da);
	wire_sha256_final(&b, db);
	SHA256((const uint8_t *)msg, sizeof(msg) - 1, want);
	assert_memory_equal(da, want, sizeof(da));
	assert_memory_equal(db, want, sizeof(db));
	/* final wipes the context: no hash state is left behind. */
	static const struct wire_sha256 zero;
	assert_memory_equal(&a, &zero, sizeof(a));
}

static void test_copies(void **state)
{
	(void)state;
	on_each_impl(copies);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_against_openssl),
		cmocka_unit_test(test_copies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
