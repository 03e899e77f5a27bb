// SPDX-License-Identifier: GPL-2.0
/*
 * evrec.c - the typed event record's two renderings that more than one
 * sink shares: the JSON line (event log, audit chain, journal fields) and
 * the sentence for people (journal MESSAGE, syslog MSG, OTLP body).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "user/daemon/evrec.h"

const char *sbx_evrec_host(void)
{
	static char host[256];

	if (!host[0] && gethostname(host, sizeof(host) - 1))
		snprintf(host, sizeof(host), "localhost");
	return host;
}

void sbx_evrec_init(struct sbx_evrec *r, const char *kind, const struct timespec *ts)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->ts = *ts;
	r->pid = r->tid = r->uid = r->err = -1;
	sbx_request_init(&r->rule, SBX_REQ_FILE);
}

static void put_str(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

static void put_int(json_t *o, const char *k, long long v)
{
	if (v >= 0)
		json_object_set_new(o, k, json_integer(v));
}

json_t *sbx_evrec_json(const struct sbx_evrec *r)
{
	char when[40];
	json_t *o = json_object(), *v;
	const char *k;

	if (!o)
		return NULL;
	sbx_rfc3339(when, sizeof(when), &r->ts, 3);
	json_object_set_new(o, "time", json_string(when));
	json_object_set_new(o, "session", r->session ? json_string(r->session) : json_null());
	if (r->container)
		json_object_set_new(o, "container", json_deep_copy(r->container));
	put_int(o, "pid", r->pid);
	put_int(o, "tid", r->tid);
	put_int(o, "uid", r->uid);
	if (!strcmp(r->kind, "kernel")) {
		/* a kernel event always says who, even when /proc no longer can */
		json_object_set_new(o, "comm", json_string(r->comm ? r->comm : ""));
		json_object_set_new(o, "exe", r->exe ? json_string(r->exe) : json_null());
	}
	put_str(o, "operation", r->operation);
	put_str(o, "access", r->access);
	put_str(o, "object", r->object);
	json_object_set_new(o, "rule", sbx_request_encode_rule(&r->rule.rule));
	put_str(o, "verdict", r->verdict);
	put_str(o, "tier", r->tier);
	put_int(o, "errno", r->err);
	put_str(o, "name", r->name);
	put_str(o, "answer", r->answer);
	if (r->repeats)
		json_object_set_new(o, "repeats", json_integer((json_int_t)r->repeats));
	json_object_foreach(r->extra, k, v)
		json_object_set(o, k, v);
	return o;
}

char *sbx_evrec_message(const struct sbx_evrec *r)
{
	const char *v = r->verdict ? r->verdict : "?", *op = r->operation ? r->operation : "?";
	const char *obj = r->object ? r->object : "?";
	const char *reason = r->rule.rule.reason;
	char *learning = NULL, *msg, *s;

	if (r->rule.rule.would) {
		/* "audit (learning: would deny) open_read ..." */
		learning = sbx_asprintf("%s (learning: would %s)", v, r->rule.rule.would);
		v = learning;
	}
	/* "session S" or "session S, container NAME": who, as people know it */
	if (r->container && sbx_json_str(r->container, "name"))
		s = sbx_asprintf("%s, container %s", r->session ? r->session : "none",
				 sbx_json_str(r->container, "name"));
	else
		s = sbx_strdup(r->session ? r->session : "none");
	if (r->repeats)
		msg = sbx_asprintf("%s %s %s, repeated %llu more times (session %s)", v, op, obj,
				   (unsigned long long)r->repeats, s);
	else
		msg = sbx_asprintf("%s %s %s (session %s)%s%s", v, op, obj, s, reason ? ": " : "",
				   reason ? reason : "");
	free(learning);
	free(s);
	return msg;
}

int sbx_evrec_severity(const struct sbx_evrec *r)
{
	if (r->verdict && !strcmp(r->verdict, "refused"))
		return 3;	/* the daemon's own refusal (a machine policy not applied) */
	if (r->verdict && !strcmp(r->verdict, "deny"))
		return 4;
	if (r->verdict && !strcmp(r->verdict, "ask"))
		return 5;
	return 6;
}
