// SPDX-License-Identifier: GPL-2.0
/*
 * walk.bpf.c - the file decision: a bounded walk from the object up
 * through its parent directories, across mount points, to the root.
 *
 * Decisions come from inode identity and names, never from path strings:
 * the walk starts at the dentry the kernel actually resolved, so symlinks,
 * "..", relative paths, /proc/self/root and openat() on a parent fd all
 * arrive here as the same object. At each level it looks up
 *   - the inode (dev, ino): rules on existing files and directories;
 *   - chain rules hanging below that inode (paths that did not exist when
 *     the policy was compiled, e.g. ~/.aws/ before ~/.aws was created);
 *   - basename rules on the component's name (".env", "*.pem").
 * The closest match wins; at the same level exact beats name beats glob;
 * then deny > ask > audit > allow (see enum sbx_rank in bpfsbx.h).
 * policy/decide.c is the user-space twin of this file, and a kernel test
 * (t_differential) holds the two to the same answers.
 *
 * Every loop is a bpf_loop() whose state is in the task's scratch (see
 * struct sbx_walk), reached through a pointer in the callback's context.
 */
#include "sbx_file.h"

/*
 * A candidate is one 64-bit score, smaller = better:
 *   level (16 bits) | rank (2) | 7 - verdict (3) | rule id (32)
 * so "closest, then most exact, then strictest, then lowest rule id" is a
 * single unsigned compare.
 */
#define SBX_SCORE_NONE	(~0ULL)

static __always_inline __u64 sbx_score(__u32 level, __u8 rank, __u8 verdict, __u32 rule)
{
	return ((__u64)(level & 0xffff) << 37) | ((__u64)(rank & 3) << 35) |
	       ((__u64)((7 - verdict) & 7) << 32) | rule;
}

static __always_inline __u8 sbx_score_verdict(__u64 s)
{
	return s == SBX_SCORE_NONE ? SBX_V_NONE : 7 - ((s >> 32) & 7);
}

static __always_inline __u32 sbx_score_level(__u64 s)
{
	return (s >> 37) & 0xffff;
}

/* The context of every callback below: where the scratch is. */
struct sbx_wctx {
	struct sbx_tscratch *sc;
};

/* floor: the least verdict taken from this entry (SBX_V_ASK for an
 * entry of another generation of its inode, sbx_walk_inode: its
 * refusals only) */
static __always_inline void sbx_cand_one(__u64 *best, __u8 v, __u32 rule, __u32 level,
					 __u8 rank, __u8 floor)
{
	__u64 s = sbx_score(level, rank, v, rule);

	if (v != SBX_V_NONE && v >= floor && s < *best)
		*best = s;
}

static __always_inline void sbx_cand(struct sbx_walk *w, const struct sbx_file_rule *r,
				     __u32 level, __u8 rank, __u8 floor)
{
	if (w->acc_mask & SBX_ACCBIT(SBX_ACC_READ))
		sbx_cand_one(&w->best[SBX_ACC_READ], r->verdict[SBX_ACC_READ],
			     r->rule_id[SBX_ACC_READ], level, rank, floor);
	if (w->acc_mask & SBX_ACCBIT(SBX_ACC_WRITE))
		sbx_cand_one(&w->best[SBX_ACC_WRITE], r->verdict[SBX_ACC_WRITE],
			     r->rule_id[SBX_ACC_WRITE], level, rank, floor);
	if (w->acc_mask & SBX_ACCBIT(SBX_ACC_EXEC))
		sbx_cand_one(&w->best[SBX_ACC_EXEC], r->verdict[SBX_ACC_EXEC],
			     r->rule_id[SBX_ACC_EXEC], level, rank, floor);
	if (w->acc_mask & SBX_ACCBIT(SBX_ACC_CONNECT))
		sbx_cand_one(&w->best[SBX_ACC_CONNECT], r->verdict[SBX_ACC_CONNECT],
			     r->rule_id[SBX_ACC_CONNECT], level, rank, floor);
}

