/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the confined judge's seccomp filter (sandbox/judge.c), compiled and run in
 * the BPF simulator (bpf-sim.c) without being loaded: every (arch, syscall, arguments) in the
 * table gets exactly the verdict written beside it. The live check, that such a child really
 * dies of SIGSYS, is tests/priv/test-judge.c.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <cmocka.h>

#include "bpf-sim.h"
#include "cleanup.h"
#include "judge.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define FOREIGN_ARCH AUDIT_ARCH_I386
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define FOREIGN_ARCH AUDIT_ARCH_ARM
#else
#error "test-judge: add this architecture's audit token"
#endif

/* Whether this test was built with AddressSanitizer, as sandbox/judge.c decides it. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZER 1
#endif
#endif
#ifndef SANITIZER
#define SANITIZER 0
#endif

#define ALLOW SECCOMP_RET_ALLOW
#define KILL SECCOMP_RET_KILL_PROCESS
#define OUT_FD 7

static uint32_t verdict_at(const struct sbx_seccomp_prog *p, uint32_t arch, long nr,
			   uint64_t a0, uint64_t a2)
{
	struct seccomp_data d;
	uint32_t action = 0xdeadbeefu;
	memset(&d, 0, sizeof(d));
	d.nr = (int)nr;
	d.arch = arch;
	d.instruction_pointer = 0x401000;
	d.args[0] = a0;
	d.args[2] = a2;
	assert_int_equal(bpf_sim_run(p->insns, p->n_insns, &d, &action), 0);
	return action;
}

static uint32_t verdict(const struct sbx_seccomp_prog *p, long nr, uint64_t a0, uint64_t a2)
{
	return verdict_at(p, NATIVE_ARCH, nr, a0, a2);
}

static int prog_setup(void **state)
{
	struct sbx_seccomp_prog *p = calloc(1, sizeof(*p));
	if (!p || sbx_judge_filter_build(OUT_FD, p) < 0) {
		free(p);
		return -1;
	}
	*state = p;
	return 0;
}

static int prog_teardown(void **state)
{
	struct sbx_seccomp_prog *p = *state;
	sbx_seccomp_prog_done(p);
	free(p);
	return 0;
}

/* What the judge may do: read, its one write, memory, exit. */
static void test_allowed(void **state)
{
	const struct sbx_seccomp_prog *p = *state;
	assert_int_equal(verdict(p, SYS_read, 3, 0), ALLOW);
	assert_int_equal(verdict(p, SYS_read, 100, 0), ALLOW);
	assert_int_equal(verdict(p, SYS_write, OUT_FD, 0), ALLOW);
	assert_int_equal(verdict(p, SYS_mmap, 0, PROT_READ | PROT_WRITE), ALLOW);
	assert_int_equal(verdict(p, SYS_mmap, 0, PROT_NONE), ALLOW);
	assert_int_equal(verdict(p, SYS_munmap, 0, 0), ALLOW);
	assert_int_equal(verdict(p, SYS_mremap, 0, 0), ALLOW);
	assert_int_equal(verdict(p, SYS_brk, 0, 0), ALLOW);
	assert_int_equal(verdict(p, SYS_exit, 0, 0), ALLOW);
	assert_int_equal(verdict(p, SYS_exit_group, 0, 0), ALLOW);
}

/* write() to any other fd, and executable memory, kill. */
static void test_arguments(void **state)
{
	const struct sbx_seccomp_prog *p = *state;
	assert_int_equal(verdict(p, SYS_write, 1, 0), KILL);
	assert_int_equal(verdict(p, SYS_write, 2, 0), KILL);
	assert_int_equal(verdict(p, SYS_write, OUT_FD + 1, 0), KILL);
	assert_int_equal(verdict(p, SYS_write, (1ull << 32) | OUT_FD, 0), KILL);
	assert_int_equal(verdict(p, SYS_mmap, 0, PROT_READ | PROT_EXEC), KILL);
	assert_int_equal(verdict(p, SYS_mmap, 0, PROT_EXEC), KILL);
	/* prot is an int: the high half of the register does not make it executable or not. */
	assert_int_equal(verdict(p, SYS_mmap, 0, (1ull << 32) | PROT_READ), ALLOW);
	assert_int_equal(verdict(p, SYS_mprotect, 0, PROT_READ | PROT_EXEC), KILL);
}

/* Everything else kills: paths, sockets, processes, signals, ioctl, prctl. */
static void test_killed(void **state)
{
	const struct sbx_seccomp_prog *p = *state;
	static const long killed[] = {
#ifdef SYS_open
		SYS_open,
#endif
		SYS_openat,	 SYS_openat2,	SYS_newfstatat, SYS_fstat,	SYS_socket,	SYS_connect,
		SYS_sendto,	 SYS_clone,	SYS_clone3,	SYS_execve,	SYS_execveat,
		SYS_kill,	 SYS_tgkill,	SYS_ptrace,	SYS_ioctl,	SYS_prctl,
		SYS_setuid,	 SYS_capset,	SYS_close_range, SYS_dup3,	SYS_pipe2,
		SYS_unshare,	 SYS_setns,	SYS_seccomp,	SYS_bpf,	SYS_io_uring_setup,
		SYS_memfd_create, SYS_pwrite64, SYS_writev,	SYS_sendmsg,	SYS_nanosleep,
		SYS_rt_sigaction, SYS_getrandom,
	};
	for (size_t i = 0; i < ELEMENTSOF(killed); i++)
		assert_int_equal(verdict(p, killed[i], OUT_FD, 0), KILL);
	assert_int_equal(verdict(p, SYS_madvise, 0, 0), SANITIZER ? ALLOW : KILL);
	assert_int_equal(verdict(p, SYS_mprotect, 0, PROT_READ), SANITIZER ? ALLOW : KILL);
}

/* Another architecture's table, and x32's numbers, kill whatever the number. */
static void test_other_abis(void **state)
{
	const struct sbx_seccomp_prog *p = *state;
	assert_int_equal(verdict_at(p, FOREIGN_ARCH, 3, 0, 0), KILL);
	assert_int_equal(verdict_at(p, FOREIGN_ARCH, 4, OUT_FD, 0), KILL);
#ifdef __x86_64__
	assert_int_equal(verdict(p, 0x40000000 | SYS_read, 0, 0), KILL);
	assert_int_equal(verdict(p, 0x40000000 | SYS_write, OUT_FD, 0), KILL);
#endif
}

static void test_build_arguments(void **state)
{
	(void)state;
	struct sbx_seccomp_prog p = { 0 };
	assert_int_equal(sbx_judge_filter_build(-1, &p), -EINVAL);
	assert_null(p.insns);
	assert_int_equal(sbx_judge_filter_build(3, NULL), -EINVAL);
	/* A confinement without a filter or with a bad fd fails before it changes anything. */
	struct sbx_judge_spec spec = { .out_fd = -1 };
	assert_int_equal(sbx_judge_confine(&spec, &p), -EINVAL);
	assert_int_equal(sbx_judge_confine(NULL, &p), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_allowed, prog_setup, prog_teardown),
		cmocka_unit_test_setup_teardown(test_arguments, prog_setup, prog_teardown),
		cmocka_unit_test_setup_teardown(test_killed, prog_setup, prog_teardown),
		cmocka_unit_test_setup_teardown(test_other_abis, prog_setup, prog_teardown),
		cmocka_unit_test(test_build_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
