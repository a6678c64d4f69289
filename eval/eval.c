/* SPDX-License-Identifier: MIT */
/*
 * The phases of an evaluation run, and `warden eval`. docs/eval.md is the reference.
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
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "cleanup.h"
#include "cli.h"
#include "config.h"
#include "confined.h"
#include "eval.h"
#include "io-util.h"
#include "log.h"
#include "rundir.h"
#include "sandbox.h"
#include "supervisor.h"

DEFINE_CLEANUP(struct pol_task *, pol_task_free)
DEFINE_CLEANUP(cJSON *, cJSON_Delete)

#define EV_SCHEMA_VERSION 1

static const char *const status_names[] = {
	[EV_SETUP_FAILED] = "SETUP_FAILED", [EV_ERROR] = "ERROR",
	[EV_TIMEOUT] = "TIMEOUT",           [EV_NOT_GRADED] = "NOT_GRADED",
	[EV_INTERRUPTED] = "INTERRUPTED",   [EV_SUCCESS] = "SUCCESS",
	[EV_FAILURE] = "FAILURE",
};

const char *ev_status_name(enum ev_status s)
{
	return (size_t)s < ELEMENTSOF(status_names) ? status_names[s] : "ERROR";
}

static const struct {
	uint32_t bit;
	const char *name;
} stamp_names[] = {
	{ EV_STAMP_GRADED_WITHOUT_SETUP, "graded_without_setup" },
	{ EV_STAMP_REGRADED, "regraded" },
	{ EV_STAMP_OUTPUT_TRUNCATED, "agent_output_truncated" },
	{ EV_STAMP_TEARDOWN_FAILED, "teardown_failed" },
	{ EV_STAMP_REFERENCE_MISSING, "reference_missing" },
	{ EV_STAMP_NO_CGROUP, "no_cgroup" },
};

void ev_run_init(struct ev_run *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->dirfd = -1;
	ev->agent_out.fd = ev->agent_err.fd = -1;
	ev->status = EV_ERROR;
}

void ev_run_done(struct ev_run *ev)
{
	if (ev->dirfd >= 0)
		(void)close(ev->dirfd);
	ev->dirfd = -1;
	/* The agent's and teardown's changeset reports; the other steps own nothing. */
	sup_run_result_done(&ev->agent.res);
	for (size_t i = 0; i < TASK_MAX_STEPS; i++) {
		sup_run_result_done(&ev->setup[i].res);
		sup_run_result_done(&ev->teardown[i].res);
	}
	for (size_t i = 0; i < TASK_MAX_CRITERIA; i++)
		sup_run_result_done(&ev->crit[i].step.res);
	for (int i = 0; i < 2; i++) {
		struct sup_sink *k = i ? &ev->agent_err : &ev->agent_out;
		if (k->fd >= 0)
			(void)close(k->fd);
		k->fd = -1;
		free(k->buf);
		k->buf = NULL;
	}
}

/* ---- interruption ---- */

void ev_stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

int ev_stop_block(void)
{
	sigset_t set;
	ev_stop_signals(&set);
	return sigprocmask(SIG_BLOCK, &set, NULL) < 0 ? -errno : 0;
}

bool ev_stop_check(struct ev_run *ev)
{
	sigset_t set;
	ev_stop_signals(&set);
	const struct timespec now = { 0, 0 };
	int sig = sigtimedwait(&set, NULL, &now);
	if (sig > 0 && !ev->interrupted)
		ev->interrupted = sig;
	return ev->interrupted != 0;
}

/*
 * A sandbox step that warden itself ended on a signal: sup_run reports a signal without any
 * report of the command's end (a command that died of a signal has one).
 */
static void note_stopped_step(struct ev_run *ev, const struct sup_run_result *res)
{
	if (res->reason == SUP_REASON_SIGNALED && !res->have_exited && res->signal > 0 &&
	    !ev->interrupted)
		ev->interrupted = res->signal;
}

/* ---- placeholders ---- */

void ev_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* One element: {workspace}, {reference}, {task_id}, {{ and }} (the parser checked the rest). */
static char *substitute_one(const char *in, const char *task_id)
{
	size_t cap = strlen(in) + 1;
	for (const char *p = in; (p = strchr(p, '{')); p++)
		cap += strlen(task_id) + sizeof(SBX_WORKSPACE) + sizeof(SBX_REFERENCE);
	char *out = malloc(cap);
	if (!out)
		return NULL;
	size_t o = 0;
	for (const char *p = in; *p;) {
		static const struct {
			const char *name;
			size_t len;
		} names[] = { { "{workspace}", 11 }, { "{reference}", 11 }, { "{task_id}", 9 } };
		const char *val = NULL;
		size_t skip = 1;
		if (p[0] == '{' && p[1] == '{') {
			val = "{";
			skip = 2;
		} else if (p[0] == '}' && p[1] == '}') {
			val = "}";
			skip = 2;
		} else if (p[0] == '{') {
			for (size_t i = 0; i < ELEMENTSOF(names); i++)
				if (strncmp(p, names[i].name, names[i].len) == 0) {
					val = i == 0 ? SBX_WORKSPACE : i == 1 ? SBX_REFERENCE : task_id;
					skip = names[i].len;
				}
		}
		if (val) {
			size_t n = strlen(val);
			memcpy(out + o, val, n);
			o += n;
			p += skip;
		} else {
			out[o++] = *p++;
		}
	}
	out[o] = '\0';
	return out;
}

char **ev_substitute(char *const *argv, size_t n, const char *task_id)
{
	char **v = calloc(n + 1, sizeof(char *));
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		v[i] = substitute_one(argv[i], task_id);
		if (!v[i]) {
			ev_argv_free(v);
			return NULL;
		}
	}
	return v;
}

static bool uses_reference(char *const *argv, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strstr(argv[i], "{reference}"))
			return true;
	return false;
}

/* ---- exposure ---- */

/* True when the real path of inner is outer's or lies below it. */
static bool path_within(const char *inner, const char *outer)
{
	size_t n = strlen(outer);
	if (n == 1 && outer[0] == '/')
		return true;
	return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

int ev_check_exposure(const struct pol_task *task, char *why, size_t why_len)
{
	const struct pol_policy *pol = task->policy;
	_cleanup_free_ char *ref = task->reference ? realpath(task->reference, NULL) : NULL;
	_cleanup_free_ char *src = realpath(task->source, NULL);
	for (size_t i = 0; i < pol->n_binds; i++) {
		const struct pol_bind *b = &pol->binds[i];
		if (path_within(b->dst, SBX_REFERENCE)) {
			(void)snprintf(why, why_len, "filesystem.binds[%zu].dst '%s' is where the "
				       "reference goes (expected another destination)", i, b->dst);
			return -EPERM;
		}
		_cleanup_free_ char *real = realpath(b->src, NULL);
		if (!real)
			continue; /* an optional bind that is missing */
		if (ref && path_within(ref, real)) {
			(void)snprintf(why, why_len, "filesystem.binds[%zu].src '%s' holds the reference "
				       "folder '%s': the agent would read it (expected a bind that "
				       "leaves it out)", i, b->src, task->reference);
			return -EPERM;
		}
		if (src && path_within(src, real)) {
			(void)snprintf(why, why_len, "filesystem.binds[%zu].src '%s' holds the task file "
				       "'%s': the agent would read the criteria (expected a bind that "
				       "leaves it out)", i, b->src, task->source);
			return -EPERM;
		}
	}
	return 0;
}

/* ---- logs ---- */

int ev_log_open(int dirfd, const char *name, char *tmp, size_t tmp_len)
{
	uint32_t rnd = 0;
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (uint32_t)sup_mono_ms();
	(void)snprintf(tmp, tmp_len, ".%s.%d.%08x", name, (int)getpid(), rnd);
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_APPEND,
			0644);
	return fd < 0 ? -errno : fd;
}

