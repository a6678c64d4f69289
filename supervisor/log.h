/* SPDX-License-Identifier: MIT */
/*
 * Supervisor logging: the only place in warden that prints warnings and errors.
 * Every message starts with "warden: ". log_errno() logs with strerror(-err) and returns err,
 * so a failure is logged and returned in one statement.
 */
#pragma once

#include <stdarg.h>

enum log_level {
	LOG_LEVEL_QUIET = 0, /* errors only */
	LOG_LEVEL_NORMAL = 1,
	LOG_LEVEL_VERBOSE = 2,
};

extern enum log_level sup_log_level;

__attribute__((format(printf, 2, 3))) void sup_log(enum log_level level, const char *fmt, ...);
__attribute__((format(printf, 2, 3))) int sup_log_errno(int err, const char *fmt, ...);

#define log_error(...) sup_log(LOG_LEVEL_QUIET, __VA_ARGS__)
#define log_info(...) sup_log(LOG_LEVEL_NORMAL, __VA_ARGS__)
#define log_debug(...) sup_log(LOG_LEVEL_VERBOSE, __VA_ARGS__)
#define log_errno(err, ...) sup_log_errno((err), __VA_ARGS__)
