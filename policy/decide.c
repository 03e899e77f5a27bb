// SPDX-License-Identifier: GPL-2.0
/*
 * decide.c - the kernel's decision algorithm, in user space, over the
 * compiled entries: for `policy explain`, the agent connectors and the
 * differential tests against bpf/. Any change here must be made in the
 * BPF programs too, and the other way round.
 *
 * Files: walk from the object (level 0) up to "/", collect candidates
 * (inode and chain entries: rank EXACT; exact basename: NAME; prefix and
 * suffix basename: GLOB); the best is the smallest (level, rank), then
 * the larger verdict, then the smaller rule id. No candidate: the
 * section default.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <arpa/inet.h>
#define SBX_POLICY_INTERNAL
#include "policy/policy.h"

#define BPF_FS_MAGIC_		0xcafe4a11
#define CGROUP2_SUPER_MAGIC_	0x63677270
#define SECURITYFS_MAGIC_	0x73636673
#define DEBUGFS_MAGIC_		0x64626720
#define TRACEFS_MAGIC_		0x74726163

struct node {
	const char *name;	/* NULL for "/" */
	size_t len;
	bool has_id;		/* existing: identity known */
	uint32_t dev;
	uint64_t ino;
	bool chr;		/* the object is a character device: rdev, the kernel's */
	uint64_t rdev;
	const char *pfx;	/* has_id: the path that names it, pfx_len long */
	size_t pfx_len;
};

/* The object's device number, when it is a character device (walk.bpf.c
 * looks its rule by number up too). */
static void node_chr(struct node *n, const char *path)
{
	struct stat st;

	n->chr = !stat(path, &st) && S_ISCHR(st.st_mode);
	if (n->chr)
		n->rdev = SBX_MKDEV(major(st.st_rdev), minor(st.st_rdev));
}

struct walk {
	char *buf;		/* storage for names */
	struct node *nodes;	/* nodes[0] = the object, last = "/" */
	size_t n;
	char *existing;		/* deepest existing path (resolved) */
	bool id_error;
	int pseudo;		/* existing is on a pseudo file system: 1, 0, or -1: ask */
};

static void walk_free(struct walk *w)
{
	free(w->buf);
	free(w->nodes);
	free(w->existing);
}

/*
 * Resolve path the way open(2) does: component by component, following
 * every symlink (the last one too: an O_CREAT open of a dangling symlink
 * creates its target), and ".." from the directory a component resolved
 * to, not from its name. *real gets the deepest existing directory or
 * object, *tail the missing names below it ("a/b", or NULL), where ".."
 * can only be lexical (the kernel would fail the lookup anyway).
 */
#define RESOLVE_MAX_LINKS 40	/* MAXSYMLINKS */

static int resolve_open(const char *abs, char **real, char **tail)
{
	char *todo = strdup(abs), *cur = strdup("/"), *miss = NULL;
	int links = 0, err = 0;

	*real = *tail = NULL;
	if (!todo || !cur) {
		err = -ENOMEM;
		goto out;
	}
	while (*todo) {
		size_t n = strcspn(todo[0] == '/' ? todo + 1 : todo, "/");
		char *name = strndup(todo[0] == '/' ? todo + 1 : todo, n), *rest, *cand = NULL;
		char target[PATH_MAX];
		struct stat st;
		ssize_t tl;

		if (!name) {
			err = -ENOMEM;
			goto out;
		}
		rest = strdup(todo + (todo[0] == '/') + n);
		free(todo);
		todo = rest;
		if (!todo) {
			free(name);
			err = -ENOMEM;
			goto out;
		}
		if (!*name || !strcmp(name, ".")) {
			free(name);
			continue;
		}
		if (miss) {
			/* below a missing name every name is missing too */
			char *t = NULL;

			if (!strcmp(name, "..")) {
				char *sl = strrchr(miss, '/');

				if (sl)
					*sl = 0;
				else {
					free(miss);
					miss = NULL;
				}
			} else if (asprintf(&t, "%s/%s", miss, name) < 0) {
				err = -ENOMEM;
			} else {
				free(miss);
				miss = t;
			}
			free(name);
			if (err)
				goto out;
			continue;
		}
		if (!strcmp(name, "..")) {
			char *sl = strrchr(cur, '/');

			if (sl == cur)
				cur[1] = 0;
			else if (sl)
				*sl = 0;
			free(name);
			continue;
		}
		if (asprintf(&cand, "%s%s%s", cur, strcmp(cur, "/") ? "/" : "", name) < 0) {
			free(name);
			err = -ENOMEM;
			goto out;
		}
		if (lstat(cand, &st)) {
			if (errno != ENOENT && errno != ENOTDIR) {
				err = -errno;
				free(name);
				free(cand);
				goto out;
			}
			miss = name;
			free(cand);
			continue;
		}
		free(name);
		if (!S_ISLNK(st.st_mode)) {
			free(cur);
			cur = cand;
			continue;
		}
		if (++links > RESOLVE_MAX_LINKS) {
			free(cand);
			err = -ELOOP;
			goto out;
		}
		tl = readlink(cand, target, sizeof(target) - 1);
		free(cand);
		if (tl < 0) {
			err = -errno;
			goto out;
		}
		target[tl] = 0;
		if (target[0] == '/') {
			free(cur);
			cur = strdup("/");
		}
		if (asprintf(&rest, "%s/%s", target, todo) < 0 || !cur) {
			err = -ENOMEM;
			goto out;
		}
		free(todo);
		todo = rest;
	}
	*real = cur;
	*tail = miss;
	cur = miss = NULL;
out:
	free(todo);
	free(cur);
	free(miss);
	return err;
}

