/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools.h - the MCP server's tools (run_privileged, request_access,
 * check_request, sandbox_status), as server.c calls them. They answer
 * through the session's answer functions (session.h). Not an API; that
 * is server.h.
 */
#ifndef SBX_MCP_TOOLS_H
#define SBX_MCP_TOOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "user/connector/escalate.h"
#include "user/connector/mcp/session.h"

/* tools/call: answers itself, now or (a parked call) later */
void mcp_tools_call(struct sbx_mcp *m, json_t *id, json_t *params);
/* the tool result that tells the model where request id stands */
json_t *mcp_outcome_result(struct sbx_mcp *m, enum tool tool, const char *id,
			   const struct sbx_esc_outcome *o);

/* A decision of the MCP server into the session's audit log (best effort):
 * see sbx_esc_audit_decision(). */
void mcp_audit(struct sbx_mcp *m, enum tool tool, json_t *input, const char *decision,
	       const char *reason, const struct sbx_req_rule *rule, const char *id,
	       const struct sbx_esc_outcome *out);

#endif
