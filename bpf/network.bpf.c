// SPDX-License-Identifier: GPL-2.0
/*
 * network.bpf.c - where a session may connect or send.
 *
 * connect() alone can be bypassed: an unconnected UDP sendto() and TCP
 * Fast Open (sendto with MSG_FASTOPEN) reach only socket_sendmsg, so the
 * destination given to sendmsg is checked the same way. IPv4-mapped IPv6
 * destinations (::ffff:a.b.c.d) are checked as the IPv4 address they are.
 * One LPM lookup per family finds the most specific prefix; its value
 * already holds the port rules of every covering prefix (the compiler
 * pushes them down), so the scan below is first-match.
 */
#include "sbx_walk.h"	/* sbx_event_context */

struct sbx_dest {
	__u16 family;		/* AF_INET or AF_INET6 after unmapping */
	__u16 port;		/* host order */
	__u8  proto;
	__u8  addr[16];
};

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

static __always_inline __u8 sbx_net_decide(const struct sbx_session *s,
					   const struct sbx_dest *d, __u32 *rule)
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
	if (v == SBX_V_NONE) {
		v = s->pol.net_default;
		*rule = s->pol.net_default_rule;
		if (v == SBX_V_NONE)
			v = SBX_V_DENY;
	}
	return v;
}

/* Parse a kernel copy of a sockaddr. 0: a destination to check;
 * 1: nothing to check (AF_UNSPEC disconnect, other families). */
static __always_inline int sbx_parse_dest(struct sockaddr *sa, int len, struct sbx_dest *d)
{
	__u16 family;

	if (!sa || len < 2)
		return 1;
	if (bpf_probe_read_kernel(&family, sizeof(family), &sa->sa_family))
		return -1;
	__builtin_memset(d->addr, 0, sizeof(d->addr));
	if (family == AF_INET) {
		struct sockaddr_in sin;

		if (len < (int)sizeof(sin) || bpf_probe_read_kernel(&sin, sizeof(sin), sa))
			return -1;
		d->family = AF_INET;
		d->port = bpf_ntohs(sin.sin_port);
		__builtin_memcpy(d->addr, &sin.sin_addr.s_addr, 4);
		return 0;
	}
	if (family == AF_INET6) {
		struct sockaddr_in6 sin6;
		__u8 *a;

		if (len < (int)sizeof(sin6) || bpf_probe_read_kernel(&sin6, sizeof(sin6), sa))
			return -1;
		d->port = bpf_ntohs(sin6.sin6_port);
		a = sin6.sin6_addr.in6_u.u6_addr8;
		if (!a[0] && !a[1] && !a[2] && !a[3] && !a[4] && !a[5] && !a[6] && !a[7] &&
		    !a[8] && !a[9] && a[10] == 0xff && a[11] == 0xff) {
			d->family = AF_INET;
			__builtin_memcpy(d->addr, a + 12, 4);
		} else {
			d->family = AF_INET6;
			__builtin_memcpy(d->addr, a, 16);
		}
		return 0;
	}
	return 1;
}

static __always_inline bool sbx_net_granted(__u64 cgid, const struct sbx_dest *d)
{
	struct sbx_grant_key k = {};
	struct sbx_grant *g;

	k.cgid = cgid;
	k.kind = d->family == AF_INET ? SBX_GK_NET4 : SBX_GK_NET6;
	k.port = d->port;
	__builtin_memcpy(k.addr, d->addr, 16);
	g = bpf_map_lookup_elem(&sbx_grants, &k);
	if (!g) {
		k.port = 0;	/* granted for every port */
		g = bpf_map_lookup_elem(&sbx_grants, &k);
	}
	if (!g)
		return false;
	return !g->expires_ns || bpf_ktime_get_boot_ns() <= g->expires_ns;
}

