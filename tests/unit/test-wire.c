/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the frame codec (wire/wire.c, wire/status.c): every cursor getter at its
 * bounds, the writer's sticky failure, golden encodings of each frame layout with truncation
 * and bit-flip sweeps, header checks that only an authentic frame can reach (built with an
 * independent HMAC), the payload decoders' range checks and the /proc/<pid>/status parser.
 *
 * The golden MACs were computed independently of this code (Python's hmac module) over
 * direction | header | payload with the key 00 01 02 ... 1f.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "wire.h"

static const uint8_t test_key[WIRE_KEY_LEN] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};

/* A pointer no getter ever stores, to prove outputs are untouched on failure. */
#define SENTINEL_PTR ((const uint8_t *)(uintptr_t)0x5a5a5a5a)

static struct wire_mac *mac_fixed(void)
{
	struct wire_mac *m = wire_mac_new(test_key);
	assert_non_null(m);
	return m;
}

/* ---- cursor getters: exact fit, every shorter length, one byte long ------------------------ */

/* Bytes every fixed-width getter reads from; one spare byte follows each exact encoding. */
static const uint8_t num_src[] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09 };
/* u32 length 3 | "abc", then a spare byte. */
static const uint8_t sub_src[] = { 0x00, 0x00, 0x00, 0x03, 'a', 'b', 'c', 'x' };

struct getter_case {
	const uint8_t *enc; /* exact encoding, followed by one spare byte */
	size_t len;         /* exact length */
	/* Runs one getter: on success checks the value, on failure checks the out untouched. */
	bool (*run)(struct wire_rd *r);
};

static bool run_u8(struct wire_rd *r)
{
	uint8_t v = 0xa5;
	if (!wire_get_u8(r, &v)) {
		assert_int_equal(v, 0xa5);
		return false;
	}
	assert_int_equal(v, 0x01);
	return true;
}

static bool run_u16(struct wire_rd *r)
{
	uint16_t v = 0xa5a5;
	if (!wire_get_u16(r, &v)) {
		assert_int_equal(v, 0xa5a5);
		return false;
	}
	assert_int_equal(v, 0x0102);
	return true;
}

static bool run_u32(struct wire_rd *r)
{
	uint32_t v = 0xa5a5a5a5u;
	if (!wire_get_u32(r, &v)) {
		assert_int_equal(v, 0xa5a5a5a5u);
		return false;
	}
	assert_int_equal(v, 0x01020304u);
	return true;
}

static bool run_u64(struct wire_rd *r)
{
	uint64_t v = 0xa5a5a5a5a5a5a5a5u;
	if (!wire_get_u64(r, &v)) {
		assert_true(v == 0xa5a5a5a5a5a5a5a5u);
		return false;
	}
	assert_true(v == 0x0102030405060708u);
	return true;
}

static bool run_bytes(struct wire_rd *r)
{
	uint8_t out[5], untouched[5];
	memset(out, 0xa5, sizeof(out));
	memset(untouched, 0xa5, sizeof(untouched));
	if (!wire_get_bytes(r, out, sizeof(out))) {
		assert_memory_equal(out, untouched, sizeof(out));
		return false;
	}
	assert_memory_equal(out, num_src, sizeof(out));
	return true;
}

static bool run_view(struct wire_rd *r)
{
	const uint8_t *base = r->p;
	struct wire_rd v = { SENTINEL_PTR, 77 };
	if (!wire_get_view(r, 5, &v)) {
		assert_ptr_equal(v.p, SENTINEL_PTR);
		assert_int_equal(v.len, 77);
		return false;
	}
	assert_ptr_equal(v.p, base);
	assert_int_equal(v.len, 5);
	return true;
}

static bool run_sub(struct wire_rd *r)
{
	const uint8_t *base = r->p;
	struct wire_rd v = { SENTINEL_PTR, 77 };
	if (!wire_get_sub(r, &v)) {
		assert_ptr_equal(v.p, SENTINEL_PTR);
		assert_int_equal(v.len, 77);
		return false;
	}
	assert_ptr_equal(v.p, base + 4);
	assert_int_equal(v.len, 3);
	return true;
}

static bool run_str(struct wire_rd *r)
{
	char *const untouched = (char *)(uintptr_t)0x5a5a5a5a;
	char *s = untouched;
	if (!wire_get_str(r, 3, &s)) {
		assert_ptr_equal(s, untouched);
		return false;
	}
	assert_string_equal(s, "abc");
	free(s);
	return true;
}

static struct getter_case get_u8_case = { num_src, 1, run_u8 };
static struct getter_case get_u16_case = { num_src, 2, run_u16 };
static struct getter_case get_u32_case = { num_src, 4, run_u32 };
static struct getter_case get_u64_case = { num_src, 8, run_u64 };
static struct getter_case get_bytes_case = { num_src, 5, run_bytes };
static struct getter_case get_view_case = { num_src, 5, run_view };
static struct getter_case get_sub_case = { sub_src, 7, run_sub };
static struct getter_case get_str_case = { sub_src, 7, run_str };

static void test_getter_exact(void **state)
{
	const struct getter_case *c = *state;
	struct wire_rd r;
	wire_rd_init(&r, c->enc, c->len);
	assert_true(c->run(&r));
	assert_true(wire_done(&r));
	assert_ptr_equal(r.p, c->enc + c->len);
}

/* Every shorter length, including one byte short: fails, cursor and out untouched. */
static void test_getter_short(void **state)
{
	const struct getter_case *c = *state;
	for (size_t n = 0; n < c->len; n++) {
		struct wire_rd r;
		wire_rd_init(&r, c->enc, n);
		assert_false(c->run(&r));
		assert_ptr_equal(r.p, c->enc);
		assert_int_equal(r.len, n);
	}
}

/* One byte long: the getter succeeds and leaves the trailing byte, so wire_done is false. */
static void test_getter_long(void **state)
{
	const struct getter_case *c = *state;
	struct wire_rd r;
	wire_rd_init(&r, c->enc, c->len + 1);
	assert_true(c->run(&r));
	assert_false(wire_done(&r));
	assert_int_equal(r.len, 1);
	assert_ptr_equal(r.p, c->enc + c->len);
}

static void test_get_sub_huge_length(void **state)
{
	(void)state;
	static const uint8_t enc[] = { 0xff, 0xff, 0xff, 0xff, 'a' };
	struct wire_rd r, v = { SENTINEL_PTR, 77 };
	wire_rd_init(&r, enc, sizeof(enc));
	assert_false(wire_get_sub(&r, &v));
	assert_ptr_equal(r.p, enc);
	assert_int_equal(r.len, sizeof(enc));
	assert_ptr_equal(v.p, SENTINEL_PTR);
	char *s = NULL;
	assert_false(wire_get_str(&r, SIZE_MAX, &s));
	assert_null(s);
	assert_int_equal(r.len, sizeof(enc));
}

static void test_get_view_zero(void **state)
{
	(void)state;
	struct wire_rd r, v = { SENTINEL_PTR, 77 };
	wire_rd_init(&r, num_src, 0);
	assert_true(wire_get_view(&r, 0, &v));
	assert_int_equal(v.len, 0);
	assert_true(wire_done(&r));
	assert_true(wire_get_bytes(&r, NULL, 0));
}

/* Length max+1 fails with the cursor and out untouched; length max succeeds. */
static void test_get_str_over_max(void **state)
{
	(void)state;
	static const uint8_t enc[] = { 0x00, 0x00, 0x00, 0x04, 'a', 'b', 'c', 'd' };
	struct wire_rd r;
	char *s = NULL;
	wire_rd_init(&r, enc, sizeof(enc));
	assert_false(wire_get_str(&r, 3, &s));
	assert_null(s);
	assert_ptr_equal(r.p, enc);
	assert_int_equal(r.len, sizeof(enc));
	assert_true(wire_get_str(&r, 4, &s));
	assert_string_equal(s, "abcd");
	assert_true(wire_done(&r));
	free(s);
}

