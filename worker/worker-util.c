/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "io-util.h"
#include "worker-util.h"

int wrk_read_identity(const char *path, struct wire_identity *out)
{
	/* As long as the kernel can print it: the caller's groups can make it long (wire.h). */
	static char buf[WIRE_STATUS_MAX_BYTES + 1];
	int n = io_read_at(AT_FDCWD, path, buf, sizeof(buf));
	if (n < 0)
		return n;
	return wire_parse_status(buf, (size_t)n, out, NULL);
}
