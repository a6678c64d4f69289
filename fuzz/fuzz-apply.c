/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the apply walker: the input describes a hostile upper layer and the
 * host workspace it is applied to; both are built in scratch directories, the changeset is
 * applied in-process, and what landed on the "host" is checked.
 *
 * Target functions: sup_apply_walk(), sup_apply_read_records() and sup_apply_prune()
 * (supervisor/apply.c), the code `warden apply` runs in its children after dropping to the
 * owners, and for a dry run `warden diff`'s sup_apply_diff_write() and _read(), with the
 * diffs of supervisor/textdiff.c. Here they run as whoever runs the fuzzer (root in CI, a user elsewhere): nothing
 * needs privilege, and what cannot be built as that user (a device node) is left out.
 *
 * Scratch: one directory per process (/dev/shm when it can be written, where fsync costs
 * nothing, else $TMPDIR or /tmp), removed at exit (kept, and named, when a check fails); per
 * input it holds upper/, ws/ (the host workspace) and sentinel/ beside them, all rebuilt from
 * nothing. No time (the run's start is either before everything or after everything), no
 * randomness but the walker's own names for its temporary files, which never reach a check.
 *
 * Input, read with the codec's bounded reader (wire/); anything malformed is skipped whole,
 * bytes after the last entry are ignored:
 *   u8 flags           bit 0 dry run, bit 1 --force, bit 2 every host entry changed since the
 *                      run started, bit 3 an --include pattern follows
 *   [path include]     (bit 3) a path, as below, used as the pattern
 *   u8 n_entries       at most MAX_ENTRIES
 *   entries:
 *     u8 kind          enum kind below (modulo KIND_COUNT)
 *     u8 side          bit 0: the host workspace; else the upper layer
 *     u16 mode         permission bits, set-id and sticky included (07777 of it)
 *     path             u8 n (1..MAX_COMPONENTS), then n components: u8 c, a name of names[]
 *                      when c < N_NAMES, else u8 len (1..255) and that many bytes (no '/',
 *                      no NUL, not "." or "..")
 *     u16 len, bytes   a file's content, or a symlink's target (get_target), at most MAX_ARG
 * Host entries are made first, then upper ones, each in input order; missing parents are
 * made as plain directories; an entry that cannot be made (a parent is not a directory, the
 * name exists) is left out. Directory modes are set last, so that they do not stop the build.
 *
 * Checks on every input (a broken one traps, after a line on stderr):
 *  - the records the walker wrote decode (sup_apply_read_records returns 0) and add up;
 *  - nothing outside ws/ changed: sentinel/ is as it was, entry for entry (type, inode, mode,
 *    size, times), and the scratch directory holds only upper/, ws/ and sentinel/;
 *  - a dry run changes nothing in ws/ at all, directory times included, and neither do its
 *    diffs, whose records decode, whose modes are ones the apply may set, and whose hunks,
 *    escaped, hold no terminal control;
 *  - an entry the host had (same inode) keeps its mode, and a non-directory its size and
 *    mtime: the walker never writes a host entry in place;
 *  - what the walker made is a regular file (one link, no set-id or sticky bit, group or
 *    world write only where the host's regular file at that path had it), a directory (no
 *    set-user-ID, sticky, group or world write; set-group-ID only inherited from its parent)
 *    or a symlink whose target is relative with ".." only as leading components, no more of
 *    them than the link is deep, and which, when the host had no escaping symlink of its own
 *    to pass through, the kernel resolves beneath ws/ (openat2 RESOLVE_BENEATH); no FIFO,
 *    socket or device; no leftover temporary file;
 *  - held paths were not applied: a path that the default policy's workspace.hold names (or
 *    a directory above it; read here as literal paths, at any depth), or that has a ".git"
 *    below the top, or that is the top ".git",
 *    or is in a top ".git" that the host did not have as a directory or that the upper layer
 *    replaced, is exactly as the host had it (absent, or the same inode), unless the input's
 *    --include pattern names it or a directory above it;
 *  - when every host entry counts as changed since the run started and --force is not given,
 *    nothing the host had is replaced or deleted;
 *  - after a real apply whose pruning succeeded, the pending entries are still in the upper
 *    layer, and a second walk (dry run) finds nothing left to apply.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "apply.h"
#include "cleanup.h"
#include "fuzz-util.h"
#include "hide.h"
#include "io-util.h"
#include "policy.h"
#include "textdiff.h"
#include "wire.h"

#define APPLY_MAX_INPUT 65536u
#define MAX_ENTRIES 32u
#define MAX_COMPONENTS 72u /* deeper than the hold matcher's SUP_HIDE_MAX_DEPTH */
#define MAX_ARG 4096u
#define MAX_TARGET_COMPONENTS 32u
#define MAX_SNAP 20000u    /* entries one snapshot keeps */
#define MAX_SNAP_DEPTH 96u

