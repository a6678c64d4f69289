/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the task file parser and its JSON printer.
 *
 * Target functions: pol_task_parse() (eval/task.c, with the shared loader in
 * common/yaml-util.c and, for the policy a task names or holds, pol_parse_file() and
 * pol_parse_tree() in policy/policy.c), pol_task_to_json() and pol_to_json(), with
 * pol_task_free() on every result.
 *
 * Input: raw task bytes, exactly as a task file would hand them to the parser. The whole input
 * is parsed as "<input>" without a loader. It is also cut at every "\n#%file\n" line: the
 * first piece is parsed as /f/task.yaml with a loader that serves piece N (N >= 1) as
 * /f/inN.yaml, next to a fixed set of small policy files (below), so `policy: in1.yaml`, inline
 * policies that extend files, and errors inside policy files are all reachable. Inputs over
 * TASK_MAX_INPUT_BYTES are rejected before parsing (the -E2BIG path is covered by the unit
 * tests). No time, no randomness, no global state.
 *
 * Beyond "no crash, no leak, no UB", it checks the parser's contract on every input:
 *  - failure returns -EINVAL, -E2BIG (a policy file too big) or -ENOMEM, leaves *out untouched
 *    and fills the diagnostic with a NUL-terminated one-line message that says what was
 *    expected;
 *  - success returns a task that satisfies every invariant task.h promises (bounds, paths,
 *    placeholders, a compilable regex, a total weight above 0, ...), so a validation gap shows
 *    up as a crash here rather than as a wrong verdict;
 *  - that task prints as JSON that cJSON reads back, whose fields agree with the struct, and
 *    whose policy.effective is exactly what pol_to_json prints for the task's policy.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz-files.h"
#include "fuzz-parse.h"
#include "fuzz-util.h"
#include "policy.h"
#include "task.h"

#define TASK_FILE "/f/task.yaml"

/* Files the loader always serves, besides the pieces of the input. */
static const struct fuzz_file fixed_files[] = {
	{ "/f/p.yaml", "hostname: fuzz\nlimits: {memory: 1G, wall: 10m}\n" },
	{ "/f/ext.yaml", "extends: p.yaml\nenv: {pass: [HOME]}\n" },
	{ "/f/bad.yaml", "limits:\n  memroy: 1G\n" },
	{ "/f/loop.yaml", "extends: loop.yaml\n" },
	{ "/f/marker.yaml", "filesystem: {binds: [{src: marker, dst: /opt/marker}]}\n" },
	{ "/f/sub/q.yaml", "extends: /f/p.yaml\nnamespaces: {net: false}\n" },
};

static int fuzz_load(void *ctx, const char *abs_path, char **out_buf, size_t *out_len)
{
	return fuzz_files_load(fixed_files, sizeof(fixed_files) / sizeof(fixed_files[0]), ctx,
			       abs_path, out_buf, out_len);
}

/* A normalised path: relative (no leading /) or, with abs, absolute. */
static void check_path(const char *s, bool abs)
{
	CHECK(s && strlen(s) < PATH_MAX);
	if (abs) {
		CHECK(s[0] == '/');
		if (!strcmp(s, "/"))
			return;
		s++;
	}
	CHECK(s[0] && s[0] != '/');
	fuzz_check_normalised(s);
	for (const char *c = s; *c; c++)
		CHECK((unsigned char)*c >= 0x20 && *c != 0x7f);
}

static bool below(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strcmp(dir, "/") || !strcmp(path, dir) || (!strncmp(path, dir, n) && path[n] == '/');
}

/* The placeholders an argv element uses (bits: 1 workspace, 2 task_id, 4 reference). */
static unsigned placeholders_of(const char *s)
{
	static const char *const names[] = { "workspace", "task_id", "reference" };
	unsigned used = 0;

	for (size_t i = 0; s[i];) {
		if ((s[i] == '{' || s[i] == '}') && s[i + 1] == s[i]) {
			i += 2;
			continue;
		}
		CHECK(s[i] != '}');
		if (s[i] != '{') {
			i++;
			continue;
		}
		const char *end = strchr(s + i, '}');
		bool known = false;
		CHECK(end);
		size_t len = (size_t)(end - (s + i + 1));
		for (unsigned k = 0; k < 3; k++) {
			if (len == strlen(names[k]) && !memcmp(s + i + 1, names[k], len)) {
				used |= 1u << k;
				known = true;
			}
		}
		CHECK(known);
		i = (size_t)(end - s) + 1;
	}
	return used;
}

static unsigned check_argv(char *const *argv, size_t n)
{
	unsigned used = 0;

	CHECK(n >= 1 && n <= TASK_MAX_ARGV && argv && argv[n] == NULL);
	CHECK(argv[0][0]);
	for (size_t i = 0; i < n; i++) {
		CHECK(argv[i] && strlen(argv[i]) <= TASK_MAX_STRING);
		used |= placeholders_of(argv[i]);
	}
	return used;
}

