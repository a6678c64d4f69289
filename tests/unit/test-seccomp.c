/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for sandbox/seccomp.c: the filter is compiled to classic BPF and run in the
 * simulator (bpf-sim.c) against an (arch, syscall, args) verdict table. Nothing is loaded
 * into the kernel here; the live check belongs in tests/priv/.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpf-sim.h"
#include "cleanup.h"
#include "policy.h"
#include "sbx-seccomp.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define FOREIGN_ARCH AUDIT_ARCH_I386 /* the compat ABI: int 0x80 from a 64-bit task */
#define FOREIGN_NR_READ 3
#define FOREIGN_NR_CHMOD 15
#define FOREIGN_NR_FCHMODAT 306
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define FOREIGN_ARCH AUDIT_ARCH_ARM
#define FOREIGN_NR_READ 3
#define FOREIGN_NR_CHMOD 15
#define FOREIGN_NR_FCHMODAT 333
#else
#error "test-seccomp: add this architecture's audit token"
#endif

#define ACT_ALLOW SECCOMP_RET_ALLOW
#define ACT_KILL SECCOMP_RET_KILL_PROCESS
#define ACT_ERRNO(e) (SECCOMP_RET_ERRNO | ((uint32_t)(e) & SECCOMP_RET_DATA))

/* Kernel headers older than 6.6 lack it; the number is the same on every architecture here. */
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif

#define NS_CLONE \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS | \
	 CLONE_NEWIPC | CLONE_NEWCGROUP)

/* Programs shared by the tests that use the unmodified default policy. */
struct fixture {
	struct sbx_seccomp_prog errno_mode;
	struct sbx_seccomp_prog kill_mode;
};

static int group_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct pol_policy pol;

	if (!f)
		return -1;
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_default = POL_SECCOMP_ERRNO;
	if (sbx_seccomp_build(&pol, &f->errno_mode, NULL) < 0)
		goto fail;
	pol.seccomp_default = POL_SECCOMP_KILL;
	if (sbx_seccomp_build(&pol, &f->kill_mode, NULL) < 0)
		goto fail;
	*state = f;
	return 0;
fail:
	sbx_seccomp_prog_done(&f->errno_mode);
	sbx_seccomp_prog_done(&f->kill_mode);
	free(f);
	return -1;
}

static int group_teardown(void **state)
{
	struct fixture *f = *state;

	sbx_seccomp_prog_done(&f->errno_mode);
	sbx_seccomp_prog_done(&f->kill_mode);
	free(f);
	return 0;
}

/*
 * Runs prog in the simulator for one call of nr with all six arguments, on arch; fails the
 * test if the simulator rejects it. Returns the action.
 */
static uint32_t verdict6(const struct sbx_seccomp_prog *prog, uint32_t arch, int nr,
			 const uint64_t args[6])
{
	struct seccomp_data d;
	uint32_t action = 0xdeadbeefu;

	memset(&d, 0, sizeof(d));
	d.nr = nr;
	d.arch = arch;
	d.instruction_pointer = 0x401000;
	memcpy(d.args, args, sizeof(d.args));
	assert_int_equal(bpf_sim_run(prog->insns, prog->n_insns, &d, &action), 0);
	return action;
}

/* As verdict6(), with two arguments (the others 0). */
static uint32_t verdict_arch(const struct sbx_seccomp_prog *prog, uint32_t arch, int nr,
			     uint64_t a0, uint64_t a1)
{
	const uint64_t args[6] = { a0, a1 };
	return verdict6(prog, arch, nr, args);
}

static uint32_t verdict(const struct sbx_seccomp_prog *prog, int nr, uint64_t a0, uint64_t a1)
{
	return verdict_arch(prog, NATIVE_ARCH, nr, a0, a1);
}

/* As verdict(), with a third argument. */
static uint32_t verdict3(const struct sbx_seccomp_prog *prog, int nr, uint64_t a0, uint64_t a1,
			 uint64_t a2)
{
	const uint64_t args[6] = { a0, a1, a2 };
	return verdict6(prog, NATIVE_ARCH, nr, args);
}

static const struct sbx_seccomp_prog *errno_prog(void **state)
{
	return &((struct fixture *)*state)->errno_mode;
}

static const struct sbx_seccomp_prog *kill_prog(void **state)
{
	return &((struct fixture *)*state)->kill_mode;
}

/* Builds pol into *out, asserting success. */
static void build_ok(const struct pol_policy *pol, struct sbx_seccomp_prog *out)
{
	assert_int_equal(sbx_seccomp_build(pol, out, NULL), 0);
	assert_non_null(out->insns);
	assert_true(out->n_insns > 0);
}

/* Why the last build_fails failed (sbx_seccomp_build's struct fail). */
static struct fail last_fail;

/* Asserts that building pol fails with err and leaves the output untouched. */
static void build_fails(const struct pol_policy *pol, int err)
{
	struct sbx_seccomp_prog prog = { .insns = (struct sock_filter *)(uintptr_t)0x1, .n_insns = 42 };

	fail_init(&last_fail);
	assert_int_equal(sbx_seccomp_build(pol, &prog, &last_fail), err);
	assert_ptr_equal(prog.insns, (struct sock_filter *)(uintptr_t)0x1);
	assert_int_equal(prog.n_insns, 42);
}

/* A tiny deterministic generator for argument sweeps (xorshift64). */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* --- the simulator itself ------------------------------------------------------------ */

static void test_sim_runs_hand_program(void **state)
{
	(void)state;
	/* A = nr; M[0] = A; A &= 0xf0; A |= M[0] via X; jset; ret A. */
	const struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_STMT(BPF_ST, 0),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf0),
		BPF_STMT(BPF_LDX | BPF_MEM, 0),
		BPF_STMT(BPF_ALU | BPF_OR | BPF_X, 0),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x100, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct seccomp_data d = { .nr = 0x23 };
	uint32_t act = 0;

	assert_int_equal(bpf_sim_run(prog, ELEMENTSOF(prog), &d, &act), 0);
	assert_int_equal(act, 0x23);
	d.nr = 0x123;
	assert_int_equal(bpf_sim_run(prog, ELEMENTSOF(prog), &d, &act), 0);
	assert_int_equal(act, SECCOMP_RET_KILL_PROCESS);
}

