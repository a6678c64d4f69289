/* SPDX-License-Identifier: MIT */
/*
 * The worker's audit probes: each one tries, from inside the sandbox and with exactly the
 * command's confinement, something a guarantee forbids (or reads a fact), and reports what
 * happened: 0 when the attempt succeeded, else its errno, plus a short observation. The
 * supervisor, not the worker, decides what each result means for the policy in force.
 *
 * Every probe runs in its own forked child, so a probe the filter kills (kill mode) or one
 * that hangs ends only itself.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "worker-util.h"

#define PROBE_TIMEOUT_MS 2000

struct outcome {
	int32_t err;
	char detail[WIRE_MAX_PROBE_TEXT];
};

/* The host loopback port the supervisor listens on (set from AUDIT). */
static uint16_t host_port;

static void note(struct outcome *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct outcome *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(o->detail, sizeof(o->detail), fmt, ap);
	va_end(ap);
}

/* Appends item to the detail as a comma-separated list; silently stops when it is full. */
static void append(struct outcome *o, const char *item, size_t len)
{
	size_t off = strlen(o->detail);
	if (off >= sizeof(o->detail) - 1)
		return;
	(void)snprintf(o->detail + off, sizeof(o->detail) - off, "%s%.*s", off ? "," : "",
		       (int)len, item);
}

/* Lists the entries of a directory (not . or .., nor the fd of the listing itself). */
static void list_dir(struct outcome *o, const char *path, bool skip_own_fd)
{
	DIR *d = opendir(path);
	if (!d) {
		o->err = errno;
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (skip_own_fd) {
			char *end;
			long fd = strtol(de->d_name, &end, 10);
			if (!*end && fd == dirfd(d))
				continue;
		}
		append(o, de->d_name, strlen(de->d_name));
	}
	(void)closedir(d);
}

/* Records the result of a syscall-like call: r < 0 means errno holds the reason. */
static void result(struct outcome *o, long r)
{
	o->err = r < 0 ? errno : 0;
	if (o->err > 4095 || o->err < 0)
		o->err = EIO;
}

static void p_ptrace(struct outcome *o)
{
	result(o, syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, 1, 0, 0));
}

static void p_process_vm(struct outcome *o)
{
	char buf[8];
	struct iovec local = { buf, sizeof(buf) }, remote = { (void *)0x10000, sizeof(buf) };
	result(o, syscall(SYS_process_vm_readv, 1, &local, 1, &remote, 1, 0));
}

static void p_mount(struct outcome *o)
{
	result(o, mount("none", "/tmp", "tmpfs", 0, NULL));
}

static void p_unshare_user(struct outcome *o)
{
	result(o, unshare(CLONE_NEWUSER));
}

static void p_clone_newns(struct outcome *o)
{
	long r = syscall(SYS_clone, (unsigned long)(CLONE_NEWNS | SIGCHLD), 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	result(o, r);
}

static void p_setns(struct outcome *o)
{
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		result(o, -1);
		return;
	}
	result(o, setns(fd, CLONE_NEWNET));
}

static void p_chroot(struct outcome *o)
{
	result(o, chroot("/tmp"));
}

static void p_pivot_root(struct outcome *o)
{
	result(o, syscall(SYS_pivot_root, "/tmp", "/tmp"));
}

static void p_bpf(struct outcome *o)
{
	result(o, syscall(SYS_bpf, 0, NULL, 0));
}

static void p_perf(struct outcome *o)
{
	result(o, syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
}

static void p_userfaultfd(struct outcome *o)
{
	result(o, syscall(SYS_userfaultfd, 0));
}

static void p_io_uring(struct outcome *o)
{
	result(o, syscall(SYS_io_uring_setup, 1, NULL));
}

static void p_keyctl(struct outcome *o)
{
	result(o, syscall(SYS_add_key, "user", "warden-audit", "x", 1, -3));
}

static void p_kexec(struct outcome *o)
{
	result(o, syscall(SYS_kexec_load, 0, 0, NULL, 0));
}

static void p_module(struct outcome *o)
{
	result(o, syscall(SYS_init_module, NULL, 0, ""));
}

static void p_reboot(struct outcome *o)
{
	result(o, syscall(SYS_reboot, 0, 0, 0, NULL));
}

static void p_swapon(struct outcome *o)
{
	result(o, syscall(SYS_swapon, "/tmp/warden-audit-swap", 0));
}

static void p_acct(struct outcome *o)
{
	result(o, syscall(SYS_acct, NULL));
}

static void p_clock(struct outcome *o)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	result(o, clock_settime(CLOCK_REALTIME, &ts));
}

