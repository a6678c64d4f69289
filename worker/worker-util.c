/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "worker-util.h"

#define STATUS_MAX_BYTES 8192

int wrk_read_identity(const char *path, struct wire_identity *out)
{
	static char buf[STATUS_MAX_BYTES];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	for (;;) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == sizeof(buf))
			break;
	}
	(void)close(fd);
	if (got == sizeof(buf))
		return -EFBIG;
	return wire_parse_status(buf, got, out, NULL);
}
