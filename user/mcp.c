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
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "policy/policy.h"
#include "queue/queue.h"
#include "user/cmd.h"
#include "user/connector_escalate.h"
#include "user/connector_mcp.h"
#include "user/connector_policy.h"
#include "user/connector_shell.h"
#include "user/control.h"
#include "user/util.h"

#define SBX_VERSION_STR "0.1.0"
#define POLL_MS 100
#define PROGRESS_MS 10000

static const char *const versions[] = {	/* newest first */
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL,
};

enum tool { T_RUN, T_ACCESS, T_CHECK, T_STATUS };

struct parked {
	json_t *rpc_id;
	char *req_id;
	enum tool tool;
	int64_t deadline, next_progress;
	json_t *progress_token;
	int progress;
};

struct sbx_mcp {
	struct sbx_mcp_opts o;
	char *project;
	bool project_looked;
	bool initialized;
	const char *version;
	struct parked *p;
	size_t np, cap;
	json_t *batch;		/* replies of the batch being handled */
	char *session;		/* queue session name outside kernel sessions */
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

static void reply(struct sbx_mcp *m, json_t *id, json_t *result)
{
	send_msg(m, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
			      "result", result));
}

static void reply_error(struct sbx_mcp *m, json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void reply_error(struct sbx_mcp *m, json_t *id, int code, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	send_msg(m, json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0",
			      "id", id ? id : json_null(), "error", "code", code,
			      "message", msg ? msg : "error"));
	free(msg);
}

/*
 * A tool result: text for the model, isError, and the same facts as
 * structuredContent (stolen). Claude Code shows the model only the
 * structuredContent when there is one, so the text goes in there too, as
 * "message": what to do next must reach the model either way.
 */
static json_t *tool_result(const char *text, bool is_error, json_t *structured)
{
	json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
			      text ? text : "", "isError", is_error);

	if (r && structured) {
		json_object_set_new(structured, "message", json_string(text ? text : ""));
		json_object_set_new(r, "structuredContent", structured);
	}
	else
		json_decref(structured);
	return r;
}

/* ---- project and policy ------------------------------------------------------ */

static const char *project(struct sbx_mcp *m)
{
	if (!m->project_looked) {
		char *cwd = getcwd(NULL, 0);

		m->project_looked = true;
		if (m->o.project)
			m->project = realpath(m->o.project, NULL);
		else if (cwd)
			sbx_conn_find_project(cwd, &m->project);
		free(cwd);
	}
	return m->project;
}

static json_t *no_project(struct sbx_mcp *m)
{
	char *t = sbx_asprintf("bpfsbx: no project: %s. Start the server with `bpfsbx mcp "
			       "--project DIR` on a folder set up with `bpfsbx init`.",
			       m->o.project ? "the --project folder does not exist"
					    : "no .sandbox/policy.yaml above the working directory");
	json_t *r = tool_result(t, true, json_pack("{s:s}", "status", "error"));

	free(t);
	return r;
}

static struct sbx_conn_policy *policy(struct sbx_mcp *m, json_t **err_result)
{
	struct sbx_conn_policy *cp = NULL;
	char *err = NULL;

	*err_result = NULL;
	if (!project(m)) {
		*err_result = no_project(m);
		return NULL;
	}
	if (m->o.policy)
		return m->o.policy;
	if (sbx_conn_policy_load(m->project, &cp, &err) < 0) {
		char *t = sbx_asprintf("bpfsbx: %s (nothing can be asked until the policy is "
				       "fixed)", err ? err : "the policy could not be loaded");

		*err_result = tool_result(t, true, json_pack("{s:s}", "status", "error"));
		free(t);
		free(err);
		return NULL;
	}
	return cp;
}

static void policy_put(struct sbx_mcp *m, struct sbx_conn_policy *cp)
{
	if (cp != m->o.policy)
		sbx_conn_policy_free(cp);
}

