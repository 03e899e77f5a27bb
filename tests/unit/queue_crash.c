// SPDX-License-Identifier: GPL-2.0
/*
 * A writer killed with SIGKILL at every step of a write (the test hook
 * sbx_test_crash_at in lib/fileio.c): no request the writer reported as
 * written is lost, none is duplicated, no partial file is ever visible
 * under a final name, and readers ignore the leftovers, then quarantine
 * them once they are abandoned.
 */
#include <dirent.h>
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

/* Run fn in a child that dies at step k; *reported is what it said it wrote. */
static bool run_killed(int k, int (*fn)(struct sbx_queue *, const char *, char **),
		       struct sbx_queue *q, const char *arg, char *reported, size_t n)
{
	int p[2], st = 0;
	ssize_t got;
	pid_t pid;

	reported[0] = 0;
	if (pipe(p))
		return false;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char *out = NULL;

		close(p[0]);
		sbx_test_crash_at = k;
		sbx_test_crash_step = 0;
		if (fn(q, arg, &out) == 0 && out) {
			/* only now does the writer claim the write happened */
			if (write(p[1], out, strlen(out)) < 0)
				_exit(3);
		}
		_exit(0);
	}
	close(p[1]);
	got = read(p[0], reported, n - 1);
	reported[got > 0 ? got : 0] = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

static int do_submit(struct sbx_queue *q, const char *arg, char **out)
{
	return sbx_queue_submit(q, tq_file_req(arg), out, NULL);
}

static int do_decide(struct sbx_queue *q, const char *id, char **out)
{
	struct sbx_decision_rec d = { .approve = true, .scope = SBX_SCOPE_ONCE };
	int rc = sbx_queue_decide(q, id, &d, NULL);

	*out = rc ? NULL : strdup(id);
	return rc;
}

/* age every leftover temporary file, then check recovery quarantines it */
static void check_leftovers(struct sbx_queue *q, enum sbx_qdir sub)
{
	int fd = sbx_queue_dirfd(q, sub), before = tq_count(fd, 1);
	int qfd = sbx_queue_dirfd(q, SBX_QDIR_QUARANTINE), qbefore = tq_count(qfd, 0);
	int finals = tq_count(fd, 0), dfd;
	struct dirent *de;
	char *err = NULL;
	DIR *d;

	/* young leftovers are a writer at work: ignored, not quarantined */
	sbx_queue_recover(q, &err);
	CU_ASSERT_PTR_NULL(err);
	free(err);
	err = NULL;
	CU_ASSERT_EQUAL(tq_count(fd, 1), before);
	if (!before)
		return;
	dfd = dup(fd);
	d = fdopendir(dfd);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	rewinddir(d);
	while ((de = readdir(d)))
		if (de->d_name[0] == '.' && strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			tq_age(fd, de->d_name, 2 * SBX_TMP_GRACE_S);
	closedir(d);
	/* abandoned now: moved to quarantine/ with a note, never deleted */
	sbx_queue_recover(q, &err);
	CU_ASSERT_PTR_NOT_NULL(err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "abandoned temporary file"));
	free(err);
	CU_ASSERT_EQUAL(tq_count(fd, 1), 0);
	CU_ASSERT_EQUAL(tq_count(fd, 0), finals);
	CU_ASSERT_EQUAL(tq_count(qfd, 0), qbefore + 2 * before);
	{
		char *why = tq_find(qfd, ".why");

		CU_ASSERT_PTR_NOT_NULL(why);
		free(why);
	}
}

