/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the policy parser (policy/policy.c): the embedded default, overlay semantics,
 * every error class with its exact line, column and message, every unit rule and every bound.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "cleanup.h"
#include "policy.h"
#include "yaml-util.h"
#include "unit-util.h"

#define TEST_FILE "test.yaml"

/* A value no parse ever stores, to prove *out is untouched on failure. */
static struct pol_policy *const sentinel = (struct pol_policy *)(uintptr_t)0x5a5a5a5a;

static struct pol_policy *parse_ok(const char *yaml)
{
	struct pol_policy *p = NULL;
	struct pol_diag d = { .line = 12345 };
	int r = pol_parse(TEST_FILE, yaml, strlen(yaml), &p, &d);
	unit_assert_parsed(r, &d);
	assert_non_null(p);
	assert_int_equal(d.line, 12345); /* untouched on success */
	return p;
}

static void check_error_len(const char *yaml, size_t len, int err, unsigned line,
			    unsigned column, const char *substr)
{
	struct pol_policy *p = sentinel;
	struct pol_diag d;
	int r;

	memset(&d, 0, sizeof(d));
	r = pol_parse(TEST_FILE, yaml, len, &p, &d);
	unit_assert_diag(r, &d, err, TEST_FILE, line, column, substr, UNIT_MSG_PART);
	assert_ptr_equal(p, sentinel);
}

static void check_error(const char *yaml, unsigned line, unsigned column, const char *substr)
{
	check_error_len(yaml, strlen(yaml), -EINVAL, line, column, substr);
}

/* Parses "limits: {<key>: <value>}" and returns the stored field. */
static uint64_t limit_value(const char *key, const char *value)
{
	_cleanup_free_ char *y = unit_fmt("limits: {%s: %s}", key, value);
	struct pol_policy *p = parse_ok(y);
	uint64_t v = 0;

	if (!strcmp(key, "memory"))
		v = p->memory_bytes;
	else if (!strcmp(key, "pids"))
		v = p->pids;
	else if (!strcmp(key, "cpu"))
		v = p->cpu_millicpus;
	else if (!strcmp(key, "nofile"))
		v = p->nofile;
	else if (!strcmp(key, "nproc"))
		v = p->nproc;
	else if (!strcmp(key, "fsize"))
		v = p->fsize_bytes;
	else if (!strcmp(key, "tmpfs"))
		v = p->tmp_bytes;
	else if (!strcmp(key, "wall"))
		v = p->wall_ms;
	else if (!strcmp(key, "output"))
		v = p->output_bytes;
	else
		fail_msg("unknown limit %s", key);
	pol_free(p);
	return v;
}

/* "limits: {key: value}" must fail at the value, column 12 + strlen(key). */
static void check_limit_error(const char *key, const char *value, const char *substr)
{
	_cleanup_free_ char *y = unit_fmt("limits: {%s: %s}", key, value);
	check_error(y, 1, (unsigned)(12 + strlen(key)), substr);
}

static void check_default_values(const struct pol_policy *p)
{
	static const char *const etc[] = {
		"alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "nsswitch.conf",
		"services", "protocols", "localtime", "os-release", "ssl", "ca-certificates", "ca-certificates.conf",
		"mime.types", "gitconfig", "bash.bashrc", "profile", "inputrc",
	};
	/* The names workspace.hold holds at any depth, at the top; directories end in '/'. */
	static const char *const protect[] = {
		".gitmodules", ".gitconfig", ".bashrc", ".bash_profile", ".bash_login",
		".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin",
		".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".envrc", ".vscode/", ".idea/",
		".devcontainer/", ".devcontainer.json", ".claude/", ".mcp.json", ".codex/",
		".husky/", ".pre-commit-config.yaml", ".yarnrc.yml", ".yarnrc", ".npmrc",
		".pnpmfile.cjs",
	};
	static const struct {
		const char *path;
		bool optional;
	} binds[] = {
		{ "/usr", false }, { "/bin", false }, { "/sbin", false }, { "/lib", false },
		{ "/lib64", true }, { "/lib32", true }, { "/libx32", true },
	};

	assert_int_equal(p->uid, 1000);
	assert_int_equal(p->gid, 1000);
	assert_string_equal(p->user_name, "agent");
	assert_int_equal(p->host_id_base, 2000000000u);
	assert_int_equal(p->host_id_count, 65536);
	assert_string_equal(p->hostname, "warden");

	assert_int_equal(p->n_binds, ELEMENTSOF(binds));
	for (size_t i = 0; i < ELEMENTSOF(binds); i++) {
		assert_string_equal(p->binds[i].src, binds[i].path);
		assert_string_equal(p->binds[i].dst, binds[i].path);
		assert_int_equal(p->binds[i].mode, POL_BIND_RO);
		assert_int_equal(p->binds[i].optional, binds[i].optional);
	}
	assert_int_equal(p->n_etc_files, ELEMENTSOF(etc));
	for (size_t i = 0; i < ELEMENTSOF(etc); i++)
		assert_string_equal(p->etc_files[i], etc[i]);
	assert_null(p->etc_files[p->n_etc_files]);
	assert_int_equal(p->n_protect, ELEMENTSOF(protect));
	for (size_t i = 0; i < ELEMENTSOF(protect); i++)
		assert_string_equal(p->protect[i], protect[i]);
	assert_int_equal(p->n_allow_create, 0);

	assert_int_equal(p->n_env_set, 2);
	assert_string_equal(p->env_set[0], "PATH=/usr/local/bin:/usr/bin:/bin");
	assert_string_equal(p->env_set[1], "LANG=C.UTF-8");
	assert_null(p->env_set[2]);
	assert_int_equal(p->n_env_pass, 1);
	assert_string_equal(p->env_pass[0], "TERM");

	assert_int_equal(p->n_hide, 0);
	assert_non_null(p->hide);
	assert_null(p->hide[0]);
	for (int i = 0; i < POL_NS_N; i++)
		assert_true(p->namespaces[i]);
	assert_int_equal(p->n_caps_keep, 0);
	assert_int_equal(p->network, POL_NET_NONE);

	assert_string_equal(p->seccomp_profile, "default");
	assert_int_equal(p->seccomp_default, POL_SECCOMP_ERRNO);
	assert_int_equal(p->n_seccomp_allow, 0);
	assert_int_equal(p->n_seccomp_deny, 0);
	assert_int_equal(p->n_seccomp_rules, 0);

	assert_int_equal(p->memory_bytes, UINT64_C(4) << 30);
	assert_int_equal(p->pids, 1024);
	assert_int_equal(p->cpu_millicpus, 0);
	assert_int_equal(p->nofile, 4096);
	assert_int_equal(p->nproc, 0);
	assert_int_equal(p->fsize_bytes, UINT64_C(16) << 30);
	assert_int_equal(p->tmp_bytes, UINT64_C(1) << 30);
	assert_int_equal(p->wall_ms, 0);
	assert_int_equal(p->output_bytes, 0);
	assert_int_equal(p->unsafe, 0);
}

/* ---- the default and overlays ---- */

static void test_default_text(void **state)
{
	size_t len = 0;
	const char *y = pol_default_yaml(&len);
	(void)state;
	assert_non_null(y);
	assert_true(len > 100);
	assert_int_equal(strlen(y), len);
	assert_non_null(strstr(y, "hostname: warden"));
	assert_ptr_equal(pol_default_yaml(NULL), y);
}

static void test_default_parses(void **state)
{
	size_t len = 0;
	const char *y = pol_default_yaml(&len);
	struct pol_policy *p = NULL;
	struct pol_diag d = { 0 };
	(void)state;
	assert_int_equal(pol_parse("<default>", y, len, &p, &d), 0);
	check_default_values(p);
	pol_free(p);
}

static void test_empty_mapping_is_default(void **state)
{
	struct pol_policy *p = parse_ok("{}\n");
	(void)state;
	check_default_values(p);
	pol_free(p);

	p = parse_ok("# only a comment and an empty mapping\n{}\n");
	check_default_values(p);
	pol_free(p);
}

static void test_overlay_keeps_siblings(void **state)
{
	struct pol_policy *p = parse_ok("user:\n  uid: 1001\n");
	(void)state;
	assert_int_equal(p->uid, 1001);
	assert_int_equal(p->gid, 1000);
	assert_string_equal(p->user_name, "agent");
	assert_int_equal(p->host_id_base, 2000000000u);
	assert_int_equal(p->host_id_count, 65536);
	assert_string_equal(p->hostname, "warden");
	assert_int_equal(p->memory_bytes, UINT64_C(4) << 30);
	pol_free(p);
}

static void test_overlay_nested_mapping(void **state)
{
	struct pol_policy *p = parse_ok("user: {host_ids: {count: 10}}\nlimits: {pids: 7}\n");
	(void)state;
	assert_int_equal(p->host_id_base, 2000000000u);
	assert_int_equal(p->host_id_count, 10);
	assert_int_equal(p->uid, 1000);
	assert_int_equal(p->pids, 7);
	assert_int_equal(p->memory_bytes, UINT64_C(4) << 30);
	assert_int_equal(p->nofile, 4096);
	pol_free(p);
}

static void test_overlay_list_replaces(void **state)
{
	struct pol_policy *p = parse_ok("filesystem:\n"
					"  etc: [hosts, ssl/certs]\n"
					"  binds:\n"
					"    - { src: /opt/tool, dst: /opt/tool, mode: rw, optional: true }\n"
					"env:\n"
					"  pass: [HOME, LC_ALL]\n");
	(void)state;
	assert_int_equal(p->n_etc_files, 2);
	assert_string_equal(p->etc_files[0], "hosts");
	assert_string_equal(p->etc_files[1], "ssl/certs");
	assert_null(p->etc_files[2]);
	assert_int_equal(p->n_binds, 1);
	assert_string_equal(p->binds[0].src, "/opt/tool");
	assert_string_equal(p->binds[0].dst, "/opt/tool");
	assert_int_equal(p->binds[0].mode, POL_BIND_RW);
	assert_true(p->binds[0].optional);
	/* untouched lists keep the default */
	assert_int_equal(p->n_protect, 29);
	assert_int_equal(p->n_env_set, 2);
	assert_int_equal(p->n_env_pass, 2);
	assert_string_equal(p->env_pass[1], "LC_ALL");
	pol_free(p);
}

static void test_overlay_empty_list(void **state)
{
	struct pol_policy *p = parse_ok("filesystem: {binds: [], etc: [], protect: []}\n"
					"env: {set: [], pass: []}\n");
	(void)state;
	assert_int_equal(p->n_binds, 0);
	assert_int_equal(p->n_etc_files, 0);
	assert_non_null(p->etc_files);
	assert_null(p->etc_files[0]);
	assert_int_equal(p->n_protect, 0);
	assert_int_equal(p->n_env_set, 0);
	assert_null(p->env_set[0]);
	assert_int_equal(p->n_env_pass, 0);
	pol_free(p);
}

static void test_full_policy(void **state)
{
	struct pol_policy *p = parse_ok("---\n"
					"user:\n"
					"  uid: 1500\n"
					"  gid: 1600\n"
					"  name: _build-bot9\n"
					"  host_ids: { base: 100000, count: 1000 }\n"
					"hostname: box-1.example\n"
					"filesystem:\n"
					"  binds:\n"
					"    - src: /usr\n"
					"      dst: /usr\n"
					"    - { src: /srv/cache, dst: /workspace/cache, mode: rw }\n"
					"    - { src: /srv/x, dst: /tmp/x, mode: ro, optional: false }\n"
					"  etc: [hosts]\n"
					"  protect: [.git/hooks, Makefile]\n"
					"  allow_create: [Makefile]\n"
					"env:\n"
					"  set: ['A=1', \"B=x=y\", C=]\n"
					"  pass: [HOME]\n"
					"seccomp:\n"
					"  default_action: kill\n"
					"  allow: [ptrace, io_uring_setup]\n"
					"  deny: [chmod]\n"
					"limits:\n"
					"  memory: 512M\n"
					"  pids: 64\n"
					"  cpu: 1.5\n"
					"  nofile: 1024\n"
					"  nproc: 32\n"
					"  fsize: 1G\n"
					"  tmpfs: 256M\n"
					"  wall: 10m\n"
					"  output: 1M\n"
					"unsafe: [no-cgroup, io_uring]\n"
					"...\n");
	(void)state;
	assert_int_equal(p->uid, 1500);
	assert_int_equal(p->gid, 1600);
	assert_string_equal(p->user_name, "_build-bot9");
	assert_int_equal(p->host_id_base, 100000);
	assert_int_equal(p->host_id_count, 1000);
	assert_string_equal(p->hostname, "box-1.example");
	assert_int_equal(p->n_binds, 3);
	assert_int_equal(p->binds[0].mode, POL_BIND_RO); /* mode defaults to ro */
	assert_false(p->binds[0].optional);
	assert_string_equal(p->binds[1].dst, "/workspace/cache");
	assert_int_equal(p->binds[1].mode, POL_BIND_RW);
	assert_string_equal(p->binds[2].dst, "/tmp/x");
	assert_int_equal(p->n_allow_create, 1);
	assert_string_equal(p->allow_create[0], "Makefile");
	assert_int_equal(p->n_env_set, 3);
	assert_string_equal(p->env_set[1], "B=x=y");
	assert_string_equal(p->env_set[2], "C=");
	assert_int_equal(p->seccomp_default, POL_SECCOMP_KILL);
	assert_int_equal(p->n_seccomp_allow, 2);
	assert_string_equal(p->seccomp_allow[1], "io_uring_setup");
	assert_int_equal(p->n_seccomp_deny, 1);
	assert_int_equal(p->memory_bytes, UINT64_C(512) << 20);
	assert_int_equal(p->pids, 64);
	assert_int_equal(p->cpu_millicpus, 1500);
	assert_int_equal(p->nofile, 1024);
	assert_int_equal(p->nproc, 32);
	assert_int_equal(p->fsize_bytes, UINT64_C(1) << 30);
	assert_int_equal(p->tmp_bytes, UINT64_C(256) << 20);
	assert_int_equal(p->wall_ms, 600000);
	assert_int_equal(p->output_bytes, UINT64_C(1) << 20);
	assert_int_equal(p->unsafe, POL_UNSAFE_NO_CGROUP | POL_UNSAFE_IO_URING);
	pol_free(p);
}

static void test_unsafe_replaces(void **state)
{
	struct pol_policy *p = parse_ok("unsafe: [io_uring]\n");
	(void)state;
	assert_int_equal(p->unsafe, POL_UNSAFE_IO_URING);
	pol_free(p);
	p = parse_ok("unsafe: []\n");
	assert_int_equal(p->unsafe, 0);
	pol_free(p);
}

static void test_null_name_and_diag(void **state)
{
	struct pol_policy *p = sentinel;
	struct pol_diag d = { 0 };
	(void)state;
	assert_int_equal(pol_parse(NULL, "x: 1", 4, &p, &d), -EINVAL);
	assert_string_equal(d.file, "<input>");
	assert_ptr_equal(p, sentinel);
	/* reterr is optional */
	assert_int_equal(pol_parse("f", "x: 1", 4, &p, NULL), -EINVAL);
	assert_ptr_equal(p, sentinel);
	/* a NULL buffer with no bytes is an empty document */
	assert_int_equal(pol_parse("f", NULL, 0, &p, &d), -EINVAL);
	assert_non_null(strstr(d.message, "empty"));
	/* a NULL buffer with bytes is a caller error, still reported */
	assert_int_equal(pol_parse("f", NULL, 5, &p, &d), -EINVAL);
	assert_non_null(strstr(d.message, "(expected"));
	assert_ptr_equal(p, sentinel);
}

static void test_free_null(void **state)
{
	(void)state;
	assert_null(pol_free(NULL));
}

/* ---- structure: keys and types ---- */

static void test_unknown_top_level_key(void **state)
{
	(void)state;
	check_error("limit:\n  memory: 1G\n", 1, 1, "unknown key 'limit' in the top level");
	check_error("user: {uid: 1000}\nhostnme: x\n", 2, 1, "unknown key 'hostnme'");
}

static void test_unknown_nested_key(void **state)
{
	(void)state;
	check_error("limits:\n  memory: 1G\n  memroy: 2G\n", 3, 3,
		    "unknown key 'memroy' in limits (expected one of: memory, pids");
	check_error("user:\n  host_ids: {base: 5000, cnt: 1}\n", 2, 26,
		    "unknown key 'cnt' in user.host_ids");
	check_error("filesystem:\n  binds:\n    - {src: /a, dst: /a, optinal: true}\n", 3, 26,
		    "unknown key 'optinal' in filesystem.binds[0]");
}

static void test_key_case_matters(void **state)
{
	(void)state;
	check_error("Limits: {}\n", 1, 1, "unknown key 'Limits'");
}

