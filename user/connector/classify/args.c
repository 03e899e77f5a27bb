// SPDX-License-Identifier: GPL-2.0
/*
 * classify_args.c - what an argument can name, whatever the program.
 *
 * The rule: an argument that names, or can expand to, a denied or asked
 * path is decided as such. Three ways an argument names a path without
 * the program's spec saying so:
 *
 *   - a pattern (`~/.[s]sh/id_rsa`, `~/.*\/id_rsa`, `~/{.ssh,x}/id_rsa`):
 *     decided on its literal text against the policy's own deny and ask
 *     rules, component by component, without reading the file system
 *     (a pattern in a directory component would mean a walk);
 *   - an operand or option value of a program with no spec (tar, dd's
 *     kin, vim -es, make): decided by the rules that name it, never by
 *     the section default (which would refuse `gcc -I/usr/include`);
 *   - a path inside a program text (awk's `getline < "FILE"`, sed's
 *     `r FILE`, python -c, vim -c): the same.
 *
 * What stays opaque (eval, sh reading its commands from a pipe, python
 * -c, awk's system()) is asked when the hook is the only enforcement and
 * left to the kernel when the caller runs in a kernel-confined session:
 * there every open, exec and connect is checked anyway (cls_opaque).
 */
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/alloc.h"
#include "user/connector/classify/programs.h"

#define MAX_BRACE 64
#define MAX_COMPONENTS 64
#define MAX_STEPS 20000		/* overlap recursion: past it, assume overlap */

static bool has_glob(const char *s)
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
	bool pg = has_glob(p), eg = has_glob(e);

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

/* ---- words that name paths, for programs with no spec ----------------- */

/* Decided by a rule that names the path, not by the section default. */
static void check_named(struct cls *c, const char *abs, enum sbx_access acc)
{
	struct sbx_decision d = { 0 };
	const struct sbx_rule_info *r;
	struct sbx_conn_verdict v;

	if (!c->cp)
		return;
	if (sbx_decide_path(&c->cp->comp, abs, acc, &d) < 0)
		return;
	r = d.rule_id && d.rule_id < SBX_RULE_BUILTIN ? sbx_policy_rule(c->cp->pol, d.rule_id)
						       : NULL;
	if (d.rule_id < SBX_RULE_BUILTIN && (!r || r->is_default))
		return;
	if (d.verdict != SBX_V_DENY && d.verdict != SBX_V_ASK)
		return;
	sbx_cv_init(&v);
	sbx_conn_decide_path(c->cp, abs, acc, &v);
	cls_merge(c, &v);
}

/* token: a path as a program would take it (~ and $HOME expanded here,
 * since programs like vim expand them themselves) */
static void check_token(struct cls *c, const char *tok, const char *cwd)
{
	char *t = NULL, *abs;

	if (!*tok || !strcmp(tok, "-"))
		return;
	if (tok[0] == '~' && (tok[1] == '/' || !tok[1]))
		t = sbx_asprintf("%s%s", c->home, tok + 1);
	else if (!strncmp(tok, "$HOME", 5) && (tok[5] == '/' || !tok[5]))
		t = sbx_asprintf("%s%s", c->home, tok + 5);
	else if (!strncmp(tok, "${HOME}", 7) && (tok[7] == '/' || !tok[7]))
		t = sbx_asprintf("%s%s", c->home, tok + 7);
	else
		t = sbx_strdup(tok);
	abs = sbx_sh_resolve(t, cwd, c->home);
	free(t);
	if (!abs)
		return;
	for (int a = SBX_ACC_READ; a <= SBX_ACC_WRITE; a++) {
		check_named(c, abs, a);
		if (has_glob(abs))
			cls_check_pattern(c, abs, a);
	}
	free(abs);
}

/* A program text (awk, sed, python -c, vim -c): the paths in it. */
void cls_scan_text(struct cls *c, const char *text, const char *cwd)
{
	char *buf = sbx_strdup(text), *save = NULL;

	for (char *t = strtok_r(buf, " \t\n\"'`()<>|;,=", &save); t;
	     t = strtok_r(NULL, " \t\n\"'`()<>|;,=", &save))
		if (t[0] == '/' || t[0] == '~' || t[0] == '$' || !strncmp(t, "./", 2) ||
		    !strncmp(t, "../", 3))
			check_token(c, t, cwd);
	free(buf);
}

