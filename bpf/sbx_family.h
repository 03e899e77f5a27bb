/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbx_family.h - which sockets a session may create: the decision of
 * protect.bpf.c's lsm/socket_create on the full tier and of
 * families.bpf.c's cgroup/sock_create where BPF-LSM is off, so that both
 * tiers refuse the same inet sockets.
 */
#ifndef SBX_FAMILY_H
#define SBX_FAMILY_H

#include "sbx_common.h"

#define AF_NETLINK	16
#define AF_PACKET	17
#define SOCK_STREAM	1
#define SOCK_DGRAM	2
#define SOCK_RAW	3
#define SOCK_SEQPACKET	5
#define SOCK_PACKET	10
#define IPPROTO_ICMPV6	58

/*
 * An allowlist: only sockets whose every destination the network hooks
 * can read are created. The check runs before __sock_create() loads a
 * family's module, so a refused family never autoloads (AF_CAN, AF_RXRPC,
 * AF_SMC: rarely used code with a history of kernel bugs). Raw sockets
 * write their own IP headers, so their destinations are not the ones the
 * hooks see, nor do ping sockets'; SCTP and MPTCP are checked but off
 * unless the policy turns them on (sandbox: in docs/POLICY.md).
 */
static __always_inline bool sbx_socket_allowed(const struct sbx_session *s, int family,
					       int type, int protocol)
{
	__u32 f = s->pol.flags;

	switch (family) {
	case AF_UNIX:
		return true;
	case AF_INET:
	case AF_INET6:
		if (type == SOCK_RAW || type == SOCK_PACKET)
			return f & SBX_PF_ALLOW_RAW;
		if (protocol == IPPROTO_SCTP)
			return (type == SOCK_STREAM || type == SOCK_SEQPACKET) &&
			       (f & SBX_PF_ALLOW_SCTP);
		if (type == SOCK_STREAM)
			return protocol == 0 || protocol == IPPROTO_TCP ||
			       (protocol == IPPROTO_MPTCP && (f & SBX_PF_ALLOW_MPTCP));
		/* ICMP (unprivileged ping sockets): no hook sees where an echo
		 * goes (ping_v4_sendmsg runs no cgroup program), so it is a
		 * switch, like raw sockets */
		if (type == SOCK_DGRAM)
			return protocol == 0 || protocol == IPPROTO_UDP ||
			       (((family == AF_INET && protocol == IPPROTO_ICMP) ||
				 (family == AF_INET6 && protocol == IPPROTO_ICMPV6)) &&
				(f & SBX_PF_ALLOW_PING));
		return false;
	case AF_NETLINK:
		return protocol >= 0 && protocol < 32 &&
		       ((s->pol.netlink_allow >> protocol) & 1);
	case AF_PACKET:
		return f & SBX_PF_ALLOW_RAW;
	default:
		return family >= 0 && family < 64 && ((s->pol.family_allow >> family) & 1);
	}
}

#endif /* SBX_FAMILY_H */
