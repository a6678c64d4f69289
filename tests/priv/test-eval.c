/* SPDX-License-Identifier: MIT */
/*
 * Privileged end-to-end tests of `warden eval` and `warden grade` (docs/eval.md): every test
 * writes its own task folder (task.yaml, reference folders, inline files) into a fresh
 * temporary folder, runs build/warden on it with real sandboxes, and checks the exit code,
 * the run folder and record.json (read with cJSON), and where a claim concerns the host
 * (leftover processes, a workspace left unchanged, a record left alone) the host side too.
 *
 * Where a result could be right by accident, the test holds a control: the agent records what
 * it saw, so that "a criterion does not see X" is only believed once the agent did see X.
 *
 * Needs full privilege (root with CAP_SYS_ADMIN in the initial user namespace, which puts
 * warden in privileged mode) and user namespaces; otherwise the program exits 77, or fails
 * under SBX_TEST_MUST_WORK=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "harness.h"

/* The hard timeout of one warden run here: every task below ends in a few seconds. */
#define EVAL_HARD_TIMEOUT_MS 25000u
/* A run that waited on a FIFO or a leaked process would take at least this long. */
#define QUICK_MS 15000u
/* Who owns a run folder's workspace when warden runs privileged (eval/rundir.h). */
#define WS_OWNER 65534u
/* The largest file the tests read back (records, logs, agent output). */
#define READ_MAX (4u << 20)

/* One test's fixture: a temporary folder holding the task folder and the --out folder. */
struct fx {
	const void *param;          /* the test's case (table-driven tests) */
	char base[PATH_MAX];        /* mkdtemp folder; everything below is removed at teardown */
	char task_dir[PATH_MAX];    /* base/task */
	char task[PATH_MAX];        /* base/task/task.yaml */
	char out_dir[PATH_MAX];     /* base/out, the --out folder */
	char run[PATH_MAX];         /* the run folder of the last eval */
	struct th_out out;          /* the last warden run */
	cJSON *record;              /* the last record loaded */
	char markers[3][64];        /* host processes tagged with these are killed at teardown */
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->param = *state;
	const char *tmp = secure_getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	(void)snprintf(f->base, sizeof(f->base), "%s/warden-priv-eval-XXXXXX", tmp);
	if (!mkdtemp(f->base)) {
		print_error("mkdtemp %s: %s\n", f->base, strerror(errno));
		free(f);
		return -1;
	}
	/* The sandboxes' host uids read the task's folders (bind sources, the reference). */
	th_pathf(f->task_dir, "%s/task", f->base);
	th_pathf(f->task, "%s/task.yaml", f->task_dir);
	th_pathf(f->out_dir, "%s/out", f->base);
	if (chmod(f->base, 0755) < 0 || mkdir(f->task_dir, 0755) < 0) {
		print_error("prepare %s: %s\n", f->base, strerror(errno));
		th_rm_rf(f->base);
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

/* Discards the changesets the runs in the --out folder left pending (held or refused paths). */
static void discard_run_changesets(const struct fx *f)
{
	char *names = th_list_dir(f->out_dir, NULL);
	for (char *name = names, *nl; name && (nl = strchr(name, '\n')); name = nl + 1) {
		*nl = '\0';
		char run[PATH_MAX], real[PATH_MAX], ws[PATH_MAX];
		th_pathf(run, "%s/%s", f->out_dir, name);
		if (!realpath(run, real))
			continue;
		/* The changeset names the workspace by path, also once it is set aside. */
		th_pathf(ws, "%s/workspace", real);
		th_discard_changesets(ws);
	}
	free(names);
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	for (size_t i = 0; i < sizeof(f->markers) / sizeof(f->markers[0]); i++)
		if (f->markers[i][0])
			th_kill_procs(f->markers[i], 0);
	discard_run_changesets(f);
	th_out_done(&f->out);
	cJSON_Delete(f->record);
	th_rm_rf(f->base);
	free(f);
	return 0;
}

/* ---- files ---- */

/* Creates every missing folder above path (mode 0755). */

/* Writes the fixture's task.yaml. */
static void put_task(struct fx *f, const char *yaml)
{
	th_put_file_mkdirs(f->task, yaml);
}

/* Appends text to path; fails the test. */
static void append_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	size_t len = strlen(text);
	ssize_t n = write(fd, text, len);
	(void)close(fd);
	if (n != (ssize_t)len)
		fail_msg("append to %s failed", path);
}

/* th_read_file of at most READ_MAX bytes. */
static char *slurp(const char *path, bool nofollow, size_t *len_out)
{
	return th_read_file(path, READ_MAX, nofollow, len_out);
}

/* The run folder's file rel, which must exist. Caller frees. */
static char *run_file(const struct fx *f, const char *rel)
{
	char path[PATH_MAX];
	th_pathf(path, "%s/%s", f->run, rel);
	char *text = slurp(path, false, NULL);
	if (!text)
		fail_msg("read %s: %s", path, strerror(errno));
	return text;
}

/* Lines in the run folder's file rel; -1 when it cannot be read. */
static int run_file_lines(const struct fx *f, const char *rel)
{
	char path[PATH_MAX];
	th_pathf(path, "%s/%s", f->run, rel);
	char *text = slurp(path, false, NULL);
	if (!text)
		return -1;
	int n = 0;
	for (const char *p = text; (p = strchr(p, '\n')); p++)
		n++;
	free(text);
	return n;
}

/* True when the run folder has an entry rel (not followed if a symlink). */
static bool run_has(const struct fx *f, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;
	th_pathf(path, "%s/%s", f->run, rel);
	return lstat(path, &st) == 0;
}

/* ---- running warden ---- */

/* Prints the last run and, when loaded, the record and grade.log, for a failure's context. */
static void show(const struct fx *f)
{
	th_show(&f->out);
	if (f->record) {
		char *text = cJSON_Print(f->record);
		th_print_long("record.json", text ? text : "?");
		free(text);
	}
	if (f->run[0]) {
		char path[PATH_MAX];
		th_pathf(path, "%s/grade.log", f->run);
		char *log = slurp(path, true, NULL);
		if (log)
			th_print_long("grade.log", log);
		free(log);
	}
}

/* Runs `warden SUB args...`, with extra environment entries env (may be NULL). */
static void warden(struct fx *f, const char *sub, const char *const *args, const char *const *env)
{
	struct th_opts o = { .subcommand = sub, .env = env, .hard_timeout_ms = EVAL_HARD_TIMEOUT_MS };
	th_out_done(&f->out);
	th_run(&o, args, &f->out);
}

/* text (the last run's stdout or stderr) holds needle; otherwise the run is shown. */
static void expect_has(const struct fx *f, const char *text, const char *needle)
{
	if (text && strstr(text, needle))
		return;
	show(f);
	fail_msg("expected '%s' in the output", needle);
}

static void expect_code(const struct fx *f, int code)
{
	if (f->out.code != code)
		show(f);
	assert_int_equal(f->out.code, code);
}

/* Reloads the run folder's record. */
static void load_record(struct fx *f)
{
	th_record_reload(&f->record, f->run);
}

/* Finds the single run folder in the --out folder and checks its name and files. */
static void find_run(struct fx *f, const char *task_id)
{
	size_t n = 0;
	char *names = th_list_dir(f->out_dir, &n);
	if (!names) {
		fail_msg("list %s: %s", f->out_dir, strerror(errno));
		return;
	}
	if (n != 1) {
		show(f);
		print_error("--- %s ---\n%s", f->out_dir, names);
		free(names);
		fail_msg("expected one run folder, found %zu", n);
	}
	names[strlen(names) - 1] = '\0';
	th_pathf(f->run, "%s/%s", f->out_dir, names);
	/* <task_id>-<YYYYMMDDTHHMMSSZ>-<8 hex> */
	size_t id_len = strlen(task_id);
	bool name_ok = strlen(names) == id_len + 1 + 16 + 1 + 8 &&
		       strncmp(names, task_id, id_len) == 0 && names[id_len] == '-' &&
		       names[id_len + 9] == 'T' && names[id_len + 16] == 'Z' &&
		       names[id_len + 17] == '-' &&
		       strspn(names + id_len + 18, "0123456789abcdef") == 8;
	if (!name_ok)
		fail_msg("run folder name '%s' is not %s-YYYYMMDDTHHMMSSZ-<8 hex>", names, task_id);
	free(names);
	struct stat st;
	assert_int_equal(lstat(f->run, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
}

/* Checks what every record has: the schema, the run's name, the task, the host. */
static void check_basics(const struct fx *f, const char *task_id, const char *source)
{
	const cJSON *r = f->record;
	assert_true(th_json_num(r, "schema_version") == 1);
	assert_string_equal(th_json_str(r, "kind"), "warden-eval-run");
	const char *slash = strrchr(f->run, '/');
	assert_non_null(slash);
	assert_string_equal(th_json_str(r, "run_id"), slash + 1);
	assert_string_equal(th_json_str(r, "task.id"), task_id);
	char real[PATH_MAX];
	const char *src = th_json_str(r, "task.source");
	if (strcmp(src, source) != 0 && !(realpath(source, real) && strcmp(src, real) == 0))
		fail_msg("task.source '%s' is not '%s'", src, source);
	const char *digest = th_json_str(r, "task.digest");
	assert_int_equal(strlen(digest), 7 + 64);
	assert_int_equal(strncmp(digest, "sha256:", 7), 0);
	assert_int_equal(strspn(digest + 7, "0123456789abcdef"), 64);
	assert_string_equal(th_json_str(r, "host.mode"), "privileged");
}

static void expect_status(const struct fx *f, const char *status)
{
	const char *s = th_json_str(f->record, "status");
	if (strcmp(s, status) != 0)
		show(f);
	assert_string_equal(s, status);
}

/* `warden eval --out OUT [extra...] TASK` of the fixture's task; expects code and one run. */
static void eval_path(struct fx *f, const char *task, const char *extra, int code,
		      const char *task_id, const char *const *env)
{
	const char *const *args = extra ? TH_CMD("--out", f->out_dir, extra, task)
					: TH_CMD("--out", f->out_dir, task);
	warden(f, "eval", args, env);
	expect_code(f, code);
	find_run(f, task_id);
	load_record(f);
	check_basics(f, task_id, task);
}

/* Writes yaml as the fixture's task.yaml and evals it; unless NULL, status is checked too. */
static void eval_task(struct fx *f, const char *yaml, int code, const char *task_id,
		      const char *status)
{
	put_task(f, yaml);
	eval_path(f, f->task, NULL, code, task_id, NULL);
	if (status)
		expect_status(f, status);
}

/* `warden grade [--yes] ARG`; expects code. */
static void grade_arg(struct fx *f, const char *arg, bool yes, int code)
{
	warden(f, "grade", yes ? TH_CMD("--yes", arg) : TH_CMD(arg), NULL);
	expect_code(f, code);
}

/* `warden grade --yes` of the last run; expects code and the record's status. */
static void grade(struct fx *f, int code, const char *status)
{
	grade_arg(f, f->run, true, code);
	load_record(f);
	expect_status(f, status);
}

/* ---- record checks ---- */

static bool near(double a, double b)
{
	double d = a - b;
	return d < 1e-9 && d > -1e-9;
}

static void expect_score(const struct fx *f, double score)
{
	double s = th_json_num(f->record, "score");
	if (!near(s, score)) {
		show(f);
		fail_msg("score %g, expected %g", s, score);
	}
}

static bool is_null(const cJSON *root, const char *path)
{
	return cJSON_IsNull(th_json_at(root, path));
}

/* Number of stamps; *has is set when name is among them. */
static int stamps(const struct fx *f, const char *name, bool *has)
{
	const cJSON *arr = th_json_at(f->record, "stamps");
	assert_true(cJSON_IsArray(arr));
	const cJSON *s;
	if (has)
		*has = false;
	cJSON_ArrayForEach(s, arr) {
		assert_true(cJSON_IsString(s));
		if (has && name && strcmp(s->valuestring, name) == 0)
			*has = true;
	}
	return cJSON_GetArraySize(arr);
}

static const cJSON *criterion(const struct fx *f, int i)
{
	const cJSON *arr = th_json_at(f->record, "criteria");
	assert_true(cJSON_IsArray(arr));
	const cJSON *c = cJSON_GetArrayItem(arr, i);
	if (!c)
		fail_msg("record has no criteria[%d]", i);
	return c;
}

/*
 * criteria[i] was evaluated with this score and pass; its details hold detail (when not
 * NULL).
 */
static void expect_crit(const struct fx *f, int i, bool passed, double score, const char *detail)
{
	const cJSON *c = criterion(f, i);
	const char *d = th_json_str(c, "details");
	bool ok = th_json_bool(c, "evaluated") && th_json_bool(c, "passed") == passed &&
		  near(th_json_num(c, "score"), score) && (!detail || strstr(d, detail));
	if (!ok) {
		show(f);
		fail_msg("criteria[%d] '%s': passed %d score %g details '%s'; expected passed %d "
			 "score %g details with '%s'", i, th_json_str(c, "description"),
			 th_json_bool(c, "passed"), th_json_num(c, "score"), d, passed, score,
			 detail ? detail : "");
	}
}

/* Every criterion of the record passed. */
static void expect_all_passed(const struct fx *f)
{
	int n = cJSON_GetArraySize(th_json_at(f->record, "criteria"));
	assert_true(n > 0);
	for (int i = 0; i < n; i++)
		expect_crit(f, i, true, 1, NULL);
}

/* The host has no process with an argument equal to any of the fixture's markers. */
static void expect_no_marked_procs(const struct fx *f)
{
	for (size_t i = 0; i < sizeof(f->markers) / sizeof(f->markers[0]); i++) {
		if (!f->markers[i][0])
			continue;
		int n = th_count_procs(f->markers[i], NULL, 0);
		if (n != 0) {
			show(f);
			fail_msg("%d host process(es) with argument '%s' outlived the run", n,
				 f->markers[i]);
		}
	}
}

/* ---- the examples ---- */

/* Where the source tree's examples/ folder is: from the build's meson-info, else __FILE__. */
static void example(const char *name, char *out)
{
	char path[PATH_MAX], info[PATH_MAX];
	th_pathf(path, "%s", th_warden());
	char *slash = strrchr(path, '/');
	if (slash) {
		*slash = '\0';
		th_pathf(info, "%s/meson-info/meson-info.json", path);
		char *text = slurp(info, false, NULL);
		cJSON *json = text ? cJSON_Parse(text) : NULL;
		free(text);
		const cJSON *src = th_json_at(json, "directories.source");
		if (cJSON_IsString(src)) {
			th_pathf(out, "%s/examples/%s/task.yaml", src->valuestring, name);
			cJSON_Delete(json);
			if (access(out, R_OK) == 0)
				return;
		}
		cJSON_Delete(json);
	}
	/* __FILE__ is tests/priv/test-eval.c, relative to the build folder (meson test's cwd). */
	th_pathf(path, "%s", __FILE__);
	for (int i = 0; i < 3; i++) {
		slash = strrchr(path, '/');
		if (!slash)
			fail_msg("cannot find the source tree from '%s'", __FILE__);
		*slash = '\0';
	}
	th_pathf(info, "%s/examples/%s/task.yaml", path, name);
	if (!realpath(info, out))
		fail_msg("cannot find the example %s (%s): %s", name, info, strerror(errno));
}

/* examples/NAME (whose task_id is NAME) passes: exit 0, SUCCESS, score 1. */
static void eval_example(struct fx *f, const char *name)
{
	char task[PATH_MAX];
	example(name, task);
	eval_path(f, task, NULL, 0, name, NULL);
	expect_status(f, "SUCCESS");
	expect_score(f, 1);
}

/* examples/sandbox-marker passes; a regrade changes nothing of the agent phase. */
static void test_example_sandbox_marker(void **state)
{
	struct fx *f = *state;
	eval_example(f, "sandbox-marker");
	assert_int_equal(stamps(f, NULL, NULL), 0);
	assert_true(th_json_num(f->record, "grades") == 1);
	assert_string_equal(th_json_str(f->record, "phases.grade.by"), "eval");
	assert_string_equal(th_json_str(f->record, "phases.agent.status"), "ok");
	expect_all_passed(f);
	cJSON *agent = cJSON_Duplicate(th_json_at(f->record, "phases.agent"), true);
	cJSON *identity = cJSON_Duplicate(th_json_at(f->record, "identity"), true);
	assert_non_null(agent);
	assert_non_null(identity);

	grade(f, 0, "SUCCESS");
	expect_score(f, 1);
	bool regraded = false;
	assert_int_equal(stamps(f, "regraded", &regraded), 1);
	assert_true(regraded);
	assert_true(th_json_num(f->record, "grades") == 2);
	assert_string_equal(th_json_str(f->record, "phases.grade.by"), "grade");
	expect_all_passed(f);
	bool same = cJSON_Compare(agent, th_json_at(f->record, "phases.agent"), true) &&
		    cJSON_Compare(identity, th_json_at(f->record, "identity"), true);
	cJSON_Delete(agent);
	cJSON_Delete(identity);
	if (!same)
		show(f);
	assert_true(same);
	assert_false(run_has(f, "record.json.quarantined"));
}

/* examples/hidden-answer passes, and the agent never read the reference. */
static void test_example_hidden_answer(void **state)
{
	struct fx *f = *state;
	eval_example(f, "hidden-answer");
	expect_all_passed(f);
	assert_false(run_has(f, "workspace/peeked.txt"));
	char *answer = run_file(f, "workspace/answer.txt");
	assert_string_equal(answer, "42\n");
	free(answer);
}

/* examples/report: the json_equals criteria each pass, and so does the run. */
static void test_example_report(void **state)
{
	struct fx *f = *state;
	char task[PATH_MAX];
	example("report", task);
	warden(f, "eval", TH_CMD("--out", f->out_dir, task), NULL);
	find_run(f, "report");
	load_record(f);
	check_basics(f, "report", task);
	for (int i = 0; i < 4; i++) {
		assert_string_equal(th_json_str(criterion(f, i), "check"), "json_equals");
		expect_crit(f, i, true, 1, NULL);
	}
	/* The last criterion is a command whose stdout "ok\n" must match "^ok$". */
	expect_crit(f, 4, true, 1, NULL);
	expect_status(f, "SUCCESS");
	expect_score(f, 1);
	expect_code(f, 0);
}

/* ---- eval and grade agree ---- */

#define PARITY_TASK \
	"schema_version: 1\n" \
	"task_id: parity\n" \
	"agent:\n" \
	"  run: [sh, -c, \"echo made > made.txt\"]\n" \
	"  timeout: 20s\n" \
	"criteria:\n" \
	"  - description: the agent made its file\n" \
	"    file_exists: made.txt\n" \
	"  - description: a command sees the file\n" \
	"    command: { run: [grep, -q, made, \"{workspace}/made.txt\"] }\n" \
	"  - description: a command that fails\n" \
	"    weight: 2\n" \
	"    command: { run: [grep, -q, not-there, \"{workspace}/made.txt\"] }\n" \
	"  - description: a static check that fails\n" \
	"    file_absent: made.txt\n"

/* eval and grade give the same status, score and per-criterion verdicts. */
static void test_parity(void **state)
{
	struct fx *f = *state;
	eval_task(f, PARITY_TASK, 1, "parity", "FAILURE");
	expect_score(f, 0.4); /* (1 + 1) / (1 + 1 + 2 + 1) */
	expect_crit(f, 0, true, 1, NULL);
	expect_crit(f, 1, true, 1, NULL);
	expect_crit(f, 2, false, 0, NULL);
	expect_crit(f, 3, false, 0, NULL);
	cJSON *first = cJSON_Duplicate(f->record, true);
	assert_non_null(first);

	grade(f, 1, "FAILURE");
	expect_score(f, 0.4);
	const cJSON *a = th_json_at(first, "criteria"), *b = th_json_at(f->record, "criteria");
	assert_int_equal(cJSON_GetArraySize(a), cJSON_GetArraySize(b));
	for (int i = 0; i < cJSON_GetArraySize(a); i++) {
		const cJSON *x = cJSON_GetArrayItem(a, i), *y = cJSON_GetArrayItem(b, i);
		static const char *const keys[] = { "score", "passed", "evaluated", "details",
						    "check", "weight" };
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(x, keys[k]),
					   cJSON_GetObjectItemCaseSensitive(y, keys[k]), true)) {
				show(f);
				cJSON_Delete(first);
				fail_msg("criteria[%d].%s differs between eval and grade", i, keys[k]);
			}
		}
	}
	cJSON_Delete(first);
}

