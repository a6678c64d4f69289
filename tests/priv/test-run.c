/* SPDX-License-Identifier: MIT */
/*
 * Privileged integration tests of `warden run`: each test builds a real sandbox as root and
 * has the probe try to break out of it, then checks the exact answer (an errno name, a
 * status line, an exit code, a record field) and, where the attempt targets the host, the
 * host side too. Where a result could be right by accident, a control run of the probe
 * outside the sandbox shows that the test can fail.
 *
 * Needs full privilege (root with CAP_SYS_ADMIN in the initial user namespace, which puts
 * warden in privileged mode); otherwise the program exits 77, or fails under
 * SBX_TEST_MUST_WORK=1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "harness.h"

/* Runs cmd in the fixture's workspace with the default policy, then th_fx_expect. */
static void probe_expect(struct th_fx *f, const char *const *cmd, int code, const char *out)
{
	th_fx_run_expect(f, NULL, cmd, code, out);
}

/* A write refused by a read-only mount or by permissions: either answer is a refusal. */
static void expect_write_refused(struct th_fx *f, const char *const *cmd)
{
	th_fx_run(f, NULL, cmd);
	th_fx_expect_write_refused(f);
}

/* ---------------------------------------------------------------------------------------- */
/* Identity                                                                                 */

static void test_identity_status(void **state)
{
	struct th_fx *f = *state;
	probe_expect(f, TH_CMD(TH_PROBE, "status"), 0, NULL);
	th_fx_expect_sandbox_user(f);
}

static void test_identity_record(void **state)
{
	struct th_fx *f = *state;
	th_fx_record_expect(f, NULL, TH_CMD(TH_PROBE, "status"), 0, NULL);
	char filters[32];
	assert_true(th_status_field(f->out.out, "Seccomp_filters", filters, sizeof(filters)));

	const cJSON *r = f->record;
	assert_string_equal(th_json_str(r, "sandbox.mode"), "privileged");
	double host_uid = th_json_num(r, "sandbox.host_uid");
	double host_gid = th_json_num(r, "sandbox.host_gid");
	assert_true(host_uid >= TH_HOST_ID_BASE);
	assert_true(host_gid >= TH_HOST_ID_BASE);

	assert_true(th_json_bool(r, "identity.checked"));
	assert_true(th_json_bool(r, "identity.held"));
	assert_true(th_json_num(r, "identity.uid") == host_uid);
	assert_true(th_json_num(r, "identity.gid") == host_gid);
	static const char *const caps[] = { "identity.CapInh", "identity.CapPrm", "identity.CapEff",
					    "identity.CapBnd", "identity.CapAmb" };
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		assert_string_equal(th_json_str(r, caps[i]), TH_ZERO_CAPS);
	assert_int_equal((int)th_json_num(r, "identity.NoNewPrivs"), 1);
	assert_int_equal((int)th_json_num(r, "identity.Seccomp"), 2);
	assert_int_equal((long)th_json_num(r, "identity.Seccomp_filters"),
			 strtol(filters, NULL, 10));

	static const char *const ns[] = { "user", "pid", "mnt", "net", "uts", "ipc", "cgroup" };
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		char p[96];
		(void)snprintf(p, sizeof(p), "identity.namespaces.%s.separate", ns[i]);
		if (!th_json_bool(r, p))
			fail_msg("namespace %s is shared with the supervisor", ns[i]);
		(void)snprintf(p, sizeof(p), "identity.namespaces.%s.supervisor", ns[i]);
		double sup = th_json_num(r, p);
		(void)snprintf(p, sizeof(p), "identity.namespaces.%s.sandbox", ns[i]);
		assert_true(th_json_num(r, p) != sup);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* The host filesystem is out of view                                                       */

static void test_host_root_hidden(void **state)
{
	struct th_fx *f = *state;
	struct stat st;
	assert_int_equal(stat("/root", &st), 0);
	probe_expect(f, TH_CMD(TH_PROBE, "open", "/root"), 1, "ERR ENOENT 2\n");
}

static void test_host_home_hidden(void **state)
{
	struct th_fx *f = *state;
	/* Make sure there is at least one host home to look for (when the host has /home). */
	char own[PATH_MAX];
	(void)snprintf(own, sizeof(own), "/home/warden-priv-%d", (int)getpid());
	bool have_home = mkdir(own, 0700) == 0;
	if (!have_home && errno != ENOENT)
		fail_msg("mkdir %s: %s", own, strerror(errno));
	struct dirent **ents = NULL;
	int n = have_home ? scandir("/home", &ents, NULL, alphasort) : 0;
	int checked = 0;
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
		    strcmp(name, "agent") != 0) {
			char p[PATH_MAX];
			(void)snprintf(p, sizeof(p), "/home/%s", name);
			th_fx_run(f, NULL, TH_CMD(TH_PROBE, "open", p));
			if (strcmp(f->out.out, "ERR ENOENT 2\n") != 0) {
				(void)rmdir(own);
				th_show(&f->out);
				fail_msg("host home %s is visible", p);
			}
			checked++;
		}
		free(ents[i]);
	}
	free(ents);
	(void)rmdir(own);
	assert_true(checked >= (have_home ? 1 : 0));
	/* The sandbox's own home is there. */
	probe_expect(f, TH_CMD(TH_PROBE, "open", "/home/agent"), 0, "OK 3\n");
}

static void test_host_files_hidden(void **state)
{
	struct th_fx *f = *state;
	static const char *const dirs[] = { "/var/tmp", "/opt", "/tmp", "/srv", "/mnt" };
	size_t made = 0;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && made < TH_HOST_FILES; i++) {
		const char *p;
		int fd = th_fx_host_file(f, dirs[i], "warden-priv-secret", &p);
		if (fd < 0)
			continue;
		(void)close(fd);
		made++;
		probe_expect(f, TH_CMD(TH_PROBE, "open", p), 1, "ERR ENOENT 2\n");
	}
	assert_true(made >= 2);
}

static void test_etc_shadow_hidden(void **state)
{
	struct th_fx *f = *state;
	probe_expect(f, TH_CMD(TH_PROBE, "open", "/etc/shadow"), 1, "ERR ENOENT 2\n");
	probe_expect(f, TH_CMD(TH_PROBE, "open", "/etc/gshadow"), 1, "ERR ENOENT 2\n");
	probe_expect(f, TH_CMD(TH_PROBE, "open", "/etc/sudoers"), 1, "ERR ENOENT 2\n");
}

static void test_sys_absent(void **state)
{
	struct th_fx *f = *state;
	probe_expect(f, TH_CMD(TH_PROBE, "open", "/sys"), 1, "ERR ENOENT 2\n");
	probe_expect(f, TH_CMD(TH_PROBE, "open", "/sys/fs/cgroup"), 1, "ERR ENOENT 2\n");
}

/* ---------------------------------------------------------------------------------------- */
/* Nothing outside /workspace is writable                                                   */

static void test_usr_readonly(void **state)
{
	struct th_fx *f = *state;
	char name[64], inside[96];
	(void)snprintf(name, sizeof(name), "warden-priv-%d", (int)getpid());
	(void)snprintf(inside, sizeof(inside), "/usr/%s", name);
	expect_write_refused(f, TH_CMD(TH_PROBE, "write", inside));
	expect_write_refused(f, TH_CMD(TH_PROBE, "write", "/usr/bin/env"));
	struct stat st;
	assert_int_equal(lstat(inside, &st), -1);
}

static void test_etc_passwd_readonly(void **state)
{
	struct th_fx *f = *state;
	expect_write_refused(f, TH_CMD(TH_PROBE, "write", "/etc/passwd"));
	expect_write_refused(f, TH_CMD(TH_PROBE, "write", "/etc/warden-new"));
}

static void test_root_readonly(void **state)
{
	struct th_fx *f = *state;
	expect_write_refused(f, TH_CMD(TH_PROBE, "write", "/warden-new"));
	expect_write_refused(f, TH_CMD(TH_PROBE, "mkdir", "/warden-dir"));
}

static void test_proc_sys_readonly(void **state)
{
	struct th_fx *f = *state;
	expect_write_refused(f, TH_CMD(TH_PROBE, "write", "/proc/sys/kernel/hostname"));
	expect_write_refused(f, TH_CMD(TH_PROBE, "openw", "/proc/sys/kernel/core_pattern"));
}

/*
 * A masked /proc file is /dev/null bound over it (what is written goes nowhere: a read-only
 * mount does not stop writes to a device node, so success of the write proves nothing); one
 * the host kernel lacks is simply absent.
 */