/* The same at the protocol's own limit, WIRE_MAX_STRING. */
static void test_get_str_max_string(void **state)
{
	(void)state;
	_cleanup_free_ uint8_t *buf = malloc(4 + WIRE_MAX_STRING + 1);
	assert_non_null(buf);
	struct wire_wr w;
	wire_wr_init(&w, buf, 4 + WIRE_MAX_STRING + 1);
	assert_true(wire_put_u32(&w, WIRE_MAX_STRING + 1));
	memset(buf + 4, 'q', WIRE_MAX_STRING + 1);

	struct wire_rd r;
	char *s = NULL;
	wire_rd_init(&r, buf, 4 + WIRE_MAX_STRING + 1);
	assert_false(wire_get_str(&r, WIRE_MAX_STRING, &s));
	assert_null(s);
	assert_int_equal(r.len, 4 + WIRE_MAX_STRING + 1);

	wire_wr_init(&w, buf, 4);
	assert_true(wire_put_u32(&w, WIRE_MAX_STRING));
	wire_rd_init(&r, buf, 4 + WIRE_MAX_STRING);
	assert_true(wire_get_str(&r, WIRE_MAX_STRING, &s));
	assert_int_equal(strlen(s), WIRE_MAX_STRING);
	assert_true(wire_done(&r));
	free(s);
}

static void test_get_str_interior_nul(void **state)
{
	(void)state;
	for (size_t at = 0; at < 3; at++) {
		uint8_t enc[] = { 0x00, 0x00, 0x00, 0x03, 'a', 'b', 'c' };
		enc[4 + at] = '\0';
		struct wire_rd r;
		char *s = NULL;
		wire_rd_init(&r, enc, sizeof(enc));
		assert_false(wire_get_str(&r, 16, &s));
		assert_null(s);
		assert_ptr_equal(r.p, enc);
		assert_int_equal(r.len, sizeof(enc));
	}
}

static void test_get_str_empty(void **state)
{
	(void)state;
	static const uint8_t enc[] = { 0x00, 0x00, 0x00, 0x00 };
	struct wire_rd r;
	char *s = NULL;
	wire_rd_init(&r, enc, sizeof(enc));
	assert_true(wire_get_str(&r, 0, &s));
	assert_string_equal(s, "");
	assert_true(wire_done(&r));
	free(s);
}

/* ---- writer --------------------------------------------------------------------------------- */

static const uint8_t put_golden[] = {
	0x01,                                           /* u8 */
	0x02, 0x03,                                     /* u16 */
	0x04, 0x05, 0x06, 0x07,                         /* u32 */
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, /* u64 */
	'x', 'y',                                       /* bytes */
	0x00, 0x00, 0x00, 0x03, 'a', 'b', 'c',          /* str */
};

static bool put_all(struct wire_wr *w)
{
	return wire_put_u8(w, 0x01) && wire_put_u16(w, 0x0203) && wire_put_u32(w, 0x04050607u) &&
	       wire_put_u64(w, 0x08090a0b0c0d0e0fu) && wire_put_bytes(w, "xy", 2) &&
	       wire_put_str(w, "abc", 3, 3);
}

static void test_put_golden_exact_fit(void **state)
{
	(void)state;
	uint8_t buf[sizeof(put_golden)];
	struct wire_wr w;
	wire_wr_init(&w, buf, sizeof(buf));
	assert_true(put_all(&w));
	assert_false(w.failed);
	assert_int_equal(w.len, sizeof(put_golden));
	assert_memory_equal(buf, put_golden, sizeof(put_golden));
}

/* One byte short anywhere: the put that does not fit fails and nothing later succeeds. */
static void test_put_one_short(void **state)
{
	(void)state;
	for (size_t cap = 0; cap < sizeof(put_golden); cap++) {
		uint8_t buf[sizeof(put_golden) + 1];
		memset(buf, 0xee, sizeof(buf));
		struct wire_wr w;
		wire_wr_init(&w, buf, cap);
		assert_false(put_all(&w));
		assert_true(w.failed);
		assert_true(w.len <= cap);
		assert_int_equal(buf[cap], 0xee); /* never wrote past cap */
	}
}

static void test_put_overflow_sticks(void **state)
{
	(void)state;
	uint8_t buf[8];
	struct wire_wr w;
	wire_wr_init(&w, buf, 3);
	assert_false(wire_put_u32(&w, 1));
	assert_true(w.failed);
	assert_int_equal(w.len, 0);
	/* These would fit, but the writer stays failed. */
	assert_false(wire_put_u8(&w, 1));
	assert_false(wire_put_u16(&w, 1));
	assert_false(wire_put_bytes(&w, "", 0));
	assert_false(wire_put_str(&w, "", 0, 0));
	assert_true(w.failed);
	assert_int_equal(w.len, 0);
}

static void test_put_str_over_max(void **state)
{
	(void)state;
	uint8_t buf[16];
	struct wire_wr w;
	wire_wr_init(&w, buf, sizeof(buf));
	assert_false(wire_put_str(&w, "abcd", 4, 3));
	assert_true(w.failed);
	assert_int_equal(w.len, 0);
	assert_false(wire_put_u8(&w, 0));

	wire_wr_init(&w, buf, sizeof(buf));
	assert_true(wire_put_str(&w, "abcd", 4, 4));
	assert_int_equal(w.len, 8);
}

/* ---- independent MAC, for frames wire_seal would never build ------------------------------- */

/* HMAC-SHA-256(test_key, dir | hdr | payload) through EVP_MAC directly. */
static void raw_mac(uint8_t dir, const uint8_t *hdr, const uint8_t *payload, size_t payload_len,
		    uint8_t out[WIRE_MAC_LEN])
{
	char digest[] = "SHA256";
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	assert_non_null(mac);
	EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);
	assert_non_null(ctx);
	size_t out_len = 0;
	assert_true(EVP_MAC_init(ctx, test_key, WIRE_KEY_LEN, params));
	assert_true(EVP_MAC_update(ctx, &dir, 1));
	assert_true(EVP_MAC_update(ctx, hdr, WIRE_HEADER_LEN));
	if (payload_len)
		assert_true(EVP_MAC_update(ctx, payload, payload_len));
	assert_true(EVP_MAC_final(ctx, out, &out_len, WIRE_MAC_LEN));
	assert_int_equal(out_len, WIRE_MAC_LEN);
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
}

/*
 * Builds header(version, type, flags, len_field, seq) | payload | authentic MAC into out and
 * returns the frame length. len_field need not match payload_len.
 */
static size_t build_frame(uint8_t dir, uint8_t version, uint8_t type, uint16_t flags,
			  uint32_t len_field, uint64_t seq, const uint8_t *payload,
			  size_t payload_len, uint8_t *out, size_t cap)
{
	struct wire_wr w;
	wire_wr_init(&w, out, cap);
	assert_true(wire_put_u8(&w, version) && wire_put_u8(&w, type) && wire_put_u16(&w, flags) &&
		    wire_put_u32(&w, len_field) && wire_put_u64(&w, seq) &&
		    wire_put_bytes(&w, payload, payload_len));
	uint8_t tag[WIRE_MAC_LEN];
	raw_mac(dir, out, out + WIRE_HEADER_LEN, payload_len, tag);
	assert_true(wire_put_bytes(&w, tag, sizeof(tag)));
	return w.len;
}

/* wire_open must fail with err and leave both outputs untouched. */
static void assert_open_error(struct wire_mac *m, enum wire_dir dir, uint64_t seq,
			      const uint8_t *buf, size_t len, int err)
{
	struct wire_hdr h, untouched;
	memset(&h, 0x5a, sizeof(h));
	memset(&untouched, 0x5a, sizeof(untouched));
	struct wire_rd p = { SENTINEL_PTR, 77 };
	int r = wire_open(m, dir, seq, buf, len, &h, &p);
	if (r != err)
		print_error("wire_open(len %zu) = %d, wanted %d\n", len, r, err);
	assert_int_equal(r, err);
	assert_memory_equal(&h, &untouched, sizeof(h));
	assert_ptr_equal(p.p, SENTINEL_PTR);
	assert_int_equal(p.len, 77);
}

/* ---- golden frames, one per payload layout ------------------------------------------------- */

