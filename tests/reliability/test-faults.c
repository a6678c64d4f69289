/* SPDX-License-Identifier: MIT */
/*
 * Faults injected into real runs: the worker SIGKILLed mid-run, the supervisor SIGTERMed and
 * SIGKILLed mid-run, the wall-clock deadline, a record folder that cannot be written, and a
 * full disk when the record is written. After each one the test checks what is left on the
 * host: no process of the sandbox (found by a marker on its command line), no cgroup of that
 * supervisor (or, after a SIGKILL, none once the next warden has started), no half-written
 * record (record.json absent or valid JSON, no ".record.json.*" temporary file), and a clear
 * reason in the record or on stderr. After a supervisor SIGKILL, the lock file of its host id
 * must be collected by the next start too, as its cgroup is.
 *
 * Not covered here: a deadline during setup (setup takes milliseconds and has no deadline of
 * its own to hit from outside) and a worker that goes silent (the real worker never does;
 * tests/hostile drives a worker that does, through warden-test).
 *
 * Needs full privilege; otherwise exits 77, or fails under SBX_TEST_MUST_WORK=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rel.h"

/* How long the sandbox may outlive a killed supervisor (docs/run.md: PDEATHSIG, pid 1). */
#define SURVIVOR_MS 2000

/* One test's fixture: the harness's first (see struct th_fx), then what a fault leaves. */
struct faults_fx {
	struct th_fx fx;
	struct rel_cgroups cg;
	char rec[PATH_MAX];         /* the --record folder of the runs */
	char mnt[PATH_MAX];         /* a tmpfs this test mounted; unmounted at teardown */
	uint32_t stale_id;          /* the id lock a SIGKILLed supervisor left; removed at teardown */
};

static int fx_setup(void **state)
{
	if (th_fx_setup(state, sizeof(struct faults_fx), 0, 0) < 0)
		return -1;
	struct faults_fx *f = *state;
	rel_cgroups_find(&f->cg);
	th_marker("faults", f->fx.marker, sizeof(f->fx.marker));
	th_aux_path(&f->fx.ws, "record", f->rec);
	return 0;
}

static int fx_teardown(void **state)
{
	struct faults_fx *f = *state;
	th_kill_procs(f->fx.marker, 0);
	if (f->mnt[0])
		(void)umount2(f->mnt, MNT_DETACH);
	if (f->stale_id)
		(void)rel_id_remove_stale(f->stale_id);
	th_fx_free(&f->fx);
	return 0;
}

/* Options of a run in the fixture's workspace, with --record record unless it is NULL. */
static struct th_opts opts(struct faults_fx *f, const char *record)
{
	struct th_opts o = th_fx_opts(&f->fx, NULL);
	o.record = record;
	return o;
}

/*
 * Starts `probe sleep 30 MARKER` recording into f->rec, and waits until the probe runs;
 * returns the probe's pid.
 */
static pid_t start_sleeper(struct faults_fx *f, struct th_proc *p)
{
	struct th_opts o = opts(f, f->rec);
	assert_int_equal(th_spawn(&o, TH_CMD(TH_PROBE, "sleep", "30", f->fx.marker), p), 0);
	pid_t probe = 0;
	uint64_t end = th_now_ms() + 10000;
	while (!probe && th_now_ms() < end) {
		if (th_find_procs(f->fx.marker, "probe", p->pid, &probe, 1) != 1)
			probe = 0;
		if (!probe)
			rel_sleep_ms(20);
	}
	if (!probe) {
		(void)kill(p->pid, SIGKILL);
		th_fx_finish(&f->fx, p);
		th_show(&f->fx.out);
		fail_msg("the probe never started");
	}
	return probe;
}

/* Runs cmd to its end; f->fx.out gets the result. Returns warden's pid. */
static pid_t run(struct faults_fx *f, const struct th_opts *o, const char *const *cmd)
{
	th_fx_run(&f->fx, o, cmd);
	return f->fx.out.pid;
}

