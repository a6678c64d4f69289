/* SPDX-License-Identifier: MIT */
/*
 * Leaks over many runs: 300 sandboxes one after another, then 100 with two at a time. Before
 * and after, the test counts this process's descriptors, the mounts in its mount table,
 * warden cgroups below its own cgroup, network namespaces, zombies, and /run/warden/ids
 * entries; it prints both and asserts that none grew. Every run is checked on its own too:
 * it exits 0 and its cgroup (named after its supervisor's pid) is gone when it has exited.
 * The supervisor's peak RSS (ru_maxrss from wait4, taken by the helper rel-rusage: rusage.c)
 * must not grow from run 1 to run 300 by more than RSS_GROWTH_KIB; since it varies by a few
 * hundred KiB from run to run, the median of the first RSS_WINDOW runs is compared with that
 * of the last RSS_WINDOW.
 *
 * A first test shows that each counter does move (a running sandbox adds a network namespace,
 * cgroups and a held id; an unreaped child is a zombie; a mount is a mount), so that "did not
 * grow" can fail.
 *
 * Other users of the machine run sandboxes too (and SIGKILL supervisors, leaving stale cgroups
 * and id entries), so what is asserted is tied to this test's own runs: the cgroups counted
 * are those named after its supervisors' pids; its runs take host ids from a range of their
 * own (a policy differing from the default in user.host_ids only) and the id entries counted
 * are those of that range; network namespaces and zombies are those of this program's cgroup
 * subtree (rel.h). The after-count is retaken for up to SETTLE_MS until it is back, since a
 * leak stays and a transient does not. Host-wide counts are printed beside, for information.
 *
 * Needs full privilege; otherwise exits 77, or fails under SBX_TEST_MUST_WORK=1.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rel.h"

#define SEQUENTIAL_RUNS 300
#define PARALLEL_RUNS 100
#define PARALLEL_SLOTS 2
#define RUN_TIMEOUT_MS 30000u
#define SETTLE_MS 3000u
/* How much the supervisor's peak RSS may grow from the first runs to the last. */
#define RSS_GROWTH_KIB 512
#define RSS_WINDOW 15

/* This test's host ids: a range of their own, outside the default one, per process. */
#define ID_RANGE_BASE 2100000000u
#define ID_RANGE_COUNT 256u
#define MAX_RUNS (SEQUENTIAL_RUNS + PARALLEL_RUNS + 16)

struct counts {
	int fds, mounts;
	int cg_mine, cg_all;
	int netns, netns_host;
	int zombies, zombies_host;
	struct rel_ids ids, ids_host;
};

/*
 * One test's fixture: the harness's first (see struct th_fx), whose workspace is slot 0's, and
 * a workspace of its own for each further slot.
 */
struct leaks_fx {
	struct th_fx fx;
	struct th_ws more_ws[PARALLEL_SLOTS - 1];
	struct th_ws *ws[PARALLEL_SLOTS];
	char policy[PARALLEL_SLOTS][PATH_MAX];
	uint32_t id_base;
	struct rel_cgroups cg;
	pid_t pids[MAX_RUNS];       /* every supervisor this test started */
	size_t n_pids;
	char mnt[PATH_MAX];
};

static int fx_teardown(void **state)
{
	struct leaks_fx *f = *state;
	if (f->mnt[0])
		(void)umount2(f->mnt, MNT_DETACH);
	for (int i = 0; i < PARALLEL_SLOTS - 1; i++)
		th_ws_remove(&f->more_ws[i]);
	th_fx_free(&f->fx);
	return 0;
}