static const uint8_t started_payload[] = { 0x00, 0x00, 0x00, 0x2a }; /* pid 42 */

static const uint8_t exited_payload[] = {
	0x01,                                           /* how: WIRE_EXIT_CODE */
	0x00, 0x00, 0x00, 0x03,                         /* code 3 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x0f, 0x42, 0x40, /* utime 1000000 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xd0, 0x90, /* stime 250000 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, /* maxrss 2048 */
};

static const struct wire_exited exited_value = {
	.how = WIRE_EXIT_CODE, .code = 3, .utime_usec = 1000000, .stime_usec = 250000,
	.maxrss_kib = 2048,
};

/* identity: pid 1, uid 1000..1003, gid 2000..2003, caps 1..5, nnp 1, seccomp 2, filters 3 */
static const uint8_t identity_payload[] = {
	0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x03, 0xe8, 0x00, 0x00, 0x03, 0xe9, 0x00, 0x00, 0x03, 0xea, 0x00, 0x00, 0x03, 0xeb,
	0x00, 0x00, 0x07, 0xd0, 0x00, 0x00, 0x07, 0xd1, 0x00, 0x00, 0x07, 0xd2, 0x00, 0x00, 0x07, 0xd3,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
	0x01, 0x02,
	0x00, 0x00, 0x00, 0x03,
};

static const struct wire_identity identity_value = {
	.pid = 1, .uid = { 1000, 1001, 1002, 1003 }, .gid = { 2000, 2001, 2002, 2003 },
	.cap_inh = 1, .cap_prm = 2, .cap_eff = 3, .cap_bnd = 4, .cap_amb = 5,
	.no_new_privs = 1, .seccomp = 2, .seccomp_filters = 3,
};

static void fill_nonce(uint8_t nonce[WIRE_NONCE_LEN])
{
	for (size_t i = 0; i < WIRE_NONCE_LEN; i++)
		nonce[i] = (uint8_t)(0xa0 + i);
}

static void assert_exited_equal(const struct wire_exited *a, const struct wire_exited *b)
{
	assert_int_equal(a->how, b->how);
	assert_int_equal(a->code, b->code);
	assert_true(a->utime_usec == b->utime_usec);
	assert_true(a->stime_usec == b->stime_usec);
	assert_true(a->maxrss_kib == b->maxrss_kib);
}

static void assert_identity_equal(const struct wire_identity *a, const struct wire_identity *b)
{
	assert_int_equal(a->pid, b->pid);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(a->uid[i], b->uid[i]);
		assert_int_equal(a->gid[i], b->gid[i]);
	}
	assert_true(a->cap_inh == b->cap_inh);
	assert_true(a->cap_prm == b->cap_prm);
	assert_true(a->cap_eff == b->cap_eff);
	assert_true(a->cap_bnd == b->cap_bnd);
	assert_true(a->cap_amb == b->cap_amb);
	assert_int_equal(a->no_new_privs, b->no_new_privs);
	assert_int_equal(a->seccomp, b->seccomp);
	assert_int_equal(a->seccomp_filters, b->seccomp_filters);
}

static void encode_started(struct wire_wr *w)
{
	assert_true(wire_put_u32(w, 42));
}

static void decode_started(struct wire_rd *p)
{
	uint32_t pid = 0;
	assert_true(wire_get_u32(p, &pid));
	assert_true(wire_done(p));
	assert_int_equal(pid, 42);
}

static void encode_exited(struct wire_wr *w)
{
	assert_true(wire_put_exited(w, &exited_value));
}

static void decode_exited(struct wire_rd *p)
{
	struct wire_exited e;
	assert_int_equal(wire_get_exited(p, &e), 0);
	assert_exited_equal(&e, &exited_value);
}

static void encode_hello(struct wire_wr *w)
{
	uint8_t nonce[WIRE_NONCE_LEN];
	fill_nonce(nonce);
	assert_true(wire_put_bytes(w, nonce, sizeof(nonce)));
	assert_true(wire_put_identity(w, &identity_value));
}

static void decode_hello(struct wire_rd *p)
{
	uint8_t nonce[WIRE_NONCE_LEN], want[WIRE_NONCE_LEN];
	struct wire_identity id;
	fill_nonce(want);
	assert_true(wire_get_bytes(p, nonce, sizeof(nonce)));
	assert_memory_equal(nonce, want, sizeof(nonce));
	assert_int_equal(wire_get_identity(p, &id), 0);
	assert_true(wire_done(p));
	assert_identity_equal(&id, &identity_value);
}

struct frame_case {
	uint8_t type;
	uint64_t seq;
	uint8_t hdr[WIRE_HEADER_LEN];
	uint8_t mac[WIRE_MAC_LEN];
	size_t payload_len;
	void (*encode)(struct wire_wr *w); /* builds the golden payload via the writer */
	void (*decode)(struct wire_rd *p); /* decodes an opened payload, checks every field */
};

static struct frame_case started_case = {
	.type = WIRE_STARTED, .seq = 2,
	.hdr = { 0x01, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04,
		 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02 },
	.mac = { 0xb2, 0x5a, 0xed, 0x66, 0x32, 0xce, 0xf5, 0x28, 0x44, 0xc5, 0x05, 0xcb, 0xb9, 0x8f,
		 0xa6, 0x12, 0xef, 0xb4, 0x5b, 0x77, 0x11, 0xa3, 0xb8, 0x8e, 0xd1, 0x7e, 0xfb, 0x09,
		 0x96, 0xe8, 0xad, 0x0a },
	.payload_len = sizeof(started_payload),
	.encode = encode_started, .decode = decode_started,
};

static struct frame_case exited_case = {
	.type = WIRE_EXITED, .seq = 3,
	.hdr = { 0x01, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d,
		 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03 },
	.mac = { 0x33, 0xd2, 0x9f, 0x97, 0xdb, 0x66, 0x73, 0x18, 0x95, 0xaa, 0x0c, 0x54, 0x2a, 0xc8,
		 0xdc, 0x22, 0xfe, 0xae, 0x0b, 0x66, 0xfd, 0x67, 0x17, 0x8e, 0x54, 0x93, 0xb9, 0x09,
		 0x5d, 0x35, 0x98, 0xa0 },
	.payload_len = sizeof(exited_payload),
	.encode = encode_exited, .decode = decode_exited,
};

static struct frame_case hello_case = {
	.type = WIRE_HELLO, .seq = 0,
	.hdr = { 0x01, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x72,
		 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 },
	.mac = { 0x23, 0x78, 0xc0, 0xc0, 0xfa, 0xe6, 0xad, 0xde, 0x59, 0x29, 0x28, 0xe0, 0x18, 0x0b,
		 0xac, 0x06, 0x8b, 0x8c, 0xbd, 0x09, 0xb9, 0x5e, 0x15, 0x0e, 0x67, 0x91, 0xe8, 0x56,
		 0x36, 0xa2, 0x8a, 0xa6 },
	.payload_len = WIRE_NONCE_LEN + sizeof(identity_payload),
	.encode = encode_hello, .decode = decode_hello,
};

#define CASE_FRAME_CAP (WIRE_HEADER_LEN + 256 + WIRE_MAC_LEN)

/* Encodes the case's payload, checks its length, seals it; returns the frame length. */
static size_t seal_case(const struct frame_case *c, struct wire_mac *m, enum wire_dir dir,
			uint8_t *frame)
{
	uint8_t payload[256];
	struct wire_wr w;
	wire_wr_init(&w, payload, sizeof(payload));
	c->encode(&w);
	assert_false(w.failed);
	assert_int_equal(w.len, c->payload_len);
	int n = wire_seal(m, dir, c->type, c->seq, payload, w.len, frame, CASE_FRAME_CAP);
	assert_int_equal(n, WIRE_HEADER_LEN + c->payload_len + WIRE_MAC_LEN);
	return (size_t)n;
}

