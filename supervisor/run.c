/* SPDX-License-Identifier: MIT */
/*
 * `warden run`: prepare, spawn, attest, supervise, tear down.
 *
 * The supervisor is single-threaded. Signals arrive through a signalfd, the worker's exit
 * through its pidfd, the deadline through a timerfd, frames through the channel; one poll()
 * loop waits on all four and no logic runs in a signal handler.
 */
#include <cap-ng.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "changes.h"
#include "channel.h"
#include "cleanup.h"
#include "io-util.h"
#include "config.h"
#include "audit.h"
#include "hide.h"
#include "log.h"
#include "policy.h"
#include "run.h"
#include "sandbox.h"
#include "sha256.h"
#include "statefs.h"
#include "str-util.h"
#include "wspath.h"

/* Generated at build time by sandbox/seccomp-gen: the default policy's filter. */
extern const struct sbx_seccomp_precompiled sbx_seccomp_default_pre;
#include "supervisor.h"
#include "treecopy.h"

/* How long the worker may take to answer each handshake step: CHALLENGE, and GO. */
#define HANDSHAKE_TIMEOUT_MS 10000
/* After EXITED, how long the worker may take to exit. */
#define WORKER_EXIT_TIMEOUT_MS 5000
/* How long the audit probes may take in all (each one is bounded by the worker too). */
#define AUDIT_TIMEOUT_MS 150000
#define HOST_ID_LOCK_DIR "/run/warden/ids"

DEFINE_CLEANUP(struct pol_policy *, pol_free)

static const char *const reason_names[] = {
	[SUP_REASON_EXITED] = "exited",
	[SUP_REASON_SIGNALED] = "signaled",
	[SUP_REASON_WALL_TIMEOUT] = "wall-timeout",
	[SUP_REASON_CPU_LIMIT] = "cpu-limit",
	[SUP_REASON_OOM] = "oom",
	[SUP_REASON_PIDS_LIMIT] = "pids-limit",
	[SUP_REASON_OUTPUT_CAP] = "output-cap",
	[SUP_REASON_SETUP_FAILED] = "setup-failed",
	[SUP_REASON_ATTESTATION_FAILED] = "attestation-failed",
	[SUP_REASON_PROTOCOL_VIOLATION] = "protocol-violation",
	[SUP_REASON_INTERNAL_ERROR] = "internal-error",
};

const char *sup_reason_name(enum sup_reason r)
{
	return (size_t)r < ELEMENTSOF(reason_names) ? reason_names[r] : "unknown";
}

/* Everything a run holds; released by run_state_done() in one place. */
struct run_state {
	struct pol_policy *pol;
	bool pol_borrowed;      /* opts->policy: not ours to free */
	uint64_t wall_ms;       /* the wall-clock limit in force; 0 = none */
	const struct sup_run_opts *opts;
	int out_pipe[2], err_pipe[2]; /* captured streams: [0] ours, [1] the sandbox's */
	int devnull;            /* the sandbox's stdin when streams are captured */
	int workspace_fd;
	struct stat workspace_st; /* fstat of workspace_fd */
	char workspace_path[PATH_MAX];
	int workspace_tree_fd;
	int worker_fd;
	int id_lock_fd;
	int id_dir_fd;
	int ws_lock_fd;
	uint32_t host_id;
	uint64_t caps_mask;
	char **hidden;
	size_t n_hidden;
	struct sup_audit *audit;
	uint64_t phase_t;       /* when the current phase began (mono_us) */
	int chan[2];   /* [0] supervisor, [1] worker */
	int sync[2];   /* [0] supervisor, [1] child */
	int pidfd;
	pid_t pid;
	bool reaped;
	bool worker_status_known; /* reaped, and waitid said how the worker ended */
	siginfo_t worker_si;
	bool chan_eof;          /* the worker closed its end of the channel */
	struct fail internal;   /* END_INTERNAL: warden's own failure, "internal error: ..." */
	int sigfd;
	int timerfd;
	sigset_t old_mask;
	bool mask_set;
	struct sbx_cgroup cg;
	struct sbx_cg_join cg_join;
	struct sbx_seccomp_prog seccomp;
	struct sbx_placeholder *placeholders;
	size_t n_placeholders;
	struct sbx_config cfg;   /* what the sandbox is built from (clone_sandbox) */
	bool joined;             /* the child enters its cgroup itself (sbx_spawn) */
	struct sup_changeset cs; /* workspace mode changes, or a scratch layer */
	bool use_changes;
	bool scratch;            /* cs is a scratch layer: discarded, never applied */
	char **envp;
	char **worker_argv;
	struct sup_channel chan_state;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		(void)close(*fd);
	*fd = -1;
}

/* Unlinks the lock file of id while still holding the lock, then lets go. */
static void release_host_id(int *dir, int *lock, uint32_t id)
{
	if (*lock >= 0 && *dir >= 0) {
		char name[16];
		(void)snprintf(name, sizeof(name), "%u", id);
		(void)unlinkat(*dir, name, 0);
	}
	close_fd(lock);
	close_fd(dir);
}

static void run_state_init(struct run_state *st)
{
	memset(st, 0, sizeof(*st));
	st->workspace_fd = st->workspace_tree_fd = st->worker_fd = st->id_lock_fd = -1;
	st->id_dir_fd = st->ws_lock_fd = -1;
	st->chan[0] = st->chan[1] = st->sync[0] = st->sync[1] = -1;
	st->pidfd = st->sigfd = st->timerfd = -1;
	st->out_pipe[0] = st->out_pipe[1] = st->err_pipe[0] = st->err_pipe[1] = -1;
	st->devnull = -1;
	sbx_cgroup_init(&st->cg);
	sup_changeset_init(&st->cs);
	st->cg_join.clone_fd = -1;
	for (int i = 0; i < SBX_CG_N; i++)
		st->cg_join.tasks_fd[i] = -1;
}

/*
 * Reaps the worker, which has exited (its pidfd is readable) or was sent SIGKILL, and keeps
 * the kernel's word on how it ended. As pid 1 of its namespace it is reaped only once every
 * other process there is gone. Returns 0, or -errno from waitid.
 */
static int reap_worker(struct run_state *st)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	int r;
	while ((r = waitid(P_PIDFD, (id_t)st->pidfd, &si, WEXITED)) < 0 && errno == EINTR)
		;
	st->reaped = true;
	if (r < 0)
		return -errno;
	st->worker_si = si;
	st->worker_status_known = true;
	return 0;
}

/* Kills the worker (and so its pid namespace) and reaps it. */
static void kill_and_reap(struct run_state *st)
{
	if (st->pidfd < 0 || st->reaped)
		return;
	(void)syscall(SYS_pidfd_send_signal, st->pidfd, SIGKILL, NULL, 0);
	(void)reap_worker(st);
}

static void run_state_done(struct run_state *st, struct sup_run_result *res)
{
	kill_and_reap(st);
	sbx_cgroup_close_join(&st->cg_join);
	if (st->cg.version) {
		int r = sbx_cgroup_kill(&st->cg);
		res->cg_emptied = r == 0;
		if (r < 0)
			log_errno(r, "empty cgroup %s", st->cg.path[0]);
		r = sbx_cgroup_destroy(&st->cg);
		if (r < 0)
			log_errno(r, "remove cgroup, ignoring");
	}
	if (st->n_placeholders || st->placeholders) {
		int left = sbx_placeholders_remove(st->workspace_fd, st->ws_lock_fd,
						   st->placeholders, st->n_placeholders);
		if (left > 0)
			log_error("%d placeholder(s) in the workspace were changed and left in place",
				  left);
		st->placeholders = NULL;
		st->n_placeholders = 0;
	}
	sup_changeset_done(&st->cs);
	sup_channel_done(&st->chan_state);
	sbx_seccomp_prog_done(&st->seccomp);
	close_fd(&st->ws_lock_fd);
	close_fd(&st->workspace_fd);
	close_fd(&st->workspace_tree_fd);
	close_fd(&st->worker_fd);
	release_host_id(&st->id_dir_fd, &st->id_lock_fd, st->host_id);
	for (int i = 0; i < 2; i++) {
		close_fd(&st->chan[i]);
		close_fd(&st->sync[i]);
		close_fd(&st->out_pipe[i]);
		close_fd(&st->err_pipe[i]);
	}
	close_fd(&st->devnull);
	close_fd(&st->pidfd);
	close_fd(&st->sigfd);
	close_fd(&st->timerfd);
	if (st->mask_set)
		(void)sigprocmask(SIG_SETMASK, &st->old_mask, NULL);
	sup_hide_free(st->hidden);
	strv_free(st->envp);
	strv_free(st->worker_argv);
	if (st->pol_borrowed)
		st->pol = NULL;
	st->pol = pol_free(st->pol);
}

