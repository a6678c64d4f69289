/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the egress report payloads, which the parent decodes from a proxy
 * that may be compromised.
 *
 * Target functions: wire_get_egress_conn(), wire_get_egress_limit(), wire_get_egress_failed()
 * (wire/egress.c), with their encoders.
 *
 * Input: one byte choosing the payload type (its value mod 3), then the payload. Inputs over
 * 2 * WIRE_EGRESS_CONN_MAX_LEN are rejected first. No time, no randomness, no global state.
 *
 * Beyond "no crash, no leak, no UB", it checks on every input: a decoder returns 0 or
 * -EBADMSG, leaves its outputs untouched on failure, and on success the value encodes back to
 * exactly the bytes it came from (the encoding is canonical, so encode(decode(b)) == b) and
 * decodes again to the same value.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-util.h"
#include "wire-egress.h"

#define FRAME_MAX_INPUT (2u * WIRE_EGRESS_CONN_MAX_LEN)

static void check_conn(const uint8_t *p, size_t len)
{
	struct wire_rd r;
	struct wire_egress_conn c, untouched;
	memset(&c, 0x5a, sizeof(c));
	memset(&untouched, 0x5a, sizeof(untouched));
	wire_rd_init(&r, p, len);
	int rc = wire_get_egress_conn(&r, &c);
	CHECK(rc == 0 || rc == -EBADMSG);
	if (rc < 0) {
		CHECK(!memcmp(&c, &untouched, sizeof(c)));
		return;
	}
	uint8_t buf[WIRE_EGRESS_CONN_MAX_LEN];
	struct wire_wr w;
	wire_wr_init(&w, buf, sizeof(buf));
	CHECK(wire_put_egress_conn(&w, &c));
	CHECK(w.len == len && !memcmp(buf, p, len));
	struct wire_egress_conn d;
	wire_rd_init(&r, buf, w.len);
	CHECK(wire_get_egress_conn(&r, &d) == 0 && !memcmp(&c, &d, sizeof(c)));
}

static void check_limit(const uint8_t *p, size_t len)
{
	struct wire_rd r;
	uint8_t which = 0x5a;
	uint64_t limit = 0x5a5a;
	wire_rd_init(&r, p, len);
	int rc = wire_get_egress_limit(&r, &which, &limit);
	CHECK(rc == 0 || rc == -EBADMSG);
	if (rc < 0) {
		CHECK(which == 0x5a && limit == 0x5a5a);
		return;
	}
	uint8_t buf[16];
	struct wire_wr w;
	wire_wr_init(&w, buf, sizeof(buf));
	CHECK(wire_put_egress_limit(&w, which, limit));
	CHECK(w.len == len && !memcmp(buf, p, len));
}

static void check_failed(const uint8_t *p, size_t len)
{
	struct wire_rd r;
	uint32_t err = 0x5a5a;
	char step[WIRE_EGRESS_MAX_STEP + 1];
	memset(step, 0x5a, sizeof(step));
	wire_rd_init(&r, p, len);
	int rc = wire_get_egress_failed(&r, &err, step);
	CHECK(rc == 0 || rc == -EBADMSG);
	if (rc < 0) {
		CHECK(err == 0x5a5a);
		for (size_t i = 0; i < sizeof(step); i++)
			CHECK((uint8_t)step[i] == 0x5a);
		return;
	}
	uint8_t buf[8 + WIRE_EGRESS_MAX_STEP];
	struct wire_wr w;
	wire_wr_init(&w, buf, sizeof(buf));
	CHECK(wire_put_egress_failed(&w, err, step, strlen(step)));
	CHECK(w.len == len && !memcmp(buf, p, len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FRAME_MAX_INPUT)
		return -1;
	if (size == 0)
		return 0;
	switch (data[0] % 3) {
	case 0:
		check_conn(data + 1, size - 1);
		break;
	case 1:
		check_limit(data + 1, size - 1);
		break;
	default:
		check_failed(data + 1, size - 1);
		break;
	}
	return 0;
}