int ev_log_commit(int dirfd, int *fd, const char *tmp, const char *name)
{
	int r = 0;
	if (*fd < 0)
		return 0;
	if (fsync(*fd) < 0)
		r = -errno;
	(void)close(*fd);
	*fd = -1;
	struct stat st;
	if (r >= 0 && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
		r = -EEXIST; /* never rename over a folder or a planted symlink */
	if (r >= 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dirfd, tmp, 0);
	return r;
}

static void log_printf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_printf(int fd, const char *fmt, ...)
{
	if (fd < 0)
		return;
	char buf[8192];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		(void)io_write_all(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void log_argv(int fd, const char *what, char *const *argv)
{
	log_printf(fd, "== %s:", what);
	for (size_t i = 0; argv[i]; i++)
		log_printf(fd, " %s", argv[i]);
	log_printf(fd, "\n");
}

static void log_end(int fd, const struct sup_run_result *res)
{
	log_printf(fd, "\n-- %s, exit code %d, %" PRIu64 " ms%s%s\n\n", sup_reason_name(res->reason),
		   res->exit_code, res->duration_ms, res->error[0] ? ": " : "", res->error);
}

/* ---- running one command ---- */

enum step_kind { STEP_SETUP, STEP_AGENT, STEP_CRITERION, STEP_TEARDOWN };

static const char *const criteria_env[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"PYTHONSAFEPATH=1",
	"GIT_NO_REPLACE_OBJECTS=1",
	NULL,
};

/* NAME=value for each name set on the host, for a task's env.pass. */
static char **pass_env(char *const *names, size_t n)
{
	char **v = calloc(n + 1, sizeof(char *));
	if (!v)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *val = secure_getenv(names[i]);
		if (!val)
			continue;
		if (asprintf(&v[k], "%s=%s", names[i], val) < 0) {
			v[k] = NULL;
			ev_argv_free(v);
			return NULL;
		}
		k++;
	}
	return v;
}

static int run_step(struct ev_run *ev, enum step_kind kind, char *const *raw, size_t n_raw,
		    uint64_t timeout_ms, char *const *env_pass, size_t n_env_pass,
		    struct sup_sink *out, struct sup_sink *err, struct ev_step *step)
{
	const struct pol_task *t = ev->task;
	char **argv = ev_substitute(raw, n_raw, t->task_id);
	char **extra = pass_env(env_pass, n_env_pass);
	if (!argv || !extra) {
		ev_argv_free(argv);
		ev_argv_free(extra);
		return -ENOMEM;
	}
	uint64_t wall = t->policy->wall_ms;
	struct sup_run_opts o = {
		.policy = t->policy,
		.policy_label = t->source,
		.workspace = ev->workspace,
		.timeout_ms = wall && wall < timeout_ms ? wall : timeout_ms,
		.timeout_set = true,
		.argv = argv,
		.out = out,
		.err = err,
		.env_extra = extra,
		/*
		 * The workspace is the run folder's own (docs/eval.md). Setup, the task's own steps,
		 * writes it directly; what the agent and teardown write is a changeset, applied
		 * under the workspace rules (held paths and refused ones stay in it); criteria see
		 * a throwaway overlay.
		 */
		.direct_workspace = kind == STEP_SETUP || kind == STEP_CRITERION,
		.changes_workspace = kind == STEP_AGENT || kind == STEP_TEARDOWN,
	};
	bool grading = kind == STEP_CRITERION || kind == STEP_TEARDOWN;
	if (grading) {
		o.env_force = (char *const *)criteria_env;
		o.no_env_pass = true;
		if (t->reference && !(ev->stamps & EV_STAMP_REFERENCE_MISSING))
			o.reference = t->reference;
	}
	if (kind == STEP_CRITERION)
		o.workspace_overlay = true;
	(void)sup_run(&o, &step->res);
	step->ran = true;
	note_stopped_step(ev, &step->res);
	if (step->res.reason == SUP_REASON_SETUP_FAILED ||
	    step->res.reason == SUP_REASON_INTERNAL_ERROR)
		ev->host_failed = true;
	if (step->res.cg_version == 0 && (t->policy->unsafe & POL_UNSAFE_NO_CGROUP))
		ev->stamps |= EV_STAMP_NO_CGROUP;
	ev->privileged = step->res.privileged;
	ev->cgroup_version = step->res.cg_version;
	(void)snprintf(ev->kernel, sizeof(ev->kernel), "%s", step->res.kernel);
	for (size_t i = 0; i < ELEMENTSOF(ev->weakenings) && i < ELEMENTSOF(step->res.weakenings);
	     i++)
		ev->weakenings[i] = step->res.weakenings[i];
	ev_argv_free(argv);
	ev_argv_free(extra);
	return 0;
}

/* ok, failed, timeout or error: how a setup, criterion or teardown step ended. */
static const char *step_status(const struct sup_run_result *r)
{
	switch (r->reason) {
	case SUP_REASON_EXITED:
		return r->exit_code == 0 ? "ok" : "failed";
	case SUP_REASON_WALL_TIMEOUT:
		return "timeout";
	case SUP_REASON_SETUP_FAILED:
	case SUP_REASON_ATTESTATION_FAILED:
	case SUP_REASON_PROTOCOL_VIOLATION:
	case SUP_REASON_INTERNAL_ERROR:
		return "error";
	case SUP_REASON_SIGNALED:
	case SUP_REASON_CPU_LIMIT:
	case SUP_REASON_OOM:
	case SUP_REASON_PIDS_LIMIT:
	case SUP_REASON_OUTPUT_CAP:
		return "failed";
	}
	return "error";
}

static bool step_ok(const struct ev_step *s)
{
	return s->ran && strcmp(step_status(&s->res), "ok") == 0;
}

/*
 * What became of a step's changeset, for its log: the counts, then each path it keeps, held
 * (with the command that applies it) or refused (with why). The sandbox chose the paths, so
 * each is escaped.
 */
static void log_changes(int fd, const char *what, const struct sup_run_result *res)
{
	if (!res->changes_mode || !res->changes_id[0])
		return;
	const struct sup_chg_report *c = &res->changes;
	const char *id = res->changes_id;
	if (res->changes_error)
		log_printf(fd, "== %s: changeset %s could not be applied (%s); it stays pending: "
			   "warden diff %s\n", what, id, strerror(-res->changes_error), id);
	else
		log_printf(fd, "== %s: changeset %s: %zu applied, %zu held, %zu refused%s%s\n", what,
			   id, c->n_applied, c->n_held, c->n_refused,
			   res->changes_kept ? ": warden diff " : "", res->changes_kept ? id : "");
	for (size_t i = 0; i < c->n; i++) {
		const struct sup_chg_entry *e = &c->v[i];
		if (e->verdict == SUP_CHG_APPLIED)
			continue;
		char q[1024], why[512];
		sup_escape(e->path, q, sizeof(q));
		sup_escape(e->reason ? e->reason : "", why, sizeof(why));
		if (e->verdict == SUP_CHG_HELD)
			log_printf(fd, "held %s '%s' (%s): warden apply %s --include '%s'\n",
				   sup_chg_kind_name(e->kind), q, why, id, q);
		else
			log_printf(fd, "refused %s '%s': %s\n", sup_chg_kind_name(e->kind), q, why);
	}
}

static void run_logged(struct ev_run *ev, enum step_kind kind, const char *what,
		       const struct pol_task_step *ts, int log_fd, struct ev_step *step)
{
	struct sup_sink out = { .fd = log_fd, .cap = EV_DEFAULT_OUTPUT_CAP };
	struct sup_sink err = { .fd = log_fd, .cap = EV_DEFAULT_OUTPUT_CAP };
	char **shown = ev_substitute(ts->argv, ts->n_argv, ev->task->task_id);
	if (shown)
		log_argv(log_fd, what, shown);
	ev_argv_free(shown);
	if (run_step(ev, kind, ts->argv, ts->n_argv, ts->timeout_ms, NULL, 0, &out, &err, step) <
	    0) {
		step->ran = true;
		step->res.reason = SUP_REASON_SETUP_FAILED;
		(void)snprintf(step->res.error, sizeof(step->res.error), "out of memory");
	}
	log_end(log_fd, &step->res);
	log_changes(log_fd, what, &step->res);
}

/* ---- phases ---- */

static void ev_setup(struct ev_run *ev, int log_fd)
{
	uint64_t t0 = sup_mono_ms();
	for (size_t i = 0; i < ev->task->n_setup; i++) {
		char what[32];
		(void)snprintf(what, sizeof(what), "setup[%zu]", i);
		run_logged(ev, STEP_SETUP, what, &ev->task->setup[i], log_fd, &ev->setup[i]);
		ev->n_setup_ran = i + 1;
		if (ev_stop_check(ev))
			break;
		if (!step_ok(&ev->setup[i]) && ev->task->setup[i].fail_on_error) {
			ev->setup_failed = true;
			break;
		}
	}
	ev->setup_ms = sup_mono_ms() - t0;
}

static int open_stream(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}

static int ev_agent(struct ev_run *ev)
{
	const struct pol_task *t = ev->task;
	uint64_t cap = t->policy->output_bytes ? t->policy->output_bytes : EV_DEFAULT_OUTPUT_CAP;
	int fo = open_stream(ev->dirfd, "agent.stdout");
	if (fo < 0)
		return fo;
	ev->agent_out.fd = fo;
	int fe = open_stream(ev->dirfd, "agent.stderr");
	if (fe < 0)
		return fe;
	ev->agent_err.fd = fe;
	ev->agent_out.cap = ev->agent_err.cap = cap;
	int r = run_step(ev, STEP_AGENT, t->agent.argv, t->agent.n_argv, t->agent.timeout_ms,
			 t->agent.env_pass, t->agent.n_env_pass, &ev->agent_out, &ev->agent_err,
			 &ev->agent);
	if (r < 0)
		return r;
	if (fsync(fo) < 0 || fsync(fe) < 0)
		return -errno;
	if (ev->agent_out.truncated || ev->agent_err.truncated)
		ev->stamps |= EV_STAMP_OUTPUT_TRUNCATED;
	if (ev->agent_out.error || ev->agent_err.error)
		return ev->agent_out.error ? ev->agent_out.error : ev->agent_err.error;
	return 0;
}

/*
 * Reap: sup_run has already killed the agent's sandbox. Its pid namespace died with the
 * worker; the cgroup (when there is one) must have been found empty.
 */
static void ev_reap(struct ev_run *ev)
{
	uint64_t t0 = sup_mono_ms();
	const struct sup_run_result *r = &ev->agent.res;
	ev->reap_ok = ev->agent.ran && r->reason != SUP_REASON_SETUP_FAILED &&
		      (r->cg_version == 0 || r->cg_emptied);
	ev->reap_ms = sup_mono_ms() - t0;
}

/*
 * Settle: before the criteria, teardown or any host tool reads the agent's work, its
 * changeset's report goes to the log (held and refused paths stay in the changeset, out of
 * the workspace) and the workspace is scrubbed: nothing set-id, no FIFO, socket or device
 * is left, whatever setup or the agent made. A workspace that cannot be made safe is set
 * aside as workspace.unsafe: it is never graded, and `warden grade` finds no workspace.
 */
static void ev_settle(struct ev_run *ev, int log_fd)
{
	const struct sup_run_result *a = &ev->agent.res;
	char why[512] = "";
	int r = 0;
	if (ev->agent.ran) {
		log_changes(log_fd, "agent", a);
		if (a->changes_error) {
			r = a->changes_error;
			(void)snprintf(why, sizeof(why), "the agent's changeset %s could not be "
				       "applied (%s); it stays pending: warden diff %s", a->changes_id,
				       strerror(-r), a->changes_id);
		}
	}
	if (r >= 0) {
		_cleanup_close_ int ws = openat(ev->dirfd, "workspace", O_RDONLY | O_DIRECTORY |
									O_NOFOLLOW | O_CLOEXEC);
		if (ws < 0) {
			r = -errno;
			(void)snprintf(why, sizeof(why), "workspace/ cannot be opened: %s",
				       strerror(-r));
		} else {
			r = sup_rundir_scrub(ws, ev->privileged, log_fd, why, sizeof(why));
		}
	}
	if (r >= 0)
		return;
	ev->unsettled = true;
	int moved = renameat(ev->dirfd, "workspace", ev->dirfd, "workspace.unsafe") < 0 ? errno : 0;
	(void)snprintf(ev->unsettled_why, sizeof(ev->unsettled_why), "the workspace could not be "
		       "made safe, so it is not graded: %s (%s%s)", why,
		       moved ? "and it could not be set aside: " : "set aside as workspace.unsafe",
		       moved ? strerror(moved) : "");
	log_printf(log_fd, "== %s\n", ev->unsettled_why);
}

static void judge_command(struct ev_run *ev, size_t i, int log_fd)
{
	const struct pol_task_criterion *c = &ev->task->criteria[i];
	struct ev_criterion *ec = &ev->crit[i];
	const struct pol_task_command *cmd = &c->command;
	char what[48];
	(void)snprintf(what, sizeof(what), "criteria[%zu]", i);
	if ((ev->stamps & EV_STAMP_REFERENCE_MISSING) && uses_reference(cmd->argv, cmd->n_argv)) {
		struct sup_crit_outcome o = { .error = "the reference folder is missing" };
		sup_crit_judge_command(c, &o, &ec->result);
		return;
	}
	struct sup_sink out = { .fd = -1, .cap = EV_CRITERION_OUTPUT_CAP };
	struct sup_sink err = { .fd = -1, .cap = EV_CRITERION_OUTPUT_CAP };
	char **shown = ev_substitute(cmd->argv, cmd->n_argv, ev->task->task_id);
	if (shown)
		log_argv(log_fd, what, shown);
	ev_argv_free(shown);
	int r = run_step(ev, STEP_CRITERION, cmd->argv, cmd->n_argv, cmd->timeout_ms, cmd->env_pass,
			 cmd->n_env_pass, &out, &err, &ec->step);
	const struct sup_run_result *res = &ec->step.res;
	log_printf(log_fd, "-- stdout (%" PRIu64 " bytes%s):\n", out.total,
		   out.truncated ? ", truncated" : "");
	if (out.buf)
		(void)io_write_all(log_fd, out.buf, (size_t)out.kept);
	log_printf(log_fd, "\n-- stderr (%" PRIu64 " bytes%s):\n", err.total,
		   err.truncated ? ", truncated" : "");
	if (err.buf)
		(void)io_write_all(log_fd, err.buf, (size_t)err.kept);
	log_end(log_fd, res);

	struct sup_crit_outcome o = {
		.started = r == 0 && res->reason != SUP_REASON_SETUP_FAILED &&
			   res->reason != SUP_REASON_ATTESTATION_FAILED &&
			   res->reason != SUP_REASON_PROTOCOL_VIOLATION,
		.timed_out = res->reason == SUP_REASON_WALL_TIMEOUT,
		.signaled = res->reason != SUP_REASON_EXITED && res->reason != SUP_REASON_WALL_TIMEOUT &&
			    res->signal > 0,
		.signal = res->signal,
		.exit_code = res->status,
		.out = out.buf ? out.buf : "",
		.out_len = (size_t)out.kept,
		.out_truncated = out.truncated,
		.error = r < 0 ? "out of memory" : res->error,
	};
	if (o.started && res->reason == SUP_REASON_PIDS_LIMIT && !o.signaled)
		o.exit_code = res->status;
	/* Its stdout, which the agent's work may have shaped, is checked in a confined judge. */
	struct ev_confined_ids ids = ev_confined_ids_for(ev->privileged);
	ev_judge_command(&ids, c, i, &o, &ec->result);
	free(out.buf);
	free(err.buf);
}

void ev_grade(struct ev_run *ev, int log_fd)
{
	const struct pol_task *t = ev->task;
	(void)clock_gettime(CLOCK_REALTIME, &ev->grade_started);
	uint64_t t0 = sup_mono_ms();
	if (t->reference) {
		struct stat st;
		if (lstat(t->reference, &st) < 0 || !S_ISDIR(st.st_mode))
			ev->stamps |= EV_STAMP_REFERENCE_MISSING;
	}
	_cleanup_close_ int ws = openat(ev->dirfd, "workspace", O_PATH | O_DIRECTORY | O_NOFOLLOW |
								     O_CLOEXEC);
	int ws_err = ws < 0 ? errno : 0;
	/*
	 * The static criteria are judged first, all in one confined child (eval/confined.c):
	 * command criteria see a throwaway overlay, so they cannot change what it reads.
	 */
	struct sup_crit_result judged[TASK_MAX_CRITERIA];
	memset(judged, 0, sizeof(judged));
	if (ws >= 0) {
		struct ev_confined_ids ids = ev_confined_ids_for(ev->privileged);
		ev_judge_static(&ids, t, ws, judged);
	}
	for (size_t i = 0; i < t->n_criteria; i++) {
		const struct pol_task_criterion *c = &t->criteria[i];
		struct ev_criterion *ec = &ev->crit[i];
		/* A grade cut short is no grade: the run is recorded as not graded. */
		if (ev_stop_check(ev)) {
			log_printf(log_fd, "== interrupted by signal %d: the grade is abandoned\n",
				   ev->interrupted);
			ev->grade_ms = sup_mono_ms() - t0;
			return;
		}
		if (c->check == POL_TASK_COMMAND) {
			judge_command(ev, i, log_fd);
		} else if (ws < 0) {
			ec->result.error = true;
			(void)snprintf(ec->result.details, sizeof(ec->result.details),
				       "the workspace cannot be opened: %s", strerror(ws_err));
		} else {
			ec->result = judged[i];
		}
		if (ec->result.error)
			ev->grade_error = true;
	}
	if (ev_stop_check(ev)) {
		log_printf(log_fd, "== interrupted by signal %d: the grade is abandoned\n",
			   ev->interrupted);
		ev->grade_ms = sup_mono_ms() - t0;
		return;
	}
	/* Σ score·weight / Σ weight over the criteria that count. */
	uint64_t num = 0, den = 0;
	for (size_t i = 0; i < t->n_criteria; i++) {
		uint64_t w = t->criteria[i].weight_milli;
		num += w * ev->crit[i].result.score_milli;
		den += w;
	}
	ev->score_milli = den ? (uint32_t)(num / den) : 0;
	ev->graded = true;
	ev->grades++;
	ev->grade_ms = sup_mono_ms() - t0;
}

/*
 * The agent's command was never run: it exited with 127 (not found) or 126 (found but not
 * executable), as the worker reports an exec that failed and as shells report the same
 * failure of a command they were asked to run. That is the task's or the host's error, not
 * the agent's failure.
 */
static bool agent_not_started(const struct ev_run *ev)
{
	const struct sup_run_result *a = &ev->agent.res;
	return ev->agent.ran && a->reason == SUP_REASON_EXITED &&
	       (a->status == SUP_EXIT_NOT_FOUND || a->status == SUP_EXIT_NOT_EXEC);
}

void ev_verdict(struct ev_run *ev)
{
	const struct pol_task *t = ev->task;
	bool all_pass = true;
	for (size_t i = 0; i < t->n_criteria; i++)
		if (t->criteria[i].weight_milli > 0 && !ev->crit[i].result.passed)
			all_pass = false;
	const struct sup_run_result *a = &ev->agent.res;
	bool agent_error = ev->agent.ran && (strcmp(step_status(a), "error") == 0 ||
					     agent_not_started(ev));
	if (ev->interrupted)
		ev->status = EV_INTERRUPTED;
	else if (ev->setup_failed)
		ev->status = EV_SETUP_FAILED;
	else if (!ev->agent.ran || agent_error || !ev->reap_ok || ev->grade_error || ev->unsettled)
		ev->status = EV_ERROR;
	else if (a->reason == SUP_REASON_WALL_TIMEOUT)
		ev->status = EV_TIMEOUT;
	else if (!ev->graded)
		ev->status = EV_NOT_GRADED;
	else
		ev->status = all_pass ? EV_SUCCESS : EV_FAILURE;
}

void ev_teardown(struct ev_run *ev, int log_fd)
{
	uint64_t t0 = sup_mono_ms();
	for (size_t i = 0; i < ev->task->n_teardown; i++) {
		char what[32];
		(void)snprintf(what, sizeof(what), "teardown[%zu]", i);
		run_logged(ev, STEP_TEARDOWN, what, &ev->task->teardown[i], log_fd, &ev->teardown[i]);
		ev->n_teardown_ran = i + 1;
		if (!step_ok(&ev->teardown[i]))
			ev->teardown_failed = true;
		if (ev_stop_check(ev))
			break;
	}
	/* Interrupted here, after the verdict: the run is recorded as interrupted all the same. */
	if (ev->interrupted)
		ev->status = EV_INTERRUPTED;
	if (ev->teardown_failed)
		ev->stamps |= EV_STAMP_TEARDOWN_FAILED;
	ev->teardown_ms = sup_mono_ms() - t0;
}

int ev_exit_code(const struct ev_run *ev)
{
	if (ev->status == EV_INTERRUPTED && ev->interrupted > 0)
		return EV_EXIT_SIGNAL_BASE + ev->interrupted;
	if (ev->host_failed)
		return EV_EXIT_HOST;
	switch (ev->status) {
	case EV_SUCCESS:
	case EV_NOT_GRADED:
		return EV_EXIT_SUCCESS;
	case EV_FAILURE:
	case EV_TIMEOUT:
		return EV_EXIT_FAILURE;
	case EV_SETUP_FAILED:
	case EV_ERROR:
	case EV_INTERRUPTED:
		return EV_EXIT_ERROR;
	}
	return EV_EXIT_ERROR;
}

/* ---- the record ---- */

static bool add_num(cJSON *o, const char *k, double v)
{
	return sup_json_add_num(o, k, v);
}

static bool add_num_or_null(cJSON *o, const char *k, bool have, double v)
{
	return have ? add_num(o, k, v) : cJSON_AddNullToObject(o, k) != NULL;
}

static bool add_time(cJSON *o, const char *k, const struct timespec *ts)
{
	char buf[40];
	sup_rfc3339(ts, false, buf);
	return cJSON_AddStringToObject(o, k, buf) != NULL;
}

static cJSON *step_json(const struct sup_run_result *r, const char *status)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	bool have_code = r->have_exited && r->reason != SUP_REASON_SIGNALED &&
			 r->reason != SUP_REASON_OOM && r->reason != SUP_REASON_CPU_LIMIT &&
			 r->exited.how != WIRE_EXIT_SIGNAL && r->status >= 0 && r->status <= 255;
	bool have_sig = r->signal > 0 && r->signal <= 64;
	bool ok = cJSON_AddStringToObject(o, "status", status) &&
		  cJSON_AddStringToObject(o, "reason", sup_reason_name(r->reason)) &&
		  add_num_or_null(o, "exit_code", have_code, r->status) &&
		  add_num_or_null(o, "signal", have_sig, r->signal) &&
		  (r->error[0] ? cJSON_AddStringToObject(o, "detail", r->error)
			       : cJSON_AddNullToObject(o, "detail")) &&
		  add_time(o, "started_at", &r->started_real) &&
		  add_num(o, "duration_ms", (double)r->duration_ms) &&
		  add_num_or_null(o, "peak_memory_bytes", r->have_cg && r->cg.have_memory_peak,
				  (double)r->cg.memory_peak_bytes) &&
		  add_num_or_null(o, "cpu_usec", r->have_cg && r->cg.have_cpu, (double)r->cg.cpu_usec) &&
		  /* The limit events, as `warden run --record` has them under resources. */
		  add_num_or_null(o, "oom_kills", r->have_cg, (double)r->cg.oom_kills) &&
		  add_num_or_null(o, "pids_limit_hits", r->have_cg, (double)r->cg.pids_max_events);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *steps_phase(const struct ev_step *steps, size_t n, const char *status, uint64_t ms)
{
	_cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "status", status) ||
	    !add_num(o, "duration_ms", (double)ms))
		return NULL;
	cJSON *arr = cJSON_AddArrayToObject(o, "steps");
	for (size_t i = 0; arr && i < n; i++) {
		cJSON *s = step_json(&steps[i].res, step_status(&steps[i].res));
		if (!s || !cJSON_AddItemToArray(arr, s)) {
			cJSON_Delete(s);
			return NULL;
		}
	}
	return arr ? TAKE_PTR(o) : NULL;
}

