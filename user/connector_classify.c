// SPDX-License-Identifier: GPL-2.0
/*
 * Simple commands -> verdicts. For each command found by the parser:
 * the policy's commands section (sbx_decide_command), the executable
 * (exec access), the redirections, and what the program is known to do
 * with its arguments (readers, writers, network clients, git). Wrappers
 * (env, sudo, timeout, xargs, sh -c ...) are looked through. The verdict
 * of the line is the most restrictive part; its reason is the reason of
 * the first part that reached it.
 *
 * What it cannot know (a file name computed at run time, arguments that
 * xargs reads from stdin) is "could not analyse": ask, never allow. What
 * a program does inside (python -c, a script's own commands) is not seen
 * here; inside a session the kernel still checks every open, exec and
 * connect.
 */
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "user/connector_shell.h"
#include "user/util.h"

int sbx_sh_parse_depth(const char *text, const char *cwd, const char *home, int depth,
		       struct sbx_sh_parse *out);

#define MAX_GLOB_MATCHES 256

struct cls {
	struct sbx_conn_policy *cp;
	struct sbx_conn_verdict *acc;
	const char *home;
	const char *project;	/* NULL: unknown (then everything is "outside") */
};

typedef const struct sbx_sh_word word_t;

static void merge(struct cls *c, struct sbx_conn_verdict *v)
{
	sbx_cv_merge(c->acc, v);
}

static void builtin(struct cls *c, uint8_t verdict, const char *what, const char *reason)
{
	struct sbx_conn_verdict v;

	sbx_cv_init(&v);
	sbx_cv_set(&v, verdict, what, "%s", reason);
	merge(c, &v);
}

static void unanalysed(struct cls *c, const char *why)
{
	struct sbx_conn_verdict v;

	sbx_cv_init(&v);
	sbx_cv_set(&v, SBX_V_ASK, "command line",
		   "could not analyse the command (%s); a person has to look at it", why);
	merge(c, &v);
}

static const char *base(const char *p)
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

static void decide_abs(struct cls *c, const char *abs, enum sbx_access acc)
{
	struct sbx_conn_verdict v;

	if (is_dev_stream(abs))
		return;
	sbx_cv_init(&v);
	sbx_conn_decide_path(c->cp, abs, acc, &v);
	merge(c, &v);
}

/* A file argument: resolve, expand globs against the file system, decide
 * the pattern itself and every match. */
static void check_file(struct cls *c, word_t *w, const char *cwd, enum sbx_access acc)
{
	char *abs;

	if (w->dynamic) {
		unanalysed(c, "a file name is computed at run time");
		return;
	}
	if (!w->val[0])
		return;
	abs = sbx_sh_resolve(w->val, cwd, c->home);
	if (!abs) {
		unanalysed(c, "a relative path after a cd that could not be followed");
		return;
	}
	decide_abs(c, abs, acc);
	/* expand only a pattern in the last component: one directory read,
	 * never a walk of the whole file system inside a hook */
	const char *last = strrchr(abs, '/');
	if (w->glob && !memchr(abs, '*', last - abs) && !memchr(abs, '?', last - abs) &&
	    !memchr(abs, '[', last - abs) && !memchr(abs, '{', last - abs)) {
		glob_t g;

		if (glob(abs, GLOB_BRACE | GLOB_NOSORT, NULL, &g) == 0) {
			if (g.gl_pathc > MAX_GLOB_MATCHES)
				unanalysed(c, "a pattern matches too many files");
			else
				for (size_t k = 0; k < g.gl_pathc; k++)
					decide_abs(c, g.gl_pathv[k], acc);
			globfree(&g);
		}
	}
	free(abs);
}

static void check_host(struct cls *c, const char *host, int port)
{
	struct sbx_conn_verdict v;

	sbx_cv_init(&v);
	sbx_conn_decide_host(c->cp, host, port, &v);
	merge(c, &v);
}

static void check_url(struct cls *c, word_t *w, int default_port)
{
	char *host = NULL;
	int port = 0;

	if (w->dynamic) {
		unanalysed(c, "a network address is computed at run time");
		return;
	}
	if (sbx_conn_parse_url(w->val, default_port, &host, &port) < 0) {
		if (!strncasecmp(w->val, "file://", 7))
			return;
		unanalysed(c, "a network address that could not be parsed");
		return;
	}
	check_host(c, host, port);
	free(host);
}

/* "[user@]host:path" (scp, rsync, git) -> host; NULL when it is local. */
static char *remote_host(const char *s)
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

/* ---- option scanning ----------------------------------------------------- */

struct kv {
	const char *opt;	/* "-o" or "--output" (pointer into the word) */
	size_t optlen;
	word_t *val;
	const char *inline_val;	/* "-ofile" / "--output=file" */
};

struct opts {
	word_t **pos;
	int npos;
	struct kv *kv;
	int nkv;
	bool sf[128];		/* short flags seen */
	word_t **lf;		/* long flags seen */
	int nlf;
	int end;		/* index after the last argument consumed */
};

