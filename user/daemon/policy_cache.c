// SPDX-License-Identifier: GPL-2.0
/*
 * policy_cache.c - compiled policies in the kernel's maps.
 *
 * A policy is in force whole or not at all: its entries are inserted
 * together and removed again on the first failure. Sessions that would
 * compile the same policy share one copy in the kernel (see "sharing"
 * below). The protected set, the policy files no session may write, is
 * the union of every live session's.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/dirwatch.h"
#include "lib/log.h"
#include "user/daemon/compile_as.h"
#include "user/daemon/policy_cache.h"
#include "lib/json.h"

/* ---- applying to the maps ----------------------------------------------- */

/*
 * The keys a policy put into each rule map, so that taking it out deletes
 * exactly those. A walk of the maps would visit every bucket, used or not:
 * 262,144 in sbx_inode_rules and 65,536 in each of the others, for every
 * policy that leaves (a cached 10,000-rule policy expiring cost 0.1 s of
 * the machine's time that way). Policies a previous daemon applied have no
 * record here, and the walk finds their entries.
 */
enum { RM_INODE, RM_CHAIN, RM_NAME, RM_NET4, RM_NET6, RM_N };

struct sbx_applied {
	uint32_t policy_id;
	struct { unsigned char *keys; size_t n, key_size; } map[RM_N];
	struct sbx_applied *next;
};

static int rule_map_fd(const struct sbx_kernel *k, int m)
{
	const int fds[RM_N] = { k->inode_rules, k->chain_rules, k->name_rules, k->net4, k->net6 };

	return fds[m];
}

/* every rule map's entries of the policies doomed() names: the walk */
static void delete_rules(struct sbx_kernel *k, bool (*doomed)(uint32_t id, void *ctx), void *ctx)
{
	sbx_map_delete_if(k->inode_rules, sizeof(struct sbx_inode_key), 0, false, doomed, ctx);
	sbx_map_delete_if(k->chain_rules, sizeof(struct sbx_chain_key), 0, false, doomed, ctx);
	sbx_map_delete_if(k->name_rules, sizeof(struct sbx_name_key), 0, false, doomed, ctx);
	sbx_map_delete_if(k->net4, sizeof(struct sbx_net4_key), 4, true, doomed, ctx);
	sbx_map_delete_if(k->net6, sizeof(struct sbx_net6_key), 4, true, doomed, ctx);
}

static bool is_policy(uint32_t id, void *want)
{
	return id == *(uint32_t *)want;
}

static void applied_free(struct sbx_applied *a)
{
	for (int m = 0; m < RM_N; m++)
		free(a->map[m].keys);
	free(a);
}

static void delete_applied(struct sbx_kernel *k, const struct sbx_applied *a)
{
	for (int m = 0; m < RM_N; m++)
		sbx_map_delete_keys(rule_map_fd(k, m), a->map[m].keys, a->map[m].key_size,
				    a->map[m].n);
}

void sbx_policy_remove(struct sbx_daemon *d, uint32_t policy_id)
{
	struct sbx_applied **pp = &d->applied;

	while (*pp && (*pp)->policy_id != policy_id)
		pp = &(*pp)->next;
	if (*pp) {
		struct sbx_applied *a = *pp;

		*pp = a->next;
		delete_applied(&d->k, a);
		applied_free(a);
	} else {
		delete_rules(&d->k, is_policy, &policy_id);
	}
	sbx_net_changed(&d->k);
}

void sbx_applied_free_all(struct sbx_daemon *d)
{
	while (d->applied) {
		struct sbx_applied *a = d->applied;

		d->applied = a->next;
		applied_free(a);
	}
}

