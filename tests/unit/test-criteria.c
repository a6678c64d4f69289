/* SPDX-License-Identifier: MIT */
/*
 * criteria (eval/criteria.c): every static check passing and failing over a real
 * workspace under a fresh mkdtemp() folder (escapes, absolute paths, symlinks inside and out,
 * a FIFO, a directory, a file over the cap, NUL bytes), JSON pointers and comparisons, and
 * judging command outcomes. Criteria are parsed from task YAML, as the runner gets them;
 * what the parser refuses (an invalid regex, an escaping path) is patched in by hand.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "cleanup.h"
#include "criteria.h"
#include "task.h"
#include "unit-util.h"

#define TASK_PATH "/t/task.yaml"
#define HEAD	  "schema_version: 1\ntask_id: t1\nagent: {run: [agent]}\ncriteria:\n  - "

DEFINE_CLEANUP(struct pol_task *, pol_task_free)

struct ws {
	char dir[64];
	int fd; /* O_PATH: what the runner hands sup_crit_eval_static */
};

/* ---- fixture ---- */

static int ws_setup(void **state)
{
	struct ws *w = calloc(1, sizeof(*w));
	if (!w)
		return -1;
	memcpy(w->dir, "/tmp/crit-XXXXXX", sizeof("/tmp/crit-XXXXXX"));
	if (!mkdtemp(w->dir)) {
		free(w);
		return -1;
	}
	w->fd = open(w->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->fd < 0) {
		(void)rmdir(w->dir);
		free(w);
		return -1;
	}
	*state = w;
	return 0;
}

static int ws_teardown(void **state)
{
	struct ws *w = *state;
	unit_rm_rf_at(AT_FDCWD, w->dir);
	(void)close(w->fd);
	free(w);
	return 0;
}

/* ---- helpers ---- */

static void put(struct ws *w, const char *name, const void *data, size_t len)
{
	_cleanup_close_ int fd =
		openat(w->fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
}

static void put_str(struct ws *w, const char *name, const char *text)
{
	put(w, name, text, strlen(text));
}

/* A task with one criterion, written as YAML (one flow mapping or block). */
static struct pol_task *task_of(const char *criterion)
{
	_cleanup_free_ char *y = unit_fmt(HEAD "%s\n", criterion);
	struct pol_task *t = NULL;
	struct pol_diag d;
	memset(&d, 0, sizeof(d));
	int r = pol_task_parse(TASK_PATH, y, strlen(y), NULL, NULL, &t, &d);
	unit_assert_parsed(r, &d);
	return t;
}

/* Replaces a string the task owns (so pol_task_free frees the new one). */
static void patch(char **field, const char *value)
{
	free(*field);
	*field = strdup(value);
	assert_non_null(*field);
}

/* details: NUL-terminated inside the buffer, one line of printable ASCII. */
static void assert_details_sane(const struct sup_crit_result *r)
{
	size_t n = strnlen(r->details, sizeof(r->details));
	assert_true(n < sizeof(r->details));
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++)
		assert_true(r->details[i] >= 0x20 && r->details[i] < 0x7f);
}

static void assert_verdict(const struct sup_crit_result *r, bool pass, const char *substr)
{
	if (!r->evaluated || r->error || (r->score_milli == 1000) != pass ||
	    !strstr(r->details, substr))
		print_error(
			"got evaluated=%d error=%d score=%u details '%s'; wanted %s with '%s'\n",
			r->evaluated, r->error, r->score_milli, r->details, pass ? "pass" : "fail",
			substr);
	assert_true(r->evaluated);
	assert_false(r->error);
	assert_int_equal(r->score_milli, pass ? 1000 : 0);
	assert_true(r->passed == pass);
	assert_non_null(strstr(r->details, substr));
	assert_details_sane(r);
}

static void assert_error(const struct sup_crit_result *r, const char *substr)
{
	if (r->evaluated || !r->error || !strstr(r->details, substr))
		print_error("got evaluated=%d error=%d details '%s'; wanted an error with '%s'\n",
			    r->evaluated, r->error, r->details, substr);
	assert_false(r->evaluated);
	assert_true(r->error);
	assert_false(r->passed);
	assert_int_equal(r->score_milli, 0);
	assert_non_null(strstr(r->details, substr));
	assert_details_sane(r);
}

/* Parses the criterion, judges it against the workspace and checks pass/fail and details. */
static void check(struct ws *w, const char *criterion, bool pass, const char *substr)
{
	_cleanup_(pol_task_freep) struct pol_task *t = task_of(criterion);
	struct sup_crit_result r;
	sup_crit_eval_static(w->fd, &t->criteria[0], &r);
	assert_verdict(&r, pass, substr);
}

/* The same with the path replaced by one the parser would refuse. */
static void check_path(struct ws *w, const char *criterion, const char *path, bool pass,
		       const char *substr)
{
	_cleanup_(pol_task_freep) struct pol_task *t = task_of(criterion);
	struct sup_crit_result r;
	patch(&t->criteria[0].path, path);
	sup_crit_eval_static(w->fd, &t->criteria[0], &r);
	assert_verdict(&r, pass, substr);
}

/* ---- file_exists ---- */

static void test_exists(void **state)
{
	struct ws *w = *state;
	put_str(w, "a.txt", "x");
	assert_int_equal(mkdirat(w->fd, "dir", 0755), 0);
	put_str(w, "dir/b.txt", "");
	check(w, "{description: d, file_exists: a.txt}", true, "'a.txt': exists (a regular file)");
	check(w, "{description: d, file_exists: dir}", true, "'dir': exists (a directory)");
	check(w, "{description: d, file_exists: dir/b.txt}", true, "exists");
	check(w, "{description: d, file_exists: missing.txt}", false,
	      "'missing.txt': no such file");
	check(w, "{description: d, file_exists: nodir/x}", false, "no such file");
	check(w, "{description: d, file_exists: a.txt/x}", false, "a parent is not a directory");
}

