/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the run-record reader that `warden grade` applies to an untrusted
 * record.json.
 *
 * Target functions: pol_evrec_parse() and pol_evrec_agent_canon() (eval/evrecord.c), with
 * pol_evrec_free(). cJSON_PrintUnformatted() and cJSON_Print() re-print what was accepted.
 *
 * Input: the bytes of a record. Inputs over EVREC_MAX_INPUT_BYTES are checked to be refused
 * with -E2BIG before anything is read, then kept out of the corpus. No time, no randomness,
 * no global state.
 *
 * Beyond "no crash, no leak, no UB", it checks the parser's contract on every input:
 *  - it returns 0, -EBADMSG or -E2BIG. -ENOMEM is allowed by the API but cannot happen here
 *    (nothing fails allocation), so seeing it means the reader's own JSON syntax pass and
 *    cJSON disagree about the text: that is a bug, and a crash;
 *  - on failure *out is untouched and the message is one non-empty line of printable ASCII,
 *    the same with any why_len, truncated safely (a shorter buffer holds a prefix);
 *  - on success the message buffer is untouched, the views point into the tree and agree
 *    with it, agent_canon is what pol_evrec_agent_canon() gives and reading it does not
 *    change the tree;
 *  - an accepted record, re-printed by cJSON (unformatted and formatted), is accepted again
 *    with the same views and the same agent_canon, and re-prints to the same bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "evrecord.h"
#include "fuzz-util.h"

#define WHY_LEN 512u
#define WHY_SHORT 24u

static struct pol_evrec *const sentinel = (struct pol_evrec *)(uintptr_t)0x5a5a5a5a;

static bool one_printable_line(const char *s, size_t cap)
{
	const char *end = memchr(s, '\0', cap);
	if (!end || end == s)
		return false;
	for (const char *p = s; p < end; p++)
		if (*p < 0x20 || *p > 0x7e)
			return false;
	return true;
}

static bool same_str(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static const char *str_at(const cJSON *o, const char *k1, const char *k2)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k1);
	if (k2)
		v = cJSON_GetObjectItemCaseSensitive(v, k2);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The views of rec borrow from rec->json and say what it says. */
static void check_views(const struct pol_evrec *rec)
{
	const cJSON *j = rec->json;
	CHECK(j);
	CHECK(rec->run_id && rec->task_id && rec->task_source && rec->task_digest &&
	      rec->policy_digest && rec->status);
	CHECK(rec->run_id == str_at(j, "run_id", NULL));
	CHECK(rec->task_id == str_at(j, "task", "id"));
	CHECK(rec->task_source == str_at(j, "task", "source"));
	CHECK(rec->task_digest == str_at(j, "task", "digest"));
	CHECK(rec->policy_digest == str_at(j, "policy", "digest"));
	CHECK(rec->status == str_at(j, "status", NULL));
	CHECK(rec->task_source[0] == '/');
	CHECK(strlen(rec->task_digest) == 71 && strlen(rec->policy_digest) == 71);
	size_t n = strlen(rec->task_id);
	CHECK(strncmp(rec->run_id, rec->task_id, n) == 0 && rec->run_id[n] == '-');
	CHECK(!strchr(rec->run_id, '/') && rec->run_id[0] != '.');
	const cJSON *grades = cJSON_GetObjectItemCaseSensitive(j, "grades");
	CHECK(cJSON_IsNumber(grades) && (double)rec->grades == grades->valuedouble);
	CHECK(rec->grades <= 1000000);
	CHECK(rec->agent_canon && rec->agent_canon[0] == '[');
}

/* Re-parses text (from cJSON's printer): it must be accepted with the same meaning. */
static void check_reparse(const struct pol_evrec *rec, const char *text)
{
	CHECK(text);
	struct pol_evrec *again = NULL;
	char why[WHY_LEN];
	CHECK(pol_evrec_parse(text, strlen(text), &again, why, sizeof(why)) == 0);
	check_views(again);
	CHECK(same_str(again->agent_canon, rec->agent_canon));
	CHECK(same_str(again->run_id, rec->run_id));
	CHECK(same_str(again->task_source, rec->task_source));
	CHECK(same_str(again->status, rec->status));
	CHECK(again->grades == rec->grades);
	char *flat_a = cJSON_PrintUnformatted(rec->json);
	char *flat_b = cJSON_PrintUnformatted(again->json);
	CHECK(same_str(flat_a, flat_b));
	free(flat_a);
	free(flat_b);
	pol_evrec_free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pol_evrec *rec = sentinel;
	char why[WHY_LEN];

	if (size > EVREC_MAX_INPUT_BYTES) {
		CHECK(pol_evrec_parse(data, size, &rec, why, sizeof(why)) == -E2BIG);
		CHECK(rec == sentinel);
		return -1; /* keep it out of the corpus */
	}

	memset(why, 0x5a, sizeof(why));
	int r = pol_evrec_parse(data, size, &rec, why, sizeof(why));
	CHECK(r == 0 || r == -EBADMSG);

	if (r < 0) {
		CHECK(rec == sentinel);
		CHECK(one_printable_line(why, sizeof(why)));
		/* Same verdict with a short buffer, and its message a prefix of the long one. */
		char short_why[WHY_SHORT];
		memset(short_why, 0x5a, sizeof(short_why));
		CHECK(pol_evrec_parse(data, size, &rec, short_why, sizeof(short_why)) == r);
		CHECK(rec == sentinel);
		CHECK(memchr(short_why, '\0', sizeof(short_why)));
		CHECK(strncmp(short_why, why, strlen(short_why)) == 0);
		CHECK(pol_evrec_parse(data, size, &rec, NULL, 0) == r);
		CHECK(rec == sentinel);
		return 0;
	}

	for (size_t i = 0; i < sizeof(why); i++)
		CHECK((unsigned char)why[i] == 0x5a);
	CHECK(rec && rec != sentinel);
	check_views(rec);

	/* agent_canon is the function's output, and computing it leaves the tree alone. */
	char *before = cJSON_PrintUnformatted(rec->json);
	char *canon = pol_evrec_agent_canon(rec->json);
	char *after = cJSON_PrintUnformatted(rec->json);
	CHECK(same_str(canon, rec->agent_canon));
	CHECK(same_str(before, after));

	/* What cJSON prints of an accepted record is accepted again, meaning the same. */
	check_reparse(rec, before);
	char *pretty = cJSON_Print(rec->json);
	check_reparse(rec, pretty);

	free(pretty);
	free(before);
	free(after);
	free(canon);
	pol_evrec_free(rec);
	return 0;
}
