/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

enum log_level sup_log_level = LOG_LEVEL_NORMAL;

void sup_log(enum log_level level, const char *fmt, ...)
{
	if (level > sup_log_level)
		return;
	va_list ap;
	va_start(ap, fmt);
	(void)fputs("warden: ", stderr);
	(void)vfprintf(stderr, fmt, ap);
	(void)fputc('\n', stderr);
	va_end(ap);
}

int sup_log_errno(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)fputs("warden: ", stderr);
	(void)vfprintf(stderr, fmt, ap);
	(void)fprintf(stderr, ": %s\n", strerror(err < 0 ? -err : err));
	va_end(ap);
	return err;
}
