/* SPDX-License-Identifier: MIT */
/*
 * Privileged tests of policy names and the profiles (docs/profiles.md,
 * supervisor/policy-load.c, policy/profiles/):
 *
 *  - a name is looked up in $XDG_CONFIG_HOME/warden/policies, then /etc/warden/policies,
 *    then the profiles (for build/warden: the build's copy of policy/profiles), the first
 *    folder that has it deciding; WARDEN_POLICY names the policy when --policy is absent;
 *  - a name is never a file of the current directory (which is usually the workspace), while
 *    ./NAME still names that file;
 *  - each profile keeps every entry of the default's lists that it repeats (a list in a policy
 *    replaces the default's, so a profile that dropped one would widen the sandbox);
 *  - each profile runs its tool's offline smoke in a real sandbox: python (a venv, pip
 *    installing from an index served on the sandbox's loopback, pytest) and node (npm pack
 *    and install of a local package, npx, npm test with node's test runner). Where the tool
 *    is not installed on the host (Debian: python3, python3-venv, python3-pytest; nodejs,
 *    npm), that test is skipped, saying which package is missing.
 *
 * /etc/warden/policies is tested in a private mount namespace of this program, with an
 * overlay on /etc whose upper layer is a tmpfs: the host's /etc is never written.
 *
 * Needs full privilege (root with CAP_SYS_ADMIN in the initial user namespace, which puts
 * warden in privileged mode); otherwise the program exits 77, or fails under
 * SBX_TEST_MUST_WORK=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "harness.h"

/*
 * The hard timeout of one run: the smokes install packages, the rest print one line. Only a
 * safety net (meson's own timeout comes first on a real host): an emulated machine takes
 * several minutes for a venv and pip.
 */
#define SMOKE_HARD_TIMEOUT_MS 900000u
/* The system folder of policy names (docs/profiles.md). */
#define ETC_POLICIES "/etc/warden/policies"

/* ---- helpers ---- */

/* Creates every missing folder above path and path's own folder (mode 0755). */

/* A policy that only names its hostname: which file was read shows in the sandbox. */
static void put_named(const char *path, const char *hostname)
{
	char yaml[128];
	(void)snprintf(yaml, sizeof(yaml), "hostname: %s\n", hostname);
	th_put_file_mkdirs(path, yaml);
}

/* "XDG_CONFIG_HOME=<aux>/xdg" into out; the user folder is <aux>/xdg/warden/policies. */
static void xdg_env(const struct th_fx *f, char *out, size_t len, char *dir)
{
	(void)snprintf(out, len, "XDG_CONFIG_HOME=%s/xdg", f->ws.aux);
	th_pathf(dir, "%s/xdg/warden/policies", f->ws.aux);
}

/*
 * Runs `warden run [--policy POLICY] -- cat /proc/sys/kernel/hostname` in f's workspace with
 * env (may be NULL) and cwd (NULL: "/"); expects code and, with code 0, the hostname.
 */
static void expect_hostname(struct th_fx *f, const char *policy, const char *const *env,
			    const char *cwd, int code, const char *hostname)
{
	struct th_opts o = th_fx_opts(f, NULL);
	o.policy = policy;
	o.env = env;
	o.cwd = cwd;
	char want[96];
	(void)snprintf(want, sizeof(want), "%s\n", hostname ? hostname : "");
	th_fx_run_expect(f, &o, TH_CMD("cat", "/proc/sys/kernel/hostname"), code,
			 code == 0 ? want : NULL);
}

