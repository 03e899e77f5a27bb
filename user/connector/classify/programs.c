// SPDX-License-Identifier: GPL-2.0
/*
 * What known programs do with their arguments: which operands and option
 * values are files read or written (cat, grep, sed, cp, dd, ...: the
 * fspecs table, and find), hosts connected to (curl, wget, nc, ssh, scp,
 * rsync, git), and text run as commands (sh -c, find -exec). The
 * built-in rules are here too: rm -r of / or of ~ is denied; rm -r
 * outside the project and a forced git push are asked about.
 *
 * A program not known here is decided on by the policy's commands section,
 * its executable and its redirections only (classify.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "lib/alloc.h"
#include "lib/text.h"
#include "user/connector/classify/args.h"
#include "user/connector/classify/check.h"
#include "user/connector/classify/programs.h"
#include "user/connector/classify/scan.h"

/* ---- per-program knowledge ----------------------------------------------- */

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

	if (!strcmp(cls_basename(argv[0].val), "busybox")) {
		if (argc > 1)
			c->argv(c, argc - 1, argv + 1, cwd, depth, false);
		return;
	}
	for (; k < argc; k++) {
		const char *a = argv[k].val;

		if (argv[k].dynamic) {
			cls_unanalysed(c, "shell options computed at run time");
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
				cls_unanalysed(c, "sh -c without a command");
				return;
			}
			c->text(c, &argv[k + 1], cwd, depth);
			return;
		}
	}
	if (k < argc)	/* a script: the shell reads it */
		cls_check_file(c, &argv[k], cwd, SBX_ACC_READ);
	else		/* `base64 -d x | sh`: commands from a pipe */
		cls_opaque(c, "a shell reading its commands from stdin");
}

static void do_find(struct cls *c, int argc, word_t *argv, const char *cwd, int depth)
{
	struct sbx_sh_word dot = { (char *)".", false, false }, found = { NULL, false, true };
	word_t *first = NULL;
	const char *fname = NULL;
	int k = 1, npaths = 0;

	while (k < argc && (argv[k].val[0] == '-' && strchr("HLPO", argv[k].val[1]) &&
			    argv[k].val[1] && !argv[k].dynamic))
		k++;	/* -H -L -P -D.. -O.. */
	for (; k < argc; k++) {
		const char *a = argv[k].val;

		if (!argv[k].dynamic && (a[0] == '-' || !strcmp(a, "(") || !strcmp(a, "!") ||
					 !strcmp(a, ")")))
			break;
		cls_check_file(c, &argv[k], cwd, SBX_ACC_READ);
		if (!first)
			first = &argv[k];
		npaths++;
	}
	if (!first) {
		first = &dot;
		cls_check_file(c, &dot, cwd, SBX_ACC_READ);
	}
	/* {} is any file found below the start path (with -name NAME: any
	 * file called NAME there): a pattern, decided on what it can be */
	for (int j = k; j + 1 < argc; j++)
		if ((!strcmp(argv[j].val, "-name") || !strcmp(argv[j].val, "-iname")) &&
		    !argv[j + 1].dynamic && !fname)
			fname = argv[j + 1].val;
	found.val = first->dynamic ? NULL : fname ? sbx_asprintf("%s/**/%s", first->val, fname) :
					   sbx_asprintf("%s/**", first->val);
	found.dynamic = first->dynamic;
	if (!found.val)
		found.val = (char *)"";
	for (; k < argc; k++) {
		const char *a = argv[k].val;

		if (!strcmp(a, "-delete")) {
			cls_check_file(c, first, cwd, SBX_ACC_WRITE);
		} else if (!strcmp(a, "-fprint") || !strcmp(a, "-fprint0") || !strcmp(a, "-fls") ||
			   !strcmp(a, "-fprintf")) {
			if (k + 1 < argc)
				cls_check_file(c, &argv[k + 1], cwd, SBX_ACC_WRITE);
		} else if (!strcmp(a, "-exec") || !strcmp(a, "-execdir") || !strcmp(a, "-ok") ||
			   !strcmp(a, "-okdir")) {
			int s = k + 1, e = s;
			struct sbx_sh_word *sub;

			while (e < argc && strcmp(argv[e].val, ";") && strcmp(argv[e].val, "+"))
				e++;
			if (e == s) {
				cls_unanalysed(c, "find -exec without a command");
				break;
			}
			sub = calloc(e - s, sizeof(*sub));
			if (!sub)
				break;
			for (int j = s; j < e; j++)
				sub[j - s] = strcmp(argv[j].val, "{}") ? argv[j] : found;
			c->argv(c, e - s, sub, cwd, depth, false);
			free(sub);
			k = e;
		}
	}
	(void)npaths;
	if (found.val[0])
		free(found.val);
}

