/* SPDX-License-Identifier: MIT */
/*
 * probe: a static, unsanitized helper that runs inside the sandbox, attempts one thing, and
 * prints what happened as one line "OK ..." or "ERR <errno name> <errno>". It never decides
 * whether the result is good: the test that ran it does.
 *
 *   probe status                  print the Cap*, NoNewPrivs, Seccomp*, Uid, Gid lines
 *   probe open PATH               open(PATH, O_RDONLY)
 *   probe openw PATH              open(PATH, O_WRONLY) without creating or writing anything
 *   probe stat PATH               lstat(PATH): "OK TYPE UID GID MODE SIZE MAJOR:MINOR"
 *   probe write PATH              create PATH and write a byte
 *   probe mkdir PATH              mkdir(PATH)
 *   probe rename FROM TO          rename(FROM, TO)
 *   probe connect ADDR PORT       TCP connect to an IPv4 address
 *   probe udp ADDR PORT           send one UDP datagram to an IPv4 address
 *   probe kill PID SIG            kill(PID, SIG)
 *   probe fds                     list open fds (from /proc/self/fd)
 *   probe env                     print the environment, one per line
 *   probe pids                    list the pids visible in /proc
 *   probe forkbomb N              fork up to N sleeping children; print how many succeeded
 *   probe nofile N                open /dev/null N times: "OPENED k", then the error if k < N
 *   probe membomb MIB             allocate and touch MIB MiB; print "TOUCHED n" every 64 MiB
 *                                 and at the end
 *   probe daemon [MS [MARKER]]    double-fork a child that sleeps 60 s, print its pid, and
 *                                 exit MS ms (default 100) later; MARKER only tags the
 *                                 command line so that the host can find these processes
 *   probe tiocsti                 ioctl(0, TIOCSTI, "x")
 *   probe tioclinux               ioctl(0, TIOCLINUX, TIOCL_GETSHIFTSTATE), a harmless query
 *   probe syscall NAME            try a forbidden syscall: ptrace, mount, umount2 (of /usr),
 *                                 unshare-user, unshare-net, clone-newuser, chroot,
 *                                 pivot_root, setns, bpf, perf_event_open, keyctl, add_key,
 *                                 request_key, userfaultfd, io_uring_setup, kexec_load,
 *                                 kexec_file_load, init_module, finit_module, delete_module,
 *                                 reboot, swapon, swapoff, acct, settimeofday, clock_settime,
 *                                 adjtimex (a read-only query), iopl, ioperm,
 *                                 open_by_handle_at, name_to_handle_at (of /), mknod,
 *                                 socket-packet, socket-netlink, socket-raw (AF_INET
 *                                 SOCK_RAW), socket-vsock, clone3, personality
 *                                 (READ_IMPLIES_EXEC), personality-addr-no-randomize
 *   probe ptrace PID|child|sibling
 *                                 PTRACE_ATTACH to PID, to a sleeping child of the probe, or
 *                                 (from a second child) to that child, its sibling
 *   probe vmread PID|child        process_vm_readv of one byte from PID or from a child (at
 *                                 the address of a variable of the probe)
 *   probe chroot-escape           keep an O_PATH fd on /, chroot("/tmp") (printed), then
 *                                 fchdir to the fd and chdir("..") 64 times; prints
 *                                 "CWD maj:min:ino ROOT maj:min:ino" of "." and "/"
 *   probe userns-mount            unshare(CLONE_NEWUSER) (printed); only when that succeeds,
 *                                 mount a tmpfs on /tmp (printed)
 *   probe setns PATH              open PATH; when that fails its error, else setns(fd, 0)
 *   probe environ-scan NEEDLE     read every /proc/PID/environ: "FOUND PID" for each one
 *                                 holding NEEDLE, then "SCANNED n" (how many were readable)
 *   probe rtlinks                 an RTM_GETLINK dump over NETLINK_ROUTE: one link name a line
 *   probe exit N                  exit with status N
 *   probe signal SIG              kill itself with SIG
 *   probe sleep SECONDS [MARKER]  sleep; MARKER as for daemon
 *   probe fill PATH MIB           create PATH and write MIB chunks of 1 MiB with SIGXFSZ
 *                                 blocked: "WROTE k" (whole chunks), "SIGXFSZ" when that
 *                                 signal was raised meanwhile, then "OK 0" or the error
 *   probe statfs PATH             statfs(PATH): "OK <f_type in hex> <f_blocks * f_bsize>"
 *   probe ls PATH                 the names in PATH but . and .., sorted bytewise, one a line
 *   probe cat [PATH]              copy PATH (default: stdin) to stdout
 *   probe hostname                print the node name and the domain name from uname()
 *   probe ifaces                  every network interface (if_nameindex): "NAME up|down"
 *   probe loopback                listen on 127.0.0.1:0, connect to it, pass one byte across:
 *                                 "OK 1"
 *   probe rlimit NAME             getrlimit of NOFILE, NPROC, FSIZE or CORE: "SOFT HARD", each
 *                                 a number or "inf"
 *   probe shm KEY                 shmget(KEY, 0, 0): look up an existing System V shared
 *                                 memory segment (KEY in decimal); "OK <shmid>"
 *   probe bindport PORT           bind a TCP socket to 127.0.0.1:PORT
 *   probe rawsyscall NR [ARG...]  syscall(NR, ARG...) with up to 6 decimal arguments
 *   probe chmod PATH              chmod(PATH, 0600)
 *   probe setid CALL PATH MODE    CALL as a raw syscall on PATH with MODE (octal, up to 64
 *                                 bits, put in the register unchanged): chmod, fchmod (of an
 *                                 fd opened O_RDONLY), fchmodat, fchmodat2; open, openat,
 *                                 creat, openat2 (O_WRONLY | O_CREAT | O_EXCL); tmpfile
 *                                 (openat of PATH's directory with O_TMPFILE, then linked
 *                                 as PATH); mkdir, mkdirat; mknod, mknodat (S_IFIFO | MODE)
 *   probe killself SIG            ignore SIG (unless 0), then kill(getpid(), SIG)
 *   probe spin MS [CPU_MS]        busy-loop for MS ms of wall-clock time (or until it used
 *                                 CPU_MS of CPU), then print "CPU <usec>", the user +
 *                                 system time it used (getrusage)
 *
 * Numbers are parsed strictly; a malformed one makes the probe exit 2, like a bad command.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <linux/sched.h>
#include <linux/tiocl.h>
#include <net/if.h>
#include <sched.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A whole number in [min, max], or exit 2: a malformed argument is a bad command. */
static long num(const char *s, long min, long max)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "probe: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static int report(long r)
{
	if (r < 0) {
		int e = errno;
		printf("ERR %s %d\n", strerrorname_np(e) ? strerrorname_np(e) : "?", e);
		return 1;
	}
	printf("OK %ld\n", r);
	return 0;
}

