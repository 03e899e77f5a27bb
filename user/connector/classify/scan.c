// SPDX-License-Identifier: GPL-2.0
/*
 * scan.c - the option scanner the program specs (programs.c) share:
 * operands and option values of one command, and the checks applied to
 * each (read, write, URL).
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
#include "user/connector/classify/check.h"
#include "user/connector/classify/scan.h"

bool cls_in_list(const char *const *l, const char *s, size_t n)
{
	for (; l && *l; l++)
		if (strlen(*l) == n && !strncmp(*l, s, n))
			return true;
	return false;
}

/*
 * getopt-like scan of argv[from..argc). short_arg: short options that take
 * an argument; long_arg: long options (with dashes) that take one.
 * permute: options may follow operands (GNU); otherwise the first operand
 * ends the options (and the rest is left to the caller: opts->end).
 */
int cls_scan(int argc, word_t *argv, int from, const char *short_arg,
	     const char *const *long_arg, bool permute, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->pos = calloc(argc + 1, sizeof(*o->pos));
	o->kv = calloc(argc + 1, sizeof(*o->kv));
	o->lf = calloc(argc + 1, sizeof(*o->lf));
	if (!o->pos || !o->kv || !o->lf)
		return -ENOMEM;
	int k = from;
	bool opts_done = false;

	for (; k < argc; k++) {
		const char *a = argv[k].val;

		if (opts_done || argv[k].dynamic || a[0] != '-' || !a[1]) {
			o->pos[o->npos++] = &argv[k];
			if (!permute) {
				k++;
				break;
			}
			continue;
		}
		if (!strcmp(a, "--")) {
			opts_done = true;
			continue;
		}
		if (a[1] == '-') {
			const char *eq = strchr(a, '=');
			size_t n = eq ? (size_t)(eq - a) : strlen(a);

			if (eq) {
				o->kv[o->nkv++] = (struct kv){ a, n, NULL, eq + 1 };
			} else if (cls_in_list(long_arg, a, n)) {
				o->kv[o->nkv++] = (struct kv){ a, n, k + 1 < argc ? &argv[k + 1] : NULL, NULL };
				k++;
			} else {
				o->lf[o->nlf++] = &argv[k];
			}
			continue;
		}
		for (const char *p = a + 1; *p; p++) {
			unsigned char ch = (unsigned char)*p;

			if (ch < 128)
				o->sf[ch] = true;
			if (short_arg && strchr(short_arg, *p)) {
				if (p[1])
					o->kv[o->nkv++] = (struct kv){ p, 1, NULL, p + 1 };
				else {
					o->kv[o->nkv++] = (struct kv){ p, 1, k + 1 < argc ? &argv[k + 1] : NULL, NULL };
					k++;
				}
				break;
			}
		}
	}
	if (!permute)
		for (; k < argc; k++)
			o->pos[o->npos++] = &argv[k];
	o->end = k;
	return 0;
}

void cls_opts_free(struct opts *o)
{
	free(o->pos);
	free(o->kv);
	free(o->lf);
}

/* Was the option given? name: "x" for -x, "--long" for --long. */
bool cls_has(const struct opts *o, const char *name)
{
	if (!name[1] && name[0] != '-')
		return o->sf[(unsigned char)name[0]];
	for (int k = 0; k < o->nlf; k++)
		if (!strcmp(o->lf[k]->val, name))
			return true;
	for (int k = 0; k < o->nkv; k++)
		if (o->kv[k].optlen == strlen(name) && !strncmp(o->kv[k].opt, name, o->kv[k].optlen))
			return true;
	return false;
}

/* Value words of option name (short "o" or long "--output"); calls fn. */
void cls_each_val(struct cls *c, const struct opts *o, const char *name, const char *cwd,
		  void (*fn)(struct cls *, word_t *, const char *, int), int arg)
{
	size_t nl = strlen(name);

	for (int k = 0; k < o->nkv; k++) {
		const struct kv *e = &o->kv[k];
		bool match = nl == 1 ? (e->optlen == 1 && e->opt[0] == name[0])
				     : (e->optlen == nl && !strncmp(e->opt, name, nl));

		if (!match)
			continue;
		if (e->val) {
			fn(c, e->val, cwd, arg);
		} else if (e->inline_val) {
			struct sbx_sh_word w = { (char *)e->inline_val, false, false };
			fn(c, &w, cwd, arg);
		}
	}
}

void cls_fn_read(struct cls *c, word_t *w, const char *cwd, int arg)
{
	(void)arg;
	cls_check_file(c, w, cwd, SBX_ACC_READ);
}

void cls_fn_write(struct cls *c, word_t *w, const char *cwd, int arg)
{
	(void)arg;
	cls_check_file(c, w, cwd, SBX_ACC_WRITE);
}

/* curl -d @file, -F name=@file / name=<file: the file is read */
void cls_fn_at_read(struct cls *c, word_t *w, const char *cwd, int arg)
{
	const char *v = w->val, *p = NULL;

	(void)arg;
	if (w->dynamic)
		return;
	if (v[0] == '@')
		p = v + 1;
	else if ((p = strstr(v, "=@")) || (p = strstr(v, "=<")))
		p += 2;
	else
		return;
	char *f = strndup(p, strcspn(p, ";"));
	struct sbx_sh_word fw = { f, false, false };

	if (f && strcmp(f, "-"))
		cls_check_file(c, &fw, cwd, SBX_ACC_READ);
	free(f);
}

void cls_fn_url(struct cls *c, word_t *w, const char *cwd, int port)
{
	(void)cwd;
	cls_check_url(c, w, port);
}

void cls_all_pos(struct cls *c, const struct opts *o, int from, const char *cwd,
		 enum sbx_access acc)
{
	for (int k = from; k < o->npos; k++)
		if (strcmp(o->pos[k]->val, "-") || o->pos[k]->dynamic)
			cls_check_file(c, o->pos[k], cwd, acc);
}
