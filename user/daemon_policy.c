// SPDX-License-Identifier: GPL-2.0
/*
 * daemon_policy.c - from a policy file to map entries, safely.
 *
 * The daemon runs as root, but a policy belongs to the user who starts
 * the session: it is read, expanded (~ is that user's home) and compiled
 * in a child process that has dropped to that user's uid, gid and groups.
 * A user therefore cannot make the daemon read a file they could not read
 * themselves (an `extends: /etc/shadow` only fails). The child sends the
 * compiled entries back over a pipe; the daemon applies them all or not
 * at all.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "user/daemon.h"
#include "user/util.h"

#define WIRE_MAGIC "SBXCMP1"

struct wire_hdr {
	char magic[8];
	uint32_t ok;
	uint32_t n_inode, n_chain, n_name, n_net4, n_net6, n_protect;
	uint32_t json_len;
	struct sbx_policy_hdr hdr;
};

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= w;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t r = read(fd, p, len);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EPIPE;
		p += r;
		len -= r;
	}
	return 0;
}

#define WRITE_PAIRS(fd, arr, n)							\
	do {									\
		for (size_t i_ = 0; i_ < (n); i_++) {				\
			write_all(fd, &(arr)[i_].k, sizeof((arr)[i_].k));	\
			write_all(fd, &(arr)[i_].v, sizeof((arr)[i_].v));	\
		}								\
	} while (0)

#define READ_PAIRS(fd, arr, n, rc)						\
	do {									\
		(arr) = sbx_calloc((n), sizeof(*(arr)));			\
		for (size_t i_ = 0; i_ < (n) && !(rc); i_++) {			\
			rc = read_all(fd, &(arr)[i_].k, sizeof((arr)[i_].k));	\
			rc = rc ?: read_all(fd, &(arr)[i_].v, sizeof((arr)[i_].v)); \
		}								\
	} while (0)

static json_t *diags_json(const struct sbx_diags *d)
{
	json_t *a = json_array();

	for (size_t i = 0; i < d->n; i++) {
		const struct sbx_diag *g = &d->v[i];
		char *s = sbx_asprintf("%s:%d:%d: %s: %s%s%s", g->file ? g->file : "?", g->line,
				       g->col, g->level == SBX_DIAG_ERROR ? "error" : "warning",
				       g->field ? g->field : "", g->field ? ": " : "", g->msg);

		json_array_append_new(a, json_string(s));
		free(s);
	}
	return a;
}

static int drop_to(uid_t uid, gid_t gid)
{
	struct passwd *pw = getpwuid(uid);
	gid_t groups[256];
	int ng = 256;

	if (uid == 0)
		return 0;
	if (pw && getgrouplist(pw->pw_name, gid, groups, &ng) >= 0) {
		if (setgroups(ng, groups))
			return -errno;
	} else if (setgroups(1, &gid)) {
		return -errno;
	}
	if (setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

/* What a policy file looked like when it was compiled: if it still looks
 * the same, a compiled copy of it may be reused. */
static json_t *source_stamp(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return json_pack("{s:s}", "path", path);
	return json_pack("{s:s,s:I,s:I,s:I,s:I}", "path", path, "mtime_s",
			 (json_int_t)st.st_mtim.tv_sec, "mtime_ns", (json_int_t)st.st_mtim.tv_nsec,
			 "size", (json_int_t)st.st_size, "ino", (json_int_t)st.st_ino);
}