/* True when argv (argv[0] absolute) runs on the host and exits 0; its output is dropped. */
static bool host_ok(const char *const *argv)
{
	pid_t pid = fork();
	if (pid < 0)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			fail_msg("waitpid: %s", strerror(errno));
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ---- lookup ---- */

/* build/warden finds the profiles in the build tree by name. */
static void test_profiles_by_name(void **state)
{
	struct th_fx *f = *state;
	struct th_opts o = { .subcommand = "policy" };
	th_fx_run(f, &o, TH_CMD("check", "python"));
	th_fx_expect(f, 0, NULL);
	if (!strstr(f->out.out, "PIP_NO_INPUT=1")) {
		th_show(&f->out);
		fail_msg("`policy check python` did not print the python profile");
	}
	th_fx_run(f, &o, TH_CMD("check", "node"));
	th_fx_expect(f, 0, NULL);
	if (!strstr(f->out.out, "npm_config_audit=false")) {
		th_show(&f->out);
		fail_msg("`policy check node` did not print the node profile");
	}
	/* A name nowhere: refused with the folders it was looked for in. */
	th_fx_run(f, &o, TH_CMD("check", "no-such-profile"));
	th_fx_expect(f, 2, "");
	th_fx_expect_err_has(f, "no no-such-profile.yaml in /etc/warden/policies, ");
	th_fx_expect_err_has(f, "/policy/profiles");
}

/* The user's folder comes first: its python.yaml is used instead of the profile. */
static void test_xdg_first(void **state)
{
	struct th_fx *f = *state;
	char env0[PATH_MAX + 32], dir[PATH_MAX], path[PATH_MAX];
	xdg_env(f, env0, sizeof(env0), dir);
	th_pathf(path, "%s/python.yaml", dir);
	put_named(path, "from-xdg");
	/* The control: without the user folder, the profile (hostname warden). */
	expect_hostname(f, "python", NULL, NULL, 0, "warden");
	expect_hostname(f, "python", TH_CMD(env0), NULL, 0, "from-xdg");
	/* A name only the user folder has. */
	th_pathf(path, "%s/mine.yaml", dir);
	put_named(path, "mine-xdg");
	expect_hostname(f, "mine", TH_CMD(env0), NULL, 0, "mine-xdg");
	/* An XDG_CONFIG_HOME that is not absolute is ignored, as the specification says. */
	expect_hostname(f, "mine", TH_CMD("XDG_CONFIG_HOME=xdg"), f->ws.aux, 125, NULL);
	/* An entry that is not a regular file is an error, not a reason to look further. */
	th_pathf(path, "%s/node.yaml", dir);
	if (mkdir(path, 0755) < 0)
		fail_msg("mkdir %s: %s", path, strerror(errno));
	expect_hostname(f, "node", TH_CMD(env0), NULL, 125, NULL);
	th_fx_expect_err_has(f, "is not a regular file");
}

/* WARDEN_POLICY names the policy when there is no --policy; --policy still wins. */
static void test_warden_policy_env(void **state)
{
	struct th_fx *f = *state;
	char env0[PATH_MAX + 32], dir[PATH_MAX], path[PATH_MAX], file[PATH_MAX + 16];
	xdg_env(f, env0, sizeof(env0), dir);
	th_pathf(path, "%s/mine.yaml", dir);
	put_named(path, "mine-xdg");
	expect_hostname(f, NULL, TH_CMD(env0, "WARDEN_POLICY=mine"), NULL, 0, "mine-xdg");
	expect_hostname(f, "default", TH_CMD(env0, "WARDEN_POLICY=mine"), NULL, 0, "warden");
	/* A file too, and an empty WARDEN_POLICY is none. */
	th_pathf(path, "%s/other.yaml", f->ws.aux);
	put_named(path, "from-file");
	(void)snprintf(file, sizeof(file), "WARDEN_POLICY=%s", path);
	expect_hostname(f, NULL, TH_CMD(file), NULL, 0, "from-file");
	expect_hostname(f, NULL, TH_CMD("WARDEN_POLICY="), NULL, 0, "warden");
	/* A name that is nowhere fails the run, naming WARDEN_POLICY. */
	expect_hostname(f, NULL, TH_CMD("WARDEN_POLICY=nowhere"), NULL, 125, NULL);
	th_fx_expect_err_has(f, "WARDEN_POLICY 'nowhere': no nowhere.yaml in ");
}

/*
 * A name is never a file of the current directory, here the workspace, where a sandbox could
 * have written it; ./NAME and NAME.yaml still name files there.
 */
static void test_never_cwd(void **state)
{
	struct th_fx *f = *state;
	char path[PATH_MAX];
	th_ws_path(&f->ws, "mine", path);
	put_named(path, "from-cwd");
	th_ws_path(&f->ws, "python.yaml", path);
	put_named(path, "cwd-yaml");
	expect_hostname(f, "mine", NULL, f->ws.dir, 125, NULL);
	th_fx_expect_err_has(f, "a name is never a file of the current directory: to use that "
			     "file, write ./mine");
	expect_hostname(f, "./mine", NULL, f->ws.dir, 0, "from-cwd");
	/* python is the profile, not the workspace's python.yaml; python.yaml is that file. */
	expect_hostname(f, "python", NULL, f->ws.dir, 0, "warden");
	expect_hostname(f, "python.yaml", NULL, f->ws.dir, 0, "cwd-yaml");
}

/*
 * /etc/warden/policies comes after the user's folder and before the profiles. An overlay on
 * /etc in this program's private mount namespace (upper layer on a tmpfs) holds it.
 */
static void test_etc_order(void **state)
{
	struct th_fx *f = *state;
	char tmp[PATH_MAX], upper[PATH_MAX], work[PATH_MAX], opts[3 * PATH_MAX + 64];
	th_pathf(tmp, "%s/etc-layer", f->ws.aux);
	if (mkdir(tmp, 0755) < 0 || unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", tmp, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		fail_msg("a private tmpfs at %s: %s", tmp, strerror(errno));
	th_pathf(upper, "%s/upper", tmp);
	th_pathf(work, "%s/work", tmp);
	if (mkdir(upper, 0755) < 0 || mkdir(work, 0755) < 0)
		fail_msg("mkdir in %s: %s", tmp, strerror(errno));
	(void)snprintf(opts, sizeof(opts), "lowerdir=/etc,upperdir=%s,workdir=%s", upper, work);
	if (mount("overlay", "/etc", "overlay", 0, opts) < 0) {
		int e = errno;
		(void)umount2(tmp, MNT_DETACH);
		if (th_must_work())
			fail_msg("overlay on /etc: %s", strerror(e));
		skip();
	}
	put_named(ETC_POLICIES "/python.yaml", "python-etc");
	put_named(ETC_POLICIES "/mine.yaml", "mine-etc");

	char env0[PATH_MAX + 32], dir[PATH_MAX], path[PATH_MAX];
	xdg_env(f, env0, sizeof(env0), dir);
	th_pathf(path, "%s/mine.yaml", dir);
	put_named(path, "mine-xdg");
	expect_hostname(f, "python", NULL, NULL, 0, "python-etc");
	expect_hostname(f, "mine", NULL, NULL, 0, "mine-etc");
	expect_hostname(f, "mine", TH_CMD(env0), NULL, 0, "mine-xdg");
	expect_hostname(f, "node", TH_CMD(env0), NULL, 0, "warden");

	if (umount2("/etc", MNT_DETACH) < 0 || umount2(tmp, MNT_DETACH) < 0)
		fail_msg("umount: %s", strerror(errno));
	/* The control: with the overlay gone, python is the profile again. */
	expect_hostname(f, "python", NULL, NULL, 0, "warden");
}

/* ---- the profiles themselves ---- */

/* The entries of the list at path in a printed policy (JSON), as a cJSON array; fails. */
static const cJSON *list_at(const cJSON *pol, const char *path)
{
	const cJSON *l = th_json_at(pol, path);
	if (!cJSON_IsArray(l))
		fail_msg("the printed policy has no list %s", path);
	return l;
}

/* Every entry of the default's list at path is in the profile's. */
static void expect_superset(const cJSON *def, const cJSON *prof, const char *name,
			    const char *path)
{
	const cJSON *d, *p;
	cJSON_ArrayForEach(d, list_at(def, path)) {
		bool found = false;
		cJSON_ArrayForEach(p, list_at(prof, path))
			found = found || cJSON_Compare(d, p, true);
		if (!found) {
			char *text = cJSON_PrintUnformatted(d);
			print_error("profile %s: %s lacks the default's %s\n", name, path,
				    text ? text : "?");
			free(text);
			fail_msg("profile %s drops an entry of the default's %s", name, path);
		}
	}
}

/*
 * Each profile keeps every entry of the default's lists: a list in a policy replaces the
 * default's, so a profile that repeats one must repeat all of it.
 */
static void test_profiles_keep_default(void **state)
{
	struct th_fx *f = *state;
	struct th_opts o = { .subcommand = "policy" };
	th_fx_run(f, &o, TH_CMD("check", "--json", "default"));
	th_fx_expect(f, 0, NULL);
	cJSON *def = cJSON_Parse(f->out.out);
	assert_non_null(def);
	static const char *const lists[] = {
		"filesystem.binds", "filesystem.etc", "filesystem.protect", "filesystem.hide",
		"filesystem.allow_create", "workspace.hold", "env.set", "env.pass",
		"seccomp.allow", "seccomp.deny", "seccomp.rules", "capabilities.keep",
	};
	static const char *const names[] = { "python", "node" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		th_fx_run(f, &o, TH_CMD("check", "--json", names[i]));
		th_fx_expect(f, 0, NULL);
		cJSON *prof = cJSON_Parse(f->out.out);
		assert_non_null(prof);
		for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]); k++)
			expect_superset(def, prof, names[i], lists[k]);
		/* And they open nothing: network, namespaces and unsafe keys as the default's. */
		static const char *const same[] = { "network", "namespaces", "unsafe", "limits",
						    "user", "seccomp.profile", "seccomp.default_action",
						    "workspace.mode", "workspace.apply" };
		for (size_t k = 0; k < sizeof(same) / sizeof(same[0]); k++)
			if (!cJSON_Compare(th_json_at(def, same[k]), th_json_at(prof, same[k]), true))
				fail_msg("profile %s changes %s", names[i], same[k]);
		cJSON_Delete(prof);
	}
	cJSON_Delete(def);
}

