/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the task parser (eval/task.c): defaults, every field, every rule with its
 * exact file, line, column and message, the policy in its three forms, placeholders, regexes,
 * JSON values, the bounds, and the JSON printer.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "cleanup.h"
#include "policy.h"
#include "task.h"
#include "unit-util.h"

#define TASK_PATH "/t/task.yaml"

DEFINE_CLEANUP(cJSON *, cJSON_Delete)

/* A minimal valid task: three lines, then whatever a test adds from line 4 on. */
#define HEAD "schema_version: 1\ntask_id: t1\nagent: {run: [agent]}\n"
#define CRIT "criteria: [{description: d, file_exists: out.txt}]\n"

/* A value no parse ever stores, to prove *out is untouched on failure. */
static struct pol_task *const sentinel = (struct pol_task *)(uintptr_t)0x5a5a5a5a;

/* The files the loader serves. */
static const struct {
	const char *path;
	const char *text;
} files[] = {
	{ "/t/p.yaml", "hostname: from-file\nlimits: {memory: 1G}\n" },
	{ "/t/sub/p.yaml", "extends: /t/p.yaml\n" },
	{ "/t/sub/q.yaml", "extends: /t/p.yaml\nhostname: sub\n" },
	{ "/t/bad.yaml", "hostname: ok\nlimits:\n  memroy: 1G\n" },
	{ "/abs/p.yaml", "hostname: abs\n" },
	{ "/t/task.yaml", "not: a policy\n" },
	{ "/t/empty.yaml", "" },
};

static int test_load(void *ctx, const char *abs_path, char **out_buf, size_t *out_len)
{
	(void)ctx;
	if (!strcmp(abs_path, "/t/big.yaml")) {
		*out_len = POL_MAX_INPUT_BYTES + 1;
		*out_buf = malloc(*out_len);
		if (!*out_buf)
			return -ENOMEM;
		memset(*out_buf, '#', *out_len);
		return 0;
	}
	if (!strcmp(abs_path, "/t/denied.yaml"))
		return -EACCES;
	for (size_t i = 0; i < ELEMENTSOF(files); i++) {
		if (strcmp(abs_path, files[i].path))
			continue;
		*out_len = strlen(files[i].text);
		*out_buf = strdup(files[i].text);
		return *out_buf ? 0 : -ENOMEM;
	}
	return -ENOENT;
}

static struct pol_task *parse_ok_at(const char *path, const char *yaml)
{
	struct pol_task *t = NULL;
	struct pol_diag d = { .line = 12345 };
	int r = pol_task_parse(path, yaml, strlen(yaml), test_load, NULL, &t, &d);
	unit_assert_parsed(r, &d);
	assert_non_null(t);
	assert_int_equal(d.line, 12345); /* untouched on success */
	return t;
}

static struct pol_task *parse_ok(const char *yaml)
{
	return parse_ok_at(TASK_PATH, yaml);
}

static void check_error_full(const char *path, const char *yaml, size_t len, pol_loader load,
			     int err, const char *file, unsigned line, unsigned column,
			     const char *substr)
{
	struct pol_task *t = sentinel;
	struct pol_diag d;
	int r;

	memset(&d, 0, sizeof(d));
	r = pol_task_parse(path, yaml, len, load, NULL, &t, &d);
	unit_assert_diag(r, &d, err, file, line, column, substr, UNIT_MSG_PART);
	assert_ptr_equal(t, sentinel);
}

static void check_error(const char *yaml, unsigned line, unsigned column, const char *substr)
{
	check_error_full(TASK_PATH, yaml, strlen(yaml), test_load, -EINVAL, TASK_PATH, line,
			 column, substr);
}

/* HEAD, then body, then CRIT: body starts at line 4. */
static void check_body_error(const char *body, unsigned line, unsigned column, const char *substr)
{
	_cleanup_free_ char *y = unit_fmt(HEAD "%s" CRIT, body);
	check_error(y, line, column, substr);
}

/* HEAD, then "criteria:\n" and the criterion lines: the criterion's first line is line 5. */
static void check_criterion_error(const char *criterion, unsigned line, unsigned column,
				  const char *substr)
{
	_cleanup_free_ char *y = unit_fmt(HEAD "criteria:\n%s", criterion);
	check_error(y, line, column, substr);
}

/* An input a check_* helper must see refused: where the error is, what its message holds. */
struct bad {
	const char *text;
	unsigned line;
	unsigned column;
	const char *msg;
};

/* Hands each entry of bad to check (check_error, check_body_error, ...). */
static void check_errors(void (*check)(const char *, unsigned, unsigned, const char *),
			 const struct bad *bad, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check(bad[i].text, bad[i].line, bad[i].column, bad[i].msg);
}

static struct pol_task *parse_criterion(const char *criterion)
{
	_cleanup_free_ char *y = unit_fmt(HEAD "criteria:\n%s", criterion);
	return parse_ok(y);
}

/* head, then line n times, then tail, as a new string the caller frees. */
static char *repeat_line(const char *head, const char *line, int n, const char *tail)
{
	char *y = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&y, &len);

	assert_non_null(f);
	fputs(head, f);
	for (int i = 0; i < n; i++)
		fputs(line, f);
	fputs(tail, f);
	fclose(f);
	return y;
}

/* ------------------------------------------------------------------------------------------ */
/* Valid tasks                                                                                */

static void test_minimal_defaults(void **state)
{
	struct pol_task *t = parse_ok(HEAD CRIT);
	(void)state;

	assert_string_equal(t->source, TASK_PATH);
	assert_string_equal(t->task_id, "t1");
	assert_null(t->description);
	assert_int_equal(t->policy_from, POL_TASK_POLICY_DEFAULT);
	assert_null(t->policy_path);
	assert_non_null(t->policy);
	assert_int_equal(t->policy->n_sources, 1);
	assert_string_equal(t->policy->sources[0], "<default>");
	assert_null(t->workspace_template);
	assert_int_equal(t->n_files, 0);
	assert_int_equal(t->n_setup, 0);
	assert_int_equal(t->agent.n_argv, 1);
	assert_string_equal(t->agent.argv[0], "agent");
	assert_null(t->agent.argv[1]);
	assert_int_equal(t->agent.timeout_ms, 600000);
	assert_int_equal(t->agent.n_env_pass, 0);
	assert_null(t->reference);
	assert_int_equal(t->n_criteria, 1);
	assert_string_equal(t->criteria[0].description, "d");
	assert_int_equal(t->criteria[0].weight_milli, 1000);
	assert_int_equal(t->criteria[0].pass_threshold_milli, 1000);
	assert_int_equal(t->criteria[0].check, POL_TASK_FILE_EXISTS);
	assert_string_equal(t->criteria[0].path, "out.txt");
	assert_int_equal(t->n_teardown, 0);
	assert_null(pol_task_free(t));
}

static const char full_task[] =
	"# every key\n"
	"schema_version: 1\n"
	"task_id: Full_task-1.0\n"
	"description: Everything at once.\n"
	"policy: p.yaml\n"
	"workspace:\n"
	"  template: ./skeleton\n"
	"  files:\n"
	"    - { path: src/a.c, content: \"int a;\\n\" }\n"
	"    - { path: run.sh, content: \"\", mode: 0755 }\n"
	"    - { path: secret, content: x, mode: \"0600\" }\n"
	"setup:\n"
	"  - run: [make, -C, \"{workspace}\", \"{task_id}\"]\n"
	"  - { run: [\"true\"], timeout: 2m, fail_on_error: false }\n"
	"agent:\n"
	"  run: [claude, -p, \"fix {{this}} in {workspace}\"]\n"
	"  timeout: 1h\n"
	"  env: { pass: [ANTHROPIC_API_KEY, TERM] }\n"
	"reference: ref\n"
	"criteria:\n"
	"  - { description: e, weight: 0, file_exists: a/b }\n"
	"  - { description: f, weight: 2.5, pass_threshold: 0.75, file_absent: core }\n"
	"  - description: g\n"
	"    file_contains: { path: src/a.c, includes: [int, a], excludes: [abort] }\n"
	"  - description: h\n"
	"    file_matches: { path: src/a.c, regex: \"^int [a-z]+;$\" }\n"
	"  - description: i\n"
	"    json_equals: { path: out.json, pointer: \"/items/0/n~1m\", op: le, value: -1.5e3 }\n"
	"  - description: j\n"
	"    json_equals: { path: out.json, pointer: \"\", op: exists }\n"
	"  - description: k\n"
	"    command:\n"
	"      run: [diff, -r, \"{reference}\", \"{workspace}/out\"]\n"
	"      timeout: 90s\n"
	"      expect_exit: 1\n"
	"      stdout: { contains: differ }\n"
	"      env: { pass: [HOME] }\n"
	"teardown:\n"
	"  - { run: [rm, -rf, \"{workspace}/tmp\", \"{reference}\"], timeout: 5s }\n";

