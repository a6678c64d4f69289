/* SPDX-License-Identifier: MIT */
/*
 * rundir: creating a run folder, copying a task's workspace template into it, writing the
 * task's inline files, and opening a run folder again for `warden grade`.
 *
 * Every walk is fd-relative. Below a path the user named, a folder is only ever opened with
 * O_DIRECTORY|O_NOFOLLOW relative to a folder fd we already hold, an entry is examined with
 * AT_SYMLINK_NOFOLLOW, and a file is opened with O_NOFOLLOW and fstat'ed, so that what we copy
 * is what we examined. Nothing is reached through a symlink: a symlink in a template is
 * recreated as a link with the same target, and a symlink where a folder or file is expected
 * is refused. Modes are set with fchmod, so a workspace does not depend on warden's umask.
 *
 * A failure leaves what was built so far in place (a half-copied workspace); the caller
 * abandons the run. Only sup_rundir_create removes what it made, since it hands back nothing.
 *
 * The workspace's contents are made and changed only by a child that has become the
 * workspace's owner (as_owner): the template copy, so that the task's files are the owner's
 * and the idmapped mount hands them to each sandbox, and the scrub, which reads names and
 * modes a sandbox chose. The child's answer comes back in one record read with the frame
 * codec's bounded reader.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "cleanup.h"
#include "io-util.h"
#include "rundir.h"
#include "sandbox.h"
#include "treecopy.h"
#include "wire.h"

DEFINE_CLEANUP(DIR *, closedir)

#define RUNDIR_MODE 0755u        /* the output folder, the workspace, folders in it */
#define RUNDIR_RUN_MODE 0700u    /* a run folder: the agent's output, its owner's eyes only */
#define RUNDIR_WORKSPACE "workspace"
#define RUNDIR_RECORD "record.json"
#define RUNDIR_STAMP_LEN 16u      /* YYYYMMDDTHHMMSSZ */
#define RUNDIR_RANDOM_LEN 8u      /* lowercase hex digits */
#define RUNDIR_CREATE_TRIES 8     /* fresh random suffixes before giving up on EEXIST */

/*
 * Fills why (when there is room) and returns r, so a failure is one statement. The message is
 * kept to one line: names come from the file system and may hold any byte but '/' and NUL, so
 * control characters are shown as '?'.
 */
__attribute__((format(printf, 4, 5))) static int fail(int r, char *why, size_t why_len,
						       const char *fmt, ...)
{
	if (!why || why_len == 0)
		return r;
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	if (n < 0)
		why[0] = '\0';
	for (char *p = why; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
			*p = '?';
	errno = saved;
	return r;
}

/*
 * Copies path into buf (buf_len bytes) without trailing slashes ("/" stays "/"). A trailing
 * slash makes the kernel follow a final symlink even under O_NOFOLLOW, so a path checked for
 * not being a symlink must lose it first.
 */
static int strip_slashes(const char *path, char *buf, size_t buf_len)
{
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len >= buf_len)
		return -ENAMETOOLONG;
	memcpy(buf, path, len);
	buf[len] = '\0';
	return 0;
}

/* The task_id rule of docs/eval.md: it becomes part of a folder name, so it is rechecked here. */
static bool task_id_ok(const char *id)
{
	size_t len = strlen(id);
	if (len == 0 || len > TASK_MAX_ID || id[0] == '.' || id[0] == '-')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = id[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '.' || c == '_' || c == '-';
		if (!ok)
			return false;
	}
	return true;
}

static const char *type_name(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "regular file";
	case S_IFDIR:
		return "folder";
	case S_IFLNK:
		return "symlink";
	case S_IFIFO:
		return "FIFO";
	case S_IFSOCK:
		return "socket";
	case S_IFCHR:
		return "character device";
	case S_IFBLK:
		return "block device";
	default:
		return "file of unknown type";
	}
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Opens the folder name in dfd read-only, never through a symlink. Returns the fd or -errno. */
static int open_folder_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

/* Opens dfd/name as a folder and sets its mode to exactly mode. Returns the fd or -errno. */
static int open_and_chmod(int dfd, const char *name, mode_t mode)
{
	_cleanup_close_ int fd = open_folder_at(dfd, name);
	if (fd < 0)
		return fd;
	if (fchmod(fd, mode) < 0)
		return -errno;
	return TAKE_FD(fd);
}

