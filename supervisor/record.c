/* SPDX-License-Identifier: MIT */
/*
 * Run records: JSON (cJSON), written atomically.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "io-util.h"
#include "config.h"
#include "policy.h"
#include "run.h"
#include "str-util.h"
#include "supervisor.h"

DEFINE_CLEANUP(cJSON *, cJSON_Delete)

#define RECORD_SCHEMA_VERSION 1

void sup_rfc3339(const struct timespec *ts, bool millis, char out[40])
{
	struct tm tm;
	time_t t = ts->tv_sec;
	if (!gmtime_r(&t, &tm)) {
		(void)snprintf(out, 40, "1970-01-01T00:00:00Z");
		return;
	}
	char base[24];
	if (strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		base[0] = '\0';
	if (millis)
		(void)snprintf(out, 40, "%s.%03dZ", base, (int)((ts->tv_nsec / 1000000L) % 1000));
	else
		(void)snprintf(out, 40, "%sZ", base);
}

static void cap_hex(uint64_t v, char out[17])
{
	for (int i = 15; i >= 0; i--) {
		out[i] = hex_digit((unsigned)(v & 15u));
		v >>= 4;
	}
	out[16] = '\0';
}

bool sup_json_add_num(cJSON *o, const char *k, double v)
{
	return cJSON_AddNumberToObject(o, k, v) != NULL;
}

static bool add_num(cJSON *o, const char *k, double v)
{
	return sup_json_add_num(o, k, v);
}

/*
 * A 64-bit counter, written as its exact decimal integer: cJSON keeps numbers as doubles,
 * which hold integers exactly only up to 2^53, and a claim from the worker may be anything.
 */
static bool add_u64(cJSON *o, const char *k, uint64_t v)
{
	char digits[24];
	(void)snprintf(digits, sizeof(digits), "%" PRIu64, v);
	return cJSON_AddRawToObject(o, k, digits) != NULL;
}

static const char *exit_how_name(uint8_t how)
{
	switch (how) {
	case WIRE_EXIT_CODE:
		return "exited";
	case WIRE_EXIT_SIGNAL:
		return "signaled";
	case WIRE_EXIT_NOT_FOUND:
		return "not-found";
	case WIRE_EXIT_NOT_EXEC:
		return "not-executable";
	default:
		return "unknown";
	}
}

/*
 * The worker: how it ended, as the kernel reported it to waitid on its pidfd (null when it
 * was never reaped), and what it claimed about the command in EXITED (null when it sent none),
 * which nothing outside the sandbox can confirm.
 */
static bool worker_json(cJSON *root, const struct sup_run_result *res)
{
	cJSON *w = cJSON_AddObjectToObject(root, "worker");
	if (!w)
		return false;
	bool ok = true;
	if (res->worker_exit_known && res->worker_exit_status >= 0)
		ok = add_num(w, "exit_status", res->worker_exit_status) &&
		     cJSON_AddNullToObject(w, "exit_signal");
	else if (res->worker_exit_known)
		ok = cJSON_AddNullToObject(w, "exit_status") &&
		     add_num(w, "exit_signal", res->worker_exit_signal);
	else
		ok = cJSON_AddNullToObject(w, "exit_status") &&
		     cJSON_AddNullToObject(w, "exit_signal");
	if (!ok)
		return false;
	if (!res->have_claim)
		return cJSON_AddNullToObject(w, "claimed") != NULL;
	const struct wire_exited *c = &res->claim;
	cJSON *o = cJSON_AddObjectToObject(w, "claimed");
	return o && cJSON_AddStringToObject(o, "how", exit_how_name(c->how)) &&
	       add_num(o, "code", c->code) && add_u64(o, "utime_usec", c->utime_usec) &&
	       add_u64(o, "stime_usec", c->stime_usec) && add_u64(o, "maxrss_kib", c->maxrss_kib);
}

/* Records at most this many changeset entries; the changeset itself keeps every one. */
#define RECORD_MAX_CHANGES 10000u