SBX_TEST(queue, submit_killed_at_every_step)
{
	int steps = 0;

	for (int k = 1; k <= 30; k++) {
		char name[32], reported[128], *err = NULL;
		struct sbx_queue *q;
		json_t *a = NULL;
		bool killed;

		snprintf(name, sizeof(name), "crash-submit-%d", k);
		q = tq_open(name);
		CU_ASSERT_PTR_NOT_NULL_FATAL(q);
		killed = run_killed(k, do_submit, q, "/home/u/.aws/credentials",
				    reported, sizeof(reported));
		if (!killed) {
			/* past the last step: the write completed and said so */
			CU_ASSERT_TRUE(sbx_id_valid(reported));
			steps = k - 1;
		}
		CU_ASSERT_EQUAL(sbx_queue_list(q, SBX_QDIR_PENDING, &a, &err), 0);
		/* leftovers are young: ignored, nothing quarantined */
		CU_ASSERT_PTR_NULL(err);
		CU_ASSERT_TRUE(json_array_size(a) <= 1);
		/* every file under a final name is a complete record */
		CU_ASSERT_EQUAL((size_t)tq_count(sbx_queue_dirfd(q, SBX_QDIR_PENDING), 0), json_array_size(a));
		if (reported[0]) {
			CU_ASSERT_EQUAL(json_array_size(a), 1);
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(a, 0),
										 "id")), reported);
		}
		if (json_array_size(a)) {
			/* a pending request was issued first */
			json_t *iss = NULL;
			const char *id = json_string_value(json_object_get(json_array_get(a, 0), "id"));

			CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_ISSUED, id, &iss, NULL), 0);
			json_decref(iss);
		}
		json_decref(a);
		free(err);
		err = NULL;
		check_leftovers(q, SBX_QDIR_PENDING);
		check_leftovers(q, SBX_QDIR_ISSUED);
		sbx_queue_close(q);
		if (!killed)
			break;
	}
	/* issued: 5 steps, pending: 5 steps */
	CU_ASSERT_EQUAL(steps, 10);
}

SBX_TEST(queue, decide_killed_at_every_step)
{
	int steps = 0;

	for (int k = 1; k <= 30; k++) {
		char name[32], reported[128], file[128], *id, *err = NULL;
		struct sbx_queue *q;
		json_t *j = NULL;
		bool killed, has_done, has_claim;

		snprintf(name, sizeof(name), "crash-decide-%d", k);
		q = tq_open(name);
		CU_ASSERT_PTR_NOT_NULL_FATAL(q);
		id = tq_submit(q, tq_file_req("/home/u/.netrc"));
		CU_ASSERT_PTR_NOT_NULL_FATAL(id);
		CU_ASSERT_EQUAL(sbx_queue_claim(q, id, NULL, NULL), 0);
		snprintf(file, sizeof(file), "%s.json", id);
		killed = run_killed(k, do_decide, q, id, reported, sizeof(reported));
		if (!killed)
			steps = k - 1;
		/* the next reader (a restarted daemon) finishes the work */
		CU_ASSERT_EQUAL(sbx_queue_recover(q, &err), 0);
		CU_ASSERT_PTR_NULL(err);
		free(err);
		err = NULL;
		has_done = tq_exists(sbx_queue_dirfd(q, SBX_QDIR_DONE), file);
		has_claim = tq_exists(sbx_queue_dirfd(q, SBX_QDIR_CLAIMED), file);
		CU_ASSERT_TRUE(tq_count(sbx_queue_dirfd(q, SBX_QDIR_DONE), 0) <= 1);
		/* never lost: either decided, or still claimed, not both */
		CU_ASSERT_TRUE(has_done != has_claim);
		if (reported[0])
			CU_ASSERT_TRUE(has_done);
		if (has_done) {
			CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_DONE, id, &j, NULL), 0);
			json_decref(j);
			j = NULL;
		}
		if (has_claim) {
			CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_CLAIMED, id, &j, NULL), 0);
			json_decref(j);
			/* and it can still be decided */
			CU_ASSERT_EQUAL(do_decide(q, id, &err), 0);
			free(err);
			err = NULL;
		}
		check_leftovers(q, SBX_QDIR_DONE);
		free(id);
		sbx_queue_close(q);
		if (!killed)
			break;
	}
	/* done: 5 steps, then the claim's removal and its fsync */
	CU_ASSERT_EQUAL(steps, 7);
}
