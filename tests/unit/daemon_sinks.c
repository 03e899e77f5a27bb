// SPDX-License-Identifier: GPL-2.0
/*
 * The sinks of one event record: its JSON line, the RFC 5424 message
 * (escaping, UTF-8, header), the syslog target parser, the OTLP request
 * and the rule counters. What real receivers make of them is
 * tests/e2e/test-fleet.mjs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/alloc.h"
#include "user/daemon/evrec.h"
#include "user/daemon/metrics.h"
#include "user/daemon/otlp.h"
#include "user/daemon/syslog.h"
#include "tests/unit/unit.h"

static void sample(struct sbx_evrec *r, const char *object)
{
	struct timespec ts = { .tv_sec = 1764781200, .tv_nsec = 123000000 };

	sbx_evrec_init(r, "kernel", &ts);
	r->session = "s-1";
	r->project = "/p";
	r->user = "alice";
	r->pid = 42;
	r->uid = 1000;
	r->comm = "cat";
	r->operation = "open_read";
	r->access = "read";
	r->object = object;
	r->verdict = "deny";
	r->rule.rule.present = true;
	r->rule.rule.id = 7;
	r->rule.rule.pattern = "~/.ssh/**";
	r->rule.rule.reason = "keys";
	r->err = 1;
}

SBX_TEST(daemon_sinks, syslog_message_escapes_sd_values)
{
	struct sbx_evrec r;
	char *m;

	sample(&r, "/a\"b\\c]d\xff" "e\xc3\xa9");
	m = sbx_syslog_format(&r, "h1", 99);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_STRING_EQUAL(m, "<36>1 2025-12-03T17:00:00.123Z h1 bpfsbx 99 kernel "
			       "[bpfsbx@32473 session=\"s-1\" project=\"/p\" user=\"alice\" "
			       "uid=\"1000\" pid=\"42\" comm=\"cat\" operation=\"open_read\" "
			       "access=\"read\" object=\"/a\\\"b\\\\c\\]d?e\xc3\xa9\" "
			       "verdict=\"deny\" rule_id=\"7\" rule=\"~/.ssh/**\" reason=\"keys\" "
			       "errno=\"1\"] deny open_read /a\"b\\c]d\xff" "e\xc3\xa9 (session s-1): keys");
	free(m);
	r.verdict = "audit";
	r.repeats = 5;
	m = sbx_syslog_format(&r, "", 1);
	CU_ASSERT_EQUAL(strncmp(m, "<38>1 2025-12-03T17:00:00.123Z - bpfsbx 1 kernel [", 50), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(m, " repeats=\"5\"]"));
	free(m);
}

SBX_TEST(daemon_sinks, syslog_targets)
{
	static const struct { const char *in; int proto; const char *host, *port, *path; } ok[] = {
		{ "unix:/dev/log", SBX_SYSLOG_UNIX, "", "", "/dev/log" },
		{ "/run/x.sock", SBX_SYSLOG_UNIX, "", "", "/run/x.sock" },
		{ "udp:10.0.0.1:514", SBX_SYSLOG_UDP, "10.0.0.1", "514", "" },
		{ "tcp:logs.example.org:6514", SBX_SYSLOG_TCP, "logs.example.org", "6514", "" },
		{ "tcp:[::1]:601", SBX_SYSLOG_TCP, "::1", "601", "" },
	};
	static const char *const bad[] = {
		"", "unix:", "unix:rel", "udp:", "udp:host", "udp::514", "udp:h:0", "udp:h:65536",
		"tcp:h:5x", "tcp:::1:514", "tcp:[::1]514", "tcp:[::1", "http://h:1", "udp:h:-1",
	};
	struct sbx_syslog_target t;
	char *err = NULL;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CU_ASSERT_EQUAL_FATAL(sbx_syslog_parse_target(ok[i].in, &t, &err), 0);
		CU_ASSERT_EQUAL(t.proto, ok[i].proto);
		CU_ASSERT_STRING_EQUAL(t.host, ok[i].host);
		CU_ASSERT_STRING_EQUAL(t.port, ok[i].port);
		CU_ASSERT_STRING_EQUAL(t.path, ok[i].path);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = NULL;
		CU_ASSERT_EQUAL(sbx_syslog_parse_target(bad[i], &t, &err), -EINVAL);
		/* the error names the value that was given */
		CU_ASSERT(err && !strncmp(err, "--syslog ", 9) && strstr(err, bad[i]));
		free(err);
	}
}

SBX_TEST(daemon_sinks, one_record_same_fields_in_json_and_otlp)
{
	struct sbx_evrec r;
	json_t *line, *req, *rl, *lr;
	char *msg;

	sample(&r, "/home/a/.ssh/id");
	line = sbx_evrec_json(&r);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(line, "object")), "/home/a/.ssh/id");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(line, "rule"), "id")), 7);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(line, "errno")), 1);
	CU_ASSERT_PTR_NULL(json_object_get(line, "repeats"));
	msg = sbx_evrec_message(&r);
	CU_ASSERT_STRING_EQUAL(msg, "deny open_read /home/a/.ssh/id (session s-1): keys");

	req = sbx_otlp_request(&r, "h1");
	rl = json_array_get(json_object_get(req, "resourceLogs"), 0);
	lr = json_array_get(json_object_get(json_array_get(json_object_get(rl, "scopeLogs"), 0),
					    "logRecords"), 0);
	{
		char *res = json_dumps(json_object_get(json_object_get(rl, "resource"), "attributes"),
				       JSON_COMPACT);

		CU_ASSERT_STRING_EQUAL(res,
			"[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"bpfsbx\"}},"
			"{\"key\":\"host.name\",\"value\":{\"stringValue\":\"h1\"}},"
			"{\"key\":\"user.name\",\"value\":{\"stringValue\":\"alice\"}},"
			"{\"key\":\"bpfsbx.project\",\"value\":{\"stringValue\":\"/p\"}},"
			"{\"key\":\"bpfsbx.session\",\"value\":{\"stringValue\":\"s-1\"}}]");
		free(res);
	}
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(lr, "timeUnixNano")),
			       "1764781200123000000");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(lr, "severityNumber")), 13);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(lr, "body"),
								  "stringValue")), msg);
	free(msg);
	json_decref(req);
	json_decref(line);
}

SBX_TEST(daemon_sinks, rule_hits_count_repeats)
{
	struct sbx_evrec r;
	const struct sbx_rule_hits *h;
	size_t n, before;
	uint64_t got = 0;

	sample(&r, "/x");
	r.rule.rule.pattern = "unit-rule-hits/**";
	h = sbx_metrics_rule_hits(&before);
	sbx_metrics_rule_hit(&r);
	r.repeats = 4;
	sbx_metrics_rule_hit(&r);
	r.verdict = "ask";
	sbx_metrics_rule_hit(&r);
	h = sbx_metrics_rule_hits(&n);
	CU_ASSERT_EQUAL(n, before + 2);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(h[i].rule, "unit-rule-hits/**") && !strcmp(h[i].verdict, "deny"))
			got = h[i].n;
	CU_ASSERT_EQUAL(got, 5);
}
