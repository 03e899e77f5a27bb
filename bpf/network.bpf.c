// SPDX-License-Identifier: GPL-2.0
/*
 * network.bpf.c - where a session may connect, and which ports it holds.
 *
 * lsm/socket_connect decides every connect of a session, of any
 * protocol; a datagram's destination, and TCP Fast Open's (sendto with
 * MSG_FASTOPEN), are decided by the cgroup programs (dns.bpf.c), which
 * the kernel runs for exactly those and only for sockets made in a
 * session, so that no program runs on every sendmsg and write of the
 * machine. A destination is read as the socket's own family reads it,
 * not by its sa_family alone: a dual-stack IPv6 socket connects to an
 * AF_INET address, and an address these hooks cannot read is refused.
 * IPv4-mapped IPv6 destinations (::ffff:a.b.c.d) are checked as the IPv4
 * address they are. One LPM lookup per family finds the most specific
 * prefix; its value already holds the port rules of every covering
 * prefix (the compiler pushes them down), so the scan below is
 * first-match.
 */
#include "sbx_file.h"	/* unix sockets are files */
#include "sbx_dns.h"	/* names: DNS redirect, learned addresses */
#include "sbx_net.h"	/* the destination rules */

#define SCTP_SOCKOPT_BINDX_ADD	100
#define SCTP_SOCKOPT_BINDX_REM	101

/* The address as the hook's caller gave it, read once: a kernel copy
 * (move_addr_to_kernel's sockaddr_storage, io_uring's too), so reading
 * the largest form the hooks parse stays inside it whatever len says;
 * len decides which bytes count. */
union sbx_sa {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
} __attribute__((aligned(8)));

/* Whole words, not bytes: clang otherwise keeps each byte in a register
 * and rebuilds the words to compare them, a hundred instructions on every
 * datagram (x86 only: little-endian). */
static __always_inline void sbx_dest_v4(const struct sockaddr_in *sin, struct sbx_dest *d)
{
	d->family = AF_INET;
	d->port = bpf_ntohs(sin->sin_port);
	d->w[0] = sin->sin_addr.s_addr;
	d->w[1] = 0;
}

static __always_inline void sbx_dest_v6(const struct sockaddr_in6 *sin6, struct sbx_dest *d)
{
	__u64 w0 = *(const __u64 *)&sin6->sin6_addr;	/* the union: 8-aligned */
	__u64 w1 = *((const __u64 *)&sin6->sin6_addr + 1);

	d->port = bpf_ntohs(sin6->sin6_port);
	if (!w0 && (__u32)w1 == bpf_htonl(0xffff)) {	/* ::ffff:a.b.c.d */
		d->family = AF_INET;
		d->w[0] = w1 >> 32;
		d->w[1] = 0;
	} else {
		d->family = AF_INET6;
		d->w[0] = w0;
		d->w[1] = w1;
	}
}

/*
 * Parse a kernel copy of a sockaddr given to connect a socket of family
 * sk_family. 0: a destination to check; 1: nothing to check (a
 * disconnect, a family with no addresses of its own to check);
 * -1: a destination that cannot be read (refused).
 */
static __always_inline int sbx_parse_dest(__u16 sk_family, struct sockaddr *sa, int len,
					  struct sbx_dest *d)
{
	union sbx_sa u;		/* 8-aligned for the words: larger than sin6 */
	int got = sizeof(u.sin6);
	__u16 family;