static cJSON *stream_json(const char *file, const struct sup_sink *k)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "file", file) || !add_num(o, "bytes", (double)k->total) ||
	    !add_num(o, "kept", (double)k->kept) || !cJSON_AddBoolToObject(o, "truncated", k->truncated)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *agent_json(const struct ev_run *ev)
{
	if (!ev->agent.ran)
		return cJSON_CreateNull();
	const struct sup_run_result *r = &ev->agent.res;
	const char *status = r->reason == SUP_REASON_WALL_TIMEOUT ? "timeout"
			     : strcmp(step_status(r), "error") == 0 ? "error" : "ok";
	_cleanup_(cJSON_Deletep) cJSON *o = step_json(r, status);
	if (!o)
		return NULL;
	cJSON *so = stream_json("agent.stdout", &ev->agent_out);
	if (!so || !cJSON_AddItemToObject(o, "stdout", so)) {
		cJSON_Delete(so);
		return NULL;
	}
	cJSON *se = stream_json("agent.stderr", &ev->agent_err);
	if (!se || !cJSON_AddItemToObject(o, "stderr", se)) {
		cJSON_Delete(se);
		return NULL;
	}
	return TAKE_PTR(o);
}

static cJSON *criteria_json(const struct ev_run *ev)
{
	const struct pol_task *t = ev->task;
	_cleanup_(cJSON_Deletep) cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; arr && i < t->n_criteria; i++) {
		const struct pol_task_criterion *c = &t->criteria[i];
		const struct ev_criterion *ec = &ev->crit[i];
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			return NULL;
		}
		bool evaluated = ev->graded && ec->result.evaluated;
		bool ok = cJSON_AddStringToObject(o, "description", c->description) &&
			  cJSON_AddStringToObject(o, "check", pol_task_check_name(c->check)) &&
			  add_num(o, "weight", c->weight_milli / 1000.0) &&
			  add_num(o, "pass_threshold", c->pass_threshold_milli / 1000.0) &&
			  cJSON_AddBoolToObject(o, "evaluated", evaluated) &&
			  add_num_or_null(o, "score", evaluated, ec->result.score_milli / 1000.0) &&
			  cJSON_AddBoolToObject(o, "passed", evaluated && ec->result.passed) &&
			  cJSON_AddStringToObject(o, "details",
						  ev->graded ? ec->result.details : "not graded");
		if (ok && ec->step.ran) {
			cJSON *s = step_json(&ec->step.res, step_status(&ec->step.res));
			ok = s && cJSON_AddItemToObject(o, "run", s);
			if (!ok)
				cJSON_Delete(s);
		} else if (ok) {
			ok = cJSON_AddNullToObject(o, "run") != NULL;
		}
		if (!ok)
			return NULL;
	}
	return arr ? TAKE_PTR(arr) : NULL;
}

