// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the shell parser and the classifier on raw
 * command text (sbx_sh_parse, sbx_sh_classify: what the hook and
 * `policy explain -- CMD` share), in both modes of enforcement, against
 * agent-default on a scratch project. Oracle: the parser returns 0 or a
 * negative errno; the classifier always reaches a verdict with a reason;
 * a kernel-enforced session is never stricter than hooks only (the mode
 * only relaxes what the classifier cannot see through).
 *
 *   make fuzz && build/fuzz/fuzz_shell tools/fuzz/corpus/fuzz_shell
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "user/connector/classify/classify.h"
#include "user/connector/conn_policy.h"
#include "tools/fuzz/fuzz_project.h"
#include "user/connector/shell/shell.h"

static char project[256];
static struct sbx_conn_policy *policy;

static int no_dns(const char *host, struct sbx_addr **out, size_t *n, void *ctx)
{
	(void)host;
	(void)ctx;
	*out = NULL;
	*n = 0;
	return 2;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sbx_conn_resolver = no_dns;
	policy = fuzz_project("fuzz-shell", project, sizeof(project));
	return 0;
}

static int rank(uint8_t v)
{
	return v == SBX_V_DENY ? 3 : v == SBX_V_ASK ? 2 : v == SBX_V_AUDIT ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_sh_parse p = { 0 };
	struct sbx_conn_verdict hooks, kernel;
	char *text;

	if (size > 4096)
		return 0;
	text = strndup((const char *)data, size);
	if (!text)
		return 0;
	if (sbx_sh_parse(text, project, policy->home, &p) > 0)
		abort();
	sbx_sh_parse_free(&p);
	sbx_cv_init(&hooks);
	sbx_cv_init(&kernel);
	policy->kernel_enforced = false;
	sbx_sh_classify(policy, text, project, &hooks);
	policy->kernel_enforced = true;
	sbx_sh_classify(policy, text, project, &kernel);
	if (hooks.verdict == SBX_V_NONE || !hooks.reason || kernel.verdict == SBX_V_NONE ||
	    !kernel.reason)
		abort();
	if (rank(kernel.verdict) > rank(hooks.verdict))
		abort();
	sbx_cv_clear(&hooks);
	sbx_cv_clear(&kernel);
	free(text);
	return 0;
}
