/* SPDX-License-Identifier: MIT */
/*
 * Privileged integration tests of where a workspace may be (supervisor/wspath.c, the rules in
 * docs/run.md): the real warden is run with --workspace on the host's root, system
 * directories, /run, /var, /home, the invoking user's home and a directory above a home, a
 * path through a symlink, /proc and directories on kernel pseudo filesystems. Each must exit
 * 125 before the command starts, with one line that names the path, the rule and the way out
 * (`unsafe: [workspace-anywhere]`). A project directory must still work, and the policy's
 * `unsafe: [workspace-anywhere]` must let a /run directory and a symlinked path through and
 * be recorded among the run's weakenings.
 *
 * Needs full privilege (root with CAP_SYS_ADMIN in the initial user namespace): the
 * pseudo-filesystem test mounts one in a private mount namespace. Otherwise the program exits
 * 77, or fails under SBX_TEST_MUST_WORK=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "harness.h"

#define ANYWHERE_POLICY "unsafe: [workspace-anywhere]\n"
#define REMEDY "unsafe: [workspace-anywhere]"

/*
 * One test's fixture: the harness's (first), a second workspace made under /run, and, while
 * the pseudo-filesystem test is in its private mount namespace, the way back.
 */
struct wp_fx {
	struct th_fx fx;
	struct th_ws run_ws;
	int host_ns;            /* the original mount namespace; -1 when this process is in it */
	char mnt[PATH_MAX];     /* a mount point in the private namespace; "" when none */
};

static int fx_setup(void **state)
{
	int r = th_fx_setup(state, sizeof(struct wp_fx), 0, 0);
	if (r == 0)
		((struct wp_fx *)*state)->host_ns = -1;
	return r;
}

/* Unmounts w->mnt and returns to the original mount namespace, if the test left them. */
static void leave_private_ns(struct wp_fx *w)
{
	if (w->mnt[0])
		(void)umount2(w->mnt, MNT_DETACH);
	w->mnt[0] = '\0';
	if (w->host_ns >= 0) {
		if (setns(w->host_ns, CLONE_NEWNS) < 0)
			print_error("return to the original mount namespace: %s\n", strerror(errno));
		(void)close(w->host_ns);
	}
	w->host_ns = -1;
}

static int fx_teardown(void **state)
{
	struct wp_fx *w = *state;
	leave_private_ns(w); /* before the removal, which does not cross mounts */
	th_ws_remove(&w->run_ws);
	th_fx_free(&w->fx);
	return 0;
}

/* A refused workspace and what the reason must say about it. */
struct refusal {
	const char *path;
	const char *reason;  /* the message after "warden: " up to the remedy */
};

/*
 * Runs `probe exit 0` with o and expects the refusal: exit 125, nothing on stdout, and one
 * line on stderr that holds reason and the remedy.
 */
static void expect_refused(struct th_fx *f, const struct th_opts *o, const char *reason)
{
	th_fx_run(f, o, TH_CMD(TH_PROBE, "exit", "0"));
	const char *nl = strchr(f->out.err, '\n');
	if (f->out.code != 125 || f->out.out[0] || !strstr(f->out.err, reason) ||
	    !strstr(f->out.err, REMEDY) || !nl || nl[1]) {
		th_show(&f->out);
		fail_msg("expected exit 125 and the one-line reason \"%s ... %s\"", reason, REMEDY);
	}
}

/* --workspace path with the default policy is refused with reason. */
static void expect_path_refused(struct th_fx *f, const char *path, const char *reason)
{
	struct th_opts o = th_fx_opts(f, NULL);
	o.workspace = path;
	expect_refused(f, &o, reason);
}

/* ---------------------------------------------------------------------------------------- */
/* The host's own trees                                                                      */

static void test_host_tree_refused(void **state)
{
	struct th_fx *f = *state;
	const struct refusal *c = f->param;
	struct stat st;
	if (lstat(c->path, &st) < 0 || !S_ISDIR(st.st_mode))
		skip(); /* this host has no such directory */
	expect_path_refused(f, c->path, c->reason);
}

/* ---------------------------------------------------------------------------------------- */
/* Homes                                                                                     */

/* The invoking user's home from /etc/passwd, also given as $HOME. */
static void test_own_home_refused(void **state)
{
	struct th_fx *f = *state;
	const struct passwd *pw = getpwuid(getuid());
	const char *home = pw && pw->pw_dir[0] == '/' ? pw->pw_dir : "/root";
	char real[PATH_MAX], env[PATH_MAX + 8], reason[PATH_MAX + 64];
	if (!realpath(home, real))
		skip(); /* no home directory on this host */
	(void)snprintf(env, sizeof(env), "HOME=%s", real);
	(void)snprintf(reason, sizeof(reason), "workspace '%s' is the home directory of uid %u", real,
		       (unsigned)getuid());
	struct th_opts o = th_fx_opts(f, NULL);
	o.workspace = real;
	o.env = TH_CMD(env);
	expect_refused(f, &o, reason);
	/* and from /etc/passwd alone, with no $HOME at all */
	o.env = NULL;
	expect_refused(f, &o, reason);
}