static void test_full_task(void **state)
{
	struct pol_task *t = parse_ok(full_task);
	const struct pol_task_criterion *c;
	(void)state;

	assert_string_equal(t->task_id, "Full_task-1.0");
	assert_string_equal(t->description, "Everything at once.");
	assert_int_equal(t->policy_from, POL_TASK_POLICY_FILE);
	assert_string_equal(t->policy_path, "/t/p.yaml");
	assert_string_equal(t->policy->hostname, "from-file");
	assert_int_equal(t->policy->memory_bytes, 1u << 30);
	assert_int_equal(t->policy->n_sources, 2);
	assert_string_equal(t->policy->sources[1], "/t/p.yaml");

	assert_string_equal(t->workspace_template, "/t/skeleton");
	assert_int_equal(t->n_files, 3);
	assert_string_equal(t->files[0].path, "src/a.c");
	assert_string_equal(t->files[0].content, "int a;\n");
	assert_int_equal(t->files[0].content_len, 7);
	assert_int_equal(t->files[0].mode, 0644);
	assert_string_equal(t->files[1].content, "");
	assert_int_equal(t->files[1].content_len, 0);
	assert_int_equal(t->files[1].mode, 0755);
	assert_int_equal(t->files[2].mode, 0600);

	assert_int_equal(t->n_setup, 2);
	assert_int_equal(t->setup[0].n_argv, 4);
	assert_string_equal(t->setup[0].argv[2], "{workspace}");
	assert_null(t->setup[0].argv[4]);
	assert_int_equal(t->setup[0].timeout_ms, 30000);
	assert_true(t->setup[0].fail_on_error);
	assert_int_equal(t->setup[1].timeout_ms, 120000);
	assert_false(t->setup[1].fail_on_error);

	assert_string_equal(t->agent.argv[2], "fix {{this}} in {workspace}");
	assert_int_equal(t->agent.timeout_ms, 3600000);
	assert_int_equal(t->agent.n_env_pass, 2);
	assert_string_equal(t->agent.env_pass[1], "TERM");
	assert_null(t->agent.env_pass[2]);

	assert_string_equal(t->reference, "/t/ref");
	assert_int_equal(t->n_criteria, 7);
	c = &t->criteria[0];
	assert_int_equal(c->weight_milli, 0);
	assert_string_equal(c->path, "a/b");
	c = &t->criteria[1];
	assert_int_equal(c->check, POL_TASK_FILE_ABSENT);
	assert_int_equal(c->weight_milli, 2500);
	assert_int_equal(c->pass_threshold_milli, 750);
	c = &t->criteria[2];
	assert_int_equal(c->check, POL_TASK_FILE_CONTAINS);
	assert_int_equal(c->n_includes, 2);
	assert_string_equal(c->includes[1], "a");
	assert_int_equal(c->n_excludes, 1);
	assert_string_equal(c->excludes[0], "abort");
	c = &t->criteria[3];
	assert_int_equal(c->check, POL_TASK_FILE_MATCHES);
	assert_string_equal(c->regex, "^int [a-z]+;$");
	c = &t->criteria[4];
	assert_int_equal(c->check, POL_TASK_JSON_EQUALS);
	assert_string_equal(c->pointer, "/items/0/n~1m");
	assert_int_equal(c->op, POL_TASK_JSON_LE);
	assert_int_equal(c->value_type, POL_TASK_JSON_NUMBER);
	assert_string_equal(c->value_text, "-1.5e3");
	assert_true(c->value_number == -1500.0);
	c = &t->criteria[5];
	assert_string_equal(c->pointer, "");
	assert_int_equal(c->op, POL_TASK_JSON_EXISTS);
	c = &t->criteria[6];
	assert_int_equal(c->check, POL_TASK_COMMAND);
	assert_int_equal(c->command.n_argv, 4);
	assert_int_equal(c->command.timeout_ms, 90000);
	assert_int_equal(c->command.expect_exit, 1);
	assert_int_equal(c->command.stdout_kind, POL_TASK_STDOUT_CONTAINS);
	assert_string_equal(c->command.stdout_text, "differ");
	assert_string_equal(c->command.env_pass[0], "HOME");

	assert_int_equal(t->n_teardown, 1);
	assert_int_equal(t->teardown[0].timeout_ms, 5000);
	assert_false(t->teardown[0].fail_on_error);
	pol_task_free(t);
}

static void test_null_path_and_diag(void **state)
{
	static const char y[] = HEAD CRIT;
	struct pol_task *t = NULL;
	(void)state;

	/* No path: "<input>", no loader needed, and no diag buffer needed either. */
	assert_int_equal(pol_task_parse(NULL, y, strlen(y), NULL, NULL, &t, NULL), 0);
	assert_string_equal(t->source, "<input>");
	pol_task_free(t);
	t = sentinel;
	assert_int_equal(pol_task_parse(NULL, "x: [", 4, NULL, NULL, &t, NULL), -EINVAL);
	assert_ptr_equal(t, sentinel);
	assert_null(pol_task_free(NULL));
}

static void test_relative_path_needs_absolute_task(void **state)
{
	(void)state;
	check_error_full("task.yaml", HEAD "reference: ref\n" CRIT,
			 strlen(HEAD "reference: ref\n" CRIT), test_load, -EINVAL, "task.yaml", 4,
			 12, "reference 'ref' is relative, and 'task.yaml' is not a normalised absolute file path");
	/* An absolute folder needs no task directory. */
	struct pol_task *t = parse_ok_at("task.yaml", HEAD "reference: /srv/ref\n" CRIT);
	assert_string_equal(t->reference, "/srv/ref");
	pol_task_free(t);
}

static void test_folders_resolve(void **state)
{
	static const struct bad refused[] = {
		{ "reference: ../ref\n", 4, 12,
		  "reference '../ref' has a '..' component (expected a path below the task file's directory, or an absolute one)" },
		{ "reference: /a//b\n", 4, 12,
		  "reference '/a//b' has an empty component or a trailing /" },
		{ "reference: ''\n", 4, 12,
		  "reference is an empty string (expected a path relative to the task file, or an absolute one)" },
		{ "reference: [a]\n", 4, 12, "reference is a sequence (expected a path" },
	};
	struct pol_task *t = parse_ok_at("/task.yaml", HEAD "reference: ./a/./b\n" CRIT);
	(void)state;
	assert_string_equal(t->reference, "/a/b");
	pol_task_free(t);
	t = parse_ok(HEAD "reference: .\n" CRIT);
	assert_string_equal(t->reference, "/t");
	pol_task_free(t);
	check_errors(check_body_error, refused, ELEMENTSOF(refused));
}

/* ------------------------------------------------------------------------------------------ */
/* Generic YAML rules                                                                         */

static void test_schema_version(void **state)
{
	static const struct bad refused[] = {
		{ "task_id: t\n", 1, 1,
		  "the top level has no schema_version (expected schema_version: 1)" },
		{ "schema_version: 2\ntask_id: t\n", 1, 17,
		  "schema_version '2' is not supported (expected 1)" },
		{ "schema_version: \"1\"\n", 1, 17,
		  "schema_version is a quoted string (expected 1)" },
		{ "schema_version: 01\n", 1, 17, "schema_version '01' is not supported" },
		/* checked first, wherever it stands: an unknown key before it is not reported */
		{ "bogus: 1\nschema_version: 3\n", 2, 17, "schema_version '3' is not supported" },
		{ HEAD CRIT "schema_version: 1\n", 5, 1,
		  "duplicate key 'schema_version' in the top level (expected each key once; first at line 1)" },
	};
	(void)state;
	check_errors(check_error, refused, ELEMENTSOF(refused));
}

static void test_required_keys(void **state)
{
	(void)state;
	check_error("schema_version: 1\nagent: {run: [a]}\n" CRIT, 1, 1,
		    "the top level has no task_id (expected schema_version, task_id, agent and criteria)");
	check_error("schema_version: 1\ntask_id: t\n" CRIT, 1, 1, "the top level has no agent");
	check_error(HEAD, 1, 1, "the top level has no criteria");
}

static void test_document_shape(void **state)
{
	static const struct bad refused[] = {
		{ "", 1, 1, "document is empty (expected a mapping of task fields)" },
		{ "- a\n", 1, 1, "document is a sequence (expected a mapping of task fields)" },
		{ "a\n", 1, 1, "document is a scalar (expected a mapping of task fields)" },
		{ HEAD CRIT "---\na: 1\n", 5, 1,
		  "a second document starts here (expected exactly one document)" },
		{ HEAD CRIT "bogus: 1\n", 5, 1,
		  "unknown key 'bogus' in the top level (expected one of: schema_version, task_id, description, policy, workspace, setup, agent, reference, criteria, teardown)" },
		{ HEAD CRIT "task_id: t2\n", 5, 1,
		  "duplicate key 'task_id' in the top level (expected each key once; first at line 2)" },
		{ HEAD CRIT "? [a]\n: b\n", 5, 3,
		  "key in the top level is a sequence (expected a scalar key)" },
		{ "%YAML 1.1\n---\n" HEAD CRIT, 1, 1, "YAML directive is not allowed" },
	};
	(void)state;
	check_errors(check_error, refused, ELEMENTSOF(refused));
	check_body_error("description: &d x\n", 4, 14, "anchor '&d' is not allowed");
	check_body_error("description: *d\n", 4, 14, "alias '*d' is not allowed");
	check_body_error("description: !!str x\n", 4, 14, "tag 'tag:yaml.org,2002:str' is not allowed");
	check_body_error("description: [a\n", 5, 9, "(expected valid YAML)");
}

/* HEAD, a description of n fill characters, then CRIT; '0' leaves a run of digits. */
static char *long_description(int n, char fill)
{
	char *y = unit_fmt(HEAD "description: %0*d\n" CRIT, n, 0);
	for (char *p = strstr(y, "description: ") + 13; *p == '0'; p++)
		*p = fill;
	return y;
}

