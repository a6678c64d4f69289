/* SPDX-License-Identifier: MIT */
/*
 * Privileged tests of the confined children that read what a sandbox wrote (eval/confined.c,
 * sandbox/judge.c): the kernel's own view of such a child (/proc/<pid>/status and fd/) while
 * it runs, that every syscall outside its filter kills it with SIGSYS, that the supervisor
 * kills a child that answers too much and refuses one that answers garbage, and that the
 * static criteria judged this way still read a file only root may read, because the
 * supervisor opened it.
 *
 * A child under test runs a hook (struct attempt) once it is confined: it blocks reading a
 * gate pipe the test handed it, so that the test can read its status while it waits, then
 * makes the one call the case is about.
 *
 * Needs full privilege (root with CAP_SYS_ADMIN in the initial user namespace); otherwise
 * the program exits 77, or fails under SBX_TEST_MUST_WORK=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "confined.h"
#include "harness.h"
#include "rundir.h"
#include "task.h"

/* Rounds of looking at /proc/<pid>/status (each after a yield) before giving up. */
#define STATUS_ROUNDS 2000000u

enum call { CALL_NONE, CALL_OPEN, CALL_OPENAT, CALL_SOCKET, CALL_WRITE_OTHER, CALL_MMAP_EXEC,
	    CALL_KILL, CALL_FORK, CALL_SETUID, CALL_NANOSLEEP };

struct attempt {
	int gate;         /* read end of the gate pipe (kept by the child) */
	enum call call;
};

/* Runs in the confined child. */
static int attempt_fn(void *arg, int out_fd)
{
	const struct attempt *a = arg;
	char byte;
	if (read(a->gate, &byte, 1) != 1)
		return -EIO;
	switch (a->call) {
	case CALL_NONE:
		break;
	case CALL_OPEN:
		(void)syscall(SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY);
		break;
	case CALL_OPENAT:
		(void)openat(a->gate, "x", O_RDONLY);
		break;
	case CALL_SOCKET:
		(void)socket(AF_INET, SOCK_STREAM, 0);
		break;
	case CALL_WRITE_OTHER:
		if (write(a->gate, "x", 1) < 0)
			return -errno;
		break;
	case CALL_MMAP_EXEC:
		(void)mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		break;
	case CALL_KILL:
		(void)kill(getppid(), 0);
		break;
	case CALL_FORK:
		(void)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
		break;
	case CALL_SETUID:
		(void)syscall(SYS_setuid, 0);
		break;
	case CALL_NANOSLEEP: {
		struct timespec ts = { 0, 1 };
		(void)syscall(SYS_nanosleep, &ts, NULL);
		break;
	}
	}
	/* Reached only when the call was allowed: a control case, or a filter that leaks. */
	return write(out_fd, "alive", 5) == 5 ? 0 : -EIO;
}

/* What the test saw of the child while it waited at the gate. */
struct seen {
	int gate_w;              /* write end of the gate pipe */
	int gate_r;              /* its read end, as numbered in the child */
	bool ok;
	char status[8192];
	char fds[512];           /* the child's fd numbers, space-separated */
	size_t n_fds;
};

/* Reads /proc/<pid>/status until the filter is on (it goes on last), then opens the gate. */
static void on_spawn(void *ctx, pid_t pid)
{
	struct seen *s = ctx;
	char path[64];
	(void)snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	for (unsigned round = 0; round < STATUS_ROUNDS && !s->ok; round++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			break;
		ssize_t n = read(fd, s->status, sizeof(s->status) - 1);
		(void)close(fd);
		s->status[n > 0 ? n : 0] = '\0';
		if (strstr(s->status, "\nSeccomp:\t2\n"))
			s->ok = true;
		else
			(void)sched_yield();
	}
	(void)snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	struct dirent *de;
	size_t o = 0;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		o += (size_t)snprintf(s->fds + o, sizeof(s->fds) - o, "%s ", de->d_name);
		s->n_fds++;
	}
	if (d)
		(void)closedir(d);
	if (write(s->gate_w, "g", 1) != 1)
		s->ok = false;
}

