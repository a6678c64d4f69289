/* SPDX-License-Identifier: MIT */
/*
 * confined: the children that read what a sandbox wrote (see confined.h).
 *
 * The parent's side is dull on purpose: open files, fork, read a bounded answer before a
 * deadline, reap, and hand the bytes to a strict decoder (eval/verdict.c). Everything that
 * interprets hostile bytes runs in the child, after sbx_judge_confine().
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cleanup.h"
#include "confined.h"
#include "eval.h"
#include "evrecord.h"
#include "io-util.h"
#include "judge.h"
#include "rundir.h"
#include "sha256.h"
#include "supervisor.h"
#include "wire.h"

DEFINE_CLEANUP(struct pol_evrec *, pol_evrec_free)
DEFINE_CLEANUP(struct wire_mac *, wire_mac_free)

/* A child's exit status when sbx_judge_confine() failed: this plus the errno, if it fits. */
#define CONFINE_FAILED 64
#define CONFINE_FAILED_MAX 255

struct ev_confined_ids ev_confined_ids_for(bool privileged)
{
	struct ev_confined_ids ids = { .privileged = privileged };
	if (privileged)
		ids.uid = ids.gid = SUP_RUNDIR_OWNER;
	return ids;
}

/* ---- the runner ---- */

/* A child that is killed and reaped unless it was reaped already (pid 0). */
static void child_kill(pid_t *pid)
{
	if (*pid <= 0)
		return;
	(void)kill(*pid, SIGKILL);
	while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
		;
	*pid = 0;
}

/* Reaps pid into *status and the CPU time it used into *cpu_ms. Returns 0 or -errno. */
static int child_reap(pid_t *pid, int *status, uint64_t *cpu_ms)
{
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	while (wait4(*pid, status, 0, &ru) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	*pid = 0;
	*cpu_ms = (uint64_t)ru.ru_utime.tv_sec * 1000u + (uint64_t)ru.ru_utime.tv_usec / 1000u +
		  (uint64_t)ru.ru_stime.tv_sec * 1000u + (uint64_t)ru.ru_stime.tv_usec / 1000u;
	return 0;
}

/* True when the child pid is stopped (SIGSTOP and the like) now; it is not reaped. */
static bool child_stopped(pid_t pid)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WSTOPPED | WNOHANG | WNOWAIT) < 0)
		return false;
	return si.si_pid == pid && si.si_code == CLD_STOPPED;
}

/*
 * The CPU time the kernel lets a child use (sbx_judge_confine lowers RLIMIT_CPU to
 * SBX_JUDGE_CPU_SECONDS, or to the hard limit it inherits when that is lower), in ms.
 */
