// SPDX-License-Identifier: GPL-2.0
/*
 * `bpfsbx mcp` over pipes, as an MCP client drives it: version
 * negotiation, every JSON-RPC error code, notifications, batches, the
 * size cap, stdin close, and the tools with a person deciding (in this
 * process, through the queue) while the server waits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>
#include "tests/unit/connector_helpers.h"
#include "tests/unit/unit.h"
#include "user/connector/mcp/server.h"

struct srv {
	struct tc_env e;
	struct tc_child c;
	char envhome[600], envwait[64];
	const char *env[3];
};

static const char *const extra =
	"commands:\n"
	"  rules:\n"
	"    - command: echo\n"
	"      args: [\"ask-me*\"]\n"
	"      verdict: ask\n"
	"      reason: test rule for escalation\n";

static bool start(struct srv *s, int wait_ms, bool with_project)
{
	char *argv[] = { "bpfsbx", "mcp", "--project", NULL, NULL };

	if (!tc_bin())
		return false;
	tc_setup(&s->e, extra);
	snprintf(s->envhome, sizeof(s->envhome), "HOME=%s", s->e.home);
	snprintf(s->envwait, sizeof(s->envwait), "BPFSBX_MCP_WAIT_MS=%d", wait_ms);
	s->env[0] = s->envhome;
	s->env[1] = s->envwait;
	s->env[2] = NULL;
	argv[3] = s->e.project;
	if (!with_project)
		argv[2] = NULL;
	return tc_spawn(&s->c, argv, s->env) == 0;
}

static void stop(struct srv *s)
{
	tc_child_free(&s->c);
	tc_teardown(&s->e);
}

/* Send one line, read one reply line as JSON (NULL on timeout). */
static json_t *call(struct srv *s, const char *line, int timeout_ms)
{
	char *r;
	json_t *j;

	if (getenv("SBX_TEST_VERBOSE") && line)
		fprintf(stderr, "-> %.200s\n", line);

	if (line) {
		tc_send(&s->c, line);
		tc_send(&s->c, "\n");
	}
	r = tc_line(&s->c, timeout_ms);
	if (getenv("SBX_TEST_VERBOSE"))
		fprintf(stderr, "<- %.300s\n", r ? r : "(nothing)");
	if (!r)
		return NULL;
	j = json_loads(r, 0, NULL);
	if (!j)
		fprintf(stderr, "not JSON from the server: %s\n", r);
	free(r);
	return j;
}

static int err_code(json_t *j)
{
	return (int)json_integer_value(json_object_get(json_object_get(j, "error"), "code"));
}

static json_t *init(struct srv *s, const char *version)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
		 "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
		 "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}", version);
	json_t *r = call(s, buf, 5000);
	tc_send(&s->c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
	return r;
}

static const char *result_version(json_t *r)
{
	return json_string_value(json_object_get(json_object_get(r, "result"), "protocolVersion"));
}

SBX_TEST(connector_mcp, version_negotiation)
{
	static const char *const known[] = { "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25" };
	struct srv s;
	json_t *r;

	for (size_t k = 0; k < 4; k++) {
		if (!start(&s, 0, true))
			SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
		r = init(&s, known[k]);
		CU_ASSERT_STRING_EQUAL(result_version(r) ?: "", known[k]);
		CU_ASSERT_TRUE(json_is_object(json_object_get(json_object_get(
			json_object_get(r, "result"), "capabilities"), "tools")));
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(
			json_object_get(r, "result"), "serverInfo"), "name")) ?: "", "bpfsbx");
		json_decref(r);
		CU_ASSERT_EQUAL(tc_finish(&s.c, 5000), 0);	/* stdin closed: exit 0 */
		stop(&s);
	}
	if (!start(&s, 0, true))
		SBX_SKIP("build/bpfsbx-san is not built");
	r = init(&s, "1999-01-01");
	CU_ASSERT_STRING_EQUAL(result_version(r) ?: "", SBX_MCP_LATEST);
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
		 "{\"protocolVersion\":\"2025-06-18\"}}", 5000);
	CU_ASSERT_EQUAL(err_code(r), -32600);	/* twice */
	json_decref(r);
	stop(&s);
}

