// SPDX-License-Identifier: GPL-2.0
/*
 * The hash-chained audit log: concurrent appenders keep one chain, and
 * verify catches an edit, a deletion, a reordering, a truncation and a
 * malformed line, naming the first bad record by seq and line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "queue/queue.h"
#include "tests/unit/queue_helpers.h"
#include "tests/unit/unit.h"

#define WRITERS	4
#define EACH	25
#define TOTAL	(WRITERS * EACH)

/* the log's lines (malloc'd array of malloc'd strings, with '\n') */
static char **read_lines(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	char **v = NULL, *line = NULL;
	size_t cap = 0;

	*n = 0;
	if (!f)
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		v = realloc(v, (*n + 1) * sizeof(*v));
		v[(*n)++] = strdup(line);
	}
	free(line);
	fclose(f);
	return v;
}

static void write_lines(const char *path, char **v, size_t n)
{
	FILE *f = fopen(path, "w");

	for (size_t i = 0; f && i < n; i++)
		fputs(v[i], f);
	if (f)
		fclose(f);
}

static void free_lines(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void copy_file(const char *from, const char *to)
{
	size_t n;
	char **v = read_lines(from, &n);

	write_lines(to, v, n);
	free_lines(v, n);
}

/* a fresh log of TOTAL records written by WRITERS processes at once */
static char *make_log(const char *proj, char **head)
{
	struct sbx_queue *q = tq_open(proj);
	pid_t pids[WRITERS];
	char *path = NULL;
	int fails = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	for (int w = 0; w < WRITERS; w++) {
		fflush(NULL);
		pids[w] = fork();
		if (pids[w] == 0) {
			char *err = NULL;
			/* each writer opens the log itself, as the daemon and
			 * the hook processes do */
			struct sbx_audit *a = sbx_audit_open(q, "sess-1", &err);
			int bad = !a;

			for (int i = 0; a && i < EACH; i++) {
				json_t *body = json_pack("{s:s, s:i, s:i, s:s}", "event", "ask",
							 "writer", w, "i", i,
							 "path", "/home/u/.aws/credentials");

				bad |= sbx_audit_append(a, body, &err) != 0;
				json_decref(body);
			}
			sbx_audit_close(a);
			_exit(bad);
		}
	}
	for (int w = 0; w < WRITERS; w++) {
		int st = 0;

		waitpid(pids[w], &st, 0);
		fails += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	CU_ASSERT_EQUAL(fails, 0);
	if (asprintf(&path, "%s/.sandbox/audit/sess-1.jsonl", sbx_queue_project(q)) < 0 ||
	    asprintf(head, "%s/.sandbox/audit/sess-1.head", sbx_queue_project(q)) < 0)
		abort();
	sbx_queue_close(q);
	return path;
}

SBX_TEST(audit, concurrent_appends_keep_one_chain)
{
	char *head, *path = make_log("chain", &head);
	struct sbx_audit_report r;
	size_t n;
	char **v = read_lines(path, &n);
	int bad_seq = 0, per_writer[WRITERS] = { 0 };

	CU_ASSERT_EQUAL(n, TOTAL);
	for (size_t i = 0; i < n; i++) {
		json_t *j = json_loads(v[i], 0, NULL);

		if (json_integer_value(json_object_get(j, "seq")) != (json_int_t)i + 1)
			bad_seq++;
		per_writer[json_integer_value(json_object_get(j, "writer")) % WRITERS]++;
		json_decref(j);
	}
	CU_ASSERT_EQUAL(bad_seq, 0);
	for (int w = 0; w < WRITERS; w++)
		CU_ASSERT_EQUAL(per_writer[w], EACH);
	CU_ASSERT_EQUAL(sbx_audit_verify(path, &r), 0);
	CU_ASSERT_EQUAL(r.records, TOTAL);
	CU_ASSERT_EQUAL(r.first_bad, 0);
	sbx_audit_report_free(&r);
	/* the first record chains to 64 zeros, and the hash is recomputable */
	{
		json_t *j = json_loads(v[0], 0, NULL);

		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "prev")),
			"0000000000000000000000000000000000000000000000000000000000000000");
		json_decref(j);
	}
	free_lines(v, n);
	free(path);
	free(head);
}

