// SPDX-License-Identifier: GPL-2.0
/* Claims and decisions: exactly one approver wins, one decision stands. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "queue/queue.h"
#include "tests/unit/queue_helpers.h"
#include "tests/unit/unit.h"

#define RACERS	8
/* a claim is one rename(2); 50 rounds of 8 racers (each a fork of an ASan
 * process, about 20 ms) show that exactly one wins */
#define ROUNDS	50

/*
 * RACERS children wait on a pipe, then all try at once; each exits 0 if
 * it won, 1 if it lost cleanly, 2 on anything else.
 */
static int race(struct sbx_queue *q, const char *id, bool decide, int *winners, int *odd)
{
	int go[2];
	pid_t pids[RACERS];

	if (pipe(go))
		return -1;
	*winners = *odd = 0;
	for (int i = 0; i < RACERS; i++) {
		fflush(NULL);
		pids[i] = fork();
		if (pids[i] == 0) {
			struct sbx_decision_rec d = { .approve = i & 1, .scope = SBX_SCOPE_ONCE };
			char c;
			int rc;

			close(go[1]);
			if (read(go[0], &c, 1) < 0)
				_exit(2);
			if (decide)
				rc = sbx_queue_decide(q, id, &d, NULL);
			else
				rc = sbx_queue_claim(q, id, NULL, NULL);
			_exit(rc == 0 ? 0 : rc == (decide ? -EEXIST : -ENOENT) ? 1 : 2);
		}
	}
	close(go[0]);
	close(go[1]);	/* EOF releases every child at once */
	for (int i = 0; i < RACERS; i++) {
		int st = 0;

		waitpid(pids[i], &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			(*winners)++;
		else if (!WIFEXITED(st) || WEXITSTATUS(st) != 1)
			(*odd)++;
	}
	return 0;
}

SBX_TEST(queue, claim_race_one_winner)
{
	struct sbx_queue *q = tq_open("race");
	int bad_rounds = 0, odd_total = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	for (int r = 0; r < ROUNDS; r++) {
		char *id = tq_submit(q, tq_file_req("/home/u/.aws/credentials"));
		char name[128];
		int winners, odd;

		CU_ASSERT_PTR_NOT_NULL_FATAL(id);
		CU_ASSERT_EQUAL_FATAL(race(q, id, false, &winners, &odd), 0);
		if (winners != 1)
			bad_rounds++;
		odd_total += odd;
		snprintf(name, sizeof(name), "%s.json", id);
		CU_ASSERT_TRUE(tq_exists(sbx_queue_dirfd(q, SBX_QDIR_CLAIMED), name));
		CU_ASSERT_FALSE(tq_exists(sbx_queue_dirfd(q, SBX_QDIR_PENDING), name));
		free(id);
	}
	CU_ASSERT_EQUAL(bad_rounds, 0);
	CU_ASSERT_EQUAL(odd_total, 0);
	CU_ASSERT_EQUAL(tq_count(sbx_queue_dirfd(q, SBX_QDIR_CLAIMED), 0), ROUNDS);
	CU_ASSERT_EQUAL(tq_count(sbx_queue_dirfd(q, SBX_QDIR_PENDING), 0), 0);
	sbx_queue_close(q);
}

SBX_TEST(queue, decide_race_one_decision)
{
	struct sbx_queue *q = tq_open("drace");
	int bad_rounds = 0, odd_total = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	for (int r = 0; r < 20; r++) {
		char *id = tq_submit(q, tq_file_req("/etc/hosts"));
		int winners, odd;

		CU_ASSERT_PTR_NOT_NULL_FATAL(id);
		CU_ASSERT_EQUAL(sbx_queue_claim(q, id, NULL, NULL), 0);
		CU_ASSERT_EQUAL_FATAL(race(q, id, true, &winners, &odd), 0);
		if (winners != 1)
			bad_rounds++;
		odd_total += odd;
		free(id);
	}
	CU_ASSERT_EQUAL(bad_rounds, 0);
	CU_ASSERT_EQUAL(odd_total, 0);
	CU_ASSERT_EQUAL(tq_count(sbx_queue_dirfd(q, SBX_QDIR_DONE), 0), 20);
	CU_ASSERT_EQUAL(tq_count(sbx_queue_dirfd(q, SBX_QDIR_CLAIMED), 0), 0);
	sbx_queue_close(q);
}

SBX_TEST(queue, second_decision_changes_nothing)
{
	struct sbx_queue *q = tq_open("twice");
	struct sbx_decision_rec yes = { .approve = true, .scope = SBX_SCOPE_SESSION, .note = "first" };
	struct sbx_decision_rec no = { .approve = false, .scope = SBX_SCOPE_ONCE, .note = "second" };
	char *id, name[128], *before, *after, *err = NULL;
	json_t *req = NULL, *done = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	id = tq_submit(q, tq_file_req("/home/u/.ssh/id_rsa"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(id);
	snprintf(name, sizeof(name), "%s.json", id);
	CU_ASSERT_EQUAL(sbx_queue_claim(q, id, &req, NULL), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(req, "id")), id);
	/* a second claim loses */
	CU_ASSERT_EQUAL(sbx_queue_claim(q, id, NULL, NULL), -ENOENT);
	CU_ASSERT_EQUAL(sbx_queue_decide(q, id, &yes, NULL), 0);
	CU_ASSERT_FALSE(tq_exists(sbx_queue_dirfd(q, SBX_QDIR_CLAIMED), name));
	before = tq_read(sbx_queue_dirfd(q, SBX_QDIR_DONE), name);
	CU_ASSERT_EQUAL(sbx_queue_decide(q, id, &no, &err), -EEXIST);
	CU_ASSERT_PTR_NOT_NULL(err);
	after = tq_read(sbx_queue_dirfd(q, SBX_QDIR_DONE), name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(before);
	CU_ASSERT_PTR_NOT_NULL_FATAL(after);
	CU_ASSERT_STRING_EQUAL(before, after);
	CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_DONE, id, &done, NULL), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(done, "decision"),
								  "verdict")), "approve");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(done, "decision"),
								  "scope")), "session");
	CU_ASSERT_TRUE(sbx_queue_validate_done(done, id, NULL));
	/* deciding an unknown id */
	CU_ASSERT_EQUAL(sbx_queue_decide(q, "20261130T101503.123456Z-4242-1a2b3c4d", &no, NULL),
			-ENOENT);
	json_decref(req);
	json_decref(done);
	free(before);
	free(after);
	free(err);
	free(id);
	sbx_queue_close(q);
}