static void test_sim_rejects_bad_programs(void **state)
{
	(void)state;
	const struct sock_filter jump_out[] = {
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct sock_filter ja_out[] = {
		BPF_STMT(BPF_JMP | BPF_JA, 1),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct sock_filter load_out[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, sizeof(struct seccomp_data)),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct sock_filter load_unaligned[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct sock_filter no_ret[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	};
	const struct sock_filter mem_unset[] = {
		BPF_STMT(BPF_LD | BPF_MEM, 3),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	const struct sock_filter mem_one_path[] = {
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_ST, 1),
		BPF_STMT(BPF_LD | BPF_MEM, 1),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	const struct sock_filter byte_load[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct sock_filter div_zero[] = {
		BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct seccomp_data d = { 0 };
	uint32_t act = 7;

	assert_int_equal(bpf_sim_check(jump_out, ELEMENTSOF(jump_out)), -EINVAL);
	assert_int_equal(bpf_sim_check(ja_out, ELEMENTSOF(ja_out)), -EINVAL);
	assert_int_equal(bpf_sim_check(load_out, ELEMENTSOF(load_out)), -EINVAL);
	assert_int_equal(bpf_sim_check(load_unaligned, ELEMENTSOF(load_unaligned)), -EINVAL);
	assert_int_equal(bpf_sim_check(no_ret, ELEMENTSOF(no_ret)), -EINVAL);
	assert_int_equal(bpf_sim_check(mem_unset, ELEMENTSOF(mem_unset)), -EINVAL);
	assert_int_equal(bpf_sim_check(mem_one_path, ELEMENTSOF(mem_one_path)), -EINVAL);
	assert_int_equal(bpf_sim_check(byte_load, ELEMENTSOF(byte_load)), -EINVAL);
	assert_int_equal(bpf_sim_check(div_zero, ELEMENTSOF(div_zero)), -EINVAL);
	assert_int_equal(bpf_sim_check(jump_out, 0), -EINVAL);
	assert_int_equal(bpf_sim_run(jump_out, ELEMENTSOF(jump_out), &d, &act), -EINVAL);
	assert_int_equal(act, 7);
}

/* --- the default filter, errno mode --------------------------------------------------- */

static void test_prog_is_valid_bpf(void **state)
{
	const struct sbx_seccomp_prog *p = errno_prog(state);

	assert_int_equal(bpf_sim_check(p->insns, p->n_insns), 0);
	assert_true(p->n_insns <= BPF_MAXINSNS);
	assert_int_equal(bpf_sim_check(kill_prog(state)->insns, kill_prog(state)->n_insns), 0);
}

static void test_ordinary_syscalls_allowed(void **state)
{
	static const int nrs[] = {
		__NR_read, __NR_write, __NR_openat, __NR_close, __NR_execve, __NR_execveat,
		__NR_exit_group, __NR_wait4, __NR_waitid, __NR_mmap, __NR_mprotect, __NR_munmap,
		__NR_brk, __NR_rt_sigaction, __NR_rt_sigprocmask, __NR_rt_sigreturn, __NR_futex,
		__NR_rseq, __NR_set_robust_list, __NR_set_tid_address, __NR_prlimit64,
		__NR_getrandom, __NR_statx, __NR_newfstatat, __NR_faccessat2, __NR_close_range,
		__NR_pidfd_open, __NR_pidfd_send_signal, __NR_epoll_create1, __NR_epoll_ctl,
		__NR_epoll_pwait, __NR_eventfd2, __NR_pipe2, __NR_dup3, __NR_fcntl, __NR_getdents64,
		__NR_getcwd, __NR_chdir, __NR_unlinkat, __NR_renameat2, __NR_mkdirat, __NR_linkat,
		__NR_symlinkat, __NR_fchmodat, __NR_fchownat, __NR_utimensat, __NR_memfd_create,
		__NR_copy_file_range, __NR_sendfile, __NR_splice, __NR_fallocate, __NR_membarrier,
		__NR_madvise, __NR_prctl, __NR_uname, __NR_sysinfo, __NR_kill, __NR_tgkill,
		__NR_setsid, __NR_setpgid, __NR_connect, __NR_sendmsg, __NR_recvmsg, __NR_sendmmsg,
		__NR_setuid, __NR_setgroups, __NR_capget, __NR_capset, __NR_sigaltstack,
		__NR_restart_syscall, __NR_clock_gettime, __NR_clock_nanosleep, __NR_getxattr,
		__NR_setxattr, __NR_shmget, __NR_semop, __NR_msgget, __NR_inotify_init1,
		__NR_timerfd_create, __NR_signalfd4, __NR_sched_getaffinity, __NR_mlock,
		__NR_mincore, __NR_msync, __NR_seccomp, __NR_umask,
#ifdef __NR_vfork
		__NR_vfork, __NR_fork, __NR_open, __NR_stat, __NR_access, __NR_pipe, __NR_poll,
		__NR_select, __NR_dup2, __NR_arch_prctl, __NR_alarm,
#endif
	};

	for (size_t i = 0; i < ELEMENTSOF(nrs); i++) {
		uint32_t act = verdict(errno_prog(state), nrs[i], 0, 0);

		if (act != ACT_ALLOW)
			fail_msg("syscall %d: got 0x%x, want ALLOW", nrs[i], act);
	}
}

/* Every syscall that is never allowed, for the architectures that have it. */
static const int never_nrs[] = {
	__NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev, __NR_process_madvise,
	__NR_pidfd_getfd, __NR_mount, __NR_umount2, __NR_mount_setattr, __NR_move_mount,
	__NR_open_tree, __NR_fsopen, __NR_fsconfig, __NR_fsmount, __NR_fspick, __NR_pivot_root,
	__NR_chroot, __NR_setns, __NR_bpf, __NR_perf_event_open, __NR_kexec_load,
	__NR_kexec_file_load, __NR_init_module, __NR_finit_module, __NR_delete_module,
	__NR_keyctl, __NR_add_key, __NR_request_key, __NR_userfaultfd, __NR_open_by_handle_at,
	__NR_name_to_handle_at, __NR_reboot, __NR_swapon, __NR_swapoff, __NR_acct,
	__NR_settimeofday, __NR_clock_settime, __NR_clock_adjtime, __NR_adjtimex,
	__NR_quotactl, __NR_quotactl_fd, __NR_vhangup, __NR_syslog,
	__NR_fanotify_init, __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
#ifdef __NR_iopl
	__NR_iopl,
#endif
#ifdef __NR_ioperm
	__NR_ioperm,
#endif
#ifdef __NR_uselib
	__NR_uselib,
#endif
#ifdef __NR__sysctl
	__NR__sysctl,
#endif
#ifdef __NR_lookup_dcookie
	__NR_lookup_dcookie,
#endif
#ifdef __NR_nfsservctl
	__NR_nfsservctl,
#endif
#ifdef __NR_umount
	__NR_umount,
#endif
#ifdef __NR_stime
	__NR_stime,
#endif
};

static void test_never_allowed_eperm(void **state)
{
	for (size_t i = 0; i < ELEMENTSOF(never_nrs); i++) {
		uint32_t act = verdict(errno_prog(state), never_nrs[i], 0, 0);

		if (act != ACT_ERRNO(EPERM))
			fail_msg("syscall %d: got 0x%x, want ERRNO(EPERM)", never_nrs[i], act);
	}
}

static void test_unknown_syscall_enosys(void **state)
{
	assert_int_equal(verdict(errno_prog(state), 999, 0, 0), ACT_ERRNO(ENOSYS));
	assert_int_equal(verdict(errno_prog(state), 0x3fffffff, 0, 0), ACT_ERRNO(ENOSYS));
	assert_int_equal(verdict(errno_prog(state), -1, 0, 0), ACT_ERRNO(ENOSYS));
}

/* Real syscalls left off the allowlist on purpose: known, so refused with EPERM (#15). */
static void test_refused_syscall_eperm(void **state)
{
	assert_int_equal(verdict(errno_prog(state), __NR_kcmp, 0, 0), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(errno_prog(state), __NR_move_pages, 0, 0), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(errno_prog(state), __NR_sethostname, 0, 0), ACT_ERRNO(EPERM));
#ifdef __NR_modify_ldt
	assert_int_equal(verdict(errno_prog(state), __NR_modify_ldt, 0, 0), ACT_ERRNO(EPERM));
#endif
}

static void test_clone3_enosys(void **state)
{
	assert_int_equal(verdict(errno_prog(state), __NR_clone3, 0, 0), ACT_ERRNO(ENOSYS));
	/* Also in kill mode: libc must be able to fall back to clone. */
	assert_int_equal(verdict(kill_prog(state), __NR_clone3, 0, 0), ACT_ERRNO(ENOSYS));
}

static void test_clone_namespace_flags_eperm(void **state)
{
	static const uint64_t ns[] = {
		CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWUTS,
		CLONE_NEWIPC, CLONE_NEWCGROUP,
	};

	for (size_t i = 0; i < ELEMENTSOF(ns); i++) {
		assert_int_equal(verdict(errno_prog(state), __NR_clone, ns[i], 0), ACT_ERRNO(EPERM));
		assert_int_equal(verdict(errno_prog(state), __NR_clone, ns[i] | SIGCHLD, 0),
				 ACT_ERRNO(EPERM));
		assert_int_equal(verdict(errno_prog(state), __NR_clone,
					 ns[i] | CLONE_VM | CLONE_VFORK | (1ull << 40), 0),
				 ACT_ERRNO(EPERM));
	}
	assert_int_equal(verdict(errno_prog(state), __NR_clone, NS_CLONE | SIGCHLD, 0),
			 ACT_ERRNO(EPERM));
	assert_int_equal(verdict(errno_prog(state), __NR_clone, ~0ull, 0), ACT_ERRNO(EPERM));
}

static void test_clone_plain_allowed(void **state)
{
	static const uint64_t ok[] = {
		SIGCHLD,
		CLONE_VM | CLONE_VFORK | SIGCHLD, /* posix_spawn */
		CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
			CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID, /* pthreads */
		CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD, /* fork() */
		CLONE_PIDFD | SIGCHLD,
		0,
		SIGCHLD | (1ull << 32), /* the kernel ignores the upper half */
	};

	for (size_t i = 0; i < ELEMENTSOF(ok); i++)
		assert_int_equal(verdict(errno_prog(state), __NR_clone, ok[i], 0), ACT_ALLOW);
}

static void test_unshare(void **state)
{
	static const uint64_t ns[] = {
		CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWUTS,
		CLONE_NEWIPC, CLONE_NEWCGROUP, CLONE_NEWTIME,
	};

	for (size_t i = 0; i < ELEMENTSOF(ns); i++)
		assert_int_equal(verdict(errno_prog(state), __NR_unshare, ns[i] | CLONE_FILES, 0),
				 ACT_ERRNO(EPERM));
	assert_int_equal(verdict(errno_prog(state), __NR_unshare, CLONE_NEWNS, 0),
			 ACT_ERRNO(EPERM));
	assert_int_equal(verdict(errno_prog(state), __NR_unshare, CLONE_FILES, 0), ACT_ALLOW);
	assert_int_equal(verdict(errno_prog(state), __NR_unshare,
				 CLONE_FILES | CLONE_FS | CLONE_SYSVSEM, 0),
			 ACT_ALLOW);
	assert_int_equal(verdict(errno_prog(state), __NR_unshare, 0, 0), ACT_ALLOW);
}

static void test_ioctl(void **state)
{
	const struct sbx_seccomp_prog *p = errno_prog(state);

	assert_int_equal(verdict(p, __NR_ioctl, 1, TIOCSTI), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(p, __NR_ioctl, 1, TIOCSTI | (1ull << 32)), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(p, __NR_ioctl, 1, TIOCSTI | 0xffffffff00000000ull),
			 ACT_ERRNO(EPERM));
	assert_int_equal(verdict(p, __NR_ioctl, 1, TIOCLINUX), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(p, __NR_ioctl, 1, TIOCLINUX | (1ull << 63)), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(p, __NR_ioctl, 1, TCGETS), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_ioctl, 1, TIOCGWINSZ), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_ioctl, 1, FIONREAD), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_ioctl, 1, 0), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_ioctl, 1, 0xffffffffu), ACT_ALLOW);
}

/* Every command word gets exactly the answer set membership of its low 32 bits predicts. */
static void test_ioctl_partition_sweep(void **state)
{
	const struct sbx_seccomp_prog *p = errno_prog(state);
	static const uint32_t deny[] = { TIOCSTI, TIOCLINUX };
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < 200000; i++) {
		uint64_t cmd;
		uint32_t lo;
		bool bad;

		if (i < 64 * 64) {
			/* one- and two-bit neighbours of each denied command */
			cmd = deny[i % 2] ^ (1ull << (i / 64)) ^ (1ull << (i % 64));
		} else {
			cmd = next_rand(&seed);
			if (i % 3 == 0)
				cmd = (cmd & ~0xffffffffull) | deny[i % 2];
		}
		lo = (uint32_t)cmd;
		bad = lo == deny[0] || lo == deny[1];
		if (verdict(p, __NR_ioctl, 0, cmd) != (bad ? ACT_ERRNO(EPERM) : ACT_ALLOW))
			fail_msg("ioctl cmd 0x%llx", (unsigned long long)cmd);
	}
}

static void test_socket_domains(void **state)
{
	const struct sbx_seccomp_prog *p = errno_prog(state);
	uint64_t seed = 12345;

	assert_int_equal(verdict(p, __NR_socket, AF_UNIX, SOCK_STREAM), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_socket, AF_INET, SOCK_STREAM), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_socket, AF_INET6, SOCK_DGRAM), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_socket, AF_PACKET, SOCK_RAW), ACT_ERRNO(EAFNOSUPPORT));
	/* netlink: NETLINK_ROUTE only, compared on the low 32 bits like the kernel does */
	assert_int_equal(verdict3(p, __NR_socket, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE), ACT_ALLOW);
	assert_int_equal(verdict3(p, __NR_socket, AF_NETLINK, SOCK_DGRAM, 1ull << 32), ACT_ALLOW);
	for (uint64_t proto = 1; proto < 64; proto++)
		assert_int_equal(verdict3(p, __NR_socket, AF_NETLINK, SOCK_RAW, proto),
				 ACT_ERRNO(EAFNOSUPPORT));
	assert_int_equal(verdict3(p, __NR_socket, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT | 1ull << 40),
			 ACT_ERRNO(EAFNOSUPPORT));
	assert_int_equal(verdict(p, __NR_socket, AF_VSOCK, SOCK_STREAM), ACT_ERRNO(EAFNOSUPPORT));
	assert_int_equal(verdict(p, __NR_socket, AF_ALG, SOCK_SEQPACKET), ACT_ERRNO(EAFNOSUPPORT));
	assert_int_equal(verdict(p, __NR_socket, AF_UNSPEC, 0), ACT_ERRNO(EAFNOSUPPORT));

	for (uint64_t dom = 0; dom < 4096; dom++) {
		/* protocol 0 is NETLINK_ROUTE for netlink */
		bool ok = dom == AF_UNIX || dom == AF_INET || dom == AF_INET6 || dom == AF_NETLINK;

		assert_int_equal(verdict(p, __NR_socket, dom, 0),
				 ok ? ACT_ALLOW : ACT_ERRNO(EAFNOSUPPORT));
	}
	for (size_t i = 0; i < 20000; i++) {
		uint64_t dom = next_rand(&seed);
		uint32_t lo = (uint32_t)dom;
		bool ok = lo == AF_UNIX || lo == AF_INET || lo == AF_INET6 || lo == AF_NETLINK;

		assert_int_equal(verdict(p, __NR_socket, dom, 0),
				 ok ? ACT_ALLOW : ACT_ERRNO(EAFNOSUPPORT));
	}
}

