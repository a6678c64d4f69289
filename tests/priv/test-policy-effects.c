/* SPDX-License-Identifier: MIT */
/*
 * Every policy field has an effect that a real sandbox shows: each test runs the probe under
 * a policy that sets one field (docs/policy.md) and checks what the probe sees from inside,
 * the host side where the field reaches the host, and the run record's weakenings. Each one
 * has a control (the default policy, a neighbouring value, or the probe run on the host) that
 * answers differently, so a field that silently did nothing would fail its test.
 *
 * Fields already covered by test-run.c are not repeated here: user, hostname, env and the
 * memory, pids, nofile, fsize, tmpfs and wall limits.
 *
 * Needs full privilege (root with CAP_SYS_ADMIN in the initial user namespace, which puts
 * warden in privileged mode); otherwise the program exits 77, or fails under
 * SBX_TEST_MUST_WORK=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "harness.h"

/* The System V shared memory key of the ipc test ("WARN"). */
#define SHM_KEY 0x5741524e
#define CAP_NET_BIND_SERVICE_ONLY "0000000000000400"
/* A syscall number that no architecture warden supports has assigned. */
#define UNKNOWN_SYSCALL "999"
#define SIGSYS_EXIT (128 + 31)

/* One test's fixture: the harness's (first, see struct th_fx), and a System V segment. */
struct effects_fx {
	struct th_fx fx;
	int shm_id;                 /* -1: none */
};

static int fx_setup(void **state)
{
	int r = th_fx_setup(state, sizeof(struct effects_fx), 0, 0);
	if (r == 0)
		((struct effects_fx *)*state)->shm_id = -1;
	return r;
}

static int fx_teardown(void **state)
{
	struct effects_fx *e = *state;
	if (e->shm_id >= 0)
		(void)shmctl(e->shm_id, IPC_RMID, NULL);
	th_fx_free(&e->fx);
	return 0;
}

/* Runs cmd in the workspace under policy (NULL: the default), then th_fx_expect. */
static void policy_expect(struct th_fx *f, const char *policy, const char *const *cmd, int code,
			  const char *out)
{
	struct th_opts o = th_fx_opts(f, policy);
	th_fx_run_expect(f, &o, cmd, code, out);
}

/* Runs the probe itself on the host (the control), then th_fx_expect. */
static void direct_expect(struct th_fx *f, const char *const *cmd, int code, const char *out)
{
	struct th_opts o = th_fx_opts(f, NULL);
	o.direct = true;
	th_fx_run_expect(f, &o, cmd, code, out);
}

/* Like policy_expect, with --record into a fresh directory; the record goes to f->record. */
static void record_expect(struct th_fx *f, const char *policy, const char *const *cmd, int code,
			  const char *out)
{
	struct th_opts o = th_fx_opts(f, policy);
	th_fx_record_expect(f, &o, cmd, code, out);
}

/* `warden policy check [--json] FILE`; the exit code and output are in f->out. */
static void policy_check(struct th_fx *f, const char *policy, bool json)
{
	struct th_opts o = { .subcommand = "policy" };
	th_fx_run(f, &o, json ? TH_CMD("check", "--json", policy) : TH_CMD("check", policy));
}

/* th_policy with a printf format; the path goes to out (PATH_MAX bytes). */
__attribute__((format(printf, 3, 4))) static void policyf(struct th_fx *f, char *out,
							  const char *fmt, ...)
{
	char yaml[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(yaml, sizeof(yaml), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(yaml))
		fail_msg("policy text too long");
	th_policy(&f->ws, yaml, out);
}

/* The record's weakenings are exactly the n names of want, in any order. */
static void expect_weakenings(const struct th_fx *f, const char *const *want, size_t n)
{
	const cJSON *w = th_json_at(f->record, "weakenings");
	assert_true(cJSON_IsArray(w));
	char *text = cJSON_PrintUnformatted(w);
	bool ok = (size_t)cJSON_GetArraySize(w) == n;
	for (size_t i = 0; i < n && ok; i++) {
		bool found = false;
		const cJSON *e;
		cJSON_ArrayForEach(e, w)
			found = found || (cJSON_IsString(e) && !strcmp(e->valuestring, want[i]));
		ok = found;
	}
	if (!ok)
		print_error("weakenings: %s\n", text ? text : "?");
	free(text);
	assert_true(ok);
}

#define WEAK(...) ((const char *const[]){ __VA_ARGS__ })
#define EXPECT_WEAKENINGS(f, ...) \
	expect_weakenings(f, WEAK(__VA_ARGS__), sizeof(WEAK(__VA_ARGS__)) / sizeof(char *))
#define EXPECT_NO_WEAKENINGS(f) expect_weakenings(f, NULL, 0)

static void host_mkdir(const char *path, mode_t mode)
{
	if (mkdir(path, mode) < 0 || chmod(path, mode) < 0)
		fail_msg("mkdir %s: %s", path, strerror(errno));
}

/* The whole of a small host file, NUL-terminated, into buf; fails the test if unreadable. */
static void host_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	size_t off = 0;
	for (;;) {
		ssize_t n = read(fd, buf + off, len - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail_msg("read %s: %s", path, strerror(errno));
		if (n == 0)
			break;
		off += (size_t)n;
		if (off == len - 1)
			fail_msg("%s is larger than %zu bytes", path, len - 1);
	}
	(void)close(fd);
	buf[off] = '\0';
}

static void expect_ws_file(const struct th_fx *f, const char *rel, const char *text)
{
	char p[PATH_MAX];
	th_ws_path(&f->ws, rel, p);
	th_expect_file(p, text);
}

/* ---------------------------------------------------------------------------------------- */
/* extends                                                                                  */

static void test_extends_relative(void **state)
{
	struct th_fx *f = *state;
	/* Control: the default's nofile and hostname. */
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "rlimit", "NOFILE"), 0, "4096 4096\n");
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "hostname"), 0, "warden\n\n");

	char base[PATH_MAX], pol[PATH_MAX];
	th_pathf(base, "%s/base.yaml", f->ws.aux);
	th_put_file(base, "limits: { nofile: 123 }\n");
	th_policy(&f->ws, "extends: base.yaml\nhostname: ext-test\n", pol);
	/* A decoy in warden's working directory: the path is relative to the policy file. */
	th_ws_write(&f->ws, "base.yaml", "limits: { nofile: 77 }\n");
	struct th_opts o = th_fx_opts(f, pol);
	o.cwd = f->ws.dir;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "rlimit", "NOFILE"));
	th_fx_expect(f, 0, "123 123\n");
	record_expect(f, pol, TH_CMD(TH_PROBE, "hostname"), 0, "ext-test\n\n");
	assert_string_equal(th_json_str(f->record, "policy.source"), pol);

	policy_check(f, pol, true);
	const cJSON *json = th_fx_expect_json(f);
	const cJSON *src = th_json_at(json, "sources");
	assert_true(cJSON_IsArray(src));
	assert_int_equal(cJSON_GetArraySize(src), 3);
	const char *want[] = { "<default>", base, pol };
	for (int i = 0; i < 3; i++) {
		const cJSON *s = cJSON_GetArrayItem(src, i);
		assert_true(cJSON_IsString(s));
		assert_string_equal(s->valuestring, want[i]);
	}
	assert_int_equal((int)th_json_num(json, "limits.nofile"), 123);
	assert_string_equal(th_json_str(json, "hostname"), "ext-test");
}

