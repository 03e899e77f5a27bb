/* SPDX-License-Identifier: GPL-2.0 */
/*
 * words.h - what the shell parser makes of a line (shell.h): simple
 * commands of words and redirections. The lexer (lex.c) builds the words,
 * the parser (shell.c) the commands.
 */
#ifndef SBX_SHELL_WORDS_H
#define SBX_SHELL_WORDS_H

#include <stdbool.h>
#include <stddef.h>

#define SBX_SH_MAX_TEXT		(64u << 10)	/* longer lines are not analysed */
#define SBX_SH_MAX_DEPTH	8		/* nesting of $( ), sh -c, ... */
#define SBX_SH_MAX_CMDS		512
#define SBX_SH_MAX_WORDS	4096

enum sbx_sh_redir_kind {
	SBX_REDIR_READ,		/* < file */
	SBX_REDIR_WRITE,	/* > >| >> &> &>> file */
	SBX_REDIR_RDWR,		/* <> file */
};

struct sbx_sh_word {
	char *val;		/* quotes removed, known variables and ~ expanded */
	bool dynamic;		/* part of the value is only known at run time */
	bool glob;		/* unquoted * ? [ or brace expansion */
};

struct sbx_sh_redir {
	enum sbx_sh_redir_kind kind;
	struct sbx_sh_word target;
};

struct sbx_sh_cmd {
	int argc;
	struct sbx_sh_word *argv;
	size_t n_redir;
	struct sbx_sh_redir *redir;
	char *cwd;		/* where it runs; NULL when not known statically */
	int depth;		/* 0 = top level; >0 inside $( ), sh -c ... */
	bool stdin_args;	/* xargs: more arguments come from stdin */
};

struct sbx_sh_parse {
	struct sbx_sh_cmd *cmds;
	size_t n, cap;
	bool unanalysed;	/* could not analyse: the line must not be allowed */
	char *why;		/* first reason, for people */
};

#endif
