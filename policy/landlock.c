// SPDX-License-Identifier: GPL-2.0
/*
 * landlock.c - a compiled policy as a Landlock ruleset (policy/landlock.h).
 *
 * The oracle is sbx_decide_path(): every entry the plan grants gets what
 * the BPF-LSM tier decides for it (ask counts as deny), so the two tiers
 * can only differ where Landlock cannot say what the policy says, and
 * there the plan is stricter:
 *  - a directory with a rule anchored below it is expanded into its
 *    entries, and keeps only the rights every entry below it may have; a
 *    name created there later gets only those;
 *  - Landlock checks create, remove and rename on the parent directory
 *    (MAKE_*, REMOVE_*, REFER), so a write-denied entry takes those rights
 *    from its whole directory;
 *  - execve needs READ_FILE as well as EXECUTE.
 * Unless the daemon's programs on security_* decide writes and asks
 * (kernel_decides, bpf/files.bpf.c): then the plan grants what the policy
 * asks for, and a directory keeps its own write rights whatever its
 * entries' (the programs refuse those below it that the policy denies),
 * so that names can be made in the project root beside .sandbox.
 * Landlock's own rule is that a process in a domain cannot ptrace, or read
 * /proc/PID/{mem,environ,fd} of, a process outside it: the proc rules.
 * From ABI 6 the plan also scopes abstract unix sockets and signals to the
 * domain (sbx_landlock_scopes): the BPF-LSM tier decides those per
 * listener and per target; here only the domain's own are reachable.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#define SBX_POLICY_INTERNAL
#include "lib/alloc.h"
#include "policy/policy.h"
#include "policy/landlock.h"

#define LL_READ		(LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_EXEC		LANDLOCK_ACCESS_FS_EXECUTE
/* write rights checked on the object itself */
#define LL_WRITE_OBJ	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
			 LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* write rights checked on the parent directory of the entry made or removed */
#define LL_WRITE_PAR	(LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
			 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | \
			 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | \
			 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | \
			 LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER)
/* the rights a rule on a non-directory may hold (add_rule refuses others) */
#define LL_FILE		(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
			 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
			 LANDLOCK_ACCESS_FS_IOCTL_DEV)

static int ll_create_ruleset(const void *attr, size_t size, uint32_t flags)
{
	return (int)syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

static int ll_add_rule(int fd, enum landlock_rule_type type, const void *attr, uint32_t flags)
{
	return (int)syscall(SYS_landlock_add_rule, fd, type, attr, flags);
}

static int ll_restrict_self(int fd, uint32_t flags)
{
	return (int)syscall(SYS_landlock_restrict_self, fd, flags);
}

int sbx_landlock_abi(void)
{
	int abi = ll_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? 0 : abi;
}

uint64_t sbx_landlock_all_rights(int abi)
{
	uint64_t r = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;	/* ABI 1 */

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return abi >= 1 ? r : 0;
}

uint64_t sbx_landlock_scopes(int abi)
{
	return abi >= 6 ? LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL : 0;
}

uint64_t sbx_landlock_rights(int abi, unsigned accbits)
{
	uint64_t r = 0;

	if (accbits & SBX_ACCBIT(SBX_ACC_READ))
		r |= LL_READ;
	if (accbits & SBX_ACCBIT(SBX_ACC_WRITE))
		r |= LL_WRITE_OBJ | LL_WRITE_PAR;
	if (accbits & SBX_ACCBIT(SBX_ACC_EXEC))
		r |= LL_EXEC;
	return r & sbx_landlock_all_rights(abi);
}

/* ---- sorted string sets ------------------------------------------------------------------- */

struct strset {
	char **v;
	size_t n, cap;
	bool oom;
};

static void set_add(struct strset *s, const char *str)
{
	if (s->oom)
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v) {
			s->oom = true;
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	if (!(s->v[s->n] = strdup(str)))
		s->oom = true;
	else
		s->n++;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void set_finish(struct strset *s)
{
	size_t n = 0;

	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), cmp_str);
	for (size_t i = 0; i < s->n; i++) {
		if (n && !strcmp(s->v[n - 1], s->v[i])) {
			free(s->v[i]);
			continue;
		}
		s->v[n++] = s->v[i];
	}
	s->n = n;
}

static bool set_has(const struct strset *s, const char *str)
{
	return s->n && bsearch(&str, s->v, s->n, sizeof(*s->v), cmp_str);
}

