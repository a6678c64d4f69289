/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the ClientHello reader (egress/hello-util.c). Hellos are built field by
 * field here, with a knob per field, so that each malformation is one changed byte or length
 * and each test asserts the specific error; a truncation sweep and record splitting check
 * that incomplete input is never mistaken for a verdict.
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

#include "egress-limits.h"
#include "hello.h"

/* How to build one ClientHello. Zero means "as a client would". */
struct spec {
	const char *sni;         /* NULL: no server_name extension */
	bool no_extensions;      /* no extensions block at all */
	bool dup_ext;            /* a second supported_groups extension */
	bool two_names;          /* two host_name entries */
	uint8_t name_type;       /* the entry's name type (0 host_name) */
	int sni_list_delta;      /* added to the server_name_list length */
	int ext_len_delta;       /* added to the extensions block length */
	uint8_t session_len;     /* session id length (32 when 0) */
	uint16_t suites_len;     /* cipher suites length in bytes (4 when 0) */
	bool no_compression;     /* compression methods length 0 */
	uint8_t hs_type;         /* handshake type (1 when 0) */
	size_t padding;          /* a padding extension of this many bytes */
	bool extra_message;      /* another handshake message after the ClientHello */
	size_t record_size;      /* split into records of at most this many bytes (0: one) */
	uint8_t record_type;     /* record content type (22 when 0) */
	uint16_t record_version; /* (0x0301 when 0) */
};

struct buf {
	uint8_t b[4 * EGR_HELLO_BUF];
	size_t len;
};

static void put8(struct buf *b, unsigned v)
{
	assert_true(b->len < sizeof(b->b));
	b->b[b->len++] = (uint8_t)v;
}

static void put16(struct buf *b, unsigned v)
{
	put8(b, v >> 8);
	put8(b, v & 0xff);
}

static void put_bytes(struct buf *b, const void *p, size_t n)
{
	assert_true(n <= sizeof(b->b) - b->len);
	memcpy(b->b + b->len, p, n);
	b->len += n;
}

static void put_fill(struct buf *b, uint8_t v, size_t n)
{
	assert_true(n <= sizeof(b->b) - b->len);
	memset(b->b + b->len, v, n);
	b->len += n;
}

static void put_sni(struct buf *b, const struct spec *s)
{
	size_t n = strlen(s->sni);
	size_t entry = 3 + n;
	size_t list = entry * (s->two_names ? 2 : 1);
	put16(b, 0);                          /* server_name */
	put16(b, (unsigned)(2 + list));
	put16(b, (unsigned)((int)list + s->sni_list_delta));
	for (int i = 0; i < (s->two_names ? 2 : 1); i++) {
		put8(b, s->name_type);
		put16(b, (unsigned)n);
		put_bytes(b, s->sni, n);
	}
}

/* The ClientHello body (after the 4-byte handshake header). */
static void put_body(struct buf *b, const struct spec *s)
{
	put16(b, 0x0303);
	put_fill(b, 0xab, 32);
	uint8_t sid = s->session_len ? s->session_len : 32;
	put8(b, sid);
	put_fill(b, 0xcd, sid);
	uint16_t suites = s->suites_len ? s->suites_len : 4;
	put16(b, suites);
	put_fill(b, 0x13, suites);
	if (s->no_compression) {
		put8(b, 0);
	} else {
		put8(b, 1);
		put8(b, 0);
	}
	if (s->no_extensions)
		return;
	struct buf ext = { .len = 0 };
	if (s->sni)
		put_sni(&ext, s);
	put16(&ext, 10); /* supported_groups */
	put16(&ext, 4);
	put16(&ext, 2);
	put16(&ext, 0x001d);
	if (s->dup_ext) {
		put16(&ext, 10);
		put16(&ext, 4);
		put16(&ext, 2);
		put16(&ext, 0x0017);
	}
	if (s->padding) {
		put16(&ext, 21);
		put16(&ext, (unsigned)s->padding);
		put_fill(&ext, 0, s->padding);
	}
	put16(b, (unsigned)((int)ext.len + s->ext_len_delta));
	put_bytes(b, ext.b, ext.len);
}

/* The whole record stream for s into out. */
static void build(const struct spec *s, struct buf *out)
{
	static struct buf body, msg;
	body.len = 0;
	msg.len = 0;
	put_body(&body, s);
	put8(&msg, s->hs_type ? s->hs_type : 1);
	put8(&msg, (unsigned)(body.len >> 16));
	put16(&msg, (unsigned)(body.len & 0xffff));
	put_bytes(&msg, body.b, body.len);
	if (s->extra_message) {
		put8(&msg, 2);
		put8(&msg, 0);
		put16(&msg, 0);
	}
	size_t chunk = s->record_size ? s->record_size : EGR_TLS_MAX_FRAGMENT;
	out->len = 0;
	for (size_t off = 0; off < msg.len; off += chunk) {
		size_t n = msg.len - off < chunk ? msg.len - off : chunk;
		put8(out, s->record_type ? s->record_type : 22);
		put16(out, s->record_version ? s->record_version : 0x0301);
		put16(out, (unsigned)n);
		put_bytes(out, msg.b + off, n);
	}
}

static struct buf hello;

static int run(const struct spec *s, struct egr_host *sni, bool *has)
{
	build(s, &hello);
	return egr_hello_sni(hello.b, hello.len, sni, has);
}

static void expect_fail(const struct spec *s, int err)
{
	struct egr_host sni;
	bool has = true;
	memset(&sni, 0x5a, sizeof(sni));
	struct egr_host untouched = sni;
	assert_int_equal(run(s, &sni, &has), err);
	assert_true(has);
	assert_memory_equal(&sni, &untouched, sizeof(sni));
}