/* The changeset: its id, what became of it, and each entry with the reason. */
static bool changes_json(cJSON *ws, const struct sup_run_result *res)
{
	const struct sup_chg_report *c = &res->changes;
	cJSON *list;
	if (!cJSON_AddStringToObject(ws, "changeset", res->changes_id) ||
	    !cJSON_AddBoolToObject(ws, "applied", res->changes_applied) ||
	    !cJSON_AddBoolToObject(ws, "pending", res->changes_kept) ||
	    !add_u64(ws, "n_applied", c->n_applied) ||
	    !add_u64(ws, "n_held", c->n_held) ||
	    !add_u64(ws, "n_refused", c->n_refused) ||
	    !cJSON_AddBoolToObject(ws, "entries_truncated", c->n > RECORD_MAX_CHANGES) ||
	    !(list = cJSON_AddArrayToObject(ws, "entries")))
		return false;
	if (res->changes_error &&
	    !cJSON_AddStringToObject(ws, "error", strerror(-res->changes_error)))
		return false;
	for (size_t i = 0; i < c->n && i < RECORD_MAX_CHANGES; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(list, o) ||
		    !cJSON_AddStringToObject(o, "path", c->v[i].path) ||
		    !cJSON_AddStringToObject(o, "kind", sup_chg_kind_name(c->v[i].kind)) ||
		    !cJSON_AddStringToObject(o, "verdict", sup_chg_verdict_name(c->v[i].verdict)) ||
		    (c->v[i].reason && !cJSON_AddStringToObject(o, "reason", c->v[i].reason)))
			return false;
	}
	return true;
}

