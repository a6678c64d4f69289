/* SPDX-License-Identifier: MIT */
/*
 * `warden audit`: every guarantee of docs/guarantees.md, checked on this machine for the
 * policy given, with the evidence.
 */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "changes.h"
#include "cleanup.h"
#include "cli.h"
#include "io-util.h"
#include "config.h"
#include "judge.h"
#include "log.h"
#include "policy.h"
#include "run.h"
#include "supervisor.h"
#include "wire.h"
#include "wspath.h"

DEFINE_CLEANUP(cJSON *, cJSON_Delete)

#define MOUNTINFO_MAX (256u * 1024u)

void sup_audit_init(struct sup_audit *a)
{
	memset(a, 0, sizeof(*a));
	a->listen_fd = -1;
	a->ws_fd = -1;
	a->ws_before = a->ws_during = a->ws_after = 1; /* not looked at */
}

int sup_audit_listen(struct sup_audit *a)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(sa);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
		int r = -errno;
		(void)close(fd);
		return r;
	}
	a->listen_fd = fd;
	a->port = ntohs(sa.sin_port);
	return 0;
}

__attribute__((format(printf, 5, 6))) static void row(struct sup_audit *a, const char *id,
						      enum sup_verdict v, bool inside,
						      const char *fmt, ...)
{
	if (a->n_rows >= SUP_AUDIT_MAX_ROWS)
		return;
	struct sup_audit_row *r = &a->rows[a->n_rows++];
	(void)snprintf(r->id, sizeof(r->id), "%s", id);
	r->verdict = v;
	r->inside = inside;
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(r->evidence, sizeof(r->evidence), fmt, ap);
	va_end(ap);
}

static enum sup_verdict held_if(bool ok)
{
	return ok ? SUP_HELD : SUP_VIOLATED;
}

static int read_text(const char *path, char *buf, size_t cap)
{
	return io_read_at(AT_FDCWD, path, buf, cap);
}

/* One mount of the sandbox, from its mountinfo line. */
struct mnt {
	char point[256];
	char opts[256];
	char fstype[64];
	char super[256];
};

static bool find_mount(const char *info, const char *point, struct mnt *out)
{
	bool found = false;
	const char *line = info;
	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[1024];
		if (len < sizeof(buf)) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			struct mnt m;
			char root[256];
			int id, parent;
			unsigned maj, min;
			char *sep = strstr(buf, " - ");
			if (sep &&
			    sscanf(buf, "%d %d %u:%u %255s %255s %255s", &id, &parent, &maj, &min,
				   root, m.point, m.opts) == 7 &&
			    sscanf(sep + 3, "%63s %*s %255s", m.fstype, m.super) == 2 &&
			    strcmp(m.point, point) == 0) {
				*out = m; /* the last one wins: it is the mount on top */
				found = true;
			}
		}
		line = end ? end + 1 : NULL;
	}
	return found;
}