static void check_env(char *const *v, size_t n)
{
	CHECK(n <= TASK_MAX_LIST && (v || n == 0));
	for (size_t i = 0; i < n; i++) {
		CHECK(v[i] && v[i][0] && !(v[i][0] >= '0' && v[i][0] <= '9'));
		for (const char *c = v[i]; *c; c++)
			CHECK((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
			      (*c >= '0' && *c <= '9') || *c == '_');
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(v[i], v[j]));
	}
}

static void check_regex(const char *re)
{
	regex_t r;
	CHECK(re && re[0] && strlen(re) <= TASK_MAX_STRING);
	CHECK(regcomp(&r, re, REG_EXTENDED | REG_NOSUB) == 0);
	regfree(&r);
}

static void check_steps(const struct pol_task_step *s, size_t n, bool teardown, bool has_reference)
{
	CHECK(n <= TASK_MAX_STEPS && (s || n == 0));
	for (size_t i = 0; i < n; i++) {
		unsigned used = check_argv(s[i].argv, s[i].n_argv);
		CHECK(s[i].timeout_ms >= 1 && s[i].timeout_ms <= TASK_MAX_TIMEOUT_MS);
		if (teardown) {
			CHECK(!s[i].fail_on_error);
			CHECK(!(used & 4) || has_reference);
		} else {
			CHECK(!(used & 4));
		}
	}
}

static void check_criterion(const struct pol_task_criterion *c, bool has_reference)
{
	CHECK(c->description && c->description[0] && strlen(c->description) <= TASK_MAX_STRING);
	CHECK(c->weight_milli <= TASK_MAX_WEIGHT * 1000u);
	CHECK(c->pass_threshold_milli <= 1000);
	CHECK(pol_task_check_name(c->check));
	if (c->check != POL_TASK_COMMAND)
		check_path(c->path, false);
	switch (c->check) {
	case POL_TASK_FILE_EXISTS:
	case POL_TASK_FILE_ABSENT:
		break;
	case POL_TASK_FILE_CONTAINS:
		CHECK(c->n_includes + c->n_excludes >= 1);
		for (size_t i = 0; i < c->n_includes; i++)
			CHECK(c->includes[i][0]);
		for (size_t i = 0; i < c->n_excludes; i++) {
			CHECK(c->excludes[i][0]);
			for (size_t j = 0; j < c->n_includes; j++)
				CHECK(strcmp(c->excludes[i], c->includes[j]));
		}
		break;
	case POL_TASK_FILE_MATCHES:
		check_regex(c->regex);
		break;
	case POL_TASK_JSON_EQUALS:
		CHECK(c->pointer && (c->pointer[0] == '\0' || c->pointer[0] == '/'));
		for (const char *p = c->pointer; *p; p++)
			CHECK(*p != '~' || p[1] == '0' || p[1] == '1');
		CHECK(pol_task_json_op_name(c->op));
		if (c->op == POL_TASK_JSON_LT || c->op == POL_TASK_JSON_LE ||
		    c->op == POL_TASK_JSON_GT || c->op == POL_TASK_JSON_GE)
			CHECK(c->value_type == POL_TASK_JSON_NUMBER);
		if (c->value_type == POL_TASK_JSON_NUMBER)
			CHECK(c->value_text && isfinite(c->value_number));
		if (c->value_type == POL_TASK_JSON_STRING)
			CHECK(c->value_text);
		break;
	case POL_TASK_COMMAND: {
		const struct pol_task_command *cmd = &c->command;
		unsigned used = check_argv(cmd->argv, cmd->n_argv);
		CHECK(!(used & 4) || has_reference);
		CHECK(cmd->timeout_ms >= 1 && cmd->timeout_ms <= TASK_MAX_TIMEOUT_MS);
		CHECK(cmd->expect_exit <= 255);
		CHECK((cmd->stdout_kind == POL_TASK_STDOUT_ANY) == (cmd->stdout_text == NULL));
		if (cmd->stdout_kind == POL_TASK_STDOUT_REGEX)
			check_regex(cmd->stdout_text);
		if (cmd->stdout_kind == POL_TASK_STDOUT_CONTAINS)
			CHECK(cmd->stdout_text[0]);
		check_env(cmd->env_pass, cmd->n_env_pass);
		break;
	}
	}
}