static int cmd_status(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return report(-1);
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Cap", 3) || !strncmp(line, "NoNewPrivs", 10) ||
		    !strncmp(line, "Seccomp", 7) || !strncmp(line, "Uid", 3) ||
		    !strncmp(line, "Gid", 3) || !strncmp(line, "Groups", 6) ||
		    !strncmp(line, "NSpid", 5))
			fputs(line, stdout);
	}
	fclose(f);
	return 0;
}

static int cmd_connect(const char *addr, const char *port, int type)
{
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return report(-1);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)num(port, 1, 65535)) };
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		errno = EINVAL;
		return report(-1);
	}
	if (type == SOCK_DGRAM) {
		ssize_t n = sendto(fd, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa));
		return report(n);
	}
	return report(connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
}

static int list_dir(const char *path, int numeric_only)
{
	DIR *d = opendir(path);
	if (!d)
		return report(-1);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (numeric_only && (de->d_name[0] < '0' || de->d_name[0] > '9'))
			continue;
		if (!numeric_only && strtol(de->d_name, NULL, 10) == dirfd(d))
			continue;
		printf("%s\n", de->d_name);
	}
	closedir(d);
	return 0;
}

static int cmd_forkbomb(long n)
{
	long ok = 0;
	for (long i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0)
			break;
		if (p == 0) {
			sleep(30);
			_exit(0);
		}
		ok++;
	}
	printf("FORKED %ld\n", ok);
	fflush(stdout);
	signal(SIGTERM, SIG_IGN);
	kill(0, SIGKILL);
	return 0;
}

static int cmd_membomb(long mib)
{
	long touched = 0;
	for (long i = 0; i < mib; i++) {
		char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (p == MAP_FAILED)
			break;
		memset(p, 0xa5, 1 << 20);
		touched++;
		if (touched % 64 == 0) {
			printf("TOUCHED %ld\n", touched);
			fflush(stdout);
		}
	}
	printf("TOUCHED %ld\n", touched);
	return 0;
}

