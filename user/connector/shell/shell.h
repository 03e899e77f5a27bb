/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shell.h - static analysis of a shell command line for the agent
 * connectors (the Claude Code hook and the MCP server).
 *
 * Two stages (the second is classify/classify.h):
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


#include "user/connector/shell/words.h"

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
