/* SPDX-License-Identifier: MIT */
/*
 * The escape suite: one table of attacks, each run by the probe inside a real sandbox under
 * the default policy (a few bombs get one lowered limit, so that they stay bounded; the table
 * names it), each with the exact outcome that shows it blocked: an errno name, an exit code,
 * or what the host observed. Every attack is one cmocka test. After the run, main prints a
 * table "attack | result | evidence" to stdout, and the program fails when any row is not
 * "blocked".
 *
 * A row is "ESCAPED" when the evidence shows the attack working (an OK from the probe where
 * a refusal was due, a signal or a datagram arriving on the host, a limit not holding), and
 * "UNEXPECTED" when it shows neither the expected refusal nor success (another errno, warden
 * failing before the command, a control run that did not behave). Both fail the program.
 *
 * Where a refusal could be right by accident, a control run of the same probe command
 * outside the sandbox (as root, on the host) shows that the attack works there, so the test
 * can fail; controls are only run where they are harmless on the host.
 *
 * Needs full privilege (root with CAP_SYS_ADMIN in the initial user namespace, which puts
 * warden in privileged mode) and user namespaces; otherwise the program exits 77, or fails
 * under SBX_TEST_MUST_WORK=1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "harness.h"

/* The workspace owner of the set-uid attack: not root, so that root stays unmapped inside. */
#define WS_OWNER 4242u
/* How long the host listens for a datagram from the sandbox. */
#define UDP_WAIT_MS 300
#define EVIDENCE_MAX 512

enum verdict { V_PENDING, V_BLOCKED, V_ESCAPED, V_UNEXPECTED };

struct esc_fx;

struct attack {
	const char *name;                /* the table's row and the cmocka test */
	void (*run)(struct esc_fx *f);   /* NULL: att_generic */
	const char *const *cmd;          /* att_generic: the command */
	const char *want[3];             /* att_generic: stdout of a blocked outcome (any one) */
	int code;                        /* att_generic: warden's exit code with it */
	const char *escape;              /* att_generic: stdout holding this means it worked;
					  * NULL: a line starting with "OK" */
	const char *control;             /* att_generic: outside the sandbox, stdout starts so */
	const char *host_path;           /* att_generic: noted as present or absent on the host */
	bool pty;                        /* att_generic: stdin is the slave of a fresh pty */
	const char *policy;              /* NULL: the default policy; else a lowered limit */
};

struct row {
	const struct attack *a;
	enum verdict v;
	char evidence[EVIDENCE_MAX];
};

/*
 * One test's fixture: the harness's first (see struct th_fx: the workspace, the last run, its
 * record, the marker of host processes killed and the host files removed at teardown), then
 * the attack's row and what else to clean up.
 */
struct esc_fx {
	struct th_fx fx;
	const struct attack *a;
	struct row *row;
	char policy[PATH_MAX];           /* the policy file, once written */
	int fds[4];                      /* descriptors closed at teardown */
	struct th_proc bg;               /* a host process started by the test */
	bool bg_running;
};

static volatile sig_atomic_t usr1_count;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

/* ---------------------------------------------------------------------------------------- */
/* Fixture, runs and verdicts                                                               */

static int fx_setup(void **state)
{
	struct row *row = *state;
	row->v = V_PENDING;
	(void)snprintf(row->evidence, sizeof(row->evidence), "setup failed");
	if (th_fx_setup(state, sizeof(struct esc_fx), 0, 0) < 0)
		return -1;
	struct esc_fx *f = *state;
	f->row = row;
	f->a = row->a;
	for (size_t i = 0; i < sizeof(f->fds) / sizeof(f->fds[0]); i++)
		f->fds[i] = -1;
	(void)snprintf(row->evidence, sizeof(row->evidence), "the test did not finish");
	return 0;
}

/* Text with each newline but a final one shown as "; ", cut to fit out. */
static void compact(const char *in, char *out, size_t len)
{
	size_t o = 0;
	for (const char *p = in; *p && o + 3 < len; p++) {
		if (*p == '\n') {
			if (p[1] == '\0')
				break;
			out[o++] = ';';
			out[o++] = ' ';
		} else if (*p == '\t') {
			out[o++] = ' ';
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
}

static int fx_teardown(void **state)
{
	struct esc_fx *f = *state;
	if (f->row->v == V_PENDING) {
		char out[200], err[200];
		compact(f->fx.out.out ? f->fx.out.out : "", out, sizeof(out));
		compact(f->fx.out.err ? f->fx.out.err : "", err, sizeof(err));
		f->row->v = V_UNEXPECTED;
		(void)snprintf(f->row->evidence, sizeof(f->row->evidence),
			       "aborted; last run: exit %d, stdout '%s', stderr '%s'",
			       f->fx.out.code, out, err);
	}
	if (f->bg_running) {
		struct th_out o;
		(void)kill(f->bg.pid, SIGKILL);
		th_finish(&f->bg, &o);
		th_out_done(&o);
	}
	for (size_t i = 0; i < sizeof(f->fds) / sizeof(f->fds[0]); i++)
		if (f->fds[i] >= 0)
			(void)close(f->fds[i]);
	th_fx_free(&f->fx);
	return 0;
}

static void keep_fd(struct esc_fx *f, int fd)
{
	for (size_t i = 0; i < sizeof(f->fds) / sizeof(f->fds[0]); i++)
		if (f->fds[i] < 0) {
			f->fds[i] = fd;
			return;
		}
	fail_msg("too many descriptors kept");
}

static const char *verdict_name(enum verdict v)
{
	switch (v) {
	case V_BLOCKED:
		return "blocked";
	case V_ESCAPED:
		return "ESCAPED";
	case V_PENDING:
	case V_UNEXPECTED:
		break;
	}
	return "UNEXPECTED";
}

/* Records the row; anything but V_BLOCKED fails the test here. */
__attribute__((format(printf, 3, 4))) static void conclude(struct esc_fx *f, enum verdict v,
							   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(f->row->evidence, sizeof(f->row->evidence), fmt, ap);
	va_end(ap);
	f->row->v = v;
	if (v != V_BLOCKED) {
		th_show(&f->fx.out);
		fail_msg("%s: %s: %s", f->a->name, verdict_name(v), f->row->evidence);
	}
}

/* The options of a sandboxed run: the fixture's workspace and the attack's policy, if any. */
static struct th_opts opts(struct esc_fx *f)
{
	if (f->a->policy && !f->policy[0])
		th_policy(&f->fx.ws, f->a->policy, f->policy);
	return th_fx_opts(&f->fx, f->policy[0] ? f->policy : NULL);
}

/* Runs cmd in the sandbox; a run whose command never ran is UNEXPECTED. */
static void run(struct esc_fx *f, const struct th_opts *o, const char *const *cmd)
{
	th_fx_run(&f->fx, o, cmd);
	const int c = f->fx.out.code;
	if (f->fx.out.hard_timeout || c == 123 || c == 125 || c == 126 || c == 127) {
		char err[256];
		compact(f->fx.out.err, err, sizeof(err));
		conclude(f, V_UNEXPECTED, "the command did not run: warden exit %d%s: %s", c,
			 f->fx.out.hard_timeout ? " (hard timeout)" : "", err);
	}
}

static void run_default(struct esc_fx *f, const char *const *cmd)
{
	struct th_opts o = opts(f);
	run(f, &o, cmd);
}

/*
 * Runs cmd outside the sandbox (o->direct) and requires its stdout to start with want: the
 * attack works on the host, so the refusal inside is the sandbox's doing. The compacted
 * stdout goes to seen.
 */
static void control(struct esc_fx *f, const struct th_opts *o, const char *const *cmd,
		    const char *want, char *seen, size_t len)
{
	struct th_opts d = *o;
	d.direct = true;
	th_fx_run(&f->fx, &d, cmd);
	compact(f->fx.out.out, seen, len);
	if (strncmp(f->fx.out.out, want, strlen(want)) != 0)
		conclude(f, V_UNEXPECTED,
			 "control outside the sandbox gave '%s' (exit %d), not '%s...'", seen,
			 f->fx.out.code, want);
}

static bool has_ok_line(const char *text)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, "OK", 2) == 0 && (l[2] == ' ' || l[2] == '\n' || l[2] == '\0'))
			return true;
	return false;
}

