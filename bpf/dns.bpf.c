// SPDX-License-Identifier: GPL-2.0
/*
 * dns.bpf.c - a session's DNS goes to its own resolver in the daemon,
 * whatever address the program used.
 *
 * cgroup sock_addr programs, attached to <cgroup2>/bpfsbx (the sessions'
 * root) by links pinned like the LSM links, so they run for every socket
 * made in a session and for nothing else. connect4/6 and sendmsg4/6
 * rewrite a TCP or UDP destination on port 53 to the resolver of the
 * current task's session (sbx_dns_resolvers); recvmsg4/6 and
 * getpeername4/6 put back the address the program asked for, so a stub
 * resolver that checks where its answer came from (glibc does) accepts it.
 *
 * A session reaches no other resolver: every port-53 destination is its
 * own, the 127.53.0.0/16 addresses and the [::1] ports of the resolvers
 * are refused by the LSM hooks when named directly (sbx_dns.h), and the
 * daemon tells sessions apart by the socket a query arrives on. When the
 * session has no resolver the connect or send is refused (return 0):
 * the LSM hook let port 53 pass only because it would be rewritten.
 *
 * IPv6: a v4-mapped destination goes to the v4-mapped resolver address;
 * any other IPv6 destination to [::1] and the session's IPv6 ports
 * (udpv6_sendmsg refuses a program that turns a send into a v4-mapped one).
 *
 * The same programs decide loopback on the listener, because a loopback
 * destination is only as safe as whoever listens there: a local proxy, an `ssh -D` port, a database or a forwarding resolver that a
 * process outside the session serves acts for whoever connects, like a
 * unix socket's listener. The LSM hooks cannot find the listener; these
 * programs can (bpf_sk_lookup_tcp/udp), after the destination itself was
 * allowed (below, or by lsm/socket_connect first).
 *
 * And they decide the destinations themselves (below): every datagram's,
 * TCP Fast Open's, and on the landlock tier every connect's.
 */
#include "sbx_net.h"

#define SBX_DNS_PORT_NET	0x3500	/* htons(53) */
#define SBX_CURRENT_NETNS	(-1L)	/* BPF_F_CURRENT_NETNS */
#define SBX_PROTO_TCP		6
#define SBX_PROTO_UDP		17

static __always_inline bool sbx_dns_wanted(const struct bpf_sock_addr *ctx)
{
	return ctx->user_port == SBX_DNS_PORT_NET &&
	       (ctx->protocol == SBX_PROTO_TCP || ctx->protocol == SBX_PROTO_UDP);
}

/* The current task's resolver; NULL when it has none. *in_session: the
 * task is in a session (so a port-53 destination must be refused). */
static __always_inline const struct sbx_dns_resolver *sbx_dns_own(bool *in_session)
{
	__u64 id = bpf_get_current_ancestor_cgroup_id(sbx_session_level);

	*in_session = false;
	if (!id || !sbx_session_get(&id))
		return NULL;
	*in_session = true;
	return bpf_map_lookup_elem(&sbx_dns_resolvers, &id);
}

static __always_inline void sbx_dns_remember(struct bpf_sock_addr *ctx, const __u32 a6[4])
{
	struct sbx_dns_orig *o;

	o = sbx_sk_storage_make(&sbx_dns_sk, ctx->sk);
	if (!o)
		return;
	__builtin_memcpy(o->addr, a6, 16);
	o->port = SBX_DNS_PORT_NET;
	sbx_stat_inc(SBX_STAT_DNS_REDIRECT);
}

static __always_inline int sbx_dns_redirect4(struct bpf_sock_addr *ctx)
{
	const struct sbx_dns_resolver *r;
	bool in = false;
	__u32 a6[4];

	r = sbx_dns_own(&in);
	if (!r)
		return in ? 0 : 1;
	a6[0] = 0;
	a6[1] = 0;
	a6[2] = bpf_htonl(0xffff);
	a6[3] = ctx->user_ip4;
	sbx_dns_remember(ctx, a6);
	ctx->user_ip4 = r->addr4;
	ctx->user_port = ctx->protocol == SBX_PROTO_TCP ? r->port4_tcp : r->port4_udp;
	return 1;
}