static bool in_list(const char *const *l, const char *s, size_t n)
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
static int scan(int argc, word_t *argv, int from, const char *short_arg,
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
			} else if (in_list(long_arg, a, n)) {
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

static void opts_free(struct opts *o)
{
	free(o->pos);
	free(o->kv);
	free(o->lf);
}

/* Was the option given? name: "x" for -x, "--long" for --long. */
static bool has(const struct opts *o, const char *name)
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
static void each_val(struct cls *c, const struct opts *o, const char *name, const char *cwd,
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

static void fn_read(struct cls *c, word_t *w, const char *cwd, int arg)
{
	(void)arg;
	check_file(c, w, cwd, SBX_ACC_READ);
}

static void fn_write(struct cls *c, word_t *w, const char *cwd, int arg)
{
	(void)arg;
	check_file(c, w, cwd, SBX_ACC_WRITE);
}

/* curl -d @file, -F name=@file / name=<file: the file is read */
static void fn_at_read(struct cls *c, word_t *w, const char *cwd, int arg)
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
		check_file(c, &fw, cwd, SBX_ACC_READ);
	free(f);
}

static void fn_url(struct cls *c, word_t *w, const char *cwd, int port)
{
	(void)cwd;
	check_url(c, w, port);
}

static void all_pos(struct cls *c, const struct opts *o, int from, const char *cwd,
		    enum sbx_access acc)
{
	for (int k = from; k < o->npos; k++)
		if (strcmp(o->pos[k]->val, "-") || o->pos[k]->dynamic)
			check_file(c, o->pos[k], cwd, acc);
}

/* ---- per-program knowledge ----------------------------------------------- */

static void classify_argv(struct cls *c, int argc, word_t *argv, const char *cwd,
			  int depth, bool stdin_args);

static void classify_text(struct cls *c, word_t *w, const char *cwd, int depth)
{
	struct sbx_sh_parse p = { 0 };

	if (w->dynamic) {
		unanalysed(c, "sh -c with a command computed at run time");
		return;
	}
	if (sbx_sh_parse_depth(w->val, cwd, c->home, depth + 1, &p) < 0) {
		unanalysed(c, "out of memory");
		return;
	}
	if (p.unanalysed)
		unanalysed(c, p.why ? p.why : "could not parse");
	for (size_t k = 0; k < p.n; k++) {
		struct sbx_sh_cmd *sc = &p.cmds[k];

		for (size_t r = 0; r < sc->n_redir; r++) {
			struct sbx_sh_redir *rd = &sc->redir[r];

			if (rd->kind != SBX_REDIR_WRITE)
				check_file(c, &rd->target, sc->cwd, SBX_ACC_READ);
			if (rd->kind != SBX_REDIR_READ)
				check_file(c, &rd->target, sc->cwd, SBX_ACC_WRITE);
		}
		if (sc->argc)
			classify_argv(c, sc->argc, sc->argv, sc->cwd, sc->depth, false);
	}
	sbx_sh_parse_free(&p);
}

static bool is_shell(const char *n)
{
	static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh",
					      "ash", "busybox", NULL };
	for (int k = 0; shells[k]; k++)
		if (!strcmp(n, shells[k]))
			return true;
	return false;
}

/* sh [-opts] -c TEXT [$0 args] | sh script args */
static void do_shell(struct cls *c, int argc, word_t *argv, const char *cwd, int depth)
{
	int k = 1;

	if (!strcmp(base(argv[0].val), "busybox")) {
		if (argc > 1)
			classify_argv(c, argc - 1, argv + 1, cwd, depth, false);
		return;
	}
	for (; k < argc; k++) {
		const char *a = argv[k].val;

		if (argv[k].dynamic) {
			unanalysed(c, "shell options computed at run time");
			return;
		}
		if ((a[0] != '-' && a[0] != '+') || !a[1])
			break;
		if (!strcmp(a, "--"))  {
			k++;
			break;
		}
		if (!strcmp(a, "-o") || !strcmp(a, "+o") || !strcmp(a, "-O") || !strcmp(a, "+O")) {
			k++;
			continue;
		}
		if (a[1] != '-' && strchr(a + 1, 'c')) {
			if (k + 1 >= argc) {
				unanalysed(c, "sh -c without a command");
				return;
			}
			classify_text(c, &argv[k + 1], cwd, depth);
			return;
		}
	}
	if (k < argc)	/* a script: the shell reads it */
		check_file(c, &argv[k], cwd, SBX_ACC_READ);
}

static void do_find(struct cls *c, int argc, word_t *argv, const char *cwd, int depth)
{
	struct sbx_sh_word dot = { (char *)".", false, false };
	word_t *first = NULL;
	int k = 1, npaths = 0;

	while (k < argc && (argv[k].val[0] == '-' && strchr("HLPO", argv[k].val[1]) &&
			    argv[k].val[1] && !argv[k].dynamic))
		k++;	/* -H -L -P -D.. -O.. */
	for (; k < argc; k++) {
		const char *a = argv[k].val;

		if (!argv[k].dynamic && (a[0] == '-' || !strcmp(a, "(") || !strcmp(a, "!") ||
					 !strcmp(a, ")")))
			break;
		check_file(c, &argv[k], cwd, SBX_ACC_READ);
		if (!first)
			first = &argv[k];
		npaths++;
	}
	if (!first) {
		first = &dot;
		check_file(c, &dot, cwd, SBX_ACC_READ);
	}
	for (; k < argc; k++) {
		const char *a = argv[k].val;

		if (!strcmp(a, "-delete")) {
			check_file(c, first, cwd, SBX_ACC_WRITE);
		} else if (!strcmp(a, "-fprint") || !strcmp(a, "-fprint0") || !strcmp(a, "-fls") ||
			   !strcmp(a, "-fprintf")) {
			if (k + 1 < argc)
				check_file(c, &argv[k + 1], cwd, SBX_ACC_WRITE);
		} else if (!strcmp(a, "-exec") || !strcmp(a, "-execdir") || !strcmp(a, "-ok") ||
			   !strcmp(a, "-okdir")) {
			int s = k + 1, e = s;
			struct sbx_sh_word *sub;

			while (e < argc && strcmp(argv[e].val, ";") && strcmp(argv[e].val, "+"))
				e++;
			if (e == s) {
				unanalysed(c, "find -exec without a command");
				return;
			}
			/* {} stands for files found below the start path: decide on the
			 * start path, whose rules cover everything below it */
			sub = calloc(e - s, sizeof(*sub));
			if (!sub)
				return;
			for (int j = s; j < e; j++)
				sub[j - s] = strcmp(argv[j].val, "{}") ? argv[j] : *first;
			classify_argv(c, e - s, sub, cwd, depth, false);
			free(sub);
			k = e;
		}
	}
	(void)npaths;
}

static bool under(const char *path, const char *dir)
{
	size_t n;

	if (!dir)
		return false;
	n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return true;
	return !strncmp(path, dir, n) && (path[n] == 0 || path[n] == '/');
}

static void rm_recursive(struct cls *c, const struct opts *o, const char *cwd);

static void do_rm(struct cls *c, const struct opts *o, const char *cwd)
{
	bool recursive = has(o, "r") || has(o, "R") || has(o, "--recursive");

	/* the built-in rules first: at equal verdicts the first reason stays */
	if (recursive)
		rm_recursive(c, o, cwd);
	all_pos(c, o, 0, cwd, SBX_ACC_WRITE);
}