static void test_socketpair_unix_only(void **state)
{
	const struct sbx_seccomp_prog *p = errno_prog(state);

	assert_int_equal(verdict(p, __NR_socketpair, AF_UNIX, SOCK_STREAM), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_socketpair, AF_INET, SOCK_STREAM),
			 ACT_ERRNO(EAFNOSUPPORT));
	assert_int_equal(verdict(p, __NR_socketpair, AF_NETLINK, SOCK_RAW),
			 ACT_ERRNO(EAFNOSUPPORT));
	for (uint64_t dom = 0; dom < 1024; dom++)
		assert_int_equal(verdict(p, __NR_socketpair, dom, 0),
				 dom == AF_UNIX ? ACT_ALLOW : ACT_ERRNO(EAFNOSUPPORT));
}

static void test_personality(void **state)
{
	const struct sbx_seccomp_prog *p = errno_prog(state);
	static const uint32_t ok[] = { 0x0, 0x8, 0x20000, 0x20008, 0xffffffffu };
	uint64_t seed = 777;

	for (size_t i = 0; i < ELEMENTSOF(ok); i++)
		assert_int_equal(verdict(p, __NR_personality, ok[i], 0), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_personality, 0x0400000, 0), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(p, __NR_personality, READ_IMPLIES_EXEC, 0), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(p, __NR_personality, ADDR_NO_RANDOMIZE, 0), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(p, __NR_personality, PER_BSD, 0), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(p, __NR_personality, 0xfffffffe, 0), ACT_ERRNO(EPERM));
	for (size_t i = 0; i < 20000; i++) {
		uint64_t v = next_rand(&seed);
		uint32_t lo;
		bool good = false;

		/* a quarter of the draws keep an allowed low half under random upper bits */
		if (i % 4 == 0)
			v = (v & ~0xffffffffull) | ok[i % ELEMENTSOF(ok)];
		lo = (uint32_t)v;
		for (size_t k = 0; k < ELEMENTSOF(ok); k++)
			good = good || lo == ok[k];
		assert_int_equal(verdict(p, __NR_personality, v, 0),
				 good ? ACT_ALLOW : ACT_ERRNO(EPERM));
	}
}

