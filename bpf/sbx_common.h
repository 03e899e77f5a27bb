/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbx_common.h - kernel-only definitions shared by the BPF objects:
 * every map (defined once, in sessions.bpf.c, and extern elsewhere; the
 * files are linked into one object by `bpftool gen object`), the subject
 * lookup, statistics and event emission.
 */
#ifndef SBX_COMMON_H
#define SBX_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "bpfsbx.h"

#define EPERM		1
#define ENOMEM		12
#define EACCES		13
#define AF_UNSPEC	0
#define AF_UNIX		1
#define AF_INET		2
#define AF_INET6	10

#define FMODE_READ	0x1
#define FMODE_WRITE	0x2
#define FMODE_EXEC	0x20
#define __FMODE_EXEC	0x20		/* the open flag of open_exec() */
#define O_ACCMODE	00000003
#define O_APPEND	00002000
#define O_TRUNC		00001000

/* statfs magics of the file systems no session may write */
#define CGROUP_SUPER_MAGIC	0x27e0eb
#define CGROUP2_SUPER_MAGIC	0x63677270
#define BPF_FS_MAGIC		0xcafe4a11
#define SECURITYFS_MAGIC	0x73636673
#define DEBUGFS_MAGIC		0x64626720
#define TRACEFS_MAGIC		0x74726163

#ifdef SBX_DEFINE_MAPS
#define SBX_MAP
#else
#define SBX_MAP extern
#endif

/* cgroup id of a session -> its policy header (one lookup per hook) */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct sbx_session);
} sbx_sessions SEC(".maps");

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 262144);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbx_inode_key);
	__type(value, struct sbx_file_rule);
} sbx_inode_rules SEC(".maps");

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbx_chain_key);
	__type(value, struct sbx_file_rule);
} sbx_chain_rules SEC(".maps");

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbx_name_key);
	__type(value, struct sbx_file_rule);
} sbx_name_rules SEC(".maps");

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbx_net4_key);
	__type(value, struct sbx_net_rule);
} sbx_net4 SEC(".maps");

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbx_net6_key);
	__type(value, struct sbx_net_rule);
} sbx_net6 SEC(".maps");

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbx_grant_key);
	__type(value, struct sbx_grant);
} sbx_grants SEC(".maps");

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct sbx_protect_key);
	__type(value, __u32);
} sbx_protected SEC(".maps");

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sbx_config);
} sbx_config SEC(".maps");

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SBX_EPOCH_MAX);
	__type(key, __u32);
	__type(value, __u64);
} sbx_epoch SEC(".maps");

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SBX_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} sbx_stats SEC(".maps");

/* listeners the daemon vouches for or hides (see enum sbx_listener_flags) */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_listener);
} sbx_listeners SEC(".maps");

/*
 * A datagram socket's last allowed destination (network.bpf.c): a stream
 * of datagrams to one peer (QUIC, DNS, RTP) then costs one storage lookup
 * instead of two LPM lookups and a learned-address lookup each. It holds
 * for the session that decided it, while the daemon has changed nothing a
 * network decision reads (SBX_EPOCH_NET: it moves when a session's entry,
 * and so its policy, changes too), and until the learned
 * address it relied on expires. Only plain allows are kept: whatever
 * makes an event, and DNS to the session's resolver, is decided each time.
 * Threads of a session may send on one socket at once: gen is a sequence
 * count (odd while the entry is being written), so that a reader never
 * takes half of one destination and half of another for a match.
 */
struct sbx_dcache {
	__u32 gen;
	__u32 _pad;
	__u64 cgid;
	__u64 epoch;		/* the one its map trusts (see sbx_dcache_hit) */
	__u64 expires_ns;	/* CLOCK_BOOTTIME; ~0: no learned address */
	union {			/* 8-aligned: compared as two words */
		__u8  addr[16];
		__u64 w[2];
	};
	__u16 port;
	__u8  family;
	__u8  proto;
};

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_dcache);
} sbx_dcache SEC(".maps");