/* Resolve path (see resolve_open) and split it into nodes, the object
 * first. Missing components are matched by name only. */
static int walk_build(const char *path, struct walk *w)
{
	char *abs = NULL, *real = NULL, *tail = NULL, *p;
	size_t ncomp = 0, k;
	int err = 0;

	memset(w, 0, sizeof(*w));
	w->pseudo = -1;
	if (!path || !*path)
		return -EINVAL;
	if (path[0] != '/') {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)))
			return -errno;
		if (asprintf(&abs, "%s/%s", cwd, path) < 0)
			return -ENOMEM;
	} else {
		abs = strdup(path);
		if (!abs)
			return -ENOMEM;
	}
	err = resolve_open(abs, &real, &tail);
	if (err)
		goto out;
	w->existing = strdup(real);
	if (asprintf(&w->buf, "%s%s%s", real, tail && strcmp(real, "/") ? "/" : "",
		     tail ? tail : "") < 0) {
		w->buf = NULL;
		err = -ENOMEM;
		goto out;
	}
	for (p = w->buf; *p; p++)
		if (*p == '/')
			ncomp++;
	w->nodes = calloc(ncomp + 2, sizeof(*w->nodes));
	if (!w->nodes || !w->existing) {
		err = -ENOMEM;
		goto out;
	}
	/* identities of the existing prefixes, top-down; then split names */
	{
		size_t elen = strlen(real);
		size_t nn = 0;
		struct node *tmp = w->nodes;
		char save;

		/* "/" */
		tmp[nn].name = NULL;
		tmp[nn].len = 0;
		tmp[nn].has_id = !sbx_kident("/", true, &tmp[nn].dev, &tmp[nn].ino);
		tmp[nn].pfx = "/";
		tmp[nn].pfx_len = 1;
		if (!tmp[nn].has_id)
			w->id_error = true;
		nn++;
		for (p = w->buf + 1; *p; ) {
			char *e = strchr(p, '/');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			size_t end = (size_t)(p - w->buf) + len;

			tmp[nn].name = p;
			tmp[nn].len = len;
			tmp[nn].has_id = false;
			if (end <= elen && strcmp(real, "/")) {
				save = w->buf[end];
				w->buf[end] = 0;
				tmp[nn].has_id = !sbx_kident(w->buf, true, &tmp[nn].dev, &tmp[nn].ino);
				tmp[nn].pfx = w->buf;
				tmp[nn].pfx_len = end;
				if (!tmp[nn].has_id)
					w->id_error = true;
				w->buf[end] = save;
			}
			nn++;
			if (!e)
				break;
			p = e + 1;
		}
		if (nn > 1 && tmp[nn - 1].has_id && strlen(real) == strlen(w->buf))
			node_chr(&tmp[nn - 1], real);
		/* reverse: level 0 = the object */
		for (k = 0; k < nn / 2; k++) {
			struct node t = tmp[k];

			tmp[k] = tmp[nn - 1 - k];
			tmp[nn - 1 - k] = t;
		}
		w->n = nn;
	}
out:
	free(abs);
	free(real);
	free(tail);
	if (err) {
		walk_free(w);
		memset(w, 0, sizeof(*w));
	}
	return err;
}

static int cmp_inode_key(const void *k, const void *e)
{
	return memcmp(k, &((const struct sbx_inode_entry *)e)->k, sizeof(struct sbx_inode_key));
}

static int cmp_chain_key(const void *k, const void *e)
{
	return memcmp(k, &((const struct sbx_chain_entry *)e)->k, sizeof(struct sbx_chain_key));
}

static int cmp_name_key(const void *k, const void *e)
{
	return memcmp(k, &((const struct sbx_name_entry *)e)->k, sizeof(struct sbx_name_key));
}