static void test_duplicate_key(void **state)
{
	(void)state;
	check_error("hostname: a\nuser: {uid: 1001}\nhostname: b\n", 3, 1,
		    "duplicate key 'hostname' in the top level (expected each key once; first at line 1)");
	check_error("user:\n  uid: 1001\n  gid: 1001\n  uid: 1002\n", 4, 3,
		    "duplicate key 'uid' in user");
	check_error("limits: {pids: 1, \"pids\": 2}\n", 1, 19, "duplicate key 'pids' in limits");
}

static void test_mapping_where_scalar_expected(void **state)
{
	(void)state;
	check_error("hostname: {a: 1}\n", 1, 11, "hostname is a mapping (expected 1 to 64");
	check_error("user:\n  uid:\n    x: 1\n", 3, 5, "user.uid is a mapping (expected a decimal");
	check_error("limits: {memory: [1]}\n", 1, 18, "limits.memory is a sequence (expected");
}

static void test_scalar_where_mapping_expected(void **state)
{
	(void)state;
	check_error("user: 1000\n", 1, 7, "user is a scalar (expected a mapping)");
	check_error("limits: [1, 2]\n", 1, 9, "limits is a sequence (expected a mapping)");
	check_error("filesystem: {binds: [/usr]}\n", 1, 22,
		    "filesystem.binds[0] is a scalar (expected a mapping)");
}

static void test_scalar_where_sequence_expected(void **state)
{
	(void)state;
	check_error("unsafe: io_uring\n", 1, 9, "unsafe is a scalar (expected a sequence");
	check_error("env: {pass: {TERM: 1}}\n", 1, 13, "env.pass is a mapping (expected a sequence");
	check_error("seccomp: {allow: [[ptrace]]}\n", 1, 19,
		    "seccomp.allow[0] is a sequence (expected a string)");
}

static void test_null_values(void **state)
{
	(void)state;
	check_error("hostname:\n", 1, 10, "hostname is empty");
	check_error("user: ~\n", 1, 7, "user is empty (expected a mapping)");
	check_error("filesystem:\n  etc: null\n", 2, 8, "filesystem.etc is empty (expected a sequence");
	check_error("env: {pass: [TERM, ~]}\n", 1, 20, "env.pass[1] is empty");
}

static void test_quoted_number_rejected(void **state)
{
	(void)state;
	check_error("user: {uid: \"1000\"}\n", 1, 13, "user.uid is a quoted string");
	check_error("limits: {memory: '1G'}\n", 1, 18, "limits.memory is a quoted string");
	check_error("filesystem: {binds: [{src: /a, dst: /a, optional: 'true'}]}\n", 1, 51,
		    "is a quoted string (expected true or false)");
}

static void test_complex_key_rejected(void **state)
{
	(void)state;
	check_error("? [a, b]\n: 1\n", 1, 3, "key in the top level is a sequence (expected a scalar key)");
	check_error("user: {{uid: 1}: 2}\n", 1, 8, "key in user is a mapping");
}

static void test_root_must_be_mapping(void **state)
{
	(void)state;
	check_error("- user\n- limits\n", 1, 1, "document is a sequence (expected a mapping");
	check_error("hello\n", 1, 1, "document is a scalar (expected a mapping");
}

static void test_empty_document(void **state)
{
	(void)state;
	check_error("", 1, 1, "document is empty");
	check_error("\n\n", 3, 1, "document is empty");
	check_error("# nothing here\n", 2, 1, "document is empty");
	check_error("---\n", 2, 1, "document is empty");
	check_error("--- ~\n", 1, 5, "document is empty");
}

static void test_multiple_documents(void **state)
{
	(void)state;
	check_error("hostname: a\n---\nhostname: b\n", 2, 1,
		    "a second document starts here (expected exactly one document)");
	check_error("{}\n...\n---\n{}\n", 3, 1, "second document");
}

/* ---- YAML features that are refused ---- */

static void test_anchor_rejected(void **state)
{
	(void)state;
	check_error("user: &u {uid: 1001}\n", 1, 7, "anchor '&u' is not allowed");
	check_error("env:\n  pass: [&t TERM]\n", 2, 10, "anchor '&t' is not allowed");
}

static void test_alias_rejected(void **state)
{
	(void)state;
	check_error("hostname: *h\n", 1, 11, "alias '*h' is not allowed");
	/* the anchor comes first and is refused before the alias is seen */
	check_error("env: {pass: [&a TERM, *a]}\n", 1, 14, "anchor '&a'");
	check_error("<<: *base\n", 1, 5, "alias '*base'");
}

static void test_tag_rejected(void **state)
{
	(void)state;
	check_error("hostname: !!str box\n", 1, 11, "tag 'tag:yaml.org,2002:str' is not allowed");
	check_error("limits: !local {}\n", 1, 9, "tag '!local' is not allowed (expected untagged values)");
	check_error("env: {pass: [! TERM]}\n", 1, 14, "tag '!' is not allowed");
}

static void test_directive_rejected(void **state)
{
	(void)state;
	check_error("%YAML 1.1\n---\n{}\n", 1, 1, "YAML directive is not allowed");
	check_error("%TAG ! tag:example.com,2000:\n---\n{}\n", 1, 1, "directive is not allowed");
}

static void test_syntax_error_position(void **state)
{
	(void)state;
	check_error("user: {uid: 1000\n", 2, 1,
		    "did not find expected ',' or '}' while parsing a flow mapping (expected valid YAML)");
	check_error("user:\n  uid: 1000\n gid: 1000\n", 3, 2, "(expected valid YAML)");
	check_error("hostname: \"abc\n", 2, 1, "(expected valid YAML)");
	check_error("\tuser: {}\n", 1, 1, "found character that cannot start any token");
	check_error("{} x\n", 1, 4, "did not find expected <document start> (expected valid YAML)");
}

static void test_control_and_utf8_rejected(void **state)
{
	(void)state;
	check_error("hostname: a\x01\n", 1, 12, "control characters are not allowed");
	/* columns count characters: the two-byte e-acute is one column */
	check_error("env:\n  set: [\"A=\xc3\xa9\xff\"]\n", 2, 13, "invalid leading UTF-8 octet");
}

static void test_nul_rejected(void **state)
{
	static const char raw[] = "hostname: a\0b\n";
	(void)state;
	check_error("hostname: \"a\\0b\"\n", 1, 11, "string contains a NUL byte");
	check_error("env: {set: [\"A=x\\x00y\"]}\n", 1, 13, "NUL byte");
	/* a raw NUL byte is a control character to the reader */
	check_error_len(raw, sizeof(raw) - 1, -EINVAL, 1, 12, "control characters");
}

/* ---- bounds ---- */

static void test_input_size_limit(void **state)
{
	size_t len = POL_MAX_INPUT_BYTES;
	_cleanup_free_ char *buf = malloc(len + 1);
	struct pol_policy *p = sentinel;
	struct pol_diag d = { 0 };
	(void)state;

	/* exactly the limit: "{}" followed by a comment that fills the rest */
	memset(buf, '#', len + 1);
	memcpy(buf, "{}\n", 3);
	assert_int_equal(pol_parse(TEST_FILE, buf, len, &p, &d), 0);
	assert_ptr_not_equal(p, sentinel);
	pol_free(p);

	p = sentinel;
	assert_int_equal(pol_parse(TEST_FILE, buf, len + 1, &p, &d), -E2BIG);
	assert_ptr_equal(p, sentinel);
	assert_int_equal(d.line, 0);
	assert_int_equal(d.column, 0);
	assert_non_null(strstr(d.message, "(expected at most 262144 bytes)"));
	assert_int_equal(pol_parse(TEST_FILE, buf, SIZE_MAX, &p, NULL), -E2BIG);
}

static void test_depth_limit(void **state)
{
	(void)state;
	/* the top-level mapping is level 1; unsafe's sequence is 2; level 9 is refused */
	check_error("unsafe: [[[[[[[[x]]]]]]]]\n", 1, 16, "nesting is deeper than 8 levels");
	check_error("user: {a: {b: {c: {d: {e: {f: {g: {}}}}}}}}\n", 1, 35,
		    "nesting is deeper than 8 levels (expected at most 8)");
	/* deep nesting is refused before the schema ever sees it, and without deep recursion */
	{
		size_t n = 100000;
		_cleanup_free_ char *y = malloc(8 + 2 * n + 2);
		memcpy(y, "unsafe: ", 8);
		memset(y + 8, '[', n);
		memset(y + 8 + n, ']', n);
		y[8 + 2 * n] = '\n';
		y[8 + 2 * n + 1] = '\0';
		check_error(y, 1, 16, "nesting is deeper");
	}
}

/* "filesystem: {etc: [e000, e001, ...]}" with n entries. */
static char *make_etc_list(size_t n)
{
	size_t cap = 32 + n * 8, o;
	char *y = malloc(cap);
	assert_non_null(y);
	o = (size_t)snprintf(y, cap, "filesystem: {etc: [");
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(y + o, cap - o, "%se%03zu", i ? ", " : "", i);
	(void)snprintf(y + o, cap - o, "]}\n");
	return y;
}

/* "{k000: 1, k001: 1, ...}" with n keys. */
static char *make_key_map(size_t n)
{
	size_t cap = 8 + n * 12, o;
	char *y = malloc(cap);
	assert_non_null(y);
	o = (size_t)snprintf(y, cap, "{");
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(y + o, cap - o, "%sk%03zu: 1", i ? ", " : "", i);
	(void)snprintf(y + o, cap - o, "}\n");
	return y;
}

static void test_list_limit(void **state)
{
	_cleanup_free_ char *ok = make_etc_list(POL_MAX_LIST);
	_cleanup_free_ char *big = make_etc_list(POL_MAX_LIST + 1);
	struct pol_policy *p = parse_ok(ok);
	(void)state;
	assert_int_equal(p->n_etc_files, POL_MAX_LIST);
	assert_string_equal(p->etc_files[255], "e255");
	pol_free(p);
	/* "filesystem: {etc: [" is 19 characters, each entry "eNNN, " is 6 */
	check_error(big, 1, 20 + 6 * POL_MAX_LIST,
		    "sequence has more than 256 entries (expected at most 256)");
}

static void test_mapping_key_limit(void **state)
{
	_cleanup_free_ char *big = make_key_map(POL_MAX_LIST + 1);
	(void)state;
	/* each entry "kNNN: 1, " is 9 characters */
	check_error(big, 1, 2 + 9 * POL_MAX_LIST, "mapping has more than 256 keys");
}

static void test_string_limit(void **state)
{
	_cleanup_free_ char *ok = malloc(POL_MAX_STRING + 32);
	_cleanup_free_ char *big = malloc(POL_MAX_STRING + 32);
	struct pol_policy *p;
	(void)state;
	/* an env value of exactly POL_MAX_STRING bytes ("A=" + filler) */
	snprintf(ok, POL_MAX_STRING + 32, "env: {set: [A=%0*d]}\n", POL_MAX_STRING - 2, 0);
	p = parse_ok(ok);
	assert_int_equal(strlen(p->env_set[0]), POL_MAX_STRING);
	pol_free(p);
	snprintf(big, POL_MAX_STRING + 32, "env: {set: [A=%0*d]}\n", POL_MAX_STRING - 1, 0);
	check_error(big, 1, 13, "string of 4097 bytes is too long (expected at most 4096 bytes)");
}

static void test_event_limit(void **state)
{
	/* unsafe: [[[], [], ...200], ...200]: 200 * 200 * 2 events, far over POL_MAX_EVENTS */
	size_t cap = 8 + 200 * (200 * 4 + 4) + 4, o = 0;
	_cleanup_free_ char *y = malloc(cap);
	struct pol_policy *p = sentinel;
	struct pol_diag d = { 0 };
	(void)state;
	o += (size_t)snprintf(y + o, cap - o, "unsafe: [");
	for (size_t i = 0; i < 200; i++) {
		o += (size_t)snprintf(y + o, cap - o, "%s[", i ? "," : "");
		for (size_t j = 0; j < 200; j++)
			o += (size_t)snprintf(y + o, cap - o, "%s[]", j ? "," : "");
		o += (size_t)snprintf(y + o, cap - o, "]");
	}
	snprintf(y + o, cap - o, "]\n");
	assert_true(strlen(y) <= POL_MAX_INPUT_BYTES);
	assert_int_equal(pol_parse(TEST_FILE, y, strlen(y), &p, &d), -EINVAL);
	assert_ptr_equal(p, sentinel);
	assert_non_null(strstr(d.message, "more than 65536 YAML events (expected at most 65536)"));
	assert_int_equal(d.line, 1);
	/*
	 * Events before the inner lists: stream, document, mapping start, key, sequence start (5).
	 * Each inner list of 200 "[]" is 1 + 400 + 1 = 402 events and 602 characters with its
	 * separating comma. 65537 = 5 + 163 * 402 + 6: the 6th event of inner list 163 (0-based)
	 * is the "[" of its third "[]", 7 characters after the list's own "[" at 10 + 163 * 602.
	 */
	assert_int_equal(d.column, 10 + 163 * 602 + 7);
}

/* ---- values: user and host ---- */

static void test_uid_gid_range(void **state)
{
	struct pol_policy *p = parse_ok("user: {uid: 1, gid: 65534}\n");
	(void)state;
	assert_int_equal(p->uid, 1);
	assert_int_equal(p->gid, 65534);
	pol_free(p);
	check_error("user: {uid: 0}\n", 1, 13, "user.uid '0' is out of range (expected 1..65534)");
	check_error("user: {gid: 0}\n", 1, 13, "user.gid '0' is out of range");
	check_error("user: {uid: 65535}\n", 1, 13, "user.uid '65535' is out of range");
	check_error("user: {uid: 4294967296}\n", 1, 13, "out of range");
	check_error("user: {uid: 99999999999999999999999}\n", 1, 13,
		    "user.uid '99999999999999999999999' overflows (expected at most 65534)");
}

static void test_integer_syntax(void **state)
{
	(void)state;
	check_error("user: {uid: -1}\n", 1, 13, "user.uid '-1' is not a valid number (expected a decimal integer");
	check_error("user: {uid: +5}\n", 1, 13, "is not a valid number");
	check_error("user: {uid: 0x10}\n", 1, 13, "is not a valid number");
	check_error("user: {uid: 01000}\n", 1, 13, "without sign or leading zeros");
	check_error("user: {uid: 1_000}\n", 1, 13, "is not a valid number");
	check_error("user: {uid: 1000.0}\n", 1, 13, "is not a valid number");
	check_error("limits: {pids: 1K}\n", 1, 16, "limits.pids '1K' is not a valid number");
}

static void test_user_name(void **state)
{
	struct pol_policy *p = parse_ok("user: {name: a_b-c9}\n");
	(void)state;
	assert_string_equal(p->user_name, "a_b-c9");
	pol_free(p);
	p = parse_ok("user: {name: abcdefghijabcdefghijabcdefghijab}\n"); /* 32 characters */
	pol_free(p);
	check_error("user: {name: abcdefghijabcdefghijabcdefghijabc}\n", 1, 14,
		    "is longer than 32 characters");
	check_error("user: {name: Agent}\n", 1, 14, "user.name 'Agent' is not a valid user name (expected a name matching [a-z_][a-z0-9_-]{0,31})");
	check_error("user: {name: 1agent}\n", 1, 14, "is not a valid user name");
	check_error("user: {name: -agent}\n", 1, 14, "is not a valid user name");
	check_error("user: {name: \"ag ent\"}\n", 1, 14, "is not a valid user name");
	check_error("user: {name: \"\"}\n", 1, 14, "user.name '' is not a valid user name");
}

static void test_host_ids(void **state)
{
	struct pol_policy *p = parse_ok("user: {host_ids: {base: 1000, count: 1}}\n");
	(void)state;
	assert_int_equal(p->host_id_base, 1000);
	assert_int_equal(p->host_id_count, 1);
	pol_free(p);
	/* base + count == UINT32_MAX: the last id is UINT32_MAX - 1, still not (uid_t)-1 */
	p = parse_ok("user: {host_ids: {base: 4294966295, count: 1000}}\n");
	pol_free(p);
	check_error("user: {host_ids: {base: 0}}\n", 1, 25, "user.host_ids.base '0' is out of range");
	check_error("user: {host_ids: {base: 999}}\n", 1, 25, "user.host_ids.base '999' is out of range (expected 1000..");
	check_error("user: {host_ids: {count: 0}}\n", 1, 26, "user.host_ids.count '0' is out of range");
	check_error("user:\n  host_ids:\n    base: 4294966296\n    count: 1000\n", 3, 5,
		    "user.host_ids base 4294966296 + count 1000 overflows (expected base + count <= 4294967295)");
	/* checked against the merged value: the default base is 2000000000 */
	check_error("user: {host_ids: {count: 3000000000}}\n", 1, 18, "overflows");
}

