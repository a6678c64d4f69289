/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's seccomp filter: an allowlist compiled with libseccomp.
 *
 * Shape of the filter (native architecture only):
 *   - the base allowlist below, plus the names a policy adds with seccomp.allow;
 *   - a never-allowed list answered EPERM (or killing the process in kill mode), which no
 *     policy can lift, except io_uring behind POL_UNSAFE_IO_URING;
 *   - argument checks on clone, unshare, ioctl, socket, socketpair and personality;
 *   - a mode check on every syscall that creates a file or changes its mode: a set-user-ID or
 *     set-group-ID bit in the mode is answered EPERM, in every policy and both modes;
 *   - clone3 and openat2 answered ENOSYS, always;
 *   - a refused list of syscalls known and deliberately left out, answered EPERM (kill mode:
 *     the process is killed), which seccomp.allow may lift;
 *   - everything else, the syscalls this filter does not know, answered ENOSYS (errno mode:
 *     libc and runtimes then take the fallback they already have for older kernels) or
 *     killing the process (kill mode);
 *   - any other architecture or ABI (i386, x32) kills the process.
 *
 * How rules are added. libseccomp does not define what happens when two rules for one
 * syscall overlap with different actions (an unconditional rule silently wins over
 * conditional ones, and a second unconditional rule is silently dropped). So the build first
 * decides one verdict per syscall in a table (later decisions override earlier ones in a fixed,
 * documented order), and only then emits rules. A syscall with argument checks gets rules
 * whose conditions partition the argument space: every value matches rules of exactly one
 * action, so the result does not depend on how libseccomp orders its decision tree.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "io-util.h"
#include "policy.h"
#include "sbx-seccomp.h"

DEFINE_CLEANUP(scmp_filter_ctx, seccomp_release)

/*
 * Syscalls every ordinary program may make: shells, compilers and build tools, python3, node,
 * git, coreutils, the dynamic loader and libc start-up. Names, not numbers, so the list works
 * on every architecture: a name this architecture (or this libseccomp) does not know is
 * skipped, which leaves that syscall to the default action. Syscalls with argument checks
 * (clone, unshare, ioctl, socket, socketpair, personality) are not here, nor are those with
 * a mode argument (chmod, open, mkdir, mknod, ...); see special_rules and mode_rules.
 *
 * Knowingly excluded: the refused list below (EPERM), the never-allowed list, the obsolete
 * calls the kernel no longer implements (create_module, get_kernel_syms, query_module,
 * getpmsg, putpmsg, afs_syscall, tuxcall, security, vserver, epoll_ctl_old, epoll_wait_old:
 * the default action, as the kernel itself answers ENOSYS), and the 32-bit-only names
 * (socketcall, ipc, ...), which are not in this architecture's table.
 */
static const char *const base_allow[] = {
	/* process life cycle; clone is filtered, clone3 is answered ENOSYS */
	"fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid",
	"set_tid_address", "set_robust_list", "rseq", "restart_syscall", "arch_prctl", "prctl",
	"getpid", "getppid", "gettid", "getpgid", "setpgid", "getpgrp", "getsid", "setsid",
	"pidfd_open", "pidfd_send_signal",

	/*
	 * Credentials: without capabilities the set* calls can only move between ids the task
	 * already holds, and capset can only lower capability sets.
	 */
	"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
	"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid",
	"setfsgid", "setgroups", "capget", "capset",

	/* signals */
	"kill", "tkill", "tgkill", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn",
	"rt_sigpending", "rt_sigtimedwait", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
	"rt_sigsuspend", "sigaltstack", "pause", "signalfd", "signalfd4",

	/* memory */
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "msync",
	"mlock", "mlock2", "munlock", "mlockall", "munlockall", "membarrier",
	"remap_file_pages", "pkey_alloc", "pkey_free", "pkey_mprotect", "map_shadow_stack",
	"mseal", "get_mempolicy", "set_mempolicy", "mbind", "memfd_create",

	/* threads and synchronisation */
	"futex", "futex_waitv", "futex_wake", "futex_wait", "futex_requeue",

	/* scheduling and resource limits (only ever lowered without capabilities) */
	"sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam",
	"sched_setparam", "sched_getscheduler", "sched_setscheduler", "sched_getattr",
	"sched_setattr", "sched_get_priority_max", "sched_get_priority_min",
	"sched_rr_get_interval", "getpriority", "setpriority", "ioprio_get", "ioprio_set",
	"getrlimit", "setrlimit", "prlimit64", "getrusage", "getcpu",

	/* time */
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
	"times", "alarm", "getitimer", "setitimer", "timer_create", "timer_settime",
	"timer_gettime", "timer_getoverrun", "timer_delete", "timerfd_create",
	"timerfd_settime", "timerfd_gettime",

	/* system information */
	"uname", "sysinfo", "getrandom", "umask", "seccomp",
	"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",

	/* file descriptors and I/O */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev",
	"preadv2", "pwritev2", "lseek", "close", "close_range", "dup", "dup2", "dup3",
	"fcntl", "flock", "pipe", "pipe2", "sendfile", "splice", "tee", "vmsplice",
	"copy_file_range", "readahead", "fadvise64", "fallocate", "ftruncate", "truncate",
	"fsync", "fdatasync", "syncfs", "sync", "sync_file_range", "cachestat",
	"eventfd", "eventfd2",

	/* polling */
	"poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl",
	"epoll_wait", "epoll_pwait", "epoll_pwait2",

	/* Linux AIO (libaio users such as database servers); io_uring is a separate opt-in */
	"io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",

	/* file system: paths, metadata, directories (the calls taking a mode are in mode_rules) */
	"stat", "fstat", "lstat", "newfstatat", "statx",
	"statfs", "fstatfs", "access", "faccessat", "faccessat2", "readlink", "readlinkat",
	"getdents", "getdents64", "getcwd", "chdir", "fchdir", "rmdir",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "unlink",
	"unlinkat", "chown", "fchown", "lchown",
	"fchownat", "utime", "utimes", "futimesat", "utimensat", "statmount", "listmount",
	"inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch",

	/* extended attributes on files (the namespaces' privilege rules still apply) */
	"getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr",
	"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
	"getxattrat", "listxattrat", "setxattrat", "removexattrat",

	/* sockets; socket and socketpair are filtered by domain */
	"connect", "accept", "accept4", "bind", "listen", "shutdown", "getsockname",
	"getpeername", "getsockopt", "setsockopt", "sendto", "recvfrom", "sendmsg", "recvmsg",
	"sendmmsg", "recvmmsg",

	/* System V and POSIX IPC: the sandbox has its own ipc namespace */
	"shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl",
	"msgget", "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend",
	"mq_timedreceive", "mq_notify", "mq_getsetattr",

	/* made by the kernel's own uretprobe trampoline, never by program code */
	"uretprobe",
};

/* Which entries of never_allow a policy may lift, and with which unsafe bit. */
#define NEVER(name) { #name, SCMP_SYS(name), 0 }
#define NEVER_UNLESS(name, bit) { #name, SCMP_SYS(name), (bit) }

/*
 * Syscalls that are never allowed, whatever the policy says, answered EPERM (kill mode: the
 * process is killed) so the refusal is explicit rather than looking like an old kernel.
 * SCMP_SYS() makes a libseccomp that does not know one of these names fail the build instead
 * of leaving a gap. On an architecture that lacks one (mknod, iopl, ... on arm64) SCMP_SYS()
 * is a negative placeholder: the rule is still handed to libseccomp, which accepts it, and it
 * can never match; the entry still stops a policy from allowing the name.
 */
