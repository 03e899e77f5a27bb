// SPDX-License-Identifier: GPL-2.0
/*
 * Finding the project: every command started in a subdirectory acts on
 * the project around it (lib/project.c), as git finds .git, and stops at
 * $HOME; init inside a project refuses unless --nested.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/project.h"
#include "queue/queue.h"
#include "tests/unit/queue_helpers.h"
#include "tests/unit/unit.h"

static char *path_of(const char *a, const char *b)
{
	char *p;

	if (asprintf(&p, "%s/%s", a, b) < 0)
		abort();
	return p;
}

static void mkdirs(const char *p)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s", p);
	for (char *s = buf + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(buf, 0755);
			*s = '/';
		}
	mkdir(buf, 0755);
}

SBX_TEST(project, found_from_a_subdirectory)
{
	char *top = tq_dir("pf"), *sub = path_of(top, "a/b/c"), *sbx = path_of(top, ".sandbox");
	char *got = NULL, *canon = realpath(top, NULL);

	mkdirs(sub);
	CU_ASSERT_EQUAL(sbx_project_find(sub, &got), -ENOENT);
	mkdir(sbx, 0700);
	CU_ASSERT_EQUAL(sbx_project_find(sub, &got), 0);
	CU_ASSERT_STRING_EQUAL(got ? got : "", canon);
	free(got);
	CU_ASSERT_EQUAL(sbx_project_find(top, &got), 0);
	CU_ASSERT_STRING_EQUAL(got ? got : "", canon);
	free(got);
	/* the nearest wins: a nested project is its own */
	{
		char *inner = path_of(top, "a/.sandbox"), *in = path_of(canon, "a");

		mkdir(inner, 0700);
		CU_ASSERT_EQUAL(sbx_project_find(sub, &got), 0);
		CU_ASSERT_STRING_EQUAL(got ? got : "", in);
		free(got);
		rmdir(inner);
		free(inner);
		free(in);
	}
	/* a file named .sandbox is not a project */
	rmdir(sbx);
	fclose(fopen(sbx, "w"));
	CU_ASSERT_EQUAL(sbx_project_find(sub, &got), -ENOENT);
	unlink(sbx);
	free(top);
	free(sub);
	free(sbx);
	free(canon);
}

SBX_TEST(project, the_walk_stops_at_home)
{
	char *top = tq_dir("ph"), *home = path_of(top, "home"), *work = path_of(top, "home/w");
	char *sbx = path_of(top, ".sandbox"), *old = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	char *got = NULL;

	mkdirs(work);
	mkdir(sbx, 0700);
	setenv("HOME", home, 1);
	CU_ASSERT_EQUAL(sbx_project_find(work, &got), -ENOENT);
	/* from outside $HOME the walk goes on */
	setenv("HOME", "/nonexistent-home", 1);
	CU_ASSERT_EQUAL(sbx_project_find(work, &got), 0);
	free(got);
	if (old)
		setenv("HOME", old, 1);
	else
		unsetenv("HOME");
	free(old);
	free(top);
	free(home);
	free(work);
	free(sbx);
}

static int run_in(const char *cwd, char **argv, char **out, char **err)
{
	int rc = tq_run(cwd, argv, NULL, out, err);

	if (rc)
		fprintf(stderr, "%s %s: rc %d: %s%s\n", argv[1], argv[2] ? argv[2] : "", rc,
			*out ? *out : "", *err ? *err : "");
	return rc;
}

