/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shell.h - static analysis of a shell command line for the agent
 * connectors (the Claude Code hook and the MCP server).
 *
 * Two stages (the second is classify.h):
 *   sbx_sh_parse()    text -> flat list of simple commands (argv, the
 *                     redirections, the cwd each one runs in), looking
 *                     into pipes, lists, subshells, $( ), backticks,
 *                     <( ), sh -c '...' and wrapper prefixes (env, nice,
 *                     timeout, xargs, sudo ...). Pure: no policy, no I/O
 *                     except glob(3), getpwnam(3) for ~user.
 *   sbx_sh_classify() every simple command -> a verdict from the
 *                     policy (commands, files and network sections) and
 *                     a few built-in rules (rm -r of / or ~, force push).
 *
 * Anything the parser cannot follow with confidence makes the whole line
 * "unanalysed", which the classifier turns into ask: never allow.
 */
#ifndef SBX_SHELL_H
#define SBX_SHELL_H

#include <stdbool.h>
#include <stddef.h>
#include "user/connector/conn_policy.h"

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

/* home and cwd are absolute; cwd may be NULL (unknown). Returns 0, or
 * -ENOMEM. A line it cannot follow sets out->unanalysed and out->why
 * (still returning 0); the commands found up to there are kept. */
int sbx_sh_parse(const char *text, const char *cwd, const char *home,
		 struct sbx_sh_parse *out);
void sbx_sh_parse_free(struct sbx_sh_parse *p);

/* Resolve a word against cwd and home: absolute, lexically normalised
 * (. and .. folded, no symlink resolution: the policy decides on the
 * names, the kernel on inodes). NULL if the word is dynamic or the cwd
 * is unknown for a relative path. */
char *sbx_sh_resolve(const char *word, const char *cwd, const char *home);

#endif
