/* SPDX-License-Identifier: GPL-2.0 */
/*
 * check.h - the classifier's state and its checks (check.c), which every
 * other part of the classifier builds on. Not an API; that is classify.h.
 */
#ifndef SBX_CLASSIFY_CHECK_H
#define SBX_CLASSIFY_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include "user/connector/conn_policy.h"
#include "user/connector/shell/shell.h"

struct cls {
	struct sbx_conn_policy *cp;
	struct sbx_conn_verdict *acc;
	const char *home;
	const char *project;	/* NULL: unknown (then everything is "outside") */
	bool kernel;		/* the caller runs in a kernel-confined session */
	/* the walk (classify.c), for the commands a program runs: one simple
	 * command, and a command line given as one word (sh -c TEXT), parsed
	 * one level deeper */
	void (*argv)(struct cls *c, int argc, const struct sbx_sh_word *argv, const char *cwd,
		     int depth, bool stdin_args);
	void (*text)(struct cls *c, const struct sbx_sh_word *w, const char *cwd, int depth);
};

typedef const struct sbx_sh_word word_t;

void cls_merge(struct cls *c, struct sbx_conn_verdict *v);
/* a built-in rule's verdict */
void cls_builtin(struct cls *c, uint8_t verdict, const char *what, const char *reason);
/* "could not analyse": ask, never allow */
void cls_unanalysed(struct cls *c, const char *why);
const char *cls_basename(const char *p);
/* the absolute path abs, for access acc, against the policy (/dev streams pass) */
void cls_decide_abs(struct cls *c, const char *abs, enum sbx_access acc);
void cls_check_file(struct cls *c, word_t *w, const char *cwd, enum sbx_access acc);
void cls_check_host(struct cls *c, const char *host, int port);
void cls_check_url(struct cls *c, word_t *w, int default_port);
char *cls_remote_host(const char *s);
/* unquoted * ? [ or { in s */
bool cls_has_glob(const char *s);
/* a pattern's expansions against the policy's deny and ask rules */
void cls_check_pattern(struct cls *c, const char *abs, enum sbx_access acc);
/* not seen through: ask with hooks only, the kernel's when it enforces */
void cls_opaque(struct cls *c, const char *why);

#endif