static int cmd_nofile(long n)
{
	long ok = 0;
	for (; ok < n; ok++) {
		/* Deliberately without O_CLOEXEC: nothing is exec'd, and the fds are the point. */
		if (open("/dev/null", O_RDONLY) < 0) {
			int e = errno;
			printf("OPENED %ld\n", ok);
			errno = e;
			return report(-1);
		}
	}
	printf("OPENED %ld\n", ok);
	return 0;
}

static int cmd_stat(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return report(-1);
	const char *type = S_ISREG(st.st_mode) ? "reg" : S_ISDIR(st.st_mode) ? "dir" :
			   S_ISCHR(st.st_mode) ? "chr" : S_ISBLK(st.st_mode) ? "blk" :
			   S_ISLNK(st.st_mode) ? "lnk" : S_ISFIFO(st.st_mode) ? "fifo" : "sock";
	printf("OK %s %u %u %04o %lld %u:%u\n", type, (unsigned)st.st_uid, (unsigned)st.st_gid,
	       (unsigned)(st.st_mode & 07777), (long long)st.st_size, major(st.st_rdev),
	       minor(st.st_rdev));
	return 0;
}

/* Writes all of buf to fd; returns 0 or -1 with errno set (0 bytes written counts as EIO). */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int cmd_fill(const char *path, long mib)
{
	/* Blocked, not ignored: the signal stays pending, so whether it was raised shows. */
	sigset_t xfsz;
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	if (sigprocmask(SIG_BLOCK, &xfsz, NULL) < 0)
		return report(-1);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return report(-1);
	static char chunk[1 << 20];
	memset(chunk, 0x5a, sizeof(chunk));
	long wrote = 0;
	int r = 0;
	for (; wrote < mib; wrote++) {
		r = write_all(fd, chunk, sizeof(chunk));
		if (r < 0)
			break;
	}
	int e = errno;
	(void)close(fd);
	printf("WROTE %ld\n", wrote);
	sigset_t pending;
	if (sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ))
		printf("SIGXFSZ\n");
	errno = e;
	return report(r < 0 ? -1 : 0);
}

static int cmd_statfs(const char *path)
{
	struct statfs sf;
	if (statfs(path, &sf) < 0)
		return report(-1);
	printf("OK %lx %llu\n", (unsigned long)sf.f_type,
	       (unsigned long long)sf.f_blocks * (unsigned long long)sf.f_bsize);
	return 0;
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int cmd_ls(const char *path)
{
	struct dirent **ents = NULL;
	int n = scandir(path, &ents, NULL, name_cmp);
	if (n < 0)
		return report(-1);
	for (int i = 0; i < n; i++) {
		if (strcmp(ents[i]->d_name, ".") != 0 && strcmp(ents[i]->d_name, "..") != 0)
			printf("%s\n", ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	return 0;
}

static int cmd_cat(const char *path)
{
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0)
		return report(-1);
	(void)fflush(stdout);
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return report(-1);
		if (n == 0)
			return 0;
		if (write_all(1, buf, (size_t)n) < 0)
			return 1;
	}
}

static int cmd_hostname(void)
{
	struct utsname u;
	if (uname(&u) < 0)
		return report(-1);
	printf("%s\n%s\n", u.nodename, u.domainname);
	return 0;
}

static int cmd_ifaces(void)
{
	struct if_nameindex *ifs = if_nameindex();
	if (!ifs)
		return report(-1);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		if_freenameindex(ifs);
		return report(-1);
	}
	int rc = 0;
	for (struct if_nameindex *i = ifs; i->if_index; i++) {
		struct ifreq ifr;
		memset(&ifr, 0, sizeof(ifr));
		(void)snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", i->if_name);
		if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
			printf("%s ", i->if_name);
			rc = report(-1);
			continue;
		}
		printf("%s %s\n", i->if_name, (ifr.ifr_flags & IFF_UP) ? "up" : "down");
	}
	(void)close(fd);
	if_freenameindex(ifs);
	return rc;
}

