/* SPDX-License-Identifier: MIT */
/*
 * Privileged integration tests of workspace mode "changes" (the default): the sandbox's
 * writes go to a changeset, and warden applies only the safe part to the host's workspace.
 *
 * Each attack test runs warden with the default policy, has the sandbox plant something
 * that a host program would later trust (a git config with core.fsmonitor, a hook, a
 * symlink out of the tree, ...), and then runs the host's own git, as root, in the
 * workspace, and checks that the planted payload never ran: its marker file, a path in the
 * test's aux directory that only a host process can reach, is absent. Where it helps, a
 * control then applies the held path with `warden apply --include` and shows that the same
 * host command does run the payload, so that the test can fail.
 *
 * Other tests check that ordinary work lands (edits, new files, deletions, commits), that a
 * held path is applied by --include, that a conflict is kept until --force, and that a
 * changeset outlives a SIGKILLed supervisor.
 *
 * Needs full privilege (root with CAP_SYS_ADMIN in the initial user namespace) and a git
 * binary on the host; otherwise the program exits 77, or fails under SBX_TEST_MUST_WORK=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "harness.h"

/* Where the changesets of a privileged warden are (supervisor/changes.h). */
#define STATE_DIR "/var/lib/warden/changes"
/* The names a placeholder of workspace mode direct would have had. */
static const char *const placeholder_names[] = { ".devcontainer", ".envrc", ".gitmodules",
						 ".idea", ".vscode" };

/*
 * One test's fixture: the harness's first (see struct th_fx; the test's cmocka initial state
 * is the workspace's owner, NULL for root, and the host side is set up), then the changeset
 * and subcommand state.
 */
struct ws_fx {
	struct th_fx fx;
	char id[64];               /* the changeset of the last run */
	struct th_out cmd;         /* the last warden subcommand (changes, diff, apply) */
	cJSON *json;               /* the last JSON that a subcommand printed */
	char marker[PATH_MAX];     /* the attack's marker file on the host */
};

static int fx_setup(void **state)
{
	if (th_fx_setup_owned(state, sizeof(struct ws_fx)) < 0)
		return -1;
	struct ws_fx *w = *state;
	th_aux_path(&w->fx.ws, "marker", w->marker);
	return 0;
}

static int fx_teardown(void **state)
{
	struct ws_fx *w = *state;
	if (w) {
		th_out_done(&w->cmd);
		cJSON_Delete(w->json);
		th_fx_free(&w->fx);
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Host side                                                                                 */

/*
 * Makes the workspace a repository of the host's with one commit of `file` holding text
 * (the probe is removed: these tests do not need it, and it would show in git status).
 */
static void host_repo(struct ws_fx *w, const char *file, const char *text)
{
	char probe[PATH_MAX];
	th_ws_path(&w->fx.ws, "probe", probe);
	(void)unlink(probe);
	TH_GIT(&w->fx, 0, "init", "-q");
	th_ws_write(&w->fx.ws, file, text);
	TH_GIT(&w->fx, 0, "add", "-A");
	TH_GIT(&w->fx, 0, "commit", "-q", "-m", "host");
	th_fx_chown(&w->fx);
}

/*
 * A changeset remembers when its run started (CLOCK_REALTIME_COARSE, which lags the real time
 * by up to a tick) and treats a host entry whose ctime is not before that as changed on the
 * host. A host file written in the last tick before the run would count as a conflict; letting
 * a few ticks pass after the host's own setup keeps these tests deterministic. (No time is
 * asserted on.)
 */
static void settle(void)
{
	(void)usleep(50000);
}

static bool marker_exists(const struct ws_fx *w)
{
	struct stat st;
	return lstat(w->marker, &st) == 0;
}

static void expect_no_marker(struct ws_fx *w, const char *after)
{
	if (marker_exists(w)) {
		th_show(&w->fx.host_out);
		fail_msg("the sandbox's payload ran on the host (%s): %s exists", after, w->marker);
	}
}

static void expect_marker(struct ws_fx *w, const char *after)
{
	if (!marker_exists(w)) {
		th_show(&w->fx.host_out);
		fail_msg("control: the payload did not run after %s, so the test cannot fail", after);
	}
	(void)unlink(w->marker);
}

static void expect_absent(const struct ws_fx *w, const char *rel)
{
	if (th_ws_exists(&w->fx.ws, rel))
		fail_msg("%s reached the host's workspace", rel);
}

/* ---------------------------------------------------------------------------------------- */
/* warden                                                                                    */

/*
 * `warden run` with the default policy (and, with extra, `run [extra...] -- cmd`), recording
 * into a fresh directory; expects exit code; w->id becomes the run's changeset.
 */
static void run_ws(struct ws_fx *w, const char *const *extra, const char *const *cmd, int code)
{
	struct th_opts o = th_fx_opts(&w->fx, NULL);
	o.options = extra;
	settle();
	th_fx_record_expect(&w->fx, &o, cmd, code, NULL);
	assert_string_equal(th_json_str(w->fx.record, "workspace.mode"), "changes");
	(void)snprintf(w->id, sizeof(w->id), "%s",
		       th_json_str(w->fx.record, "workspace.changeset"));
	assert_true(w->id[0] != '\0');
}

/* `sh -c script` in the sandbox, as run_ws. */
static void run_sh(struct ws_fx *w, const char *script, int code)
{
	run_ws(w, NULL, TH_CMD("sh", "-c", script), code);
}

/* `warden SUB args...`, without a workspace option; code < 0: any exit. */
static void warden_cmd(struct ws_fx *w, const char *sub, const char *const *args, int code)
{
	struct th_opts o = { .subcommand = sub };
	th_out_done(&w->cmd);
	th_run(&o, args, &w->cmd);
	if (code >= 0 && w->cmd.code != code) {
		th_show(&w->cmd);
		fail_msg("warden %s %s: exit %d, expected %d", sub, args[0], w->cmd.code, code);
	}
}

/* The last subcommand printed JSON: parse it into w->json and return it. */
static const cJSON *cmd_json(struct ws_fx *w)
{
	cJSON_Delete(w->json);
	w->json = cJSON_Parse(w->cmd.out);
	if (!w->json) {
		th_show(&w->cmd);
		fail_msg("warden's output is not JSON");
	}
	return w->json;
}

/* `warden diff ID --json` of the last run's changeset. */
static const cJSON *diff_json(struct ws_fx *w)
{
	warden_cmd(w, "diff", TH_CMD(w->id, "--json"), 0);
	return cmd_json(w);
}

/* The entry of a changeset list (`changes --json`) with this id; NULL when none. */
static const cJSON *change_by_id(const cJSON *list, const char *id)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, list) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "id");
		if (cJSON_IsString(v) && strcmp(v->valuestring, id) == 0)
			return it;
	}
	return NULL;
}

