// SPDX-License-Identifier: GPL-2.0
/*
 * The dashboard's API without HTTP (user/dashboard/api.c, server.c): the
 * Host/Origin check, text for JSON, and decisions through the queue, from
 * several threads at once. The page itself is tested in a browser
 * (tests/e2e/test-dashboard.mjs).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "queue/queue.h"
#include "tests/unit/queue_helpers.h"
#include "tests/unit/unit.h"
#include "user/control/control_client.h"
#include "user/dashboard/api.h"
#include "user/dashboard/feed.h"
#include "user/dashboard/server.h"
#include "user/dashboard/wrap.h"

SBX_TEST(dashboard, host_and_origin)
{
	const char *why = NULL;

	CU_ASSERT_EQUAL(sbx_dash_check_origin("127.0.0.1:8080", NULL, &why), 0);
	CU_ASSERT_EQUAL(sbx_dash_check_origin("localhost:8080", "http://localhost:8080", &why), 0);
	CU_ASSERT_EQUAL(sbx_dash_check_origin("[::1]:1", "http://[::1]:1", &why), 0);
	CU_ASSERT_EQUAL(sbx_dash_check_origin("LOCALHOST", NULL, &why), 0);
	/* DNS rebinding: a name that resolves to 127.0.0.1 is still not ours */
	CU_ASSERT_EQUAL(sbx_dash_check_origin("evil.example:8080", NULL, &why), 403);
	CU_ASSERT_EQUAL(sbx_dash_check_origin("127.0.0.1.evil.example", NULL, &why), 403);
	CU_ASSERT_EQUAL(sbx_dash_check_origin("localhost.evil.example:80", NULL, &why), 403);
	CU_ASSERT_EQUAL(sbx_dash_check_origin("127.0.0.1:80x", NULL, &why), 403);
	CU_ASSERT_EQUAL(sbx_dash_check_origin("127.0.0.1:", NULL, &why), 403);
	CU_ASSERT_EQUAL(sbx_dash_check_origin("127.0.0.1:123456", NULL, &why), 403);
	CU_ASSERT_EQUAL(sbx_dash_check_origin(NULL, NULL, &why), 403);
	CU_ASSERT_EQUAL(sbx_dash_check_origin("", NULL, &why), 403);
	/* another origin, even another port of this machine */
	CU_ASSERT_EQUAL(sbx_dash_check_origin("127.0.0.1:8080", "http://127.0.0.1:8081", &why), 403);
	CU_ASSERT_EQUAL(sbx_dash_check_origin("127.0.0.1:8080", "https://127.0.0.1:8080", &why), 403);
	CU_ASSERT_EQUAL(sbx_dash_check_origin("127.0.0.1:8080", "null", &why), 403);
	CU_ASSERT_EQUAL(sbx_dash_check_origin("127.0.0.1:8080", "http://evil.example", &why), 403);
	CU_ASSERT_PTR_NOT_NULL(why);
}