static int cmd_loopback(void)
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return report(-1);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &len) < 0)
		return report(-1);
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return report(-1);
	int a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (a < 0 || send(c, "x", 1, MSG_NOSIGNAL) != 1)
		return report(-1);
	char got = 0;
	ssize_t n = recv(a, &got, 1, 0);
	if (n == 1 && got != 'x') {
		errno = EBADMSG;
		n = -1;
	}
	return report(n);
}

static int cmd_rlimit(const char *name)
{
	static const struct {
		const char *name;
		int resource;
	} known[] = { { "NOFILE", RLIMIT_NOFILE }, { "NPROC", RLIMIT_NPROC },
		      { "FSIZE", RLIMIT_FSIZE }, { "CORE", RLIMIT_CORE } };
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcmp(name, known[i].name) != 0)
			continue;
		struct rlimit rl;
		if (getrlimit(known[i].resource, &rl) < 0)
			return report(-1);
		char soft[32] = "inf", hard[32] = "inf";
		if (rl.rlim_cur != RLIM_INFINITY)
			(void)snprintf(soft, sizeof(soft), "%llu", (unsigned long long)rl.rlim_cur);
		if (rl.rlim_max != RLIM_INFINITY)
			(void)snprintf(hard, sizeof(hard), "%llu", (unsigned long long)rl.rlim_max);
		printf("%s %s\n", soft, hard);
		return 0;
	}
	return 2;
}

static int cmd_bindport(const char *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return report(-1);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)num(port, 1, 65535)),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	return report(bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
}

static int cmd_rawsyscall(int argc, char **argv)
{
	long nr = num(argv[2], 0, INT_MAX);
	long a[6] = { 0 };
	for (int i = 3; i < argc; i++)
		a[i - 3] = num(argv[i], LONG_MIN, LONG_MAX);
	return report(syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}

/* An octal number that fits 64 bits, or exit 2. */
static unsigned long long octal(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 8);
	if (errno || *s < '0' || *s > '7' || *end) {
		fprintf(stderr, "probe: bad octal number '%s'\n", s);
		exit(2);
	}
	return v;
}

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* Linux 6.6; the same number on every architecture here */
#endif

/*
 * One syscall taking a file mode, made raw so that libc can neither drop nor rewrite the
 * mode; the whole 64-bit value reaches the register.
 */
static long try_setid(const char *call, const char *path, unsigned long long mode)
{
	const int create = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
	if (!strcmp(call, "fchmod")) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		return fd < 0 ? fd : syscall(SYS_fchmod, fd, mode);
	}
	if (!strcmp(call, "fchmodat"))
		return syscall(SYS_fchmodat, AT_FDCWD, path, mode);
	if (!strcmp(call, "fchmodat2"))
		return syscall(SYS_fchmodat2, AT_FDCWD, path, mode, 0);
	if (!strcmp(call, "openat"))
		return syscall(SYS_openat, AT_FDCWD, path, create, mode);
	if (!strcmp(call, "openat2")) {
		struct open_how how = { .flags = (unsigned long long)create, .mode = mode };
		return syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	}
	if (!strcmp(call, "tmpfile")) {
		char dir[PATH_MAX] = ".", fdpath[64];
		const char *slash = strrchr(path, '/');
		if (slash && (size_t)(slash - path) >= sizeof(dir)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		if (slash == path)
			(void)snprintf(dir, sizeof(dir), "/");
		else if (slash)
			(void)snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		long fd = syscall(SYS_openat, AT_FDCWD, dir, O_WRONLY | O_TMPFILE | O_CLOEXEC,
				  mode);
		if (fd < 0)
			return fd;
		(void)snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%ld", fd);
		return linkat(AT_FDCWD, fdpath, AT_FDCWD, path, AT_SYMLINK_FOLLOW) < 0 ? -1 : fd;
	}
	if (!strcmp(call, "mkdirat"))
		return syscall(SYS_mkdirat, AT_FDCWD, path, mode);
	if (!strcmp(call, "mknodat"))
		return syscall(SYS_mknodat, AT_FDCWD, path, S_IFIFO | mode, 0);
#ifdef SYS_chmod
	if (!strcmp(call, "chmod"))
		return syscall(SYS_chmod, path, mode);
	if (!strcmp(call, "open"))
		return syscall(SYS_open, path, create, mode);
	if (!strcmp(call, "creat"))
		return syscall(SYS_creat, path, mode);
	if (!strcmp(call, "mkdir"))
		return syscall(SYS_mkdir, path, mode);
	if (!strcmp(call, "mknod"))
		return syscall(SYS_mknod, path, S_IFIFO | mode, 0);
#endif
	errno = EINVAL;
	return -1;
}