/*
 * How a stage of the run ended. A stage that ends the run early has written res (reason, exit
 * code, error) before it returns.
 */
enum stage {
	STAGE_NEXT,     /* done: on to the next stage */
	STAGE_FAILED,   /* warden failed, before the command or by its own error: exit 125 */
	STAGE_ENDED,    /* the run ended early: a signal, the wall clock, a violation, attestation */
	STAGE_EXITED,   /* the worker reported the command's end: classified once the cgroup is read */
};

/*
 * The one place a failure of warden's becomes the run's result: f's line in res->error,
 * reason setup-failed, exit 125, logged once.
 */
static enum stage stage_failed(struct sup_run_result *res, const struct fail *f)
{
	(void)fail_format(f, res->error, sizeof(res->error));
	res->reason = SUP_REASON_SETUP_FAILED;
	res->exit_code = SUP_EXIT_SETUP;
	log_error("%s", res->error);
	return STAGE_FAILED;
}

/* stage_failed of a reason made here. */
__attribute__((format(printf, 3, 4))) static enum stage
stage_fail(struct sup_run_result *res, int err, const char *fmt, ...)
{
	struct fail f;
	va_list ap;
	va_start(ap, fmt);
	(void)fail_vset(&f, err, fmt, ap);
	va_end(ap);
	return stage_failed(res, &f);
}

/*
 * A step of a stage: 0, or -errno with f saying what failed (stage_failed turns it into the
 * run's result). Steps run in order; the first failure ends the stage.
 */
typedef int run_step_fn(struct run_state *st, struct sup_run_result *res, struct fail *f);

static enum stage run_steps(struct run_state *st, struct sup_run_result *res,
			    run_step_fn *const *steps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct fail f;
		fail_init(&f);
		if (steps[i](st, res, &f) < 0)
			return stage_failed(res, &f);
	}
	return STAGE_NEXT;
}

void sup_digest_hex(const void *buf, size_t len, char out[72])
{
	/* The frame codec's SHA-256: the supervisor needs no crypto library (wire/sha256.h). */
	uint8_t md[WIRE_SHA256_LEN];
	struct wire_sha256 ctx;
	wire_sha256_init(&ctx);
	wire_sha256_update(&ctx, buf, len);
	wire_sha256_final(&ctx, md);
	memcpy(out, "sha256:", 7);
	hex_encode(md, sizeof(md), out + 7); /* 7 + 64 digits + NUL = 72 */
}

/*
 * A supervisor killed with SIGKILL leaves its id lock file behind (unlocked). Each start
 * removes a bounded number of such files: one it can lock is held by nobody.
 */
#define ID_SWEEP_MAX 64

#ifdef WARDEN_TEST_HOOKS
/*
 * Only in warden-test: pauses the sweep between its open and its flock of the lock file named
 * WARDEN_TEST_SWEEP_PAUSE, so that tests/reliability/test-sweep can let another supervisor
 * take the id meanwhile. WARDEN_TEST_SWEEP_FIFOS names a folder with two FIFOs: the sweep
 * writes a byte to "paused", then waits until the writer of "resume" closes it.
 */
static void test_hook_sweep_pause(const char *name)
{
	const char *want = secure_getenv("WARDEN_TEST_SWEEP_PAUSE");
	const char *dir = secure_getenv("WARDEN_TEST_SWEEP_FIFOS");
	if (!want || !dir || strcmp(want, name) != 0)
		return;
	char path[PATH_MAX];
	(void)snprintf(path, sizeof(path), "%s/paused", dir);
	_cleanup_close_ int paused = open(path, O_WRONLY | O_CLOEXEC);
	if (paused < 0 || write(paused, "p", 1) != 1)
		return;
	(void)snprintf(path, sizeof(path), "%s/resume", dir);
	_cleanup_close_ int resume = open(path, O_RDONLY | O_CLOEXEC);
	char byte;
	while (resume >= 0 && (read(resume, &byte, 1) > 0 || errno == EINTR))
		;
}
#else
static void test_hook_sweep_pause(const char *name)
{
	(void)name;
}
#endif

static void sweep_stale_id_locks(int dir)
{
	int dup = fcntl(dir, F_DUPFD_CLOEXEC, 3);
	if (dup < 0)
		return;
	DIR *d = fdopendir(dup);
	if (!d) {
		(void)close(dup);
		return;
	}
	unsigned seen = 0;
	struct dirent *de;
	while ((de = readdir(d)) && seen < ID_SWEEP_MAX) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		seen++;
		_cleanup_close_ int fd = openat(dir, de->d_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		test_hook_sweep_pause(de->d_name);
		if (flock(fd, LOCK_EX | LOCK_NB) < 0)
			continue;
		/*
		 * Ours now, and nobody's. But between the open and the lock, its holder may have
		 * unlinked it at its end and another supervisor made and locked a new file of the
		 * same name: unlink the name only while it still leads to the file we locked. Then
		 * nobody else can remove or replace it before we do, since only the holder of a lock
		 * file's lock unlinks its name.
		 */
		struct stat held, named;
		if (fstat(fd, &held) < 0 || fstatat(dir, de->d_name, &named, AT_SYMLINK_NOFOLLOW) < 0 ||
		    held.st_dev != named.st_dev || held.st_ino != named.st_ino)
			continue;
		(void)unlinkat(dir, de->d_name, 0);
	}
	(void)closedir(d);
}

/*
 * Host id allocation (privileged mode): one unique id per live sandbox, held by an flock on
 * /run/warden/ids/<id>. The holder unlinks the file before it lets go (release_host_id), so
 * the directory does not grow; a locker therefore checks, once it holds the lock, that the
 * name still leads to the file it locked, or two sandboxes could lock two different files of
 * the same name.
 */
static int allocate_host_id(const struct pol_policy *pol, int *out_dir, int *out_lock,
			    uint32_t *out_id)
{
	if (mkdir("/run/warden", 0700) < 0 && errno != EEXIST)
		return -errno;
	if (mkdir(HOST_ID_LOCK_DIR, 0700) < 0 && errno != EEXIST)
		return -errno;
	_cleanup_close_ int dir = open(HOST_ID_LOCK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
								 O_CLOEXEC);
	if (dir < 0)
		return -errno;
	sweep_stale_id_locks(dir);
	uint32_t start = 0;
	if (getrandom(&start, sizeof(start), 0) != sizeof(start))
		start = (uint32_t)getpid();
	for (uint32_t i = 0; i < pol->host_id_count; i++) {
		uint32_t id = pol->host_id_base + (start + i) % pol->host_id_count;
		char name[16];
		(void)snprintf(name, sizeof(name), "%u", id);
		_cleanup_close_ int fd = openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
						0600);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			if (errno != EWOULDBLOCK)
				return -errno;
			continue;
		}
		struct stat held, named;
		if (fstat(fd, &held) < 0)
			return -errno;
		if (fstatat(dir, name, &named, AT_SYMLINK_NOFOLLOW) < 0 ||
		    held.st_dev != named.st_dev || held.st_ino != named.st_ino)
			continue; /* unlinked by its previous holder meanwhile: try another id */
		*out_lock = TAKE_FD(fd);
		*out_dir = TAKE_FD(dir);
		*out_id = id;
		return 0;
	}
	return -EUSERS;
}

bool sup_in_init_userns(void)
{
	char buf[128] = "";
	_cleanup_fclose_ FILE *f = fopen("/proc/self/uid_map", "re");
	if (!f || !fgets(buf, sizeof(buf), f))
		return false;
	unsigned a, b, c;
	return sscanf(buf, "%u %u %u", &a, &b, &c) == 3 && a == 0 && b == 0 && c == UINT32_MAX;
}

bool sup_decide_privileged(bool init_userns)
{
	if (!init_userns)
		return false;
	capng_get_caps_process();
	return capng_have_capability(CAPNG_EFFECTIVE, CAP_SYS_ADMIN) &&
	       capng_have_capability(CAPNG_EFFECTIVE, CAP_SETUID) &&
	       capng_have_capability(CAPNG_EFFECTIVE, CAP_SETGID);
}

/*
 * The directory of workspace locks: /run/warden/ws when privileged; for a normal user
 * $XDG_RUNTIME_DIR/warden-ws, or /tmp/warden-ws-<uid>; created 0700 and refused unless it is
 * ours and private (nothing in a sandbox can reach it: it is not in any sandbox's view).
 */
