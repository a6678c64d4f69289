/* SPDX-License-Identifier: MIT */
/*
 * Many sandboxes at once.
 *
 * - 50 concurrent sandboxes, each with `limits: { memory: 64M, pids: 16 }` and each trying to
 *   exhaust its limit (half `probe forkbomb 100`, half `probe membomb 256`): every one is
 *   stopped by its own limit, every record is its own (its own policy file, command and host
 *   uid), and a plain run started meanwhile completes within RESPONSIVE_MS.
 * - Concurrent runs that share one workspace: each must succeed, and one run ending must not
 *   lift the protections of another. Missing protected paths are covered by placeholder
 *   files in the workspace itself, which every run in that workspace sees and binds.
 *
 * Needs full privilege; otherwise exits 77, or fails under SBX_TEST_MUST_WORK=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rel.h"

#define N_STRESS 50
/* A run started while the 50 run must complete within this. */
#define RESPONSIVE_MS 10000u
/* All 50 must have ended within this (each is stopped by its limit within a second or so). */
#define STRESS_BOUND_MS 60000u
#define N_SHARED 50
#define SHARED_ROUNDS 4

struct slot {
	struct th_ws ws;
	char policy[PATH_MAX];
	char rec[PATH_MAX];
	struct th_proc p;
	struct th_out out;
	pid_t pid;
	bool spawned;
};

/*
 * One test's fixture: the harness's first (see struct th_fx; its workspace is the one that
 * concurrent runs share, its marker run A's), then the slots of concurrent runs, each with a
 * workspace of its own where a test needs one.
 */
struct stress_fx {
	struct th_fx fx;
	struct slot s[N_STRESS + 1];  /* the last one: the responsiveness run */
	struct rel_cgroups cg;
	char marker_b[96];            /* run B's processes, killed at teardown */
};

static int fx_setup(void **state)
{
	if (th_fx_setup(state, sizeof(struct stress_fx), 0, 0) < 0)
		return -1;
	struct stress_fx *f = *state;
	rel_cgroups_find(&f->cg);
	th_marker("stress-a", f->fx.marker, sizeof(f->fx.marker));
	th_marker("stress-b", f->marker_b, sizeof(f->marker_b));
	return 0;
}

static int fx_teardown(void **state)
{
	struct stress_fx *f = *state;
	/* Marked processes first, so that no leftover holds a slot's output open. */
	th_kill_procs(f->fx.marker, 0);
	th_kill_procs(f->marker_b, 0);
	for (int i = 0; i < N_STRESS + 1; i++) {
		struct slot *s = &f->s[i];
		if (s->spawned) {
			(void)kill(-s->p.pid, SIGKILL);
			th_finish(&s->p, &s->out);
		}
		th_out_done(&s->out);
		if (s->ws.dir[0] || s->ws.aux[0])
			th_ws_remove(&s->ws);
	}
	th_fx_free(&f->fx);
	return 0;
}

static void new_ws(struct th_ws *ws)
{
	int r = th_ws_new(ws, 0, 0);
	if (r < 0)
		fail_msg("create a workspace: %s", strerror(-r));
}