static void set_free(struct strset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* ---- hot paths ---------------------------------------------------------------------------- */

/* path with its deepest existing prefix resolved: the plan walks real
 * directories, and a rule written through a symlink is about its target */
static char *resolve_prefix(const char *path)
{
	char *norm = sbx_path_normalize(path), *real = NULL, *out = NULL;
	size_t cut;

	if (!norm)
		return NULL;
	for (cut = strlen(norm); !real; ) {
		char save = norm[cut];

		norm[cut] = 0;
		real = realpath(cut ? norm : "/", NULL);
		norm[cut] = save;
		if (real || !cut)
			break;
		while (cut > 0 && norm[cut - 1] != '/')
			cut--;
		if (cut > 0)
			cut--;		/* at the '/' before the missing name */
	}
	if (real && asprintf(&out, "%s%s", strcmp(real, "/") ? real : "", norm + cut) < 0)
		out = NULL;
	if (out && !*out) {
		free(out);
		out = strdup("/");
	}
	free(real);
	free(norm);
	return out;
}

/* realpath(3) of the directories hot paths are in, each asked once: a
 * plan of 10,000 rules made 66,000 readlink calls resolving the same
 * few hundred directories again for each path */
struct rcache {
	void *root;		/* tsearch tree of struct rdir */
	bool oom;
};

struct rdir {
	char *dir;
	char *real;		/* NULL: realpath failed */
};

static int cmp_rdir(const void *a, const void *b)
{
	return strcmp(((const struct rdir *)a)->dir, ((const struct rdir *)b)->dir);
}

static void free_rdir(void *p)
{
	struct rdir *d = p;

	free(d->dir);
	free(d->real);
	free(d);
}

static const char *real_dir(struct rcache *rc, const char *dir)
{
	struct rdir key = { .dir = (char *)dir }, *d, **slot;

	slot = tfind(&key, &rc->root, cmp_rdir);
	if (slot)
		return (*slot)->real;
	d = calloc(1, sizeof(*d));
	if (!d || !(d->dir = strdup(dir))) {
		free(d);
		rc->oom = true;
		return NULL;
	}
	d->real = realpath(dir, NULL);
	if (!tsearch(d, &rc->root, cmp_rdir)) {
		free_rdir(d);
		rc->oom = true;
		return NULL;
	}
	return d->real;
}

/* resolve_prefix(path) from its directory's realpath when its last name
 * is no symlink (what realpath would give then); else resolve_prefix */
static char *resolve_prefix_cached(struct rcache *rc, const char *path)
{
	char *norm = sbx_path_normalize(path), *sl, *out = NULL;
	const char *rp;
	struct stat st;

	if (!norm)
		return NULL;
	sl = strrchr(norm, '/');
	if (sl && sl[1] && strcmp(sl + 1, ".") && strcmp(sl + 1, "..")) {
		*sl = 0;
		rp = real_dir(rc, sl == norm ? "/" : norm);
		*sl = '/';
		if (rp && asprintf(&out, "%s%s", strcmp(rp, "/") ? rp : "", sl) < 0)
			out = NULL;
		if (out && (lstat(out, &st) ? errno != ENOENT : S_ISLNK(st.st_mode))) {
			free(out);
			out = NULL;
		}
	}
	free(norm);
	return out ? out : resolve_prefix(path);
}

static void add_hot(struct rcache *rc, struct strset *hot, const char *path)
{
	char *r = resolve_prefix_cached(rc, path);

	if (!r) {
		hot->oom = true;
		return;
	}
	set_add(hot, r);
	free(r);
}

static int cmp_name_key(const void *k, const void *e)
{
	return memcmp(k, &((const struct sbx_name_entry *)e)->k, sizeof(struct sbx_name_key));
}

static bool name_entry(const struct sbx_compiled *c, uint8_t kind, uint8_t len, uint64_t hash)
{
	struct sbx_name_key k = { .policy_id = c->hdr.policy_id, .kind = kind, .len = len,
				  .hash = hash };

	return bsearch(&k, c->name, c->n_name, sizeof(*c->name), cmp_name_key) != NULL;
}

/* Does a name or glob rule (the lookups of policy/decide.c) match name? */
static bool name_ruled(const struct sbx_compiled *c, const char *name)
{
	const struct sbx_policy_hdr *h = &c->hdr;
	size_t len = strlen(name);
	unsigned bit = len <= SBX_GLOB_LIT_MAX ? (unsigned)len : 0;

	if ((h->exact_len_mask & (1ULL << bit)) &&
	    name_entry(c, SBX_NAME_EXACT, (uint8_t)bit, sbx_hash_name(name, len)))
		return true;
	for (unsigned L = 1; L <= SBX_GLOB_LIT_MAX && L <= len; L++) {
		if ((h->prefix_len_mask & (1ULL << L)) &&
		    name_entry(c, SBX_NAME_PREFIX, (uint8_t)L, sbx_hash_name(name, L)))
			return true;
		if ((h->suffix_len_mask & (1ULL << L)) &&
		    name_entry(c, SBX_NAME_SUFFIX, (uint8_t)L, sbx_hash_suffix(name + len - L, L)))
			return true;
	}
	return false;
}

struct scan {
	const struct sbx_compiled *c;
	struct strset *hot;
	size_t n, max;
	bool truncated;
};

static void scan_dir(struct scan *s, const char *dir, int depth)
{
	DIR *d;
	struct dirent *de;

	if (depth > SBX_LANDLOCK_SCAN_DEPTH) {
		s->truncated = true;
		return;
	}
	d = opendir(dir);
	if (!d)
		return;		/* unreadable here is unreadable to the session too */
	while (!s->truncated && (de = readdir(d))) {
		char *p = NULL;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++s->n > s->max) {
			s->truncated = true;
			break;
		}
		if (asprintf(&p, "%s/%s", strcmp(dir, "/") ? dir : "", de->d_name) < 0) {
			s->hot->oom = true;
			break;
		}
		if (!strcmp(de->d_name, ".sandbox") || name_ruled(s->c, de->d_name))
			set_add(s->hot, p);
		if (de->d_type == DT_DIR)
			scan_dir(s, p, depth + 1);
		free(p);
	}
	closedir(d);
}

