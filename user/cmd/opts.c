// SPDX-License-Identifier: GPL-2.0
/*
 * opts.c - the option tables of cmd.h, read four ways: getopt_long (or a
 * command's own parser, through sbx_opt_find), `bpfsbx help CMD`, and the
 * generated parts of bpfsbx(1) and of the bash completion (`bpfsbx help
 * --gen man|bash`, run by the Makefile). A command or an option added to
 * a table is in all four; one added outside a table is in none, and
 * tests/cli's every_option_is_in_a_table says so.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "user/cmd/cmd.h"

extern const struct sbx_cmd __start_sbx_cmds[];
extern const struct sbx_cmd __stop_sbx_cmds[];

#define SBX_MAX_OPTS 32

const struct sbx_cmd *sbx_cmd_find(const char *name)
{
	for (const struct sbx_cmd *c = __start_sbx_cmds; c < __stop_sbx_cmds; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

const struct sbx_opt *sbx_opt_find(const struct sbx_opt *t, const char *name)
{
	for (; t && (t->name || t->sub); t++)
		if (t->name && !strcmp(t->name, name))
			return t;
	return NULL;
}

const struct sbx_opt *sbx_sub_find(const struct sbx_opt *t, const char *word)
{
	for (; t && (t->name || t->sub); t++)
		if (!t->name && !strcmp(t->sub, word))
			return t;
	return NULL;
}

int sbx_getopt(int argc, char **argv, const struct sbx_opt *t, const char *flags)
{
	/* built once per table: commands parse one table per process */
	static const struct sbx_opt *built;
	static struct option lo[SBX_MAX_OPTS + 2];
	static char so[3 * SBX_MAX_OPTS + 4];

	if (built != t) {
		size_t n = 0, k = 0;

		if (flags && strchr(flags, '+'))
			so[k++] = '+';
		for (; t && (t->name || t->sub); t++) {
			if (!t->name)
				continue;
			if (n == SBX_MAX_OPTS)
				abort();	/* a programming error: raise SBX_MAX_OPTS */
			lo[n++] = (struct option){ t->name, t->arg ? required_argument : no_argument,
						   NULL, t->val };
			if (t->shortopt) {
				so[k++] = t->shortopt;
				if (t->arg)
					so[k++] = ':';
			}
		}
		lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
		lo[n] = (struct option){ 0 };
		so[k++] = 'h';
		so[k] = 0;
		built = t;
	}
	return getopt_long(argc, argv, so, lo, NULL);
}

/* "-s, --scope ARG" */
static int opt_label(char *buf, size_t len, const struct sbx_opt *o)
{
	return snprintf(buf, len, "%s%c%s--%s%s%s", o->shortopt ? "-" : "",
			o->shortopt ? o->shortopt : ' ', o->shortopt ? ", " : "", o->name,
			o->arg ? " " : "", o->arg ? o->arg : "");
}