/* ---- outcomes ---------------------------------------------------------------- */

static json_t *outcome_result(struct sbx_mcp *m, enum tool tool, const char *id,
			      const struct sbx_esc_outcome *o)
{
	char *text = sbx_esc_describe(m->project, id, o);
	json_t *s = json_pack("{s:s}", "id", id), *r;
	bool is_error = false;

	switch (o->state) {
	case SBX_ESC_UNKNOWN:
		json_object_set_new(s, "status", json_string("not_found"));
		is_error = true;
		break;
	case SBX_ESC_PENDING:
	case SBX_ESC_CLAIMED:
		json_object_set_new(s, "status", json_string("pending"));
		break;
	case SBX_ESC_DENIED: {
		const json_t *d = json_object_get(o->done, "decision");
		const char *note = json_string_value(json_object_get(d, "note"));

		json_object_set_new(s, "status", json_string(
			json_is_true(json_object_get(d, "expired")) ? "expired" : "denied"));
		if (note)
			json_object_set_new(s, "note", json_string(note));
		is_error = true;
		break;
	}
	case SBX_ESC_APPROVED: {
		const char *kind = json_string_value(json_object_get(o->done, "kind"));

		if (kind && !strcmp(kind, "command")) {
			char *out = NULL;
			bool trunc = false;
			int code = -1;

			sbx_esc_command_result(m->project, o->done, &out, &trunc, &code);
			json_object_set_new(s, "status", json_string("executed"));
			json_object_set_new(s, "exit_code", json_integer(code));
			json_object_set_new(s, "output", json_string(out ? out : ""));
			json_object_set_new(s, "truncated", json_boolean(trunc));
			free(out);
		} else {
			json_object_set_new(s, "status", json_string("granted"));
		}
		break;
	}
	}
	(void)tool;
	r = tool_result(text, is_error, s);
	free(text);
	return r;
}