/* ---- sup_rundir_create ---------------------------------------------------------------- */

int sup_rundir_create(const char *out_dir, const char *task_id, const struct timespec *now,
		      char *path, size_t path_len, int *out_dirfd, char *why, size_t why_len)
{
	if (!out_dir || !*out_dir || !task_id || !now || !path || !out_dirfd)
		return fail(-EINVAL, why, why_len, "run folder: missing argument");
	if (!task_id_ok(task_id))
		return fail(-EINVAL, why, why_len,
			    "task_id '%.*s' cannot name a run folder (expected 1 to %u of "
			    "A-Z a-z 0-9 . _ -, not starting with '.' or '-')",
			    TASK_MAX_ID + 1, task_id, (unsigned)TASK_MAX_ID);

	struct tm tm;
	char stamp[32];
	if (!gmtime_r(&now->tv_sec, &tm) || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999 ||
	    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm) != RUNDIR_STAMP_LEN)
		return fail(-EOVERFLOW, why, why_len,
			    "run folder: time %" PRIdMAX " has no YYYYMMDDTHHMMSSZ form",
			    (intmax_t)now->tv_sec);

	/* The whole path must fit before anything is created, so a failure leaves nothing. */
	size_t out_len = strlen(out_dir);
	while (out_len > 1 && out_dir[out_len - 1] == '/')
		out_len--;
	bool sep = out_dir[out_len - 1] != '/';
	size_t name_len = strlen(task_id) + 1 + RUNDIR_STAMP_LEN + 1 + RUNDIR_RANDOM_LEN;
	if (out_len >= path_len || path_len - out_len <= (sep ? 1u : 0u) + name_len)
		return fail(-ENAMETOOLONG, why, why_len,
			    "run folder path under '%s' is longer than %zu bytes", out_dir,
			    path_len ? path_len - 1 : 0);

	/* The user named out_dir, so following a symlink to it is what they asked for. */
	if (mkdir(out_dir, RUNDIR_MODE) < 0 && errno != EEXIST) {
		int r = -errno;
		return fail(r, why, why_len, "output folder '%s' cannot be created: %s", out_dir,
			    strerror(-r));
	}
	_cleanup_close_ int out_fd = open(out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
	if (out_fd < 0) {
		int r = -errno;
		if (r == -ENOTDIR)
			return fail(r, why, why_len, "output folder '%s' is not a directory", out_dir);
		return fail(r, why, why_len, "output folder '%s' cannot be opened: %s", out_dir,
			    strerror(-r));
	}

	char name[TASK_MAX_ID + 1 + RUNDIR_STAMP_LEN + 1 + RUNDIR_RANDOM_LEN + 1];
	int r = -EEXIST;
	for (int tries = 0; tries < RUNDIR_CREATE_TRIES && r == -EEXIST; tries++) {
		uint8_t rnd[RUNDIR_RANDOM_LEN / 2];
		r = io_fill_random(rnd, sizeof(rnd));
		if (r < 0)
			return fail(r, why, why_len, "run folder: getrandom: %s", strerror(-r));
		int n = snprintf(name, sizeof(name), "%s-%s-%02x%02x%02x%02x", task_id, stamp, rnd[0],
				 rnd[1], rnd[2], rnd[3]);
		if (n < 0 || (size_t)n != name_len)
			return fail(-EINVAL, why, why_len, "run folder: cannot format its name");
		r = mkdirat(out_fd, name, RUNDIR_RUN_MODE) < 0 ? -errno : 0;
	}
	if (r < 0)
		return fail(r, why, why_len, "run folder '%s/%s' cannot be created: %s", out_dir,
			    name, strerror(-r));

	/* From here on, a failure removes the run folder again: the caller gets nothing back. */
	_cleanup_close_ int run_fd = open_and_chmod(out_fd, name, RUNDIR_RUN_MODE);
	if (run_fd < 0) {
		r = run_fd;
		(void)unlinkat(out_fd, name, AT_REMOVEDIR);
		return fail(r, why, why_len, "run folder '%s/%s' cannot be opened: %s", out_dir, name,
			    strerror(-r));
	}
	_cleanup_close_ int ws_fd = -1;
	if (mkdirat(run_fd, RUNDIR_WORKSPACE, RUNDIR_MODE) < 0) {
		r = -errno;
	} else {
		ws_fd = open_and_chmod(run_fd, RUNDIR_WORKSPACE, RUNDIR_MODE);
		r = ws_fd < 0 ? ws_fd : 0;
	}
	if (r < 0) {
		(void)unlinkat(run_fd, RUNDIR_WORKSPACE, AT_REMOVEDIR);
		(void)unlinkat(out_fd, name, AT_REMOVEDIR);
		return fail(r, why, why_len, "run folder '%s/%s': workspace cannot be created: %s",
			    out_dir, name, strerror(-r));
	}

	memcpy(path, out_dir, out_len);
	if (sep)
		path[out_len++] = '/';
	memcpy(path + out_len, name, name_len + 1);
	*out_dirfd = TAKE_FD(run_fd);
	return 0;
}