static void test_input_bounds(void **state)
{
	_cleanup_free_ char *big = malloc(TASK_MAX_INPUT_BYTES + 1);
	_cleanup_free_ char *y = NULL;
	char nul[] = HEAD "description: a\0b\n" CRIT;
	(void)state;

	assert_non_null(big);
	memset(big, '#', TASK_MAX_INPUT_BYTES + 1);
	check_error_full(TASK_PATH, big, TASK_MAX_INPUT_BYTES + 1, test_load, -E2BIG, TASK_PATH, 0,
			 0, "input is 1048577 bytes (expected at most 1048576 bytes)");
	/* exactly the limit is parsed (a comment-only document is then empty) */
	check_error_full(TASK_PATH, big, TASK_MAX_INPUT_BYTES, test_load, -EINVAL, TASK_PATH, 2,
			 1, "document is empty");
	check_error_full(TASK_PATH, NULL, 3, test_load, -EINVAL, TASK_PATH, 0, 0,
			 "no input buffer (expected bytes)");
	check_error_full(TASK_PATH, nul, sizeof(nul) - 1, test_load, -EINVAL, TASK_PATH, 4, 15,
			 "(expected UTF-8 text without control characters)");
	check_body_error("description: \"a\\0b\"\n", 4, 14,
			 "string contains a NUL byte (expected text without NUL)");
	check_body_error("description: \"\xff\"\n", 4, 15, "(expected UTF-8 text without control characters)");

	/* 10 levels: the root, then 9 nested flow sequences */
	check_error(HEAD "description: [[[[[[[[[1]]]]]]]]]\n" CRIT, 4, 22,
		    "nesting is deeper than 9 levels (expected at most 9)");

	/* strings: 4096 bytes in a description, 4097 refused by its handler */
	y = long_description(TASK_MAX_STRING, 'x');
	pol_task_free(parse_ok(y));
	free(y);
	y = long_description(TASK_MAX_STRING + 1, 'x');
	check_error(y, 4, 14, "description is 4097 bytes long (expected at most 4096 bytes)");
	free(y);
	/* and the loader's own limit: the largest content */
	y = long_description(TASK_MAX_CONTENT + 1, '0');
	check_error(y, 4, 14, "string of 65537 bytes is too long (expected at most 65536 bytes)");
}

static void test_list_bounds(void **state)
{
	static const char agent_run[] = "schema_version: 1\ntask_id: t\nagent:\n  run:\n";
	char *y;
	(void)state;

	/* 257 argv elements: the loader's list limit */
	y = repeat_line(agent_run, "    - a\n", 257, CRIT);
	check_error(y, 261, 7, "sequence has more than 256 entries (expected at most 256)");
	free(y);

	/* 256 elements are fine */
	y = repeat_line(agent_run, "    - a\n", 256, CRIT);
	struct pol_task *t = parse_ok(y);
	assert_int_equal(t->agent.n_argv, 256);
	pol_task_free(t);
	free(y);
}

/* ------------------------------------------------------------------------------------------ */
/* Top-level values                                                                           */

static void test_task_id(void **state)
{
	static const struct bad refused[] = {
		{ "schema_version: 1\ntask_id: 12345678901234567890123456789012345678901234567890123456789012345\n", 2, 10,
		  "task_id is 65 bytes long (expected at most 64 bytes)" },
		{ "schema_version: 1\ntask_id: .hidden\n", 2, 10,
		  "task_id '.hidden' starts with '.' (expected 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-', not starting with '.' or '-')" },
		{ "schema_version: 1\ntask_id: -x\n", 2, 10, "task_id '-x' starts with '-'" },
		{ "schema_version: 1\ntask_id: a/b\n", 2, 10,
		  "task_id 'a/b' is not a valid task id" },
		{ "schema_version: 1\ntask_id: \"a b\"\n", 2, 10,
		  "task_id 'a b' is not a valid task id" },
		{ "schema_version: 1\ntask_id: \"\"\n", 2, 10, "task_id is an empty string" },
		{ "schema_version: 1\ntask_id:\n", 2, 9, "task_id is empty (expected 1 to 64" },
		{ "schema_version: 1\ntask_id: {a: b}\n", 2, 10, "task_id is a mapping" },
	};
	struct pol_task *t;
	(void)state;

	t = parse_ok("schema_version: 1\ntask_id: 1234567890123456789012345678901234567890123456789012345678901234\nagent: {run: [a]}\n" CRIT);
	assert_int_equal(strlen(t->task_id), 64);
	pol_task_free(t);
	t = parse_ok("schema_version: 1\ntask_id: \"a.b_c-D9\"\nagent: {run: [a]}\n" CRIT);
	assert_string_equal(t->task_id, "a.b_c-D9");
	pol_task_free(t);

	check_errors(check_error, refused, ELEMENTSOF(refused));
}

static void test_description(void **state)
{
	(void)state;
	check_body_error("description: \"\"\n", 4, 14,
			 "description is an empty string (expected text)");
	check_body_error("description: ~\n", 4, 14, "description is empty (expected text)");
	check_body_error("description: [a]\n", 4, 14, "description is a sequence (expected text)");
}

/* ------------------------------------------------------------------------------------------ */
/* policy                                                                                     */

static void test_policy_default(void **state)
{
	struct pol_task *t = parse_ok(HEAD "policy: default\n" CRIT);
	struct pol_policy *def = NULL;
	size_t len;
	const char *text = pol_default_yaml(&len);
	(void)state;

	assert_int_equal(t->policy_from, POL_TASK_POLICY_DEFAULT);
	assert_null(t->policy_path);
	assert_int_equal(pol_parse("<default>", text, len, &def, NULL), 0);
	assert_true(pol_equal(t->policy, def));
	pol_free(def);
	pol_task_free(t);
}

static void test_policy_file(void **state)
{
	struct pol_task *t = parse_ok(HEAD "policy: sub/p.yaml\n" CRIT);
	(void)state;

	/* relative to the task file; the policy's own extends resolve relative to it */
	assert_int_equal(t->policy_from, POL_TASK_POLICY_FILE);
	assert_string_equal(t->policy_path, "/t/sub/p.yaml");
	assert_int_equal(t->policy->n_sources, 3);
	assert_string_equal(t->policy->sources[1], "/t/p.yaml");
	assert_string_equal(t->policy->sources[2], "/t/sub/p.yaml");
	pol_task_free(t);
	t = parse_ok(HEAD "policy: /abs/p.yaml\n" CRIT);
	assert_string_equal(t->policy->hostname, "abs");
	pol_task_free(t);
}

static void test_policy_file_errors(void **state)
{
	static const char missing[] = HEAD "policy: nope.yaml\n" CRIT;
	static const char bad[] = HEAD "policy: bad.yaml\n" CRIT;
	static const char big[] = HEAD "policy: big.yaml\n" CRIT;
	static const struct bad refused[] = {
		{ "policy: nope.yaml\n", 4, 9,
		  "policy 'nope.yaml': '/t/nope.yaml' cannot be read: No such file or directory (expected a readable policy file)" },
		{ "policy: denied.yaml\n", 4, 9, "cannot be read: Permission denied" },
		{ "policy: ../p.yaml\n", 4, 9, "policy '../p.yaml' has a '..' component" },
		{ "policy: [p.yaml]\n", 4, 9,
		  "policy is a sequence (expected default, the path of a policy file, or a policy written inline as a mapping)" },
		{ "policy:\n", 4, 8, "policy is empty" },
	};
	(void)state;

	check_errors(check_body_error, refused, ELEMENTSOF(refused));
	/* an error inside the policy file is reported in that file */
	check_error_full(TASK_PATH, bad, strlen(bad), test_load, -EINVAL, "/t/bad.yaml", 3, 3,
			 "unknown key 'memroy' in limits");
	check_error_full(TASK_PATH, big, strlen(big), test_load, -E2BIG, TASK_PATH, 4, 9,
			 "policy 'big.yaml': '/t/big.yaml' is over 262144 bytes (expected at most 262144 bytes)");
	/* no loader: a file cannot be named */
	check_error_full(TASK_PATH, missing, strlen(missing), NULL, -EINVAL, TASK_PATH, 4, 9,
			 "policy 'nope.yaml' names a file, and this task is parsed without file access (expected default or an inline policy)");
}

static void test_policy_file_is_policy_error(void **state)
{
	static const char y[] = HEAD "policy: task.yaml\n" CRIT;
	(void)state;
	check_error_full(TASK_PATH, y, strlen(y), test_load, -EINVAL, "/t/task.yaml", 1, 1,
			 "unknown key 'not' in the top level");
	check_error_full(TASK_PATH, HEAD "policy: empty.yaml\n" CRIT,
			 strlen(HEAD "policy: empty.yaml\n" CRIT), test_load, -EINVAL,
			 "/t/empty.yaml", 1, 1, "document is empty (expected a mapping of policy sections)");
}

static void test_policy_inline(void **state)
{
	static const char y[] =
		HEAD
		"policy:\n"
		"  hostname: inline\n"
		"  filesystem:\n"
		"    binds: [{ src: tools, dst: /opt/tools }]\n"
		"  limits: { memory: 2G }\n" CRIT;
	struct pol_task *t = parse_ok(y);
	(void)state;

	assert_int_equal(t->policy_from, POL_TASK_POLICY_INLINE);
	assert_null(t->policy_path);
	assert_string_equal(t->policy->hostname, "inline");
	assert_int_equal(t->policy->memory_bytes, 2ull << 30);
	/* relative bind sources resolve against the task file's directory */
	assert_int_equal(t->policy->n_binds, 1);
	assert_string_equal(t->policy->binds[0].src, "/t/tools");
	/* the task file is the policy's layer */
	assert_int_equal(t->policy->n_sources, 2);
	assert_string_equal(t->policy->sources[1], TASK_PATH);
	pol_task_free(t);

	t = parse_ok(HEAD "policy: { extends: sub/q.yaml, limits: { pids: 7 } }\n" CRIT);
	assert_string_equal(t->policy->hostname, "sub");
	assert_int_equal(t->policy->pids, 7);
	assert_int_equal(t->policy->n_sources, 4);
	assert_string_equal(t->policy->sources[3], TASK_PATH);
	pol_task_free(t);

	/* an empty mapping is the default */
	t = parse_ok(HEAD "policy: {}\n" CRIT);
	assert_int_equal(t->policy_from, POL_TASK_POLICY_INLINE);
	pol_task_free(t);
}

