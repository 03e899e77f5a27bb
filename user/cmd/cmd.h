/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Subcommand registration. Each user/<name>.c registers itself with
 * SBX_COMMAND(); main() finds them through the linker section, so adding
 * a subcommand never means editing a central table.
 */
#ifndef SBX_CMD_H
#define SBX_CMD_H

#include <stdio.h>
#include "lib/exit.h"

/*
 * One command's options, in one table that its parser (sbx_getopt, or
 * sbx_opt_find for a hand parser), `bpfsbx help CMD`, bpfsbx(1) and the
 * bash completion all read: an option cannot be parsed and left
 * undocumented. -h/--help is every command's and is not in the tables.
 * An entry with .name NULL and .sub set is a subcommand word (policy
 * check, hook pre-tool-use); the table ends with an all-zero entry.
 */
struct sbx_opt {
	const char *name;	/* long name, without "--" */
	int val;		/* what sbx_getopt returns for it */
	char shortopt;		/* also -X (X == val), or 0 */
	char comp;		/* completion of the argument: 'd' a directory,
				 * 'f' a file, 'y' a policy file, 0 none (a word
				 * list when .arg has '|') */
	const char *arg;	/* NULL: a flag; else its argument as help shows it */
	const char *def;	/* the default, as help shows it, or NULL */
	const char *help;	/* one line */
	const char *sub;	/* only with this subcommand, or NULL; a subcommand
				 * word when .name is NULL */
};

struct sbx_cmd {
	const char *name;
	const char *usage;	/* one line: arguments */
	const char *summary;	/* one line: what it does */
	int (*fn)(int argc, char **argv);	/* argv[0] is the subcommand */
	const struct sbx_opt *opts;
};

#define SBX_COMMAND(ident, name_, usage_, summary_, fn_, opts_)		\
	static const struct sbx_cmd sbx_cmd_##ident				\
	__attribute__((used, section("sbx_cmds"), aligned(8))) = {		\
		.name = name_, .usage = usage_, .summary = summary_, .fn = fn_,	\
		.opts = opts_							\
	}

const struct sbx_cmd *sbx_cmd_find(const char *name);
void sbx_usage(FILE *out);

/* getopt_long over a table ('+' first in flags: stop at the first operand) */
int sbx_getopt(int argc, char **argv, const struct sbx_opt *t, const char *flags);
/* the entry of long option NAME (without "--"), or NULL */
const struct sbx_opt *sbx_opt_find(const struct sbx_opt *t, const char *name);
/* the entry of subcommand word WORD (.name NULL, .sub WORD), or NULL */
const struct sbx_opt *sbx_sub_find(const struct sbx_opt *t, const char *word);
/* `bpfsbx help CMD`: usage, summary, every option with argument and default */
void sbx_cmd_help(FILE *out, const struct sbx_cmd *c);
/* the generated parts of bpfsbx(1) ("man") and of the bash completion ("bash") */
int sbx_cmd_gen(const char *what);

#endif
