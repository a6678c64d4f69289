/* SPDX-License-Identifier: MIT */
/*
 * Privileged integration tests of workspace mode "direct": the sandbox writes the host's tree
 * live, so what a host program would later trust is made read-only for the run instead.
 *
 * - The top-level .git is read-only whole: no write, rename or chmod below or of it, whether
 *   it is a directory, a gitfile pointing into the workspace (relative or absolute, through a
 *   path with directories above the target, or to a worktree's "commondir"), or missing (an
 *   empty read-only directory stands there). A gitfile pointing outside needs nothing: the
 *   sandbox does not see the path. A pointer that reaches the workspace through a symlink
 *   refuses the run.
 * - git works inside, read-only: `git config --global`, `git status`; `git init` and
 *   `git add -A` are refused without "invalid gitfile format". No placeholder is ever in a
 *   commit or in git status inside (the sandbox's global excludes file lists them), none is
 *   left on the host, and, with no .git, the workspace cannot be made a bare repository.
 * - Every entry of the default filesystem.protect list is read-only when it exists, and cannot
 *   be made when it is missing.
 *
 * The host side runs the host's own git, as root, in the workspace, as tests/priv/test-workspace.c
 * does. Needs full privilege (root with CAP_SYS_ADMIN in the initial user namespace) and a git
 * binary on the host; otherwise the program exits 77, or fails under SBX_TEST_MUST_WORK=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

/* The default policy's filesystem.protect list (policy/default.yaml); directories end in '/'. */
static const char *const protect_list[] = {
	".gitmodules", ".gitconfig", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout",
	".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".cshrc",
	".tcshrc", ".envrc", ".vscode/", ".idea/", ".devcontainer/", ".devcontainer.json",
	".claude/", ".mcp.json", ".codex/", ".husky/", ".pre-commit-config.yaml", ".yarnrc.yml",
	".yarnrc", ".npmrc", ".pnpmfile.cjs",
};
#define N_PROTECT (sizeof(protect_list) / sizeof(protect_list[0]))

/*
 * One test's fixture: the harness's, in workspace mode direct (the test's cmocka initial state
 * is the workspace's owner, NULL for root; the host user's side is set up).
 */
