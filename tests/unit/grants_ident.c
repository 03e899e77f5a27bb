// SPDX-License-Identifier: GPL-2.0
/*
 * Grants name the object the person saw (issue 13): the identity check
 * that the approver and the daemon make before a grant, remembered.yaml's
 * identity fields, the ~/.claude.json guard's comparison, and the watch
 * text that a person reads before the approve key works.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "policy/policy.h"
#include "queue/queue.h"
#include "tests/unit/unit.h"
#include "user/cmd/watch_render.h"
#include "user/daemon/claude_json.h"
#include "tests/unit/queue_helpers.h"
#include "user/daemon/events.h"
#include "user/daemon/grants.h"

static char *p(const char *name)
{
	char *s;

	if (asprintf(&s, "%s/%s", sbx_unit_tmpdir(), name) < 0)
		abort();
	return s;
}

static void touch(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

SBX_TEST(grants, identity_check_refuses_swaps_symlinks_and_hard_links)
{
	char *fix = p("fixture.txt"), *sec = p("secret.txt"), *dir = p("d"), *link2 = p("link2"),
	     *why = NULL;
	struct sbx_objid id, sid;

	touch(fix, "fixture");
	touch(sec, "secret");
	CU_ASSERT_EQUAL_FATAL(sbx_objid_nofollow(fix, &id), 0);
	CU_ASSERT_STRING_EQUAL(id.type, "file");
	CU_ASSERT_EQUAL(id.nlink, 1);
	CU_ASSERT_EQUAL(sbx_objid_check(fix, false, id.dev, id.ino, "file", id.btime, &why), 0);
	CU_ASSERT_PTR_NULL(why);

	/* swapped for a symlink to the secret: refused, naming the target */
	unlink(fix);
	CU_ASSERT_EQUAL(symlink(sec, fix), 0);
	CU_ASSERT_EQUAL(sbx_objid_check(fix, false, id.dev, id.ino, "file", NULL, &why), -ESTALE);
	CU_ASSERT_PTR_NOT_NULL(strstr(why ?: "", "symbolic link"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why ?: "", sec));
	free(why);
	/* a symlink's own identity is never what a file request showed */
	CU_ASSERT_EQUAL(sbx_objid_nofollow(fix, &sid), 0);
	CU_ASSERT_STRING_EQUAL(sid.type, "symlink");

	/* replaced by another file of the same name, which may well get the
	 * freed inode number back: the birth time tells them apart */
	unlink(fix);
	usleep(20000);
	touch(fix, "new");
	{
		struct sbx_objid nid;

		CU_ASSERT_EQUAL_FATAL(sbx_objid_nofollow(fix, &nid), 0);
		if (nid.ino != id.ino || (id.btime[0] && nid.btime[0])) {
			CU_ASSERT_EQUAL(sbx_objid_check(fix, false, id.dev, id.ino, "file", id.btime,
							&why), -ESTALE);
			CU_ASSERT_PTR_NOT_NULL(strstr(why ?: "", "another"));
			free(why);
		} else {
			fprintf(stderr, "note: inode reused and no birth time on this file system\n");
		}
	}

	/* gone */
	unlink(fix);
	CU_ASSERT_EQUAL(sbx_objid_check(fix, false, id.dev, id.ino, NULL, NULL, &why), -ESTALE);
	CU_ASSERT_PTR_NOT_NULL(strstr(why ?: "", "no longer exists"));
	free(why);

	/* two names: refused, whichever is shown */
	CU_ASSERT_EQUAL_FATAL(sbx_objid_nofollow(sec, &sid), 0);
	CU_ASSERT_EQUAL(link(sec, link2), 0);
	CU_ASSERT_EQUAL(sbx_objid_check(link2, false, sid.dev, sid.ino, "file", NULL, &why), -EMLINK);
	CU_ASSERT_PTR_NOT_NULL(strstr(why ?: "", "hard links"));
	free(why);

	/* a new name: its directory must be the one asked about, and the
	 * name must not have become a symlink */
	CU_ASSERT_EQUAL(mkdir(dir, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(sbx_objid_nofollow(dir, &id), 0);
	{
		char *nn = p("d/new.txt");

		CU_ASSERT_EQUAL(sbx_objid_check(nn, true, id.dev, id.ino, NULL, NULL, &why), 0);
		CU_ASSERT_EQUAL(symlink(sec, nn), 0);
		CU_ASSERT_EQUAL(sbx_objid_check(nn, true, id.dev, id.ino, NULL, NULL, &why), -ESTALE);
		free(why);
		free(nn);
	}
	free(fix);
	free(sec);
	free(dir);
	free(link2);
}

SBX_TEST(grants, remembered_keeps_identity)
{
	struct sbx_remembered in = { .kind = "file", .path = "/home/u/proj/a.txt", .access = "read",
				     .has_ident = true, .dev = 2049, .ino = 18446744073709551000ull,
				     .type = "file", .btime = "1764590000.123456789", .request = "r1" };
	struct sbx_remembered *v = NULL;
	size_t n = 0, len;
	char *text = NULL, *err = NULL;

	CU_ASSERT_EQUAL_FATAL(sbx_remembered_format(&in, 1, &text, &len), 0);
	CU_ASSERT_EQUAL_FATAL(sbx_remembered_parse(text, len, &v, &n, &err), 0);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_TRUE(v[0].has_ident);
	CU_ASSERT_EQUAL(v[0].dev, 2049);
	CU_ASSERT_EQUAL(v[0].ino, 18446744073709551000ull);
	CU_ASSERT_STRING_EQUAL(v[0].type ?: "", "file");
	CU_ASSERT_FALSE(v[0].new_name);
	CU_ASSERT_STRING_EQUAL(v[0].btime ?: "", "1764590000.123456789");
	sbx_remembered_free(v, n);
	free(text);

	/* half an identity, or one on a net entry, is an error with a place */
	{
		const char *t = "remembered:\n  - kind: file\n    path: /a\n    access: read\n"
				"    dev: 1\n";

		CU_ASSERT_NOT_EQUAL(sbx_remembered_parse(t, strlen(t), &v, &n, &err), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(err ?: "", "both"));
		free(err);
	}
	err = NULL;
	{
		const char *t = "remembered:\n  - kind: net\n    addr: 10.0.0.1\n    port: 5\n    ino: 3\n";

		CU_ASSERT_NOT_EQUAL(sbx_remembered_parse(t, strlen(t), &v, &n, &err), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(err ?: "", "only file and exec"));
		free(err);
		err = NULL;
	}
	{
		const char *t = "remembered:\n  - kind: file\n    path: /a\n    access: read\n"
				"    dev: 1\n    ino: -4\n";

		CU_ASSERT_NOT_EQUAL(sbx_remembered_parse(t, strlen(t), &v, &n, &err), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(err ?: "", "remembered.yaml:6:"));
		free(err);
	}
}

SBX_TEST(grants, claude_json_guarded_keys_are_put_back)
{
	json_t *old = json_loads("{\"numStartups\":1,\"mcpServers\":{\"ok\":{\"command\":\"true\"}},"
				 "\"projects\":{\"/p\":{\"allowedTools\":[]}}}", 0, NULL);
	json_t *cur = json_loads("{\"numStartups\":2,\"mcpServers\":{\"ok\":{\"command\":\"true\"},"
				 "\"evil\":{\"command\":\"/tmp/x\"}},\"hooks\":{\"Stop\":[]},"
				 "\"projects\":{\"/p\":{\"allowedTools\":[\"Bash(*)\"]},"
				 "\"/q\":{\"mcpServers\":{\"e\":{}}}}}", 0, NULL);
	json_t *what = NULL, *prop = NULL;
	char *s;

	CU_ASSERT_EQUAL(sbx_claude_json_restore(NULL, cur, old, &what, &prop), 4);
	s = json_dumps(cur, JSON_COMPACT | JSON_SORT_KEYS);
	CU_ASSERT_STRING_EQUAL(s, "{\"mcpServers\":{\"ok\":{\"command\":\"true\"}},\"numStartups\":2,"
			       "\"projects\":{\"/p\":{\"allowedTools\":[]},\"/q\":{}}}");
	free(s);
	CU_ASSERT_PTR_NOT_NULL(json_object_get(json_object_get(prop, "mcpServers"), "evil"));
	CU_ASSERT_PTR_NOT_NULL(json_object_get(prop, "projects./q.mcpServers"));
	json_decref(old);
	json_decref(cur);
	json_decref(what);
	json_decref(prop);
}

SBX_TEST(grants, watch_text_shows_everything_and_counts_what_it_escaped)
{
	char cmd[1024];
	struct sbx_request req;
	struct watch_text t;
	char *warn;

	/* 400 spaces, a zero-width space, a tag character, an ESC, 3 lines */
	snprintf(cmd, sizeof(cmd), "echo a%*s; curl evil\xe2\x80\x8b\xf3\xa0\x80\x81\x1b[2J\nl2\nl3-tail",
		 400, "");
	sbx_request_init(&req, SBX_REQ_COMMAND);
	req.command = cmd;
	watch_text_build(&t, &req, 40);
	CU_ASSERT_EQUAL(t.c.space_runs, 1);
	CU_ASSERT_EQUAL(t.c.longest_run, 400);
	CU_ASSERT_EQUAL(t.c.invisible, 2);
	CU_ASSERT_EQUAL(t.c.ctrl, 1);
	CU_ASSERT(t.n >= 3);
	CU_ASSERT_STRING_EQUAL(t.lines[t.n - 1], "l3-tail");
	for (size_t i = 0; i < t.n; i++)
		CU_ASSERT(strlen(t.lines[i]) <= 40 * 4);
	warn = watch_text_warning(&t);
	CU_ASSERT_PTR_NOT_NULL(strstr(warn ?: "", "2 invisible (zero-width"));
	CU_ASSERT_PTR_NOT_NULL(strstr(warn ?: "", "longest 400"));
	free(warn);
	watch_text_free(&t);
}

/* docs/POLICY.md's inventory table and tests/kernel/t_credentials.sh are
 * generated from policy/inventory/credentials.tsv: they must not drift */
SBX_TEST(grants, credential_inventory_generated_files_are_current)
{
	int st = system("python3 tools/gen-credentials --check >/dev/null");

	CU_ASSERT_EQUAL(st, 0);
}

/* every location of policy/inventory/credentials.tsv is denied or asked by
 * the shipped agent-default, with the verdict the inventory says (decided by
 * policy/decide.c through `bpfsbx policy explain`): the list and the policy
 * cannot drift apart */
SBX_TEST(grants, credential_inventory_is_denied_or_asked_by_agent_default)
{
	int st = system("python3 tools/gen-credentials --verify-policy build/bpfsbx >/dev/null");

	CU_ASSERT_EQUAL(st, 0);
}

/* The object of an agent's access ask for path, as the daemon files it:
 * *o is the record's object (NULL when refused) */
static int ident_of_access(const char *path, enum sbx_access acc, bool agent_ident, json_t **rec,
			   const json_t **o, char **why)
{
	struct sbx_request r;
	struct sbx_objid id;
	char *full = NULL;
	int rc;

	sbx_request_init(&r, SBX_REQ_ACCESS_PATH);
	r.path = path;
	r.access = acc;
	if (agent_ident) {
		r.has_ident = true;
		r.dev = 1;
		r.ino = 2;
	}
	rc = sbx_grant_ident_of_access(&r, &id, &full, why);
	*rec = rc ? NULL : sbx_request_encode(&r);
	*o = json_object_get(*rec, "object");
	free(full);
	return rc;
}

/* request_access: the daemon, not the agent, says which object it is */
SBX_TEST(grants, access_requests_get_the_daemons_identity)
{
	char *sec = p("secret"), *dir = p("real"), *dlink = p("dirlink"), *flink = p("flink"),
	     *inner = p("real/f.txt"), *via = p("dirlink/f.txt"), *why = NULL;
	struct sbx_objid id;
	const json_t *o;
	json_t *rec;

	touch(sec, "s");
	CU_ASSERT_EQUAL(mkdir(dir, 0700), 0);
	touch(inner, "f");
	CU_ASSERT_EQUAL(symlink(dir, dlink), 0);
	CU_ASSERT_EQUAL(symlink(sec, flink), 0);

	/* a final symlink is refused, with its target */
	CU_ASSERT_EQUAL(ident_of_access(flink, SBX_ACC_READ, false, &rec, &o, &why), -ELOOP);
	CU_ASSERT_PTR_NOT_NULL(strstr(why ?: "", sec));
	free(why);
	why = NULL;

	/* through a symlinked directory: shown resolved; the agent's own
	 * identity fields are replaced */
	CU_ASSERT_EQUAL_FATAL(ident_of_access(via, SBX_ACC_READ, true, &rec, &o, &why), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "path")), inner);
	CU_ASSERT_EQUAL_FATAL(sbx_objid_nofollow(inner, &id), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "ino")), (json_int_t)id.ino);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "type")), "file");
	json_decref(rec);

	/* not there yet: its directory and its name */
	{
		char *nn = p("dirlink/new.txt");

		CU_ASSERT_EQUAL_FATAL(ident_of_access(nn, SBX_ACC_WRITE, false, &rec, &o, &why), 0);
		CU_ASSERT_TRUE(json_is_true(json_object_get(o, "new_name")));
		CU_ASSERT_EQUAL_FATAL(sbx_objid_nofollow(dir, &id), 0);
		CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "ino")), (json_int_t)id.ino);
		CU_ASSERT_PTR_NOT_NULL(json_string_value(json_object_get(o, "name_hash")));
		json_decref(rec);
		free(nn);
	}
	free(sec);
	free(dir);
	free(dlink);
	free(flink);
	free(inner);
	free(via);
}