struct best {
	bool found;
	int level, rank;
	uint8_t verdict;
	uint32_t rule_id;
};

static void consider_from(struct best *b, int level, int rank, uint8_t verdict,
			  uint32_t rule_id, uint8_t floor)
{
	if (verdict == SBX_V_NONE || verdict < floor)
		return;
	if (b->found) {
		if (level != b->level) {
			if (level > b->level)
				return;
		} else if (rank != b->rank) {
			if (rank > b->rank)
				return;
		} else if (verdict != b->verdict) {
			if (verdict < b->verdict)
				return;
		} else if (rule_id >= b->rule_id) {
			return;
		}
	}
	b->found = true;
	b->level = level;
	b->rank = rank;
	b->verdict = verdict;
	b->rule_id = rule_id;
}

static void consider(struct best *b, int level, int rank, uint8_t verdict, uint32_t rule_id)
{
	consider_from(b, level, rank, verdict, rule_id, SBX_V_ALLOW);
}

/* walk.bpf.c's sbx_entry_floor: an entry made for another generation of
 * the node's inode number gives only its refusals, and so do the chain
 * rules anchored on it. A generation that cannot be read here counts as
 * another one: this side may over-refuse, never pass what the kernel
 * refuses. A count of removals (SBX_GEN_REMOVALS) is the kernel's, kept
 * for the policies the daemon applied: this compile is of the objects
 * there now, as an applied one is until one of them is removed. So where
 * a live session's policy was compiled before such a removal, the kernel
 * refuses what this says it allows, until that policy is compiled again
 * (docs/LIMITS.md). */
static uint8_t entry_floor(const struct node *nd, const struct sbx_file_rule *r)
{
	uint32_t g;
	char *p;
	bool same;

	if (r->gen_set != SBX_GEN_INODE)
		return SBX_V_ALLOW;
	p = nd->pfx ? strndup(nd->pfx, nd->pfx_len) : NULL;
	same = p && !sbx_kgen(p, true, nd->dev, nd->ino, &g) && g == r->gen;
	free(p);
	return same ? SBX_V_ALLOW : SBX_V_ASK;
}

static bool is_pseudofs(const char *path)
{
	struct statfs sf;

	if (statfs(path, &sf))
		return false;
	switch ((unsigned long)sf.f_type) {
	case BPF_FS_MAGIC_:
	case CGROUP2_SUPER_MAGIC_:
	case SECURITYFS_MAGIC_:
	case DEBUGFS_MAGIC_:
	case TRACEFS_MAGIC_:
		return true;
	default:
		return false;
	}
}

static void set_out(struct sbx_decision *out, uint8_t v, uint32_t rule, int level, int rank)
{
	out->verdict = v;
	out->rule_id = rule;
	out->level = level;
	out->rank = rank;
}

/* one access class over a walk already made */
static void decide_walk(const struct sbx_compiled *c, const struct walk *w, enum sbx_access acc,
			struct sbx_decision *out, bool builtins)
{
	const struct sbx_policy_hdr *h = &c->hdr;
	struct best b = { 0 };