static void expect_proc_masked(struct th_fx *f, const char *name)
{
	char host[64];
	(void)snprintf(host, sizeof(host), "/proc/%s", name);
	struct stat st;
	if (lstat(host, &st) < 0) {
		probe_expect(f, TH_CMD(TH_PROBE, "stat", host), 1, "ERR ENOENT 2\n");
		return;
	}
	th_fx_run(f, NULL, TH_CMD(TH_PROBE, "stat", host));
	size_t len = strlen(f->out.out);
	if (strncmp(f->out.out, "OK chr ", 7) != 0 || len < 5 ||
	    strcmp(f->out.out + len - 5, " 1:3\n") != 0) {
		th_show(&f->out);
		fail_msg("%s is not masked by /dev/null", host);
	}
}

static void test_proc_sysrq_masked(void **state)
{
	expect_proc_masked(*state, "sysrq-trigger");
}

static void test_proc_sensitive_masked(void **state)
{
	static const char *const names[] = { "kcore", "kallsyms", "keys", "key-users",
					     "timer_list", "kmsg", "sched_debug", "vmallocinfo",
					     "kpagecount", "kpageflags", "config.gz" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		expect_proc_masked(*state, names[i]);
}

/*
 * A masked /proc directory is an empty read-only tmpfs: nothing of the host's shows and
 * nothing can be created there, for every masked directory (the later ones are clones of the
 * first, and must keep its flags). One the host kernel lacks is simply absent.
 */
static void test_proc_dirs_masked(void **state)
{
	struct th_fx *f = *state;
	static const char *const names[] = { "acpi", "scsi", "asound", "driver" };
	int masked = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char host[64], file[80];
		(void)snprintf(host, sizeof(host), "/proc/%s", names[i]);
		(void)snprintf(file, sizeof(file), "%s/planted", host);
		struct stat st;
		if (lstat(host, &st) < 0) {
			probe_expect(f, TH_CMD(TH_PROBE, "stat", host), 1, "ERR ENOENT 2\n");
			continue;
		}
		probe_expect(f, TH_CMD(TH_PROBE, "ls", host), 0, "");
		expect_write_refused(f, TH_CMD(TH_PROBE, "write", file));
		masked++;
	}
	print_message("%d masked /proc directories on this host\n", masked);
}

/* ---------------------------------------------------------------------------------------- */
/* Workspace ownership (idmapped mount)                                                      */

#define WS_UID 4242u
#define WS_GID 4343u

static void chown_ws(struct th_fx *f, uid_t uid, gid_t gid)
{
	char probe[PATH_MAX];
	th_ws_path(&f->ws, "probe", probe);
	if (chown(f->ws.dir, uid, gid) < 0 || chown(probe, uid, gid) < 0)
		fail_msg("chown the workspace: %s", strerror(errno));
}

static void test_ws_files_owned_by_ws_owner(void **state)
{
	struct th_fx *f = *state;
	chown_ws(f, WS_UID, WS_GID);
	/* Inside, the workspace's owner is the sandbox user. */
	th_fx_run(f, NULL, TH_CMD(TH_PROBE, "stat", "/workspace"));
	if (strncmp(f->out.out, "OK dir 1000 1000 0755 ", 22) != 0) {
		th_show(&f->out);
		fail_msg("/workspace is not owned by the sandbox user");
	}
	probe_expect(f, TH_CMD(TH_PROBE, "write", "/workspace/new"), 0, "OK 1\n");
	probe_expect(f, TH_CMD(TH_PROBE, "mkdir", "/workspace/newdir"), 0, "OK 0\n");
	static const char *const made[] = { "new", "newdir" };
	for (size_t i = 0; i < 2; i++) {
		char p[PATH_MAX];
		struct stat st;
		th_ws_path(&f->ws, made[i], p);
		assert_int_equal(lstat(p, &st), 0);
		assert_int_equal(st.st_uid, WS_UID);
		assert_int_equal(st.st_gid, WS_GID);
	}
}

static void test_ws_root_owned_files(void **state)
{
	struct th_fx *f = *state;
	probe_expect(f, TH_CMD(TH_PROBE, "write", "/workspace/new"), 0, "OK 1\n");
	char p[PATH_MAX];
	struct stat st;
	th_ws_path(&f->ws, "new", p);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, 0);
}

static void test_ws_never_chowned(void **state)
{
	struct th_fx *f = *state;
	chown_ws(f, WS_UID, WS_GID);
	assert_int_equal(chmod(f->ws.dir, 0750), 0);
	th_ws_write(&f->ws, "untouched", "data\n");
	char p[PATH_MAX];
	th_ws_path(&f->ws, "untouched", p);
	assert_int_equal(chown(p, 5151, 5252), 0);
	assert_int_equal(chmod(p, 0640), 0);
	struct stat ws0, file0, ws1, file1;
	assert_int_equal(stat(f->ws.dir, &ws0), 0);
	assert_int_equal(stat(p, &file0), 0);

	probe_expect(f, TH_CMD(TH_PROBE, "write", "/workspace/other"), 0, "OK 1\n");

	assert_int_equal(stat(f->ws.dir, &ws1), 0);
	assert_int_equal(stat(p, &file1), 0);
	assert_int_equal(ws1.st_uid, WS_UID);
	assert_int_equal(ws1.st_gid, WS_GID);
	assert_int_equal(ws1.st_mode, ws0.st_mode);
	assert_int_equal(file1.st_uid, 5151);
	assert_int_equal(file1.st_gid, 5252);
	assert_int_equal(file1.st_mode, file0.st_mode);
	/* A chown or chmod, even one undone later, moves ctime. */
	assert_int_equal(file1.st_ctim.tv_sec, file0.st_ctim.tv_sec);
	assert_int_equal(file1.st_ctim.tv_nsec, file0.st_ctim.tv_nsec);
}

static void test_ws_default_is_cwd(void **state)
{
	struct th_fx *f = *state;
	struct th_opts o = { .cwd = f->ws.dir };
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "write", "/workspace/from-cwd"));
	th_fx_expect(f, 0, "OK 1\n");
	assert_true(th_ws_exists(&f->ws, "from-cwd"));
}

/* ---------------------------------------------------------------------------------------- */
/* Protected workspace paths                                                                 */

static void make_git(struct th_fx *f)
{
	th_ws_mkdir(&f->ws, ".git");
	th_ws_mkdir(&f->ws, ".git/hooks");
	th_ws_write(&f->ws, ".git/config", "[core]\n\tbare = false\n");
	th_ws_write(&f->ws, ".git/HEAD", "ref: refs/heads/main\n");
}

static void test_protect_git_hooks(void **state)
{
	struct th_fx *f = *state;
	f->ws_mode = "direct"; /* the protect list is workspace mode direct's */
	make_git(f);
	expect_write_refused(f, TH_CMD(TH_PROBE, "write", "/workspace/.git/hooks/pre-commit"));
	expect_write_refused(f, TH_CMD(TH_PROBE, "mkdir", "/workspace/.git/hooks/sub"));
	assert_false(th_ws_exists(&f->ws, ".git/hooks/pre-commit"));
	assert_false(th_ws_exists(&f->ws, ".git/hooks/sub"));
}

static void test_protect_git_config(void **state)
{
	struct th_fx *f = *state;
	f->ws_mode = "direct"; /* the protect list is workspace mode direct's */
	make_git(f);
	expect_write_refused(f, TH_CMD(TH_PROBE, "write", "/workspace/.git/config"));
	char p[PATH_MAX];
	th_ws_path(&f->ws, ".git/config", p);
	th_expect_file(p, "[core]\n\tbare = false\n");
}

static void test_protect_git_rename(void **state)
{
	struct th_fx *f = *state;
	f->ws_mode = "direct"; /* the protect list is workspace mode direct's */
	make_git(f);
	th_fx_run(f, NULL, TH_CMD(TH_PROBE, "rename", "/workspace/.git", "/workspace/moved"));
	if (strncmp(f->out.out, "ERR ", 4) != 0) {
		th_show(&f->out);
		fail_msg(".git could be renamed");
	}
	th_fx_run(f, NULL,
		  TH_CMD(TH_PROBE, "rename", "/workspace/.git/hooks", "/workspace/.git/h2"));
	if (strncmp(f->out.out, "ERR ", 4) != 0) {
		th_show(&f->out);
		fail_msg(".git/hooks could be renamed");
	}
	struct stat st;
	char p[PATH_MAX];
	th_ws_path(&f->ws, ".git/hooks", p);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_false(th_ws_exists(&f->ws, "moved"));
	assert_false(th_ws_exists(&f->ws, ".git/h2"));
}

static void test_git_all_read_only(void **state)
{
	struct th_fx *f = *state;
	f->ws_mode = "direct"; /* the protect list is workspace mode direct's */
	make_git(f);
	/* The whole top-level .git, not only hooks and config (tests/priv/test-workspace-direct.c). */
	expect_write_refused(f, TH_CMD(TH_PROBE, "write", "/workspace/.git/index"));
	expect_write_refused(f, TH_CMD(TH_PROBE, "mkdir", "/workspace/.git/objects"));
	assert_false(th_ws_exists(&f->ws, ".git/index"));
	assert_false(th_ws_exists(&f->ws, ".git/objects"));
}

