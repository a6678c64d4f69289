/* SPDX-License-Identifier: MIT */
/*
 * warden: command-line entry point.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "config.h"
#include "eval.h"
#include "audit.h"
#include "changes.h"
#include "cli.h"
#include "log.h"
#include "run.h"
#include "sbx-seccomp.h"
#include "supervisor.h"

DEFINE_CLEANUP(struct pol_policy *, pol_free)

/* Exit codes of `warden policy`. */
#define EXIT_OK 0
#define EXIT_BAD_INPUT CLI_EXIT_USAGE

static const char usage_main[] =
	"Usage: warden COMMAND [OPTIONS]\n"
	"\n"
	"A sandbox supervisor for untrusted programs.\n"
	"\n"
	"Commands:\n"
	"  run [OPTIONS] -- CMD [ARGS...]   run CMD in a sandbox\n"
	"  policy show default              print the embedded default policy\n"
	"  policy check FILE                validate a policy file\n"
	"  policy seccomp [FILE]            print the compiled seccomp filter (PFC)\n"
	"  audit [--policy FILE] [--json]   prove each guarantee with kernel evidence\n"
	"  doctor [--json]                  check that this host can isolate\n"
	"  check [--json] TASK              validate an evaluation task (docs/eval.md)\n"
	"  eval [--out DIR] [--jobs N] TASK...  run evaluation tasks\n"
	"  grade [--yes] RUN_DIR...         grade recorded runs again, behind a trust gate\n"
	"  changes [--json]                 list pending changesets (docs/workspace.md)\n"
	"  diff ID [--stat] [--json]        show what a changeset holds and would do\n"
	"  apply ID [--include GLOB]...     apply a changeset (--dry-run, --force)\n"
	"  discard ID                       delete a changeset\n"
	"\n"
	"Options:\n"
	"  -h, --help      show this help (also: warden COMMAND --help)\n"
	"  -V, --version   print the version\n"
	"\n"
	"Exit status: that of the command; 125 for an unknown command or none.\n";

static const char usage_run[] =
	"Usage: warden run [OPTIONS] [--] CMD [ARGS...]\n"
	"\n"
	"Runs CMD inside a new sandbox: new user, pid, mount, network, uts, ipc and cgroup\n"
	"namespaces; a read-only host /usr; the workspace read-write at /workspace; no\n"
	"capabilities; no_new_privs; a seccomp allowlist; cgroup and rlimit limits; only\n"
	"loopback networking. stdin, stdout and stderr pass through.\n"
	"\n"
	"Options:\n"
	"  --policy FILE      policy file (default: the embedded strict policy)\n"
	"  --workspace DIR    the workspace, seen at /workspace (default: .)\n"
	"  --workspace-mode changes|direct\n"
	"                     changes (the policy's default): writes go to a changeset that\n"
	"                     warden applies under its rules when the command ends; direct:\n"
	"                     live writes to the host tree (docs/workspace.md)\n"
	"  --apply safe|none  at the end, apply the changeset's safe part (safe) or keep all\n"
	"                     of it pending for review (none)\n"
	"  --timeout SECONDS  wall-clock limit, overriding the policy's (0 = none)\n"
	"  --record DIR       write DIR/record.json, the run record (atomically)\n"
	"  -q, --quiet        print only errors\n"
	"  -v, --verbose      print progress\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status:\n"
	"  N        the command's own exit status\n"
	"  128+N    the command was killed by signal N (or warden received signal N)\n"
	"  123      the sandbox broke the worker protocol or failed attestation\n"
	"  124      the wall-clock limit was reached\n"
	"  125      warden failed: before the command started (bad policy, a step of\n"
	"           isolation that could not be applied, bad usage), or by an internal\n"
	"           error of its own at any time, never the sandbox's doing\n"
	"  126      the command was found but could not be executed\n"
	"  127      the command was not found inside the sandbox\n";

static const char usage_policy[] =
	"Usage: warden policy show default\n"
	"       warden policy check [--json] FILE\n"
	"       warden policy seccomp [FILE]\n"
	"\n"
	"  show default    print the embedded default policy (YAML)\n"
	"  check FILE      parse and validate FILE (with everything it extends), compile its\n"
	"                  seccomp filter, and print the effective policy: YAML, or JSON with\n"
	"                  --json\n"
	"  seccomp [FILE]  print the seccomp filter compiled for FILE (default: the embedded\n"
	"                  policy): which syscalls are allowed, refused with EPERM, or answered\n"
	"                  ENOSYS as unknown, then the filter in libseccomp's PFC form\n"
	"\n"
	"Exit status: 0 valid, 2 invalid policy or bad usage, 1 other failure.\n";

