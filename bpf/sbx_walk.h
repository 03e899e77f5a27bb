/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbx_walk.h - the file decision: a bounded walk from the object up
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
 * policy/decide.c is the user-space twin of this file.
 */
#ifndef SBX_WALK_H
#define SBX_WALK_H

#include "sbx_common.h"

/* Deeper than any real tree; a walk that reaches it is "cannot finish". */
#define SBX_WALK_MAX	1024

/*
 * A candidate is one 64-bit score, smaller = better:
 *   level (16 bits) | rank (2) | 7 - verdict (3) | rule id (32)
 * so "closest, then most exact, then strictest, then lowest rule id" is a
 * single unsigned compare. Besides being the whole specificity order in
 * one place, this keeps the verifier's state count small: a branchy
 * struct merge multiplied paths until the 1M instruction limit.
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

struct sbx_walk {
	__u32 policy_id;
	__u8  acc_mask;		/* SBX_ACCBIT()s being decided */
	__u8  max_chain;
	__u8  builtins;		/* writes: also look for .sandbox and protected inodes */
	__u8  error;
	__u8  done;		/* reached the root, or nothing above can matter */
	__u8  disconnected;	/* ended at a dentry that no mount reaches */
	__u8  anchor_mask;	/* chain_mask of the inode being looked at */
	__u16 name_len;		/* length of the component being looked at */
	__u64 h_fwd, h_rev;	/* hashes being computed by the byte steps */
	__u32 level;
	__u32 builtin_rule;	/* non-zero: a built-in protection matched */
	__u32 anchor_dev;
	__u64 anchor_ino;
	__u64 exact_mask, prefix_mask, suffix_mask;
	__u64 dentry;		/* struct dentry * at the current level */
	__u64 mnt;		/* struct mount * it belongs to */
	__u64 best[SBX_ACC_MAX];	/* scores */
	__u64 hash[SBX_CHAIN_MAX];	/* component hash by level % SBX_CHAIN_MAX */
};

static __always_inline void sbx_cand_one(__u64 *best, __u8 v, __u32 rule, __u32 level,
					 __u8 rank)
{
	__u64 s = sbx_score(level, rank, v, rule);

	if (v != SBX_V_NONE && s < *best)
		*best = s;
}

static __always_inline void sbx_cand(struct sbx_walk *w, const struct sbx_file_rule *r,
				     __u32 level, __u8 rank)
{
	if (w->acc_mask & SBX_ACCBIT(SBX_ACC_READ))
		sbx_cand_one(&w->best[SBX_ACC_READ], r->verdict[SBX_ACC_READ],
			     r->rule_id[SBX_ACC_READ], level, rank);
	if (w->acc_mask & SBX_ACCBIT(SBX_ACC_WRITE))
		sbx_cand_one(&w->best[SBX_ACC_WRITE], r->verdict[SBX_ACC_WRITE],
			     r->rule_id[SBX_ACC_WRITE], level, rank);
	if (w->acc_mask & SBX_ACCBIT(SBX_ACC_EXEC))
		sbx_cand_one(&w->best[SBX_ACC_EXEC], r->verdict[SBX_ACC_EXEC],
			     r->rule_id[SBX_ACC_EXEC], level, rank);
}

static __always_inline void sbx_name_lookup(struct sbx_walk *w, __u8 kind, __u8 len,
					    __u64 hash, __u8 rank)
{
	struct sbx_name_key k = {
		.policy_id = w->policy_id, .kind = kind, .len = len, .hash = hash,
	};
	struct sbx_file_rule *r = bpf_map_lookup_elem(&sbx_name_rules, &k);

	if (r)
		sbx_cand(w, r, w->level, rank);
}

/* One chain length m below the anchor in w (a bpf_loop callback, so the
 * verifier checks it once rather than once per m). */
static long sbx_chain_step(__u32 i, void *ctx)
{
	struct sbx_walk *w = ctx;
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
		sbx_cand(w, cr, w->level - m, SBX_RANK_EXACT);
	return 0;
}