/* tamper with a copy of a good log (head copied too), verify it */
static void tamper(const char *name, void (*edit)(char **v, size_t *n),
		   uint64_t want_seq, uint64_t want_line, const char *want_text)
{
	char *head, *path = make_log(name, &head), *copy = NULL, *copy_head = NULL;
	struct sbx_audit_report r;
	size_t n;
	char **v;

	if (asprintf(&copy, "%s/%s.jsonl", sbx_unit_tmpdir(), name) < 0 ||
	    asprintf(&copy_head, "%s/%s.head", sbx_unit_tmpdir(), name) < 0)
		abort();
	copy_file(head, copy_head);
	v = read_lines(path, &n);
	CU_ASSERT_EQUAL_FATAL(n, TOTAL);
	edit(v, &n);
	write_lines(copy, v, n);
	CU_ASSERT_EQUAL(sbx_audit_verify(copy, &r), 1);
	CU_ASSERT_EQUAL(r.first_bad, want_seq);
	CU_ASSERT_EQUAL(r.line, want_line);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.problem ? r.problem : "", want_text));
	if (r.first_bad != want_seq || r.line != want_line ||
	    !strstr(r.problem ? r.problem : "", want_text))
		fprintf(stderr, "%s: record %llu (line %llu): %s\n", name,
			(unsigned long long)r.first_bad, (unsigned long long)r.line, r.problem);
	/* the lines before it verified */
	CU_ASSERT_EQUAL(r.records, want_line - 1);
	sbx_audit_report_free(&r);
	/* the original is still intact */
	CU_ASSERT_EQUAL(sbx_audit_verify(path, &r), 0);
	sbx_audit_report_free(&r);
	free_lines(v, n);
	free(path);
	free(head);
	free(copy);
	free(copy_head);
}

static void edit_field(char **v, size_t *n)
{
	/* record 40 now says it was somewhere else */
	char *p = strstr(v[39], "/home/u/.aws/credentials");

	(void)n;
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	memcpy(p, "/home/u/.aws/innocuous!!", 24);
}

static void delete_middle(char **v, size_t *n)
{
	free(v[49]);
	memmove(&v[49], &v[50], (*n - 50) * sizeof(*v));
	(*n)--;
}

static void swap_two(char **v, size_t *n)
{
	char *t = v[19];

	(void)n;
	v[19] = v[20];
	v[20] = t;
}

static void truncate_tail(char **v, size_t *n)
{
	for (size_t i = 90; i < *n; i++)
		free(v[i]);
	*n = 90;
}

static void garbage_line(char **v, size_t *n)
{
	free(v[29]);
	v[29] = strdup("{\"seq\": 30, this is not json\n");
	(void)n;
}

SBX_TEST(audit, detects_edit)
{
	tamper("edit", edit_field, 40, 40, "edited");
}

SBX_TEST(audit, detects_deletion)
{
	/* record 50 is gone: line 50 now holds record 51 */
	tamper("delete", delete_middle, 51, 50, "record 50 is missing");
}

SBX_TEST(audit, detects_reordering)
{
	tamper("swap", swap_two, 21, 20, "out of order");
}

SBX_TEST(audit, detects_truncation)
{
	tamper("trunc", truncate_tail, 91, 91, "truncated");
}

SBX_TEST(audit, detects_malformed_line)
{
	tamper("garbage", garbage_line, 30, 30, "not a JSON record");
}

SBX_TEST(audit, rechained_edit_is_caught_at_the_next_record)
{
	char *head, *path = make_log("rechain", &head);
	struct sbx_audit_report r;
	size_t n;
	char **v = read_lines(path, &n);
	json_t *j = json_loads(v[9], 0, NULL);

	/* an editor who also fixes record 10's own hash breaks record 11's prev */
	json_object_set_new(j, "path", json_string("/nothing/to/see"));
	json_object_set_new(j, "hash", json_string(
		"1111111111111111111111111111111111111111111111111111111111111111"));
	free(v[9]);
	v[9] = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	v[9] = realloc(v[9], strlen(v[9]) + 2);
	strcat(v[9], "\n");
	json_decref(j);
	write_lines(path, v, n);
	CU_ASSERT_EQUAL(sbx_audit_verify(path, &r), 1);
	CU_ASSERT_EQUAL(r.first_bad, 10);
	sbx_audit_report_free(&r);
	free_lines(v, n);
	free(path);
	free(head);
}