/* How many changesets `warden changes --json` lists for this workspace. */
static int changes_for_ws(struct ws_fx *w)
{
	warden_cmd(w, "changes", TH_CMD("--json"), 0);
	const cJSON *list = cmd_json(w), *it;
	int n = 0;
	cJSON_ArrayForEach(it, list) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "workspace");
		n += cJSON_IsString(v) && strcmp(v->valuestring, w->fx.real) == 0;
	}
	return n;
}

/* The state `warden changes --json` gives the changeset id; NULL when it is not listed. */
static const char *change_state(struct ws_fx *w, const char *id)
{
	warden_cmd(w, "changes", TH_CMD("--json"), 0);
	const cJSON *e = change_by_id(cmd_json(w), id);
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "state");
	return cJSON_IsString(s) ? s->valuestring : NULL;
}

/* The {path, kind, verdict, reason} entry of an array (diff --json, record) for path. */
static const cJSON *entry_for(const cJSON *entries, const char *path)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, entries) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(it, "path");
		if (cJSON_IsString(p) && strcmp(p->valuestring, path) == 0)
			return it;
	}
	return NULL;
}

static const char *entry_str(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* entries has path with this verdict (and kind, unless NULL). */
static void expect_entry(const cJSON *entries, const char *path, const char *kind,
			 const char *verdict)
{
	const cJSON *e = entry_for(entries, path);
	if (!e || strcmp(entry_str(e, "verdict"), verdict) != 0 ||
	    (kind && strcmp(entry_str(e, "kind"), kind) != 0)) {
		char *text = cJSON_Print(entries);
		th_print_long("entries", text ? text : "?");
		free(text);
		fail_msg("expected %s %s %s", path, kind ? kind : "(any kind)", verdict);
	}
}

/* The record's workspace.entries. */
static const cJSON *record_entries(const struct ws_fx *w)
{
	const cJSON *e = th_json_at(w->fx.record, "workspace.entries");
	assert_true(cJSON_IsArray(e));
	return e;
}

/* warden told how to apply path: "warden apply ID --include 'PATH'". */
static void expect_held_hint(const struct ws_fx *w, const char *kind, const char *path)
{
	char line[PATH_MAX + 160];
	(void)snprintf(line, sizeof(line), "held %s '%s'", kind, path);
	th_fx_expect_err_has(&w->fx, line);
	(void)snprintf(line, sizeof(line), "warden apply %s --include '%s'", w->id, path);
	th_fx_expect_err_has(&w->fx, line);
}

static void expect_kept_line(const struct ws_fx *w, int held, int refused)
{
	char line[160];
	(void)snprintf(line, sizeof(line), "warden: changeset %s keeps %d held and %d refused path(s)",
		       w->id, held, refused);
	th_fx_expect_err_has(&w->fx, line);
	assert_true(th_json_bool(w->fx.record, "workspace.pending"));
	assert_int_equal((int)th_json_num(w->fx.record, "workspace.n_held"), held);
	assert_int_equal((int)th_json_num(w->fx.record, "workspace.n_refused"), refused);
}

/* A fsmonitor setting that touches the marker, as a shell command line for the sandbox. */
static void fsmonitor_cmd(const struct ws_fx *w, const char *config, char *out, size_t len)
{
	int n = snprintf(out, len, "git config -f %s core.fsmonitor \"sh -c 'touch %s' #\"",
			 config, w->marker);
	assert_true(n > 0 && (size_t)n < len);
}

/* ---------------------------------------------------------------------------------------- */
/* Attacks on the host's git                                                                */

/*
 * .git/commondir points the host's git at a directory the sandbox wrote, whose config sets
 * core.fsmonitor: the next `git status` on the host would run it.
 */
static void test_commondir_fsmonitor(void **state)
{
	struct ws_fx *w = *state;
	host_repo(w, "a", "a\n");
	char cfg[PATH_MAX + 128], script[2 * PATH_MAX + 512];
	fsmonitor_cmd(w, "evil/config", cfg, sizeof(cfg));
	(void)snprintf(script, sizeof(script),
		       "mkdir evil && cp -r .git/objects .git/refs .git/HEAD evil/ && %s && "
		       "echo ../evil > .git/commondir && git status --porcelain >/dev/null",
		       cfg);
	run_sh(w, script, 0);

	TH_GIT(&w->fx, 0, "status");
	expect_no_marker(w, "git status");
	expect_absent(w, ".git/commondir");
	expect_held_hint(w, "added", ".git/commondir");
	expect_kept_line(w, 1, 0);
	expect_entry(record_entries(w), ".git/commondir", "added", "held");
	expect_entry(diff_json(w), ".git/commondir", "added", "held");
	/* The rest of what it wrote is ordinary files, and applied. */
	assert_true(th_ws_exists(&w->fx.ws, "evil/config"));

	/* Control: with the held path applied, the host's git runs the payload. */
	warden_cmd(w, "apply", TH_CMD(w->id, "--include", ".git/commondir"), 0);
	TH_GIT(&w->fx, -1, "status");
	expect_marker(w, "git status with .git/commondir applied");
}

/* A submodule's config, in the host's .git/modules, with core.fsmonitor. */
static void test_submodule_config_fsmonitor(void **state)
{
	struct ws_fx *w = *state;
	char src[PATH_MAX];
	th_aux_path(&w->fx.ws, "subsrc", src);
	TH_GIT(&w->fx, 0, "init", "-q", src);
	TH_GIT(&w->fx, 0, "-C", src, "commit", "-q", "--allow-empty", "-m", "sub");
	host_repo(w, "a", "a\n");
	TH_GIT(&w->fx, 0, "submodule", "add", "-q", src, "sub");
	TH_GIT(&w->fx, 0, "commit", "-q", "-m", "add sub");
	th_fx_chown(&w->fx);
	assert_true(th_ws_exists(&w->fx.ws, ".git/modules/sub/config"));

	char script[PATH_MAX + 256];
	fsmonitor_cmd(w, ".git/modules/sub/config", script, sizeof(script));
	run_sh(w, script, 0);

	TH_GIT(&w->fx, 0, "status");
	expect_no_marker(w, "git status");
	TH_GIT(&w->fx, 0, "submodule", "status");
	expect_no_marker(w, "git submodule status");
	char p[PATH_MAX];
	th_ws_path(&w->fx.ws, ".git/modules/sub/config", p);
	char *cfg = th_read_file(p, 65536, true, NULL);
	assert_non_null(cfg);
	bool planted = strstr(cfg, "fsmonitor") != NULL;
	free(cfg);
	assert_false(planted);
	expect_held_hint(w, "directory", ".git/modules");
	expect_entry(record_entries(w), ".git/modules", "directory", "held");

	/*
	 * Control: applied, the submodule's config makes the host's git status run it. (The
	 * submodule's index, which the host's git status above refreshed, is a conflict: the
	 * apply may exit 1 for it.)
	 */
	warden_cmd(w, "apply", TH_CMD(w->id, "--include", ".git/modules"), -1);
	assert_in_range(w->cmd.code, 0, 1);
	TH_GIT(&w->fx, -1, "status");
	expect_marker(w, "git status with .git/modules applied");
}

/*
 * A repository the sandbox made below the top, with core.fsmonitor in its config, added to
 * the top repository's index: the host's git status would enter it.
 */
static void test_nested_repo_fsmonitor(void **state)
{
	struct ws_fx *w = *state;
	host_repo(w, "a", "a\n");
	char cfg[PATH_MAX + 128], script[2 * PATH_MAX + 512];
	fsmonitor_cmd(w, "sub/.git/config", cfg, sizeof(cfg));
	(void)snprintf(script, sizeof(script),
		       "git init -q sub && echo s > sub/s && git -C sub add s && "
		       "git -C sub -c user.name=a -c user.email=a@b commit -qm s && %s && "
		       "git add sub 2>/dev/null",
		       cfg);
	run_sh(w, script, 0);

	TH_GIT(&w->fx, 0, "status");
	expect_no_marker(w, "git status");
	expect_absent(w, "sub/.git");
	expect_held_hint(w, "directory", "sub/.git");
	expect_entry(record_entries(w), "sub/.git", "directory", "held");
	expect_entry(diff_json(w), "sub/.git", "directory", "held");

	/* Control: with sub/.git applied, the host's git status runs it. */
	warden_cmd(w, "apply", TH_CMD(w->id, "--include", "sub/.git"), 0);
	TH_GIT(&w->fx, -1, "status");
	expect_marker(w, "git status with sub/.git applied");
}

/*
 * The sandbox edits a tracked file and hides the edit from git status with an index bit
 * (flag: "--skip-worktree" or "--assume-unchanged"): the host must still see the change.
 */
static void hidden_change(struct ws_fx *w, const char *flag)
{
	host_repo(w, "a", "a\n");
	char script[256];
	(void)snprintf(script, sizeof(script),
		       "echo changed > a && git update-index %s a && "
		       "test -z \"$(git status --porcelain)\"",
		       flag);
	run_sh(w, script, 0); /* inside, the change is hidden: the attack is real */

	th_ws_expect_file(&w->fx.ws, "a", "changed\n");
	TH_GIT(&w->fx, 0, "ls-files", "-v", "a");
	if (strcmp(w->fx.host_out.out, "H a\n") != 0) {
		th_show(&w->fx.host_out);
		fail_msg("the host's index marks a as hidden");
	}
	TH_GIT(&w->fx, 0, "status", "--porcelain");
	if (!th_has_line(w->fx.host_out.out, " M a")) {
		th_show(&w->fx.host_out);
		fail_msg("the host's git status does not show the sandbox's change to a");
	}
	/* The index that hides it is held, and says why. */
	expect_entry(record_entries(w), ".git/index", "modified", "held");
	expect_entry(diff_json(w), ".git/index", "modified", "held");
	expect_held_hint(w, "modified", ".git/index");
}

static void test_skip_worktree_not_hidden(void **state)
{
	hidden_change(*state, "--skip-worktree");
}

static void test_assume_unchanged_not_hidden(void **state)
{
	hidden_change(*state, "--assume-unchanged");
}

/*
 * The host's own config has core.hooksPath = .husky (as husky sets up); the sandbox writes
 * .husky/pre-commit. The host's next commit must not run it.
 */
static void test_hooks_path_husky(void **state)
{
	struct ws_fx *w = *state;
	host_repo(w, "a", "a\n");
	TH_GIT(&w->fx, 0, "config", "core.hooksPath", ".husky");
	char script[PATH_MAX + 256];
	(void)snprintf(script, sizeof(script),
		       "mkdir -p .husky && printf '#!/bin/sh\\ntouch %s\\n' > .husky/pre-commit && "
		       "chmod 755 .husky/pre-commit",
		       w->marker);
	run_sh(w, script, 0);

	expect_absent(w, ".husky/pre-commit");
	expect_absent(w, ".husky");
	expect_held_hint(w, "directory", ".husky");
	expect_entry(diff_json(w), ".husky", "directory", "held");
	th_ws_write(&w->fx.ws, "a", "host edit\n");
	TH_GIT(&w->fx, 0, "commit", "-q", "-a", "-m", "host commit");
	expect_no_marker(w, "git commit");

	/* Control: applied, the hook runs at the host's next commit. */
	warden_cmd(w, "apply", TH_CMD(w->id, "--include", ".husky"), 0);
	assert_true((th_ws_mode(&w->fx.ws, ".husky/pre-commit") & 0100) != 0);
	th_ws_write(&w->fx.ws, "a", "host edit 2\n");
	TH_GIT(&w->fx, -1, "commit", "-q", "-a", "-m", "host commit 2");
	expect_marker(w, "git commit with .husky applied");
}

/* chmod 777 of .git and of a file: the host keeps .git's mode, the file gets no g/o write. */
static void test_chmod_not_widened(void **state)
{
	struct ws_fx *w = *state;
	host_repo(w, "somefile", "data\n");
	char p[PATH_MAX];
	th_ws_path(&w->fx.ws, "somefile", p);
	assert_int_equal(chmod(p, 0644), 0);
	th_ws_path(&w->fx.ws, ".git", p);
	assert_int_equal(chmod(p, 0755), 0);
	mode_t git_before = th_ws_mode(&w->fx.ws, ".git");

	run_sh(w,
	       "chmod 777 .git somefile && "
	       "test \"$(stat -c %a .git somefile | tr '\\n' ' ')\" = '777 777 '",
	       0);

	assert_int_equal(th_ws_mode(&w->fx.ws, ".git") & 07777, git_before & 07777);
	mode_t m = th_ws_mode(&w->fx.ws, "somefile");
	if (m & 022)
		fail_msg("somefile is mode %04o on the host", (unsigned)(m & 07777));
	assert_true(S_ISREG(m));
	th_ws_expect_file(&w->fx.ws, "somefile", "data\n");
}

/* ---------------------------------------------------------------------------------------- */
/* Ordinary work lands                                                                      */

static void test_ordinary_commit_lands(void **state)
{
	struct ws_fx *w = *state;
	host_repo(w, "a", "a\n");
	th_ws_write(&w->fx.ws, "gone", "gone\n");
	TH_GIT(&w->fx, 0, "add", "gone");
	TH_GIT(&w->fx, 0, "commit", "-q", "-m", "two");
	th_fx_chown(&w->fx);

	run_sh(w,
	       "echo edited > a && mkdir -p new/dir && echo n > new/dir/n && rm gone && "
	       "git add -A && git -c user.name=a -c user.email=a@b commit -qm inside",
	       0);

	assert_false(th_json_bool(w->fx.record, "workspace.pending"));
	assert_true(th_json_bool(w->fx.record, "workspace.applied"));
	assert_int_equal((int)th_json_num(w->fx.record, "workspace.n_held"), 0);
	assert_int_equal((int)th_json_num(w->fx.record, "workspace.n_refused"), 0);
	expect_entry(record_entries(w), "a", "modified", "applied");
	expect_entry(record_entries(w), "gone", "deleted", "applied");
	expect_entry(record_entries(w), "new/dir/n", "added", "applied");

	TH_GIT(&w->fx, 0, "log", "-1", "--format=%s");
	assert_string_equal(w->fx.host_out.out, "inside\n");
	TH_GIT(&w->fx, 0, "status", "--porcelain");
	assert_string_equal(w->fx.host_out.out, "");
	th_ws_expect_file(&w->fx.ws, "a", "edited\n");
	th_ws_expect_file(&w->fx.ws, "new/dir/n", "n\n");
	expect_absent(w, "gone");
	/* What was applied belongs to the workspace's owner. */
	char p[PATH_MAX];
	struct stat st;
	th_ws_path(&w->fx.ws, "new/dir/n", p);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_uid, w->fx.uid);
	assert_int_equal(st.st_gid, w->fx.gid);
	/* Nothing is left pending. */
	assert_int_equal(changes_for_ws(w), 0);
	warden_cmd(w, "diff", TH_CMD(w->id, "--json"), 2);
}