/* bpffs, cgroupfs, securityfs, debugfs, tracefs: never writable (decide.c) */
static void add_pseudofs(struct strset *hot)
{
	static const char *const types[] = { "bpf", "cgroup2", "cgroup", "securityfs", "debugfs",
					     "tracefs" };
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char mnt[PATH_MAX], fstype[64], *sep = strstr(line, " - ");
		size_t o = 0;

		if (!sep || sscanf(sep, " - %63s", fstype) != 1 ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
			if (strcmp(fstype, types[i]))
				continue;
			/* mountinfo escapes space, tab, newline and backslash as \ooo */
			for (size_t k = 0; mnt[k]; k++) {
				if (mnt[k] == '\\' && mnt[k + 1] && mnt[k + 2] && mnt[k + 3]) {
					mnt[o++] = (char)((mnt[k + 1] - '0') * 64 +
							  (mnt[k + 2] - '0') * 8 + (mnt[k + 3] - '0'));
					k += 3;
				} else {
					mnt[o++] = mnt[k];
				}
			}
			mnt[o] = 0;
			set_add(hot, mnt);
			break;
		}
	}
	free(line);
	fclose(f);
}

/* ---- the walk ----------------------------------------------------------------------------- */

struct build {
	const struct sbx_compiled *c;
	int abi;
	bool kernel_decides;
	uint64_t all;
	struct strset hot;		/* paths a rule is anchored on */
	/* per hot path, looked up once (a walk of 10,000 rules asked each
	 * again in every expanded directory above it): "" exists, else the
	 * deepest directory of it that does; NULL: not asked yet */
	char **hot_par;
	struct strset above;		/* their strict ancestors: the expanded directories */
	struct strset wnames;		/* literals of name rules that let a name be written */
	struct strset roots;		/* the scan roots, resolved */
	struct sbx_landlock_rule *rules;
	size_t n_rules, cap_rules;
	bool oom;
};

/* What the BPF-LSM tier decides for path: allowed access classes. Ask is
 * deny, unless the daemon's programs decide asks in the kernel
 * (kernel_decides): then Landlock lets them through. */
static unsigned allowed(const struct build *b, const char *path, const struct sbx_decide_dir *in,
			const char *name, const struct stat *lst, const struct sbx_kid *kid)
{
	struct sbx_decision d[SBX_ACC_MAX];
	unsigned bits = 0;

	if (in ? sbx_decide_dir_each_kid(b->c, in, name, lst, kid, d) :
		 sbx_decide_path_each(b->c, path, d))
		return 0;
	for (int a = SBX_ACC_READ; a <= SBX_ACC_EXEC; a++)
		if (d[a].verdict == SBX_V_ALLOW || d[a].verdict == SBX_V_AUDIT ||
		    (b->kernel_decides && d[a].verdict == SBX_V_ASK))
			bits |= SBX_ACCBIT(a);
	return bits;
}

static void add_rule(struct build *b, const char *path, uint64_t access, bool dir)
{
	if (!dir)
		access &= LL_FILE;
	if (!access || b->oom)
		return;
	if (b->n_rules == b->cap_rules) {
		size_t cap = b->cap_rules ? b->cap_rules * 2 : 256;
		struct sbx_landlock_rule *v = realloc(b->rules, cap * sizeof(*v));

		if (!v) {
			b->oom = true;
			return;
		}
		b->rules = v;
		b->cap_rules = cap;
	}
	if (!(b->rules[b->n_rules].path = strdup(path))) {
		b->oom = true;
		return;
	}
	b->rules[b->n_rules].access = access;
	b->rules[b->n_rules].dir = dir;
	b->n_rules++;
}