static int parse_seconds(const char *s, uint64_t *out_ms)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > UINT64_MAX / 1000)
		return -EINVAL;
	*out_ms = (uint64_t)v * 1000;
	return 0;
}

enum {
	OPT_POLICY = CLI_LONG,
	OPT_WORKSPACE,
	OPT_WORKSPACE_MODE,
	OPT_APPLY,
	OPT_TIMEOUT,
	OPT_RECORD,
};

static const struct cli_option run_options[] = {
	{ "policy", OPT_POLICY, true },
	{ "workspace", OPT_WORKSPACE, true },
	{ "workspace-mode", OPT_WORKSPACE_MODE, true },
	{ "apply", OPT_APPLY, true },
	{ "timeout", OPT_TIMEOUT, true },
	{ "record", OPT_RECORD, true },
	{ "quiet", 'q', false },
	{ "verbose", 'v', false },
	{ NULL, 0, false },
};

/* run takes a command line of its own: options end at its first word. */
static const struct cli_command run_command = {
	.name = "run",
	.help = usage_run,
	.options = run_options,
	.in_order = true,
	.min_operands = 1,
	.max_operands = CLI_ANY,
	.operands = "CMD",
	.usage_exit = SUP_EXIT_SETUP,
};

int sup_cmd_run(int argc, char **argv)
{
	const struct cli_command *cmd = &run_command;
	struct sup_run_opts opts = { 0 };
	_cleanup_(cli_done) struct cli cli = { 0 };
	if (cli_start(&cli, cmd, argc, argv) < 0)
		return SUP_EXIT_SETUP;
	int key;
	while ((key = cli_next(&cli)) > 0) {
		switch (key) {
		case OPT_POLICY:
			opts.policy_path = cli.arg;
			break;
		case OPT_WORKSPACE:
			opts.workspace = cli.arg;
			break;
		case OPT_WORKSPACE_MODE:
			opts.ws_mode_set = true;
			if (strcmp(cli.arg, "changes") == 0)
				opts.ws_mode = POL_WS_CHANGES;
			else if (strcmp(cli.arg, "direct") == 0)
				opts.ws_mode = POL_WS_DIRECT;
			else
				return cli_usage(cmd, "--workspace-mode: '%s' is not changes or direct",
						 cli.arg);
			break;
		case OPT_APPLY:
			opts.apply_set = true;
			if (strcmp(cli.arg, "safe") == 0)
				opts.apply = POL_WS_APPLY_SAFE;
			else if (strcmp(cli.arg, "none") == 0)
				opts.apply = POL_WS_APPLY_NONE;
			else
				return cli_usage(cmd, "--apply: '%s' is not safe or none", cli.arg);
			break;
		case OPT_TIMEOUT:
			if (parse_seconds(cli.arg, &opts.timeout_ms) < 0)
				return cli_usage(cmd, "--timeout: '%s' is not a whole number of seconds",
						 cli.arg);
			opts.timeout_set = true;
			break;
		case OPT_RECORD:
			opts.record_dir = cli.arg;
			break;
		case 'q':
			sup_log_level = LOG_LEVEL_QUIET;
			break;
		case 'v':
			sup_log_level = LOG_LEVEL_VERBOSE;
			break;
		default:
			return cli_usage(cmd, "option %d is not handled", key);
		}
	}
	if (key == CLI_STOP)
		return cli.exit_code;
	/* The operands are argv's own tail, NULL-terminated like argv. */
	opts.argv = cli.operands;

	struct sup_run_result res;
	int code = sup_run(&opts, &res);
	if (opts.record_dir) {
		int r = sup_record_write(opts.record_dir, &opts, &res);
		if (r < 0) {
			log_errno(r, "write the run record to '%s'", opts.record_dir);
			if (code == 0)
				code = SUP_EXIT_SETUP;
		}
	}
	sup_run_result_done(&res);
	return code;
}

static int policy_print_error(const char *path, int r, const struct pol_diag *diag)
{
	if (r == -EINVAL) {
		(void)fprintf(stderr, "%s:%u:%u: %s\n", diag->file, diag->line, diag->column,
			      diag->message);
		return EXIT_BAD_INPUT;
	}
	if (diag->message[0])
		log_error("%s", diag->message);
	else
		log_errno(r, "read policy '%s'", path ? path : "default");
	return r == -E2BIG || r == -ENOENT || r == -ENXIO ? EXIT_BAD_INPUT : 1;
}

