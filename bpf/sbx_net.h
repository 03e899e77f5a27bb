/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbx_net.h - a session's verdict for one IP destination: the CIDR and
 * port rules (one LPM lookup per family; the value already holds the port
 * rules of every covering prefix, so the scan is first-match), merged with
 * what the session's lookups learned. The LSM hooks (network.bpf.c) use it
 * on the full tier; the cgroup programs (dns.bpf.c) where BPF-LSM is off.
 */
#ifndef SBX_NET_H
#define SBX_NET_H

#include "sbx_dns.h"

static __always_inline __u8 sbx_port_rules(const struct sbx_net_rule *r, __u16 port,
					   __u8 proto, __u32 *rule)
{
	#pragma unroll
	for (int i = 0; i < SBX_NET_PORT_RULES; i++) {
		if (i >= r->count)
			break;
		const struct sbx_net_port_rule *p = &r->r[i];
		if (port < p->port_lo || port > p->port_hi)
			continue;
		if (p->proto && p->proto != proto)
			continue;
		*rule = p->rule_id;
		return p->verdict;
	}
	return SBX_V_NONE;
}

static __always_inline __u8 sbx_net_decide(const struct sbx_session *s, __u64 cgid,
					   const struct sbx_dest *d, __u32 *rule, __u64 *expires)
{
	const struct sbx_net_rule *r;
	__u8 v = SBX_V_NONE;

	if (d->family == AF_INET) {
		struct sbx_net4_key k = {
			.prefixlen = 64,
			.policy_id = bpf_htonl(s->pol.policy_id),
		};
		__builtin_memcpy(k.addr, d->addr, 4);
		r = bpf_map_lookup_elem(&sbx_net4, &k);
	} else {
		struct sbx_net6_key k = {
			.prefixlen = 160,
			.policy_id = bpf_htonl(s->pol.policy_id),
		};
		__builtin_memcpy(k.addr, d->addr, 16);
		r = bpf_map_lookup_elem(&sbx_net6, &k);
	}
	if (r)
		v = sbx_port_rules(r, d->port, d->proto, rule);
	/* names (sbx_dns.h): what this session's lookups learned */
	v = sbx_learned_merge(cgid, d->family, d->addr, d->port, d->proto, v, rule, expires);
	if (v == SBX_V_NONE) {
		v = s->pol.net_default;
		*rule = s->pol.net_default_rule;
		if (v == SBX_V_NONE)
			v = SBX_V_DENY;
	}
	return v;
}

/* An ask that a person's grant for this destination already answered is
 * allowed, and recorded (audit). */
static __always_inline void sbx_net_grant(const struct sbx_session *s, __u64 cgid,
					  const struct sbx_dest *d, __u8 *v, __u32 *rule)
{
	if (*v == SBX_V_ASK && (s->pol.flags & SBX_PF_HAS_GRANTS) &&
	    sbx_addr_granted(cgid, d->family, d->addr, d->port)) {
		*v = SBX_V_AUDIT;
		*rule = SBX_RULE_GRANT;
		sbx_stat_inc(SBX_STAT_GRANT_USED);
	}
}

#endif /* SBX_NET_H */