static bool has_opt(const char *opts, const char *opt)
{
	size_t n = strlen(opt);
	for (const char *p = opts; p && *p;) {
		if (strncmp(p, opt, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

/* Counts mounts lacking nosuid (device binds in /dev keep exec off but need dev). */
static unsigned count_without(const char *info, const char *opt, char *first, size_t first_len)
{
	unsigned n = 0;
	const char *line = info;
	first[0] = '\0';
	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[1024], point[256], opts[256];
		if (len < sizeof(buf)) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			if (sscanf(buf, "%*d %*d %*u:%*u %*s %255s %255s", point, opts) == 2 &&
			    !has_opt(opts, opt)) {
				if (!n)
					(void)snprintf(first, first_len, "%s", point);
				n++;
			}
		}
		line = end ? end + 1 : NULL;
	}
	return n;
}

/* fstatat of the probe's name in the host's workspace: 0 when it is there, else -errno. */
static int host_lookup(const struct sup_audit *a)
{
	struct stat st;
	if (a->ws_fd < 0)
		return -EBADF;
	return fstatat(a->ws_fd, a->ws_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/*
 * The checks of `warden run` for one would-be workspace, as run.c makes them: opened without
 * a symlink (sup_open_workspace), then judged on its canonical path (sup_check_workspace).
 * Returns the refusal's error (0: accepted) with its line in f.
 */
static int place_refused(const char *path, uint32_t unsafe, struct fail *f)
{
	_cleanup_close_ int fd = sup_open_workspace(path, unsafe, f);
	if (fd < 0)
		return fd;
	char link[64], canon[PATH_MAX];
	(void)snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, canon, sizeof(canon) - 1);
	if (n <= 0 || (size_t)n >= sizeof(canon) - 1)
		return fail_refuse(f, n < 0 ? -errno : -ENAMETOOLONG, "resolve '%s' through %s",
				   path, link);
	canon[n] = '\0';
	return sup_check_workspace(fd, canon, unsafe, f);
}

void sup_audit_workspace_place(struct sup_audit *a, uint32_t unsafe)
{
	if (unsafe & POL_UNSAFE_WORKSPACE_ANYWHERE) {
		row(a, "fs.workspace-place", SUP_NA, false,
		    "the policy allows a workspace anywhere (unsafe: workspace-anywhere)");
		return;
	}
	static const char *const places[] = { "/", "/etc" };
	char ev[ELEMENTSOF(places)][560];
	bool ok = true;
	for (size_t i = 0; i < ELEMENTSOF(places); i++) {
		struct fail f;
		fail_init(&f);
		int r = place_refused(places[i], unsafe, &f);
		const char *why = f.what;
		/* Refused by a rule (EPERM; ELOOP for a symlink), not by an accident. */
		bool refused = r == -EPERM || r == -ELOOP;
		ok = ok && refused;
		if (refused)
			(void)snprintf(ev[i], sizeof(ev[i]), "%s", why);
		else if (r < 0)
			(void)snprintf(ev[i], sizeof(ev[i]), "'%s' could not be checked: %s",
				       places[i], why[0] ? why : strerror(-r));
		else
			(void)snprintf(ev[i], sizeof(ev[i]), "'%s' was ACCEPTED as a workspace",
				       places[i]);
	}
	row(a, "fs.workspace-place", held_if(ok), false, "%s; %s", ev[0], ev[1]);
}

static const char *const ns_ids[] = { "ns.user", "ns.pid", "ns.mount", "ns.net",
				      "ns.uts", "ns.ipc", "ns.cgroup" };

void sup_audit_outside(struct sup_audit *a, const struct pol_policy *pol, pid_t pid,
		       const struct sbx_cgroup *cg, const struct sup_run_result *res)
{
	const struct sup_identity *id = &res->identity;
	const struct wire_identity *k = &id->kernel;

	/* Identity, as /proc/<pid>/status reads from outside. */
	uint64_t want_caps = 0;
	bool caps_ok = k->cap_inh == k->cap_eff && k->cap_prm == k->cap_eff &&
		       k->cap_bnd == k->cap_eff && k->cap_amb == k->cap_eff;
	if (pol->n_caps_keep)
		row(a, "caps.none", SUP_NA, false, "the policy keeps %s (CapEff %016" PRIx64 ")",
		    res->caps_kept, k->cap_eff);
	else
		row(a, "caps.none", held_if(caps_ok && k->cap_eff == want_caps), false,
		    "CapInh/Prm/Eff/Bnd/Amb %016" PRIx64 "/%016" PRIx64 "/%016" PRIx64
		    "/%016" PRIx64 "/%016" PRIx64, k->cap_inh, k->cap_prm, k->cap_eff, k->cap_bnd,
		    k->cap_amb);
	row(a, "nnp.set", held_if(k->no_new_privs == 1), false, "NoNewPrivs %u",
	    k->no_new_privs);
	row(a, "seccomp.filter", held_if(k->seccomp == 2 && k->seccomp_filters >= 1), false,
	    "Seccomp %u, %u filter(s)", k->seccomp, k->seccomp_filters);
	a->seccomp_mode = k->seccomp;
	a->seccomp_filters = k->seccomp_filters;
	row(a, "user.unprivileged",
	    held_if(k->uid[0] == res->host_uid && (!res->init_userns || k->uid[0] != 0)), false,
	    "host uid %u gid %u (%s mode)", k->uid[0], k->gid[0],
	    res->privileged ? "privileged" : "unprivileged");
	row(a, "pid.nested", held_if(id->nspid_depth >= 2), false, "NSpid has %u level(s)",
	    id->nspid_depth);
	for (int i = 0; i < POL_NS_N; i++) {
		bool sep = id->ns_self[i] != id->ns_worker[i];
		if (!pol->namespaces[i])
			row(a, ns_ids[i], SUP_NA, false,
			    "shared by the policy (namespaces.%s: false)", sup_ns_names[i]);
		else
			row(a, ns_ids[i], held_if(sep), false, "inode %" PRIu64 " vs ours %" PRIu64,
			    id->ns_worker[i], id->ns_self[i]);
	}

	/* The mount table, as the kernel shows it for the worker. */
	char path[64];
	_cleanup_free_ char *info = malloc(MOUNTINFO_MAX);
	(void)snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	int r = info ? read_text(path, info, MOUNTINFO_MAX) : -ENOMEM;
	if (r < 0) {
		row(a, "fs.mount-table", SUP_VIOLATED, false, "cannot read %s: %s", path,
		    strerror(-r));
	} else {
		struct mnt m;
		bool root = find_mount(info, "/", &m);
		row(a, "fs.root-tmpfs-readonly",
		    held_if(root && !strcmp(m.fstype, "tmpfs") && has_opt(m.opts, "ro")), false,
		    "/ is %s (%s)", root ? m.fstype : "missing", root ? m.opts : "-");
		bool usr = find_mount(info, "/usr", &m);
		row(a, "fs.usr-readonly", held_if(usr && has_opt(m.opts, "ro")), false,
		    "/usr %s", usr ? m.opts : "not mounted");
		bool proc = find_mount(info, "/proc", &m);
		row(a, "proc.fresh",
		    held_if(proc && !strcmp(m.fstype, "proc") && has_opt(m.opts, "nosuid") &&
			    has_opt(m.opts, "nodev") && has_opt(m.opts, "noexec")),
		    false, "/proc %s %s", proc ? m.fstype : "missing", proc ? m.opts : "-");
		bool sys = find_mount(info, "/sys", &m);
		row(a, "fs.sys-absent", held_if(!sys), false, "%s",
		    sys ? "/sys is mounted" : "no /sys mount");
		bool ws = find_mount(info, "/workspace", &m);
		row(a, "fs.workspace", held_if(ws && has_opt(m.opts, "nosuid") &&
					       has_opt(m.opts, "nodev")),
		    false, "/workspace %s", ws ? m.opts : "missing");
		/* The mount on top at /workspace: in mode changes, the overlay. */
		a->ws_overlay = ws && !strcmp(m.fstype, "overlay");
		(void)snprintf(a->ws_mount, sizeof(a->ws_mount), "%s (%s)",
			       ws ? m.fstype : "missing", ws ? m.super : "-");
		char first[256];
		unsigned n = count_without(info, "nosuid", first, sizeof(first));
		row(a, "fs.nosuid", held_if(n == 0), false, "%u mount(s) without nosuid%s%s", n,
		    n ? ", first " : "", first);
	}

	a->net_shared = !pol->namespaces[POL_NS_NET];

	/* Before the probes: the name the write-workspace probe will use is not on the host. */
	a->ws_changes = res->changes_mode;
	(void)snprintf(a->ws_name, sizeof(a->ws_name), ".warden-audit-%u", (unsigned)a->port);
	a->ws_before = host_lookup(a);
	sup_audit_workspace_place(a, pol->unsafe);

	/* Interfaces of the worker's network namespace. */
	char dev[4096];
	(void)snprintf(path, sizeof(path), "/proc/%d/net/dev", (int)pid);
	r = read_text(path, dev, sizeof(dev));
	if (!pol->namespaces[POL_NS_NET]) {
		row(a, "net.only-lo", SUP_NA, false, "the host network is shared by the policy");
	} else if (r < 0) {
		row(a, "net.only-lo", SUP_VIOLATED, false, "cannot read %s", path);
	} else {
		unsigned ifs = 0, lo = 0;
		char *save = NULL;
		/* Two header lines, then "  name: counters" per interface. */
		for (char *line = strtok_r(dev, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *colon = strchr(line, ':');
			char name[64];
			if (!colon || strchr(line, '|'))
				continue;
			*colon = '\0';
			if (sscanf(line, " %63s", name) == 1) {
				ifs++;
				lo += !strcmp(name, "lo");
			}
		}
		row(a, "net.only-lo", held_if(ifs == 1 && lo == 1), false,
		    "%u interface(s), lo %s", ifs, lo ? "present" : "absent");
	}

	/* cgroup limits, read back from the cgroup itself. */
	if (!cg->version) {
		bool optout = pol->unsafe & POL_UNSAFE_NO_CGROUP;
		row(a, "limits.memory", optout ? SUP_NA : SUP_VIOLATED, false, "no cgroup%s",
		    optout ? " (unsafe: no-cgroup)" : "");
		row(a, "limits.pids", optout ? SUP_NA : SUP_VIOLATED, false, "no cgroup%s",
		    optout ? " (unsafe: no-cgroup)" : "");
		row(a, "limits.cgroup", optout ? SUP_NA : SUP_VIOLATED, false, "no cgroup%s",
		    optout ? " (unsafe: no-cgroup)" : "");
	} else {
		int in = sbx_cgroup_holds(cg, pid);
		row(a, "limits.cgroup", held_if(in == 1), false,
		    "%s lists the worker (host pid %d)%s",
		    cg->version == 2 ? "cgroup.procs" : "cgroup.procs of every hierarchy",
		    (int)pid, in == 1 ? "" : in == 0 ? ": it does not" : ": could not be read");
		char v[64];
		const char *memfile = cg->version == 2 ? "memory.max" : "memory.limit_in_bytes";
		int mfd = openat(cg->dirfd[SBX_CG_MEMORY], memfile, O_RDONLY | O_CLOEXEC);
		ssize_t n = mfd >= 0 ? read(mfd, v, sizeof(v) - 1) : -1;
		if (mfd >= 0)
			(void)close(mfd);
		v[n > 0 ? n : 0] = '\0';
		v[strcspn(v, "\n")] = '\0';
		unsigned long long mem = strtoull(v, NULL, 10);
		/*
		 * No swap: v2 memory.swap.max 0, v1 memory.memsw.limit_in_bytes (memory and swap
		 * together) the same limit. Without swap accounting the file is absent, and only
		 * a host without active swap (/proc/swaps lists none) then has none to give.
		 */
		const char *swapfile = cg->version == 2 ? "memory.swap.max"
							: "memory.memsw.limit_in_bytes";
		char sw[64], swaps[256];
		int sr = io_read_at(cg->dirfd[SBX_CG_MEMORY], swapfile, sw, sizeof(sw));
		sw[sr > 0 ? strcspn(sw, "\n") : 0] = '\0';
		bool noswap = false;
		if (sr > 0) {
			noswap = cg->version == 2 ? !strcmp(sw, "0")
						  : strtoull(sw, NULL, 10) == pol->memory_bytes;
		} else if (sr == -ENOENT && read_text("/proc/swaps", swaps, sizeof(swaps)) > 0) {
			const char *nl = strchr(swaps, '\n'); /* the header line only */
			noswap = nl && !nl[1];
		}
		row(a, "limits.memory", held_if(n > 0 && mem == pol->memory_bytes && noswap), false,
		    "%s = %s (policy %" PRIu64 "), %s %s", memfile, v, pol->memory_bytes, swapfile,
		    sr > 0 ? sw : sr == -ENOENT ? "absent (no swap accounting)" : "unreadable");
		int pfd = openat(cg->dirfd[SBX_CG_PIDS], "pids.max", O_RDONLY | O_CLOEXEC);
		n = pfd >= 0 ? read(pfd, v, sizeof(v) - 1) : -1;
		if (pfd >= 0)
			(void)close(pfd);
		v[n > 0 ? n : 0] = '\0';
		v[strcspn(v, "\n")] = '\0';
		row(a, "limits.pids", held_if(n > 0 && strtoull(v, NULL, 10) == pol->pids), false,
		    "pids.max = %s (policy %" PRIu64 ")", v, pol->pids);
	}

	/* rlimits, as /proc/<pid>/limits shows them. */
	char lim[4096];
	(void)snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	r = read_text(path, lim, sizeof(lim));
	unsigned long long nofile = 0, core = 1;
	if (r > 0) {
		char *p = strstr(lim, "Max open files");
		if (p)
			(void)sscanf(p + strlen("Max open files"), "%*s %llu", &nofile);
		p = strstr(lim, "Max core file size");
		if (p)
			(void)sscanf(p + strlen("Max core file size"), "%*s %llu", &core);
	}
	row(a, "limits.nofile", held_if(nofile == pol->nofile), false,
	    "Max open files %llu (policy %" PRIu64 ")", nofile, pol->nofile);
	row(a, "limits.core", held_if(core == 0), false, "Max core file size %llu", core);
}

struct probe_rule {
	const char *probe;
	const char *id;
	int want;            /* expected errno (0: see the detail check) */
	int alt;             /* another acceptable errno, or 0 */
};

static const struct probe_rule errno_rules[] = {
	{ "ptrace", "seccomp.ptrace", EPERM, 0 },
	{ "process_vm_readv", "seccomp.process-vm", EPERM, 0 },
	{ "mount", "seccomp.mount", EPERM, 0 },
	{ "unshare-user", "seccomp.ns-unshare", EPERM, 0 },
	{ "clone-newns", "seccomp.ns-clone", EPERM, 0 },
	{ "setns", "seccomp.setns", EPERM, EACCES },
	{ "chroot", "seccomp.chroot", EPERM, 0 },
	{ "pivot_root", "seccomp.pivot-root", EPERM, 0 },
	{ "bpf", "seccomp.bpf", EPERM, 0 },
	{ "perf_event_open", "seccomp.perf", EPERM, 0 },
	{ "userfaultfd", "seccomp.userfaultfd", EPERM, 0 },
	{ "io_uring_setup", "seccomp.io-uring", EPERM, 0 },
	{ "add_key", "seccomp.keyring", EPERM, 0 },
	{ "kexec_load", "seccomp.kexec", EPERM, 0 },
	{ "init_module", "seccomp.modules", EPERM, 0 },
	{ "reboot", "seccomp.reboot", EPERM, 0 },
	{ "swapon", "seccomp.swap", EPERM, 0 },
	{ "acct", "seccomp.acct", EPERM, 0 },
	{ "clock_settime", "seccomp.clock", EPERM, 0 },
	{ "open_by_handle_at", "seccomp.file-handles", EPERM, 0 },
	{ "mknod-chr", "seccomp.mknod", EPERM, 0 },
	{ "clone3", "seccomp.clone3", ENOSYS, 0 },
	{ "tiocsti", "seccomp.tty-inject", EPERM, 0 },
	{ "socket-packet", "seccomp.socket-families", EAFNOSUPPORT, 0 },
	{ "personality", "seccomp.personality", EPERM, 0 },
	{ "read-root", "fs.host-hidden", ENOENT, 0 },
	{ "read-shadow", "fs.shadow-hidden", ENOENT, 0 },
	{ "open-sys", "fs.sys-hidden", ENOENT, 0 },
	{ "write-usr", "fs.usr-unwritable", EROFS, 0 },
	{ "write-root", "fs.root-unwritable", EROFS, 0 },
	{ "write-etc-passwd", "fs.etc-unwritable", EROFS, EACCES },
	{ "write-proc-sys", "proc.sys-readonly", EROFS, EACCES },
	{ "dev-mem", "dev.no-mem", ENOENT, 0 },
	{ "dev-kmsg", "dev.no-kmsg", ENOENT, 0 },
};

static const struct sup_probe *find_probe(const struct sup_probe *probes, size_t n,
					  const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(probes[i].id, id))
			return &probes[i];
	return NULL;
}

static bool list_subset(const char *list, const char *const *allowed, size_t n_allowed,
			char *bad, size_t bad_len)
{
	char copy[1100];
	(void)snprintf(copy, sizeof(copy), "%s", list);
	char *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		bool ok = false;
		for (size_t i = 0; i < n_allowed && !ok; i++)
			ok = allowed[i] && !strcmp(t, allowed[i]);
		if (!ok) {
			(void)snprintf(bad, bad_len, "%s", t);
			return false;
		}
	}
	return true;
}

void sup_audit_inside(struct sup_audit *a, const struct pol_policy *pol,
		      const struct sup_probe *probes, size_t n)
{
	bool kill_mode = pol->seccomp_default == POL_SECCOMP_KILL;
	for (size_t i = 0; i < ELEMENTSOF(errno_rules); i++) {
		const struct probe_rule *pr = &errno_rules[i];
		const struct sup_probe *p = find_probe(probes, n, pr->probe);
		if (!p) {
			row(a, pr->id, SUP_VIOLATED, true, "probe %s did not report", pr->probe);
			continue;
		}
		if (!strcmp(pr->probe, "io_uring_setup") && (pol->unsafe & POL_UNSAFE_IO_URING)) {
			row(a, pr->id, SUP_NA, true, "allowed by the policy (unsafe: io_uring)");
			continue;
		}
		bool killed = kill_mode && p->err == ECHILD;
		bool ok = (int)p->err == pr->want || (pr->alt && (int)p->err == pr->alt) || killed;
		row(a, pr->id, held_if(ok), true, "%s: %s%s%s", pr->probe,
		    p->err ? strerror((int)p->err) : "succeeded", p->detail[0] ? ", " : "",
		    p->detail);
	}

	/* Masked /proc entries: covered by /dev/null, or absent. */
	static const char *const masked[][2] = { { "read-kcore", "proc.kcore-masked" },
						 { "write-sysrq", "proc.sysrq-masked" } };
	for (size_t i = 0; i < ELEMENTSOF(masked); i++) {
		const struct sup_probe *p = find_probe(probes, n, masked[i][0]);
		bool ok = p && ((p->err == 0 && !strcmp(p->detail, "char 1:3")) || p->err == ENOENT);
		row(a, masked[i][1], held_if(ok), true, "%s: %s %s", masked[i][0],
		    p ? (p->err ? strerror((int)p->err) : "opened") : "no report",
		    p ? p->detail : "");
	}

	const struct sup_probe *p = find_probe(probes, n, "dev-list");
	static const char *const dev_ok[] = { "null", "zero", "full", "random", "urandom", "tty",
					      "pts", "shm", "ptmx", "fd", "stdin", "stdout",
					      "stderr" };
	char bad[64] = "";
	bool ok = p && !p->err && list_subset(p->detail, dev_ok, ELEMENTSOF(dev_ok), bad,
					      sizeof(bad));
	row(a, "dev.minimal", held_if(ok), true, "/dev: %s%s%s", p ? p->detail : "no report",
	    bad[0] ? "; unexpected " : "", bad);

	p = find_probe(probes, n, "interfaces");
	if (!pol->namespaces[POL_NS_NET])
		row(a, "net.inside-only-lo", SUP_NA, true, "the host network is shared");
	else
		row(a, "net.inside-only-lo", held_if(p && !p->err && !strcmp(p->detail, "lo")), true,
		    "interfaces: %s", p ? p->detail : "no report");

	p = find_probe(probes, n, "host-loopback");
	if (!pol->namespaces[POL_NS_NET])
		row(a, "net.no-host-loopback", SUP_NA, true, "the host network is shared");
	else
		row(a, "net.no-host-loopback",
		    held_if(p && (p->err == ECONNREFUSED || p->err == ENETUNREACH)), true,
		    "connect to the host's %s: %s", p ? p->detail : "?",
		    p ? (p->err ? strerror((int)p->err) : "CONNECTED") : "no report");

	p = find_probe(probes, n, "pids-visible");
	unsigned long pids = p ? strtoul(p->detail, NULL, 10) : 999;
	row(a, "pid.isolated", held_if(p && !p->err && pids <= 3), true,
	    "%lu pid(s) visible in /proc", pids);
	p = find_probe(probes, n, "kill-others");
	row(a, "pid.no-signal", held_if(p && !p->err && !strncmp(p->detail, "0 ", 2)), true, "%s",
	    p ? p->detail : "no report");

	p = find_probe(probes, n, "fds");
	row(a, "fd.none-leaked", held_if(p && !p->err && !strcmp(p->detail, "0,1,2,3")), true,
	    "open fds %s (3 is the probe's own report pipe)", p ? p->detail : "?");

	p = find_probe(probes, n, "env");
	const char *env_ok[64];
	size_t n_env = 0;
	static const char *const env_defaults[] = { "PATH", "HOME", "USER", "LOGNAME", "TERM",
						    "LANG" };
	for (size_t i = 0; i < ELEMENTSOF(env_defaults); i++)
		env_ok[n_env++] = env_defaults[i];
	static char env_names[64][64];
	for (size_t i = 0; i < pol->n_env_set && n_env < 64; i++) {
		(void)snprintf(env_names[n_env], sizeof(env_names[0]), "%.*s",
			       (int)strcspn(pol->env_set[i], "="), pol->env_set[i]);
		env_ok[n_env] = env_names[n_env];
		n_env++;
	}
	for (size_t i = 0; i < pol->n_env_pass && n_env < 64; i++)
		env_ok[n_env++] = pol->env_pass[i];
	bad[0] = '\0';
	ok = p && !p->err && list_subset(p->detail, env_ok, n_env, bad, sizeof(bad));
	row(a, "env.clean", held_if(ok), true, "variables %s%s%s", p ? p->detail : "?",
	    bad[0] ? "; not from the policy: " : "", bad);

	p = find_probe(probes, n, "ids");
	char want[96];
	(void)snprintf(want, sizeof(want), "uid=%u gid=%u nnp=1 seccomp=2", pol->uid, pol->gid);
	row(a, "user.inside", held_if(p && !strcmp(p->detail, want)), true, "%s",
	    p ? p->detail : "no report");

	p = find_probe(probes, n, "caps");
	row(a, "caps.inside-none",
	    pol->n_caps_keep ? SUP_NA
			     : held_if(p && !strcmp(p->detail, "0000000000000000 0000000000000000 "
							       "0000000000000000 0000000000000000 "
							       "0000000000000000")),
	    true, "Inh Prm Eff Bnd Amb: %s", p ? p->detail : "no report");

	p = find_probe(probes, n, "rlimits");
	unsigned long long nofile = 0, fsize = 0, core = 1;
	if (p)
		(void)sscanf(p->detail, "nofile=%llu nproc=%*u fsize=%llu core=%llu", &nofile,
			     &fsize, &core);
	row(a, "limits.rlimits",
	    held_if(p && nofile == pol->nofile && fsize == pol->fsize_bytes && core == 0), true,
	    "%s", p ? p->detail : "no report");

	/*
	 * seccomp.setid: EPERM in every policy and in kill mode too (a mode with a set-id bit is
	 * answered, never killed), the file's mode unchanged, under the filter seen outside.
	 */
	const struct sup_probe *su = find_probe(probes, n, "setuid-chmod");
	const struct sup_probe *sg = find_probe(probes, n, "setgid-chmod");
	ok = su && sg && su->err == EPERM && sg->err == EPERM && !strcmp(su->detail, "mode 0755") &&
	     !strcmp(sg->detail, "mode 0755") && a->seccomp_mode == 2 && a->seccomp_filters >= 1;
	row(a, "seccomp.setid", held_if(ok), true,
	    "chmod 04755: %s, %s; chmod 02755: %s, %s; Seccomp %u, %u filter(s)",
	    su ? (su->err ? strerror((int)su->err) : "SUCCEEDED") : "no report",
	    su ? su->detail : "-",
	    sg ? (sg->err ? strerror((int)sg->err) : "SUCCEEDED") : "no report",
	    sg ? sg->detail : "-", a->seccomp_mode, a->seccomp_filters);

	/* fs.changeset, first half: the write inside, and the host's tree right after it. */
	p = find_probe(probes, n, "write-workspace");
	a->ws_probed = p && !p->err && !strcmp(p->detail, a->ws_name);
	(void)snprintf(a->ws_probe, sizeof(a->ws_probe), "%s%s%.200s",
		       p ? (p->err ? strerror((int)p->err) : "wrote ") : "no report",
		       p && p->err ? " writing " : "", p ? p->detail : "");
	a->ws_during = host_lookup(a);

	p = find_probe(probes, n, "hostname");
	if (!pol->namespaces[POL_NS_UTS])
		row(a, "uts.hostname", SUP_NA, true, "the host's uts namespace is shared");
	else
		row(a, "uts.hostname", held_if(p && !strcmp(p->detail, pol->hostname)), true,
		    "hostname %s", p ? p->detail : "?");
}

static const char *lookup_word(int r)
{
	return r == 0 ? "PRESENT" : r == -ENOENT ? "absent" : r == 1 ? "not looked at" : strerror(-r);
}

/*
 * fs.changeset: in mode changes the overlay is the mount on top at /workspace, the write the
 * probe made inside is in no host directory entry before or right after it (the sandbox
 * still lives, nothing is applied), and the run's changeset holds it.
 */
static void changeset_row(struct sup_audit *a, const struct sup_run_result *res)
{
	if (!a->ws_changes) {
		row(a, "fs.changeset", SUP_NA, false,
		    "workspace mode direct: the sandbox writes the host's tree itself (inside: %s; "
		    "host tree: %s%s)", a->ws_probe, lookup_word(a->ws_after),
		    a->ws_after == 0 ? ", the audit removed it" : "");
		return;
	}
	const struct sup_chg_entry *e = NULL;
	for (size_t i = 0; i < res->changes.n && !e; i++)
		if (!strcmp(res->changes.v[i].path, a->ws_name))
			e = &res->changes.v[i];
	bool ok = a->ws_overlay && a->ws_probed && a->ws_before == -ENOENT &&
		  a->ws_during == -ENOENT && a->ws_after == -ENOENT && e && e->kind == SUP_CHG_ADDED;
	row(a, "fs.changeset", held_if(ok), false,
	    "/workspace is %s; inside: %s; host tree: %s before, %s after the write, %s after "
	    "the run; "
	    "changeset %s %s%s%s%s (the audit discards it unapplied)",
	    a->ws_mount, a->ws_probe, lookup_word(a->ws_before), lookup_word(a->ws_during),
	    lookup_word(a->ws_after), res->changes_id[0] ? res->changes_id : "(none)",
	    e ? "holds it (" : "does not hold it", e ? sup_chg_kind_name(e->kind) : "",
	    e ? ", " : "", e ? (e->verdict == SUP_CHG_APPLIED ? "would be applied)"
				: e->verdict == SUP_CHG_HELD ? "held)" : "refused)") : "");
}

void sup_audit_finish(struct sup_audit *a, const struct sup_run_result *res)
{
	if (a->listen_fd >= 0) {
		int c = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		row(a, "net.host-listener-untouched", a->net_shared ? SUP_NA : held_if(c < 0), false,
		    "the host listener on 127.0.0.1:%u %s%s", a->port,
		    c < 0 ? "saw no connection" : "ACCEPTED a connection",
		    a->net_shared ? " (the host network is shared by the policy)" : "");
		if (c >= 0)
			(void)close(c);
		(void)close(a->listen_fd);
		a->listen_fd = -1;
	}
	changeset_row(a, res);
	row(a, "lifetime.no-survivor", res->cg_version ? held_if(res->cg_emptied) : SUP_NA,
	    false, "%s", res->cg_version ? (res->cg_emptied ? "the sandbox cgroup was empty "
								"after the worker exited"
							      : "processes remained in the cgroup")
					 : "no cgroup to check (unsafe: no-cgroup)");
}

/* ---- the judge: the children that read what a sandbox wrote (eval/confined.c) ---- */

/* Who the judge runs as in privileged mode: SUP_RUNDIR_OWNER of eval/rundir.h (nobody). */
#define AUDIT_JUDGE_ID 65534u
/* What a probe of the judge asks it to do once it is confined. */
#define JUDGE_NOTHING 'n'
#define JUDGE_OPEN 'o'
#define JUDGE_SOCKET 's'

/* A judge confined as eval's are, which says it is ready, then does what the gate asks. */
static _Noreturn void judge_probe_child(bool privileged, int gate, int ans,
					const struct sbx_seccomp_prog *prog)
{
	int fds[] = { gate };
	struct sbx_judge_spec spec = {
		.privileged = privileged,
		.uid = AUDIT_JUDGE_ID,
		.gid = AUDIT_JUDGE_ID,
		.read_fds = fds,
		.n_read_fds = 1,
		.out_fd = ans,
	};
	char what = 0;
	if (sbx_judge_confine(&spec, prog) < 0 || write(ans, "r", 1) != 1 ||
	    read(gate, &what, 1) != 1)
		_exit(3);
	if (what == JUDGE_OPEN)
		(void)openat(AT_FDCWD, "/etc/passwd", O_RDONLY | O_CLOEXEC);
	else if (what == JUDGE_SOCKET)
		(void)socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	_exit(write(ans, "done", 4) == 4 ? 0 : 4);
}

struct judge_seen {
	bool ready;
	int status_err;               /* reading /proc/<pid>/status: 0 or -errno */
	struct wire_identity id;
	int fds_err;                  /* listing /proc/<pid>/fd: 0 or -errno */
	unsigned n_fds;
	int wait_status;
};

/*
 * Runs one judge probe: what (JUDGE_*) once it is confined; with look, reads its status and
 * counts its fds first, from outside. Returns 0 with *out, or -errno when it could not run.
 */
static int judge_probe(bool privileged, char what, bool look, struct judge_seen *out)
{
	int g[2], a[2];
	memset(out, 0, sizeof(*out));
	if (pipe2(g, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(a, O_CLOEXEC) < 0) {
		int r = -errno;
		(void)close(g[0]);
		(void)close(g[1]);
		return r;
	}
	struct sbx_seccomp_prog prog = { 0 };
	int r = sbx_judge_filter_build(a[1], &prog);
	pid_t pid = r < 0 ? -1 : fork();
	if (pid == 0) {
		(void)close(g[1]);
		(void)close(a[0]);
		judge_probe_child(privileged, g[0], a[1], &prog);
	}
	if (r >= 0 && pid < 0)
		r = -errno;
	sbx_seccomp_prog_done(&prog);
	(void)close(g[0]);
	(void)close(a[1]);
	char byte = 0;
	if (pid > 0) {
		out->ready = read(a[0], &byte, 1) == 1 && byte == 'r';
		if (out->ready && look) {
			char path[64];
			_cleanup_free_ char *buf = malloc(WIRE_STATUS_MAX_BYTES);
			(void)snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
			int n = buf ? read_text(path, buf, WIRE_STATUS_MAX_BYTES) : -ENOMEM;
			out->status_err = n < 0 ? n
				: wire_parse_status(buf, (size_t)n, &out->id, NULL) < 0 ? -EBADMSG : 0;
			(void)snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
			DIR *d = opendir(path);
			struct dirent *de;
			out->fds_err = d ? 0 : -errno;
			while (d && (de = readdir(d)))
				out->n_fds += de->d_name[0] != '.';
			if (d)
				(void)closedir(d);
		}
		if (write(g[1], &what, 1) != 1 && r >= 0)
			r = -errno;
		while (waitpid(pid, &out->wait_status, 0) < 0 && errno == EINTR)
			;
	}
	(void)close(g[1]);
	(void)close(a[0]);
	return r;
}

static const char *end_word(const struct judge_seen *s, char *buf, size_t cap)
{
	if (!s->ready)
		return "never became ready";
	if (WIFSIGNALED(s->wait_status)) {
		const char *name = sigabbrev_np(WTERMSIG(s->wait_status));
		(void)snprintf(buf, cap, "killed by SIG%s", name ? name : "?");
	} else {
		(void)snprintf(buf, cap, "SUCCEEDED (exit %d)", WEXITSTATUS(s->wait_status));
	}
	return buf;
}

/*
 * eval.judge-identity and eval.judge-filter: a child confined as the static criteria judge
 * and `warden grade`'s run folder reader are (sandbox/judge.c), seen from outside while it
 * waits, then made to open a file and to make a socket, each of which must kill it.
 */
static void judge_rows(struct sup_audit *a, bool privileged)
{
	struct judge_seen s, o, k;
	int r = judge_probe(privileged, JUDGE_OPEN, true, &s);
	int r2 = judge_probe(privileged, JUDGE_SOCKET, false, &k);
	int r3 = judge_probe(privileged, JUDGE_NOTHING, false, &o);
	const struct wire_identity *id = &s.id;
	uint32_t want = privileged ? AUDIT_JUDGE_ID : (uint32_t)getuid();
	bool ids = true;
	for (int i = 0; i < 4; i++)
		ids = ids && id->uid[i] == want && (!privileged || id->gid[i] == want);
	/* Unprivileged, a user's bounding set cannot be lowered; with no_new_privs it gives nothing. */
	bool caps = !id->cap_inh && !id->cap_prm && !id->cap_eff && !id->cap_amb &&
		    (!privileged || !id->cap_bnd);
	/*
	 * Its fds: root lists them; a plain user cannot, since the judge is not dumpable (which
	 * is what keeps the user's other processes from tracing it), so then they are not counted.
	 */
	bool fds_hidden = !privileged && getuid() != 0 && s.fds_err == -EACCES;
	char fds[48];
	if (fds_hidden)
		(void)snprintf(fds, sizeof(fds), "fds not visible to uid %u", (unsigned)getuid());
	else
		(void)snprintf(fds, sizeof(fds), "%u fd(s)", s.n_fds);
	bool ok = r >= 0 && s.ready && s.status_err == 0 && ids && caps && id->no_new_privs == 1 &&
		  id->seccomp == 2 && (fds_hidden || (s.fds_err == 0 && s.n_fds == 2));
	if (r < 0 || !s.ready || s.status_err < 0)
		row(a, "eval.judge-identity", SUP_VIOLATED, false,
		    "a confined judge could not be looked at: %s",
		    r < 0 ? strerror(-r) : !s.ready ? "it never became ready"
						    : strerror(-s.status_err));
	else
		row(a, "eval.judge-identity", held_if(ok), false,
		    "uid %u gid %u; CapInh/Prm/Eff/Bnd/Amb %016" PRIx64 "/%016" PRIx64 "/%016" PRIx64
		    "/%016" PRIx64 "/%016" PRIx64 "; NoNewPrivs %u; Seccomp %u; %s",
		    id->uid[0], id->gid[0], id->cap_inh, id->cap_prm, id->cap_eff, id->cap_bnd,
		    id->cap_amb, id->no_new_privs, id->seccomp, fds);

	char e1[64], e2[64], e3[64];
	bool sys = r >= 0 && r2 >= 0 && r3 >= 0 && s.ready && k.ready && o.ready &&
		   WIFSIGNALED(s.wait_status) && WTERMSIG(s.wait_status) == SIGSYS &&
		   WIFSIGNALED(k.wait_status) && WTERMSIG(k.wait_status) == SIGSYS &&
		   WIFEXITED(o.wait_status) && WEXITSTATUS(o.wait_status) == 0;
	row(a, "eval.judge-filter", held_if(sys), false,
	    "openat(/etc/passwd): %s; socket(AF_INET): %s; the control, which only writes its "
	    "answer: %s", end_word(&s, e1, sizeof(e1)), end_word(&k, e2, sizeof(e2)),
	    WIFEXITED(o.wait_status) && o.ready ? "exited normally" : end_word(&o, e3, sizeof(e3)));
}

bool sup_audit_held(const struct sup_audit *a)
{
	for (size_t i = 0; i < a->n_rows; i++)
		if (a->rows[i].verdict == SUP_VIOLATED)
			return false;
	return true;
}

static const char usage[] =
	"Usage: warden audit [--policy FILE] [--workspace DIR] [--json]\n"
	"\n"
	"Builds the sandbox the policy describes (the embedded default without --policy) and\n"
	"checks every guarantee in docs/guarantees.md from both sides: probes inside the sandbox\n"
	"try what each guarantee forbids, and the supervisor reads the kernel's view from\n"
	"outside (/proc/<pid>/status, namespace inodes, the mount table, interfaces, the cgroup,\n"
	"rlimits). Guarantees the policy deliberately weakens are reported as n/a with the\n"
	"reason.\n"
	"\n"
	"The workspace is an empty scratch folder unless --workspace names one. One probe\n"
	"writes .warden-audit-PORT there: in workspace mode changes the run's changeset is\n"
	"never applied and is discarded afterwards; in mode direct the audit removes the file.\n"
	"\n"
	"Exit status: 0 every guarantee the policy requires held; 1 one was violated; 125 the\n"
	"sandbox could not be built (as for warden run); 2 bad usage.\n";

/*
 * The probe's file, where it reached the host's tree (workspace mode direct, or a changeset
 * that failed): the name was absent before the probes, so the file is the audit's own.
 */
static void remove_probe_file(const struct sup_audit *a)
{
	if (a->ws_fd < 0 || a->ws_before != -ENOENT || a->ws_after != 0)
		return;
	if (unlinkat(a->ws_fd, a->ws_name, 0) < 0)
		log_errno(-errno, "remove the audit's file '%s' from the workspace, ignoring",
			  a->ws_name);
}

enum {
	OPT_POLICY = CLI_LONG,
	OPT_WORKSPACE,
	OPT_JSON,
};

static const struct cli_option audit_options[] = {
	{ "policy", OPT_POLICY, true },
	{ "workspace", OPT_WORKSPACE, true },
	{ "json", OPT_JSON, false },
	{ NULL, 0, false },
};

static const struct cli_command audit_command = {
	.name = "audit",
	.help = usage,
	.options = audit_options,
	.usage_exit = CLI_EXIT_USAGE,
};

int sup_cmd_audit(int argc, char **argv)
{
	struct sup_run_opts opts = { 0 };
	bool json = false;
	_cleanup_(cli_done) struct cli cli = { 0 };
	if (cli_start(&cli, &audit_command, argc, argv) < 0)
		return SUP_EXIT_SETUP;
	int key;
	while ((key = cli_next(&cli)) > 0) {
		switch (key) {
		case OPT_POLICY:
			opts.policy_path = cli.arg;
			break;
		case OPT_WORKSPACE:
			opts.workspace = cli.arg;
			break;
		case OPT_JSON:
			json = true;
			break;
		default:
			return cli_usage(&audit_command, "option %d is not handled", key);
		}
	}
	if (key == CLI_STOP)
		return cli.exit_code;
	/* The audit's sandbox gets an empty scratch workspace unless one is named. */
	char scratch[] = "/tmp/warden-audit-XXXXXX";
	if (!opts.workspace) {
		if (!mkdtemp(scratch)) {
			log_errno(-errno, "create a scratch workspace");
			return SUP_EXIT_SETUP;
		}
		opts.workspace = scratch;
	}
	/*
	 * The changeset the audit's run makes is never applied: its probe's file must not land
	 * in the workspace. It is discarded below, once the probe's write has been found in it.
	 */
	opts.apply_set = true;
	opts.apply = POL_WS_APPLY_NONE;
	static char *argv_none[] = { (char *)"audit", NULL };
	opts.argv = argv_none;
	struct sup_audit *a = calloc(1, sizeof(*a));
	if (!a) {
		log_error("out of memory");
		if (opts.workspace == scratch)
			(void)rmdir(scratch);
		return SUP_EXIT_SETUP;
	}
	sup_audit_init(a);
	opts.audit = a;
	/*
	 * The host's side of the workspace, where fs.changeset looks for the probe's file. The
	 * run opens the same path itself, with its own checks (wspath.h), and says why when it
	 * cannot; this descriptor is only looked through, and written only to remove the
	 * probe's own file. Without it the row cannot hold (host_lookup answers -EBADF).
	 */
	a->ws_fd = open(opts.workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/*
	 * At the normal level the run's notes about its changeset ("kept ...: warden diff ID")
	 * would name one the audit discards: only errors are printed while it runs.
	 */
	enum log_level level = sup_log_level;
	if (level == LOG_LEVEL_NORMAL)
		sup_log_level = LOG_LEVEL_QUIET;
	struct sup_run_result res;
	int code = sup_run(&opts, &res);
	sup_log_level = level;
	a->ws_after = host_lookup(a);
	remove_probe_file(a);
	if (res.changes_id[0] && res.changes_kept) {
		char *dargv[] = { (char *)"discard", res.changes_id, NULL };
		if (sup_cmd_discard(2, dargv) != 0)
			log_error("the audit's changeset %s could not be discarded: warden discard %s",
				  res.changes_id, res.changes_id);
	}
	if (a->ws_fd >= 0)
		(void)close(a->ws_fd);
	a->ws_fd = -1;
	if (opts.workspace == scratch && rmdir(scratch) < 0)
		log_errno(-errno, "remove the scratch workspace %s, ignoring", scratch);
	if (code != 0) {
		sup_run_result_done(&res);
		if (a->listen_fd >= 0)
			(void)close(a->listen_fd);
		free(a);
		return code;
	}
	sup_audit_finish(a, &res);
	judge_rows(a, res.privileged);
	sup_run_result_done(&res);
	bool held = sup_audit_held(a);

	struct utsname u;
	if (uname(&u) < 0)
		(void)snprintf(u.release, sizeof(u.release), "unknown");
	static const char *const vnames[] = { "held", "violated", "n/a" };
	if (json) {
		_cleanup_(cJSON_Deletep) cJSON *root = cJSON_CreateObject();
		cJSON *arr = NULL;
		bool ok = root && cJSON_AddStringToObject(root, "warden_version", WARDEN_VERSION) &&
			  cJSON_AddStringToObject(root, "policy", res.policy_source) &&
			  cJSON_AddStringToObject(root, "policy_digest", res.policy_digest) &&
			  cJSON_AddStringToObject(root, "kernel", u.release) &&
			  cJSON_AddStringToObject(root, "mode", res.privileged ? "privileged"
									       : "unprivileged") &&
			  cJSON_AddBoolToObject(root, "held", held) &&
			  (arr = cJSON_AddArrayToObject(root, "guarantees"));
		for (size_t i = 0; ok && i < a->n_rows; i++) {
			cJSON *o = cJSON_CreateObject();
			ok = o && cJSON_AddItemToArray(arr, o) &&
			     cJSON_AddStringToObject(o, "id", a->rows[i].id) &&
			     cJSON_AddStringToObject(o, "status", vnames[a->rows[i].verdict]) &&
			     cJSON_AddStringToObject(o, "side",
						     a->rows[i].inside ? "inside" : "outside") &&
			     cJSON_AddStringToObject(o, "evidence", a->rows[i].evidence);
		}
		_cleanup_free_ char *out = ok ? cJSON_Print(root) : NULL;
		if (!out) {
			free(a);
			log_error("out of memory");
			return 1;
		}
		(void)puts(out);
	} else {
		(void)printf("warden %s audit: policy %s (%s), kernel %s, %s mode\n\n",
			     WARDEN_VERSION, res.policy_source, res.policy_digest, u.release,
			     res.privileged ? "privileged" : "unprivileged");
		(void)printf("%-28s %-9s %-8s %s\n", "GUARANTEE", "STATUS", "SIDE", "EVIDENCE");
		for (size_t i = 0; i < a->n_rows; i++)
			(void)printf("%-28s %-9s %-8s %s\n", a->rows[i].id,
				     vnames[a->rows[i].verdict],
				     a->rows[i].inside ? "inside" : "outside", a->rows[i].evidence);
		size_t nh = 0, nv = 0, nn = 0;
		for (size_t i = 0; i < a->n_rows; i++) {
			nh += a->rows[i].verdict == SUP_HELD;
			nv += a->rows[i].verdict == SUP_VIOLATED;
			nn += a->rows[i].verdict == SUP_NA;
		}
		(void)printf("\n%zu held, %zu violated, %zu not applicable\n", nh, nv, nn);
	}
	free(a);
	return held ? 0 : 1;
}
