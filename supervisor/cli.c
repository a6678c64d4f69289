/* SPDX-License-Identifier: MIT */
/*
 * The option layer of warden's commands (cli.h), over glibc's getopt_long.
 *
 * getopt runs in its "return in order" mode ("-" first in the option string), where every
 * operand comes back as an option of key 1 and argv is never reordered: the layer collects
 * the operands itself, which gives GNU permutation whatever POSIXLY_CORRECT says. A command
 * that is in_order runs getopt in "+" mode instead: the first operand ends the options, and
 * it and everything after it are operands, as typed. ":" follows either, so that a missing
 * value is told from an unknown option, and getopt itself prints nothing (opterr 0).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "log.h"

/* getopt's key for an operand in "-" mode. */
#define KEY_OPERAND 1

int cli_start(struct cli *c, const struct cli_command *cmd, int argc, char **argv)
{
	memset(c, 0, sizeof(*c));
	size_t n = 0, o = 0;
	c->shortopts[o++] = cmd->in_order ? '+' : '-';
	c->shortopts[o++] = ':';
	for (const struct cli_option *opt = cmd->options; opt && opt->name; opt++, n++) {
		if (n == CLI_MAX_OPTIONS || opt->key <= KEY_OPERAND || opt->key == 'h' ||
		    opt->key == '?' || opt->key == ':' || (opt->key < CLI_LONG && opt->key > 0x7e))
			return -EINVAL;
		c->longopts[n] = (struct option){ opt->name,
						  opt->has_arg ? required_argument : no_argument,
						  NULL, opt->key };
		if (opt->key < CLI_LONG) {
			c->shortopts[o++] = (char)opt->key;
			if (opt->has_arg)
				c->shortopts[o++] = ':';
		}
	}
	c->longopts[n] = (struct option){ "help", no_argument, NULL, 'h' };
	c->longopts[n + 1] = (struct option){ NULL, 0, NULL, 0 };
	c->shortopts[o++] = 'h';
	c->shortopts[o] = '\0';
	/* At most every argument but the first is an operand. */
	c->operands = calloc(argc > 0 ? (size_t)argc : 1, sizeof(char *));
	if (!c->operands)
		return -ENOMEM;
	c->cmd = cmd;
	c->argc = argc;
	c->argv = argv;
	return 0;
}

int cli_usage(const struct cli_command *cmd, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (cmd->name[0])
		log_error("%s: %s (see 'warden %s --help')", cmd->name, what, cmd->name);
	else /* warden's own line, before any command */
		log_error("%s (see 'warden --help')", what);
	return cmd->usage_exit;
}

static int stop(struct cli *c, int code)
{
	c->exit_code = code;
	c->done = true;
	c->last = CLI_STOP;
	return CLI_STOP;
}

/* The option at fault, as typed: the argument getopt just passed over. */
static const char *typed(const struct cli *c)
{
	return optind > 0 && optind <= c->argc ? c->argv[optind - 1] : "?";
}

/* The command's own option whose long name is the start of arg ("--name=value"), or NULL. */
static const struct cli_option *named(const struct cli *c, const char *arg)
{
	if (strncmp(arg, "--", 2) != 0)
		return NULL;
	size_t len = strcspn(arg + 2, "=");
	for (const struct cli_option *o = c->cmd->options; o && o->name; o++)
		if (strlen(o->name) == len && strncmp(o->name, arg + 2, len) == 0)
			return o;
	return NULL;
}

/* getopt's '?': an option that does not exist, is ambiguous, or got a value it takes none of. */
static int bad_option(struct cli *c)
{
	const char *arg = typed(c);
	const struct cli_option *o = named(c, arg);
	if (o && !o->has_arg && strchr(arg, '='))
		return stop(c, cli_usage(c->cmd, "option '--%s' takes no value", o->name));
	if (optopt > 0 && optopt < 0x7f && strncmp(arg, "--", 2) != 0)
		return stop(c, cli_usage(c->cmd, "unknown option '-%c'", optopt));
	/* A long option that abbreviates two of the command's is ambiguous, not unknown. */
	int len = (int)strcspn(arg, "=");
	size_t n = 0;
	for (const struct option *l = c->longopts; l->name && len > 2; l++)
		n += strncmp(l->name, arg + 2, (size_t)len - 2) == 0;
	return stop(c, cli_usage(c->cmd, "%s option '%.*s'", n > 1 ? "ambiguous" : "unknown", len,
				 arg));
}

/* The options are read: the rest of argv is operands; their number must fit the command. */
static int finish(struct cli *c)
{
	for (int i = optind; i < c->argc; i++)
		c->operands[c->n_operands++] = c->argv[i];
	const struct cli_command *cmd = c->cmd;
	const char *what = cmd->operands ? cmd->operands : "argument";
	if (c->n_operands < cmd->min_operands)
		return stop(c, cli_usage(cmd, "missing %s", what));
	if (c->n_operands > cmd->max_operands)
		return stop(c, cli_usage(cmd, "unexpected argument '%s'",
					 c->operands[cmd->max_operands]));
	c->done = true;
	c->last = CLI_END;
	return CLI_END;
}

int cli_next(struct cli *c)
{
	if (c->done)
		return c->last;
	if (!c->started) {
		optind = 0; /* glibc: start afresh, the option string's mode included */
		opterr = 0;
		c->started = true;
	}
	c->arg = NULL;
	for (;;) {
		int key = getopt_long(c->argc, c->argv, c->shortopts, c->longopts, NULL);
		switch (key) {
		case -1:
			return finish(c);
		case KEY_OPERAND:
			c->operands[c->n_operands++] = optarg;
			continue;
		case 'h':
			(void)fputs(c->cmd->help, stdout);
			return stop(c, fflush(stdout) == EOF ? 1 : 0);
		case ':':
			return stop(c, cli_usage(c->cmd, "option '%s' needs a value", typed(c)));
		case '?':
			return bad_option(c);
		default:
			c->arg = optarg;
			return key;
		}
	}
}

int cli_parse_flag(struct cli *c, const struct cli_command *cmd, int argc, char **argv,
		   bool *flag)
{
	int r = cli_start(c, cmd, argc, argv);
	if (r < 0)
		return r;
	int key;
	while ((key = cli_next(c)) > 0)
		*flag = true;
	return key == CLI_END ? 1 : 0;
}

void cli_done(struct cli *c)
{
	free(c->operands);
	c->operands = NULL;
	c->n_operands = 0;
}
