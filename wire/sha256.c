/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 as FIPS 180-4 specifies it: a portable compression function, and one on the x86
 * SHA extensions (SHA256RNDS2, SHA256MSG1, SHA256MSG2), chosen once per process.
 */
#include <string.h>

#include "sha256.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define SHA256_HAVE_X86 1
#endif

/* The first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

static inline uint32_t rotr(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static inline uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void compress_portable(uint32_t h[8], const uint8_t *blocks, size_t n)
{
	for (; n > 0; n--, blocks += WIRE_SHA256_BLOCK) {
		uint32_t w[64];
		for (int t = 0; t < 16; t++)
			w[t] = load_be32(blocks + 4 * t);
		for (int t = 16; t < 64; t++) {
			uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
			uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
			w[t] = w[t - 16] + s0 + w[t - 7] + s1;
		}
		uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
		uint32_t e = h[4], f = h[5], g = h[6], hh = h[7];
		for (int t = 0; t < 64; t++) {
			uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
				      ((e & f) ^ (~e & g)) + K[t] + w[t];
			uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +
				      ((a & b) ^ (a & c) ^ (b & c));
			hh = g;
			g = f;
			f = e;
			e = d + t1;
			d = c;
			c = b;
			b = a;
			a = t1 + t2;
		}
		h[0] += a;
		h[1] += b;
		h[2] += c;
		h[3] += d;
		h[4] += e;
		h[5] += f;
		h[6] += g;
		h[7] += hh;
		/* The schedule of an HMAC pad block is the key: leave none of it on the stack. */
		explicit_bzero(w, sizeof(w));
	}
}

#ifdef SHA256_HAVE_X86
/*
 * The SHA extensions keep the state as two vectors, ABEF and CDGH (A in the highest lane),
 * and take the message schedule four words at a time: SHA256MSG1 and SHA256MSG2 extend it,
 * SHA256RNDS2 runs two rounds on the two low lanes of message-plus-constant.
 */
__attribute__((target("sha,sse4.1,ssse3"))) static void
compress_shani(uint32_t h[8], const uint8_t *blocks, size_t n)
{
	/* Byte order of each 32-bit word reversed: the message is big-endian. */
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i dcba = _mm_loadu_si128((const __m128i *)&h[0]);
	__m128i hgfe = _mm_loadu_si128((const __m128i *)&h[4]);
	__m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
	__m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
	__m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
	__m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);

	for (; n > 0; n--, blocks += WIRE_SHA256_BLOCK) {
		const __m128i abef0 = abef, cdgh0 = cdgh;
		__m128i x[4]; /* x[g % 4]: schedule words 4g..4g+3 */
		/* Unrolled, x[] lives in registers and each step's shape is fixed. */
#pragma GCC unroll 16
		for (int g = 0; g < 16; g++) {
			if (g < 4) {
				x[g] = _mm_shuffle_epi8(
					_mm_loadu_si128((const __m128i *)(blocks + 16 * g)), bswap);
			} else {
				/* W[t-16] + s0(W[t-15]), + W[t-7], then + s1(W[t-2]). */
				__m128i t = _mm_sha256msg1_epu32(x[g % 4], x[(g + 1) % 4]);
				t = _mm_add_epi32(t, _mm_alignr_epi8(x[(g + 3) % 4], x[(g + 2) % 4], 4));
				x[g % 4] = _mm_sha256msg2_epu32(t, x[(g + 3) % 4]);
			}
			__m128i wk = _mm_add_epi32(x[g % 4],
						   _mm_loadu_si128((const __m128i *)&K[4 * g]));
			cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
			wk = _mm_shuffle_epi32(wk, 0x0E);
			abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);
		}
		abef = _mm_add_epi32(abef, abef0);
		cdgh = _mm_add_epi32(cdgh, cdgh0);
	}

	__m128i feba = _mm_shuffle_epi32(abef, 0x1B);
	__m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
	_mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(feba, dchg, 0xF0));
	_mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(dchg, feba, 8));
}

static int cpu_has_shani(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1))
		return 0;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return (b & bit_SHA) != 0;
}
#endif

/* 0: not chosen yet; 1: portable; 2: SHA extensions. */
static int impl;
static int portable_forced;

static int choose(void)
{
	if (!impl) {
#ifdef SHA256_HAVE_X86
		impl = cpu_has_shani() ? 2 : 1;
#else
		impl = 1;
#endif
	}
	return portable_forced ? 1 : impl;
}

static void compress(uint32_t h[8], const uint8_t *blocks, size_t n)
{
#ifdef SHA256_HAVE_X86
	if (choose() == 2) {
		compress_shani(h, blocks, n);
		return;
	}
#endif
	(void)choose();
	compress_portable(h, blocks, n);
}

int wire_sha256_accelerated(void)
{
	return choose() == 2;
}

int wire_sha256_force_portable(int on)
{
	int was = portable_forced;
	portable_forced = on;
	return was;
}

void wire_sha256_init(struct wire_sha256 *c)
{
	/* The first 32 bits of the fractional parts of the square roots of the first 8 primes. */
	static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	memcpy(c->h, h0, sizeof(h0));
	c->bytes = 0;
	c->used = 0;
}

void wire_sha256_update(struct wire_sha256 *c, const void *data, size_t len)
{
	const uint8_t *p = data;
	if (len == 0)
		return; /* data may be NULL then */
	c->bytes += len;
	if (c->used) {
		size_t take = WIRE_SHA256_BLOCK - c->used;
		if (take > len)
			take = len;
		memcpy(c->buf + c->used, p, take);
		c->used += take;
		p += take;
		len -= take;
		if (c->used < WIRE_SHA256_BLOCK)
			return;
		compress(c->h, c->buf, 1);
		c->used = 0;
	}
	size_t whole = len / WIRE_SHA256_BLOCK;
	if (whole) {
		compress(c->h, p, whole);
		p += whole * WIRE_SHA256_BLOCK;
		len -= whole * WIRE_SHA256_BLOCK;
	}
	if (len) {
		memcpy(c->buf, p, len);
		c->used = len;
	}
}

void wire_sha256_final(struct wire_sha256 *c, uint8_t out[WIRE_SHA256_LEN])
{
	uint64_t bits = c->bytes * 8;
	/* 0x80, zeros to 56 mod 64, then the length in bits, big-endian. */
	c->buf[c->used++] = 0x80;
	if (c->used > WIRE_SHA256_BLOCK - 8) {
		memset(c->buf + c->used, 0, WIRE_SHA256_BLOCK - c->used);
		compress(c->h, c->buf, 1);
		c->used = 0;
	}
	memset(c->buf + c->used, 0, WIRE_SHA256_BLOCK - 8 - c->used);
	store_be32(c->buf + 56, (uint32_t)(bits >> 32));
	store_be32(c->buf + 60, (uint32_t)bits);
	compress(c->h, c->buf, 1);
	for (int i = 0; i < 8; i++)
		store_be32(out + 4 * i, c->h[i]);
	explicit_bzero(c, sizeof(*c));
}