cJSON *sup_identity_json(const struct sup_identity *id)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	const struct wire_identity *k = &id->kernel;
	char hex[17];
	bool ok = cJSON_AddBoolToObject(o, "checked", id->checked) &&
		  cJSON_AddBoolToObject(o, "held", id->held);
	if (id->failure[0])
		ok = ok && cJSON_AddStringToObject(o, "failure", id->failure);
	ok = ok && add_num(o, "uid", k->uid[0]) && add_num(o, "gid", k->gid[0]);
	const struct {
		const char *name;
		uint64_t v;
	} caps[] = { { "CapInh", k->cap_inh }, { "CapPrm", k->cap_prm }, { "CapEff", k->cap_eff },
		     { "CapBnd", k->cap_bnd }, { "CapAmb", k->cap_amb } };
	for (size_t i = 0; i < ELEMENTSOF(caps) && ok; i++) {
		cap_hex(caps[i].v, hex);
		ok = cJSON_AddStringToObject(o, caps[i].name, hex) != NULL;
	}
	ok = ok && add_num(o, "NoNewPrivs", k->no_new_privs) && add_num(o, "Seccomp", k->seccomp) &&
	     add_num(o, "Seccomp_filters", k->seccomp_filters) &&
	     add_num(o, "nspid_depth", id->nspid_depth);
	cJSON *ns = ok ? cJSON_AddObjectToObject(o, "namespaces") : NULL;
	for (int i = 0; i < SUP_N_NS && ns; i++) {
		cJSON *n = cJSON_AddObjectToObject(ns, sup_ns_names[i]);
		if (!n || !add_u64(n, "supervisor", id->ns_self[i]) ||
		    !add_u64(n, "sandbox", id->ns_worker[i]) ||
		    !cJSON_AddBoolToObject(n, "separate", id->ns_self[i] != id->ns_worker[i]))
			ns = NULL;
	}
	if (!ok || !ns) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *record_json(const struct sup_run_opts *opts, const struct sup_run_result *res)
{
	_cleanup_(cJSON_Deletep) cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	char ts[40];
	bool ok = add_num(root, "schema_version", RECORD_SCHEMA_VERSION) &&
		  cJSON_AddStringToObject(root, "warden_version", WARDEN_VERSION);

	cJSON *cmd = ok ? cJSON_AddArrayToObject(root, "command") : NULL;
	for (size_t i = 0; cmd && opts->argv[i]; i++) {
		cJSON *s = cJSON_CreateString(opts->argv[i]);
		if (!s || !cJSON_AddItemToArray(cmd, s)) {
			cJSON_Delete(s);
			cmd = NULL;
		}
	}
	ok = ok && cmd;

	cJSON *pol = ok ? cJSON_AddObjectToObject(root, "policy") : NULL;
	ok = ok && pol && cJSON_AddStringToObject(pol, "source", res->policy_source) &&
	     cJSON_AddStringToObject(pol, "digest", res->policy_digest);

	sup_rfc3339(&res->started_real, true, ts);
	ok = ok && cJSON_AddStringToObject(root, "started_at", ts);
	sup_rfc3339(&res->ended_real, true, ts);
	ok = ok && cJSON_AddStringToObject(root, "ended_at", ts) &&
	     add_u64(root, "duration_ms", res->duration_ms);

	cJSON *ex = ok ? cJSON_AddObjectToObject(root, "exit") : NULL;
	ok = ok && ex && cJSON_AddStringToObject(ex, "reason", sup_reason_name(res->reason)) &&
	     add_num(ex, "code", res->exit_code);
	if (ok && res->have_exited && res->reason != SUP_REASON_SIGNALED &&
	    res->exited.how == WIRE_EXIT_CODE)
		ok = add_num(ex, "status", res->status);
	if (ok && res->signal)
		ok = add_num(ex, "signal", res->signal);
	if (ok && res->error[0])
		ok = cJSON_AddStringToObject(ex, "detail", res->error) != NULL;

	cJSON *ph = ok ? cJSON_AddObjectToObject(root, "phases_us") : NULL;
	for (int i = 0; ph && i < SUP_PHASE_N; i++)
		if (!add_u64(ph, sup_phase_names[i], res->phase_us[i]))
			ph = NULL;
	ok = ok && ph;

	cJSON *rs = ok ? cJSON_AddObjectToObject(root, "resources") : NULL;
	ok = ok && rs;
	if (ok && res->have_cg && res->cg.have_memory_peak)
		ok = add_u64(rs, "peak_memory_bytes", res->cg.memory_peak_bytes);
	if (ok && res->have_cg && res->cg.have_cpu)
		ok = add_u64(rs, "cpu_usec", res->cg.cpu_usec);
	if (ok && res->have_exited)
		ok = add_u64(rs, "command_utime_usec", res->exited.utime_usec) &&
		     add_u64(rs, "command_stime_usec", res->exited.stime_usec) &&
		     add_u64(rs, "command_maxrss_kib", res->exited.maxrss_kib);
	if (ok && res->have_cg)
		ok = add_u64(rs, "oom_kills", res->cg.oom_kills) &&
		     add_u64(rs, "pids_limit_hits", res->cg.pids_max_events);

	cJSON *sb = ok ? cJSON_AddObjectToObject(root, "sandbox") : NULL;
	ok = ok && sb &&
	     cJSON_AddStringToObject(sb, "mode", res->privileged ? "privileged" : "unprivileged") &&
	     add_num(sb, "host_uid", res->host_uid) && add_num(sb, "host_gid", res->host_gid) &&
	     add_num(sb, "cgroup_version", res->cg_version) &&
	     cJSON_AddBoolToObject(sb, "cgroup_emptied", res->cg_emptied) &&
	     add_u64(sb, "placeholders", res->placeholders) &&
	     add_u64(sb, "hidden", res->hidden) &&
	     cJSON_AddStringToObject(sb, "capabilities_kept", res->caps_kept);

	cJSON *ws = ok ? cJSON_AddObjectToObject(root, "workspace") : NULL;
	ok = ok && ws && cJSON_AddStringToObject(ws, "mode", res->changes_mode ? "changes" : "direct") &&
	     cJSON_AddStringToObject(ws, "filesystem", res->ws_fs) &&
	     cJSON_AddBoolToObject(ws, "idmapped", res->privileged && !res->ws_owner_id) &&
	     cJSON_AddBoolToObject(ws, "copied", res->ws_copied);
	if (ok && res->changes_id[0])
		ok = changes_json(ws, res);

	cJSON *host = ok ? cJSON_AddObjectToObject(root, "host") : NULL;
	const struct sbx_host_facts *hf = &res->host;
	ok = ok && host && cJSON_AddStringToObject(host, "kernel", res->kernel) &&
	     add_num(host, "cgroup_version", hf->cgroup_version) &&
	     add_num(host, "landlock_abi", hf->landlock_abi > 0 ? hf->landlock_abi : 0) &&
	     add_num(host, "apparmor_restrict_unprivileged_userns", hf->apparmor_restrict) &&
	     add_num(host, "max_user_namespaces", (double)hf->max_user_namespaces) &&
	     cJSON_AddBoolToObject(host, "openat2", hf->openat2 == 0) &&
	     cJSON_AddBoolToObject(host, "close_range", hf->close_range == 0) &&
	     cJSON_AddBoolToObject(host, "pidfd", hf->pidfd == 0) &&
	     cJSON_AddBoolToObject(host, "clone3", hf->clone3 == 0) &&
	     cJSON_AddBoolToObject(host, "mount_api", hf->mount_api == 0);

	cJSON *weak = ok ? cJSON_AddArrayToObject(root, "weakenings") : NULL;
	ok = ok && weak;
	for (size_t i = 0; ok && i < ELEMENTSOF(res->weakenings) && res->weakenings[i]; i++)
		ok = cJSON_AddItemToArray(weak, cJSON_CreateString(res->weakenings[i]));

	ok = ok && worker_json(root, res);

	if (ok && res->identity.checked) {
		cJSON *id = sup_identity_json(&res->identity);
		ok = id && cJSON_AddItemToObject(root, "identity", id);
	} else if (ok) {
		ok = cJSON_AddNullToObject(root, "identity") != NULL;
	}

	if (ok && res->violated) {
		cJSON *v = cJSON_AddObjectToObject(root, "violation");
		ok = v && add_u64(v, "frame", res->violation_frame) &&
		     cJSON_AddStringToObject(v, "reason", res->violation_reason);
		if (ok && res->violation_type >= 0)
			ok = add_num(v, "type", res->violation_type);
	} else if (ok) {
		ok = cJSON_AddNullToObject(root, "violation") != NULL;
	}
	return ok ? TAKE_PTR(root) : NULL;
}

