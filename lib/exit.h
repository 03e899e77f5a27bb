/* SPDX-License-Identifier: GPL-2.0 */
/*
 * exit.h - the exit statuses of bpfsbx, shared by every subcommand and by
 * the dashboard server, which returns one to `bpfsbx dashboard`.
 */
#ifndef SBX_EXIT_H
#define SBX_EXIT_H

enum {
	SBX_EXIT_OK = 0,
	SBX_EXIT_FAIL = 1,	/* the operation failed (message on stderr) */
	SBX_EXIT_USAGE = 2,	/* bad command line */
};

#endif
