/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the /proc/<pid>/status parser.
 *
 * Target function: wire_parse_status() (wire/status.c). wire_put_identity() and
 * wire_get_identity() are used to check that whatever it accepts is a valid identity.
 *
 * Input: the raw text of a status file. Inputs over STATUS_MAX_INPUT (far above any real status
 * file) are rejected first. No time, no randomness, no global state.
 *
 * Beyond "no crash, no leak, no UB", it checks the parser's contract on every input:
 *  - it returns 0 or -EBADMSG, and on failure leaves both outputs untouched;
 *  - on success the NSpid depth is 1..64, NoNewPrivs is 0 or 1 and Seccomp 0..2, so the
 *    identity survives wire_put_identity() → wire_get_identity() unchanged (the worker sends
 *    exactly this in HELLO, and the supervisor compares it with its own parse);
 *  - the result does not depend on whether the depth is asked for.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-util.h"
#include "fuzz-wire.h"
#include "wire.h"

#define STATUS_MAX_INPUT 65536u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > STATUS_MAX_INPUT)
		return -1; /* keep it out of the corpus */

	const char *text = (const char *)data;
	struct wire_identity id, untouched;
	memset(&id, 0x5a, sizeof(id));
	memset(&untouched, 0x5a, sizeof(untouched));
	unsigned depth = 777;
	int r = wire_parse_status(text, size, &id, &depth);
	CHECK(r == 0 || r == -EBADMSG);

	struct wire_identity again;
	memset(&again, 0x5a, sizeof(again));
	CHECK(wire_parse_status(text, size, &again, NULL) == r);

	if (r < 0) {
		CHECK(!memcmp(&id, &untouched, sizeof(id)));
		CHECK(!memcmp(&again, &untouched, sizeof(again)));
		CHECK(depth == 777);
		return 0;
	}
	CHECK(fuzz_same_identity(&id, &again));
	CHECK(depth >= 1 && depth <= 64);
	CHECK(id.no_new_privs <= 1);
	CHECK(id.seccomp <= 2);

	uint8_t buf[FUZZ_IDENTITY_LEN];
	struct wire_wr w;
	wire_wr_init(&w, buf, sizeof(buf));
	CHECK(wire_put_identity(&w, &id) && w.len == FUZZ_IDENTITY_LEN);
	struct wire_rd rd;
	struct wire_identity decoded;
	wire_rd_init(&rd, buf, w.len);
	CHECK(wire_get_identity(&rd, &decoded) == 0 && wire_done(&rd));
	CHECK(fuzz_same_identity(&id, &decoded));
	return 0;
}