static void test_protect_envrc_create(void **state)
{
	struct th_fx *f = *state;
	f->ws_mode = "direct"; /* the protect list is workspace mode direct's */
	expect_write_refused(f, TH_CMD(TH_PROBE, "write", "/workspace/.envrc"));
	assert_false(th_ws_exists(&f->ws, ".envrc"));
}

static void test_no_placeholder_left(void **state)
{
	struct th_fx *f = *state;
	f->ws_mode = "direct"; /* the protect list is workspace mode direct's */
	/* During the run, a missing .git is an empty read-only directory: nothing goes in it. */
	th_fx_record_expect(f, NULL, TH_CMD(TH_PROBE, "mkdir", "/workspace/.git/hooks"), 1,
			    "ERR EROFS 30\n");
	/* .git, HEAD (with no .git, the workspace must not become a bare repository) and the
	 * 29 entries of the default protect list */
	assert_int_equal((int)th_json_num(f->record, "sandbox.placeholders"), 31);
	th_expect_names(f->ws.dir, "probe\n");
}

/* ---------------------------------------------------------------------------------------- */
/* Network                                                                                  */

/*
 * Has the probe send to a host socket of type on 127.0.0.1 (`probe VERB 127.0.0.1 PORT`) and
 * expects code and out; nothing may reach the host's socket (no connection, no datagram).
 */
static void expect_host_socket_unreached(struct th_fx *f, int type, const char *verb, int code,
					 const char *out)
{
	char ps[8], buf[16];
	int fd = th_host_socket(type, ps, sizeof(ps));
	assert_true(fd >= 0);
	th_fx_run(f, NULL, TH_CMD(TH_PROBE, verb, "127.0.0.1", ps));
	ssize_t got = type == SOCK_STREAM ? accept(fd, NULL, NULL) :
					    recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	int e = errno;
	if (type == SOCK_STREAM && got >= 0)
		(void)close((int)got);
	(void)close(fd);
	th_fx_expect(f, code, out);
	assert_int_equal(got, -1);
	assert_int_equal(e, EAGAIN);
}

static void test_net_host_tcp_unreachable(void **state)
{
	expect_host_socket_unreached(*state, SOCK_STREAM, "connect", 1, "ERR ECONNREFUSED 111\n");
}

static void test_net_host_udp_unreachable(void **state)
{
	/* The datagram leaves fine, on the sandbox's own loopback. */
	expect_host_socket_unreached(*state, SOCK_DGRAM, "udp", 0, "OK 1\n");
}

static void test_net_packet_socket(void **state)
{
	struct th_fx *f = *state;
	/* The filter answers EAFNOSUPPORT for socket families it does not allow. */
	probe_expect(f, TH_CMD(TH_PROBE, "syscall", "socket-packet"), 1, "ERR EAFNOSUPPORT 97\n");
}

/* ---------------------------------------------------------------------------------------- */
/* Processes                                                                                */

static void test_pids_only_sandbox(void **state)
{
	struct th_fx *f = *state;
	probe_expect(f, TH_CMD(TH_PROBE, "pids"), 0, NULL);
	/* Only the sandbox's init (the worker, when visible) and the probe itself. */
	bool self = false;
	char copy[256];
	(void)snprintf(copy, sizeof(copy), "%s", f->out.out);
	char *save = NULL;
	for (char *tok = strtok_r(copy, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
		if (strcmp(tok, "2") == 0)
			self = true;
		else if (strcmp(tok, "1") != 0) {
			th_show(&f->out);
			fail_msg("pid %s is visible in the sandbox", tok);
		}
	}
	assert_true(self);
}

static void test_kill_host_pids(void **state)
{
	struct th_fx *f = *state;
	probe_expect(f, TH_CMD(TH_PROBE, "kill", TH_WARDEN_PID, "0"), 1, "ERR ESRCH 3\n");
	char self[16];
	(void)snprintf(self, sizeof(self), "%d", (int)getpid());
	probe_expect(f, TH_CMD(TH_PROBE, "kill", self, "0"), 1, "ERR ESRCH 3\n");
	/* Broadcast: there is nobody else to signal. */
	probe_expect(f, TH_CMD(TH_PROBE, "kill", "-1", "0"), 1, "ERR ESRCH 3\n");
}

static void test_kill_init_ignored(void **state)
{
	struct th_fx *f = *state;
	th_fx_record_expect(f, NULL, TH_CMD(TH_PROBE, "kill", "1", "9"), 0, "OK 0\n");
	assert_string_equal(th_json_str(f->record, "exit.reason"), "exited");
	assert_int_equal((int)th_json_num(f->record, "exit.status"), 0);
}

/* ---------------------------------------------------------------------------------------- */
/* Forbidden syscalls (one test each; the table is in main)                                 */

struct syscall_case {
	const char *name;
	const char *expect;
};

static void test_forbidden_syscall(void **state)
{
	struct th_fx *f = *state;
	const struct syscall_case *c = f->param;
	probe_expect(f, TH_CMD(TH_PROBE, "syscall", c->name), 1, c->expect);
}

static void test_tiocsti_pty(void **state)
{
	struct th_fx *f = *state;
	int master = -1;
	int slave = th_open_pty(&master);
	if (slave < 0) {
		print_message("no pty available: %s\n", strerror(errno));
		skip();
	}
	struct th_opts o = th_fx_opts(f, NULL);
	o.stdin_fd = slave;
	/* Control: outside the sandbox, as root, the same ioctl succeeds. */
	struct th_opts direct = o;
	direct.direct = true;
	th_fx_run(f, &direct, TH_CMD(TH_PROBE, "tiocsti"));
	const bool control_ok = strcmp(f->out.out, "OK 0\n") == 0;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "tiocsti"));
	(void)close(slave);
	(void)close(master);
	th_fx_expect(f, 1, "ERR EPERM 1\n");
	assert_true(control_ok);
}

static void test_tiocsti_devnull(void **state)
{
	struct th_fx *f = *state;
	/* Not a tty: the tty layer would say ENOTTY; the filter must answer first. */
	probe_expect(f, TH_CMD(TH_PROBE, "tiocsti"), 1, "ERR EPERM 1\n");
}

/* ---------------------------------------------------------------------------------------- */
/* Limits                                                                                   */

/* The last run was `probe forkbomb`: it forked at least once, and fewer than limit times. */
static void expect_forked_under(const struct th_fx *f, long limit)
{
	long forked = -1;
	if (sscanf(f->out.out, "FORKED %ld", &forked) != 1) {
		th_show(&f->out);
		fail_msg("no FORKED line");
	}
	assert_in_range(forked, 1, limit - 1);
}

static void test_limit_pids(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	th_policy(&f->ws, "limits: { pids: 32 }\n", pol);
	struct th_opts o = th_fx_opts(f, pol);
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "forkbomb", "200"));
	expect_forked_under(f, 32);
}

static void test_limit_memory(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	th_policy(&f->ws, "limits: { memory: 64M }\n", pol);
	struct th_opts o = th_fx_opts(f, pol);
	th_fx_record_expect(f, &o, TH_CMD(TH_PROBE, "membomb", "512"), 137, NULL);
	char copy[4096];
	(void)snprintf(copy, sizeof(copy), "%s", f->out.out);
	char *save = NULL;
	for (char *tok = strtok_r(copy, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
		long mib;
		if (sscanf(tok, "TOUCHED %ld", &mib) == 1 && mib >= 64) {
			th_show(&f->out);
			fail_msg("touched %ld MiB under a 64 MiB limit", mib);
		}
	}
	assert_string_equal(th_json_str(f->record, "exit.reason"), "oom");
	assert_int_equal((int)th_json_num(f->record, "exit.code"), 137);
	assert_true(th_json_num(f->record, "resources.oom_kills") >= 1);
}

static void test_limit_nofile(void **state)
{
	struct th_fx *f = *state;
	/* Control: the default policy allows 100. */
	probe_expect(f, TH_CMD(TH_PROBE, "nofile", "100"), 0, "OPENED 100\n");
	char pol[PATH_MAX];
	th_policy(&f->ws, "limits: { nofile: 64 }\n", pol);
	struct th_opts o = th_fx_opts(f, pol);
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "nofile", "100"));
	/* 64 descriptors, three of them stdin, stdout and stderr. */
	th_fx_expect(f, 1, "OPENED 61\nERR EMFILE 24\n");
}

static void test_wall_timeout(void **state)
{
	struct th_fx *f = *state;
	struct th_opts o = th_fx_opts(f, NULL);
	o.timeout = "1";
	th_fx_record_expect(f, &o, TH_CMD(TH_PROBE, "sleep", "30"), 124, "");
	assert_in_range(f->out.elapsed_ms, 900, 5000);
	assert_string_equal(th_json_str(f->record, "exit.reason"), "wall-timeout");
	assert_int_equal((int)th_json_num(f->record, "exit.code"), 124);
}

