// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx mcp [--project DIR]: a stdio MCP server (newline-delimited
 * JSON-RPC 2.0) with the tools an agent uses to ask a person for more than
 * the sandbox gives it: run_privileged, request_access, check_request and
 * sandbox_status.
 *
 * A call that waits for a person never outlives the client's tool timeout
 * (60 s in the SDK, Claude Code and Codex): after BPFSBX_MCP_WAIT_MS
 * (45 s, at most 55 s) it returns "pending" with the request id, and
 * check_request picks the outcome up later. Denials are tool results with
 * isError, which the model reads; protocol faults are JSON-RPC errors.
 *
 * Only JSON-RPC goes to stdout; diagnostics go to stderr.
 *
 * The tools are in tools.c; here are JSON-RPC, the session, the
 * tool list and the calls parked while a person decides.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "user/connector/escalate.h"
#include "user/connector/mcp/server.h"
#include "user/connector/mcp/tools.h"
#include "lib/alloc.h"
#include "lib/clock.h"

#include "version.h"
#include "lib/json.h"
#define SBX_VERSION_STR SBX_VERSION_FULL
#define POLL_MS 100
#define PROGRESS_MS 10000

static const char *const versions[] = {	/* newest first */
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL,
};

struct parked {
	json_t *rpc_id;
	char *req_id;
	enum tool tool;
	int64_t deadline, next_progress;
	json_t *progress_token;
	int progress;
};

/* ---- output ------------------------------------------------------------ */

static void send_msg(struct sbx_mcp *m, json_t *msg)
{
	char *txt;

	if (!msg)
		return;
	if (m->batch) {
		json_array_append_new(m->batch, msg);
		return;
	}
	txt = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	json_decref(msg);
	if (txt) {
		m->o.emit(m->o.emit_ctx, txt);
		free(txt);
	}
}

static void mcp_reply(struct sbx_mcp *m, json_t *id, json_t *result)
{
	send_msg(m, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
			      "result", result));
}

static void mcp_reply_error(struct sbx_mcp *m, json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void mcp_reply_error(struct sbx_mcp *m, json_t *id, int code, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	va_start(ap, fmt);
	msg = sbx_vformat(fmt, ap);
	va_end(ap);
	send_msg(m, json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0",
			      "id", id ? id : json_null(), "error", "code", code,
			      "message", msg ? msg : "error"));
	free(msg);
}

/* ---- calls that wait for a person ------------------------------------------- */

static void park(struct sbx_mcp *m, json_t *rpc_id, const char *req_id, enum tool tool,
		 int budget_ms, json_t *meta)
{
	struct parked *p;

	if (!SBX_GROW(m->p, m->cap, m->np + 1, 4)) {
		mcp_reply_error(m, rpc_id, -32603, "out of memory");
		return;
	}
	p = &m->p[m->np];
	memset(p, 0, sizeof(*p));
	p->rpc_id = json_incref(rpc_id);
	p->req_id = strdup(req_id);
	p->tool = tool;
	p->deadline = sbx_now_ms() + budget_ms;
	p->next_progress = sbx_now_ms() + PROGRESS_MS;
	p->progress_token = json_incref(json_object_get(meta, "progressToken"));
	if (!p->req_id) {
		json_decref(p->rpc_id);
		json_decref(p->progress_token);
		mcp_reply_error(m, rpc_id, -32603, "out of memory");
		return;
	}
	m->np++;
}

static void unpark(struct sbx_mcp *m, size_t k)
{
	json_decref(m->p[k].rpc_id);
	json_decref(m->p[k].progress_token);
	free(m->p[k].req_id);
	m->p[k] = m->p[--m->np];
}

/* Answer now, or park until a decision or the budget's end. */
static void mcp_wait_or_park(struct sbx_mcp *m, json_t *rpc_id, const char *req_id,
			     enum tool tool, int budget_ms, json_t *meta)
{
	struct sbx_esc_outcome o;
	char *err = NULL;

