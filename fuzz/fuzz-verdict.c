/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the supervisor's readers of what a confined child answers: the
 * static criteria judge's RESULT frames and `warden grade`'s run folder summary, both bytes a
 * child that parsed hostile input may have chosen.
 *
 * Target functions: ev_verdict_open_all() and ev_folder_decode() (eval/verdict.c), with
 * ev_verdict_seal() and ev_folder_encode() to re-encode what was accepted.
 *
 * Input: one byte choosing the reader. 'v': then one byte n (taken modulo 5), then frames,
 * read as n verdicts on criteria 0, 2, 4, ... sealed with the key of 32 bytes 0x42 (so that
 * authentic frames reach the payload checks). Anything else: the rest is a folder answer.
 * Inputs over VERDICT_FUZZ_MAX_INPUT are rejected first. No time, no randomness.
 *
 * Beyond "no crash, no leak, no UB", it checks on every input:
 *  - a refusal is -EBADMSG (or -EPERM for a folder refusal), leaves the outputs untouched
 *    and gives one non-empty printable line;
 *  - what is accepted re-encodes to exactly the input bytes (encode(decode(x)) == x), so the
 *    readers accept one spelling of each answer and drop nothing;
 *  - accepted verdicts have a score of 0 or 1000 (0 with an error) and printable details;
 *    an accepted folder's parts are non-empty, and each is exactly one strict JSON value
 *    (ev_json_check), so none can splice members into the record a regrade writes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evrecord.h"
#include "fuzz-util.h"
#include "json-strict.h"
#include "verdict.h"
#include "wire.h"

#define VERDICT_FUZZ_MAX_INPUT (256u * 1024u)
#define MAX_N 5

static bool printable_line(const char *s, size_t cap)
{
	const char *end = memchr(s, '\0', cap);
	if (!end || end == s)
		return false;
	for (const char *p = s; p < end; p++)
		if (*p < 0x20 || *p > 0x7e)
			return false;
	return true;
}

static void fuzz_verdicts(const uint8_t *data, size_t size)
{
	if (size < 1)
		return;
	size_t n = data[0] % MAX_N;
	data++;
	size--;
	static const size_t idx[MAX_N] = { 0, 2, 4, 6, 8 };
	uint8_t key[WIRE_KEY_LEN];
	memset(key, 0x42, sizeof(key));
	struct wire_mac *mac = wire_mac_new(key);
	CHECK(mac);
	struct ev_verdict out[MAX_N];
	memset(out, 0x5a, sizeof(out));
	char why[256];
	int r = ev_verdict_open_all(mac, data, size, idx, n, out, why, sizeof(why));
	if (r < 0) {
		CHECK(r == -EBADMSG);
		CHECK(printable_line(why, sizeof(why)));
		for (size_t i = 0; i < sizeof(out); i++)
			CHECK(((const uint8_t *)out)[i] == 0x5a);
		wire_mac_free(mac);
		return;
	}
	uint8_t *again = malloc(MAX_N * EV_VERDICT_FRAME_MAX);
	CHECK(again);
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		CHECK(out[i].error ? out[i].score_milli == 0
				   : out[i].score_milli == 0 || out[i].score_milli == 1000);
		CHECK(printable_line(out[i].details, sizeof(out[i].details)));
		struct sup_crit_result res;
		memset(&res, 0, sizeof(res));
		res.evaluated = !out[i].error;
		res.error = out[i].error;
		res.score_milli = out[i].score_milli;
		memcpy(res.details, out[i].details, sizeof(res.details));
		int k = ev_verdict_seal(mac, i, idx[i], &res, again + len,
					MAX_N * EV_VERDICT_FRAME_MAX - len);
		CHECK(k > 0);
		len += (size_t)k;
	}
	CHECK(len == size && (size == 0 || memcmp(again, data, size) == 0));
	free(again);
	wire_mac_free(mac);
}

static void fuzz_folder(const uint8_t *data, size_t size)
{
	struct ev_folder f;
	memset(&f, 0x5a, sizeof(f));
	char why[256];
	int r = ev_folder_decode(data, size, &f, why, sizeof(why));
	if (r < 0) {
		CHECK(r == -EBADMSG || r == -EPERM);
		CHECK(printable_line(why, sizeof(why)));
		CHECK(((const uint8_t *)&f)[0] == 0x5a);
		return;
	}
	static const struct ev_json_limits lim = {
		.max_depth = EVREC_MAX_DEPTH,
		.max_number_chars = EVREC_MAX_NUMBER_CHARS,
	};
	for (size_t i = 0; i < EV_N_PARTS; i++) {
		CHECK(f.parts[i] && f.part_len[i] > 0 && strlen(f.parts[i]) == f.part_len[i]);
		struct ev_json_err jerr;
		CHECK(ev_json_check(f.parts[i], f.part_len[i], &lim, &jerr) == 0);
	}
	uint8_t *again = NULL;
	size_t len = 0;
	CHECK(ev_folder_encode(0, NULL, &f, &again, &len) == 0);
	CHECK(len == size && memcmp(again, data, size) == 0);
	free(again);
	ev_folder_done(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > VERDICT_FUZZ_MAX_INPUT)
		return -1; /* keep it out of the corpus */
	if (size >= 1 && data[0] == 'v')
		fuzz_verdicts(data + 1, size - 1);
	else
		fuzz_folder(size ? data + 1 : data, size ? size - 1 : 0);
	return 0;
}