static void test_foreign_arch_killed(void **state)
{
	assert_int_equal(verdict_arch(errno_prog(state), FOREIGN_ARCH, FOREIGN_NR_READ, 0, 0),
			 ACT_KILL);
	assert_int_equal(verdict_arch(errno_prog(state), FOREIGN_ARCH, 0, 0, 0), ACT_KILL);
	assert_int_equal(verdict_arch(errno_prog(state), 0, __NR_read, 0, 0), ACT_KILL);
}

static void test_x32_numbers_killed(void **state)
{
#ifdef __x86_64__
	/* x32 syscalls arrive with AUDIT_ARCH_X86_64 and __X32_SYSCALL_BIT set. */
	static const int x32[] = {
		0x40000000 | 0,   /* read */
		0x40000000 | 1,   /* write */
		0x40000000 | 520, /* x32 execve */
		0x40000000 | 101, /* ptrace */
		0x40000000 | 999,
	};

	for (size_t i = 0; i < ELEMENTSOF(x32); i++) {
		assert_int_equal(verdict(errno_prog(state), x32[i], 0, 0), ACT_KILL);
		assert_int_equal(verdict(kill_prog(state), x32[i], 0, 0), ACT_KILL);
	}
#else
	(void)state;
	skip();
#endif
}

/* --- kill mode ---------------------------------------------------------------------- */

static void test_kill_mode(void **state)
{
	const struct sbx_seccomp_prog *p = kill_prog(state);

	assert_int_equal(verdict(p, 999, 0, 0), ACT_KILL);
	assert_int_equal(verdict(p, __NR_kcmp, 0, 0), ACT_KILL);
	assert_int_equal(verdict(p, __NR_read, 0, 0), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_execve, 0, 0), ACT_ALLOW);
	for (size_t i = 0; i < ELEMENTSOF(never_nrs); i++)
		assert_int_equal(verdict(p, never_nrs[i], 0, 0), ACT_KILL);
	assert_int_equal(verdict(p, __NR_clone, CLONE_NEWUSER | SIGCHLD, 0), ACT_KILL);
	assert_int_equal(verdict(p, __NR_clone, SIGCHLD, 0), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_unshare, CLONE_NEWNS, 0), ACT_KILL);
	assert_int_equal(verdict(p, __NR_unshare, CLONE_FILES, 0), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_ioctl, 0, TIOCSTI), ACT_KILL);
	assert_int_equal(verdict(p, __NR_ioctl, 0, TCGETS), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_personality, 0x0400000, 0), ACT_KILL);
	assert_int_equal(verdict(p, __NR_personality, 0xffffffffu, 0), ACT_ALLOW);
	/* Unsupported socket families are a normal runtime probe, not a violation. */
	assert_int_equal(verdict3(p, __NR_socket, AF_NETLINK, 0, NETLINK_AUDIT),
			 ACT_ERRNO(EAFNOSUPPORT));
	assert_int_equal(verdict(p, __NR_socket, AF_INET, 0), ACT_ALLOW);
	assert_int_equal(verdict3(p, __NR_mknodat, AT_FDCWD, 0, S_IFCHR | 0600), ACT_KILL);
	assert_int_equal(verdict3(p, __NR_mknodat, AT_FDCWD, 0, S_IFIFO | 0600), ACT_ALLOW);
}

/* mknod/mknodat: FIFOs (mkfifo) pass, every other file type is refused with EPERM. */
static void test_mknod_fifo_only(void **state)
{
	const struct sbx_seccomp_prog *p = errno_prog(state);
	static const uint32_t refused[] = { S_IFCHR, S_IFBLK, S_IFREG, S_IFSOCK, S_IFDIR, 0 };

	assert_int_equal(verdict3(p, __NR_mknodat, AT_FDCWD, 0, S_IFIFO | 0644), ACT_ALLOW);
	for (size_t i = 0; i < ELEMENTSOF(refused); i++)
		assert_int_equal(verdict3(p, __NR_mknodat, AT_FDCWD, 0, refused[i] | 0644),
				 ACT_ERRNO(EPERM));
	/* every mode value: the FIFO type bits decide, and no set-id bit may come along */
	for (uint64_t mode = 0; mode <= 0177777; mode += 0111)
		assert_int_equal(verdict3(p, __NR_mknodat, AT_FDCWD, 0, mode),
				 (mode & S_IFMT) == S_IFIFO && !(mode & (S_ISUID | S_ISGID)) ?
					 ACT_ALLOW : ACT_ERRNO(EPERM));
#ifdef __NR_mknod
	assert_int_equal(verdict(p, __NR_mknod, 0, S_IFIFO | 0600), ACT_ALLOW);
	assert_int_equal(verdict(p, __NR_mknod, 0, S_IFCHR | 0600), ACT_ERRNO(EPERM));
#endif
}

/* --- policy additions and removals -------------------------------------------------- */

static void test_policy_allow_never_einval(void **state)
{
	char *names[] = { (char *)"ptrace" };
	struct pol_policy pol;

	(void)state;
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_allow = names;
	pol.n_seccomp_allow = 1;
	build_fails(&pol, -EINVAL);

	names[0] = (char *)"clone3";
	build_fails(&pol, -EINVAL);
	names[0] = (char *)"io_uring_setup"; /* without the unsafe bit */
	build_fails(&pol, -EINVAL);
}

static void test_policy_unknown_name_einval(void **state)
{
	char *names[] = { (char *)"read", (char *)"no_such_syscall" };
	char *empty[] = { (char *)"" };
	struct pol_policy pol;

	(void)state;
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_allow = names;
	pol.n_seccomp_allow = 2;
	build_fails(&pol, -EINVAL);

	memset(&pol, 0, sizeof(pol));
	pol.seccomp_deny = names;
	pol.n_seccomp_deny = 2;
	build_fails(&pol, -EINVAL);

	memset(&pol, 0, sizeof(pol));
	pol.seccomp_allow = empty;
	pol.n_seccomp_allow = 1;
	build_fails(&pol, -EINVAL);
}

static void test_policy_bad_default_einval(void **state)
{
	struct pol_policy pol;

	(void)state;
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_default = (enum pol_seccomp_action)7;
	build_fails(&pol, -EINVAL);
	build_fails(NULL, -EINVAL);
}

static void test_policy_allow_adds(void **state)
{
	char *names[] = { (char *)"kcmp", (char *)"ioctl", (char *)"read" };
	struct pol_policy pol;
	struct sbx_seccomp_prog p = { 0 };

	(void)state;
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_allow = names;
	pol.n_seccomp_allow = ELEMENTSOF(names);
	build_ok(&pol, &p);
	assert_int_equal(verdict(&p, __NR_kcmp, 0, 0), ACT_ALLOW);
	assert_int_equal(verdict(&p, __NR_read, 0, 0), ACT_ALLOW);
	/* Naming a filtered syscall does not lift its argument checks. */
	assert_int_equal(verdict(&p, __NR_ioctl, 0, TIOCSTI), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(&p, __NR_ioctl, 0, TCGETS), ACT_ALLOW);
	sbx_seccomp_prog_done(&p);
}

