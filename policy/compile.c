// SPDX-License-Identifier: GPL-2.0
/*
 * compile.c - turn a loaded policy into the kernel's map entries.
 *
 * Files: absolute paths become inode entries (existing objects, by kernel
 * identity) or chain entries (the nearest existing ancestor plus the
 * hash of the missing names), basename patterns become name entries.
 * Network: CIDRs and resolved hosts become LPM entries whose values carry
 * their own port rules followed by those of every covering prefix.
 *
 * The result is sorted by key bytes and unique, and is the same for any
 * order of the rules: every merge below is "larger verdict, then smaller
 * rule id", and rule ids do not depend on rule order (see parse.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <search.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#define SBX_POLICY_INTERNAL
#include "policy/policy.h"

/* ---- file entries while building ------------------------------------------------ */

struct fent {
	uint8_t key[32];	/* sbx_inode_key, sbx_chain_key or sbx_name_key */
	struct sbx_file_rule v;
	char *what;
	bool anchor;		/* made only to carry a chain_mask */
};

struct fvec {
	struct fent *v;
	size_t n, cap;
	size_t klen;
};

static struct fent *fvec_add(struct fvec *f, const void *key, const char *what, bool anchor)
{
	struct fent *e;

	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct fent *v = realloc(f->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		f->v = v;
		f->cap = cap;
	}
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

/* ---- the compile state ------------------------------------------------------------ */

struct hl_cand {
	char *path;
	uint8_t access;		/* classes for which a deny/ask dir rule scanned it */
};

struct cstate {
	const struct sbx_policy *p;
	struct sbx_diags *d;
	uint32_t policy_id;
	struct sbx_compiled *out;
	struct fvec inode, chain, name;
	struct hl_cand *hl;
	size_t n_hl, cap_hl;
	void *paths;	/* tsearch tree of struct path_memo */
	bool err;
	bool oom;
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
 * name whose parent is known takes one lstat. Anything unusual (a
 * symlink as the last name, "." or "..", no parent) goes to realpath()
 * itself, so the result and its errno are always realpath()'s.
 */
static char *memo_realpath(struct cstate *s, const char *path)
{
	const char *sl = strrchr(path, '/');
	struct path_memo *m;
	struct stat st;
	char *par, *cand;
	int err;

	if (path[0] != '/' || !sl || sl == path || !sl[1] || has_dot_component(path))
		return realpath(path, NULL);
	par = strndup(path, (size_t)(sl - path));
	m = par ? memo_get(s, par) : NULL;
	free(par);
	if (!m) {
		s->oom = true;
		errno = ENOMEM;
		return NULL;
	}
	if (m->real_err == -1) {
		m->real = memo_realpath(s, m->path);	/* its parent is remembered too */
		m->real_err = m->real ? 0 : errno;
	}
	if (!m->real) {
		/* below a missing directory or a file: realpath() fails the
		 * same way for every name there */
		errno = m->real_err;
		return NULL;
	}
	if (asprintf(&cand, "%s%s", strcmp(m->real, "/") ? m->real : "", sl) < 0) {
		s->oom = true;
		errno = ENOMEM;
		return NULL;
	}
	if (lstat(cand, &st)) {
		err = errno;
		free(cand);
		errno = err;
		return NULL;
	}
	if (S_ISLNK(st.st_mode)) {
		char *r = realpath(cand, NULL);

		err = errno;
		free(cand);
		errno = err;
		return r;
	}
	return cand;
}

static void cerr(struct cstate *s, const struct sbx_srcpos *pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cerr(struct cstate *s, const struct sbx_srcpos *pos, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sbx_diag_at(s->d, SBX_DIAG_ERROR, pos, "%s", msg);
	s->err = true;
}

static void cwarn(struct cstate *s, const struct sbx_srcpos *pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cwarn(struct cstate *s, const struct sbx_srcpos *pos, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sbx_diag_at(s->d, SBX_DIAG_WARNING, pos, "%s", msg);
}

static int add_inode(struct cstate *s, uint32_t dev, uint64_t ino, const struct sbx_file_rule *r,
		     const char *what, bool anchor)
{
	struct sbx_inode_key k = { .policy_id = s->policy_id, .dev = dev, .ino = ino };
	struct fent *e = fvec_add(&s->inode, &k, what, anchor);

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
	if (m > s->out->hdr.max_chain)
		s->out->hdr.max_chain = (uint8_t)m;
	if (asprintf(&label, "%s (anchor)", anchor_path) < 0)
		label = NULL;
	if (!label) {
		s->oom = true;
		return -1;
	}
	add_inode(s, dev, ino, &anchor, label, true);
	free(label);
	return 0;
}

static int add_hl_candidate(struct cstate *s, const char *path, uint8_t access)
{
	if (s->n_hl == s->cap_hl) {
		size_t cap = s->cap_hl ? s->cap_hl * 2 : 16;
		struct hl_cand *v = realloc(s->hl, cap * sizeof(*v));

		if (!v)
			return -1;
		s->hl = v;
		s->cap_hl = cap;
	}
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

struct scan {
	struct cstate *s;
	uint64_t mnt_id;	/* stay on one mount (st_dev lies on overlayfs) */
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
		struct statx st;

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
		if (statx(AT_FDCWD, child, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_NLINK | STATX_MNT_ID,
			  &st) || !(st.stx_mask & STATX_MNT_ID) || st.stx_mnt_id != sc->mnt_id)
			goto next;
		if (S_ISDIR(st.stx_mode))
			scan_dir(sc, child, depth + 1);
		else if (S_ISREG(st.stx_mode) && st.stx_nlink > 1)
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
		add_inode(s, dev, ino, &r, label, false);
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
			}
			free(par);
			free(base);
		}
		free(label);
		struct statx stx;

		if ((fr->verdict == SBX_V_DENY || fr->verdict == SBX_V_ASK) &&
		    !statx(AT_FDCWD, real, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MNT_ID, &stx) &&
		    (stx.stx_mask & STATX_MNT_ID) && S_ISDIR(stx.stx_mode)) {
			struct scan sc = {
				.s = s, .mnt_id = stx.stx_mnt_id, .max = s->p->hardlink_scan_max,
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

/* ---- network ------------------------------------------------------------------------ */

struct nent {
	int family;
	uint8_t bits;
	uint8_t addr[16];
	uint32_t first_id;		/* for the error position: smallest rule id */
	const struct sbx_srcpos *pos;
	char *what;
	struct sbx_net_port_rule pr;
};

struct nvec {
	struct nent *v;
	size_t n, cap;
};

static int nvec_add(struct nvec *nv, int family, const uint8_t *addr, uint8_t bits,
		    const struct sbx_nrule *nr, const struct sbx_port_range *pr,
		    const struct sbx_srcpos *pos, const char *what)
{
	struct nent *e;

	if (nv->n == nv->cap) {
		size_t cap = nv->cap ? nv->cap * 2 : 64;
		struct nent *v = realloc(nv->v, cap * sizeof(*v));

		if (!v)
			return -1;
		nv->v = v;
		nv->cap = cap;
	}
	e = &nv->v[nv->n];
	memset(e, 0, sizeof(*e));
	e->family = family;
	e->bits = bits;
	memcpy(e->addr, addr, family == AF_INET ? 4 : 16);
	e->first_id = nr->id;
	e->pos = pos;
	e->what = strdup(what);
	if (!e->what)
		return -1;
	e->pr.port_lo = pr ? pr->lo : 0;
	e->pr.port_hi = pr ? pr->hi : 65535;
	e->pr.verdict = nr->verdict;
	e->pr.proto = nr->proto;
	e->pr.rule_id = nr->id;
	nv->n++;
	return 0;
}

static int add_net_addr(struct nvec *nv, int family, const uint8_t *addr, uint8_t bits,
			const struct sbx_nrule *nr, const struct sbx_srcpos *pos, const char *what)
{
	uint8_t a[16] = { 0 };
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memcpy(a, addr, family == AF_INET ? 4 : 16);
	if (family == AF_INET6 && bits >= 96 && !memcmp(a, mapped, 12)) {
		memmove(a, a + 12, 4);
		memset(a + 4, 0, 12);
		family = AF_INET;
		bits -= 96;
	}
	if (!nr->n_ports)
		return nvec_add(nv, family, a, bits, nr, NULL, pos, what);
	for (size_t i = 0; i < nr->n_ports; i++)
		if (nvec_add(nv, family, a, bits, nr, &nr->ports[i], pos, what))
			return -1;
	return 0;
}

int sbx_resolve_system(const char *host, struct sbx_addr **out, size_t *n, const char **why)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	size_t cnt = 0;
	int rc;

	*out = NULL;
	*n = 0;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc) {
		if (why)
			*why = gai_strerror(rc);
		return -1;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
		cnt++;
	*out = calloc(cnt ? cnt : 1, sizeof(**out));
	if (!*out) {
		freeaddrinfo(res);
		if (why)
			*why = strerror(ENOMEM);
		return -1;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		struct sbx_addr *a = &(*out)[*n];

		if (ai->ai_family == AF_INET) {
			a->family = AF_INET;
			memcpy(a->addr, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
		} else if (ai->ai_family == AF_INET6) {
			a->family = AF_INET6;
			memcpy(a->addr, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		(*n)++;
	}
	freeaddrinfo(res);
	return 0;
}

static int resolve_host(const struct sbx_policy *p, const char *host, struct sbx_addr **out,
			size_t *n, char *why, size_t whylen)
{
	const char *w = NULL;
	int rc;

	if (p->resolve) {
		*out = NULL;
		*n = 0;
		rc = p->resolve(host, out, n, p->resolve_ctx);
		if (rc)
			snprintf(why, whylen, "%s", strerror(rc < 0 ? -rc : rc));
		return rc;
	}
	rc = sbx_resolve_system(host, out, n, &w);
	if (rc)
		snprintf(why, whylen, "%s", w ? w : "cannot resolve");
	return rc;
}

static void compile_host(struct cstate *s, struct nvec *nv, const struct sbx_nrule *nr,
			 const struct sbx_net_item *it)
{
	struct sbx_addr *addrs = NULL;
	size_t n = 0;
	char why[128] = "no addresses";

	if (resolve_host(s->p, it->text, &addrs, &n, why, sizeof(why)) || n == 0) {
		cwarn(s, &it->pos, "host '%s' did not resolve (%s): this rule matches nothing for "
		      "it until the policy is compiled again", it->text, why);
		free(addrs);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char ip[INET6_ADDRSTRLEN] = "?", *label = NULL;
		int fam = addrs[i].family;

		if (fam != AF_INET && fam != AF_INET6)
			continue;
		inet_ntop(fam, addrs[i].addr, ip, sizeof(ip));
		if (asprintf(&label, "%s/%d (%s)", ip, fam == AF_INET ? 32 : 128, it->text) < 0) {
			s->oom = true;
			break;
		}
		if (add_net_addr(nv, fam, addrs[i].addr, fam == AF_INET ? 32 : 128, nr,
				 &it->pos, label))
			s->oom = true;
		free(label);
	}
	free(addrs);
}

static void compile_resolvers(struct cstate *s, struct nvec *nv, const struct sbx_nrule *nr,
			      const struct sbx_net_item *it)
{
	FILE *f = fopen(s->p->resolv_conf, "re");
	char *line = NULL;
	size_t cap = 0, found = 0;

	if (!f) {
		cwarn(s, &it->pos, "cannot read %s (%s): 'resolvers' matches nothing",
		      s->p->resolv_conf, strerror(errno));
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		char ns[128], *pct, *label = NULL;
		uint8_t a[16] = { 0 };
		int fam;

		if (sscanf(line, " nameserver %127s", ns) != 1)
			continue;
		if ((pct = strchr(ns, '%')))
			*pct = 0;	/* fe80::1%eth0: the scope is not part of the address */
		if (inet_pton(AF_INET, ns, a) == 1)
			fam = AF_INET;
		else if (inet_pton(AF_INET6, ns, a) == 1)
			fam = AF_INET6;
		else
			continue;
		if (asprintf(&label, "%s/%d (resolvers)", ns, fam == AF_INET ? 32 : 128) < 0) {
			s->oom = true;
			break;
		}
		if (add_net_addr(nv, fam, a, fam == AF_INET ? 32 : 128, nr, &it->pos, label))
			s->oom = true;
		free(label);
		found++;
	}
	free(line);
	fclose(f);
	if (!found)
		cwarn(s, &it->pos, "no nameserver in %s: 'resolvers' matches nothing",
		      s->p->resolv_conf);
}

static int cmp_nent(const void *a, const void *b)
{
	const struct nent *x = a, *y = b;
	int r;

	if (x->family != y->family)
		return x->family - y->family;
	r = memcmp(x->addr, y->addr, 16);
	if (r)
		return r;
	if (x->bits != y->bits)
		return (int)x->bits - (int)y->bits;
	if (x->first_id != y->first_id)
		return x->first_id < y->first_id ? -1 : 1;
	return strcmp(x->what, y->what);
}

/* A port rule with the prefix length it came from, for sorting. */
struct prule {
	uint8_t bits;
	struct sbx_net_port_rule r;
};

static int cmp_prule(const void *a, const void *b)
{
	const struct prule *x = a, *y = b;
	unsigned wx = (unsigned)x->r.port_hi - x->r.port_lo, wy = (unsigned)y->r.port_hi - y->r.port_lo;

	if (x->bits != y->bits)
		return x->bits > y->bits ? -1 : 1;		/* longer prefix first */
	if (wx != wy)
		return wx < wy ? -1 : 1;			/* narrower ports first */
	if ((x->r.proto != 0) != (y->r.proto != 0))
		return x->r.proto ? -1 : 1;			/* tcp/udp before any */
	if (x->r.verdict != y->r.verdict)
		return x->r.verdict > y->r.verdict ? -1 : 1;	/* deny wins ties */
	if (x->r.rule_id != y->r.rule_id)
		return x->r.rule_id < y->r.rule_id ? -1 : 1;
	if (x->r.port_lo != y->r.port_lo)
		return x->r.port_lo < y->r.port_lo ? -1 : 1;
	return (int)x->r.proto - (int)y->r.proto;
}

static bool covers(const struct nent *outer, const struct nent *inner)
{
	int full = outer->bits / 8, rem = outer->bits % 8;

	if (outer->family != inner->family || outer->bits > inner->bits)
		return false;
	if (memcmp(outer->addr, inner->addr, (size_t)full))
		return false;
	if (rem && ((outer->addr[full] ^ inner->addr[full]) & (0xff << (8 - rem))))
		return false;
	return true;
}

static void fmt_cidr(const struct nent *e, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	inet_ntop(e->family, e->addr, ip, sizeof(ip));
	snprintf(buf, len, "%s/%u", ip, e->bits);
}

static void compile_network(struct cstate *s)
{
	const struct sbx_policy *p = s->p;
	struct nvec nv = { 0 };
	struct prule *tmp = NULL;
	size_t *starts = NULL, nprefix = 0;

	for (size_t i = 0; i < p->n_nrules; i++) {
		const struct sbx_nrule *nr = &p->nrules[i];

		for (size_t j = 0; j < nr->n_items; j++) {
			const struct sbx_net_item *it = &nr->items[j];

			if (it->kind == SBX_NI_HOST)
				compile_host(s, &nv, nr, it);
			else if (it->kind == SBX_NI_RESOLVERS)
				compile_resolvers(s, &nv, nr, it);
			else if (add_net_addr(&nv, it->family, it->addr, it->bits, nr, &it->pos,
					      it->text))
				s->oom = true;
			/* labels of CIDRs are the CIDR as written: fine */
		}
	}
	if (!nv.n || s->oom)
		goto out;
	qsort(nv.v, nv.n, sizeof(nv.v[0]), cmp_nent);
	/* prefix groups: [starts[k], starts[k+1]) share family, addr, bits */
	starts = calloc(nv.n + 1, sizeof(*starts));
	tmp = calloc(nv.n, sizeof(*tmp));
	if (!starts || !tmp) {
		s->oom = true;
		goto out;
	}
	for (size_t i = 0; i < nv.n; i++)
		if (i == 0 || nv.v[i].family != nv.v[i - 1].family || nv.v[i].bits != nv.v[i - 1].bits ||
		    memcmp(nv.v[i].addr, nv.v[i - 1].addr, 16))
			starts[nprefix++] = i;
	starts[nprefix] = nv.n;
	for (size_t k = 0; k < nprefix; k++) {
		const struct nent *e = &nv.v[starts[k]];
		size_t nt = 0, kept = 0;
		struct sbx_net_rule val = { 0 };

		/* its own rules and those of every covering prefix */
		for (size_t q = 0; q < nprefix; q++) {
			const struct nent *o = &nv.v[starts[q]];

			if (!covers(o, e))
				continue;
			for (size_t i = starts[q]; i < starts[q + 1]; i++) {
				tmp[nt].bits = o->bits;
				tmp[nt].r = nv.v[i].pr;
				nt++;
			}
		}
		qsort(tmp, nt, sizeof(tmp[0]), cmp_prule);
		/* drop rules that an earlier one shadows: first match wins,
		 * so they could never decide anything */
		for (size_t i = 0; i < nt; i++) {
			bool shadowed = false;

			for (size_t j = 0; j < kept && !shadowed; j++) {
				const struct sbx_net_port_rule *a = &tmp[j].r, *b = &tmp[i].r;

				shadowed = a->port_lo <= b->port_lo && b->port_hi <= a->port_hi &&
					   (a->proto == 0 || a->proto == b->proto);
			}
			if (!shadowed)
				tmp[kept++] = tmp[i];
		}
		if (kept > SBX_NET_PORT_RULES) {
			char cidr[64];

			fmt_cidr(e, cidr, sizeof(cidr));
			cerr(s, e->pos, "too many port rules apply to %s: %zu (its own and those of "
			     "covering networks), at most %d; merge port ranges or use fewer rules "
			     "on overlapping networks", cidr, kept, SBX_NET_PORT_RULES);
			continue;
		}
		val.count = (uint32_t)kept;
		for (size_t i = 0; i < kept; i++)
			val.r[i] = tmp[i].r;
		if (e->family == AF_INET) {
			struct sbx_net4_entry *v = realloc(s->out->net4, (s->out->n_net4 + 1) * sizeof(*v));

			if (!v) {
				s->oom = true;
				break;
			}
			s->out->net4 = v;
			v += s->out->n_net4;
			memset(v, 0, sizeof(*v));
			v->k.prefixlen = 32 + e->bits;
			v->k.policy_id = htonl(s->policy_id);
			memcpy(v->k.addr, e->addr, 4);
			v->v = val;
			v->what = strdup(e->what);
			s->out->n_net4++;
			if (!v->what)
				s->oom = true;
		} else {
			struct sbx_net6_entry *v = realloc(s->out->net6, (s->out->n_net6 + 1) * sizeof(*v));

			if (!v) {
				s->oom = true;
				break;
			}
			s->out->net6 = v;
			v += s->out->n_net6;
			memset(v, 0, sizeof(*v));
			v->k.prefixlen = 32 + e->bits;
			v->k.policy_id = htonl(s->policy_id);
			memcpy(v->k.addr, e->addr, 16);
			v->v = val;
			v->what = strdup(e->what);
			s->out->n_net6++;
			if (!v->what)
				s->oom = true;
		}
	}
out:
	for (size_t i = 0; i < nv.n; i++)
		free(nv.v[i].what);
	free(nv.v);
	free(tmp);
	free(starts);
}

/* ---- output ---------------------------------------------------------------------------- */

static void free_files_out(struct sbx_compiled *c)
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

static int cmp_net4(const void *a, const void *b)
{
	return memcmp(&((const struct sbx_net4_entry *)a)->k, &((const struct sbx_net4_entry *)b)->k,
		      sizeof(struct sbx_net4_key));
}

static int cmp_net6(const void *a, const void *b)
{
	return memcmp(&((const struct sbx_net6_entry *)a)->k, &((const struct sbx_net6_entry *)b)->k,
		      sizeof(struct sbx_net6_key));
}

struct prot {
	struct sbx_protect_key k;
	char *what;
};

static int cmp_prot(const void *a, const void *b)
{
	const struct prot *x = a, *y = b;
	int r = memcmp(&x->k, &y->k, sizeof(x->k));

	return r ? r : strcmp(x->what, y->what);
}

static void compile_protect(struct cstate *s)
{
	const struct sbx_policy *p = s->p;
	struct prot *v = calloc(p->n_sources + 1, sizeof(*v));
	size_t n = 0, o = 0;

	if (!v) {
		s->oom = true;
		return;
	}
	for (size_t i = 0; i < p->n_sources; i++) {
		uint32_t dev;
		uint64_t ino;
		int err = sbx_kident(p->sources[i], true, &dev, &ino);

		if (err) {
			sbx_diag_add(s->d, SBX_DIAG_ERROR, p->sources[i], 0, 0, NULL,
				     "cannot identify the policy file to protect it: %s", strerror(-err));
			s->err = true;
			continue;
		}
		v[n].k.dev = dev;
		v[n].k.ino = ino;
		v[n].what = p->sources[i];
		n++;
	}
	qsort(v, n, sizeof(*v), cmp_prot);
	s->out->protect = calloc(n + 1, sizeof(*s->out->protect));
	s->out->protect_what = calloc(n + 1, sizeof(char *));
	if (!s->out->protect || !s->out->protect_what) {
		s->oom = true;
		free(v);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (o && !memcmp(&v[i].k, &s->out->protect[o - 1], sizeof(v[i].k)))
			continue;
		s->out->protect[o] = v[i].k;
		s->out->protect_what[o] = strdup(v[i].what);
		o++;
	}
	s->out->n_protect = o;
	free(v);
}

void sbx_compiled_free(struct sbx_compiled *c)
{
	if (!c)
		return;
	free_files_out(c);
	for (size_t i = 0; i < c->n_net4; i++)
		free(c->net4[i].what);
	free(c->net4);
	for (size_t i = 0; i < c->n_net6; i++)
		free(c->net6[i].what);
	free(c->net6);
	for (size_t i = 0; i < c->n_protect; i++)
		free(c->protect_what ? c->protect_what[i] : NULL);
	free(c->protect_what);
	free(c->protect);
	for (size_t i = 0; i < c->n_scan_dirs; i++)
		free(c->scan_dirs[i]);
	free(c->scan_dirs);
	memset(c, 0, sizeof(*c));
}

static void digest_dir(const char *dir, uint64_t mnt_id, int depth, size_t *seen, uint64_t *h)
{
	struct dirent **ents = NULL;
	int n;

	if (depth > SBX_HARDLINK_SCAN_DEPTH)
		return;
	n = scandir(dir, &ents, NULL, cmp_name);
	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		char *child = NULL;
		struct statx st;

		if (strcmp(nm, ".") && strcmp(nm, "..") && ++*seen <= SBX_HARDLINK_SCAN_MAX &&
		    asprintf(&child, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", nm) >= 0 &&
		    !statx(AT_FDCWD, child, AT_SYMLINK_NOFOLLOW,
			   STATX_TYPE | STATX_NLINK | STATX_INO | STATX_MNT_ID, &st) &&
		    (st.stx_mask & STATX_MNT_ID) && st.stx_mnt_id == mnt_id) {
			if (S_ISDIR(st.stx_mode))
				digest_dir(child, mnt_id, depth + 1, seen, h);
			else if (S_ISREG(st.stx_mode) && st.stx_nlink > 1)
				*h = sbx_mix64(sbx_mix64(*h ^ st.stx_ino) ^ st.stx_nlink);
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
		struct statx st;
		size_t seen = 0;

		h = sbx_mix64(h ^ sbx_hash_name(dirs[i], strlen(dirs[i])));
		if (statx(AT_FDCWD, dirs[i], AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &st) ||
		    !(st.stx_mask & STATX_MNT_ID))
			continue;
		digest_dir(dirs[i], st.stx_mnt_id, 1, &seen, &h);
	}
	return h;
}

int sbx_policy_compile(const struct sbx_policy *p, uint32_t policy_id,
		       struct sbx_compiled *out, struct sbx_diags *diags)
{
	struct sbx_diags local = { 0 };
	struct cstate s = {
		.p = p, .d = diags ? diags : &local, .policy_id = policy_id, .out = out,
		.inode.klen = sizeof(struct sbx_inode_key),
		.chain.klen = sizeof(struct sbx_chain_key),
		.name.klen = sizeof(struct sbx_name_key),
	};
	struct sbx_policy_hdr *h = &out->hdr;
	size_t diag_from = s.d->n;

	memset(out, 0, sizeof(*out));
	if (!p)
		return -EINVAL;
	h->policy_id = policy_id;
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		h->file_default[a] = p->file_default[a];
		h->file_default_rule[a] = p->file_default_rule[a];
	}
	h->net_default = p->net_default;
	h->net_default_rule = p->net_default_rule;
	h->unix_default = SBX_V_NONE;	/* the kernel falls back to write rules */
	h->flags |= p->sandbox_flags;
	for (size_t i = 0; i < p->n_frules && !s.oom; i++) {
		const struct sbx_frule *fr = &p->frules[i];

		for (size_t j = 0; j < fr->n_pats; j++) {
			const struct sbx_path_pat *pat = &fr->pats[j];

			switch (pat->shape) {
			case SBX_PAT_ANCHORED:
				compile_anchored(&s, fr, pat);
				break;
			case SBX_PAT_PROC:
				h->flags |= SBX_PF_PROC_OTHERS;
				if (fr->verdict > h->proc_verdict)
					h->proc_verdict = fr->verdict;
				break;
			default:
				compile_name(&s, fr, pat);
				break;
			}
		}
	}
	if (!s.oom)
		copy_files_out(&s);
	if (!s.oom && !s.err)
		compile_hardlinks(&s);
	if (!s.oom)
		copy_files_out(&s);
	if (!s.oom)
		compile_network(&s);
	if (!s.oom)
		compile_protect(&s);
	if (out->n_net4)
		qsort(out->net4, out->n_net4, sizeof(out->net4[0]), cmp_net4);
	if (out->n_net6)
		qsort(out->net6, out->n_net6, sizeof(out->net6[0]), cmp_net6);
	fvec_free(&s.inode);
	fvec_free(&s.chain);
	fvec_free(&s.name);
	for (size_t i = 0; i < s.n_hl; i++)
		free(s.hl[i].path);
	free(s.hl);
	tdestroy(s.paths, memo_free);
	if (s.oom)
		sbx_diag_add(s.d, SBX_DIAG_ERROR, NULL, 0, 0, NULL, "out of memory while compiling");
	/* rules were compiled in id order; people read files top-down */
	sbx_diags_sort_from(s.d, diag_from);
	sbx_diags_free(&local);
	if (s.oom || s.err) {
		sbx_compiled_free(out);
		return s.oom ? -ENOMEM : -EINVAL;
	}
	return 0;
}

/* ---- the dump ------------------------------------------------------------------------------ */

static void dump_rule(FILE *f, const struct sbx_file_rule *r)
{
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		fprintf(f, " %s=%s", sbx_access_name(a), sbx_verdict_name(r->verdict[a]));
		if (r->verdict[a] != SBX_V_NONE)
			fprintf(f, "#%u", r->rule_id[a]);
	}
}

static const char *proto_name(uint8_t p)
{
	return p == 6 ? "tcp" : p == 17 ? "udp" : p == 0 ? "any" : "?";
}

static void dump_net(FILE *f, const char *tag, int family, uint32_t prefixlen, const uint8_t *addr,
		     const struct sbx_net_rule *v, const char *what)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family, addr, ip, sizeof(ip));
	fprintf(f, "%s %s/%u rules=%u # %s\n", tag, ip, prefixlen - 32, v->count, what ? what : "");
	for (uint32_t i = 0; i < v->count && i < SBX_NET_PORT_RULES; i++)
		fprintf(f, "  port=%u-%u proto=%s %s#%u\n", v->r[i].port_lo, v->r[i].port_hi,
			proto_name(v->r[i].proto), sbx_verdict_name(v->r[i].verdict), v->r[i].rule_id);
}

#define DEVFMT "%u:%u"
#define DEVARG(d) (unsigned)((d) >> 20), (unsigned)((d) & 0xfffff)

void sbx_compiled_dump(const struct sbx_compiled *c, const struct sbx_policy *p, FILE *f)
{
	const struct sbx_policy_hdr *h = &c->hdr;

	fprintf(f, "# bpfsbx compiled policy (abi %d)\n", SBX_ABI_VERSION);
	fprintf(f, "hdr policy_id=%u flags=0x%x%s proc_verdict=%s max_chain=%u\n", h->policy_id,
		h->flags, h->flags & SBX_PF_PROC_OTHERS ? " (proc_others)" : "",
		sbx_verdict_name(h->proc_verdict), h->max_chain);
	fprintf(f, "hdr file_default");
	for (int a = 0; a < SBX_ACC_MAX; a++)
		fprintf(f, " %s=%s#%u", sbx_access_name(a), sbx_verdict_name(h->file_default[a]),
			h->file_default_rule[a]);
	fprintf(f, " net_default=%s#%u unix_default=%s\n", sbx_verdict_name(h->net_default),
		h->net_default_rule, sbx_verdict_name(h->unix_default));
	fprintf(f, "hdr exact_len_mask=0x%016llx prefix_len_mask=0x%016llx suffix_len_mask=0x%016llx\n",
		(unsigned long long)h->exact_len_mask, (unsigned long long)h->prefix_len_mask,
		(unsigned long long)h->suffix_len_mask);
	for (size_t i = 0; i < c->n_inode; i++) {
		const struct sbx_inode_entry *e = &c->inode[i];

		fprintf(f, "inode dev=" DEVFMT " ino=%llu", DEVARG(e->k.dev), (unsigned long long)e->k.ino);
		dump_rule(f, &e->v);
		fprintf(f, " chain_mask=0x%02x # %s\n", e->v.chain_mask, e->what ? e->what : "");
	}
	for (size_t i = 0; i < c->n_chain; i++) {
		const struct sbx_chain_entry *e = &c->chain[i];

		fprintf(f, "chain dev=" DEVFMT " ino=%llu m=%u hash=0x%016llx", DEVARG(e->k.dev),
			(unsigned long long)e->k.ino, e->k.m, (unsigned long long)e->k.hash);
		dump_rule(f, &e->v);
		fprintf(f, " # %s\n", e->what ? e->what : "");
	}
	for (size_t i = 0; i < c->n_name; i++) {
		const struct sbx_name_entry *e = &c->name[i];
		static const char *const kinds[] = { "exact", "prefix", "suffix" };

		fprintf(f, "name %s len=%u hash=0x%016llx", e->k.kind < 3 ? kinds[e->k.kind] : "?",
			e->k.len, (unsigned long long)e->k.hash);
		dump_rule(f, &e->v);
		fprintf(f, " # %s\n", e->what ? e->what : "");
	}
	for (size_t i = 0; i < c->n_net4; i++)
		dump_net(f, "net4", AF_INET, c->net4[i].k.prefixlen, c->net4[i].k.addr,
			 &c->net4[i].v, c->net4[i].what);
	for (size_t i = 0; i < c->n_net6; i++)
		dump_net(f, "net6", AF_INET6, c->net6[i].k.prefixlen, c->net6[i].k.addr,
			 &c->net6[i].v, c->net6[i].what);
	for (size_t i = 0; i < c->n_protect; i++)
		fprintf(f, "protect dev=" DEVFMT " ino=%llu # %s\n", DEVARG(c->protect[i].dev),
			(unsigned long long)c->protect[i].ino,
			c->protect_what && c->protect_what[i] ? c->protect_what[i] : "");
	if (p) {
		fprintf(f, "# rules\n");
		for (size_t i = 0; i < p->n_rules; i++) {
			const struct sbx_rule_info *r = &p->rules[i];
			static const char *const secs[] = { "files", "network", "commands" };

			fprintf(f, "rule #%u %s %s %s", r->id, secs[r->section],
				sbx_verdict_name(r->verdict), r->pattern ? r->pattern : "");
			if (r->section == SBX_SEC_FILES && !r->is_default) {
				fprintf(f, " access=");
				for (int a = 0, first = 1; a < SBX_ACC_MAX; a++)
					if (r->access & SBX_ACCBIT(a)) {
						fprintf(f, "%s%s", first ? "" : ",", sbx_access_name(a));
						first = 0;
					}
			}
			fprintf(f, "\n");
		}
	}
}
