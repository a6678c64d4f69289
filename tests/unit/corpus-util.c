/* SPDX-License-Identifier: MIT */
/*
 * The bad-input corpus runner: directory walk, bounded file reads, the virtual-root loader,
 * one cmocka test per case and the completeness check. See corpus-util.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include "corpus-util.h"
#include "io-util.h"
#include "policy.h"

#define MAX_CASES 1024

struct listing {
	char *names[MAX_CASES]; /* every regular file in the directory, sorted */
	size_t n;
};

struct run;

/* The state of one case's test. */
struct run_case {
	const struct run *run;
	const char *name; /* NAME.yaml, borrowed from run->l */
};

/* Everything corpus_run() hands to the tests as their state. */
struct run {
	const struct corpus *c;
	const char *dir; /* the directory, from c->dir_env or c->dir */
	struct listing l;
	struct run_case cases[MAX_CASES];
	struct CMUnitTest tests[MAX_CASES + 1];
};

static const char *corpus_dir(const struct corpus *c)
{
	const char *d = secure_getenv(c->dir_env);
	return d && d[0] ? d : c->dir;
}

/* Reads at most max bytes of dir/name into a new NUL-terminated buffer. */
static int read_file(const char *dir, const char *name, size_t max, char **out, size_t *out_len)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	int n;

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
	n = io_read_fd(fd, buf, max + 1);
	if (n < 0)
		return n == -EFBIG ? -E2BIG : n; /* the parsers' word for "too big" */
	*out = TAKE_PTR(buf);
	*out_len = (size_t)n;
	return 0;
}

/*
 * The loader; ctx is the run. ROOT/REL, ROOT being the virtual root, is REL in the corpus
 * directory; nothing else exists.
 */
static int corpus_load(void *ctx, const char *abs_path, char **out_buf, size_t *out_len)
{
	const struct run *run = ctx;
	const char *root = run->c->virtual_root;

	if (strncmp(abs_path, root, strlen(root)) != 0)
		return -ENOENT;
	return read_file(run->dir, abs_path + strlen(root), POL_MAX_INPUT_BYTES, out_buf, out_len);
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/*
 * Parses case name (NAME.yaml) from the corpus directory and formats its diagnostic into out.
 * Fails the test when the input parses, or the failure breaks the parser's contract.
 */
static void corpus_diag(const struct run *run, const char *name, char *out, size_t size)
{
	const char *root = run->c->virtual_root;
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ char *vpath = NULL;
	bool produced = true;
	struct pol_diag d;
	const char *file;
	size_t len = 0;
	int r;

	assert_int_equal(read_file(run->dir, name, run->c->max_bytes, &text, &len), 0);
	memset(&d, 0, sizeof(d));
	assert_true(asprintf(&vpath, "%s%s", root, name) >= 0);
	r = run->c->parse(name, vpath, text, len, corpus_load, (void *)run, &d, &produced);
	if (r == 0)
		fail_msg("%s parsed, but it is in the bad corpus", name);
	assert_true(r == -EINVAL || r == -E2BIG);
	if (produced)
		fail_msg("%s: the parser failed with %d but stored a result", name, r);
	assert_null(strchr(d.message, '\n'));

	file = d.file;
	if (strncmp(file, root, strlen(root)) == 0)
		file += strlen(root);
	(void)snprintf(out, size, "%s:%u:%u: %s", file, d.line, d.column, d.message);
}

static void test_case(void **state)
{
	const struct run_case *rc = *state;
	const char *name = rc->name;
	_cleanup_free_ char *expected_name = NULL;
	_cleanup_free_ char *expected = NULL;
	char got[2048]; /* file, two numbers and message always fit */
	size_t len = 0;

	corpus_diag(rc->run, name, got, sizeof(got));
	assert_true(asprintf(&expected_name, "%.*s.expected", (int)(strlen(name) - 5), name) >= 0);
	assert_int_equal(read_file(rc->run->dir, expected_name, 4096, &expected, &len), 0);
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
	const struct run *run = *state;
	const struct listing *l = &run->l;
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
	if (cases < run->c->min_cases)
		fail_msg("only %zu cases in %s (expected at least %zu)", cases, run->dir,
			 run->c->min_cases);
}

int corpus_run(const struct corpus *c)
{
	_cleanup_free_ struct run *run = calloc(1, sizeof(*run));
	size_t n = 0;
	int r;

	if (!run) {
		fprintf(stderr, "%s: %s\n", program_invocation_short_name, strerror(ENOMEM));
		return 1;
	}
	run->c = c;
	run->dir = corpus_dir(c);
	r = list_dir(run->dir, &run->l);
	if (r < 0) {
		fprintf(stderr, "%s: cannot list %s: %s\n", program_invocation_short_name, run->dir,
			strerror(-r));
		listing_done(&run->l);
		return 1;
	}
	run->tests[n++] = (struct CMUnitTest){ .name = "corpus_complete",
					       .test_func = test_corpus_complete,
					       .initial_state = run };
	for (size_t i = 0; i < run->l.n; i++) {
		if (!has_suffix(run->l.names[i], ".yaml"))
			continue;
		run->cases[i] = (struct run_case){ .run = run, .name = run->l.names[i] };
		run->tests[n++] = (struct CMUnitTest){ .name = run->l.names[i],
						       .test_func = test_case,
						       .initial_state = &run->cases[i] };
	}
	r = _cmocka_run_group_tests(c->group, run->tests, n, NULL, NULL);
	listing_done(&run->l);
	return r;
}
