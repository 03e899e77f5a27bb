// SPDX-License-Identifier: GPL-2.0
/*
 * compile_files.c - files rules to the kernel's file entries.
 *
 * Absolute paths become inode entries (existing objects, by kernel
 * identity) or chain entries (the nearest existing ancestor plus the
 * hash of the missing names); basename patterns become name entries.
 * Below a directory that a deny or ask rule names, files with more than
 * one link get inode entries of their own, so that a link made elsewhere
 * before the session is decided the same way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "policy/compile.h"
#include "lib/alloc.h"

/* ---- file entries while building ------------------------------------------------ */

struct fent {
	uint8_t key[32];	/* sbx_inode_key, sbx_chain_key or sbx_name_key */
	struct sbx_file_rule v;
	char *what;
	bool anchor;		/* made only to carry a chain_mask */
};

static struct fent *fvec_add(struct fvec *f, const void *key, const char *what, bool anchor)
{
	struct fent *e;

	if (!SBX_GROW(f->v, f->cap, f->n + 1, 64))
		return NULL;
	e = &f->v[f->n];
	memset(e, 0, sizeof(*e));
	memcpy(e->key, key, f->klen);
	e->what = strdup(what);
	if (!e->what)
		return NULL;
	e->anchor = anchor;
	f->n++;
	return e;
}

static void fvec_free(struct fvec *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].what);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

static void set_rule(struct sbx_file_rule *r, uint8_t access, uint8_t verdict, uint32_t id)
{
	for (int a = 0; a < SBX_ACC_MAX; a++)
		if (access & SBX_ACCBIT(a)) {
			r->verdict[a] = verdict;
			r->rule_id[a] = id;
		}
}

/* Per access class: the larger verdict wins, then the smaller rule id. */
static void merge_rule(struct sbx_file_rule *dst, const struct sbx_file_rule *src)
{
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		if (src->verdict[a] == SBX_V_NONE)
			continue;
		if (dst->verdict[a] == SBX_V_NONE || src->verdict[a] > dst->verdict[a] ||
		    (src->verdict[a] == dst->verdict[a] && src->rule_id[a] < dst->rule_id[a])) {
			dst->verdict[a] = src->verdict[a];
			dst->rule_id[a] = src->rule_id[a];
		}
	}
	dst->chain_mask |= src->chain_mask;
	dst->chain_allow |= src->chain_allow;
	dst->pinned |= src->pinned;
	/* one object: a generation read for it is worth more than a count,
	 * and the first one read stays */
	if (dst->gen_set != SBX_GEN_INODE && src->gen_set &&
	    (src->gen_set == SBX_GEN_INODE || !dst->gen_set)) {
		dst->gen_set = src->gen_set;
		dst->gen = src->gen;
	}
}

static int cmp_fent(const void *a, const void *b, void *klen)
{
	const struct fent *x = a, *y = b;
	int r = memcmp(x->key, y->key, *(size_t *)klen);

	if (r)
		return r;
	/* equal keys: order so that the label chosen is deterministic */
	if (x->anchor != y->anchor)
		return x->anchor ? 1 : -1;
	return strcmp(x->what, y->what);
}

/* Sort by key and merge equal keys; the first label (non-anchor, smallest) stays. */
static void fvec_finish(struct fvec *f)
{
	size_t o = 0;

	if (!f->n)
		return;
	qsort_r(f->v, f->n, sizeof(f->v[0]), cmp_fent, &f->klen);
	for (size_t i = 1; i < f->n; i++) {
		if (!memcmp(f->v[o].key, f->v[i].key, f->klen)) {
			merge_rule(&f->v[o].v, &f->v[i].v);
			f->v[o].anchor = f->v[o].anchor && f->v[i].anchor;
			free(f->v[i].what);
			continue;
		}
		f->v[++o] = f->v[i];
	}
	f->n = o + 1;
}

struct hl_cand {
	char *path;
	uint8_t access;		/* classes for which a deny/ask dir rule scanned it */
};

/*
 * What one compile learned about a path. Thousands of file rules name the
 * same few hundred directories; realpath() costs a readlink per component
 * and an identity two opens and a read, so each is asked once per compile
 * (a compile is a snapshot of the file system anyway).
 */
struct path_memo {
	char *path;
	char *real;		/* realpath(path), or NULL with real_err */
	int real_err;
	int id_err;		/* sbx_kident(path, follow) once asked; 1 = not yet */
	uint32_t dev;
	uint64_t ino;
	mode_t mode;		/* the object's type when resolved here, 0 = not known */
	bool pinned;		/* pinned with all its ancestors (pin_ancestors) */
};

static int memo_cmp(const void *a, const void *b)
{
	return strcmp(((const struct path_memo *)a)->path, ((const struct path_memo *)b)->path);
}

static void memo_free(void *p)
{
	struct path_memo *m = p;

	free(m->path);
	free(m->real);
	free(m);
}

