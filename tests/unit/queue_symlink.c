// SPDX-License-Identifier: GPL-2.0
/*
 * Symlink attacks on the queue: the daemon runs as root and writes into
 * a directory its user controls, so a symlink anywhere beneath the
 * project must be refused, and nothing may be written outside.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "queue/queue.h"
#include "tests/unit/queue_helpers.h"
#include "tests/unit/unit.h"

static int count_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY), n;

	if (fd < 0)
		return -1;
	n = tq_count(fd, 0) + tq_count(fd, 1);
	close(fd);
	return n;
}

static char *join(const char *a, const char *b)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s", a, b) < 0)
		abort();
	return p;
}

/* a project whose sub (relative path) is a symlink to outside/ */
static void refuse_symlinked(const char *proj, const char *sub, const char *outside)
{
	char *path, *err = NULL;
	struct sbx_queue *q;

	/* make the queue, then swap the directory for a symlink */
	q = tq_open(proj);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	sbx_queue_close(q);
	{
		char *pdir = tq_dir(proj);

		path = join(pdir, sub);
		free(pdir);
	}
	{
		char *cmd = NULL;

		/* the old directory moves aside; the symlink takes its name */
		if (asprintf(&cmd, "%s.moved", path) < 0)
			abort();
		CU_ASSERT_EQUAL(rename(path, cmd), 0);
		free(cmd);
	}
	CU_ASSERT_EQUAL(symlink(outside, path), 0);
	{
		char *pdir = tq_dir(proj);

		q = sbx_queue_open(pdir, SBX_Q_CREATE, (uid_t)-1, (gid_t)-1, &err);
		free(pdir);
	}
	CU_ASSERT_PTR_NULL(q);
	CU_ASSERT_PTR_NOT_NULL(err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "symlink"));
	if (q)
		sbx_queue_close(q);
	free(err);
	free(path);
	CU_ASSERT_EQUAL(count_path(outside), 0);
}

SBX_TEST(queue, symlinked_dirs_are_refused)
{
	char *outside = tq_dir("outside");

	refuse_symlinked("p1", ".sandbox/escalations/pending", outside);
	refuse_symlinked("p2", ".sandbox/escalations", outside);
	refuse_symlinked("p3", ".sandbox", outside);
	refuse_symlinked("p4", ".sandbox/escalations/done", outside);
	CU_ASSERT_EQUAL(count_path(outside), 0);
	free(outside);
}

SBX_TEST(queue, swap_after_open_writes_nothing_outside)
{
	char *outside = tq_dir("outside2"), *pdir, *pending, *moved;
	struct sbx_queue *q = tq_open("swap");
	char *id;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	pdir = tq_dir("swap");
	pending = join(pdir, ".sandbox/escalations/pending");
	moved = join(pdir, ".sandbox/escalations/pending.moved");
	/* the queue holds directory fds: a later swap cannot redirect it */
	CU_ASSERT_EQUAL(rename(pending, moved), 0);
	CU_ASSERT_EQUAL(symlink(outside, pending), 0);
	id = tq_submit(q, tq_file_req("/home/u/.aws/credentials"));
	CU_ASSERT_PTR_NOT_NULL(id);
	CU_ASSERT_EQUAL(count_path(outside), 0);
	CU_ASSERT_EQUAL(count_path(moved), 1);
	free(id);
	sbx_queue_close(q);
	free(pdir);
	free(pending);
	free(moved);
	free(outside);
}

SBX_TEST(queue, symlinked_files_are_not_followed)
{
	struct sbx_queue *q = tq_open("links");
	char *outside = tq_dir("outside3"), *target, *err = NULL, *content;
	struct sbx_remembered *v = NULL;
	struct sbx_audit *a;
	size_t n = 0;
	json_t *arr = NULL;
	int fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	target = join(outside, "secret");
	fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_TRUE_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, "secret\n", 7), 7);
	close(fd);

	/* a request that is a symlink: quarantined as not a regular file */
	CU_ASSERT_EQUAL(symlinkat(target, sbx_queue_dirfd(q, SBX_QDIR_PENDING),
				  "20261130T101503.123456Z-4242-1a2b3c4d.json"), 0);
	CU_ASSERT_EQUAL(sbx_queue_list(q, SBX_QDIR_PENDING, &arr, &err), 0);
	CU_ASSERT_EQUAL(json_array_size(arr), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "not a regular file"));
	json_decref(arr);
	free(err);
	err = NULL;

	/* a hard link planted under a record's name: quarantined, not read */
	CU_ASSERT_EQUAL(linkat(AT_FDCWD, target, sbx_queue_dirfd(q, SBX_QDIR_PENDING),
			       "20261130T101503.123456Z-4242-00000002.json", 0), 0);
	CU_ASSERT_EQUAL(sbx_queue_list(q, SBX_QDIR_PENDING, &arr, &err), 0);
	CU_ASSERT_EQUAL(json_array_size(arr), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "hard links"));
	/* the .why does not quote the linked file */
	{
		char *why = tq_read(sbx_queue_dirfd(q, SBX_QDIR_QUARANTINE),
				    "20261130T101503.123456Z-4242-00000002.json.why");

		CU_ASSERT_PTR_NOT_NULL(why);
		CU_ASSERT_PTR_NULL(strstr(why ? why : "", "secret"));
		free(why);
	}
	json_decref(arr);
	free(err);
	err = NULL;

	/* remembered.yaml as a symlink: refused, not read through */
	CU_ASSERT_EQUAL(symlinkat(target, sbx_queue_sandbox_fd(q), "remembered.yaml"), 0);
	CU_ASSERT_NOT_EQUAL(sbx_remembered_load(q, &v, &n, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(err);
	free(err);
	err = NULL;
	{
		struct sbx_remembered r = { .kind = "file", .path = "/x", .access = "read" };

		CU_ASSERT_NOT_EQUAL(sbx_remembered_add(q, &r, &err), 0);
		free(err);
		err = NULL;
	}

	/* an audit log that is a symlink: refused */
	CU_ASSERT_EQUAL(mkdirat(sbx_queue_sandbox_fd(q), "audit", 0700), 0);
	{
		char *p = NULL;

		if (asprintf(&p, "%s/.sandbox/audit/s1.jsonl", sbx_queue_project(q)) < 0)
			abort();
		CU_ASSERT_EQUAL(symlink(target, p), 0);
		free(p);
	}
	a = sbx_audit_open(q, "s1", &err);
	CU_ASSERT_PTR_NULL(a);
	CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "symlink"));
	sbx_audit_close(a);
	free(err);
	err = NULL;
	/* and a session name cannot climb out */
	a = sbx_audit_open(q, "../../x", &err);
	CU_ASSERT_PTR_NULL(a);
	free(err);

	content = tq_read(AT_FDCWD, target);
	CU_ASSERT_STRING_EQUAL(content ? content : "", "secret\n");
	CU_ASSERT_EQUAL(count_path(outside), 1);
	free(content);
	free(target);
	free(outside);
	sbx_queue_close(q);
}
