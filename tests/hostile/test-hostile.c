/* SPDX-License-Identifier: MIT */
/*
 * The hostile-worker suite: warden-test runs a real sandbox whose worker is hostile-worker
 * (WARDEN_TEST_WORKER), which attacks the channel in one way per test. Each attack must end
 * with the sandbox killed, warden exiting with the documented code, the exact violation in the
 * run record, and no process of the sandbox left on the host. Under the sanitizer build the
 * same runs also prove the supervisor ASan- and UBSan-clean on every rejection path.
 *
 * Environment (set by meson): WARDEN (warden-test), PROBE (unused here), HOSTILE.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

struct attack;
typedef void check_fn(const struct attack *a, const cJSON *record, const char *text);

struct attack {
	const char *mode;
	int code;               /* warden's exit code */
	const char *reason;     /* exit.reason */
	const char *violation;  /* a substring of violation.reason (or of exit.detail), or NULL */
	const char *alt;        /* an acceptable alternative substring, or NULL */
	int type;               /* violation.type, or -1 when it must be absent */
	const char *env;        /* one more NAME=value of warden-test's environment, or NULL */
	const char *err_has;    /* a substring warden's stderr must hold, or NULL */
	check_fn *check;        /* more checks on the record (and its text), or NULL */
};

#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS 83 /* Linux 6.16, asm-generic/socket.h */
#endif

/* Whether this kernel lets a unix socket refuse descriptors (SO_PASSRIGHTS). */
static bool kernel_has_passrights(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return false;
	int off = 0;
	bool ok = setsockopt(sv[0], SOL_SOCKET, SO_PASSRIGHTS, &off, sizeof(off)) == 0;
	(void)close(sv[0]);
	(void)close(sv[1]);
	return ok;
}

/* The fallback for kernels without SO_PASSRIGHTS, forced in warden-test. */
#define NO_PASSRIGHTS "WARDEN_TEST_NO_PASSRIGHTS=1"
#define FD_REFUSED "hostile: fd passing refused: EPERM"

/* An honest session: the worker's claim is recorded as such, beside its own exit. */
static void check_honest(const struct attack *a, const cJSON *rec, const char *text)
{
	(void)a;
	(void)text;
	assert_int_equal((int)th_json_num(rec, "worker.exit_status"), 0);
	assert_true(cJSON_IsNull(th_json_at(rec, "worker.exit_signal")));
	assert_string_equal(th_json_str(rec, "worker.claimed.how"), "exited");
	assert_int_equal((int)th_json_num(rec, "worker.claimed.code"), 0);
	assert_int_equal((int)th_json_num(rec, "exit.status"), 0);
}

/* The worker claims status 0, then exits 3 itself: the kernel's word and the claim differ. */
static void check_lie_exit(const struct attack *a, const cJSON *rec, const char *text)
{
	(void)a;
	(void)text;
	assert_int_equal((int)th_json_num(rec, "worker.exit_status"), 3);
	assert_int_equal((int)th_json_num(rec, "worker.claimed.code"), 0);
	assert_true(th_json_at(rec, "exit.status") == NULL);
}

/* 2^64-1 in every resource claim: written exactly, as integers, not through a double. */
static void check_huge_usage(const struct attack *a, const cJSON *rec, const char *text)
{
	(void)a;
	(void)rec;
	static const char *const keys[] = {
		"\"command_utime_usec\":\t18446744073709551615",
		"\"command_stime_usec\":\t18446744073709551615",
		"\"command_maxrss_kib\":\t18446744073709551615",
		"\"utime_usec\":\t18446744073709551615",
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strstr(text, keys[i]))
			fail_msg("record lacks %s:\n%s", keys[i], text);
	assert_null(strstr(text, "e+19"));
}

/* Most attacks: one violation reason, no extra environment, stderr or record checks. */
#define PLAIN(mode, code, reason, violation, type) \
	{ mode, code, reason, violation, NULL, type, NULL, NULL, NULL }
