/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the egress proxy's request parser.
 *
 * Target function: egr_request_parse() (egress/request-util.c), and through it
 * egr_host_parse() (egress/host-util.c).
 *
 * Input: the bytes a client sends the proxy first. Inputs over 4 * EGR_MAX_HEAD are rejected
 * first (the parser never looks past EGR_MAX_HEAD). No time, no randomness, no global state.
 *
 * Beyond "no crash, no leak, no UB", it checks the parser's contract on every input:
 *  - it returns 0, -EAGAIN, -EBADMSG or -E2BIG (never -ENOBUFS with an EGR_MAX_FWD buffer),
 *    the same on a second run, and leaves its output untouched on failure;
 *  - -EAGAIN only while more bytes could still fit under EGR_MAX_HEAD;
 *  - on success: the head is within the input and the limit, and parsing just the head
 *    gives the same request and forwarded head (bytes after it are never looked at); a
 *    shorter prefix of the head is incomplete, never an error; the host is canonical (it
 *    parses to itself); the port is not 0; the forwarded head of an HTTP request has a Host
 *    line, ends with "Connection: close" and an empty line, and holds no bare LF.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "egress-limits.h"
#include "fuzz-util.h"
#include "request.h"
#include "wire-egress.h"

#define REQUEST_MAX_INPUT (4u * EGR_MAX_HEAD)

static uint8_t fwd[EGR_MAX_FWD], fwd2[EGR_MAX_FWD];

static void check_host(const struct egr_host *h)
{
	char text[EGR_MAX_HOST + 3];
	size_t n = 0;
	if (h->type == EGR_HOST_IPV6)
		text[n++] = '[';
	CHECK(h->text_len <= EGR_MAX_HOST && h->text[h->text_len] == '\0');
	memcpy(text + n, h->text, h->text_len);
	n += h->text_len;
	if (h->type == EGR_HOST_IPV6)
		text[n++] = ']';
	struct egr_host again;
	CHECK(egr_host_parse_str(text, n, &again) == 0);
	CHECK(egr_host_equal(&again, h));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > REQUEST_MAX_INPUT)
		return -1;

	struct egr_request req, untouched;
	memset(&req, 0x5a, sizeof(req));
	memset(&untouched, 0x5a, sizeof(untouched));
	int r = egr_request_parse(data, size, &req, fwd, sizeof(fwd));
	CHECK(r == 0 || r == -EAGAIN || r == -EBADMSG || r == -E2BIG);
	struct egr_request again;
	memset(&again, 0x5a, sizeof(again));
	CHECK(egr_request_parse(data, size, &again, fwd2, sizeof(fwd2)) == r);
	if (r < 0) {
		CHECK(!memcmp(&req, &untouched, sizeof(req)));
		CHECK(r != -EAGAIN || size < EGR_MAX_HEAD);
		return 0;
	}
	CHECK(!memcmp(&req, &again, sizeof(req)));
	CHECK(req.head_len >= 4 && req.head_len <= size && req.head_len <= EGR_MAX_HEAD);
	CHECK(req.port != 0);
	CHECK(req.kind == WIRE_EGRESS_KIND_CONNECT || req.kind == WIRE_EGRESS_KIND_HTTP);
	check_host(&req.host);

	/* The head alone is the same request. */
	struct egr_request head;
	CHECK(egr_request_parse(data, req.head_len, &head, fwd2, sizeof(fwd2)) == 0);
	CHECK(!memcmp(&head, &req, sizeof(req)));
	CHECK(!memcmp(fwd, fwd2, req.fwd_len));
	/* A prefix of it is incomplete. */
	size_t cuts[] = { req.head_len - 1, req.head_len / 2, 1 };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		struct egr_request part;
		CHECK(egr_request_parse(data, cuts[i], &part, fwd2, sizeof(fwd2)) == -EAGAIN);
	}

	if (req.kind == WIRE_EGRESS_KIND_CONNECT) {
		CHECK(req.fwd_len == 0);
		return 0;
	}
	static const char tail[] = "Connection: close\r\n\r\n";
	CHECK(req.fwd_len > sizeof(tail) && req.fwd_len <= EGR_MAX_FWD);
	CHECK(!memcmp(fwd + req.fwd_len - (sizeof(tail) - 1), tail, sizeof(tail) - 1));
	CHECK(memmem(fwd, req.fwd_len, "\r\nHost: ", 8) != NULL);
	for (size_t i = 0; i < req.fwd_len; i++)
		CHECK(fwd[i] != '\n' || (i > 0 && fwd[i - 1] == '\r'));
	return 0;
}