/* ---------------------------------------------------------------------------------------- */
/* Exit codes                                                                               */

static void test_exit_status(void **state)
{
	struct th_fx *f = *state;
	probe_expect(f, TH_CMD(TH_PROBE, "exit", "0"), 0, "");
	probe_expect(f, TH_CMD(TH_PROBE, "exit", "3"), 3, "");
	probe_expect(f, TH_CMD(TH_PROBE, "exit", "255"), 255, "");
}

static void test_exit_signal(void **state)
{
	struct th_fx *f = *state;
	probe_expect(f, TH_CMD(TH_PROBE, "signal", "9"), 137, "");
	th_fx_record_expect(f, NULL, TH_CMD(TH_PROBE, "signal", "15"), 143, "");
	assert_string_equal(th_json_str(f->record, "exit.reason"), "signaled");
	assert_int_equal((int)th_json_num(f->record, "exit.signal"), 15);
}

static void test_exit_not_found(void **state)
{
	struct th_fx *f = *state;
	probe_expect(f, TH_CMD("/workspace/no-such-file"), 127, "");
	probe_expect(f, TH_CMD("warden-no-such-command"), 127, "");
}

static void test_exit_not_executable(void **state)
{
	struct th_fx *f = *state;
	th_ws_write(&f->ws, "script", "#!/bin/sh\nexit 0\n");
	probe_expect(f, TH_CMD("/workspace/script"), 126, "");
	/* A directory is found but cannot be executed either. */
	probe_expect(f, TH_CMD("/workspace"), 126, "");
}

static void test_exit_bad_policy(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	th_policy(&f->ws, "limits: { pids: banana }\n", pol);
	struct th_opts o = th_fx_opts(f, pol);
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "env"));
	th_fx_expect(f, 125, "");
	if (!strstr(f->out.err, pol)) {
		th_show(&f->out);
		fail_msg("the diagnostic does not name the policy file");
	}
	char missing[PATH_MAX];
	th_aux_path(&f->ws, "missing", missing);
	o.policy = missing;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "env"));
	th_fx_expect(f, 125, "");
}

/* ---------------------------------------------------------------------------------------- */
/* What the command inherits                                                                */

static void test_fds_closed(void **state)
{
	struct th_fx *f = *state;
	/* Leak two descriptors (no O_CLOEXEC) into warden. */
	assert_int_equal(fcntl(7, F_GETFD), -1);
	assert_int_equal(fcntl(8, F_GETFD), -1);
	int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, 7), 7);
	assert_int_equal(dup2(fd, 8), 8);
	(void)close(fd);
	struct th_opts o = th_fx_opts(f, NULL);
	o.direct = true;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "fds"));
	const bool control = th_has_line(f->out.out, "7") && th_has_line(f->out.out, "8");
	o.direct = false;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "fds"));
	(void)close(7);
	(void)close(8);
	th_fx_expect(f, 0, "0\n1\n2\n");
	assert_true(control);
}

/*
 * The last run printed (probe env) each of the n variables of want, and no other variable but
 * PWD=/workspace.
 */
static void expect_env(const struct th_fx *f, const char *const *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!th_has_line(f->out.out, want[i])) {
			th_show(&f->out);
			fail_msg("missing %s", want[i]);
		}
	char copy[4096];
	(void)snprintf(copy, sizeof(copy), "%s", f->out.out);
	char *save = NULL;
	for (char *tok = strtok_r(copy, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
		bool known = strcmp(tok, "PWD=/workspace") == 0;
		for (size_t i = 0; i < n && !known; i++)
			known = strcmp(tok, want[i]) == 0;
		if (!known) {
			th_show(&f->out);
			fail_msg("unexpected variable %s", tok);
		}
	}
}

static void test_env_clean(void **state)
{
	struct th_fx *f = *state;
	static const char *const host_env[] = {
		"TERM=xterm-warden-test", "SECRET_TOKEN=xyz-secret-token",
		"AWS_SECRET_ACCESS_KEY=aws-secret-key-value", "HOME=/root", "USER=root",
		"LOGNAME=root", "LANG=de_DE.UTF-8", "SSH_AUTH_SOCK=/tmp/agent-secret.sock",
		"LD_LIBRARY_PATH=/nonexistent-secret", NULL,
	};
	static const char *const want[] = {
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/agent", "USER=agent",
		"LOGNAME=agent", "LANG=C.UTF-8", "TERM=xterm-warden-test",
	};
	struct th_opts o = th_fx_opts(f, NULL);
	o.env = host_env;
	o.direct = true;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "env"));
	const bool control = th_has_line(f->out.out, "SECRET_TOKEN=xyz-secret-token");
	o.direct = false;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "env"));
	th_fx_expect(f, 0, NULL);
	assert_true(control);
	if (strstr(f->out.out, "secret") || strstr(f->out.out, "SECRET")) {
		th_show(&f->out);
		fail_msg("a secret reached the sandbox");
	}
	expect_env(f, want, sizeof(want) / sizeof(want[0]));
}

/* ---------------------------------------------------------------------------------------- */
/* Lifetime: nothing of the sandbox outlives warden                                         */

static void test_daemon_dies_with_run(void **state)
{
	struct th_fx *f = *state;
	th_marker("daemon", f->marker, sizeof(f->marker));
	struct th_opts o = th_fx_opts(f, NULL);
	struct th_proc p;
	assert_int_equal(th_spawn(&o, TH_CMD(TH_PROBE, "daemon", "1500", f->marker), &p), 0);
	bool started = th_wait_stdout(&p, "DAEMON ", 10000);
	/* Control: while the run lasts, the host sees the probe and its daemon. */
	int during = started ? th_count_procs(f->marker, "probe", p.pid) : -1;
	th_fx_finish(f, &p);
	int after = th_count_procs(f->marker, NULL, 0);
	if (!started || after != 0)
		th_show(&f->out);
	assert_true(started);
	assert_true(during >= 2);
	th_fx_expect(f, 0, NULL);
	assert_int_equal(after, 0);
}

/*
 * Starts `probe sleep SECS MARKER`, MARKER a fresh f->marker made from stem, and waits up to
 * 5 s for the probe to show among the host's processes. Returns how many did (0 or 1).
 */
static int spawn_sleeper(struct th_fx *f, const char *stem, const char *secs, struct th_proc *p)
{
	th_marker(stem, f->marker, sizeof(f->marker));
	struct th_opts o = th_fx_opts(f, NULL);
	assert_int_equal(th_spawn(&o, TH_CMD(TH_PROBE, "sleep", secs, f->marker), p), 0);
	int seen = 0;
	for (int i = 0; i < 250 && !seen; i++) {
		seen = th_count_procs(f->marker, "probe", p->pid);
		if (!seen)
			(void)usleep(20000);
	}
	return seen;
}

static void test_supervisor_killed(void **state)
{
	struct th_fx *f = *state;
	struct th_proc p;
	int seen = spawn_sleeper(f, "sleep", "120", &p);
	struct timespec t0, t1;
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	(void)kill(p.pid, SIGKILL);
	th_fx_finish(f, &p);
	int left = -1;
	long ms = 0;
	do {
		left = th_count_procs(f->marker, NULL, 0);
		(void)clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (left)
			(void)usleep(20000);
	} while (left && ms < 2000);
	assert_int_equal(seen, 1);
	assert_int_equal(f->out.code, 128 + SIGKILL);
	if (left)
		fail_msg("%d sandbox process(es) outlived the supervisor by %ld ms", left, ms);
}

/* ---------------------------------------------------------------------------------------- */
/* The run record                                                                           */

static bool is_timestamp(const char *s)
{
	/* 2026-11-29T08:49:05.649Z */
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	if (strlen(s) != sizeof(shape) - 1)
		return false;
	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
			return false;
	return true;
}