/* ---- sup_rundir_copy_template ---------------------------------------------------------- */

int sup_rundir_copy_template(const char *template_path, int ws_fd, char *why, size_t why_len)
{
	if (!template_path || !*template_path || ws_fd < 0)
		return fail(-EINVAL, why, why_len, "template: missing argument");
	char tpath[PATH_MAX];
	if (strip_slashes(template_path, tpath, sizeof(tpath)) < 0)
		return fail(-ENAMETOOLONG, why, why_len, "template path is longer than %zu bytes",
			    sizeof(tpath) - 1);

	_cleanup_close_ int root =
		open(tpath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (root < 0) {
		int r = -errno;
		struct stat st;
		/* O_DIRECTORY|O_NOFOLLOW on a symlink fails with ENOTDIR or ELOOP: tell them apart. */
		if ((r == -ELOOP || r == -ENOTDIR) && lstat(tpath, &st) == 0) {
			if (S_ISLNK(st.st_mode))
				return fail(-ELOOP, why, why_len,
					    "template '%s' is a symlink (expected a folder)", tpath);
			if (!S_ISDIR(st.st_mode))
				return fail(-ENOTDIR, why, why_len,
					    "template '%s' is a %s (expected a folder)", tpath,
					    type_name(st.st_mode));
		}
		return fail(r, why, why_len, "template '%s' cannot be opened: %s", tpath,
			    strerror(-r));
	}

	struct stat ws, rs;
	if (fstat(ws_fd, &ws) < 0 || fstat(root, &rs) < 0) {
		int r = -errno;
		return fail(r, why, why_len, "template '%s': fstat: %s", tpath, strerror(-r));
	}
	if (!S_ISDIR(ws.st_mode))
		return fail(-ENOTDIR, why, why_len, "template '%s': the workspace is not a folder",
			    tpath);
	if (same_inode(&ws, &rs))
		return fail(-ELOOP, why, why_len, "template '%s' is the workspace itself", tpath);
	static const struct sup_copy_limits lim = {
		.what = "template",
		.max_entries = SUP_RUNDIR_MAX_ENTRIES,
		.max_bytes = SUP_RUNDIR_MAX_BYTES,
		.max_depth = SUP_RUNDIR_MAX_DEPTH,
	};
	return sup_copy_tree(root, ws_fd, &lim, NULL, why, why_len);
}

/* ---- sup_rundir_write_files ------------------------------------------------------------ */

/* A workspace path as docs/eval.md defines it, rechecked since it decides where we write. */
static bool ws_path_ok(const char *p)
{
	size_t len = strlen(p);
	if (len == 0 || len >= PATH_MAX || p[0] == '/')
		return false;
	for (const char *s = p;;) {
		const char *e = strchrnul(s, '/');
		size_t n = (size_t)(e - s);
		if (n == 0 || n > NAME_MAX || (n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		if (!*e)
			return true;
		s = e + 1;
	}
}

/*
 * Enters the folder name in dfd for the workspace file f, creating it (0755) if missing.
 * prefix is the workspace-relative path up to and including name, for messages. Returns the
 * fd or -errno with why.
 */
static int enter_parent(int dfd, const char *name, const char *f, const char *prefix, char *why,
			size_t why_len)
{
	for (int tries = 0; tries < 2; tries++) {
		int fd = open_folder_at(dfd, name);
		if (fd >= 0)
			return fd;
		if (fd == -ELOOP || fd == -ENOTDIR) {
			struct stat st;
			if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				return fail(fd, why, why_len, "workspace file '%s': '%s': %s", f, prefix,
					    strerror(-fd));
			if (S_ISLNK(st.st_mode))
				return fail(-ENOTDIR, why, why_len,
					    "workspace file '%s': '%s' is a symlink (files are never "
					    "written through one)", f, prefix);
			return fail(-ENOTDIR, why, why_len,
				    "workspace file '%s': '%s' is a %s (expected a folder)", f, prefix,
				    type_name(st.st_mode));
		}
		if (fd != -ENOENT)
			return fail(fd, why, why_len, "workspace file '%s': folder '%s': %s", f,
				    prefix, strerror(-fd));
		if (mkdirat(dfd, name, RUNDIR_MODE) < 0) {
			int r = -errno;
			if (r == -EEXIST)
				continue; /* made meanwhile: look again at what it is */
			return fail(r, why, why_len,
				    "workspace file '%s': folder '%s' cannot be created: %s", f,
				    prefix, strerror(-r));
		}
		fd = open_and_chmod(dfd, name, RUNDIR_MODE);
		if (fd < 0)
			return fail(fd, why, why_len, "workspace file '%s': folder '%s': %s", f,
				    prefix, strerror(-fd));
		return fd;
	}
	return fail(-EEXIST, why, why_len, "workspace file '%s': folder '%s' keeps changing", f,
		    prefix);
}

/* Writes content to the new file fd and sets its mode. */
static int fill_file(int fd, const struct pol_task_file *f)
{
	int r = io_write_all(fd, f->content ? f->content : "", f->content ? f->content_len : 0);
	if (r < 0)
		return r;
	if (fchmod(fd, (mode_t)f->mode) < 0)
		return -errno;
	return 0;
}

/*
 * Replaces the regular file name in dfd: the new content goes to a temporary name in the same
 * folder and is renamed over it, so the old file is never written through (it may be a hard
 * link) and the new one appears whole, with its mode.
 */
static int replace_file(int dfd, const char *name, const struct pol_task_file *f)
{
	char tmp[32];
	_cleanup_close_ int fd = -1;
	for (int tries = 0; fd < 0; tries++) {
		uint32_t rnd;
		int r = io_fill_random(&rnd, sizeof(rnd));
		if (r < 0)
			return r;
		(void)snprintf(tmp, sizeof(tmp), ".warden-%08" PRIx32 ".tmp", rnd);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
			    0600);
		if (fd < 0 && (errno != EEXIST || tries + 1 >= RUNDIR_CREATE_TRIES))
			return -errno;
	}
	int r = fill_file(fd, f);
	if (r >= 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dfd, tmp, 0);
	return r;
}

static int write_one(int ws_fd, const struct pol_task_file *f, char *why, size_t why_len)
{
	if (!f->path || !ws_path_ok(f->path))
		return fail(-EINVAL, why, why_len, "workspace file '%s' is not a workspace path",
			    f->path ? f->path : "(null)");
	if (f->mode > 0777)
		return fail(-EINVAL, why, why_len,
			    "workspace file '%s': mode %04" PRIo32 " is not permission bits only",
			    f->path, f->mode);
	if (!f->content && f->content_len > 0)
		return fail(-EINVAL, why, why_len, "workspace file '%s' has no content", f->path);

	char buf[PATH_MAX];
	memcpy(buf, f->path, strlen(f->path) + 1); /* fits: ws_path_ok bounds it by PATH_MAX */
	_cleanup_close_ int held = -1;
	int dfd = ws_fd;
	char *name = buf;
	for (char *slash; (slash = strchr(name, '/')); name = slash + 1) {
		*slash = '\0'; /* buf is now the prefix up to this folder */
		int sub = enter_parent(dfd, name, f->path, buf, why, why_len);
		if (sub < 0)
			return sub;
		*slash = '/';
		if (held >= 0)
			(void)close(held);
		held = dfd = sub;
	}

	struct stat st;
	int r;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISREG(st.st_mode))
			return fail(-EEXIST, why, why_len,
				    "workspace file '%s': a %s is already there (only a regular file "
				    "is replaced)", f->path, type_name(st.st_mode));
		r = replace_file(dfd, name, f);
	} else if (errno == ENOENT) {
		_cleanup_close_ int fd = openat(dfd, name,
						O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
							O_NOCTTY,
						0600);
		if (fd < 0)
			r = -errno;
		else if ((r = fill_file(fd, f)) < 0)
			(void)unlinkat(dfd, name, 0);
	} else {
		r = -errno;
	}
	if (r < 0)
		return fail(r, why, why_len, "workspace file '%s' cannot be written: %s", f->path,
			    strerror(-r));
	return 0;
}