static __always_inline void sbx_name_lookup(struct sbx_walk *w, __u8 kind, __u8 len,
					    __u64 hash, __u8 rank)
{
	struct sbx_name_key k = {
		.policy_id = w->policy_id, .kind = kind, .len = len, .hash = hash,
	};
	struct sbx_file_rule *r = bpf_map_lookup_elem(&sbx_name_rules, &k);

	if (r)
		sbx_cand(w, r, w->level, rank, SBX_V_ALLOW);
}

/* One chain length m = i + 1 below the anchor in w */
static long sbx_chain_step(__u32 i, void *ctx)
{
	struct sbx_walk *w = &((struct sbx_wctx *)ctx)->sc->walk;
	__u32 m = i + 1;
	__u64 h = SBX_CHAIN_SEED;
	struct sbx_file_rule *cr;

	if (!(w->anchor_mask & (1u << (i & 7))))
		return 0;
	if (m > w->level)
		return 1;
	/* names of the m levels below the anchor, top-down */
#pragma unroll
	for (__u32 j = 1; j <= SBX_CHAIN_MAX; j++) {
		if (j > m)
			break;
		h = sbx_mix64(h ^ w->hash[(w->level - j) & (SBX_CHAIN_MAX - 1)]);
	}
	struct sbx_chain_key ck = {
		.policy_id = w->policy_id, .dev = w->anchor_dev, .ino = w->anchor_ino,
		.hash = h, .m = m,
	};
	cr = bpf_map_lookup_elem(&sbx_chain_rules, &ck);
	if (cr)
		sbx_cand(w, cr, w->level - m, SBX_RANK_EXACT, w->anchor_floor);
	return 0;
}

/*
 * The entry was made for a file that is gone, and its number came back
 * with this one (a config deleted, then a key made in the same
 * directory): what it allowed is not this file's, what it denied or
 * asked about stays (and the names above still decide). SBX_V_ASK then,
 * the least verdict taken from it; SBX_V_ALLOW for the object it was made
 * for. Which incarnation: enum sbx_gen_kind. An object without a count
 * (one the daemon could not make) is another.
 */
static __always_inline __u8 sbx_entry_floor(const struct sbx_walk *w,
					    const struct sbx_file_rule *r, struct inode *inode,
					    __u32 dev, __u64 ino)
{
	__u32 *n;

	if (r->gen_set == SBX_GEN_INODE)
		return r->gen == BPF_CORE_READ(inode, i_generation) ? SBX_V_ALLOW : SBX_V_ASK;
	if (r->gen_set != SBX_GEN_REMOVALS || !sbx_rule_may_allow(r, w->acc_mask))
		return SBX_V_ALLOW;
	{
		struct sbx_protect_key rk = { .dev = dev, .ino = ino };

		n = bpf_map_lookup_elem(&sbx_removals, &rk);
	}
	return n && *n == r->gen ? SBX_V_ALLOW : SBX_V_ASK;
}

/* Inode identity of one dentry, plus the chain rules anchored on it. */
static __always_inline void sbx_walk_inode(struct sbx_wctx *c, struct dentry *d)
{
	struct sbx_walk *w = &c->sc->walk;
	struct inode *inode = BPF_CORE_READ(d, d_inode);
	struct sbx_inode_key k = {};
	struct sbx_file_rule *r;
	__u8 floor;

	if (!inode)
		return;		/* a name being created: no identity yet */
	k.policy_id = w->policy_id;
	k.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	k.ino = BPF_CORE_READ(inode, i_ino);

	if (w->builtins) {
		struct sbx_protect_key pk = { .dev = k.dev, .ino = k.ino };

		if (bpf_map_lookup_elem(&sbx_protected, &pk))
			w->builtin_rule = SBX_RULE_PROTECTED;
	}

	/* a character device: its rule by number as well, wherever the
	 * node is (a container's /dev is its own tmpfs) */
	if (!w->level && (BPF_CORE_READ(inode, i_mode) & 0170000) == 0020000) {
		struct sbx_inode_key dk = {
			.policy_id = w->policy_id, .dev = SBX_DEV_CHR,
			.ino = BPF_CORE_READ(inode, i_rdev),
		};

		r = bpf_map_lookup_elem(&sbx_inode_rules, &dk);
		if (r)
			sbx_cand(w, r, 0, SBX_RANK_EXACT, SBX_V_ALLOW);
	}
	r = bpf_map_lookup_elem(&sbx_inode_rules, &k);
	if (!r)
		return;
	floor = sbx_entry_floor(w, r, inode, k.dev, k.ino);
	sbx_cand(w, r, w->level, SBX_RANK_EXACT, floor);
	if (!r->chain_mask || !w->level)
		return;
	w->anchor_floor = floor;
	w->anchor_mask = r->chain_mask;
	w->anchor_dev = k.dev;
	w->anchor_ino = k.ino;
	bpf_loop(SBX_CHAIN_MAX, sbx_chain_step, c, 0);
}