/* Inode identity of one dentry, plus the chain rules anchored on it. */
static __always_inline void sbx_walk_inode(struct sbx_walk *w, struct dentry *d)
{
	struct inode *inode = BPF_CORE_READ(d, d_inode);
	struct sbx_inode_key k = {};
	struct sbx_file_rule *r;

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

	r = bpf_map_lookup_elem(&sbx_inode_rules, &k);
	if (!r)
		return;
	sbx_cand(w, r, w->level, SBX_RANK_EXACT);
	if (!r->chain_mask || !w->level)
		return;
	w->anchor_mask = r->chain_mask;
	w->anchor_dev = k.dev;
	w->anchor_ino = k.ino;
	bpf_loop(SBX_CHAIN_MAX, sbx_chain_step, w, 0);
}

/* Wildcard basenames of literal length L = i + 1 (bpf_loop callback). */
static long sbx_glob_step(__u32 i, void *ctx)
{
	struct sbx_walk *w = ctx;
	struct sbx_scratch *sc;
	__u32 zero = 0, L = i + 1;

	if (L > w->name_len || L > SBX_GLOB_LIT_MAX)
		return 1;
	sc = bpf_map_lookup_elem(&sbx_scratch, &zero);
	if (!sc)
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
	struct sbx_walk *w = ctx;
	struct sbx_scratch *sc;
	__u32 zero = 0;

	if (i >= w->name_len)
		return 1;
	sc = bpf_map_lookup_elem(&sbx_scratch, &zero);
	if (!sc)
		return 1;
	w->h_fwd = (w->h_fwd ^ (__u8)sc->name[i & SBX_NAME_MAX]) * SBX_FNV_PRIME;
	if (i < SBX_GLOB_LIT_MAX)
		sc->pre[(i + 1) & 63] = w->h_fwd;
	return 0;
}

/* FNV-1a over the last bytes in reverse: the hash of every suffix */
static long sbx_hash_rev_step(__u32 i, void *ctx)
{
	struct sbx_walk *w = ctx;
	struct sbx_scratch *sc;
	__u32 zero = 0;

	if (i >= w->name_len)
		return 1;
	sc = bpf_map_lookup_elem(&sbx_scratch, &zero);
	if (!sc)
		return 1;
	w->h_rev = (w->h_rev ^ (__u8)sc->name[(w->name_len - 1 - i) & SBX_NAME_MAX]) *
		   SBX_FNV_PRIME;
	sc->suf[(i + 1) & 63] = w->h_rev;
	return 0;
}

/*
 * The component name of this level: hashed only when some rule could
 * care about a name of this length, so most components cost nothing.
 */