/* insert arr[0..n) into map m, each key kept in a as it goes in */
#define INSERT_ALL(map_, arr, count_)							\
	do {									\
		size_t ks_ = sizeof((arr)[0].k);				\
										\
		a->map[map_].key_size = ks_;					\
		a->map[map_].keys = sbx_calloc((count_) ? (count_) : 1, ks_);		\
		for (size_t i_ = 0; i_ < (count_); i_++) {				\
			if (bpf_map_update_elem(rule_map_fd(&d->k, map_), &(arr)[i_].k, \
						&(arr)[i_].v, BPF_NOEXIST)) {	\
				rc = -errno;					\
				what = #arr;					\
				goto fail;					\
			}							\
			memcpy(a->map[map_].keys + i_ * ks_, &(arr)[i_].k, ks_);	\
			a->map[map_].n++;						\
		}								\
	} while (0)

/* ---- counts of removals (bpf/removals.bpf.c) -------------------------------- */

/*
 * An object's count, made at 1 if it has none: 0 and *n, or -errno. A
 * count is never 0, the gen of an entry that could not have one: made
 * later, the count cannot match it.
 */
static int removal_count(struct sbx_daemon *d, uint32_t dev, uint64_t ino, uint32_t *n)
{
	const struct sbx_protect_key k = { .dev = dev, .ino = ino };
	const uint32_t one = 1;

	if (!bpf_map_lookup_elem(d->k.removals, &k, n))
		return 0;
	if (bpf_map_update_elem(d->k.removals, &k, &one, BPF_NOEXIST) && errno != EEXIST)
		return -errno;
	return bpf_map_lookup_elem(d->k.removals, &k, n) ? -errno : 0;
}

uint32_t sbx_removals_any(struct sbx_daemon *d)
{
	const struct sbx_protect_key any = SBX_REMOVALS_ANY;
	uint32_t n = 0;

	removal_count(d, any.dev, any.ino, &n);
	return n;
}

/* still the counts they were when the policy was applied */
static bool counted_hold(struct sbx_daemon *d, const struct sbx_counted *c)
{
	for (size_t i = 0; i < c->n; i++) {
		uint32_t n;

		if (bpf_map_lookup_elem(d->k.removals, &c->v[i].k, &n) || n != c->v[i].n)
			return false;
	}
	return true;
}

