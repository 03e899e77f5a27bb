// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the tests/unit/policy_*.c files: loading from a
 * string with a fake resolver, dumping to memory, building trees.
 * The prototypes are repeated in each test file (no shared header).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "lib/alloc.h"
#include "policy/policy.h"
#include "tests/unit/policy_helpers.h"

/*
 * a.example -> 192.0.2.1; b.example -> 192.0.2.2 and 2001:db8::2;
 * v6.example -> 2001:db8::6; mapped.example -> ::ffff:198.51.100.7;
 * anything else does not resolve.
 */
int pt_resolve(const char *host, struct sbx_addr **out, size_t *n, void *ctx)
{
	static const struct { const char *h; const char *a[2]; } tab[] = {
		{ "a.example", { "192.0.2.1", NULL } },
		{ "b.example", { "192.0.2.2", "2001:db8::2" } },
		{ "v6.example", { "2001:db8::6", NULL } },
		{ "mapped.example", { "::ffff:198.51.100.7", NULL } },
	};

	(void)ctx;
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (strcmp(tab[i].h, host))
			continue;
		*out = calloc(2, sizeof(**out));
		if (!*out)
			return ENOMEM;
		for (int j = 0; j < 2 && tab[i].a[j]; j++) {
			struct sbx_addr *a = &(*out)[*n];

			if (inet_pton(AF_INET, tab[i].a[j], a->addr) == 1)
				a->family = AF_INET;
			else if (inet_pton(AF_INET6, tab[i].a[j], a->addr) == 1)
				a->family = AF_INET6;
			(*n)++;
		}
		return 0;
	}
	return ENOENT;
}

void pt_env(struct sbx_policy_env *env, const char *home, const char *project)
{
	memset(env, 0, sizeof(*env));
	env->home = home;
	env->project = project;
	env->resolve = pt_resolve;
	env->shipped_dir = "policy/shipped";
}

char *pt_path(const char *fmt, ...)
{
	char *p = NULL;
	va_list ap;

	va_start(ap, fmt);
	p = sbx_vformat(fmt, ap);
	va_end(ap);
	return p;
}

void pt_mkdirs(const char *path)
{
	char *p = strdup(path);

	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
	free(p);
}

int pt_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* The home and project of a test, under its scratch directory. */
void pt_dirs(const char *tmp, char **home, char **proj)
{
	*home = pt_path("%s/home", tmp);
	*proj = pt_path("%s/proj", tmp);
	pt_mkdirs(*home);
	pt_mkdirs(*proj);
}

struct sbx_policy *pt_load(const char *yaml, const char *home, const char *project,
			   struct sbx_diags *d)
{
	struct sbx_policy_env env;

	pt_env(&env, home, project);
	return sbx_policy_load_buffer("test.yaml", yaml, strlen(yaml), &env, d);
}

char *pt_dump(const struct sbx_compiled *c, const struct sbx_policy *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	sbx_compiled_dump(c, p, f);
	fclose(f);
	return buf;
}

/* Load and compile; NULL (and nothing to free) on any error. */
struct sbx_policy *pt_compile(const char *yaml, const char *home, const char *project,
			      struct sbx_compiled *c, struct sbx_diags *d)
{
	struct sbx_policy *p = pt_load(yaml, home, project, d);

	if (!p)
		return NULL;
	if (sbx_policy_compile(p, 7, c, d)) {
		sbx_policy_free(p);
		return NULL;
	}
	return p;
}

/* Verdict of path for access a; 0xff on error. */
int pt_verdict(const struct sbx_compiled *c, const char *path, enum sbx_access a)
{
	struct sbx_decision d;

	if (sbx_decide_path(c, path, a, &d))
		return 0xff;
	return d.verdict;
}

bool pt_has_diag(const struct sbx_diags *d, enum sbx_diag_level lvl, const char *substr)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].level == lvl && strstr(d->v[i].msg, substr))
			return true;
	return false;
}
