// SPDX-License-Identifier: GPL-2.0
/* The request record both ways: what a writer fills is what a reader decodes. */
#include <stdlib.h>
#include <string.h>
#include "queue/queue.h"
#include "queue/request.h"
#include "bpf/bpfsbx.h"
#include "tests/unit/unit.h"

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_json(const json_t *a, const json_t *b)
{
	return a == b || (a && b && json_equal((json_t *)a, (json_t *)b));
}

#define SAME_STR(f) CU_ASSERT_TRUE(same_str(a->f, b->f))
#define SAME(f) CU_ASSERT_EQUAL(a->f, b->f)

static void assert_same(const struct sbx_request *a, const struct sbx_request *b)
{
	SAME_STR(id);
	SAME(kind);
	SAME_STR(kind_name);
	SAME_STR(session);
	SAME_STR(project);
	SAME_STR(agent_reason);
	SAME_STR(notice);
	SAME_STR(origin);
	SAME(created);
	SAME(deadline);
	SAME(count);
	SAME(process.pid);
	SAME(process.uid);
	SAME_STR(process.comm);
	SAME_STR(process.exe);
	SAME_STR(process.cwd);
	CU_ASSERT_TRUE(same_json(a->process.cmdline, b->process.cmdline));
	SAME_STR(path);
	SAME(access);
	SAME(has_access);
	SAME_STR(op);
	SAME(has_ident);
	SAME(dev);
	SAME(ino);
	SAME(new_name);
	SAME(abstract);
	SAME(name_hash);
	SAME_STR(ftype);
	SAME(nlink);
	SAME_STR(btime);
	CU_ASSERT_TRUE(same_json(a->listener, b->listener));
	SAME_STR(addr);
	SAME_STR(family);
	SAME_STR(proto);
	SAME_STR(host);
	SAME_STR(learned);
	SAME(port);
	SAME(has_port);
	SAME_STR(command);
	SAME_STR(cwd);
	SAME(rule.present);
	SAME(rule.id);
	SAME_STR(rule.name);
	SAME_STR(rule.section);
	SAME_STR(rule.pattern);
	SAME_STR(rule.verdict);
	SAME_STR(rule.reason);
	SAME_STR(rule.source);
}

/* what every kind shares: who asked, in which session, under which rule */
static void common(struct sbx_request *r, json_t *argv)
{
	r->id = "20261130T101503.123456Z-4242-1a2b3c4d";
	r->created = 1764497703;
	r->deadline = 1764497703 + 600;
	r->session = "s1";
	r->project = "/home/u/proj";
	r->count = 3;
	r->process.pid = 4242;
	r->process.uid = 1000;
	r->process.comm = "cat";
	r->process.exe = "/usr/bin/cat";
	r->process.cwd = "/home/u/proj";
	r->process.cmdline = argv;
	r->rule.present = true;
	r->rule.id = 7;
	r->rule.pattern = "~/.aws/**";
	r->rule.verdict = "ask";
	r->rule.reason = "cloud credentials";
	r->rule.source = "agent-default.yaml:41";
	r->agent_reason = "needed for the deploy";
	r->notice = "asked again: the remembered answer was for another file";
	r->origin = "hook";
}

/* encode r, validate and decode the record, and compare */
static void round_trip(const struct sbx_request *r)
{
	json_t *j = sbx_request_encode(r);
	struct sbx_request back;
	char *why = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	CU_ASSERT_TRUE(sbx_request_decode(j, false, &back, &why));
	if (why)
		fprintf(stderr, "%s: %s\n", r->kind_name, why);
	free(why);
	assert_same(r, &back);
	sbx_request_release(&back);
	json_decref(j);
}

