/* SPDX-License-Identifier: MIT */
/*
 * warden: command-line entry point.
 */
#include <errno.h>
#include <getopt.h>
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
#include "log.h"
#include "run.h"
#include "sbx-seccomp.h"
#include "supervisor.h"

DEFINE_CLEANUP(struct pol_policy *, pol_free)

/* Exit codes of the commands other than run. */
#define EXIT_OK 0
#define EXIT_BAD_INPUT 2

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
	"  -V, --version   print the version\n";

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

int sup_cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "workspace-mode", required_argument, NULL, 'm' },
		{ "apply", required_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ "record", required_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sup_run_opts opts = { 0 };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+qvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			opts.policy_path = optarg;
			break;
		case 'w':
			opts.workspace = optarg;
			break;
		case 'm':
			opts.ws_mode_set = true;
			if (strcmp(optarg, "changes") == 0)
				opts.ws_mode = POL_WS_CHANGES;
			else if (strcmp(optarg, "direct") == 0)
				opts.ws_mode = POL_WS_DIRECT;
			else {
				log_error("--workspace-mode: '%s' is not changes or direct", optarg);
				return SUP_EXIT_SETUP;
			}
			break;
		case 'a':
			opts.apply_set = true;
			if (strcmp(optarg, "safe") == 0)
				opts.apply = POL_WS_APPLY_SAFE;
			else if (strcmp(optarg, "none") == 0)
				opts.apply = POL_WS_APPLY_NONE;
			else {
				log_error("--apply: '%s' is not safe or none", optarg);
				return SUP_EXIT_SETUP;
			}
			break;
		case 't':
			if (parse_seconds(optarg, &opts.timeout_ms) < 0) {
				log_error("--timeout: '%s' is not a whole number of seconds", optarg);
				return SUP_EXIT_SETUP;
			}
			opts.timeout_set = true;
			break;
		case 'r':
			opts.record_dir = optarg;
			break;
		case 'q':
			sup_log_level = LOG_LEVEL_QUIET;
			break;
		case 'v':
			sup_log_level = LOG_LEVEL_VERBOSE;
			break;
		case 'h':
			(void)fputs(usage_run, stdout);
			return 0;
		default:
			(void)fputs(usage_run, stderr);
			return SUP_EXIT_SETUP;
		}
	}
	if (optind >= argc) {
		log_error("run: no command given (see 'warden run --help')");
		return SUP_EXIT_SETUP;
	}
	opts.argv = argv + optind;

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
	log_errno(r, "read policy '%s'", path ? path : "default");
	return r == -E2BIG || r == -ENOENT ? EXIT_BAD_INPUT : 1;
}

int sup_cmd_policy(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		(void)fputs(usage_policy, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_BAD_INPUT : EXIT_OK;
	}
	const char *sub = argv[1];
	struct pol_diag diag;
	_cleanup_(pol_freep) struct pol_policy *pol = NULL;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;

	if (strcmp(sub, "show") == 0) {
		if (argc != 3 || strcmp(argv[2], "default") != 0) {
			(void)fputs(usage_policy, stderr);
			return EXIT_BAD_INPUT;
		}
		const char *def = pol_default_yaml(&len);
		return fwrite(def, 1, len, stdout) == len ? EXIT_OK : 1;
	}
	if (strcmp(sub, "check") == 0) {
		bool json = argc == 4 && strcmp(argv[2], "--json") == 0;
		if (argc != 3 + json) {
			(void)fputs(usage_policy, stderr);
			return EXIT_BAD_INPUT;
		}
		const char *file = argv[2 + json];
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
	if (strcmp(sub, "seccomp") == 0) {
		if (argc > 3) {
			(void)fputs(usage_policy, stderr);
			return EXIT_BAD_INPUT;
		}
		const char *path = argc == 3 ? argv[2] : NULL;
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
	log_error("policy: unknown subcommand '%s' (see 'warden policy --help')", sub);
	return EXIT_BAD_INPUT;
}

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
	if (argc < 2) {
		(void)fputs(usage_main, stderr);
		return SUP_EXIT_SETUP;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
		(void)fputs(usage_main, stdout);
		return 0;
	}
	if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
		(void)printf("warden %s\n", WARDEN_VERSION);
		return 0;
	}
	if (strcmp(cmd, "run") == 0)
		return sup_cmd_run(argc - 1, argv + 1);
	if (strcmp(cmd, "policy") == 0)
		return sup_cmd_policy(argc - 1, argv + 1);
	if (strcmp(cmd, "doctor") == 0)
		return sup_cmd_doctor(argc - 1, argv + 1);
	if (strcmp(cmd, "audit") == 0)
		return sup_cmd_audit(argc - 1, argv + 1);
	if (strcmp(cmd, "check") == 0)
		return ev_cmd_check(argc - 1, argv + 1);
	if (strcmp(cmd, "eval") == 0)
		return ev_cmd_eval(argc - 1, argv + 1);
	if (strcmp(cmd, "grade") == 0)
		return ev_cmd_grade(argc - 1, argv + 1);
	if (strcmp(cmd, "changes") == 0)
		return sup_cmd_changes(argc - 1, argv + 1);
	if (strcmp(cmd, "diff") == 0)
		return sup_cmd_diff(argc - 1, argv + 1);
	if (strcmp(cmd, "apply") == 0)
		return sup_cmd_apply(argc - 1, argv + 1);
	if (strcmp(cmd, "discard") == 0)
		return sup_cmd_discard(argc - 1, argv + 1);
	log_error("unknown command '%s' (see 'warden --help')", cmd);
	return SUP_EXIT_SETUP;
}