/* A home that only $HOME names: it, and every directory above it, is refused. */
static void test_env_home_refused(void **state)
{
	struct th_fx *f = *state;
	char home[PATH_MAX], env[PATH_MAX + 8], reason[2 * PATH_MAX];
	th_ws_mkdir(&f->ws, "sub");
	th_ws_mkdir(&f->ws, "sub/home");
	th_ws_path(&f->ws, "sub/home", home);
	(void)snprintf(env, sizeof(env), "HOME=%s", home);
	struct th_opts o = th_fx_opts(f, NULL);
	o.env = TH_CMD(env);

	o.workspace = home;
	(void)snprintf(reason, sizeof(reason),
		       "workspace '%s' is the home directory of uid %u (from $HOME)", home,
		       (unsigned)getuid());
	expect_refused(f, &o, reason);

	(void)snprintf(reason, sizeof(reason), "workspace '%s' holds %s, the home directory of uid",
		       f->ws.dir, home);
	o.workspace = f->ws.dir;
	expect_refused(f, &o, reason);

	/* $HOME with a trailing slash, and through a symlink: judged as written and resolved */
	(void)snprintf(env, sizeof(env), "HOME=%s/", home);
	expect_refused(f, &o, reason);
	char link[PATH_MAX];
	th_aux_path(&f->ws, "home-link", link);
	assert_int_equal(symlink(home, link), 0);
	(void)snprintf(env, sizeof(env), "HOME=%s", link);
	expect_refused(f, &o, reason);
}

/* A project inside the home is fine: $HOME is the workspace's parent. */
static void test_project_in_home_runs(void **state)
{
	struct th_fx *f = *state;
	char parent[PATH_MAX], env[PATH_MAX + 8];
	th_pathf(parent, "%s", f->ws.dir);
	(void)snprintf(env, sizeof(env), "HOME=%s", dirname(parent));
	struct th_opts o = th_fx_opts(f, NULL);
	o.env = TH_CMD(env);
	th_fx_run_expect(f, &o, TH_CMD(TH_PROBE, "exit", "0"), 0, "");
}

/* ---------------------------------------------------------------------------------------- */
/* Symlinks                                                                                  */

static void test_symlink_refused(void **state)
{
	struct th_fx *f = *state;
	char link[PATH_MAX], via[PATH_MAX], reason[2 * PATH_MAX];
	th_ws_mkdir(&f->ws, "sub");
	th_aux_path(&f->ws, "ws-link", link);
	assert_int_equal(symlink(f->ws.dir, link), 0);

	/* the last component */
	(void)snprintf(reason, sizeof(reason), "workspace '%s' is reached through a symbolic link",
		       link);
	expect_path_refused(f, link, reason);
	/* one in the middle */
	th_pathf(via, "%s/sub", link);
	(void)snprintf(reason, sizeof(reason), "workspace '%s' is reached through a symbolic link",
		       via);
	expect_path_refused(f, via, reason);
	/* a relative path, from warden's working directory */
	struct th_opts o = th_fx_opts(f, NULL);
	o.cwd = f->ws.aux;
	o.workspace = strrchr(link, '/') + 1;
	(void)snprintf(reason, sizeof(reason), "workspace '%s' is reached through a symbolic link",
		       o.workspace);
	expect_refused(f, &o, reason);
	/* /proc/self is a symlink too */
	expect_path_refused(f, "/proc/self", "workspace '/proc/self' is reached through a symbolic link");
}

/* ---------------------------------------------------------------------------------------- */
/* Pseudo filesystems                                                                        */

/*
 * A directory outside the host's trees that is the root of a kernel pseudo filesystem, in a
 * private mount namespace of this process (warden inherits it; the host never sees the
 * mount), is refused by its type alone. The process returns to the original namespace after,
 * through the teardown too when an assertion ends the test early.
 */