/* ---- the trust gate ---- */

#define GATE_TASK \
	"schema_version: 1\n" \
	"task_id: gate\n" \
	"agent:\n" \
	"  run: [sh, -c, \"echo hi > hi.txt\"]\n" \
	"  timeout: 20s\n" \
	"criteria:\n" \
	"  - description: hi.txt exists\n" \
	"    file_exists: hi.txt\n" \
	"  - description: a command reads it\n" \
	"    command: { run: [grep, -q, hi, \"{workspace}/hi.txt\"] }\n" \
	"teardown:\n" \
	"  - run: [sh, -c, \"echo ran >> {workspace}/teardown.txt\"]\n"

/* What a refused grade must leave as it was. */
struct snap {
	char *listing;              /* the run folder's names */
	char *record;               /* record.json's bytes, or its target when a symlink */
	size_t record_len;
	bool record_link;
	ino_t record_ino;
	char *target;               /* what a symlinked record.json points to, when it does */
	char *log;                  /* grade.log */
	size_t log_len;
	ino_t log_ino;
	char *agent_out;
	int teardown_lines;
};

static void snap_take(const struct fx *f, struct snap *s)
{
	char path[PATH_MAX];
	struct stat st;
	memset(s, 0, sizeof(*s));
	s->listing = th_list_dir(f->run, NULL);
	assert_non_null(s->listing);
	th_pathf(path, "%s/record.json", f->run);
	assert_int_equal(lstat(path, &st), 0);
	s->record_ino = st.st_ino;
	s->record_link = S_ISLNK(st.st_mode);
	if (s->record_link) {
		s->record = calloc(1, PATH_MAX);
		assert_non_null(s->record);
		ssize_t n = readlink(path, s->record, PATH_MAX - 1);
		assert_true(n > 0);
		s->record_len = (size_t)n;
		s->target = slurp(s->record, true, NULL);
		assert_non_null(s->target);
	} else {
		s->record = slurp(path, true, &s->record_len);
		assert_non_null(s->record);
	}
	th_pathf(path, "%s/grade.log", f->run);
	assert_int_equal(lstat(path, &st), 0);
	s->log_ino = st.st_ino;
	s->log = slurp(path, true, &s->log_len);
	assert_non_null(s->log);
	s->agent_out = run_file(f, "agent.stdout");
	s->teardown_lines = run_file_lines(f, "workspace/teardown.txt");
}

static void snap_done(struct snap *s)
{
	free(s->listing);
	free(s->record);
	free(s->target);
	free(s->log);
	free(s->agent_out);
	memset(s, 0, sizeof(*s));
}

/* a and b are the same; what differs is named. */
static void snap_same(const struct fx *f, const struct snap *a, const struct snap *b)
{
	const char *diff = NULL;
	if (strcmp(a->listing, b->listing) != 0)
		diff = "the run folder's entries";
	else if (a->record_link != b->record_link || a->record_ino != b->record_ino ||
		 a->record_len != b->record_len || memcmp(a->record, b->record, a->record_len) != 0)
		diff = "record.json";
	else if (a->target && (!b->target || strcmp(a->target, b->target) != 0))
		diff = "record.json's target";
	else if (a->log_ino != b->log_ino || a->log_len != b->log_len ||
		 memcmp(a->log, b->log, a->log_len) != 0)
		diff = "grade.log";
	else if (strcmp(a->agent_out, b->agent_out) != 0)
		diff = "agent.stdout";
	else if (a->teardown_lines != b->teardown_lines)
		diff = "workspace/teardown.txt";
	if (diff) {
		show(f);
		print_error("--- entries before ---\n%s--- after ---\n%s", a->listing, b->listing);
		fail_msg("a refused grade changed %s", diff);
	}
}