/*
 * A datagram socket's last loopback destination whose listener was the
 * session's own (dns.bpf.c): a stream to a server of the session then
 * skips the listener lookup. The listener found can change only when a
 * datagram socket takes, leaves or re-addresses a port, or a socket
 * changes session; each moves SBX_EPOCH_PORTS (ports.bpf.c, and
 * sbx_mark_owner), the epoch such an entry is kept at. Same layout and
 * sequence count as sbx_dcache; expires_ns is always ~0.
 */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_dcache);
} sbx_lo_seen SEC(".maps");

/* ports that a socket bound to a device has held (struct sbx_dev_port_key):
 * every TCP and UDP port fits, so it never fills */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbx_dev_port_key);
	__type(value, __u64);
} sbx_dev_ports SEC(".maps");

/* who is at the daemon's end of a control connection (struct sbx_ctl_peer) */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_ctl_peer);
} sbx_ctl_peers SEC(".maps");

/* ---- names (dns.bpf.c, sbx_dns.h) ---- */

/* session cgroup id -> its resolver's sockets */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct sbx_dns_resolver);
} sbx_dns_resolvers SEC(".maps");

/* port (host order) of a session's IPv6 resolver on [::1] -> its cgroup id:
 * no session may name another's (or its own) directly */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u16);
	__type(value, __u64);
} sbx_dns_ports SEC(".maps");

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

/* (session, address) -> what the session's lookups learned about it */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbx_learned_key);
	__type(value, struct sbx_learned);
} sbx_learned SEC(".maps");

/* ---- accomplices without sockets (ipc.bpf.c) ---- */

/* a SysV message queue, semaphore set or shared memory segment (struct
 * kern_ipc_perm *) that a session made -> that session; forgotten when the
 * object is freed. Objects of processes outside, or made before the
 * programs were loaded, have no entry. */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, __u64);
} sbx_ipc_owner SEC(".maps");

/*
 * A key or keyring (struct key *) -> the session that made it, 0 for one
 * made outside. Every key made while the programs are loaded is written,
 * outside ones too: 6.12 has no key_free hook, so an address freed and
 * given to a new key must not keep the old key's session. LRU: the
 * entries of freed keys age out there; an entry that aged out reads as
 * outside (fail closed).
 */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u64);
	__type(value, __u64);
} sbx_key_owner SEC(".maps");

/* a named FIFO or a POSIX message queue that a session made -> that
 * session */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} sbx_chan_owner SEC(".maps");

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);	/* ~11,000 events of 1.4 KiB */
} sbx_events SEC(".maps");

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
struct sbx_vcache {
	__u32 policy_id;
	__u8  valid;			/* SBX_ACCBIT()s that are filled in */
	__u8  v[SBX_ACC_MAX];
	__u32 rule[SBX_ACC_MAX];
	__u32 _pad;
	__u64 mnt;
	__u64 rename_epoch;
	__u64 daemon_epoch;
};

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_vcache);
} sbx_vcache SEC(".maps");

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
	__u8  _pad0;
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
 * Set by the loader before load. Session cgroups are
 * <cgroup2 root>/bpfsbx/<session>, so their level is 2; asking for the
 * ancestor at that level also finds a session's child cgroups.
 */
extern const volatile __u32 sbx_session_level;
/* f_mode bit of overlayfs backing files on kernels that have one (0 on 6.1) */
extern const volatile __u32 sbx_fmode_backing;

/* ~0 when unreadable: never the epoch of a remembered verdict (those
 * are not stored then) */
static __always_inline __u64 sbx_read_epoch(__u32 k)
{
	__u64 *e = bpf_map_lookup_elem(&sbx_epoch, &k);

	return e ? *e : ~0ull;
}