/* ---------------------------------------------------------------------------------------- */
/* namespaces                                                                               */

static void test_ns_net_shared(void **state)
{
	struct th_fx *f = *state;
	/* Control: the probe on the host lists the host's interfaces, more than lo. */
	direct_expect(f, TH_CMD(TH_PROBE, "ifaces"), 0, NULL);
	char host[4096];
	(void)snprintf(host, sizeof(host), "%s", f->out.out);
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "ifaces"), 0, "lo up\n");
	if (!strcmp(host, "lo up\n"))
		print_message("the host has only lo: the interface lists cannot differ\n");

	char pol[PATH_MAX];
	th_policy(&f->ws, "namespaces: { net: false }\n", pol);
	record_expect(f, pol, TH_CMD(TH_PROBE, "ifaces"), 0, host);
	EXPECT_WEAKENINGS(f, "share-net");
	assert_false(th_json_bool(f->record, "identity.namespaces.net.separate"));
}

static void test_ns_uts_shared(void **state)
{
	struct th_fx *f = *state;
	struct utsname u;
	assert_int_equal(uname(&u), 0);
	char host[2 * sizeof(u.nodename) + 4];
	(void)snprintf(host, sizeof(host), "%s\n%s\n", u.nodename, u.domainname);
	/* Control: a new UTS namespace has the policy's name and no domain. */
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "hostname"), 0, "warden\n\n");
	assert_string_not_equal(host, "warden\n\n");

	char pol[PATH_MAX];
	/* Sharing the host's UTS namespace, the policy's hostname is not applied. */
	th_policy(&f->ws, "hostname: not-applied\nnamespaces: { uts: false }\n", pol);
	record_expect(f, pol, TH_CMD(TH_PROBE, "hostname"), 0, host);
	EXPECT_WEAKENINGS(f, "share-uts");
	assert_false(th_json_bool(f->record, "identity.namespaces.uts.separate"));
	/* /etc/hostname tells the same name as uname. */
	char etc[sizeof(u.nodename) + 2];
	(void)snprintf(etc, sizeof(etc), "%s\n", u.nodename);
	policy_expect(f, pol, TH_CMD(TH_PROBE, "cat", "/etc/hostname"), 0, etc);
	/* The host's name was not changed either. */
	struct utsname after;
	assert_int_equal(uname(&after), 0);
	assert_string_equal(after.nodename, u.nodename);
}

static void test_ns_ipc_shared(void **state)
{
	struct effects_fx *e = *state;
	struct th_fx *f = &e->fx;
	e->shm_id = shmget(SHM_KEY, 4096, IPC_CREAT | IPC_EXCL | 0666);
	if (e->shm_id < 0 && errno == EEXIST) {
		/* Left by an earlier run that died: remove it and start over. */
		int old = shmget(SHM_KEY, 0, 0);
		if (old >= 0)
			(void)shmctl(old, IPC_RMID, NULL);
		e->shm_id = shmget(SHM_KEY, 4096, IPC_CREAT | IPC_EXCL | 0666);
	}
	if (e->shm_id < 0)
		fail_msg("shmget: %s", strerror(errno));
	char key[16], found[32];
	(void)snprintf(key, sizeof(key), "%d", SHM_KEY);
	(void)snprintf(found, sizeof(found), "OK %d\n", e->shm_id);
	/* Control: the probe on the host finds the segment, a new IPC namespace does not. */
	direct_expect(f, TH_CMD(TH_PROBE, "shm", key), 0, found);
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "shm", key), 1, "ERR ENOENT 2\n");

	char pol[PATH_MAX];
	th_policy(&f->ws, "namespaces: { ipc: false }\n", pol);
	record_expect(f, pol, TH_CMD(TH_PROBE, "shm", key), 0, found);
	EXPECT_WEAKENINGS(f, "share-ipc");
	assert_false(th_json_bool(f->record, "identity.namespaces.ipc.separate"));
}

