// SPDX-License-Identifier: GPL-2.0
/*
 * `bpfsbx hook` as Claude Code runs it: build/bpfsbx-san as a child, the
 * hook input on stdin, and the exit code, stdout and stderr checked
 * against the protocol (exit 0 with exactly one JSON object whose
 * hookSpecificOutput.hookEventName is the event, or exit 2 with a message).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "tests/unit/connector_helpers.h"
#include "tests/unit/unit.h"
#include "user/connector/claude_hook.h"
#include "user/connector/escalate.h"
#include "queue/queue.h"
#include "lib/json.h"

static const char *const extra =
	"commands:\n"
	"  rules:\n"
	"    - command: echo\n"
	"      args: [\"ask-me*\"]\n"
	"      verdict: ask\n"
	"      reason: test rule for escalation\n";

struct hk {
	struct tc_env e;
	char envhome[600], envwait[64];
	const char *env[4];
};

static bool hk_setup(struct hk *h, int wait_ms)
{
	if (!tc_bin())
		return false;
	tc_setup(&h->e, extra);
	snprintf(h->envhome, sizeof(h->envhome), "HOME=%s", h->e.home);
	snprintf(h->envwait, sizeof(h->envwait), "BPFSBX_HOOK_WAIT_MS=%d", wait_ms);
	h->env[0] = h->envhome;
	h->env[1] = h->envwait;
	h->env[2] = "CLAUDE_PROJECT_DIR=";
	h->env[3] = NULL;
	return true;
}

static char *input(const struct hk *h, const char *event, const char *tool, const char *tinput)
{
	char *s;

	if (asprintf(&s, "{\"session_id\":\"t-1\",\"transcript_path\":\"/x.jsonl\",\"cwd\":\"%s\","
		     "\"permission_mode\":\"default\",\"hook_event_name\":\"%s\",\"tool_name\":\"%s\","
		     "\"tool_input\":%s,\"tool_use_id\":\"toolu_1\",\"future_field\":[1,2]}",
		     h->e.project, event, tool, tinput) < 0)
		abort();
	return s;
}

/* Run the hook; for exit 0 parse stdout (exactly one object) into *out. */
static int run_hook(struct hk *h, const char *event, const char *in, size_t len, json_t **out,
		    char **err)
{
	char *const argv[] = { "bpfsbx", "hook", (char *)event, NULL };
	char *o = NULL;
	int st = tc_run(argv, h->env, in, len, &o, err);

	*out = NULL;
	if (st == 0) {
		json_error_t je;

		/* one object and nothing else (jansson rejects trailing data) */
		*out = json_loads(o, 0, &je);
		if (!*out)
			fprintf(stderr, "hook stdout is not one JSON object: %s\n[%s]\n", je.text, o);
	}
	free(o);
	return st;
}

static const char *decision(json_t *o)
{
	return json_string_value(json_object_get(json_object_get(o, "hookSpecificOutput"),
						 "permissionDecision"));
}

static const char *reason(json_t *o)
{
	return json_string_value(json_object_get(json_object_get(o, "hookSpecificOutput"),
						 "permissionDecisionReason"));
}

static const char *event_name(json_t *o)
{
	return json_string_value(json_object_get(json_object_get(o, "hookSpecificOutput"),
						 "hookEventName"));
}

/*
 * One PreToolUse call and the answer it must get: exit 0 with the event's
 * name, the decision (NULL: the hook takes no side, and Claude Code's own
 * prompts stay in charge) and parts that the reason must contain.
 */
struct hook_case {
	const char *tool, *tinput;
	const char *decision;
	const char *reason[3];
};

