/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for judging criteria on untrusted bytes: what an agent leaves in a JSON
 * file, and what a command prints.
 *
 * Target functions: sup_crit_json_eval() (eval/criteria.c: the strict JSON reader of
 * eval/json-strict.c, which fuzz-json.c fuzzes on its own, RFC 6901 pointer resolution,
 * comparison and the details text), and
 * sup_crit_judge_command() with the same bytes as stdout (exact and contains checks; regexes
 * are left out, since the task parser bounds what a pattern may cost and the input here
 * would not be).
 *
 * Input: a JSON document, then the line "#%spec", then three lines: the pointer, the op (eq,
 * ne, exists, lt, le, gt, ge; anything else means all of them) and the value (null, true,
 * false, a finite number as strtod reads it, or else a string). The last "\n#%spec\n" splits;
 * without one the whole input is the document and the pointer is "". A pointer or value
 * holding a NUL, or an input over CRIT_FUZZ_MAX_INPUT, is rejected first. No time, no
 * randomness, no global state.
 *
 * Beyond "no crash, no leak, no UB", it checks on every input:
 *  - details are NUL-terminated in the buffer, non-empty, printable ASCII;
 *  - a result is either judged (score 0 or 1000, passed iff score >= threshold) or an error
 *    (not passed); a pointer that is not RFC 6901 is an error for every op, and the ordering
 *    ops are errors with a value that is not a number;
 *  - the ops agree: exactly one of eq and ne passes when the pointer resolves and neither
 *    when it does not; lt and ge (and le and gt) never both pass, and one of them passes iff
 *    the target is a number; lt implies le, gt implies ge; eq with a number implies le and ge;
 *  - judging twice gives the same result;
 *  - stdout: exact passes iff equal and never when truncated; contains passes iff memmem.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "criteria.h"
#include "fuzz-util.h"

#define CRIT_FUZZ_MAX_INPUT 65536u
#define CRIT_FUZZ_SPLIT	    "\n#%spec\n"

static const char *const op_names[] = {"eq", "ne", "exists", "lt", "le", "gt", "ge"};
static const enum pol_task_json_op ops[] = {
	POL_TASK_JSON_EQ, POL_TASK_JSON_NE, POL_TASK_JSON_EXISTS, POL_TASK_JSON_LT,
	POL_TASK_JSON_LE, POL_TASK_JSON_GT, POL_TASK_JSON_GE,
};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))

