/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the tests/reliability suite; see rel.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>

#include "rel.h"

#define CG_ROOT "/sys/fs/cgroup"

void rel_sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void rel_private_mounts(void)
{
	if (unshare(CLONE_NEWNS) < 0)
		fail_msg("unshare(CLONE_NEWNS): %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		fail_msg("make / private: %s", strerror(errno));
}

static bool is_fs(const char *path, unsigned long magic)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 && (unsigned long)sf.f_type == magic;
}

/* One line of /proc/PID/cgroup: "ID:CONTROLLERS:PATH". */
struct cg_line {
	char id[16];
	char ctls[256];
	char path[PATH_MAX];
};

/* Reads up to max lines of /proc/<pid>/cgroup ("self" for pid 0). Returns how many. */
static int read_cgroup_lines(pid_t pid, struct cg_line *out, int max)
{
	char file[64];
	if (pid)
		(void)snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	else
		(void)snprintf(file, sizeof(file), "/proc/self/cgroup");
	FILE *f = fopen(file, "re");
	if (!f)
		return 0;
	char line[PATH_MAX + 300];
	int n = 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = *c2 = '\0';
		if (strlen(line) >= sizeof(out[n].id) || strlen(c1 + 1) >= sizeof(out[n].ctls) ||
		    strlen(c2 + 1) >= sizeof(out[n].path))
			continue;
		(void)snprintf(out[n].id, sizeof(out[n].id), "%s", line);
		(void)snprintf(out[n].ctls, sizeof(out[n].ctls), "%s", c1 + 1);
		(void)snprintf(out[n].path, sizeof(out[n].path), "%s", c2 + 1);
		n++;
	}
	(void)fclose(f);
	return n;
}

static bool has_controller(const char *ctls, const char *want)
{
	char copy[256];
	(void)snprintf(copy, sizeof(copy), "%s", ctls);
	char *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (strcmp(t, want) == 0)
			return true;
	return false;
}

void rel_cgroups_find(struct rel_cgroups *cg)
{
	static const char *const v1[] = { "memory", "pids", "cpu", "cpuacct" };
	struct cg_line lines[32];
	int n = read_cgroup_lines(0, lines, 32);
	memset(cg, 0, sizeof(*cg));
	if (is_fs(CG_ROOT, CGROUP2_SUPER_MAGIC)) {
		for (int i = 0; i < n; i++) {
			if (strcmp(lines[i].id, "0") != 0 || lines[i].ctls[0])
				continue;
			th_pathf(cg->parent[0], CG_ROOT "%s",
				 strcmp(lines[i].path, "/") ? lines[i].path : "");
			/*
			 * Root, with the kernel's root cgroup at the top (no cgroup.type there):
			 * warden's own subtree at the top, since this program shares its cgroup
			 * with the warden it starts (docs/run.md).
			 */
			if (geteuid() == 0 && access(CG_ROOT "/cgroup.type", F_OK) < 0)
				th_pathf(cg->parent[0], CG_ROOT "/warden");
			cg->n = 1;
			cg->version = 2;
			return;
		}
		fail_msg("no cgroup v2 line in /proc/self/cgroup");
	}
	cg->version = 1;
	for (size_t k = 0; k < sizeof(v1) / sizeof(v1[0]); k++) {
		int i = 0;
		while (i < n && !has_controller(lines[i].ctls, v1[k]))
			i++;
		if (i == n)
			fail_msg("no v1 %s line in /proc/self/cgroup", v1[k]);
		char dir[PATH_MAX];
		th_pathf(dir, CG_ROOT "/%s%s", lines[i].ctls,
			 strcmp(lines[i].path, "/") ? lines[i].path : "");
		bool dup = false;
		for (int j = 0; j < cg->n; j++)
			dup = dup || strcmp(cg->parent[j], dir) == 0;
		if (!dup)
			(void)snprintf(cg->parent[cg->n++], PATH_MAX, "%s", dir);
	}
}

/* The supervisor pid in a "warden-<pid>-<hex>" name, or 0 when the name is not one. */
static pid_t cg_owner(const char *name)
{
	if (strncmp(name, "warden-", 7) != 0)
		return 0;
	char *end;
	errno = 0;
	long pid = strtol(name + 7, &end, 10);
	if (errno || end == name + 7 || *end != '-' || pid <= 0 || pid > INT_MAX)
		return 0;
	return (pid_t)pid;
}