static void test_exists_escape(void **state)
{
	struct ws *w = *state;
	const char *c = "{description: d, file_exists: x}";
	assert_int_equal(mkdirat(w->fd, "dir", 0755), 0);
	check_path(w, c, "../x", false, "path escapes the workspace");
	check_path(w, c, "dir/../../x", false, "path escapes the workspace");
	check_path(w, c, "..", false, "path escapes the workspace");
	check_path(w, c, "/etc/passwd", false, "path escapes the workspace");
	check_path(w, c, "/", false, "path escapes the workspace");
}

static void test_exists_symlinks(void **state)
{
	struct ws *w = *state;
	put_str(w, "real.txt", "x");
	assert_int_equal(mkdirat(w->fd, "realdir", 0755), 0);
	put_str(w, "realdir/f", "x");
	assert_int_equal(symlinkat("real.txt", w->fd, "inside"), 0);
	assert_int_equal(symlinkat("/etc/passwd", w->fd, "outside"), 0);
	assert_int_equal(symlinkat("realdir", w->fd, "dirlink"), 0);
	assert_int_equal(symlinkat("/etc", w->fd, "etc"), 0);
	assert_int_equal(symlinkat("nowhere", w->fd, "dangling"), 0);
	check(w, "{description: d, file_exists: inside}", false, "path crosses a symlink");
	check(w, "{description: d, file_exists: outside}", false, "path crosses a symlink");
	check(w, "{description: d, file_exists: dangling}", false, "path crosses a symlink");
	check(w, "{description: d, file_exists: dirlink/f}", false, "path crosses a symlink");
	check(w, "{description: d, file_exists: etc/passwd}", false, "path crosses a symlink");
}

static void test_exists_fifo(void **state)
{
	struct ws *w = *state;
	assert_int_equal(mkfifoat(w->fd, "fifo", 0644), 0);
	check(w, "{description: d, file_exists: fifo}", false,
	      "is a FIFO, not a regular file or a directory");
}

/* ---- file_absent ---- */

static void test_absent(void **state)
{
	struct ws *w = *state;
	put_str(w, "a.txt", "x");
	assert_int_equal(mkdirat(w->fd, "dir", 0755), 0);
	assert_int_equal(mkfifoat(w->fd, "fifo", 0644), 0);
	check(w, "{description: d, file_absent: gone.txt}", true, "'gone.txt': absent");
	check(w, "{description: d, file_absent: nodir/gone.txt}", true, "absent");
	check(w, "{description: d, file_absent: a.txt/x}", true, "absent");
	check(w, "{description: d, file_absent: a.txt}", false, "exists (a regular file)");
	check(w, "{description: d, file_absent: dir}", false, "exists (a directory)");
	check(w, "{description: d, file_absent: fifo}", false, "exists (a FIFO)");
}

static void test_absent_symlinks(void **state)
{
	struct ws *w = *state;
	assert_int_equal(symlinkat("nowhere", w->fd, "dangling"), 0);
	assert_int_equal(symlinkat("/etc/passwd", w->fd, "outside"), 0);
	assert_int_equal(mkdirat(w->fd, "realdir", 0755), 0);
	assert_int_equal(symlinkat("realdir", w->fd, "dirlink"), 0);
	/* A symlink at the name is something at the name, even a dangling one. */
	check(w, "{description: d, file_absent: dangling}", false, "exists (a symlink)");
	check(w, "{description: d, file_absent: outside}", false, "exists (a symlink)");
	/* Absence cannot be shown through a symlink among the parents. */
	check(w, "{description: d, file_absent: dirlink/x}", false, "path crosses a symlink");
}

static void test_absent_escape(void **state)
{
	struct ws *w = *state;
	const char *c = "{description: d, file_absent: x}";
	check_path(w, c, "../definitely-not-here", false, "path escapes the workspace");
	check_path(w, c, "/definitely-not-here", false, "path escapes the workspace");
}

/* ---- file_contains ---- */

static void test_contains(void **state)
{
	struct ws *w = *state;
	put_str(w, "src.c", "int main(void) { return 0; }\n// TODO\n");
	check(w, "{description: d, file_contains: {path: src.c, includes: [main, return 0]}}", true,
	      "holds all 2 included strings and none of the 0 excluded");
	check(w,
	      "{description: d, file_contains: {path: src.c, includes: [main], excludes: "
	      "[printf]}}",
	      true, "holds all 1");
	check(w, "{description: d, file_contains: {path: src.c, includes: [main, exit]}}", false,
	      "'src.c': does not contain 'exit'");
	check(w, "{description: d, file_contains: {path: src.c, excludes: [printf, TODO]}}", false,
	      "contains the excluded 'TODO'");
	/* The first missing include is named, and includes are checked before excludes. */
	check(w,
	      "{description: d, file_contains: {path: src.c, includes: [a1, a2], excludes: "
	      "[TODO]}}",
	      false, "does not contain 'a1'");
	check(w, "{description: d, file_contains: {path: missing.c, includes: [x]}}", false,
	      "no such file");
}

static void test_contains_nul(void **state)
{
	struct ws *w = *state;
	static const char data[] = "head\0\0middle\0tail";
	put(w, "bin", data, sizeof(data) - 1);
	check(w, "{description: d, file_contains: {path: bin, includes: [head, middle, tail]}}",
	      true, "holds all 3");
	check(w, "{description: d, file_contains: {path: bin, excludes: [tail]}}", false,
	      "contains the excluded 'tail'");
	put(w, "empty", "", 0);
	check(w, "{description: d, file_contains: {path: empty, includes: [x]}}", false,
	      "does not contain 'x'");
	check(w, "{description: d, file_contains: {path: empty, excludes: [x]}}", true, "none of");
}

