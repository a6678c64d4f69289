/* SPDX-License-Identifier: MIT */
/*
 * treecopy: see treecopy.h. Each entry is examined with fstatat(AT_SYMLINK_NOFOLLOW), then
 * opened with O_NOFOLLOW and examined again: an entry that was swapped in between (for a
 * symlink, a FIFO) is an error, never followed and never waited on.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "io-util.h"
#include "treecopy.h"

DEFINE_CLEANUP(DIR *, closedir)

#define COPY_CHUNK (64u << 20)
#define COPY_BUF (64u * 1024u)

struct copier {
	const struct sup_copy_limits *lim;
	struct sup_copy_stats st;
	char rel[PATH_MAX];   /* the path of the entry at hand, relative to the source */
	size_t rel_len;
	dev_t dst_dev;        /* the destination, which must not be met inside the source */
	ino_t dst_ino;
	char buf[COPY_BUF];   /* the read/write fallback's buffer */
	char *why;
	size_t why_len;
};

/* One line in why (control bytes of names shown as '?'); returns r. */
__attribute__((format(printf, 3, 4))) static int fail(struct copier *c, int r, const char *fmt,
						       ...)
{
	if (!c->why || !c->why_len)
		return r;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(c->why, c->why_len, fmt, ap);
	va_end(ap);
	if (n < 0)
		c->why[0] = '\0';
	for (char *p = c->why; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
			*p = '?';
	return r;
}

static const char *type_name(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "regular file";
	case S_IFDIR: return "folder";
	case S_IFLNK: return "symlink";
	case S_IFIFO: return "FIFO";
	case S_IFSOCK: return "socket";
	case S_IFCHR: return "character device";
	case S_IFBLK: return "block device";
	default: return "file of unknown type";
	}
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static int entry_fail(struct copier *c, int r, const char *what)
{
	return fail(c, r, "%s entry '%s': %s: %s", c->lim->what, c->rel_len ? c->rel : ".", what,
		    strerror(-r));
}

static int changed(struct copier *c)
{
	return fail(c, -ESTALE, "%s entry '%s' changed while it was being copied", c->lim->what,
		    c->rel);
}

static int rel_push(struct copier *c, const char *name, size_t *saved)
{
	size_t len = strlen(name);
	if (c->rel_len + 1 + len >= sizeof(c->rel))
		return fail(c, -ENAMETOOLONG, "%s entry '%s/%.32s...' has a path longer than %zu bytes",
			    c->lim->what, c->rel, name, sizeof(c->rel) - 1);
	*saved = c->rel_len;
	if (c->rel_len)
		c->rel[c->rel_len++] = '/';
	memcpy(c->rel + c->rel_len, name, len + 1);
	c->rel_len += len;
	return 0;
}

static void rel_pop(struct copier *c, size_t saved)
{
	c->rel_len = saved;
	c->rel[saved] = '\0';
}

static int open_folder_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

/* Access and modification times of st onto fd, when the limits ask for them. */
static int copy_times(struct copier *c, int fd, const struct stat *st)
{
	if (!c->lim->keep_times)
		return 0;
	const struct timespec ts[2] = { st->st_atim, st->st_mtim };
	return futimens(fd, ts) < 0 ? entry_fail(c, -errno, "futimens") : 0;
}

static int copy_dir(struct copier *c, int src_owned, int dst, unsigned depth);

static int copy_folder(struct copier *c, int sfd, int dfd, const char *name,
		       const struct stat *st, unsigned depth)
{
	if (depth + 1 > c->lim->max_depth)
		return fail(c, -E2BIG, "%s entry '%s' is nested more than %u folders deep",
			    c->lim->what, c->rel, c->lim->max_depth);
	_cleanup_close_ int src = open_folder_at(sfd, name);
	if (src == -ELOOP || src == -ENOTDIR)
		return changed(c);
	if (src < 0)
		return entry_fail(c, src, "cannot be opened");
	struct stat now;
	if (fstat(src, &now) < 0)
		return entry_fail(c, -errno, "fstat");
	if (!S_ISDIR(now.st_mode) || !same_inode(st, &now))
		return changed(c);
	if (now.st_dev == c->dst_dev && now.st_ino == c->dst_ino)
		return fail(c, -ELOOP, "%s entry '%s' is the folder it is copied into",
			    c->lim->what, c->rel);
	/* Owner-only while it fills; the source's mode once its contents are in, so that a
	 * read-only folder still gets its contents. */
	if (mkdirat(dfd, name, 0700) < 0)
		return entry_fail(c, -errno, "cannot be created in the copy");
	_cleanup_close_ int dst = open_folder_at(dfd, name);
	if (dst < 0)
		return entry_fail(c, dst, "cannot be opened in the copy");
	int r = copy_dir(c, TAKE_FD(src), dst, depth + 1);
	if (r < 0)
		return r;
	if (fchmod(dst, now.st_mode & 0777) < 0)
		return entry_fail(c, -errno, "fchmod in the copy");
	return copy_times(c, dst, &now);
}

static int copy_file(struct copier *c, int sfd, int dfd, const char *name, const struct stat *st)
{
	/* O_NONBLOCK: should a FIFO take the file's place meanwhile, opening it does not hang. */
	_cleanup_close_ int in =
		openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (in < 0 && errno == ELOOP)
		return changed(c);
	if (in < 0)
		return entry_fail(c, -errno, "cannot be opened");
	struct stat now;
	if (fstat(in, &now) < 0)
		return entry_fail(c, -errno, "fstat");
	if (!S_ISREG(now.st_mode) || !same_inode(st, &now))
		return changed(c);
	_cleanup_close_ int out = openat(dfd, name,
					 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
					 0600);
	if (out < 0)
		return entry_fail(c, -errno, "cannot be created in the copy");
	uint64_t copied = 0;
	int r = io_copy_bounded(in, out, c->lim->max_bytes - c->st.bytes, COPY_CHUNK, c->buf,
				sizeof(c->buf), &copied);
	c->st.bytes += copied;
	if (r == -E2BIG)
		return fail(c, r, "%s holds more than %llu bytes of files (at '%s')", c->lim->what,
			    (unsigned long long)c->lim->max_bytes, c->rel);
	if (r < 0)
		return entry_fail(c, r, "cannot be copied");
	/* Permission bits only: set-uid, set-gid and sticky are dropped. */
	if (fchmod(out, now.st_mode & 0777) < 0)
		return entry_fail(c, -errno, "fchmod in the copy");
	return copy_times(c, out, &now);
}

static int copy_link(struct copier *c, int sfd, int dfd, const char *name)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(sfd, name, target, sizeof(target));
	if (n < 0 && errno == EINVAL)
		return changed(c);
	if (n < 0)
		return entry_fail(c, -errno, "readlink");
	if ((size_t)n >= sizeof(target))
		return fail(c, -ENAMETOOLONG,
			    "%s entry '%s' is a symlink with a target longer than %zu bytes",
			    c->lim->what, c->rel, sizeof(target) - 1);
	target[n] = '\0';
	/* The target is copied as text and never resolved: it may point anywhere, or nowhere. */
	if (symlinkat(target, dfd, name) < 0)
		return entry_fail(c, -errno, "cannot be created in the copy");
	return 0;
}