/* " [policy ...]" for an attack with a lowered limit, else "". */
static void policy_note(const struct esc_fx *f, char *out, size_t len)
{
	out[0] = '\0';
	if (f->a->policy) {
		char p[128];
		compact(f->a->policy, p, sizeof(p));
		(void)snprintf(out, len, " [policy %s]", p);
	}
}

/*
 * Concludes from the last run: blocked when stdout is one of want and the exit code is code;
 * ESCAPED when stdout holds escape (NULL: a line starting with "OK"); UNEXPECTED otherwise.
 * note follows the evidence.
 */
static void judge(struct esc_fx *f, const char *const want[3], int code, const char *escape,
		  const char *note)
{
	char out[300], pol[160];
	compact(f->fx.out.out, out, sizeof(out));
	policy_note(f, pol, sizeof(pol));
	bool match = false;
	for (int i = 0; i < 3 && want[i] && !match; i++)
		match = strcmp(f->fx.out.out, want[i]) == 0;
	if (match && f->fx.out.code == code) {
		if (code == 0 || code == 1)
			conclude(f, V_BLOCKED, "%s%s%s", out, note, pol);
		else
			conclude(f, V_BLOCKED, "%s, exit %d%s%s", out, code, note, pol);
		return;
	}
	char w[100];
	compact(want[0], w, sizeof(w));
	const char *text = f->fx.out.out;
	const bool worked = escape ? strstr(text, escape) != NULL : has_ok_line(text);
	conclude(f, worked ? V_ESCAPED : V_UNEXPECTED, "%s, exit %d (expected '%s', exit %d)%s%s",
		 out, f->fx.out.code, w, code, note, pol);
}

static void judge1(struct esc_fx *f, const char *want, int code, const char *note)
{
	const char *const w[3] = { want, NULL, NULL };
	judge(f, w, code, NULL, note);
}

/* The table-driven attack: cmd in the sandbox, its stdout and exit code compared. */
static void att_generic(struct esc_fx *f)
{
	const struct attack *a = f->a;
	struct th_opts o = opts(f);
	char note[200] = "", seen[120];
	if (a->pty) {
		int master = -1;
		o.stdin_fd = th_open_pty(&master);
		if (o.stdin_fd < 0)
			conclude(f, V_UNEXPECTED, "no pty: %s", strerror(errno));
		keep_fd(f, master);
		keep_fd(f, o.stdin_fd);
	}
	if (a->control) {
		control(f, &o, a->cmd, a->control, seen, sizeof(seen));
		(void)snprintf(note, sizeof(note), " (outside: %s)", seen);
	}
	if (a->host_path) {
		struct stat st;
		size_t n = strlen(note);
		(void)snprintf(note + n, sizeof(note) - n, " (%s on the host: %s)", a->host_path,
			       lstat(a->host_path, &st) == 0 ? "present" : "absent");
	}
	run(f, &o, a->cmd);
	judge(f, a->want, a->code, a->escape, note);
}

/* True when the two files have the same bytes. */
static bool same_bytes(const char *a, const char *b)
{
	FILE *fa = fopen(a, "re"), *fb = fopen(b, "re");
	bool same = fa && fb;
	while (same) {
		int ca = getc(fa), cb = getc(fb);
		same = ca == cb;
		if (ca == EOF)
			break;
	}
	if (fa)
		(void)fclose(fa);
	if (fb)
		(void)fclose(fb);
	return same;
}

/* ---------------------------------------------------------------------------------------- */
/* Processes                                                                                */

static void att_kill_test_pid(struct esc_fx *f)
{
	char pid[16], sig[8], note[96];
	(void)snprintf(pid, sizeof(pid), "%d", (int)getpid());
	(void)snprintf(sig, sizeof(sig), "%d", SIGUSR1);
	const sig_atomic_t before = usr1_count;
	run_default(f, TH_CMD(TH_PROBE, "kill", pid, sig));
	const bool arrived = usr1_count != before;
	if (arrived)
		conclude(f, V_ESCAPED, "SIGUSR1 reached the test (host pid %s)", pid);
	(void)snprintf(note, sizeof(note), " (SIGUSR1 to host pid %s; none arrived)", pid);
	judge1(f, "ERR ESRCH 3\n", 1, note);
}

static void att_kill_worker(struct esc_fx *f)
{
	char rec[PATH_MAX], note[160];
	th_aux_path(&f->fx.ws, "record", rec);
	struct th_opts o = opts(f);
	o.record = rec;
	run(f, &o, TH_CMD(TH_PROBE, "kill", "1", "9"));
	th_record_reload(&f->fx.record, rec);
	const char *reason = th_json_str(f->fx.record, "exit.reason");
	(void)snprintf(note, sizeof(note), "; run exit %d, reason %s: the worker survived",
		       f->fx.out.code, reason);
	if (strcmp(reason, "exited") != 0 || f->fx.out.code != 0)
		conclude(f, V_ESCAPED, "the run did not end normally after SIGKILL to pid 1: "
			 "exit %d, reason %s", f->fx.out.code, reason);
	judge1(f, "OK 0\n", 0, note);
}

/* ---------------------------------------------------------------------------------------- */
/* Mounts and the root                                                                      */

static void att_chroot_breakout(struct esc_fx *f)
{
	struct stat host_root;
	assert_int_equal(stat("/", &host_root), 0);
	char host_ids[64], seen[120];
	(void)snprintf(host_ids, sizeof(host_ids), "%u:%u:%llu", major(host_root.st_dev),
		       minor(host_root.st_dev), (unsigned long long)host_root.st_ino);
	struct th_opts o = opts(f);
	const char *const *cmd = TH_CMD(TH_PROBE, "chroot-escape");
	/* Control: as root on the host, chroot works and the walk leaves the new root. */
	control(f, &o, cmd, "OK 0\n", seen, sizeof(seen));
	char cwd[64] = "", root[64] = "";
	if (sscanf(f->fx.out.out, "OK 0\nCWD %63s ROOT %63s", cwd, root) != 2 ||
	    strcmp(cwd, root) == 0)
		conclude(f, V_UNEXPECTED, "control did not leave its chroot: %s", seen);

	run(f, &o, cmd);
	char out[200];
	compact(f->fx.out.out, out, sizeof(out));
	char first[32] = "";
	cwd[0] = root[0] = '\0';
	const bool parsed = sscanf(f->fx.out.out, "%31[^\n]\nCWD %63s ROOT %63s", first, cwd,
				   root) == 3;
	if (strncmp(f->fx.out.out, "OK", 2) == 0 || (parsed && strcmp(cwd, root) != 0) ||
	    (parsed && strcmp(cwd, host_ids) == 0))
		conclude(f, V_ESCAPED, "%s (host / is %s)", out, host_ids);
	if (!parsed || strcmp(first, "ERR EPERM 1") != 0 || f->fx.out.code != 1)
		conclude(f, V_UNEXPECTED, "%s, exit %d (expected ERR EPERM 1, then CWD = ROOT)",
			 out, f->fx.out.code);
	conclude(f, V_BLOCKED, "%s: still the sandbox root (host / is %s; outside: %s)", out,
		 host_ids, seen);
}

/* ---------------------------------------------------------------------------------------- */
/* Privilege                                                                                */

