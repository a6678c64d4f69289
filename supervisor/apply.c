/* SPDX-License-Identifier: MIT */
/*
 * Applying a changeset (apply.h). Three parts: the walker, which writes the host tree; the
 * records it sends back, read through the codec's bounded reader; and the pruning, which
 * removes applied entries from the upper layer. Each is a function that runs with the
 * credentials of its caller; sup_apply_run runs the walk and the pruning in children that
 * first drop to the owners (become), and the fuzz target calls them directly.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "apply.h"
#include "cleanup.h"
#include "gitindex.h"
#include "hide.h"
#include "io-util.h"
#include "sandbox.h"
#include "textdiff.h"
#include "wire.h"

/* Overlayfs's own markers in the upper layer, as it writes them under "userxattr". */
#define OVL_XATTR_OPAQUE "user.overlay.opaque"
#define OVL_XATTR_REDIRECT "user.overlay.redirect"
#define OVL_XATTR_METACOPY "user.overlay.metacopy"

/* A record: u32 length | u8 kind | u8 verdict | str path | str reason (empty: none). */
#define REC_MAX (16u + PATH_MAX + SUP_CHG_MAX_REASON)

static const char *const kind_names[] = {
	[SUP_CHG_ADDED] = "added",     [SUP_CHG_MODIFIED] = "modified",
	[SUP_CHG_DELETED] = "deleted", [SUP_CHG_DIR] = "directory",
	[SUP_CHG_SPECIAL] = "special",
};
static const char *const verdict_names[] = {
	[SUP_CHG_APPLIED] = "applied",
	[SUP_CHG_HELD] = "held",
	[SUP_CHG_REFUSED] = "refused",
};

const char *sup_chg_kind_name(enum sup_chg_kind k)
{
	return (size_t)k < ELEMENTSOF(kind_names) && kind_names[k] ? kind_names[k] : "?";
}

const char *sup_chg_verdict_name(enum sup_chg_verdict v)
{
	return (size_t)v < ELEMENTSOF(verdict_names) && verdict_names[v] ? verdict_names[v] : "?";
}

bool sup_link_stays_inside(const char *target, unsigned depth)
{
	if (!target[0] || target[0] == '/')
		return false;
	bool named = false; /* a component other than ".." was seen */
	unsigned up = 0;
	for (const char *c = target; *c;) {
		const char *slash = strchr(c, '/');
		size_t len = slash ? (size_t)(slash - c) : strlen(c);
		if (len == 2 && c[0] == '.' && c[1] == '.') {
			/* ".." after a name may cross a symlink that name is: refused outright */
			if (named || ++up > depth)
				return false;
		} else if (len > 0 && !(len == 1 && c[0] == '.')) {
			named = true;
		}
		if (!slash)
			break;
		c = slash + 1;
	}
	return true;
}

unsigned sup_apply_mode(unsigned mode, int host_mode)
{
	unsigned m = mode & 0777;
	unsigned may_write = host_mode >= 0 ? (unsigned)host_mode & 022 : 0;
	return (m & ~022u) | (m & may_write);
}

/* ------------------------------------------------------------------------------------------ */
/* The walker (apply child)                                                                   */

struct walk {
	const struct sup_apply_spec *spec;
	int out;          /* the records pipe */
	int err;          /* first transport error */
	unsigned n_recs;
	unsigned n_applied, n_pending; /* records so far, by verdict */
};

static void emit(struct walk *w, enum sup_chg_kind kind, enum sup_chg_verdict verdict,
		 const char *path, const char *reason)
{
	uint8_t buf[REC_MAX];
	struct wire_wr wr;
	if (w->err)
		return;
	if (++w->n_recs > SUP_CHG_MAX_ENTRIES) {
		w->err = -E2BIG;
		return;
	}
	if (verdict == SUP_CHG_APPLIED)
		w->n_applied++;
	else
		w->n_pending++;
	const char *why = reason ? reason : "";
	size_t why_len = strnlen(why, SUP_CHG_MAX_REASON);
	wire_wr_init(&wr, buf, sizeof(buf));
	(void)wire_put_u32(&wr, 0);
	(void)wire_put_u8(&wr, (uint8_t)kind);
	(void)wire_put_u8(&wr, (uint8_t)verdict);
	(void)wire_put_str(&wr, path, strlen(path), PATH_MAX);
	(void)wire_put_str(&wr, why, why_len, SUP_CHG_MAX_REASON);
	if (wr.failed) {
		w->err = -ENAMETOOLONG;
		return;
	}
	/* The length prefix counts what follows it. */
	struct wire_wr head;
	wire_wr_init(&head, buf, 4);
	(void)wire_put_u32(&head, (uint32_t)(wr.len - 4));
	int r = io_write_all(w->out, buf, wr.len);
	if (r < 0)
		w->err = r;
}

static int open_beneath(int dfd, const char *rel, uint64_t flags)
{
	return io_openat2(dfd, rel, flags | O_NOFOLLOW,
			  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
				  RESOLVE_NO_XDEV);
}

/* More components than the pattern matcher compares (hide.h): no pattern can be checked. */
static bool too_deep(const char *path)
{
	unsigned n = 1;
	for (const char *p = path; *p; p++)
		n += *p == '/';
	return n > SUP_HIDE_MAX_DEPTH;
}

static bool exact_match(char *const *patterns, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (sup_hide_match(patterns[i], path))
			return true;
	return false;
}

/*
 * Whether a pattern names a path or a directory above it: the hold patterns, the --include
 * ones. Kept per directory level as the walks descend, a child's being its parent's plus a
 * match of its own path, so that an entry costs one match per pattern, not one per pattern
 * and leading directory (which a deep tree would turn into a quadratic cost per entry).
 */
struct named {
	bool hold, include;
};

static struct named named_below(const struct walk *w, struct named parent, const char *path)
{
	const struct sup_apply_spec *s = w->spec;
	return (struct named){
		.hold = parent.hold || exact_match(s->hold, s->n_hold, path),
		.include = parent.include || exact_match(s->include, s->n_include, path),
	};
}