/*
 * Parses a policy subcommand's line (argv[0] is its name) for cmd. Returns true with the
 * operands in c and *out_json set when the subcommand goes on; false when it ends now with
 * c->exit_code (its help printed, or a usage error reported).
 */
static bool policy_parse(struct cli *c, const struct cli_command *cmd, int argc, char **argv,
			 bool *out_json)
{
	int go = cli_parse_flag(c, cmd, argc, argv, out_json); /* policy check's --json */
	if (go < 0)
		c->exit_code = 1;
	return go > 0;
}

static const struct cli_command policy_show_command = {
	.name = "policy show",
	.help = usage_policy,
	.min_operands = 1,
	.max_operands = 1,
	.operands = "'default'",
	.usage_exit = EXIT_BAD_INPUT,
};

static int policy_show(int argc, char **argv)
{
	_cleanup_(cli_done) struct cli cli = { 0 };
	bool json = false;
	if (!policy_parse(&cli, &policy_show_command, argc, argv, &json))
		return cli.exit_code;
	if (strcmp(cli.operands[0], "default") != 0)
		return cli_usage(&policy_show_command, "'%s' is not 'default'", cli.operands[0]);
	size_t len = 0;
	const char *def = pol_default_yaml(&len);
	return fwrite(def, 1, len, stdout) == len ? EXIT_OK : 1;
}

static const struct cli_option policy_check_options[] = {
	{ "json", CLI_LONG, false },
	{ NULL, 0, false },
};

static const struct cli_command policy_check_command = {
	.name = "policy check",
	.help = usage_policy,
	.options = policy_check_options,
	.min_operands = 1,
	.max_operands = 1,
	.operands = "FILE",
	.usage_exit = EXIT_BAD_INPUT,
};

static int policy_check(int argc, char **argv)
{
	_cleanup_(cli_done) struct cli cli = { 0 };
	bool json = false;
	if (!policy_parse(&cli, &policy_check_command, argc, argv, &json))
		return cli.exit_code;
	const char *file = cli.operands[0];
	struct pol_diag diag;
	_cleanup_(pol_freep) struct pol_policy *pol = NULL;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = sup_load_policy(file, &pol, &text, &len, &diag);
	if (r < 0)
		return policy_print_error(file, r, &diag);
	char why[512];
	r = sup_check_host_paths(pol, why, sizeof(why));
	if (r < 0) {
		(void)fprintf(stderr, "%s: %s\n", file, why);
		return EXIT_BAD_INPUT;
	}
	struct sbx_seccomp_prog prog = { 0 };
	struct fail fail;
	r = sbx_seccomp_build(pol, &prog, &fail);
	sbx_seccomp_prog_done(&prog);
	if (r < 0 && fail.err == 0) {
		log_error("%s: %s", file, fail.what);
		return EXIT_BAD_INPUT;
	}
	if (r < 0) {
		log_errno(r, "%s: the seccomp section does not compile", file);
		return EXIT_BAD_INPUT;
	}
	_cleanup_free_ char *printed = NULL;
	r = json ? pol_to_json(pol, &printed) : pol_to_yaml(pol, &printed);
	if (r < 0) {
		log_errno(r, "print the effective policy");
		return 1;
	}
	size_t plen = strlen(printed);
	if (fwrite(printed, 1, plen, stdout) != plen ||
	    (plen && printed[plen - 1] != '\n' && fputc('\n', stdout) == EOF))
		return 1;
	return EXIT_OK;
}

static const struct cli_command policy_seccomp_command = {
	.name = "policy seccomp",
	.help = usage_policy,
	.max_operands = 1,
	.operands = "FILE",
	.usage_exit = EXIT_BAD_INPUT,
};