static void test_policy_deny_read(void **state)
{
	char *names[] = { (char *)"read", (char *)"socket", (char *)"clone3" };
	struct pol_policy pol;
	struct sbx_seccomp_prog p = { 0 };

	(void)state;
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_deny = names;
	pol.n_seccomp_deny = ELEMENTSOF(names);
	build_ok(&pol, &p);
	assert_int_equal(verdict(&p, __NR_read, 0, 0), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(&p, __NR_write, 0, 0), ACT_ALLOW);
	/* A deny replaces argument checks too. */
	assert_int_equal(verdict(&p, __NR_socket, AF_UNIX, 0), ACT_ERRNO(EPERM));
	/* clone3 stays ENOSYS so that libc still falls back to clone. */
	assert_int_equal(verdict(&p, __NR_clone3, 0, 0), ACT_ERRNO(ENOSYS));
	sbx_seccomp_prog_done(&p);

	pol.seccomp_default = POL_SECCOMP_KILL;
	build_ok(&pol, &p);
	assert_int_equal(verdict(&p, __NR_read, 0, 0), ACT_KILL);
	sbx_seccomp_prog_done(&p);
}

static void test_policy_deny_wins_over_allow(void **state)
{
	char *names[] = { (char *)"kcmp" };
	struct pol_policy pol;
	struct sbx_seccomp_prog p = { 0 };

	(void)state;
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_allow = names;
	pol.n_seccomp_allow = 1;
	pol.seccomp_deny = names;
	pol.n_seccomp_deny = 1;
	build_ok(&pol, &p);
	assert_int_equal(verdict(&p, __NR_kcmp, 0, 0), ACT_ERRNO(EPERM));
	sbx_seccomp_prog_done(&p);
}

/* --- seccomp.rules: conditional verdicts ------------------------------------------ */

static struct pol_syscall_rule cond_rule(const char *name, bool allow, size_t n,
					 const struct pol_arg_cond *conds)
{
	struct pol_syscall_rule r;
	memset(&r, 0, sizeof(r));
	r.name = (char *)name;
	r.allow = allow;
	r.n_conds = n;
	for (size_t i = 0; i < n; i++)
		r.conds[i] = conds[i];
	return r;
}

static void build_rules(struct pol_syscall_rule *rules, size_t n, struct sbx_seccomp_prog *out)
{
	struct pol_policy pol;
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_rules = rules;
	pol.n_seccomp_rules = n;
	build_ok(&pol, out);
}

static void rules_fail(struct pol_syscall_rule *rules, size_t n, const char *why)
{
	struct pol_policy pol;
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_rules = rules;
	pol.n_seccomp_rules = n;
	build_fails(&pol, -EINVAL);
	if (!strstr(last_fail.what, why))
		fail_msg("reason '%s', want '%s'", last_fail.what, why);
}

/* A deny rule on an allowed syscall: refused when it holds, allowed otherwise. */
static void test_rule_deny_eq(void **state)
{
	(void)state;
	struct pol_arg_cond c = { .index = 1, .op = POL_CMP_EQ, .value = SIGKILL };
	struct pol_syscall_rule r = cond_rule("kill", false, 1, &c);
	struct sbx_seccomp_prog p = { 0 };
	build_rules(&r, 1, &p);
	assert_int_equal(verdict(&p, __NR_kill, 1234, SIGKILL), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(&p, __NR_kill, 1234, SIGTERM), ACT_ALLOW);
	assert_int_equal(verdict(&p, __NR_kill, 1234, SIGKILL | 1ull << 32), ACT_ALLOW); /* 64-bit compare */
	assert_int_equal(verdict(&p, __NR_read, 0, 0), ACT_ALLOW);
	sbx_seccomp_prog_done(&p);
}

/* masked_eq: the complement is exact for every value of the masked bits. */
static void test_rule_deny_masked(void **state)
{
	(void)state;
	struct pol_arg_cond c = { .index = 2, .op = POL_CMP_MASKED_EQ, .mask = 3, .value = 1 };
	struct pol_syscall_rule r = cond_rule("mprotect", false, 1, &c);
	struct sbx_seccomp_prog p = { 0 };
	build_rules(&r, 1, &p);
	for (uint64_t prot = 0; prot < 4096; prot++)
		assert_int_equal(verdict3(&p, __NR_mprotect, 0x10000, 4096, prot),
				 (prot & 3) == 1 ? ACT_ERRNO(EPERM) : ACT_ALLOW);
	assert_int_equal(verdict3(&p, __NR_mprotect, 0x10000, 4096, 1ull << 40 | 1),
			 ACT_ERRNO(EPERM));
	sbx_seccomp_prog_done(&p);
}

/* Two conditions: refused only when both hold; ordered comparisons complement exactly. */
static void test_rule_deny_two_conds(void **state)
{
	(void)state;
	struct pol_arg_cond c[2] = {
		{ .index = 0, .op = POL_CMP_LE, .value = 1 },
		{ .index = 1, .op = POL_CMP_GT, .value = 8 },
	};
	struct pol_syscall_rule r = cond_rule("kill", false, 2, c);
	struct sbx_seccomp_prog p = { 0 };
	build_rules(&r, 1, &p);
	for (uint64_t a0 = 0; a0 < 4; a0++)
		for (uint64_t a1 = 0; a1 < 16; a1++)
			assert_int_equal(verdict(&p, __NR_kill, a0, a1),
					 a0 <= 1 && a1 > 8 ? ACT_ERRNO(EPERM) : ACT_ALLOW);
	sbx_seccomp_prog_done(&p);
}

/* Allow rules on a syscall outside the allowlist: allowed when one holds, else the default. */
static void test_rule_allow(void **state)
{
	(void)state;
	struct pol_arg_cond c1 = { .index = 2, .op = POL_CMP_EQ, .value = 0 };
	struct pol_arg_cond c2 = { .index = 2, .op = POL_CMP_EQ, .value = 1 };
	struct pol_syscall_rule r[2] = { cond_rule("kcmp", true, 1, &c1),
					 cond_rule("kcmp", true, 1, &c2) };
	struct sbx_seccomp_prog p = { 0 };
	build_rules(r, 2, &p);
	assert_int_equal(verdict3(&p, __NR_kcmp, 1, 2, 0), ACT_ALLOW);
	assert_int_equal(verdict3(&p, __NR_kcmp, 1, 2, 1), ACT_ALLOW);
	assert_int_equal(verdict3(&p, __NR_kcmp, 1, 2, 2), ACT_ERRNO(ENOSYS));
	sbx_seccomp_prog_done(&p);
}

static void test_rule_refusals(void **state)
{
	(void)state;
	struct pol_arg_cond c = { .index = 0, .op = POL_CMP_EQ, .value = 0 };
	struct pol_arg_cond dup[2] = { c, c };
	struct pol_arg_cond bad_mask = { .index = 0, .op = POL_CMP_MASKED_EQ, .mask = 1, .value = 2 };
	struct pol_syscall_rule r[2];

	r[0] = cond_rule("ioctl", false, 1, &c);
	rules_fail(r, 1, "built-in argument checks");
	r[0] = cond_rule("ptrace", true, 1, &c);
	rules_fail(r, 1, "never allowed");
	r[0] = cond_rule("read", true, 1, &c);
	rules_fail(r, 1, "already allowed");
	r[0] = cond_rule("ptrace", false, 1, &c);
	rules_fail(r, 1, "refused already");
	r[0] = cond_rule("kill", false, 1, &c);
	r[1] = cond_rule("kill", false, 1, &c);
	rules_fail(r, 2, "only one deny rule");
	r[0] = cond_rule("kcmp", true, 1, &c);
	r[1] = cond_rule("kcmp", false, 1, &c);
	rules_fail(r, 2, "both allow and deny");
	r[0] = cond_rule("kill", false, 2, dup);
	rules_fail(r, 1, "two conditions on argument 0");
	r[0] = cond_rule("kill", false, 1, &bad_mask);
	rules_fail(r, 1, "outside its mask");
	r[0] = cond_rule("clone3", false, 1, &c);
	rules_fail(r, 1, "clone3");
	r[0] = cond_rule("no_such_call", false, 1, &c);
	rules_fail(r, 1, "unknown syscall");
	r[0] = cond_rule("kill", false, 0, &c);
	rules_fail(r, 1, "1 to 6 conditions");
}