/* No process of the sandbox on the host: every process with the marker is gone. */
static void expect_no_survivor(const struct faults_fx *f, unsigned ms)
{
	int left = rel_wait_procs(f->fx.marker, NULL, 0, 0, false, ms);
	if (left)
		fail_msg("%d process(es) of the sandbox outlived it by %u ms", left, ms);
}

/* Supervisor pid's cgroups are gone. */
static void expect_cgroup_removed(const struct faults_fx *f, pid_t warden)
{
	char names[1024];
	if (rel_cgroups_count(&f->cg, warden, names, sizeof(names)) != 0)
		fail_msg("cgroup(s) of supervisor %d left: %s", (int)warden, names);
}

/* The record folder holds a whole record.json or none, and no temporary file. */
static enum rel_record expect_no_torn_record(struct faults_fx *f, const char *dir)
{
	int temps = -1;
	cJSON_Delete(f->fx.record);
	f->fx.record = NULL;
	enum rel_record st = rel_record_state(dir, &f->fx.record, &temps);
	if (st == REL_RECORD_INVALID)
		fail_msg("%s/record.json is half-written", dir);
	if (temps)
		fail_msg("%d temporary record file(s) left in %s", temps, dir);
	return st;
}

/* The host id of the recorded run is released: its lock file is gone. */
static void expect_id_released(const cJSON *record)
{
	uint32_t id = (uint32_t)th_json_num(record, "sandbox.host_uid");
	assert_true(id >= TH_HOST_ID_BASE);
	if (rel_id_state(id) != -1)
		fail_msg("%s/%u is still there after the run", TH_IDS_DIR, id);
}

/* While cmd runs (control for the "removed" checks): one cgroup per hierarchy. */
static void expect_cgroup_present(const struct faults_fx *f, pid_t warden)
{
	char names[1024];
	int n = rel_cgroups_count(&f->cg, warden, names, sizeof(names));
	if (n != f->cg.n)
		fail_msg("supervisor %d has %d cgroup(s) while running, want %d: %s", (int)warden,
			 n, f->cg.n, names);
}

/* ---------------------------------------------------------------------------------------- */

/* Control: the record checks do see a half-written record and a leftover temporary file. */
static void test_record_checks_can_fail(void **state)
{
	struct faults_fx *f = *state;
	char path[PATH_MAX];
	int temps = -1;
	assert_int_equal(mkdir(f->rec, 0755), 0);
	assert_int_equal(rel_record_state(f->rec, NULL, &temps), REL_RECORD_ABSENT);
	assert_int_equal(temps, 0);
	th_pathf(path, "%s/record.json", f->rec);
	assert_int_equal(th_write_file(path, "{\"schema_version\": 1, \"exit\": {\"rea"), 0);
	th_pathf(path, "%s/.record.json.1234.0badf00d", f->rec);
	assert_int_equal(th_write_file(path, "{"), 0);
	assert_int_equal(rel_record_state(f->rec, NULL, &temps), REL_RECORD_INVALID);
	assert_int_equal(temps, 1);
	th_pathf(path, "%s/record.json", f->rec);
	assert_int_equal(th_write_file(path, "{\"schema_version\": 1}\n"), 0);
	assert_int_equal(rel_record_state(f->rec, NULL, &temps), REL_RECORD_VALID);
}

