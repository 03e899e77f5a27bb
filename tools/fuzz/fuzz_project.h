/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz_project.h - a scratch project extending agent-default, loaded once
 * by a fuzzer's LLVMFuzzerInitialize (fuzz_hook, fuzz_shell): $HOME is the
 * project, the shipped policies are found next to the source tree.
 */
#ifndef SBX_FUZZ_PROJECT_H
#define SBX_FUZZ_PROJECT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "user/connector/conn_policy.h"

static inline struct sbx_conn_policy *fuzz_project(const char *name, char *project, size_t size)
{
	char dir[64], path[512], exe[4096], shipped[4200];
	struct sbx_conn_policy *policy = NULL;
	char *err = NULL;
	ssize_t n;
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/sbx-%s-XXXXXX", name);
	if (!mkdtemp(dir))
		abort();
	snprintf(project, size, "%s", dir);
	snprintf(path, sizeof(path), "%s/.sandbox", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/.sandbox/policy.yaml", dir);
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs("version: 1\nextends: agent-default\n", f);
	fclose(f);
	setenv("HOME", dir, 1);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (!getenv("BPFSBX_POLICY_DIR") && n > 0) {
		exe[n] = 0;
		for (int i = 0; i < 2; i++) {
			char *sl = strrchr(exe, '/');
			if (sl)
				*sl = 0;
		}
		snprintf(shipped, sizeof(shipped), "%s/../policy/shipped", exe);
		setenv("BPFSBX_POLICY_DIR", shipped, 1);
	}
	if (sbx_conn_policy_load(project, &policy, &err) < 0) {
		fprintf(stderr, "%s: %s\n", name, err ? err : "policy");
		abort();
	}
	return policy;
}

#endif
