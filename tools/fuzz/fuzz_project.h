/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz_project.h - a scratch project extending agent-default, loaded once
 * by a fuzzer's LLVMFuzzerInitialize (fuzz_hook, fuzz_shell): $HOME is the
 * project, the shipped policies are found next to the source tree; and
 * the fuzzers' one resolver, which reaches no network.
 */
#ifndef SBX_FUZZ_PROJECT_H
#define SBX_FUZZ_PROJECT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "user/connector/conn_policy.h"
#include "policy/policy.h"

/* Deterministic fake DNS: most names get one or two documentation
 * addresses, names starting with "x" do not resolve. */
static inline int fuzz_resolve(const char *host, struct sbx_addr **out, size_t *n, void *ctx)
{
	uint64_t h = sbx_hash_name(host, strlen(host));

	(void)ctx;
	*out = NULL;
	*n = 0;
	if (host[0] == 'x')
		return 2;
	*out = calloc(2, sizeof(**out));
	if (!*out)
		return 12;
	(*out)[0].family = AF_INET;
	(*out)[0].addr[0] = 192;
	(*out)[0].addr[1] = 0;
	(*out)[0].addr[2] = 2;
	(*out)[0].addr[3] = (uint8_t)h;
	*n = 1;
	if (h & 0x100) {
		(*out)[1].family = AF_INET6;
		(*out)[1].addr[0] = 0x20;
		(*out)[1].addr[1] = 0x01;
		(*out)[1].addr[2] = 0x0d;
		(*out)[1].addr[3] = 0xb8;
		(*out)[1].addr[15] = (uint8_t)(h >> 16);
		*n = 2;
	}
	return 0;
}

/* A scratch directory /tmp/sbx-NAME-XXXXXX (dir, at least 64 bytes) with
 * an empty home/ and proj/ in it, for the fuzzers that load a policy of
 * their own (fuzz_policy, fuzz_suggest) */
static inline void fuzz_scratch(const char *name, char *dir, char *home, size_t home_size,
				char *project, size_t project_size)
{
	snprintf(dir, 64, "/tmp/sbx-%s-XXXXXX", name);
	if (!mkdtemp(dir))
		abort();
	snprintf(home, home_size, "%s/home", dir);
	snprintf(project, project_size, "%s/proj", dir);
	mkdir(home, 0755);
	mkdir(project, 0755);
}

/* The shipped policies next to the build directory (build/fuzz/NAME ->
 * build/../policy/shipped), or "" when /proc/self/exe cannot be read */
static inline void fuzz_shipped_dir(char *out, size_t size)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	out[0] = 0;
	if (n <= 0)
		return;
	exe[n] = 0;
	/* drop "/NAME" and "/fuzz": the build directory */
	for (int i = 0; i < 2; i++) {
		char *sl = strrchr(exe, '/');

		if (sl)
			*sl = 0;
	}
	snprintf(out, size, "%.4000s/../policy/shipped", exe);
}

/*
 * Load NAME's text as a policy under ENV, compile and dump it to OUT: the
 * parser's contract, in one place for every policy fuzzer. A policy that
 * loads despite an error, or is refused without a reason, aborts.
 */
static inline void fuzz_load_compile(const char *name, const char *text, size_t size,
				     const struct sbx_policy_env *env, FILE *out)
{
	struct sbx_diags d = { 0 };
	struct sbx_policy *p = sbx_policy_load_buffer(name, text, size, env, &d);

	if (p) {
		struct sbx_compiled c;

		if (d.errors)
			abort();	/* loaded despite an error: never allowed */
		if (sbx_policy_compile(p, 1, &c, &d) == 0) {
			sbx_compiled_dump(&c, p, out);
			sbx_compiled_free(&c);
		}
		sbx_policy_free(p);
	} else if (!d.errors) {
		abort();	/* rejected without saying why */
	}
	sbx_diags_print(&d, out);
	sbx_diags_free(&d);
}

static inline struct sbx_conn_policy *fuzz_project(const char *name, char *project, size_t size)
{
	char dir[64], path[512], shipped[4200];
	struct sbx_conn_policy *policy = NULL;
	char *err = NULL;
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
	if (!getenv("BPFSBX_POLICY_DIR")) {
		fuzz_shipped_dir(shipped, sizeof(shipped));
		if (shipped[0])
			setenv("BPFSBX_POLICY_DIR", shipped, 1);
	}
	if (sbx_conn_policy_load(project, &policy, &err) < 0) {
		fprintf(stderr, "%s: %s\n", name, err ? err : "policy");
		abort();
	}
	return policy;
}

#endif