static void rm_recursive(struct cls *c, const struct opts *o, const char *cwd);

static void do_rm(struct cls *c, const struct opts *o, const char *cwd)
{
	bool recursive = cls_has(o, "r") || cls_has(o, "R") || cls_has(o, "--recursive");

	/* the built-in rules first: at equal verdicts the first reason stays */
	if (recursive)
		rm_recursive(c, o, cwd);
	cls_all_pos(c, o, 0, cwd, SBX_ACC_WRITE);
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
		b = cls_basename(abs);
		if (!strcmp(abs, "/") || !strcmp(abs, c->home) ||
		    (dir && w->glob && !strcmp(b, "*") &&
		     (!strcmp(dir, "/") || !strcmp(dir, c->home)))) {
			char what[64];

			snprintf(what, sizeof(what), "rm -r %s", !strcmp(abs, "/") ? "/" : "~");
			cls_builtin(c, SBX_V_DENY, what,
				    "rm -r of / or of the home directory is never run (built-in rule)");
		} else if (!c->project || !sbx_path_within(abs, c->project) ||
			   (c->project && !strcmp(abs, c->project))) {
			struct sbx_conn_verdict v;

			sbx_cv_init(&v);
			sbx_cv_set(&v, SBX_V_ASK, "rm -r",
				   "rm -r of %s, which is outside the project%s%s (built-in rule)",
				   abs, c->project ? " " : "", c->project ? c->project : "");
			cls_merge(c, &v);
		}
		free(dir);
		free(abs);
	}
}

/* Configuration whose value git runs as a command (git-config(1)). */
static bool git_key_runs(const char *k)
{
	static const char *const keys[] = { "core.sshcommand", "core.pager", "core.editor",
		"core.fsmonitor", "core.hookspath", "core.gitproxy", "core.askpass",
		"credential.helper", "diff.external", "gpg.program", "gpg.ssh.program",
		"gpg.x509.program", "sequence.editor", "sendemail.sendmailcmd", "uploadpack.packobjectshook",
		"include.path", "includeif", "remote.", "url.", "http.proxy", "protocol.", NULL };
	const char *dot = strrchr(k, '.');

	for (int i = 0; keys[i]; i++)
		if (!strncasecmp(k, keys[i], strlen(keys[i])))
			return true;
	/* filter.X.clean/smudge/process, diff.X.textconv/command, merge.X.driver, ... */
	return dot && (!strcasecmp(dot, ".clean") || !strcasecmp(dot, ".smudge") ||
		       !strcasecmp(dot, ".process") || !strcasecmp(dot, ".textconv") ||
		       !strcasecmp(dot, ".command") || !strcasecmp(dot, ".driver") ||
		       !strcasecmp(dot, ".cmd") || !strcasecmp(dot, ".helper") ||
		       !strcasecmp(dot, ".program") || !strcasecmp(dot, ".tool"));
}

/* git -c KEY=VALUE: an alias (!cmd is a shell command, the rest git
 * arguments) and keys whose value git runs, decided as that command */