static const char *field(const char *status, const char *name, char *out, size_t cap)
{
	char key[32];
	(void)snprintf(key, sizeof(key), "\n%s:\t", name);
	const char *p = strstr(status, key);
	if (!p)
		fail_msg("no %s in /proc/<pid>/status", name);
	p += strlen(key);
	size_t n = strcspn(p, "\n");
	(void)snprintf(out, cap, "%.*s", (int)n, p);
	return out;
}

/* Runs a confined child making call; returns ev_confined_run's result and what was seen. */
static int run_attempt(bool privileged, enum call call, struct seen *s, char *why, size_t why_len,
		       struct ev_confined_out *out)
{
	int gate[2];
	assert_int_equal(pipe2(gate, O_CLOEXEC), 0);
	memset(s, 0, sizeof(*s));
	s->gate_w = gate[1];
	s->gate_r = gate[0];
	struct attempt a = { .gate = gate[0], .call = call };
	int fds[] = { gate[0] };
	struct ev_confined c = {
		.ids = ev_confined_ids_for(privileged),
		.read_fds = fds,
		.n_read_fds = 1,
		.max_out = 64,
		.on_spawn = on_spawn,
		.on_spawn_ctx = s,
	};
	int r = ev_confined_run(&c, "the test child", attempt_fn, &a, out, why, why_len);
	(void)close(gate[0]);
	(void)close(gate[1]);
	return r;
}

/* The kernel's view of a confined child: ids, no capabilities, no_new_privs, filter, fds. */
static void check_identity(bool privileged)
{
	struct seen s;
	struct ev_confined_out out = { 0 };
	char why[256] = "";
	int r = run_attempt(privileged, CALL_NONE, &s, why, sizeof(why), &out);
	if (r < 0)
		fail_msg("the control child failed: %s", why);
	assert_true(s.ok);
	assert_int_equal(out.len, 5);
	assert_memory_equal(out.buf, "alive", 5);
	free(out.buf);

	char v[128], want[64];
	if (privileged) {
		(void)snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", SUP_RUNDIR_OWNER,
			       SUP_RUNDIR_OWNER, SUP_RUNDIR_OWNER, SUP_RUNDIR_OWNER);
		assert_string_equal(field(s.status, "Uid", v, sizeof(v)), want);
		assert_string_equal(field(s.status, "Gid", v, sizeof(v)), want);
		(void)snprintf(want, sizeof(want), "%u ", SUP_RUNDIR_OWNER);
		assert_string_equal(field(s.status, "Groups", v, sizeof(v)), want);
	}
	static const char *const sets[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		assert_string_equal(field(s.status, sets[i], v, sizeof(v)), TH_ZERO_CAPS);
	assert_string_equal(field(s.status, "NoNewPrivs", v, sizeof(v)), "1");
	assert_string_equal(field(s.status, "Seccomp", v, sizeof(v)), "2");
	/* Two fds: the gate handed to it and the pipe it answers on; nothing of the parent's. */
	if (s.n_fds != 2) {
		print_error("fds: %s\n", s.fds);
		fail_msg("the confined child holds %zu fds, expected 2", s.n_fds);
	}
	char gate[16];
	(void)snprintf(gate, sizeof(gate), "%d ", s.gate_r);
	assert_non_null(strstr(s.fds, gate));
}

static void test_identity_privileged(void **state)
{
	(void)state;
	check_identity(true);
}

/* Unprivileged mode as root: the same empty sets, the bounding set included. */
static void test_identity_unprivileged(void **state)
{
	(void)state;
	check_identity(false);
}

/*
 * Unprivileged mode as a plain user (warden run by someone who is not root): the user it
 * stays, with every set it can lower empty. The bounding set of a plain user cannot be
 * lowered without CAP_SETPCAP; with no_new_privs and no exec it gives nothing. The test
 * becomes nobody in a child of its own, so the checks there report through the exit status.
 */