static int lock_workspace(bool privileged, int workspace_fd, int *out_fd, bool *out_alone)
{
	char path[PATH_MAX];
	const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
	if (privileged) {
		if (mkdir("/run/warden", 0700) < 0 && errno != EEXIST)
			return -errno;
		(void)snprintf(path, sizeof(path), "/run/warden/ws");
	} else if (xdg && xdg[0] == '/') {
		(void)snprintf(path, sizeof(path), "%s/warden-ws", xdg);
	} else {
		(void)snprintf(path, sizeof(path), "/tmp/warden-ws-%u", (unsigned)getuid());
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	_cleanup_close_ int dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	struct stat st;
	if (fstat(dir, &st) < 0)
		return -errno;
	if (st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return sbx_workspace_lock(dir, workspace_fd, out_fd, out_alone);
}

static bool env_has(char **v, size_t n, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < n; i++)
		if (strncmp(v[i], name, len) == 0 && v[i][len] == '=')
			return true;
	return false;
}

/* Pushes each NAME=value of add whose name v does not hold yet. */
static int env_add(char ***v, size_t *n, char *const *add)
{
	int r = 0;
	for (size_t i = 0; add && add[i] && r >= 0; i++) {
		const char *eq = strchr(add[i], '=');
		char name[256];
		if (!eq || (size_t)(eq - add[i]) >= sizeof(name))
			return -EINVAL;
		memcpy(name, add[i], (size_t)(eq - add[i]));
		name[eq - add[i]] = '\0';
		if (!env_has(*v, *n, name))
			r = strv_push(v, n, add[i]);
	}
	return r;
}

/*
 * The sandbox environment: nothing from the host but what the policy names. force comes
 * first and so wins over the policy; extra comes after the policy and loses to it.
 */
static int build_env(const struct pol_policy *pol, char *const *force, char *const *extra,
		     bool no_pass, char ***out)
{
	char **v = NULL;
	size_t n = 0;
	char buf[PATH_MAX + 64];
	int r = env_add(&v, &n, force);
	for (size_t i = 0; i < pol->n_env_set && r >= 0; i++)
		r = env_add(&v, &n, (char *const[]){ pol->env_set[i], NULL });
	for (size_t i = 0; !no_pass && i < pol->n_env_pass && r >= 0; i++) {
		const char *val = secure_getenv(pol->env_pass[i]);
		if (!val || env_has(v, n, pol->env_pass[i]))
			continue;
		(void)snprintf(buf, sizeof(buf), "%s=%s", pol->env_pass[i], val);
		r = strv_push(&v, &n, buf);
	}
	if (r >= 0)
		r = env_add(&v, &n, extra);
	const char *defaults[][2] = {
		{ "PATH", "/usr/local/bin:/usr/bin:/bin" },
		{ "HOME", NULL },
		{ "USER", pol->user_name },
		{ "LOGNAME", pol->user_name },
		{ "TERM", "dumb" },
		{ "LANG", "C.UTF-8" },
	};
	for (size_t i = 0; i < ELEMENTSOF(defaults) && r >= 0; i++) {
		if (env_has(v, n, defaults[i][0]))
			continue;
		if (defaults[i][1])
			(void)snprintf(buf, sizeof(buf), "%s=%s", defaults[i][0], defaults[i][1]);
		else
			(void)snprintf(buf, sizeof(buf), "HOME=/home/%s", pol->user_name);
		r = strv_push(&v, &n, buf);
	}
	if (r < 0) {
		strv_free(v);
		return r;
	}
	*out = v;
	return 0;
}

static int build_worker_argv(char **cmd, char ***out)
{
	char **v = NULL;
	size_t n = 0;
	int r = strv_push(&v, &n, "warden-worker");
	for (size_t i = 0; cmd[i] && r >= 0; i++)
		r = strv_push(&v, &n, cmd[i]);
	if (r < 0) {
		strv_free(v);
		return r;
	}
	*out = v;
	return 0;
}

static int arm_timer(int tfd, uint64_t ms)
{
	struct itimerspec its = { 0 };
	its.it_value.tv_sec = (time_t)(ms / 1000);
	its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
	if (ms == 0)
		its.it_value.tv_nsec = 1; /* "now" rather than "disarm" */
	if (timerfd_settime(tfd, 0, &its, NULL) < 0)
		return -errno;
	return 0;
}

const char *const sup_phase_names[SUP_PHASE_N] = {
	[SUP_PHASE_PREPARE] = "prepare",     [SUP_PHASE_SANDBOX] = "sandbox",
	[SUP_PHASE_HANDSHAKE] = "handshake", [SUP_PHASE_ATTEST] = "attest",
	[SUP_PHASE_COMMAND] = "command",     [SUP_PHASE_TEARDOWN] = "teardown",
};

static uint64_t mono_us(void)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Ends phase p: charges it the time since the previous phase ended. */
static void phase_end(struct run_state *st, struct sup_run_result *res, enum sup_phase p)
{
	uint64_t now = mono_us();
	res->phase_us[p] += now - st->phase_t;
	st->phase_t = now;
}

uint64_t sup_mono_ms(void)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Keeps what fits of n bytes in sink k and counts the rest. */
static void sink_take(struct sup_sink *k, const char *buf, size_t n)
{
	k->total += n;
	uint64_t room = k->kept < k->cap ? k->cap - k->kept : 0;
	size_t keep = room < n ? (size_t)room : n;
	if (keep < n)
		k->truncated = true;
	if (!keep)
		return;
	if (k->fd >= 0) {
		if (k->error)
			return;
		int r = io_write_all(k->fd, buf, keep);
		if (r < 0) {
			k->error = r;
			return;
		}
	} else {
		char *grown = realloc(k->buf, (size_t)k->kept + keep + 1);
		if (!grown) {
			k->error = -ENOMEM;
			k->truncated = true;
			return;
		}
		k->buf = grown;
		memcpy(k->buf + k->kept, buf, keep);
		k->buf[k->kept + keep] = '\0';
	}
	k->kept += keep;
}

/*
 * Reads what is waiting in a capture pipe into its sink. At end of file (every writer in the
 * sandbox gone) the pipe is closed and *fd becomes -1, which poll() then ignores.
 */
static void drain_pipe(int *fd, struct sup_sink *k)
{
	char buf[65536];
	for (int rounds = 0; *fd >= 0 && rounds < 16; rounds++) {
		ssize_t n = read(*fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close_fd(fd);
			return;
		}
		sink_take(k, buf, (size_t)n);
	}
}

/*
 * After the sandbox is gone: reads a capture pipe to its end. A writer can only outlive the
 * sandbox if a descriptor was smuggled out (a shared network namespace lets a process pass
 * one to a host socket); then the stream is cut after a bounded wait and marked truncated.
 */
static void finish_pipe(int *fd, struct sup_sink *k)
{
	for (int waits = 0; *fd >= 0; waits++) {
		drain_pipe(fd, k);
		if (*fd < 0)
			return;
		struct pollfd p = { .fd = *fd, .events = POLLIN };
		if (waits == 20 || poll(&p, 1, 50) == 0) {
			k->truncated = true;
			close_fd(fd);
		}
	}
}

/*
 * Whether the kernel's OOM killer took the whole sandbox at once, the worker with the command
 * (cgroup v2's memory.oom.group): then the worker's end before its report is no violation.
 */
static bool group_oom_killed(const struct run_state *st)
{
	struct sbx_cg_stats s;
	return st->cg.version && sbx_cgroup_stats(&st->cg, &s) == 0 &&
	       sbx_cgroup_group_oom_killed(&s);
}

enum loop_end {
	END_WORKER_EXITED,   /* pidfd readable (with UNTIL_EXIT: the worker is reaped) */
	END_TIMEOUT,
	END_SIGNAL,
	END_VIOLATION,
	END_CHANNEL_CLOSED,
	END_STAGE,           /* the awaited channel state was reached */
	END_INTERNAL,        /* warden's own failure: st->internal says what */
};

/* event_loop's until after EXITED: nothing more may come but the worker's own exit. */
#define UNTIL_EXIT (-1)

/*
 * warden's own failure once the sandbox exists (a failing poll, no memory, a status file too
 * long for our buffers): exit 125 like any setup failure, never blamed on the sandbox, with
 * "internal error" and what failed in the detail.
 */
static enum loop_end internal(struct run_state *st, int err, const char *what)
{
	(void)fail_set(&st->internal, err, "internal error: %s", what);
	return END_INTERNAL;
}

static enum loop_end violated(struct run_state *st, const char *why)
{
	sup_channel_violation(&st->chan_state, -1, why);
	return END_VIOLATION;
}

/*
 * Waits until the channel reaches state `until`, a deadline passes (deadline_ms from the
 * monotonic clock, 0 = none, on top of the wall timerfd), a terminating signal arrives, or the
 * worker misbehaves. With until = UNTIL_EXIT (after EXITED) it waits for the worker to exit and
 * reaps it: any frame, even an empty datagram, is a violation, the end of the channel is
 * expected, silence past the deadline is a violation, and the wall-clock limit no longer counts
 * (the command ended within it).
 */
#ifdef WARDEN_TEST_HOOKS
/* Only in warden-test: warden's own fault while the sandbox lives, to prove how it ends. */
static bool test_hook_internal_fault(void)
{
	return secure_getenv("WARDEN_TEST_INTERNAL_FAULT") != NULL;
}
#else
static bool test_hook_internal_fault(void)
{
	return false;
}
#endif

static enum loop_end event_loop(struct run_state *st, int until, uint64_t deadline_ms,
				int *out_signal)
{
	const bool after_exit = until == UNTIL_EXIT;
	if (test_hook_internal_fault())
		return internal(st, -EIO, "a fault injected by the test");
	for (;;) {
		if (!after_exit && (int)st->chan_state.state >= until)
			return END_STAGE;
		int timeout = -1;
		if (deadline_ms) {
			uint64_t now = sup_mono_ms();
			if (now >= deadline_ms)
				return violated(st, after_exit ? "worker did not exit after EXITED"
							       : "worker silent past its deadline");
			timeout = (int)(deadline_ms - now);
		}
		struct pollfd pfd[6] = {
			{ .fd = st->sigfd, .events = POLLIN },
			{ .fd = after_exit ? -1 : st->timerfd, .events = POLLIN },
			{ .fd = st->chan_eof ? -1 : st->chan[0], .events = POLLIN },
			{ .fd = st->pidfd, .events = POLLIN },
			{ .fd = st->out_pipe[0], .events = POLLIN },
			{ .fd = st->err_pipe[0], .events = POLLIN },
		};
		int n = poll(pfd, 6, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return internal(st, -errno, "wait for the sandbox (poll)");
		if (n == 0)
			continue; /* the deadline, checked above */
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(st->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si) &&
			    si.ssi_signo != SIGCHLD) {
				*out_signal = (int)si.ssi_signo;
				return END_SIGNAL;
			}
		}
		if (pfd[1].revents & POLLIN)
			return END_TIMEOUT;
		if (pfd[4].revents)
			drain_pipe(&st->out_pipe[0], st->opts->out);
		if (pfd[5].revents)
			drain_pipe(&st->err_pipe[0], st->opts->err);
		if (pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) {
			int r = sup_channel_recv(&st->chan_state);
			if (r == -EAGAIN)
				continue;
			if (r == -ECONNRESET) {
				/* A datagram of no bytes is no frame, and the worker sends none. */
				if (!sup_channel_peer_closed(&st->chan_state))
					return violated(st, "empty datagram");
				st->chan_eof = true;
				if (after_exit)
					continue;
				if (st->chan_state.state == SUP_CHAN_DONE || group_oom_killed(st))
					return END_CHANNEL_CLOSED;
				return violated(st, "worker closed the channel early");
			}
			if (r < 0 && st->chan_state.violated)
				return END_VIOLATION;
			if (r < 0)
				return internal(st, r, "read from the worker channel");
			continue;
		}
		if (pfd[3].revents & POLLIN) {
			if (!after_exit)
				return END_WORKER_EXITED;
			int r = reap_worker(st);
			if (r < 0)
				return internal(st, r, "reap the worker");
			return END_WORKER_EXITED;
		}
	}
}

