/* SPDX-License-Identifier: MIT */
/*
 * bench-launch: runs commands over and over and reports, per run, the wall time from fork to
 * reap (CLOCK_MONOTONIC) and the ru_maxrss that wait4() returns for the process it started.
 *
 *   bench-launch [-r ROUNDS] [-w WARMUP] [-H] [-q] [-o] CMD [ARGS...] [--- CMD [ARGS...]]...
 *
 * Several commands, separated by "---", are run round-robin: each round runs every command
 * once, starting one further along each round so no command always follows the same one.
 * WARMUP rounds (default 3) run first and are not reported; ROUNDS (default 20) follow.
 *
 * The process started is the one measured: for `warden run` it is the supervisor, for bwrap
 * bwrap itself. Note that wait4()'s ru_maxrss is the larger of the process's own peak and
 * that of every descendant it reaped (the kernel folds a reaped child's peak into its
 * parent), so for a launcher it is max(launcher, sandbox init, command). -H measures the
 * process alone as well: it runs the command under ptrace with only PTRACE_O_TRACEEXIT set
 * (no syscall stops) and reads VmHWM from /proc/PID/status at the exit stop, while the
 * process still has its memory. -H perturbs timing slightly; do not mix it with timing runs.
 *
 * stdin and stdout of the commands are /dev/null (-o keeps stdout); stderr is inherited.
 *
 * Output, tab-separated, one line per measured run:
 *   run  CMD_INDEX  ROUND  WALL_US  USER_US  SYS_US  MAXRSS_KIB  HWM_KIB(or -)  STATUS
 * then one line per command:
 *   sum  CMD_INDEX  RUNS  MEDIAN_US  MIN_US  MAX_US  MEDIAN_USER_US  MEDIAN_SYS_US
 *        MAX_MAXRSS_KIB  MAX_HWM_KIB(or -)  FAILED  CMD...
 * USER_US and SYS_US are wait4()'s CPU times, which (like ru_maxrss) include every descendant
 * the process reaped. STATUS is the exit status, or 128+N for signal N. -q prints only the
 * sum lines.
 * Exit status: 0, or 1 when some run did not exit 0 (the runs are still reported), 2 on
 * usage or system errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LAUNCH_MAX_CMDS 32
#define LAUNCH_MAX_ROUNDS 100000

struct cmd {
	char **argv;
	double *wall_us;   /* one per measured round */
	double *user_us;
	double *sys_us;
	long max_maxrss;
	long max_hwm;      /* -1 when not measured */
	unsigned failed;
};

struct run_result {
	double wall_us;
	double user_us;
	double sys_us;
	long maxrss_kib;
	long hwm_kib;      /* -1 when not measured */
	int status;        /* exit status, or 128+N for signal N */
};

static double mono_us(void)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static bool parse_count(const char *s, long max, long *out)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || !end || end == s || *end || v < 0 || v > max)
		return false;
	*out = v;
	return true;
}

/* VmHWM of a live (exit-stopped) process, in KiB; -1 when it cannot be read. */
static long read_hwm(pid_t pid)
{
	char path[64], line[256];
	(void)snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long kib = -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "VmHWM:", 6) == 0) {
			char *end = NULL;
			long v = strtol(line + 6, &end, 10);
			if (end && end != line + 6 && v >= 0)
				kib = v;
			break;
		}
	}
	(void)fclose(f);
	return kib;
}

_Noreturn static void child_exec(char **argv, bool keep_stdout, bool trace)
{
	int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0 || dup2(null_fd, 0) < 0 || (!keep_stdout && dup2(null_fd, 1) < 0))
		_exit(125);
	if (trace && ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
		_exit(125);
	execvp(argv[0], argv);
	fprintf(stderr, "bench-launch: exec %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Reaps pid, following ptrace stops when trace is set. Returns 0 or -errno. */
static int reap(pid_t pid, bool trace, int *out_status, struct rusage *out_ru, long *out_hwm)
{
	bool first_stop = true;
	for (;;) {
		int status;
		struct rusage ru;
		pid_t w = wait4(pid, &status, __WALL, &ru);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			*out_status = status;
			*out_ru = ru;
			return 0;
		}
		if (!trace || !WIFSTOPPED(status))
			continue;
		int sig = WSTOPSIG(status);
		int inject = 0;
		if (first_stop && sig == SIGTRAP) {
			/*
			 * The stop after the traced execve: from now on stop only at exit (and
			 * report a later execve as an event rather than a SIGTRAP), then let go.
			 */
			first_stop = false;
			if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
				   (void *)(uintptr_t)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC |
						       PTRACE_O_EXITKILL)) < 0)
				return -errno;
		} else if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			*out_hwm = read_hwm(pid);
		} else if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
			/* nothing to do: continue */
		} else {
			inject = sig; /* a signal for the process: deliver it */
		}
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(uintptr_t)inject) < 0 && errno != ESRCH)
			return -errno;
	}
}

