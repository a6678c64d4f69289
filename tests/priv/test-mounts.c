/* SPDX-License-Identifier: MIT */
/*
 * Privileged integration tests of warden and the host's mounts, in a private mount namespace
 * of this program (warden, its child, runs in it too):
 *   - on a host whose root has shared propagation (systemd's default, made here with
 *     MS_SHARED), no run, in either workspace mode, leaves a mount in the host's table;
 *   - a workspace on overlayfs (a container's root), which cannot be idmapped: mode changes
 *     works on a copy of it and applies to it; mode direct refuses a root-owned one with one
 *     line, and maps the sandbox to a non-root owner, recorded as a weakening;
 *   - warden's state directory on overlayfs gets a tmpfs for its changesets.
 *
 * Needs full privilege (root with CAP_SYS_ADMIN in the initial user namespace); otherwise the
 * program exits 77, or fails under SBX_TEST_MUST_WORK=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "harness.h"

#define STATE_DIR "/var/lib/warden"
#define OWNER 1000u

/* One test's fixture: the harness's, and the overlay it mounted ("" when none). */
struct mt_fx {
	struct th_fx fx;
	char ovl[PATH_MAX];     /* the overlay's mount point */
	char proj[PATH_MAX];    /* the workspace on it */
	bool state_ovl;         /* an overlay covers STATE_DIR */
};

static int fx_setup(void **state)
{
	return th_fx_setup(state, sizeof(struct mt_fx), 0, 0);
}

static int fx_teardown(void **state)
{
	struct mt_fx *m = *state;
	if (m->state_ovl)
		(void)umount2(STATE_DIR, MNT_DETACH);
	if (m->ovl[0]) {
		th_discard_changesets(m->proj);
		(void)umount2(m->ovl, MNT_DETACH);
	}
	th_fx_free(&m->fx);
	return 0;
}

/* Mounts an overlay (layers in the fixture's aux folder) and makes proj on it, root-owned. */
static void mount_overlay(struct mt_fx *m)
{
	char l[PATH_MAX], u[PATH_MAX], w[PATH_MAX], opts[3 * PATH_MAX + 64];
	th_aux_path(&m->fx.ws, "lower", l);
	th_aux_path(&m->fx.ws, "upper", u);
	th_aux_path(&m->fx.ws, "work", w);
	th_aux_path(&m->fx.ws, "ovl", m->ovl);
	assert_int_equal(mkdir(l, 0755), 0);
	assert_int_equal(mkdir(u, 0755), 0);
	assert_int_equal(mkdir(w, 0755), 0);
	assert_int_equal(mkdir(m->ovl, 0755), 0);
	(void)snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", l, u, w);
	if (mount("overlay", m->ovl, "overlay", 0, opts) < 0)
		fail_msg("mount an overlay on %s: %s", m->ovl, strerror(errno));
	th_pathf(m->proj, "%s/proj", m->ovl);
	assert_int_equal(mkdir(m->proj, 0755), 0);
	char p[PATH_MAX];
	th_pathf(p, "%s/a", m->proj);
	th_put_file(p, "a\n");
}

/* This namespace's mount points, one per line, in a new string. */
static char *mount_points(void)
{
	size_t len = 0;
	char *text = th_read_file("/proc/self/mountinfo", 1 << 20, false, &len);
	assert_non_null(text);
	char *out = calloc(1, len + 1);
	assert_non_null(out);
	size_t o = 0;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		/* id parent major:minor root MOUNTPOINT ... */
		char *f = line;
		for (int i = 0; i < 4 && f; i++) {
			f = strchr(f, ' ');
			if (f)
				f++;
		}
		if (!f)
			continue;
		size_t n = strcspn(f, " ");
		memcpy(out + o, f, n);
		o += n;
		out[o++] = '\n';
	}
	free(text);
	return out;
}