static void rm_recursive(struct cls *c, const struct opts *o, const char *cwd)
{
	for (int k = 0; k < o->npos; k++) {
		word_t *w = o->pos[k];
		char *abs, *dir;
		const char *b;

		if (w->dynamic)
			continue;	/* already "could not analyse" */
		abs = sbx_sh_resolve(w->val, cwd, c->home);
		if (!abs)
			continue;
		dir = strdup(abs);
		if (dir) {
			char *sl = strrchr(dir, '/');
			if (sl == dir)
				sl[1] = 0;
			else if (sl)
				*sl = 0;
		}
		b = base(abs);
		if (!strcmp(abs, "/") || !strcmp(abs, c->home) ||
		    (dir && w->glob && !strcmp(b, "*") &&
		     (!strcmp(dir, "/") || !strcmp(dir, c->home)))) {
			char what[64];

			snprintf(what, sizeof(what), "rm -r %s", !strcmp(abs, "/") ? "/" : "~");
			builtin(c, SBX_V_DENY, what,
				"rm -r of / or of the home directory is never run (built-in rule)");
		} else if (!c->project || !under(abs, c->project) ||
			   (c->project && !strcmp(abs, c->project))) {
			struct sbx_conn_verdict v;

			sbx_cv_init(&v);
			sbx_cv_set(&v, SBX_V_ASK, "rm -r",
				   "rm -r of %s, which is outside the project%s%s (built-in rule)",
				   abs, c->project ? " " : "", c->project ? c->project : "");
			merge(c, &v);
		}
		free(dir);
		free(abs);
	}
}

static void do_git(struct cls *c, int argc, word_t *argv, const char *cwd, int depth)
{
	static const char *const glong[] = { "--git-dir", "--work-tree", "--namespace",
					     "--exec-path", "--config-env", NULL };
	struct opts o;
	char *gcwd = NULL;
	const char *sub;

	if (scan(argc, argv, 1, "Cc", glong, false, &o) < 0)
		return;
	for (int k = 0; k < o.nkv; k++)
		if (o.kv[k].optlen == 1 && o.kv[k].opt[0] == 'C') {
			word_t *v = o.kv[k].val;

			if (!v || v->dynamic) {
				unanalysed(c, "git -C with a directory computed at run time");
				goto out;
			}
			char *n = sbx_sh_resolve(v->val, gcwd ? gcwd : cwd, c->home);
			free(gcwd);
			gcwd = n;
		}
	if (gcwd)
		cwd = gcwd;
	if (o.npos == 0)
		goto out;
	if (o.pos[0]->dynamic) {
		unanalysed(c, "a git subcommand computed at run time");
		goto out;
	}
	sub = o.pos[0]->val;
	{
		int si = (int)(o.pos[0] - argv);
		struct opts s;
		static const char *const slong[] = { "--origin", "--branch", "--depth", "--upload-pack",
						     "--receive-pack", "--reference", "--template",
						     "--separate-git-dir", "--config", "--repo",
						     "--push-option", "--exec", "--jobs", NULL };

		if (scan(argc, argv, si + 1, "objucL", slong, true, &s) < 0)
			goto out;
		if (!strcmp(sub, "clone")) {
			if (s.npos >= 1) {
				char *h = s.pos[0]->dynamic ? NULL : remote_host(s.pos[0]->val);

				if (h) {
					check_host(c, h, 22);
					free(h);
				} else if (!s.pos[0]->dynamic && !strstr(s.pos[0]->val, "://")) {
					check_file(c, s.pos[0], cwd, SBX_ACC_READ);
				} else {
					check_url(c, s.pos[0], 443);
				}
			}
			if (s.npos >= 2)
				check_file(c, s.pos[1], cwd, SBX_ACC_WRITE);
		} else if (!strcmp(sub, "fetch") || !strcmp(sub, "pull") || !strcmp(sub, "push") ||
			   !strcmp(sub, "ls-remote")) {
			if (s.npos >= 1 && !s.pos[0]->dynamic) {
				char *h = remote_host(s.pos[0]->val);

				if (h) {
					check_host(c, h, 22);
					free(h);
				} else if (strstr(s.pos[0]->val, "://")) {
					check_url(c, s.pos[0], 443);
				}
				/* a remote name: its URL is in .git/config, not analysed */
			}
			if (!strcmp(sub, "push")) {
				bool force = has(&s, "f") || has(&s, "--force") || has(&s, "--mirror") ||
					     has(&s, "--force-if-includes") || has(&s, "--delete") ||
					     has(&s, "d");

				for (int k = 0; k < s.nkv; k++)
					if (!strncmp(s.kv[k].opt, "--force-with-lease", 18))
						force = true;
				for (int k = 0; k < s.nlf; k++)
					if (!strncmp(s.lf[k]->val, "--force-with-lease", 18))
						force = true;
				for (int k = 1; k < s.npos; k++)
					if (s.pos[k]->val[0] == '+' || s.pos[k]->val[0] == ':')
						force = true;
				if (force)
					builtin(c, SBX_V_ASK, "git push --force",
						"a forced push or a deletion rewrites history on the "
						"remote (built-in rule)");
			}
		} else if (!strcmp(sub, "submodule") || !strcmp(sub, "remote")) {
			/* URLs may appear as operands: check those that look like one */
			for (int k = 1; k < s.npos; k++) {
				char *h = s.pos[k]->dynamic ? NULL : remote_host(s.pos[k]->val);

				if (h) {
					check_host(c, h, 22);
					free(h);
				} else if (!s.pos[k]->dynamic && strstr(s.pos[k]->val, "://")) {
					check_url(c, s.pos[k], 443);
				}
			}
		} else if (!strcmp(sub, "-c")) {
			unanalysed(c, "git options");
		}
		opts_free(&s);
	}
	(void)depth;
out:
	opts_free(&o);
	free(gcwd);
}

