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

#define TEST_FILE "test.yaml"

/* A value no parse ever stores, to prove *out is untouched on failure. */
static struct pol_policy *const sentinel = (struct pol_policy *)(uintptr_t)0x5a5a5a5a;

static struct pol_policy *parse_ok(const char *yaml)
{
	struct pol_policy *p = NULL;
	struct pol_diag d = { .line = 12345 };
	int r = pol_parse(TEST_FILE, yaml, strlen(yaml), &p, &d);
	if (r != 0)
		print_error("unexpected failure %d at %u:%u: %s\n", r, d.line, d.column, d.message);
	assert_int_equal(r, 0);
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
	if (r != err || d.line != line || d.column != column || !strstr(d.message, substr))
		print_error("got %d at %u:%u: %s\nwanted %d at %u:%u: ...%s...\n", r, d.line,
			    d.column, d.message, err, line, column, substr);
	assert_int_equal(r, err);
	assert_ptr_equal(p, sentinel);
	assert_string_equal(d.file, TEST_FILE);
	assert_int_equal(d.line, line);
	assert_int_equal(d.column, column);
	assert_non_null(strstr(d.message, substr));
	/* Every message says what it expected instead. */
	assert_non_null(strstr(d.message, "(expected "));
	assert_null(strchr(d.message, '\n'));
}

static void check_error(const char *yaml, unsigned line, unsigned column, const char *substr)
{
	check_error_len(yaml, strlen(yaml), -EINVAL, line, column, substr);
}

/* Formats into a heap string; the test owns it. */
__attribute__((format(printf, 1, 2))) static char *fmt(const char *f, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, f);
	int r = vasprintf(&s, f, ap);
	va_end(ap);
	assert_true(r >= 0);
	return s;
}

/* Parses "limits: {<key>: <value>}" and returns the stored field. */
static uint64_t limit_value(const char *key, const char *value)
{
	_cleanup_free_ char *y = fmt("limits: {%s: %s}", key, value);
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
	_cleanup_free_ char *y = fmt("limits: {%s: %s}", key, value);
	check_error(y, 1, (unsigned)(12 + strlen(key)), substr);
}

static void check_default_values(const struct pol_policy *p)
{
	static const char *const etc[] = {
		"alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "nsswitch.conf",
		"localtime", "os-release", "ssl", "ca-certificates", "ca-certificates.conf",
		"mime.types", "gitconfig", "bash.bashrc", "profile", "inputrc",
	};
	static const char *const protect[] = {
		".git/hooks", ".git/config", ".gitmodules", ".envrc", ".vscode", ".idea",
		".devcontainer",
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
	assert_int_equal(p->n_protect, 7);
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
		_cleanup_free_ char *src = fmt("filesystem: {binds: [{src: %s, dst: /x}]}\n", bad[i].path);
		_cleanup_free_ char *dst = fmt("filesystem: {binds: [{src: /x, dst: %s}]}\n", bad[i].path);
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
	ok = fmt("filesystem: {binds: [{src: %s, dst: /x}]}\n", path);
	p = parse_ok(ok);
	assert_int_equal(strlen(p->binds[0].src), PATH_MAX - 1);
	pol_free(p);
	big = fmt("filesystem: {binds: [{src: %sd, dst: /x}]}\n", path);
	check_error(big, 1, 28, "filesystem.binds[0].src is 4096 bytes long (expected less than 4096)");

	/* a single component over NAME_MAX */
	memset(comp, 'c', 255);
	comp[255] = '\0';
	free(ok);
	ok = fmt("filesystem: {binds: [{src: /%s, dst: /x}]}\n", comp);
	p = parse_ok(ok);
	pol_free(p);
	free(big);
	big = fmt("filesystem: {binds: [{src: /%sc, dst: /x}]}\n", comp);
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
		_cleanup_free_ char *y = fmt("filesystem:\n  binds:\n    - src: /srv\n      dst: %s\n", covered[i]);
		check_error(y, 4, 12, "bind target would cover a guarantee");
	}
	for (size_t i = 0; i < ELEMENTSOF(fine); i++) {
		_cleanup_free_ char *y = fmt("filesystem: {binds: [{src: /srv, dst: %s}]}\n", fine[i]);
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
	y = fmt("filesystem: {protect: [%s]}\n", path);
	check_error(y, 1, 24, "filesystem.protect[0] is 4096 bytes long (expected less than 4096)");
	path[PATH_MAX - 1] = '\0';
	free(y);
	y = fmt("filesystem: {protect: [%s]}\n", path);
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
		    "unsafe[0] 'no-seccomp' is not a known weakening (expected one of: no-cgroup, io_uring, bind-host-root, bind-container-socket, bind-kernel-fs)");
	check_error("unsafe: [io_uring, io_uring]\n", 1, 20, "unsafe[1] 'io_uring' repeats an earlier entry");
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
		cmocka_unit_test(test_size_units),
		cmocka_unit_test(test_size_syntax),
		cmocka_unit_test(test_size_overflow),
		cmocka_unit_test(test_time_units),
		cmocka_unit_test(test_cpu_units),
		cmocka_unit_test(test_zero_means_none),
		cmocka_unit_test(test_zero_is_an_error),
		cmocka_unit_test(test_count_ranges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