SBX_TEST(queue, resolve_reports_why)
{
	struct sbx_queue *q = tq_open("resolve");
	struct sbx_resolve_opts o = { .approve = true, .scope = SBX_SCOPE_ALWAYS };
	char *id, *err = NULL;
	json_t *done = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	id = tq_submit(q, tq_file_req("/srv/secret"));
	CU_ASSERT_EQUAL(sbx_queue_resolve(q, id, &o, &done, &err), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(done, "decision"),
								  "scope")), "always");
	json_decref(done);
	CU_ASSERT_EQUAL(sbx_queue_resolve(q, id, &o, NULL, &err), -EEXIST);
	CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "already decided"));
	free(err);
	err = NULL;
	free(id);

	id = tq_submit(q, tq_file_req("/srv/other"));
	CU_ASSERT_EQUAL(sbx_queue_claim(q, id, NULL, NULL), 0);
	CU_ASSERT_EQUAL(sbx_queue_resolve(q, id, &o, NULL, &err), -EBUSY);
	CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "taken by another approver"));
	free(err);
	err = NULL;
	CU_ASSERT_EQUAL(sbx_queue_resolve(q, "20261130T101503.123456Z-4242-1a2b3c4d", &o, NULL,
					  &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "no such request"));
	free(err);
	free(id);
	sbx_queue_close(q);
}