static void test_pseudo_fs_refused(void **state)
{
	struct wp_fx *w = *state;
	struct th_fx *f = &w->fx;
	static const char *const types[] = { "proc", "mqueue", "sysfs" };
	char reason[PATH_MAX + 64];
	w->host_ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	assert_true(w->host_ns >= 0);
	if (unshare(CLONE_NEWNS) < 0)
		fail_msg("unshare(CLONE_NEWNS): %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		fail_msg("make / private: %s", strerror(errno));
	unsigned tried = 0;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		th_aux_path(&f->ws, types[i], w->mnt);
		assert_int_equal(mkdir(w->mnt, 0755), 0);
		if (mount(types[i], w->mnt, types[i], MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
			print_message("mount %s: %s, not tried\n", types[i], strerror(errno));
			w->mnt[0] = '\0';
			continue;
		}
		tried++;
		(void)snprintf(reason, sizeof(reason), "workspace '%s' is on a %s filesystem", w->mnt,
			       types[i]);
		expect_path_refused(f, w->mnt, reason);
		(void)umount2(w->mnt, MNT_DETACH);
		w->mnt[0] = '\0';
	}
	leave_private_ns(w);
	assert_true(tried > 0);
}

/* ---------------------------------------------------------------------------------------- */
/* What runs                                                                                 */

/* The fixture's workspace under $TMPDIR, named and as the working directory. */
static void test_project_runs(void **state)
{
	struct th_fx *f = *state;
	th_fx_run_expect(f, NULL, TH_CMD(TH_PROBE, "exit", "0"), 0, "");
	struct th_opts o = { .cwd = f->ws.dir };
	th_fx_run_expect(f, &o, TH_CMD(TH_PROBE, "exit", "0"), 0, "");
}

/* A string array holds name. */
static bool json_list_has(const cJSON *list, const char *name)
{
	const cJSON *item;
	cJSON_ArrayForEach(item, list)
		if (cJSON_IsString(item) && strcmp(item->valuestring, name) == 0)
			return true;
	return false;
}

/*
 * unsafe: [workspace-anywhere] lets a workspace under /run through (the one the default
 * policy refuses), and a path through a symlink; the run record names the weakening.
 */
static void test_anywhere_allows(void **state)
{
	struct wp_fx *w = *state;
	struct th_fx *f = &w->fx;
	const char *tmpdir = secure_getenv("TMPDIR");
	char saved[PATH_MAX] = "", pol[PATH_MAX], reason[PATH_MAX + 64];
	if (tmpdir)
		th_pathf(saved, "%s", tmpdir);
	assert_int_equal(setenv("TMPDIR", "/run", 1), 0);
	int r = th_ws_new(&w->run_ws, 0, 0);
	if (saved[0])
		(void)setenv("TMPDIR", saved, 1);
	else
		(void)unsetenv("TMPDIR");
	if (r < 0)
		fail_msg("create a workspace under /run: %s", strerror(-r));

	/* refused by default, */
	(void)snprintf(reason, sizeof(reason), "workspace '%s' lies under /run", w->run_ws.dir);
	expect_path_refused(f, w->run_ws.dir, reason);
	/* allowed by the policy, and recorded */
	th_policy(&f->ws, ANYWHERE_POLICY, pol);
	struct th_opts o = th_fx_opts(f, pol);
	o.workspace = w->run_ws.dir;
	th_fx_record_expect(f, &o, TH_CMD(TH_PROBE, "exit", "0"), 0, "");
	const cJSON *weak = th_json_at(f->record, "weakenings");
	assert_true(cJSON_IsArray(weak));
	if (!json_list_has(weak, "workspace-anywhere"))
		fail_msg("the record's weakenings do not name workspace-anywhere");

	/* a symlinked path, too */
	char link[PATH_MAX];
	th_aux_path(&f->ws, "ws-link", link);
	assert_int_equal(symlink(f->ws.dir, link), 0);
	o.workspace = link;
	th_fx_run_expect(f, &o, TH_CMD(TH_PROBE, "exit", "0"), 0, "");

	/* the default policy records no such weakening */
	th_fx_record_expect(f, NULL, TH_CMD(TH_PROBE, "exit", "0"), 0, "");
	assert_false(json_list_has(th_json_at(f->record, "weakenings"), "workspace-anywhere"));
}

/* ---------------------------------------------------------------------------------------- */

/* A test named after its function, without the "test_" prefix. */
#define T(fn) { &#fn[5], fn, fx_setup, fx_teardown, NULL }
/* A refused host tree: path and the reason's start. */
#define TREE(name, p, why) { "tree_" name, test_host_tree_refused, fx_setup, fx_teardown, \
			     &(struct refusal){ p, why } }

int main(void)
{
	th_require_privileged();

	const struct CMUnitTest tests[] = {
		TREE("root", "/", "workspace '/' is the host's root directory"),
		TREE("etc", "/etc", "workspace '/etc' is /etc, a system directory"),
		TREE("usr_share", "/usr/share", "workspace '/usr/share' lies under /usr, a system directory"),
		TREE("boot", "/boot", "workspace '/boot' is /boot, a system directory"),
		TREE("run", "/run", "workspace '/run' is /run, the host's runtime state"),
		TREE("var", "/var", "workspace '/var' is /var, which every service or user shares"),
		TREE("home", "/home", "workspace '/home' is /home, which every service or user shares"),
		TREE("proc", "/proc/1", "workspace '/proc/1' lies under /proc, a kernel interface"),
		TREE("sys", "/sys/fs/cgroup", "workspace '/sys/fs/cgroup' lies under /sys, a kernel interface"),
		TREE("dev", "/dev", "workspace '/dev' is /dev, a kernel interface"),
		T(test_own_home_refused),
		T(test_env_home_refused),
		T(test_project_in_home_runs),
		T(test_symlink_refused),
		T(test_project_runs),
		T(test_anywhere_allows),
		T(test_pseudo_fs_refused),
	};
	return _cmocka_run_group_tests("priv-workspace-path", tests,
				       sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
