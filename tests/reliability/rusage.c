/* SPDX-License-Identifier: MIT */
/*
 * rel-rusage: runs a command (stdout to /dev/null, stderr inherited), waits for it, prints
 * "RUSAGE <pid> <code> <ru_maxrss KiB>" on stdout and exits with the command's code (128+N
 * after signal N).
 *
 * Why a helper: a forked child's peak RSS starts at its parent's resident memory (the copied
 * page tables count), and exec keeps that peak. Forked from the test program, which under
 * ASan holds tens of MiB of shadow memory and quarantine that grow as it runs, warden's
 * ru_maxrss would measure the test program. Forked from this small static process, it
 * measures warden (and, as wait4 does, the largest process warden reaped: the worker, which
 * reaped the command). Static and unsanitized for the same reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2 || argv[1][0] != '/') {
		(void)fputs("usage: rel-rusage /PATH/TO/COMMAND [ARGS...]\n", stderr);
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 1) < 0)
			_exit(126);
		execv(argv[1], argv + 1);
		_exit(127);
	}
	int status = 0;
	struct rusage ru = { 0 };
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			return 2;
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	(void)printf("RUSAGE %d %d %ld\n", (int)pid, code, ru.ru_maxrss);
	return fflush(stdout) == 0 ? code : 2;
}