/* A held path stays pending until `warden apply --include` names it. */
static void test_held_envrc_include(void **state)
{
	struct ws_fx *w = *state;
	run_sh(w, "echo 'export X=1' > .envrc", 0);
	expect_absent(w, ".envrc");
	expect_held_hint(w, "added", ".envrc");
	expect_kept_line(w, 1, 0);
	assert_string_equal(change_state(w, w->id), "pending");
	expect_entry(diff_json(w), ".envrc", "added", "held");

	/* A plain apply leaves it held. */
	warden_cmd(w, "apply", TH_CMD(w->id), 1);
	expect_absent(w, ".envrc");
	warden_cmd(w, "apply", TH_CMD(w->id, "--include", ".envrc"), 0);
	th_ws_expect_file(&w->fx.ws, ".envrc", "export X=1\n");
	char p[PATH_MAX];
	struct stat st;
	th_ws_path(&w->fx.ws, ".envrc", p);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_uid, w->fx.uid);
	assert_int_equal(changes_for_ws(w), 0);
}

/* A file changed on the host after the run: apply refuses it, --force overwrites. */
static void test_conflict_needs_force(void **state)
{
	struct ws_fx *w = *state;
	th_ws_write(&w->fx.ws, "f", "host0\n");
	th_fx_chown(&w->fx);
	run_ws(w, TH_CMD("--apply", "none"), TH_CMD("sh", "-c", "echo sandbox > f"), 0);
	assert_false(th_json_bool(w->fx.record, "workspace.applied"));
	assert_true(th_json_bool(w->fx.record, "workspace.pending"));
	th_ws_expect_file(&w->fx.ws, "f", "host0\n");
	expect_entry(diff_json(w), "f", "modified", "applied"); /* would be */

	th_ws_write(&w->fx.ws, "f", "host1\n");
	warden_cmd(w, "apply", TH_CMD(w->id), 1);
	th_ws_expect_file(&w->fx.ws, "f", "host1\n");
	const cJSON *d = diff_json(w);
	expect_entry(d, "f", "modified", "refused");
	if (!strstr(entry_str(entry_for(d, "f"), "reason"), "changed on the host"))
		fail_msg("the refusal does not say the host changed it");
	assert_string_equal(change_state(w, w->id), "pending");

	warden_cmd(w, "apply", TH_CMD(w->id, "--force"), 0);
	th_ws_expect_file(&w->fx.ws, "f", "sandbox\n");
	assert_int_equal(changes_for_ws(w), 0);
}