static void test_sni(void **state)
{
	(void)state;
	struct spec s = { .sni = "API.Example.com." };
	struct egr_host sni;
	bool has = false;
	assert_int_equal(run(&s, &sni, &has), 0);
	assert_true(has);
	assert_string_equal(sni.text, "api.example.com");
}

static void test_no_sni(void **state)
{
	(void)state;
	struct egr_host sni;
	bool has = true;
	struct spec s = { .sni = NULL };
	assert_int_equal(run(&s, &sni, &has), 0);
	assert_false(has);
	struct spec bare = { .no_extensions = true };
	has = true;
	assert_int_equal(run(&bare, &sni, &has), 0);
	assert_false(has);
}

static void test_trailing_records_ignored(void **state)
{
	(void)state;
	struct spec s = { .sni = "a.test" };
	build(&s, &hello);
	size_t len = hello.len;
	/* Early data after the ClientHello's records is not the reader's business. */
	memcpy(hello.b + len, "\x17\x03\x03\x00\x01x", 6);
	struct egr_host sni;
	bool has;
	assert_int_equal(egr_hello_sni(hello.b, len + 6, &sni, &has), 0);
	assert_string_equal(sni.text, "a.test");
}

static void test_every_prefix_incomplete(void **state)
{
	(void)state;
	size_t sizes[] = { 0, 20, 100 };
	for (size_t k = 0; k < 3; k++) {
		struct spec s = { .sni = "files.pythonhosted.org", .record_size = sizes[k] };
		build(&s, &hello);
		for (size_t n = 0; n < hello.len; n++) {
			struct egr_host sni;
			bool has;
			int r = egr_hello_sni(hello.b, n, &sni, &has);
			if (r != -EAGAIN)
				fprintf(stderr, "records of %zu, prefix %zu: %d\n", sizes[k], n, r);
			assert_int_equal(r, -EAGAIN);
		}
		struct egr_host sni;
		bool has;
		assert_int_equal(egr_hello_sni(hello.b, hello.len, &sni, &has), 0);
		assert_string_equal(sni.text, "files.pythonhosted.org");
	}
}

static void test_malformed(void **state)
{
	(void)state;
	const struct spec bad[] = {
		{ .sni = "a.test", .dup_ext = true },
		{ .sni = "a.test", .two_names = true },
		{ .sni = "a.test", .name_type = 1 },
		{ .sni = "a.test", .sni_list_delta = 1 },
		{ .sni = "a.test", .sni_list_delta = -1 },
		{ .sni = "a.test", .ext_len_delta = -1 },
		{ .sni = "a.test", .ext_len_delta = 1 },
		{ .sni = "a.test", .session_len = 33 },
		{ .sni = "a.test", .suites_len = 3 },
		{ .sni = "a.test", .no_compression = true },
		{ .sni = "a.test", .hs_type = 2 },
		{ .sni = "a.test", .extra_message = true },
		{ .sni = "a.test", .record_type = 23 },
		{ .sni = "a.test", .record_version = 0x0201 },
		{ .sni = "127.0.0.1" },   /* RFC 6066: no address literals */
		{ .sni = "[::1]" },
		{ .sni = "" },
		{ .sni = "a..test" },
		{ .sni = "a.test\x01" },
		{ .sni = "127.1" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_fail(&bad[i], -EBADMSG);
}

static void test_empty_record(void **state)
{
	(void)state;
	static const uint8_t rec[] = { 22, 3, 1, 0, 0, 1, 0, 0, 0 };
	struct egr_host sni;
	bool has;
	assert_int_equal(egr_hello_sni(rec, sizeof(rec), &sni, &has), -EBADMSG);
	static const uint8_t big[] = { 22, 3, 1, 0x40, 0x01 }; /* 16385 bytes */
	assert_int_equal(egr_hello_sni(big, sizeof(big), &sni, &has), -EBADMSG);
	static const uint8_t http[] = "GET / HTTP/1.1\r\n";
	assert_int_equal(egr_hello_sni(http, sizeof(http) - 1, &sni, &has), -EBADMSG);
}

static void test_limits(void **state)
{
	(void)state;
	struct egr_host sni;
	bool has;
	/* A message just at EGR_MAX_HELLO reads; one byte more is too big. */
	struct spec s = { .sni = "a.test", .padding = 1 };
	build(&s, &hello);
	size_t base = hello.len - 5 - 4; /* body length with 1 byte of padding */
	s.padding = 1 + (EGR_MAX_HELLO - base);
	s.record_size = 4096;
	assert_int_equal(run(&s, &sni, &has), 0);
	assert_string_equal(sni.text, "a.test");
	s.padding++;
	assert_int_equal(run(&s, &sni, &has), -E2BIG);

	/* Too many records. */
	struct spec many = { .sni = "a.test", .padding = 200, .record_size = 16 };
	assert_int_equal(run(&many, &sni, &has), -E2BIG);
	struct spec enough = { .sni = "a.test", .record_size = 64 };
	build(&enough, &hello);
	assert_true(hello.len / (64 + 5) < EGR_MAX_HELLO_RECORDS);
	assert_int_equal(egr_hello_sni(hello.b, hello.len, &sni, &has), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sni),
		cmocka_unit_test(test_no_sni),
		cmocka_unit_test(test_trailing_records_ignored),
		cmocka_unit_test(test_every_prefix_incomplete),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_empty_record),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