/*
 * For each line "N:controllers:path" of a /proc/PID/cgroup text (inside), the host's line of
 * the same hierarchy (host, the test's own): the path inside must be the host's or below it
 * (warden's cgroup is created below its own, which is the test's). Returns how many lines are
 * strictly below, or -1 when a line does not match.
 */
static int cgroup_lines_below(const char *inside, const char *host)
{
	int below = 0, lines = 0;
	for (const char *line = inside; *line;) {
		const char *nl = strchr(line, '\n');
		size_t llen = nl ? (size_t)(nl - line) : strlen(line);
		const char *c2 = NULL;
		const char *c1 = memchr(line, ':', llen);
		if (c1)
			c2 = memchr(c1 + 1, ':', llen - (size_t)(c1 + 1 - line));
		if (!c2)
			return -1;
		size_t hier = (size_t)(c2 + 1 - line); /* "N:controllers:" */
		const char *path = c2 + 1;
		size_t plen = llen - hier;
		/* The same hierarchy on the host. */
		const char *h = host;
		const char *hpath = NULL;
		size_t hplen = 0;
		while (h && *h) {
			const char *hnl = strchr(h, '\n');
			size_t hlen = hnl ? (size_t)(hnl - h) : strlen(h);
			if (hlen >= hier && !strncmp(h, line, hier)) {
				hpath = h + hier;
				hplen = hlen - hier;
				break;
			}
			h = hnl ? hnl + 1 : NULL;
		}
		if (!hpath)
			return -1;
		if (plen == hplen && !strncmp(path, hpath, plen)) {
			/* the same cgroup */
		} else if (plen > hplen && !strncmp(path, hpath, hplen) &&
			   (hplen == 1 || path[hplen] == '/')) {
			below++;
		} else {
			return -1;
		}
		lines++;
		if (!nl)
			break;
		line = nl + 1;
	}
	return lines ? below : -1;
}

/*
 * Whether the /proc/PID/cgroup text's line for controller ctl (v1), or its v2 line when ctl is
 * NULL, names one of warden's sandbox cgroups ("warden-<pid>-<hex>") as its last component.
 */
static bool cgroup_line_is_sandbox(const char *text, const char *ctl)
{
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		char buf[1024];
		(void)snprintf(buf, sizeof(buf), "%.*s", nl ? (int)(nl - line) : (int)strlen(line),
			       line);
		line = nl ? nl + 1 : NULL;
		char *c1 = strchr(buf, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		bool match = false;
		if (!ctl) {
			match = strcmp(buf, "0:") == 0;
		} else {
			char *save = NULL;
			for (char *t = strtok_r(c1 + 1, ",", &save); t; t = strtok_r(NULL, ",", &save))
				match = match || strcmp(t, ctl) == 0;
		}
		if (!match)
			continue;
		const char *last = strrchr(c2 + 1, '/');
		return last && strncmp(last, "/warden-", 8) == 0;
	}
	return false;
}

static void test_ns_cgroup_shared(void **state)
{
	struct th_fx *f = *state;
	char host[4096];
	host_read("/proc/self/cgroup", host, sizeof(host));
	/* Control: in a new cgroup namespace, every hierarchy's path is its root. */
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "cat", "/proc/self/cgroup"), 0, NULL);
	for (const char *line = f->out.out; *line;) {
		const char *nl = strchr(line, '\n');
		if (!nl || nl - line < 2 || strncmp(nl - 2, ":/", 2) != 0) {
			th_show(&f->out);
			fail_msg("a cgroup path is not / in a new cgroup namespace");
		}
		line = nl + 1;
	}

	char pol[PATH_MAX];
	th_policy(&f->ws, "namespaces: { cgroup: false }\n", pol);
	record_expect(f, pol, TH_CMD(TH_PROBE, "cat", "/proc/self/cgroup"), 0, NULL);
	/*
	 * The host's view: paths below the host's own cgroup, or (cgroup v2, root) in warden's
	 * subtree at the top of the hierarchy (docs/run.md).
	 */
	int below = cgroup_lines_below(f->out.out, host);
	if (below < 1 && !strstr(f->out.out, "0::/warden/warden-")) {
		th_show(&f->out);
		fail_msg("the sandbox does not see the host's cgroup paths (host:\n%s)", host);
	}
	/* Every hierarchy warden limits or measures holds the sandbox in its own cgroup. */
	if (th_json_num(f->record, "sandbox.cgroup_version") == 2) {
		if (!cgroup_line_is_sandbox(f->out.out, NULL))
			fail_msg("the v2 line is not a sandbox cgroup:\n%s", f->out.out);
	} else {
		static const char *const ctls[] = { "memory", "pids", "cpu", "cpuacct" };
		for (size_t i = 0; i < sizeof(ctls) / sizeof(ctls[0]); i++)
			if (!cgroup_line_is_sandbox(f->out.out, ctls[i]))
				fail_msg("the %s hierarchy does not hold the sandbox in its "
					 "cgroup:\n%s", ctls[i], f->out.out);
	}
	EXPECT_WEAKENINGS(f, "share-cgroup");
	assert_false(th_json_bool(f->record, "identity.namespaces.cgroup.separate"));
}