static void att_setuid_binary(struct esc_fx *f)
{
	/* A workspace owned by someone else than root: root's file is then not the sandbox
	 * user's inside (the idmapped mount maps only the workspace owner). */
	char probe[PATH_MAX], suid[PATH_MAX], inside[128], v[64];
	th_ws_path(&f->fx.ws, "probe", probe);
	th_ws_path(&f->fx.ws, "suid", suid);
	assert_int_equal(chown(f->fx.ws.dir, WS_OWNER, WS_OWNER), 0);
	assert_int_equal(chown(probe, WS_OWNER, WS_OWNER), 0);
	assert_int_equal(th_copy_file(th_probe(), suid, 0600, 0, 0), 0);
	assert_int_equal(chown(suid, 0, 0), 0);
	assert_int_equal(chmod(suid, 04755), 0);
	struct stat st;
	assert_int_equal(stat(suid, &st), 0);
	assert_int_equal(st.st_mode & 07777, 04755);

	run_default(f, TH_CMD(TH_PROBE, "stat", "/workspace/suid"));
	compact(f->fx.out.out, inside, sizeof(inside));
	run_default(f, TH_CMD("/workspace/suid", "status"));
	if (f->fx.out.code != 0 || !th_status_field(f->fx.out.out, "Uid", v, sizeof(v)))
		conclude(f, V_UNEXPECTED, "set-uid probe: exit %d, no Uid line (stat: %s)",
			 f->fx.out.code, inside);
	char uid[64];
	compact(v, uid, sizeof(uid));
	if (strcmp(v, "1000\t1000\t1000\t1000") != 0)
		conclude(f, V_ESCAPED, "Uid %s after exec of a root-owned 4755 file (%s)", uid,
			 inside);
	conclude(f, V_BLOCKED, "Uid %s (real, effective, saved, fs) after exec of root:root 4755; "
		 "inside: %s", uid, inside);
}

/* The set-id bits: none may be created inside the sandbox (seccomp.setid). */
#define SETID_BITS ((mode_t)(S_ISUID | S_ISGID))

/* "MODE UID" of a host path, or "absent"; whether it carries a set-id bit goes to *setid. */
static void host_mode(const char *path, char *out, size_t len, bool *setid)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		(void)snprintf(out, len, "absent");
		return;
	}
	(void)snprintf(out, len, "%04o uid %u", (unsigned)(st.st_mode & 07777),
		       (unsigned)st.st_uid);
	*setid = *setid || (st.st_mode & SETID_BITS) != 0;
}

/*
 * The plain attack: copy a shell into the workspace (root owns it there, so the copy is
 * root's on the host) and make it set-uid with chmod(1), by number and by symbol. A first
 * chmod without set-id bits shows that the sandbox user may change the file's mode at all,
 * so the refusals are the filter's and not a permission check's.
 */
static void att_setid_chmod(struct esc_fx *f)
{
	char sh[PATH_MAX], err[200], mode[48];
	th_ws_path(&f->fx.ws, "sh", sh);
	run_default(f, TH_CMD("/bin/sh", "-c",
			      "cp /bin/sh /workspace/sh || exit 9\n"
			      "for m in 0750 6755 4755 2755 u+s g+s ug+s; do\n"
			      "  chmod $m /workspace/sh; echo \"chmod $m $?\"\n"
			      "done\n"));
	bool setid = false;
	host_mode(sh, mode, sizeof(mode), &setid);
	if (setid)
		conclude(f, V_ESCAPED, "the host copy of the shell is %s", mode);
	static const char want[] = "chmod 0750 0\nchmod 6755 1\nchmod 4755 1\nchmod 2755 1\n"
				   "chmod u+s 1\nchmod g+s 1\nchmod ug+s 1\n";
	compact(f->fx.out.err, err, sizeof(err));
	if (f->fx.out.code != 0 || strcmp(f->fx.out.out, want) != 0 ||
	    !strstr(f->fx.out.err, "Operation not permitted") || strncmp(mode, "0750 ", 5) != 0) {
		char out[200];
		compact(f->fx.out.out, out, sizeof(out));
		conclude(f, V_UNEXPECTED, "stdout '%s', exit %d, stderr '%s'; host copy %s", out,
			 f->fx.out.code, err, mode);
	}
	conclude(f, V_BLOCKED, "chmod 0750: exit 0; then 6755, 4755, 2755, u+s, g+s, ug+s: exit 1 "
		 "(Operation not permitted); host copy %s", mode);
}

/* One syscall of the set-id row: its mode with set-id bits, and one without. */
struct setid_case {
	const char *call;
	const char *mode;   /* octal, as the probe takes it */
	const char *plain;  /* the same call's control, without set-id bits */
	bool creates;       /* makes a new name (else changes /workspace/f) */
};

static const struct setid_case setid_cases[] = {
#ifdef SYS_chmod
	{ "chmod", "6755", "0750", false },
#endif
	{ "fchmod", "4755", "0750", false },
	{ "fchmodat", "2755", "0750", false },
	/* a file-type bit beside them, as stat's st_mode carries it */
	{ "fchmodat2", "104755", "0750", false },
#ifdef SYS_open
	{ "open", "6755", "0644", true },
#endif
	/* garbage above the 16 bits the kernel reads */
	{ "openat", "40000004755", "0644", true },
#ifdef SYS_creat
	{ "creat", "2755", "0644", true },
#endif
	{ "tmpfile", "4755", "0644", true },
#ifdef SYS_mkdir
	{ "mkdir", "6755", "0755", true },
#endif
	{ "mkdirat", "2755", "0755", true },
#ifdef SYS_mknod
	{ "mknod", "4644", "0644", true },
#endif
	{ "mknodat", "2644", "0644", true },
};

/* The workspace names a case works on: one file for the chmod family, else new names. */
static void setid_names(const struct setid_case *c, char *plain, char *setid, size_t len)
{
	(void)snprintf(plain, len, c->creates ? "plain-%s" : "f", c->call);
	(void)snprintf(setid, len, c->creates ? "setid-%s" : "f", c->call);
}

/* The first top-level entry of dir with a set-id bit, as "NAME MODE" in out; false if none. */
static bool find_setid(const char *dir, char *out, size_t len)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool found = false;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (st.st_mode & SETID_BITS)) {
			(void)snprintf(out, len, "%s %04o uid %u", de->d_name,
				       (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
			found = true;
		}
	}
	(void)closedir(d);
	return found;
}

/*
 * Every syscall that takes a mode, made raw by the probe with set-id bits, each after the
 * same call with a plain mode as a control in the same run (the sandbox user may change and
 * create these files, so EPERM is the filter's); then openat2, whose mode the filter cannot
 * see, which must be ENOSYS (a control outside shows the host kernel has it). On the host,
 * no file in the workspace may carry a set-id bit, and no refused create may leave a name.
 */
