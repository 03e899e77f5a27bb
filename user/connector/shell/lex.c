// SPDX-License-Identifier: GPL-2.0
/*
 * The shell parser's lexer: text -> tokens. A word comes out with its
 * quotes removed and with what is known statically expanded (variables
 * set earlier on the line, $HOME, $PWD, ~ and ~user); a part that only
 * the run time knows makes the word dynamic rather than guessed. Command
 * and process substitutions are parsed where they are met, so their
 * commands count too. Here-document bodies are skipped, unless they could
 * run a substitution: then it gives up.
 *
 * The commands, lists and subshells are parsed in shell.c.
 */
#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/alloc.h"
#include "lib/text.h"
#include "user/connector/shell/lex.h"

/* ---- parser state --------------------------------------------------- */

void sh_fail(struct ps *ps, const char *fmt, ...)
{
	va_list ap;

	if (ps->out->unanalysed)
		return;
	ps->out->unanalysed = true;
	va_start(ap, fmt);
	ps->out->why = sbx_vformat(fmt, ap);
	va_end(ap);
}

const char *sh_var_lookup(struct ps *ps, const char *name, bool *known)
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

/* ---- words ------------------------------------------------------------ */

static bool is_meta(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' ||
	       c == '(' || c == ')' || c == '<' || c == '>';
}

bool sh_name_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

void sh_word_free(struct sbx_sh_word *w)
{
	free(w->val);
	w->val = NULL;
}

/*
 * Find the ')' that closes an opening '(' just before s[i]. Quotes,
 * escapes, nested parentheses, $( ), backticks and comments are skipped.
 * Returns the index of the ')' or -1.
 */
long sh_find_close_paren(const char *s, size_t n, size_t i)
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
					long k = sh_find_close_paren(s, n, j + 2);

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

/* $( ... ): s[i] is just after "$(". Parses the inside; returns the index
 * after ')' or -1. */
static long cmd_subst(struct ps *ps, size_t i)
{
	long close = sh_find_close_paren(ps->s, ps->n, i);

	if (close < 0) {
		sh_fail(ps, "unbalanced $( )");
		return -1;
	}
	if (ps->parse_text(ps, ps->s + i, close - i) < 0)
		return -1;
	return close + 1;
}

static void tilde(struct ps *ps, struct sbx_strbuf *b, struct tok *t)
{
	size_t j = ps->i + 1;

	while (j < ps->n && !is_meta(ps->s[j]) && ps->s[j] != '/' && ps->s[j] != ':' &&
	       (name_char(ps->s[j]) || ps->s[j] == '-' || ps->s[j] == '.'))
		j++;
	if (j < ps->n && !is_meta(ps->s[j]) && ps->s[j] != '/' && ps->s[j] != ':') {
		/* "~foo$x", "~'a'": not a tilde prefix */
		sbx_sb_putc(b, '~');
		ps->i++;
		return;
	}
	if (j == ps->i + 1) {
		sbx_sb_puts(b, ps->home);
	} else {
		char *user = strndup(ps->s + ps->i + 1, j - ps->i - 1);
		struct passwd *pw = user ? getpwnam(user) : NULL;

		if (pw && pw->pw_dir)
			sbx_sb_puts(b, pw->pw_dir);
		else
			t->w.dynamic = true;
		free(user);
	}
	t->plain = false;
	ps->i = j;
}

