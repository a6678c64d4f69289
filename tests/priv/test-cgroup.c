/* SPDX-License-Identifier: MIT */
/*
 * Privileged integration tests of the sandbox's cgroup (sandbox/cgroup.c, docs/run.md "Where
 * the sandbox's cgroup goes"): where it is made, read from outside while a sandbox runs; a
 * service's cgroup shared with other processes (the no-internal-processes rule) and a
 * delegated one, both made for the test on cgroup v2; stale cgroups collected; the limit
 * events (an OOM kill is exit 137 with reason oom, every fork a fork bomb has refused is one
 * pids.events count); and doctor's placement and root-propagation rows.
 *
 * The expected placement is worked out here from the kernel's files, not from warden's code.
 * The v2-only tests pass without checking anything on a v1 or hybrid host (saying so).
 *
 * Needs full privilege (root with CAP_SYS_ADMIN in the initial user namespace, which puts
 * warden in privileged mode); otherwise the program exits 77, or fails under
 * SBX_TEST_MUST_WORK=1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "harness.h"

#define CG "/sys/fs/cgroup"
#define CG_TOP CG "/warden"

static bool is_v2(void)
{
	struct statfs sf;
	return statfs(CG, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

/*
 * The cgroup of pid in the hierarchy whose /proc/PID/cgroup line has controllers ctls ("" for
 * v2's "0::" line, "memory" for v1's), into out ("/" for the root). False when absent.
 */
static bool cgroup_of(pid_t pid, const char *ctl, char *out, size_t len)
{
	char path[64], line[PATH_MAX + 64];
	(void)snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	FILE *f = fopen(path, "re");
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		bool match = *ctl ? strstr(c1 + 1, ctl) != NULL : !strcmp(line, "0:") && !c1[1];
		if (match && strlen(c2 + 1) < len) {
			(void)snprintf(out, len, "%s", c2 + 1);
			found = true;
		}
	}
	if (f)
		(void)fclose(f);
	return found;
}

/* The first line of a small file, without its newline; "" when unreadable. */
static void read_line(const char *dir, const char *file, char *out, size_t len)
{
	char path[PATH_MAX * 2];
	(void)snprintf(path, sizeof(path), "%s/%s", dir, file);
	out[0] = '\0';
	char *text = th_read_file(path, 4096, true, NULL);
	if (text) {
		text[strcspn(text, "\n")] = '\0';
		(void)snprintf(out, len, "%s", text);
		free(text);
	}
}

/* Whether dir's cgroup.procs lists pid. */
static bool lists(const char *dir, pid_t pid)
{
	char path[PATH_MAX * 2], want[24];
	(void)snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	(void)snprintf(want, sizeof(want), "%d", (int)pid);
	char *text = th_read_file(path, 1 << 20, true, NULL);
	bool found = text && th_has_line(text, want);
	free(text);
	return found;
}

/* Whether dir holds a subdirectory (a child cgroup). */
static bool has_child_cgroup(const char *dir)
{
	DIR *d = opendir(dir);
	bool found = false;
	struct dirent *de;
	while (d && !found && (de = readdir(d)))
		found = de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		(void)closedir(d);
	return found;
}

/*
 * Where this host puts the sandbox cgroups of a warden started from this process's cgroup
 * (docs/run.md): v2, unless this cgroup carries systemd's delegation mark, the subtree at the
 * top; v1 the memory hierarchy below this cgroup. False when the test cannot tell (a delegated
 * cgroup shared with this test, which warden would not use either).
 */
static bool expected_base(char *out, size_t len)
{
	char own[PATH_MAX];
	if (!is_v2()) {
		assert_true(cgroup_of(getpid(), "memory", own, sizeof(own)));
		int n = snprintf(out, len, CG "/memory%s", strcmp(own, "/") ? own : "");
		assert_true(n > 0 && (size_t)n < len);
		return true;
	}
	assert_true(cgroup_of(getpid(), "", own, sizeof(own)));
	char dir[PATH_MAX + 32], v[8];
	(void)snprintf(dir, sizeof(dir), CG "%s", own);
	if (getxattr(dir, "trusted.delegate", v, sizeof(v)) > 0 ||
	    getxattr(dir, "user.delegate", v, sizeof(v)) > 0)
		return false;
	(void)snprintf(out, len, "%s", CG_TOP);
	return true;
}

/*
 * Waits up to 5 s for base/warden-<pid>-* to appear with a process in it (the cgroup is made
 * before the sandbox is cloned into it); its path goes to out.
 */