static int cmd_killself(const char *sig)
{
	int s = (int)num(sig, 0, 64);
	if (s != 0 && signal(s, SIG_IGN) == SIG_ERR)
		return report(-1);
	return report(kill(getpid(), s));
}

/* The CPU time this process used, user and system, in microseconds; -1 on failure. */
static long long cpu_usec(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return -1;
	return (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/*
 * Spins for ms of wall time, or until it has used cpu_ms of CPU time when cpu_ms > 0, and
 * prints the CPU time it used. The CPU bound makes a control that a loaded host only slows.
 */
static int cmd_spin(long ms, long cpu_ms)
{
	struct timespec t0, now;
	if (clock_gettime(CLOCK_MONOTONIC, &t0) < 0)
		return report(-1);
	volatile unsigned long spins = 0;
	long long used;
	do {
		for (int i = 0; i < 100000; i++)
			spins++;
		if (clock_gettime(CLOCK_MONOTONIC, &now) < 0 || (used = cpu_usec()) < 0)
			return report(-1);
	} while ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 < ms &&
		 (cpu_ms <= 0 || used < (long long)cpu_ms * 1000));
	printf("CPU %lld\n", used);
	return 0;
}

static long try_syscall(const char *name)
{
	if (!strcmp(name, "ptrace"))
		return syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, 1, 0, 0);
	if (!strcmp(name, "mount"))
		return mount("none", "/tmp", "tmpfs", 0, NULL);
	if (!strcmp(name, "unshare-user"))
		return unshare(CLONE_NEWUSER);
	if (!strcmp(name, "unshare-net"))
		return unshare(CLONE_NEWNET);
	if (!strcmp(name, "clone-newuser")) {
		long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
		if (r == 0)
			_exit(0);
		return r;
	}
	if (!strcmp(name, "clone3")) {
		struct clone_args a = { .exit_signal = SIGCHLD };
		long r = syscall(SYS_clone3, &a, sizeof(a));
		if (r == 0)
			_exit(0);
		return r;
	}
	if (!strcmp(name, "chroot"))
		return chroot("/tmp");
	if (!strcmp(name, "pivot_root"))
		return syscall(SYS_pivot_root, "/tmp", "/tmp");
	if (!strcmp(name, "setns")) {
		int fd = open("/proc/self/ns/user", O_RDONLY);
		return fd < 0 ? fd : setns(fd, 0);
	}
	if (!strcmp(name, "bpf"))
		return syscall(SYS_bpf, 0, NULL, 0);
	if (!strcmp(name, "perf_event_open"))
		return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0);
	if (!strcmp(name, "keyctl"))
		return syscall(SYS_keyctl, 0, 0, 0, 0, 0);
	if (!strcmp(name, "userfaultfd"))
		return syscall(SYS_userfaultfd, 0);
	if (!strcmp(name, "io_uring_setup"))
		return syscall(SYS_io_uring_setup, 1, NULL);
	if (!strcmp(name, "kexec_load"))
		return syscall(SYS_kexec_load, 0, 0, NULL, 0);
	if (!strcmp(name, "init_module"))
		return syscall(SYS_init_module, NULL, 0, "");
	if (!strcmp(name, "reboot"))
		return syscall(SYS_reboot, 0, 0, 0, NULL);
	if (!strcmp(name, "swapon"))
		return syscall(SYS_swapon, "/tmp/x", 0);
	if (!strcmp(name, "acct"))
		return syscall(SYS_acct, NULL);
	if (!strcmp(name, "settimeofday")) {
		struct timeval tv = { 0 };
		return settimeofday(&tv, NULL);
	}
	if (!strcmp(name, "open_by_handle_at"))
		return syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, 0);
	if (!strcmp(name, "mknod"))
		return mknod("/tmp/node", S_IFCHR | 0600, makedev(1, 3));
	if (!strcmp(name, "socket-packet"))
		return socket(AF_PACKET, SOCK_RAW, 0);
	if (!strcmp(name, "socket-netlink"))
		return socket(AF_NETLINK, SOCK_RAW, 0);
	if (!strcmp(name, "personality"))
		return personality(READ_IMPLIES_EXEC);
	if (!strcmp(name, "personality-addr-no-randomize"))
		return personality(ADDR_NO_RANDOMIZE);
	if (!strcmp(name, "umount2"))
		return umount2("/usr", 0);
	if (!strcmp(name, "name_to_handle_at")) {
		/* Unprivileged in the kernel: only the filter refuses it. */
		static union {
			struct file_handle fh;
			char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
		} h;
		int mount_id;
		h.fh.handle_bytes = MAX_HANDLE_SZ;
		return name_to_handle_at(AT_FDCWD, "/", &h.fh, &mount_id, 0);
	}
	if (!strcmp(name, "kexec_file_load"))
		return syscall(SYS_kexec_file_load, -1, -1, 0UL, "", 0UL);
	if (!strcmp(name, "finit_module"))
		return syscall(SYS_finit_module, -1, "", 0);
	if (!strcmp(name, "delete_module"))
		return syscall(SYS_delete_module, "warden_no_such_module", O_NONBLOCK);
	if (!strcmp(name, "add_key"))
		/* Unprivileged in the kernel; the process keyring dies with the probe anyway. */
		return syscall(SYS_add_key, "user", "warden-probe", "x", 1,
			       KEY_SPEC_PROCESS_KEYRING);
	if (!strcmp(name, "request_key"))
		return syscall(SYS_request_key, "user", "warden-probe-none", NULL,
			       KEY_SPEC_PROCESS_KEYRING);
	if (!strcmp(name, "swapoff"))
		return syscall(SYS_swapoff, "/tmp/x");
	if (!strcmp(name, "clock_settime"))
		/* NULL: the kernel itself would answer EFAULT before any permission check. */
		return syscall(SYS_clock_settime, CLOCK_REALTIME, NULL);
	if (!strcmp(name, "adjtimex")) {
		/* modes 0 only reads the clock state, which the kernel allows anyone. */
		struct timex tx = { .modes = 0 };
		return adjtimex(&tx);
	}