static void expect_answer(const struct hook_case *k, int st, json_t *out)
{
	bool ok = st == 0 && !strcmp(event_name(out) ?: "", "PreToolUse");

	CU_ASSERT_EQUAL(st, 0);
	CU_ASSERT_STRING_EQUAL(event_name(out) ?: "", "PreToolUse");
	if (k->decision) {
		ok = ok && !strcmp(decision(out) ?: "", k->decision);
		CU_ASSERT_STRING_EQUAL(decision(out) ?: "", k->decision);
	} else {
		ok = ok && !decision(out);
		CU_ASSERT_PTR_NULL(decision(out));
	}
	for (size_t i = 0; i < sizeof(k->reason) / sizeof(k->reason[0]) && k->reason[i]; i++) {
		ok = ok && strstr(reason(out) ?: "", k->reason[i]);
		CU_ASSERT_PTR_NOT_NULL(strstr(reason(out) ?: "", k->reason[i]));
	}
	if (!ok)
		fprintf(stderr, "%s %s: exit %d, decision %s, reason %s\n", k->tool, k->tinput, st,
			decision(out) ?: "(none)", reason(out) ?: "(none)");
}

/* The hook's answer to one call that no person decides. */
static void expect_hook(struct hk *h, const struct hook_case *k)
{
	char *err, *in = input(h, "PreToolUse", k->tool, k->tinput);
	json_t *out;
	int st = run_hook(h, "pre-tool-use", in, strlen(in), &out, &err);

	expect_answer(k, st, out);
	json_decref(out);
	free(err);
	free(in);
}

SBX_TEST(connector_hook, bad_input_exit_2)
{
	struct hk h;
	static const char *const bad[] = {
		"garbage", "", "{\"session_id\":\"x\",\"cwd\":", "[1,2]", "null",
		"{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":\"ls\"}",
		"{\"hook_event_name\":\"PreToolUse\",\"tool_name\":7,\"tool_input\":{}}",
		"{\"cwd\":\"CWD\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":5}}",
		"{\"hook_event_name\":\"PreToolUse\",\"cwd\":\"rel/dir\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"}}",
		"{\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{}}",
		"{\"cwd\":\"CWD\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Read\",\"tool_input\":{}}",
		"{\"hook_event_name\":\"PreToolUse\",\"session_id\":[],\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"}}",
		"{\"a\":1,\"a\":2}",
	};
	json_t *out;
	char *err;

	if (!hk_setup(&h, 0))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char buf[1024];
		const char *at = strstr(bad[k], "CWD");

		/* inputs with a cwd: the policy loads, so the input itself is refused */
		if (at)
			snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - bad[k]), bad[k],
				 h.e.project, at + 3);
		else
			snprintf(buf, sizeof(buf), "%s", bad[k]);
		int st = run_hook(&h, "pre-tool-use", buf, strlen(buf), &out, &err);

		if (st != 2 || !strstr(err, "bpfsbx: "))
			fprintf(stderr, "bad input %zu: exit %d, stderr %s\n", k, st, err);
		CU_ASSERT_EQUAL(st, 2);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "bpfsbx: "));
		json_decref(out);
		free(err);
	}
	tc_teardown(&h.e);
}

SBX_TEST(connector_hook, oversized_and_unknown_event)
{
	struct hk h;
	json_t *out;
	char *err, *big, *in;
	size_t n = SBX_HOOK_MAX_INPUT + 100;
	int st;

	if (!hk_setup(&h, 0))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	/* valid JSON, but too big: a 1 MiB+ string value */
	big = malloc(n + 1);
	memset(big, 'a', n);
	memcpy(big, "{\"x\":\"", 6);
	memcpy(big + n - 2, "\"}", 2);
	big[n] = 0;
	st = run_hook(&h, "pre-tool-use", big, n, &out, &err);
	CU_ASSERT_EQUAL(st, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "larger than"));
	free(err);
	free(big);

	in = input(&h, "Stop", "Bash", "{\"command\":\"ls\"}");
	st = run_hook(&h, "stop", in, strlen(in), &out, &err);
	CU_ASSERT_EQUAL(st, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown hook event"));
	free(err);
	/* the input says another event than the command line */
	st = run_hook(&h, "post-tool-use", in, strlen(in), &out, &err);
	CU_ASSERT_EQUAL(st, 2);
	free(err);
	free(in);
	{
		char *const argv[] = { "bpfsbx", "hook", NULL };
		char *o;

		st = tc_run(argv, h.env, "", 0, &o, &err);
		CU_ASSERT_EQUAL(st, 2);	/* usage: never 1, which fails open */
		free(o);
		free(err);
	}
	tc_teardown(&h.e);
}