static void git_config(struct cls *c, const struct opts *o, int argc, word_t *argv,
		       const char *cwd, int depth)
{
	for (int k = 0; k < o->nkv; k++) {
		const struct kv *e = &o->kv[k];
		const char *kv = e->val ? e->val->val : e->inline_val, *eq;

		if (e->optlen != 1 || e->opt[0] != 'c' || !kv)
			continue;
		if (e->val && e->val->dynamic) {
			cls_opaque(c, "git -c with a value computed at run time");
			continue;
		}
		eq = strchr(kv, '=');
		if (!eq)
			continue;
		if (!strncasecmp(kv, "alias.", 6)) {
			struct sbx_sh_word w;
			char *t = eq[1] == '!' ? sbx_strdup(eq + 2) : sbx_asprintf("git %s", eq + 1);

			w = (struct sbx_sh_word){ t, false, false };
			c->text(c, &w, cwd, depth);
			free(t);
		} else if (git_key_runs(kv)) {
			char *key = strndup(kv, eq - kv);
			struct sbx_sh_word w = { (char *)eq + 1, false, false };
			struct sbx_conn_verdict v;

			sbx_cv_init(&v);
			sbx_cv_set(&v, SBX_V_ASK, "git -c",
				   "git -c %s sets a command or a source that git runs or reads; a "
				   "person has to look at it", key ? key : "?");
			cls_merge(c, &v);
			c->text(c, &w, cwd, depth);
			free(key);
		}
	}
	for (int k = 1; k < argc; k++)
		if (!argv[k].dynamic && !strncmp(argv[k].val, "--config-env", 12)) {
			cls_opaque(c, "git --config-env takes configuration from the environment");
			break;
		}
}

static void do_git(struct cls *c, int argc, word_t *argv, const char *cwd, int depth)
{
	static const char *const glong[] = { "--git-dir", "--work-tree", "--namespace",
					     "--exec-path", "--config-env", NULL };
	struct opts o;
	char *gcwd = NULL;
	const char *sub;

	if (cls_scan(argc, argv, 1, "Cc", glong, false, &o) < 0)
		return;
	for (int k = 0; k < o.nkv; k++)
		if (o.kv[k].optlen == 1 && o.kv[k].opt[0] == 'C') {
			word_t *v = o.kv[k].val;

			if (!v || v->dynamic) {
				cls_unanalysed(c, "git -C with a directory computed at run time");
				goto out;
			}
			char *n = sbx_sh_resolve(v->val, gcwd ? gcwd : cwd, c->home);
			free(gcwd);
			gcwd = n;
		}
	if (gcwd)
		cwd = gcwd;
	git_config(c, &o, argc, argv, cwd, depth);
	if (o.npos == 0)
		goto out;
	if (o.pos[0]->dynamic) {
		cls_unanalysed(c, "a git subcommand computed at run time");
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

		if (cls_scan(argc, argv, si + 1, "objucL", slong, true, &s) < 0)
			goto out;
		if (!strcmp(sub, "clone")) {
			if (s.npos >= 1) {
				char *h = s.pos[0]->dynamic ? NULL : cls_remote_host(s.pos[0]->val);

				if (h) {
					cls_check_host(c, h, 22);
					free(h);
				} else if (!s.pos[0]->dynamic && !strstr(s.pos[0]->val, "://")) {
					cls_check_file(c, s.pos[0], cwd, SBX_ACC_READ);
				} else {
					cls_check_url(c, s.pos[0], 443);
				}
			}
			if (s.npos >= 2)
				cls_check_file(c, s.pos[1], cwd, SBX_ACC_WRITE);
		} else if (!strcmp(sub, "fetch") || !strcmp(sub, "pull") || !strcmp(sub, "push") ||
			   !strcmp(sub, "ls-remote")) {
			if (s.npos >= 1 && !s.pos[0]->dynamic) {
				char *h = cls_remote_host(s.pos[0]->val);

				if (h) {
					cls_check_host(c, h, 22);
					free(h);
				} else if (strstr(s.pos[0]->val, "://")) {
					cls_check_url(c, s.pos[0], 443);
				}
				/* a remote name: its URL is in .git/config, not analysed */
			}
			if (!strcmp(sub, "push")) {
				bool force = cls_has(&s, "f") || cls_has(&s, "--force") || cls_has(&s, "--mirror") ||
					     cls_has(&s, "--force-if-includes") || cls_has(&s, "--delete") ||
					     cls_has(&s, "d");

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
					cls_builtin(c, SBX_V_ASK, "git push --force",
						    "a forced push or a deletion rewrites history on the "
						    "remote (built-in rule)");
			}
		} else if (!strcmp(sub, "submodule") || !strcmp(sub, "remote")) {
			/* URLs may appear as operands: check those that look like one */
			for (int k = 1; k < s.npos; k++) {
				char *h = s.pos[k]->dynamic ? NULL : cls_remote_host(s.pos[k]->val);

				if (h) {
					cls_check_host(c, h, 22);
					free(h);
				} else if (!s.pos[k]->dynamic && strstr(s.pos[k]->val, "://")) {
					cls_check_url(c, s.pos[k], 443);
				}
			}
		} else if (!strcmp(sub, "-c")) {
			cls_unanalysed(c, "git options");
		}
		cls_opts_free(&s);
	}
	(void)depth;
out:
	cls_opts_free(&o);
	free(gcwd);
}

