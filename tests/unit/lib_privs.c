// SPDX-License-Identifier: GPL-2.0
/*
 * sbx_drop_privileges(), checked from outside its own checks: the child
 * starts as root with extra supplementary groups, drops to "nobody", and
 * reports what /proc/self/status says. Any id, group or capability of
 * root left over fails the test.
 */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "lib/fileio.h"
#include "lib/privs.h"
#include "tests/unit/unit.h"

/* the value of "Key:" in /proc/self/status, tabs folded to spaces */
static char *status_field(const char *status, const char *key)
{
	const char *p = strstr(status, key);
	char *v;

	if (!p)
		return strdup("?");
	p += strlen(key);
	while (*p == '\t' || *p == ' ')
		p++;
	v = strndup(p, strcspn(p, "\n"));
	for (char *c = v; *c; c++)
		if (*c == '\t')
			*c = ' ';
	while (*v && v[strlen(v) - 1] == ' ')
		v[strlen(v) - 1] = 0;
	return v;
}

SBX_TEST(lib, drop_privileges_leaves_no_id_group_or_capability)
{
	struct passwd *pw = getpwnam("nobody");
	gid_t extra[] = { 0, 4, 27 }, want[64];
	char report[8192] = "", expect[1024], groups[512] = "";
	int ng = 64, pfd[2], st;
	ssize_t n;
	pid_t pid;

	if (geteuid() != 0)
		SBX_SKIP("needs root (CI runs the unit tests as root)");
	if (!pw)
		SBX_SKIP("no user 'nobody' on this machine");
	CU_ASSERT_FATAL(getgrouplist(pw->pw_name, pw->pw_gid, want, &ng) >= 0);
	CU_ASSERT_FATAL(pipe(pfd) == 0);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		char *status = NULL;
		int rc;

		close(pfd[0]);
		if (setgroups(3, extra))
			_exit(3);
		rc = sbx_drop_privileges(pw->pw_uid, pw->pw_gid, SBX_DROP_SET_ENV);
		sbx_read_file("/proc/self/status", 1 << 16, &status, NULL);
		dprintf(pfd[1], "rc=%d\nUid=%s\nGid=%s\nGroups=%s\nCapEff=%s\nCapPrm=%s\n"
			"CapInh=%s\nCapAmb=%s\nsetuid0=%d\nHOME=%s\n", rc,
			status_field(status, "Uid:"), status_field(status, "Gid:"),
			status_field(status, "Groups:"), status_field(status, "CapEff:"),
			status_field(status, "CapPrm:"), status_field(status, "CapInh:"),
			status_field(status, "CapAmb:"), setuid(0), getenv("HOME"));
		_exit(0);
	}
	close(pfd[1]);
	n = read(pfd[0], report, sizeof(report) - 1);
	close(pfd[0]);
	CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CU_ASSERT_FATAL(n > 0);
	report[n] = 0;

	CU_ASSERT_PTR_NOT_NULL(strstr(report, "rc=0\n"));
	snprintf(expect, sizeof(expect), "Uid=%u %u %u %u\n", pw->pw_uid, pw->pw_uid, pw->pw_uid,
		 pw->pw_uid);
	CU_ASSERT_PTR_NOT_NULL(strstr(report, expect));
	snprintf(expect, sizeof(expect), "Gid=%u %u %u %u\n", pw->pw_gid, pw->pw_gid, pw->pw_gid,
		 pw->pw_gid);
	CU_ASSERT_PTR_NOT_NULL(strstr(report, expect));
	/* the kernel lists supplementary groups sorted; so does this */
	for (int i = 0; i < ng; i++)
		for (int j = i + 1; j < ng; j++)
			if (want[j] < want[i]) {
				gid_t t = want[i];

				want[i] = want[j];
				want[j] = t;
			}
	for (int i = 0; i < ng; i++)
		snprintf(groups + strlen(groups), sizeof(groups) - strlen(groups), "%s%u",
			 i ? " " : "", want[i]);
	snprintf(expect, sizeof(expect), "Groups=%s\n", groups);
	CU_ASSERT_PTR_NOT_NULL(strstr(report, expect));
	CU_ASSERT_PTR_NOT_NULL(strstr(report, "CapEff=0000000000000000\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(report, "CapPrm=0000000000000000\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(report, "CapInh=0000000000000000\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(report, "CapAmb=0000000000000000\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(report, "setuid0=-1\n"));
	snprintf(expect, sizeof(expect), "HOME=%s\n", pw->pw_dir);
	CU_ASSERT_PTR_NOT_NULL(strstr(report, expect));
	if (!strstr(report, "rc=0\n") || !strstr(report, "Groups=" ))
		fprintf(stderr, "%s", report);
}

/* Dropping to root is no drop at all, and says so by changing nothing. */
SBX_TEST(lib, drop_privileges_to_root_changes_nothing)
{
	uid_t before = geteuid();

	CU_ASSERT_EQUAL(sbx_drop_privileges(0, 0, 0), 0);
	CU_ASSERT_EQUAL(geteuid(), before);
}
