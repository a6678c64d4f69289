/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the egress proxy's TLS ClientHello reader.
 *
 * Target function: egr_hello_sni() (egress/hello-util.c), and through it egr_host_parse().
 *
 * Input: the first bytes a client sends into a CONNECT tunnel. Inputs over 2 * EGR_HELLO_BUF
 * are rejected first (the reader never looks past EGR_HELLO_BUF). No time, no randomness, no
 * global state.
 *
 * Beyond "no crash, no leak, no UB", it checks the reader's contract on every input:
 *  - it returns 0, -EAGAIN, -EBADMSG or -E2BIG, the same on a second run, and leaves its
 *    outputs untouched on failure;
 *  - -EAGAIN only while more bytes could still fit under EGR_HELLO_BUF;
 *  - on success a server name, when there is one, is a canonical DNS name (it parses to
 *    itself), and one more byte after the input changes nothing: what follows the
 *    ClientHello is never looked at.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "egress-limits.h"
#include "fuzz-util.h"
#include "hello.h"

#define HELLO_MAX_INPUT (2u * EGR_HELLO_BUF)

static uint8_t longer[HELLO_MAX_INPUT + 1];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > HELLO_MAX_INPUT)
		return -1;

	struct egr_host sni, untouched;
	memset(&sni, 0x5a, sizeof(sni));
	memset(&untouched, 0x5a, sizeof(untouched));
	bool has = true;
	int r = egr_hello_sni(data, size, &sni, &has);
	CHECK(r == 0 || r == -EAGAIN || r == -EBADMSG || r == -E2BIG);
	struct egr_host again;
	memset(&again, 0x5a, sizeof(again));
	bool has_again = true;
	CHECK(egr_hello_sni(data, size, &again, &has_again) == r);
	if (r < 0) {
		CHECK(has && has_again);
		CHECK(!memcmp(&sni, &untouched, sizeof(sni)));
		CHECK(r != -EAGAIN || size < EGR_HELLO_BUF);
		return 0;
	}
	CHECK(has == has_again);
	if (has) {
		CHECK(!memcmp(&sni, &again, sizeof(sni)));
		CHECK(sni.type == EGR_HOST_NAME);
		CHECK(sni.text_len >= 1 && sni.text_len <= EGR_MAX_HOST);
		struct egr_host reparsed;
		CHECK(egr_host_parse_str(sni.text, sni.text_len, &reparsed) == 0);
		CHECK(egr_host_equal(&reparsed, &sni));
	} else {
		CHECK(!memcmp(&sni, &untouched, sizeof(sni)));
	}

	memcpy(longer, data, size);
	longer[size] = 0x16;
	struct egr_host more;
	bool has_more = !has;
	CHECK(egr_hello_sni(longer, size + 1, &more, &has_more) == 0);
	CHECK(has_more == has);
	CHECK(!has || egr_host_equal(&more, &sni));
	return 0;
}
