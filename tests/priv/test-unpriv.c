/* SPDX-License-Identifier: MIT */
/*
 * Integration tests of warden's unprivileged mode: warden runs as an ordinary user, so the
 * sandbox user maps to that user, and cgroups (v1 cannot be delegated) need the policy's
 * explicit opt-out `unsafe: [no-cgroup]`, which the run record must report as a weakening.
 *
 * As root, warden is started through setpriv as uid/gid 65534 with no groups and no
 * capabilities, on a workspace owned by 65534. As any other user (also as uid 0 under
 * `unshare -r`), warden runs as that user directly. Without setpriv (as root), without user
 * namespaces for the user, or when the user cannot execute the build, the program exits 77,
 * or fails under SBX_TEST_MUST_WORK=1.
 */
#include <libgen.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "harness.h"

#define NOBODY 65534u
#define NO_CGROUP_POLICY "unsafe: [no-cgroup]\n"

/* Who warden runs as, decided once in main. */
static struct {
	bool via_setpriv;
	uid_t uid;
	gid_t gid;
} user;

/* The workspace belongs to the user warden runs as. */
static int fx_setup(void **state)
{
	return th_fx_setup(state, sizeof(struct th_fx), user.uid, user.gid);
}

/* Options running as the unprivileged user, under policy_yaml (NULL: the default policy). */
static struct th_opts user_opts(struct th_fx *f, const char *policy_yaml, char *pol)
{
	struct th_opts o = th_fx_opts(f, NULL);
	o.as_user = user.via_setpriv;
	o.uid = user.uid;
	o.gid = user.gid;
	if (policy_yaml) {
		th_policy(&f->ws, policy_yaml, pol);
		o.policy = pol;
	}
	return o;
}

/* Runs cmd as the unprivileged user (see user_opts), then th_fx_expect. */
static void run_expect(struct th_fx *f, const char *policy_yaml, const char *const *cmd, int code,
		       const char *out)
{
	char pol[PATH_MAX];
	struct th_opts o = user_opts(f, policy_yaml, pol);
	th_fx_run_expect(f, &o, cmd, code, out);
}

static void test_unpriv_identity(void **state)
{
	struct th_fx *f = *state;
	run_expect(f, NO_CGROUP_POLICY, TH_CMD(TH_PROBE, "status"), 0, NULL);
	th_fx_expect_sandbox_user(f);
}

static void test_unpriv_record(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	struct th_opts o = user_opts(f, NO_CGROUP_POLICY, pol);
	th_fx_record_expect(f, &o, TH_CMD(TH_PROBE, "exit", "0"), 0, "");
	const cJSON *r = f->record;
	assert_string_equal(th_json_str(r, "sandbox.mode"), "unprivileged");
	assert_int_equal((unsigned)th_json_num(r, "sandbox.host_uid"), user.uid);
	assert_int_equal((unsigned)th_json_num(r, "sandbox.host_gid"), user.gid);
	assert_int_equal((int)th_json_num(r, "sandbox.cgroup_version"), 0);
	const cJSON *weak = th_json_at(r, "weakenings");
	assert_true(cJSON_IsArray(weak));
	bool found = false;
	const cJSON *w;
	cJSON_ArrayForEach(w, weak)
		found |= cJSON_IsString(w) && strcmp(w->valuestring, "no-cgroup") == 0;
	if (!found)
		fail_msg("weakenings does not list no-cgroup");
	assert_true(th_json_bool(r, "identity.checked"));
	assert_true(th_json_bool(r, "identity.held"));
	assert_int_equal((unsigned)th_json_num(r, "identity.uid"), user.uid);
	assert_string_equal(th_json_str(r, "identity.CapEff"), TH_ZERO_CAPS);
	assert_string_equal(th_json_str(r, "identity.CapBnd"), TH_ZERO_CAPS);
	assert_int_equal((int)th_json_num(r, "identity.NoNewPrivs"), 1);
	assert_int_equal((int)th_json_num(r, "identity.Seccomp"), 2);
	static const char *const ns[] = { "user", "pid", "mnt", "net", "uts", "ipc" };
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		char p[96];
		(void)snprintf(p, sizeof(p), "identity.namespaces.%s.separate", ns[i]);
		if (!th_json_bool(r, p))
			fail_msg("namespace %s is shared with the supervisor", ns[i]);
	}
}

static void test_unpriv_workspace_owner(void **state)
{
	struct th_fx *f = *state;
	run_expect(f, NO_CGROUP_POLICY, TH_CMD(TH_PROBE, "write", "/workspace/new"), 0, "OK 1\n");
	char p[PATH_MAX];
	struct stat st;
	th_ws_path(&f->ws, "new", p);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_uid, user.uid);
	assert_int_equal(st.st_gid, user.gid);
}