/* Every operand and option value of a program with no spec. */
void cls_scan_args(struct cls *c, int argc, word_t *argv, const char *cwd)
{
	for (int k = 1; k < argc; k++) {
		const char *a = argv[k].val, *eq;

		if (argv[k].dynamic)
			continue;	/* the kernel, or "could not analyse", has it */
		if (strpbrk(a, " \t\n")) {
			cls_scan_text(c, a, cwd);
			continue;
		}
		eq = strchr(a, '=');
		if (a[0] == '-') {
			if (eq)
				check_token(c, eq + 1, cwd);
			else if (a[1] && a[1] != '-' && a[2] && (a[2] == '/' || a[2] == '~'))
				check_token(c, a + 2, cwd);	/* -f/path, -I~/x */
			continue;
		}
		if (eq && eq > a && (isalpha((unsigned char)a[0]) || a[0] == '_'))
			check_token(c, eq + 1, cwd);	/* VAR=value, if=FILE */
		check_token(c, a, cwd);
	}
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

/* awk's program: paths in it, and the ways it runs commands */
void cls_awk_program(struct cls *c, const char *prog, const char *cwd)
{
	if (strstr(prog, "system") || strchr(prog, '|'))
		cls_opaque(c, "an awk program that runs commands (system(), |)");
	for (const char *g = strstr(prog, "getline"); g; g = strstr(g + 7, "getline")) {
		const char *p = g + 7;

		while (*p == ' ' || *p == '\t' || isalnum((unsigned char)*p) || *p == '_')
			p++;
		if (*p == '<') {
			p++;
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p != '"')
				cls_opaque(c, "awk's getline < reads a file named at run time");
		}
	}
	for (const char *r = strchr(prog, '>'); r; r = strchr(r + 1, '>')) {
		const char *p = r + 1;

		while (*p == '>' || *p == ' ' || *p == '\t')
			p++;
		if (*p && *p != '"' && !isdigit((unsigned char)*p) && *p != '=')
			cls_opaque(c, "awk writes to a file named at run time");
	}
	cls_scan_text(c, prog, cwd);
}

/* sed's script: r R w W FILE, s///w FILE, and e (runs a command) */
void cls_sed_script(struct cls *c, const char *script, const char *cwd)
{
	char *buf = sbx_strdup(script), *save = NULL;

	for (char *line = strtok_r(buf, "\n;", &save); line; line = strtok_r(NULL, "\n;", &save)) {
		char *p = line;

		while (*p == ' ' || *p == '\t' || *p == '{' || *p == '}')
			p++;
		/* the address: numbers, $, /regex/, \cREGEXc, ranges, ! */
		while (*p) {
			if (isdigit((unsigned char)*p) || *p == '$' || *p == ',' || *p == '!' ||
			    *p == '~' || *p == '+' || *p == ' ') {
				p++;
			} else if (*p == '/' || *p == '\\') {
				char d = *p == '\\' ? p[1] : '/';

				p += *p == '\\' ? 2 : 1;
				while (*p && *p != d)
					p += (*p == '\\' && p[1]) ? 2 : 1;
				if (*p)
					p++;
				while (*p == 'I' || *p == 'M')
					p++;
			} else {
				break;
			}
		}
		if (*p == 'e') {
			cls_opaque(c, "sed's e command runs a command");
		} else if (*p == 'r' || *p == 'R' || *p == 'w' || *p == 'W') {
			struct sbx_sh_word w = { p + 1 + strspn(p + 1, " \t"), false, false };

			cls_check_file(c, &w, cwd, (*p == 'r' || *p == 'R') ? SBX_ACC_READ : SBX_ACC_WRITE);
		} else if (*p == 's' && p[1]) {
			char d = p[1];
			int parts = 0;

			p += 2;
			while (*p && parts < 2) {
				if (*p == '\\' && p[1])
					p++;
				else if (*p == d)
					parts++;
				p++;
			}
			for (; *p; p++) {
				if (*p == 'e') {
					cls_opaque(c, "sed's s///e runs the result as a command");
				} else if (*p == 'w') {
					struct sbx_sh_word w = { p + 1 + strspn(p + 1, " \t"), false,
								 false };

					cls_check_file(c, &w, cwd, SBX_ACC_WRITE);
					break;
				}
			}
		}
	}
	free(buf);
	cls_scan_text(c, script, cwd);
}
