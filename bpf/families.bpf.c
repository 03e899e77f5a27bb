// SPDX-License-Identifier: GPL-2.0
/*
 * families.bpf.c - socket families and protocols where BPF-LSM is off.
 *
 * On the full tier lsm/socket_create (protect.bpf.c) refuses every socket
 * the policy does not allow, before a family's module loads. Without
 * BPF-LSM the nearest hook is cgroup/sock_create, which the kernel runs
 * only from inet_create() and inet6_create(): it decides the IPv4 and
 * IPv6 sockets (raw, SCTP, MPTCP, protocols the network hooks do not
 * read) with the same sbx_socket_allowed(), after the socket was made and
 * before the caller gets it. The other families (netlink, packet, AF_ALG,
 * ...) never reach it; run's seccomp filter refuses those
 * (user/sandbox/seccomp.c).
 *
 * The daemon loads it on the landlock tier only (user/daemon/kernel.c):
 * on the full tier the LSM hook has already decided, the same way.
 */
#include "sbx_family.h"

SEC("cgroup/sock_create")
int sbx_sock_create(struct bpf_sock *ctx)
{
	__u64 cgid = bpf_get_current_ancestor_cgroup_id(sbx_session_level);
	struct sbx_session *s;
	struct sbx_event *e;

	if (!cgid)
		return 1;
	s = sbx_session_get(&cgid);
	/* SCTP whatever sandbox.sctp says: no cgroup hook sees its
	 * destinations (connect, connectx, a sendmsg to any peer), and the
	 * security_sctp_bind_connect twin would need the LSM's socket storage */
	if (!s || (sbx_socket_allowed(s, ctx->family, ctx->type, ctx->protocol) &&
		   ctx->protocol != IPPROTO_SCTP))
		return 1;
	sbx_count_verdict(SBX_V_DENY);
	e = bpf_ringbuf_reserve(&sbx_events, sizeof(*e), 0);
	if (!e) {
		sbx_stat_inc(SBX_STAT_EVENT_DROPS);
		return 0;
	}
	sbx_event_fill(e, s, cgid, SBX_OP_SOCKET_CREATE, SBX_V_DENY, SBX_RULE_SOCKET_FAMILY,
		       -EPERM);
	e->family = ctx->family;
	e->aux = ctx->type;
	e->port = ctx->protocol;
	bpf_ringbuf_submit(e, 0);
	sbx_stat_inc(SBX_STAT_EVENTS);
	return 0;
}