static void test_policy_inline_errors(void **state)
{
	static const struct bad refused[] = {
		/* errors keep the task file's line and column */
		{ "policy:\n  limits:\n    memroy: 1G\n", 6, 5,
		  "unknown key 'memroy' in limits (expected one of: memory, pids, cpu, nofile, nproc, fsize, tmpfs, wall, output)" },
		{ "policy: { namespaces: { user: false } }\n", 4, 31,
		  "namespaces.user cannot be turned off" },
		{ "policy: { filesystem: { binds: [{ src: ../x, dst: /x }] } }\n", 4, 40,
		  "filesystem.binds[0].src '../x' has a '..' component (expected a path below the task file's directory, or an absolute one)" },
		{ "policy: { extends: task.yaml }\n", 4, 20,
		  "extends cycle: /t/task.yaml -> /t/task.yaml" },
	};
	_cleanup_free_ char *y = NULL;
	(void)state;

	check_errors(check_body_error, refused, ELEMENTSOF(refused));
	/* the policy language's own bounds hold inside a task */
	y = unit_fmt(HEAD "policy: { hostname: %0*d }\n" CRIT, POL_MAX_STRING + 1, 0);
	check_error(y, 4, 21, "string of 4097 bytes is too long (expected at most 4096 bytes)");
}

/* ------------------------------------------------------------------------------------------ */
/* workspace                                                                                  */

static void test_workspace_template(void **state)
{
	static const struct bad refused[] = {
		{ "workspace: { template: . }\n", 4, 24,
		  "workspace.template '/t' holds this task file (expected a folder without it; the agent would see the criteria)" },
		{ "workspace: { template: / }\n", 4, 24, "holds this task file" },
		{ "reference: skel/ref\nworkspace: { template: skel }\n", 4, 12,
		  "reference '/t/skel/ref' is inside workspace.template '/t/skel' (expected a folder outside the template, which the agent sees)" },
		{ "reference: skel\nworkspace: { template: skel }\n", 4, 12,
		  "reference '/t/skel' is inside workspace.template '/t/skel'" },
		{ "workspace: { tmpl: x }\n", 4, 14,
		  "unknown key 'tmpl' in workspace (expected one of: template, files)" },
		{ "workspace: [x]\n", 4, 12, "workspace is a sequence (expected a mapping)" },
	};
	(void)state;
	check_errors(check_body_error, refused, ELEMENTSOF(refused));
	/* the template inside the reference is fine, so is a sibling */
	struct pol_task *t = parse_ok(HEAD "reference: ref\nworkspace: { template: ref/skel }\n" CRIT);
	assert_string_equal(t->workspace_template, "/t/ref/skel");
	pol_task_free(t);
}

static void test_workspace_files(void **state)
{
	static const struct bad refused[] = {
		{ "workspace: { files: [{ path: /etc/x, content: a }] }\n", 4, 30,
		  "workspace.files[0].path '/etc/x' is absolute (expected a relative path without leading /)" },
		{ "workspace: { files: [{ path: a/../b, content: a }] }\n", 4, 30,
		  "workspace.files[0].path 'a/../b' has a '..' component" },
		{ "workspace: { files: [{ path: ./a, content: a }] }\n", 4, 30,
		  "workspace.files[0].path './a' has a '.' component" },
		{ "workspace: { files: [{ path: a/, content: a }] }\n", 4, 30,
		  "has an empty component or a trailing /" },
		{ "workspace: { files: [{ path: a, content: x }, { path: a, content: y }] }\n", 4, 55,
		  "workspace.files[1].path 'a' repeats workspace.files[0] (expected each path once)" },
		{ "workspace: { files: [{ path: a, content: x }, { path: a/b, content: y }] }\n", 4, 55,
		  "workspace.files[1].path 'a/b' and workspace.files[0].path 'a' cannot both be files (expected no file below another)" },
		{ "workspace: { files: [{ path: a/b, content: x }, { path: a, content: y }] }\n", 4, 57,
		  "cannot both be files" },
		{ "workspace: { files: [{ path: a }] }\n", 4, 22,
		  "workspace.files[0] has no content (expected a mapping with path and content)" },
		{ "workspace: { files: [{ content: a }] }\n", 4, 22,
		  "workspace.files[0] has no path" },
		{ "workspace: { files: [{ path: a, content: }] }\n", 4, 42,
		  "workspace.files[0].content is empty (expected the file's text; write \"\" for an empty file)" },
		{ "workspace: { files: [a] }\n", 4, 22,
		  "workspace.files[0] is a scalar (expected a mapping)" },
		{ "workspace: { files: { a: b } }\n", 4, 21,
		  "workspace.files is a mapping (expected a sequence; write [] for none)" },
	};
	(void)state;
	check_errors(check_body_error, refused, ELEMENTSOF(refused));
	/* "ab" is no directory of "a" */
	pol_task_free(parse_ok(HEAD "workspace: { files: [{ path: a, content: x }, { path: ab, content: y }] }\n" CRIT));
}

static void test_workspace_content_size(void **state)
{
	_cleanup_free_ char *y = NULL;
	struct pol_task *t;
	(void)state;

	y = unit_fmt(HEAD "workspace: { files: [{ path: a, content: %0*d }] }\n" CRIT,
		     TASK_MAX_CONTENT, 0);
	t = parse_ok(y);
	assert_int_equal(t->files[0].content_len, TASK_MAX_CONTENT);
	pol_task_free(t);
}

static void test_workspace_mode(void **state)
{
	static const struct {
		const char *text;
		unsigned mode;
	} good[] = {
		{ "0644", 0644 }, { "\"0644\"", 0644 }, { "'0755'", 0755 }, { "0", 0 },
		{ "0000", 0 }, { "00777", 0777 }, { "0400", 0400 },
	};
	static const struct bad refused[] = {
		{ "workspace: { files: [{ path: a, content: x, mode: 644 }] }\n", 4, 51,
		  "workspace.files[0].mode '644' has no leading 0, so it would read as decimal (expected an octal mode with a leading 0, like 0644)" },
		{ "workspace: { files: [{ path: a, content: x, mode: 0o644 }] }\n", 4, 51,
		  "mode '0o644' is not an octal mode" },
		{ "workspace: { files: [{ path: a, content: x, mode: 0999 }] }\n", 4, 51,
		  "mode '0999' is not an octal mode" },
		{ "workspace: { files: [{ path: a, content: x, mode: 000644 }] }\n", 4, 51,
		  "mode '000644' is not an octal mode" },
		{ "workspace: { files: [{ path: a, content: x, mode: 04755 }] }\n", 4, 51,
		  "mode '04755' sets the setuid, setgid or sticky bit (expected permission bits from 0000 to 0777)" },
		{ "workspace: { files: [{ path: a, content: x, mode: rw }] }\n", 4, 51,
		  "mode 'rw' is not an octal mode" },
	};
	(void)state;

	for (size_t i = 0; i < ELEMENTSOF(good); i++) {
		_cleanup_free_ char *y =
			unit_fmt(HEAD "workspace: { files: [{ path: a, content: x, mode: %s }] }\n" CRIT,
				 good[i].text);
		struct pol_task *t = parse_ok(y);
		assert_int_equal(t->files[0].mode, good[i].mode);
		pol_task_free(t);
	}
	check_errors(check_body_error, refused, ELEMENTSOF(refused));
}

/* ------------------------------------------------------------------------------------------ */
/* setup, agent, teardown                                                                     */

static void test_setup(void **state)
{
	static const struct bad refused[] = {
		{ "setup: [{ run: [make], timeout: 0 }]\n", 4, 33,
		  "setup[0].timeout '0' is out of range (expected 1..86400000 ms)" },
		{ "setup: [{ run: [make], timeout: 25h }]\n", 4, 33,
		  "setup[0].timeout '25h' is out of range" },
		{ "setup: [{ run: [make], timeout: 10 min }]\n", 4, 33,
		  "setup[0].timeout '10 min' is not a valid number (expected seconds or a number with an ms, s, m or h suffix, like 30s)" },
		{ "setup: [{ run: [make], fail_on_error: yes }]\n", 4, 39,
		  "setup[0].fail_on_error 'yes' is not a boolean (expected true or false)" },
		{ "setup: [{ timeout: 1s }]\n", 4, 9,
		  "setup[0] has no run (expected a mapping with run: [COMMAND, ARGS...])" },
		{ "setup: [{ run: [] }]\n", 4, 16,
		  "setup[0].run is empty (expected a command and its arguments, like [make, test])" },
		{ "setup: [{ run: make }]\n", 4, 16,
		  "setup[0].run is a scalar (expected a sequence; write [] for none)" },
		{ "setup: [{ run: [\"\", a] }]\n", 4, 17,
		  "setup[0].run[0] is an empty string (expected a command name or path)" },
		{ "setup: [{ run: [a, [b]] }]\n", 4, 20,
		  "setup[0].run[1] is a sequence (expected a string)" },
		{ "setup: [{ run: [a], shell: true }]\n", 4, 21,
		  "unknown key 'shell' in setup[0] (expected one of: run, timeout, fail_on_error)" },
		{ "setup: [{ run: [cp, -r, \"{reference}\", .] }]\n", 4, 26,
		  "setup[0].run[2] '{reference}' uses {reference}, and setup builds what the agent sees and never sees the reference (expected {workspace} or {task_id})" },
		{ "setup: {run: [a]}\n", 4, 8, "setup is a mapping (expected a sequence" },
	};
	(void)state;
	check_errors(check_body_error, refused, ELEMENTSOF(refused));
	/* later elements may be empty */
	struct pol_task *t = parse_ok(HEAD "setup: [{ run: [printf, \"\"] }]\n" CRIT);
	assert_string_equal(t->setup[0].argv[1], "");
	pol_task_free(t);
}

