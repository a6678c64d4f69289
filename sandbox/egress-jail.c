/* SPDX-License-Identifier: MIT */
/*
 * The egress proxy's confinement (egress-jail.h): a straight line of steps, each failing
 * closed under its own name.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <netdb.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "egress-jail.h"
#include "sandbox.h"

DEFINE_CLEANUP(scmp_filter_ctx, seccomp_release)

/*
 * Landlock rights and ABI versions newer than the kernel headers this may be built with
 * (Debian 12 ships 6.1's). The kernel takes the ruleset attribute at the size the ABI knows.
 */
#define EGR_LL_FS_V1 ((1ULL << 13) - 1) /* EXECUTE .. MAKE_SYM */
#define EGR_LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define EGR_LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define EGR_LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define EGR_LL_NET_BIND_TCP (1ULL << 0) /* ABI 4 */
#define EGR_LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define EGR_LL_SCOPE_SIGNAL (1ULL << 1)        /* ABI 6 */
#define EGR_LL_READ_FILE (1ULL << 2)

struct egr_ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
};

/*
 * What the libc resolver reads after it started: name service switch, hosts, resolver and
 * address-sorting configuration. It re-reads them (by path) on every lookup whose file
 * changed, and /etc/hosts on every lookup.
 */
static const char *const resolver_files[] = {
	"/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf",
};

/* ---- the seccomp allowlist ------------------------------------------------------------------ */

/*
 * Allowed with any arguments. Knowingly excluded, so killing the process: every way to run
 * or change programs (execve, clone, fork, ptrace, kill), to make new listeners (bind,
 * listen, socketpair), to open files other than read-only (see openat below) or through
 * memory the filter cannot read (openat2), to map executable memory, and every ioctl but
 * FIONREAD.
 */
static const char *const allow_plain[] = {
	/* the event loop and the relay */
	"read", "write", "readv", "writev", "close", "poll", "ppoll", "fcntl", "pipe2", "splice",
	/* clients (accepted from the given listener), upstream connections, DNS queries */
	"accept", "accept4", "connect", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg",
	"recvmmsg", "setsockopt", "getsockopt", "getsockname", "getpeername", "shutdown",
	/* the resolver checking and reading its configuration (Landlock decides which files) */
	"lseek", "newfstatat", "fstat", "statx", "uname",
	/* memory: mmap and mprotect are below, without PROT_EXEC */
	"brk", "munmap", "mremap", "madvise",
	/* time, randomness, identity, locks, signals returning, the end */
	"clock_gettime", "clock_getres", "gettimeofday", "getrandom", "getpid", "gettid", "futex",
	"rt_sigreturn", "rt_sigprocmask", "restart_syscall", "exit", "exit_group",
};

/* Open flags that write, create or truncate; openat with any of them kills the process. */
#define OPEN_WRITE_FLAGS \
	((uint64_t)(O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_TMPFILE | O_PATH))

/* What a sanitizer's runtime calls by itself; allowed only for sanitized test builds. */
static const char *const allow_sanitizer[] = { "sigaltstack" };

/*
 * One argument comparison, every field spelled out (libseccomp's SCMP_A* macros leave
 * datum_b to an implicit zero, which clang's -Wmissing-field-initializers refuses).
 */
static struct scmp_arg_cmp arg_cmp(unsigned arg, enum scmp_compare op, scmp_datum_t a,
				   scmp_datum_t b)
{
	return (struct scmp_arg_cmp){ .arg = arg, .op = op, .datum_a = a, .datum_b = b };
}

