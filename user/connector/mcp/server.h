/* SPDX-License-Identifier: GPL-2.0 */
/*
 * server.h - the MCP server's message handling without stdio, so
 * that `bpfsbx mcp`, the unit tests and the fuzzer drive the same code.
 *
 * Feed one line (one JSON-RPC message or, in protocol 2025-03-26, a
 * batch) to sbx_mcp_handle(); replies go out through the emit callback,
 * one compact JSON text per call, without the newline. Tool calls that
 * wait for a person are parked; sbx_mcp_poll() finishes them when the
 * decision arrives or their time budget runs out.
 */
#ifndef SBX_CONNECTOR_MCP_H
#define SBX_CONNECTOR_MCP_H

#include <stddef.h>

#include "user/connector/mcp/session.h"

struct sbx_mcp *sbx_mcp_new(const struct sbx_mcp_opts *o);
void sbx_mcp_free(struct sbx_mcp *m);

/* One line from the client (without its "\n"). Never fails: every
 * problem becomes a JSON-RPC error reply (or nothing, for notifications). */
void sbx_mcp_handle(struct sbx_mcp *m, const char *line, size_t len);
/* The line was longer than SBX_MCP_MAX_MSG and has been dropped. */
void sbx_mcp_oversized(struct sbx_mcp *m);
/* Finish parked calls whose decision arrived or whose budget ran out.
 * Returns the ms until the next check is due, or -1 when none is parked. */
int sbx_mcp_poll(struct sbx_mcp *m);

#endif
