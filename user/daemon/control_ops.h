/* SPDX-License-Identifier: GPL-2.0 */
/*
 * control_ops.h - the daemon's control protocol (SBX_CONTROL_SOCK): one
 * JSON object per line, one request and one reply per connection.
 *
 * Every operation is one row of the table in control_ops.c: its name, its
 * handler, who may send it, its arguments and what it replies. The table
 * is the documentation: docs/CONTROL.md is what sbx_ctl_describe() prints
 * from it, and a unit test fails when the two differ.
 */
#ifndef SBX_CONTROL_OPS_H
#define SBX_CONTROL_OPS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <jansson.h>
#include "user/daemon/state.h"

/* Who is asking, as the kernel tells it (SO_PEERCRED): never what the
 * caller says about itself. */
struct sbx_ctl_caller {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	bool in_session;		/* the caller is inside some session */
	int passed_fd;			/* a descriptor it sent along, or -1 */
	struct sbx_session_rt *session;	/* which one, if the daemon knows it */
};

enum sbx_ctl_who {
	SBX_CTL_ANYONE = 0,
	SBX_CTL_ROOT = 1u << 0,		/* uid 0 only */
	SBX_CTL_OUTSIDE = 1u << 1,	/* never from inside a session: an agent must
					 * not change its own rules or start sessions */
	SBX_CTL_INSIDE = 1u << 2,	/* only from inside a session (connectors) */
};

enum sbx_ctl_arg_type { SBX_ARG_STRING, SBX_ARG_OBJECT, SBX_ARG_BOOL };

struct sbx_ctl_arg {
	const char *name;
	enum sbx_ctl_arg_type type;
	bool required;
	const char *doc;
};

struct sbx_ctl_op {
	const char *name;
	json_t *(*fn)(struct sbx_daemon *d, const struct sbx_ctl_caller *c, json_t *req);
	unsigned who;			/* enum sbx_ctl_who */
	const struct sbx_ctl_arg *args;	/* ends with { NULL } */
	const char *summary, *reply;
};

/* The op of this name, or NULL. */
const struct sbx_ctl_op *sbx_ctl_op_find(const char *name);
/* Is caller c allowed to send req to op, with arguments of the right
 * shape? NULL if so, else the error for the reply (malloc'd). */
char *sbx_ctl_check(const struct sbx_ctl_op *op, const struct sbx_ctl_caller *c,
		    const json_t *req);
/* The reply to one request: {"ok":true,...} or {"ok":false,"error":TEXT}. */
json_t *sbx_ctl_handle(struct sbx_daemon *d, const struct sbx_ctl_caller *c, json_t *req);
json_t *sbx_ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The protocol in Markdown, from the table (docs/CONTROL.md). */
void sbx_ctl_describe(FILE *f);
/* The table itself, for the tests: *n rows. */
const struct sbx_ctl_op *sbx_ctl_ops(size_t *n);

#endif
