/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the policy YAML parser.
 *
 * Target function: pol_parse() (policy/policy.c), with pol_free() on every result.
 *
 * Input: raw policy bytes, exactly as a policy file would hand them to the parser. Inputs over
 * POL_MAX_INPUT_BYTES are rejected before parsing (pol_parse's -E2BIG path is covered by the
 * unit tests). No time, no randomness, no global state.
 *
 * Beyond "no crash, no leak, no UB", it checks the parser's contract on every input:
 *  - failure returns -EINVAL or -ENOMEM, leaves *out untouched, and fills the diagnostic with a
 *    NUL-terminated one-line message that says what was expected;
 *  - success returns a policy that satisfies every invariant the schema promises, so a
 *    validation gap shows up as a crash here rather than as a weaker sandbox.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                        \
	do {                            \
		if (!(x))               \
			__builtin_trap(); \
	} while (0)

static void check_relative(const char *s)
{
	CHECK(s && s[0] && s[0] != '/' && strlen(s) < PATH_MAX);
	CHECK(!strstr(s, "//") && s[strlen(s) - 1] != '/');
	CHECK(strcmp(s, "..") && strncmp(s, "../", 3) && !strstr(s, "/../"));
	CHECK(strlen(s) < 3 || strcmp(s + strlen(s) - 3, "/.."));
}

static void check_list(char *const *v, size_t n)
{
	CHECK(n <= POL_MAX_LIST);
	CHECK(v || n == 0);
	if (v)
		CHECK(v[n] == NULL);
	for (size_t i = 0; i < n; i++)
		CHECK(v[i] && strlen(v[i]) <= POL_MAX_STRING);
}

static void check_policy(const struct pol_policy *p)
{
	CHECK(p->uid >= 1 && p->uid <= 65534);
	CHECK(p->gid >= 1 && p->gid <= 65534);
	CHECK(p->user_name && p->user_name[0]);
	CHECK(p->host_id_base >= 1000 && p->host_id_count >= 1);
	CHECK((uint64_t)p->host_id_base + p->host_id_count <= UINT32_MAX);
	CHECK(p->hostname && p->hostname[0] && strlen(p->hostname) <= 64);

	CHECK(p->n_binds <= POL_MAX_LIST);
	for (size_t i = 0; i < p->n_binds; i++) {
		const struct pol_bind *b = &p->binds[i];
		CHECK(b->src && b->dst && b->src[0] == '/' && b->dst[0] == '/');
		CHECK(strcmp(b->src, "/") && strcmp(b->dst, "/"));
		CHECK(strcmp(b->dst, "/proc") && strncmp(b->dst, "/proc/", 6));
		CHECK(strcmp(b->dst, "/dev") && strncmp(b->dst, "/dev/", 5));
		CHECK(strcmp(b->dst, "/sys") && strncmp(b->dst, "/sys/", 5));
		CHECK(strcmp(b->dst, "/tmp") && strcmp(b->dst, "/workspace"));
		CHECK(b->mode == POL_BIND_RO || b->mode == POL_BIND_RW);
		check_relative(b->src + 1);
		check_relative(b->dst + 1);
	}

	check_list(p->etc_files, p->n_etc_files);
	check_list(p->protect, p->n_protect);
	check_list(p->allow_create, p->n_allow_create);
	check_list(p->env_set, p->n_env_set);
	check_list(p->env_pass, p->n_env_pass);
	check_list(p->seccomp_allow, p->n_seccomp_allow);
	check_list(p->seccomp_deny, p->n_seccomp_deny);
	for (size_t i = 0; i < p->n_etc_files; i++)
		check_relative(p->etc_files[i]);
	for (size_t i = 0; i < p->n_protect; i++)
		check_relative(p->protect[i]);
	for (size_t i = 0; i < p->n_allow_create; i++) {
		bool found = false;
		check_relative(p->allow_create[i]);
		for (size_t j = 0; j < p->n_protect; j++)
			found = found || !strcmp(p->allow_create[i], p->protect[j]);
		CHECK(found);
	}
	for (size_t i = 0; i < p->n_env_set; i++)
		CHECK(strchr(p->env_set[i], '=') && p->env_set[i][0] != '=');

	CHECK(p->seccomp_default == POL_SECCOMP_ERRNO || p->seccomp_default == POL_SECCOMP_KILL);
	CHECK(p->memory_bytes > 0 && p->memory_bytes <= INT64_MAX);
	CHECK(p->pids > 0 && p->tmp_bytes > 0 && p->nofile > 0 && p->fsize_bytes > 0);
	CHECK(p->fsize_bytes <= INT64_MAX && p->tmp_bytes <= INT64_MAX);
	CHECK(p->wall_ms <= INT64_MAX && p->output_bytes <= INT64_MAX);
	CHECK((p->unsafe & ~(uint32_t)(POL_UNSAFE_NO_CGROUP | POL_UNSAFE_IO_URING)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pol_policy *const untouched = (struct pol_policy *)(uintptr_t)1;
	struct pol_policy *p = untouched;
	struct pol_diag d;
	int r;

	if (size > POL_MAX_INPUT_BYTES)
		return -1; /* keep it out of the corpus */

	memset(&d, 0, sizeof(d));
	r = pol_parse("fuzz", data, size, &p, &d);
	if (r == 0) {
		CHECK(p && p != untouched);
		check_policy(p);
		CHECK(pol_free(p) == NULL);
		return 0;
	}

	CHECK(r == -EINVAL || r == -ENOMEM);
	CHECK(p == untouched);
	CHECK(memchr(d.message, '\0', sizeof(d.message)) && d.message[0]);
	CHECK(memchr(d.file, '\0', sizeof(d.file)) && !strcmp(d.file, "fuzz"));
	CHECK(!strchr(d.message, '\n'));
	CHECK(r == -ENOMEM || strstr(d.message, "(expected") || strlen(d.message) == sizeof(d.message) - 1);
	return 0;
}