static bool cg_matches(pid_t pid, pid_t owner)
{
	if (!pid)
		return false;
	if (owner > 0)
		return pid == owner;
	if (owner < 0)
		return kill(pid, 0) < 0 && errno == ESRCH;
	return true;
}

static void append(char *out, size_t len, const char *s)
{
	if (!out || !len)
		return;
	size_t used = strlen(out);
	(void)snprintf(out + used, len - used, "%s%s", used ? " " : "", s);
}

int rel_cgroups_count(const struct rel_cgroups *cg, pid_t owner, char *names, size_t len)
{
	int count = 0;
	if (names && len)
		names[0] = '\0';
	for (int i = 0; i < cg->n; i++) {
		DIR *d = opendir(cg->parent[i]);
		if (!d && errno == ENOENT)
			continue; /* warden's subtree at the top before its first sandbox */
		if (!d)
			fail_msg("opendir %s: %s", cg->parent[i], strerror(errno));
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_type != DT_DIR || !cg_matches(cg_owner(de->d_name), owner))
				continue;
			count++;
			append(names, len, de->d_name);
		}
		(void)closedir(d);
	}
	return count;
}

int rel_cgroups_count_of(const struct rel_cgroups *cg, const pid_t *owners, size_t n)
{
	int count = 0;
	for (int i = 0; i < cg->n; i++) {
		DIR *d = opendir(cg->parent[i]);
		if (!d && errno == ENOENT)
			continue;
		if (!d)
			fail_msg("opendir %s: %s", cg->parent[i], strerror(errno));
		struct dirent *de;
		while ((de = readdir(d))) {
			pid_t pid = de->d_type == DT_DIR ? cg_owner(de->d_name) : 0;
			for (size_t k = 0; pid && k < n; k++)
				if (owners[k] == pid) {
					count++;
					break;
				}
		}
		(void)closedir(d);
	}
	return count;
}

int rel_cgroups_procs(const struct rel_cgroups *cg, pid_t owner)
{
	int count = 0;
	for (int i = 0; i < cg->n; i++) {
		DIR *d = opendir(cg->parent[i]);
		if (!d)
			continue;
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_type != DT_DIR || cg_owner(de->d_name) != owner)
				continue;
			char file[PATH_MAX * 2];
			(void)snprintf(file, sizeof(file), "%s/%s/cgroup.procs", cg->parent[i],
				       de->d_name);
			FILE *f = fopen(file, "re");
			if (!f)
				continue;
			char line[64];
			while (fgets(line, sizeof(line), f))
				count++;
			(void)fclose(f);
		}
		(void)closedir(d);
	}
	return count;
}

/* The (device, inode) pairs of every flock in /proc/locks; returns how many (at most max). */
struct lock_key {
	unsigned maj, min;
	unsigned long ino;
};

static size_t read_locks(struct lock_key *out, size_t max)
{
	FILE *f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	char line[512];
	size_t n = 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "FLOCK") || strstr(line, "->"))
			continue;
		char *save = NULL;
		for (char *t = strtok_r(line, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
			struct lock_key k;
			char tail;
			if (sscanf(t, "%x:%x:%lu%c", &k.maj, &k.min, &k.ino, &tail) == 3) {
				out[n++] = k;
				break;
			}
		}
	}
	(void)fclose(f);
	return n;
}

static bool locked(const struct stat *st, const struct lock_key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (keys[i].ino == (unsigned long)st->st_ino && keys[i].maj == major(st->st_dev) &&
		    keys[i].min == minor(st->st_dev))
			return true;
	return false;
}

#define MAX_LOCKS 4096

/*
 * Whether dfd/name (st) is flocked. /proc/locks names the inode the lock is on, which on
 * overlayfs (a container's root) is the layer's, not the one stat sees: there a shared
 * non-blocking flock is tried instead, and dropped at once.
 */
static bool held_at(int dfd, const char *name, const struct stat *st,
		    const struct lock_key *keys, size_t n)
{
	if (locked(st, keys, n))
		return true;
	struct statfs sf;
	if (statfs(TH_IDS_DIR, &sf) < 0 || sf.f_type != OVERLAYFS_SUPER_MAGIC)
		return false;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool held = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	(void)close(fd); /* drops a lock we got */
	return held;
}