static void test_worker_sigkill(void **state)
{
	struct faults_fx *f = *state;
	struct th_proc p;
	(void)start_sleeper(f, &p);
	pid_t warden = p.pid;
	pid_t worker = rel_find_worker(warden);
	long inner = worker ? rel_nspid_inner(worker) : -1;
	expect_cgroup_present(f, warden);
	if (worker)
		(void)kill(worker, SIGKILL);
	else
		(void)kill(warden, SIGKILL);
	th_fx_finish(&f->fx, &p);
	if (!worker)
		fail_msg("no child of warden %d is pid 1 of a pid namespace", (int)warden);
	assert_int_equal(inner, 1);

	/* The worker ended before reporting the command's end: a protocol violation. */
	th_fx_expect(&f->fx, 123, NULL);
	th_fx_expect_err_has(&f->fx, "protocol violation");
	expect_no_survivor(f, SURVIVOR_MS);
	expect_cgroup_removed(f, warden);
	assert_int_equal(expect_no_torn_record(f, f->rec), REL_RECORD_VALID);
	assert_string_equal(th_json_str(f->fx.record, "exit.reason"), "protocol-violation");
	assert_int_equal((int)th_json_num(f->fx.record, "exit.code"), 123);
	const char *why = th_json_str(f->fx.record, "violation.reason");
	print_message("worker SIGKILLed: exit 123, violation '%s'\n", why);
	assert_true(strlen(why) > 0);
	assert_true(th_json_bool(f->fx.record, "sandbox.cgroup_emptied"));
	expect_id_released(f->fx.record);
}

static void test_supervisor_sigterm(void **state)
{
	struct faults_fx *f = *state;
	struct th_proc p;
	(void)start_sleeper(f, &p);
	pid_t warden = p.pid;
	expect_cgroup_present(f, warden);
	(void)kill(warden, SIGTERM);
	th_fx_finish(&f->fx, &p);

	th_fx_expect(&f->fx, 128 + SIGTERM, NULL);
	th_fx_expect_err_has(&f->fx, "received signal 15");
	expect_no_survivor(f, SURVIVOR_MS);
	expect_cgroup_removed(f, warden);
	assert_int_equal(expect_no_torn_record(f, f->rec), REL_RECORD_VALID);
	assert_string_equal(th_json_str(f->fx.record, "exit.reason"), "signaled");
	assert_int_equal((int)th_json_num(f->fx.record, "exit.code"), 128 + SIGTERM);
	assert_int_equal((int)th_json_num(f->fx.record, "exit.signal"), SIGTERM);
	assert_true(th_json_bool(f->fx.record, "sandbox.cgroup_emptied"));
	expect_id_released(f->fx.record);
}

/*
 * SIGKILLs a supervisor whose probe runs: returns its pid and the sandbox's host uid, having
 * checked that nothing of the sandbox survives and that nothing was recorded.
 */
static pid_t kill_supervisor(struct faults_fx *f, uint32_t *host_id)
{
	struct th_proc p;
	pid_t probe = start_sleeper(f, &p);
	pid_t warden = p.pid;
	long uid = rel_uid_of(probe);
	/* Controls: while it runs, its cgroups exist and its id is held. */
	expect_cgroup_present(f, warden);
	int id_during = uid > 0 ? rel_id_state((uint32_t)uid) : -2;
	uint64_t t0 = th_now_ms();
	(void)kill(warden, SIGKILL);
	/* Within SURVIVOR_MS of the kill, nothing with the marker is left. */
	int left = rel_wait_procs(f->fx.marker, NULL, 0, 0, false, SURVIVOR_MS);
	uint64_t gone_ms = th_now_ms() - t0;
	th_fx_finish(&f->fx, &p);
	th_fx_expect(&f->fx, 128 + SIGKILL, NULL);
	if (left)
		fail_msg("%d process(es) of the sandbox outlived the supervisor by %u ms", left,
			 SURVIVOR_MS);
	print_message("supervisor SIGKILLed: sandbox gone %llu ms after\n",
		      (unsigned long long)gone_ms);
	assert_true(uid >= (long)TH_HOST_ID_BASE);
	assert_int_equal(id_during, 1);
	/* Killed before it could write anything: no record, no temporary file. */
	assert_int_equal(expect_no_torn_record(f, f->rec), REL_RECORD_ABSENT);
	*host_id = f->stale_id = (uint32_t)uid;
	return warden;
}

