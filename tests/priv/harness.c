/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the tests/priv suite; see harness.h.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "harness.h"

/* After warden exits, how long leftover output may take to arrive. */
#define DRAIN_GRACE_MS 500
/* The largest /proc/PID/cmdline we look at. */
#define CMDLINE_MAX 65536

static const char base_path[] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/* Sanitizer settings pass through to warden so that a sanitized build is checked as set up. */
static const char *const passed_env[] = { "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
					   "MSAN_OPTIONS", "XDG_STATE_HOME" };

static const char *env_or_die(const char *name)
{
	const char *v = secure_getenv(name);
	if (!v || !*v) {
		(void)fprintf(stderr, "%s is not set (run this through 'meson test')\n", name);
		exit(1);
	}
	return v;
}

const char *th_warden(void)
{
	return env_or_die("WARDEN");
}

const char *th_probe(void)
{
	return env_or_die("PROBE");
}

bool th_must_work(void)
{
	const char *v = secure_getenv("SBX_TEST_MUST_WORK");
	return v && strcmp(v, "1") == 0;
}

void th_cannot_run(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)fputs(th_must_work() ? "FAIL (SBX_TEST_MUST_WORK=1): " : "SKIP: ", stderr);
	(void)vfprintf(stderr, fmt, ap);
	(void)fputc('\n', stderr);
	va_end(ap);
	(void)fflush(stdout);
	exit(th_must_work() ? 1 : TH_EXIT_SKIP);
}

/*
 * A container's root is overlayfs, which cannot be idmapped, and warden refuses mode direct
 * in a root-owned workspace there (docs/workspace.md). So that the suite still tests every
 * mode, when the temporary directory is on overlayfs this program makes a folder in it,
 * mounts a tmpfs on that folder in a private mount namespace of its own (which warden, its
 * child, shares) and makes it TMPDIR; test-mounts tests the fallback on overlayfs itself.
 */
static char private_tmp[PATH_MAX];

static void private_tmp_remove(void)
{
	if (private_tmp[0] && umount2(private_tmp, MNT_DETACH) == 0)
		(void)rmdir(private_tmp);
}

void th_tmp_idmappable(void)
{
	const char *base = secure_getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	struct statfs sf;
	if (private_tmp[0] || statfs(base, &sf) < 0 || sf.f_type != OVERLAYFS_SUPER_MAGIC)
		return;
	(void)snprintf(private_tmp, sizeof(private_tmp), "%s/warden-priv-tmp-XXXXXX", base);
	if (!mkdtemp(private_tmp) || unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", private_tmp, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0 ||
	    setenv("TMPDIR", private_tmp, 1) < 0)
		th_cannot_run("a tmpfs for workspaces under the overlayfs directory %s: %s", base,
			      strerror(errno));
	(void)atexit(private_tmp_remove);
	(void)fprintf(stderr, "note: %s is on overlayfs; this program's workspaces are on a "
		      "private tmpfs at %s\n", base, private_tmp);
}

void th_require_privileged(void)
{
	if (!th_fully_privileged())
		th_cannot_run("needs root with CAP_SYS_ADMIN in the initial user namespace, so "
			      "that warden runs in privileged mode");
	if (!th_userns_available(0, 0))
		th_cannot_run("user namespaces are not available");
	th_tmp_idmappable();
	(void)th_warden();
	(void)th_probe();
}

uint64_t th_now_ms(void)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

bool th_fully_privileged(void)
{
	if (geteuid() != 0)
		return false;
	FILE *f = fopen("/proc/self/uid_map", "re");
	if (!f)
		return false;
	unsigned a = 1, b = 1, c = 0;
	int n = fscanf(f, "%u %u %u", &a, &b, &c);
	(void)fclose(f);
	if (n != 3 || a != 0 || b != 0 || c != UINT32_MAX)
		return false;
	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	char line[256];
	unsigned long long eff = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	(void)fclose(f);
	return eff & (1ull << 21); /* CAP_SYS_ADMIN */
}

/* In a forked child: become uid:gid (when different) and report whether fn succeeds. */
static bool as_user_try(uid_t uid, gid_t gid, bool (*fn)(const void *), const void *arg)
{
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		if (uid != geteuid() || gid != getegid()) {
			if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
			    setresuid(uid, uid, uid) < 0)
				_exit(2);
		}
		_exit(fn(arg) ? 0 : 1);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static bool try_userns(const void *unused)
{
	(void)unused;
	return unshare(CLONE_NEWUSER) == 0;
}

bool th_userns_available(uid_t uid, gid_t gid)
{
	return as_user_try(uid, gid, try_userns, NULL);
}

static bool try_exec_access(const void *path)
{
	return access(path, R_OK | X_OK) == 0;
}

bool th_executable_by(uid_t uid, gid_t gid, const char *path)
{
	return as_user_try(uid, gid, try_exec_access, path);
}

