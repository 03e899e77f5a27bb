// SPDX-License-Identifier: GPL-2.0
/* request.c - see request.h */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/alloc.h"
#include "lib/names.h"
#include "queue/request.h"
#include "lib/json.h"

static long long num(const json_t *o, const char *k, long long dflt)
{
	const json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

static time_t when(const json_t *o, const char *k)
{
	time_t t = 0;

	if (sbx_time_parse(sbx_json_str(o, k), &t))
		t = 0;
	return t;
}

int sbx_request_kind(const json_t *rec)
{
	const char *kind = sbx_json_str(rec, "kind");
	const json_t *obj = json_object_get(rec, "object");

	if (!kind)
		return -1;
	if (!strcmp(kind, "file"))
		return SBX_REQ_FILE;
	if (!strcmp(kind, "exec"))
		return SBX_REQ_EXEC;
	if (!strcmp(kind, "net"))
		return SBX_REQ_NET;
	if (!strcmp(kind, "command"))
		return SBX_REQ_COMMAND;
	if (!strcmp(kind, "host"))
		return SBX_REQ_HOST;
	if (!strcmp(kind, "access"))
		return json_object_get(obj, "path") ? SBX_REQ_ACCESS_PATH : SBX_REQ_ACCESS_HOST;
	return -1;
}

bool sbx_request_decode(json_t *rec, bool done, struct sbx_request *r, char **why)
{
	const json_t *obj, *proc, *rule, *dec, *h;
	const char *kind;

	memset(r, 0, sizeof(*r));
	if (!(done ? sbx_queue_validate_done(rec, NULL, why) :
		     sbx_queue_validate_request(rec, NULL, why)))
		return false;
	r->json = json_incref(rec);
	r->id = sbx_json_str(rec, "id");
	kind = sbx_json_str(rec, "kind");
	r->kind_name = kind;
	obj = json_object_get(rec, "object");
	r->kind = (enum sbx_req_kind)sbx_request_kind(rec);

	r->session = sbx_json_str(rec, "session");
	r->project = sbx_json_str(rec, "project");
	r->agent_reason = sbx_json_str(rec, "agent_reason");
	r->notice = sbx_json_str(rec, "notice");
	r->created = when(rec, "created");
	r->deadline = when(rec, "deadline");
	r->count = num(rec, "count", 1);
	proc = json_object_get(rec, "process");
	r->process.pid = num(proc, "pid", -1);
	r->process.uid = num(proc, "uid", -1);
	r->process.comm = sbx_json_str(proc, "comm");
	r->process.exe = sbx_json_str(proc, "exe");
	r->process.cwd = sbx_json_str(proc, "cwd");
	r->process.cmdline = json_is_array(json_object_get(proc, "cmdline")) ?
		json_object_get(proc, "cmdline") : NULL;

	r->path = sbx_json_str(obj, "path");
	r->access = r->kind == SBX_REQ_EXEC ? SBX_ACC_EXEC : sbx_access_parse(sbx_json_str(obj, "access"));
	if (r->access < 0)
		r->access = SBX_ACC_READ;
	r->op = sbx_json_str(obj, "op");
	r->has_ident = json_is_integer(json_object_get(obj, "dev")) &&
		       json_is_integer(json_object_get(obj, "ino"));
	r->dev = (uint32_t)num(obj, "dev", 0);
	r->ino = (uint64_t)num(obj, "ino", 0);
	r->new_name = json_is_true(json_object_get(obj, "new_name"));
	r->ftype = sbx_json_str(obj, "type");
	r->nlink = num(obj, "nlink", -1);
	r->btime = sbx_json_str(obj, "btime");
	r->abstract = json_is_true(json_object_get(obj, "abstract"));
	h = json_object_get(obj, "name_hash");
	r->name_hash = json_is_string(h) ? strtoull(json_string_value(h), NULL, 16) :
		       (uint64_t)json_integer_value(h);
	r->addr = sbx_json_str(obj, "addr");
	r->family = sbx_json_str(obj, "family");
	r->proto = sbx_json_str(obj, "proto");
	r->host = sbx_json_str(obj, "host");
	r->port = (int)num(obj, "port", 0);
	r->command = sbx_json_str(obj, "command");
	r->cwd = sbx_json_str(obj, "cwd");

	rule = json_object_get(rec, "rule");
	r->rule.present = json_is_object(rule);
	r->rule.id = num(rule, "id", -1);
	r->rule.pattern = sbx_json_str(rule, "pattern");
	r->rule.verdict = sbx_json_str(rule, "verdict");
	r->rule.reason = sbx_json_str(rule, "reason");
	r->rule.source = sbx_json_str(rule, "source");

	dec = json_object_get(rec, "decision");
	if (done && json_is_object(dec)) {
		int scope = sbx_scope_parse(sbx_json_str(dec, "scope"));

		r->decision.present = true;
		r->decision.approve = !strcmp(sbx_json_str(dec, "verdict"), "approve");
		r->decision.expired = json_is_true(json_object_get(dec, "expired"));
		r->decision.scope = scope < 0 ? SBX_SCOPE_ONCE : (enum sbx_scope)scope;
		r->decision.by = sbx_json_str(dec, "by");
		r->decision.at = sbx_json_str(dec, "at");
		r->decision.note = sbx_json_str(dec, "note");
		r->decision.result = json_object_get(rec, "result");
	}
	return true;
}

void sbx_request_release(struct sbx_request *r)
{
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

char *sbx_request_what(const struct sbx_request *r)
{
	switch (r->kind) {
	case SBX_REQ_FILE:
	case SBX_REQ_EXEC:
	case SBX_REQ_ACCESS_PATH:
		return sbx_asprintf("%s %s", sbx_access_name(r->access), r->path ? r->path : "?");
	case SBX_REQ_NET:
		return sbx_asprintf("connect %s port %d", r->addr ? r->addr : "?", r->port);
	case SBX_REQ_ACCESS_HOST:
		return sbx_asprintf("connect %s port %d", r->host ? r->host : "?", r->port);
	case SBX_REQ_HOST:
		return sbx_asprintf("look up %s", r->host ? r->host : "?");
	case SBX_REQ_COMMAND:
		return sbx_asprintf("run: %s", r->command ? r->command : "?");
	}
	return sbx_strdup("?");
}