/* After a supervisor SIGKILL: its cgroup stays until the next warden starts, which removes it. */
static void test_supervisor_sigkill(void **state)
{
	struct faults_fx *f = *state;
	uint32_t id;
	pid_t warden = kill_supervisor(f, &id);

	/* Control: a SIGKILLed supervisor cannot remove its cgroup; it is still there. */
	char names[1024];
	int stale = rel_cgroups_count(&f->cg, warden, names, sizeof(names));
	print_message("stale cgroup(s) of supervisor %d: %s\n", (int)warden, names);
	assert_true(stale >= 1);
	/* Its processes are gone (rmdir of a v1 cgroup fails while any task is listed). */
	uint64_t end = th_now_ms() + SURVIVOR_MS;
	while (rel_cgroups_procs(&f->cg, warden) > 0 && th_now_ms() < end)
		rel_sleep_ms(20);
	assert_int_equal(rel_cgroups_procs(&f->cg, warden), 0);

	struct th_opts o = opts(f, NULL);
	pid_t next = run(f, &o, TH_CMD(TH_PROBE, "exit", "0"));
	th_fx_expect(&f->fx, 0, NULL);
	expect_cgroup_removed(f, warden);
	expect_cgroup_removed(f, next);
	print_message("after the next start: no cgroup of supervisor %d; its id lock %s/%u is %s\n",
		      (int)warden, TH_IDS_DIR, id,
		      rel_id_state(id) < 0 ? "gone" : "still there (not collected)");
}

/*
 * After a supervisor SIGKILL, the lock file of its host id (a supervisor unlinks it on every
 * other exit, "so the directory does not grow", supervisor/run.c) is collected by the next
 * start, like its cgroup. Otherwise /run/warden/ids grows by one file per killed supervisor.
 */
static void test_supervisor_sigkill_id_lock(void **state)
{
	struct faults_fx *f = *state;
	uint32_t id;
	(void)kill_supervisor(f, &id);
	/* Control: the dead supervisor's lock file is there, and nobody holds it. */
	assert_int_equal(rel_id_state(id), 0);
	struct th_opts o = opts(f, NULL);
	(void)run(f, &o, TH_CMD(TH_PROBE, "exit", "0"));
	th_fx_expect(&f->fx, 0, NULL);
	if (rel_id_state(id) != -1)
		fail_msg("%s/%u of the SIGKILLed supervisor is still there after the next start",
			 TH_IDS_DIR, id);
}

static void test_wall_timeout(void **state)
{
	struct faults_fx *f = *state;
	struct th_opts o = opts(f, f->rec);
	o.timeout = "1";
	pid_t warden = run(f, &o, TH_CMD(TH_PROBE, "sleep", "30", f->fx.marker));
	th_fx_expect(&f->fx, 124, NULL);
	assert_in_range(f->fx.out.elapsed_ms, 900, 5000);
	th_fx_expect_err_has(&f->fx, "wall-clock limit");
	expect_no_survivor(f, SURVIVOR_MS);
	expect_cgroup_removed(f, warden);
	assert_int_equal(expect_no_torn_record(f, f->rec), REL_RECORD_VALID);
	assert_string_equal(th_json_str(f->fx.record, "exit.reason"), "wall-timeout");
	assert_int_equal((int)th_json_num(f->fx.record, "exit.code"), 124);
	assert_true(th_json_bool(f->fx.record, "sandbox.cgroup_emptied"));
	expect_id_released(f->fx.record);
}