	if (sbx_esc_check(m->project, req_id, &o, &err) < 0) {
		mcp_reply_error(m, rpc_id, -32603, "request %s: %s", req_id, err ? err : "?");
		free(err);
		return;
	}
	if (budget_ms > 0 && !m->batch && !m->o.dry_run &&
	    (o.state == SBX_ESC_PENDING || o.state == SBX_ESC_CLAIMED)) {
		sbx_esc_outcome_clear(&o);
		park(m, rpc_id, req_id, tool, budget_ms, meta);
		return;
	}
	if (o.state == SBX_ESC_APPROVED || o.state == SBX_ESC_DENIED)
		mcp_audit(m, tool, NULL, o.state == SBX_ESC_APPROVED ? "approved" : "denied", NULL,
			  NULL, req_id, &o);
	mcp_reply(m, rpc_id, mcp_outcome_result(m, tool, req_id, &o));
	sbx_esc_outcome_clear(&o);
}

static const struct sbx_mcp_answer server_answer = {
	.reply = mcp_reply,
	.error = mcp_reply_error,
	.wait_or_park = mcp_wait_or_park,
};

int sbx_mcp_poll(struct sbx_mcp *m)
{
	int64_t now = sbx_now_ms(), next = -1;

	for (size_t k = 0; k < m->np;) {
		struct parked *p = &m->p[k];
		struct sbx_esc_outcome o;
		char *err = NULL;
		int rc = sbx_esc_check(m->project, p->req_id, &o, &err);

		if (rc < 0) {
			mcp_reply_error(m, p->rpc_id, -32603, "request %s: %s", p->req_id,
					err ? err : "?");
			free(err);
			unpark(m, k);
			continue;
		}
		if (o.state == SBX_ESC_APPROVED || o.state == SBX_ESC_DENIED ||
		    o.state == SBX_ESC_UNKNOWN || now >= p->deadline) {
			if (o.state == SBX_ESC_APPROVED || o.state == SBX_ESC_DENIED)
				mcp_audit(m, p->tool, NULL, o.state == SBX_ESC_APPROVED ? "approved" :
					  "denied", NULL, NULL, p->req_id, &o);
			mcp_reply(m, p->rpc_id, mcp_outcome_result(m, p->tool, p->req_id, &o));
			sbx_esc_outcome_clear(&o);
			unpark(m, k);
			continue;
		}
		sbx_esc_outcome_clear(&o);
		if (p->progress_token && now >= p->next_progress) {
			char *msg = sbx_asprintf("waiting for a person to decide request %s",
						 p->req_id);

			send_msg(m, json_pack("{s:s, s:s, s:{s:O, s:i, s:s}}", "jsonrpc", "2.0",
					      "method", "notifications/progress", "params",
					      "progressToken", p->progress_token,
					      "progress", ++p->progress, "message", msg));
			free(msg);
			p->next_progress = now + PROGRESS_MS;
		}
		k++;
	}
	if (m->np)
		next = POLL_MS;
	return (int)next;
}

/* ---- tools/list --------------------------------------------------------------- */

static bool new_schema(struct sbx_mcp *m)
{
	return m->version && strcmp(m->version, "2025-03-26") >= 0;
}

