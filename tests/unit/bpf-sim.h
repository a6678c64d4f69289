/* SPDX-License-Identifier: MIT */
/*
 * A classic-BPF interpreter for seccomp filters, for unit tests only.
 *
 * It lets a test compile a filter and ask "what would the kernel answer for this (arch,
 * syscall, args)?" without loading the filter. It validates programs with the same rules the
 * kernel applies to seccomp filters (opcode subset, jump and memory bounds, final RET), so a
 * program it accepts is one seccomp(2) would accept too.
 */
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Checks that insns (n instructions, borrowed) is a program the kernel would accept as a
 * seccomp filter. Returns 0, or -EINVAL for any rule it breaks (n == 0 or over BPF_MAXINSNS,
 * an opcode outside seccomp's subset, a load outside struct seccomp_data or unaligned, a jump
 * past the end, a constant division by zero or oversized shift, a scratch-memory slot read
 * before every path to it has written it, or a last instruction that is not a RET).
 */
int bpf_sim_check(const struct sock_filter *insns, size_t n);

/*
 * Validates insns with bpf_sim_check() and runs it on d (borrowed). On success stores the
 * filter's 32-bit return value (SECCOMP_RET_* action | data) in *out_action and returns 0.
 * Returns -EINVAL for a program bpf_sim_check() rejects; *out_action is untouched then.
 */
int bpf_sim_run(const struct sock_filter *insns, size_t n, const struct seccomp_data *d,
		uint32_t *out_action);
