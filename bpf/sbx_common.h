/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbx_common.h - what every BPF object includes: the maps (sbx_maps.h),
 * local storage and the task's scratch (sbx_storage.h), event emission
 * (sbx_event.h), and here the subject lookup and the small decisions the
 * hooks share.
 */
#ifndef SBX_COMMON_H
#define SBX_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "bpfsbx.h"

#define RENAME_EXCHANGE (1 << 1)	/* include/uapi/linux/fs.h */
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

#include "sbx_maps.h"
#include "sbx_storage.h"
#include "sbx_event.h"

/*
 * Set by the loader before load. Session cgroups are
 * <cgroup2 root>/bpfsbx/<session>, so their level is 2; asking for the
 * ancestor at that level also finds a session's child cgroups.
 */
extern const volatile __u32 sbx_session_level;
/* f_mode bit of overlayfs backing files on kernels that have one (0 on 6.1) */
extern const volatile __u32 sbx_fmode_backing;
/* lsm/socket_connect decides connect(2) (the full tier): the cgroup
 * connect programs decide only what it does not see (dns.bpf.c) */
extern const volatile __u32 sbx_lsm_connects;

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

/* The session of cgroup id, as every hook sees it: a container adopted
 * at createRuntime is none until the exec that arms it (exec.bpf.c),
 * while only its runtime runs in it (pivot_root, mounts, capabilities). */
static __always_inline struct sbx_session *sbx_session_get(__u64 *id)
{
	struct sbx_session *s = bpf_map_lookup_elem(&sbx_sessions, id);

	if (s && (s->pol.flags & SBX_PF_ARMING))
		return NULL;
	return s;
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
	return sbx_session_get(&id);
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

/* port's word in struct sbx_held_ports. The mask is for the verifier,
 * which loses a port's bounds through bpf_ntohs (a byte swap), and which
 * clang would drop as redundant without the barrier. */
static __always_inline __u32 sbx_held_word(__u8 proto, __u16 port)
{
	__u32 i = (proto == IPPROTO_UDP ? SBX_HELD_PORT_WORDS / 2 : 0) + (port >> 6);

	barrier_var(i);
	return i & (SBX_HELD_PORT_WORDS - 1);
}

/*
 * A session's socket holds port (0: none yet). Set where the port is
 * known: before a bind to it is visible (network.bpf.c), where an owner
 * is recorded on a socket that has one (a first datagram), and right
 * after a port is taken by a socket whose owner was recorded before
 * (ports.bpf.c: an ephemeral bind, listen's autobind).
 */
static __always_inline void sbx_hold_port(__u8 proto, __u16 port)
{
	__u64 bit = 1ull << (port & 63), *w;
	struct sbx_held_ports *h;
	__u32 k = 0;

	if (!port)
		return;
	h = bpf_map_lookup_elem(&sbx_held_ports, &k);
	if (!h)
		return;
	w = &h->w[sbx_held_word(proto, port)];
	if (!(*w & bit))
		__sync_fetch_and_or(w, bit);
}

/* whether a session's socket may hold port: true when the set cannot be read */
static __always_inline bool sbx_port_maybe_held(__u8 proto, __u16 port)
{
	struct sbx_held_ports *h;
	__u32 k = 0;

	h = bpf_map_lookup_elem(&sbx_held_ports, &k);
	if (!h)
		return true;
	return h->w[sbx_held_word(proto, port)] & (1ull << (port & 63));
}

/*
 * Whose a loopback listener is (dns.bpf.c and inbound.bpf.c look it up
 * and read this): the session that gave the socket its port, recorded in
 * o, the socket's sbx_sk_owner storage, with port, the socket's port if
 * it has one or the one a bind asks for. network.bpf.c records it at
 * bind, listen and a first datagram; on the landlock tier dns.bpf.c
 * records the datagrams' (no LSM hook runs there).
 */
static __always_inline void sbx_owner_set(__u64 *o, __u64 cgid, __u8 proto, __u16 port)
{
	__u32 k = SBX_EPOCH_SESSION_PORTS;
	__u64 *any;
	bool moved;

	sbx_hold_port(proto, port);
	if (*o == cgid)
		return;
	/* a socket of another session changes hands: a loopback listener
	 * remembered as that session's is no longer its own */
	moved = *o != 0;
	*o = cgid;
	if (moved)
		sbx_bump_epoch(SBX_EPOCH_PORTS);
	/* from now on outside clients' loopback connects (or datagrams)
	 * look their listener up (inbound.bpf.c); written once, not per
	 * socket */
	any = bpf_map_lookup_elem(&sbx_epoch, &k);
	if (any && !(*any & sbx_session_ports_bit(proto)))
		__sync_fetch_and_or(any, sbx_session_ports_bit(proto));
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
 * The event of a cgroup sock_addr program that refuses or audits a
 * destination (dns.bpf.c's loopback listener, inbound.bpf.c's outside
 * client). Those programs have no task storage, so the event is a ring
 * buffer reservation. flag says which check it was (SBX_EVF_LOOPBACK,
 * SBX_EVF_INBOUND). Returns the program's answer: 1 lets the connect or
 * send go on, 0 refuses it; a dropped event changes neither.
 */
static __always_inline int sbx_sock_addr_event(const struct sbx_session *s, __u64 cgid,
					       __u16 op, __u32 flag, const struct sbx_dest *d,
					       __u8 v, __u32 rule)
{
	struct sbx_event *e;
	int ret = v >= SBX_V_ASK ? -EPERM : 0;

	sbx_count_verdict(v);
	e = bpf_ringbuf_reserve(&sbx_events, sizeof(*e), 0);
	if (!e) {
		sbx_stat_inc(SBX_STAT_EVENT_DROPS);
		return ret ? 0 : 1;
	}
	sbx_event_fill(e, s, cgid, op, v, rule, ret);
	e->family = d->family;
	e->flags = (d->family == AF_INET6 ? SBX_EVF_NET6 : SBX_EVF_NET4) | flag;
	e->port = d->port;
	e->proto = d->proto;
	__builtin_memcpy(e->addr, d->addr, 16);
	bpf_ringbuf_submit(e, 0);
	sbx_stat_inc(SBX_STAT_EVENTS);
	return ret ? 0 : 1;
}

/*
 * A hook twice: the LSM program (the full tier), and a twin, an fmod_ret
 * program on the hook's security_* function, for the landlock tier, where
 * fmod_ret needs no BPF-LSM (the function must take the hook's
 * arguments). In body, ll is the constant that says which of the two it
 * is, so that what needs BPF-LSM (inode storage) drops out of the twin.
 */
#define SBX_TWINS(name, hook, body, ...)					\
	SEC("lsm/" #hook)							\
	int BPF_PROG(sbx_##name, __VA_ARGS__, int ret)				\
	{									\
		const bool ll __attribute__((unused)) = false;			\
										\
		return ret ?: (body);						\
	}									\
	SEC("fmod_ret/security_" #hook)						\
	int BPF_PROG(sbx_ll_##name, __VA_ARGS__, int ret)			\
	{									\
		const bool ll __attribute__((unused)) = true;			\
										\
		return ret ?: (body);						\
	}

#endif /* SBX_COMMON_H */