/* ---------------------------------------------------------------------------------------- */
/* A SIGKILLed supervisor                                                                    */

static void test_supervisor_killed_interrupted(void **state)
{
	struct ws_fx *w = *state;
	struct th_fx *f = &w->fx;
	th_marker("ws-kill", f->marker, sizeof(f->marker));
	struct th_opts o = th_fx_opts(f, NULL);
	struct th_proc p;
	settle();
	assert_int_equal(th_spawn(&o,
				  TH_CMD("sh", "-c",
					 "echo x > f && exec " TH_PROBE " sleep 30 \"$1\"", "sh",
					 f->marker),
				  &p),
			 0);
	/* f is written before the probe starts. */
	int seen = 0;
	for (int i = 0; i < 500 && !seen; i++) {
		seen = th_count_procs(f->marker, "probe", p.pid);
		if (!seen)
			(void)usleep(20000);
	}
	/* The running changeset of this workspace, and f in its layer. */
	char id[64] = "", upper_f[PATH_MAX] = "";
	for (int i = 0; seen && i < 500 && !id[0]; i++) {
		warden_cmd(w, "changes", TH_CMD("--json"), 0);
		const cJSON *it;
		cJSON_ArrayForEach(it, cmd_json(w)) {
			if (strcmp(entry_str(it, "workspace"), w->fx.real) == 0 &&
			    strcmp(entry_str(it, "state"), "running") == 0)
				(void)snprintf(id, sizeof(id), "%s", entry_str(it, "id"));
		}
		if (!id[0])
			(void)usleep(20000);
	}
	bool in_layer = false;
	if (id[0]) {
		th_pathf(upper_f, "%s/%s/layer/upper/f", STATE_DIR, id);
		struct stat st;
		for (int i = 0; i < 500 && !in_layer; i++) {
			in_layer = lstat(upper_f, &st) == 0;
			if (!in_layer)
				(void)usleep(20000);
		}
	}
	(void)kill(p.pid, SIGKILL); /* warden only; the sandbox dies with it */
	th_fx_finish(f, &p);
	int left = 1;
	for (int i = 0; i < 500 && left; i++) {
		left = th_count_procs(f->marker, NULL, 0);
		if (left)
			(void)usleep(20000);
	}
	assert_int_equal(seen, 1);
	if (!id[0])
		fail_msg("no running changeset for %s", w->fx.real);
	if (!in_layer)
		fail_msg("%s never appeared", upper_f);
	assert_int_equal(f->out.code, 128 + SIGKILL);
	assert_int_equal(left, 0);
	expect_absent(w, "f");

	/* Its lock went with the last process: the changeset is interrupted, not running. */
	const char *st = NULL;
	for (int i = 0; i < 500; i++) {
		st = change_state(w, id);
		if (!st || strcmp(st, "running") != 0)
			break;
		(void)usleep(20000);
	}
	if (!st || strcmp(st, "interrupted") != 0)
		fail_msg("changeset %s is '%s', expected 'interrupted'", id, st ? st : "(gone)");
	(void)snprintf(w->id, sizeof(w->id), "%s", id);
	expect_entry(diff_json(w), "f", "added", "applied");
	warden_cmd(w, "apply", TH_CMD(id), 0);
	th_ws_expect_file(&w->fx.ws, "f", "x\n");
	assert_int_equal(changes_for_ws(w), 0);
}

