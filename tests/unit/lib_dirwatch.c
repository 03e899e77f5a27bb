// SPDX-License-Identifier: GPL-2.0
/*
 * lib/dirwatch.c, by effect: real directories in the test's scratch
 * directory are made, removed, renamed and re-pointed, and an owner must
 * be stale exactly when a name on the way to one of its paths changed.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/dirwatch.h"
#include "tests/unit/unit.h"

static char *at(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int k;
	char *b = buf[k++ % 4];

	snprintf(b, PATH_MAX, "%s/%s", sbx_unit_tmpdir(), rel);
	return b;
}

static void mkdirs(const char *rel)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", at(rel));
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
}

static void touch(const char *rel)
{
	FILE *f = fopen(at(rel), "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fclose(f);
}

SBX_TEST(lib, dirwatch_stale_only_when_the_way_changes)
{
	struct sbx_dirwatch *w = sbx_dirwatch_new();

	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	mkdirs("a/b/c");
	mkdirs("x/y");
	touch("a/b/c/secret");
	CU_ASSERT_EQUAL(sbx_dirwatch_add(w, 1, at("a/b/c/secret")), 0);
	CU_ASSERT_EQUAL(sbx_dirwatch_add(w, 2, at("x/y")), 0);
	/* new owners start stale: their paths were looked at before */
	CU_ASSERT_TRUE(sbx_dirwatch_stale(w, 1));
	sbx_dirwatch_rearm(w, 1);
	sbx_dirwatch_rearm(w, 2);
	CU_ASSERT_FALSE(sbx_dirwatch_stale(w, 1));
	CU_ASSERT_FALSE(sbx_dirwatch_stale(w, 2));

	/* other names in the same directories change nothing */
	touch("a/b/other");
	touch("a/b/c/other");
	mkdirs("a/sibling");
	CU_ASSERT_FALSE(sbx_dirwatch_stale(w, 1));

	/* a directory on the way removed and made again: stale, and only
	 * the owner whose way it is on */
	CU_ASSERT_EQUAL(system("true"), 0);
	{
		char cmd[PATH_MAX * 2];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", at("a/b"), at("a/b/c"));
		CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	}
	CU_ASSERT_TRUE(sbx_dirwatch_stale(w, 1));
	CU_ASSERT_FALSE(sbx_dirwatch_stale(w, 2));
	touch("a/b/c/secret");
	sbx_dirwatch_rearm(w, 1);
	CU_ASSERT_FALSE(sbx_dirwatch_stale(w, 1));
	/* the made-again directories are watched again after rearm */
	CU_ASSERT_EQUAL(unlink(at("a/b/c/secret")), 0);
	CU_ASSERT_TRUE(sbx_dirwatch_stale(w, 1));
	touch("a/b/c/secret");
	sbx_dirwatch_rearm(w, 1);

	/* a rename of an ancestor */
	CU_ASSERT_EQUAL(rename(at("a"), at("a2")), 0);
	CU_ASSERT_TRUE(sbx_dirwatch_stale(w, 1));
	CU_ASSERT_EQUAL(rename(at("a2"), at("a")), 0);
	sbx_dirwatch_rearm(w, 1);

	/* a symlink re-pointed: unlink + symlink */
	CU_ASSERT_EQUAL(symlink(at("x"), at("link")), 0);
	CU_ASSERT_EQUAL(sbx_dirwatch_add(w, 3, at("link")), 0);
	/* as the daemon does: stale (new), checked, then armed */
	CU_ASSERT_TRUE(sbx_dirwatch_stale(w, 3));
	sbx_dirwatch_rearm(w, 3);
	CU_ASSERT_FALSE(sbx_dirwatch_stale(w, 3));
	CU_ASSERT_EQUAL(unlink(at("link")), 0);
	CU_ASSERT_EQUAL(symlink(at("a"), at("link")), 0);
	CU_ASSERT_TRUE(sbx_dirwatch_stale(w, 3));
	/* a way through a symlink is not watched (the paths the daemon
	 * watches are resolved): such an owner stays stale */
	CU_ASSERT_NOT_EQUAL(sbx_dirwatch_add(w, 4, at("link/b")), 0);
	sbx_dirwatch_rearm(w, 4);
	CU_ASSERT_TRUE(sbx_dirwatch_stale(w, 4));
	sbx_dirwatch_forget(w, 4);

	/* forgetting an owner removes the watches no one else needs */
	{
		unsigned before = sbx_dirwatch_count(w);

		sbx_dirwatch_forget(w, 3);
		sbx_dirwatch_forget(w, 1);
		CU_ASSERT_TRUE(sbx_dirwatch_count(w) < before);
		CU_ASSERT_TRUE(sbx_dirwatch_stale(w, 1));	/* unknown: stale */
		CU_ASSERT_FALSE(sbx_dirwatch_stale(w, 2));
		sbx_dirwatch_forget(w, 2);
		CU_ASSERT_EQUAL(sbx_dirwatch_count(w), 0);
	}
	sbx_dirwatch_free(w);
}

SBX_TEST(lib, dirwatch_a_way_that_cannot_be_watched_is_always_stale)
{
	struct sbx_dirwatch *w = sbx_dirwatch_new();

	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT_NOT_EQUAL(sbx_dirwatch_add(w, 7, at("missing/dir/file")), 0);
	sbx_dirwatch_rearm(w, 7);
	CU_ASSERT_TRUE(sbx_dirwatch_stale(w, 7));
	CU_ASSERT_NOT_EQUAL(sbx_dirwatch_add(w, 8, "relative/path"), 0);
	sbx_dirwatch_rearm(w, 8);
	CU_ASSERT_TRUE(sbx_dirwatch_stale(w, 8));
	/* a file system whose changes may come from elsewhere (here procfs,
	 * as NFS or 9p would be) is not watched */
	CU_ASSERT_EQUAL(sbx_dirwatch_add(w, 9, "/proc/sys/kernel/hostname"), -EREMOTE);
	sbx_dirwatch_rearm(w, 9);
	CU_ASSERT_TRUE(sbx_dirwatch_stale(w, 9));
	sbx_dirwatch_free(w);
}
