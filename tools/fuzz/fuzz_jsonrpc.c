// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the MCP server's JSON-RPC reader and dispatcher
 * (user/connector/mcp/server.c without stdio). Each input is split into lines, as the
 * server's stdin loop does, and fed to a fresh server (dry run: nothing is
 * written to the queue, no call waits) on a scratch project that has the
 * agent-default policy. Oracle: every message the server emits is one
 * JSON object (or, for a batch, an array of them) with "jsonrpc":"2.0",
 * an "id", and exactly one of "result" and "error".
 *
 *   make fuzz && build/fuzz/fuzz_jsonrpc tools/fuzz/corpus/fuzz_jsonrpc
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>
#include "user/connector/mcp/server.h"
#include "user/connector/conn_policy.h"
#include "tools/fuzz/fuzz_project.h"

static char project[256];
static struct sbx_conn_policy *policy;

static void check_one(const json_t *m)
{
	if (!json_is_object(m) || !json_is_string(json_object_get(m, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(m, "jsonrpc")), "2.0"))
		abort();
	if (json_object_get(m, "method"))	/* a notification (progress) */
		return;
	if (!json_object_get(m, "id"))
		abort();
	if (!json_object_get(m, "result") == !json_object_get(m, "error"))
		abort();
	if (json_object_get(m, "error") &&
	    !json_is_integer(json_object_get(json_object_get(m, "error"), "code")))
		abort();
}

static void emit(void *ctx, const char *text)
{
	json_error_t je;
	json_t *m = json_loads(text, 0, &je);
	size_t i;
	json_t *e;

	(void)ctx;
	if (!m || strchr(text, '\n'))	/* one line of JSON, always */
		abort();
	if (json_is_array(m)) {
		if (!json_array_size(m))
			abort();
		json_array_foreach(m, i, e)
			check_one(e);
	} else {
		check_one(m);
	}
	json_decref(m);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sbx_conn_resolver = fuzz_resolve;
	policy = fuzz_project("fuzz-jsonrpc", project, sizeof(project));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_mcp_opts o = { .project = project, .wait_ms = 0, .dry_run = true,
				  .emit = emit, .policy = policy };
	struct sbx_mcp *m = sbx_mcp_new(&o);
	const char *p = (const char *)data, *end = p + size;

	if (!m)
		return 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (len > SBX_MCP_MAX_MSG)
			sbx_mcp_oversized(m);
		else if (len)
			sbx_mcp_handle(m, p, len);
		p += len + 1;
	}
	if (sbx_mcp_poll(m) != -1)	/* a dry run never parks a call */
		abort();
	sbx_mcp_free(m);
	return 0;
}
