// SPDX-License-Identifier: GPL-2.0
/* Deadlines and expiry, waiting for a decision, bumping counts. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "queue/queue.h"
#include "tests/unit/queue_helpers.h"
#include "tests/unit/unit.h"

static json_t *with_deadline(json_t *req, time_t when)
{
	char *t = sbx_time_rfc3339(when);

	json_object_set_new(req, "deadline", json_string(t));
	free(t);
	return req;
}

SBX_TEST(queue, expire_denies_overdue_requests)
{
	struct sbx_queue *q = tq_open("expire");
	time_t now = time(NULL);
	char *late, *early, *claimed_late;
	json_t *done = NULL, *req = NULL;
	unsigned n = 99;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	late = tq_submit(q, with_deadline(tq_file_req("/a"), now - 5));
	early = tq_submit(q, with_deadline(tq_file_req("/b"), now + 3600));
	claimed_late = tq_submit(q, with_deadline(tq_file_req("/c"), now - 5));
	CU_ASSERT_PTR_NOT_NULL_FATAL(late);
	CU_ASSERT_PTR_NOT_NULL_FATAL(early);
	CU_ASSERT_PTR_NOT_NULL_FATAL(claimed_late);
	/* the default deadline is SBX_DEFAULT_DEADLINE_S away */
	{
		char *id = tq_submit(q, tq_file_req("/d"));
		time_t dl;

		CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_PENDING, id, &req, NULL), 0);
		CU_ASSERT_EQUAL(sbx_time_parse(json_string_value(json_object_get(req, "deadline")),
					       &dl), 0);
		CU_ASSERT_TRUE(dl >= now + SBX_DEFAULT_DEADLINE_S - 1 &&
			       dl <= now + SBX_DEFAULT_DEADLINE_S + 5);
		json_decref(req);
		free(id);
	}
	/* an approver is working on this one (its claim is fresh) */
	CU_ASSERT_EQUAL(sbx_queue_claim(q, claimed_late, NULL, NULL), 0);

	CU_ASSERT_EQUAL(sbx_queue_expire(q, now, &n), 0);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_DONE, late, &done, NULL), 0);
	CU_ASSERT_STRING_EQUAL(tq_decision(done, "verdict"), "deny");
	CU_ASSERT_STRING_EQUAL(tq_decision(done, "by"), "bpfsbx");
	CU_ASSERT_TRUE(json_is_true(json_object_get(json_object_get(done, "decision"), "expired")));
	json_decref(done);
	done = NULL;
	/* not yet due: still pending */
	CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_PENDING, early, &req, NULL), 0);
	json_decref(req);
	/* the claimed one, once its claim's lease is over */
	CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_CLAIMED, claimed_late, &req, NULL), 0);
	json_decref(req);
	CU_ASSERT_EQUAL(sbx_queue_expire(q, now + SBX_CLAIM_LEASE_S + 1, &n), 0);
	/* ... which also makes the one with the default deadline overdue */
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_DONE, claimed_late, &done, NULL), 0);
	CU_ASSERT_STRING_EQUAL(tq_decision(done, "verdict"), "deny");
	json_decref(done);
	CU_ASSERT_EQUAL(tq_count(sbx_queue_dirfd(q, SBX_QDIR_CLAIMED), 0), 0);
	CU_ASSERT_EQUAL(tq_count(sbx_queue_dirfd(q, SBX_QDIR_PENDING), 0), 1);
	/* an approver who comes too late is told */
	{
		struct sbx_decision_rec yes = { .approve = true };
		char *err = NULL;

		CU_ASSERT_EQUAL(sbx_queue_decide(q, late, &yes, &err), -EEXIST);
		free(err);
	}
	free(late);
	free(early);
	free(claimed_late);
	sbx_queue_close(q);
}

