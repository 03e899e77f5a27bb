// SPDX-License-Identifier: GPL-2.0
/*
 * check.c - the classifier's checks, which every other part builds on: a
 * file, a host or a URL against the policy, a pattern's expansions
 * against its deny and ask rules, and the built-in and "could not
 * analyse" verdicts. A line's verdict is the most restrictive of its
 * parts (cls_merge).
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/alloc.h"
#include "lib/text.h"
#include "user/connector/classify/check.h"

#define MAX_GLOB_MATCHES 256
#define MAX_BRACE 64
#define MAX_COMPONENTS 64
#define MAX_STEPS 20000		/* overlap recursion: past it, assume overlap */

void cls_merge(struct cls *c, struct sbx_conn_verdict *v)
{
	sbx_cv_merge(c->acc, v);
}

void cls_builtin(struct cls *c, uint8_t verdict, const char *what, const char *reason)
{
	struct sbx_conn_verdict v;

	sbx_cv_init(&v);
	sbx_cv_set(&v, verdict, what, "%s", reason);
	cls_merge(c, &v);
}

void cls_unanalysed(struct cls *c, const char *why)
{
	struct sbx_conn_verdict v;

	sbx_cv_init(&v);
	sbx_cv_set(&v, SBX_V_ASK, "command line",
		   "could not analyse the command (%s); a person has to look at it", why);
	cls_merge(c, &v);
}