static void test_setup_count(void **state)
{
	_cleanup_free_ char *y = repeat_line(HEAD "setup:\n", "  - run: [true]\n", TASK_MAX_STEPS + 1,
					     CRIT);
	(void)state;

	check_error(y, 5 + TASK_MAX_STEPS, 5, "setup has more than 32 steps (expected at most 32)");
}

static void test_agent(void **state)
{
	static const struct bad refused[] = {
		{ "schema_version: 1\ntask_id: t\nagent: {timeout: 1m}\n" CRIT, 3, 8,
		  "agent has no run (expected a mapping with run: [COMMAND, ARGS...])" },
		{ "schema_version: 1\ntask_id: t\nagent: [a]\n" CRIT, 3, 8,
		  "agent is a sequence (expected a mapping)" },
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a], timeout: 0}\n" CRIT, 3, 28,
		  "agent.timeout '0' is out of range" },
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a], env: {pass: [1A]}}\n" CRIT, 3, 32,
		  "agent.env.pass[0] '1A' is not a variable name" },
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a], env: {pass: [A, A]}}\n" CRIT, 3, 35,
		  "agent.env.pass[1] 'A' repeats an earlier entry" },
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a], env: {set: [A=1]}}\n" CRIT, 3, 25,
		  "unknown key 'set' in agent.env (expected one of: pass)" },
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a], user: root}\n" CRIT, 3, 19,
		  "unknown key 'user' in agent (expected one of: run, timeout, env)" },
	};
	(void)state;
	check_errors(check_error, refused, ELEMENTSOF(refused));
}

static void test_placeholders(void **state)
{
	static const struct bad refused[] = {
		/* the column is the brace's when the string stands in the file as written */
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a, \"ab{foo}\"]}\n" CRIT, 3, 21,
		  "agent.run[1] 'ab{foo}' has an unknown placeholder {foo} (expected {workspace} or {task_id}, or {{ and }} for literal braces)" },
		{ "schema_version: 1\ntask_id: t\nagent:\n  run:\n    - a\n    - x{Workspace}\n" CRIT, 6, 8,
		  "agent.run[1] 'x{Workspace}' has an unknown placeholder {Workspace}" },
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a, '{}']}\n" CRIT, 3, 19,
		  "has an unknown placeholder {} (expected" },
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a, \"{reference}\"]}\n" CRIT, 3, 19,
		  "agent.run[1] '{reference}' uses {reference}, and the agent never sees the reference (expected {workspace} or {task_id})" },
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a, \"x {workspace\"]}\n" CRIT, 3, 21,
		  "agent.run[1] 'x {workspace' has a '{' without a closing '}' (expected {name}, or {{ for a literal {)" },
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a, \"{a{b}\"]}\n" CRIT, 3, 19,
		  "has a '{' without a closing '}'" },
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a, \"x}\"]}\n" CRIT, 3, 20,
		  "agent.run[1] 'x}' has a '}' without an opening '{' (expected {name}, or }} for a literal })" },
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a, \"{{{x}\"]}\n" CRIT, 3, 21,
		  "unknown placeholder {x}" },
		/* columns count characters, not bytes */
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a, \"\xc3\xa9\xc3\xa9{x}\"]}\n" CRIT, 3, 21,
		  "unknown placeholder {x}" },
		/* written with escapes or over lines: the scalar's own position */
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a, \"\\t{x}\"]}\n" CRIT, 3, 18,
		  "unknown placeholder {x}" },
		{ "schema_version: 1\ntask_id: t\nagent: {run: [a, 'it''s {x}']}\n" CRIT, 3, 18,
		  "unknown placeholder {x}" },
		{ "schema_version: 1\ntask_id: t\nagent:\n  run:\n    - a\n    - |\n      {x}\n" CRIT, 6, 7,
		  "unknown placeholder {x}" },
	};
	struct pol_task *t;
	(void)state;

	t = parse_ok("schema_version: 1\ntask_id: t\nagent: {run: [a, \"{{x}} {workspace}/{task_id} }}\"]}\n" CRIT);
	assert_string_equal(t->agent.argv[1], "{{x}} {workspace}/{task_id} }}");
	pol_task_free(t);

	check_errors(check_error, refused, ELEMENTSOF(refused));
}

static void test_reference_placeholder(void **state)
{
	(void)state;
	check_criterion_error("  - description: d\n    command: { run: [ls, \"{reference}\"] }\n", 6,
			      27,
			      "criteria[0].command.run[1] '{reference}' uses {reference}, and the task has no reference folder (expected a top-level reference: FOLDER, or no {reference})");
	/* reference is read first, wherever it stands */
	struct pol_task *t = parse_criterion("  - description: d\n    command: { run: [ls, \"{reference}\"] }\nreference: r\n");
	assert_string_equal(t->criteria[0].command.argv[1], "{reference}");
	pol_task_free(t);
	t = parse_ok(HEAD CRIT "teardown: [{ run: [rm, \"{reference}/x\"] }]\nreference: r\n");
	assert_string_equal(t->teardown[0].argv[1], "{reference}/x");
	pol_task_free(t);
	check_error(HEAD CRIT "teardown: [{ run: [rm, \"{reference}/x\"] }]\n", 5, 25,
		    "uses {reference}, and the task has no reference folder");
}

static void test_teardown(void **state)
{
	(void)state;
	check_error(HEAD CRIT "teardown: [{ run: [a], fail_on_error: true }]\n", 5, 39,
		    "teardown[0].fail_on_error is not allowed in teardown (expected only run and timeout; teardown runs after the verdict and never changes it)");
	check_error(HEAD CRIT "teardown: [{ run: [a], timeout: 1x }]\n", 5, 33,
		    "teardown[0].timeout '1x' is not a valid number");
	struct pol_task *t = parse_ok(HEAD CRIT "teardown: [{ run: [a] }]\n");
	assert_int_equal(t->teardown[0].timeout_ms, 30000);
	pol_task_free(t);
}

/* ------------------------------------------------------------------------------------------ */
/* criteria                                                                                   */

static void test_criteria_list(void **state)
{
	_cleanup_free_ char *y = NULL;
	(void)state;

	check_error(HEAD "criteria: []\n", 4, 11, "criteria is empty (expected 1 to 64 criteria)");
	check_error(HEAD "criteria: {a: b}\n", 4, 11, "criteria is a mapping (expected a sequence");
	check_error(HEAD "criteria:\n", 4, 10, "criteria is empty (expected a sequence");
	check_error(HEAD "criteria: [a]\n", 4, 12, "criteria[0] is a scalar (expected a mapping)");

	y = repeat_line(HEAD "criteria:\n", "  - { description: d, file_exists: a }\n",
			TASK_MAX_CRITERIA + 1, "");
	check_error(y, 5 + TASK_MAX_CRITERIA, 5,
		    "criteria has more than 64 entries (expected at most 64)");
}

static void test_criterion_shape(void **state)
{
	static const struct bad refused[] = {
		{ "  - { file_exists: a }\n", 5, 5,
		  "criteria[0] has no description (expected a mapping with description and a check)" },
		{ "  - { description: d }\n", 5, 5,
		  "criteria[0] has no check (expected one of: file_exists, file_absent, file_contains, file_matches, json_equals, command)" },
		{ "  - { description: d, file_exists: a, command: { run: [x] } }\n", 5, 39,
		  "criteria[0] has both file_exists and command (expected exactly one of: file_exists, file_absent, file_contains, file_matches, json_equals, command)" },
		{ "  - { description: d, file_exists: a, file_exists: b }\n", 5, 39,
		  "duplicate key 'file_exists' in criteria[0] (expected each key once; first at line 5)" },
		{ "  - { description: d, file_exists: a, name: x }\n", 5, 39,
		  "unknown key 'name' in criteria[0] (expected one of: description, weight, pass_threshold, file_exists, file_absent, file_contains, file_matches, json_equals, command)" },
		{ "  - { description: d, file_exists: /a }\n", 5, 36,
		  "criteria[0].file_exists '/a' is absolute" },
		{ "  - { description: d, file_absent: a/.. }\n", 5, 36,
		  "criteria[0].file_absent 'a/..' has a '..' component" },
		{ "  - { description: d, file_absent: }\n", 5, 36,
		  "criteria[0].file_absent is empty (expected a workspace-relative path like src/main.c)" },
	};
	(void)state;
	check_errors(check_criterion_error, refused, ELEMENTSOF(refused));
}