static void park(struct sbx_mcp *m, json_t *rpc_id, const char *req_id, enum tool tool,
		 int budget_ms, json_t *meta)
{
	struct parked *p;

	if (m->np == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 4;
		struct parked *v = realloc(m->p, cap * sizeof(*v));

		if (!v) {
			reply_error(m, rpc_id, -32603, "out of memory");
			return;
		}
		m->p = v;
		m->cap = cap;
	}
	p = &m->p[m->np];
	memset(p, 0, sizeof(*p));
	p->rpc_id = json_incref(rpc_id);
	p->req_id = strdup(req_id);
	p->tool = tool;
	p->deadline = now_ms() + budget_ms;
	p->next_progress = now_ms() + PROGRESS_MS;
	p->progress_token = json_incref(json_object_get(meta, "progressToken"));
	if (!p->req_id) {
		json_decref(p->rpc_id);
		json_decref(p->progress_token);
		reply_error(m, rpc_id, -32603, "out of memory");
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
static void wait_or_park(struct sbx_mcp *m, json_t *rpc_id, const char *req_id,
			 enum tool tool, int budget_ms, json_t *meta)
{
	struct sbx_esc_outcome o;
	char *err = NULL;

	if (sbx_esc_check(m->project, req_id, &o, &err) < 0) {
		reply_error(m, rpc_id, -32603, "request %s: %s", req_id, err ? err : "?");
		free(err);
		return;
	}
	if (budget_ms > 0 && !m->batch && !m->o.dry_run &&
	    (o.state == SBX_ESC_PENDING || o.state == SBX_ESC_CLAIMED)) {
		sbx_esc_outcome_clear(&o);
		park(m, rpc_id, req_id, tool, budget_ms, meta);
		return;
	}
	reply(m, rpc_id, outcome_result(m, tool, req_id, &o));
	sbx_esc_outcome_clear(&o);
}

int sbx_mcp_poll(struct sbx_mcp *m)
{
	int64_t now = now_ms(), next = -1;

	for (size_t k = 0; k < m->np;) {
		struct parked *p = &m->p[k];
		struct sbx_esc_outcome o;
		char *err = NULL;
		int rc = sbx_esc_check(m->project, p->req_id, &o, &err);

		if (rc < 0) {
			reply_error(m, p->rpc_id, -32603, "request %s: %s", p->req_id,
				    err ? err : "?");
			free(err);
			unpark(m, k);
			continue;
		}
		if (o.state == SBX_ESC_APPROVED || o.state == SBX_ESC_DENIED ||
		    o.state == SBX_ESC_UNKNOWN || now >= p->deadline) {
			reply(m, p->rpc_id, outcome_result(m, p->tool, p->req_id, &o));
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

/* ---- tools ------------------------------------------------------------------- */

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

/* Argument getters: false = the arguments do not fit the schema (-32602). */
static bool arg_str(json_t *args, const char *key, bool required, const char **out)
{
	json_t *v = json_object_get(args, key);

	*out = NULL;
	if (!v)
		return !required;
	if (!json_is_string(v) || json_string_length(v) != strlen(json_string_value(v)))
		return false;
	*out = json_string_value(v);
	return !required || **out;
}

static bool only_keys(json_t *args, const char *const *keys, const char **bad)
{
	const char *k;
	json_t *v;

	json_object_foreach(args, k, v) {
		bool ok = false;

		for (int i = 0; keys[i]; i++)
			ok = ok || !strcmp(k, keys[i]);
		if (!ok) {
			*bad = k;
			return false;
		}
	}
	return true;
}

static json_t *submitted_or_error(struct sbx_mcp *m, json_t *rpc_id, int rc, const char *id,
				  char *err, enum tool tool, json_t *meta)
{
	if (rc < 0) {
		char *t = sbx_asprintf("bpfsbx: the request could not be submitted: %s",
				       err ? err : strerror(-rc));
		json_t *r = tool_result(t, true, json_pack("{s:s}", "status", "error"));

		free(t);
		free(err);
		return r;
	}
	wait_or_park(m, rpc_id, id, tool, m->o.wait_ms, meta);
	return NULL;
}

static struct sbx_esc esc_of(struct sbx_mcp *m)
{
	struct sbx_esc e = { .project = m->project, .session = m->session, .origin = "mcp" };
	return e;
}

static json_t *run_privileged(struct sbx_mcp *m, json_t *rpc_id, json_t *args, json_t *meta)
{
	static const char *const keys[] = { "command", "cwd", "reason", NULL };
	const char *command, *cwd, *why, *bad;
	struct sbx_conn_policy *cp;
	struct sbx_conn_verdict v;
	struct sbx_esc e;
	json_t *r = NULL, *obj;
	char *id = NULL, *err = NULL;
	int rc;

	if (!only_keys(args, keys, &bad)) {
		reply_error(m, rpc_id, -32602, "run_privileged: unknown argument '%s'", bad);
		return NULL;
	}
	if (!arg_str(args, "command", true, &command) || !arg_str(args, "reason", true, &why) ||
	    !arg_str(args, "cwd", false, &cwd)) {
		reply_error(m, rpc_id, -32602, "run_privileged: 'command' and 'reason' must be "
			    "non-empty strings and 'cwd' a string");
		return NULL;
	}
	cp = policy(m, &r);
	if (!cp)
		return r;
	if (cwd && cwd[0] != '/') {
		policy_put(m, cp);
		return tool_result("bpfsbx: cwd must be an absolute path", true,
				   json_pack("{s:s}", "status", "error"));
	}
	if (!cwd)
		cwd = m->project;
	sbx_cv_init(&v);
	sbx_sh_classify(cp, command, cwd, &v);
	if (v.verdict == SBX_V_DENY) {
		char *t = sbx_asprintf("bpfsbx: the policy denies this command outright, so it is "
				       "not put to a person: %s%s%s%s. Do not retry; ask the user if "
				       "the policy should change.", v.reason ? v.reason : "",
				       v.what ? " [" : "", v.what ? v.what : "", v.what ? "]" : "");

		r = tool_result(t, true, json_pack("{s:s, s:s}", "status", "denied", "reason",
						   v.reason ? v.reason : ""));
		free(t);
		goto out;
	}
	if (m->o.dry_run) {
		r = tool_result("bpfsbx: escalation is off (dry run)", true,
				json_pack("{s:s}", "status", "error"));
		goto out;
	}
	obj = json_pack("{s:s, s:s}", "command", command, "cwd", cwd);
	e = esc_of(m);
	rc = obj ? sbx_esc_submit(&e, "command", obj, v.verdict >= SBX_V_ASK ? v.rule : NULL,
				  why, &id, &err) : -ENOMEM;
	json_decref(obj);
	r = submitted_or_error(m, rpc_id, rc, id, err, T_RUN, meta);
out:
	free(id);
	sbx_cv_clear(&v);
	policy_put(m, cp);
	return r;
}

static json_t *request_access(struct sbx_mcp *m, json_t *rpc_id, json_t *args, json_t *meta)
{
	static const char *const keys[] = { "path", "access", "host", "port", "reason", NULL };
	const char *path, *access, *host, *why, *bad;
	struct sbx_conn_policy *cp;
	struct sbx_conn_verdict v;
	struct sbx_esc e;
	json_t *r = NULL, *obj = NULL, *jport = json_object_get(args, "port");
	char *id = NULL, *err = NULL, *abs = NULL, *h = NULL;
	int acc = SBX_ACC_READ, port = 443, rc;

	if (!only_keys(args, keys, &bad)) {
		reply_error(m, rpc_id, -32602, "request_access: unknown argument '%s'", bad);
		return NULL;
	}
	if (!arg_str(args, "path", false, &path) || !arg_str(args, "access", false, &access) ||
	    !arg_str(args, "host", false, &host) || !arg_str(args, "reason", true, &why) ||
	    (jport && (!json_is_integer(jport) || json_integer_value(jport) < 1 ||
		       json_integer_value(jport) > 65535)) ||
	    (!path == !host) || (access && host) || (jport && path) ||
	    (path && !*path) || (host && !*host)) {
		reply_error(m, rpc_id, -32602, "request_access: give either 'path' (with optional "
			    "'access' read|write|exec) or 'host' (with optional 'port' 1-65535), "
			    "and a non-empty 'reason'");
		return NULL;
	}
	if (access) {
		acc = !strcmp(access, "read") ? SBX_ACC_READ : !strcmp(access, "write") ? SBX_ACC_WRITE
		      : !strcmp(access, "exec") ? SBX_ACC_EXEC : -1;
		if (acc < 0) {
			reply_error(m, rpc_id, -32602, "request_access: 'access' must be read, write "
				    "or exec");
			return NULL;
		}
	}
	if (jport)
		port = (int)json_integer_value(jport);
	cp = policy(m, &r);
	if (!cp)
		return r;
	sbx_cv_init(&v);
	if (path) {
		char *t = NULL;

		if (path[0] == '~' && (path[1] == '/' || !path[1]))
			t = sbx_asprintf("%s%s", cp->home, path + 1);
		abs = sbx_sh_resolve(t ? t : path, m->project, cp->home);
		free(t);
		if (!abs) {
			r = tool_result("bpfsbx: the path cannot be resolved", true,
					json_pack("{s:s}", "status", "error"));
			goto out;
		}
		sbx_conn_decide_path(cp, abs, acc, &v);
	} else {
		int p2 = port;

		if (sbx_conn_parse_url(host, port, &h, &p2) < 0) {
			r = tool_result("bpfsbx: the host cannot be parsed", true,
					json_pack("{s:s}", "status", "error"));
			goto out;
		}
		if (!jport)
			port = p2;
		sbx_conn_decide_host(cp, h, port, &v);
	}
	if (v.verdict == SBX_V_DENY) {
		char *t = sbx_asprintf("bpfsbx: the policy denies %s outright: %s. A person would "
				       "have to change .sandbox/policy.yaml; do not retry.",
				       v.what ? v.what : "this", v.reason ? v.reason : "");

		r = tool_result(t, true, json_pack("{s:s, s:s}", "status", "denied", "reason",
						   v.reason ? v.reason : ""));
		free(t);
		goto out;
	}
	if (v.verdict != SBX_V_ASK ||
	    sbx_esc_granted(m->project, m->session, abs, acc, h, port)) {
		char *t = sbx_asprintf("bpfsbx: %s is already allowed%s; no request is needed.",
				       v.what ? v.what : "this",
				       v.verdict == SBX_V_ASK ? " by a person's earlier approval"
							      : " by the policy");

		r = tool_result(t, false, json_pack("{s:s}", "status", "allowed"));
		free(t);
		goto out;
	}
	if (m->o.dry_run) {
		r = tool_result("bpfsbx: escalation is off (dry run)", true,
				json_pack("{s:s}", "status", "error"));
		goto out;
	}
	obj = abs ? json_pack("{s:s, s:s}", "path", abs, "access", sbx_access_name(acc))
		  : json_pack("{s:s, s:i}", "host", h, "port", port);
	e = esc_of(m);
	rc = obj ? sbx_esc_submit(&e, "access", obj, v.rule, why, &id, &err) : -ENOMEM;
	r = submitted_or_error(m, rpc_id, rc, id, err, T_ACCESS, meta);
out:
	json_decref(obj);
	free(id);
	free(abs);
	free(h);
	sbx_cv_clear(&v);
	policy_put(m, cp);
	return r;
}

static json_t *check_request(struct sbx_mcp *m, json_t *rpc_id, json_t *args, json_t *meta)
{
	static const char *const keys[] = { "id", "wait_seconds", NULL };
	json_t *ws = json_object_get(args, "wait_seconds");
	const char *id, *bad;

	if (!only_keys(args, keys, &bad)) {
		reply_error(m, rpc_id, -32602, "check_request: unknown argument '%s'", bad);
		return NULL;
	}
	if (!arg_str(args, "id", true, &id) ||
	    (ws && (!json_is_integer(ws) || json_integer_value(ws) < 0 ||
		    json_integer_value(ws) > SBX_MCP_WAIT_MAX_MS / 1000))) {
		reply_error(m, rpc_id, -32602, "check_request: 'id' must be a request id string "
			    "and 'wait_seconds' an integer from 0 to %d", SBX_MCP_WAIT_MAX_MS / 1000);
		return NULL;
	}
	if (!project(m))
		return no_project(m);
	if (!sbx_id_valid(id)) {
		char *t = sbx_asprintf("bpfsbx: \"%s\" is not a request id", id);
		json_t *r = tool_result(t, true, json_pack("{s:s}", "status", "not_found"));

		free(t);
		return r;
	}
	wait_or_park(m, rpc_id, id, T_CHECK, ws ? (int)json_integer_value(ws) * 1000 : 0, meta);
	return NULL;
}

static void list_requests(struct sbx_mcp *m, FILE *f)
{
	struct sbx_queue *q = sbx_queue_open(m->project, 0, (uid_t)-1, (gid_t)-1, NULL);
	const char *subs[] = { "pending", "claimed" };
	json_t *arr, *rec;
	size_t i, shown = 0;

	if (!q) {
		fprintf(f, "Requests: none (no queue yet).\n");
		return;
	}
	fprintf(f, "Requests waiting for a person:\n");
	for (int s = 0; s < 2; s++) {
		arr = NULL;
		if (sbx_queue_list(q, subs[s], &arr, NULL) < 0 || !arr)
			continue;
		json_array_foreach(arr, i, rec) {
			const json_t *o = json_object_get(rec, "object");
			const char *what = json_string_value(json_object_get(o, "command"));

			if (!what)
				what = json_string_value(json_object_get(o, "path"));
			if (!what)
				what = json_string_value(json_object_get(o, "host"));
			if (!what)
				what = json_string_value(json_object_get(o, "addr"));
			fprintf(f, "- %s %s (%s): %s\n",
				json_string_value(json_object_get(rec, "id")), subs[s],
				json_string_value(json_object_get(rec, "kind")), what ? what : "?");
			shown++;
		}
		json_decref(arr);
	}
	if (!shown)
		fprintf(f, "- none\n");
	arr = NULL;
	if (sbx_queue_list(q, "done", &arr, NULL) == 0 && arr) {
		size_t n = json_array_size(arr), from = n > 50 ? n - 50 : 0, cnt = 0;

		fprintf(f, "Recent denials:\n");
		for (i = n; i-- > from && cnt < 5;) {
			rec = json_array_get(arr, i);
			const json_t *d = json_object_get(rec, "decision");
			const char *v = json_string_value(json_object_get(d, "verdict"));

			if (!v || strcmp(v, "deny"))
				continue;
			const char *note = json_string_value(json_object_get(d, "note"));
			fprintf(f, "- %s (%s)%s%s\n", json_string_value(json_object_get(rec, "id")),
				json_string_value(json_object_get(rec, "kind")),
				note ? ": " : "", note ? note : "");
			cnt++;
		}
		if (!cnt)
			fprintf(f, "- none\n");
	}
	json_decref(arr);
	sbx_queue_close(q);
}

static json_t *sandbox_status(struct sbx_mcp *m, json_t *rpc_id, json_t *args)
{
	struct sbx_conn_policy *cp;
	json_t *r = NULL;
	char *name = NULL, *buf = NULL, *sum;
	size_t len = 0;
	bool in = sbx_in_session(&name);
	FILE *f;

	if (json_object_size(args)) {
		reply_error(m, rpc_id, -32602, "sandbox_status takes no arguments");
		free(name);
		return NULL;
	}
	cp = policy(m, &r);
	if (!cp) {
		free(name);
		return r;
	}
	f = open_memstream(&buf, &len);
	if (!f) {
		policy_put(m, cp);
		free(name);
		return tool_result("bpfsbx: out of memory", true, NULL);
	}
	fprintf(f, "Project: %s\n", m->project);
	if (in)
		fprintf(f, "Session: %s (kernel-confined: file opens, execs and connects of this "
			"agent are checked by BPF-LSM)\n", name);
	else
		fprintf(f, "Session: none (this process is not in a kernel-confined session; only "
			"the agent's hooks check its tool calls)\n");
	sum = sbx_conn_policy_summary(cp, 40);
	fputs(sum ? sum : "", f);
	free(sum);
	list_requests(m, f);
	fprintf(f, "Tools: request_access (files, hosts), run_privileged (commands), "
		"check_request (outcome of a request).\n");
	fclose(f);
	r = tool_result(buf, false, json_pack("{s:s, s:b, s:s?}", "project", m->project,
					      "in_session", in, "session", name));
	free(buf);
	free(name);
	policy_put(m, cp);
	return r;
}

static void tools_call(struct sbx_mcp *m, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	json_t *meta = json_object_get(params, "_meta");
	json_t *r = NULL;

	if (!name) {
		reply_error(m, id, -32602, "tools/call: params.name must be a string");
		return;
	}
	if (args && !json_is_object(args)) {
		reply_error(m, id, -32602, "tools/call: params.arguments must be an object");
		return;
	}
	if (!args)
		args = json_object();
	else
		json_incref(args);
	if (!strcmp(name, "run_privileged"))
		r = run_privileged(m, id, args, meta);
	else if (!strcmp(name, "request_access"))
		r = request_access(m, id, args, meta);
	else if (!strcmp(name, "check_request"))
		r = check_request(m, id, args, meta);
	else if (!strcmp(name, "sandbox_status"))
		r = sandbox_status(m, id, args);
	else
		reply_error(m, id, -32602, "Unknown tool: %s", name);
	json_decref(args);
	if (r)
		reply(m, id, r);
}

/* ---- JSON-RPC ------------------------------------------------------------------ */

static void initialize(struct sbx_mcp *m, json_t *id, json_t *params)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	json_t *res;

	if (m->initialized) {
		reply_error(m, id, -32600, "already initialized");
		return;
	}
	if (!want) {
		reply_error(m, id, -32602, "initialize: params.protocolVersion must be a string");
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
	reply(m, id, res);
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
		reply_error(m, NULL, -32600, "Invalid Request: not a JSON object");
		return;
	}
	id = json_object_get(msg, "id");
	if (id && !json_is_string(id) && !json_is_integer(id) && !json_is_real(id)) {
		reply_error(m, NULL, -32600, "Invalid Request: id must be a string or a number");
		return;
	}
	jsonrpc = json_string_value(json_object_get(msg, "jsonrpc"));
	method = json_string_value(json_object_get(msg, "method"));
	if (!jsonrpc || strcmp(jsonrpc, "2.0")) {
		reply_error(m, id, -32600, "Invalid Request: jsonrpc must be \"2.0\"");
		return;
	}
	if (!json_object_get(msg, "method")) {
		if (id && (json_object_get(msg, "result") || json_object_get(msg, "error")))
			return;	/* a response: we send no requests, so nothing to match */
		reply_error(m, id, -32600, "Invalid Request: no method");
		return;
	}
	if (!method) {
		reply_error(m, id, -32600, "Invalid Request: method must be a string");
		return;
	}
	params = json_object_get(msg, "params");
	if (params && !json_is_object(params)) {
		if (id)
			reply_error(m, id, json_is_array(params) ? -32602 : -32600,
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
			reply_error(m, id, -32600, "initialize must not be part of a batch");
			return;
		}
		initialize(m, id, params);
	} else if (!strcmp(method, "ping")) {
		reply(m, id, json_object());
	} else if (!m->initialized) {
		reply_error(m, id, -32600, "the server is not initialized: send initialize first");
	} else if (!strcmp(method, "tools/list")) {
		reply(m, id, tools_list(m));
	} else if (!strcmp(method, "tools/call")) {
		if (!params)
			reply_error(m, id, -32602, "tools/call needs params");
		else
			tools_call(m, id, params);
	} else {
		reply_error(m, id, -32601, "Method not found: %s", method);
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
		reply_error(m, NULL, -32700, "Parse error: %s (column %d)", jerr.text, jerr.column);
		return;
	}
	if (!json_is_array(msg)) {
		handle_msg(m, msg);
		json_decref(msg);
		return;
	}
	/* JSON-RPC batches: part of MCP 2025-03-26 only (2025-06-18 removed them) */
	if (!m->initialized || strcmp(m->version, "2025-03-26")) {
		reply_error(m, NULL, -32600, "Invalid Request: batches are not supported in "
			    "protocol version %s", m->version ? m->version : "(not initialized)");
	} else if (json_array_size(msg) == 0) {
		reply_error(m, NULL, -32600, "Invalid Request: empty batch");
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
	reply_error(m, NULL, -32600, "Invalid Request: message longer than %u bytes",
		    SBX_MCP_MAX_MSG);
}

struct sbx_mcp *sbx_mcp_new(const struct sbx_mcp_opts *o)
{
	struct sbx_mcp *m = calloc(1, sizeof(*m));
	char *name = NULL, pid[32];

	if (!m)
		return NULL;
	m->o = *o;
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

/* ---- the subcommand: stdio ------------------------------------------------------ */

static void emit_stdout(void *ctx, const char *json)
{
	(void)ctx;
	if (fputs(json, stdout) == EOF || fputc('\n', stdout) == EOF || fflush(stdout) == EOF) {
		fprintf(stderr, "bpfsbx mcp: stdout closed; exiting\n");
		exit(0);
	}
}

static int cmd_mcp(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "project", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sbx_mcp_opts o = { .emit = emit_stdout };
	struct sbx_mcp *m;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	bool discarding = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o.project = optarg;
			break;
		case 'h':
			printf("usage: bpfsbx mcp [--project DIR]\n"
			       "A stdio MCP server with the tools run_privileged, request_access,\n"
			       "check_request and sandbox_status. Registered by `bpfsbx init --mcp`.\n"
			       "Environment: BPFSBX_MCP_WAIT_MS (default %d, at most %d): how long one\n"
			       "call waits for a person before it returns \"pending\".\n",
			       SBX_MCP_WAIT_MS, SBX_MCP_WAIT_MAX_MS);
			return 0;
		default:
			return SBX_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bpfsbx mcp: unexpected argument '%s'\n", argv[optind]);
		return SBX_EXIT_USAGE;
	}
	if (o.project && access(o.project, F_OK) < 0)
		fprintf(stderr, "bpfsbx mcp: warning: --project %s: %s\n", o.project, strerror(errno));
	o.wait_ms = sbx_env_ms("BPFSBX_MCP_WAIT_MS", SBX_MCP_WAIT_MS, SBX_MCP_WAIT_MAX_MS);
	/* a lost DNS packet must not stall a tool call for glibc's 5 s default */
	setenv("RES_OPTIONS", "timeout:2 attempts:2", 0);
	signal(SIGPIPE, SIG_IGN);
	m = sbx_mcp_new(&o);
	if (!m) {
		fprintf(stderr, "bpfsbx mcp: out of memory\n");
		return SBX_EXIT_FAIL;
	}
	for (;;) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };
		int timeout = sbx_mcp_poll(m);
		ssize_t n;

		if (poll(&pfd, 1, timeout) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "bpfsbx mcp: poll: %s\n", strerror(errno));
			break;
		}
		if (!pfd.revents)
			continue;
		if (cap - len < 65536) {
			size_t ncap = cap ? cap * 2 : 131072;
			char *nb = realloc(buf, ncap);

			if (!nb) {
				fprintf(stderr, "bpfsbx mcp: out of memory\n");
				break;
			}
			buf = nb;
			cap = ncap;
		}
		n = read(0, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* stdin closed: the client is gone */
		len += n;
		for (;;) {
			char *nl = memchr(buf, '\n', len);
			size_t ll;

			if (!nl) {
				if (discarding) {
					len = 0;
				} else if (len > SBX_MCP_MAX_MSG) {
					if (!discarding)
						sbx_mcp_oversized(m);
					discarding = true;
					len = 0;
				}
				break;
			}
			ll = nl - buf;
			if (discarding) {
				discarding = false;
			} else {
				size_t l2 = ll;

				if (l2 && buf[l2 - 1] == '\r')
					l2--;
				size_t s = 0;
				while (s < l2 && (buf[s] == ' ' || buf[s] == '\t'))
					s++;
				if (l2 - s > SBX_MCP_MAX_MSG)
					sbx_mcp_oversized(m);
				else if (s < l2)
					sbx_mcp_handle(m, buf + s, l2 - s);
			}
			memmove(buf, nl + 1, len - ll - 1);
			len -= ll + 1;
		}
		/* do not let the buffer stay huge after one big message */
		if (cap > (1u << 20) && len < 65536) {
			char *nb = realloc(buf, 131072);
			if (nb) {
				buf = nb;
				cap = 131072;
			}
		}
	}
	free(buf);
	sbx_mcp_free(m);
	return 0;
}

SBX_COMMAND(mcp, "mcp", "[--project DIR]",
	    "stdio MCP server: run_privileged, request_access, check_request, sandbox_status",
	    cmd_mcp);
