/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host unit tests: CUnit, registered through a linker section so that a
 * new test file in tests/unit/ needs no central list. Each test prints one
 * result line (ok / FAIL / skip) that tests/run counts.
 *
 *   SBX_TEST(queue, claim_race) { CU_ASSERT_EQUAL(...); }
 *   SBX_SKIP("needs root");   -- counted as skipped, never as passed
 */
#ifndef SBX_UNIT_H
#define SBX_UNIT_H

#include <CUnit/CUnit.h>

struct sbx_unit_test {
	const char *suite;
	const char *name;
	void (*fn)(void);
};

#define SBX_TEST(suite_, name_)							\
	static void sbx_test_##suite_##_##name_(void);				\
	static const struct sbx_unit_test sbx_ut_##suite_##_##name_		\
	__attribute__((used, section("sbx_tests"), aligned(8))) = {		\
		#suite_, #name_, sbx_test_##suite_##_##name_			\
	};									\
	static void sbx_test_##suite_##_##name_(void)

void sbx_unit_skip(const char *reason);
#define SBX_SKIP(reason) do { sbx_unit_skip(reason); return; } while (0)

/* A private scratch directory for the running test, removed afterwards. */
const char *sbx_unit_tmpdir(void);

#endif