/* The child: never returns. */
static void compile_child(int fd, uid_t uid, gid_t gid, const char *home, const char *project,
			  const char *policy_path, uint32_t policy_id)
{
	struct sbx_policy_env env = { .home = home, .project = project };
	struct sbx_diags diags = {};
	struct sbx_compiled c = {};
	struct sbx_policy *p = NULL;
	struct wire_hdr h = { .magic = WIRE_MAGIC };
	json_t *j = json_object(), *rules = json_array();
	char *text;
	int rc;

	rc = drop_to(uid, gid);
	if (rc) {
		json_object_set_new(j, "error", json_sprintf("dropping privileges: %s",
							     strerror(-rc)));
		goto send;
	}
	if (setenv("HOME", home, 1))
		_exit(3);
	p = sbx_policy_load_file(policy_path, &env, &diags);
	if (p && sbx_policy_compile(p, policy_id, &c, &diags) == 0) {
		h.ok = 1;
		h.hdr = c.hdr;
		h.n_inode = c.n_inode;
		h.n_chain = c.n_chain;
		h.n_name = c.n_name;
		h.n_net4 = c.n_net4;
		h.n_net6 = c.n_net6;
		h.n_protect = c.n_protect;
		for (uint32_t id = 1; id <= sbx_policy_rule_count(p); id++) {
			const struct sbx_rule_info *r = sbx_policy_rule(p, id);

			if (!r)
				continue;
			json_array_append_new(rules, json_pack(
				"{s:i, s:i, s:s, s:s, s:o}", "id", (int)r->id, "verdict",
				(int)r->verdict, "pattern", r->pattern ? r->pattern : "",
				"reason", r->reason ? r->reason : "", "source",
				json_sprintf("%s:%d:%d", r->file ? r->file : "?", r->line, r->col)));
		}
		json_t *srcs = json_array(), *dirs = json_array();
		char digest[32];

		for (size_t i = 0; i < sbx_policy_source_count(p); i++)
			json_array_append_new(srcs, source_stamp(sbx_policy_source(p, i)));
		json_object_set_new(j, "sources", srcs);
		for (size_t i = 0; i < c.n_scan_dirs; i++)
			json_array_append_new(dirs, json_string(c.scan_dirs[i]));
		json_object_set_new(j, "scan_dirs", dirs);
		snprintf(digest, sizeof(digest), "%016llx",
			 (unsigned long long)sbx_hardlink_digest(c.scan_dirs, c.n_scan_dirs));
		json_object_set_new(j, "hardlinks", json_string(digest));
	} else if (!diags.errors) {
		json_object_set_new(j, "error", json_string("the policy could not be compiled"));
	}
send:
	json_object_set_new(j, "rules", rules);
	json_object_set_new(j, "diags", diags_json(&diags));
	text = json_dumps(j, JSON_COMPACT);
	h.json_len = text ? strlen(text) : 0;
	if (write_all(fd, &h, sizeof(h)))
		_exit(2);
	if (h.ok) {
		WRITE_PAIRS(fd, c.inode, c.n_inode);
		WRITE_PAIRS(fd, c.chain, c.n_chain);
		WRITE_PAIRS(fd, c.name, c.n_name);
		WRITE_PAIRS(fd, c.net4, c.n_net4);
		WRITE_PAIRS(fd, c.net6, c.n_net6);
		write_all(fd, c.protect, c.n_protect * sizeof(*c.protect));
	}
	if (text)
		write_all(fd, text, h.json_len);
	_exit(0);
}

void sbx_compiled_rt_free(struct sbx_compiled_rt *c)
{
	free(c->c.inode);
	free(c->c.chain);
	free(c->c.name);
	free(c->c.net4);
	free(c->c.net6);
	free(c->c.protect);
	for (size_t i = 0; i < c->n_rules; i++) {
		free(c->rules[i].pattern);
		free(c->rules[i].reason);
		free(c->rules[i].source);
	}
	free(c->rules);
	json_decref(c->diags);
	json_decref(c->sources);
	memset(c, 0, sizeof(*c));
}