static void att_setid_syscalls(struct esc_fx *f)
{
	const size_t n = sizeof(setid_cases) / sizeof(setid_cases[0]);
	char script[4096], seen[64], ctl[PATH_MAX], plain[64], setid[64], want[128];
	char calls[300] = "", bad[PATH_MAX + 64];
	size_t off = 0, co = 0;
	struct th_opts o = opts(f);

	/* Control: openat2 works on this host, so ENOSYS inside is the filter's. */
	th_ws_path(&f->fx.ws, "control-openat2", ctl);
	control(f, &o, TH_CMD(TH_PROBE, "setid", "openat2", ctl, "0644"), "OK ", seen,
		sizeof(seen));
	(void)unlink(ctl);

	off += (size_t)snprintf(script, sizeof(script),
				"cd /workspace && : > f && chmod 0755 f || exit 9\n");
	for (size_t i = 0; i < n; i++) {
		const struct setid_case *c = &setid_cases[i];
		setid_names(c, plain, setid, sizeof(plain));
		off += (size_t)snprintf(script + off, sizeof(script) - off,
					"printf '%s plain '; ./probe setid %s %s %s\n"
					"printf '%s setid '; ./probe setid %s %s %s\n",
					c->call, c->call, plain, c->plain, c->call, c->call, setid,
					c->mode);
		assert_true(off < sizeof(script));
		co += (size_t)snprintf(calls + co, sizeof(calls) - co, "%s%s %s", co ? ", " : "",
				       c->call, c->mode);
		assert_true(co < sizeof(calls));
	}
	off += (size_t)snprintf(script + off, sizeof(script) - off,
				"printf 'openat2 setid '; ./probe setid openat2 setid-openat2 4755\n"
				"true\n");
	assert_true(off < sizeof(script));
	run(f, &o, TH_CMD("/bin/sh", "-c", script));

	char out[300];
	compact(f->fx.out.out, out, sizeof(out));
	if (find_setid(f->fx.ws.dir, bad, sizeof(bad)))
		conclude(f, V_ESCAPED, "%s on the host; inside: %s", bad, out);
	if (f->fx.out.code != 0)
		conclude(f, V_UNEXPECTED, "exit %d: %s", f->fx.out.code, out);
	for (size_t i = 0; i < n; i++) {
		const struct setid_case *c = &setid_cases[i];
		char host[PATH_MAX];
		setid_names(c, plain, setid, sizeof(plain));
		/*
		 * fchmodat2 is Linux 6.6: on an older kernel it is ENOSYS either way. So is
		 * O_TMPFILE on overlayfs, the workspace in mode changes: EOPNOTSUPP before 6.6.
		 */
		(void)snprintf(want, sizeof(want), "%s plain ERR ENOSYS 38", c->call);
		bool absent = !strcmp(c->call, "fchmodat2") && th_has_line(f->fx.out.out, want);
		(void)snprintf(want, sizeof(want), "%s plain ERR EOPNOTSUPP 95", c->call);
		absent = absent || (!strcmp(c->call, "tmpfile") && th_has_line(f->fx.out.out, want));
		(void)snprintf(want, sizeof(want), "%s setid OK ", c->call);
		if (strstr(f->fx.out.out, want))
			conclude(f, V_ESCAPED, "%s with mode %s succeeded: %s", c->call, c->mode,
				 out);
		/* Where the kernel lacks it, the filter may still answer first, with EPERM. */
		(void)snprintf(want, sizeof(want), "%s setid ERR EPERM 1", c->call);
		bool refused = th_has_line(f->fx.out.out, want);
		if (!refused && absent) {
			(void)snprintf(want, sizeof(want), "%s setid ERR ENOSYS 38", c->call);
			refused = th_has_line(f->fx.out.out, want);
		}
		if (!refused)
			conclude(f, V_UNEXPECTED, "no line '%s': %s", want, out);
		(void)snprintf(want, sizeof(want), "%s plain OK ", c->call);
		if (!absent && !strstr(f->fx.out.out, want))
			conclude(f, V_UNEXPECTED, "the control '%s' without set-id bits failed: %s",
				 c->call, out);
		th_ws_path(&f->fx.ws, setid, host);
		if (c->creates && access(host, F_OK) == 0)
			conclude(f, V_UNEXPECTED, "the refused %s left %s on the host", c->call,
				 host);
	}
	if (!th_has_line(f->fx.out.out, "openat2 setid ERR ENOSYS 38"))
		conclude(f, V_UNEXPECTED, "openat2 was not ENOSYS: %s", out);
	char fmode[48];
	bool fsetid = false;
	th_ws_path(&f->fx.ws, "f", ctl);
	host_mode(ctl, fmode, sizeof(fmode), &fsetid);
	conclude(f, V_BLOCKED, "EPERM for %s (each OK without set-id bits); openat2 ENOSYS "
		 "(outside: %s); host: f %s, no set-id bit, no refused name", calls, seen, fmode);
}

static void att_capabilities(struct esc_fx *f)
{
	static const char *const sets[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
	run_default(f, TH_CMD(TH_PROBE, "status"));
	char v[64], nnp[16] = "?", sc[16] = "?";
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		if (!th_status_field(f->fx.out.out, sets[i], v, sizeof(v)))
			conclude(f, V_UNEXPECTED, "no %s line", sets[i]);
		if (strcmp(v, TH_ZERO_CAPS) != 0)
			conclude(f, V_ESCAPED, "%s %s", sets[i], v);
	}
	(void)th_status_field(f->fx.out.out, "NoNewPrivs", nnp, sizeof(nnp));
	(void)th_status_field(f->fx.out.out, "Seccomp", sc, sizeof(sc));
	if (strcmp(nnp, "1") != 0 || strcmp(sc, "2") != 0)
		conclude(f, V_ESCAPED, "NoNewPrivs %s, Seccomp %s", nnp, sc);
	conclude(f, V_BLOCKED,
		 "CapInh CapPrm CapEff CapBnd CapAmb all %s; NoNewPrivs %s; Seccomp %s",
		 TH_ZERO_CAPS, nnp, sc);
}

/* ---------------------------------------------------------------------------------------- */
/* Secrets                                                                                  */

static void att_host_secret_file(struct esc_fx *f)
{
	static const char *const dirs[] = { "/root", "/var/tmp" };
	char secret[96], ev[EVIDENCE_MAX] = "";
	th_marker("warden-escape-secret", secret, sizeof(secret));
	size_t made = 0, off = 0;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		const char *p;
		int fd = th_fx_host_file(&f->fx, dirs[i], "warden-escape-secret", &p);
		if (fd < 0)
			continue;
		made++;
		/* World-readable: only being out of view protects it. */
		const bool ok = write(fd, secret, strlen(secret)) == (ssize_t)strlen(secret) &&
				fchmod(fd, 0644) == 0;
		(void)close(fd);
		assert_true(ok);
		run_default(f, TH_CMD(TH_PROBE, "cat", p));
		if (strstr(f->fx.out.out, secret))
			conclude(f, V_ESCAPED, "read %s from inside", p);
		char out[64];
		compact(f->fx.out.out, out, sizeof(out));
		if (strcmp(f->fx.out.out, "ERR ENOENT 2\n") != 0 || f->fx.out.code != 1)
			conclude(f, V_UNEXPECTED, "%s: %s, exit %d (expected ERR ENOENT 2)", p, out,
				 f->fx.out.code);
		off += (size_t)snprintf(ev + off, sizeof(ev) - off, "%s%s: %s", off ? "; " : "", p,
					out);
	}
	if (made == 0)
		conclude(f, V_UNEXPECTED, "could not create a host secret in /root or /var/tmp");
	conclude(f, V_BLOCKED, "%s", ev);
}

static void att_proc_environ(struct esc_fx *f)
{
	char needle[96], env[128], seen[160];
	th_marker("warden-escape-environ", f->fx.marker, sizeof(f->fx.marker));
	th_marker("environ-secret", needle, sizeof(needle));
	(void)snprintf(env, sizeof(env), "WARDEN_ESCAPE_SECRET=%s", needle);
	const char *const host_env[] = { env, NULL };
	struct th_opts host = { .direct = true, .env = host_env };
	assert_int_equal(th_spawn(&host, TH_CMD(TH_PROBE, "sleep", "30", f->fx.marker), &f->bg), 0);
	f->bg_running = true;
	pid_t pid = 0;
	for (int i = 0; i < 250 && th_find_procs(f->fx.marker, "probe", 0, &pid, 1) < 1; i++)
		(void)usleep(20000);
	if (pid <= 0)
		conclude(f, V_UNEXPECTED, "the host process holding the secret did not start");

	struct th_opts o = opts(f);
	const char *const *cmd = TH_CMD(TH_PROBE, "environ-scan", needle);
	char found[32];
	(void)snprintf(found, sizeof(found), "FOUND %d", (int)pid);
	control(f, &o, cmd, "", seen, sizeof(seen));
	if (!th_has_line(f->fx.out.out, found))
		conclude(f, V_UNEXPECTED, "control did not find the secret of pid %d: %s", (int)pid,
			 seen);
	run(f, &o, cmd);
	char out[120];
	compact(f->fx.out.out, out, sizeof(out));
	if (strstr(f->fx.out.out, "FOUND"))
		conclude(f, V_ESCAPED, "%s (the secret is in host pid %d)", out, (int)pid);
	long n = -1;
	if (f->fx.out.code != 0 || sscanf(f->fx.out.out, "SCANNED %ld", &n) != 1)
		conclude(f, V_UNEXPECTED, "%s, exit %d", out, f->fx.out.code);
	conclude(f, V_BLOCKED, "%s, no FOUND (outside: %s)", out, seen);
}