SBX_TEST(connector_mcp, error_codes)
{
	struct srv s;
	json_t *r;
	static const struct { const char *line; int code; bool null_id; } cases[] = {
		{ "garbage", -32700, true },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":", -32700, true },
		{ "[1,", -32700, true },
		{ "42", -32600, true },
		{ "{\"jsonrpc\":\"1.0\",\"id\":2,\"method\":\"ping\"}", -32600, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", -32600, true },
		{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", -32600, true },
		{ "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":7}", -32600, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":4}", -32600, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":5}", -32600, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/list\"}", -32601, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":\"s7\",\"method\":\"nope\",\"params\":{}}", -32601, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}", -32602, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"run_privileged\",\"arguments\":{\"command\":\"id\"}}}", -32602, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"run_privileged\",\"arguments\":{\"command\":7,\"reason\":\"r\"}}}", -32602, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"check_request\",\"arguments\":{\"id\":\"x\",\"bogus\":1}}}", -32602, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"request_access\",\"arguments\":{\"path\":\"a\",\"host\":\"b\",\"reason\":\"r\"}}}", -32602, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_status\",\"arguments\":[]}}", -32602, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"tools/call\",\"params\":{\"arguments\":{}}}", -32602, false },
		{ "[]", -32600, true },
		{ "[{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\"}]", -32600, true },
	};

	if (!start(&s, 0, true))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	/* before initialize: only ping */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}", 5000);
	CU_ASSERT_TRUE(json_is_object(json_object_get(r, "result")));
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", 5000);
	CU_ASSERT_EQUAL(err_code(r), -32600);
	json_decref(r);
	json_decref(init(&s, "2025-06-18"));
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		r = call(&s, cases[k].line, 5000);
		if (err_code(r) != cases[k].code) {
			char *txt = r ? json_dumps(r, JSON_COMPACT) : NULL;

			fprintf(stderr, "mcp case %zu (%s): got %s\n", k, cases[k].line,
				txt ? txt : "(no reply)");
			free(txt);
		}
		CU_ASSERT_EQUAL(err_code(r), cases[k].code);
		CU_ASSERT_EQUAL(json_is_null(json_object_get(r, "id")), cases[k].null_id);
		json_decref(r);
	}
	/* notifications are never answered, known or not; responses are ignored */
	tc_send(&s.c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}\n");
	tc_send(&s.c, "{\"jsonrpc\":\"2.0\",\"method\":\"nope\",\"params\":5}\n");
	tc_send(&s.c, "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}\n");
	tc_send(&s.c, "\n   \n");
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}", 5000);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "id")), 0);
	CU_ASSERT_TRUE(json_is_object(json_object_get(r, "result")));
	json_decref(r);
	CU_ASSERT_EQUAL(tc_finish(&s.c, 5000), 0);
	stop(&s);
}

SBX_TEST(connector_mcp, internal_error)
{
	struct srv s;
	json_t *r;
	char *esc;

	if (!start(&s, 0, true))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	/* the queue cannot be opened: .sandbox/escalations is a file */
	esc = tc_path(s.e.project, ".sandbox/escalations");
	tc_write(esc, "not a directory");
	json_decref(init(&s, "2025-11-25"));
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"check_request\",\"arguments\":{\"id\":\"20261130T101503.123456Z-42-abcdef12\"}}}",
		 5000);
	CU_ASSERT_EQUAL(err_code(r), -32603);
	json_decref(r);
	free(esc);
	stop(&s);
}

SBX_TEST(connector_mcp, batches_and_size_cap)
{
	struct srv s;
	json_t *r;
	size_t n = SBX_MCP_MAX_MSG + 1000;
	char *big;

	if (!start(&s, 0, true))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	json_decref(init(&s, "2025-03-26"));
	r = call(&s, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
		 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"},"
		 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"}]", 5000);
	CU_ASSERT_TRUE(json_is_array(r));
	CU_ASSERT_EQUAL(json_array_size(r), 2);
	CU_ASSERT_EQUAL(err_code(json_array_get(r, 1)), -32601);
	json_decref(r);
	/* a batch of only notifications gets no reply at all */
	tc_send(&s.c, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}]\n");
	/* an oversized line: an error, then the server goes on */
	big = malloc(n + 2);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\n';
	big[n + 1] = 0;
	r = call(&s, NULL, 1);
	CU_ASSERT_PTR_NULL(r);
	tc_send(&s.c, big);
	free(big);
	r = call(&s, NULL, 10000);
	CU_ASSERT_EQUAL(err_code(r), -32600);
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", 5000);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "id")), 3);
	json_decref(r);
	stop(&s);

	/* 2025-06-18 removed batches */
	if (!start(&s, 0, true))
		SBX_SKIP("build/bpfsbx-san is not built");
	json_decref(init(&s, "2025-06-18"));
	r = call(&s, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", 5000);
	CU_ASSERT_EQUAL(err_code(r), -32600);
	json_decref(r);
	stop(&s);
}

