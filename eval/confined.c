/* SPDX-License-Identifier: MIT */
/*
 * confined: the children that read what a sandbox wrote (see confined.h).
 *
 * The parent's side is dull on purpose: open files, fork, read a bounded answer, reap, and
 * hand the bytes to a strict decoder (eval/verdict.c). Everything that interprets hostile
 * bytes runs in the child, after sbx_judge_confine().
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Reaps pid into *status. Returns 0 or -errno. */
static int child_reap(pid_t *pid, int *status)
{
	while (waitpid(*pid, status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	*pid = 0;
	return 0;
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

int ev_confined_run(const struct ev_confined *c, const char *what, int (*fn)(void *arg, int out_fd),
		    void *arg, struct ev_confined_out *out, char *why, size_t why_len)
{
	if (!c || !fn || !out || (c->ids.privileged && (c->ids.uid == 0 || c->ids.gid == 0)) ||
	    c->max_out == 0 || c->max_out > EV_FOLDER_MAX_ANSWER)
		return fail(-EINVAL, why, why_len, "%s: invalid arguments", what);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return fail(-errno, why, why_len, "%s: pipe: %s", what, strerror(errno));
	_cleanup_close_ int rd = p[0];
	_cleanup_close_ int wr = p[1];

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
	if (c->on_spawn)
		c->on_spawn(c->on_spawn_ctx, pid);

	/* io_read_fd keeps at most max_out + 1 bytes and says -EFBIG when there is more. */
	int n = io_read_fd(rd, (char *)buf, c->max_out + 2 <= (size_t)INT32_MAX ? c->max_out + 2 : 0);
	if (n == -EFBIG || (n >= 0 && (size_t)n > c->max_out))
		return fail(-EMSGSIZE, why, why_len, "%s answered more than %zu bytes: killed", what,
			    c->max_out);
	if (n < 0)
		return fail(n, why, why_len, "%s: reading its answer: %s", what, strerror(-n));
	int status = 0;
	r = child_reap(&child, &status);
	if (r < 0)
		return fail(r, why, why_len, "%s: waitpid: %s", what, strerror(-r));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char end[128];
		describe_end(status, end, sizeof(end));
		return fail(-ECHILD, why, why_len, "%s %s", what, end);
	}
	out->len = (size_t)n;
	out->buf = n ? TAKE_PTR(buf) : NULL;
	return 0;
}

/* ---- the static criteria judge ---- */

struct judge {
	const struct pol_task *task;
	const size_t *idx;                  /* the static criteria's indexes */
	const struct sup_crit_input *in;    /* what the parent found for each */
	size_t n;
	struct wire_mac *mac;
};

/* In the confined child: one RESULT frame per static criterion, in order. */
static int judge_child(void *arg, int out_fd)
{
	const struct judge *j = arg;
	uint8_t frame[EV_VERDICT_FRAME_MAX];
	for (size_t k = 0; k < j->n; k++) {
		struct sup_crit_result res;
		sup_crit_judge_static(&j->task->criteria[j->idx[k]], &j->in[k], &res);
		int len = ev_verdict_seal(j->mac, k, j->idx[k], &res, frame, sizeof(frame));
		if (len < 0)
			return len;
		int r = io_write_all(out_fd, frame, (size_t)len);
		if (r < 0)
			return r;
	}
	return 0;
}

static void all_errors(const struct pol_task *task, const size_t *idx, size_t n,
		       struct sup_crit_result *results, const char *why)
{
	for (size_t k = 0; k < n; k++) {
		struct sup_crit_result *r = &results[idx[k]];
		memset(r, 0, sizeof(*r));
		r->error = true;
		(void)snprintf(r->details, sizeof(r->details), "'%s': not judged: %s",
			       task->criteria[idx[k]].path ? task->criteria[idx[k]].path : "", why);
		for (char *p = r->details; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
				*p = '?';
	}
}

void ev_judge_static(const struct ev_confined_ids *ids, const struct pol_task *task, int ws,
		     struct sup_crit_result results[TASK_MAX_CRITERIA])
{
	size_t idx[TASK_MAX_CRITERIA], n = 0;
	struct sup_crit_input in[TASK_MAX_CRITERIA];
	int fds[TASK_MAX_CRITERIA];
	size_t n_fds = 0;
	char why[512] = "";

	for (size_t i = 0; i < task->n_criteria && i < TASK_MAX_CRITERIA; i++)
		if (task->criteria[i].check != POL_TASK_COMMAND)
			idx[n++] = i;
	if (n == 0)
		return;
	for (size_t k = 0; k < n; k++) {
		sup_crit_input_init(&in[k]);
		sup_crit_open(ws, &task->criteria[idx[k]], &in[k]);
		if (in[k].fd >= 0)
			fds[n_fds++] = in[k].fd;
	}

	/* A key for this judge alone: its frames cannot pass for another's. */
	uint8_t key[WIRE_KEY_LEN];
	int r = io_fill_random(key, sizeof(key));
	_cleanup_(wire_mac_freep) struct wire_mac *mac = r < 0 ? NULL : wire_mac_new(key);
	explicit_bzero(key, sizeof(key));
	struct ev_confined_out out = { 0 };
	if (!mac) {
		(void)snprintf(why, sizeof(why), "the criteria judge has no key: %s",
			       strerror(r < 0 ? -r : ENOMEM));
		r = -EIO;
	} else {
		struct judge j = { .task = task, .idx = idx, .in = in, .n = n, .mac = mac };
		struct ev_confined c = {
			.ids = *ids,
			.read_fds = fds,
			.n_read_fds = n_fds,
			.max_out = n * EV_VERDICT_FRAME_MAX,
		};
		r = ev_confined_run(&c, "the criteria judge", judge_child, &j, &out, why,
				    sizeof(why));
	}
	for (size_t k = 0; k < n; k++)
		sup_crit_input_done(&in[k]);

	struct ev_verdict v[TASK_MAX_CRITERIA];
	char dwhy[400];
	if (r >= 0 && ev_verdict_open_all(mac, out.buf, out.len, idx, n, v, dwhy, sizeof(dwhy)) < 0) {
		(void)snprintf(why, sizeof(why), "the criteria judge broke its protocol: %s", dwhy);
		r = -EBADMSG;
	}
	free(out.buf);
	if (r < 0) {
		all_errors(task, idx, n, results, why);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		const struct pol_task_criterion *c = &task->criteria[idx[k]];
		struct sup_crit_result *res = &results[idx[k]];
		memset(res, 0, sizeof(*res));
		res->evaluated = !v[k].error;
		res->error = v[k].error;
		res->score_milli = v[k].score_milli;
		/* Whether it passed is the supervisor's reading of the score, never the child's. */
		res->passed = !v[k].error && v[k].score_milli >= c->pass_threshold_milli;
		memcpy(res->details, v[k].details, sizeof(res->details));
	}
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