/* Wildcard basenames of literal length L = i + 1 */
static long sbx_glob_step(__u32 i, void *ctx)
{
	struct sbx_tscratch *sc = ((struct sbx_wctx *)ctx)->sc;
	struct sbx_walk *w = &sc->walk;
	__u32 L = i + 1;

	if (L > w->name_len || L > SBX_GLOB_LIT_MAX)
		return 1;
	if ((w->prefix_mask >> L) & 1)
		sbx_name_lookup(w, SBX_NAME_PREFIX, L, sc->pre[L & 63], SBX_RANK_GLOB);
	if ((w->suffix_mask >> L) & 1)
		sbx_name_lookup(w, SBX_NAME_SUFFIX, L, sc->suf[L & 63], SBX_RANK_GLOB);
	return 0;
}

/* FNV-1a over the name, saving the hash of every prefix of up to 63 bytes */
static long sbx_hash_fwd_step(__u32 i, void *ctx)
{
	struct sbx_tscratch *sc = ((struct sbx_wctx *)ctx)->sc;
	struct sbx_walk *w = &sc->walk;

	if (i >= w->name_len)
		return 1;
	w->h_fwd = (w->h_fwd ^ (__u8)sc->name[i & SBX_NAME_MAX]) * SBX_FNV_PRIME;
	if (i < SBX_GLOB_LIT_MAX)
		sc->pre[(i + 1) & 63] = w->h_fwd;
	return 0;
}

/* FNV-1a over the last bytes in reverse: the hash of every suffix */
static long sbx_hash_rev_step(__u32 i, void *ctx)
{
	struct sbx_tscratch *sc = ((struct sbx_wctx *)ctx)->sc;
	struct sbx_walk *w = &sc->walk;

	if (i >= w->name_len)
		return 1;
	w->h_rev = (w->h_rev ^ (__u8)sc->name[(w->name_len - 1 - i) & SBX_NAME_MAX]) *
		   SBX_FNV_PRIME;
	sc->suf[(i + 1) & 63] = w->h_rev;
	return 0;
}

/* Read d's name into the scratch and hash it (w->h_fwd); false on error. */
static __always_inline bool sbx_hash_name(struct sbx_wctx *c, struct dentry *d)
{
	struct sbx_tscratch *sc = c->sc;
	struct sbx_walk *w = &sc->walk;
	__u32 len = BPF_CORE_READ(d, d_name.len) & SBX_NAME_MAX;

	if (bpf_probe_read_kernel(sc->name, len, BPF_CORE_READ(d, d_name.name)))
		return false;
	w->name_len = len;
	w->h_fwd = SBX_FNV_OFFSET;
	bpf_loop(SBX_NAME_MAX, sbx_hash_fwd_step, c, 0);
	return true;
}

/*
 * The component name of this level: hashed only when some rule could
 * care about a name of this length, so most components cost nothing.
 */