static const struct never_entry {
	const char *name;
	int nr;
	uint32_t unsafe_bit; /* POL_UNSAFE_* that lifts the ban, or 0 */
} never_allow[] = {
	/* reading or changing other processes */
	NEVER(ptrace), NEVER(process_vm_readv), NEVER(process_vm_writev),
	NEVER(process_madvise), NEVER(pidfd_getfd),
	/* the mount table and the root: the sandbox's file system view is fixed */
	NEVER(mount), NEVER(umount), NEVER(umount2), NEVER(mount_setattr), NEVER(move_mount),
	NEVER(open_tree), NEVER(fsopen), NEVER(fsconfig), NEVER(fsmount), NEVER(fspick),
	NEVER(pivot_root), NEVER(chroot),
	/* namespaces: joining; creating goes through the clone and unshare checks */
	NEVER(setns),
	/* large kernel attack surface with no use for an agent's tools */
	NEVER(bpf), NEVER(perf_event_open), NEVER(userfaultfd), NEVER(fanotify_init),
	NEVER(keyctl), NEVER(add_key), NEVER(request_key), NEVER(lookup_dcookie),
	NEVER(nfsservctl), NEVER(uselib), NEVER(_sysctl),
	/* file handles bypass path-based access checks (the 2014 "shocker" escape) */
	NEVER(open_by_handle_at), NEVER(name_to_handle_at),
	/* whole-machine state */
	NEVER(reboot), NEVER(kexec_load), NEVER(kexec_file_load), NEVER(init_module),
	NEVER(finit_module), NEVER(delete_module), NEVER(swapon), NEVER(swapoff), NEVER(acct),
	NEVER(quotactl), NEVER(quotactl_fd), NEVER(vhangup), NEVER(syslog),
	NEVER(settimeofday), NEVER(stime), NEVER(clock_settime), NEVER(clock_adjtime),
	NEVER(adjtimex), NEVER(iopl), NEVER(ioperm),
	/* io_uring runs syscall work outside this filter's view; an explicit opt-in */
	NEVER_UNLESS(io_uring_setup, POL_UNSAFE_IO_URING),
	NEVER_UNLESS(io_uring_enter, POL_UNSAFE_IO_URING),
	NEVER_UNLESS(io_uring_register, POL_UNSAFE_IO_URING),
};

/*
 * Syscalls known and deliberately refused, answered EPERM (kill mode: the process is killed),
 * so that a program says the call was not permitted instead of taking it for an old kernel's
 * (Debian's `hostname NAME` exits 0 on ENOSYS). Unlike never_allow, seccomp.allow and allow
 * rules may lift them. Names, as in base_allow: one this libseccomp does not know, or this
 * architecture lacks, is left to the default action.
 */
static const char *const refused[] = {
	/* 16-bit and 32-bit segment games */
	"modify_ldt", "set_thread_area", "get_thread_area",
	/* reaching into other processes, or NUMA placement beyond one's own */
	"kcmp", "get_robust_list", "migrate_pages", "move_pages", "set_mempolicy_home_node",
	"process_mrelease",
	/* the sandbox's names are set before the filter goes in */
	"sethostname", "setdomainname",
	/* useless without fanotify_init, which is never allowed */
	"fanotify_mark",
	/* memory hidden even from the kernel's own view of the process */
	"memfd_secret",
	/* obsolete, but still implemented */
	"ustat", "sysfs",
};

/* How one syscall is answered. */
enum rule_kind {
	RULE_ALLOW,       /* allowed, no argument checks */
	RULE_DENY,        /* EPERM, or kill the process in kill mode */
	RULE_REFUSE,      /* as RULE_DENY, from the refused list: seccomp.allow may lift it */
	RULE_ENOSYS,      /* ENOSYS in both modes, so libc falls back */
	RULE_CLONE,       /* allowed without namespace flags */
	RULE_UNSHARE,     /* allowed without namespace flags */
	RULE_IOCTL,       /* allowed except TIOCSTI and TIOCLINUX */
	RULE_SOCKET,      /* AF_UNIX, AF_INET, AF_INET6 only */
	RULE_SOCKETPAIR,  /* AF_UNIX only */
	RULE_PERSONALITY, /* only the personalities in personality_ok */
	RULE_MODE,        /* allowed unless the mode (argument .arg) has a set-id bit */
	RULE_MKNOD,       /* as RULE_MODE, and FIFOs only (mkfifo(3)) */
	/* seccomp.rules of the policy: */
	RULE_COND_ALLOW,       /* allowed when one of the policy's allow rules holds, else default */
	RULE_COND_DENY_ALLOW,  /* refused when the policy's deny rule holds, else allowed */
	RULE_COND_DENY,        /* refused when the policy's deny rule holds, else default */
};

/* Syscalls whose base verdict depends on their arguments, or is not "allow". */
static const struct special_entry {
	int nr;
	enum rule_kind kind;
} special_rules[] = {
	{ SCMP_SYS(clone), RULE_CLONE },
	{ SCMP_SYS(unshare), RULE_UNSHARE },
	{ SCMP_SYS(ioctl), RULE_IOCTL },
	{ SCMP_SYS(socket), RULE_SOCKET },
	{ SCMP_SYS(socketpair), RULE_SOCKETPAIR },
	{ SCMP_SYS(personality), RULE_PERSONALITY },
	/*
	 * clone3 passes its flags in memory, which seccomp cannot read. Answering ENOSYS makes
	 * glibc (and every other runtime) fall back to clone, whose flags the filter checks.
	 */
	{ SCMP_SYS(clone3), RULE_ENOSYS },
	/*
	 * openat2 passes its mode in a struct open_how in memory, out of the filter's reach, so
	 * it could create a set-id file past the mode check. ENOSYS makes libc and runtimes take
	 * the openat path they keep for kernels before 5.6; the worker does not use it. (The
	 * supervisor's own openat2 calls resolving workspace paths run outside this filter.)
	 */
	{ SCMP_SYS(openat2), RULE_ENOSYS },
};

/*
 * The syscalls that take a file mode, and which argument holds it. No set-user-ID or
 * set-group-ID bit may be set through any of them, in any policy: a set-id file left in the
 * workspace runs with its host owner's ids (root's, when root owns the workspace) for
 * whoever on the host execs it later. nosuid covers the sandbox's own mounts, not the host's
 * view of the workspace.
 *
 * open and openat read the mode only with O_CREAT or O_TMPFILE; without, glibc passes 0, so
 * refusing any call whose mode carries the bits costs nothing. mkdir drops both bits from
 * its mode (a new directory gets S_ISGID only by inheriting it from its parent), but is
 * checked all the same. Device nodes are refused (a bound /dev is all the sandbox gets);
 * FIFOs are allowed, since glibc implements mkfifo(3) with mknodat and build tools use named
 * pipes.
 *
 * Names, not SCMP_SYS(): upstream libseccomp 2.5.4 predates fchmodat2 (Linux 6.6), and
 * kernel headers before 6.6 lack its number. A name the libseccomp in use does not know is
 * skipped here, which leaves the call to the default action: ENOSYS (glibc then falls back
 * to fchmodat) or kill, never allowed. The names this architecture lacks (chmod, open,
 * creat, mkdir, mknod on arm64) are skipped the same way.
 *
 * Not covered, and why: io_uring's openat and mkdirat operations carry a mode the filter
 * never sees, which is one more reason io_uring is refused unless POL_UNSAFE_IO_URING.
 */