static void do_ssh(struct cls *c, int argc, word_t *argv, const char *cwd, bool scp)
{
	struct opts o;
	int port = 22;

	if (cls_scan(argc, argv, 1, scp ? "cDFiJlOoPSX" : "BbcDEeFIiJLlmOoPpQRSWw", NULL, scp,
		     &o) < 0)
		return;
	cls_each_val(c, &o, "i", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "F", cwd, cls_fn_read, 0);
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
				cls_check_host(c, h, jp);
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
				cls_unanalysed(c, "an ssh destination computed at run time");
			else if (sbx_conn_parse_url(d->val, port, &h, &p) == 0) {
				cls_check_host(c, h, strstr(d->val, "://") ? p : port);
				free(h);
			} else
				cls_unanalysed(c, "an ssh destination that could not be parsed");
		}
	} else {
		for (int k = 0; k < o.npos; k++) {
			word_t *w = o.pos[k];
			char *h = w->dynamic ? NULL : cls_remote_host(w->val);

			if (w->dynamic) {
				cls_unanalysed(c, "an scp operand computed at run time");
			} else if (h) {
				cls_check_host(c, h, port);
				free(h);
			} else if (strstr(w->val, "://")) {
				cls_check_url(c, w, port);
			} else {
				cls_check_file(c, w, cwd, k == o.npos - 1 && o.npos > 1 ?
					       SBX_ACC_WRITE : SBX_ACC_READ);
			}
		}
	}
	cls_opts_free(&o);
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

	if (cls_scan(argc, argv, 1, "AbcCdDeEFHKmorTuUwxXyYzQtP", lng, true, &o) < 0)
		return;
	cls_each_val(c, &o, "o", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "--output", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "D", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "--dump-header", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "c", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "--cookie-jar", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "--trace", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "--trace-ascii", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "--stderr", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "--unix-socket", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "T", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "--upload-file", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "K", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "--config", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "--netrc-file", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "E", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "--cert", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "--key", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "--cacert", cwd, cls_fn_read, 0);
	static const char *const at_opts[] = { "d", "--data", "--data-binary", "--data-ascii",
		"--data-urlencode", "--json", "F", "--form", "H", "--header", "b", "--cookie", NULL };
	for (int k = 0; at_opts[k]; k++)
		cls_each_val(c, &o, at_opts[k], cwd, cls_fn_at_read, 0);
	cls_each_val(c, &o, "x", cwd, cls_fn_url, 1080);
	cls_each_val(c, &o, "--proxy", cwd, cls_fn_url, 1080);
	cls_each_val(c, &o, "--url", cwd, cls_fn_url, 80);
	for (int k = 0; k < o.npos; k++)
		cls_check_url(c, o.pos[k], 80);
	cls_opts_free(&o);
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

	if (cls_scan(argc, argv, 1, "oaOPeDUtTwlQiBARIX", lng, true, &o) < 0)
		return;
	cls_each_val(c, &o, "o", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "--output-file", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "a", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "--append-output", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "O", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "--output-document", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "P", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "--directory-prefix", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "--save-cookies", cwd, cls_fn_write, 0);
	cls_each_val(c, &o, "i", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "--input-file", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "--post-file", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "--body-file", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "--load-cookies", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "--config", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "--certificate", cwd, cls_fn_read, 0);
	cls_each_val(c, &o, "--private-key", cwd, cls_fn_read, 0);
	if (cls_has(&o, "e") || cls_has(&o, "--execute"))
		cls_unanalysed(c, "wget -e runs wgetrc commands");
	for (int k = 0; k < o.npos; k++)
		cls_check_url(c, o.pos[k], 80);
	cls_opts_free(&o);
}