enum kind {
	K_FILE,
	K_DIR,
	K_SYMLINK,
	K_WHITEOUT,  /* char 0:0 */
	K_FIFO,
	K_OPAQUE,    /* a directory marked user.overlay.opaque=y */
	K_HARDLINK,  /* a second name of the last regular file made on the same side */
	K_SOCKET,
	K_DEVICE,    /* char 1:3, only where mknod is allowed */
	K_REDIRECT,  /* a directory with a user.overlay.redirect marker */
	KIND_COUNT,
};

/* Names the fuzzer would take long to guess: git's and the hold list's, and look-alikes. */
static const char *const names[] = {
	".git", "config", "hooks", "pre-commit", "index", "objects", "refs", "HEAD", "info",
	"alternates", ".envrc", ".vscode", "settings.json", ".gitmodules", ".npmrc", ".bashrc",
	"modules", "sub", "a", "b", "...", "..a", ".. ", "a..", "-", "packed-refs", "worktrees",
	"commondir", "c", ".warden-apply-0000000000000000", ".GIT", "replace", "L255", "L200",
};
#define N_NAMES (sizeof(names) / sizeof(names[0]))

static char scratch[PATH_MAX];

/* A broken check: says which, and where the scratch is (kept for a look), then traps. */
__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)fputs("fuzz-apply: ", stderr);
	(void)vfprintf(stderr, fmt, ap);
	va_end(ap);
	(void)fprintf(stderr, " (scratch: %s)\n", scratch[0] ? scratch : "none yet");
	__builtin_trap();
}

#define FAIL(...) fail(__VA_ARGS__)

/* ------------------------------------------------------------------------------------------ */
/* The input                                                                                  */

struct entry {
	enum kind kind;
	bool host;
	unsigned mode;
	char path[PATH_MAX];
	size_t n_comp;
	const uint8_t *arg;
	size_t arg_len;
	char target[PATH_MAX]; /* K_SYMLINK */
};

struct input {
	bool dry_run, force, conflicts, has_include;
	char include[PATH_MAX];
	struct entry *v;
	size_t n;
};

static void input_done(struct input *in)
{
	free(in->v);
	in->v = NULL;
}

static const char *table_name(size_t i, char *buf)
{
	if (!strcmp(names[i], "L255") || !strcmp(names[i], "L200")) {
		size_t n = names[i][1] == '2' && names[i][2] == '5' ? 255 : 200;
		memset(buf, 'x', n);
		buf[n] = '\0';
		return buf;
	}
	return names[i];
}

/* A path of components into out; false when malformed or too long. */
static bool get_path(struct wire_rd *rd, char out[PATH_MAX], size_t *out_n)
{
	uint8_t n;
	if (!wire_get_u8(rd, &n) || n == 0 || n > MAX_COMPONENTS)
		return false;
	size_t len = 0;
	for (uint8_t i = 0; i < n; i++) {
		uint8_t c;
		char buf[256];
		const char *name;
		size_t nlen;
		if (!wire_get_u8(rd, &c))
			return false;
		if (c < N_NAMES) {
			name = table_name(c, buf);
			nlen = strlen(name);
		} else {
			uint8_t l;
			if (!wire_get_u8(rd, &l) || l == 0 || !wire_get_bytes(rd, buf, l))
				return false;
			nlen = l;
			buf[nlen] = '\0';
			if (memchr(buf, '/', nlen) || memchr(buf, '\0', nlen) || !strcmp(buf, ".") ||
			    !strcmp(buf, ".."))
				return false;
			name = buf;
		}
		if (len + (len ? 1 : 0) + nlen >= PATH_MAX)
			return false;
		if (len)
			out[len++] = '/';
		memcpy(out + len, name, nlen);
		len += nlen;
	}
	out[len] = '\0';
	*out_n = n;
	return true;
}

/*
 * A symlink target: u8 flags (bit 0: absolute), u8 n (0..MAX_TARGET_COMPONENTS), then n
 * components: u8 c, a name of names[] when c < N_NAMES, then "..", ".", "" (a doubled
 * slash) and "sentinel" for N_NAMES..N_NAMES + 3, else u8 len (1..255) and that many bytes
 * (no NUL; '/' allowed). An empty relative target is malformed; bytes after it are ignored.
 */
static bool get_target(struct wire_rd *rd, char out[PATH_MAX])
{
	static const char *const extra[] = { "..", ".", "", "sentinel" };
	uint8_t flags, n;
	if (!wire_get_u8(rd, &flags) || !wire_get_u8(rd, &n) || n > MAX_TARGET_COMPONENTS)
		return false;
	size_t len = 0;
	if (flags & 1)
		out[len++] = '/';
	for (uint8_t i = 0; i < n; i++) {
		uint8_t c;
		char buf[256];
		const char *name = buf;
		size_t nlen;
		if (!wire_get_u8(rd, &c))
			return false;
		if (c < N_NAMES) {
			name = table_name(c, buf);
		} else if (c < N_NAMES + 4) {
			name = extra[c - N_NAMES];
		} else {
			uint8_t l;
			if (!wire_get_u8(rd, &l) || l == 0 || !wire_get_bytes(rd, buf, l) ||
			    memchr(buf, '\0', l))
				return false;
			buf[l] = '\0';
		}
		nlen = strlen(name);
		if (len + (i ? 1 : 0) + nlen >= PATH_MAX)
			return false;
		if (i)
			out[len++] = '/';
		memcpy(out + len, name, nlen);
		len += nlen;
	}
	out[len] = '\0';
	return len > 0; /* bytes after the target are ignored, so a mutated count still parses */
}