/* The least rights that hold below a node: obj for it and everything below
 * (object rights), par for entries strictly below it (parent rights), and
 * self: the parent rights its own entry allows in its directory. */
struct mins {
	uint64_t obj, par, self;
	uint64_t grant;		/* what a rule on it alone would hold */
};

/* in, name: path is name in the directory that in was opened on; lst and
 * kid: its lstat and kernel identity, when the caller has them */
static struct mins mins_of(struct build *b, const char *path, bool dir, bool exists,
			   const struct sbx_decide_dir *in, const char *name,
			   const struct stat *lst, const struct sbx_kid *kid)
{
	uint64_t r = sbx_landlock_rights(b->abi, allowed(b, path, in, name, lst, kid));
	struct mins m = {
		.obj = r & ~LL_WRITE_PAR,
		.par = dir || !exists ? r & LL_WRITE_PAR : b->all,
		.self = r & LL_WRITE_PAR,
		.grant = r,
	};

	/* rights of the other kind never reach the object */
	if (exists && !dir)
		m.obj |= b->all & ~LL_FILE;
	return m;
}

/* Is path a scan root or below one? */
static bool below_root(const struct build *b, const char *path)
{
	for (size_t i = 0; i < b->roots.n; i++) {
		size_t n = strlen(b->roots.v[i]);

		if (!strncmp(path, b->roots.v[i], n) && (path[n] == '/' || !path[n]))
			return true;
	}
	return false;
}

/* the first hot path that can be below dir (sorted: those that start
 * with "dir/" are one run, from here) */
static size_t hot_below(const struct strset *hot, const char *dir)
{
	size_t lo = 0, hi = hot->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(hot->v[mid], dir) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* hot path i when it does not exist: the deepest directory of it that
 * does; NULL when it exists (or on no memory: b->oom) */
static const char *hot_missing_parent(struct build *b, size_t i)
{
	struct stat st;
	char *par, *sl;

	if (b->hot_par[i])
		return *b->hot_par[i] ? b->hot_par[i] : NULL;
	if (!lstat(b->hot.v[i], &st)) {
		b->hot_par[i] = strdup("");
		if (!b->hot_par[i])
			b->oom = true;
		return NULL;
	}
	if (!(par = strdup(b->hot.v[i]))) {
		b->oom = true;
		return NULL;
	}
	for (;;) {
		sl = strrchr(par, '/');
		if (sl == par)
			sl[1] = 0;
		else
			*sl = 0;
		if (!lstat(par, &st) || !strcmp(par, "/"))
			break;
	}
	b->hot_par[i] = par;
	return par;
}

/* one entry of a directory being walked: its statx, made with the others
 * before any is decided (one check of the mount table for them all) */
struct dir_ent {
	char *path, *name;
	struct stat st;
	struct sbx_kid kid;
};

static void stat_of_statx(struct stat *st, const struct statx *sx)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = sx->stx_mode;
	st->st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
	st->st_ino = sx->stx_ino;
	st->st_rdev = makedev(sx->stx_rdev_major, sx->stx_rdev_minor);
	st->st_nlink = sx->stx_nlink;
	st->st_uid = sx->stx_uid;
	st->st_gid = sx->stx_gid;
	st->st_size = (off_t)sx->stx_size;
}

/*
 * The entries of path that are not symlinks (one is reached through its
 * target's rules), each with its lstat and kernel identity: one statx
 * each, where a stat, then a statx and a poll of the mount table for its
 * identity were three (most of a plan's system calls).
 */
static struct dir_ent *list_dir(struct build *b, DIR *d, const char *path, size_t *n)
{
	struct dir_ent *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	unsigned long gen = 0;
	bool same;