/* The python smoke: a wheel, an index on the sandbox's loopback, a venv, pip, pytest. */
static const char python_smoke[] =
	"set -eu\n"
	"mkdir -p \"$HOME/index/simple/demo\"\n"
	"python3 mkwheel.py \"$HOME/index/simple/demo\"\n"
	"(cd \"$HOME/index\" && exec python3 -m http.server --bind 127.0.0.1 8765) "
	">/dev/null 2>&1 &\n"
	"server=$!\n"
	"i=0\n"
	"until python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 8765)).close()' "
	"2>/dev/null; do\n"
	"  i=$((i + 1)); [ $i -lt 200 ] || { echo 'the index never listened'; exit 3; }\n"
	"  sleep 0.1\n"
	"done\n"
	"python3 -m venv --system-site-packages \"$HOME/venv\"\n"
	"\"$HOME/venv/bin/pip\" install --index-url http://127.0.0.1:8765/simple/ demo\n"
	"\"$HOME/venv/bin/python\" -m pytest -q -p no:cacheprovider tests\n"
	"kill $server\n";

/* Writes demo-1.0-py3-none-any.whl (a pure-Python wheel with its RECORD) into argv[1]. */
static const char python_mkwheel[] =
	"import base64, hashlib, os, sys, zipfile\n"
	"files = {\n"
	"    'demo/__init__.py': b'def answer():\\n    return 42\\n',\n"
	"    'demo-1.0.dist-info/METADATA': b'Metadata-Version: 2.1\\nName: demo\\nVersion: 1.0\\n',\n"
	"    'demo-1.0.dist-info/WHEEL': b'Wheel-Version: 1.0\\nGenerator: warden-test\\n'\n"
	"        b'Root-Is-Purelib: true\\nTag: py3-none-any\\n',\n"
	"}\n"
	"record = []\n"
	"for name, data in files.items():\n"
	"    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=')\n"
	"    record.append('%s,sha256=%s,%d' % (name, digest.decode(), len(data)))\n"
	"record.append('demo-1.0.dist-info/RECORD,,')\n"
	"path = os.path.join(sys.argv[1], 'demo-1.0-py3-none-any.whl')\n"
	"with zipfile.ZipFile(path, 'w') as z:\n"
	"    for name, data in files.items():\n"
	"        z.writestr(name, data)\n"
	"    z.writestr('demo-1.0.dist-info/RECORD', '\\n'.join(record) + '\\n')\n";