SBX_TEST(connector_hook, allow_and_deny)
{
	static const struct hook_case cases[] = {
		{ "Bash", "{\"command\":\"ls -la\",\"description\":\"list\"}", .decision = NULL },
		/* sudo is escalated to a person (see ask_*); su is refused outright */
		{ "Bash", "{\"command\":\"su -c id\"}", .decision = "deny",
		  .reason = { "su opens a shell" } },
		{ "Read", "{\"file_path\":\"~/.ssh/id_rsa\"}", .decision = "deny" },
		{ "WebFetch", "{\"url\":\"http://169.254.169.254/latest\",\"prompt\":\"x\"}",
		  .decision = "deny", .reason = { "metadata" } },
		{ "Glob", "{\"pattern\":\"~/.ssh/id_*\"}", .decision = "deny" },
		/* a tool bpfsbx has no opinion about */
		{ "TodoWrite", "{\"todos\":[]}", .decision = NULL },
	};
	struct hk h;

	if (!hk_setup(&h, 0))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		expect_hook(&h, &cases[k]);
	tc_teardown(&h.e);
}

SBX_TEST(connector_hook, no_policy_fails_closed)
{
	struct hk h;
	json_t *out;
	char *err, *in, *pol;
	int st;

	if (!hk_setup(&h, 0))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	pol = tc_path(h.e.project, ".sandbox/policy.yaml");
	unlink(pol);
	in = input(&h, "PreToolUse", "Read", "{\"file_path\":\"README\"}");
	st = run_hook(&h, "pre-tool-use", in, strlen(in), &out, &err);
	CU_ASSERT_EQUAL(st, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no .sandbox/policy.yaml"));
	free(err);
	/* a broken policy: blocked with the policy's own diagnostics */
	tc_write(pol, "version: 1\nfiles: [\n");
	st = run_hook(&h, "pre-tool-use", in, strlen(in), &out, &err);
	CU_ASSERT_EQUAL(st, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "policy.yaml"));
	free(err);
	free(in);
	free(pol);
	tc_teardown(&h.e);
}