static void test_record_valid(void **state)
{
	struct th_fx *f = *state;
	th_fx_record_expect(f, NULL, TH_CMD(TH_PROBE, "exit", "3"), 3, "");
	th_expect_names(f->record_dir, "record.json\n");
	const cJSON *r = f->record;

	assert_int_equal((int)th_json_num(r, "schema_version"), 1);
	assert_true(strlen(th_json_str(r, "warden_version")) > 0);
	const cJSON *cmd = th_json_at(r, "command");
	assert_true(cJSON_IsArray(cmd));
	assert_int_equal(cJSON_GetArraySize(cmd), 3);
	static const char *const argv[] = { TH_PROBE, "exit", "3" };
	for (int i = 0; i < 3; i++) {
		const cJSON *a = cJSON_GetArrayItem(cmd, i);
		assert_true(cJSON_IsString(a));
		assert_string_equal(a->valuestring, argv[i]);
	}
	assert_string_equal(th_json_str(r, "policy.source"), "<default>");
	const char *digest = th_json_str(r, "policy.digest");
	assert_int_equal(strlen(digest), 7 + 64);
	assert_int_equal(strncmp(digest, "sha256:", 7), 0);
	assert_int_equal(strspn(digest + 7, "0123456789abcdef"), 64);
	const char *started = th_json_str(r, "started_at"), *ended = th_json_str(r, "ended_at");
	assert_true(is_timestamp(started));
	assert_true(is_timestamp(ended));
	assert_true(strcmp(started, ended) <= 0);
	double dur = th_json_num(r, "duration_ms");
	assert_true(dur >= 0 && dur <= (double)f->out.elapsed_ms);

	assert_string_equal(th_json_str(r, "exit.reason"), "exited");
	assert_int_equal((int)th_json_num(r, "exit.code"), 3);
	assert_int_equal((int)th_json_num(r, "exit.status"), 3);
	assert_true(th_json_num(r, "resources.peak_memory_bytes") > 0);
	(void)th_json_num(r, "resources.cpu_usec");
	assert_int_equal((int)th_json_num(r, "resources.oom_kills"), 0);
	assert_int_equal((int)th_json_num(r, "resources.pids_limit_hits"), 0);

	assert_string_equal(th_json_str(r, "sandbox.mode"), "privileged");
	assert_true(th_json_num(r, "sandbox.host_uid") >= TH_HOST_ID_BASE);
	int cgv = (int)th_json_num(r, "sandbox.cgroup_version");
	assert_true(cgv == 1 || cgv == 2);
	assert_true(th_json_bool(r, "sandbox.cgroup_emptied"));
	assert_int_equal((int)th_json_num(r, "sandbox.placeholders"), 0);
	assert_string_equal(th_json_str(r, "workspace.mode"), "changes");
	const cJSON *weak = th_json_at(r, "weakenings");
	assert_true(cJSON_IsArray(weak));
	assert_int_equal(cJSON_GetArraySize(weak), 0);
	assert_true(th_json_bool(r, "identity.checked"));
	assert_true(cJSON_IsNull(th_json_at(r, "violation")));
}

/* A run with --record dir (which warden must refuse: a symlink is involved) fails. */
static void expect_record_refused(struct th_fx *f, const char *dir)
{
	struct th_opts o = th_fx_opts(f, NULL);
	o.record = dir;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "exit", "0"));
	if (f->out.code == 0)
		th_show(&f->out);
	assert_int_not_equal(f->out.code, 0);
}

static void test_record_symlink_dir_refused(void **state)
{
	struct th_fx *f = *state;
	char target[PATH_MAX], link[PATH_MAX], back[PATH_MAX];
	th_aux_path(&f->ws, "target", target);
	th_aux_path(&f->ws, "link", link);
	assert_int_equal(mkdir(target, 0755), 0);
	assert_int_equal(symlink(target, link), 0);
	expect_record_refused(f, link);
	th_expect_names(target, "");
	ssize_t n = readlink(link, back, sizeof(back) - 1);
	assert_true(n > 0);
	back[n] = '\0';
	assert_string_equal(back, target);
}

/* warden doctor as root: every required check passes on this host. */
static void test_doctor_root(void **state)
{
	struct th_fx *f = *state;
	struct th_opts o = th_fx_opts(f, NULL);
	o.subcommand = "doctor";
	o.workspace = NULL;
	th_fx_run(f, &o, TH_CMD("--json"));
	const cJSON *root = th_fx_expect_json(f);
	assert_true(th_json_bool(root, "ready"));
	assert_string_equal(th_json_str(root, "mode"), "privileged");
}

static void test_record_symlink_file_refused(void **state)
{
	struct th_fx *f = *state;
	char dir[PATH_MAX], victim[PATH_MAX], link[PATH_MAX + 16];
	th_aux_path(&f->ws, "record", dir);
	th_aux_path(&f->ws, "victim", victim);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(th_write_file(victim, "victim\n"), 0);
	(void)snprintf(link, sizeof(link), "%s/record.json", dir);
	assert_int_equal(symlink(victim, link), 0);
	expect_record_refused(f, dir);
	th_expect_file(victim, "victim\n");
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	th_expect_names(dir, "record.json\n");
}

/* ---------------------------------------------------------------------------------------- */
/* Size-limited tmpfs: /tmp, /home/<user>, /dev/shm                                         */

/* statfs as the probe prints it: TMPFS_MAGIC and the size in bytes. */
static void tmpfs_statfs_line(unsigned long long bytes, char *out, size_t len)
{
	(void)snprintf(out, len, "OK %lx %llu\n", (unsigned long)TMPFS_MAGIC, bytes);
}

static void expect_tmpfs_limited(struct th_fx *f, const char *dir)
{
	char pol[PATH_MAX], file[PATH_MAX], want[64];
	th_pathf(file, "%s/fill", dir);
	/* Control: the default 1 GiB takes 16 MiB, and its size shows in statfs. */
	probe_expect(f, TH_CMD(TH_PROBE, "fill", file, "16"), 0, "WROTE 16\nOK 0\n");
	tmpfs_statfs_line(1ull << 30, want, sizeof(want));
	probe_expect(f, TH_CMD(TH_PROBE, "statfs", dir), 0, want);

	th_policy(&f->ws, "limits: { tmpfs: 8M }\n", pol);
	struct th_opts o = th_fx_opts(f, pol);
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "statfs", dir));
	tmpfs_statfs_line(8ull << 20, want, sizeof(want));
	th_fx_expect(f, 0, want);
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "fill", file, "16"));
	th_fx_expect(f, 1, "WROTE 8\nERR ENOSPC 28\n");
}

static void test_tmpfs_tmp_size(void **state)
{
	expect_tmpfs_limited(*state, "/tmp");
}

static void test_tmpfs_home_size(void **state)
{
	expect_tmpfs_limited(*state, "/home/agent");
}

static void test_tmpfs_shm_size(void **state)
{
	expect_tmpfs_limited(*state, "/dev/shm");
}

/* ---------------------------------------------------------------------------------------- */
/* /dev                                                                                     */

static void test_dev_contents(void **state)
{
	struct th_fx *f = *state;
	probe_expect(f, TH_CMD(TH_PROBE, "ls", "/dev"), 0,
		     "fd\nfull\nnull\nptmx\npts\nrandom\nshm\nstderr\nstdin\nstdout\ntty\n"
		     "urandom\nzero\n");
}

static void test_dev_null(void **state)
{
	struct th_fx *f = *state;
	probe_expect(f, TH_CMD(TH_PROBE, "stat", "/dev/null"), 0, NULL);
	char type[8] = "";
	unsigned mode = 0, maj = 0, min = 0;
	long long size = -1;
	if (sscanf(f->out.out, "OK %7s %*u %*u %o %lld %u:%u", type, &mode, &size, &maj,
		   &min) != 5) {
		th_show(&f->out);
		fail_msg("cannot parse the stat line");
	}
	assert_string_equal(type, "chr");
	assert_int_equal(mode, 0666);
	assert_int_equal(maj, 1);
	assert_int_equal(min, 3);
	probe_expect(f, TH_CMD(TH_PROBE, "openw", "/dev/null"), 0, "OK 3\n");
	probe_expect(f, TH_CMD(TH_PROBE, "write", "/dev/null"), 0, "OK 1\n");
}

static void test_dev_readonly(void **state)
{
	struct th_fx *f = *state;
	/* Control: the sandbox user can create files below /dev, on the /dev/shm tmpfs. */
	probe_expect(f, TH_CMD(TH_PROBE, "write", "/dev/shm/x"), 0, "OK 1\n");
	probe_expect(f, TH_CMD(TH_PROBE, "write", "/dev/x"), 1, "ERR EROFS 30\n");
	probe_expect(f, TH_CMD(TH_PROBE, "mkdir", "/dev/x"), 1, "ERR EROFS 30\n");
}

static void test_dev_host_devices_absent(void **state)
{
	struct th_fx *f = *state;
	static const char *const devs[] = { "/dev/mem", "/dev/kmsg", "/dev/sda", "/dev/vda",
					    "/dev/port", "/dev/console" };
	int on_host = 0;
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		struct stat st;
		on_host += lstat(devs[i], &st) == 0;
		probe_expect(f, TH_CMD(TH_PROBE, "stat", devs[i]), 1, "ERR ENOENT 2\n");
	}
	/* Control: at least one of them is there on the host. */
	assert_true(on_host >= 1);
}

/* ---------------------------------------------------------------------------------------- */
/* Host name and the sandbox user                                                           */

static void test_hostname_default(void **state)
{
	struct th_fx *f = *state;
	/* The node name, then an empty domain name. */
	probe_expect(f, TH_CMD(TH_PROBE, "hostname"), 0, "warden\n\n");
	probe_expect(f, TH_CMD(TH_PROBE, "cat", "/etc/hostname"), 0, "warden\n");
}