static void test_weights(void **state)
{
	static const struct {
		const char *text;
		uint32_t milli;
	} good[] = {
		{ "0", 0 }, { "1", 1000 }, { "2.5", 2500 }, { "0.001", 1 }, { "1.000", 1000 },
		{ "1000000", 1000000000u },
	};
	static const struct bad refused[] = {
		{ "  - { description: d, file_exists: a, weight: 1.0001 }\n", 5, 47,
		  "criteria[0].weight '1.0001' is not a valid number (expected a number from 0 to 1000000 with at most 3 decimals, like 2.5)" },
		{ "  - { description: d, file_exists: a, weight: -1 }\n", 5, 47,
		  "weight '-1' is not a valid number" },
		{ "  - { description: d, file_exists: a, weight: .5 }\n", 5, 47,
		  "weight '.5' is not a valid number" },
		{ "  - { description: d, file_exists: a, weight: \"2\" }\n", 5, 47,
		  "criteria[0].weight is a quoted string" },
		{ "  - { description: d, file_exists: a, weight: 1000000.001 }\n", 5, 47,
		  "criteria[0].weight '1000000.001' is out of range (expected a number from 0 to 1000000" },
		{ "  - { description: d, file_exists: a, weight: 99999999999999999999 }\n", 5, 47,
		  "is out of range" },
		{ "  - { description: d, file_exists: a, weight: 0 }\n  - { description: e, file_exists: b, weight: 0.000 }\n", 5, 3,
		  "criteria all have weight 0 (expected at least one criterion with a weight above 0)" },
	};
	(void)state;

	for (size_t i = 0; i < ELEMENTSOF(good); i++) {
		_cleanup_free_ char *c = unit_fmt("  - { description: d, file_exists: a, weight: %s }\n"
						  "  - { description: e, file_exists: b }\n",
						  good[i].text);
		struct pol_task *t = parse_criterion(c);
		assert_int_equal(t->criteria[0].weight_milli, good[i].milli);
		pol_task_free(t);
	}
	check_errors(check_criterion_error, refused, ELEMENTSOF(refused));
}

static void test_pass_threshold(void **state)
{
	struct pol_task *t;
	(void)state;

	t = parse_criterion("  - { description: d, file_exists: a, pass_threshold: 0.75 }\n");
	assert_int_equal(t->criteria[0].pass_threshold_milli, 750);
	pol_task_free(t);
	t = parse_criterion("  - { description: d, file_exists: a, pass_threshold: 0 }\n");
	assert_int_equal(t->criteria[0].pass_threshold_milli, 0);
	pol_task_free(t);
	check_criterion_error("  - { description: d, file_exists: a, pass_threshold: 1.5 }\n", 5, 55,
			      "criteria[0].pass_threshold '1.5' is out of range (expected a number from 0 to 1 with at most 3 decimals, like 0.75)");
	check_criterion_error("  - { description: d, file_exists: a, pass_threshold: 50% }\n", 5, 55,
			      "pass_threshold '50%' is not a valid number");
}

static void test_file_contains(void **state)
{
	static const struct bad refused[] = {
		{ "  - description: d\n    file_contains: { path: a }\n", 6, 20,
		  "criteria[0].file_contains has no includes or excludes entry (expected at least one string to look for)" },
		{ "  - description: d\n    file_contains: { path: a, includes: [], excludes: [] }\n", 6, 20,
		  "has no includes or excludes entry" },
		{ "  - description: d\n    file_contains: { includes: [x] }\n", 6, 20,
		  "criteria[0].file_contains has no path (expected a mapping with path and includes or excludes)" },
		{ "  - description: d\n    file_contains: { path: a, includes: [x, y], excludes: [y] }\n", 6, 60,
		  "criteria[0].file_contains.excludes[0] 'y' is also in criteria[0].file_contains.includes (expected a string in at most one list)" },
		{ "  - description: d\n    file_contains: { path: a, includes: [x, x] }\n", 6, 45,
		  "criteria[0].file_contains.includes[1] 'x' repeats an earlier entry" },
		{ "  - description: d\n    file_contains: { path: a, includes: [\"\"] }\n", 6, 42,
		  "criteria[0].file_contains.includes[0] is an empty string (expected a non-empty string to look for)" },
		{ "  - description: d\n    file_contains: { path: a, includes: x }\n", 6, 41,
		  "criteria[0].file_contains.includes is a scalar (expected a sequence" },
		{ "  - description: d\n    file_contains: [a]\n", 6, 20,
		  "criteria[0].file_contains is a sequence (expected a mapping)" },
	};
	struct pol_task *t;
	(void)state;

	t = parse_criterion("  - description: d\n    file_contains: { path: a, excludes: [TODO] }\n");
	assert_int_equal(t->criteria[0].n_includes, 0);
	assert_null(t->criteria[0].includes);
	assert_int_equal(t->criteria[0].n_excludes, 1);
	pol_task_free(t);
	check_errors(check_criterion_error, refused, ELEMENTSOF(refused));
}

static void test_file_matches(void **state)
{
	static const struct bad refused[] = {
		{ "  - description: d\n    file_matches: { path: a, regex: \"a(\" }\n", 6, 37,
		  "criteria[0].file_matches.regex 'a(' is not a valid regex: Unmatched ( or \\( (expected a POSIX extended regular expression)" },
		{ "  - description: d\n    file_matches: { path: a, regex: \"[a\" }\n", 6, 37,
		  "is not a valid regex: Unmatched [" },
		{ "  - description: d\n    file_matches: { path: a, regex: \"(a)\\\\1\" }\n", 6, 37,
		  "criteria[0].file_matches.regex '(a)\\x5c1' has the back-reference \\1 (expected a POSIX extended regex without back-references)" },
		{ "  - description: d\n    file_matches: { path: a, regex: \"a{256}\" }\n", 6, 37,
		  "regex 'a{256}' repeats something up to 256 times (expected bounds of at most 255)" },
		{ "  - description: d\n    file_matches: { path: a, regex: \"((a{100}){101})\" }\n", 6, 37,
		  "regex '((a{100}){101})' is too complex once its repeats are expanded (expected at most 8192 atoms; nested {m,n} multiply)" },
		{ "  - description: d\n    file_matches: { path: a, regex: \"(a{255}){33}\" }\n", 6, 37,
		  "is too complex" },
		{ "  - description: d\n    file_matches: { path: a, regex: \"((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))\" }\n", 6, 37,
		  "nests groups more than 32 deep (expected at most 32)" },
		{ "  - description: d\n    file_matches: { path: a, regex: \"\" }\n", 6, 37,
		  "criteria[0].file_matches.regex is an empty string (expected a POSIX extended regular expression)" },
		{ "  - description: d\n    file_matches: { path: a }\n", 6, 19,
		  "criteria[0].file_matches has no regex (expected a mapping with path and regex)" },
		{ "  - description: d\n    file_matches: { regex: a }\n", 6, 19,
		  "criteria[0].file_matches has no path" },
	};
	struct pol_task *t;
	(void)state;

	t = parse_criterion("  - description: d\n    file_matches: { path: a, regex: \"^(ab|c)[[:digit:]]{1,3}$\" }\n");
	assert_string_equal(t->criteria[0].regex, "^(ab|c)[[:digit:]]{1,3}$");
	pol_task_free(t);
	/* near the bounds: 255 repeats, and a cost just within the limit */
	t = parse_criterion("  - description: d\n    file_matches: { path: a, regex: \"(a{255}){32}\" }\n");
	pol_task_free(t);

	check_errors(check_criterion_error, refused, ELEMENTSOF(refused));
}

static void test_json_pointer_and_op(void **state)
{
	static const struct bad refused[] = {
		{ "  - description: d\n    json_equals: { path: a.json, pointer: a/b, op: exists }\n", 6, 43,
		  "criteria[0].json_equals.pointer 'a/b' does not start with / (expected a JSON pointer like /items/0/name, or \"\" for the whole document)" },
		{ "  - description: d\n    json_equals: { path: a.json, pointer: /a~2, op: exists }\n", 6, 43,
		  "pointer '/a~2' has a '~' that is not ~0 or ~1 (expected ~0 for ~ and ~1 for / inside a token)" },
		{ "  - description: d\n    json_equals: { path: a.json, pointer: /a~, op: exists }\n", 6, 43,
		  "has a '~' that is not ~0 or ~1" },
		{ "  - description: d\n    json_equals: { path: a.json, pointer: , op: exists }\n", 6, 43,
		  "pointer is empty (expected a JSON pointer" },
		{ "  - description: d\n    json_equals: { path: a.json, pointer: /a, op: equals, value: 1 }\n", 6, 51,
		  "criteria[0].json_equals.op 'equals' is not a comparison (expected one of: eq, ne, exists, lt, le, gt, ge)" },
		{ "  - description: d\n    json_equals: { path: a.json, op: exists }\n", 6, 18,
		  "criteria[0].json_equals has no pointer (expected a mapping with path, pointer, op and, unless op is exists, value)" },
		{ "  - description: d\n    json_equals: { path: a.json, pointer: /a }\n", 6, 18,
		  "criteria[0].json_equals has no op" },
		{ "  - description: d\n    json_equals: { path: a.json, pointer: /a, op: exists, value: 1 }\n", 6, 66,
		  "criteria[0].json_equals.value is set, but op is exists (expected no value with exists)" },
		{ "  - description: d\n    json_equals: { path: a.json, pointer: /a, op: eq }\n", 6, 18,
		  "criteria[0].json_equals has no value (expected a value to compare with op eq)" },
		{ "  - description: d\n    json_equals: { path: a.json, pointer: /a, op: gt, value: \"3\" }\n", 6, 62,
		  "criteria[0].json_equals.value '3' is not a number, but op is gt (expected a number)" },
	};
	struct pol_task *t;
	(void)state;

	t = parse_criterion("  - description: d\n    json_equals: { path: a.json, pointer: \"/~0~1/0\", op: ne, value: 1 }\n");
	assert_string_equal(t->criteria[0].pointer, "/~0~1/0");
	assert_int_equal(t->criteria[0].op, POL_TASK_JSON_NE);
	pol_task_free(t);
	check_errors(check_criterion_error, refused, ELEMENTSOF(refused));
}

