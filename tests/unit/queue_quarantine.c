// SPDX-License-Identifier: GPL-2.0
/*
 * Malformed, foreign and replayed files: moved to quarantine/ with a
 * NAME.why note, never deleted, never crash a reader, never applied.
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

#define DATA "tests/unit/data/queue/"
#define FILE_ID "20261130T101503.123456Z-4242-1a2b3c4d"

static char *data(const char *name)
{
	char *buf = tq_read(AT_FDCWD, name);

	if (!buf)
		fprintf(stderr, "missing test data %s (run from the source tree)\n", name);
	return buf;
}

/* quarantine/<name>.why exists and mentions what */
static bool why_says(struct sbx_queue *q, const char *name, const char *what)
{
	char why[512], *text;
	bool ok;

	snprintf(why, sizeof(why), "%s.why", name);
	text = tq_read(sbx_queue_dirfd(q, SBX_QDIR_QUARANTINE), why);
	ok = text && strstr(text, what);
	if (!ok)
		fprintf(stderr, "quarantine/%s: wanted \"%s\", got: %s\n", why, what,
			text ? text : "(no such file)");
	free(text);
	return ok;
}

SBX_TEST(queue, pending_garbage_is_quarantined)
{
	struct sbx_queue *q = tq_open("garbage");
	char *valid = data(DATA "request-valid.json"), *garbage = data(DATA "garbage.bin");
	char *trunc = data(DATA "request-truncated.json"), *schema = data(DATA "request-bad-schema.json");
	int pfd, qfd;
	char *err = NULL;
	json_t *a = NULL, *j = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(valid);
	CU_ASSERT_PTR_NOT_NULL_FATAL(garbage);
	CU_ASSERT_PTR_NOT_NULL_FATAL(trunc);
	CU_ASSERT_PTR_NOT_NULL_FATAL(schema);
	pfd = sbx_queue_dirfd(q, SBX_QDIR_PENDING);
	qfd = sbx_queue_dirfd(q, SBX_QDIR_QUARANTINE);
	CU_ASSERT_EQUAL(tq_write_raw(pfd, FILE_ID ".json", valid, strlen(valid)), 0);
	CU_ASSERT_EQUAL(tq_write_raw(pfd, "20261130T101503.123456Z-4242-00000001.json", garbage, 30), 0);
	CU_ASSERT_EQUAL(tq_write_raw(pfd, "20261130T101503.123456Z-4242-00000002.json", trunc,
				     strlen(trunc)), 0);
	CU_ASSERT_EQUAL(tq_write_raw(pfd, "20261130T101503.123456Z-4242-00000003.json", schema,
				     strlen(schema)), 0);
	/* a valid request under another id's name */
	CU_ASSERT_EQUAL(tq_write_raw(pfd, "20261130T101503.123456Z-4242-00000004.json", valid,
				     strlen(valid)), 0);
	CU_ASSERT_EQUAL(tq_write_raw(pfd, "notes.txt", "hello\n", 6), 0);
	CU_ASSERT_EQUAL(mkdirat(pfd, "20261130T101503.123456Z-4242-00000005.json", 0700), 0);
	CU_ASSERT_EQUAL(mkfifoat(pfd, "20261130T101503.123456Z-4242-00000006.json", 0600), 0);
	CU_ASSERT_EQUAL(symlinkat("/etc/passwd", pfd, "20261130T101503.123456Z-4242-00000007.json"), 0);
	CU_ASSERT_EQUAL(tq_write_raw(pfd, "20261130T101503.123456Z-4242-00000008.json", "", 0), 0);

	CU_ASSERT_EQUAL(sbx_queue_list(q, SBX_QDIR_PENDING, &a, &err), 0);
	CU_ASSERT_EQUAL(json_array_size(a), 1);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(a, 0), "id")), FILE_ID);
	CU_ASSERT_PTR_NOT_NULL(err);	/* the reader is told */
	CU_ASSERT_EQUAL(tq_count(pfd, 0), 1);
	/* nine files, nine notes: nothing deleted */
	CU_ASSERT_EQUAL(tq_count(qfd, 0), 18);
	CU_ASSERT_TRUE(why_says(q, "20261130T101503.123456Z-4242-00000001.json", "not valid JSON"));
	CU_ASSERT_TRUE(why_says(q, "20261130T101503.123456Z-4242-00000002.json", "not valid JSON"));
	CU_ASSERT_TRUE(why_says(q, "20261130T101503.123456Z-4242-00000003.json", "but the file is named"));
	CU_ASSERT_TRUE(why_says(q, "20261130T101503.123456Z-4242-00000004.json", "but the file is named"));
	CU_ASSERT_TRUE(why_says(q, "notes.txt", "foreign file"));
	CU_ASSERT_TRUE(why_says(q, "20261130T101503.123456Z-4242-00000005.json", "not a regular file"));
	CU_ASSERT_TRUE(why_says(q, "20261130T101503.123456Z-4242-00000006.json", "not a regular file"));
	CU_ASSERT_TRUE(why_says(q, "20261130T101503.123456Z-4242-00000007.json", "not a regular file"));
	CU_ASSERT_TRUE(why_says(q, "20261130T101503.123456Z-4242-00000008.json", "not valid JSON"));
	CU_ASSERT_TRUE(why_says(q, "notes.txt", "file: pending/notes.txt"));
	/* the symlink was moved, its target untouched */
	CU_ASSERT_EQUAL(access("/etc/passwd", R_OK), 0);
	json_decref(a);
	free(err);
	err = NULL;

	/* a clash in quarantine/ gets a counter, nothing is replaced */
	CU_ASSERT_EQUAL(tq_write_raw(pfd, "notes.txt", "again\n", 6), 0);
	CU_ASSERT_EQUAL(sbx_queue_list(q, SBX_QDIR_PENDING, &a, &err), 0);
	json_decref(a);
	free(err);
	err = NULL;
	{
		char *first = tq_read(qfd, "notes.txt"), *second = tq_read(qfd, "notes.txt.1");

		CU_ASSERT_STRING_EQUAL(first ? first : "", "hello\n");
		CU_ASSERT_STRING_EQUAL(second ? second : "", "again\n");
		CU_ASSERT_TRUE(tq_exists(qfd, "notes.txt.1.why"));
		free(first);
		free(second);
	}
	/* schema: a bad kind is named */
	{
		json_t *s = json_loads(schema, 0, NULL);
		char *why = NULL;

		CU_ASSERT_FALSE(sbx_queue_validate_request(s, NULL, &why));
		CU_ASSERT_PTR_NOT_NULL(strstr(why ? why : "", "\"kind\" must be one of"));
		free(why);
		json_decref(s);
	}
	/* reading one bad file directly also quarantines it */
	CU_ASSERT_EQUAL(tq_write_raw(pfd, "20261130T101503.123456Z-4242-00000009.json", "{", 1), 0);
	CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_PENDING, "20261130T101503.123456Z-4242-00000009", &j,
				       &err), -EBADMSG);
	CU_ASSERT_PTR_NULL(j);
	CU_ASSERT_FALSE(tq_exists(pfd, "20261130T101503.123456Z-4242-00000009.json"));
	CU_ASSERT_TRUE(tq_exists(qfd, "20261130T101503.123456Z-4242-00000009.json"));
	free(err);
	free(valid);
	free(garbage);
	free(trunc);
	free(schema);
	sbx_queue_close(q);
}