static void test_hostname_policy(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	th_policy(&f->ws, "hostname: box-42.test\n", pol);
	struct th_opts o = th_fx_opts(f, pol);
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "hostname"));
	th_fx_expect(f, 0, "box-42.test\n\n");
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "cat", "/etc/hostname"));
	th_fx_expect(f, 0, "box-42.test\n");
}

/* The /etc/passwd lines (in text) whose uid field is uid, joined by '\n' into out. */
static void passwd_lines_for(const char *text, const char *uid, char *out, size_t len)
{
	size_t off = 0;
	out[0] = '\0';
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t llen = nl ? (size_t)(nl - line) : strlen(line);
		const char *c1 = memchr(line, ':', llen);
		const char *c2 = c1 ? memchr(c1 + 1, ':', llen - (size_t)(c1 + 1 - line)) : NULL;
		const char *c3 = c2 ? memchr(c2 + 1, ':', llen - (size_t)(c2 + 1 - line)) : NULL;
		if (c3 && (size_t)(c3 - c2 - 1) == strlen(uid) &&
		    strncmp(c2 + 1, uid, strlen(uid)) == 0 && off < len)
			off += (size_t)snprintf(out + off, len - off, "%s%.*s", off ? "\n" : "",
						(int)llen, line);
		if (!nl)
			break;
		line = nl + 1;
	}
}

static void test_passwd_default_user(void **state)
{
	struct th_fx *f = *state;
	char lines[512];
	probe_expect(f, TH_CMD(TH_PROBE, "cat", "/etc/passwd"), 0, NULL);
	passwd_lines_for(f->out.out, "1000", lines, sizeof(lines));
	assert_string_equal(lines, "agent:x:1000:1000:agent:/home/agent:/bin/sh");
	/* Control of the parser: root's line is found the same way. */
	passwd_lines_for(f->out.out, "0", lines, sizeof(lines));
	assert_int_equal(strncmp(lines, "root:x:0:0:", 11), 0);
}

static void test_user_policy(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX], v[128], lines[512];
	th_policy(&f->ws, "user: { uid: 1500, gid: 1600, name: bob }\n", pol);
	struct th_opts o = th_fx_opts(f, pol);
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "status"));
	th_fx_expect(f, 0, NULL);
	assert_true(th_status_field(f->out.out, "Uid", v, sizeof(v)));
	assert_string_equal(v, "1500\t1500\t1500\t1500");
	assert_true(th_status_field(f->out.out, "Gid", v, sizeof(v)));
	assert_string_equal(v, "1600\t1600\t1600\t1600");

	th_fx_run(f, &o, TH_CMD(TH_PROBE, "env"));
	th_fx_expect(f, 0, NULL);
	if (!th_has_line(f->out.out, "HOME=/home/bob") || !th_has_line(f->out.out, "USER=bob") ||
	    !th_has_line(f->out.out, "LOGNAME=bob")) {
		th_show(&f->out);
		fail_msg("the environment does not name bob");
	}

	th_fx_run(f, &o, TH_CMD(TH_PROBE, "cat", "/etc/passwd"));
	th_fx_expect(f, 0, NULL);
	passwd_lines_for(f->out.out, "1500", lines, sizeof(lines));
	assert_string_equal(lines, "bob:x:1500:1600:bob:/home/bob:/bin/sh");
	passwd_lines_for(f->out.out, "1000", lines, sizeof(lines));
	assert_string_equal(lines, "");

	/* The home tmpfs belongs to bob. */
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "stat", "/home/bob"));
	if (strncmp(f->out.out, "OK dir 1500 1600 0700 ", 22) != 0) {
		th_show(&f->out);
		fail_msg("/home/bob is not bob's private directory");
	}
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "write", "/home/bob/x"));
	th_fx_expect(f, 0, "OK 1\n");
}

/* ---------------------------------------------------------------------------------------- */
/* Network: loopback only                                                                   */

/* The interface names of /proc/net/dev text, sorted by appearance, joined by ' '. */
static void proc_net_dev_names(const char *text, char *out, size_t len)
{
	size_t off = 0;
	out[0] = '\0';
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		const char *colon = strchr(line, ':');
		/* The two header lines have '|' and no ':'. */
		if (colon && (!nl || colon < nl)) {
			const char *s = line;
			while (*s == ' ')
				s++;
			if (off < len)
				off += (size_t)snprintf(out + off, len - off, "%s%.*s",
							off ? " " : "", (int)(colon - s), s);
		}
		if (!nl)
			break;
		line = nl + 1;
	}
}

static void test_net_only_lo(void **state)
{
	struct th_fx *f = *state;
	/* Control: run directly, the probe lists every host interface. */
	struct if_nameindex *host = if_nameindex();
	assert_non_null(host);
	int n_host = 0;
	for (struct if_nameindex *i = host; i->if_index; i++)
		n_host++;
	if_freenameindex(host);
	struct th_opts o = th_fx_opts(f, NULL);
	o.direct = true;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "ifaces"));
	th_fx_expect(f, 0, NULL);
	int n_direct = 0;
	for (const char *p = f->out.out; (p = strchr(p, '\n')); p++)
		n_direct++;
	assert_int_equal(n_direct, n_host);

	probe_expect(f, TH_CMD(TH_PROBE, "ifaces"), 0, "lo up\n");
	char names[256];
	probe_expect(f, TH_CMD(TH_PROBE, "cat", "/proc/net/dev"), 0, NULL);
	proc_net_dev_names(f->out.out, names, sizeof(names));
	assert_string_equal(names, "lo");
}

static void test_net_loopback_works(void **state)
{
	struct th_fx *f = *state;
	probe_expect(f, TH_CMD(TH_PROBE, "loopback"), 0, "OK 1\n");
}

/* ---------------------------------------------------------------------------------------- */
/* Concurrent sandboxes: one host id each, held by a lock file                              */

/* 1 when the lock file of id exists and is locked by someone else, 0 when absent, -1 else. */
static int id_lock_state(unsigned id)
{
	char p[PATH_MAX];
	th_pathf(p, "%s/%u", TH_IDS_DIR, id);
	int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	int r = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK ? 1 : -1;
	(void)close(fd);
	return r;
}

static void test_concurrent_host_ids(void **state)
{
	struct th_fx *f = *state;
	th_marker("ids", f->marker, sizeof(f->marker));
	char rec[2][PATH_MAX];
	struct th_proc p[2];
	struct th_out out[2];
	for (int i = 0; i < 2; i++) {
		th_aux_path(&f->ws, "record", rec[i]);
		struct th_opts o = th_fx_opts(f, NULL);
		o.record = rec[i];
		int r = th_spawn(&o, TH_CMD(TH_PROBE, "sleep", "30", f->marker), &p[i]);
		assert_int_equal(r, 0);
	}
	/* While both run: each probe's host uid, and the lock file of that id. */
	pid_t pids[4];
	int found = 0;
	for (int i = 0; i < 200 && found < 2; i++) {
		found = th_find_procs(f->marker, "probe", 0, pids, 4);
		if (found < 2)
			(void)usleep(20000);
	}
	unsigned uid[2] = { 0, 0 };
	int lock[2] = { -2, -2 };
	for (int i = 0; i < 2 && found == 2; i++) {
		char status[4096], v[128];
		if (th_proc_status(pids[i], status, sizeof(status)) &&
		    th_status_field(status, "Uid", v, sizeof(v)))
			uid[i] = (unsigned)strtoul(v, NULL, 10);
		lock[i] = id_lock_state(uid[i]);
	}
	/* End both commands (not the workers: each run must end normally). */
	for (int i = 0; i < 2 && found == 2; i++)
		(void)kill(pids[i], SIGKILL);
	if (found != 2)
		th_kill_procs(f->marker, 0);
	for (int i = 0; i < 2; i++)
		th_finish(&p[i], &out[i]);
	int gone[2] = { id_lock_state(uid[0]), id_lock_state(uid[1]) };
	for (int i = 0; i < 2; i++) {
		if (out[i].code != 128 + SIGKILL)
			print_error("run %d: exit %d\n%s%s", i, out[i].code, out[i].out,
				    out[i].err);
	}
	assert_int_equal(found, 2);
	assert_int_equal(out[0].code, 128 + SIGKILL);
	assert_int_equal(out[1].code, 128 + SIGKILL);
	th_out_done(&out[0]);
	th_out_done(&out[1]);

	double rec_uid[2];
	for (int i = 0; i < 2; i++) {
		cJSON *r = th_record_load(rec[i]);
		assert_string_equal(th_json_str(r, "exit.reason"), "signaled");
		rec_uid[i] = th_json_num(r, "sandbox.host_uid");
		assert_true(th_json_num(r, "sandbox.host_gid") == rec_uid[i]);
		cJSON_Delete(r);
		assert_true(rec_uid[i] >= TH_HOST_ID_BASE);
	}
	assert_true(rec_uid[0] != rec_uid[1]);
	/* The host uids seen on the probes are the recorded ones (in either order). */
	assert_true(uid[0] != uid[1]);
	assert_true(((double)uid[0] == rec_uid[0] && (double)uid[1] == rec_uid[1]) ||
		    ((double)uid[0] == rec_uid[1] && (double)uid[1] == rec_uid[0]));
	/* Held while running, unlinked by the holder on release. */
	assert_int_equal(lock[0], 1);
	assert_int_equal(lock[1], 1);
	assert_int_equal(gone[0], 0);
	assert_int_equal(gone[1], 0);
}