	if (builtins && acc == SBX_ACC_WRITE) {
		for (size_t k = 0; k < w->n; k++) {
			const struct node *nd = &w->nodes[k];

			if (nd->name && nd->len == 8 && !memcmp(nd->name, ".sandbox", 8)) {
				set_out(out, SBX_V_DENY, SBX_RULE_SANDBOX_DIR, (int)k, SBX_RANK_EXACT);
				return;
			}
		}
		for (size_t k = 0; k < w->n; k++) {
			const struct node *nd = &w->nodes[k];

			if (!nd->has_id)
				continue;
			for (size_t i = 0; i < c->n_protect; i++)
				if (c->protect[i].dev == nd->dev && c->protect[i].ino == nd->ino) {
					set_out(out, SBX_V_DENY, SBX_RULE_PROTECTED, (int)k, SBX_RANK_EXACT);
					return;
				}
		}
		if (w->pseudo < 0 ? is_pseudofs(w->existing) : w->pseudo) {
			set_out(out, SBX_V_DENY, SBX_RULE_PSEUDOFS, 0, SBX_RANK_EXACT);
			return;
		}
	}
	if (w->n && w->nodes[0].chr) {
		struct sbx_inode_key dk = { .policy_id = h->policy_id, .dev = SBX_DEV_CHR,
					    .ino = w->nodes[0].rdev };
		const struct sbx_inode_entry *de =
			bsearch(&dk, c->inode, c->n_inode, sizeof(*c->inode), cmp_inode_key);

		if (de)
			consider(&b, 0, SBX_RANK_EXACT, de->v.verdict[acc], de->v.rule_id[acc]);
	}
	for (size_t k = 0; k < w->n; k++) {
		const struct node *nd = &w->nodes[k];

		if (nd->has_id) {
			struct sbx_inode_key ik = { .policy_id = h->policy_id, .dev = nd->dev, .ino = nd->ino };
			const struct sbx_inode_entry *ie =
				bsearch(&ik, c->inode, c->n_inode, sizeof(*c->inode), cmp_inode_key);

			if (ie) {
				/* the generation matters only to what the entry
				 * (or a chain anchored on it) allows */
				uint8_t floor = sbx_rule_may_allow(&ie->v, SBX_ACCBIT(acc)) ?
						entry_floor(nd, &ie->v) : SBX_V_ALLOW;

				consider_from(&b, (int)k, SBX_RANK_EXACT, ie->v.verdict[acc],
					      ie->v.rule_id[acc], floor);
				for (uint32_t m = 1; m <= SBX_CHAIN_MAX && m <= k; m++) {
					struct sbx_chain_key ck = {
						.policy_id = h->policy_id, .dev = nd->dev, .ino = nd->ino, .m = m,
					};
					const struct sbx_chain_entry *ce;
					uint64_t hh = SBX_CHAIN_SEED;

					if (!(ie->v.chain_mask & (1u << (m - 1))))
						continue;
					/* names of nodes k-1 .. k-m, top-down */
					for (size_t j = 1; j <= m; j++)
						hh = sbx_mix64(hh ^ sbx_hash_name(w->nodes[k - j].name,
										  w->nodes[k - j].len));
					ck.hash = hh;
					ce = bsearch(&ck, c->chain, c->n_chain, sizeof(*c->chain), cmp_chain_key);
					if (ce)
						consider_from(&b, (int)(k - m), SBX_RANK_EXACT,
							      ce->v.verdict[acc], ce->v.rule_id[acc], floor);
				}
			}
		}
		if (!nd->name)
			continue;
		{
			size_t len = nd->len;
			unsigned bit = len <= SBX_GLOB_LIT_MAX ? (unsigned)len : 0;

			if (h->exact_len_mask & (1ULL << bit)) {
				struct sbx_name_key nk = {
					.policy_id = h->policy_id, .kind = SBX_NAME_EXACT, .len = (uint8_t)bit,
					.hash = sbx_hash_name(nd->name, len),
				};
				const struct sbx_name_entry *ne =
					bsearch(&nk, c->name, c->n_name, sizeof(*c->name), cmp_name_key);

				if (ne)
					consider(&b, (int)k, SBX_RANK_NAME, ne->v.verdict[acc], ne->v.rule_id[acc]);
			}
			for (unsigned L = 1; L <= SBX_GLOB_LIT_MAX && L <= len; L++) {
				struct sbx_name_key nk = { .policy_id = h->policy_id, .len = (uint8_t)L };
				const struct sbx_name_entry *ne;

				if (h->prefix_len_mask & (1ULL << L)) {
					nk.kind = SBX_NAME_PREFIX;
					nk.hash = sbx_hash_name(nd->name, L);
					ne = bsearch(&nk, c->name, c->n_name, sizeof(*c->name), cmp_name_key);
					if (ne)
						consider(&b, (int)k, SBX_RANK_GLOB, ne->v.verdict[acc],
							 ne->v.rule_id[acc]);
				}
				if (h->suffix_len_mask & (1ULL << L)) {
					nk.kind = SBX_NAME_SUFFIX;
					nk.hash = sbx_hash_suffix(nd->name + len - L, L);
					ne = bsearch(&nk, c->name, c->n_name, sizeof(*c->name), cmp_name_key);
					if (ne)
						consider(&b, (int)k, SBX_RANK_GLOB, ne->v.verdict[acc],
							 ne->v.rule_id[acc]);
				}
			}
		}
	}
	if (b.found) {
		set_out(out, b.verdict, b.rule_id, b.level, b.rank);
	} else if (h->file_default[acc] == SBX_V_NONE) {
		/* a header without defaults is broken: fail closed */
		set_out(out, SBX_V_DENY, SBX_RULE_ERROR, -1, SBX_RANK_NONE);
	} else {
		set_out(out, h->file_default[acc], h->file_default_rule[acc], -1, SBX_RANK_NONE);
	}
}

/* the access classes first..last over one walk, out[0] for first; a walk
 * that could not be finished (failed) denies them all: fail closed */