const char *th_setpriv(void)
{
	static const char *const candidates[] = { "/usr/bin/setpriv", "/bin/setpriv",
						  "/usr/sbin/setpriv", "/sbin/setpriv" };
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

/*
 * Reads fd until EOF, an error or max bytes into buf, NUL-terminated (buf has max + 1 bytes).
 * Returns the length read.
 */
static size_t read_upto(int fd, char *buf, size_t max)
{
	size_t len = 0;
	while (len < max) {
		ssize_t n = read(fd, buf + len, max - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return len;
}

int th_copy_file(const char *src, const char *dst, mode_t mode, uid_t uid, gid_t gid)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (out < 0) {
		int e = errno;
		(void)close(in);
		return -e;
	}
	int r = 0;
	char buf[65536];
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				r = -errno;
				break;
			}
			off += w;
		}
		if (r < 0)
			break;
	}
	if (r == 0 && (fchmod(out, mode) < 0 || fchown(out, uid, gid) < 0))
		r = -errno;
	(void)close(in);
	if (close(out) < 0 && r == 0)
		r = -errno;
	return r;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return 0;
}

void th_rm_rf(const char *path)
{
	if (*path)
		(void)nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

int th_ws_new(struct th_ws *ws, uid_t uid, gid_t gid)
{
	memset(ws, 0, sizeof(*ws));
	const char *base = secure_getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	(void)snprintf(ws->dir, sizeof(ws->dir), "%s/warden-priv-ws-XXXXXX", base);
	(void)snprintf(ws->aux, sizeof(ws->aux), "%s/warden-priv-aux-XXXXXX", base);
	int r = 0;
	if (!mkdtemp(ws->dir)) {
		ws->dir[0] = '\0';
		r = -errno;
	} else if (!mkdtemp(ws->aux)) {
		ws->aux[0] = '\0';
		r = -errno;
	} else if (chmod(ws->dir, 0755) < 0 || chown(ws->dir, uid, gid) < 0 ||
		   chown(ws->aux, uid, gid) < 0) {
		r = -errno;
	} else {
		char probe[PATH_MAX];
		if (snprintf(probe, sizeof(probe), "%s/probe", ws->dir) >= (int)sizeof(probe))
			r = -ENAMETOOLONG;
		else
			r = th_copy_file(th_probe(), probe, 0755, uid, gid);
	}
	if (r < 0)
		th_ws_remove(ws);
	return r;
}

void th_ws_remove(struct th_ws *ws)
{
	/* What runs in it left pending (or a killed run left behind) goes with it. */
	if (ws->dir[0] && geteuid() == 0 && secure_getenv("WARDEN"))
		th_discard_changesets(ws->dir);
	th_rm_rf(ws->dir);
	th_rm_rf(ws->aux);
	ws->dir[0] = ws->aux[0] = '\0';
}

void th_aux_path(struct th_ws *ws, const char *stem, char *out)
{
	th_pathf(out, "%s/%s-%u", ws->aux, stem, ws->n_files++);
}

void th_pathf(char *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		fail_msg("path too long: %s", out);
}

int th_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	ssize_t n = write(fd, text, len);
	int r = n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

void th_put_file(const char *path, const char *text)
{
	int r = th_write_file(path, text);
	if (r < 0)
		fail_msg("write %s: %s", path, strerror(-r));
}

void th_mkdir_parents(const char *path)
{
	char p[PATH_MAX];
	th_pathf(p, "%s", path);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			fail_msg("mkdir %s: %s", p, strerror(errno));
		*s = '/';
	}
}

void th_put_file_mkdirs(const char *path, const char *text)
{
	th_mkdir_parents(path);
	th_put_file(path, text);
	if (chmod(path, 0644) < 0)
		fail_msg("chmod %s: %s", path, strerror(errno));
}

char *th_read_file(const char *path, size_t max, bool nofollow, size_t *out_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0)
		return NULL;
	char *buf = malloc(max + 1);
	assert_non_null(buf);
	size_t len = read_upto(fd, buf, max);
	(void)close(fd);
	if (out_len)
		*out_len = len;
	return buf;
}

/* got (freed here) is want; otherwise both are shown and the test fails: "<name> <what>". */
static void expect_text(char *got, const char *want, const char *name, const char *what)
{
	if (strcmp(got, want) != 0) {
		th_print_long(name, got);
		th_print_long("expected", want);
		free(got);
		fail_msg("%s %s", name, what);
	}
	free(got);
}

void th_expect_file(const char *path, const char *text)
{
	/* A little more than text, so that a longer file shows as longer. */
	char *got = th_read_file(path, strlen(text) + 4096, false, NULL);
	if (!got)
		fail_msg("open %s: %s", path, strerror(errno));
	expect_text(got, text, path, "does not hold the expected text");
}

char *th_list_dir(const char *dir, size_t *out_n)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return NULL;
	size_t cap = 1, k = 0, len = 0;
	for (int i = 0; i < n; i++)
		cap += strlen(names[i]->d_name) + 1;
	char *text = malloc(cap);
	assert_non_null(text);
	text[0] = '\0';
	for (int i = 0; i < n; i++) {
		const char *s = names[i]->d_name;
		if (strcmp(s, ".") != 0 && strcmp(s, "..") != 0) {
			size_t l = strlen(s);
			memcpy(text + len, s, l);
			text[len + l] = '\n';
			len += l + 1;
			text[len] = '\0';
			k++;
		}
		free(names[i]);
	}
	free(names);
	if (out_n)
		*out_n = k;
	return text;
}

