// SPDX-License-Identifier: GPL-2.0
/*
 * args.c - what an argument can name, whatever the program.
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
 * there every open, exec and connect is checked anyway (cls_opaque, in
 * check.c).
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/alloc.h"
#include "user/connector/classify/args.h"
#include "user/connector/classify/check.h"

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
		if (cls_has_glob(abs))
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

