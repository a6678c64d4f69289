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
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cleanup.h"
#include "io-util.h"
#include "policy.h"
#include "sdscope.h"

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

/* The leaf a supervisor moves itself into, inside a cgroup delegated to it (see below). */
#define SUPERVISOR_LEAF "warden-supervisor"

/* systemd marks the cgroup of a unit with Delegate=yes with this xattr ("1"). */
static bool delegated(const char *dir)
{
	static const char *const names[] = { "trusted.delegate", "user.delegate" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char v[8];
		ssize_t n = getxattr(dir, names[i], v, sizeof(v));
		if (n == 1 && v[0] == '1')
			return true;
	}
	return false;
}

/*
 * The scope the user's systemd started for this process at its request (SBX_CG_V2_SCOPE), as
 * /proc/self/cgroup names it: delegated by construction, whatever its xattrs say. A forked
 * child inherits it with the cgroup itself.
 */
static char requested_scope[PATH_MAX];

/* Whether this process may create and manage cgroups below dir (the kernel's own check). */
static bool writable(const char *dir)
{
	char f[PATH_MAX + 32];
	(void)snprintf(f, sizeof(f), "%s/cgroup.procs", dir);
	if (faccessat(AT_FDCWD, f, W_OK, AT_EACCESS) < 0)
		return false;
	(void)snprintf(f, sizeof(f), "%s/cgroup.subtree_control", dir);
	return faccessat(AT_FDCWD, f, W_OK, AT_EACCESS) == 0 &&
	       faccessat(AT_FDCWD, dir, W_OK, AT_EACCESS) == 0;
}

static bool not_us(long pid, void *arg)
{
	bool *other = arg;
	*other = pid != (long)getpid();
	return *other;
}

static int each_proc(int dfd, size_t cap, bool (*fn)(long pid, void *arg), void *arg);

/* Whether dir's cgroup.procs lists a process other than this one (true when unreadable). */
static bool holds_others(const char *dir)
{
	_cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	bool other = false;
	if (fd < 0 || each_proc(fd, 65536, not_us, &other) < 0)
		return true;
	return other;
}

static int place_v2(struct sbx_cg_place *pl)
{
	char ctls[16];
	int r = own_cgroup(NULL, pl->own, sizeof(pl->own), ctls, sizeof(ctls));
	if (r < 0)
		return r;
	/*
	 * A supervisor before this one (an earlier sandbox of this process, or a parent warden)
	 * may have moved itself into the leaf inside its delegated cgroup: the sandboxes go
	 * beside that leaf, not below it.
	 */
	char own[PATH_MAX];
	(void)snprintf(own, sizeof(own), "%s", pl->own);
	char *last = strrchr(own, '/');
	if (last && last != own && strcmp(last + 1, SUPERVISOR_LEAF) == 0)
		*last = '\0';
	char dir[PATH_MAX];
	int n = snprintf(dir, sizeof(dir), CG_ROOT "%s", strcmp(own, "/") ? own : "");
	if (n < 0 || (size_t)n >= sizeof(dir))
		return -ENAMETOOLONG;
	struct sbx_sd_addr sd;
	bool have_sd = sbx_sd_find(&sd) == 0;
	if (have_sd)
		memcpy(pl->systemd, sd.path, sizeof(pl->systemd));
	pl->shared = holds_others(dir);
	/*
	 * The top may be managed when it is the kernel's root cgroup (a cgroup namespace's top
	 * is a cgroup with a cgroup.type file, like every non-root cgroup) and this process may
	 * write its cgroup.subtree_control (root of the initial user namespace, a writable mount).
	 */
	bool top_ok = access(CG_ROOT "/cgroup.type", F_OK) < 0 && errno == ENOENT &&
		      faccessat(AT_FDCWD, CG_ROOT "/cgroup.subtree_control", W_OK, AT_EACCESS) == 0;
	pl->delegated = delegated(dir);
	pl->mark = pl->delegated ? "systemd's delegate xattr is set on it" : "no delegate xattr";
	if (!pl->delegated && requested_scope[0] && strcmp(own, requested_scope) == 0) {
		pl->delegated = true;
		pl->mark = "the user's systemd started it for warden with Delegate=yes";
	}
	if (!pl->delegated && !top_ok && have_sd && writable(dir)) {
		/* Only systemd knows: its user manager in version 252 (Debian 12) sets no xattr. */
		static char why_not[640];
		const char *what = "";
		bool d = false;
		r = sbx_sd_delegated(&sd, getpid(), &d, &what);
		if (r == 0) {
			pl->delegated = d;
			pl->mark = d ? "no delegate xattr, but the user's systemd says its unit has "
				       "Delegate=yes"
				     : "the user's systemd says its unit is not delegated";
		} else {
			(void)snprintf(why_not, sizeof(why_not), "no delegate xattr, and the user's "
				       "systemd did not say whether its unit is delegated (%s: %s)",
				       what, strerror(-r));
			pl->mark = why_not;
		}
	}
	if (pl->delegated && !pl->shared) {
		pl->where = SBX_CG_V2_OWN;
		pl->why = "warden's cgroup is delegated to it and warden is alone in it";
	} else if (top_ok) {
		pl->where = SBX_CG_V2_TOP;
		pl->why = !strcmp(own, "/") ? "warden runs in the root cgroup"
			  : pl->delegated ? "warden's cgroup is delegated to it but holds other "
					    "processes, which warden does not move"
					  : "warden's cgroup is not delegated to it (a service, a "
					    "session), and warden moves none of its processes";
	} else if (have_sd) {
		pl->where = SBX_CG_V2_SCOPE;
		pl->why = pl->delegated ? "warden's cgroup is delegated to it but holds other "
					  "processes, which warden does not move: it asks the "
					  "user's systemd for a scope of its own with Delegate=yes"
					: "warden's cgroup is not delegated to it and warden may not "
					  "manage the root cgroup: it asks the user's systemd for a "
					  "scope of its own with Delegate=yes";
	} else {
		pl->where = SBX_CG_V2_OWN;
		pl->why = access(CG_ROOT "/cgroup.type", F_OK) == 0
				  ? "the hierarchy's top is not the host's root cgroup (a cgroup "
				    "namespace); warden's cgroup must be delegated to it"
				  : "warden may not manage the root cgroup and no user systemd "
				    "answers at $XDG_RUNTIME_DIR; its own cgroup must be delegated "
				    "to it";
	}
	if (pl->where == SBX_CG_V2_SCOPE)
		pl->base[0] = '\0';
	else
		memcpy(pl->base, pl->where == SBX_CG_V2_TOP ? SBX_CG_V2_TOP_DIR : dir,
		       pl->where == SBX_CG_V2_TOP ? sizeof(SBX_CG_V2_TOP_DIR) : (size_t)n + 1);
	return 0;
}

