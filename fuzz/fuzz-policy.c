/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the policy YAML parser and printers.
 *
 * Target functions: pol_parse() and pol_parse_file() (policy/policy.c), pol_to_yaml(),
 * pol_to_json() and pol_equal() (policy/policy-print.c), with pol_free() on every result.
 *
 * Input: raw policy bytes, exactly as a policy file would hand them to the parser. The whole
 * input goes to pol_parse. It is also cut at every "\n#%file\n" line: the first piece is
 * parsed as /f/main.yaml with pol_parse_file, and piece N (N >= 1) is served by the loader as
 * /f/inN.yaml, next to a fixed set of small files (below), so `extends` chains, cycles, depth
 * and errors inside extended files are all reachable. Inputs over POL_MAX_INPUT_BYTES are
 * rejected before parsing (pol_parse's -E2BIG path is covered by the unit tests). No time, no
 * randomness, no global state.
 *
 * Beyond "no crash, no leak, no UB", it checks the parser's contract on every input:
 *  - failure returns -EINVAL, -E2BIG (an extended file too big) or -ENOMEM, leaves *out
 *    untouched, and fills the diagnostic with a NUL-terminated one-line message that says
 *    what was expected;
 *  - success returns a policy that satisfies every invariant the schema promises, so a
 *    validation gap shows up as a crash here rather than as a weaker sandbox;
 *  - that policy prints as JSON that cJSON reads back, and as YAML that parses back to an
 *    equal policy (decode(encode(x)) == x) whenever the text fits the input limit.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz-files.h"
#include "fuzz-parse.h"
#include "fuzz-util.h"
#include "policy.h"

#define MAIN_PATH "/f/main.yaml"

/* Files the loader always serves, besides the pieces of the input. */
static const struct fuzz_file fixed_files[] = {
	{ "/f/base.yaml", "extends: default\nhostname: base\nlimits: {memory: 1G}\nenv: {pass: [HOME]}\n" },
	{ "/f/bad.yaml", "limits:\n  memroy: 1G\n" },
	{ "/f/loop.yaml", "extends: loop.yaml\n" },
	{ "/f/ping.yaml", "extends: pong.yaml\n" },
	{ "/f/pong.yaml", "extends: /f/ping.yaml\n" },
	{ "/f/kernel.yaml", "filesystem: {binds: [{src: /dev/dri, dst: /dev/dri}]}\nunsafe: [bind-kernel-fs]\n" },
	{ "/f/rules.yaml", "seccomp: {rules: [{syscall: kcmp, action: allow, args: [{index: 0, op: eq, value: 1}]}]}\n" },
	{ "/f/sub/a.yaml", "extends: b.yaml\nfilesystem: {binds: [{src: ./x, dst: /x}]}\n" },
	{ "/f/sub/b.yaml", "extends: /f/base.yaml\nnamespaces: {net: false}\n" },
	{ "/f/deep1.yaml", "extends: deep2.yaml\n" },
	{ "/f/deep2.yaml", "extends: deep3.yaml\n" },
	{ "/f/deep3.yaml", "extends: deep4.yaml\n" },
	{ "/f/deep4.yaml", "extends: deep5.yaml\n" },
	{ "/f/deep5.yaml", "extends: deep6.yaml\n" },
	{ "/f/deep6.yaml", "extends: deep7.yaml\n" },
	{ "/f/deep7.yaml", "extends: deep8.yaml\n" },
	{ "/f/deep8.yaml", "extends: default\n" },
};

static int fuzz_load(void *ctx, const char *abs_path, char **out_buf, size_t *out_len)
{
	return fuzz_files_load(fixed_files, sizeof(fixed_files) / sizeof(fixed_files[0]), ctx,
			       abs_path, out_buf, out_len);
}

static void check_relative(const char *s)
{
	CHECK(s && s[0] && s[0] != '/' && strlen(s) < PATH_MAX);
	fuzz_check_normalised(s);
}

/* A protect entry: relative and normalised, but for one trailing '/' that marks a directory. */
static void check_protect(const char *s)
{
	char body[PATH_MAX];
	size_t len = s ? strlen(s) : 0;
	CHECK(len > 0 && len < PATH_MAX);
	memcpy(body, s, len + 1);
	if (len > 1 && body[len - 1] == '/')
		body[len - 1] = '\0';
	check_relative(body);
}

/* allow_create entry a names protect entry p, with or without p's trailing '/'. */
static bool names_protect(const char *a, const char *p)
{
	size_t len = strlen(a);
	return !strncmp(a, p, len) && (!p[len] || !strcmp(p + len, "/"));
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

static bool is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strcmp(path, dir) || (!strncmp(path, dir, n) && path[n] == '/');
}

static bool is_kernel_fs(const char *path)
{
	return is_under(path, "/proc") || is_under(path, "/sys") || is_under(path, "/dev");
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

static void check_bind(const struct pol_bind *b, uint32_t unsafe)
{
	static const char *const never_dst[] = {
		"/", "/tmp", "/workspace", "/etc", "/etc/passwd", "/etc/group",
	};

	CHECK(b->src && b->dst && b->src[0] == '/' && b->dst[0] == '/');
	CHECK(b->mode == POL_BIND_RO || b->mode == POL_BIND_RW);
	for (size_t i = 0; i < sizeof(never_dst) / sizeof(never_dst[0]); i++)
		CHECK(strcmp(b->dst, never_dst[i]));
	if (!(unsafe & POL_UNSAFE_BIND_HOST_ROOT))
		CHECK(strcmp(b->src, "/"));
	if (!(unsafe & POL_UNSAFE_BIND_KERNEL_FS))
		CHECK(!is_kernel_fs(b->src) && !is_kernel_fs(b->dst));
	if (!(unsafe & POL_UNSAFE_BIND_SOCKET)) {
		CHECK(!ends_with(b->src, "docker.sock") && !ends_with(b->src, "containerd.sock") &&
		      !ends_with(b->src, "podman.sock"));
		CHECK(strcmp(b->src, "/run") && strcmp(b->src, "/var/run"));
	}
	if (strcmp(b->src, "/"))
		check_relative(b->src + 1);
	check_relative(b->dst + 1);
}

static void check_cap(const char *c)
{
	static const char *const allowed[] = {
		"chown", "dac_override", "fowner", "fsetid", "kill", "setgid", "setuid",
		"net_bind_service", "net_broadcast", "net_raw", "ipc_lock", "ipc_owner",
		"sys_pacct", "sys_nice", "sys_resource", "sys_tty_config", "mknod", "lease",
		"audit_write", "audit_read", "checkpoint_restore",
	};
	bool found = false;

	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		found = found || !strcmp(c, allowed[i]);
	CHECK(found);
}

static void check_rule(const struct pol_syscall_rule *r)
{
	bool seen[6] = { false };

	CHECK(r->name && r->name[0] && strlen(r->name) <= 64);
	CHECK(r->n_conds >= 1 && r->n_conds <= 6);
	for (size_t c = 0; c < r->n_conds; c++) {
		const struct pol_arg_cond *cd = &r->conds[c];
		CHECK(cd->index < 6 && !seen[cd->index]);
		seen[cd->index] = true;
		CHECK(pol_cmp_op_name(cd->op));
		if (cd->op == POL_CMP_MASKED_EQ)
			CHECK((cd->value & ~cd->mask) == 0);
		else
			CHECK(cd->mask == 0);
	}
}

static void check_policy(const struct pol_policy *p, const char *name)
{
	const uint32_t known_unsafe = POL_UNSAFE_NO_CGROUP | POL_UNSAFE_IO_URING |
				      POL_UNSAFE_BIND_HOST_ROOT | POL_UNSAFE_BIND_SOCKET |
				      POL_UNSAFE_BIND_KERNEL_FS;

	CHECK(p->uid >= 1 && p->uid <= 65534);
	CHECK(p->gid >= 1 && p->gid <= 65534);
	CHECK(p->user_name && p->user_name[0]);
	CHECK(p->host_id_base >= 1000 && p->host_id_count >= 1);
	CHECK((uint64_t)p->host_id_base + p->host_id_count <= UINT32_MAX);
	CHECK(p->hostname && p->hostname[0] && strlen(p->hostname) <= 64);
	CHECK((p->unsafe & ~known_unsafe) == 0);

	CHECK(p->n_binds <= POL_MAX_LIST);
	for (size_t i = 0; i < p->n_binds; i++) {
		check_bind(&p->binds[i], p->unsafe);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(p->binds[i].dst, p->binds[j].dst));
	}

	check_list(p->etc_files, p->n_etc_files);
	check_list(p->protect, p->n_protect);
	check_list(p->allow_create, p->n_allow_create);
	check_list(p->hide, p->n_hide);
	check_list(p->caps_keep, p->n_caps_keep);
	check_list(p->env_set, p->n_env_set);
	check_list(p->env_pass, p->n_env_pass);
	check_list(p->seccomp_allow, p->n_seccomp_allow);
	check_list(p->seccomp_deny, p->n_seccomp_deny);
	check_list(p->sources, p->n_sources);
	for (size_t i = 0; i < p->n_etc_files; i++)
		check_relative(p->etc_files[i]);
	for (size_t i = 0; i < p->n_protect; i++)
		check_protect(p->protect[i]);
	for (size_t i = 0; i < p->n_allow_create; i++) {
		bool found = false;
		check_relative(p->allow_create[i]);
		for (size_t j = 0; j < p->n_protect; j++)
			found = found || names_protect(p->allow_create[i], p->protect[j]);
		CHECK(found);
	}
	for (size_t i = 0; i < p->n_hide; i++) {
		check_relative(p->hide[i]);
		CHECK(!strchr(p->hide[i], '\\'));
	}
	for (size_t i = 0; i < p->n_caps_keep; i++)
		check_cap(p->caps_keep[i]);
	for (size_t i = 0; i < p->n_env_set; i++)
		CHECK(strchr(p->env_set[i], '=') && p->env_set[i][0] != '=');

	CHECK(p->namespaces[POL_NS_USER] && p->namespaces[POL_NS_PID] &&
	      p->namespaces[POL_NS_MOUNT]);
	CHECK(p->network == POL_NET_NONE);

	CHECK(p->seccomp_profile && !strcmp(p->seccomp_profile, "default"));
	CHECK(p->seccomp_default == POL_SECCOMP_ERRNO || p->seccomp_default == POL_SECCOMP_KILL);
	CHECK(p->n_seccomp_rules <= POL_MAX_LIST && (p->seccomp_rules || !p->n_seccomp_rules));
	for (size_t i = 0; i < p->n_seccomp_rules; i++)
		check_rule(&p->seccomp_rules[i]);

	CHECK(p->memory_bytes > 0 && p->memory_bytes <= INT64_MAX);
	CHECK(p->pids > 0 && p->tmp_bytes > 0 && p->nofile > 0 && p->fsize_bytes > 0);
	CHECK(p->fsize_bytes <= INT64_MAX && p->tmp_bytes <= INT64_MAX);
	CHECK(p->wall_ms <= INT64_MAX && p->output_bytes <= INT64_MAX);

	/* the default first, the file last, at most the extends chain in between */
	CHECK(p->n_sources >= 2 && p->n_sources <= 1 + POL_MAX_EXTENDS);
	CHECK(!strcmp(p->sources[0], "<default>"));
	CHECK(!strcmp(p->sources[p->n_sources - 1], name));
}

/* Printing: JSON that reads back, and YAML that parses back to the same policy. */
static void check_print(const struct pol_policy *p)
{
	struct pol_policy *q = NULL;
	struct pol_diag d;
	char *text = NULL;
	cJSON *json;
	int r;

	r = pol_to_json(p, &text);
	CHECK(r == 0 || r == -ENOMEM);
	if (r == 0) {
		json = cJSON_Parse(text);
		CHECK(json && cJSON_IsObject(json));
		cJSON_Delete(json);
		free(text);
	}

	text = NULL;
	r = pol_to_yaml(p, &text);
	CHECK(r == 0 || r == -ENOMEM);
	if (r < 0 || strlen(text) > POL_MAX_INPUT_BYTES) {
		free(text);
		return;
	}
	r = pol_parse("printed", text, strlen(text), &q, &d);
	CHECK(r == 0 || r == -ENOMEM);
	if (r == 0) {
		CHECK(pol_equal(p, q));
		pol_free(q);
	}
	free(text);
}

/* A value no parse ever stores, to prove the result is untouched on failure. */
static struct pol_policy *const untouched = (struct pol_policy *)(uintptr_t)1;

/*
 * One parse's outcome (r, p and d) as name: a policy that keeps every promise and prints back,
 * freed here, or a failure that kept the parser's contract.
 */
static void check_outcome(int r, struct pol_policy *p, const char *name, const struct pol_diag *d)
{
	if (r != 0) {
		fuzz_check_failure(r, p == untouched, d);
		return;
	}
	CHECK(p && p != untouched);
	check_policy(p, name);
	check_print(p);
	CHECK(pol_free(p) == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pol_policy *p = untouched;
	struct fuzz_pieces pcs;
	struct pol_diag d;
	int r;

	if (size > POL_MAX_INPUT_BYTES)
		return -1; /* keep it out of the corpus */

	/* The whole input, without file access. */
	memset(&d, 0, sizeof(d));
	r = pol_parse("fuzz", data, size, &p, &d);
	check_outcome(r, p, "fuzz", &d);
	if (r != 0)
		CHECK(r != -E2BIG && !strcmp(d.file, "fuzz"));

	/* The first piece as a file, the others (and the fixed set) reachable through extends. */
	fuzz_split_input(data, size, &pcs);
	p = untouched;
	memset(&d, 0, sizeof(d));
	r = pol_parse_file(MAIN_PATH, pcs.v[0].p, pcs.v[0].len, fuzz_load, &pcs, &p, &d);
	check_outcome(r, p, MAIN_PATH, &d);
	if (r != 0)
		CHECK(d.file[0] == '/' || !strcmp(d.file, "<default>"));
	return 0;
}