void th_expect_names(const char *dir, const char *want)
{
	char *names = th_list_dir(dir, NULL);
	if (!names)
		fail_msg("list %s: %s", dir, strerror(errno));
	expect_text(names, want, dir, "does not hold exactly the expected names");
}

int th_open_pty(int *out_master)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return -1;
	char name[128];
	int s = -1;
	if (grantpt(m) == 0 && unlockpt(m) == 0 && ptsname_r(m, name, sizeof(name)) == 0)
		s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0) {
		int e = errno;
		(void)close(m);
		errno = e;
		return -1;
	}
	*out_master = m;
	return s;
}

int th_host_socket(int type, char *out_port, size_t len)
{
	int fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 8) < 0)) {
		int e = errno;
		(void)close(fd);
		return -e;
	}
	(void)snprintf(out_port, len, "%u", (unsigned)ntohs(sa.sin_port));
	return fd;
}

void th_ws_path(const struct th_ws *ws, const char *rel, char *out)
{
	th_pathf(out, "%s/%s", ws->dir, rel);
}

bool th_ws_exists(const struct th_ws *ws, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;
	th_ws_path(ws, rel, p);
	return lstat(p, &st) == 0;
}

mode_t th_ws_mode(const struct th_ws *ws, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;
	th_ws_path(ws, rel, p);
	if (lstat(p, &st) < 0)
		fail_msg("lstat %s: %s", p, strerror(errno));
	return st.st_mode;
}

void th_ws_write(const struct th_ws *ws, const char *rel, const char *text)
{
	char p[PATH_MAX];
	th_ws_path(ws, rel, p);
	th_put_file(p, text);
}

void th_ws_mkdir(const struct th_ws *ws, const char *rel)
{
	char p[PATH_MAX];
	th_ws_path(ws, rel, p);
	if (mkdir(p, 0755) < 0 || chmod(p, 0755) < 0)
		fail_msg("mkdir %s: %s", p, strerror(errno));
}

void th_ws_expect_file(const struct th_ws *ws, const char *rel, const char *text)
{
	char p[PATH_MAX];
	th_ws_path(ws, rel, p);
	th_expect_file(p, text);
}

/* nftw has no context argument: the owner chown_entry gives entries to. */
static uid_t chown_uid;
static gid_t chown_gid;

static int chown_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return lchown(path, chown_uid, chown_gid) < 0 ? -1 : 0;
}

void th_ws_chown(const struct th_ws *ws, uid_t uid, gid_t gid)
{
	chown_uid = uid;
	chown_gid = gid;
	if (nftw(ws->dir, chown_entry, 16, FTW_PHYS | FTW_MOUNT) != 0)
		fail_msg("chown the workspace to %u:%u: %s", (unsigned)uid, (unsigned)gid,
			 strerror(errno));
}

