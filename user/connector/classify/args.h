/* SPDX-License-Identifier: GPL-2.0 */
/*
 * args.h - what an argument can name, whatever the program (args.c).
 */
#ifndef SBX_CLASSIFY_ARGS_H
#define SBX_CLASSIFY_ARGS_H

#include "user/connector/classify/check.h"

/* paths named in a program text, and in the arguments of a program with no spec */
void cls_scan_text(struct cls *c, const char *text, const char *cwd);
void cls_scan_args(struct cls *c, int argc, word_t *argv, const char *cwd);
void cls_awk_program(struct cls *c, const char *prog, const char *cwd);
void cls_sed_script(struct cls *c, const char *script, const char *cwd);

#endif