static bool find_sandbox_cgroup(const char *base, pid_t pid, char *out, size_t len)
{
	char prefix[32];
	int plen = snprintf(prefix, sizeof(prefix), "warden-%d-", (int)pid);
	for (int i = 0; i < 250; i++) {
		DIR *d = opendir(base);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (de->d_type != DT_DIR || strncmp(de->d_name, prefix, (size_t)plen) != 0)
				continue;
			(void)snprintf(out, len, "%s/%s", base, de->d_name);
			char procs[64];
			read_line(out, "cgroup.procs", procs, sizeof(procs));
			if (procs[0]) {
				(void)closedir(d);
				return true;
			}
		}
		if (d)
			(void)closedir(d);
		(void)usleep(20000);
	}
	return false;
}

/* Moves pid into the cgroup directory dir. */
static void move_to(const char *dir, pid_t pid)
{
	char path[PATH_MAX * 2], v[24];
	(void)snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	(void)snprintf(v, sizeof(v), "%d", (int)pid);
	if (th_write_file(path, v) < 0)
		fail_msg("move %d into %s: %s", (int)pid, dir, strerror(errno));
}

/* A child that sleeps until killed. */
static pid_t sleeper(void)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;)
			(void)pause();
	}
	return pid;
}

static void reap(pid_t pid)
{
	(void)kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* A pid that just ended, so that no process has it (until the kernel reuses it). */
static pid_t dead_pid(void)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return pid;
}

/*
 * The default sandbox's cgroup, read from outside while it runs: in the expected place, with
 * the default policy's limits, the worker in it, warden itself still where it was started;
 * and gone after the run.
 */
static void test_placement_outside(void **state)
{
	struct th_fx *f = *state;
	char base[PATH_MAX], dir[PATH_MAX * 2], v[64], own[PATH_MAX], wcg[PATH_MAX];
	if (!expected_base(base, sizeof(base)))
		skip();
	th_marker("place", f->marker, sizeof(f->marker));
	struct th_opts o = th_fx_opts(f, NULL);
	struct th_proc p;
	assert_int_equal(th_spawn(&o, TH_CMD(TH_PROBE, "sleep", "3", f->marker), &p), 0);
	bool found = find_sandbox_cgroup(base, p.pid, dir, sizeof(dir));
	bool v2 = is_v2();
	if (found) {
		read_line(dir, v2 ? "memory.max" : "memory.limit_in_bytes", v, sizeof(v));
		print_message("sandbox cgroup %s: memory %s\n", dir, v);
		assert_string_equal(v, "4294967296");
		if (v2) {
			read_line(dir, "pids.max", v, sizeof(v));
			assert_string_equal(v, "1024");
			read_line(dir, "memory.oom.group", v, sizeof(v));
			assert_string_equal(v, "1");
			char swap[PATH_MAX * 2 + 32];
			(void)snprintf(swap, sizeof(swap), "%s/memory.swap.max", dir);
			if (access(swap, F_OK) == 0) {
				read_line(dir, "memory.swap.max", v, sizeof(v));
				assert_string_equal(v, "0");
			}
			/* warden moved nowhere, and nothing but sandbox cgroups is in the subtree. */
			assert_true(cgroup_of(getpid(), "", own, sizeof(own)));
			assert_true(cgroup_of(p.pid, "", wcg, sizeof(wcg)));
			assert_string_equal(wcg, own);
			read_line(CG_TOP, "cgroup.procs", v, sizeof(v));
			assert_string_equal(v, "");
		}
		char procs[PATH_MAX * 2 + 32];
		(void)snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
		char *text = th_read_file(procs, 1 << 16, true, NULL);
		assert_non_null(text);
		assert_true(text[0] != '\0');
		free(text);
	}
	th_fx_finish(f, &p);
	th_fx_expect(f, 0, NULL);
	if (!found)
		fail_msg("no sandbox cgroup warden-%d-* appeared in %s", (int)p.pid, base);
	struct stat st;
	assert_true(stat(dir, &st) < 0 && errno == ENOENT);
}

/*
 * cgroup v2, warden started from a cgroup it shares with other processes, as from a systemd
 * service or a login session: the kernel refuses controllers below such a cgroup, so the
 * sandbox must go to warden's subtree at the top, and no process of the "service" moves.
 */
static void test_service_cgroup(void **state)
{
	struct th_fx *f = *state;
	if (!is_v2()) {
		print_message("not cgroup v2: nothing to check\n");
		return;
	}
	char own[PATH_MAX], home[PATH_MAX + 32], svc[PATH_MAX];
	assert_true(cgroup_of(getpid(), "", own, sizeof(own)));
	(void)snprintf(home, sizeof(home), CG "%s", own);
	(void)snprintf(svc, sizeof(svc), CG "/cgtest-svc-%d", (int)getpid());
	if (mkdir(svc, 0755) < 0)
		fail_msg("mkdir %s: %s", svc, strerror(errno));
	pid_t other = sleeper();
	move_to(svc, other);
	move_to(svc, getpid());
	char rec[PATH_MAX];
	th_aux_path(&f->ws, "svc-record", rec);
	struct th_opts o = th_fx_opts(f, NULL);
	o.record = rec;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "exit", "0"));
	bool both = lists(svc, getpid()) && lists(svc, other);
	bool leaf = has_child_cgroup(svc);
	move_to(home, getpid());
	reap(other);
	(void)rmdir(svc);
	th_fx_expect(f, 0, NULL);
	assert_true(both);
	assert_false(leaf);
	cJSON *r = th_record_load(rec);
	assert_int_equal((int)th_json_num(r, "sandbox.cgroup_version"), 2);
	assert_true(th_json_bool(r, "sandbox.cgroup_emptied"));
	cJSON_Delete(r);
}