static void run_sh(struct th_fx *f, const char *ws, const char *mode, const char *script,
		   int code, const char *out)
{
	struct th_opts o = th_fx_opts(f, NULL);
	if (ws)
		o.workspace = ws;
	o.ws_mode = mode;
	const char *cmd[] = { "sh", "-c", script, NULL };
	th_fx_record_expect(f, &o, cmd, code, out);
}

static bool has_weakening(const cJSON *record, const char *name)
{
	const cJSON *w = th_json_at(record, "weakenings"), *e;
	cJSON_ArrayForEach(e, w)
		if (cJSON_IsString(e) && !strcmp(e->valuestring, name))
			return true;
	return false;
}

/* ---------------------------------------------------------------------------------------- */

/* Under a shared root, the host's mount table is the same before and after runs. */
static void test_shared_root_no_leak(void **state)
{
	struct mt_fx *m = *state;
	if (mount(NULL, "/", NULL, MS_REC | MS_SHARED, NULL) < 0)
		fail_msg("make / shared: %s", strerror(errno));
	/* Protected paths exist, so that mode direct binds over them. */
	th_ws_mkdir(&m->fx.ws, ".git");
	th_ws_mkdir(&m->fx.ws, ".vscode");
	th_ws_write(&m->fx.ws, ".envrc", "x\n");
	/* A first run: where the state directory is on overlayfs, it mounts warden's state
	 * tmpfs, the one mount warden leaves on purpose (docs/workspace.md). */
	run_sh(&m->fx, NULL, "changes", "true", 0, "");
	char *before = mount_points();
	run_sh(&m->fx, NULL, "direct", "echo d > d", 0, "");
	run_sh(&m->fx, NULL, "changes", "echo c > c", 0, "");
	run_sh(&m->fx, NULL, "direct", "cat c d", 0, "c\nd\n");
	char *after = mount_points();
	if (strcmp(before, after)) {
		th_print_long("mounts before", before);
		th_print_long("mounts after", after);
		fail_msg("runs left mounts in the host's mount namespace");
	}
	free(before);
	free(after);
	(void)mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

/* Mode changes on overlayfs: the sandbox works on a copy, and the change lands. */
static void test_overlay_changes(void **state)
{
	struct mt_fx *m = *state;
	mount_overlay(m);
	run_sh(&m->fx, m->proj, "changes", "cat a; echo more >> a; echo b > b; id -u", 0,
	       "a\n1000\n");
	assert_string_equal(th_json_str(m->fx.record, "workspace.filesystem"), "overlayfs");
	assert_true(th_json_bool(m->fx.record, "workspace.copied"));
	assert_true(th_json_bool(m->fx.record, "workspace.applied"));
	assert_false(has_weakening(m->fx.record, "workspace-owner-id"));
	assert_true(th_json_num(m->fx.record, "sandbox.host_uid") > 0);
	char p[PATH_MAX];
	th_pathf(p, "%s/a", m->proj);
	th_expect_file(p, "a\nmore\n");
	th_pathf(p, "%s/b", m->proj);
	th_expect_file(p, "b\n");
	/* The copy is gone with the run. */
	const char *id = th_json_str(m->fx.record, "workspace.changeset");
	assert_non_null(id);
	th_pathf(p, STATE_DIR "/changes/%s", id);
	struct stat st;
	assert_int_equal(stat(p, &st), -1);
}

/* Mode direct on a root-owned overlayfs workspace: refused before anything runs. */
static void test_overlay_direct_root_refused(void **state)
{
	struct mt_fx *m = *state;
	mount_overlay(m);
	run_sh(&m->fx, m->proj, "direct", "echo x > x", 125, "");
	if (!strstr(m->fx.out.err, "cannot be idmapped and the workspace belongs to root")) {
		th_show(&m->fx.out);
		fail_msg("the refusal does not say why");
	}
	char p[PATH_MAX];
	th_pathf(p, "%s/x", m->proj);
	struct stat st;
	assert_int_equal(lstat(p, &st), -1);
}

/* Mode direct on a workspace of a normal user: the sandbox is that user, on the record. */
static void test_overlay_direct_owner(void **state)
{
	struct mt_fx *m = *state;
	mount_overlay(m);
	assert_int_equal(chown(m->proj, OWNER, OWNER), 0);
	char p[PATH_MAX];
	th_pathf(p, "%s/a", m->proj);
	assert_int_equal(chown(p, OWNER, OWNER), 0);
	run_sh(&m->fx, m->proj, "direct", "echo more >> a; echo x > x", 0, "");
	assert_true(has_weakening(m->fx.record, "workspace-owner-id"));
	assert_int_equal((int)th_json_num(m->fx.record, "sandbox.host_uid"), OWNER);
	th_expect_file(p, "a\nmore\n");
	th_pathf(p, "%s/x", m->proj);
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_uid, OWNER);
}

