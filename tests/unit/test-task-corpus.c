/* SPDX-License-Identifier: MIT */
/*
 * The bad-task corpus: tests/task-bad/NAME.yaml holds a broken task file and NAME.expected the
 * exact one-line diagnostic "FILE:LINE:COLUMN: message" the parser must give for it, with FILE
 * written as NAME.yaml (or, for an error inside a policy file the task names, as that file's
 * path relative to the corpus directory).
 *
 * NAME.yaml is parsed with pol_task_parse("/task-bad/NAME.yaml", ...) and a loader that maps
 * /task-bad/ onto the corpus directory (include/ holds the policy files the cases name); the
 * /task-bad/ prefix is dropped from the diagnostic's file. Files in subdirectories are not
 * cases themselves.
 *
 * The directory is TASK_BAD_DIR, from the environment or else from the build (-D). Each case
 * is its own cmocka test; one more test fails when there are fewer than MIN_CASES cases, or a
 * .yaml without its .expected (or the reverse).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "policy.h"
#include "task.h"

#ifndef TASK_BAD_DIR
#error "build with -DTASK_BAD_DIR=\"/path/to/tests/task-bad\""
#endif

#define MIN_CASES 40
#define MAX_CASES 1024
#define VIRTUAL_ROOT "/task-bad/"
#define MAX_FILE_BYTES (TASK_MAX_INPUT_BYTES + 1) /* one more, so that -E2BIG stays reachable */

static const char *corpus_dir(void)
{
	const char *d = secure_getenv("TASK_BAD_DIR");
	return d && d[0] ? d : TASK_BAD_DIR;
}

/* Reads at most max bytes of dir/name into a new NUL-terminated buffer. */
static int read_file(const char *dir, const char *name, size_t max, char **out, size_t *out_len)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	size_t got = 0;
	struct stat st;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	buf = malloc(max + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + got, max + 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
		if (got > max)
			return -E2BIG;
	}
	buf[got] = '\0';
	*out = TAKE_PTR(buf);
	*out_len = got;
	return 0;
}

/* The loader: /task-bad/REL is REL in the corpus directory; nothing else exists. */
static int corpus_load(void *ctx, const char *abs_path, char **out_buf, size_t *out_len)
{
	const char *dir = ctx;

	if (strncmp(abs_path, VIRTUAL_ROOT, strlen(VIRTUAL_ROOT)) != 0)
		return -ENOENT;
	return read_file(dir, abs_path + strlen(VIRTUAL_ROOT), POL_MAX_INPUT_BYTES, out_buf,
			 out_len);
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/*
 * Parses case name (NAME.yaml) from dir and formats its diagnostic into out. Fails the test
 * when the task parses, or the failure breaks the parser's contract.
 */
static void corpus_diag(const char *dir, const char *name, char *out, size_t size)
{
	struct pol_task *const untouched = (struct pol_task *)(uintptr_t)0x5a5a5a5a;
	struct pol_task *t = untouched;
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ char *vpath = NULL;
	struct pol_diag d;
	const char *file;
	size_t len = 0;
	int r;

	assert_int_equal(read_file(dir, name, MAX_FILE_BYTES, &text, &len), 0);
	memset(&d, 0, sizeof(d));
	assert_true(asprintf(&vpath, VIRTUAL_ROOT "%s", name) >= 0);
	r = pol_task_parse(vpath, text, len, corpus_load, (void *)dir, &t, &d);
	if (r == 0) {
		pol_task_free(t);
		fail_msg("%s parsed, but it is in the bad corpus", name);
	}
	assert_true(r == -EINVAL || r == -E2BIG);
	assert_ptr_equal(t, untouched);
	assert_null(strchr(d.message, '\n'));

	file = d.file;
	if (strncmp(file, VIRTUAL_ROOT, strlen(VIRTUAL_ROOT)) == 0)
		file += strlen(VIRTUAL_ROOT);
	(void)snprintf(out, size, "%s:%u:%u: %s", file, d.line, d.column, d.message);
}

static void test_case(void **state)
{
	const char *name = *state;
	const char *dir = corpus_dir();
	_cleanup_free_ char *expected_name = NULL;
	_cleanup_free_ char *expected = NULL;
	char got[2048]; /* file, two numbers and message always fit */
	size_t len = 0;

	corpus_diag(dir, name, got, sizeof(got));
	assert_true(asprintf(&expected_name, "%.*s.expected", (int)(strlen(name) - 5), name) >= 0);
	assert_int_equal(read_file(dir, expected_name, 4096, &expected, &len), 0);
	/* one line: drop the final newline, refuse anything else */
	if (len > 0 && expected[len - 1] == '\n')
		expected[--len] = '\0';
	assert_null(strchr(expected, '\n'));
	if (strcmp(got, expected) != 0)
		print_error("%s\n  got:      %s\n  expected: %s\n", name, got, expected);
	assert_string_equal(got, expected);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct listing {
	char *names[MAX_CASES]; /* every regular file in the directory, sorted */
	size_t n;
};

static void listing_done(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	l->n = 0;
}

static int list_dir(const char *dir, struct listing *out)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	out->n = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (out->n == MAX_CASES) {
			(void)closedir(d);
			return -E2BIG;
		}
		out->names[out->n] = strdup(de->d_name);
		if (!out->names[out->n]) {
			(void)closedir(d);
			return -ENOMEM;
		}
		out->n++;
	}
	(void)closedir(d);
	qsort(out->names, out->n, sizeof(out->names[0]), cmp_names);
	return 0;
}

