/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mcp_tools.h - what the MCP server's two parts share: mcp_server.c
 * (JSON-RPC, the session, initialize, tools/list, parked calls) and
 * mcp_tools.c (the tools: run_privileged, request_access, check_request,
 * sandbox_status). Not an API; that is mcp_server.h.
 */
#ifndef SBX_MCP_TOOLS_H
#define SBX_MCP_TOOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "user/connector/escalate.h"
#include "user/connector/mcp/server.h"

/* ---- the session (mcp_server.c) ------------------------------------------------ */

enum tool { T_RUN, T_ACCESS, T_CHECK, T_STATUS };

struct parked;

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

void mcp_reply(struct sbx_mcp *m, json_t *id, json_t *result);
void mcp_reply_error(struct sbx_mcp *m, json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Answer with the request's outcome now, or park the call until a
 * decision or the end of budget_ms. */
void mcp_wait_or_park(struct sbx_mcp *m, json_t *rpc_id, const char *req_id,
		      enum tool tool, int budget_ms, json_t *meta);

/* ---- the tools (mcp_tools.c) --------------------------------------------------- */

/* tools/call: answers itself, now or (a parked call) later */
void mcp_tools_call(struct sbx_mcp *m, json_t *id, json_t *params);
/* the tool result that tells the model where request id stands */
json_t *mcp_outcome_result(struct sbx_mcp *m, enum tool tool, const char *id,
			   const struct sbx_esc_outcome *o);

/* A decision of the MCP server into the session's audit log (best effort):
 * see sbx_esc_audit_decision(). */
void mcp_audit(struct sbx_mcp *m, enum tool tool, json_t *input, const char *decision,
	       const char *reason, const json_t *rule, const char *id,
	       const struct sbx_esc_outcome *out);

#endif