static __always_inline void sbx_walk_name(struct sbx_walk *w, struct dentry *d)
{
	__u32 len = BPF_CORE_READ(d, d_name.len);
	const unsigned char *np = BPF_CORE_READ(d, d_name.name);
	__u64 upto = len >= 63 ? ~0ULL : ((1ULL << (len + 1)) - 1);
	bool exact = len > SBX_GLOB_LIT_MAX ? (w->exact_mask & 1) :
					       (w->exact_mask >> len) & 1;
	bool globs = (w->prefix_mask | w->suffix_mask) & upto;
	bool sandbox = w->builtins && len == 8;
	struct sbx_scratch *sc;
	__u32 zero = 0;
	__u64 h;

	if (!(w->max_chain || exact || globs || sandbox))
		return;
	sc = bpf_map_lookup_elem(&sbx_scratch, &zero);
	if (!sc) {
		w->error = 1;
		return;
	}
	len &= SBX_NAME_MAX;
	if (bpf_probe_read_kernel(sc->name, len, np)) {
		w->error = 1;
		return;
	}
	/* Byte loops run as bpf_loop callbacks: a bounded loop with a
	 * data-dependent exit made the verifier re-check everything after
	 * it once per possible name length. */
	w->name_len = len;
	w->h_fwd = SBX_FNV_OFFSET;
	bpf_loop(SBX_NAME_MAX, sbx_hash_fwd_step, w, 0);
	h = w->h_fwd;
	w->hash[w->level & (SBX_CHAIN_MAX - 1)] = h;
	if (exact)
		sbx_name_lookup(w, SBX_NAME_EXACT, len > SBX_GLOB_LIT_MAX ? 0 : len, h,
				SBX_RANK_NAME);
	if (globs) {
		w->h_rev = SBX_FNV_OFFSET;
		bpf_loop(SBX_GLOB_LIT_MAX, sbx_hash_rev_step, w, 0);
		bpf_loop(SBX_GLOB_LIT_MAX, sbx_glob_step, w, 0);
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
	struct sbx_walk *w = ctx;
	struct dentry *d = (struct dentry *)w->dentry;
	struct mount *m = (struct mount *)w->mnt;
	struct dentry *mnt_root = BPF_CORE_READ(m, mnt.mnt_root);
	struct dentry *parent;

	sbx_walk_inode(w, d);

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

	sbx_walk_name(w, d);
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

static __always_inline struct mount *sbx_real_mount(struct vfsmount *mnt)
{
	return (void *)mnt - bpf_core_field_offset(struct mount, mnt);
}

/* Result of one file decision, per access class asked. */
struct sbx_file_verdict {
	__u8  v[SBX_ACC_MAX];	/* SBX_V_NONE for classes not asked */
	__u8  walk_trunc;
	__u32 rule[SBX_ACC_MAX];
};

/* Directories and files with one name: what a cached verdict can stand
 * for. inode is a BTF pointer (see sbx_decide_file): plain loads. */
static __always_inline bool sbx_cacheable(struct inode *inode)
{
	return (inode->i_mode & 0170000) == 0040000 || inode->__i_nlink == 1;
}

static __always_inline __u32 sbx_fs_magic(struct dentry *d)
{
	return BPF_CORE_READ(d, d_sb, s_magic);
}

/*
 * Pipes, sockets, memfds and anon inodes live on the kernel's internal
 * mounts, which no path reaches (only /proc/self/fd re-opens them). They
 * are not files a policy can name, so file rules do not apply to them;
 * exec of a memfd is decided separately.
 */
#define SBX_MNT_NS_INTERNAL ((__u64)-22)	/* ERR_PTR(-EINVAL), fs/mount.h */

static __always_inline bool sbx_internal_mount(struct vfsmount *vmnt)
{
	struct mount *m = (void *)vmnt - bpf_core_field_offset(struct mount, mnt);

	return (__u64)BPF_CORE_READ(m, mnt_ns) == SBX_MNT_NS_INTERNAL;
}

#define PROC_SUPER_MAGIC	0x9fa0
#define SYSFS_MAGIC		0x62656572

/*
 * Writes on procfs are allowed only to files of processes inside the
 * session (/proc/self/oom_score_adj, /proc/self/attr/...). Everything
 * else there, /proc/sys and /proc/sysrq-trigger above all, is how a root
 * process reconfigures the whole machine: core_pattern alone runs a
 * program as root outside any container or sandbox.
 */
static __always_inline bool sbx_proc_write_ok(struct dentry *d, __u64 cgid)
{
	struct inode *inode = BPF_CORE_READ(d, d_inode);
	struct hlist_node *first;
	struct task_struct *t;
	struct pid *pid;

	if (!inode)
		return false;
	pid = BPF_CORE_READ((struct proc_inode *)((void *)inode -
			    bpf_core_field_offset(struct proc_inode, vfs_inode)), pid);
	if (!pid)
		return false;
	first = BPF_CORE_READ(pid, tasks[PIDTYPE_PID].first);
	if (!first)
		return false;
	t = (void *)first - bpf_core_field_offset(struct task_struct, pid_links);
	return sbx_task_session(t) == cgid;
}

static __always_inline bool sbx_pseudo_fs(__u32 magic)
{
	return magic == CGROUP2_SUPER_MAGIC || magic == CGROUP_SUPER_MAGIC ||
	       magic == BPF_FS_MAGIC || magic == SECURITYFS_MAGIC ||
	       magic == DEBUGFS_MAGIC || magic == TRACEFS_MAGIC || magic == SYSFS_MAGIC;
}

/*
 * Decide access classes acc_mask for the object (mnt, d). d may be a
 * negative dentry (a name about to be created). Fail closed: an error
 * in the walk denies.
 */
/*
 * bi is the object's inode as a BTF pointer (from a hook argument, not a
 * probe read), which inode local storage needs; NULL: no verdict cache.
 */
static __always_inline void sbx_decide_file(const struct sbx_session *s, __u64 cgid,
					    struct vfsmount *vmnt, struct dentry *d,
					    struct inode *bi, __u8 acc_mask,
					    struct sbx_file_verdict *out)
{
	struct sbx_walk w = {};
	struct sbx_vcache *vc;
	__u64 *re, *de;
	struct inode *inode;
	__u64 r_epoch = 0, d_epoch = 0;
	__u32 k_ren = SBX_EPOCH_RENAME, k_dmn = SBX_EPOCH_DAEMON;
	bool cache_it = false;
	long n = 0;
	__u64 z;

	__builtin_memset(out, 0, sizeof(*out));

	if (!(acc_mask & SBX_ACCBIT(SBX_ACC_EXEC)) && sbx_internal_mount(vmnt))
		return;		/* all NONE: allowed */
	if (acc_mask & SBX_ACCBIT(SBX_ACC_WRITE)) {
		__u32 magic = sbx_fs_magic(d);

		if (sbx_pseudo_fs(magic) ||
		    (magic == PROC_SUPER_MAGIC && !sbx_proc_write_ok(d, cgid))) {
			out->v[SBX_ACC_WRITE] = SBX_V_DENY;
			out->rule[SBX_ACC_WRITE] = SBX_RULE_PSEUDOFS;
			return;
		}
	}

	inode = bi;
	re = bpf_map_lookup_elem(&sbx_epoch, &k_ren);
	de = bpf_map_lookup_elem(&sbx_epoch, &k_dmn);
	if (inode && re && de && sbx_cacheable(inode)) {
		vc = bpf_inode_storage_get(&sbx_vcache, inode, 0, 0);
		if (vc && vc->policy_id == s->pol.policy_id && vc->mnt == (__u64)vmnt &&
		    vc->rename_epoch == *re && vc->daemon_epoch == *de &&
		    (vc->valid & acc_mask) == acc_mask) {
#pragma unroll
			for (int a = 0; a < SBX_ACC_MAX; a++) {
				if (acc_mask & SBX_ACCBIT(a)) {
					out->v[a] = vc->v[a];
					out->rule[a] = vc->rule[a];
				}
			}
			sbx_stat_inc(SBX_STAT_CACHE_HIT);
			return;
		}
		/* remember where the epochs stood before the walk: a rename
		 * during it must not let a stale verdict in */
		r_epoch = *re;
		d_epoch = *de;
		cache_it = true;
	}

	w.policy_id = s->pol.policy_id;
	w.acc_mask = acc_mask;
	w.max_chain = s->pol.max_chain;
	w.builtins = !!(acc_mask & SBX_ACCBIT(SBX_ACC_WRITE));
	w.exact_mask = s->pol.exact_len_mask;
	w.prefix_mask = s->pol.prefix_len_mask;
	w.suffix_mask = s->pol.suffix_len_mask;
	w.dentry = (__u64)d;
	w.mnt = (__u64)sbx_real_mount(vmnt);
	if (!sbx_opaque_zero(&z)) {
		w.error = 1;
		goto out;
	}
	/* see sbx_opaque_zero(): both change across iterations */
	w.level = z;
	w.best[0] = w.best[1] = w.best[2] = SBX_SCORE_NONE ^ z;

	n = bpf_loop(SBX_WALK_MAX, sbx_walk_step, &w, 0);
out:
	if (n < 0 || w.error) {
		sbx_stat_inc(SBX_STAT_ERRORS);
		#pragma unroll
		for (int a = 0; a < SBX_ACC_MAX; a++) {
			if (acc_mask & SBX_ACCBIT(a)) {
				out->v[a] = SBX_V_DENY;
				out->rule[a] = SBX_RULE_ERROR;
			}
		}
		return;
	}
	if (w.disconnected) {
		/* Nothing above the object can be seen: fail closed for every
		 * class (an internal object would not have got this far). */
		sbx_stat_inc(SBX_STAT_WALK_TRUNC);
		out->walk_trunc = 1;
#pragma unroll
		for (int a = 0; a < SBX_ACC_MAX; a++) {
			if (acc_mask & SBX_ACCBIT(a)) {
				out->v[a] = SBX_V_DENY;
				out->rule[a] = SBX_RULE_WALK_LIMIT;
			}
		}
		return;
	}
	if (!w.done) {
		/* Could not reach the root. Rules found so far stand (nothing
		 * above them could have been more specific) and the default
		 * applies otherwise; a write is denied because a built-in
		 * protection may sit above. */
		sbx_stat_inc(SBX_STAT_WALK_TRUNC);
		out->walk_trunc = 1;
		if (acc_mask & SBX_ACCBIT(SBX_ACC_WRITE))
			w.builtin_rule = SBX_RULE_WALK_LIMIT;
	}

#pragma unroll
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		if (!(acc_mask & SBX_ACCBIT(a)))
			continue;
		if (a == SBX_ACC_WRITE && w.builtin_rule) {
			out->v[a] = SBX_V_DENY;
			out->rule[a] = w.builtin_rule;
		} else if (w.best[a] != SBX_SCORE_NONE) {
			out->v[a] = sbx_score_verdict(w.best[a]);
			out->rule[a] = (__u32)w.best[a];
		} else {
			out->v[a] = s->pol.file_default[a];
			out->rule[a] = s->pol.file_default_rule[a];
			if (out->v[a] == SBX_V_NONE)
				out->v[a] = SBX_V_DENY;	/* a header without defaults is a bug */
		}
	}
	if (!cache_it || out->walk_trunc)
		return;
	vc = bpf_inode_storage_get(&sbx_vcache, inode, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!vc)
		return;		/* no memory: just no cache */
	if (vc->policy_id != s->pol.policy_id || vc->mnt != (__u64)vmnt ||
	    vc->rename_epoch != r_epoch || vc->daemon_epoch != d_epoch) {
		vc->valid = 0;
		vc->policy_id = s->pol.policy_id;
		vc->mnt = (__u64)vmnt;
		vc->rename_epoch = r_epoch;
		vc->daemon_epoch = d_epoch;
	}
#pragma unroll
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		if (acc_mask & SBX_ACCBIT(a)) {
			vc->v[a] = out->v[a];
			vc->rule[a] = out->rule[a];
		}
	}
	vc->valid |= acc_mask;
}

