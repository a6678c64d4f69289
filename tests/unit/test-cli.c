/* SPDX-License-Identifier: MIT */
/*
 * The option layer of warden's commands (supervisor/cli.h): permutation, in-order commands,
 * "--", option values in every form, --help, and the one-line usage errors with the
 * command's own exit status. Each parse runs with stdout and stderr captured, so that what
 * the user would see is checked too.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"

enum { OPT_JSON = CLI_LONG, OPT_NO_GRADE };

static const struct cli_option demo_options[] = {
	{ "out", 'o', true },
	{ "jobs", 'j', true },
	{ "quiet", 'q', false },
	{ "json", OPT_JSON, false },
	{ "no-grade", OPT_NO_GRADE, false },
	{ NULL, 0, false },
};

/* A command like eval: options and operands in any order, one operand at least. */
static const struct cli_command demo = {
	.name = "demo",
	.help = "Usage: warden demo [--out DIR] TASK...\n",
	.options = demo_options,
	.min_operands = 1,
	.max_operands = CLI_ANY,
	.operands = "TASK",
	.usage_exit = 2,
};

/* A command like run: the first operand ends the options. */
static const struct cli_command ordered = {
	.name = "ordered",
	.help = "Usage: warden ordered [OPTIONS] [--] CMD [ARGS...]\n",
	.options = demo_options,
	.in_order = true,
	.min_operands = 1,
	.max_operands = CLI_ANY,
	.operands = "CMD",
	.usage_exit = 125,
};

/* No options, exactly one operand. */
static const struct cli_command one = {
	.name = "one",
	.help = "Usage: warden one ID\n",
	.min_operands = 1,
	.max_operands = 1,
	.operands = "ID",
	.usage_exit = 2,
};

/* What one parse did: the options seen, the operands, the end, and the output. */
struct parsed {
	char trace[512];   /* "o=DIR q json " for each option, in order */
	char ops[512];     /* the operands, each followed by '|' */
	int end;           /* CLI_END or CLI_STOP */
	int exit_code;     /* after CLI_STOP */
	char out[512], err[512];
};

static void read_back(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
}

/* Parses the NULL-terminated words (words[0] is the command's name) for cmd into *p. */
static void parse(const struct cli_command *cmd, const char *const *words, struct parsed *p)
{
	char *argv[32];
	int argc = 0;
	for (; words[argc]; argc++) {
		assert_true(argc < 31);
		argv[argc] = (char *)words[argc];
	}
	argv[argc] = NULL;
	memset(p, 0, sizeof(*p));

	int out = memfd_create("out", MFD_CLOEXEC), err = memfd_create("err", MFD_CLOEXEC);
	assert_true(out >= 0 && err >= 0);
	assert_int_equal(fflush(stdout), 0);
	assert_int_equal(fflush(stderr), 0);
	int saved_out = dup(1), saved_err = dup(2);
	assert_true(saved_out >= 0 && saved_err >= 0);
	assert_true(dup2(out, 1) == 1 && dup2(err, 2) == 2);

	struct cli c;
	int r = cli_start(&c, cmd, argc, argv);
	int key = CLI_STOP;
	size_t o = 0;
	while (r == 0 && (key = cli_next(&c)) > 0) {
		char name[16];
		if (key < CLI_LONG)
			(void)snprintf(name, sizeof(name), "%c", key);
		else
			(void)snprintf(name, sizeof(name), "%s", key == OPT_JSON ? "json" : "no-grade");
		o += (size_t)snprintf(p->trace + o, sizeof(p->trace) - o, "%s%s%s ", name,
				      c.arg ? "=" : "", c.arg ? c.arg : "");
	}
	(void)fflush(stdout);
	(void)fflush(stderr);
	assert_true(dup2(saved_out, 1) == 1 && dup2(saved_err, 2) == 2);
	(void)close(saved_out);
	(void)close(saved_err);
	assert_int_equal(r, 0);

	p->end = key;
	p->exit_code = c.exit_code;
	/* Once done, cli_next keeps its answer. */
	assert_int_equal(cli_next(&c), key);
	if (key == CLI_END) {
		o = 0;
		for (size_t i = 0; i < c.n_operands; i++)
			o += (size_t)snprintf(p->ops + o, sizeof(p->ops) - o, "%s|", c.operands[i]);
		assert_null(c.operands[c.n_operands]);
	}
	cli_done(&c);
	cli_done(&c);
	read_back(out, p->out, sizeof(p->out));
	read_back(err, p->err, sizeof(p->err));
	(void)close(out);
	(void)close(err);
}

