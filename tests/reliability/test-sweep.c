/* SPDX-License-Identifier: MIT */
/*
 * The host-id allocator under a race: two live sandboxes must never share a host uid/gid.
 *
 * Each privileged run holds its id by an flock on /run/warden/ids/<id>, and each start sweeps
 * lock files that nobody holds (left by a SIGKILLed supervisor). The sweep opens such a file,
 * then locks it, then unlinks it. Between its open and its lock, the file's name may come to
 * lead to another file: another supervisor swept the stale one and made its own. A sweep that
 * then unlinked by name removed a live sandbox's lock, and the next start took its id.
 *
 * warden-test pauses its sweep between the open and the flock of one named file
 * (WARDEN_TEST_SWEEP_PAUSE, a hook compiled only into warden-test), which makes the race
 * happen every time: with a policy of exactly one host id, supervisor S opens the stale lock
 * file and waits; supervisor A sweeps that file, makes its own and runs; S resumes. S must
 * leave A's lock alone and find no free id (exit 125), while A keeps its id.
 *
 * Environment (set by meson): WARDEN is warden-test, PROBE the probe. Needs full privilege;
 * otherwise exits 77, or fails under SBX_TEST_MUST_WORK=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rel.h"

/* Bounds on waiting for the other side; a hang fails the test instead of stalling it. */
#define GUARD_MS 30000
/* The ids' folder: entries beyond the sweep's bound (64) might hide ours from it. */
#define IDS_MAX_ENTRIES 48

struct sweep_fx {
	struct th_fx fx;
	uint32_t id;                /* the one host id of the policy; its lock file is removed */
	char fifos[PATH_MAX];
};

static int fx_setup(void **state)
{
	if (th_fx_setup(state, sizeof(struct sweep_fx), 0, 0) < 0)
		return -1;
	struct sweep_fx *f = *state;
	th_marker("sweep", f->fx.marker, sizeof(f->fx.marker));
	/* Outside the default range and test-leaks's, and apart from another run of this one. */
	f->id = 2200000000u + (uint32_t)getpid() % 1000000u;
	return 0;
}

static int fx_teardown(void **state)
{
	struct sweep_fx *f = *state;
	th_kill_procs(f->fx.marker, 0);
	(void)rel_id_remove_stale(f->id);
	th_fx_free(&f->fx);
	return 0;
}