/* write done/<name> from text, check it, return the verdict */
static int check_text(struct sbx_queue *q, const char *name, const char *text, char **why)
{
	int dfd = sbx_queue_dirfd(q, SBX_QDIR_DONE);

	if (tq_write_raw(dfd, name, text, strlen(text)))
		return -EIO;
	return sbx_queue_check_done(q, name, SBX_CHECK_QUARANTINE, NULL, NULL, why);
}

/* a decision record for request req, as text, with the object changed or not */
static char *fake_done(const json_t *req, const char *new_path)
{
	json_t *d = json_deep_copy(req);
	char *s;

	json_object_set_new(d, "decision", json_pack("{s:s, s:s, s:s, s:s}", "verdict", "approve",
						     "scope", "always", "by", "mallory",
						     "at", "2026-11-30T10:16:00Z"));
	if (new_path)
		json_object_set_new(json_object_get(d, "object"), "path", json_string(new_path));
	s = json_dumps(d, JSON_INDENT(2));
	json_decref(d);
	return s;
}

SBX_TEST(queue, done_checks_quarantine_and_replay)
{
	struct sbx_queue *q = tq_open("donecheck");
	struct sbx_decision_rec yes = { .approve = true, .scope = SBX_SCOPE_ONCE };
	struct sbx_done_ident ident;
	char *a_id, *b_id, *c_id, name[128], *why = NULL, *text, *copy;
	json_t *done = NULL, *b_req = NULL, *c_req = NULL;
	int dfd, qfd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	dfd = sbx_queue_dirfd(q, SBX_QDIR_DONE);
	qfd = sbx_queue_dirfd(q, SBX_QDIR_QUARANTINE);
	a_id = tq_submit(q, tq_file_req("/home/u/.aws/credentials"));
	b_id = tq_submit(q, tq_file_req("/home/u/notes.txt"));
	c_id = tq_submit(q, tq_file_req("/home/u/other.txt"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(a_id);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b_id);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c_id);
	CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_PENDING, b_id, &b_req, NULL), 0);
	CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_PENDING, c_id, &c_req, NULL), 0);

	/* the real decision: OK, then APPLIED once marked */
	CU_ASSERT_EQUAL(sbx_queue_claim(q, a_id, NULL, NULL), 0);
	CU_ASSERT_EQUAL(sbx_queue_decide(q, a_id, &yes, NULL), 0);
	snprintf(name, sizeof(name), "%s.json", a_id);
	CU_ASSERT_EQUAL(sbx_queue_check_done(q, name, SBX_CHECK_QUARANTINE, &done, &ident, &why),
			SBX_DONE_OK);
	CU_ASSERT_PTR_NOT_NULL(done);
	json_decref(done);
	done = NULL;
	CU_ASSERT_FALSE(sbx_queue_is_applied(q, a_id));
	CU_ASSERT_EQUAL(sbx_queue_mark_applied_ident(q, a_id, &ident), 0);
	CU_ASSERT_TRUE(sbx_queue_is_applied(q, a_id));
	/* seen again (a restart): the same file, already applied, left alone */
	CU_ASSERT_EQUAL(sbx_queue_check_done(q, name, SBX_CHECK_QUARANTINE, NULL, NULL, &why),
			SBX_DONE_APPLIED);
	CU_ASSERT_TRUE(tq_exists(dfd, name));

	/* replay: the same bytes moved over it again are a different file */
	text = tq_read(dfd, name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL(tq_write_raw(dfd, "replay.tmp", text, strlen(text)), 0);
	CU_ASSERT_EQUAL(renameat(dfd, "replay.tmp", dfd, name), 0);
	CU_ASSERT_EQUAL(sbx_queue_check_done(q, name, SBX_CHECK_QUARANTINE, NULL, NULL, &why),
			SBX_DONE_BAD);
	CU_ASSERT_PTR_NOT_NULL(strstr(why ? why : "", "replay"));
	CU_ASSERT_FALSE(tq_exists(dfd, name));
	CU_ASSERT_TRUE(tq_exists(qfd, name));
	free(why);
	why = NULL;
	free(text);

	/* garbage */
	snprintf(name, sizeof(name), "%s.json", b_id);
	CU_ASSERT_EQUAL(check_text(q, name, "\x7f" "ELF\x02\x01 not json at all", &why), SBX_DONE_BAD);
	CU_ASSERT_PTR_NOT_NULL(strstr(why ? why : "", "not valid JSON"));
	free(why);
	why = NULL;
	CU_ASSERT_TRUE(tq_exists(qfd, name));
	CU_ASSERT_FALSE(sbx_queue_is_applied(q, b_id));

	/* truncated JSON (name clash in quarantine/ gets a counter) */
	copy = fake_done(b_req, NULL);
	copy[strlen(copy) / 2] = 0;
	CU_ASSERT_EQUAL(check_text(q, name, copy, &why), SBX_DONE_BAD);
	CU_ASSERT_PTR_NOT_NULL(strstr(why ? why : "", "not valid JSON"));
	free(why);
	why = NULL;
	free(copy);
	snprintf(name, sizeof(name), "%s.json.1", b_id);
	CU_ASSERT_TRUE(tq_exists(qfd, name));

	/* the request part changed: approving something else than was asked */
	snprintf(name, sizeof(name), "%s.json", b_id);
	copy = fake_done(b_req, "/etc/shadow");
	CU_ASSERT_EQUAL(check_text(q, name, copy, &why), SBX_DONE_BAD);
	CU_ASSERT_PTR_NOT_NULL(strstr(why ? why : "", "differs from the request"));
	free(why);
	why = NULL;
	free(copy);

	/* a mismatching id: c's decision under b's name */
	copy = fake_done(c_req, NULL);
	CU_ASSERT_EQUAL(check_text(q, name, copy, &why), SBX_DONE_BAD);
	CU_ASSERT_PTR_NOT_NULL(strstr(why ? why : "", "but the file is named"));
	free(why);
	why = NULL;
	free(copy);

	/* an id that was never issued */
	{
		char *fake = tq_read(AT_FDCWD, DATA "done-valid.json");

		CU_ASSERT_PTR_NOT_NULL_FATAL(fake);
		CU_ASSERT_EQUAL(check_text(q, FILE_ID ".json", fake, &why), SBX_DONE_BAD);
		CU_ASSERT_PTR_NOT_NULL(strstr(why ? why : "", "unknown request"));
		free(why);
		why = NULL;
		free(fake);
		CU_ASSERT_FALSE(sbx_queue_is_applied(q, FILE_ID));
	}
	/* a foreign name */
	CU_ASSERT_EQUAL(check_text(q, "README", "hi", &why), SBX_DONE_BAD);
	free(why);
	why = NULL;

	/* and a correct decision for b still goes through */
	CU_ASSERT_EQUAL(sbx_queue_claim(q, b_id, NULL, NULL), 0);
	CU_ASSERT_EQUAL(sbx_queue_decide(q, b_id, &yes, NULL), 0);
	snprintf(name, sizeof(name), "%s.json", b_id);
	CU_ASSERT_EQUAL(sbx_queue_check_done(q, name, 0, NULL, NULL, NULL), SBX_DONE_OK);
	/* nothing of the bad files was applied */
	CU_ASSERT_FALSE(sbx_queue_is_applied(q, b_id));
	CU_ASSERT_FALSE(sbx_queue_is_applied(q, c_id));
	/* every quarantined file has its note: 7 files, 7 notes */
	CU_ASSERT_EQUAL(tq_count(qfd, 0), 14);
	json_decref(b_req);
	json_decref(c_req);
	free(a_id);
	free(b_id);
	free(c_id);
	sbx_queue_close(q);
}