static uint64_t child_cpu_limit_ms(void)
{
	struct rlimit rl;
	uint64_t s = SBX_JUDGE_CPU_SECONDS;
	if (getrlimit(RLIMIT_CPU, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max < s)
		s = rl.rlim_max;
	return s * 1000u;
}

__attribute__((format(printf, 4, 5))) static int fail(int r, char *why, size_t why_len,
						      const char *fmt, ...)
{
	if (why && why_len) {
		va_list ap;
		va_start(ap, fmt);
		(void)vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return r;
}

/* How a child ended, for a message. */
static void describe_end(int status, char *buf, size_t cap)
{
	if (WIFSIGNALED(status)) {
		const char *name = sigabbrev_np(WTERMSIG(status));
		(void)snprintf(buf, cap, "was killed by signal %d%s%s%s", WTERMSIG(status),
			       name ? " (SIG" : "", name ? name : "", name ? ")" : "");
	} else if (WIFEXITED(status) && WEXITSTATUS(status) >= CONFINE_FAILED) {
		int e = WEXITSTATUS(status) - CONFINE_FAILED;
		(void)snprintf(buf, cap, "could not confine itself (%s)",
			       e > 0 && e < CONFINE_FAILED_MAX - CONFINE_FAILED ? strerror(e)
									       : "an error");
	} else {
		(void)snprintf(buf, cap, "exited with status %d",
			       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
}

static _Noreturn void child_main(const struct ev_confined *c, const struct sbx_seccomp_prog *prog,
				 int out_fd, int (*fn)(void *arg, int out_fd), void *arg)
{
	struct sbx_judge_spec spec = {
		.privileged = c->ids.privileged,
		.uid = c->ids.uid,
		.gid = c->ids.gid,
		.read_fds = c->read_fds,
		.n_read_fds = c->n_read_fds,
		.out_fd = out_fd,
	};
	int r = sbx_judge_confine(&spec, prog);
	if (r < 0)
		_exit(-r < CONFINE_FAILED_MAX - CONFINE_FAILED ? CONFINE_FAILED - r
							       : CONFINE_FAILED_MAX);
	_exit(fn(arg, out_fd) < 0 ? 1 : 0);
}

/* Why the parent stopped waiting for a child. */
enum wait_end {
	WAIT_DONE,      /* it exited and its answer ended */
	WAIT_DEADLINE,  /* the deadline passed first */
	WAIT_STOP,      /* a stop signal is pending */
	WAIT_OVERSIZE,  /* it wrote more than max bytes */
};

/*
 * Reads the child's answer from rd (non-blocking) into buf (max + 1 bytes) until the pipe ends
 * and the child has exited (pidfd readable), a stop signal is pending (sfd readable), or the
 * monotonic clock reaches deadline_ms. Returns 0 with *end and *out_len, or -errno of poll
 * or read.
 */
static int await_child(int rd, int pidfd, int sfd, uint8_t *buf, size_t max,
		       uint64_t deadline_ms, size_t *out_len, enum wait_end *end)
{
	size_t got = 0;
	bool eof = false, exited = false;
	*end = WAIT_DONE;
	while (!eof || !exited) {
		uint64_t now = sup_mono_ms();
		if (now >= deadline_ms) {
			*end = WAIT_DEADLINE;
			break;
		}
		uint64_t left = deadline_ms - now;
		struct pollfd pfd[3] = {
			{ .fd = eof ? -1 : rd, .events = POLLIN },
			{ .fd = exited ? -1 : pidfd, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};
		if (poll(pfd, ELEMENTSOF(pfd), left > INT_MAX ? INT_MAX : (int)left) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd[2].revents) {
			*end = WAIT_STOP;
			break;
		}
		if (pfd[0].revents) {
			ssize_t n = read(rd, buf + got, max + 1 - got);
			if (n < 0 && errno != EINTR && errno != EAGAIN)
				return -errno;
			if (n == 0)
				eof = true;
			if (n > 0)
				got += (size_t)n;
			if (got > max) {
				*end = WAIT_OVERSIZE;
				break;
			}
		}
		if (pfd[1].revents)
			exited = true;
	}
	*out_len = got;
	return 0;
}

int ev_confined_run(const struct ev_confined *c, const char *what, int (*fn)(void *arg, int out_fd),
		    void *arg, struct ev_confined_out *out, char *why, size_t why_len)
{
	if (!c || !fn || !out || (c->ids.privileged && (c->ids.uid == 0 || c->ids.gid == 0)) ||
	    c->max_out == 0 || c->max_out > EV_FOLDER_MAX_ANSWER)
		return fail(-EINVAL, why, why_len, "%s: invalid arguments", what);
	uint64_t deadline = c->deadline_ms ? c->deadline_ms : EV_CONFINED_DEADLINE_MS;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return fail(-errno, why, why_len, "%s: pipe: %s", what, strerror(errno));
	_cleanup_close_ int rd = p[0];
	_cleanup_close_ int wr = p[1];
	/* Non-blocking on the parent's side only: the two ends are separate open files. */
	if (fcntl(rd, F_SETFL, O_NONBLOCK) < 0)
		return fail(-errno, why, why_len, "%s: pipe: %s", what, strerror(errno));

	/*
	 * The stop signals the caller holds blocked (ev_stop_block): one that becomes pending
	 * while the child runs ends the wait, and stays pending for ev_stop_check().
	 */
	sigset_t stop, held;
	ev_stop_signals(&stop);
	if (sigprocmask(SIG_BLOCK, NULL, &held) < 0)
		return fail(-errno, why, why_len, "%s: the signal mask: %s", what, strerror(errno));
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&stop, s) == 1 && sigismember(&held, s) != 1)
			(void)sigdelset(&stop, s);
	_cleanup_close_ int sfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return fail(-errno, why, why_len, "%s: signalfd: %s", what, strerror(errno));

	/* Compiled here, so that the child only installs it. */
	struct sbx_seccomp_prog prog = { 0 };
	int r = sbx_judge_filter_build(wr, &prog);
	if (r < 0)
		return fail(r, why, why_len, "%s: its seccomp filter cannot be built: %s", what,
			    strerror(-r));
	_cleanup_free_ uint8_t *buf = malloc(c->max_out + 1);
	if (!buf) {
		sbx_seccomp_prog_done(&prog);
		return fail(-ENOMEM, why, why_len, "%s: out of memory", what);
	}

	uint64_t t0 = sup_mono_ms();
	pid_t pid = fork();
	if (pid < 0) {
		r = -errno;
		sbx_seccomp_prog_done(&prog);
		return fail(r, why, why_len, "%s: fork: %s", what, strerror(-r));
	}
	if (pid == 0) {
		(void)close(TAKE_FD(rd));
		child_main(c, &prog, wr, fn, arg);
	}
	sbx_seccomp_prog_done(&prog);
	_cleanup_(child_kill) pid_t child = pid;
	(void)close(TAKE_FD(wr));
	/* Our own unreaped child: its pid cannot have been reused. */
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return fail(-errno, why, why_len, "%s: pidfd_open: %s", what, strerror(errno));
	if (c->on_spawn)
		c->on_spawn(c->on_spawn_ctx, pid);

	size_t n = 0;
	enum wait_end end = WAIT_DONE;
	r = await_child(rd, pidfd, sfd, buf, c->max_out, t0 + deadline, &n, &end);
	if (r < 0)
		return fail(r, why, why_len, "%s: reading its answer: %s", what, strerror(-r));
	bool stopped = end == WAIT_DEADLINE && child_stopped(pid);
	if (end != WAIT_DONE)
		(void)kill(pid, SIGKILL);
	int status = 0;
	uint64_t cpu_ms = 0;
	r = child_reap(&child, &status, &cpu_ms);
	if (r < 0)
		return fail(r, why, why_len, "%s: waitpid: %s", what, strerror(-r));
	uint64_t took = sup_mono_ms() - t0;

	switch (end) {
	case WAIT_STOP:
		return fail(-EINTR, why, why_len, "%s: interrupted by a stop signal: killed", what);
	case WAIT_OVERSIZE:
		return fail(-EMSGSIZE, why, why_len, "%s answered more than %zu bytes: killed", what,
			    c->max_out);
	case WAIT_DEADLINE:
		/*
		 * Busy on its input, or held up (stopped, or given too little of a CPU to have
		 * worked through its input): only the first is the input's doing.
		 */
		if (stopped || cpu_ms * 4 < took)
			return fail(-ETIME, why, why_len, "%s was held up past its deadline of %"
				    PRIu64 " ms (%s, %" PRIu64 " ms of CPU time): killed", what,
				    deadline, stopped ? "stopped" : "not stopped", cpu_ms);
		return fail(-ETIMEDOUT, why, why_len, "%s ran past its deadline of %" PRIu64
			    " ms (%" PRIu64 " ms of CPU time): killed", what, deadline, cpu_ms);
	case WAIT_DONE:
		break;
	}
	/* The kernel's CPU limit: SIGXCPU at the soft limit, SIGKILL at the hard one. */
	uint64_t limit = child_cpu_limit_ms();
	if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL) &&
	    cpu_ms * 10 >= limit * 9)
		return fail(-ETIMEDOUT, why, why_len, "%s used up its %" PRIu64 " s of CPU time: "
			    "killed", what, limit / 1000u);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char ended[128];
		describe_end(status, ended, sizeof(ended));
		return fail(-ECHILD, why, why_len, "%s %s", what, ended);
	}
	out->len = n;
	out->buf = n ? TAKE_PTR(buf) : NULL;
	return 0;
}