SBX_TEST(dashboard, output_becomes_valid_utf8)
{
	static const struct { const char *in; size_t len; const char *out; } cases[] = {
		{ "plain", 5, "plain" },
		{ "gr\xc3\xbc\xc3\x9f", 6, "gr\xc3\xbc\xc3\x9f" },
		{ "a\xff" "b", 3, "a\xef\xbf\xbd" "b" },
		{ "\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd" },		/* overlong '/' */
		{ "\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },	/* a surrogate */
		{ "x\0y", 3, "x\xef\xbf\xbdy" },
		{ "cut \xe2\x82", 6, "cut \xef\xbf\xbd\xef\xbf\xbd" },
		{ "", 0, "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *o = sbx_api_utf8(cases[i].in, cases[i].len);
		json_t *j = json_string(o);

		CU_ASSERT_STRING_EQUAL(o, cases[i].out);
		CU_ASSERT_PTR_NOT_NULL(j);	/* jansson takes it as text */
		json_decref(j);
		free(o);
	}
}

static struct sbx_feed *feed_of(const char *dir)
{
	struct sbx_feed *f = sbx_feed_new();
	char *err = NULL;

	CU_ASSERT_EQUAL(sbx_feed_add_project(f, dir, true, &err), 0);
	free(err);
	return f;
}

static unsigned prep(struct sbx_feed *f, const char *id, bool approve, const char *body,
		     struct sbx_api_decision *d)
{
	json_t *out = NULL;
	unsigned st = sbx_api_prepare(f, id, approve, false, body, strlen(body), d, &out);

	json_decref(out);
	return st;
}

SBX_TEST(dashboard, bodies_are_checked_before_anything_is_claimed)
{
	struct sbx_queue *q = tq_open("dash-body");
	char *dir = tq_dir("dash-body");
	char *id = tq_submit(q, tq_file_req("/home/u/.aws/credentials"));
	struct sbx_feed *f = feed_of(dir);
	struct sbx_api_decision d;

	CU_ASSERT_EQUAL(prep(f, id, true, "", &d), 400);
	CU_ASSERT_EQUAL(prep(f, id, true, "{", &d), 400);
	CU_ASSERT_EQUAL(prep(f, id, true, "[]", &d), 400);
	CU_ASSERT_EQUAL(prep(f, id, true, "{\"scope\":\"forever\"}", &d), 400);
	CU_ASSERT_EQUAL(prep(f, id, true, "{\"scope\":\"once\",\"scope\":\"always\"}", &d), 400);
	CU_ASSERT_EQUAL(prep(f, id, true, "{\"note\":\"x\",\"user\":\"root\"}", &d), 400);
	CU_ASSERT_EQUAL(prep(f, id, false, "{\"scope\":\"once\"}", &d), 400);
	CU_ASSERT_EQUAL(prep(f, "../../etc/passwd", true, "{}", &d), 400);
	CU_ASSERT_EQUAL(prep(f, "20261130T101503.123456Z-4242-1a2b3c4d", true, "{}", &d), 404);
	CU_ASSERT_EQUAL(prep(f, id, true, "{\"scope\":\"always\",\"note\":\"ok\"}", &d), 200);
	CU_ASSERT_EQUAL(d.scope, SBX_SCOPE_ALWAYS);
	CU_ASSERT_STRING_EQUAL(d.note, "ok");
	sbx_api_decision_free(&d);
	/* nothing was claimed or decided by any of it */
	{
		json_t *r = NULL;

		CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_PENDING, id, &r, NULL), 0);
		json_decref(r);
		CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_DONE, id, &r, NULL), -ENOENT);
	}
	sbx_feed_free(f);
	sbx_queue_close(q);
	free(id);
	free(dir);
}

struct racer {
	struct sbx_api_decision d;
	unsigned status;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	json_t *out = NULL;

	r->status = sbx_api_decide(&r->d, &out);
	json_decref(out);
	return NULL;
}

SBX_TEST(dashboard, concurrent_decisions_decide_once)
{
	struct sbx_queue *q = tq_open("dash-race");
	char *dir = tq_dir("dash-race");
	char *id = tq_submit(q, tq_file_req("/home/u/.aws/credentials"));
	struct sbx_feed *f = feed_of(dir);
	struct racer r[8];
	pthread_t th[8];
	unsigned ok = 0, conflict = 0;
	json_t *done = NULL, *out = NULL;

	for (int i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(prep(f, id, i % 2 == 0, i % 2 ? "{\"note\":\"no\"}" : "{}", &r[i].d),
				200);
		pthread_create(&th[i], NULL, race, &r[i]);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		ok += r[i].status == 200;
		conflict += r[i].status == 409;
	}
	CU_ASSERT_EQUAL(ok, 1);
	CU_ASSERT_EQUAL(conflict, 7);
	CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_DONE, id, &done, NULL), 0);
	json_decref(done);
	/* and once decided, a later one is 409 with the decision named */
	CU_ASSERT_EQUAL(sbx_api_decide(&r[0].d, &out), 409);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(out, "code")), "already_decided");
	json_decref(out);
	for (int i = 0; i < 8; i++)
		sbx_api_decision_free(&r[i].d);
	sbx_feed_free(f);
	sbx_queue_close(q);
	free(id);
	free(dir);
}