static struct path_memo *memo_get(struct cstate *s, const char *path)
{
	struct path_memo key = { .path = (char *)path }, *m, **slot;

	slot = tfind(&key, &s->paths, memo_cmp);
	if (slot)
		return *slot;
	m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path))) {
		free(m);
		s->oom = true;
		return NULL;
	}
	m->real_err = -1;	/* not resolved yet */
	m->id_err = 1;
	slot = tsearch(m, &s->paths, memo_cmp);
	if (!slot) {
		memo_free(m);
		s->oom = true;
		return NULL;
	}
	return m;
}

/* sbx_kident(path, follow) once per compile */
static int memo_kident(struct cstate *s, const char *path, uint32_t *dev, uint64_t *ino)
{
	struct path_memo *m = memo_get(s, path);

	if (!m)
		return -ENOMEM;
	if (m->id_err == 1)
		m->id_err = sbx_kident(path, true, &m->dev, &m->ino);
	*dev = m->dev;
	*ino = m->ino;
	return m->id_err;
}

static bool has_dot_component(const char *p)
{
	for (const char *c = p; (c = strstr(c, "/.")); c++)
		if (c[2] == 0 || c[2] == '/' || (c[2] == '.' && (c[3] == 0 || c[3] == '/')))
			return true;
	return false;
}

/*
 * realpath(path), with the parent directory's resolution remembered: a
 * name whose parent is known takes one walk. Anything unusual (a
 * symlink as the last name, "." or "..", no parent) goes to realpath()
 * itself, so the result and its errno are always realpath()'s.
 */
static const char *memo_real(struct cstate *s, const char *path);

static char *resolve_uncached(struct cstate *s, const char *path)
{
	const char *sl = strrchr(path, '/'), *preal;
	struct path_memo *m;
	struct stat st;
	char *par, *cand;
	int err, fd;

	if (path[0] != '/' || !sl || sl == path || !sl[1] || has_dot_component(path))
		return realpath(path, NULL);
	par = strndup(path, (size_t)(sl - path));
	if (!par) {
		s->oom = true;
		errno = ENOMEM;
		return NULL;
	}
	/* its parent is remembered too; below a missing directory or a file,
	 * realpath() fails the same way for every name there */
	preal = memo_real(s, par);
	free(par);
	if (!preal)
		return NULL;
	if (asprintf(&cand, "%s%s", strcmp(preal, "/") ? preal : "", sl) < 0) {
		s->oom = true;
		errno = ENOMEM;
		return NULL;
	}
	/* one walk for the type and the identity, both of the object at cand:
	 * the rules ask for its identity next, and a walk is the expensive
	 * part on overlayfs (the slow way then reads fdinfo of this fd) */
	fd = open(cand, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		err = errno;
		if (fd >= 0)
			close(fd);
		free(cand);
		errno = err;
		return NULL;
	}
	if (S_ISLNK(st.st_mode)) {
		char *r;

		close(fd);
		r = realpath(cand, NULL);
		err = errno;
		free(cand);
		errno = err;
		return r;
	}
	/* cand is a real path: its identity is the one sbx_kident() would find */
	m = memo_get(s, cand);
	if (m && m->id_err == 1) {
		m->id_err = sbx_kident_fd(fd, &m->dev, &m->ino);
		m->mode = st.st_mode;
	}
	close(fd);
	return cand;
}

/* path's memo with realpath(path) (or its errno) in it; NULL: no memory */
static struct path_memo *memo_resolve(struct cstate *s, const char *path)
{
	struct path_memo *m = memo_get(s, path);

	if (m && m->real_err == -1) {
		m->real = resolve_uncached(s, path);
		m->real_err = m->real ? 0 : errno;
	}
	return m;
}

/* realpath(path) as the memo holds it, or NULL with realpath()'s errno */
static const char *memo_real(struct cstate *s, const char *path)
{
	struct path_memo *m = memo_resolve(s, path);

	if (!m) {
		s->oom = true;
		errno = ENOMEM;
		return NULL;
	}
	if (!m->real)
		errno = m->real_err;
	return m->real;
}

/* realpath(path), asked of the file system once per compile */
static char *memo_realpath(struct cstate *s, const char *path)
{
	const char *real = memo_real(s, path);
	char *r;

	if (!real)
		return NULL;
	r = strdup(real);
	if (!r) {
		s->oom = true;
		errno = ENOMEM;
	}
	return r;
}

/* PATH led to (dev, ino) when compiled: kept for the cache's check */
static void add_ident(struct cstate *s, const char *path, uint32_t dev, uint64_t ino,
		      int64_t gen)
{
	struct sbx_compiled *c = s->out;
	struct sbx_ident_stamp *v;

	if (!SBX_GROW(c->idents, s->cap_idents, c->n_idents + 1, 64)) {
		s->oom = true;
		return;
	}
	v = c->idents;
	if (!(v[c->n_idents].path = strdup(path))) {
		s->oom = true;
		return;
	}
	v[c->n_idents].dev = dev;
	v[c->n_idents].ino = ino;
	v[c->n_idents].gen = gen;
	c->n_idents++;
}

