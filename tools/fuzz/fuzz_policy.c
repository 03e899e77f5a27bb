// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the policy language: every input is loaded with
 * sbx_policy_load_buffer (fake resolver, HOME and PROJECT in a scratch
 * directory made once), and what loads is compiled and dumped to
 * /dev/null, so the compiler and the dump see parser output too.
 *
 *   make fuzz && build/fuzz/fuzz_policy tools/fuzz/corpus/fuzz_policy
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "policy/policy.h"
#include "tools/fuzz/fuzz_project.h"

static char home[256], project[256], resolv[256], shipped[4096];
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[64];
	const char *env = getenv("BPFSBX_POLICY_DIR");
	FILE *f;

	(void)argc;
	(void)argv;
	fuzz_scratch("fuzz-policy", dir, home, sizeof(home), project, sizeof(project));
	snprintf(resolv, sizeof(resolv), "%s/resolv.conf", dir);
	f = fopen(resolv, "w");
	if (f) {
		fputs("nameserver 192.0.2.53\nnameserver 2001:db8::53\n", f);
		fclose(f);
	}
	/* for `extends: agent-default` */
	if (env && *env)
		snprintf(shipped, sizeof(shipped), "%s", env);
	else
		fuzz_shipped_dir(shipped, sizeof(shipped));
	devnull = fopen("/dev/null", "w");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_policy_env env = {
		.home = home,
		.project = project,
		.shipped_dir = shipped[0] ? shipped : NULL,
		.resolve = fuzz_resolve,
		.resolv_conf = resolv,
		.hardlink_scan_max = 200,
	};
	char name[300];

	/* relative extends resolve against the project directory */
	snprintf(name, sizeof(name), "%s/policy.yaml", project);
	fuzz_load_compile(name, (const char *)data, size, &env, devnull);
	/* and as run --learn has it (policy/learn.c), for a text that may
	 * extend agent-default: learning refuses with a diagnostic or gives a
	 * policy that compiles as any other */
	if (memmem(data, size, "agent-default", 13)) {
		struct sbx_diags d = { 0 };
		struct sbx_policy *p = sbx_policy_load_buffer(name, (const char *)data, size, &env, &d);
		struct sbx_compiled c;
		size_t before = d.errors;

		if (p) {
			if (sbx_policy_learn(p, env.shipped_dir, &d)) {
				if (d.errors == before)
					abort();	/* refused without saying why */
			} else if (sbx_policy_compile(p, 1, &c, &d) == 0) {
				sbx_compiled_free(&c);
			}
			sbx_policy_free(p);
		}
		sbx_diags_free(&d);
	}
	return 0;
}