	if (sk_family != AF_INET && sk_family != AF_INET6)
		return 1;	/* unix (unix_may_send), netlink, a family the policy allowed */
	if (!sa)
		return 1;
	if (len < 2)
		return -1;
	if (sk_family == AF_INET) {
		/* nothing but a sockaddr_in counts for it: half the copy */
		got = sizeof(u.sin);
		if (bpf_probe_read_kernel(&u.sin, sizeof(u.sin), sa))
			return -1;
	} else if (bpf_probe_read_kernel(&u, sizeof(u.sin6), sa)) {
		/* an IPv4 address at the end of its memory: read what it is */
		got = sizeof(u.sin);
		if (bpf_probe_read_kernel(&u.sin, sizeof(u.sin), sa))
			return -1;
	}
	if (len > got)
		len = got;	/* bytes not read count as not given */
	family = u.sa.sa_family;
	/* connect(AF_UNSPEC) disconnects */
	if (family == AF_UNSPEC)
		return 1;
	if (family == AF_INET6 && sk_family != AF_INET6) {
		return -1;
	}
	if (family == AF_INET) {
		if (len < (int)sizeof(u.sin))
			return -1;
		sbx_dest_v4(&u.sin, d);
		return 0;
	}
	if (family == AF_INET6) {
		if (len < (int)sizeof(u.sin6))
			return -1;
		sbx_dest_v6(&u.sin6, d);
		return 0;
	}
	return -1;
}

/*
 * The session that gave a socket its port (sbx_owner_set). A socket is
 * found by a lookup only once it has one: bind(), listen() (which binds
 * an unbound socket) and an unconnected datagram (which does too) record
 * it; a connected datagram socket is not found. Recorded there rather
 * than at socket creation, where every session socket would pay for a
 * storage allocation. -ENOMEM when it cannot be recorded: an unmarked
 * listener of the session would count as an outside one. port: the one
 * a bind asks for, or 0.
 */
static __always_inline int sbx_mark_owner(struct socket *so, __u64 cgid, __u16 port)
{
	struct sock *sk = so->sk;
	__u64 *o;

	if (!sk)
		return 0;
	o = sbx_sk_storage_make(&sbx_sk_owner, sk);
	if (!o) {
		sbx_stat_inc(SBX_STAT_ERRORS);
		return -ENOMEM;
	}
	sbx_owner_set(o, cgid, sk->sk_protocol, port ?: sk->__sk_common.skc_num);
	return 0;
}

static __always_inline int sbx_mark_port_holder(struct socket *so, __u16 port)
{
	struct sock *sk = so->sk;
	__u64 cgid = 0;
	__u16 fam;

	if (!sk)
		return 0;
	fam = sk->__sk_common.skc_family;
	if (fam != AF_INET && fam != AF_INET6)
		return 0;
	if (!sbx_session_lookup(&cgid))
		return 0;
	return sbx_mark_owner(so, cgid, port);
}

/*
 * A session's server on a port that outside clients use with credentials
 * (network.reserved_ports: ssh, postgres, redis, an X display) would
 * receive the person's own psql, redis-cli or ssh and what they send
 * first: passwords, tokens, cookies. The bind is refused; a port the
 * kernel picks (listen() or connect() without bind, a first datagram)
 * is ephemeral and never one of those. Every family puts the port at
 * offset 2 (sockaddr_in, sockaddr_in6, the AF_UNSPEC that inet_bind
 * takes as INADDR_ANY). *port: the port asked for, 0 for the kernel's.
 */
static __always_inline int sbx_check_reserved(struct socket *sock, struct sockaddr *sa, int len,
					      __u16 *port)
{
	struct sock *sk = sock->sk;
	struct sbx_file_rule *r;
	struct sbx_session *s;
	struct sbx_event *e;
	__u64 cgid = 0;
	__u16 fam;
	__u8 v;
	int ret;

	if (!sk || !sa || len < 4)
		return 0;	/* the kernel refuses a short address itself */
	fam = sk->__sk_common.skc_family;
	if (fam != AF_INET && fam != AF_INET6)
		return 0;
	if (bpf_probe_read_kernel(port, sizeof(*port), (void *)sa + 2))
		return -EPERM;
	*port = bpf_ntohs(*port);
	if (!*port)
		return 0;
	s = sbx_session_lookup(&cgid);
	if (!s)
		return 0;
	r = sbx_port_rule(s->pol.policy_id, *port);
	if (!r)
		return 0;
	v = r->verdict[SBX_PORT_BIND];
	if (v <= SBX_V_ALLOW)
		return 0;
	ret = sbx_verdict_ret(v);
	sbx_count_verdict(v);
	e = sbx_event_begin(s, cgid, SBX_OP_BIND, v, r->rule_id[SBX_PORT_BIND], ret);
	if (!e)
		return ret;
	e->family = fam;
	e->flags = fam == AF_INET6 ? SBX_EVF_NET6 : SBX_EVF_NET4;
	e->port = *port;
	e->proto = sk->sk_protocol;
	if (fam == AF_INET6 && len >= (int)sizeof(struct sockaddr_in6))
		bpf_probe_read_kernel(e->addr, 16, (void *)sa + 8);
	else if (fam == AF_INET && len >= (int)sizeof(struct sockaddr_in))
		bpf_probe_read_kernel(e->addr, 4, (void *)sa + 4);
	sbx_event_describe(0, 0);
	sbx_event_send(e);
	return ret;
}