int sbx_cgroup_place(struct sbx_cg_place *out)
{
	struct sbx_cg_place pl;
	memset(&pl, 0, sizeof(pl));
	int r = 0;
	if (is_fs(CG_ROOT, CGROUP2_SUPER_MAGIC)) {
		r = place_v2(&pl);
	} else if (is_fs(CG_ROOT "/memory", CGROUP_SUPER_MAGIC) || is_fs(CG_ROOT, TMPFS_MAGIC)) {
		char ctls[256];
		r = own_cgroup("memory", pl.own, sizeof(pl.own), ctls, sizeof(ctls));
		pl.where = SBX_CG_V1;
		pl.why = "cgroup v1: below warden's own cgroup in each of the memory, pids, cpu "
			 "and cpuacct hierarchies";
	} else {
		pl.where = SBX_CG_NOWHERE;
		pl.why = "no cgroup hierarchy is mounted at " CG_ROOT;
	}
	if (r < 0)
		return r;
	*out = pl;
	return 0;
}

/*
 * Warden's own subtree at the top: the controllers enabled from the root down. The root
 * cgroup is exempt from the no-internal-processes rule, and nothing but sandbox cgroups is
 * ever put in the subtree, so neither write can meet EBUSY on that account.
 */
static int prepare_top(bool cpu, const char **out_what)
{
	int r = enable_v2_controllers(CG_ROOT, cpu);
	if (r < 0) {
		*out_what = cpu ? "enable the memory, pids and cpu controllers in the root cgroup"
				: "enable the memory and pids controllers in the root cgroup";
		return r;
	}
	if (mkdir(SBX_CG_V2_TOP_DIR, 0755) < 0 && errno != EEXIST) {
		*out_what = "create " SBX_CG_V2_TOP_DIR;
		return -errno;
	}
	r = enable_v2_controllers(SBX_CG_V2_TOP_DIR, cpu);
	if (r < 0)
		*out_what = cpu ? "enable the memory, pids and cpu controllers in " SBX_CG_V2_TOP_DIR
				: "enable the memory and pids controllers in " SBX_CG_V2_TOP_DIR;
	return r;
}

