// SPDX-License-Identifier: GPL-2.0
/* request.c - see request.h */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/alloc.h"
#include "lib/clock.h"
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

/* The rule's text fields, one table for the decoder and the encoder. */
static const struct {
	const char *key;
	size_t off;
} rule_strs[] = {
	{ "name", offsetof(struct sbx_req_rule, name) },
	{ "section", offsetof(struct sbx_req_rule, section) },
	{ "pattern", offsetof(struct sbx_req_rule, pattern) },
	{ "verdict", offsetof(struct sbx_req_rule, verdict) },
	{ "reason", offsetof(struct sbx_req_rule, reason) },
	{ "source", offsetof(struct sbx_req_rule, source) },
	{ "would", offsetof(struct sbx_req_rule, would) },
};

static const char **rule_str(const struct sbx_req_rule *rule, size_t i)
{
	return (const char **)((char *)rule + rule_strs[i].off);
}

void sbx_request_view_rule(const json_t *rule, struct sbx_req_rule *out)
{
	out->present = json_is_object(rule);
	out->id = num(rule, "id", -1);
	for (size_t i = 0; i < sizeof(rule_strs) / sizeof(rule_strs[0]); i++)
		*rule_str(out, i) = sbx_json_str(rule, rule_strs[i].key);
}

void sbx_request_view(const json_t *rec, struct sbx_request *r)
{
	const json_t *obj, *proc, *h;

	memset(r, 0, sizeof(*r));
	r->id = sbx_json_str(rec, "id");
	r->kind_name = sbx_json_str(rec, "kind");
	obj = json_object_get(rec, "object");
	r->kind = (enum sbx_req_kind)sbx_request_kind(rec);

	r->session = sbx_json_str(rec, "session");
	r->project = sbx_json_str(rec, "project");
	r->agent_reason = sbx_json_str(rec, "agent_reason");
	r->notice = sbx_json_str(rec, "notice");
	r->origin = sbx_json_str(rec, "origin");
	r->container = json_is_object(json_object_get(rec, "container")) ?
		json_object_get(rec, "container") : NULL;
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
	r->access = sbx_access_parse(sbx_json_str(obj, "access"));
	r->has_access = r->access >= 0;
	if (r->kind == SBX_REQ_EXEC)
		r->access = SBX_ACC_EXEC;
	else if (r->access < 0)
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
	r->listener = json_is_object(json_object_get(obj, "listener")) ?
		json_object_get(obj, "listener") : NULL;
	r->addr = sbx_json_str(obj, "addr");
	r->family = sbx_json_str(obj, "family");
	r->proto = sbx_json_str(obj, "proto");
	r->host = sbx_json_str(obj, "host");
	r->learned = sbx_json_str(obj, "name");
	r->port = (int)num(obj, "port", 0);
	r->has_port = json_is_integer(json_object_get(obj, "port"));
	r->command = sbx_json_str(obj, "command");
	r->cwd = sbx_json_str(obj, "cwd");

	sbx_request_view_rule(json_object_get(rec, "rule"), &r->rule);
}

bool sbx_request_decode(json_t *rec, bool done, struct sbx_request *r, char **why)
{
	const json_t *dec;

	memset(r, 0, sizeof(*r));
	if (!(done ? sbx_queue_validate_done(rec, NULL, why) :
		     sbx_queue_validate_request(rec, NULL, why)))
		return false;
	sbx_request_view(rec, r);
	r->json = json_incref(rec);

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

void sbx_request_init(struct sbx_request *r, enum sbx_req_kind kind)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->kind_name = sbx_request_kind_name(kind);
	r->count = 1;
	r->process.pid = -1;
	r->process.uid = -1;
	r->access = kind == SBX_REQ_EXEC ? SBX_ACC_EXEC : SBX_ACC_READ;
	r->has_access = kind == SBX_REQ_FILE || kind == SBX_REQ_EXEC || kind == SBX_REQ_ACCESS_PATH;
	r->has_port = kind == SBX_REQ_NET;
	r->nlink = -1;
	r->rule.id = -1;
}

const char *sbx_request_kind_name(enum sbx_req_kind kind)
{
	switch (kind) {
	case SBX_REQ_FILE:
		return "file";
	case SBX_REQ_EXEC:
		return "exec";
	case SBX_REQ_NET:
		return "net";
	case SBX_REQ_COMMAND:
		return "command";
	case SBX_REQ_ACCESS_PATH:
	case SBX_REQ_ACCESS_HOST:
		return "access";
	case SBX_REQ_HOST:
		return "host";
	}
	return NULL;
}

/* A string member, when given; one that is not UTF-8 is left out (the
 * schema then names it if it was required) */
