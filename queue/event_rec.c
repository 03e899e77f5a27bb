// SPDX-License-Identifier: GPL-2.0
/*
 * event_rec.c - an event log line decoded once (event_rec.h).
 *
 * A folded line (the repeats of one event within a second) carries no
 * "access": the access class follows from the operation, as the kernel
 * derived it (bpf/bpfsbx.h, enum sbx_access).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "queue/event_rec.h"
#include "lib/alloc.h"
#include "lib/json.h"
#include "lib/names.h"

static int op_parse(const char *name)
{
	for (unsigned op = 0; op < SBX_OP_MAX; op++)
		if (!strcmp(sbx_op_name(op), name))
			return (int)op;
	return -1;
}

/* the access class of a file operation; -1 for the others */
static int op_access(int op)
{
	switch (op) {
	case SBX_OP_OPEN_READ:
		return SBX_ACC_READ;
	case SBX_OP_OPEN_WRITE:
	case SBX_OP_CREATE:
	case SBX_OP_MKDIR:
	case SBX_OP_UNLINK:
	case SBX_OP_RMDIR:
	case SBX_OP_RENAME_FROM:
	case SBX_OP_RENAME_TO:
	case SBX_OP_LINK_FROM:
	case SBX_OP_LINK_TO:
	case SBX_OP_SYMLINK:
	case SBX_OP_TRUNCATE:
	case SBX_OP_CHMOD:
	case SBX_OP_CHOWN:
	case SBX_OP_SETXATTR:
	case SBX_OP_SETATTR:
		return SBX_ACC_WRITE;
	case SBX_OP_EXEC:
	case SBX_OP_MMAP_EXEC:
		return SBX_ACC_EXEC;
	case SBX_OP_UNIX_CONNECT:
		return SBX_ACC_CONNECT;
	default:
		return -1;
	}
}

/* "192.0.2.1:443", "[2001:db8::1]:443", either followed by " (name)" */
static bool parse_addr(const char *obj, struct sbx_event_rec *r)
{
	char a[INET6_ADDRSTRLEN + 2];
	const char *colon, *end;
	size_t n;
	long port;
	char *pe;

	if (obj[0] == '[') {
		end = strchr(obj, ']');
		if (!end || end[1] != ':')
			return false;
		n = (size_t)(end - obj - 1);
		colon = end + 1;
		obj++;
		r->family = AF_INET6;
	} else {
		colon = strchr(obj, ':');
		if (!colon)
			return false;
		n = (size_t)(colon - obj);
		r->family = AF_INET;
	}
	if (n == 0 || n >= sizeof(a))
		return false;
	memcpy(a, obj, n);
	a[n] = 0;
	memset(r->addr, 0, sizeof(r->addr));
	if (inet_pton(r->family, a, r->addr) != 1)
		return false;
	port = strtol(colon + 1, &pe, 10);
	if (pe == colon + 1 || port < 0 || port > 65535 || (*pe && *pe != ' '))
		return false;
	r->port = (uint16_t)port;
	return true;
}

static bool is_event_kind(const char *ev)
{
	return !strcmp(ev, "kernel") || !strcmp(ev, "kernel_repeats") || !strcmp(ev, "dns") ||
	       !strcmp(ev, "dns_repeats");
}

int sbx_event_rec_decode(const json_t *line, struct sbx_event_rec *r, char **why)
{
	const char *ev, *verdict, *access;
	const json_t *rule, *rep;
	int v;

	memset(r, 0, sizeof(*r));
	*why = NULL;
	if (!json_is_object(line)) {
		*why = sbx_strdup("not a JSON object");
		return -1;
	}
	/* an audit log holds the same records beside its own kinds */
	ev = sbx_json_str(line, "event");
	if (ev && !is_event_kind(ev))
		return 0;
	r->op_name = sbx_json_str(line, "operation");
	r->object = sbx_json_str(line, "object");
	verdict = sbx_json_str(line, "verdict");
	if (!r->op_name || !r->object || !verdict) {
		*why = sbx_asprintf("no \"%s\" string: not an event record",
				    !r->op_name ? "operation" : !r->object ? "object" : "verdict");
		return -1;
	}
	v = sbx_verdict_parse(verdict);
	if (v < 0) {
		*why = sbx_asprintf("\"verdict\": unknown verdict '%.40s'", verdict);
		return -1;
	}
	r->verdict = (uint8_t)v;
	r->time = sbx_json_str(line, "time");
	r->session = sbx_json_str(line, "session");
	r->uid = json_is_integer(json_object_get(line, "uid")) ?
		 json_integer_value(json_object_get(line, "uid")) : -1;
	r->comm = sbx_json_str(line, "comm");
	r->exe = sbx_json_str(line, "exe");
	r->op = op_parse(r->op_name);
	r->count = 1;
	rep = json_object_get(line, "repeats");
	if (rep) {
		if (!json_is_integer(rep) || json_integer_value(rep) < 1) {
			*why = sbx_strdup("\"repeats\": not a positive integer");
			return -1;
		}
		r->count = (uint64_t)json_integer_value(rep);
	}
	rule = json_object_get(line, "rule");
	sbx_request_view_rule(rule, &r->rule);
	if (rule && !json_is_object(rule) && !json_is_null(rule)) {
		*why = sbx_strdup("\"rule\": not an object");
		return -1;
	}
	if (r->rule.would) {
		v = sbx_verdict_parse(r->rule.would);
		if ((v != SBX_V_DENY && v != SBX_V_ASK) || r->verdict != SBX_V_AUDIT) {
			*why = sbx_asprintf("\"rule\": \"would\" '%.40s' %s", r->rule.would,
					    r->verdict != SBX_V_AUDIT ? "on an event that is not an audit"
					    : "is not deny or ask");
			return -1;
		}
		r->would = (uint8_t)v;
	}
	r->access = -1;
	access = sbx_json_str(line, "access");
	if (access && (r->access = sbx_access_parse(access)) < 0) {
		*why = sbx_asprintf("\"access\": unknown access class '%.40s'", access);
		return -1;
	}
	if (r->op == SBX_OP_DNS) {
		r->kind = SBX_EVREC_DNS;
		r->host = sbx_json_str(line, "name");
		if (!r->host) {
			*why = sbx_strdup("a dns record without a \"name\" string");
			return -1;
		}
		return 1;
	}
	if (r->op == SBX_OP_CONNECT || r->op == SBX_OP_SENDMSG) {
		if (parse_addr(r->object, r)) {
			r->kind = SBX_EVREC_NET;
			r->host = sbx_json_str(line, "name");
			return 1;
		}
		r->kind = SBX_EVREC_OTHER;
		return 1;
	}
	if (r->access < 0)
		r->access = op_access(r->op);
	if (r->access >= 0) {
		r->kind = SBX_EVREC_FILE;
		r->path = r->object;
		if (!strncmp(r->path, "...", 3)) {
			r->truncated = true;
			r->path += 3;
		}
		return 1;
	}
	r->kind = SBX_EVREC_OTHER;
	return 1;
}
