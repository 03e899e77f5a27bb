// SPDX-License-Identifier: GPL-2.0
/* Request ids: shape, uniqueness across processes, time order. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "queue/queue.h"
#include "tests/unit/queue_helpers.h"
#include "tests/unit/unit.h"

#define PROCS	8
#define PER	10000
#define ID_W	64

SBX_TEST(queue, id_shape)
{
	char *id = sbx_id_new();

	CU_ASSERT_PTR_NOT_NULL_FATAL(id);
	CU_ASSERT_TRUE(sbx_id_valid(id));
	CU_ASSERT_TRUE(strlen(id) <= SBX_ID_MAX);
	free(id);
	CU_ASSERT_TRUE(sbx_id_valid("20261130T101503.123456Z-4242-1a2b3c4d"));
	CU_ASSERT_FALSE(sbx_id_valid(NULL));
	CU_ASSERT_FALSE(sbx_id_valid(""));
	CU_ASSERT_FALSE(sbx_id_valid("20261130T101503.123456Z-4242-1A2B3C4D"));	/* upper hex */
	CU_ASSERT_FALSE(sbx_id_valid("20261130T101503.123456Z-4242-1a2b3c"));	/* short rand */
	CU_ASSERT_FALSE(sbx_id_valid("20261130T101503.123456Z--1a2b3c4d"));	/* no pid */
	CU_ASSERT_FALSE(sbx_id_valid("20261130T101503.123456Z-4242-1a2b3c4d.json"));
	CU_ASSERT_FALSE(sbx_id_valid("../../../etc/passwd"));
	CU_ASSERT_FALSE(sbx_id_valid("20261130T101503.123456Z-4242-1a2b3c4d/x"));
	CU_ASSERT_FALSE(sbx_id_valid("2026113oT101503.123456Z-4242-1a2b3c4d"));
}

static int cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

SBX_TEST(queue, id_unique_sorted_across_processes)
{
	char *dir = tq_dir("ids"), path[512];
	char *before = sbx_id_new(), *after;
	char (*all)[ID_W] = calloc(PROCS * PER, ID_W);
	size_t n = 0, dups = 0, unsorted = 0, invalid = 0, out_of_window = 0;
	pid_t pids[PROCS];

	CU_ASSERT_PTR_NOT_NULL_FATAL(all);
	for (int p = 0; p < PROCS; p++) {
		fflush(NULL);
		pids[p] = fork();
		if (pids[p] == 0) {
			FILE *f;

			snprintf(path, sizeof(path), "%s/ids.%d", dir, p);
			f = fopen(path, "w");
			if (!f)
				_exit(2);
			for (int i = 0; i < PER; i++) {
				char *id = sbx_id_new();

				fprintf(f, "%s\n", id);
				free(id);
			}
			_exit(fclose(f) ? 3 : 0);
		}
	}
	for (int p = 0; p < PROCS; p++) {
		int st = 0;

		waitpid(pids[p], &st, 0);
		CU_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	after = sbx_id_new();
	for (int p = 0; p < PROCS; p++) {
		char line[ID_W], prev[ID_W] = "";
		FILE *f;
		int got = 0;

		snprintf(path, sizeof(path), "%s/ids.%d", dir, p);
		f = fopen(path, "r");
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			if (!sbx_id_valid(line))
				invalid++;
			/* within a process, each id sorts after the one before */
			if (prev[0] && strcmp(prev, line) >= 0)
				unsorted++;
			/* and every id sorts between ids made before and after */
			if (strcmp(line, before) <= 0 || strcmp(line, after) >= 0)
				out_of_window++;
			memcpy(prev, line, ID_W);
			memcpy(all[n++], line, ID_W);
			got++;
		}
		fclose(f);
		CU_ASSERT_EQUAL(got, PER);
	}
	CU_ASSERT_EQUAL(n, PROCS * PER);
	qsort(all, n, ID_W, cmp);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(all[i - 1], all[i]))
			dups++;
	CU_ASSERT_EQUAL(dups, 0);
	CU_ASSERT_EQUAL(unsorted, 0);
	CU_ASSERT_EQUAL(invalid, 0);
	CU_ASSERT_EQUAL(out_of_window, 0);
	free(all);
	free(before);
	free(after);
	free(dir);
}

SBX_TEST(queue, time_parse)
{
	time_t t;
	char *s;

	CU_ASSERT_EQUAL(sbx_time_parse("1970-01-01T00:00:00Z", &t), 0);
	CU_ASSERT_EQUAL(t, 0);
	CU_ASSERT_EQUAL(sbx_time_parse("2026-11-30T10:15:03.25+01:00", &t), 0);
	s = sbx_time_rfc3339(t);
	CU_ASSERT_STRING_EQUAL(s, "2026-11-30T09:15:03Z");
	free(s);
	CU_ASSERT_NOT_EQUAL(sbx_time_parse("2026-11-30 10:15:03Z", &t), 0);
	CU_ASSERT_NOT_EQUAL(sbx_time_parse("2026-13-30T10:15:03Z", &t), 0);
	CU_ASSERT_NOT_EQUAL(sbx_time_parse("2026-11-30T10:15:03", &t), 0);
	CU_ASSERT_NOT_EQUAL(sbx_time_parse("2026-11-30T10:15:03Zjunk", &t), 0);
	CU_ASSERT_NOT_EQUAL(sbx_time_parse(NULL, &t), 0);
}