	*n = 0;
	(void)sbx_kident_mounts_unchanged(&gen);	/* the table, current from here */
	while ((de = readdir(d))) {
		struct statx sx;
		struct dir_ent *e;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == cap) {
			struct dir_ent *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!nv) {
				b->oom = true;
				break;
			}
			v = nv;
		}
		e = &v[*n];
		memset(e, 0, sizeof(*e));
		if (asprintf(&e->path, "%s/%s", strcmp(path, "/") ? path : "", de->d_name) < 0) {
			e->path = NULL;
			b->oom = true;
			break;
		}
		e->name = e->path + strlen(e->path) - strlen(de->d_name);
		/* statx as sbx_kident makes it (an automount point is its
		 * mount's root); where statx itself is refused (a seccomp
		 * profile: EPERM), lstat, and the identity the usual way */
		if (!statx(AT_FDCWD, e->path, AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT,
			   STATX_BASIC_STATS | STATX_MNT_ID, &sx) && (sx.stx_mask & STATX_TYPE)) {
			stat_of_statx(&e->st, &sx);
			e->kid.err = sbx_kident_statx(&sx, &e->kid.dev, &e->kid.ino);
		} else if (!lstat(e->path, &e->st)) {
			e->kid.err = 1;
		} else {
			free(e->path);
			continue;	/* unreachable here is unreachable to the session */
		}
		if (S_ISLNK(e->st.st_mode)) {
			free(e->path);
			continue;
		}
		(*n)++;
	}
	/* a mount came or went during the batch: a mount id may name
	 * another mount now, each identity is asked again (sbx_kident) */
	same = sbx_kident_mounts_unchanged(&gen);
	for (size_t i = 0; i < *n; i++) {
		struct sbx_kid *k = &v[i].kid;

		if (same && k->err == 2)
			k->err = sbx_kident_slow(v[i].path, true, &k->dev, &k->ino);
		else if (!same || k->err)
			k->err = sbx_kident(v[i].path, true, &k->dev, &k->ino);
	}
	return v;
}

static struct mins walk(struct build *b, const char *path, bool dir, const struct sbx_decide_dir *in,
			const char *name, const struct stat *lst, const struct sbx_kid *kid)
{
	struct mins m = mins_of(b, path, dir, true, in, name, lst, kid), below;
	struct sbx_decide_dir *self;
	struct dir_ent *ents;
	size_t n_ents = 0;
	DIR *d;
	size_t plen = strlen(path);

	if (!dir || !set_has(&b->above, path)) {
		add_rule(b, path, m.grant, dir);
		return m;
	}
	below.obj = m.obj;
	below.par = m.par;
	d = opendir(path);
	if (!d) {
		/* unlistable: nothing below is granted (stricter) */
		return (struct mins){ 0, 0, m.self, 0 };
	}
	self = sbx_decide_dir_open(path);
	if (!self) {
		closedir(d);
		b->oom = true;
		return (struct mins){ 0, 0, m.self, 0 };
	}
	ents = list_dir(b, d, path, &n_ents);
	closedir(d);
	for (size_t i = 0; i < n_ents; i++) {
		struct mins k = walk(b, ents[i].path, S_ISDIR(ents[i].st.st_mode), self,
				     ents[i].name, &ents[i].st, &ents[i].kid);

		below.obj &= k.obj;
		below.par &= k.par & k.self;
		free(ents[i].path);
	}
	free(ents);
	/* rules on names that do not exist yet, below this directory: the
	 * sorted hot paths that start with "path/" are one run of them */
	{
		char *pfx = NULL;

		if (asprintf(&pfx, "%s/", plen > 1 ? path : "") < 0) {
			b->oom = true;
			pfx = NULL;
		}
		for (size_t i = pfx ? hot_below(&b->hot, pfx) : b->hot.n; i < b->hot.n; i++) {
			const char *h = b->hot.v[i];
			const char *par;
			struct mins k;

			if (strncmp(h, pfx, plen + (plen > 1)))
				break;
			if (!strcmp(h, path))
				continue;
			par = hot_missing_parent(b, i);
			if (!par || strcmp(par, path))
				continue;	/* exists (walked), or another directory's */
			k = mins_of(b, h, false, false, self, h + plen + (plen > 1), NULL, NULL);
			below.obj &= k.obj;
			below.par &= k.par & k.self;
		}
		free(pfx);
	}
	if (b->kernel_decides) {
		/* the kernel refuses the writes below that the policy denies:
		 * Landlock keeps the directory's own, for its new names too;
		 * and those that a name rule lets be made here
		 * (~/.claude.json.tmp in a home no other rule lets be written),
		 * in the scan roots and below them only: a grant on / would
		 * reach every directory */
		below.obj |= m.obj & LL_WRITE_OBJ;
		below.par |= m.par & LL_WRITE_PAR;
		for (size_t i = 0; below_root(b, path) && i < b->wnames.n; i++) {
			struct mins k;
			char *p = NULL;

			if (asprintf(&p, "%s/%s", strcmp(path, "/") ? path : "", b->wnames.v[i]) < 0) {
				b->oom = true;
				break;
			}
			/* decided over this directory's walk, made once: a
			 * walk of the whole path for each name was most of a
			 * plan's system calls */
			k = mins_of(b, p, false, false, self, b->wnames.v[i], NULL, NULL);
			below.obj |= k.obj & LL_WRITE_OBJ;
			below.par |= k.self;
			free(p);
		}
	}
	sbx_decide_dir_close(self);
	add_rule(b, path, below.obj | below.par, true);
	return (struct mins){ below.obj, below.par, m.self, below.obj | below.par };
}