static __always_inline bool sbx_v4mapped(const __u32 a[4])
{
	return !a[0] && !a[1] && a[2] == bpf_htonl(0xffff);
}

static __always_inline int sbx_dns_redirect6(struct bpf_sock_addr *ctx)
{
	const struct sbx_dns_resolver *r;
	bool in = false;
	__u32 a6[4];

	r = sbx_dns_own(&in);
	if (!r)
		return in ? 0 : 1;
	a6[0] = ctx->user_ip6[0];
	a6[1] = ctx->user_ip6[1];
	a6[2] = ctx->user_ip6[2];
	a6[3] = ctx->user_ip6[3];
	sbx_dns_remember(ctx, a6);
	if (sbx_v4mapped(a6)) {
		ctx->user_ip6[3] = r->addr4;
		ctx->user_port = ctx->protocol == SBX_PROTO_TCP ? r->port4_tcp : r->port4_udp;
		return 1;
	}
	ctx->user_ip6[0] = 0;
	ctx->user_ip6[1] = 0;
	ctx->user_ip6[2] = 0;
	ctx->user_ip6[3] = bpf_htonl(1);
	ctx->user_port = ctx->protocol == SBX_PROTO_TCP ? r->port6_tcp : r->port6_udp;
	return 1;
}

/* ---- loopback: decided on the listener ---------------------------------- */

struct sbx_lo {
	struct sbx_dest dest;	/* family of the lookup; addr as the LPM tries
				 * and events take it */
	__u16 op;		/* SBX_OP_CONNECT or SBX_OP_SENDMSG */
};

/* A rule that names this port (not one for every port, such as a blanket
 * loopback allow) and allows it: the person wrote it for this listener. */
static __always_inline bool sbx_port_named(const struct sbx_session *s, const struct sbx_lo *d,
					   __u32 *rule)
{
	const struct sbx_net_rule *r;

	if (d->dest.family == AF_INET) {
		struct sbx_net4_key k = { .prefixlen = 64, .policy_id = bpf_htonl(s->pol.policy_id) };

		__builtin_memcpy(k.addr, d->dest.addr, 4);
		r = bpf_map_lookup_elem(&sbx_net4, &k);
	} else {
		struct sbx_net6_key k = { .prefixlen = 160, .policy_id = bpf_htonl(s->pol.policy_id) };

		__builtin_memcpy(k.addr, d->dest.addr, 16);
		r = bpf_map_lookup_elem(&sbx_net6, &k);
	}
	if (!r)
		return false;
	#pragma unroll
	for (int i = 0; i < SBX_NET_PORT_RULES; i++) {
		if (i >= r->count)
			break;
		const struct sbx_net_port_rule *p = &r->r[i];
		if (d->dest.port < p->port_lo || d->dest.port > p->port_hi)
			continue;
		if (p->proto && p->proto != d->dest.proto)
			continue;
		/* first match decides, as in the LSM hook */
		if (p->port_lo == 0 && p->port_hi == 65535)
			return false;
		*rule = p->rule_id;
		return p->verdict == SBX_V_ALLOW || p->verdict == SBX_V_AUDIT;
	}
	return false;
}

static __always_inline int sbx_lo_refuse(struct bpf_sock_addr *ctx, const struct sbx_session *s,
					 __u64 cgid, const struct sbx_lo *d, __u8 v, __u32 rule)
{
	return sbx_sock_addr_event(s, cgid, d->op, SBX_EVF_LOOPBACK, &d->dest, v, rule);
}

/*
 * A socket bound to a device held this port (sbx_dev_ports), and not only
 * sockets of this session: the lookup below cannot see it (it looks up as
 * from no device; the kernel delivers a loopback datagram or connection to
 * a socket bound to lo first), so the port is decided as an outside
 * listener's whatever the lookup finds. Any such port at all is rare: one
 * counter says whether to look.
 */
static __always_inline bool sbx_dev_port_foreign(const struct sbx_lo *d, __u64 cgid)
{
	struct sbx_dev_port_key k = { .port = d->dest.port, .proto = d->dest.proto };
	__u64 n = sbx_read_epoch(SBX_EPOCH_DEV_PORTS), *held;

	if (!n)
		return false;
	if (n >> 63)
		return true;	/* a port could not be written down (ports.bpf.c) */
	held = bpf_map_lookup_elem(&sbx_dev_ports, &k);
	return held && *held != cgid;
}