/*
 * Adds to o under key the carried part raw (the compact JSON text the run folder reader
 * printed, placed as it is and never parsed here) when raw is not NULL, else made (taken
 * either way). Once ok is false nothing is added and made is freed, so every caller's item
 * has one owner.
 */
static bool carry(bool ok, cJSON *o, const char *key, const char *raw, cJSON *made)
{
	cJSON *item = made;
	if (!ok) {
		cJSON_Delete(made);
		return false;
	}
	if (raw) {
		cJSON_Delete(made);
		item = cJSON_CreateRaw(raw);
	}
	if (!item || !cJSON_AddItemToObject(o, key, item)) {
		cJSON_Delete(item);
		return false;
	}
	return true;
}

/* base's carried part k, or NULL without a base. */
static const char *part(const struct ev_folder *base, enum ev_folder_part k)
{
	return base ? base->parts[k] : NULL;
}

cJSON *ev_record_json(const struct ev_run *ev, const struct ev_folder *base)
{
	const struct pol_task *t = ev->task;
	_cleanup_(cJSON_Deletep) cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	struct timespec now;
	(void)clock_gettime(CLOCK_REALTIME, &now);
	bool ok = add_num(root, "schema_version", EV_SCHEMA_VERSION) &&
		  cJSON_AddStringToObject(root, "kind", "warden-eval-run") &&
		  cJSON_AddStringToObject(root, "warden_version", WARDEN_VERSION) &&
		  cJSON_AddStringToObject(root, "run_id", ev->run_id);
	cJSON *task = ok ? cJSON_AddObjectToObject(root, "task") : NULL;
	ok = ok && task && cJSON_AddStringToObject(task, "id", t->task_id) &&
	     cJSON_AddStringToObject(task, "source", t->source) &&
	     cJSON_AddStringToObject(task, "digest", ev->task_digest);

	cJSON *pol = cJSON_CreateObject();
	bool pol_ok = pol && cJSON_AddStringToObject(pol, "digest", ev->policy_digest);
	cJSON *weak = pol_ok ? cJSON_AddArrayToObject(pol, "weakenings") : NULL;
	pol_ok = pol_ok && weak;
	for (size_t i = 0; pol_ok && i < ELEMENTSOF(ev->weakenings) && ev->weakenings[i]; i++)
		pol_ok = cJSON_AddItemToArray(weak, cJSON_CreateString(ev->weakenings[i]));
	/* cJSON_AddItemToObject puts policy before created_at, as the schema lists them. */
	ok = carry(ok, root, "policy", part(base, EV_PART_POLICY),
		   pol_ok ? pol : (cJSON_Delete(pol), NULL));

	char created[40];
	sup_rfc3339(&ev->created, false, created);
	ok = carry(ok, root, "created_at", part(base, EV_PART_CREATED_AT),
		   cJSON_CreateString(created)) &&
	     add_time(root, "updated_at", &now);

	cJSON *host = cJSON_CreateObject();
	bool host_ok = host && cJSON_AddStringToObject(host, "kernel", ev->kernel) &&
		       cJSON_AddStringToObject(host, "mode",
					       ev->privileged ? "privileged" : "unprivileged") &&
		       add_num(host, "cgroup_version", ev->cgroup_version);
	ok = carry(ok, root, "host", part(base, EV_PART_HOST),
		   host_ok ? host : (cJSON_Delete(host), NULL));

	cJSON *phases = ok ? cJSON_AddObjectToObject(root, "phases") : NULL;
	ok = ok && phases;
	const char *setup_status = ev->setup_failed ? "failed"
				   : ev->n_setup_ran ? "ok" : "skipped";
	ok = carry(ok, phases, "setup", part(base, EV_PART_SETUP),
			 steps_phase(ev->setup, ev->n_setup_ran, setup_status, ev->setup_ms));
	ok = carry(ok, phases, "agent", part(base, EV_PART_AGENT), agent_json(ev));
	cJSON *reap = cJSON_CreateObject();
	bool reap_ok = reap &&
		       cJSON_AddStringToObject(reap, "status", !ev->agent.ran ? "skipped"
							       : ev->reap_ok ? "ok" : "failed") &&
		       cJSON_AddBoolToObject(reap, "cgroup_emptied", ev->agent.res.cg_emptied) &&
		       add_num(reap, "duration_ms", (double)ev->reap_ms);
	ok = carry(ok, phases, "reap", part(base, EV_PART_REAP),
		   reap_ok ? reap : (cJSON_Delete(reap), NULL));

	cJSON *grade = ok ? cJSON_AddObjectToObject(phases, "grade") : NULL;
	ok = ok && grade &&
	     cJSON_AddStringToObject(grade, "status", !ev->graded ? "skipped"
							: ev->grade_error ? "error" : "ok") &&
	     cJSON_AddStringToObject(grade, "by", ev->graded_by_grade ? "grade" : "eval") &&
	     (ev->graded ? add_time(grade, "started_at", &ev->grade_started)
			 : cJSON_AddNullToObject(grade, "started_at") != NULL) &&
	     add_num(grade, "duration_ms", (double)ev->grade_ms) &&
	     cJSON_AddStringToObject(grade, "log", "grade.log");
	cJSON *td = ok ? steps_phase(ev->teardown, ev->n_teardown_ran,
				     ev->teardown_failed ? "failed"
				     : ev->n_teardown_ran ? "ok" : "skipped",
				     ev->teardown_ms)
		       : NULL;
	ok = ok && td && cJSON_AddItemToObject(phases, "teardown", td);
	if (!ok)
		cJSON_Delete(td);

	cJSON *crit = ok ? criteria_json(ev) : NULL;
	ok = ok && crit && cJSON_AddItemToObject(root, "criteria", crit);
	if (!ok)
		cJSON_Delete(crit);
	ok = ok && add_num_or_null(root, "score", ev->graded, ev->score_milli / 1000.0) &&
	     cJSON_AddStringToObject(root, "status", ev_status_name(ev->status));
	cJSON *stamps = ok ? cJSON_AddArrayToObject(root, "stamps") : NULL;
	ok = ok && stamps;
	for (size_t i = 0; ok && i < ELEMENTSOF(stamp_names); i++)
		if (ev->stamps & stamp_names[i].bit)
			ok = cJSON_AddItemToArray(stamps, cJSON_CreateString(stamp_names[i].name));
	ok = ok && add_num(root, "grades", (double)ev->grades);
	cJSON *id = NULL;
	if (ok && !base && ev->agent.ran && ev->agent.res.identity.checked)
		id = sup_identity_json(&ev->agent.res.identity);
	else if (ok && !base)
		id = cJSON_CreateNull();
	ok = carry(ok, root, "identity", part(base, EV_PART_IDENTITY), id);
	return ok ? TAKE_PTR(root) : NULL;
}

