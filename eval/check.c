/* SPDX-License-Identifier: MIT */
/*
 * `warden check [--json] TASK.yaml`: validates an evaluation task without running anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "eval.h"
#include "log.h"
#include "policy.h"
#include "sbx-seccomp.h"
#include "supervisor.h"
#include "task.h"

DEFINE_CLEANUP(struct pol_task *, pol_task_free)

static const char usage[] =
	"Usage: warden check [--json] TASK.yaml\n"
	"\n"
	"Validates an evaluation task (docs/eval.md) without running anything: the file's\n"
	"syntax and schema, its policy (inline or a file, with everything it extends), the\n"
	"policy's seccomp filter and bind sources, and that the template and reference folders\n"
	"exist. Prints the normalised task as JSON with --json, else one line.\n"
	"\n"
	"Exit status: 0 valid; 2 invalid (FILE:LINE:COLUMN: message on stderr) or bad usage;\n"
	"1 another failure.\n";

/* A folder a task names must exist and be a directory (not a symlink). */
static int check_folder(const char *what, const char *path, char *why, size_t why_len)
{
	struct stat st;
	if (!path)
		return 0;
	if (lstat(path, &st) < 0) {
		int r = -errno;
		(void)snprintf(why, why_len, "%s folder '%s': %s", what, path, strerror(-r));
		return r;
	}
	if (!S_ISDIR(st.st_mode)) {
		(void)snprintf(why, why_len, "%s folder '%s' is not a directory", what, path);
		return -ENOTDIR;
	}
	return 0;
}

static const struct cli_option check_options[] = {
	{ "json", CLI_LONG, false },
	{ NULL, 0, false },
};

static const struct cli_command check_command = {
	.name = "check",
	.help = usage,
	.options = check_options,
	.min_operands = 1,
	.max_operands = 1,
	.operands = "TASK.yaml",
	.usage_exit = CLI_EXIT_USAGE,
};

int ev_cmd_check(int argc, char **argv)
{
	bool json = false;
	_cleanup_(cli_done) struct cli cli = { 0 };
	int go = cli_parse_flag(&cli, &check_command, argc, argv, &json);
	if (go <= 0)
		return go < 0 ? 1 : cli.exit_code;
	const char *file = cli.operands[0];
	struct pol_diag diag;
	_cleanup_(pol_task_freep) struct pol_task *task = NULL;
	int r = ev_load_task(file, &task, &diag);
	if (r == -EPERM) {
		(void)fprintf(stderr, "%s: %s\n", file, diag.message);
		return 2;
	}
	if (r == -EINVAL || r == -E2BIG) {
		(void)fprintf(stderr, "%s:%u:%u: %s\n", diag.file, diag.line, diag.column,
			      diag.message);
		return 2;
	}
	if (r < 0) {
		log_errno(r, "read task '%s'", file);
		return r == -ENOENT ? 2 : 1;
	}

	char why[600];
	r = sup_check_host_paths(task->policy, why, sizeof(why));
	if (r >= 0)
		r = check_folder("workspace template", task->workspace_template, why, sizeof(why));
	if (r >= 0)
		r = check_folder("reference", task->reference, why, sizeof(why));
	if (r < 0) {
		(void)fprintf(stderr, "%s: %s\n", file, why);
		return 2;
	}
	struct sbx_seccomp_prog prog = { 0 };
	struct fail fail;
	r = sbx_seccomp_build(task->policy, &prog, &fail);
	sbx_seccomp_prog_done(&prog);
	if (r < 0) {
		/* err 0: the policy's fault, named in what; else the errno alone, as before. */
		(void)fprintf(stderr, "%s: the policy's seccomp filter: %s\n", file,
			      fail.err == 0 ? fail.what : strerror(-r));
		return 2;
	}

	if (json) {
		_cleanup_free_ char *out = NULL;
		r = pol_task_to_json(task, &out);
		if (r < 0) {
			log_errno(r, "print the task");
			return 1;
		}
		(void)puts(out);
	} else {
		(void)printf("%s: task '%s' is valid: %zu setup step(s), %zu criteria, %zu "
			     "teardown step(s)\n",
			     file, task->task_id, task->n_setup, task->n_criteria, task->n_teardown);
	}
	return 0;
}
