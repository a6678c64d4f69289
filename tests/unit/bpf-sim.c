/* SPDX-License-Identifier: MIT */
/*
 * A classic-BPF interpreter for seccomp filters (tests only; see bpf-sim.h).
 *
 * Validation follows the kernel's rules for seccomp filters: classic BPF as checked by the
 * socket-filter verifier, narrowed to the opcodes seccomp accepts, with absolute loads only
 * from aligned 32-bit words inside struct seccomp_data. Execution is done only on validated
 * programs, and every load, store and jump is still checked again at run time, so a bug in
 * the validator cannot turn into an out-of-bounds read in a test.
 */
#include "bpf-sim.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* Every bit set: "all scratch slots written" (for unreachable code and the meet operation). */
#define ALL_SLOTS ((uint32_t)((1u << BPF_MEMWORDS) - 1u))

/* True iff code is one of the opcodes the kernel lets a seccomp filter use. */
static bool opcode_allowed(uint16_t code)
{
	switch (code) {
	case BPF_LD | BPF_W | BPF_ABS:
	case BPF_LD | BPF_W | BPF_LEN:
	case BPF_LDX | BPF_W | BPF_LEN:
	case BPF_LD | BPF_IMM:
	case BPF_LDX | BPF_IMM:
	case BPF_LD | BPF_MEM:
	case BPF_LDX | BPF_MEM:
	case BPF_ST:
	case BPF_STX:
	case BPF_RET | BPF_K:
	case BPF_RET | BPF_A:
	case BPF_ALU | BPF_ADD | BPF_K:
	case BPF_ALU | BPF_ADD | BPF_X:
	case BPF_ALU | BPF_SUB | BPF_K:
	case BPF_ALU | BPF_SUB | BPF_X:
	case BPF_ALU | BPF_MUL | BPF_K:
	case BPF_ALU | BPF_MUL | BPF_X:
	case BPF_ALU | BPF_DIV | BPF_K:
	case BPF_ALU | BPF_DIV | BPF_X:
	case BPF_ALU | BPF_AND | BPF_K:
	case BPF_ALU | BPF_AND | BPF_X:
	case BPF_ALU | BPF_OR | BPF_K:
	case BPF_ALU | BPF_OR | BPF_X:
	case BPF_ALU | BPF_XOR | BPF_K:
	case BPF_ALU | BPF_XOR | BPF_X:
	case BPF_ALU | BPF_LSH | BPF_K:
	case BPF_ALU | BPF_LSH | BPF_X:
	case BPF_ALU | BPF_RSH | BPF_K:
	case BPF_ALU | BPF_RSH | BPF_X:
	case BPF_ALU | BPF_NEG:
	case BPF_MISC | BPF_TAX:
	case BPF_MISC | BPF_TXA:
	case BPF_JMP | BPF_JA:
	case BPF_JMP | BPF_JEQ | BPF_K:
	case BPF_JMP | BPF_JEQ | BPF_X:
	case BPF_JMP | BPF_JGE | BPF_K:
	case BPF_JMP | BPF_JGE | BPF_X:
	case BPF_JMP | BPF_JGT | BPF_K:
	case BPF_JMP | BPF_JGT | BPF_X:
	case BPF_JMP | BPF_JSET | BPF_K:
	case BPF_JMP | BPF_JSET | BPF_X:
		return true;
	default:
		return false;
	}
}

/* True iff a jump at pc skipping off instructions lands inside a program of n. */
static bool jump_in_range(size_t pc, size_t n, uint32_t off)
{
	/* pc < n, so n - pc - 1 cannot wrap; compare without adding to avoid overflow. */
	return (size_t)off < n - pc - 1;
}

/* True iff k is the offset of an aligned 32-bit word inside struct seccomp_data. */
static bool abs_load_ok(uint32_t k)
{
	return k % 4 == 0 && (size_t)k <= sizeof(struct seccomp_data) - 4;
}