static int cmp_ident(const void *a, const void *b)
{
	return strcmp(((const struct sbx_ident_stamp *)a)->path,
		      ((const struct sbx_ident_stamp *)b)->path);
}

/* by path, each path once (pins repeat the same ancestors rule after rule) */
static void finish_idents(struct sbx_compiled *c)
{
	size_t n = 0;

	if (c->n_idents < 2)
		return;
	qsort(c->idents, c->n_idents, sizeof(*c->idents), cmp_ident);
	for (size_t i = 0; i < c->n_idents; i++) {
		if (n && !strcmp(c->idents[i].path, c->idents[n - 1].path)) {
			free(c->idents[i].path);
			continue;
		}
		c->idents[n++] = c->idents[i];
	}
	c->n_idents = n;
}

static int add_inode(struct cstate *s, uint32_t dev, uint64_t ino, const struct sbx_file_rule *r,
		     const char *what, bool anchor, const char *path)
{
	struct sbx_inode_key k = { .policy_id = s->policy_id, .dev = dev, .ino = ino };
	struct fent *e = fvec_add(&s->inode, &k, what, anchor);

	if (!e) {
		s->oom = true;
		return -1;
	}
	e->v = *r;
	e->v.gen_set = SBX_GEN_NONE;
	/* Where the file system keeps no generation, or the path no longer
	 * names this object, the kernel counts the object's removals from
	 * the moment the daemon applies the policy (removals.bpf.c), and the
	 * daemon checks that the path still names it after that
	 * (SBX_IDENT_COUNTED). A compile inside a session is used at once
	 * and keeps neither. */
	if (path && !s->p->no_generations) {
		int g = sbx_kgen(path, true, dev, ino, &e->v.gen);

		e->v.gen_set = !g ? SBX_GEN_INODE : g == SBX_KGEN_UNIQUE ? SBX_GEN_NONE :
									   SBX_GEN_REMOVALS;
		if (e->v.gen_set != SBX_GEN_INODE)
			e->v.gen = 0;
	}
	add_ident(s, path, dev, ino, e->v.gen_set == SBX_GEN_INODE ? (int64_t)e->v.gen :
				     e->v.gen_set == SBX_GEN_REMOVALS ? SBX_IDENT_COUNTED : -1);
	return 0;
}

/* A character device's rule also by its number (SBX_DEV_CHR): the same
 * device through any node of it. No identity stamp: the number is not a
 * path's (a node made again is the same device). */
static int add_chr(struct cstate *s, const char *real, const struct sbx_file_rule *r,
		   const char *label)
{
	struct sbx_inode_key k = { .policy_id = s->policy_id, .dev = SBX_DEV_CHR };
	struct stat st;
	struct fent *e;
	char *what;

	if (stat(real, &st) || !S_ISCHR(st.st_mode))
		return 0;
	k.ino = SBX_MKDEV(major(st.st_rdev), minor(st.st_rdev));
	if (asprintf(&what, "%s (device %u:%u)", label, major(st.st_rdev),
		     minor(st.st_rdev)) < 0) {
		s->oom = true;
		return -1;
	}
	e = fvec_add(&s->inode, &k, what, false);
	free(what);
	if (!e) {
		s->oom = true;
		return -1;
	}
	e->v = *r;
	return 0;
}

static int add_chain(struct cstate *s, uint32_t dev, uint64_t ino, uint64_t hash, uint32_t m,
		     const struct sbx_file_rule *r, const char *what, const char *anchor_path)
{
	struct sbx_chain_key k = {
		.policy_id = s->policy_id, .dev = dev, .ino = ino, .hash = hash, .m = m,
	};
	struct fent *e = fvec_add(&s->chain, &k, what, false);
	struct sbx_file_rule anchor = { .chain_mask = (uint8_t)(1u << (m - 1)) };
	char *label = NULL;

	if (!e) {
		s->oom = true;
		return -1;
	}
	e->v = *r;
	e->v.chain_mask = 0;
	e->v.chain_allow = 0;
	for (int a = 0; a < SBX_ACC_MAX; a++)
		if (r->verdict[a] != SBX_V_NONE && r->verdict[a] < SBX_V_ASK)
			anchor.chain_allow |= SBX_ACCBIT(a);
	if (m > s->out->hdr.max_chain)
		s->out->hdr.max_chain = (uint8_t)m;
	if (asprintf(&label, "%s (anchor)", anchor_path) < 0)
		label = NULL;
	if (!label) {
		s->oom = true;
		return -1;
	}
	add_inode(s, dev, ino, &anchor, label, true, anchor_path);
	free(label);
	return 0;
}

