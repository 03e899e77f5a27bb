/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbx_storage.h - local storage: what the programs keep on a socket
 * (listeners, remembered datagram verdicts, owners), on an inode (file
 * verdicts, FIFO and pty owners) and on a task (the scratch a check works
 * in beyond the 512-byte stack).
 */
#ifndef SBX_STORAGE_H
#define SBX_STORAGE_H

#include "sbx_maps.h"
#include "sbx_values.h"

/* listeners the daemon vouches for or hides (see enum sbx_listener_flags) */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_listener);
} sbx_listeners SEC(".maps");

/*
 * A datagram socket's last allowed destination: a stream of datagrams to
 * one peer (QUIC, DNS, RTP, a server of the session on loopback) then
 * costs one storage lookup instead of two LPM lookups, a learned-address
 * lookup and a listener lookup each. Two answers are kept under their own
 * epochs, and a hit needs both:
 * - the destination's verdict (dns.bpf.c), for the session that decided
 *   it, while the daemon has changed nothing a network decision reads
 *   (SBX_EPOCH_NET: it moves when a session's entry, and so its policy,
 *   changes too), and until the learned address it relied on expires.
 *   Only plain allows are kept: whatever makes an event, and DNS to the
 *   session's resolver, is decided each time;
 * - for a loopback destination, that its listener is the session's own
 *   (or, for a socket outside every session, inbound.bpf.c, not a
 *   session's). The listener found can change only when a datagram socket
 *   takes, leaves or re-addresses a port, or a socket changes session;
 *   each moves SBX_EPOCH_PORTS (ports.bpf.c, and sbx_mark_owner). Any
 *   other listener is looked up on every datagram.
 * Threads of a session may send on one socket at once: gen is a sequence
 * count (odd while the entry is being written), so that a reader never
 * takes half of one destination and half of another for a match.
 */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_dcache);
} sbx_dcache SEC(".maps");

/* who is at the daemon's end of a control connection (struct sbx_ctl_peer) */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_ctl_peer);
} sbx_ctl_peers SEC(".maps");

/* the destination a redirected socket asked for */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_dns_orig);
} sbx_dns_sk SEC(".maps");

/* the session that gave an inet socket its port (bind, listen, its first
 * datagram: network.bpf.c): whose a loopback listener is (dns.bpf.c) */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} sbx_sk_owner SEC(".maps");

/* a named FIFO or a POSIX message queue that a session made -> that
 * session */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} sbx_chan_owner SEC(".maps");

/*
 * The last file verdicts of an inode, for the session policy that made
 * them: a build opens the same headers thousands of times, and the walk
 * up to the root is the expensive part. A verdict depends on the names
 * above the inode and the mounts it was reached through, so it is valid
 * only for the same policy, the same vfsmount, and while no rename, link
 * or mount change has happened anywhere (rename_epoch) and the protected
 * set is unchanged (daemon_epoch). Inodes with several links are never
 * cached: another name may decide differently.
 */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_vcache);
} sbx_vcache SEC(".maps");

/*
 * sbx_vcache for the landlock tier, where the kernel has no inode blob
 * for BPF (no BPF-LSM): the same value, keyed by the inode's address.
 * An address outlives nothing: sbx_ll_inode_free (files.bpf.c) drops the
 * entry when the inode is destroyed, before its memory can hold another
 * inode, and while no link exists (no session) nothing is trusted, since
 * the daemon moves SBX_EPOCH_RENAME when it makes the links again. LRU:
 * a full map forgets the oldest verdicts, which only costs a walk.
 */
#define SBX_LL_VCACHE_ENTRIES 32768
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SBX_LL_VCACHE_ENTRIES);
	__type(key, __u64);
	__type(value, struct sbx_vcache);
} sbx_ll_vcache SEC(".maps");

/*
 * The session that made a pty, kept on its slave's devpts inode
 * (tty.bpf.c): the mark lives and dies with that inode, so a pty index
 * that an outside process takes again later never inherits it.
 */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} sbx_pty_owner SEC(".maps");

/* ---- the per-task scratch ------------------------------------------- */

/* Deeper than any real tree; a walk that reaches it is "cannot finish". */
#define SBX_WALK_MAX	1024

/*
 * The state of one file decision walk (see walk.bpf.c). It lives in the
 * task's scratch, not on the stack: the verifier does not track what a map
 * value holds, so every bpf_loop() callback of the walk starts from the
 * same abstract state and is verified in a few passes. From 6.7 the
 * verifier re-checks a callback until its states converge; with the walk
 * state on the stack every level, score and hash made a new state, and
 * bprm_check went past the 1M instruction limit. Before 6.7 a callback was
 * checked once and branches never seen taken were dropped; values loaded
 * from a map are unknown to it, so nothing is dropped there either.
 */