static int fx_setup(void **state)
{
	if (th_fx_setup(state, sizeof(struct leaks_fx), 0, 0) < 0)
		return -1;
	struct leaks_fx *f = *state;
	f->ws[0] = &f->fx.ws;
	for (int i = 1; i < PARALLEL_SLOTS; i++) {
		f->ws[i] = &f->more_ws[i - 1];
		int r = th_ws_new(f->ws[i], 0, 0);
		if (r < 0) {
			print_error("create a workspace: %s\n", strerror(-r));
			(void)fx_teardown(state);
			return -1;
		}
	}
	f->id_base = ID_RANGE_BASE + ((uint32_t)getpid() % 8192u) * ID_RANGE_COUNT;
	for (int i = 0; i < PARALLEL_SLOTS; i++) {
		char yaml[128];
		(void)snprintf(yaml, sizeof(yaml), "user: { host_ids: { base: %u, count: %u } }\n",
			       f->id_base, ID_RANGE_COUNT);
		th_policy(f->ws[i], yaml, f->policy[i]);
	}
	rel_cgroups_find(&f->cg);
	th_marker("leaks", f->fx.marker, sizeof(f->fx.marker));
	return 0;
}

static void note_pid(struct leaks_fx *f, pid_t pid)
{
	if (f->n_pids == MAX_RUNS)
		fail_msg("more than %d runs", MAX_RUNS);
	f->pids[f->n_pids++] = pid;
}

static void take(const struct leaks_fx *f, struct counts *c)
{
	c->fds = rel_count_fds();
	c->mounts = rel_count_mounts();
	c->cg_mine = rel_cgroups_count_of(&f->cg, f->pids, f->n_pids);
	c->cg_all = rel_cgroups_count(&f->cg, 0, NULL, 0);
	c->netns = rel_count_netns();
	c->netns_host = rel_count_netns_host();
	c->zombies = rel_count_zombies();
	c->zombies_host = rel_count_zombies_host();
	rel_ids_count_range(f->id_base, ID_RANGE_COUNT, &c->ids);
	rel_ids_count(&c->ids_host);
}

/* The asserted counts: which one grew, or NULL. */
static const char *grown(const struct counts *b, const struct counts *a)
{
	if (a->fds != b->fds)
		return "descriptors";
	if (a->mounts != b->mounts)
		return "mounts";
	if (a->cg_mine > b->cg_mine)
		return "this test's warden cgroups";
	if (a->netns > b->netns)
		return "network namespaces";
	if (a->zombies > b->zombies)
		return "zombies";
	if (a->ids.total > b->ids.total)
		return "/run/warden/ids entries of this test's range";
	return NULL;
}

/* Retakes *a until nothing has grown since *b or SETTLE_MS pass; returns what grew. */
static const char *settle(const struct leaks_fx *f, const struct counts *b, struct counts *a)
{
	uint64_t end = th_now_ms() + SETTLE_MS;
	take(f, a);
	const char *what;
	while ((what = grown(b, a)) && th_now_ms() < end) {
		rel_sleep_ms(100);
		take(f, a);
	}
	return what;
}

