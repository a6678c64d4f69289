/* SPDX-License-Identifier: MIT */
/*
 * The sandbox filesystem: a fresh tmpfs root, read-only binds of host paths, synthetic /etc
 * files, the workspace, /tmp, a fresh /proc with sensitive entries masked, a minimal /dev,
 * then pivot_root with the old root detached.
 *
 * Every host source is captured first as a detached mount (open_tree OPEN_TREE_CLONE), with
 * its flags set on the detached copy (mount_setattr, recursively), and attached to the new
 * root fd-relatively (move_mount). Nothing is resolved by path after the new root exists, so
 * the new root hiding a host path cannot change what a bind points at.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cleanup.h"
#include "io-util.h"
#include "policy.h"
#include "sandbox.h"

/* Where the new root is assembled before pivot_root; any directory works, it is our ns. */
#define SBX_STAGING "/tmp"

/* Size of the root and /dev tmpfs; they only hold mount points and a few small files. */
#define SBX_ROOT_TMPFS_SIZE "8m"
#define SBX_DEV_TMPFS_SIZE "64k"

/* The step that failed, in f: what, and arg after a space when there is one. Returns err. */
static int set_step(struct fail *f, int err, const char *what, const char *arg)
{
	return fail_set(f, err, "%s%s%s", what, arg ? " " : "", arg ? arg : "");
}

/*
 * A detached copy of the mount tree at dfd/path, made private: a clone stays in its source's
 * peer group, and a mount made on it later would otherwise reach the host.
 */
static int clone_tree(int dfd, const char *path, bool recursive)
{
	unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC;
	if (recursive)
		flags |= AT_RECURSIVE;
	if (!*path)
		flags |= AT_EMPTY_PATH;
	_cleanup_close_ int fd = open_tree(dfd, path, flags);
	if (fd < 0)
		return -errno;
	struct mount_attr attr = { .propagation = MS_PRIVATE };
	if (mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr,
			  sizeof(attr)) < 0)
		return -errno;
	return TAKE_FD(fd);
}

static int set_attr(int tree, uint64_t attrs, bool recursive)
{
	struct mount_attr attr = { .attr_set = attrs };
	unsigned flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
	if (mount_setattr(tree, "", flags, &attr, sizeof(attr)) < 0)
		return -errno;
	return 0;
}

static int attach(int tree, int dfd, const char *path)
{
	unsigned flags = MOVE_MOUNT_F_EMPTY_PATH | (*path ? 0 : MOVE_MOUNT_T_EMPTY_PATH);
	if (move_mount(tree, "", dfd, path, flags) < 0)
		return -errno;
	return 0;
}