SBX_TEST(connector_hook, ask_times_out_into_pending)
{
	struct hk h;
	json_t *out;
	char *err, *in, *id;
	int st;

	if (!hk_setup(&h, 200))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	/* registered MCP server: the model is sent to check_request */
	{
		char *mcp = tc_path(h.e.project, ".mcp.json");

		tc_write(mcp, "{\"mcpServers\":{\"bpfsbx\":{\"command\":\"bpfsbx\"}}}");
		free(mcp);
	}
	in = input(&h, "PreToolUse", "Write", "{\"file_path\":\"CLAUDE.md\",\"content\":\"x\"}");
	st = run_hook(&h, "pre-tool-use", in, strlen(in), &out, &err);
	CU_ASSERT_EQUAL(st, 0);
	CU_ASSERT_STRING_EQUAL(decision(out) ?: "", "deny");
	CU_ASSERT_PTR_NOT_NULL(strstr(reason(out) ?: "", "check_request"));
	CU_ASSERT_PTR_NOT_NULL(strstr(reason(out) ?: "", "instruction files"));
	/* the request names the policy rule as the hook's verdict had it */
	{
		struct sbx_queue *q = sbx_queue_open(h.e.project, 0, (uid_t)-1, (gid_t)-1, NULL);
		json_t *arr = NULL, *rule;
		const char *src;

		CU_ASSERT_PTR_NOT_NULL_FATAL(q);
		CU_ASSERT_FATAL(sbx_queue_list(q, SBX_QDIR_PENDING, &arr, NULL) >= 0);
		CU_ASSERT_EQUAL(json_array_size(arr), 1);
		rule = json_object_get(json_array_get(arr, 0), "rule");
		CU_ASSERT_TRUE(json_integer_value(json_object_get(rule, "id")) > 0);
		CU_ASSERT_STRING_EQUAL(sbx_json_str(rule, "section") ?: "", "files");
		CU_ASSERT_STRING_EQUAL(sbx_json_str(rule, "verdict") ?: "", "ask");
		CU_ASSERT_PTR_NOT_NULL(strstr(sbx_json_str(rule, "reason") ?: "",
					      "instruction files"));
		CU_ASSERT_PTR_NOT_NULL(sbx_json_str(rule, "pattern"));
		src = sbx_json_str(rule, "source") ?: "";
		CU_ASSERT_PTR_NOT_NULL(strstr(src, ".yaml:"));
		json_decref(arr);
		sbx_queue_close(q);
	}
	/* the request is in the queue with the id the model was given */
	id = tc_decide_next(h.e.project, false, "not now", 2000);
	CU_ASSERT_PTR_NOT_NULL(id);
	if (id)
		CU_ASSERT_PTR_NOT_NULL(strstr(reason(out) ?: "", id));
	free(id);
	json_decref(out);
	free(err);
	free(in);
	tc_teardown(&h.e);
}

/* Start the hook, decide the request it makes, return its answer. */
static int hook_with_decision(struct hk *h, const char *in, bool approve, const char *note,
			      json_t **out)
{
	char *const argv[] = { "bpfsbx", "hook", "pre-tool-use", NULL };
	struct tc_child c;
	char *id;
	int st;

	*out = NULL;
	if (tc_spawn(&c, argv, h->env) < 0)
		return -1;
	tc_send(&c, in);
	tc_close_in(&c);
	id = tc_decide_next(h->e.project, approve, note, 10000);
	CU_ASSERT_PTR_NOT_NULL(id);
	free(id);
	st = tc_finish(&c, 20000);
	if (st == 0)
		*out = json_loads(c.obuf ? c.obuf : "", 0, NULL);
	else
		fprintf(stderr, "hook: exit %d: %s\n", st, c.ebuf ? c.ebuf : "");
	tc_child_free(&c);
	return st;
}

/* The hook's answer to a call that it escalates, once the person approved
 * it, or denied it with note. */
static void expect_decided(struct hk *h, const struct hook_case *k, bool approve,
			   const char *note)
{
	char *in = input(h, "PreToolUse", k->tool, k->tinput);
	json_t *out;
	int st = hook_with_decision(h, in, approve, note, &out);

	expect_answer(k, st, out);
	json_decref(out);
	free(in);
}

SBX_TEST(connector_hook, ask_command_approved_output)
{
	static const struct hook_case ran = {
		"Bash", "{\"command\":\"echo ask-me hello; exit 3\"}", .decision = "deny",
		.reason = { "ask-me hello", "exit code: 3", "do not run it again" },
	};
	static const struct hook_case refused = {
		"Bash", "{\"command\":\"echo ask-me again\"}", .decision = "deny",
		.reason = { "use the staging box instead" },
	};
	struct hk h;

	if (!hk_setup(&h, 15000))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	expect_decided(&h, &ran, true, NULL);
	expect_decided(&h, &refused, false, "use the staging box instead");
	tc_teardown(&h.e);
}

SBX_TEST(connector_hook, ask_output_truncated)
{
	struct hk h;
	json_t *out;
	char *in;
	int st;

	if (!hk_setup(&h, 15000))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	in = input(&h, "PreToolUse", "Bash", "{\"command\":\"echo ask-me; seq 1 20000\"}");
	st = hook_with_decision(&h, in, true, NULL, &out);
	CU_ASSERT_EQUAL(st, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(reason(out) ?: "", "output truncated"));
	CU_ASSERT_PTR_NULL(strstr(reason(out) ?: "", "\n20000\n"));
	CU_ASSERT_TRUE(strlen(reason(out) ?: "") < 10000);
	json_decref(out);
	free(in);
	tc_teardown(&h.e);
}