static const char *text_of(json_t *r)
{
	return json_string_value(json_object_get(json_array_get(json_object_get(
		json_object_get(r, "result"), "content"), 0), "text"));
}

static bool is_error(json_t *r)
{
	return json_is_true(json_object_get(json_object_get(r, "result"), "isError"));
}

static const char *status_of(json_t *r)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(r, "result"),
								 "structuredContent"), "status"));
}

SBX_TEST(connector_mcp, tools_list_and_status)
{
	struct srv s;
	json_t *r, *tools, *t;
	size_t i;
	int seen = 0;

	if (!start(&s, 0, true))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	json_decref(init(&s, "2025-11-25"));
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", 5000);
	tools = json_object_get(json_object_get(r, "result"), "tools");
	json_array_foreach(tools, i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		json_t *schema = json_object_get(t, "inputSchema");

		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(schema, "type")) ?: "",
				       "object");
		if (!strcmp(name, "run_privileged") || !strcmp(name, "check_request") ||
		    !strcmp(name, "sandbox_status") || !strcmp(name, "request_access"))
			seen++;
	}
	CU_ASSERT_EQUAL(seen, 4);
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
		 "{\"name\":\"sandbox_status\"}}", 5000);
	CU_ASSERT_FALSE(is_error(r));
	CU_ASSERT_PTR_NOT_NULL(strstr(text_of(r) ?: "", "~/.ssh/"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text_of(r) ?: "", "Mode: hooks only: commands are classified, nothing is enforced by the kernel"));
	json_decref(r);
	/* policy denials are results the model reads, not protocol errors */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
		 "{\"name\":\"run_privileged\",\"arguments\":{\"command\":\"su -c id\",\"reason\":\"r\"}}}",
		 5000);
	CU_ASSERT_TRUE(is_error(r));
	CU_ASSERT_STRING_EQUAL(status_of(r) ?: "", "denied");
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
		 "{\"name\":\"request_access\",\"arguments\":{\"path\":\"src/main.c\",\"access\":\"write\",\"reason\":\"r\"}}}",
		 5000);
	CU_ASSERT_FALSE(is_error(r));
	CU_ASSERT_STRING_EQUAL(status_of(r) ?: "", "allowed");
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
		 "{\"name\":\"request_access\",\"arguments\":{\"host\":\"169.254.169.254\",\"port\":80,\"reason\":\"r\"}}}",
		 5000);
	CU_ASSERT_TRUE(is_error(r));
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":"
		 "{\"name\":\"check_request\",\"arguments\":{\"id\":\"../../etc/passwd\"}}}", 5000);
	CU_ASSERT_TRUE(is_error(r));
	json_decref(r);
	stop(&s);

	/* no project: a tool result that says what to do */
	if (!start(&s, 0, false))
		SBX_SKIP("build/bpfsbx-san is not built");
	json_decref(init(&s, "2025-11-25"));
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		 "{\"name\":\"sandbox_status\",\"arguments\":{}}}", 5000);
	CU_ASSERT_TRUE(is_error(r));
	CU_ASSERT_PTR_NOT_NULL(strstr(text_of(r) ?: "", "--project"));
	json_decref(r);
	stop(&s);
}

