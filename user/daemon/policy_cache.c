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

int sbx_policy_apply(struct sbx_daemon *d, const struct sbx_compiled *c, char **err)
{
	struct sbx_applied *a = sbx_calloc(1, sizeof(*a));
	const char *what = "";
	int rc = 0;

	a->policy_id = c->hdr.policy_id;
	INSERT_ALL(RM_INODE, c->inode, c->n_inode);
	INSERT_ALL(RM_CHAIN, c->chain, c->n_chain);
	INSERT_ALL(RM_NAME, c->name, c->n_name);
	INSERT_ALL(RM_NET4, c->net4, c->n_net4);
	INSERT_ALL(RM_NET6, c->net6, c->n_net6);
	a->next = d->applied;
	d->applied = a;
	sbx_net_changed(&d->k);
	return 0;
fail:
	/* A policy is in force whole or not at all: fail closed. */
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
	struct sbx_pcache *e;
	uint64_t epoch = 0;
	bool have_epoch;
	int rc;

	memset(u, 0, sizeof(*u));
	sbx_pcache_expire(d, false);
	/* read before anything is looked at: a link made during the compile
	 * or the checks below moves it, and the next session looks again */
	have_epoch = link_epoch(d, &epoch);
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
		rc = sbx_policy_apply(d, &c.c, err);
	if (rc) {
		u->diags = json_incref(c.diags);
		sbx_compiled_rt_free(&c);
		return rc;
	}
	e = sbx_calloc(1, sizeof(*e));
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