int sbx_policy_compile_as(uid_t uid, gid_t gid, const char *home, const char *project,
			  const char *policy_path, uint32_t policy_id,
			  struct sbx_compiled_rt *out, char **err)
{
	struct wire_hdr h;
	json_error_t jerr;
	json_t *j = NULL, *v;
	char *text = NULL;
	int pfd[2], rc, status;
	size_t i;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return rc;
	}
	if (pid == 0) {
		close(pfd[0]);
		compile_child(pfd[1], uid, gid, home, project, policy_path, policy_id);
	}
	close(pfd[1]);
	rc = read_all(pfd[0], &h, sizeof(h));
	if (!rc && memcmp(h.magic, WIRE_MAGIC, 8))
		rc = -EPROTO;
	if (!rc && h.ok) {
		out->c.hdr = h.hdr;
		out->c.n_inode = h.n_inode;
		out->c.n_chain = h.n_chain;
		out->c.n_name = h.n_name;
		out->c.n_net4 = h.n_net4;
		out->c.n_net6 = h.n_net6;
		out->c.n_protect = h.n_protect;
		READ_PAIRS(pfd[0], out->c.inode, h.n_inode, rc);
		READ_PAIRS(pfd[0], out->c.chain, h.n_chain, rc);
		READ_PAIRS(pfd[0], out->c.name, h.n_name, rc);
		READ_PAIRS(pfd[0], out->c.net4, h.n_net4, rc);
		READ_PAIRS(pfd[0], out->c.net6, h.n_net6, rc);
		out->c.protect = sbx_calloc(h.n_protect, sizeof(*out->c.protect));
		rc = rc ?: read_all(pfd[0], out->c.protect, h.n_protect * sizeof(*out->c.protect));
	}
	if (!rc && h.json_len) {
		text = sbx_calloc(1, (size_t)h.json_len + 1);
		rc = read_all(pfd[0], text, h.json_len);
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!rc && (!WIFEXITED(status) || WEXITSTATUS(status)))
		rc = -ECHILD;
	if (!rc && text) {
		j = json_loads(text, 0, &jerr);
		if (!j)
			rc = -EPROTO;
	}
	free(text);
	if (rc) {
		*err = sbx_asprintf("compiling %s failed: %s", policy_path,
				    rc == -ECHILD ? "the compiler process crashed" : strerror(-rc));
		json_decref(j);
		sbx_compiled_rt_free(out);
		return rc;
	}

	out->diags = json_incref(json_object_get(j, "diags"));
	if (!out->diags)
		out->diags = json_array();
	out->sources = json_pack("{s:O?,s:O?,s:O?}", "files", json_object_get(j, "sources"),
				 "scan_dirs", json_object_get(j, "scan_dirs"), "hardlinks",
				 json_object_get(j, "hardlinks"));
	json_array_foreach(json_object_get(j, "rules"), i, v) {
		struct sbx_rule_row *r;

		out->rules = realloc(out->rules, (out->n_rules + 1) * sizeof(*out->rules));
		if (!out->rules)
			abort();
		r = &out->rules[out->n_rules++];
		r->id = json_integer_value(json_object_get(v, "id"));
		r->verdict = json_integer_value(json_object_get(v, "verdict"));
		r->pattern = sbx_strdup(json_string_value(json_object_get(v, "pattern")));
		r->reason = sbx_strdup(json_string_value(json_object_get(v, "reason")));
		r->source = sbx_strdup(json_string_value(json_object_get(v, "source")));
	}
	if (!h.ok) {
		const char *e = json_string_value(json_object_get(j, "error"));

		*err = e ? sbx_asprintf("%s: %s", policy_path, e) :
			   sbx_asprintf("%s: the policy has errors", policy_path);
		json_decref(j);
		rc = -EINVAL;
		/* keep diags for the caller; drop the rest */
		json_t *diags = out->diags;

		out->diags = NULL;
		sbx_compiled_rt_free(out);
		out->diags = diags;
		return rc;
	}
	json_decref(j);
	return 0;
}

/* ---- applying to the maps ----------------------------------------------- */

#define INSERT_ALL(fd, arr, n)							\
	do {									\
		for (size_t i_ = 0; i_ < (n); i_++) {				\
			if (bpf_map_update_elem(fd, &(arr)[i_].k, &(arr)[i_].v, BPF_NOEXIST)) { \
				rc = -errno;					\
				what = #arr;					\
				goto fail;					\
			}							\
		}								\
	} while (0)

/* every rule map's entries of the policies doomed() names */
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

void sbx_policy_remove(struct sbx_kernel *k, uint32_t policy_id)
{
	delete_rules(k, is_policy, &policy_id);
}

int sbx_policy_apply(struct sbx_kernel *k, const struct sbx_compiled *c, char **err)
{
	const char *what = "";
	int rc = 0;

	INSERT_ALL(k->inode_rules, c->inode, c->n_inode);
	INSERT_ALL(k->chain_rules, c->chain, c->n_chain);
	INSERT_ALL(k->name_rules, c->name, c->n_name);
	INSERT_ALL(k->net4, c->net4, c->n_net4);
	INSERT_ALL(k->net6, c->net6, c->n_net6);
	return 0;
fail:
	/* A policy is in force whole or not at all: fail closed. */
	sbx_policy_remove(k, c->hdr.policy_id);
	*err = sbx_asprintf("loading the policy into the kernel failed at %s: %s%s", what,
			    strerror(-rc), rc == -E2BIG || rc == -ENOMEM ?
			    " (the rule maps are full)" : "");
	return rc;
}

/* ---- the protected set: union of every session's policy files --------- */