static void p_handle(struct outcome *o)
{
	result(o, syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, 0));
}

static void p_mknod(struct outcome *o)
{
	result(o, mknod("/tmp/warden-audit-node", S_IFCHR | 0600, makedev(1, 3)));
}

static void p_clone3(struct outcome *o)
{
	struct clone_args a = { .exit_signal = SIGCHLD };
	long r = syscall(SYS_clone3, &a, sizeof(a));
	if (r == 0)
		_exit(0);
	result(o, r);
	if (r > 0)
		(void)waitpid((pid_t)r, NULL, 0);
}

static void p_tiocsti(struct outcome *o)
{
	char c = ' ';
	result(o, ioctl(0, TIOCSTI, &c));
}

static void p_socket_packet(struct outcome *o)
{
	result(o, socket(AF_PACKET, SOCK_RAW, 0));
}

static void p_personality(struct outcome *o)
{
	result(o, personality(READ_IMPLIES_EXEC));
}

static void open_probe(struct outcome *o, const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC | O_NOCTTY, 0644);
	result(o, fd);
	if (fd >= 0) {
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode))
			note(o, "char %u:%u", major(st.st_rdev), minor(st.st_rdev));
		(void)close(fd);
	}
}

static void p_read_root(struct outcome *o)
{
	open_probe(o, "/root", O_RDONLY | O_DIRECTORY);
}

static void p_read_shadow(struct outcome *o)
{
	open_probe(o, "/etc/shadow", O_RDONLY);
}

static void p_sys(struct outcome *o)
{
	open_probe(o, "/sys/kernel", O_RDONLY | O_DIRECTORY);
}

static void p_write_usr(struct outcome *o)
{
	open_probe(o, "/usr/.warden-audit", O_WRONLY | O_CREAT | O_EXCL);
}

static void p_write_root(struct outcome *o)
{
	open_probe(o, "/.warden-audit", O_WRONLY | O_CREAT | O_EXCL);
}

static void p_write_etc(struct outcome *o)
{
	open_probe(o, "/etc/passwd", O_WRONLY);
}

/*
 * fs.changeset: writes a file at the top of the workspace and names it in the detail. The
 * name carries the port of the supervisor's listener (".warden-audit-PORT"), which the
 * supervisor knows too: it looks for that name in the host's tree while the sandbox lives.
 */
static void p_write_workspace(struct outcome *o)
{
	static const char text[] = "written inside the sandbox by warden audit\n";
	char path[64];
	(void)snprintf(path, sizeof(path), "/workspace/.warden-audit-%u", (unsigned)host_port);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		result(o, -1);
		return;
	}
	ssize_t n = write(fd, text, sizeof(text) - 1);
	if (n < 0)
		result(o, -1);
	else if (n != (ssize_t)sizeof(text) - 1)
		o->err = EIO;
	if (close(fd) < 0 && !o->err)
		result(o, -1);
	note(o, "%s", path + strlen("/workspace/"));
}

/*
 * seccomp.setid: a file of the sandbox's own in /tmp, 0755, then chmod to mode (set-uid or
 * set-gid); the errno of that chmod, and the mode the file has afterwards in the detail.
 */
static void setid_chmod(struct outcome *o, const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
	if (fd < 0 || fchmod(fd, 0755) < 0) {
		result(o, -1);
		note(o, "could not make %s to try it on", path);
		if (fd >= 0)
			(void)close(fd);
		return;
	}
	(void)close(fd);
	result(o, chmod(path, mode));
	struct stat st;
	if (stat(path, &st) == 0)
		note(o, "mode %04o", (unsigned)(st.st_mode & 07777));
	else
		note(o, "mode unknown (stat: %d)", errno);
	(void)unlink(path);
}

static void p_setuid_chmod(struct outcome *o)
{
	setid_chmod(o, "/tmp/.warden-audit-setuid", 04755);
}

static void p_setgid_chmod(struct outcome *o)
{
	setid_chmod(o, "/tmp/.warden-audit-setgid", 02755);
}

