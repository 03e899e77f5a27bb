// SPDX-License-Identifier: GPL-2.0
/*
 * hook.c - `bpfsbx hook EVENT`: Claude Code runs it with the hook's JSON
 * on stdin; the protocol is user/connector/claude_hook.c. It never exits 1:
 * Claude Code would let the tool call through.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "user/cmd/cmd.h"
#include "user/connector/claude_hook.h"
#include "user/connector/escalate.h"

static const struct sbx_opt hook_subs[] = {
	{ .sub = "pre-tool-use", .help = "before a tool call: allow, deny or ask a person" },
	{ .sub = "post-tool-use", .help = "after a tool call" },
	{ .sub = "session-start", .help = "when a session starts: tell the agent the mode in force" },
	{ 0 }
};

static int cmd_hook(int argc, char **argv)
{
	struct sbx_hook_opts o = { 0 };
	struct sbx_hook_result r;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: bpfsbx hook pre-tool-use|post-tool-use|session-start < INPUT.json\n"
		       "The Claude Code hook protocol. Registered by `bpfsbx init --claude`.\n"
		       "Environment: BPFSBX_HOOK_WAIT_MS (default %d) how long to wait for a\n"
		       "person's decision; CLAUDE_PROJECT_DIR.\n", SBX_HOOK_WAIT_MS);
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "bpfsbx: usage: bpfsbx hook pre-tool-use|post-tool-use|session-start\n");
		return 2;	/* never 1: Claude Code would let the call through */
	}
	o.wait_ms = sbx_env_ms("BPFSBX_HOOK_WAIT_MS", SBX_HOOK_WAIT_MS, 3600 * 1000);
	/* a lost DNS packet must not stall a tool call for glibc's 5 s default */
	setenv("RES_OPTIONS", "timeout:2 attempts:2", 0);
	/* read all of stdin, at most one byte past the cap */
	for (;;) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *nb;

			if (ncap > SBX_HOOK_MAX_INPUT + 1)
				ncap = SBX_HOOK_MAX_INPUT + 1;
			if (ncap == cap)
				break;
			nb = realloc(buf, ncap);
			if (!nb) {
				fprintf(stderr, "bpfsbx: out of memory\n");
				free(buf);
				return 2;
			}
			buf = nb;
			cap = ncap;
		}
		n = read(0, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "bpfsbx: reading the hook input: %s\n", strerror(errno));
			free(buf);
			return 2;
		}
		if (n == 0)
			break;
		len += n;
	}
	sbx_hook_handle(argv[1], buf ? buf : "", len, &o, &r);
	free(buf);
	if (r.exit_code == 0 && r.out) {
		if (fputs(r.out, stdout) == EOF || fflush(stdout) == EOF) {
			fprintf(stderr, "bpfsbx: cannot write the hook answer\n");
			r.exit_code = 2;
		}
	}
	if (r.err)
		fputs(r.err, stderr);
	sbx_hook_result_free(&r);
	return r.exit_code == 0 ? 0 : 2;
}

SBX_COMMAND(hook, "hook", "pre-tool-use|post-tool-use|session-start <INPUT.json",
	    "Claude Code hook: check a tool call against the policy", cmd_hook,
	    hook_subs);