static void do_ssh(struct cls *c, int argc, word_t *argv, const char *cwd, bool scp)
{
	struct opts o;
	int port = 22;

	if (scan(argc, argv, 1, scp ? "cDFiJlOoPSX" : "BbcDEeFIiJLlmOoPpQRSWw", NULL, scp, &o) < 0)
		return;
	each_val(c, &o, "i", cwd, fn_read, 0);
	each_val(c, &o, "F", cwd, fn_read, 0);
	for (int k = 0; k < o.nkv; k++) {
		const struct kv *e = &o.kv[k];
		const char *v = e->val ? e->val->val : e->inline_val;

		if (e->optlen == 1 && e->opt[0] == (scp ? 'P' : 'p') && v) {
			long p;
			if (sbx_parse_long(v, 1, 65535, &p))
				port = (int)p;
		}
		if (e->optlen == 1 && e->opt[0] == 'J' && v) {
			char *h = NULL;
			int jp;
			if (sbx_conn_parse_url(v, 22, &h, &jp) == 0) {
				check_host(c, h, jp);
				free(h);
			}
		}
	}
	if (!scp) {
		if (o.npos >= 1) {
			word_t *d = o.pos[0];
			char *h = NULL;
			int p = port;

			if (d->dynamic)
				unanalysed(c, "an ssh destination computed at run time");
			else if (sbx_conn_parse_url(d->val, port, &h, &p) == 0) {
				check_host(c, h, strstr(d->val, "://") ? p : port);
				free(h);
			} else
				unanalysed(c, "an ssh destination that could not be parsed");
		}
	} else {
		for (int k = 0; k < o.npos; k++) {
			word_t *w = o.pos[k];
			char *h = w->dynamic ? NULL : remote_host(w->val);

			if (w->dynamic) {
				unanalysed(c, "an scp operand computed at run time");
			} else if (h) {
				check_host(c, h, port);
				free(h);
			} else if (strstr(w->val, "://")) {
				check_url(c, w, port);
			} else {
				check_file(c, w, cwd, k == o.npos - 1 && o.npos > 1 ? SBX_ACC_WRITE
										    : SBX_ACC_READ);
			}
		}
	}
	opts_free(&o);
}

static void do_curl(struct cls *c, int argc, word_t *argv, const char *cwd)
{
	static const char *const lng[] = {
		"--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii",
		"--json", "--header", "--output", "--user", "--request", "--user-agent",
		"--cookie", "--cookie-jar", "--connect-timeout", "--max-time", "--retry",
		"--config", "--form", "--form-string", "--upload-file", "--proxy", "--cacert",
		"--capath", "--cert", "--key", "--url", "--resolve", "--referer", "--write-out",
		"--range", "--output-dir", "--limit-rate", "--dump-header", "--variable",
		"--retry-delay", "--retry-max-time", "--max-redirs", "--interface",
		"--unix-socket", "--abstract-unix-socket", "--netrc-file", "--trace",
		"--trace-ascii", "--stderr", "--proxy-user", "--connect-to", "--oauth2-bearer",
		"--aws-sigv4", "--preproxy", "--socks5", "--socks4", "--socks5-hostname",
		"--noproxy", "--keepalive-time", "--expect100-timeout", "--happy-eyeballs-timeout-ms",
		"--create-file-mode", "--mail-from", "--mail-rcpt", "--ciphers", "--krb",
		"--quote", "--time-cond", "--local-port", "--login-options", NULL };
	struct opts o;

	if (scan(argc, argv, 1, "AbcCdDeEFHKmorTuUwxXyYzQtP", lng, true, &o) < 0)
		return;
	each_val(c, &o, "o", cwd, fn_write, 0);
	each_val(c, &o, "--output", cwd, fn_write, 0);
	each_val(c, &o, "D", cwd, fn_write, 0);
	each_val(c, &o, "--dump-header", cwd, fn_write, 0);
	each_val(c, &o, "c", cwd, fn_write, 0);
	each_val(c, &o, "--cookie-jar", cwd, fn_write, 0);
	each_val(c, &o, "--trace", cwd, fn_write, 0);
	each_val(c, &o, "--trace-ascii", cwd, fn_write, 0);
	each_val(c, &o, "--stderr", cwd, fn_write, 0);
	each_val(c, &o, "--unix-socket", cwd, fn_write, 0);
	each_val(c, &o, "T", cwd, fn_read, 0);
	each_val(c, &o, "--upload-file", cwd, fn_read, 0);
	each_val(c, &o, "K", cwd, fn_read, 0);
	each_val(c, &o, "--config", cwd, fn_read, 0);
	each_val(c, &o, "--netrc-file", cwd, fn_read, 0);
	each_val(c, &o, "E", cwd, fn_read, 0);
	each_val(c, &o, "--cert", cwd, fn_read, 0);
	each_val(c, &o, "--key", cwd, fn_read, 0);
	each_val(c, &o, "--cacert", cwd, fn_read, 0);
	static const char *const at_opts[] = { "d", "--data", "--data-binary", "--data-ascii",
		"--data-urlencode", "--json", "F", "--form", "H", "--header", "b", "--cookie", NULL };
	for (int k = 0; at_opts[k]; k++)
		each_val(c, &o, at_opts[k], cwd, fn_at_read, 0);
	each_val(c, &o, "x", cwd, fn_url, 1080);
	each_val(c, &o, "--proxy", cwd, fn_url, 1080);
	each_val(c, &o, "--url", cwd, fn_url, 80);
	for (int k = 0; k < o.npos; k++)
		check_url(c, o.pos[k], 80);
	opts_free(&o);
}

static void do_wget(struct cls *c, int argc, word_t *argv, const char *cwd)
{
	static const char *const lng[] = {
		"--output-file", "--append-output", "--output-document", "--directory-prefix",
		"--execute", "--domains", "--user-agent", "--tries", "--timeout", "--wait",
		"--level", "--quota", "--input-file", "--base", "--accept", "--reject",
		"--header", "--post-data", "--post-file", "--body-file", "--body-data",
		"--user", "--password", "--method", "--load-cookies", "--save-cookies",
		"--certificate", "--private-key", "--ca-certificate", "--config", "--referer",
		"--limit-rate", "--bind-address", "--include-directories",
		"--exclude-directories", NULL };
	struct opts o;

	if (scan(argc, argv, 1, "oaOPeDUtTwlQiBARIX", lng, true, &o) < 0)
		return;
	each_val(c, &o, "o", cwd, fn_write, 0);
	each_val(c, &o, "--output-file", cwd, fn_write, 0);
	each_val(c, &o, "a", cwd, fn_write, 0);
	each_val(c, &o, "--append-output", cwd, fn_write, 0);
	each_val(c, &o, "O", cwd, fn_write, 0);
	each_val(c, &o, "--output-document", cwd, fn_write, 0);
	each_val(c, &o, "P", cwd, fn_write, 0);
	each_val(c, &o, "--directory-prefix", cwd, fn_write, 0);
	each_val(c, &o, "--save-cookies", cwd, fn_write, 0);
	each_val(c, &o, "i", cwd, fn_read, 0);
	each_val(c, &o, "--input-file", cwd, fn_read, 0);
	each_val(c, &o, "--post-file", cwd, fn_read, 0);
	each_val(c, &o, "--body-file", cwd, fn_read, 0);
	each_val(c, &o, "--load-cookies", cwd, fn_read, 0);
	each_val(c, &o, "--config", cwd, fn_read, 0);
	each_val(c, &o, "--certificate", cwd, fn_read, 0);
	each_val(c, &o, "--private-key", cwd, fn_read, 0);
	if (has(&o, "e") || has(&o, "--execute"))
		unanalysed(c, "wget -e runs wgetrc commands");
	for (int k = 0; k < o.npos; k++)
		check_url(c, o.pos[k], 80);
	opts_free(&o);
}