/*
 * cgroup v2, warden alone in a cgroup that carries systemd's delegation mark: the sandbox goes
 * below it, and warden moves itself into the leaf beside it.
 */
static void test_delegated_cgroup(void **state)
{
	struct th_fx *f = *state;
	if (!is_v2()) {
		print_message("not cgroup v2: nothing to check\n");
		return;
	}
	char deleg[PATH_MAX], leaf[PATH_MAX + 32], dir[PATH_MAX * 2];
	(void)snprintf(deleg, sizeof(deleg), CG "/cgtest-deleg-%d", (int)getpid());
	(void)snprintf(leaf, sizeof(leaf), "%s/warden-supervisor", deleg);
	if (mkdir(deleg, 0755) < 0)
		fail_msg("mkdir %s: %s", deleg, strerror(errno));
	if (setxattr(deleg, "trusted.delegate", "1", 1, 0) < 0) {
		int e = errno;
		(void)rmdir(deleg);
		fail_msg("setxattr trusted.delegate on %s: %s", deleg, strerror(e));
	}
	th_marker("deleg", f->marker, sizeof(f->marker));
	char probe[PATH_MAX];
	(void)snprintf(probe, sizeof(probe), "%s", TH_PROBE);
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	assert_true(devnull >= 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Alone in the delegated cgroup, then warden in its place. */
		char v[24];
		(void)snprintf(v, sizeof(v), "%d", (int)getpid());
		char procs[PATH_MAX + 32];
		(void)snprintf(procs, sizeof(procs), "%s/cgroup.procs", deleg);
		if (th_write_file(procs, v) < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0)
			_exit(126);
		execl(th_warden(), "warden", "run", "-q", "--workspace", f->ws.dir, "--", probe,
		      "sleep", "3", f->marker, (char *)NULL);
		_exit(127);
	}
	(void)close(devnull);
	bool found = find_sandbox_cgroup(deleg, pid, dir, sizeof(dir));
	char wcg[PATH_MAX];
	bool moved = cgroup_of(pid, "", wcg, sizeof(wcg)) && strstr(wcg, "/warden-supervisor");
	int status = -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	(void)rmdir(leaf);
	bool removed = rmdir(deleg) == 0;
	if (!found)
		fail_msg("no sandbox cgroup warden-%d-* appeared in %s", (int)pid, deleg);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(moved);
	assert_true(removed);
}

/* A cgroup that a killed supervisor left behind, in the place the next run uses, is removed. */
static void test_stale_collected(void **state)
{
	struct th_fx *f = *state;
	char base[PATH_MAX], stale[PATH_MAX * 2];
	if (!expected_base(base, sizeof(base)))
		skip();
	if (mkdir(base, 0755) < 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", base, strerror(errno));
	(void)snprintf(stale, sizeof(stale), "%s/warden-%d-0badcafe", base, (int)dead_pid());
	if (mkdir(stale, 0755) < 0)
		fail_msg("mkdir %s: %s", stale, strerror(errno));
	th_fx_run_expect(f, NULL, TH_CMD(TH_PROBE, "exit", "0"), 0, NULL);
	struct stat st;
	bool gone = stat(stale, &st) < 0 && errno == ENOENT;
	if (!gone)
		(void)rmdir(stale);
	assert_true(gone);
}

/*
 * The memory limit's OOM kill is exit 137 with reason oom, not a protocol violation, also on
 * v2 where memory.oom.group kills the worker with the command.
 */
static void test_oom_reason(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	th_policy(&f->ws, "limits: { memory: 64M }\n", pol);
	struct th_opts o = th_fx_opts(f, pol);
	th_fx_record_expect(f, &o, TH_CMD(TH_PROBE, "membomb", "512"), 137, NULL);
	assert_string_equal(th_json_str(f->record, "exit.reason"), "oom");
	assert_int_equal((int)th_json_num(f->record, "exit.code"), 137);
	assert_true(th_json_num(f->record, "resources.oom_kills") >= 1);
	assert_true(cJSON_IsNull(th_json_at(f->record, "violation")));
	assert_true(th_json_bool(f->record, "sandbox.cgroup_emptied"));
}

/*
 * A shell fork bomb for 2 s under pids 64: every fork it was refused ("Cannot fork", one per
 * refusal) is counted by the cgroup (resources.pids_limit_hits), since the cgroup limit, not
 * RLIMIT_NPROC, is the one that refuses.
 */
static void test_fork_bomb_counted(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	th_policy(&f->ws, "limits: { pids: 64 }\n", pol);
	static const char bomb[] =
		"( f() { f | f & }; f ) 2>/tmp/e\n"
		"sleep 2\n"
		"kill -9 -1\n"
		"until sleep 0.2; do :; done 2>/dev/null\n"
		"echo \"FAILED $(grep -o 'Cannot fork' /tmp/e | wc -l)\"\n";
	struct th_opts o = th_fx_opts(f, pol);
	o.timeout = "60";
	th_fx_record_expect(f, &o, TH_CMD("/bin/sh", "-c", bomb), 0, NULL);
	long failed = -1;
	const char *line = strstr(f->out.out, "FAILED ");
	if (!line || sscanf(line, "FAILED %ld", &failed) != 1) {
		th_show(&f->out);
		fail_msg("no FAILED line");
	}
	double hits = th_json_num(f->record, "resources.pids_limit_hits");
	print_message("%ld forks refused, pids_limit_hits %.0f\n", failed, hits);
	assert_true(failed > 0);
	assert_true(hits >= (double)failed);
}

/* doctor's check whose id is id, from its --json document. */
static const cJSON *doctor_check(const cJSON *root, const char *id)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, th_json_at(root, "checks"))
		if (!strcmp(th_json_str(it, "id"), id))
			return it;
	fail_msg("doctor has no check '%s'", id);
	return NULL;
}

