/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Subcommand registration. Each user/<name>.c registers itself with
 * SBX_COMMAND(); main() finds them through the linker section, so adding
 * a subcommand never means editing a central table.
 */
#ifndef SBX_CMD_H
#define SBX_CMD_H

#include <stdio.h>

struct sbx_cmd {
	const char *name;
	const char *usage;	/* one line: arguments */
	const char *summary;	/* one line: what it does */
	int (*fn)(int argc, char **argv);	/* argv[0] is the subcommand */
};

#define SBX_COMMAND(ident, name_, usage_, summary_, fn_)			\
	static const struct sbx_cmd sbx_cmd_##ident				\
	__attribute__((used, section("sbx_cmds"), aligned(8))) = {		\
		.name = name_, .usage = usage_, .summary = summary_, .fn = fn_	\
	}

const struct sbx_cmd *sbx_cmd_find(const char *name);
void sbx_usage(FILE *out);

/* Exit statuses shared by every subcommand. */
enum {
	SBX_EXIT_OK = 0,
	SBX_EXIT_FAIL = 1,	/* the operation failed (message on stderr) */
	SBX_EXIT_USAGE = 2,	/* bad command line */
};

#endif