const char *th_git(void)
{
	static const char *const candidates[] = { "/usr/bin/git", "/bin/git",
						  "/usr/local/bin/git" };
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

int th_host_setup(struct th_host *h, struct th_ws *ws)
{
	memset(h, 0, sizeof(*h));
	th_pathf(h->home, "%s/home", ws->aux);
	if (mkdir(h->home, 0700) < 0) {
		print_error("mkdir %s: %s\n", h->home, strerror(errno));
		return -1;
	}
	char cfg[PATH_MAX];
	th_pathf(cfg, "%s/.gitconfig", h->home);
	/* The host user's own settings: an identity, and trust in a workspace of another uid
	 * (the workspace's owner is who would run git there; this root stands in for them). */
	int r = th_write_file(cfg, "[user]\n\tname = Host\n\temail = host@example.org\n"
				   "[init]\n\tdefaultBranch = main\n"
				   "[safe]\n\tdirectory = *\n"
				   "[protocol \"file\"]\n\tallow = always\n");
	if (r < 0) {
		print_error("write %s: %s\n", cfg, strerror(-r));
		return -1;
	}
	(void)snprintf(h->env_home, sizeof(h->env_home), "HOME=%s", h->home);
	h->env[0] = h->env_home;
	h->env[1] = "GIT_CONFIG_NOSYSTEM=1";
	h->env[2] = "LC_ALL=C";
	h->env[3] = NULL;
	return 0;
}

void th_host_run(const struct th_host *h, const char *cwd, const char *const *argv, int code,
		 struct th_out *out)
{
	struct th_opts o = { .direct = true, .cwd = cwd, .env = h->env };
	th_out_done(out);
	th_run(&o, argv, out);
	if (code >= 0 && out->code != code) {
		th_show(out);
		fail_msg("host command %s %s: exit %d, expected %d", argv[0], argv[1] ? argv[1] : "",
			 out->code, code);
	}
}

void th_host_git(const struct th_host *h, const char *cwd, const char *const *args, int code,
		 struct th_out *out)
{
	const char *argv[32] = { th_git() };
	assert_non_null(argv[0]);
	size_t n = 1;
	for (; args[n - 1]; n++) {
		assert_true(n < sizeof(argv) / sizeof(argv[0]) - 1);
		argv[n] = args[n - 1];
	}
	argv[n] = NULL;
	th_host_run(h, cwd, argv, code, out);
}

void th_policy(struct th_ws *ws, const char *yaml, char *out)
{
	th_aux_path(ws, "policy", out);
	int r = th_write_file(out, yaml);
	if (r < 0)
		fail_msg("write policy %s: %s", out, strerror(-r));
	/* A uid the test switches to must be able to read it. */
	struct stat st;
	if (stat(ws->aux, &st) < 0 || chown(out, st.st_uid, st.st_gid) < 0)
		fail_msg("chown policy %s: %s", out, strerror(errno));
}

/* Appends s to the NULL-terminated vector v of n (of at most max) entries. */
static int vec_add(const char **v, size_t max, size_t *n, const char *s)
{
	if (*n + 1 >= max)
		return -E2BIG;
	v[(*n)++] = s;
	v[*n] = NULL;
	return 0;
}

static int arg_add(struct th_exec *x, const char *s)
{
	return vec_add(x->argv, sizeof(x->argv) / sizeof(x->argv[0]), &x->argc, s);
}

static int env_add(struct th_exec *x, const char *s)
{
	return vec_add(x->envp, sizeof(x->envp) / sizeof(x->envp[0]), &x->envc, s);
}

static int build_argv(const struct th_opts *o, const char *const *cmd, struct th_exec *x)
{
	int r = 0;
	for (size_t i = 0; o->prefix && o->prefix[i] && r >= 0; i++)
		r = arg_add(x, o->prefix[i]);
	if (o->direct) {
		if (r >= 0)
			r = arg_add(x, strcmp(cmd[0], TH_PROBE) == 0 ? th_probe() : cmd[0]);
		for (size_t i = 1; cmd[i] && r >= 0; i++)
			r = arg_add(x, cmd[i]);
		return r;
	}
	if (o->as_user && r >= 0) {
		const char *setpriv = th_setpriv();
		if (!setpriv)
			return -ENOENT;
		(void)snprintf(x->uid_opt, sizeof(x->uid_opt), "--reuid=%u", (unsigned)o->uid);
		(void)snprintf(x->gid_opt, sizeof(x->gid_opt), "--regid=%u", (unsigned)o->gid);
		const char *pre[] = { setpriv, x->uid_opt, x->gid_opt, "--clear-groups",
				      "--inh-caps=-all", "--bounding-set=-all" };
		for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]) && r >= 0; i++)
			r = arg_add(x, pre[i]);
	}
	if (r >= 0)
		r = arg_add(x, th_warden());
	if (r >= 0)
		r = arg_add(x, o->subcommand ? o->subcommand : "run");
	const char *opts[][2] = {
		{ "--workspace", o->workspace },
		{ "--policy", o->policy },
		{ "--record", o->record },
		{ "--timeout", o->timeout },
		{ "--workspace-mode", o->ws_mode },
	};
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]) && r >= 0; i++) {
		if (!opts[i][1])
			continue;
		r = arg_add(x, opts[i][0]);
		if (r >= 0)
			r = arg_add(x, opts[i][1]);
	}
	for (size_t i = 0; o->options && o->options[i] && r >= 0; i++)
		r = arg_add(x, o->options[i]);
	if (r >= 0 && !o->subcommand)
		r = arg_add(x, "--");
	for (size_t i = 0; cmd[i] && r >= 0; i++)
		r = arg_add(x, cmd[i]);
	return r;
}

static int build_env(const struct th_opts *o, struct th_exec *x)
{
	int r = env_add(x, base_path);
	for (size_t i = 0; i < sizeof(passed_env) / sizeof(passed_env[0]) && r >= 0; i++) {
		size_t len = strlen(passed_env[i]);
		for (char **v = environ; *v && r >= 0; v++)
			if (strncmp(*v, passed_env[i], len) == 0 && (*v)[len] == '=')
				r = env_add(x, *v);
	}
	for (size_t i = 0; o->env && o->env[i] && r >= 0; i++)
		r = env_add(x, o->env[i]);
	return r;
}

int th_exec_build(const struct th_opts *o, const char *const *cmd, struct th_exec *x)
{
	memset(x, 0, sizeof(*x));
	int r = build_argv(o, cmd, x);
	return r < 0 ? r : build_env(o, x);
}