/* One way to make a recorded run ungradable; arg (PATH_MAX) is what `grade` is given. */
struct refusal {
	void (*mutate)(struct fx *f, char *arg);
	bool yes;                   /* pass --yes */
	const char *why;            /* expected in the refusal's reason on stderr */
	bool control;               /* then grade --yes as is, which must work */
};

static cJSON *record_edit_begin(const struct fx *f)
{
	return th_record_load(f->run);
}

/* Writes root over record.json (same inode) and frees it. */
static void record_edit_end(const struct fx *f, cJSON *root)
{
	char *text = cJSON_Print(root);
	cJSON_Delete(root);
	assert_non_null(text);
	char path[PATH_MAX];
	th_pathf(path, "%s/record.json", f->run);
	int r = th_write_file(path, text);
	free(text);
	if (r < 0)
		fail_msg("write %s: %s", path, strerror(-r));
}

/* Replaces the value at parent_path.key (parent_path "" for the top level) with v. */
static void record_set(const struct fx *f, const char *parent_path, const char *key, cJSON *v)
{
	cJSON *root = record_edit_begin(f);
	cJSON *parent = *parent_path ? (cJSON *)th_json_at(root, parent_path) : root;
	assert_non_null(parent);
	if (cJSON_GetObjectItemCaseSensitive(parent, key))
		assert_true(cJSON_ReplaceItemInObjectCaseSensitive(parent, key, v));
	else
		assert_true(cJSON_AddItemToObject(parent, key, v));
	record_edit_end(f, root);
}

/*
 * The record changes while it is being graded (here: the agent's duration, edited while a
 * slow criterion runs): the grade is refused, the record quarantined, nothing written.
 */
static void test_grade_quarantine(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: quarantine\n"
		     "agent: { run: [sh, -c, \"echo 1 > done.txt\"] }\n"
		     "criteria:\n"
		     "  - description: slow enough to edit the record meanwhile\n"
		     "    command: { run: [sh, -c, \"echo grading; sleep 3\"] }\n",
		  0, "quarantine", NULL);
	struct th_opts o = { .subcommand = "grade", .hard_timeout_ms = EVAL_HARD_TIMEOUT_MS };
	struct th_proc p;
	assert_int_equal(th_spawn(&o, TH_CMD("--yes", f->run), &p), 0);
	(void)usleep(1200 * 1000);
	record_set(f, "phases.agent", "duration_ms", cJSON_CreateNumber(123456));
	th_out_done(&f->out);
	th_finish(&p, &f->out);
	expect_code(f, 3);
	assert_non_null(strstr(f->out.err, "quarantined"));
	assert_true(run_has(f, "record.json.quarantined"));
	assert_false(run_has(f, "record.json"));
}

static void mut_none(struct fx *f, char *arg)
{
	(void)f;
	(void)arg;
}

static void mut_invalid_json(struct fx *f, char *arg)
{
	(void)arg;
	char path[PATH_MAX];
	th_pathf(path, "%s/record.json", f->run);
	assert_int_equal(th_write_file(path, "{\"schema_version\": 1, \"kind\": \n"), 0);
}

static void mut_unknown_field(struct fx *f, char *arg)
{
	(void)arg;
	record_set(f, "", "surprise", cJSON_CreateTrue());
}

static void mut_exit_code(struct fx *f, char *arg)
{
	(void)arg;
	record_set(f, "phases.agent", "exit_code", cJSON_CreateNumber(999));
}

static void mut_run_id(struct fx *f, char *arg)
{
	(void)arg;
	record_set(f, "", "run_id", cJSON_CreateString("../elsewhere"));
}

static void mut_stream_file(struct fx *f, char *arg)
{
	(void)arg;
	record_set(f, "phases.agent.stdout", "file", cJSON_CreateString("../../etc/passwd"));
}

static void mut_record_symlink(struct fx *f, char *arg)
{
	(void)arg;
	char path[PATH_MAX], other[PATH_MAX];
	th_pathf(path, "%s/record.json", f->run);
	th_pathf(other, "%s/elsewhere.json", f->base);
	char *text = slurp(path, true, NULL);
	assert_non_null(text);
	th_put_file_mkdirs(other, text);
	free(text);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(other, path), 0);
}

static void mut_dir_symlink(struct fx *f, char *arg)
{
	th_pathf(arg, "%s/run-link", f->base);
	assert_int_equal(symlink(f->run, arg), 0);
}

static void mut_workspace_symlink(struct fx *f, char *arg)
{
	(void)arg;
	char ws[PATH_MAX], real[PATH_MAX];
	th_pathf(ws, "%s/workspace", f->run);
	th_pathf(real, "%s/workspace.real", f->run);
	assert_int_equal(rename(ws, real), 0);
	assert_int_equal(symlink("workspace.real", ws), 0);
}

static void mut_task_changed(struct fx *f, char *arg)
{
	(void)arg;
	append_file(f->task, "# changed after the run\n");
}

static void mut_task_source(struct fx *f, char *arg)
{
	(void)arg;
	char other[PATH_MAX];
	th_pathf(other, "%s/other.yaml", f->task_dir);
	th_put_file_mkdirs(other, GATE_TASK "description: another task file, valid too\n");
	record_set(f, "task", "source", cJSON_CreateString(other));
}

/* The record names path as its task (an absolute path; the record's digest is kept). */
static void record_task_source(struct fx *f, const char *path)
{
	record_set(f, "task", "source", cJSON_CreateString(path));
}

/* A FIFO that no one writes: opening it for reading would wait forever. */
static void mut_task_fifo(struct fx *f, char *arg)
{
	(void)arg;
	char fifo[PATH_MAX];
	th_pathf(fifo, "%s/task.fifo", f->task_dir);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	record_task_source(f, fifo);
}

/* A device: opening one as root may act (a tape rewinds); /dev/null is the harmless stand-in. */
static void mut_task_device(struct fx *f, char *arg)
{
	(void)arg;
	record_task_source(f, "/dev/null");
}

/* A symlink to the very task file: same bytes, same digest, still refused. */
static void mut_task_symlink(struct fx *f, char *arg)
{
	(void)arg;
	char link[PATH_MAX];
	th_pathf(link, "%s/task-link.yaml", f->task_dir);
	assert_int_equal(symlink(f->task, link), 0);
	record_task_source(f, link);
}

/* The task file reached through a symlinked folder above it. */
static void mut_task_below_symlink(struct fx *f, char *arg)
{
	(void)arg;
	char link[PATH_MAX], path[PATH_MAX];
	th_pathf(link, "%s/task-dir-link", f->base);
	assert_int_equal(symlink(f->task_dir, link), 0);
	th_pathf(path, "%s/task.yaml", link);
	record_task_source(f, path);
}

/* A copy of the task file (same digest) that someone else owns, or anyone may write. */
static void task_copy(struct fx *f, const char *name, uid_t uid, mode_t mode)
{
	char copy[PATH_MAX], dir[PATH_MAX];
	/* Its canonical path, as eval records one (TMPDIR may lie below a symlink). */
	assert_non_null(realpath(f->task_dir, dir));
	th_pathf(copy, "%s/%s", dir, name);
	char *text = slurp(f->task, true, NULL);
	assert_non_null(text);
	th_put_file_mkdirs(copy, text);
	free(text);
	assert_int_equal(chown(copy, uid, uid), 0);
	assert_int_equal(chmod(copy, mode), 0);
	record_task_source(f, copy);
}

static void mut_task_foreign(struct fx *f, char *arg)
{
	(void)arg;
	task_copy(f, "foreign.yaml", WS_OWNER, 0644);
}

static void mut_task_world_writable(struct fx *f, char *arg)
{
	(void)arg;
	task_copy(f, "shared.yaml", 0, 0666);
}

/* A recorded run, made ungradable, is refused with exit 3 and left exactly as it was. */
static void test_gate_refuses(void **state)
{
	struct fx *f = *state;
	const struct refusal *c = f->param;
	eval_task(f, GATE_TASK, 0, "gate", "SUCCESS");
	assert_int_equal(run_file_lines(f, "workspace/teardown.txt"), 1);

	char arg[PATH_MAX];
	th_pathf(arg, "%s", f->run);
	c->mutate(f, arg);
	struct snap before, after;
	snap_take(f, &before);
	grade_arg(f, arg, c->yes, 3);
	if (!strstr(f->out.out, "REFUSED") || !strstr(f->out.err, c->why)) {
		show(f);
		fail_msg("expected a refusal naming '%s'", c->why);
	}
	snap_take(f, &after);
	snap_same(f, &before, &after);
	snap_done(&before);
	snap_done(&after);
	assert_false(run_has(f, "record.json.quarantined"));

	if (c->control) {
		/* The same folder with --yes is graded: only the gate stood in the way. */
		grade(f, 0, "SUCCESS");
		assert_int_equal(run_file_lines(f, "workspace/teardown.txt"), 2);
	}
}

/* The cases: how the run is spoiled, --yes or not, and what the refusal names. */
static const struct refusal
	gate_no_yes = { mut_none, false, "--yes", true },
	gate_invalid_json = { mut_invalid_json, true, "invalid JSON", false },
	gate_unknown_field = { mut_unknown_field, true, "'surprise'", false },
	gate_out_of_range = { mut_exit_code, true, "phases.agent.exit_code", false },
	gate_run_id = { mut_run_id, true, "run_id", false },
	gate_stream_file = { mut_stream_file, true, "phases.agent.stdout.file", false },
	gate_record_symlink = { mut_record_symlink, true, "record.json is a symlink", false },
	gate_dir_symlink = { mut_dir_symlink, true, "run-link' is a symlink", false },
	gate_workspace_symlink = { mut_workspace_symlink, true, "workspace is a symlink", false },
	gate_task_changed = { mut_task_changed, true, "has changed since the run", false },
	gate_task_source = { mut_task_source, true, "other.yaml' has changed", false },
	gate_task_fifo = { mut_task_fifo, true, "is a FIFO, not a regular file", false },
	gate_task_device = { mut_task_device, true, "'/dev/null' that the record names is a "
			     "character device, not a regular file", false },
	gate_task_symlink = { mut_task_symlink, true, "task-link.yaml' that the record names is "
			      "a symlink", false },
	gate_task_below_symlink = { mut_task_below_symlink, true, "that the record names resolves "
				    "to", false },
	gate_task_foreign = { mut_task_foreign, true, "belongs to uid 65534, neither root nor you",
			      false },
	gate_task_world_writable = { mut_task_world_writable, true, "is writable by others "
				     "(mode 0666", false };

/* ---- what a grade does and does not do ---- */

/* A grade never runs the agent again: its file and its output stay as they were. */
static void test_grade_no_agent_rerun(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: rerun\n"
		     "agent:\n"
		     "  run: [sh, -c, \"echo run >> count.txt; echo agent-was-here\"]\n"
		     "  timeout: 20s\n"
		     "criteria:\n"
		     "  - description: the agent ran\n"
		     "    file_exists: count.txt\n",
		  0, "rerun", "SUCCESS");
	assert_int_equal(run_file_lines(f, "workspace/count.txt"), 1);
	char *out1 = run_file(f, "agent.stdout");
	assert_string_equal(out1, "agent-was-here\n");
	assert_true(th_json_num(f->record, "phases.agent.stdout.bytes") == 15);

	grade(f, 0, "SUCCESS");
	assert_int_equal(run_file_lines(f, "workspace/count.txt"), 1);
	char *out2 = run_file(f, "agent.stdout");
	assert_string_equal(out2, out1);
	free(out1);
	free(out2);
	assert_false(run_has(f, "record.json.quarantined"));
}

/*
 * A record whose agent phase was edited before `grade` is still graded (the comparison is
 * with what the grade read at its start), and the edit is carried over as it stands.
 */
static void test_grade_edited_before(void **state)
{
	struct fx *f = *state;
	eval_task(f, GATE_TASK, 0, "gate", NULL);
	double ms = th_json_num(f->record, "phases.agent.duration_ms") + 1234;
	record_set(f, "phases.agent", "duration_ms", cJSON_CreateNumber(ms));
	grade(f, 0, "SUCCESS");
	assert_true(th_json_num(f->record, "grades") == 2);
	assert_true(near(th_json_num(f->record, "phases.agent.duration_ms"), ms));
	assert_false(run_has(f, "record.json.quarantined"));
}

