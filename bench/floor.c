/* SPDX-License-Identifier: MIT */
/*
 * bench-floor: the least a namespace sandbox launcher can do, as a floor to measure warden
 * and bubblewrap against. It is a benchmark, not a sandbox: no seccomp, no capability drop,
 * no new root, no cgroup.
 *
 *   bench-floor CMD [ARGS...]
 *
 * One clone() with new user, pid, mount, net, uts, ipc and cgroup namespaces. The parent
 * writes setgroups "deny", then uid_map and gid_map (uid and gid 0 inside map to the
 * caller's own ids, as `unshare -r` does), and lets the child go by closing a pipe. The
 * child, pid 1 of its namespace, makes every mount private, mounts a fresh proc on /proc
 * (nosuid, nodev, noexec; bubblewrap's --proc mounts one too) and execs CMD. The parent
 * waits and exits with the child's status (128+N for signal N).
 *
 * bench/meson.build builds it twice: bench-floor (dynamic) and bench-floor-static
 * (-static-pie), so the cost of the dynamic loader in the launcher itself can be seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define FLOOR_NS_FLAGS                                                                    \
	(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWUTS |       \
	 CLONE_NEWIPC | CLONE_NEWCGROUP)

/* The exit code for a failure of the launcher itself, as env(1) and timeout(1) use. */
#define FLOOR_EXIT_FAIL 125

static int write_proc_file(pid_t pid, const char *name, const char *text)
{
	char path[64];
	(void)snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	ssize_t n = write(fd, text, len);
	int r = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
	(void)close(fd);
	return r;
}

static int write_maps(pid_t pid)
{
	char line[64];
	int r = write_proc_file(pid, "setgroups", "deny");
	if (r < 0)
		return r;
	(void)snprintf(line, sizeof(line), "0 %u 1\n", (unsigned)getuid());
	r = write_proc_file(pid, "uid_map", line);
	if (r < 0)
		return r;
	(void)snprintf(line, sizeof(line), "0 %u 1\n", (unsigned)getgid());
	return write_proc_file(pid, "gid_map", line);
}

_Noreturn static void child_main(int go_fd, char **argv)
{
	/* Wait for the maps: the parent closes its end of the pipe once they are written. */
	char c;
	ssize_t n;
	do
		n = read(go_fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 0) {
		/* The parent failed and said so with a byte, or read failed. */
		_exit(FLOOR_EXIT_FAIL);
	}
	(void)close(go_fd);

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("bench-floor: make / private");
		_exit(FLOOR_EXIT_FAIL);
	}
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		perror("bench-floor: mount /proc");
		_exit(FLOOR_EXIT_FAIL);
	}
	execvp(argv[0], argv);
	fprintf(stderr, "bench-floor: exec %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0) {
		fprintf(stderr, "usage: %s CMD [ARGS...]\n", argv[0]);
		return argc < 2 ? FLOOR_EXIT_FAIL : 0;
	}
	int go[2];
	if (pipe2(go, O_CLOEXEC) < 0) {
		perror("bench-floor: pipe");
		return FLOOR_EXIT_FAIL;
	}

	/* A fork-like clone: no separate stack, the child continues here with a return of 0. */
	long pid = syscall(SYS_clone, (unsigned long)(FLOOR_NS_FLAGS | SIGCHLD), NULL, NULL,
			   NULL, NULL);
	if (pid < 0) {
		perror("bench-floor: clone");
		return FLOOR_EXIT_FAIL;
	}
	if (pid == 0) {
		(void)close(go[1]);
		child_main(go[0], argv + 1);
	}
	(void)close(go[0]);

	int r = write_maps((pid_t)pid);
	if (r < 0) {
		fprintf(stderr, "bench-floor: write the id maps: %s\n", strerror(-r));
		(void)!write(go[1], "x", 1);
	}
	(void)close(go[1]);

	int status;
	while (waitpid((pid_t)pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("bench-floor: waitpid");
			return FLOOR_EXIT_FAIL;
		}
	}
	if (r < 0)
		return FLOOR_EXIT_FAIL;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