static void att_env_leak(struct esc_fx *f)
{
	char secret[96], env[128], seen[64];
	th_marker("warden-escape-env", secret, sizeof(secret));
	(void)snprintf(env, sizeof(env), "WARDEN_ESCAPE_SECRET=%s", secret);
	const char *const host_env[] = { env, NULL };
	struct th_opts o = opts(f);
	o.env = host_env;
	struct th_opts direct = { .direct = true, .env = host_env };
	th_fx_run(&f->fx, &direct, TH_CMD(TH_PROBE, "env"));
	const bool control_seen = th_has_line(f->fx.out.out, env);
	(void)snprintf(seen, sizeof(seen), "%s", control_seen ? "present" : "absent");
	if (!control_seen)
		conclude(f, V_UNEXPECTED, "control: the variable is not in warden's environment");
	run(f, &o, TH_CMD(TH_PROBE, "env"));
	if (strstr(f->fx.out.out, secret))
		conclude(f, V_ESCAPED, "WARDEN_ESCAPE_SECRET reached the command");
	if (f->fx.out.code != 0)
		conclude(f, V_UNEXPECTED, "probe env: exit %d", f->fx.out.code);
	int n = 0;
	for (const char *p = f->fx.out.out; (p = strchr(p, '\n')); p++)
		n++;
	char names[200] = "";
	size_t off = 0;
	for (const char *l = f->fx.out.out; *l && off < sizeof(names);) {
		const char *eq = strchr(l, '='), *nl = strchr(l, '\n');
		if (!eq || !nl)
			break;
		if (eq < nl)
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%.*s",
						off ? " " : "", (int)(eq - l), l);
		l = nl + 1;
	}
	conclude(f, V_BLOCKED, "WARDEN_ESCAPE_SECRET absent; %d variables: %s (outside: %s)", n,
		 names, seen);
}

/* ---------------------------------------------------------------------------------------- */
/* Host files and devices                                                                   */

static void att_sysrq(struct esc_fx *f)
{
	struct stat st;
	if (lstat("/proc/sysrq-trigger", &st) < 0) {
		/* Never written to: only its type is looked at. */
		run_default(f, TH_CMD(TH_PROBE, "stat", "/proc/sysrq-trigger"));
		judge1(f, "ERR ENOENT 2\n", 1, " (absent on the host too: no CONFIG_MAGIC_SYSRQ)");
		return;
	}
	run_default(f, TH_CMD(TH_PROBE, "stat", "/proc/sysrq-trigger"));
	char out[120];
	compact(f->fx.out.out, out, sizeof(out));
	size_t len = strlen(f->fx.out.out);
	if (strncmp(f->fx.out.out, "OK chr ", 7) == 0 && len > 5 &&
	    strcmp(f->fx.out.out + len - 5, " 1:3\n") == 0) {
		conclude(f, V_BLOCKED, "%s: masked by /dev/null", out);
		return;
	}
	conclude(f, strncmp(f->fx.out.out, "OK ", 3) == 0 ? V_ESCAPED : V_UNEXPECTED,
		 "%s (expected /dev/null, 1:3, bound over it)", out);
}

static void att_block_device(struct esc_fx *f)
{
	static const char *const prefixes[] = { "vd", "sd", "nvme", "xvd", "hd", "mmcblk", "loop" };
	char dev[PATH_MAX] = "";
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]) && !dev[0]; i++) {
		DIR *d = opendir("/dev");
		assert_non_null(d);
		struct dirent *de;
		while ((de = readdir(d)) && !dev[0]) {
			struct stat st;
			char p[PATH_MAX];
			if (strncmp(de->d_name, prefixes[i], strlen(prefixes[i])) != 0)
				continue;
			th_pathf(p, "/dev/%s", de->d_name);
			if (lstat(p, &st) == 0 && S_ISBLK(st.st_mode))
				(void)snprintf(dev, sizeof(dev), "%s", p);
		}
		(void)closedir(d);
	}
	const char *path = dev[0] ? dev : "/dev/sda";
	char note[PATH_MAX + 48];
	(void)snprintf(note, sizeof(note), " (%s: %s)", path,
		       dev[0] ? "a block device on the host" : "no block device on the host");
	run_default(f, TH_CMD(TH_PROBE, "openw", path));
	judge1(f, "ERR ENOENT 2\n", 1, note);
}

/* ---------------------------------------------------------------------------------------- */
/* Network                                                                                  */

static void att_tcp_host(struct esc_fx *f)
{
	char port[8], note[96];
	int lfd = th_host_socket(SOCK_STREAM, port, sizeof(port));
	assert_true(lfd >= 0);
	keep_fd(f, lfd);
	run_default(f, TH_CMD(TH_PROBE, "connect", "127.0.0.1", port));
	int a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (a >= 0) {
		(void)close(a);
		conclude(f, V_ESCAPED, "the host listener on 127.0.0.1:%s accepted a connection",
			 port);
	}
	(void)snprintf(note, sizeof(note), "; the host listener on 127.0.0.1:%s accepted none",
		       port);
	judge1(f, "ERR ECONNREFUSED 111\n", 1, note);
}

static void att_udp_host(struct esc_fx *f)
{
	char port[8], note[128], buf[16];
	int ufd = th_host_socket(SOCK_DGRAM, port, sizeof(port));
	assert_true(ufd >= 0);
	keep_fd(f, ufd);
	run_default(f, TH_CMD(TH_PROBE, "udp", "127.0.0.1", port));
	struct pollfd p = { .fd = ufd, .events = POLLIN };
	int r = poll(&p, 1, UDP_WAIT_MS);
	if (r > 0 && recv(ufd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		conclude(f, V_ESCAPED, "the host socket 127.0.0.1:%s received a datagram", port);
	/* The datagram leaves fine, into the sandbox's own loopback. */
	(void)snprintf(note, sizeof(note),
		       " (sent inside); the host socket 127.0.0.1:%s got nothing in %d ms", port,
		       UDP_WAIT_MS);
	judge1(f, "OK 1\n", 0, note);
}

static void att_rtlinks(struct esc_fx *f)
{
	char seen[120], out[120];
	struct th_opts o = opts(f);
	const char *const *cmd = TH_CMD(TH_PROBE, "rtlinks");
	control(f, &o, cmd, "lo\n", seen, sizeof(seen));
	if (strcmp(f->fx.out.out, "lo\n") == 0)
		print_message("the host has only lo: the control shows the dump works, no more\n");
	run(f, &o, cmd);
	compact(f->fx.out.out, out, sizeof(out));
	if (strcmp(f->fx.out.out, "lo\n") == 0 && f->fx.out.code == 0) {
		conclude(f, V_BLOCKED, "links: %s (outside: %s)", out, seen);
		return;
	}
	/* Any other link listed is a host interface, or one made inside. */
	conclude(f, f->fx.out.code == 0 ? V_ESCAPED : V_UNEXPECTED, "links: %s, exit %d", out,
		 f->fx.out.code);
}

/* ---------------------------------------------------------------------------------------- */
/* cgroups                                                                                  */

static void att_cgroup_procs(struct esc_fx *f)
{
	/* The root, the v1 layout, and this test's own cgroup (warden's sandbox cgroup's
	 * parent) as the host names them. */
	char paths[4][PATH_MAX];
	size_t n = 0;
	th_pathf(paths[n++], "/sys/fs/cgroup/cgroup.procs");
	th_pathf(paths[n++], "/sys/fs/cgroup/memory/cgroup.procs");
	FILE *cg = fopen("/proc/self/cgroup", "re");
	char line[512];
	while (cg && fgets(line, sizeof(line), cg) && n < 4) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || strcmp(c2 + 1, "/") == 0)
			continue;
		if (strncmp(line, "0::", 3) == 0)
			th_pathf(paths[n++], "/sys/fs/cgroup%s/cgroup.procs", c2 + 1);
		else if (strncmp(c1 + 1, "memory:", 7) == 0)
			th_pathf(paths[n++], "/sys/fs/cgroup/memory%s/cgroup.procs", c2 + 1);
	}
	if (cg)
		(void)fclose(cg);
	char ev[EVIDENCE_MAX] = "";
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		char out[64];
		run_default(f, TH_CMD(TH_PROBE, "openw", paths[i]));
		compact(f->fx.out.out, out, sizeof(out));
		if (has_ok_line(f->fx.out.out))
			conclude(f, V_ESCAPED, "%s opened for writing: %s", paths[i], out);
		if (strcmp(f->fx.out.out, "ERR ENOENT 2\n") != 0 || f->fx.out.code != 1)
			conclude(f, V_UNEXPECTED, "%s: %s (expected ERR ENOENT 2)", paths[i], out);
		if (off < sizeof(ev))
			off += (size_t)snprintf(ev + off, sizeof(ev) - off, "%s%s: %s",
						off ? "; " : "", paths[i], out);
	}
	conclude(f, V_BLOCKED, "%s", ev);
}

