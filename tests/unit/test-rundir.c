/* SPDX-License-Identifier: MIT */
/*
 * rundir: run folder names, template copying, inline workspace files and opening a run folder
 * for grading, each over real folders under a fresh mkdtemp() root that is removed afterwards.
 * Some cases (a setuid bit on a template file) want root; as another user they still pass,
 * since chmod on one's own file sets those bits too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "io-util.h"
#include "rundir.h"
#include "unit-util.h"

#define NOW_2024 1704164645 /* 2024-01-02T03:04:05Z */

struct fx {
	char root[64];
	int root_fd;
	mode_t old_umask;
};

/* ---- helpers ---- */

/* Formats into buf and insists that it fits. */
__attribute__((format(printf, 3, 4))) static void fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(buf, len, f, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < len);
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	fmt(f->root, sizeof(f->root), "/tmp/warden-rundir-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	f->root_fd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(f->root_fd >= 0);
	f->old_umask = umask(022);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	(void)umask(f->old_umask);
	(void)close(f->root_fd);
	unit_rm_rf_at(AT_FDCWD, f->root);
	free(f);
	return 0;
}

/* root/rel as an absolute path, in buf. */
static const char *at(const struct fx *f, const char *rel, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", f->root, rel);
	assert_true(n > 0 && (size_t)n < len);
	return buf;
}

static void mk(int dfd, const char *rel, mode_t mode)
{
	assert_int_equal(mkdirat(dfd, rel, 0700), 0);
	assert_int_equal(fchmodat(dfd, rel, mode, 0), 0);
}