int sup_rundir_write_files(int ws_fd, const struct pol_task_file *files, size_t n, char *why,
			   size_t why_len)
{
	if (ws_fd < 0 || (n > 0 && !files))
		return fail(-EINVAL, why, why_len, "workspace files: missing argument");
	for (size_t i = 0; i < n; i++) {
		int r = write_one(ws_fd, &files[i], why, why_len);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- the workspace's owner: sup_rundir_fill, sup_rundir_scrub ------------------------ */

/*
 * A child's answer, in the frame codec's layout (wire.h): u32 err (0, or a positive errno),
 * u32 count (what it changed), str why (at most RUNDIR_WHY_MAX bytes).
 */
#define RUNDIR_WHY_MAX 1024u
#define RUNDIR_REPLY_MAX (4u + 4u + 4u + RUNDIR_WHY_MAX)

/* What a child does once it is the owner: a count >= 0 or -errno with why. */
struct as_owner {
	bool privileged;
	uint32_t uid, gid;
	uint64_t keep;   /* capabilities kept (privileged) */
	int (*fn)(void *arg, char *why, size_t why_len);
	void *arg;
};

static _Noreturn void owner_child(const struct as_owner *o, int out)
{
	char why[RUNDIR_WHY_MAX + 1] = "";
	int r = o->privileged ? sbx_become_owner(o->uid, o->gid, o->keep)
			      : sbx_drop_privileges_unprivileged();
	if (r < 0)
		(void)fail(r, why, sizeof(why), "cannot become the workspace's owner (uid %" PRIu32
			   "): %s", o->uid, strerror(-r));
	else
		r = o->fn(o->arg, why, sizeof(why));
	uint8_t buf[RUNDIR_REPLY_MAX];
	struct wire_wr w;
	wire_wr_init(&w, buf, sizeof(buf));
	bool ok = wire_put_u32(&w, r < 0 ? (uint32_t)-r : 0) &&
		  wire_put_u32(&w, r < 0 ? 0 : (uint32_t)r) &&
		  wire_put_str(&w, why, strnlen(why, RUNDIR_WHY_MAX), RUNDIR_WHY_MAX);
	_exit(ok && io_write_all(out, buf, w.len) == 0 ? 0 : 1);
}

/*
 * Runs o->fn in a child that has become the owner (see struct as_owner) and returns its
 * answer: the count, or -errno with why. A child that ends otherwise than by answering once
 * is -ECHILD; an answer that does not decode is -EBADMSG.
 */
static int run_as_owner(const struct as_owner *o, char *why, size_t why_len)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return fail(-errno, why, why_len, "workspace: pipe: %s", strerror(errno));
	_cleanup_close_ int rd = p[0];
	_cleanup_close_ int wr = p[1];
	pid_t pid = fork();
	if (pid < 0)
		return fail(-errno, why, why_len, "workspace: fork: %s", strerror(errno));
	if (pid == 0) {
		(void)close(TAKE_FD(rd));
		owner_child(o, wr);
	}
	(void)close(TAKE_FD(wr));
	char buf[RUNDIR_REPLY_MAX + 1];
	int n = io_read_fd(rd, buf, sizeof(buf));
	int status = 0;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return fail(-errno, why, why_len, "workspace: waitpid: %s", strerror(errno));
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n < 0)
		return fail(-ECHILD, why, why_len, "workspace: the owner's child ended without an "
			    "answer (%s %d)", WIFSIGNALED(status) ? "signal" : "status",
			    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	struct wire_rd rd_view;
	wire_rd_init(&rd_view, buf, (size_t)n);
	uint32_t err = 0, count = 0;
	_cleanup_free_ char *text = NULL;
	if (!wire_get_u32(&rd_view, &err) || !wire_get_u32(&rd_view, &count) ||
	    !wire_get_str(&rd_view, RUNDIR_WHY_MAX, &text) || !wire_done(&rd_view) ||
	    err > 4095 || count > INT32_MAX)
		return fail(-EBADMSG, why, why_len, "workspace: the owner's child gave a malformed "
			    "answer");
	if (err)
		return fail(-(int)err, why, why_len, "%s", text);
	return (int)count;
}

struct fill {
	int ws_fd;
	const char *template_path;
	const struct pol_task_file *files;
	size_t n;
};

static int fill_as_owner(void *arg, char *why, size_t why_len)
{
	const struct fill *f = arg;
	int r = f->template_path ? sup_rundir_copy_template(f->template_path, f->ws_fd, why,
							    why_len)
				 : 0;
	if (r >= 0)
		r = sup_rundir_write_files(f->ws_fd, f->files, f->n, why, why_len);
	return r < 0 ? r : 0;
}

int sup_rundir_fill(int ws_fd, bool privileged, uint32_t uid, uint32_t gid,
		    const char *template_path, const struct pol_task_file *files, size_t n,
		    char *why, size_t why_len)
{
	if (ws_fd < 0 || (n > 0 && !files))
		return fail(-EINVAL, why, why_len, "workspace: missing argument");
	if (privileged && fchown(ws_fd, uid, gid) < 0)
		return fail(-errno, why, why_len, "workspace: cannot be given to uid %" PRIu32 ": %s",
			    uid, strerror(errno));
	struct fill f = { .ws_fd = ws_fd, .template_path = template_path, .files = files, .n = n };
	struct as_owner o = {
		.privileged = privileged,
		.uid = uid,
		.gid = gid,
		.keep = (1ull << CAP_DAC_READ_SEARCH) | (1ull << CAP_DAC_OVERRIDE),
		.fn = fill_as_owner,
		.arg = &f,
	};
	int r = run_as_owner(&o, why, why_len);
	return r < 0 ? r : 0;
}

/* The scrub's walk: the workspace-relative path at hand, for its lines and its failures. */
struct scrub {
	int log_fd;
	uint32_t changed;
	char rel[PATH_MAX];
	size_t rel_len;
	char *why;
	size_t why_len;
};

static int scrub_fail(struct scrub *s, int r, const char *what)
{
	char q[PATH_MAX];
	sup_escape(s->rel_len ? s->rel : ".", q, sizeof(q));
	return fail(r, s->why, s->why_len, "workspace entry '%s': %s: %s", q, what, strerror(-r));
}

/* "scrub: WHAT 'PATH'" to the log, the path escaped; a log that cannot be written is a log. */
static void scrub_note(struct scrub *s, const char *what)
{
	char q[PATH_MAX], line[PATH_MAX + 128];
	sup_escape(s->rel_len ? s->rel : ".", q, sizeof(q));
	int n = snprintf(line, sizeof(line), "scrub: %s '%s'\n", what, q);
	if (s->log_fd >= 0 && n > 0)
		(void)io_write_all(s->log_fd, line, (size_t)n < sizeof(line) ? (size_t)n
									     : sizeof(line) - 1);
	s->changed++;
}

/* Opens name in dfd without leaving dfd, following a symlink, or crossing a mount. */
static int scrub_open(int dfd, const char *name, uint64_t flags)
{
	return io_openat2(dfd, name, flags | O_NOFOLLOW | O_NOCTTY,
			  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
				  RESOLVE_NO_XDEV);
}

/* Clears the set-id and sticky bits of the open file or folder fd, whose stat is st. */
static int scrub_mode(struct scrub *s, int fd, const struct stat *st)
{
	mode_t extra = st->st_mode & (S_ISUID | S_ISGID | S_ISVTX);
	if (!extra)
		return 0;
	if (fchmod(fd, st->st_mode & 0777) < 0)
		return scrub_fail(s, -errno, "fchmod");
	char what[64];
	(void)snprintf(what, sizeof(what), "cleared the mode bits %04o of", (unsigned)extra);
	scrub_note(s, what);
	return 0;
}

static int scrub_dir(struct scrub *s, int dir_owned, unsigned depth);

static int scrub_entry(struct scrub *s, int dfd, const char *name, unsigned depth)
{
	size_t saved = s->rel_len, len = strlen(name);
	if (saved + 1 + len >= sizeof(s->rel))
		return fail(-ENAMETOOLONG, s->why, s->why_len,
			    "workspace: a path longer than %zu bytes", sizeof(s->rel) - 1);
	if (saved)
		s->rel[s->rel_len++] = '/';
	memcpy(s->rel + s->rel_len, name, len + 1);
	s->rel_len += len;

	int r = 0;
	struct stat st, now;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		r = scrub_fail(s, -errno, "cannot be examined");
	} else if (S_ISLNK(st.st_mode)) {
		r = 0; /* a link has no mode of its own, and is never followed */
	} else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode) ||
		   S_ISBLK(st.st_mode)) {
		if (unlinkat(dfd, name, 0) < 0)
			r = scrub_fail(s, -errno, "cannot be removed");
		else
			scrub_note(s, S_ISFIFO(st.st_mode)   ? "removed the FIFO"
				      : S_ISSOCK(st.st_mode) ? "removed the socket"
							     : "removed the device node");
	} else if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) {
		bool dir = S_ISDIR(st.st_mode);
		if (dir && depth + 1 > SUP_RUNDIR_SCRUB_MAX_DEPTH) {
			r = fail(-E2BIG, s->why, s->why_len,
				 "workspace: folders nested more than %u deep", SUP_RUNDIR_SCRUB_MAX_DEPTH);
		} else if (dir || (st.st_mode & (S_ISUID | S_ISGID | S_ISVTX))) {
			/* O_NONBLOCK: should a FIFO take the file's place meanwhile, it cannot hang us. */
			_cleanup_close_ int fd = scrub_open(dfd, name, O_RDONLY | O_NONBLOCK |
								 (dir ? O_DIRECTORY : 0));
			if (fd < 0)
				r = scrub_fail(s, fd, "cannot be opened");
			else if (fstat(fd, &now) < 0)
				r = scrub_fail(s, -errno, "fstat");
			else if (!same_inode(&st, &now) || (now.st_mode & S_IFMT) != (st.st_mode & S_IFMT))
				r = fail(-ESTALE, s->why, s->why_len,
					 "workspace: an entry changed while it was being scrubbed");
			else
				r = scrub_mode(s, fd, &now);
			if (r >= 0 && dir)
				r = scrub_dir(s, TAKE_FD(fd), depth + 1);
		}
	} else {
		r = scrub_fail(s, -EINVAL, "a file of unknown type");
	}
	s->rel_len = saved;
	s->rel[saved] = '\0';
	return r;
}