static void test_frame_golden(void **state)
{
	const struct frame_case *c = *state;
	struct wire_mac *m = mac_fixed();
	uint8_t frame[CASE_FRAME_CAP];
	size_t n = seal_case(c, m, WIRE_DIR_TO_SUPERVISOR, frame);

	assert_memory_equal(frame, c->hdr, WIRE_HEADER_LEN);
	assert_memory_equal(frame + n - WIRE_MAC_LEN, c->mac, WIRE_MAC_LEN);
	/* The test's own HMAC agrees, so the frames built with it below are authentic. */
	uint8_t tag[WIRE_MAC_LEN];
	raw_mac(WIRE_DIR_TO_SUPERVISOR, frame, frame + WIRE_HEADER_LEN, c->payload_len, tag);
	assert_memory_equal(tag, c->mac, WIRE_MAC_LEN);

	struct wire_hdr h;
	struct wire_rd p;
	assert_int_equal(wire_open(m, WIRE_DIR_TO_SUPERVISOR, c->seq, frame, n, &h, &p), 0);
	assert_int_equal(h.version, WIRE_VERSION);
	assert_int_equal(h.type, c->type);
	assert_int_equal(h.flags, 0);
	assert_int_equal(h.payload_len, c->payload_len);
	assert_true(h.seq == c->seq);
	assert_ptr_equal(p.p, frame + WIRE_HEADER_LEN);
	assert_int_equal(p.len, c->payload_len);
	c->decode(&p);
	wire_mac_free(m);
}

/* Golden payload bytes, independent of the frame. */
static void test_payload_golden(void **state)
{
	(void)state;
	uint8_t buf[256];
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof(buf));
	encode_started(&w);
	assert_int_equal(w.len, sizeof(started_payload));
	assert_memory_equal(buf, started_payload, sizeof(started_payload));

	wire_wr_init(&w, buf, sizeof(buf));
	encode_exited(&w);
	assert_int_equal(w.len, sizeof(exited_payload));
	assert_memory_equal(buf, exited_payload, sizeof(exited_payload));

	wire_wr_init(&w, buf, sizeof(buf));
	assert_true(wire_put_identity(&w, &identity_value));
	assert_int_equal(w.len, sizeof(identity_payload));
	assert_memory_equal(buf, identity_payload, sizeof(identity_payload));
}

/* Every proper prefix, and the frame plus one byte: -EBADMSG. */
static void test_frame_truncation(void **state)
{
	const struct frame_case *c = *state;
	struct wire_mac *m = mac_fixed();
	uint8_t frame[CASE_FRAME_CAP + 1];
	size_t n = seal_case(c, m, WIRE_DIR_TO_SUPERVISOR, frame);
	for (size_t len = 0; len < n; len++)
		assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, c->seq, frame, len, -EBADMSG);
	frame[n] = 0;
	assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, c->seq, frame, n + 1, -EBADMSG);
	wire_mac_free(m);
}

/* Every single-bit change anywhere in the frame: -EBADMSG, never success or -EPROTO. */
static void test_frame_bitflip(void **state)
{
	const struct frame_case *c = *state;
	struct wire_mac *m = mac_fixed();
	uint8_t frame[CASE_FRAME_CAP];
	size_t n = seal_case(c, m, WIRE_DIR_TO_SUPERVISOR, frame);
	for (size_t bit = 0; bit < n * 8; bit++) {
		frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, c->seq, frame, n, -EBADMSG);
		frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	struct wire_hdr h;
	struct wire_rd p;
	assert_int_equal(wire_open(m, WIRE_DIR_TO_SUPERVISOR, c->seq, frame, n, &h, &p), 0);
	wire_mac_free(m);
}

/* A frame sealed for one direction does not open in the other (no reflection). */
static void test_frame_wrong_direction(void **state)
{
	const struct frame_case *c = *state;
	struct wire_mac *m = mac_fixed();
	uint8_t frame[CASE_FRAME_CAP];
	size_t n = seal_case(c, m, WIRE_DIR_TO_WORKER, frame);
	assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, c->seq, frame, n, -EBADMSG);
	n = seal_case(c, m, WIRE_DIR_TO_SUPERVISOR, frame);
	assert_open_error(m, WIRE_DIR_TO_WORKER, c->seq, frame, n, -EBADMSG);
	wire_mac_free(m);
}

/* An authentic frame with the wrong sequence number: -EPROTO, outputs untouched. */
static void test_frame_wrong_seq(void **state)
{
	const struct frame_case *c = *state;
	struct wire_mac *m = mac_fixed();
	uint8_t frame[CASE_FRAME_CAP];
	size_t n = seal_case(c, m, WIRE_DIR_TO_SUPERVISOR, frame);
	assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, c->seq + 1, frame, n, -EPROTO);
	assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, c->seq - 1, frame, n, -EPROTO);
	assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, c->seq ^ (1ull << 63), frame, n, -EPROTO);
	wire_mac_free(m);
}

/* A frame MACed under another key is rejected like any forgery. */
static void test_frame_wrong_key(void **state)
{
	const struct frame_case *c = *state;
	uint8_t other_key[WIRE_KEY_LEN];
	memcpy(other_key, test_key, sizeof(other_key));
	other_key[WIRE_KEY_LEN - 1] ^= 1;
	struct wire_mac *m = mac_fixed(), *other = wire_mac_new(other_key);
	assert_non_null(other);
	uint8_t frame[CASE_FRAME_CAP];
	size_t n = seal_case(c, other, WIRE_DIR_TO_SUPERVISOR, frame);
	assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, c->seq, frame, n, -EBADMSG);
	wire_mac_free(other);
	wire_mac_free(m);
}

/* ---- seal and open at the edges ----------------------------------------------------------- */

#define STARTED_FRAME_LEN (WIRE_HEADER_LEN + sizeof(started_payload) + WIRE_MAC_LEN)

/*
 * An authentic STARTED frame (pid 42, seq 2, to the supervisor) with the given version, flags
 * and payload_len field, built into frame; returns its length.
 */
static size_t build_started(uint8_t version, uint16_t flags, uint32_t len_field,
			    uint8_t frame[STARTED_FRAME_LEN])
{
	return build_frame(WIRE_DIR_TO_SUPERVISOR, version, WIRE_STARTED, flags, len_field, 2,
			   started_payload, sizeof(started_payload), frame, STARTED_FRAME_LEN);
}

static void test_empty_payload_round_trip(void **state)
{
	(void)state;
	static const uint8_t want_hdr[] = { 0x01, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
					    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static const uint8_t want_mac[] = {
		0x52, 0xdf, 0xc8, 0x86, 0xb9, 0xc7, 0xde, 0xee, 0x26, 0xb2, 0x38, 0xbd, 0x32, 0x3f, 0x9d, 0x37,
		0xb1, 0x12, 0xb7, 0x56, 0x9b, 0xe7, 0x94, 0x15, 0x7d, 0xbe, 0x1f, 0xbc, 0x64, 0xf8, 0x05, 0x46,
	};
	struct wire_mac *m = mac_fixed();
	uint8_t frame[WIRE_HEADER_LEN + WIRE_MAC_LEN];
	assert_int_equal(wire_seal(m, WIRE_DIR_TO_SUPERVISOR, WIRE_READY, 1, NULL, 0, frame,
				   sizeof(frame)),
			 sizeof(frame));
	assert_memory_equal(frame, want_hdr, sizeof(want_hdr));
	assert_memory_equal(frame + WIRE_HEADER_LEN, want_mac, sizeof(want_mac));
	struct wire_hdr h;
	struct wire_rd p;
	assert_int_equal(wire_open(m, WIRE_DIR_TO_SUPERVISOR, 1, frame, sizeof(frame), &h, &p), 0);
	assert_int_equal(h.type, WIRE_READY);
	assert_int_equal(p.len, 0);
	for (size_t len = 0; len < sizeof(frame); len++)
		assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, 1, frame, len, -EBADMSG);
	wire_mac_free(m);
}