/*
 * The listener at d (looked up as tuple, tlen) decides: none, the
 * session's own, or the daemon's: allowed; an approver's: refused; any
 * other process's, or one the lookup cannot see (sbx_dev_port_foreign):
 * network.loopback, unless a rule names the port or a person granted it.
 * 1 lets the connect or send go on, 0 refuses it; *own says the listener
 * was the session's own, the one answer the caller may remember.
 */
static __always_inline int sbx_lo_decide(struct bpf_sock_addr *ctx, struct bpf_sock_tuple *t,
					 __u32 tlen, const struct sbx_lo *d, __u64 cgid, bool *own)
{
	const struct sbx_listener *l;
	const struct sbx_session *s;
	struct bpf_sock *sk;
	__u64 *owner;
	__u32 rule = 0;
	bool unseen;
	__u8 v;

	/* the session itself is looked up only when the listener is not its
	 * own: a stream of datagrams to its own server pays for no more */
	if (d->dest.proto == SBX_PROTO_TCP)
		sk = bpf_sk_lookup_tcp(ctx, t, tlen, SBX_CURRENT_NETNS, 0);
	else if (d->dest.proto == SBX_PROTO_UDP)
		sk = bpf_sk_lookup_udp(ctx, t, tlen, SBX_CURRENT_NETNS, 0);
	else
		return 1;
	unseen = sbx_dev_port_foreign(d, cgid);
	if (!sk) {
		/* nobody listens, and the connect fails by itself, unless a
		 * socket the lookup cannot see does */
		if (!unseen)
			return 1;
		v = SBX_V_NONE;
	} else {
		/* the session's own first: only sockets of the daemon and of
		 * approvers (outside every session) carry an sbx_listener */
		owner = bpf_sk_storage_get(&sbx_sk_owner, sk, 0, 0);
		if (owner && *owner == cgid) {
			v = SBX_V_ALLOW;
			*own = true;
		} else {
			l = bpf_sk_storage_get(&sbx_listeners, sk, 0, 0);
			v = l && (l->flags & SBX_LISTENER_NEVER) ? SBX_V_DENY :
			    l && (l->flags & SBX_LISTENER_DAEMON) ? SBX_V_ALLOW : SBX_V_NONE;
		}
		bpf_sk_release(sk);
		if (unseen && v == SBX_V_ALLOW) {
			v = SBX_V_NONE;
			*own = false;
		}
	}
	if (v == SBX_V_ALLOW)
		return 1;
	s = sbx_session_get(&cgid);
	if (!s)
		return 1;
	sbx_stat_inc(SBX_STAT_CHECKS);
	if (v == SBX_V_DENY)
		return sbx_lo_refuse(ctx, s, cgid, d, SBX_V_DENY, SBX_RULE_LISTENER_HIDDEN);
	if (sbx_port_named(s, d, &rule))
		return 1;
	v = s->pol.loopback_outside;
	rule = s->pol.loopback_rule;
	if (v == SBX_V_NONE)
		v = SBX_V_ASK;
	if (v <= SBX_V_ALLOW)
		return 1;
	if (v == SBX_V_ASK && (s->pol.flags & SBX_PF_HAS_GRANTS) && sbx_addr_granted(cgid, d->dest.family, d->dest.addr, d->dest.port)) {
		sbx_stat_inc(SBX_STAT_GRANT_USED);
		return 1;
	}
	return sbx_lo_refuse(ctx, s, cgid, d, v, rule);
}

/* 127.0.0.0/8 and 0.0.0.0 (which means this host) */
static __always_inline bool sbx_lo4(__u32 a)
{
	return (bpf_ntohl(a) >> 24) == 127 || a == 0;
}

/* ---- destinations decided here ------------------------------------------ */

