// SPDX-License-Identifier: GPL-2.0
/*
 * Shell command lines -> simple commands. This is not a shell: it follows
 * the parts of POSIX sh and bash that decide WHICH programs run on WHICH
 * files (lists, pipes, subshells, quoting, substitutions, redirections,
 * cd, plain assignments), and gives up, loudly, on everything else. A
 * give-up ("unanalysed") is never an allow: the connector asks a person.
 *
 * The lexer (words, quoting, expansions, here-documents, tokens) is in
 * lex.c; the classifier that turns the commands into verdicts is in
 * ../classify/.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/text.h"
#include "user/connector/shell/shell.h"
#include "user/connector/shell/lex.h"
#include "lib/alloc.h"

static int var_set(struct ps *ps, const char *name, size_t nlen, const char *val)
{
	struct var *v;

	if (!SBX_GROW(ps->vars, ps->capvars, ps->nvars + 1, 8))
		return -ENOMEM;
	v = &ps->vars[ps->nvars];
	v->name = strndup(name, nlen);
	v->val = val ? strdup(val) : NULL;
	if (!v->name || (val && !v->val)) {
		free(v->name);
		free(v->val);
		return -ENOMEM;
	}
	ps->nvars++;
	return 0;
}

static void vars_truncate(struct ps *ps, size_t n)
{
	while (ps->nvars > n) {
		ps->nvars--;
		free(ps->vars[ps->nvars].name);
		free(ps->vars[ps->nvars].val);
	}
}

/* ---- commands ------------------------------------------------------------ */

struct cmd_build {
	struct sbx_sh_word *argv;
	int argc;
	size_t cap;
	struct sbx_sh_redir *redir;
	size_t n_redir, cap_redir;
	/* plain assignments before the command name */
	char **assign;
	size_t n_assign;
	bool *assign_known;
	bool subshell_redirs;	/* redirections after ( ... ) */
};

static void cb_free(struct cmd_build *cb)
{
	for (int k = 0; k < cb->argc; k++)
		sh_word_free(&cb->argv[k]);
	for (size_t k = 0; k < cb->n_redir; k++)
		sh_word_free(&cb->redir[k].target);
	for (size_t k = 0; k < cb->n_assign; k++)
		free(cb->assign[k]);
	free(cb->argv);
	free(cb->redir);
	free(cb->assign);
	free(cb->assign_known);
	memset(cb, 0, sizeof(*cb));
}

static int cb_add_word(struct cmd_build *cb, struct sbx_sh_word *w)
{
	if (!SBX_GROW(cb->argv, cb->cap, (size_t)cb->argc + 1, 8))
		return -ENOMEM;
	cb->argv[cb->argc++] = *w;
	memset(w, 0, sizeof(*w));
	return 0;
}

static int cb_add_redir(struct cmd_build *cb, enum sbx_sh_redir_kind k, struct sbx_sh_word *w)
{
	if (!SBX_GROW(cb->redir, cb->cap_redir, cb->n_redir + 1, 4))
		return -ENOMEM;
	cb->redir[cb->n_redir].kind = k;
	cb->redir[cb->n_redir].target = *w;
	cb->n_redir++;
	memset(w, 0, sizeof(*w));
	return 0;
}