static __always_inline void sbx_bump_epoch(__u32 k)
{
	__u64 *e = bpf_map_lookup_elem(&sbx_epoch, &k);

	if (e)
		__sync_fetch_and_add(e, 1);
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

/*
 * A remembered verdict holds for one destination, for the session that
 * decided it, at the epoch read before it was decided (SBX_EPOCH_NET for
 * sbx_dcache, SBX_EPOCH_PORTS for sbx_lo_seen).
 */
static __always_inline bool sbx_dcache_hit(struct sbx_dcache *c, __u64 cgid,
					   const struct sbx_dest *d, __u64 epoch)
{
	__u32 gen = *(volatile __u32 *)&c->gen;
	__u64 diff;
	bool same;

	if (gen & 1)
		return false;	/* being written */
	sbx_barrier();
	same = c->cgid == cgid && c->epoch == epoch &&
	       c->family == d->family && c->port == d->port && c->proto == d->proto;
	diff = (c->w[0] ^ d->w[0]) | (c->w[1] ^ d->w[1]);
	same = same && !diff &&
	       (c->expires_ns == ~0ull || bpf_ktime_get_boot_ns() <= c->expires_ns);
	sbx_barrier();
	return same && *(volatile __u32 *)&c->gen == gen;
}

static __always_inline void sbx_dcache_put(struct sbx_dcache *c, __u64 cgid,
					   const struct sbx_dest *d, __u64 epoch, __u64 expires)
{
	__u32 gen = *(volatile __u32 *)&c->gen;

	/* a writer that finds another mid-write leaves the entry to it */
	if ((gen & 1) || __sync_val_compare_and_swap(&c->gen, gen, gen + 1) != gen)
		return;
	sbx_barrier();
	c->cgid = cgid;
	c->epoch = epoch;
	c->expires_ns = expires;
	c->family = d->family;
	c->port = d->port;
	c->proto = d->proto;
	c->w[0] = d->w[0];
	c->w[1] = d->w[1];
	sbx_barrier();
	*(volatile __u32 *)&c->gen = gen + 2;
}

/*
 * A rename, link or mount change anywhere: cached verdicts may be stale,
 * and a compiled policy's hard-link scan may have missed a name. The
 * daemon renames only files it has just written (a link made to one in
 * between moves LINK by itself), and it renames on every session start
 * and end: counting those would make every session scan again.
 */
static __always_inline void sbx_names_changed(bool rename)
{
	__u32 k = 0;
	struct sbx_config *c;

	sbx_bump_epoch(SBX_EPOCH_RENAME);
	if (rename) {
		c = bpf_map_lookup_elem(&sbx_config, &k);
		if (c && c->daemon_tgid && (bpf_get_current_pid_tgid() >> 32) == c->daemon_tgid)
			return;
	}
	sbx_bump_epoch(SBX_EPOCH_LINK);
}

static __always_inline void sbx_stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&sbx_stats, &idx);

	if (v)
		*v += 1;	/* per-CPU: no atomics needed */
}

/*
 * What processes outside every session pay: one helper call and a
 * compare. Every session cgroup sits below <cgroup2>/bpfsbx, whose id the
 * daemon stores before it creates the first session there (and again if
 * the directory was ever recreated), so a task whose ancestor one level
 * above the sessions is another cgroup is in none. Until the id is known
 * (0) every task takes the full lookup: the gate can only skip work, never
 * a session. Hooks that read their arguments before deciding call this
 * first, so that outside tasks skip those reads too.
 */
static __always_inline bool sbx_maybe_in_session(void)
{
	__u32 k = 0;
	struct sbx_config *c = bpf_map_lookup_elem(&sbx_config, &k);

	if (!c || !c->sessions_root)
		return true;
	return bpf_get_current_ancestor_cgroup_id(sbx_session_level - 1) == c->sessions_root;
}

/* The session of current, without the gate: for hooks that passed
 * sbx_maybe_in_session() already (a missing gate costs time, never a
 * decision: this lookup alone is exact). */
static __always_inline struct sbx_session *sbx_session_lookup(__u64 *cgid)
{
	__u64 id = bpf_get_current_ancestor_cgroup_id(sbx_session_level);

	if (!id)
		return NULL;
	*cgid = id;
	return bpf_map_lookup_elem(&sbx_sessions, &id);
}

/* The subject check every hook starts with. */
static __always_inline struct sbx_session *sbx_current_session(__u64 *cgid)
{
	if (!sbx_maybe_in_session())
		return NULL;
	return sbx_session_lookup(cgid);
}

/* The session a cgroup is in: the id of its ancestor at the session
 * level. 0 for cgroups outside every session. */
