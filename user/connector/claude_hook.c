// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx hook pre-tool-use | post-tool-use | session-start
 *
 * The Claude Code hook protocol (https://code.claude.com/docs/en/hooks):
 * one JSON object on stdin; exit 0 with one JSON object on stdout, or
 * exit 2 with a message on stderr, which blocks the tool call. Any other
 * exit (1, a crash, a timeout) lets the call through, so every failure
 * here ends in exit 2: a hook fails closed.
 *
 * PreToolUse: the tool call is checked against the project's policy.
 *   allow/audit -> no decision (Claude Code's own permission prompts
 *                  stay in charge; "allow" would skip them)
 *   deny        -> permissionDecision "deny" with the rule's reason
 *   ask         -> a request to a person; we wait (BPFSBX_HOOK_WAIT_MS)
 *                  and answer "deny" with the outcome in the reason: an
 *                  approved Bash command has been run by the approver
 *                  outside the sandbox and its output is the answer; an
 *                  approved file or network access is a grant, and the
 *                  retried tool call is allowed by the same check.
 * PostToolUse: an audit record; never blocks.
 * SessionStart: context for the model (what is confined, how to ask).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "lib/project.h"
#include "policy/policy.h"
#include "user/connector/escalate.h"
#include "user/connector/claude_hook.h"
#include "user/connector/conn_policy.h"
#include "user/connector/classify/classify.h"
#include "user/connector/shell/shell.h"
#include "user/control/control_client.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "lib/json.h"

/* What is confined, how to ask, where the policy is: the reasons and their
 * citations stay in the policy file, so the context stays short */
#define CONTEXT_CAP 2000

enum hook_event { EV_PRE, EV_POST, EV_START };

static const struct {
	const char *arg, *name;
	enum hook_event ev;
} events[] = {
	{ "pre-tool-use", "PreToolUse", EV_PRE },
	{ "post-tool-use", "PostToolUse", EV_POST },
	{ "session-start", "SessionStart", EV_START },
};

struct hook {
	const struct sbx_hook_opts *o;
	struct sbx_hook_result *r;
	enum hook_event ev;
	const char *event_name;
	json_t *in;
	const char *cwd;
	const char *session_id;
	char *project;
	char *session;		/* queue/audit session name */
	struct sbx_conn_policy *cp;
};

static int block(struct hook *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int block(struct hook *h, const char *fmt, ...)
{
	va_list ap;
	char *m = NULL;

	va_start(ap, fmt);
	m = sbx_vformat(fmt, ap);
	va_end(ap);
	free(h->r->out);
	h->r->out = NULL;
	free(h->r->err);
	h->r->err = sbx_asprintf("bpfsbx: %s\n", m ? m : "internal error (fail closed)");
	free(m);
	h->r->exit_code = 2;
	return 2;
}

/* Exit 0 with hookSpecificOutput for our event (and extra fields). */
static int answer(struct hook *h, json_t *specific)
{
	json_t *o = json_object();
	char *txt;

	json_t *hso = json_pack("{s:s}", "hookEventName", h->event_name);

	if (!o || !hso) {
		json_decref(o);
		json_decref(hso);
		json_decref(specific);
		return block(h, "out of memory");
	}
	if (specific)
		json_object_update(hso, specific);
	json_decref(specific);
	json_object_set_new(o, "hookSpecificOutput", hso);
	txt = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!txt)
		return block(h, "could not encode the answer");
	h->r->out = sbx_asprintf("%s\n", txt);
	free(txt);
	h->r->exit_code = 0;
	return 0;
}

static int decide(struct hook *h, const char *decision, const char *reason)
{
	json_t *s = json_pack("{s:s, s:s}", "permissionDecision", decision,
			      "permissionDecisionReason", reason);

	if (!s)
		return block(h, "out of memory");
	return answer(h, s);
}

static int find_project(struct hook *h)
{
	const char *env = getenv("CLAUDE_PROJECT_DIR");

	if (h->o->project) {
		h->project = realpath(h->o->project, NULL);
		return h->project ? 0 : -ENOENT;
	}
	if (env && *env && sbx_project_find(env, &h->project) == 0)
		return 0;
	return sbx_project_find(h->cwd, &h->project);
}

static int load_policy(struct hook *h)
{
	char *err = NULL;

	if (h->o->policy && h->o->project) {
		h->project = strdup(h->o->project);
		h->cp = h->o->policy;
		return h->project ? 0 : block(h, "out of memory");
	}

	if (find_project(h) < 0)
		return block(h, "no .sandbox/ found from %s upward (nor in $CLAUDE_PROJECT_DIR). The bpfsbx "
			     "hooks are installed but the project has no policy, so every tool call "
			     "is blocked. Run `bpfsbx init` in the project, or remove the hooks with "
			     "`bpfsbx uninstall`.", h->cwd);
	{
		char *pf = sbx_asprintf("%s/%s", h->project, SBX_POLICY_FILE);
		bool missing = access(pf, F_OK) < 0 && errno == ENOENT;

		free(pf);
		if (missing)
			return block(h, "no %s in the project %s, so every tool call is blocked. "
				     "Run `bpfsbx init` there, or remove the hooks with "
				     "`bpfsbx uninstall`.", SBX_POLICY_FILE, h->project);
	}
	if (sbx_conn_policy_load(h->project, &h->cp, &err) < 0) {
		block(h, "%s", err ? err : "the policy could not be loaded");
		free(err);
		return 2;
	}
	return 0;
}

/* ---- PreToolUse --------------------------------------------------------- */

static char *abs_path(struct hook *h, const char *p)
{
	if (p[0] == '~' && (p[1] == '/' || !p[1])) {
		char *t = sbx_asprintf("%s%s", h->cp->home, p + 1), *r;

		r = sbx_sh_resolve(t, h->cwd, h->cp->home);
		free(t);
		return r;
	}
	return sbx_sh_resolve(p, h->cwd, h->cp->home);
}

/* The tool's verdict; 2 when the input is malformed (already blocked). */
static int tool_verdict(struct hook *h, const char *tool, json_t *input,
			struct sbx_conn_verdict *v, bool *is_command)
{
	static const struct { const char *tool, *field; enum sbx_access acc; bool optional; } ft[] = {
		{ "Read", "file_path", SBX_ACC_READ, false },
		{ "Write", "file_path", SBX_ACC_WRITE, false },
		{ "Edit", "file_path", SBX_ACC_WRITE, false },
		{ "MultiEdit", "file_path", SBX_ACC_WRITE, false },
		{ "NotebookEdit", "notebook_path", SBX_ACC_WRITE, false },
		{ "NotebookRead", "notebook_path", SBX_ACC_READ, false },
		{ "Grep", "path", SBX_ACC_READ, true },
		{ "Glob", "path", SBX_ACC_READ, true },
		{ "LS", "path", SBX_ACC_READ, false },
	};

	*is_command = false;
	if (!strcmp(tool, "Bash")) {
		const char *cmd = sbx_json_str(input, "command");

		if (!cmd)
			return block(h, "Bash tool_input.command is missing or not a string");
		*is_command = true;
		sbx_sh_classify(h->cp, cmd, h->cwd, v);
		return 0;
	}
	for (size_t k = 0; k < sizeof(ft) / sizeof(ft[0]); k++) {
		json_t *jp;
		const char *p;
		char *abs;

		if (strcmp(tool, ft[k].tool))
			continue;
		jp = json_object_get(input, ft[k].field);
		if (!jp && ft[k].optional) {
			p = ".";
		} else if (!json_is_string(jp) || !*(p = json_string_value(jp))) {
			return block(h, "%s tool_input.%s is missing or not a string", tool,
				     ft[k].field);
		}
		abs = abs_path(h, p);
		if (!abs)
			return block(h, "%s: cannot resolve %s", tool, p);
		sbx_conn_decide_path(h->cp, abs, ft[k].acc, v);
		free(abs);
		/* an absolute Glob pattern reaches wherever it points: check the
		 * directory before its first wildcard too */
		const char *pat = !strcmp(tool, "Glob") ? sbx_json_str(input, "pattern") : NULL;
		if (pat && (pat[0] == '/' || pat[0] == '~')) {
			size_t lit = strcspn(pat, "*?[{");
			char *dir = strndup(pat, lit), *sl = dir ? strrchr(dir, '/') : NULL;
			struct sbx_conn_verdict pv;

			if (sl)
				sl[sl == dir ? 1 : 0] = 0;
			abs = dir && *dir ? abs_path(h, dir) : NULL;
			if (abs) {
				sbx_cv_init(&pv);
				sbx_conn_decide_path(h->cp, abs, SBX_ACC_READ, &pv);
				sbx_cv_merge(v, &pv);
			}
			free(abs);
			free(dir);
		}
		return 0;
	}
	if (!strcmp(tool, "WebFetch")) {
		const char *url = sbx_json_str(input, "url");
		char *host = NULL;
		int port;

		if (!url)
			return block(h, "WebFetch tool_input.url is missing or not a string");
		if (sbx_conn_parse_url(url, 443, &host, &port) < 0) {
			sbx_cv_set(v, SBX_V_DENY, "WebFetch", "the URL %s could not be parsed", url);
			return 0;
		}
		sbx_conn_decide_host(h->cp, host, port, v);
		free(host);
		return 0;
	}
	/* other tools (WebSearch, Task, TodoWrite, mcp__*): no opinion */
	v->verdict = SBX_V_ALLOW;
	return 0;
}

static const char *deny_hint =
	"No approval can lift this; do not try to work around it. If it is really needed "
	"for the task, tell the user (the policy is .sandbox/policy.yaml).";

static json_t *input_summary(const char *tool, json_t *input);

/* every decision on the record (best effort: the answer is given anyway) */
static void hook_audit(struct hook *h, const char *tool, json_t *input, const char *decision,
		       const char *reason, const struct sbx_req_rule *rule, const char *id,
		       const struct sbx_esc_outcome *out)
{
	struct sbx_esc e = { .project = h->project, .session = h->session, .origin = "hook" };
	json_t *sum;
	char *err = NULL;

	if (h->o->dry_run || !h->project)
		return;
	sum = input_summary(tool, input);
	if (sum && h->session_id)
		json_object_set_new(sum, "session_id", json_string(h->session_id));
	if (sbx_esc_audit_decision(&e, "claude-code", tool, sum, decision, reason, rule, id, out,
				   &err) < 0)
		fprintf(stderr, "bpfsbx: audit record not written: %s\n", err ? err : "?");
	free(err);
	json_decref(sum);
}

static int escalate(struct hook *h, const char *tool, json_t *input,
		    struct sbx_conn_verdict *v, bool is_command)
{
	struct sbx_esc e = { .project = h->project, .session = h->session, .origin = "hook" };
	struct sbx_esc_outcome out = { 0 };
	struct sbx_request r;
	char *id = NULL, *err = NULL, *text, *reason;
	int rc;

	/* the agent's tool input becomes the request here, once */
	sbx_request_init(&r, is_command ? SBX_REQ_COMMAND :
			 v->path ? SBX_REQ_ACCESS_PATH : SBX_REQ_ACCESS_HOST);
	if (is_command) {
		r.command = sbx_json_str(input, "command");
		r.cwd = h->cwd;
	} else if (v->path) {
		r.path = v->path;
		r.access = v->access;
	} else {
		r.host = v->host;
		r.port = v->port;
		r.has_port = true;
	}
	if (is_command ? !r.command || !r.cwd : !r.path && !r.host)
		return block(h, "%s: needs a person's approval (%s), but the request could not "
			     "be built", tool, v->reason ? v->reason : "?");
	if (h->o->dry_run)
		return decide(h, "deny", "bpfsbx: needs a person's approval (escalation is off)");
	r.rule = v->rule;
	r.agent_reason = sbx_json_str(input, "description");
	if (r.agent_reason && !*r.agent_reason)
		r.agent_reason = NULL;
	rc = sbx_esc_submit(&e, &r, &id, &err);
	if (rc < 0) {
		block(h, "%s needs a person's approval (%s), but the request could not be "
		      "submitted: %s", tool, v->reason ? v->reason : "?", err ? err : strerror(-rc));
		free(err);
		return 2;
	}
	hook_audit(h, tool, input, "ask", v->reason, &v->rule, id, NULL);
	fprintf(stderr, "bpfsbx: waiting up to %d s for a person to decide request %s "
		"(bpfsbx watch %s)\n", h->o->wait_ms / 1000, id, h->project);
	rc = sbx_esc_wait(h->project, id, h->o->wait_ms, &out, &err);
	if (rc < 0) {
		block(h, "request %s: %s", id, err ? err : strerror(-rc));
		free(err);
		free(id);
		return 2;
	}
	hook_audit(h, tool, input, out.state == SBX_ESC_APPROVED ? "approved" :
		   out.state == SBX_ESC_DENIED ? "denied" : "pending", v->reason, &v->rule, id, &out);
	text = sbx_esc_describe(h->project, id, &out);
	reason = sbx_asprintf("bpfsbx: %s needs a person's approval: %s.\n%s",
			      is_command ? "this command" : tool,
			      v->reason ? v->reason : "policy", text);
	rc = decide(h, "deny", reason);
	free(reason);
	free(text);
	free(id);
	sbx_esc_outcome_clear(&out);
	return rc;
}

static int pre_tool_use(struct hook *h)
{
	const char *tool = sbx_json_str(h->in, "tool_name");
	json_t *input = json_object_get(h->in, "tool_input");
	struct sbx_conn_verdict v;
	bool is_command;
	char *reason;
	int rc;

	if (!tool)
		return block(h, "PreToolUse input has no tool_name string");
	if (!json_is_object(input))
		return block(h, "PreToolUse input has no tool_input object");
	if ((rc = load_policy(h)))
		return rc;
	sbx_cv_init(&v);
	if ((rc = tool_verdict(h, tool, input, &v, &is_command))) {
		sbx_cv_clear(&v);
		return rc;
	}
	/* a person's earlier grant turns an ask into allow (the kernel does
	 * the same with its grants map) */
	if (v.verdict == SBX_V_ASK && !is_command &&
	    sbx_esc_granted(h->project, h->session, v.path, v.access, v.host, v.port))
		v.verdict = SBX_V_ALLOW;

	switch (v.verdict) {
	case SBX_V_DENY:
		reason = sbx_asprintf("bpfsbx: denied by the sandbox policy: %s%s%s%s. %s",
				      v.reason ? v.reason : "no reason given",
				      v.what ? " [" : "", v.what ? v.what : "", v.what ? "]" : "",
				      deny_hint);
		hook_audit(h, tool, input, "deny", v.reason, &v.rule, NULL, NULL);
		rc = decide(h, "deny", reason);
		free(reason);
		break;
	case SBX_V_ASK:
		rc = escalate(h, tool, input, &v, is_command);
		break;
	default:
		/* allow and audit: leave the decision to Claude Code; what a
		 * learning session would have refused is recorded, with the
		 * verdict it would have had */
		if (v.verdict == SBX_V_AUDIT && v.rule.present && v.rule.would)
			hook_audit(h, tool, input, "audit", v.reason, &v.rule, NULL, NULL);
		rc = answer(h, NULL);
		break;
	}
	sbx_cv_clear(&v);
	return rc;
}

/* ---- PostToolUse --------------------------------------------------------- */

static json_t *input_summary(const char *tool, json_t *input)
{
	static const char *const keys[] = { "command", "file_path", "notebook_path", "path",
					    "url", "pattern", "query", NULL };
	json_t *s = json_object();

	for (int k = 0; s && keys[k]; k++) {
		const char *v = sbx_json_str(input, keys[k]);

		if (v) {
			char *cut = strndup(v, 2000);
			json_object_set_new(s, keys[k], json_string(cut ? cut : ""));
			free(cut);
		}
	}
	(void)tool;
	return s;
}

static const char *outcome(json_t *resp)
{
	if (json_is_object(resp)) {
		if (json_is_true(json_object_get(resp, "interrupted")))
			return "interrupted";
		if (json_object_get(resp, "error") || json_is_false(json_object_get(resp, "success")))
			return "error";
		return "ok";
	}
	if (json_is_string(resp) && !strncmp(json_string_value(resp), "Error", 5))
		return "error";
	return resp ? "ok" : "unknown";
}

static int post_tool_use(struct hook *h)
{
	const char *tool = sbx_json_str(h->in, "tool_name");
	json_t *input = json_object_get(h->in, "tool_input");
	struct sbx_esc e = { 0 };
	json_t *rec;
	char *err = NULL;

	if (!tool)
		return block(h, "PostToolUse input has no tool_name string");
	if (input && !json_is_object(input))
		return block(h, "PostToolUse tool_input is not an object");
	/* the audit is best effort: PostToolUse cannot undo the call */
	if (find_project(h) < 0) {
		fprintf(stderr, "bpfsbx: no %s found from %s: tool call not audited\n",
			SBX_POLICY_FILE, h->cwd);
		return answer(h, NULL);
	}
	e.project = h->project;
	e.session = h->session;
	e.origin = "hook";
	if (h->o->dry_run)
		return answer(h, NULL);
	rec = json_pack("{s:s, s:s, s:s, s:s, s:o, s:s}", "event", "tool", "agent", "claude-code",
			"session_id", h->session_id, "tool", tool,
			"input", input_summary(tool, input),
			"outcome", outcome(json_object_get(h->in, "tool_response")));
	if (rec) {
		const char *tid = sbx_json_str(h->in, "tool_use_id");

		if (tid)
			json_object_set_new(rec, "tool_use_id", json_string(tid));
		if (sbx_esc_audit(&e, rec, &err) < 0)
			fprintf(stderr, "bpfsbx: audit record not written: %s\n", err ? err : "?");
		free(err);
		json_decref(rec);
	}
	return answer(h, NULL);
}

/* ---- SessionStart ----------------------------------------------------------- */

/* Is the bpfsbx MCP server registered for Claude Code (.mcp.json)? */
static bool mcp_registered(const char *project)
{
	char *path = sbx_asprintf("%s/.mcp.json", project);
	json_t *j = json_load_file(path, 0, NULL);
	bool r = json_object_get(json_object_get(j, "mcpServers"), "bpfsbx") != NULL;

	json_decref(j);
	free(path);
	return r;
}

static int session_start(struct hook *h)
{
	char *summary, *ctx, *name = NULL;
	bool in = sbx_in_session(&name);
	json_t *s;
	int rc;

	if ((rc = load_policy(h)))
		return rc;
	summary = sbx_conn_policy_patterns(h->cp, 450);
	ctx = sbx_asprintf(
		"bpfsbx sandbox, project %s; policy %s (the reasons are there).\n"
		"Mode: %s%s%s\n"
		"A denied action is refused with the rule's reason: do not work around it; if it "
		"is needed, tell the user. An \"ask\" goes to a person: an approved Bash command "
		"runs outside the sandbox and its output comes back in the refusal (do not run it "
		"again); an approved file or network access succeeds when retried.\n%s%s",
		h->project, h->cp->policy_path,
		in ? "kernel-enforced (session " : "hooks only: commands are classified, nothing is "
		"enforced by the kernel", in ? name : "",
		in ? "): every open, exec and connect is checked by the kernel." : ".",
		mcp_registered(h->project) ? "To ask ahead: the MCP server \"bpfsbx\" "
		"(request_access, run_privileged, check_request, sandbox_status).\n" : "",
		summary ? summary : "");
	free(summary);
	free(name);
	if (strlen(ctx) > CONTEXT_CAP)
		strcpy(ctx + CONTEXT_CAP - 40, "\n... (the rest: the policy file)\n");
	s = json_pack("{s:s}", "additionalContext", ctx);
	free(ctx);
	return s ? answer(h, s) : block(h, "out of memory");
}

/* ---- entry ---------------------------------------------------------------- */

int sbx_hook_handle(const char *event, const char *input, size_t len,
		    const struct sbx_hook_opts *o, struct sbx_hook_result *r)
{
	struct hook h = { .o = o, .r = r };
	json_error_t jerr;
	const char *name = NULL;
	char *cwdbuf = NULL;
	json_t *v;
	int rc;

	memset(r, 0, sizeof(*r));
	for (size_t k = 0; event && k < sizeof(events) / sizeof(events[0]); k++)
		if (!strcmp(event, events[k].arg) || !strcmp(event, events[k].name)) {
			h.ev = events[k].ev;
			h.event_name = events[k].name;
		}
	if (!h.event_name)
		return block(&h, "unknown hook event '%s' (expected pre-tool-use, post-tool-use "
			     "or session-start)", event ? event : "");
	if (len > SBX_HOOK_MAX_INPUT)
		return block(&h, "hook input is larger than %u bytes", SBX_HOOK_MAX_INPUT);
	h.in = json_loadb(input, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!h.in)
		return block(&h, "hook input is not valid JSON: line %d, column %d: %s",
			     jerr.line, jerr.column, jerr.text);
	if (!json_is_object(h.in)) {
		rc = block(&h, "hook input is not a JSON object");
		goto out;
	}
	v = json_object_get(h.in, "hook_event_name");
	if (v) {
		name = json_string_value(v);
		if (!name || strcmp(name, h.event_name)) {
			rc = block(&h, "hook input is for event '%s' but this hook handles %s",
				   name ? name : "(not a string)", h.event_name);
			goto out;
		}
	}
	v = json_object_get(h.in, "cwd");
	if (v && (!json_is_string(v) || json_string_value(v)[0] != '/')) {
		rc = block(&h, "hook input field cwd is not an absolute path");
		goto out;
	}
	if (v) {
		h.cwd = json_string_value(v);
	} else {
		cwdbuf = getcwd(NULL, 0);
		if (!cwdbuf) {
			rc = block(&h, "no cwd in the input and getcwd failed: %s", strerror(errno));
			goto out;
		}
		h.cwd = cwdbuf;
	}
	v = json_object_get(h.in, "session_id");
	if (v && !json_is_string(v)) {
		rc = block(&h, "hook input field session_id is not a string");
		goto out;
	}
	h.session_id = v ? json_string_value(v) : "unknown";
	h.session = sbx_esc_session_name("claude-", h.session_id);
	if (!h.session) {
		rc = block(&h, "out of memory");
		goto out;
	}
	switch (h.ev) {
	case EV_PRE:
		rc = pre_tool_use(&h);
		break;
	case EV_POST:
		rc = post_tool_use(&h);
		break;
	default:
		rc = session_start(&h);
		break;
	}
out:
	if (h.cp != o->policy)
		sbx_conn_policy_free(h.cp);
	free(h.project);
	free(h.session);
	free(cwdbuf);
	json_decref(h.in);
	return rc;
}

void sbx_hook_result_free(struct sbx_hook_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}