/* --- set-user-ID and set-group-ID bits ------------------------------------------------ */

#define SETID ((uint64_t)(S_ISUID | S_ISGID))

/* A syscall that takes a file mode, and which argument holds it. */
struct mode_call {
	const char *name;
	int nr;
	unsigned arg;
	bool fifo_only; /* mknod, mknodat: a FIFO is the only file type allowed */
};

static const struct mode_call mode_calls[] = {
#ifdef __NR_chmod
	{ "chmod", __NR_chmod, 1, false },
#endif
	{ "fchmod", __NR_fchmod, 1, false },
	{ "fchmodat", __NR_fchmodat, 2, false },
	{ "fchmodat2", __NR_fchmodat2, 2, false },
#ifdef __NR_open
	{ "open", __NR_open, 2, false },
#endif
	{ "openat", __NR_openat, 3, false },
#ifdef __NR_creat
	{ "creat", __NR_creat, 1, false },
#endif
#ifdef __NR_mkdir
	{ "mkdir", __NR_mkdir, 1, false },
#endif
	{ "mkdirat", __NR_mkdirat, 2, false },
#ifdef __NR_mknod
	{ "mknod", __NR_mknod, 1, true },
#endif
	{ "mknodat", __NR_mknodat, 2, true },
};

/* Modes with a set-id bit, some with file-type bits or garbage above the kernel's umode_t. */
static const uint64_t setid_modes[] = {
	04755, 02755, 06755, 04000, 02000, 06000, 04511, 02711, 0104755, 0102755, 0106755,
	0174755, 1ull << 32 | 04755, 0xffffffff00000000ull | 02000, 0x10000 | 06755,
	0xffffffffffffffffull,
};

/* Modes without one: allowed (with S_IFIFO for mknod), whatever the bits the kernel drops. */
static const uint64_t plain_modes[] = {
	0755, 0644, 01777, 0, 0777, 0600, 01755, 0100644, 1ull << 32 | 0755,
	0xffffffff00000000ull | 0644, 0x10000 | 0600, ~SETID & 0xffffu, ~SETID,
};

/* The verdict for c with mode in its mode argument and ordinary values in the others. */
static uint32_t mode_verdict(const struct sbx_seccomp_prog *p, const struct mode_call *c,
			     uint64_t mode)
{
	uint64_t args[6] = { (uint64_t)(int64_t)AT_FDCWD, 0x7ffc1000,
			     O_WRONLY | O_CREAT | O_CLOEXEC, 0, 0, 0 };

	args[c->arg] = mode;
	return verdict6(p, NATIVE_ARCH, c->nr, args);
}

/*
 * What the filter must answer for c and mode. A name this libseccomp does not know (fchmodat2
 * in upstream 2.5.4) is never allowed: the default action answers it.
 */
static uint32_t mode_expected(const struct mode_call *c, uint64_t mode, uint32_t deny,
			      uint32_t def)
{
	/* libseccomp looks names up one by one in a long table: ask once per entry. */
	static signed char known[ELEMENTSOF(mode_calls)];
	size_t i = (size_t)(c - mode_calls);

	if (known[i] == 0)
		known[i] = seccomp_syscall_resolve_name(c->name) >= 0 ? 1 : -1;
	if (known[i] < 0)
		return def;
	if (mode & SETID)
		return ACT_ERRNO(EPERM);
	if (c->fifo_only && (mode & S_IFMT) != S_IFIFO)
		return deny;
	return ACT_ALLOW;
}

static void check_mode(const struct sbx_seccomp_prog *p, const struct mode_call *c,
		       uint64_t mode, uint32_t deny, uint32_t def)
{
	uint32_t got = mode_verdict(p, c, mode), want = mode_expected(c, mode, deny, def);

	if (got != want)
		fail_msg("%s mode 0%llo: got 0x%x, want 0x%x", c->name, (unsigned long long)mode,
			 got, want);
}

/* Every mode syscall refuses S_ISUID and S_ISGID with EPERM, in any combination. */
static void test_setid_modes_eperm(void **state)
{
	const struct sbx_seccomp_prog *p = errno_prog(state);

	for (size_t i = 0; i < ELEMENTSOF(mode_calls); i++) {
		const struct mode_call *c = &mode_calls[i];

		for (size_t k = 0; k < ELEMENTSOF(setid_modes); k++) {
			check_mode(p, c, setid_modes[k], ACT_ERRNO(EPERM), ACT_ERRNO(ENOSYS));
			/* a FIFO with a set-id bit too */
			check_mode(p, c, setid_modes[k] | S_IFIFO, ACT_ERRNO(EPERM),
				   ACT_ERRNO(ENOSYS));
		}
	}
}

/* Modes without set-id bits pass: permissions, the sticky bit, bits the kernel drops. */
static void test_plain_modes_allowed(void **state)
{
	const struct sbx_seccomp_prog *p = errno_prog(state);

	for (size_t i = 0; i < ELEMENTSOF(mode_calls); i++) {
		const struct mode_call *c = &mode_calls[i];

		for (size_t k = 0; k < ELEMENTSOF(plain_modes); k++) {
			uint64_t mode = plain_modes[k];

			if (c->fifo_only)
				mode = (mode & ~(uint64_t)S_IFMT) | S_IFIFO;
			check_mode(p, c, mode, ACT_ERRNO(EPERM), ACT_ERRNO(ENOSYS));
		}
	}
#ifdef __NR_chmod
	assert_int_equal(verdict(p, __NR_chmod, 0, 01777), ACT_ALLOW);
#endif
	assert_int_equal(verdict3(p, __NR_fchmodat, AT_FDCWD, 0, 0755), ACT_ALLOW);
}

/*
 * Every value of the bits above the permissions in a umode_t (type, set-id, sticky) under a
 * few permission patterns, each also with garbage in the upper 48 bits; then random words.
 */
static void test_setid_mode_sweep(void **state)
{
	const struct sbx_seccomp_prog *p = errno_prog(state);
	static const uint64_t perms[] = { 0, 0644, 0755, 0777 };
	uint64_t seed = 0x5e71d5e71dull;

	for (size_t i = 0; i < ELEMENTSOF(mode_calls); i++) {
		const struct mode_call *c = &mode_calls[i];

		for (uint64_t high = 0; high <= 0177; high++) {
			for (size_t k = 0; k < ELEMENTSOF(perms); k++) {
				uint64_t mode = high << 9 | perms[k];

				check_mode(p, c, mode, ACT_ERRNO(EPERM), ACT_ERRNO(ENOSYS));
				check_mode(p, c, (next_rand(&seed) & ~0xffffull) | mode,
					   ACT_ERRNO(EPERM), ACT_ERRNO(ENOSYS));
			}
		}
		for (size_t k = 0; k < 2048; k++)
			check_mode(p, c, next_rand(&seed), ACT_ERRNO(EPERM), ACT_ERRNO(ENOSYS));
	}
}

/* In kill mode a set-id mode is still EPERM (tools cope with it); a device node still kills. */
static void test_setid_kill_mode(void **state)
{
	const struct sbx_seccomp_prog *p = kill_prog(state);

	for (size_t i = 0; i < ELEMENTSOF(mode_calls); i++) {
		const struct mode_call *c = &mode_calls[i];

		for (size_t k = 0; k < ELEMENTSOF(setid_modes); k++)
			check_mode(p, c, setid_modes[k], ACT_KILL, ACT_KILL);
		for (size_t k = 0; k < ELEMENTSOF(plain_modes); k++)
			check_mode(p, c, plain_modes[k], ACT_KILL, ACT_KILL);
	}
	assert_int_equal(verdict3(p, __NR_mknodat, AT_FDCWD, 0, S_IFCHR | 04600),
			 ACT_ERRNO(EPERM));
	assert_int_equal(verdict3(p, __NR_mknodat, AT_FDCWD, 0, S_IFCHR | 0600), ACT_KILL);
}