int th_spawn(const struct th_opts *o, const char *const *cmd, struct th_proc *p)
{
	struct th_exec x;
	memset(p, 0, sizeof(*p));
	p->pid = -1;
	p->pidfd = p->fd[0] = p->fd[1] = -1;
	int r = th_exec_build(o, cmd, &x);
	if (r < 0)
		return r;
	int out[2] = { -1, -1 }, err[2] = { -1, -1 };
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail;
	}
	p->buf[0] = malloc(TH_CAPTURE_MAX + 1);
	p->buf[1] = malloc(TH_CAPTURE_MAX + 1);
	if (!p->buf[0] || !p->buf[1]) {
		r = -ENOMEM;
		goto fail;
	}
	p->buf[0][0] = p->buf[1][0] = '\0';
	p->t0 = th_now_ms();
	p->deadline = p->t0 + (o->hard_timeout_ms ? o->hard_timeout_ms : TH_HARD_TIMEOUT_MS);

	(void)fflush(stdout);
	(void)fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		r = -errno;
		goto fail;
	}
	if (pid == 0) {
		/* The child: async-signal-safe calls only, until exec. */
		char self[24];
		(void)setpgid(0, 0);
		int in = o->stdin_fd > 0 ? o->stdin_fd : open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (in < 0 || dup2(in, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
			_exit(120);
		if (chdir(o->cwd ? o->cwd : "/") < 0)
			_exit(121);
		(void)snprintf(self, sizeof(self), "%d", (int)getpid());
		for (size_t i = 0; i < x.argc; i++)
			if (strcmp(x.argv[i], TH_WARDEN_PID) == 0)
				x.argv[i] = self;
		execve(x.argv[0], (char *const *)x.argv, (char *const *)x.envp);
		_exit(122);
	}
	p->pid = pid;
	(void)close(out[1]);
	(void)close(err[1]);
	p->fd[0] = out[0];
	p->fd[1] = err[0];
	for (int i = 0; i < 2; i++)
		(void)fcntl(p->fd[i], F_SETFL, O_NONBLOCK);
	p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (p->pidfd < 0) {
		r = -errno;
		(void)kill(-pid, SIGKILL);
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		p->pid = -1;
		goto fail_parent;
	}
	return 0;

fail:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			(void)close(out[i]);
		if (err[i] >= 0)
			(void)close(err[i]);
	}
fail_parent:
	for (int i = 0; i < 2; i++) {
		if (p->fd[i] >= 0)
			(void)close(p->fd[i]);
		p->fd[i] = -1;
		free(p->buf[i]);
		p->buf[i] = NULL;
	}
	return r;
}

/* Reads what is available on fd i; at EOF closes it. Beyond the cap, data is dropped. */
static void drain(struct th_proc *p, int i)
{
	char tmp[65536];
	for (;;) {
		ssize_t n = read(p->fd[i], tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return; /* EAGAIN */
		if (n == 0) {
			(void)close(p->fd[i]);
			p->fd[i] = -1;
			return;
		}
		size_t keep = TH_CAPTURE_MAX - p->len[i];
		if ((size_t)n < keep)
			keep = (size_t)n;
		memcpy(p->buf[i] + p->len[i], tmp, keep);
		p->len[i] += keep;
		p->buf[i][p->len[i]] = '\0';
	}
}

static void reap(struct th_proc *p, int flags)
{
	if (p->exited)
		return;
	int status;
	pid_t r;
	while ((r = waitpid(p->pid, &status, flags)) < 0 && errno == EINTR)
		;
	if (r == p->pid) {
		p->exited = true;
		p->status = status;
		p->drain_deadline = th_now_ms() + DRAIN_GRACE_MS;
	}
}

/* One poll round of at most timeout_ms. */
static void pump(struct th_proc *p, uint64_t timeout_ms)
{
	struct pollfd pfd[3];
	int n = 0, idx[3];
	for (int i = 0; i < 2; i++) {
		if (p->fd[i] < 0)
			continue;
		idx[n] = i;
		pfd[n++] = (struct pollfd){ .fd = p->fd[i], .events = POLLIN };
	}
	if (!p->exited) {
		idx[n] = 2;
		pfd[n++] = (struct pollfd){ .fd = p->pidfd, .events = POLLIN };
	}
	if (n == 0)
		return;
	int r = poll(pfd, (nfds_t)n, (int)(timeout_ms > 1000 ? 1000 : timeout_ms));
	if (r <= 0)
		return;
	for (int k = 0; k < n; k++) {
		if (!pfd[k].revents)
			continue;
		if (idx[k] == 2)
			reap(p, WNOHANG);
		else
			drain(p, idx[k]);
	}
}

static bool run_over(const struct th_proc *p)
{
	return p->exited && p->fd[0] < 0 && p->fd[1] < 0;
}

bool th_wait_stdout(struct th_proc *p, const char *needle, unsigned ms)
{
	uint64_t end = th_now_ms() + ms;
	for (;;) {
		if (strstr(p->buf[0], needle))
			return true;
		uint64_t now = th_now_ms();
		if (now >= end || run_over(p) || (p->exited && now >= p->drain_deadline))
			return false;
		pump(p, end - now);
	}
}

void th_finish(struct th_proc *p, struct th_out *out)
{
	memset(out, 0, sizeof(*out));
	for (;;) {
		uint64_t now = th_now_ms();
		if (run_over(p) || (p->exited && now >= p->drain_deadline))
			break;
		if (!p->exited && now >= p->deadline) {
			(void)kill(-p->pid, SIGKILL);
			(void)kill(p->pid, SIGKILL);
			reap(p, 0);
			out->hard_timeout = true;
			for (int i = 0; i < 2; i++)
				if (p->fd[i] >= 0)
					drain(p, i);
			break;
		}
		pump(p, p->exited ? p->drain_deadline - now : p->deadline - now);
	}
	out->elapsed_ms = th_now_ms() - p->t0;
	out->pid = p->pid;
	if (out->hard_timeout)
		out->code = -1;
	else if (WIFEXITED(p->status))
		out->code = WEXITSTATUS(p->status);
	else if (WIFSIGNALED(p->status))
		out->code = 128 + WTERMSIG(p->status);
	else
		out->code = -1;
	out->out = p->buf[0];
	out->err = p->buf[1];
	out->out_len = p->len[0];
	out->err_len = p->len[1];
	for (int i = 0; i < 2; i++) {
		if (p->fd[i] >= 0)
			(void)close(p->fd[i]);
		p->fd[i] = -1;
		p->buf[i] = NULL;
	}
	if (p->pidfd >= 0)
		(void)close(p->pidfd);
	p->pidfd = -1;
}

void th_run(const struct th_opts *o, const char *const *cmd, struct th_out *out)
{
	struct th_proc p;
	int r = th_spawn(o, cmd, &p);
	if (r < 0)
		fail_msg("spawn warden: %s", strerror(-r));
	th_finish(&p, out);
	if (out->hard_timeout)
		print_error("run hit the hard timeout after %llu ms\nstdout: %s\nstderr: %s\n",
			    (unsigned long long)out->elapsed_ms, out->out, out->err);
}

void th_out_done(struct th_out *out)
{
	free(out->out);
	free(out->err);
	memset(out, 0, sizeof(*out));
}

void th_print_long(const char *title, const char *text)
{
	print_error("--- %s ---\n", title);
	for (size_t len = strlen(text), off = 0; off < len; off += 512)
		print_error("%.512s", text + off);
	print_error("\n---\n");
}

void th_show(const struct th_out *out)
{
	th_show_named(NULL, out);
}

void th_show_named(const char *name, const struct th_out *out)
{
	print_error("%s%sexit %d after %llu ms%s\n", name ? name : "", name ? ": " : "",
		    out->code, (unsigned long long)out->elapsed_ms,
		    out->hard_timeout ? " (hard timeout)" : "");
	th_print_long("stdout", out->out ? out->out : "");
	th_print_long("stderr", out->err ? out->err : "");
}

void th_each_pid(void (*fn)(pid_t, void *), void *ctx)
{
	DIR *d = opendir("/proc");
	if (!d)
		fail_msg("opendir /proc: %s", strerror(errno));
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || pid <= 0)
			continue;
		fn((pid_t)pid, ctx);
	}
	(void)closedir(d);
}