/* ---------------------------------------------------------------------------------------- */
/* Policies that are refused, next to a neighbouring one that is accepted                  */

struct refusal_case {
	const char *bad;
	const char *good;
};

static void test_refused(void **state)
{
	struct th_fx *f = *state;
	const struct refusal_case *c = f->param;
	char bad[PATH_MAX], good[PATH_MAX];
	th_policy(&f->ws, c->bad, bad);
	th_policy(&f->ws, c->good, good);

	/* Control: the neighbouring policy is valid and runs the command. */
	policy_check(f, good, false);
	th_fx_expect(f, 0, NULL);
	policy_expect(f, good, TH_CMD(TH_PROBE, "write", "/workspace/ran"), 0, "OK 1\n");
	assert_true(th_ws_exists(&f->ws, "ran"));
	char ran[PATH_MAX];
	th_ws_path(&f->ws, "ran", ran);
	assert_int_equal(unlink(ran), 0);

	policy_check(f, bad, false);
	th_fx_expect(f, 2, NULL);
	if (!strstr(f->out.err, bad)) {
		th_show(&f->out);
		fail_msg("the diagnostic does not name the policy file");
	}
	policy_expect(f, bad, TH_CMD(TH_PROBE, "write", "/workspace/ran"), 125, "");
	assert_false(th_ws_exists(&f->ws, "ran"));
}

/* ---------------------------------------------------------------------------------------- */
/* filesystem.binds                                                                         */

/*
 * Bind sources are captured with the supervisor's credentials before the sandbox switches to
 * its host uid: the aux directory holding them stays 0700 (root's), as a private directory
 * of the policy's author would be.
 */
static void test_binds_rw_ro(void **state)
{
	struct th_fx *f = *state;
	char rw[PATH_MAX], ro[PATH_MAX], pol[PATH_MAX], p[PATH_MAX];
	th_aux_path(&f->ws, "rw", rw);
	th_aux_path(&f->ws, "ro", ro);
	/* World-writable: the sandbox user's host uid is allocated per run. */
	host_mkdir(rw, 0777);
	host_mkdir(ro, 0777);
	th_pathf(p, "%s/seen", ro);
	th_put_file(p, "from the host\n");
	/* Control: without the binds there is no /data. */
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "stat", "/data"), 1, "ERR ENOENT 2\n");

	policyf(f, pol,
		"filesystem:\n"
		"  binds:\n"
		"    - { src: %s, dst: /data, mode: rw }\n"
		"    - { src: %s, dst: /srv/ro }\n",
		rw, ro);
	policy_expect(f, pol, TH_CMD(TH_PROBE, "write", "/data/new"), 0, "OK 1\n");
	th_pathf(p, "%s/new", rw);
	th_expect_file(p, "x");

	/* mode defaults to ro: readable, not writable, even though the directory is 0777. */
	policy_expect(f, pol, TH_CMD(TH_PROBE, "cat", "/srv/ro/seen"), 0, "from the host\n");
	policy_expect(f, pol, TH_CMD(TH_PROBE, "write", "/srv/ro/new"), 1, "ERR EROFS 30\n");
	policy_expect(f, pol, TH_CMD(TH_PROBE, "write", "/srv/ro/seen"), 1, "ERR EROFS 30\n");
	th_pathf(p, "%s/new", ro);
	assert_int_equal(access(p, F_OK), -1);
	th_pathf(p, "%s/seen", ro);
	th_expect_file(p, "from the host\n");
}

static void test_binds_relative_src(void **state)
{
	struct th_fx *f = *state;
	char dir[PATH_MAX], p[PATH_MAX], pol[PATH_MAX];
	/* Next to the policy file... */
	th_pathf(dir, "%s/tools", f->ws.aux);
	host_mkdir(dir, 0755);
	th_pathf(p, "%s/which", dir);
	th_put_file(p, "policy dir\n");
	/* ...and a decoy in warden's working directory (the workspace). */
	th_ws_mkdir(&f->ws, "tools");
	th_ws_write(&f->ws, "tools/which", "working dir\n");

	th_policy(&f->ws, "filesystem: { binds: [ { src: ./tools, dst: /opt/tools } ] }\n", pol);
	struct th_opts o = th_fx_opts(f, pol);
	o.cwd = f->ws.dir;
	/* Control: the same name, seen in the workspace, is the decoy. */
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "cat", "/workspace/tools/which"));
	th_fx_expect(f, 0, "working dir\n");
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "cat", "/opt/tools/which"));
	th_fx_expect(f, 0, "policy dir\n");

	policy_check(f, pol, true);
	const cJSON *json = th_fx_expect_json(f);
	const cJSON *b = cJSON_GetArrayItem(th_json_at(json, "filesystem.binds"), 0);
	assert_non_null(b);
	th_pathf(p, "%s/tools", f->ws.aux);
	assert_string_equal(th_json_str(b, "src"), p);
}

