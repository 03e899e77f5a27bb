// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for `policy suggest`'s input: every input is an events
 * file, read by the CLI's own reader (policy_read_events: lines, JSON, the
 * typed event record, sessions) and, when it reads, generalised into a
 * patch that is emitted, loaded, compiled and checked (policy/suggest.c).
 * The protected set is a small policy of its own, so that a run costs
 * milliseconds rather than agent-default's compile.
 *
 *   make fuzz && build/fuzz/fuzz_suggest tools/fuzz/corpus/fuzz_suggest
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "policy/policy.h"
#include "policy/suggest.h"
#include "user/cmd/policy_cli.h"
#include "tools/fuzz/fuzz_project.h"

static char home[256], project[256], base[300], guard[300];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[64];

	(void)argc;
	(void)argv;
	fuzz_scratch("fuzz-suggest", dir, home, sizeof(home), project, sizeof(project));
	snprintf(base, sizeof(base), "%s/base.yaml", dir);
	snprintf(guard, sizeof(guard), "%s/guard.yaml", dir);
	put(base, "version: 1\nfiles:\n  default: {read: ask, write: ask, exec: ask}\n  rules:\n"
		  "    - path: ${PROJECT}\n      access: write\n      verdict: allow\n      reason: p\n"
		  "network:\n  default: ask\ncommands:\n  default: ask\n");
	put(guard, "version: 1\nfiles:\n  default: {read: allow, write: deny, exec: allow}\n"
		   "  rules:\n    - path: ~/.ssh/\n      access: [read, write]\n      verdict: deny\n"
		   "      reason: keys\n    - path: credentials*\n      access: read\n"
		   "      verdict: ask\n      reason: credentials\n"
		   "network:\n  default: ask\n  rules:\n    - cidr: 169.254.169.254\n"
		   "      verdict: deny\n      reason: metadata\n"
		   "commands:\n  default: allow\n  rules:\n    - command: sudo\n      verdict: ask\n"
		   "      reason: escalation\n");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_policy_env env = { .home = home, .project = project };
	struct sbx_suggest_in in = { .env = &env, .base = base, .guard = guard };
	struct popts o = { 0 };
	struct recorded r = { .uid = -1 };
	struct sbx_suggestion out;
	struct sbx_diags d = { 0 };
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	if (policy_read_events(&o, "fuzz.jsonl", f, &r) == 0) {
		if (sbx_suggest(r.v, r.n, &in, &out, &d) == 0) {
			if (!out.yaml)
				abort();	/* success without a patch */
			sbx_suggestion_free(&out);
		} else if (!d.errors) {
			abort();	/* refused without saying why */
		}
	}
	fclose(f);
	sbx_diags_free(&d);
	policy_recorded_free(&r);
	return 0;
}
