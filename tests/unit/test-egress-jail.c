/* SPDX-License-Identifier: MIT */
/*
 * Unit test for the egress proxy's seccomp allowlist (sandbox/egress-jail.c), compiled and
 * run through the BPF simulator without loading it: what the event loop and the resolver
 * need is allowed, the domains the resolver probes are answered EACCES, and everything
 * that would run, create, write or map executable code kills the process. The live filter
 * is exercised by tests/egress/test-egress-proxy.c, where the proxy runs under it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpf-sim.h"
#include "egress-jail.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define FOREIGN_ARCH AUDIT_ARCH_I386
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define FOREIGN_ARCH AUDIT_ARCH_ARM
#else
#error "test-egress-jail: add this architecture's audit token"
#endif

#define ACT_ALLOW SECCOMP_RET_ALLOW
#define ACT_KILL SECCOMP_RET_KILL_PROCESS
#define ACT_ERRNO(e) (SECCOMP_RET_ERRNO | ((uint32_t)(e) & SECCOMP_RET_DATA))

static struct sbx_seccomp_prog prog, prog_sanitizer;

static int setup(void **state)
{
	(void)state;
	int r = sbx_egress_seccomp_build(false, &prog);
	return r < 0 ? r : sbx_egress_seccomp_build(true, &prog_sanitizer);
}

static int teardown(void **state)
{
	(void)state;
	sbx_seccomp_prog_done(&prog);
	sbx_seccomp_prog_done(&prog_sanitizer);
	return 0;
}

static uint32_t verdict_of(const struct sbx_seccomp_prog *p, uint32_t arch, long nr, uint64_t a0,
			   uint64_t a1, uint64_t a2)
{
	struct seccomp_data d;
	memset(&d, 0, sizeof(d));
	d.arch = arch;
	d.nr = (int)nr;
	d.args[0] = a0;
	d.args[1] = a1;
	d.args[2] = a2;
	uint32_t action = 0;
	assert_int_equal(bpf_sim_run(p->insns, p->n_insns, &d, &action), 0);
	return action;
}

static uint32_t verdict(uint32_t arch, long nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	return verdict_of(&prog, arch, nr, a0, a1, a2);
}

#define V(nr, a0, a1, a2) verdict(NATIVE_ARCH, (nr), (a0), (a1), (a2))

static void test_program_valid(void **state)
{
	(void)state;
	assert_int_equal(bpf_sim_check(prog.insns, prog.n_insns), 0);
}

static void test_loop_allowed(void **state)
{
	(void)state;
	const long plain[] = { SYS_read, SYS_write, SYS_close, SYS_poll, SYS_accept4, SYS_connect,
			       SYS_sendmmsg, SYS_recvfrom, SYS_splice, SYS_pipe2, SYS_fcntl,
			       SYS_getsockopt, SYS_shutdown, SYS_newfstatat, SYS_lseek,
			       SYS_clock_gettime, SYS_getrandom, SYS_exit_group, SYS_munmap,
			       SYS_brk, SYS_uname };
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		assert_int_equal(V(plain[i], 0, 0, 0), ACT_ALLOW);
}

static void test_socket_domains(void **state)
{
	(void)state;
	assert_int_equal(V(SYS_socket, AF_INET, SOCK_STREAM, 0), ACT_ALLOW);
	assert_int_equal(V(SYS_socket, AF_INET6, SOCK_DGRAM, 0), ACT_ALLOW);
	const uint64_t refused[] = { AF_UNSPEC, AF_UNIX, 3, 9, AF_NETLINK, AF_PACKET, 11,
				     0x100000002ull, UINT64_MAX };
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		assert_int_equal(V(SYS_socket, refused[i], SOCK_STREAM, 0), ACT_ERRNO(EACCES));
}

static void test_files(void **state)
{
	(void)state;
	assert_int_equal(V(SYS_openat, AT_FDCWD, 0, O_RDONLY | O_CLOEXEC), ACT_ALLOW);
	const uint64_t writing[] = { O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND, O_TMPFILE,
				     O_PATH, O_RDONLY | O_CREAT | O_CLOEXEC };
	for (size_t i = 0; i < sizeof(writing) / sizeof(writing[0]); i++)
		assert_int_equal(V(SYS_openat, AT_FDCWD, 0, writing[i]), ACT_KILL);
	assert_int_equal(V(SYS_openat2, AT_FDCWD, 0, 0), ACT_KILL);
#ifdef SYS_open
	assert_int_equal(V(SYS_open, 0, O_RDONLY, 0), ACT_KILL);
#endif
	assert_int_equal(V(SYS_ioctl, 3, FIONREAD, 0), ACT_ALLOW);
	assert_int_equal(V(SYS_ioctl, 3, TIOCSTI, 0), ACT_KILL);
	assert_int_equal(V(SYS_ioctl, 3, FIONREAD | (1ull << 32), 0), ACT_KILL);
}

static void test_no_exec_memory(void **state)
{
	(void)state;
	assert_int_equal(V(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE), ACT_ALLOW);
	assert_int_equal(V(SYS_mmap, 0, 4096, PROT_READ | PROT_EXEC), ACT_KILL);
	assert_int_equal(V(SYS_mprotect, 0, 4096, PROT_READ), ACT_ALLOW);
	assert_int_equal(V(SYS_mprotect, 0, 4096, PROT_EXEC), ACT_KILL);
}

/* The tests-only allowance adds sigaltstack and nothing else. */
static void test_sanitizer_allowance(void **state)
{
	(void)state;
	assert_int_equal(bpf_sim_check(prog_sanitizer.insns, prog_sanitizer.n_insns), 0);
	assert_int_equal(V(SYS_sigaltstack, 0, 0, 0), ACT_KILL);
	assert_int_equal(verdict_of(&prog_sanitizer, NATIVE_ARCH, SYS_sigaltstack, 0, 0, 0),
			 ACT_ALLOW);
	const long same[] = { SYS_read, SYS_execve, SYS_clone, SYS_kill, SYS_bind, SYS_prctl };
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		assert_int_equal(verdict_of(&prog_sanitizer, NATIVE_ARCH, same[i], 0, 0, 0),
				 V(same[i], 0, 0, 0));
}

static void test_refused(void **state)
{
	(void)state;
	const long killed[] = { SYS_execve, SYS_execveat, SYS_clone, SYS_clone3,
				SYS_kill, SYS_ptrace, SYS_bind, SYS_listen, SYS_socketpair,
				SYS_unlink, SYS_mkdirat, SYS_setuid, SYS_prctl, SYS_seccomp,
				SYS_chdir, SYS_mount, SYS_unshare, SYS_setns, SYS_memfd_create };
	for (size_t i = 0; i < sizeof(killed) / sizeof(killed[0]); i++)
		assert_int_equal(V(killed[i], 0, 0, 0), ACT_KILL);
	/* Another architecture's table: killed, even for what is allowed natively. */
	assert_int_equal(verdict(FOREIGN_ARCH, 3, 0, 0, 0), ACT_KILL);
#if defined(__x86_64__)
	assert_int_equal(V(0x40000000 | SYS_read, 0, 0, 0), ACT_KILL); /* x32 */
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_program_valid),
		cmocka_unit_test(test_loop_allowed),
		cmocka_unit_test(test_socket_domains),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_no_exec_memory),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_sanitizer_allowance),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