static int cmp_rule(const void *a, const void *b)
{
	return strcmp(((const struct sbx_landlock_rule *)a)->path,
		      ((const struct sbx_landlock_rule *)b)->path);
}

static const struct sbx_landlock_rule *find_rule(const struct sbx_landlock_plan *plan,
						 const char *path)
{
	struct sbx_landlock_rule k = { .path = (char *)path };

	return plan->n_rules ? bsearch(&k, plan->rules, plan->n_rules, sizeof(k), cmp_rule) : NULL;
}

/* Union of the rights of rules on path's strict ancestors. */
static uint64_t above_rights(const struct sbx_landlock_plan *plan, const char *path)
{
	char *p = strdup(path);
	uint64_t r = 0;

	if (!p)
		return 0;
	while (strcmp(p, "/")) {
		char *sl = strrchr(p, '/');
		const struct sbx_landlock_rule *rule;

		if (!sl)
			break;
		if (sl == p)
			sl[1] = 0;
		else
			*sl = 0;
		rule = find_rule(plan, p);
		if (rule)
			r |= rule->access;
	}
	free(p);
	return r;
}

/* sorted, one rule per path, and no right an ancestor's rule grants already */
static void plan_finish(struct sbx_landlock_plan *plan)
{
	size_t n = 0;

	if (!plan->n_rules)
		return;
	qsort(plan->rules, plan->n_rules, sizeof(*plan->rules), cmp_rule);
	for (size_t i = 0; i < plan->n_rules; i++) {
		if (n && !strcmp(plan->rules[n - 1].path, plan->rules[i].path)) {
			plan->rules[n - 1].access |= plan->rules[i].access;
			free(plan->rules[i].path);
			continue;
		}
		plan->rules[n++] = plan->rules[i];
	}
	plan->n_rules = n;
	/* bottom-up, so that a rule dropped below never hides one above */
	for (size_t i = n; i-- > 0;)
		plan->rules[i].access &= ~above_rights(plan, plan->rules[i].path);
	n = 0;
	for (size_t i = 0; i < plan->n_rules; i++) {
		if (!plan->rules[i].access) {
			free(plan->rules[i].path);
			continue;
		}
		plan->rules[n++] = plan->rules[i];
	}
	plan->n_rules = n;
}

/* -err, with *why = the message and the error's name */
static int __attribute__((format(printf, 3, 4))) fail(char **why, int err, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = sbx_vformat(fmt, ap);
	va_end(ap);
	if (why && (!msg || asprintf(why, "%s: %s", msg, strerror(-err)) < 0))
		*why = NULL;
	free(msg);
	return err;
}

