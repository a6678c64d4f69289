/* SPDX-License-Identifier: MIT */
/*
 * Checks the policy and task fuzz targets share: the contract of a parser that reports through
 * struct pol_diag when it fails, and the shape of a normalised relative path. Header-only, for
 * fuzz targets only.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz-util.h"
#include "policy.h"

/*
 * A parse that returned r != 0 kept its contract: r is -EINVAL, -E2BIG or -ENOMEM, its result
 * is untouched, and d names a file and holds a one-line message that says what was expected
 * (unless it filled the buffer and was cut there).
 */
static inline void fuzz_check_failure(int r, bool untouched, const struct pol_diag *d)
{
	CHECK(r == -EINVAL || r == -E2BIG || r == -ENOMEM);
	CHECK(untouched);
	CHECK(memchr(d->message, '\0', sizeof(d->message)) && d->message[0]);
	CHECK(memchr(d->file, '\0', sizeof(d->file)) && d->file[0]);
	CHECK(!strchr(d->message, '\n'));
	CHECK(r == -ENOMEM || strstr(d->message, "(expected") ||
	      strlen(d->message) == sizeof(d->message) - 1);
}

/*
 * The relative path s (non-empty, no leading /) is normalised: no empty component, no
 * trailing /, and no "." or ".." component anywhere.
 */
static inline void fuzz_check_normalised(const char *s)
{
	CHECK(!strstr(s, "//") && s[strlen(s) - 1] != '/');
	CHECK(strcmp(s, "..") && strncmp(s, "../", 3) && !strstr(s, "/../"));
	CHECK(strlen(s) < 3 || strcmp(s + strlen(s) - 3, "/.."));
	CHECK(strcmp(s, ".") && strncmp(s, "./", 2) && !strstr(s, "/./"));
	CHECK(strlen(s) < 2 || strcmp(s + strlen(s) - 2, "/."));
}