static void test_binds_optional(void **state)
{
	struct th_fx *f = *state;
	char missing[PATH_MAX], pol[PATH_MAX];
	th_aux_path(&f->ws, "missing", missing);
	policyf(f, pol, "filesystem: { binds: [ { src: %s, dst: /opt/m, optional: true } ] }\n",
		missing);
	policy_expect(f, pol, TH_CMD(TH_PROBE, "write", "/workspace/ran"), 0, "OK 1\n");
	assert_true(th_ws_exists(&f->ws, "ran"));
	policy_expect(f, pol, TH_CMD(TH_PROBE, "stat", "/opt/m"), 1, "ERR ENOENT 2\n");

	/* Without optional, the missing source stops the run before the command. */
	char ran[PATH_MAX];
	th_ws_path(&f->ws, "ran", ran);
	assert_int_equal(unlink(ran), 0);
	policyf(f, pol, "filesystem: { binds: [ { src: %s, dst: /opt/m } ] }\n", missing);
	policy_expect(f, pol, TH_CMD(TH_PROBE, "write", "/workspace/ran"), 125, "");
	assert_false(th_ws_exists(&f->ws, "ran"));
	if (!strstr(f->out.err, missing)) {
		th_show(&f->out);
		fail_msg("the diagnostic does not name the missing source");
	}
}

/* ---------------------------------------------------------------------------------------- */
/* filesystem.etc                                                                           */

static void test_etc_entries(void **state)
{
	struct th_fx *f = *state;
	char host[8192], pol[PATH_MAX];
	if (access("/etc/os-release", R_OK) < 0) {
		print_message("no /etc/os-release on the host\n");
		skip();
	}
	host_read("/etc/os-release", host, sizeof(host));
	struct stat st;
	const bool have_nsswitch = lstat("/etc/nsswitch.conf", &st) == 0;

	th_policy(&f->ws, "filesystem: { etc: [] }\n", pol);
	policy_expect(f, pol, TH_CMD(TH_PROBE, "cat", "/etc/os-release"), 1, "ERR ENOENT 2\n");
	/* Only the synthetic files are left. */
	policy_expect(f, pol, TH_CMD(TH_PROBE, "ls", "/etc"), 0, "group\nhostname\nhosts\npasswd\n");

	th_policy(&f->ws, "filesystem: { etc: [os-release] }\n", pol);
	policy_expect(f, pol, TH_CMD(TH_PROBE, "cat", "/etc/os-release"), 0, host);
	/* The list replaces the default's: a default entry the host has is gone. */
	if (have_nsswitch) {
		policy_expect(f, NULL, TH_CMD(TH_PROBE, "stat", "/etc/nsswitch.conf"), 0, NULL);
		policy_expect(f, pol, TH_CMD(TH_PROBE, "stat", "/etc/nsswitch.conf"), 1,
			      "ERR ENOENT 2\n");
	}
	/* Read-only, like every host entry. */
	th_fx_run(f, &(struct th_opts){ .workspace = f->ws.dir, .policy = pol },
		 TH_CMD(TH_PROBE, "write", "/etc/os-release"));
	th_fx_expect_write_refused(f);
}

/* ---------------------------------------------------------------------------------------- */
/* filesystem.protect and allow_create                                                      */

static void test_protect_custom(void **state)
{
	struct th_fx *f = *state;
	f->ws_mode = "direct"; /* the protect list is workspace mode direct's */
	char pol[PATH_MAX];
	/* Control: build.sh is not protected by default. */
	th_ws_write(&f->ws, "build.sh", "#!/bin/sh\necho build\n");
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "write", "/workspace/build.sh"), 0, "OK 1\n");
	expect_ws_file(f, "build.sh", "x");

	th_ws_write(&f->ws, "build.sh", "#!/bin/sh\necho build\n");
	th_policy(&f->ws, "filesystem: { protect: [build.sh] }\n", pol);
	struct th_opts o = th_fx_opts(f, pol);
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "write", "/workspace/build.sh"));
	th_fx_expect_write_refused(f);
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "openw", "/workspace/build.sh"));
	th_fx_expect_write_refused(f);
	/* Still readable, and the rest of the workspace is writable. */
	policy_expect(f, pol, TH_CMD(TH_PROBE, "cat", "/workspace/build.sh"), 0,
		      "#!/bin/sh\necho build\n");
	policy_expect(f, pol, TH_CMD(TH_PROBE, "write", "/workspace/other"), 0, "OK 1\n");
	expect_ws_file(f, "build.sh", "#!/bin/sh\necho build\n");
}

static void test_protect_allow_create(void **state)
{
	struct th_fx *f = *state;
	f->ws_mode = "direct"; /* the protect list is workspace mode direct's */
	char pol[PATH_MAX];
	/* Control: protected and missing, .envrc cannot be created. */
	th_policy(&f->ws, "filesystem: { protect: [.envrc] }\n", pol);
	struct th_opts o = th_fx_opts(f, pol);
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "write", "/workspace/.envrc"));
	th_fx_expect_write_refused(f);
	assert_false(th_ws_exists(&f->ws, ".envrc"));

	th_policy(&f->ws, "filesystem: { protect: [.envrc], allow_create: [.envrc] }\n", pol);
	o.policy = pol;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "write", "/workspace/.envrc"));
	th_fx_expect(f, 0, "OK 1\n");
	expect_ws_file(f, ".envrc", "x");
	/* Once it exists it is protected like any existing entry. */
	th_ws_write(&f->ws, ".envrc", "export A=1\n");
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "write", "/workspace/.envrc"));
	th_fx_expect_write_refused(f);
	expect_ws_file(f, ".envrc", "export A=1\n");
}

