// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "lib/privs.h"

#define MAX_GROUPS 1024

/* capget(2), which glibc does not wrap: is any capability left? */
static bool caps_left(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

	if (syscall(SYS_capget, &h, d))
		return true;	/* cannot tell: fail closed */
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			return true;
	return false;
}

static bool same_groups(const gid_t *want, int n)
{
	gid_t have[MAX_GROUPS];
	int m = getgroups(MAX_GROUPS, have);

	if (m != n)
		return false;
	for (int i = 0; i < n; i++) {
		bool found = false;

		for (int j = 0; j < m && !found; j++)
			found = have[j] == want[i];
		if (!found)
			return false;
	}
	return true;
}

int sbx_drop_privileges(uid_t uid, gid_t gid, unsigned flags)
{
	struct passwd *pw;
	gid_t groups[MAX_GROUPS];
	int ng = 0;
	uid_t r, e, s;
	gid_t rg, eg, sg;

	if (uid == 0)
		return 0;
	pw = getpwuid(uid);
	if (pw) {
		ng = MAX_GROUPS;
		if (getgrouplist(pw->pw_name, gid, groups, &ng) < 0)
			return -E2BIG;
	}
	if (setgroups(ng, groups) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		return -errno;

	if (getresuid(&r, &e, &s) || r != uid || e != uid || s != uid)
		return -EPERM;
	if (getresgid(&rg, &eg, &sg) || rg != gid || eg != gid || sg != gid)
		return -EPERM;
	if (!same_groups(groups, ng) || caps_left())
		return -EPERM;
	/* make sure there is no way back */
	if (setuid(0) == 0 || (gid != 0 && setgid(0) == 0))
		return -EPERM;

	if ((flags & SBX_DROP_SET_ENV) && pw &&
	    (setenv("HOME", pw->pw_dir, 1) || setenv("USER", pw->pw_name, 1) ||
	     setenv("LOGNAME", pw->pw_name, 1)))
		return -errno;
	return 0;
}

bool sbx_uid_is(uid_t uid, const char *who)
{
	struct passwd *pw = getpwuid(uid);
	struct group *g;

	if (!pw || !who)
		return false;
	if (who[0] != '@')
		return !strcmp(who, pw->pw_name);
	g = getgrnam(who + 1);
	if (!g)
		return false;
	if (g->gr_gid == pw->pw_gid)
		return true;
	for (char **m = g->gr_mem; m && *m; m++)
		if (!strcmp(*m, pw->pw_name))
			return true;
	return false;
}