/* ---------------------------------------------------------------------------------------- */
/* git works inside, and no placeholder is ever committed                                   */

static void expect_no_placeholder_names(const char *names, const char *what)
{
	for (size_t i = 0; i < sizeof(placeholder_names) / sizeof(placeholder_names[0]); i++)
		if (th_has_line(names, placeholder_names[i])) {
			th_print_long(what, names);
			fail_msg("%s lists %s", what, placeholder_names[i]);
		}
}

static const char git_inside[] =
	"git config --global user.name a && git config --global user.email a@b && "
	"echo b > b && git add -A && git commit -qm inside && "
	"git show --name-only --format= HEAD";

static void test_git_in_empty_workspace(void **state)
{
	struct ws_fx *w = *state;
	char probe[PATH_MAX];
	th_ws_path(&w->fx.ws, "probe", probe);
	assert_int_equal(unlink(probe), 0);
	char script[512];
	(void)snprintf(script, sizeof(script), "git init -q && %s", git_inside);
	run_sh(w, script, 0);
	/* The commit made inside, which the host does not get (its new .git is held). */
	assert_string_equal(w->fx.out.out, "b\n");
	expect_no_placeholder_names(w->fx.out.out, "the sandbox's commit");
	expect_absent(w, ".git");
	expect_entry(record_entries(w), ".git", "directory", "held");
	th_ws_expect_file(&w->fx.ws, "b", "b\n");
	for (size_t i = 0; i < sizeof(placeholder_names) / sizeof(placeholder_names[0]); i++)
		expect_absent(w, placeholder_names[i]);
}