/*
 * A session's datagram is decided only here, on both tiers: udp_sendmsg
 * runs these programs for every destination given to sendto, sendmsg
 * and each message of sendmmsg, with the address the kernel will use
 * (sin_addr of an AF_UNSPEC sockaddr, the IPv4 address of a v4-mapped
 * one), and no LSM hook needs to run on every write to every socket of
 * the machine for it. Connects are decided here where BPF-LSM is off;
 * on the full tier lsm/socket_connect decided them (it sees every
 * protocol), and only TCP Fast Open (sendto with MSG_FASTOPEN), which
 * reaches this program through pre_connect and no LSM hook, is decided
 * here (sbx_lsm_decided). These programs run for the sockets made in a
 * session (their cgroup's); one made elsewhere never enters a session
 * (file_receive, run).
 *
 * The DNS paths around the daemon, then the CIDR and port rules with what
 * the session learned, then a person's grant. 1 lets the connect or send
 * go on, 0 refuses it (EPERM), with the event.
 *
 * A stream of datagrams to one peer costs one storage lookup: the
 * socket's last allowed destination (sbx_dcache), kept under
 * SBX_EPOCH_NET, for the session that decided it, until the learned
 * address it relied on expires.
 */
/*
 * On the full tier lsm/socket_connect decided every connect(2) of the
 * session before this program runs, and what reaches pre_connect without
 * it is TCP Fast Open: tcp_sendmsg_fastopen() holds fastopen_req while it
 * connects. A connect this cannot tell apart (another protocol, a socket
 * it cannot read) is decided again.
 */
static __always_inline bool sbx_lsm_decided(struct bpf_sock_addr *ctx)
{
	struct tcp_sock *tp;

	if (!sbx_lsm_connects)
		return false;
	if (ctx->protocol == SBX_PROTO_UDP)
		return true;
	if (ctx->protocol != SBX_PROTO_TCP)
		return false;
	tp = bpf_skc_to_tcp_sock(ctx->sk);
	return tp && !tp->fastopen_req;
}

/*
 * A session's first datagram gives its socket a port: whose is recorded
 * here (sbx_sk_owner), as bind and listen record it (network.bpf.c).
 * 0 (refused) when it cannot be: the session's own socket would
 * otherwise count as an outside listener.
 */
static __always_inline int sbx_cg_mark_owner(struct bpf_sock_addr *ctx, __u64 cgid)
{
	__u64 *o = sbx_sk_storage_make(&sbx_sk_owner, ctx->sk);

	if (!o) {
		sbx_stat_inc(SBX_STAT_ERRORS);
		return 0;
	}
	sbx_owner_set(o, cgid, ctx->protocol, ctx->sk->src_port);
	return 1;
}

/* a session's DNS datagram, redirected and never remembered: its socket
 * is marked on each one */
static __always_inline int sbx_cg_own_dns(struct bpf_sock_addr *ctx, __u16 op)
{
	__u64 cgid;

	if (op != SBX_OP_SENDMSG)
		return 1;
	cgid = bpf_get_current_ancestor_cgroup_id(sbx_session_level);
	if (!cgid || !sbx_session_get(&cgid))
		return 1;
	return sbx_cg_mark_owner(ctx, cgid);
}

/*
 * l->dest, decided for the session: its rules, then, for a destination
 * on this host (tlen: the listener lookup's tuple; 0 for any other), its
 * listener (sbx_lo_decide). A datagram's answers are remembered on its
 * socket (sbx_dcache), the listener's only when it is the session's own.
 */
static __always_inline int sbx_cg_addr(struct bpf_sock_addr *ctx, struct sbx_lo *l,
				       struct bpf_sock_tuple *t, __u32 tlen)
{
	__u64 cgid = bpf_get_current_ancestor_cgroup_id(sbx_session_level), expires = ~0ull;
	struct sbx_dest *d = &l->dest;
	bool dgram = l->op == SBX_OP_SENDMSG, own = false;
	struct sbx_dcache *c = NULL;
	struct sbx_session *s;
	__u64 net = 0, lo = 0;
	__u32 rule = 0, gen = 0;
	int hit = SBX_DC_MISS, r = 1;
	__u8 v;