static void test_hostname(void **state)
{
	struct pol_policy *p = parse_ok("hostname: A-b.9\n");
	(void)state;
	assert_string_equal(p->hostname, "A-b.9");
	pol_free(p);
	p = parse_ok("hostname: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n");
	assert_int_equal(strlen(p->hostname), 64);
	pol_free(p);
	check_error("hostname: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 1, 11,
		    "is longer than 64 characters");
	check_error("hostname: a_b\n", 1, 11, "hostname 'a_b' is not a valid hostname");
	check_error("hostname: \"\"\n", 1, 11, "hostname '' is not a valid hostname");
	check_error("hostname: \"a b\"\n", 1, 11, "is not a valid hostname");
}

/* ---- values: filesystem ---- */

static void test_bind_paths_absolute(void **state)
{
	(void)state;
	/* a relative src needs the policy file's location, which pol_parse does not have */
	check_error("filesystem: {binds: [{src: usr, dst: /usr}]}\n", 1, 28,
		    "filesystem.binds[0].src 'usr' is relative, and 'test.yaml' is not a normalised absolute file path to resolve it against (expected a path starting with /)");
	check_error("filesystem: {binds: [{src: /usr, dst: usr}]}\n", 1, 39,
		    "filesystem.binds[0].dst 'usr' is not absolute");
}

static void test_bind_paths_normalised(void **state)
{
	static const struct {
		const char *path;
		const char *msg;
	} bad[] = {
		{ "/a/../b", "has a '..' component" },
		{ "/a/./b", "has a '.' component" },
		{ "/..", "has a '..' component" },
		{ "//a", "has an empty component or a trailing /" },
		{ "/a//b", "has an empty component or a trailing /" },
		{ "/a/", "has an empty component or a trailing /" },
		{ "\"/a\\tb\"", "contains a control character" },
	};
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		_cleanup_free_ char *src = unit_fmt("filesystem: {binds: [{src: %s, dst: /x}]}\n", bad[i].path);
		_cleanup_free_ char *dst = unit_fmt("filesystem: {binds: [{src: /x, dst: %s}]}\n", bad[i].path);
		check_error(src, 1, 28, bad[i].msg);
		check_error(dst, 1, 37, bad[i].msg);
	}
}

static void test_bind_path_length(void **state)
{
	/* PATH_MAX counts the NUL: a 4095-byte path is the longest usable one */
	_cleanup_free_ char *ok = NULL, *big = NULL;
	_cleanup_free_ char *comp = malloc(256);
	_cleanup_free_ char *path = malloc(PATH_MAX + 2);
	size_t o = 0;
	struct pol_policy *p;
	(void)state;
	memset(comp, 'c', 200);
	comp[200] = '\0';
	while (o + 201 < PATH_MAX - 1)
		o += (size_t)snprintf(path + o, PATH_MAX + 2 - o, "/%s", comp);
	path[o++] = '/';
	while (o < PATH_MAX - 1)
		path[o++] = 'd';
	path[o] = '\0';
	assert_int_equal(strlen(path), PATH_MAX - 1);
	ok = unit_fmt("filesystem: {binds: [{src: %s, dst: /x}]}\n", path);
	p = parse_ok(ok);
	assert_int_equal(strlen(p->binds[0].src), PATH_MAX - 1);
	pol_free(p);
	big = unit_fmt("filesystem: {binds: [{src: %sd, dst: /x}]}\n", path);
	check_error(big, 1, 28, "filesystem.binds[0].src is 4096 bytes long (expected less than 4096)");

	/* a single component over NAME_MAX */
	memset(comp, 'c', 255);
	comp[255] = '\0';
	free(ok);
	ok = unit_fmt("filesystem: {binds: [{src: /%s, dst: /x}]}\n", comp);
	p = parse_ok(ok);
	pol_free(p);
	free(big);
	big = unit_fmt("filesystem: {binds: [{src: /%sc, dst: /x}]}\n", comp);
	check_error(big, 1, 28, "has a component longer than 255 bytes");
}

static void test_bind_dst_guarantees(void **state)
{
	static const char *const covered[] = {
		"/", "/proc", "/dev", "/sys", "/tmp", "/workspace", "/proc/sys", "/proc/1/root",
		"/dev/shm", "/dev/null", "/sys/fs/cgroup", "/etc", "/etc/passwd", "/etc/group",
	};
	static const char *const fine[] = {
		"/tmp/x", "/workspace/cache", "/process", "/devices", "/system", "/etc/ssl", "/opt",
	};
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(covered); i++) {
		_cleanup_free_ char *y = unit_fmt("filesystem:\n  binds:\n    - src: /srv\n      dst: %s\n", covered[i]);
		check_error(y, 4, 12, "bind target would cover a guarantee");
	}
	for (size_t i = 0; i < ELEMENTSOF(fine); i++) {
		_cleanup_free_ char *y = unit_fmt("filesystem: {binds: [{src: /srv, dst: %s}]}\n", fine[i]);
		struct pol_policy *p = parse_ok(y);
		assert_string_equal(p->binds[0].dst, fine[i]);
		pol_free(p);
	}
}

static void test_bind_src_root(void **state)
{
	(void)state;
	check_error("filesystem: {binds: [{src: /, dst: /host}]}\n", 1, 28,
		    "filesystem.binds[0].src '/' would expose the whole host");
}

static void test_bind_required_fields(void **state)
{
	(void)state;
	check_error("filesystem: {binds: [{dst: /x}]}\n", 1, 22,
		    "filesystem.binds[0] has no src (expected a mapping with src and dst)");
	check_error("filesystem:\n  binds:\n    - {src: /a, dst: /a}\n    - {src: /b}\n", 4, 7,
		    "filesystem.binds[1] has no dst");
	check_error("filesystem: {binds: [{}]}\n", 1, 22, "has no src");
}

static void test_bind_mode_and_optional(void **state)
{
	(void)state;
	check_error("filesystem: {binds: [{src: /a, dst: /a, mode: rwx}]}\n", 1, 47,
		    "filesystem.binds[0].mode 'rwx' is not a bind mode (expected ro or rw)");
	check_error("filesystem: {binds: [{src: /a, dst: /a, optional: yes}]}\n", 1, 51,
		    "filesystem.binds[0].optional 'yes' is not a boolean (expected true or false)");
	check_error("filesystem: {binds: [{src: /a, dst: /a, optional: True}]}\n", 1, 51,
		    "is not a boolean");
}

static void test_bind_duplicate_dst(void **state)
{
	(void)state;
	check_error("filesystem:\n  binds:\n    - {src: /a, dst: /x}\n    - {src: /b, dst: /x}\n", 4, 7,
		    "filesystem.binds[1] binds '/x' again (expected each dst once; first at line 3)");
}

static void test_etc_entries(void **state)
{
	(void)state;
	check_error("filesystem: {etc: [/etc/hosts]}\n", 1, 20,
		    "filesystem.etc[0] '/etc/hosts' is absolute (expected a relative path");
	check_error("filesystem: {etc: [hosts, ../shadow]}\n", 1, 27, "filesystem.etc[1] '../shadow' has a '..' component");
	check_error("filesystem: {etc: [ssl/../../x]}\n", 1, 20, "has a '..' component");
	check_error("filesystem: {etc: [ssl/]}\n", 1, 20, "trailing /");
	check_error("filesystem: {etc: [passwd]}\n", 1, 20, "filesystem.etc[0] 'passwd' would cover a guarantee");
	check_error("filesystem: {etc: [group]}\n", 1, 20, "would cover a guarantee");
	check_error("filesystem: {etc: [hosts, hosts]}\n", 1, 27,
		    "filesystem.etc[1] 'hosts' repeats an earlier entry (expected each entry once; first at line 1)");
}

static void test_protect_entries(void **state)
{
	(void)state;
	check_error("filesystem: {protect: [/abs]}\n", 1, 24, "filesystem.protect[0] '/abs' is absolute");
	check_error("filesystem: {protect: [a/../../b]}\n", 1, 24, "has a '..' component");
	check_error("filesystem: {protect: [.]}\n", 1, 24, "has a '.' component");
	check_error("filesystem: {protect: [a//b]}\n", 1, 24, "empty component");
	check_error("filesystem: {protect: [\"\"]}\n", 1, 24, "empty component");
	check_error("filesystem: {allow_create: [.envrc/]}\n", 1, 29, "filesystem.allow_create[0] '.envrc/' has an empty component");
	/* One trailing '/' marks a directory; the rest of the entry is checked as usual. */
	check_error("filesystem: {protect: [a//]}\n", 1, 24, "filesystem.protect[0] 'a//' has an empty component");
	check_error("filesystem: {protect: [/]}\n", 1, 24, "filesystem.protect[0] '/' is absolute");
	check_error("filesystem: {protect: [/a/]}\n", 1, 24, "filesystem.protect[0] '/a/' is absolute");
	check_error("filesystem: {protect: [a/../]}\n", 1, 24, "filesystem.protect[0] 'a/../' has a '..' component");
	check_error("filesystem: {protect: [./]}\n", 1, 24, "has a '.' component");
	struct pol_policy *p = parse_ok("filesystem: {protect: [.vscode/, a/b/], allow_create: [.vscode]}\n");
	assert_int_equal(p->n_protect, 2);
	assert_string_equal(p->protect[0], ".vscode/"); /* kept as written */
	assert_string_equal(p->protect[1], "a/b/");
	assert_int_equal(p->n_allow_create, 1);
	pol_free(p);
}

static void test_relative_path_length(void **state)
{
	_cleanup_free_ char *path = malloc(PATH_MAX + 1);
	_cleanup_free_ char *y = NULL;
	(void)state;
	/* 4096 bytes in 16 components of 255 and a 16-byte tail */
	for (size_t i = 0; i < PATH_MAX; i++)
		path[i] = (i % 256 == 255) ? '/' : 'p';
	path[PATH_MAX] = '\0';
	y = unit_fmt("filesystem: {protect: [%s]}\n", path);
	check_error(y, 1, 24, "filesystem.protect[0] is 4096 bytes long (expected less than 4096)");
	path[PATH_MAX - 1] = '\0';
	free(y);
	y = unit_fmt("filesystem: {protect: [%s]}\n", path);
	struct pol_policy *p = parse_ok(y);
	assert_int_equal(strlen(p->protect[0]), PATH_MAX - 1);
	pol_free(p);
}

static void test_allow_create_within_protect(void **state)
{
	struct pol_policy *p = parse_ok("filesystem: {allow_create: [.envrc, .vscode]}\n");
	(void)state;
	/* checked against the default's protect list */
	assert_int_equal(p->n_allow_create, 2);
	pol_free(p);
	check_error("filesystem:\n  allow_create: [.envrc, Makefile]\n", 2, 26,
		    "filesystem.allow_create[1] 'Makefile' is not in filesystem.protect (expected every allow_create entry to be protected too)");
	check_error("filesystem:\n  protect: [a]\n  allow_create:\n    - a\n    - .envrc\n", 5, 7,
		    "filesystem.allow_create[1] '.envrc' is not in filesystem.protect");
}

/* ---- values: env, seccomp, unsafe ---- */

static void test_env_set(void **state)
{
	(void)state;
	check_error("env: {set: [PATH]}\n", 1, 13, "env.set[0] 'PATH' has no '=' (expected NAME=value");
	check_error("env: {set: [1A=x]}\n", 1, 13, "env.set[0] '1A=x' has an invalid variable name");
	check_error("env: {set: [A-B=x]}\n", 1, 13, "has an invalid variable name");
	check_error("env: {set: [=x]}\n", 1, 13, "has an invalid variable name");
	check_error("env:\n  set:\n    - A=1\n    - B=2\n    - A=3\n", 5, 7,
		    "env.set[2] 'A=3' repeats an earlier entry (expected each entry once; first at line 3)");
}

static void test_env_pass(void **state)
{
	struct pol_policy *p = parse_ok("env: {pass: [_X9, lower]}\n");
	(void)state;
	assert_string_equal(p->env_pass[0], "_X9");
	pol_free(p);
	check_error("env: {pass: [TERM, 9X]}\n", 1, 20, "env.pass[1] '9X' is not a variable name");
	check_error("env: {pass: [\"A=B\"]}\n", 1, 14, "is not a variable name");
	check_error("env: {pass: [TERM, TERM]}\n", 1, 20, "repeats an earlier entry");
	check_error("env: {pass: [\"\"]}\n", 1, 14, "env.pass[0] '' is not a variable name");
}

static void test_seccomp_values(void **state)
{
	(void)state;
	check_error("seccomp: {default_action: allow}\n", 1, 27,
		    "seccomp.default_action 'allow' is not a seccomp action (expected errno or kill)");
	check_error("seccomp: {allow: [ptrace, Open]}\n", 1, 27,
		    "seccomp.allow[1] 'Open' is not a syscall name (expected a syscall name matching [a-z0-9_]+)");
	check_error("seccomp: {deny: [\"open at\"]}\n", 1, 18, "is not a syscall name");
	check_error("seccomp: {deny: [a, b, a]}\n", 1, 24, "repeats an earlier entry");
	check_error("seccomp: {allow: ['']}\n", 1, 19, "seccomp.allow[0] '' is not a syscall name");
	check_error("seccomp: {allow: [a234567890123456789012345678901234567890123456789012345678901234x]}\n",
		    1, 19, "is longer than 64 characters");
	check_error("seccomp:\n  allow: [ptrace]\n  deny: [chmod, ptrace]\n", 3, 17,
		    "seccomp.deny[1] 'ptrace' is also in seccomp.allow (expected a syscall in at most one list)");
}

static void test_unsafe_values(void **state)
{
	(void)state;
	check_error("unsafe: [no-seccomp]\n", 1, 10,
		    "unsafe[0] 'no-seccomp' is not a known weakening (expected one of: no-cgroup, io_uring, bind-host-root, bind-container-socket, bind-kernel-fs, workspace-anywhere)");
	check_error("unsafe: [io_uring, io_uring]\n", 1, 20, "unsafe[1] 'io_uring' repeats an earlier entry");
}

/* ---- workspace ---- */

static void test_workspace_defaults(void **state)
{
	struct pol_policy *p = parse_ok("hostname: x\n");
	(void)state;
	assert_int_equal(p->ws_mode, POL_WS_CHANGES);
	assert_int_equal(p->ws_apply, POL_WS_APPLY_SAFE);
	assert_true(p->n_hold > 10);
	assert_true(pol_strv_contains(p->hold, p->n_hold, ".git/hooks"));
	assert_true(pol_strv_contains(p->hold, p->n_hold, ".git/config"));
	assert_true(pol_strv_contains(p->hold, p->n_hold, "**/.envrc"));
	pol_free(p);
}

static void test_workspace_values(void **state)
{
	struct pol_policy *p = parse_ok("workspace: {mode: direct, apply: none, hold: [a, \"**/b\"]}\n"
					"unsafe: [workspace-anywhere]\n");
	(void)state;
	assert_int_equal(p->ws_mode, POL_WS_DIRECT);
	assert_int_equal(p->ws_apply, POL_WS_APPLY_NONE);
	assert_int_equal(p->n_hold, 2);
	assert_string_equal(p->hold[1], "**/b");
	assert_true(p->unsafe & POL_UNSAFE_WORKSPACE_ANYWHERE);
	pol_free(p);
	check_error("workspace: {mode: live}\n", 1, 19,
		    "workspace.mode 'live' is not a workspace mode (expected changes or direct)");
	check_error("workspace: {apply: all}\n", 1, 20,
		    "workspace.apply 'all' is not a rule for applying (expected safe or none)");
	check_error("workspace: {hold: [/etc]}\n", 1, 20, "workspace.hold[0] '/etc' is absolute");
	check_error("workspace: {hold: [a/../b]}\n", 1, 20, "workspace.hold[0]");
	check_error("workspace: {holds: []}\n", 1, 13, "unknown key 'holds' in workspace");
}

/* ---- values: limits and units ---- */

static void test_size_units(void **state)
{
	(void)state;
	assert_int_equal(limit_value("memory", "1"), 1);
	assert_int_equal(limit_value("memory", "4096"), 4096);
	assert_int_equal(limit_value("memory", "1K"), UINT64_C(1) << 10);
	assert_int_equal(limit_value("memory", "512M"), UINT64_C(512) << 20);
	assert_int_equal(limit_value("memory", "2G"), UINT64_C(2) << 30);
	assert_int_equal(limit_value("memory", "3T"), UINT64_C(3) << 40);
	assert_int_equal(limit_value("fsize", "7K"), 7 * 1024);
	assert_int_equal(limit_value("tmpfs", "64M"), UINT64_C(64) << 20);
	assert_int_equal(limit_value("output", "10K"), 10240);
	/* the largest accepted size is INT64_MAX bytes */
	assert_int_equal(limit_value("memory", "8388607T"), UINT64_C(8388607) << 40);
	assert_int_equal(limit_value("memory", "9223372036854775807"), INT64_MAX);
}