static void test_contains_not_regular(void **state)
{
	struct ws *w = *state;
	struct timespec t0, t1;
	assert_int_equal(mkfifoat(w->fd, "fifo", 0644), 0);
	assert_int_equal(mkdirat(w->fd, "dir", 0755), 0);

	/* Opening a FIFO for reading would block until a writer comes: it must not be opened. */
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &t0), 0);
	(void)alarm(10);
	check(w, "{description: d, file_contains: {path: fifo, includes: [x]}}", false,
	      "is a FIFO, not a regular file");
	check(w, "{description: d, file_matches: {path: fifo, regex: x}}", false, "is a FIFO");
	check(w, "{description: d, json_equals: {path: fifo, pointer: '', op: exists}}", false,
	      "is a FIFO");
	(void)alarm(0);
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &t1), 0);
	assert_true(t1.tv_sec - t0.tv_sec < 3);

	check(w, "{description: d, file_contains: {path: dir, includes: [x]}}", false,
	      "is a directory, not a regular file");
}

static void test_contains_symlinks(void **state)
{
	struct ws *w = *state;
	put_str(w, "real.txt", "secret");
	assert_int_equal(symlinkat("real.txt", w->fd, "inside"), 0);
	assert_int_equal(symlinkat("/etc/passwd", w->fd, "outside"), 0);
	check(w, "{description: d, file_contains: {path: inside, includes: [secret]}}", false,
	      "path crosses a symlink");
	check(w, "{description: d, file_contains: {path: outside, includes: [root]}}", false,
	      "path crosses a symlink");
	check_path(w, "{description: d, file_contains: {path: x, includes: [root]}}", "/etc/passwd",
		   false, "path escapes the workspace");
	check_path(w, "{description: d, file_contains: {path: x, includes: [root]}}",
		   "../../../../../../etc/passwd", false, "path escapes the workspace");
}

static void test_contains_size_cap(void **state)
{
	struct ws *w = *state;
	/* Sparse files: nothing is written but their last bytes. */
	{
		_cleanup_close_ int fd = openat(w->fd, "big", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, (off_t)SUP_CRIT_MAX_FILE + 1), 0);
	}
	{
		_cleanup_close_ int fd =
			openat(w->fd, "fits", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, (off_t)SUP_CRIT_MAX_FILE), 0);
		assert_int_equal(pwrite(fd, "needle", 6, (off_t)SUP_CRIT_MAX_FILE - 6), 6);
	}
	check(w, "{description: d, file_contains: {path: big, includes: [x]}}", false,
	      "larger than 16 MiB");
	check(w, "{description: d, file_matches: {path: big, regex: x}}", false,
	      "larger than 16 MiB");
	check(w, "{description: d, json_equals: {path: big, pointer: '', op: exists}}", false,
	      "larger than 16 MiB");
	/* Exactly at the cap is read whole, NULs and all. */
	check(w, "{description: d, file_contains: {path: fits, includes: [needle]}}", true,
	      "holds all 1");
	/* A large file is not a directory either; file_exists does not care about size. */
	check(w, "{description: d, file_exists: big}", true, "exists");
}

/* ---- file_matches ---- */

static void test_matches(void **state)
{
	struct ws *w = *state;
	static const char data[] = "hello\0world\n";
	put(w, "f", data, sizeof(data) - 1);
	check(w, "{description: d, file_matches: {path: f, regex: '^hello'}}", true,
	      "'f': matches regex '^hello'");
	/* Text after a NUL is still searched. */
	check(w, "{description: d, file_matches: {path: f, regex: 'wor+ld'}}", true, "matches");
	check(w, "{description: d, file_matches: {path: f, regex: '^world'}}", false,
	      "does not match regex '^world'");
	check(w, "{description: d, file_matches: {path: f, regex: 'planet'}}", false,
	      "does not match");
	check(w, "{description: d, file_matches: {path: missing, regex: x}}", false,
	      "no such file");
	put(w, "empty", "", 0);
	check(w, "{description: d, file_matches: {path: empty, regex: '^$'}}", true, "matches");
}

static void test_matches_invalid_regex(void **state)
{
	struct ws *w = *state;
	put_str(w, "f", "text");
	_cleanup_(pol_task_freep) struct pol_task *t =
		task_of("{description: d, file_matches: {path: f, regex: x}}");
	struct sup_crit_result r;
	patch(&t->criteria[0].regex, "a(b");
	sup_crit_eval_static(w->fd, &t->criteria[0], &r);
	assert_error(&r, "regex 'a(b' does not compile");
	/* Even when the file is missing: a bad pattern is the task's fault. */
	patch(&t->criteria[0].path, "missing");
	sup_crit_eval_static(w->fd, &t->criteria[0], &r);
	assert_error(&r, "does not compile");
}

/* ---- json_equals ---- */

static const char doc[] =
	"{\n"
	"  \"a\": {\"b/c\": 1, \"m~n\": 2, \"\": 3, \"~1\": 4},\n"
	"  \"arr\": [10, 20, 30],\n"
	"  \"s\": \"text\", \"num_s\": \"3\", \"t\": true, \"f\": false, \"n\": null,\n"
	"  \"x\": 1.5, \"neg\": -2e3, \"Case\": 1, \"dup\": 1, \"dup\": 2,\n"
	"  \"obj\": {}, \"nested\": [[0, {\"k\": [\"deep\"]}]]\n"
	"}\n";

