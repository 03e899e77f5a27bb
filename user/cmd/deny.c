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
extern const struct sbx_opt sbx_deny_opts[];

static int cmd_deny(int argc, char **argv)
{
	return sbx_cli_decide(argc, argv, false);
}

SBX_COMMAND(deny, "deny", "ID [OPTIONS]",
	    "deny a pending request without the watch UI", cmd_deny, sbx_deny_opts);