/* The state directory on overlayfs: changesets go to a tmpfs warden mounts there. */
static void test_state_on_overlay(void **state)
{
	struct mt_fx *m = *state;
	char u[PATH_MAX], w[PATH_MAX], opts[3 * PATH_MAX + 64];
	assert_int_equal(mkdir(STATE_DIR, 0700) == 0 || errno == EEXIST, true);
	th_aux_path(&m->fx.ws, "state-upper", u);
	th_aux_path(&m->fx.ws, "state-work", w);
	assert_int_equal(mkdir(u, 0700), 0);
	assert_int_equal(mkdir(w, 0700), 0);
	(void)snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", STATE_DIR, u, w);
	if (mount("overlay", STATE_DIR, "overlay", 0, opts) < 0)
		fail_msg("mount an overlay on " STATE_DIR ": %s", strerror(errno));
	m->state_ovl = true;
	struct statfs sf;
	assert_int_equal(statfs(STATE_DIR, &sf), 0);
	assert_true(sf.f_type == OVERLAYFS_SUPER_MAGIC);

	struct th_opts o = th_fx_opts(&m->fx, NULL);
	o.ws_mode = "changes";
	const char *cmd[] = { "sh", "-c", "echo held > kept", NULL };
	th_fx_record_expect(&m->fx, &o, cmd, 0, "");
	assert_int_equal(statfs(STATE_DIR "/changes", &sf), 0);
	assert_true(sf.f_type == TMPFS_MAGIC);
	assert_true(th_json_bool(m->fx.record, "workspace.applied"));
	th_ws_path(&m->fx.ws, "kept", u);
	th_expect_file(u, "held\n");
}

/* doctor names an overlayfs current directory and the fallback, and is still ready. */
static void test_doctor_overlay(void **state)
{
	struct mt_fx *m = *state;
	mount_overlay(m);
	struct th_opts o = th_fx_opts(&m->fx, NULL);
	o.workspace = NULL;
	o.subcommand = "doctor";
	o.cwd = m->proj;
	const char *cmd[] = { "--json", NULL };
	th_fx_run(&m->fx, &o, cmd);
	const cJSON *doc = th_fx_expect_json(&m->fx);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(doc, "ready")));
	const cJSON *c, *found = NULL;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(doc, "checks"))
		if (!strcmp(th_json_str(c, "id"), "idmapped-mounts"))
			found = c;
	assert_non_null(found);
	assert_string_equal(th_json_str(found, "status"), "info");
	assert_non_null(strstr(th_json_str(found, "detail"), "(overlayfs) cannot be idmapped"));
}

#define T(fn) { &#fn[5], fn, fx_setup, fx_teardown, NULL }

int main(void)
{
	th_require_privileged();
	/* Everything below happens in a mount namespace of this program's own. */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		th_cannot_run("a private mount namespace: %s", strerror(errno));

	const struct CMUnitTest tests[] = {
		T(test_shared_root_no_leak),
		T(test_overlay_changes),
		T(test_overlay_direct_root_refused),
		T(test_overlay_direct_owner),
		T(test_state_on_overlay),
		T(test_doctor_overlay),
	};
	return _cmocka_run_group_tests("priv-mounts", tests, sizeof(tests) / sizeof(tests[0]),
				       NULL, NULL);
}