	if (!cgid)
		return 1;
	d->proto = ctx->protocol;
	if (dgram) {
		/* read before anything is decided or looked up: the daemon
		 * moves NET after it changes what a decision reads, a
		 * session's entry too, and a port changing hands moves PORTS */
		net = sbx_read_epoch(SBX_EPOCH_NET);
		if (tlen)
			lo = sbx_read_epoch(SBX_EPOCH_PORTS);
		c = bpf_sk_storage_get(&sbx_dcache, ctx->sk, 0, 0);
		if (c)
			hit = sbx_dcache_hit(c, cgid, d, net, lo, &gen);
		if (hit == SBX_DC_WHOLE) {
			sbx_stat_inc(tlen ? SBX_STAT_LO_CACHE_HIT : SBX_STAT_NET_CACHE_HIT);
			return 1;
		}
		if (hit)
			sbx_stat_inc(SBX_STAT_NET_CACHE_HIT);
	}
	if (!hit && !(l->op == SBX_OP_CONNECT && sbx_lsm_decided(ctx))) {
		s = sbx_session_get(&cgid);
		if (!s)
			return 1;
		/* its first datagram binds an unbound socket: whose port it
		 * is must be known before anyone can send to it (a
		 * remembered destination means this ran before) */
		if (dgram && !sbx_cg_mark_owner(ctx, cgid))
			return 0;
		sbx_stat_inc(SBX_STAT_CHECKS);
		if (sbx_dns_bypass(d->family, d->addr, d->port)) {
			v = SBX_V_DENY;
			rule = SBX_RULE_DNS_PATH;
		} else {
			v = sbx_net_decide(s, cgid, d, &rule, &expires);
		}
		sbx_net_grant(s, cgid, d, &v, &rule);
		if (v > SBX_V_ALLOW)
			return sbx_sock_addr_event(s, cgid, l->op, 0, d, v, rule);
	}
	if (tlen)
		r = sbx_lo_decide(ctx, t, tlen, l, cgid, &own);
	if (!dgram || (hit && !own))
		return r;
	if (!c)
		c = bpf_sk_storage_get(&sbx_dcache, ctx->sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!c)
		return r;
	if (hit)
		sbx_dcache_put_lo(c, gen, lo);
	else
		sbx_dcache_put(c, cgid, d, net, !tlen ? 0 : own ? lo : ~0ull, expires);
	return r;
}

/* 127.0.0.0/8 and 0.0.0.0 (this host): looked up as 127.0.0.1. One call
 * of sbx_cg_addr for either: each inlined copy is verified on its own */
static __always_inline int sbx_addr4(struct bpf_sock_addr *ctx, __u32 a, __u16 op)
{
	struct bpf_sock_tuple t = {};
	struct sbx_lo l = { .dest.family = AF_INET, .op = op };
	__u32 tlen = 0;

	l.dest.port = bpf_ntohs(ctx->user_port);
	l.dest.w[0] = a;
	if (sbx_lo4(a)) {
		t.ipv4.daddr = a ? a : bpf_htonl(0x7f000001);
		t.ipv4.dport = ctx->user_port;
		tlen = sizeof(t.ipv4);
	}
	return sbx_cg_addr(ctx, &l, &t, tlen);
}

/* ::1, and :: (which means this host too): looked up as ::1 */
static __always_inline int sbx_addr6(struct bpf_sock_addr *ctx, const __u32 a[4], __u16 op)
{
	struct bpf_sock_tuple t = {};
	struct sbx_lo l = { .dest.family = AF_INET6, .op = op };
	__u32 tlen = 0;

	l.dest.port = bpf_ntohs(ctx->user_port);
	__builtin_memcpy(l.dest.addr, a, 16);
	if (!a[0] && !a[1] && !a[2] && (!a[3] || a[3] == bpf_htonl(1))) {
		t.ipv6.daddr[3] = bpf_htonl(1);
		t.ipv6.dport = ctx->user_port;
		tlen = sizeof(t.ipv6);
	}
	return sbx_cg_addr(ctx, &l, &t, tlen);
}

static __always_inline int sbx_cg4(struct bpf_sock_addr *ctx, __u16 op)
{
	if (sbx_dns_wanted(ctx))
		return sbx_cg_own_dns(ctx, op) ? sbx_dns_redirect4(ctx) : 0;
	return sbx_addr4(ctx, ctx->user_ip4, op);
}