/* Copies len bytes into a new NUL-terminated string; NULL when they hold a NUL. */
static char *dup_text(const uint8_t *p, size_t len)
{
	if (memchr(p, '\0', len))
		return NULL;
	char *s = malloc(len + 1);
	if (!s)
		abort();
	if (len)
		memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

/* Takes the next line of [*p, *p + *len) (without its '\n'). */
static void next_line(const uint8_t **p, size_t *len, const uint8_t **out, size_t *out_len)
{
	const uint8_t *nl = *len ? memchr(*p, '\n', *len) : NULL;
	size_t n = nl ? (size_t)(nl - *p) : *len;
	*out = *p;
	*out_len = n;
	*p += nl ? n + 1 : n;
	*len -= nl ? n + 1 : n;
}

/* Sets c's value from its spelling, the way a task file's plain scalar would read. */
static void set_value(struct pol_task_criterion *c, char *text)
{
	char *end = NULL;
	c->value_text = text;
	if (!strcmp(text, "null")) {
		c->value_type = POL_TASK_JSON_NULL;
		return;
	}
	if (!strcmp(text, "true") || !strcmp(text, "false")) {
		c->value_type = POL_TASK_JSON_BOOL;
		c->value_bool = text[0] == 't';
		return;
	}
	double d = text[0] ? strtod(text, &end) : 0;
	if (text[0] && end && *end == '\0' && isfinite(d)) {
		c->value_type = POL_TASK_JSON_NUMBER;
		c->value_number = d;
		return;
	}
	c->value_type = POL_TASK_JSON_STRING;
}

static void check_sane(const struct pol_task_criterion *c, const struct sup_crit_result *r)
{
	size_t n = strnlen(r->details, sizeof(r->details));
	CHECK(n > 0 && n < sizeof(r->details));
	for (size_t i = 0; i < n; i++)
		CHECK(r->details[i] >= 0x20 && r->details[i] < 0x7f);
	CHECK(r->evaluated != r->error);
	if (r->error) {
		CHECK(!r->passed && r->score_milli == 0);
	} else {
		CHECK(r->score_milli == 0 || r->score_milli == 1000);
		CHECK(r->passed == (r->score_milli >= c->pass_threshold_milli));
	}
}

static bool same_result(const struct sup_crit_result *a, const struct sup_crit_result *b)
{
	return a->evaluated == b->evaluated && a->error == b->error &&
	       a->score_milli == b->score_milli && a->passed == b->passed &&
	       !strcmp(a->details, b->details);
}

static bool pointer_valid(const char *p)
{
	if (p[0] && p[0] != '/')
		return false;
	for (; *p; p++)
		if (p[0] == '~' && p[1] != '0' && p[1] != '1')
			return false;
	return true;
}

static void judge_stdout(const uint8_t *doc, size_t doc_len, const char *text)
{
	size_t tlen = strlen(text);
	bool truncated[] = {false, true};
	for (size_t t = 0; t < 2; t++) {
		struct pol_task_criterion c = {.check = POL_TASK_COMMAND,
					       .pass_threshold_milli = 1000};
		struct sup_crit_outcome o = {
			.started = true,
			.out = (const char *)doc,
			.out_len = doc_len,
			.out_truncated = truncated[t],
		};
		struct sup_crit_result r;
		c.command.stdout_text = (char *)text;

		c.command.stdout_kind = POL_TASK_STDOUT_EXACT;
		sup_crit_judge_command(&c, &o, &r);
		check_sane(&c, &r);
		CHECK(r.passed == (!truncated[t] && doc_len == tlen && !memcmp(doc, text, tlen)));

		c.command.stdout_kind = POL_TASK_STDOUT_CONTAINS;
		sup_crit_judge_command(&c, &o, &r);
		check_sane(&c, &r);
		CHECK(r.passed == (memmem(doc, doc_len, text, tlen) != NULL));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > CRIT_FUZZ_MAX_INPUT)
		return -1; /* keep it out of the corpus */

	const size_t k = strlen(CRIT_FUZZ_SPLIT);
	size_t doc_len = size;
	const uint8_t *spec = NULL;
	size_t spec_len = 0;
	for (size_t i = size >= k ? size - k + 1 : 0; i-- > 0;) {
		if (!memcmp(data + i, CRIT_FUZZ_SPLIT, k)) {
			doc_len = i;
			spec = data + i + k;
			spec_len = size - i - k;
			break;
		}
	}

	const uint8_t *ptr_p = (const uint8_t *)"", *op_p = (const uint8_t *)"";
	const uint8_t *val_p = (const uint8_t *)"null";
	size_t ptr_len = 0, op_len = 0, val_len = 4;
	if (spec) {
		next_line(&spec, &spec_len, &ptr_p, &ptr_len);
		next_line(&spec, &spec_len, &op_p, &op_len);
		next_line(&spec, &spec_len, &val_p, &val_len);
	}
	char *pointer = dup_text(ptr_p, ptr_len);
	char *value = dup_text(val_p, val_len);
	if (!pointer || !value) {
		free(pointer);
		free(value);
		return -1;
	}

	struct pol_task_criterion c = {
		.check = POL_TASK_JSON_EQUALS,
		.pass_threshold_milli = 1000,
		.pointer = pointer,
	};
	set_value(&c, value);

	/* One op, or all of them when the op line names none. */
	struct sup_crit_result r[N_OPS];
	bool one = false;
	for (size_t i = 0; i < N_OPS; i++)
		if (op_len == strlen(op_names[i]) && !memcmp(op_p, op_names[i], op_len))
			one = true;
	for (size_t i = 0; i < N_OPS; i++) {
		if (one && (op_len != strlen(op_names[i]) || memcmp(op_p, op_names[i], op_len)))
			continue;
		c.op = ops[i];
		sup_crit_json_eval(&c, data, doc_len, &r[i]);
		check_sane(&c, &r[i]);

		bool ordering = i >= 3;
		if (!pointer_valid(pointer) || (ordering && c.value_type != POL_TASK_JSON_NUMBER))
			CHECK(r[i].error);
		else
			CHECK(r[i].evaluated);

		struct sup_crit_result again;
		sup_crit_json_eval(&c, data, doc_len, &again);
		CHECK(same_result(&r[i], &again));
	}

	/* The same judgement with a threshold of 0 passes whenever it was judged. */
	c.op = POL_TASK_JSON_EXISTS;
	c.pass_threshold_milli = 0;
	struct sup_crit_result z;
	sup_crit_json_eval(&c, data, doc_len, &z);
	check_sane(&c, &z);
	CHECK(z.passed == z.evaluated);

	if (!one && !r[2].error) {
		bool exists = r[2].passed;
		bool eq = r[0].passed, ne = r[1].passed;
		CHECK(!r[0].error && !r[1].error);
		CHECK(exists ? eq != ne : !eq && !ne);
		if (c.value_type == POL_TASK_JSON_NUMBER) {
			bool lt = r[3].passed, le = r[4].passed, gt = r[5].passed, ge = r[6].passed;
			CHECK(!(lt && ge) && !(le && gt));
			CHECK((lt || ge) == (le || gt));
			CHECK(!lt || le);
			CHECK(!gt || ge);
			if (!exists)
				CHECK(!lt && !le && !gt && !ge);
			if (eq)
				CHECK(le && ge && !lt && !gt);
		}
	}
	judge_stdout(data, doc_len, value);

	free(pointer);
	free(value);
	return 0;
}