static void test_python_smoke(void **state)
{
	struct th_fx *f = *state;
	if (access("/usr/bin/python3", X_OK) < 0) {
		print_message("skipped: no /usr/bin/python3 (Debian: python3)\n");
		skip();
	}
	if (!host_ok(TH_CMD("/usr/bin/python3", "-c", "import ensurepip, venv"))) {
		print_message("skipped: python3 has no ensurepip (Debian: python3-venv)\n");
		skip();
	}
	if (!host_ok(TH_CMD("/usr/bin/python3", "-c", "import pytest"))) {
		print_message("skipped: python3 has no pytest (Debian: python3-pytest)\n");
		skip();
	}
	th_ws_write(&f->ws, "smoke.sh", python_smoke);
	th_ws_write(&f->ws, "mkwheel.py", python_mkwheel);
	th_ws_mkdir(&f->ws, "tests");
	th_ws_write(&f->ws, "tests/test_demo.py",
		    "import demo\n\n\ndef test_answer():\n    assert demo.answer() == 42\n");
	struct th_opts o = th_fx_opts(f, "python");
	o.hard_timeout_ms = SMOKE_HARD_TIMEOUT_MS;
	th_fx_run(f, &o, TH_CMD("sh", "/workspace/smoke.sh"));
	th_fx_expect(f, 0, NULL);
	if (!strstr(f->out.out, "Successfully installed demo-1.0") ||
	    !strstr(f->out.out, "1 passed")) {
		th_show(&f->out);
		fail_msg("expected pip to install demo-1.0 and pytest to pass one test");
	}
}