static void att_proc_self_cgroup(struct esc_fx *f)
{
	run_default(f, TH_CMD(TH_PROBE, "cat", "/proc/self/cgroup"));
	char out[300];
	compact(f->fx.out.out, out, sizeof(out));
	if (f->fx.out.code != 0 || !f->fx.out.out[0])
		conclude(f, V_UNEXPECTED, "%s, exit %d", out, f->fx.out.code);
	int lines = 0;
	for (const char *l = f->fx.out.out; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		if (len < 2 || l[len - 2] != ':' || l[len - 1] != '/')
			conclude(f, V_ESCAPED, "a host cgroup path shows: %.*s", (int)len, l);
		lines++;
		l += len + (nl != NULL);
	}
	conclude(f, V_BLOCKED, "%d lines, every path \"/\": %s", lines, out);
}

/* ---------------------------------------------------------------------------------------- */
/* Executables and descriptors                                                              */

static void att_self_exe(struct esc_fx *f)
{
	char probe[PATH_MAX];
	th_ws_path(&f->fx.ws, "probe", probe);
	run_default(f, TH_CMD(TH_PROBE, "openw", "/proc/self/exe"));
	if (!same_bytes(probe, th_probe()))
		conclude(f, V_ESCAPED, "the probe binary changed on the host");
	const char *const want[3] = { "ERR ETXTBSY 26\n", "ERR EROFS 30\n", "ERR EACCES 13\n" };
	judge(f, want, 1, NULL, "; the binary on the host is unchanged (bytes compared)");
}

static void att_host_exe(struct esc_fx *f)
{
	/* The shell opens /proc/self/exe (itself: a host binary on a read-only bind) for
	 * appending, as a redirection of a builtin; nothing is ever written. */
	struct stat before, after;
	assert_int_equal(stat("/bin/sh", &before), 0);
	run_default(f, TH_CMD("/bin/sh", "-c",
			      "if true 3>>/proc/self/exe; then echo OK; else echo ERR; fi"));
	assert_int_equal(stat("/bin/sh", &after), 0);
	char err[200];
	compact(f->fx.out.err, err, sizeof(err));
	if (before.st_size != after.st_size || before.st_mtim.tv_sec != after.st_mtim.tv_sec ||
	    before.st_mtim.tv_nsec != after.st_mtim.tv_nsec ||
	    before.st_ctim.tv_nsec != after.st_ctim.tv_nsec)
		conclude(f, V_ESCAPED, "/bin/sh changed on the host");
	if (strcmp(f->fx.out.out, "OK\n") == 0)
		conclude(f, V_ESCAPED, "/bin/sh opened its own binary for writing");
	/* Refused by permissions (host root is unmapped inside), the read-only bind, or the
	 * running binary's write lock: any of them keeps the host binary whole. */
	const bool refused = strstr(f->fx.out.err, "Permission denied") ||
			     strstr(f->fx.out.err, "Read-only file system") ||
			     strstr(f->fx.out.err, "Text file busy");
	if (strcmp(f->fx.out.out, "ERR\n") != 0 || f->fx.out.code != 0 || !refused) {
		char out[64];
		compact(f->fx.out.out, out, sizeof(out));
		conclude(f, V_UNEXPECTED, "stdout '%s', exit %d, stderr '%s'", out, f->fx.out.code,
			 err);
	}
	conclude(f, V_BLOCKED, "ERR; %s; /bin/sh unchanged on the host", err);
}

static void att_leaked_fd(struct esc_fx *f)
{
	/* Descriptors without O_CLOEXEC in warden's own process, as a careless parent leaves. */
	assert_int_equal(fcntl(7, F_GETFD), -1);
	int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, 7), 7);
	(void)close(fd);
	keep_fd(f, 7);
	struct th_opts o = opts(f);
	char seen[64];
	control(f, &o, TH_CMD(TH_PROBE, "fds"), "", seen, sizeof(seen));
	if (!th_has_line(f->fx.out.out, "7"))
		conclude(f, V_UNEXPECTED, "control: fd 7 did not reach the probe outside: %s",
			 seen);
	run(f, &o, TH_CMD(TH_PROBE, "fds"));
	char out[120];
	compact(f->fx.out.out, out, sizeof(out));
	if (strcmp(f->fx.out.out, "0\n1\n2\n") == 0 && f->fx.out.code == 0) {
		conclude(f, V_BLOCKED, "fds %s (fd 7 was open in warden; outside: %s)", out, seen);
		return;
	}
	conclude(f, th_has_line(f->fx.out.out, "7") ? V_ESCAPED : V_UNEXPECTED,
		 "fds %s, exit %d (expected 0 1 2)", out, f->fx.out.code);
}

/* ---------------------------------------------------------------------------------------- */
/* Bombs held by limits                                                                     */

static void att_fork_bomb(struct esc_fx *f)
{
	run_default(f, TH_CMD(TH_PROBE, "forkbomb", "1000"));
	long forked = -1;
	char out[120], pol[160];
	compact(f->fx.out.out, out, sizeof(out));
	policy_note(f, pol, sizeof(pol));
	if (sscanf(f->fx.out.out, "FORKED %ld", &forked) != 1)
		conclude(f, V_UNEXPECTED, "no FORKED line: %s, exit %d", out, f->fx.out.code);
	if (forked >= 64)
		conclude(f, V_ESCAPED, "%s under pids 64%s", out, pol);
	/* forkbomb ends by SIGKILLing its process group, itself included. */
	if (forked < 1 || f->fx.out.code != 128 + SIGKILL)
		conclude(f, V_UNEXPECTED, "%s, exit %d", out, f->fx.out.code);
	conclude(f, V_BLOCKED, "%s of 1000 (fork failed at the limit), exit %d%s", out,
		 f->fx.out.code, pol);
}