static void do_nc(struct cls *c, int argc, word_t *argv, const char *cwd)
{
	struct opts o;

	if (scan(argc, argv, 1, "pswiqxXOIcemPTW", NULL, true, &o) < 0)
		return;
	if (has(&o, "l")) {
		opts_free(&o);
		return;	/* listening: no outgoing connection */
	}
	if (has(&o, "U")) {
		all_pos(c, &o, 0, cwd, SBX_ACC_WRITE);
	} else if (o.npos >= 1) {
		long port = 0;

		if (o.pos[0]->dynamic || (o.npos >= 2 && o.pos[1]->dynamic)) {
			unanalysed(c, "a network address computed at run time");
		} else {
			if (o.npos >= 2 && !sbx_parse_long(o.pos[1]->val, 1, 65535, &port))
				port = 0;	/* a range or a service name: any port */
			check_host(c, o.pos[0]->val, (int)port);
		}
	}
	opts_free(&o);
}

/* Programs whose operands are files, and how. */
enum fmode {
	F_READ,			/* every operand is read */
	F_WRITE,		/* every operand is written */
	F_PATTERN,		/* grep: the first operand is the pattern unless -e/-f */
	F_SCRIPT,		/* sed, awk: the first operand is the program unless -e/-f */
	F_SKIP1_WRITE,		/* chmod MODE, chown OWNER: then written */
	F_CP,			/* last operand (or -t) written, the others read */
	F_XXD,			/* infile read, outfile written */
	F_DD,
	F_TEE,
};

struct fspec {
	const char *name;
	enum fmode mode;
	const char *short_arg;
};

static const struct fspec fspecs[] = {
	{ "cat", F_READ, "" }, { "tac", F_READ, "bs" }, { "nl", F_READ, "bdfhilnsvw" },
	{ "head", F_READ, "nc" }, { "tail", F_READ, "ncsp" }, { "less", F_READ, "bhjkoOpPTxyz" },
	{ "more", F_READ, "n" }, { "wc", F_READ, "" }, { "sort", F_READ, "kSTtoy" },
	{ "uniq", F_READ, "fsw" }, { "base64", F_READ, "w" }, { "base32", F_READ, "w" },
	{ "od", F_READ, "AjNtw" }, { "strings", F_READ, "nteT" }, { "hexdump", F_READ, "enNsf" },
	{ "md5sum", F_READ, "" }, { "sha1sum", F_READ, "" }, { "sha256sum", F_READ, "" },
	{ "sha512sum", F_READ, "" }, { "b2sum", F_READ, "l" }, { "cksum", F_READ, "al" },
	{ "file", F_READ, "emfFP" }, { "diff", F_READ, "CUDFILSWxX" }, { "cmp", F_READ, "iIn" },
	{ "bat", F_READ, "lmHrpLdtn" }, { "zcat", F_READ, "" }, { "bzcat", F_READ, "" },
	{ "xzcat", F_READ, "" }, { "zless", F_READ, "" }, { "stat", F_READ, "ct" },
	{ "source", F_READ, "" }, { ".", F_READ, "" }, { "ls", F_READ, "IwTp" },
	{ "cut", F_READ, "bcdf" }, { "tr", F_READ, "" }, { "paste", F_READ, "d" },
	{ "column", F_READ, "cstoNRWHlO" }, { "fold", F_READ, "w" }, { "fmt", F_READ, "wgp" },
	{ "rev", F_READ, "" }, { "shuf", F_READ, "inoe" }, { "split", F_READ, "abCdlnt" },
	{ "look", F_READ, "t" }, { "gpg", F_READ, "ruoc" }, { "openssl", F_READ, "" },
	{ "grep", F_PATTERN, "efmABCDd" }, { "egrep", F_PATTERN, "efmABCDd" },
	{ "fgrep", F_PATTERN, "efmABCDd" }, { "rg", F_PATTERN, "efgmABCEjMtTr" },
	{ "ag", F_PATTERN, "ABCmGg" }, { "ack", F_PATTERN, "ABCmg" }, { "zgrep", F_PATTERN, "efmABC" },
	{ "sed", F_SCRIPT, "efl" }, { "awk", F_SCRIPT, "fvF" }, { "gawk", F_SCRIPT, "fvFiIlE" },
	{ "mawk", F_SCRIPT, "fvF" }, { "nawk", F_SCRIPT, "fvF" },
	{ "touch", F_WRITE, "dtr" }, { "mkdir", F_WRITE, "m" }, { "rmdir", F_WRITE, "" },
	{ "shred", F_WRITE, "nsu" }, { "truncate", F_WRITE, "sr" }, { "unlink", F_WRITE, "" },
	{ "ln", F_WRITE, "St" }, { "mv", F_WRITE, "St" }, { "rm", F_WRITE, "" },
	{ "mkfifo", F_WRITE, "m" }, { "tee", F_TEE, "" },
	{ "chmod", F_SKIP1_WRITE, "" }, { "chown", F_SKIP1_WRITE, "" }, { "chgrp", F_SKIP1_WRITE, "" },
	{ "cp", F_CP, "St" }, { "install", F_CP, "gmoStT" }, { "rsync", F_CP, "eBfT" },
	{ "xxd", F_XXD, "cglsoCn" }, { "dd", F_DD, "" },
	{ NULL, 0, NULL },
};