int ev_record_write(const struct ev_run *ev, const struct ev_folder *base)
{
	_cleanup_(cJSON_Deletep) cJSON *json = ev_record_json(ev, base);
	if (!json)
		return -ENOMEM;
	return sup_write_json_atomic(ev->dirfd, "record.json", json);
}

/* ---- warden eval ---- */

/* What a child tells its parent about one task. */
struct ev_outcome {
	int code;
	int status;            /* enum ev_status, or -1 when no run folder was made */
	uint32_t score_milli;
	bool graded;
	uint64_t ms;
	char task_id[TASK_MAX_ID + 1];
	char run_dir[4096];
	char error[2048];
};

/* Runs one task from start to end; fills *out. */
static void eval_one(const char *path, const char *out_dir, bool no_grade, struct ev_outcome *out)
{
	uint64_t t0 = sup_mono_ms();
	out->status = -1;
	out->code = EV_EXIT_ERROR;
	_cleanup_(pol_task_freep) struct pol_task *task = NULL;
	struct pol_diag diag;
	struct ev_run ev;
	ev_run_init(&ev);
	int r = ev_load_task_from(path, EV_TASK_NAMED, &task, &diag, ev.task_digest, NULL);
	if (r == -EPERM) {
		(void)snprintf(out->error, sizeof(out->error), "%.600s: %s", path, diag.message);
		return;
	}
	if (r == -EINVAL || r == -E2BIG) {
		(void)snprintf(out->error, sizeof(out->error), "%.600s:%u:%u: %s", diag.file, diag.line,
			       diag.column, diag.message);
		return;
	}
	if (r < 0) {
		(void)snprintf(out->error, sizeof(out->error), "%s: %s", path, strerror(-r));
		return;
	}
	(void)snprintf(out->task_id, sizeof(out->task_id), "%s", task->task_id);
	char why[640];
	if (sup_check_host_paths(task->policy, why, sizeof(why)) < 0 ||
	    ev_check_exposure(task, why, sizeof(why)) < 0) {
		(void)snprintf(out->error, sizeof(out->error), "%.600s: %s", path, why);
		return;
	}
	_cleanup_free_ char *normal = NULL;
	if (pol_to_json(task->policy, &normal) < 0) {
		(void)snprintf(out->error, sizeof(out->error), "%s: out of memory", path);
		return;
	}
	sup_digest_hex(normal, strlen(normal), ev.policy_digest);
	ev.task = task;
	ev.no_grade = no_grade;
	struct utsname u;
	(void)snprintf(ev.kernel, sizeof(ev.kernel), "%s", uname(&u) == 0 ? u.release : "unknown");
	ev.privileged = sup_decide_privileged(sup_in_init_userns());
	(void)clock_gettime(CLOCK_REALTIME, &ev.created);

	r = sup_rundir_create(out_dir, task->task_id, &ev.created, ev.run_dir, sizeof(ev.run_dir),
			      &ev.dirfd, why, sizeof(why));
	if (r < 0) {
		(void)snprintf(out->error, sizeof(out->error), "%s", why);
		ev_run_done(&ev);
		return;
	}
	const char *base = strrchr(ev.run_dir, '/');
	(void)snprintf(ev.run_id, sizeof(ev.run_id), "%.150s", base ? base + 1 : ev.run_dir);
	(void)snprintf(ev.workspace, sizeof(ev.workspace), "%s/workspace", ev.run_dir);
	(void)snprintf(out->run_dir, sizeof(out->run_dir), "%s", ev.run_dir);

	_cleanup_close_ int ws = openat(ev.dirfd, "workspace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
								     O_CLOEXEC);
	r = ws < 0 ? -errno : 0;
	if (r < 0)
		(void)snprintf(why, sizeof(why), "workspace/ cannot be opened: %s", strerror(-r));
	/* Privileged, the workspace is never root's: the idmapped mount gives its owner's id to
	 * each sandbox, so that everything a phase writes lands as that id (docs/eval.md). */
	if (r >= 0)
		r = sup_rundir_fill(ws, ev.privileged, SUP_RUNDIR_OWNER, SUP_RUNDIR_OWNER,
				    task->workspace_template, task->files, task->n_files, why,
				    sizeof(why));
	if (r < 0) {
		/* The run folder exists: it gets a record saying why nothing ran. */
		(void)snprintf(out->error, sizeof(out->error), "%.600s: workspace: %s", ev.run_dir, why);
		ev.status = EV_ERROR;
		(void)ev_record_write(&ev, NULL);
		out->status = (int)ev.status;
		out->ms = sup_mono_ms() - t0;
		ev_run_done(&ev);
		return;
	}

	char setup_tmp[128], changes_tmp[128], grade_tmp[128];
	_cleanup_close_ int setup_log = ev_log_open(ev.dirfd, "setup.log", setup_tmp,
						    sizeof(setup_tmp));
	_cleanup_close_ int changes_log = ev_log_open(ev.dirfd, "changes.log", changes_tmp,
						      sizeof(changes_tmp));
	_cleanup_close_ int grade_log = ev_log_open(ev.dirfd, "grade.log", grade_tmp,
						    sizeof(grade_tmp));
	if (setup_log < 0 || changes_log < 0 || grade_log < 0) {
		int e = setup_log < 0 ? setup_log : changes_log < 0 ? changes_log : grade_log;
		(void)snprintf(out->error, sizeof(out->error), "%.300s: cannot create its logs: %s",
			       ev.run_dir, strerror(-e));
		ev_run_done(&ev);
		return;
	}

	/* A stop request is looked at before each phase and after each sandbox step. */
	if (!ev_stop_check(&ev))
		ev_setup(&ev, setup_log);
	(void)ev_log_commit(ev.dirfd, &setup_log, setup_tmp, "setup.log");
	if (!ev.setup_failed && !ev_stop_check(&ev)) {
		r = ev_agent(&ev);
		if (r < 0)
			(void)snprintf(out->error, sizeof(out->error), "%.300s: agent output: %s",
				       ev.run_dir, strerror(-r));
		ev_reap(&ev);
	}
	ev_settle(&ev, changes_log);
	(void)ev_log_commit(ev.dirfd, &changes_log, changes_tmp, "changes.log");
	if (ev.unsettled)
		(void)snprintf(out->error, sizeof(out->error), "%.300s: %s", ev.run_dir,
			       ev.unsettled_why);
	if (!ev.setup_failed && ev.reap_ok && !ev.unsettled && !no_grade && !ev_stop_check(&ev))
		ev_grade(&ev, grade_log);
	ev_verdict(&ev);
	if (!ev.unsettled && !ev_stop_check(&ev))
		ev_teardown(&ev, grade_log);
	(void)ev_log_commit(ev.dirfd, &grade_log, grade_tmp, "grade.log");
	if (ev.interrupted)
		(void)snprintf(out->error, sizeof(out->error), "%.300s: interrupted by signal %d (%s); "
			       "its sandbox was stopped", ev.run_dir, ev.interrupted,
			       strsignal(ev.interrupted));
	else if (agent_not_started(&ev))
		(void)snprintf(out->error, sizeof(out->error), "%.300s: the agent's command %s (exit "
			       "%d)%s%.640s", ev.run_dir,
			       ev.agent.res.status == SUP_EXIT_NOT_FOUND ? "was not found"
			       : "could not be executed", ev.agent.res.status,
			       ev.agent.res.error[0] ? ": " : "", ev.agent.res.error);

	r = ev_record_write(&ev, NULL);
	if (r < 0) {
		(void)snprintf(out->error, sizeof(out->error), "%.300s: record.json cannot be written: %s",
			       ev.run_dir, strerror(-r));
		ev.status = EV_ERROR;
	}
	out->status = (int)ev.status;
	out->code = r < 0 ? EV_EXIT_ERROR : ev_exit_code(&ev);
	out->score_milli = ev.score_milli;
	out->graded = ev.graded;
	out->ms = sup_mono_ms() - t0;
	ev_run_done(&ev);
}