/*
 * The landlock tier (BPF-LSM off) takes the same decisions on the same
 * arguments where Landlock and the cgroup programs cannot: who may
 * connect to a unix socket (Landlock decides who may make a socket file;
 * cgroup/connect_unix, 6.7, runs before the lookup, with a path and no
 * listener), and which session holds a port (bind and listen run no
 * cgroup program that can refuse and record). The kernel attaches
 * BPF_MODIFY_RETURN to any security_* function whether BPF-LSM is in
 * lsm= or not, and a non-zero return there is the caller's refusal.
 *
 * In two halves, because bpf_sk_storage_get (the daemon's and the
 * approvers' listener marks, the control peers, the port owners) is
 * refused to fmod_ret programs and allowed to fentry ones: fentry
 * decides, with its events, and leaves the verdict in the task's
 * scratch; fmod_ret, which the trampoline runs next, returns it. Where a
 * decision was due and none is there (the kernel skips a tracing program
 * that is already running on this CPU), fmod_ret refuses.
 */
static __always_inline void sbx_ll_leave(const void *key, int ret)
{
	struct sbx_tscratch *sc = sbx_scratch();

	if (sc) {
		sc->ll_key = (__u64)key;
		sc->ll_ret = ret;
	}
}

static __always_inline int sbx_ll_take(const void *key, bool due)
{
	struct sbx_tscratch *sc = bpf_task_storage_get(&sbx_tscratch, bpf_get_current_task_btf(),
						       0, 0);

	if (sc && sc->ll_key == (__u64)key) {
		sc->ll_key = 0;
		return sc->ll_ret;
	}
	return due ? -EPERM : 0;
}

static __always_inline bool sbx_ll_in_session(void)
{
	__u64 cgid = 0;

	return sbx_current_session(&cgid) != NULL;
}

/* AF_UNIX: a session's named socket is what outside clients could reach
 * (sbx_unix_inbound); nothing to record, the socket's cgroup says whose */
static __always_inline int sbx_bind_decide(struct socket *sock, struct sockaddr *address,
					   int addrlen)
{
	__u16 port = 0;

	return sbx_check_reserved(sock, address, addrlen, &port) ?:
	       sbx_mark_port_holder(sock, port);
}

SEC("lsm/socket_bind")
int BPF_PROG(sbx_socket_bind, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	if (ret || !sbx_maybe_in_session())
		return ret;
	return sbx_bind_decide(sock, address, addrlen);
}

SEC("lsm/socket_listen")
int BPF_PROG(sbx_socket_listen, struct socket *sock, int backlog, int ret)
{
	if (ret || !sbx_maybe_in_session())
		return ret;
	return sbx_mark_port_holder(sock, 0);
}

SEC("fentry/security_socket_bind")
int BPF_PROG(sbx_ll_bind_decide, struct socket *sock, struct sockaddr *address, int addrlen)
{
	if (sbx_ll_in_session())
		sbx_ll_leave(sock, sbx_bind_decide(sock, address, addrlen));
	return 0;
}

