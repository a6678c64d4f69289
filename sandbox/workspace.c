/* SPDX-License-Identifier: MIT */
/*
 * Host-side workspace preparation, done by the supervisor before the sandbox exists: the
 * idmapped workspace tree (root mode) and, for workspace mode direct, placeholders for
 * protected paths that are missing and the git directories a top-level .git file points to.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "io-util.h"
#include "policy.h"
#include "sandbox.h"

static int write_map(pid_t pid, const char *name, uint32_t inside, uint32_t outside)
{
	char path[64], line[64];
	(void)snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	int len = snprintf(line, sizeof(line), "%u %u 1\n", inside, outside);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (write(fd, line, (size_t)len) != len)
		return errno ? -errno : -EIO;
	return 0;
}

/*
 * A user namespace whose only mapping is inside ws_uid -> outside host_uid (and the same for
 * gids), held by a short-lived child that waits on a pipe. Returns an fd of the namespace.
 */
static int make_idmap_userns(uint32_t ws_uid, uint32_t ws_gid, uint32_t host_uid,
			     uint32_t host_gid)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	_cleanup_close_ int rd = pipefd[0];
	_cleanup_close_ int wr = pipefd[1];

	pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL,
				   NULL, 0);
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char c;
		(void)close(wr);
		/* Holds the namespace alive until the parent has opened it, then leaves. */
		(void)!read(rd, &c, 1);
		_exit(0);
	}
	(void)close(TAKE_FD(rd));

	int r = write_map(pid, "uid_map", ws_uid, host_uid);
	if (r >= 0)
		r = write_map(pid, "gid_map", ws_gid, host_gid);
	int nsfd = -1;
	if (r >= 0) {
		char path[64];
		(void)snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		nsfd = open(path, O_RDONLY | O_CLOEXEC);
		if (nsfd < 0)
			r = -errno;
	}
	(void)close(TAKE_FD(wr));
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return r < 0 ? r : nsfd;
}

int sbx_idmap_workspace(int workspace_fd, uint32_t ws_uid, uint32_t ws_gid, uint32_t host_uid,
			uint32_t host_gid)
{
	_cleanup_close_ int userns = make_idmap_userns(ws_uid, ws_gid, host_uid, host_gid);
	if (userns < 0)
		return userns;
	/* Not recursive: mounts below the workspace are not part of it. */
	_cleanup_close_ int tree = open_tree(workspace_fd, "",
					     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0)
		return -errno;
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
		.userns_fd = (uint64_t)userns,
		/* A clone stays in the source's peer group: mounts on it would reach the host. */
		.propagation = MS_PRIVATE,
	};
	if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return -errno;
	return TAKE_FD(tree);
}

static bool in_list(char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

static int open_beneath(int dfd, const char *rel, int flags)
{
	return io_openat2_mode(dfd, rel, (uint64_t)(flags | O_NOFOLLOW),
			       (flags & O_CREAT) ? 0444 : 0, IO_RESOLVE_BENEATH_NO_LINKS);
}

/* Splits rel into a parent opened beneath dfd (O_PATH) and its last name (*out_name). */
static int open_parent_beneath(int dfd, const char *rel, const char **out_name)
{
	const char *slash = strrchr(rel, '/');
	if (!slash) {
		*out_name = rel;
		int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	char parent[PATH_MAX];
	size_t plen = (size_t)(slash - rel);
	if (plen >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, rel, plen);
	parent[plen] = '\0';
	int fd = open_beneath(dfd, parent, O_PATH | O_DIRECTORY);
	if (fd >= 0)
		*out_name = slash + 1;
	return fd;
}

/* unlinkat() of rel (flags: 0 or AT_REMOVEDIR) through a parent resolved beneath dfd. */
static int unlinkat_beneath(int dfd, const char *rel, int flags)
{
	const char *name;
	_cleanup_close_ int pfd = open_parent_beneath(dfd, rel, &name);
	if (pfd < 0)
		return pfd;
	return unlinkat(pfd, name, flags) < 0 ? -errno : 0;
}

/* A new directory rel (mode exactly 0555) beneath dfd, opened O_RDONLY; -EEXIST if any entry is there. */
static int mkdir_beneath(int dfd, const char *rel)
{
	const char *name;
	_cleanup_close_ int pfd = open_parent_beneath(dfd, rel, &name);
	if (pfd < 0)
		return pfd;
	if (mkdirat(pfd, name, 0555) < 0)
		return -errno;
	int fd = io_openat2(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
			    IO_RESOLVE_BENEATH_NO_LINKS);
	/* The umask may have taken bits away; is_placeholder() wants exactly 0555. */
	if (fd < 0 || fchmod(fd, 0555) < 0) {
		int r = fd < 0 ? fd : -errno;
		if (fd >= 0)
			(void)close(fd);
		(void)unlinkat(pfd, name, AT_REMOVEDIR);
		return r;
	}
	return fd;
}

static int add_placeholder(struct sbx_placeholder **arr, size_t *n, const char *rel,
			   const struct stat *st, bool created)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*arr)[i].rel, rel) == 0)
			return 0;
	struct sbx_placeholder *grown = reallocarray(*arr, *n + 1, sizeof(**arr));
	if (!grown)
		return -ENOMEM;
	*arr = grown;
	grown[*n].rel = strdup(rel);
	if (!grown[*n].rel)
		return -ENOMEM;
	grown[*n].dev = st->st_dev;
	grown[*n].ino = st->st_ino;
	grown[*n].created = created;
	(*n)++;
	return 0;
}