/*
 * Pin every directory from / down to dir (inclusive): a rule is tied to
 * the objects below them, so none of them may be renamed, exchanged or
 * removed while the policy holds (SBX_RULE_PINNED in bpf/files.bpf.c).
 * Renaming a parent of a protected path and putting a copy in its place
 * would otherwise leave the rule on the old objects.
 */
static void pin_ancestors(struct cstate *s, const struct sbx_frule *fr,
			  const struct sbx_path_pat *pat, const char *dir)
{
	struct sbx_file_rule pin = { .pinned = 1 };
	char *p;
	size_t len;

	if (fr->verdict != SBX_V_DENY && fr->verdict != SBX_V_ASK)
		return;
	p = strdup(dir);
	if (!p) {
		s->oom = true;
		return;
	}
	len = strlen(p);
	for (;;) {
		uint32_t dev;
		uint64_t ino;
		char *label = NULL;
		struct path_memo *m = memo_get(s, p);
		int err;

		if (!m)
			break;
		if (m->pinned)
			break;	/* and so are all directories above it */
		err = memo_kident(s, p, &dev, &ino);
		if (err) {
			cerr(s, &pat->pos, "cannot identify %s: %s", p, strerror(-err));
			break;
		}
		m->pinned = true;
		if (asprintf(&label, "%s (pinned)", p) < 0) {
			s->oom = true;
			break;
		}
		add_inode(s, dev, ino, &pin, label, true, p);
		free(label);
		if (!strcmp(p, "/"))
			break;
		while (len > 1 && p[len - 1] != '/')
			len--;
		if (len > 1)
			len--;	/* the slash, unless it is the root */
		p[len] = 0;
	}
	free(p);
}

static int add_hl_candidate(struct cstate *s, const char *path, uint8_t access)
{
	if (!SBX_GROW(s->hl, s->cap_hl, s->n_hl + 1, 16))
		return -1;
	s->hl[s->n_hl].path = strdup(path);
	if (!s->hl[s->n_hl].path)
		return -1;
	s->hl[s->n_hl].access = access;
	s->n_hl++;
	return 0;
}

static int cmp_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* what the hard-link scans need of an entry */
struct scan_st {
	mode_t mode;
	nlink_t nlink;
	uint64_t ino;
	uint64_t mnt_id;	/* stay on one mount (st_dev lies on overlayfs) */
	dev_t dev;
	bool has_mnt;
};

/*
 * statx where it works; lstat where statx is refused (a container's
 * seccomp profile says EPERM): a scan that gave up on the refusal found
 * no link, and a key's second name kept the rights of its place.
 * -errno where the entry cannot be reached at all.
 */
static int scan_stat(const char *path, struct scan_st *o)
{
	struct statx sx;
	struct stat st;

	if (!statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW,
		   STATX_TYPE | STATX_NLINK | STATX_INO | STATX_MNT_ID, &sx) &&
	    (sx.stx_mask & STATX_TYPE) && (sx.stx_mask & STATX_NLINK)) {
		*o = (struct scan_st){ .mode = sx.stx_mode, .nlink = sx.stx_nlink, .ino = sx.stx_ino,
				       .mnt_id = sx.stx_mnt_id,
				       .dev = makedev(sx.stx_dev_major, sx.stx_dev_minor),
				       .has_mnt = sx.stx_mask & STATX_MNT_ID };
		return 0;
	}
	if (lstat(path, &st))
		return -errno;
	*o = (struct scan_st){ .mode = st.st_mode, .nlink = st.st_nlink, .ino = st.st_ino,
			       .dev = st.st_dev };
	return 0;
}

/* Is e on the scanned directory top's mount? Without mount ids, a
 * directory by its device (overlayfs gives its directories its own) and a
 * file always: one more candidate is one more inode rule, never one less */
static bool scan_same_mount(const struct scan_st *top, const struct scan_st *e)
{
	if (top->has_mnt && e->has_mnt)
		return top->mnt_id == e->mnt_id;
	return !S_ISDIR(e->mode) || top->dev == e->dev;
}

struct scan {
	struct cstate *s;
	struct scan_st top;	/* the denied directory's */
	size_t seen, max;
	uint8_t access;
	bool truncated;
};

/*
 * Regular files with more than one link below a denied directory: a link
 * made before the session elsewhere must stay covered, so they get inode
 * entries. Same file system only, bounded in depth and entries, sorted.
 */