/* Builds the filter. Returns 0 and the context, or -ENOMEM / -EIO. */
static int build_ctx(bool sanitizer_runtime, scmp_filter_ctx *out)
{
	_cleanup_(seccomp_releasep) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -ENOMEM;
	/* Another architecture's numbers are another table: kill. */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0)
		return -EIO;

	for (size_t i = 0; i < ELEMENTSOF(allow_plain) + ELEMENTSOF(allow_sanitizer); i++) {
		bool extra = i >= ELEMENTSOF(allow_plain);
		if (extra && !sanitizer_runtime)
			break;
		const char *name = extra ? allow_sanitizer[i - ELEMENTSOF(allow_plain)] : allow_plain[i];
		int nr = seccomp_syscall_resolve_name(name);
		if (nr == __NR_SCMP_ERROR)
			continue; /* a name this libseccomp does not know stays refused */
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) < 0)
			return -EIO;
	}

	/*
	 * socket: IPv4 and IPv6 only. Every other domain is answered EACCES rather than killing:
	 * the libc resolver asks for AF_UNIX (nscd) and, for some lookups, AF_NETLINK, and goes
	 * on without them. The conditions split the domain's value space without overlap:
	 * <= AF_UNIX, AF_INET, 3..9, AF_INET6, > AF_INET6.
	 */
	const uint32_t deny_errno = SCMP_ACT_ERRNO(EACCES);
	int r = 0;
	r |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
			      arg_cmp(0, SCMP_CMP_EQ, AF_INET, 0));
	r |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
			      arg_cmp(0, SCMP_CMP_EQ, AF_INET6, 0));
	r |= seccomp_rule_add(ctx, deny_errno, SCMP_SYS(socket), 1,
			      arg_cmp(0, SCMP_CMP_LE, AF_UNIX, 0));
	for (uint64_t d = AF_INET + 1; d < AF_INET6; d++)
		r |= seccomp_rule_add(ctx, deny_errno, SCMP_SYS(socket), 1,
				      arg_cmp(0, SCMP_CMP_EQ, d, 0));
	r |= seccomp_rule_add(ctx, deny_errno, SCMP_SYS(socket), 1,
			      arg_cmp(0, SCMP_CMP_GT, AF_INET6, 0));
	/* The resolver asks how many bytes a DNS answer has. */
	r |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
			      arg_cmp(1, SCMP_CMP_EQ, FIONREAD, 0));
	/* Read-only opens; Landlock narrows them to the resolver's files. */
	r |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
			      arg_cmp(2, SCMP_CMP_MASKED_EQ, OPEN_WRITE_FLAGS, 0));
	/* No new executable memory: nothing is loaded after the warm-up. */
	r |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
			      arg_cmp(2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	r |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
			      arg_cmp(2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (r != 0)
		return -EIO;
	*out = TAKE_PTR(ctx);
	return 0;
}

int sbx_egress_seccomp_build(bool sanitizer_runtime, struct sbx_seccomp_prog *out)
{
	_cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
	int r = build_ctx(sanitizer_runtime, &ctx);
	if (r < 0)
		return r;
	/* libseccomp 2.5 exports only to a file descriptor: a private memfd, read back. */
	_cleanup_close_ int fd = memfd_create("warden-egress-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return errno == ENOMEM ? -ENOMEM : -EIO;
	if (seccomp_export_bpf(ctx, fd) < 0)
		return -EIO;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size <= 0 ||
	    (uint64_t)st.st_size % sizeof(struct sock_filter) != 0 ||
	    (uint64_t)st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -EIO;
	size_t len = (size_t)st.st_size;
	_cleanup_free_ struct sock_filter *insns = malloc(len);
	if (!insns)
		return -ENOMEM;
	for (size_t done = 0; done < len;) {
		ssize_t k = pread(fd, (char *)insns + done, len - done, (off_t)done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -EIO;
		done += (size_t)k;
	}
	out->insns = TAKE_PTR(insns);
	out->n_insns = len / sizeof(struct sock_filter);
	return 0;
}

/* ---- the steps ------------------------------------------------------------------------------ */

static int fail(char *step, size_t step_len, const char *what, int err)
{
	(void)snprintf(step, step_len, "%s", what);
	return err;
}

/* True iff any of the effective, permitted or inheritable sets is not empty. */
static int has_capabilities(bool *out)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	bool any = false;
	for (int i = 0; i < 2; i++)
		any = any || data[i].effective || data[i].permitted || data[i].inheritable;
	*out = any;
	return 0;
}

/*
 * Reads one resolver lookup (of "localhost", answered from /etc/hosts on any ordinary host),
 * so that the resolver has parsed nsswitch.conf and mapped any name service module it names
 * before executable mappings and other files are refused. Its answer does not matter.
 */
static void warm_resolver(void)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	if (getaddrinfo("localhost", NULL, &hints, &res) == 0)
		freeaddrinfo(res);
}

static int drop_credentials(const struct sbx_egress_jail *cfg, char *step, size_t step_len)
{
	int r;
	if (cfg->privileged) {
		/* Root would keep file access beyond Landlock's reach (its DAC overrides). */
		if (cfg->uid == 0 || cfg->gid == 0)
			return fail(step, step_len, "refuse to run the proxy as uid or gid 0", -EINVAL);
		r = sbx_become_owner(cfg->uid, cfg->gid, 0);
		if (r < 0)
			return fail(step, step_len, "switch to the proxy's uid and drop capabilities", r);
		uid_t ru, eu, su;
		gid_t rg, eg, sg;
		if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
			return fail(step, step_len, "read back the proxy's ids", -errno);
		if (ru != cfg->uid || eu != cfg->uid || su != cfg->uid || rg != cfg->gid ||
		    eg != cfg->gid || sg != cfg->gid)
			return fail(step, step_len, "verify the proxy's ids", -EPERM);
	} else {
		bool caps;
		r = has_capabilities(&caps);
		if (r < 0)
			return fail(step, step_len, "read the capability sets", r);
		/* Capabilities here can only be a user namespace's: drop every one. */
		r = caps ? sbx_drop_privileges(0, step, step_len) : sbx_drop_privileges_unprivileged();
		if (r < 0)
			return caps ? r : fail(step, step_len, "set no_new_privs", r);
	}
	bool caps;
	r = has_capabilities(&caps);
	if (r < 0 || caps)
		return fail(step, step_len, "verify capabilities are empty", r < 0 ? r : -EPERM);
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return fail(step, step_len, "verify no_new_privs", -EPERM);
	return 0;
}

static int process_limits(const struct sbx_egress_jail *cfg, char *step, size_t step_len)
{
	/* After the credential change, which resets both. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return fail(step, step_len, "make the proxy non-dumpable", -errno);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return fail(step, step_len, "arm the parent-death signal", -errno);
	/* The parent may have died before the signal was armed. */
	if (cfg->parent > 0 && getppid() != cfg->parent)
		return fail(step, step_len, "check the parent is still alive", -ESRCH);
	const struct rlimit zero = { 0, 0 };
	if (setrlimit(RLIMIT_CORE, &zero) < 0 || setrlimit(RLIMIT_FSIZE, &zero) < 0)
		return fail(step, step_len, "set the core and file size limits to 0", -errno);
	return 0;
}

static int landlock_confine(char *step, size_t step_len)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1)
		return fail(step, step_len,
			    "Landlock is unavailable (needs Linux 5.13+ with landlock among the LSMs)",
			    abi < 0 ? -errno : -EOPNOTSUPP);
	struct egr_ll_ruleset_attr attr = { .handled_access_fs = EGR_LL_FS_V1 };
	size_t attr_len = sizeof(attr.handled_access_fs);
	if (abi >= 2)
		attr.handled_access_fs |= EGR_LL_FS_REFER;
	if (abi >= 3)
		attr.handled_access_fs |= EGR_LL_FS_TRUNCATE;
	if (abi >= 5)
		attr.handled_access_fs |= EGR_LL_FS_IOCTL_DEV;
	if (abi >= 4) {
		attr.handled_access_net = EGR_LL_NET_BIND_TCP;
		attr_len = offsetof(struct egr_ll_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		attr.scoped = EGR_LL_SCOPE_ABSTRACT_UNIX | EGR_LL_SCOPE_SIGNAL;
		attr_len = sizeof(attr);
	}
	long fd = syscall(SYS_landlock_create_ruleset, &attr, attr_len, 0);
	if (fd < 0)
		return fail(step, step_len, "create the Landlock ruleset", -errno);
	_cleanup_close_ int ruleset = (int)fd;

	for (size_t i = 0; i < ELEMENTSOF(resolver_files); i++) {
		_cleanup_close_ int f = open(resolver_files[i], O_PATH | O_CLOEXEC);
		if (f < 0 && errno == ENOENT)
			continue; /* the resolver does without it */
		if (f < 0)
			return fail(step, step_len, "open the resolver's configuration", -errno);
		/* A rule on a directory would open everything below it. */
		struct stat st;
		if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode))
			return fail(step, step_len, "check the resolver's configuration is files",
				    -EINVAL);
		struct landlock_path_beneath_attr pb = {
			.allowed_access = EGR_LL_READ_FILE,
			.parent_fd = f,
		};
		if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
			return fail(step, step_len, "allow reading the resolver's configuration", -errno);
	}
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
		return fail(step, step_len, "enforce the Landlock ruleset", -errno);
	return 0;
}

int sbx_egress_jail_apply(const struct sbx_egress_jail *cfg, char *step, size_t step_len)
{
	/* While everything may still be read and mapped. */
	warm_resolver();

	/* Compiled now, installed last: compiling needs a memfd and memory the filter forbids. */
	struct sbx_seccomp_prog prog = { 0 };
	int r = sbx_egress_seccomp_build(cfg->sanitizer_runtime, &prog);
	if (r < 0)
		return fail(step, step_len, "compile the proxy's seccomp filter", r);

	r = drop_credentials(cfg, step, step_len);
	if (r == 0)
		r = process_limits(cfg, step, step_len);
	if (r == 0)
		r = landlock_confine(step, step_len);
	if (r == 0) {
		r = sbx_seccomp_install(&prog);
		if (r < 0)
			(void)fail(step, step_len, "install the proxy's seccomp filter", r);
	}
	sbx_seccomp_prog_done(&prog);
	return r;
}