static void test_git_in_host_repo(void **state)
{
	struct ws_fx *w = *state;
	host_repo(w, "a", "a\n");
	run_sh(w, git_inside, 0);
	assert_string_equal(w->fx.out.out, "b\n");
	assert_false(th_json_bool(w->fx.record, "workspace.pending"));

	TH_GIT(&w->fx, 0, "log", "--name-only", "--format=");
	expect_no_placeholder_names(w->fx.host_out.out, "the host's commits");
	TH_GIT(&w->fx, 0, "show", "--name-only", "--format=", "HEAD");
	assert_string_equal(w->fx.host_out.out, "b\n");
	TH_GIT(&w->fx, 0, "ls-files");
	assert_string_equal(w->fx.host_out.out, "a\nb\n");
	TH_GIT(&w->fx, 0, "status", "--porcelain");
	assert_string_equal(w->fx.host_out.out, "");
	for (size_t i = 0; i < sizeof(placeholder_names) / sizeof(placeholder_names[0]); i++)
		expect_absent(w, placeholder_names[i]);
}

/* ---------------------------------------------------------------------------------------- */
/* Entries that are never applied                                                            */

static void test_symlinks(void **state)
{
	struct ws_fx *w = *state;
	/*
	 * d/rel -> ../d/f stays inside (it climbs one level from d/ and comes back down); so does
	 * rel -> d/f. A top-level link to ../d/f would climb out of the workspace and is refused
	 * like esc.
	 */
	run_sh(w,
	       "ln -s /etc/passwd abs && ln -s ../../x esc && ln -s ok/../.. tricky && "
	       "mkdir d && echo f > d/f && ln -s ../d/f d/rel && ln -s d/f rel && "
	       "ln -s ../d/f up",
	       0);
	static const char *const refused[] = { "abs", "esc", "tricky", "up" };
	const cJSON *d = diff_json(w);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		expect_absent(w, refused[i]);
		expect_entry(d, refused[i], "added", "refused");
		expect_entry(record_entries(w), refused[i], "added", "refused");
	}
	expect_kept_line(w, 0, 4);
	static const char *const applied[][2] = { { "d/rel", "../d/f" }, { "rel", "d/f" } };
	for (size_t i = 0; i < 2; i++) {
		char p[PATH_MAX], target[PATH_MAX];
		th_ws_path(&w->fx.ws, applied[i][0], p);
		ssize_t n = readlink(p, target, sizeof(target) - 1);
		if (n < 0)
			fail_msg("%s is not a symlink on the host: %s", applied[i][0], strerror(errno));
		target[n] = '\0';
		assert_string_equal(target, applied[i][1]);
		expect_entry(record_entries(w), applied[i][0], "added", "applied");
		assert_null(entry_for(d, applied[i][0])); /* applied: no longer in the changeset */
	}
	th_ws_expect_file(&w->fx.ws, "d/rel", "f\n");
	/* What was refused goes with the changeset. */
	warden_cmd(w, "discard", TH_CMD(w->id), 0);
	assert_int_equal(changes_for_ws(w), 0);
	warden_cmd(w, "apply", TH_CMD(w->id), 2);
}