static void test_size_syntax(void **state)
{
	(void)state;
	check_limit_error("memory", "512m", "limits.memory '512m' is not a valid number (expected bytes or a number with a K, M, G or T suffix");
	check_limit_error("memory", "1.5G", "is not a valid number");
	check_limit_error("memory", "1GB", "is not a valid number");
	check_limit_error("memory", "1KiB", "is not a valid number");
	check_limit_error("memory", "G", "is not a valid number");
	check_limit_error("memory", "-1G", "is not a valid number");
	check_limit_error("tmpfs", "1P", "is not a valid number");
	check_limit_error("output", "\"1M\"", "is a quoted string");
}

static void test_size_overflow(void **state)
{
	(void)state;
	/* 2^24 T = 2^64 bytes: the multiplication overflows */
	check_limit_error("memory", "16777216T", "limits.memory '16777216T' overflows (expected at most 9223372036854775807 bytes)");
	check_limit_error("fsize", "18446744073709551616", "overflows");
	/* 2^23 T = 2^63 bytes: fits uint64 but not the int64 the kernel interfaces take */
	check_limit_error("memory", "8388608T", "limits.memory '8388608T' is out of range (expected 1..9223372036854775807 bytes)");
	check_limit_error("output", "9223372036854775808", "is out of range");
}

static void test_time_units(void **state)
{
	(void)state;
	assert_int_equal(limit_value("wall", "0"), 0);
	assert_int_equal(limit_value("wall", "90"), 90000);
	assert_int_equal(limit_value("wall", "90s"), 90000);
	assert_int_equal(limit_value("wall", "1500ms"), 1500);
	assert_int_equal(limit_value("wall", "2m"), 120000);
	assert_int_equal(limit_value("wall", "3h"), 3u * 3600u * 1000u);
	check_limit_error("wall", "1d", "limits.wall '1d' is not a valid number (expected seconds or a number with an ms, s, m or h suffix");
	check_limit_error("wall", "1.5s", "is not a valid number");
	check_limit_error("wall", "5 s", "is not a valid number");
	check_limit_error("wall", "s", "is not a valid number");
	check_limit_error("wall", "1S", "is not a valid number");
	/* 2^64 / 3600000 is about 5.1e12 hours */
	check_limit_error("wall", "5124095576030432h", "limits.wall '5124095576030432h' overflows");
	check_limit_error("wall", "9223372036854776s", "is out of range (expected 0..9223372036854775807 ms)");
}

static void test_cpu_units(void **state)
{
	(void)state;
	assert_int_equal(limit_value("cpu", "0"), 0);
	assert_int_equal(limit_value("cpu", "0.5"), 500);
	assert_int_equal(limit_value("cpu", "2"), 2000);
	assert_int_equal(limit_value("cpu", "1.25"), 1250);
	assert_int_equal(limit_value("cpu", "0.125"), 125);
	assert_int_equal(limit_value("cpu", "0.001"), 1);
	assert_int_equal(limit_value("cpu", "8192"), 8192000);
	check_limit_error("cpu", "1.2345", "limits.cpu '1.2345' is not a valid number (expected a number of CPUs with at most 3 decimals");
	check_limit_error("cpu", ".5", "is not a valid number");
	check_limit_error("cpu", "5.", "is not a valid number");
	check_limit_error("cpu", "1e3", "is not a valid number");
	check_limit_error("cpu", "00.5", "is not a valid number");
	check_limit_error("cpu", "-0.5", "is not a valid number");
	check_limit_error("cpu", "8192.001", "limits.cpu '8192.001' is out of range (expected 0..8192000 millicpus)");
	check_limit_error("cpu", "18446744073709552", "overflows");
}

static void test_zero_means_none(void **state)
{
	struct pol_policy *p = parse_ok("limits: {cpu: 0, wall: 0, output: 0, nproc: 0}\n");
	(void)state;
	assert_int_equal(p->cpu_millicpus, 0);
	assert_int_equal(p->wall_ms, 0);
	assert_int_equal(p->output_bytes, 0);
	assert_int_equal(p->nproc, 0);
	pol_free(p);
	/* "0K" is still zero */
	assert_int_equal(limit_value("output", "0K"), 0);
	assert_int_equal(limit_value("cpu", "0.000"), 0);
}

static void test_zero_is_an_error(void **state)
{
	(void)state;
	check_limit_error("memory", "0", "limits.memory '0' is out of range (expected 1..");
	check_limit_error("memory", "0G", "is out of range");
	check_limit_error("pids", "0", "limits.pids '0' is out of range (expected 1..4194304)");
	check_limit_error("tmpfs", "0", "limits.tmpfs '0' is out of range");
	check_limit_error("nofile", "0", "limits.nofile '0' is out of range");
	check_limit_error("fsize", "0", "limits.fsize '0' is out of range");
}

static void test_count_ranges(void **state)
{
	(void)state;
	assert_int_equal(limit_value("pids", "4194304"), 4194304);
	assert_int_equal(limit_value("nproc", "4194304"), 4194304);
	assert_int_equal(limit_value("nofile", "2147483584"), 2147483584u);
	check_limit_error("pids", "4194305", "is out of range (expected 1..4194304)");
	check_limit_error("nproc", "4194305", "is out of range (expected 0..4194304)");
	check_limit_error("nofile", "2147483585", "is out of range (expected 1..2147483584)");
	check_limit_error("pids", "18446744073709551616", "overflows");
}

/* ---- namespaces, capabilities, network ---- */

static void test_namespaces(void **state)
{
	struct pol_policy *p = parse_ok("namespaces: {net: false, uts: false, ipc: false, cgroup: false}\n");
	(void)state;
	assert_true(p->namespaces[POL_NS_USER]);
	assert_true(p->namespaces[POL_NS_PID]);
	assert_true(p->namespaces[POL_NS_MOUNT]);
	assert_false(p->namespaces[POL_NS_NET]);
	assert_false(p->namespaces[POL_NS_UTS]);
	assert_false(p->namespaces[POL_NS_IPC]);
	assert_false(p->namespaces[POL_NS_CGROUP]);
	pol_free(p);
	/* left out: the default (true); true for the locked ones is fine */
	p = parse_ok("namespaces: {user: true, net: false}\n");
	assert_true(p->namespaces[POL_NS_UTS]);
	assert_false(p->namespaces[POL_NS_NET]);
	pol_free(p);
}

static void test_namespaces_locked(void **state)
{
	(void)state;
	check_error("namespaces:\n  user: false\n", 2, 9,
		    "namespaces.user cannot be turned off (expected true; warden's isolation is built on it)");
	check_error("namespaces: {net: false, pid: false}\n", 1, 31,
		    "namespaces.pid cannot be turned off (expected true; warden's isolation is built on it)");
	check_error("namespaces: {mount: false}\n", 1, 21,
		    "namespaces.mount cannot be turned off (expected true; warden's isolation is built on it)");
}

static void test_namespaces_values(void **state)
{
	(void)state;
	check_error("namespaces: {net: no}\n", 1, 19,
		    "namespaces.net 'no' is not a boolean (expected true or false)");
	check_error("namespaces: {user: \"true\"}\n", 1, 20, "namespaces.user is a quoted string");
	check_error("namespaces: {time: false}\n", 1, 14,
		    "unknown key 'time' in namespaces (expected one of: user, pid, mount, net, uts, ipc, cgroup)");
	check_error("namespace: {net: false}\n", 1, 1, "unknown key 'namespace' in the top level");
	check_error("namespaces: [net]\n", 1, 13, "namespaces is a sequence (expected a mapping)");
}

static void test_capabilities(void **state)
{
	struct pol_policy *p = parse_ok("capabilities: {keep: [net_bind_service, chown, kill]}\n");
	(void)state;
	assert_int_equal(p->n_caps_keep, 3);
	assert_string_equal(p->caps_keep[0], "net_bind_service");
	assert_string_equal(p->caps_keep[2], "kill");
	assert_null(p->caps_keep[3]);
	pol_free(p);
	p = parse_ok("capabilities: {keep: []}\n");
	assert_int_equal(p->n_caps_keep, 0);
	pol_free(p);
}

#define ALLOWED_CAPS "one of: chown, dac_override, fowner, fsetid, kill, setgid, setuid, net_bind_service, net_broadcast, net_raw, ipc_lock, ipc_owner, sys_pacct, sys_nice, sys_resource, sys_tty_config, mknod, lease, audit_write, audit_read, checkpoint_restore"

static void test_capabilities_refused(void **state)
{
	static const char *const refused[] = {
		"sys_admin", "sys_module", "sys_ptrace", "sys_rawio", "sys_boot", "sys_time",
		"mac_override", "mac_admin", "bpf", "perfmon", "setpcap", "setfcap",
		"linux_immutable", "sys_chroot", "dac_read_search", "syslog", "audit_control",
		"block_suspend", "wake_alarm", "net_admin",
	};
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
		_cleanup_free_ char *y = unit_fmt("capabilities: {keep: [kill, %s]}\n", refused[i]);
		_cleanup_free_ char *msg = unit_fmt("capabilities.keep[1] '%s' would undo the sandbox (expected " ALLOWED_CAPS ")", refused[i]);
		check_error(y, 1, 29, msg);
	}
}

static void test_capabilities_unknown(void **state)
{
	(void)state;
	check_error("capabilities: {keep: [CAP_CHOWN]}\n", 1, 23,
		    "capabilities.keep[0] 'CAP_CHOWN' is not a Linux capability name (expected a lower-case name without CAP_, " ALLOWED_CAPS ")");
	check_error("capabilities: {keep: [Chown]}\n", 1, 23, "'Chown' is not a Linux capability name");
	check_error("capabilities: {keep: [net_bind]}\n", 1, 23, "'net_bind' is not a Linux capability name");
	check_error("capabilities: {keep: [kill, kill]}\n", 1, 29,
		    "capabilities.keep[1] 'kill' repeats an earlier entry");
	check_error("capabilities: {drop: [kill]}\n", 1, 16,
		    "unknown key 'drop' in capabilities (expected one of: keep)");
	check_error("capabilities: [kill]\n", 1, 15, "capabilities is a sequence (expected a mapping)");
}

static void test_network(void **state)
{
	struct pol_policy *p = parse_ok("network: none\n");
	(void)state;
	assert_int_equal(p->network, POL_NET_NONE);
	pol_free(p);
	check_error("network: host\n", 1, 10, "network 'host' is not a network mode (expected none)");
	check_error("network: {mode: none}\n", 1, 10, "network is a mapping (expected none)");
	check_error("network:\n", 1, 9, "network is empty (expected none)");
}

/* ---- filesystem.hide ---- */

static void test_hide_patterns(void **state)
{
	struct pol_policy *p = parse_ok("filesystem:\n"
					"  hide: [.env, \"**/.env\", \"secrets/*.pem\", \"a/**/b?[0-9].key\",\n"
					"         \"[]]x\", \"[!a]\", \"x/**\", \"**/a/**/b\", \"a]\"]\n");
	(void)state;
	assert_int_equal(p->n_hide, 9);
	assert_string_equal(p->hide[0], ".env");
	assert_string_equal(p->hide[1], "**/.env");
	assert_string_equal(p->hide[2], "secrets/*.pem");
	assert_string_equal(p->hide[3], "a/**/b?[0-9].key");
	assert_null(p->hide[9]);
	pol_free(p);
}

static void test_hide_bad(void **state)
{
	static const struct {
		const char *pattern;
		const char *msg;
	} bad[] = {
		{ "/etc/x", "filesystem.hide[0] '/etc/x' is absolute (expected a relative pattern without leading /)" },
		{ "../x", "filesystem.hide[0] '../x' has a '..' component (expected a normalised path without ..)" },
		{ "a/../b", "has a '..' component" },
		{ "./x", "filesystem.hide[0] './x' has a '.' component" },
		{ "a//b", "has an empty component or a trailing /" },
		{ "a/", "has an empty component or a trailing /" },
		{ "\"\"", "has an empty component" },
		{ "\"a[b\"", "filesystem.hide[0] 'a[b' has an unbalanced '[' (expected a character class closed by ] within its component)" },
		{ "\"[]\"", "has an unbalanced '['" },
		{ "\"[!]\"", "has an unbalanced '['" },
		{ "\"a[/]b\"", "has an unbalanced '['" },
		{ "\"a**\"", "filesystem.hide[0] 'a**' has ** inside a component (expected ** only as a whole component, like **/.env)" },
		{ "\"***/x\"", "has ** inside a component" },
		{ "\"**/**/x\"", "filesystem.hide[0] '**/**/x' has ** twice in a row (expected one ** where any number of directories may be)" },
		{ "\"**/a/**/b/**/c/**/d/**/e\"", "has more than 4 ** components (expected at most 4)" },
		{ "\"a\\\\*\"", "filesystem.hide[0] 'a\\x5c*' has a backslash (expected a pattern without escapes)" },
		{ "\"a\\tb\"", "contains a control character" },
	};
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		_cleanup_free_ char *y = unit_fmt("filesystem: {hide: [%s]}\n", bad[i].pattern);
		check_error(y, 1, 21, bad[i].msg);
	}
	check_error("filesystem: {hide: [.env, .env]}\n", 1, 27, "filesystem.hide[1] '.env' repeats an earlier entry");
	check_error("filesystem: {hide: .env}\n", 1, 20, "filesystem.hide is a scalar (expected a sequence");
	check_error("filesystem: {hid: [.env]}\n", 1, 14,
		    "unknown key 'hid' in filesystem (expected one of: binds, etc, protect, allow_create, hide)");
}

static void test_hide_components(void **state)
{
	/* 64 components are fine, 65 are not */
	char pat[2 * 65 + 1];
	size_t o = 0;
	struct pol_policy *p;
	(void)state;
	for (size_t i = 0; i < 64; i++) {
		pat[o++] = i ? '/' : 'a';
		if (i)
			pat[o++] = 'a';
	}
	pat[o] = '\0';
	{
		_cleanup_free_ char *y = unit_fmt("filesystem: {hide: [%s]}\n", pat);
		p = parse_ok(y);
		assert_string_equal(p->hide[0], pat);
		pol_free(p);
	}
	{
		_cleanup_free_ char *y = unit_fmt("filesystem: {hide: [%s/a]}\n", pat);
		check_error(y, 1, 21, "filesystem.hide[0] has more than 64 components (expected at most 64)");
	}
	{
		/* PATH_MAX bytes in long components */
		_cleanup_free_ char *big = malloc(PATH_MAX + 1);
		for (size_t i = 0; i < PATH_MAX; i++)
			big[i] = (i % 200 == 199) ? '/' : 'h';
		big[PATH_MAX] = '\0';
		_cleanup_free_ char *y = unit_fmt("filesystem: {hide: [%s]}\n", big);
		check_error(y, 1, 21, "filesystem.hide[0] is 4096 bytes long (expected less than 4096)");
	}
}

/* ---- seccomp: profile and rules ---- */

static void test_seccomp_profile(void **state)
{
	struct pol_policy *p = parse_ok("seccomp: {profile: default}\n");
	(void)state;
	assert_string_equal(p->seccomp_profile, "default");
	pol_free(p);
	check_error("seccomp: {profile: strict}\n", 1, 20,
		    "seccomp.profile 'strict' is not a seccomp profile (expected default)");
	check_error("seccomp: {profile: ~}\n", 1, 20, "seccomp.profile is empty (expected default)");
}

static void test_seccomp_rules(void **state)
{
	struct pol_policy *p = parse_ok("seccomp:\n"
					"  rules:\n"
					"    - syscall: ioctl\n"
					"      action: deny\n"
					"      args: [{index: 1, op: eq, value: 0x5412}]\n"
					"    - syscall: personality\n"
					"      action: allow\n"
					"      args:\n"
					"        - {index: 0, op: masked_eq, value: 0x8, mask: 0xFF}\n"
					"        - {index: 5, op: ge, value: 18446744073709551615}\n"
					"        - {index: 2, op: ne, value: 0}\n"
					"        - {index: 3, op: lt, value: 10}\n"
					"        - {index: 4, op: le, value: 0x0000000000000000001}\n"
					"        - {index: 1, op: gt, value: 0xffffffffffffffff}\n");
	const struct pol_syscall_rule *r;
	(void)state;
	assert_int_equal(p->n_seccomp_rules, 2);
	r = &p->seccomp_rules[0];
	assert_string_equal(r->name, "ioctl");
	assert_false(r->allow);
	assert_int_equal(r->n_conds, 1);
	assert_int_equal(r->conds[0].index, 1);
	assert_int_equal(r->conds[0].op, POL_CMP_EQ);
	assert_int_equal(r->conds[0].value, 0x5412);
	assert_int_equal(r->conds[0].mask, 0);
	r = &p->seccomp_rules[1];
	assert_string_equal(r->name, "personality");
	assert_true(r->allow);
	assert_int_equal(r->n_conds, 6);
	assert_int_equal(r->conds[0].op, POL_CMP_MASKED_EQ);
	assert_int_equal(r->conds[0].value, 8);
	assert_int_equal(r->conds[0].mask, 0xff);
	assert_int_equal(r->conds[1].index, 5);
	assert_int_equal(r->conds[1].op, POL_CMP_GE);
	assert_true(r->conds[1].value == UINT64_MAX);
	assert_int_equal(r->conds[2].op, POL_CMP_NE);
	assert_int_equal(r->conds[3].op, POL_CMP_LT);
	assert_int_equal(r->conds[4].op, POL_CMP_LE);
	assert_int_equal(r->conds[4].value, 1);
	assert_int_equal(r->conds[5].op, POL_CMP_GT);
	assert_true(r->conds[5].value == UINT64_MAX);
	pol_free(p);
}

