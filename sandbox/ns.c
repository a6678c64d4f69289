/* SPDX-License-Identifier: MIT */
/*
 * Namespaces, id maps and the child's setup sequence.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "cleanup.h"
#include "io-util.h"
#include "policy.h"
#include "sandbox.h"

/*
 * The namespaces the child is cloned into: user, pid and mount always (the policy parser
 * refuses to turn them off); net, uts and ipc unless the policy shares them with the host.
 * The cgroup namespace comes later, once the child sits in its cgroup.
 */
static unsigned long clone_ns_flags(const struct pol_policy *pol)
{
	unsigned long flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS;
	if (pol->namespaces[POL_NS_NET])
		flags |= CLONE_NEWNET;
	if (pol->namespaces[POL_NS_UTS])
		flags |= CLONE_NEWUTS;
	if (pol->namespaces[POL_NS_IPC])
		flags |= CLONE_NEWIPC;
	return flags;
}

/* The byte the parent sends once the id maps are written (and the cgroup, if it moved us). */
#define SBX_SYNC_GO 'G'

/*
 * clone3 with a pidfd, into_cgroup >= 0 adding CLONE_INTO_CGROUP. Falls back to the legacy
 * clone (no clone3) and reports whether the child was born in the cgroup.
 */
static pid_t clone_child(const struct pol_policy *pol, int into_cgroup, int *out_pidfd,
			 bool *out_born_in)
{
	int pidfd = -1;
	unsigned long ns = clone_ns_flags(pol);
	struct clone_args args = {
		.flags = ns | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		.exit_signal = SIGCHLD,
	};
	if (into_cgroup >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)into_cgroup;
	}
	long pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0 && into_cgroup >= 0 && (errno == E2BIG || errno == EINVAL)) {
		/* Linux 5.3 to 5.6: clone3 without CLONE_INTO_CGROUP (or its larger struct). */
		args.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
		args.cgroup = 0;
		into_cgroup = -1;
		pid = syscall(SYS_clone3, &args, CLONE_ARGS_SIZE_VER0);
	}
	if (pid < 0 && errno == ENOSYS) {
		/* Before clone3: the legacy clone returns the pidfd through parent_tid. */
		into_cgroup = -1;
		pid = syscall(SYS_clone, ns | CLONE_PIDFD | SIGCHLD,
			      NULL, &pidfd, NULL, 0);
	}
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		*out_pidfd = pidfd;
		*out_born_in = into_cgroup >= 0;
	}
	return (pid_t)pid;
}

/* Whether the child joins its v1 cgroup itself (it holds a "tasks" fd). */
static bool joins_v1(const struct sbx_cg_join *j)
{
	for (int i = 0; j && i < SBX_CG_N; i++)
		if (j->tasks_fd[i] >= 0)
			return true;
	return false;
}

int sbx_spawn(const struct sbx_config *cfg, pid_t *out_pid, int *out_pidfd, bool *out_joined)
{
	int pidfd = -1;
	bool born_in = false;
	int into = cfg->cg_join ? cfg->cg_join->clone_fd : -1;
	pid_t pid = clone_child(cfg->pol, into, &pidfd, &born_in);
	if (pid < 0)
		return pid;
	if (pid == 0)
		sbx_child_main(cfg);
	/* pidfds from clone are always close-on-exec. */
	*out_pid = pid;
	*out_pidfd = pidfd;
	*out_joined = born_in || joins_v1(cfg->cg_join);
	return 0;
}

static int write_proc_file(pid_t pid, const char *name, const char *text)
{
	char path[64];
	(void)snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	return io_write_file_at(AT_FDCWD, path, 0, 0, text);
}

int sbx_write_id_maps(const struct sbx_config *cfg, pid_t pid)
{
	char line[64];
	int r;

	/*
	 * Unprivileged: the kernel requires setgroups to be denied before an unprivileged
	 * process may write gid_map. Privileged: keep it allowed so the child can clear the
	 * supplementary groups it inherited from root, which would otherwise stay in effect on
	 * host files.
	 */
	if (!cfg->privileged) {
		r = write_proc_file(pid, "setgroups", "deny");
		if (r < 0)
			return r;
	}
	(void)snprintf(line, sizeof(line), "%u %u 1\n", cfg->pol->uid, cfg->host_uid);
	r = write_proc_file(pid, "uid_map", line);
	if (r < 0)
		return r;
	(void)snprintf(line, sizeof(line), "%u %u 1\n", cfg->pol->gid, cfg->host_gid);
	return write_proc_file(pid, "gid_map", line);
}