#define WORDS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* A usage error: CLI_STOP, the command's status, one line naming it, nothing on stdout. */
static void expect_usage(const struct parsed *p, int code, const char *what)
{
	assert_int_equal(p->end, CLI_STOP);
	assert_int_equal(p->exit_code, code);
	assert_string_equal(p->out, "");
	if (!strstr(p->err, what))
		fail_msg("stderr '%s' lacks '%s'", p->err, what);
	const char *nl = strchr(p->err, '\n');
	assert_non_null(nl);
	assert_string_equal(nl + 1, "");
	assert_non_null(strstr(p->err, "--help')"));
}

static void test_options_then_operands(void **state)
{
	(void)state;
	struct parsed p;
	parse(&demo, WORDS("demo", "--out", "DIR", "-j", "3", "a.yaml", "b.yaml"), &p);
	assert_int_equal(p.end, CLI_END);
	assert_string_equal(p.trace, "o=DIR j=3 ");
	assert_string_equal(p.ops, "a.yaml|b.yaml|");
	assert_string_equal(p.out, "");
	assert_string_equal(p.err, "");
}

/* GNU permutation: `warden eval TASK --out DIR` takes --out as an option, not a task. */
static void test_permutation(void **state)
{
	(void)state;
	struct parsed p;
	parse(&demo, WORDS("demo", "a.yaml", "--out", "DIR", "b.yaml", "--json", "-q"), &p);
	assert_int_equal(p.end, CLI_END);
	assert_string_equal(p.trace, "o=DIR json q ");
	assert_string_equal(p.ops, "a.yaml|b.yaml|");
}

/* Permutation whatever POSIXLY_CORRECT says. */
static void test_permutation_posixly_correct(void **state)
{
	(void)state;
	struct parsed p;
	assert_int_equal(setenv("POSIXLY_CORRECT", "1", 1), 0);
	parse(&demo, WORDS("demo", "a.yaml", "--out", "DIR"), &p);
	assert_int_equal(unsetenv("POSIXLY_CORRECT"), 0);
	assert_int_equal(p.end, CLI_END);
	assert_string_equal(p.trace, "o=DIR ");
	assert_string_equal(p.ops, "a.yaml|");
}

/* Every form of a value: separate, joined with '=', a short option's attached or separate. */
static void test_value_forms(void **state)
{
	(void)state;
	struct parsed p;
	parse(&demo, WORDS("demo", "--out=A", "-oB", "-o", "C", "--jobs", "--x", "t"), &p);
	assert_int_equal(p.end, CLI_END);
	assert_string_equal(p.trace, "o=A o=B o=C j=--x ");
	assert_string_equal(p.ops, "t|");
}

/* Short options cluster; a long-only option has no short form. */
static void test_short_cluster(void **state)
{
	(void)state;
	struct parsed p;
	parse(&demo, WORDS("demo", "-qj2", "t"), &p);
	assert_int_equal(p.end, CLI_END);
	assert_string_equal(p.trace, "q j=2 ");
	parse(&demo, WORDS("demo", "-n", "t"), &p);
	expect_usage(&p, 2, "demo: unknown option '-n'");
}