static int cb_add_assign(struct cmd_build *cb, struct tok *t)
{
	char **a = realloc(cb->assign, (cb->n_assign + 1) * sizeof(*a));
	bool *k;

	if (!a)
		return -ENOMEM;
	cb->assign = a;
	k = realloc(cb->assign_known, (cb->n_assign + 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	cb->assign_known = k;
	/* t->w.val is "NAME=value" (or "NAME+=value") */
	cb->assign[cb->n_assign] = t->w.val;
	cb->assign_known[cb->n_assign] = !t->w.dynamic && !t->w.glob &&
					 !strstr(t->w.val, "+=");
	cb->n_assign++;
	t->w.val = NULL;
	return 0;
}

char *sbx_sh_resolve(const char *word, const char *cwd, const char *home)
{
	struct sbx_strbuf b = { 0 };
	char *out, *p, *q;

	if (!word || !*word)
		return NULL;
	if (word[0] == '/')
		sbx_sb_puts(&b, word);
	else if (cwd) {
		sbx_sb_puts(&b, cwd);
		sbx_sb_putc(&b, '/');
		sbx_sb_puts(&b, word);
	} else {
		return NULL;
	}
	(void)home;
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	/* fold //, /./ and /../ lexically */
	out = malloc(b.len + 2);
	if (!out) {
		free(b.p);
		return NULL;
	}
	q = out;
	p = b.p;
	while (*p) {
		while (*p == '/')
			p++;
		char *e = p + strcspn(p, "/");
		size_t len = e - p;

		if (len == 0)
			break;
		if (len == 1 && p[0] == '.') {
			/* skip */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (q > out && *--q != '/')
				;
		} else {
			*q++ = '/';
			memcpy(q, p, len);
			q += len;
		}
		p = e;
	}
	if (q == out)
		*q++ = '/';
	*q = 0;
	free(b.p);
	return out;
}

static void update_cwd(struct ps *ps, struct sbx_sh_cmd *c)
{
	const char *cmd = c->argv[0].val;
	int k = 1;
	char *n;

	if (strcmp(cmd, "cd") && strcmp(cmd, "pushd") && strcmp(cmd, "popd"))
		return;
	if (!strcmp(cmd, "popd") || c->argv[0].dynamic)
		goto unknown;
	while (k < c->argc && c->argv[k].val[0] == '-' && c->argv[k].val[1] &&
	       strcmp(c->argv[k].val, "--"))
		k++;
	if (k < c->argc && !strcmp(c->argv[k].val, "--"))
		k++;
	if (k >= c->argc) {
		n = strdup(ps->home);
	} else {
		if (c->argv[k].dynamic || c->argv[k].glob || !strcmp(c->argv[k].val, "-"))
			goto unknown;
		n = sbx_sh_resolve(c->argv[k].val, ps->cwd, ps->home);
	}
	free(ps->cwd);
	ps->cwd = n;
	return;
unknown:
	free(ps->cwd);
	ps->cwd = NULL;
}

static int finish_cmd(struct ps *ps, struct cmd_build *cb)
{
	struct sbx_sh_parse *out = ps->out;
	struct sbx_sh_cmd *c;
	int r = 0;

	if (cb->argc == 0 && cb->n_redir == 0) {
		/* plain assignments: they set shell variables for what follows */
		for (size_t k = 0; k < cb->n_assign; k++) {
			char *eq = strchr(cb->assign[k], '=');
			size_t nlen = eq - cb->assign[k];

			if (nlen && cb->assign[k][nlen - 1] == '+')
				nlen--;
			r = var_set(ps, cb->assign[k], nlen,
				    cb->assign_known[k] ? eq + 1 : NULL);
			if (r < 0)
				break;
		}
		cb_free(cb);
		return r;
	}
	if (out->n >= SBX_SH_MAX_CMDS) {
		sh_fail(ps, "more than %u commands", SBX_SH_MAX_CMDS);
		cb_free(cb);
		return -1;
	}
	if (!SBX_GROW(out->cmds, out->cap, out->n + 1, 8)) {
		cb_free(cb);
		return -ENOMEM;
	}
	c = &out->cmds[out->n++];
	memset(c, 0, sizeof(*c));
	c->argc = cb->argc;
	c->argv = cb->argv;
	c->n_redir = cb->n_redir;
	c->redir = cb->redir;
	c->depth = ps->depth;
	c->cwd = ps->cwd ? strdup(ps->cwd) : NULL;
	cb->argv = NULL;
	cb->redir = NULL;
	cb->argc = 0;
	cb->n_redir = 0;
	if (c->argc > 0)
		update_cwd(ps, c);
	cb_free(cb);
	return 0;
}

static bool is_word(const struct tok *t, const char *w)
{
	return t->type == T_WORD && t->plain && !strcmp(t->w.val, w);
}

static int parse_list(struct ps *ps, bool in_subshell);

/* ( list ): scope the cwd and the variables like a subshell does. */
static int subshell(struct ps *ps)
{
	char *saved_cwd = ps->cwd ? strdup(ps->cwd) : NULL;
	size_t saved_vars = ps->nvars;
	bool had_cwd = ps->cwd != NULL;
	int r;

	if (had_cwd && !saved_cwd)
		return -ENOMEM;
	r = parse_list(ps, true);
	free(ps->cwd);
	ps->cwd = saved_cwd;
	vars_truncate(ps, saved_vars);
	return r;
}

static const char *const skip_words[] = {
	"{", "}", "!", "if", "then", "elif", "else", "fi", "do", "done", "while",
	"until", "time", NULL,
};

static int parse_list(struct ps *ps, bool in_subshell)
{
	struct cmd_build cb = { 0 };
	struct tok t;
	int r = 0;
	bool after_subshell = false;

	for (;;) {
		if (sh_next_token(ps, &t) < 0) {
			r = -1;
			break;
		}
		switch (t.type) {
		case T_ERR:
			r = -1;
			goto out;
		case T_EOF:
			if (in_subshell) {
				sh_fail(ps, "unbalanced ( )");
				r = -1;
				goto out;
			}
			r = finish_cmd(ps, &cb);
			goto out;
		case T_SEP:
		case T_PIPE:
			if ((r = finish_cmd(ps, &cb)) < 0)
				goto out;
			after_subshell = false;
			continue;
		case T_RPAREN:
			if (!in_subshell) {
				sh_fail(ps, "unbalanced ( )");
				r = -1;
				goto out;
			}
			r = finish_cmd(ps, &cb);
			goto out;
		case T_LPAREN:
			if (cb.argc || cb.n_assign || cb.n_redir || after_subshell) {
				sh_fail(ps, "function definitions and arrays are not analysed");
				r = -1;
				goto out;
			}
			if (ps->i < ps->n && ps->s[ps->i] == '(') {
				/* (( arithmetic )) */
				long close = sh_find_close_paren(ps->s, ps->n, ps->i + 1);

				if (close < 0 || close + 1 >= (long)ps->n || ps->s[close + 1] != ')') {
					sh_fail(ps, "unbalanced (( ))");
					r = -1;
					goto out;
				}
				if (memmem(ps->s + ps->i, close - ps->i, "$(", 2) ||
				    memchr(ps->s + ps->i, '`', close - ps->i)) {
					sh_fail(ps, "command substitution inside arithmetic");
					r = -1;
					goto out;
				}
				ps->i = close + 2;
				continue;
			}
			if (ps->depth + 1 > SBX_SH_MAX_DEPTH) {
				sh_fail(ps, "nested too deeply");
				r = -1;
				goto out;
			}
			if ((r = subshell(ps)) < 0)
				goto out;
			after_subshell = true;
			continue;
		case T_REDIR: {
			struct tok w;
			enum redir_op op = t.rop;

			if (sh_next_token(ps, &w) < 0 || w.type != T_WORD) {
				if (w.type == T_WORD)
					sh_word_free(&w.w);
				sh_fail(ps, "redirection without a target");
				r = -1;
				goto out;
			}
			switch (op) {
			case R_READ:
				r = cb_add_redir(&cb, SBX_REDIR_READ, &w.w);
				break;
			case R_WRITE:
				r = cb_add_redir(&cb, SBX_REDIR_WRITE, &w.w);
				break;
			case R_RDWR:
				r = cb_add_redir(&cb, SBX_REDIR_RDWR, &w.w);
				break;
			case R_DUP_OUT:
			case R_DUP_IN: {
				const char *v = w.w.val;
				bool fd = !w.w.dynamic && *v;

				for (const char *q = v; *q && fd; q++)
					fd = isdigit((unsigned char)*q) || (*q == '-' && !q[1]);
				if (fd || (v[0] == '-' && !v[1]))
					sh_word_free(&w.w);
				else
					r = cb_add_redir(&cb, op == R_DUP_OUT ? SBX_REDIR_WRITE
									: SBX_REDIR_READ, &w.w);
				break;
			}
			case R_HEREDOC:
			case R_HEREDOC_STRIP:
				if (ps->nhd == (int)(sizeof(ps->hd) / sizeof(ps->hd[0])) ||
				    w.w.dynamic) {
					sh_word_free(&w.w);
					sh_fail(ps, "here-document not analysed");
					r = -1;
					goto out;
				}
				ps->hd[ps->nhd].delim = w.w.val;
				ps->hd[ps->nhd].quoted = w.quoted || !w.plain;
				ps->hd[ps->nhd].strip_tabs = op == R_HEREDOC_STRIP;
				ps->nhd++;
				w.w.val = NULL;
				break;
			case R_HERESTRING:
				sh_word_free(&w.w);
				break;
			}
			if (r < 0)
				goto out;
			continue;
		}
		case T_WORD:
			break;
		}
		/* a word */
		if (after_subshell) {
			sh_word_free(&t.w);
			sh_fail(ps, "words after ( ... )");
			r = -1;
			goto out;
		}
		if (ps->in_dbracket) {
			if (is_word(&t, "]]"))
				ps->in_dbracket = false;
			if ((r = cb_add_word(&cb, &t.w)) < 0)
				goto out;
			continue;
		}
		if (cb.argc == 0) {
			bool skip = false;

			if (t.plain && cb.n_assign == 0 && cb.n_redir == 0)
				for (int k = 0; skip_words[k]; k++)
					if (!strcmp(t.w.val, skip_words[k]))
						skip = true;
			if (skip) {
				sh_word_free(&t.w);
				continue;
			}
			if (t.plain && cb.n_assign == 0 &&
			    (!strcmp(t.w.val, "for") || !strcmp(t.w.val, "select"))) {
				struct tok nm;

				sh_word_free(&t.w);
				if (sh_next_token(ps, &nm) < 0 || nm.type != T_WORD || !nm.plain ||
				    !sh_name_start(nm.w.val[0])) {
					if (nm.type == T_WORD)
						sh_word_free(&nm.w);
					sh_fail(ps, "for loops of this form are not analysed");
					r = -1;
					goto out;
				}
				r = var_set(ps, nm.w.val, strlen(nm.w.val), NULL);
				sh_word_free(&nm.w);
				if (r < 0)
					goto out;
				/* the word list: substitutions in it were parsed while lexing */
				for (;;) {
					struct tok x;

					if (sh_next_token(ps, &x) < 0) {
						r = -1;
						goto out;
					}
					if (x.type == T_WORD) {
						bool d = is_word(&x, "do");
						sh_word_free(&x.w);
						if (d)
							break;
						continue;
					}
					if (x.type == T_SEP)
						continue;
					sh_fail(ps, "for loops of this form are not analysed");
					r = -1;
					goto out;
				}
				continue;
			}
			if (t.plain && (!strcmp(t.w.val, "case") || !strcmp(t.w.val, "function") ||
					!strcmp(t.w.val, "coproc") || !strcmp(t.w.val, "esac"))) {
				sh_fail(ps, "'%s' is not analysed", t.w.val);
				sh_word_free(&t.w);
				r = -1;
				goto out;
			}
			if (t.plain && !strcmp(t.w.val, "[[")) {
				ps->in_dbracket = true;
				if ((r = cb_add_word(&cb, &t.w)) < 0)
					goto out;
				continue;
			}
			if (t.assign > 0) {
				if ((r = cb_add_assign(&cb, &t)) < 0)
					goto out;
				continue;
			}
		}
		if ((r = cb_add_word(&cb, &t.w)) < 0)
			goto out;
	}
out:
	if (t.type == T_WORD)
		sh_word_free(&t.w);
	cb_free(&cb);
	if (ps->in_dbracket && r == 0) {
		ps->in_dbracket = false;
		sh_fail(ps, "unbalanced [[ ]]");
		r = -1;
	}
	return r;
}

/* ---- recursion into nested command text -------------------------------- */

static void ps_free(struct ps *ps)
{
	vars_truncate(ps, 0);
	free(ps->vars);
	free(ps->cwd);
	for (int h = 0; h < ps->nhd; h++)
		free(ps->hd[h].delim);
}

/* Nested text ($( ), backticks, <( )): same variables and cwd, one level
 * deeper; changes inside do not leak out (it is a subshell). */
static int sh_parse_text(struct ps *parent, const char *text, size_t len)
{
	struct ps ps = { 0 };
	int r;

	if (parent->depth + 1 > SBX_SH_MAX_DEPTH) {
		sh_fail(parent, "nested too deeply");
		return -1;
	}
	ps.s = text;
	ps.n = len;
	ps.out = parent->out;
	ps.home = parent->home;
	ps.depth = parent->depth + 1;
	ps.nwords = parent->nwords;
	ps.parse_text = parent->parse_text;
	ps.cwd = parent->cwd ? strdup(parent->cwd) : NULL;
	for (size_t k = 0; k < parent->nvars; k++)
		if (var_set(&ps, parent->vars[k].name, strlen(parent->vars[k].name),
			    parent->vars[k].val) < 0) {
			ps_free(&ps);
			return -ENOMEM;
		}
	r = parse_list(&ps, false);
	ps_free(&ps);
	return r;
}

int sbx_sh_parse_depth(const char *text, const char *cwd, const char *home, int depth,
		       struct sbx_sh_parse *out);

int sbx_sh_parse_depth(const char *text, const char *cwd, const char *home, int depth,
		       struct sbx_sh_parse *out)
{
	struct ps ps = { 0 };
	size_t nwords = 0;
	size_t len = strlen(text);
	int r;

	if (len > SBX_SH_MAX_TEXT) {
		if (!out->unanalysed) {
			out->unanalysed = true;
			out->why = strdup("the command is too long to analyse");
		}
		return 0;
	}
	if (depth > SBX_SH_MAX_DEPTH) {
		if (!out->unanalysed) {
			out->unanalysed = true;
			out->why = strdup("nested too deeply");
		}
		return 0;
	}
	ps.s = text;
	ps.n = len;
	ps.out = out;
	ps.home = home;
	ps.depth = depth;
	ps.nwords = &nwords;
	ps.parse_text = sh_parse_text;
	ps.cwd = cwd ? strdup(cwd) : NULL;
	if (cwd && !ps.cwd)
		return -ENOMEM;
	r = parse_list(&ps, false);
	ps_free(&ps);
	if (r == -ENOMEM)
		return r;
	if (r < 0 && !out->unanalysed)
		sh_fail(&ps, "could not parse the command");
	return 0;
}

int sbx_sh_parse(const char *text, const char *cwd, const char *home,
		 struct sbx_sh_parse *out)
{
	memset(out, 0, sizeof(*out));
	return sbx_sh_parse_depth(text, cwd, home, 0, out);
}

void sbx_sh_parse_free(struct sbx_sh_parse *p)
{
	for (size_t k = 0; k < p->n; k++) {
		struct sbx_sh_cmd *c = &p->cmds[k];

		for (int a = 0; a < c->argc; a++)
			free(c->argv[a].val);
		for (size_t a = 0; a < c->n_redir; a++)
			free(c->redir[a].target.val);
		free(c->argv);
		free(c->redir);
		free(c->cwd);
	}
	free(p->cmds);
	free(p->why);
	memset(p, 0, sizeof(*p));
}