/* --record under a regular file: the record cannot be written, and the run says so. */
static void test_record_parent_is_file(void **state)
{
	struct faults_fx *f = *state;
	char file[PATH_MAX], rec[PATH_MAX];
	th_aux_path(&f->fx.ws, "file", file);
	assert_int_equal(th_write_file(file, "keep\n"), 0);
	th_pathf(rec, "%s/rec", file);

	/* The record folder is opened before anything starts (#15): 125, nothing run. */
	struct th_opts o = opts(f, rec);
	pid_t warden = run(f, &o, TH_CMD(TH_PROBE, "sleep", "0", f->fx.marker));
	th_fx_expect(&f->fx, 125, NULL);
	th_fx_expect_err_has(&f->fx, "open the record folder");
	th_fx_expect_err_has(&f->fx, "Not a directory");
	expect_no_survivor(f, SURVIVOR_MS);
	expect_cgroup_removed(f, warden);
	struct stat st;
	assert_int_equal(stat(file, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 5);

	/* Whatever the command would have done: it never starts. */
	warden = run(f, &o, TH_CMD(TH_PROBE, "exit", "3"));
	th_fx_expect(&f->fx, 125, NULL);
	th_fx_expect_err_has(&f->fx, "open the record folder");
	expect_cgroup_removed(f, warden);
}

/* Mounts a tmpfs of `size` at aux/name in a mount namespace of this process's own. */
static void mount_tmpfs(struct faults_fx *f, const char *name, const char *size)
{
	rel_private_mounts();
	th_pathf(f->mnt, "%s/%s", f->fx.ws.aux, name);
	assert_int_equal(mkdir(f->mnt, 0755), 0);
	char data[64];
	(void)snprintf(data, sizeof(data), "size=%s,mode=0755", size);
	if (mount("reliability", f->mnt, "tmpfs", MS_NOSUID | MS_NODEV, data) < 0) {
		int e = errno;
		f->mnt[0] = '\0';
		fail_msg("mount tmpfs: %s", strerror(e));
	}
}

/* The record folder is on a read-only file system. */
static void test_record_dir_readonly(void **state)
{
	struct faults_fx *f = *state;
	mount_tmpfs(f, "ro", "1m");
	char rec[PATH_MAX];
	th_pathf(rec, "%s/rec", f->mnt);
	assert_int_equal(mkdir(rec, 0755), 0);
	assert_int_equal(mount(NULL, f->mnt, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
			       NULL), 0);
	/* Control: root's writes there are refused. */
	char probe_file[PATH_MAX];
	th_pathf(probe_file, "%s/x", rec);
	assert_int_equal(th_write_file(probe_file, "x"), -EROFS);

	struct th_opts o = opts(f, rec);
	pid_t warden = run(f, &o, TH_CMD(TH_PROBE, "sleep", "0", f->fx.marker));
	th_fx_expect(&f->fx, 125, NULL);
	th_fx_expect_err_has(&f->fx, "write the run record");
	th_fx_expect_err_has(&f->fx, "Read-only file system");
	expect_no_survivor(f, SURVIVOR_MS);
	expect_cgroup_removed(f, warden);
	assert_int_equal(expect_no_torn_record(f, rec), REL_RECORD_ABSENT);
}

/* The record file path still holds exactly the len bytes of before. */
static void expect_record_kept(const char *path, const char *before, size_t len)
{
	size_t now_len = 0;
	char *now = th_read_file(path, TH_RECORD_MAX, true, &now_len);
	if (!now)
		fail_msg("open %s: %s", path, strerror(errno));
	assert_int_equal(now_len, len);
	assert_memory_equal(now, before, len);
	free(now);
}

static unsigned long long free_bytes(const char *path)
{
	struct statvfs sv;
	assert_int_equal(statvfs(path, &sv), 0);
	return (unsigned long long)sv.f_bavail * sv.f_frsize;
}

/* Writes to path until the file system is full; returns the bytes written. */
static off_t fill(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	static const char block[4096];
	off_t total = 0;
	for (;;) {
		ssize_t n = write(fd, block, sizeof(block));
		if (n <= 0)
			break;
		total += n;
	}
	(void)close(fd);
	return total;
}

/*
 * The record's disk is full when it is written: the run reports it (125 when the command
 * succeeded), the previous record.json stays whole, no temporary file is left; once space is
 * free again a run writes a complete record.
 */
static void test_record_disk_full(void **state)
{
	struct faults_fx *f = *state;
	mount_tmpfs(f, "full", "64k");
	char rec[PATH_MAX], filler[PATH_MAX], recfile[PATH_MAX];
	th_pathf(rec, "%s/rec", f->mnt);
	th_pathf(filler, "%s/filler", f->mnt);
	th_pathf(recfile, "%s/record.json", rec);

	/* A first record, while there is room. */
	struct th_opts o = opts(f, rec);
	(void)run(f, &o, TH_CMD(TH_PROBE, "exit", "3"));
	th_fx_expect(&f->fx, 3, NULL);
	assert_int_equal(expect_no_torn_record(f, rec), REL_RECORD_VALID);
	assert_int_equal((int)th_json_num(f->fx.record, "exit.status"), 3);
	size_t before_len = 0;
	char *before = th_read_file(recfile, TH_RECORD_MAX, true, &before_len);
	if (!before)
		fail_msg("open %s: %s", recfile, strerror(errno));

	/* Full: not a byte free. */
	off_t filled = fill(filler);
	assert_true(filled > 0);
	assert_int_equal(free_bytes(f->mnt), 0);
	pid_t warden = run(f, &o, TH_CMD(TH_PROBE, "sleep", "0", f->fx.marker));
	th_fx_expect(&f->fx, 125, NULL);
	th_fx_expect_err_has(&f->fx, "write the run record");
	th_fx_expect_err_has(&f->fx, "No space left on device");
	expect_no_survivor(f, SURVIVOR_MS);
	expect_cgroup_removed(f, warden);
	assert_int_equal(expect_no_torn_record(f, rec), REL_RECORD_VALID);
	expect_record_kept(recfile, before, before_len);

	/* Almost full: one page free, and a record (a long argument) that needs more. */
	int fd = open(filler, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, filled - 4096), 0);
	(void)close(fd);
	unsigned long long room = free_bytes(f->mnt);
	assert_true(room > 0 && room < 8192);
	char long_arg[12288];
	memset(long_arg, 'r', sizeof(long_arg) - 1);
	long_arg[sizeof(long_arg) - 1] = '\0';
	memcpy(long_arg, f->fx.marker, strlen(f->fx.marker));
	warden = run(f, &o, TH_CMD(TH_PROBE, "sleep", "0", long_arg));
	th_fx_expect(&f->fx, 125, NULL);
	th_fx_expect_err_has(&f->fx, "No space left on device");
	expect_cgroup_removed(f, warden);
	assert_int_equal(expect_no_torn_record(f, rec), REL_RECORD_VALID);
	expect_record_kept(recfile, before, before_len);
	/* The partial temporary file was removed, so its pages are free again. */
	assert_int_equal(free_bytes(f->mnt), room);

	/* Room again: the next run writes a complete record of its own. */
	assert_int_equal(unlink(filler), 0);
	(void)run(f, &o, TH_CMD(TH_PROBE, "sleep", "0", long_arg));
	th_fx_expect(&f->fx, 0, NULL);
	assert_int_equal(expect_no_torn_record(f, rec), REL_RECORD_VALID);
	assert_string_equal(th_json_str(f->fx.record, "exit.reason"), "exited");
	assert_int_equal((int)th_json_num(f->fx.record, "exit.code"), 0);
	const cJSON *cmd = th_json_at(f->fx.record, "command");
	assert_int_equal(cJSON_GetArraySize(cmd), 4);
	assert_string_equal(cJSON_GetArrayItem(cmd, 3)->valuestring, long_arg);
	free(before);
}

/* ---------------------------------------------------------------------------------------- */

/* A test named after its function, without the "test_" prefix. */
#define T(fn) { &#fn[5], fn, fx_setup, fx_teardown, NULL }

int main(void)
{
	th_require_privileged();
	const struct CMUnitTest tests[] = {
		T(test_record_checks_can_fail),
		T(test_worker_sigkill),
		T(test_supervisor_sigterm),
		T(test_supervisor_sigkill),
		T(test_supervisor_sigkill_id_lock),
		T(test_wall_timeout),
		T(test_record_parent_is_file),
		T(test_record_dir_readonly),
		T(test_record_disk_full),
	};
	return cmocka_run_group_tests_name("reliability-faults", tests, NULL, NULL);
}