static const struct mode_entry {
	const char *name;
	unsigned arg;    /* the mode's argument index */
	bool fifo_only;  /* mknod, mknodat: FIFOs are the only file type allowed */
} mode_rules[] = {
	{ "chmod", 1, false },    { "fchmod", 1, false },   { "fchmodat", 2, false },
	{ "fchmodat2", 2, false }, { "open", 2, false },     { "openat", 3, false },
	{ "creat", 1, false },    { "mkdir", 1, false },    { "mkdirat", 2, false },
	{ "mknod", 1, true },     { "mknodat", 2, true },
};

/*
 * The set-id bits. The kernel reads every mode argument above as umode_t (16 bits), so the
 * upper bits of the register are ignored; the checks mask the two bits and nothing else.
 */
#define SETID_BITS ((uint32_t)(S_ISUID | S_ISGID))

/*
 * Namespace-creating clone flags. Creating namespaces is the sandbox's job; a nested user
 * namespace would hand the worker a full capability set over fresh namespaces, and with it
 * the mount, netfilter and other code only root should reach. CLONE_NEWTIME is not a clone
 * flag (its bit is part of the exit signal there); only unshare takes it.
 */
#define NS_CLONE_FLAGS \
	((uint32_t)(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS | \
		    CLONE_NEWIPC | CLONE_NEWCGROUP))
#define NS_UNSHARE_FLAGS (NS_CLONE_FLAGS | (uint32_t)CLONE_NEWTIME)

/*
 * ioctls that inject input into, or reprogram, a terminal the worker shares with a more
 * privileged reader: TIOCSTI pushes bytes into the tty input queue (typed-command injection
 * into the parent shell); TIOCLINUX has subcommands that read and paste the console.
 */
static const uint32_t ioctl_deny[] = { TIOCSTI, TIOCLINUX };

/*
 * AF_NETLINK is last and handled apart: only NETLINK_ROUTE is allowed. In the sandbox's own
 * network namespace it can list only lo, and changing anything needs CAP_NET_ADMIN, which
 * nothing in the sandbox has; runtimes (node's os.networkInterfaces(), glibc's getifaddrs)
 * fail without it. Every other netlink protocol (audit, xfrm, netfilter, ...) stays refused.
 */
static const uint32_t socket_ok[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };
#define SOCKET_OK_PLAIN 3 /* members of socket_ok allowed whatever the protocol */
static const uint32_t netlink_ok[] = { NETLINK_ROUTE };
static const uint32_t socketpair_ok[] = { AF_UNIX };

/*
 * Personalities programs set: the default, 32-bit uname, uname 2.6 emulation and the query
 * value 0xffffffff. Anything else (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, ...) weakens memory
 * protections or ASLR for what the worker execs next.
 */
static const uint32_t personality_ok[] = {
	PER_LINUX, PER_LINUX32, UNAME26, PER_LINUX32 | UNAME26, 0xffffffffu,
};

/* The verdict table: one entry per syscall number. */
struct rule_set {
	struct rule_entry {
		int nr;
		enum rule_kind kind;
		unsigned arg; /* RULE_MODE, RULE_MKNOD: the mode's argument index; else 0 */
	} *rules;
	size_t n_rules;
	size_t cap;
};

static void rule_set_done(struct rule_set *set)
{
	free(set->rules);
	set->rules = NULL;
	set->n_rules = 0;
	set->cap = 0;
}

static struct rule_entry *rule_find(struct rule_set *set, int nr)
{
	for (size_t i = 0; i < set->n_rules; i++)
		if (set->rules[i].nr == nr)
			return &set->rules[i];
	return NULL;
}

/*
 * Sets the verdict for nr (with the argument index a mode check needs), replacing an earlier
 * one. The capacity is reserved up front.
 */
static void rule_set_arg(struct rule_set *set, int nr, enum rule_kind kind, unsigned arg)
{
	struct rule_entry *e = rule_find(set, nr);

	if (e) {
		*e = (struct rule_entry){ .nr = nr, .kind = kind, .arg = arg };
		return;
	}
	if (set->n_rules >= set->cap)
		abort(); /* our bug: rule_set_init reserved room for every insertion */
	set->rules[set->n_rules++] = (struct rule_entry){ .nr = nr, .kind = kind, .arg = arg };
}

static void rule_set(struct rule_set *set, int nr, enum rule_kind kind)
{
	rule_set_arg(set, nr, kind, 0);
}

static int rule_set_init(struct rule_set *set, const struct pol_policy *pol)
{
	size_t fixed = ELEMENTSOF(base_allow) + ELEMENTSOF(never_allow) + ELEMENTSOF(special_rules) +
		       ELEMENTSOF(mode_rules) + ELEMENTSOF(refused);
	size_t cap;

	if (pol->n_seccomp_allow > SIZE_MAX - fixed ||
	    pol->n_seccomp_deny > SIZE_MAX - fixed - pol->n_seccomp_allow ||
	    pol->n_seccomp_rules > SIZE_MAX - fixed - pol->n_seccomp_allow - pol->n_seccomp_deny)
		return -ENOMEM;
	cap = fixed + pol->n_seccomp_allow + pol->n_seccomp_deny + pol->n_seccomp_rules;

	set->rules = calloc(cap, sizeof(*set->rules));
	if (!set->rules)
		return -ENOMEM;
	set->n_rules = 0;
	set->cap = cap;
	return 0;
}

/* True iff pol opts into e through e's unsafe bit. */
static bool never_lifted(const struct never_entry *e, const struct pol_policy *pol)
{
	return e->unsafe_bit != 0 && (pol->unsafe & e->unsafe_bit) != 0;
}

static const struct never_entry *never_find(int nr)
{
	for (size_t i = 0; i < ELEMENTSOF(never_allow); i++)
		if (never_allow[i].nr == nr)
			return &never_allow[i];
	return NULL;
}

/*
 * True iff nr is answered ENOSYS whatever the policy says (clone3, openat2): their arguments
 * are in memory the filter cannot read, so allowing them, or ruling on them, would let past
 * what the checks on clone and openat refuse.
 */
static bool always_enosys(int nr)
{
	for (size_t i = 0; i < ELEMENTSOF(special_rules); i++)
		if (special_rules[i].nr == nr && special_rules[i].kind == RULE_ENOSYS)
			return true;
	return false;
}

/*
 * Resolves a policy-supplied syscall name for the native architecture. On success stores the
 * number in *out_nr (negative for a syscall libseccomp knows but this architecture lacks) and
 * returns 0; returns -EINVAL, *out_nr untouched, for a name libseccomp does not know.
 */
static int resolve_policy_name(const char *name, int *out_nr)
{
	int nr;

	if (!name || !*name)
		return -EINVAL;
	nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return -EINVAL;
	*out_nr = nr;
	return 0;
}