/* "seccomp: {rules: [{syscall: s, action: allow, args: [ARGS]}]}" */
static char *rule_yaml(const char *args)
{
	return unit_fmt("seccomp: {rules: [{syscall: s, action: allow, args: [%s]}]}\n", args);
}

/* The column of ARGS in rule_yaml(). */
#define ARGS_COL 54u

static void test_seccomp_rule_args_bad(void **state)
{
	static const struct {
		const char *args;
		unsigned column; /* relative to ARGS_COL */
		const char *msg;
	} bad[] = {
		{ "{index: 0, op: like, value: 1}", 15, "seccomp.rules[0].args[0].op 'like' is not a comparison (expected one of: eq, ne, lt, le, gt, ge, masked_eq)" },
		{ "{index: 7, op: eq, value: 1}", 8, "seccomp.rules[0].args[0].index '7' is out of range (expected 0..5)" },
		{ "{index: 6, op: eq, value: 1}", 8, "seccomp.rules[0].args[0].index '6' is out of range (expected 0..5)" },
		{ "{index: 0, op: eq, value: 1}, {index: 0, op: ne, value: 2}", 38, "seccomp.rules[0].args[1].index 0 repeats args[0] (expected at most one condition per argument)" },
		{ "{index: 0, op: masked_eq, value: 1}", 0, "seccomp.rules[0].args[0] has op masked_eq but no mask (expected a mask for masked_eq)" },
		{ "{index: 0, op: eq, value: 1, mask: 3}", 35, "seccomp.rules[0].args[0].mask is set, but op is eq (expected a mask only with masked_eq)" },
		{ "{index: 0, op: masked_eq, value: 0x10, mask: 0x0f}", 33, "seccomp.rules[0].args[0].value 0x10 has bits outside mask 0xf (expected value & ~mask == 0; the condition could never hold)" },
		{ "{op: eq, value: 1}", 0, "seccomp.rules[0].args[0] has no index (expected a mapping with index, op and value)" },
		{ "{index: 1, value: 1}", 0, "seccomp.rules[0].args[0] has no op" },
		{ "{index: 1, op: eq}", 0, "seccomp.rules[0].args[0] has no value" },
		{ "{index: 0, op: eq, value: -1}", 26, "seccomp.rules[0].args[0].value '-1' is not a valid number (expected a decimal integer or 0x and hex digits, like 0x800)" },
		{ "{index: 0, op: eq, value: 0x}", 26, "is not a valid number" },
		{ "{index: 0, op: eq, value: 0xg}", 26, "is not a valid number" },
		{ "{index: 0, op: eq, value: 0X10}", 26, "is not a valid number" },
		{ "{index: 0, op: eq, value: 010}", 26, "is not a valid number" },
		{ "{index: 0, op: eq, value: 0x10000000000000000}", 26, "seccomp.rules[0].args[0].value '0x10000000000000000' overflows (expected at most 0xffffffffffffffff)" },
		{ "{index: 0, op: eq, value: 18446744073709551616}", 26, "overflows" },
		{ "{index: 0, op: eq, value: \"1\"}", 26, "seccomp.rules[0].args[0].value is a quoted string" },
		{ "{index: 0, op: eq, value: 1, flags: 2}", 29, "unknown key 'flags' in seccomp.rules[0].args[0] (expected one of: index, op, value, mask)" },
		{ "{index: 0, op: eq, value: 1}, {index: 1, op: eq, value: 1}, {index: 2, op: eq, value: 1}, {index: 3, op: eq, value: 1}, {index: 4, op: eq, value: 1}, {index: 5, op: eq, value: 1}, {index: 5, op: eq, value: 1}",
		  180, "seccomp.rules[0].args[6] is a condition too many (expected at most 6, one per argument)" },
		{ "1", 0, "seccomp.rules[0].args[0] is a scalar (expected a mapping)" },
	};
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		_cleanup_free_ char *y = rule_yaml(bad[i].args);
		check_error(y, 1, ARGS_COL + bad[i].column, bad[i].msg);
	}
	check_error("seccomp: {rules: [{syscall: s, action: allow, args: []}]}\n", 1, 53,
		    "seccomp.rules[0].args is empty (expected 1 to 6 conditions; use seccomp.allow or seccomp.deny for a whole syscall)");
}

static void test_seccomp_rule_fields_bad(void **state)
{
	(void)state;
	check_error("seccomp: {rules: [{action: allow, args: [{index: 0, op: eq, value: 1}]}]}\n", 1, 19,
		    "seccomp.rules[0] has no syscall (expected a mapping with syscall, action and args)");
	check_error("seccomp: {rules: [{syscall: s, args: [{index: 0, op: eq, value: 1}]}]}\n", 1, 19,
		    "seccomp.rules[0] has no action");
	check_error("seccomp: {rules: [{syscall: s, action: deny}]}\n", 1, 19, "seccomp.rules[0] has no args");
	check_error("seccomp: {rules: [{syscall: s, action: kill, args: [{index: 0, op: eq, value: 1}]}]}\n", 1, 40,
		    "seccomp.rules[0].action 'kill' is not a rule action (expected allow or deny)");
	check_error("seccomp: {rules: [{syscall: Open, action: deny, args: [{index: 0, op: eq, value: 1}]}]}\n", 1, 29,
		    "seccomp.rules[0].syscall 'Open' is not a syscall name");
	check_error("seccomp: {rules: [{syscall: s, action: deny, arg: []}]}\n", 1, 46,
		    "unknown key 'arg' in seccomp.rules[0] (expected one of: syscall, action, args)");
	check_error("seccomp: {rules: {syscall: s}}\n", 1, 18, "seccomp.rules is a mapping (expected a sequence");
}

static void test_seccomp_rule_conflicts(void **state)
{
	(void)state;
	check_error("seccomp:\n  rules:\n"
		    "    - {syscall: s, action: allow, args: [{index: 0, op: eq, value: 1}]}\n"
		    "    - {syscall: s, action: deny, args: [{index: 0, op: eq, value: 2}]}\n", 4, 17,
		    "seccomp.rules[1] denies 's', which seccomp.rules[0] allows (expected either allow rules or one deny rule per syscall)");
	check_error("seccomp:\n  rules:\n"
		    "    - {syscall: s, action: deny, args: [{index: 0, op: eq, value: 1}]}\n"
		    "    - {syscall: s, action: deny, args: [{index: 1, op: eq, value: 2}]}\n", 4, 17,
		    "seccomp.rules[1] is a second deny rule for 's' (expected one deny rule per syscall; first is seccomp.rules[0])");
	check_error("seccomp:\n  allow: [kcmp]\n"
		    "  rules: [{syscall: kcmp, action: allow, args: [{index: 0, op: eq, value: 1}]}]\n", 3, 21,
		    "seccomp.rules[0] allows 'kcmp', which seccomp.allow allows without conditions (expected a rule that changes something)");
	check_error("seccomp:\n  deny: [chmod]\n"
		    "  rules: [{syscall: chmod, action: deny, args: [{index: 1, op: eq, value: 0x1ff}]}]\n", 3, 21,
		    "seccomp.rules[0] denies 'chmod', which seccomp.deny denies without conditions (expected a rule that changes something)");
	check_error("seccomp:\n  deny: [chmod]\n"
		    "  rules: [{syscall: chmod, action: allow, args: [{index: 1, op: eq, value: 0x1ff}]}]\n", 3, 21,
		    "seccomp.rules[0] allows 'chmod', which seccomp.deny denies without conditions (expected a syscall either in seccomp.deny or in allow rules)");
	/* allow rules next to an outright allow of another syscall, and deny rule next to allow */
	struct pol_policy *p = parse_ok("seccomp:\n  allow: [kcmp]\n"
					"  rules: [{syscall: kcmp, action: deny, args: [{index: 0, op: eq, value: 1}]}]\n");
	pol_free(p);
}

/* ---- unsafe and binds ---- */

static void test_unsafe_new_names(void **state)
{
	struct pol_policy *p = parse_ok("unsafe: [bind-host-root, bind-container-socket, bind-kernel-fs]\n");
	(void)state;
	assert_int_equal(p->unsafe, POL_UNSAFE_BIND_HOST_ROOT | POL_UNSAFE_BIND_SOCKET |
					    POL_UNSAFE_BIND_KERNEL_FS);
	pol_free(p);
	assert_string_equal(pol_unsafe_name(POL_UNSAFE_NO_CGROUP), "no-cgroup");
	assert_string_equal(pol_unsafe_name(POL_UNSAFE_IO_URING), "io_uring");
	assert_string_equal(pol_unsafe_name(POL_UNSAFE_BIND_HOST_ROOT), "bind-host-root");
	assert_string_equal(pol_unsafe_name(POL_UNSAFE_BIND_SOCKET), "bind-container-socket");
	assert_string_equal(pol_unsafe_name(POL_UNSAFE_BIND_KERNEL_FS), "bind-kernel-fs");
	assert_null(pol_unsafe_name(1u << 31));
	assert_null(pol_unsafe_name(POL_UNSAFE_NO_CGROUP | POL_UNSAFE_IO_URING));
}

static void test_names(void **state)
{
	static const char *const ns[] = { "user", "pid", "mount", "net", "uts", "ipc", "cgroup" };
	(void)state;
	for (int i = 0; i < POL_NS_N; i++)
		assert_string_equal(pol_ns_name((enum pol_ns)i), ns[i]);
	assert_null(pol_ns_name(POL_NS_N));
	assert_string_equal(pol_cmp_op_name(POL_CMP_EQ), "eq");
	assert_string_equal(pol_cmp_op_name(POL_CMP_MASKED_EQ), "masked_eq");
	assert_null(pol_cmp_op_name((enum pol_cmp_op)99));
	assert_string_equal(pol_network_name(POL_NET_NONE), "none");
}

static void test_bind_host_root(void **state)
{
	struct pol_policy *p;
	(void)state;
	check_error("filesystem: {binds: [{src: /, dst: /host}]}\n", 1, 28,
		    "filesystem.binds[0].src '/' would expose the whole host (expected a narrower path, or unsafe: [bind-host-root])");
	/* unsafe applies to the whole file, wherever it stands */
	p = parse_ok("filesystem: {binds: [{src: /, dst: /host}]}\nunsafe: [bind-host-root]\n");
	assert_string_equal(p->binds[0].src, "/");
	assert_int_equal(p->unsafe, POL_UNSAFE_BIND_HOST_ROOT);
	pol_free(p);
	/* the other keys do not allow it */
	check_error("unsafe: [bind-kernel-fs, bind-container-socket]\nfilesystem: {binds: [{src: /, dst: /host}]}\n",
		    2, 28, "unsafe: [bind-host-root]");
}

/* pol_host_path_risk: every tree, what lies below it, near misses and malformed paths. */
static void test_host_path_risk(void **state)
{
	static const struct {
		const char *path;
		enum pol_host_path risk;
		size_t top; /* length of the deciding tree */
	} cases[] = {
		{ "/", POL_HOST_PATH_ROOT, 1 },
		{ "/etc", POL_HOST_PATH_SYSTEM, 4 },
		{ "/etc/ssl/certs", POL_HOST_PATH_SYSTEM, 4 },
		{ "/usr", POL_HOST_PATH_SYSTEM, 4 },
		{ "/usr/share", POL_HOST_PATH_SYSTEM, 4 },
		{ "/usr/local/src/proj", POL_HOST_PATH_SYSTEM, 4 },
		{ "/bin", POL_HOST_PATH_SYSTEM, 4 },
		{ "/sbin", POL_HOST_PATH_SYSTEM, 5 },
		{ "/sbin/x", POL_HOST_PATH_SYSTEM, 5 },
		{ "/boot", POL_HOST_PATH_SYSTEM, 5 },
		{ "/boot/efi", POL_HOST_PATH_SYSTEM, 5 },
		/* /lib* is every top-level name starting with "lib" */
		{ "/lib", POL_HOST_PATH_SYSTEM, 4 },
		{ "/lib/x86_64-linux-gnu", POL_HOST_PATH_SYSTEM, 4 },
		{ "/lib32", POL_HOST_PATH_SYSTEM, 6 },
		{ "/lib64", POL_HOST_PATH_SYSTEM, 6 },
		{ "/libx32/x", POL_HOST_PATH_SYSTEM, 7 },
		{ "/libfoo", POL_HOST_PATH_SYSTEM, 7 },
		{ "/lib.usr-is-merged", POL_HOST_PATH_SYSTEM, 18 },
		{ "/proc", POL_HOST_PATH_KERNEL, 5 },
		{ "/proc/1/root", POL_HOST_PATH_KERNEL, 5 },
		{ "/sys", POL_HOST_PATH_KERNEL, 4 },
		{ "/sys/fs/cgroup", POL_HOST_PATH_KERNEL, 4 },
		{ "/dev", POL_HOST_PATH_KERNEL, 4 },
		{ "/dev/shm/x", POL_HOST_PATH_KERNEL, 4 },
		{ "/run", POL_HOST_PATH_RUNTIME, 4 },
		{ "/run/user/1000/proj", POL_HOST_PATH_RUNTIME, 4 },
		/* /var and /home themselves, not what is below them */
		{ "/var", POL_HOST_PATH_SHARED, 4 },
		{ "/home", POL_HOST_PATH_SHARED, 5 },
		{ "/var/tmp/x", POL_HOST_PATH_OK, 4 },
		{ "/var/lib/proj", POL_HOST_PATH_OK, 4 },
		{ "/home/u", POL_HOST_PATH_OK, 5 },
		{ "/home/u/proj", POL_HOST_PATH_OK, 5 },
		/* near misses */
		{ "/usr2", POL_HOST_PATH_OK, 5 },
		{ "/etcetera", POL_HOST_PATH_OK, 9 },
		{ "/etc2/x", POL_HOST_PATH_OK, 5 },
		{ "/binaries", POL_HOST_PATH_OK, 9 },
		{ "/sbinx", POL_HOST_PATH_OK, 6 },
		{ "/bootstrap", POL_HOST_PATH_OK, 10 },
		{ "/li", POL_HOST_PATH_OK, 3 },
		{ "/Lib", POL_HOST_PATH_OK, 4 },
		{ "/ETC", POL_HOST_PATH_OK, 4 },
		{ "/proc2", POL_HOST_PATH_OK, 6 },
		{ "/system", POL_HOST_PATH_OK, 7 },
		{ "/devices", POL_HOST_PATH_OK, 8 },
		{ "/runner/x", POL_HOST_PATH_OK, 7 },
		{ "/varx", POL_HOST_PATH_OK, 5 },
		{ "/homes", POL_HOST_PATH_OK, 6 },
		{ "/tmp", POL_HOST_PATH_OK, 4 },
		{ "/tmp/proj", POL_HOST_PATH_OK, 4 },
		{ "/tmp/etc", POL_HOST_PATH_OK, 4 },
		{ "/srv/usr", POL_HOST_PATH_OK, 4 },
		{ "/root", POL_HOST_PATH_OK, 5 },
		/* not absolute and normalised: never OK */
		{ "", POL_HOST_PATH_INVALID, 0 },
		{ "etc", POL_HOST_PATH_INVALID, 0 },
		{ "./etc", POL_HOST_PATH_INVALID, 0 },
		{ "//etc", POL_HOST_PATH_INVALID, 0 },
		{ "/etc/", POL_HOST_PATH_INVALID, 0 },
		{ "/tmp//x", POL_HOST_PATH_INVALID, 0 },
		{ "/.", POL_HOST_PATH_INVALID, 0 },
		{ "/tmp/./x", POL_HOST_PATH_INVALID, 0 },
		{ "/tmp/..", POL_HOST_PATH_INVALID, 0 },
		{ "/tmp/../etc", POL_HOST_PATH_INVALID, 0 },
		{ "/..", POL_HOST_PATH_INVALID, 0 },
	};
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		size_t top = 12345;
		enum pol_host_path got = pol_host_path_risk(cases[i].path, &top);
		if (got != cases[i].risk)
			fail_msg("'%s': class %d, expected %d", cases[i].path, (int)got,
				 (int)cases[i].risk);
		/* left alone for an invalid path */
		assert_int_equal(top, cases[i].risk == POL_HOST_PATH_INVALID ? 12345 : cases[i].top);
		assert_int_equal(pol_host_path_risk(cases[i].path, NULL), cases[i].risk);
	}
	assert_int_equal(pol_host_path_risk(NULL, NULL), POL_HOST_PATH_INVALID);

	/* the length bound: PATH_MAX counts the NUL */
	char long_path[PATH_MAX + 1];
	memset(long_path, 'a', sizeof(long_path));
	for (size_t i = 0; i < sizeof(long_path); i += 200)
		long_path[i] = '/';
	long_path[PATH_MAX - 1] = '\0';
	assert_int_equal(pol_host_path_risk(long_path, NULL), POL_HOST_PATH_OK);
	memcpy(long_path, "/usr/", 5);
	assert_int_equal(pol_host_path_risk(long_path, NULL), POL_HOST_PATH_SYSTEM);
	long_path[PATH_MAX - 1] = 'a';
	long_path[PATH_MAX] = '\0';
	assert_int_equal(pol_host_path_risk(long_path, NULL), POL_HOST_PATH_INVALID);

	/* Binds share the classifier for src '/' alone, with its message unchanged... */
	struct pol_policy *p = sentinel;
	struct pol_diag d;
	static const char root_bind[] = "filesystem: {binds: [{src: /, dst: /host}]}\n";
	memset(&d, 0, sizeof(d));
	int r = pol_parse(TEST_FILE, root_bind, strlen(root_bind), &p, &d);
	unit_assert_diag(r, &d, -EINVAL, TEST_FILE, 1, 28,
			 "filesystem.binds[0].src '/' would expose the whole host (expected a narrower path, or unsafe: [bind-host-root])",
			 UNIT_MSG_EXACT);
	assert_ptr_equal(p, sentinel);
	/* ...which workspace-anywhere does not lift */
	check_error("unsafe: [workspace-anywhere]\nfilesystem: {binds: [{src: /, dst: /host}]}\n", 2,
		    28, "unsafe: [bind-host-root]");
	/* and the other classes stay allowed as bind sources */
	p = parse_ok("filesystem: {binds: [{src: /usr, dst: /usr}, {src: /etc/ssl, dst: /opt/ssl},"
		     " {src: /lib64, dst: /lib64}, {src: /run/user, dst: /r}, {src: /home, dst: /h}]}\n");
	assert_int_equal(p->n_binds, 5);
	pol_free(p);
}