/* doctor names the cgroup placement this host gets and the root mount's propagation. */
static void test_doctor_rows(void **state)
{
	struct th_fx *f = *state;
	char base[PATH_MAX];
	bool known = expected_base(base, sizeof(base));
	struct th_opts o = { .subcommand = "doctor", .cwd = f->ws.dir };
	th_fx_run(f, &o, TH_CMD("--json"));
	const cJSON *root = th_fx_expect_json(f);
	const cJSON *c = doctor_check(root, "cgroup");
	assert_string_equal(th_json_str(c, "status"), "ok");
	c = doctor_check(root, "cgroup.placement");
	assert_string_equal(th_json_str(c, "status"), "info");
	const char *detail = th_json_str(c, "detail");
	print_message("cgroup.placement: %s\n", detail);
	if (known && is_v2())
		assert_non_null(strstr(detail, CG_TOP "/warden-*"));
	else if (known)
		assert_non_null(strstr(detail, "cgroup v1"));
	c = doctor_check(root, "mount.propagation");
	assert_string_equal(th_json_str(c, "status"), "info");
	assert_non_null(strstr(th_json_str(c, "detail"), "the root mount is "));
}

/*
 * doctor in a mount namespace of the test's own whose root mount is shared (as systemd makes
 * the host's), then private: it reports each.
 */
static void test_doctor_propagation(void **state)
{
	struct th_fx *f = *state;
	static const char *const want[] = { "the root mount is shared (shared:",
					    "the root mount is private" };
	for (int shared = 1; shared >= 0; shared--) {
		char out[PATH_MAX];
		th_aux_path(&f->ws, "doctor", out);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			if (fd < 0 || dup2(fd, 1) < 0 || unshare(CLONE_NEWNS) < 0 ||
			    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
			    (shared && mount(NULL, "/", NULL, MS_SHARED, NULL) < 0) ||
			    chdir(f->ws.dir) < 0)
				_exit(126);
			execl(th_warden(), "warden", "doctor", "--json", (char *)NULL);
			_exit(127);
		}
		int status = -1;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) <= 1);
		char *text = th_read_file(out, 1 << 20, true, NULL);
		assert_non_null(text);
		cJSON *root = cJSON_Parse(text);
		free(text);
		assert_non_null(root);
		const char *detail = th_json_str(doctor_check(root, "mount.propagation"), "detail");
		print_message("%s: %s\n", shared ? "shared" : "private", detail);
		bool ok = strncmp(detail, want[shared ? 0 : 1], strlen(want[shared ? 0 : 1])) == 0;
		cJSON_Delete(root);
		assert_true(ok);
	}
}

#define T(fn) { &#fn[5], fn, th_fx_setup_root, th_fx_teardown, NULL }

int main(void)
{
	th_require_privileged();

	const struct CMUnitTest tests[] = {
		T(test_placement_outside),
		T(test_service_cgroup),
		T(test_delegated_cgroup),
		T(test_stale_collected),
		T(test_oom_reason),
		T(test_fork_bomb_counted),
		T(test_doctor_rows),
		T(test_doctor_propagation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