static void decide_range(const struct sbx_compiled *c, const struct walk *w, bool failed,
			 enum sbx_access first, enum sbx_access last, struct sbx_decision *out,
			 bool builtins)
{
	for (int a = first; a <= (int)last; a++) {
		if (failed || w->id_error)
			set_out(&out[a - first], SBX_V_DENY, SBX_RULE_ERROR, 0, SBX_RANK_EXACT);
		else
			decide_walk(c, w, a, &out[a - first], builtins);
	}
}

/* the access classes first..last of path, out[0] for first: one walk */
static int decide_path(const struct sbx_compiled *c, const char *path, enum sbx_access first,
		       enum sbx_access last, struct sbx_decision *out, bool builtins)
{
	struct walk w;
	int err;

	if (!c || !out || first > last || last >= SBX_ACC_MAX)
		return -EINVAL;
	err = walk_build(path, &w);
	if (err == -EINVAL || err == -ENOMEM)
		return err;
	decide_range(c, &w, err, first, last, out, builtins);
	walk_free(&w);
	return 0;
}

int sbx_decide_path(const struct sbx_compiled *c, const char *path, enum sbx_access acc,
		    struct sbx_decision *out)
{
	return decide_path(c, path, acc, acc, out, true);
}

int sbx_decide_path_each(const struct sbx_compiled *c, const char *path,
			 struct sbx_decision out[SBX_ACC_MAX])
{
	return decide_path(c, path, 0, SBX_ACC_MAX - 1, out, true);
}

struct sbx_decide_dir {
	char *path;
	struct walk w;
	bool usable;		/* path exists, is canonical and every id is known */
	dev_t st_dev;		/* usable: the directory's, and whether its file */
	bool pseudo;		/* system is a pseudo one (is_pseudofs) */
};

struct sbx_decide_dir *sbx_decide_dir_open(const char *dir)
{
	struct sbx_decide_dir *d = calloc(1, sizeof(*d));

	if (!d || !(d->path = strdup(dir))) {
		free(d);
		return NULL;
	}
	/* anything else (a symlink on the way, a missing or unreadable
	 * directory) is decided entry by entry from the full path */
	d->usable = dir[0] == '/' && !walk_build(dir, &d->w) && !d->w.id_error &&
		    !strcmp(d->w.existing, dir) && !strcmp(d->w.buf, dir);
	if (d->usable) {
		struct stat st;

		d->usable = !stat(dir, &st);
		d->st_dev = st.st_dev;
		d->pseudo = is_pseudofs(dir);
	}
	return d;
}

void sbx_decide_dir_close(struct sbx_decide_dir *d)
{
	if (!d)
		return;
	walk_free(&d->w);
	free(d->path);
	free(d);
}

int sbx_decide_dir_each(const struct sbx_compiled *c, const struct sbx_decide_dir *d,
			const char *name, const struct stat *lst,
			struct sbx_decision out[SBX_ACC_MAX])
{
	return sbx_decide_dir_each_kid(c, d, name, lst, NULL, out);
}

int sbx_decide_dir_each_kid(const struct sbx_compiled *c, const struct sbx_decide_dir *d,
			    const char *name, const struct stat *lst, const struct sbx_kid *kid,
			    struct sbx_decision out[SBX_ACC_MAX])
{
	struct walk e = { 0 };
	struct stat st;
	char *full = NULL;
	bool exists;
	int err;

	if (!c || !d || !name || !out)
		return -EINVAL;
	if (asprintf(&full, "%s%s%s", d->path, strcmp(d->path, "/") ? "/" : "", name) < 0)
		return -ENOMEM;
	if (lst) {
		st = *lst;
		exists = true;
	} else {
		exists = !lstat(full, &st);
	}
	/* the walk of the directory holds for one plain name below it; a
	 * symlink is resolved as open(2) would, from the start */
	if (!d->usable || !*name || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, "..") || (exists && S_ISLNK(st.st_mode)) ||
	    (!exists && errno != ENOENT)) {
		err = sbx_decide_path_each(c, full, out);
		free(full);
		return err;
	}
	e.n = d->w.n + 1;
	e.nodes = calloc(e.n, sizeof(*e.nodes));
	e.buf = strdup(name);
	e.existing = exists ? full : strdup(d->path);
	if (!exists)
		free(full);
	if (!e.nodes || !e.buf || !e.existing) {
		walk_free(&e);
		return -ENOMEM;
	}
	/* a name on the directory's own file system: its answer, asked once
	 * (a statfs per name was a tenth of a Landlock plan's calls) */
	e.pseudo = !exists || st.st_dev == d->st_dev ? d->pseudo : -1;
	e.nodes[0].name = e.buf;
	e.nodes[0].len = strlen(e.buf);
	if (exists) {
		/* the caller's batch of statx, checked against mount changes
		 * around it (sbx_kident_statx) */
		if (kid && lst) {
			e.nodes[0].has_id = !kid->err;
			e.nodes[0].dev = kid->dev;
			e.nodes[0].ino = kid->ino;
		} else {
			e.nodes[0].has_id = !sbx_kident(e.existing, true, &e.nodes[0].dev,
							&e.nodes[0].ino);
		}
		e.nodes[0].pfx = e.existing;
		e.nodes[0].pfx_len = strlen(e.existing);
		e.id_error = !e.nodes[0].has_id;
		/* not a symlink (sent above): lstat's answer is stat's */
		e.nodes[0].chr = e.nodes[0].has_id && S_ISCHR(st.st_mode);
		if (e.nodes[0].chr)
			e.nodes[0].rdev = SBX_MKDEV(major(st.st_rdev), minor(st.st_rdev));
	}
	memcpy(&e.nodes[1], d->w.nodes, d->w.n * sizeof(*e.nodes));
	decide_range(c, &e, false, 0, SBX_ACC_MAX - 1, out, true);
	walk_free(&e);
	return 0;
}