SEC("fmod_ret/security_socket_bind")
int BPF_PROG(sbx_ll_socket_bind, struct socket *sock, struct sockaddr *address, int addrlen,
	     int ret)
{
	return ret ?: sbx_ll_take(sock, sbx_ll_in_session());
}

SEC("fentry/security_socket_listen")
int BPF_PROG(sbx_ll_listen_decide, struct socket *sock, int backlog)
{
	if (sbx_ll_in_session())
		sbx_ll_leave(sock, sbx_mark_port_holder(sock, 0));
	return 0;
}

SEC("fmod_ret/security_socket_listen")
int BPF_PROG(sbx_ll_socket_listen, struct socket *sock, int backlog, int ret)
{
	return ret ?: sbx_ll_take(sock, sbx_ll_in_session());
}

/* The verdict for one destination of a session's socket, with the event. */
static __always_inline int sbx_check_one(struct sbx_session *s, __u64 cgid, struct sock *sk,
					 int rc, struct sbx_dest *d, __u8 proto, __u16 op)
{
	struct sbx_event *e;
	__u64 expires = ~0ull;
	__u32 rule = 0;
	__u8 v;
	int ret;

	if (rc > 0)
		return 0;
	sbx_stat_inc(SBX_STAT_CHECKS);
	if (rc < 0) {
		v = SBX_V_DENY;
		rule = SBX_RULE_DEST_UNPARSED;
	} else {
		d->proto = proto;
		/* names (sbx_dns.h): DNS goes to the session's resolver */
		v = sbx_dns_dest(sk, d->family, d->addr, d->port, proto, cgid, &rule);
		if (v == SBX_V_ALLOW)
			return 0;
		if (v == SBX_V_NONE)
			v = sbx_net_decide(s, cgid, d, &rule, &expires);
		sbx_net_grant(s, cgid, d, &v, &rule);
	}
	if (v <= SBX_V_ALLOW)
		return 0;

	ret = sbx_verdict_ret(v);
	sbx_count_verdict(v);
	e = sbx_event_begin(s, cgid, op, v, rule, ret);
	if (!e)
		return ret;
	e->family = d->family;
	e->flags = d->family == AF_INET6 ? SBX_EVF_NET6 : SBX_EVF_NET4;
	e->port = d->port;
	e->proto = d->proto;
	__builtin_memcpy(e->addr, d->addr, 16);
	sbx_event_describe(0, 0);
	sbx_event_send(e);
	return ret;
}

SEC("lsm/socket_connect")
int BPF_PROG(sbx_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen,
	     int ret)
{
	struct sbx_session *s;
	struct sbx_dest d = {};
	struct sock *sk;
	__u64 cgid = 0;
	int rc;

	if (ret || !sbx_maybe_in_session())
		return ret;
	s = sbx_session_lookup(&cgid);
	if (!s)
		return 0;
	sk = sock->sk;
	if (!sk)
		return 0;	/* no protocol socket: nothing connects (6.12 marks it may be NULL) */
	rc = sbx_parse_dest(sk->__sk_common.skc_family, address, addrlen, &d);
	return sbx_check_one(s, cgid, sk, rc, &d, sk->sk_protocol, SBX_OP_CONNECT);
}

/*
 * SCTP names destinations in packed address lists (connectx, the primary
 * and peer-primary options, sendmsg to several peers): each is checked.
 * SCTP itself is refused at socket creation unless sandbox.sctp allows
 * it. A list longer than this hook reads is refused: never allowed
 * unread. Binding local addresses (bindx) names no destination.
 */
#define SBX_SCTP_ADDRS 4