static void put(int dfd, const char *rel, const char *content, mode_t mode)
{
	int fd = openat(dfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	assert_true(fd >= 0);
	size_t len = strlen(content);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(close(fd), 0);
}

static void assert_content(int dfd, const char *rel, const char *want)
{
	char buf[4096];
	int n = io_read_at(dfd, rel, buf, sizeof(buf));
	assert_int_equal(n, (int)strlen(want));
	assert_string_equal(buf, want);
}

static mode_t mode_of(int dfd, const char *rel)
{
	struct stat st;
	assert_int_equal(fstatat(dfd, rel, &st, AT_SYMLINK_NOFOLLOW), 0);
	return st.st_mode & 07777;
}

/* dfd/rel holds exactly want and has the permission bits mode. */
static void assert_file(int dfd, const char *rel, const char *want, mode_t mode)
{
	assert_content(dfd, rel, want);
	assert_int_equal(mode_of(dfd, rel), mode);
}

static mode_t type_of(int dfd, const char *rel)
{
	struct stat st;
	if (fstatat(dfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	return st.st_mode & S_IFMT;
}

static bool absent(int dfd, const char *rel)
{
	struct stat st;
	return fstatat(dfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

static void assert_link(int dfd, const char *rel, const char *target)
{
	char buf[PATH_MAX];
	assert_int_equal(type_of(dfd, rel), S_IFLNK);
	ssize_t n = readlinkat(dfd, rel, buf, sizeof(buf) - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, target);
}

/* Counts the entries below dfd/rel (never following a link) and sums regular file sizes. */
static void tally(int dfd, const char *rel, size_t *n, uint64_t *bytes)
{
	int fd = openat(dfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	assert_true(fd >= 0);
	DIR *d = fdopendir(fd);
	assert_non_null(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		struct stat st;
		assert_int_equal(fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW), 0);
		(*n)++;
		if (S_ISREG(st.st_mode))
			*bytes += (uint64_t)st.st_size;
		if (S_ISDIR(st.st_mode))
			tally(dirfd(d), de->d_name, n, bytes);
	}
	(void)closedir(d);
}

static size_t count_entries(int dfd, const char *rel)
{
	size_t n = 0;
	uint64_t bytes = 0;
	tally(dfd, rel, &n, &bytes);
	return n;
}

/* Creates a run folder under root/out; returns its workspace fd and stores the run fd. */
static int new_run(struct fx *f, int *run_fd, char *path, size_t path_len)
{
	char out[PATH_MAX], why[512] = "";
	struct timespec now = { .tv_sec = NOW_2024 };
	int r = sup_rundir_create(at(f, "out", out, sizeof(out)), "task", &now, path, path_len,
				  run_fd, why, sizeof(why));
	if (r != 0)
		fail_msg("sup_rundir_create: %d %s", r, why);
	int ws = openat(*run_fd, "workspace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	assert_true(ws >= 0);
	return ws;
}

static int new_ws(struct fx *f)
{
	char path[PATH_MAX];
	int run_fd = -1;
	int ws = new_run(f, &run_fd, path, sizeof(path));
	(void)close(run_fd);
	return ws;
}

static int copy(struct fx *f, const char *tpl_rel, int ws, char *why, size_t why_len)
{
	char tpl[PATH_MAX];
	why[0] = '\0';
	return sup_rundir_copy_template(at(f, tpl_rel, tpl, sizeof(tpl)), ws, why, why_len);
}

static void assert_why(const char *why, const char *needle)
{
	if (!strstr(why, needle))
		fail_msg("why '%s' lacks '%s'", why, needle);
	assert_null(strchr(why, '\n'));
}

/* Copying the template tpl_rel into ws fails with err, and why says needle. */
static void assert_copy_refused(struct fx *f, const char *tpl_rel, int ws, int err,
				const char *needle)
{
	char why[512];
	assert_int_equal(copy(f, tpl_rel, ws, why, sizeof(why)), err);
	assert_why(why, needle);
}

/* ---- sup_rundir_create ---- */

static void test_create_name_format(void **state)
{
	struct fx *f = *state;
	char out[PATH_MAX], path[PATH_MAX], why[512] = "";
	struct timespec now = { .tv_sec = NOW_2024, .tv_nsec = 999999999 };
	int fd = -1;
	(void)umask(077); /* the run folder is 0700, its workspace 0755, whatever the umask */
	at(f, "out", out, sizeof(out));
	assert_int_equal(sup_rundir_create(out, "fix-parser", &now, path, sizeof(path), &fd, why,
					   sizeof(why)),
			 0);
	assert_int_equal(type_of(f->root_fd, "out"), S_IFDIR); /* made: it was missing */

	char prefix[PATH_MAX];
	fmt(prefix, sizeof(prefix), "%s/fix-parser-20240102T030405Z-", out);
	size_t pl = strlen(prefix);
	assert_int_equal(strncmp(path, prefix, pl), 0);
	assert_int_equal(strlen(path), pl + 8);
	for (size_t i = pl; i < pl + 8; i++)
		assert_non_null(strchr("0123456789abcdef", path[i]));

	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	struct stat a, b;
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(lstat(path, &b), 0);
	assert_true(S_ISDIR(b.st_mode));
	assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	assert_int_equal(b.st_mode & 07777, 0700);
	assert_int_equal(type_of(fd, "workspace"), S_IFDIR);
	assert_int_equal(mode_of(fd, "workspace"), 0755);
	assert_int_equal(count_entries(fd, "."), 1);
	assert_int_equal(count_entries(fd, "workspace"), 0);
	(void)close(fd);
}

static void test_create_unique(void **state)
{
	struct fx *f = *state;
	enum { N = 16 };
	char out[PATH_MAX], paths[N][PATH_MAX], why[512] = "";
	struct timespec now = { .tv_sec = NOW_2024 };
	mk(f->root_fd, "out", 0700); /* an existing out folder is fine */
	at(f, "out/", out, sizeof(out)); /* and a trailing slash makes no "//" */
	for (int i = 0; i < N; i++) {
		int fd = -1;
		assert_int_equal(sup_rundir_create(out, "t.1_x", &now, paths[i], sizeof(paths[i]),
						   &fd, why, sizeof(why)),
				 0);
		assert_null(strstr(paths[i], "//"));
		assert_int_equal(type_of(AT_FDCWD, paths[i]), S_IFDIR);
		(void)close(fd);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(paths[i], paths[j]);
	}
	assert_int_equal(count_entries(f->root_fd, "out"), 2 * N);
	assert_int_equal(mode_of(f->root_fd, "out"), 0700); /* not changed */
}

static void test_create_errors(void **state)
{
	struct fx *f = *state;
	char out[PATH_MAX], path[PATH_MAX], why[512] = "";
	struct timespec now = { .tv_sec = NOW_2024 };
	int fd = -77;
	at(f, "out", out, sizeof(out));

	char long_id[TASK_MAX_ID + 2];
	memset(long_id, 'a', TASK_MAX_ID + 1);
	long_id[TASK_MAX_ID + 1] = '\0';
	const char *bad_ids[] = { "", "../x", "a/b", ".hidden", "-opt", "sp ace", long_id };
	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		assert_int_equal(sup_rundir_create(out, bad_ids[i], &now, path, sizeof(path), &fd,
						   why, sizeof(why)),
				 -EINVAL);
		assert_why(why, "task_id");
	}
	assert_true(absent(f->root_fd, "out")); /* refused before anything was made */

	/* The path must fit in path_len with its NUL: exactly enough works, one less does not. */
	size_t need = strlen(out) + strlen("/t-20240102T030405Z-12345678") + 1;
	assert_int_equal(sup_rundir_create(out, "t", &now, path, need - 1, &fd, why, sizeof(why)),
			 -ENAMETOOLONG);
	assert_int_equal(fd, -77);
	assert_true(absent(f->root_fd, "out"));
	assert_int_equal(sup_rundir_create(out, "t", &now, path, need, &fd, why, sizeof(why)), 0);
	assert_int_equal(strlen(path), need - 1);
	(void)close(fd);
	fd = -77;

	/* out_dir is a file */
	put(f->root_fd, "file", "x", 0644);
	assert_int_equal(sup_rundir_create(at(f, "file", out, sizeof(out)), "t", &now, path,
					   sizeof(path), &fd, why, sizeof(why)),
			 -ENOTDIR);
	assert_why(why, "not a directory");

	/* a time whose year has five digits */
	struct timespec far = { .tv_sec = 253402300800 }; /* 10000-01-01 */
	assert_int_equal(sup_rundir_create(at(f, "out", out, sizeof(out)), "t", &far, path,
					   sizeof(path), &fd, why, sizeof(why)),
			 -EOVERFLOW);
	assert_int_equal(fd, -77);
}

/* ---- sup_rundir_copy_template ---- */

static void test_copy_tree(void **state)
{
	struct fx *f = *state;
	int t = f->root_fd;
	char why[512];
	mk(t, "tpl", 0755);
	mk(t, "tpl/sub", 0755);
	mk(t, "tpl/sub/deeper", 0750);
	put(t, "tpl/sub/deeper/file.txt", "deep\n", 0644);
	put(t, "tpl/run.sh", "#!/bin/sh\necho hi\n", 0755);
	put(t, "tpl/secret", "s3cret", 0600);
	put(t, "tpl/.hidden", "h", 0644);
	put(t, "tpl/empty", "", 0640);
	mk(t, "tpl/ro", 0755);
	put(t, "tpl/ro/inside.txt", "inside", 0444);
	assert_int_equal(fchmodat(t, "tpl/ro", 0555, 0), 0);
	mk(t, "tpl/sgid", 02775);
	mk(t, "tpl/sticky", 01777);
	assert_int_equal(symlinkat("/etc/passwd", t, "tpl/passwd-link"), 0);
	assert_int_equal(symlinkat("does/not/exist", t, "tpl/dangling"), 0);
	assert_int_equal(symlinkat("..", t, "tpl/sub/up"), 0); /* a loop, if it were followed */
	put(t, "tpl/suid", "suid", 0755);
	assert_int_equal(fchmodat(t, "tpl/suid", 04755, 0), 0);
	assert_int_equal(mode_of(t, "tpl/suid"), 04755);
	put(t, "tpl/hl1", "shared", 0644);
	assert_int_equal(linkat(t, "tpl/hl1", t, "tpl/hl2", 0), 0);

	/* a file larger than one read/write buffer */
	size_t big_len = 3u << 20;
	char *big = malloc(big_len + 1);
	assert_non_null(big);
	for (size_t i = 0; i < big_len; i++)
		big[i] = (char)('a' + (i * 7 + i / 4096) % 26);
	big[big_len] = '\0';
	put(t, "tpl/big", big, 0644);

	int ws = new_ws(f);
	(void)umask(077); /* modes come from the template, not from warden's umask */
	assert_int_equal(copy(f, "tpl", ws, why, sizeof(why)), 0);

	assert_content(ws, "sub/deeper/file.txt", "deep\n");
	assert_int_equal(mode_of(ws, "sub"), 0755);
	assert_int_equal(mode_of(ws, "sub/deeper"), 0750);
	assert_int_equal(mode_of(ws, "sub/deeper/file.txt"), 0644);
	assert_file(ws, "run.sh", "#!/bin/sh\necho hi\n", 0755);
	assert_file(ws, "secret", "s3cret", 0600);
	assert_content(ws, ".hidden", "h");
	assert_file(ws, "empty", "", 0640);
	assert_int_equal(mode_of(ws, "ro"), 0555);
	assert_file(ws, "ro/inside.txt", "inside", 0444);
	assert_int_equal(mode_of(ws, "sgid"), 0775);   /* setgid dropped */
	assert_int_equal(mode_of(ws, "sticky"), 0777); /* sticky dropped */
	assert_int_equal(mode_of(ws, "suid"), 0755);   /* setuid dropped */
	assert_content(ws, "suid", "suid");

	/* links are links with the same target, never followed */
	assert_link(ws, "passwd-link", "/etc/passwd");
	assert_link(ws, "dangling", "does/not/exist");
	assert_link(ws, "sub/up", "..");

	/* hard links become separate files */
	struct stat a, b;
	assert_int_equal(fstatat(ws, "hl1", &a, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(fstatat(ws, "hl2", &b, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(a.st_ino != b.st_ino);
	assert_int_equal(a.st_nlink, 1);
	assert_content(ws, "hl1", "shared");
	assert_content(ws, "hl2", "shared");

	/* big arrives whole */
	char *got = malloc(big_len + 2);
	assert_non_null(got);
	assert_int_equal(io_read_at(ws, "big", got, big_len + 2), (int)big_len);
	assert_memory_equal(got, big, big_len);
	free(got);

	/* exactly the template's entries and bytes: nothing of /etc/passwd came along */
	size_t n_tpl = 0, n_ws = 0;
	uint64_t b_tpl = 0, b_ws = 0;
	tally(t, "tpl", &n_tpl, &b_tpl);
	tally(ws, ".", &n_ws, &b_ws);
	assert_int_equal(n_ws, n_tpl);
	assert_int_equal(n_ws, 18);
	assert_int_equal(b_ws, b_tpl);
	assert_int_equal(b_ws, 5 + 18 + 6 + 1 + 6 + 4 + 6 + 6 + big_len);

	/* the template is left as it was */
	assert_int_equal(mode_of(t, "tpl/ro"), 0555);
	assert_int_equal(mode_of(t, "tpl/suid"), 04755);
	free(big);
	(void)close(ws);
}

/*
 * A template on another file system (tmpfs in /dev/shm, when /tmp is not one too), where
 * copy_file_range may be refused and the read/write fallback copies.
 */
static void test_copy_across_filesystems(void **state)
{
	struct fx *f = *state;
	struct stat shm, tmp;
	if (stat("/dev/shm", &shm) < 0 || !S_ISDIR(shm.st_mode) || stat(f->root, &tmp) < 0 ||
	    shm.st_dev == tmp.st_dev) {
		skip();
		return;
	}
	char tpl[] = "/dev/shm/warden-rundir-XXXXXX", why[512];
	if (!mkdtemp(tpl)) {
		skip();
		return;
	}
	int t = open(tpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(t >= 0);
	size_t len = 200000; /* several read/write buffers, and not a multiple of one */
	char *data = malloc(len + 2);
	assert_non_null(data);
	for (size_t i = 0; i < len; i++)
		data[i] = (char)('A' + i % 23);
	data[len] = '\0';
	put(t, "f", data, 0640);
	mk(t, "d", 0700);
	put(t, "d/g", "g", 0604);
	int ws = new_ws(f);
	why[0] = '\0';
	int r = sup_rundir_copy_template(tpl, ws, why, sizeof(why));
	(void)close(t);
	unit_rm_rf_at(AT_FDCWD, tpl);
	assert_int_equal(r, 0);
	char *got = malloc(len + 2);
	assert_non_null(got);
	assert_int_equal(io_read_at(ws, "f", got, len + 2), (int)len);
	assert_memory_equal(got, data, len);
	assert_int_equal(mode_of(ws, "f"), 0640);
	assert_int_equal(mode_of(ws, "d"), 0700);
	assert_file(ws, "d/g", "g", 0604);
	free(got);
	free(data);
	(void)close(ws);
}

static void test_copy_fifo_refused(void **state)
{
	struct fx *f = *state;
	char why[512];
	mk(f->root_fd, "tpl", 0755);
	mk(f->root_fd, "tpl/a", 0755);
	assert_int_equal(mkfifoat(f->root_fd, "tpl/a/b", 0644), 0);
	int ws = new_ws(f);
	assert_int_equal(copy(f, "tpl", ws, why, sizeof(why)), -EINVAL);
	assert_string_equal(why,
			    "template entry 'a/b' is a FIFO (expected a file, folder or symlink)");
	(void)close(ws);
}

static void test_copy_socket_refused(void **state)
{
	struct fx *f = *state;
	char sock[PATH_MAX];
	mk(f->root_fd, "tpl", 0755);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	at(f, "tpl/sock", sock, sizeof(sock));
	assert_true(strlen(sock) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	(void)close(s);
	int ws = new_ws(f);
	assert_copy_refused(f, "tpl", ws, -EINVAL, "'sock' is a socket");
	(void)close(ws);
}

static void test_copy_root_refused(void **state)
{
	struct fx *f = *state;
	char why[512];
	mk(f->root_fd, "tpl", 0755);
	put(f->root_fd, "tpl/x", "x", 0644);
	assert_int_equal(symlinkat("tpl", f->root_fd, "tpl-link"), 0);
	put(f->root_fd, "file", "x", 0644);
	int ws = new_ws(f);

	assert_copy_refused(f, "tpl-link", ws, -ELOOP, "tpl-link' is a symlink");
	assert_copy_refused(f, "tpl-link/", ws, -ELOOP, "is a symlink"); /* slash: no bypass */
	assert_copy_refused(f, "file", ws, -ENOTDIR, "regular file");
	assert_int_equal(copy(f, "missing", ws, why, sizeof(why)), -ENOENT);
	assert_int_equal(count_entries(ws, "."), 0);

	/* the template with a trailing slash is still the folder */
	assert_int_equal(copy(f, "tpl/", ws, why, sizeof(why)), 0);
	assert_content(ws, "x", "x");
	(void)close(ws);
}

static void test_copy_workspace_inside(void **state)
{
	struct fx *f = *state;
	char why[512], path[PATH_MAX];
	int run_fd = -1;
	int ws = new_run(f, &run_fd, path, sizeof(path));
	put(run_fd, "record.json", "{}", 0644);
	/* the run folder holds the workspace: copying it into the workspace must stop */
	why[0] = '\0';
	assert_int_equal(sup_rundir_copy_template(path, ws, why, sizeof(why)), -ELOOP);
	assert_why(why, "'workspace' is the folder it is copied into");
	char wpath[PATH_MAX];
	fmt(wpath, sizeof(wpath), "%s/workspace", path);
	assert_int_equal(sup_rundir_copy_template(wpath, ws, why, sizeof(why)), -ELOOP);
	(void)close(ws);
	(void)close(run_fd);
}

static void test_copy_existing_entry(void **state)
{
	struct fx *f = *state;
	mk(f->root_fd, "tpl", 0755);
	put(f->root_fd, "tpl/a", "new", 0644);
	int ws = new_ws(f);
	put(ws, "a", "old", 0644);
	assert_copy_refused(f, "tpl", ws, -EEXIST, "'a'");
	assert_content(ws, "a", "old");
	(void)close(ws);
}

/* Makes n folders "d" inside each other below dfd/rel. */
static void nest(int dfd, const char *rel, unsigned n)
{
	int fd = openat(dfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(mkdirat(fd, "d", 0755), 0);
		int sub = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(sub >= 0);
		(void)close(fd);
		fd = sub;
	}
	(void)close(fd);
}

static void test_copy_depth_limit(void **state)
{
	struct fx *f = *state;
	char why[512];
	mk(f->root_fd, "ok", 0755);
	nest(f->root_fd, "ok", SUP_RUNDIR_MAX_DEPTH);
	mk(f->root_fd, "deep", 0755);
	nest(f->root_fd, "deep", SUP_RUNDIR_MAX_DEPTH + 1);
	int ws = new_ws(f);
	assert_int_equal(copy(f, "ok", ws, why, sizeof(why)), 0);
	assert_int_equal(count_entries(ws, "."), SUP_RUNDIR_MAX_DEPTH);
	(void)close(ws);
	ws = new_ws(f);
	assert_copy_refused(f, "deep", ws, -E2BIG, "nested more than 64 folders deep");
	(void)close(ws);
}

/* ---- sup_rundir_write_files ---- */

static void test_write_nested(void **state)
{
	struct fx *f = *state;
	char why[512] = "";
	int ws = new_ws(f);
	(void)umask(077);
	const struct pol_task_file files[] = {
		{ .path = "a/b/c.txt", .content = "hello\n", .content_len = 6, .mode = 0644 },
		{ .path = "a/sibling", .content = "s", .content_len = 1, .mode = 0640 },
		{ .path = "top.txt", .content = "", .content_len = 0, .mode = 0600 },
	};
	assert_int_equal(sup_rundir_write_files(ws, files, 3, why, sizeof(why)), 0);
	assert_int_equal(type_of(ws, "a"), S_IFDIR);
	assert_int_equal(mode_of(ws, "a"), 0755);
	assert_int_equal(mode_of(ws, "a/b"), 0755);
	assert_file(ws, "a/b/c.txt", "hello\n", 0644);
	assert_file(ws, "a/sibling", "s", 0640);
	assert_file(ws, "top.txt", "", 0600);
	assert_int_equal(count_entries(ws, "."), 5);
	assert_int_equal(sup_rundir_write_files(ws, NULL, 0, why, sizeof(why)), 0);
	(void)close(ws);
}

static void test_write_exact_modes(void **state)
{
	struct fx *f = *state;
	char why[512] = "";
	const mode_t masks[] = { 0, 022, 077, 0777 };
	for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
		int ws = new_ws(f);
		(void)umask(masks[m]);
		const struct pol_task_file files[] = {
			{ .path = "m600", .content = "a", .content_len = 1, .mode = 0600 },
			{ .path = "m755", .content = "b", .content_len = 1, .mode = 0755 },
			{ .path = "m000", .content = "c", .content_len = 1, .mode = 0000 },
			{ .path = "m777", .content = "d", .content_len = 1, .mode = 0777 },
		};
		assert_int_equal(sup_rundir_write_files(ws, files, 4, why, sizeof(why)), 0);
		assert_int_equal(mode_of(ws, "m600"), 0600);
		assert_int_equal(mode_of(ws, "m755"), 0755);
		assert_int_equal(mode_of(ws, "m000"), 0000);
		assert_int_equal(mode_of(ws, "m777"), 0777);
		/* replacing keeps the new mode exact too */
		const struct pol_task_file again[] = {
			{ .path = "m600", .content = "A", .content_len = 1, .mode = 0000 },
			{ .path = "m000", .content = "C", .content_len = 1, .mode = 0755 },
		};
		assert_int_equal(sup_rundir_write_files(ws, again, 2, why, sizeof(why)), 0);
		assert_int_equal(mode_of(ws, "m600"), 0000);
		assert_int_equal(mode_of(ws, "m000"), 0755);
		(void)umask(022);
		(void)close(ws);
	}
}

static void test_write_replaces_template_file(void **state)
{
	struct fx *f = *state;
	char why[512] = "";
	mk(f->root_fd, "tpl", 0755);
	mk(f->root_fd, "tpl/docs", 0755);
	put(f->root_fd, "tpl/docs/README", "old", 0644);
	assert_int_equal(linkat(f->root_fd, "tpl/docs/README", f->root_fd, "tpl/docs/README2", 0),
			 0);
	int ws = new_ws(f);
	assert_int_equal(copy(f, "tpl", ws, why, sizeof(why)), 0);
	/* a hard link inside the workspace must not carry the new content to its twin */
	assert_int_equal(linkat(ws, "docs/README", ws, "docs/twin", 0), 0);

	const struct pol_task_file files[] = {
		{ .path = "docs/README", .content = "new content", .content_len = 11, .mode = 0600 },
	};
	assert_int_equal(sup_rundir_write_files(ws, files, 1, why, sizeof(why)), 0);
	assert_file(ws, "docs/README", "new content", 0600);
	assert_content(ws, "docs/twin", "old");
	assert_content(ws, "docs/README2", "old");
	assert_content(f->root_fd, "tpl/docs/README", "old");
	assert_int_equal(count_entries(ws, "docs"), 3); /* no temporary file left behind */
	(void)close(ws);
}

static void test_write_refuses_symlinked_parent(void **state)
{
	struct fx *f = *state;
	char why[512] = "", elsewhere[PATH_MAX];
	mk(f->root_fd, "elsewhere", 0755);
	mk(f->root_fd, "tpl", 0755);
	mk(f->root_fd, "tpl/d", 0755);
	at(f, "elsewhere", elsewhere, sizeof(elsewhere));
	assert_int_equal(symlinkat(elsewhere, f->root_fd, "tpl/link"), 0);
	assert_int_equal(symlinkat(elsewhere, f->root_fd, "tpl/d/link2"), 0);
	int ws = new_ws(f);
	assert_int_equal(copy(f, "tpl", ws, why, sizeof(why)), 0);

	const struct pol_task_file one[] = {
		{ .path = "link/x", .content = "pwned", .content_len = 5, .mode = 0644 },
	};
	assert_int_equal(sup_rundir_write_files(ws, one, 1, why, sizeof(why)), -ENOTDIR);
	assert_why(why, "'link' is a symlink");
	assert_why(why, "'link/x'");

	const struct pol_task_file two[] = {
		{ .path = "link/sub/x", .content = "pwned", .content_len = 5, .mode = 0644 },
	};
	assert_int_equal(sup_rundir_write_files(ws, two, 1, why, sizeof(why)), -ENOTDIR);

	const struct pol_task_file three[] = {
		{ .path = "d/link2/x", .content = "pwned", .content_len = 5, .mode = 0644 },
	};
	assert_int_equal(sup_rundir_write_files(ws, three, 1, why, sizeof(why)), -ENOTDIR);
	assert_why(why, "'d/link2' is a symlink");

	/* nothing reached the symlinks' target, and the links are still links */
	assert_int_equal(count_entries(f->root_fd, "elsewhere"), 0);
	assert_link(ws, "link", elsewhere);
	assert_link(ws, "d/link2", elsewhere);
	(void)close(ws);
}

static void test_write_refuses_non_regular_target(void **state)
{
	struct fx *f = *state;
	char why[512] = "", target[PATH_MAX];
	put(f->root_fd, "target", "orig", 0644);
	int ws = new_ws(f);
	assert_int_equal(symlinkat(at(f, "target", target, sizeof(target)), ws, "l"), 0);
	mk(ws, "dir", 0755);
	assert_int_equal(mkfifoat(ws, "fifo", 0644), 0);
	put(ws, "plain", "p", 0644);

	const char *paths[] = { "l", "dir", "fifo" };
	const char *kinds[] = { "a symlink", "a folder", "a FIFO" };
	for (size_t i = 0; i < 3; i++) {
		const struct pol_task_file files[] = {
			{ .path = (char *)paths[i], .content = "x", .content_len = 1, .mode = 0644 },
		};
		assert_int_equal(sup_rundir_write_files(ws, files, 1, why, sizeof(why)), -EEXIST);
		assert_why(why, kinds[i]);
	}
	assert_content(f->root_fd, "target", "orig");
	assert_link(ws, "l", target);

	/* a regular file where a folder is wanted */
	const struct pol_task_file through[] = {
		{ .path = "plain/x", .content = "x", .content_len = 1, .mode = 0644 },
	};
	assert_int_equal(sup_rundir_write_files(ws, through, 1, why, sizeof(why)), -ENOTDIR);
	assert_why(why, "'plain' is a regular file");
	assert_int_equal(count_entries(ws, "."), 4);
	(void)close(ws);
}

static void test_write_stops_at_first_failure(void **state)
{
	struct fx *f = *state;
	char why[512] = "";
	int ws = new_ws(f);
	assert_int_equal(symlinkat("/tmp", ws, "link"), 0);
	const struct pol_task_file files[] = {
		{ .path = "first", .content = "1", .content_len = 1, .mode = 0644 },
		{ .path = "link/x", .content = "2", .content_len = 1, .mode = 0644 },
		{ .path = "third", .content = "3", .content_len = 1, .mode = 0644 },
	};
	assert_int_equal(sup_rundir_write_files(ws, files, 3, why, sizeof(why)), -ENOTDIR);
	assert_content(ws, "first", "1");
	assert_true(absent(ws, "third"));
	(void)close(ws);
}

static void test_write_bad_input(void **state)
{
	struct fx *f = *state;
	char why[512] = "";
	int ws = new_ws(f);
	const char *bad[] = { "", "/abs", "../x", "a/../b", "a//b", "a/", "./a", "a/." };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct pol_task_file files[] = {
			{ .path = (char *)bad[i], .content = "x", .content_len = 1, .mode = 0644 },
		};
		assert_int_equal(sup_rundir_write_files(ws, files, 1, why, sizeof(why)), -EINVAL);
	}
	const struct pol_task_file suid[] = {
		{ .path = "s", .content = "x", .content_len = 1, .mode = 04755 },
	};
	assert_int_equal(sup_rundir_write_files(ws, suid, 1, why, sizeof(why)), -EINVAL);
	assert_int_equal(sup_rundir_write_files(ws, NULL, 1, why, sizeof(why)), -EINVAL);
	assert_int_equal(count_entries(ws, "."), 0);
	(void)close(ws);
}

/* ---- sup_rundir_open ---- */

/* A complete run folder: returns its path in path. */
static void good_run(struct fx *f, char *path, size_t path_len)
{
	int run_fd = -1;
	int ws = new_run(f, &run_fd, path, path_len);
	put(run_fd, "record.json", "{}\n", 0644);
	(void)close(ws);
	(void)close(run_fd);
}

static void test_open_good(void **state)
{
	struct fx *f = *state;
	char path[PATH_MAX], why[512] = "", slash[PATH_MAX + 1];
	good_run(f, path, sizeof(path));
	int fd = -1;
	assert_int_equal(sup_rundir_open(path, &fd, why, sizeof(why)), 0);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	struct stat a, b;
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(lstat(path, &b), 0);
	assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	assert_content(fd, "record.json", "{}\n");
	(void)close(fd);

	fmt(slash, sizeof(slash), "%s/", path);
	fd = -1;
	assert_int_equal(sup_rundir_open(slash, &fd, why, sizeof(why)), 0);
	(void)close(fd);
}

static void test_open_refuses_symlinked_folder(void **state)
{
	struct fx *f = *state;
	char path[PATH_MAX], why[512] = "", link[PATH_MAX], slash[PATH_MAX + 1];
	good_run(f, path, sizeof(path));
	assert_int_equal(symlinkat(path, f->root_fd, "run-link"), 0);
	at(f, "run-link", link, sizeof(link));
	int fd = -77;
	assert_int_equal(sup_rundir_open(link, &fd, why, sizeof(why)), -ELOOP);
	assert_why(why, "is a symlink");
	assert_int_equal(fd, -77);
	fmt(slash, sizeof(slash), "%s//", link);
	assert_int_equal(sup_rundir_open(slash, &fd, why, sizeof(why)), -ELOOP);
	assert_int_equal(fd, -77);
}

static void test_open_refuses_symlinked_members(void **state)
{
	struct fx *f = *state;
	char path[PATH_MAX], why[512] = "", buf[PATH_MAX];
	int fd = -77;

	/* record.json is a symlink to a real record */
	good_run(f, path, sizeof(path));
	int run = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(run >= 0);
	put(f->root_fd, "real.json", "{}", 0644);
	assert_int_equal(unlinkat(run, "record.json", 0), 0);
	assert_int_equal(symlinkat(at(f, "real.json", buf, sizeof(buf)), run, "record.json"), 0);
	assert_int_equal(sup_rundir_open(path, &fd, why, sizeof(why)), -ELOOP);
	assert_why(why, "record.json is a symlink");
	assert_int_equal(fd, -77);

	/* record.json missing */
	assert_int_equal(unlinkat(run, "record.json", 0), 0);
	assert_int_equal(sup_rundir_open(path, &fd, why, sizeof(why)), -ENOENT);
	assert_why(why, "has no record.json");

	/* record.json a folder */
	mk(run, "record.json", 0755);
	assert_int_equal(sup_rundir_open(path, &fd, why, sizeof(why)), -EINVAL);
	assert_why(why, "record.json is a folder");
	assert_int_equal(unlinkat(run, "record.json", AT_REMOVEDIR), 0);
	put(run, "record.json", "{}", 0644);

	/* workspace is a symlink to a real folder */
	mk(f->root_fd, "real-ws", 0755);
	assert_int_equal(unlinkat(run, "workspace", AT_REMOVEDIR), 0);
	assert_int_equal(symlinkat(at(f, "real-ws", buf, sizeof(buf)), run, "workspace"), 0);
	assert_int_equal(sup_rundir_open(path, &fd, why, sizeof(why)), -ELOOP);
	assert_why(why, "workspace is a symlink");

	/* workspace missing, then a file */
	assert_int_equal(unlinkat(run, "workspace", 0), 0);
	assert_int_equal(sup_rundir_open(path, &fd, why, sizeof(why)), -ENOENT);
	assert_why(why, "has no workspace");
	put(run, "workspace", "", 0644);
	assert_int_equal(sup_rundir_open(path, &fd, why, sizeof(why)), -ENOTDIR);
	assert_why(why, "workspace is a regular file");
	assert_int_equal(fd, -77);
	(void)close(run);
}

static void test_open_not_a_folder(void **state)
{
	struct fx *f = *state;
	char why[512] = "", buf[PATH_MAX];
	int fd = -77;
	put(f->root_fd, "file", "x", 0644);
	assert_int_equal(sup_rundir_open(at(f, "file", buf, sizeof(buf)), &fd, why, sizeof(why)),
			 -ENOTDIR);
	assert_why(why, "not a directory");
	assert_int_equal(sup_rundir_open(at(f, "missing", buf, sizeof(buf)), &fd, why, sizeof(why)),
			 -ENOENT);
	assert_why(why, "does not exist");
	assert_int_equal(fd, -77);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_create_name_format),
		T(test_create_unique),
		T(test_create_errors),
		T(test_copy_tree),
		T(test_copy_across_filesystems),
		T(test_copy_fifo_refused),
		T(test_copy_socket_refused),
		T(test_copy_root_refused),
		T(test_copy_workspace_inside),
		T(test_copy_existing_entry),
		T(test_copy_depth_limit),
		T(test_write_nested),
		T(test_write_exact_modes),
		T(test_write_replaces_template_file),
		T(test_write_refuses_symlinked_parent),
		T(test_write_refuses_non_regular_target),
		T(test_write_stops_at_first_failure),
		T(test_write_bad_input),
		T(test_open_good),
		T(test_open_refuses_symlinked_folder),
		T(test_open_refuses_symlinked_members),
		T(test_open_not_a_folder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
