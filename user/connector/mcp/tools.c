// SPDX-License-Identifier: GPL-2.0
/*
 * The MCP server's tools. run_privileged and request_access ask the
 * policy first, and what it denies is never put to a person. A command
 * always goes to a person (it would run outside the sandbox); an access
 * only when the policy asks about it and no earlier approval covers it.
 * check_request reads where a request stands; sandbox_status tells the
 * model what confines it. Arguments that do not fit a tool's schema are
 * JSON-RPC errors (-32602); everything else, refusals included, is a tool
 * result that the model reads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "lib/project.h"
#include "policy/policy.h"
#include "queue/queue.h"
#include "queue/request.h"
#include "user/connector/classify/classify.h"
#include "user/connector/conn_policy.h"
#include "user/connector/escalate.h"
#include "user/connector/mcp/tools.h"
#include "user/connector/shell/shell.h"
#include "user/control/control_client.h"
#include "lib/alloc.h"
#include "lib/json.h"

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
		const char *env = getenv("CLAUDE_PROJECT_DIR");

		/* as the hook finds it: Claude Code's project, else the cwd's */
		if (m->o.project)
			m->project = realpath(m->o.project, NULL);
		else if (env && env[0] == '/' && sbx_project_find(env, &m->project) == 0)
			;
		else if (cwd)
			sbx_project_find(cwd, &m->project);
		free(cwd);
	}
	return m->project;
}