static __always_inline __u64 sbx_cgroup_session(struct cgroup *cg)
{
	struct cgroup *anc = NULL;
	__u32 lvl = sbx_session_level;

	if (!cg || BPF_CORE_READ(cg, level) < (int)lvl || lvl > 64)
		return 0;
	if (bpf_probe_read_kernel(&anc, sizeof(anc), (void *)cg +
				  bpf_core_field_offset(struct cgroup, ancestors) +
				  lvl * sizeof(anc)) || !anc)
		return 0;
	return BPF_CORE_READ(anc, kn, id);
}

/* The session a task belongs to, as bpf_get_current_ancestor_cgroup_id()
 * gives it for current. 0 for tasks outside every session. */
static __always_inline __u64 sbx_task_session(struct task_struct *t)
{
	return sbx_cgroup_session(BPF_CORE_READ(t, cgroups, dfl_cgrp));
}

/* The session whose process made the socket (its cgroup is recorded when
 * the socket is made). 0 for sockets of processes outside every session. */
static __always_inline __u64 sbx_sock_session(struct sock *sk)
{
	return sbx_cgroup_session(BPF_CORE_READ(sk, sk_cgrp_data.cgroup));
}

/*
 * The port entries of a policy (SBX_NAME_PORT in sbx_name_rules): what a
 * session's bind to a port gets, and what an outside client connecting
 * into one of the session's listeners gets. Port 0 holds the policy's
 * network.inbound; a policy without it (compiled elsewhere, or a lookup
 * that fails) refuses every outside client.
 */
static __always_inline struct sbx_file_rule *sbx_port_rule(__u32 policy_id, __u16 port)
{
	struct sbx_name_key k = {
		.policy_id = policy_id, .kind = SBX_NAME_PORT, .hash = port,
	};

	return bpf_map_lookup_elem(&sbx_name_rules, &k);
}

/* port 0: a unix socket (network.inbound alone decides) */
static __always_inline __u8 sbx_inbound_verdict(const struct sbx_session *s, __u16 port,
						__u32 *rule)
{
	struct sbx_file_rule *r = port ? sbx_port_rule(s->pol.policy_id, port) : NULL;

	if (!r || r->verdict[SBX_PORT_INBOUND] == SBX_V_NONE)
		r = sbx_port_rule(s->pol.policy_id, 0);
	if (r && r->verdict[SBX_PORT_INBOUND] != SBX_V_NONE) {
		*rule = r->rule_id[SBX_PORT_INBOUND];
		return r->verdict[SBX_PORT_INBOUND];
	}
	*rule = SBX_RULE_INBOUND;
	return SBX_V_DENY;
}

/* SBX_EPOCH_SESSION_PORTS: which kind of port some session holds, so that
 * an outside process's datagrams do not pay for a session's TCP server */
static __always_inline __u64 sbx_session_ports_bit(__u8 proto)
{
	return proto == IPPROTO_UDP ? 2 : 1;
}

/* the daemon itself is never an outside client to refuse */
static __always_inline bool sbx_current_is_daemon(void)
{
	__u32 k = 0;
	struct sbx_config *c = bpf_map_lookup_elem(&sbx_config, &k);

	return c && c->daemon_tgid && (bpf_get_current_pid_tgid() >> 32) == c->daemon_tgid;
}

/* A person's grant for (session, address, port), or for every port. addr:
 * 4 bytes (AF_INET) or 16, then zeros, as the grant key holds it. */
static __always_inline bool sbx_addr_granted(__u64 cgid, __u16 family, const __u8 *addr,
					     __u16 port)
{
	struct sbx_grant_key k = {};
	struct sbx_grant *g;

	k.cgid = cgid;
	k.kind = family == AF_INET ? SBX_GK_NET4 : SBX_GK_NET6;
	k.port = port;
	__builtin_memcpy(k.addr, addr, 16);
	g = bpf_map_lookup_elem(&sbx_grants, &k);
	if (!g) {
		k.port = 0;	/* granted for every port */
		g = bpf_map_lookup_elem(&sbx_grants, &k);
	}
	return g && (!g->expires_ns || bpf_ktime_get_boot_ns() <= g->expires_ns);
}