static void note_violation(struct sup_run_result *res, const struct sup_channel *ch)
{
	res->violated = true;
	res->violation_frame = ch->violation_frame;
	res->violation_type = ch->violation_type;
	(void)snprintf(res->violation_reason, sizeof(res->violation_reason), "%s",
		       ch->violation_reason);
	res->reason = SUP_REASON_PROTOCOL_VIOLATION;
	res->exit_code = SUP_EXIT_VIOLATION;
	(void)snprintf(res->error, sizeof(res->error), "protocol violation at frame %" PRIu64
		       " (%s): %s", ch->violation_frame,
		       ch->violation_type >= 0 ? sup_frame_name(ch->violation_type) : "undecoded",
		       ch->violation_reason);
	log_error("%s; the sandbox was killed", res->error);
}

/* Maps the command's end, the limits and the cgroup's counters to a reason and exit code. */
static void classify(struct sup_run_result *res)
{
	const struct wire_exited *e = &res->exited;
	switch ((enum wire_exit_how)e->how) {
	case WIRE_EXIT_NOT_FOUND:
		res->reason = SUP_REASON_EXITED;
		res->exit_code = SUP_EXIT_NOT_FOUND;
		res->status = SUP_EXIT_NOT_FOUND;
		(void)snprintf(res->error, sizeof(res->error), "%s: command not found",
			       strerror(e->code));
		return;
	case WIRE_EXIT_NOT_EXEC:
		res->reason = SUP_REASON_EXITED;
		res->exit_code = SUP_EXIT_NOT_EXEC;
		res->status = SUP_EXIT_NOT_EXEC;
		(void)snprintf(res->error, sizeof(res->error), "command could not be executed: %s",
			       strerror(e->code));
		return;
	case WIRE_EXIT_SIGNAL:
		res->reason = SUP_REASON_SIGNALED;
		res->signal = e->code;
		res->exit_code = 128 + e->code;
		if (e->code == SIGKILL && res->have_cg && res->cg.oom_kills > 0)
			res->reason = SUP_REASON_OOM;
		else if (e->code == SIGXCPU)
			res->reason = SUP_REASON_CPU_LIMIT;
		else if (e->code == SIGXFSZ)
			res->reason = SUP_REASON_SIGNALED;
		if (res->reason == SUP_REASON_SIGNALED && res->have_cg && res->cg.pids_max_events)
			res->reason = SUP_REASON_PIDS_LIMIT;
		return;
	case WIRE_EXIT_CODE:
		res->reason = SUP_REASON_EXITED;
		res->status = e->code;
		res->exit_code = e->code;
		if (e->code != 0 && res->have_cg && res->cg.pids_max_events)
			res->reason = SUP_REASON_PIDS_LIMIT;
		return;
	}
}

/* Lists every weakening the run actually has, for the record. */
static void note_weakenings(const struct pol_policy *pol, struct sup_run_result *res)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} unsafe_names[] = {
		{ POL_UNSAFE_IO_URING, "io_uring" },
		{ POL_UNSAFE_BIND_HOST_ROOT, "bind-host-root" },
		{ POL_UNSAFE_BIND_SOCKET, "bind-container-socket" },
		{ POL_UNSAFE_BIND_KERNEL_FS, "bind-kernel-fs" },
		{ POL_UNSAFE_WORKSPACE_ANYWHERE, "workspace-anywhere" },
	};
	static const char *const shared[POL_NS_N] = {
		[POL_NS_NET] = "share-net", [POL_NS_UTS] = "share-uts",
		[POL_NS_IPC] = "share-ipc", [POL_NS_CGROUP] = "share-cgroup",
	};
	size_t n = 0;
	if ((pol->unsafe & POL_UNSAFE_NO_CGROUP) && res->cg_version == 0)
		res->weakenings[n++] = "no-cgroup";
	for (size_t i = 0; i < ELEMENTSOF(unsafe_names); i++)
		if (pol->unsafe & unsafe_names[i].bit)
			res->weakenings[n++] = unsafe_names[i].name;
	for (int i = 0; i < POL_NS_N; i++)
		if (!pol->namespaces[i] && shared[i])
			res->weakenings[n++] = shared[i];
	if (pol->n_caps_keep)
		res->weakenings[n++] = "keep-capabilities";
	if (res->ws_owner_id)
		res->weakenings[n++] = "workspace-owner-id";
	res->weakenings[n] = NULL;
	size_t off = 0;
	for (size_t i = 0; i < pol->n_caps_keep && off < sizeof(res->caps_kept); i++) {
		int k = snprintf(res->caps_kept + off, sizeof(res->caps_kept) - off, "%s%s",
				 i ? "," : "", pol->caps_keep[i]);
		if (k < 0)
			break;
		off += (size_t)k;
	}
}

static int resolve_worker(char *out, size_t len)
{
#ifdef WARDEN_TEST_HOOKS
	/*
	 * Only in warden-test, the supervisor the test suite builds (never installed): the
	 * hostile-worker tests swap in a peer that attacks the channel.
	 */
	const char *test_worker = secure_getenv("WARDEN_TEST_WORKER");
	if (test_worker) {
		(void)snprintf(out, len, "%s", test_worker);
		return 0;
	}
#endif
	/* In the build tree, use the worker built beside us; installed, the libexec one. */
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if (strcmp(exe, WARDEN_BUILD_DIR) == 0) {
				(void)snprintf(out, len, "%s", WARDEN_BUILD_WORKER);
				return 0;
			}
		}
	}
	(void)snprintf(out, len, "%s/warden-worker", WARDEN_LIBEXECDIR);
	return 0;
}