static __always_inline int sbx_check_dest(struct socket *sock, struct sockaddr *sa, int len,
					  __u16 op)
{
	struct sbx_session *s;
	struct sbx_dest d = {};
	struct sbx_event *e;
	__u64 cgid = 0;
	__u32 rule = 0;
	__u8 v;
	int rc, ret;

	s = sbx_session_lookup(&cgid);	/* both hooks passed the gate */
	if (!s)
		return 0;
	rc = sbx_parse_dest(sa, len, &d);
	if (rc > 0)
		return 0;
	sbx_stat_inc(SBX_STAT_CHECKS);
	if (rc < 0) {
		sbx_stat_inc(SBX_STAT_ERRORS);
		v = SBX_V_DENY;
		rule = SBX_RULE_ERROR;
	} else {
		d.proto = BPF_CORE_READ(sock, sk, sk_protocol);
		v = sbx_net_decide(s, &d, &rule);
		if (v == SBX_V_ASK && (s->pol.flags & SBX_PF_HAS_GRANTS) &&
		    sbx_net_granted(cgid, &d)) {
			v = SBX_V_AUDIT;
			rule = SBX_RULE_GRANT;
			sbx_stat_inc(SBX_STAT_GRANT_USED);
		}
	}
	if (v <= SBX_V_ALLOW)
		return 0;

	ret = sbx_verdict_ret(v);
	sbx_count_verdict(v);
	e = sbx_event_begin(s, cgid, op, v, rule, ret);
	if (!e)
		return ret;
	e->family = d.family;
	e->flags = d.family == AF_INET6 ? SBX_EVF_NET6 : SBX_EVF_NET4;
	e->port = d.port;
	e->proto = d.proto;
	__builtin_memcpy(e->addr, d.addr, 16);
	sbx_event_context(e);
	sbx_event_submit(e);
	return ret;
}

SEC("lsm/socket_connect")
int BPF_PROG(sbx_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen,
	     int ret)
{
	if (ret || !sbx_maybe_in_session())
		return ret;
	return sbx_check_dest(sock, address, addrlen, SBX_OP_CONNECT);
}

/* A destination given to sendto/sendmsg: unconnected UDP, TCP Fast Open. */
SEC("lsm/socket_sendmsg")
int BPF_PROG(sbx_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size, int ret)
{
	void *name;

	if (ret || !sbx_maybe_in_session())
		return ret;
	name = BPF_CORE_READ(msg, msg_name);
	if (!name)
		return 0;
	return sbx_check_dest(sock, name, BPF_CORE_READ(msg, msg_namelen), SBX_OP_SENDMSG);
}

/*
 * AF_UNIX: a socket bound to a path is a file, and connecting to it is a
 * write to it, decided by the file rules on its path (so a policy denies
 * /var/run/docker.sock, which would otherwise hand out root). Abstract
 * and unbound sockets have no path and are not checked.
 */
static __always_inline int sbx_check_unix(struct sock *other)
{
	struct unix_sock *u = (void *)other;	/* struct sock is its first member */
	struct dentry *d = BPF_CORE_READ(u, path.dentry);

	struct inode *inode;
	struct sbx_config *c;
	__u32 zero = 0;

	if (!d)
		return 0;
	/* the daemon's own control socket: how a session asks for things */
	inode = BPF_CORE_READ(d, d_inode);
	c = bpf_map_lookup_elem(&sbx_config, &zero);
	if (c && inode && c->ctl_ino && BPF_CORE_READ(inode, i_ino) == c->ctl_ino &&
	    BPF_CORE_READ(inode, i_sb, s_dev) == c->ctl_dev)
		return 0;
	return sbx_check_file(BPF_CORE_READ(u, path.mnt), d, NULL, SBX_ACCBIT(SBX_ACC_WRITE),
			      SBX_OP_UNIX_CONNECT);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(sbx_unix_stream_connect, struct sock *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	if (ret || !sbx_maybe_in_session())
		return ret;
	return sbx_check_unix(other);
}

SEC("lsm/unix_may_send")
int BPF_PROG(sbx_unix_may_send, struct socket *sock, struct socket *other, int ret)
{
	if (ret || !sbx_maybe_in_session())
		return ret;
	return sbx_check_unix(BPF_CORE_READ(other, sk));
}