SBX_TEST(audit, append_after_truncation_stays_detectable)
{
	struct sbx_queue *q;
	char *head, *path = make_log("afterc", &head), *err = NULL;
	struct sbx_audit_report r;
	struct sbx_audit *a;
	size_t n;
	char **v = read_lines(path, &n);
	json_t *body = json_pack("{s:s}", "event", "later");

	/* cut the last 5 records, then let an appender continue */
	for (size_t i = 95; i < n; i++)
		free(v[i]);
	n = 95;
	write_lines(path, v, n);
	q = tq_open("afterc");
	a = sbx_audit_open(q, "sess-1", &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(sbx_audit_append(a, body, &err), 0);
	CU_ASSERT_EQUAL(sbx_audit_verify(path, &r), 1);
	/* the new record continues from the head, so the hole shows */
	CU_ASSERT_EQUAL(r.first_bad, 101);
	CU_ASSERT_EQUAL(r.line, 96);
	sbx_audit_report_free(&r);
	/* reserved keys are the log's */
	{
		json_t *bad = json_pack("{s:i}", "seq", 1);

		CU_ASSERT_EQUAL(sbx_audit_append(a, bad, &err), -EINVAL);
		json_decref(bad);
	}
	json_decref(body);
	sbx_audit_close(a);
	sbx_queue_close(q);
	free_lines(v, n);
	free(err);
	free(path);
	free(head);
}

SBX_TEST(audit, interrupted_head_update_is_tolerated)
{
	char *head, *path = make_log("lag", &head), *old_head = NULL, *err = NULL;
	struct sbx_audit_report r;
	struct sbx_queue *q;
	struct sbx_audit *a;
	json_t *body = json_pack("{s:s}", "event", "x");

	if (asprintf(&old_head, "%s.saved", head) < 0)
		abort();
	copy_file(head, old_head);
	q = tq_open("lag");
	a = sbx_audit_open(q, "sess-1", &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(sbx_audit_append(a, body, &err), 0);
	/* an appender that died between its append and the head update */
	CU_ASSERT_EQUAL(rename(old_head, head), 0);
	CU_ASSERT_EQUAL(sbx_audit_verify(path, &r), 0);
	CU_ASSERT_EQUAL(r.records, TOTAL + 1);
	sbx_audit_report_free(&r);
	/* the next append repairs the head */
	CU_ASSERT_EQUAL(sbx_audit_append(a, body, &err), 0);
	CU_ASSERT_EQUAL(sbx_audit_verify(path, &r), 0);
	CU_ASSERT_EQUAL(r.records, TOTAL + 2);
	sbx_audit_report_free(&r);
	json_decref(body);
	sbx_audit_close(a);
	sbx_queue_close(q);
	free(old_head);
	free(err);
	free(path);
	free(head);
}

static void cli_verify_body(void)
{
	char *head, *path = make_log("cli", &head), *out = NULL, *err = NULL, *proj = tq_dir("cli");
	char *argv_dir[] = { "bpfsbx", "audit", "verify", proj, NULL };
	char *argv_file[] = { "bpfsbx", "audit", "verify", path, NULL };
	char *argv_usage[] = { "bpfsbx", "audit", "verify", NULL };
	char *argv_tail[] = { "bpfsbx", "audit", "tail", "-n", "2", proj, NULL };
	char *want = NULL;
	int rc;

	rc = tq_run(NULL, argv_dir, NULL, &out, &err);
	CU_ASSERT_EQUAL(rc, 0);
	if (asprintf(&want, "%s: ok, %d records\n", path, TOTAL) < 0)
		abort();
	CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
	free(want);
	free(out);
	free(err);

	rc = tq_run(NULL, argv_tail, NULL, &out, &err);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, " sess-1 #99 event=ask path=/home/u/.aws/credentials"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, " sess-1 #100 "));
	CU_ASSERT_PTR_NULL(strstr(out, " sess-1 #98 "));
	free(out);
	free(err);

	/* delete record 50 */
	{
		size_t n;
		char **v = read_lines(path, &n);

		delete_middle(v, &n);
		write_lines(path, v, n);
		free_lines(v, n);
	}
	rc = tq_run(NULL, argv_file, NULL, &out, &err);
	CU_ASSERT_EQUAL(rc, 1);
	if (asprintf(&want, "%s: record 51 (line 50): seq 51 follows seq 49", path) < 0)
		abort();
	CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
	free(want);
	free(out);
	free(err);

	/* no argument: the current project; the tests run outside any */
	rc = tq_run(NULL, argv_usage, NULL, &out, &err);
	CU_ASSERT_EQUAL(rc, 1);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "not in a project"));
	free(out);
	free(err);
	free(proj);
	free(path);
	free(head);
}

SBX_TEST(audit, cli_verify)
{
	if (!tq_bin())
		SBX_SKIP("bpfsbx-san is not built next to unit-tests (make build/bpfsbx-san)");
	cli_verify_body();
}

