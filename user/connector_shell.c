// SPDX-License-Identifier: GPL-2.0
/*
 * Shell command lines -> simple commands. This is not a shell: it follows
 * the parts of POSIX sh and bash that decide WHICH programs run on WHICH
 * files (lists, pipes, subshells, quoting, substitutions, redirections,
 * cd, plain assignments), and gives up, loudly, on everything else. A
 * give-up ("unanalysed") is never an allow: the connector asks a person.
 *
 * The classifier that turns the commands into verdicts is in
 * connector_classify.c.
 */
#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "user/connector_shell.h"

/* ---- growable string -------------------------------------------------- */

struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void sb_putn(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		char *p;

		while (cap < b->n + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void sb_putc(struct sbuf *b, char c)
{
	sb_putn(b, &c, 1);
}

static void sb_puts(struct sbuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

/* ---- parser state --------------------------------------------------- */

struct var {
	char *name;
	char *val;		/* NULL: not known statically */
};

struct heredoc {
	char *delim;
	bool quoted;		/* body is literal */
	bool strip_tabs;	/* <<- */
};

struct ps {
	const char *s;
	size_t n, i;
	struct sbx_sh_parse *out;
	const char *home;
	char *cwd;		/* NULL: unknown */
	struct var *vars;
	size_t nvars, capvars;
	int depth;
	bool in_dbracket;	/* [[ ... ]]: < and > are words */
	struct heredoc hd[8];
	int nhd;
	size_t *nwords;		/* shared across recursion */
};

enum tok_type { T_EOF, T_WORD, T_SEP, T_PIPE, T_LPAREN, T_RPAREN, T_REDIR, T_ERR };

enum redir_op {
	R_READ, R_WRITE, R_RDWR, R_DUP_OUT, R_DUP_IN, R_HEREDOC, R_HEREDOC_STRIP,
	R_HERESTRING,
};

struct tok {
	enum tok_type type;
	enum redir_op rop;
	struct sbx_sh_word w;
	bool plain;		/* word had no quotes, escapes or expansions */
	bool quoted;		/* word had quotes (heredoc delimiters) */
	int assign;		/* >0: "NAME=" prefix length (plain NAME) */
};

static void fail(struct ps *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct ps *ps, const char *fmt, ...)
{
	va_list ap;

	if (ps->out->unanalysed)
		return;
	ps->out->unanalysed = true;
	va_start(ap, fmt);
	if (vasprintf(&ps->out->why, fmt, ap) < 0)
		ps->out->why = NULL;
	va_end(ap);
}

static void word_free(struct sbx_sh_word *w)
{
	free(w->val);
	w->val = NULL;
}

static const char *var_lookup(struct ps *ps, const char *name, bool *known)
{
	*known = true;
	for (size_t k = ps->nvars; k-- > 0;)
		if (!strcmp(ps->vars[k].name, name)) {
			*known = ps->vars[k].val != NULL;
			return ps->vars[k].val;
		}
	if (!strcmp(name, "HOME"))
		return ps->home;
	if (!strcmp(name, "PWD") && ps->cwd)
		return ps->cwd;
	*known = false;
	return NULL;
}

static int var_set(struct ps *ps, const char *name, size_t nlen, const char *val)
{
	struct var *v;

	if (ps->nvars == ps->capvars) {
		size_t cap = ps->capvars ? ps->capvars * 2 : 8;

		v = realloc(ps->vars, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		ps->vars = v;
		ps->capvars = cap;
	}
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

/* ---- recursion into nested command text -------------------------------- */

static int parse_text(struct ps *parent, const char *text, size_t len);

/*
 * Find the ')' that closes an opening '(' just before s[i]. Quotes,
 * escapes, nested parentheses, $( ), backticks and comments are skipped.
 * Returns the index of the ')' or -1.
 */
static long find_close_paren(const char *s, size_t n, size_t i)
{
	int depth = 1;

	while (i < n) {
		char c = s[i];

		if (c == '\\') {
			i += 2;
			continue;
		}
		if (c == '\'') {
			const char *q = memchr(s + i + 1, '\'', n - i - 1);

			if (!q)
				return -1;
			i = q - s + 1;
			continue;
		}
		if (c == '"' || c == '`') {
			size_t j = i + 1;

			while (j < n && s[j] != c) {
				if (s[j] == '\\')
					j++;
				else if (c == '"' && s[j] == '$' && j + 1 < n && s[j + 1] == '(') {
					long k = find_close_paren(s, n, j + 2);

					if (k < 0)
						return -1;
					j = k;
				}
				j++;
			}
			if (j >= n)
				return -1;
			i = j + 1;
			continue;
		}
		if (c == '#' && (i == 0 || strchr(" \t\n;(|&", s[i - 1]))) {
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		if (c == '(')
			depth++;
		else if (c == ')' && --depth == 0)
			return (long)i;
		i++;
	}
	return -1;
}

/* ---- words ------------------------------------------------------------ */

static bool is_meta(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' ||
	       c == '(' || c == ')' || c == '<' || c == '>';
}

static bool name_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* $( ... ): s[i] is just after "$(". Parses the inside; returns the index
 * after ')' or -1. */
static long cmd_subst(struct ps *ps, size_t i)
{
	long close = find_close_paren(ps->s, ps->n, i);

	if (close < 0) {
		fail(ps, "unbalanced $( )");
		return -1;
	}
	if (parse_text(ps, ps->s + i, close - i) < 0)
		return -1;
	return close + 1;
}

static void tilde(struct ps *ps, struct sbuf *b, struct tok *t)
{
	size_t j = ps->i + 1;

	while (j < ps->n && !is_meta(ps->s[j]) && ps->s[j] != '/' && ps->s[j] != ':' &&
	       (name_char(ps->s[j]) || ps->s[j] == '-' || ps->s[j] == '.'))
		j++;
	if (j < ps->n && !is_meta(ps->s[j]) && ps->s[j] != '/' && ps->s[j] != ':') {
		/* "~foo$x", "~'a'": not a tilde prefix */
		sb_putc(b, '~');
		ps->i++;
		return;
	}
	if (j == ps->i + 1) {
		sb_puts(b, ps->home);
	} else {
		char *user = strndup(ps->s + ps->i + 1, j - ps->i - 1);
		struct passwd *pw = user ? getpwnam(user) : NULL;

		if (pw && pw->pw_dir)
			sb_puts(b, pw->pw_dir);
		else
			t->w.dynamic = true;
		free(user);
	}
	t->plain = false;
	ps->i = j;
}

/* $... at ps->i (in double quotes when dq). Appends the known value. */
static int dollar(struct ps *ps, struct sbuf *b, struct tok *t, bool dq)
{
	const char *s = ps->s;
	size_t i = ps->i + 1, n = ps->n;

	t->plain = false;
	if (i >= n) {
		sb_putc(b, '$');
		ps->i = i;
		return 0;
	}
	if (s[i] == '(' && i + 1 < n && s[i + 1] == '(') {
		long close = find_close_paren(s, n, i + 2);
		if (close < 0 || close + 1 >= (long)n || s[close + 1] != ')') {
			fail(ps, "unbalanced $(( ))");
			return -1;
		}
		if (memmem(s + i, close - i, "$(", 2) || memchr(s + i, '`', close - i)) {
			fail(ps, "command substitution inside arithmetic");
			return -1;
		}
		t->w.dynamic = true;
		ps->i = close + 2;
		return 0;
	}
	if (s[i] == '(') {
		long after = cmd_subst(ps, i + 1);

		if (after < 0)
			return -1;
		t->w.dynamic = true;
		ps->i = after;
		return 0;
	}
	if (s[i] == '{') {
		size_t j = i + 1, depth = 1;

		while (j < n && depth) {
			if (s[j] == '\\')
				j++;
			else if (s[j] == '{')
				depth++;
			else if (s[j] == '}')
				depth--;
			j++;
		}
		if (depth) {
			fail(ps, "unbalanced ${ }");
			return -1;
		}
		/* s[i+1 .. j-2] is the inside */
		size_t len = j - 1 - (i + 1);
		const char *in = s + i + 1;
		size_t k = 0;

		while (k < len && name_char(in[k]))
			k++;
		if (k == len && k > 0 && name_start(in[0])) {
			char *name = strndup(in, len);
			bool known;
			const char *v = name ? var_lookup(ps, name, &known) : NULL;

			if (v)
				sb_puts(b, v);
			else
				t->w.dynamic = true;
			free(name);
		} else {
			if (memmem(in, len, "$(", 2) || memchr(in, '`', len)) {
				fail(ps, "command substitution inside ${ }");
				return -1;
			}
			t->w.dynamic = true;
		}
		ps->i = j;
		return 0;
	}
	if (!dq && (s[i] == '\'' || s[i] == '"'))	/* $'..' / $"..": the caller quotes */
		return 1;
	if (name_start(s[i])) {
		size_t j = i;
		while (j < n && name_char(s[j]))
			j++;
		char *name = strndup(s + i, j - i);
		bool known;
		const char *v = name ? var_lookup(ps, name, &known) : NULL;

		if (v)
			sb_puts(b, v);
		else
			t->w.dynamic = true;
		free(name);
		ps->i = j;
		return 0;
	}
	if (isdigit((unsigned char)s[i]) || strchr("@*#?$!-", s[i])) {
		t->w.dynamic = true;
		ps->i = i + 1;
		return 0;
	}
	sb_putc(b, '$');
	ps->i = i;
	return 0;
}

static int backtick(struct ps *ps, struct tok *t)
{
	struct sbuf in = { 0 };
	size_t j = ps->i + 1;
	int r;

	while (j < ps->n && ps->s[j] != '`') {
		if (ps->s[j] == '\\' && j + 1 < ps->n && strchr("\\`$", ps->s[j + 1])) {
			sb_putc(&in, ps->s[j + 1]);
			j += 2;
			continue;
		}
		sb_putc(&in, ps->s[j]);
		j++;
	}
	if (j >= ps->n) {
		free(in.p);
		fail(ps, "unbalanced backquote");
		return -1;
	}
	if (in.oom) {
		free(in.p);
		return -ENOMEM;
	}
	r = parse_text(ps, in.p ? in.p : "", in.n);
	free(in.p);
	if (r < 0)
		return -1;
	t->w.dynamic = true;
	t->plain = false;
	ps->i = j + 1;
	return 0;
}

/* $'...' : ANSI-C quoting. Escapes that produce arbitrary bytes make the
 * value unknown (dynamic) rather than guessed. */
static int ansi_c(struct ps *ps, struct sbuf *b, struct tok *t)
{
	size_t j = ps->i + 2;

	while (j < ps->n && ps->s[j] != '\'') {
		if (ps->s[j] == '\\' && j + 1 < ps->n) {
			const char *m = strchr("n\nt\tr\ra\ab\be\033f\fv\v\\\\''\"\"??", ps->s[j + 1]);

			if (m && ((m - "n\nt\tr\ra\ab\be\033f\fv\v\\\\''\"\"??") % 2) == 0)
				sb_putc(b, m[1]);
			else
				t->w.dynamic = true;
			j += 2;
			continue;
		}
		sb_putc(b, ps->s[j]);
		j++;
	}
	if (j >= ps->n) {
		fail(ps, "unbalanced $'");
		return -1;
	}
	t->plain = false;
	t->quoted = true;
	ps->i = j + 1;
	return 0;
}

static int double_quoted(struct ps *ps, struct sbuf *b, struct tok *t)
{
	ps->i++;
	t->plain = false;
	t->quoted = true;
	while (ps->i < ps->n && ps->s[ps->i] != '"') {
		char c = ps->s[ps->i];

		if (c == '\\' && ps->i + 1 < ps->n) {
			char d = ps->s[ps->i + 1];

			if (d == '\n') {
				ps->i += 2;
				continue;
			}
			if (strchr("$`\"\\", d)) {
				sb_putc(b, d);
			} else {
				sb_putc(b, '\\');
				sb_putc(b, d);
			}
			ps->i += 2;
			continue;
		}
		if (c == '$') {
			if (dollar(ps, b, t, true) < 0)
				return -1;
			continue;
		}
		if (c == '`') {
			if (backtick(ps, t) < 0)
				return -1;
			continue;
		}
		sb_putc(b, c);
		ps->i++;
	}
	if (ps->i >= ps->n) {
		fail(ps, "unbalanced double quote");
		return -1;
	}
	ps->i++;
	return 0;
}

/* Process substitution <( ) or >( ) at ps->i: the commands inside are
 * parsed; the word itself is a pipe, /dev/fd/N, not a file of interest. */
static int proc_subst(struct ps *ps, struct sbuf *b, struct tok *t)
{
	long after = cmd_subst(ps, ps->i + 2);

	if (after < 0)
		return -1;
	sb_puts(b, "/dev/fd/63");
	t->plain = false;
	ps->i = after;
	return 0;
}

static int lex_word(struct ps *ps, struct tok *t)
{
	struct sbuf b = { 0 };
	size_t start = ps->i;
	bool in_assign_value = false;
	int r = 0;

	t->type = T_WORD;
	t->plain = true;
	t->quoted = false;
	t->assign = 0;
	memset(&t->w, 0, sizeof(t->w));
	while (ps->i < ps->n) {
		char c = ps->s[ps->i];

		if (ps->in_dbracket && (c == '<' || c == '>') && ps->i == start) {
			sb_putc(&b, c);
			ps->i++;
			break;
		}
		if ((c == '<' || c == '>') && ps->i + 1 < ps->n && ps->s[ps->i + 1] == '(') {
			if (ps->i != start)
				break;
			if ((r = proc_subst(ps, &b, t)) < 0)
				goto out;
			continue;
		}
		if (is_meta(c))
			break;
		if (c == '\\') {
			t->plain = false;
			if (ps->i + 1 < ps->n) {
				if (ps->s[ps->i + 1] != '\n')
					sb_putc(&b, ps->s[ps->i + 1]);
				ps->i += 2;
			} else {
				ps->i++;
			}
			continue;
		}
		if (c == '\'') {
			const char *q = memchr(ps->s + ps->i + 1, '\'', ps->n - ps->i - 1);

			if (!q) {
				fail(ps, "unbalanced single quote");
				r = -1;
				goto out;
			}
			sb_putn(&b, ps->s + ps->i + 1, q - (ps->s + ps->i + 1));
			ps->i = q - ps->s + 1;
			t->plain = false;
			t->quoted = true;
			continue;
		}
		if (c == '"') {
			if ((r = double_quoted(ps, &b, t)) < 0)
				goto out;
			continue;
		}
		if (c == '$') {
			r = dollar(ps, &b, t, false);
			if (r < 0)
				goto out;
			if (r == 1) {
				r = ps->s[ps->i + 1] == '\'' ? ansi_c(ps, &b, t)
							    : (ps->i++, double_quoted(ps, &b, t));
				if (r < 0)
					goto out;
			}
			continue;
		}
		if (c == '`') {
			if ((r = backtick(ps, t)) < 0)
				goto out;
			continue;
		}
		if (c == '~' && (ps->i == start || (in_assign_value &&
				 (ps->s[ps->i - 1] == '=' || ps->s[ps->i - 1] == ':')))) {
			tilde(ps, &b, t);
			continue;
		}
		if (c == '=' && !t->assign && t->plain && ps->i > start &&
		    name_start(ps->s[start])) {
			size_t k = start;

			while (k < ps->i && name_char(ps->s[k]))
				k++;
			if (k == ps->i || (k + 1 == ps->i && ps->s[k] == '+')) {
				t->assign = (int)(ps->i - start + 1);
				in_assign_value = true;
			}
		}
		if (c == '*' || c == '?' || c == '[')
			t->w.glob = true;
		if (c == '{') {
			size_t j = ps->i + 1;
			while (j < ps->n && !is_meta(ps->s[j]) && ps->s[j] != '}')
				j++;
			if (j < ps->n && ps->s[j] == '}' &&
			    (memchr(ps->s + ps->i, ',', j - ps->i) ||
			     memmem(ps->s + ps->i, j - ps->i, "..", 2)))
				t->w.glob = true;
		}
		sb_putc(&b, c);
		ps->i++;
	}
	if (b.oom) {
		r = -ENOMEM;
		goto out;
	}
	t->w.val = b.p ? b.p : strdup("");
	b.p = NULL;
	if (!t->w.val)
		r = -ENOMEM;
	if (++*ps->nwords > SBX_SH_MAX_WORDS) {
		fail(ps, "more than %u words", SBX_SH_MAX_WORDS);
		r = -1;
	}
out:
	free(b.p);
	if (r < 0) {
		word_free(&t->w);
		t->type = T_ERR;
	}
	return r;
}

/* ---- here-documents ------------------------------------------------------ */

/* ps->i is just after a newline: consume the bodies of pending heredocs. */
static int heredoc_bodies(struct ps *ps)
{
	for (int h = 0; h < ps->nhd; h++) {
		struct heredoc *hd = &ps->hd[h];
		bool found = false;

		while (ps->i < ps->n) {
			size_t ls = ps->i, le;
			const char *nl = memchr(ps->s + ls, '\n', ps->n - ls);

			le = nl ? (size_t)(nl - ps->s) : ps->n;
			ps->i = nl ? le + 1 : ps->n;
			if (hd->strip_tabs)
				while (ls < le && ps->s[ls] == '\t')
					ls++;
			if (le - ls == strlen(hd->delim) && !memcmp(ps->s + ls, hd->delim, le - ls)) {
				found = true;
				break;
			}
			if (!hd->quoted && (memmem(ps->s + ls, le - ls, "$(", 2) ||
					    memchr(ps->s + ls, '`', le - ls))) {
				fail(ps, "here-document with command substitution");
				return -1;
			}
		}
		if (!found) {
			fail(ps, "unterminated here-document (no line '%s')", hd->delim);
			return -1;
		}
	}
	for (int h = 0; h < ps->nhd; h++)
		free(ps->hd[h].delim);
	ps->nhd = 0;
	return 0;
}

/* ---- tokens --------------------------------------------------------------- */

static int next_token(struct ps *ps, struct tok *t)
{
	const char *s = ps->s;

	memset(t, 0, sizeof(*t));
again:
	while (ps->i < ps->n && (s[ps->i] == ' ' || s[ps->i] == '\t' || s[ps->i] == '\r'))
		ps->i++;
	if (ps->i + 1 < ps->n && s[ps->i] == '\\' && s[ps->i + 1] == '\n') {
		ps->i += 2;
		goto again;
	}
	if (ps->i < ps->n && s[ps->i] == '#') {
		while (ps->i < ps->n && s[ps->i] != '\n')
			ps->i++;
	}
	if (ps->i >= ps->n) {
		if (ps->nhd) {
			fail(ps, "unterminated here-document (no line '%s')", ps->hd[0].delim);
			t->type = T_ERR;
			return -1;
		}
		t->type = T_EOF;
		return 0;
	}
	char c = s[ps->i], d = ps->i + 1 < ps->n ? s[ps->i + 1] : 0;
	char e = ps->i + 2 < ps->n ? s[ps->i + 2] : 0;

	if (ps->in_dbracket && ((c == '&' && d == '&') || (c == '|' && d == '|') ||
				c == '(' || c == ')' || c == '<' || c == '>')) {
		/* inside [[ ]] these are operators of the test, not of the shell */
		size_t len = (c == '&' || c == '|') ? 2 : 1;

		t->type = T_WORD;
		t->plain = true;
		t->w.val = strndup(s + ps->i, len);
		if (!t->w.val) {
			t->type = T_ERR;
			return -ENOMEM;
		}
		ps->i += len;
		return 0;
	}

	switch (c) {
	case '\n':
		ps->i++;
		t->type = T_SEP;
		if (ps->nhd && heredoc_bodies(ps) < 0) {
			t->type = T_ERR;
			return -1;
		}
		return 0;
	case ';':
		if (d == ';' || d == '&') {
			fail(ps, "case statements are not analysed");
			t->type = T_ERR;
			return -1;
		}
		ps->i++;
		t->type = T_SEP;
		return 0;
	case '&':
		if (d == '&') {
			ps->i += 2;
			t->type = T_SEP;
			return 0;
		}
		if (d == '>') {
			ps->i += e == '>' ? 3 : 2;
			t->type = T_REDIR;
			t->rop = R_WRITE;
			return 0;
		}
		ps->i++;
		t->type = T_SEP;
		return 0;
	case '|':
		if (d == '|') {
			ps->i += 2;
			t->type = T_SEP;
			return 0;
		}
		ps->i += d == '&' ? 2 : 1;
		t->type = T_PIPE;
		return 0;
	case '(':
		ps->i++;
		t->type = T_LPAREN;
		return 0;
	case ')':
		ps->i++;
		t->type = T_RPAREN;
		return 0;
	case '<':
		if (d == '(')
			break;
		if (ps->in_dbracket)
			break;
		t->type = T_REDIR;
		if (d == '<' && e == '<') {
			ps->i += 3;
			t->rop = R_HERESTRING;
		} else if (d == '<' && e == '-') {
			ps->i += 3;
			t->rop = R_HEREDOC_STRIP;
		} else if (d == '<') {
			ps->i += 2;
			t->rop = R_HEREDOC;
		} else if (d == '>') {
			ps->i += 2;
			t->rop = R_RDWR;
		} else if (d == '&') {
			ps->i += 2;
			t->rop = R_DUP_IN;
		} else {
			ps->i++;
			t->rop = R_READ;
		}
		return 0;
	case '>':
		if (d == '(')
			break;
		if (ps->in_dbracket)
			break;
		t->type = T_REDIR;
		if (d == '>' || d == '|') {
			ps->i += 2;
			t->rop = R_WRITE;
		} else if (d == '&') {
			ps->i += 2;
			t->rop = R_DUP_OUT;
		} else {
			ps->i++;
			t->rop = R_WRITE;
		}
		return 0;
	}
	/* "2>file", "10<&0": a number right before a redirection operator */
	if (isdigit((unsigned char)c)) {
		size_t j = ps->i;

		while (j < ps->n && isdigit((unsigned char)s[j]))
			j++;
		if (j < ps->n && (s[j] == '<' || s[j] == '>') &&
		    !(j + 1 < ps->n && s[j + 1] == '(') && !ps->in_dbracket) {
			ps->i = j;
			return next_token(ps, t);
		}
	}
	if (c == '{' && d && d != ' ' && d != '\t' && d != '\n' &&
	    memchr(s + ps->i, '}', ps->n - ps->i)) {
		/* "{fd}>file": a variable receives the descriptor */
		const char *cl = memchr(s + ps->i, '}', ps->n - ps->i);
		size_t k = cl - s + 1;

		if (k < ps->n && (s[k] == '<' || s[k] == '>')) {
			bool name = true;
			for (const char *q = s + ps->i + 1; q < cl; q++)
				name = name && name_char(*q);
			if (name) {
				fail(ps, "{var} redirections are not analysed");
				t->type = T_ERR;
				return -1;
			}
		}
	}
	return lex_word(ps, t);
}

/* ---- commands ------------------------------------------------------------ */

struct cmd_build {
	struct sbx_sh_word *argv;
	int argc, cap;
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
		word_free(&cb->argv[k]);
	for (size_t k = 0; k < cb->n_redir; k++)
		word_free(&cb->redir[k].target);
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
	if (cb->argc == cb->cap) {
		int cap = cb->cap ? cb->cap * 2 : 8;
		struct sbx_sh_word *v = realloc(cb->argv, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		cb->argv = v;
		cb->cap = cap;
	}
	cb->argv[cb->argc++] = *w;
	memset(w, 0, sizeof(*w));
	return 0;
}

static int cb_add_redir(struct cmd_build *cb, enum sbx_sh_redir_kind k, struct sbx_sh_word *w)
{
	if (cb->n_redir == cb->cap_redir) {
		size_t cap = cb->cap_redir ? cb->cap_redir * 2 : 4;
		struct sbx_sh_redir *v = realloc(cb->redir, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		cb->redir = v;
		cb->cap_redir = cap;
	}
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
	struct sbuf b = { 0 };
	char *out, *p, *q;

	if (!word || !*word)
		return NULL;
	if (word[0] == '/')
		sb_puts(&b, word);
	else if (cwd) {
		sb_puts(&b, cwd);
		sb_putc(&b, '/');
		sb_puts(&b, word);
	} else {
		return NULL;
	}
	(void)home;
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	/* fold //, /./ and /../ lexically */
	out = malloc(b.n + 2);
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
		fail(ps, "more than %u commands", SBX_SH_MAX_CMDS);
		cb_free(cb);
		return -1;
	}
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 8;
		struct sbx_sh_cmd *v = realloc(out->cmds, cap * sizeof(*v));

		if (!v) {
			cb_free(cb);
			return -ENOMEM;
		}
		out->cmds = v;
		out->cap = cap;
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
		if (next_token(ps, &t) < 0) {
			r = -1;
			break;
		}
		switch (t.type) {
		case T_ERR:
			r = -1;
			goto out;
		case T_EOF:
			if (in_subshell) {
				fail(ps, "unbalanced ( )");
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
				fail(ps, "unbalanced ( )");
				r = -1;
				goto out;
			}
			r = finish_cmd(ps, &cb);
			goto out;
		case T_LPAREN:
			if (cb.argc || cb.n_assign || cb.n_redir || after_subshell) {
				fail(ps, "function definitions and arrays are not analysed");
				r = -1;
				goto out;
			}
			if (ps->i < ps->n && ps->s[ps->i] == '(') {
				/* (( arithmetic )) */
				long close = find_close_paren(ps->s, ps->n, ps->i + 1);

				if (close < 0 || close + 1 >= (long)ps->n || ps->s[close + 1] != ')') {
					fail(ps, "unbalanced (( ))");
					r = -1;
					goto out;
				}
				if (memmem(ps->s + ps->i, close - ps->i, "$(", 2) ||
				    memchr(ps->s + ps->i, '`', close - ps->i)) {
					fail(ps, "command substitution inside arithmetic");
					r = -1;
					goto out;
				}
				ps->i = close + 2;
				continue;
			}
			if (ps->depth + 1 > SBX_SH_MAX_DEPTH) {
				fail(ps, "nested too deeply");
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

			if (next_token(ps, &w) < 0 || w.type != T_WORD) {
				if (w.type == T_WORD)
					word_free(&w.w);
				fail(ps, "redirection without a target");
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
					word_free(&w.w);
				else
					r = cb_add_redir(&cb, op == R_DUP_OUT ? SBX_REDIR_WRITE
									: SBX_REDIR_READ, &w.w);
				break;
			}
			case R_HEREDOC:
			case R_HEREDOC_STRIP:
				if (ps->nhd == (int)(sizeof(ps->hd) / sizeof(ps->hd[0])) ||
				    w.w.dynamic) {
					word_free(&w.w);
					fail(ps, "here-document not analysed");
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
				word_free(&w.w);
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
			word_free(&t.w);
			fail(ps, "words after ( ... )");
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
				word_free(&t.w);
				continue;
			}
			if (t.plain && cb.n_assign == 0 &&
			    (!strcmp(t.w.val, "for") || !strcmp(t.w.val, "select"))) {
				struct tok nm;

				word_free(&t.w);
				if (next_token(ps, &nm) < 0 || nm.type != T_WORD || !nm.plain ||
				    !name_start(nm.w.val[0])) {
					if (nm.type == T_WORD)
						word_free(&nm.w);
					fail(ps, "for loops of this form are not analysed");
					r = -1;
					goto out;
				}
				r = var_set(ps, nm.w.val, strlen(nm.w.val), NULL);
				word_free(&nm.w);
				if (r < 0)
					goto out;
				/* the word list: substitutions in it were parsed while lexing */
				for (;;) {
					struct tok x;

					if (next_token(ps, &x) < 0) {
						r = -1;
						goto out;
					}
					if (x.type == T_WORD) {
						bool d = is_word(&x, "do");
						word_free(&x.w);
						if (d)
							break;
						continue;
					}
					if (x.type == T_SEP)
						continue;
					fail(ps, "for loops of this form are not analysed");
					r = -1;
					goto out;
				}
				continue;
			}
			if (t.plain && (!strcmp(t.w.val, "case") || !strcmp(t.w.val, "function") ||
					!strcmp(t.w.val, "coproc") || !strcmp(t.w.val, "esac"))) {
				fail(ps, "'%s' is not analysed", t.w.val);
				word_free(&t.w);
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
		word_free(&t.w);
	cb_free(&cb);
	if (ps->in_dbracket && r == 0) {
		ps->in_dbracket = false;
		fail(ps, "unbalanced [[ ]]");
		r = -1;
	}
	return r;
}

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
static int parse_text(struct ps *parent, const char *text, size_t len)
{
	struct ps ps = { 0 };
	int r;

	if (parent->depth + 1 > SBX_SH_MAX_DEPTH) {
		fail(parent, "nested too deeply");
		return -1;
	}
	ps.s = text;
	ps.n = len;
	ps.out = parent->out;
	ps.home = parent->home;
	ps.depth = parent->depth + 1;
	ps.nwords = parent->nwords;
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
	ps.cwd = cwd ? strdup(cwd) : NULL;
	if (cwd && !ps.cwd)
		return -ENOMEM;
	r = parse_list(&ps, false);
	ps_free(&ps);
	if (r == -ENOMEM)
		return r;
	if (r < 0 && !out->unanalysed)
		fail(&ps, "could not parse the command");
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