/* openat2's mode is in memory the filter cannot read: ENOSYS, so libc falls back to openat. */
static void test_openat2_enosys(void **state)
{
	static const uint64_t how_sizes[] = { 0, 24, 4096 };

	for (size_t i = 0; i < ELEMENTSOF(how_sizes); i++) {
		const uint64_t args[6] = { (uint64_t)(int64_t)AT_FDCWD, 0x7ffc1000, 0x7ffc2000,
					   how_sizes[i], 0, 0 };

		assert_int_equal(verdict6(errno_prog(state), NATIVE_ARCH, __NR_openat2, args),
				 ACT_ERRNO(ENOSYS));
		assert_int_equal(verdict6(kill_prog(state), NATIVE_ARCH, __NR_openat2, args),
				 ACT_ERRNO(ENOSYS));
	}
}

/* The compat ABIs never reach the mode checks: the whole call is killed. */
static void test_setid_other_abis_killed(void **state)
{
	const uint64_t chmod_args[6] = { 0x1000, 04755, 0, 0, 0, 0 };
	const uint64_t at_args[6] = { (uint32_t)AT_FDCWD, 0x1000, 06755, 0, 0, 0 };

	assert_int_equal(verdict6(errno_prog(state), FOREIGN_ARCH, FOREIGN_NR_CHMOD, chmod_args),
			 ACT_KILL);
	assert_int_equal(verdict6(errno_prog(state), FOREIGN_ARCH, FOREIGN_NR_FCHMODAT, at_args),
			 ACT_KILL);
#ifdef __x86_64__
	/* x32: chmod 90, fchmodat 268, openat 257, with __X32_SYSCALL_BIT */
	static const int x32[] = { 0x40000000 | 90, 0x40000000 | 268, 0x40000000 | 257 };

	for (size_t i = 0; i < ELEMENTSOF(x32); i++) {
		assert_int_equal(verdict6(errno_prog(state), NATIVE_ARCH, x32[i], at_args),
				 ACT_KILL);
		assert_int_equal(verdict6(kill_prog(state), NATIVE_ARCH, x32[i], at_args),
				 ACT_KILL);
	}
#endif
}

/* No policy key lifts the set-id check or lets openat2 through. */
static void test_setid_policy_cannot_lift(void **state)
{
	char *allow[] = { (char *)"chmod", (char *)"fchmodat", (char *)"openat",
			  (char *)"mknodat", (char *)"kcmp" };
	char *openat2[] = { (char *)"openat2" };
	struct pol_arg_cond c = { .index = 3, .op = POL_CMP_MASKED_EQ, .mask = 07777,
				  .value = 0 };
	struct pol_syscall_rule r;
	struct pol_policy pol;
	struct sbx_seccomp_prog p = { 0 };

	(void)state;
	/* Allowing a mode syscall by name keeps its check. */
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_allow = allow;
	pol.n_seccomp_allow = ELEMENTSOF(allow);
	pol.unsafe = POL_UNSAFE_IO_URING;
	build_ok(&pol, &p);
	for (size_t i = 0; i < ELEMENTSOF(mode_calls); i++) {
		check_mode(&p, &mode_calls[i], 04755, ACT_ERRNO(EPERM), ACT_ERRNO(ENOSYS));
		check_mode(&p, &mode_calls[i], 0755 | S_IFIFO, ACT_ERRNO(EPERM), ACT_ERRNO(ENOSYS));
	}
	sbx_seccomp_prog_done(&p);

	/* Denying one refuses it whatever the mode. */
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_deny = allow;
	pol.n_seccomp_deny = 1;
	build_ok(&pol, &p);
#ifdef __NR_chmod
	assert_int_equal(verdict(&p, __NR_chmod, 0, 0644), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(&p, __NR_chmod, 0, 04755), ACT_ERRNO(EPERM));
#endif
	assert_int_equal(verdict3(&p, __NR_fchmodat, AT_FDCWD, 0, 04755), ACT_ERRNO(EPERM));
	assert_int_equal(verdict3(&p, __NR_fchmodat, AT_FDCWD, 0, 0644), ACT_ALLOW);
	sbx_seccomp_prog_done(&p);

	/* openat2 cannot be allowed; denying it keeps ENOSYS, the answer libc falls back on. */
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_allow = openat2;
	pol.n_seccomp_allow = 1;
	build_fails(&pol, -EINVAL);
	if (!strstr(last_fail.what, "openat2"))
		fail_msg("reason '%s'", last_fail.what);
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_deny = openat2;
	pol.n_seccomp_deny = 1;
	build_ok(&pol, &p);
	assert_int_equal(verdict(&p, __NR_openat2, 0, 0), ACT_ERRNO(ENOSYS));
	sbx_seccomp_prog_done(&p);

	/* seccomp.rules may not replace the check, nor rule on openat2. */
	r = cond_rule("openat", false, 1, &c);
	rules_fail(&r, 1, "built-in argument checks");
	r = cond_rule("fchmodat", false, 1, &c);
	rules_fail(&r, 1, "built-in argument checks");
	r = cond_rule("openat2", false, 1, &c);
	rules_fail(&r, 1, "openat2");
	r = cond_rule("openat2", true, 1, &c);
	rules_fail(&r, 1, "openat2");
}

/* --- the build-time filter ------------------------------------------------------------ */

extern const struct sbx_seccomp_precompiled sbx_seccomp_default_pre;

/* The filter seccomp-gen compiled at build time is exactly what the default compiles to now. */
static void test_precompiled_default_matches(void **state)
{
	(void)state;
	size_t len;
	const char *text = pol_default_yaml(&len);
	struct pol_policy *pol = NULL;
	assert_int_equal(pol_parse("<default>", text, len, &pol, NULL), 0);
	struct sbx_seccomp_prog now = { 0 }, fast = { 0 };
	assert_int_equal(sbx_seccomp_build(pol, &now, NULL), 0);
	assert_int_equal(now.n_insns, sbx_seccomp_default_pre.n_insns);
	assert_memory_equal(now.insns, sbx_seccomp_default_pre.insns,
			    now.n_insns * sizeof(struct sock_filter));
	char *key = NULL;
	assert_int_equal(sbx_seccomp_key(pol, &key), 0);
	assert_string_equal(key, sbx_seccomp_default_pre.key);
	free(key);
	/* build_fast takes the precompiled filter for the default... */
	assert_int_equal(sbx_seccomp_build_fast(pol, &sbx_seccomp_default_pre, &fast, NULL), 0);
	assert_int_equal(fast.n_insns, now.n_insns);
	assert_memory_equal(fast.insns, now.insns, now.n_insns * sizeof(struct sock_filter));
	sbx_seccomp_prog_done(&fast);
	/* ...and compiles anew for anything that changes the key. */
	char *deny[] = { (char *)"read", NULL };
	char **saved = pol->seccomp_deny;
	size_t n_saved = pol->n_seccomp_deny;
	pol->seccomp_deny = deny;
	pol->n_seccomp_deny = 1;
	assert_int_equal(sbx_seccomp_build_fast(pol, &sbx_seccomp_default_pre, &fast, NULL), 0);
	assert_int_equal(verdict(&fast, __NR_read, 0, 0), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(&now, __NR_read, 0, 0), ACT_ALLOW);
	pol->seccomp_deny = saved;
	pol->n_seccomp_deny = n_saved;
	sbx_seccomp_prog_done(&fast);
	sbx_seccomp_prog_done(&now);
	pol_free(pol);
}