/* Counts the entries of TH_IDS_DIR; with count > 0 only the ids base .. base + count - 1. */
static void ids_count(uint32_t base, uint32_t count, struct rel_ids *out)
{
	static struct lock_key keys[MAX_LOCKS];
	out->total = out->held = 0;
	DIR *d = opendir(TH_IDS_DIR);
	if (!d)
		return; /* warden creates it on first use */
	size_t n = read_locks(keys, MAX_LOCKS);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (count) {
			char *end;
			errno = 0;
			unsigned long id = strtoul(de->d_name, &end, 10);
			if (errno || *end || end == de->d_name || id < base || id - base >= count)
				continue;
		}
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* released meanwhile */
		out->total++;
		if (held_at(dirfd(d), de->d_name, &st, keys, n))
			out->held++;
	}
	(void)closedir(d);
}

void rel_ids_count(struct rel_ids *out)
{
	ids_count(0, 0, out);
}

void rel_ids_count_range(uint32_t base, uint32_t count, struct rel_ids *out)
{
	ids_count(base, count, out);
}

int rel_id_state(uint32_t id)
{
	static struct lock_key keys[MAX_LOCKS];
	char path[64];
	(void)snprintf(path, sizeof(path), TH_IDS_DIR "/%u", id);
	struct stat st;
	if (lstat(path, &st) < 0)
		return -1;
	return held_at(AT_FDCWD, path, &st, keys, read_locks(keys, MAX_LOCKS)) ? 1 : 0;
}

bool rel_id_remove_stale(uint32_t id)
{
	char path[64];
	(void)snprintf(path, sizeof(path), TH_IDS_DIR "/%u", id);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool removed = false;
	struct stat held, named;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &held) == 0 &&
	    lstat(path, &named) == 0 && held.st_dev == named.st_dev && held.st_ino == named.st_ino)
		removed = unlink(path) == 0;
	(void)close(fd);
	return removed;
}

/* This program's scope: the hierarchy where its cgroup path is deepest, and that path. */
static struct {
	bool known, all;
	char id[16];
	char path[PATH_MAX];
} scope;

static void scope_init(void)
{
	if (scope.known)
		return;
	struct cg_line lines[32];
	int n = read_cgroup_lines(0, lines, 32);
	size_t best = 0;
	for (int i = 0; i < n; i++) {
		size_t len = strlen(lines[i].path);
		if (strcmp(lines[i].path, "/") != 0 && len > best) {
			best = len;
			(void)snprintf(scope.id, sizeof(scope.id), "%s", lines[i].id);
			(void)snprintf(scope.path, sizeof(scope.path), "%s", lines[i].path);
		}
	}
	scope.all = best == 0;
	scope.known = true;
}

bool rel_pid_in_scope(pid_t pid)
{
	scope_init();
	if (scope.all)
		return true;
	struct cg_line lines[32];
	int n = read_cgroup_lines(pid, lines, 32);
	size_t len = strlen(scope.path);
	for (int i = 0; i < n; i++) {
		/*
		 * A sandbox in warden's v2 subtree at the top, /warden/warden-<pid>-<hex>: in
		 * scope when its supervisor is, or is gone (a leak is this program's to find).
		 */
		pid_t sup = 0;
		if (!strcmp(lines[i].id, "0") && !strncmp(lines[i].path, "/warden/", 8)) {
			char name[64];
			(void)snprintf(name, sizeof(name), "%.*s", (int)strcspn(lines[i].path + 8, "/"),
				       lines[i].path + 8);
			sup = cg_owner(name);
		}
		if (sup && sup != pid)
			return (kill(sup, 0) < 0 && errno == ESRCH) || rel_pid_in_scope(sup);
		if (strcmp(lines[i].id, scope.id) != 0)
			continue;
		return strncmp(lines[i].path, scope.path, len) == 0 &&
		       (lines[i].path[len] == '\0' || lines[i].path[len] == '/');
	}
	return false;
}

struct ino_set {
	bool scoped;
	size_t n;
	ino_t v[8192];
};

static void add_netns(pid_t pid, void *ctx)
{
	struct ino_set *s = ctx;
	if (s->scoped && !rel_pid_in_scope(pid))
		return;
	char path[64];
	struct stat st;
	(void)snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	if (stat(path, &st) < 0)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == st.st_ino)
			return;
	if (s->n < sizeof(s->v) / sizeof(s->v[0]))
		s->v[s->n++] = st.st_ino;
}

