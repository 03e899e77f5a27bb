// SPDX-License-Identifier: GPL-2.0
/*
 * validate.c - the schema of request and decision records (see queue.h
 * and docs/QUEUE.md). Anything read from the queue passes through here
 * before it is shown to a person or applied to the kernel; what fails is
 * quarantined with the reason produced here.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "queue/queue.h"
#include "lib/json.h"

#define TEXT_MAX	(64u << 10)	/* a command line, a path, a note */

static bool fail(char **why, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool fail(char **why, const char *fmt, ...)
{
	va_list ap;

	if (why) {
		free(*why);
		*why = NULL;
		va_start(ap, fmt);
		if (vasprintf(why, fmt, ap) < 0)
			*why = NULL;
		va_end(ap);
	}
	return false;
}

/* field present and a string (optionally non-empty) of sane length */
static bool want_str(const json_t *o, const char *key, bool required, bool nonempty,
		     const char *where, char **why)
{
	const json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v)) {
		if (required)
			return fail(why, "%s\"%s\" is missing", where, key);
		return true;
	}
	if (!json_is_string(v))
		return fail(why, "%s\"%s\" must be a string", where, key);
	if (nonempty && !json_string_length(v))
		return fail(why, "%s\"%s\" is empty", where, key);
	if (json_string_length(v) > TEXT_MAX)
		return fail(why, "%s\"%s\" is longer than %u bytes", where, key, TEXT_MAX);
	return true;
}

static bool want_int(const json_t *o, const char *key, bool required,
		     json_int_t lo, json_int_t hi, const char *where, char **why)
{
	const json_t *v = json_object_get(o, key);

	if (!v) {
		if (required)
			return fail(why, "%s\"%s\" is missing", where, key);
		return true;
	}
	if (!json_is_integer(v))
		return fail(why, "%s\"%s\" must be an integer", where, key);
	if (json_integer_value(v) < lo || json_integer_value(v) > hi)
		return fail(why, "%s\"%s\" is out of range (%lld)", where, key,
			    (long long)json_integer_value(v));
	return true;
}

static bool want_bool(const json_t *o, const char *key, const char *where, char **why)
{
	const json_t *v = json_object_get(o, key);

	if (v && !json_is_boolean(v))
		return fail(why, "%s\"%s\" must be true or false", where, key);
	return true;
}

static bool want_enum(const json_t *o, const char *key, bool required,
		      const char *const *allowed, const char *where, char **why)
{
	const json_t *v = json_object_get(o, key);
	char list[160] = "";

	if (!v) {
		if (required)
			return fail(why, "%s\"%s\" is missing", where, key);
		return true;
	}
	if (json_is_string(v))
		for (int i = 0; allowed[i]; i++)
			if (!strcmp(json_string_value(v), allowed[i]))
				return true;
	for (int i = 0; allowed[i]; i++) {
		strncat(list, i ? "|" : "", sizeof(list) - strlen(list) - 1);
		strncat(list, allowed[i], sizeof(list) - strlen(list) - 1);
	}
	return fail(why, "%s\"%s\" must be one of %s", where, key, list);
}

static bool want_time(const json_t *o, const char *key, bool required,
		      const char *where, char **why)
{
	const json_t *v = json_object_get(o, key);
	time_t t;

	if (!v) {
		if (required)
			return fail(why, "%s\"%s\" is missing", where, key);
		return true;
	}
	if (!json_is_string(v) || sbx_time_parse(json_string_value(v), &t))
		return fail(why, "%s\"%s\" must be an RFC 3339 time such as "
			    "2026-11-30T10:15:03Z", where, key);
	return true;
}

static const char *const kinds[] = { "file", "exec", "net", "command", "access", "host", NULL };
static const char *const accesses[] = { "read", "write", "exec", "connect", NULL };
static const char *const families[] = { "ipv4", "ipv6", NULL };
static const char *const protos[] = { "tcp", "udp", "any", NULL };
static const char *const ftypes[] = { "file", "dir", "symlink", "char", "block", "fifo",
				      "socket", "unknown", NULL };

