/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "io-util.h"
#include "worker-util.h"

#define STATUS_MAX_BYTES 8192

int wrk_read_identity(const char *path, struct wire_identity *out)
{
	static char buf[STATUS_MAX_BYTES];
	int n = io_read_at(AT_FDCWD, path, buf, sizeof(buf));
	if (n < 0)
		return n;
	return wire_parse_status(buf, (size_t)n, out, NULL);
}