SEC("lsm/sctp_bind_connect")
int BPF_PROG(sbx_sctp_bind_connect, struct sock *sk, int optname, struct sockaddr *address,
	     int addrlen, int ret)
{
	struct sbx_session *s;
	struct sbx_dest d = {};
	__u64 cgid = 0, expires;
	__u16 fam;
	int off = 0;

	if (ret || !sbx_maybe_in_session())
		return ret;
	if (optname == SCTP_SOCKOPT_BINDX_ADD || optname == SCTP_SOCKOPT_BINDX_REM)
		return 0;
	s = sbx_session_lookup(&cgid);
	if (!s)
		return 0;
	fam = BPF_CORE_READ(sk, __sk_common.skc_family);
	/* decide each address without its event; only the first one refused
	 * goes through sbx_check_one, so the event code is inlined once */
#pragma unroll
	for (int i = 0; i < SBX_SCTP_ADDRS; i++) {
		__u32 rule = 0;
		__u16 af = 0;
		int step;

		if (off >= addrlen)
			return 0;
		if (bpf_probe_read_kernel(&af, sizeof(af), (void *)address + off))
			return sbx_check_one(s, cgid, sk, -1, &d, IPPROTO_SCTP, SBX_OP_CONNECT);
		step = af == AF_INET ? (int)sizeof(struct sockaddr_in) :
		       af == AF_INET6 ? (int)sizeof(struct sockaddr_in6) : 0;
		if (!step || sbx_parse_dest(fam, (void *)address + off, addrlen - off, &d) < 0)
			return sbx_check_one(s, cgid, sk, -1, &d, IPPROTO_SCTP, SBX_OP_CONNECT);
		d.proto = IPPROTO_SCTP;
		if (sbx_net_decide(s, cgid, &d, &rule, &expires) > SBX_V_ALLOW)
			return sbx_check_one(s, cgid, sk, 0, &d, IPPROTO_SCTP, SBX_OP_CONNECT);
		off += step;
	}
	return off >= addrlen ? 0 :
	       sbx_check_one(s, cgid, sk, -1, &d, IPPROTO_SCTP, SBX_OP_CONNECT);
}

/* ---- unix sockets: decided on the listener ------------------------------ */

static __always_inline struct unix_sock *sbx_unix_sk(struct sock *sk)
{
	return (void *)sk;	/* struct sock is its first member */
}

/*
 * The event of a unix connect or send that was decided on its listener
 * (other), whichever side the session is on: counted, begun in the task's
 * scratch, and the listener named. NULL: no scratch (the drop is counted).
 */
static __always_inline struct sbx_event *sbx_peer_event(struct sbx_session *s, __u64 cgid,
							__u16 op, struct sock *other, __u8 v,
							__u32 rule, int ret)
{
	struct sbx_event *e;

	sbx_count_verdict(v);
	e = sbx_event_begin(s, cgid, op, v, rule, ret);
	if (e)
		sbx_event_peer(e, other);
	return e;
}

static __always_inline int sbx_refuse_peer(struct sbx_session *s, __u64 cgid, struct sock *other,
					   __u32 rule)
{
	struct sbx_event *e;

	e = sbx_peer_event(s, cgid, SBX_OP_UNIX_CONNECT, other, SBX_V_DENY, rule, -EPERM);
	if (e) {
		sbx_event_describe(0, 0);
		sbx_event_send(e);
	}
	return -EPERM;
}

/* The connecting task's session, recorded on the daemon's end of a
 * control connection (see struct sbx_ctl_peer). */
static __always_inline int sbx_record_ctl_peer(struct sbx_session *s, __u64 cgid,
					       struct sock *newsk)
{
	struct sbx_ctl_peer *p;

	if (!newsk)
		return 0;
	p = bpf_sk_storage_get(&sbx_ctl_peers, newsk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!p) {
		/* the daemon would take the request for one from outside */
		sbx_stat_inc(SBX_STAT_ERRORS);
		return -EPERM;
	}
	p->cgid = cgid;
	p->serial = s->serial;
	return 0;
}

/* ---- abstract names ------------------------------------------------------ */

#define SBX_ABSTRACT_MAX	107	/* sun_path less its leading NUL */

struct sbx_actx {
	struct sbx_tscratch *sc;
	struct sbx_file_rule *r;	/* the longest prefix rule found */
	__u64 mask;			/* abstract_len_mask */
	__u64 h;
	__u32 len;
	__u32 policy_id;
};