static bool has_entry(const struct sbx_placeholder *arr, size_t n, const char *rel)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(arr[i].rel, rel) == 0)
			return true;
	return false;
}

/*
 * Placeholders carry the creating supervisor's pid in an extended attribute, so that one left
 * behind by a supervisor that was SIGKILLed can be recognised and removed by the next start.
 * Without xattr support there is no mark, and such a leftover stays (it still blocks the
 * path, which is the safe side).
 */
#define PLACEHOLDER_XATTR "user.warden.placeholder"

static void mark_placeholder(int fd)
{
	char pid[16];
	int len = snprintf(pid, sizeof(pid), "%d", (int)getpid());
	(void)fsetxattr(fd, PLACEHOLDER_XATTR, pid, (size_t)len, 0);
}

/*
 * name (beneath dfd, never through a symlink; or openat() relative to dfd) opened O_RDONLY,
 * but only when it is a regular file (kinds has S_IFREG) or a directory (S_IFDIR): nothing
 * else is ever opened for reading, so a FIFO or a device there has no say. Returns the fd,
 * -ENOENT when name is missing, -EMEDIUMTYPE when it is of another kind, or another -errno.
 */
static int open_kind(int dfd, const char *name, bool beneath, mode_t kinds)
{
	struct stat st, again;
	if (beneath) {
		_cleanup_close_ int p = open_beneath(dfd, name, O_PATH);
		if (p < 0)
			return p == -ENOTDIR ? -ENOENT : p;
		if (fstat(p, &st) < 0)
			return -errno;
	} else if (fstatat(dfd, name, &st, 0) < 0) {
		return errno == ENOTDIR ? -ENOENT : -errno;
	}
	if (!((S_ISREG(st.st_mode) && (kinds & S_IFREG)) ||
	      (S_ISDIR(st.st_mode) && (kinds & S_IFDIR))))
		return -EMEDIUMTYPE;
	int fd = beneath ? open_beneath(dfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY)
			 : openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd == -1)
		fd = -errno;
	if (fd < 0)
		return fd;
	if (fstat(fd, &again) < 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino) {
		(void)close(fd);
		return -ESTALE; /* changed between the two looks */
	}
	return fd;
}

/* True when the directory open at fd (O_RDONLY) has no entry but . and .. */
static bool dir_is_empty(int fd)
{
	_cleanup_close_ int dup = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dup < 0)
		return false;
	DIR *d = fdopendir(dup);
	if (!d)
		return false;
	(void)TAKE_FD(dup);
	bool empty = true;
	const struct dirent *e;
	while (empty && (e = readdir(d)))
		empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
	(void)closedir(d);
	return empty;
}

/*
 * True when rel is a placeholder some supervisor made: an empty regular file of mode 0444, or
 * an empty directory of mode 0555, carrying our mark. Fills *st and the marking pid. Never
 * blocks on a FIFO that stands there.
 */
