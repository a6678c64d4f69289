/* SPDX-License-Identifier: MIT */
/*
 * Inputs that used to break warden's own checks, and the default policy's gaps (#15), each in
 * a real sandbox:
 *
 *  - a caller with many supplementary groups, whose ids make the worker's Groups line in
 *    /proc/<pid>/status longer than any fixed line buffer (unprivileged mode keeps them);
 *  - --record paths that warden must refuse before anything starts: a file, and a folder
 *    reached through a symlink in the middle of the path;
 *  - a parent that ignores SIGCHLD, which warden (and its worker) inherit;
 *  - the default policy: /etc/services and /etc/protocols in the sandbox, and a syscall it
 *    deliberately refuses (sethostname) answering EPERM, where an unknown one answers ENOSYS.
 *
 * Runs as root (privileged mode; the unprivileged case through setpriv as uid 65534).
 */
#include <errno.h>
#include <libgen.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define NOBODY 65534u
/* Enough supplementary groups of 10-digit ids to make a Groups line of 770 bytes. */
#define MANY_GROUPS 70u

static int fx_setup_root(void **state)
{
	return th_fx_setup(state, sizeof(struct th_fx), 0, 0);
}

static int fx_setup_nobody(void **state)
{
	return th_fx_setup(state, sizeof(struct th_fx), NOBODY, NOBODY);
}

/* ---- a long status line --------------------------------------------------------------------- */

/*
 * warden run as uid 65534 with MANY_GROUPS supplementary groups: the worker's Groups line (the
 * host's ids, since an unprivileged sandbox cannot drop them) is far over 512 bytes, and must
 * stop neither the worker's own claim nor the supervisor's attestation.
 */
static void test_long_status_line(void **state)
{
	struct th_fx *f = *state;
	const char *setpriv = th_setpriv();
	if (!setpriv)
		th_cannot_run("setpriv (util-linux) is needed to run warden with many groups");
	static char groups[16 + MANY_GROUPS * 11];
	size_t len = (size_t)snprintf(groups, sizeof(groups), "--groups=");
	for (unsigned i = 0; i < MANY_GROUPS; i++)
		len += (size_t)snprintf(groups + len, sizeof(groups) - len, "%s%u", i ? "," : "",
					1000000000u + i);
	assert_true(len < sizeof(groups));
	char pol[PATH_MAX], rec[PATH_MAX];
	th_policy(&f->ws, "unsafe: [no-cgroup]\n", pol);
	th_aux_path(&f->ws, "record", rec);
	const char *const cmd[] = { setpriv, "--reuid=65534", "--regid=65534", groups,
				    "--inh-caps=-all", "--bounding-set=-all", th_warden(), "run",
				    "--workspace", f->ws.dir, "--workspace-mode", "direct",
				    "--policy", pol, "--record", rec, "--", TH_PROBE, "exit", "7",
				    NULL };
	struct th_opts o = { .direct = true };
	th_fx_run(f, &o, cmd);
	th_fx_expect(f, 7, NULL);
	th_record_reload(&f->record, rec);
	assert_string_equal(th_json_str(f->record, "sandbox.mode"), "unprivileged");
	assert_true(th_json_bool(f->record, "identity.held"));
	assert_int_equal((int)th_json_num(f->record, "worker.exit_status"), 0);
}

/* ---- the record folder ---------------------------------------------------------------------- */

/*
 * Runs a command that leaves /workspace/ran behind (workspace mode direct, so it would be there
 * at once) with --record dir, which warden must refuse before anything starts: exit 125 with
 * what failed, and the command never ran.
 */
static void expect_record_refused_early(struct th_fx *f, const char *dir)
{
	struct th_opts o = th_fx_opts(f, NULL);
	o.ws_mode = "direct";
	o.record = dir;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "write", "/workspace/ran"));
	if (th_ws_exists(&f->ws, "ran")) {
		th_show(&f->out);
		fail_msg("the command ran although --record %s was refused", dir);
	}
	th_fx_expect(f, 125, NULL);
	th_fx_expect_err_has(f, "open the record folder");
}

/* A --record that names a file: refused before the command runs, the file untouched. */
static void test_record_is_file(void **state)
{
	struct th_fx *f = *state;
	char file[PATH_MAX];
	th_aux_path(&f->ws, "file", file);
	th_put_file(file, "not a folder\n");
	expect_record_refused_early(f, file);
	th_expect_file(file, "not a folder\n");
}

/*
 * A symlink in the middle of the --record path (as an earlier sandbox could plant in a folder
 * it wrote): refused, not followed, and nothing is made where it points.
 */
static void test_record_symlink_in_path(void **state)
{
	struct th_fx *f = *state;
	char real[PATH_MAX], link[PATH_MAX], rec[PATH_MAX], where[PATH_MAX];
	th_aux_path(&f->ws, "real", real);
	th_aux_path(&f->ws, "link", link);
	assert_int_equal(mkdir(real, 0755), 0);
	assert_int_equal(symlink(real, link), 0);
	th_pathf(rec, "%s/record", link);
	expect_record_refused_early(f, rec);
	th_pathf(where, "%s/record", real);
	struct stat st;
	assert_int_equal(lstat(where, &st), -1);
	assert_int_equal(errno, ENOENT);
}