/* FNV-1a over the name, keeping the hash of every prefix (policy/hash.c) */
static long sbx_abstract_hash_step(__u32 i, void *ctx)
{
	struct sbx_actx *a = ctx;

	if (i >= a->len)
		return 1;
	a->h = (a->h ^ (__u8)a->sc->name[i & SBX_NAME_MAX]) * SBX_FNV_PRIME;
	if (i < SBX_GLOB_LIT_MAX)
		a->sc->pre[(i + 1) & 63] = a->h;
	return 0;
}

static __always_inline struct sbx_file_rule *
sbx_abstract_rule(__u32 policy_id, __u8 kind, __u8 len, __u64 hash)
{
	struct sbx_name_key k = {
		.policy_id = policy_id, .kind = kind, .len = len, .hash = hash,
	};

	return bpf_map_lookup_elem(&sbx_name_rules, &k);
}

static __always_inline bool sbx_abstract_granted(__u64 cgid, __u64 hash)
{
	struct sbx_grant_key k = {};
	struct sbx_grant *g;

	k.cgid = cgid;
	k.kind = SBX_GK_ABSTRACT;
	k.access = SBX_ACC_CONNECT;
	k.hash = hash;
	g = bpf_map_lookup_elem(&sbx_grants, &k);
	return g && (!g->expires_ns || bpf_ktime_get_boot_ns() <= g->expires_ns);
}

/* Longest "@prefix*" first: step i tries the literal of 63 - i bytes. */
static long sbx_abstract_prefix_step(__u32 i, void *ctx)
{
	struct sbx_actx *a = ctx;
	__u32 l = SBX_GLOB_LIT_MAX - i;

	if (l == 0)
		return 1;
	if (l > a->len || !((a->mask >> l) & 1))
		return 0;
	a->r = sbx_abstract_rule(a->policy_id, SBX_NAME_ABSTRACT_PREFIX, l, a->sc->pre[l & 63]);
	return a->r ? 1 : 0;
}

/*
 * A listener outside the session with an abstract name ("@name" in a
 * policy): the whole name's rule, else the longest "@prefix*" rule, else
 * the connect default. A socket with no name at all (one end of a
 * socketpair) is reached only through a descriptor the session already
 * holds, so it is not a listener anyone can find: allowed.
 */
static __always_inline int sbx_abstract_check(struct sbx_session *s, __u64 cgid,
					      struct sock *other)
{
	struct unix_address *addr = BPF_CORE_READ(sbx_unix_sk(other), addr);
	struct sbx_tscratch *sc;
	struct sbx_file_rule *r = NULL;
	struct sbx_actx a = {};
	struct sbx_event *e;
	__u32 rule, n;
	__u8 v;
	int len, ret;

	if (!addr)
		return 0;
	sc = sbx_scratch();
	if (!sc) {
		sbx_stat_inc(SBX_STAT_ERRORS);
		return -EPERM;
	}
	len = BPF_CORE_READ(addr, len) - (int)sizeof(__kernel_sa_family_t) - 1;
	if (len < 0)
		return 0;	/* unbound */
	n = len > SBX_ABSTRACT_MAX ? SBX_ABSTRACT_MAX : len;
	/* sun_path[0] is the NUL that makes the name abstract */
	if (bpf_probe_read_kernel(sc->name, n & 127, (void *)addr +
				  bpf_core_field_offset(struct unix_address, name) +
				  __builtin_offsetof(struct sockaddr_un, sun_path) + 1)) {
		sbx_stat_inc(SBX_STAT_ERRORS);
		return -EPERM;
	}
	a.sc = sc;
	a.len = n;
	a.h = SBX_FNV_OFFSET;
	bpf_loop(SBX_ABSTRACT_MAX, sbx_abstract_hash_step, &a, 0);