/* ---- reap ---- */

/*
 * The agent starts three sleeps (plain, setsid, nohup) and lists the sandbox's processes until
 * it sees all three, so that the test knows they ran (its own script mentions them too, but
 * on lines of their own only the sleeps' command lines read "sleep N ").
 */
#define BACKGROUND_TASK \
	"schema_version: 1\n" \
	"task_id: background\n" \
	"agent:\n" \
	"  run:\n" \
	"    - sh\n" \
	"    - -c\n" \
	"    - |\n" \
	"      sleep %s &\n" \
	"      setsid sleep %s &\n" \
	"      nohup sleep %s >/dev/null 2>&1 &\n" \
	"      for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do\n" \
	"        for p in /proc/[0-9]*; do\n" \
	"          tr '\\000' ' ' < $p/cmdline 2>/dev/null; echo\n" \
	"        done > procs.txt\n" \
	"        n=$(grep -c -x -e 'sleep %s ' -e 'sleep %s ' -e 'sleep %s ' procs.txt)\n" \
	"        test \"$n\" = 3 && break\n" \
	"        sleep 0.25\n" \
	"      done\n" \
	"      echo started\n" \
	"  timeout: 20s\n" \
	"criteria:\n" \
	"  - description: the agent listed its processes\n" \
	"    file_exists: procs.txt\n"

/* Processes the agent leaves behind (plain, setsid, nohup) die at reap, before grading. */
static void test_reap_background(void **state)
{
	struct fx *f = *state;
	static unsigned n;
	for (int i = 0; i < 3; i++)
		(void)snprintf(f->markers[i], sizeof(f->markers[i]), "30%d.%d%u", i, (int)getpid(),
			       n++);
	char task[4096];
	(void)snprintf(task, sizeof(task), BACKGROUND_TASK, f->markers[0], f->markers[1],
		       f->markers[2], f->markers[0], f->markers[1], f->markers[2]);
	eval_task(f, task, 0, "background", "SUCCESS");
	/* The control: all three were running in the sandbox. */
	char *procs = run_file(f, "workspace/procs.txt");
	for (int i = 0; i < 3; i++) {
		char line[96];
		(void)snprintf(line, sizeof(line), "sleep %s ", f->markers[i]);
		if (!th_has_line(procs, line)) {
			print_error("--- procs.txt ---\n%s---\n", procs);
			free(procs);
			fail_msg("'%s' never ran in the sandbox", line);
		}
	}
	free(procs);
	expect_no_marked_procs(f);
	if (f->out.elapsed_ms > QUICK_MS) {
		show(f);
		fail_msg("the run waited for the leftover processes");
	}
	assert_string_equal(th_json_str(f->record, "phases.agent.status"), "ok");
	assert_string_equal(th_json_str(f->record, "phases.reap.status"), "ok");
	if (th_json_num(f->record, "host.cgroup_version") != 0)
		assert_true(th_json_bool(f->record, "phases.reap.cgroup_emptied"));
	char *out = run_file(f, "agent.stdout");
	assert_string_equal(out, "started\n");
	free(out);
}

/* ---- verdicts ---- */

/* Files the agent writes that look like verdicts are just files. */
static void test_fake_verdict(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: fake-verdict\n"
		     "agent:\n"
		     "  run:\n"
		     "    - sh\n"
		     "    - -c\n"
		     "    - |\n"
		     "      v='{{\"status\": \"SUCCESS\", \"score\": 1, \"grades\": 1}}'\n"
		     "      echo \"$v\" > verdict.json\n"
		     "      echo \"$v\" > record.json\n"
		     "      mkdir -p out && echo \"$v\" > out/record.json\n"
		     "      echo SUCCESS\n"
		     "  timeout: 20s\n"
		     "criteria:\n"
		     "  - description: the answer exists\n"
		     "    file_exists: answer.txt\n"
		     "  - description: a command agrees\n"
		     "    command: { run: [test, -f, \"{workspace}/answer.txt\"] }\n",
		  1, "fake-verdict", "FAILURE");
	expect_score(f, 0);
	expect_crit(f, 0, false, 0, NULL);
	expect_crit(f, 1, false, 0, NULL);
	char *fake = run_file(f, "workspace/verdict.json"); /* the control: the agent wrote it */
	assert_non_null(strstr(fake, "SUCCESS"));
	free(fake);
}

/* Weights: 3 passes and 1 fails gives 0.75 and FAILURE. */
static void test_score_weighted(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: weighted\n"
		     "workspace:\n"
		     "  files:\n"
		     "    - { path: given.txt, content: \"given\\n\" }\n"
		     "agent: { run: [\"true\"], timeout: 20s }\n"
		     "criteria:\n"
		     "  - description: heavy and passing\n"
		     "    weight: 3\n"
		     "    file_exists: given.txt\n"
		     "  - description: light and failing\n"
		     "    weight: 1\n"
		     "    file_exists: missing.txt\n",
		  1, "weighted", "FAILURE");
	expect_score(f, 0.75);
	expect_crit(f, 0, true, 1, NULL);
	expect_crit(f, 1, false, 0, "no such file");
	assert_true(near(th_json_num(criterion(f, 0), "weight"), 3));
}

/* A failing criterion of weight 0 is recorded and does not count. */
static void test_weight_zero(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: weight-zero\n"
		     "workspace:\n"
		     "  files:\n"
		     "    - { path: given.txt, content: \"given\\n\" }\n"
		     "agent: { run: [\"true\"], timeout: 20s }\n"
		     "criteria:\n"
		     "  - description: counted and passing\n"
		     "    file_exists: given.txt\n"
		     "  - description: informational and failing\n"
		     "    weight: 0\n"
		     "    file_exists: missing.txt\n",
		  0, "weight-zero", "SUCCESS");
	expect_score(f, 1);
	expect_crit(f, 0, true, 1, NULL);
	expect_crit(f, 1, false, 0, NULL);
}

/* --no-grade: NOT_GRADED, exit 0, nothing evaluated; a later grade grades it. */
static void test_no_grade(void **state)
{
	struct fx *f = *state;
	put_task(f, "schema_version: 1\n"
		    "task_id: no-grade\n"
		    "agent: { run: [sh, -c, \"echo x > x.txt\"], timeout: 20s }\n"
		    "criteria:\n"
		    "  - description: x.txt exists\n"
		    "    file_exists: x.txt\n"
		    "  - description: a command\n"
		    "    command: { run: [test, -f, \"{workspace}/x.txt\"] }\n");
	eval_path(f, f->task, "--no-grade", 0, "no-grade", NULL);
	expect_status(f, "NOT_GRADED");
	assert_true(is_null(f->record, "score"));
	assert_true(th_json_num(f->record, "grades") == 0);
	assert_string_equal(th_json_str(f->record, "phases.grade.status"), "skipped");
	assert_true(is_null(f->record, "phases.grade.started_at"));
	for (int i = 0; i < 2; i++) {
		const cJSON *c = criterion(f, i);
		assert_false(th_json_bool(c, "evaluated"));
		assert_false(th_json_bool(c, "passed"));
		assert_true(is_null(c, "score"));
		assert_true(is_null(c, "run"));
	}
	assert_true(run_has(f, "workspace/x.txt"));

	grade(f, 0, "SUCCESS");
	expect_score(f, 1);
	assert_true(th_json_num(f->record, "grades") == 1);
	expect_all_passed(f);
}

/* ---- timeouts ---- */

/* The agent's timeout: TIMEOUT (exit 1), its work still graded. */
static void test_timeout_agent(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: agent-timeout\n"
		     "workspace:\n"
		     "  files:\n"
		     "    - { path: given.txt, content: \"given\\n\" }\n"
		     "agent:\n"
		     "  run: [sleep, \"30\"]\n"
		     "  timeout: 1s\n"
		     "criteria:\n"
		     "  - description: given.txt exists\n"
		     "    file_exists: given.txt\n",
		  1, "agent-timeout", "TIMEOUT");
	assert_string_equal(th_json_str(f->record, "phases.agent.status"), "timeout");
	assert_string_equal(th_json_str(f->record, "phases.agent.reason"), "wall-timeout");
	assert_string_equal(th_json_str(f->record, "phases.reap.status"), "ok");
	expect_score(f, 1);
	assert_true(f->out.elapsed_ms < QUICK_MS);
}

/* A setup step's timeout: SETUP_FAILED (exit 2), the agent never starts. */
static void test_timeout_setup(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: setup-timeout\n"
		     "setup:\n"
		     "  - { run: [sleep, \"30\"], timeout: 500ms }\n"
		     "agent:\n"
		     "  run: [sh, -c, \"echo ran > agent-ran.txt\"]\n"
		     "  timeout: 20s\n"
		     "criteria:\n"
		     "  - description: the agent ran\n"
		     "    file_exists: agent-ran.txt\n",
		  2, "setup-timeout", "SETUP_FAILED");
	assert_true(is_null(f->record, "phases.agent"));
	assert_true(is_null(f->record, "score"));
	assert_string_equal(th_json_str(f->record, "phases.setup.status"), "failed");
	const cJSON *step = cJSON_GetArrayItem(th_json_at(f->record, "phases.setup.steps"), 0);
	assert_non_null(step);
	assert_string_equal(th_json_str(step, "status"), "timeout");
	assert_false(run_has(f, "workspace/agent-ran.txt"));
	assert_true(f->out.elapsed_ms < QUICK_MS);
}

/* A command criterion's timeout scores 0 with the reason; the run is a FAILURE. */
static void test_timeout_criterion(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: criterion-timeout\n"
		     "workspace:\n"
		     "  files:\n"
		     "    - { path: given.txt, content: \"given\\n\" }\n"
		     "agent: { run: [\"true\"], timeout: 20s }\n"
		     "criteria:\n"
		     "  - description: a slow check\n"
		     "    command: { run: [sleep, \"30\"], timeout: 500ms }\n"
		     "  - description: given.txt exists\n"
		     "    file_exists: given.txt\n",
		  1, "criterion-timeout", "FAILURE");
	expect_score(f, 0.5);
	expect_crit(f, 0, false, 0, "timed out");
	assert_string_equal(th_json_str(criterion(f, 0), "run.status"), "timeout");
	expect_crit(f, 1, true, 1, NULL);
	assert_true(f->out.elapsed_ms < QUICK_MS);
}

/* A teardown step's timeout stamps the record and leaves the verdict alone. */
static void test_timeout_teardown(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: teardown-timeout\n"
		     "workspace:\n"
		     "  files:\n"
		     "    - { path: given.txt, content: \"given\\n\" }\n"
		     "agent: { run: [\"true\"], timeout: 20s }\n"
		     "criteria:\n"
		     "  - description: given.txt exists\n"
		     "    file_exists: given.txt\n"
		     "teardown:\n"
		     "  - { run: [sleep, \"30\"], timeout: 500ms }\n",
		  0, "teardown-timeout", "SUCCESS");
	expect_score(f, 1);
	bool has = false;
	assert_int_equal(stamps(f, "teardown_failed", &has), 1);
	assert_true(has);
	assert_string_equal(th_json_str(f->record, "phases.teardown.status"), "failed");
	const cJSON *step = cJSON_GetArrayItem(th_json_at(f->record, "phases.teardown.steps"), 0);
	assert_non_null(step);
	assert_string_equal(th_json_str(step, "status"), "timeout");
	assert_true(f->out.elapsed_ms < QUICK_MS);
}

/* ---- what criteria see ---- */

