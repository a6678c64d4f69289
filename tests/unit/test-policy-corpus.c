/* SPDX-License-Identifier: MIT */
/*
 * The bad-policy corpus: tests/policy-bad/NAME.yaml holds a broken policy and NAME.expected
 * the exact one-line diagnostic "FILE:LINE:COLUMN: message" the parser must give for it, with
 * FILE written as NAME.yaml (or, for an error inside an extended file, as that file's path
 * relative to the corpus directory).
 *
 * NAME.yaml is parsed with pol_parse("NAME.yaml", ...), except that a NAME starting with
 * "extends-" is parsed with pol_parse_file("/policy-bad/NAME.yaml", ...) and a loader that
 * maps /policy-bad/ onto the corpus directory (include/ holds the files they extend); the
 * /policy-bad/ prefix is dropped from the diagnostic's file. Files in subdirectories are not
 * cases themselves.
 *
 * The directory is POLICY_BAD_DIR, from the environment or else from the build (-D). Each case
 * is its own cmocka test; one more test fails when there are fewer than 45 cases, or a .yaml
 * without its .expected (or the reverse). The runner is corpus-util.c.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "corpus-util.h"
#include "policy.h"

#ifndef POLICY_BAD_DIR
#error "build with -DPOLICY_BAD_DIR=\"/path/to/tests/policy-bad\""
#endif

static int parse_policy(const char *name, const char *vpath, const char *text, size_t len,
			pol_loader load, void *load_ctx, struct pol_diag *out_diag,
			bool *out_produced)
{
	struct pol_policy *const untouched = (struct pol_policy *)(uintptr_t)0x5a5a5a5a;
	struct pol_policy *p = untouched;
	int r;

	if (strncmp(name, "extends-", 8) == 0)
		r = pol_parse_file(vpath, text, len, load, load_ctx, &p, out_diag);
	else
		r = pol_parse(name, text, len, &p, out_diag);
	*out_produced = p != untouched;
	if (r == 0 && *out_produced)
		pol_free(p);
	return r;
}

static const struct corpus policy_corpus = {
	.group = "policy-bad",
	.dir_env = "POLICY_BAD_DIR",
	.dir = POLICY_BAD_DIR,
	.virtual_root = "/policy-bad/",
	.min_cases = 45,
	.max_bytes = POL_MAX_INPUT_BYTES + 1,
	.parse = parse_policy,
};

int main(void)
{
	return corpus_run(&policy_corpus);
}
