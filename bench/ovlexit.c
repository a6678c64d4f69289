/* SPDX-License-Identifier: MIT */
/*
 * bench-ovl-exit: what the kernel charges when a mount namespace holding an overlay ends, as
 * a warden sandbox's does in workspace mode changes when its last process exits. A benchmark
 * of the kernel alone: nothing of warden runs.
 *
 *   bench-ovl-exit [-r ROUNDS] [-w WARMUP] DIR
 *
 * DIR is a folder on the filesystem under test (bench/run names one in the filesystem of
 * warden's state directory). The program makes its own folder in it, DIR/bench-ovl-exit-XXXXXX,
 * holding lower/ (empty), merged/ and, per run, the upper and work folders, and removes that
 * folder, and only that, at the end. Each round runs every kind once,
 * round-robin (each round starts one kind further along):
 *
 *   none      a private mount namespace and no overlay: the floor
 *   upper     an overlay whose upper and work folders are in DIR (warden's changeset layer)
 *   volatile  the same with overlayfs's "volatile" option, which skips the sync of the upper
 *             filesystem at unmount (and at syncfs)
 *   tmpfs     upper and work on a fresh tmpfs (warden eval's criteria overlay)
 *
 * Per run a child unshares its mount namespace, makes every mount private, makes its mounts
 * (timed), writes one byte into merged/ when there is an overlay (so that the upper has a
 * change, as after a command), reports over a pipe and exits; the parent times from the
 * report to waitpid()'s return, which is the namespace's teardown: the overlay's unmount.
 *
 * Output, tab-separated, one line per kind:
 *   sum  KIND  RUNS  MEDIAN_MOUNT_US  MEDIAN_EXIT_US  P25_EXIT_US  P75_EXIT_US
 * Exit status: 0, 1 when a run failed (its kind then has fewer runs), 2 on usage or system
 * errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OVL_MAX_ROUNDS 100000
#define OVL_DIR_MAX (PATH_MAX / 2) /* DIR's length at most, so every path below fits */

enum kind { K_NONE, K_UPPER, K_VOLATILE, K_TMPFS, K_N };

static const char *const kind_names[K_N] = { "none", "upper", "volatile", "tmpfs" };

struct timing {
	double *mount_us;
	double *exit_us;
	unsigned n;
	unsigned failed;
};

static double now_us(void)
{
	struct timespec t;
	(void)clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The p-th quantile (0..1) of v[0..n), sorting v in place; 0 when n is 0. */
static double quantile(double *v, unsigned n, double p)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(unsigned)(p * (n - 1) + 0.5)];
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	if ((flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
		perror(path);
	return 0;
}

static void rm_rf(const char *path)
{
	(void)nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The child: mounts for kind k, reports the time the mounts took, exits. */
_Noreturn static void child_main(const char *dir, enum kind k, int report)
{
	char lower[PATH_MAX], merged[PATH_MAX], base[PATH_MAX], upper[PATH_MAX + 8],
		work[PATH_MAX + 8], opts[3 * PATH_MAX + 96];
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("bench-ovl-exit: private mount namespace");
		_exit(2);
	}
	double t0 = now_us();
	if (k != K_NONE) {
		(void)snprintf(lower, sizeof(lower), "%s/lower", dir);
		(void)snprintf(merged, sizeof(merged), "%s/merged", dir);
		(void)snprintf(base, sizeof(base), "%s/%s", dir, k == K_TMPFS ? "tmpfs" : "layer");
		if (k == K_TMPFS ? mount("tmpfs", base, "tmpfs", 0, "size=16m,mode=0700") < 0
				 : mkdir(base, 0700) < 0 && errno != EEXIST) {
			perror("bench-ovl-exit: the layer's folder");
			_exit(2);
		}
		(void)snprintf(upper, sizeof(upper), "%s/upper", base);
		(void)snprintf(work, sizeof(work), "%s/work", base);
		(void)snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s%s", lower,
			       upper, work, k == K_VOLATILE ? ",volatile" : "");
		if ((mkdir(upper, 0755) < 0 && errno != EEXIST) ||
		    (mkdir(work, 0755) < 0 && errno != EEXIST) ||
		    mount("overlay", merged, "overlay", 0, opts) < 0) {
			perror("bench-ovl-exit: overlay");
			_exit(2);
		}
	}
	double t1 = now_us();
	if (k != K_NONE) {
		char file[PATH_MAX + 8];
		(void)snprintf(file, sizeof(file), "%s/f", merged);
		int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, "x", 1) != 1) {
			perror("bench-ovl-exit: write into the overlay");
			_exit(2);
		}
		(void)close(fd);
	}
	double d = t1 - t0;
	_exit(write(report, &d, sizeof(d)) == (ssize_t)sizeof(d) ? 0 : 2);
}

