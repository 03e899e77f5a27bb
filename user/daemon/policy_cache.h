/* SPDX-License-Identifier: GPL-2.0 */
/* policy_cache.h - compiled policies in the kernel's maps, shared between sessions. */
#ifndef SBX_POLICY_CACHE_H
#define SBX_POLICY_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "policy/policy.h"
#include "user/daemon/state.h"

/* how long a compiled policy is kept for the next session (the default) */
#define SBX_PCACHE_TTL_S 300

/* A compiled policy in the kernel that sessions may share. */
/* The counts of removals (bpf/removals.bpf.c) that a policy's entries
 * were given when it was applied. */
struct sbx_counted {
	struct { struct sbx_protect_key k; uint32_t n; } *v;
	size_t n;
};

struct sbx_pcache {
	uint32_t policy_id;
	uid_t uid;
	gid_t gid;
	char *home, *project, *policy_path;
	struct sbx_policy_hdr hdr;
	struct sbx_rule_table *rules;
	struct sbx_protect_key *protect;
	size_t n_protect;
	json_t *sources, *diags;
	json_t *names;			/* host rules and DNS settings (compile_as.h) */
	json_t *approval;		/* compile_as.h */
	dev_t project_dev, home_dev;
	ino_t project_ino, home_ino;
	uint64_t born_ns;
	uint64_t link_epoch;		/* SBX_EPOCH_LINK when last validated */
	uint32_t removals_any;		/* SBX_REMOVALS_ANY's count when last checked */
	struct sbx_counted counted;	/* its entries' counts of removals */
	bool link_epoch_ok;
	bool live;			/* compiled under SBX_OBTAIN_LIVE: never handed
					 * to a new session */
	bool learn;			/* for run --learn (sbx_policy_learn) */
	bool grafted;			/* a container's, with its mounts' grafts:
					 * never handed to another session */
	struct sbx_pcache *next;
};

/* What a session gets: the shared policy's rows (a reference) and copies
 * of its small tables. */
struct sbx_policy_use {
	struct sbx_policy_hdr hdr;
	struct sbx_rule_table *rules;	/* a reference */
	struct sbx_protect_key *protect;
	size_t n_protect;
	json_t *diags;
	json_t *names;
	json_t *approval;
	bool shared;			/* reused, not compiled now */
};

/* Insert every entry; on any failure remove what was inserted. The keys
 * are kept, so that the removal deletes exactly them. */
/* c into the rule maps, whole or not at all; *counted: the counts of
 * removals its entries were given (freed with the cache entry) */
int sbx_policy_apply(struct sbx_daemon *d, const struct sbx_compiled *c,
		     struct sbx_counted *counted, char **err);

/* How many times the kernel counted the removal of an object that an
 * inode rule was made for, since the counts began (bpf/removals.bpf.c). */
uint32_t sbx_removals_any(struct sbx_daemon *d);
void sbx_policy_remove(struct sbx_daemon *d, uint32_t policy_id);
/* The daemon's end: forget the kept keys (the entries stay in force). */
void sbx_applied_free_all(struct sbx_daemon *d);
/* The protected set follows the live sessions' policy files. */
void sbx_protect_sync(struct sbx_daemon *d);
/* At the daemon's start: what the pinned sbx_protected holds, before the
 * first sync. */
void sbx_protect_read(struct sbx_daemon *d);
enum sbx_obtain {
	SBX_OBTAIN_KEPT,	/* a recent identical compile, if it still holds */
	SBX_OBTAIN_FRESH,	/* always compile */
	SBX_OBTAIN_LIVE,	/* compile for a running session under a changed
				 * floor (sbx_policy_env.floor_live) */
};
/* A policy for these parameters in the kernel: a recent identical one, or
 * compiled and applied now (learn: as run --learn has it; grafts: a
 * container's mount roots, ended by a NULL path, policy/graft.c). */
int sbx_policy_obtain(struct sbx_daemon *d, uid_t uid, gid_t gid, const char *home,
		      const char *project, const char *policy_path, bool learn,
		      const struct sbx_graft *grafts, enum sbx_obtain how, struct sbx_policy_use *u,
		      char **err);
void sbx_policy_use_free(struct sbx_policy_use *u);
/* s takes u's tables and header (u keeps only its diagnostics). */
void sbx_policy_take(struct sbx_session_rt *s, struct sbx_policy_use *u);
/* Remove policy id from the kernel unless a session or the cache uses it. */
void sbx_policy_release(struct sbx_daemon *d, uint32_t id);
void sbx_pcache_expire(struct sbx_daemon *d, bool all);
/* Free a cache entry's memory (not its kernel entries). */
void sbx_pcache_drop(struct sbx_pcache *e);
/* After adoption: remove entries of policies no live session uses. */
void sbx_policy_sweep(struct sbx_daemon *d);

#endif