/* Scrubs what the folder dir_owned (closed here, whatever happens) holds. */
static int scrub_dir(struct scrub *s, int dir_owned, unsigned depth)
{
	_cleanup_close_ int fd = dir_owned;
	_cleanup_(closedirp) DIR *d = fdopendir(fd);
	if (!d)
		return scrub_fail(s, -errno, "cannot be listed");
	(void)TAKE_FD(fd); /* d owns it now */
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de)
			return errno ? scrub_fail(s, -errno, "cannot be listed") : 0;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int r = scrub_entry(s, dirfd(d), de->d_name, depth);
		if (r < 0)
			return r;
	}
}

struct scrub_arg {
	int ws_fd;
	int log_fd;
};

static int scrub_as_owner(void *arg, char *why, size_t why_len)
{
	const struct scrub_arg *a = arg;
	_cleanup_free_ struct scrub *s = calloc(1, sizeof(*s));
	if (!s)
		return fail(-ENOMEM, why, why_len, "workspace: out of memory");
	s->log_fd = a->log_fd;
	s->why = why;
	s->why_len = why_len;
	_cleanup_close_ int root = scrub_open(a->ws_fd, ".", O_RDONLY | O_DIRECTORY);
	struct stat st;
	if (root < 0)
		return scrub_fail(s, root, "cannot be opened");
	if (fstat(root, &st) < 0)
		return scrub_fail(s, -errno, "fstat");
	int r = scrub_mode(s, root, &st);
	if (r >= 0)
		r = scrub_dir(s, TAKE_FD(root), 0);
	return r < 0 ? r : (int)(s->changed > INT32_MAX ? INT32_MAX : s->changed);
}