static __always_inline void sbx_walk_name(struct sbx_wctx *c, struct dentry *d)
{
	struct sbx_tscratch *sc = c->sc;
	struct sbx_walk *w = &sc->walk;
	__u32 len = BPF_CORE_READ(d, d_name.len);
	__u64 upto = len >= 63 ? ~0ULL : ((1ULL << (len + 1)) - 1);
	bool exact = len > SBX_GLOB_LIT_MAX ? (w->exact_mask & 1) :
					       (w->exact_mask >> len) & 1;
	bool globs = (w->prefix_mask | w->suffix_mask) & upto;
	bool sandbox = w->builtins && len == 8;

	if (!(w->max_chain || exact || globs || sandbox))
		return;
	if (!sbx_hash_name(c, d)) {
		w->error = 1;
		return;
	}
	len = w->name_len;
	w->hash[w->level & (SBX_CHAIN_MAX - 1)] = w->h_fwd;
	if (exact)
		sbx_name_lookup(w, SBX_NAME_EXACT, len > SBX_GLOB_LIT_MAX ? 0 : len, w->h_fwd,
				SBX_RANK_NAME);
	if (globs) {
		w->h_rev = SBX_FNV_OFFSET;
		bpf_loop(SBX_GLOB_LIT_MAX, sbx_hash_rev_step, c, 0);
		bpf_loop(SBX_GLOB_LIT_MAX, sbx_glob_step, c, 0);
	}

	if (sandbox && sc->name[0] == '.' && sc->name[1] == 's' && sc->name[2] == 'a' &&
	    sc->name[3] == 'n' && sc->name[4] == 'd' && sc->name[5] == 'b' &&
	    sc->name[6] == 'o' && sc->name[7] == 'x')
		w->builtin_rule = SBX_RULE_SANDBOX_DIR;
}

/* Can a candidate still to be found beat what we have? Chain rules found
 * at level k decide level k - m, so look max_chain levels further. */
static __always_inline bool sbx_walk_settled(const struct sbx_walk *w)
{
	if (w->builtins)
		return false;	/* built-ins may sit anywhere above */
#pragma unroll
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		if (!(w->acc_mask & SBX_ACCBIT(a)))
			continue;
		if (w->best[a] == SBX_SCORE_NONE)
			return false;
		if (sbx_score_level(w->best[a]) + w->max_chain > w->level)
			return false;
	}
	return true;
}

static long sbx_walk_step(__u32 i, void *ctx)
{
	struct sbx_wctx *c = ctx;
	struct sbx_walk *w = &c->sc->walk;
	struct dentry *d = (struct dentry *)w->dentry;
	struct mount *m = (struct mount *)w->mnt;
	struct dentry *mnt_root = BPF_CORE_READ(m, mnt.mnt_root);
	struct dentry *parent;

	sbx_walk_inode(c, d);

	if (d == mnt_root) {
		struct mount *up = BPF_CORE_READ(m, mnt_parent);

		if (up == m || !up) {
			w->done = 1;	/* the root of the mount tree */
			return 1;
		}
		/* Same level, seen from the mount below: its inode and name. */
		w->dentry = (__u64)BPF_CORE_READ(m, mnt_mountpoint);
		w->mnt = (__u64)up;
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (!parent || parent == d) {
		/* A root that is not its mount's root: open_by_handle_at can
		 * produce one on a real file system, and no rule above it can
		 * be seen. */
		w->disconnected = 1;
		w->done = 1;
		return 1;
	}

	sbx_walk_name(c, d);
	if (w->error)
		return 1;
	if (sbx_walk_settled(w)) {
		w->done = 1;
		return 1;
	}
	w->dentry = (__u64)parent;
	w->level++;
	return 0;
}

static __always_inline void sbx_io_all(struct sbx_file_io *io, __u8 v, __u32 rule)
{
#pragma unroll
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		if (io->acc_mask & SBX_ACCBIT(a)) {
			io->v[a] = v;
			io->rule[a] = rule;
		}
	}
}