/* Command criteria write to a throwaway overlay: no later criterion, nor the host, sees it. */
static void test_criteria_overlay(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: overlay\n"
		     "workspace:\n"
		     "  files:\n"
		     "    - { path: keep.txt, content: \"original\\n\" }\n"
		     "    - { path: sub/deep.txt, content: \"deep\\n\" }\n"
		     "agent: { run: [\"true\"], timeout: 20s }\n"
		     "criteria:\n"
		     "  - description: the first command deletes and writes\n"
		     "    command:\n"
		     "      run:\n"
		     "        - sh\n"
		     "        - -c\n"
		     "        - >-\n"
		     "          cd {workspace} && rm keep.txt && rm -r sub && "
		     "echo new > new.txt &&\n"
		     "          echo changed > more.txt && test ! -e keep.txt && test -f new.txt\n"
		     "  - description: the second command sees the original\n"
		     "    command:\n"
		     "      run: [sh, -c, \"cd {workspace} && grep -qx original keep.txt && "
		     "test -f sub/deep.txt && test ! -e new.txt\"]\n"
		     "  - description: keep.txt is still there\n"
		     "    file_contains: { path: keep.txt, includes: [original] }\n"
		     "  - description: sub/deep.txt is still there\n"
		     "    file_exists: sub/deep.txt\n"
		     "  - description: new.txt never was\n"
		     "    file_absent: new.txt\n",
		  0, "overlay", "SUCCESS");
	expect_all_passed(f);
	char *keep = run_file(f, "workspace/keep.txt");
	assert_string_equal(keep, "original\n");
	free(keep);
	assert_true(run_has(f, "workspace/sub/deep.txt"));
	assert_false(run_has(f, "workspace/new.txt"));
	assert_false(run_has(f, "workspace/more.txt"));

	/* A regrade sees what the first grade saw. */
	grade(f, 0, "SUCCESS");
	expect_all_passed(f);
	assert_false(run_has(f, "workspace/new.txt"));
}

#define CREDENTIALS_TASK \
	"schema_version: 1\n" \
	"task_id: credentials\n" \
	"policy:\n" \
	"  env:\n" \
	"    set: [\"PATH=/usr/bin:/bin:/agent-path\", PYTHONSAFEPATH=0]\n" \
	"    pass: [TERM, WARDEN_TEST_POLICY_VAR]\n" \
	"agent:\n" \
	"  run: [sh, -c, \"env > agent-env.txt\"]\n" \
	"  timeout: 20s\n" \
	"  env: { pass: [WARDEN_TEST_SECRET] }\n" \
	"criteria:\n" \
	"  - description: the agent got its credential\n" \
	"    file_contains: { path: agent-env.txt, includes: [WARDEN_TEST_SECRET=xyz-secret] }\n" \
	"  - description: the agent got the policy's variables\n" \
	"    file_contains:\n" \
	"      path: agent-env.txt\n" \
	"      includes: [WARDEN_TEST_POLICY_VAR=policy-var, \"PATH=/usr/bin:/bin:/agent-path\"]\n" \
	"  - description: a criterion gets no credential\n" \
	"    command: { run: [sh, -c, 'test -z \"$WARDEN_TEST_SECRET\"'] }\n" \
	"  - description: nor the policy's env.pass\n" \
	"    command: { run: [sh, -c, 'test -z \"$WARDEN_TEST_POLICY_VAR\"'] }\n" \
	"  - description: a criterion's PATH is fixed\n" \
	"    command: { run: [sh, -c, 'test \"$PATH\" = /usr/local/bin:/usr/bin:/bin'] }\n" \
	"  - description: PYTHONSAFEPATH is 1\n" \
	"    command: { run: [sh, -c, 'test \"$PYTHONSAFEPATH\" = 1'] }\n" \
	"  - description: GIT_NO_REPLACE_OBJECTS is 1\n" \
	"    command: { run: [sh, -c, 'test \"$GIT_NO_REPLACE_OBJECTS\" = 1'] }\n" \
	"  - description: a criterion that names the credential gets it\n" \
	"    command:\n" \
	"      run: [sh, -c, 'test \"$WARDEN_TEST_SECRET\" = xyz-secret']\n" \
	"      env: { pass: [WARDEN_TEST_SECRET] }\n"

/* Criteria get no credential unless they name it, and a fixed PATH and Python/git settings. */
static void test_criteria_env(void **state)
{
	struct fx *f = *state;
	put_task(f, CREDENTIALS_TASK);
	eval_path(f, f->task, NULL, 0, "credentials",
		  TH_CMD("WARDEN_TEST_SECRET=xyz-secret", "WARDEN_TEST_POLICY_VAR=policy-var"));
	expect_all_passed(f);
	expect_status(f, "SUCCESS");
	char *env = run_file(f, "workspace/agent-env.txt");
	assert_true(th_has_line(env, "WARDEN_TEST_SECRET=xyz-secret"));
	free(env);
}

#define PLANTED_TASK \
	"schema_version: 1\n" \
	"task_id: planted\n" \
	"agent:\n" \
	"  run: [sh, -c, \"mkfifo pipe && ln -s /etc/passwd passwd-link && " \
	"ln -s /etc etc-link && echo x > plain.txt\"]\n" \
	"  timeout: 20s\n" \
	"criteria:\n" \
	"  - description: file_contains on a FIFO\n" \
	"    file_contains: { path: pipe, includes: [x] }\n" \
	"  - description: file_matches on a FIFO\n" \
	"    file_matches: { path: pipe, regex: x }\n" \
	"  - description: json_equals on a FIFO\n" \
	"    json_equals: { path: pipe, pointer: \"\", op: exists }\n" \
	"  - description: file_exists on a FIFO\n" \
	"    file_exists: pipe\n" \
	"  - description: file_contains through a symlink\n" \
	"    file_contains: { path: passwd-link, includes: [root] }\n" \
	"  - description: file_contains below a symlinked folder\n" \
	"    file_contains: { path: etc-link/passwd, includes: [root] }\n" \
	"  - description: file_exists on a symlink\n" \
	"    file_exists: passwd-link\n" \
	"  - description: the control, a plain file\n" \
	"    file_contains: { path: plain.txt, includes: [x] }\n"

/*
 * What the agent plants that the apply refuses (a FIFO, absolute symlinks) never reaches the
 * run folder; planted there on the host afterwards (a run folder is untrusted input), the
 * static checks of a regrade neither block on the FIFO nor follow the symlinks.
 */
static void test_static_unsafe_files(void **state)
{
	struct fx *f = *state;
	eval_task(f, PLANTED_TASK, 1, "planted", "FAILURE");
	assert_true(f->out.elapsed_ms < QUICK_MS);
	for (int i = 0; i < 7; i++)
		expect_crit(f, i, false, 0, "no such file");
	expect_crit(f, 7, true, 1, NULL);
	assert_false(run_has(f, "workspace/pipe"));
	assert_false(run_has(f, "workspace/passwd-link"));
	assert_false(run_has(f, "workspace/etc-link"));
	assert_true(run_has(f, "workspace/plain.txt"));
	/* The control: the agent made them, and the apply refused them. */
	char *log = run_file(f, "changes.log");
	bool named = strstr(log, "refused special 'pipe'") && strstr(log, "'passwd-link'") &&
		     strstr(log, "'etc-link'");
	if (!named)
		th_print_long("changes.log", log);
	free(log);
	assert_true(named);

	char path[PATH_MAX];
	th_pathf(path, "%s/workspace/pipe", f->run);
	assert_int_equal(mkfifo(path, 0644), 0);
	th_pathf(path, "%s/workspace/passwd-link", f->run);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	th_pathf(path, "%s/workspace/etc-link", f->run);
	assert_int_equal(symlink("/etc", path), 0);
	grade(f, 1, "FAILURE");
	assert_false(f->out.hard_timeout);
	assert_true(f->out.elapsed_ms < QUICK_MS);
	expect_crit(f, 0, false, 0, "FIFO");
	expect_crit(f, 1, false, 0, "FIFO");
	expect_crit(f, 2, false, 0, "FIFO");
	expect_crit(f, 3, false, 0, "FIFO");
	expect_crit(f, 4, false, 0, "symlink");
	expect_crit(f, 5, false, 0, "symlink");
	expect_crit(f, 6, false, 0, "symlink");
	expect_crit(f, 7, true, 1, NULL);
}

/* ---- the run folder: private, never root's, nothing set-id or special ---- */

/* What walk_ws found wrong first, and how many entries it saw. */
struct ws_walk {
	bool check_owner;           /* every entry must be WS_OWNER's */
	size_t n;
	char bad[PATH_MAX + 128];
};

/*
 * Checks path and everything below it (symlinks not followed): no set-user-ID, set-group-ID
 * or sticky bit, no FIFO, socket or device, and with check_owner, uid and gid WS_OWNER.
 */
static void walk_ws(struct ws_walk *w, const char *path, unsigned depth)
{
	struct stat st;
	if (w->bad[0] || lstat(path, &st) < 0) {
		if (!w->bad[0])
			(void)snprintf(w->bad, sizeof(w->bad), "%s: lstat: %s", path, strerror(errno));
		return;
	}
	w->n++;
	if (w->check_owner && (st.st_uid != WS_OWNER || st.st_gid != WS_OWNER))
		(void)snprintf(w->bad, sizeof(w->bad), "%s belongs to %u:%u", path,
			       (unsigned)st.st_uid, (unsigned)st.st_gid);
	else if (!S_ISLNK(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID | S_ISVTX)))
		(void)snprintf(w->bad, sizeof(w->bad), "%s has mode %04o", path,
			       (unsigned)(st.st_mode & 07777));
	else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode))
		(void)snprintf(w->bad, sizeof(w->bad), "%s is a special file (mode %06o)", path,
			       (unsigned)st.st_mode);
	if (w->bad[0] || !S_ISDIR(st.st_mode) || depth > 64)
		return;
	DIR *d = opendir(path);
	if (!d) {
		(void)snprintf(w->bad, sizeof(w->bad), "%s: opendir: %s", path, strerror(errno));
		return;
	}
	struct dirent *de;
	while (!w->bad[0] && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char sub[PATH_MAX];
		th_pathf(sub, "%s/%s", path, de->d_name);
		walk_ws(w, sub, depth + 1);
	}
	(void)closedir(d);
}

/*
 * The run folder is 0700 and warden's; its workspace holds nothing set-id or special and,
 * with owner, everything in it (itself included) is WS_OWNER's. Returns the entries seen.
 */
