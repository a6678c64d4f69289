/* SPDX-License-Identifier: MIT */
/*
 * Host feature probes. Each one tries the real thing in a way that leaves nothing behind:
 * namespaces are made by short-lived children, a probe cgroup is removed at once, fds are
 * closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "cleanup.h"
#include "io-util.h"
#include "host.h"
#include "policy.h"
#include "sandbox.h"

#define PROBE_UID 65534u

static long read_sysctl(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	long v;
	if (!f || fscanf(f, "%ld", &v) != 1)
		return -1;
	return v;
}

/* Runs fn in a forked child and returns what it reported (0 or -errno), with its step text. */
static int in_child(int (*fn)(int report_fd), char *step, size_t step_len)
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
	if (pid == 0) {
		(void)close(p[0]);
		_exit(fn(p[1]) == 0 ? 0 : 1);
	}
	(void)close(p[1]);
	/* The child's report, a struct fail of one write (below PIPE_BUF, so whole or none). */
	struct fail msg;
	memset(&msg, 0, sizeof(msg));
	int r = io_read_exact(p[0], &msg, sizeof(msg));
	(void)close(p[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r < 0)
		return -EIO;
	msg.what[sizeof(msg.what) - 1] = '\0';
	if (step && step_len) {
		/* A step's name is short; the field is cut to fit, at worst. */
		size_t n = strnlen(msg.what, step_len - 1);
		memcpy(step, msg.what, n);
		step[n] = '\0';
	}
	return msg.err;
}

/* The child's side: err (0 or -errno) and the step that failed, to the parent. Returns err. */
static int report(int fd, int err, const char *step)
{
	struct fail msg;
	memset(&msg, 0, sizeof(msg));
	(void)fail_set(&msg, err, "%s", step);
	(void)io_write_all(fd, &msg, sizeof(msg));
	return err;
}

static int write_self(const char *file, const char *text)
{
	char path[64];
	(void)snprintf(path, sizeof(path), "/proc/self/%s", file);
	return io_write_file_at(AT_FDCWD, path, 0, 0, text);
}

/* As an unprivileged uid: create a user namespace and map ourselves, as warden would. */
static int probe_unpriv_userns(int fd)
{
	if (getuid() == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(PROBE_UID, PROBE_UID, PROBE_UID) < 0 ||
		    setresuid(PROBE_UID, PROBE_UID, PROBE_UID) < 0)
			return report(fd, -errno, "drop to an unprivileged uid");
		/* The uid change made us non-dumpable, which would keep /proc/self root's. */
		if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
			return report(fd, -errno, "become dumpable again");
	}
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();
	if (unshare(CLONE_NEWUSER) < 0)
		return report(fd, -errno, "create a user namespace");
	int r = write_self("setgroups", "deny");
	if (r < 0)
		return report(fd, r, "deny setgroups");
	(void)snprintf(map, sizeof(map), "1000 %u 1\n", (unsigned)uid);
	r = write_self("uid_map", map);
	if (r < 0)
		return report(fd, r, "set up the uid map");
	(void)snprintf(map, sizeof(map), "1000 %u 1\n", (unsigned)gid);
	r = write_self("gid_map", map);
	if (r < 0)
		return report(fd, r, "set up the gid map");
	/* The AppArmor restriction leaves the namespace without capabilities. */
	if (unshare(CLONE_NEWNS) < 0)
		return report(fd, -errno, "create a mount namespace inside it");
	return report(fd, 0, "");
}

/* As root: a user namespace whose id maps the parent writes, to an arbitrary host id. */
static int probe_root_userns(void)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL,
				   NULL, 0);
	if (pid < 0) {
		int r = -errno;
		(void)close(p[0]);
		(void)close(p[1]);
		return r;
	}
	if (pid == 0) {
		char c;
		(void)close(p[1]);
		(void)!read(p[0], &c, 1);
		_exit(0);
	}
	(void)close(p[0]);
	char path[64], map[64];
	(void)snprintf(map, sizeof(map), "1000 %u 1\n", PROBE_UID);
	int r = 0;
	const char *files[] = { "uid_map", "gid_map" };
	for (int i = 0; i < 2 && r >= 0; i++) {
		(void)snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, files[i]);
		r = io_write_file_at(AT_FDCWD, path, 0, 0, map);
	}
	(void)close(p[1]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return r;
}