static void scan_dir(struct scan *sc, const char *dir, int depth)
{
	struct dirent **ents = NULL;
	int n;

	if (depth > SBX_HARDLINK_SCAN_DEPTH) {
		sc->truncated = true;
		return;
	}
	n = scandir(dir, &ents, NULL, cmp_name);
	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		char *child = NULL;
		struct scan_st st;

		if (!strcmp(nm, ".") || !strcmp(nm, "..") || sc->truncated)
			goto next;
		if (++sc->seen > sc->max) {
			sc->truncated = true;
			goto next;
		}
		if (asprintf(&child, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", nm) < 0) {
			child = NULL;
			goto next;
		}
		if (scan_stat(child, &st) || !scan_same_mount(&sc->top, &st))
			goto next;
		if (S_ISDIR(st.mode))
			scan_dir(sc, child, depth + 1);
		else if (S_ISREG(st.mode) && st.nlink > 1)
			if (add_hl_candidate(sc->s, child, sc->access))
				sc->s->oom = true;
next:
		free(child);
		free(ents[i]);
	}
	free(ents);
}

static char *base_of(const char *path)
{
	const char *sl = strrchr(path, '/');

	return strdup(sl ? sl + 1 : path);
}

static char *parent_of(const char *path)
{
	const char *sl = strrchr(path, '/');

	if (!sl || sl == path)
		return strdup("/");
	return strndup(path, (size_t)(sl - path));
}

static void compile_anchored(struct cstate *s, const struct sbx_frule *fr,
			     const struct sbx_path_pat *pat)
{
	struct sbx_file_rule r = { 0 };
	char *cur = strdup(pat->text), *real = NULL;
	char *missing[SBX_CHAIN_MAX];
	size_t m = 0, total = 0;
	uint32_t dev;
	uint64_t ino;
	int err;

	set_rule(&r, fr->access, fr->verdict, fr->id);
	if (!cur) {
		s->oom = true;
		return;
	}
	/* the longest existing prefix, resolved; the rest are missing names,
	 * collected bottom-up into missing[SBX_CHAIN_MAX - total] */
	for (;;) {
		char *sl;

		real = memo_realpath(s, cur);
		if (real)
			break;
		if (s->oom)
			goto out;
		if (errno != ENOENT && errno != ENOTDIR) {
			cerr(s, &pat->pos, "cannot resolve %s: %s", cur, strerror(errno));
			goto out;
		}
		sl = strrchr(cur, '/');
		if (!sl || !strcmp(cur, "/")) {
			cerr(s, &pat->pos, "cannot resolve %s", pat->text);
			goto out;
		}
		if (total < SBX_CHAIN_MAX) {
			missing[SBX_CHAIN_MAX - 1 - total] = strdup(sl + 1);
			m++;
			if (!missing[SBX_CHAIN_MAX - 1 - total]) {
				s->oom = true;
				goto out;
			}
		}
		total++;
		if (sl == cur)
			sl[1] = 0;
		else
			*sl = 0;
	}
	if (total > SBX_CHAIN_MAX) {
		cerr(s, &pat->pos,
		     "too many missing components: %zu names below the nearest existing directory "
		     "%s (at most %d); create part of the path first or shorten it",
		     total, real, SBX_CHAIN_MAX);
		goto out;
	}
	/* top-down order at the start of the array */
	memmove(missing, missing + SBX_CHAIN_MAX - m, m * sizeof(missing[0]));
	err = memo_kident(s, real, &dev, &ino);
	if (err) {
		cerr(s, &pat->pos, "cannot identify %s: %s", real, strerror(-err));
		goto out;
	}
	if (m == 0) {
		char *label = NULL;

		if (strcmp(real, pat->text)) {
			if (asprintf(&label, "%s -> %s", pat->text, real) < 0)
				label = NULL;
		} else {
			label = strdup(real);
		}
		if (!label) {
			s->oom = true;
			goto out;
		}
		add_inode(s, dev, ino, &r, label, false, real);
		add_chr(s, real, &r, label);
		if (strcmp(real, "/")) {
			/* the name under its parent too: an atomically replaced
			 * file (new inode) stays covered */
			char *par = parent_of(real), *base = base_of(real);
			const char *names[1] = { base };
			uint32_t pdev;
			uint64_t pino;

			if (!par || !base) {
				s->oom = true;
			} else if ((err = memo_kident(s, par, &pdev, &pino))) {
				cerr(s, &pat->pos, "cannot identify %s: %s", par, strerror(-err));
			} else {
				add_chain(s, pdev, pino, sbx_hash_chain(names, 1), 1, &r, label, par);
				pin_ancestors(s, fr, pat, par);
			}
			free(par);
			free(base);
		}
		free(label);
		struct scan_st top;
		const struct path_memo *rm = memo_get(s, real);

		/* only a directory is scanned; the memo knows most types already */
		if ((fr->verdict == SBX_V_DENY || fr->verdict == SBX_V_ASK) && !s->p->no_hardlink_scan &&
		    rm && (!rm->mode || S_ISDIR(rm->mode)) &&
		    !scan_stat(real, &top) && S_ISDIR(top.mode)) {
			struct scan sc = {
				.s = s, .top = top, .max = s->p->hardlink_scan_max,
				.access = fr->access,
			};

			scan_dir(&sc, real, 1);
			{
				char **v = realloc(s->out->scan_dirs,
						   (s->out->n_scan_dirs + 1) * sizeof(*v));

				if (!v || !(v[s->out->n_scan_dirs] = strdup(real))) {
					s->oom = true;
					if (v)
						s->out->scan_dirs = v;
				} else {
					s->out->scan_dirs = v;
					s->out->n_scan_dirs++;
				}
			}
			if (sc.truncated)
				cwarn(s, &pat->pos,
				      "stopped looking for hard links below %s after %zu entries or %d "
				      "levels: files linked from elsewhere beyond that are covered only "
				      "through this path", real, sc.max, SBX_HARDLINK_SCAN_DEPTH);
		}
	} else {
		char *label = NULL;

		if (asprintf(&label, "%s (missing below %s)", pat->text, real) < 0) {
			s->oom = true;
			goto out;
		}
		add_chain(s, dev, ino, sbx_hash_chain((const char *const *)missing, m),
			  (uint32_t)m, &r, label, real);
		free(label);
		pin_ancestors(s, fr, pat, real);
	}
out:
	/* before the memmove the names sit at the end of the array */
	if (total > SBX_CHAIN_MAX || !real)
		for (size_t i = 0; i < m; i++)
			free(missing[SBX_CHAIN_MAX - 1 - i]);
	else
		for (size_t i = 0; i < m; i++)
			free(missing[i]);
	free(real);
	free(cur);
}

