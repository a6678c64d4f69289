/* SPDX-License-Identifier: MIT */
/* Helpers several cmocka unit tests share; see unit-util.h. */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "unit-util.h"

char *unit_fmt(const char *f, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, f);
	int r = vasprintf(&s, f, ap);
	va_end(ap);
	assert_true(r >= 0);
	return s;
}

void unit_assert_parsed(int r, const struct pol_diag *d)
{
	if (r != 0)
		print_error("unexpected failure %d at %s:%u:%u: %s\n", r, d->file, d->line,
			    d->column, d->message);
	assert_int_equal(r, 0);
}

void unit_assert_diag(int r, const struct pol_diag *d, int err, const char *file, unsigned line,
		      unsigned column, const char *msg, enum unit_match match)
{
	bool msg_ok = match == UNIT_MSG_EXACT ? !strcmp(d->message, msg)
					      : strstr(d->message, msg) != NULL;

	if (r != err || strcmp(d->file, file) || d->line != line || d->column != column || !msg_ok)
		print_error("got %d at %s:%u:%u: %s\nwanted %d at %s:%u:%u: %s%s%s\n", r, d->file,
			    d->line, d->column, d->message, err, file, line, column,
			    match == UNIT_MSG_EXACT ? "" : "...", msg,
			    match == UNIT_MSG_EXACT ? "" : "...");
	assert_int_equal(r, err);
	assert_string_equal(d->file, file);
	assert_int_equal(d->line, line);
	assert_int_equal(d->column, column);
	if (match == UNIT_MSG_EXACT) {
		assert_string_equal(d->message, msg);
		return;
	}
	assert_non_null(strstr(d->message, msg));
	/* Every message says what it expected instead, on one line. */
	assert_non_null(strstr(d->message, "(expected "));
	assert_null(strchr(d->message, '\n'));
}

void unit_rm_rf_at(int dfd, const char *name)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			(void)fchmod(fd, 0700);
			DIR *d = fdopendir(fd);
			if (d) {
				struct dirent *de;
				while ((de = readdir(d)))
					if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
						unit_rm_rf_at(dirfd(d), de->d_name);
				(void)closedir(d);
			} else {
				(void)close(fd);
			}
		}
		(void)unlinkat(dfd, name, AT_REMOVEDIR);
	} else {
		(void)unlinkat(dfd, name, 0);
	}
}
