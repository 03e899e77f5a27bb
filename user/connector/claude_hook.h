/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claude_hook.h - the Claude Code hook protocol, as a function of
 * (event, stdin bytes) -> (exit code, stdout, stderr), so that the
 * subcommand, the unit tests and the fuzzer share one implementation.
 *
 * Exit codes follow Claude Code: 0 = stdout holds one JSON object;
 * 2 = blocked, stderr is the message. Nothing else is ever returned: 1 or
 * a crash would let the tool call through.
 */
#ifndef SBX_CONNECTOR_HOOK_H
#define SBX_CONNECTOR_HOOK_H

#include <stdbool.h>
#include <stddef.h>

#define SBX_HOOK_MAX_INPUT	(1u << 20)	/* bytes of stdin */
#define SBX_HOOK_WAIT_MS	50000		/* default wait for a decision */
#define SBX_HOOK_TIMEOUT_S	90		/* registered by init; > the wait */

struct sbx_conn_policy;

struct sbx_hook_opts {
	int wait_ms;		/* for a person's decision */
	bool dry_run;		/* never write the queue: no request, no audit (fuzzing) */
	const char *project;	/* NULL: $CLAUDE_PROJECT_DIR, then cwd upward */
	struct sbx_conn_policy *policy;	/* preloaded for project (fuzzing); borrowed */
};

struct sbx_hook_result {
	int exit_code;		/* 0 or 2 */
	char *out;		/* stdout (one JSON object + "\n") when 0 */
	char *err;		/* stderr when 2 (and warnings otherwise) */
};

/* event: "pre-tool-use", "post-tool-use", "session-start" (or the Claude
 * event names). Always fills r; returns r->exit_code. */
int sbx_hook_handle(const char *event, const char *input, size_t len,
		    const struct sbx_hook_opts *o, struct sbx_hook_result *r);
void sbx_hook_result_free(struct sbx_hook_result *r);

#endif