static size_t expect_safe_run(const struct fx *f, bool owner)
{
	struct stat st;
	assert_int_equal(lstat(f->run, &st), 0);
	if ((st.st_mode & 07777) != 0700 || st.st_uid != geteuid()) {
		show(f);
		fail_msg("run folder %s has mode %04o and owner %u (expected 0700, %u)", f->run,
			 (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, (unsigned)geteuid());
	}
	struct ws_walk w = { .check_owner = owner };
	char ws[PATH_MAX];
	th_pathf(ws, "%s/workspace", f->run);
	walk_ws(&w, ws, 0);
	if (w.bad[0]) {
		show(f);
		fail_msg("run folder's workspace: %s", w.bad);
	}
	return w.n;
}

/* The run folder's file rel holds every string of want (NULL-terminated). */
static void expect_run_file_has(const struct fx *f, const char *rel, const char *const *want)
{
	char *text = run_file(f, rel);
	for (size_t i = 0; want[i]; i++) {
		if (!strstr(text, want[i])) {
			show(f);
			th_print_long(rel, text);
			free(text);
			fail_msg("%s lacks '%s'", rel, want[i]);
		}
	}
	free(text);
}

#define OWNER_TASK \
	"schema_version: 1\n" \
	"task_id: owner\n" \
	"workspace:\n" \
	"  template: tpl\n" \
	"  files:\n" \
	"    - { path: deep/inline.txt, content: \"inline\\n\" }\n" \
	"setup:\n" \
	"  - run: [sh, -c, \"mkdir -p setup-dir && echo setup > setup-dir/setup.txt\"]\n" \
	"agent:\n" \
	"  run:\n" \
	"    - sh\n" \
	"    - -c\n" \
	"    - >-\n" \
	"      echo agent >> given.txt && mkdir -p made/sub && echo agent > made/sub/agent.txt &&\n" \
	"      echo agent > setup-dir/agent.txt && rm deep/inline.txt && id -u > uid.txt\n" \
	"  timeout: 20s\n" \
	"criteria:\n" \
	"  - description: the agent's file\n" \
	"    file_contains: { path: made/sub/agent.txt, includes: [agent] }\n" \
	"  - description: the template's file, changed\n" \
	"    command: { run: [grep, -qx, agent, \"{workspace}/given.txt\"] }\n" \
	"  - description: the deleted file\n" \
	"    file_absent: deep/inline.txt\n" \
	"teardown:\n" \
	"  - run: [sh, -c, \"echo ran >> {workspace}/teardown.txt\"]\n"

/*
 * The run folder is 0700; the workspace and everything the template copy, setup, the agent
 * and teardown leave in it belong to WS_OWNER, never to root, in eval and after a regrade.
 */
static void test_run_folder_owner(void **state)
{
	struct fx *f = *state;
	char path[PATH_MAX];
	th_pathf(path, "%s/tpl/given.txt", f->task_dir);
	th_put_file_mkdirs(path, "given\n");
	eval_task(f, OWNER_TASK, 0, "owner", "SUCCESS");
	expect_all_passed(f);
	/* The controls: each phase wrote, and the agent ran as the sandbox's user. */
	assert_true(run_has(f, "workspace/setup-dir/setup.txt"));
	assert_true(run_has(f, "workspace/setup-dir/agent.txt"));
	assert_false(run_has(f, "workspace/deep/inline.txt"));
	assert_int_equal(run_file_lines(f, "workspace/teardown.txt"), 1);
	char *uid = run_file(f, "workspace/uid.txt");
	assert_string_equal(uid, "1000\n");
	free(uid);
	assert_true(expect_safe_run(f, true) >= 10);
	expect_run_file_has(f, "changes.log", TH_CMD("== agent: changeset ", "0 held, 0 refused"));

	grade(f, 0, "SUCCESS");
	assert_int_equal(run_file_lines(f, "workspace/teardown.txt"), 2);
	assert_true(expect_safe_run(f, true) >= 10);
}

/*
 * The setup and the agent plant set-id files (the chmod of `cp /bin/sh x; chmod 6755 x`,
 * install -m, and every raw call that takes a mode), FIFOs, sockets and sticky folders, and
 * leave a symlink to a set-uid host program. The seccomp filter refuses every set-id mode;
 * the specials the agent made stay in its changeset, refused; setup's, written directly,
 * are removed by the scrub. Neither the criteria nor the host run folder see anything set-id
 * or special, and the symlink's host target is left alone.
 */
#define SETID_TASK \
	"schema_version: 1\n" \
	"task_id: setid\n" \
	"workspace:\n" \
	"  template: tpl\n" \
	"setup:\n" \
	"  - run:\n" \
	"      - sh\n" \
	"      - -c\n" \
	"      - >-\n" \
	"        mkfifo setup-fifo && mkdir -m 1777 setup-sticky && ln -s /usr/bin/passwd pw-link &&\n" \
	"        perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die \"$!\";\n" \
	"        bind($s, pack_sockaddr_un(\"setup-sock\")) or die \"$!\"'\n" \
	"agent:\n" \
	"  run:\n" \
	"    - sh\n" \
	"    - -c\n" \
	"    - |\n" \
	"      exec > attempts.txt 2>&1\n" \
	"      cp /bin/sh sh-copy; chmod 6755 sh-copy; echo \"chmod $?\"\n" \
	"      install -m 6755 /bin/sh sh-installed; echo \"install $?\"\n" \
	"      for c in openat open creat tmpfile mknodat mknod mkdirat mkdir openat2; do\n" \
	"        echo \"setid $c $(./probe setid $c $c-setid 6755)\"\n" \
	"      done\n" \
	"      for c in fchmod fchmodat fchmodat2 chmod; do\n" \
	"        echo \"setid $c $(./probe setid $c sh-copy 6755)\"\n" \
	"      done\n" \
	"      mkfifo agent-fifo; echo \"mkfifo $?\"\n" \
	"      perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die \"$!\";\n" \
	"        bind($s, pack_sockaddr_un(\"agent-sock\")) or die \"$!\"'; echo \"socket $?\"\n" \
	"      mkdir -m 1777 agent-sticky; echo \"sticky $?\"\n" \
	"      stat -c '%F %a %n' agent-fifo agent-sock agent-sticky setup-fifo setup-sticky\n" \
	"  timeout: 20s\n" \
	"criteria:\n" \
	"  - description: nothing set-id or special in the criteria's view\n" \
	"    command:\n" \
	"      run: [sh, -c, \"find {workspace} -perm /7000 -o -type p -o -type s -o -type b -o " \
	"-type c\"]\n" \
	"      stdout: { exact: \"\" }\n" \
	"  - description: the agent recorded its attempts\n" \
	"    file_contains: { path: attempts.txt, includes: [\"mkfifo 0\"] }\n"

/* Copies the probe into the fixture's task folder at rel, mode 0755. */
static void put_probe(const struct fx *f, const char *rel)
{
	char path[PATH_MAX];
	th_pathf(path, "%s/%s", f->task_dir, rel);
	th_mkdir_parents(path);
	size_t len = 0;
	char *bytes = slurp(th_probe(), false, &len);
	assert_non_null(bytes);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_true(write(fd, bytes, len) == (ssize_t)len);
	assert_int_equal(close(fd), 0);
	assert_int_equal(chmod(path, 0755), 0);
	free(bytes);
}

static void test_setid_plant(void **state)
{
	struct fx *f = *state;
	put_probe(f, "tpl/probe");
	struct stat host_before;
	bool have_passwd = lstat("/usr/bin/passwd", &host_before) == 0;
	eval_task(f, SETID_TASK, 0, "setid", "SUCCESS");
	expect_all_passed(f);
	/* The controls: the agent's plants existed in its sandbox, and every set-id try failed. */
	expect_run_file_has(f, "workspace/attempts.txt",
			    TH_CMD("chmod 1", "install 1", "mkfifo 0", "socket 0", "sticky 0",
				   "fifo 644 agent-fifo", "socket 755 agent-sock",
				   "directory 1777 agent-sticky", "fifo 644 setup-fifo",
				   "directory 1777 setup-sticky"));
	char *attempts = run_file(f, "workspace/attempts.txt");
	int tries = 0;
	for (const char *p = attempts; (p = strstr(p, "setid ")); p++) {
		tries++;
		if (!strncmp(strchr(p + 6, ' ') + 1, "OK", 2)) {
			th_print_long("attempts.txt", attempts);
			free(attempts);
			fail_msg("a set-id mode was accepted in the sandbox");
		}
	}
	free(attempts);
	assert_int_equal(tries, 13);
	/* The host run folder: nothing set-id or special, nothing root's. */
	expect_safe_run(f, true);
	assert_false(run_has(f, "workspace/agent-fifo"));
	assert_false(run_has(f, "workspace/agent-sock"));
	assert_false(run_has(f, "workspace/setup-fifo"));
	assert_false(run_has(f, "workspace/setup-sock"));
	assert_true(run_has(f, "workspace/agent-sticky"));
	assert_true(run_has(f, "workspace/setup-sticky"));
	expect_run_file_has(f, "changes.log",
			    TH_CMD("refused special 'agent-fifo'", "refused special 'agent-sock'",
				   "scrub: removed the FIFO 'setup-fifo'",
				   "scrub: removed the socket 'setup-sock'",
				   "scrub: cleared the mode bits 1000 of 'setup-sticky'"));
	char link[PATH_MAX], target[PATH_MAX];
	th_pathf(link, "%s/workspace/pw-link", f->run);
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_string_equal(target, "/usr/bin/passwd");
	struct stat host_after;
	if (have_passwd) {
		assert_int_equal(lstat("/usr/bin/passwd", &host_after), 0);
		assert_int_equal(host_after.st_mode, host_before.st_mode);
	}

	grade(f, 0, "SUCCESS");
	expect_all_passed(f);
	expect_safe_run(f, true);
}

/* The io_uring plant: io_uring's openat with a set-id mode, which the seccomp filter never sees. */
static const char uring_py[] =
	"import ctypes, mmap, os, struct, sys\n"
	"libc = ctypes.CDLL(None, use_errno=True)\n"
	"libc.syscall.restype = ctypes.c_long\n"
	"p = ctypes.create_string_buffer(120)\n"
	"fd = libc.syscall(425, 4, p)  # io_uring_setup\n"
	"if fd < 0:\n"
	"    sys.exit('io_uring_setup: errno %d' % ctypes.get_errno())\n"
	"n_sq, n_cq = struct.unpack_from('2I', p.raw, 0)\n"
	"sq = struct.unpack_from('8IQ', p.raw, 40)\n"
	"cq = struct.unpack_from('8IQ', p.raw, 80)\n"
	"ring = mmap.mmap(fd, max(sq[6] + n_sq * 4, cq[5] + n_cq * 16), offset=0)\n"
	"sqes = mmap.mmap(fd, n_sq * 64, offset=0x10000000)\n"
	"name = ctypes.create_string_buffer(sys.argv[1].encode())\n"
	"# IORING_OP_OPENAT at AT_FDCWD: len is the mode, then the open flags\n"
	"struct.pack_into('<BBHiQQIIQ', sqes, 0, 18, 0, 0, -100, 0, ctypes.addressof(name),\n"
	"                 0o6755, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 1)\n"
	"tail = struct.unpack_from('I', ring, sq[1])[0]\n"
	"mask = struct.unpack_from('I', ring, sq[2])[0]\n"
	"struct.pack_into('I', ring, sq[6] + (tail & mask) * 4, 0)\n"
	"struct.pack_into('I', ring, sq[1], tail + 1)\n"
	"if libc.syscall(426, fd, 1, 1, 1, None, 0) < 0:  # io_uring_enter\n"
	"    sys.exit('io_uring_enter: errno %d' % ctypes.get_errno())\n"
	"head = struct.unpack_from('I', ring, cq[0])[0]\n"
	"cmask = struct.unpack_from('I', ring, cq[2])[0]\n"
	"res = struct.unpack_from('<Qi', ring, cq[5] + (head & cmask) * 16)[1]\n"
	"print('openat', 'ok' if res >= 0 else 'errno %d' % -res)\n";

#define URING_TASK \
	"schema_version: 1\n" \
	"task_id: setid-uring\n" \
	"policy:\n" \
	"  unsafe: [io_uring]\n" \
	"workspace:\n" \
	"  template: tpl\n" \
	"setup:\n" \
	"  - run: [sh, -c, \"python3 uring.py setup-setid > setup.txt 2>&1; " \
	"stat -c '%a %n' setup-setid >> setup.txt\"]\n" \
	"agent:\n" \
	"  run: [sh, -c, \"python3 uring.py agent-setid > agent.txt 2>&1; " \
	"stat -c '%a %n' agent-setid setup-setid >> agent.txt\"]\n" \
	"  timeout: 20s\n" \
	"criteria:\n" \
	"  - description: nothing set-id or special in the criteria's view\n" \
	"    command:\n" \
	"      run: [sh, -c, \"find {workspace} -perm /7000 -o -type p -o -type s -o -type b -o " \
	"-type c\"]\n" \
	"      stdout: { exact: \"\" }\n"

/*
 * A policy that lifts io_uring (`unsafe: [io_uring]`) lets the setup and the agent really make
 * files with mode 6755, past the seccomp filter. The agent's reach the run folder only through
 * the apply, which masks the mode; setup's, written directly, are cleared by the scrub.
 */
static void test_setid_io_uring(void **state)
{
	struct fx *f = *state;
	/* kernel.io_uring_disabled: 0 allows it (a kernel without the sysctl always does). */
	FILE *sysctl = fopen("/proc/sys/kernel/io_uring_disabled", "re");
	int disabled = 0;
	if (sysctl && fscanf(sysctl, "%d", &disabled) != 1)
		disabled = -1;
	if (sysctl)
		(void)fclose(sysctl);
	bool enabled = disabled == 0;
	if (!enabled || access("/usr/bin/python3", X_OK) != 0) {
		print_message("io_uring is disabled or there is no /usr/bin/python3: skipped\n");
		skip();
	}
	char path[PATH_MAX];
	th_pathf(path, "%s/tpl/uring.py", f->task_dir);
	th_put_file_mkdirs(path, uring_py);
	eval_task(f, URING_TASK, 0, "setid-uring", "SUCCESS");
	/* The controls: both files were set-id in the sandbox. */
	expect_run_file_has(f, "workspace/setup.txt", TH_CMD("openat ok", "6755 setup-setid"));
	expect_run_file_has(f, "workspace/agent.txt",
			    TH_CMD("openat ok", "6755 agent-setid", "6755 setup-setid"));
	expect_all_passed(f);
	expect_safe_run(f, true);
	expect_run_file_has(f, "changes.log",
			    TH_CMD("scrub: cleared the mode bits 6000 of 'setup-setid'"));
	grade(f, 0, "SUCCESS");
	expect_safe_run(f, true);
}

/*
 * A workspace that cannot be made safe (setup left a FIFO deeper than the scrub descends) is
 * set aside as workspace.unsafe: the run is ERROR, nothing grades it, and a regrade finds no
 * workspace.
 */
static void test_unsettled_set_aside(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: unsettled\n"
		     "setup:\n"
		     "  - run: [sh, -c, \"d=.; i=0; while [ $i -lt 300 ]; do d=$d/d; i=$((i+1)); "
		     "done; mkdir -p $d && mkfifo $d/fifo\"]\n"
		     "agent: { run: [sh, -c, \"echo done > done.txt\"], timeout: 20s }\n"
		     "criteria:\n"
		     "  - description: done\n"
		     "    file_exists: done.txt\n"
		     "teardown:\n"
		     "  - run: [sh, -c, \"echo ran > {workspace}/teardown.txt\"]\n",
		  2, "unsettled", "ERROR");
	assert_non_null(strstr(f->out.err, "could not be made safe"));
	assert_false(run_has(f, "workspace"));
	assert_true(run_has(f, "workspace.unsafe/done.txt"));
	assert_false(run_has(f, "workspace.unsafe/teardown.txt"));
	assert_string_equal(th_json_str(f->record, "phases.grade.status"), "skipped");
	assert_string_equal(th_json_str(f->record, "phases.teardown.status"), "skipped");
	assert_false(th_json_bool(criterion(f, 0), "evaluated"));
	expect_run_file_has(f, "changes.log", TH_CMD("could not be made safe", "256"));
	grade_arg(f, f->run, true, 3);
	assert_non_null(strstr(f->out.err, "has no workspace"));
}