/* What scan_procs looks for, and what it calls on each match. */
struct proc_scan {
	const char *marker, *argv0_suffix;
	pid_t exclude;
	void (*fn)(pid_t, void *);
	void *ctx;
	int count;
};

static void scan_one(pid_t pid, void *ctx)
{
	static char buf[CMDLINE_MAX + 1];
	struct proc_scan *s = ctx;
	if (pid == s->exclude)
		return;
	char path[64];
	(void)snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size_t len = read_upto(fd, buf, CMDLINE_MAX);
	(void)close(fd);
	if (len == 0)
		return;
	const char *argv0 = buf;
	bool match = false;
	for (size_t off = 0; off < len; off += strlen(buf + off) + 1)
		if (strcmp(buf + off, s->marker) == 0)
			match = true;
	if (match && s->argv0_suffix) {
		size_t a = strlen(argv0), n = strlen(s->argv0_suffix);
		match = a >= n && strcmp(argv0 + a - n, s->argv0_suffix) == 0;
	}
	if (match) {
		s->count++;
		if (s->fn)
			s->fn(pid, s->ctx);
	}
}

/* Calls fn(pid, ctx) for every host process matching as th_count_procs describes. */
static int scan_procs(const char *marker, const char *argv0_suffix, pid_t exclude,
		      void (*fn)(pid_t, void *), void *ctx)
{
	struct proc_scan s = { .marker = marker, .argv0_suffix = argv0_suffix, .exclude = exclude,
			       .fn = fn, .ctx = ctx };
	th_each_pid(scan_one, &s);
	return s.count;
}

int th_count_procs(const char *marker, const char *argv0_suffix, pid_t exclude)
{
	return scan_procs(marker, argv0_suffix, exclude, NULL, NULL);
}

static void kill_one(pid_t pid, void *unused)
{
	(void)unused;
	(void)kill(pid, SIGKILL);
}

void th_kill_procs(const char *marker, pid_t exclude)
{
	(void)scan_procs(marker, NULL, exclude, kill_one, NULL);
}

struct pid_list {
	pid_t *v;
	size_t n, max;
};

static void collect_one(pid_t pid, void *ctx)
{
	struct pid_list *l = ctx;
	if (l->n < l->max)
		l->v[l->n] = pid;
	l->n++;
}

int th_find_procs(const char *marker, const char *argv0_suffix, pid_t exclude, pid_t *out,
		  size_t max)
{
	struct pid_list l = { .v = out, .max = max };
	return scan_procs(marker, argv0_suffix, exclude, collect_one, &l);
}

bool th_proc_status(pid_t pid, char *buf, size_t len)
{
	char path[64];
	(void)snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (len == 0)
		return false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t off = read_upto(fd, buf, len - 1);
	(void)close(fd);
	return off > 0;
}