static json_t *no_project(struct sbx_mcp *m)
{
	char *t = sbx_asprintf("bpfsbx: no project: %s. Start the server with `bpfsbx mcp "
			       "--project DIR` on a folder set up with `bpfsbx init`.",
			       m->o.project ? "the --project folder does not exist"
					    : "no .sandbox/ in the working directory or above it");
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

json_t *mcp_outcome_result(struct sbx_mcp *m, enum tool tool, const char *id,
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
		const char *note = sbx_json_str(d, "note");

		json_object_set_new(s, "status", json_string(
			json_is_true(json_object_get(d, "expired")) ? "expired" : "denied"));
		if (note)
			json_object_set_new(s, "note", json_string(note));
		is_error = true;
		break;
	}
	case SBX_ESC_APPROVED: {
		if (sbx_request_kind(o->done) == SBX_REQ_COMMAND) {
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

/* ---- the tools ---------------------------------------------------------------- */

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
	m->answer->wait_or_park(m, rpc_id, id, tool, m->o.wait_ms, meta);
	return NULL;
}

static struct sbx_esc esc_of(struct sbx_mcp *m)
{
	struct sbx_esc e = { .project = m->project, .session = m->session, .origin = "mcp" };
	return e;
}

void mcp_audit(struct sbx_mcp *m, enum tool tool, json_t *input, const char *decision,
	       const char *reason, const struct sbx_req_rule *rule, const char *id,
	       const struct sbx_esc_outcome *out)
{
	static const char *const names[] = { "run_privileged", "request_access", "check_request",
					     "sandbox_status" };
	struct sbx_esc e = esc_of(m);
	char *err = NULL;

	if (m->o.dry_run)
		return;
	if (sbx_esc_audit_decision(&e, "mcp", names[tool], input, decision, reason, rule, id, out,
				   &err) < 0)
		fprintf(stderr, "bpfsbx mcp: audit record not written: %s\n", err ? err : "?");
	free(err);
}

static json_t *run_privileged(struct sbx_mcp *m, json_t *rpc_id, json_t *args, json_t *meta)
{
	static const char *const keys[] = { "command", "cwd", "reason", NULL };
	const char *command, *cwd, *why, *bad;
	struct sbx_conn_policy *cp;
	struct sbx_conn_verdict v;
	struct sbx_request ask;
	struct sbx_esc e;
	json_t *r = NULL, *obj;
	char *id = NULL, *err = NULL;
	int rc;

	if (!only_keys(args, keys, &bad)) {
		m->answer->error(m, rpc_id, -32602, "run_privileged: unknown argument '%s'", bad);
		return NULL;
	}
	if (!arg_str(args, "command", true, &command) || !arg_str(args, "reason", true, &why) ||
	    !arg_str(args, "cwd", false, &cwd)) {
		m->answer->error(m, rpc_id, -32602, "run_privileged: 'command' and 'reason' must be "
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
		obj = json_pack("{s:s, s:s}", "command", command, "cwd", cwd);
		mcp_audit(m, T_RUN, obj, "deny", v.reason, &v.rule, NULL, NULL);
		json_decref(obj);
		goto out;
	}
	if (m->o.dry_run) {
		r = tool_result("bpfsbx: escalation is off (dry run)", true,
				json_pack("{s:s}", "status", "error"));
		goto out;
	}
	sbx_request_init(&ask, SBX_REQ_COMMAND);
	ask.command = command;
	ask.cwd = cwd;
	ask.agent_reason = why;
	if (v.verdict >= SBX_V_ASK)
		ask.rule = v.rule;
	e = esc_of(m);
	rc = sbx_esc_submit(&e, &ask, &id, &err);
	obj = json_pack("{s:s, s:s}", "command", command, "cwd", cwd);
	if (rc == 0)
		mcp_audit(m, T_RUN, obj, "ask", v.reason, &v.rule, id, NULL);
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
	struct sbx_request ask;
	struct sbx_esc e;
	json_t *r = NULL, *obj = NULL, *jport = json_object_get(args, "port");
	char *id = NULL, *err = NULL, *abs = NULL, *h = NULL;
	int acc = SBX_ACC_READ, port = 443, rc;

	if (!only_keys(args, keys, &bad)) {
		m->answer->error(m, rpc_id, -32602, "request_access: unknown argument '%s'", bad);
		return NULL;
	}
	if (!arg_str(args, "path", false, &path) || !arg_str(args, "access", false, &access) ||
	    !arg_str(args, "host", false, &host) || !arg_str(args, "reason", true, &why) ||
	    (jport && (!json_is_integer(jport) || json_integer_value(jport) < 1 ||
		       json_integer_value(jport) > 65535)) ||
	    (!path == !host) || (access && host) || (jport && path) ||
	    (path && !*path) || (host && !*host)) {
		m->answer->error(m, rpc_id, -32602,
				"request_access: give either 'path' (with optional "
				"'access' read|write|exec) or 'host' (with optional 'port' 1-65535), "
				"and a non-empty 'reason'");
		return NULL;
	}
	if (access) {
		acc = !strcmp(access, "read") ? SBX_ACC_READ : !strcmp(access, "write") ? SBX_ACC_WRITE
		      : !strcmp(access, "exec") ? SBX_ACC_EXEC : -1;
		if (acc < 0) {
			m->answer->error(m, rpc_id, -32602,
					"request_access: 'access' must be read, write "
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
		obj = abs ? json_pack("{s:s, s:s}", "path", abs, "access", sbx_access_name(acc))
			  : json_pack("{s:s, s:i}", "host", h, "port", port);
		mcp_audit(m, T_ACCESS, obj, "deny", v.reason, &v.rule, NULL, NULL);
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
	sbx_request_init(&ask, abs ? SBX_REQ_ACCESS_PATH : SBX_REQ_ACCESS_HOST);
	ask.path = abs;
	ask.access = acc;
	ask.host = h;
	ask.port = port;
	ask.has_port = !abs;
	ask.agent_reason = why;
	ask.rule = v.rule;
	e = esc_of(m);
	rc = sbx_esc_submit(&e, &ask, &id, &err);
	obj = abs ? json_pack("{s:s, s:s}", "path", abs, "access", sbx_access_name(acc))
		  : json_pack("{s:s, s:i}", "host", h, "port", port);
	if (rc == 0)
		mcp_audit(m, T_ACCESS, obj, "ask", v.reason, &v.rule, id, NULL);
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
		m->answer->error(m, rpc_id, -32602, "check_request: unknown argument '%s'", bad);
		return NULL;
	}
	if (!arg_str(args, "id", true, &id) ||
	    (ws && (!json_is_integer(ws) || json_integer_value(ws) < 0 ||
		    json_integer_value(ws) > SBX_MCP_WAIT_MAX_MS / 1000))) {
		m->answer->error(m, rpc_id, -32602,
				"check_request: 'id' must be a request id string "
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
	m->answer->wait_or_park(m, rpc_id, id, T_CHECK, ws ? (int)json_integer_value(ws) * 1000 : 0, meta);
	return NULL;
}

static void list_requests(struct sbx_mcp *m, FILE *f)
{
	struct sbx_queue *q = sbx_queue_open(m->project, 0, (uid_t)-1, (gid_t)-1, NULL);
	const enum sbx_qdir subs[] = { SBX_QDIR_PENDING, SBX_QDIR_CLAIMED };
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
			const char *what = sbx_json_str(o, "command");

			if (!what)
				what = sbx_json_str(o, "path");
			if (!what)
				what = sbx_json_str(o, "host");
			if (!what)
				what = sbx_json_str(o, "addr");
			fprintf(f, "- %s %s (%s): %s\n",
				sbx_json_str(rec, "id"), sbx_qdir_name(subs[s]),
				sbx_json_str(rec, "kind"), what ? what : "?");
			shown++;
		}
		json_decref(arr);
	}
	if (!shown)
		fprintf(f, "- none\n");
	arr = NULL;
	if (sbx_queue_list(q, SBX_QDIR_DONE, &arr, NULL) == 0 && arr) {
		size_t n = json_array_size(arr), from = n > 50 ? n - 50 : 0, cnt = 0;

		fprintf(f, "Recent denials:\n");
		for (i = n; i-- > from && cnt < 5;) {
			rec = json_array_get(arr, i);
			const json_t *d = json_object_get(rec, "decision");
			const char *v = sbx_json_str(d, "verdict");

			if (!v || strcmp(v, "deny"))
				continue;
			const char *note = sbx_json_str(d, "note");
			fprintf(f, "- %s (%s)%s%s\n", sbx_json_str(rec, "id"),
				sbx_json_str(rec, "kind"),
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
		m->answer->error(m, rpc_id, -32602, "sandbox_status takes no arguments");
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
		fprintf(f, "Mode: kernel-enforced (session %s: file opens, execs and connects of "
			"this agent are checked by BPF-LSM)\n", name);
	else
		fprintf(f, "Mode: hooks only: commands are classified, nothing is enforced by the "
			"kernel (this process is not in a kernel-confined session)\n");
	sum = sbx_conn_policy_summary(cp, 80);
	fputs(sum ? sum : "", f);
	free(sum);
	list_requests(m, f);
	{
		/* the hooks' and this server's denials, not only the kernel's */
		char *den = sbx_esc_recent_denials(m->project, 5);

		if (den)
			fprintf(f, "Recent denials by the connectors (hooks, MCP):\n%s", den);
		free(den);
	}
	fprintf(f, "Tools: request_access (files, hosts), run_privileged (commands), "
		"check_request (outcome of a request).\n");
	fclose(f);
	r = tool_result(buf, false, json_pack("{s:s, s:b, s:s?, s:s}", "project", m->project,
					      "in_session", in, "session", name, "mode",
					      in ? "kernel-enforced" : "hooks only"));
	free(buf);
	free(name);
	policy_put(m, cp);
	return r;
}

void mcp_tools_call(struct sbx_mcp *m, json_t *id, json_t *params)
{
	const char *name = sbx_json_str(params, "name");
	json_t *args = json_object_get(params, "arguments");
	json_t *meta = json_object_get(params, "_meta");
	json_t *r = NULL;

	if (!name) {
		m->answer->error(m, id, -32602, "tools/call: params.name must be a string");
		return;
	}
	if (args && !json_is_object(args)) {
		m->answer->error(m, id, -32602, "tools/call: params.arguments must be an object");
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
		m->answer->error(m, id, -32602, "Unknown tool: %s", name);
	json_decref(args);
	if (r)
		m->answer->reply(m, id, r);
}
