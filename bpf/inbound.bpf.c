// SPDX-License-Identifier: GPL-2.0
/*
 * inbound.bpf.c - outside clients that come to a session's listener.
 *
 * A session may serve on loopback. A client the person runs outside every
 * session (psql, redis-cli, a browser, an IDE, git) that connects to a
 * port the session holds hands its credentials to the session. So a
 * TCP connect or UDP datagram from a process outside every session to a
 * loopback address (127.0.0.0/8, ::1, 0.0.0.0, ::, v4-mapped) whose
 * listener is a session's socket is refused unless that session's policy
 * allows inbound on the port (network.inbound_ports, network.inbound).
 *
 * Decided on the client's side: refusing the SYN on the listener's side
 * (inet_conn_request) would leave the client retrying until it times
 * out, while a refused connect() fails at once with EPERM. An LSM hook
 * cannot look a listener up; cgroup sock_addr programs can
 * (bpf_sk_lookup_tcp/udp). They are attached to the cgroup root, so they
 * run for every process's connect and addressed send; what an outside
 * process pays is a few loads unless the destination is loopback, on a
 * port a socket of a live session has held (sbx_held_ports, under the
 * word SBX_EPOCH_SESSION_PORTS: TCP and UDP apart), and a session's own
 * processes leave at once (dns.bpf.c decides for them). A stream of
 * datagrams to one loopback destination whose listener is not a
 * session's costs one socket storage lookup (sbx_dcache, with cgid 0 and
 * no NET epoch) until a UDP port anywhere changes hands.
 *
 * Whose a listener is: the session recorded in its socket storage
 * (sbx_sk_owner) when it got its port. A recorded session whose entry
 * is gone still counts as a session's (fail closed).
 *
 * Not covered here: a UDP socket connected before a session took the
 * port sends without another check (no program runs on an unaddressed
 * send); a destination that is one of this host's other addresses
 * (reaching a listener bound to 0.0.0.0) is not recognised as local; a
 * port the kernel picks for a session's socket (bind to port 0, listen
 * or a datagram without bind) is visible for the moment between its
 * choice and the fexit program that records it (ports.bpf.c), to a
 * client that would have to guess it.
 */
#include "sbx_common.h"

#define SBX_CURRENT_NETNS	(-1L)	/* BPF_F_CURRENT_NETNS */
#define SBX_PROTO_TCP		6
#define SBX_PROTO_UDP		17

/* s is NULL for a client outside every session */
static __always_inline int sbx_in_refuse(const struct sbx_session *s, __u64 cgid,
					 const struct sbx_dest *d, __u8 v, __u32 rule)
{
	struct sbx_session none = {};

	return sbx_sock_addr_event(s ? s : &none, cgid, SBX_OP_INBOUND, SBX_EVF_INBOUND, d, v,
				   rule);
}

/* 1 lets the connect or send go on, 0 refuses it */
static __always_inline int sbx_in_decide(struct bpf_sock_addr *ctx, struct bpf_sock_tuple *t,
					 __u32 tlen, struct sbx_dest *d)
{
	const struct sbx_session *s;
	struct sbx_dcache *seen = NULL;
	struct bpf_sock *sk;
	__u64 cgid = 0, *owner, epoch = ~0ull;
	__u32 rule = 0, gen;
	__u8 v;

	if (d->proto == SBX_PROTO_TCP) {
		sk = bpf_sk_lookup_tcp(ctx, t, tlen, SBX_CURRENT_NETNS, 0);
	} else if (d->proto == SBX_PROTO_UDP) {
		/* read before the lookup, as dns.bpf.c does */
		epoch = sbx_read_epoch(SBX_EPOCH_PORTS);
		seen = bpf_sk_storage_get(&sbx_dcache, ctx->sk, 0, 0);
		if (seen && sbx_dcache_hit(seen, 0, d, 0, epoch, &gen) == SBX_DC_WHOLE)
			return 1;
		sk = bpf_sk_lookup_udp(ctx, t, tlen, SBX_CURRENT_NETNS, 0);
	} else {
		return 1;
	}
	if (sk) {
		owner = bpf_sk_storage_get(&sbx_sk_owner, sk, 0, 0);
		if (owner)
			cgid = *owner;
		bpf_sk_release(sk);
	}
	if (!cgid) {
		/* nobody, or not a session's: remembered for the next datagram */
		if (epoch != ~0ull) {
			if (!seen)
				seen = bpf_sk_storage_get(&sbx_dcache, ctx->sk, 0,
							  BPF_SK_STORAGE_GET_F_CREATE);
			if (seen)
				sbx_dcache_put(seen, 0, d, 0, epoch, ~0ull);
		}
		return 1;
	}
	if (sbx_current_is_daemon())
		return 1;
	sbx_stat_inc(SBX_STAT_CHECKS);
	s = sbx_session_get(&cgid);
	if (!s)
		return sbx_in_refuse(NULL, cgid, d, SBX_V_DENY, SBX_RULE_INBOUND);
	v = sbx_inbound_verdict(s, d->port, &rule);
	if (v <= SBX_V_ALLOW)
		return 1;
	return sbx_in_refuse(s, cgid, d, v, rule);
}