/* The node smoke: npm pack and install of a local package, npx of its bin, npm test. */
static void test_node_smoke(void **state)
{
	struct th_fx *f = *state;
	static const char *const tools[] = { "/usr/bin/node", "/usr/bin/npm", "/usr/bin/npx" };
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (access(tools[i], X_OK) < 0) {
			print_message("skipped: no %s (Debian: nodejs, npm)\n", tools[i]);
			skip();
		}
	th_ws_mkdir(&f->ws, "lib");
	th_ws_write(&f->ws, "lib/package.json",
		    "{ \"name\": \"demo-lib\", \"version\": \"1.0.0\", \"main\": \"index.js\",\n"
		    "  \"bin\": { \"demo-hello\": \"bin.js\" } }\n");
	th_ws_write(&f->ws, "lib/index.js", "module.exports = { answer: () => 42 };\n");
	th_ws_write(&f->ws, "lib/bin.js", "#!/usr/bin/env node\nconsole.log('hello from demo-lib');\n");
	th_ws_mkdir(&f->ws, "app");
	th_ws_write(&f->ws, "app/package.json",
		    "{ \"name\": \"app\", \"version\": \"1.0.0\",\n"
		    "  \"scripts\": { \"test\": \"node --test\" } }\n");
	th_ws_write(&f->ws, "app/answer.test.js",
		    "const test = require('node:test');\n"
		    "const assert = require('node:assert');\n"
		    "const lib = require('demo-lib');\n"
		    "test('answer', () => { assert.strictEqual(lib.answer(), 42); });\n");
	th_ws_write(&f->ws, "smoke.sh",
		    "set -eu\n"
		    "cd /workspace/lib && npm pack --silent\n"
		    "cd /workspace/app && npm install ../lib/demo-lib-1.0.0.tgz\n"
		    "npx demo-hello\n"
		    "npm test\n");
	struct th_opts o = th_fx_opts(f, "node");
	o.hard_timeout_ms = SMOKE_HARD_TIMEOUT_MS;
	th_fx_run(f, &o, TH_CMD("sh", "/workspace/smoke.sh"));
	th_fx_expect(f, 0, NULL);
	if (!strstr(f->out.out, "hello from demo-lib") || !strstr(f->out.out, "# pass 1")) {
		th_show(&f->out);
		fail_msg("expected npx to run the package's bin and node --test to pass one test");
	}
}

/* ---------------------------------------------------------------------------------------- */

#define T(fn) { &#fn[5], fn, th_fx_setup_root, th_fx_teardown, NULL }
#define O(fn) { &#fn[5], fn, owned_setup, th_fx_teardown, NULL }

/* A fixture whose changesets are discarded at teardown (the smokes write the workspace). */
static int owned_setup(void **state)
{
	*state = NULL;
	return th_fx_setup_owned(state, sizeof(struct th_fx));
}

int main(void)
{
	th_require_privileged();
	const struct CMUnitTest tests[] = {
		T(test_profiles_by_name),
		T(test_xdg_first),
		T(test_warden_policy_env),
		T(test_never_cwd),
		T(test_profiles_keep_default),
		O(test_python_smoke),
		O(test_node_smoke),
		/* Last: it leaves this program in a mount namespace of its own. */
		T(test_etc_order),
	};
	return _cmocka_run_group_tests("priv-profiles", tests, sizeof(tests) / sizeof(tests[0]),
				       NULL, NULL);
}