void th_marker(const char *stem, char *out, size_t len)
{
	static unsigned n;
	struct timespec ts;
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	(void)snprintf(out, len, "%s-%d-%ld-%u", stem, (int)getpid(), (long)ts.tv_nsec, n++);
}

cJSON *th_record_load(const char *dir)
{
	char path[PATH_MAX];
	(void)snprintf(path, sizeof(path), "%s/record.json", dir);
	size_t len = 0;
	char *buf = th_read_file(path, TH_RECORD_MAX, true, &len);
	if (!buf)
		fail_msg("open %s: %s", path, strerror(errno));
	cJSON *root = cJSON_ParseWithLength(buf, len);
	if (!root) {
		print_error("record.json:\n%s\n", buf);
		free(buf);
		fail_msg("%s is not valid JSON", path);
	}
	free(buf);
	return root;
}

void th_record_reload(cJSON **record, const char *dir)
{
	cJSON_Delete(*record);
	*record = NULL;
	*record = th_record_load(dir);
}

const cJSON *th_json_at(const cJSON *root, const char *path)
{
	char key[128];
	const cJSON *node = root;
	while (node && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		node = cJSON_GetObjectItemCaseSensitive(node, key);
		path += n + (path[n] == '.');
	}
	return node;
}

const char *th_json_str(const cJSON *root, const char *path)
{
	const cJSON *n = th_json_at(root, path);
	if (!cJSON_IsString(n))
		fail_msg("record: %s is missing or not a string", path);
	return n->valuestring;
}

double th_json_num(const cJSON *root, const char *path)
{
	const cJSON *n = th_json_at(root, path);
	if (!cJSON_IsNumber(n))
		fail_msg("record: %s is missing or not a number", path);
	return n->valuedouble;
}

bool th_json_bool(const cJSON *root, const char *path)
{
	const cJSON *n = th_json_at(root, path);
	if (!cJSON_IsBool(n))
		fail_msg("record: %s is missing or not a boolean", path);
	return cJSON_IsTrue(n);
}