static json_t *tools_list(struct sbx_mcp *m)
{
	json_t *tools = json_array();
	struct {
		const char *name, *title, *desc, *schema;
		bool ro, destructive, open_world;
	} defs[] = {
		{ "run_privileged", "Run a command outside the sandbox",
		  "Ask a person to run a shell command outside the sandbox, for things the sandbox "
		  "does not allow (sudo, package installs, protected files). The person sees the "
		  "command and your reason. If approved, the command is run by bpfsbx and you get its "
		  "exit code and output. If no decision comes in time you get a request id: call "
		  "check_request with it later. Do not retry a denied command.",
		  "{\"type\":\"object\",\"properties\":{"
		  "\"command\":{\"type\":\"string\",\"minLength\":1,\"description\":\"shell command (run with /bin/sh -c)\"},"
		  "\"cwd\":{\"type\":\"string\",\"description\":\"absolute working directory; default: the project\"},"
		  "\"reason\":{\"type\":\"string\",\"minLength\":1,\"description\":\"why it is needed, shown to the person\"}},"
		  "\"required\":[\"command\",\"reason\"],\"additionalProperties\":false}",
		  false, true, true },
		{ "request_access", "Ask for access to a file or host",
		  "Ask a person ahead of time for access the sandbox policy asks about: a file or "
		  "directory (path, access read|write|exec) or a network host (host, port). Returns "
		  "granted (then retry your action), denied, or pending with a request id for "
		  "check_request.",
		  "{\"type\":\"object\",\"properties\":{"
		  "\"path\":{\"type\":\"string\",\"description\":\"file or directory; relative to the project\"},"
		  "\"access\":{\"type\":\"string\",\"enum\":[\"read\",\"write\",\"exec\"],\"default\":\"read\"},"
		  "\"host\":{\"type\":\"string\",\"description\":\"host name, address or URL\"},"
		  "\"port\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":65535,\"default\":443},"
		  "\"reason\":{\"type\":\"string\",\"minLength\":1,\"description\":\"why it is needed, shown to the person\"}},"
		  "\"required\":[\"reason\"],\"additionalProperties\":false}",
		  false, false, true },
		{ "check_request", "Check an escalation",
		  "Get the outcome of a request made earlier (by run_privileged, request_access or "
		  "a refused tool call): executed with its output, granted, denied, or still pending.",
		  "{\"type\":\"object\",\"properties\":{"
		  "\"id\":{\"type\":\"string\",\"description\":\"the request id\"},"
		  "\"wait_seconds\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":55,\"description\":\"wait this long for a decision (default 0)\"}},"
		  "\"required\":[\"id\"],\"additionalProperties\":false}",
		  true, false, false },
		{ "sandbox_status", "Sandbox status",
		  "What the sandbox confines here: the policy's defaults and its deny/ask rules, "
		  "whether this runs in a kernel-confined session, pending requests and recent "
		  "denials.",
		  "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
		  true, false, false },
	};

	for (size_t k = 0; tools && k < sizeof(defs) / sizeof(defs[0]); k++) {
		json_t *schema = json_loads(defs[k].schema, 0, NULL);
		json_t *t = json_pack("{s:s, s:s, s:o}", "name", defs[k].name,
				      "description", defs[k].desc, "inputSchema", schema);

		if (t && new_schema(m)) {
			json_object_set_new(t, "annotations",
				json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", defs[k].title,
					  "readOnlyHint", defs[k].ro,
					  "destructiveHint", defs[k].destructive,
					  "idempotentHint", defs[k].ro,
					  "openWorldHint", defs[k].open_world));
			if (strcmp(m->version, "2025-06-18") >= 0)
				json_object_set_new(t, "title", json_string(defs[k].title));
		}
		json_array_append_new(tools, t);
	}
	return json_pack("{s:o}", "tools", tools);
}

/* ---- JSON-RPC ------------------------------------------------------------------ */

static void initialize(struct sbx_mcp *m, json_t *id, json_t *params)
{
	const char *want = sbx_json_str(params, "protocolVersion");
	json_t *res;

	if (m->initialized) {
		mcp_reply_error(m, id, -32600, "already initialized");
		return;
	}
	if (!want) {
		mcp_reply_error(m, id, -32602,
				"initialize: params.protocolVersion must be a string");
		return;
	}
	m->version = versions[0];
	for (int k = 0; versions[k]; k++)
		if (!strcmp(want, versions[k]))
			m->version = versions[k];
	m->initialized = true;
	res = json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}, s:s}",
			"protocolVersion", m->version,
			"capabilities", "tools", "listChanged", 0,
			"serverInfo", "name", "bpfsbx", "version", SBX_VERSION_STR,
			"instructions",
			"bpfsbx confines this agent. When a tool call is refused by bpfsbx, do not "
			"work around it: use request_access for a file or host, run_privileged for a "
			"command that needs more rights, and check_request for a pending request id. "
			"Always give a reason; a person decides.");
	if (res && strcmp(m->version, "2025-06-18") >= 0)
		json_object_set_new(json_object_get(res, "serverInfo"), "title",
				    json_string("bpfsbx sandbox escalation"));
	mcp_reply(m, id, res);
}

static void cancel(struct sbx_mcp *m, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");

	for (size_t k = 0; rid && k < m->np; k++)
		if (json_equal(m->p[k].rpc_id, rid)) {
			/* no reply to a cancelled request; the escalation stays
			 * in the queue for check_request */
			unpark(m, k);
			return;
		}
}