static bool is_placeholder(int ws, const char *rel, struct stat *st, long *out_pid)
{
	_cleanup_close_ int fd = open_kind(ws, rel, true, S_IFREG | S_IFDIR);
	if (fd < 0 || fstat(fd, st) < 0)
		return false;
	if (S_ISREG(st->st_mode)) {
		if (st->st_size != 0 || (st->st_mode & 07777) != 0444)
			return false;
	} else if (S_ISDIR(st->st_mode)) {
		if ((st->st_mode & 07777) != 0555 || !dir_is_empty(fd))
			return false;
	} else {
		return false;
	}
	char buf[16];
	ssize_t n = fgetxattr(fd, PLACEHOLDER_XATTR, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	char *end;
	errno = 0;
	long pid = strtol(buf, &end, 10);
	if (errno || *end || pid <= 0 || pid > INT_MAX)
		return false;
	*out_pid = pid;
	return true;
}

/*
 * For one protected path: find its first missing component and create a placeholder there:
 * an empty read-only directory when that component is not the last one or when dir is set,
 * else an empty read-only file. A placeholder that already stands in the way is adopted (this
 * run removes it if it ends last), or, when this run is alone on the workspace and its maker
 * is dead, replaced. Returns 0 also when nothing is missing.
 */
static int placeholder_for(int ws, const char *rel, bool dir, bool alone,
			   struct sbx_placeholder **arr, size_t *n)
{
	char prefix[PATH_MAX];
	size_t len = strlen(rel), last = 0;
	if (len >= sizeof(prefix))
		return -ENAMETOOLONG;
	for (size_t i = 0; i <= len; i++) {
		if (rel[i] != '/' && rel[i] != '\0')
			continue;
		memcpy(prefix, rel, i);
		prefix[i] = '\0';
		int fd = open_beneath(ws, prefix, O_PATH);
		struct stat st;
		long pid;
		if (fd >= 0) {
			(void)close(fd);
			if (is_placeholder(ws, prefix, &st, &pid)) {
				bool dead = kill((pid_t)pid, 0) < 0 && errno == ESRCH;
				if (!alone || !dead)
					return add_placeholder(arr, n, prefix, &st, true);
				/* A dead supervisor's leftover, and nobody else uses it: anew. */
				if (unlinkat_beneath(ws, prefix, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
					return -EIO;
				fd = -ENOENT;
			}
		}
		if (fd >= 0) {
			last = i;
			continue;
		}
		if (fd == -ENOTDIR) {
			/* An existing non-directory ancestor already blocks the path: pin it. */
			prefix[last] = '\0';
			_cleanup_close_ int anc = open_beneath(ws, prefix, O_PATH);
			if (anc < 0)
				return anc;
			if (fstat(anc, &st) < 0)
				return -errno;
			return add_placeholder(arr, n, prefix, &st, false);
		}
		if (fd != -ENOENT)
			return fd; /* includes -ELOOP for a symlink on the way */
		/* An empty directory is invisible to git; a file stands where a file is expected. */
		bool make_dir = dir || i < len;
		_cleanup_close_ int created =
			make_dir ? mkdir_beneath(ws, prefix)
				 : open_beneath(ws, prefix, O_WRONLY | O_CREAT | O_EXCL);
		/*
		 * A concurrent run created it first: adopt it once its maker has marked it (it
		 * does so right after creating; wait up to 100 ms for that).
		 */
		for (int tries = 0; created == -EEXIST && tries < 100; tries++) {
			if (is_placeholder(ws, prefix, &st, &pid))
				return add_placeholder(arr, n, prefix, &st, true);
			struct timespec ms = { .tv_nsec = 1000000 };
			(void)nanosleep(&ms, NULL);
		}
		if (created < 0)
			return created;
		/* As for a directory: exactly 0444, whatever the umask took away. */
		if ((!make_dir && fchmod(created, 0444) < 0) || fstat(created, &st) < 0) {
			int r = -errno;
			(void)unlinkat_beneath(ws, prefix, make_dir ? AT_REMOVEDIR : 0);
			return r;
		}
		int r = add_placeholder(arr, n, prefix, &st, true);
		if (r < 0) {
			(void)unlinkat_beneath(ws, prefix, make_dir ? AT_REMOVEDIR : 0);
			return r;
		}
		mark_placeholder(created);
		return 0;
	}
	return 0;
}

/* ---- the top-level .git ---- */

/* The path of what fd is open on, as /proc tells it (canonical in our mount namespace). */
static int fd_path(int fd, char *out, size_t out_len)
{
	char link[64];
	(void)snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, out, out_len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= out_len - 1 || out[0] != '/')
		return -ENAMETOOLONG;
	out[n] = '\0';
	return 0;
}

/* path is dir or lies below it (both canonical). */
static bool path_in(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1)
		return true; /* dir is / */
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* in (absolute) with "", "." and ".." components folded lexically, into out (PATH_MAX). */
static void fold_path(const char *in, char *out)
{
	size_t o = 0;
	for (const char *p = in; *p;) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);
		if (len == 0 || (len == 1 && p[0] == '.')) {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--; /* and the slash before the name dropped */
		} else {
			out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p = end;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
}

/*
 * A pointer file as git reads one: at most POINTER_MAX bytes, trailing '\n' and '\r' dropped,
 * then (for a gitfile) the "gitdir: " prefix; the path is what follows, up to a NUL. Returns
 * 1 with the path in buf, 0 when there is no usable pointer (not a regular file, no prefix,
 * empty), or -errno (-EFBIG for a file larger than git would sensibly hold).
 */
#define POINTER_MAX 16384
static int read_pointer(int dfd, const char *name, bool beneath, const char *prefix, char *buf,
			size_t buf_len)
{
	_cleanup_close_ int fd = open_kind(dfd, name, beneath, S_IFREG);
	if (fd == -ENOENT || fd == -EMEDIUMTYPE)
		return 0;
	if (fd < 0)
		return fd;
	_cleanup_free_ char *data = malloc(POINTER_MAX + 1);
	if (!data)
		return -ENOMEM;
	int got = io_read_fd(fd, data, POINTER_MAX + 1); /* -EFBIG past POINTER_MAX bytes */
	if (got < 0)
		return got;
	size_t len = (size_t)got;
	while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r'))
		len--;
	data[len] = '\0';
	size_t plen = prefix ? strlen(prefix) : 0;
	if (len < plen || memcmp(data, prefix ? prefix : "", plen) != 0)
		return 0;
	const char *path = data + plen;
	size_t n = strlen(path);
	if (n == 0)
		return 0;
	if (n >= buf_len)
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	return 1;
}

/*
 * Where the absolute path abs really leads, as git would follow it: the canonical path of its
 * deepest ancestor that can be opened (symlinks followed), with the rest of abs appended and
 * folded, into out (PATH_MAX bytes).
 */
static int real_target(const char *abs, char *out)
{
	char head[PATH_MAX], canon[PATH_MAX], joined[PATH_MAX];
	size_t len = strlen(abs);
	if (len >= sizeof(head) || abs[0] != '/')
		return -EINVAL;
	memcpy(head, abs, len + 1);
	for (;;) {
		_cleanup_close_ int fd = open(head, O_PATH | O_CLOEXEC);
		if (fd >= 0) {
			int r = fd_path(fd, canon, sizeof(canon));
			if (r < 0)
				return r;
			/* abs + len: the part that could not be opened, from its '/' on. */
			int n = snprintf(joined, sizeof(joined), "%s%s", canon, abs + len);
			if (n < 0 || (size_t)n >= sizeof(joined))
				return -ENAMETOOLONG;
			fold_path(joined, out);
			return 0;
		}
		char *slash = strrchr(head, '/');
		if (slash == head && !head[1])
			return -ENOENT; /* not even "/" */
		len = (size_t)(slash - head);
		if (len == 0)
			head[1] = '\0'; /* "/" next */
		else
			*slash = '\0';
	}
}

/*
 * path, as git reads it from a pointer file (absolute, or relative to base, a canonical
 * directory), judged against the workspace (ws, canonical path wpath):
 * - inside it, when the names as written lead where git really goes (no symlink, no ".."
 *   after one): listed to be bound read-only, or, when missing, covered by an empty directory
 *   at its first missing component (placeholder_for);
 * - inside it in any other way (a symlink on the way, in or out of the workspace): the run is
 *   refused (-ELOOP), since the sandbox could turn a symlink or a directory on the way;
 * - the workspace itself: refused (-EINVAL), it cannot be read-only in mode direct;
 * - outside: nothing, the sandbox does not see it.
 * *out_fd gets an O_PATH fd of the target when it exists, else -1.
 */
static int protect_pointed(int ws, const char *wpath, const char *base, const char *path,
			   bool alone, struct sbx_placeholder **arr, size_t *n, int *out_fd)
{
	char abs[PATH_MAX], folded[PATH_MAX], real[PATH_MAX];
	*out_fd = -1;
	int len = path[0] == '/' ? snprintf(abs, sizeof(abs), "%s", path)
				 : snprintf(abs, sizeof(abs), "%s/%s", base, path);
	if (len < 0 || (size_t)len >= sizeof(abs))
		return -ENAMETOOLONG;
	fold_path(abs, folded);
	int r = real_target(abs, real);
	if (r < 0)
		return r;
	if (!path_in(folded, wpath) && !path_in(real, wpath)) {
		*out_fd = open(abs, O_PATH | O_CLOEXEC);
		return 0;
	}
	if (strcmp(folded, real) != 0)
		return -ELOOP;
	size_t wlen = strlen(wpath);
	const char *rel = wlen == 1 ? folded + 1 : folded + wlen + (folded[wlen] == '/');
	if (!*rel)
		return -EINVAL;
	_cleanup_close_ int fd = open_beneath(ws, rel, O_PATH);
	if (fd == -ENOENT || fd == -ENOTDIR)
		return placeholder_for(ws, rel, true, alone, arr, n);
	if (fd < 0)
		return fd; /* -ELOOP: a symlink on the way */
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	r = add_placeholder(arr, n, rel, &st, false);
	if (r >= 0)
		*out_fd = TAKE_FD(fd);
	return r;
}

/*
 * The top-level HEAD when .git is missing, or a directory without HEAD: git then asks whether
 * the workspace itself is a bare repository (HEAD, objects/ and refs/ at the top), and the
 * sandbox must not be able to make it one. An existing HEAD is listed to be bound read-only,
 * a missing one gets an empty directory (never a valid HEAD, and invisible to git status).
 */
static int protect_top_head(int ws, bool alone, struct sbx_placeholder **arr, size_t *n)
{
	_cleanup_close_ int fd = open_beneath(ws, "HEAD", O_PATH);
	if (fd == -ENOENT)
		return placeholder_for(ws, "HEAD", true, alone, arr, n);
	if (fd < 0)
		return fd;
	struct stat st;
	long pid;
	if (is_placeholder(ws, "HEAD", &st, &pid))
		return placeholder_for(ws, "HEAD", true, alone, arr, n);
	if (fstat(fd, &st) < 0)
		return -errno;
	return add_placeholder(arr, n, "HEAD", &st, false);
}

/*
 * The top-level .git, which mode direct keeps read-only whole (the mount code binds it):
 * - missing: an empty directory stands there (an empty .git is no repository to git, and,
 *   unlike a file, does not make git die with "invalid gitfile format");
 * - a gitfile ("gitdir: PATH"): the directory it names, and the "commondir" that directory
 *   names in turn (where a linked worktree's config and hooks are), go through
 *   protect_pointed();
 * - a directory: nothing here.
 * Then the top-level HEAD, when git would go on to ask whether the workspace is a bare
 * repository.
 */
static int protect_git(int ws, bool alone, struct sbx_placeholder **arr, size_t *n)
{
	int r = placeholder_for(ws, ".git", true, alone, arr, n);
	if (r < 0)
		return r;
	if (has_entry(*arr, *n, ".git"))
		return protect_top_head(ws, alone, arr, n);
	_cleanup_close_ int fd = open_beneath(ws, ".git", O_PATH);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode)) {
		_cleanup_close_ int head = open_beneath(ws, ".git/HEAD", O_PATH);
		return head >= 0 ? 0 : protect_top_head(ws, alone, arr, n);
	}
	if (!S_ISREG(st.st_mode))
		return 0; /* the mount code refuses it */

	char wpath[PATH_MAX], path[PATH_MAX], gitdir[PATH_MAX];
	r = fd_path(ws, wpath, sizeof(wpath));
	if (r < 0)
		return r;
	r = read_pointer(ws, ".git", true, "gitdir: ", path, sizeof(path));
	if (r <= 0)
		return r; /* no pointer: git refuses the file, and it is bound read-only */
	_cleanup_close_ int gfd = -1;
	r = protect_pointed(ws, wpath, wpath, path, alone, arr, n, &gfd);
	if (r < 0 || gfd < 0)
		return r;
	r = fd_path(gfd, gitdir, sizeof(gitdir));
	if (r < 0)
		return r;
	r = read_pointer(gfd, "commondir", false, NULL, path, sizeof(path));
	if (r <= 0)
		return r;
	_cleanup_close_ int cfd = -1;
	return protect_pointed(ws, wpath, gitdir, path, alone, arr, n, &cfd);
}