/*
 * A tree deeper than any walk's limit (300 folders): held, kept, and still removed whole by
 * discard, with nothing left in the state directory.
 */
static void test_deep_tree_discarded(void **state)
{
	struct ws_fx *w = *state;
	run_sh(w, "p=$(printf 'a/%.0s' $(seq 300)) && mkdir -p \"$p\" && echo x > \"${p}f\"", 0);
	assert_int_equal(changes_for_ws(w), 1);
	warden_cmd(w, "discard", TH_CMD(w->id), 0);
	assert_int_equal(changes_for_ws(w), 0);
	char dir[PATH_MAX];
	th_pathf(dir, STATE_DIR "/%s", w->id);
	if (access(dir, F_OK) == 0)
		fail_msg("%s is still there after discard", dir);
}

static void test_fifo_and_setuid(void **state)
{
	struct ws_fx *w = *state;
	/* The chmod may fail (seccomp refuses set-id bits): either way t must land plain. */
	run_sh(w, "mkfifo p && cp /bin/true t && { chmod 4755 t; chmod 2755 t; true; }", 0);
	expect_absent(w, "p");
	expect_entry(record_entries(w), "p", "special", "refused");
	expect_entry(diff_json(w), "p", "special", "refused");
	expect_kept_line(w, 0, 1);
	mode_t m = th_ws_mode(&w->fx.ws, "t");
	assert_true(S_ISREG(m));
	if (m & 07022)
		fail_msg("t is mode %04o on the host", (unsigned)(m & 07777));
	expect_entry(record_entries(w), "t", "added", "applied");
}

