/* SPDX-License-Identifier: GPL-2.0 */
/*
 * programs.h - what known programs do with their arguments (programs.c).
 * The commands they run go back to the walk through the cls callbacks.
 */
#ifndef SBX_CLASSIFY_PROGRAMS_H
#define SBX_CLASSIFY_PROGRAMS_H

#include <stdbool.h>
#include "user/connector/classify/check.h"

/* What the program called name (argv[0]'s base name) is known to do with
 * its arguments; nothing for a program it does not know. */
void cls_known_program(struct cls *c, const char *name, int argc, word_t *argv,
		       const char *cwd, int depth, bool stdin_args);

#endif
