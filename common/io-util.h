/* SPDX-License-Identifier: MIT */
/*
 * Bounded whole-file reads, shared by every module that reads small kernel or config files,
 * whole writes, and random bytes from the kernel. Header-only, no state.
 */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/random.h>
#include <unistd.h>

#include "cleanup.h"

/*
 * Reads fd (borrowed) to end of file into buf, at most cap - 1 bytes, and NUL-terminates it.
 * Returns the length, or -EFBIG when the file does not fit (the content is then unusable), or
 * -errno from read(2).
 */
static inline int io_read_fd(int fd, char *buf, size_t cap)
{
	size_t got = 0;
	if (cap == 0)
		return -EFBIG;
	for (;;) {
		ssize_t n = read(fd, buf + got, cap - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
		if (got == cap - 1) {
			char extra;
			ssize_t more = read(fd, &extra, 1);
			if (more > 0)
				return -EFBIG;
			break;
		}
	}
	buf[got] = '\0';
	return got > (size_t)0x7fffffff ? -EFBIG : (int)got;
}

/* Writes all of buf to fd (borrowed), retrying on EINTR. Returns 0 or -errno. */
static inline int io_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Fills buf with len bytes from getrandom(2) (blocking until the pool is ready). 0 or -errno. */
static inline int io_fill_random(void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = getrandom((char *)buf + got, len - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	return 0;
}

/* io_read_fd of dfd/path, opened read-only without following a final symlink. */
static inline int io_read_at(int dfd, const char *path, char *buf, size_t cap)
{
	_cleanup_close_ int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		return -errno;
	return io_read_fd(fd, buf, cap);
}