/*
 * The workspace's filesystem cannot be idmapped (overlayfs, as a container's root is; NFS;
 * FUSE). Mode changes: a copy of it in the changeset, idmapped there, is the overlay's lower
 * layer, so the sandbox keeps its own host id. Mode direct: the sandbox user is mapped to the
 * workspace's owner for this run, recorded as "workspace-owner-id", and refused when that
 * owner is root, whom a sandbox never runs as. Sets st->workspace_tree_fd to the tree for the
 * sandbox, or leaves it -1 when there is none to give (the sandbox clones the workspace
 * itself). Returns 0 or -errno with f filled.
 */
static int workspace_without_idmap(struct run_state *st, struct sup_run_result *res,
				   struct fail *f)
{
	const struct stat *ws = &st->workspace_st;
	if (st->use_changes) {
		struct sup_copy_stats cs = { 0 };
		_cleanup_close_ int lower = sup_changeset_snapshot(&st->cs, st->workspace_fd, &cs, f);
		if (lower < 0)
			return lower;
		res->ws_copied = true;
		log_info("the workspace's filesystem (%s) cannot be idmapped: the sandbox sees a copy "
			 "of it (%" PRIu64 " files, folders and links, %" PRIu64 " bytes%s)", res->ws_fs, cs.entries,
			 cs.bytes, cs.skipped ? ", special files left out" : "");
		int r = sbx_idmap_workspace(lower, geteuid(), getegid(), res->host_uid,
					    res->host_gid);
		if (r < 0)
			return fail_refuse(f, r, "make an idmapped mount of the workspace's copy: %s",
					   strerror(-r));
		st->workspace_tree_fd = r;
		return 0;
	}
	if (ws->st_uid == 0 || ws->st_gid == 0)
		return fail_refuse(f, -EINVAL, "the workspace's filesystem (%s) cannot be idmapped "
				   "and the workspace belongs to root, whom a sandbox never runs as: "
				   "use --workspace-mode changes, or a workspace on ext4, xfs, btrfs "
				   "or tmpfs", res->ws_fs);
	res->host_uid = ws->st_uid;
	res->host_gid = ws->st_gid;
	res->ws_owner_id = true;
	log_info("the workspace's filesystem (%s) cannot be idmapped: the sandbox runs as its "
		 "owner, uid %u (recorded as workspace-owner-id)", res->ws_fs, (unsigned)ws->st_uid);
	return 0; /* no tree: the sandbox clones the workspace as it is */
}

/* --- prepare: everything the sandbox is built from, each step failing closed --------------- */

/* The record's folder first: a --record that cannot be written refuses the run. */
static int open_record(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	const char *dir = st->opts->record_dir;
	if (!dir)
		return 0;
	int r = sup_record_open(dir, &res->record_fd);
	res->have_record_fd = r >= 0;
	if (r < 0)
		return fail_set(f, r, "open the record folder '%s' (a directory, created if missing, "
				"with no symlink in its path)", dir);
	return 0;
}

/*
 * The policy (the caller's, or loaded), its digest, its bind sources on this host, the
 * command line's overrides and the limits in force.
 */
static int load_policy(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	const struct sup_run_opts *opts = st->opts;
	int r = 0;
	if (opts->policy) {
		st->pol = (struct pol_policy *)opts->policy;
		st->pol_borrowed = true;
	} else {
		struct pol_diag diag;
		_cleanup_free_ char *text = NULL;
		size_t text_len = 0;
		r = sup_load_policy(opts->policy_path, &st->pol, &text, &text_len, &diag);
		if (r == -EINVAL)
			return fail_refuse(f, r, "%s:%u:%u: %s", diag.file, diag.line, diag.column,
					   diag.message);
		if (r < 0 && diag.message[0])
			return fail_refuse(f, r, "%s", diag.message);
		if (r < 0)
			return fail_set(f, r, "load policy %s",
					opts->policy_path ? opts->policy_path : "(WARDEN_POLICY)");
	}
	/* The record names the file that was read: a NAME or WARDEN_POLICY resolved. */
	char file[PATH_MAX] = "<default>", why_not[256];
	if (!opts->policy && sup_policy_resolve(opts->policy_path, file, sizeof(file), why_not,
						sizeof(why_not)) == 0 && !strcmp(file, "default"))
		(void)snprintf(file, sizeof(file), "<default>");
	(void)snprintf(res->policy_source, sizeof(res->policy_source), "%s",
		       opts->policy ? (opts->policy_label ? opts->policy_label : "<task>") : file);
	/* The digest names the effective policy (after extends), in its normal form. */
	_cleanup_free_ char *normal = NULL;
	r = pol_to_json(st->pol, &normal);
	if (r < 0)
		return fail_set(f, r, "normalise the policy");
	sup_digest_hex(normal, strlen(normal), res->policy_digest);
	char why[512];
	r = sup_check_host_paths(st->pol, why, sizeof(why));
	if (r < 0)
		return fail_refuse(f, r, "%s: %s", res->policy_source, why);
	res->unsafe = st->pol->unsafe;
	if (!st->pol_borrowed && opts->ws_mode_set)
		st->pol->ws_mode = opts->ws_mode;
	if (!st->pol_borrowed && opts->apply_set)
		st->pol->ws_apply = opts->apply;
	st->wall_ms = opts->timeout_set ? opts->timeout_ms : st->pol->wall_ms;
	/* A limit that would not be enforced is refused, never silently ignored. */
	if (st->pol->output_bytes && !opts->out)
		return fail_refuse(f, -EINVAL, "limits.output is not enforced by 'warden run' (its "
				   "output passes through); set it to 0");
	return 0;
}

/* What warden is and may do here: never set-id; privileged or not, from its capabilities. */
static int probe_host(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	if (getuid() != geteuid() || getgid() != getegid())
		return fail_refuse(f, -EPERM, "warden must not be installed set-uid or set-gid");
	sbx_host_probe_cheap(&res->host);
	struct utsname u;
	(void)snprintf(res->kernel, sizeof(res->kernel), "%s",
		       uname(&u) == 0 ? u.release : "unknown");
	res->init_userns = sup_in_init_userns();
	res->privileged = sup_decide_privileged(res->init_userns);
	log_debug("policy %s (%s); %s mode", res->policy_source, res->policy_digest,
		  res->privileged ? "privileged" : "unprivileged");
	(void)st;
	return 0;
}

/*
 * The workspace: opened without following a symlink, and refused where it would hand the
 * sandbox a host tree, a home or a kernel interface (wspath.h), before anything is made in it.
 */
static int open_workspace(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	const char *ws = st->opts->workspace ? st->opts->workspace : ".";
	st->workspace_fd = sup_open_workspace(ws, st->pol->unsafe, f);
	if (st->workspace_fd < 0)
		return st->workspace_fd;
	if (fstat(st->workspace_fd, &st->workspace_st) < 0)
		return fail_set(f, -errno, "stat workspace '%s'", ws);
	char fdpath[64];
	(void)snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", st->workspace_fd);
	ssize_t n = readlink(fdpath, st->workspace_path, sizeof(st->workspace_path) - 1);
	if (n < 0 || (size_t)n >= sizeof(st->workspace_path) - 1 || st->workspace_path[0] != '/')
		return fail_set(f, n < 0 ? -errno : -ENAMETOOLONG, "resolve workspace '%s'", ws);
	st->workspace_path[n] = '\0';
	(void)res;
	return sup_check_workspace(st->workspace_fd, st->workspace_path, st->pol->unsafe, f);
}

/* The sandbox's host uid/gid: one of the policy's range, held while the run lives (as root). */
static int allocate_ids(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	if (!res->privileged) {
		res->host_uid = getuid();
		res->host_gid = getgid();
		return 0;
	}
	uint32_t id = 0;
	int r = allocate_host_id(st->pol, &st->id_dir_fd, &st->id_lock_fd, &id);
	if (r < 0)
		return fail_set(f, r, "allocate a host uid/gid from %u..%u", st->pol->host_id_base,
				st->pol->host_id_base + st->pol->host_id_count - 1);
	res->host_uid = res->host_gid = st->host_id = id;
	log_debug("host uid/gid %u for this sandbox", id);
	return 0;
}