SBX_TEST(connector_mcp, run_privileged_approve_deny_pending)
{
	struct srv s;
	json_t *r;
	char *id, buf[512];

	if (!start(&s, 20000, true))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	json_decref(init(&s, "2025-11-25"));
	tc_send(&s.c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"run_privileged\",\"arguments\":{\"command\":\"echo privileged-output\","
		"\"reason\":\"test\"}}}\n");
	/* while the call waits, the server still answers pings */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}", 5000);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "id")), 2);
	json_decref(r);
	id = tc_decide_next(s.e.project, true, NULL, 10000);
	CU_ASSERT_PTR_NOT_NULL(id);
	free(id);
	r = call(&s, NULL, 15000);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "id")), 1);
	CU_ASSERT_FALSE(is_error(r));
	CU_ASSERT_STRING_EQUAL(status_of(r) ?: "", "executed");
	CU_ASSERT_PTR_NOT_NULL(strstr(text_of(r) ?: "", "privileged-output"));
	json_decref(r);

	tc_send(&s.c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"run_privileged\",\"arguments\":{\"command\":\"echo no\",\"reason\":\"test\"}}}\n");
	id = tc_decide_next(s.e.project, false, "not on a Friday", 10000);
	free(id);
	r = call(&s, NULL, 15000);
	CU_ASSERT_TRUE(is_error(r));
	CU_ASSERT_STRING_EQUAL(status_of(r) ?: "", "denied");
	CU_ASSERT_PTR_NOT_NULL(strstr(text_of(r) ?: "", "not on a Friday"));
	json_decref(r);
	stop(&s);

	/* no decision within the budget: pending, then check_request */
	if (!start(&s, 300, true))
		SBX_SKIP("build/bpfsbx-san is not built");
	json_decref(init(&s, "2025-06-18"));
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"run_privileged\",\"arguments\":{\"command\":\"echo later\",\"reason\":\"t\"}}}",
		 10000);
	CU_ASSERT_FALSE(is_error(r));
	CU_ASSERT_STRING_EQUAL(status_of(r) ?: "", "pending");
	CU_ASSERT_PTR_NOT_NULL(strstr(text_of(r) ?: "", "check_request"));
	const char *rid = json_string_value(json_object_get(json_object_get(
		json_object_get(r, "result"), "structuredContent"), "id"));
	snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
		 "{\"name\":\"check_request\",\"arguments\":{\"id\":\"%s\"}}}", rid ?: "");
	json_decref(r);
	id = tc_decide_next(s.e.project, true, NULL, 10000);
	CU_ASSERT_PTR_NOT_NULL(id);
	free(id);
	r = call(&s, buf, 5000);
	CU_ASSERT_STRING_EQUAL(status_of(r) ?: "", "executed");
	CU_ASSERT_PTR_NOT_NULL(strstr(text_of(r) ?: "", "later"));
	json_decref(r);
	stop(&s);
}

SBX_TEST(connector_mcp, cancel_stops_waiting)
{
	struct srv s;
	json_t *r;

	if (!start(&s, 20000, true))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	json_decref(init(&s, "2025-11-25"));
	tc_send(&s.c, "{\"jsonrpc\":\"2.0\",\"id\":\"w\",\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"run_privileged\",\"arguments\":{\"command\":\"echo x\",\"reason\":\"t\"}}}\n");
	tc_send(&s.c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
		"{\"requestId\":\"w\",\"reason\":\"user\"}}\n");
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}", 5000);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "id")), 7);
	json_decref(r);
	/* and no answer to the cancelled call ever comes */
	r = call(&s, NULL, 1500);
	CU_ASSERT_PTR_NULL(r);
	json_decref(r);
	CU_ASSERT_EQUAL(tc_finish(&s.c, 5000), 0);
	stop(&s);
}

SBX_TEST(connector_mcp, request_access_granted)
{
	struct srv s;
	json_t *r;
	char *id;

	if (!start(&s, 20000, true))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	json_decref(init(&s, "2025-11-25"));
	tc_send(&s.c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"request_access\",\"arguments\":{\"path\":\"~/.aws/credentials\",\"reason\":\"deploy\"}}}\n");
	id = tc_decide_next(s.e.project, true, NULL, 10000);
	CU_ASSERT_PTR_NOT_NULL(id);
	free(id);
	r = call(&s, NULL, 15000);
	CU_ASSERT_FALSE(is_error(r));
	CU_ASSERT_STRING_EQUAL(status_of(r) ?: "", "granted");
	json_decref(r);
	/* asked again within the grant: no new request */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"request_access\",\"arguments\":{\"path\":\"~/.aws/credentials\",\"reason\":\"deploy\"}}}",
		 5000);
	CU_ASSERT_STRING_EQUAL(status_of(r) ?: "", "allowed");
	json_decref(r);
	stop(&s);
}
