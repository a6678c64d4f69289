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
#include <errno.h>
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
#define ZERO_CAPS "0000000000000000"
#define NO_CGROUP_POLICY "unsafe: [no-cgroup]\n"

/* Who warden runs as, decided once in main. */
static struct {
	bool via_setpriv;
	uid_t uid;
	gid_t gid;
} user;

struct fx {
	struct th_ws ws;
	struct th_out out;
	cJSON *record;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	int r = th_ws_new(&f->ws, user.uid, user.gid);
	if (r < 0) {
		print_error("create a workspace: %s\n", strerror(-r));
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	th_out_done(&f->out);
	cJSON_Delete(f->record);
	th_ws_remove(&f->ws);
	free(f);
	return 0;
}

static void show(const struct fx *f)
{
	print_error("warden exit %d after %llu ms\n--- stdout ---\n%s--- stderr ---\n%s---\n",
		    f->out.code, (unsigned long long)f->out.elapsed_ms, f->out.out, f->out.err);
}

static void expect(const struct fx *f, int code, const char *out)
{
	if (f->out.code != code || (out && strcmp(f->out.out, out) != 0))
		show(f);
	assert_int_equal(f->out.code, code);
	if (out)
		assert_string_equal(f->out.out, out);
}

/* Runs cmd as the unprivileged user; policy NULL: the default; record may be NULL. */
static void run(struct fx *f, const char *policy_yaml, const char *record,
		const char *const *cmd)
{
	char pol[PATH_MAX];
	struct th_opts o = {
		.workspace = f->ws.dir,
		.record = record,
		.as_user = user.via_setpriv,
		.uid = user.uid,
		.gid = user.gid,
	};
	if (policy_yaml) {
		th_policy(&f->ws, policy_yaml, pol);
		o.policy = pol;
	}
	th_out_done(&f->out);
	th_run(&o, cmd, &f->out);
}

static void test_unpriv_identity(void **state)
{
	struct fx *f = *state;
	run(f, NO_CGROUP_POLICY, NULL, TH_CMD(TH_PROBE, "status"));
	expect(f, 0, NULL);
	static const char *const zero[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
	char v[128];
	for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
		if (!th_status_field(f->out.out, zero[i], v, sizeof(v)))
			fail_msg("no %s line in:\n%s", zero[i], f->out.out);
		assert_string_equal(v, ZERO_CAPS);
	}
	assert_true(th_status_field(f->out.out, "NoNewPrivs", v, sizeof(v)));
	assert_string_equal(v, "1");
	assert_true(th_status_field(f->out.out, "Seccomp", v, sizeof(v)));
	assert_string_equal(v, "2");
	assert_true(th_status_field(f->out.out, "Uid", v, sizeof(v)));
	assert_string_equal(v, "1000\t1000\t1000\t1000");
	assert_true(th_status_field(f->out.out, "Gid", v, sizeof(v)));
	assert_string_equal(v, "1000\t1000\t1000\t1000");
}

static void test_unpriv_record(void **state)
{
	struct fx *f = *state;
	char rec[PATH_MAX];
	th_aux_path(&f->ws, "record", rec);
	run(f, NO_CGROUP_POLICY, rec, TH_CMD(TH_PROBE, "exit", "0"));
	expect(f, 0, "");
	f->record = th_record_load(rec);
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
	assert_string_equal(th_json_str(r, "identity.CapEff"), ZERO_CAPS);
	assert_string_equal(th_json_str(r, "identity.CapBnd"), ZERO_CAPS);
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
	struct fx *f = *state;
	run(f, NO_CGROUP_POLICY, NULL, TH_CMD(TH_PROBE, "write", "/workspace/new"));
	expect(f, 0, "OK 1\n");
	char p[PATH_MAX];
	struct stat st;
	th_pathf(p, "%s/new", f->ws.dir);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_uid, user.uid);
	assert_int_equal(st.st_gid, user.gid);
}

static void test_unpriv_seccomp_active(void **state)
{
	struct fx *f = *state;
	run(f, NO_CGROUP_POLICY, NULL, TH_CMD(TH_PROBE, "syscall", "unshare-user"));
	expect(f, 1, "ERR EPERM 1\n");
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
	struct fx *f = *state;
	/* 65534 owns no cgroup; another user might. */
	if (!user.via_setpriv && own_cgroup_writable()) {
		print_message("this user can create cgroups; there is nothing to refuse\n");
		skip();
	}
	run(f, NULL, NULL, TH_CMD(TH_PROBE, "exit", "0"));
	expect(f, 125, "");
	if (!strstr(f->out.err, "cgroup")) {
		show(f);
		fail_msg("the refusal does not mention cgroup");
	}
}

/* A test named after its function, without the "test_" prefix. */
#define T(fn) { &#fn[5], fn, fx_setup, fx_teardown, NULL }

int main(void)
{
	const char *warden = th_warden();
	const char *probe = th_probe();
	if (th_fully_privileged()) {
		if (!th_setpriv())
			th_cannot_run("setpriv (util-linux) is needed to run warden as uid %u",
				      NOBODY);
		user.via_setpriv = true;
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

	const struct CMUnitTest tests[] = {
		T(test_unpriv_identity),
		T(test_unpriv_record),
		T(test_unpriv_workspace_owner),
		T(test_unpriv_seccomp_active),
		T(test_unpriv_needs_cgroup_optout),
	};
	return _cmocka_run_group_tests("priv-unpriv", tests, sizeof(tests) / sizeof(tests[0]),
				       NULL, NULL);
}