/* ---------------------------------------------------------------------------------------- */
/* filesystem.hide                                                                          */

static void test_hide(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	th_ws_write(&f->ws, ".env", "SECRET=1\n");
	th_ws_mkdir(&f->ws, "sub");
	th_ws_write(&f->ws, "sub/.env", "SUB=2\n");
	th_ws_mkdir(&f->ws, "secrets");
	th_ws_write(&f->ws, "secrets/key", "key\n");
	th_ws_write(&f->ws, "notes.env", "visible\n");
	/* Control: by default, nothing is hidden. */
	record_expect(f, NULL, TH_CMD(TH_PROBE, "cat", "/workspace/.env"), 0, "SECRET=1\n");
	assert_int_equal((int)th_json_num(f->record, "sandbox.hidden"), 0);

	th_policy(&f->ws, "filesystem: { hide: [\"**/.env\", secrets] }\n", pol);
	record_expect(f, pol, TH_CMD(TH_PROBE, "cat", "/workspace/.env"), 0, "");
	assert_int_equal((int)th_json_num(f->record, "sandbox.hidden"), 3);
	policy_expect(f, pol, TH_CMD(TH_PROBE, "cat", "/workspace/sub/.env"), 0, "");
	policy_expect(f, pol, TH_CMD(TH_PROBE, "ls", "/workspace/secrets"), 0, "");
	policy_expect(f, pol, TH_CMD(TH_PROBE, "cat", "/workspace/secrets/key"), 1,
		      "ERR ENOENT 2\n");
	policy_expect(f, pol, TH_CMD(TH_PROBE, "write", "/workspace/secrets/new"), 1,
		      "ERR EROFS 30\n");
	/* A write to a hidden file goes nowhere. */
	policy_expect(f, pol, TH_CMD(TH_PROBE, "write", "/workspace/.env"), 0, "OK 1\n");
	/* Not every name ending in .env: the pattern is a whole component. */
	policy_expect(f, pol, TH_CMD(TH_PROBE, "cat", "/workspace/notes.env"), 0, "visible\n");

	expect_ws_file(f, ".env", "SECRET=1\n");
	expect_ws_file(f, "sub/.env", "SUB=2\n");
	expect_ws_file(f, "secrets/key", "key\n");
	assert_false(th_ws_exists(&f->ws, "secrets/new"));
}

/* ---------------------------------------------------------------------------------------- */
/* capabilities                                                                             */

static void test_capabilities_keep(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	/* Control: no capability, so a port below 1024 is refused. */
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "bindport", "80"), 1, "ERR EACCES 13\n");
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "status"), 0, NULL);
	th_fx_expect_caps(f, TH_ZERO_CAPS);

	th_policy(&f->ws, "capabilities: { keep: [net_bind_service] }\n", pol);
	record_expect(f, pol, TH_CMD(TH_PROBE, "bindport", "80"), 0, "OK 0\n");
	EXPECT_WEAKENINGS(f, "keep-capabilities");
	assert_string_equal(th_json_str(f->record, "sandbox.capabilities_kept"),
			    "net_bind_service");
	assert_string_equal(th_json_str(f->record, "identity.CapEff"), CAP_NET_BIND_SERVICE_ONLY);
	/* Exactly bit 10 (CAP_NET_BIND_SERVICE) in every set, ambient so that it survives exec. */
	policy_expect(f, pol, TH_CMD(TH_PROBE, "status"), 0, NULL);
	th_fx_expect_caps(f, CAP_NET_BIND_SERVICE_ONLY);
}

/* ---------------------------------------------------------------------------------------- */
/* seccomp                                                                                  */

static void test_seccomp_default_action_kill(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	/* Control: an unlisted syscall answers ENOSYS. */
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "rawsyscall", UNKNOWN_SYSCALL), 1,
		      "ERR ENOSYS 38\n");

	th_policy(&f->ws, "seccomp: { default_action: kill }\n", pol);
	record_expect(f, pol, TH_CMD(TH_PROBE, "rawsyscall", UNKNOWN_SYSCALL), SIGSYS_EXIT, "");
	assert_string_equal(th_json_str(f->record, "exit.reason"), "signaled");
	assert_int_equal((int)th_json_num(f->record, "exit.signal"), 31);
	/* Listed syscalls still work, for the probe and for the worker that started it. */
	policy_expect(f, pol, TH_CMD(TH_PROBE, "write", "/workspace/x"), 0, "OK 1\n");
}

static void test_seccomp_allow(void **state)
{
	struct th_fx *f = *state;
	char nr[16], pol[PATH_MAX], host[64];
	(void)snprintf(nr, sizeof(nr), "%d", (int)SYS_kcmp);
	/* kcmp of pid 0: the kernel's own answer, without the filter, is ESRCH. */
	const char *const cmd[] = { TH_PROBE, "rawsyscall", nr, "0", "0", "0", "0", "0", NULL };
	direct_expect(f, cmd, 1, NULL);
	if (!strcmp(f->out.out, "ERR ENOSYS 38\n")) {
		print_message("the host kernel has no kcmp\n");
		skip();
	}
	(void)snprintf(host, sizeof(host), "%s", f->out.out);
	/* Control: kcmp is refused on purpose by default (EPERM; #15). */
	policy_expect(f, NULL, cmd, 1, "ERR EPERM 1\n");

	th_policy(&f->ws, "seccomp: { allow: [kcmp] }\n", pol);
	policy_expect(f, pol, cmd, 1, host);
}