static void test_seal_any_type_and_seq(void **state)
{
	(void)state;
	struct wire_mac *m = mac_fixed();
	uint8_t frame[WIRE_HEADER_LEN + 1 + WIRE_MAC_LEN];
	int n = wire_seal(m, WIRE_DIR_TO_WORKER, 0xff, UINT64_MAX, "z", 1, frame, sizeof(frame));
	assert_int_equal(n, sizeof(frame));
	struct wire_hdr h;
	struct wire_rd p;
	assert_int_equal(wire_open(m, WIRE_DIR_TO_WORKER, UINT64_MAX, frame, sizeof(frame), &h, &p),
			 0);
	assert_int_equal(h.type, 0xff);
	assert_true(h.seq == UINT64_MAX);
	assert_open_error(m, WIRE_DIR_TO_WORKER, 0, frame, sizeof(frame), -EPROTO);
	wire_mac_free(m);
}

/* WIRE_MAX_PAYLOAD seals and opens; one more byte is -EMSGSIZE; so is a cap one short. */
static void test_seal_oversize(void **state)
{
	(void)state;
	struct wire_mac *m = mac_fixed();
	_cleanup_free_ uint8_t *payload = calloc(1, WIRE_MAX_PAYLOAD + 1);
	_cleanup_free_ uint8_t *frame = malloc(WIRE_MAX_FRAME + 2);
	assert_non_null(payload);
	assert_non_null(frame);

	assert_int_equal(wire_seal(m, WIRE_DIR_TO_SUPERVISOR, WIRE_EVENT, 0, payload,
				   WIRE_MAX_PAYLOAD + 1, frame, WIRE_MAX_FRAME + 2),
			 -EMSGSIZE);
	assert_int_equal(wire_seal(m, WIRE_DIR_TO_SUPERVISOR, WIRE_EVENT, 0, payload,
				   WIRE_MAX_PAYLOAD, frame, WIRE_MAX_FRAME - 1),
			 -EMSGSIZE);
	assert_int_equal(wire_seal(m, WIRE_DIR_TO_SUPERVISOR, WIRE_STARTED, 0, started_payload,
				   sizeof(started_payload), frame, STARTED_FRAME_LEN - 1),
			 -EMSGSIZE);

	int n = wire_seal(m, WIRE_DIR_TO_SUPERVISOR, WIRE_EVENT, 0, payload, WIRE_MAX_PAYLOAD,
			  frame, WIRE_MAX_FRAME);
	assert_int_equal(n, WIRE_MAX_FRAME);
	struct wire_hdr h;
	struct wire_rd p;
	assert_int_equal(wire_open(m, WIRE_DIR_TO_SUPERVISOR, 0, frame, WIRE_MAX_FRAME, &h, &p), 0);
	assert_int_equal(p.len, WIRE_MAX_PAYLOAD);
	wire_mac_free(m);
}

/* An authentic frame whose payload_len is over the limit (and the frame over WIRE_MAX_FRAME). */
static void test_open_oversize(void **state)
{
	(void)state;
	struct wire_mac *m = mac_fixed();
	_cleanup_free_ uint8_t *payload = calloc(1, WIRE_MAX_PAYLOAD + 1);
	_cleanup_free_ uint8_t *frame = malloc(WIRE_MAX_FRAME + 1);
	assert_non_null(payload);
	assert_non_null(frame);
	size_t n = build_frame(WIRE_DIR_TO_SUPERVISOR, WIRE_VERSION, WIRE_EVENT, 0,
			       WIRE_MAX_PAYLOAD + 1, 0, payload, WIRE_MAX_PAYLOAD + 1, frame,
			       WIRE_MAX_FRAME + 1);
	assert_int_equal(n, WIRE_MAX_FRAME + 1);
	assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, 0, frame, n, -EBADMSG);
	wire_mac_free(m);
}

/* The control: a frame built with the test's own HMAC and a valid header opens. */
static void test_open_raw_control(void **state)
{
	(void)state;
	struct wire_mac *m = mac_fixed();
	uint8_t frame[STARTED_FRAME_LEN];
	size_t n = build_started(WIRE_VERSION, 0, sizeof(started_payload), frame);
	struct wire_hdr h;
	struct wire_rd p;
	assert_int_equal(wire_open(m, WIRE_DIR_TO_SUPERVISOR, 2, frame, n, &h, &p), 0);
	assert_memory_equal(frame, started_case.hdr, WIRE_HEADER_LEN);
	wire_mac_free(m);
}

/* Authentic, but a version other than WIRE_VERSION: -EBADMSG (not -EPROTO, even at a bad seq). */
static void test_open_unknown_version(void **state)
{
	(void)state;
	static const uint8_t versions[] = { 0, 2, 0x81, 0xff };
	struct wire_mac *m = mac_fixed();
	uint8_t frame[STARTED_FRAME_LEN];
	for (size_t i = 0; i < sizeof(versions); i++) {
		size_t n = build_started(versions[i], 0, sizeof(started_payload), frame);
		assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, 2, frame, n, -EBADMSG);
		assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, 3, frame, n, -EBADMSG);
	}
	wire_mac_free(m);
}

/* Authentic, but any flag bit set: -EBADMSG. */
static void test_open_unknown_flags(void **state)
{
	(void)state;
	struct wire_mac *m = mac_fixed();
	uint8_t frame[STARTED_FRAME_LEN];
	for (unsigned bit = 0; bit < 16; bit++) {
		size_t n = build_started(WIRE_VERSION, (uint16_t)(1u << bit),
					 sizeof(started_payload), frame);
		assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, 2, frame, n, -EBADMSG);
	}
	wire_mac_free(m);
}

/* Authentic, but payload_len disagrees with the bytes received: -EBADMSG. */
static void test_open_length_mismatch(void **state)
{
	(void)state;
	static const uint32_t fields[] = { 0, 3, 5, 36, UINT32_MAX };
	struct wire_mac *m = mac_fixed();
	uint8_t frame[STARTED_FRAME_LEN];
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		size_t n = build_started(WIRE_VERSION, 0, fields[i], frame);
		assert_open_error(m, WIRE_DIR_TO_SUPERVISOR, 2, frame, n, -EBADMSG);
	}
	wire_mac_free(m);
}

static void test_mac_free_null(void **state)
{
	(void)state;
	assert_null(wire_mac_free(NULL));
	assert_null(wire_mac_free(mac_fixed()));
}

/* ---- EXITED payload ------------------------------------------------------------------------ */

/*
 * wire_get_exited() over len bytes of buf into *e; returns its result. *e is filled with 0x5a
 * first, and a failure must leave it so.
 */
static int get_exited(const uint8_t *buf, size_t len, struct wire_exited *e)
{
	struct wire_exited untouched;
	struct wire_rd r;
	memset(e, 0x5a, sizeof(*e));
	memset(&untouched, 0x5a, sizeof(untouched));
	wire_rd_init(&r, buf, len);
	int ret = wire_get_exited(&r, e);
	if (ret < 0)
		assert_memory_equal(e, &untouched, sizeof(*e));
	return ret;
}

static int decode_exited_raw(uint8_t how, uint32_t code, struct wire_exited *out)
{
	uint8_t buf[sizeof(exited_payload)];
	memcpy(buf, exited_payload, sizeof(buf));
	buf[0] = how;
	buf[1] = (uint8_t)(code >> 24);
	buf[2] = (uint8_t)(code >> 16);
	buf[3] = (uint8_t)(code >> 8);
	buf[4] = (uint8_t)code;
	return get_exited(buf, sizeof(buf), out);
}