/* rel is .git or lies below it. */
static bool is_git_path(const char *rel)
{
	return strncmp(rel, ".git", 4) == 0 && (rel[4] == '\0' || rel[4] == '/');
}

int sbx_workspace_lock(int lock_dir_fd, int workspace_fd, int *out_fd, bool *out_alone)
{
	struct stat st;
	if (fstat(workspace_fd, &st) < 0)
		return -errno;
	char name[64];
	(void)snprintf(name, sizeof(name), "%llx-%llx", (unsigned long long)st.st_dev,
		       (unsigned long long)st.st_ino);
	_cleanup_close_ int fd = openat(lock_dir_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
					0600);
	if (fd < 0)
		return -errno;
	/*
	 * Alone (the exclusive lock is free): stale placeholders may go. Either way the run then
	 * holds the lock shared; it removes placeholders only if it can take the lock exclusively
	 * at the end, i.e. when no other run on this workspace still relies on them.
	 */
	bool alone = flock(fd, LOCK_EX | LOCK_NB) == 0;
	if (!alone && errno != EWOULDBLOCK)
		return -errno;
	int r;
	while ((r = flock(fd, LOCK_SH)) < 0 && errno == EINTR)
		;
	if (r < 0)
		return -errno;
	*out_fd = TAKE_FD(fd);
	*out_alone = alone;
	return 0;
}