static int count_netns(bool scoped)
{
	static struct ino_set s;
	s.scoped = scoped;
	s.n = 0;
	th_each_pid(add_netns, &s);
	return (int)s.n;
}

int rel_count_netns(void)
{
	return count_netns(true);
}

int rel_count_netns_host(void)
{
	return count_netns(false);
}

struct zombie_count {
	bool scoped;
	int n;
};

bool rel_proc_stat(pid_t pid, char *out_state, pid_t *out_ppid)
{
	char path[64], buf[1024];
	(void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t len = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	/* "pid (comm) S ppid ...": comm may hold anything, so look after the last ')'. */
	char *rp = strrchr(buf, ')');
	char state = 0;
	int ppid = 0;
	if (!rp || sscanf(rp + 1, " %c %d", &state, &ppid) != 2)
		return false;
	*out_state = state;
	if (out_ppid)
		*out_ppid = (pid_t)ppid;
	return true;
}

static void add_zombie(pid_t pid, void *ctx)
{
	struct zombie_count *z = ctx;
	char state;
	pid_t ppid;
	if (!rel_proc_stat(pid, &state, &ppid) || state != 'Z')
		return;
	if (!z->scoped || rel_pid_in_scope(ppid) || ppid == getpid())
		z->n++;
}

int rel_count_zombies(void)
{
	struct zombie_count z = { .scoped = true };
	th_each_pid(add_zombie, &z);
	return z.n;
}

int rel_count_zombies_host(void)
{
	struct zombie_count z = { .scoped = false };
	th_each_pid(add_zombie, &z);
	return z.n;
}

int rel_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		fail_msg("opendir /proc/self/fd: %s", strerror(errno));
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && atoi(de->d_name) != dirfd(d))
			n++;
	(void)closedir(d);
	return n;
}

int rel_count_mounts(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		fail_msg("open /proc/self/mountinfo: %s", strerror(errno));
	/* Not counted: the tmpfs warden mounts once on its state directory when that is on
	 * overlayfs (a container's root), the one mount it leaves on purpose. */
	int n = 0;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0)
		n += !strstr(line, " /var/lib/warden/changes ");
	free(line);
	(void)fclose(f);
	return n;
}

enum rel_record rel_record_state(const char *dir, cJSON **out, int *temps)
{
	if (out)
		*out = NULL;
	if (temps) {
		*temps = 0;
		DIR *d = opendir(dir);
		if (d) {
			struct dirent *de;
			while ((de = readdir(d)))
				if (strncmp(de->d_name, ".record.json.", 13) == 0)
					(*temps)++;
			(void)closedir(d);
		}
	}
	char path[PATH_MAX];
	th_pathf(path, "%s/record.json", dir);
	size_t len = 0;
	char *buf = th_read_file(path, TH_RECORD_MAX, true, &len);
	if (!buf)
		return errno == ENOENT || errno == ENOTDIR ? REL_RECORD_ABSENT : REL_RECORD_INVALID;
	cJSON *root = cJSON_ParseWithLength(buf, len);
	free(buf);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return REL_RECORD_INVALID;
	}
	if (out)
		*out = root;
	else
		cJSON_Delete(root);
	return REL_RECORD_VALID;
}

static long status_long(pid_t pid, const char *key, bool last)
{
	char buf[4096], v[256];
	if (!th_proc_status(pid, buf, sizeof(buf)) || !th_status_field(buf, key, v, sizeof(v)))
		return -1;
	const char *s = v;
	if (last) {
		const char *sp = strrchr(v, '\t');
		if (!sp)
			sp = strrchr(v, ' ');
		if (sp)
			s = sp + 1;
	}
	char *end;
	long n = strtol(s, &end, 10);
	return end == s ? -1 : n;
}

long rel_nspid_inner(pid_t pid)
{
	return status_long(pid, "NSpid", true);
}

long rel_uid_of(pid_t pid)
{
	return status_long(pid, "Uid", false);
}

struct worker_search {
	pid_t warden, found;
};

static void match_worker(pid_t pid, void *ctx)
{
	struct worker_search *w = ctx;
	if (w->found || status_long(pid, "PPid", false) != (long)w->warden)
		return;
	if (rel_nspid_inner(pid) == 1)
		w->found = pid;
}

