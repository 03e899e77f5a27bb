// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/project.h"
#include "lib/text.h"

/* $HOME, canonical, or NULL: the ceiling of the walk */
static char *home_dir(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if ((!h || h[0] != '/') && (pw = getpwuid(getuid())))
		h = pw->pw_dir;
	return h && h[0] == '/' ? realpath(h, NULL) : NULL;
}

static bool has_sandbox(const char *dir)
{
	struct stat st;
	char *p;
	bool yes;

	if (asprintf(&p, "%s/.sandbox", strcmp(dir, "/") ? dir : "") < 0)
		return false;
	yes = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
	free(p);
	return yes;
}

int sbx_project_find(const char *start, char **project)
{
	char *dir, *home, *slash;
	struct stat st, up;
	int rc = -ENOENT;

	*project = NULL;
	if (!start)
		return -ENOENT;
	dir = realpath(start, NULL);
	if (!dir)
		return -errno;
	if (stat(dir, &st)) {
		rc = -errno;
		free(dir);
		return rc;
	}
	home = home_dir();
	if (home && !sbx_path_within(dir, home)) {
		free(home);
		home = NULL;
	}
	for (;;) {
		if (has_sandbox(dir)) {
			*project = dir;
			dir = NULL;
			rc = 0;
			break;
		}
		if (!strcmp(dir, "/") || (home && !strcmp(dir, home)))
			break;
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = 0;
		else
			*slash = 0;
		if (stat(dir, &up) || up.st_dev != st.st_dev)
			break;
	}
	free(dir);
	free(home);
	return rc;
}

int sbx_project_resolve(const char *explicit_dir, char **project, char **err)
{
	char *cwd;
	int rc;

	*project = NULL;
	if (err)
		*err = NULL;
	if (explicit_dir) {
		*project = realpath(explicit_dir, NULL);
		if (*project)
			return 0;
		rc = -errno;
		if (err && asprintf(err, "%s: %s", explicit_dir, strerror(-rc)) < 0)
			*err = NULL;
		return rc;
	}
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return -errno;
	rc = sbx_project_find(cwd, project);
	if (rc == -ENOENT && err &&
	    asprintf(err, "not in a project: no .sandbox/ in %s or above it; run bpfsbx init "
		     "in the project (or name it)", cwd) < 0)
		*err = NULL;
	free(cwd);
	return rc;
}