/* Control: a missing last component is created, and the record lands in it. */
static void test_record_created(void **state)
{
	struct th_fx *f = *state;
	char rec[PATH_MAX];
	th_aux_path(&f->ws, "fresh", rec);
	struct th_opts o = th_fx_opts(f, NULL);
	o.record = rec;
	th_fx_run(f, &o, TH_CMD(TH_PROBE, "exit", "0"));
	th_fx_expect(f, 0, NULL);
	th_record_reload(&f->record, rec);
	assert_string_equal(th_json_str(f->record, "exit.reason"), "exited");
}

/* ---- a parent that ignores SIGCHLD ---------------------------------------------------------- */

/*
 * warden started with SIGCHLD ignored (env --ignore-signal; the disposition survives exec):
 * children would be reaped by the kernel unseen, and no SIGCHLD would ever reach the worker's
 * signalfd. warden resets it; the run ends with the command's own status, its worker reaped.
 */
static void test_sigchld_ignored(void **state)
{
	struct th_fx *f = *state;
	char rec[PATH_MAX];
	th_aux_path(&f->ws, "record", rec);
	const char *const cmd[] = { "/usr/bin/env", "--ignore-signal=CHLD", th_warden(), "run",
				    "--workspace", f->ws.dir, "--record", rec, "--", TH_PROBE,
				    "exit", "7", NULL };
	struct th_opts o = { .direct = true, .hard_timeout_ms = 20000 };
	th_fx_run(f, &o, cmd);
	th_fx_expect(f, 7, NULL);
	th_record_reload(&f->record, rec);
	assert_int_equal((int)th_json_num(f->record, "exit.status"), 7);
	assert_int_equal((int)th_json_num(f->record, "worker.exit_status"), 0);
}

/* ---- the default policy --------------------------------------------------------------------- */

/* Services and protocols by name (getservbyname, getaddrinfo with a service) need these. */
static void test_etc_services_protocols(void **state)
{
	struct th_fx *f = *state;
	static const char *const files[] = { "/etc/services", "/etc/protocols" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct stat st;
		if (stat(files[i], &st) < 0)
			continue; /* the host has none to bind */
		th_fx_run(f, NULL, TH_CMD(TH_PROBE, "open", files[i]));
		th_fx_expect(f, 0, NULL);
	}
}

/*
 * A syscall the default policy knows and refuses answers EPERM, so a program says it was not
 * permitted (Debian's `hostname x` used to exit 0 on ENOSYS); one the filter does not know
 * answers ENOSYS, so that libc falls back.
 */
static void test_refused_syscall_eperm(void **state)
{
	struct th_fx *f = *state;
	char nr[16];
	(void)snprintf(nr, sizeof(nr), "%d", (int)SYS_sethostname);
	th_fx_run(f, NULL, TH_CMD(TH_PROBE, "rawsyscall", nr, "0", "0"));
	th_fx_expect(f, 1, "ERR EPERM 1\n");
	th_fx_run(f, NULL, TH_CMD(TH_PROBE, "rawsyscall", "1023"));
	th_fx_expect(f, 1, "ERR ENOSYS 38\n");
}

/* `warden policy seccomp` says which answer each syscall gets before the filter itself. */
static void test_policy_seccomp_lists_answers(void **state)
{
	struct th_fx *f = *state;
	struct th_opts o = { .subcommand = "policy" };
	th_fx_run(f, &o, TH_CMD("seccomp"));
	th_fx_expect(f, 0, NULL);
	const char *out = f->out.out;
	const char *refused = strstr(out, "#   refused, EPERM: known and deliberately left out");
	const char *never = strstr(out, "#   refused, EPERM: never allowed");
	const char *host = strstr(out, " sethostname ");
	const char *ptrace = strstr(out, " ptrace ");
	if (!refused || !never || !host || !ptrace || !(refused < host && host < never) ||
	    !(never < ptrace) || !strstr(out, "#   every other syscall, unknown to this filter: "
					      "ENOSYS") || !strstr(out, "pseudo filter code start"))
		th_print_long("warden policy seccomp", out);
	assert_true(refused && never && host && ptrace);
	assert_true(refused < host && host < never && never < ptrace);
	assert_non_null(strstr(out, "#   every other syscall, unknown to this filter: ENOSYS"));
	assert_non_null(strstr(out, "pseudo filter code start"));
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup_root, th_fx_teardown)

int main(void)
{
	th_require_privileged();
	char worker[PATH_MAX], copy[PATH_MAX];
	(void)snprintf(copy, sizeof(copy), "%s", th_warden());
	if (snprintf(worker, sizeof(worker), "%s/warden-worker", dirname(copy)) >=
	    (int)sizeof(worker))
		th_cannot_run("path too long: %s", th_warden());
	bool nobody = th_userns_available(NOBODY, NOBODY) &&
		      th_executable_by(NOBODY, NOBODY, th_warden()) &&
		      th_executable_by(NOBODY, NOBODY, worker) &&
		      th_executable_by(NOBODY, NOBODY, th_probe());
	if (!nobody && th_must_work())
		th_cannot_run("uid %u cannot create user namespaces or run the build", NOBODY);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_long_status_line, fx_setup_nobody,
						th_fx_teardown),
		T(test_record_is_file),
		T(test_record_symlink_in_path),
		T(test_record_created),
		T(test_sigchld_ignored),
		T(test_etc_services_protocols),
		T(test_refused_syscall_eperm),
		T(test_policy_seccomp_lists_answers),
	};
	/* Without uid 65534's user namespaces, everything but the first test. */
	size_t skip = nobody ? 0 : 1;
	return _cmocka_run_group_tests("priv-hardening", tests + skip,
				       sizeof(tests) / sizeof(tests[0]) - skip, NULL, NULL);
}
