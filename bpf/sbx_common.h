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
#define EACCES		13
#define AF_UNSPEC	0
#define AF_UNIX		1
#define AF_INET		2
#define AF_INET6	10

#define FMODE_READ	0x1
#define FMODE_WRITE	0x2
#define FMODE_EXEC	0x20
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
 * Per-CPU scratch: the 512-byte BPF stack cannot hold a name or a path.
 * path[] is larger than the event's path so that prepending a component of
 * up to 255 bytes at any offset below 1024 stays provably in bounds.
 */
#define SBX_SCRATCH_PATH 1280
struct sbx_scratch {
	char name[SBX_NAME_MAX + 1];
	__u64 pre[64];		/* prefix hash of the first L bytes, by L */
	__u64 suf[64];		/* suffix hash of the last L bytes, by L */
	char path[SBX_SCRATCH_PATH];
};

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sbx_scratch);
} sbx_scratch SEC(".maps");

/*
 * Set by the loader before load. Session cgroups are
 * <cgroup2 root>/bpfsbx/<session>, so their level is 2; asking for the
 * ancestor at that level also finds a session's child cgroups.
 */
extern const volatile __u32 sbx_session_level;
/* f_mode bit of overlayfs backing files on kernels that have one (0 on 6.1) */
extern const volatile __u32 sbx_fmode_backing;

/*
 * 0, as a value the verifier cannot know. Kernels before 6.7 verify a
 * bpf_loop() callback once, with the caller's state at the call, and
 * then hard-wire every branch they never saw taken: a field that starts
 * at 0 and changes from one iteration to the next (the walk's level, the
 * path builder's offset) would have its "not 0" branches removed from
 * the program. Starting such fields from this value keeps both sides
 * alive. The map lookup cannot fail (an array of 1); if it did, the
 * callers deny.
 */
static __always_inline bool sbx_opaque_zero(__u64 *z)
{
	__u32 k = 0;
	struct sbx_config *c = bpf_map_lookup_elem(&sbx_config, &k);

	if (!c)
		return false;
	*z = c->opaque_zero;
	return true;
}

static __always_inline void sbx_bump_epoch(__u32 k)
{
	__u64 *e = bpf_map_lookup_elem(&sbx_epoch, &k);

	if (e)
		__sync_fetch_and_add(e, 1);
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

/* The session a task belongs to: the id of its cgroup's ancestor at the
 * session level, as bpf_get_current_ancestor_cgroup_id() gives for
 * current. 0 for tasks outside every session. */
static __always_inline __u64 sbx_task_session(struct task_struct *t)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp), *anc = NULL;
	__u32 lvl = sbx_session_level;

	if (!cg || BPF_CORE_READ(cg, level) < (int)lvl || lvl > 64)
		return 0;
	if (bpf_probe_read_kernel(&anc, sizeof(anc), (void *)cg +
				  bpf_core_field_offset(struct cgroup, ancestors) +
				  lvl * sizeof(anc)) || !anc)
		return 0;
	return BPF_CORE_READ(anc, kn, id);
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
 * Reserve and pre-fill an event. A full ring buffer is counted, never
 * silent; the verdict itself does not depend on the event being sent.
 */
static __always_inline struct sbx_event *
sbx_event_begin(const struct sbx_session *s, __u64 cgid, __u16 op, __u8 verdict,
		__u32 rule_id, int ret)
{
	struct sbx_event *e;
	__u64 pt = bpf_get_current_pid_tgid();

	e = bpf_ringbuf_reserve(&sbx_events, sizeof(*e), 0);
	if (!e) {
		sbx_stat_inc(SBX_STAT_EVENT_DROPS);
		return NULL;
	}
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
	e->access = 0;
	e->flags = 0;
	e->family = 0;
	e->ret = ret;
	e->dev = 0;
	e->aux = 0;
	e->ino = 0;
	e->name_hash = 0;
	e->port = 0;
	e->proto = 0;
	e->_pad0 = 0;
	__builtin_memset(e->addr, 0, sizeof(e->addr));
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->path_off = SBX_EVENT_PATH_MAX - 1;
	e->path[SBX_EVENT_PATH_MAX - 1] = 0;
	e->exe_off = SBX_EVENT_CTX_MAX - 1;
	e->exe[SBX_EVENT_CTX_MAX - 1] = 0;
	e->cwd_off = SBX_EVENT_CTX_MAX - 1;
	e->cwd[SBX_EVENT_CTX_MAX - 1] = 0;
	e->args_len = 0;
	e->_pad1 = 0;
	return e;
}

static __always_inline void sbx_event_submit(struct sbx_event *e)
{
	sbx_stat_inc(SBX_STAT_EVENTS);
	bpf_ringbuf_submit(e, 0);
}

#endif /* SBX_COMMON_H */