static bool decode(const uint8_t *data, size_t size, struct input *out)
{
	struct wire_rd rd;
	uint8_t flags, n;
	wire_rd_init(&rd, data, size);
	memset(out, 0, sizeof(*out));
	if (!wire_get_u8(&rd, &flags))
		return false;
	out->dry_run = flags & 1;
	out->force = flags & 2;
	out->conflicts = flags & 4;
	out->has_include = flags & 8;
	size_t n_comp;
	if (out->has_include && !get_path(&rd, out->include, &n_comp))
		return false;
	if (!wire_get_u8(&rd, &n) || n > MAX_ENTRIES)
		return false;
	out->v = calloc(n ? n : 1, sizeof(*out->v));
	if (!out->v)
		return false;
	for (uint8_t i = 0; i < n; i++) {
		struct entry *e = &out->v[i];
		uint8_t kind, side;
		uint16_t mode, len;
		struct wire_rd arg;
		if (!wire_get_u8(&rd, &kind) || !wire_get_u8(&rd, &side) ||
		    !wire_get_u16(&rd, &mode) || !get_path(&rd, e->path, &e->n_comp) ||
		    !wire_get_u16(&rd, &len) || len > MAX_ARG || !wire_get_view(&rd, len, &arg)) {
			input_done(out);
			return false;
		}
		e->kind = (enum kind)(kind % KIND_COUNT);
		e->host = side & 1;
		e->mode = mode & 07777;
		e->arg = arg.p;
		e->arg_len = arg.len;
		if (e->kind == K_SYMLINK && !get_target(&arg, e->target)) {
			input_done(out);
			return false;
		}
	}
	out->n = n;
	return true; /* what follows the last entry is ignored (for the mutator's sake) */
}

/* ------------------------------------------------------------------------------------------ */
/* Scratch directories                                                                        */

static int scratch_fd = -1;
static struct pol_policy *pol;

/* Removes dfd/name and all below it, making directories searchable first. */
static void rm_tree(int dfd, const char *name, unsigned depth)
{
	struct stat st;
	if (depth > MAX_SNAP_DEPTH + 8 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		(void)unlinkat(dfd, name, 0);
		return;
	}
	if (fchmodat(dfd, name, 0700, 0) < 0)
		errno = 0; /* then it is removed as far as it can be read */
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d && fd >= 0)
		(void)close(fd);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rm_tree(dirfd(d), de->d_name, depth + 1);
	}
	if (d)
		(void)closedir(d);
	(void)unlinkat(dfd, name, AT_REMOVEDIR);
}

static void scratch_remove(void)
{
	if (scratch_fd < 0)
		return;
	static const char *const parts[] = { "upper", "ws", "sentinel" };
	for (size_t i = 0; i < 3; i++)
		rm_tree(scratch_fd, parts[i], 0);
	(void)close(scratch_fd);
	scratch_fd = -1;
	(void)rmdir(scratch);
}

static bool try_scratch(const char *base)
{
	if (!base || base[0] != '/')
		return false;
	int n = snprintf(scratch, sizeof(scratch), "%s/fuzz-apply-XXXXXX", base);
	if (n < 0 || (size_t)n >= sizeof(scratch) || !mkdtemp(scratch))
		return false;
	/* The walker reads overlay markers as user.* xattrs: the scratch must hold them. */
	if (setxattr(scratch, "user.fuzz", "y", 1, 0) < 0) {
		(void)rmdir(scratch);
		return false;
	}
	(void)removexattr(scratch, "user.fuzz");
	scratch_fd = open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return scratch_fd >= 0;
}

static void init_once(void)
{
	if (pol)
		return;
	umask(0); /* the walker's own modes are seen as it set them */
	size_t len;
	const char *text = pol_default_yaml(&len);
	if (pol_parse("<default>", text, len, &pol, NULL) < 0)
		FAIL("the default policy does not parse");
	if (!try_scratch("/dev/shm") && !try_scratch(secure_getenv("TMPDIR")) &&
	    !try_scratch("/tmp"))
		FAIL("no scratch directory with user xattrs");
	(void)atexit(scratch_remove);
}

/* Opens (making them) the directories of path's first n - 1 components below root. */
static int open_parent(int root, const char *path, const char **out_name)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	int fd = fcntl(root, F_DUPFD_CLOEXEC, 3);
	char *c = buf;
	for (char *slash; fd >= 0 && (slash = strchr(c, '/')); c = slash + 1) {
		*slash = '\0';
		if (mkdirat(fd, c, 0755) < 0 && errno != EEXIST) {
			(void)close(fd);
			return -1;
		}
		int next = io_openat2(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
				      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
		(void)close(fd);
		fd = next;
	}
	*out_name = path + (c - buf);
	return fd;
}