int sup_rundir_scrub(int ws_fd, bool privileged, int log_fd, char *why, size_t why_len)
{
	struct stat st;
	if (ws_fd < 0)
		return fail(-EINVAL, why, why_len, "workspace: missing argument");
	if (fstat(ws_fd, &st) < 0)
		return fail(-errno, why, why_len, "workspace: fstat: %s", strerror(errno));
	struct scrub_arg a = { .ws_fd = ws_fd, .log_fd = log_fd };
	struct as_owner o = {
		.privileged = privileged,
		.uid = st.st_uid,
		.gid = st.st_gid,
		.keep = (1ull << CAP_DAC_READ_SEARCH) | (1ull << CAP_DAC_OVERRIDE),
		.fn = scrub_as_owner,
		.arg = &a,
	};
	return run_as_owner(&o, why, why_len);
}

/* ---- sup_rundir_open ------------------------------------------------------------------- */

/* Checks that name in the run folder fd is of type want (S_IFREG or S_IFDIR), not a symlink. */
static int check_member(int fd, const char *path, const char *name, mode_t want, char *why,
			size_t why_len)
{
	const char *expected = want == S_IFDIR ? "a folder" : "a regular file";
	struct stat st;
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		int r = -errno;
		if (r == -ENOENT)
			return fail(r, why, why_len, "run folder '%s' has no %s", path, name);
		return fail(r, why, why_len, "run folder '%s': %s: %s", path, name, strerror(-r));
	}
	if (S_ISLNK(st.st_mode))
		return fail(-ELOOP, why, why_len, "run folder '%s': %s is a symlink (expected %s)",
			    path, name, expected);
	if ((st.st_mode & S_IFMT) != want)
		return fail(want == S_IFDIR ? -ENOTDIR : -EINVAL, why, why_len,
			    "run folder '%s': %s is a %s (expected %s)", path, name,
			    type_name(st.st_mode), expected);
	return 0;
}