static bool check_process(const json_t *p, char **why)
{
	const char *w = "process: ";
	const json_t *cl;
	size_t i;
	json_t *a;

	if (!p || json_is_null(p))
		return true;
	if (!json_is_object(p))
		return fail(why, "\"process\" must be an object");
	if (!want_int(p, "pid", false, 0, 0x7fffffff, w, why) ||
	    !want_int(p, "uid", false, 0, 0xffffffffLL, w, why) ||
	    !want_str(p, "comm", false, false, w, why) ||
	    !want_str(p, "exe", false, false, w, why) ||
	    !want_str(p, "cwd", false, false, w, why))
		return false;
	cl = json_object_get(p, "cmdline");
	if (cl && !json_is_null(cl)) {
		if (!json_is_array(cl))
			return fail(why, "process: \"cmdline\" must be an array of strings");
		json_array_foreach(cl, i, a)
			if (!json_is_string(a))
				return fail(why, "process: \"cmdline\"[%zu] must be a string", i);
	}
	return true;
}

static bool check_object(const char *kind, const json_t *o, char **why)
{
	const char *w = "object: ";
	const json_t *v;

	if (!json_is_object(o))
		return fail(why, "\"object\" is missing or not an object");
	if (!strcmp(kind, "file") || !strcmp(kind, "exec")) {
		if (!want_str(o, "path", true, true, w, why) ||
		    !want_enum(o, "access", !strcmp(kind, "file"), accesses, w, why) ||
		    !want_int(o, "dev", false, 0, 0xffffffffLL, w, why) ||
		    !want_int(o, "ino", false, 0, INT64_MAX, w, why) ||
		    !want_bool(o, "new_name", w, why) ||
		    !want_bool(o, "abstract", w, why) ||
		    !want_enum(o, "type", false, ftypes, w, why) ||
		    !want_int(o, "nlink", false, 0, INT64_MAX, w, why) ||
		    !want_str(o, "btime", false, false, w, why))
			return false;
		v = json_object_get(o, "name_hash");
		/* a 64-bit hash may not fit a JSON integer: hex string too */
		if (v && !json_is_integer(v) && !json_is_string(v))
			return fail(why, "object: \"name_hash\" must be an integer or a string");
		return true;
	}
	if (!strcmp(kind, "net")) {
		unsigned char buf[16];
		const char *fam;

		if (!want_enum(o, "family", true, families, w, why) ||
		    !want_str(o, "addr", true, true, w, why) ||
		    !want_int(o, "port", true, 0, 65535, w, why) ||
		    !want_enum(o, "proto", false, protos, w, why))
			return false;
		fam = sbx_json_str(o, "family");
		if (inet_pton(!strcmp(fam, "ipv4") ? AF_INET : AF_INET6,
			      sbx_json_str(o, "addr"), buf) != 1)
			return fail(why, "object: \"addr\" is not an %s address", fam);
		return true;
	}
	if (!strcmp(kind, "command")) {
		return want_str(o, "command", true, true, w, why) &&
		       want_str(o, "cwd", false, false, w, why);
	}
	/* host: the resolver asked about a name (the person sees the name) */
	if (!strcmp(kind, "host"))
		return want_str(o, "host", true, true, w, why) &&
		       want_int(o, "port", false, 0, 65535, w, why);
	/* access: asked ahead by the agent, a path or a host */
	if (json_object_get(o, "path")) {
		/* identity fields are the daemon's, filled in when it files the
		 * request (the agent's own are dropped) */
		return want_str(o, "path", true, true, w, why) &&
		       want_enum(o, "access", true, accesses, w, why) &&
		       want_int(o, "dev", false, 0, 0xffffffffLL, w, why) &&
		       want_int(o, "ino", false, 0, INT64_MAX, w, why) &&
		       want_bool(o, "new_name", w, why) &&
		       want_enum(o, "type", false, ftypes, w, why) &&
		       want_int(o, "nlink", false, 0, INT64_MAX, w, why) &&
		       want_str(o, "btime", false, false, w, why) &&
		       (!json_object_get(o, "name_hash") ||
			json_is_integer(json_object_get(o, "name_hash")) ||
			json_is_string(json_object_get(o, "name_hash")) ||
			fail(why, "object: \"name_hash\" must be an integer or a string"));
	}
	if (json_object_get(o, "host")) {
		return want_str(o, "host", true, true, w, why) &&
		       want_int(o, "port", false, 0, 65535, w, why);
	}
	return fail(why, "object: an access request needs \"path\" and \"access\", "
		    "or \"host\" (and \"port\")");
}

static bool check_rule(const json_t *r, char **why)
{
	const char *w = "rule: ";
	const json_t *id;

	if (!r || json_is_null(r))
		return true;
	if (!json_is_object(r))
		return fail(why, "\"rule\" must be an object or null");
	id = json_object_get(r, "id");
	if (id && !json_is_integer(id) && !json_is_string(id) && !json_is_null(id))
		return fail(why, "rule: \"id\" must be an integer or a string");
	return want_str(r, "pattern", false, false, w, why) &&
	       want_str(r, "verdict", false, false, w, why) &&
	       want_str(r, "reason", false, false, w, why) &&
	       want_str(r, "source", false, false, w, why);
}

