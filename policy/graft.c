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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/alloc.h"
#include "policy/policy.h"

/* c's entry for k, made (sorted, as the compiler leaves them) if missing;
 * NULL when out of memory */
static struct sbx_inode_entry *entry_of(struct sbx_compiled *c, const struct sbx_inode_key *k)
{
	struct sbx_inode_entry *v;
	size_t at = 0;

	for (size_t i = 0; i < c->n_inode; i++)
		if (!memcmp(&c->inode[i].k, k, sizeof(*k)))
			return &c->inode[i];
	v = realloc(c->inode, (c->n_inode + 1) * sizeof(*v));
	if (!v)
		return NULL;
	c->inode = v;
	/* sorted by key bytes (bsearch) */
	while (at < c->n_inode && memcmp(&c->inode[at].k, k, sizeof(*k)) < 0)
		at++;
	memmove(&c->inode[at + 1], &c->inode[at], (c->n_inode - at) * sizeof(*v));
	memset(&c->inode[at], 0, sizeof(*v));
	c->inode[at].k = *k;
	/* no label: a compile the daemon keeps has none (compile_as.c) */
	for (int a = 0; a < SBX_ACC_MAX; a++)
		c->inode[at].v.verdict[a] = SBX_V_NONE;
	c->n_inode++;
	return &c->inode[at];
}

int sbx_compiled_graft(struct sbx_compiled *c, const struct sbx_graft *g, char **why)
{
	struct sbx_decision out[SBX_ACC_MAX];
	struct sbx_inode_key k = { .policy_id = c->hdr.policy_id, .dev = g->dev, .ino = g->ino };
	struct sbx_inode_entry *e;
	uint32_t dev = 0;
	uint64_t ino = 0;
	bool moved;
	int rc;

	*why = NULL;
	/* The mount root is the object the container holds, whatever its
	 * host path names now: when that is gone, another object or cannot
	 * be looked at, what the policy decides at the path is not the
	 * root's, and nothing is. The path is looked at before and after
	 * it is decided: a symbolic link on it flipped meanwhile would put
	 * one object's decision on another. */
	rc = sbx_kident(g->path, true, &dev, &ino);
	moved = rc || dev != g->dev || ino != g->ino;
	if (!moved) {
		rc = sbx_decide_path_each(c, g->path, out);
		if (rc == -ENOMEM)
			return rc;
		moved = rc || sbx_kident(g->path, true, &dev, &ino) || dev != g->dev ||
			ino != g->ino;
	}
	/* What no rule can carry: the queue and policy files are refused
	 * to every session whatever its rules say, by name (.sandbox) or by
	 * identity on the way up, and neither is on the way from inside. */
	if (!moved && (out[SBX_ACC_WRITE].rule_id == SBX_RULE_SANDBOX_DIR ||
		       out[SBX_ACC_WRITE].rule_id == SBX_RULE_PROTECTED)) {
		if (asprintf(why, "%s is %s: no session may have it mounted", g->path,
			     out[SBX_ACC_WRITE].rule_id == SBX_RULE_SANDBOX_DIR ?
			     "inside a project's .sandbox directory (its queue and policy)" :
			     "inside a protected policy file's directory") < 0)
			*why = NULL;
		return -EPERM;
	}
	e = entry_of(c, &k);
	if (!e)
		return -ENOMEM;
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		if (moved) {
			e->v.verdict[a] = SBX_V_DENY;
			e->v.rule_id[a] = SBX_RULE_MOUNT_MOVED;
		} else if (e->v.verdict[a] == SBX_V_NONE) {
			/* the default too: above the root the container has
			 * its own directories, whose grafts (its root
			 * filesystem's) may differ */
			e->v.verdict[a] = out[a].verdict;
			e->v.rule_id[a] = out[a].rule_id;
		}
	}
	return 0;
}

struct sbx_graft *sbx_grafts_dup(const struct sbx_graft *v)
{
	struct sbx_graft *d;
	size_t n = 0;

	if (!v)
		return NULL;
	while (v[n].path)
		n++;
	d = sbx_calloc(n + 1, sizeof(*d));
	for (size_t i = 0; i < n; i++) {
		d[i] = v[i];
		d[i].path = sbx_strdup(v[i].path);
	}
	return d;
}

void sbx_grafts_free(struct sbx_graft *v)
{
	for (size_t i = 0; v && v[i].path; i++)
		free(v[i].path);
	free(v);
}