int sbx_placeholders_create(int workspace_fd, const struct pol_policy *pol, bool alone,
			    struct sbx_placeholder **out, size_t *out_n)
{
	struct sbx_placeholder *arr = NULL;
	size_t n = 0;
	int r = protect_git(workspace_fd, alone, &arr, &n);
	for (size_t i = 0; i < pol->n_protect && r >= 0; i++) {
		/* A trailing '/' says the entry is a directory. */
		char rel[PATH_MAX];
		size_t len = strlen(pol->protect[i]);
		bool dir = len > 1 && pol->protect[i][len - 1] == '/';
		if (len >= sizeof(rel)) {
			r = -ENAMETOOLONG;
			break;
		}
		memcpy(rel, pol->protect[i], len + 1);
		if (dir)
			rel[len - 1] = '\0';
		/* .git is read-only whole, and what is below it was handled with it. */
		if (is_git_path(rel) || in_list(pol->allow_create, pol->n_allow_create, rel))
			continue;
		r = placeholder_for(workspace_fd, rel, dir, alone, &arr, &n);
	}
	if (r < 0) {
		(void)sbx_placeholders_remove(workspace_fd, -1, arr, n);
		return r;
	}
	*out = arr;
	*out_n = n;
	return 0;
}

int sbx_placeholders_remove(int workspace_fd, int lock_fd, struct sbx_placeholder *ph, size_t n)
{
	int left = 0;
	/* Only the last run on the workspace removes: another may still rely on them. */
	bool last = lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) == 0;
	/* Reverse order, so that a placeholder inside an earlier one's parent goes first. */
	for (size_t i = n; i-- > 0;) {
		if (!ph[i].created || !last) {
			free(ph[i].rel);
			continue;
		}
		_cleanup_close_ int fd = open_beneath(workspace_fd, ph[i].rel, O_PATH);
		struct stat st;
		bool same = fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == ph[i].dev &&
			    st.st_ino == ph[i].ino;
		/* Still our empty file or directory (rmdir refuses one that is not empty). */
		if (same && S_ISREG(st.st_mode) && st.st_size == 0) {
			if (unlinkat_beneath(workspace_fd, ph[i].rel, 0) < 0)
				left++;
		} else if (same && S_ISDIR(st.st_mode)) {
			if (unlinkat_beneath(workspace_fd, ph[i].rel, AT_REMOVEDIR) < 0)
				left++;
		} else if (fd != -ENOENT) {
			left++;
		}
		free(ph[i].rel);
	}
	free(ph);
	return left;
}
