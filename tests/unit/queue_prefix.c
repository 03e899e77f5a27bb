// SPDX-License-Identifier: GPL-2.0
/*
 * Request ids are long (about 38 characters): approve, deny and watch's line mode take
 * any unique start of one, as git takes a short hash, and name the
 * candidates of an ambiguous one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "queue/queue.h"
#include "tests/unit/queue_helpers.h"
#include "tests/unit/unit.h"

/* the length of the common start of a and b */
static size_t common(const char *a, const char *b)
{
	size_t n = 0;

	while (a[n] && a[n] == b[n])
		n++;
	return n;
}

SBX_TEST(queue, find_id_by_prefix)
{
	struct sbx_queue *q = tq_open("prefix"), *q2 = tq_open("prefix2");
	char *a, *b, *c, *id = NULL, *err = NULL, pre[80];
	struct sbx_queue *both[2];
	size_t which, n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q2);
	a = tq_submit(q, tq_file_req("/home/u/a"));
	b = tq_submit(q, tq_file_req("/home/u/b"));
	c = tq_submit(q2, tq_file_req("/home/u/c"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	both[0] = q;
	both[1] = q2;

	/* the whole id */
	CU_ASSERT_EQUAL(sbx_queue_find_id(&q, 1, a, &id, &which, &err), 0);
	CU_ASSERT_STRING_EQUAL(id ? id : "", a);
	free(id);
	/* a start that only b has: b's pid-and-random tail differs from a's */
	n = common(a, b);
	snprintf(pre, sizeof(pre), "%.*s", (int)n + 1, b);
	CU_ASSERT_EQUAL(sbx_queue_find_id(&q, 1, pre, &id, &which, &err), 0);
	CU_ASSERT_STRING_EQUAL(id ? id : "", b);
	free(id);
	/* the shared start: ambiguous, both named */
	snprintf(pre, sizeof(pre), "%.*s", (int)n, a);
	CU_ASSERT_EQUAL(sbx_queue_find_id(&q, 1, pre, &id, &which, &err), -EEXIST);
	CU_ASSERT_PTR_NULL(id);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err, a) && strstr(err, b) && strstr(err, "ambiguous"));
	free(err);
	err = NULL;
	/* over two queues: which one holds it */
	snprintf(pre, sizeof(pre), "%.*s", (int)(common(c, a) > common(c, b) ?
						  common(c, a) : common(c, b)) + 1, c);
	CU_ASSERT_EQUAL(sbx_queue_find_id(both, 2, pre, &id, &which, &err), 0);
	CU_ASSERT_STRING_EQUAL(id ? id : "", c);
	CU_ASSERT_EQUAL(which, 1);
	free(id);
	/* a decided one is still found (approve then says it was decided) */
	{
		struct sbx_decision_rec d = { .approve = false };

		CU_ASSERT_EQUAL(sbx_queue_claim(q, a, NULL, NULL), 0);
		CU_ASSERT_EQUAL(sbx_queue_decide(q, a, &d, NULL), 0);
		snprintf(pre, sizeof(pre), "%.*s", (int)common(a, b) + 1, a);
		CU_ASSERT_EQUAL(sbx_queue_find_id(&q, 1, pre, &id, &which, &err), 0);
		CU_ASSERT_STRING_EQUAL(id ? id : "", a);
		free(id);
	}
	/* nothing starts so; not an id at all */
	CU_ASSERT_EQUAL(sbx_queue_find_id(&q, 1, "19991231", &id, &which, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "19991231"));
	free(err);
	err = NULL;
	CU_ASSERT_EQUAL(sbx_queue_find_id(&q, 1, "../x", &id, &which, &err), -EINVAL);
	free(err);
	err = NULL;
	CU_ASSERT_EQUAL(sbx_queue_find_id(&q, 1, "", &id, &which, &err), -EINVAL);
	free(err);
	free(a);
	free(b);
	free(c);
	sbx_queue_close(q);
	sbx_queue_close(q2);
}

SBX_TEST(queue, cli_takes_a_prefix)
{
	struct sbx_queue *q;
	char *dir, *a, *b, *out = NULL, *err = NULL, pre[80];
	size_t n;
	int rc;

	if (!tq_bin())
		SBX_SKIP("bpfsbx-san is not built next to unit-tests (make build/bpfsbx-san)");
	q = tq_open("prefixcli");
	dir = tq_dir("prefixcli");
	a = tq_submit(q, tq_file_req("/home/u/a"));
	b = tq_submit(q, tq_file_req("/home/u/b"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	n = common(a, b);
	{
		/* ambiguous: exit 1, both named, nothing decided */
		char *argv[] = { "bpfsbx", "deny", pre, NULL };

		snprintf(pre, sizeof(pre), "%.*s", (int)n, a);
		rc = tq_run(dir, argv, NULL, &out, &err);
		CU_ASSERT_EQUAL(rc, 1);
		CU_ASSERT_PTR_NOT_NULL(err && strstr(err, a) && strstr(err, b));
		free(out);
		free(err);
	}
	{
		char *argv[] = { "bpfsbx", "approve", pre, "--yes", NULL };

		snprintf(pre, sizeof(pre), "%.*s", (int)n + 1, b);
		rc = tq_run(dir, argv, NULL, &out, &err);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_PTR_NOT_NULL(out && strstr(out, b));
		free(out);
		free(err);
	}
	{
		/* watch's line mode: the answer names the whole id */
		char *argv[] = { "bpfsbx", "watch", "--lines", "--once", NULL };
		char line[128];

		snprintf(line, sizeof(line), "deny %.*s\nquit\n", (int)n + 1, a);
		rc = tq_run(dir, argv, line, &out, &err);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_PTR_NOT_NULL(out && strstr(out, a));
		free(out);
		free(err);
	}
	{
		json_t *d = NULL;

		CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_DONE, a, &d, NULL), 0);
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(d, "decision"), "verdict")) ?: "", "deny");
		json_decref(d);
		CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_DONE, b, &d, NULL), 0);
		json_decref(d);
	}
	free(a);
	free(b);
	free(dir);
	sbx_queue_close(q);
}
