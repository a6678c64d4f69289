/* SPDX-License-Identifier: MIT */
/*
 * The frame codec's SHA-256 (wire/sha256.c) against itself: the input's first byte seeds how
 * the rest is cut into updates, and the digest of those updates on the portable code must
 * equal the digest of the whole in one update on the SHA extensions (where the CPU has them;
 * otherwise both sides are portable and only the chunking is checked). tests/unit/test-sha256.c
 * pins both to OpenSSL and to the FIPS 180-4 examples.
 */
#include <string.h>

#include "fuzz-util.h"
#include "sha256.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint32_t x = data[0] * 2654435761u + 1;
	data++;
	size--;

	uint8_t whole[WIRE_SHA256_LEN], chunked[WIRE_SHA256_LEN];
	struct wire_sha256 c;
	int was = wire_sha256_force_portable(0);
	wire_sha256_init(&c);
	wire_sha256_update(&c, data, size);
	wire_sha256_final(&c, whole);

	(void)wire_sha256_force_portable(1);
	wire_sha256_init(&c);
	for (size_t off = 0; off < size;) {
		x = x * 1664525u + 1013904223u;
		size_t k = (x >> 16) % 200; /* 0 too: an empty update changes nothing */
		if (k > size - off)
			k = size - off;
		wire_sha256_update(&c, data + off, k);
		off += k;
	}
	wire_sha256_final(&c, chunked);
	(void)wire_sha256_force_portable(was);

	CHECK(memcmp(whole, chunked, sizeof(whole)) == 0);
	return 0;
}
