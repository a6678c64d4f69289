/* SPDX-License-Identifier: MIT */
/*
 * Per-sandbox cgroups on v2 or v1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cleanup.h"
#include "io-util.h"
#include "policy.h"

#define CG_ROOT "/sys/fs/cgroup"
#define CG_KILL_ROUNDS 200 /* x 5 ms: one second for a dead pid namespace to drain */

static const char *const v1_names[SBX_CG_N] = { "memory", "pids", "cpu", "cpuacct" };

void sbx_cgroup_init(struct sbx_cgroup *cg)
{
	memset(cg, 0, sizeof(*cg));
	for (int i = 0; i < SBX_CG_N; i++)
		cg->dirfd[i] = -1;
}

static int write_at(int dfd, const char *file, const char *text)
{
	_cleanup_close_ int fd = openat(dfd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	ssize_t n = write(fd, text, len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Small cgroup files; a truncated read would be misparsed, so -EFBIG is an error too. */
static int read_at(int dfd, const char *file, char *buf, size_t size)
{
	return io_read_at(dfd, file, buf, size);
}

static int read_u64_at(int dfd, const char *file, uint64_t *out)
{
	char buf[64];
	int r = read_at(dfd, file, buf, sizeof(buf));
	if (r < 0)
		return r;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return -EBADMSG;
	*out = v;
	return 0;
}

/* Looks up "key N" in a flat-keyed file such as memory.events. */
static int read_key_at(int dfd, const char *file, const char *key, uint64_t *out)
{
	char buf[4096];
	int r = read_at(dfd, file, buf, sizeof(buf));
	if (r < 0)
		return r;
	size_t klen = strlen(key);
	for (char *line = buf; line && *line;) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(line + klen + 1, &end, 10);
			if (errno || end == line + klen + 1)
				return -EBADMSG;
			*out = v;
			return 0;
		}
		line = next;
	}
	return -ENOENT;
}

static bool is_fs(const char *path, long magic)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 && sf.f_type == magic;
}

/*
 * Our own cgroup path in the hierarchy that lists controller ctl (or the v2 one when ctl is
 * NULL), from /proc/self/cgroup. Stores the controllers field too (e.g. "cpu,cpuacct").
 */
static int own_cgroup(const char *ctl, char *out_path, size_t path_len, char *out_ctls,
		      size_t ctls_len)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -errno;
	char line[PATH_MAX + 256];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = '\0';
		*c2 = '\0';
		const char *ctls = c1 + 1, *path = c2 + 1;
		bool match = false;
		if (!ctl) {
			match = strcmp(line, "0") == 0 && *ctls == '\0';
		} else {
			char copy[256];
			(void)snprintf(copy, sizeof(copy), "%s", ctls);
			char *save = NULL;
			for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
				if (strcmp(t, ctl) == 0)
					match = true;
		}
		if (!match)
			continue;
		size_t plen = strlen(path), clen = strlen(ctls);
		if (plen >= path_len || clen >= ctls_len)
			return -ENAMETOOLONG;
		memcpy(out_path, path, plen + 1);
		memcpy(out_ctls, ctls, clen + 1);
		return 0;
	}
	return -ENOENT;
}

/*
 * Removes cgroups left behind by supervisors that died without cleaning up (SIGKILL): a
 * sibling named warden-<pid>-<hex> whose pid no longer exists. rmdir() only succeeds on an
 * empty cgroup, so nothing alive is touched; a pid that was reused keeps its cgroup until the
 * next sweep after it ends.
 */
static void collect_stale(const char *parent)
{
	DIR *d = opendir(parent);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "warden-", 7) != 0)
			continue;
		char *end;
		errno = 0;
		long pid = strtol(de->d_name + 7, &end, 10);
		if (errno || end == de->d_name + 7 || *end != '-' || pid <= 0 || pid > INT_MAX)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		(void)unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	(void)closedir(d);
}