/* ---------------------------------------------------------------------------------------- */
/* The environment policy                                                                   */

static void test_env_policy(void **state)
{
	struct th_fx *f = *state;
	static const char *const host_env[] = { "MY_TOKEN=secret123", "OTHER_TOKEN=other456",
						"FOO=from-host", NULL };
	/* set replaces the default's list, pass too; set wins over pass for FOO. */
	static const char *const want[] = {
		"FOO=bar",	  "MY_TOKEN=secret123", "PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=/home/agent", "USER=agent",		"LOGNAME=agent",
		"TERM=dumb",	  "LANG=C.UTF-8",
	};
	char pol[PATH_MAX];
	th_policy(&f->ws, "env: { set: [FOO=bar], pass: [MY_TOKEN, FOO] }\n", pol);
	struct th_opts o = th_fx_opts(f, NULL);
	o.env = host_env;
	o.policy = pol;
	o.direct = true;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "env"));
	const bool control = th_has_line(f->out.out, "OTHER_TOKEN=other456") &&
			     th_has_line(f->out.out, "FOO=from-host");
	o.direct = false;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "env"));
	th_fx_expect(f, 0, NULL);
	assert_true(control);
	expect_env(f, want, sizeof(want) / sizeof(want[0]));
	int n = 0;
	for (const char *p = f->out.out; (p = strstr(p, "FOO=")); p++)
		n += p == f->out.out || p[-1] == '\n';
	assert_int_equal(n, 1);
}

/* ---------------------------------------------------------------------------------------- */
/* Limits counted in the record                                                             */

static void test_limit_fsize(void **state)
{
	struct th_fx *f = *state;
	/* Control: the default fsize (16 GiB) takes 2 MiB. */
	probe_expect(f, TH_CMD(TH_PROBE, "fill", "/workspace/big", "2"), 0, "WROTE 2\nOK 0\n");
	char pol[PATH_MAX], p[PATH_MAX];
	th_policy(&f->ws, "limits: { fsize: 1M }\n", pol);
	struct th_opts o = th_fx_opts(f, pol);
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "fill", "/workspace/big", "2"));
	/* The kernel raises SIGXFSZ (blocked by the probe) and the write fails with EFBIG. */
	th_fx_expect(f, 1, "WROTE 1\nSIGXFSZ\nERR EFBIG 27\n");
	struct stat st;
	th_ws_path(&f->ws, "big", p);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_size, 1 << 20);
}

static void test_limit_pids_record(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	th_policy(&f->ws, "limits: { pids: 32 }\n", pol);
	struct th_opts o = th_fx_opts(f, pol);
	/* forkbomb ends by SIGKILLing its process group, itself included. */
	th_fx_record_expect(f, &o, TH_CMD(TH_PROBE, "forkbomb", "200"), 128 + SIGKILL, NULL);
	expect_forked_under(f, 32);
	assert_true(th_json_num(f->record, "resources.pids_limit_hits") >= 1);
	assert_string_equal(th_json_str(f->record, "exit.reason"), "pids-limit");
	assert_int_equal((int)th_json_num(f->record, "exit.code"), 128 + SIGKILL);
	assert_int_equal((int)th_json_num(f->record, "exit.signal"), SIGKILL);
	assert_int_equal((int)th_json_num(f->record, "resources.oom_kills"), 0);
}

/* ---------------------------------------------------------------------------------------- */
/* Placeholders left by a SIGKILLed supervisor                                              */

static void test_stale_placeholders_collected(void **state)
{
	struct th_fx *f = *state;
	f->ws_mode = "direct"; /* the protect list is workspace mode direct's */
	/* Some of the placeholders: empty files, and empty directories (.git, HEAD, names
	 * ending in '/' in the protect list). */
	static const struct {
		const char *name;
		bool dir;
	} protected_top[] = {
		{ ".git", true },   { "HEAD", true },	{ ".gitmodules", false },
		{ ".envrc", false }, { ".vscode", true }, { ".idea", true },
		{ ".devcontainer", true },
	};
	struct th_proc p;
	int seen = spawn_sleeper(f, "stale", "30", &p);
	(void)kill(p.pid, SIGKILL); /* warden only; the sandbox dies with it */
	th_fx_finish(f, &p);
	int left = 1;
	for (int i = 0; i < 100 && left; i++) {
		left = th_count_procs(f->marker, NULL, 0);
		if (left)
			(void)usleep(20000);
	}
	assert_int_equal(seen, 1);
	assert_int_equal(f->out.code, 128 + SIGKILL);
	assert_int_equal(left, 0);
	/* Control: the killed supervisor could not clean up; its placeholders are there. */
	for (size_t i = 0; i < sizeof(protected_top) / sizeof(protected_top[0]); i++) {
		char path[PATH_MAX];
		struct stat st;
		th_ws_path(&f->ws, protected_top[i].name, path);
		if (lstat(path, &st) < 0)
			fail_msg("no placeholder %s after the SIGKILL", protected_top[i].name);
		if (protected_top[i].dir) {
			assert_true(S_ISDIR(st.st_mode));
			assert_int_equal(st.st_mode & 07777, 0555);
		} else {
			assert_true(S_ISREG(st.st_mode));
			assert_int_equal(st.st_size, 0);
			assert_int_equal(st.st_mode & 07777, 0444);
		}
	}

	probe_expect(f, TH_CMD(TH_PROBE, "exit", "0"), 0, "");
	th_expect_names(f->ws.dir, "probe\n");
}

/* ---------------------------------------------------------------------------------------- */
/* Commands: scripts, shells, interpreters, stdin                                           */

static void test_exec_script(void **state)
{
	struct th_fx *f = *state;
	char p[PATH_MAX];
	th_ws_write(&f->ws, "script", "#!/bin/sh\necho \"script $# $1\"\nexit 7\n");
	th_ws_path(&f->ws, "script", p);
	assert_int_equal(chmod(p, 0755), 0);
	probe_expect(f, TH_CMD("/workspace/script", "a b"), 7, "script 1 a b\n");
	probe_expect(f, TH_CMD("sh", "-c", "exit 5"), 5, "");
	if (access("/usr/bin/python3", X_OK) == 0)
		probe_expect(f, TH_CMD("/usr/bin/python3", "-c", "print(1)"), 0, "1\n");
	else
		print_message("no /usr/bin/python3 on the host: python line skipped\n");
}

static void test_stdin_passes_through(void **state)
{
	struct th_fx *f = *state;
	int pfd[2];
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	assert_int_equal(write(pfd[1], "hello\n", 6), 6);
	(void)close(pfd[1]);
	struct th_opts o = th_fx_opts(f, NULL);
	o.stdin_fd = pfd[0];
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "cat"));
	(void)close(pfd[0]);
	th_fx_expect(f, 0, "hello\n");
}

/* ---------------------------------------------------------------------------------------- */
/* The command line (#13): --help everywhere, one-line usage errors, permutation            */

/*
 * Every command's --help (and -h): its help on stdout, status 0, nothing on stderr, and
 * nothing run. `policy check --help` once opened a file named --help.
 */
static void test_cli_help_everywhere(void **state)
{
	struct th_fx *f = *state;
	static const char *const lines[][5] = {
		{ "--help" }, { "-h" }, { "help" },
		{ "run", "--help" }, { "run", "-h" }, { "run", "-q", "--help" },
		{ "policy", "--help" }, { "policy", "show", "--help" },
		{ "policy", "check", "--help" }, { "policy", "seccomp", "--help" },
		{ "audit", "--help" }, { "doctor", "--help" },
		{ "check", "--help" }, { "eval", "--help" }, { "grade", "--help" },
		{ "changes", "--help" }, { "diff", "--help" }, { "apply", "--help" },
		{ "discard", "--help" }, { "diff", "ID", "-h" }, { "eval", "TASK", "--help" },
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct th_opts o = { .subcommand = lines[i][0], .cwd = f->ws.aux };
		th_fx_run(f, &o, &lines[i][1]);
		if (f->out.code != 0 || strncmp(f->out.out, "Usage: warden", 13) != 0 ||
		    f->out.err_len != 0) {
			th_show_named(lines[i][0], &f->out);
			fail_msg("warden %s %s: not its help with status 0", lines[i][0],
				 lines[i][1] ? lines[i][1] : "");
		}
	}
	th_expect_names(f->ws.aux, "");
}