static void compile_name(struct cstate *s, const struct sbx_frule *fr,
			 const struct sbx_path_pat *pat)
{
	struct sbx_name_key k = { .policy_id = s->policy_id };
	struct sbx_policy_hdr *h = &s->out->hdr;
	size_t len = strlen(pat->text);
	struct fent *e;
	char *label = NULL;

	switch (pat->shape) {
	case SBX_PAT_NAME_EXACT:
		k.kind = SBX_NAME_EXACT;
		k.len = len <= SBX_GLOB_LIT_MAX ? (uint8_t)len : 0;
		k.hash = sbx_hash_name(pat->text, len);
		h->exact_len_mask |= 1ULL << k.len;
		label = strdup(pat->text);
		break;
	case SBX_PAT_NAME_PREFIX:
		k.kind = SBX_NAME_PREFIX;
		k.len = (uint8_t)len;
		k.hash = sbx_hash_name(pat->text, len);
		h->prefix_len_mask |= 1ULL << len;
		if (asprintf(&label, "%s*", pat->text) < 0)
			label = NULL;
		break;
	case SBX_PAT_ABSTRACT:
		k.kind = SBX_NAME_ABSTRACT;
		k.len = 0;
		k.hash = sbx_hash_name(pat->text, len);
		if (asprintf(&label, "@%s", pat->text) < 0)
			label = NULL;
		break;
	case SBX_PAT_ABSTRACT_PREFIX:
		k.kind = SBX_NAME_ABSTRACT_PREFIX;
		k.len = (uint8_t)len;
		k.hash = sbx_hash_name(pat->text, len);
		h->abstract_len_mask |= 1ULL << len;
		if (asprintf(&label, "@%s*", pat->text) < 0)
			label = NULL;
		break;
	default:
		k.kind = SBX_NAME_SUFFIX;
		k.len = (uint8_t)len;
		k.hash = sbx_hash_suffix(pat->text, len);
		h->suffix_len_mask |= 1ULL << len;
		if (asprintf(&label, "*%s", pat->text) < 0)
			label = NULL;
		break;
	}
	if (!label) {
		s->oom = true;
		return;
	}
	e = fvec_add(&s->name, &k, label, false);
	free(label);
	if (!e) {
		s->oom = true;
		return;
	}
	set_rule(&e->v, fr->access, fr->verdict, fr->id);
}

/*
 * network.reserved_ports and network.inbound_ports, and network.inbound at
 * port 0 (always written: the kernel refuses outside clients when it finds
 * none). They ride in the name map as SBX_NAME_PORT entries, one per
 * port, so that a port is one lookup in the kernel and a policy's entries
 * come and go with its other name entries.
 */