/* Checks one instruction in isolation (everything but the scratch-memory data flow). */
static int check_insn(const struct sock_filter *in, size_t pc, size_t n)
{
	if (!opcode_allowed(in->code))
		return -EINVAL;

	switch (BPF_CLASS(in->code)) {
	case BPF_LD:
	case BPF_LDX:
		if (BPF_MODE(in->code) == BPF_ABS && !abs_load_ok(in->k))
			return -EINVAL;
		if (BPF_MODE(in->code) == BPF_MEM && in->k >= BPF_MEMWORDS)
			return -EINVAL;
		return 0;
	case BPF_ST:
	case BPF_STX:
		return in->k < BPF_MEMWORDS ? 0 : -EINVAL;
	case BPF_ALU:
		if (BPF_SRC(in->code) == BPF_K && BPF_OP(in->code) == BPF_DIV && in->k == 0)
			return -EINVAL;
		if (BPF_SRC(in->code) == BPF_K &&
		    (BPF_OP(in->code) == BPF_LSH || BPF_OP(in->code) == BPF_RSH) && in->k >= 32)
			return -EINVAL;
		return 0;
	case BPF_JMP:
		if (BPF_OP(in->code) == BPF_JA)
			return jump_in_range(pc, n, in->k) ? 0 : -EINVAL;
		if (!jump_in_range(pc, n, in->jt) || !jump_in_range(pc, n, in->jf))
			return -EINVAL;
		return 0;
	default:
		return 0;
	}
}

/*
 * Checks that no scratch slot is read on a path that has not written it. Jumps only go
 * forward, so one pass in program order sees every predecessor of pc before pc itself.
 * written[pc] holds the slots written on every path seen so far into pc.
 */
static int check_memory_flow(const struct sock_filter *insns, size_t n)
{
	uint32_t written[BPF_MAXINSNS];
	uint32_t cur = 0;

	for (size_t i = 0; i < n; i++)
		written[i] = ALL_SLOTS;

	for (size_t pc = 0; pc < n; pc++) {
		const struct sock_filter *in = &insns[pc];

		cur &= written[pc];
		switch (BPF_CLASS(in->code)) {
		case BPF_ST:
		case BPF_STX:
			cur |= 1u << in->k;
			break;
		case BPF_LD:
		case BPF_LDX:
			if (BPF_MODE(in->code) == BPF_MEM && !(cur & (1u << in->k)))
				return -EINVAL;
			break;
		case BPF_JMP:
			if (BPF_OP(in->code) == BPF_JA) {
				written[pc + 1 + in->k] &= cur;
			} else {
				written[pc + 1 + in->jt] &= cur;
				written[pc + 1 + in->jf] &= cur;
			}
			/* The next instruction is reached only through jumps into it. */
			cur = ALL_SLOTS;
			break;
		case BPF_RET:
			cur = ALL_SLOTS;
			break;
		default:
			break;
		}
	}
	return 0;
}

int bpf_sim_check(const struct sock_filter *insns, size_t n)
{
	if (!insns || n == 0 || n > BPF_MAXINSNS)
		return -EINVAL;

	for (size_t pc = 0; pc < n; pc++) {
		int r = check_insn(&insns[pc], pc, n);
		if (r < 0)
			return r;
	}
	if (BPF_CLASS(insns[n - 1].code) != BPF_RET)
		return -EINVAL;

	return check_memory_flow(insns, n);
}

/* Reads the 32-bit word at byte offset k of d in host byte order, as the kernel does. */
static bool load_word(const struct seccomp_data *d, uint32_t k, uint32_t *out)
{
	if (!abs_load_ok(k))
		return false;
	memcpy(out, (const unsigned char *)d + k, sizeof(*out));
	return true;
}

/*
 * Applies ALU operation op to a with operand v. Returns 0, -EDOM for a division by zero
 * (which ends a classic filter with return value 0) or -EINVAL for an unknown operation.
 */