#define J(ptr, op_value) \
	"{description: d, json_equals: {path: doc.json, pointer: \"" ptr "\", " op_value "}}"

static void test_json_pointer(void **state)
{
	struct ws *w = *state;
	put_str(w, "doc.json", doc);
	check(w, J("", "op: exists"), true, "the document is an object with 14 members");
	check(w, J("/a/b~1c", "op: eq, value: 1"), true, "'/a/b~1c' is the number 1");
	check(w, J("/a/m~0n", "op: eq, value: 2"), true, "is the number 2");
	check(w, J("/a/", "op: eq, value: 3"), true, "is the number 3");
	/* ~01 is "~1", not "/": ~0 is decoded first and nothing is decoded twice. */
	check(w, J("/a/~01", "op: eq, value: 4"), true, "is the number 4");
	check(w, J("/a/b", "op: exists"), false, "'/a/b' does not resolve: no member 'b'");
	check(w, J("/nested/0/1/k/0", "op: eq, value: deep"), true, "the string \"deep\"");
	/* Member names are exact and case-sensitive. */
	check(w, J("/Case", "op: exists"), true, "the number 1");
	check(w, J("/case", "op: exists"), false, "no member 'case'");
	/* With duplicate keys the first one counts. */
	check(w, J("/dup", "op: eq, value: 1"), true, "the number 1");
	/* Nothing is below a scalar. */
	check(w, J("/s/0", "op: exists"), false, "the string \"text\" has no member '0'");
	check(w, J("/n/x", "op: exists"), false, "null has no member 'x'");
	check(w, J("/obj/x", "op: exists"), false, "no member 'x'");
}

static void test_json_array_index(void **state)
{
	struct ws *w = *state;
	put_str(w, "doc.json", doc);
	check(w, J("/arr/0", "op: eq, value: 10"), true, "the number 10");
	check(w, J("/arr/2", "op: eq, value: 30"), true, "the number 30");
	check(w, J("/arr/3", "op: exists"), false, "index 3 is out of range (3 items)");
	check(w, J("/arr/01", "op: exists"), false, "'01' is not an array index");
	check(w, J("/arr/00", "op: exists"), false, "is not an array index");
	check(w, J("/arr/-", "op: exists"), false, "'-' is not an array index");
	check(w, J("/arr/-1", "op: exists"), false, "is not an array index");
	check(w, J("/arr/+1", "op: exists"), false, "is not an array index");
	check(w, J("/arr/1x", "op: exists"), false, "is not an array index");
	check(w, J("/arr/", "op: exists"), false, "'' is not an array index");
	check(w, J("/arr/99999999999999999999", "op: exists"), false, "is not an array index");
	check(w, J("/arr/2147483647", "op: exists"), false, "out of range");
	check(w, J("/arr", "op: exists"), true, "an array of 3 items");
}

static void test_json_eq_ne(void **state)
{
	struct ws *w = *state;
	put_str(w, "doc.json", doc);
	check(w, J("/s", "op: eq, value: text"), true, "'/s' is the string \"text\"");
	check(w, J("/s", "op: eq, value: 'Text'"), false,
	      "'/s' is the string \"text\", expected the string \"Text\"");
	check(w, J("/t", "op: eq, value: true"), true, "true");
	check(w, J("/t", "op: eq, value: false"), false, "is true, expected false");
	check(w, J("/f", "op: eq, value: false"), true, "false");
	check(w, J("/n", "op: eq, value: null"), true, "is null");
	check(w, J("/x", "op: eq, value: 1.5"), true, "the number 1.5");
	check(w, J("/x", "op: eq, value: 15e-1"), true, "the number 1.5");
	check(w, J("/neg", "op: eq, value: -2000"), true, "the number -2000");
	/* A type mismatch is not equal. */
	check(w, J("/num_s", "op: eq, value: 3"), false,
	      "is the string \"3\", expected the number 3");
	check(w, J("/a/", "op: eq, value: '3'"), false,
	      "is the number 3, expected the string \"3\"");
	check(w, J("/n", "op: eq, value: false"), false, "is null, expected false");
	check(w, J("/f", "op: eq, value: null"), false, "is false, expected null");
	check(w, J("/t", "op: eq, value: 1"), false, "is true, expected the number 1");
	check(w, J("/arr", "op: eq, value: 10"), false, "an array of 3 items, expected");
	/* ne is the opposite, and a missing value is neither equal nor unequal. */
	check(w, J("/s", "op: ne, value: other"), true, "is the string \"text\", not the string");
	check(w, J("/s", "op: ne, value: text"), false, "expected anything else");
	check(w, J("/num_s", "op: ne, value: 3"), true, "not the number 3");
	check(w, J("/missing", "op: ne, value: 3"), false, "does not resolve");
	check(w, J("/missing", "op: eq, value: 3"), false, "does not resolve");
}

static void test_json_compare(void **state)
{
	struct ws *w = *state;
	put_str(w, "doc.json", doc);
	check(w, J("/x", "op: lt, value: 2"), true, "'/x' is the number 1.5 (< 2)");
	check(w, J("/x", "op: lt, value: 1.5"), false, "is the number 1.5, expected < 1.5");
	check(w, J("/x", "op: le, value: 1.5"), true, "(<= 1.5)");
	check(w, J("/x", "op: le, value: 1.4"), false, "expected <= 1.4");
	check(w, J("/x", "op: gt, value: 1.5"), false, "expected > 1.5");
	check(w, J("/x", "op: gt, value: -1"), true, "(> -1)");
	check(w, J("/x", "op: ge, value: 1.5"), true, "(>= 1.5)");
	check(w, J("/x", "op: ge, value: 1.51"), false, "expected >= 1.51");
	check(w, J("/neg", "op: lt, value: -1999.5"), true, "(< -1999.5)");
	/* lt/le/gt/ge need a number there. */
	check(w, J("/num_s", "op: ge, value: 0"), false,
	      "is the string \"3\", not a number (expected >= 0)");
	check(w, J("/t", "op: gt, value: 0"), false, "is true, not a number");
	check(w, J("/n", "op: le, value: 0"), false, "is null, not a number");
	check(w, J("/arr", "op: lt, value: 5"), false, "not a number");
	check(w, J("/nope", "op: lt, value: 5"), false, "does not resolve");
}

