/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 (FIPS 180-4) for the frame codec, so that the worker needs no crypto library and
 * can be linked against a C library that starts without probing the CPU (see
 * docs/performance.md). The compression function uses the CPU's SHA extensions when it has
 * them and portable C otherwise. tests/unit/test-sha256.c checks both against the FIPS 180-4
 * examples and OpenSSL, fuzz/fuzz-sha256.c the two against each other on any input and any
 * cut into updates, and tests/unit/test-wire.c the HMAC against OpenSSL's.
 *
 * A context is a plain value: copying one copies the hash state (the HMAC keeps its padded
 * key states that way).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define WIRE_SHA256_LEN 32
#define WIRE_SHA256_BLOCK 64

struct wire_sha256 {
	uint32_t h[8];
	uint64_t bytes;                   /* message length so far */
	uint8_t buf[WIRE_SHA256_BLOCK];   /* a partial block */
	size_t used;                      /* bytes in buf */
};

void wire_sha256_init(struct wire_sha256 *c);
void wire_sha256_update(struct wire_sha256 *c, const void *data, size_t len);
/* Writes the digest and wipes the context. */
void wire_sha256_final(struct wire_sha256 *c, uint8_t out[WIRE_SHA256_LEN]);

/* Whether the SHA extensions are in use (for tests and benchmarks). */
int wire_sha256_accelerated(void);

/* Forces the portable code (for tests); returns the previous setting. */
int wire_sha256_force_portable(int on);
