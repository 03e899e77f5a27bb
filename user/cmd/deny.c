// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx deny ID [--dir DIR] [--note TEXT]
 *
 * Claim a pending request and deny it, without a terminal UI. Options,
 * messages and exit statuses are those of approve (user/cmd/approve.c).
 */
#include <stdbool.h>
#include "user/cmd/cmd.h"

int sbx_cli_decide(int argc, char **argv, bool approve);	/* user/cmd/approve.c */

static int cmd_deny(int argc, char **argv)
{
	return sbx_cli_decide(argc, argv, false);
}

SBX_COMMAND(deny, "deny", "ID [--dir DIR] [--note TEXT]",
	    "deny a pending request without the watch UI", cmd_deny);
