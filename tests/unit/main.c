// SPDX-License-Identifier: GPL-2.0
/*
 * Runner for the CUnit tests registered with SBX_TEST(). Prints
 * "ok SUITE.NAME", "FAIL SUITE.NAME: file:line: assertion" or
 * "skip SUITE.NAME: reason" per test, then a summary line.
 * Arguments are substrings; only tests whose SUITE.NAME contains one run.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <CUnit/Basic.h>
#include <CUnit/TestRun.h>
#include "tests/unit/unit.h"

extern const struct sbx_unit_test __start_sbx_tests[];
extern const struct sbx_unit_test __stop_sbx_tests[];

static char skip_reason[512];
static int skipped_flag;
static char tmpdir[256];

void sbx_unit_skip(const char *reason)
{
	skipped_flag = 1;
	snprintf(skip_reason, sizeof(skip_reason), "%s", reason);
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	return remove(p);
}

const char *sbx_unit_tmpdir(void)
{
	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/sbx-unit-XXXXXX");
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			abort();
		}
	}
	return tmpdir;
}

static int selected(const struct sbx_unit_test *t, int argc, char **argv)
{
	char full[256];

	if (argc < 2)
		return 1;
	snprintf(full, sizeof(full), "%s.%s", t->suite, t->name);
	for (int i = 1; i < argc; i++)
		if (strstr(full, argv[i]))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0;

	/* Run each test in its own CUnit registry so that a result line can
	 * be printed right after it, with its own failures. */
	for (const struct sbx_unit_test *t = __start_sbx_tests; t < __stop_sbx_tests; t++) {
		if (!selected(t, argc, argv))
			continue;
		if (CU_initialize_registry() != CUE_SUCCESS)
			return 2;
		CU_pSuite s = CU_add_suite(t->suite, NULL, NULL);
		CU_add_test(s, t->name, t->fn);
		skipped_flag = 0;
		tmpdir[0] = 0;
		fflush(stdout);
		CU_run_all_tests();	/* the core runner: no output of its own */
		CU_pFailureRecord fr = CU_get_failure_list();
		unsigned nfail = CU_get_number_of_failures();
		if (nfail) {
			failed++;
			printf("FAIL %s.%s: %s:%u: %s", t->suite, t->name,
			       fr ? fr->strFileName : "?", fr ? fr->uiLineNumber : 0,
			       fr ? fr->strCondition : "?");
			if (nfail > 1)
				printf(" (and %u more)", nfail - 1);
			printf("\n");
		} else if (skipped_flag) {
			skipped++;
			printf("skip %s.%s: %s\n", t->suite, t->name, skip_reason);
		} else {
			passed++;
			printf("ok %s.%s\n", t->suite, t->name);
		}
		fflush(stdout);
		CU_cleanup_registry();
		if (tmpdir[0])
			nftw(tmpdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	}
	printf("# unit: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