struct sbx_walk {
	__u32 policy_id;
	__u8  acc_mask;		/* SBX_ACCBIT()s being decided */
	__u8  max_chain;
	__u8  builtins;		/* writes: also look for .sandbox and protected inodes */
	__u8  error;
	__u8  done;		/* reached the root, or nothing above can matter */
	__u8  disconnected;	/* ended at a dentry that no mount reaches */
	__u8  anchor_mask;	/* chain_mask of the inode being looked at */
	__u8  anchor_floor;	/* the least verdict its chain rules may give */
	__u16 name_len;		/* length of the component being looked at */
	__u16 _pad1;
	__u32 level;
	__u32 builtin_rule;	/* non-zero: a built-in protection matched */
	__u32 anchor_dev;
	__u64 anchor_ino;
	__u64 h_fwd, h_rev;	/* hashes being computed by the byte steps */
	__u64 exact_mask, prefix_mask, suffix_mask;
	__u64 dentry;		/* struct dentry * at the current level */
	__u64 mnt;		/* struct mount * it belongs to */
	__u64 best[SBX_ACC_MAX];	/* scores, see sbx_score() */
	__u64 hash[SBX_CHAIN_MAX];	/* component hash by level % SBX_CHAIN_MAX */
};

/* The state of one path string being built for an event. */
struct sbx_pathw {
	__u64 dentry;
	__u64 mnt;
	__u32 off;		/* start of the string in sbx_tscratch.path */
	__u32 floor;		/* it may not start below this */
	__u8  trunc;
	__u8  _pad[7];
};

/* What one file check carries between its hook and walk.bpf.c. */
struct sbx_file_io {
	struct sbx_session s;		/* copy of the session's value */
	__u64 cgid;
	__u64 vfsmount;			/* struct vfsmount * */
	__u64 dentry;			/* the object, maybe a negative dentry */
	__u8  acc_mask;			/* SBX_ACCBIT()s asked */
	__u8  walk_trunc;		/* out: the walk could not finish */
	__u16 op;			/* enum sbx_op, for the event */
	__u8  v[SBX_ACC_MAX];		/* out: verdict per class, NONE if not asked */
	__u8  no_cache;			/* out: an error decided; keep it out of the cache */
	__u32 rule[SBX_ACC_MAX];	/* out: the rule that decided */
	__u64 peer;			/* struct sock *: a unix listener, for the event */
};

/*
 * path[] is larger than the event's path so that prepending a component of
 * up to 255 bytes at any offset below 1024 stays provably in bounds.
 */
#define SBX_SCRATCH_PATH 1280

/*
 * What a check needs beyond the 512-byte BPF stack: the walk, a name and
 * its hashes, a path being built, and the event being filled in. It is
 * task local storage, not a per-CPU array, because a task can be preempted
 * in the middle of a check (CONFIG_PREEMPT_DYNAMIC kernels booted with
 * preempt=full, PREEMPT_RT) and another task's check on the same CPU would
 * then overwrite the walk that decides for the first.
 */
struct sbx_tscratch {
	struct sbx_file_io io;
	struct sbx_walk walk;
	struct sbx_pathw pw;
	char name[SBX_NAME_MAX + 1];
	__u64 pre[64];		/* prefix hash of the first L bytes, by L */
	__u64 suf[64];		/* suffix hash of the last L bytes, by L */
	char path[SBX_SCRATCH_PATH];
	struct sbx_event ev;
	/* a FIFO or message queue being made by this task (ipc.bpf.c):
	 * path_mknod or inode_create names the dentry, d_instantiate gives
	 * it its inode */
	__u64 mknod_dentry;
	__u64 mknod_cgid;
	__u64 mknod_ns;
	/* a verdict of the landlock tier's hooks (network.bpf.c): the
	 * fentry half decides, the fmod_ret half returns what was decided
	 * for this object (a socket, a peer) */
	__u64 ll_key;
	__s32 ll_ret;
};

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_tscratch);
} sbx_tscratch SEC(".maps");

/*
 * The current task's scratch, made on first use. NULL only when the
 * kernel has no memory for it; callers then fail closed.
 */
