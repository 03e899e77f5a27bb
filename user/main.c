// SPDX-License-Identifier: GPL-2.0
/* bpfsbx: one binary, one file per subcommand (see cmd.h). */
#include <stdio.h>
#include <string.h>
#include "user/cmd.h"

extern const struct sbx_cmd __start_sbx_cmds[];
extern const struct sbx_cmd __stop_sbx_cmds[];

const struct sbx_cmd *sbx_cmd_find(const char *name)
{
	for (const struct sbx_cmd *c = __start_sbx_cmds; c < __stop_sbx_cmds; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

void sbx_usage(FILE *out)
{
	fprintf(out, "usage: bpfsbx COMMAND [ARGS...]\n\ncommands:\n");
	for (const struct sbx_cmd *c = __start_sbx_cmds; c < __stop_sbx_cmds; c++)
		fprintf(out, "  %-10s %-40s %s\n", c->name, c->usage, c->summary);
	fprintf(out, "\nbpfsbx COMMAND --help shows the options of one command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		sbx_usage(stderr);
		return SBX_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		sbx_usage(stdout);
		return SBX_EXIT_OK;
	}
	const struct sbx_cmd *c = sbx_cmd_find(argv[1]);
	if (!c) {
		fprintf(stderr, "bpfsbx: unknown command '%s' (try 'bpfsbx --help')\n", argv[1]);
		return SBX_EXIT_USAGE;
	}
	return c->fn(argc - 1, argv + 1);
}