/*
 * Where the sandbox's writes go: in mode changes, a changeset whose layer takes every write;
 * for a command whose writes vanish (workspace_overlay), a scratch layer, discarded at the
 * end; in mode direct, placeholders for missing protected paths.
 */
static int prepare_layer(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	const struct sup_run_opts *opts = st->opts;
	int r;
	sbx_fs_name(st->workspace_fd, res->ws_fs, sizeof(res->ws_fs));
	st->scratch = opts->workspace_overlay;
	st->use_changes = st->scratch ||
			  ((st->pol->ws_mode == POL_WS_CHANGES || opts->changes_workspace) &&
			   !opts->direct_workspace);
	res->changes_mode = st->use_changes && !st->scratch;
	if (st->scratch) {
		r = sup_changeset_create_scratch(res->privileged, res->host_uid, res->host_gid,
						 &st->cs, f);
		if (r < 0)
			return r;
		log_debug("scratch layer %s", st->cs.layer_path);
		return 0;
	}
	if (st->use_changes) {
		r = sup_changeset_create(res->privileged, st->workspace_fd, st->workspace_path,
					 res->host_uid, res->host_gid, st->pol, opts->argv, &st->cs,
					 f);
		if (r < 0)
			return r;
		(void)snprintf(res->changes_id, sizeof(res->changes_id), "%s", st->cs.id);
		log_debug("changeset %s in %s", st->cs.id, st->cs.layer_path);
		return 0;
	}
	bool alone = false;
	r = lock_workspace(res->privileged, st->workspace_fd, &st->ws_lock_fd, &alone);
	if (r < 0)
		return fail_set(f, r, "lock the workspace");
	r = sbx_placeholders_create(st->workspace_fd, st->pol, alone, &st->placeholders,
				    &st->n_placeholders);
	if (r < 0)
		return fail_set(f, r, "protect workspace paths");
	res->placeholders = st->n_placeholders;
	return 0;
}

/* filesystem.hide, expanded in the workspace; then, as root, the workspace's idmapped tree. */
static int map_workspace(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	int r = sup_hide_expand(st->workspace_fd, st->pol->hide, st->pol->n_hide, &st->hidden,
				&st->n_hidden);
	if (r < 0)
		return fail_set(f, r, "expand filesystem.hide in the workspace%s",
				r == -E2BIG ? " (too many entries to walk or to hide)" : "");
	res->hidden = st->n_hidden;
	if (!res->privileged)
		return 0;
	r = sbx_idmap_workspace(st->workspace_fd, st->workspace_st.st_uid,
				st->workspace_st.st_gid, res->host_uid, res->host_gid);
	if (r >= 0) {
		st->workspace_tree_fd = r;
		return 0;
	}
	if (r == -EINVAL)
		return workspace_without_idmap(st, res, f);
	return fail_set(f, r, "make an idmapped mount of the workspace");
}

/* The sandbox's cgroup (or none, where the policy opts out), opened for the child to join. */
static int make_cgroup(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	char cg_name[64];
	uint32_t rnd = 0;
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (uint32_t)sup_mono_ms();
	(void)snprintf(cg_name, sizeof(cg_name), "warden-%d-%08x", (int)getpid(), rnd);
	const char *what = "";
	int r = sbx_cgroup_create(&st->cg, cg_name, st->pol, &what);
	if (r < 0) {
		if (!(st->pol->unsafe & POL_UNSAFE_NO_CGROUP))
			return fail_set(f, r, "cgroup: %s (the policy may opt out with "
					"'unsafe: [no-cgroup]')", what);
		log_info("no cgroup (%s: %s); running without one as the policy allows",
			 what, strerror(-r));
	}
	res->cg_version = st->cg.version;
	note_weakenings(st->pol, res);
	if (!st->cg.version)
		return 0;
	log_debug("cgroup v%d %s", st->cg.version, st->cg.path[0]);
	r = sbx_cgroup_open_join(&st->cg, &st->cg_join);
	if (r < 0)
		return fail_set(f, r, "open the cgroup for the sandbox to join");
	return 0;
}

/* The kept capabilities' mask and the seccomp filter: compiled here once, installed in the child. */
static int compile_confinement(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	int r = sbx_caps_mask(st->pol->caps_keep, st->pol->n_caps_keep, &st->caps_mask);
	if (r < 0)
		return fail_set(f, r, "capabilities.keep names a capability this system lacks");
	struct fail why;
	r = sbx_seccomp_build_fast(st->pol, &sbx_seccomp_default_pre, &st->seccomp, &why);
	if (r < 0 && why.err == 0) /* the policy's fault: name the policy */
		return fail_refuse(f, r, "%s: %s", res->policy_source, why.what);
	if (r < 0)
		*f = why;
	return r;
}

/* The worker's executable (an O_PATH fd the child execs), its argv and the environment. */
static int prepare_worker(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	const struct sup_run_opts *opts = st->opts;
	char worker[PATH_MAX];
	(void)resolve_worker(worker, sizeof(worker));
	st->worker_fd = open(worker, O_PATH | O_CLOEXEC);
	if (st->worker_fd < 0)
		return fail_set(f, -errno, "open the worker '%s'", worker);
	int r = build_env(st->pol, opts->env_force, opts->env_extra, opts->no_env_pass, &st->envp);
	if (r >= 0)
		r = build_worker_argv(opts->argv, &st->worker_argv);
	if (r < 0)
		return fail_set(f, r, "build the sandbox environment");
	(void)res;
	return 0;
}

/* The channel and setup socket, and the pipes of captured streams. */
static int open_channels(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	const struct sup_run_opts *opts = st->opts;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, st->chan) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, st->sync) < 0)
		return fail_set(f, -errno, "create the worker channel");
	/*
	 * No frame carries a descriptor, and closing one the sandbox sent could block us (a
	 * lingering socket): the kernel refuses them at our end, from before the sandbox exists.
	 * Without SO_PASSRIGHTS the channel parks whatever arrives until the sandbox is dead.
	 */
	int r = sup_channel_refuse_fds(st->chan[0]);
	if (r == -ENOPROTOOPT)
		log_debug("this kernel cannot refuse descriptors on the channel (no SO_PASSRIGHTS): "
			  "any that arrive are kept, unclosed, until the sandbox is dead");
	else if (r < 0)
		return fail_set(f, r, "refuse descriptors on the worker channel");
	/* Captured streams: pipes we drain; only our read ends are non-blocking. */
	if (opts->out || opts->err) {
		st->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (st->devnull < 0)
			return fail_set(f, -errno, "open /dev/null");
	}
	if ((opts->out && (pipe2(st->out_pipe, O_CLOEXEC) < 0 ||
			   fcntl(st->out_pipe[0], F_SETFL, O_NONBLOCK) < 0)) ||
	    (opts->err && (pipe2(st->err_pipe, O_CLOEXEC) < 0 ||
			   fcntl(st->err_pipe[0], F_SETFL, O_NONBLOCK) < 0)))
		return fail_set(f, -errno, "create the output pipes");
	(void)res;
	return 0;
}

/* The event loop's sources: the stop signals (blocked, read from a signalfd) and the timer. */
static int open_event_sources(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	if (sigprocmask(SIG_BLOCK, &mask, &st->old_mask) < 0)
		return fail_set(f, -errno, "block signals");
	st->mask_set = true;
	st->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	st->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (st->sigfd < 0 || st->timerfd < 0)
		return fail_set(f, -errno, "create the event sources");
	(void)res;
	return 0;
}

/* Everything before the sandbox exists, in this order (the record first, the policy next). */
static enum stage prepare(struct run_state *st, struct sup_run_result *res)
{
	static run_step_fn *const steps[] = {
		open_record,   load_policy,	    probe_host,	    open_workspace,
		allocate_ids,  prepare_layer,	    map_workspace,  make_cgroup,
		compile_confinement, prepare_worker, open_channels, open_event_sources,
	};
	return run_steps(st, res, steps, ELEMENTSOF(steps));
}


/* --- spawn: the sandbox, from clone to a worker exec'd, in its cgroup --------------------- */

#ifdef WARDEN_TEST_HOOKS
/* Only in warden-test: the sandbox never enters its cgroup, to prove the check refuses. */
static bool test_hook_skip_cgroup(void)
{
	return secure_getenv("WARDEN_TEST_SKIP_CGROUP") != NULL;
}
#else
static bool test_hook_skip_cgroup(void)
{
	return false;
}
#endif