/* $... at ps->i (in double quotes when dq). Appends the known value. */
static int dollar(struct ps *ps, struct sbx_strbuf *b, struct tok *t, bool dq)
{
	const char *s = ps->s;
	size_t i = ps->i + 1, n = ps->n;

	t->plain = false;
	if (i >= n) {
		sbx_sb_putc(b, '$');
		ps->i = i;
		return 0;
	}
	if (s[i] == '(' && i + 1 < n && s[i + 1] == '(') {
		long close = sh_find_close_paren(s, n, i + 2);
		if (close < 0 || close + 1 >= (long)n || s[close + 1] != ')') {
			sh_fail(ps, "unbalanced $(( ))");
			return -1;
		}
		if (memmem(s + i, close - i, "$(", 2) || memchr(s + i, '`', close - i)) {
			sh_fail(ps, "command substitution inside arithmetic");
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
			sh_fail(ps, "unbalanced ${ }");
			return -1;
		}
		/* s[i+1 .. j-2] is the inside */
		size_t len = j - 1 - (i + 1);
		const char *in = s + i + 1;
		size_t k = 0;

		while (k < len && name_char(in[k]))
			k++;
		if (k == len && k > 0 && sh_name_start(in[0])) {
			char *name = strndup(in, len);
			bool known;
			const char *v = name ? sh_var_lookup(ps, name, &known) : NULL;

			if (v)
				sbx_sb_puts(b, v);
			else
				t->w.dynamic = true;
			free(name);
		} else {
			if (memmem(in, len, "$(", 2) || memchr(in, '`', len)) {
				sh_fail(ps, "command substitution inside ${ }");
				return -1;
			}
			t->w.dynamic = true;
		}
		ps->i = j;
		return 0;
	}
	if (!dq && (s[i] == '\'' || s[i] == '"'))	/* $'..' / $"..": the caller quotes */
		return 1;
	if (sh_name_start(s[i])) {
		size_t j = i;
		while (j < n && name_char(s[j]))
			j++;
		char *name = strndup(s + i, j - i);
		bool known;
		const char *v = name ? sh_var_lookup(ps, name, &known) : NULL;

		if (v)
			sbx_sb_puts(b, v);
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
	sbx_sb_putc(b, '$');
	ps->i = i;
	return 0;
}

static int backtick(struct ps *ps, struct tok *t)
{
	struct sbx_strbuf in = { 0 };
	size_t j = ps->i + 1;
	int r;

	while (j < ps->n && ps->s[j] != '`') {
		if (ps->s[j] == '\\' && j + 1 < ps->n && strchr("\\`$", ps->s[j + 1])) {
			sbx_sb_putc(&in, ps->s[j + 1]);
			j += 2;
			continue;
		}
		sbx_sb_putc(&in, ps->s[j]);
		j++;
	}
	if (j >= ps->n) {
		free(in.p);
		sh_fail(ps, "unbalanced backquote");
		return -1;
	}
	if (in.oom) {
		free(in.p);
		return -ENOMEM;
	}
	r = ps->parse_text(ps, in.p ? in.p : "", in.len);
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
static int ansi_c(struct ps *ps, struct sbx_strbuf *b, struct tok *t)
{
	size_t j = ps->i + 2;

	while (j < ps->n && ps->s[j] != '\'') {
		if (ps->s[j] == '\\' && j + 1 < ps->n) {
			const char *m = strchr("n\nt\tr\ra\ab\be\033f\fv\v\\\\''\"\"??", ps->s[j + 1]);

			if (m && ((m - "n\nt\tr\ra\ab\be\033f\fv\v\\\\''\"\"??") % 2) == 0)
				sbx_sb_putc(b, m[1]);
			else
				t->w.dynamic = true;
			j += 2;
			continue;
		}
		sbx_sb_putc(b, ps->s[j]);
		j++;
	}
	if (j >= ps->n) {
		sh_fail(ps, "unbalanced $'");
		return -1;
	}
	t->plain = false;
	t->quoted = true;
	ps->i = j + 1;
	return 0;
}

static int double_quoted(struct ps *ps, struct sbx_strbuf *b, struct tok *t)
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
				sbx_sb_putc(b, d);
			} else {
				sbx_sb_putc(b, '\\');
				sbx_sb_putc(b, d);
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
		sbx_sb_putc(b, c);
		ps->i++;
	}
	if (ps->i >= ps->n) {
		sh_fail(ps, "unbalanced double quote");
		return -1;
	}
	ps->i++;
	return 0;
}

/* Process substitution <( ) or >( ) at ps->i: the commands inside are
 * parsed; the word itself is a pipe, /dev/fd/N, not a file of interest. */
static int proc_subst(struct ps *ps, struct sbx_strbuf *b, struct tok *t)
{
	long after = cmd_subst(ps, ps->i + 2);

	if (after < 0)
		return -1;
	sbx_sb_puts(b, "/dev/fd/63");
	t->plain = false;
	ps->i = after;
	return 0;
}

static int lex_word(struct ps *ps, struct tok *t)
{
	struct sbx_strbuf b = { 0 };
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
			sbx_sb_putc(&b, c);
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
					sbx_sb_putc(&b, ps->s[ps->i + 1]);
				ps->i += 2;
			} else {
				ps->i++;
			}
			continue;
		}
		if (c == '\'') {
			const char *q = memchr(ps->s + ps->i + 1, '\'', ps->n - ps->i - 1);

			if (!q) {
				sh_fail(ps, "unbalanced single quote");
				r = -1;
				goto out;
			}
			sbx_sb_putn(&b, ps->s + ps->i + 1, q - (ps->s + ps->i + 1));
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
		    sh_name_start(ps->s[start])) {
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
		sbx_sb_putc(&b, c);
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
		sh_fail(ps, "more than %u words", SBX_SH_MAX_WORDS);
		r = -1;
	}
out:
	free(b.p);
	if (r < 0) {
		sh_word_free(&t->w);
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
				sh_fail(ps, "here-document with command substitution");
				return -1;
			}
		}
		if (!found) {
			sh_fail(ps, "unterminated here-document (no line '%s')", hd->delim);
			return -1;
		}
	}
	for (int h = 0; h < ps->nhd; h++)
		free(ps->hd[h].delim);
	ps->nhd = 0;
	return 0;
}

/* ---- tokens --------------------------------------------------------------- */

int sh_next_token(struct ps *ps, struct tok *t)
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
			sh_fail(ps, "unterminated here-document (no line '%s')", ps->hd[0].delim);
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
			sh_fail(ps, "case statements are not analysed");
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
			return sh_next_token(ps, t);
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
				sh_fail(ps, "{var} redirections are not analysed");
				t->type = T_ERR;
				return -1;
			}
		}
	}
	return lex_word(ps, t);
}