SBX_TEST(request, encode_then_decode_gives_the_same_struct_for_every_kind)
{
	json_t *argv = json_pack("[s,s]", "cat", "/home/u/.aws/credentials");
	json_t *listener = json_pack("{s:i,s:s,s:I}", "pid", 77, "exe", "/usr/bin/ssh-agent",
				     "socket_inode", (json_int_t)991);
	struct sbx_request r;

	sbx_request_init(&r, SBX_REQ_FILE);
	common(&r, argv);
	r.path = "/home/u/.aws/credentials";
	r.access = SBX_ACC_READ;
	r.op = "open";
	r.has_ident = true;
	r.dev = 2049;
	r.ino = 1234;
	r.ftype = "file";
	r.nlink = 1;
	r.btime = "1764590000.123456789";
	round_trip(&r);

	/* a name not there yet: its directory's identity and its name's hash */
	r.new_name = true;
	r.name_hash = 0xfedcba9876543210ull;
	r.ftype = NULL;
	r.nlink = -1;
	r.btime = NULL;
	r.access = SBX_ACC_WRITE;
	round_trip(&r);

	/* an abstract unix socket, and the process serving it */
	sbx_request_init(&r, SBX_REQ_FILE);
	common(&r, argv);
	r.path = "@agent\\x00";
	r.access = SBX_ACC_CONNECT;
	r.op = "unix_connect";
	r.abstract = true;
	r.name_hash = 0x8000000000000001ull;
	r.listener = listener;
	round_trip(&r);

	sbx_request_init(&r, SBX_REQ_EXEC);
	common(&r, argv);
	r.path = "/usr/bin/sudo";
	r.op = "exec";
	r.has_ident = true;
	r.dev = 2049;
	r.ino = 99;
	round_trip(&r);

	sbx_request_init(&r, SBX_REQ_NET);
	common(&r, argv);
	r.family = "ipv6";
	r.addr = "2001:db8::5";
	r.port = 5432;
	r.proto = "tcp";
	r.learned = "db.example";
	round_trip(&r);

	/* the daemon files a connector's ask: no comm, no rule */
	sbx_request_init(&r, SBX_REQ_COMMAND);
	common(&r, argv);
	r.process.comm = NULL;
	r.process.exe = NULL;
	r.rule.present = false;
	r.rule.id = -1;
	r.rule.pattern = r.rule.verdict = r.rule.reason = r.rule.source = NULL;
	r.command = "git push --force origin main";
	r.cwd = "/home/u/proj";
	round_trip(&r);

	sbx_request_init(&r, SBX_REQ_ACCESS_PATH);
	common(&r, argv);
	r.rule.section = "files";
	r.path = "/home/u/.kube/config";
	r.access = SBX_ACC_WRITE;
	r.has_ident = true;
	r.dev = 1;
	r.ino = 2;
	r.ftype = "file";
	r.nlink = 1;
	round_trip(&r);

	sbx_request_init(&r, SBX_REQ_ACCESS_HOST);
	common(&r, argv);
	r.host = "db.internal.example";
	r.port = 5432;
	r.has_port = true;
	round_trip(&r);

	/* the resolver asks: a built-in rule, a process known by its uid only */
	sbx_request_init(&r, SBX_REQ_HOST);
	common(&r, NULL);
	r.process.pid = -1;
	r.process.comm = r.process.exe = r.process.cwd = NULL;
	r.rule.id = 4294901761ll;
	r.rule.name = "sandbox-dir";
	r.host = "ask.test";
	round_trip(&r);

	json_decref(argv);
	json_decref(listener);
}

/* A process whose exe and cwd were looked for and not found says so (null),
 * as the daemon's records always have; one never looked at has no process. */
SBX_TEST(request, encode_writes_what_was_looked_for)
{
	struct sbx_request r;
	json_t *j, *p;

	sbx_request_init(&r, SBX_REQ_HOST);
	r.host = "ask.test";
	j = sbx_request_encode(&r);
	CU_ASSERT_PTR_NULL(json_object_get(j, "process"));
	CU_ASSERT_PTR_NULL(json_object_get(j, "rule"));
	CU_ASSERT_PTR_NULL(json_object_get(j, "id"));
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "count")), 1);
	json_decref(j);

	r.process.pid = 5;
	j = sbx_request_encode(&r);
	p = json_object_get(j, "process");
	CU_ASSERT_TRUE(json_is_null(json_object_get(p, "exe")));
	CU_ASSERT_TRUE(json_is_null(json_object_get(p, "cwd")));
	CU_ASSERT_TRUE(json_is_null(json_object_get(p, "cmdline")));
	CU_ASSERT_PTR_NULL(json_object_get(p, "uid"));
	json_decref(j);
}