struct built {
	char last_file[2][PATH_MAX]; /* per side: the last regular file made, for hard links */
	char dirs[MAX_ENTRIES][PATH_MAX];
	unsigned dir_mode[MAX_ENTRIES];
	bool dir_host[MAX_ENTRIES];
	size_t n_dirs;
};

static void build_entry(int root, const struct entry *e, struct built *b)
{
	const char *name;
	_cleanup_close_ int pd = open_parent(root, e->path, &name);
	if (pd < 0)
		return;
	int side = e->host;
	bool is_dir = false;
	switch (e->kind) {
	case K_FILE: {
		_cleanup_close_ int fd = openat(pd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
							  O_CLOEXEC, 0600);
		if (fd < 0 || io_write_all(fd, e->arg, e->arg_len) < 0)
			return;
		(void)fchmod(fd, (mode_t)e->mode);
		snprintf(b->last_file[side], PATH_MAX, "%s", e->path);
		return;
	}
	case K_DIR:
	case K_OPAQUE:
	case K_REDIRECT:
		if (mkdirat(pd, name, 0755) < 0 && errno != EEXIST)
			return;
		is_dir = true;
		break;
	case K_SYMLINK: {
		if (symlinkat(e->target, pd, name) < 0)
			return; /* the name is taken: left out */
		return;
	}
	case K_WHITEOUT:
		(void)mknodat(pd, name, S_IFCHR, makedev(0, 0));
		return;
	case K_FIFO:
		(void)mknodat(pd, name, S_IFIFO | (e->mode & 0777), 0);
		return;
	case K_SOCKET:
		(void)mknodat(pd, name, S_IFSOCK | (e->mode & 0777), 0);
		return;
	case K_DEVICE:
		(void)mknodat(pd, name, S_IFCHR | (e->mode & 0777), makedev(1, 3));
		return;
	case K_HARDLINK:
		if (b->last_file[side][0])
			if (linkat(root, b->last_file[side], pd, name, 0) < 0)
				return; /* left out */
		return;
	case KIND_COUNT:
		return;
	}
	if (!is_dir)
		return;
	_cleanup_close_ int dfd = io_openat2(pd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
					     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	if (dfd < 0)
		return;
	if (e->kind == K_OPAQUE)
		(void)fsetxattr(dfd, "user.overlay.opaque", "y", 1, 0);
	else if (e->kind == K_REDIRECT)
		(void)fsetxattr(dfd, "user.overlay.redirect", "/a", 2, 0);
	if (b->n_dirs < MAX_ENTRIES) {
		snprintf(b->dirs[b->n_dirs], PATH_MAX, "%s", e->path);
		b->dir_mode[b->n_dirs] = e->mode;
		b->dir_host[b->n_dirs] = e->host;
		b->n_dirs++;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Snapshots                                                                                  */

struct snap_entry {
	char *path;
	mode_t mode;
	ino_t ino;
	off_t size;
	nlink_t nlink;
	struct timespec mtime, ctime;
	char *link;
};

struct snap {
	struct snap_entry *v;
	size_t n;
	bool truncated;
};

static void snap_done(struct snap *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].link);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static void snap_add(struct snap *s, int dfd, const char *name, const char *path,
		     const struct stat *st)
{
	if (s->n >= MAX_SNAP) {
		s->truncated = true;
		return;
	}
	struct snap_entry *grown = reallocarray(s->v, s->n + 1, sizeof(*grown));
	if (!grown)
		FAIL("out of memory");
	s->v = grown;
	struct snap_entry *e = &s->v[s->n++];
	memset(e, 0, sizeof(*e));
	e->path = strdup(path);
	if (!e->path)
		FAIL("out of memory");
	e->mode = st->st_mode;
	e->ino = st->st_ino;
	e->size = st->st_size;
	e->nlink = st->st_nlink;
	e->mtime = st->st_mtim;
	e->ctime = st->st_ctim;
	if (S_ISLNK(st->st_mode)) {
		char t[PATH_MAX];
		ssize_t n = readlinkat(dfd, name, t, sizeof(t) - 1);
		t[n < 0 ? 0 : n] = '\0';
		e->link = strdup(t);
		if (!e->link)
			FAIL("out of memory");
	}
}

static void snap_walk(struct snap *s, int dfd, char *path, size_t plen, unsigned depth)
{
	if (depth > MAX_SNAP_DEPTH) {
		s->truncated = true;
		return;
	}
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			(void)close(fd);
		s->truncated = true;
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		size_t nlen = strlen(de->d_name);
		if (plen + 1 + nlen >= PATH_MAX) {
			s->truncated = true;
			continue;
		}
		if (plen)
			path[plen] = '/';
		memcpy(path + plen + (plen ? 1 : 0), de->d_name, nlen + 1);
		size_t len = plen + (plen ? 1 : 0) + nlen;
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			snap_add(s, dirfd(d), de->d_name, path, &st);
			if (S_ISDIR(st.st_mode)) {
				int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY |
									O_NOFOLLOW | O_CLOEXEC);
				if (sub >= 0) {
					snap_walk(s, sub, path, len, depth + 1);
					(void)close(sub);
				} else {
					s->truncated = true;
				}
			}
		}
		path[plen] = '\0';
	}
	(void)closedir(d);
}