/* ---- path strings, for people (events only) -------------------------- */

struct sbx_pathw {
	__u64 dentry;
	__u64 mnt;
	__u32 off;		/* start of the string in sbx_scratch.path */
	__u32 floor;		/* it may not start below this */
	__u8  trunc;
};

#define SBX_PATH_END	(SBX_SCRATCH_PATH - 256 - 1)	/* 1023: the NUL */

static long sbx_path_step(__u32 i, void *ctx)
{
	struct sbx_pathw *p = ctx;
	struct dentry *d = (struct dentry *)p->dentry;
	struct mount *m = (struct mount *)p->mnt;
	struct dentry *parent;
	struct sbx_scratch *sc;
	__u32 zero = 0, len, off;

	if (d == BPF_CORE_READ(m, mnt.mnt_root)) {
		struct mount *up = BPF_CORE_READ(m, mnt_parent);

		if (up == m || !up)
			return 1;
		p->dentry = (__u64)BPF_CORE_READ(m, mnt_mountpoint);
		p->mnt = (__u64)up;
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (!parent || parent == d)
		return 1;
	sc = bpf_map_lookup_elem(&sbx_scratch, &zero);
	if (!sc)
		return 1;
	len = BPF_CORE_READ(d, d_name.len) & SBX_NAME_MAX;
	off = p->off;
	if (off < p->floor + len + 1) {
		p->trunc = 1;
		return 1;
	}
	off -= len;
	bpf_probe_read_kernel(&sc->path[off & 1023], len, BPF_CORE_READ(d, d_name.name));
	off -= 1;
	sc->path[off & 1023] = '/';
	p->off = off;
	p->dentry = (__u64)parent;
	return 0;
}

/*
 * Build the path of (mnt, d) right-aligned in scratch, keeping at most
 * size bytes with the NUL; returns where the string starts relative to
 * SBX_PATH_END + 1 - size, and whether its head was cut off.
 */
static __always_inline __u32 sbx_build_path(struct vfsmount *vmnt, struct dentry *d, __u32 size,
					    __u8 *trunc)
{
	struct sbx_pathw p = {
		.dentry = (__u64)d,
		.mnt = (__u64)sbx_real_mount(vmnt),
		.floor = SBX_PATH_END + 1 - size,
	};
	struct sbx_scratch *sc;
	__u32 zero = 0;
	__u64 z;

	sc = bpf_map_lookup_elem(&sbx_scratch, &zero);
	if (!sc || !sbx_opaque_zero(&z))
		return size - 1;
	p.off = SBX_PATH_END - (z & 1);	/* see sbx_opaque_zero() */
	sc->path[SBX_PATH_END] = 0;
	bpf_loop(SBX_WALK_MAX, sbx_path_step, &p, 0);
	if (p.off == SBX_PATH_END) {
		p.off--;
		sc->path[SBX_PATH_END - 1] = '/';
	}
	*trunc = p.trunc;
	return p.off - p.floor;
}

/* Fill e->path with the object's path, right-aligned (see bpfsbx.h). */
static __always_inline void sbx_event_path(struct sbx_event *e, struct vfsmount *vmnt,
					   struct dentry *d)
{
	struct sbx_scratch *sc;
	__u32 zero = 0, off;
	__u8 trunc = 0;

	off = sbx_build_path(vmnt, d, SBX_EVENT_PATH_MAX, &trunc);
	sc = bpf_map_lookup_elem(&sbx_scratch, &zero);
	if (!sc || bpf_probe_read_kernel(e->path, SBX_EVENT_PATH_MAX,
					 &sc->path[SBX_PATH_END + 1 - SBX_EVENT_PATH_MAX]))
		return;
	e->path_off = off & (SBX_EVENT_PATH_MAX - 1);
	if (trunc)
		e->flags |= SBX_EVF_PATH_TRUNC;
}

/*
 * Who is asking: exe and cwd paths and the start of the command line,
 * read now, because a short-lived process is gone before the daemon
 * could look at /proc.
 */
static __always_inline void sbx_event_context(struct sbx_event *e)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct sbx_scratch *sc;
	struct file *exe;
	__u32 zero = 0, off;
	__u8 trunc = 0;
	__u64 a0, a1;

	exe = BPF_CORE_READ(t, mm, exe_file);
	if (exe) {
		off = sbx_build_path(BPF_CORE_READ(exe, f_path.mnt), BPF_CORE_READ(exe, f_path.dentry),
				     SBX_EVENT_CTX_MAX, &trunc);
		sc = bpf_map_lookup_elem(&sbx_scratch, &zero);
		if (sc && !bpf_probe_read_kernel(e->exe, SBX_EVENT_CTX_MAX,
						 &sc->path[SBX_PATH_END + 1 - SBX_EVENT_CTX_MAX]))
			e->exe_off = off & (SBX_EVENT_CTX_MAX - 1);
	}
	off = sbx_build_path(BPF_CORE_READ(t, fs, pwd.mnt), BPF_CORE_READ(t, fs, pwd.dentry),
			     SBX_EVENT_CTX_MAX, &trunc);
	sc = bpf_map_lookup_elem(&sbx_scratch, &zero);
	if (sc && !bpf_probe_read_kernel(e->cwd, SBX_EVENT_CTX_MAX,
					 &sc->path[SBX_PATH_END + 1 - SBX_EVENT_CTX_MAX]))
		e->cwd_off = off & (SBX_EVENT_CTX_MAX - 1);

	a0 = BPF_CORE_READ(t, mm, arg_start);
	a1 = BPF_CORE_READ(t, mm, arg_end);
	if (a1 > a0) {
		__u32 n = a1 - a0 > SBX_EVENT_CTX_MAX ? SBX_EVENT_CTX_MAX : a1 - a0;

		n &= SBX_EVENT_CTX_MAX * 2 - 1;
		if (n > SBX_EVENT_CTX_MAX)
			n = SBX_EVENT_CTX_MAX;
		if (!bpf_probe_read_user(e->args, n, (void *)a0))
			e->args_len = n;
	}
}