static void test_bind_kernel_fs(void **state)
{
	static const struct {
		const char *path, *tree;
	} src[] = {
		{ "/proc", "/proc" }, { "/proc/self", "/proc" }, { "/sys", "/sys" },
		{ "/sys/fs/cgroup", "/sys" }, { "/dev", "/dev" }, { "/dev/dri", "/dev" },
	}, dst[] = {
		{ "/proc", "/proc" }, { "/proc/sys", "/proc" }, { "/proc/1/root", "/proc" },
		{ "/sys", "/sys" }, { "/sys/fs/cgroup", "/sys" }, { "/dev", "/dev" },
		{ "/dev/shm", "/dev" }, { "/dev/null", "/dev" },
	};
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(src); i++) {
		_cleanup_free_ char *y = unit_fmt("filesystem: {binds: [{src: %s, dst: /host}]}\n", src[i].path);
		_cleanup_free_ char *ok = unit_fmt("unsafe: [bind-kernel-fs]\nfilesystem: {binds: [{src: %s, dst: /host}]}\n", src[i].path);
		_cleanup_free_ char *msg = unit_fmt("filesystem.binds[0].src '%s' would expose the host's %s (expected a path outside /proc, /dev and /sys, or unsafe: [bind-kernel-fs])",
					       src[i].path, src[i].tree);
		check_error(y, 1, 28, msg);
		pol_free(parse_ok(ok));
	}
	for (size_t i = 0; i < ELEMENTSOF(dst); i++) {
		_cleanup_free_ char *y = unit_fmt("filesystem: {binds: [{src: /srv, dst: %s}]}\n", dst[i].path);
		_cleanup_free_ char *ok = unit_fmt("filesystem: {binds: [{src: /srv, dst: %s}]}\nunsafe: [bind-kernel-fs]\n", dst[i].path);
		_cleanup_free_ char *msg = unit_fmt("filesystem.binds[0].dst '%s': bind target would cover a guarantee, the sandbox's own %s (expected a path outside /proc, /dev and /sys, or unsafe: [bind-kernel-fs])",
					       dst[i].path, dst[i].tree);
		check_error(y, 1, 39, msg);
		pol_free(parse_ok(ok));
	}
}

static void test_bind_always_refused(void **state)
{
	static const char *const dst[] = { "/", "/tmp", "/workspace", "/etc", "/etc/passwd", "/etc/group" };
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(dst); i++) {
		_cleanup_free_ char *y = unit_fmt("unsafe: [bind-host-root, bind-container-socket, bind-kernel-fs]\n"
					     "filesystem: {binds: [{src: /srv, dst: %s}]}\n", dst[i]);
		_cleanup_free_ char *msg = unit_fmt("filesystem.binds[0].dst '%s': bind target would cover a guarantee (expected a path other than /, /tmp, /workspace, /etc, /etc/passwd and /etc/group)", dst[i]);
		check_error(y, 2, 39, msg);
	}
}

static void test_bind_container_socket(void **state)
{
	static const char *const sockets[] = {
		"/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
		"/run/podman/podman.sock", "/var/run/containerd/containerd.sock",
		"/home/u/.docker/run/docker.sock", "/run/user/1000/podman/podman.sock", "/srv/mydocker.sock",
	};
	static const struct {
		const char *dir, *socket;
	} dirs[] = {
		{ "/run", "/run/docker.sock" }, { "/var/run", "/var/run/docker.sock" },
		{ "/var", "/var/run/docker.sock" }, { "/run/containerd", "/run/containerd/containerd.sock" },
		{ "/run/podman", "/run/podman/podman.sock" },
	};
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(sockets); i++) {
		_cleanup_free_ char *y = unit_fmt("filesystem: {binds: [{src: %s, dst: /s}]}\n", sockets[i]);
		_cleanup_free_ char *ok = unit_fmt("filesystem: {binds: [{src: %s, dst: /s}]}\nunsafe: [bind-container-socket]\n", sockets[i]);
		_cleanup_free_ char *msg = unit_fmt("filesystem.binds[0].src '%s' is a container runtime socket, which controls the host (expected another path, or unsafe: [bind-container-socket])", sockets[i]);
		check_error(y, 1, 28, msg);
		pol_free(parse_ok(ok));
	}
	for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
		_cleanup_free_ char *y = unit_fmt("filesystem: {binds: [{src: %s, dst: /s}]}\n", dirs[i].dir);
		_cleanup_free_ char *ok = unit_fmt("unsafe: [bind-container-socket]\nfilesystem: {binds: [{src: %s, dst: /s}]}\n", dirs[i].dir);
		_cleanup_free_ char *msg = unit_fmt("filesystem.binds[0].src '%s' holds the container runtime socket %s (expected a narrower path, or unsafe: [bind-container-socket])", dirs[i].dir, dirs[i].socket);
		check_error(y, 1, 28, msg);
		pol_free(parse_ok(ok));
	}
	/* near misses are fine */
	pol_free(parse_ok("filesystem: {binds: [{src: /run/user, dst: /a}, {src: /var/lib, dst: /b}, {src: /srv/docker.socket, dst: /c}]}\n"));
}

static void test_unsafe_dropped_keeps_binds_safe(void **state)
{
	(void)state;
	/* a file that drops the weakening a bind of the same file needs: refused at the bind */
	check_error("filesystem: {binds: [{src: /proc, dst: /p}]}\nunsafe: [io_uring]\n", 1, 28,
		    "unsafe: [bind-kernel-fs]");
}

/* ---- relative bind sources ---- */

static struct pol_policy *parse_file_ok(const char *path, const char *yaml)
{
	struct pol_policy *p = NULL;
	struct pol_diag d = { 0 };
	int r = pol_parse_file(path, yaml, strlen(yaml), NULL, NULL, &p, &d);
	unit_assert_parsed(r, &d);
	return p;
}

static void check_file_error(const char *path, const char *yaml, unsigned line, unsigned column,
			     const char *msg)
{
	struct pol_policy *p = sentinel;
	struct pol_diag d = { 0 };
	int r = pol_parse_file(path, yaml, strlen(yaml), NULL, NULL, &p, &d);
	unit_assert_diag(r, &d, -EINVAL, path, line, column, msg, UNIT_MSG_EXACT);
	assert_ptr_equal(p, sentinel);
}

static void test_bind_relative_src(void **state)
{
	struct pol_policy *p = parse_file_ok("/home/u/proj/warden.yaml",
					     "filesystem:\n"
					     "  binds:\n"
					     "    - {src: tools, dst: /opt/tools}\n"
					     "    - {src: ./cache/x, dst: /opt/cache}\n"
					     "    - {src: a/./b/., dst: /opt/ab}\n"
					     "    - {src: ., dst: /opt/proj}\n"
					     "    - {src: /abs, dst: /opt/abs}\n");
	(void)state;
	assert_string_equal(p->binds[0].src, "/home/u/proj/tools");
	assert_string_equal(p->binds[1].src, "/home/u/proj/cache/x");
	assert_string_equal(p->binds[2].src, "/home/u/proj/a/b");
	assert_string_equal(p->binds[3].src, "/home/u/proj");
	assert_string_equal(p->binds[4].src, "/abs");
	pol_free(p);
	/* a file in / */
	p = parse_file_ok("/p.yaml", "filesystem: {binds: [{src: srv/x, dst: /x}]}\n");
	assert_string_equal(p->binds[0].src, "/srv/x");
	pol_free(p);
}

static void test_bind_relative_src_bad(void **state)
{
	(void)state;
	check_file_error("/home/u/p.yaml", "filesystem: {binds: [{src: ../x, dst: /x}]}\n", 1, 28,
			 "filesystem.binds[0].src '../x' has a '..' component (expected a path below the policy file's directory, or an absolute one)");
	check_file_error("/home/u/p.yaml", "filesystem: {binds: [{src: a/../../x, dst: /x}]}\n", 1, 28,
			 "filesystem.binds[0].src 'a/../../x' has a '..' component (expected a path below the policy file's directory, or an absolute one)");
	check_file_error("/home/u/p.yaml", "filesystem: {binds: [{src: a//b, dst: /x}]}\n", 1, 28,
			 "filesystem.binds[0].src 'a//b' has an empty component or a trailing / (expected a normalised path)");
	check_file_error("/home/u/p.yaml", "filesystem: {binds: [{src: a/, dst: /x}]}\n", 1, 28,
			 "filesystem.binds[0].src 'a/' has an empty component or a trailing / (expected a normalised path)");
	check_file_error("/home/u/p.yaml", "filesystem: {binds: [{src: \"\", dst: /x}]}\n", 1, 28,
			 "filesystem.binds[0].src '' has an empty component or a trailing / (expected a normalised path)");
	/* no usable location: a relative name, or one that is not normalised */
	check_file_error("p.yaml", "filesystem: {binds: [{src: x, dst: /x}]}\n", 1, 28,
			 "filesystem.binds[0].src 'x' is relative, and 'p.yaml' is not a normalised absolute file path to resolve it against (expected a path starting with /)");
	check_file_error("/a/../p.yaml", "filesystem: {binds: [{src: x, dst: /x}]}\n", 1, 28,
			 "filesystem.binds[0].src 'x' is relative, and '/a/../p.yaml' is not a normalised absolute file path to resolve it against (expected a path starting with /)");
	/* resolved paths go through the same checks as absolute ones */
	check_file_error("/p.yaml", "filesystem: {binds: [{src: ., dst: /x}]}\n", 1, 28,
			 "filesystem.binds[0].src '/' would expose the whole host (expected a narrower path, or unsafe: [bind-host-root])");
	check_file_error("/p.yaml", "filesystem: {binds: [{src: proc/1, dst: /x}]}\n", 1, 28,
			 "filesystem.binds[0].src '/proc/1' would expose the host's /proc (expected a path outside /proc, /dev and /sys, or unsafe: [bind-kernel-fs])");
	check_file_error("/run/p.yaml", "filesystem: {binds: [{src: docker.sock, dst: /x}]}\n", 1, 28,
			 "filesystem.binds[0].src '/run/docker.sock' is a container runtime socket, which controls the host (expected another path, or unsafe: [bind-container-socket])");
}

static void test_bind_relative_src_length(void **state)
{
	/* "/d/" + 4092 bytes = 4095: fine; one more resolves past PATH_MAX */
	_cleanup_free_ char *rel = malloc(PATH_MAX);
	(void)state;
	for (size_t i = 0; i < PATH_MAX - 4; i++)
		rel[i] = (i % 200 == 199) ? '/' : 'r';
	rel[PATH_MAX - 5] = 'r';
	rel[PATH_MAX - 4] = '\0';
	{
		_cleanup_free_ char *y =
			unit_fmt("filesystem: {binds: [{src: %s, dst: /x}]}\n", rel);
		struct pol_policy *p = parse_file_ok("/d/p.yaml", y);
		assert_int_equal(strlen(p->binds[0].src), PATH_MAX - 1);
		pol_free(p);
	}
	{
		_cleanup_free_ char *y =
			unit_fmt("filesystem: {binds: [{src: %sr, dst: /x}]}\n", rel);
		struct pol_policy *p = sentinel;
		struct pol_diag d = { 0 };
		assert_int_equal(pol_parse_file("/d/p.yaml", y, strlen(y), NULL, NULL, &p, &d), -EINVAL);
		assert_int_equal(d.column, 28);
		assert_non_null(strstr(d.message, "resolves to a path of 4096 bytes (expected less than 4096)"));
	}
}

static void test_default_has_no_location(void **state)
{
	struct pol_policy *p = parse_ok("{}\n");
	(void)state;
	/* the default layer is recorded first, the file last */
	assert_int_equal(p->n_sources, 2);
	assert_string_equal(p->sources[0], "<default>");
	assert_string_equal(p->sources[1], TEST_FILE);
	assert_null(p->sources[2]);
	pol_free(p);
	/* the default handed in as a file is one layer */
	{
		size_t len = 0;
		const char *y = pol_default_yaml(&len);
		assert_int_equal(pol_parse("<default>", y, len, &p, NULL), 0);
		assert_int_equal(p->n_sources, 1);
		pol_free(p);
	}
}

/* ---- extends ---- */

/* A loader over a fixed table of in-memory files. */
struct mem_file {
	const char *path;
	const char *text;
};

struct mem_fs {
	const struct mem_file *files;
	size_t n_files;
	int fail_with;   /* non-zero: every load fails with this */
	size_t oversize; /* non-zero: every load returns this many bytes of '#' */
	unsigned loads;
};

static int mem_load(void *ctx, const char *abs_path, char **out_buf, size_t *out_len)
{
	struct mem_fs *fs = ctx;
	fs->loads++;
	assert_true(abs_path[0] == '/');
	if (fs->fail_with)
		return fs->fail_with;
	if (fs->oversize) {
		char *b = malloc(fs->oversize);
		assert_non_null(b);
		memset(b, '#', fs->oversize);
		*out_buf = b;
		*out_len = fs->oversize;
		return 0;
	}
	for (size_t i = 0; i < fs->n_files; i++) {
		if (strcmp(fs->files[i].path, abs_path))
			continue;
		*out_buf = strdup(fs->files[i].text);
		assert_non_null(*out_buf);
		*out_len = strlen(fs->files[i].text);
		return 0;
	}
	return -ENOENT;
}

static struct pol_policy *parse_mem_ok(struct mem_fs *fs, const char *path, const char *yaml)
{
	struct pol_policy *p = NULL;
	struct pol_diag d = { 0 };
	int r = pol_parse_file(path, yaml, strlen(yaml), mem_load, fs, &p, &d);
	unit_assert_parsed(r, &d);
	return p;
}

static void check_mem_error(struct mem_fs *fs, const char *path, const char *yaml, int err,
			    const char *file, unsigned line, unsigned column, const char *msg)
{
	struct pol_policy *p = sentinel;
	struct pol_diag d = { 0 };
	int r = pol_parse_file(path, yaml, strlen(yaml), mem_load, fs, &p, &d);
	unit_assert_diag(r, &d, err, file, line, column, msg, UNIT_MSG_EXACT);
	assert_ptr_equal(p, sentinel);
}

static void test_extends_default(void **state)
{
	struct pol_policy *p = parse_ok("extends: default\nhostname: box\n");
	(void)state;
	assert_string_equal(p->hostname, "box");
	assert_int_equal(p->uid, 1000);
	assert_int_equal(p->n_sources, 2);
	assert_string_equal(p->sources[0], "<default>");
	assert_string_equal(p->sources[1], TEST_FILE);
	pol_free(p);
	/* wherever it stands in the file */
	p = parse_ok("hostname: box\nextends: default\n");
	assert_string_equal(p->hostname, "box");
	pol_free(p);
}