static void compile_ports(struct cstate *s)
{
	const struct sbx_policy *p = s->p;
	struct sbx_name_key k = { .policy_id = s->policy_id, .kind = SBX_NAME_PORT };
	struct fent *e;

	e = fvec_add(&s->name, &k, "inbound", false);
	if (!e) {
		s->oom = true;
		return;
	}
	e->v.verdict[SBX_PORT_INBOUND] = p->inbound_rule ? p->inbound_verdict : SBX_V_DENY;
	e->v.rule_id[SBX_PORT_INBOUND] = p->inbound_rule ? p->inbound_rule : SBX_RULE_INBOUND;
	for (int kind = 0; kind < 2; kind++) {
		const struct sbx_port_range *r = kind ? p->inbound_ports : p->reserved;
		size_t n = kind ? p->n_inbound_ports : p->n_reserved;

		for (size_t i = 0; i < n; i++) {
			for (uint32_t port = r[i].lo; port <= r[i].hi && port; port++) {
				char label[32];

				k.hash = port;
				snprintf(label, sizeof(label), "port %u", port);
				e = fvec_add(&s->name, &k, label, false);
				if (!e) {
					s->oom = true;
					return;
				}
				if (kind) {
					e->v.verdict[SBX_PORT_INBOUND] = SBX_V_ALLOW;
					e->v.rule_id[SBX_PORT_INBOUND] = SBX_RULE_INBOUND_PORT;
				} else {
					e->v.verdict[SBX_PORT_BIND] = SBX_V_DENY;
					e->v.rule_id[SBX_PORT_BIND] = SBX_RULE_RESERVED_PORT;
				}
			}
		}
	}
}

static int cmp_hl(const void *a, const void *b)
{
	const struct hl_cand *x = a, *y = b;

	return strcmp(x->path, y->path);
}

static void copy_files_out(struct cstate *s);

/*
 * Second pass for hard links: each candidate gets an inode entry carrying
 * what the policy decides for the candidate's own path, so that another
 * link to the same inode is decided the same way. These entries are weak:
 * a rule naming the same inode directly keeps its verdicts.
 */
static void compile_hardlinks(struct cstate *s)
{
	struct fvec weak = { .klen = sizeof(struct sbx_inode_key) };
	size_t o = 0;

	if (!s->n_hl)
		return;
	qsort(s->hl, s->n_hl, sizeof(s->hl[0]), cmp_hl);
	for (size_t i = 1; i < s->n_hl; i++) {
		if (!strcmp(s->hl[o].path, s->hl[i].path)) {
			s->hl[o].access |= s->hl[i].access;
			free(s->hl[i].path);
			continue;
		}
		s->hl[++o] = s->hl[i];
	}
	s->n_hl = o + 1;
	/* decide against the direct entries alone */
	copy_files_out(s);
	for (size_t i = 0; i < s->n_hl && !s->oom; i++) {
		struct sbx_file_rule r = { 0 };
		bool any = false;
		uint32_t dev;
		uint64_t ino;

		for (int a = 0; a < SBX_ACC_MAX; a++) {
			struct sbx_decision dd;

			if (!(s->hl[i].access & SBX_ACCBIT(a)))
				continue;
			if (sbx_decide_path_policy(s->out, s->hl[i].path, a, &dd))
				continue;
			if (dd.verdict == SBX_V_DENY || dd.verdict == SBX_V_ASK) {
				r.verdict[a] = dd.verdict;
				r.rule_id[a] = dd.rule_id;
				any = true;
			}
		}
		if (!any || sbx_kident(s->hl[i].path, false, &dev, &ino))
			continue;
		{
			struct sbx_inode_key k = { .policy_id = s->policy_id, .dev = dev, .ino = ino };
			char *label = NULL;
			struct fent *e;

			if (asprintf(&label, "%s (hard link)", s->hl[i].path) < 0) {
				s->oom = true;
				break;
			}
			e = fvec_add(&weak, &k, label, false);
			free(label);
			if (!e) {
				s->oom = true;
				break;
			}
			e->v = r;
			/* the file's other names are the landlock tier's plan's to
			 * grant by place, so its program decides reads and execs by
			 * inode as well (bpf/files.bpf.c) */
			if (r.verdict[SBX_ACC_READ] || r.verdict[SBX_ACC_EXEC])
				s->out->hdr.flags |= SBX_PF_DECIDE_OPENS;
		}
	}
	fvec_finish(&weak);
	/* merge: only classes that no direct rule set */
	for (size_t i = 0; i < weak.n; i++) {
		struct fent *w = &weak.v[i];
		struct fent *d = NULL;
		size_t lo = 0, hi = s->inode.n;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			int c = memcmp(s->inode.v[mid].key, w->key, s->inode.klen);

			if (!c) {
				d = &s->inode.v[mid];
				break;
			}
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (d) {
			for (int a = 0; a < SBX_ACC_MAX; a++)
				if (d->v.verdict[a] == SBX_V_NONE) {
					d->v.verdict[a] = w->v.verdict[a];
					d->v.rule_id[a] = w->v.rule_id[a];
				}
			continue;
		}
		if (!fvec_add(&s->inode, w->key, w->what, false)) {
			s->oom = true;
			break;
		}
		s->inode.v[s->inode.n - 1].v = w->v;
	}
	fvec_free(&weak);
	fvec_finish(&s->inode);
}


/* ---- the pass ------------------------------------------------------------------------ */