/* ---- grants and events ------------------------------------------------ */

struct sbx_hash_ctx {
	__u32 len;
	__u64 h;
};

static long sbx_hash_step(__u32 i, void *ctx)
{
	struct sbx_hash_ctx *c = ctx;
	struct sbx_scratch *sc;
	__u32 zero = 0;

	if (i >= c->len)
		return 1;
	sc = bpf_map_lookup_elem(&sbx_scratch, &zero);
	if (!sc)
		return 1;
	c->h = (c->h ^ (__u8)sc->name[i & SBX_NAME_MAX]) * SBX_FNV_PRIME;
	return 0;
}

/* Component hash of a dentry's name (for grants of names not yet created). */
static __always_inline __u64 sbx_dentry_name_hash(struct dentry *d)
{
	struct sbx_hash_ctx c = { .h = SBX_FNV_OFFSET };
	struct sbx_scratch *sc;
	__u32 zero = 0;

	c.len = BPF_CORE_READ(d, d_name.len) & SBX_NAME_MAX;
	sc = bpf_map_lookup_elem(&sbx_scratch, &zero);
	if (!sc || bpf_probe_read_kernel(sc->name, c.len, BPF_CORE_READ(d, d_name.name)))
		return 0;
	bpf_loop(SBX_NAME_MAX, sbx_hash_step, &c, 0);
	return c.h;
}

