/* SPDX-License-Identifier: MIT */
/*
 * Privileged integration tests of `warden audit` (supervisor/audit.c, worker/audit.c): the
 * real warden builds its audit sandbox as root, and every row of docs/guarantees.md that the
 * policy does not weaken must come back "held", with its evidence. The rows of workspace
 * mode changes are checked in detail: the overlay named from the worker's mount table, the
 * probe's write absent from the host's tree, the changeset that held it discarded (`warden
 * changes` lists nothing of the audit's) and the workspace left as it was. A policy in
 * workspace mode direct, one that kills on a refused call and one that lets the workspace be
 * anywhere each change exactly the rows they should.
 *
 * Needs full privilege (root with CAP_SYS_ADMIN in the initial user namespace, which puts
 * warden in privileged mode); otherwise the program exits 77, or fails under
 * SBX_TEST_MUST_WORK=1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "harness.h"

/* `warden audit --json` in f's workspace under policy (NULL: the default); its document. */
static const cJSON *audit(struct th_fx *f, const char *policy)
{
	struct th_opts o = th_fx_opts(f, policy);
	o.subcommand = "audit";
	o.hard_timeout_ms = 120000;
	th_fx_run(f, &o, TH_CMD("--json"));
	return th_fx_expect_json(f);
}

/* The row id of an audit document; a missing row fails the test. */
static const cJSON *audit_row(const cJSON *root, const char *id)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, th_json_at(root, "guarantees"))
		if (!strcmp(th_json_str(it, "id"), id))
			return it;
	fail_msg("no audit row '%s'", id);
	return NULL;
}

/* The row id has this status and side, and its evidence holds every needle given. */
static void expect_row(const cJSON *root, const char *id, const char *status, const char *side,
		       const char *const *needles)
{
	const cJSON *r = audit_row(root, id);
	const char *ev = th_json_str(r, "evidence");
	if (strcmp(th_json_str(r, "status"), status) != 0)
		fail_msg("%s: %s, expected %s (%s)", id, th_json_str(r, "status"), status, ev);
	assert_string_equal(th_json_str(r, "side"), side);
	for (size_t i = 0; needles && needles[i]; i++)
		if (!strstr(ev, needles[i]))
			fail_msg("%s: evidence '%s' lacks '%s'", id, ev, needles[i]);
}

/*
 * Nothing of the audit is left: the workspace holds only the probe copy it was made with,
 * and `warden changes` lists no changeset of it (nothing pending, nothing interrupted).
 */
static void expect_nothing_left(const struct th_fx *f)
{
	char *names = th_list_dir(f->ws.dir, NULL);
	assert_non_null(names);
	if (strcmp(names, "probe\n") != 0)
		fail_msg("the audit left in its workspace: %s", names);
	free(names);

	struct th_opts o = { .subcommand = "changes" };
	struct th_out out = { 0 };
	th_run(&o, TH_CMD("--json"), &out);
	if (out.code != 0)
		th_show(&out);
	assert_int_equal(out.code, 0);
	cJSON *list = cJSON_Parse(out.out);
	assert_true(cJSON_IsArray(list));
	const cJSON *it;
	cJSON_ArrayForEach(it, list) {
		const cJSON *ws = cJSON_GetObjectItemCaseSensitive(it, "workspace");
		if (cJSON_IsString(ws) && !strcmp(ws->valuestring, f->ws.dir))
			fail_msg("the audit left changeset %s (%s)", th_json_str(it, "id"),
				 th_json_str(it, "state"));
	}
	cJSON_Delete(list);
	th_out_done(&out);
}