static __always_inline int sbx_verdict_ret(__u8 v)
{
	return v >= SBX_V_ASK ? -EPERM : 0;
}

static __always_inline void sbx_count_verdict(__u8 v)
{
	if (v == SBX_V_DENY)
		sbx_stat_inc(SBX_STAT_DENY);
	else if (v == SBX_V_ASK)
		sbx_stat_inc(SBX_STAT_ASK);
	else if (v == SBX_V_AUDIT)
		sbx_stat_inc(SBX_STAT_AUDIT);
}

/*
 * Start an event in the task's scratch. It is sent whole by
 * sbx_event_send(); until then any part of the check may add to it (the
 * path and process context come from event.bpf.c). NULL: no memory for
 * the scratch; the event is counted as dropped.
 */
/* The fields every event has; e is the LSM hooks' scratch or a ring
 * buffer reservation (the cgroup programs have no task storage). */
static __always_inline void sbx_event_fill(struct sbx_event *e, const struct sbx_session *s,
					   __u64 cgid, __u16 op, __u8 verdict, __u32 rule_id,
					   int ret)
{
	__u64 pt = bpf_get_current_pid_tgid();

	__builtin_memset(e, 0, __builtin_offsetof(struct sbx_event, comm));
	e->ts_ns = bpf_ktime_get_boot_ns();
	e->cgid = cgid;
	e->serial = s->serial;
	e->pid = pt >> 32;
	e->tid = (__u32)pt;
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->policy_id = s->pol.policy_id;
	e->rule_id = rule_id;
	e->op = op;
	e->verdict = verdict;
	e->ret = ret;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->path_off = SBX_EVENT_PATH_MAX - 1;
	e->path[SBX_EVENT_PATH_MAX - 1] = 0;
	e->exe_off = SBX_EVENT_CTX_MAX - 1;
	e->exe[SBX_EVENT_CTX_MAX - 1] = 0;
	e->cwd_off = SBX_EVENT_CTX_MAX - 1;
	e->cwd[SBX_EVENT_CTX_MAX - 1] = 0;
	e->args_len = 0;
	e->_pad1 = 0;
}

static __always_inline struct sbx_event *
sbx_event_begin(const struct sbx_session *s, __u64 cgid, __u16 op, __u8 verdict,
		__u32 rule_id, int ret)
{
	struct sbx_tscratch *sc = sbx_scratch();

	if (!sc) {
		sbx_stat_inc(SBX_STAT_EVENT_DROPS);
		return NULL;
	}
	sbx_event_fill(&sc->ev, s, cgid, op, verdict, rule_id, ret);
	return &sc->ev;
}

/* A unix socket's listener in the event: its pid (0: not known) in aux
 * and its socket's inode, from which the daemon finds its exe. */
static __always_inline void sbx_event_peer(struct sbx_event *e, struct sock *other)
{
	struct pid *pid = BPF_CORE_READ(other, sk_peer_pid);
	struct socket *so = BPF_CORE_READ(other, sk_socket);

	e->flags |= SBX_EVF_PEER;
	e->aux = pid ? BPF_CORE_READ(pid, numbers[0].nr) : 0;
	if (so)
		e->peer_ino = BPF_CORE_READ(so, file, f_inode, i_ino);
}

/* A full ring buffer is counted, never silent; the verdict itself never
 * depends on the event being sent. */
static __always_inline void sbx_event_send(struct sbx_event *e)
{
	if (bpf_ringbuf_output(&sbx_events, e, sizeof(*e), 0)) {
		sbx_stat_inc(SBX_STAT_EVENT_DROPS);
		return;
	}
	sbx_stat_inc(SBX_STAT_EVENTS);
}

/*
 * Global functions: the verifier checks each once, on its own, whatever
 * the state of its callers, so a hook that calls one twice (rename, link)
 * pays for it once, and a change in one hook cannot multiply the cost of
 * another.
 */

/* event.bpf.c: adds to the event in the task's scratch the path of
 * (vfsmount, dentry) (none for dentry 0) and the process context: exe,
 * cwd and the start of the command line. */
int sbx_event_describe(__u64 vfsmount, __u64 dentry);

#endif /* SBX_COMMON_H */