static const char usage_eval[] =
	"Usage: warden eval [--out DIR] [--jobs N] [--no-grade] [--json] TASK.yaml...\n"
	"\n"
	"Runs each evaluation task (docs/eval.md): setup, the agent, reap, the criteria and\n"
	"teardown, each command in a fresh sandbox of the task's policy, and writes a run folder\n"
	"DIR/<task_id>-<UTC time>-<random>/ (mode 0700) with record.json, agent.stdout,\n"
	"agent.stderr, setup.log, changes.log, grade.log and workspace/. What the agent writes\n"
	"reaches workspace/ under the apply rules of docs/workspace.md; the rest stays pending.\n"
	"\n"
	"  --out DIR    where run folders go (default: ./runs)\n"
	"  --jobs N     run up to N tasks at once, 1..64 (default 1)\n"
	"  --no-grade   run setup and the agent only; the status is NOT_GRADED\n"
	"  --json       print the summary as JSON instead of a table\n"
	"\n"
	"On a terminal, a table at the end; otherwise one line per task as it ends\n"
	"([3/20] TASK STATUS SCORE TIME RUN_DIR). Then a line of totals. SIGINT, SIGTERM or\n"
	"SIGHUP stops the runs in flight (recorded INTERRUPTED) and starts no more.\n"
	"\n"
	"Exit status: 0 every run SUCCESS (or NOT_GRADED); 1 some FAILURE or TIMEOUT; 2 some\n"
	"ERROR or SETUP_FAILED, an invalid task, or bad usage; 4 the host cannot provide the\n"
	"isolation the policy asks for (see warden doctor). The highest applies; 128+N when\n"
	"signal N interrupted the evaluation.\n";