static int make_dir(const char *path, int *out_fd)
{
	if (mkdir(path, 0755) < 0)
		return -errno;
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int r = -errno;
		(void)rmdir(path);
		return r;
	}
	*out_fd = fd;
	return 0;
}

static int create_v1(struct sbx_cgroup *cg, const char *name, const char **out_what)
{
	char ctls[SBX_CG_N][256];
	for (int i = 0; i < SBX_CG_N; i++) {
		char own[PATH_MAX], path[PATH_MAX * 2];
		int r = own_cgroup(v1_names[i], own, sizeof(own), ctls[i], sizeof(ctls[i]));
		if (r < 0) {
			*out_what = "find the v1 controller in /proc/self/cgroup";
			return r;
		}
		/* Co-mounted controllers (cpu,cpuacct) share one directory. */
		for (int j = 0; j < i && !cg->path[i]; j++) {
			if (strcmp(ctls[i], ctls[j]) != 0)
				continue;
			cg->dirfd[i] = fcntl(cg->dirfd[j], F_DUPFD_CLOEXEC, 3);
			cg->path[i] = strdup(cg->path[j]);
			if (cg->dirfd[i] < 0 || !cg->path[i])
				return -ENOMEM;
		}
		if (cg->path[i])
			continue;
		char mnt[PATH_MAX];
		(void)snprintf(mnt, sizeof(mnt), CG_ROOT "/%s", ctls[i]);
		if (!is_fs(mnt, CGROUP_SUPER_MAGIC)) {
			*out_what = "find a mounted v1 hierarchy";
			return -ENOENT;
		}
		(void)snprintf(path, sizeof(path), "%s%s", mnt, strcmp(own, "/") ? own : "");
		collect_stale(path);
		size_t plen = strlen(path);
		(void)snprintf(path + plen, sizeof(path) - plen, "/%s", name);
		r = make_dir(path, &cg->dirfd[i]);
		if (r < 0) {
			*out_what = "create the v1 cgroup directory";
			return r;
		}
		cg->path[i] = strdup(path);
		if (!cg->path[i])
			return -ENOMEM;
	}
	cg->version = 1;
	return 0;
}

/* cpu is enabled only when a quota is asked for; memory and pids always. */
static int enable_v2_controllers(const char *dir, bool cpu)
{
	_cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return write_at(fd, "cgroup.subtree_control", cpu ? "+memory +pids +cpu" : "+memory +pids");
}