/* A json_equals criterion comparing /a with value, written as YAML: value is at line 6, column 62. */
static char *json_equals_value(const char *value)
{
	return unit_fmt("  - description: d\n"
			"    json_equals: { path: a.json, pointer: /a, op: eq, value: %s }\n",
			value);
}

static void test_json_values(void **state)
{
	static const struct {
		const char *text;
		enum pol_task_json_type type;
		const char *value_text;
		bool b;
		double d;
	} good[] = {
		{ "null", POL_TASK_JSON_NULL, NULL, false, 0 },
		{ "true", POL_TASK_JSON_BOOL, NULL, true, 0 },
		{ "false", POL_TASK_JSON_BOOL, NULL, false, 0 },
		{ "0", POL_TASK_JSON_NUMBER, "0", false, 0 },
		{ "-0.5", POL_TASK_JSON_NUMBER, "-0.5", false, -0.5 },
		{ "12E+2", POL_TASK_JSON_NUMBER, "12E+2", false, 1200 },
		{ "ok", POL_TASK_JSON_STRING, "ok", false, 0 },
		{ "\"true\"", POL_TASK_JSON_STRING, "true", false, 0 },
		{ "'42'", POL_TASK_JSON_STRING, "42", false, 0 },
		{ "\"\"", POL_TASK_JSON_STRING, "", false, 0 },
		{ "\"null\"", POL_TASK_JSON_STRING, "null", false, 0 },
		{ "hello world", POL_TASK_JSON_STRING, "hello world", false, 0 },
	};
	static const struct {
		const char *text;
		const char *msg;
	} bad[] = {
		{ "yes", "value 'yes' is ambiguous in YAML (expected true, false or a number unquoted, or a quoted string)" },
		{ "True", "value 'True' is ambiguous in YAML" },
		{ "off", "value 'off' is ambiguous in YAML" },
		{ ".inf", "value '.inf' is ambiguous in YAML" },
		{ "0x10", "value '0x10' is not a JSON number (expected a number like 42, -1.5 or 2e3, or a quoted string)" },
		{ "007", "value '007' is not a JSON number" },
		{ "+1", "value '+1' is not a JSON number" },
		{ "1.", "value '1.' is not a JSON number" },
		{ ".5", "value '.5' is not a JSON number" },
		{ "1_000", "value '1_000' is not a JSON number" },
		{ "-.inf", "value '-.inf' is not a JSON number" },
		{ "1e999", "value '1e999' is out of range (expected a finite number)" },
		{ "~", "value is a null spelling other than null (expected a string, a number, true, false or null; write null for JSON null)" },
		{ "NULL", "value is a null spelling other than null" },
		{ "[1]", "value is a sequence (expected a string, a number, true, false or null)" },
	};
	(void)state;

	for (size_t i = 0; i < ELEMENTSOF(good); i++) {
		_cleanup_free_ char *c = json_equals_value(good[i].text);
		struct pol_task *t = parse_criterion(c);
		const struct pol_task_criterion *cr = &t->criteria[0];
		assert_int_equal(cr->value_type, good[i].type);
		if (good[i].value_text)
			assert_string_equal(cr->value_text, good[i].value_text);
		else
			assert_null(cr->value_text);
		assert_int_equal(cr->value_bool, good[i].b);
		assert_true(cr->value_number == good[i].d);
		pol_task_free(t);
	}
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		_cleanup_free_ char *c = json_equals_value(bad[i].text);
		check_criterion_error(c, 6, 62, bad[i].msg);
	}
	/* an empty value (YAML null) */
	check_criterion_error("  - description: d\n    json_equals: { path: a.json, pointer: /a, op: eq, value: }\n",
			      6, 62, "criteria[0].json_equals.value is empty (expected a string, a number, true, false or null; write null for JSON null)");
}

static void test_command(void **state)
{
	static const struct bad refused[] = {
		{ "  - description: d\n    command: { timeout: 1s }\n", 6, 14,
		  "criteria[0].command has no run (expected a mapping with run: [COMMAND, ARGS...])" },
		{ "  - description: d\n    command: { run: [a], expect_exit: 256 }\n", 6, 39,
		  "criteria[0].command.expect_exit '256' is out of range (expected 0..255)" },
		{ "  - description: d\n    command: { run: [a], expect_exit: -1 }\n", 6, 39,
		  "expect_exit '-1' is not a valid number" },
		{ "  - description: d\n    command: { run: [a], stdout: { contains: \"\" } }\n", 6, 46,
		  "criteria[0].command.stdout.contains is an empty string (expected a non-empty string to look for)" },
		{ "  - description: d\n    command: { run: [a], stdout: { regex: \"*a\\\\\" } }\n", 6, 43,
		  "criteria[0].command.stdout.regex '*a\\x5c' is not a valid regex" },
		{ "  - description: d\n    command: { run: [a], stdout: { exact: a, regex: b } }\n", 6, 46,
		  "criteria[0].command.stdout has both exact and regex (expected exactly one of: exact, contains, regex)" },
		{ "  - description: d\n    command: { run: [a], stdout: {} }\n", 6, 34,
		  "criteria[0].command.stdout has no check (expected one of: exact, contains, regex)" },
		{ "  - description: d\n    command: { run: [a], stdout: ok }\n", 6, 34,
		  "criteria[0].command.stdout is a scalar (expected a mapping)" },
		{ "  - description: d\n    command: { run: [a], stdout: { equals: x } }\n", 6, 36,
		  "unknown key 'equals' in criteria[0].command.stdout (expected one of: exact, contains, regex)" },
		{ "  - description: d\n    command: { run: [a], env: { pass: [\"A=1\"] } }\n", 6, 40,
		  "criteria[0].command.env.pass[0] 'A=1' is not a variable name" },
		{ "  - description: d\n    command: { run: [a], cwd: /tmp }\n", 6, 26,
		  "unknown key 'cwd' in criteria[0].command (expected one of: run, timeout, expect_exit, stdout, env)" },
		{ "  - description: d\n    command: { run: [\"{task}\"] }\n", 6, 23,
		  "criteria[0].command.run[0] '{task}' has an unknown placeholder {task} (expected {workspace}, {reference} or {task_id}, or {{ and }} for literal braces)" },
	};
	struct pol_task *t;
	(void)state;

	t = parse_criterion("  - description: d\n    command: { run: [make, test] }\n");
	const struct pol_task_command *c = &t->criteria[0].command;
	assert_int_equal(c->timeout_ms, 60000);
	assert_int_equal(c->expect_exit, 0);
	assert_int_equal(c->stdout_kind, POL_TASK_STDOUT_ANY);
	assert_null(c->stdout_text);
	assert_int_equal(c->n_env_pass, 0);
	pol_task_free(t);
	t = parse_criterion("  - description: d\n    command: { run: [a], stdout: { exact: \"\" }, expect_exit: 255 }\n");
	assert_int_equal(t->criteria[0].command.stdout_kind, POL_TASK_STDOUT_EXACT);
	assert_string_equal(t->criteria[0].command.stdout_text, "");
	assert_int_equal(t->criteria[0].command.expect_exit, 255);
	pol_task_free(t);
	t = parse_criterion("  - description: d\n    command: { run: [a], stdout: { regex: \"^ok$\" } }\n");
	assert_int_equal(t->criteria[0].command.stdout_kind, POL_TASK_STDOUT_REGEX);
	pol_task_free(t);

	check_errors(check_criterion_error, refused, ELEMENTSOF(refused));
}

/* ------------------------------------------------------------------------------------------ */
/* JSON                                                                                       */

static cJSON *task_json(const struct pol_task *t)
{
	char *text = NULL;
	cJSON *j;

	assert_int_equal(pol_task_to_json(t, &text), 0);
	j = cJSON_Parse(text);
	if (!j)
		print_error("not JSON:\n%s\n", text);
	assert_non_null(j);
	free(text);
	return j;
}

/* The item at path ("a.b.c", with numeric parts for arrays) below o, which must exist. */
static const cJSON *jat(const cJSON *o, const char *path)
{
	char buf[128];
	const cJSON *cur = o;

	(void)snprintf(buf, sizeof(buf), "%s", path);
	for (char *save = NULL, *part = strtok_r(buf, ".", &save); part;
	     part = strtok_r(NULL, ".", &save))
		cur = cJSON_IsArray(cur) ? cJSON_GetArrayItem(cur, atoi(part))
					 : cJSON_GetObjectItemCaseSensitive(cur, part);
	assert_non_null(cur);
	return cur;
}

static const char *jstr(const cJSON *o, const char *path)
{
	const cJSON *cur = jat(o, path);

	if (cJSON_IsString(cur))
		return cur->valuestring;
	return cJSON_IsNull(cur) ? "null" : cJSON_IsTrue(cur) ? "true" : cJSON_IsFalse(cur) ? "false" : "?";
}