static void att_memory_bomb(struct esc_fx *f)
{
	char rec[PATH_MAX], out[200], pol[160];
	th_aux_path(&f->fx.ws, "record", rec);
	struct th_opts o = opts(f);
	o.record = rec;
	run(f, &o, TH_CMD(TH_PROBE, "membomb", "1024"));
	compact(f->fx.out.out, out, sizeof(out));
	policy_note(f, pol, sizeof(pol));
	long most = 0;
	for (const char *l = f->fx.out.out; l && *l; l = strchr(l, '\n')) {
		long mib;
		if (*l == '\n')
			l++;
		if (sscanf(l, "TOUCHED %ld", &mib) == 1 && mib > most)
			most = mib;
	}
	if (most >= 128)
		conclude(f, V_ESCAPED, "touched %ld MiB under a 128 MiB limit%s", most, pol);
	th_record_reload(&f->fx.record, rec);
	const char *reason = th_json_str(f->fx.record, "exit.reason");
	const int kills = (int)th_json_num(f->fx.record, "resources.oom_kills");
	if (f->fx.out.code != 128 + SIGKILL || strcmp(reason, "oom") != 0 || kills < 1)
		conclude(f, V_UNEXPECTED, "%s, exit %d, reason %s, oom_kills %d", out,
			 f->fx.out.code, reason, kills);
	conclude(f, V_BLOCKED, "%s%sexit %d, reason %s, oom_kills %d%s", out, out[0] ? "; " : "",
		 f->fx.out.code, reason, kills, pol);
}

static void att_workspace_disk_bomb(struct esc_fx *f)
{
	char big[PATH_MAX], note[96];
	th_ws_path(&f->fx.ws, "bomb", big);
	run_default(f, TH_CMD(TH_PROBE, "fill", "/workspace/bomb", "64"));
	struct stat st;
	const long long size = stat(big, &st) == 0 ? (long long)st.st_size : -1;
	if (size > 8ll << 20)
		conclude(f, V_ESCAPED, "the host file is %lld bytes under fsize 8M", size);
	(void)snprintf(note, sizeof(note), "; host file %lld bytes", size);
	/* The kernel raises SIGXFSZ (blocked by the probe) and the write fails with EFBIG. */
	const char *const want[3] = { "WROTE 8\nSIGXFSZ\nERR EFBIG 27\n", NULL, NULL };
	judge(f, want, 1, "OK 0", note);
}

static void att_daemon(struct esc_fx *f)
{
	th_marker("warden-escape-daemon", f->fx.marker, sizeof(f->fx.marker));
	struct th_opts o = opts(f);
	struct th_proc p;
	assert_int_equal(th_spawn(&o, TH_CMD(TH_PROBE, "daemon", "1000", f->fx.marker), &p), 0);
	const bool started = th_wait_stdout(&p, "DAEMON ", 10000);
	/* Control: while the run lasts, the host sees the probe and its daemon. */
	const int during = started ? th_count_procs(f->fx.marker, "probe", p.pid) : -1;
	th_fx_finish(&f->fx, &p);
	const int after = th_count_procs(f->fx.marker, NULL, 0);
	char out[64];
	compact(f->fx.out.out, out, sizeof(out));
	if (after != 0)
		conclude(f, V_ESCAPED, "%d process(es) tagged %s outlived warden", after,
			 f->fx.marker);
	if (!started || during < 1 || f->fx.out.code != 0)
		conclude(f, V_UNEXPECTED, "%s, exit %d, %d tagged process(es) during the run", out,
			 f->fx.out.code, during);
	conclude(f, V_BLOCKED, "%s (double-forked, setsid); tagged host processes: %d during the "
		 "run, 0 after warden returned", out, during);
}

/* ---------------------------------------------------------------------------------------- */
/* The table                                                                                */

#define EPERM_ "ERR EPERM 1\n"
#define ENOENT_ "ERR ENOENT 2\n"
#define EROFS_ "ERR EROFS 30\n"
#define EACCES_ "ERR EACCES 13\n"
#define EAFNO_ "ERR EAFNOSUPPORT 97\n"
/* A probe command refused with one answer, exit 1. */
#define REFUSED(n, want_, ...) { .name = n, .cmd = TH_CMD(TH_PROBE, __VA_ARGS__), \
				 .want = { want_ }, .code = 1 }
#define SYSCALL(n) REFUSED(n, EPERM_, "syscall", n)
#define CUSTOM(n, fn) { .name = n, .run = fn }

static void run_attack(void **state)
{
	struct esc_fx *f = *state;
	if (f->a->run)
		f->a->run(f);
	else
		att_generic(f);
	if (f->row->v == V_PENDING)
		conclude(f, V_UNEXPECTED, "the attack reached no verdict");
}

