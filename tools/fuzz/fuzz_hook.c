// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the Claude Code hook's input handling
 * (sbx_hook_handle, shared with `bpfsbx hook`). The first byte picks the
 * event, the rest is stdin. The policy (agent-default on a scratch
 * project) is loaded once; the hook runs dry (no request, no audit
 * record). Oracle: the answer is exit 2 with a message, or exit 0 with
 * exactly one JSON object whose hookSpecificOutput.hookEventName is the
 * event, and a permissionDecision (if any) that Claude Code knows.
 *
 *   make fuzz && build/fuzz/fuzz_hook tools/fuzz/corpus/fuzz_hook
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>
#include "user/connector/claude_hook.h"
#include "user/connector/conn_policy.h"
#include "tools/fuzz/fuzz_project.h"

static char project[256];
static struct sbx_conn_policy *policy;

static const char *const events[][2] = {
	{ "pre-tool-use", "PreToolUse" },
	{ "post-tool-use", "PostToolUse" },
	{ "session-start", "SessionStart" },
	{ "stop", NULL },
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sbx_conn_resolver = fuzz_resolve;
	policy = fuzz_project("fuzz-hook", project, sizeof(project));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_hook_opts o = { .wait_ms = 0, .dry_run = true, .project = project,
				   .policy = policy };
	struct sbx_hook_result r;
	const char *ev, *name;
	json_t *out, *hso, *d;

	if (size < 1)
		return 0;
	ev = events[data[0] % 4][0];
	name = events[data[0] % 4][1];
	sbx_hook_handle(ev, (const char *)data + 1, size - 1, &o, &r);
	if (r.exit_code == 2) {
		if (!r.err || strncmp(r.err, "bpfsbx: ", 8))
			abort();
	} else if (r.exit_code == 0) {
		if (!name || !r.out)
			abort();
		out = json_loads(r.out, 0, NULL);	/* one object, nothing after it */
		hso = json_object_get(out, "hookSpecificOutput");
		if (!json_is_object(out) ||
		    strcmp(json_string_value(json_object_get(hso, "hookEventName")) ?: "", name))
			abort();
		d = json_object_get(hso, "permissionDecision");
		if (d && (strcmp(name, "PreToolUse") ||
			  (strcmp(json_string_value(d) ?: "", "deny") &&
			   strcmp(json_string_value(d) ?: "", "ask") &&
			   strcmp(json_string_value(d) ?: "", "allow"))))
			abort();
		json_decref(out);
	} else {
		abort();	/* anything else fails open in Claude Code */
	}
	sbx_hook_result_free(&r);
	return 0;
}