static void do_nc(struct cls *c, int argc, word_t *argv, const char *cwd)
{
	struct opts o;

	if (cls_scan(argc, argv, 1, "pswiqxXOIcemPTW", NULL, true, &o) < 0)
		return;
	if (cls_has(&o, "l")) {
		cls_opts_free(&o);
		return;	/* listening: no outgoing connection */
	}
	if (cls_has(&o, "U")) {
		cls_all_pos(c, &o, 0, cwd, SBX_ACC_WRITE);
	} else if (o.npos >= 1) {
		long port = 0;

		if (o.pos[0]->dynamic || (o.npos >= 2 && o.pos[1]->dynamic)) {
			cls_unanalysed(c, "a network address computed at run time");
		} else {
			if (o.npos >= 2 && !sbx_parse_long(o.pos[1]->val, 1, 65535, &port))
				port = 0;	/* a range or a service name: any port */
			cls_check_host(c, o.pos[0]->val, (int)port);
		}
	}
	cls_opts_free(&o);
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
	const char *name = cls_basename(argv[0].val);
	struct opts o;
	int first = 0;

	if (cls_scan(argc, argv, 1, f->short_arg,
		     f->mode == F_PATTERN ? grep_long : f->mode == F_SCRIPT ? sed_long : gen_long,
		     true, &o) < 0)
		return;
	if (stdin_args && f->mode != F_SCRIPT && f->mode != F_PATTERN) {
		cls_unanalysed(c, "xargs passes file names read from stdin");
	}
	switch (f->mode) {
	case F_READ:
		if (!strcmp(name, "tr")) {
			first = o.npos;	/* tr's operands are character sets */
		} else if (!strcmp(name, "split")) {
			if (o.npos >= 1)
				cls_check_file(c, o.pos[0], cwd, SBX_ACC_READ);
			first = o.npos;
		} else if (!strcmp(name, "sort")) {
			cls_each_val(c, &o, "o", cwd, cls_fn_write, 0);
			cls_each_val(c, &o, "--output", cwd, cls_fn_write, 0);
		} else if (!strcmp(name, "openssl") || !strcmp(name, "gpg")) {
			cls_each_val(c, &o, "in", cwd, cls_fn_read, 0);
			first = o.npos;
			for (int k = 1; k + 1 < argc; k++)
				if (!strcmp(argv[k].val, "-in") || !strcmp(argv[k].val, "-inkey"))
					cls_check_file(c, &argv[k + 1], cwd, SBX_ACC_READ);
				else if (!strcmp(argv[k].val, "-out"))
					cls_check_file(c, &argv[k + 1], cwd, SBX_ACC_WRITE);
		}
		cls_all_pos(c, &o, first, cwd, SBX_ACC_READ);
		if (o.npos == 0 && !strcmp(name, "ls")) {
			struct sbx_sh_word dot = { (char *)".", false, false };
			cls_check_file(c, &dot, cwd, SBX_ACC_READ);
		}
		break;
	case F_WRITE:
		if (!strcmp(name, "touch"))
			cls_each_val(c, &o, "r", cwd, cls_fn_read, 0);
		if (!strcmp(name, "rm")) {
			do_rm(c, &o, cwd);
			break;
		}
		if (!strcmp(name, "ln") || !strcmp(name, "mv")) {
			cls_each_val(c, &o, "t", cwd, cls_fn_write, 0);
			cls_each_val(c, &o, "--target-directory", cwd, cls_fn_write, 0);
		}
		cls_all_pos(c, &o, 0, cwd, SBX_ACC_WRITE);
		break;
	case F_TEE:
		cls_all_pos(c, &o, 0, cwd, SBX_ACC_WRITE);
		break;
	case F_PATTERN: {
		bool given = cls_has(&o, "e") || cls_has(&o, "f") || cls_has(&o, "--regexp") || cls_has(&o, "--file");
		bool rec = cls_has(&o, "r") || cls_has(&o, "R") || cls_has(&o, "--recursive") ||
			   (strcmp(name, "grep") && strcmp(name, "egrep") && strcmp(name, "fgrep") &&
			    strcmp(name, "zgrep"));

		cls_each_val(c, &o, "f", cwd, cls_fn_read, 0);
		cls_each_val(c, &o, "--file", cwd, cls_fn_read, 0);
		first = given ? 0 : 1;
		if (stdin_args) {
			cls_unanalysed(c, "xargs passes file names read from stdin");
		} else if (o.npos <= first && rec) {
			struct sbx_sh_word dot = { (char *)".", false, false };
			cls_check_file(c, &dot, cwd, SBX_ACC_READ);
		}
		cls_all_pos(c, &o, first, cwd, SBX_ACC_READ);
		break;
	}
	case F_SCRIPT: {
		bool given = cls_has(&o, "e") || cls_has(&o, "f") || cls_has(&o, "--expression") ||
			     cls_has(&o, "--file");
		bool inplace = false;

		if (!strcmp(name, "sed")) {
			for (int k = 1; k < argc; k++)
				if (!argv[k].dynamic && (!strncmp(argv[k].val, "--in-place", 10) ||
							 (argv[k].val[0] == '-' && argv[k].val[1] != '-' &&
							  strchr(argv[k].val, 'i'))))
					inplace = true;
		}
		cls_each_val(c, &o, "f", cwd, cls_fn_read, 0);
		cls_each_val(c, &o, "--file", cwd, cls_fn_read, 0);
		first = given ? 0 : 1;
		/* the program texts: -e values, or the first operand */
		for (int k = 0; k < o.nkv + 1; k++) {
			const char *txt = NULL;

			if (k < o.nkv) {
				const struct kv *e = &o.kv[k];

				if ((e->optlen == 1 && e->opt[0] == 'e') ||
				    !strncmp(e->opt, "--expression", 12) || !strncmp(e->opt, "--source", 8))
					txt = e->val ? (e->val->dynamic ? NULL : e->val->val) : e->inline_val;
				if (e->val && e->val->dynamic)
					cls_opaque(c, "a sed or awk program computed at run time");
			} else if (!given && o.npos >= 1) {
				if (o.pos[0]->dynamic)
					cls_opaque(c, "a sed or awk program computed at run time");
				else
					txt = o.pos[0]->val;
			}
			if (txt && name[0] == 's')
				cls_sed_script(c, txt, cwd);
			else if (txt)
				cls_awk_program(c, txt, cwd);
		}
		if (stdin_args) {
			cls_unanalysed(c, "xargs passes file names read from stdin");
			break;
		}
		for (int k = first; k < o.npos; k++) {
			/* awk's var=value operands are assignments, not files */
			if (name[0] != 's' && !o.pos[k]->dynamic && strchr(o.pos[k]->val, '=') &&
			    isalpha((unsigned char)o.pos[k]->val[0]))
				continue;
			cls_check_file(c, o.pos[k], cwd, SBX_ACC_READ);
			if (inplace)
				cls_check_file(c, o.pos[k], cwd, SBX_ACC_WRITE);
		}
		break;
	}
	case F_SKIP1_WRITE: {
		bool ref = false;

		for (int k = 0; k < o.nkv; k++)
			if (!strncmp(o.kv[k].opt, "--reference", 11))
				ref = true;
		cls_each_val(c, &o, "--reference", cwd, cls_fn_read, 0);
		cls_all_pos(c, &o, ref ? 0 : 1, cwd, SBX_ACC_WRITE);
		break;
	}
	case F_CP: {
		bool tdir = false;

		for (int k = 0; k < o.nkv; k++)
			if ((o.kv[k].optlen == 1 && o.kv[k].opt[0] == 't') ||
			    !strncmp(o.kv[k].opt, "--target-directory", 18))
				tdir = true;
		cls_each_val(c, &o, "t", cwd, cls_fn_write, 0);
		cls_each_val(c, &o, "--target-directory", cwd, cls_fn_write, 0);
		for (int k = 0; k < o.npos; k++) {
			bool dest = !tdir && k == o.npos - 1 && o.npos > 1;
			char *h = o.pos[k]->dynamic || strcmp(name, "rsync") ? NULL
									     : cls_remote_host(o.pos[k]->val);
			if (h) {
				cls_check_host(c, h, 22);
				free(h);
				continue;
			}
			cls_check_file(c, o.pos[k], cwd, dest ? SBX_ACC_WRITE : SBX_ACC_READ);
		}
		break;
	}
	case F_XXD:
		if (o.npos >= 1)
			cls_check_file(c, o.pos[0], cwd, SBX_ACC_READ);
		if (o.npos >= 2)
			cls_check_file(c, o.pos[1], cwd, SBX_ACC_WRITE);
		break;
	case F_DD:
		for (int k = 1; k < argc; k++) {
			struct sbx_sh_word w = argv[k];

			if (!strncmp(argv[k].val, "if=", 3)) {
				w.val = argv[k].val + 3;
				cls_check_file(c, &w, cwd, SBX_ACC_READ);
			} else if (!strncmp(argv[k].val, "of=", 3)) {
				w.val = argv[k].val + 3;
				cls_check_file(c, &w, cwd, SBX_ACC_WRITE);
			}
		}
		break;
	}
	cls_opts_free(&o);
}