static void p_proc_sys(struct outcome *o)
{
	open_probe(o, "/proc/sys/kernel/hostname", O_WRONLY);
}

static void p_kcore(struct outcome *o)
{
	open_probe(o, "/proc/kcore", O_RDONLY);
}

static void p_sysrq(struct outcome *o)
{
	open_probe(o, "/proc/sysrq-trigger", O_WRONLY);
}

static void p_dev_mem(struct outcome *o)
{
	open_probe(o, "/dev/mem", O_RDONLY);
}

static void p_dev_kmsg(struct outcome *o)
{
	open_probe(o, "/dev/kmsg", O_RDONLY);
}

static void p_dev_list(struct outcome *o)
{
	list_dir(o, "/dev", false);
}

static void p_ifaces(struct outcome *o)
{
	struct if_nameindex *ifs = if_nameindex();
	if (!ifs) {
		result(o, -1);
		return;
	}
	for (struct if_nameindex *i = ifs; i->if_index; i++)
		append(o, i->if_name, strlen(i->if_name));
	if_freenameindex(ifs);
}

static void p_host_loopback(struct outcome *o)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		result(o, -1);
		return;
	}
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(host_port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	result(o, connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
	note(o, "127.0.0.1:%u", (unsigned)host_port);
	(void)close(fd);
}

static void p_pids(struct outcome *o)
{
	DIR *d = opendir("/proc");
	if (!d) {
		result(o, -1);
		return;
	}
	unsigned n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
			n++;
	(void)closedir(d);
	note(o, "%u", n);
}

static void p_fds(struct outcome *o)
{
	/* As the command would be: only 0, 1 and 2, plus the report pipe we must keep. */
	list_dir(o, "/proc/self/fd", true);
}

static void p_env(struct outcome *o)
{
	extern char **environ;
	for (char **e = environ; *e; e++)
		append(o, *e, strcspn(*e, "="));
}

static void p_ids(struct outcome *o)
{
	note(o, "uid=%u gid=%u nnp=%d seccomp=%d", (unsigned)getuid(), (unsigned)getgid(),
	     prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
}

static void p_caps(struct outcome *o)
{
	struct wire_identity id;
	int r = wrk_read_identity("/proc/self/status", &id);
	if (r < 0) {
		o->err = -r;
		return;
	}
	note(o, "%016llx %016llx %016llx %016llx %016llx", (unsigned long long)id.cap_inh,
	     (unsigned long long)id.cap_prm, (unsigned long long)id.cap_eff,
	     (unsigned long long)id.cap_bnd, (unsigned long long)id.cap_amb);
}

static void p_rlimits(struct outcome *o)
{
	struct rlimit nofile, nproc, fsize, core;
	if (getrlimit(RLIMIT_NOFILE, &nofile) < 0 || getrlimit(RLIMIT_NPROC, &nproc) < 0 ||
	    getrlimit(RLIMIT_FSIZE, &fsize) < 0 || getrlimit(RLIMIT_CORE, &core) < 0) {
		result(o, -1);
		return;
	}
	note(o, "nofile=%llu nproc=%llu fsize=%llu core=%llu", (unsigned long long)nofile.rlim_max,
	     (unsigned long long)nproc.rlim_max, (unsigned long long)fsize.rlim_max,
	     (unsigned long long)core.rlim_max);
}

static void p_hostname(struct outcome *o)
{
	struct utsname u;
	if (uname(&u) < 0) {
		result(o, -1);
		return;
	}
	note(o, "%s", u.nodename);
}

static void p_kill_host(struct outcome *o)
{
	/* pid 1 is us; a host pid cannot even be named. 2..300 covers the usual host daemons. */
	unsigned hits = 0;
	for (pid_t pid = 2; pid < 300; pid++)
		if (pid != getpid() && kill(pid, 0) == 0)
			hits++;
	note(o, "%u other pids signalable", hits);
}

struct probe {
	const char *id;
	void (*fn)(struct outcome *o);
};

static const struct probe probes[] = {
	{ "ptrace", p_ptrace },
	{ "process_vm_readv", p_process_vm },
	{ "mount", p_mount },
	{ "unshare-user", p_unshare_user },
	{ "clone-newns", p_clone_newns },
	{ "setns", p_setns },
	{ "chroot", p_chroot },
	{ "pivot_root", p_pivot_root },
	{ "bpf", p_bpf },
	{ "perf_event_open", p_perf },
	{ "userfaultfd", p_userfaultfd },
	{ "io_uring_setup", p_io_uring },
	{ "add_key", p_keyctl },
	{ "kexec_load", p_kexec },
	{ "init_module", p_module },
	{ "reboot", p_reboot },
	{ "swapon", p_swapon },
	{ "acct", p_acct },
	{ "clock_settime", p_clock },
	{ "open_by_handle_at", p_handle },
	{ "mknod-chr", p_mknod },
	{ "clone3", p_clone3 },
	{ "tiocsti", p_tiocsti },
	{ "socket-packet", p_socket_packet },
	{ "personality", p_personality },
	{ "read-root", p_read_root },
	{ "read-shadow", p_read_shadow },
	{ "open-sys", p_sys },
	{ "write-usr", p_write_usr },
	{ "write-root", p_write_root },
	{ "write-etc-passwd", p_write_etc },
	{ "write-proc-sys", p_proc_sys },
	{ "write-workspace", p_write_workspace },
	{ "setuid-chmod", p_setuid_chmod },
	{ "setgid-chmod", p_setgid_chmod },
	{ "read-kcore", p_kcore },
	{ "write-sysrq", p_sysrq },
	{ "dev-mem", p_dev_mem },
	{ "dev-kmsg", p_dev_kmsg },
	{ "dev-list", p_dev_list },
	{ "interfaces", p_ifaces },
	{ "host-loopback", p_host_loopback },
	{ "pids-visible", p_pids },
	{ "kill-others", p_kill_host },
	{ "fds", p_fds },
	{ "env", p_env },
	{ "ids", p_ids },
	{ "caps", p_caps },
	{ "rlimits", p_rlimits },
	{ "hostname", p_hostname },
};

/* Runs one probe in a child; fills *o (err EINTR-style ETIME for a hang, ECHILD if killed). */
static void run_one(const struct probe *p, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		o->err = errno;
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		o->err = errno;
		(void)close(pipefd[0]);
		(void)close(pipefd[1]);
		return;
	}
	if (pid == 0) {
		(void)close(pipefd[0]);
		/* As the command is started: its own session, only 0-2 (and the report pipe). */
		(void)setsid();
		int keep = fcntl(pipefd[1], F_DUPFD_CLOEXEC, 3);
		if (keep != 3) {
			(void)dup3(pipefd[1], 3, O_CLOEXEC);
			keep = 3;
		}
		(void)syscall(SYS_close_range, 4, ~0U, 0);
		struct outcome out;
		memset(&out, 0, sizeof(out));
		p->fn(&out);
		(void)!write(keep, &out, sizeof(out));
		_exit(0);
	}
	(void)close(pipefd[1]);
	struct pollfd pfd = { .fd = pipefd[0], .events = POLLIN };
	int n = poll(&pfd, 1, PROBE_TIMEOUT_MS);
	ssize_t got = 0;
	if (n > 0)
		got = read(pipefd[0], o, sizeof(*o));
	(void)close(pipefd[0]);
	if (n <= 0)
		(void)kill(pid, SIGKILL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof(*o)) {
		memset(o, 0, sizeof(*o));
		if (n <= 0) {
			o->err = ETIME;
			note(o, "no answer within %d ms", PROBE_TIMEOUT_MS);
		} else {
			o->err = ECHILD;
			if (WIFSIGNALED(status))
				note(o, "killed by signal %d", WTERMSIG(status));
		}
	}
	o->detail[sizeof(o->detail) - 1] = '\0';
	if (o->err < 0 || o->err > 4095)
		o->err = EIO;
}

int wrk_audit(uint16_t port, int (*send)(void *ctx, const uint8_t *payload, size_t len),
	      void *ctx)
{
	host_port = port;
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		struct outcome o;
		run_one(&probes[i], &o);
		uint8_t buf[4 + WIRE_MAX_PROBE_ID + 4 + 4 + WIRE_MAX_PROBE_TEXT];
		struct wire_wr w;
		wire_wr_init(&w, buf, sizeof(buf));
		if (!wire_put_probe(&w, probes[i].id, (uint32_t)o.err, o.detail, strlen(o.detail)))
			return -EMSGSIZE;
		int r = send(ctx, buf, w.len);
		if (r < 0)
			return r;
	}
	return 0;
}