/* An approved file access is a grant: the retried tool call passes. */
SBX_TEST(connector_hook, access_grant_allows_retry)
{
	static const struct hook_case asked = {
		"Read", "{\"file_path\":\"~/.aws/credentials\"}", .decision = "deny",
		.reason = { "access granted" },
	};
	static const struct hook_case retried = {
		"Read", "{\"file_path\":\"~/.aws/credentials\"}", .decision = NULL,
	};
	struct hk h;

	if (!hk_setup(&h, 15000))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	expect_decided(&h, &asked, true, NULL);
	expect_hook(&h, &retried);
	tc_teardown(&h.e);
}

SBX_TEST(connector_hook, session_start_and_post_tool_use)
{
	struct hk h;
	json_t *out;
	char *err, *in, *log;
	const char *ctx;
	size_t len = 0;
	int st;

	if (!hk_setup(&h, 0))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	if (asprintf(&in, "{\"session_id\":\"t-1\",\"cwd\":\"%s\",\"hook_event_name\":\"SessionStart\","
		     "\"source\":\"startup\",\"model\":\"m\"}", h.e.project) < 0)
		abort();
	st = run_hook(&h, "session-start", in, strlen(in), &out, &err);
	CU_ASSERT_EQUAL(st, 0);
	CU_ASSERT_STRING_EQUAL(event_name(out) ?: "", "SessionStart");
	ctx = json_string_value(json_object_get(json_object_get(out, "hookSpecificOutput"),
						"additionalContext"));
	/* short: what is confined, how to ask, where the policy is; the mode;
	 * no MCP tools named when .mcp.json does not register bpfsbx */
	CU_ASSERT_PTR_NULL(strstr(ctx ?: "", "request_access"));
	CU_ASSERT_PTR_NOT_NULL(strstr(ctx ?: "", "~/.ssh/"));
	CU_ASSERT_PTR_NOT_NULL(strstr(ctx ?: "", ".sandbox/policy.yaml"));
	CU_ASSERT_PTR_NOT_NULL(strstr(ctx ?: "", "Mode: hooks only: commands are classified, "
				      "nothing is enforced by the kernel"));
	CU_ASSERT_PTR_NULL(strstr(ctx ?: "", "CVE-"));	/* citations stay in the policy */
	CU_ASSERT_TRUE(strlen(ctx ?: "") < 2048);
	json_decref(out);
	free(err);
	/* with the MCP server registered, the context names its tools */
	{
		char *mcp = tc_path(h.e.project, ".mcp.json");

		tc_write(mcp, "{\"mcpServers\":{\"bpfsbx\":{\"command\":\"bpfsbx\",\"args\":[\"mcp\"]}}}");
		free(mcp);
	}
	st = run_hook(&h, "session-start", in, strlen(in), &out, &err);
	CU_ASSERT_EQUAL(st, 0);
	ctx = json_string_value(json_object_get(json_object_get(out, "hookSpecificOutput"),
						"additionalContext"));
	if (!strstr(ctx ?: "", "request_access"))
		fprintf(stderr, "context: %s\nstderr: %s\n", ctx ?: "(none)", err ?: "");
	CU_ASSERT_PTR_NOT_NULL(strstr(ctx ?: "", "request_access"));
	CU_ASSERT_TRUE(strlen(ctx ?: "") < 2048);
	json_decref(out);
	free(err);
	free(in);

	if (asprintf(&in, "{\"session_id\":\"t-1\",\"cwd\":\"%s\",\"hook_event_name\":\"PostToolUse\","
		     "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls /etc\"},"
		     "\"tool_use_id\":\"toolu_9\",\"tool_response\":{\"stdout\":\"hosts\\n\","
		     "\"stderr\":\"\",\"interrupted\":false}}", h.e.project) < 0)
		abort();
	st = run_hook(&h, "post-tool-use", in, strlen(in), &out, &err);
	CU_ASSERT_EQUAL(st, 0);
	CU_ASSERT_STRING_EQUAL(event_name(out) ?: "", "PostToolUse");
	json_decref(out);
	free(err);
	free(in);
	log = tc_path(h.e.project, ".sandbox/audit/claude-t-1.jsonl");
	char *text = tc_read(log, &len);
	CU_ASSERT_PTR_NOT_NULL(text);
	CU_ASSERT_PTR_NOT_NULL(strstr(text ?: "", "\"ls /etc\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(text ?: "", "toolu_9"));
	free(text);
	free(log);
	tc_teardown(&h.e);
}

/* Every decision of the hook lands in the session's hash-chained audit log:
 * a policy denial, an ask, and the approval with the command's exit status,
 * output digest and user; the chain still verifies; sandbox_status's source
 * of "recent hook denials" finds the denial. */
SBX_TEST(connector_hook, decisions_are_in_the_audit_chain)
{
	static const struct hook_case ssh_key = {
		"Read", "{\"file_path\":\"~/.ssh/id_rsa\"}", .decision = "deny",
	};
	struct hk h;
	json_t *out;
	char *in, *dir, *den;
	int st, n_deny = 0, n_ask = 0, n_ok = 0, logs = 0;
	struct dirent *de;
	DIR *dp;

	if (!hk_setup(&h, 15000))
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	expect_hook(&h, &ssh_key);
	in = input(&h, "PreToolUse", "Bash", "{\"command\":\"echo ask-me audited; exit 4\"}");
	st = hook_with_decision(&h, in, true, NULL, &out);
	CU_ASSERT_EQUAL(st, 0);
	json_decref(out);
	free(in);

	dir = tc_path(h.e.project, ".sandbox/audit");
	dp = opendir(dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
	while ((de = readdir(dp))) {
		size_t l = strlen(de->d_name), len;
		struct sbx_audit_report r = { 0 };
		char *path, *text, *line, *save = NULL;

		if (l < 7 || strcmp(de->d_name + l - 6, ".jsonl"))
			continue;
		logs++;
		path = tc_path(dir, de->d_name);
		CU_ASSERT_EQUAL(sbx_audit_verify(path, &r), 0);
		sbx_audit_report_free(&r);
		text = tc_read(path, &len);
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			json_t *j = json_loads(line, 0, NULL);
			const char *ev = json_string_value(json_object_get(j, "event"));
			const char *d = json_string_value(json_object_get(j, "decision"));

			if (ev && !strcmp(ev, "connector_decision") && d) {
				const json_t *res = json_object_get(j, "result");

				n_deny += !strcmp(d, "deny");
				n_ask += !strcmp(d, "ask");
				if (!strcmp(d, "approved")) {
					n_ok++;
					CU_ASSERT_EQUAL(json_integer_value(json_object_get(res,
								"exit_code")), 4);
					CU_ASSERT_EQUAL(strlen(json_string_value(json_object_get(res,
							"output_sha256")) ?: ""), 64);
					CU_ASSERT_PTR_NOT_NULL(json_string_value(json_object_get(res,
								"user")));
				}
			}
			json_decref(j);
		}
		free(text);
		free(path);
	}
	closedir(dp);
	free(dir);
	CU_ASSERT(logs >= 1);
	CU_ASSERT_EQUAL(n_deny, 1);
	CU_ASSERT_EQUAL(n_ask, 1);
	CU_ASSERT_EQUAL(n_ok, 1);
	den = sbx_esc_recent_denials(h.e.project, 5);
	CU_ASSERT_PTR_NOT_NULL(strstr(den ?: "", "Read"));
	free(den);
	tc_teardown(&h.e);
}