/* ---- the criteria judges ---- */

/* One criterion, judged in one confined child. */
struct judge_one {
	const struct pol_task_criterion *c;
	size_t index;                       /* its place in the task */
	const struct sup_crit_input *in;    /* a static criterion: what the parent found */
	const struct sup_crit_outcome *o;   /* a command criterion: how its command ended */
	struct wire_mac *mac;
};

/* In the confined child: the verdict, as one RESULT frame. */
static int judge_child(void *arg, int out_fd)
{
	const struct judge_one *j = arg;
	struct sup_crit_result res;
	if (j->in)
		sup_crit_judge_static(j->c, j->in, &res);
	else
		sup_crit_judge_command(j->c, j->o, &res);
	uint8_t frame[EV_VERDICT_FRAME_MAX];
	int len = ev_verdict_seal(j->mac, 0, j->index, &res, frame, sizeof(frame));
	if (len < 0)
		return len;
	return io_write_all(out_fd, frame, (size_t)len);
}

/* details: "<label>: <what>" as one line of printable ASCII, each part cut to fit. */
static void set_details(struct sup_crit_result *r, const char *label, const char *what)
{
	(void)snprintf(r->details, sizeof(r->details), "%.180s: %.320s", label, what);
	for (char *p = r->details; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
}

static void not_judged(struct sup_crit_result *r, const char *label, const char *why)
{
	char what[sizeof(r->details)];
	memset(r, 0, sizeof(*r));
	r->error = true;
	(void)snprintf(what, sizeof(what), "not judged: %.400s", why);
	set_details(r, label, what);
}

/*
 * Judges j in a confined child that keeps fd (or none, -1) and fills *res. agent_input: the
 * child reads bytes the agent controls (a workspace file, a command's stdout), so a child
 * killed for the time it took (-ETIMEDOUT: its CPU limit, or its deadline while busy) was
 * made slow by them, and the criterion scores 0; otherwise that, like a child that dies, lies
 * or answers out of form, is an error of this criterion alone. Returns 0, or -EINTR when a
 * stop signal ended the wait (*res then says so).
 */
static int judge_confined(const struct ev_confined_ids *ids, struct judge_one *j, int fd,
			  bool agent_input, const char *label, struct sup_crit_result *res)
{
	char what[64], why[400] = "";
	(void)snprintf(what, sizeof(what), "the judge of criteria[%zu]", j->index);

	/* A key for this judge alone: its frame cannot pass for another's. */
	uint8_t key[WIRE_KEY_LEN];
	int r = io_fill_random(key, sizeof(key));
	_cleanup_(wire_mac_freep) struct wire_mac *mac = r < 0 ? NULL : wire_mac_new(key);
	explicit_bzero(key, sizeof(key));
	if (!mac) {
		(void)snprintf(why, sizeof(why), "%s has no key: %s", what,
			       strerror(r < 0 ? -r : ENOMEM));
		not_judged(res, label, why);
		return 0;
	}
	j->mac = mac;
	int fds[1] = { fd };
	struct ev_confined c = {
		.ids = *ids,
		.read_fds = fds,
		.n_read_fds = fd >= 0 ? 1 : 0,
		.max_out = EV_VERDICT_FRAME_MAX,
	};
	struct ev_confined_out out = { 0 };
	r = ev_confined_run(&c, what, judge_child, j, &out, why, sizeof(why));
	j->mac = NULL;
	if (r == -ETIMEDOUT && agent_input) {
		char text[sizeof(res->details)];
		(void)snprintf(text, sizeof(text), "scores 0: what it reads made judging it too "
			       "slow (%s)", why);
		memset(res, 0, sizeof(*res));
		res->evaluated = true;
		res->passed = j->c->pass_threshold_milli == 0;
		set_details(res, label, text);
		return 0;
	}
	if (r < 0) {
		not_judged(res, label, why);
		return r == -EINTR ? -EINTR : 0;
	}
	struct ev_verdict v;
	char dwhy[300];
	r = ev_verdict_open_all(mac, out.buf, out.len, &j->index, 1, &v, dwhy, sizeof(dwhy));
	free(out.buf);
	if (r < 0) {
		(void)snprintf(why, sizeof(why), "%s broke its protocol: %s", what, dwhy);
		not_judged(res, label, why);
		return 0;
	}
	memset(res, 0, sizeof(*res));
	res->evaluated = !v.error;
	res->error = v.error;
	res->score_milli = v.score_milli;
	/* Whether it passed is the supervisor's reading of the score, never the child's. */
	res->passed = !v.error && v.score_milli >= j->c->pass_threshold_milli;
	memcpy(res->details, v.details, sizeof(res->details));
	return 0;
}

void ev_judge_static(const struct ev_confined_ids *ids, const struct pol_task *task, int ws,
		     struct sup_crit_result results[TASK_MAX_CRITERIA])
{
	bool stopped = false;
	for (size_t i = 0; i < task->n_criteria && i < TASK_MAX_CRITERIA; i++) {
		const struct pol_task_criterion *c = &task->criteria[i];
		if (c->check == POL_TASK_COMMAND)
			continue;
		char label[sizeof(results[i].details)];
		(void)snprintf(label, sizeof(label), "'%s'", c->path ? c->path : "");
		if (stopped) {
			not_judged(&results[i], label, "interrupted");
			continue;
		}
		struct sup_crit_input in;
		sup_crit_input_init(&in);
		sup_crit_open(ws, c, &in);
		struct judge_one j = { .c = c, .index = i, .in = &in };
		/* Handed a file to read, it reads what the agent left there. */
		stopped = judge_confined(ids, &j, in.fd, in.fd >= 0, label, &results[i]) == -EINTR;
		sup_crit_input_done(&in);
	}
}

void ev_judge_command(const struct ev_confined_ids *ids, const struct pol_task_criterion *c,
		      size_t index, const struct sup_crit_outcome *o, struct sup_crit_result *res)
{
	/* Without a stdout check, nothing the command printed is looked at. */
	if (!c || c->check != POL_TASK_COMMAND || c->command.stdout_kind == POL_TASK_STDOUT_ANY) {
		sup_crit_judge_command(c, o, res);
		return;
	}
	struct judge_one j = { .c = c, .index = index, .o = o };
	(void)judge_confined(ids, &j, -1, true, "the stdout check", res);
}

/* ---- `warden grade`'s run folder reader ---- */

struct folder_in {
	int record_fd;
	int64_t stream_size[2];  /* agent.stdout, agent.stderr: -1 missing or not regular */
};

/* Fails the child's reading with err and a reason, as an answer. */
static int refuse(int out_fd, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(int out_fd, int err, const char *fmt, ...)
{
	char why[EV_FOLDER_MAX_WHY + 1];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len = 0;
	int r = ev_folder_encode((uint32_t)(err > 0 && err <= 4095 ? err : EIO), why, NULL, &buf,
				 &len);
	return r < 0 ? r : io_write_all(out_fd, buf, len);
}

static const cJSON *at(const cJSON *o, const char *k1, const char *k2)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k1);
	return k2 ? cJSON_GetObjectItemCaseSensitive(v, k2) : v;
}