#define VIOLATION(mode, why, type) PLAIN(mode, 123, "protocol-violation", why, type)

static const struct attack attacks[] = {
	{ "honest", 0, "exited", NULL, NULL, -1, NULL, NULL, check_honest },
	VIOLATION("forge-mac", "bad MAC", -1),
	VIOLATION("wrong-key", "bad MAC", -1),
	VIOLATION("truncate", "bad MAC", -1),
	VIOLATION("bad-flags", "bad MAC", -1),
	VIOLATION("oversize", "oversize frame", -1),
	VIOLATION("unknown-type", "unknown or unpermitted frame type", 99),
	VIOLATION("trailing", "payload length out of range", 3),
	VIOLATION("wrong-nonce", "not permitted now", 3),
	VIOLATION("early-ready", "not permitted in this state", 5),
	VIOLATION("hello-twice", "not permitted in this state", 3),
	VIOLATION("replay", "wrong sequence number", -1),
	VIOLATION("reorder", "wrong sequence number", -1),
	VIOLATION("exited-early", "not permitted now", 9),
	/* Descriptors on the channel are refused at the socket: the sender gets EPERM. */
	{ "pass-fd", 0, "exited", NULL, NULL, -1, NULL, FD_REFUSED, NULL },
	VIOLATION("flood", "too many EVENT frames", 11),
	{ "quit", 123, "protocol-violation", "closed the channel early", "ended before reporting",
	  -1, NULL, NULL, NULL },
	VIOLATION("silent", "silent past its deadline", -1),
	PLAIN("lie-uid", 123, "attestation-failed", "claimed ids differ", -1),
	PLAIN("lie-caps", 123, "attestation-failed", "claimed identity differs", -1),
	/* A socket whose last close() would block, alone or behind 252 other descriptors. */
	{ "linger-fd", 0, "exited", NULL, NULL, -1, NULL, FD_REFUSED, NULL },
	{ "many-fds", 0, "exited", NULL, NULL, -1, NULL, FD_REFUSED, NULL },
	/* The same where the kernel cannot refuse them: parked, closed only after the kill. */
	{ "pass-fd", 123, "protocol-violation", "ancillary data", NULL, -1, NO_PASSRIGHTS, NULL,
	  NULL },
	{ "linger-fd", 123, "protocol-violation", "ancillary data", NULL, -1, NO_PASSRIGHTS, NULL,
	  NULL },
	{ "many-fds", 123, "protocol-violation", "ancillary data", NULL, -1, NO_PASSRIGHTS, NULL,
	  NULL },
	VIOLATION("silent-after-go", "silent past its deadline", -1),
	/* After EXITED the worker may only exit, with status 0. */
	VIOLATION("event-after-exit", "not permitted in this state", 11),
	VIOLATION("empty-after-exit", "empty datagram", -1),
	VIOLATION("silent-after-exit", "did not exit after EXITED", -1),
	VIOLATION("error-after-start", "not permitted in this state", 15),
	{ "lie-exit", 123, "protocol-violation", "exited with status 3 after EXITED", NULL, -1, NULL,
	  NULL, check_lie_exit },
	{ "huge-usage", 0, "exited", NULL, NULL, -1, NULL, NULL, check_huge_usage },
	/* A signal pid 1 can bring on itself is no excuse either. */
	VIOLATION("crash-exit", "died of signal 11 after EXITED", -1),
	/* warden's own fault (injected in warden-test): 125, its own reason, never a violation. */
	{ "honest", 125, "internal-error", NULL, NULL, -1, "WARDEN_TEST_INTERNAL_FAULT=1",
	  "internal error: a fault injected by the test", NULL },
};

static const char *hostile(void)
{
	const char *p = getenv("HOSTILE");
	if (!p || !*p) {
		fprintf(stderr, "HOSTILE is not set\n");
		exit(1);
	}
	return p;
}