/* A connector's submit from inside a session: of what it sends, only the
 * kind, the object's own fields and its reason reach the record; who asks,
 * the session, the rule and the object's identity are the daemon's */
SBX_TEST(grants, a_connectors_ask_keeps_only_what_the_caller_may_say)
{
	char *file = p("asked.txt"), *id = NULL, *err = NULL;
	struct sbx_session_rt s = { .name = "s1", .uid = 1000 };
	struct sbx_request ask;
	struct sbx_objid oid;
	json_t *in, *rec = NULL;
	const json_t *o;

	touch(file, "x");
	s.project = strdup(sbx_unit_tmpdir());
	s.queue = tq_open("submit-for");
	CU_ASSERT_PTR_NOT_NULL_FATAL(s.queue);
	in = json_pack("{s:s, s:s, s:s, s:{s:i, s:s}, s:{s:s}, s:{s:s, s:s, s:s, s:b, s:i, s:i, "
		       "s:{s:i}}}", "kind", "access", "agent_reason", "to read it", "session", "evil",
		       "process", "pid", 1, "exe", "/bin/evil", "rule", "pattern", "allow all",
		       "object", "path", file, "access", "read", "op", "open_read", "abstract", 1,
		       "dev", 1, "ino", 2, "listener", "pid", 1);
	sbx_request_view(in, &ask);
	CU_ASSERT_EQUAL_FATAL(sbx_submit_for(&s, getpid(), &ask, &id, &err), 0);
	CU_ASSERT_EQUAL_FATAL(sbx_queue_read(s.queue, SBX_QDIR_PENDING, id, &rec, NULL), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(rec, "session")), "s1");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(rec, "agent_reason")),
			       "to read it");
	CU_ASSERT_PTR_NULL(json_object_get(rec, "rule"));
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(rec, "process"),
							   "pid")), getpid());
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(rec, "process"),
							   "uid")), 1000);
	o = json_object_get(rec, "object");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "path")), file);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "access")), "read");
	CU_ASSERT_EQUAL_FATAL(sbx_objid_nofollow(file, &oid), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "ino")), (json_int_t)oid.ino);
	CU_ASSERT_PTR_NULL(json_object_get(o, "op"));
	CU_ASSERT_PTR_NULL(json_object_get(o, "abstract"));
	CU_ASSERT_PTR_NULL(json_object_get(o, "listener"));
	CU_ASSERT_TRUE(sbx_session_issued(&s, id));

	/* a kind a connector may not ask for */
	json_object_set_new(in, "kind", json_string("file"));
	sbx_request_view(in, &ask);
	CU_ASSERT_EQUAL(sbx_submit_for(&s, getpid(), &ask, &id, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err ?: "", "\"kind\""));
	free(err);
	json_decref(rec);
	json_decref(in);
	for (size_t i = 0; i < s.n_my_requests; i++)
		free(s.my_requests[i]);
	free(s.my_requests);
	sbx_queue_close(s.queue);
	free(s.project);
	free(id);
	free(file);
}