static int run_once(char **argv, bool keep_stdout, bool trace, struct run_result *out)
{
	double t0 = mono_us();
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child_exec(argv, keep_stdout, trace);
	int status = 0;
	struct rusage ru = { 0 };
	long hwm = -1;
	int r = reap(pid, trace, &status, &ru, &hwm);
	double t1 = mono_us();
	if (r < 0)
		return r;
	out->wall_us = t1 - t0;
	out->user_us = (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec;
	out->sys_us = (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
	out->maxrss_kib = ru.ru_maxrss;
	out->hwm_kib = hwm;
	out->status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench-launch [-r ROUNDS] [-w WARMUP] [-H] [-q] [-o] "
		   "CMD [ARGS...] [--- CMD [ARGS...]]...\n");
}

int main(int argc, char **argv)
{
	long rounds = 20, warmup = 3;
	bool quiet = false, trace = false, keep_stdout = false;
	int opt;
	while ((opt = getopt(argc, argv, "+r:w:Hqoh")) != -1) {
		switch (opt) {
		case 'r':
			if (!parse_count(optarg, LAUNCH_MAX_ROUNDS, &rounds) || rounds == 0) {
				fprintf(stderr, "bench-launch: bad -r '%s'\n", optarg);
				return 2;
			}
			break;
		case 'w':
			if (!parse_count(optarg, LAUNCH_MAX_ROUNDS, &warmup)) {
				fprintf(stderr, "bench-launch: bad -w '%s'\n", optarg);
				return 2;
			}
			break;
		case 'H':
			trace = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'o':
			keep_stdout = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}

	/* Split the remaining arguments at "---" in place. */
	struct cmd cmds[LAUNCH_MAX_CMDS];
	size_t n_cmds = 0;
	int start = optind;
	for (int i = optind; i <= argc; i++) {
		if (i < argc && strcmp(argv[i], "---") != 0)
			continue;
		if (i == start || n_cmds == LAUNCH_MAX_CMDS) {
			fprintf(stderr, "bench-launch: empty command or more than %d commands\n",
				LAUNCH_MAX_CMDS);
			return 2;
		}
		argv[i] = NULL; /* argv[argc] is already NULL */
		cmds[n_cmds] = (struct cmd){ .argv = argv + start, .max_hwm = -1 };
		cmds[n_cmds].wall_us = calloc((size_t)rounds, sizeof(double));
		cmds[n_cmds].user_us = calloc((size_t)rounds, sizeof(double));
		cmds[n_cmds].sys_us = calloc((size_t)rounds, sizeof(double));
		if (!cmds[n_cmds].wall_us || !cmds[n_cmds].user_us || !cmds[n_cmds].sys_us) {
			perror("bench-launch");
			return 2;
		}
		n_cmds++;
		start = i + 1;
	}

	for (long round = -warmup; round < rounds; round++) {
		for (size_t k = 0; k < n_cmds; k++) {
			size_t idx = (size_t)(round + warmup + (long)k) % n_cmds;
			struct cmd *c = &cmds[idx];
			struct run_result res = { 0 };
			int r = run_once(c->argv, keep_stdout, trace, &res);
			if (r < 0) {
				fprintf(stderr, "bench-launch: run %s: %s\n", c->argv[0], strerror(-r));
				return 2;
			}
			if (round < 0)
				continue;
			c->wall_us[round] = res.wall_us;
			c->user_us[round] = res.user_us;
			c->sys_us[round] = res.sys_us;
			if (res.maxrss_kib > c->max_maxrss)
				c->max_maxrss = res.maxrss_kib;
			if (res.hwm_kib > c->max_hwm)
				c->max_hwm = res.hwm_kib;
			if (res.status != 0)
				c->failed++;
			if (!quiet) {
				printf("run\t%zu\t%ld\t%.1f\t%.0f\t%.0f\t%ld\t", idx, round,
				       res.wall_us, res.user_us, res.sys_us, res.maxrss_kib);
				if (res.hwm_kib >= 0)
					printf("%ld", res.hwm_kib);
				else
					printf("-");
				printf("\t%d\n", res.status);
			}
		}
	}

	bool any_failed = false;
	for (size_t i = 0; i < n_cmds; i++) {
		struct cmd *c = &cmds[i];
		double min = c->wall_us[0], max = c->wall_us[0];
		for (long j = 1; j < rounds; j++) {
			if (c->wall_us[j] < min)
				min = c->wall_us[j];
			if (c->wall_us[j] > max)
				max = c->wall_us[j];
		}
		double med = median(c->wall_us, (size_t)rounds);
		double med_user = median(c->user_us, (size_t)rounds);
		double med_sys = median(c->sys_us, (size_t)rounds);
		printf("sum\t%zu\t%ld\t%.1f\t%.1f\t%.1f\t%.0f\t%.0f\t%ld\t", i, rounds, med, min,
		       max, med_user, med_sys, c->max_maxrss);
		if (c->max_hwm >= 0)
			printf("%ld", c->max_hwm);
		else
			printf("-");
		printf("\t%u", c->failed);
		for (char **a = c->argv; *a; a++)
			printf("%s%s", a == c->argv ? "\t" : " ", *a);
		printf("\n");
		any_failed = any_failed || c->failed;
		free(c->wall_us);
		free(c->user_us);
		free(c->sys_us);
	}
	return any_failed ? 1 : 0;
}