static void put_str(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

/* A member that was looked for: null when it was not found */
static void put_str_or_null(json_t *o, const char *k, const char *v)
{
	json_object_set_new(o, k, v ? json_string(v) : json_null());
}

static void put_int(json_t *o, const char *k, long long v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

static void put_copy(json_t *o, const char *k, const json_t *v)
{
	if (v)
		json_object_set_new(o, k, json_deep_copy(v));
}

json_t *sbx_request_encode_rule(const struct sbx_req_rule *rule)
{
	json_t *j;

	if (!rule->present)
		return json_null();
	j = json_object();
	if (!j)
		return NULL;
	if (rule->id >= 0)
		put_int(j, "id", rule->id);
	for (size_t i = 0; i < sizeof(rule_strs) / sizeof(rule_strs[0]); i++)
		put_str(j, rule_strs[i].key, *rule_str(rule, i));
	return j;
}

static json_t *encode_process(const struct sbx_request *r)
{
	json_t *p = json_object();

	if (!p)
		return NULL;
	if (r->process.pid >= 0)
		put_int(p, "pid", r->process.pid);
	if (r->process.uid >= 0)
		put_int(p, "uid", r->process.uid);
	put_str(p, "comm", r->process.comm);
	if (r->process.pid >= 0) {
		put_str_or_null(p, "exe", r->process.exe);
		json_object_set_new(p, "cmdline", r->process.cmdline ?
				    json_deep_copy(r->process.cmdline) : json_null());
		put_str_or_null(p, "cwd", r->process.cwd);
	} else {
		put_str(p, "exe", r->process.exe);
		put_copy(p, "cmdline", r->process.cmdline);
		put_str(p, "cwd", r->process.cwd);
	}
	return p;
}

static json_t *encode_object(const struct sbx_request *r)
{
	json_t *o = json_object();
	char hash[32];

	if (!o)
		return NULL;
	switch (r->kind) {
	case SBX_REQ_FILE:
	case SBX_REQ_EXEC:
	case SBX_REQ_ACCESS_PATH:
		put_str(o, "path", r->path);
		if (r->has_access)
			json_object_set_new(o, "access", json_string(sbx_access_name(r->access)));
		put_str(o, "op", r->op);
		if (r->has_ident) {
			put_int(o, "dev", r->dev);
			put_int(o, "ino", (long long)r->ino);
		}
		if (r->abstract)
			json_object_set_new(o, "abstract", json_true());
		if (r->new_name)
			json_object_set_new(o, "new_name", json_true());
		if (r->abstract || r->new_name) {
			/* a 64-bit hash may not fit a JSON integer */
			snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)r->name_hash);
			json_object_set_new(o, "name_hash", json_string(hash));
		}
		put_copy(o, "listener", r->listener);
		put_str(o, "type", r->ftype);
		if (r->nlink >= 0)
			put_int(o, "nlink", r->nlink);
		put_str(o, "btime", r->btime);
		break;
	case SBX_REQ_NET:
		put_str(o, "family", r->family);
		put_str(o, "addr", r->addr);
		if (r->has_port)
			put_int(o, "port", r->port);
		put_str(o, "proto", r->proto);
		put_str(o, "name", r->learned);
		break;
	case SBX_REQ_ACCESS_HOST:
		put_str(o, "host", r->host);
		if (r->has_port)
			put_int(o, "port", r->port);
		break;
	case SBX_REQ_HOST:
		put_str(o, "host", r->host);
		break;
	case SBX_REQ_COMMAND:
		put_str(o, "command", r->command);
		put_str(o, "cwd", r->cwd);
		break;
	}
	return o;
}

json_t *sbx_request_encode(const struct sbx_request *r)
{
	const char *kind = sbx_request_kind_name(r->kind);
	json_t *j = json_object(), *rule;

	if (!j || !kind) {
		json_decref(j);
		return NULL;
	}
	if (r->id) {
		char *t;

		put_int(j, "version", SBX_QUEUE_VERSION);
		put_str(j, "id", r->id);
		if ((t = sbx_time_rfc3339(r->created))) {
			json_object_set_new(j, "created", json_string(t));
			free(t);
		}
		if ((t = sbx_time_rfc3339(r->deadline))) {
			json_object_set_new(j, "deadline", json_string(t));
			free(t);
		}
	}
	json_object_set_new(j, "kind", json_string(kind));
	put_str(j, "session", r->session);
	put_str(j, "project", r->project);
	put_copy(j, "container", r->container);
	put_int(j, "count", r->count >= 1 ? r->count : 1);
	if (r->process.pid >= 0 || r->process.uid >= 0 || r->process.comm || r->process.exe ||
	    r->process.cwd || r->process.cmdline)
		json_object_set_new(j, "process", encode_process(r));
	json_object_set_new(j, "object", encode_object(r));
	rule = sbx_request_encode_rule(&r->rule);
	if (json_is_object(rule))
		json_object_set_new(j, "rule", rule);
	else
		json_decref(rule);
	put_str(j, "agent_reason", r->agent_reason);
	put_str(j, "notice", r->notice);
	put_str(j, "origin", r->origin);
	return j;
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

int sbx_request_read(struct sbx_queue *q, enum sbx_qdir dir, const char *id,
		     struct sbx_request *out, char **err)
{
	json_t *rec = NULL;
	char *why = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = sbx_queue_read(q, dir, id, &rec, err);
	if (rc)
		return rc < 0 ? rc : -EIO;
	rc = 0;
	if (!sbx_request_decode(rec, dir == SBX_QDIR_DONE, out, &why)) {
		memset(out, 0, sizeof(*out));
		sbx_queue_set_err(err, "%s: not a request this version can read (%s)", id,
				  why ? why : "?");
		rc = -EINVAL;
	}
	free(why);
	json_decref(rec);	/* out holds its own reference */
	return rc;
}