#ifdef SYS_iopl
	if (!strcmp(name, "iopl"))
		return syscall(SYS_iopl, 3);
#endif
#ifdef SYS_ioperm
	if (!strcmp(name, "ioperm"))
		return syscall(SYS_ioperm, 0x80UL, 1UL, 1);
#endif
	if (!strcmp(name, "socket-raw"))
		return socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (!strcmp(name, "socket-vsock"))
		return socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	errno = EINVAL;
	return -1;
}

/* A child that sleeps until killed; -1 on failure. */
static pid_t sleeper(void)
{
	pid_t p = fork();
	if (p == 0) {
		for (;;)
			pause();
	}
	return p;
}

static void reap_kill(pid_t p)
{
	if (p > 0) {
		(void)kill(p, SIGKILL);
		(void)waitpid(p, NULL, 0);
	}
}

static int cmd_ptrace(const char *who)
{
	if (!strcmp(who, "child") || !strcmp(who, "sibling")) {
		pid_t target = sleeper();
		if (target < 0)
			return report(-1);
		if (!strcmp(who, "child")) {
			int rc = report(syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, target, 0, 0));
			reap_kill(target);
			return rc;
		}
		(void)fflush(stdout);
		pid_t tracer = fork();
		if (tracer == 0)
			_exit(report(syscall(SYS_ptrace, 16, target, 0, 0)));
		int status = 1;
		if (tracer < 0)
			(void)report(-1);
		else
			(void)waitpid(tracer, &status, 0);
		reap_kill(target);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	return report(syscall(SYS_ptrace, 16, (pid_t)num(who, 1, INT_MAX), 0, 0));
}

static volatile char vm_byte = 'v';

static int cmd_vmread(const char *who)
{
	pid_t target = !strcmp(who, "child") ? sleeper() : (pid_t)num(who, 1, INT_MAX);
	if (target < 0)
		return report(-1);
	char got = 0;
	struct iovec local = { .iov_base = &got, .iov_len = 1 };
	struct iovec remote = { .iov_base = (void *)&vm_byte, .iov_len = 1 };
	int rc = report(process_vm_readv(target, &local, 1, &remote, 1, 0));
	if (!strcmp(who, "child"))
		reap_kill(target);
	return rc;
}

static int print_ids(const char *label, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -1;
	printf("%s %u:%u:%llu", label, major(st.st_dev), minor(st.st_dev),
	       (unsigned long long)st.st_ino);
	return 0;
}