bool th_status_field(const char *text, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t llen = nl ? (size_t)(nl - line) : strlen(line);
		if (llen > klen && strncmp(line, key, klen) == 0 && line[klen] == ':') {
			const char *v = line + klen + 1;
			size_t vlen = llen - klen - 1;
			while (vlen && (*v == '\t' || *v == ' ')) {
				v++;
				vlen--;
			}
			while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
				vlen--;
			if (vlen >= len)
				return false;
			memcpy(out, v, vlen);
			out[vlen] = '\0';
			return true;
		}
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

bool th_has_line(const char *text, const char *want)
{
	size_t wlen = strlen(want);
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t llen = nl ? (size_t)(nl - line) : strlen(line);
		if (llen == wlen && strncmp(line, want, wlen) == 0)
			return true;
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

const struct th_owner th_user_owner = { 4242, 4343 };

int th_fx_setup(void **state, size_t size, uid_t uid, gid_t gid)
{
	struct th_fx *f = size >= sizeof(*f) ? calloc(1, size) : NULL;
	if (!f)
		return -1;
	f->param = *state;
	f->uid = uid;
	f->gid = gid;
	int r = th_ws_new(&f->ws, uid, gid);
	if (r < 0) {
		print_error("create a workspace: %s\n", strerror(-r));
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

void th_discard_changesets(const char *ws_dir)
{
	struct th_opts o = { .subcommand = "changes" };
	struct th_out out = { 0 };
	th_run(&o, (const char *const[]){ "--json", NULL }, &out);
	cJSON *list = out.code == 0 ? cJSON_Parse(out.out) : NULL;
	const cJSON *it;
	cJSON_ArrayForEach(it, list) {
		const cJSON *ws = cJSON_GetObjectItemCaseSensitive(it, "workspace");
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");
		if (!cJSON_IsString(ws) || !cJSON_IsString(id) || strcmp(ws->valuestring, ws_dir))
			continue;
		struct th_opts d = { .subcommand = "discard" };
		struct th_out dout = { 0 };
		th_run(&d, (const char *const[]){ id->valuestring, NULL }, &dout);
		th_out_done(&dout);
	}
	cJSON_Delete(list);
	th_out_done(&out);
}

int th_fx_setup_root(void **state)
{
	return th_fx_setup(state, sizeof(struct th_fx), 0, 0);
}

int th_fx_setup_owned(void **state, size_t size)
{
	const struct th_owner *o = *state;
	struct th_owner own = o ? *o : (struct th_owner){ 0, 0 };
	if (th_fx_setup(state, size, own.uid, own.gid) < 0)
		return -1;
	struct th_fx *f = *state;
	if (!realpath(f->ws.dir, f->real)) {
		print_error("realpath %s: %s\n", f->ws.dir, strerror(errno));
		f->real[0] = '\0';
	} else if (th_host_setup(&f->host, &f->ws) == 0) {
		return 0;
	}
	th_fx_free(f);
	*state = NULL;
	return -1;
}

void th_fx_free(struct th_fx *f)
{
	if (!f)
		return;
	if (f->marker[0])
		th_kill_procs(f->marker, 0);
	th_out_done(&f->out);
	th_out_done(&f->host_out);
	cJSON_Delete(f->record);
	for (size_t i = 0; i < TH_HOST_FILES; i++)
		if (f->host_files[i][0])
			(void)unlink(f->host_files[i]);
	/* th_ws_remove discards the changesets of ws.dir; they record its canonical path. */
	if (f->real[0] && strcmp(f->real, f->ws.dir) != 0)
		th_discard_changesets(f->real);
	th_ws_remove(&f->ws);
	free(f);
}

int th_fx_host_file(struct th_fx *f, const char *dir, const char *stem, const char **out_path)
{
	size_t i = 0;
	while (i < TH_HOST_FILES && f->host_files[i][0])
		i++;
	if (i == TH_HOST_FILES)
		fail_msg("more than %d host files in one test", TH_HOST_FILES);
	char *p = f->host_files[i];
	th_pathf(p, "%s/%s-XXXXXX", dir, stem);
	int fd = mkostemp(p, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		p[0] = '\0';
		return -e;
	}
	*out_path = p;
	return fd;
}

void th_fx_chown(const struct th_fx *f)
{
	if (f->uid || f->gid)
		th_ws_chown(&f->ws, f->uid, f->gid);
}

void th_fx_git(struct th_fx *f, int code, const char *const *args)
{
	th_host_git(&f->host, f->ws.dir, args, code, &f->host_out);
}

int th_fx_teardown(void **state)
{
	th_fx_free(*state);
	return 0;
}

struct th_opts th_fx_opts(const struct th_fx *f, const char *policy)
{
	return (struct th_opts){ .workspace = f->ws.dir, .policy = policy, .ws_mode = f->ws_mode };
}

void th_fx_run(struct th_fx *f, const struct th_opts *o, const char *const *cmd)
{
	struct th_opts def = th_fx_opts(f, NULL);
	th_out_done(&f->out);
	th_run(o ? o : &def, cmd, &f->out);
}

void th_fx_finish(struct th_fx *f, struct th_proc *p)
{
	th_out_done(&f->out);
	th_finish(p, &f->out);
}

void th_fx_expect_err_has(const struct th_fx *f, const char *text)
{
	if (!strstr(f->out.err, text)) {
		th_show(&f->out);
		fail_msg("the run's stderr does not say '%s'", text);
	}
}

void th_fx_expect(const struct th_fx *f, int code, const char *out)
{
	if (f->out.code != code || (out && strcmp(f->out.out, out) != 0))
		th_show(&f->out);
	assert_int_equal(f->out.code, code);
	if (out)
		assert_string_equal(f->out.out, out);
}

void th_fx_run_expect(struct th_fx *f, const struct th_opts *o, const char *const *cmd, int code,
		      const char *out)
{
	th_fx_run(f, o, cmd);
	th_fx_expect(f, code, out);
}

void th_fx_record_expect(struct th_fx *f, const struct th_opts *o, const char *const *cmd,
			 int code, const char *out)
{
	struct th_opts rec = o ? *o : th_fx_opts(f, NULL);
	th_aux_path(&f->ws, "record", f->record_dir);
	rec.record = f->record_dir;
	th_fx_run_expect(f, &rec, cmd, code, out);
	th_record_reload(&f->record, f->record_dir);
}

const cJSON *th_fx_expect_json(struct th_fx *f)
{
	th_fx_expect(f, 0, NULL);
	cJSON *root = cJSON_Parse(f->out.out);
	if (!root) {
		th_show(&f->out);
		fail_msg("stdout is not JSON");
	}
	cJSON_Delete(f->record);
	f->record = root;
	return root;
}

void th_fx_expect_write_refused(const struct th_fx *f)
{
	if (strcmp(f->out.out, "ERR EROFS 30\n") != 0 &&
	    strcmp(f->out.out, "ERR EACCES 13\n") != 0) {
		th_show(&f->out);
		fail_msg("expected EROFS or EACCES");
	}
	assert_int_equal(f->out.code, 1);
}

void th_fx_expect_caps(const struct th_fx *f, const char *want)
{
	static const char *const sets[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
	char v[64];
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		if (!th_status_field(f->out.out, sets[i], v, sizeof(v))) {
			th_show(&f->out);
			fail_msg("no %s line", sets[i]);
		}
		if (strcmp(v, want) != 0) {
			th_show(&f->out);
			fail_msg("%s is %s, expected %s", sets[i], v, want);
		}
	}
}

void th_fx_expect_sandbox_user(const struct th_fx *f)
{
	static const char *const want[][2] = {
		{ "NoNewPrivs", "1" },
		{ "Seccomp", "2" }, /* SECCOMP_MODE_FILTER */
		{ "Uid", "1000\t1000\t1000\t1000" },
		{ "Gid", "1000\t1000\t1000\t1000" },
	};
	th_fx_expect_caps(f, TH_ZERO_CAPS);
	char v[128];
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!th_status_field(f->out.out, want[i][0], v, sizeof(v))) {
			th_show(&f->out);
			fail_msg("no %s line", want[i][0]);
		}
		if (strcmp(v, want[i][1]) != 0) {
			th_show(&f->out);
			fail_msg("%s is '%s', expected '%s'", want[i][0], v, want[i][1]);
		}
	}
}