pid_t rel_find_worker(pid_t warden)
{
	struct worker_search w = { .warden = warden };
	th_each_pid(match_worker, &w);
	return w.found;
}

int rel_wait_procs(const char *marker, const char *argv0_suffix, pid_t exclude, int want,
		   bool at_least, unsigned ms)
{
	uint64_t end = th_now_ms() + ms;
	for (;;) {
		int n = th_count_procs(marker, argv0_suffix, exclude);
		if (at_least ? n >= want : n == want)
			return n;
		if (th_now_ms() >= end)
			return n;
		rel_sleep_ms(20);
	}
}

int rel_spawn(const struct th_opts *o, const char *const *cmd, struct rel_run *r)
{
	struct th_exec x;
	int e = th_exec_build(o, cmd, &x);
	if (e < 0)
		return e;
	memset(r, 0, sizeof(*r));
	r->pid = -1;
	r->pidfd = -1;
	r->outfd = memfd_create("rel-stdout", MFD_CLOEXEC);
	r->errfd = memfd_create("rel-stderr", MFD_CLOEXEC);
	if (r->outfd < 0 || r->errfd < 0) {
		e = errno;
		if (r->outfd >= 0)
			(void)close(r->outfd);
		if (r->errfd >= 0)
			(void)close(r->errfd);
		return -e;
	}
	(void)fflush(stdout);
	(void)fflush(stderr);
	r->t0 = th_now_ms();
	pid_t pid = fork();
	if (pid < 0) {
		e = errno;
		(void)close(r->outfd);
		(void)close(r->errfd);
		return -e;
	}
	if (pid == 0) {
		(void)setpgid(0, 0);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(r->outfd, 1) < 0 ||
		    dup2(r->errfd, 2) < 0)
			_exit(120);
		if (chdir("/") < 0)
			_exit(121);
		execve(x.argv[0], (char *const *)x.argv, (char *const *)x.envp);
		_exit(122);
	}
	r->pid = pid;
	r->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (r->pidfd < 0) {
		e = errno;
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		(void)close(r->outfd);
		(void)close(r->errfd);
		return -e;
	}
	return 0;
}

int rel_spawn_measured(const struct th_opts *o, const char *const *cmd, struct rel_run *r)
{
	const char *helper = secure_getenv("REL_RUSAGE");
	if (!helper || !*helper)
		fail_msg("REL_RUSAGE is not set (run this through 'meson test')");
	const char *const prefix[] = { helper, NULL };
	struct th_opts m = *o;
	m.prefix = prefix;
	return rel_spawn(&m, cmd, r);
}

void rel_reap(struct rel_run *r, unsigned timeout_ms, struct rel_done *d)
{
	memset(d, 0, sizeof(*d));
	uint64_t deadline = r->t0 + timeout_ms;
	for (;;) {
		uint64_t now = th_now_ms();
		if (now >= deadline) {
			(void)kill(-r->pid, SIGKILL);
			(void)kill(r->pid, SIGKILL);
			d->hard_timeout = true;
			break;
		}
		struct pollfd pfd = { .fd = r->pidfd, .events = POLLIN };
		int n = poll(&pfd, 1, (int)(deadline - now));
		if (n > 0)
			break;
	}
	int status = 0;
	while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR)
		;
	d->elapsed_ms = th_now_ms() - r->t0;
	if (d->hard_timeout)
		d->code = -1;
	else if (WIFEXITED(status))
		d->code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		d->code = 128 + WTERMSIG(status);
	else
		d->code = -1;
	ssize_t n = pread(r->outfd, d->out, sizeof(d->out) - 1, 0);
	d->out[n > 0 ? n : 0] = '\0';
	n = pread(r->errfd, d->err, sizeof(d->err) - 1, 0);
	d->err[n > 0 ? n : 0] = '\0';
	d->maxrss_kib = -1;
	const char *line = strstr(d->out, "RUSAGE ");
	int child, code;
	long kib;
	if (line && sscanf(line, "RUSAGE %d %d %ld", &child, &code, &kib) == 3) {
		d->child = (pid_t)child;
		d->maxrss_kib = kib;
	}
	(void)close(r->outfd);
	(void)close(r->errfd);
	(void)close(r->pidfd);
	r->outfd = r->errfd = r->pidfd = -1;
	r->pid = -1;
}