const char *cls_basename(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static bool is_dev_stream(const char *p)
{
	return !strcmp(p, "/dev/null") || !strcmp(p, "/dev/zero") ||
	       !strcmp(p, "/dev/stdin") || !strcmp(p, "/dev/stdout") ||
	       !strcmp(p, "/dev/stderr") || !strcmp(p, "/dev/tty") ||
	       !strncmp(p, "/dev/fd/", 8) || !strcmp(p, "/dev/random") ||
	       !strcmp(p, "/dev/urandom");
}

void cls_decide_abs(struct cls *c, const char *abs, enum sbx_access acc)
{
	struct sbx_conn_verdict v;

	if (is_dev_stream(abs))
		return;
	sbx_cv_init(&v);
	sbx_conn_decide_path(c->cp, abs, acc, &v);
	cls_merge(c, &v);
}

/* A file argument: resolve, expand globs against the file system, decide
 * the pattern itself and every match. */
void cls_check_file(struct cls *c, word_t *w, const char *cwd, enum sbx_access acc)
{
	char *abs;

	if (w->dynamic) {
		cls_unanalysed(c, "a file name is computed at run time");
		return;
	}
	if (!w->val[0])
		return;
	abs = sbx_sh_resolve(w->val, cwd, c->home);
	if (!abs) {
		cls_unanalysed(c, "a relative path after a cd that could not be followed");
		return;
	}
	cls_decide_abs(c, abs, acc);
	/* a pattern anywhere: what it can expand to, on its text */
	if (w->glob)
		cls_check_pattern(c, abs, acc);
	/* expand only a pattern in the last component: one directory read,
	 * never a walk of the whole file system inside a hook */
	const char *last = strrchr(abs, '/');
	if (w->glob && !memchr(abs, '*', last - abs) && !memchr(abs, '?', last - abs) &&
	    !memchr(abs, '[', last - abs) && !memchr(abs, '{', last - abs)) {
		glob_t g;

		if (glob(abs, GLOB_BRACE | GLOB_NOSORT, NULL, &g) == 0) {
			if (g.gl_pathc > MAX_GLOB_MATCHES)
				cls_unanalysed(c, "a pattern matches too many files");
			else
				for (size_t k = 0; k < g.gl_pathc; k++)
					cls_decide_abs(c, g.gl_pathv[k], acc);
			globfree(&g);
		}
	}
	free(abs);
}

void cls_check_host(struct cls *c, const char *host, int port)
{
	struct sbx_conn_verdict v;

	sbx_cv_init(&v);
	sbx_conn_decide_host(c->cp, host, port, &v);
	cls_merge(c, &v);
}

void cls_check_url(struct cls *c, word_t *w, int default_port)
{
	char *host = NULL;
	int port = 0;

	if (w->dynamic) {
		cls_unanalysed(c, "a network address is computed at run time");
		return;
	}
	if (sbx_conn_parse_url(w->val, default_port, &host, &port) < 0) {
		if (!strncasecmp(w->val, "file://", 7))
			return;
		cls_unanalysed(c, "a network address that could not be parsed");
		return;
	}
	cls_check_host(c, host, port);
	free(host);
}

/* "[user@]host:path" (scp, rsync, git) -> host; NULL when it is local. */
char *cls_remote_host(const char *s)
{
	const char *colon = strchr(s, ':'), *slash = strchr(s, '/'), *at;

	if (strstr(s, "://"))
		return NULL;
	if (!colon || (slash && slash < colon) || colon == s)
		return NULL;
	at = memchr(s, '@', colon - s);
	s = at ? at + 1 : s;
	if (*s == '[') {
		const char *e = strchr(s, ']');
		return e ? strndup(s + 1, e - s - 1) : NULL;
	}
	return strndup(s, colon - s);
}

bool cls_has_glob(const char *s)
{
	return strpbrk(s, "*?[{") != NULL;
}

/* ---- brace expansion of a pattern's text (a{b,c}d -> abd acd) ---------- */

static void brace_expand(const char *s, char **out, size_t *n)
{
	const char *open = NULL, *close = NULL, *p;
	int depth = 0;

	if (*n >= MAX_BRACE)
		return;
	for (p = s; *p; p++) {
		if (*p == '{' && depth++ == 0)
			open = p;
		else if (*p == '}' && depth > 0 && --depth == 0) {
			close = p;
			break;
		}
	}
	if (!open || !close) {
		out[(*n)++] = sbx_strdup(s);
		return;
	}
	const char *alt = open + 1;

	depth = 0;
	for (p = open + 1; p <= close && *n < MAX_BRACE; p++) {
		if (*p == '{')
			depth++;
		else if (*p == '}' && depth > 0)
			depth--;
		else if ((*p == ',' && depth == 0) || p == close) {
			char *t = sbx_asprintf("%.*s%.*s%s", (int)(open - s), s, (int)(p - alt), alt,
					       close + 1);

			brace_expand(t, out, n);
			free(t);
			alt = p + 1;
		}
	}
}

/* ---- do two patterns' components overlap? -------------------------------- */

static size_t split(char *s, char **comp, size_t max)
{
	size_t n = 0;

	for (char *t = strtok(s, "/"); t && n < max; t = strtok(NULL, "/"))
		comp[n++] = t;
	return n;
}

static bool comp_match(const char *p, const char *e)
{
	bool pg = cls_has_glob(p), eg = cls_has_glob(e);

	if (!pg && !eg)
		return !strcmp(p, e);
	/* without FNM_PERIOD: a shell with dotglob lets * reach dot files */
	if (pg && !fnmatch(p, e, 0))
		return true;
	if (eg && !fnmatch(e, p, 0))
		return true;
	return false;
}

/* p: the argument's components; e: the rule's (a trailing "**" for a
 * directory rule); ancestors: a pattern naming a directory above the
 * rule's object counts (writes: rm -r, mv of the parent) */
static bool overlap(char **p, size_t np, char **e, size_t ne, bool ancestors, int *steps)
{
	if (++*steps > MAX_STEPS)
		return true;
	if (ne && !strcmp(e[0], "**") &&
	    (overlap(p, np, e + 1, ne - 1, ancestors, steps) ||
	     (np && overlap(p + 1, np - 1, e, ne, ancestors, steps))))
		return true;
	if (np && !strcmp(p[0], "**") &&
	    (overlap(p + 1, np - 1, e, ne, ancestors, steps) ||
	     (ne && overlap(p, np, e + 1, ne - 1, ancestors, steps))))
		return true;
	if (!np)
		return !ne || ancestors || (ne == 1 && !strcmp(e[0], "**"));
	if (!ne)
		return false;
	if (!strcmp(e[0], "**") || !strcmp(p[0], "**"))
		return false;	/* handled above */
	return comp_match(p[0], e[0]) && overlap(p + 1, np - 1, e + 1, ne - 1, ancestors, steps);
}

/* one pattern of a rule as written -> absolute components */
static char *rule_abs(const struct cls *c, const char *pat)
{
	const char *proj = c->project ? c->project : "/nonexistent-project";

	if (!strncmp(pat, "${PROJECT}", 10))
		return sbx_asprintf("%s%s", proj, pat + 10);
	if (!strncmp(pat, "${HOME}", 7))
		return sbx_asprintf("%s%s", c->home, pat + 7);
	if (pat[0] == '~' && (pat[1] == '/' || !pat[1]))
		return sbx_asprintf("%s%s", c->home, pat + 1);
	if (pat[0] == '/')
		return sbx_strdup(pat);
	return sbx_asprintf("**/%s", pat);	/* a name anywhere, or a relative rule */
}

static bool rule_covers(const struct cls *c, const char *rule_pat, char **pc, size_t np,
			bool ancestors)
{
	char *abs = rule_abs(c, rule_pat), *ec[MAX_COMPONENTS + 1];
	size_t l = strlen(abs), ne;
	bool dir = l > 1 && abs[l - 1] == '/';
	int steps = 0;
	bool r;

	ne = split(abs, ec, MAX_COMPONENTS);
	if (dir)
		ec[ne++] = (char *)"**";
	r = overlap(pc, np, ec, ne, ancestors, &steps);
	free(abs);
	return r;
}

/* A pattern (absolute, as the shell would see it before expansion): the
 * strictest deny or ask rule for acc that one of its expansions can hit. */
void cls_check_pattern(struct cls *c, const char *abs, enum sbx_access acc)
{
	char *alts[MAX_BRACE];
	size_t nalt = 0;

	if (!c->cp || !c->cp->pol)
		return;
	brace_expand(abs, alts, &nalt);
	for (size_t a = 0; a < nalt; a++) {
		char *pc[MAX_COMPONENTS], *buf = sbx_strdup(alts[a]);
		size_t np = split(buf, pc, MAX_COMPONENTS);

		for (uint32_t id = 1; id <= sbx_policy_rule_count(c->cp->pol); id++) {
			const struct sbx_rule_info *r = sbx_policy_rule(c->cp->pol, id);
			char *pats, *save = NULL;

			if (!r || r->is_default || r->section != SBX_SEC_FILES ||
			    !(r->access & SBX_ACCBIT(acc)) ||
			    (r->verdict != SBX_V_DENY && r->verdict != SBX_V_ASK))
				continue;
			pats = sbx_strdup(r->pattern);
			for (char *q = strtok_r(pats, ",", &save); q; q = strtok_r(NULL, ",", &save)) {
				while (*q == ' ')
					q++;
				if (!*q || !rule_covers(c, q, pc, np, acc != SBX_ACC_READ))
					continue;
				struct sbx_conn_verdict v;

				sbx_cv_init(&v);
				sbx_cv_set(&v, r->verdict, NULL, "%s can expand to %s (rule \"%s\" at %s:%d%s%s)",
					   alts[a], q, r->pattern, r->file, r->line,
					   r->reason ? ": " : "", r->reason ? r->reason : "");
				free(v.what);
				v.what = sbx_asprintf("%s %s", sbx_access_name(acc), alts[a]);
				cls_merge(c, &v);
				break;
			}
			free(pats);
		}
		free(buf);
	}
	for (size_t a = 0; a < nalt; a++)
		free(alts[a]);
}

/* ---- constructs the classifier cannot see through ---------------------- */

void cls_opaque(struct cls *c, const char *why)
{
	struct sbx_conn_verdict v;

	sbx_cv_init(&v);
	if (c->kernel) {
		sbx_cv_set(&v, SBX_V_ALLOW, "command line",
			   "%s: not analysed here; the kernel checks every open, exec and "
			   "connect it makes", why);
	} else {
		sbx_cv_set(&v, SBX_V_ASK, "command line",
			   "could not analyse the command (%s), and no kernel enforcement is in "
			   "force (hooks only); a person has to look at it", why);
	}
	cls_merge(c, &v);
}