static bool is(const cJSON *v, const char *word)
{
	return cJSON_IsString(v) && strcmp(v->valuestring, word) == 0;
}

/* Copies a validated string into fixed storage; false when it does not fit. */
static bool copy_str(char *dst, size_t cap, const char *s)
{
	size_t n = strlen(s);
	if (n >= cap)
		return false;
	memcpy(dst, s, n + 1);
	return true;
}

/*
 * The record's view of one stream, checked against the size of the file the parent found.
 * Returns 0 (they agree, *out_kept set), 1 (refused: the answer is written) or -errno.
 */
static int check_stream(int out_fd, const cJSON *agent, const char *key, int64_t size,
			uint64_t *out_kept)
{
	const cJSON *kept = at(agent, key, "kept");
	uint64_t k = cJSON_IsNumber(kept) ? (uint64_t)kept->valuedouble : 0;
	int r = 0;
	if (size < 0)
		r = refuse(out_fd, ENOENT, "agent.%s is missing or not a regular file", key);
	else if ((uint64_t)size != k)
		r = refuse(out_fd, EBADMSG, "agent.%s holds %" PRId64 " bytes, but the record says "
			   "%" PRIu64 " were kept", key, size, k);
	else
		*out_kept = k;
	return r < 0 ? r : size < 0 || (uint64_t)size != k ? 1 : 0;
}