static __always_inline struct sbx_tscratch *sbx_scratch(void)
{
	return bpf_task_storage_get(&sbx_tscratch, bpf_get_current_task_btf(), 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/*
 * A socket's storage, made on first use. Two threads that make it at
 * once race in the kernel (BPF_NOEXIST): the one that loses gets NULL
 * although the entry now exists, so NULL is believed only after a second
 * look (a failed send of a multithreaded sender otherwise).
 */
#define sbx_sk_storage_make(map, sk) ({					\
	void *_v = bpf_sk_storage_get(map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);	\
	if (!_v)							\
		_v = bpf_sk_storage_get(map, sk, 0, 0);			\
	_v;								\
})

/* ---- remembered datagram verdicts (network.bpf.c, dns.bpf.c) ---- */

struct sbx_dest {
	/* the bytes as the LPM keys and events take them; the words as a
	 * datagram's hot path builds and compares them (little-endian: an
	 * IPv4 address is the low half of w[0]) */
	union {
		__u8  addr[16];
		__u64 w[2];
	};
	__u16 family;		/* AF_INET or AF_INET6 after unmapping */
	__u16 port;		/* host order */
	__u8  proto;
};

/*
 * The entry's sequence count around its reads and writes (a seqcount, as
 * the kernel's): the BPF JIT keeps the program's order of loads and of
 * stores, x86 does not reorder loads with loads nor stores with stores,
 * and the empty asm keeps the compiler from moving them across.
 */
#define sbx_barrier() asm volatile("" ::: "memory")

/* what a remembered destination answers (sbx_dcache_hit) */
enum sbx_dcache_answer {
	SBX_DC_MISS = 0,
	SBX_DC_VERDICT,		/* the verdict; its listener is looked up */
	SBX_DC_WHOLE,		/* the verdict and the listener: nothing more */
};

/*
 * A remembered destination answers for one destination, for the session
 * that decided it (cgid), at the epochs read before it was decided: net
 * (SBX_EPOCH_NET), and lo, SBX_EPOCH_PORTS for a loopback destination or
 * 0 for any other. *gen is the count the answer was read under, for
 * sbx_dcache_put_lo.
 */
static __always_inline int sbx_dcache_hit(struct sbx_dcache *c, __u64 cgid,
					  const struct sbx_dest *d, __u64 net, __u64 lo,
					  __u32 *gen)
{
	__u32 g = *(volatile __u32 *)&c->gen;
	__u64 diff;
	bool same, whole;

	if (g & 1)
		return SBX_DC_MISS;	/* being written */
	sbx_barrier();
	same = c->cgid == cgid && c->epoch == net &&
	       c->family == d->family && c->port == d->port && c->proto == d->proto;
	diff = (c->w[0] ^ d->w[0]) | (c->w[1] ^ d->w[1]);
	same = same && !diff &&
	       (c->expires_ns == ~0ull || bpf_ktime_get_boot_ns() <= c->expires_ns);
	whole = c->lo_epoch == lo;
	sbx_barrier();
	if (!same || *(volatile __u32 *)&c->gen != g)
		return SBX_DC_MISS;
	*gen = g;
	return whole && lo != ~0ull ? SBX_DC_WHOLE : SBX_DC_VERDICT;
}

static __always_inline void sbx_dcache_put(struct sbx_dcache *c, __u64 cgid,
					   const struct sbx_dest *d, __u64 net, __u64 lo,
					   __u64 expires)
{
	__u32 gen = *(volatile __u32 *)&c->gen;

	/* a writer that finds another mid-write leaves the entry to it */
	if ((gen & 1) || __sync_val_compare_and_swap(&c->gen, gen, gen + 1) != gen)
		return;
	sbx_barrier();
	c->cgid = cgid;
	c->epoch = net;
	c->lo_epoch = lo;
	c->expires_ns = expires;
	c->family = d->family;
	c->port = d->port;
	c->proto = d->proto;
	c->w[0] = d->w[0];
	c->w[1] = d->w[1];
	sbx_barrier();
	*(volatile __u32 *)&c->gen = gen + 2;
}

/* the listener of the destination read under gen was found too: written
 * only if the entry is still that one */
static __always_inline void sbx_dcache_put_lo(struct sbx_dcache *c, __u32 gen, __u64 lo)
{
	if (__sync_val_compare_and_swap(&c->gen, gen, gen + 1) != gen)
		return;
	sbx_barrier();
	c->lo_epoch = lo;
	sbx_barrier();
	*(volatile __u32 *)&c->gen = gen + 2;
}

#endif /* SBX_STORAGE_H */