int sbx_landlock_plan(const struct sbx_policy *p, const struct sbx_compiled *c, int abi,
		      const struct sbx_landlock_opts *opts, struct sbx_landlock_plan *out,
		      char **why)
{
	struct build b = { .c = c, .abi = abi, .all = sbx_landlock_all_rights(abi),
			   .kernel_decides = opts && opts->kernel_decides };
	struct scan sc = { .c = c, .hot = &b.hot };
	struct strset uniq = { 0 };
	struct rcache rc = { 0 };
	struct stat st;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (why)
		*why = NULL;
	if (!p || !c)
		return -EINVAL;
	if (abi < 1)
		return fail(why, -ENOTSUP, "no Landlock ABI %d", abi);
	for (size_t i = 0; i < p->n_frules; i++)
		for (size_t j = 0; j < p->frules[i].n_pats; j++) {
			const struct sbx_path_pat *pat = &p->frules[i].pats[j];

			if (pat->shape == SBX_PAT_ANCHORED)
				add_hot(&rc, &b.hot, pat->text);
			else if (sbx_pat_is_name(pat->shape) && *pat->text &&
				 (p->frules[i].access & SBX_ACCBIT(SBX_ACC_WRITE)) &&
				 p->frules[i].verdict != SBX_V_DENY)
				set_add(&b.wnames, pat->text);	/* the shortest name it matches */
		}
	for (size_t i = 0; i < c->n_idents; i++)
		add_hot(&rc, &b.hot, c->idents[i].path);
	for (size_t i = 0; i < p->n_sources; i++)
		add_hot(&rc, &b.hot, p->sources[i]);
	add_pseudofs(&b.hot);
	tdestroy(rc.root, free_rdir);
	if (rc.oom)
		b.hot.oom = true;
	sc.max = opts && opts->scan_max ? opts->scan_max : SBX_LANDLOCK_SCAN_MAX;
	/* each tree once: PATH names /usr/bin and /bin, which most systems
	 * have made one directory, and the project is usually in the home.
	 * Sorted, an ancestor comes before everything below it. */
	for (size_t i = 0; opts && i < opts->n_scan_roots; i++) {
		char *r = realpath(opts->scan_roots[i], NULL);

		/* a root that does not exist holds nothing; "/" is the whole
		 * tree: callers name real roots */
		if (r && strcmp(r, "/"))
			set_add(&uniq, r);
		free(r);
	}
	set_finish(&uniq);
	for (size_t i = 0; i < uniq.n && !sc.truncated; i++) {
		if (below_root(&b, uniq.v[i]))
			continue;
		scan_dir(&sc, uniq.v[i], 1);
		set_add(&b.roots, uniq.v[i]);
	}
	if (uniq.oom)
		b.hot.oom = true;	/* a root left out would hide its names */
	set_free(&uniq);
	if (sc.truncated) {
		if (why && asprintf(why, "more than %zu entries (or %d levels) below the scan "
				    "roots: a name rule beyond them would not hold", sc.max,
				    SBX_LANDLOCK_SCAN_DEPTH) < 0)
			*why = NULL;
		err = -E2BIG;
		goto out;
	}
	set_finish(&b.hot);
	set_finish(&b.wnames);
	for (size_t i = 0; i < b.hot.n && !b.above.oom; i++) {
		char *a = strdup(b.hot.v[i]), *sl;

		if (!a) {
			b.oom = true;
			break;
		}
		while (strcmp(a, "/") && (sl = strrchr(a, '/'))) {
			if (sl == a)
				sl[1] = 0;
			else
				*sl = 0;
			set_add(&b.above, a);
		}
		free(a);
	}
	set_finish(&b.above);
	if (b.hot.oom || b.above.oom || b.wnames.oom || b.roots.oom) {
		err = -ENOMEM;
		goto out;
	}
	if (stat("/", &st)) {
		err = fail(why, -errno, "cannot stat /");
		goto out;
	}
	if (!(b.hot_par = calloc(b.hot.n ? b.hot.n : 1, sizeof(*b.hot_par)))) {
		err = -ENOMEM;
		goto out;
	}
	walk(&b, "/", true, NULL, NULL, NULL, NULL);
	if (b.oom) {
		err = -ENOMEM;
		goto out;
	}
	out->abi = abi;
	out->handled = b.all;
	out->scoped = sbx_landlock_scopes(abi);
	out->rules = b.rules;
	out->n_rules = b.n_rules;
	b.rules = NULL;
	/* the directories the walk listed: those above a missing hot path
	 * that do not exist either were never reached */
	{
		size_t n = 0;

		for (size_t i = 0; i < b.above.n; i++) {
			if (!stat(b.above.v[i], &st) && S_ISDIR(st.st_mode))
				b.above.v[n++] = b.above.v[i];
			else
				free(b.above.v[i]);
		}
		b.above.n = n;
	}
	out->expanded = b.above.v;
	out->n_expanded = b.above.n;
	b.above.v = NULL;
	b.above.n = 0;
	out->scanned = sc.n;
	plan_finish(out);
out:
	if (b.rules) {
		for (size_t i = 0; i < b.n_rules; i++)
			free(b.rules[i].path);
		free(b.rules);
	}
	for (size_t i = 0; b.hot_par && i < b.hot.n; i++)
		free(b.hot_par[i]);
	free(b.hot_par);
	set_free(&b.hot);
	set_free(&b.above);
	set_free(&b.wnames);
	set_free(&b.roots);
	if (err == -ENOMEM && why && !*why)
		*why = strdup("out of memory");
	return err;
}

void sbx_landlock_plan_free(struct sbx_landlock_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_rules; i++)
		free(plan->rules[i].path);
	free(plan->rules);
	for (size_t i = 0; i < plan->n_expanded; i++)
		free(plan->expanded[i]);
	free(plan->expanded);
	memset(plan, 0, sizeof(*plan));
}

void sbx_landlock_plan_dump(const struct sbx_landlock_plan *plan, FILE *out)
{
	fprintf(out, "landlock abi %d handled %#llx scoped %#llx rules %zu expanded %zu "
		"scanned %zu\n", plan->abi, (unsigned long long)plan->handled,
		(unsigned long long)plan->scoped, plan->n_rules, plan->n_expanded, plan->scanned);
	for (size_t i = 0; i < plan->n_expanded; i++)
		fprintf(out, "expanded %s\n", plan->expanded[i]);
	for (size_t i = 0; i < plan->n_rules; i++)
		fprintf(out, "rule %#06llx %s%s\n", (unsigned long long)plan->rules[i].access,
			plan->rules[i].path, plan->rules[i].dir ? "/" : "");
}