static int probe_seccomp(int fd)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = 1, .filter = &allow };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return report(fd, -errno, "set no_new_privs");
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return report(fd, -errno, "install a filter");
	return report(fd, 0, "");
}

static int present(long r)
{
	return r < 0 && errno == ENOSYS ? -ENOSYS : 0;
}

static void probe_syscalls(struct sbx_host_facts *out)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	out->landlock_abi = abi >= 0 ? (int)abi : -errno;

	int dir = io_openat2(AT_FDCWD, "/", O_PATH, RESOLVE_NO_SYMLINKS);
	out->openat2 = dir >= 0 ? 0 : dir;
	if (dir >= 0)
		(void)close(dir);

	out->close_range = present(syscall(SYS_close_range, INT_MAX - 1, INT_MAX, 0));
	long fd = syscall(SYS_pidfd_open, getpid(), 0);
	out->pidfd = fd >= 0 ? 0 : -errno;
	if (fd >= 0)
		(void)close((int)fd);
	out->clone3 = present(syscall(SYS_clone3, NULL, 0));
	out->mount_api = present(syscall(SYS_mount_setattr, -1, "", 0, NULL, 0));
	if (!out->mount_api)
		out->mount_api = present(syscall(SYS_open_tree, -1, "", 0));
}

static void read_sysctls(struct sbx_host_facts *out)
{
	out->apparmor_restrict =
		(int)read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	out->unpriv_userns_clone = (int)read_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
	out->max_user_namespaces = read_sysctl("/proc/sys/user/max_user_namespaces");
}

static int cgroup_version_mounted(void)
{
	struct stat st;
	return stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0 ? 2
	       : stat("/sys/fs/cgroup/memory", &st) == 0	    ? 1
								    : 0;
}

void sbx_host_probe_cheap(struct sbx_host_facts *out)
{
	memset(out, 0, sizeof(*out));
	read_sysctls(out);
	out->userns_root = out->userns_unpriv = out->cgroup_create = -EAGAIN;
	out->seccomp_filter = out->idmap_mounts = -EAGAIN;
	out->cgroup_version = cgroup_version_mounted();
	probe_syscalls(out);
}

void sbx_host_probe(const struct pol_policy *pol, bool privileged, const char *probe_dir,
		    struct sbx_host_facts *out)
{
	memset(out, 0, sizeof(*out));
	read_sysctls(out);

	out->userns_root = privileged ? probe_root_userns() : -EPERM;
	out->userns_unpriv = in_child(probe_unpriv_userns, out->userns_unpriv_step,
				      sizeof(out->userns_unpriv_step));

	struct sbx_cgroup cg;
	sbx_cgroup_init(&cg);
	char name[64];
	(void)snprintf(name, sizeof(name), "warden-%d-doctor", (int)getpid());
	const char *what = "";
	out->cgroup_create = sbx_cgroup_create(&cg, name, pol, &what);
	out->cgroup_version = cg.version;
	if (out->cgroup_create < 0)
		(void)snprintf(out->cgroup_step, sizeof(out->cgroup_step), "%s", what);
	(void)sbx_cgroup_destroy(&cg);
	if (!out->cgroup_version)
		out->cgroup_version = cgroup_version_mounted();

	out->seccomp_filter = in_child(probe_seccomp, NULL, 0);
	probe_syscalls(out);

	out->idmap_mounts = -EPERM;
	if (privileged) {
		_cleanup_close_ int dir = open(probe_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct stat st;
		if (dir < 0 || fstat(dir, &st) < 0) {
			out->idmap_mounts = -errno;
		} else {
			int tree = sbx_idmap_workspace(dir, st.st_uid, st.st_gid, PROBE_UID, PROBE_UID);
			out->idmap_mounts = tree < 0 ? tree : 0;
			if (tree >= 0)
				(void)close(tree);
		}
	}
}