/* The inode of the id's lock file, or 0 when there is none. */
static uint64_t lock_inode(uint32_t id)
{
	char path[64];
	(void)snprintf(path, sizeof(path), "%s/%u", TH_IDS_DIR, id);
	struct stat st;
	return lstat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Lock files in the ids' folder. */
static int ids_entries(void)
{
	char *names = th_list_dir(TH_IDS_DIR, NULL);
	if (!names)
		return 0;
	int n = 0;
	for (const char *p = names; *p; p++)
		n += *p == '\n';
	free(names);
	return n;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void test_sweep_never_shares_an_id(void **state)
{
	struct sweep_fx *f = *state;
	char yaml[128], pol[PATH_MAX], paused[PATH_MAX], resume[PATH_MAX], lock[64];
	(void)snprintf(yaml, sizeof(yaml), "user: { host_ids: { base: %u, count: 1 } }\n", f->id);
	th_policy(&f->fx.ws, yaml, pol);
	th_aux_path(&f->fx.ws, "fifos", f->fifos);
	assert_int_equal(mkdir(f->fifos, 0700), 0);
	th_pathf(paused, "%s/paused", f->fifos);
	th_pathf(resume, "%s/resume", f->fifos);
	assert_int_equal(mkfifo(paused, 0600), 0);
	assert_int_equal(mkfifo(resume, 0600), 0);

	/* The stale lock file a SIGKILLed supervisor leaves: there, and held by nobody. */
	(void)mkdir("/run/warden", 0700);
	(void)mkdir(TH_IDS_DIR, 0700);
	if (ids_entries() > IDS_MAX_ENTRIES)
		th_cannot_run("%s holds over %d entries; the sweep might not reach ours",
			      TH_IDS_DIR, IDS_MAX_ENTRIES);
	(void)snprintf(lock, sizeof(lock), "%s/%u", TH_IDS_DIR, f->id);
	int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(close(fd), 0);
	uint64_t stale = lock_inode(f->id);
	assert_int_equal(rel_id_state(f->id), 0);

	/* S: its sweep opens the stale file, says so on "paused", and waits on "resume". */
	int pfd = open(paused, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(pfd >= 0);
	char env_pause[64], env_fifos[PATH_MAX + 32];
	(void)snprintf(env_pause, sizeof(env_pause), "WARDEN_TEST_SWEEP_PAUSE=%u", f->id);
	th_pathf(env_fifos, "WARDEN_TEST_SWEEP_FIFOS=%s", f->fifos);
	const char *const env_s[] = { env_pause, env_fifos, NULL };
	struct th_opts os = th_fx_opts(&f->fx, pol);
	os.env = env_s;
	os.hard_timeout_ms = 3 * GUARD_MS;
	struct th_proc s;
	assert_int_equal(th_spawn(&os, TH_CMD(TH_PROBE, "exit", "0"), &s), 0);
	struct pollfd p = { .fd = pfd, .events = POLLIN };
	int n;
	do
		n = poll(&p, 1, GUARD_MS);
	while (n < 0 && errno == EINTR);
	char byte;
	if (n != 1 || read(pfd, &byte, 1) != 1)
		fail_msg("the sweep of warden-test never paused at %s", lock);
	assert_int_equal(close(pfd), 0);

	/* A: sweeps the stale file itself, makes its own lock file, and runs. */
	struct th_opts oa = th_fx_opts(&f->fx, pol);
	oa.hard_timeout_ms = 3 * GUARD_MS;
	struct th_proc a;
	assert_int_equal(th_spawn(&oa, TH_CMD(TH_PROBE, "sleep", "60", f->fx.marker), &a), 0);
	uint64_t held = 0;
	for (unsigned waited = 0; waited < GUARD_MS; waited += 10) {
		uint64_t ino = lock_inode(f->id);
		if (ino && ino != stale && rel_id_state(f->id) == 1) {
			held = ino;
			break;
		}
		sleep_ms(10);
	}
	if (!held)
		fail_msg("the second supervisor never held id %u", f->id);
	/* A's sandbox is live: its command runs. */
	if (rel_wait_procs(f->fx.marker, NULL, 0, 1, true, GUARD_MS) < 1)
		fail_msg("the second supervisor's command never ran");

	/* S resumes: it locks the stale file it opened, whose name now leads to A's. */
	int rfd = -1;
	for (unsigned waited = 0; rfd < 0 && waited < GUARD_MS; waited += 10) {
		rfd = open(resume, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (rfd < 0) {
			assert_int_equal(errno, ENXIO); /* S is not reading yet */
			sleep_ms(10);
		}
	}
	assert_true(rfd >= 0);
	assert_int_equal(close(rfd), 0);
	struct th_out out_s;
	th_finish(&s, &out_s);
	if (out_s.code == 0)
		fail_msg("a second sandbox ran with host id %u while another held it", f->id);
	if (out_s.code != 125 || !strstr(out_s.err, "allocate a host uid/gid"))
		th_show(&out_s);
	assert_int_equal(out_s.code, 125);
	assert_non_null(strstr(out_s.err, "allocate a host uid/gid"));
	th_out_done(&out_s);

	/* A still holds its id, through the same lock file. */
	assert_true(lock_inode(f->id) == held);
	assert_int_equal(rel_id_state(f->id), 1);
	assert_int_equal(kill(a.pid, SIGTERM), 0);
	struct th_out out_a;
	th_finish(&a, &out_a);
	if (out_a.code != 128 + SIGTERM)
		th_show(&out_a);
	assert_int_equal(out_a.code, 128 + SIGTERM);
	th_out_done(&out_a);
	/* And let go of it at its end, leaving nothing behind. */
	assert_int_equal(rel_id_state(f->id), -1);
}

int main(void)
{
	th_require_privileged();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sweep_never_shares_an_id, fx_setup,
						fx_teardown),
	};
	return cmocka_run_group_tests_name("reliability-sweep", tests, NULL, NULL);
}