int sup_write_atomic(int dfd, const char *name, const char *text, size_t len)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
		return -EEXIST;
	char tmp[96];
	uint32_t rnd = 0;
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (uint32_t)time(NULL);
	(void)snprintf(tmp, sizeof(tmp), ".%.40s.%d.%08x", name, (int)getpid(), rnd);
	_cleanup_close_ int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
							  O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int r = io_write_all(fd, text, len);
	if (r >= 0 && fsync(fd) < 0)
		r = -errno;
	if (r >= 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0) {
		(void)unlinkat(dfd, tmp, 0);
		return r;
	}
	if (fsync(dfd) < 0)
		return -errno;
	return 0;
}

static int open_no_symlinks(int at, const char *path, int flags, int *out_fd)
{
	int fd = io_open_dir_nofollow(at, path, flags);
	if (fd < 0)
		return fd;
	*out_fd = fd;
	return 0;
}

int sup_record_open(const char *dir, int *out_fd)
{
	size_t len = strlen(dir);
	if (len == 0 || len >= PATH_MAX)
		return -EINVAL;
	/* The parent (the whole path but its last component) must exist; the last one may not. */
	char parent[PATH_MAX];
	memcpy(parent, dir, len + 1);
	while (len > 1 && parent[len - 1] == '/')
		parent[--len] = '\0';
	char *slash = strrchr(parent, '/');
	const char *name = parent;
	const char *up = ".";
	if (slash == parent) {
		up = "/";
		name = parent[1] ? parent + 1 : ".";
	} else if (slash) {
		*slash = '\0';
		up = parent;
		name = slash + 1;
	}
	_cleanup_close_ int pfd = -1;
	int r = open_no_symlinks(AT_FDCWD, up, O_PATH, &pfd);
	if (r < 0)
		return r;
	if (mkdirat(pfd, name, 0755) < 0 && errno != EEXIST)
		return -errno;
	return open_no_symlinks(pfd, name, O_RDONLY, out_fd);
}

int sup_record_write(const char *dir, const struct sup_run_opts *opts,
		     const struct sup_run_result *res)
{
	_cleanup_(cJSON_Deletep) cJSON *json = record_json(opts, res);
	if (!json)
		return -ENOMEM;
	_cleanup_close_ int own = -1;
	int dfd = res->have_record_fd ? res->record_fd : -1;
	if (dfd < 0) {
		int r = sup_record_open(dir, &own);
		if (r < 0)
			return r;
		dfd = own;
	}
	return sup_write_json_atomic(dfd, "record.json", json);
}

int sup_write_json_atomic(int dfd, const char *name, const cJSON *json)
{
	_cleanup_free_ char *text = cJSON_Print(json);
	if (!text)
		return -ENOMEM;
	size_t len = strlen(text);
	_cleanup_free_ char *line = malloc(len + 2);
	if (!line)
		return -ENOMEM;
	memcpy(line, text, len);
	line[len] = '\n';
	line[len + 1] = '\0';
	return sup_write_atomic(dfd, name, line, len + 1);
}