SBX_TEST(audit, lazy_appends_keep_caller_time)
{
	struct sbx_queue *q = tq_open("lazy");
	char *err = NULL, *path = NULL;
	struct sbx_audit_report r;
	struct sbx_audit *a;
	size_t n;
	char **v;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	a = sbx_audit_open(q, "lazy", &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	sbx_audit_set_sync(a, false);
	for (int i = 0; i < 200; i++) {
		/* the daemon passes the kernel event's time */
		json_t *b = i % 2 ? json_pack("{s:s, s:i}", "event", "kernel", "i", i)
				  : json_pack("{s:s, s:s, s:i}", "event", "kernel",
					      "time", "2026-11-30T10:15:03.123Z", "i", i);

		CU_ASSERT_EQUAL(sbx_audit_append(a, b, &err), 0);
		json_decref(b);
	}
	CU_ASSERT_EQUAL(sbx_audit_sync(a), 0);
	if (asprintf(&path, "%s/.sandbox/audit/lazy.jsonl", sbx_queue_project(q)) < 0)
		abort();
	CU_ASSERT_EQUAL(sbx_audit_verify(path, &r), 0);
	CU_ASSERT_EQUAL(r.records, 200);
	sbx_audit_report_free(&r);
	v = read_lines(path, &n);
	CU_ASSERT_EQUAL_FATAL(n, 200);
	CU_ASSERT_PTR_NOT_NULL(strstr(v[0], "\"time\":\"2026-11-30T10:15:03.123Z\""));
	CU_ASSERT_PTR_NULL(strstr(v[1], "\"time\":\"2026-11-30T10:15:03.123Z\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(v[1], "\"time\":\""));
	free_lines(v, n);
	sbx_audit_close(a);
	sbx_queue_close(q);
	free(path);
	free(err);
}

SBX_TEST(audit, verify_while_others_append)
{
	struct sbx_queue *q = tq_open("busy");
	char *path = NULL, *err = NULL;
	int bad = 0, rounds = 0, st = 0;
	struct sbx_audit *a;
	pid_t pid;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	a = sbx_audit_open(q, "busy", &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	{
		json_t *b = json_pack("{s:s}", "event", "first");

		CU_ASSERT_EQUAL(sbx_audit_append(a, b, &err), 0);
		json_decref(b);
	}
	if (asprintf(&path, "%s/.sandbox/audit/busy.jsonl", sbx_queue_project(q)) < 0)
		abort();
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fail = 0;

		sbx_audit_set_sync(a, false);
		for (int i = 0; i < 400; i++) {
			json_t *b = json_pack("{s:s, s:i}", "event", "burst", "i", i);

			fail |= sbx_audit_append(a, b, NULL) != 0;
			json_decref(b);
		}
		_exit(fail);
	}
	/* a reader never sees the log and its head disagree */
	while (waitpid(pid, &st, WNOHANG) == 0) {
		struct sbx_audit_report r;

		if (sbx_audit_verify(path, &r) != 0) {
			fprintf(stderr, "busy: record %llu: %s\n", (unsigned long long)r.first_bad,
				r.problem ? r.problem : "?");
			bad++;
		}
		sbx_audit_report_free(&r);
		rounds++;
	}
	CU_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_TRUE(rounds > 0);
	{
		struct sbx_audit_report r;

		CU_ASSERT_EQUAL(sbx_audit_verify(path, &r), 0);
		CU_ASSERT_EQUAL(r.records, 401);
		sbx_audit_report_free(&r);
	}
	sbx_audit_close(a);
	sbx_queue_close(q);
	free(path);
	free(err);
}

SBX_TEST(audit, lazy_and_durable_writers_share_a_head)
{
	struct sbx_queue *q = tq_open("mixed");
	struct sbx_audit *lazy, *durable;
	struct sbx_audit_report r;
	char *err = NULL, *path = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	lazy = sbx_audit_open(q, "mixed", &err);
	durable = sbx_audit_open(q, "mixed", &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(lazy);
	CU_ASSERT_PTR_NOT_NULL_FATAL(durable);
	sbx_audit_set_sync(lazy, false);
	if (asprintf(&path, "%s/.sandbox/audit/mixed.jsonl", sbx_queue_project(q)) < 0)
		abort();
	for (int i = 0; i < 60; i++) {
		/* the durable writer replaces the head file; the lazy one
		 * must notice and not write into the replaced inode */
		json_t *b = json_pack("{s:i}", "i", i);

		CU_ASSERT_EQUAL(sbx_audit_append(i % 3 ? lazy : durable, b, &err), 0);
		json_decref(b);
		if (i % 7 == 0) {
			CU_ASSERT_EQUAL(sbx_audit_verify(path, &r), 0);
			CU_ASSERT_EQUAL(r.records, (uint64_t)i + 1);
			sbx_audit_report_free(&r);
		}
	}
	CU_ASSERT_EQUAL(sbx_audit_sync(lazy), 0);
	CU_ASSERT_EQUAL(sbx_audit_verify(path, &r), 0);
	CU_ASSERT_EQUAL(r.records, 60);
	sbx_audit_report_free(&r);
	sbx_audit_close(lazy);
	sbx_audit_close(durable);
	sbx_queue_close(q);
	free(path);
	free(err);
}