static void test_extends_without_loader(void **state)
{
	(void)state;
	check_error("extends: base.yaml\n", 1, 10,
		    "extends 'base.yaml' names a file, and this policy is parsed without file access (expected default)");
	check_error("extends: /etc/warden/base.yaml\n", 1, 10, "names a file, and this policy is parsed without file access");
}

static void test_extends_values(void **state)
{
	struct mem_fs fs = { 0 };
	(void)state;
	check_mem_error(&fs, "/p/my.yaml", "extends: [a.yaml]\n", -EINVAL, "/p/my.yaml", 1, 10,
			"extends is a sequence (expected default or the path of a policy file)");
	check_mem_error(&fs, "/p/my.yaml", "extends:\n", -EINVAL, "/p/my.yaml", 1, 9,
			"extends is empty (expected default or the path of a policy file)");
	check_mem_error(&fs, "/p/my.yaml", "extends: \"\"\n", -EINVAL, "/p/my.yaml", 1, 10,
			"extends '' has an empty component or a trailing / (expected a normalised path)");
	check_mem_error(&fs, "/p/my.yaml", "extends: ../base.yaml\n", -EINVAL, "/p/my.yaml", 1, 10,
			"extends '../base.yaml' has a '..' component (expected a path below the policy file's directory, or an absolute one)");
	check_mem_error(&fs, "/p/my.yaml", "extends: /etc/../base.yaml\n", -EINVAL, "/p/my.yaml", 1, 10,
			"extends '/etc/../base.yaml' has a '..' component (expected a normalised path without ..)");
	check_mem_error(&fs, "my.yaml", "extends: base.yaml\n", -EINVAL, "my.yaml", 1, 10,
			"extends 'base.yaml' is relative, and 'my.yaml' is not a normalised absolute file path to resolve it against (expected a path starting with /)");
	check_mem_error(&fs, "/p/my.yaml", "extends: default\nhostname: x\nextends: default\n", -EINVAL,
			"/p/my.yaml", 3, 1,
			"duplicate key 'extends' in the top level (expected each key once; first at line 1)");
	check_mem_error(&fs, "/p/my.yaml", "unsafe: []\nunsafe: [io_uring]\n", -EINVAL, "/p/my.yaml", 2, 1,
			"duplicate key 'unsafe' in the top level (expected each key once; first at line 1)");
	check_mem_error(&fs, "/p/my.yaml", "extend: default\n", -EINVAL, "/p/my.yaml", 1, 1,
			"unknown key 'extend' in the top level (expected one of: extends, user, hostname, filesystem, workspace, namespaces, capabilities, network, env, seccomp, limits, unsafe)");
	assert_int_equal(fs.loads, 0);
}

static void test_extends_chain(void **state)
{
	static const struct mem_file files[] = {
		{ "/etc/warden/base.yaml", "extends: default\nhostname: base\nlimits: {memory: 8G, pids: 99}\nenv: {pass: [TERM, HOME]}\n" },
		{ "/etc/warden/team.yaml", "extends: base.yaml\nlimits: {pids: 50}\nunsafe: [io_uring]\n" },
	};
	struct mem_fs fs = { files, ELEMENTSOF(files), 0, 0, 0 };
	struct pol_policy *p = parse_mem_ok(&fs, "/home/u/my.yaml",
					    "extends: /etc/warden/team.yaml\nhostname: mine\n");
	(void)state;
	assert_int_equal(fs.loads, 2);
	assert_string_equal(p->hostname, "mine");          /* the file wins */
	assert_int_equal(p->pids, 50);                      /* team over base */
	assert_int_equal(p->memory_bytes, UINT64_C(8) << 30); /* base over the default */
	assert_int_equal(p->nofile, 4096);                  /* the default */
	assert_int_equal(p->n_env_pass, 2);
	assert_int_equal(p->unsafe, POL_UNSAFE_IO_URING);
	assert_int_equal(p->n_sources, 4);
	assert_string_equal(p->sources[0], "<default>");
	assert_string_equal(p->sources[1], "/etc/warden/base.yaml");
	assert_string_equal(p->sources[2], "/etc/warden/team.yaml");
	assert_string_equal(p->sources[3], "/home/u/my.yaml");
	assert_null(p->sources[4]);
	pol_free(p);
}

static void test_extends_relative(void **state)
{
	static const struct mem_file files[] = {
		{ "/w/policies/sub/base.yaml", "extends: ./inner/core.yaml\nfilesystem: {binds: [{src: tools, dst: /opt/tools}]}\n" },
		{ "/w/policies/sub/inner/core.yaml", "hostname: core\nfilesystem: {binds: [{src: ., dst: /opt/core}]}\n" },
	};
	struct mem_fs fs = { files, ELEMENTSOF(files), 0, 0, 0 };
	struct pol_policy *p = parse_mem_ok(&fs, "/w/policies/my.yaml", "extends: sub/base.yaml\n");
	(void)state;
	assert_string_equal(p->hostname, "core");
	/* each file's relative paths resolve against its own directory */
	assert_int_equal(p->n_binds, 1);
	assert_string_equal(p->binds[0].src, "/w/policies/sub/tools");
	assert_string_equal(p->sources[1], "/w/policies/sub/inner/core.yaml");
	assert_string_equal(p->sources[2], "/w/policies/sub/base.yaml");
	assert_string_equal(p->sources[3], "/w/policies/my.yaml");
	pol_free(p);
}

static void test_extends_error_location(void **state)
{
	static const struct mem_file files[] = {
		{ "/p/base.yaml", "hostname: ok\nlimits:\n  memory: 1X\n" },
		{ "/p/mid.yaml", "extends: base.yaml\n" },
		{ "/p/syntax.yaml", "user: {uid: 1\n" },
	};
	struct mem_fs fs = { files, ELEMENTSOF(files), 0, 0, 0 };
	(void)state;
	check_mem_error(&fs, "/p/my.yaml", "hostname: a\nextends: mid.yaml\n", -EINVAL, "/p/base.yaml",
			3, 11,
			"limits.memory '1X' is not a valid number (expected bytes or a number with a K, M, G or T suffix, like 512M)");
	check_mem_error(&fs, "/p/my.yaml", "extends: syntax.yaml\n", -EINVAL, "/p/syntax.yaml", 2, 1,
			"did not find expected ',' or '}' while parsing a flow mapping (expected valid YAML)");
	/* a file's own errors still come from the file, after what it extends was applied */
	check_mem_error(&fs, "/p/my.yaml", "extends: /p/mid.yaml\nhostname: a_b\n", -EINVAL, "/p/base.yaml",
			3, 11, "limits.memory '1X' is not a valid number (expected bytes or a number with a K, M, G or T suffix, like 512M)");
}

static void test_extends_cycle(void **state)
{
	static const struct mem_file files[] = {
		{ "/p/a.yaml", "extends: b.yaml\n" },
		{ "/p/b.yaml", "hostname: b\nextends: /p/a.yaml\n" },
		{ "/p/self.yaml", "extends: ./self.yaml\n" },
	};
	struct mem_fs fs = { files, ELEMENTSOF(files), 0, 0, 0 };
	(void)state;
	check_mem_error(&fs, "/p/a.yaml", "extends: b.yaml\n", -EINVAL, "/p/b.yaml", 2, 10,
			"extends cycle: /p/a.yaml -> /p/b.yaml -> /p/a.yaml (expected a chain of files that ends at default)");
	check_mem_error(&fs, "/p/self.yaml", "extends: ./self.yaml\n", -EINVAL, "/p/self.yaml", 1, 10,
			"extends cycle: /p/self.yaml -> /p/self.yaml (expected a chain of files that ends at default)");
	/* the cycle need not include the outermost file */
	check_mem_error(&fs, "/p/my.yaml", "extends: a.yaml\n", -EINVAL, "/p/b.yaml", 2, 10,
			"extends cycle: /p/a.yaml -> /p/b.yaml -> /p/a.yaml (expected a chain of files that ends at default)");
}

static void test_extends_depth(void **state)
{
	/* /d/f1.yaml extends f2.yaml ... f9.yaml extends default */
	struct mem_file files[9];
	char *texts[9];
	char *paths[9];
	struct mem_fs fs = { files, ELEMENTSOF(files), 0, 0, 0 };
	struct pol_policy *p;
	(void)state;
	for (size_t i = 0; i < 9; i++) {
		paths[i] = unit_fmt("/d/f%zu.yaml", i + 1);
		texts[i] = i + 1 < 9 ? unit_fmt("extends: f%zu.yaml\nlimits: {pids: %zu}\n", i + 2, i + 1)
				     : unit_fmt("extends: default\nlimits: {pids: 9}\n");
		files[i].path = paths[i];
		files[i].text = texts[i];
	}
	/* 8 files in the chain, counting the first: fine */
	p = parse_mem_ok(&fs, "/d/f2.yaml", texts[1]);
	assert_int_equal(p->pids, 2);
	assert_int_equal(p->n_sources, 9);
	assert_string_equal(p->sources[1], "/d/f9.yaml");
	pol_free(p);
	/* 9: the eighth file's extends is one too many */
	check_mem_error(&fs, "/d/f1.yaml", texts[0], -EINVAL, "/d/f8.yaml", 1, 10,
			"extends 'f9.yaml' makes a chain of more than 8 files (expected at most 8 policy files, counting the first)");
	for (size_t i = 0; i < 9; i++) {
		free(paths[i]);
		free(texts[i]);
	}
}

static void test_extends_loader_errors(void **state)
{
	struct mem_fs fs = { NULL, 0, 0, 0, 0 };
	struct pol_policy *p = sentinel;
	struct pol_diag d = { 0 };
	(void)state;
	check_mem_error(&fs, "/p/my.yaml", "hostname: x\nextends: gone.yaml\n", -EINVAL, "/p/my.yaml", 2, 10,
			"extends 'gone.yaml': '/p/gone.yaml' cannot be read: No such file or directory (expected a readable policy file)");
	fs.fail_with = -EACCES;
	check_mem_error(&fs, "/p/my.yaml", "extends: /srv/x.yaml\n", -EINVAL, "/p/my.yaml", 1, 10,
			"extends '/srv/x.yaml': '/srv/x.yaml' cannot be read: Permission denied (expected a readable policy file)");
	fs.fail_with = -E2BIG;
	check_mem_error(&fs, "/p/my.yaml", "extends: big.yaml\n", -E2BIG, "/p/my.yaml", 1, 10,
			"extends 'big.yaml': '/p/big.yaml' is over 262144 bytes (expected at most 262144 bytes)");
	fs.fail_with = 0;
	fs.oversize = POL_MAX_INPUT_BYTES + 1;
	check_mem_error(&fs, "/p/my.yaml", "extends: big.yaml\n", -E2BIG, "/p/my.yaml", 1, 10,
			"extends 'big.yaml': '/p/big.yaml' is over 262144 bytes (expected at most 262144 bytes)");
	fs.oversize = 0;
	fs.fail_with = -ENOMEM;
	assert_int_equal(pol_parse_file("/p/my.yaml", "extends: x.yaml", 15, mem_load, &fs, &p, &d), -ENOMEM);
	assert_ptr_equal(p, sentinel);
	assert_non_null(strstr(d.message, "out of memory"));
}

static void test_extends_unsafe_layers(void **state)
{
	static const struct mem_file files[] = {
		{ "/p/base.yaml", "filesystem: {binds: [{src: /dev/dri, dst: /dev/dri}]}\nunsafe: [bind-kernel-fs]\n" },
	};
	struct mem_fs fs = { files, ELEMENTSOF(files), 0, 0, 0 };
	struct pol_policy *p;
	(void)state;
	/* inherited binds and inherited unsafe */
	p = parse_mem_ok(&fs, "/p/my.yaml", "extends: base.yaml\nhostname: x\n");
	assert_int_equal(p->unsafe, POL_UNSAFE_BIND_KERNEL_FS);
	pol_free(p);
	/* dropping the weakening an inherited bind needs: refused at the file's unsafe */
	check_mem_error(&fs, "/p/my.yaml", "extends: base.yaml\nunsafe: [io_uring]\n", -EINVAL, "/p/my.yaml", 2, 9,
			"unsafe leaves out bind-kernel-fs, which filesystem.binds[0] (src '/dev/dri', dst '/dev/dri') needs (expected unsafe to name bind-kernel-fs while that bind is in effect)");
	check_mem_error(&fs, "/p/my.yaml", "extends: base.yaml\nfilesystem: {etc: []}\nunsafe: []\n", -EINVAL, "/p/my.yaml", 3, 9,
			"unsafe leaves out bind-kernel-fs, which filesystem.binds[0] (src '/dev/dri', dst '/dev/dri') needs (expected unsafe to name bind-kernel-fs while that bind is in effect)");
	/* replacing the binds as well is fine */
	p = parse_mem_ok(&fs, "/p/my.yaml", "extends: base.yaml\nunsafe: []\nfilesystem: {binds: []}\n");
	assert_int_equal(p->unsafe, 0);
	assert_int_equal(p->n_binds, 0);
	pol_free(p);
}

static void test_extends_unsafe_layers_other_keys(void **state)
{
	static const struct mem_file files[] = {
		{ "/p/root.yaml", "filesystem: {binds: [{src: /, dst: /host}]}\nunsafe: [bind-host-root]\n" },
		{ "/p/sock.yaml", "filesystem: {binds: [{src: /run, dst: /hostrun}]}\nunsafe: [bind-container-socket]\n" },
	};
	struct mem_fs fs = { files, ELEMENTSOF(files), 0, 0, 0 };
	(void)state;
	check_mem_error(&fs, "/p/my.yaml", "extends: root.yaml\nunsafe: [bind-kernel-fs]\n", -EINVAL, "/p/my.yaml", 2, 9,
			"unsafe leaves out bind-host-root, which filesystem.binds[0] (src '/', dst '/host') needs (expected unsafe to name bind-host-root while that bind is in effect)");
	check_mem_error(&fs, "/p/my.yaml", "extends: sock.yaml\nunsafe: [no-cgroup]\n", -EINVAL, "/p/my.yaml", 2, 9,
			"unsafe leaves out bind-container-socket, which filesystem.binds[0] (src '/run', dst '/hostrun') needs (expected unsafe to name bind-container-socket while that bind is in effect)");
}

static void test_extends_seccomp_layers(void **state)
{
	static const struct mem_file files[] = {
		{ "/p/base.yaml", "seccomp: {rules: [{syscall: kcmp, action: allow, args: [{index: 0, op: eq, value: 1}]}]}\n" },
	};
	struct mem_fs fs = { files, ELEMENTSOF(files), 0, 0, 0 };
	(void)state;
	/* a later layer's list that contradicts an inherited rule: refused at the list entry */
	check_mem_error(&fs, "/p/my.yaml", "extends: base.yaml\nseccomp:\n  deny: [chmod, kcmp]\n", -EINVAL,
			"/p/my.yaml", 3, 17,
			"seccomp.deny[1] 'kcmp' denies what seccomp.rules[0] allows under conditions (expected a syscall either in seccomp.deny or in allow rules)");
}

/* ---- printing ---- */

static void check_round_trip(const struct pol_policy *p)
{
	_cleanup_free_ char *yaml = NULL, *again = NULL;
	struct pol_policy *q = NULL;
	struct pol_diag d = { 0 };
	int r;

	assert_int_equal(pol_to_yaml(p, &yaml), 0);
	r = pol_parse("printed.yaml", yaml, strlen(yaml), &q, &d);
	if (r != 0)
		print_error("re-parse failed at %u:%u: %s\n%s\n", d.line, d.column, d.message, yaml);
	assert_int_equal(r, 0);
	assert_true(pol_equal(p, q));
	/* printing is stable: the printed policy prints the same body */
	assert_int_equal(pol_to_yaml(q, &again), 0);
	assert_string_equal(strstr(yaml, "\nuser:"), strstr(again, "\nuser:"));
	pol_free(q);
}