static void check_task(const struct pol_task *t, const char *name)
{
	uint64_t total = 0;
	size_t id_len;

	CHECK(t->source && !strcmp(t->source, name));
	id_len = strlen(t->task_id);
	CHECK(id_len >= 1 && id_len <= TASK_MAX_ID && t->task_id[0] != '.' && t->task_id[0] != '-');
	CHECK(strspn(t->task_id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == id_len);
	CHECK(!t->description || (t->description[0] && strlen(t->description) <= TASK_MAX_STRING));

	CHECK(t->policy && pol_task_policy_from_name(t->policy_from));
	CHECK((t->policy_from == POL_TASK_POLICY_FILE) == (t->policy_path != NULL));
	if (t->policy_path)
		check_path(t->policy_path, true);
	CHECK(t->policy->n_sources >= 1 && !strcmp(t->policy->sources[0], "<default>"));

	if (t->workspace_template) {
		check_path(t->workspace_template, true);
		if (t->reference)
			CHECK(!below(t->reference, t->workspace_template));
		if (name[0] == '/')
			CHECK(!below(name, t->workspace_template));
	}
	if (t->reference)
		check_path(t->reference, true);
	CHECK(t->n_files <= TASK_MAX_FILES && (t->files || t->n_files == 0));
	for (size_t i = 0; i < t->n_files; i++) {
		const struct pol_task_file *f = &t->files[i];
		check_path(f->path, false);
		CHECK(f->content && strlen(f->content) == f->content_len);
		CHECK(f->content_len <= TASK_MAX_CONTENT && f->mode <= 0777);
		for (size_t j = 0; j < i; j++)
			CHECK(!below(f->path, t->files[j].path) && !below(t->files[j].path, f->path));
	}

	check_steps(t->setup, t->n_setup, false, t->reference != NULL);
	CHECK(!(check_argv(t->agent.argv, t->agent.n_argv) & 4));
	CHECK(t->agent.timeout_ms >= 1 && t->agent.timeout_ms <= TASK_MAX_TIMEOUT_MS);
	check_env(t->agent.env_pass, t->agent.n_env_pass);

	CHECK(t->n_criteria >= 1 && t->n_criteria <= TASK_MAX_CRITERIA && t->criteria);
	for (size_t i = 0; i < t->n_criteria; i++) {
		check_criterion(&t->criteria[i], t->reference != NULL);
		total += t->criteria[i].weight_milli;
	}
	CHECK(total > 0);
	check_steps(t->teardown, t->n_teardown, true, t->reference != NULL);
}

/* The JSON agrees with the struct, and its policy is exactly pol_to_json's. */
static void check_json(const struct pol_task *t)
{
	char *text = NULL, *ptext = NULL;
	cJSON *j, *p;
	const cJSON *crit;
	int r = pol_task_to_json(t, &text);

	CHECK(r == 0 || r == -ENOMEM);
	if (r < 0)
		return;
	j = cJSON_Parse(text);
	CHECK(j && cJSON_IsObject(j));
	CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "task_id")),
		      t->task_id));
	crit = cJSON_GetObjectItemCaseSensitive(j, "criteria");
	CHECK(cJSON_IsArray(crit) && (size_t)cJSON_GetArraySize(crit) == t->n_criteria);
	for (size_t i = 0; i < t->n_criteria; i++) {
		const cJSON *c = cJSON_GetArrayItem(crit, (int)i);
		CHECK(cJSON_GetObjectItemCaseSensitive(c, pol_task_check_name(t->criteria[i].check)));
		CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "description")),
			      t->criteria[i].description));
	}
	CHECK((size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
		      cJSON_GetObjectItemCaseSensitive(j, "workspace"), "files")) == t->n_files);
	r = pol_to_json(t->policy, &ptext);
	CHECK(r == 0 || r == -ENOMEM);
	if (r == 0) {
		p = cJSON_Parse(ptext);
		CHECK(p);
		CHECK(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(
					    cJSON_GetObjectItemCaseSensitive(j, "policy"), "effective"),
				    p, true));
		cJSON_Delete(p);
		free(ptext);
	}
	cJSON_Delete(j);
	free(text);
}

/* A value no parse ever stores, to prove the result is untouched on failure. */
static struct pol_task *const untouched = (struct pol_task *)(uintptr_t)1;

/*
 * One parse's outcome (r, t and d) as name: a task that keeps every promise and prints as
 * JSON, freed here, or a failure that kept the parser's contract.
 */
static void check_outcome(int r, struct pol_task *t, const char *name, const struct pol_diag *d)
{
	if (r != 0) {
		fuzz_check_failure(r, t == untouched, d);
		return;
	}
	CHECK(t && t != untouched);
	check_task(t, name);
	check_json(t);
	CHECK(pol_task_free(t) == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pol_task *t = untouched;
	struct fuzz_pieces pcs;
	struct pol_diag d;
	int r;

	if (size > TASK_MAX_INPUT_BYTES)
		return -1; /* keep it out of the corpus */

	/* The whole input, without file access. */
	memset(&d, 0, sizeof(d));
	r = pol_task_parse(NULL, data, size, NULL, NULL, &t, &d);
	check_outcome(r, t, "<input>", &d);
	if (r != 0)
		CHECK(r != -E2BIG && (!strcmp(d.file, "<input>") || !strcmp(d.file, "<default>")));

	/* The first piece as the task file, the others (and the fixed set) through the loader. */
	fuzz_split_input(data, size, &pcs);
	t = untouched;
	memset(&d, 0, sizeof(d));
	r = pol_task_parse(TASK_FILE, pcs.v[0].p, pcs.v[0].len, fuzz_load, &pcs, &t, &d);
	check_outcome(r, t, TASK_FILE, &d);
	if (r != 0)
		CHECK(d.file[0] == '/' || !strcmp(d.file, "<default>"));
	return 0;
}
