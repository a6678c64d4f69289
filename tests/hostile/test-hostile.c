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
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

struct attack {
	const char *mode;
	int code;               /* warden's exit code */
	const char *reason;     /* exit.reason */
	const char *violation;  /* a substring of violation.reason (or of exit.detail), or NULL */
	const char *alt;        /* an acceptable alternative substring, or NULL */
	int type;               /* violation.type, or -1 when it must be absent */
};

static const struct attack attacks[] = {
	{ "honest", 0, "exited", NULL, NULL, -1 },
	{ "forge-mac", 123, "protocol-violation", "bad MAC", NULL, -1 },
	{ "wrong-key", 123, "protocol-violation", "bad MAC", NULL, -1 },
	{ "truncate", 123, "protocol-violation", "bad MAC", NULL, -1 },
	{ "bad-flags", 123, "protocol-violation", "bad MAC", NULL, -1 },
	{ "oversize", 123, "protocol-violation", "oversize frame", NULL, -1 },
	{ "unknown-type", 123, "protocol-violation", "unknown or unpermitted frame type", NULL, 99 },
	{ "trailing", 123, "protocol-violation", "payload length out of range", NULL, 3 },
	{ "wrong-nonce", 123, "protocol-violation", "not permitted now", NULL, 3 },
	{ "early-ready", 123, "protocol-violation", "not permitted in this state", NULL, 5 },
	{ "hello-twice", 123, "protocol-violation", "not permitted in this state", NULL, 3 },
	{ "replay", 123, "protocol-violation", "wrong sequence number", NULL, -1 },
	{ "reorder", 123, "protocol-violation", "wrong sequence number", NULL, -1 },
	{ "exited-early", 123, "protocol-violation", "not permitted now", NULL, 9 },
	{ "pass-fd", 123, "protocol-violation", "ancillary data", NULL, -1 },
	{ "flood", 123, "protocol-violation", "too many EVENT frames", NULL, 11 },
	{ "quit", 123, "protocol-violation", "closed the channel early",
	  "ended before reporting", -1 },
	{ "silent", 123, "protocol-violation", "silent past its deadline", NULL, -1 },
	{ "lie-uid", 123, "attestation-failed", "claimed ids differ", NULL, -1 },
	{ "lie-caps", 123, "attestation-failed", "claimed identity differs", NULL, -1 },
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
	th_aux_path(&f->ws, "record", rec);
	th_pathf(env, "WARDEN_TEST_WORKER=%s", hostile());
	const char *const envv[] = { env, NULL };
	struct th_opts o = { .workspace = f->ws.dir, .record = rec, .env = envv,
			     .hard_timeout_ms = 25000 };
	th_run(&o, TH_CMD(a->mode, f->marker), &f->out);
	if (f->out.code != a->code)
		show(f);
	assert_int_equal(f->out.code, a->code);

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
	_Static_assert(sizeof(attacks) / sizeof(attacks[0]) == 20, "one test per attack");
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
		T(outside_cgroup),
	};
	return cmocka_run_group_tests_name("hostile worker", tests, NULL, NULL);
}