/* warden audit: every guarantee of the default policy holds, from both sides. */
static void test_audit_default(void **state)
{
	struct th_fx *f = *state;
	const cJSON *root = audit(f, NULL);
	assert_true(th_json_bool(root, "held"));
	const cJSON *g = th_json_at(root, "guarantees");
	assert_true(cJSON_IsArray(g));
	int n = cJSON_GetArraySize(g), inside = 0, outside = 0;
	assert_true(n >= 30);
	for (int i = 0; i < n; i++) {
		const cJSON *row = cJSON_GetArrayItem(g, i);
		const char *status = th_json_str(row, "status");
		if (strcmp(status, "held") != 0)
			fail_msg("%s: %s (%s)", th_json_str(row, "id"), status,
				 th_json_str(row, "evidence"));
		if (!strcmp(th_json_str(row, "side"), "inside"))
			inside++;
		else
			outside++;
	}
	assert_true(inside >= 20 && outside >= 15);

	/* The rows of the workspace changeset, set-id bits and workspace places. */
	expect_row(root, "fs.changeset", "held", "outside",
		   TH_CMD("/workspace is overlay (", "inside: wrote .warden-audit-",
			  "host tree: absent before, absent after the write, absent after the run",
			  "holds it (added, would be applied)"));
	expect_row(root, "seccomp.setid", "held", "inside",
		   TH_CMD("chmod 04755: Operation not permitted, mode 0755",
			  "chmod 02755: Operation not permitted, mode 0755", "Seccomp 2"));
	expect_row(root, "fs.workspace-place", "held", "outside",
		   TH_CMD("workspace '/' is the host's root directory",
			  "workspace '/etc' is /etc, a system directory"));
	expect_nothing_left(f);
}

/* A policy that shares the network: the net guarantees are n/a, with the reason; exit 0. */
static void test_audit_weakened(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	th_policy(&f->ws, "namespaces: { net: false }\n", pol);
	const cJSON *root = audit(f, pol);
	const cJSON *g = th_json_at(root, "guarantees");
	int na = 0;
	for (int i = 0; i < cJSON_GetArraySize(g); i++) {
		const cJSON *row = cJSON_GetArrayItem(g, i);
		const char *id = th_json_str(row, "id");
		if (!strncmp(id, "net.", 4) || !strcmp(id, "ns.net")) {
			assert_string_equal(th_json_str(row, "status"), "n/a");
			assert_non_null(strstr(th_json_str(row, "evidence"), "shared"));
			na++;
		}
	}
	assert_true(na >= 5);
	expect_nothing_left(f);
}

/*
 * Workspace mode direct: the sandbox writes the host's tree, so fs.changeset is n/a and says
 * so; the probe's file, which did reach the workspace, is removed by the audit.
 */
static void test_audit_direct(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	th_policy(&f->ws, "workspace: { mode: direct }\n", pol);
	const cJSON *root = audit(f, pol);
	assert_true(th_json_bool(root, "held"));
	expect_row(root, "fs.changeset", "n/a", "outside",
		   TH_CMD("workspace mode direct", "host tree: PRESENT, the audit removed it"));
	expect_row(root, "seccomp.setid", "held", "inside", NULL);
	expect_nothing_left(f);
}

/* Kill mode: a set-id mode is still answered with EPERM (cp -a must see an error, not die). */
static void test_audit_kill_mode(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	th_policy(&f->ws, "seccomp: { default_action: kill }\n", pol);
	const cJSON *root = audit(f, pol);
	assert_true(th_json_bool(root, "held"));
	expect_row(root, "seccomp.setid", "held", "inside",
		   TH_CMD("chmod 04755: Operation not permitted",
			  "chmod 02755: Operation not permitted"));
	expect_row(root, "fs.changeset", "held", "outside", TH_CMD("overlay"));
	expect_nothing_left(f);
}

/* unsafe: [workspace-anywhere] lifts the place rules: that row alone becomes n/a. */
static void test_audit_workspace_anywhere(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	th_policy(&f->ws, "unsafe: [workspace-anywhere]\n", pol);
	const cJSON *root = audit(f, pol);
	assert_true(th_json_bool(root, "held"));
	expect_row(root, "fs.workspace-place", "n/a", "outside", TH_CMD("workspace-anywhere"));
	expect_row(root, "fs.changeset", "held", "outside", NULL);
	expect_nothing_left(f);
}

/* A test named after its function, without the "test_" prefix. */
#define T(fn) { &#fn[5], fn, th_fx_setup_root, th_fx_teardown, NULL }

int main(void)
{
	th_require_privileged();

	const struct CMUnitTest tests[] = {
		T(test_audit_default),
		T(test_audit_weakened),
		T(test_audit_direct),
		T(test_audit_kill_mode),
		T(test_audit_workspace_anywhere),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