/* "--" ends the options: what follows is operands, dashes and all. */
static void test_double_dash(void **state)
{
	(void)state;
	struct parsed p;
	parse(&demo, WORDS("demo", "a", "--", "--out", "-q"), &p);
	assert_int_equal(p.end, CLI_END);
	assert_string_equal(p.trace, "");
	assert_string_equal(p.ops, "a|--out|-q|");
	/* A lone "-" is an operand. */
	parse(&demo, WORDS("demo", "-"), &p);
	assert_int_equal(p.end, CLI_END);
	assert_string_equal(p.ops, "-|");
}

/* In order (run): the first operand ends the options; the rest is the command's, as typed. */
static void test_in_order(void **state)
{
	(void)state;
	struct parsed p;
	parse(&ordered, WORDS("ordered", "-q", "sh", "-c", "--out", "x"), &p);
	assert_int_equal(p.end, CLI_END);
	assert_string_equal(p.trace, "q ");
	assert_string_equal(p.ops, "sh|-c|--out|x|");
	parse(&ordered, WORDS("ordered", "--out", "D", "--", "ls", "--", "-l"), &p);
	assert_int_equal(p.end, CLI_END);
	assert_string_equal(p.trace, "o=D ");
	assert_string_equal(p.ops, "ls|--|-l|");
	/* Even a --help after the command is the command's. */
	parse(&ordered, WORDS("ordered", "ls", "--help"), &p);
	assert_int_equal(p.end, CLI_END);
	assert_string_equal(p.ops, "ls|--help|");
	assert_string_equal(p.out, "");
}

/* --help and -h: the help on stdout, status 0, wherever they stand and whatever else is there. */
static void test_help(void **state)
{
	(void)state;
	const char *const *const lines[] = {
		WORDS("demo", "--help"),
		WORDS("demo", "-h"),
		WORDS("demo", "a.yaml", "--help"),
		WORDS("demo", "--out", "D", "-h", "--nonsense"),
		WORDS("demo", "--he"),
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct parsed p;
		parse(&demo, lines[i], &p);
		assert_int_equal(p.end, CLI_STOP);
		assert_int_equal(p.exit_code, 0);
		assert_string_equal(p.out, demo.help);
		assert_string_equal(p.err, "");
	}
	struct parsed p;
	parse(&one, WORDS("one", "--help"), &p); /* where an operand is expected */
	assert_int_equal(p.end, CLI_STOP);
	assert_int_equal(p.exit_code, 0);
	assert_string_equal(p.out, one.help);
	parse(&ordered, WORDS("ordered", "-q", "--help", "ls"), &p);
	assert_int_equal(p.exit_code, 0);
	assert_string_equal(p.out, ordered.help);
}

static void test_unknown_option(void **state)
{
	(void)state;
	struct parsed p;
	parse(&demo, WORDS("demo", "t", "--bogus"), &p);
	expect_usage(&p, 2, "warden: demo: unknown option '--bogus' (see 'warden demo --help')");
	parse(&demo, WORDS("demo", "--bogus=1", "t"), &p);
	expect_usage(&p, 2, "unknown option '--bogus'");
	parse(&demo, WORDS("demo", "-x", "t"), &p);
	expect_usage(&p, 2, "unknown option '-x'");
	parse(&ordered, WORDS("ordered", "--bogus", "ls"), &p);
	expect_usage(&p, 125, "warden: ordered: unknown option '--bogus'");
}

static void test_ambiguous_option(void **state)
{
	(void)state;
	struct parsed p;
	parse(&demo, WORDS("demo", "--j", "t"), &p); /* --jobs or --json */
	expect_usage(&p, 2, "ambiguous option '--j'");
	/* An unambiguous abbreviation is the option. */
	parse(&demo, WORDS("demo", "--no", "t"), &p);
	assert_int_equal(p.end, CLI_END);
	assert_string_equal(p.trace, "no-grade ");
}