struct fx {
	struct th_ws ws;
	struct th_out out;
	cJSON *record;
	char marker[96];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || th_ws_new(&f->ws, 0, 0) < 0) {
		free(f);
		return -1;
	}
	th_marker("hostile", f->marker, sizeof(f->marker));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	th_kill_procs(f->marker, 0);
	th_out_done(&f->out);
	cJSON_Delete(f->record);
	th_ws_remove(&f->ws);
	free(f);
	return 0;
}

static void show(const struct fx *f)
{
	fprintf(stderr, "exit %d\n--- stdout\n%s--- stderr\n%s---\n", f->out.code, f->out.out,
		f->out.err);
}

static void run_attack(void **state, const struct attack *a)
{
	struct fx *f = *state;
	char rec[PATH_MAX], env[PATH_MAX + 32];
	if (a->err_has && !strcmp(a->err_has, FD_REFUSED) && !kernel_has_passrights()) {
		/* Here the fallback is what runs: the *_kept cases prove it on every kernel. */
		print_message("this kernel has no SO_PASSRIGHTS (Linux 6.16): nothing to refuse "
			      "descriptors at the socket\n");
		skip();
	}
	th_aux_path(&f->ws, "record", rec);
	th_pathf(env, "WARDEN_TEST_WORKER=%s", hostile());
	const char *const envv[] = { env, a->env, NULL };
	struct th_opts o = { .workspace = f->ws.dir, .record = rec, .env = envv,
			     .hard_timeout_ms = 25000 };
	th_run(&o, TH_CMD(a->mode, f->marker), &f->out);
	if (f->out.code != a->code || (a->err_has && !strstr(f->out.err, a->err_has)))
		show(f);
	assert_int_equal(f->out.code, a->code);
	if (a->err_has)
		assert_non_null(strstr(f->out.err, a->err_has));

	f->record = th_record_load(rec);
	assert_string_equal(th_json_str(f->record, "exit.reason"), a->reason);
	assert_int_equal((int)th_json_num(f->record, "exit.code"), a->code);
	const cJSON *v = th_json_at(f->record, "violation");
	if (!strcmp(a->reason, "protocol-violation")) {
		assert_true(v && cJSON_IsObject(v));
		const char *why = th_json_str(f->record, "violation.reason");
		if (!strstr(why, a->violation) && !(a->alt && strstr(why, a->alt)))
			fail_msg("%s: violation '%s', want '%s'", a->mode, why, a->violation);
		const cJSON *type = th_json_at(f->record, "violation.type");
		if (a->type < 0)
			assert_null(type);
		else
			assert_int_equal((int)th_json_num(f->record, "violation.type"), a->type);
		assert_true(th_json_num(f->record, "violation.frame") >= 1);
	} else {
		assert_true(v && cJSON_IsNull(v));
	}
	if (!strcmp(a->reason, "attestation-failed")) {
		assert_true(th_json_bool(f->record, "identity.checked"));
		assert_false(th_json_bool(f->record, "identity.held"));
		const char *why = th_json_str(f->record, "identity.failure");
		if (!strstr(why, a->violation))
			fail_msg("%s: identity failure '%s', want '%s'", a->mode, why, a->violation);
	}
	/* Nothing of the sandbox survives: the hostile worker carried the marker. */
	assert_int_equal(th_count_procs(f->marker, NULL, 0), 0);
	assert_true(th_json_bool(f->record, "sandbox.cgroup_emptied"));
	if (a->check) {
		char path[PATH_MAX];
		th_pathf(path, "%s/record.json", rec);
		char *text = th_read_file(path, 1u << 20, true, NULL);
		assert_non_null(text);
		a->check(a, f->record, text);
		free(text);
	}
}

#define ATTACK(i, name)                                              \
	static void test_##name(void **state)                        \
	{                                                            \
		run_attack(state, &attacks[i]);                      \
	}
