/* SPDX-License-Identifier: MIT */
/*
 * The bad-task corpus: tests/task-bad/NAME.yaml holds a broken task file and NAME.expected the
 * exact one-line diagnostic "FILE:LINE:COLUMN: message" the parser must give for it, with FILE
 * written as NAME.yaml (or, for an error inside a policy file the task names, as that file's
 * path relative to the corpus directory).
 *
 * NAME.yaml is parsed with pol_task_parse("/task-bad/NAME.yaml", ...) and a loader that maps
 * /task-bad/ onto the corpus directory (include/ holds the policy files the cases name); the
 * /task-bad/ prefix is dropped from the diagnostic's file. Files in subdirectories are not
 * cases themselves.
 *
 * The directory is TASK_BAD_DIR, from the environment or else from the build (-D). Each case
 * is its own cmocka test; one more test fails when there are fewer than 40 cases, or a .yaml
 * without its .expected (or the reverse). The runner is corpus-util.c.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corpus-util.h"
#include "policy.h"
#include "task.h"

#ifndef TASK_BAD_DIR
#error "build with -DTASK_BAD_DIR=\"/path/to/tests/task-bad\""
#endif

static int parse_task(const char *name, const char *vpath, const char *text, size_t len,
		      pol_loader load, void *load_ctx, struct pol_diag *out_diag, bool *out_produced)
{
	struct pol_task *const untouched = (struct pol_task *)(uintptr_t)0x5a5a5a5a;
	struct pol_task *t = untouched;
	int r;

	(void)name;
	r = pol_task_parse(vpath, text, len, load, load_ctx, &t, out_diag);
	*out_produced = t != untouched;
	if (r == 0 && *out_produced)
		pol_task_free(t);
	return r;
}

static const struct corpus task_corpus = {
	.group = "task-bad",
	.dir_env = "TASK_BAD_DIR",
	.dir = TASK_BAD_DIR,
	.virtual_root = "/task-bad/",
	.min_cases = 40,
	.max_bytes = TASK_MAX_INPUT_BYTES + 1,
	.parse = parse_task,
};

int main(void)
{
	return corpus_run(&task_corpus);
}