static int create_v2(struct sbx_cgroup *cg, const char *name, bool cpu, const char **out_what)
{
	char own[PATH_MAX], ctls[16], base[PATH_MAX + 32], path[PATH_MAX * 2];
	int r = own_cgroup(NULL, own, sizeof(own), ctls, sizeof(ctls));
	if (r < 0) {
		*out_what = "find the v2 cgroup in /proc/self/cgroup";
		return r;
	}
	(void)snprintf(base, sizeof(base), CG_ROOT "%s", strcmp(own, "/") ? own : "");
	r = enable_v2_controllers(base, cpu);
	if (r == -EBUSY) {
		/*
		 * "No internal processes": our own cgroup holds us, so move the supervisor into
		 * a leaf beside the sandboxes, then enable the controllers for the children.
		 */
		char leaf[PATH_MAX * 2];
		(void)snprintf(leaf, sizeof(leaf), "%s/warden-supervisor", base);
		if (mkdir(leaf, 0755) < 0 && errno != EEXIST) {
			*out_what = "create the supervisor's leaf cgroup";
			return -errno;
		}
		_cleanup_close_ int lfd = open(leaf, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (lfd < 0)
			return -errno;
		char pid[16];
		(void)snprintf(pid, sizeof(pid), "%d", (int)getpid());
		r = write_at(lfd, "cgroup.procs", pid);
		if (r >= 0)
			r = enable_v2_controllers(base, cpu);
	}
	if (r < 0) {
		*out_what = cpu ? "enable the memory, pids and cpu controllers"
			  : "enable the memory and pids controllers";
		return r;
	}
	collect_stale(base);
	(void)snprintf(path, sizeof(path), "%s/%s", base, name);
	r = make_dir(path, &cg->dirfd[0]);
	if (r < 0) {
		*out_what = "create the v2 cgroup directory";
		return r;
	}
	for (int i = 0; i < SBX_CG_N; i++) {
		if (i > 0)
			cg->dirfd[i] = fcntl(cg->dirfd[0], F_DUPFD_CLOEXEC, 3);
		cg->path[i] = strdup(path);
		if (cg->dirfd[i] < 0 || !cg->path[i])
			return -ENOMEM;
	}
	cg->version = 2;
	return 0;
}

static int apply_limits(const struct sbx_cgroup *cg, const struct pol_policy *pol,
			const char **out_what)
{
	char v[64];
	int r;
	(void)snprintf(v, sizeof(v), "%" PRIu64, pol->memory_bytes);
	if (cg->version == 2) {
		r = write_at(cg->dirfd[SBX_CG_MEMORY], "memory.max", v);
		if (r < 0)
			return *out_what = "set memory.max", r;
		/* No swap: the memory limit must mean memory. Absent when swap accounting is off. */
		r = write_at(cg->dirfd[SBX_CG_MEMORY], "memory.swap.max", "0");
		if (r < 0 && r != -ENOENT)
			return *out_what = "set memory.swap.max", r;
		r = write_at(cg->dirfd[SBX_CG_MEMORY], "memory.oom.group", "1");
		if (r < 0 && r != -ENOENT)
			return *out_what = "set memory.oom.group", r;
	} else {
		r = write_at(cg->dirfd[SBX_CG_MEMORY], "memory.limit_in_bytes", v);
		if (r < 0)
			return *out_what = "set memory.limit_in_bytes", r;
		r = write_at(cg->dirfd[SBX_CG_MEMORY], "memory.memsw.limit_in_bytes", v);
		if (r < 0 && r != -ENOENT)
			return *out_what = "set memory.memsw.limit_in_bytes", r;
	}
	(void)snprintf(v, sizeof(v), "%" PRIu64, pol->pids);
	r = write_at(cg->dirfd[SBX_CG_PIDS], "pids.max", v);
	if (r < 0)
		return *out_what = "set pids.max", r;

	if (pol->cpu_millicpus) {
		/* quota per 100 ms period, in microseconds: 1000 millicpus = 100000 us */
		uint64_t quota = pol->cpu_millicpus * 100;
		if (cg->version == 2) {
			(void)snprintf(v, sizeof(v), "%" PRIu64 " 100000", quota);
			r = write_at(cg->dirfd[SBX_CG_CPU], "cpu.max", v);
		} else {
			r = write_at(cg->dirfd[SBX_CG_CPU], "cpu.cfs_period_us", "100000");
			if (r >= 0) {
				(void)snprintf(v, sizeof(v), "%" PRIu64, quota);
				r = write_at(cg->dirfd[SBX_CG_CPU], "cpu.cfs_quota_us", v);
			}
		}
		if (r < 0)
			return *out_what = "set the cpu quota", r;
	}
	return 0;
}

int sbx_cgroup_create(struct sbx_cgroup *cg, const char *name, const struct pol_policy *pol,
		      const char **out_what)
{
	int r;
	*out_what = "detect the cgroup hierarchy";
	if (is_fs(CG_ROOT, CGROUP2_SUPER_MAGIC))
		r = create_v2(cg, name, pol->cpu_millicpus > 0, out_what);
	else if (is_fs(CG_ROOT "/memory", CGROUP_SUPER_MAGIC) ||
		 is_fs(CG_ROOT, TMPFS_MAGIC))
		r = create_v1(cg, name, out_what);
	else
		r = -ENOENT;
	if (r >= 0)
		r = apply_limits(cg, pol, out_what);
	if (r < 0)
		(void)sbx_cgroup_destroy(cg);
	return r;
}

/* cgroup.procs read whole: enough for the few processes of a check, and for a kill. */
#define PROCS_SMALL 8192
#define PROCS_KILL 65536

/*
 * Reads dfd's cgroup.procs (at most cap bytes; a longer list is -EFBIG) and calls fn, when
 * not NULL, on each pid until it returns true. The buffer lives on the heap: as a 64 KiB
 * stack array, stack-clash probing touched all of it on every call, a tenth of the
 * supervisor's peak RSS. Returns how many pids were seen, or -errno.
 */
static int each_proc(int dfd, size_t cap, bool (*fn)(long pid, void *arg), void *arg)
{
	_cleanup_free_ char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	int r = read_at(dfd, "cgroup.procs", buf, cap);
	if (r < 0)
		return r;
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(buf, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
		char *end;
		errno = 0;
		long pid = strtol(t, &end, 10);
		if (errno || *end)
			continue;
		n++;
		if (fn && fn(pid, arg))
			break;
	}
	return n;
}

struct find_pid {
	pid_t pid;
	bool found;
};

static bool find_one(long pid, void *arg)
{
	struct find_pid *f = arg;
	f->found = f->found || pid == (long)f->pid;
	return f->found;
}

/*
 * Whether entry i is the first of its directory: v1's co-mounted controllers (cpu,cpuacct)
 * share one, and v2's entries are all the same.
 */
static bool distinct(const struct sbx_cgroup *cg, int i)
{
	for (int j = 0; j < i; j++)
		if (cg->path[i] && cg->path[j] && strcmp(cg->path[i], cg->path[j]) == 0)
			return false;
	return true;
}

int sbx_cgroup_open_join(const struct sbx_cgroup *cg, struct sbx_cg_join *out)
{
	struct sbx_cg_join j = { .clone_fd = -1 };
	for (int i = 0; i < SBX_CG_N; i++)
		j.tasks_fd[i] = -1;
	*out = j;
	if (cg->version == 2) {
		out->clone_fd = fcntl(cg->dirfd[0], F_DUPFD_CLOEXEC, 3);
		return out->clone_fd < 0 ? -errno : 0;
	}
	if (cg->version != 1)
		return -ENOENT;
	for (int i = 0; i < SBX_CG_N; i++) {
		if (!distinct(cg, i))
			continue;
		j.tasks_fd[i] = openat(cg->dirfd[i], "tasks", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		if (j.tasks_fd[i] < 0) {
			int r = -errno;
			sbx_cgroup_close_join(&j);
			return r;
		}
	}
	*out = j;
	return 0;
}

void sbx_cgroup_close_join(struct sbx_cg_join *j)
{
	if (j->clone_fd >= 0)
		(void)close(j->clone_fd);
	j->clone_fd = -1;
	for (int i = 0; i < SBX_CG_N; i++) {
		if (j->tasks_fd[i] >= 0)
			(void)close(j->tasks_fd[i]);
		j->tasks_fd[i] = -1;
	}
}

int sbx_cgroup_join_self(const struct sbx_cg_join *j)
{
	for (int i = 0; i < SBX_CG_N; i++) {
		if (j->tasks_fd[i] < 0)
			continue;
		ssize_t n = write(j->tasks_fd[i], "0", 1);
		if (n < 0)
			return -errno;
		if (n != 1)
			return -EIO;
	}
	return 0;
}

int sbx_cgroup_holds(const struct sbx_cgroup *cg, pid_t pid)
{
	if (!cg->version)
		return -ENOENT;
	for (int i = 0; i < SBX_CG_N; i++) {
		if (!distinct(cg, i))
			continue;
		struct find_pid f = { .pid = pid };
		int r = each_proc(cg->dirfd[i], PROCS_SMALL, find_one, &f);
		if (r < 0)
			return r;
		if (!f.found)
			return 0;
	}
	return 1;
}

int sbx_cgroup_attach(const struct sbx_cgroup *cg, pid_t pid)
{
	char v[16];
	(void)snprintf(v, sizeof(v), "%d", (int)pid);
	for (int i = 0; i < SBX_CG_N; i++) {
		if (!distinct(cg, i))
			continue;
		int r = write_at(cg->dirfd[i], "cgroup.procs", v);
		if (r < 0)
			return r;
	}
	return 0;
}

int sbx_cgroup_stats(const struct sbx_cgroup *cg, struct sbx_cg_stats *out)
{
	struct sbx_cg_stats s;
	memset(&s, 0, sizeof(s));
	if (cg->version == 2) {
		s.have_memory_peak =
			read_u64_at(cg->dirfd[SBX_CG_MEMORY], "memory.peak", &s.memory_peak_bytes) == 0;
		s.have_cpu = read_key_at(cg->dirfd[SBX_CG_CPU], "cpu.stat", "usage_usec",
					 &s.cpu_usec) == 0;
		(void)read_key_at(cg->dirfd[SBX_CG_MEMORY], "memory.events", "oom_kill",
				  &s.oom_kills);
	} else if (cg->version == 1) {
		s.have_memory_peak = read_u64_at(cg->dirfd[SBX_CG_MEMORY],
						 "memory.max_usage_in_bytes",
						 &s.memory_peak_bytes) == 0;
		uint64_t ns = 0;
		s.have_cpu = read_u64_at(cg->dirfd[SBX_CG_CPUACCT], "cpuacct.usage", &ns) == 0;
		s.cpu_usec = ns / 1000;
		(void)read_key_at(cg->dirfd[SBX_CG_MEMORY], "memory.oom_control", "oom_kill",
				  &s.oom_kills);
	} else {
		return -ENOENT;
	}
	(void)read_key_at(cg->dirfd[SBX_CG_PIDS], "pids.events", "max", &s.pids_max_events);
	*out = s;
	return 0;
}

int sbx_cgroup_count_procs(const struct sbx_cgroup *cg)
{
	if (!cg->version)
		return -ENOENT;
	return each_proc(cg->dirfd[SBX_CG_PIDS], PROCS_SMALL, NULL, NULL);
}

static bool kill_one(long pid, void *arg)
{
	if (pid > 1) {
		(void)kill((pid_t)pid, SIGKILL);
		++*(int *)arg;
	}
	return false;
}

/* Sends SIGKILL to every process listed; returns how many, or -errno. */
static int kill_listed(int dfd)
{
	int n = 0;
	int r = each_proc(dfd, PROCS_KILL, kill_one, &n);
	return r < 0 ? r : n;
}

int sbx_cgroup_kill(const struct sbx_cgroup *cg)
{
	if (!cg->version)
		return 0;
	int dfd = cg->dirfd[SBX_CG_PIDS];
	if (cg->version == 2)
		(void)write_at(dfd, "cgroup.kill", "1");
	for (int round = 0; round < CG_KILL_ROUNDS; round++) {
		int n = kill_listed(dfd);
		if (n < 0)
			return n;
		if (n == 0 && sbx_cgroup_count_procs(cg) == 0)
			return 0;
		struct timespec ts = { .tv_nsec = 5 * 1000 * 1000 };
		(void)nanosleep(&ts, NULL);
	}
	return -EBUSY;
}

int sbx_cgroup_destroy(struct sbx_cgroup *cg)
{
	int ret = 0;
	for (int i = 0; i < SBX_CG_N; i++) {
		if (cg->dirfd[i] >= 0)
			(void)close(cg->dirfd[i]);
		cg->dirfd[i] = -1;
		if (cg->path[i] && distinct(cg, i)) {
			int tries = 0;
			while (rmdir(cg->path[i]) < 0) {
				if (errno == ENOENT)
					break;
				if (errno != EBUSY || ++tries > CG_KILL_ROUNDS) {
					ret = -errno;
					break;
				}
				struct timespec ts = { .tv_nsec = 5 * 1000 * 1000 };
				(void)nanosleep(&ts, NULL);
			}
		}
	}
	for (int i = 0; i < SBX_CG_N; i++) {
		free(cg->path[i]);
		cg->path[i] = NULL;
	}
	cg->version = 0;
	return ret;
}