static void test_json_invalid(void **state)
{
	struct ws *w = *state;
	static const char nul_raw[] = "{\"a\": \"x\0y\"}";
	static const char nul_after[] = "{\"a\": 1}\0";
	const char *c = "{description: d, json_equals: {path: j, pointer: /a, op: exists}}";

	put_str(w, "j", "{\"a\": 1");
	check(w, c, false, "'j': not valid JSON (at byte 7: a missing ',' or '}' in an object)");
	put_str(w, "j", "");
	check(w, c, false, "not valid JSON (at byte 0: a missing value)");
	put_str(w, "j", "{\"a\": 1} {}");
	check(w, c, false, "not valid JSON (at byte 9: bytes after the JSON value)");
	put_str(w, "j", "{\"a\": 1}x");
	check(w, c, false, "bytes after the JSON value");
	put(w, "j", nul_after, sizeof(nul_after) - 1);
	check(w, c, false, "at byte 8: bytes after the JSON value");
	put_str(w, "j", "{\"a\": \"x\\u0000y\"}");
	check(w, c, false, "\\u0000 in a string");
	put(w, "j", nul_raw, sizeof(nul_raw) - 1);
	check(w, c, false, "a control character in a string");
	put_str(w, "j", "{\"a\":\x01 1}");
	check(w, c, false, "at byte 5: not a JSON value");
	/* cJSON reads numbers with strtod; the JSON grammar is narrower. */
	put_str(w, "j", "{\"a\": 01}");
	check(w, c, false, "not valid JSON (at byte 7: a missing ',' or '}' in an object)");
	put_str(w, "j", "{\"a\": 1.}");
	check(w, c, false, "a number without digits after '.'");
	put_str(w, "j", "{\"a\": [1.e5]}");
	check(w, c, false, "a number without digits after '.'");
	put_str(w, "j", "{\"a\": -01}");
	check(w, c, false, "a missing ',' or '}' in an object");
	put_str(w, "j", "{\"b\": [-0, 0.5e-3, 1E+2, 10, -7.25E2]}");
	check(w, c, false, "no member 'a'");
	put_str(w, "j", "{\"a\": -0.5e-3}");
	check(w, c, true, "'/a' is the number -0.0005");
	/* JSON whitespace around the value is fine, and so is \u0001 or an escaped backslash. */
	put_str(w, "j", " \t\r\n{\"a\": \"\\\\u0000\", \"b\": \"\\u0001\"} \n\t\r ");
	check(w, c, true, "'/a' is the string \"\\\\u0000\"");
	put_str(w, "j", "[1, 2]");
	check(w, c, false, "'a' is not an array index");
	put_str(w, "j", "42");
	check(w, c, false, "the number 42 has no member 'a'");
}

/*
 * The json_equals reader is the record's (eval/json-strict.c): strings must be UTF-8, escapes
 * of surrogates paired, and nesting and numbers bounded. cJSON alone took all of these.
 */
static void test_json_strict_reader(void **state)
{
	struct ws *w = *state;
	const char *c = "{description: d, json_equals: {path: j, pointer: /a, op: exists}}";

	put_str(w, "j", "{\"a\": \"\xed\xa0\x80\"}"); /* a surrogate spelled in UTF-8 */
	check(w, c, false, "at byte 7: invalid UTF-8");
	put_str(w, "j", "{\"a\": \"\xc0\xaf\"}"); /* an overlong '/' */
	check(w, c, false, "invalid UTF-8");
	put_str(w, "j", "{\"a\": \"\xf4\x90\x80\x80\"}"); /* above U+10FFFF */
	check(w, c, false, "invalid UTF-8");
	put_str(w, "j", "{\"a\": \"\\ud800\"}");
	check(w, c, false, "an unpaired surrogate in a string");
	put_str(w, "j", "{\"a\": \"\xc3\xa9\\ud83d\\ude00\"}");
	check(w, c, true, "'/a' is the string");
	put_str(w, "j", "\xef\xbb\xbf{\"a\": 1}"); /* a byte-order mark */
	check(w, c, false, "at byte 0: not a JSON value");

	/* Nesting: SUP_CRIT_JSON_MAX_DEPTH levels are read, one more is not. */
	size_t depth = SUP_CRIT_JSON_MAX_DEPTH;
	char *nested = malloc(2 * depth + 16);
	assert_non_null(nested);
	for (int more = 0; more < 2; more++) {
		size_t n = depth + (size_t)more - 1, o = 0;
		memcpy(nested + o, "{\"a\":", 5);
		o += 5;
		for (size_t i = 0; i < n; i++)
			nested[o++] = '[';
		nested[o++] = '1';
		for (size_t i = 0; i < n; i++)
			nested[o++] = ']';
		nested[o++] = '}';
		put(w, "j", nested, o);
		if (more)
			check(w, c, false, "nesting deeper than 512 levels");
		else
			check(w, c, true, "'/a' is an array of 1 items");
	}
	free(nested);

	/* Numbers: SUP_CRIT_JSON_MAX_NUMBER characters are read, one more is not. */
	char *num = malloc(SUP_CRIT_JSON_MAX_NUMBER + 16);
	assert_non_null(num);
	for (int more = 0; more < 2; more++) {
		size_t o = 0;
		memcpy(num, "{\"a\":1", 6);
		o = 6;
		while (o - 5 < SUP_CRIT_JSON_MAX_NUMBER + (size_t)more)
			num[o++] = '0';
		num[o++] = '}';
		put(w, "j", num, o);
		if (more)
			check(w, c, false, "a number longer than 1024 characters");
		else
			check(w, c, true, "'/a' is the number");
	}
	free(num);
}