/* The grant key of a file object: its inode, or, for a name that does
 * not exist yet, its parent's inode and its name. */
static __always_inline void sbx_file_grant_key(struct sbx_grant_key *k, __u64 cgid,
					       struct dentry *d, __u8 acc)
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
		k->hash = sbx_dentry_name_hash(d);
	}
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
 * Turn per-class verdicts into the hook's answer: a person's grant turns
 * an ask into an allow (never a deny); deny, ask and audit send one
 * event; the strictest class decides.
 */
static __always_inline int sbx_file_finish(const struct sbx_session *s, __u64 cgid,
					   struct vfsmount *vmnt, struct dentry *d,
					   __u16 op, struct sbx_file_verdict *fv)
{
	struct sbx_grant_key gk;
	struct sbx_event *e;
	__u8 v = SBX_V_NONE, acc = 0;
	__u32 rule = 0;
	bool granted = false;
	int ret;

	#pragma unroll
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		if (fv->v[a] == SBX_V_ASK && (s->pol.flags & SBX_PF_HAS_GRANTS)) {
			sbx_file_grant_key(&gk, cgid, d, a);
			if (sbx_grant_valid(&gk)) {
				fv->v[a] = SBX_V_AUDIT;
				fv->rule[a] = SBX_RULE_GRANT;
				granted = true;
			}
		}
		if (fv->v[a] > v) {
			v = fv->v[a];
			rule = fv->rule[a];
			acc = a;
		}
	}
	if (granted)
		sbx_stat_inc(SBX_STAT_GRANT_USED);
	if (v <= SBX_V_ALLOW)
		return 0;

	ret = sbx_verdict_ret(v);
	sbx_count_verdict(v);
	e = sbx_event_begin(s, cgid, op, v, rule, ret);
	if (!e)
		return ret;
	e->access = acc;
	e->flags = SBX_EVF_FILE | (fv->walk_trunc ? SBX_EVF_WALK_TRUNC : 0);
	{
		struct inode *inode = BPF_CORE_READ(d, d_inode);

		if (inode) {
			e->dev = BPF_CORE_READ(inode, i_sb, s_dev);
			e->ino = BPF_CORE_READ(inode, i_ino);
		} else {
			struct inode *dir = BPF_CORE_READ(d, d_parent, d_inode);

			e->flags |= SBX_EVF_NEW_NAME;
			e->dev = BPF_CORE_READ(dir, i_sb, s_dev);
			e->ino = BPF_CORE_READ(dir, i_ino);
			e->name_hash = sbx_dentry_name_hash(d);
		}
	}
	sbx_event_path(e, vmnt, d);
	sbx_event_context(e);
	sbx_event_submit(e);
	return ret;
}

/* The whole check for one object, as the file hooks use it; they call
 * sbx_maybe_in_session() first. */
static __always_inline int sbx_check_file(struct vfsmount *vmnt, struct dentry *d,
					  struct inode *bi, __u8 acc_mask, __u16 op)
{
	struct sbx_file_verdict fv;
	struct sbx_session *s;
	__u64 cgid = 0;

	s = sbx_session_lookup(&cgid);
	if (!s)
		return 0;
	sbx_stat_inc(SBX_STAT_CHECKS);
	sbx_decide_file(s, cgid, vmnt, d, bi, acc_mask, &fv);
	return sbx_file_finish(s, cgid, vmnt, d, op, &fv);
}
#endif /* SBX_WALK_H */