static void test_missing_value(void **state)
{
	(void)state;
	struct parsed p;
	parse(&demo, WORDS("demo", "t", "--out"), &p);
	expect_usage(&p, 2, "demo: option '--out' needs a value");
	parse(&demo, WORDS("demo", "t", "-o"), &p);
	expect_usage(&p, 2, "option '-o' needs a value");
}

static void test_value_not_taken(void **state)
{
	(void)state;
	struct parsed p;
	parse(&demo, WORDS("demo", "--json=yes", "t"), &p);
	expect_usage(&p, 2, "option '--json' takes no value");
}

static void test_operand_counts(void **state)
{
	(void)state;
	struct parsed p;
	parse(&demo, WORDS("demo", "--json"), &p);
	expect_usage(&p, 2, "demo: missing TASK");
	parse(&one, WORDS("one"), &p);
	expect_usage(&p, 2, "one: missing ID");
	parse(&one, WORDS("one", "a", "b"), &p);
	expect_usage(&p, 2, "one: unexpected argument 'b'");
	parse(&one, WORDS("one", "a"), &p);
	assert_int_equal(p.end, CLI_END);
	assert_string_equal(p.ops, "a|");
	/* An option of another command is unknown here. */
	parse(&one, WORDS("one", "a", "--json"), &p);
	expect_usage(&p, 2, "unknown option '--json'");
}

/* A command's own check of a value: the same one line and status. */
static void test_cli_usage(void **state)
{
	(void)state;
	int err = memfd_create("err", MFD_CLOEXEC);
	assert_true(err >= 0);
	assert_int_equal(fflush(stderr), 0);
	int saved = dup(2);
	assert_true(saved >= 0 && dup2(err, 2) == 2);
	int code = cli_usage(&demo, "--jobs '%s' is not a number from 1 to 64", "x");
	(void)fflush(stderr);
	assert_true(dup2(saved, 2) == 2);
	(void)close(saved);
	char buf[512];
	read_back(err, buf, sizeof(buf));
	(void)close(err);
	assert_int_equal(code, 2);
	assert_string_equal(buf, "warden: demo: --jobs 'x' is not a number from 1 to 64 (see "
				 "'warden demo --help')\n");
}

/* Each parse starts afresh: a second command after a first (policy, then its subcommand). */
static void test_parse_twice(void **state)
{
	(void)state;
	struct parsed p;
	parse(&ordered, WORDS("ordered", "-q", "x", "--out", "D"), &p);
	assert_string_equal(p.ops, "x|--out|D|");
	parse(&demo, WORDS("x", "--out", "D", "t"), &p);
	assert_int_equal(p.end, CLI_END);
	assert_string_equal(p.trace, "o=D ");
	assert_string_equal(p.ops, "t|");
}

/* A table the layer cannot take is refused, not half-parsed. */
static void test_bad_table(void **state)
{
	(void)state;
	static const struct cli_option with_h[] = { { "host", 'h', true }, { NULL, 0, false } };
	static const struct cli_command bad = { .name = "bad", .help = "", .options = with_h,
						.max_operands = CLI_ANY, .usage_exit = 2 };
	char *argv[] = { (char *)"bad", NULL };
	struct cli c;
	assert_int_equal(cli_start(&c, &bad, 1, argv), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options_then_operands),
		cmocka_unit_test(test_permutation),
		cmocka_unit_test(test_permutation_posixly_correct),
		cmocka_unit_test(test_value_forms),
		cmocka_unit_test(test_short_cluster),
		cmocka_unit_test(test_double_dash),
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_unknown_option),
		cmocka_unit_test(test_ambiguous_option),
		cmocka_unit_test(test_missing_value),
		cmocka_unit_test(test_value_not_taken),
		cmocka_unit_test(test_operand_counts),
		cmocka_unit_test(test_cli_usage),
		cmocka_unit_test(test_parse_twice),
		cmocka_unit_test(test_bad_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
