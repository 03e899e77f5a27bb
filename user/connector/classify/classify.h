/* SPDX-License-Identifier: GPL-2.0 */
/*
 * classify.h - a shell command line's verdict, from what shell.h's parser
 * makes of it: the policy's commands, files and network sections, and a
 * few built-in rules (rm -r of / or ~, force push).
 */
#ifndef SBX_CLASSIFY_H
#define SBX_CLASSIFY_H

#include "user/connector/conn_policy.h"
#include "user/connector/shell/shell.h"

/* Verdict for a whole command line, the max over all its parts, with the
 * reason of the part that decided. cp may be NULL only in tests of the
 * parser-level rules (then every policy question answers allow). */
int sbx_sh_classify(struct sbx_conn_policy *cp, const char *text, const char *cwd,
		    struct sbx_conn_verdict *out);

#endif
