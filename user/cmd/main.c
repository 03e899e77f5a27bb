// SPDX-License-Identifier: GPL-2.0
/* bpfsbx: one binary, one file per subcommand (see cmd.h). */
#include <stdio.h>
#include <string.h>
#include "user/cmd/cmd.h"
#include "version.h"

extern const struct sbx_cmd __start_sbx_cmds[];
extern const struct sbx_cmd __stop_sbx_cmds[];

void sbx_usage(FILE *out)
{
	fprintf(out, "usage: bpfsbx COMMAND [ARGS...]\n       bpfsbx help COMMAND\n"
		     "       bpfsbx --version\n\ncommands:\n");
	for (const struct sbx_cmd *c = __start_sbx_cmds; c < __stop_sbx_cmds; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out, "\n`bpfsbx help COMMAND` (or COMMAND --help) shows one command's options;\n"
		     "man bpfsbx has them all.\n");
}

static int print_version(void)
{
	printf("bpfsbx %s\ncommit %s\n", SBX_VERSION_FULL, SBX_GIT_COMMIT);
	return SBX_EXIT_OK;
}

/* getopt names the program by argv[0]: make that "bpfsbx CMD" */
static int dispatch(const struct sbx_cmd *c, int argc, char **argv)
{
	char name[64];

	snprintf(name, sizeof(name), "bpfsbx %s", c->name);
	argv[0] = name;
	return c->fn(argc, argv);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		sbx_usage(stderr);
		return SBX_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") || !strcmp(argv[1], "version"))
		return print_version();
	/* the build's generator of bpfsbx(1) and the completion (Makefile) */
	if (!strcmp(argv[1], "help") && argc == 4 && !strcmp(argv[2], "--gen"))
		return sbx_cmd_gen(argv[3]) ? SBX_EXIT_USAGE : SBX_EXIT_OK;
	if (!strcmp(argv[1], "help") && argc > 2) {
		const struct sbx_cmd *h = sbx_cmd_find(argv[2]);

		if (!h) {
			fprintf(stderr, "bpfsbx: unknown command '%s' (try 'bpfsbx --help')\n", argv[2]);
			return SBX_EXIT_USAGE;
		}
		sbx_cmd_help(stdout, h);
		return SBX_EXIT_OK;
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
	/* CMD --help is `help CMD`: one text, from the command's option table */
	if (argc == 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
		sbx_cmd_help(stdout, c);
		return SBX_EXIT_OK;
	}
	return dispatch(c, argc - 1, argv + 1);
}