static int cmp_entries(const void *a, const void *b)
{
	return strcmp(((const struct snap_entry *)a)->path, ((const struct snap_entry *)b)->path);
}

/* Everything below dfd (borrowed), with the directory itself as "." first. */
static void snap_take(struct snap *s, int dfd)
{
	char path[PATH_MAX] = "";
	struct stat st;
	memset(s, 0, sizeof(*s));
	if (fstat(dfd, &st) < 0)
		FAIL("fstat a scratch directory: %s", strerror(errno));
	snap_walk(s, dfd, path, 0, 0);
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_entries);
	snap_add(s, dfd, ".", ".", &st); /* last: "." sorts before every name but stays apart */
}

static const struct snap_entry *snap_find(const struct snap *s, const char *path)
{
	struct snap_entry key = { .path = (char *)path };
	size_t n = s->n && !strcmp(s->v[s->n - 1].path, ".") ? s->n - 1 : s->n;
	return n ? bsearch(&key, s->v, n, sizeof(*s->v), cmp_entries) : NULL;
}

static bool same_entry(const struct snap_entry *a, const struct snap_entry *b, bool times)
{
	if (a->mode != b->mode || a->ino != b->ino)
		return false;
	if (S_ISDIR(a->mode) && !times)
		return true;
	if (a->size != b->size || a->mtime.tv_sec != b->mtime.tv_sec ||
	    a->mtime.tv_nsec != b->mtime.tv_nsec)
		return false;
	if (times && (a->ctime.tv_sec != b->ctime.tv_sec || a->ctime.tv_nsec != b->ctime.tv_nsec ||
		      a->nlink != b->nlink))
		return false;
	return !a->link == !b->link && (!a->link || !strcmp(a->link, b->link));
}

static void expect_same_snap(const struct snap *a, const struct snap *b, const char *what)
{
	if (a->n != b->n)
		FAIL("%s: %zu entries before, %zu after", what, a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].path, b->v[i].path) || !same_entry(&a->v[i], &b->v[i], true))
			FAIL("%s: '%s' changed", what, a->v[i].path);
}

/* ------------------------------------------------------------------------------------------ */
/* The rules, written here apart from the walker's                                            */

/* Some leading part of path (whole components) matches one of the patterns (the matcher). */
static bool prefix_matches(char *const *patterns, size_t n, const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);
	memcpy(buf, path, len + 1);
	for (size_t end = 1; end <= len; end++) {
		if (buf[end] != '/' && buf[end] != '\0')
			continue;
		char saved = buf[end];
		buf[end] = '\0';
		for (size_t i = 0; i < n; i++)
			if (sup_hide_match(patterns[i], buf)) {
				buf[end] = saved;
				return true;
			}
		buf[end] = saved;
	}
	return false;
}

/*
 * The components of path, each as (start, length), in *out (at most max); their count.
 */
static size_t components(const char *path, const char **start, size_t *len, size_t max)
{
	size_t n = 0;
	for (const char *p = path; *p && n < max;) {
		const char *slash = strchr(p, '/');
		start[n] = p;
		len[n] = slash ? (size_t)(slash - p) : strlen(p);
		if (len[n])
			n++;
		if (!slash)
			break;
		p = slash + 1;
	}
	return n;
}

/*
 * The default hold list, read here without the matcher (and so without its depth limit):
 * every pattern is a literal path from the top, or a leading "**" component and a literal
 * path that may start at any depth. A path is held when a leading part of it is such a path.
 */
static bool hold_names(const char *path)
{
	const char *pc[MAX_COMPONENTS + 1], *hc[16];
	size_t pl[MAX_COMPONENTS + 1], hl[16];
	size_t np = components(path, pc, pl, MAX_COMPONENTS + 1);
	for (size_t i = 0; i < pol->n_hold; i++) {
		const char *pat = pol->hold[i];
		bool anywhere = !strncmp(pat, "**/", 3);
		if (anywhere)
			pat += 3;
		if (strpbrk(pat, "*?[\\"))
			FAIL("hold pattern '%s' is not a literal path: teach the checker", pol->hold[i]);
		size_t nh = components(pat, hc, hl, 16);
		for (size_t at = 0; at + nh <= np && (anywhere || at == 0); at++) {
			size_t k = 0;
			while (k < nh && pl[at + k] == hl[k] && !memcmp(pc[at + k], hc[k], hl[k]))
				k++;
			if (k == nh)
				return true;
		}
	}
	return false;
}

struct ctx {
	const struct input *in;
	int ws_fd, upper_fd;
	bool top_git_whole;   /* everything in the top .git is held */
	bool host_escapes;    /* the host had a symlink that resolves out of ws/ */
};