static bool listed(const struct listing *l, const char *name)
{
	return bsearch(&name, l->names, l->n, sizeof(l->names[0]), cmp_names) != NULL;
}

/* Every case has its answer and every answer its case, and there are enough of them. */
static void test_corpus_complete(void **state)
{
	const struct listing *l = *state;
	size_t cases = 0;

	for (size_t i = 0; i < l->n; i++) {
		const char *n = l->names[i];
		_cleanup_free_ char *pair = NULL;
		size_t stem;

		if (has_suffix(n, ".yaml")) {
			stem = strlen(n) - 5;
			assert_true(asprintf(&pair, "%.*s.expected", (int)stem, n) >= 0);
			if (!listed(l, pair))
				fail_msg("%s has no %s", n, pair);
			cases++;
		} else if (has_suffix(n, ".expected")) {
			stem = strlen(n) - 9;
			assert_true(asprintf(&pair, "%.*s.yaml", (int)stem, n) >= 0);
			if (!listed(l, pair))
				fail_msg("%s has no %s", n, pair);
		} else {
			fail_msg("%s is neither NAME.yaml nor NAME.expected", n);
		}
	}
	if (cases < MIN_CASES)
		fail_msg("only %zu cases in %s (expected at least %u)", cases, corpus_dir(),
			 MIN_CASES);
}

int main(void)
{
	static struct listing l;
	static struct CMUnitTest tests[MAX_CASES + 1];
	size_t n = 0;
	int r;

	r = list_dir(corpus_dir(), &l);
	if (r < 0) {
		fprintf(stderr, "test-task-corpus: cannot list %s: %s\n", corpus_dir(), strerror(-r));
		return 1;
	}
	tests[n++] = (struct CMUnitTest){ .name = "corpus_complete",
					  .test_func = test_corpus_complete,
					  .initial_state = &l };
	for (size_t i = 0; i < l.n; i++)
		if (has_suffix(l.names[i], ".yaml"))
			tests[n++] = (struct CMUnitTest){ .name = l.names[i],
							  .test_func = test_case,
							  .initial_state = l.names[i] };
	r = _cmocka_run_group_tests("task-bad", tests, n, NULL, NULL);
	listing_done(&l);
	return r;
}