/* A build with AddressSanitizer: its runtime's own mappings count against RLIMIT_DATA. */
#if defined(__SANITIZE_ADDRESS__)
#define CRIT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CRIT_TEST_ASAN 1
#endif
#endif
#ifndef CRIT_TEST_ASAN
#define CRIT_TEST_ASAN 0
#endif

/* The heap the process below may have: far less than a tree of the document needs. */
#define TREE_TEST_DATA_BYTES (48u << 20)

/*
 * The judge's heap is bounded (RLIMIT_DATA), and a document's tree is as large as its author
 * made it: a document whose tree does not fit scores 0 (what the agent wrote counts against
 * it), never an error of the run. Run in a child process whose RLIMIT_DATA is far below what
 * a tree of 1.4 million empty arrays needs (about 4 MiB of text).
 */
static void test_json_tree_too_large(void **state)
{
	(void)state;
	if (CRIT_TEST_ASAN)
		skip();
	_cleanup_(pol_task_freep) struct pol_task *t =
		task_of("{description: d, json_equals: {path: j, pointer: /0, op: exists}}");
	size_t n = 1400000, len = 0;
	_cleanup_free_ char *text = malloc(3 * n + 2);
	assert_non_null(text);
	text[len++] = '[';
	for (size_t i = 0; i < n; i++) {
		memcpy(text + len, i ? ",[]" : "[]", i ? 3 : 2);
		len += i ? 3 : 2;
	}
	text[len++] = ']';
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { TREE_TEST_DATA_BYTES, TREE_TEST_DATA_BYTES };
		if (setrlimit(RLIMIT_DATA, &rl) < 0)
			_exit(10);
		struct sup_crit_result r;
		sup_crit_json_eval(&t->criteria[0], text, len, &r);
		if (!r.evaluated || r.error || r.score_milli != 0 || r.passed)
			_exit(11);
		_exit(strstr(r.details, "does not fit in the judge's memory") ? 0 : 12);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("the bounded child: status 0x%x (10 setrlimit, 11 not a score of 0, 12 "
			 "another reason)", status);
	/* The control: with the memory it needs, the same document resolves. */
	struct sup_crit_result r;
	sup_crit_json_eval(&t->criteria[0], text, len, &r);
	assert_verdict(&r, true, "'/0' is an array of 0 items");
}

static void test_json_details_escaped(void **state)
{
	struct ws *w = *state;
	char big[600];
	memset(big, 'z', sizeof(big));
	static const char head[] = "{\"s\": \"\\u0001\\n\\t\\\"'\xc3\xa9";
	memcpy(big, head, sizeof(head) - 1);
	memcpy(big + sizeof(big) - 3, "\"}", 3);
	put(w, "j.json", big, sizeof(big) - 1);
	_cleanup_(pol_task_freep) struct pol_task *t = task_of(
		"{description: d, json_equals: {path: j.json, pointer: /s, op: eq, value: z}}");
	struct sup_crit_result r;
	sup_crit_eval_static(w->fd, &t->criteria[0], &r);
	assert_verdict(&r, false, "'/s' is the string \"\\x01\\n\\t\\\"'\\xc3\\xa9zzz");
	assert_non_null(strstr(r.details, "zzz\"..., expected the string \"z\""));
}

static void test_json_bad_config(void **state)
{
	struct ws *w = *state;
	put_str(w, "j", "{\"a\": 1}");
	_cleanup_(pol_task_freep) struct pol_task *t =
		task_of("{description: d, json_equals: {path: j, pointer: /a, op: eq, value: 1}}");
	struct pol_task_criterion *c = &t->criteria[0];
	struct sup_crit_result r;

	sup_crit_eval_static(w->fd, c, &r);
	assert_verdict(&r, true, "'/a' is the number 1");
	patch(&c->pointer, "a");
	sup_crit_eval_static(w->fd, c, &r);
	assert_error(&r, "not an RFC 6901 JSON pointer");
	patch(&c->pointer, "/~2");
	sup_crit_eval_static(w->fd, c, &r);
	assert_error(&r, "not an RFC 6901 JSON pointer");
	patch(&c->pointer, "/a~");
	sup_crit_eval_static(w->fd, c, &r);
	assert_error(&r, "not an RFC 6901 JSON pointer");
	patch(&c->pointer, "/a");
	c->op = POL_TASK_JSON_LT;
	c->value_type = POL_TASK_JSON_STRING;
	patch(&c->value_text, "1");
	sup_crit_eval_static(w->fd, c, &r);
	assert_error(&r, "needs a number");

	/* The in-memory entry point judges the same way, without the path. */
	c->value_type = POL_TASK_JSON_NUMBER;
	c->value_number = 2;
	sup_crit_json_eval(c, "{\"a\": 1}", 8, &r);
	assert_verdict(&r, true, "'/a' is the number 1 (< 2)");
	sup_crit_json_eval(c, "{\"a\": 1}", 7, &r);
	assert_verdict(&r, false, "not valid JSON");
	sup_crit_json_eval(c, NULL, 0, &r);
	assert_verdict(&r, false, "not valid JSON");
}

/* ---- thresholds and misuse ---- */