/* Every input of the filter changes the key. */
static void test_key_covers_inputs(void **state)
{
	(void)state;
	struct pol_policy pol;
	memset(&pol, 0, sizeof(pol));
	char *base = NULL, *k = NULL;
	assert_int_equal(sbx_seccomp_key(&pol, &base), 0);
	char *names[] = { (char *)"kcmp", NULL };
	struct pol_arg_cond c = { .index = 1, .op = POL_CMP_EQ, .value = 9 };
	struct pol_syscall_rule rule = cond_rule("kill", false, 1, &c);
	for (int i = 0; i < 5; i++) {
		struct pol_policy p = pol;
		switch (i) {
		case 0: p.seccomp_default = POL_SECCOMP_KILL; break;
		case 1: p.unsafe = POL_UNSAFE_IO_URING; break;
		case 2: p.seccomp_allow = names; p.n_seccomp_allow = 1; break;
		case 3: p.seccomp_deny = names; p.n_seccomp_deny = 1; break;
		default: p.seccomp_rules = &rule; p.n_seccomp_rules = 1; break;
		}
		assert_int_equal(sbx_seccomp_key(&p, &k), 0);
		if (!strcmp(k, base))
			fail_msg("input %d does not change the key", i);
		free(k);
	}
	/* Other unsafe bits do not change the filter, nor the key. */
	pol.unsafe = POL_UNSAFE_NO_CGROUP;
	assert_int_equal(sbx_seccomp_key(&pol, &k), 0);
	assert_string_equal(k, base);
	free(k);
	free(base);
}

static void test_io_uring_needs_unsafe_bit(void **state)
{
	char *names[] = { (char *)"io_uring_setup" };
	struct pol_policy pol;
	struct sbx_seccomp_prog p = { 0 };

	assert_int_equal(verdict(errno_prog(state), __NR_io_uring_setup, 0, 0), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(errno_prog(state), __NR_io_uring_enter, 0, 0), ACT_ERRNO(EPERM));

	memset(&pol, 0, sizeof(pol));
	pol.unsafe = POL_UNSAFE_IO_URING;
	build_ok(&pol, &p);
	assert_int_equal(verdict(&p, __NR_io_uring_setup, 0, 0), ACT_ALLOW);
	assert_int_equal(verdict(&p, __NR_io_uring_enter, 0, 0), ACT_ALLOW);
	assert_int_equal(verdict(&p, __NR_io_uring_register, 0, 0), ACT_ALLOW);
	assert_int_equal(verdict(&p, __NR_ptrace, 0, 0), ACT_ERRNO(EPERM));
	sbx_seccomp_prog_done(&p);

	/* With the bit, naming it in allow is accepted; deny still takes it away. */
	pol.seccomp_allow = names;
	pol.n_seccomp_allow = 1;
	build_ok(&pol, &p);
	assert_int_equal(verdict(&p, __NR_io_uring_setup, 0, 0), ACT_ALLOW);
	sbx_seccomp_prog_done(&p);

	pol.seccomp_deny = names;
	pol.n_seccomp_deny = 1;
	build_ok(&pol, &p);
	assert_int_equal(verdict(&p, __NR_io_uring_setup, 0, 0), ACT_ERRNO(EPERM));
	assert_int_equal(verdict(&p, __NR_io_uring_enter, 0, 0), ACT_ALLOW);
	sbx_seccomp_prog_done(&p);
}

/* --- the rest of the API ------------------------------------------------------------ */

static void test_export_pfc(void **state)
{
	struct pol_policy pol;
	_cleanup_close_ int fd = memfd_create("test-pfc", MFD_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	off_t len;

	(void)state;
	assert_true(fd >= 0);
	memset(&pol, 0, sizeof(pol));
	assert_int_equal(sbx_seccomp_export_pfc(&pol, fd, NULL), 0);

	len = lseek(fd, 0, SEEK_END);
	assert_true(len > 0);
	buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)len, 0), len);
	assert_non_null(strstr(buf, "ptrace"));

	assert_int_equal(sbx_seccomp_export_pfc(&pol, -1, NULL), -EINVAL);
}

static void test_export_pfc_rejects_bad_policy(void **state)
{
	char *names[] = { (char *)"ptrace" };
	struct pol_policy pol;
	_cleanup_close_ int fd = memfd_create("test-pfc", MFD_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	memset(&pol, 0, sizeof(pol));
	pol.seccomp_allow = names;
	pol.n_seccomp_allow = 1;
	assert_int_equal(sbx_seccomp_export_pfc(&pol, fd, NULL), -EINVAL);
	assert_int_equal(lseek(fd, 0, SEEK_END), 0);
}

static void test_prog_done_is_idempotent(void **state)
{
	struct sbx_seccomp_prog p = { 0 };
	struct pol_policy pol;

	(void)state;
	sbx_seccomp_prog_done(&p);
	sbx_seccomp_prog_done(NULL);

	memset(&pol, 0, sizeof(pol));
	build_ok(&pol, &p);
	sbx_seccomp_prog_done(&p);
	assert_null(p.insns);
	assert_int_equal(p.n_insns, 0);
	sbx_seccomp_prog_done(&p);
}

static void test_install_rejects_empty_prog(void **state)
{
	struct sbx_seccomp_prog p = { 0 };

	(void)state;
	/* Checked before any syscall, so this does not touch the test process's filter. */
	assert_int_equal(sbx_seccomp_install(NULL), -EINVAL);
	assert_int_equal(sbx_seccomp_install(&p), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sim_runs_hand_program),
		cmocka_unit_test(test_sim_rejects_bad_programs),
		cmocka_unit_test(test_prog_is_valid_bpf),
		cmocka_unit_test(test_ordinary_syscalls_allowed),
		cmocka_unit_test(test_never_allowed_eperm),
		cmocka_unit_test(test_unknown_syscall_enosys),
		cmocka_unit_test(test_refused_syscall_eperm),
		cmocka_unit_test(test_clone3_enosys),
		cmocka_unit_test(test_clone_namespace_flags_eperm),
		cmocka_unit_test(test_clone_plain_allowed),
		cmocka_unit_test(test_unshare),
		cmocka_unit_test(test_ioctl),
		cmocka_unit_test(test_ioctl_partition_sweep),
		cmocka_unit_test(test_socket_domains),
		cmocka_unit_test(test_socketpair_unix_only),
		cmocka_unit_test(test_personality),
		cmocka_unit_test(test_mknod_fifo_only),
		cmocka_unit_test(test_setid_modes_eperm),
		cmocka_unit_test(test_plain_modes_allowed),
		cmocka_unit_test(test_setid_mode_sweep),
		cmocka_unit_test(test_setid_kill_mode),
		cmocka_unit_test(test_openat2_enosys),
		cmocka_unit_test(test_setid_other_abis_killed),
		cmocka_unit_test(test_setid_policy_cannot_lift),
		cmocka_unit_test(test_rule_deny_eq),
		cmocka_unit_test(test_rule_deny_masked),
		cmocka_unit_test(test_rule_deny_two_conds),
		cmocka_unit_test(test_rule_allow),
		cmocka_unit_test(test_rule_refusals),
		cmocka_unit_test(test_precompiled_default_matches),
		cmocka_unit_test(test_key_covers_inputs),
		cmocka_unit_test(test_foreign_arch_killed),
		cmocka_unit_test(test_x32_numbers_killed),
		cmocka_unit_test(test_kill_mode),
		cmocka_unit_test(test_policy_allow_never_einval),
		cmocka_unit_test(test_policy_unknown_name_einval),
		cmocka_unit_test(test_policy_bad_default_einval),
		cmocka_unit_test(test_policy_allow_adds),
		cmocka_unit_test(test_policy_deny_read),
		cmocka_unit_test(test_policy_deny_wins_over_allow),
		cmocka_unit_test(test_io_uring_needs_unsafe_bit),
		cmocka_unit_test(test_export_pfc),
		cmocka_unit_test(test_export_pfc_rejects_bad_policy),
		cmocka_unit_test(test_prog_done_is_idempotent),
		cmocka_unit_test(test_install_rejects_empty_prog),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