static int policy_seccomp(int argc, char **argv)
{
	_cleanup_(cli_done) struct cli cli = { 0 };
	bool json = false;
	if (!policy_parse(&cli, &policy_seccomp_command, argc, argv, &json))
		return cli.exit_code;
	const char *path = cli.n_operands ? cli.operands[0] : NULL;
	struct pol_diag diag;
	_cleanup_(pol_freep) struct pol_policy *pol = NULL;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = sup_load_policy(path, &pol, &text, &len, &diag);
	if (r < 0)
		return policy_print_error(path, r, &diag);
	/* Which answer each syscall gets, in words, then the filter itself. */
	struct fail fail;
	fail_init(&fail);
	r = sbx_seccomp_describe(pol, stdout, &fail);
	if (r >= 0 && fflush(stdout) == EOF)
		r = -EIO;
	if (r >= 0)
		r = sbx_seccomp_export_pfc(pol, STDOUT_FILENO, &fail);
	if (r < 0 && fail_said(&fail) && fail.err == 0) {
		log_error("%s: %s", path ? path : "default", fail.what);
		return EXIT_BAD_INPUT;
	}
	if (r < 0) {
		log_errno(r, "compile the seccomp filter");
		return r == -EINVAL ? EXIT_BAD_INPUT : 1;
	}
	return EXIT_OK;
}

/* `warden policy [--help] SUBCOMMAND ...`: the subcommand's own line is parsed by it. */
static const struct cli_command policy_command = {
	.name = "policy",
	.help = usage_policy,
	.in_order = true,
	.min_operands = 1,
	.max_operands = CLI_ANY,
	.operands = "subcommand: show, check or seccomp",
	.usage_exit = EXIT_BAD_INPUT,
};

int sup_cmd_policy(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} subs[] = {
		{ "show", policy_show },
		{ "check", policy_check },
		{ "seccomp", policy_seccomp },
	};
	_cleanup_(cli_done) struct cli cli = { 0 };
	if (cli_start(&cli, &policy_command, argc, argv) < 0)
		return 1;
	int key = cli_next(&cli);
	if (key == CLI_STOP)
		return cli.exit_code;
	/* The subcommand is argv's own element: its line is the rest of argv from there. */
	const char *sub = cli.operands[0];
	int at = argc - (int)cli.n_operands;
	for (size_t i = 0; i < ELEMENTSOF(subs); i++)
		if (strcmp(sub, subs[i].name) == 0)
			return subs[i].fn(argc - at, argv + at);
	return cli_usage(&policy_command, "unknown subcommand '%s'", sub);
}

/* The commands, by the name typed after "warden". */
static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "run", sup_cmd_run },
	{ "policy", sup_cmd_policy },
	{ "doctor", sup_cmd_doctor },
	{ "audit", sup_cmd_audit },
	{ "check", ev_cmd_check },
	{ "eval", ev_cmd_eval },
	{ "grade", ev_cmd_grade },
	{ "changes", sup_cmd_changes },
	{ "diff", sup_cmd_diff },
	{ "apply", sup_cmd_apply },
	{ "discard", sup_cmd_discard },
};

static const struct cli_option main_options[] = {
	{ "version", 'V', false },
	{ NULL, 0, false },
};

/* `warden [-h|-V] COMMAND ...`: options only before the command, whose line is its own. */
static const struct cli_command main_command = {
	.name = "",
	.help = usage_main,
	.options = main_options,
	.in_order = true,
	.min_operands = 1,
	.max_operands = CLI_ANY,
	.operands = "command",
	.usage_exit = SUP_EXIT_SETUP,
};

int main(int argc, char **argv)
{
	/*
	 * A parent may have left SIGCHLD ignored, and that survives exec: the kernel would then
	 * reap our children unseen (waitid on the worker's pidfd fails) and send no SIGCHLD to a
	 * worker that inherits it. Every command starts from the default.
	 */
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	if (sigemptyset(&dfl.sa_mask) < 0 || sigaction(SIGCHLD, &dfl, NULL) < 0) {
		log_errno(-errno, "reset SIGCHLD to its default");
		return SUP_EXIT_SETUP;
	}
	_cleanup_(cli_done) struct cli cli = { 0 };
	if (cli_start(&cli, &main_command, argc, argv) < 0)
		return SUP_EXIT_SETUP;
	int key;
	while ((key = cli_next(&cli)) > 0) {
		(void)printf("warden %s\n", WARDEN_VERSION); /* -V, --version */
		return 0;
	}
	if (key == CLI_STOP)
		return cli.exit_code;
	const char *name = cli.operands[0];
	int at = argc - (int)cli.n_operands;
	if (strcmp(name, "help") == 0) {
		(void)fputs(usage_main, stdout);
		return 0;
	}
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		if (strcmp(name, commands[i].name) == 0)
			return commands[i].fn(argc - at, argv + at);
	log_error("unknown command '%s' (see 'warden --help')", name);
	return SUP_EXIT_SETUP;
}
