// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the machine policy: every input becomes
 * machine.yaml of a scratch machine directory (the parser's machine mode
 * and projects:), under a fixed project that extends agent-default and
 * has a rule of each kind; what loads is compiled (the floor's rewrite of
 * the rules) and dumped to /dev/null.
 *
 *   make fuzz && build/fuzz/fuzz_machine tools/fuzz/corpus/fuzz_machine
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "policy/policy.h"
#include "tools/fuzz/fuzz_project.h"

static char home[256], project[256], mdir[128], mfile[160], shipped[4096];
static FILE *devnull;

static const char project_policy[] =
	"version: 1\n"
	"extends: agent-default\n"
	"files:\n"
	"  rules:\n"
	"    - {path: ~/work/, access: write, verdict: allow, reason: work}\n"
	"    - {path: notes.txt, access: read, verdict: audit, reason: notes}\n"
	"network:\n"
	"  rules:\n"
	"    - {host: api.example.org, port: 443, verdict: allow, reason: api}\n"
	"commands:\n"
	"  rules:\n"
	"    - {command: make, verdict: allow, reason: builds}\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[64];

	(void)argc;
	(void)argv;
	fuzz_scratch("fuzz-machine", dir, home, sizeof(home), project, sizeof(project));
	snprintf(mdir, sizeof(mdir), "%s/machine", dir);
	snprintf(mfile, sizeof(mfile), "%s/machine.yaml", mdir);
	if (mkdir(mdir, 0755) && chmod(mdir, 0755))
		abort();
	/* a tree for the floor's walk below machine directories */
	{
		char p[512];

		snprintf(p, sizeof(p), "%s/.ssh", home);
		mkdir(p, 0700);
		snprintf(p, sizeof(p), "%s/.ssh/cacert.pem", home);
		fclose(fopen(p, "w"));
		snprintf(p, sizeof(p), "%s/work", home);
		mkdir(p, 0755);
	}
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
		.hardlink_scan_max = 200,
		.machine_dir = mdir,
	};
	int fd = open(mfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd))
		abort();
	fuzz_load_compile("policy.yaml", project_policy, sizeof(project_policy) - 1, &env,
			  devnull);
	return 0;
}
