/* SPDX-License-Identifier: MIT */
/*
 * A valgrind memcheck pass over the supervisor: `warden run -- /workspace/probe exit 0` (with
 * a record), `warden run` with a bad policy, and `warden policy check` of a good and of a bad
 * policy, each under
 *
 *   valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
 *            --track-fds=no --trace-children=no
 *
 * (the supervisor's child execs the worker, which is not checked), asserting zero errors. A
 * control first runs this program itself under the same options with a deliberate leak, to
 * show that an error is seen.
 *
 * valgrind has no wrapper for some recent syscalls (3.19, Debian 12's, lacks seccomp,
 * pidfd_open, openat2, mount_setattr, ...): it answers ENOSYS and says "unhandled ... syscall"
 * in its log. warden then refuses the step that needs it (fail-closed), so memcheck covers the
 * path up to that step and the refusal's teardown, and the test asserts that refusal instead of
 * the success that a complete valgrind would give; it prints which syscalls were missing.
 *
 * Needs full privilege (warden run); otherwise exits 77, or fails under SBX_TEST_MUST_WORK=1,
 * as it does when valgrind is not installed. meson does not build it with sanitizers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rel.h"

#define VG_TIMEOUT_MS 120000u
#define LOG_MAX (1u << 20)
#define LEAK_CONTROL "--leak-control"

static const char *valgrind_path;

/* One test's fixture: the harness's first (see struct th_fx), then valgrind's side. */
struct vg_fx {
	struct th_fx fx;
	char log[PATH_MAX];
	char rec[PATH_MAX];
	char good[PATH_MAX];
	char bad[PATH_MAX];
	char *log_text;
	int errors;                 /* from valgrind's ERROR SUMMARY; -1 when absent */
	char unhandled[256];        /* syscall numbers valgrind did not handle */
};

static int fx_setup(void **state)
{
	if (th_fx_setup(state, sizeof(struct vg_fx), 0, 0) < 0)
		return -1;
	struct vg_fx *f = *state;
	th_aux_path(&f->fx.ws, "valgrind.log", f->log);
	th_aux_path(&f->fx.ws, "record", f->rec);
	th_policy(&f->fx.ws, "limits: { memory: 64M, pids: 64 }\n", f->good);
	th_policy(&f->fx.ws, "limits: { memory: lots }\n", f->bad);
	return 0;
}

static int fx_teardown(void **state)
{
	struct vg_fx *f = *state;
	free(f->log_text);
	th_fx_free(&f->fx);
	return 0;
}

/* Runs `valgrind OPTIONS cmd...`; fills f->fx.out, f->errors and f->unhandled. */
static void vg_run(struct vg_fx *f, const char *const *cmd)
{
	char log_opt[PATH_MAX + 16];
	(void)snprintf(log_opt, sizeof(log_opt), "--log-file=%s", f->log);
	const char *const valgrind[] = { valgrind_path, log_opt, "--error-exitcode=99",
					 "--leak-check=full", "--errors-for-leak-kinds=definite",
					 "--track-fds=no", "--trace-children=no", NULL };
	struct th_opts o = { .direct = true, .hard_timeout_ms = VG_TIMEOUT_MS,
			     .prefix = valgrind };
	th_fx_run(&f->fx, &o, cmd);

	free(f->log_text);
	f->log_text = th_read_file(f->log, LOG_MAX, false, NULL);
	if (!f->log_text)
		fail_msg("no valgrind log at %s: %s", f->log, strerror(errno));
	f->errors = -1;
	const char *s = strstr(f->log_text, "ERROR SUMMARY: ");
	if (s)
		f->errors = atoi(s + strlen("ERROR SUMMARY: "));
	f->unhandled[0] = '\0';
	for (s = f->log_text; (s = strstr(s, "WARNING: unhandled ")); s++) {
		const char *num = strstr(s, "syscall: ");
		const char *eol = strchr(s, '\n');
		if (!num || (eol && num > eol))
			continue;
		size_t used = strlen(f->unhandled);
		int k = atoi(num + strlen("syscall: "));
		char tag[16];
		(void)snprintf(tag, sizeof(tag), " %d ", k);
		char padded[sizeof(f->unhandled) + 2];
		(void)snprintf(padded, sizeof(padded), " %s ", f->unhandled);
		if (!strstr(padded, tag))
			(void)snprintf(f->unhandled + used, sizeof(f->unhandled) - used, "%s%d",
				       used ? " " : "", k);
	}
}

/* Shows the run and valgrind's log, for a failure's context. */
static void show_with_log(const struct vg_fx *f)
{
	th_show(&f->fx.out);
	th_print_long("valgrind log", f->log_text ? f->log_text : "");
}