/* One run of kind k: fills *mount_us and *exit_us. Returns 0, or -1 when it failed. */
static int run_one(const char *dir, enum kind k, double *mount_us, double *exit_us)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		(void)close(p[0]);
		(void)close(p[1]);
		return -1;
	}
	if (pid == 0) {
		(void)close(p[0]);
		child_main(dir, k, p[1]);
	}
	(void)close(p[1]);
	double d = 0;
	ssize_t n = read(p[0], &d, sizeof(d));
	double t1 = now_us();
	(void)close(p[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	double t2 = now_us();
	char layer[PATH_MAX];
	(void)snprintf(layer, sizeof(layer), "%s/layer", dir);
	rm_rf(layer);
	if (n != (ssize_t)sizeof(d) || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	*mount_us = d;
	*exit_us = t2 - t1;
	return 0;
}

static int usage(void)
{
	(void)fputs("usage: bench-ovl-exit [-r ROUNDS] [-w WARMUP] DIR\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	unsigned rounds = 40, warmup = 3;
	int c;
	while ((c = getopt(argc, argv, "r:w:")) != -1) {
		char *end = NULL;
		unsigned long v = 0;
		if (c == 'r' || c == 'w') {
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || !end || *end || v > OVL_MAX_ROUNDS)
				return usage();
		}
		if (c == 'r')
			rounds = (unsigned)v;
		else if (c == 'w')
			warmup = (unsigned)v;
		else
			return usage();
	}
	if (optind != argc - 1 || rounds == 0)
		return usage();
	if (strlen(argv[optind]) > OVL_DIR_MAX)
		return usage();
	char dir[OVL_DIR_MAX + 32];
	(void)snprintf(dir, sizeof(dir), "%s/bench-ovl-exit-XXXXXX", argv[optind]);
	if (!mkdtemp(dir)) {
		perror(argv[optind]);
		return 2;
	}
	char path[PATH_MAX];
	static const char *const sub[] = { "lower", "merged", "tmpfs" };
	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		(void)snprintf(path, sizeof(path), "%s/%s", dir, sub[i]);
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			perror(path);
			return 2;
		}
	}
	struct timing t[K_N];
	for (int k = 0; k < K_N; k++) {
		t[k].mount_us = calloc(rounds, sizeof(double));
		t[k].exit_us = calloc(rounds, sizeof(double));
		t[k].n = t[k].failed = 0;
		if (!t[k].mount_us || !t[k].exit_us) {
			perror("bench-ovl-exit");
			return 2;
		}
	}
	for (unsigned r = 0; r < warmup + rounds; r++) {
		for (int j = 0; j < K_N; j++) {
			enum kind k = (enum kind)((r + (unsigned)j) % K_N);
			double m = 0, e = 0;
			if (run_one(dir, k, &m, &e) < 0) {
				t[k].failed++;
				continue;
			}
			if (r >= warmup) {
				t[k].mount_us[t[k].n] = m;
				t[k].exit_us[t[k].n] = e;
				t[k].n++;
			}
		}
	}
	bool failed = false;
	for (int k = 0; k < K_N; k++) {
		failed = failed || t[k].failed;
		double mount_med = quantile(t[k].mount_us, t[k].n, 0.5);
		double p25 = quantile(t[k].exit_us, t[k].n, 0.25);
		double p50 = quantile(t[k].exit_us, t[k].n, 0.5);
		double p75 = quantile(t[k].exit_us, t[k].n, 0.75);
		(void)printf("sum\t%s\t%u\t%.1f\t%.1f\t%.1f\t%.1f\n", kind_names[k], t[k].n,
			     mount_med, p50, p25, p75);
		free(t[k].mount_us);
		free(t[k].exit_us);
	}
	rm_rf(dir);
	return failed ? 1 : 0;
}