void sbx_protect_sync(struct sbx_daemon *d)
{
	struct sbx_protect_key key, next;
	__u32 one = 1, k = SBX_EPOCH_DAEMON;
	bool changed = false;
	__u64 epoch;
	int first = 1;

	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		for (size_t i = 0; i < s->n_protect; i++) {
			if (bpf_map_update_elem(d->k.protected_, &s->protect[i], &one, BPF_NOEXIST) == 0)
				changed = true;
			else if (errno != EEXIST) {
				sbx_warn("protecting a policy file of session %s: %s", s->name,
					 strerror(errno));
				changed = true;
			}
		}
	/* drop keys no live session needs any more */
	while (bpf_map_get_next_key(d->k.protected_, first ? NULL : &key, &next) == 0) {
		bool used = false;

		first = 0;
		key = next;
		for (struct sbx_session_rt *s = d->sessions; s && !used; s = s->next)
			for (size_t i = 0; i < s->n_protect && !used; i++)
				used = !memcmp(&s->protect[i], &next, sizeof(next));
		if (!used) {
			bpf_map_delete_elem(d->k.protected_, &next);
			changed = true;
			first = 1;	/* restart: the iterator lost its place */
		}
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

/* ---- grants ---------------------------------------------------------------- */

int sbx_session_push_hdr(struct sbx_daemon *d, struct sbx_session_rt *s)
{
	struct sbx_session v = { .pol = s->hdr, .uid = s->uid, .serial = s->serial };

	if (s->n_grants)
		v.pol.flags |= SBX_PF_HAS_GRANTS;
	else
		v.pol.flags &= ~SBX_PF_HAS_GRANTS;
	if (bpf_map_update_elem(d->k.sessions, &s->cgid, &v, BPF_ANY))
		return -errno;
	return 0;
}

int sbx_grant_add(struct sbx_daemon *d, struct sbx_session_rt *s,
		  const struct sbx_grant_key *key, uint64_t expires_ns, const char *request)
{
	struct sbx_grant g = { .expires_ns = expires_ns };
	struct sbx_grant_rt *r;
	int rc;

	if (bpf_map_update_elem(d->k.grants, key, &g, BPF_ANY))
		return -errno;
	s->grants = realloc(s->grants, (s->n_grants + 1) * sizeof(*s->grants));
	if (!s->grants)
		abort();
	r = &s->grants[s->n_grants++];
	r->key = *key;
	r->expires_ns = expires_ns;
	r->request = sbx_strdup(request);
	rc = sbx_session_push_hdr(d, s);
	if (rc)
		return rc;
	sbx_session_save(d, s);
	return 0;
}

void sbx_grants_expire(struct sbx_daemon *d)
{
	uint64_t now = sbx_boot_ns();

	for (struct sbx_session_rt *s = d->sessions; s; s = s->next) {
		size_t w = 0;
		bool changed = false;

		for (size_t i = 0; i < s->n_grants; i++) {
			struct sbx_grant_rt *g = &s->grants[i];

			if (g->expires_ns && g->expires_ns < now) {
				bpf_map_delete_elem(d->k.grants, &g->key);
				free(g->request);
				changed = true;
				continue;
			}
			s->grants[w++] = *g;
		}
		s->n_grants = w;
		if (changed) {
			sbx_session_push_hdr(d, s);
			sbx_session_save(d, s);
		}
	}
}

/* ---- sharing compiled policies ------------------------------------------------

 * Compiling a policy (resolving host names, identifying every path) is
 * most of what starting a session costs. Sessions of the same user, with
 * the same policy file (unchanged on disk), project and home, within a few
 * minutes of each other, share one compiled policy in the kernel: the map
 * entries are keyed by policy id and a session only points at one. Paths
 * created in between are still covered (by the chain rules for missing
 * paths); host names are resolved again after the TTL.
 */
#define SBX_PCACHE_TTL_NS (300ull * 1000000000ull)

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

/* The files look the same, and no hard link has appeared (or gone) below
 * the directories the compile scanned for them. */
static bool stamps_hold(const json_t *stamps, bool check_links)
{
	const json_t *sources = json_object_get(stamps, "files"), *v;
	const json_t *dirs = json_object_get(stamps, "scan_dirs");
	const char *digest = json_string_value(json_object_get(stamps, "hardlinks"));
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
		const char *path = json_string_value(json_object_get(v, "path"));
		json_t *now = path ? source_stamp(path) : NULL;
		bool same = now && json_equal(now, v);

		json_decref(now);
		if (!same)
			return false;
	}
	return true;
}

/*
 * The kernel's count of links, mount changes and renames anywhere but the
 * daemon's own (SBX_EPOCH_LINK, bumped by the path_link, path_rename and
 * mount hooks). While it stands still no hard link can have appeared, so
 * the directory scan behind the digest can be skipped. The
 * programs stay attached while no daemon runs; only a deliberate detach
 * (the benchmarks' condition A) stops the count, and the TTL bounds that.
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
	for (size_t i = 0; i < e->n_rules; i++) {
		free(e->rules[i].pattern);
		free(e->rules[i].reason);
		free(e->rules[i].source);
	}
	free(e->rules);
	free(e->protect);
	json_decref(e->sources);
	json_decref(e->diags);
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
	if (id && !policy_in_use(d, id))
		sbx_policy_remove(&d->k, id);
}

void sbx_pcache_expire(struct sbx_daemon *d, bool all)
{
	uint64_t now = sbx_boot_ns();
	struct sbx_pcache **pp = &d->pcache;

	while (*pp) {
		struct sbx_pcache *e = *pp;

		if (all || now - e->born_ns > SBX_PCACHE_TTL_NS) {
			uint32_t id = e->policy_id;

			*pp = e->next;
			sbx_pcache_drop(e);
			sbx_policy_release(d, id);
			continue;
		}
		pp = &e->next;
	}
}

static struct sbx_rule_row *copy_rules(const struct sbx_rule_row *r, size_t n)
{
	struct sbx_rule_row *c = sbx_calloc(n, sizeof(*c));

	for (size_t i = 0; i < n; i++) {
		c[i].id = r[i].id;
		c[i].verdict = r[i].verdict;
		c[i].pattern = sbx_strdup(r[i].pattern);
		c[i].reason = sbx_strdup(r[i].reason);
		c[i].source = sbx_strdup(r[i].source);
	}
	return c;
}

static void hand_out(const struct sbx_pcache *e, struct sbx_policy_use *u)
{
	u->hdr = e->hdr;
	u->rules = copy_rules(e->rules, e->n_rules);
	u->n_rules = e->n_rules;
	u->protect = sbx_calloc(e->n_protect, sizeof(*u->protect));
	memcpy(u->protect, e->protect, e->n_protect * sizeof(*u->protect));
	u->n_protect = e->n_protect;
	u->diags = json_incref(e->diags);
}

int sbx_policy_obtain(struct sbx_daemon *d, uid_t uid, gid_t gid, const char *home,
		      const char *project, const char *policy_path, bool fresh,
		      struct sbx_policy_use *u, char **err)
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
	for (e = fresh ? NULL : d->pcache; e; e = e->next) {
		bool links_quiet = have_epoch && e->link_epoch_ok && e->link_epoch == epoch;

		if (e->uid == uid && e->gid == gid && !strcmp(e->home, home) &&
		    !strcmp(e->project, project) && !strcmp(e->policy_path, policy_path) &&
		    stamps_hold(e->sources, !links_quiet) && dirs_hold(e)) {
			e->link_epoch = epoch;
			e->link_epoch_ok = have_epoch;
			hand_out(e, u);
			u->shared = true;
			return 0;
		}
	}
	rc = sbx_policy_compile_as(uid, gid, home, project, policy_path, d->next_policy_id++,
				   &c, err);
	if (!rc)
		rc = sbx_policy_apply(&d->k, &c.c, err);
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
	e->rules = c.rules;
	e->n_rules = c.n_rules;
	c.rules = NULL;
	c.n_rules = 0;
	e->protect = c.c.protect;
	e->n_protect = c.c.n_protect;
	c.c.protect = NULL;
	c.c.n_protect = 0;
	e->sources = json_incref(c.sources);
	e->diags = json_incref(c.diags);
	e->born_ns = sbx_boot_ns();
	e->link_epoch = epoch;
	e->link_epoch_ok = have_epoch;
	dir_ident(project, &e->project_dev, &e->project_ino);
	dir_ident(home, &e->home_dev, &e->home_ino);
	sbx_compiled_rt_free(&c);
	e->next = d->pcache;
	d->pcache = e;
	hand_out(e, u);
	return 0;
}

/*
 * A restarted daemon keeps the policies of the sessions it adopted and
 * removes every other entry: those of sessions that ended while no daemon
 * ran, and the previous daemon's cached compilations.
 */
static bool unused_policy(uint32_t id, void *d)
{
	return !policy_in_use(d, id);
}

void sbx_policy_sweep(struct sbx_daemon *d)
{
	delete_rules(&d->k, unused_policy, d);
}
