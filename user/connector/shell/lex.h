/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lex.h - the shell parser's lexer (words, quoting, expansions,
 * here-documents, tokens) and the state it reads, as the parser (shell.c:
 * commands, lists, subshells) uses them. Not an API; that is shell.h.
 *
 * The lexer parses the text of a command or process substitution where
 * it meets one, so that the commands inside are found as well. It does so
 * through ps->parse_text, which the parser sets: the lexer never calls
 * the parser by name.
 */
#ifndef SBX_SHELL_LEX_H
#define SBX_SHELL_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include "user/connector/shell/words.h"

/* ---- parser state ------------------------------------------------------ */

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
	/* the parser's: text nested in a line ($( ), backticks, <( )), one
	 * level deeper */
	int (*parse_text)(struct ps *parent, const char *text, size_t len);
};

/* Give up on the line: it becomes "unanalysed" (the first reason stays). */
void sh_fail(struct ps *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A variable's value; NULL with *known false when only the run time knows it. */
const char *sh_var_lookup(struct ps *ps, const char *name, bool *known);

/* ---- tokens ------------------------------------------------------------ */

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

void sh_word_free(struct sbx_sh_word *w);
bool sh_name_start(char c);
long sh_find_close_paren(const char *s, size_t n, size_t i);
/* The next token at ps->i; T_ERR (and a negative return) when it gives up. */
int sh_next_token(struct ps *ps, struct tok *t);

#endif