static const struct attack attacks[] = {
	/* Other processes */
	REFUSED("ptrace-attach-worker-pid1", EPERM_, "ptrace", "1"),
	REFUSED("ptrace-attach-sibling", EPERM_, "ptrace", "sibling"),
	{ .name = "ptrace-attach-own-child", .cmd = TH_CMD(TH_PROBE, "ptrace", "child"),
	  .want = { EPERM_ }, .code = 1, .control = "OK 0\n" },
	REFUSED("process_vm_readv-worker-pid1", EPERM_, "vmread", "1"),
	{ .name = "process_vm_readv-own-child", .cmd = TH_CMD(TH_PROBE, "vmread", "child"),
	  .want = { EPERM_ }, .code = 1, .control = "OK 1\n" },
	CUSTOM("kill-host-pid-of-test", att_kill_test_pid),
	/* SIGTERM: had it arrived, warden would have killed the sandbox and exited 143. */
	REFUSED("kill-host-pid-of-warden", "ERR ESRCH 3\n", "kill", TH_WARDEN_PID, "15"),
	REFUSED("kill-broadcast-minus-1", "ERR ESRCH 3\n", "kill", "-1", "0"),
	CUSTOM("sigkill-worker-pid1", att_kill_worker),
	/* The mount table, the root, namespaces */
	SYSCALL("mount"),
	REFUSED("umount2-usr", EPERM_, "syscall", "umount2"),
	SYSCALL("pivot_root"),
	CUSTOM("chroot-then-fd-and-dotdot-breakout", att_chroot_breakout),
	/* One line: refused at unshare, the mount never tried. */
	REFUSED("unshare-newuser-then-mount", EPERM_, "userns-mount"),
	REFUSED("clone-newuser", EPERM_, "syscall", "clone-newuser"),
	REFUSED("unshare-newnet", EPERM_, "syscall", "unshare-net"),
	/* pid 1 is the worker, hidden (hidepid=invisible): the open fails first. */
	{ .name = "setns-proc1-ns-mnt", .cmd = TH_CMD(TH_PROBE, "setns", "/proc/1/ns/mnt"),
	  .want = { ENOENT_, EACCES_ }, .code = 1 },
	{ .name = "setns-proc1-ns-user", .cmd = TH_CMD(TH_PROBE, "setns", "/proc/1/ns/user"),
	  .want = { ENOENT_, EACCES_ }, .code = 1 },
	{ .name = "setns-proc-self-ns-net", .cmd = TH_CMD(TH_PROBE, "setns", "/proc/self/ns/net"),
	  .want = { EPERM_ }, .code = 1, .control = "OK 0\n" },
	/* Kernel attack surface */
	SYSCALL("open_by_handle_at"),
	SYSCALL("name_to_handle_at"),
	SYSCALL("kexec_load"),
	SYSCALL("kexec_file_load"),
	SYSCALL("init_module"),
	SYSCALL("finit_module"),
	SYSCALL("delete_module"),
	SYSCALL("bpf"),
	SYSCALL("perf_event_open"),
	SYSCALL("userfaultfd"),
	SYSCALL("io_uring_setup"),
	SYSCALL("keyctl"),
	SYSCALL("add_key"),
	SYSCALL("request_key"),
	SYSCALL("reboot"),
	SYSCALL("swapon"),
	SYSCALL("swapoff"),
	SYSCALL("acct"),
	SYSCALL("settimeofday"),
	SYSCALL("clock_settime"),
	/* modes 0 is a query the kernel grants anyone: only the filter refuses it. */
	{ .name = "adjtimex", .cmd = TH_CMD(TH_PROBE, "syscall", "adjtimex"),
	  .want = { EPERM_ }, .code = 1, .control = "OK " },
	SYSCALL("iopl"),
	SYSCALL("ioperm"),
	REFUSED("personality-read-implies-exec", EPERM_, "syscall", "personality"),
	SYSCALL("personality-addr-no-randomize"),
	/* The terminal warden was started on */
	{ .name = "tiocsti-inherited-pty", .cmd = TH_CMD(TH_PROBE, "tiocsti"),
	  .want = { EPERM_ }, .code = 1, .pty = true, .control = "OK 0\n" },
	{ .name = "tioclinux-inherited-pty", .cmd = TH_CMD(TH_PROBE, "tioclinux"),
	  .want = { EPERM_ }, .code = 1, .pty = true },
	/* Privilege */
	REFUSED("mknod-char-device", EPERM_, "syscall", "mknod"),
	CUSTOM("setuid-root-binary", att_setuid_binary),
	CUSTOM("setid-chmod-copied-shell", att_setid_chmod),
	CUSTOM("setid-mode-syscalls", att_setid_syscalls),
	CUSTOM("leftover-capabilities", att_capabilities),
	/* Secrets */
	CUSTOM("read-host-secret-file", att_host_secret_file),
	{ .name = "read-etc-shadow", .cmd = TH_CMD(TH_PROBE, "cat", "/etc/shadow"),
	  .want = { ENOENT_ }, .code = 1, .host_path = "/etc/shadow", .escape = ":" },
	CUSTOM("scan-proc-environ-of-host-process", att_proc_environ),
	CUSTOM("host-environment-variable", att_env_leak),
	/* Writes outside the workspace */
	{ .name = "write-usr-bin", .cmd = TH_CMD(TH_PROBE, "write", "/usr/bin/warden-escape"),
	  .want = { EROFS_ }, .code = 1 },
	{ .name = "write-etc-passwd", .cmd = TH_CMD(TH_PROBE, "write", "/etc/passwd"),
	  .want = { EROFS_, EACCES_ }, .code = 1 },
	{ .name = "write-proc-sys-kernel-hostname",
	  .cmd = TH_CMD(TH_PROBE, "write", "/proc/sys/kernel/hostname"),
	  .want = { EROFS_ }, .code = 1 },
	{ .name = "open-proc-sys-kernel-core_pattern-rw",
	  .cmd = TH_CMD(TH_PROBE, "openw", "/proc/sys/kernel/core_pattern"),
	  .want = { EROFS_, EACCES_ }, .code = 1 },
	CUSTOM("proc-sysrq-trigger", att_sysrq),
	{ .name = "open-sys-kernel-uevent_helper-rw",
	  .cmd = TH_CMD(TH_PROBE, "openw", "/sys/kernel/uevent_helper"),
	  .want = { ENOENT_ }, .code = 1, .host_path = "/sys/kernel/uevent_helper" },
	{ .name = "open-dev-mem-rw", .cmd = TH_CMD(TH_PROBE, "openw", "/dev/mem"),
	  .want = { ENOENT_ }, .code = 1, .host_path = "/dev/mem" },
	{ .name = "open-dev-kmsg-rw", .cmd = TH_CMD(TH_PROBE, "openw", "/dev/kmsg"),
	  .want = { ENOENT_ }, .code = 1, .host_path = "/dev/kmsg" },
	CUSTOM("open-host-block-device-rw", att_block_device),
	/* Network */
	CUSTOM("tcp-connect-host-loopback", att_tcp_host),
	CUSTOM("udp-send-host-loopback", att_udp_host),
	REFUSED("af_packet-socket", EAFNO_, "syscall", "socket-packet"),
	/* The family is allowed; the kernel wants CAP_NET_RAW, which nothing inside has. */
	{ .name = "af_inet-sock_raw-socket", .cmd = TH_CMD(TH_PROBE, "syscall", "socket-raw"),
	  .want = { EPERM_, EAFNO_ }, .code = 1, .control = "OK " },
	REFUSED("af_vsock-socket", EAFNO_, "syscall", "socket-vsock"),
	CUSTOM("netlink-getlink-dump", att_rtlinks),
	/* cgroups */
	CUSTOM("write-cgroup-procs", att_cgroup_procs),
	CUSTOM("proc-self-cgroup", att_proc_self_cgroup),
	/* Executables and descriptors */
	CUSTOM("overwrite-proc-self-exe", att_self_exe),
	CUSTOM("overwrite-host-sh-via-proc-self-exe", att_host_exe),
	{ .name = "open-worker-exe-proc1", .cmd = TH_CMD(TH_PROBE, "openw", "/proc/1/exe"),
	  .want = { ENOENT_, EACCES_ }, .code = 1 },
	CUSTOM("fd-leaked-into-warden", att_leaked_fd),
	{ .name = "list-worker-fds-proc1", .cmd = TH_CMD(TH_PROBE, "ls", "/proc/1/fd"),
	  .want = { ENOENT_, EACCES_ }, .code = 1, .escape = "0\n" },
	/* Bombs, each held by one lowered limit */
	{ .name = "fork-bomb", .run = att_fork_bomb, .policy = "limits: { pids: 64 }\n" },
	{ .name = "memory-bomb", .run = att_memory_bomb, .policy = "limits: { memory: 128M }\n" },
	{ .name = "disk-bomb-tmp", .cmd = TH_CMD(TH_PROBE, "fill", "/tmp/bomb", "64"),
	  .want = { "WROTE 16\nERR ENOSPC 28\n" }, .code = 1, .escape = "OK 0",
	  .policy = "limits: { tmpfs: 16M }\n" },
	{ .name = "disk-bomb-workspace", .run = att_workspace_disk_bomb,
	  .policy = "limits: { fsize: 8M }\n" },
	{ .name = "fd-bomb", .cmd = TH_CMD(TH_PROBE, "nofile", "100000"),
	  .want = { "OPENED 253\nERR EMFILE 24\n" }, .code = 1, .escape = "OPENED 100000",
	  .policy = "limits: { nofile: 256 }\n" },
	CUSTOM("daemon-outlives-sandbox", att_daemon),
};

#define N_ATTACKS (sizeof(attacks) / sizeof(attacks[0]))

static struct row rows[N_ATTACKS];

static void print_table(void)
{
	size_t w = strlen("attack");
	for (size_t i = 0; i < N_ATTACKS; i++)
		if (strlen(attacks[i].name) > w)
			w = strlen(attacks[i].name);
	size_t blocked = 0;
	printf("\n%-*s | %-10s | %s\n", (int)w, "attack", "result", "evidence");
	for (size_t i = 0; i < w; i++)
		putchar('-');
	printf("-|------------|---------\n");
	for (size_t i = 0; i < N_ATTACKS; i++) {
		const struct row *r = &rows[i];
		const enum verdict v = r->v;
		blocked += v == V_BLOCKED;
		printf("%-*s | %-10s | %s\n", (int)w, attacks[i].name, verdict_name(v),
		       v == V_PENDING && !r->evidence[0] ? "not run" : r->evidence);
	}
	printf("\n%zu of %zu attacks blocked\n", blocked, N_ATTACKS);
	(void)fflush(stdout);
}

int main(void)
{
	th_require_privileged();

	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	(void)sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) < 0) {
		perror("sigaction");
		return 1;
	}

	struct CMUnitTest *tests = calloc(N_ATTACKS, sizeof(*tests));
	if (!tests)
		return 1;
	for (size_t i = 0; i < N_ATTACKS; i++) {
		rows[i].a = &attacks[i];
		tests[i] = (struct CMUnitTest){ attacks[i].name, run_attack, fx_setup, fx_teardown,
						&rows[i] };
	}
	const int failed = _cmocka_run_group_tests("escape", tests, N_ATTACKS, NULL, NULL);
	free(tests);
	print_table();
	bool all_blocked = true;
	for (size_t i = 0; i < N_ATTACKS; i++)
		all_blocked = all_blocked && rows[i].v == V_BLOCKED;
	return failed || !all_blocked ? 1 : 0;
}
