/* SPDX-License-Identifier: MIT */
/*
 * cli: the one option layer of warden's commands, over getopt_long.
 *
 * A command describes itself once (struct cli_command: its name, its --help text, its
 * options, how many operands it takes, its usage-error exit status) and reads its options
 * with cli_next(). The layer gives every command the same behaviour:
 * - -h and --help print the command's help to stdout and end it with status 0, whatever
 *   else is on the line (even where an operand is expected: `warden policy check --help`);
 * - options and operands may come in any order (GNU permutation: `warden eval TASK --out
 *   DIR`), except for a command whose operands are a command line of their own (`warden run
 *   [OPTIONS] [--] CMD [ARGS...]`, in_order), where the first operand ends the options;
 * - "--" ends the options everywhere; what follows is operands, as typed;
 * - a usage error (an unknown option, a missing value, too few or too many operands, or a
 *   bad value the command finds) is one line on stderr, "warden: NAME: what (see 'warden
 *   NAME --help')", and the command's family's usage-error status, never the whole help.
 *
 * Permutation does not depend on POSIXLY_CORRECT: the layer reads operands in place (getopt's
 * "-" mode) rather than letting getopt reorder argv, which it leaves untouched.
 */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Keys of long-only options start here; a key below is also the option's short letter. */
#define CLI_LONG 0x100
/* The most options one command may have (--help not counted). */
#define CLI_MAX_OPTIONS 16
/* max_operands: no upper bound. */
#define CLI_ANY SIZE_MAX

/* Usage-error status of every family but run's (run's is SUP_EXIT_SETUP, 125). */
#define CLI_EXIT_USAGE 2

/* One option of a command. */
struct cli_option {
	const char *name;   /* the long name, without "--"; NULL ends a table */
	int key;            /* what cli_next returns: a short letter ('q' is also -q), or a
			       value from CLI_LONG up for an option that has no short form */
	bool has_arg;       /* takes a value: --name VALUE, --name=VALUE, -k VALUE, -kVALUE */
};

struct cli_command {
	const char *name;         /* as typed after "warden": "run", "policy check"; "" for
				     warden's own options before the command */
	const char *help;         /* the whole --help text, printed as it is */
	const struct cli_option *options; /* ends with { NULL }; may be NULL; never -h or help */
	bool in_order;            /* options only before the first operand (run) */
	size_t min_operands;
	size_t max_operands;      /* CLI_ANY: no limit */
	const char *operands;     /* how the help names them, for messages: "TASK.yaml" */
	int usage_exit;           /* the exit status of a usage error (the family's) */
};

/* A parse in progress. Caller-owned storage: cli_start, then cli_next, then cli_done. */
struct cli {
	const struct cli_command *cmd;
	const char *arg;          /* the value of the option cli_next just returned, or NULL */
	char **operands;          /* after CLI_END: the operands in order, NULL-terminated
				     (argv's strings, borrowed) */
	size_t n_operands;
	int exit_code;            /* after CLI_STOP: 0 (--help printed) or cmd->usage_exit */

	/* Private. */
	int argc;
	char **argv;
	bool started, done;
	int last;                 /* what cli_next returns once done */
	char shortopts[2 * CLI_MAX_OPTIONS + 6];
	struct option longopts[CLI_MAX_OPTIONS + 2];
};

/* What cli_next returns besides an option's key. */
#define CLI_END 0     /* the options are read; the operands are in c->operands */
#define CLI_STOP (-1) /* the command ends now with c->exit_code (help, or a usage error) */

/*
 * Starts parsing argv (argc entries; argv[0] is the command's name, as main passes
 * `argv + 1`) for cmd (borrowed, as are argv's strings, until cli_done). Returns 0, or
 * -EINVAL for a command table this layer cannot take (too many options, a key clash with
 * -h), -ENOMEM. On failure c needs no cli_done.
 */
int cli_start(struct cli *c, const struct cli_command *cmd, int argc, char **argv);

/*
 * The next option: its key (> 0), with its value in c->arg when it takes one; CLI_END when
 * every option is read and the operands' number is within the command's bounds; CLI_STOP
 * when the command must end now with c->exit_code, the help having been printed (0) or a
 * usage error reported in one line (cmd->usage_exit). After CLI_END or CLI_STOP it returns
 * the same again.
 */
int cli_next(struct cli *c);

/*
 * Reports a usage error of cmd in one line on stderr: "warden: NAME: <fmt ...> (see 'warden
 * NAME --help')". Returns cmd->usage_exit, so that a command can end with
 * `return cli_usage(cmd, "--jobs '%s' is not a number from 1 to 64", arg);`.
 */
__attribute__((format(printf, 2, 3))) int cli_usage(const struct cli_command *cmd,
						     const char *fmt, ...);

/*
 * The whole line of a command whose only option is a flag (--json): cli_start and cli_next
 * in one. Returns 1 when the command goes on (*flag set when the option was given), 0 when
 * it must end now with c->exit_code (help printed, or a usage error), or -errno from
 * cli_start (c then needs no cli_done).
 */
int cli_parse_flag(struct cli *c, const struct cli_command *cmd, int argc, char **argv,
		   bool *flag);

/* Frees what c holds (the operand array). Safe on a zeroed struct and twice. */
void cli_done(struct cli *c);