__noinline int sbx_file_walk(struct sbx_file_io *io)
{
	struct sbx_wctx c;
	struct sbx_walk *w;
	long n;

	if (!io)
		return 0;
	c.sc = sbx_scratch();
	if (!c.sc) {
		sbx_stat_inc(SBX_STAT_ERRORS);
		io->no_cache = 1;
		sbx_io_all(io, SBX_V_DENY, SBX_RULE_ERROR);
		return 0;
	}
	w = &c.sc->walk;
	__builtin_memset(w, 0, sizeof(*w));
	w->policy_id = io->s.pol.policy_id;
	w->acc_mask = io->acc_mask;
	w->max_chain = io->s.pol.max_chain;
	w->builtins = !!(io->acc_mask & SBX_ACCBIT(SBX_ACC_WRITE));
	w->exact_mask = io->s.pol.exact_len_mask;
	w->prefix_mask = io->s.pol.prefix_len_mask;
	w->suffix_mask = io->s.pol.suffix_len_mask;
	w->dentry = io->dentry;
	w->mnt = io->vfsmount - bpf_core_field_offset(struct mount, mnt);
	w->best[0] = w->best[1] = w->best[2] = w->best[3] = SBX_SCORE_NONE;

	n = bpf_loop(SBX_WALK_MAX, sbx_walk_step, &c, 0);
	if (n < 0 || w->error) {
		sbx_stat_inc(SBX_STAT_ERRORS);
		io->no_cache = 1;
		sbx_io_all(io, SBX_V_DENY, SBX_RULE_ERROR);
		return 0;
	}
	if (w->disconnected) {
		/* Nothing above the object can be seen: fail closed for every
		 * class (an internal object would not have got this far). */
		sbx_stat_inc(SBX_STAT_WALK_TRUNC);
		io->walk_trunc = 1;
		sbx_io_all(io, SBX_V_DENY, SBX_RULE_WALK_LIMIT);
		return 0;
	}
	if (!w->done) {
		/* Could not reach the root. Rules found so far stand (nothing
		 * above them could have been more specific) and the default
		 * applies otherwise; a write is denied because a built-in
		 * protection may sit above. */
		sbx_stat_inc(SBX_STAT_WALK_TRUNC);
		io->walk_trunc = 1;
		if (io->acc_mask & SBX_ACCBIT(SBX_ACC_WRITE))
			w->builtin_rule = SBX_RULE_WALK_LIMIT;
	}

#pragma unroll
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		__u64 best = w->best[a];

		if (!(io->acc_mask & SBX_ACCBIT(a)))
			continue;
		if (a == SBX_ACC_WRITE && w->builtin_rule) {
			io->v[a] = SBX_V_DENY;
			io->rule[a] = w->builtin_rule;
		} else if (best != SBX_SCORE_NONE) {
			io->v[a] = sbx_score_verdict(best);
			io->rule[a] = (__u32)best;
		} else {
			io->v[a] = io->s.pol.file_default[a];
			io->rule[a] = io->s.pol.file_default_rule[a];
			if (io->v[a] == SBX_V_NONE)
				io->v[a] = SBX_V_DENY;	/* a header without defaults is a bug */
		}
	}
	return 0;
}

/* ---- grants and the report -------------------------------------------- */

/* The grant key of a file object: its inode, or, for a name that does
 * not exist yet, its parent's inode and its name. */
static __always_inline bool sbx_file_grant_key(struct sbx_wctx *c, struct sbx_grant_key *k,
					       __u64 cgid, struct dentry *d, __u8 acc)
{
	struct inode *inode = BPF_CORE_READ(d, d_inode);

	__builtin_memset(k, 0, sizeof(*k));
	k->cgid = cgid;
	k->access = acc;
	if (inode) {
		k->kind = SBX_GK_INODE;
		k->dev = BPF_CORE_READ(inode, i_sb, s_dev);
		k->ino = BPF_CORE_READ(inode, i_ino);
	} else {
		struct inode *dir = BPF_CORE_READ(d, d_parent, d_inode);

		k->kind = SBX_GK_NAME;
		k->dev = BPF_CORE_READ(dir, i_sb, s_dev);
		k->ino = BPF_CORE_READ(dir, i_ino);
		if (!c->sc || !sbx_hash_name(c, d))
			return false;
		k->hash = c->sc->walk.h_fwd;
	}
	return true;
}