static bool is_protected(const struct ctx *c, const char *path)
{
	char *inc = (char *)c->in->include;
	if (c->in->has_include && prefix_matches(&inc, 1, path))
		return false;
	if (hold_names(path))
		return true;
	/* a .git below the top, or the top one */
	const char *p = path;
	for (size_t i = 0; *p; i++) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		if (len == 4 && !memcmp(p, ".git", 4)) {
			if (i > 0 || !slash || c->top_git_whole)
				return true;
		}
		if (!slash)
			break;
		p = slash + 1;
	}
	return false;
}

/* A target the rules allow at a path `depth` directories deep: written again here. */
static bool target_ok(const char *t, unsigned depth)
{
	if (!*t || *t == '/')
		return false;
	unsigned ups = 0;
	bool after_name = false;
	for (const char *p = t; *p;) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		bool dotdot = len == 2 && p[0] == '.' && p[1] == '.';
		if (dotdot && (after_name || ++ups > depth))
			return false;
		if (!dotdot && len && !(len == 1 && p[0] == '.'))
			after_name = true;
		if (!slash)
			break;
		p = slash + 1;
	}
	return true;
}

static unsigned depth_of(const char *path)
{
	unsigned d = 0;
	for (const char *p = path; *p; p++)
		d += *p == '/';
	return d;
}