static int fx_setup(void **state)
{
	if (th_fx_setup_owned(state, sizeof(struct th_fx)) < 0)
		return -1;
	struct th_fx *d = *state;
	d->ws_mode = "direct";
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Host side                                                                                 */

/* Removes the probe: git tests want nothing in the workspace that they did not put there. */
static void drop_probe(struct th_fx *d)
{
	char p[PATH_MAX];
	th_ws_path(&d->ws, "probe", p);
	assert_int_equal(unlink(p), 0);
}

/* Makes the workspace a repository of the host's with one commit of file a (and the probe). */
static void host_repo(struct th_fx *d)
{
	TH_GIT(d, 0, "init", "-q");
	th_ws_write(&d->ws, "a", "a\n");
	TH_GIT(d, 0, "add", "-A");
	TH_GIT(d, 0, "commit", "-q", "-m", "host");
	th_fx_chown(d);
}

/*
 * Creates the protect list's entry i in the workspace: a directory (holding a file f with
 * text, unless text is NULL), or a file holding text ("" when NULL).
 */
static void make_protected(struct th_fx *d, size_t i, const char *text)
{
	char rel[PATH_MAX], p[PATH_MAX];
	(void)snprintf(rel, sizeof(rel), "%s", protect_list[i]);
	size_t len = strlen(rel);
	if (rel[len - 1] != '/') {
		th_ws_write(&d->ws, rel, text ? text : "");
		return;
	}
	rel[len - 1] = '\0';
	th_ws_mkdir(&d->ws, rel);
	if (text) {
		th_pathf(p, "%s/f", rel);
		th_ws_write(&d->ws, p, text);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* warden                                                                                    */

/* cmd in the sandbox, workspace mode direct, default policy; expects code and (unless NULL) out. */
static void run_expect(struct th_fx *d, const char *const *cmd, int code, const char *out)
{
	th_fx_run_expect(d, NULL, cmd, code, out);
}

/* `sh -c script` as run_expect. */
static void sh_expect(struct th_fx *d, const char *script, int code, const char *out)
{
	run_expect(d, TH_CMD("sh", "-c", script), code, out);
}

/* The probe's write-like command on path was refused by a read-only mount. */
static void probe_erofs(struct th_fx *d, const char *what, const char *path)
{
	run_expect(d, TH_CMD(TH_PROBE, what, path), 1, "ERR EROFS 30\n");
}

/* A rename that must fail (a mount point, or a read-only mount): any error will do. */
static void probe_rename_refused(struct th_fx *d, const char *from, const char *to)
{
	th_fx_run(d, NULL, TH_CMD(TH_PROBE, "rename", from, to));
	if (strncmp(d->out.out, "ERR ", 4) != 0) {
		th_show(&d->out);
		fail_msg("%s could be renamed to %s", from, to);
	}
}

static void expect_err_lacks(const struct th_fx *d, const char *text)
{
	if (strstr(d->out.err, text)) {
		th_show(&d->out);
		fail_msg("the run's stderr says '%s'", text);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* git inside, in an empty workspace and in a repository the host made                       */

/*
 * In the sandbox: git's global settings can be written (an empty .git directory is no gitfile
 * for git to die on), `git init` is refused, and git finds no repository. A repository whose
 * git directory is in /tmp and whose work tree is the workspace commits only what the sandbox
 * wrote, and git status shows no placeholder; without the excludes file (control) it would.
 */
static const char git_empty_script[] =
	"git config --global user.name a && git config --global user.email a@b && "
	"echo config-ok; "
	"git init -q 2>&1 | grep -q 'Read-only file system' && echo init-refused; "
	"git status >/dev/null 2>&1; echo status $?; "
	"echo b > b; "
	"export GIT_DIR=/tmp/g GIT_WORK_TREE=/workspace; "
	"git init -q && git add -A && git commit -qm inside && "
	"git show --name-only --format= && "
	"git status --porcelain --untracked-files=all --ignored=no && echo status-clean; "
	"git -c core.excludesFile=/dev/null status --porcelain | grep -qx '?? .envrc' && "
	"echo control-sees-envrc";

static void test_git_in_empty_workspace(void **state)
{
	struct th_fx *d = *state;
	drop_probe(d);
	sh_expect(d, git_empty_script, 0,
		  "config-ok\ninit-refused\nstatus 128\nb\nstatus-clean\ncontrol-sees-envrc\n");
	expect_err_lacks(d, "invalid gitfile format");
	/* Only the sandbox's own file is left; no .git, no placeholder. */
	th_expect_names(d->ws.dir, "b\n");
	TH_GIT(d, 128, "rev-parse", "--git-dir");
}

static const char git_repo_script[] =
	"git config --global user.name a && git config --global user.email a@b && "
	"echo config-ok; "
	"echo a2 > a; echo b > b; "
	"git status --porcelain --untracked-files=all; "
	"git add -A 2>&1 | grep -q 'Read-only file system' && echo add-refused; "
	"git commit -qam x 2>&1 | grep -q 'Read-only file system' && echo commit-refused; "
	"git -c core.excludesFile=/dev/null status --porcelain | grep -qx '?? .envrc' && "
	"echo control-sees-envrc";

static void test_git_in_host_repo(void **state)
{
	struct th_fx *d = *state;
	host_repo(d);
	sh_expect(d, git_repo_script, 0,
		  "config-ok\n M a\n?? b\nadd-refused\ncommit-refused\ncontrol-sees-envrc\n");
	expect_err_lacks(d, "invalid gitfile format");
	/* The edits landed live; the host's history is its own; no placeholder anywhere. */
	th_expect_names(d->ws.dir, ".git\na\nb\nprobe\n");
	TH_GIT(d, 0, "log", "--name-only", "--format=");
	assert_string_equal(d->host_out.out, "a\nprobe\n");
	TH_GIT(d, 0, "status", "--porcelain", "--untracked-files=all");
	assert_string_equal(d->host_out.out, " M a\n?? b\n");
	TH_GIT(d, 0, "add", "-A");
	TH_GIT(d, 0, "commit", "-q", "-m", "host again");
	TH_GIT(d, 0, "show", "--name-only", "--format=", "HEAD");
	assert_string_equal(d->host_out.out, "a\nb\n");
}

/* The excludes file: in the sandbox's home, anchored names, .git left out. */
static void test_excludes_file(void **state)
{
	struct th_fx *d = *state;
	sh_expect(d, "grep -x -e /.envrc -e /HEAD -e /.vscode -e /.git \"$HOME/.config/git/ignore\"",
		  0, "/HEAD\n/.envrc\n/.vscode\n");
	/* A host repository: no HEAD, no .git placeholder, the others still listed. */
	host_repo(d);
	sh_expect(d, "grep -c -x -e '/HEAD' -e '/.git' \"$HOME/.config/git/ignore\"; "
		     "grep -x /.mcp.json \"$HOME/.config/git/ignore\"",
		  0, "0\n/.mcp.json\n");
	/* Nothing to list, no file: every protected name exists. */
	for (size_t i = 0; i < N_PROTECT; i++)
		make_protected(d, i, NULL);
	sh_expect(d, "test -e \"$HOME/.config/git/ignore\" || echo none", 0, "none\n");
}

/* ---------------------------------------------------------------------------------------- */
/* The top-level .git is read-only whole                                                     */

static void test_git_dir_read_only(void **state)
{
	struct th_fx *d = *state;
	host_repo(d);
	char index[PATH_MAX];
	th_ws_path(&d->ws, ".git/index", index);
	size_t index_len = 0;
	char *before = th_read_file(index, 1 << 20, true, &index_len);
	assert_non_null(before);
	mode_t git_mode = th_ws_mode(&d->ws, ".git");
	TH_GIT(d, 0, "config", "--file", ".git/config", "--get", "core.bare");
	char *config = strdup(d->host_out.out);
	assert_non_null(config);

	probe_erofs(d, "write", "/workspace/.git/index");
	probe_erofs(d, "write", "/workspace/.git/config");
	probe_erofs(d, "write", "/workspace/.git/hooks/pre-commit");
	probe_erofs(d, "write", "/workspace/.git/new");
	probe_erofs(d, "mkdir", "/workspace/.git/objects/zz");
	probe_erofs(d, "mkdir", "/workspace/.git/refs/heads/x");
	probe_erofs(d, "chmod", "/workspace/.git");
	probe_erofs(d, "chmod", "/workspace/.git/config");
	probe_rename_refused(d, "/workspace/.git", "/workspace/moved");
	probe_rename_refused(d, "/workspace/.git/config", "/workspace/.git/c2");
	probe_rename_refused(d, "/workspace/.git/hooks", "/workspace/h");
	sh_expect(d, "chmod 777 .git 2>&1 | grep -c 'Read-only file system'; "
		     "rm -rf .git 2>/dev/null; test -f .git/HEAD && echo still",
		  0, "1\nstill\n");

	size_t after_len = 0;
	char *after = th_read_file(index, 1 << 20, true, &after_len);
	assert_non_null(after);
	assert_int_equal(after_len, index_len);
	assert_memory_equal(after, before, index_len);
	free(before);
	free(after);
	assert_int_equal(th_ws_mode(&d->ws, ".git"), git_mode);
	TH_GIT(d, 0, "config", "--file", ".git/config", "--get", "core.bare");
	assert_string_equal(d->host_out.out, config);
	free(config);
	assert_false(th_ws_exists(&d->ws, ".git/new"));
	assert_false(th_ws_exists(&d->ws, "moved"));
	TH_GIT(d, 0, "fsck", "--no-progress");
}

/* With no .git, chmod 777 of the empty directory standing there is refused too. */
static void test_git_missing_chmod(void **state)
{
	struct th_fx *d = *state;
	run_expect(d, TH_CMD(TH_PROBE, "stat", "/workspace/.git"), 0, NULL);
	if (strncmp(d->out.out, "OK dir ", 7) != 0) {
		th_show(&d->out);
		fail_msg("the .git placeholder is not a directory");
	}
	run_expect(d, TH_CMD(TH_PROBE, "ls", "/workspace/.git"), 0, "");
	probe_erofs(d, "chmod", "/workspace/.git");
	sh_expect(d, "chmod 777 .git 2>&1 | grep -c 'Read-only file system'", 0, "1\n");
	probe_erofs(d, "mkdir", "/workspace/.git/objects");
	probe_rename_refused(d, "/workspace/.git", "/workspace/moved");
	th_expect_names(d->ws.dir, "probe\n");
}

/*
 * With no .git, git would ask whether the workspace itself is a bare repository (HEAD,
 * objects/ and refs/ at the top): HEAD cannot be made, so it never is one.
 */
static void test_no_bare_workspace(void **state)
{
	struct th_fx *d = *state;
	drop_probe(d);
	sh_expect(d, "mkdir objects refs && echo 'ref: refs/heads/main' > HEAD 2>/dev/null; "
		     "printf '[core]\\n\\tbare = true\\n' > config; "
		     "git rev-parse --git-dir >/dev/null 2>&1; echo $?",
		  0, "128\n");
	th_expect_names(d->ws.dir, "config\nobjects\nrefs\n");
	TH_GIT(d, 128, "rev-parse", "--git-dir");
	/* Control: with the HEAD the sandbox could not write, it would have been one. */
	th_ws_write(&d->ws, "HEAD", "ref: refs/heads/main\n");
	TH_GIT(d, 0, "rev-parse", "--is-bare-repository");
	assert_string_equal(d->host_out.out, "true\n");
}

/* ---------------------------------------------------------------------------------------- */
/* A .git file (gitdir: PATH)                                                                 */

/* A bare repository of the host's at rel, with .git a gitfile holding pointer. */
static void gitfile_repo(struct th_fx *d, const char *rel, const char *pointer)
{
	char dir[PATH_MAX], text[PATH_MAX + 16];
	th_ws_path(&d->ws, rel, dir);
	TH_GIT(d, 0, "init", "-q", "--bare", dir);
	(void)snprintf(text, sizeof(text), "gitdir: %s\n", pointer);
	th_ws_write(&d->ws, ".git", text);
	TH_GIT(d, 0, "config", "core.bare", "false");
	th_ws_write(&d->ws, "a", "a\n");
	TH_GIT(d, 0, "add", "a", "probe"); /* not the git directory, which is in the tree */
	TH_GIT(d, 0, "commit", "-q", "-m", "host");
	th_fx_chown(d);
}

/* The bytes of the workspace's file rel; the caller frees. */
static char *ws_bytes(const struct th_fx *d, const char *rel)
{
	char p[PATH_MAX];
	th_ws_path(&d->ws, rel, p);
	char *text = th_read_file(p, 1 << 20, true, NULL);
	if (!text)
		fail_msg("read %s: %s", p, strerror(errno));
	return text;
}

/* The workspace's file rel still holds before (which is freed). */
static void expect_bytes(const struct th_fx *d, const char *rel, char *before)
{
	char *after = ws_bytes(d, rel);
	assert_string_equal(after, before);
	free(after);
	free(before);
}

/*
 * What a gitfile's git directory at rel (sandbox path /workspace/rel) must withstand. With
 * git_inside, git in the sandbox finds the repository (a relative pointer) and reads it.
 */
static void expect_gitdir_read_only(struct th_fx *d, const char *rel, bool git_inside)
{
	char p[PATH_MAX], head[PATH_MAX];
	th_pathf(head, "%s/HEAD", rel);
	char *before = ws_bytes(d, head);
	th_pathf(p, "/workspace/%s/config", rel);
	probe_erofs(d, "write", p);
	th_pathf(p, "/workspace/%s/index", rel);
	probe_erofs(d, "write", p);
	th_pathf(p, "/workspace/%s/new", rel);
	probe_erofs(d, "write", p);
	th_pathf(p, "/workspace/%s/HEAD", rel);
	probe_erofs(d, "openw", p);
	th_pathf(p, "/workspace/%s", rel);
	probe_erofs(d, "chmod", p);
	probe_rename_refused(d, p, "/workspace/moved");
	/* The pointer itself can be neither rewritten nor replaced. */
	probe_erofs(d, "openw", "/workspace/.git");
	probe_rename_refused(d, "/workspace/.git", "/workspace/g2");
	/* git reads the repository; it cannot write it. */
	if (git_inside)
		sh_expect(d, "echo a2 > a; git status --porcelain --untracked-files=no; "
			     "git add -A 2>&1 | grep -q 'Read-only file system' && echo add-refused",
			  0, " M a\nadd-refused\n");
	else
		sh_expect(d, "echo a2 > a; git status 2>&1 | grep -c 'not a git repository'", 0,
			  "1\n");
	TH_GIT(d, 0, "status", "--porcelain", "--untracked-files=no");
	assert_string_equal(d->host_out.out, " M a\n");
	expect_bytes(d, head, before);
	assert_false(th_ws_exists(&d->ws, "moved"));
}

static void test_gitdir_relative(void **state)
{
	struct th_fx *d = *state;
	gitfile_repo(d, ".bare", ".bare");
	char *config = ws_bytes(d, ".bare/config");
	expect_gitdir_read_only(d, ".bare", true);
	probe_erofs(d, "write", "/workspace/.bare/hooks/pre-commit");
	expect_bytes(d, ".bare/config", config);
}

/*
 * gitdir: the absolute host path of a directory in the workspace. Read-only just the same;
 * git inside finds no repository there, since the sandbox sees the workspace at /workspace.
 */
static void test_gitdir_absolute(void **state)
{
	struct th_fx *d = *state;
	char abs[PATH_MAX];
	th_pathf(abs, "%s/.bare", d->real);
	gitfile_repo(d, ".bare", abs);
	char *config = ws_bytes(d, ".bare/config");
	expect_gitdir_read_only(d, ".bare", false);
	probe_erofs(d, "write", "/workspace/.bare/hooks/pre-commit");
	expect_bytes(d, ".bare/config", config);
}

/*
 * gitdir: repos/main.git: the directory above it is pinned (a mount point of its own, still
 * writable), so that it cannot be renamed away and a new repos/main.git made.
 */
static void test_gitdir_nested(void **state)
{
	struct th_fx *d = *state;
	th_ws_mkdir(&d->ws, "repos");
	gitfile_repo(d, "repos/main.git", "repos/main.git");
	expect_gitdir_read_only(d, "repos/main.git", true);
	probe_rename_refused(d, "/workspace/repos", "/workspace/r2");
	run_expect(d, TH_CMD(TH_PROBE, "write", "/workspace/repos/other"), 0, "OK 1\n");
	th_ws_expect_file(&d->ws, "repos/other", "x");
}

/*
 * A linked worktree's git directory (gitdir: wt) names a "commondir" where the config and
 * hooks are (main.git): both are read-only.
 */
static void test_gitdir_commondir(void **state)
{
	struct th_fx *d = *state;
	gitfile_repo(d, "main.git", "main.git");
	/* Turn it into a worktree of main.git: .git -> wt, wt/commondir -> ../main.git. */
	th_ws_mkdir(&d->ws, "wt");
	th_ws_write(&d->ws, "wt/commondir", "../main.git\n");
	th_ws_write(&d->ws, "wt/HEAD", "ref: refs/heads/main\n");
	char index[PATH_MAX], wt_index[PATH_MAX];
	th_ws_path(&d->ws, "main.git/index", index);
	th_ws_path(&d->ws, "wt/index", wt_index);
	assert_int_equal(rename(index, wt_index), 0);
	th_ws_write(&d->ws, ".git", "gitdir: wt\n");
	TH_GIT(d, 0, "rev-parse", "--git-dir", "--git-common-dir");
	th_fx_chown(d);
	char *config = ws_bytes(d, "main.git/config");

	expect_gitdir_read_only(d, "wt", true);
	probe_erofs(d, "write", "/workspace/main.git/config");
	probe_erofs(d, "write", "/workspace/main.git/hooks/pre-commit");
	probe_rename_refused(d, "/workspace/main.git", "/workspace/m2");
	probe_erofs(d, "openw", "/workspace/wt/commondir");
	expect_bytes(d, "main.git/config", config);
}

/* gitdir: a path outside the workspace. The sandbox does not see it: nothing to bind. */
static void test_gitdir_outside(void **state)
{
	struct th_fx *d = *state;
	char outside[PATH_MAX], text[PATH_MAX + 16];
	th_pathf(outside, "%s/outside.git", d->ws.aux);
	TH_GIT(d, 0, "init", "-q", "--bare", outside);
	(void)snprintf(text, sizeof(text), "gitdir: %s\n", outside);
	th_ws_write(&d->ws, ".git", text);
	TH_GIT(d, 0, "config", "core.bare", "false");
	th_fx_chown(d);
	char config[PATH_MAX];
	th_pathf(config, "%s/config", outside);
	char *before = th_read_file(config, 1 << 16, true, NULL);
	assert_non_null(before);

	run_expect(d, TH_CMD("sh", "-c", "test -e \"$1\" || echo unseen", "sh", outside), 0,
		   "unseen\n");
	sh_expect(d, "git status >/dev/null 2>&1; echo $?", 0, "128\n");
	probe_erofs(d, "openw", "/workspace/.git");
	probe_rename_refused(d, "/workspace/.git", "/workspace/g2");
	th_expect_file(config, before);
	free(before);
	th_expect_names(d->ws.dir, ".git\nprobe\n");
}

/* A pointer that reaches into the workspace through a symlink refuses the run. */
static void test_gitdir_symlink_refused(void **state)
{
	struct th_fx *d = *state;
	gitfile_repo(d, ".bare", ".bare");
	char link[PATH_MAX];
	/* Inside the workspace: the sandbox could turn the link to a directory of its own. */
	th_ws_path(&d->ws, "lnk", link);
	assert_int_equal(symlink(".bare", link), 0);
	th_ws_write(&d->ws, ".git", "gitdir: lnk\n");
	TH_GIT(d, 0, "rev-parse", "--git-dir"); /* control: the host's git follows it */
	run_expect(d, TH_CMD("true"), 125, "");
	th_fx_expect_err_has(d, "protect workspace paths");
	/* Outside, leading back in: the name is outside, the directory is not. */
	assert_int_equal(unlink(link), 0);
	th_aux_path(&d->ws, "link", link);
	assert_int_equal(symlink(d->real, link), 0);
	char text[PATH_MAX + 16];
	(void)snprintf(text, sizeof(text), "gitdir: %s/.bare\n", link);
	th_ws_write(&d->ws, ".git", text);
	TH_GIT(d, 0, "rev-parse", "--git-dir");
	run_expect(d, TH_CMD("true"), 125, "");
	th_fx_expect_err_has(d, "protect workspace paths");
	/* A missing directory through ".." after a symlink: the names say .bare, git would go to
	 * d/.bare, which the sandbox could make. */
	th_ws_mkdir(&d->ws, "d");
	th_ws_mkdir(&d->ws, "d/e");
	th_ws_path(&d->ws, "lnk", link);
	assert_int_equal(symlink("d/e", link), 0);
	th_ws_write(&d->ws, ".git", "gitdir: lnk/../.none\n");
	run_expect(d, TH_CMD("true"), 125, "");
	th_fx_expect_err_has(d, "protect workspace paths");
	th_expect_names(d->ws.dir, ".bare\n.git\na\nd\nlnk\nprobe\n");
	assert_false(th_ws_exists(&d->ws, ".none"));
}

/* gitdir: a missing directory inside the workspace cannot be made by the sandbox. */
static void test_gitdir_missing(void **state)
{
	struct th_fx *d = *state;
	drop_probe(d);
	th_ws_write(&d->ws, ".git", "gitdir: .bare\n");
	th_fx_chown(d);
	sh_expect(d, "git init -q --bare .bare 2>/dev/null || echo refused; ls -a .bare", 0,
		  "refused\n.\n..\n");
	th_expect_names(d->ws.dir, ".git\n");
}

/* ---------------------------------------------------------------------------------------- */
/* The default protect list                                                                  */

/* A script trying, for each name of the list, to change it (stdout: each that worked). */
static void list_script(char *out, size_t len, bool exist)
{
	size_t o = (size_t)snprintf(out, len, "for f in");
	for (size_t i = 0; i < N_PROTECT; i++) {
		size_t n = strlen(protect_list[i]);
		if (protect_list[i][n - 1] != '/')
			o += (size_t)snprintf(out + o, len - o, " %s", protect_list[i]);
	}
	o += (size_t)snprintf(out + o, len - o,
			      "; do (echo x >> \"$f\") 2>/dev/null && echo \"wrote $f\"; "
			      "mv \"$f\" \"$f.x\" 2>/dev/null && echo \"moved $f\"; "
			      "rm -f \"$f\" 2>/dev/null; %s"
			      "done; for d in",
			      exist ? "test -e \"$f\" || echo \"removed $f\"; "
				    : "mkdir \"$f\" 2>/dev/null && echo \"made dir $f\"; ");
	for (size_t i = 0; i < N_PROTECT; i++) {
		size_t n = strlen(protect_list[i]);
		if (protect_list[i][n - 1] == '/')
			o += (size_t)snprintf(out + o, len - o, " %.*s", (int)(n - 1), protect_list[i]);
	}
	(void)snprintf(out + o, len - o,
		       "; do (echo x > \"$d/settings.json\") 2>/dev/null && echo \"wrote in $d\"; "
		       "mv \"$d\" \"$d.x\" 2>/dev/null && echo \"moved $d\"; "
		       "rm -rf \"$d\" 2>/dev/null; test -d \"$d\" || echo \"removed $d\"; "
		       "done; echo done");
}

static void test_protect_list_existing(void **state)
{
	struct th_fx *d = *state;
	for (size_t i = 0; i < N_PROTECT; i++)
		make_protected(d, i, "host\n");
	th_fx_chown(d);
	char script[8192];
	list_script(script, sizeof(script), true);
	sh_expect(d, script, 0, "done\n");
	/* Exact answers for one of each. */
	probe_erofs(d, "openw", "/workspace/.envrc");
	probe_erofs(d, "write", "/workspace/.vscode/settings.json");
	probe_erofs(d, "chmod", "/workspace/.npmrc");
	for (size_t i = 0; i < N_PROTECT; i++) {
		char rel[PATH_MAX];
		size_t len = strlen(protect_list[i]);
		if (protect_list[i][len - 1] == '/')
			th_pathf(rel, "%.*s/f", (int)(len - 1), protect_list[i]);
		else
			th_pathf(rel, "%s", protect_list[i]);
		th_ws_expect_file(&d->ws, rel, "host\n");
	}
	/* Nothing was added or left: the 29 names and the probe. */
	size_t n = 0;
	char *names = th_list_dir(d->ws.dir, &n);
	assert_non_null(names);
	free(names);
	assert_int_equal(n, N_PROTECT + 1);
}

static void test_protect_list_missing(void **state)
{
	struct th_fx *d = *state;
	char script[8192];
	list_script(script, sizeof(script), false);
	th_fx_record_expect(d, NULL, TH_CMD("sh", "-c", script), 0, "done\n");
	/* .git, HEAD and the whole list */
	assert_int_equal((int)th_json_num(d->record, "sandbox.placeholders"), N_PROTECT + 2);
	/* Exact answers for one of each kind: a file, and an empty directory, stand there. */
	probe_erofs(d, "write", "/workspace/.envrc");
	probe_erofs(d, "write", "/workspace/.claude/settings.json");
	run_expect(d, TH_CMD(TH_PROBE, "ls", "/workspace/.claude"), 0, "");
	run_expect(d, TH_CMD(TH_PROBE, "mkdir", "/workspace/.envrc"), 1, "ERR EEXIST 17\n");
	th_expect_names(d->ws.dir, "probe\n");
}

/* allow_create still lets a listed directory be made (trailing '/' or not in it). */
static void test_allow_create_dir(void **state)
{
	struct th_fx *d = *state;
	char pol[PATH_MAX];
	th_policy(&d->ws, "filesystem:\n  protect: [.vscode/, .envrc]\n"
			     "  allow_create: [.vscode]\n", pol);
	struct th_opts o = th_fx_opts(d, pol);
	th_fx_run(d, &o, TH_CMD(TH_PROBE, "mkdir", "/workspace/.vscode"));
	th_fx_expect(d, 0, "OK 0\n");
	th_fx_run(d, &o, TH_CMD(TH_PROBE, "write", "/workspace/.envrc"));
	th_fx_expect_write_refused(d);
	/* .git stays read-only whatever the list says. */
	th_fx_run(d, &o, TH_CMD(TH_PROBE, "mkdir", "/workspace/.git/hooks"));
	th_fx_expect(d, 1, "ERR EROFS 30\n");
	th_expect_names(d->ws.dir, ".vscode\nprobe\n");
}

/* Set-user-ID and set-group-ID bits are refused in mode direct too (the seccomp filter). */
static void test_setid_refused(void **state)
{
	struct th_fx *d = *state;
	run_expect(d, TH_CMD(TH_PROBE, "write", "/workspace/f"), 0, "OK 1\n");
	/* Control: the sandbox may change the mode, so the refusals below are the filter's. */
	run_expect(d, TH_CMD(TH_PROBE, "setid", "chmod", "/workspace/f", "0750"), 0, NULL);
	assert_int_equal(th_ws_mode(&d->ws, "f") & 07777, 0750);
	run_expect(d, TH_CMD(TH_PROBE, "setid", "chmod", "/workspace/f", "4755"), 1,
		   "ERR EPERM 1\n");
	run_expect(d, TH_CMD(TH_PROBE, "setid", "chmod", "/workspace/f", "2755"), 1,
		   "ERR EPERM 1\n");
	assert_int_equal(th_ws_mode(&d->ws, "f") & 06000, 0);
}

/*
 * While a run lasts, the host's own git sees the file placeholders in its repository as
 * untracked files (docs/workspace.md says so), never the directory ones; afterwards nothing.
 */
static void test_host_git_during_run(void **state)
{
	struct th_fx *d = *state;
	host_repo(d);
	struct th_opts o = th_fx_opts(d, NULL);
	struct th_proc p;
	assert_int_equal(th_spawn(&o, TH_CMD("sh", "-c", "echo ready; "
							 "while ! test -e go; do sleep 0.05; done"),
				  &p),
			 0);
	bool ready = th_wait_stdout(&p, "ready\n", 20000);
	TH_GIT(d, 0, "status", "--porcelain");
	char *during = strdup(d->host_out.out);
	th_ws_write(&d->ws, "go", "");
	th_out_done(&d->out);
	th_finish(&p, &d->out);
	assert_true(ready);
	th_fx_expect(d, 0, "ready\n");
	assert_non_null(during);
	bool seen_file = th_has_line(during, "?? .envrc");
	bool seen_dir = strstr(during, ".vscode") != NULL;
	if (!seen_file || seen_dir)
		th_print_long("host git status during the run", during);
	free(during);
	assert_true(seen_file);
	assert_false(seen_dir);
	TH_GIT(d, 0, "status", "--porcelain");
	assert_string_equal(d->host_out.out, "?? go\n");
}

/* ---------------------------------------------------------------------------------------- */

/* A test named after its function, without the "test_" prefix; U: workspace of a user. */
#define T(fn) { &#fn[5], fn, fx_setup, th_fx_teardown, NULL }
#define U(name) { "user_" #name, test_##name, fx_setup, th_fx_teardown, (void *)&th_user_owner }

int main(void)
{
	th_require_privileged();
	if (!th_git())
		th_cannot_run("needs git on the host");

	const struct CMUnitTest tests[] = {
		T(test_git_in_empty_workspace),
		U(git_in_empty_workspace),
		T(test_git_in_host_repo),
		U(git_in_host_repo),
		T(test_excludes_file),
		T(test_git_dir_read_only),
		U(git_dir_read_only),
		T(test_git_missing_chmod),
		T(test_no_bare_workspace),
		T(test_gitdir_relative),
		U(gitdir_relative),
		T(test_gitdir_absolute),
		T(test_gitdir_nested),
		T(test_gitdir_commondir),
		T(test_gitdir_outside),
		T(test_gitdir_symlink_refused),
		T(test_gitdir_missing),
		T(test_protect_list_existing),
		U(protect_list_existing),
		T(test_protect_list_missing),
		T(test_allow_create_dir),
		T(test_setid_refused),
		T(test_host_git_during_run),
	};
	return _cmocka_run_group_tests("priv-workspace-direct", tests,
				       sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