/* A policy entry the filter cannot be built from: the reason in f, -EINVAL. */
__attribute__((format(printf, 2, 3))) static int policy_error(struct fail *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)fail_vset(f, 0, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * seccomp.rules: conditional verdicts. A syscall may carry one deny rule, or any number of
 * allow rules, never both. Syscalls with built-in argument checks (the mode checks among
 * them), clone3 and openat2, and syscalls that are never allowed (for allow rules) are
 * refused, as is a rule that could change nothing:
 * allow rules on an allowed syscall, or a deny rule on a refused one.
 */
static int collect_policy_rules(const struct pol_policy *pol, struct rule_set *set,
				struct fail *f)
{
	for (size_t i = 0; i < pol->n_seccomp_rules; i++) {
		const struct pol_syscall_rule *pr = &pol->seccomp_rules[i];
		int nr;
		if (resolve_policy_name(pr->name, &nr) < 0)
			return policy_error(f, "seccomp.rules: unknown syscall '%s'", pr->name);
		if (nr < 0)
			continue; /* not on this architecture: nothing can call it */
		if (pr->n_conds < 1 || pr->n_conds > 6)
			return policy_error(f, "seccomp.rules: '%s' needs 1 to 6 conditions", pr->name);
		for (size_t c = 0; c < pr->n_conds; c++) {
			const struct pol_arg_cond *cd = &pr->conds[c];
			if (cd->index > 5)
				return policy_error(f, "seccomp.rules: '%s' argument index over 5",
						    pr->name);
			for (size_t d = 0; d < c; d++)
				if (pr->conds[d].index == cd->index)
					return policy_error(f, "seccomp.rules: '%s' has two conditions "
							    "on argument %u", pr->name, cd->index);
			if (cd->op == POL_CMP_MASKED_EQ && (cd->value & ~cd->mask))
				return policy_error(f, "seccomp.rules: '%s' masked_eq value has bits "
						    "outside its mask", pr->name);
		}
		const struct never_entry *e = never_find(nr);
		struct rule_entry *cur = rule_find(set, nr);
		enum rule_kind kind = cur ? cur->kind : RULE_ENOSYS;
		bool base_allowed = cur && cur->kind == RULE_ALLOW;
		switch (kind) {
		case RULE_COND_ALLOW:
			if (!pr->allow)
				return policy_error(f, "seccomp.rules: '%s' has both allow and deny rules",
						    pr->name);
			continue; /* one more allow rule for the same syscall */
		case RULE_COND_DENY_ALLOW:
		case RULE_COND_DENY:
			return policy_error(f, "seccomp.rules: '%s' may have only one deny rule, and "
					    "no allow rule beside it", pr->name);
		case RULE_CLONE:
		case RULE_UNSHARE:
		case RULE_IOCTL:
		case RULE_SOCKET:
		case RULE_SOCKETPAIR:
		case RULE_PERSONALITY:
		case RULE_MODE:
		case RULE_MKNOD:
			return policy_error(f, "seccomp.rules: '%s' has built-in argument checks; use "
					    "seccomp.deny to refuse it entirely", pr->name);
		case RULE_ALLOW:
		case RULE_DENY:
		case RULE_REFUSE:
		case RULE_ENOSYS:
			break;
		}
		if (always_enosys(nr))
			return policy_error(f, "seccomp.rules: %s cannot be ruled on (its arguments are "
					    "out of the filter's reach)", pr->name);
		if (pr->allow) {
			if (e && !never_lifted(e, pol))
				return policy_error(f, "seccomp.rules: '%s' is never allowed", pr->name);
			if (base_allowed)
				return policy_error(f, "seccomp.rules: '%s' is already allowed; an allow "
						    "rule would change nothing", pr->name);
			if (cur && cur->kind == RULE_DENY)
				return policy_error(f, "seccomp.rules: '%s' is in seccomp.deny", pr->name);
			/*
			 * On the refused list too: what no allow rule admits then gets the default
			 * action (ENOSYS), as for any syscall the rules are all there is about.
			 */
			rule_set(set, nr, RULE_COND_ALLOW);
		} else {
			if (cur && (cur->kind == RULE_DENY || cur->kind == RULE_REFUSE))
				return policy_error(f, "seccomp.rules: '%s' is refused already; a deny rule "
						    "would change nothing", pr->name);
			rule_set(set, nr, base_allowed ? RULE_COND_DENY_ALLOW : RULE_COND_DENY);
		}
	}
	return 0;
}

/*
 * Decides the verdict for every syscall the filter names. Order, each step overriding the
 * previous ones: base allowlist; argument-checked syscalls, clone3 and openat2; the mode
 * checks; the refused list; the never-allowed list (io_uring allowed instead when its unsafe
 * bit is set); policy allow (only adds syscalls that have no verdict yet or are on the refused
 * list, and refuses never-allowed names, clone3 and openat2); policy deny (always wins, except
 * that clone3 and openat2 stay ENOSYS); then the policy's conditional rules.
 * Returns 0 or -EINVAL for a name the policy may not use.
 */
static int collect_rules(const struct pol_policy *pol, struct rule_set *set, struct fail *f)
{
	int r;

	for (size_t i = 0; i < ELEMENTSOF(base_allow); i++) {
		int nr = seccomp_syscall_resolve_name(base_allow[i]);

		/*
		 * Unknown to this libseccomp, or absent on this architecture: nobody can make
		 * the call, so there is nothing to allow. Only allowing is skipped this way;
		 * refusals always go to libseccomp.
		 */
		if (nr < 0)
			continue;
		rule_set(set, nr, RULE_ALLOW);
	}

	for (size_t i = 0; i < ELEMENTSOF(special_rules); i++)
		rule_set(set, special_rules[i].nr, special_rules[i].kind);

	for (size_t i = 0; i < ELEMENTSOF(mode_rules); i++) {
		const struct mode_entry *m = &mode_rules[i];
		int nr = seccomp_syscall_resolve_name(m->name);

		/* As for base_allow: what cannot be named here is never allowed either. */
		if (nr < 0)
			continue;
		rule_set_arg(set, nr, m->fifo_only ? RULE_MKNOD : RULE_MODE, m->arg);
	}

	for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
		int nr = seccomp_syscall_resolve_name(refused[i]);

		/* Nobody can call what cannot be named here: the default action stays. */
		if (nr < 0)
			continue;
		rule_set(set, nr, RULE_REFUSE);
	}

	for (size_t i = 0; i < ELEMENTSOF(never_allow); i++) {
		const struct never_entry *e = &never_allow[i];

		rule_set(set, e->nr, never_lifted(e, pol) ? RULE_ALLOW : RULE_DENY);
	}

	for (size_t i = 0; i < pol->n_seccomp_allow; i++) {
		const struct never_entry *e;
		int nr;

		r = resolve_policy_name(pol->seccomp_allow[i], &nr);
		if (r < 0)
			return policy_error(f, "seccomp.allow: unknown syscall '%s'",
					    pol->seccomp_allow[i]);
		e = never_find(nr);
		if (e && !never_lifted(e, pol))
			return policy_error(f, "seccomp.allow: '%s' is never allowed",
					    pol->seccomp_allow[i]);
		/*
		 * Allowing clone3 would let namespace flags past the clone check, and openat2 a
		 * set-id mode past the openat check.
		 */
		if (always_enosys(nr))
			return policy_error(f, "seccomp.allow: %s cannot be allowed (its arguments are "
					    "out of the filter's reach)", pol->seccomp_allow[i]);
		/*
		 * A syscall that already has a verdict keeps it: allowing "ioctl" or "socket"
		 * does not remove their argument checks. The refused list is what allow lifts. A
		 * name this architecture lacks cannot be called, so there is nothing to add.
		 */
		struct rule_entry *cur = nr < 0 ? NULL : rule_find(set, nr);
		if (nr < 0 || (cur && cur->kind != RULE_REFUSE))
			continue;
		rule_set(set, nr, RULE_ALLOW);
	}

	for (size_t i = 0; i < pol->n_seccomp_deny; i++) {
		struct rule_entry *cur;
		int nr;

		r = resolve_policy_name(pol->seccomp_deny[i], &nr);
		if (r < 0)
			return policy_error(f, "seccomp.deny: unknown syscall '%s'", pol->seccomp_deny[i]);
		cur = rule_find(set, nr);
		/*
		 * clone3 and openat2 stay ENOSYS: EPERM would stop libc from falling back to
		 * clone and openat, and break every fork and thread. Denying a lifted io_uring
		 * entry takes it back.
		 */
		if (cur && cur->kind == RULE_ENOSYS)
			continue;
		rule_set(set, nr, RULE_DENY);
	}
	return collect_policy_rules(pol, set, f);
}