static void print_counts(const char *title, const struct counts *b, const struct counts *a)
{
	print_message("%s\n", title);
	print_message("  %-44s %8s %8s\n", "count", "before", "after");
	const struct {
		const char *name;
		int before, after;
	} rows[] = {
		{ "own descriptors", b->fds, a->fds },
		{ "mounts (own mount table)", b->mounts, a->mounts },
		{ "warden-* cgroups of this test's supervisors", b->cg_mine, a->cg_mine },
		{ "warden-* cgroups (host, every hierarchy)", b->cg_all, a->cg_all },
		{ "network namespaces (own cgroup subtree)", b->netns, a->netns },
		{ "network namespaces (host)", b->netns_host, a->netns_host },
		{ "zombies (parent in own cgroup subtree)", b->zombies, a->zombies },
		{ "zombies (host)", b->zombies_host, a->zombies_host },
		{ "/run/warden/ids entries (this test's range)", b->ids.total, a->ids.total },
		{ "  of which held (flock)", b->ids.held, a->ids.held },
		{ "/run/warden/ids entries (host)", b->ids_host.total, a->ids_host.total },
		{ "  of which held (flock)", b->ids_host.held, a->ids_host.held },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		print_message("  %-44s %8d %8d\n", rows[i].name, rows[i].before, rows[i].after);
}

/* What a batch of runs saw. */
struct batch {
	int runs, failed, cg_left;
	long rss_first, rss_last, rss_min, rss_max;
	long rss[MAX_RUNS];
	uint64_t ms;
	char first_failure[4800];
};

/* Checks one finished run: exit 0, and no cgroup of its supervisor left. */
static void check_run(struct leaks_fx *f, struct batch *b, const struct rel_done *d)
{
	pid_t pid = d->child;
	long rss = d->maxrss_kib;
	if (pid <= 0)
		fail_msg("no report from rel-rusage: exit %d\nstdout: %s\nstderr: %s", d->code,
			 d->out, d->err);
	note_pid(f, pid);
	if (b->runs == 0)
		b->rss_first = b->rss_min = b->rss_max = rss;
	b->rss_last = rss;
	if (b->runs < MAX_RUNS)
		b->rss[b->runs] = rss;
	if (rss < b->rss_min)
		b->rss_min = rss;
	if (rss > b->rss_max)
		b->rss_max = rss;
	b->runs++;
	char names[512];
	int left = rel_cgroups_count(&f->cg, pid, names, sizeof(names));
	if (d->code != 0 || left) {
		if (!b->failed && !b->cg_left)
			(void)snprintf(b->first_failure, sizeof(b->first_failure),
				       "run %d (warden %d): exit %d, cgroups left: %s\nstderr: %s",
				       b->runs, (int)pid, d->code, left ? names : "none", d->err);
		b->failed += d->code != 0;
		b->cg_left += left != 0;
	}
}

/* Starts `probe exit 0` (or cmd) in the workspace of slot, with this test's host id range. */
static void start_cmd(struct leaks_fx *f, int slot, struct rel_run *r, const char *const *cmd)
{
	struct th_opts o = { .workspace = f->ws[slot]->dir, .policy = f->policy[slot] };
	int e = rel_spawn_measured(&o, cmd, r);
	if (e < 0)
		fail_msg("spawn warden: %s", strerror(-e));
}

static void start(struct leaks_fx *f, int slot, struct rel_run *r)
{
	start_cmd(f, slot, r, TH_CMD(TH_PROBE, "exit", "0"));
}

static void report(const char *title, const struct batch *b, const struct counts *before,
		   const struct counts *after, const char *what)
{
	print_message("%s: %d runs in %llu ms (%.1f ms each), %d failed, %d left a cgroup\n",
		      title, b->runs, (unsigned long long)b->ms,
		      b->runs ? (double)b->ms / b->runs : 0.0, b->failed, b->cg_left);
	print_counts("counts before and after:", before, after);
	if (b->failed || b->cg_left)
		fail_msg("%s", b->first_failure);
	if (what)
		fail_msg("%s grew (and stayed) over %d runs", what, b->runs);
}

/* ---------------------------------------------------------------------------------------- */

static bool is_zombie(pid_t pid)
{
	char state;
	return rel_proc_stat(pid, &state, NULL) && state == 'Z';
}

/* Each counter moves when there is something to count: the assertions below can fail. */
static void test_counters_move(void **state)
{
	struct leaks_fx *f = *state;
	rel_private_mounts();
	struct counts before, during, after;
	take(f, &before);

	/* A running sandbox: a network namespace, a cgroup per hierarchy, a held id. */
	struct th_opts o = th_fx_opts(&f->fx, f->policy[0]);
	struct th_proc p;
	assert_int_equal(th_spawn(&o, TH_CMD(TH_PROBE, "sleep", "30", f->fx.marker), &p), 0);
	note_pid(f, p.pid);
	pid_t probe = 0;
	if (rel_wait_procs(f->fx.marker, "probe", p.pid, 1, false, 10000) == 1)
		(void)th_find_procs(f->fx.marker, "probe", p.pid, &probe, 1);
	take(f, &during);
	long uid = probe ? rel_uid_of(probe) : -1;
	int id_state = uid > 0 ? rel_id_state((uint32_t)uid) : -2;
	(void)kill(p.pid, SIGTERM);
	struct th_out out;
	th_finish(&p, &out);
	th_out_done(&out);
	print_counts("while one sandbox runs:", &before, &during);
	assert_true(probe > 0);
	assert_int_equal(during.netns, before.netns + 1);
	assert_int_equal(during.cg_mine, before.cg_mine + f->cg.n);
	/* Its host id is in this test's range, and held. */
	assert_in_range(uid, f->id_base, f->id_base + ID_RANGE_COUNT - 1);
	assert_int_equal(id_state, 1);
	assert_int_equal(during.ids.total, before.ids.total + 1);
	assert_int_equal(during.ids.held, before.ids.held + 1);
	/* th_spawn holds two pipes and a pidfd while warden runs. */
	assert_int_equal(during.fds, before.fds + 3);

	/* A child that exited and was not reaped. */
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	for (int i = 0; i < 200 && !is_zombie(child); i++)
		rel_sleep_ms(5);
	int zombies = rel_count_zombies();
	(void)waitpid(child, NULL, 0);
	assert_int_equal(zombies, before.zombies + 1);

	/* A mount, in this program's own mount namespace. */
	th_pathf(f->mnt, "%s/mnt", f->fx.ws.aux);
	assert_int_equal(mkdir(f->mnt, 0755), 0);
	assert_int_equal(mount("reliability", f->mnt, "tmpfs", 0, "size=64k"), 0);
	int mounts = rel_count_mounts();
	assert_int_equal(umount2(f->mnt, 0), 0);
	f->mnt[0] = '\0';
	assert_int_equal(mounts, before.mounts + 1);

	/* An id entry of the range that nobody holds (as a SIGKILLed supervisor leaves). */
	char stale[PATH_MAX];
	th_pathf(stale, TH_IDS_DIR "/%u", f->id_base + ID_RANGE_COUNT - 1);
	assert_int_equal(th_write_file(stale, ""), 0);
	struct rel_ids ids;
	rel_ids_count_range(f->id_base, ID_RANGE_COUNT, &ids);
	(void)unlink(stale);
	assert_int_equal(ids.total, before.ids.total + 1);
	assert_int_equal(ids.held, before.ids.held);

	/*
	 * ru_maxrss from wait4 is the peak of warden and of every process it reaped, each on its
	 * own (the worker reaps the command): a command touching 64 MiB shows.
	 */
	struct rel_run r;
	struct rel_done small, big;
	start(f, 0, &r);
	rel_reap(&r, RUN_TIMEOUT_MS, &small);
	start_cmd(f, 0, &r, TH_CMD(TH_PROBE, "membomb", "64"));
	rel_reap(&r, RUN_TIMEOUT_MS, &big);
	print_message("ru_maxrss: probe exit 0 %ld KiB, probe membomb 64 %ld KiB\n",
		      small.maxrss_kib, big.maxrss_kib);
	assert_int_equal(small.code, 0);
	assert_int_equal(big.code, 0);
	assert_true(small.maxrss_kib > 0);
	assert_true(big.maxrss_kib > small.maxrss_kib);
	assert_true(big.maxrss_kib >= 64 * 1024);

	/* And everything is back. */
	const char *what = settle(f, &before, &after);
	print_counts("after it ended:", &before, &after);
	if (what)
		fail_msg("%s did not come back", what);
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

static long median(const long *v, size_t n)
{
	long sorted[RSS_WINDOW];
	assert_true(n > 0 && n <= RSS_WINDOW);
	memcpy(sorted, v, n * sizeof(v[0]));
	qsort(sorted, n, sizeof(sorted[0]), cmp_long);
	return sorted[n / 2];
}

static void test_sequential_runs(void **state)
{
	struct leaks_fx *f = *state;
	struct counts before, after;
	struct batch b = { 0 };
	take(f, &before);
	uint64_t t0 = th_now_ms();
	for (int i = 0; i < SEQUENTIAL_RUNS; i++) {
		struct rel_run r;
		struct rel_done d;
		start(f, 0, &r);
		rel_reap(&r, RUN_TIMEOUT_MS, &d);
		check_run(f, &b, &d);
	}
	b.ms = th_now_ms() - t0;
	const char *what = settle(f, &before, &after);
	report("sequential", &b, &before, &after, what);

	long first = median(b.rss, RSS_WINDOW);
	long last = median(b.rss + SEQUENTIAL_RUNS - RSS_WINDOW, RSS_WINDOW);
	print_message("supervisor ru_maxrss: run 1 %ld KiB, run %d %ld KiB (min %ld, max %ld); "
		      "median of runs 1-%d %ld KiB, of runs %d-%d %ld KiB\n", b.rss_first,
		      SEQUENTIAL_RUNS, b.rss_last, b.rss_min, b.rss_max, RSS_WINDOW, first,
		      SEQUENTIAL_RUNS - RSS_WINDOW + 1, SEQUENTIAL_RUNS, last);
	if (last - first > RSS_GROWTH_KIB)
		fail_msg("the supervisor's peak RSS grew by %ld KiB from the first runs to the last",
			 last - first);
}

/*
 * Two at a time, each in a workspace of its own: runs that share a workspace race on its
 * placeholders (test-stress shows that), which is not what this test is about.
 */
static void test_parallel_runs(void **state)
{
	struct leaks_fx *f = *state;
	struct counts before, after;
	struct batch b = { 0 };
	struct rel_run r[PARALLEL_SLOTS];
	pid_t pid[PARALLEL_SLOTS];
	take(f, &before);
	uint64_t t0 = th_now_ms();
	int started = 0, running = 0;
	for (int s = 0; s < PARALLEL_SLOTS; s++) {
		start(f, s, &r[s]);
		pid[s] = r[s].pid;
		started++;
		running++;
	}
	while (running) {
		/* Whichever ends first frees its slot for the next run. */
		struct pollfd pfd[PARALLEL_SLOTS];
		for (int s = 0; s < PARALLEL_SLOTS; s++)
			pfd[s] = (struct pollfd){ .fd = pid[s] > 0 ? r[s].pidfd : -1, .events = POLLIN };
		int n = poll(pfd, PARALLEL_SLOTS, 1000);
		if (n < 0 && errno != EINTR)
			fail_msg("poll: %s", strerror(errno));
		for (int s = 0; s < PARALLEL_SLOTS; s++) {
			if (pid[s] <= 0)
				continue;
			/* A run past its timeout is reaped too: rel_reap kills it. */
			if (!(pfd[s].revents & POLLIN) && th_now_ms() < r[s].t0 + RUN_TIMEOUT_MS)
				continue;
			struct rel_done d;
			rel_reap(&r[s], RUN_TIMEOUT_MS, &d);
			check_run(f, &b, &d);
			running--;
			pid[s] = -1;
			if (started < PARALLEL_RUNS) {
				start(f, s, &r[s]);
				pid[s] = r[s].pid;
				started++;
				running++;
			}
		}
	}
	b.ms = th_now_ms() - t0;
	const char *what = settle(f, &before, &after);
	report("two at a time", &b, &before, &after, what);
}

/* ---------------------------------------------------------------------------------------- */

/* A test named after its function, without the "test_" prefix. */
#define T(fn) { &#fn[5], fn, fx_setup, fx_teardown, NULL }

int main(void)
{
	th_require_privileged();
	const struct CMUnitTest tests[] = {
		T(test_counters_move),
		T(test_sequential_runs),
		T(test_parallel_runs),
	};
	return cmocka_run_group_tests_name("reliability-leaks", tests, NULL, NULL);
}