/* mkdir -p of a relative path below dfd; every component is created 0755 if missing. */
static int mkdir_p(int dfd, const char *rel)
{
	char buf[PATH_MAX];
	size_t len = strlen(rel);
	if (len == 0 || len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, rel, len + 1);
	for (char *p = buf;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (buf[0] && mkdirat(dfd, buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = saved;
		if (!saved)
			break;
	}
	return 0;
}

/* mkdir_p of the folder rel lies in (nothing for a name at the top). */
static int mkdir_parent(int dfd, const char *rel)
{
	const char *slash = strrchr(rel, '/');
	if (!slash)
		return 0;
	char parent[PATH_MAX];
	size_t plen = (size_t)(slash - rel);
	if (plen >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, rel, plen);
	parent[plen] = '\0';
	return mkdir_p(dfd, parent);
}

/* Creates the mount point for a tree: a directory, or an empty file under created parents. */
static int make_mount_point(int dfd, const char *rel, bool is_dir)
{
	if (is_dir)
		return mkdir_p(dfd, rel);
	int r = mkdir_parent(dfd, rel);
	if (r < 0)
		return r;
	int fd = openat(dfd, rel, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0)
		return -errno;
	(void)close(fd);
	return 0;
}

/* Writes a small synthetic file, refusing to follow or reuse anything. */
static int write_new_file(int dfd, const char *rel, const char *text, mode_t mode)
{
	return io_write_file_at(dfd, rel, O_CREAT | O_EXCL, mode, text);
}

/* A new filesystem instance as a detached mount. opts are key=value pairs, NULL-terminated. */
static int new_fs(const char *type, const char *const *opts, uint64_t attrs)
{
	_cleanup_close_ int fs = fsopen(type, FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	for (size_t i = 0; opts && opts[i]; i += 2) {
		if (fsconfig(fs, FSCONFIG_SET_STRING, opts[i], opts[i + 1], 0) < 0)
			return -errno;
	}
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -errno;
	int mnt = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned)attrs);
	return mnt < 0 ? -errno : mnt;
}

static int mount_new_fs(int root, const char *rel, const char *type, const char *const *opts,
			uint64_t attrs)
{
	_cleanup_close_ int mnt = new_fs(type, opts, attrs);
	if (mnt < 0)
		return mnt;
	int r = mkdir_p(root, rel);
	if (r < 0)
		return r;
	return attach(mnt, root, rel);
}

/* One host source captured before the new root exists. */
struct capture {
	const char *dst;   /* sandbox path, absolute */
	int tree;          /* detached mount, or -1 */
	bool is_dir;
	char *link;        /* symlink target when the source is a symlink */
};

static void capture_done(struct capture *c)
{
	if (c->tree >= 0)
		(void)close(c->tree);
	c->tree = -1;
	free(c->link);
	c->link = NULL;
}

/*
 * Captures host path src: a symlink is remembered as its target (recreated, never followed);
 * anything else becomes a detached recursive bind with attrs set. Returns 1 when captured,
 * 0 when src is missing and optional, or -errno.
 */
static int capture_source(const char *src, bool optional, uint64_t attrs, struct capture *out)
{
	struct stat st;
	if (lstat(src, &st) < 0) {
		if (errno == ENOENT && optional)
			return 0;
		return -errno;
	}
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(src, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		out->link = strdup(target);
		if (!out->link)
			return -ENOMEM;
		return 1;
	}
	int tree = clone_tree(AT_FDCWD, src, true);
	if (tree < 0)
		return tree;
	int r = set_attr(tree, attrs, true);
	if (r < 0) {
		(void)close(tree);
		return r;
	}
	out->tree = tree;
	out->is_dir = S_ISDIR(st.st_mode);
	return 1;
}

static int place_capture(int root, const struct capture *c)
{
	const char *rel = c->dst + 1; /* sandbox paths are absolute and normalised */
	if (c->link) {
		int r = mkdir_parent(root, rel);
		if (r < 0)
			return r;
		if (symlinkat(c->link, root, rel) < 0)
			return -errno;
		return 0;
	}
	int r = make_mount_point(root, rel, c->is_dir);
	if (r < 0)
		return r;
	return attach(c->tree, root, rel);
}

/* /proc entries that reveal or change host state; each is covered if it exists. */
static const char *const proc_masked_files[] = {
	"kcore", "sysrq-trigger", "timer_list", "keys", "key-users", "latency_stats",
	"sched_debug", "kallsyms", "kmsg", "kpagecount", "kpageflags", "kpagecgroup",
	"config.gz", "mtrr", "vmallocinfo",
};
static const char *const proc_masked_dirs[] = { "acpi", "scsi", "asound", "driver" };
static const char *const proc_readonly_dirs[] = { "sys", "bus", "fs", "irq" };

static int setup_proc(int root, struct fail *f)
{
	static const char *const proc_opts[] = { "hidepid", "invisible", NULL };
	_cleanup_close_ int mnt = new_fs("proc", proc_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
							       MOUNT_ATTR_NOEXEC);
	if (mnt < 0)
		return set_step(f, mnt, "mount proc", NULL);
	int r = mkdir_p(root, "proc");
	if (r < 0)
		return set_step(f, r, "create /proc", NULL);
	r = attach(mnt, root, "proc");
	if (r < 0)
		return set_step(f, r, "attach /proc", NULL);

	_cleanup_close_ int proc = openat(root, "proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (proc < 0)
		return set_step(f, -errno, "open /proc", NULL);

	for (size_t i = 0; i < ELEMENTSOF(proc_readonly_dirs); i++) {
		_cleanup_close_ int tree = clone_tree(proc, proc_readonly_dirs[i], true);
		if (tree == -ENOENT)
			continue;
		if (tree < 0)
			return set_step(f, tree, "clone /proc/", proc_readonly_dirs[i]);
		r = set_attr(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					   MOUNT_ATTR_NOEXEC, true);
		if (r >= 0)
			r = attach(tree, proc, proc_readonly_dirs[i]);
		if (r < 0)
			return set_step(f, r, "make read-only /proc/",
					proc_readonly_dirs[i]);
	}
	/*
	 * Each mask is one mount: the first of each kind is made (a read-only /dev/null bind,
	 * an empty read-only tmpfs) and the others are clones of it, which keep its flags, so
	 * no further superblock or mount_setattr is needed.
	 */
	const char *first = NULL;
	for (size_t i = 0; i < ELEMENTSOF(proc_masked_files); i++) {
		if (faccessat(proc, proc_masked_files[i], F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		_cleanup_close_ int tree = first ? clone_tree(proc, first, false)
						 : clone_tree(AT_FDCWD, "/dev/null", false);
		if (tree < 0)
			return set_step(f, tree, "clone the /proc mask", NULL);
		r = first ? 0 : set_attr(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
						       MOUNT_ATTR_NOEXEC, false);
		if (r >= 0)
			r = attach(tree, proc, proc_masked_files[i]);
		if (r < 0)
			return set_step(f, r, "mask /proc/", proc_masked_files[i]);
		first = first ? first : proc_masked_files[i];
	}
	first = NULL;
	for (size_t i = 0; i < ELEMENTSOF(proc_masked_dirs); i++) {
		if (faccessat(proc, proc_masked_dirs[i], F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		static const char *const opts[] = { "size", "4k", "mode", "0555", NULL };
		_cleanup_close_ int tree =
			first ? clone_tree(proc, first, false)
			      : new_fs("tmpfs", opts, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
							      MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
		r = tree;
		if (r >= 0)
			r = attach(tree, proc, proc_masked_dirs[i]);
		if (r < 0)
			return set_step(f, r, "mask /proc/", proc_masked_dirs[i]);
		first = first ? first : proc_masked_dirs[i];
	}
	return 0;
}

static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };

static int setup_dev(int root, const char *tmp_size, struct fail *f)
{
	static const char *const dev_opts[] = { "size", SBX_DEV_TMPFS_SIZE, "mode", "0755", NULL };
	int r = mount_new_fs(root, "dev", "tmpfs", dev_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	if (r < 0)
		return set_step(f, r, "mount /dev", NULL);
	_cleanup_close_ int dev = openat(root, "dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dev < 0)
		return set_step(f, -errno, "open /dev", NULL);

	for (size_t i = 0; i < ELEMENTSOF(dev_nodes); i++) {
		char src[32];
		(void)snprintf(src, sizeof(src), "/dev/%s", dev_nodes[i]);
		/* The device binds are the only place without nodev, necessarily. */
		_cleanup_close_ int tree = clone_tree(AT_FDCWD, src, false);
		if (tree < 0)
			return set_step(f, tree, "bind", src);
		r = set_attr(tree, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false);
		if (r >= 0)
			r = make_mount_point(dev, dev_nodes[i], false);
		if (r >= 0)
			r = attach(tree, dev, dev_nodes[i]);
		if (r < 0)
			return set_step(f, r, "bind", src);
	}

	static const char *const pts_opts[] = { "newinstance", "", "ptmxmode", "0666", "mode",
						"0620", NULL };
	_cleanup_close_ int pts = fsopen("devpts", FSOPEN_CLOEXEC);
	if (pts < 0)
		return set_step(f, -errno, "mount /dev/pts", NULL);
	if (fsconfig(pts, FSCONFIG_SET_FLAG, pts_opts[0], NULL, 0) < 0 ||
	    fsconfig(pts, FSCONFIG_SET_STRING, pts_opts[2], pts_opts[3], 0) < 0 ||
	    fsconfig(pts, FSCONFIG_SET_STRING, pts_opts[4], pts_opts[5], 0) < 0 ||
	    fsconfig(pts, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return set_step(f, -errno, "configure /dev/pts", NULL);
	_cleanup_close_ int pts_mnt =
		fsmount(pts, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	if (pts_mnt < 0)
		return set_step(f, -errno, "mount /dev/pts", NULL);
	r = mkdir_p(dev, "pts");
	if (r >= 0)
		r = attach(pts_mnt, dev, "pts");
	if (r < 0)
		return set_step(f, r, "attach /dev/pts", NULL);

	const char *shm_opts[] = { "size", tmp_size, "mode", "1777", NULL };
	r = mount_new_fs(dev, "shm", "tmpfs", shm_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (r < 0)
		return set_step(f, r, "mount /dev/shm", NULL);

	static const char *const links[][2] = {
		{ "pts/ptmx", "ptmx" },		  { "/proc/self/fd", "fd" },
		{ "/proc/self/fd/0", "stdin" }, { "/proc/self/fd/1", "stdout" },
		{ "/proc/self/fd/2", "stderr" },
	};
	for (size_t i = 0; i < ELEMENTSOF(links); i++) {
		if (symlinkat(links[i][0], dev, links[i][1]) < 0)
			return set_step(f, -errno, "link /dev/", links[i][1]);
	}
	/* Only mount points and links live here: make the /dev tmpfs itself read-only. */
	r = set_attr(dev, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false);
	if (r < 0)
		return set_step(f, r, "make /dev read-only", NULL);
	return 0;
}

static int setup_etc(int root, const struct pol_policy *pol, struct fail *f)
{
	char text[1024];
	/* With the host's uts namespace shared, /etc/hostname and /etc/hosts tell its name. */
	struct utsname u;
	const char *hostname = pol->hostname;
	if (!pol->namespaces[POL_NS_UTS] && uname(&u) == 0)
		hostname = u.nodename;
	int r = mkdir_p(root, "etc");
	if (r < 0)
		return set_step(f, r, "create /etc", NULL);

	(void)snprintf(text, sizeof(text),
		       "root:x:0:0:root:/root:/usr/sbin/nologin\n"
		       "%s:x:%u:%u:%s:/home/%s:/bin/sh\n"
		       "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		       pol->user_name, pol->uid, pol->gid, pol->user_name, pol->user_name);
	r = write_new_file(root, "etc/passwd", text, 0644);
	if (r < 0)
		return set_step(f, r, "write /etc/passwd", NULL);

	(void)snprintf(text, sizeof(text), "root:x:0:\n%s:x:%u:\nnogroup:x:65534:\n",
		       pol->user_name, pol->gid);
	r = write_new_file(root, "etc/group", text, 0644);
	if (r < 0)
		return set_step(f, r, "write /etc/group", NULL);

	(void)snprintf(text, sizeof(text), "%s\n", hostname);
	r = write_new_file(root, "etc/hostname", text, 0644);
	if (r < 0)
		return set_step(f, r, "write /etc/hostname", NULL);

	(void)snprintf(text, sizeof(text), "127.0.0.1\tlocalhost %s\n::1\tlocalhost\n",
		       hostname);
	r = write_new_file(root, "etc/hosts", text, 0644);
	if (r < 0)
		return set_step(f, r, "write /etc/hosts", NULL);
	return 0;
}

/* A workspace-relative path without a trailing '/': borrowed text and its length. */
struct ws_rel {
	const char *s;
	size_t len;
};

/* a lies strictly above b. */
static bool rel_above(const struct ws_rel *a, const struct ws_rel *b)
{
	return a->len < b->len && memcmp(a->s, b->s, a->len) == 0 && b->s[a->len] == '/';
}

static bool rel_same(const struct ws_rel *a, const struct ws_rel *b)
{
	return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
}

/*
 * r resolved beneath ws, never through a symlink (a final one is opened itself), as an O_PATH
 * fd, or -errno. buf (PATH_MAX bytes) gets r as a string, for messages.
 */
static int open_ws_rel(int ws, const struct ws_rel *r, char *buf)
{
	if (r->len >= PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(buf, r->s, r->len);
	buf[r->len] = '\0';
	return io_openat2(ws, buf, O_PATH | O_NOFOLLOW, IO_RESOLVE_BENEATH_NO_LINKS);
}

/* The tree at fd, with everything mounted below it, bound onto itself with attrs added. */
static int bind_onto_itself(int fd, uint64_t attrs)
{
	_cleanup_close_ int tree = clone_tree(fd, "", true);
	if (tree < 0)
		return tree;
	int r = set_attr(tree, attrs, true);
	return r < 0 ? r : attach(tree, fd, "");
}

static int rel_shorter_first(const void *a, const void *b)
{
	const struct ws_rel *x = a, *y = b;
	return x->len < y->len ? -1 : x->len > y->len;
}

/*
 * Workspace hardening inside the sandbox view (workspace mode direct). Bound read-only onto
 * itself, with everything below it: the top-level .git whatever it is (directory, gitfile, or
 * the supervisor's empty placeholder directory), every filesystem.protect entry that exists
 * (a trailing '/' dropped), and every entry the supervisor listed (placeholders, existing
 * non-directories in the way, the directories a .git file points to, a top-level HEAD). An
 * entry below another one is left to it (".git/hooks" is inside ".git"). A mount point cannot
 * be renamed, removed or replaced, so neither can these entries; and each directory above one
 * of them is bound onto itself too, writable, so that it cannot be renamed away with the
 * entry inside and a fresh one made at the old name. Missing entries are skipped: the
 * supervisor covered them, or allow_create lets them be made. Resolution never follows a
 * symlink; a protected path that is a symlink, or is reached through one, refuses the run.
 */
static int protect_workspace(int root, const struct sbx_config *cfg, struct fail *f)
{
	const struct pol_policy *pol = cfg->pol;
	_cleanup_close_ int ws = openat(root, "workspace", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ws < 0)
		return set_step(f, -errno, "open /workspace", NULL);

	size_t n = 1 + pol->n_protect + cfg->n_placeholders, n_pins = 0;
	_cleanup_free_ struct ws_rel *rels = calloc(n, sizeof(*rels));
	_cleanup_free_ bool *keep = calloc(n, sizeof(*keep));
	_cleanup_free_ struct ws_rel *pins = NULL;
	if (!rels || !keep)
		return set_step(f, -ENOMEM, "allocate", NULL);
	rels[0] = (struct ws_rel){ ".git", 4 };
	for (size_t i = 0; i < pol->n_protect; i++) {
		size_t len = strlen(pol->protect[i]);
		if (len > 1 && pol->protect[i][len - 1] == '/')
			len--;
		rels[1 + i] = (struct ws_rel){ pol->protect[i], len };
	}
	for (size_t i = 0; i < cfg->n_placeholders; i++) {
		const char *rel = cfg->placeholders[i].rel;
		rels[1 + pol->n_protect + i] = (struct ws_rel){ rel, strlen(rel) };
	}

	char buf[PATH_MAX];
	for (size_t i = 0; i < n; i++) {
		bool covered = false;
		for (size_t j = 0; j < n && !covered; j++)
			covered = rel_above(&rels[j], &rels[i]) || (j < i && rel_same(&rels[j], &rels[i]));
		if (covered)
			continue;
		_cleanup_close_ int fd = open_ws_rel(ws, &rels[i], buf);
		if (fd == -ENOENT || fd == -ENOTDIR)
			continue; /* covered by a placeholder or blocker, or allowed to be created */
		if (fd < 0)
			return set_step(f, fd, "resolve protected path", buf);
		struct stat st;
		if (fstat(fd, &st) < 0)
			return set_step(f, -errno, "stat protected path", buf);
		if (S_ISLNK(st.st_mode))
			return set_step(f, -ELOOP, "protected path is a symlink:", buf);
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
			return set_step(f, -EINVAL, "protected path is not a file:", buf);
		keep[i] = true;
		/* Its ancestors become pins (each once). */
		for (size_t k = 1; k < rels[i].len; k++) {
			if (rels[i].s[k] != '/')
				continue;
			struct ws_rel a = { rels[i].s, k };
			bool seen = false;
			for (size_t p = 0; p < n_pins && !seen; p++)
				seen = rel_same(&pins[p], &a);
			if (seen)
				continue;
			struct ws_rel *grown = reallocarray(pins, n_pins + 1, sizeof(*pins));
			if (!grown)
				return set_step(f, -ENOMEM, "allocate", NULL);
			pins = grown;
			pins[n_pins++] = a;
		}
	}
	/* A pin is mounted before anything below it, so that what is below stays in view. */
	if (n_pins)
		qsort(pins, n_pins, sizeof(*pins), rel_shorter_first);
	for (size_t p = 0; p < n_pins; p++) {
		_cleanup_close_ int fd = open_ws_rel(ws, &pins[p], buf);
		int r = fd < 0 ? fd : bind_onto_itself(fd, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
		if (r < 0)
			return set_step(f, r, "pin the directory above a protected path",
					buf);
	}
	for (size_t i = 0; i < n; i++) {
		if (!keep[i])
			continue;
		/* Resolved again: a pin may now be mounted on the way. */
		_cleanup_close_ int fd = open_ws_rel(ws, &rels[i], buf);
		int r = fd < 0 ? fd
			       : bind_onto_itself(fd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
							      MOUNT_ATTR_NODEV);
		if (r < 0)
			return set_step(f, r, "bind protected path", buf);
	}
	return 0;
}

/* The value of name in a NULL-terminated NAME=value environment, or NULL. */
static const char *env_value(char *const *envp, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=')
			return envp[i] + len + 1;
	return NULL;
}

/* path (absolute) without its leading "/" when it is normalised and lies below dir, else NULL. */
static const char *below_dir(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strncmp(path, dir, n) != 0 || path[n] != '/')
		return NULL;
	for (const char *p = path + 1;;) {
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);
		if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return NULL;
		if (!*end)
			return path + 1;
		p = end + 1;
	}
}

/*
 * The placeholders the supervisor made in the workspace (sandbox/workspace.c) are no work of
 * the sandbox's: its git must not offer them to `git add`. They are listed, anchored at the
 * top of the work tree, in the global excludes file git reads by default:
 * $XDG_CONFIG_HOME/git/ignore, or $HOME/.config/git/ignore, from the sandbox's environment.
 * It is written only when that lies in the sandbox's own home (a fresh tmpfs); a HOME or
 * XDG_CONFIG_HOME elsewhere gets nothing. The file belongs to the sandbox user, who may change
 * it: it spares git's users a surprise and protects nothing.
 */
static int write_git_excludes(int root, const struct sbx_config *cfg, struct fail *f)
{
	size_t n_listed = 0;
	for (size_t i = 0; i < cfg->n_placeholders; i++)
		n_listed += cfg->placeholders[i].created && strcmp(cfg->placeholders[i].rel, ".git");
	if (!n_listed)
		return 0;
	const char *xdg = env_value(cfg->envp, "XDG_CONFIG_HOME");
	const char *home = env_value(cfg->envp, "HOME");
	char dir[PATH_MAX], home_dir[PATH_MAX], file[PATH_MAX];
	int len;
	if (xdg && *xdg)
		len = snprintf(dir, sizeof(dir), "%s/git", xdg);
	else if (home)
		len = snprintf(dir, sizeof(dir), "%s/.config/git", home);
	else
		return 0;
	(void)snprintf(home_dir, sizeof(home_dir), "/home/%s", cfg->pol->user_name);
	const char *rel = len > 0 && (size_t)len < sizeof(dir) ? below_dir(dir, home_dir) : NULL;
	if (!rel)
		return 0;
	int r = mkdir_p(root, rel);
	if (r < 0)
		return set_step(f, r, "create", dir);
	len = snprintf(file, sizeof(file), "%s/ignore", rel);
	if (len < 0 || (size_t)len >= sizeof(file))
		return set_step(f, -ENAMETOOLONG, "write git's excludes file in", dir);
	_cleanup_close_ int fd =
		openat(root, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return set_step(f, -errno, "write git's excludes file in", dir);
	static const char head[] = "# warden: placeholders for protected paths, there only while "
				   "the run lasts (docs/workspace.md)\n";
	r = io_write_all(fd, head, sizeof(head) - 1);
	for (size_t i = 0; i < cfg->n_placeholders && r >= 0; i++) {
		const struct sbx_placeholder *ph = &cfg->placeholders[i];
		if (!ph->created || strcmp(ph->rel, ".git") == 0)
			continue;
		/* "/name", with what gitignore would read as a pattern escaped. */
		char line[2 * PATH_MAX + 3];
		size_t o = 0;
		bool ok = true;
		line[o++] = '/';
		for (const char *c = ph->rel; *c && ok; c++) {
			ok = (unsigned char)*c >= 0x20 && *c != 0x7f;
			if (strchr("\\*?[ !#", *c))
				line[o++] = '\\';
			line[o++] = *c;
		}
		line[o++] = '\n';
		if (ok)
			r = io_write_all(fd, line, o);
	}
	if (r < 0)
		return set_step(f, r, "write git's excludes file in", dir);
	return 0;
}

/*
 * path resolved again in this mount namespace (without following a final symlink), as an
 * O_PATH directory fd, only if it leads to the very directory that want_fd (the
 * supervisor's, pointing into its namespace) is.
 */
static int reopen_same(int want_fd, const char *path)
{
	struct stat want, got;
	if (fstat(want_fd, &want) < 0)
		return -errno;
	_cleanup_close_ int fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &got) < 0)
		return -errno;
	if (got.st_dev != want.st_dev || got.st_ino != want.st_ino)
		return -ESTALE;
	return TAKE_FD(fd);
}

/*
 * A detached copy of the workspace. open_tree() only clones mounts of our own mount
 * namespace, and the supervisor's descriptor points into its namespace, so the path is
 * resolved again here and must lead to the very directory the supervisor opened.
 */
static int clone_workspace(const struct sbx_config *cfg)
{
	_cleanup_close_ int fd = reopen_same(cfg->workspace_fd, cfg->workspace_path);
	return fd < 0 ? fd : clone_tree(fd, "", false);
}

/*
 * filesystem.hide: each expanded path is covered, a directory by an empty read-only tmpfs, anything
 * else by /dev/null (reads as empty). Resolution never follows a symlink; a path that vanished
 * since the supervisor's walk is skipped (there is nothing left to read).
 */
static int hide_paths(int root, const struct sbx_config *cfg, struct fail *f)
{
	if (!cfg->n_hidden)
		return 0;
	_cleanup_close_ int ws = openat(root, "workspace", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ws < 0)
		return set_step(f, -errno, "open /workspace", NULL);
	for (size_t i = 0; i < cfg->n_hidden; i++) {
		const char *rel = cfg->hidden[i];
		_cleanup_close_ int fd = io_openat2(ws, rel, O_PATH | O_NOFOLLOW,
						    IO_RESOLVE_BENEATH_NO_LINKS);
		if (fd == -ENOENT)
			continue;
		if (fd < 0)
			return set_step(f, fd, "resolve hidden path", rel);
		struct stat st;
		if (fstat(fd, &st) < 0)
			return set_step(f, -errno, "stat hidden path", rel);
		if (S_ISLNK(st.st_mode))
			continue;
		_cleanup_close_ int tree = -1;
		if (S_ISDIR(st.st_mode)) {
			static const char *const opts[] = { "size", "4k", "mode", "0555", NULL };
			tree = new_fs("tmpfs", opts, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
							 MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
		} else {
			tree = clone_tree(AT_FDCWD, "/dev/null", false);
			if (tree >= 0) {
				int r = set_attr(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
							       MOUNT_ATTR_NOEXEC, false);
				if (r < 0) {
					(void)close(TAKE_FD(tree));
					tree = r;
				}
			}
		}
		int r = tree < 0 ? tree : attach(tree, fd, "");
		if (r < 0)
			return set_step(f, r, "hide", rel);
	}
	return 0;
}

/*
 * The reference folder of an evaluation: a directory (never a symlink, and never followed
 * to one), bound read-only with everything below it.
 */
static int capture_reference(const char *path)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int tree = clone_tree(fd, "", true);
	if (tree < 0)
		return tree;
	int r = set_attr(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true);
	if (r < 0) {
		(void)close(tree);
		return r;
	}
	return tree;
}

/*
 * Puts an overlay over the workspace already attached at root/workspace: that tree is the
 * only lower layer; the upper and work folders are in a changeset's (or a scratch) layer
 * folder (layer: a detached mount of it, whose upper/ and work/ the supervisor made for the
 * sandbox user). The workspace itself is never written. The layer is mounted below the
 * staging root only long enough for the overlay to take its own references to it, then
 * detached and its mount point removed.
 */
#define OVERLAY_SCRATCH ".warden-overlay"
static int overlay_workspace(int root, int layer, struct fail *f)
{
	int r = mkdir_p(root, OVERLAY_SCRATCH);
	if (r >= 0)
		r = attach(layer, root, OVERLAY_SCRATCH);
	if (r < 0)
		return set_step(f, r, "attach the changeset's layer", NULL);
	/* The merged root takes its mode from the upper folder: copy the lower's. */
	struct stat ws;
	if (fstatat(root, "workspace", &ws, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchmodat(root, OVERLAY_SCRATCH "/upper", ws.st_mode & 0777, 0) < 0)
		return set_step(f, -errno, "prepare the overlay's folders", NULL);
	/* The lower layer stays mounted below the overlay: read-only, which is all it needs. */
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	if (mount_setattr(root, "workspace", AT_SYMLINK_NOFOLLOW, &ro, sizeof(ro)) < 0)
		return set_step(f, -errno, "make the overlay's lower layer read-only",
				NULL);

	_cleanup_close_ int fs = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fs < 0)
		return set_step(f, -errno, "open an overlay filesystem", NULL);
	/*
	 * No redirects, no metacopy, no index: the upper layer holds only whole files, plain
	 * directories, whiteouts and opaque markers, which is all the apply walker accepts.
	 */
	const char *const conf[] = {
		"lowerdir", SBX_STAGING "/workspace",
		"upperdir", SBX_STAGING "/" OVERLAY_SCRATCH "/upper",
		"workdir", SBX_STAGING "/" OVERLAY_SCRATCH "/work",
		"redirect_dir", "nofollow",
		"metacopy", "off",
		"index", "off",
		NULL,
	};
	for (size_t i = 0; conf[i] && r >= 0; i += 2)
		if (fsconfig(fs, FSCONFIG_SET_STRING, conf[i], conf[i + 1], 0) < 0)
			r = -errno;
	/* In a user namespace trusted.* xattrs are out of reach; the user.* ones are ours. */
	if (r >= 0 && fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0)
		r = -errno;
	/*
	 * A changeset's layer is mounted volatile: the sandbox's fsyncs and the sync of the
	 * upper filesystem when the overlay goes away are skipped (a third of a millisecond on
	 * every run). The supervisor syncs the layer itself when it keeps the changeset
	 * (supervisor/changes.c); an applied one is written to the workspace file by file with
	 * fsync. Every kernel with mount_setattr (5.12) has the option (5.10).
	 */
	if (r >= 0 && fsconfig(fs, FSCONFIG_SET_FLAG, "volatile", NULL, 0) < 0)
		r = -errno;
	if (r >= 0 && fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		r = -errno;
	if (r < 0)
		return set_step(f, r, "create the workspace overlay", NULL);
	_cleanup_close_ int mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt < 0)
		return set_step(f, -errno, "mount the workspace overlay", NULL);
	r = attach(mnt, root, "workspace");
	if (r < 0)
		return set_step(f, r, "attach the workspace overlay", NULL);
	if (umount2(SBX_STAGING "/" OVERLAY_SCRATCH, MNT_DETACH) < 0 ||
	    unlinkat(root, OVERLAY_SCRATCH, AT_REMOVEDIR) < 0)
		return set_step(f, -errno, "detach the overlay's layer", NULL);
	return 0;
}

/*
 * A detached copy of the changeset's layer folder, resolved again in this mount namespace
 * and checked to be the folder the supervisor made.
 */
static int capture_layer(const struct sbx_config *cfg)
{
	_cleanup_close_ int fd = reopen_same(cfg->changes_layer_fd, cfg->changes_layer_path);
	if (fd < 0)
		return fd;
	int tree = clone_tree(fd, "", false);
	if (tree < 0)
		return tree;
	int r = set_attr(tree, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, false);
	if (r < 0) {
		(void)close(tree);
		return r;
	}
	return tree;
}

static void captures_done(struct capture *caps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		capture_done(&caps[i]);
	free(caps);
}

/*
 * Host sources captured by sbx_mount_capture(), placed by sbx_mount_setup(). Child-only state:
 * the child is single-threaded and does this exactly once.
 */
static struct {
	struct capture *caps;
	size_t used;
	char **etc_dsts;
	size_t n_etc;
	int ws_tree;
	int ref_tree;
	int layer_tree;
	bool done;
} captured = { .ws_tree = -1, .ref_tree = -1, .layer_tree = -1 };

static void captured_done(void)
{
	captures_done(captured.caps, captured.used);
	for (size_t i = 0; captured.etc_dsts && i < captured.n_etc; i++)
		free(captured.etc_dsts[i]);
	free(captured.etc_dsts);
	if (captured.ws_tree >= 0)
		(void)close(captured.ws_tree);
	if (captured.ref_tree >= 0)
		(void)close(captured.ref_tree);
	if (captured.layer_tree >= 0)
		(void)close(captured.layer_tree);
	captured.caps = NULL;
	captured.etc_dsts = NULL;
	captured.used = captured.n_etc = 0;
	captured.ws_tree = captured.ref_tree = captured.layer_tree = -1;
}

int sbx_mount_capture(const struct sbx_config *cfg, struct fail *f)
{
	const struct pol_policy *pol = cfg->pol;
	int r;

	/* Nothing we mount may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return set_step(f, -errno, "make mounts private", NULL);

	/* Capture every host source while the host tree is still in view. */
	captured.caps = calloc(pol->n_binds + pol->n_etc_files + 1, sizeof(*captured.caps));
	captured.etc_dsts = calloc(pol->n_etc_files + 1, sizeof(char *));
	if (!captured.caps || !captured.etc_dsts) {
		captured_done();
		return set_step(f, -ENOMEM, "allocate", NULL);
	}
	struct capture *caps = captured.caps;
	char etc_src[PATH_MAX], etc_dst[PATH_MAX];
	r = 0;
	for (size_t i = 0; i < pol->n_binds && r >= 0; i++) {
		const struct pol_bind *b = &pol->binds[i];
		uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				 (b->mode == POL_BIND_RO ? MOUNT_ATTR_RDONLY : 0);
		caps[captured.used].tree = -1;
		caps[captured.used].dst = b->dst;
		r = capture_source(b->src, b->optional, attrs, &caps[captured.used]);
		if (r < 0)
			(void)set_step(f, r, "bind", b->src);
		else if (r > 0)
			captured.used++;
	}
	for (size_t i = 0; i < pol->n_etc_files && r >= 0; i++) {
		(void)snprintf(etc_src, sizeof(etc_src), "/etc/%s", pol->etc_files[i]);
		(void)snprintf(etc_dst, sizeof(etc_dst), "/etc/%s", pol->etc_files[i]);
		captured.etc_dsts[i] = strdup(etc_dst);
		if (!captured.etc_dsts[i]) {
			r = set_step(f, -ENOMEM, "allocate", NULL);
			break;
		}
		captured.n_etc = i + 1;
		caps[captured.used].tree = -1;
		caps[captured.used].dst = captured.etc_dsts[i];
		r = capture_source(etc_src, true,
				   MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
				   &caps[captured.used]);
		if (r < 0)
			(void)set_step(f, r, "bind", etc_src);
		else if (r > 0)
			captured.used++;
	}
	if (r >= 0) {
		if (cfg->workspace_tree_fd >= 0) {
			captured.ws_tree = fcntl(cfg->workspace_tree_fd, F_DUPFD_CLOEXEC, 3);
			r = captured.ws_tree < 0 ? -errno : 0;
		} else {
			captured.ws_tree = clone_workspace(cfg);
			r = captured.ws_tree < 0 ? captured.ws_tree : 0;
			if (r >= 0)
				r = set_attr(captured.ws_tree, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
					     false);
		}
		if (r < 0)
			(void)set_step(f, r, "capture the workspace", NULL);
	}
	if (r >= 0 && cfg->changes_layer_fd >= 0) {
		captured.layer_tree = capture_layer(cfg);
		r = captured.layer_tree < 0 ? captured.layer_tree : 0;
		if (r < 0)
			(void)set_step(f, r, "capture the changeset's layer",
				       cfg->changes_layer_path);
	}
	if (r >= 0 && cfg->reference_path) {
		captured.ref_tree = capture_reference(cfg->reference_path);
		r = captured.ref_tree < 0 ? captured.ref_tree : 0;
		if (r < 0)
			(void)set_step(f, r, "capture the reference", cfg->reference_path);
	}
	if (r < 0) {
		captured_done();
		return r;
	}
	captured.done = true;
	return 0;
}

int sbx_mount_setup(const struct sbx_config *cfg, struct fail *f)
{
	const struct pol_policy *pol = cfg->pol;
	int r;

	if (!captured.done)
		return set_step(f, -EINVAL, "mount setup before capture", NULL);
	struct capture *caps = captured.caps;
	_cleanup_close_ int ws_tree = TAKE_FD(captured.ws_tree);
	_cleanup_close_ int ref_tree = TAKE_FD(captured.ref_tree);
	_cleanup_close_ int layer_tree = TAKE_FD(captured.layer_tree);

	/* The new root: a small tmpfs, made read-only once everything is in place. */
	_cleanup_close_ int root = -1;
	r = 0;
	if (mount("tmpfs", SBX_STAGING, "tmpfs", MS_NOSUID | MS_NODEV,
		  "mode=0755,size=" SBX_ROOT_TMPFS_SIZE) < 0)
		r = set_step(f, -errno, "mount the root tmpfs", NULL);
	else if ((root = open(SBX_STAGING, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		r = set_step(f, -errno, "open the root tmpfs", NULL);
	for (size_t i = 0; i < captured.used && r >= 0; i++) {
		r = place_capture(root, &caps[i]);
		if (r < 0)
			(void)set_step(f, r, "place", caps[i].dst);
	}
	captured_done();
	if (r < 0)
		return r;

	r = setup_etc(root, pol, f);
	if (r < 0)
		return r;

	r = mkdir_p(root, "workspace");
	if (r >= 0)
		r = attach(ws_tree, root, "workspace");
	if (r < 0)
		return set_step(f, r, "attach the workspace", NULL);
	if (layer_tree >= 0) {
		r = overlay_workspace(root, layer_tree, f);
		if (r < 0)
			return r;
	}
	if (ref_tree >= 0) {
		const char *rel = &SBX_REFERENCE[1]; /* relative to the new root */
		r = mkdir_p(root, rel);
		if (r >= 0)
			r = attach(ref_tree, root, rel);
		if (r < 0)
			return set_step(f, r, "attach the reference at", SBX_REFERENCE);
	}
	/* In a changeset everything may be written: the hold rules judge it afterwards. */
	r = cfg->changes_layer_fd >= 0 ? 0 : protect_workspace(root, cfg, f);
	if (r < 0)
		return r;
	r = hide_paths(root, cfg, f);
	if (r < 0)
		return r;

	char size[32];
	(void)snprintf(size, sizeof(size), "%llu", (unsigned long long)pol->tmp_bytes);
	const char *tmp_opts[] = { "size", size, "mode", "1777", NULL };
	r = mount_new_fs(root, "tmp", "tmpfs", tmp_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (r < 0)
		return set_step(f, r, "mount /tmp", NULL);

	char home[PATH_MAX], uid[16], gid[16];
	(void)snprintf(home, sizeof(home), "home/%s", pol->user_name);
	(void)snprintf(uid, sizeof(uid), "%u", pol->uid);
	(void)snprintf(gid, sizeof(gid), "%u", pol->gid);
	const char *home_opts[] = { "size", size, "mode", "0700", "uid", uid, "gid", gid, NULL };
	r = mount_new_fs(root, home, "tmpfs", home_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (r < 0)
		return set_step(f, r, "mount", home);
	r = write_git_excludes(root, cfg, f);
	if (r < 0)
		return r;

	r = setup_dev(root, size, f);
	if (r < 0)
		return r;
	r = setup_proc(root, f);
	if (r < 0)
		return r;

	r = set_attr(root, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false);
	if (r < 0)
		return set_step(f, r, "make the root read-only", NULL);

	/* pivot_root(".", ".") stacks the old root under the new one; detach it at once. */
	if (fchdir(root) < 0)
		return set_step(f, -errno, "enter the new root", NULL);
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return set_step(f, -errno, "pivot_root", NULL);
	if (umount2(".", MNT_DETACH) < 0)
		return set_step(f, -errno, "detach the old root", NULL);
	if (chdir("/") < 0 || chdir(SBX_WORKSPACE) < 0)
		return set_step(f, -errno, "enter /workspace", NULL);
	return 0;
}