int sbx_decide_path_policy(const struct sbx_compiled *c, const char *path, enum sbx_access acc,
			   struct sbx_decision *out)
{
	return decide_path(c, path, acc, acc, out, false);
}

/* ---- network ----------------------------------------------------------------------------- */

static bool prefix_match(const uint8_t *net, const uint8_t *addr, unsigned bits)
{
	unsigned full = bits / 8, rem = bits % 8;

	if (memcmp(net, addr, full))
		return false;
	return !rem || !((net[full] ^ addr[full]) & (0xff << (8 - rem)));
}

/* The first port rule of the longest prefix covering addr that matches
 * port and proto, as the kernel's scan finds it; NULL when none does. */
static const struct sbx_net_port_rule *net_port_rule(const struct sbx_compiled *c, int family,
						     const uint8_t *addr, uint16_t port,
						     uint8_t proto)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const struct sbx_net_rule *best = NULL;
	uint8_t a[16];
	unsigned best_bits = 0;

	memcpy(a, addr, family == AF_INET ? 4 : 16);
	if (family == AF_INET6 && !memcmp(a, mapped, 12)) {
		memmove(a, a + 12, 4);
		family = AF_INET;
	}
	if (family == AF_INET) {
		for (size_t i = 0; i < c->n_net4; i++) {
			unsigned bits = c->net4[i].k.prefixlen - 32;

			if (ntohl(c->net4[i].k.policy_id) != c->hdr.policy_id)
				continue;
			if ((!best || bits > best_bits) && prefix_match(c->net4[i].k.addr, a, bits)) {
				best = &c->net4[i].v;
				best_bits = bits;
			}
		}
	} else {
		for (size_t i = 0; i < c->n_net6; i++) {
			unsigned bits = c->net6[i].k.prefixlen - 32;

			if (ntohl(c->net6[i].k.policy_id) != c->hdr.policy_id)
				continue;
			if ((!best || bits > best_bits) && prefix_match(c->net6[i].k.addr, a, bits)) {
				best = &c->net6[i].v;
				best_bits = bits;
			}
		}
	}
	for (uint32_t i = 0; best && i < best->count && i < SBX_NET_PORT_RULES; i++) {
		const struct sbx_net_port_rule *r = &best->r[i];

		if (port >= r->port_lo && port <= r->port_hi && (r->proto == 0 || r->proto == proto))
			return r;
	}
	return NULL;
}

int sbx_decide_net(const struct sbx_compiled *c, int family, const uint8_t *addr,
		   uint16_t port, uint8_t proto, struct sbx_decision *out)
{
	const struct sbx_net_port_rule *r;

	if (!c || !addr || !out || (family != AF_INET && family != AF_INET6))
		return -EINVAL;
	r = net_port_rule(c, family, addr, port, proto);
	if (r) {
		set_out(out, r->verdict, r->rule_id, 0, SBX_RANK_EXACT);
		return 0;
	}
	if (c->hdr.net_default == SBX_V_NONE)
		set_out(out, SBX_V_DENY, SBX_RULE_ERROR, -1, SBX_RANK_NONE);
	else
		set_out(out, c->hdr.net_default, c->hdr.net_default_rule, -1, SBX_RANK_NONE);
	return 0;
}

bool sbx_addr_is_loopback(int family, const uint8_t *a)
{
	static const uint8_t any6[16], lo6[16] = { [15] = 1 };
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (family == AF_INET6 && !memcmp(a, mapped, 12))
		return sbx_addr_is_loopback(AF_INET, a + 12);
	if (family == AF_INET)
		return a[0] == 127 || !memcmp(a, any6, 4);
	return !memcmp(a, lo6, 16) || !memcmp(a, any6, 16);
}