/* The largest "TOUCHED n" of a membomb's output. */
static long touched(const char *out)
{
	long max = -1;
	for (const char *l = out; l && *l;) {
		long n;
		if (sscanf(l, "TOUCHED %ld", &n) == 1 && n > max)
			max = n;
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	return max;
}

/* Checks one of the 50: stopped by its own limit, with a record of its own. */
static void check_stress_run(struct slot *s, bool forkbomb, double *host_uid)
{
	const struct th_out *o = &s->out;
	if (o->code != 137)
		th_show_named(forkbomb ? "forkbomb" : "membomb", o);
	assert_int_equal(o->code, 137);
	cJSON *r = th_record_load(s->rec);
	const char *reason = th_json_str(r, "exit.reason");
	bool ok = true;
	if (forkbomb) {
		long forked = -1;
		if (sscanf(o->out, "FORKED %ld", &forked) != 1 || forked < 1 || forked >= 16) {
			th_show_named("forkbomb", o);
			ok = false;
		}
		ok = ok && strcmp(reason, "pids-limit") == 0 &&
		     th_json_num(r, "resources.pids_limit_hits") >= 1 &&
		     th_json_num(r, "resources.oom_kills") == 0;
	} else {
		long mib = touched(o->out);
		if (mib >= 64) {
			th_show_named("membomb", o);
			ok = false;
		}
		ok = ok && strcmp(reason, "oom") == 0 && th_json_num(r, "resources.oom_kills") >= 1 &&
		     th_json_num(r, "resources.pids_limit_hits") == 0;
	}
	/* Its own record: its own policy file and its own command. */
	ok = ok && strcmp(th_json_str(r, "policy.source"), s->policy) == 0;
	const cJSON *cmd = th_json_at(r, "command");
	const cJSON *word = cJSON_GetArrayItem(cmd, 1);
	ok = ok && cJSON_IsString(word) &&
	     strcmp(word->valuestring, forkbomb ? "forkbomb" : "membomb") == 0;
	ok = ok && (int)th_json_num(r, "exit.code") == 137 &&
	     th_json_bool(r, "sandbox.cgroup_emptied");
	*host_uid = th_json_num(r, "sandbox.host_uid");
	if (!ok) {
		char *text = cJSON_Print(r);
		print_error("record of %s:\n%s\n", s->rec, text ? text : "?");
		free(text);
	}
	cJSON_Delete(r);
	assert_true(ok);
	assert_true(*host_uid >= TH_HOST_ID_BASE);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void test_limits_concurrent(void **state)
{
	struct stress_fx *f = *state;
	for (int i = 0; i < N_STRESS + 1; i++) {
		struct slot *s = &f->s[i];
		new_ws(&s->ws);
		char yaml[128];
		(void)snprintf(yaml, sizeof(yaml), "# sandbox %d\nlimits: { memory: 64M, pids: 16 }\n",
			       i);
		th_policy(&s->ws, yaml, s->policy);
		th_aux_path(&s->ws, "record", s->rec);
	}
	uint64_t t0 = th_now_ms();
	for (int i = 0; i < N_STRESS; i++) {
		struct slot *s = &f->s[i];
		struct th_opts o = { .workspace = s->ws.dir, .policy = s->policy, .record = s->rec,
				     .hard_timeout_ms = STRESS_BOUND_MS };
		const char *const *cmd = i % 2 ? TH_CMD(TH_PROBE, "membomb", "256")
					       : TH_CMD(TH_PROBE, "forkbomb", "100");
		int r = th_spawn(&o, cmd, &s->p);
		if (r < 0)
			fail_msg("spawn warden %d: %s", i, strerror(-r));
		s->spawned = true;
		s->pid = s->p.pid;
	}
	uint64_t spawned_ms = th_now_ms() - t0;

	/* While they run: is the host still responsive? */
	struct slot *c = &f->s[N_STRESS];
	struct th_opts co = { .workspace = c->ws.dir, .record = c->rec,
			      .hard_timeout_ms = STRESS_BOUND_MS };
	assert_int_equal(th_spawn(&co, TH_CMD(TH_PROBE, "exit", "0"), &c->p), 0);
	c->spawned = true;
	c->pid = c->p.pid;
	th_finish(&c->p, &c->out);
	c->spawned = false;

	for (int i = 0; i < N_STRESS; i++) {
		th_finish(&f->s[i].p, &f->s[i].out);
		f->s[i].spawned = false;
	}
	uint64_t total_ms = th_now_ms() - t0;
	print_message("%d sandboxes at their limits: all spawned in %llu ms, all ended after "
		      "%llu ms; a plain run meanwhile took %llu ms\n", N_STRESS,
		      (unsigned long long)spawned_ms, (unsigned long long)total_ms,
		      (unsigned long long)c->out.elapsed_ms);

	if (c->out.code != 0)
		th_show_named("plain run", &c->out);
	assert_int_equal(c->out.code, 0);
	assert_true(c->out.elapsed_ms <= RESPONSIVE_MS);
	assert_true(total_ms <= STRESS_BOUND_MS);

	double uids[N_STRESS + 1];
	for (int i = 0; i < N_STRESS; i++)
		check_stress_run(&f->s[i], i % 2 == 0, &uids[i]);
	cJSON *r = th_record_load(c->rec);
	uids[N_STRESS] = th_json_num(r, "sandbox.host_uid");
	assert_string_equal(th_json_str(r, "exit.reason"), "exited");
	cJSON_Delete(r);
	/* Every sandbox ran as a host uid of its own. */
	qsort(uids, N_STRESS + 1, sizeof(uids[0]), cmp_double);
	for (int i = 1; i < N_STRESS + 1; i++)
		if (uids[i] == uids[i - 1])
			fail_msg("two sandboxes ran as host uid %.0f", uids[i]);
	/* And nothing is left of any of them. */
	for (int i = 0; i < N_STRESS + 1; i++) {
		char names[512];
		if (rel_cgroups_count(&f->cg, f->s[i].pid, names, sizeof(names)))
			fail_msg("cgroup(s) of supervisor %d left: %s", (int)f->s[i].pid, names);
	}
}

/* Concurrent runs in one workspace all succeed, and leave the workspace as it was. */
static void test_shared_workspace_concurrent(void **state)
{
	struct stress_fx *f = *state;
	int failed = 0;
	char first[2048] = "";
	for (int round = 0; round < SHARED_ROUNDS; round++) {
		struct th_proc p[N_SHARED];
		for (int i = 0; i < N_SHARED; i++) {
			struct th_opts o = th_fx_opts(&f->fx, NULL);
			assert_int_equal(th_spawn(&o, TH_CMD(TH_PROBE, "exit", "0"), &p[i]), 0);
		}
		for (int i = 0; i < N_SHARED; i++) {
			struct th_out out;
			th_finish(&p[i], &out);
			if (out.code != 0 && !failed++)
				(void)snprintf(first, sizeof(first), "exit %d: %s", out.code, out.err);
			else if (out.code != 0)
				print_error("also: exit %d: %s", out.code, out.err);
			th_out_done(&out);
		}
	}
	if (failed)
		fail_msg("%d of %d runs sharing a workspace failed; the first: %s", failed,
			 N_SHARED * SHARED_ROUNDS, first);
	th_expect_names(f->fx.ws.dir, "probe\n");
}

/*
 * Run A and run B share a workspace without .git, .envrc and the like. B starts while A's
 * placeholders cover them; then A ends. B must still be unable to create any protected path
 * in the host workspace.
 */
static void test_neighbour_end_keeps_protection(void **state)
{
	struct stress_fx *f = *state;
	struct slot *a = &f->s[0], *b = &f->s[1];
	/* Placeholders are workspace mode direct's (in mode changes nothing reaches the host). */
	f->fx.ws_mode = "direct";
	struct th_opts ao = th_fx_opts(&f->fx, NULL);
	assert_int_equal(th_spawn(&ao, TH_CMD(TH_PROBE, "sleep", "30", f->fx.marker), &a->p), 0);
	a->spawned = true;
	int up = rel_wait_procs(f->fx.marker, "probe", a->p.pid, 1, false, 10000);

	int go[2];
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	struct th_opts bo = th_fx_opts(&f->fx, NULL);
	bo.stdin_fd = go[0];
	static const char script[] =
		"read go; "
		"/workspace/probe write /workspace/.envrc; "
		"/workspace/probe mkdir /workspace/.git; "
		"/workspace/probe write /workspace/.gitmodules; "
		"/workspace/probe mkdir /workspace/.vscode";
	assert_int_equal(th_spawn(&bo, TH_CMD("sh", "-c", script, f->marker_b), &b->p), 0);
	b->spawned = true;
	(void)close(go[0]);
	int b_up = rel_wait_procs(f->marker_b, "sh", b->p.pid, 1, false, 10000);

	/* A ends (as it would at its own command's end) while B runs. */
	(void)kill(a->p.pid, SIGTERM);
	th_finish(&a->p, &a->out);
	a->spawned = false;
	char *between = th_list_dir(f->fx.ws.dir, NULL);
	assert_non_null(between);

	/* Now B tries to plant what would run on the host later. */
	assert_int_equal(write(go[1], "go\n", 3), 3);
	(void)close(go[1]);
	th_finish(&b->p, &b->out);
	b->spawned = false;
	char *after = th_list_dir(f->fx.ws.dir, NULL);
	assert_non_null(after);
	print_message("workspace after A ended:\n%safter B:\n%sB's attempts:\n%s", between, after,
		      b->out.out);
	free(between);
	free(after);

	assert_int_equal(up, 1);
	assert_int_equal(b_up, 1);
	assert_int_equal(a->out.code, 128 + SIGTERM);
	if (b->out.code == 125)
		th_show_named("run B", &b->out);
	assert_int_not_equal(b->out.code, 125);
	/* Every attempt refused, and nothing planted in the host workspace. */
	int lines = 0;
	for (const char *l = b->out.out; *l; lines++) {
		if (strncmp(l, "ERR ", 4) != 0) {
			th_show_named("run B", &b->out);
			fail_msg("run B created a protected path after its neighbour ended");
		}
		l = strchr(l, '\n');
		l = l ? l + 1 : "";
	}
	if (lines != 4)
		th_show_named("run B", &b->out);
	assert_int_equal(lines, 4);
	th_expect_names(f->fx.ws.dir, "probe\n");
}

/* ---------------------------------------------------------------------------------------- */

/* A test named after its function, without the "test_" prefix. */
#define T(fn) { &#fn[5], fn, fx_setup, fx_teardown, NULL }

int main(void)
{
	th_require_privileged();
	const struct CMUnitTest tests[] = {
		T(test_limits_concurrent),
		T(test_shared_workspace_concurrent),
		T(test_neighbour_end_keeps_protection),
	};
	return cmocka_run_group_tests_name("reliability-stress", tests, NULL, NULL);
}