static void test_identity_plain_user(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		gid_t g = SUP_RUNDIR_OWNER;
		if (setgroups(1, &g) < 0 || setresgid(g, g, g) < 0 ||
		    setresuid(SUP_RUNDIR_OWNER, SUP_RUNDIR_OWNER, SUP_RUNDIR_OWNER) < 0)
			_exit(10);
		struct seen s;
		struct ev_confined_out out = { 0 };
		char why[256] = "", v[128], want[64];
		if (run_attempt(false, CALL_NONE, &s, why, sizeof(why), &out) < 0 || !s.ok)
			_exit(11);
		(void)snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", SUP_RUNDIR_OWNER,
			       SUP_RUNDIR_OWNER, SUP_RUNDIR_OWNER, SUP_RUNDIR_OWNER);
		if (strcmp(field(s.status, "Uid", v, sizeof(v)), want) != 0)
			_exit(12);
		static const char *const sets[] = { "CapInh", "CapPrm", "CapEff", "CapAmb" };
		for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
			if (strcmp(field(s.status, sets[i], v, sizeof(v)), TH_ZERO_CAPS) != 0)
				_exit(13);
		/*
		 * Its fds are not counted here: a child that is not dumpable hides /proc/<pid>/fd
		 * from its own uid (which the tests as root do count).
		 */
		if (strcmp(field(s.status, "NoNewPrivs", v, sizeof(v)), "1") != 0 ||
		    strcmp(field(s.status, "Seccomp", v, sizeof(v)), "2") != 0)
			_exit(14);
		/* And the filter holds for it too. */
		if (run_attempt(false, CALL_OPEN, &s, why, sizeof(why), &out) != -ECHILD ||
		    !strstr(why, "(SIGSYS)"))
			_exit(15);
		_exit(0);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("the plain user's confined child failed its check %d (10 setuid, 11 run, "
			 "12 uid, 13 capabilities, 14 nnp/seccomp, 15 filter)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* Every call outside the filter kills the child with SIGSYS; none gets to answer. */
static void test_sigsys(void **state)
{
	(void)state;
	static const struct {
		enum call call;
		const char *name;
	} cases[] = {
		{ CALL_OPEN, "openat(/etc/passwd)" },	 { CALL_OPENAT, "openat(gate)" },
		{ CALL_SOCKET, "socket" },		 { CALL_WRITE_OTHER, "write to another fd" },
		{ CALL_MMAP_EXEC, "mmap(PROT_EXEC)" }, { CALL_KILL, "kill" },
		{ CALL_FORK, "clone" },		 { CALL_SETUID, "setuid" },
		{ CALL_NANOSLEEP, "nanosleep" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int privileged = 0; privileged < 2; privileged++) {
			struct seen s;
			struct ev_confined_out out = { 0 };
			char why[256] = "";
			int r = run_attempt(privileged, cases[i].call, &s, why, sizeof(why), &out);
			if (r != -ECHILD || !strstr(why, "(SIGSYS)")) {
				free(out.buf);
				fail_msg("%s (%s): expected death by SIGSYS, got %d: %s",
					 cases[i].name, privileged ? "privileged" : "unprivileged",
					 r, why);
			}
			assert_null(out.buf);
		}
	}
}

static int chatty_fn(void *arg, int out_fd)
{
	(void)arg;
	char buf[128];
	memset(buf, 'x', sizeof(buf));
	return write(out_fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf) ? 0 : -EIO;
}

/* A child that answers more than it may is killed, and its answer is not used. */
static void test_oversized_answer(void **state)
{
	(void)state;
	struct ev_confined c = { .ids = ev_confined_ids_for(true), .max_out = 100 };
	struct ev_confined_out out = { 0 };
	char why[256] = "";
	assert_int_equal(ev_confined_run(&c, "the chatty child", chatty_fn, NULL, &out, why,
					 sizeof(why)), -EMSGSIZE);
	assert_null(out.buf);
	assert_non_null(strstr(why, "answered more than 100 bytes"));
	c.max_out = 128; /* the control: exactly the cap is fine */
	assert_int_equal(ev_confined_run(&c, "the chatty child", chatty_fn, NULL, &out, why,
					 sizeof(why)), 0);
	assert_int_equal(out.len, 128);
	free(out.buf);
}

/* ---- the deadline and the stop signals ---- */

/* A child that waits on a gate that never opens (it uses no CPU), or spins (all CPU). */
struct wait_child {
	int gate;       /* read end of a pipe nobody writes to, or -1 to spin */
};

static int wait_fn(void *arg, int out_fd)
{
	const struct wait_child *w = arg;
	(void)out_fd;
	char byte;
	if (w->gate >= 0)
		return read(w->gate, &byte, 1) == 1 ? 0 : -EIO;
	for (volatile unsigned long i = 0;; i++)
		;
}

/* What the test does to the child once it exists. */
enum poke { POKE_NONE, POKE_SIGSTOP, POKE_SIGTERM_SELF };

struct spawned {
	enum poke poke;
	pid_t pid;
};

static void poke_on_spawn(void *ctx, pid_t pid)
{
	struct spawned *s = ctx;
	s->pid = pid;
	if (s->poke == POKE_SIGSTOP && kill(pid, SIGSTOP) < 0)
		s->pid = -1;
	if (s->poke == POKE_SIGTERM_SELF && kill(getpid(), SIGTERM) < 0)
		s->pid = -1;
}

/* Runs wait_fn (gate or spin) with deadline_ms and poke; the child must be gone after. */
static int run_waiter(bool spin, unsigned deadline_ms, enum poke poke, char *why, size_t why_len)
{
	int gate[2];
	assert_int_equal(pipe2(gate, O_CLOEXEC), 0);
	struct wait_child w = { .gate = spin ? -1 : gate[0] };
	int fds[] = { gate[0] };
	struct spawned s = { .poke = poke, .pid = 0 };
	struct ev_confined c = {
		.ids = ev_confined_ids_for(true),
		.read_fds = fds,
		.n_read_fds = 1,
		.max_out = 64,
		.deadline_ms = deadline_ms,
		.on_spawn = poke_on_spawn,
		.on_spawn_ctx = &s,
	};
	struct ev_confined_out out = { 0 };
	int r = ev_confined_run(&c, "the waiting child", wait_fn, &w, &out, why, why_len);
	(void)close(gate[0]);
	(void)close(gate[1]);
	assert_null(out.buf);
	assert_true(s.pid > 0);
	/* Killed and reaped: not even a zombie is left. */
	assert_int_equal(kill(s.pid, 0), -1);
	assert_int_equal(errno, ESRCH);
	return r;
}

/*
 * A child that is stopped (SIGSTOP, from anyone of its uid) no longer holds the supervisor:
 * at its deadline it is killed and reaped, and the reason says it was held up, not busy. One
 * that waits without using a CPU is held up too; neither is blamed on its input.
 */
static void test_deadline_held_up(void **state)
{
	(void)state;
	char why[256] = "";
	int r = run_waiter(false, 300, POKE_SIGSTOP, why, sizeof(why));
	if (r != -ETIME || !strstr(why, "held up past its deadline of 300 ms (stopped"))
		fail_msg("a stopped child: expected -ETIME, got %d: %s", r, why);
	r = run_waiter(false, 300, POKE_NONE, why, sizeof(why));
	if (r != -ETIME || !strstr(why, "held up past its deadline of 300 ms (not stopped"))
		fail_msg("a waiting child: expected -ETIME, got %d: %s", r, why);
}

/* A child busy past its deadline is killed for the time it took (-ETIMEDOUT). */
static void test_deadline_busy(void **state)
{
	(void)state;
	char why[256] = "";
	int r = run_waiter(true, 1000, POKE_NONE, why, sizeof(why));
	/*
	 * Busy means a quarter of a CPU or more over the deadline; a host loaded past that (two
	 * CPUs and a load of eight) leaves the spinner starved, which is -ETIME, said so. Either
	 * way it was killed at the deadline, and the class follows its CPU time.
	 */
	unsigned cpu_ms = 0;
	const char *at = strstr(why, "not stopped, ");
	if (r == -ETIME && at && sscanf(at, "not stopped, %u ms of CPU", &cpu_ms) == 1 &&
	    cpu_ms < 250) {
		print_message("starved, not busy, on this loaded host: %s\n", why);
		return;
	}
	if (r != -ETIMEDOUT || !strstr(why, "ran past its deadline of 1000 ms"))
		fail_msg("a spinning child: expected -ETIMEDOUT, got %d: %s", r, why);
}

/*
 * A stop signal that the caller holds blocked (as `warden eval` and `grade` do while they
 * grade) ends the wait for a child at once, even a stopped one; the child is killed and
 * reaped, and the signal stays pending for the caller to take.
 */
static void test_stop_signal(void **state)
{
	(void)state;
	sigset_t term, old;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	assert_int_equal(sigprocmask(SIG_BLOCK, &term, &old), 0);
	char why[256] = "";
	/* The default deadline (a minute): the signal, not the clock, must end this. */
	int r = run_waiter(false, 0, POKE_SIGTERM_SELF, why, sizeof(why));
	sigset_t pending;
	assert_int_equal(sigpending(&pending), 0);
	bool still = sigismember(&pending, SIGTERM) == 1;
	const struct timespec zero = { 0, 0 };
	(void)sigtimedwait(&term, NULL, &zero);
	assert_int_equal(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	if (r != -EINTR || !strstr(why, "interrupted"))
		fail_msg("expected -EINTR, got %d: %s", r, why);
	assert_true(still);
}

/* ---- the static criteria judge ---- */

struct ws {
	char dir[PATH_MAX];
	int fd;
};

static void put(struct ws *w, const char *name, const char *text, mode_t mode)
{
	int fd = openat(w->fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	(void)close(fd);
}

static struct pol_task *task_of(const char *criteria)
{
	char yaml[4096];
	(void)snprintf(yaml, sizeof(yaml), "schema_version: 1\ntask_id: judge\n"
		       "agent: { run: [\"true\"] }\ncriteria:\n%s", criteria);
	struct pol_task *t = NULL;
	struct pol_diag diag;
	if (pol_task_parse("judge.yaml", yaml, strlen(yaml), NULL, NULL, &t, &diag) < 0)
		fail_msg("task: %s", diag.message);
	return t;
}

/*
 * The judge runs as SUP_RUNDIR_OWNER, which cannot open a root-owned 0600 file in a 0700
 * folder; it judges that file all the same, from the fd the supervisor opened. A file it was
 * not handed (a criterion on a FIFO) is judged from what the supervisor found, never opened.
 */
static void test_judge_static(void **state)
{
	(void)state;
	struct ws w;
	const char *tmp = secure_getenv("TMPDIR");
	(void)snprintf(w.dir, sizeof(w.dir), "%s/warden-priv-judge-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(w.dir));
	assert_int_equal(chmod(w.dir, 0700), 0);
	w.fd = open(w.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(w.fd >= 0);
	put(&w, "secret.txt", "only root reads this\n", 0600);
	put(&w, "doc.json", "{\"a\": {\"b\": [1, 2, 3]}}", 0600);
	assert_int_equal(mkfifoat(w.fd, "fifo", 0600), 0);

	struct pol_task *t = task_of(
		"  - { description: c, file_contains: { path: secret.txt, includes: [root] } }\n"
		"  - { description: m, file_matches: { path: secret.txt, regex: '^only' } }\n"
		"  - { description: j, json_equals: { path: doc.json, pointer: /a/b/2, op: eq, value: 3 } }\n"
		"  - { description: x, command: { run: [\"true\"] } }\n"
		"  - { description: f, file_contains: { path: fifo, includes: [x] } }\n"
		"  - { description: e, file_exists: secret.txt }\n"
		"  - { description: a, file_absent: nothing }\n"
		"  - { description: r, file_matches: { path: secret.txt, regex: 'x' } }\n");
	/* A pattern that does not compile (the task parser refuses one, so it is put in here). */
	free(t->criteria[7].regex);
	t->criteria[7].regex = strdup("(");
	assert_non_null(t->criteria[7].regex);
	struct sup_crit_result res[TASK_MAX_CRITERIA];
	memset(res, 0x5a, sizeof(res));
	struct ev_confined_ids ids = ev_confined_ids_for(true);
	ev_judge_static(&ids, t, w.fd, res);
	for (size_t i = 0; i < 3; i++)
		if (!res[i].passed)
			fail_msg("criteria[%zu]: %s", i, res[i].details);
	assert_int_equal(((uint8_t *)&res[3])[0], 0x5a); /* the command criterion: untouched */
	assert_false(res[4].passed);
	assert_non_null(strstr(res[4].details, "is a FIFO, not a regular file"));
	assert_true(res[5].passed && res[6].passed);
	assert_true(res[7].error && !res[7].passed);
	assert_non_null(strstr(res[7].details, "does not compile"));

	pol_task_free(t);
	(void)close(w.fd);
	char path[PATH_MAX + 32];
	static const char *const names[] = { "secret.txt", "doc.json", "fifo" };
	for (size_t i = 0; i < 3; i++) {
		(void)snprintf(path, sizeof(path), "%s/%s", w.dir, names[i]);
		(void)unlink(path);
	}
	(void)rmdir(w.dir);
}

/* ---- what the agent can make slow scores 0 ---- */

/* A 1 MiB file of 'a': '(a|aa)*c' takes glibc's matcher far longer than a second on it. */
#define SLOW_REGEX "(a|aa)*c"
#define SLOW_LEN (1u << 20)

/* The CPU time, in seconds, the judging process below gives each judge it forks. */
#define TEST_CPU_SECONDS 1u

struct judged {
	struct sup_crit_result res[TASK_MAX_CRITERIA];
	int survived;   /* 1: the judging process itself was not killed */
};

/*
 * Runs fn(ctx, out) in a child process whose hard RLIMIT_CPU is TEST_CPU_SECONDS, which the
 * judges it forks inherit (sbx_judge_confine lowers theirs to at most that): a judge that
 * works through a slow input is killed by the kernel within a second of CPU time. The
 * process that judges is limited too, so it survives only if it never ran the slow work
 * itself. Returns what it found.
 */
static void judge_limited(void (*fn)(void *ctx, struct judged *out), void *ctx,
			  struct judged *out)
{
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		(void)close(p[0]);
		struct rlimit rl = { TEST_CPU_SECONDS, TEST_CPU_SECONDS };
		if (setrlimit(RLIMIT_CPU, &rl) < 0)
			_exit(10);
		static struct judged j;
		memset(&j, 0x5a, sizeof(j));
		fn(ctx, &j);
		j.survived = 1;
		const char *b = (const char *)&j;
		for (size_t o = 0; o < sizeof(j);) {
			ssize_t n = write(p[1], b + o, sizeof(j) - o);
			if (n <= 0)
				_exit(11);
			o += (size_t)n;
		}
		_exit(0);
	}
	(void)close(p[1]);
	memset(out, 0, sizeof(*out));
	char *b = (char *)out;
	size_t got = 0;
	for (;;) {
		ssize_t n = read(p[0], b + got, sizeof(*out) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == sizeof(*out))
			break;
	}
	(void)close(p[0]);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (got != sizeof(*out) || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("the judging process did not report (%zu bytes, status 0x%x): it ran the "
			 "slow work itself", got, status);
	assert_int_equal(out->survived, 1);
}

struct static_case {
	struct ws w;
	struct pol_task *t;
};

static void judge_static_fn(void *ctx, struct judged *out)
{
	struct static_case *sc = ctx;
	struct ev_confined_ids ids = ev_confined_ids_for(true);
	ev_judge_static(&ids, sc->t, sc->w.fd, out->res);
}

static void ws_open(struct ws *w)
{
	const char *tmp = secure_getenv("TMPDIR");
	(void)snprintf(w->dir, sizeof(w->dir), "%s/warden-priv-judge-XXXXXX",
		       tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(w->dir));
	assert_int_equal(chmod(w->dir, 0700), 0);
	w->fd = open(w->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(w->fd >= 0);
}

static void ws_close(struct ws *w, const char *const *names, size_t n)
{
	char path[PATH_MAX + 32];
	for (size_t i = 0; i < n; i++) {
		(void)snprintf(path, sizeof(path), "%s/%s", w->dir, names[i]);
		(void)unlink(path);
	}
	(void)close(w->fd);
	(void)rmdir(w->dir);
}

static void expect_slow_scores_0(const struct sup_crit_result *r, const char *what)
{
	if (!r->evaluated || r->error || r->score_milli != 0 || r->passed ||
	    !strstr(r->details, "scores 0: what it reads made judging it too slow"))
		fail_msg("%s: expected a score of 0 for the slow check, got evaluated %d error %d "
			 "score %u: %s", what, r->evaluated, r->error, r->score_milli, r->details);
}

/*
 * A file the agent wrote that makes the task's regex slow costs the criterion that reads it
 * its score (0, a FAILURE), and nothing else: every other static criterion is judged as it
 * would have been, an unrelated file_contains the agent failed is a FAILURE, not an error,
 * and the run has nothing to be an ERROR about.
 */
static void test_slow_static_scores_0(void **state)
{
	(void)state;
	struct static_case sc;
	ws_open(&sc.w);
	char *big = malloc(SLOW_LEN + 1);
	assert_non_null(big);
	memset(big, 'a', SLOW_LEN);
	big[SLOW_LEN] = '\0';
	put(&sc.w, "big.txt", big, 0644);
	free(big);
	put(&sc.w, "note.txt", "something else\n", 0644);
	put(&sc.w, "doc.json", "{\"a\": 1}", 0644);
	sc.t = task_of(
		"  - { description: s, file_matches: { path: big.txt, regex: '" SLOW_REGEX "' } }\n"
		"  - { description: u, file_contains: { path: note.txt, includes: [wanted] } }\n"
		"  - { description: e, file_exists: note.txt }\n"
		"  - { description: j, json_equals: { path: doc.json, pointer: /a, op: eq, value: 1 } }\n"
		"  - { description: m, file_matches: { path: note.txt, regex: '^something' } }\n");
	struct judged j;
	judge_limited(judge_static_fn, &sc, &j);
	expect_slow_scores_0(&j.res[0], "criteria[0]");
	const struct sup_crit_result *u = &j.res[1];
	if (!u->evaluated || u->error || u->passed || !strstr(u->details, "does not contain"))
		fail_msg("criteria[1]: expected a plain failure, got: %s", u->details);
	for (size_t i = 2; i < 5; i++)
		if (!j.res[i].passed || j.res[i].error)
			fail_msg("criteria[%zu]: expected a pass, got: %s", i, j.res[i].details);
	pol_task_free(sc.t);
	static const char *const names[] = { "big.txt", "note.txt", "doc.json" };
	ws_close(&sc.w, names, 3);
}

struct command_case {
	struct pol_task *t;
	struct sup_crit_outcome o[3];
};

static void judge_command_fn(void *ctx, struct judged *out)
{
	struct command_case *cc = ctx;
	struct ev_confined_ids ids = ev_confined_ids_for(true);
	for (size_t i = 0; i < 3; i++)
		ev_judge_command(&ids, &cc->t->criteria[i], i, &cc->o[i], &out->res[i]);
}

/*
 * A command criterion's stdout check runs in a confined judge, not in the supervisor: stdout
 * that makes the task's regex slow scores that criterion 0 while the judging process (whose
 * CPU time is as limited as its judges') goes on; a contains check and an exit-only check
 * beside it are judged as always.
 */
static void test_slow_stdout_scores_0(void **state)
{
	(void)state;
	struct command_case cc;
	memset(&cc, 0, sizeof(cc));
	cc.t = task_of(
		"  - { description: r, command: { run: [\"true\"], stdout: { regex: '" SLOW_REGEX "' } } }\n"
		"  - { description: c, command: { run: [\"true\"], stdout: { contains: aaa } } }\n"
		"  - { description: x, command: { run: [\"true\"] } }\n");
	/* NUL-terminated past its length, as the supervisor's capture is (sup_sink). */
	char *big = malloc(SLOW_LEN + 1);
	assert_non_null(big);
	memset(big, 'a', SLOW_LEN);
	big[SLOW_LEN] = '\0';
	for (size_t i = 0; i < 3; i++)
		cc.o[i] = (struct sup_crit_outcome){ .started = true, .out = big,
						     .out_len = SLOW_LEN };
	struct judged j;
	judge_limited(judge_command_fn, &cc, &j);
	expect_slow_scores_0(&j.res[0], "the stdout regex");
	if (!j.res[1].passed || !strstr(j.res[1].details, "stdout contains 'aaa'"))
		fail_msg("the stdout contains check: %s", j.res[1].details);
	if (!j.res[2].passed || strcmp(j.res[2].details, "exit 0") != 0)
		fail_msg("the exit-only check: %s", j.res[2].details);
	free(big);
	pol_task_free(cc.t);
}

int main(void)
{
	if (!th_fully_privileged())
		th_cannot_run("needs root with CAP_SYS_ADMIN in the initial user namespace");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_privileged),
		cmocka_unit_test(test_identity_unprivileged),
		cmocka_unit_test(test_identity_plain_user),
		cmocka_unit_test(test_sigsys),
		cmocka_unit_test(test_oversized_answer),
		cmocka_unit_test(test_deadline_held_up),
		cmocka_unit_test(test_deadline_busy),
		cmocka_unit_test(test_stop_signal),
		cmocka_unit_test(test_judge_static),
		cmocka_unit_test(test_slow_static_scores_0),
		cmocka_unit_test(test_slow_stdout_scores_0),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