/* ---- several runs ---- */

/* --jobs 3: three run folders, three valid records, three rows in the summary. */
static void test_parallel(void **state)
{
	struct fx *f = *state;
	char tasks[3][PATH_MAX];
	for (int i = 0; i < 3; i++) {
		char yaml[1024];
		(void)snprintf(yaml, sizeof(yaml),
			       "schema_version: 1\n"
			       "task_id: par-%d\n"
			       "agent:\n"
			       "  run: [sh, -c, \"sleep 1; echo %d > done.txt\"]\n"
			       "  timeout: 20s\n"
			       "criteria:\n"
			       "  - description: done\n"
			       "    file_contains: { path: done.txt, includes: [\"%d\"] }\n",
			       i, i, i);
		th_pathf(tasks[i], "%s/par-%d/task.yaml", f->base, i);
		th_put_file_mkdirs(tasks[i], yaml);
	}
	warden(f, "eval", TH_CMD("--out", f->out_dir, "--jobs", "3", tasks[0], tasks[1], tasks[2]),
	       NULL);
	expect_code(f, 0);
	size_t n = 0;
	char *names = th_list_dir(f->out_dir, &n);
	assert_non_null(names);
	assert_int_equal(n, 3);
	bool seen[3] = { false, false, false };
	int rows = 0;
	for (char *name = names, *nl; (nl = strchr(name, '\n')); name = nl + 1) {
		*nl = '\0';
		th_pathf(f->run, "%s/%s", f->out_dir, name);
		load_record(f);
		expect_status(f, "SUCCESS");
		const char *id = th_json_str(f->record, "task.id");
		int k = -1;
		if (sscanf(id, "par-%d", &k) != 1 || k < 0 || k > 2 || seen[k])
			fail_msg("unexpected task.id '%s'", id);
		seen[k] = true;
		check_basics(f, id, tasks[k]);
		/*
		 * stdout is a pipe, not a terminal: one line per task as it ended,
		 * "[N/3] TASK SUCCESS 1.000 SECONDSs RUN_DIR", N counting the tasks ended.
		 */
		for (const char *line = f->out.out; line && *line;) {
			const char *end = strchr(line, '\n');
			size_t len = end ? (size_t)(end - line) : strlen(line);
			char row[PATH_MAX + 256], want[128];
			(void)snprintf(row, sizeof(row), "%.*s", (int)len, line);
			(void)snprintf(want, sizeof(want), " %s SUCCESS 1.000 ", id);
			unsigned nth = 0;
			char close = 0;
			const char *tail = strstr(row, want);
			if (sscanf(row, "[%u/3%c", &nth, &close) == 2 && close == ']' && nth >= 1 &&
			    nth <= 3 && tail && strlen(row) > strlen(f->run) &&
			    strcmp(row + strlen(row) - strlen(f->run), f->run) == 0)
				rows++;
			line = end ? end + 1 : NULL;
		}
	}
	free(names);
	if (rows != 3) {
		show(f);
		fail_msg("expected 3 lines of finished tasks, found %d", rows);
	}
	/* Then the totals, last. */
	const char *totals = strstr(f->out.out, "total 3: SUCCESS 3; mean score 1.000 over 3 graded; "
					       "wall time ");
	if (!totals || strchr(totals, '\n') != f->out.out + f->out.out_len - 1) {
		show(f);
		fail_msg("expected the totals as the last line");
	}
}

/* --json prints the one array of before, with no task lines and no totals. */
static void test_json_summary(void **state)
{
	struct fx *f = *state;
	put_task(f, "schema_version: 1\n"
		    "task_id: json-summary\n"
		    "agent: { run: [sh, -c, \"echo x > x.txt\"], timeout: 20s }\n"
		    "criteria:\n"
		    "  - description: x.txt exists\n"
		    "    file_exists: x.txt\n");
	eval_path(f, f->task, "--json", 0, "json-summary", NULL);
	cJSON *arr = cJSON_Parse(f->out.out);
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != 1) {
		show(f);
		cJSON_Delete(arr);
		fail_msg("expected a JSON array of one summary on stdout");
	}
	const cJSON *row = cJSON_GetArrayItem(arr, 0);
	assert_string_equal(th_json_str(row, "task_id"), "json-summary");
	assert_string_equal(th_json_str(row, "status"), "SUCCESS");
	assert_string_equal(th_json_str(row, "run_dir"), f->run);
	assert_true(near(th_json_num(row, "score"), 1));
	assert_true(is_null(row, "error"));
	cJSON_Delete(arr);
	assert_null(strstr(f->out.out, "total "));
}

/* ---- an agent that never started, limit events, interruption ---- */

/* An agent command that is not there is ERROR (exit 2), not the agent's FAILURE. */
static void test_agent_not_found(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: agent-missing\n"
		     "agent: { run: [no-such-agent-here], timeout: 20s }\n"
		     "criteria:\n"
		     "  - description: nothing to find\n"
		     "    file_absent: x.txt\n",
		  2, "agent-missing", "ERROR");
	assert_true(th_json_num(f->record, "phases.agent.exit_code") == 127);
	assert_string_equal(th_json_str(f->record, "phases.agent.reason"), "exited");
	expect_has(f, f->out.err, "was not found (exit 127)");
	/* The control: the criterion itself passed, so ERROR came from the agent. */
	expect_crit(f, 0, true, 1, NULL);
}

/* An agent command that cannot be executed is ERROR too. */
static void test_agent_not_executable(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: agent-noexec\n"
		     "workspace:\n"
		     "  files:\n"
		     "    - { path: agent.sh, content: \"echo hi\\n\", mode: 0644 }\n"
		     "agent: { run: [\"{workspace}/agent.sh\"], timeout: 20s }\n"
		     "criteria:\n"
		     "  - description: the script is there\n"
		     "    file_exists: agent.sh\n",
		  2, "agent-noexec", "ERROR");
	assert_true(th_json_num(f->record, "phases.agent.exit_code") == 126);
	expect_has(f, f->out.err, "could not be executed (exit 126)");
	expect_crit(f, 0, true, 1, NULL);
}

/* Each step records its OOM kills and pids-limit hits, as run --record does. */
static void test_limit_events(void **state)
{
	struct fx *f = *state;
	eval_task(f, "schema_version: 1\n"
		     "task_id: limit-events\n"
		     "policy:\n"
		     "  limits: { memory: 64M, pids: 16 }\n"
		     "setup:\n"
		     "  - { run: [sh, -c, \"tail /dev/zero\"], fail_on_error: false, timeout: 20s }\n"
		     "agent:\n"
		     "  run: [sh, -c, \"for i in $(seq 40); do sleep 1 & done; wait; echo done\"]\n"
		     "  timeout: 20s\n"
		     "criteria:\n"
		     "  - description: anything\n"
		     "    file_absent: x.txt\n",
		  0, "limit-events", "SUCCESS");
	if (th_json_num(f->record, "host.cgroup_version") == 0) {
		assert_true(is_null(f->record, "phases.agent.oom_kills"));
		assert_true(is_null(f->record, "phases.agent.pids_limit_hits"));
		skip();
	}
	const cJSON *hog = cJSON_GetArrayItem(th_json_at(f->record, "phases.setup.steps"), 0);
	assert_non_null(hog);
	if (th_json_num(hog, "oom_kills") < 1 || th_json_num(f->record,
							      "phases.agent.pids_limit_hits") < 1) {
		show(f);
		fail_msg("expected an OOM kill in setup[0] and a pids-limit hit in the agent");
	}
	/*
	 * On cgroup v2 the OOM kill takes the whole group (memory.oom.group): the reason says
	 * oom. On v1 only the hog dies, the shell outlives it and exits 137: the reason says
	 * exited, and only the count says that the OOM killer was at work.
	 */
	if (th_json_num(f->record, "host.cgroup_version") == 2) {
		assert_string_equal(th_json_str(hog, "reason"), "oom");
	} else {
		assert_string_equal(th_json_str(hog, "reason"), "exited");
		assert_true(th_json_num(hog, "exit_code") == 137);
	}
	assert_true(th_json_num(f->record, "phases.agent.oom_kills") == 0);
	assert_true(th_json_num(hog, "pids_limit_hits") == 0);
}

/* Waits, at most ms, until the one run folder in the --out folder has a file rel holding needle. */
static bool wait_run_file(struct fx *f, const char *rel, const char *needle, unsigned ms)
{
	uint64_t end = th_now_ms() + ms;
	do {
		size_t n = 0;
		char *names = th_list_dir(f->out_dir, &n);
		if (names && n == 1) {
			names[strlen(names) - 1] = '\0';
			char path[PATH_MAX];
			th_pathf(path, "%s/%s/%s", f->out_dir, names, rel);
			char *text = slurp(path, true, NULL);
			bool found = text && strstr(text, needle);
			free(text);
			if (found) {
				free(names);
				return true;
			}
		}
		free(names);
		(void)usleep(50 * 1000);
	} while (th_now_ms() < end);
	return false;
}

/*
 * SIGTERM to warden eval: the run in flight stops its sandbox and records INTERRUPTED, the
 * task not yet started is INTERRUPTED without a run folder, nothing is left running, and
 * warden exits 128 + 15. `warden grade` refuses the interrupted run.
 */