/* In the confined child: the record, strictly, then the summary the supervisor may use. */
static int folder_child(void *arg, int out_fd)
{
	const struct folder_in *fi = arg;
	_cleanup_free_ char *text = malloc(EVREC_MAX_INPUT_BYTES + 2);
	if (!text)
		return -ENOMEM;
	int n = io_read_fd(fi->record_fd, text, EVREC_MAX_INPUT_BYTES + 2);
	if (n < 0)
		return refuse(out_fd, n == -EFBIG ? E2BIG : -n, "record.json cannot be read: %s",
			      strerror(n == -EFBIG ? E2BIG : -n));
	char reason[512];
	_cleanup_(pol_evrec_freep) struct pol_evrec *rec = NULL;
	int r = pol_evrec_parse(text, (size_t)n, &rec, reason, sizeof(reason));
	if (r < 0)
		return refuse(out_fd, -r, "record.json is invalid: %s", reason);

	struct ev_folder f;
	ev_folder_init(&f);
	const cJSON *j = rec->json;
	const cJSON *agent = at(j, "phases", "agent");
	const cJSON *setup = at(at(j, "phases", "setup"), "status", NULL);
	const cJSON *reap = at(at(j, "phases", "reap"), "status", NULL);
	const cJSON *astatus = cJSON_IsObject(agent) ? at(agent, "status", NULL) : NULL;
	bool ok = copy_str(f.run_id, sizeof(f.run_id), rec->run_id) &&
		  copy_str(f.task_id, sizeof(f.task_id), rec->task_id) &&
		  copy_str(f.task_source, sizeof(f.task_source), rec->task_source) &&
		  copy_str(f.task_digest, sizeof(f.task_digest), rec->task_digest) &&
		  copy_str(f.policy_digest, sizeof(f.policy_digest), rec->policy_digest);
	if (!ok)
		return refuse(out_fd, EBADMSG, "record.json: a field is longer than warden reads");
	f.status = EV_ERROR;
	for (int s = EV_SETUP_FAILED; s <= EV_FAILURE; s++)
		if (strcmp(rec->status, ev_status_name((enum ev_status)s)) == 0)
			f.status = (uint8_t)s;
	f.grades = rec->grades;
	f.setup = is(setup, "ok") ? EV_FOLDER_SETUP_OK
		  : is(setup, "failed") ? EV_FOLDER_SETUP_FAILED : EV_FOLDER_SETUP_SKIPPED;
	f.reap = is(reap, "ok") ? EV_FOLDER_REAP_OK
		 : is(reap, "failed") ? EV_FOLDER_REAP_FAILED : EV_FOLDER_REAP_SKIPPED;
	f.agent = !astatus ? EV_FOLDER_AGENT_NONE
		  : is(astatus, "ok") ? EV_FOLDER_AGENT_OK
		  : is(astatus, "timeout") ? EV_FOLDER_AGENT_TIMEOUT
		  : is(astatus, "error") ? EV_FOLDER_AGENT_ERROR : EV_FOLDER_AGENT_SKIPPED;
	const cJSON *s;
	cJSON_ArrayForEach(s, at(j, "stamps", NULL)) {
		f.output_truncated |= is(s, "agent_output_truncated");
		f.no_cgroup |= is(s, "no_cgroup");
	}
	if (cJSON_IsObject(agent)) {
		r = check_stream(out_fd, agent, "stdout", fi->stream_size[0], &f.stdout_kept);
		if (r == 0)
			r = check_stream(out_fd, agent, "stderr", fi->stream_size[1], &f.stderr_kept);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	struct wire_sha256 h;
	wire_sha256_init(&h);
	wire_sha256_update(&h, rec->agent_canon, strlen(rec->agent_canon));
	wire_sha256_final(&h, f.agent_digest);

	const cJSON *parts[EV_N_PARTS] = {
		[EV_PART_POLICY] = at(j, "policy", NULL),
		[EV_PART_CREATED_AT] = at(j, "created_at", NULL),
		[EV_PART_HOST] = at(j, "host", NULL),
		[EV_PART_SETUP] = at(j, "phases", "setup"),
		[EV_PART_AGENT] = agent,
		[EV_PART_REAP] = at(j, "phases", "reap"),
		[EV_PART_IDENTITY] = at(j, "identity", NULL),
	};
	for (size_t i = 0; i < EV_N_PARTS; i++) {
		f.parts[i] = parts[i] ? cJSON_PrintUnformatted(parts[i]) : NULL;
		if (!f.parts[i]) {
			ev_folder_done(&f);
			return -ENOMEM;
		}
		f.part_len[i] = strlen(f.parts[i]);
	}
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len = 0;
	r = ev_folder_encode(0, NULL, &f, &buf, &len);
	ev_folder_done(&f);
	if (r < 0)
		return refuse(out_fd, -r, "record.json: the summary cannot be encoded: %s",
			      strerror(-r));
	return io_write_all(out_fd, buf, len);
}

/* Opens name in dirfd for reading: a regular file, never through a symlink. */
static int open_regular(int dirfd, const char *name)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
							 O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return TAKE_FD(fd);
}

