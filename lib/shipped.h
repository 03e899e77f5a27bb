/* SPDX-License-Identifier: GPL-2.0 */
/* shipped.h - where the shipped policies (agent-default, strict, audit-only) are. */
#ifndef SBX_SHIPPED_H
#define SBX_SHIPPED_H

#include <stdbool.h>

/* A name a shipped policy can have: [a-z0-9_-]+ */
bool sbx_shipped_name_ok(const char *name);

/*
 * The shipped policy NAME, as a canonical path (malloc'd), or NULL. Looked
 * for in dir if it is given; otherwise in $BPFSBX_POLICY_DIR, next to the
 * running binary (build/../policy/shipped in a source tree), and in the
 * installed SBX_SHIPPED_POLICY_DIR, in that order. *looked, if not NULL,
 * gets the directories tried (", "-separated, malloc'd).
 */
char *sbx_shipped_policy(const char *name, const char *dir, char **looked);

/*
 * What a person gave as --policy or a policy FILE: a path when that file
 * exists (a path wins), else the shipped policy of that name, as
 * `extends:` takes it. Canonical path (malloc'd), or NULL with errno
 * ENOENT: neither.
 */
char *sbx_policy_arg(const char *arg);

#endif