static void test_seccomp_deny(void **state)
{
	struct th_fx *f = *state;
	char p[PATH_MAX], pol[PATH_MAX];
	struct stat st;
	th_ws_write(&f->ws, "f", "data\n");
	th_ws_path(&f->ws, "f", p);
	assert_int_equal(chmod(p, 0644), 0);
	/* Control: chmod is allowed by default. */
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "chmod", "/workspace/f"), 0, "OK 0\n");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(chmod(p, 0644), 0);

	/* glibc implements chmod() with either syscall. */
	th_policy(&f->ws, "seccomp: { deny: [chmod, fchmodat] }\n", pol);
	policy_expect(f, pol, TH_CMD(TH_PROBE, "chmod", "/workspace/f"), 1, "ERR EPERM 1\n");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* Other syscalls are untouched. */
	policy_expect(f, pol, TH_CMD(TH_PROBE, "write", "/workspace/f"), 0, "OK 1\n");
}

static void test_seccomp_rules(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	/* Control: the probe may signal itself with SIGUSR1 (10), which it ignores. */
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "killself", "10"), 0, "OK 0\n");

	th_policy(&f->ws,
		  "seccomp:\n"
		  "  rules:\n"
		  "    - { syscall: kill, action: deny, args: [ { index: 1, op: eq, value: 10 } ] }\n",
		  pol);
	policy_expect(f, pol, TH_CMD(TH_PROBE, "killself", "10"), 1, "ERR EPERM 1\n");
	/* Only when the condition holds. */
	policy_expect(f, pol, TH_CMD(TH_PROBE, "killself", "0"), 0, "OK 0\n");
	policy_expect(f, pol, TH_CMD(TH_PROBE, "killself", "12"), 0, "OK 0\n");
}

/* ---------------------------------------------------------------------------------------- */
/* limits                                                                                   */

static long spin_cpu_usec(const struct th_fx *f)
{
	long long usec = -1;
	if (sscanf(f->out.out, "CPU %lld", &usec) != 1) {
		th_show(&f->out);
		fail_msg("no CPU line");
	}
	return (long)usec;
}

static void test_limit_cpu(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	/*
	 * Control: without the limit, the spinner reaches 600 ms of CPU, given up to 20 s of wall
	 * time (a loaded host only makes it take longer). Under cpu: 0.2, one second of wall time
	 * holds at most about 200 ms of it, however idle the host.
	 */
	record_expect(f, NULL, TH_CMD(TH_PROBE, "spin", "20000", "600"), 0, NULL);
	long control = spin_cpu_usec(f);
	double control_cg = th_json_num(f->record, "resources.cpu_usec");

	th_policy(&f->ws, "limits: { cpu: 0.2 }\n", pol);
	record_expect(f, pol, TH_CMD(TH_PROBE, "spin", "1000"), 0, NULL);
	long limited = spin_cpu_usec(f);
	double limited_cg = th_json_num(f->record, "resources.cpu_usec");
	/*
	 * The cgroup also counts the sandbox's set-up (the worker, the probe's start), which an
	 * emulated or loaded host makes long: its bound is the quota over the run's whole life,
	 * plus one period (100 ms) of slack. Without the quota the spin alone takes ~1 s of CPU.
	 */
	double run_ms = th_json_num(f->record, "duration_ms");
	print_message("spin to 600 ms of CPU: %ld us by default; 1000 ms of wall time: %ld us "
		      "(cgroup: %.0f us in a run of %.0f ms) under cpu: 0.2\n", control, limited,
		      limited_cg, run_ms);
	assert_true(control >= 500000);
	assert_true(control_cg >= 500000);
	assert_true(limited <= 300000);
	assert_true(limited_cg <= 0.2 * run_ms * 1000 + 100000);
	assert_true(limited > 0);
}

static void test_limit_nproc(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	long forked = -1;
	/* Control: by default, 20 forks are nothing. */
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "forkbomb", "20"), 128 + 9, "FORKED 20\n");

	th_policy(&f->ws, "limits: { nproc: 5 }\n", pol);
	policy_expect(f, pol, TH_CMD(TH_PROBE, "rlimit", "NPROC"), 0, "5 5\n");
	record_expect(f, pol, TH_CMD(TH_PROBE, "forkbomb", "20"), 128 + 9, NULL);
	if (sscanf(f->out.out, "FORKED %ld", &forked) != 1) {
		th_show(&f->out);
		fail_msg("no FORKED line");
	}
	/* The worker and the probe count too. */
	assert_in_range(forked, 1, 4);
	/* The rlimit refused, not the cgroup (pids stays 1024). */
	assert_int_equal((int)th_json_num(f->record, "resources.pids_limit_hits"), 0);
}

static void test_limit_output_refused(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	/* Control: output 0 (the default) runs. */
	th_policy(&f->ws, "limits: { output: 0 }\n", pol);
	policy_expect(f, pol, TH_CMD(TH_PROBE, "write", "/workspace/ran"), 0, "OK 1\n");
	char ran[PATH_MAX];
	th_ws_path(&f->ws, "ran", ran);
	assert_int_equal(unlink(ran), 0);

	/* A valid policy, but `warden run` cannot enforce it. */
	th_policy(&f->ws, "limits: { output: 1M }\n", pol);
	policy_check(f, pol, false);
	th_fx_expect(f, 0, NULL);
	policy_expect(f, pol, TH_CMD(TH_PROBE, "write", "/workspace/ran"), 125, "");
	assert_false(th_ws_exists(&f->ws, "ran"));
	if (!strstr(f->out.err, "output")) {
		th_show(&f->out);
		fail_msg("the diagnostic does not name limits.output");
	}
}

