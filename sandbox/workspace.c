/* SPDX-License-Identifier: MIT */
/*
 * Host-side workspace preparation, done by the supervisor before the sandbox exists: the
 * idmapped workspace tree (root mode) and placeholders for protected paths that are missing.
 */
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
	struct open_how how = {
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	if (flags & O_CREAT)
		how.mode = 0444;
	int fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

/* unlinkat() of rel through a parent resolved beneath dfd, so no symlink is followed. */
static int unlinkat_beneath(int dfd, const char *rel)
{
	const char *slash = strrchr(rel, '/');
	if (!slash)
		return unlinkat(dfd, rel, 0) < 0 ? -errno : 0;
	char parent[PATH_MAX];
	size_t plen = (size_t)(slash - rel);
	if (plen >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, rel, plen);
	parent[plen] = '\0';
	_cleanup_close_ int pfd = open_beneath(dfd, parent, O_PATH | O_DIRECTORY);
	if (pfd < 0)
		return pfd;
	return unlinkat(pfd, slash + 1, 0) < 0 ? -errno : 0;
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
 * True when rel is a placeholder some supervisor made: an empty regular file, mode 0444,
 * carrying our mark. Fills *st and the marking pid.
 */
static bool is_placeholder(int ws, const char *rel, struct stat *st, long *out_pid)
{
	_cleanup_close_ int fd = open_beneath(ws, rel, O_RDONLY);
	if (fd < 0)
		return false;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || st->st_size != 0 ||
	    (st->st_mode & 07777) != 0444)
		return false;
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
 * For one protected path: find its first missing component and create an empty read-only
 * file there. A placeholder that already stands in the way is adopted (this run removes it
 * if it ends last), or, when this run is alone on the workspace and its maker is dead,
 * replaced. Returns 0 also when nothing is missing.
 */
static int placeholder_for(int ws, const char *rel, bool alone, struct sbx_placeholder **arr,
			   size_t *n)
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
				if (unlinkat_beneath(ws, prefix) < 0)
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
		_cleanup_close_ int created = open_beneath(ws, prefix, O_WRONLY | O_CREAT | O_EXCL);
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
		if (fstat(created, &st) < 0)
			return -errno;
		int r = add_placeholder(arr, n, prefix, &st, true);
		if (r < 0) {
			(void)unlinkat_beneath(ws, prefix);
			return r;
		}
		mark_placeholder(created);
		return 0;
	}
	return 0;
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
	int r = 0;
	for (size_t i = 0; i < pol->n_protect && r >= 0; i++) {
		if (in_list(pol->allow_create, pol->n_allow_create, pol->protect[i]))
			continue;
		r = placeholder_for(workspace_fd, pol->protect[i], alone, &arr, &n);
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
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 &&
		    st.st_dev == ph[i].dev && st.st_ino == ph[i].ino) {
			if (unlinkat_beneath(workspace_fd, ph[i].rel) < 0)
				left++;
		} else if (fd != -ENOENT) {
			left++;
		}
		free(ph[i].rel);
	}
	free(ph);
	return left;
}