int sbx_decide_loopback(const struct sbx_compiled *c, int family, const uint8_t *addr,
			uint16_t port, uint8_t proto, struct sbx_decision *out)
{
	const struct sbx_net_port_rule *r;

	if (!c || !addr || !out || (family != AF_INET && family != AF_INET6))
		return -EINVAL;
	if (!sbx_addr_is_loopback(family, addr))
		return -EINVAL;
	/* as bpf/dns.bpf.c: a rule for this port, not one for every port */
	r = net_port_rule(c, family, addr, port, proto);
	if (r && !(r->port_lo == 0 && r->port_hi == 65535) &&
	    (r->verdict == SBX_V_ALLOW || r->verdict == SBX_V_AUDIT)) {
		set_out(out, r->verdict, r->rule_id, 0, SBX_RANK_EXACT);
		return 0;
	}
	set_out(out, c->hdr.loopback_outside == SBX_V_NONE ? SBX_V_ASK : c->hdr.loopback_outside,
		c->hdr.loopback_rule, -1, SBX_RANK_NONE);
	return 0;
}

/* ---- abstract unix sockets ------------------------------------------------------------------ */

static const struct sbx_file_rule *name_rule(const struct sbx_compiled *c, uint8_t kind,
					     uint8_t len, uint64_t hash)
{
	struct sbx_name_key k = {
		.policy_id = c->hdr.policy_id, .kind = kind, .len = len, .hash = hash,
	};
	const struct sbx_name_entry *e = bsearch(&k, c->name, c->n_name, sizeof(*c->name),
						 cmp_name_key);

	return e ? &e->v : NULL;
}

int sbx_decide_abstract(const struct sbx_compiled *c, const char *name, size_t len,
			struct sbx_decision *out)
{
	const struct sbx_file_rule *r;

	if (!c || !name || !out)
		return -EINVAL;
	if (len > 107)
		len = 107;
	r = name_rule(c, SBX_NAME_ABSTRACT, 0, sbx_hash_name(name, len));
	for (size_t l = len < SBX_GLOB_LIT_MAX ? len : SBX_GLOB_LIT_MAX; l > 0 && !r; l--)
		if ((c->hdr.abstract_len_mask >> l) & 1)
			r = name_rule(c, SBX_NAME_ABSTRACT_PREFIX, (uint8_t)l, sbx_hash_name(name, l));
	if (r && r->verdict[SBX_ACC_CONNECT] != SBX_V_NONE) {
		set_out(out, r->verdict[SBX_ACC_CONNECT], r->rule_id[SBX_ACC_CONNECT], 0,
			SBX_RANK_EXACT);
		return 0;
	}
	if (c->hdr.file_default[SBX_ACC_CONNECT] == SBX_V_NONE)
		set_out(out, SBX_V_DENY, SBX_RULE_ERROR, -1, SBX_RANK_NONE);
	else
		set_out(out, c->hdr.file_default[SBX_ACC_CONNECT],
			c->hdr.file_default_rule[SBX_ACC_CONNECT], -1, SBX_RANK_NONE);
	return 0;
}

/* ---- commands ------------------------------------------------------------------------------ */

/* The most specific of rules[0..n) that names the command, or false. */
static int command_rule(const struct sbx_crule *rules, size_t n, int argc, char *const argv[],
			uint8_t *verdict, uint32_t *id, int *score_out)
{
	const char *base;
	char *joined = NULL, *norm = NULL;
	size_t jl = 0;
	int best_score = -1;
	uint8_t best_v = 0;
	uint32_t best_id = 0;

	base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (argv[0][0] == '/')
		norm = sbx_path_normalize(argv[0]);
	for (int i = 1; i < argc; i++)
		jl += strlen(argv[i]) + 1;
	joined = calloc(jl + 1, 1);
	if (!joined || (argv[0][0] == '/' && !norm)) {
		free(joined);
		free(norm);
		return -ENOMEM;
	}
	for (int i = 1; i < argc; i++) {
		if (i > 1)
			strcat(joined, " ");
		strcat(joined, argv[i]);
	}
	for (size_t i = 0; i < n; i++) {
		const struct sbx_crule *r = &rules[i];
		int cmd_score = -1, score;

		for (size_t j = 0; j < r->n_cmds; j++) {
			const char *cmd = r->cmds[j];

			if (cmd[0] == '/') {
				if (norm && !strcmp(cmd, norm))
					cmd_score = 1;
			} else if (!strcmp(cmd, base) && cmd_score < 0) {
				cmd_score = 0;
			}
		}
		if (cmd_score < 0)
			continue;
		if (r->n_args) {
			bool any = false;

			for (size_t j = 0; j < r->n_args && !any; j++)
				any = fnmatch(r->args[j], joined, 0) == 0;
			if (!any)
				continue;
		}
		/* args beat no args; then an absolute path beats a basename */
		score = (r->n_args ? 2 : 0) + cmd_score;
		if (score > best_score || (score == best_score &&
		    (r->verdict > best_v || (r->verdict == best_v && r->id < best_id)))) {
			best_score = score;
			best_v = r->verdict;
			best_id = r->id;
		}
	}
	free(joined);
	free(norm);
	*verdict = best_v;
	*id = best_id;
	*score_out = best_score;
	return 0;
}