/* Narrows a libseccomp return code to 0, -ENOMEM or -EIO. */
static int scmp_rc(int rc)
{
	if (rc >= 0)
		return 0;
	return rc == -ENOMEM ? -ENOMEM : -EIO;
}

/* Where rules go, and the two actions every rule is measured against. */
struct emitter {
	scmp_filter_ctx ctx;
	const struct pol_policy *pol;
	uint32_t def;  /* the filter's default action */
	uint32_t deny; /* the answer to a refused call: EPERM, or kill in kill mode */
};

/*
 * Adds one rule: action for nr, unconditionally (n_cmp == 0) or when cmp holds. A rule
 * whose action is the default action is left out: libseccomp refuses such rules, and the
 * default already gives that answer to whatever no other rule matches.
 */
static int add_rule(const struct emitter *em, uint32_t action, int nr, unsigned n_cmp,
		    const struct scmp_arg_cmp *cmp)
{
	if (action == em->def)
		return 0;
	return scmp_rc(seccomp_rule_add_array(em->ctx, action, nr, n_cmp, cmp));
}

/*
 * Adds one rule: action for nr when (argument arg & mask) == value, and, when pre is not
 * NULL, when the comparison *pre (on another argument) holds too.
 */
static int add_masked_pre(const struct emitter *em, uint32_t action, int nr,
			  const struct scmp_arg_cmp *pre, unsigned arg, uint64_t mask,
			  uint64_t value)
{
	struct scmp_arg_cmp cmp[2];
	unsigned n = 0;

	if (pre)
		cmp[n++] = *pre;
	cmp[n++] = (struct scmp_arg_cmp){
		.arg = arg,
		.op = SCMP_CMP_MASKED_EQ,
		.datum_a = mask,
		.datum_b = value,
	};
	return add_rule(em, action, nr, n, cmp);
}

/* Adds one rule: action for nr when (argument arg & mask) == value. */
static int add_masked(const struct emitter *em, uint32_t action, int nr, unsigned arg,
		      uint64_t mask, uint64_t value)
{
	return add_masked_pre(em, action, nr, NULL, arg, mask, value);
}

/*
 * Flag check: in_action when the argument has none of the bits in flags, out_action when it
 * has any. One rule for "none set" and one per bit for "this bit set"; the two sides never
 * match the same value. flags lie in the low 32 bits, where the kernel's flag words keep
 * them.
 */