/* Only what an outside process's loopback destination needs: the global
 * word first (a session holds a port of this protocol), then the port's
 * bit (a session's socket has held this one, sbx_held_ports), then the
 * session gate. An unreadable word (~0) or set looks. */
static __always_inline bool sbx_in_wanted(const struct bpf_sock_addr *ctx)
{
	__u8 proto = ctx->protocol;

	return (sbx_read_epoch(SBX_EPOCH_SESSION_PORTS) & sbx_session_ports_bit(proto)) &&
	       sbx_port_maybe_held(proto, bpf_ntohs(ctx->user_port)) && !sbx_maybe_in_session();
}

static __always_inline int sbx_in4(struct bpf_sock_addr *ctx, __u32 a)
{
	struct bpf_sock_tuple t = {};
	struct sbx_dest d = { .family = AF_INET };

	/* 127.0.0.0/8, and 0.0.0.0 (this host) */
	if ((bpf_ntohl(a) >> 24) != 127 && a != 0)
		return 1;
	if (!sbx_in_wanted(ctx))
		return 1;
	t.ipv4.daddr = a ? a : bpf_htonl(0x7f000001);
	t.ipv4.dport = ctx->user_port;
	d.port = bpf_ntohs(ctx->user_port);
	d.proto = ctx->protocol;
	d.w[0] = a;
	return sbx_in_decide(ctx, &t, sizeof(t.ipv4), &d);
}

static __always_inline int sbx_in6(struct bpf_sock_addr *ctx)
{
	struct bpf_sock_tuple t = {};
	struct sbx_dest d = { .family = AF_INET6 };
	__u32 a0 = ctx->user_ip6[0], a1 = ctx->user_ip6[1];
	__u32 a2 = ctx->user_ip6[2], a3 = ctx->user_ip6[3];

	if (!a0 && !a1 && a2 == bpf_htonl(0xffff))
		return sbx_in4(ctx, a3);
	/* ::1, or :: (this host) */
	if (a0 || a1 || a2 || (a3 && a3 != bpf_htonl(1)))
		return 1;
	if (!sbx_in_wanted(ctx))
		return 1;
	t.ipv6.daddr[3] = bpf_htonl(1);
	t.ipv6.dport = ctx->user_port;
	d.port = bpf_ntohs(ctx->user_port);
	d.proto = ctx->protocol;
	d.w[0] = 0;
	d.w[1] = (__u64)a3 << 32;
	return sbx_in_decide(ctx, &t, sizeof(t.ipv6), &d);
}

SEC("cgroup/connect4")
int sbx_inbound_connect4(struct bpf_sock_addr *ctx)
{
	return sbx_in4(ctx, ctx->user_ip4);
}

SEC("cgroup/connect6")
int sbx_inbound_connect6(struct bpf_sock_addr *ctx)
{
	return sbx_in6(ctx);
}

SEC("cgroup/sendmsg4")
int sbx_inbound_sendmsg4(struct bpf_sock_addr *ctx)
{
	return sbx_in4(ctx, ctx->user_ip4);
}

SEC("cgroup/sendmsg6")
int sbx_inbound_sendmsg6(struct bpf_sock_addr *ctx)
{
	return sbx_in6(ctx);
}