static __always_inline int sbx_cg6(struct bpf_sock_addr *ctx, __u16 op)
{
	__u32 a[4];

	if (sbx_dns_wanted(ctx))
		return sbx_cg_own_dns(ctx, op) ? sbx_dns_redirect6(ctx) : 0;
	a[0] = ctx->user_ip6[0];
	a[1] = ctx->user_ip6[1];
	a[2] = ctx->user_ip6[2];
	a[3] = ctx->user_ip6[3];
	if (sbx_v4mapped(a))
		return sbx_addr4(ctx, a[3], op);
	return sbx_addr6(ctx, a, op);
}

SEC("cgroup/connect4")
int sbx_dns_connect4(struct bpf_sock_addr *ctx)
{
	return sbx_cg4(ctx, SBX_OP_CONNECT);
}

SEC("cgroup/connect6")
int sbx_dns_connect6(struct bpf_sock_addr *ctx)
{
	return sbx_cg6(ctx, SBX_OP_CONNECT);
}

SEC("cgroup/sendmsg4")
int sbx_dns_sendmsg4(struct bpf_sock_addr *ctx)
{
	return sbx_cg4(ctx, SBX_OP_SENDMSG);
}

SEC("cgroup/sendmsg6")
int sbx_dns_sendmsg6(struct bpf_sock_addr *ctx)
{
	return sbx_cg6(ctx, SBX_OP_SENDMSG);
}

/*
 * The way back: a datagram (recvmsg) or a peer (getpeername) that is the
 * session's resolver shows as the address the program asked for. Only
 * sockets that were redirected carry an sbx_dns_orig.
 */
static __always_inline void sbx_dns_restore4(struct bpf_sock_addr *ctx)
{
	struct sbx_dns_orig *o = bpf_sk_storage_get(&sbx_dns_sk, ctx->sk, 0, 0);
	const struct sbx_dns_resolver *r;
	bool in;

	if (!o)
		return;
	r = sbx_dns_own(&in);
	if (!r || ctx->user_ip4 != r->addr4 ||
	    (ctx->user_port != r->port4_udp && ctx->user_port != r->port4_tcp))
		return;
	__builtin_memcpy(&ctx->user_ip4, o->addr + 12, 4);
	ctx->user_port = o->port;
}

static __always_inline void sbx_dns_restore6(struct bpf_sock_addr *ctx)
{
	struct sbx_dns_orig *o = bpf_sk_storage_get(&sbx_dns_sk, ctx->sk, 0, 0);
	const struct sbx_dns_resolver *r;
	__u32 a[4], w[4];
	bool in, ours;

	if (!o)
		return;
	r = sbx_dns_own(&in);
	if (!r)
		return;
	a[0] = ctx->user_ip6[0];
	a[1] = ctx->user_ip6[1];
	a[2] = ctx->user_ip6[2];
	a[3] = ctx->user_ip6[3];
	if (sbx_v4mapped(a))
		ours = a[3] == r->addr4 &&
		       (ctx->user_port == r->port4_udp || ctx->user_port == r->port4_tcp);
	else
		ours = !a[0] && !a[1] && !a[2] && a[3] == bpf_htonl(1) &&
		       (ctx->user_port == r->port6_udp || ctx->user_port == r->port6_tcp);
	if (!ours)
		return;
	__builtin_memcpy(w, o->addr, 16);
	ctx->user_ip6[0] = w[0];
	ctx->user_ip6[1] = w[1];
	ctx->user_ip6[2] = w[2];
	ctx->user_ip6[3] = w[3];
	ctx->user_port = o->port;
}

SEC("cgroup/recvmsg4")
int sbx_dns_recvmsg4(struct bpf_sock_addr *ctx)
{
	sbx_dns_restore4(ctx);
	return 1;
}

SEC("cgroup/recvmsg6")
int sbx_dns_recvmsg6(struct bpf_sock_addr *ctx)
{
	sbx_dns_restore6(ctx);
	return 1;
}

SEC("cgroup/getpeername4")
int sbx_dns_getpeername4(struct bpf_sock_addr *ctx)
{
	sbx_dns_restore4(ctx);
	return 1;
}

SEC("cgroup/getpeername6")
int sbx_dns_getpeername6(struct bpf_sock_addr *ctx)
{
	sbx_dns_restore6(ctx);
	return 1;
}