static void test_threshold(void **state)
{
	struct ws *w = *state;
	_cleanup_(pol_task_freep) struct pol_task *t =
		task_of("{description: d, pass_threshold: 0, file_exists: missing}");
	struct sup_crit_result r;
	sup_crit_eval_static(w->fd, &t->criteria[0], &r);
	assert_true(r.evaluated);
	assert_int_equal(r.score_milli, 0);
	assert_true(r.passed); /* 0 >= 0 */
	assert_non_null(strstr(r.details, "no such file"));
}

static void test_misuse(void **state)
{
	struct ws *w = *state;
	_cleanup_(pol_task_freep) struct pol_task *cmd =
		task_of("{description: d, command: {run: [x]}}");
	_cleanup_(pol_task_freep) struct pol_task *st = task_of("{description: d, file_exists: x}");
	struct sup_crit_outcome o = {.started = true};
	struct sup_crit_result r;

	sup_crit_eval_static(w->fd, &cmd->criteria[0], &r);
	assert_error(&r, "not a static check");
	sup_crit_judge_command(&st->criteria[0], &o, &r);
	assert_error(&r, "not a command criterion");
	sup_crit_eval_static(-1, &st->criteria[0], &r);
	assert_error(&r, "Bad file descriptor");
}

/* Without openat2 nothing is read at all: fail closed. Needs seccomp to take openat2 away. */
static void test_no_openat2(void **state)
{
	struct ws *w = *state;
	put_str(w, "a.txt", "x");
	_cleanup_(pol_task_freep) struct pol_task *t =
		task_of("{description: d, file_exists: a.txt}");
	_cleanup_(pol_task_freep) struct pol_task *t2 =
		task_of("{description: d, file_absent: a.txt}");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
		if (!ctx ||
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0) < 0 ||
		    seccomp_load(ctx) < 0)
			_exit(77);
		struct sup_crit_result r, r2;
		sup_crit_eval_static(w->fd, &t->criteria[0], &r);
		sup_crit_eval_static(w->fd, &t2->criteria[0], &r2);
		bool ok = r.error && !r.evaluated && !r.passed && strstr(r.details, "openat2") &&
			  strstr(r.details, "5.6") && r2.error && !r2.evaluated && !r2.passed;
		_exit(ok ? 0 : 1);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- command ---- */

static void judge(const char *criterion, const struct sup_crit_outcome *o,
		  struct sup_crit_result *r)
{
	_cleanup_(pol_task_freep) struct pol_task *t = task_of(criterion);
	sup_crit_judge_command(&t->criteria[0], o, r);
	assert_details_sane(r);
}

#define CMD(extra) "{description: d, command: {run: [x]" extra "}}"

static void test_command_exit(void **state)
{
	struct sup_crit_result r;
	(void)state;

	judge(CMD(""), &(struct sup_crit_outcome){.started = true}, &r);
	assert_verdict(&r, true, "exit 0");
	judge(CMD(""), &(struct sup_crit_outcome){.started = true, .exit_code = 3}, &r);
	assert_verdict(&r, false, "exit 3, expected 0");
	judge(CMD(", expect_exit: 3"), &(struct sup_crit_outcome){.started = true, .exit_code = 3},
	      &r);
	assert_verdict(&r, true, "exit 3");
	judge(CMD(", expect_exit: 3"), &(struct sup_crit_outcome){.started = true}, &r);
	assert_verdict(&r, false, "exit 0, expected 3");
	judge(CMD(", timeout: 2s"), &(struct sup_crit_outcome){.started = true, .timed_out = true},
	      &r);
	assert_verdict(&r, false, "timed out after 2000 ms");
	judge(CMD(""),
	      &(struct sup_crit_outcome){.started = true, .signaled = true, .signal = SIGKILL}, &r);
	assert_verdict(&r, false, "killed by signal 9 (SIGKILL)");
	/* A timeout wins over the kill that ended it. */
	judge(CMD(""),
	      &(struct sup_crit_outcome){
		      .started = true, .timed_out = true, .signaled = true, .signal = SIGKILL},
	      &r);
	assert_verdict(&r, false, "timed out");
	judge(CMD(""), &(struct sup_crit_outcome){.started = true, .exit_code = 256}, &r);
	assert_verdict(&r, false, "exit 256, expected 0");
}

static void test_command_not_started(void **state)
{
	struct sup_crit_result r;
	(void)state;
	judge(CMD(""),
	      &(struct sup_crit_outcome){.started = false, .error = "no user\nnamespaces\x1b[31m"},
	      &r);
	assert_error(&r, "the sandbox could not be built: 'no user\\nnamespaces\\x1b[31m'");
	judge(CMD(""), &(struct sup_crit_outcome){.started = false}, &r);
	assert_error(&r, "could not be built");
}

static void test_command_stdout_exact(void **state)
{
	struct sup_crit_result r;
	(void)state;
	judge(CMD(", stdout: {exact: \"ok\\n\"}"),
	      &(struct sup_crit_outcome){.started = true, .out = "ok\n", .out_len = 3}, &r);
	assert_verdict(&r, true, "stdout is exactly 'ok\\n'");
	judge(CMD(", stdout: {exact: \"ok\\n\"}"),
	      &(struct sup_crit_outcome){.started = true, .out = "ok", .out_len = 2}, &r);
	assert_verdict(&r, false, "stdout is not exactly 'ok\\n': got 'ok'");
	judge(CMD(", stdout: {exact: \"ok\"}"),
	      &(struct sup_crit_outcome){.started = true, .out = "ok\0", .out_len = 3}, &r);
	assert_verdict(&r, false, "got 'ok\\x00'");
	/* A truncated capture is never exactly anything. */
	judge(CMD(", stdout: {exact: ok}"),
	      &(struct sup_crit_outcome){
		      .started = true, .out = "ok", .out_len = 2, .out_truncated = true},
	      &r);
	assert_verdict(&r, false, "stdout was truncated");
	judge(CMD(", stdout: {exact: \"\"}"), &(struct sup_crit_outcome){.started = true}, &r);
	assert_verdict(&r, true, "exactly ''");
	judge(CMD(", stdout: {exact: \"\"}"),
	      &(struct sup_crit_outcome){.started = true, .out = "x", .out_len = 1}, &r);
	assert_verdict(&r, false, "got 'x'");
	/* The exit code is checked first. */
	judge(CMD(", stdout: {exact: ok}"),
	      &(struct sup_crit_outcome){
		      .started = true, .exit_code = 1, .out = "ok", .out_len = 2},
	      &r);
	assert_verdict(&r, false, "exit 1, expected 0");
}