static __always_inline bool sbx_grant_valid(struct sbx_grant_key *k)
{
	struct sbx_grant *g = bpf_map_lookup_elem(&sbx_grants, k);

	if (!g)
		return false;
	if (g->expires_ns && bpf_ktime_get_boot_ns() > g->expires_ns)
		return false;
	return true;
}

/*
 * A grant on the object: on its inode, or on its name in its directory. A
 * person who approved creating a file approved the file that the create
 * makes: its open, right after, asks again for the new inode, and that
 * ask is granted by the name. Renaming or linking another file to that
 * name is itself a checked write (and a read of the source), so a name
 * grant cannot be used to reach some other object.
 */
static __always_inline bool sbx_file_granted(struct sbx_wctx *c, struct sbx_grant_key *k,
					     __u64 cgid, struct dentry *d, __u8 acc)
{
	if (!sbx_file_grant_key(c, k, cgid, d, acc))
		return false;
	if (sbx_grant_valid(k))
		return true;
	if (k->kind != SBX_GK_INODE || !c->sc || !sbx_hash_name(c, d))
		return false;
	{
		struct inode *dir = BPF_CORE_READ(d, d_parent, d_inode);

		k->kind = SBX_GK_NAME;
		k->dev = BPF_CORE_READ(dir, i_sb, s_dev);
		k->ino = BPF_CORE_READ(dir, i_ino);
		k->hash = c->sc->walk.h_fwd;
	}
	return sbx_grant_valid(k);
}

__noinline int sbx_file_finish(struct sbx_file_io *io)
{
	struct sbx_grant_key gk;
	struct sbx_wctx c;
	struct sbx_event *e;
	struct dentry *d;
	struct inode *inode;
	__u8 v = SBX_V_NONE, acc = 0;
	__u32 rule = 0;
	bool granted = false;
	int ret;

	if (!io)
		return 1;
	d = (struct dentry *)io->dentry;
	c.sc = sbx_scratch();
#pragma unroll
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		if (io->v[a] == SBX_V_ASK && (io->s.pol.flags & SBX_PF_HAS_GRANTS) &&
		    sbx_file_granted(&c, &gk, io->cgid, d, a)) {
			io->v[a] = SBX_V_AUDIT;
			io->rule[a] = SBX_RULE_GRANT;
			granted = true;
		}
		if (io->v[a] > v) {
			v = io->v[a];
			rule = io->rule[a];
			acc = a;
		}
	}
	if (granted)
		sbx_stat_inc(SBX_STAT_GRANT_USED);
	if (v <= SBX_V_ALLOW)
		return 0;

	ret = sbx_verdict_ret(v);
	sbx_count_verdict(v);
	e = sbx_event_begin(&io->s, io->cgid, io->op, v, rule, ret);
	if (!e)
		return ret != 0;
	e->access = acc;
	e->flags = SBX_EVF_FILE | (io->walk_trunc ? SBX_EVF_WALK_TRUNC : 0);
	inode = BPF_CORE_READ(d, d_inode);
	if (inode) {
		e->dev = BPF_CORE_READ(inode, i_sb, s_dev);
		e->ino = BPF_CORE_READ(inode, i_ino);
	} else {
		struct inode *dir = BPF_CORE_READ(d, d_parent, d_inode);

		e->flags |= SBX_EVF_NEW_NAME;
		e->dev = BPF_CORE_READ(dir, i_sb, s_dev);
		e->ino = BPF_CORE_READ(dir, i_ino);
		if (c.sc && sbx_hash_name(&c, d))
			e->name_hash = c.sc->walk.h_fwd;
	}
	if (io->peer)
		sbx_event_peer(e, (struct sock *)io->peer);
	sbx_event_describe(io->vfsmount, io->dentry);
	sbx_event_send(e);
	return ret != 0;
}
