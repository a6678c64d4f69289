/* SPDX-License-Identifier: MIT */
/*
 * Bounded whole-file reads, shared by every module that reads small kernel or config files,
 * whole writes, and random bytes from the kernel. Header-only, no state.
 */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/*
 * Reads exactly len bytes of fd (borrowed) into buf, retrying on EINTR: with read(2) from the
 * file offset when off < 0, else with pread(2) at off, the offset left where it was.
 * Returns 0, -ENODATA when the file ends first, or -errno.
 */
static inline int io_read_exact_at(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = off < 0 ? read(fd, (char *)buf + got, len - got)
				    : pread(fd, (char *)buf + got, len - got, off + (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		got += (size_t)n;
	}
	return 0;
}

/* io_read_exact_at from the file offset (read(2)). */
static inline int io_read_exact(int fd, void *buf, size_t len)
{
	return io_read_exact_at(fd, buf, len, -1);
}

/* io_read_exact_at at off (pread(2)); off >= 0. */
static inline int io_pread_exact(int fd, void *buf, size_t len, off_t off)
{
	return io_read_exact_at(fd, buf, len, off);
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

/*
 * Writes the NUL-terminated text (borrowed) to dfd/path, opened O_WRONLY | O_CLOEXEC |
 * O_NOFOLLOW | flags (mode applies with O_CREAT), in full: the one small-file write (a
 * /proc or cgroup file, a synthetic /etc file). Returns 0 or -errno; a file it created is
 * left as far as it got.
 */
static inline int io_write_file_at(int dfd, const char *path, int flags, mode_t mode,
				   const char *text)
{
	int fd = openat(dfd, path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | flags, mode);
	if (fd < 0)
		return -errno;
	int r = io_write_all(fd, text, strlen(text));
	if (close(fd) < 0 && r == 0 && errno != EINTR)
		r = -errno;
	return r;
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

/* Resolution that stays beneath the starting directory and follows no link of any kind. */
#define IO_RESOLVE_BENEATH_NO_LINKS (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/*
 * openat2(2) of dfd/path with these open flags (O_CLOEXEC is added), mode (for O_CREAT or
 * O_TMPFILE; else 0) and RESOLVE_* flags. The one wrapper of the raw syscall. Returns the
 * new descriptor or -errno.
 */
static inline int io_openat2_mode(int dfd, const char *path, uint64_t flags, uint64_t mode,
				  uint64_t resolve)
{
	struct open_how how = { .flags = flags | O_CLOEXEC, .mode = mode, .resolve = resolve };
	long fd = syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	return fd < 0 ? -errno : (int)fd;
}

/* io_openat2_mode without a mode: dfd/path opened, not created. Returns the fd or -errno. */
static inline int io_openat2(int dfd, const char *path, uint64_t flags, uint64_t resolve)
{
	return io_openat2_mode(dfd, path, flags, 0, resolve);
}

/*
 * Opens the directory dfd/path (O_DIRECTORY | O_CLOEXEC | flags) without following a symlink
 * anywhere in path: openat2 with RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, or, where
 * openat2 is missing (valgrind before 3.20 answers ENOSYS for it), one openat with
 * O_NOFOLLOW per component, on which a symlink fails with ENOTDIR or ELOOP. ".." climbs as
 * the kernel would. Returns the new descriptor or -errno (-ELOOP or -ENOTDIR: a symlink).
 */
static inline int io_open_dir_nofollow(int dfd, const char *path, int flags)
{
	int fd = io_openat2(dfd, path, (uint64_t)(flags | O_DIRECTORY),
			    RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd != -ENOSYS)
		return fd;
	size_t len = strlen(path);
	if (len == 0 || len >= 4096)
		return -ENOENT;
	char buf[4096];
	memcpy(buf, path, len + 1);
	int cur = openat(dfd, buf[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	char *save = NULL;
	char *c = strtok_r(buf, "/", &save);
	do {
		/* No component ("/"): the start itself, opened again with the caller's flags. */
		const char *name = c ? c : ".";
		bool last = !c || !save || strspn(save, "/") == strlen(save);
		int next = openat(cur, name, (last ? flags : O_PATH) | O_DIRECTORY | O_NOFOLLOW |
					     O_CLOEXEC);
		int err = errno;
		(void)close(cur);
		if (next < 0)
			return -err;
		cur = next;
	} while (c && (c = strtok_r(NULL, "/", &save)));
	return cur;
}

/*
 * A directory stream over a copy of fd (borrowed), or NULL with errno set. The copy shares
 * fd's offset: rewind it (rewinddir) when fd was read before.
 */
static inline DIR *io_dir_stream(int fd)
{
	int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup < 0)
		return NULL;
	DIR *d = fdopendir(dup);
	if (!d) {
		int saved = errno;
		(void)close(dup);
		errno = saved;
	}
	return d;
}

/* copy_file_range errors that mean "not here": fall back to read and write. */
static inline bool io_cfr_unsupported(int err)
{
	return err == EXDEV || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP ||
	       err == EPERM || err == EBADF || err == ETXTBSY;
}

/*
 * Copies in to out (both borrowed) from their current offsets to the end of in, at most room
 * bytes (room < UINT64_MAX): one byte more is -E2BIG. Adds what was copied to *copied.
 * copy_file_range first, in steps of at most chunk bytes; read and write through buf
 * (buf_len bytes) where it is not supported, and to confirm an end of file it reports (some
 * file systems report 0 before the end). Returns 0 or -errno.
 */
static inline int io_copy_bounded(int in, int out, uint64_t room, uint64_t chunk, char *buf,
				  size_t buf_len, uint64_t *copied)
{
	bool use_cfr = true;
	for (;;) {
		uint64_t want = room - *copied + 1;
		if (want > chunk)
			want = chunk;
		ssize_t n;
		if (use_cfr) {
			n = copy_file_range(in, NULL, out, NULL, (size_t)want, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if ((n < 0 && io_cfr_unsupported(errno)) || n == 0) {
				use_cfr = false;
				continue;
			}
			if (n < 0)
				return -errno;
		} else {
			if (want > buf_len)
				want = buf_len;
			n = read(in, buf, (size_t)want);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (n == 0)
				return 0;
			int r = io_write_all(out, buf, (size_t)n);
			if (r < 0)
				return r;
		}
		*copied += (uint64_t)n;
		if (*copied > room)
			return -E2BIG;
	}
}

/* io_read_fd of dfd/path, opened read-only without following a final symlink. */
static inline int io_read_at(int dfd, const char *path, char *buf, size_t cap)
{
	_cleanup_close_ int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		return -errno;
	return io_read_fd(fd, buf, cap);
}

/*
 * Reads the regular file fd (borrowed) whole into a new NUL-terminated buffer of at most max
 * bytes. Returns 0 with *out (the caller frees it) and *out_len set; -EINVAL for a file that
 * is not regular; -E2BIG when it holds more than max bytes; another -errno from fstat or read.
 */
static inline int io_read_alloc(int fd, size_t max, char **out, size_t *out_len)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	_cleanup_free_ char *buf = malloc(max + 1);
	if (!buf)
		return -ENOMEM;
	size_t got = 0;
	for (;;) {
		ssize_t n = read(fd, buf + got, max + 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
		if (got > max)
			return -E2BIG;
	}
	buf[got] = '\0';
	*out = TAKE_PTR(buf);
	*out_len = got;
	return 0;
}