/*
 * The project's most specific rule (or commands.default), then the
 * machine policy's over it where that is stricter: a machine deny or ask
 * holds whatever the project says (machine.c).
 */
int sbx_decide_command(const struct sbx_policy *p, int argc, char *const argv[],
		       struct sbx_decision *out)
{
	size_t own;
	uint8_t v, mv;
	uint32_t id, mid;
	int score, mscore, err;

	if (!p || !out || argc < 1 || !argv || !argv[0])
		return -EINVAL;
	own = p->n_crules - p->n_machine_crules;
	err = command_rule(p->crules, own, argc, argv, &v, &id, &score);
	if (!err)
		err = command_rule(p->crules + own, p->n_machine_crules, argc, argv, &mv, &mid,
				   &mscore);
	if (err)
		return err;
	if (score >= 0)
		set_out(out, v, id, 0, (score & 1) ? SBX_RANK_EXACT : SBX_RANK_NAME);
	else
		set_out(out, p->cmd_default, p->cmd_default_rule, -1, SBX_RANK_NONE);
	if (mscore >= 0 && mv >= out->verdict)
		set_out(out, mv, mid, 0, (mscore & 1) ? SBX_RANK_EXACT : SBX_RANK_NAME);
	return 0;
}

/* ---- names --------------------------------------------------------------------------------- */

bool sbx_host_normalize(const char *in, char *out, size_t outlen)
{
	size_t n = in ? strlen(in) : 0, label = 0;

	if (n && in[n - 1] == '.')
		n--;		/* the root label */
	if (n == 0 || n > 253 || n + 1 > outlen)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)in[i];

		if (ch == '.') {
			if (label == 0)
				return false;	/* empty label */
			label = 0;
		} else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
			   ch == '_') {
			label++;
		} else if (ch >= 'A' && ch <= 'Z') {
			ch = (unsigned char)(ch - 'A' + 'a');
			label++;
		} else {
			return false;
		}
		if (label > 63)
			return false;
		out[i] = (char)ch;
	}
	if (label == 0)
		return false;
	out[n] = 0;
	return out[0] != '-';
}

/* hosts[] is sorted by (name, exact before wildcard): the entries of one name */
static bool host_range(const struct sbx_compiled *c, const char *name, bool wildcard,
		       size_t *first, size_t *n)
{
	size_t lo = 0, hi = c->n_hosts;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int r = strcmp(c->hosts[mid].name, name);

		if (r < 0 || (r == 0 && !c->hosts[mid].wildcard && wildcard))
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	*n = 0;
	while (lo + *n < c->n_hosts && !strcmp(c->hosts[lo + *n].name, name) &&
	       c->hosts[lo + *n].wildcard == wildcard)
		(*n)++;
	return *n > 0;
}

int sbx_decide_host(const struct sbx_compiled *c, const char *name,
		    struct sbx_host_decision *out)
{
	char norm[256];
	const char *p;
	size_t first = 0, n = 0;
	bool found;

	memset(out, 0, sizeof(*out));
	if (!sbx_host_normalize(name, norm, sizeof(norm)))
		return -EINVAL;
	/* exact, then "*.parent" from the closest parent up */
	found = host_range(c, norm, false, &first, &n);
	for (p = strchr(norm, '.'); !found && p; p = strchr(p + 1, '.'))
		found = host_range(c, p + 1, true, &first, &n);
	if (!found) {
		out->verdict = c->hdr.net_default == SBX_V_NONE ? SBX_V_DENY : c->hdr.net_default;
		out->rule_id = c->hdr.net_default_rule;
		return 0;
	}
	out->matched = true;
	out->first = first;
	out->n = n;
	out->verdict = SBX_V_MAX;
	for (size_t i = first; i < first + n; i++)
		if (c->hosts[i].pr.verdict < out->verdict) {
			out->verdict = c->hosts[i].pr.verdict;
			out->rule_id = c->hosts[i].pr.rule_id;
		}
	return 0;
}