/* TEXT from column COL, words wrapped before column 80 */
static void wrap(FILE *out, int col, const char *text)
{
	int at = col;

	while (*text) {
		int n = (int)strcspn(text, " ");

		if (at > col && at + 1 + n > 79) {
			fprintf(out, "\n%*s", col, "");
			at = col;
		} else if (at > col) {
			fputc(' ', out);
			at++;
		}
		for (int i = 0; i < n; i++)	/* \a: a space where no line breaks */
			fputc(text[i] == '\a' ? ' ' : text[i], out);
		at += n;
		text += n;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

void sbx_cmd_help(FILE *out, const struct sbx_cmd *c)
{
	const struct sbx_opt *o;
	int w = (int)strlen("-h, --help");
	char l[128], t[512];

	fprintf(out, "usage: bpfsbx %s%s%s\n\n%s\n", c->name, *c->usage ? " " : "", c->usage,
		c->summary);
	for (o = c->opts; o && (o->name || o->sub); o++) {
		int n = o->name ? opt_label(l, sizeof(l), o) - (o->shortopt ? 0 : 1)
				: (int)strlen(o->sub);

		if (n > w && n <= 28)
			w = n;
	}
	if (c->opts && !c->opts->name && c->opts->sub) {
		fprintf(out, "\nsubcommands:\n");
		for (o = c->opts; o->sub && !o->name; o++) {
			fprintf(out, "  %-*s  ", w, o->sub);
			if ((int)strlen(o->sub) > w)
				fprintf(out, "\n%*s", w + 4, "");
			wrap(out, w + 4, o->help);
		}
	}
	fprintf(out, "\noptions:\n");
	for (o = c->opts; o && (o->name || o->sub); o++) {
		if (!o->name)
			continue;
		opt_label(l, sizeof(l), o);
		fprintf(out, "  %-*s  ", w, o->shortopt ? l : l + 1);
		if ((int)strlen(o->shortopt ? l : l + 1) > w)
			fprintf(out, "\n%*s", w + 4, "");
		snprintf(t, sizeof(t), "%s%s%s%s%s%s%s", o->help, o->def ? " (default: " : "",
			 o->def ? o->def : "", o->def ? ")" : "", o->sub ? " [only\a" : "",
			 o->sub ? o->sub : "", o->sub ? "]" : "");
		wrap(out, w + 4, t);
	}
	fprintf(out, "  %-*s  %s\n", w, "-h, --help", "this help");
}

/* scdoc: * and _ are markup, \ escapes them */
static void scd_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '*' || *s == '_' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
}

/* a usage line in scdoc: --options bold, WORDS in capitals underlined */
static void scd_usage(FILE *out, const char *s)
{
	char prev = ' ';

	while (*s) {
		size_t n;

		if (s[0] == '-' && (s[1] == '-' || (s[1] >= 'a' && s[1] <= 'z')) &&
		    strchr(" [|", prev)) {
			n = strspn(s, "-abcdefghijklmnopqrstuvwxyz0123456789");
			fprintf(out, "*%.*s*", (int)n, s);
		} else if (*s >= 'A' && *s <= 'Z') {
			n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
			fputc('_', out);
			for (size_t i = 0; i < n; i++)
				fprintf(out, s[i] == '_' ? "\\_" : "%c", s[i]);
			fputc('_', out);
		} else {
			n = 1;
			scd_text(out, (char[]){ *s, 0 });
		}
		s += n;
		prev = s[-1];
	}
}

static void gen_man(FILE *out)
{
	for (const struct sbx_cmd *c = __start_sbx_cmds; c < __stop_sbx_cmds; c++) {
		fprintf(out, "@head %s\n*%s*%s", c->name, c->name, *c->usage ? " " : "");
		scd_usage(out, c->usage);
		fprintf(out, "\n@opts %s\n", c->name);
		for (const struct sbx_opt *o = c->opts; o && (o->name || o->sub); o++) {
			if (!o->name) {
				fprintf(out, "\t*%s*\n\t\t", o->sub);
			} else {
				fputc('\t', out);
				if (o->shortopt)
					fprintf(out, "*-%c*, ", o->shortopt);
				fprintf(out, "*--%s*", o->name);
				if (o->arg) {
					fputc(' ', out);
					scd_usage(out, o->arg);
				}
				fprintf(out, "\n\t\t");
				if (o->sub)
					fprintf(out, "(%s %s) ", c->name, o->sub);
			}
			scd_text(out, o->help);
			if (o->def) {
				fprintf(out, " (default: ");
				scd_text(out, o->def);
				fputc(')', out);
			}
			fprintf(out, "\n\n");
		}
	}
}

static void gen_bash(FILE *out)
{
	const struct sbx_cmd *c;
	const struct sbx_opt *o;

	fprintf(out, "# generated by `bpfsbx help --gen bash` from the commands' option tables\n"
		     "_bpfsbx_cmds=\"");
	for (c = __start_sbx_cmds; c < __stop_sbx_cmds; c++)
		fprintf(out, "%s ", c->name);
	fprintf(out, "help version\"\ndeclare -gA _bpfsbx_opts=(\n");
	for (c = __start_sbx_cmds; c < __stop_sbx_cmds; c++) {
		fprintf(out, "\t[%s]=\"", c->name);
		for (o = c->opts; o && (o->name || o->sub); o++) {
			if (!o->name)
				continue;
			if (o->shortopt)
				fprintf(out, "-%c ", o->shortopt);
			fprintf(out, "--%s ", o->name);
		}
		fprintf(out, "-h --help\"\n");
	}
	fprintf(out, ")\ndeclare -gA _bpfsbx_subs=(\n");
	for (c = __start_sbx_cmds; c < __stop_sbx_cmds; c++) {
		bool any = false;

		for (o = c->opts; o && (o->name || o->sub); o++) {
			if (o->name)
				continue;
			fprintf(out, any ? " %s" : "\t[%s]=\"%s", any ? o->sub : c->name, o->sub);
			any = true;
		}
		if (any)
			fprintf(out, "\"\n");
	}
	fprintf(out, ")\n# the argument of an option: w:WORDS, d a directory, f a file, "
		     "y a policy file, n free text\ndeclare -gA _bpfsbx_arg=(\n");
	for (c = __start_sbx_cmds; c < __stop_sbx_cmds; c++) {
		for (o = c->opts; o && (o->name || o->sub); o++) {
			char kind[128];

			if (!o->name || !o->arg)
				continue;
			if (o->comp)
				snprintf(kind, sizeof(kind), "%c", o->comp);
			else if (strchr(o->arg, '|'))
				snprintf(kind, sizeof(kind), "w:%s", o->arg);
			else
				snprintf(kind, sizeof(kind), "n");
			for (char *p = kind; *p; p++)
				if (*p == '|')
					*p = ' ';
			fprintf(out, "\t[\"%s --%s\"]=\"%s\"\n", c->name, o->name, kind);
			if (o->shortopt)
				fprintf(out, "\t[\"%s -%c\"]=\"%s\"\n", c->name, o->shortopt, kind);
		}
	}
	fprintf(out, ")\n");
}

int sbx_cmd_gen(const char *what)
{
	if (!strcmp(what, "man"))
		gen_man(stdout);
	else if (!strcmp(what, "bash"))
		gen_bash(stdout);
	else
		return -1;
	return fflush(stdout) ? -1 : 0;
}