static const struct fspec *find_fspec(const char *name)
{
	for (const struct fspec *f = fspecs; f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

static void do_files(struct cls *c, const struct fspec *f, int argc, word_t *argv,
		     const char *cwd, bool stdin_args)
{
	static const char *const grep_long[] = { "--regexp", "--file", "--max-count",
		"--after-context", "--before-context", "--context", "--include", "--exclude",
		"--exclude-dir", "--label", "--binary-files", "--devices", "--directories",
		"--glob", "--type", "--type-not", "--max-depth", "--encoding", "--threads",
		"--replace", "--ignore-file", NULL };
	static const char *const sed_long[] = { "--expression", "--file", "--line-length", NULL };
	static const char *const gen_long[] = { "--target-directory", "--suffix", "--reference",
		"--mode", "--lines", "--bytes", "--output", "--field-separator", "--key",
		"--delimiter", "--fields", "--assign", "--file", NULL };
	const char *name = base(argv[0].val);
	struct opts o;
	int first = 0;

	if (scan(argc, argv, 1, f->short_arg,
		 f->mode == F_PATTERN ? grep_long : f->mode == F_SCRIPT ? sed_long : gen_long,
		 true, &o) < 0)
		return;
	if (stdin_args && f->mode != F_SCRIPT && f->mode != F_PATTERN) {
		unanalysed(c, "xargs passes file names read from stdin");
	}
	switch (f->mode) {
	case F_READ:
		if (!strcmp(name, "tr")) {
			first = o.npos;	/* tr's operands are character sets */
		} else if (!strcmp(name, "split")) {
			if (o.npos >= 1)
				check_file(c, o.pos[0], cwd, SBX_ACC_READ);
			first = o.npos;
		} else if (!strcmp(name, "sort")) {
			each_val(c, &o, "o", cwd, fn_write, 0);
			each_val(c, &o, "--output", cwd, fn_write, 0);
		} else if (!strcmp(name, "openssl") || !strcmp(name, "gpg")) {
			each_val(c, &o, "in", cwd, fn_read, 0);
			first = o.npos;
			for (int k = 1; k + 1 < argc; k++)
				if (!strcmp(argv[k].val, "-in") || !strcmp(argv[k].val, "-inkey"))
					check_file(c, &argv[k + 1], cwd, SBX_ACC_READ);
				else if (!strcmp(argv[k].val, "-out"))
					check_file(c, &argv[k + 1], cwd, SBX_ACC_WRITE);
		}
		all_pos(c, &o, first, cwd, SBX_ACC_READ);
		if (o.npos == 0 && !strcmp(name, "ls")) {
			struct sbx_sh_word dot = { (char *)".", false, false };
			check_file(c, &dot, cwd, SBX_ACC_READ);
		}
		break;
	case F_WRITE:
		if (!strcmp(name, "touch"))
			each_val(c, &o, "r", cwd, fn_read, 0);
		if (!strcmp(name, "rm")) {
			do_rm(c, &o, cwd);
			break;
		}
		if (!strcmp(name, "ln") || !strcmp(name, "mv")) {
			each_val(c, &o, "t", cwd, fn_write, 0);
			each_val(c, &o, "--target-directory", cwd, fn_write, 0);
		}
		all_pos(c, &o, 0, cwd, SBX_ACC_WRITE);
		break;
	case F_TEE:
		all_pos(c, &o, 0, cwd, SBX_ACC_WRITE);
		break;
	case F_PATTERN: {
		bool given = has(&o, "e") || has(&o, "f") || has(&o, "--regexp") || has(&o, "--file");
		bool rec = has(&o, "r") || has(&o, "R") || has(&o, "--recursive") ||
			   (strcmp(name, "grep") && strcmp(name, "egrep") && strcmp(name, "fgrep") &&
			    strcmp(name, "zgrep"));

		each_val(c, &o, "f", cwd, fn_read, 0);
		each_val(c, &o, "--file", cwd, fn_read, 0);
		first = given ? 0 : 1;
		if (stdin_args) {
			unanalysed(c, "xargs passes file names read from stdin");
		} else if (o.npos <= first && rec) {
			struct sbx_sh_word dot = { (char *)".", false, false };
			check_file(c, &dot, cwd, SBX_ACC_READ);
		}
		all_pos(c, &o, first, cwd, SBX_ACC_READ);
		break;
	}
	case F_SCRIPT: {
		bool given = has(&o, "e") || has(&o, "f") || has(&o, "--expression") ||
			     has(&o, "--file");
		bool inplace = false;

		if (!strcmp(name, "sed")) {
			for (int k = 1; k < argc; k++)
				if (!argv[k].dynamic && (!strncmp(argv[k].val, "--in-place", 10) ||
							 (argv[k].val[0] == '-' && argv[k].val[1] != '-' &&
							  strchr(argv[k].val, 'i'))))
					inplace = true;
		}
		each_val(c, &o, "f", cwd, fn_read, 0);
		each_val(c, &o, "--file", cwd, fn_read, 0);
		first = given ? 0 : 1;
		if (stdin_args) {
			unanalysed(c, "xargs passes file names read from stdin");
			break;
		}
		for (int k = first; k < o.npos; k++) {
			/* awk's var=value operands are assignments, not files */
			if (name[0] != 's' && !o.pos[k]->dynamic && strchr(o.pos[k]->val, '=') &&
			    isalpha((unsigned char)o.pos[k]->val[0]))
				continue;
			check_file(c, o.pos[k], cwd, SBX_ACC_READ);
			if (inplace)
				check_file(c, o.pos[k], cwd, SBX_ACC_WRITE);
		}
		break;
	}
	case F_SKIP1_WRITE: {
		bool ref = false;

		for (int k = 0; k < o.nkv; k++)
			if (!strncmp(o.kv[k].opt, "--reference", 11))
				ref = true;
		each_val(c, &o, "--reference", cwd, fn_read, 0);
		all_pos(c, &o, ref ? 0 : 1, cwd, SBX_ACC_WRITE);
		break;
	}
	case F_CP: {
		bool tdir = false;

		for (int k = 0; k < o.nkv; k++)
			if ((o.kv[k].optlen == 1 && o.kv[k].opt[0] == 't') ||
			    !strncmp(o.kv[k].opt, "--target-directory", 18))
				tdir = true;
		each_val(c, &o, "t", cwd, fn_write, 0);
		each_val(c, &o, "--target-directory", cwd, fn_write, 0);
		for (int k = 0; k < o.npos; k++) {
			bool dest = !tdir && k == o.npos - 1 && o.npos > 1;
			char *h = o.pos[k]->dynamic || strcmp(name, "rsync") ? NULL
									     : remote_host(o.pos[k]->val);
			if (h) {
				check_host(c, h, 22);
				free(h);
				continue;
			}
			check_file(c, o.pos[k], cwd, dest ? SBX_ACC_WRITE : SBX_ACC_READ);
		}
		break;
	}
	case F_XXD:
		if (o.npos >= 1)
			check_file(c, o.pos[0], cwd, SBX_ACC_READ);
		if (o.npos >= 2)
			check_file(c, o.pos[1], cwd, SBX_ACC_WRITE);
		break;
	case F_DD:
		for (int k = 1; k < argc; k++) {
			struct sbx_sh_word w = argv[k];

			if (!strncmp(argv[k].val, "if=", 3)) {
				w.val = argv[k].val + 3;
				check_file(c, &w, cwd, SBX_ACC_READ);
			} else if (!strncmp(argv[k].val, "of=", 3)) {
				w.val = argv[k].val + 3;
				check_file(c, &w, cwd, SBX_ACC_WRITE);
			}
		}
		break;
	}
	opts_free(&o);
}

/* ---- wrappers: the command they run starts at the returned index ------- */

static int skip_opts(int argc, word_t *argv, int k, const char *short_arg,
		     const char *const *long_arg)
{
	while (k < argc) {
		const char *a = argv[k].val;

		if (argv[k].dynamic || a[0] != '-' || !a[1])
			break;
		if (!strcmp(a, "--"))
			return k + 1;
		if (a[1] == '-') {
			const char *eq = strchr(a, '=');
			size_t n = eq ? (size_t)(eq - a) : strlen(a);

			k += (!eq && in_list(long_arg, a, n)) ? 2 : 1;
			continue;
		}
		bool takes = false;
		for (const char *p = a + 1; *p; p++)
			if (short_arg && strchr(short_arg, *p)) {
				takes = !p[1];
				break;
			}
		k += takes ? 2 : 1;
	}
	return k;
}

static void classify_argv(struct cls *c, int argc, word_t *argv, const char *cwd,
			  int depth, bool stdin_args)
{
	const char *name;
	char **plain;
	struct sbx_conn_verdict v;
	const struct fspec *f;
	int k;

	if (argc < 1)
		return;
	if (depth > SBX_SH_MAX_DEPTH) {
		unanalysed(c, "nested too deeply");
		return;
	}
	if (argv[0].dynamic) {
		unanalysed(c, "the program name is computed at run time");
		return;
	}
	name = base(argv[0].val);

	/* the policy's commands section sees the words as written */
	plain = calloc(argc + 1, sizeof(*plain));
	if (!plain) {
		unanalysed(c, "out of memory");
		return;
	}
	for (k = 0; k < argc; k++)
		plain[k] = argv[k].val;
	sbx_cv_init(&v);
	sbx_conn_decide_argv(c->cp, argc, plain, &v);
	merge(c, &v);
	free(plain);

	/* the executable itself */
	if (strchr(argv[0].val, '/')) {
		check_file(c, &argv[0], cwd, SBX_ACC_EXEC);
	} else if (c->cp) {
		const char *path = getenv("PATH");
		char *dup = path ? strdup(path) : NULL, *save = NULL;

		for (char *d = dup ? strtok_r(dup, ":", &save) : NULL; d;
		     d = strtok_r(NULL, ":", &save)) {
			char *full;

			if (d[0] != '/' || asprintf(&full, "%s/%s", d, argv[0].val) < 0)
				continue;
			if (access(full, X_OK) == 0) {
				decide_abs(c, full, SBX_ACC_EXEC);
				free(full);
				break;
			}
			free(full);
		}
		free(dup);
	}

	if (!strcmp(name, "eval") || !strcmp(name, "trap") || !strcmp(name, "alias")) {
		unanalysed(c, "eval, trap and alias run text as commands");
		return;
	}
	if (!strcmp(name, "exec") || !strcmp(name, "command") || !strcmp(name, "builtin") ||
	    !strcmp(name, "nohup") || !strcmp(name, "time") || !strcmp(name, "nice") ||
	    !strcmp(name, "stdbuf") || !strcmp(name, "timeout") || !strcmp(name, "env") ||
	    !strcmp(name, "xargs") || !strcmp(name, "sudo") || !strcmp(name, "doas") ||
	    !strcmp(name, "ionice") || !strcmp(name, "chrt") || !strcmp(name, "setsid") ||
	    !strcmp(name, "unbuffer") || !strcmp(name, "flock") || !strcmp(name, "caffeinate")) {
		static const char *const to_long[] = { "--signal", "--kill-after", NULL };
		static const char *const sb_long[] = { "--input", "--output", "--error", NULL };
		static const char *const xa_long[] = { "--arg-file", "--delimiter", "--eof",
			"--replace", "--max-lines", "--max-args", "--max-procs", "--max-chars",
			"--process-slot-var", NULL };
		static const char *const sudo_long[] = { "--user", "--group", "--prompt",
			"--close-from", "--chdir", "--host", "--role", "--type", "--command-timeout",
			"--other-user", NULL };
		bool inner_stdin = stdin_args;
		const char *inner_cwd = cwd;
		char *cwd_buf = NULL;

		k = 1;
		if (!strcmp(name, "exec")) {
			k = skip_opts(argc, argv, 1, "a", NULL);
		} else if (!strcmp(name, "command")) {
			for (int j = 1; j < argc && argv[j].val[0] == '-'; j++)
				if (strchr(argv[j].val, 'v') || strchr(argv[j].val, 'V'))
					return;	/* command -v: a lookup, nothing runs */
			k = skip_opts(argc, argv, 1, "", NULL);
		} else if (!strcmp(name, "time")) {
			k = skip_opts(argc, argv, 1, "fo", NULL);
			for (int j = 1; j + 1 < k; j++)
				if (!strcmp(argv[j].val, "-o"))
					check_file(c, &argv[j + 1], cwd, SBX_ACC_WRITE);
		} else if (!strcmp(name, "nice")) {
			k = skip_opts(argc, argv, 1, "n", NULL);
		} else if (!strcmp(name, "ionice")) {
			k = skip_opts(argc, argv, 1, "cnpPtu", NULL);
		} else if (!strcmp(name, "chrt")) {
			k = skip_opts(argc, argv, 1, "T P D", NULL);
			k++;	/* priority */
		} else if (!strcmp(name, "stdbuf")) {
			k = skip_opts(argc, argv, 1, "ioe", sb_long);
		} else if (!strcmp(name, "timeout")) {
			k = skip_opts(argc, argv, 1, "sk", to_long) + 1;	/* + DURATION */
		} else if (!strcmp(name, "flock")) {
			k = skip_opts(argc, argv, 1, "wEc", NULL);
			if (k < argc)
				check_file(c, &argv[k], cwd, SBX_ACC_READ);
			k++;
			for (int j = 1; j < argc; j++)
				if (!strcmp(argv[j].val, "-c") && j + 1 < argc) {
					classify_text(c, &argv[j + 1], cwd, depth);
					return;
				}
		} else if (!strcmp(name, "env")) {
			k = 1;
			while (k < argc) {
				const char *a = argv[k].val;

				if (argv[k].dynamic)
					break;
				if (!strcmp(a, "-S") || !strncmp(a, "--split-string", 14) ||
				    (a[0] == '-' && a[1] != '-' && strchr(a, 'S'))) {
					unanalysed(c, "env -S splits a string into a command");
					return;
				}
				if (!strcmp(a, "-C") || !strcmp(a, "--chdir")) {
					if (k + 1 >= argc || argv[k + 1].dynamic) {
						unanalysed(c, "env -C with a directory computed at run time");
						return;
					}
					free(cwd_buf);
					cwd_buf = sbx_sh_resolve(argv[k + 1].val, inner_cwd, c->home);
					inner_cwd = cwd_buf;
					k += 2;
					continue;
				}
				if (!strcmp(a, "-u") || !strcmp(a, "--unset")) {
					k += 2;
					continue;
				}
				if (!strcmp(a, "--")) {
					k++;
					continue;
				}
				if (a[0] == '-' ) {
					k++;
					continue;
				}
				if (strchr(a, '=') && (isalpha((unsigned char)a[0]) || a[0] == '_')) {
					k++;
					continue;
				}
				break;
			}
		} else if (!strcmp(name, "xargs")) {
			k = 1;
			while (k < argc) {
				const char *a = argv[k].val;

				if (argv[k].dynamic || a[0] != '-' || !a[1])
					break;
				if (!strcmp(a, "--")) {
					k++;
					break;
				}
				if (!strcmp(a, "-a") || !strcmp(a, "--arg-file")) {
					if (k + 1 < argc)
						check_file(c, &argv[k + 1], cwd, SBX_ACC_READ);
					k += 2;
					continue;
				}
				if (a[1] == '-') {
					const char *eq = strchr(a, '=');
					size_t n = eq ? (size_t)(eq - a) : strlen(a);
					k += (!eq && in_list(xa_long, a, n)) ? 2 : 1;
					continue;
				}
				/* -i and -l take an optional attached value, -I etc. a separate one */
				bool takes = false;
				for (const char *p = a + 1; *p; p++)
					if (strchr("dEILnPs", *p)) {
						takes = !p[1];
						break;
					} else if (strchr("il", *p)) {
						break;
					}
				k += takes ? 2 : 1;
			}
			inner_stdin = true;
		} else if (!strcmp(name, "sudo") || !strcmp(name, "doas")) {
			k = skip_opts(argc, argv, 1, name[0] == 's' ? "aCcDghpRrTtUu" : "uC", sudo_long);
			for (int j = 1; j < k; j++) {
				const char *a = argv[j].val;

				if (a[0] == '-' && a[1] != '-' && (strchr(a, 'e')) && !strchr("aCcDghpRrTtUu", a[1])) {
					/* sudo -e FILE...: sudoedit writes them */
					for (int m = k; m < argc; m++)
						check_file(c, &argv[m], cwd, SBX_ACC_WRITE);
					return;
				}
			}
		} else {
			k = skip_opts(argc, argv, 1, "", NULL);
		}
		if (k < argc)
			classify_argv(c, argc - k, argv + k, inner_cwd, depth, inner_stdin);
		free(cwd_buf);
		return;
	}
	if (!strcmp(name, "sudoedit")) {
		for (k = skip_opts(argc, argv, 1, "aCcDghpRrTtUu", NULL); k < argc; k++)
			check_file(c, &argv[k], cwd, SBX_ACC_WRITE);
		return;
	}
	if (!strcmp(name, "su")) {
		for (k = 1; k < argc; k++)
			if ((!strcmp(argv[k].val, "-c") || !strcmp(argv[k].val, "--command")) &&
			    k + 1 < argc) {
				classify_text(c, &argv[k + 1], cwd, depth);
				return;
			}
		return;
	}
	if (is_shell(name)) {
		do_shell(c, argc, argv, cwd, depth);
		return;
	}
	if (!strcmp(name, "find")) {
		do_find(c, argc, argv, cwd, depth);
		return;
	}
	if (!strcmp(name, "git")) {
		do_git(c, argc, argv, cwd, depth);
		return;
	}
	if (!strcmp(name, "curl")) {
		do_curl(c, argc, argv, cwd);
		return;
	}
	if (!strcmp(name, "wget")) {
		do_wget(c, argc, argv, cwd);
		return;
	}
	if (!strcmp(name, "nc") || !strcmp(name, "ncat") || !strcmp(name, "netcat")) {
		do_nc(c, argc, argv, cwd);
		return;
	}
	if (!strcmp(name, "ssh") || !strcmp(name, "scp") || !strcmp(name, "sftp")) {
		do_ssh(c, argc, argv, cwd, strcmp(name, "ssh") != 0);
		return;
	}
	if (!strcmp(name, "python") || !strcmp(name, "python3") || !strcmp(name, "node") ||
	    !strcmp(name, "perl") || !strcmp(name, "ruby")) {
		/* the script file is read; code given with -c/-e is not analysed */
		for (k = 1; k < argc; k++) {
			const char *a = argv[k].val;

			if (argv[k].dynamic)
				break;
			if (!strcmp(a, "-c") || !strcmp(a, "-e") || !strcmp(a, "-m") ||
			    !strcmp(a, "--eval") || !strcmp(a, "-p") || !strcmp(a, "--print"))
				return;
			if (a[0] != '-')
				break;
		}
		if (k < argc)
			check_file(c, &argv[k], cwd, SBX_ACC_READ);
		return;
	}
	f = find_fspec(name);
	if (f) {
		do_files(c, f, argc, argv, cwd, stdin_args);
		return;
	}
}

int sbx_sh_classify(struct sbx_conn_policy *cp, const char *text, const char *cwd,
		    struct sbx_conn_verdict *out)
{
	struct cls c = { .cp = cp, .acc = out, .home = cp ? cp->home : sbx_conn_home(),
			 .project = cp ? cp->project : NULL };
	struct sbx_sh_word w = { (char *)text, false, false };

	sbx_cv_clear(out);
	classify_text(&c, &w, cwd, -1);
	if (out->verdict == SBX_V_NONE) {
		out->verdict = SBX_V_ALLOW;
		free(out->reason);
		out->reason = strdup("no rule applies");
	}
	return 0;
}
