/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbx_dns.h - what the network hooks (network.bpf.c) know about names:
 * which destinations are DNS that dns.bpf.c sends to the session's own
 * resolver, which DNS paths are refused, and what a session's lookups
 * have learned about an address.
 *
 * lsm/socket_connect runs before the cgroup sock_addr programs (connect()
 * calls security_socket_connect() before the protocol's pre_connect), so
 * it sees the address the program asked for. A port-53 destination passes
 * there only
 * when the rewrite that follows is certain: the cgroup programs are
 * attached to the sessions' root, the socket was made in this session (so
 * they run for it), and the session has a resolver. Otherwise the policy
 * decides it like any other destination (fail closed).
 */
#ifndef SBX_DNS_H
#define SBX_DNS_H

#include "sbx_common.h"

#define SBX_DNS_PORT	53
#ifndef IPPROTO_TCP
#define IPPROTO_TCP	6
#define IPPROTO_UDP	17
#endif

/* A DNS path around the session's resolver, named directly. */
static __always_inline bool sbx_dns_bypass(__u16 family, const __u8 *addr, __u16 port)
{
	/* DNS over TLS and over QUIC (853), mDNS (5353), LLMNR (5355) */
	if (port == 853 || port == 5353 || port == 5355)
		return true;
	if (family == AF_INET)
		/* 127.53.0.0/16 holds the sessions' resolvers: reached only by
		 * the rewrite of port 53, never named directly */
		return addr[0] == 127 && addr[1] == 53 && port != SBX_DNS_PORT;
	{
		__u16 p = port;

		return !addr[0] && !addr[1] && !addr[2] && !addr[3] && !addr[4] && !addr[5] &&
		       !addr[6] && !addr[7] && !addr[8] && !addr[9] && !addr[10] && !addr[11] &&
		       !addr[12] && !addr[13] && !addr[14] && addr[15] == 1 &&
		       bpf_map_lookup_elem(&sbx_dns_ports, &p);
	}
}

/*
 * NONE: nothing special, the policy decides. ALLOW: DNS that dns.bpf.c
 * redirects. DENY: a DNS path around the daemon (*rule = SBX_RULE_DNS_PATH).
 */
static __always_inline __u8 sbx_dns_dest(struct sock *sk, __u16 family, const __u8 *addr,
					 __u16 port, __u8 proto, __u64 cgid, __u32 *rule)
{
	struct sbx_config *c;
	__u32 zero = 0;

	if (sbx_dns_bypass(family, addr, port)) {
		*rule = SBX_RULE_DNS_PATH;
		return SBX_V_DENY;
	}
	if (port != SBX_DNS_PORT || (proto != IPPROTO_TCP && proto != IPPROTO_UDP))
		return SBX_V_NONE;
	c = bpf_map_lookup_elem(&sbx_config, &zero);
	if (!c || !c->cgroup_progs_root || c->cgroup_progs_root != c->sessions_root)
		return SBX_V_NONE;
	if (sbx_sock_session(sk) != cgid)
		return SBX_V_NONE;
	if (!bpf_map_lookup_elem(&sbx_dns_resolvers, &cgid))
		return SBX_V_NONE;
	return SBX_V_ALLOW;
}

/*
 * Combine the CIDR verdict v (NONE: no CIDR rule for this port) with what
 * the session learned about the address: the stricter wins, so a name
 * never opens up what a CIDR rule denies or asks (DNS rebinding onto the
 * metadata address or a private network), and a name allows what only the
 * default would have decided.
 */
static __always_inline __u8 sbx_learned_merge(__u64 cgid, __u16 family, const __u8 *addr,
					      __u16 port, __u8 proto, __u8 v, __u32 *rule,
					      __u64 *expires)
{
	struct sbx_learned_key k = { .cgid = cgid };
	const struct sbx_learned *l;
	__u64 now;

	if (family == AF_INET) {
		k.addr[10] = 0xff;
		k.addr[11] = 0xff;
		__builtin_memcpy(k.addr + 12, addr, 4);
	} else {
		__builtin_memcpy(k.addr, addr, 16);
	}
	l = bpf_map_lookup_elem(&sbx_learned, &k);
	if (!l)
		return v;
	now = bpf_ktime_get_boot_ns();
	if (now > l->expires_ns)
		return v;
	/* whatever it says, the decision holds only while it is there */
	*expires = l->expires_ns;
	#pragma unroll
	for (int i = 0; i < SBX_LEARNED_PORT_RULES; i++) {
		if (i >= l->count)
			break;
		const struct sbx_net_port_rule *p = &l->r[i];
		if (port < p->port_lo || port > p->port_hi)
			continue;
		if (p->proto && p->proto != proto)
			continue;
		sbx_stat_inc(SBX_STAT_LEARNED_USED);
		if (p->verdict > v) {
			*rule = p->rule_id;
			return p->verdict;
		}
		return v;
	}
	return v;
}

#endif /* SBX_DNS_H */