int sbx_release_child(int sync_fd, struct fail *f)
{
	char go = SBX_SYNC_GO;
	ssize_t n;

	do
		n = send(sync_fd, &go, 1, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return fail_set(f, -errno, "sandbox setup failed");

	/* The child's own report, made before it ran anything but warden's code. */
	struct fail child;
	memset(&child, 0, sizeof(child));
	do
		n = recv(sync_fd, &child, sizeof(child), MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return fail_set(f, -errno, "sandbox setup failed");
	if (n == 0)
		return 0; /* end of file: the child exec'd, which closed its end */
	if ((size_t)n != sizeof(child) || child.err >= 0)
		return fail_set(f, -EBADMSG, "sandbox setup failed");
	child.what[sizeof(child.what) - 1] = '\0';
	return fail_set(f, child.err, "sandbox setup failed: %s", child.what);
}

/* Child side ---------------------------------------------------------------------------- */

/* Reports f (its err made negative) to the supervisor and ends the child. */
_Noreturn static void child_fail_with(int sync_fd, const struct fail *f)
{
	struct fail msg;
	memset(&msg, 0, sizeof(msg));
	msg.err = f->err < 0 ? f->err : -EIO;
	(void)snprintf(msg.what, sizeof(msg.what), "%s", f->what);
	(void)send(sync_fd, &msg, sizeof(msg), MSG_NOSIGNAL);
	_exit(125);
}

_Noreturn static void child_fail(int sync_fd, int err, const char *step)
{
	struct fail f;
	(void)fail_set(&f, err, "%s", step);
	child_fail_with(sync_fd, &f);
}

static int wait_for_go(int sync_fd)
{
	char go = 0;
	ssize_t n;
	do
		n = recv(sync_fd, &go, 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n != 1 || go != SBX_SYNC_GO)
		return -ECONNABORTED;
	return 0;
}

static int become_sandbox_user(const struct sbx_config *cfg)
{
	/*
	 * Privileged mode: the child still carries root's supplementary groups; drop them, or
	 * group 0 would keep working on host files. Unprivileged mode: setgroups is denied by
	 * the kernel and the caller's own groups stay; that is a documented limit.
	 */
	if (cfg->privileged && setgroups(0, NULL) < 0)
		return -errno;
	if (setresgid(cfg->pol->gid, cfg->pol->gid, cfg->pol->gid) < 0)
		return -errno;
	/*
	 * uid 0 is not mapped in this user namespace, so changing uids does not clear the
	 * capabilities this process holds in it; they are dropped explicitly later.
	 */
	if (setresuid(cfg->pol->uid, cfg->pol->uid, cfg->pol->uid) < 0)
		return -errno;
	return 0;
}

static int set_rlimit(int resource, uint64_t value)
{
	struct rlimit rl = { .rlim_cur = (rlim_t)value, .rlim_max = (rlim_t)value };
	if (setrlimit(resource, &rl) < 0)
		return -errno;
	return 0;
}

static int apply_rlimits(const struct pol_policy *pol, bool cgroup)
{
	int r = set_rlimit(RLIMIT_CORE, 0);
	if (r < 0)
		return r;
	r = set_rlimit(RLIMIT_NOFILE, pol->nofile);
	if (r < 0)
		return r;
	/*
	 * nproc 0 with a cgroup: twice its pids limit, so that the cgroup refuses every fork
	 * that is refused and pids.events counts it. A fork is charged to RLIMIT_NPROC at its
	 * start and to the pids controller near its end, so a fork bomb's forks in flight
	 * (at most one per task, and the cgroup holds at most pids tasks) count only there; at
	 * pids + 1 they made the rlimit refuse first, unseen. Without a cgroup the rlimit is
	 * the limit: pids + 1, the worker counting too.
	 */
	uint64_t nproc = pol->nproc ? pol->nproc : cgroup ? pol->pids * 2 : pol->pids + 1;
	r = set_rlimit(RLIMIT_NPROC, nproc);
	if (r < 0)
		return r;
	return set_rlimit(RLIMIT_FSIZE, pol->fsize_bytes);
}

/* Moves fd to number target without close-on-exec; closes the original. */
static int move_fd(int fd, int target)
{
	if (fd == target) {
		int flags = fcntl(fd, F_GETFD);
		if (flags < 0 || fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) < 0)
			return -errno;
		return 0;
	}
	if (dup3(fd, target, 0) < 0)
		return -errno;
	(void)close(fd);
	return 0;
}

/*
 * The channel to fd 3 and, where the supervisor gave them, the standard streams to 0, 1 and
 * 2. Each source is first copied above every target, so that no move can overwrite a source
 * still waiting for its turn, whatever numbers the sources had.
 */
static int place_fds(const struct sbx_config *cfg)
{
	int src[4] = { cfg->stdio_fds[0], cfg->stdio_fds[1], cfg->stdio_fds[2], cfg->channel_fd };
	bool any_stdio = src[0] >= 0 || src[1] >= 0 || src[2] >= 0;
	if (!any_stdio)
		return move_fd(cfg->channel_fd, SBX_CHANNEL_FD);
	int high[4] = { -1, -1, -1, -1 };
	for (int i = 0; i < 4; i++) {
		if (src[i] < 0)
			continue;
		high[i] = fcntl(src[i], F_DUPFD_CLOEXEC, SBX_CHANNEL_FD + 1);
		if (high[i] < 0)
			return -errno;
	}
	for (int i = 0; i < 4; i++) {
		if (high[i] < 0)
			continue;
		int r = move_fd(high[i], i < 3 ? i : SBX_CHANNEL_FD);
		if (r < 0)
			return r;
	}
	return 0;
}

_Noreturn void sbx_child_main(const struct sbx_config *cfg)
{
	struct fail f;
	fail_init(&f);
	int sync_fd = cfg->sync_fd;
	int r;

	/* v1: join the cgroup before anything else, while the supervisor writes the id maps. */
	if (joins_v1(cfg->cg_join)) {
		r = sbx_cgroup_join_self(cfg->cg_join);
		if (r < 0)
			child_fail(sync_fd, r, "join the sandbox's cgroup");
	}

	r = wait_for_go(sync_fd);
	if (r < 0)
		child_fail(sync_fd, r, "wait for the supervisor");

	/* We sit in our cgroup: make it the root of our view. */
	if (cfg->pol->namespaces[POL_NS_CGROUP] && unshare(CLONE_NEWCGROUP) < 0)
		child_fail(sync_fd, -errno, "unshare the cgroup namespace");

	/* Host sources are captured with our original credentials, before the uid switch. */
	r = sbx_mount_capture(cfg, &f);
	if (r < 0)
		child_fail_with(sync_fd, &f);

	r = become_sandbox_user(cfg);
	if (r < 0)
		child_fail(sync_fd, r, "switch to the sandbox user");

	/* commit_creds() clears the parent-death signal; set it after the id change. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(sync_fd, -errno, "set the parent-death signal");

	if (cfg->pol->namespaces[POL_NS_UTS]) {
		if (sethostname(cfg->pol->hostname, strlen(cfg->pol->hostname)) < 0)
			child_fail(sync_fd, -errno, "set the hostname");
		if (setdomainname("", 0) < 0)
			child_fail(sync_fd, -errno, "set the domain name");
	}

	if (cfg->pol->namespaces[POL_NS_NET]) {
		r = sbx_net_lo_up();
		if (r < 0)
			child_fail(sync_fd, r, "bring up lo in the network namespace");
	}

	r = sbx_mount_setup(cfg, &f);
	if (r < 0)
		child_fail_with(sync_fd, &f);

	r = apply_rlimits(cfg->pol, cfg->cg_join != NULL);
	if (r < 0)
		child_fail(sync_fd, r, "set resource limits");

	/* The channel becomes fd 3; everything else above 2 is closed when the worker starts. */
	r = place_fds(cfg);
	if (r < 0)
		child_fail(sync_fd, r, "move the channel to fd 3 and the standard streams to 0-2");
	if (syscall(SYS_close_range, SBX_CHANNEL_FD + 1, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		child_fail(sync_fd, -errno, "mark descriptors close-on-exec");

	if (sigprocmask(SIG_SETMASK, cfg->old_mask, NULL) < 0)
		child_fail(sync_fd, -errno, "restore the signal mask");

	r = sbx_caps_drop(cfg->caps_keep, &f);
	if (r < 0)
		child_fail_with(sync_fd, &f);

	/*
	 * The filter goes in last: from here only allowlisted syscalls work, and the next one is
	 * the exec of the worker through an fd opened before the sandbox existed.
	 */
	r = sbx_seccomp_install(cfg->seccomp);
	if (r < 0)
		child_fail(sync_fd, r, "install the seccomp filter");

	(void)syscall(SYS_execveat, cfg->worker_fd, "", cfg->worker_argv, cfg->envp,
		      AT_EMPTY_PATH);
	child_fail(sync_fd, -errno, "exec the worker");
}
