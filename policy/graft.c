// SPDX-License-Identifier: GPL-2.0
/*
 * graft.c - a compiled policy as it must hold inside a bind mount.
 *
 * The kernel's walk goes up from an object through its directories and
 * across mount points (bpf/walk.bpf.c). Inside a container, a host
 * directory bind-mounted there is entered at its root from the
 * container's mountpoint: the host directories above the root are not on
 * the way, and neither are their rules (`~/.ssh/` for a mount of
 * ~/.ssh/keys, `${PROJECT}` for a mount of a project's subdirectory,
 * /tmp for a root filesystem below it). A graft puts on the mount root's
 * own inode what the policy decides there on the host, for every access
 * the root's own rules leave open.
 *
 * No decision on the host changes: below the root, every candidate that
 * was closer than the root still is, and of the root and everything above
 * it the graft is the candidate that won (a closest match is decided level
 * by level, so one candidate at the root's level stands for them all).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy/policy.h"

int sbx_compiled_graft(struct sbx_compiled *c, const char *root, char **why)
{
	struct sbx_decision out[SBX_ACC_MAX];
	struct sbx_inode_key k = { .policy_id = c->hdr.policy_id };
	struct sbx_inode_entry *e = NULL;
	uint64_t ino = 0;
	int rc;

	*why = NULL;
	rc = sbx_kident(root, true, &k.dev, &ino);
	k.ino = ino;
	if (!rc)
		rc = sbx_decide_path_each(c, root, out);
	if (rc) {
		if (asprintf(why, "%s: %s", root, strerror(-rc)) < 0)
			*why = NULL;
		return rc;
	}
	/* What no rule can carry: the queue and policy files are refused
	 * to every session whatever its rules say, by name (.sandbox) or by
	 * identity on the way up, and neither is on the way from inside. */
	if (out[SBX_ACC_WRITE].rule_id == SBX_RULE_SANDBOX_DIR ||
	    out[SBX_ACC_WRITE].rule_id == SBX_RULE_PROTECTED) {
		if (asprintf(why, "%s is %s: no session may have it mounted", root,
			     out[SBX_ACC_WRITE].rule_id == SBX_RULE_SANDBOX_DIR ?
			     "inside a project's .sandbox directory (its queue and policy)" :
			     "inside a protected policy file's directory") < 0)
			*why = NULL;
		return -EPERM;
	}
	for (size_t i = 0; i < c->n_inode; i++)
		if (!memcmp(&c->inode[i].k, &k, sizeof(k)))
			e = &c->inode[i];
	if (!e) {
		struct sbx_inode_entry *v = realloc(c->inode, (c->n_inode + 1) * sizeof(*v));
		size_t at = 0;

		if (!v)
			return -ENOMEM;
		c->inode = v;
		/* sorted by key bytes, as the compiler leaves them (bsearch) */
		while (at < c->n_inode && memcmp(&c->inode[at].k, &k, sizeof(k)) < 0)
			at++;
		memmove(&c->inode[at + 1], &c->inode[at], (c->n_inode - at) * sizeof(*v));
		e = &c->inode[at];
		memset(e, 0, sizeof(*e));
		e->k = k;
		/* no label: a compile the daemon keeps has none (compile_as.c) */
		e->what = NULL;
		for (int a = 0; a < SBX_ACC_MAX; a++)
			e->v.verdict[a] = SBX_V_NONE;
		c->n_inode++;
	}
	/* the default too: above the root the container has its own
	 * directories, whose grafts (its root filesystem's) may differ */
	for (int a = 0; a < SBX_ACC_MAX; a++)
		if (e->v.verdict[a] == SBX_V_NONE) {
			e->v.verdict[a] = out[a].verdict;
			e->v.rule_id[a] = out[a].rule_id;
		}
	return 0;
}
