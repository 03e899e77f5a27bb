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
 *
 * What known programs do with their arguments is in classify_programs.c;
 * here are the checks, the option scanner, the wrappers and the walk.
 */
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "user/connector/classify/classify.h"
#include "user/connector/classify/programs.h"
#include "user/connector/shell/shell.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"

int sbx_sh_parse_depth(const char *text, const char *cwd, const char *home, int depth,
		       struct sbx_sh_parse *out);

#define MAX_GLOB_MATCHES 256

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

static void decide_abs(struct cls *c, const char *abs, enum sbx_access acc)
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
	decide_abs(c, abs, acc);
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
					decide_abs(c, g.gl_pathv[k], acc);
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

/* ---- option scanning ----------------------------------------------------- */


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

/* ---- command text ---------------------------------------------------- */

void classify_text(struct cls *c, word_t *w, const char *cwd, int depth)
{
	struct sbx_sh_parse p = { 0 };

	if (w->dynamic) {
		cls_unanalysed(c, "sh -c with a command computed at run time");
		return;
	}
	if (sbx_sh_parse_depth(w->val, cwd, c->home, depth + 1, &p) < 0) {
		cls_unanalysed(c, "out of memory");
		return;
	}
	if (p.unanalysed)
		cls_unanalysed(c, p.why ? p.why : "could not parse");
	for (size_t k = 0; k < p.n; k++) {
		struct sbx_sh_cmd *sc = &p.cmds[k];

		for (size_t r = 0; r < sc->n_redir; r++) {
			struct sbx_sh_redir *rd = &sc->redir[r];

			if (rd->kind != SBX_REDIR_WRITE)
				cls_check_file(c, &rd->target, sc->cwd, SBX_ACC_READ);
			if (rd->kind != SBX_REDIR_READ)
				cls_check_file(c, &rd->target, sc->cwd, SBX_ACC_WRITE);
		}
		if (sc->argc)
			classify_argv(c, sc->argc, sc->argv, sc->cwd, sc->depth, false);
	}
	sbx_sh_parse_free(&p);
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

void classify_argv(struct cls *c, int argc, word_t *argv, const char *cwd,
		   int depth, bool stdin_args)
{
	const char *name;
	char **plain;
	struct sbx_conn_verdict v;
	bool escalated;
	int k;

	if (argc < 1)
		return;
	if (depth > SBX_SH_MAX_DEPTH) {
		cls_unanalysed(c, "nested too deeply");
		return;
	}
	if (argv[0].dynamic) {
		cls_unanalysed(c, "the program name is computed at run time");
		return;
	}
	name = cls_basename(argv[0].val);

	/* the policy's commands section sees the words as written */
	plain = calloc(argc + 1, sizeof(*plain));
	if (!plain) {
		cls_unanalysed(c, "out of memory");
		return;
	}
	for (k = 0; k < argc; k++)
		plain[k] = argv[k].val;
	sbx_cv_init(&v);
	sbx_conn_decide_argv(c->cp, argc, plain, &v);
	escalated = v.verdict == SBX_V_ASK;
	cls_merge(c, &v);
	free(plain);

	/* the executable itself: whether the session may run it. Not for a
	 * program the commands section escalates (sudo, doas, pkexec): that
	 * one runs outside the session, as the person who approves it, and
	 * the kernel keeps refusing it inside. Its redirections and known
	 * file arguments are still checked below. */
	if (escalated) {
		/* nothing: see above */
	} else if (strchr(argv[0].val, '/')) {
		cls_check_file(c, &argv[0], cwd, SBX_ACC_EXEC);
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
		cls_opaque(c, "eval, trap and alias run text as commands");
		for (k = 1; k < argc; k++)
			if (!argv[k].dynamic)
				cls_scan_text(c, argv[k].val, cwd);
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
					cls_check_file(c, &argv[j + 1], cwd, SBX_ACC_WRITE);
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
				cls_check_file(c, &argv[k], cwd, SBX_ACC_READ);
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
					cls_unanalysed(c, "env -S splits a string into a command");
					return;
				}
				if (!strcmp(a, "-C") || !strcmp(a, "--chdir")) {
					if (k + 1 >= argc || argv[k + 1].dynamic) {
						cls_unanalysed(c, "env -C with a directory computed at run time");
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
						cls_check_file(c, &argv[k + 1], cwd, SBX_ACC_READ);
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
						cls_check_file(c, &argv[m], cwd, SBX_ACC_WRITE);
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
			cls_check_file(c, &argv[k], cwd, SBX_ACC_WRITE);
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
	cls_known_program(c, name, argc, argv, cwd, depth, stdin_args);
}

int sbx_sh_classify(struct sbx_conn_policy *cp, const char *text, const char *cwd,
		    struct sbx_conn_verdict *out)
{
	struct cls c = { .cp = cp, .acc = out, .home = cp ? cp->home : sbx_conn_home(),
			 .project = cp ? cp->project : NULL, .kernel = cp && cp->kernel_enforced };
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