int sup_rundir_open(const char *path, int *out_dirfd, char *why, size_t why_len)
{
	if (!path || !*path || !out_dirfd)
		return fail(-EINVAL, why, why_len, "run folder: missing argument");
	char p[PATH_MAX];
	if (strip_slashes(path, p, sizeof(p)) < 0)
		return fail(-ENAMETOOLONG, why, why_len, "run folder path is longer than %zu bytes",
			    sizeof(p) - 1);

	_cleanup_close_ int fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int r = -errno;
		struct stat st;
		if ((r == -ELOOP || r == -ENOTDIR) && lstat(p, &st) == 0) {
			if (S_ISLNK(st.st_mode))
				return fail(-ELOOP, why, why_len,
					    "run folder '%s' is a symlink (expected a folder)", p);
			if (!S_ISDIR(st.st_mode))
				return fail(-ENOTDIR, why, why_len,
					    "run folder '%s' is not a directory", p);
		}
		if (r == -ENOENT)
			return fail(r, why, why_len, "run folder '%s' does not exist", p);
		return fail(r, why, why_len, "run folder '%s' cannot be opened: %s", p,
			    strerror(-r));
	}
	int r = check_member(fd, p, RUNDIR_RECORD, S_IFREG, why, why_len);
	if (r < 0)
		return r;
	r = check_member(fd, p, RUNDIR_WORKSPACE, S_IFDIR, why, why_len);
	if (r < 0)
		return r;
	*out_dirfd = TAKE_FD(fd);
	return 0;
}