void compile_files(struct cstate *s)
{
	const struct sbx_policy *p = s->p;
	struct sbx_policy_hdr *h = &s->out->hdr;

	for (size_t i = 0; i < p->n_frules && !s->oom; i++) {
		const struct sbx_frule *fr = &p->frules[i];

		for (size_t j = 0; j < fr->n_pats; j++) {
			const struct sbx_path_pat *pat = &fr->pats[j];

			switch (pat->shape) {
			case SBX_PAT_ANCHORED:
				compile_anchored(s, fr, pat);
				break;
			case SBX_PAT_PROC:
				h->flags |= SBX_PF_PROC_OTHERS;
				if (fr->verdict > h->proc_verdict)
					h->proc_verdict = fr->verdict;
				break;
			default:
				compile_name(s, fr, pat);
				break;
			}
		}
	}
	if (!s->oom)
		compile_ports(s);
	if (!s->oom)
		copy_files_out(s);
	if (!s->oom && !s->err)
		compile_hardlinks(s);
	if (!s->oom)
		copy_files_out(s);
	finish_idents(s->out);
}

void compile_files_free(struct cstate *s)
{
	fvec_free(&s->inode);
	fvec_free(&s->chain);
	fvec_free(&s->name);
	for (size_t i = 0; i < s->n_hl; i++)
		free(s->hl[i].path);
	free(s->hl);
	tdestroy(s->paths, memo_free);
}

/* ---- output ---------------------------------------------------------------------------- */

void free_files_out(struct sbx_compiled *c)
{
	for (size_t i = 0; i < c->n_inode; i++)
		free(c->inode[i].what);
	free(c->inode);
	for (size_t i = 0; i < c->n_chain; i++)
		free(c->chain[i].what);
	free(c->chain);
	for (size_t i = 0; i < c->n_name; i++)
		free(c->name[i].what);
	free(c->name);
	c->inode = NULL;
	c->chain = NULL;
	c->name = NULL;
	c->n_inode = c->n_chain = c->n_name = 0;
}

/* Copy the (finished) file vectors into the output arrays. */
static void copy_files_out(struct cstate *s)
{
	struct sbx_compiled *c = s->out;

	free_files_out(c);
	fvec_finish(&s->inode);
	fvec_finish(&s->chain);
	fvec_finish(&s->name);
	c->inode = calloc(s->inode.n + 1, sizeof(*c->inode));
	c->chain = calloc(s->chain.n + 1, sizeof(*c->chain));
	c->name = calloc(s->name.n + 1, sizeof(*c->name));
	if (!c->inode || !c->chain || !c->name) {
		s->oom = true;
		return;
	}
	for (size_t i = 0; i < s->inode.n; i++) {
		memcpy(&c->inode[i].k, s->inode.v[i].key, sizeof(c->inode[i].k));
		c->inode[i].v = s->inode.v[i].v;
		c->inode[i].what = strdup(s->inode.v[i].what);
		c->n_inode++;
	}
	for (size_t i = 0; i < s->chain.n; i++) {
		memcpy(&c->chain[i].k, s->chain.v[i].key, sizeof(c->chain[i].k));
		c->chain[i].v = s->chain.v[i].v;
		c->chain[i].what = strdup(s->chain.v[i].what);
		c->n_chain++;
	}
	for (size_t i = 0; i < s->name.n; i++) {
		memcpy(&c->name[i].k, s->name.v[i].key, sizeof(c->name[i].k));
		c->name[i].v = s->name.v[i].v;
		c->name[i].what = strdup(s->name.v[i].what);
		c->n_name++;
	}
}

static void digest_dir(const char *dir, const struct scan_st *top, int depth, size_t *seen,
		       uint64_t *h)
{
	struct dirent **ents = NULL;
	int n;

	if (depth > SBX_HARDLINK_SCAN_DEPTH)
		return;
	n = scandir(dir, &ents, NULL, cmp_name);
	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		char *child = NULL;
		struct scan_st st;

		if (strcmp(nm, ".") && strcmp(nm, "..") && ++*seen <= SBX_HARDLINK_SCAN_MAX &&
		    asprintf(&child, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", nm) >= 0 &&
		    !scan_stat(child, &st) && scan_same_mount(top, &st)) {
			if (S_ISDIR(st.mode))
				digest_dir(child, top, depth + 1, seen, h);
			else if (S_ISREG(st.mode) && st.nlink > 1)
				*h = sbx_mix64(sbx_mix64(*h ^ st.ino) ^ st.nlink);
		}
		free(child);
		free(ents[i]);
	}
	free(ents);
}

uint64_t sbx_hardlink_digest(char *const *dirs, size_t n)
{
	uint64_t h = SBX_CHAIN_SEED;

	for (size_t i = 0; i < n; i++) {
		struct scan_st top;
		size_t seen = 0;

		h = sbx_mix64(h ^ sbx_hash_name(dirs[i], strlen(dirs[i])));
		if (scan_stat(dirs[i], &top))
			continue;
		digest_dir(dirs[i], &top, 1, &seen, &h);
	}
	return h;
}