static int cmd_chroot_escape(void)
{
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return report(-1);
	int rc = report(chroot("/tmp"));
	if (fchdir(root) < 0)
		return report(-1);
	for (int i = 0; i < 64; i++)
		if (chdir("..") < 0)
			return report(-1);
	if (print_ids("CWD", ".") < 0)
		return report(-1);
	if (print_ids(" ROOT", "/") < 0)
		return report(-1);
	printf("\n");
	return rc;
}

static int cmd_userns_mount(void)
{
	if (report(unshare(CLONE_NEWUSER)))
		return 1;
	return report(mount("none", "/tmp", "tmpfs", 0, NULL));
}

static int cmd_setns(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return report(-1);
	return report(setns(fd, 0));
}

static int cmd_tioclinux(void)
{
	char sub = TIOCL_GETSHIFTSTATE;
	return report(ioctl(0, TIOCLINUX, &sub));
}

/* Reads all of path (at most len - 1 bytes) into buf; returns the length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t off = 0;
	while (off < len - 1) {
		ssize_t n = read(fd, buf + off, len - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	(void)close(fd);
	buf[off] = '\0';
	return (ssize_t)off;
}

static int cmd_environ_scan(const char *needle)
{
	DIR *d = opendir("/proc");
	if (!d)
		return report(-1);
	static char buf[1 << 20];
	long scanned = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		char path[300];
		(void)snprintf(path, sizeof(path), "/proc/%s/environ", de->d_name);
		ssize_t n = read_small(path, buf, sizeof(buf));
		if (n < 0)
			continue;
		scanned++;
		if (memmem(buf, (size_t)n, needle, strlen(needle)))
			printf("FOUND %s\n", de->d_name);
	}
	closedir(d);
	printf("SCANNED %ld\n", scanned);
	return 0;
}

static int cmd_rtlinks(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return report(-1);
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
		.ifi = { .ifi_family = AF_UNSPEC },
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return report(-1);
	static char buf[1 << 16] __attribute__((aligned(NLMSG_ALIGNTO)));
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return report(n < 0 ? -1 : (errno = EPROTO, -1));
		size_t left = (size_t)n;
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, left);
		     nh = NLMSG_NEXT(nh, left)) {
			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);
				errno = e->error < 0 ? -e->error : EPROTO;
				return report(-1);
			}
			if (nh->nlmsg_type != RTM_NEWLINK)
				continue;
			struct ifinfomsg *ifi = NLMSG_DATA(nh);
			size_t alen = IFLA_PAYLOAD(nh);
			for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, alen);
			     a = RTA_NEXT(a, alen)) {
				if (a->rta_type != IFLA_IFNAME)
					continue;
				printf("%.*s\n", (int)RTA_PAYLOAD(a), (const char *)RTA_DATA(a));
			}
		}
	}
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 2;
	const char *c = argv[1];
	if (!strcmp(c, "status"))
		return cmd_status();
	if (!strcmp(c, "open") && argc == 3)
		return report(open(argv[2], O_RDONLY | O_CLOEXEC));
	if (!strcmp(c, "write") && argc == 3) {
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return report(-1);
		return report(write(fd, "x", 1));
	}
	if (!strcmp(c, "mkdir") && argc == 3)
		return report(mkdir(argv[2], 0755));
	if (!strcmp(c, "rename") && argc == 4)
		return report(rename(argv[2], argv[3]));
	if (!strcmp(c, "connect") && argc == 4)
		return cmd_connect(argv[2], argv[3], SOCK_STREAM);
	if (!strcmp(c, "udp") && argc == 4)
		return cmd_connect(argv[2], argv[3], SOCK_DGRAM);
	if (!strcmp(c, "kill") && argc == 4)
		return report(kill((pid_t)num(argv[2], INT_MIN + 1, INT_MAX),
				   (int)num(argv[3], 0, 64)));
	if (!strcmp(c, "fds"))
		return list_dir("/proc/self/fd", 0);
	if (!strcmp(c, "env")) {
		extern char **environ;
		for (char **e = environ; *e; e++)
			printf("%s\n", *e);
		return 0;
	}
	if (!strcmp(c, "pids"))
		return list_dir("/proc", 1);
	if (!strcmp(c, "forkbomb") && argc == 3)
		return cmd_forkbomb(num(argv[2], 0, 100000));
	if (!strcmp(c, "membomb") && argc == 3)
		return cmd_membomb(num(argv[2], 0, 1 << 20));
	if (!strcmp(c, "nofile") && argc == 3)
		return cmd_nofile(num(argv[2], 0, 1 << 20));
	if (!strcmp(c, "openw") && argc == 3)
		return report(open(argv[2], O_WRONLY | O_CLOEXEC));
	if (!strcmp(c, "stat") && argc == 3)
		return cmd_stat(argv[2]);
	if (!strcmp(c, "daemon") && argc <= 4) {
		long ms = argc >= 3 ? num(argv[2], 0, 60000) : 100;
		pid_t p = fork();
		if (p == 0) {
			setsid();
			if (fork() == 0) {
				printf("DAEMON %d\n", getpid());
				fflush(stdout);
				sleep(60);
			}
			_exit(0);
		}
		waitpid(p, NULL, 0);
		usleep((useconds_t)ms * 1000);
		return 0;
	}
	if (!strcmp(c, "tiocsti")) {
		char ch = 'x';
		return report(ioctl(0, TIOCSTI, &ch));
	}
	if (!strcmp(c, "tioclinux") && argc == 2)
		return cmd_tioclinux();
	if (!strcmp(c, "syscall") && argc == 3)
		return report(try_syscall(argv[2]));
	if (!strcmp(c, "ptrace") && argc == 3)
		return cmd_ptrace(argv[2]);
	if (!strcmp(c, "vmread") && argc == 3)
		return cmd_vmread(argv[2]);
	if (!strcmp(c, "chroot-escape") && argc == 2)
		return cmd_chroot_escape();
	if (!strcmp(c, "userns-mount") && argc == 2)
		return cmd_userns_mount();
	if (!strcmp(c, "setns") && argc == 3)
		return cmd_setns(argv[2]);
	if (!strcmp(c, "environ-scan") && argc == 3)
		return cmd_environ_scan(argv[2]);
	if (!strcmp(c, "rtlinks") && argc == 2)
		return cmd_rtlinks();
	if (!strcmp(c, "exit") && argc == 3)
		return (int)num(argv[2], 0, 255);
	if (!strcmp(c, "signal") && argc == 3) {
		int sig = (int)num(argv[2], 1, 64);
		signal(sig, SIG_DFL);
		raise(sig);
		return 0;
	}
	if (!strcmp(c, "sleep") && (argc == 3 || argc == 4)) {
		sleep((unsigned)num(argv[2], 0, 86400));
		return 0;
	}
	if (!strcmp(c, "fill") && argc == 4)
		return cmd_fill(argv[2], num(argv[3], 0, 1 << 20));
	if (!strcmp(c, "statfs") && argc == 3)
		return cmd_statfs(argv[2]);
	if (!strcmp(c, "ls") && argc == 3)
		return cmd_ls(argv[2]);
	if (!strcmp(c, "cat") && argc <= 3)
		return cmd_cat(argc == 3 ? argv[2] : NULL);
	if (!strcmp(c, "hostname") && argc == 2)
		return cmd_hostname();
	if (!strcmp(c, "ifaces") && argc == 2)
		return cmd_ifaces();
	if (!strcmp(c, "loopback") && argc == 2)
		return cmd_loopback();
	if (!strcmp(c, "rlimit") && argc == 3)
		return cmd_rlimit(argv[2]);
	if (!strcmp(c, "shm") && argc == 3)
		return report(shmget((key_t)num(argv[2], INT_MIN, INT_MAX), 0, 0));
	if (!strcmp(c, "bindport") && argc == 3)
		return cmd_bindport(argv[2]);
	if (!strcmp(c, "rawsyscall") && argc >= 3 && argc <= 9)
		return cmd_rawsyscall(argc, argv);
	if (!strcmp(c, "chmod") && argc == 3)
		return report(chmod(argv[2], 0600));
	if (!strcmp(c, "setid") && argc == 5)
		return report(try_setid(argv[2], argv[3], octal(argv[4])));
	if (!strcmp(c, "killself") && argc == 3)
		return cmd_killself(argv[2]);
	if (!strcmp(c, "spin") && (argc == 3 || argc == 4))
		return cmd_spin(num(argv[2], 0, 600000), argc == 4 ? num(argv[3], 0, 600000) : 0);
	return 2;
}
