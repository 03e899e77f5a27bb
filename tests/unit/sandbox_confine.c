// SPDX-License-Identifier: GPL-2.0
/*
 * `run` on the fallback tier (user/sandbox/confine.c), judged by effect on
 * this host: a child confines itself with the real policy loader, the
 * Landlock plan and the never-list, then makes the real syscalls. Only the
 * test's scratch directory is written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "policy/landlock.h"
#include "user/sandbox/confine.h"
#include "user/sandbox/seccomp.h"
#include "tests/unit/unit.h"
#include "tests/unit/policy_helpers.h"

static const char confine_policy[] =
	"version: 1\n"
	"files:\n"
	"  default: {read: allow, write: deny, exec: allow}\n"
	"  rules:\n"
	"    - {path: \"${PROJECT}\", access: write, verdict: allow, reason: the project}\n"
	"    - {path: \"${PROJECT}/secret.txt\", access: [read, write], verdict: deny, reason: f}\n"
	"network:\n  default: deny\n"
	"%s";

enum { R_SECRET = 1, R_OK_READ = 2, R_OK_WRITE = 4, R_POLICY = 8, R_BPF = 16, R_REQUIRE = 32 };

/* a child: confine, then one bit per syscall that went as the tier says */
static int confined_child(const char *policy, const char *home, const char *proj)
{
	int st = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char *err = NULL, *t;
		int rc = sbx_fallback_confine(policy, home, proj, false, &err), r = 0, fd;

		if (rc) {
			printf("    confine: %s\n", err ? err : "?");
			fflush(stdout);
			_exit(rc == -EPERM && err && strstr(err, "sandbox.require") ? R_REQUIRE : 64);
		}
		t = pt_path("%s/secret.txt", proj);
		r |= open(t, O_RDONLY) < 0 && errno == EACCES ? R_SECRET : 0;
		free(t);
		t = pt_path("%s/src/ok.txt", proj);
		fd = open(t, O_RDONLY);
		r |= fd >= 0 ? R_OK_READ : 0;
		if (fd >= 0)
			close(fd);
		fd = open(t, O_WRONLY | O_APPEND);
		r |= fd >= 0 && write(fd, "x", 1) == 1 ? R_OK_WRITE : 0;
		if (fd >= 0)
			close(fd);
		free(t);
		t = pt_path("%s/.sandbox/policy.yaml", proj);
		r |= open(t, O_WRONLY | O_TRUNC) < 0 && errno == EACCES ? R_POLICY : 0;
		free(t);
		r |= syscall(SYS_bpf, 0, NULL, 0) < 0 && errno == EPERM ? R_BPF : 0;
		_exit(r);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

SBX_TEST(sandbox, fallback_confine_holds_by_effect)
{
	char *home, *proj, *t, *policy, *text;
	int got;

	if (sbx_landlock_abi() < 1 || !sbx_seccomp_available())
		SBX_SKIP("Landlock or seccomp filters are not available on this kernel");
	pt_dirs(sbx_unit_tmpdir(), &home, &proj);
	t = pt_path("%s/.sandbox", proj);
	pt_mkdirs(t);
	free(t);
	t = pt_path("%s/src", proj);
	pt_mkdirs(t);
	free(t);
	t = pt_path("%s/secret.txt", proj);
	pt_write(t, "secret\n");
	free(t);
	t = pt_path("%s/src/ok.txt", proj);
	pt_write(t, "ok\n");
	free(t);
	policy = pt_path("%s/.sandbox/policy.yaml", proj);
	text = pt_path(confine_policy, "");
	pt_write(policy, text);
	free(text);

	got = confined_child(policy, home, proj);
	printf("    confined: %#x (want %#x)\n", got, R_SECRET | R_OK_READ | R_OK_WRITE | R_POLICY |
	       R_BPF);
	CU_ASSERT_EQUAL(got, R_SECRET | R_OK_READ | R_OK_WRITE | R_POLICY | R_BPF);

	/* a policy that needs the full tier is refused here, before anything */
	text = pt_path(confine_policy, "sandbox:\n  require: bpf-lsm\n");
	pt_write(policy, text);
	free(text);
	CU_ASSERT_EQUAL(confined_child(policy, home, proj), R_REQUIRE);
	free(policy);
	free(home);
	free(proj);
}
