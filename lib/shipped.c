// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/shipped.h"
#include "lib/text.h"

#ifndef SBX_SHIPPED_POLICY_DIR
#define SBX_SHIPPED_POLICY_DIR "/usr/local/share/bpfsbx/policy"
#endif

bool sbx_shipped_name_ok(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return false;
	return true;
}

/* build/../policy/shipped, next to a binary in a source tree */
static char *exe_shipped_dir(void)
{
	char exe[PATH_MAX], *slash, *p = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	if (asprintf(&p, "%s/../policy/shipped", exe) < 0)
		return NULL;
	return p;
}

char *sbx_shipped_policy(const char *name, const char *dir, char **looked)
{
	const char *env = getenv("BPFSBX_POLICY_DIR");
	char *dirs[3] = { NULL, NULL, NULL }, *found = NULL;
	struct sbx_strbuf tried = { 0 };
	size_t nd = 0;

	if (!sbx_shipped_name_ok(name))
		return NULL;
	if (dir) {
		dirs[nd++] = strdup(dir);
	} else {
		if (env && *env)
			dirs[nd++] = strdup(env);
		dirs[nd++] = exe_shipped_dir();
		dirs[nd++] = strdup(SBX_SHIPPED_POLICY_DIR);
	}
	for (size_t i = 0; i < nd; i++) {
		char *p = NULL;

		if (!dirs[i])
			continue;
		sbx_sb_join(&tried, ", ", dirs[i]);
		if (!found && asprintf(&p, "%s/%s.yaml", dirs[i], name) >= 0) {
			if (access(p, R_OK) == 0)
				found = realpath(p, NULL);
			free(p);
		}
	}
	for (size_t i = 0; i < nd; i++)
		free(dirs[i]);
	if (looked)
		*looked = tried.p;
	else
		free(tried.p);
	return found;
}

char *sbx_policy_arg(const char *arg)
{
	struct stat st;
	char *p;

	if (!arg || !*arg) {
		errno = ENOENT;
		return NULL;
	}
	if (stat(arg, &st) == 0 && S_ISREG(st.st_mode))
		return realpath(arg, NULL);
	p = sbx_shipped_name_ok(arg) ? sbx_shipped_policy(arg, NULL, NULL) : NULL;
	if (!p)
		errno = ENOENT;
	return p;
}
