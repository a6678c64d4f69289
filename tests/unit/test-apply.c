/* SPDX-License-Identifier: MIT */
/*
 * The apply rules' pure parts: which symlinks stay inside the workspace, and the modes files
 * get on the host (supervisor/apply.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "apply.h"
#include "cleanup.h"

static void test_links(void **state)
{
	static const struct {
		const char *target;
		unsigned depth;
		bool inside;
	} cases[] = {
		{ "a", 0, true },          { "a/b/c", 0, true },       { "./a", 0, true },
		{ "../a", 1, true },       { "../../a", 2, true },     { "..", 1, true },
		{ "../a", 0, false },      { "../../a", 1, false },    { "/etc/passwd", 5, false },
		{ "", 0, false },          { "a/../b", 3, false },     { "a/..", 3, false },
		{ "../a/../b", 2, false }, { "sub/../..", 1, false },  { "..//..", 2, true },
		{ "..//..", 1, false },    { "a//b", 0, true },        { "/", 0, false },
		{ "./../a", 1, true },     { "./../a", 0, false },
	};
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		bool got = sup_link_stays_inside(cases[i].target, cases[i].depth);
		if (got != cases[i].inside)
			fail_msg("'%s' at depth %u: got %d", cases[i].target, cases[i].depth, got);
	}
}

static void test_modes(void **state)
{
	(void)state;
	/* set-id and sticky bits never reach the host */
	assert_int_equal(sup_apply_mode(04755, -1), 0755);
	assert_int_equal(sup_apply_mode(02755, 0755), 0755);
	assert_int_equal(sup_apply_mode(01777, -1), 0755);
	assert_int_equal(sup_apply_mode(0100644, -1), 0644);
	/* group and world write only where the host's file had them */
	assert_int_equal(sup_apply_mode(0777, -1), 0755);
	assert_int_equal(sup_apply_mode(0777, 0644), 0755);
	assert_int_equal(sup_apply_mode(0777, 0664), 0775);
	assert_int_equal(sup_apply_mode(0777, 0666), 0777);
	assert_int_equal(sup_apply_mode(0644, 0666), 0644);
	assert_int_equal(sup_apply_mode(0, -1), 0);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(sup_chg_kind_name(SUP_CHG_ADDED), "added");
	assert_string_equal(sup_chg_kind_name(SUP_CHG_SPECIAL), "special");
	assert_string_equal(sup_chg_kind_name((enum sup_chg_kind)0), "?");
	assert_string_equal(sup_chg_kind_name((enum sup_chg_kind)99), "?");
	assert_string_equal(sup_chg_verdict_name(SUP_CHG_HELD), "held");
	assert_string_equal(sup_chg_verdict_name((enum sup_chg_verdict)0), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