static void test_command_stdout_contains(void **state)
{
	struct sup_crit_result r;
	static const char out[] = "junk\0all tests passed\n";
	(void)state;
	judge(CMD(", stdout: {contains: all tests passed}"),
	      &(struct sup_crit_outcome){.started = true, .out = out, .out_len = sizeof(out) - 1},
	      &r);
	assert_verdict(&r, true, "stdout contains 'all tests passed'");
	judge(CMD(", stdout: {contains: x}"),
	      &(struct sup_crit_outcome){.started = true, .out = out, .out_len = sizeof(out) - 1},
	      &r);
	assert_verdict(&r, false, "stdout does not contain 'x'");
	judge(CMD(", stdout: {contains: x}"),
	      &(struct sup_crit_outcome){
		      .started = true, .out = "abc", .out_len = 3, .out_truncated = true},
	      &r);
	assert_verdict(&r, false, "stdout (truncated) does not contain 'x'");
	/* What was captured is enough to show it contains the text. */
	judge(CMD(", stdout: {contains: b}"),
	      &(struct sup_crit_outcome){
		      .started = true, .out = "abc", .out_len = 3, .out_truncated = true},
	      &r);
	assert_verdict(&r, true, "contains 'b'");
}

static void test_command_stdout_regex(void **state)
{
	struct sup_crit_result r;
	static const char out[] = "a\0b";
	(void)state;
	judge(CMD(", stdout: {regex: '^[0-9]+$'}"),
	      &(struct sup_crit_outcome){.started = true, .out = "123", .out_len = 3}, &r);
	assert_verdict(&r, true, "stdout matches '^[0-9]+$'");
	judge(CMD(", stdout: {regex: '^[0-9]+$'}"),
	      &(struct sup_crit_outcome){.started = true, .out = "12a", .out_len = 3}, &r);
	assert_verdict(&r, false, "stdout does not match '^[0-9]+$'");
	/* The end of a truncated capture is not the end of stdout. */
	judge(CMD(", stdout: {regex: '^[0-9]+$'}"),
	      &(struct sup_crit_outcome){
		      .started = true, .out = "123", .out_len = 3, .out_truncated = true},
	      &r);
	assert_verdict(&r, false, "stdout (truncated) does not match");
	judge(CMD(", stdout: {regex: '^[0-9]+'}"),
	      &(struct sup_crit_outcome){
		      .started = true, .out = "123", .out_len = 3, .out_truncated = true},
	      &r);
	assert_verdict(&r, true, "matches");
	/* NULs do not cut the text; the text is bounded by out_len, not by a NUL. */
	judge(CMD(", stdout: {regex: b}"),
	      &(struct sup_crit_outcome){.started = true, .out = out, .out_len = sizeof(out) - 1},
	      &r);
	assert_verdict(&r, true, "matches 'b'");
	judge(CMD(", stdout: {regex: c}"),
	      &(struct sup_crit_outcome){.started = true, .out = "abc", .out_len = 2}, &r);
	assert_verdict(&r, false, "does not match 'c'");
}

static void test_command_invalid_regex(void **state)
{
	_cleanup_(pol_task_freep) struct pol_task *t = task_of(CMD(", stdout: {regex: x}"));
	struct sup_crit_result r;
	(void)state;
	patch(&t->criteria[0].command.stdout_text, "(");
	sup_crit_judge_command(
		&t->criteria[0],
		&(struct sup_crit_outcome){.started = true, .out = "x", .out_len = 1}, &r);
	assert_error(&r, "stdout regex '(' does not compile");
	/* However the command ended. */
	sup_crit_judge_command(&t->criteria[0],
			       &(struct sup_crit_outcome){.started = true, .timed_out = true}, &r);
	assert_error(&r, "does not compile");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, ws_setup, ws_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_exists),
		T(test_exists_escape),
		T(test_exists_symlinks),
		T(test_exists_fifo),
		T(test_absent),
		T(test_absent_symlinks),
		T(test_absent_escape),
		T(test_contains),
		T(test_contains_nul),
		T(test_contains_not_regular),
		T(test_contains_symlinks),
		T(test_contains_size_cap),
		T(test_matches),
		T(test_matches_invalid_regex),
		T(test_json_pointer),
		T(test_json_array_index),
		T(test_json_eq_ne),
		T(test_json_compare),
		T(test_json_invalid),
		T(test_json_strict_reader),
		T(test_json_tree_too_large),
		T(test_json_details_escaped),
		T(test_json_bad_config),
		T(test_threshold),
		T(test_misuse),
		T(test_no_openat2),
		cmocka_unit_test(test_command_exit),
		cmocka_unit_test(test_command_not_started),
		cmocka_unit_test(test_command_stdout_exact),
		cmocka_unit_test(test_command_stdout_contains),
		cmocka_unit_test(test_command_stdout_regex),
		cmocka_unit_test(test_command_invalid_regex),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