/* Clones the child into its namespaces (born in its cgroup where the kernel can). */
static int clone_sandbox(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	bool skip_cgroup = test_hook_skip_cgroup();
	st->cfg = (struct sbx_config){
		.pol = st->pol,
		.privileged = res->privileged,
		.host_uid = res->host_uid,
		.host_gid = res->host_gid,
		.workspace_fd = st->workspace_fd,
		.workspace_path = st->workspace_path,
		.workspace_tree_fd = st->workspace_tree_fd,
		.worker_fd = st->worker_fd,
		.channel_fd = st->chan[1],
		.sync_fd = st->sync[1],
		.cg_join = st->cg.version && !skip_cgroup ? &st->cg_join : NULL,
		.seccomp = &st->seccomp,
		.worker_argv = st->worker_argv,
		.envp = st->envp,
		.old_mask = &st->old_mask,
		.caps_keep = st->caps_mask,
		.hidden = st->hidden,
		.n_hidden = st->n_hidden,
		.placeholders = st->placeholders,
		.n_placeholders = st->n_placeholders,
		.stdio_fds = { st->devnull, st->out_pipe[1], st->err_pipe[1] },
		.reference_path = st->opts->reference,
		.changes_layer_fd = st->use_changes ? st->cs.layer_fd : -1,
		.changes_layer_path = st->cs.layer_path,
	};
	bool joined = false;
	int r = sbx_spawn(&st->cfg, &st->pid, &st->pidfd, &joined);
	sbx_cgroup_close_join(&st->cg_join);
	if (r < 0)
		return fail_set(f, r, "create the sandbox (clone3 into new namespaces%s)",
				st->cg.version == 2 ? " and its cgroup" : "");
	/* The child's ends are the child's now. */
	close_fd(&st->chan[1]);
	close_fd(&st->sync[1]);
	close_fd(&st->out_pipe[1]);
	close_fd(&st->err_pipe[1]);
	close_fd(&st->devnull);
	st->joined = joined;
	return 0;
}

/*
 * The child's id maps and (when it could not be born there) its cgroup; then it may go on,
 * and its setup either execs the worker or reports the step that failed. However it got
 * there, the kernel must list the worker in every hierarchy of its cgroup.
 */
static int release_sandbox(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	int r = sbx_write_id_maps(&st->cfg, st->pid);
	if (r < 0)
		return fail_set(f, r, "write the uid/gid maps");
	if (st->cg.version && !st->joined && !test_hook_skip_cgroup()) {
		r = sbx_cgroup_attach(&st->cg, st->pid);
		if (r < 0)
			return fail_set(f, r, "move the sandbox into its cgroup");
	}
	r = sbx_release_child(st->sync[0], f);
	if (r < 0)
		return r;
	close_fd(&st->sync[0]);
	if (st->cg.version) {
		r = sbx_cgroup_holds(&st->cg, st->pid);
		if (r <= 0)
			return fail_set(f, r < 0 ? r : -ESRCH, "the sandbox is not in its cgroup%s",
					r < 0 ? " (could not read cgroup.procs)" : "");
	}
	phase_end(st, res, SUP_PHASE_SANDBOX);
	log_debug("sandbox ready: worker is host pid %d", (int)st->pid);
	return 0;
}

/* The wall clock starts now (everything after is the sandbox's time), and the channel. */
static int start_channel(struct run_state *st, struct sup_run_result *res, struct fail *f)
{
	int r;
	if (st->wall_ms) {
		r = arm_timer(st->timerfd, st->wall_ms);
		if (r < 0)
			return fail_set(f, r, "arm the wall-clock timer");
	}
	r = sup_channel_start(&st->chan_state, st->chan[0]);
	if (r < 0)
		return fail_set(f, r, "start the worker channel");
	st->chan_state.peer_pid = (int)st->pid;
	(void)res;
	return 0;
}

static enum stage spawn(struct run_state *st, struct sup_run_result *res)
{
	static run_step_fn *const steps[] = { clone_sandbox, release_sandbox, start_channel };
	return run_steps(st, res, steps, ELEMENTSOF(steps));
}

/* --- supervise: handshake, attestation, then the command (or the audit's probes) ----------- */

static enum stage finish_signal(struct sup_run_result *res, int sig)
{
	res->reason = SUP_REASON_SIGNALED;
	res->signal = sig;
	res->exit_code = 128 + sig;
	(void)snprintf(res->error, sizeof(res->error), "warden received signal %d (%s); the "
		       "sandbox was killed", sig, strsignal(sig));
	log_error("%s", res->error);
	return STAGE_ENDED;
}

static enum stage finish_oom(struct sup_run_result *res)
{
	res->reason = SUP_REASON_OOM;
	res->signal = SIGKILL;
	res->exit_code = 128 + SIGKILL;
	(void)snprintf(res->error, sizeof(res->error), "the memory limit was reached; the OOM "
		       "killer killed the whole sandbox (memory.oom.group)");
	log_info("%s", res->error);
	return STAGE_ENDED;
}

static enum stage finish_timeout(struct sup_run_result *res, uint64_t ms)
{
	res->reason = SUP_REASON_WALL_TIMEOUT;
	res->exit_code = SUP_EXIT_TIMEOUT;
	res->signal = SIGKILL;
	(void)snprintf(res->error, sizeof(res->error), "wall-clock limit of %" PRIu64
		       " ms reached; the sandbox was killed", ms);
	log_info("%s", res->error);
	return STAGE_ENDED;
}

/*
 * After EXITED: the worker must exit, with status 0, within WORKER_EXIT_TIMEOUT_MS, and say
 * nothing more. Returns END_WORKER_EXITED when it did, else how the wait ended (a violation
 * recorded in the channel).
 */
static enum loop_end await_worker_exit(struct run_state *st, int *sig)
{
	enum loop_end end = event_loop(st, UNTIL_EXIT, sup_mono_ms() + WORKER_EXIT_TIMEOUT_MS, sig);
	if (end != END_WORKER_EXITED || !st->worker_status_known)
		return end;
	/*
	 * Only SIGKILL is the kernel's or ours alone (the OOM killer, the cgroup's kill): nothing
	 * in its pid namespace can send it to pid 1. Any other signal the worker can bring on
	 * itself (a fault, a refused call under a kill-mode filter), so it counts as an exit it
	 * chose, and only status 0 is a clean one.
	 */
	bool killed = st->worker_si.si_code == CLD_KILLED && st->worker_si.si_status == SIGKILL;
	if (!killed && (st->worker_si.si_code != CLD_EXITED || st->worker_si.si_status != 0)) {
		char why[64];
		if (st->worker_si.si_code == CLD_EXITED)
			(void)snprintf(why, sizeof(why), "worker exited with status %d after EXITED",
				       st->worker_si.si_status);
		else
			(void)snprintf(why, sizeof(why), "worker died of signal %d after EXITED",
				       st->worker_si.si_status);
		return violated(st, why);
	}
	return end;
}

/*
 * How a wait that did not reach the state it waited for ends the run (sig: the signal an
 * END_SIGNAL received). The worker dying or closing the channel before it reported is a
 * violation, unless the OOM killer took it with the command.
 */
static enum stage loop_ended(struct run_state *st, struct sup_run_result *res, enum loop_end end,
			     int sig)
{
	switch (end) {
	case END_SIGNAL:
		return finish_signal(res, sig);
	case END_TIMEOUT:
		return finish_timeout(res, st->wall_ms);
	case END_VIOLATION:
		note_violation(res, &st->chan_state);
		return STAGE_ENDED;
	case END_INTERNAL:
		(void)stage_failed(res, &st->internal);
		res->reason = SUP_REASON_INTERNAL_ERROR;
		return STAGE_FAILED;
	case END_WORKER_EXITED:
	case END_CHANNEL_CLOSED:
	case END_STAGE:
		break;
	}
	if (group_oom_killed(st))
		return finish_oom(res);
	sup_channel_violation(&st->chan_state, -1, "worker ended before reporting the command's end");
	note_violation(res, &st->chan_state);
	return STAGE_ENDED;
}

/* EXITED arrived: the worker exits next, taking the namespace with it. */
static enum stage await_end(struct run_state *st, struct sup_run_result *res)
{
	int sig = 0;
	enum loop_end end = await_worker_exit(st, &sig);
	if (end != END_WORKER_EXITED)
		return loop_ended(st, res, end, sig);
	res->have_exited = true;
	res->exited = st->chan_state.exited;
	return STAGE_EXITED;
}