static void test_exited_ranges(void **state)
{
	(void)state;
	static const struct {
		uint8_t how;
		uint32_t code;
		bool ok;
	} cases[] = {
		{ WIRE_EXIT_CODE, 0, true },          { WIRE_EXIT_CODE, 255, true },
		{ WIRE_EXIT_CODE, 256, false },       { WIRE_EXIT_CODE, UINT32_MAX, false },
		{ WIRE_EXIT_CODE, 0x80000000u, false },
		{ WIRE_EXIT_SIGNAL, 1, true },        { WIRE_EXIT_SIGNAL, 64, true },
		{ WIRE_EXIT_SIGNAL, 0, false },       { WIRE_EXIT_SIGNAL, 65, false },
		{ WIRE_EXIT_SIGNAL, UINT32_MAX, false },
		{ WIRE_EXIT_NOT_FOUND, 1, true },     { WIRE_EXIT_NOT_FOUND, 4095, true },
		{ WIRE_EXIT_NOT_FOUND, 0, false },    { WIRE_EXIT_NOT_FOUND, 4096, false },
		{ WIRE_EXIT_NOT_FOUND, UINT32_MAX, false },
		{ WIRE_EXIT_NOT_EXEC, 1, true },      { WIRE_EXIT_NOT_EXEC, 4095, true },
		{ WIRE_EXIT_NOT_EXEC, 0, false },     { WIRE_EXIT_NOT_EXEC, 4096, false },
		{ 0, 0, false },                      { 5, 0, false },
		{ 0xff, 1, false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wire_exited e;
		int r = decode_exited_raw(cases[i].how, cases[i].code, &e);
		if (r != (cases[i].ok ? 0 : -EBADMSG))
			print_error("how %u code %u: %d\n", cases[i].how, cases[i].code, r);
		if (cases[i].ok) {
			assert_int_equal(r, 0);
			assert_int_equal(e.how, cases[i].how);
			assert_int_equal(e.code, (int32_t)cases[i].code);
			assert_true(e.maxrss_kib == 2048);
		} else {
			assert_int_equal(r, -EBADMSG);
		}
	}
}

static void test_exited_truncated_and_trailing(void **state)
{
	(void)state;
	uint8_t buf[sizeof(exited_payload) + 1];
	memcpy(buf, exited_payload, sizeof(exited_payload));
	buf[sizeof(exited_payload)] = 0;
	for (size_t len = 0; len <= sizeof(buf); len++) {
		struct wire_exited e;
		int want = len == sizeof(exited_payload) ? 0 : -EBADMSG;
		assert_int_equal(get_exited(buf, len, &e), want);
		if (want == 0)
			assert_exited_equal(&e, &exited_value);
	}
}

/* ---- identity payload --------------------------------------------------------------------- */

/* As get_exited(), for wire_get_identity(). */
static int get_identity(const uint8_t *buf, size_t len, struct wire_identity *id)
{
	struct wire_identity untouched;
	struct wire_rd r;
	memset(id, 0x5a, sizeof(*id));
	memset(&untouched, 0x5a, sizeof(untouched));
	wire_rd_init(&r, buf, len);
	int ret = wire_get_identity(&r, id);
	if (ret < 0)
		assert_memory_equal(id, &untouched, sizeof(*id));
	return ret;
}

static void test_identity_ranges(void **state)
{
	(void)state;
	static const struct {
		uint8_t nnp, seccomp;
		bool ok;
	} cases[] = {
		{ 0, 0, true }, { 1, 2, true }, { 0, 1, true },  { 2, 0, false },
		{ 0xff, 2, false }, { 1, 3, false }, { 0, 0xff, false },
	};
	const size_t nnp_at = sizeof(identity_payload) - 6;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t buf[sizeof(identity_payload)];
		memcpy(buf, identity_payload, sizeof(buf));
		buf[nnp_at] = cases[i].nnp;
		buf[nnp_at + 1] = cases[i].seccomp;
		struct wire_identity id;
		int ret = get_identity(buf, sizeof(buf), &id);
		if (cases[i].ok) {
			assert_int_equal(ret, 0);
			assert_int_equal(id.no_new_privs, cases[i].nnp);
			assert_int_equal(id.seccomp, cases[i].seccomp);
		} else {
			assert_int_equal(ret, -EBADMSG);
		}
	}
}

static void test_identity_round_trip(void **state)
{
	(void)state;
	struct wire_identity id;
	struct wire_rd r;
	wire_rd_init(&r, identity_payload, sizeof(identity_payload));
	assert_int_equal(wire_get_identity(&r, &id), 0);
	assert_true(wire_done(&r));
	assert_identity_equal(&id, &identity_value);
}

static void test_identity_truncated(void **state)
{
	(void)state;
	for (size_t len = 0; len < sizeof(identity_payload); len++) {
		struct wire_identity id;
		assert_int_equal(get_identity(identity_payload, len, &id), -EBADMSG);
	}
}

/*
 * Unlike wire_get_exited, wire_get_identity reads a fixed prefix and leaves what follows for
 * the caller (HELLO's exact length is enforced by the dispatch table): the trailing byte stays
 * in the cursor, so the caller's wire_done() sees it.
 */
static void test_identity_trailing_left_for_caller(void **state)
{
	(void)state;
	uint8_t buf[sizeof(identity_payload) + 1];
	memcpy(buf, identity_payload, sizeof(identity_payload));
	buf[sizeof(identity_payload)] = 0x77;
	struct wire_identity id;
	struct wire_rd r;
	wire_rd_init(&r, buf, sizeof(buf));
	assert_int_equal(wire_get_identity(&r, &id), 0);
	assert_false(wire_done(&r));
	assert_int_equal(r.len, 1);
}

/* ---- wire_equal_ct -------------------------------------------------------------------------- */

static void test_equal_ct(void **state)
{
	(void)state;
	uint8_t a[WIRE_NONCE_LEN], b[WIRE_NONCE_LEN];
	fill_nonce(a);
	fill_nonce(b);
	assert_true(wire_equal_ct(a, b, sizeof(a)));
	assert_true(wire_equal_ct(a, b, 0));
	b[0] ^= 1;
	assert_false(wire_equal_ct(a, b, sizeof(a)));
	assert_true(wire_equal_ct(a + 1, b + 1, sizeof(a) - 1));
	b[0] ^= 1;
	b[sizeof(b) - 1] ^= 0x80;
	assert_false(wire_equal_ct(a, b, sizeof(a)));
	assert_true(wire_equal_ct(a, b, sizeof(a) - 1));
}

/* ---- /proc/<pid>/status --------------------------------------------------------------------- */

static const char *const status_lines[] = {
	"Name:\tcat",
	"Umask:\t0022",
	"State:\tR (running)",
	"Tgid:\t4242",
	"Ngid:\t0",
	"Pid:\t4242",
	"PPid:\t1",
	"TracerPid:\t0",
	"Uid:\t1000\t1001\t1002\t1003",
	"Gid:\t2000\t2001\t2002\t2003",
	"FDSize:\t64",
	"Groups:\t27 1000 ",
	"NStgid:\t4242",
	"NSpid:\t4242",
	"NSpgid:\t4242",
	"NSsid:\t4242",
	"VmPeak:\t    5520 kB",
	"Threads:\t1",
	"SigQ:\t0/63397",
	"SigBlk:\t0000000000000000",
	"CapInh:\t0000000000000001",
	"CapPrm:\t0000000000000002",
	"CapEff:\t0000000000000003",
	"CapBnd:\t000001ffffffffff",
	"CapAmb:\t0000000000000000",
	"NoNewPrivs:\t1",
	"Seccomp:\t2",
	"Seccomp_filters:\t3",
	"Speculation_Store_Bypass:\tthread vulnerable",
	"Cpus_allowed:\tff",
	"Cpus_allowed_list:\t0-7",
	"voluntary_ctxt_switches:\t0",
};

#define N_STATUS_LINES (sizeof(status_lines) / sizeof(status_lines[0]))

static const char *const required_fields[] = {
	"Pid:", "NSpid:", "Uid:", "Gid:", "CapInh:", "CapPrm:", "CapEff:", "CapBnd:",
	"CapAmb:", "NoNewPrivs:", "Seccomp:", "Seccomp_filters:",
};

enum edit { EDIT_NONE, EDIT_REPLACE, EDIT_DROP, EDIT_DUP };

/*
 * The template with the line that starts with field edited: replaced by line, dropped or
 * duplicated. Caller frees.
 */
static char *status_edit(const char *field, enum edit how, const char *line)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	assert_non_null(f);
	bool hit = false;
	for (size_t i = 0; i < N_STATUS_LINES; i++) {
		const char *l = status_lines[i];
		if (how == EDIT_NONE || strncmp(l, field, strlen(field)) != 0) {
			fprintf(f, "%s\n", l);
			continue;
		}
		hit = true;
		switch (how) {
		case EDIT_REPLACE:
			fprintf(f, "%s\n", line);
			break;
		case EDIT_DROP:
			break;
		case EDIT_DUP:
			fprintf(f, "%s\n%s\n", l, l);
			break;
		case EDIT_NONE:
			break;
		}
	}
	assert_int_equal(fclose(f), 0);
	assert_true(hit || how == EDIT_NONE);
	return s;
}

