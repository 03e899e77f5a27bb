// SPDX-License-Identifier: GPL-2.0
/*
 * Without a daemon, overdue requests are denied at their deadline by
 * every approver that sees them (sbx_queue_expire, called by resolve,
 * watch and the dashboard's feed): approving one late is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/clock.h"
#include "queue/queue.h"
#include "tests/unit/queue_helpers.h"
#include "tests/unit/unit.h"

static json_t *overdue(json_t *req)
{
	char *t = sbx_time_rfc3339(time(NULL) - 5);

	json_object_set_new(req, "deadline", json_string(t));
	free(t);
	return req;
}

static bool expired_deny(struct sbx_queue *q, const char *id)
{
	json_t *d = NULL, *dec;
	bool yes;

	if (sbx_queue_read(q, SBX_QDIR_DONE, id, &d, NULL))
		return false;
	dec = json_object_get(d, "decision");
	yes = !strcmp(json_string_value(json_object_get(dec, "verdict")) ?: "", "deny") &&
	      json_is_true(json_object_get(dec, "expired"));
	json_decref(d);
	return yes;
}

SBX_TEST(queue, approvers_deny_overdue_requests)
{
	struct sbx_queue *q;
	char *dir, *a, *b, *c, *out = NULL, *err = NULL;
	struct sbx_resolve_opts o = { .approve = true, .scope = SBX_SCOPE_ONCE };
	json_t *done = NULL;

	q = tq_open("overdue");
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	dir = tq_dir("overdue");
	a = tq_submit(q, overdue(tq_file_req("/home/u/a")));
	b = tq_submit(q, overdue(tq_file_req("/home/u/b")));
	c = tq_submit(q, overdue(tq_file_req("/home/u/c")));
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	/* the library every approver decides through: too late is denied */
	CU_ASSERT_NOT_EQUAL(sbx_queue_resolve(q, a, &o, &done, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "deadline has passed"));
	CU_ASSERT_TRUE(expired_deny(q, a));
	json_decref(done);
	free(err);
	err = NULL;
	if (tq_bin()) {
		/* bpfsbx approve, after the deadline: refused, and denied */
		char *av[] = { "bpfsbx", "approve", b, "--yes", NULL };
		char *wv[] = { "bpfsbx", "watch", "--once", "--lines", NULL };

		CU_ASSERT_EQUAL(tq_run(dir, av, NULL, &out, &err), 1);
		CU_ASSERT_TRUE(expired_deny(q, b));
		free(out);
		free(err);
		/* watch: an overdue request is denied, not shown */
		CU_ASSERT_EQUAL(tq_run(dir, wv, "quit\n", &out, &err), 0);
		CU_ASSERT_PTR_NULL(out ? strstr(out, "/home/u/c") : NULL);
		CU_ASSERT_TRUE(expired_deny(q, c));
		free(out);
		free(err);
	}
	free(a);
	free(b);
	free(c);
	free(dir);
	sbx_queue_close(q);
}