static bool resolves_beneath(int ws_fd, const char *path)
{
	int fd = io_openat2(ws_fd, path, O_PATH, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
	if (fd >= 0)
		(void)close(fd);
	return fd != -EXDEV;
}

/* The upper layer has an entry at path, reached without a symlink. */
static bool upper_has(const struct ctx *c, const char *path)
{
	int fd = io_openat2(c->upper_fd, path, O_PATH | O_NOFOLLOW,
			    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	if (fd >= 0)
		(void)close(fd);
	return fd >= 0;
}

static void check_new_entry(const struct ctx *c, const struct snap *after,
			    const struct snap_entry *e, const struct snap_entry *old)
{
	mode_t m = e->mode;
	const char *name = strrchr(e->path, '/');
	name = name ? name + 1 : e->path;
	if (!strncmp(name, ".warden-apply-", 14) && !upper_has(c, e->path))
		FAIL("a temporary file was left: '%s'", e->path);
	if (S_ISREG(m)) {
		mode_t may_write = old && S_ISREG(old->mode) ? old->mode & 022 : 0;
		if (m & 07000)
			FAIL("file '%s' applied with mode %04o", e->path, (unsigned)(m & 07777));
		if (m & 022 & ~may_write)
			FAIL("file '%s' applied with mode %04o, the host's was %04o", e->path,
			     (unsigned)(m & 07777), old ? (unsigned)(old->mode & 07777) : 0u);
		if (e->nlink != 1)
			FAIL("file '%s' applied with %lu links", e->path, (unsigned long)e->nlink);
	} else if (S_ISDIR(m)) {
		char parent[PATH_MAX];
		snprintf(parent, sizeof(parent), "%s", e->path);
		char *slash = strrchr(parent, '/');
		const struct snap_entry *pe = NULL;
		if (slash) {
			*slash = '\0';
			pe = snap_find(after, parent);
		} else {
			pe = &after->v[after->n - 1]; /* "." */
		}
		bool inherits = pe && (pe->mode & S_ISGID);
		if ((m & (S_ISUID | S_ISVTX | 022)) || ((m & S_ISGID) && !inherits))
			FAIL("directory '%s' applied with mode %04o", e->path, (unsigned)(m & 07777));
	} else if (S_ISLNK(m)) {
		if (!target_ok(e->link, depth_of(e->path)))
			FAIL("symlink '%s' -> '%s' applied", e->path, e->link);
		if (!c->host_escapes && !resolves_beneath(c->ws_fd, e->path))
			FAIL("symlink '%s' -> '%s' resolves out of the workspace", e->path, e->link);
	} else {
		FAIL("special file '%s' (mode %06o) applied", e->path, (unsigned)m);
	}
}

static void check_host(const struct ctx *c, const struct snap *before, const struct snap *after)
{
	const struct input *in = c->in;
	if (in->dry_run) {
		if (!before->truncated)
			expect_same_snap(before, after, "a dry run changed the workspace");
		return;
	}
	/* What is there now */
	for (size_t i = 0; i + 1 < after->n; i++) {
		const struct snap_entry *e = &after->v[i];
		const struct snap_entry *old = snap_find(before, e->path);
		bool same = old && old->ino == e->ino && (old->mode & S_IFMT) == (e->mode & S_IFMT);
		if (same && !same_entry(old, e, false))
			FAIL("host entry '%s' was changed in place (mode %04o -> %04o)", e->path,
			     (unsigned)(old->mode & 07777), (unsigned)(e->mode & 07777));
		if (!same)
			check_new_entry(c, after, e, old);
		if (!same && is_protected(c, e->path))
			FAIL("held path '%s' was applied", e->path);
		if (!same && old && in->conflicts && !in->force)
			FAIL("'%s' changed on the host since the run started, and was replaced",
			     e->path);
	}
	/* What is gone (when both snapshots saw everything) */
	for (size_t i = 0; !before->truncated && !after->truncated && i + 1 < before->n; i++) {
		const struct snap_entry *old = &before->v[i];
		if (snap_find(after, old->path))
			continue;
		if (is_protected(c, old->path))
			FAIL("held path '%s' was deleted", old->path);
		if (in->conflicts && !in->force)
			FAIL("'%s' changed on the host since the run started, and was deleted",
			     old->path);
	}
}

/* ------------------------------------------------------------------------------------------ */

static int read_back(int fd, struct sup_chg_report *rep)
{
	if (lseek(fd, 0, SEEK_SET) < 0)
		FAIL("lseek: %s", strerror(errno));
	int r = sup_apply_read_records(fd, rep);
	if (r < 0)
		FAIL("the walker's own records do not decode: %s", strerror(-r));
	if (rep->n_applied + rep->n_held + rep->n_refused != rep->n)
		FAIL("the report's counts do not add up");
	for (size_t i = 0; i < rep->n; i++)
		if (!rep->v[i].path[0] || rep->v[i].path[0] == '/' ||
		    (rep->v[i].verdict != SUP_CHG_APPLIED && !rep->v[i].reason))
			FAIL("record %zu is malformed", i);
	return 0;
}

static int records_fd(void);

/*
 * warden diff's part, on a dry run's report: the records decode, every file's mode is one
 * the apply may set, and the hunks, escaped, hold no terminal control.
 */
static void check_diffs(const struct sup_apply_spec *spec, const struct sup_chg_report *rep)
{
	_cleanup_close_ int fd = records_fd();
	if (sup_apply_diff_write(spec, rep, fd) < 0)
		return; /* out of memory, or a side that cannot be read as this user */
	if (lseek(fd, 0, SEEK_SET) < 0)
		FAIL("lseek: %s", strerror(errno));
	struct sup_diff_list diffs = { 0 };
	int r = sup_apply_diff_read(fd, rep->n, &diffs);
	if (r < 0)
		FAIL("the diff records do not decode: %s", strerror(-r));
	for (size_t i = 0; i < diffs.n; i++) {
		const struct sup_file_diff *d = &diffs.v[i];
		enum sup_chg_kind k = rep->v[d->index].kind;
		if (k != SUP_CHG_ADDED && k != SUP_CHG_MODIFIED && k != SUP_CHG_DELETED)
			FAIL("a diff for '%s', which is %s", rep->v[d->index].path,
			     sup_chg_kind_name(k));
		if (d->new_file && ((d->new_mode & 07000) ||
				    (d->new_mode & 022 & ~(d->old_file ? d->old_mode : 0))))
			FAIL("diff of '%s' shows mode %04o", rep->v[d->index].path, d->new_mode);
		if (d->status != SUP_DIFF_TEXT)
			continue;
		char *esc = NULL;
		size_t len = 0;
		if (sup_textdiff_escape(d->text, d->text_len, &esc, &len) < 0)
			FAIL("out of memory");
		for (size_t j = 0; j < len; j++) {
			unsigned char c = (unsigned char)esc[j];
			if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
				FAIL("escaped hunks of '%s' hold byte 0x%02x", rep->v[d->index].path, c);
		}
		free(esc);
	}
	sup_diff_list_done(&diffs);
}

static int records_fd(void)
{
	int fd = memfd_create("fuzz-apply-records", MFD_CLOEXEC);
	if (fd < 0)
		FAIL("memfd_create: %s", strerror(errno));
	return fd;
}

static void run_one(const struct input *in)
{
	/* Fresh scratch */
	static const char *const parts[] = { "upper", "ws", "sentinel" };
	for (size_t i = 0; i < 3; i++) {
		rm_tree(scratch_fd, parts[i], 0);
		if (mkdirat(scratch_fd, parts[i], 0755) < 0)
			FAIL("mkdir %s: %s", parts[i], strerror(errno));
	}
	_cleanup_close_ int upper = openat(scratch_fd, "upper", O_RDONLY | O_DIRECTORY |
							    O_CLOEXEC);
	_cleanup_close_ int ws = openat(scratch_fd, "ws", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int sent = openat(scratch_fd, "sentinel", O_RDONLY | O_DIRECTORY |
							      O_CLOEXEC);
	if (upper < 0 || ws < 0 || sent < 0)
		FAIL("open the scratch directories: %s", strerror(errno));
	if (mkdirat(sent, "d", 0755) < 0)
		FAIL("mkdir sentinel/d: %s", strerror(errno));
	for (size_t i = 0; i < 2; i++) {
		_cleanup_close_ int f = openat(sent, i ? "d/t" : "s", O_WRONLY | O_CREAT |
							  O_EXCL | O_CLOEXEC, 0644);
		if (f < 0 || io_write_all(f, "sentinel\n", 9) < 0)
			FAIL("write the sentinel: %s", strerror(errno));
	}

	/* Build: the host first, then the upper layer; directory modes last. */
	static struct built b;
	memset(&b, 0, sizeof(b));
	for (int pass = 1; pass >= 0; pass--)
		for (size_t i = 0; i < in->n; i++)
			if (in->v[i].host == (pass == 1))
				build_entry(pass ? ws : upper, &in->v[i], &b);
	for (size_t i = b.n_dirs; i-- > 0;)
		if (fchmodat(b.dir_host[i] ? ws : upper, b.dirs[i], (mode_t)b.dir_mode[i], 0) < 0)
			continue; /* below a directory already closed to us: it keeps 0755 */

	struct ctx c = { .in = in, .ws_fd = ws, .upper_fd = upper };
	struct snap before, sent_before;
	snap_take(&before, ws);
	snap_take(&sent_before, sent);
	const struct snap_entry *git = snap_find(&before, ".git");
	struct stat ug;
	bool upper_git_dir = fstatat(upper, ".git", &ug, AT_SYMLINK_NOFOLLOW) == 0 &&
			     S_ISDIR(ug.st_mode);
	bool upper_git_opaque = false;
	if (upper_git_dir) {
		char v[4];
		_cleanup_close_ int g = openat(upper, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
							      O_CLOEXEC);
		upper_git_opaque = g < 0 || (fgetxattr(g, "user.overlay.opaque", v, sizeof(v)) == 1 &&
					     v[0] == 'y');
	}
	struct stat ugany;
	bool upper_git = fstatat(upper, ".git", &ugany, AT_SYMLINK_NOFOLLOW) == 0;
	c.top_git_whole = !git || !S_ISDIR(git->mode) || (upper_git && !upper_git_dir) ||
			  upper_git_opaque;
	for (size_t i = 0; i + 1 < before.n; i++)
		if (S_ISLNK(before.v[i].mode) && !resolves_beneath(ws, before.v[i].path))
			c.host_escapes = true;

	/* Apply */
	char *include = (char *)in->include;
	struct sup_apply_spec spec = {
		.upper_fd = upper,
		.ws_fd = ws,
		.hold = pol->hold,
		.n_hold = pol->n_hold,
		.include = in->has_include ? &include : NULL,
		.n_include = in->has_include ? 1 : 0,
		.base_sec = in->conflicts ? 0 : INT64_MAX,
		.base_nsec = 0,
		.force = in->force,
		.dry_run = in->dry_run,
	};
	_cleanup_close_ int recs = records_fd();
	(void)sup_apply_walk(&spec, recs);
	struct sup_chg_report rep = { 0 };
	(void)read_back(recs, &rep);
	if (in->dry_run)
		check_diffs(&spec, &rep);

	/* Check */
	struct snap after, sent_after;
	snap_take(&after, ws);
	snap_take(&sent_after, sent);
	expect_same_snap(&sent_before, &sent_after, "the sentinel beside the workspace");
	{
		_cleanup_close_ int dup = fcntl(scratch_fd, F_DUPFD_CLOEXEC, 3);
		DIR *d = dup >= 0 ? fdopendir(TAKE_FD(dup)) : NULL;
		struct dirent *de;
		while (d && (de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
			    strcmp(de->d_name, "upper") && strcmp(de->d_name, "ws") &&
			    strcmp(de->d_name, "sentinel"))
				FAIL("'%s' appeared beside the workspace", de->d_name);
		if (d)
			(void)closedir(d);
	}
	check_host(&c, &before, &after);

	/* Prune, then a second walk finds nothing left to apply. */
	if (!in->dry_run) {
		bool *pending_in_upper = calloc(rep.n ? rep.n : 1, sizeof(bool));
		if (!pending_in_upper)
			FAIL("out of memory");
		for (size_t i = 0; i < rep.n; i++)
			pending_in_upper[i] = rep.v[i].verdict != SUP_CHG_APPLIED &&
					      upper_has(&c, rep.v[i].path);
		if (sup_apply_prune(&spec, &rep) == 0) {
			for (size_t i = 0; i < rep.n; i++)
				if (pending_in_upper[i] && !upper_has(&c, rep.v[i].path))
					FAIL("the pruning removed pending '%s'", rep.v[i].path);
			spec.dry_run = true;
			_cleanup_close_ int again = records_fd();
			struct sup_chg_report rep2 = { 0 };
			if (sup_apply_walk(&spec, again) == 0) {
				(void)read_back(again, &rep2);
				for (size_t i = 0; i < rep2.n; i++)
					if (rep2.v[i].verdict == SUP_CHG_APPLIED)
						FAIL("'%s' (%s) would be applied again after the "
						     "pruning",
						     rep2.v[i].path, sup_chg_kind_name(rep2.v[i].kind));
			}
			sup_chg_report_done(&rep2);
		}
		free(pending_in_upper);
	}
	sup_chg_report_done(&rep);
	snap_done(&before);
	snap_done(&after);
	snap_done(&sent_before);
	snap_done(&sent_after);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > APPLY_MAX_INPUT)
		return -1; /* keep it out of the corpus */
	struct input in;
	if (!decode(data, size, &in))
		return 0;
	init_once();
	run_one(&in);
	input_done(&in);
	return 0;
}