static int copy_entry(struct copier *c, int sfd, int dfd, const char *name, unsigned depth)
{
	size_t saved = 0;
	int r = rel_push(c, name, &saved);
	if (r < 0)
		return r;
	struct stat st;
	if (++c->st.entries > c->lim->max_entries)
		r = fail(c, -E2BIG, "%s holds more than %llu files, folders and symlinks (at '%s')",
			 c->lim->what, (unsigned long long)c->lim->max_entries, c->rel);
	else if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = entry_fail(c, -errno, "cannot be examined");
	else if (S_ISDIR(st.st_mode))
		r = copy_folder(c, sfd, dfd, name, &st, depth);
	else if (S_ISREG(st.st_mode))
		r = copy_file(c, sfd, dfd, name, &st);
	else if (S_ISLNK(st.st_mode))
		r = copy_link(c, sfd, dfd, name);
	else if (c->lim->skip_special)
		c->st.skipped++;
	else
		r = fail(c, -EINVAL, "%s entry '%s' is a %s (expected a file, folder or symlink)",
			 c->lim->what, c->rel, type_name(st.st_mode));
	rel_pop(c, saved);
	return r;
}

/* Copies the entries of the folder src_owned (closed here, whatever happens) into dst. */
static int copy_dir(struct copier *c, int src_owned, int dst, unsigned depth)
{
	_cleanup_close_ int src = src_owned;
	_cleanup_(closedirp) DIR *d = fdopendir(src);
	if (!d)
		return entry_fail(c, -errno, "cannot be listed");
	(void)TAKE_FD(src); /* d owns it now */
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de)
			return errno ? entry_fail(c, -errno, "cannot be listed") : 0;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int r = copy_entry(c, dirfd(d), dst, de->d_name, depth);
		if (r < 0)
			return r;
	}
}

int sup_copy_tree(int src, int dst, const struct sup_copy_limits *lim,
		  struct sup_copy_stats *stats, char *why, size_t why_len)
{
	_cleanup_free_ struct copier *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->lim = lim;
	c->why = why;
	c->why_len = why_len;
	struct stat d;
	if (fstat(dst, &d) < 0)
		return fail(c, -errno, "%s: fstat of the copy: %s", lim->what, strerror(errno));
	c->dst_dev = d.st_dev;
	c->dst_ino = d.st_ino;
	/* src may be O_PATH: a listable descriptor of the same folder */
	int fd = openat(src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return fail(c, -errno, "%s: cannot be opened: %s", lim->what, strerror(errno));
	int r = copy_dir(c, fd, dst, 0);
	if (stats)
		*stats = c->st;
	return r;
}