static bool changed_since_base(const struct walk *w, const struct stat *st)
{
	if (w->spec->force)
		return false;
	return st->st_ctim.tv_sec > w->spec->base_sec ||
	       (st->st_ctim.tv_sec == w->spec->base_sec && st->st_ctim.tv_nsec >= w->spec->base_nsec);
}

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

/* "y" in the opaque marker; a directory fd opened for reading. */
static bool is_opaque(int dfd)
{
	char v[4];
	ssize_t n = fgetxattr(dfd, OVL_XATTR_OPAQUE, v, sizeof(v));
	return n == 1 && v[0] == 'y';
}

static bool has_xattr(int fd, const char *name)
{
	return fgetxattr(fd, name, NULL, 0) >= 0 || errno == ERANGE;
}

/* A fresh name for a temporary entry in a host directory. */
static void temp_name(char out[40])
{
	uint64_t rnd = 0;
	(void)io_fill_random(&rnd, sizeof(rnd));
	(void)snprintf(out, 40, ".warden-apply-%016llx", (unsigned long long)rnd);
}

/*
 * Writes the upper file `name` (in ud) to the host directory hd under the same name: a new
 * file next to it, filled, given its mode, synced, then renamed over. host_mode is the
 * host entry's mode, or -1.
 */
static int write_file(int ud, int hd, const char *name, const struct stat *ust, int host_mode)
{
	_cleanup_close_ int src = openat(ud, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (src < 0)
		return -errno;
	struct stat again;
	if (fstat(src, &again) < 0)
		return -errno;
	if (!S_ISREG(again.st_mode) || again.st_ino != ust->st_ino)
		return -ESTALE;
	char tmp[40];
	temp_name(tmp);
	_cleanup_close_ int dst = openat(hd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
						  O_CLOEXEC, 0600);
	if (dst < 0)
		return -errno;
	/* The layer is still: the file holds exactly its size, and one byte more is refused. */
	char buf[65536];
	uint64_t copied = 0;
	int r = io_copy_bounded(src, dst, (uint64_t)again.st_size, 64u << 20, buf, sizeof(buf),
				&copied);
	if (r >= 0 && fchmod(dst, (mode_t)sup_apply_mode(ust->st_mode, host_mode)) < 0)
		r = -errno;
	if (r >= 0 && fsync(dst) < 0)
		r = -errno;
	if (r >= 0 && renameat(hd, tmp, hd, name) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(hd, tmp, 0);
	return r;
}

static int write_link(int hd, const char *name, const char *target)
{
	char tmp[40];
	temp_name(tmp);
	if (symlinkat(target, hd, tmp) < 0)
		return -errno;
	if (renameat(hd, tmp, hd, name) < 0) {
		int r = -errno;
		(void)unlinkat(hd, tmp, 0);
		return r;
	}
	return 0;
}

/*
 * Why path is held, or NULL; named is its named_below. *out_whole: held as a whole, never
 * entered for --include (a repository the host did not have). top_git_ok: the top .git
 * exists on the host as a directory and the sandbox did not replace it.
 */
static const char *held_reason(const struct walk *w, const char *path, const char *name,
			       unsigned depth, bool top_git_ok, struct named named,
			       bool *out_whole)
{
	const struct sup_apply_spec *s = w->spec;
	*out_whole = false;
	if (!strcmp(name, ".git") && !exact_match(s->include, s->n_include, path) &&
	    (depth > 0 || !top_git_ok)) {
		/* Its config and hooks would be trusted by the host's git: all or nothing. */
		*out_whole = true;
		return depth > 0 ? "a repository below the top of the workspace"
				 : "a .git the host did not have, or replaced whole";
	}
	if (named.hold && !named.include)
		return "workspace.hold names it";
	/* The matcher does not compare a path this deep: fail closed, whatever --include says. */
	if (s->n_hold && too_deep(path))
		return "too deep for workspace.hold to be checked";
	return NULL;
}

/* The path buffer holds the parent's path (plen bytes); appends name. */
static int path_push(char *path, size_t plen, const char *name, size_t *out_len)
{
	size_t nlen = strlen(name);
	size_t len = plen + (plen ? 1 : 0) + nlen;
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	if (plen)
		path[plen] = '/';
	memcpy(path + plen + (plen ? 1 : 0), name, nlen + 1);
	*out_len = len;
	return 0;
}

/* remove_host found a held path below the directory it was to delete. */
#define HELD_BELOW 1
#define HELD_BELOW_REASON "deletes a directory with held paths below it (workspace.hold names them)"

/*
 * Checks (check = true) or removes the host directory `name` in parent, depth-first, never
 * following a symlink. path holds its workspace path (plen bytes, PATH_MAX in all), named its
 * named_below; its entries are `child_depth` directories deep in the workspace. In the check
 * pass an entry
 * that is held (held_reason) makes the deletion held (HELD_BELOW), and one changed since the
 * run started is a conflict (-EBUSY). Returns 0, HELD_BELOW or -errno.
 */
static int host_tree(struct walk *w, int parent, const char *name, bool check, char *path,
		     size_t plen, unsigned depth, unsigned child_depth, struct named named)
{
	if (depth > SUP_CHG_MAX_DEPTH)
		return -ELOOP;
	_cleanup_close_ int fd = open_beneath(parent, name, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	DIR *d = io_dir_stream(fd);
	if (!d)
		return -errno;
	int r = 0;
	struct dirent *de;
	while (r == 0 && (errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			break;
		}
		if (check) {
			size_t len;
			bool whole;
			if (path_push(path, plen, de->d_name, &len) < 0) {
				r = -ENAMETOOLONG;
				break;
			}
			struct named here = named_below(w, named, path);
			if (held_reason(w, path, de->d_name, child_depth, true, here, &whole))
				r = HELD_BELOW;
			else if (changed_since_base(w, &st))
				r = -EBUSY;
			else if (S_ISDIR(st.st_mode))
				r = host_tree(w, fd, de->d_name, true, path, len, depth + 1,
					      child_depth + 1, here);
			path[plen] = '\0';
		} else if (S_ISDIR(st.st_mode)) {
			r = host_tree(w, fd, de->d_name, false, path, plen, depth + 1,
				      child_depth + 1, named);
		} else if (unlinkat(fd, de->d_name, 0) < 0) {
			r = -errno;
		}
	}
	if (r == 0 && errno)
		r = -errno;
	(void)closedir(d);
	if (r == 0 && !check && unlinkat(parent, name, AT_REMOVEDIR) < 0)
		r = -errno;
	return r;
}

/*
 * Removes the host entry name (in hd, already lstat'ed as hst; path holds its workspace path,
 * len bytes, named its named_below, and it is depth directories deep), a directory with all
 * below it: nothing is
 * removed unless the whole tree passes the check first. A dry run only checks. Returns 0,
 * HELD_BELOW, -EBUSY for a conflict, or -errno.
 */
static int remove_host(struct walk *w, int hd, const char *name, const struct stat *hst,
		       char *path, size_t len, unsigned depth, struct named named)
{
	if (changed_since_base(w, hst))
		return -EBUSY;
	if (!S_ISDIR(hst->st_mode)) {
		if (w->spec->dry_run)
			return 0;
		return unlinkat(hd, name, 0) < 0 ? -errno : 0;
	}
	int r = host_tree(w, hd, name, true, path, len, 0, depth + 1, named);
	if (r != 0 || w->spec->dry_run)
		return r;
	return host_tree(w, hd, name, false, path, len, 0, depth + 1, named);
}

static const char *errno_reason(int r, char *buf, size_t size)
{
	if (r == -EBUSY)
		return "changed on the host since the run started (apply --force to overwrite)";
	(void)snprintf(buf, size, "could not be applied: %s", strerror(-r));
	return buf;
}

/*
 * Walks the upper directory ud against the host directory hd (-1: the host has none, or a
 * dry run will not make it). Returns 0, the number of the host's entries an opaque ud still
 * has to delete, or -errno.
 */
static int walk_dir(struct walk *w, int ud, int hd, char *path, size_t plen, unsigned depth,
		    struct named named);

/* Reads a whole file below dfd into a new buffer, at most max bytes. */
static int read_whole(int dfd, const char *name, size_t max, char **out, size_t *out_len)
{
	/* O_NONBLOCK: a FIFO in the file's place must not hang the walk before fstat sees it */
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
						   O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > max)
		return -E2BIG;
	char *buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	int n = io_read_fd(fd, buf, (size_t)st.st_size + 1);
	if (n < 0) {
		free(buf);
		return n;
	}
	*out = buf;
	*out_len = (size_t)n;
	return 0;
}

/*
 * Why the sandbox's .git/index (name in the upper .git, ud) must be held, or NULL: it marks
 * a path assume-unchanged or skip-worktree that the host's index (in hd, the host's .git)
 * did not, which would hide a planted change from the host's git status and git diff; or it
 * cannot be read with certainty (malformed, a split index, a SHA-256 repository).
 */
static const char *index_hides(int ud, int hd, const char *name)
{
	_cleanup_free_ char *cfg = NULL;
	size_t cfg_len = 0;
	/* The host's own config (held, so the sandbox cannot have changed it) */
	if (hd >= 0 && read_whole(hd, "config", 1u << 20, &cfg, &cfg_len) == 0 &&
	    strcasestr(cfg, "objectformat"))
		return "an index of a repository whose object format warden does not read";

	_cleanup_free_ char *nbuf = NULL;
	_cleanup_free_ char *obuf = NULL;
	size_t nlen = 0, olen = 0, n_new = 0, n_old = 0;
	char **new_paths = NULL, **old_paths = NULL;
	const char *why = NULL;
	int r = read_whole(ud, name, POL_GITINDEX_MAX_BYTES, &nbuf, &nlen);
	if (r >= 0)
		r = pol_gitindex_hidden(nbuf, nlen, &new_paths, &n_new);
	if (r < 0)
		return "an index warden cannot read with certainty (malformed, split or too large)";
	if (n_new == 0)
		return NULL;
	if (hd >= 0) {
		r = read_whole(hd, name, POL_GITINDEX_MAX_BYTES, &obuf, &olen);
		if (r >= 0)
			r = pol_gitindex_hidden(obuf, olen, &old_paths, &n_old);
		else if (r == -ENOENT)
			r = 0;
	}
	if (r < 0 || pol_gitindex_newly_hidden(old_paths, n_old, new_paths, n_new, NULL) != 0)
		why = "the index marks a path skip-worktree or assume-unchanged that the host's did "
		      "not, which would hide a change from git status";
	(void)pol_gitindex_paths_free(new_paths, n_new);
	(void)pol_gitindex_paths_free(old_paths, n_old);
	return why;
}

/*
 * One entry of an upper directory. hd is -1 when the host has no such directory; parent is
 * the directory's named_below.
 */
static void walk_entry(struct walk *w, int ud, int hd, const char *name, char *path, size_t plen,
		       unsigned depth, struct named parent)
{
	const struct sup_apply_spec *s = w->spec;
	char why[SUP_CHG_MAX_REASON];
	size_t len;
	if (path_push(path, plen, name, &len) < 0) {
		path[plen] = '\0';
		emit(w, SUP_CHG_SPECIAL, SUP_CHG_REFUSED, plen ? path : ".", "a name too long");
		return;
	}
	struct stat ust, hst;
	bool host_has = false;
	if (fstatat(ud, name, &ust, AT_SYMLINK_NOFOLLOW) < 0) {
		emit(w, SUP_CHG_SPECIAL, SUP_CHG_REFUSED, path,
		     errno_reason(-errno, why, sizeof(why)));
		goto out;
	}
	if (hd >= 0) {
		if (fstatat(hd, name, &hst, AT_SYMLINK_NOFOLLOW) == 0)
			host_has = true;
		else if (errno != ENOENT) {
			emit(w, SUP_CHG_SPECIAL, SUP_CHG_REFUSED, path,
			     errno_reason(-errno, why, sizeof(why)));
			goto out;
		}
	}
	bool top_git_ok = depth == 0 && host_has && S_ISDIR(hst.st_mode);
	if (top_git_ok && S_ISDIR(ust.st_mode) && !strcmp(name, ".git")) {
		_cleanup_close_ int g = openat(ud, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
							 O_CLOEXEC);
		if (g < 0 || is_opaque(g))
			top_git_ok = false; /* replaced as a whole: a new repository */
	}
	bool whole;
	struct named here = named_below(w, parent, path);
	const char *held = held_reason(w, path, name, depth, top_git_ok, here, &whole);

	if (is_whiteout(&ust) && !held && host_has && !strcmp(name, ".git") &&
	    !exact_match(s->include, s->n_include, path))
		held = "deletes a repository";
	if (is_whiteout(&ust)) {
		if (held) {
			emit(w, SUP_CHG_DELETED, SUP_CHG_HELD, path, held);
		} else if (!host_has) {
			emit(w, SUP_CHG_DELETED, SUP_CHG_APPLIED, path, NULL);
		} else {
			int r = remove_host(w, hd, name, &hst, path, len, depth, here);
			if (r == HELD_BELOW)
				emit(w, SUP_CHG_DELETED, SUP_CHG_HELD, path, HELD_BELOW_REASON);
			else if (r < 0)
				emit(w, SUP_CHG_DELETED, SUP_CHG_REFUSED, path,
				     errno_reason(r, why, sizeof(why)));
			else
				emit(w, SUP_CHG_DELETED, SUP_CHG_APPLIED, path, NULL);
		}
		goto out;
	}
	if (S_ISDIR(ust.st_mode)) {
		_cleanup_close_ int sub = openat(ud, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
							   O_CLOEXEC);
		if (sub < 0) {
			emit(w, SUP_CHG_DIR, SUP_CHG_REFUSED, path,
			     errno_reason(-errno, why, sizeof(why)));
			goto out;
		}
		if (has_xattr(sub, OVL_XATTR_REDIRECT) || has_xattr(sub, OVL_XATTR_METACOPY)) {
			emit(w, SUP_CHG_DIR, SUP_CHG_REFUSED, path,
			     "carries an overlay redirect or metacopy marker");
			goto out;
		}
		/* A held directory is reported once, unless --include may name something below. */
		if (held && (whole || !s->n_include)) {
			emit(w, SUP_CHG_DIR, SUP_CHG_HELD, path, held);
			goto out;
		}
		if (depth + 1 > SUP_CHG_MAX_DEPTH) {
			emit(w, SUP_CHG_DIR, SUP_CHG_REFUSED, path, "nested too deep");
			goto out;
		}
		_cleanup_close_ int hsub = -1;
		int r = 0;
		bool made = false;
		if (host_has && !S_ISDIR(hst.st_mode)) {
			/* A file became a directory. */
			r = held ? -EPERM : remove_host(w, hd, name, &hst, path, len, depth, here);
			host_has = false;
		}
		if (r >= 0 && host_has) {
			hsub = open_beneath(hd, name, O_RDONLY | O_DIRECTORY);
			r = hsub < 0 ? hsub : 0;
		} else if (r >= 0 && hd >= 0 && !s->dry_run) {
			if (mkdirat(hd, name, (mode_t)sup_apply_mode(ust.st_mode, -1)) < 0)
				r = -errno;
			else
				hsub = open_beneath(hd, name, O_RDONLY | O_DIRECTORY);
			made = r >= 0;
			r = r < 0 ? r : hsub < 0 ? hsub : 0;
		}
		if (r < 0) {
			emit(w, SUP_CHG_DIR, SUP_CHG_REFUSED, path,
			     r == -EPERM ? held : errno_reason(r, why, sizeof(why)));
			goto out;
		}
		unsigned applied0 = w->n_applied, pending0 = w->n_pending;
		r = walk_dir(w, sub, hsub, path, len, depth + 1, here);
		bool applied_below = w->n_applied > applied0, pending_below = w->n_pending > pending0;
		if (held && made && !applied_below && unlinkat(hd, name, AT_REMOVEDIR) < 0 && r >= 0)
			/*
			 * A held directory is entered only for --include; when that named nothing in
			 * it, the host must not keep even the empty directory made for it.
			 */
			r = -errno;
		if (held && applied_below && !pending_below)
			held = NULL; /* --include named all there was below: made for them */
		if (r < 0)
			emit(w, SUP_CHG_DIR, SUP_CHG_REFUSED, path, errno_reason(r, why, sizeof(why)));
		else if (r > 0)
			emit(w, SUP_CHG_DIR, SUP_CHG_REFUSED, path,
			     "the host's entries it no longer lists were not all deleted");
		else if (held || !host_has || is_opaque(sub))
			/*
			 * A directory that only holds changes is no entry of its own; a new, held or
			 * opaque one is (the pruning clears an opaque marker once its deletions are
			 * done, so that a later apply never deletes again).
			 */
			emit(w, SUP_CHG_DIR, held ? SUP_CHG_HELD : SUP_CHG_APPLIED, path, held);
		goto out;
	}

	enum sup_chg_kind kind = host_has ? SUP_CHG_MODIFIED : SUP_CHG_ADDED;
	if (!S_ISREG(ust.st_mode) && !S_ISLNK(ust.st_mode)) {
		emit(w, SUP_CHG_SPECIAL, SUP_CHG_REFUSED, path,
		     "a device, FIFO or socket: only files, directories and symlinks are applied");
		goto out;
	}
	if (held) {
		emit(w, kind, SUP_CHG_HELD, path, held);
		goto out;
	}
	char target[PATH_MAX];
	if (S_ISLNK(ust.st_mode)) {
		ssize_t n = readlinkat(ud, name, target, sizeof(target) - 1);
		if (n < 0) {
			emit(w, kind, SUP_CHG_REFUSED, path, errno_reason(-errno, why, sizeof(why)));
			goto out;
		}
		target[n] = '\0';
		if (!sup_link_stays_inside(target, depth)) {
			emit(w, kind, SUP_CHG_REFUSED, path,
			     "a symlink that is absolute, climbs out of the workspace, or has .. after a name");
			goto out;
		}
	}
	if (depth == 1 && S_ISREG(ust.st_mode) && !strcmp(path, ".git/index")) {
		const char *why_index = index_hides(ud, hd, name);
		if (why_index && !here.include) {
			emit(w, kind, SUP_CHG_HELD, path, why_index);
			goto out;
		}
	}
	int r = 0;
	if (host_has && S_ISDIR(hst.st_mode))
		r = -EISDIR;
	else if (host_has && changed_since_base(w, &hst))
		r = -EBUSY;
	else if (hd < 0)
		r = s->dry_run ? 0 : -ENOENT;
	else if (!s->dry_run && S_ISLNK(ust.st_mode))
		r = write_link(hd, name, target);
	else if (!s->dry_run)
		/* Only a regular file's mode says what the host let others write (a symlink's is 0777). */
		r = write_file(ud, hd, name, &ust,
			       host_has && S_ISREG(hst.st_mode) ? (int)(hst.st_mode & 07777) : -1);
	if (r == -EISDIR)
		emit(w, kind, SUP_CHG_REFUSED, path, "would replace a directory of the host's");
	else if (r < 0)
		emit(w, kind, SUP_CHG_REFUSED, path, errno_reason(r, why, sizeof(why)));
	else
		emit(w, kind, SUP_CHG_APPLIED, path, NULL);
out:
	path[plen] = '\0';
}

/*
 * An opaque upper directory replaces the host's: what the host has there and the upper
 * layer does not is deleted (each deletion under the same rules as a whiteout).
 */
static int delete_unlisted(struct walk *w, int ud, int hd, char *path, size_t plen,
			   unsigned depth, struct named parent)
{
	DIR *d = io_dir_stream(hd);
	if (!d)
		return -errno;
	int pending = 0;
	char why[SUP_CHG_MAX_REASON];
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		struct stat ust, hst;
		if (fstatat(ud, de->d_name, &ust, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			continue;
		if (fstatat(hd, de->d_name, &hst, AT_SYMLINK_NOFOLLOW) < 0) {
			pending += errno != ENOENT; /* gone meanwhile, or in the way: kept */
			continue;
		}
		size_t len;
		if (path_push(path, plen, de->d_name, &len) < 0) {
			pending++; /* a name too long: it stays, so the directory is not replaced */
			continue;
		}
		bool whole;
		struct named here = named_below(w, parent, path);
		const char *held = held_reason(w, path, de->d_name, depth, true, here, &whole);
		int r = held ? 0 : remove_host(w, hd, de->d_name, &hst, path, len, depth, here);
		if (r == HELD_BELOW)
			held = HELD_BELOW_REASON;
		if (held)
			emit(w, SUP_CHG_DELETED, SUP_CHG_HELD, path, held);
		else if (r < 0)
			emit(w, SUP_CHG_DELETED, SUP_CHG_REFUSED, path,
			     errno_reason(r, why, sizeof(why)));
		else
			emit(w, SUP_CHG_DELETED, SUP_CHG_APPLIED, path, NULL);
		pending += held || r < 0;
		path[plen] = '\0';
	}
	(void)closedir(d);
	return pending;
}

/* Name comparison for a stable, reproducible order of records. */
static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk_dir(struct walk *w, int ud, int hd, char *path, size_t plen, unsigned depth,
		    struct named named)
{
	DIR *d = io_dir_stream(ud);
	if (!d)
		return -errno;
	char **names = NULL;
	size_t n = 0;
	int r = 0;
	struct dirent *de;
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char **grown = n < SUP_CHG_MAX_ENTRIES ? reallocarray(names, n + 1, sizeof(*names))
						       : NULL;
		if (!grown || !(grown[n] = strdup(de->d_name))) {
			if (grown)
				names = grown;
			r = n < SUP_CHG_MAX_ENTRIES ? -ENOMEM : -E2BIG;
			break;
		}
		names = grown;
		n++;
	}
	if (r >= 0 && errno)
		r = -errno;
	(void)closedir(d);
	if (r >= 0) {
		if (n)
			qsort(names, n, sizeof(*names), cmp_names);
		for (size_t i = 0; i < n && !w->err; i++)
			walk_entry(w, ud, hd, names[i], path, plen, depth, named);
		if (hd >= 0 && is_opaque(ud))
			r = delete_unlisted(w, ud, hd, path, plen, depth, named);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return w->err ? w->err : r;
}

/* ------------------------------------------------------------------------------------------ */
/* Children                                                                                   */

/* Becomes uid/gid (privileged) keeping only the capabilities in keep; no_new_privs always. */
static int become(const struct sup_apply_spec *s, uint32_t uid, uint32_t gid, uint64_t keep)
{
	if (!s->privileged)
		return sbx_drop_privileges_unprivileged();
	return sbx_become_owner(uid, gid, keep);
}

int sup_apply_walk(const struct sup_apply_spec *spec, int out_fd)
{
	struct walk w = { .spec = spec, .out = out_fd };
	char path[PATH_MAX] = "";
	_cleanup_close_ int hd = open_beneath(spec->ws_fd, ".", O_RDONLY | O_DIRECTORY);
	if (hd < 0)
		return hd;
	return walk_dir(&w, spec->upper_fd, hd, path, 0, 0, (struct named){ 0 });
}

static _Noreturn void apply_child(const struct sup_apply_spec *s, int out)
{
	if (become(s, s->ws_uid, s->ws_gid, 1ull << CAP_DAC_READ_SEARCH) < 0)
		_exit(10);
	_exit(sup_apply_walk(s, out) < 0 ? 12 : 0);
}

/* Opens the parent directory of a workspace-relative path beneath the upper layer. */
static int open_parent(int upper, const char *path, char *parent, size_t size,
		       const char **out_name)
{
	const char *slash = strrchr(path, '/');
	*out_name = slash ? slash + 1 : path;
	size_t plen = slash ? (size_t)(slash - path) : 0;
	if (plen + 2 > size)
		return -ENAMETOOLONG;
	memcpy(parent, slash ? path : ".", slash ? plen : 1);
	parent[slash ? plen : 1] = '\0';
	return open_beneath(upper, parent, O_RDONLY | O_DIRECTORY);
}

int sup_apply_prune(const struct sup_apply_spec *s, const struct sup_chg_report *rep)
{
	int failed = 0;
	for (size_t i = 0; i < rep->n; i++) {
		const struct sup_chg_entry *e = &rep->v[i];
		if (e->verdict != SUP_CHG_APPLIED)
			continue;
		char parent[PATH_MAX];
		const char *name;
		_cleanup_close_ int pfd = open_parent(s->upper_fd, e->path, parent, sizeof(parent),
						      &name);
		if (pfd < 0) {
			failed += pfd != -ENOENT;
			continue;
		}
		struct stat st;
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* a deletion of the host's that the layer never listed */
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int dfd = open_beneath(pfd, name, O_RDONLY | O_DIRECTORY);
			if (dfd >= 0 && fremovexattr(dfd, OVL_XATTR_OPAQUE) < 0 && errno != ENODATA)
				failed++;
			if (unlinkat(pfd, name, AT_REMOVEDIR) < 0 && errno != ENOTEMPTY &&
			    errno != EEXIST)
				failed++;
		} else if (unlinkat(pfd, name, 0) < 0 && errno != ENOENT) {
			failed++;
		}
		/* Up the tree while directories are left empty; an opaque one keeps its place. */
		for (char *cut; (cut = strrchr(parent, '/')) || strcmp(parent, ".");) {
			_cleanup_close_ int up = -1;
			const char *dname = parent;
			if (cut) {
				*cut = '\0';
				dname = cut + 1;
				up = open_beneath(s->upper_fd, parent, O_RDONLY | O_DIRECTORY);
			} else {
				up = open_beneath(s->upper_fd, ".", O_RDONLY | O_DIRECTORY);
			}
			_cleanup_close_ int dfd = up >= 0 ? open_beneath(up, dname, O_RDONLY |
								   O_DIRECTORY) : -1;
			if (dfd < 0 || is_opaque(dfd) || unlinkat(up, dname, AT_REMOVEDIR) < 0)
				break;
			if (!cut)
				break;
		}
	}
	return failed ? -EIO : 0;
}

static _Noreturn void prune_child(const struct sup_apply_spec *s, const struct sup_chg_report *rep)
{
	if (become(s, s->upper_uid, s->upper_gid, 0) < 0)
		_exit(10);
	_exit(sup_apply_prune(s, rep) < 0 ? 13 : 0);
}

static int wait_child(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	return -ECHILD;
}

static int push_entry(struct sup_chg_report *rep, struct sup_chg_entry *e)
{
	if (rep->n >= SUP_CHG_MAX_ENTRIES)
		return -E2BIG;
	struct sup_chg_entry *grown = reallocarray(rep->v, rep->n + 1, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	rep->v = grown;
	grown[rep->n++] = *e;
	if (e->verdict == SUP_CHG_APPLIED)
		rep->n_applied++;
	else if (e->verdict == SUP_CHG_HELD)
		rep->n_held++;
	else
		rep->n_refused++;
	return 0;
}

/* One record's payload, through the bounded reader. Outputs untouched on failure. */
static int decode_record(const uint8_t *buf, size_t len, struct sup_chg_entry *out)
{
	struct wire_rd rd;
	uint8_t kind, verdict;
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ char *reason = NULL;
	wire_rd_init(&rd, buf, len);
	if (!wire_get_u8(&rd, &kind) || !wire_get_u8(&rd, &verdict) ||
	    !wire_get_str(&rd, PATH_MAX - 1, &path) ||
	    !wire_get_str(&rd, SUP_CHG_MAX_REASON, &reason) || !wire_done(&rd))
		return -EBADMSG;
	if (kind < SUP_CHG_ADDED || kind > SUP_CHG_KIND_MAX || verdict < SUP_CHG_APPLIED ||
	    verdict > SUP_CHG_VERDICT_MAX || !path[0] || path[0] == '/')
		return -EBADMSG;
	out->kind = (enum sup_chg_kind)kind;
	out->verdict = (enum sup_chg_verdict)verdict;
	out->path = TAKE_PTR(path);
	out->reason = reason[0] ? TAKE_PTR(reason) : NULL;
	return 0;
}

/* Reads exactly len bytes; 0, -EBADMSG at an early end of file, or -errno. */
static int read_exact(int fd, uint8_t *buf, size_t len)
{
	int r = io_read_exact(fd, buf, len);
	return r == -ENODATA ? -EBADMSG : r;
}

/*
 * One record from a child: u32 length (1..max), then that many bytes, into buf (max bytes).
 * Returns the length, 0 at the end of the file (only before a record), -EBADMSG or -errno.
 */
static ssize_t read_frame(int fd, uint8_t *buf, size_t max)
{
	uint8_t head[4];
	ssize_t n;
	do
		n = read(fd, head, 1);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n < 0 ? -errno : 0;
	int r = read_exact(fd, head + 1, sizeof(head) - 1);
	if (r < 0)
		return r;
	struct wire_rd hr;
	uint32_t len;
	wire_rd_init(&hr, head, sizeof(head));
	if (!wire_get_u32(&hr, &len) || len == 0 || len > max)
		return -EBADMSG;
	r = read_exact(fd, buf, len);
	return r < 0 ? r : (ssize_t)len;
}

int sup_apply_read_records(int fd, struct sup_chg_report *out)
{
	struct sup_chg_report rec = { 0 };
	struct sup_chg_report *rep = &rec;
	uint8_t *buf = malloc(REC_MAX);
	if (!buf)
		return -ENOMEM;
	int r = 0;
	for (;;) {
		ssize_t len = read_frame(fd, buf, REC_MAX);
		if (len <= 0) {
			r = (int)len;
			break;
		}
		struct sup_chg_entry e = { 0 };
		r = decode_record(buf, (size_t)len, &e);
		if (r >= 0) {
			r = push_entry(rep, &e);
			if (r < 0) {
				free(e.path);
				free(e.reason);
			}
		}
		if (r < 0)
			break;
	}
	free(buf);
	if (r < 0) {
		sup_chg_report_done(rep);
		return r;
	}
	*out = rec;
	return 0;
}

/*
 * Forks a child that reports through a pipe. In the parent: the child's pid, *fd the read
 * end. In the child: 0, *fd the write end. -errno when either step fails.
 */
static pid_t fork_reporter(int *fd)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int r = -errno;
		(void)close(p[0]);
		(void)close(p[1]);
		return r;
	}
	(void)close(p[pid == 0 ? 0 : 1]);
	*fd = p[pid == 0 ? 1 : 0];
	return pid;
}

/* After a reporter's records were read (r): kills it on a bad read, reaps it. */
static int end_reporter(pid_t pid, int r)
{
	if (r < 0)
		(void)kill(pid, SIGKILL);
	int w = wait_child(pid);
	return r >= 0 && w < 0 ? w : r;
}

/*
 * 1 when the upper layer (fd borrowed) holds no entry, 0 when it holds one, or -errno. Only
 * whether an entry exists is looked at, never what it is called or holds: this runs with the
 * caller's credentials. A fresh open, so that no directory offset is shared with fd.
 */
static int layer_is_empty(int fd)
{
	int own = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (own < 0)
		return -errno;
	DIR *d = fdopendir(own);
	if (!d) {
		int r = -errno;
		(void)close(own);
		return r;
	}
	int empty = 1;
	struct dirent *de;
	while ((errno = 0, de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			empty = 0;
			break;
		}
	if (empty && errno)
		empty = -errno;
	(void)closedir(d);
	return empty;
}

int sup_apply_run(const struct sup_apply_spec *spec, struct sup_chg_report *out)
{
	struct sup_chg_report rep = { 0 };
	/* The common case of a run that changed nothing needs no child to say so. */
	int empty = layer_is_empty(spec->upper_fd);
	if (empty < 0)
		return empty;
	if (empty) {
		*out = rep;
		return 0;
	}
	int fd = -1;
	pid_t pid = fork_reporter(&fd);
	if (pid < 0)
		return pid;
	if (pid == 0)
		apply_child(spec, fd);
	int r = sup_apply_read_records(fd, &rep);
	(void)close(fd);
	r = end_reporter(pid, r);
	if (r >= 0 && !spec->dry_run && rep.n_applied) {
		pid = fork();
		if (pid < 0)
			r = -errno;
		else if (pid == 0)
			prune_child(spec, &rep);
		else
			r = wait_child(pid);
	}
	if (r < 0) {
		sup_chg_report_done(&rep);
		return r;
	}
	*out = rep;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Diffs (diff child)                                                                         */

/*
 * A diff record: u32 length | u32 index | u8 status | u8 sides (bit 0 old file, bit 1 new
 * file) | u32 old mode | u32 new mode | u32 errno (0: none) | u32 length + the hunks.
 */
#define DIFF_REC_HEAD 26u
#define DIFF_REC_MAX (DIFF_REC_HEAD + SUP_TEXTDIFF_MAX_OUT)

/* One side of a diff. */
struct side {
	bool file;      /* a regular file is there */
	bool too_large; /* over SUP_TEXTDIFF_MAX_BYTES: not read */
	uint32_t mode;
	char *data;
	size_t len;
};

static void side_done(struct side *sd)
{
	free(sd->data);
	memset(sd, 0, sizeof(*sd));
}

/*
 * The regular file at path beneath root (borrowed), read whole: 0 (file false when there is
 * none: absent, a directory, a symlink, a special file) or -errno. Opened as O_PATH first,
 * so that nothing but a regular file is ever opened for reading.
 */
static int read_side(int root, const char *path, struct side *out)
{
	memset(out, 0, sizeof(*out));
	_cleanup_close_ int pfd = open_beneath(root, path, O_PATH);
	if (pfd == -ENOENT || pfd == -ENOTDIR || pfd == -ELOOP)
		return 0;
	if (pfd < 0)
		return pfd;
	struct stat st;
	if (fstat(pfd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return 0;
	out->file = true;
	out->mode = st.st_mode & 07777;
	if ((uint64_t)st.st_size > SUP_TEXTDIFF_MAX_BYTES) {
		out->too_large = true;
		return 0;
	}
	_cleanup_close_ int fd = open_beneath(root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	struct stat again;
	if (fd < 0)
		return fd;
	if (fstat(fd, &again) < 0)
		return -errno;
	if (!S_ISREG(again.st_mode) || again.st_ino != st.st_ino || again.st_dev != st.st_dev)
		return -ESTALE;
	char *buf = malloc(SUP_TEXTDIFF_MAX_BYTES + 2);
	if (!buf)
		return -ENOMEM;
	int n = io_read_fd(fd, buf, SUP_TEXTDIFF_MAX_BYTES + 2);
	if (n == -EFBIG || n > (int)SUP_TEXTDIFF_MAX_BYTES) {
		free(buf);
		out->too_large = true; /* it grew meanwhile */
		return 0;
	}
	if (n < 0) {
		free(buf);
		return n;
	}
	out->data = buf;
	out->len = (size_t)n;
	return 0;
}

/* The diff of one entry, written as a record to out; nothing when neither side is a file. */
static int diff_entry(const struct sup_apply_spec *s, const struct sup_chg_entry *e,
		      size_t index, size_t *total, int out)
{
	struct side old, new = { 0 };
	int r_old = read_side(s->ws_fd, e->path, &old);
	int r_new = e->kind == SUP_CHG_DELETED ? 0 : read_side(s->upper_fd, e->path, &new);
	enum sup_diff_status status = SUP_DIFF_TEXT;
	int err = r_old < 0 ? r_old : r_new < 0 ? r_new : 0;
	_cleanup_free_ char *text = NULL;
	size_t text_len = 0;
	int r = 0;
	if (!err && !old.file && !new.file)
		goto done;
	if (err)
		status = SUP_DIFF_UNREADABLE;
	else if (old.too_large || new.too_large)
		status = SUP_DIFF_TOO_LARGE;
	else if (!sup_textdiff_is_text(old.data, old.len) || !sup_textdiff_is_text(new.data, new.len))
		status = SUP_DIFF_BINARY;
	else if ((r = sup_textdiff(old.data, old.len, new.data, new.len, SUP_TEXTDIFF_CONTEXT,
				   &text, &text_len)) == -E2BIG)
		status = SUP_DIFF_TOO_LARGE;
	else if (r < 0)
		goto done;
	if (status == SUP_DIFF_TEXT && text_len > SUP_DIFF_MAX_TOTAL - *total) {
		status = SUP_DIFF_TOO_LARGE;
		text_len = 0;
	}
	if (status != SUP_DIFF_TEXT)
		text_len = 0;
	*total += text_len;
	r = 0;

	uint8_t *buf = malloc(DIFF_REC_HEAD + text_len);
	if (!buf) {
		r = -ENOMEM;
		goto done;
	}
	struct wire_wr wr, head;
	wire_wr_init(&wr, buf, DIFF_REC_HEAD + text_len);
	(void)wire_put_u32(&wr, 0);
	(void)wire_put_u32(&wr, (uint32_t)index);
	(void)wire_put_u8(&wr, (uint8_t)status);
	(void)wire_put_u8(&wr, (uint8_t)(old.file | new.file << 1));
	(void)wire_put_u32(&wr, old.file ? old.mode : 0);
	(void)wire_put_u32(&wr, new.file ? sup_apply_mode(new.mode, old.file ? (int)old.mode : -1)
					 : 0);
	(void)wire_put_u32(&wr, (uint32_t)-err);
	(void)wire_put_u32(&wr, (uint32_t)text_len);
	(void)wire_put_bytes(&wr, text, text_len);
	wire_wr_init(&head, buf, 4);
	(void)wire_put_u32(&head, (uint32_t)(wr.len - 4));
	r = wr.failed ? -EOVERFLOW : io_write_all(out, buf, wr.len);
	free(buf);
done:
	side_done(&old);
	side_done(&new);
	return r;
}

int sup_apply_diff_write(const struct sup_apply_spec *spec, const struct sup_chg_report *rep,
			 int out_fd)
{
	size_t total = 0;
	for (size_t i = 0; i < rep->n; i++) {
		enum sup_chg_kind k = rep->v[i].kind;
		if (k != SUP_CHG_ADDED && k != SUP_CHG_MODIFIED && k != SUP_CHG_DELETED)
			continue;
		int r = diff_entry(spec, &rep->v[i], i, &total, out_fd);
		if (r < 0)
			return r;
	}
	return 0;
}

static _Noreturn void diff_child(const struct sup_apply_spec *s, const struct sup_chg_report *rep,
				 int out)
{
	if (become(s, s->ws_uid, s->ws_gid, 1ull << CAP_DAC_READ_SEARCH) < 0)
		_exit(10);
	_exit(sup_apply_diff_write(s, rep, out) < 0 ? 12 : 0);
}

/*
 * One diff record's payload, through the bounded reader: the index must follow *last (none
 * yet: SIZE_MAX), and *total, the hunks so far, stay within SUP_DIFF_MAX_TOTAL. Outputs
 * untouched on failure.
 */
static int decode_diff(const uint8_t *buf, size_t len, size_t n_entries, size_t *last,
		       size_t *total, struct sup_file_diff *out)
{
	struct wire_rd rd, text;
	uint32_t index, old_mode, new_mode, err;
	uint8_t status, sides;
	wire_rd_init(&rd, buf, len);
	if (!wire_get_u32(&rd, &index) || !wire_get_u8(&rd, &status) ||
	    !wire_get_u8(&rd, &sides) || !wire_get_u32(&rd, &old_mode) ||
	    !wire_get_u32(&rd, &new_mode) || !wire_get_u32(&rd, &err) ||
	    !wire_get_sub(&rd, &text) || !wire_done(&rd))
		return -EBADMSG;
	if (index >= n_entries || (*last != SIZE_MAX && index <= *last) || status < SUP_DIFF_TEXT ||
	    status > SUP_DIFF_STATUS_MAX || sides > 3 || old_mode > 07777 || new_mode > 07777 ||
	    err > 4095 || (status == SUP_DIFF_UNREADABLE) != (err != 0) ||
	    (status != SUP_DIFF_UNREADABLE && !sides) ||
	    (status != SUP_DIFF_TEXT && text.len) || text.len > SUP_TEXTDIFF_MAX_OUT ||
	    text.len > SUP_DIFF_MAX_TOTAL - *total)
		return -EBADMSG;
	char *copy = NULL;
	if (text.len) {
		copy = malloc(text.len);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, text.p, text.len);
	}
	*out = (struct sup_file_diff){
		.index = index,
		.status = (enum sup_diff_status)status,
		.old_file = sides & 1,
		.new_file = sides & 2,
		.old_mode = old_mode,
		.new_mode = new_mode,
		.err = -(int)err,
		.text = copy,
		.text_len = text.len,
	};
	*last = index;
	*total += text.len;
	return 0;
}

int sup_apply_diff_read(int fd, size_t n_entries, struct sup_diff_list *out)
{
	struct sup_diff_list got = { 0 };
	struct sup_diff_list *list = &got;
	uint8_t *buf = malloc(DIFF_REC_MAX);
	if (!buf)
		return -ENOMEM;
	size_t last = SIZE_MAX, total = 0;
	int r = 0;
	for (;;) {
		ssize_t len = read_frame(fd, buf, DIFF_REC_MAX);
		if (len <= 0) {
			r = (int)len;
			break;
		}
		struct sup_file_diff d;
		r = decode_diff(buf, (size_t)len, n_entries, &last, &total, &d);
		if (r < 0)
			break;
		/* at most one per entry: the index grows with every record */
		struct sup_file_diff *grown = reallocarray(list->v, list->n + 1, sizeof(*grown));
		if (!grown) {
			free(d.text);
			r = -ENOMEM;
			break;
		}
		list->v = grown;
		list->v[list->n++] = d;
	}
	free(buf);
	if (r < 0) {
		sup_diff_list_done(list);
		return r;
	}
	*out = got;
	return 0;
}

int sup_apply_diff(const struct sup_apply_spec *spec, const struct sup_chg_report *rep,
		   struct sup_diff_list *out)
{
	struct sup_diff_list list = { 0 };
	int fd = -1;
	pid_t pid = fork_reporter(&fd);
	if (pid < 0)
		return pid;
	if (pid == 0)
		diff_child(spec, rep, fd);
	int r = sup_apply_diff_read(fd, rep->n, &list);
	(void)close(fd);
	r = end_reporter(pid, r);
	if (r < 0) {
		sup_diff_list_done(&list);
		return r;
	}
	*out = list;
	return 0;
}

void sup_diff_list_done(struct sup_diff_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].text);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void sup_chg_report_done(struct sup_chg_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].path);
		free(r->v[i].reason);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}