	a.policy_id = s->pol.policy_id;
	a.mask = s->pol.abstract_len_mask;
	r = sbx_abstract_rule(a.policy_id, SBX_NAME_ABSTRACT, 0, a.h);
	if (!r && a.mask) {
		bpf_loop(SBX_GLOB_LIT_MAX, sbx_abstract_prefix_step, &a, 0);
		r = a.r;
	}
	if (r && r->verdict[SBX_ACC_CONNECT] != SBX_V_NONE) {
		v = r->verdict[SBX_ACC_CONNECT];
		rule = r->rule_id[SBX_ACC_CONNECT];
	} else {
		v = s->pol.file_default[SBX_ACC_CONNECT];
		rule = s->pol.file_default_rule[SBX_ACC_CONNECT];
		if (v == SBX_V_NONE)
			v = SBX_V_DENY;
	}
	if (v == SBX_V_ASK && (s->pol.flags & SBX_PF_HAS_GRANTS) &&
	    sbx_abstract_granted(cgid, a.h)) {
		v = SBX_V_AUDIT;
		rule = SBX_RULE_GRANT;
		sbx_stat_inc(SBX_STAT_GRANT_USED);
	}
	if (v <= SBX_V_ALLOW)
		return 0;

	ret = sbx_verdict_ret(v);
	e = sbx_peer_event(s, cgid, SBX_OP_UNIX_CONNECT, other, v, rule, ret);
	if (!e)
		return ret;
	e->access = SBX_ACC_CONNECT;
	e->flags |= SBX_EVF_ABSTRACT;
	e->name_hash = a.h;
	/* the raw name, right-aligned like a path; it may hold any byte */
	e->path_off = (SBX_EVENT_PATH_MAX - 1 - n) & (SBX_EVENT_PATH_MAX - 1);
	bpf_probe_read_kernel(&e->path[e->path_off & 511], n & 127, sc->name);
	sbx_event_describe(0, 0);
	sbx_event_send(e);
	return ret;
}

/*
 * A same-user process outside the session that serves a unix socket (a
 * tmux server, ssh-agent, the D-Bus session bus, a docker daemon) acts for
 * whoever connects: the session reaches what the listener can. So a
 * listener inside the session is always reachable, one outside it only
 * where the policy's connect rules allow that socket (its path, by the
 * file walk, or its abstract name). The daemon's own sockets are always
 * reachable and an approver's never.
 */
static __always_inline int sbx_check_unix(struct sock *other, struct sock *newsk)
{
	struct unix_sock *u = sbx_unix_sk(other);
	struct sbx_listener *l;
	struct sbx_session *s;
	struct sbx_file_io *io;
	struct dentry *d;
	__u64 cgid = 0;

	s = sbx_session_lookup(&cgid);
	if (!s)
		return 0;
	if (!other)
		return -EPERM;	/* no peer to decide on: fail closed */
	l = bpf_sk_storage_get(&sbx_listeners, other, 0, 0);
	if (l && (l->flags & SBX_LISTENER_NEVER))
		return sbx_refuse_peer(s, cgid, other, SBX_RULE_LISTENER_HIDDEN);
	if (l && (l->flags & SBX_LISTENER_DAEMON))
		return (l->flags & SBX_LISTENER_CONTROL) ? sbx_record_ctl_peer(s, cgid, newsk) : 0;
	if (sbx_sock_session(other) == cgid)
		return 0;	/* a listener of the session itself */

	sbx_stat_inc(SBX_STAT_CHECKS);
	d = BPF_CORE_READ(u, path.dentry);
	if (!d)
		return sbx_abstract_check(s, cgid, other);
	/* a socket file: the connect rules of its path, not cached (the
	 * verdict belongs to whoever listens there now) */
	io = sbx_file_io_get(s, cgid, BPF_CORE_READ(u, path.mnt), d,
			     SBX_ACCBIT(SBX_ACC_CONNECT), SBX_OP_UNIX_CONNECT);
	if (!io)
		return -EPERM;
	io->peer = (__u64)other;
	sbx_file_walk(io);
	return io->v[SBX_ACC_CONNECT] <= SBX_V_ALLOW ? 0 : sbx_file_report(io);
}