/* memcheck saw nothing: no error, no definite leak. */
static void expect_clean(const struct vg_fx *f)
{
	if (f->fx.out.code == 99 || f->errors != 0 || f->fx.out.hard_timeout)
		show_with_log(f);
	assert_false(f->fx.out.hard_timeout);
	assert_int_not_equal(f->fx.out.code, 99);
	assert_int_equal(f->errors, 0);
}

/*
 * The exit code: want, or, when valgrind could not handle a syscall warden needed, the code
 * of warden's refusal.
 */
static void expect_code(const struct vg_fx *f, int want, int refused)
{
	int code = f->unhandled[0] ? refused : want;
	if (f->unhandled[0])
		print_message("valgrind did not handle syscall(s) %s: warden refused with exit %d: "
			      "%s", f->unhandled, f->fx.out.code, f->fx.out.err);
	if (f->fx.out.code != code)
		show_with_log(f);
	assert_int_equal(f->fx.out.code, code);
}

/* Control: memcheck under these options reports a definite leak as an error (exit 99). */
static void test_memcheck_sees_a_leak(void **state)
{
	struct vg_fx *f = *state;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	vg_run(f, TH_CMD(self, LEAK_CONTROL));
	if (f->fx.out.code != 99 || f->errors < 1)
		show_with_log(f);
	assert_int_equal(f->fx.out.code, 99);
	assert_true(f->errors >= 1);
	assert_non_null(strstr(f->log_text, "definitely lost"));
}

static void test_run_exit0(void **state)
{
	struct vg_fx *f = *state;
	vg_run(f, TH_CMD(th_warden(), "run", "--workspace", f->fx.ws.dir, "--record", f->rec, "--",
			 TH_PROBE, "exit", "0"));
	expect_clean(f);
	expect_code(f, 0, 125);
	cJSON *r = th_record_load(f->rec);
	assert_string_equal(th_json_str(r, "exit.reason"), f->unhandled[0] ? "setup-failed"
								      : "exited");
	cJSON_Delete(r);
}

static void test_run_bad_policy(void **state)
{
	struct vg_fx *f = *state;
	vg_run(f, TH_CMD(th_warden(), "run", "--workspace", f->fx.ws.dir, "--policy", f->bad,
			 "--record", f->rec, "--", TH_PROBE, "exit", "0"));
	expect_clean(f);
	expect_code(f, 125, 125);
	char where[PATH_MAX + 8];
	(void)snprintf(where, sizeof(where), "%s:1:", f->bad);
	th_fx_expect_err_has(&f->fx, where);
	cJSON *r = th_record_load(f->rec);
	assert_string_equal(th_json_str(r, "exit.reason"), "setup-failed");
	cJSON_Delete(r);
}

static void test_policy_check_good(void **state)
{
	struct vg_fx *f = *state;
	vg_run(f, TH_CMD(th_warden(), "policy", "check", f->good));
	expect_clean(f);
	/* Without seccomp(2), libseccomp cannot tell the kernel's API level: the check fails. */
	expect_code(f, 0, 2);
}

static void test_policy_check_bad(void **state)
{
	struct vg_fx *f = *state;
	vg_run(f, TH_CMD(th_warden(), "policy", "check", f->bad));
	expect_clean(f);
	expect_code(f, 2, 2);
	char where[PATH_MAX + 8];
	(void)snprintf(where, sizeof(where), "%s:1:", f->bad);
	th_fx_expect_err_has(&f->fx, where);
}

/* ---------------------------------------------------------------------------------------- */

static const char *find_valgrind(void)
{
	const char *v = secure_getenv("VALGRIND");
	if (v && *v && access(v, X_OK) == 0)
		return v;
	static const char *const candidates[] = { "/usr/bin/valgrind", "/usr/local/bin/valgrind" };
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

/* A test named after its function, without the "test_" prefix. */
#define T(fn) { &#fn[5], fn, fx_setup, fx_teardown, NULL }

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], LEAK_CONTROL) == 0) {
		/* The control's deliberate leak: the only pointer to the block is overwritten. */
		char *volatile p = malloc(64);
		if (p)
			memset(p, 1, 64);
		p = NULL;
		return 0;
	}
	th_require_privileged();
	valgrind_path = find_valgrind();
	if (!valgrind_path)
		th_cannot_run("valgrind is not installed (apt-get install valgrind)");
	const struct CMUnitTest tests[] = {
		T(test_memcheck_sees_a_leak),
		T(test_run_exit0),
		T(test_run_bad_policy),
		T(test_policy_check_good),
		T(test_policy_check_bad),
	};
	return cmocka_run_group_tests_name("reliability-valgrind", tests, NULL, NULL);
}