static int parse(const char *text, struct wire_identity *id, unsigned *depth)
{
	return wire_parse_status(text, strlen(text), id, depth);
}

/* wire_parse_status must fail with -EBADMSG and leave both outputs untouched. */
static void assert_status_bad(const char *text)
{
	struct wire_identity id, untouched;
	memset(&id, 0x5a, sizeof(id));
	memset(&untouched, 0x5a, sizeof(untouched));
	unsigned depth = 777;
	int r = parse(text, &id, &depth);
	if (r != -EBADMSG)
		print_error("accepted (%d):\n%s\n", r, text);
	assert_int_equal(r, -EBADMSG);
	assert_memory_equal(&id, &untouched, sizeof(id));
	assert_int_equal(depth, 777);
}

static void assert_status_bad_line(const char *field, const char *line)
{
	_cleanup_free_ char *t = status_edit(field, EDIT_REPLACE, line);
	assert_status_bad(t);
}

static void assert_status_ok_line(const char *field, const char *line,
				  struct wire_identity *out)
{
	_cleanup_free_ char *t = status_edit(field, EDIT_REPLACE, line);
	unsigned depth = 0;
	int r = parse(t, out, &depth);
	if (r != 0)
		print_error("rejected (%d):\n%s\n", r, t);
	assert_int_equal(r, 0);
}

static void test_status_template(void **state)
{
	(void)state;
	_cleanup_free_ char *t = status_edit("", EDIT_NONE, NULL);
	struct wire_identity id;
	unsigned depth = 0;
	assert_int_equal(parse(t, &id, &depth), 0);
	struct wire_identity want = identity_value;
	want.pid = 4242;
	want.cap_bnd = 0x000001ffffffffffu;
	want.cap_amb = 0;
	assert_identity_equal(&id, &want);
	assert_int_equal(depth, 1);
	/* depth is optional; no newline at the very end is fine. */
	assert_int_equal(wire_parse_status(t, strlen(t) - 1, &id, NULL), 0);
}

static void test_status_real(void **state)
{
	(void)state;
	static char text[65536];
	_cleanup_close_ int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	size_t len = 0;
	for (;;) {
		ssize_t n = read(fd, text + len, sizeof(text) - 1 - len);
		assert_true(n >= 0);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	assert_true(len < sizeof(text) - 1);
	text[len] = '\0';

	/* The expected depth is the number of values on the NSpid line, counted here. */
	const char *nspid = strstr(text, "\nNSpid:");
	assert_non_null(nspid);
	unsigned want_depth = 0;
	for (const char *p = nspid + strlen("\nNSpid:"); *p && *p != '\n'; p++)
		if (*p == '\t' || *p == ' ')
			want_depth += p[1] >= '0' && p[1] <= '9';

	struct wire_identity id;
	unsigned depth = 0;
	int r = wire_parse_status(text, len, &id, &depth);
	if (r != 0)
		print_error("rejected /proc/self/status (%d):\n%s\n", r, text);
	assert_int_equal(r, 0);
	assert_int_equal(depth, want_depth);
	if (want_depth == 1)
		print_message("NSpid depth 1 (not nested)\n");
	assert_int_equal(id.pid, (uint32_t)getpid());
	assert_int_equal(id.uid[0], getuid());
	assert_int_equal(id.uid[1], geteuid());
	assert_int_equal(id.gid[0], getgid());
	assert_int_equal(id.gid[1], getegid());
	assert_int_equal(id.no_new_privs, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
}

static void test_status_missing_field(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(required_fields) / sizeof(required_fields[0]); i++) {
		_cleanup_free_ char *t = status_edit(required_fields[i], EDIT_DROP, NULL);
		assert_status_bad(t);
	}
	assert_status_bad("");
	assert_status_bad("\n");
}

static void test_status_duplicate_field(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(required_fields) / sizeof(required_fields[0]); i++) {
		_cleanup_free_ char *t = status_edit(required_fields[i], EDIT_DUP, NULL);
		assert_status_bad(t);
	}
}

static void test_status_nspid_nested(void **state)
{
	(void)state;
	_cleanup_free_ char *t = status_edit("NSpid:", EDIT_REPLACE, "NSpid:\t4242\t77\t1");
	struct wire_identity id;
	unsigned depth = 0;
	assert_int_equal(parse(t, &id, &depth), 0);
	assert_int_equal(depth, 3);
	assert_int_equal(id.pid, 1);

	free(t);
	t = status_edit("NSpid:", EDIT_REPLACE, "NSpid:\t4242\t1");
	assert_int_equal(parse(t, &id, &depth), 0);
	assert_int_equal(depth, 2);
	assert_int_equal(id.pid, 1);
}

/*
 * "Pid (the innermost NSpid value when present)" does not depend on line order: an NSpid line
 * before the Pid line still decides the pid.
 */
static void test_status_nspid_before_pid(void **state)
{
	(void)state;
	static const char text[] = "NSpid:\t4242\t1\n"
				   "Pid:\t4242\n"
				   "Uid:\t1000\t1001\t1002\t1003\n"
				   "Gid:\t2000\t2001\t2002\t2003\n"
				   "CapInh:\t0000000000000000\n"
				   "CapPrm:\t0000000000000000\n"
				   "CapEff:\t0000000000000000\n"
				   "CapBnd:\t0000000000000000\n"
				   "CapAmb:\t0000000000000000\n"
				   "NoNewPrivs:\t1\n"
				   "Seccomp:\t2\n"
				   "Seccomp_filters:\t1\n";
	struct wire_identity id;
	unsigned depth = 0;
	assert_int_equal(parse(text, &id, &depth), 0);
	assert_int_equal(depth, 2);
	assert_int_equal(id.pid, 1);
}

/* Builds "NSpid:" followed by n values of 1 into line (cap bytes). */
static void nspid_line(char *line, size_t cap, unsigned n)
{
	struct wire_wr w;
	wire_wr_init(&w, line, cap);
	assert_true(wire_put_bytes(&w, "NSpid:", 6));
	for (unsigned i = 0; i < n; i++)
		assert_true(wire_put_bytes(&w, "\t1", 2));
	assert_true(wire_put_u8(&w, 0));
}

static void test_status_nspid_depth_limit(void **state)
{
	(void)state;
	char line[256];
	struct wire_identity id;
	nspid_line(line, sizeof(line), 64);
	_cleanup_free_ char *t = status_edit("NSpid:", EDIT_REPLACE, line);
	unsigned depth = 0;
	assert_int_equal(parse(t, &id, &depth), 0);
	assert_int_equal(depth, 64);
	nspid_line(line, sizeof(line), 65);
	assert_status_bad_line("NSpid:", line);
}

static void test_status_overflow(void **state)
{
	(void)state;
	struct wire_identity id;
	assert_status_ok_line("Pid:", "Pid:\t4294967295", &id);
	assert_status_ok_line("NSpid:", "NSpid:\t4294967295", &id);
	assert_int_equal(id.pid, UINT32_MAX);
	assert_status_bad_line("Pid:", "Pid:\t4294967296");
	assert_status_bad_line("Pid:", "Pid:\t99999999999999999999999");
	assert_status_bad_line("NSpid:", "NSpid:\t4242\t4294967296");
	assert_status_bad_line("Uid:", "Uid:\t1000\t1001\t1002\t4294967296");
	assert_status_bad_line("Gid:", "Gid:\t4294967296\t1001\t1002\t1003");
	assert_status_ok_line("CapEff:", "CapEff:\tffffffffffffffff", &id);
	assert_true(id.cap_eff == UINT64_MAX);
	assert_status_ok_line("CapEff:", "CapEff:\t0000ffffffffffffffff", &id);
	assert_status_bad_line("CapEff:", "CapEff:\t10000000000000000");
	assert_status_bad_line("CapAmb:", "CapAmb:\tfffffffffffffffff");
	assert_status_bad_line("Seccomp_filters:", "Seccomp_filters:\t4294967296");
	assert_status_bad_line("NoNewPrivs:", "NoNewPrivs:\t10");
	assert_status_bad_line("Seccomp:", "Seccomp:\t20");
}