/* ---- applying ----------------------------------------------------------------------------- */

/* struct landlock_ruleset_attr as of ABI 6; the kernel takes a shorter
 * one from older callers, so the size passed says which fields are set */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

int sbx_landlock_apply(const struct sbx_landlock_plan *plan, char **why)
{
	struct ll_ruleset_attr attr = { .handled_access_fs = plan->handled,
					.scoped = plan->scoped };
	size_t attr_size = plan->scoped ? sizeof(attr) : sizeof(attr.handled_access_fs);
	int abi = sbx_landlock_abi(), rfd, err = 0;

	if (why)
		*why = NULL;
	if (abi < 1)
		return fail(why, -ENOTSUP, "Landlock is not available on this kernel");
	if (abi < plan->abi || !plan->handled || (plan->scoped & ~sbx_landlock_scopes(abi)))
		return fail(why, -EINVAL, "the plan is for Landlock ABI %d, the kernel has %d", plan->abi, abi);
	rfd = ll_create_ruleset(&attr, attr_size, 0);
	if (rfd < 0)
		return fail(why, -errno, "landlock_create_ruleset");
	for (size_t i = 0; i < plan->n_rules && !err; i++) {
		const struct sbx_landlock_rule *r = &plan->rules[i];
		struct landlock_path_beneath_attr pb = { .allowed_access = r->access };
		struct stat st;

		pb.parent_fd = open(r->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (pb.parent_fd < 0) {
			/* gone since the plan was made: its rights go with it */
			if (errno == ENOENT)
				continue;
			err = fail(why, -errno, "cannot open %s", r->path);
			break;
		}
		/* replaced by an object of the other kind: it gets nothing */
		if (fstat(pb.parent_fd, &st) || S_ISDIR(st.st_mode) != r->dir) {
			close(pb.parent_fd);
			continue;
		}
		if (ll_add_rule(rfd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0))
			err = fail(why, -errno, "landlock_add_rule %s", r->path);
		close(pb.parent_fd);
	}
	if (!err && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		err = fail(why, -errno, "PR_SET_NO_NEW_PRIVS");
	if (!err && ll_restrict_self(rfd, 0))
		err = fail(why, -errno, "landlock_restrict_self");
	close(rfd);
	return err;
}

/* ---- the model ---------------------------------------------------------------------------- */

int sbx_landlock_check(const struct sbx_landlock_plan *plan, const char *path,
		       enum sbx_access acc, enum sbx_landlock_verdict *out, uint64_t *lacking)
{
	char *real = resolve_prefix(path);
	const struct sbx_landlock_rule *self;
	uint64_t obj, par, need;
	struct stat st;
	bool exists, dir;

	if (!real)
		return -ENOMEM;
	exists = !lstat(real, &st);
	dir = exists && S_ISDIR(st.st_mode);
	par = above_rights(plan, real);
	self = find_rule(plan, real);
	obj = par | (self ? self->access : 0);
	free(real);
	switch (acc) {
	case SBX_ACC_READ:
		need = (dir ? LANDLOCK_ACCESS_FS_READ_DIR : LANDLOCK_ACCESS_FS_READ_FILE) & ~obj;
		*out = need ? SBX_LL_DENY : SBX_LL_ALLOW;
		break;
	case SBX_ACC_EXEC:
		need = LANDLOCK_ACCESS_FS_EXECUTE | (dir ? 0 : LANDLOCK_ACCESS_FS_READ_FILE);
		need &= ~obj;
		*out = need ? SBX_LL_DENY : SBX_LL_ALLOW;
		break;
	case SBX_ACC_WRITE: {
		/* the entry's own write, then making or removing it in its directory */
		uint64_t want_obj = dir ? 0 : (LANDLOCK_ACCESS_FS_WRITE_FILE |
					       LANDLOCK_ACCESS_FS_TRUNCATE);
		uint64_t want_par = dir ? (LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR) :
				    exists ? (LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_REMOVE_FILE) :
				    LANDLOCK_ACCESS_FS_MAKE_REG;

		want_obj &= plan->handled;
		want_par &= plan->handled;
		need = (want_obj & ~obj) | (want_par & ~par);
		*out = !need ? SBX_LL_ALLOW : need == (want_obj | want_par) ? SBX_LL_DENY :
		       SBX_LL_PARTIAL;
		break;
	}
	default:
		return -EINVAL;
	}
	if (lacking)
		*lacking = need;
	return 0;
}