static void test_interrupted(void **state)
{
	struct fx *f = *state;
	static unsigned n;
	(void)snprintf(f->markers[0], sizeof(f->markers[0]), "60.%d%u", (int)getpid(), n++);
	char yaml[1024], second[PATH_MAX];
	(void)snprintf(yaml, sizeof(yaml),
		       "schema_version: 1\n"
		       "task_id: interrupted\n"
		       "agent:\n"
		       "  run: [sh, -c, \"echo started; sleep %s; echo late > late.txt\"]\n"
		       "  timeout: 2m\n"
		       "criteria:\n"
		       "  - description: the agent finished\n"
		       "    file_exists: late.txt\n"
		       "teardown:\n"
		       "  - run: [sh, -c, \"echo teardown > teardown.txt\"]\n",
		       f->markers[0]);
	put_task(f, yaml);
	th_pathf(second, "%s/second/task.yaml", f->base);
	th_put_file_mkdirs(second, "schema_version: 1\n"
			 "task_id: never-started\n"
			 "agent: { run: [\"true\"] }\n"
			 "criteria:\n"
			 "  - description: x\n"
			 "    file_absent: x\n");
	struct th_opts o = { .subcommand = "eval", .hard_timeout_ms = EVAL_HARD_TIMEOUT_MS };
	struct th_proc p;
	assert_int_equal(th_spawn(&o, TH_CMD("--out", f->out_dir, f->task, second), &p), 0);
	bool started = wait_run_file(f, "agent.stdout", "started", EVAL_HARD_TIMEOUT_MS / 2);
	assert_int_equal(kill(p.pid, SIGTERM), 0);
	th_out_done(&f->out);
	th_finish(&p, &f->out);
	if (!started) {
		show(f);
		fail_msg("the agent never started");
	}
	expect_code(f, 128 + SIGTERM);
	find_run(f, "interrupted");
	load_record(f);
	check_basics(f, "interrupted", f->task);
	expect_status(f, "INTERRUPTED");
	/* The agent's sandbox was stopped by warden (no report of its own end), then reaped. */
	assert_string_equal(th_json_str(f->record, "phases.agent.reason"), "signaled");
	assert_true(th_json_num(f->record, "phases.agent.signal") == SIGTERM);
	assert_string_equal(th_json_str(f->record, "phases.grade.status"), "skipped");
	assert_string_equal(th_json_str(f->record, "phases.teardown.status"), "skipped");
	assert_true(is_null(f->record, "score"));
	assert_false(run_has(f, "workspace/late.txt"));
	assert_false(run_has(f, "workspace/teardown.txt"));
	expect_no_marked_procs(f);
	/* One line per task, the one never started named by its file, then the totals. */
	char want[2 * PATH_MAX + 96];
	(void)snprintf(want, sizeof(want), "[1/2] interrupted INTERRUPTED - ");
	expect_has(f, f->out.out, want);
	(void)snprintf(want, sizeof(want), " %s\n", f->run);
	expect_has(f, f->out.out, want);
	(void)snprintf(want, sizeof(want), "[2/2] %s INTERRUPTED - 0.0s %s: not run (interrupted)\n",
		       second, second);
	expect_has(f, f->out.out, want);
	expect_has(f, f->out.out, "total 2: INTERRUPTED 2; nothing graded; wall time ");
	expect_has(f, f->out.err, "interrupted by signal 15");

	grade_arg(f, f->run, true, 2);
	expect_has(f, f->out.err, "the run was interrupted");
}

/* What find_judge looks for: a confined judge below warden's process root. */
struct judge_find {
	pid_t root;
	pid_t found;
};

/* True when pid is root or below it. */
static bool descends_from(pid_t pid, pid_t root)
{
	char st[4096], v[32];
	for (unsigned depth = 0; depth < 16 && pid > 1; depth++) {
		if (pid == root)
			return true;
		if (!th_proc_status(pid, st, sizeof(st)) || !th_status_field(st, "PPid", v, sizeof(v)))
			return false;
		pid = (pid_t)strtol(v, NULL, 10);
	}
	return pid == root;
}

/* A judge: every uid and gid 65534, its seccomp filter on (a sandbox's ids are others). */
static void find_judge_fn(pid_t pid, void *ctx)
{
	struct judge_find *j = ctx;
	char st[4096], uid[64], gid[64], sec[16];
	if (j->found || !th_proc_status(pid, st, sizeof(st)) ||
	    !th_status_field(st, "Uid", uid, sizeof(uid)) ||
	    !th_status_field(st, "Gid", gid, sizeof(gid)) ||
	    !th_status_field(st, "Seccomp", sec, sizeof(sec)))
		return;
	if (strcmp(uid, "65534\t65534\t65534\t65534") == 0 &&
	    strcmp(gid, "65534\t65534\t65534\t65534") == 0 && strcmp(sec, "2") == 0 &&
	    descends_from(pid, j->root))
		j->found = pid;
}

/* Waits, at most ms, for a judge below root; returns its pid or 0. */
static pid_t find_judge(pid_t root, unsigned ms)
{
	uint64_t end = th_now_ms() + ms;
	do {
		struct judge_find j = { .root = root, .found = 0 };
		th_each_pid(find_judge_fn, &j);
		if (j.found)
			return j.found;
		(void)usleep(20 * 1000);
	} while (th_now_ms() < end);
	return 0;
}

/*
 * A judge that does not end does not hold `warden eval`: the agent leaves a file that makes
 * the task's regex slow for its judge, the test stops that judge (SIGSTOP: no CPU limit
 * counts a stopped process) and sends SIGINT; warden kills and reaps the judge, abandons the
 * grade, records the run INTERRUPTED and exits 128 + 2, long before the judge's deadline.
 */
static void test_judge_stopped_interrupt(void **state)
{
	struct fx *f = *state;
	put_task(f, "schema_version: 1\n"
		    "task_id: stopped-judge\n"
		    "agent:\n"
		    "  run: [sh, -c, \"head -c 1048576 /dev/zero | tr '[:cntrl:]' a > big.txt\"]\n"
		    "criteria:\n"
		    "  - description: slow for its judge\n"
		    "    file_matches: { path: big.txt, regex: '(a|aa)*c' }\n"
		    "  - description: the file is there\n"
		    "    file_exists: big.txt\n");
	struct th_opts o = { .subcommand = "eval", .hard_timeout_ms = EVAL_HARD_TIMEOUT_MS };
	struct th_proc p;
	assert_int_equal(th_spawn(&o, TH_CMD("--out", f->out_dir, f->task), &p), 0);
	pid_t judge = find_judge(p.pid, EVAL_HARD_TIMEOUT_MS / 2);
	if (judge > 0)
		assert_int_equal(kill(judge, SIGSTOP), 0);
	assert_int_equal(kill(p.pid, SIGINT), 0);
	th_out_done(&f->out);
	th_finish(&p, &f->out);
	if (judge <= 0) {
		show(f);
		fail_msg("no judge was seen at work");
	}
	expect_code(f, 128 + SIGINT);
	find_run(f, "stopped-judge");
	load_record(f);
	expect_status(f, "INTERRUPTED");
	assert_string_equal(th_json_str(f->record, "phases.grade.status"), "skipped");
	assert_true(is_null(f->record, "score"));
	/* Killed and reaped by warden (a stopped process would otherwise linger as one). */
	assert_int_equal(kill(judge, 0), -1);
	assert_int_equal(errno, ESRCH);
}

/* ---- invalid tasks ---- */

/* stderr holds "<task>:LINE:COLUMN: " with LINE and COLUMN from 1; returns them. */
static void expect_diag(const struct fx *f, unsigned *line, unsigned *col)
{
	const char *p = strstr(f->out.err, f->task);
	unsigned l = 0, c = 0;
	char sep = 0;
	if (!p || sscanf(p + strlen(f->task), ":%u:%u:%c", &l, &c, &sep) != 3 || sep != ' ' ||
	    l < 1 || c < 1) {
		show(f);
		fail_msg("expected '%s:LINE:COLUMN: ...' on stderr", f->task);
	}
	*line = l;
	*col = c;
}

/* Nothing was created in the --out folder. */
static void expect_no_run(const struct fx *f)
{
	size_t n = 0;
	char *names = th_list_dir(f->out_dir, &n);
	if (names && n != 0) {
		show(f);
		fail_msg("a run folder was created:\n%s", names);
	}
	free(names);
}

/* Writes yaml as the fixture's task.yaml; `warden eval` refuses it: exit 2, no run folder. */
static void eval_refused(struct fx *f, const char *yaml)
{
	put_task(f, yaml);
	warden(f, "eval", TH_CMD("--out", f->out_dir, f->task), NULL);
	expect_code(f, 2);
	expect_no_run(f);
}

/* A task that is not valid YAML: exit 2, FILE:LINE:COLUMN on stderr, no run folder. */
static void test_invalid_yaml(void **state)
{
	struct fx *f = *state;
	eval_refused(f, "schema_version: 1\n"
		     "task_id: bad-yaml\n"
		     "agent:\n"
		     "  run: [sh, -c, \"true\"\n"
		     "criteria:\n"
		     "  - description: x\n"
		     "    file_exists: x\n");
	unsigned line, col;
	expect_diag(f, &line, &col);
}

/* A task with an unknown key: the diagnostic's place is exact. */
static void test_invalid_key(void **state)
{
	struct fx *f = *state;
	eval_refused(f, "schema_version: 1\n"
		     "task_id: bad-key\n"
		     "agent:\n"
		     "  run: [\"true\"]\n"
		     "surprise: 1\n"
		     "criteria:\n"
		     "  - description: x\n"
		     "    file_exists: x\n");
	unsigned line, col;
	expect_diag(f, &line, &col);
	assert_int_equal(line, 5);
	assert_int_equal(col, 1);
	assert_non_null(strstr(f->out.err, "surprise"));
}

/* A policy that would show the agent its task file is refused before anything runs. */
static void test_exposure_refused(void **state)
{
	struct fx *f = *state;
	eval_refused(f, "schema_version: 1\n"
		     "task_id: exposed\n"
		     "policy:\n"
		     "  filesystem:\n"
		     "    binds:\n"
		     "      - { src: /usr, dst: /usr }\n"
		     "      - { src: /bin, dst: /bin }\n"
		     "      - { src: /lib, dst: /lib }\n"
		     "      - { src: /lib64, dst: /lib64, optional: true }\n"
		     "      - { src: ., dst: /opt/task }\n"
		     "agent: { run: [sh, -c, \"cat /opt/task/task.yaml > leaked.txt\"] }\n"
		     "criteria:\n"
		     "  - description: x\n"
		     "    file_exists: leaked.txt\n");
	if (!strstr(f->out.err, "task file")) {
		show(f);
		fail_msg("expected the refusal to name the task file");
	}
}

/* ---------------------------------------------------------------------------------------- */

/* A test named after its function, without the "test_" prefix. */
#define T(fn) { &#fn[5], fn, fx_setup, fx_teardown, NULL }
#define GATE(name, c) { "gate_" name, test_gate_refuses, fx_setup, fx_teardown, (void *)&(c) }

int main(void)
{
	th_require_privileged();
	(void)th_warden();

	const struct CMUnitTest tests[] = {
		T(test_example_sandbox_marker),
		T(test_example_hidden_answer),
		T(test_example_report),
		T(test_parity),
		T(test_grade_quarantine),
		GATE("no_yes", gate_no_yes),
		GATE("invalid_json", gate_invalid_json),
		GATE("unknown_field", gate_unknown_field),
		GATE("out_of_range", gate_out_of_range),
		GATE("run_id", gate_run_id),
		GATE("stream_file", gate_stream_file),
		GATE("record_symlink", gate_record_symlink),
		GATE("dir_symlink", gate_dir_symlink),
		GATE("workspace_symlink", gate_workspace_symlink),
		GATE("task_changed", gate_task_changed),
		GATE("task_source", gate_task_source),
		GATE("task_fifo", gate_task_fifo),
		GATE("task_device", gate_task_device),
		GATE("task_symlink", gate_task_symlink),
		GATE("task_below_symlink", gate_task_below_symlink),
		GATE("task_foreign", gate_task_foreign),
		GATE("task_world_writable", gate_task_world_writable),
		T(test_grade_no_agent_rerun),
		T(test_grade_edited_before),
		T(test_reap_background),
		T(test_fake_verdict),
		T(test_score_weighted),
		T(test_weight_zero),
		T(test_no_grade),
		T(test_timeout_agent),
		T(test_timeout_setup),
		T(test_timeout_criterion),
		T(test_timeout_teardown),
		T(test_criteria_overlay),
		T(test_criteria_env),
		T(test_static_unsafe_files),
		T(test_run_folder_owner),
		T(test_setid_plant),
		T(test_setid_io_uring),
		T(test_unsettled_set_aside),
		T(test_parallel),
		T(test_json_summary),
		T(test_agent_not_found),
		T(test_agent_not_executable),
		T(test_limit_events),
		T(test_interrupted),
		T(test_judge_stopped_interrupt),
		T(test_invalid_yaml),
		T(test_invalid_key),
		T(test_exposure_refused),
	};
	return _cmocka_run_group_tests("priv-eval", tests, sizeof(tests) / sizeof(tests[0]), NULL,
				       NULL);
}