static void handle_msg(struct sbx_mcp *m, json_t *msg)
{
	json_t *id, *params;
	const char *method, *jsonrpc;

	if (!json_is_object(msg)) {
		mcp_reply_error(m, NULL, -32600, "Invalid Request: not a JSON object");
		return;
	}
	id = json_object_get(msg, "id");
	if (id && !json_is_string(id) && !json_is_integer(id) && !json_is_real(id)) {
		mcp_reply_error(m, NULL, -32600,
				"Invalid Request: id must be a string or a number");
		return;
	}
	jsonrpc = sbx_json_str(msg, "jsonrpc");
	method = sbx_json_str(msg, "method");
	if (!jsonrpc || strcmp(jsonrpc, "2.0")) {
		mcp_reply_error(m, id, -32600, "Invalid Request: jsonrpc must be \"2.0\"");
		return;
	}
	if (!json_object_get(msg, "method")) {
		if (id && (json_object_get(msg, "result") || json_object_get(msg, "error")))
			return;	/* a response: we send no requests, so nothing to match */
		mcp_reply_error(m, id, -32600, "Invalid Request: no method");
		return;
	}
	if (!method) {
		mcp_reply_error(m, id, -32600, "Invalid Request: method must be a string");
		return;
	}
	params = json_object_get(msg, "params");
	if (params && !json_is_object(params)) {
		if (id)
			mcp_reply_error(m, id, json_is_array(params) ? -32602 : -32600,
					"params must be an object");
		return;
	}
	if (!id) {	/* a notification: never answered */
		if (!strcmp(method, "notifications/cancelled"))
			cancel(m, params);
		return;
	}
	if (!strcmp(method, "initialize")) {
		if (m->batch) {
			mcp_reply_error(m, id, -32600, "initialize must not be part of a batch");
			return;
		}
		initialize(m, id, params);
	} else if (!strcmp(method, "ping")) {
		mcp_reply(m, id, json_object());
	} else if (!m->initialized) {
		mcp_reply_error(m, id, -32600,
				"the server is not initialized: send initialize first");
	} else if (!strcmp(method, "tools/list")) {
		mcp_reply(m, id, tools_list(m));
	} else if (!strcmp(method, "tools/call")) {
		if (!params)
			mcp_reply_error(m, id, -32602, "tools/call needs params");
		else
			mcp_tools_call(m, id, params);
	} else {
		mcp_reply_error(m, id, -32601, "Method not found: %s", method);
	}
}

void sbx_mcp_handle(struct sbx_mcp *m, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg;
	size_t i;
	json_t *e;

	msg = json_loadb(line, len, JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr);
	if (!msg) {
		mcp_reply_error(m, NULL, -32700,
				"Parse error: %s (column %d)", jerr.text, jerr.column);
		return;
	}
	if (!json_is_array(msg)) {
		handle_msg(m, msg);
		json_decref(msg);
		return;
	}
	/* JSON-RPC batches: part of MCP 2025-03-26 only (2025-06-18 removed them) */
	if (!m->initialized || strcmp(m->version, "2025-03-26")) {
		mcp_reply_error(m, NULL, -32600, "Invalid Request: batches are not supported in "
				"protocol version %s", m->version ? m->version : "(not initialized)");
	} else if (json_array_size(msg) == 0) {
		mcp_reply_error(m, NULL, -32600, "Invalid Request: empty batch");
	} else {
		json_t *out = json_array();

		m->batch = out;
		json_array_foreach(msg, i, e)
			handle_msg(m, e);
		m->batch = NULL;
		if (json_array_size(out))
			send_msg(m, out);
		else
			json_decref(out);
	}
	json_decref(msg);
}

void sbx_mcp_oversized(struct sbx_mcp *m)
{
	mcp_reply_error(m, NULL, -32600, "Invalid Request: message longer than %u bytes",
			SBX_MCP_MAX_MSG);
}

struct sbx_mcp *sbx_mcp_new(const struct sbx_mcp_opts *o)
{
	sbx_esc_mcp_serving = true;
	struct sbx_mcp *m = calloc(1, sizeof(*m));
	char *name = NULL, pid[32];

	if (!m)
		return NULL;
	m->o = *o;
	m->answer = &server_answer;
	if (m->o.wait_ms > SBX_MCP_WAIT_MAX_MS)
		m->o.wait_ms = SBX_MCP_WAIT_MAX_MS;
	if (m->o.wait_ms < 0)
		m->o.wait_ms = 0;
	snprintf(pid, sizeof(pid), "%d", (int)getppid());
	m->session = sbx_esc_session_name("mcp-", pid);
	free(name);
	if (!m->session) {
		free(m);
		return NULL;
	}
	return m;
}

void sbx_mcp_free(struct sbx_mcp *m)
{
	if (!m)
		return;
	while (m->np)
		unpark(m, m->np - 1);
	free(m->p);
	free(m->project);
	free(m->session);
	free(m);
}