/* ---------------------------------------------------------------------------------------- */
/* warden diff                                                                               */

/* The last subcommand's stdout has text; on a miss it is shown. */
static void expect_cmd_out_has(const struct ws_fx *w, const char *text)
{
	if (!strstr(w->cmd.out, text)) {
		th_show(&w->cmd);
		fail_msg("warden's output does not have '%s'", text);
	}
}

static void test_diff_text_hunk(void **state)
{
	struct ws_fx *w = *state;
	static const char before[] = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n";
	th_ws_write(&w->fx.ws, "notes.txt", before);
	th_fx_chown(&w->fx);
	/* an edit to review, and a line that would clear the reviewer's screen if shown raw */
	run_ws(w, TH_CMD("--apply", "none"),
	       TH_CMD("sh", "-c",
		      "sed -i s/four/FOUR/ notes.txt && printf 'x\\033[2Jy\\n' > esc.txt"),
	       0);
	th_ws_expect_file(&w->fx.ws, "notes.txt", before); /* apply none: the host has not changed */
	expect_absent(w, "esc.txt");

	warden_cmd(w, "diff", TH_CMD(w->id), 0);
	expect_cmd_out_has(w, "apply    modified  notes.txt\n");
	expect_cmd_out_has(w, "--- a/notes.txt\n+++ b/notes.txt\n"
			      "@@ -1,7 +1,7 @@\n one\n two\n three\n-four\n+FOUR\n five\n six\n"
			      " seven\n");
	expect_cmd_out_has(w, "new file mode 0644\n--- /dev/null\n+++ b/esc.txt\n"
			      "@@ -0,0 +1 @@\n+x\\x1b[2Jy\n");
	if (memchr(w->cmd.out, 0x1b, w->cmd.out_len)) {
		th_show(&w->cmd);
		fail_msg("a raw escape byte from the sandbox reached warden diff's output");
	}

	/* --json: the same text per file */
	const cJSON *d = diff_json(w);
	const cJSON *e = entry_for(d, "notes.txt");
	if (!strstr(entry_str(e, "diff"), "@@ -1,7 +1,7 @@\n one\n two\n three\n-four\n+FOUR\n")) {
		th_show(&w->cmd);
		fail_msg("diff --json has no hunk for notes.txt");
	}
	/* --stat: none */
	warden_cmd(w, "diff", TH_CMD(w->id, "--stat"), 0);
	assert_null(strstr(w->cmd.out, "@@"));
	expect_cmd_out_has(w, "2 to apply, 0 held, 0 refused\n");
}

/* ---------------------------------------------------------------------------------------- */

/* A test named after its function, without the "test_" prefix; U: workspace of a user. */
#define T(fn) { &#fn[5], fn, fx_setup, fx_teardown, NULL }
#define U(name) { "user_" #name, test_##name, fx_setup, fx_teardown, (void *)&th_user_owner }

int main(void)
{
	th_require_privileged();
	if (!th_git())
		th_cannot_run("needs git on the host");

	const struct CMUnitTest tests[] = {
		T(test_commondir_fsmonitor),
		U(commondir_fsmonitor),
		T(test_submodule_config_fsmonitor),
		T(test_nested_repo_fsmonitor),
		T(test_skip_worktree_not_hidden),
		T(test_assume_unchanged_not_hidden),
		T(test_hooks_path_husky),
		T(test_chmod_not_widened),
		T(test_ordinary_commit_lands),
		U(ordinary_commit_lands),
		T(test_held_envrc_include),
		U(held_envrc_include),
		T(test_conflict_needs_force),
		U(conflict_needs_force),
		T(test_supervisor_killed_interrupted),
		T(test_git_in_empty_workspace),
		T(test_git_in_host_repo),
		T(test_symlinks),
		T(test_deep_tree_discarded),
		T(test_fifo_and_setuid),
		T(test_diff_text_hunk),
		U(diff_text_hunk),
	};
	return _cmocka_run_group_tests("priv-workspace", tests, sizeof(tests) / sizeof(tests[0]),
				       NULL, NULL);
}