/*
 * The other direction: a process outside every session (the person's
 * git, ssh, a language server client, docker's CLI) connects or sends to
 * a unix socket that a session named, in /tmp, under $XDG_RUNTIME_DIR or
 * in the abstract namespace: a squatter on a name a real service uses
 * would receive what the client sends. Refused unless the session's
 * network.inbound allows it (ports play no part here). Only named sockets
 * count: one with no name (a socketpair's end) is reached only through a
 * descriptor its holder chose to hand out. Whose a socket is comes from
 * the cgroup it was made in (sk_cgrp_data), which no one can change.
 */
static __always_inline int sbx_unix_inbound(struct sock *other)
{
	struct unix_sock *u = sbx_unix_sk(other);
	struct sbx_session *s;
	struct sbx_event *e;
	struct dentry *d;
	__u64 cgid;
	__u32 rule = 0;
	__u8 v;
	int ret;

	if (!other || !BPF_CORE_READ(u, addr))
		return 0;
	cgid = sbx_sock_session(other);
	if (!cgid)
		return 0;
	s = sbx_session_get(&cgid);
	if (!s)
		return 0;	/* a cgroup at the session level that is no session */
	if (sbx_current_is_daemon())
		return 0;
	sbx_stat_inc(SBX_STAT_CHECKS);
	v = sbx_inbound_verdict(s, 0, &rule);
	if (v <= SBX_V_ALLOW)
		return 0;
	ret = sbx_verdict_ret(v);
	e = sbx_peer_event(s, cgid, SBX_OP_INBOUND, other, v, rule, ret);
	if (!e)
		return ret;
	e->family = AF_UNIX;
	e->flags |= SBX_EVF_INBOUND;
	d = BPF_CORE_READ(u, path.dentry);
	if (d)
		e->flags |= SBX_EVF_FILE;	/* the socket's path (abstract: none) */
	sbx_event_describe(d ? (__u64)BPF_CORE_READ(u, path.mnt) : 0, (__u64)d);
	sbx_event_send(e);
	return ret;
}

static __always_inline int sbx_unix_decide(struct sock *other, struct sock *newsk)
{
	if (!sbx_maybe_in_session())
		return sbx_unix_inbound(other);
	return sbx_check_unix(other, newsk);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(sbx_unix_stream_connect, struct sock *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	return ret ?: sbx_unix_decide(other, newsk);
}

SEC("lsm/unix_may_send")
int BPF_PROG(sbx_unix_may_send, struct socket *sock, struct socket *other, int ret)
{
	return ret ?: sbx_unix_decide(other->sk, NULL);
}

/* the same on the landlock tier (see sbx_ll_leave above): due where a
 * session connects, or where the peer is a session's socket */
static __always_inline bool sbx_unix_due(struct sock *other)
{
	__u64 cgid;

	if (sbx_ll_in_session())
		return true;
	cgid = other ? sbx_sock_session(other) : 0;
	return cgid && sbx_session_get(&cgid);
}

SEC("fentry/security_unix_stream_connect")
int BPF_PROG(sbx_ll_unix_stream_decide, struct sock *sock, struct sock *other,
	     struct sock *newsk)
{
	if (sbx_unix_due(other))
		sbx_ll_leave(other, sbx_unix_decide(other, newsk));
	return 0;
}

SEC("fmod_ret/security_unix_stream_connect")
int BPF_PROG(sbx_ll_unix_stream_connect, struct sock *sock, struct sock *other,
	     struct sock *newsk, int ret)
{
	return ret ?: sbx_ll_take(other, sbx_unix_due(other));
}

SEC("fentry/security_unix_may_send")
int BPF_PROG(sbx_ll_unix_send_decide, struct socket *sock, struct socket *other)
{
	if (sbx_unix_due(other->sk))
		sbx_ll_leave(other->sk, sbx_unix_decide(other->sk, NULL));
	return 0;
}

SEC("fmod_ret/security_unix_may_send")
int BPF_PROG(sbx_ll_unix_may_send, struct socket *sock, struct socket *other, int ret)
{
	return ret ?: sbx_ll_take(other->sk, sbx_unix_due(other->sk));
}