SBX_TEST(queue, wait_done_wakes_up)
{
	struct sbx_queue *q = tq_open("wait");
	char *id, *err = NULL;
	json_t *done = NULL;
	int64_t t0, dt;
	pid_t pid;
	int st = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	id = tq_submit(q, tq_file_req("/home/u/.kube/config"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(id);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct sbx_decision_rec d = { .approve = true, .scope = SBX_SCOPE_SESSION };

		usleep(300 * 1000);
		_exit(sbx_queue_claim(q, id, NULL, NULL) || sbx_queue_decide(q, id, &d, NULL));
	}
	t0 = tq_ms();
	CU_ASSERT_EQUAL(sbx_queue_wait_done(q, id, 10000, &done, &err), 0);
	dt = tq_ms() - t0;
	waitpid(pid, &st, 0);
	CU_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* woken by inotify, not by the timeout */
	CU_ASSERT_TRUE(dt >= 250 && dt < 3000);
	CU_ASSERT_STRING_EQUAL(tq_decision(done, "scope"), "session");
	json_decref(done);
	done = NULL;
	/* already decided: returns at once */
	t0 = tq_ms();
	CU_ASSERT_EQUAL(sbx_queue_wait_done(q, id, 10000, &done, &err), 0);
	CU_ASSERT_TRUE(tq_ms() - t0 < 1000);
	json_decref(done);
	free(err);
	free(id);
	sbx_queue_close(q);
}

SBX_TEST(queue, wait_done_times_out)
{
	struct sbx_queue *q = tq_open("waitto");
	char *id, *err = NULL;
	json_t *done = NULL;
	int64_t t0, dt;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	id = tq_submit(q, tq_file_req("/home/u/.docker/config.json"));
	t0 = tq_ms();
	CU_ASSERT_EQUAL(sbx_queue_wait_done(q, id, 400, &done, &err), -ETIMEDOUT);
	dt = tq_ms() - t0;
	CU_ASSERT_PTR_NULL(done);
	CU_ASSERT_PTR_NOT_NULL(err);
	CU_ASSERT_TRUE(dt >= 390 && dt < 3000);
	free(err);
	err = NULL;
	/* a malformed decision is not taken for one: still a timeout */
	{
		char name[128];

		snprintf(name, sizeof(name), "%s.json", id);
		CU_ASSERT_EQUAL(sbx_write_atomic(sbx_queue_dirfd(q, SBX_QDIR_DONE), name, "{}", 2,
						 SBX_W_NOREPLACE, (uid_t)-1, (gid_t)-1), 0);
		CU_ASSERT_EQUAL(sbx_queue_wait_done(q, id, 200, &done, &err), -ETIMEDOUT);
		CU_ASSERT_PTR_NULL(done);
		free(err);
	}
	free(id);
	sbx_queue_close(q);
}

SBX_TEST(queue, bump_counts_and_never_resurrects)
{
	struct sbx_queue *q = tq_open("bump");
	char *id, name[128];
	json_t *req = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	id = tq_submit(q, tq_file_req("/home/u/.aws/credentials"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(id);
	snprintf(name, sizeof(name), "%s.json", id);
	for (int i = 0; i < 1000; i++)
		CU_ASSERT_EQUAL(sbx_queue_bump(q, id, 1), 0);
	CU_ASSERT_EQUAL(sbx_queue_bump(q, id, 9), 0);
	CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_PENDING, id, &req, NULL), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(req, "count")), 1010);
	json_decref(req);
	/* no temporary files left behind */
	CU_ASSERT_EQUAL(tq_count(sbx_queue_dirfd(q, SBX_QDIR_PENDING), 1), 0);
	/* claimed: a bump must not put it back in pending/ */
	CU_ASSERT_EQUAL(sbx_queue_claim(q, id, &req, NULL), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(req, "count")), 1010);
	json_decref(req);
	CU_ASSERT_EQUAL(sbx_queue_bump(q, id, 1), -ENOENT);
	CU_ASSERT_FALSE(tq_exists(sbx_queue_dirfd(q, SBX_QDIR_PENDING), name));
	CU_ASSERT_EQUAL(tq_count(sbx_queue_dirfd(q, SBX_QDIR_PENDING), 1), 0);
	/* and the decision still checks against the issued request */
	{
		struct sbx_decision_rec d = { .approve = true };

		CU_ASSERT_EQUAL(sbx_queue_decide(q, id, &d, NULL), 0);
		CU_ASSERT_EQUAL(sbx_queue_check_done(q, name, 0, NULL, NULL, NULL), SBX_DONE_OK);
	}
	free(id);
	sbx_queue_close(q);
}

/* a bumper and claimers at once: the request is never in two places */
SBX_TEST(queue, bump_races_claim)
{
	struct sbx_queue *q = tq_open("bumprace");
	int both = 0, lost = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	for (int r = 0; r < 50; r++) {
		char *id = tq_submit(q, tq_file_req("/x")), name[128];
		pid_t pid;
		int st = 0;

		snprintf(name, sizeof(name), "%s.json", id);
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			for (int i = 0; i < 200; i++)
				if (sbx_queue_bump(q, id, 1) == -ENOENT)
					break;
			_exit(0);
		}
		usleep((unsigned)(r % 10) * 200);
		CU_ASSERT_EQUAL(sbx_queue_claim(q, id, NULL, NULL), 0);
		waitpid(pid, &st, 0);
		if (tq_exists(sbx_queue_dirfd(q, SBX_QDIR_PENDING), name))
			both++;
		if (!tq_exists(sbx_queue_dirfd(q, SBX_QDIR_CLAIMED), name))
			lost++;
		free(id);
	}
	CU_ASSERT_EQUAL(both, 0);
	CU_ASSERT_EQUAL(lost, 0);
	sbx_queue_close(q);
}
