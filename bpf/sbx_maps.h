/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbx_maps.h - the maps the daemon fills and reads: sessions, policy
 * rules, grants, configuration, epochs and statistics, names and owners.
 * Each is defined once, in sessions.bpf.c (SBX_DEFINE_MAPS), and extern
 * elsewhere; the objects are linked into one by `bpftool gen object`.
 * Storage that lives on a socket, inode or task is in sbx_storage.h, the
 * event ring buffer in sbx_event.h.
 */
#ifndef SBX_MAPS_H
#define SBX_MAPS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "bpfsbx.h"

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

/* see struct sbx_protect_key in bpfsbx.h: removals of the objects that
 * inode rules were made for */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 262144);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbx_protect_key);
	__type(value, __u32);
} sbx_removals SEC(".maps");

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

/* the ports sessions' sockets hold (struct sbx_held_ports) */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sbx_held_ports);
} sbx_held_ports SEC(".maps");

/* ports that a socket bound to a device has held (struct sbx_dev_port_key):
 * every TCP and UDP port fits, so it never fills */
SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbx_dev_port_key);
	__type(value, __u64);
} sbx_dev_ports SEC(".maps");

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

/*
 * The landlock tier's FIFO makers (ipc.bpf.c), where no inode storage
 * exists: a FIFO's inode (struct inode *) -> the session that made it,
 * with the inode's number, so that an address freed and given to another
 * inode does not keep the old FIFO's session. LRU: an entry that aged out
 * reads as outside (fail closed).
 */
struct sbx_fifo_maker {
	__u64 cgid;
	__u64 ino;
};

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct sbx_fifo_maker);
} sbx_fifo_maker SEC(".maps");

/*
 * The landlock tier's pty makers (tty.bpf.c), where no inode storage
 * exists: a pty slave's devpts inode (struct inode *) -> the session that
 * made it, removed when the pty goes (devpts_pty_kill), so that the
 * address given to a pty made later, outside, carries no mark; the
 * inode's number and super block must match as well. LRU: a mark that
 * aged out reads as outside, and the session's own pty is refused (fail
 * closed).
 */
struct sbx_pty_mark {
	__u64 cgid;
	__u64 ino;
	__u64 sb;
};

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct sbx_pty_mark);
} sbx_pty_maker SEC(".maps");

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

static __always_inline void sbx_stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&sbx_stats, &idx);

	if (v)
		*v += 1;	/* per-CPU: no atomics needed */
}

#endif /* SBX_MAPS_H */
