// SPDX-License-Identifier: GPL-2.0
/*
 * mcp.c - `bpfsbx mcp`: the MCP server (user/connector/mcp/server.c) on
 * stdin and stdout, one JSON-RPC message per line.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "user/cmd/cmd.h"
#include "user/connector/escalate.h"
#include "user/connector/mcp/server.h"
#include "lib/alloc.h"

static void emit_stdout(void *ctx, const char *json)
{
	(void)ctx;
	if (fputs(json, stdout) == EOF || fputc('\n', stdout) == EOF || fflush(stdout) == EOF) {
		fprintf(stderr, "bpfsbx mcp: stdout closed; exiting\n");
		exit(0);
	}
}

static const struct sbx_opt mcp_opts[] = {
	{ "project", 'p', 0, 'd', "DIR", "$CLAUDE_PROJECT_DIR, then the current directory upward",
	  "the project", NULL },
	{ 0 }
};

static int cmd_mcp(int argc, char **argv)
{
	struct sbx_mcp_opts o = { .emit = emit_stdout };
	struct sbx_mcp *m;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	bool discarding = false;
	int c;

	optind = 1;
	while ((c = sbx_getopt(argc, argv, mcp_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o.project = optarg;
			break;
		case 'h':
			printf("usage: bpfsbx mcp [--project DIR]\n"
			       "A stdio MCP server with the tools run_privileged, request_access,\n"
			       "check_request and sandbox_status. Registered by `bpfsbx init --mcp`.\n"
			       "Environment: BPFSBX_MCP_WAIT_MS (default %d, at most %d): how long one\n"
			       "call waits for a person before it returns \"pending\".\n"
			       "  --project DIR  the project (default: $CLAUDE_PROJECT_DIR, then the\n"
			       "                 current directory upward)\n"
			       "  -h, --help  this help\n",
			       SBX_MCP_WAIT_MS, SBX_MCP_WAIT_MAX_MS);
			return 0;
		default:
			return SBX_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bpfsbx mcp: unexpected argument '%s'\n", argv[optind]);
		return SBX_EXIT_USAGE;
	}
	if (o.project && access(o.project, F_OK) < 0)
		fprintf(stderr, "bpfsbx mcp: warning: --project %s: %s\n", o.project, strerror(errno));
	o.wait_ms = sbx_env_ms("BPFSBX_MCP_WAIT_MS", SBX_MCP_WAIT_MS, SBX_MCP_WAIT_MAX_MS);
	/* a lost DNS packet must not stall a tool call for glibc's 5 s default */
	setenv("RES_OPTIONS", "timeout:2 attempts:2", 0);
	signal(SIGPIPE, SIG_IGN);
	m = sbx_mcp_new(&o);
	if (!m) {
		fprintf(stderr, "bpfsbx mcp: out of memory\n");
		return SBX_EXIT_FAIL;
	}
	for (;;) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };
		int timeout = sbx_mcp_poll(m);
		ssize_t n;

		if (poll(&pfd, 1, timeout) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "bpfsbx mcp: poll: %s\n", strerror(errno));
			break;
		}
		if (!pfd.revents)
			continue;
		if (!SBX_GROW(buf, cap, len + 65536, 131072)) {
			fprintf(stderr, "bpfsbx mcp: out of memory\n");
			break;
		}
		n = read(0, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* stdin closed: the client is gone */
		len += n;
		for (;;) {
			char *nl = memchr(buf, '\n', len);
			size_t ll;

			if (!nl) {
				if (discarding) {
					len = 0;
				} else if (len > SBX_MCP_MAX_MSG) {
					if (!discarding)
						sbx_mcp_oversized(m);
					discarding = true;
					len = 0;
				}
				break;
			}
			ll = nl - buf;
			if (discarding) {
				discarding = false;
			} else {
				size_t l2 = ll;

				if (l2 && buf[l2 - 1] == '\r')
					l2--;
				size_t s = 0;
				while (s < l2 && (buf[s] == ' ' || buf[s] == '\t'))
					s++;
				if (l2 - s > SBX_MCP_MAX_MSG)
					sbx_mcp_oversized(m);
				else if (s < l2)
					sbx_mcp_handle(m, buf + s, l2 - s);
			}
			memmove(buf, nl + 1, len - ll - 1);
			len -= ll + 1;
		}
		/* do not let the buffer stay huge after one big message */
		if (cap > (1u << 20) && len < 65536) {
			char *nb = realloc(buf, 131072);
			if (nb) {
				buf = nb;
				cap = 131072;
			}
		}
	}
	free(buf);
	sbx_mcp_free(m);
	return 0;
}

SBX_COMMAND(mcp, "mcp", "[OPTIONS]",
	    "stdio MCP server: run_privileged, request_access, check_request, sandbox_status",
	    cmd_mcp, mcp_opts);