static void test_yaml_round_trip_default(void **state)
{
	struct pol_policy *p = parse_ok("{}\n");
	_cleanup_free_ char *yaml = NULL;
	(void)state;
	check_round_trip(p);
	assert_int_equal(pol_to_yaml(p, &yaml), 0);
	/* every section, in the default's order, with readable units */
	assert_non_null(strstr(yaml, "# The effective policy. Sources, outermost last:\n#   <default>\n#   test.yaml\n"));
	assert_non_null(strstr(yaml, "\nuser:\n  uid: 1000\n"));
	assert_non_null(strstr(yaml, "  host_ids: {base: 2000000000, count: 65536}\n"));
	assert_non_null(strstr(yaml, "  - {src: /lib64, dst: /lib64, mode: ro, optional: true}\n"));
	assert_non_null(strstr(yaml, "namespaces:\n  user: true\n  pid: true\n"));
	assert_non_null(strstr(yaml, "capabilities:\n  keep: []\nnetwork: none\n"));
	assert_non_null(strstr(yaml, "  memory: 4G\n"));
	assert_non_null(strstr(yaml, "  wall: 0\n"));
	assert_non_null(strstr(yaml, "\nunsafe: []\n"));
	assert_true(strstr(yaml, "\nuser:") < strstr(yaml, "\nhostname:"));
	assert_true(strstr(yaml, "\nhostname:") < strstr(yaml, "\nfilesystem:"));
	assert_true(strstr(yaml, "\nfilesystem:") < strstr(yaml, "\nnamespaces:"));
	assert_true(strstr(yaml, "\nnetwork:") < strstr(yaml, "\nenv:"));
	assert_true(strstr(yaml, "\nenv:") < strstr(yaml, "\nseccomp:"));
	assert_true(strstr(yaml, "\nseccomp:") < strstr(yaml, "\nlimits:"));
	assert_true(strstr(yaml, "\nlimits:") < strstr(yaml, "\nunsafe:"));
	pol_free(p);
}

static void test_yaml_round_trip_examples(void **state)
{
	static const char *const examples[] = {
		"user: {uid: 1500, gid: 1600, name: _build-bot9, host_ids: {base: 100000, count: 1000}}\n"
		"hostname: box-1.example\n"
		"filesystem:\n"
		"  binds: [{src: /srv/cache, dst: /workspace/cache, mode: rw}, {src: /srv/x, dst: /tmp/x, optional: true}]\n"
		"  etc: [hosts]\n  protect: [.git/hooks, Makefile]\n  allow_create: [Makefile]\n"
		"  hide: [.env, \"**/.env\", \"secrets/*.pem\", \"[!a]x?\"]\n"
		"namespaces: {net: false, ipc: false}\n"
		"capabilities: {keep: [net_bind_service, chown]}\n"
		"env: {set: ['A=1', \"B=x=y\", C=, 'D=a: b', 'E=#x', \"F=\\\"q\\\"\", \"G=\\t\\n\\x01\", \"H=caf\\u00e9 \\u2028\"], pass: [HOME]}\n"
		"seccomp:\n  default_action: kill\n  allow: [ptrace, io_uring_setup]\n  deny: [chmod]\n"
		"  rules:\n"
		"    - {syscall: ioctl, action: deny, args: [{index: 1, op: masked_eq, value: 0x5400, mask: 0xff00}]}\n"
		"    - {syscall: personality, action: allow, args: [{index: 0, op: eq, value: 0}, {index: 5, op: ge, value: 18446744073709551615}]}\n"
		"limits: {memory: 1536K, pids: 64, cpu: 1.25, nofile: 1024, nproc: 32, fsize: 1000, tmpfs: 3T, wall: 1500ms, output: 9223372036854775807}\n"
		"unsafe: [no-cgroup, io_uring]\n",

		"limits: {cpu: 0.001, wall: 90s, memory: 8388607T}\n",
		/* strings that are null spellings must come back quoted */
		"user: {name: \"null\"}\nhostname: \"NULL\"\nenv: {set: [\"A=~\"], pass: [\"Null\"]}\n",
		"limits: {cpu: 0.05, wall: 2h, output: 1}\n",
		"limits: {cpu: 8192, wall: 61m}\n",
		"filesystem: {binds: [], etc: [], protect: [], hide: []}\nenv: {set: [], pass: []}\n",
		"env: {pass: [null_, \"x\"], set: [\"N=null\", \"T=~\", \"E=\", \"Y=yes\", \"K=key: value\", \"L=- x\", \"Q='\", \"S= lead\", \"Z=trail \"]}\n",
		("filesystem: {binds: [{src: /, dst: /host}, {src: /proc, dst: /p}, {src: /run/docker.sock, dst: /d}]}\n"
		 "unsafe: [bind-host-root, bind-kernel-fs, bind-container-socket]\n"),
	};
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(examples); i++) {
		struct pol_policy *p = parse_ok(examples[i]);
		check_round_trip(p);
		pol_free(p);
	}
}

static void test_yaml_units(void **state)
{
	struct pol_policy *p = parse_ok("limits: {memory: 1536K, cpu: 1.25, wall: 1500ms, tmpfs: 1025, fsize: 3T, output: 2M}\n"
					"seccomp: {rules: [{syscall: s, action: allow, args: [{index: 2, op: masked_eq, value: 16, mask: 255}]}]}\n");
	_cleanup_free_ char *yaml = NULL;
	(void)state;
	assert_int_equal(pol_to_yaml(p, &yaml), 0);
	assert_non_null(strstr(yaml, "  memory: 1536K\n"));
	assert_non_null(strstr(yaml, "  cpu: 1.25\n"));
	assert_non_null(strstr(yaml, "  wall: 1500ms\n"));
	assert_non_null(strstr(yaml, "  tmpfs: 1025\n"));
	assert_non_null(strstr(yaml, "  fsize: 3T\n"));
	assert_non_null(strstr(yaml, "  output: 2M\n"));
	assert_non_null(strstr(yaml, "{index: 2, op: masked_eq, value: 0x10, mask: 0xff}"));
	pol_free(p);
}

static void test_json(void **state)
{
	struct pol_policy *p = parse_ok("limits: {memory: 8388607T, wall: 10m, cpu: 1.5}\n"
					"filesystem: {binds: [{src: /opt, dst: /opt, mode: rw}], hide: [.env]}\n"
					"seccomp: {rules: [{syscall: s, action: deny, args: [{index: 3, op: masked_eq, value: 0x10, mask: 0xffffffffffffffff}]}]}\n"
					"unsafe: [io_uring, no-cgroup]\n");
	static const char *const order[] = {
		"user", "hostname", "filesystem", "workspace", "namespaces", "capabilities", "network",
		"env",
		"seccomp", "limits", "unsafe", "sources",
	};
	_cleanup_free_ char *json = NULL;
	cJSON *root, *item;
	size_t i = 0;
	(void)state;
	assert_int_equal(pol_to_json(p, &json), 0);
	root = cJSON_Parse(json);
	assert_non_null(root);
	cJSON_ArrayForEach(item, root) {
		assert_true(i < ELEMENTSOF(order));
		assert_string_equal(item->string, order[i]);
		i++;
	}
	assert_int_equal(i, ELEMENTSOF(order));
	/* exact integers, past what a double holds */
	assert_non_null(strstr(json, "\"memory_bytes\":\t9223370937343148032"));
	assert_non_null(strstr(json, "\"mask\":\t18446744073709551615"));
	assert_non_null(strstr(json, "\"wall_ms\":\t600000"));
	assert_non_null(strstr(json, "\"cpu_millicpus\":\t1500"));
	assert_non_null(strstr(json, "\"tmpfs_bytes\":\t1073741824"));
	/* nested keys keep the YAML order too */
	item = cJSON_GetObjectItemCaseSensitive(root, "user")->child;
	assert_string_equal(item->string, "uid");
	assert_string_equal(item->next->next->string, "name");
	assert_string_equal(cJSON_GetStringValue(item->next->next), "agent");
	assert_string_equal(item->next->next->next->string, "host_ids");
	item = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "namespaces"), "cgroup");
	assert_true(cJSON_IsTrue(item));
	item = cJSON_GetObjectItemCaseSensitive(root, "unsafe");
	assert_int_equal(cJSON_GetArraySize(item), 2);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(item, 0)), "no-cgroup");
	item = cJSON_GetObjectItemCaseSensitive(root, "sources");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(item, 1)), TEST_FILE);
	item = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "filesystem"), "binds"), 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, "mode")), "rw");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(item, "optional")));
	item = cJSON_GetObjectItemCaseSensitive(root, "seccomp");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, "profile")), "default");
	item = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(item, "rules"), 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, "action")), "deny");
	cJSON_Delete(root);
	pol_free(p);
}

static void test_print_refuses_unprintable(void **state)
{
	struct pol_policy *p = parse_ok("{}\n");
	char *out = (char *)sentinel;
	char *saved = p->hostname;
	(void)state;
	p->hostname = NULL;
	assert_int_equal(pol_to_yaml(p, &out), -EINVAL);
	assert_int_equal(pol_to_json(p, &out), -EINVAL);
	assert_ptr_equal(out, sentinel);
	p->hostname = saved;
	p->unsafe |= 1u << 30;
	assert_int_equal(pol_to_yaml(p, &out), -EINVAL);
	p->unsafe = 0;
	p->seccomp_default = (enum pol_seccomp_action)7;
	assert_int_equal(pol_to_json(p, &out), -EINVAL);
	p->seccomp_default = POL_SECCOMP_ERRNO;
	free(p->env_pass[0]);
	p->env_pass[0] = strdup("\xff\xfe");
	assert_int_equal(pol_to_yaml(p, &out), -EINVAL);
	assert_ptr_equal(out, sentinel);
	pol_free(p);
}

static void test_pol_equal(void **state)
{
	struct pol_policy *a = parse_ok("seccomp: {rules: [{syscall: s, action: allow, args: [{index: 0, op: eq, value: 1}]}]}\n");
	struct pol_policy *b = parse_ok("seccomp: {rules: [{syscall: s, action: allow, args: [{index: 0, op: eq, value: 1}]}]}\n");
	(void)state;
	assert_true(pol_equal(a, b));
	/* sources do not count */
	free(b->sources[1]);
	b->sources[1] = strdup("elsewhere.yaml");
	assert_true(pol_equal(a, b));
#define FLIP(field, v)                                   \
	do {                                             \
		__typeof__(b->field) saved_ = b->field;  \
		b->field = (v);                          \
		assert_false(pol_equal(a, b));           \
		b->field = saved_;                       \
		assert_true(pol_equal(a, b));            \
	} while (0)
	FLIP(uid, 7);
	FLIP(host_id_count, 7);
	FLIP(binds[2].optional, true);
	FLIP(binds[0].mode, POL_BIND_RW);
	FLIP(n_binds, 6);
	FLIP(n_protect, 6);
	FLIP(n_etc_files, 3);
	FLIP(n_env_pass, 0);
	FLIP(namespaces[POL_NS_IPC], false);
	FLIP(seccomp_default, POL_SECCOMP_KILL);
	FLIP(seccomp_rules[0].allow, false);
	FLIP(seccomp_rules[0].conds[0].value, 2);
	FLIP(seccomp_rules[0].conds[0].index, 3);
	FLIP(seccomp_rules[0].conds[0].op, POL_CMP_NE);
	FLIP(seccomp_rules[0].n_conds, 0);
	FLIP(memory_bytes, 1);
	FLIP(wall_ms, 1);
	FLIP(output_bytes, 1);
	FLIP(unsafe, POL_UNSAFE_IO_URING);
	FLIP(ws_mode, POL_WS_DIRECT);
	FLIP(ws_apply, POL_WS_APPLY_NONE);
	FLIP(n_hold, 3);
#undef FLIP
	free(b->env_set[1]);
	b->env_set[1] = strdup("LANG=C");
	assert_false(pol_equal(a, b));
	pol_free(a);
	pol_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_text),
		cmocka_unit_test(test_default_parses),
		cmocka_unit_test(test_empty_mapping_is_default),
		cmocka_unit_test(test_overlay_keeps_siblings),
		cmocka_unit_test(test_overlay_nested_mapping),
		cmocka_unit_test(test_overlay_list_replaces),
		cmocka_unit_test(test_overlay_empty_list),
		cmocka_unit_test(test_full_policy),
		cmocka_unit_test(test_unsafe_replaces),
		cmocka_unit_test(test_null_name_and_diag),
		cmocka_unit_test(test_free_null),
		cmocka_unit_test(test_unknown_top_level_key),
		cmocka_unit_test(test_unknown_nested_key),
		cmocka_unit_test(test_key_case_matters),
		cmocka_unit_test(test_duplicate_key),
		cmocka_unit_test(test_mapping_where_scalar_expected),
		cmocka_unit_test(test_scalar_where_mapping_expected),
		cmocka_unit_test(test_scalar_where_sequence_expected),
		cmocka_unit_test(test_null_values),
		cmocka_unit_test(test_quoted_number_rejected),
		cmocka_unit_test(test_complex_key_rejected),
		cmocka_unit_test(test_root_must_be_mapping),
		cmocka_unit_test(test_empty_document),
		cmocka_unit_test(test_multiple_documents),
		cmocka_unit_test(test_anchor_rejected),
		cmocka_unit_test(test_alias_rejected),
		cmocka_unit_test(test_tag_rejected),
		cmocka_unit_test(test_directive_rejected),
		cmocka_unit_test(test_syntax_error_position),
		cmocka_unit_test(test_control_and_utf8_rejected),
		cmocka_unit_test(test_nul_rejected),
		cmocka_unit_test(test_input_size_limit),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_list_limit),
		cmocka_unit_test(test_mapping_key_limit),
		cmocka_unit_test(test_string_limit),
		cmocka_unit_test(test_event_limit),
		cmocka_unit_test(test_uid_gid_range),
		cmocka_unit_test(test_integer_syntax),
		cmocka_unit_test(test_user_name),
		cmocka_unit_test(test_host_ids),
		cmocka_unit_test(test_hostname),
		cmocka_unit_test(test_bind_paths_absolute),
		cmocka_unit_test(test_bind_paths_normalised),
		cmocka_unit_test(test_bind_path_length),
		cmocka_unit_test(test_bind_dst_guarantees),
		cmocka_unit_test(test_bind_src_root),
		cmocka_unit_test(test_bind_required_fields),
		cmocka_unit_test(test_bind_mode_and_optional),
		cmocka_unit_test(test_bind_duplicate_dst),
		cmocka_unit_test(test_etc_entries),
		cmocka_unit_test(test_protect_entries),
		cmocka_unit_test(test_relative_path_length),
		cmocka_unit_test(test_allow_create_within_protect),
		cmocka_unit_test(test_env_set),
		cmocka_unit_test(test_env_pass),
		cmocka_unit_test(test_seccomp_values),
		cmocka_unit_test(test_unsafe_values),
		cmocka_unit_test(test_workspace_defaults),
		cmocka_unit_test(test_workspace_values),
		cmocka_unit_test(test_size_units),
		cmocka_unit_test(test_size_syntax),
		cmocka_unit_test(test_size_overflow),
		cmocka_unit_test(test_time_units),
		cmocka_unit_test(test_cpu_units),
		cmocka_unit_test(test_zero_means_none),
		cmocka_unit_test(test_zero_is_an_error),
		cmocka_unit_test(test_count_ranges),
		cmocka_unit_test(test_namespaces),
		cmocka_unit_test(test_namespaces_locked),
		cmocka_unit_test(test_namespaces_values),
		cmocka_unit_test(test_capabilities),
		cmocka_unit_test(test_capabilities_refused),
		cmocka_unit_test(test_capabilities_unknown),
		cmocka_unit_test(test_network),
		cmocka_unit_test(test_hide_patterns),
		cmocka_unit_test(test_hide_bad),
		cmocka_unit_test(test_hide_components),
		cmocka_unit_test(test_seccomp_profile),
		cmocka_unit_test(test_seccomp_rules),
		cmocka_unit_test(test_seccomp_rule_args_bad),
		cmocka_unit_test(test_seccomp_rule_fields_bad),
		cmocka_unit_test(test_seccomp_rule_conflicts),
		cmocka_unit_test(test_unsafe_new_names),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_bind_host_root),
		cmocka_unit_test(test_host_path_risk),
		cmocka_unit_test(test_bind_kernel_fs),
		cmocka_unit_test(test_bind_always_refused),
		cmocka_unit_test(test_bind_container_socket),
		cmocka_unit_test(test_unsafe_dropped_keeps_binds_safe),
		cmocka_unit_test(test_bind_relative_src),
		cmocka_unit_test(test_bind_relative_src_bad),
		cmocka_unit_test(test_bind_relative_src_length),
		cmocka_unit_test(test_default_has_no_location),
		cmocka_unit_test(test_extends_default),
		cmocka_unit_test(test_extends_without_loader),
		cmocka_unit_test(test_extends_values),
		cmocka_unit_test(test_extends_chain),
		cmocka_unit_test(test_extends_relative),
		cmocka_unit_test(test_extends_error_location),
		cmocka_unit_test(test_extends_cycle),
		cmocka_unit_test(test_extends_depth),
		cmocka_unit_test(test_extends_loader_errors),
		cmocka_unit_test(test_extends_unsafe_layers),
		cmocka_unit_test(test_extends_unsafe_layers_other_keys),
		cmocka_unit_test(test_extends_seccomp_layers),
		cmocka_unit_test(test_yaml_round_trip_default),
		cmocka_unit_test(test_yaml_round_trip_examples),
		cmocka_unit_test(test_yaml_units),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_print_refuses_unprintable),
		cmocka_unit_test(test_pol_equal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