static int alu(uint16_t op, uint32_t *a, uint32_t v)
{
	switch (op) {
	case BPF_ADD:
		*a += v;
		return 0;
	case BPF_SUB:
		*a -= v;
		return 0;
	case BPF_MUL:
		*a *= v;
		return 0;
	case BPF_DIV:
		if (v == 0)
			return -EDOM;
		*a /= v;
		return 0;
	case BPF_AND:
		*a &= v;
		return 0;
	case BPF_OR:
		*a |= v;
		return 0;
	case BPF_XOR:
		*a ^= v;
		return 0;
	case BPF_LSH:
		/* Constant shifts are < 32 by validation; the kernel masks register shifts. */
		*a <<= v & 31u;
		return 0;
	case BPF_RSH:
		*a >>= v & 31u;
		return 0;
	case BPF_NEG:
		*a = 0u - *a;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Evaluates the condition of a conditional jump on a against v. */
static bool jump_taken(uint16_t op, uint32_t a, uint32_t v)
{
	switch (op) {
	case BPF_JEQ:
		return a == v;
	case BPF_JGT:
		return a > v;
	case BPF_JGE:
		return a >= v;
	case BPF_JSET:
		return (a & v) != 0;
	default:
		return false;
	}
}

int bpf_sim_run(const struct sock_filter *insns, size_t n, const struct seccomp_data *d,
		uint32_t *out_action)
{
	uint32_t a = 0, x = 0;
	uint32_t mem[BPF_MEMWORDS] = { 0 };
	size_t pc = 0;
	int r;

	if (!d || !out_action)
		return -EINVAL;
	r = bpf_sim_check(insns, n);
	if (r < 0)
		return r;

	/* Jumps only go forward, so at most n steps run; the bound is a second safety net. */
	for (size_t steps = 0; steps < n && pc < n; steps++) {
		const struct sock_filter *in = &insns[pc];
		uint32_t v;

		switch (in->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (!load_word(d, in->k, &a))
				return -EINVAL;
			pc++;
			break;
		case BPF_LD | BPF_W | BPF_LEN:
			a = (uint32_t)sizeof(struct seccomp_data);
			pc++;
			break;
		case BPF_LDX | BPF_W | BPF_LEN:
			x = (uint32_t)sizeof(struct seccomp_data);
			pc++;
			break;
		case BPF_LD | BPF_IMM:
			a = in->k;
			pc++;
			break;
		case BPF_LDX | BPF_IMM:
			x = in->k;
			pc++;
			break;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
			if (in->k >= BPF_MEMWORDS)
				return -EINVAL;
			if (BPF_CLASS(in->code) == BPF_LD)
				a = mem[in->k];
			else
				x = mem[in->k];
			pc++;
			break;
		case BPF_ST:
		case BPF_STX:
			if (in->k >= BPF_MEMWORDS)
				return -EINVAL;
			mem[in->k] = in->code == BPF_ST ? a : x;
			pc++;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			pc++;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			pc++;
			break;
		case BPF_RET | BPF_K:
			*out_action = in->k;
			return 0;
		case BPF_RET | BPF_A:
			*out_action = a;
			return 0;
		case BPF_JMP | BPF_JA:
			if (!jump_in_range(pc, n, in->k))
				return -EINVAL;
			pc += 1 + (size_t)in->k;
			break;
		default:
			if (BPF_CLASS(in->code) == BPF_ALU) {
				v = BPF_SRC(in->code) == BPF_X ? x : in->k;
				r = alu(BPF_OP(in->code), &a, v);
				if (r == -EDOM) {
					*out_action = 0;
					return 0;
				}
				if (r < 0)
					return r;
				pc++;
			} else if (BPF_CLASS(in->code) == BPF_JMP) {
				v = BPF_SRC(in->code) == BPF_X ? x : in->k;
				uint8_t off = jump_taken(BPF_OP(in->code), a, v) ? in->jt : in->jf;
				if (!jump_in_range(pc, n, off))
					return -EINVAL;
				pc += 1 + (size_t)off;
			} else {
				return -EINVAL;
			}
			break;
		}
	}
	/* Unreachable for a validated program: its last instruction is a RET. */
	return -EINVAL;
}