/* Handshake: HELLO within the deadline, then the kernel's word on the worker. */
static enum stage attest(struct run_state *st, struct sup_run_result *res)
{
	int sig = 0;
	enum loop_end end = event_loop(st, SUP_CHAN_ATTESTED,
				       sup_mono_ms() + HANDSHAKE_TIMEOUT_MS, &sig);
	phase_end(st, res, SUP_PHASE_HANDSHAKE);
	if (end != END_STAGE)
		return loop_ended(st, res, end, sig);
	struct sup_expect want = {
		.init_userns = res->init_userns,
		.host_uid = res->host_uid,
		.host_gid = res->host_gid,
		.inside_uid = st->pol->uid,
		.inside_gid = st->pol->gid,
		.caps = st->caps_mask,
	};
	/* sup_ns_names order: user pid mnt net uts ipc cgroup, as enum pol_ns */
	for (int i = 0; i < SUP_N_NS; i++)
		want.ns_new[i] = st->pol->namespaces[i];
	int r = sup_check_identity(st->pid, &want, &st->chan_state.claimed, &res->identity);
	phase_end(st, res, SUP_PHASE_ATTEST);
	if (r == -E2BIG || r == -ENOMEM) {
		(void)stage_fail(res, r, "internal error: %s",
				 r == -E2BIG ? "the worker's /proc status is longer than warden reads"
					     : "read the worker's identity");
		res->reason = SUP_REASON_INTERNAL_ERROR;
		return STAGE_FAILED;
	}
	if (r < 0) {
		res->reason = SUP_REASON_ATTESTATION_FAILED;
		res->exit_code = SUP_EXIT_VIOLATION;
		if (r == -EPERM)
			(void)snprintf(res->error, sizeof(res->error), "attestation failed: %s",
				       res->identity.failure);
		else
			(void)snprintf(res->error, sizeof(res->error),
				       "attestation failed: cannot read the worker's identity: %s",
				       strerror(-r));
		log_error("%s; the sandbox was killed", res->error);
		return STAGE_ENDED;
	}
	log_debug("attestation held: uid %u, no capabilities, no_new_privs, %u seccomp filter(s), "
		  "7 namespaces separate", res->identity.kernel.uid[0],
		  res->identity.kernel.seccomp_filters);
	return STAGE_NEXT;
}

/* warden audit: the outside view first, while the worker waits, then the probes inside. */
static enum stage run_audit(struct run_state *st, struct sup_run_result *res)
{
	int sig = 0;
	int r = sup_audit_listen(st->audit);
	if (r < 0)
		return stage_fail(res, r, "open the audit's host loopback listener");
	sup_audit_outside(st->audit, st->pol, st->pid, &st->cg, res);
	r = sup_channel_send_audit(&st->chan_state, st->audit->port);
	if (r < 0)
		return stage_fail(res, r, "send AUDIT to the worker");
	enum loop_end end = event_loop(st, SUP_CHAN_DONE, sup_mono_ms() + AUDIT_TIMEOUT_MS, &sig);
	if (end != END_STAGE || st->chan_state.state != SUP_CHAN_DONE)
		return loop_ended(st, res, end, sig);
	sup_audit_inside(st->audit, st->pol, st->chan_state.probes, st->chan_state.n_probes);
	return await_end(st, res);
}

/* GO, then READY within the handshake's deadline, then the command's own run until EXITED. */
static enum stage run_command(struct run_state *st, struct sup_run_result *res)
{
	int sig = 0;
	/*
	 * Nothing in the sandbox has run yet, so nothing is copied up: a host change from here
	 * on is one the changeset may conflict with (supervisor/apply.h, base_sec).
	 */
	if (st->use_changes)
		(void)clock_gettime(CLOCK_REALTIME_COARSE, &st->cs.base);
	int r = sup_channel_send_go(&st->chan_state);
	if (r < 0)
		return stage_fail(res, r, "send GO to the worker");
	/* READY has a deadline as the handshake has; the command's own run only the wall's. */
	enum loop_end end = event_loop(st, SUP_CHAN_READY, sup_mono_ms() + HANDSHAKE_TIMEOUT_MS,
				       &sig);
	if (end == END_STAGE)
		end = event_loop(st, SUP_CHAN_DONE, 0, &sig);
	if (end == END_STAGE && st->chan_state.state == SUP_CHAN_FAILED)
		return stage_fail(res, -(int)st->chan_state.error_code,
				  "the worker could not start the command: '%s'",
				  st->chan_state.error_what);
	if (end != END_STAGE)
		return loop_ended(st, res, end, sig);
	return await_end(st, res);
}

static enum stage supervise(struct run_state *st, struct sup_run_result *res)
{
	enum stage s = attest(st, res);
	if (s != STAGE_NEXT)
		return s;
	return st->audit ? run_audit(st, res) : run_command(st, res);
}

/* The kernel's word on the worker's own end, and what it claimed about the command. */
static void note_worker_end(const struct run_state *st, struct sup_run_result *res)
{
	res->worker_exit_known = st->worker_status_known;
	if (st->worker_status_known) {
		const siginfo_t *si = &st->worker_si;
		bool exited = si->si_code == CLD_EXITED;
		res->worker_exit_status = exited ? si->si_status : -1;
		res->worker_exit_signal = exited ? 0 : si->si_status;
	}
	res->have_claim = st->chan_state.have_exited;
	if (res->have_claim)
		res->claim = st->chan_state.exited;
}

void sup_run_result_done(struct sup_run_result *res)
{
	sup_chg_report_done(&res->changes);
	if (res->have_record_fd)
		close_fd(&res->record_fd);
	res->have_record_fd = false;
}


/*
 * Tears the run down whatever stage s it reached: kill, verify the cgroup empty, read its
 * counters; classify the command's end (STAGE_EXITED); read the captured streams to their
 * end; finish the changeset (applying its safe part where asked); release everything. Returns
 * the exit code.
 */
static int teardown(struct run_state *st, struct sup_run_result *res, enum stage s)
{
	const struct sup_run_opts *opts = st->opts;
	kill_and_reap(st);
	if (st->cg.version) {
		int r = sbx_cgroup_kill(&st->cg);
		res->cg_emptied = r == 0;
		res->have_cg = sbx_cgroup_stats(&st->cg, &res->cg) == 0;
	}
	/* Nothing of the sandbox runs now: descriptors it sent may be closed without waiting. */
	sup_channel_release_fds(&st->chan_state);
	note_worker_end(st, res);
	/* Classified only now, once the cgroup's counters are read. */
	if (s == STAGE_EXITED)
		classify(res);
	int code = res->exit_code;
	/* Every writer in the sandbox is gone: what is left in the pipes is the end. */
	finish_pipe(&st->out_pipe[0], opts->out);
	finish_pipe(&st->err_pipe[0], opts->err);
	/* And in the changeset's layer: apply its safe part, keep the rest. */
	if (st->cs.dir_fd >= 0 && st->scratch) {
		int r = sup_changeset_discard(&st->cs, res->privileged);
		if (r < 0)
			log_errno(r, "remove the scratch layer %s", st->cs.layer_path);
	} else if (st->cs.dir_fd >= 0) {
		bool apply = st->pol->ws_apply == POL_WS_APPLY_SAFE || opts->changes_workspace;
		int r = sup_changeset_finish(&st->cs, res->privileged, st->workspace_fd, apply,
					     st->pol, &res->changes, &res->changes_kept);
		res->changes_applied = apply && r >= 0;
		if (r < 0) {
			res->changes_error = r;
			res->changes_kept = true;
			log_errno(r, "changeset %s could not be %s; it stays pending (warden diff %s)",
				  st->cs.id, apply ? "applied" : "kept", st->cs.id);
			if (code == 0)
				code = SUP_EXIT_SETUP;
		}
	}
	run_state_done(st, res);
	return code;
}

int sup_run(const struct sup_run_opts *opts, struct sup_run_result *res)
{
	struct run_state st;
	memset(res, 0, sizeof(*res));
	res->violation_type = -1;
	(void)clock_gettime(CLOCK_REALTIME, &res->started_real);
	uint64_t t0 = sup_mono_ms();
	run_state_init(&st);
	st.opts = opts;
	st.audit = opts->audit;
	st.phase_t = mono_us();

	enum stage s = prepare(&st, res);
	phase_end(&st, res, SUP_PHASE_PREPARE);
	if (s == STAGE_NEXT)
		s = spawn(&st, res);
	if (s == STAGE_NEXT)
		s = supervise(&st, res);
	phase_end(&st, res, SUP_PHASE_COMMAND);

	int code = teardown(&st, res, s);
	phase_end(&st, res, SUP_PHASE_TEARDOWN);
	for (int i = 0; i < SUP_PHASE_N; i++)
		log_debug("phase %-9s %6" PRIu64 " us", sup_phase_names[i], res->phase_us[i]);
	(void)clock_gettime(CLOCK_REALTIME, &res->ended_real);
	res->duration_ms = sup_mono_ms() - t0;
	res->exit_code = code;
	return code;
}