bool sbx_queue_validate_request(const json_t *req, const char *expect_id, char **why)
{
	const json_t *v;
	const char *id, *kind;

	if (why)
		*why = NULL;
	if (!json_is_object(req))
		return fail(why, "not a JSON object");
	v = json_object_get(req, "version");
	if (!json_is_integer(v))
		return fail(why, "\"version\" is missing or not an integer");
	if (json_integer_value(v) != SBX_QUEUE_VERSION)
		return fail(why, "\"version\" is %lld; this bpfsbx reads version %d",
			    (long long)json_integer_value(v), SBX_QUEUE_VERSION);
	v = json_object_get(req, "id");
	if (!json_is_string(v))
		return fail(why, "\"id\" is missing or not a string");
	id = json_string_value(v);
	if (!sbx_id_valid(id))
		return fail(why, "\"id\" is not a valid request id");
	if (expect_id && strcmp(id, expect_id))
		return fail(why, "\"id\" is %s but the file is named %s.json", id, expect_id);
	if (!want_time(req, "created", true, "", why) ||
	    !want_time(req, "deadline", true, "", why) ||
	    !want_enum(req, "kind", true, kinds, "", why) ||
	    !want_str(req, "session", false, false, "", why) ||
	    !want_str(req, "project", false, false, "", why) ||
	    !want_int(req, "count", true, 1, INT64_MAX, "", why) ||
	    !want_str(req, "agent_reason", false, false, "", why) ||
	    !want_str(req, "notice", false, false, "", why))
		return false;
	kind = sbx_json_str(req, "kind");
	return check_process(json_object_get(req, "process"), why) &&
	       check_object(kind, json_object_get(req, "object"), why) &&
	       check_rule(json_object_get(req, "rule"), why);
}

static const char *const verdicts[] = { "approve", "deny", NULL };
static const char *const scopes[] = { "once", "session", "always", NULL };

bool sbx_queue_validate_done(const json_t *done, const char *expect_id, char **why)
{
	const char *w = "decision: ";
	const json_t *d, *r, *ex;
	bool approve;

	if (!sbx_queue_validate_request(done, expect_id, why))
		return false;
	d = json_object_get(done, "decision");
	if (!json_is_object(d))
		return fail(why, "\"decision\" is missing or not an object");
	if (!want_enum(d, "verdict", true, verdicts, w, why) ||
	    !want_enum(d, "scope", true, scopes, w, why) ||
	    !want_str(d, "by", true, true, w, why) ||
	    !want_time(d, "at", true, w, why) ||
	    !want_str(d, "note", false, false, w, why) ||
	    !want_bool(d, "expired", w, why))
		return false;
	approve = !strcmp(sbx_json_str(d, "verdict"), "approve");
	ex = json_object_get(d, "expired");
	if (approve && json_is_true(ex))
		return fail(why, "decision: an expired request cannot be approved");
	if (approve && !strcmp(sbx_json_str(done, "kind"), "command") &&
	    strcmp(sbx_json_str(d, "scope"), "once"))
		return fail(why, "decision: a command can only be approved once");

	r = json_object_get(done, "result");
	if (!r || json_is_null(r))
		return true;
	w = "result: ";
	if (!json_is_object(r))
		return fail(why, "\"result\" must be an object");
	return want_int(r, "exit_code", true, -1, 255 + 128, w, why) &&
	       want_int(r, "signal", false, 0, 128, w, why) &&
	       want_str(r, "output", false, false, w, why) &&
	       want_bool(r, "truncated", w, why) &&
	       want_bool(r, "timed_out", w, why) &&
	       want_time(r, "started", false, w, why) &&
	       want_time(r, "finished", false, w, why);
}

const char *sbx_scope_name(enum sbx_scope s)
{
	switch (s) {
	case SBX_SCOPE_ONCE:	return "once";
	case SBX_SCOPE_SESSION:	return "session";
	case SBX_SCOPE_ALWAYS:	return "always";
	}
	return "once";
}

int sbx_scope_parse(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "once"))
		return SBX_SCOPE_ONCE;
	if (!strcmp(s, "session"))
		return SBX_SCOPE_SESSION;
	if (!strcmp(s, "always"))
		return SBX_SCOPE_ALWAYS;
	return -1;
}
