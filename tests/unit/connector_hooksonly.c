// SPDX-License-Identifier: GPL-2.0
/*
 * Hooks-only mode (no daemon, no kernel enforcement): the connector keeps
 * the daemon's rules for asked requests itself. Repeats fold into one
 * request, a request has a deadline and an overdue one cannot be
 * approved, and "always" is written to remembered.yaml and holds for a
 * later session. The hook runs for real (sbx_hook_handle, not dry), the
 * approver is the CLI (build/bpfsbx-san approve).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "queue/queue.h"
#include "tests/unit/connector_helpers.h"
#include "tests/unit/unit.h"
#include "user/connector/claude_hook.h"
#include "user/connector/conn_policy.h"

/* a Read of path in session sid; the decision ("deny", or NULL for allow) */
static char *read_tool(struct sbx_conn_policy *cp, const char *project, const char *sid,
		       const char *path, char **reason)
{
	struct sbx_hook_opts o = { .wait_ms = 50, .project = project, .policy = cp };
	struct sbx_hook_result r = { 0 };
	json_t *in = json_pack("{s:s,s:s,s:s,s:s,s:{s:s}}", "session_id", sid, "cwd", project,
			       "hook_event_name", "PreToolUse", "tool_name", "Read", "tool_input",
			       "file_path", path), *out, *hso;
	char *txt = json_dumps(in, 0), *dec = NULL;

	sbx_hook_handle("pre-tool-use", txt, strlen(txt), &o, &r);
	out = r.out ? json_loads(r.out, 0, NULL) : NULL;
	hso = json_object_get(out, "hookSpecificOutput");
	if (json_string_value(json_object_get(hso, "permissionDecision")))
		dec = sbx_strdup(json_string_value(json_object_get(hso, "permissionDecision")));
	if (reason)
		*reason = json_string_value(json_object_get(hso, "permissionDecisionReason")) ?
			sbx_strdup(json_string_value(json_object_get(hso, "permissionDecisionReason"))) :
			NULL;
	json_decref(out);
	json_decref(in);
	free(txt);
	sbx_hook_result_free(&r);
	return dec;
}

static size_t pending(struct sbx_queue *q, json_t **arr)
{
	char *err = NULL;

	*arr = NULL;
	sbx_queue_list(q, SBX_QDIR_PENDING, arr, &err);
	free(err);
	return json_array_size(*arr);
}

SBX_TEST(connector_hooksonly, repeats_fold_always_is_remembered)
{
	struct tc_env e;
	struct sbx_conn_policy *cp = NULL;
	struct sbx_queue *q;
	char *err = NULL, *path, *ids[3] = { 0 }, *rem, *dec, *old_home;
	json_t *arr;
	int st;

	if (!tc_bin())
		SBX_SKIP("build/bpfsbx-san not built");
	old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	tc_setup(&e, NULL);
	setenv("HOME", e.home, 1);
	path = tc_path(e.home, ".aws/credentials");
	tc_write(path, "[default]\n");
	CU_ASSERT_EQUAL_FATAL(sbx_conn_policy_load(e.project, &cp, &err), 0);
	CU_ASSERT_FALSE(cp->kernel_enforced);
	/* three identical Reads: one request, counted three times */
	for (int k = 0; k < 3; k++) {
		char *why = NULL;

		dec = read_tool(cp, e.project, "s-1", path, &why);
		CU_ASSERT_STRING_EQUAL(dec ?: "", "deny");
		free(dec);
		q = sbx_queue_open(e.project, 0, (uid_t)-1, (gid_t)-1, NULL);
		CU_ASSERT_PTR_NOT_NULL_FATAL(q);
		CU_ASSERT_EQUAL(pending(q, &arr), 1);
		ids[k] = sbx_strdup(json_string_value(json_object_get(json_array_get(arr, 0), "id")) ?: "");
		if (k == 2)
			CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_array_get(arr, 0),
									   "count")), 3);
		CU_ASSERT_PTR_NOT_NULL(json_object_get(json_array_get(arr, 0), "deadline"));
		json_decref(arr);
		sbx_queue_close(q);
		CU_ASSERT_PTR_NOT_NULL(why && strstr(why, ids[k]));
		free(why);
	}
	CU_ASSERT_STRING_EQUAL(ids[0], ids[1]);
	CU_ASSERT_STRING_EQUAL(ids[1], ids[2]);
	/* a person approves always: remembered.yaml, and a later session may read */
	{
		char *const argv[] = { "bpfsbx", "approve", ids[0], "--scope", "always", "--dir",
				       e.project, NULL };
		char *o = NULL, *x = NULL;

		st = tc_run(argv, NULL, "", 0, &o, &x);
		CU_ASSERT_EQUAL(st, 0);
		if (st)
			fprintf(stderr, "approve: %s %s\n", o ?: "", x ?: "");
		free(o);
		free(x);
	}
	rem = tc_path(e.project, ".sandbox/remembered.yaml");
	{
		size_t len = 0;
		char *text = tc_read(rem, &len);

		CU_ASSERT_PTR_NOT_NULL(text && strstr(text, path));
		free(text);
	}
	dec = read_tool(cp, e.project, "s-2", path, NULL);
	CU_ASSERT_PTR_NULL(dec);	/* allowed: no decision, Claude Code goes ahead */
	free(dec);
	for (int k = 0; k < 3; k++)
		free(ids[k]);
	free(rem);
	free(path);
	free(err);
	sbx_conn_policy_free(cp);
	if (old_home)
		setenv("HOME", old_home, 1);
	free(old_home);
	tc_teardown(&e);
}

SBX_TEST(connector_hooksonly, overdue_request_cannot_be_approved)
{
	struct tc_env e;
	struct sbx_queue *q;
	char *err = NULL, *id = NULL, *past, *o = NULL, *x = NULL;
	json_t *req, *done = NULL;
	int st;

	if (!tc_bin())
		SBX_SKIP("build/bpfsbx-san not built");
	tc_setup(&e, NULL);
	q = sbx_queue_open(e.project, SBX_Q_CREATE, (uid_t)-1, (gid_t)-1, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	past = sbx_time_rfc3339(time(NULL) - 5);
	req = json_pack("{s:s,s:s,s:s,s:{s:s,s:s},s:s}", "kind", "access", "session", "s-1",
			"project", e.project, "object", "path", "/x/.aws/credentials", "access",
			"read", "deadline", past);
	CU_ASSERT_EQUAL_FATAL(sbx_queue_submit(q, req, &id, &err), 0);
	{
		char *const argv[] = { "bpfsbx", "approve", id, "--dir", e.project, NULL };

		st = tc_run(argv, NULL, "", 0, &o, &x);
	}
	CU_ASSERT_NOT_EQUAL(st, 0);
	CU_ASSERT_PTR_NOT_NULL(x && strstr(x, "deadline has passed"));
	CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_DONE, id, &done, NULL), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(done, "decision"),
								 "verdict")) ?: "", "deny");
	CU_ASSERT_TRUE(json_is_true(json_object_get(json_object_get(done, "decision"), "expired")));
	json_decref(done);
	json_decref(req);
	free(past);
	free(id);
	free(o);
	free(x);
	free(err);
	sbx_queue_close(q);
	tc_teardown(&e);
}