static int add_flag_split(const struct emitter *em, int nr, unsigned arg, uint32_t flags,
			  uint32_t in_action, uint32_t out_action)
{
	int r = add_masked(em, in_action, nr, arg, flags, 0);
	if (r < 0)
		return r;

	for (unsigned bit = 0; bit < 32; bit++) {
		uint32_t b = 1u << bit;

		if (!(flags & b))
			continue;
		r = add_masked(em, out_action, nr, arg, b, b);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Set check on the low 32 bits of an argument the kernel reads as a 32-bit int (it drops the
 * upper half, so the filter must ignore it too, or value | 1 << 32 would slip past):
 * in_action when it is one of the n values in set, out_action otherwise.
 *
 * "Not in the set" is written as one rule per place where a value leaves the binary trie of
 * the set. Reading bits from the top, a value outside the set first differs from every member
 * at some bit i, after agreeing on bits 31..i+1 with at least one member. So for each member
 * s and bit i, "s's bits above i, then the opposite of s's bit i" is a rule, unless a member
 * also starts with that pattern (then the walk goes on below i). Each value outside the set
 * matches exactly one of these patterns, and no member matches any.
 *
 * Only the first n_in members get an in_action rule; the caller rules on the others itself
 * (they are still members, so no out_action pattern matches them). pre, when not NULL, is a
 * comparison on another argument that every rule also requires.
 */
static int add_set_split_pre(const struct emitter *em, int nr, const struct scmp_arg_cmp *pre,
			     unsigned arg, const uint32_t *set, size_t n, size_t n_in,
			     uint32_t in_action, uint32_t out_action)
{
	int r;

	for (size_t k = 0; k < n_in; k++) {
		r = add_masked_pre(em, in_action, nr, pre, arg, 0xffffffffu, set[k]);
		if (r < 0)
			return r;
	}

	for (int bit = 31; bit >= 0; bit--) {
		uint32_t b = 1u << bit;
		uint32_t mask = ~(b - 1u); /* bits 31..bit */

		for (size_t k = 0; k < n; k++) {
			uint32_t pattern = (set[k] & mask) ^ b;
			bool skip = false;

			for (size_t j = 0; j < n && !skip; j++)
				skip = (set[j] & mask) == pattern;
			/* Members that agree on bits 31..bit give the same pattern: emit it once. */
			for (size_t j = 0; j < k && !skip; j++)
				skip = (set[j] & mask) == (set[k] & mask);
			if (skip)
				continue;
			r = add_masked_pre(em, out_action, nr, pre, arg, mask, pattern);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int add_set_split(const struct emitter *em, int nr, unsigned arg, const uint32_t *set,
			 size_t n, uint32_t in_action, uint32_t out_action)
{
	return add_set_split_pre(em, nr, NULL, arg, set, n, n, in_action, out_action);
}

/* socket(): the plain families for any protocol, netlink for the protocols in netlink_ok. */
static int add_socket_rules(const struct emitter *em, int nr)
{
	int r = add_set_split_pre(em, nr, NULL, 0, socket_ok, ELEMENTSOF(socket_ok),
				  SOCKET_OK_PLAIN, SCMP_ACT_ALLOW, SCMP_ACT_ERRNO(EAFNOSUPPORT));
	if (r < 0)
		return r;
	/* The kernel reads the protocol as int: compare the low 32 bits of argument 2. */
	struct scmp_arg_cmp is_netlink = {
		.arg = 0,
		.op = SCMP_CMP_MASKED_EQ,
		.datum_a = 0xffffffffu,
		.datum_b = AF_NETLINK,
	};
	return add_set_split_pre(em, nr, &is_netlink, 2, netlink_ok, ELEMENTSOF(netlink_ok),
				 ELEMENTSOF(netlink_ok), SCMP_ACT_ALLOW,
				 SCMP_ACT_ERRNO(EAFNOSUPPORT));
}

/*
 * The mode check on argument mode_arg: EPERM when the mode has S_ISUID or S_ISGID, else
 * allowed, or for mknod (fifo_only) allowed for FIFOs and refused for every other file type
 * (devices above all). The rules split the modes by (mode & SETID_BITS): the three nonzero
 * values are refused, each by one rule; zero is allowed, or for mknod split once more by
 * (mode & (S_IFMT | SETID_BITS)), one rule per file type. No mode matches two rules.
 *
 * EPERM even in kill mode, as for socket families: cp -a, tar -p, rsync -a and install -m
 * ask for set-id bits in ordinary use and report EPERM as an ordinary error; nothing is
 * gained by killing a whole build for it.
 */
static int add_mode_rules(const struct emitter *em, int nr, unsigned mode_arg, bool fifo_only)
{
	int r;

	for (uint32_t setid = S_ISGID; setid <= SETID_BITS; setid += S_ISGID) {
		r = add_masked(em, SCMP_ACT_ERRNO(EPERM), nr, mode_arg, SETID_BITS, setid);
		if (r < 0)
			return r;
	}
	if (!fifo_only)
		return add_masked(em, SCMP_ACT_ALLOW, nr, mode_arg, SETID_BITS, 0);
	for (uint32_t type = 0; type <= S_IFMT; type += 010000) {
		uint32_t action = type == S_IFIFO ? SCMP_ACT_ALLOW : em->deny;
		r = add_masked(em, action, nr, mode_arg, S_IFMT | SETID_BITS, type);
		if (r < 0)
			return r;
	}
	return 0;
}

static enum scmp_compare scmp_op(enum pol_cmp_op op)
{
	switch (op) {
	case POL_CMP_EQ:
		return SCMP_CMP_EQ;
	case POL_CMP_NE:
		return SCMP_CMP_NE;
	case POL_CMP_LT:
		return SCMP_CMP_LT;
	case POL_CMP_LE:
		return SCMP_CMP_LE;
	case POL_CMP_GT:
		return SCMP_CMP_GT;
	case POL_CMP_GE:
		return SCMP_CMP_GE;
	case POL_CMP_MASKED_EQ:
		return SCMP_CMP_MASKED_EQ;
	}
	return _SCMP_CMP_MIN;
}

static struct scmp_arg_cmp to_scmp(const struct pol_arg_cond *c)
{
	struct scmp_arg_cmp a = { .arg = c->index, .op = scmp_op(c->op) };
	if (c->op == POL_CMP_MASKED_EQ) {
		a.datum_a = c->mask;
		a.datum_b = c->value;
	} else {
		a.datum_a = c->value;
	}
	return a;
}

/*
 * The complement of one condition as disjoint pieces (at most 64): for the ordered
 * comparisons one opposite comparison; for masked_eq, "the value first differs at mask bit
 * b", for each set bit b of the mask from the top.
 */
static size_t complement(const struct pol_arg_cond *c, struct scmp_arg_cmp out[64])
{
	struct scmp_arg_cmp a = to_scmp(c);
	static const enum scmp_compare opposite[] = {
		[SCMP_CMP_EQ] = SCMP_CMP_NE, [SCMP_CMP_NE] = SCMP_CMP_EQ,
		[SCMP_CMP_LT] = SCMP_CMP_GE, [SCMP_CMP_GE] = SCMP_CMP_LT,
		[SCMP_CMP_LE] = SCMP_CMP_GT, [SCMP_CMP_GT] = SCMP_CMP_LE,
	};
	if (c->op != POL_CMP_MASKED_EQ) {
		a.op = opposite[a.op];
		out[0] = a;
		return 1;
	}
	size_t n = 0;
	for (int bit = 63; bit >= 0; bit--) {
		uint64_t b = 1ull << bit;
		if (!(c->mask & b))
			continue;
		uint64_t upto = c->mask & ~(b - 1u); /* the mask's bits from the top down to b */
		out[n++] = (struct scmp_arg_cmp){ .arg = c->index, .op = SCMP_CMP_MASKED_EQ,
						  .datum_a = upto,
						  .datum_b = (c->value & upto) ^ b };
	}
	return n;
}

/*
 * A policy deny rule on nr: deny when every condition holds; with else_allow, allow
 * otherwise, as the disjoint union over i of "conditions before i hold, condition i fails".
 */
static int emit_policy_deny(const struct emitter *em, int nr, const struct pol_syscall_rule *pr,
			    bool else_allow)
{
	struct scmp_arg_cmp all[6];
	for (size_t c = 0; c < pr->n_conds; c++)
		all[c] = to_scmp(&pr->conds[c]);
	int r = add_rule(em, em->deny, nr, (unsigned)pr->n_conds, all);
	if (r < 0 || !else_allow)
		return r;
	for (size_t i = 0; i < pr->n_conds; i++) {
		struct scmp_arg_cmp pieces[64];
		size_t n = complement(&pr->conds[i], pieces);
		for (size_t k = 0; k < n; k++) {
			struct scmp_arg_cmp rule[6];
			for (size_t c = 0; c < i; c++)
				rule[c] = all[c];
			rule[i] = pieces[k];
			r = add_rule(em, SCMP_ACT_ALLOW, nr, (unsigned)(i + 1), rule);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int emit_policy_rules(const struct emitter *em, const struct rule_entry *e)
{
	for (size_t i = 0; i < em->pol->n_seccomp_rules; i++) {
		const struct pol_syscall_rule *pr = &em->pol->seccomp_rules[i];
		if (seccomp_syscall_resolve_name(pr->name) != e->nr)
			continue;
		int r;
		if (e->kind == RULE_COND_ALLOW) {
			struct scmp_arg_cmp all[6];
			for (size_t c = 0; c < pr->n_conds; c++)
				all[c] = to_scmp(&pr->conds[c]);
			r = add_rule(em, SCMP_ACT_ALLOW, e->nr, (unsigned)pr->n_conds, all);
		} else {
			r = emit_policy_deny(em, e->nr, pr, e->kind == RULE_COND_DENY_ALLOW);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

/* Emits the libseccomp rules for one verdict. */
static int emit_rule(const struct emitter *em, const struct rule_entry *e)
{
	switch (e->kind) {
	case RULE_ALLOW:
		return add_rule(em, SCMP_ACT_ALLOW, e->nr, 0, NULL);
	case RULE_DENY:
	case RULE_REFUSE:
		return add_rule(em, em->deny, e->nr, 0, NULL);
	case RULE_ENOSYS:
		return add_rule(em, SCMP_ACT_ERRNO(ENOSYS), e->nr, 0, NULL);
	case RULE_CLONE:
		/* clone's first argument is the flags word on x86_64 and arm64 alike. */
		return add_flag_split(em, e->nr, 0, NS_CLONE_FLAGS, SCMP_ACT_ALLOW, em->deny);
	case RULE_UNSHARE:
		/* unshare(CLONE_FILES | CLONE_FS) and friends stay allowed. */
		return add_flag_split(em, e->nr, 0, NS_UNSHARE_FLAGS, SCMP_ACT_ALLOW, em->deny);
	case RULE_IOCTL:
		/* The kernel reads the command as unsigned int: compare the low 32 bits only. */
		return add_set_split(em, e->nr, 1, ioctl_deny, ELEMENTSOF(ioctl_deny), em->deny,
				     SCMP_ACT_ALLOW);
	case RULE_SOCKET:
		/*
		 * Other families (netlink, packet, vsock, bluetooth, ...) reach kernel code an
		 * agent does not need. EAFNOSUPPORT even in kill mode: glibc itself opens netlink
		 * sockets (getaddrinfo with AI_ADDRCONFIG, getifaddrs) and copes with the error.
		 */
		return add_socket_rules(em, e->nr);
	case RULE_SOCKETPAIR:
		return add_set_split(em, e->nr, 0, socketpair_ok, ELEMENTSOF(socketpair_ok),
				     SCMP_ACT_ALLOW, SCMP_ACT_ERRNO(EAFNOSUPPORT));
	case RULE_PERSONALITY:
		return add_set_split(em, e->nr, 0, personality_ok, ELEMENTSOF(personality_ok),
				     SCMP_ACT_ALLOW, em->deny);
	case RULE_MODE:
		return add_mode_rules(em, e->nr, e->arg, false);
	case RULE_MKNOD:
		return add_mode_rules(em, e->nr, e->arg, true);
	case RULE_COND_ALLOW:
	case RULE_COND_DENY_ALLOW:
	case RULE_COND_DENY:
		return emit_policy_rules(em, e);
	}
	return -EIO;
}

/*
 * Builds the libseccomp context for pol. On success stores it in *out (release with
 * seccomp_release) and returns 0; otherwise returns -EINVAL, -ENOMEM or -EIO.
 */
static int build_ctx(const struct pol_policy *pol, scmp_filter_ctx *out, struct fail *f)
{
	_cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
	_cleanup_(rule_set_done) struct rule_set set = { 0 };
	struct emitter em;
	uint32_t def, deny;
	int r;

	if (!pol)
		return -EINVAL;

	switch (pol->seccomp_default) {
	case POL_SECCOMP_ERRNO:
		/* ENOSYS, not EPERM: "this kernel lacks it" is what fallback code checks for. */
		def = SCMP_ACT_ERRNO(ENOSYS);
		deny = SCMP_ACT_ERRNO(EPERM);
		break;
	case POL_SECCOMP_KILL:
		def = SCMP_ACT_KILL_PROCESS;
		deny = SCMP_ACT_KILL_PROCESS;
		break;
	default:
		return -EINVAL;
	}

	r = rule_set_init(&set, pol);
	if (r < 0)
		return r;
	r = collect_rules(pol, &set, f);
	if (r < 0)
		return r;

	ctx = seccomp_init(def);
	if (!ctx)
		return -ENOMEM;

	/*
	 * Only the native architecture is in the filter. Anything else (int 0x80 from a
	 * 64-bit task, i386 binaries, x32 numbers) is a different syscall table the allowlist
	 * was not written for, so it kills the process. libseccomp sends x32 numbers on
	 * x86_64 to this action too; the unit test checks that it does.
	 */
	r = scmp_rc(seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS));
	if (r < 0)
		return r;
	/* A binary search over syscall numbers instead of a linear scan of a long list. */
	r = scmp_rc(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2));
	if (r < 0)
		return r;

	em = (struct emitter){ .ctx = ctx, .pol = pol, .def = def, .deny = deny };
	for (size_t i = 0; i < set.n_rules; i++) {
		r = emit_rule(&em, &set.rules[i]);
		if (r < 0)
			return r;
	}

	*out = TAKE_PTR(ctx);
	return 0;
}

int sbx_seccomp_export(scmp_filter_ctx ctx, struct sbx_seccomp_prog *out)
{
	/*
	 * libseccomp 2.5 only exports BPF to a file descriptor (seccomp_export_bpf_mem came
	 * in 2.6), so export to a private memfd and read it back.
	 */
	_cleanup_close_ int fd = memfd_create("warden-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return errno == ENOMEM ? -ENOMEM : -EIO;
	int r = scmp_rc(seccomp_export_bpf(ctx, fd));
	if (r < 0)
		return r;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -EIO;

	/* The kernel takes at most BPF_MAXINSNS instructions in one filter. */
	if (st.st_size <= 0 || (uint64_t)st.st_size % sizeof(struct sock_filter) != 0 ||
	    (uint64_t)st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -EIO;
	size_t len = (size_t)st.st_size;

	_cleanup_free_ struct sock_filter *insns = malloc(len);
	if (!insns)
		return -ENOMEM;
	if (io_pread_exact(fd, insns, len, 0) < 0)
		return -EIO;

	out->insns = TAKE_PTR(insns);
	out->n_insns = len / sizeof(struct sock_filter);
	return 0;
}

static int build_prog(const struct pol_policy *pol, struct sbx_seccomp_prog *out, struct fail *f)
{
	_cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;

	if (!out)
		return -EINVAL;
	int r = build_ctx(pol, &ctx, f);
	if (r < 0)
		return r;
	return sbx_seccomp_export(ctx, out);
}

/*
 * The end of a public entry point: on failure, f gets the policy's fault when one was found
 * (err 0), else r and "compile the seccomp filter". Returns r.
 */
static int finish(int r, const struct fail *found, struct fail *f)
{
	if (r >= 0 || !f)
		return r;
	if (fail_said(found))
		*f = *found;
	else
		(void)fail_set(f, r, "compile the seccomp filter");
	return r;
}

int sbx_seccomp_build(const struct pol_policy *pol, struct sbx_seccomp_prog *out, struct fail *f)
{
	struct fail found;
	fail_init(&found);
	return finish(build_prog(pol, out, &found), &found, f);
}

void sbx_seccomp_prog_done(struct sbx_seccomp_prog *prog)
{
	if (!prog)
		return;
	free(prog->insns);
	prog->insns = NULL;
	prog->n_insns = 0;
}

static int export_pfc(const struct pol_policy *pol, int fd, struct fail *f)
{
	_cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
	int r;

	if (fd < 0)
		return -EINVAL;
	r = build_ctx(pol, &ctx, f);
	if (r < 0)
		return r;
	return scmp_rc(seccomp_export_pfc(ctx, fd));
}

int sbx_seccomp_export_pfc(const struct pol_policy *pol, int fd, struct fail *f)
{
	struct fail found;
	fail_init(&found);
	return finish(export_pfc(pol, fd, &found), &found, f);
}

/* What sbx_seccomp_describe says of each kind of verdict, in the order it lists them. */
enum describe_group {
	DG_ALLOW,       /* allowed outright */
	DG_CHECKED,     /* allowed after argument checks (built in, or the policy's rules) */
	DG_REFUSED,     /* the refused list: known and refused, seccomp.allow may lift it */
	DG_NEVER,       /* never allowed */
	DG_DENIED,      /* refused by the policy's seccomp.deny */
	DG_ENOSYS,      /* ENOSYS whatever the policy says */
	DG_N,
};

static enum describe_group describe_group_of(const struct rule_entry *e)
{
	switch (e->kind) {
	case RULE_ALLOW:
		return DG_ALLOW;
	case RULE_REFUSE:
		return DG_REFUSED;
	case RULE_DENY:
		return never_find(e->nr) ? DG_NEVER : DG_DENIED;
	case RULE_ENOSYS:
		return DG_ENOSYS;
	case RULE_CLONE:
	case RULE_UNSHARE:
	case RULE_IOCTL:
	case RULE_SOCKET:
	case RULE_SOCKETPAIR:
	case RULE_PERSONALITY:
	case RULE_MODE:
	case RULE_MKNOD:
	case RULE_COND_ALLOW:
	case RULE_COND_DENY_ALLOW:
	case RULE_COND_DENY:
		break;
	}
	return DG_CHECKED;
}

/* Writes the names of every syscall in group g as comment lines of at most 96 columns. */
static int describe_names(FILE *f, const struct rule_set *set, enum describe_group g)
{
	size_t col = 0;
	for (size_t i = 0; i < set->n_rules; i++) {
		const struct rule_entry *e = &set->rules[i];
		if (e->nr < 0 || describe_group_of(e) != g)
			continue;
		_cleanup_free_ char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE,
									      e->nr);
		if (!name)
			continue;
		size_t len = strlen(name);
		if (col && col + 1 + len > 96) {
			if (fputc('\n', f) == EOF)
				return -EIO;
			col = 0;
		}
		if (fprintf(f, "%s%s", col ? " " : "#     ", name) < 0)
			return -EIO;
		col += col ? 1 + len : 6 + len;
	}
	if (col && fputc('\n', f) == EOF)
		return -EIO;
	return 0;
}

static int describe(const struct pol_policy *pol, FILE *stream, struct fail *f)
{
	_cleanup_(rule_set_done) struct rule_set set = { 0 };
	int r;

	if (!pol || !stream)
		return -EINVAL;
	bool kill = pol->seccomp_default == POL_SECCOMP_KILL;
	r = rule_set_init(&set, pol);
	if (r < 0)
		return r;
	r = collect_rules(pol, &set, f);
	if (r < 0)
		return r;
	const char *refusal = kill ? "killed" : "EPERM";
	static const char *const titles[DG_N] = {
		[DG_ALLOW] = "allowed",
		[DG_CHECKED] = "allowed or refused by their arguments (the rules below)",
		[DG_REFUSED] = "known and deliberately left out (seccomp.allow may lift them)",
		[DG_NEVER] = "never allowed, whatever the policy says",
		[DG_DENIED] = "the policy's seccomp.deny",
		[DG_ENOSYS] = "ENOSYS always: arguments out of the filter's reach (libc falls back)",
	};
	if (fprintf(stream, "# The seccomp filter for the native architecture, default_action %s.\n",
		    kill ? "kill" : "errno") < 0)
		return -EIO;
	for (int g = 0; g < DG_N; g++) {
		bool any = false;
		for (size_t i = 0; i < set.n_rules && !any; i++)
			any = set.rules[i].nr >= 0 && (int)describe_group_of(&set.rules[i]) == g;
		if (!any)
			continue;
		bool refusal_group = g == DG_REFUSED || g == DG_NEVER || g == DG_DENIED;
		if (fprintf(stream, "#   %s%s%s%s:\n", refusal_group ? "refused, " : "",
			    refusal_group ? refusal : "", refusal_group ? ": " : "", titles[g]) < 0)
			return -EIO;
		r = describe_names(stream, &set, (enum describe_group)g);
		if (r < 0)
			return r;
	}
	if (fprintf(stream, "#   every other syscall, unknown to this filter: %s\n#\n",
		    kill ? "killed" : "ENOSYS (libc falls back as on an older kernel)") < 0)
		return -EIO;
	return 0;
}

int sbx_seccomp_describe(const struct pol_policy *pol, FILE *stream, struct fail *f)
{
	struct fail found;
	fail_init(&found);
	return finish(describe(pol, stream, &found), &found, f);
}

int sbx_seccomp_install(const struct sbx_seccomp_prog *prog)
{
	struct sock_fprog fprog;

	if (!prog || !prog->insns || prog->n_insns == 0 || prog->n_insns > BPF_MAXINSNS)
		return -EINVAL;
	fprog = (struct sock_fprog){
		.len = (unsigned short)prog->n_insns,
		.filter = prog->insns,
	};

	/*
	 * Flags 0: no TSYNC (the child is single-threaded when it installs the filter) and no
	 * listener. The kernel refuses with EACCES unless no_new_privs is set (or the caller
	 * has CAP_SYS_ADMIN), which keeps set-id programs from running under a filter.
	 */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0u, &fprog) < 0)
		return -errno;
	return 0;
}

/* Appends text to a growing buffer; returns false on allocation failure. */
static bool key_add(char **buf, size_t *len, size_t *cap, const char *text)
{
	size_t n = strlen(text);
	if (*len + n + 1 > *cap) {
		size_t want = (*cap ? *cap * 2 : 256) + n;
		char *grown = realloc(*buf, want);
		if (!grown)
			return false;
		*buf = grown;
		*cap = want;
	}
	memcpy(*buf + *len, text, n + 1);
	*len += n;
	return true;
}

int sbx_seccomp_key(const struct pol_policy *pol, char **out)
{
	/*
	 * Every input of build_ctx() is here, in a fixed order and unambiguous form (names
	 * cannot hold ';', ',', '|' or ' '): the default action, the io_uring opt-in, the
	 * allow and deny lists and the conditional rules. A new input must be added here too,
	 * or a precompiled filter could be used for a policy it was not built from.
	 */
	char *buf = NULL, item[128];
	size_t len = 0, cap = 0;
	bool ok = true;
	(void)snprintf(item, sizeof(item), "v1;arch=%u;default=%d;io_uring=%d;allow=",
		       seccomp_arch_native(), (int)pol->seccomp_default,
		       (pol->unsafe & POL_UNSAFE_IO_URING) != 0);
	ok = key_add(&buf, &len, &cap, item);
	for (size_t i = 0; ok && i < pol->n_seccomp_allow; i++)
		ok = key_add(&buf, &len, &cap, pol->seccomp_allow[i]) &&
		     key_add(&buf, &len, &cap, ",");
	ok = ok && key_add(&buf, &len, &cap, ";deny=");
	for (size_t i = 0; ok && i < pol->n_seccomp_deny; i++)
		ok = key_add(&buf, &len, &cap, pol->seccomp_deny[i]) &&
		     key_add(&buf, &len, &cap, ",");
	ok = ok && key_add(&buf, &len, &cap, ";rules=");
	for (size_t i = 0; ok && i < pol->n_seccomp_rules; i++) {
		const struct pol_syscall_rule *r = &pol->seccomp_rules[i];
		ok = key_add(&buf, &len, &cap, r->name);
		(void)snprintf(item, sizeof(item), " %s", r->allow ? "allow" : "deny");
		ok = ok && key_add(&buf, &len, &cap, item);
		for (size_t c = 0; ok && c < r->n_conds; c++) {
			const struct pol_arg_cond *cd = &r->conds[c];
			(void)snprintf(item, sizeof(item), " %u:%d:%llx:%llx", cd->index, (int)cd->op,
				       (unsigned long long)cd->value, (unsigned long long)cd->mask);
			ok = key_add(&buf, &len, &cap, item);
		}
		ok = ok && key_add(&buf, &len, &cap, "|");
	}
	if (!ok) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}

int sbx_seccomp_build_fast(const struct pol_policy *pol, const struct sbx_seccomp_precompiled *pre,
			   struct sbx_seccomp_prog *out, struct fail *f)
{
	if (pre && pre->key && pre->n_insns && pre->n_insns <= BPF_MAXINSNS) {
		_cleanup_free_ char *key = NULL;
		int r = sbx_seccomp_key(pol, &key);
		if (r < 0)
			return fail_set(f, r, "compile the seccomp filter");
		if (strcmp(key, pre->key) == 0) {
			struct sock_filter *insns = calloc(pre->n_insns, sizeof(*insns));
			if (!insns)
				return fail_set(f, -ENOMEM, "compile the seccomp filter");
			memcpy(insns, pre->insns, pre->n_insns * sizeof(*insns));
			out->insns = insns;
			out->n_insns = pre->n_insns;
			return 0;
		}
	}
	return sbx_seccomp_build(pol, out, f);
}