/*
 * A usage error is one line naming the command and pointing at its --help, with the
 * family's status (run 125, the others 2), and nothing on stdout.
 */
static void test_cli_usage_one_line(void **state)
{
	struct th_fx *f = *state;
	static const struct {
		const char *line[6];
		int code;
		const char *err;
	} cases[] = {
		{ { "run", "--bogus", "true" }, 125, "run: unknown option '--bogus'" },
		{ { "run" }, 125, "run: missing CMD" },
		{ { "run", "--timeout", "x", "true" }, 125, "run: --timeout: 'x' is not" },
		{ { "policy" }, 2, "policy: missing subcommand" },
		{ { "policy", "nope" }, 2, "policy: unknown subcommand 'nope'" },
		{ { "policy", "check" }, 2, "policy check: missing FILE" },
		{ { "audit", "--bogus" }, 2, "audit: unknown option '--bogus'" },
		{ { "doctor", "extra" }, 2, "doctor: unexpected argument 'extra'" },
		{ { "check" }, 2, "check: missing TASK.yaml" },
		{ { "eval", "--jobs", "0", "t.yaml" }, 2, "eval: --jobs '0' is not a number" },
		{ { "grade", "--task" }, 2, "grade: option '--task' needs a value" },
		{ { "diff" }, 2, "diff: missing ID" },
		{ { "apply", "ID", "--include", "/abs" }, 2, "apply: --include '/abs'" },
		{ { "discard", "a", "b" }, 2, "discard: unexpected argument 'b'" },
		{ { "changes", "--json=1" }, 2, "changes: option '--json' takes no value" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct th_opts o = { .subcommand = cases[i].line[0], .cwd = f->ws.aux };
		th_fx_run(f, &o, &cases[i].line[1]);
		const char *nl = strchr(f->out.err, '\n');
		char want[256];
		(void)snprintf(want, sizeof(want), "(see 'warden %s", cases[i].line[0]);
		if (f->out.code != cases[i].code || f->out.out_len != 0 || !nl || nl[1] ||
		    !strstr(f->out.err, cases[i].err) || !strstr(f->out.err, want)) {
			th_show_named(cases[i].line[0], &f->out);
			fail_msg("case %zu: want status %d and one line with '%s'", i, cases[i].code,
				 cases[i].err);
		}
	}
}

/*
 * GNU permutation: `warden eval TASK --out DIR` takes --out as the option it is; it was read
 * as a second task file. run alone keeps its options before the command: there, what follows
 * the command is the command's own.
 */
static void test_cli_permutation(void **state)
{
	struct th_fx *f = *state;
	char task[PATH_MAX], out[PATH_MAX];
	th_aux_path(&f->ws, "task.yaml", task);
	th_aux_path(&f->ws, "out", out);
	th_put_file(task, "schema_version: 1\n"
			  "task_id: permute\n"
			  "agent: { run: [sh, -c, \"echo ok > out.txt\"] }\n"
			  "criteria:\n"
			  "  - description: the agent wrote out.txt\n"
			  "    file_contains: { path: out.txt, includes: [ok] }\n");
	struct th_opts o = { .subcommand = "eval", .cwd = f->ws.aux, .hard_timeout_ms = 120000 };
	th_fx_run(f, &o, TH_CMD(task, "--out", out, "--json"));
	th_fx_expect(f, 0, NULL);
	size_t n = 0;
	char *names = th_list_dir(out, &n);
	assert_non_null(names);
	if (n != 1 || strncmp(names, "permute-", 8) != 0)
		fail_msg("runs in %s: '%s'", out, names);
	free(names);
	/* Nothing went to the default ./runs, and no task named "--out" was tried. */
	char runs[PATH_MAX];
	th_pathf(runs, "%s/runs", f->ws.aux);
	assert_int_equal(access(runs, F_OK), -1);
	assert_null(strstr(f->out.err, "--out"));

	/* check and policy check take their options after the file too. */
	o = (struct th_opts){ .subcommand = "check", .cwd = f->ws.aux };
	th_fx_run(f, &o, TH_CMD(task, "--json"));
	th_fx_expect(f, 0, NULL);
	assert_non_null(strstr(f->out.out, "\"task_id\""));

	/* run: a --help after the command is the command's argument, not warden's. */
	o = th_fx_opts(f, NULL);
	th_fx_run_expect(f, &o, TH_CMD("sh", "-c", "echo \"$1\"", "sh", "--help"), 0, "--help\n");
}

/* A test named after its function, without the "test_" prefix. */
#define T(fn) { &#fn[5], fn, th_fx_setup_root, th_fx_teardown, NULL }
#define SYSCALL(n, e) { "syscall_" n, test_forbidden_syscall, th_fx_setup_root, th_fx_teardown, \
			&(struct syscall_case){ n, e } }
#define EPERM_ "ERR EPERM 1\n"

int main(void)
{
	th_require_privileged();

	const struct CMUnitTest tests[] = {
		T(test_identity_status),
		T(test_identity_record),
		T(test_host_root_hidden),
		T(test_host_home_hidden),
		T(test_host_files_hidden),
		T(test_etc_shadow_hidden),
		T(test_sys_absent),
		T(test_usr_readonly),
		T(test_etc_passwd_readonly),
		T(test_root_readonly),
		T(test_proc_sys_readonly),
		T(test_proc_sysrq_masked),
		T(test_proc_dirs_masked),
		T(test_proc_sensitive_masked),
		T(test_ws_files_owned_by_ws_owner),
		T(test_ws_root_owned_files),
		T(test_ws_never_chowned),
		T(test_ws_default_is_cwd),
		T(test_protect_git_hooks),
		T(test_protect_git_config),
		T(test_protect_git_rename),
		T(test_git_all_read_only),
		T(test_protect_envrc_create),
		T(test_no_placeholder_left),
		T(test_net_host_tcp_unreachable),
		T(test_net_host_udp_unreachable),
		T(test_net_packet_socket),
		T(test_pids_only_sandbox),
		T(test_kill_host_pids),
		T(test_kill_init_ignored),
		SYSCALL("ptrace", EPERM_),
		SYSCALL("mount", EPERM_),
		SYSCALL("unshare-user", EPERM_),
		SYSCALL("unshare-net", EPERM_),
		SYSCALL("clone-newuser", EPERM_),
		SYSCALL("chroot", EPERM_),
		SYSCALL("pivot_root", EPERM_),
		SYSCALL("setns", EPERM_),
		SYSCALL("bpf", EPERM_),
		SYSCALL("perf_event_open", EPERM_),
		SYSCALL("keyctl", EPERM_),
		SYSCALL("userfaultfd", EPERM_),
		SYSCALL("io_uring_setup", EPERM_),
		SYSCALL("kexec_load", EPERM_),
		SYSCALL("init_module", EPERM_),
		SYSCALL("reboot", EPERM_),
		SYSCALL("swapon", EPERM_),
		SYSCALL("acct", EPERM_),
		SYSCALL("settimeofday", EPERM_),
		SYSCALL("open_by_handle_at", EPERM_),
		SYSCALL("mknod", EPERM_),
		SYSCALL("clone3", "ERR ENOSYS 38\n"),
		T(test_tiocsti_pty),
		T(test_tiocsti_devnull),
		T(test_limit_pids),
		T(test_limit_memory),
		T(test_limit_nofile),
		T(test_wall_timeout),
		T(test_exit_status),
		T(test_exit_signal),
		T(test_exit_not_found),
		T(test_exit_not_executable),
		T(test_exit_bad_policy),
		T(test_fds_closed),
		T(test_env_clean),
		T(test_daemon_dies_with_run),
		T(test_supervisor_killed),
		T(test_record_valid),
		T(test_record_symlink_dir_refused),
		T(test_record_symlink_file_refused),
		T(test_doctor_root),
		T(test_tmpfs_tmp_size),
		T(test_tmpfs_home_size),
		T(test_tmpfs_shm_size),
		T(test_dev_contents),
		T(test_dev_null),
		T(test_dev_readonly),
		T(test_dev_host_devices_absent),
		T(test_hostname_default),
		T(test_hostname_policy),
		T(test_passwd_default_user),
		T(test_user_policy),
		T(test_net_only_lo),
		T(test_net_loopback_works),
		T(test_concurrent_host_ids),
		T(test_env_policy),
		T(test_limit_fsize),
		T(test_limit_pids_record),
		T(test_stale_placeholders_collected),
		T(test_exec_script),
		T(test_stdin_passes_through),
		T(test_cli_help_everywhere),
		T(test_cli_usage_one_line),
		T(test_cli_permutation),
	};
	return _cmocka_run_group_tests("priv-run", tests, sizeof(tests) / sizeof(tests[0]), NULL,
				       NULL);
}
