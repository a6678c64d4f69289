/* SPDX-License-Identifier: MIT */
/*
 * Helpers several cmocka unit tests share, for unit tests only: a printf into a new string,
 * the checks of a parser's result and struct pol_diag (test-policy, test-task, test-criteria),
 * and removing a fixture's folder tree (test-criteria, test-rundir). Each failed check fails
 * the running test, as a cmocka assertion does.
 */
#pragma once

#include "policy.h"

/* Formats into a new heap string that the caller frees; fails the test if that is impossible. */
__attribute__((format(printf, 1, 2))) char *unit_fmt(const char *f, ...);

/*
 * Asserts that a parse that returned r and filled d (borrowed) succeeded; when it did not, the
 * diagnostic is printed first, so that the failure says why.
 */
void unit_assert_parsed(int r, const struct pol_diag *d);

/* How unit_assert_diag() compares the message. */
enum unit_match {
	/* The message holds msg, says what it expected ("(expected ") and is one line. */
	UNIT_MSG_PART,
	/* The message is exactly msg. */
	UNIT_MSG_EXACT,
};

/*
 * Asserts that a parse that returned r and filled d (borrowed) failed with err at
 * file:line:column, with a message that matches msg as match says. On a mismatch both the
 * diagnostic and what was wanted are printed before the first failing assertion. Whether the
 * parser left its result untouched is the caller's to check, since only it knows the type.
 */
void unit_assert_diag(int r, const struct pol_diag *d, int err, const char *file, unsigned line,
		      unsigned column, const char *msg, enum unit_match match);

/*
 * Removes name below the directory dfd (or AT_FDCWD) and, if it is a directory, everything in
 * it, without following symbolic links; folders a test made unreadable are opened up first.
 * Errors are ignored: it is fixture teardown, and a leftover under /tmp fails no test.
 */
void unit_rm_rf_at(int dfd, const char *name);