/* Below warden's own cgroup: it must be delegated to it, or be a cgroup namespace's top. */
static int prepare_own(const char *base, bool cpu, const char **out_what)
{
	int r = enable_v2_controllers(base, cpu);
	if (r == -EBUSY) {
		/*
		 * "No internal processes": our own cgroup holds us, so move the supervisor into
		 * a leaf beside the sandboxes, then enable the controllers for the children.
		 * Only this process moves; when others share the cgroup, the second try fails
		 * with EBUSY again.
		 */
		char leaf[PATH_MAX + 32];
		(void)snprintf(leaf, sizeof(leaf), "%s/" SUPERVISOR_LEAF, base);
		if (mkdir(leaf, 0755) < 0 && errno != EEXIST) {
			*out_what = "create the supervisor's leaf cgroup";
			return -errno;
		}
		_cleanup_close_ int lfd = open(leaf, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (lfd < 0) {
			*out_what = "open the supervisor's leaf cgroup";
			return -errno;
		}
		char pid[16];
		(void)snprintf(pid, sizeof(pid), "%d", (int)getpid());
		r = write_at(lfd, "cgroup.procs", pid);
		if (r >= 0)
			r = enable_v2_controllers(base, cpu);
	}
	if (r < 0)
		*out_what = cpu ? "enable the memory, pids and cpu controllers"
			  : "enable the memory and pids controllers";
	return r;
}

/*
 * SBX_CG_V2_SCOPE: asks the user's systemd for a transient scope with Delegate=yes holding
 * this process, checks in /proc/self/cgroup that the process is in it, and places again,
 * which must now give that scope.
 */
static int enter_scope(struct sbx_cg_place *pl, const char **out_what)
{
	struct sbx_sd_addr sd = { .bus = false };
	uint32_t rnd;
	char unit[64], own[PATH_MAX], ctls[16];
	int r = sbx_sd_find(&sd);
	if (r < 0) {
		*out_what = "find the user's systemd";
		return r;
	}
	r = io_fill_random(&rnd, sizeof(rnd));
	if (r < 0) {
		*out_what = "name the scope (getrandom)";
		return r;
	}
	/* Not "warden-<pid>-...": collect_stale() must never take a scope for a sandbox's. */
	(void)snprintf(unit, sizeof(unit), "warden-scope-%d-%08x.scope", (int)getpid(), rnd);
	r = sbx_sd_start_scope(&sd, unit, out_what);
	if (r < 0)
		return r;
	r = own_cgroup(NULL, own, sizeof(own), ctls, sizeof(ctls));
	if (r < 0) {
		*out_what = "read /proc/self/cgroup after systemd started the scope";
		return r;
	}
	const char *last = strrchr(own, '/');
	if (!last || strcmp(last + 1, unit) != 0) {
		*out_what = "find warden in the scope systemd started for it (/proc/self/cgroup)";
		return -EPROTO;
	}
	memcpy(requested_scope, own, sizeof(requested_scope));
	r = sbx_cgroup_place(pl);
	if (r < 0) {
		*out_what = "find the v2 cgroup in /proc/self/cgroup";
		return r;
	}
	if (pl->where != SBX_CG_V2_OWN) {
		*out_what = "use the scope systemd started for warden (not delegated, or shared)";
		return -EPROTO;
	}
	return 0;
}

static int create_v2(struct sbx_cgroup *cg, const char *name, bool cpu, const char **out_what)
{
	struct sbx_cg_place pl;
	char path[PATH_MAX * 2];
	int r = sbx_cgroup_place(&pl);
	if (r < 0) {
		*out_what = "find the v2 cgroup in /proc/self/cgroup";
		return r;
	}
	if (pl.where == SBX_CG_V2_SCOPE) {
		r = enter_scope(&pl, out_what);
		if (r < 0)
			return r;
	}
	r = pl.where == SBX_CG_V2_TOP ? prepare_top(cpu, out_what)
				      : prepare_own(pl.base, cpu, out_what);
	if (r < 0)
		return r;
	collect_stale(pl.base);
	(void)snprintf(path, sizeof(path), "%s/%s", pl.base, name);
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

static int apply_limits(struct sbx_cgroup *cg, const struct pol_policy *pol,
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
		cg->oom_group = r == 0;
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
		(void)read_key_at(cg->dirfd[SBX_CG_MEMORY], "memory.events", "oom_group_kill",
				  &s.oom_group_kills);
		s.oom_group = cg->oom_group;
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

bool sbx_cgroup_group_oom_killed(const struct sbx_cg_stats *s)
{
	/*
	 * With memory.oom.group set on the sandbox's cgroup, any OOM kill of one of its
	 * processes takes them all; kernels before oom_group_kill only count oom_kill.
	 */
	return s->oom_group_kills > 0 || (s->oom_group && s->oom_kills > 0);
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
	cg->oom_group = false;
	return ret;
}