ATTACK(0, honest)
ATTACK(1, forge_mac)
ATTACK(2, wrong_key)
ATTACK(3, truncate)
ATTACK(4, bad_flags)
ATTACK(5, oversize)
ATTACK(6, unknown_type)
ATTACK(7, trailing)
ATTACK(8, wrong_nonce)
ATTACK(9, early_ready)
ATTACK(10, hello_twice)
ATTACK(11, replay)
ATTACK(12, reorder)
ATTACK(13, exited_early)
ATTACK(14, pass_fd)
ATTACK(15, flood)
ATTACK(16, quit)
ATTACK(17, silent)
ATTACK(18, lie_uid)
ATTACK(19, lie_caps)
ATTACK(20, linger_fd)
ATTACK(21, many_fds)
ATTACK(22, pass_fd_kept)
ATTACK(23, linger_fd_kept)
ATTACK(24, many_fds_kept)
ATTACK(25, silent_after_go)
ATTACK(26, event_after_exit)
ATTACK(27, empty_after_exit)
ATTACK(28, silent_after_exit)
ATTACK(29, error_after_start)
ATTACK(30, lie_exit)
ATTACK(32, crash_exit)
ATTACK(33, internal_fault)
ATTACK(31, huge_usage)

/*
 * The supervisor's own check that the worker sits in its cgroup (every hierarchy's
 * cgroup.procs lists it): warden-test leaves the cgroup unjoined on request, and the run
 * must be refused before the command starts, with nothing left behind.
 */
static void test_outside_cgroup(void **state)
{
	struct fx *f = *state;
	char rec[PATH_MAX], env[PATH_MAX + 32];
	th_aux_path(&f->ws, "record", rec);
	th_pathf(env, "WARDEN_TEST_WORKER=%s", hostile());
	const char *const envv[] = { env, "WARDEN_TEST_SKIP_CGROUP=1", NULL };
	struct th_opts o = { .workspace = f->ws.dir, .record = rec, .env = envv,
			     .hard_timeout_ms = 25000 };
	th_run(&o, TH_CMD("honest", f->marker), &f->out);
	if (f->out.code != 125 || !strstr(f->out.err, "the sandbox is not in its cgroup"))
		show(f);
	assert_int_equal(f->out.code, 125);
	assert_non_null(strstr(f->out.err, "the sandbox is not in its cgroup"));
	assert_int_equal(th_count_procs(f->marker, NULL, 0), 0);
}

#define T(name) cmocka_unit_test_setup_teardown(test_##name, setup, teardown)

int main(void)
{
	if (!th_fully_privileged())
		th_cannot_run("needs root with CAP_SYS_ADMIN in the initial user namespace");
	if (!th_userns_available(0, 0))
		th_cannot_run("user namespaces are not available");
	(void)th_warden();
	(void)hostile();
	_Static_assert(sizeof(attacks) / sizeof(attacks[0]) == 34, "one test per attack");
	const struct CMUnitTest tests[] = {
		T(honest),
		T(forge_mac),
		T(wrong_key),
		T(truncate),
		T(bad_flags),
		T(oversize),
		T(unknown_type),
		T(trailing),
		T(wrong_nonce),
		T(early_ready),
		T(hello_twice),
		T(replay),
		T(reorder),
		T(exited_early),
		T(pass_fd),
		T(flood),
		T(quit),
		T(silent),
		T(lie_uid),
		T(lie_caps),
		T(linger_fd),
		T(many_fds),
		T(pass_fd_kept),
		T(linger_fd_kept),
		T(many_fds_kept),
		T(silent_after_go),
		T(event_after_exit),
		T(empty_after_exit),
		T(silent_after_exit),
		T(error_after_start),
		T(lie_exit),
		T(crash_exit),
		T(internal_fault),
		T(huge_usage),
		T(outside_cgroup),
	};
	return cmocka_run_group_tests_name("hostile worker", tests, NULL, NULL);
}