/* ---- which program it is -------------------------------------------------- */

/* builtins and programs that take words, never paths: echo ~/.ssh/id_rsa
 * prints a name */
static bool touches_no_files(const char *n)
{
	static const char *const l[] = { "echo", "printf", "true", "false", "test", "[", "[[",
		"expr", "sleep", "seq", "date", "basename", "dirname", "which", "type", "id",
		"whoami", "pwd", "export", "unset", "set", "cd", "pushd", "popd", "read", "exit",
		"return", "shift", "local", "declare", "typeset", "readonly", "wait", "jobs",
		"kill", "hash", "shopt", "umask", "ulimit", ":", NULL };

	for (int i = 0; l[i]; i++)
		if (!strcmp(n, l[i]))
			return true;
	return false;
}

void cls_known_program(struct cls *c, const char *name, int argc, word_t *argv,
		       const char *cwd, int depth, bool stdin_args)
{
	const struct fspec *f;
	int k;

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
			    !strcmp(a, "--eval") || !strcmp(a, "-p") || !strcmp(a, "--print") ||
			    !strcmp(a, "-E")) {
				cls_opaque(c, "code given on the command line (python -c, node -e, ...)");
				if (k + 1 < argc && !argv[k + 1].dynamic)
					cls_scan_text(c, argv[k + 1].val, cwd);
				return;
			}
			if (a[0] != '-')
				break;
		}
		if (k < argc)
			cls_check_file(c, &argv[k], cwd, SBX_ACC_READ);
		return;
	}
	f = find_fspec(name);
	if (f) {
		do_files(c, f, argc, argv, cwd, stdin_args);
		return;
	}
	if (!touches_no_files(name))
		cls_scan_args(c, argc, argv, cwd);
}