static void counted_free(struct sbx_counted *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static int cmp_obj(const void *a, const void *b)
{
	const struct sbx_protect_key *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

struct objs {
	struct sbx_protect_key *v;
	size_t n;
};

static bool obj_unused(const void *key, void *ctx)
{
	const struct sbx_protect_key *k = key;
	const struct objs *live = ctx;

	return (k->dev || k->ino) && !bsearch(k, live->v, live->n, sizeof(*k), cmp_obj);
}

/*
 * The map is full: the counts of objects that no policy in the kernel (nor
 * c, being applied) has an entry for any more go. Such a count is made
 * again when a policy names its object again, and no entry is left that
 * was made for an earlier one. Nothing goes if the rules cannot be read
 * whole.
 */
static void removals_gc(struct sbx_daemon *d, const struct sbx_compiled *c)
{
	size_t n = 0;
	struct sbx_inode_key *keys;
	struct objs live;

	errno = 0;
	keys = sbx_map_keys(d->k.inode_rules, sizeof(*keys), NULL, NULL, &n);
	if (!keys && errno) {
		sbx_warn("reading the inode rules to drop unused counts of removals: %s",
			 strerror(errno));
		return;
	}
	live.v = sbx_calloc(n + c->n_inode + 1, sizeof(*live.v));
	live.n = 0;
	for (size_t i = 0; i < n; i++)
		live.v[live.n++] = (struct sbx_protect_key){ .dev = keys[i].dev, .ino = keys[i].ino };
	for (size_t i = 0; i < c->n_inode; i++)
		live.v[live.n++] = (struct sbx_protect_key){ .dev = c->inode[i].k.dev,
							    .ino = c->inode[i].k.ino };
	qsort(live.v, live.n, sizeof(*live.v), cmp_obj);
	sbx_map_delete_keys_if(d->k.removals, sizeof(struct sbx_protect_key), obj_unused, &live);
	free(live.v);
	free(keys);
}

/*
 * c's inode entries, each SBX_GEN_REMOVALS one that lets anything through
 * with its object's count now, listed in *counted. One that refuses only
 * needs none: the kernel never looks. One that cannot have a count keeps
 * gen 0, which no count is: it gives its object only its refusals (fail
 * closed), and the daemon says so once.
 */
static struct sbx_inode_entry *with_counts(struct sbx_daemon *d, const struct sbx_compiled *c,
					   struct sbx_counted *counted)
{
	struct sbx_inode_entry *v = sbx_calloc(c->n_inode ? c->n_inode : 1, sizeof(*v));
	bool gc = false, said = false;

	memcpy(v, c->inode, c->n_inode * sizeof(*v));
	counted->v = sbx_calloc(c->n_inode ? c->n_inode : 1, sizeof(*counted->v));
	counted->n = 0;
	for (size_t i = 0; i < c->n_inode; i++) {
		int rc;

		if (v[i].v.gen_set != SBX_GEN_REMOVALS)
			continue;
		v[i].v.gen = 0;
		if (!sbx_rule_may_allow(&v[i].v, 0xff))
			continue;
		rc = removal_count(d, v[i].k.dev, v[i].k.ino, &v[i].v.gen);
		if (rc == -E2BIG && !gc) {
			removals_gc(d, c);
			gc = true;
			rc = removal_count(d, v[i].k.dev, v[i].k.ino, &v[i].v.gen);
		}
		if (rc) {
			if (!said)
				sbx_warn("policy %u: no count of removals for %s (%s): its exception is "
					 "refused until the daemon has room", c->hdr.policy_id,
					 v[i].what ? v[i].what : "an object", strerror(-rc));
			said = true;
			v[i].v.gen = 0;
			continue;
		}
		counted->v[counted->n].k = (struct sbx_protect_key){ .dev = v[i].k.dev,
								     .ino = v[i].k.ino };
		counted->v[counted->n++].n = v[i].v.gen;
	}
	qsort(counted->v, counted->n, sizeof(*counted->v), cmp_obj);
	return v;
}

/* c->v sorted by object (with_counts): k is each element's first member */
static bool is_counted(const struct sbx_counted *c, const struct sbx_protect_key *k)
{
	return c->n && bsearch(k, c->v, c->n, sizeof(*c->v), cmp_obj);
}

/* one more removal of k's object, as the kernel counts one, and of all
 * (SBX_REMOVALS_ANY); an object whose count is gone (the map's clean-up)
 * has an entry that finds none */
static void count_removal(struct sbx_daemon *d, const struct sbx_protect_key *k)
{
	const struct sbx_protect_key any = SBX_REMOVALS_ANY;
	uint32_t n;

	if (bpf_map_lookup_elem(d->k.removals, k, &n))
		return;
	n++;
	bpf_map_update_elem(d->k.removals, k, &n, BPF_EXIST);
	if (!bpf_map_lookup_elem(d->k.removals, &any, &n)) {
		n++;
		bpf_map_update_elem(d->k.removals, &any, &n, BPF_EXIST);
	}
}

/*
 * A path the compile identified may have lost its object before the
 * object had a count (removal_count, at apply): its number, taken by a
 * new file, would carry the entry's exception with the count the new
 * file started with. Each such path still names its object once the
 * counts exist, or the object's count moves here, as the kernel would
 * have moved it.
 */
static void removals_recheck(struct sbx_daemon *d, const json_t *idents,
			     const struct sbx_counted *counted)
{
	const json_t *v;
	size_t i;

	json_array_foreach(idents, i, v) {
		const char *path = json_string_value(json_array_get(v, 0));
		struct sbx_protect_key k = {
			.dev = (uint32_t)json_integer_value(json_array_get(v, 1)),
			.ino = (uint64_t)json_integer_value(json_array_get(v, 2)),
		};
		uint32_t dev;
		uint64_t ino;

		if (json_integer_value(json_array_get(v, 3)) != SBX_IDENT_COUNTED || !path ||
		    !is_counted(counted, &k))
			continue;
		if (sbx_kident(path, true, &dev, &ino) || dev != k.dev || ino != k.ino)
			count_removal(d, &k);
	}
}

int sbx_policy_apply(struct sbx_daemon *d, const struct sbx_compiled *c,
		     struct sbx_counted *counted, char **err)
{
	struct sbx_applied *a = sbx_calloc(1, sizeof(*a));
	struct sbx_inode_entry *inode = with_counts(d, c, counted);
	const char *what = "";
	int rc = 0;

	a->policy_id = c->hdr.policy_id;
	INSERT_ALL(RM_INODE, inode, c->n_inode);
	INSERT_ALL(RM_CHAIN, c->chain, c->n_chain);
	INSERT_ALL(RM_NAME, c->name, c->n_name);
	INSERT_ALL(RM_NET4, c->net4, c->n_net4);
	INSERT_ALL(RM_NET6, c->net6, c->n_net6);
	a->next = d->applied;
	d->applied = a;
	free(inode);
	sbx_net_changed(&d->k);
	return 0;
fail:
	/* A policy is in force whole or not at all: fail closed. */
	free(inode);
	counted_free(counted);
	delete_applied(&d->k, a);
	applied_free(a);
	sbx_net_changed(&d->k);
	*err = sbx_asprintf("loading the policy into the kernel failed at %s: %s%s", what,
			    strerror(-rc), rc == -E2BIG || rc == -ENOMEM ?
			    " (the rule maps are full)" : "");
	return rc;
}

/* ---- the protected set: union of every session's policy files --------- */

static bool protect_wanted(const struct sbx_daemon *d, const struct sbx_protect_key *k)
{
	for (const struct sbx_session_rt *s = d->sessions; s; s = s->next)
		for (size_t i = 0; i < s->n_protect; i++)
			if (!memcmp(&s->protect[i], k, sizeof(*k)))
				return true;
	return false;
}

static bool protect_held(const struct sbx_daemon *d, const struct sbx_protect_key *k)
{
	for (size_t i = 0; i < d->n_protected; i++)
		if (!memcmp(&d->protected_keys[i], k, sizeof(*k)))
			return true;
	return false;
}

static void protect_hold(struct sbx_daemon *d, const struct sbx_protect_key *k)
{
	d->protected_keys = sbx_realloc_array(d->protected_keys, d->n_protected + 1,
					      sizeof(*d->protected_keys));
	d->protected_keys[d->n_protected++] = *k;
}

void sbx_protect_read(struct sbx_daemon *d)
{
	free(d->protected_keys);
	d->protected_keys = sbx_map_keys(d->k.protected_, sizeof(struct sbx_protect_key), NULL,
					 NULL, &d->n_protected);
}

void sbx_protect_sync(struct sbx_daemon *d)
{
	__u32 one = 1, k = SBX_EPOCH_DAEMON;
	bool changed = false;
	__u64 epoch;

	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		for (size_t i = 0; i < s->n_protect; i++) {
			if (protect_held(d, &s->protect[i]))
				continue;
			if (bpf_map_update_elem(d->k.protected_, &s->protect[i], &one, BPF_NOEXIST) == 0) {
				protect_hold(d, &s->protect[i]);
				changed = true;
			} else if (errno == EEXIST) {
				protect_hold(d, &s->protect[i]);
			} else {
				/* not held: tried again at the next sync */
				sbx_warn("protecting a policy file of session %s: %s", s->name,
					 strerror(errno));
				changed = true;
			}
		}
	/* drop keys no live session needs any more */
	for (size_t i = 0; i < d->n_protected;) {
		if (protect_wanted(d, &d->protected_keys[i])) {
			i++;
			continue;
		}
		bpf_map_delete_elem(d->k.protected_, &d->protected_keys[i]);
		d->protected_keys[i] = d->protected_keys[--d->n_protected];
		changed = true;
	}
	/*
	 * Verdicts cached in the kernel under the old set are stale. After
	 * the changes, not before: a check records the epoch before it looks
	 * at the set, so one that ran in between is dropped, and no verdict
	 * computed from the old set can carry the new epoch. Only the daemon
	 * writes this counter, so a read-modify-write is safe.
	 */
	if (changed && bpf_map_lookup_elem(d->k.epoch, &k, &epoch) == 0) {
		epoch++;
		bpf_map_update_elem(d->k.epoch, &k, &epoch, BPF_ANY);
	}
}

/* ---- sharing compiled policies ------------------------------------------------

 * Compiling a policy (resolving host names, identifying every path) is
 * most of what starting a session costs. Sessions of the same user, with
 * the same policy file (unchanged on disk), project and home, within a few
 * minutes of each other, share one compiled policy in the kernel: the map
 * entries are keyed by policy id and a session only points at one. Paths
 * created in between are still covered (by the chain rules for missing
 * paths); host names are resolved again after the TTL (d->pcache_ttl_ns:
 * SBX_PCACHE_TTL_S, or the daemon's --policy-cache-ttl).
 */

/* The directories ${PROJECT} and ~ name: replaced, they would leave the
 * rules anchored on them pointing at the old inodes. */
static void dir_ident(const char *path, dev_t *dev, ino_t *ino)
{
	struct stat st;

	if (stat(path, &st)) {
		*dev = 0;
		*ino = 0;
		return;
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
}

static bool dirs_hold(const struct sbx_pcache *e)
{
	dev_t pd, hd;
	ino_t pi, hi;

	dir_ident(e->project, &pd, &pi);
	dir_ident(e->home, &hd, &hi);
	return pi && pd == e->project_dev && pi == e->project_ino && hd == e->home_dev &&
	       hi == e->home_ino;
}

/* Every path an inode entry was made for still leads to that object. A
 * directory deleted and made again (rm -rf ~/.npm; npm install) has a new
 * inode: its rules, and the chain rules anchored on it, would miss it;
 * made again with its old number (ext4 gives it back) it has a new
 * generation, and its entry would give it only its denials.
 * Missing from the compile's output (an older daemon's) is not valid. */
static bool idents_hold(const json_t *idents)
{
	const json_t *v;
	size_t i;

	if (!json_is_array(idents))
		return false;
	json_array_foreach(idents, i, v) {
		const char *path = json_string_value(json_array_get(v, 0));
		json_int_t gen = json_integer_value(json_array_get(v, 3));
		uint32_t dev, g;
		uint64_t ino;

		if (!path || !json_is_integer(json_array_get(v, 3)) ||
		    sbx_kident(path, true, &dev, &ino) ||
		    dev != (uint32_t)json_integer_value(json_array_get(v, 1)) ||
		    ino != (uint64_t)json_integer_value(json_array_get(v, 2)))
			return false;
		if (gen >= 0 && (sbx_kgen(path, true, dev, ino, &g) || g != (uint32_t)gen))
			return false;
	}
	return true;
}

/* The files look the same, no hard link has appeared (or gone) below
 * the directories the compile scanned for them, and the objects the rules
 * were compiled for are still those. */
static bool stamps_hold(const json_t *stamps, bool check_links, bool check_idents)
{
	const json_t *sources = json_object_get(stamps, "files"), *v;
	const json_t *dirs = json_object_get(stamps, "scan_dirs");
	const char *digest = sbx_json_str(stamps, "hardlinks");
	size_t i, n = json_array_size(dirs);
	char digest_now[32], **dv;

	if (!json_is_array(sources) || !json_array_size(sources) || !digest)
		return false;
	if (check_links) {
		dv = sbx_calloc(n + 1, sizeof(*dv));
		json_array_foreach(dirs, i, v)
			dv[i] = (char *)json_string_value(v);
		snprintf(digest_now, sizeof(digest_now), "%016llx",
			 (unsigned long long)sbx_hardlink_digest(dv, n));
		free(dv);
		if (strcmp(digest_now, digest))
			return false;
	}
	json_array_foreach(sources, i, v) {
		const char *path = sbx_json_str(v, "path");
		json_t *now = path ? sbx_source_stamp(path) : NULL;
		bool same = now && json_equal(now, v);

		json_decref(now);
		if (!same)
			return false;
	}
	return !check_idents || idents_hold(json_object_get(stamps, "idents"));
}

/*
 * Checking every path of a big policy costs a statx (or an open and an
 * fdinfo read, on overlayfs) each: thousands for 10,000 rules, at every
 * session start. Instead the daemon watches the way to each of them
 * (lib/dirwatch.c): while no name on any way has changed and no mount
 * or link has (SBX_EPOCH_LINK), every path still leads where it did.
 * Without inotify the paths are checked every time.
 */
static void watch_ways(struct sbx_daemon *d, const struct sbx_pcache *e)
{
	const json_t *idents = json_object_get(e->sources, "idents"), *v;
	size_t i;

	if (!d->dirwatch && !d->dirwatch_failed) {
		d->dirwatch = sbx_dirwatch_new();
		if (!d->dirwatch) {
			sbx_warn("inotify: %s: the compiled-policy cache checks every path at "
				 "every session start", strerror(errno));
			d->dirwatch_failed = true;
		}
	}
	if (!d->dirwatch)
		return;
	sbx_dirwatch_add(d->dirwatch, e->policy_id, e->project);
	sbx_dirwatch_add(d->dirwatch, e->policy_id, e->home);
	json_array_foreach(idents, i, v) {
		const char *path = json_string_value(json_array_get(v, 0));

		/* one that cannot be watched leaves the entry checked the slow way */
		if (!path || sbx_dirwatch_add(d->dirwatch, e->policy_id, path))
			break;
	}
}

static bool ways_quiet(struct sbx_daemon *d, const struct sbx_pcache *e)
{
	return d->dirwatch && !sbx_dirwatch_stale(d->dirwatch, e->policy_id);
}

/*
 * The kernel's count of links, mount changes and renames anywhere but the
 * daemon's own (SBX_EPOCH_LINK, bumped by the path_link, path_rename and
 * mount hooks). While it stands still no hard link can have appeared, so
 * the directory scan behind the digest can be skipped. The
 * programs stay attached while no daemon runs. While they are detached
 * (the idle detach, attach.h, or the benchmarks' condition A) nothing
 * counts: sbx_kernel_attach moves the epoch past every value read before,
 * so the first session after it scans again. (After an idle detach the
 * loop drops the cache besides, a tick later: loop.c on_timer.)
 */
static bool link_epoch(struct sbx_daemon *d, uint64_t *v)
{
	__u32 k = SBX_EPOCH_LINK;

	return bpf_map_lookup_elem(d->k.epoch, &k, v) == 0;
}

void sbx_pcache_drop(struct sbx_pcache *e)
{
	counted_free(&e->counted);
	free(e->home);
	free(e->project);
	free(e->policy_path);
	sbx_rule_table_unref(e->rules);
	free(e->protect);
	json_decref(e->sources);
	json_decref(e->diags);
	json_decref(e->names);
	json_decref(e->approval);
	free(e);
}

static bool policy_in_use(struct sbx_daemon *d, uint32_t id)
{
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		if (s->policy_id == id)
			return true;
	for (struct sbx_pcache *e = d->pcache; e; e = e->next)
		if (e->policy_id == id)
			return true;
	return false;
}

void sbx_policy_release(struct sbx_daemon *d, uint32_t id)
{
	if (id && !policy_in_use(d, id)) {
		sbx_policy_remove(d, id);
		sbx_state_policy_gone(id);
	}
}

void sbx_pcache_expire(struct sbx_daemon *d, bool all)
{
	uint64_t now = sbx_boot_ns();
	struct sbx_pcache **pp = &d->pcache;

	while (*pp) {
		struct sbx_pcache *e = *pp;

		if (all || now - e->born_ns >= d->pcache_ttl_ns) {
			uint32_t id = e->policy_id;

			if (d->dirwatch)
				sbx_dirwatch_forget(d->dirwatch, id);
			*pp = e->next;
			sbx_pcache_drop(e);
			sbx_policy_release(d, id);
			continue;
		}
		pp = &e->next;
	}
}

void sbx_policy_use_free(struct sbx_policy_use *u)
{
	sbx_rule_table_unref(u->rules);
	free(u->protect);
	json_decref(u->diags);
	json_decref(u->names);
	json_decref(u->approval);
	memset(u, 0, sizeof(*u));
}

void sbx_policy_take(struct sbx_session_rt *s, struct sbx_policy_use *u)
{
	sbx_rule_table_unref(s->rules);
	free(s->protect);
	s->rules = u->rules;
	u->rules = NULL;
	s->protect = u->protect;
	s->n_protect = u->n_protect;
	u->protect = NULL;
	u->n_protect = 0;
	s->hdr = u->hdr;
	s->policy_id = u->hdr.policy_id;
	sbx_session_set_approval(s, u->approval);
	sbx_session_set_names(s, u->names);
}

static void hand_out(const struct sbx_pcache *e, struct sbx_policy_use *u)
{
	u->hdr = e->hdr;
	u->rules = sbx_rule_table_ref(e->rules);
	u->protect = sbx_calloc(e->n_protect, sizeof(*u->protect));
	memcpy(u->protect, e->protect, e->n_protect * sizeof(*u->protect));
	u->n_protect = e->n_protect;
	u->diags = json_incref(e->diags);
	u->names = json_incref(e->names);
	u->approval = json_incref(e->approval);
}

int sbx_policy_obtain(struct sbx_daemon *d, uid_t uid, gid_t gid, const char *home,
		      const char *project, const char *policy_path, bool learn,
		      const struct sbx_graft *grafts, enum sbx_obtain how, struct sbx_policy_use *u,
		      char **err)
{
	struct sbx_compiled_rt c = {};
	struct sbx_counted counted = {};
	struct sbx_pcache *e;
	uint32_t any;
	uint64_t epoch = 0;
	bool have_epoch;
	int rc;

	memset(u, 0, sizeof(*u));
	sbx_pcache_expire(d, false);
	/* read before anything is looked at: a link made during the compile
	 * or the checks below moves it, and the next session looks again */
	have_epoch = link_epoch(d, &epoch);
	any = sbx_removals_any(d);
	/* a container's mounts make the compile its own (graft.c) */
	for (e = how != SBX_OBTAIN_KEPT || grafts ? NULL : d->pcache; e; e = e->next) {
		bool links_quiet = have_epoch && e->link_epoch_ok && e->link_epoch == epoch;
		bool quiet;

		if (e->live || e->grafted || e->learn != learn || e->uid != uid || e->gid != gid ||
		    strcmp(e->home, home) ||
		    strcmp(e->project, project) || strcmp(e->policy_path, policy_path))
			continue;
		/* no link, mount or name on the way to any of its paths changed */
		quiet = links_quiet && ways_quiet(d, e);
		/* an object one of its entries was made for was removed: those
		 * entries refuse now, and a compile finds what is there. Any
		 * object's removal moves the one count; then its own are read */
		if (e->removals_any != any) {
			if (!counted_hold(d, &e->counted))
				continue;
			e->removals_any = any;
		}
		if (stamps_hold(e->sources, !links_quiet, !quiet) && (quiet || dirs_hold(e))) {
			if (!quiet && d->dirwatch)
				sbx_dirwatch_rearm(d->dirwatch, e->policy_id);
			e->link_epoch = epoch;
			e->link_epoch_ok = have_epoch;
			hand_out(e, u);
			u->shared = true;
			return 0;
		}
	}
	rc = sbx_policy_compile_as(uid, gid, home, project, policy_path, d->next_policy_id++,
				   how == SBX_OBTAIN_LIVE, learn, &c, err);
	for (const struct sbx_graft *g = grafts; !rc && g && g->path; g++) {
		char *why = NULL;

		rc = sbx_compiled_graft(&c.c, g, &why);
		if (rc) {
			*err = sbx_asprintf("the container's mount %s", why ? why : g->path);
			free(why);
		}
	}
	if (!rc)
		rc = sbx_policy_apply(d, &c.c, &counted, err);
	if (rc) {
		u->diags = json_incref(c.diags);
		sbx_compiled_rt_free(&c);
		return rc;
	}
	e = sbx_calloc(1, sizeof(*e));
	/* read before the counts began (any): a removal since, the check's
	 * own included, has the next session read them */
	e->removals_any = any;
	removals_recheck(d, json_object_get(c.sources, "idents"), &counted);
	e->counted = counted;
	e->policy_id = c.c.hdr.policy_id;
	e->uid = uid;
	e->gid = gid;
	e->home = sbx_strdup(home);
	e->project = sbx_strdup(project);
	e->policy_path = sbx_strdup(policy_path);
	e->hdr = c.c.hdr;
	e->rules = sbx_rule_table_new(c.rules, c.n_rules);
	c.rules = NULL;
	c.n_rules = 0;
	e->protect = c.c.protect;
	e->n_protect = c.c.n_protect;
	c.c.protect = NULL;
	c.c.n_protect = 0;
	e->sources = json_incref(c.sources);
	e->diags = json_incref(c.diags);
	e->names = json_incref(c.names);
	e->approval = json_incref(c.approval);
	e->born_ns = sbx_boot_ns();
	e->link_epoch = epoch;
	e->link_epoch_ok = have_epoch;
	e->live = how == SBX_OBTAIN_LIVE;
	e->grafted = grafts != NULL;
	e->learn = learn;
	dir_ident(project, &e->project_dev, &e->project_ino);
	dir_ident(home, &e->home_dev, &e->home_ino);
	sbx_compiled_rt_free(&c);
	e->next = d->pcache;
	d->pcache = e;
	/* stale until the next session checks its paths once (dirwatch.h) */
	watch_ways(d, e);
	hand_out(e, u);
	return 0;
}

/*
 * A restarted daemon keeps the policies of the sessions it adopted and
 * removes every other entry: those of sessions that ended while no daemon
 * ran, and the previous daemon's cached compilations.
 */
/* what the sweep keeps: the daemon's policies, and every policy a
 * session in the kernel still decides by */
struct keep {
	struct sbx_daemon *d;
	uint32_t *ids;
	size_t n;
};

static bool unused_policy(uint32_t id, void *ctx)
{
	const struct keep *k = ctx;

	for (size_t i = 0; i < k->n; i++)
		if (k->ids[i] == id)
			return false;
	return !policy_in_use(k->d, id);
}

void sbx_policy_sweep(struct sbx_daemon *d)
{
	DIR *dir = opendir(SBX_STATE_DIR);
	struct keep keep = { .d = d };
	struct dirent *de;
	size_t cap = 0;
	__u64 key, next, *prev = NULL;
	struct sbx_session kv;

	/* A session whose saved state could not be read is still in the
	 * kernel: without its policy's rules it would be decided by the
	 * defaults alone, its credentials' denies gone. Its rules stay. */
	while (d->k.sessions >= 0 && !bpf_map_get_next_key(d->k.sessions, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(d->k.sessions, &key, &kv))
			continue;
		if (!SBX_GROW(keep.ids, cap, keep.n + 1, 16)) {
			free(keep.ids);
			if (dir)
				closedir(dir);
			return;	/* nothing swept rather than a rule in use */
		}
		keep.ids[keep.n++] = kv.pol.policy_id;
	}
	delete_rules(&d->k, unused_policy, &keep);
	/* and the shared parts of their saved state */
	while (dir && (de = readdir(dir))) {
		unsigned id;
		char end;

		if (sscanf(de->d_name, "policy-%u.jso%c", &id, &end) == 2 && end == 'n' &&
		    unused_policy(id, &keep))
			sbx_state_policy_gone(id);
	}
	if (dir)
		closedir(dir);
	free(keep.ids);
}
