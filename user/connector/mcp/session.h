/* SPDX-License-Identifier: GPL-2.0 */
/*
 * session.h - one MCP session, as the server (server.c: JSON-RPC,
 * initialize, tools/list, parked calls) and the tools (tools.c) both see
 * it. The tools answer through the functions the server puts in
 * sbx_mcp.answer: they never call the server, which calls them.
 */
#ifndef SBX_MCP_SESSION_H
#define SBX_MCP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#define SBX_MCP_MAX_MSG		(4u << 20)	/* bytes in one line */
#define SBX_MCP_WAIT_MS		45000		/* default; below the clients' 60 s */
#define SBX_MCP_WAIT_MAX_MS	55000		/* never longer than this */
#define SBX_MCP_LATEST		"2025-11-25"

struct sbx_conn_policy;

typedef void (*sbx_mcp_emit_fn)(void *ctx, const char *json);

struct sbx_mcp_opts {
	const char *project;	/* NULL: found from the cwd upward on first use */
	int wait_ms;		/* budget for a person's decision in one call */
	bool dry_run;		/* never write the queue and never wait (fuzzing) */
	struct sbx_conn_policy *policy;	/* preloaded for project (fuzzing); borrowed */
	sbx_mcp_emit_fn emit;
	void *emit_ctx;
};

enum tool { T_RUN, T_ACCESS, T_CHECK, T_STATUS };

struct sbx_mcp;

/* How a tool call is answered; the server's, passed in at sbx_mcp_new(). */
struct sbx_mcp_answer {
	/* the call's result (stolen) */
	void (*reply)(struct sbx_mcp *m, json_t *id, json_t *result);
	/* a JSON-RPC error */
	void (*error)(struct sbx_mcp *m, json_t *id, int code, const char *fmt, ...)
		__attribute__((format(printf, 4, 5)));
	/* the outcome of request req_id now, or the call parked until a
	 * decision or the end of budget_ms */
	void (*wait_or_park)(struct sbx_mcp *m, json_t *rpc_id, const char *req_id,
			     enum tool tool, int budget_ms, json_t *meta);
};

struct parked;

struct sbx_mcp {
	struct sbx_mcp_opts o;
	const struct sbx_mcp_answer *answer;
	char *project;
	bool project_looked;
	bool initialized;
	const char *version;
	struct parked *p;
	size_t np, cap;
	json_t *batch;		/* replies of the batch being handled */
	char *session;		/* queue session name outside kernel sessions */
};

#endif