/* The size of the regular file name in dirfd (not followed if a symlink), or -1. */
static int64_t stream_size(int dirfd, const char *name)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return -1;
	return st.st_size;
}

int ev_read_folder(const struct ev_confined_ids *ids, int dirfd, struct ev_folder *out, char *why,
		   size_t why_len)
{
	_cleanup_close_ int rec = open_regular(dirfd, "record.json");
	if (rec < 0)
		return fail(rec, why, why_len, "record.json cannot be read: %s",
			    rec == -EINVAL ? "not a regular file" : strerror(-rec));
	struct folder_in fi = {
		.record_fd = rec,
		.stream_size = { stream_size(dirfd, "agent.stdout"),
				 stream_size(dirfd, "agent.stderr") },
	};

	/* Only the record is read; of the streams the child learns the sizes alone. */
	int fds[] = { rec };
	struct ev_confined c = {
		.ids = *ids,
		.read_fds = fds,
		.n_read_fds = ELEMENTSOF(fds),
		.max_out = EV_FOLDER_MAX_ANSWER,
	};
	struct ev_confined_out ans = { 0 };
	int r = ev_confined_run(&c, "the run folder reader", folder_child, &fi, &ans, why,
				why_len);
	if (r < 0)
		return r;
	r = ev_folder_decode(ans.buf, ans.len, out, why, why_len);
	free(ans.buf);
	return r;
}