/* NoNewPrivs is 0 or 1 and Seccomp 0, 1 or 2, as wire_get_identity requires. */
static void test_status_single_digit_range(void **state)
{
	(void)state;
	struct wire_identity id;
	assert_status_ok_line("NoNewPrivs:", "NoNewPrivs:\t0", &id);
	assert_status_ok_line("Seccomp:", "Seccomp:\t0", &id);
	assert_status_bad_line("NoNewPrivs:", "NoNewPrivs:\t2");
	assert_status_bad_line("NoNewPrivs:", "NoNewPrivs:\t9");
	assert_status_bad_line("Seccomp:", "Seccomp:\t3");
	assert_status_bad_line("Seccomp:", "Seccomp:\t9");
}

static void test_status_non_hex_caps(void **state)
{
	(void)state;
	assert_status_bad_line("CapInh:", "CapInh:\t000000000000000g");
	assert_status_bad_line("CapInh:", "CapInh:\tg000000000000000");
	assert_status_bad_line("CapPrm:", "CapPrm:\t000000000000000A");
	assert_status_bad_line("CapEff:", "CapEff:\t0x00000000000003");
	assert_status_bad_line("CapBnd:", "CapBnd:\t-1");
	assert_status_bad_line("CapAmb:", "CapAmb:\t");
	assert_status_bad_line("CapAmb:", "CapAmb:");
	/* Decimal fields take no hex digits. */
	assert_status_bad_line("Pid:", "Pid:\t4a");
	assert_status_bad_line("Pid:", "Pid:\tff");
}

static void test_status_trailing_garbage(void **state)
{
	(void)state;
	assert_status_bad_line("Pid:", "Pid:\t4242x");
	assert_status_bad_line("Pid:", "Pid:\t4242\t1");
	assert_status_bad_line("Pid:", "Pid:\t+4242");
	assert_status_bad_line("NSpid:", "NSpid:\t4242 x");
	assert_status_bad_line("NSpid:", "NSpid:\t4242,1");
	assert_status_bad_line("Uid:", "Uid:\t1000\t1001\t1002\t1003\t1004");
	assert_status_bad_line("Uid:", "Uid:\t1000\t1001\t1002");
	assert_status_bad_line("Gid:", "Gid:\t2000\t2001\t2002\t2003 kB");
	assert_status_bad_line("CapEff:", "CapEff:\t0000000000000003 0");
	assert_status_bad_line("NoNewPrivs:", "NoNewPrivs:\t1 1");
	assert_status_bad_line("Seccomp:", "Seccomp:\t2\r");
	assert_status_bad_line("Seccomp_filters:", "Seccomp_filters:\t3-");
	assert_status_bad_line("NSpid:", "NSpid:");
	assert_status_bad_line("Pid:", "Pid:");
}

/*
 * A line the parser does not read may be as long as the kernel prints it (Groups with 65536
 * ids, #15); a line of a field it reads, over 512 bytes: -EBADMSG. 512 is fine.
 */
static void test_status_long_line(void **state)
{
	(void)state;
	static char groups[8 + 65536 * 11];
	size_t len = (size_t)snprintf(groups, sizeof(groups), "Groups:");
	for (unsigned i = 0; i < 65536; i++)
		len += (size_t)snprintf(groups + len, sizeof(groups) - len, " %u", 1000000000u + i);
	struct wire_identity id;
	assert_status_ok_line("Groups:", groups, &id);
	char line[514];

	/* A long known line is rejected the same way (leading zeros keep the value in range). */
	memcpy(line, "NSpid:\t", 7);
	memset(line + 7, '0', 505);
	line[511] = '7';
	line[512] = '\0';
	assert_status_ok_line("NSpid:", line, &id);
	assert_int_equal(id.pid, 7);
	line[512] = '7';
	line[513] = '\0';
	assert_status_bad_line("NSpid:", line);
}

/* ---- main ----------------------------------------------------------------------------------- */

#define GETTER_TESTS(name, c)                                                    \
	{ name ": exact fit", test_getter_exact, NULL, NULL, &(c) },             \
	{ name ": short", test_getter_short, NULL, NULL, &(c) },                 \
	{ name ": one byte long", test_getter_long, NULL, NULL, &(c) }

#define FRAME_TESTS(name, c)                                                       \
	{ name ": golden", test_frame_golden, NULL, NULL, &(c) },                  \
	{ name ": truncation sweep", test_frame_truncation, NULL, NULL, &(c) },    \
	{ name ": bit-flip sweep", test_frame_bitflip, NULL, NULL, &(c) },         \
	{ name ": wrong direction", test_frame_wrong_direction, NULL, NULL, &(c) }, \
	{ name ": wrong seq", test_frame_wrong_seq, NULL, NULL, &(c) },            \
	{ name ": wrong key", test_frame_wrong_key, NULL, NULL, &(c) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		GETTER_TESTS("wire_get_u8", get_u8_case),
		GETTER_TESTS("wire_get_u16", get_u16_case),
		GETTER_TESTS("wire_get_u32", get_u32_case),
		GETTER_TESTS("wire_get_u64", get_u64_case),
		GETTER_TESTS("wire_get_bytes", get_bytes_case),
		GETTER_TESTS("wire_get_view", get_view_case),
		GETTER_TESTS("wire_get_sub", get_sub_case),
		GETTER_TESTS("wire_get_str", get_str_case),
		cmocka_unit_test(test_get_sub_huge_length),
		cmocka_unit_test(test_get_view_zero),
		cmocka_unit_test(test_get_str_over_max),
		cmocka_unit_test(test_get_str_max_string),
		cmocka_unit_test(test_get_str_interior_nul),
		cmocka_unit_test(test_get_str_empty),
		cmocka_unit_test(test_put_golden_exact_fit),
		cmocka_unit_test(test_put_one_short),
		cmocka_unit_test(test_put_overflow_sticks),
		cmocka_unit_test(test_put_str_over_max),
		cmocka_unit_test(test_payload_golden),
		FRAME_TESTS("STARTED", started_case),
		FRAME_TESTS("EXITED", exited_case),
		FRAME_TESTS("HELLO", hello_case),
		cmocka_unit_test(test_empty_payload_round_trip),
		cmocka_unit_test(test_seal_any_type_and_seq),
		cmocka_unit_test(test_seal_oversize),
		cmocka_unit_test(test_open_oversize),
		cmocka_unit_test(test_open_raw_control),
		cmocka_unit_test(test_open_unknown_version),
		cmocka_unit_test(test_open_unknown_flags),
		cmocka_unit_test(test_open_length_mismatch),
		cmocka_unit_test(test_mac_free_null),
		cmocka_unit_test(test_exited_ranges),
		cmocka_unit_test(test_exited_truncated_and_trailing),
		cmocka_unit_test(test_identity_ranges),
		cmocka_unit_test(test_identity_round_trip),
		cmocka_unit_test(test_identity_truncated),
		cmocka_unit_test(test_identity_trailing_left_for_caller),
		cmocka_unit_test(test_equal_ct),
		cmocka_unit_test(test_status_template),
		cmocka_unit_test(test_status_real),
		cmocka_unit_test(test_status_missing_field),
		cmocka_unit_test(test_status_duplicate_field),
		cmocka_unit_test(test_status_nspid_nested),
		cmocka_unit_test(test_status_nspid_before_pid),
		cmocka_unit_test(test_status_nspid_depth_limit),
		cmocka_unit_test(test_status_overflow),
		cmocka_unit_test(test_status_single_digit_range),
		cmocka_unit_test(test_status_non_hex_caps),
		cmocka_unit_test(test_status_trailing_garbage),
		cmocka_unit_test(test_status_long_line),
	};
	return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