void ev_summary_add(cJSON *arr, const char *task_id, const char *run_dir, const char *status,
		    bool graded, uint32_t score_milli, const char *error)
{
	cJSON *e = cJSON_CreateObject();
	if (!e || !cJSON_AddItemToArray(arr, e)) {
		cJSON_Delete(e);
		return;
	}
	if (task_id)
		(void)cJSON_AddStringToObject(e, "task_id", task_id);
	if (run_dir)
		(void)cJSON_AddStringToObject(e, "run_dir", run_dir);
	else
		(void)cJSON_AddNullToObject(e, "run_dir");
	(void)cJSON_AddStringToObject(e, "status", status);
	if (graded)
		(void)cJSON_AddNumberToObject(e, "score", score_milli / 1000.0);
	else
		(void)cJSON_AddNullToObject(e, "score");
	if (error && *error)
		(void)cJSON_AddStringToObject(e, "error", error);
	else
		(void)cJSON_AddNullToObject(e, "error");
}

void ev_summary_print(cJSON *arr)
{
	_cleanup_free_ char *text = arr ? cJSON_Print(arr) : NULL;
	if (text)
		printf("%s\n", text);
}

/* A task's status name: a task that made no run folder is ERROR, or INTERRUPTED. */
static const char *outcome_status(const struct ev_outcome *o)
{
	return o->status >= 0 ? ev_status_name((enum ev_status)o->status) : "ERROR";
}

/* What names a task in a line: its id, or the file it came from when it never loaded. */
static const char *outcome_name(const struct ev_outcome *o, const char *path)
{
	return o->task_id[0] ? o->task_id : path;
}

static void outcome_score(const struct ev_outcome *o, char *buf, size_t len)
{
	if (o->graded)
		(void)snprintf(buf, len, "%.3f", o->score_milli / 1000.0);
	else
		(void)snprintf(buf, len, "-");
}

/*
 * One line for one task as it ends, for logs (stdout is not a terminal):
 * "[3/20] TASK STATUS SCORE TIME RUN_DIR", with the error instead of the run folder when
 * there is none.
 */
static void print_line(const struct ev_outcome *o, const char *path, size_t nth, size_t n)
{
	char score[16];
	outcome_score(o, score, sizeof(score));
	printf("[%zu/%zu] %s %s %s %.1fs %s\n", nth, n, outcome_name(o, path), outcome_status(o),
	       score, (double)o->ms / 1000.0, o->status >= 0 && o->run_dir[0] ? o->run_dir
								: o->error);
	(void)fflush(stdout);
}

static void print_table(const struct ev_outcome *o, char **paths, size_t n)
{
	printf("%-24s %-12s %6s %9s  %s\n", "TASK", "STATUS", "SCORE", "TIME", "RUN");
	for (size_t i = 0; i < n; i++) {
		char score[16], secs[16];
		outcome_score(&o[i], score, sizeof(score));
		(void)snprintf(secs, sizeof(secs), "%.1fs", (double)o[i].ms / 1000.0);
		printf("%-24s %-12s %6s %9s  %s\n", outcome_name(&o[i], paths[i]),
		       outcome_status(&o[i]), score, secs,
		       o[i].status >= 0 && o[i].run_dir[0] ? o[i].run_dir : o[i].error);
	}
}

/*
 * The totals: "total N: SUCCESS a, FAILURE b, ...; mean score S over G graded; wall time
 * Ts", statuses in a fixed order and only those that occurred.
 */
static void print_totals(const struct ev_outcome *o, size_t n, uint64_t wall_ms)
{
	static const enum ev_status order[] = { EV_SUCCESS, EV_FAILURE, EV_TIMEOUT, EV_ERROR,
						EV_SETUP_FAILED, EV_NOT_GRADED, EV_INTERRUPTED };
	size_t count[ELEMENTSOF(order)] = { 0 };
	size_t graded = 0;
	uint64_t score_sum = 0;
	for (size_t i = 0; i < n; i++) {
		enum ev_status st = o[i].status >= 0 ? (enum ev_status)o[i].status : EV_ERROR;
		for (size_t k = 0; k < ELEMENTSOF(order); k++)
			if (order[k] == st)
				count[k]++;
		if (o[i].graded) {
			graded++;
			score_sum += o[i].score_milli;
		}
	}
	printf("total %zu:", n);
	const char *sep = " ";
	for (size_t k = 0; k < ELEMENTSOF(order); k++) {
		if (!count[k])
			continue;
		printf("%s%s %zu", sep, ev_status_name(order[k]), count[k]);
		sep = ", ";
	}
	if (graded)
		printf("; mean score %.3f over %zu graded", (double)score_sum / 1000.0 / (double)graded,
		       graded);
	else
		printf("; nothing graded");
	printf("; wall time %.1fs\n", (double)wall_ms / 1000.0);
	(void)fflush(stdout);
}