/* ---------------------------------------------------------------------------------------- */
/* unsafe                                                                                   */

static void test_unsafe_no_cgroup_unused(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX];
	/* As root a cgroup is created, so the weakening is allowed but not used or recorded. */
	th_policy(&f->ws, "unsafe: [no-cgroup]\n", pol);
	record_expect(f, pol, TH_CMD(TH_PROBE, "exit", "0"), 0, "");
	EXPECT_NO_WEAKENINGS(f);
	int v = (int)th_json_num(f->record, "sandbox.cgroup_version");
	assert_true(v == 1 || v == 2);
	assert_true(th_json_bool(f->record, "sandbox.cgroup_emptied"));
}

static void test_unsafe_io_uring(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX], host[64], knob[16] = "0\n";
	if (access("/proc/sys/kernel/io_uring_disabled", F_OK) == 0)
		host_read("/proc/sys/kernel/io_uring_disabled", knob, sizeof(knob));
	/* Control: on the host the kernel answers for itself (EFAULT for the NULL params). */
	direct_expect(f, TH_CMD(TH_PROBE, "syscall", "io_uring_setup"), 1, NULL);
	if (strcmp(knob, "0\n") != 0 || !strcmp(f->out.out, "ERR ENOSYS 38\n") ||
	    !strcmp(f->out.out, "ERR EPERM 1\n")) {
		print_message("io_uring is unavailable on this host (io_uring_disabled %s)\n",
			      knob);
		skip();
	}
	(void)snprintf(host, sizeof(host), "%s", f->out.out);
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "syscall", "io_uring_setup"), 1, "ERR EPERM 1\n");

	th_policy(&f->ws, "unsafe: [io_uring]\n", pol);
	record_expect(f, pol, TH_CMD(TH_PROBE, "syscall", "io_uring_setup"), 1, host);
	EXPECT_WEAKENINGS(f, "io_uring");
}

static void test_unsafe_bind_host_root(void **state)
{
	struct th_fx *f = *state;
	char pol[PATH_MAX], host[512];
	if (access("/etc/hostname", R_OK) < 0) {
		print_message("no /etc/hostname on the host\n");
		skip();
	}
	host_read("/etc/hostname", host, sizeof(host));
	/* Control: the sandbox's own /etc/hostname is synthetic. */
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "cat", "/etc/hostname"), 0, "warden\n");
	policy_expect(f, NULL, TH_CMD(TH_PROBE, "stat", "/host"), 1, "ERR ENOENT 2\n");

	th_policy(&f->ws,
		  "filesystem: { binds: [ { src: /, dst: /host } ] }\n"
		  "unsafe: [bind-host-root]\n",
		  pol);
	record_expect(f, pol, TH_CMD(TH_PROBE, "cat", "/host/etc/hostname"), 0, host);
	EXPECT_WEAKENINGS(f, "bind-host-root");
	/* Still a read-only bind. */
	policy_expect(f, pol, TH_CMD(TH_PROBE, "write", "/host/warden-new"), 1, "ERR EROFS 30\n");
	assert_int_equal(access("/warden-new", F_OK), -1);
}

/* ---------------------------------------------------------------------------------------- */

/* A test named after its function, without the "test_" prefix. */
#define T(fn) { &#fn[5], fn, fx_setup, fx_teardown, NULL }
#define REFUSED(n, bad, good) { "refused_" n, test_refused, fx_setup, fx_teardown, \
				&(struct refusal_case){ bad, good } }

int main(void)
{
	th_require_privileged();

	const struct CMUnitTest tests[] = {
		T(test_extends_relative),
		T(test_ns_net_shared),
		T(test_ns_uts_shared),
		T(test_ns_ipc_shared),
		T(test_ns_cgroup_shared),
		REFUSED("namespaces_user", "namespaces: { user: false }\n",
			"namespaces: { user: true }\n"),
		REFUSED("capabilities_sys_admin", "capabilities: { keep: [sys_admin] }\n",
			"capabilities: { keep: [net_bind_service] }\n"),
		REFUSED("network_bridge", "network: bridge\n", "network: none\n"),
		REFUSED("seccomp_profile", "seccomp: { profile: other }\n",
			"seccomp: { profile: default }\n"),
		REFUSED("bind_host_root", "filesystem: { binds: [ { src: /, dst: /host } ] }\n",
			"filesystem: { binds: [ { src: /, dst: /host } ] }\n"
			"unsafe: [bind-host-root]\n"),
		T(test_binds_rw_ro),
		T(test_binds_relative_src),
		T(test_binds_optional),
		T(test_etc_entries),
		T(test_protect_custom),
		T(test_protect_allow_create),
		T(test_hide),
		T(test_capabilities_keep),
		T(test_seccomp_default_action_kill),
		T(test_seccomp_allow),
		T(test_seccomp_deny),
		T(test_seccomp_rules),
		T(test_limit_cpu),
		T(test_limit_nproc),
		T(test_limit_output_refused),
		T(test_unsafe_no_cgroup_unused),
		T(test_unsafe_io_uring),
		T(test_unsafe_bind_host_root),
	};
	return _cmocka_run_group_tests("priv-policy-effects", tests,
				       sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