SBX_TEST(queue, validate_done_schema)
{
	char *text = tq_read(AT_FDCWD, DATA "done-valid.json"), *why = NULL;
	json_t *d;

	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	d = json_loads(text, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_TRUE(sbx_queue_validate_done(d, FILE_ID, &why));
	CU_ASSERT_FALSE(sbx_queue_validate_done(d, "20261130T101503.123456Z-4242-00000001", &why));
	free(why);
	why = NULL;
	CU_ASSERT_FALSE(sbx_queue_validate_done(NULL, NULL, &why));
	free(why);
	why = NULL;
	/* an expired request cannot be approved */
	json_object_set_new(json_object_get(d, "decision"), "expired", json_true());
	CU_ASSERT_FALSE(sbx_queue_validate_done(d, FILE_ID, &why));
	free(why);
	why = NULL;
	json_object_del(json_object_get(d, "decision"), "expired");
	/* a command is approved once only */
	json_object_set_new(d, "kind", json_string("command"));
	json_object_set_new(d, "object", json_pack("{s:s}", "command", "make deploy"));
	CU_ASSERT_FALSE(sbx_queue_validate_done(d, FILE_ID, &why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why ? why : "", "only be approved once"));
	free(why);
	why = NULL;
	json_object_set_new(json_object_get(d, "decision"), "scope", json_string("once"));
	CU_ASSERT_TRUE(sbx_queue_validate_done(d, FILE_ID, &why));
	/* a bad verdict */
	json_object_set_new(json_object_get(d, "decision"), "verdict", json_string("maybe"));
	CU_ASSERT_FALSE(sbx_queue_validate_done(d, FILE_ID, &why));
	free(why);
	json_decref(d);
	free(text);
}