SBX_TEST(dashboard, command_runs_here_and_its_output_is_in_the_reply)
{
	struct sbx_queue *q = tq_open("dash-cmd");
	char *dir = tq_dir("dash-cmd");
	char *id = tq_submit(q, tq_cmd_req("printf 'out-%d\\n' 42; printf '\\377'", dir));
	struct sbx_feed *f = feed_of(dir);
	struct sbx_api_decision d;
	json_t *out = NULL;

	CU_ASSERT_EQUAL(prep(f, id, true, "{\"scope\":\"session\"}", &d), 200);
	CU_ASSERT_EQUAL(sbx_api_decide(&d, &out), 400);	/* a command: once only */
	json_decref(out);
	out = NULL;
	sbx_api_decision_free(&d);
	CU_ASSERT_EQUAL(prep(f, id, true, "{\"scope\":\"once\"}", &d), 200);
	CU_ASSERT_EQUAL(sbx_api_decide(&d, &out), 200);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(out, "output")),
			       "out-42\n\xef\xbf\xbd");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(out, "result"),
							   "exit_code")), 0);
	json_decref(out);
	sbx_api_decision_free(&d);
	sbx_feed_free(f);
	sbx_queue_close(q);
	free(id);
	free(dir);
}

/* a unix-socket peer that /proc cannot place is refused, not served */
SBX_TEST(dashboard, peer_session_lookup_fails_closed)
{
	char *name = NULL;

	CU_ASSERT_EQUAL(sbx_pid_session(0, &name), 0);	/* the unit tests run outside */
	CU_ASSERT_PTR_NULL(name);
	CU_ASSERT_EQUAL(sbx_pid_session(getpid(), NULL), 0);
	CU_ASSERT_EQUAL(sbx_pid_session(0x3fffffff, NULL), -ENOENT);
	CU_ASSERT_FALSE(sbx_in_session(NULL));
}

/* approving a request whose object is gone: 409 with the reason, not 500 */
SBX_TEST(dashboard, gone_object_is_a_conflict)
{
	struct sbx_queue *q = tq_open("dash-gone");
	char *dir = tq_dir("dash-gone"), *gone, *id;
	struct sbx_feed *f = feed_of(dir);
	struct sbx_api_decision d;
	json_t *req, *out = NULL;

	if (asprintf(&gone, "%s/no-longer-here", dir) < 0)
		abort();
	req = tq_file_req(gone);
	json_object_set_new(json_object_get(req, "object"), "dev", json_integer(2049));
	json_object_set_new(json_object_get(req, "object"), "ino", json_integer(1234));
	id = tq_submit(q, req);
	CU_ASSERT_PTR_NOT_NULL_FATAL(id);
	CU_ASSERT_EQUAL(prep(f, id, true, "{\"scope\":\"once\"}", &d), 200);
	CU_ASSERT_EQUAL(sbx_api_decide(&d, &out), 409);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(out, "code")) ?: "", "stale");
	CU_ASSERT_PTR_NOT_NULL(strstr(json_string_value(json_object_get(out, "error")) ?: "",
				      "no longer exists"));
	json_decref(out);
	sbx_api_decision_free(&d);
	sbx_feed_free(f);
	sbx_queue_close(q);
	free(gone);
	free(id);
	free(dir);
}

/* The page gets a request as its decoded struct renders it; a record that
 * does not decode is handed on unrendered, which the page cannot approve */
SBX_TEST(dashboard, wrap_renders_only_what_decodes)
{
	struct sbx_queue *q = tq_open("dash-wrap");
	char *id = tq_submit(q, tq_file_req("/home/u/.aws/credentials"));
	json_t *rec = NULL, *w;

	CU_ASSERT_PTR_NOT_NULL_FATAL(id);
	CU_ASSERT_EQUAL_FATAL(sbx_queue_read(q, SBX_QDIR_PENDING, id, &rec, NULL), 0);
	w = sbx_api_wrap("/home/u/proj", SBX_QDIR_PENDING, rec);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(w, "what")) ?: "",
			       "read /home/u/.aws/credentials");
	CU_ASSERT_PTR_NOT_NULL(strstr(json_string_value(json_object_get(
		json_object_get(w, "render"), "summary")) ?: "", ".aws/credentials"));
	json_decref(w);

	json_object_set_new(json_object_get(rec, "object"), "path", json_integer(7));
	w = sbx_api_wrap("/home/u/proj", SBX_QDIR_PENDING, rec);
	CU_ASSERT_PTR_NOT_NULL(json_object_get(w, "request"));
	CU_ASSERT_PTR_NULL(json_object_get(w, "what"));
	CU_ASSERT_PTR_NULL(json_object_get(w, "render"));
	json_decref(w);
	json_decref(rec);
	sbx_queue_close(q);
	free(id);
}