static void test_unpriv_seccomp_active(void **state)
{
	struct th_fx *f = *state;
	run_expect(f, NO_CGROUP_POLICY, TH_CMD(TH_PROBE, "syscall", "unshare-user"), 1,
		   "ERR EPERM 1\n");
}

/*
 * True when this process may create a cgroup below its own: on v2 through delegation, or as
 * uid 0 of a user namespace that root started (the host's hierarchy is still its own).
 */
static bool own_cgroup_writable(void)
{
	struct statfs sfs;
	bool v2 = statfs("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC;
	FILE *fp = fopen("/proc/self/cgroup", "re");
	if (!fp)
		return false;
	char line[1024], dir[PATH_MAX + 64];
	bool writable = false;
	while (fgets(line, sizeof(line), fp)) {
		/* "ID:CONTROLLERS:PATH" */
		char *ctl = strchr(line, ':');
		char *path = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!path)
			continue;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		const char *mnt = v2 ? (ctl[1] == '\0' ? "" : NULL) :
				      strcmp(ctl + 1, "memory") == 0 ? "/memory" : NULL;
		if (!mnt)
			continue;
		(void)snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s%s", mnt, path);
		writable = access(dir, W_OK) == 0;
		break;
	}
	(void)fclose(fp);
	return writable;
}

static void test_unpriv_needs_cgroup_optout(void **state)
{
	struct th_fx *f = *state;
	/* 65534 owns no cgroup; another user might. */
	if (!user.via_setpriv && own_cgroup_writable()) {
		print_message("this user can create cgroups; there is nothing to refuse\n");
		skip();
	}
	run_expect(f, NULL, TH_CMD(TH_PROBE, "exit", "0"), 125, "");
	if (!strstr(f->out.err, "cgroup")) {
		th_show(&f->out);
		fail_msg("the refusal does not mention cgroup");
	}
}

/* A test named after its function, without the "test_" prefix. */
#define T(fn) { &#fn[5], fn, fx_setup, th_fx_teardown, NULL }

int main(void)
{
	const char *warden = th_warden();
	const char *probe = th_probe();
	if (th_fully_privileged()) {
		if (!th_setpriv())
			th_cannot_run("setpriv (util-linux) is needed to run warden as uid %u",
				      NOBODY);
		user.via_setpriv = true;
		th_tmp_idmappable();
		user.uid = NOBODY;
		user.gid = NOBODY;
	} else {
		/*
		 * Any other user, including uid 0 of a user namespace (`unshare -r`), where uid 0
		 * is the unprivileged invoking user and warden runs in unprivileged mode.
		 */
		user.uid = getuid();
		user.gid = getgid();
	}
	if (!th_userns_available(user.uid, user.gid))
		th_cannot_run("uid %u cannot create user namespaces", (unsigned)user.uid);
	char worker[PATH_MAX], copy[PATH_MAX];
	(void)snprintf(copy, sizeof(copy), "%s", warden);
	if (snprintf(worker, sizeof(worker), "%s/warden-worker", dirname(copy)) >=
	    (int)sizeof(worker))
		th_cannot_run("path too long: %s", warden);
	const char *const bins[] = { warden, worker, probe };
	for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++)
		if (!th_executable_by(user.uid, user.gid, bins[i]))
			th_cannot_run("uid %u cannot execute %s (is the build tree readable?)",
				      (unsigned)user.uid, bins[i]);

	/* Changesets of unprivileged runs live in the user's state directory: give it one. */
	const char *tmp = secure_getenv("TMPDIR");
	char state[PATH_MAX];
	(void)snprintf(state, sizeof(state), "%s/warden-unpriv-state-XXXXXX",
		       tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(state) || chown(state, user.uid, user.gid) < 0 ||
	    setenv("XDG_STATE_HOME", state, 1) < 0)
		th_cannot_run("make a state directory for uid %u", (unsigned)user.uid);

	const struct CMUnitTest tests[] = {
		T(test_unpriv_identity),
		T(test_unpriv_record),
		T(test_unpriv_workspace_owner),
		T(test_unpriv_seccomp_active),
		T(test_unpriv_needs_cgroup_optout),
	};
	int failed = _cmocka_run_group_tests("priv-unpriv", tests,
					     sizeof(tests) / sizeof(tests[0]), NULL, NULL);
	char rm[64 + sizeof(state)];
	(void)snprintf(rm, sizeof(rm), "rm -rf '%s'", state);
	if (system(rm) != 0)
		print_error("could not remove %s\n", state);
	return failed;
}