/* A child: one task, its outcome written to fd. Never returns. */
static __attribute__((noreturn)) void eval_child(const char *path, const char *out_dir,
						 bool no_grade, int fd)
{
	/*
	 * The stop signals stay blocked (ev_stop_block, inherited): one that comes is taken by
	 * the sandbox step running (sup_run) or waits, pending, for the next ev_stop_check.
	 */
	struct ev_outcome *o = calloc(1, sizeof(*o));
	if (!o)
		_exit(EV_EXIT_ERROR);
	eval_one(path, out_dir, no_grade, o);
	int wr = io_write_all(fd, o, sizeof(*o));
	_exit(wr < 0 ? EV_EXIT_ERROR : 0);
}

/* Sends sig to every child still running. */
static void forward_signal(const pid_t *pids, size_t n, int sig)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] > 0)
			(void)kill(pids[i], sig);
}

enum {
	OPT_NO_GRADE = CLI_LONG,
	OPT_JSON,
};

static const struct cli_option eval_options[] = {
	{ "out", 'o', true },
	{ "jobs", 'j', true },
	{ "no-grade", OPT_NO_GRADE, false },
	{ "json", OPT_JSON, false },
	{ NULL, 0, false },
};

static const struct cli_command eval_command = {
	.name = "eval",
	.help = usage_eval,
	.options = eval_options,
	.min_operands = 1,
	.max_operands = CLI_ANY,
	.operands = "TASK.yaml",
	.usage_exit = EV_EXIT_ERROR,
};

int ev_cmd_eval(int argc, char **argv)
{
	const char *out_dir = "runs";
	long jobs = 1;
	bool no_grade = false, json = false;
	_cleanup_(cli_done) struct cli cli = { 0 };
	if (cli_start(&cli, &eval_command, argc, argv) < 0)
		return EV_EXIT_ERROR;
	int key;
	while ((key = cli_next(&cli)) > 0) {
		char *end = NULL;
		switch (key) {
		case 'o':
			out_dir = cli.arg;
			break;
		case 'j':
			errno = 0;
			jobs = strtol(cli.arg, &end, 10);
			if (errno || !end || *end || jobs < 1 || jobs > 64)
				return cli_usage(&eval_command, "--jobs '%s' is not a number from 1 to 64",
						 cli.arg);
			break;
		case OPT_NO_GRADE:
			no_grade = true;
			break;
		default: /* OPT_JSON */
			json = true;
			break;
		}
	}
	if (key == CLI_STOP)
		return cli.exit_code;
	size_t n = cli.n_operands;
	char **tasks = cli.operands;
	_cleanup_free_ struct ev_outcome *res = calloc(n, sizeof(*res));
	_cleanup_free_ pid_t *pids = calloc(n, sizeof(pid_t));
	_cleanup_free_ int *fds = calloc(n, sizeof(int));
	if (!res || !pids || !fds) {
		fprintf(stderr, "warden eval: out of memory\n");
		return EV_EXIT_ERROR;
	}
	/*
	 * The stop signals and SIGCHLD are blocked and waited for (sigwaitinfo), so that none is
	 * lost between a check and the wait: a stop request starts no more runs and is passed on
	 * to the running ones, which stop their sandboxes and record themselves INTERRUPTED.
	 */
	sigset_t wait_set, old_mask;
	(void)signal(SIGCHLD, SIG_DFL); /* an inherited SIG_IGN would reap the children for us */
	sigemptyset(&wait_set);
	sigaddset(&wait_set, SIGINT);
	sigaddset(&wait_set, SIGTERM);
	sigaddset(&wait_set, SIGHUP);
	sigaddset(&wait_set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &wait_set, &old_mask) < 0) {
		fprintf(stderr, "warden eval: block signals: %s\n", strerror(errno));
		return EV_EXIT_ERROR;
	}
	bool progress = isatty(STDERR_FILENO) == 1;
	bool lines = !json && isatty(STDOUT_FILENO) != 1;
	uint64_t t0 = sup_mono_ms();
	int stop = 0;
	size_t next = 0, running = 0, done = 0;
	(void)fflush(stdout);
	(void)fflush(stderr);
	while (done < n) {
		while (!stop && running < (size_t)jobs && next < n) {
			int p[2];
			if (pipe2(p, O_CLOEXEC) < 0) {
				fprintf(stderr, "warden eval: pipe: %s\n", strerror(errno));
				stop = SIGTERM;
				break;
			}
			pid_t pid = fork();
			if (pid < 0) {
				fprintf(stderr, "warden eval: fork: %s\n", strerror(errno));
				(void)close(p[0]);
				(void)close(p[1]);
				stop = SIGTERM;
				break;
			}
			if (pid == 0) {
				(void)close(p[0]);
				/* SIGCHLD back as it was; the stop signals stay blocked. */
				sigset_t chld;
				sigemptyset(&chld);
				sigaddset(&chld, SIGCHLD);
				if (!sigismember(&old_mask, SIGCHLD))
					(void)sigprocmask(SIG_UNBLOCK, &chld, NULL);
				eval_child(tasks[next], out_dir, no_grade, p[1]);
			}
			(void)close(p[1]);
			pids[next] = pid;
			fds[next] = p[0];
			next++;
			running++;
		}
		if (running == 0)
			break;
		if (progress)
			fprintf(stderr, "\r\033[Kwarden eval: %zu/%zu done, %zu running", done, n,
				running);
		int status = 0;
		pid_t pid = waitpid(-1, &status, WNOHANG);
		if (pid == 0) {
			siginfo_t si;
			int sig = sigwaitinfo(&wait_set, &si);
			if (sig > 0 && sig != SIGCHLD) {
				if (!stop)
					stop = sig;
				forward_signal(pids, next, sig);
			}
			continue;
		}
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			break;
		for (size_t i = 0; i < next; i++) {
			if (pids[i] != pid)
				continue;
			pids[i] = 0;
			if (io_read_exact(fds[i], &res[i], sizeof(res[i])) < 0 || status != 0) {
				memset(&res[i], 0, sizeof(res[i]));
				res[i].status = -1;
				res[i].code = EV_EXIT_ERROR;
				(void)snprintf(res[i].error, sizeof(res[i].error),
					       "%s: the run ended abnormally (%s %d)", tasks[i],
					       WIFSIGNALED(status) ? "signal" : "status",
					       WIFSIGNALED(status) ? WTERMSIG(status)
								   : WEXITSTATUS(status));
			}
			res[i].task_id[sizeof(res[i].task_id) - 1] = '\0';
			res[i].run_dir[sizeof(res[i].run_dir) - 1] = '\0';
			res[i].error[sizeof(res[i].error) - 1] = '\0';
			(void)close(fds[i]);
			running--;
			done++;
			if (res[i].error[0])
				fprintf(stderr, "%swarden eval: %s\n", progress ? "\r\033[K" : "",
					res[i].error);
			if (lines)
				print_line(&res[i], tasks[i], done, n);
		}
	}
	if (progress)
		fprintf(stderr, "\r\033[K");
	int code = 0;
	for (size_t i = 0; i < n; i++) {
		if (i >= next) {
			/* Never started: the evaluation was stopped first. */
			memset(&res[i], 0, sizeof(res[i]));
			res[i].status = (int)EV_INTERRUPTED;
			res[i].code = EV_EXIT_ERROR;
			(void)snprintf(res[i].error, sizeof(res[i].error), "%s: not run (interrupted)",
				       tasks[i]);
			if (lines)
				print_line(&res[i], tasks[i], ++done, n);
		}
		if (res[i].code > code)
			code = res[i].code;
	}
	uint64_t wall_ms = sup_mono_ms() - t0;
	if (json) {
		_cleanup_(cJSON_Deletep) cJSON *arr = cJSON_CreateArray();
		for (size_t i = 0; arr && i < n; i++)
			ev_summary_add(arr, res[i].task_id,
				       res[i].status >= 0 && res[i].run_dir[0] ? res[i].run_dir : NULL,
				       outcome_status(&res[i]), res[i].graded, res[i].score_milli,
				       res[i].error);
		ev_summary_print(arr);
	} else {
		if (!lines)
			print_table(res, tasks, n);
		print_totals(res, n, wall_ms);
	}
	(void)sigprocmask(SIG_SETMASK, &old_mask, NULL);
	if (stop)
		return EV_EXIT_SIGNAL_BASE + stop;
	return code;
}
