/* SPDX-License-Identifier: MIT */
/*
 * filesystem.hide: the pattern matcher, and the expansion over a real temporary directory.
 */
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

#include "hide.h"

static void test_literal(void **state)
{
	(void)state;
	assert_true(sup_hide_match(".env", ".env"));
	assert_false(sup_hide_match(".env", "a/.env"));
	assert_false(sup_hide_match(".env", ".env.local"));
	assert_false(sup_hide_match("a/b", "a"));
	assert_false(sup_hide_match("a", "a/b"));
}

static void test_star_and_class(void **state)
{
	(void)state;
	assert_true(sup_hide_match("secrets/*.pem", "secrets/k.pem"));
	assert_true(sup_hide_match("secrets/*.pem", "secrets/.hidden.pem")); /* * spans a dot */
	assert_false(sup_hide_match("secrets/*.pem", "secrets/sub/k.pem")); /* not across / */
	assert_true(sup_hide_match("id_[rd]sa", "id_rsa"));
	assert_false(sup_hide_match("id_[rd]sa", "id_ecdsa"));
	assert_true(sup_hide_match("?.key", "a.key"));
}

static void test_double_star(void **state)
{
	(void)state;
	assert_true(sup_hide_match("**/.env", ".env"));         /* zero components */
	assert_true(sup_hide_match("**/.env", "a/.env"));
	assert_true(sup_hide_match("**/.env", "a/b/c/.env"));
	assert_false(sup_hide_match("**/.env", "a/b/c/.envrc"));
	assert_true(sup_hide_match("a/**/k", "a/k"));
	assert_true(sup_hide_match("a/**/k", "a/x/y/k"));
	assert_false(sup_hide_match("a/**/k", "b/x/k"));
	assert_true(sup_hide_match("**", "anything/at/all"));
}

static void test_bad_input(void **state)
{
	(void)state;
	assert_false(sup_hide_match("", "a"));
	assert_false(sup_hide_match("a", ""));
	char deep[4096] = "";
	for (int i = 0; i < 70; i++)
		strcat(deep, "a/");
	strcat(deep, "a");
	assert_false(sup_hide_match("**", deep)); /* deeper than the bound never matches */
}

static int make(const char *root, const char *rel, bool dir)
{
	char p[512];
	(void)snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (dir)
		return mkdir(p, 0755);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	return close(fd);
}

static bool has(char **list, const char *s)
{
	for (size_t i = 0; list && list[i]; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

static void test_expand(void **state)
{
	(void)state;
	char root[] = "/tmp/test-hide-XXXXXX";
	assert_non_null(mkdtemp(root));
	assert_int_equal(make(root, ".env", false), 0);
	assert_int_equal(make(root, "a", true), 0);
	assert_int_equal(make(root, "a/.env", false), 0);
	assert_int_equal(make(root, "a/keep", false), 0);
	assert_int_equal(make(root, "secrets", true), 0);
	assert_int_equal(make(root, "secrets/inner.env", false), 0);
	char link[600], target[600];
	(void)snprintf(link, sizeof(link), "%s/a/link.env", root);
	(void)snprintf(target, sizeof(target), "%s/.env", root);
	assert_int_equal(symlink(target, link), 0);

	int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	char *pats[] = { (char *)"**/.env", (char *)"secrets", (char *)"**/*.env", NULL };
	char **found = NULL;
	size_t n = 0;
	assert_int_equal(sup_hide_expand(fd, pats, 3, &found, &n), 0);
	assert_true(has(found, ".env"));
	assert_true(has(found, "a/.env"));
	assert_true(has(found, "secrets"));
	assert_false(has(found, "secrets/inner.env")); /* inside a hidden directory */
	assert_false(has(found, "a/keep"));
	assert_false(has(found, "a/link.env"));        /* symlinks are never collected */
	assert_int_equal(n, 3);
	assert_null(found[n]);
	sup_hide_free(found);

	/* No patterns: nothing walked, nothing found. */
	found = (char **)1;
	assert_int_equal(sup_hide_expand(fd, NULL, 0, &found, &n), 0);
	assert_null(found);
	assert_int_equal(n, 0);
	(void)close(fd);

	char cmd[600];
	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literal),
		cmocka_unit_test(test_star_and_class),
		cmocka_unit_test(test_double_star),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_expand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