static double jnum(const cJSON *o, const char *path)
{
	const cJSON *cur = jat(o, path);

	assert_true(cJSON_IsNumber(cur));
	return cur->valuedouble;
}

static void test_json_full(void **state)
{
	struct pol_task *t = parse_ok(full_task);
	_cleanup_(cJSON_Deletep) cJSON *j = NULL;
	(void)state;

	j = task_json(t);
	/* the keys, in the documented order */
	static const char *const keys[] = {
		"schema_version", "task_id", "description", "source", "policy", "workspace",
		"setup", "agent", "reference", "criteria", "teardown",
	};
	const cJSON *k = j->child;
	for (size_t i = 0; i < ELEMENTSOF(keys); i++, k = k->next) {
		assert_non_null(k);
		assert_string_equal(k->string, keys[i]);
	}
	assert_null(k);

	assert_true(jnum(j, "schema_version") == 1);
	assert_string_equal(jstr(j, "task_id"), "Full_task-1.0");
	assert_string_equal(jstr(j, "source"), TASK_PATH);
	assert_string_equal(jstr(j, "policy.from"), "file");
	assert_string_equal(jstr(j, "policy.path"), "/t/p.yaml");
	assert_string_equal(jstr(j, "policy.effective.hostname"), "from-file");
	assert_string_equal(jstr(j, "workspace.template"), "/t/skeleton");
	assert_string_equal(jstr(j, "workspace.files.1.mode"), "0755");
	assert_string_equal(jstr(j, "workspace.files.2.mode"), "0600");
	assert_string_equal(jstr(j, "workspace.files.0.content"), "int a;\n");
	assert_true(jnum(j, "setup.1.timeout_ms") == 120000);
	assert_string_equal(jstr(j, "setup.1.fail_on_error"), "false");
	assert_true(jnum(j, "agent.timeout_ms") == 3600000);
	assert_string_equal(jstr(j, "agent.env.pass.0"), "ANTHROPIC_API_KEY");
	assert_string_equal(jstr(j, "reference"), "/t/ref");
	assert_true(jnum(j, "criteria.0.weight") == 0);
	assert_true(jnum(j, "criteria.1.weight") == 2.5);
	assert_true(jnum(j, "criteria.1.pass_threshold") == 0.75);
	assert_string_equal(jstr(j, "criteria.1.file_absent"), "core");
	assert_string_equal(jstr(j, "criteria.2.file_contains.excludes.0"), "abort");
	assert_string_equal(jstr(j, "criteria.3.file_matches.regex"), "^int [a-z]+;$");
	assert_string_equal(jstr(j, "criteria.4.json_equals.op"), "le");
	assert_true(jnum(j, "criteria.4.json_equals.value") == -1500);
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "criteria"), 5), "json_equals"), "value"));
	assert_string_equal(jstr(j, "criteria.6.command.stdout.contains"), "differ");
	assert_true(jnum(j, "criteria.6.command.expect_exit") == 1);
	assert_true(jnum(j, "teardown.0.timeout_ms") == 5000);
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "teardown"), 0), "fail_on_error"));
	pol_task_free(t);
}

static void test_json_policy_is_pol_to_json(void **state)
{
	struct pol_task *t = parse_ok(HEAD "policy: { limits: { memory: 9007199254740993 } }\n" CRIT);
	_cleanup_(cJSON_Deletep) cJSON *j = NULL;
	_cleanup_(cJSON_Deletep) cJSON *p = NULL;
	char *text = NULL, *ptext = NULL;
	(void)state;

	assert_int_equal(pol_task_to_json(t, &text), 0);
	/* integers stay exact: 2^53 + 1 is no double */
	assert_non_null(strstr(text, "\"memory_bytes\":\t9007199254740993"));
	j = cJSON_Parse(text);
	assert_non_null(j);
	assert_int_equal(pol_to_json(t->policy, &ptext), 0);
	p = cJSON_Parse(ptext);
	assert_true(cJSON_Compare(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "policy"), "effective"),
				  p, true));
	assert_string_equal(jstr(j, "description"), "null");
	assert_string_equal(jstr(j, "workspace.template"), "null");
	assert_string_equal(jstr(j, "policy.from"), "inline");
	assert_string_equal(jstr(j, "policy.path"), "null");
	assert_string_equal(jstr(j, "criteria.0.file_exists"), "out.txt");
	free(text);
	free(ptext);
	pol_task_free(t);
}

static void test_json_values_printed(void **state)
{
	struct pol_task *t = parse_criterion(
		"  - { description: a, json_equals: { path: x, pointer: /a, op: eq, value: null } }\n"
		"  - { description: b, json_equals: { path: x, pointer: /a, op: eq, value: true } }\n"
		"  - { description: c, json_equals: { path: x, pointer: /a, op: eq, value: 1.25e-3 } }\n"
		"  - { description: d, json_equals: { path: x, pointer: /a, op: eq, value: \"1\" } }\n"
		"  - { description: e, weight: 0.001, command: { run: [x], stdout: { regex: a } } }\n");
	_cleanup_(cJSON_Deletep) cJSON *j = NULL;
	(void)state;

	j = task_json(t);
	assert_string_equal(jstr(j, "criteria.0.json_equals.value"), "null");
	assert_string_equal(jstr(j, "criteria.1.json_equals.value"), "true");
	assert_true(jnum(j, "criteria.2.json_equals.value") == 1.25e-3);
	assert_string_equal(jstr(j, "criteria.3.json_equals.value"), "1");
	assert_true(jnum(j, "criteria.4.weight") == 0.001);
	assert_string_equal(jstr(j, "criteria.4.command.stdout.regex"), "a");
	pol_task_free(t);
}

static void test_json_refuses_what_it_cannot_spell(void **state)
{
	struct pol_task *t = parse_ok(HEAD CRIT);
	char *const untouched = (char *)(uintptr_t)0x1;
	char *out = untouched;
	char *saved;
	(void)state;

	saved = t->task_id;
	t->task_id = NULL;
	assert_int_equal(pol_task_to_json(t, &out), -EINVAL);
	assert_ptr_equal(out, untouched);
	t->task_id = saved;

	saved = t->criteria[0].description;
	t->criteria[0].description = (char *)"\xff";
	assert_int_equal(pol_task_to_json(t, &out), -EINVAL);
	t->criteria[0].description = saved;

	t->criteria[0].check = (enum pol_task_check)99;
	assert_int_equal(pol_task_to_json(t, &out), -EINVAL);
	t->criteria[0].check = POL_TASK_FILE_EXISTS;

	t->criteria[0].pass_threshold_milli = 1001;
	assert_int_equal(pol_task_to_json(t, &out), -EINVAL);
	assert_ptr_equal(out, untouched);
	t->criteria[0].pass_threshold_milli = 1000;

	assert_int_equal(pol_task_to_json(t, &out), 0);
	free(out);
	pol_task_free(t);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(pol_task_check_name(POL_TASK_FILE_EXISTS), "file_exists");
	assert_string_equal(pol_task_check_name(POL_TASK_COMMAND), "command");
	assert_null(pol_task_check_name((enum pol_task_check)42));
	assert_string_equal(pol_task_json_op_name(POL_TASK_JSON_EXISTS), "exists");
	assert_string_equal(pol_task_json_op_name(POL_TASK_JSON_GE), "ge");
	assert_null(pol_task_json_op_name((enum pol_task_json_op)42));
	assert_string_equal(pol_task_policy_from_name(POL_TASK_POLICY_INLINE), "inline");
	assert_null(pol_task_policy_from_name((enum pol_task_policy_from)42));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal_defaults),
		cmocka_unit_test(test_full_task),
		cmocka_unit_test(test_null_path_and_diag),
		cmocka_unit_test(test_relative_path_needs_absolute_task),
		cmocka_unit_test(test_folders_resolve),
		cmocka_unit_test(test_schema_version),
		cmocka_unit_test(test_required_keys),
		cmocka_unit_test(test_document_shape),
		cmocka_unit_test(test_input_bounds),
		cmocka_unit_test(test_list_bounds),
		cmocka_unit_test(test_task_id),
		cmocka_unit_test(test_description),
		cmocka_unit_test(test_policy_default),
		cmocka_unit_test(test_policy_file),
		cmocka_unit_test(test_policy_file_errors),
		cmocka_unit_test(test_policy_file_is_policy_error),
		cmocka_unit_test(test_policy_inline),
		cmocka_unit_test(test_policy_inline_errors),
		cmocka_unit_test(test_workspace_template),
		cmocka_unit_test(test_workspace_files),
		cmocka_unit_test(test_workspace_content_size),
		cmocka_unit_test(test_workspace_mode),
		cmocka_unit_test(test_setup),
		cmocka_unit_test(test_setup_count),
		cmocka_unit_test(test_agent),
		cmocka_unit_test(test_placeholders),
		cmocka_unit_test(test_reference_placeholder),
		cmocka_unit_test(test_teardown),
		cmocka_unit_test(test_criteria_list),
		cmocka_unit_test(test_criterion_shape),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_pass_threshold),
		cmocka_unit_test(test_file_contains),
		cmocka_unit_test(test_file_matches),
		cmocka_unit_test(test_json_pointer_and_op),
		cmocka_unit_test(test_json_values),
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_json_full),
		cmocka_unit_test(test_json_policy_is_pol_to_json),
		cmocka_unit_test(test_json_values_printed),
		cmocka_unit_test(test_json_refuses_what_it_cannot_spell),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