SBX_TEST(project, commands_from_a_subdirectory)
{
	struct sbx_queue *q;
	char *top, *sub, *pol, *a, *b, *out = NULL, *err = NULL;
	FILE *f;

	if (!tq_bin())
		SBX_SKIP("bpfsbx-san is not built next to unit-tests (make build/bpfsbx-san)");
	q = tq_open("pc");
	top = tq_dir("pc");
	sub = path_of(top, "src/deep");
	mkdirs(sub);
	pol = path_of(top, ".sandbox/policy.yaml");
	f = fopen(pol, "w");
	fputs("version: 1\nextends: agent-default\n", f);
	fclose(f);
	a = tq_submit(q, tq_file_req("/home/u/.aws/credentials"));
	b = tq_submit(q, tq_file_req("/home/u/.aws/config"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	{
		char *argv[] = { "bpfsbx", "approve", a, "--yes", NULL };

		CU_ASSERT_EQUAL(run_in(sub, argv, &out, &err), 0);
		free(out);
		free(err);
	}
	{
		char *argv[] = { "bpfsbx", "deny", b, NULL };

		CU_ASSERT_EQUAL(run_in(sub, argv, &out, &err), 0);
		free(out);
		free(err);
	}
	{
		char *argv[] = { "bpfsbx", "watch", "--once", "--auto", "deny", NULL };

		CU_ASSERT_EQUAL(run_in(sub, argv, &out, &err), 0);
		free(out);
		free(err);
	}
	{
		char *argv[] = { "bpfsbx", "policy", "check", "--no-resolve", NULL };

		CU_ASSERT_EQUAL(run_in(sub, argv, &out, &err), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", pol));
		free(out);
		free(err);
	}
	{
		/* ${PROJECT} is the project, not the subdirectory */
		char *argv[] = { "bpfsbx", "policy", "explain", "--no-resolve", "x", NULL };
		char *canon = realpath(top, NULL);
		char *want = path_of(canon ? canon : top, "src/deep/x");

		CU_ASSERT_EQUAL(run_in(sub, argv, &out, &err), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", want));
		free(want);
		free(canon);
		free(out);
		free(err);
	}
	{
		/* outside every project: the error says what to do */
		char *none = tq_dir("pc-none");
		char *argv[] = { "bpfsbx", "deny", a, NULL };
		char *wv[] = { "bpfsbx", "watch", "--once", NULL };

		CU_ASSERT_EQUAL(tq_run(none, argv, NULL, &out, &err), 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "run bpfsbx init"));
		free(out);
		free(err);
		CU_ASSERT_EQUAL(tq_run(none, wv, NULL, &out, &err), 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "run bpfsbx init"));
		free(out);
		free(err);
		free(none);
	}
	free(a);
	free(b);
	free(top);
	free(sub);
	free(pol);
	sbx_queue_close(q);
}

SBX_TEST(project, init_inside_a_project_refuses)
{
	char *top = tq_dir("pi"), *inner = path_of(top, "sub/inner"), *sbx = path_of(top, ".sandbox");
	char *isbx = path_of(inner, ".sandbox"), *out = NULL, *err = NULL;
	struct stat st;

	if (!tq_bin())
		SBX_SKIP("bpfsbx-san is not built next to unit-tests (make build/bpfsbx-san)");
	mkdirs(inner);
	mkdir(sbx, 0700);
	{
		char *argv[] = { "bpfsbx", "init", inner, "--claude", NULL };

		CU_ASSERT_EQUAL(tq_run(NULL, argv, NULL, &out, &err), 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "--nested"));
		CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "inside the project"));
		CU_ASSERT_NOT_EQUAL(stat(isbx, &st), 0);
		free(out);
		free(err);
	}
	{
		char *argv[] = { "bpfsbx", "init", inner, "--claude", "--nested", NULL };

		CU_ASSERT_EQUAL(tq_run(NULL, argv, NULL, &out, &err), 0);
		CU_ASSERT_EQUAL(stat(isbx, &st), 0);
		free(out);
		free(err);
	}
	{
		/* again, now that inner is a project: nothing to refuse */
		char *argv[] = { "bpfsbx", "init", inner, "--claude", NULL };

		CU_ASSERT_EQUAL(tq_run(NULL, argv, NULL, &out, &err), 0);
		free(out);
		free(err);
	}
	free(top);
	free(inner);
	free(sbx);
	free(isbx);
}
