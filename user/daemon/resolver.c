// SPDX-License-Identifier: GPL-2.0
/*
 * resolver.c - the sessions' DNS (see resolver.h for what it decides).
 *
 * Messages are parsed and built with ldns; nothing here reads or writes
 * DNS wire format by hand except the two-byte length in front of a
 * message on TCP (RFC 1035 4.2.2), which is transport framing.
 *
 * The order that makes names safe: an answer is released to the program
 * only after its addresses are in the session's kernel entries, so a
 * connect that follows the answer is decided by them; and nothing is
 * learned from an answer the policy did not ask for (the question must
 * match, only the CNAME chain of the question counts).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/names.h"
#include "user/daemon/events.h"
#include "user/daemon/learned.h"
#include "user/daemon/ldns_sym.h"
#include "user/daemon/containers.h"
#include "user/daemon/resolver.h"

/* Per session. An agent's tools look up a few names a second (glibc asks
 * A and AAAA); a flood is held to these so that it cannot crowd the
 * upstream that every other session shares. */
#define RATE_QPS		100	/* sustained */
#define RATE_BURST		200
#define MAX_INFLIGHT		16	/* upstream queries at once */
#define MAX_TCP_CLIENTS		16	/* per session */
#define MAX_HOST_REQUESTS	32	/* pending asks by name per session */
#define TRY_NS			(1500ull * 1000000ull)
#define MAX_TRIES		3
#define TCP_IDLE_NS		(10ull * 1000000000ull)
#define READS_PER_EVENT		32	/* fairness between sessions */
#define UPSTREAM_EDNS		1232

enum rkind { RK_UDP4, RK_UDP6, RK_TCP_LISTEN, RK_TCP_CONN, RK_UPSTREAM };

struct rhandle {
	enum rkind kind;
	int fd;
	uint64_t cgid;
};

struct sbx_resolver {
	struct rhandle udp4, tcp4, udp6, tcp6;
	double tokens;
	uint64_t last_ns;
	unsigned inflight, nconns;
};

struct tcpc {
	struct rhandle h;		/* first: the epoll tag points here */
	uint64_t serial;
	uint64_t last_ns;
	pid_t pid;
	size_t len;
	uint8_t buf[2 + 65535];
	struct tcpc *next;
};

/* where an answer goes */
struct reply_to {
	bool tcp;
	int udp_kind;			/* RK_UDP4 or RK_UDP6 */
	struct sockaddr_storage sa;
	socklen_t salen;
	uint64_t tcp_serial;
	uint16_t udp_limit;
	pid_t pid;
};

struct pend {
	struct rhandle h;		/* RK_UPSTREAM; first */
	struct reply_to rt;
	ldns_rdf *qname;
	ldns_rr *question;		/* the client's, for a SERVFAIL */
	uint16_t qtype, qclass, up_id, client_id;
	bool client_rd;
	char name[256];
	bool learn;
	uint32_t nrules;
	struct sbx_net_port_rule rules[SBX_LEARNED_PORT_RULES];
	int tries;
	uint64_t deadline_ns;
	struct pend *next;
};

static struct tcpc *tcpcs;
static struct pend *pends;
static uint64_t next_tcp_serial = 1;

/* time from an upstream answer to its kernel entries, for status and bench */
#define LAT_SAMPLES 4096
static uint32_t lat_ns[LAT_SAMPLES];
static size_t lat_n;

static uint64_t tag_of(void *h)
{
	return (uint64_t)(uintptr_t)h | 1;
}

bool sbx_resolver_is_tag(uint64_t tag)
{
	return tag & 1;
}

static int ep_add(struct sbx_daemon *d, int fd, void *h)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag_of(h) };

	return epoll_ctl(d->ep, EPOLL_CTL_ADD, fd, &ev);
}

static void ep_del_close(struct sbx_daemon *d, int *fd)
{
	if (*fd < 0)
		return;
	epoll_ctl(d->ep, EPOLL_CTL_DEL, *fd, NULL);
	close(*fd);
	*fd = -1;
}

/* ---- the pure part: a query -------------------------------------------------------- */

bool sbx_dns_tunnel_like(const char *name)
{
	size_t total = strlen(name);

	if (total > 100)
		return true;
	for (const char *p = name; *p;) {
		size_t l = strcspn(p, "."), digits = 0;

		for (size_t i = 0; i < l; i++)
			if (p[i] >= '0' && p[i] <= '9')
				digits++;
		if (l > 32 || (l >= 12 && digits * 10 >= l * 4))
			return true;
		p += l;
		if (*p)
			p++;
	}
	return false;
}

static bool name_of(const ldns_rdf *owner, char *name, size_t namelen)
{
	char *txt = sym_ldns_rdf2str(owner);
	bool ok = txt && sbx_host_normalize(txt, name, namelen);

	free(txt);
	if (!ok && namelen)
		name[0] = 0;
	return ok;
}

/* the one question of q, or NULL (*rcode: what to answer, -1 nothing) */
static ldns_rr *query_question(const ldns_pkt *q, int *rcode)
{
	*rcode = LDNS_RCODE_FORMERR;
	if (sym_ldns_pkt_qr(q)) {
		*rcode = -1;	/* a response sent to us: never answer it */
		return NULL;
	}
	if (sym_ldns_pkt_get_opcode(q) != LDNS_PACKET_QUERY) {
		*rcode = LDNS_RCODE_NOTIMPL;
		return NULL;
	}
	if (sym_ldns_pkt_qdcount(q) != 1 || sym_ldns_pkt_ancount(q) || sym_ldns_pkt_nscount(q) ||
	    !sym_ldns_pkt_question(q) || sym_ldns_rr_list_rr_count(sym_ldns_pkt_question(q)) != 1)
		return NULL;
	return sym_ldns_rr_list_rr(sym_ldns_pkt_question(q), 0);
}

int sbx_dns_parse_query(const uint8_t *wire, size_t len, char *name, size_t namelen,
			uint16_t *qtype, uint16_t *qclass, int *rcode)
{
	ldns_pkt *q = NULL;
	ldns_rr *qrr;

	*rcode = -1;
	/* without ldns nothing is read, and nothing is answered */
	if (sbx_ldns_load(NULL))
		return -1;
	if (len < 12 || sym_ldns_wire2pkt(&q, wire, len) != LDNS_STATUS_OK) {
		sym_ldns_pkt_free(q);
		return -1;
	}
	qrr = query_question(q, rcode);
	if (!qrr) {
		sym_ldns_pkt_free(q);
		return -1;
	}
	*qtype = sym_ldns_rr_get_type(qrr);
	*qclass = sym_ldns_rr_get_class(qrr);
	name_of(sym_ldns_rr_owner(qrr), name, namelen);
	sym_ldns_pkt_free(q);
	return 0;
}

/* ---- answers ----------------------------------------------------------------------- */

static ldns_pkt *answer_new(uint16_t id, bool rd, const ldns_rr *question, ldns_pkt_rcode rc)
{
	ldns_pkt *a = sym_ldns_pkt_new();

	if (!a)
		return NULL;
	sym_ldns_pkt_set_id(a, id);
	sym_ldns_pkt_set_qr(a, true);
	sym_ldns_pkt_set_opcode(a, LDNS_PACKET_QUERY);
	sym_ldns_pkt_set_rd(a, rd);
	sym_ldns_pkt_set_ra(a, true);
	sym_ldns_pkt_set_rcode(a, rc);
	if (question)
		sym_ldns_pkt_push_rr(a, LDNS_SECTION_QUESTION, sym_ldns_rr_clone(question));
	return a;
}

static struct tcpc *tcpc_find(uint64_t serial)
{
	for (struct tcpc *c = tcpcs; c; c = c->next)
		if (c->serial == serial)
			return c;
	return NULL;
}

static void tcpc_close(struct sbx_daemon *d, struct tcpc *c)
{
	struct sbx_session_rt *s = sbx_session_by_cgid(d, c->h.cgid);

	if (s && s->resolver && s->resolver->nconns)
		s->resolver->nconns--;
	for (struct tcpc **pp = &tcpcs; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	ep_del_close(d, &c->h.fd);
	free(c);
}

static void send_wire(struct sbx_daemon *d, struct sbx_session_rt *s, const struct reply_to *rt,
		      const uint8_t *w, size_t n)
{
	if (rt->tcp) {
		struct tcpc *c = tcpc_find(rt->tcp_serial);
		uint8_t hdr[2] = { (uint8_t)(n >> 8), (uint8_t)n };
		struct iovec iov[2] = { { hdr, 2 }, { (void *)w, n } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

		if (c && sendmsg(c->h.fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)(n + 2))
			tcpc_close(d, c);	/* a client that does not read loses its socket */
		return;
	}
	if (!s->resolver)
		return;
	sendto(rt->udp_kind == RK_UDP4 ? s->resolver->udp4.fd : s->resolver->udp6.fd, w, n,
	       MSG_DONTWAIT, (const struct sockaddr *)&rt->sa, rt->salen);
}

/* Send a, truncated (header and question, TC set) when it is too big for UDP. */
static void reply_pkt(struct sbx_daemon *d, struct sbx_session_rt *s, const struct reply_to *rt,
		      ldns_pkt *a)
{
	uint8_t *w = NULL;
	size_t n = 0;

	if (!a || sym_ldns_pkt2wire(&w, a, &n) != LDNS_STATUS_OK) {
		free(w);
		return;
	}
	if (!rt->tcp && n > rt->udp_limit) {
		ldns_rr_list *ql = sym_ldns_pkt_question(a);
		ldns_pkt *t = answer_new(sym_ldns_pkt_id(a), sym_ldns_pkt_rd(a),
					 ql && sym_ldns_rr_list_rr_count(ql) ? sym_ldns_rr_list_rr(ql, 0) : NULL,
					 sym_ldns_pkt_get_rcode(a));

		free(w);
		w = NULL;
		sym_ldns_pkt_set_tc(t, true);
		if (!t || sym_ldns_pkt2wire(&w, t, &n) != LDNS_STATUS_OK) {
			sym_ldns_pkt_free(t);
			free(w);
			return;
		}
		sym_ldns_pkt_free(t);
	}
	send_wire(d, s, rt, w, n);
	free(w);
}

static void reply_rcode(struct sbx_daemon *d, struct sbx_session_rt *s, const struct reply_to *rt,
			uint16_t id, bool rd, const ldns_rr *question, ldns_pkt_rcode rc)
{
	ldns_pkt *a = answer_new(id, rd, question, rc);

	reply_pkt(d, s, rt, a);
	sym_ldns_pkt_free(a);
}

/* ---- upstream ------------------------------------------------------------------------ */

/* The host's nameservers, read again when /etc/resolv.conf changes. */
static size_t system_resolvers(struct sbx_dns_upstream *out, size_t max)
{
	static struct sbx_dns_upstream cache[SBX_DNS_MAX_RESOLVERS];
	static size_t n;
	static struct timespec mtime;
	static ino_t ino;
	struct stat st;

	if (stat("/etc/resolv.conf", &st) == 0 &&
	    (st.st_mtim.tv_sec != mtime.tv_sec || st.st_mtim.tv_nsec != mtime.tv_nsec ||
	     st.st_ino != ino)) {
		FILE *f = fopen("/etc/resolv.conf", "re");
		char line[512];

		n = 0;
		mtime = st.st_mtim;
		ino = st.st_ino;
		while (f && fgets(line, sizeof(line), f) && n < SBX_DNS_MAX_RESOLVERS) {
			char ns[128], *pct;
			struct sbx_dns_upstream u = { .port = 53 };

			if (sscanf(line, " nameserver %127s", ns) != 1)
				continue;
			if ((pct = strchr(ns, '%')))
				*pct = 0;
			if (inet_pton(AF_INET, ns, u.addr) == 1)
				u.family = AF_INET;
			else if (inet_pton(AF_INET6, ns, u.addr) == 1)
				u.family = AF_INET6;
			else
				continue;
			cache[n++] = u;
		}
		if (f)
			fclose(f);
	}
	if (n > max)
		n = max;
	memcpy(out, cache, n * sizeof(*out));
	return n;
}

static size_t upstreams(const struct sbx_session_rt *s, struct sbx_dns_upstream *out)
{
	if (s->names.dns.n_resolvers) {
		memcpy(out, s->names.dns.resolvers, s->names.dns.n_resolvers * sizeof(*out));
		return s->names.dns.n_resolvers;
	}
	return system_resolvers(out, SBX_DNS_MAX_RESOLVERS);
}

static void pend_free(struct sbx_daemon *d, struct pend *p)
{
	struct sbx_session_rt *s = sbx_session_by_cgid(d, p->h.cgid);

	if (s && s->resolver && s->resolver->inflight)
		s->resolver->inflight--;
	for (struct pend **pp = &pends; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	ep_del_close(d, &p->h.fd);
	sym_ldns_rdf_deep_free(p->qname);
	sym_ldns_rr_free(p->question);
	free(p);
}

/* one try: a new socket (a new source port) and a new id each time */
static int upstream_try(struct sbx_daemon *d, struct sbx_session_rt *s, struct pend *p)
{
	struct sbx_dns_upstream ups[SBX_DNS_MAX_RESOLVERS];
	size_t n = upstreams(s, ups);
	struct sockaddr_storage sa = {};
	socklen_t salen;
	const struct sbx_dns_upstream *u;
	ldns_pkt *q;
	uint8_t *w = NULL;
	size_t wn = 0;
	int fd;

	if (!n)
		return -ENOENT;
	ep_del_close(d, &p->h.fd);
	u = &ups[p->tries % n];
	p->tries++;
	if (u->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&sa;

		in->sin_family = AF_INET;
		in->sin_port = htons(u->port);
		memcpy(&in->sin_addr, u->addr, 4);
		salen = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(u->port);
		memcpy(&in6->sin6_addr, u->addr, 16);
		salen = sizeof(*in6);
	}
	fd = socket(u->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, salen)) {
		close(fd);
		return -errno;
	}
	if (getrandom(&p->up_id, sizeof(p->up_id), 0) != sizeof(p->up_id))
		p->up_id = (uint16_t)sbx_boot_ns();
	/* a query of our own: the name and type, nothing else the program sent */
	q = sym_ldns_pkt_query_new(sym_ldns_rdf_clone(p->qname), p->qtype, p->qclass, LDNS_RD);
	if (!q) {
		close(fd);
		return -ENOMEM;
	}
	sym_ldns_pkt_set_id(q, p->up_id);
	sym_ldns_pkt_set_edns_udp_size(q, UPSTREAM_EDNS);
	if (sym_ldns_pkt2wire(&w, q, &wn) != LDNS_STATUS_OK || send(fd, w, wn, 0) < 0) {
		sym_ldns_pkt_free(q);
		free(w);
		close(fd);
		return -EIO;
	}
	sym_ldns_pkt_free(q);
	free(w);
	p->h.fd = fd;
	p->deadline_ns = sbx_boot_ns() + TRY_NS;
	if (ep_add(d, fd, p)) {
		close(fd);
		p->h.fd = -1;
		return -errno;
	}
	return 0;
}

static void pend_fail(struct sbx_daemon *d, struct pend *p)
{
	struct sbx_session_rt *s = sbx_session_by_cgid(d, p->h.cgid);

	if (s) {
		s->dns.servfail++;
		reply_rcode(d, s, &p->rt, p->client_id, p->client_rd, p->question,
			    LDNS_RCODE_SERVFAIL);
	}
	pend_free(d, p);
}

static void lat_record(uint64_t ns)
{
	lat_ns[lat_n % LAT_SAMPLES] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	lat_n++;
}

/* The addresses of the question's CNAME chain, and the smallest TTL on it. */
static size_t chain_addrs(const ldns_pkt *a, const ldns_rdf *qname, uint8_t (*out)[16],
			  size_t max, uint32_t *ttl)
{
	const ldns_rr_list *an = sym_ldns_pkt_answer(a);
	const ldns_rdf *chain[17];
	size_t nchain = 1, n = 0, count = an ? sym_ldns_rr_list_rr_count(an) : 0;
	bool grew = true;

	chain[0] = qname;
	*ttl = UINT32_MAX;
	/* follow CNAMEs, in any order, at most 16 and never in a loop */
	while (grew && nchain < 17) {
		grew = false;
		for (size_t i = 0; i < count && nchain < 17; i++) {
			const ldns_rr *rr = sym_ldns_rr_list_rr(an, i);
			const ldns_rdf *target;
			bool seen = false;

			if (sym_ldns_rr_get_type(rr) != LDNS_RR_TYPE_CNAME ||
			    sym_ldns_dname_compare(sym_ldns_rr_owner(rr), chain[nchain - 1]) ||
			    !(target = sym_ldns_rr_rdf(rr, 0)))
				continue;
			for (size_t c = 0; c < nchain; c++)
				seen |= !sym_ldns_dname_compare(chain[c], target);
			if (seen)
				continue;
			if (sym_ldns_rr_ttl(rr) < *ttl)
				*ttl = sym_ldns_rr_ttl(rr);
			chain[nchain++] = target;
			grew = true;
		}
	}
	for (size_t i = 0; i < count && n < max; i++) {
		const ldns_rr *rr = sym_ldns_rr_list_rr(an, i);
		ldns_rr_type t = sym_ldns_rr_get_type(rr);
		const ldns_rdf *rd;
		bool in_chain = false;

		if ((t != LDNS_RR_TYPE_A && t != LDNS_RR_TYPE_AAAA) || !(rd = sym_ldns_rr_rdf(rr, 0)))
			continue;
		for (size_t c = 0; c < nchain; c++)
			in_chain |= !sym_ldns_dname_compare(sym_ldns_rr_owner(rr), chain[c]);
		if (!in_chain)
			continue;	/* not an answer to the question */
		if (t == LDNS_RR_TYPE_A && sym_ldns_rdf_size(rd) == 4)
			sbx_addr16(AF_INET, sym_ldns_rdf_data(rd), out[n++]);
		else if (t == LDNS_RR_TYPE_AAAA && sym_ldns_rdf_size(rd) == 16)
			sbx_addr16(AF_INET6, sym_ldns_rdf_data(rd), out[n++]);
		else
			continue;
		if (sym_ldns_rr_ttl(rr) < *ttl)
			*ttl = sym_ldns_rr_ttl(rr);
	}
	if (*ttl == UINT32_MAX)
		*ttl = 0;
	return n;
}

static void upstream_answer(struct sbx_daemon *d, struct pend *p)
{
	struct sbx_session_rt *s = sbx_session_by_cgid(d, p->h.cgid);
	uint8_t buf[65536];
	ssize_t n = recv(p->h.fd, buf, sizeof(buf), MSG_DONTWAIT);
	ldns_pkt *a = NULL;
	ldns_rr *qrr;

	if (!s) {
		pend_free(d, p);
		return;
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		/* ICMP unreachable: the next resolver, or SERVFAIL */
		if (p->tries >= MAX_TRIES || upstream_try(d, s, p))
			pend_fail(d, p);
		return;
	}
	if (sym_ldns_wire2pkt(&a, buf, (size_t)n) != LDNS_STATUS_OK || !sym_ldns_pkt_qr(a) ||
	    sym_ldns_pkt_id(a) != p->up_id || sym_ldns_pkt_qdcount(a) != 1 ||
	    !(qrr = sym_ldns_rr_list_rr(sym_ldns_pkt_question(a), 0)) ||
	    sym_ldns_rr_get_type(qrr) != p->qtype || sym_ldns_dname_compare(sym_ldns_rr_owner(qrr), p->qname)) {
		sym_ldns_pkt_free(a);	/* not the answer to our question: keep waiting */
		return;
	}
	if (sym_ldns_pkt_tc(a) && p->rt.tcp) {
		/* the upstream could not fit it in UDP; this resolver asks
		 * upstream over UDP only: tell the TCP client we failed */
		sym_ldns_pkt_free(a);
		pend_fail(d, p);
		return;
	}
	if (p->learn && sym_ldns_pkt_get_rcode(a) == LDNS_RCODE_NOERROR) {
		uint64_t t0 = sbx_boot_ns(), ttl;
		uint8_t addrs[64][16];
		uint32_t rttl;
		size_t na = chain_addrs(a, p->qname, addrs, 64, &rttl);

		ttl = rttl < s->names.dns.min_ttl_s ? s->names.dns.min_ttl_s : rttl;
		ttl += s->names.dns.grace_s;
		if (na) {
			sbx_learned_add(d, s, p->name, (const uint8_t (*)[16])addrs, na, ttl,
					p->rules, p->nrules);
			lat_record(sbx_boot_ns() - t0);
		}
	}
	s->dns.forwarded++;
	sym_ldns_pkt_set_id(a, p->client_id);
	reply_pkt(d, s, &p->rt, a);	/* only now: the kernel has the addresses */
	sym_ldns_pkt_free(a);
	pend_free(d, p);
}

/* ---- a query ------------------------------------------------------------------------ */

static bool rate_ok(struct sbx_resolver *r)
{
	uint64_t now = sbx_boot_ns();

	r->tokens += (double)(now - r->last_ns) * RATE_QPS / 1e9;
	if (r->tokens > RATE_BURST)
		r->tokens = RATE_BURST;
	r->last_ns = now;
	if (r->tokens < 1)
		return false;
	r->tokens -= 1;
	return true;
}

static const struct sbx_name_grant *name_granted(const struct sbx_session_rt *s, const char *name)
{
	uint64_t now = sbx_boot_ns();

	for (size_t i = 0; i < s->n_name_grants; i++)
		if (!strcmp(s->name_grants[i].name, name) &&
		    (!s->name_grants[i].expires_ns || s->name_grants[i].expires_ns > now))
			return &s->name_grants[i];
	return NULL;
}

static size_t host_requests(const struct sbx_session_rt *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_pending; i++)
		n += !strncmp(s->pending[i].key, "host:", 5);
	return n;
}

static const char *qtype_name(uint16_t t, char *buf, size_t len)
{
	char *txt = sym_ldns_rr_type2str(t);

	snprintf(buf, len, "%s", txt ? txt : "?");
	free(txt);
	return buf;
}

static void handle_query(struct sbx_daemon *d, struct sbx_session_rt *s, const uint8_t *wire,
			 size_t len, const struct reply_to *rt0)
{
	struct reply_to rt = *rt0;
	struct sbx_host_decision h;
	const struct sbx_name_grant *g = NULL;
	ldns_pkt *q = NULL;
	ldns_rr *qrr;
	char name[256], tn[16];
	uint16_t qtype, id;
	uint8_t verdict;
	uint32_t rule;
	bool rd;
	int rcode;
	struct pend *p;

	s->dns.queries++;
	if (!rate_ok(s->resolver)) {
		s->dns.rate_dropped++;
		return;
	}
	if (len < 12 || sym_ldns_wire2pkt(&q, wire, len) != LDNS_STATUS_OK) {
		s->dns.malformed++;	/* nothing to answer to: dropped */
		sym_ldns_pkt_free(q);
		return;
	}
	id = sym_ldns_pkt_id(q);
	rd = sym_ldns_pkt_rd(q);
	if (!rt.tcp) {
		uint16_t e = sym_ldns_pkt_edns(q) ? sym_ldns_pkt_edns_udp_size(q) : 512;

		rt.udp_limit = e < 512 ? 512 : e > 4096 ? 4096 : e;
	}
	qrr = query_question(q, &rcode);
	if (!qrr) {
		s->dns.malformed++;
		if (rcode >= 0)
			reply_rcode(d, s, &rt, id, rd, NULL, (ldns_pkt_rcode)rcode);
		sym_ldns_pkt_free(q);
		return;
	}
	qtype = sym_ldns_rr_get_type(qrr);
	qtype_name(qtype, tn, sizeof(tn));
	if (!name_of(sym_ldns_rr_owner(qrr), name, sizeof(name)) ||
	    sym_ldns_rr_get_class(qrr) != LDNS_RR_CLASS_IN || qtype == LDNS_RR_TYPE_AXFR ||
	    qtype == LDNS_RR_TYPE_IXFR) {
		/* no host name (odd bytes, the root), another class, a zone transfer */
		s->dns.refused_exfil++;
		reply_rcode(d, s, &rt, id, rd, qrr, LDNS_RCODE_REFUSED);
		sym_ldns_pkt_free(q);
		return;
	}
	sbx_decide_host(&s->names, name, &h);
	verdict = h.verdict;
	rule = h.rule_id;
	if (verdict == SBX_V_ASK && (g = name_granted(s, name))) {
		verdict = SBX_V_AUDIT;
		rule = SBX_RULE_GRANT;
	}
	if (verdict == SBX_V_DENY) {
		s->dns.denied++;
		sbx_events_dns(d, s, name, tn, SBX_V_DENY, rule, "NXDOMAIN", rt.pid, false);
		reply_rcode(d, s, &rt, id, rd, qrr, LDNS_RCODE_NXDOMAIN);
		sym_ldns_pkt_free(q);
		return;
	}
	if (verdict == SBX_V_ASK) {
		bool addr_query = qtype == LDNS_RR_TYPE_A || qtype == LDNS_RR_TYPE_AAAA;

		if (!addr_query || sbx_dns_tunnel_like(name) ||
		    host_requests(s) >= MAX_HOST_REQUESTS) {
			/* TXT, NULL and random labels to a name that is not allowed:
			 * refused, recorded, never upstream, never a request */
			s->dns.refused_exfil++;
			sbx_events_dns(d, s, name, tn, SBX_V_DENY, rule,
				       "REFUSED (not escalated: not an address query, or a "
				       "label that looks like data)", rt.pid, false);
		} else {
			s->dns.asked++;
			sbx_events_dns(d, s, name, tn, SBX_V_ASK, rule,
				       "REFUSED (asked a person; retry after approval)", rt.pid, true);
		}
		reply_rcode(d, s, &rt, id, rd, qrr, LDNS_RCODE_REFUSED);
		sym_ldns_pkt_free(q);
		return;
	}
	if (verdict == SBX_V_AUDIT)
		sbx_events_dns(d, s, name, tn, SBX_V_AUDIT, rule, "forwarded", rt.pid, false);
	if (s->resolver->inflight >= MAX_INFLIGHT) {
		s->dns.rate_dropped++;
		reply_rcode(d, s, &rt, id, rd, qrr, LDNS_RCODE_SERVFAIL);
		sym_ldns_pkt_free(q);
		return;
	}
	p = sbx_calloc(1, sizeof(*p));
	p->h.kind = RK_UPSTREAM;
	p->h.fd = -1;
	p->h.cgid = s->cgid;
	p->rt = rt;
	p->qname = sym_ldns_rdf_clone(sym_ldns_rr_owner(qrr));
	p->question = sym_ldns_rr_clone(qrr);
	p->qtype = qtype;
	p->qclass = LDNS_RR_CLASS_IN;
	p->client_id = id;
	p->client_rd = rd;
	snprintf(p->name, sizeof(p->name), "%s", name);
	/* the name's port rules go with its addresses; a grant turns asks
	 * into audits (for its port, or all of them) */
	if (h.matched) {
		for (size_t i = h.first; i < h.first + h.n && p->nrules < SBX_LEARNED_PORT_RULES; i++)
			p->rules[p->nrules++] = s->names.hosts[i].pr;
	}
	if (g) {
		if (g->port && p->nrules < SBX_LEARNED_PORT_RULES) {
			p->rules[p->nrules++] = (struct sbx_net_port_rule){
				.port_lo = g->port, .port_hi = g->port,
				.verdict = SBX_V_AUDIT, .rule_id = SBX_RULE_GRANT,
			};
		} else if (!g->port) {
			for (uint32_t i = 0; i < p->nrules; i++)
				if (p->rules[i].verdict == SBX_V_ASK) {
					p->rules[i].verdict = SBX_V_AUDIT;
					p->rules[i].rule_id = SBX_RULE_GRANT;
				}
			if (!p->nrules)
				p->rules[p->nrules++] = (struct sbx_net_port_rule){
					.port_lo = 0, .port_hi = 65535,
					.verdict = SBX_V_AUDIT, .rule_id = SBX_RULE_GRANT,
				};
		}
	}
	p->learn = p->nrules > 0;
	p->next = pends;
	pends = p;
	s->resolver->inflight++;
	if (upstream_try(d, s, p))
		pend_fail(d, p);
	sym_ldns_pkt_free(q);
}

/* ---- sockets ---------------------------------------------------------------------- */

static void udp_readable(struct sbx_daemon *d, struct rhandle *h)
{
	struct sbx_session_rt *s = sbx_session_by_cgid(d, h->cgid);
	uint8_t buf[65536];

	for (int i = 0; i < READS_PER_EVENT; i++) {
		struct reply_to rt = { .udp_kind = h->kind, .salen = sizeof(rt.sa) };
		ssize_t n = recvfrom(h->fd, buf, sizeof(buf), MSG_DONTWAIT,
				     (struct sockaddr *)&rt.sa, &rt.salen);

		if (n < 0)
			return;
		if (s && s->resolver)
			handle_query(d, s, buf, (size_t)n, &rt);
	}
}

static void tcp_accept(struct sbx_daemon *d, struct rhandle *h)
{
	struct sbx_session_rt *s = sbx_session_by_cgid(d, h->cgid);

	for (int i = 0; i < READS_PER_EVENT; i++) {
		int fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ucred cr;
		socklen_t l = sizeof(cr);
		struct tcpc *c;

		if (fd < 0)
			return;
		if (!s || !s->resolver || s->resolver->nconns >= MAX_TCP_CLIENTS) {
			if (s)
				s->dns.rate_dropped++;
			close(fd);
			continue;
		}
		c = sbx_calloc(1, sizeof(*c));
		c->h.kind = RK_TCP_CONN;
		c->h.fd = fd;
		c->h.cgid = h->cgid;
		c->serial = next_tcp_serial++;
		c->last_ns = sbx_boot_ns();
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) == 0)
			c->pid = cr.pid;
		if (ep_add(d, fd, c)) {
			close(fd);
			free(c);
			continue;
		}
		c->next = tcpcs;
		tcpcs = c;
		s->resolver->nconns++;
	}
}

static void tcp_readable(struct sbx_daemon *d, struct tcpc *c)
{
	struct sbx_session_rt *s = sbx_session_by_cgid(d, c->h.cgid);
	ssize_t n = recv(c->h.fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
	uint64_t serial = c->serial;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0 || !s || !s->resolver) {
		tcpc_close(d, c);
		return;
	}
	c->len += (size_t)n;
	c->last_ns = sbx_boot_ns();
	while (c->len >= 2) {
		size_t m = (size_t)c->buf[0] << 8 | c->buf[1];
		struct reply_to rt = { .tcp = true, .tcp_serial = serial, .pid = c->pid };

		if (m == 0) {
			tcpc_close(d, c);
			return;
		}
		if (c->len < m + 2)
			break;
		handle_query(d, s, c->buf + 2, m, &rt);
		if (!tcpc_find(serial))
			return;	/* closed while answering */
		memmove(c->buf, c->buf + 2 + m, c->len - m - 2);
		c->len -= m + 2;
	}
}

void sbx_resolver_event(struct sbx_daemon *d, uint64_t tag, uint32_t events)
{
	struct rhandle *h = (struct rhandle *)(uintptr_t)(tag & ~1ull);

	(void)events;
	switch (h->kind) {
	case RK_UDP4:
	case RK_UDP6:
		udp_readable(d, h);
		break;
	case RK_TCP_LISTEN:
		tcp_accept(d, h);
		break;
	case RK_TCP_CONN:
		tcp_readable(d, (struct tcpc *)h);
		break;
	case RK_UPSTREAM:
		upstream_answer(d, (struct pend *)h);
		break;
	}
}

void sbx_resolver_tick(struct sbx_daemon *d)
{
	uint64_t now = sbx_boot_ns();

	for (struct pend *p = pends, *nx; p; p = nx) {
		struct sbx_session_rt *s = sbx_session_by_cgid(d, p->h.cgid);

		nx = p->next;
		if (!s) {
			pend_free(d, p);
			continue;
		}
		if (now < p->deadline_ns)
			continue;
		if (p->tries >= MAX_TRIES || upstream_try(d, s, p))
			pend_fail(d, p);
	}
	for (struct tcpc *c = tcpcs, *nx; c; c = nx) {
		nx = c->next;
		if (now - c->last_ns > TCP_IDLE_NS || !sbx_session_by_cgid(d, c->h.cgid))
			tcpc_close(d, c);
	}
}

/* ---- a session's sockets ------------------------------------------------------------ */

static int bind_one(int family, int type, const void *addr, uint16_t port, uint16_t *got)
{
	struct sockaddr_storage sa = {};
	socklen_t l;
	int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&sa;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, addr, 4);
		l = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;

		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		memcpy(&in6->sin6_addr, addr, 16);
		l = sizeof(*in6);
	}
	if (type == SOCK_STREAM)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* a container's network namespace may not have its loopback up yet
	 * (its runtime brings it up after the createRuntime hook) */
	if (family == AF_INET)
		setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, l) ||
	    (type == SOCK_STREAM && listen(fd, 64))) {
		close(fd);
		return -1;
	}
	l = sizeof(sa);
	getsockname(fd, (struct sockaddr *)&sa, &l);
	*got = ntohs(family == AF_INET ? ((struct sockaddr_in *)&sa)->sin_port :
					 ((struct sockaddr_in6 *)&sa)->sin6_port);
	return fd;
}

/*
 * The session's IPv4 pair (UDP, TCP) on a4, made in network namespace
 * nsfd (a container's) when it is not -1: a thread of its own enters it,
 * so the daemon never leaves its own, and a socket stays in the
 * namespace it was made in.
 */
struct pair {
	int nsfd;
	uint32_t a4;
	uint16_t want_u, want_t, got_u, got_t;
	int fds[2];
	int err;
};

static void *pair_bind(void *arg)
{
	struct pair *p = arg;

	p->fds[0] = p->fds[1] = -1;
	if (p->nsfd >= 0 && setns(p->nsfd, CLONE_NEWNET)) {
		p->err = errno;
		return NULL;
	}
	p->fds[0] = bind_one(AF_INET, SOCK_DGRAM, &p->a4, p->want_u, &p->got_u);
	p->err = p->fds[0] < 0 ? errno : 0;
	p->fds[1] = bind_one(AF_INET, SOCK_STREAM, &p->a4, p->want_t, &p->got_t);
	if (p->fds[1] < 0 && !p->err)
		p->err = errno;
	return NULL;
}

static void pair_make(struct pair *p)
{
	pthread_t t;

	if (p->nsfd < 0) {
		pair_bind(p);
		return;
	}
	if (pthread_create(&t, NULL, pair_bind, p)) {
		p->fds[0] = p->fds[1] = -1;
		p->err = EAGAIN;
		return;
	}
	pthread_join(t, NULL);
}

/* 127.53.x.y: x.y from the serial, never .0 or .255 */
static uint32_t addr4_of(uint64_t serial)
{
	uint64_t k = serial % (254ull * 254ull);

	return htonl(SBX_DNS_ADDR4_NET | (uint32_t)(1 + k / 254) << 8 | (uint32_t)(1 + k % 254));
}

static void handle_init(struct rhandle *h, enum rkind kind, int fd, uint64_t cgid)
{
	h->kind = kind;
	h->fd = fd;
	h->cgid = cgid;
}

int sbx_resolver_open(struct sbx_daemon *d, struct sbx_session_rt *s, char **err)
{
	struct sbx_resolver *r = sbx_calloc(1, sizeof(*r));
	struct sbx_dns_resolver kv = {};
	struct sbx_listener mark = { .flags = SBX_LISTENER_DAEMON, .owner_uid = 0 };
	static const uint8_t lo6[16] = { [15] = 1 };
	uint32_t a4 = s->dns_addr4 ? s->dns_addr4 : addr4_of(s->serial);
	uint16_t p4u = 0, p4t = 0, p6u = 0, p6t = 0;
	const char *why;
	int fds[4] = { -1, -1, -1, -1 }, nsfd;
	struct pair pr;

	if (sbx_ldns_load(&why)) {
		*err = sbx_asprintf("the sessions' resolver needs libldns: %s", why);
		free(r);
		return -ENOENT;
	}
	/* a container with a network of its own: the resolver listens there,
	 * where its port-53 traffic is sent (containers.c) */
	nsfd = sbx_container_netns(s, err);
	if (nsfd < -1) {
		free(r);
		return nsfd;
	}
	r->udp4.fd = r->tcp4.fd = r->udp6.fd = r->tcp6.fd = -1;
	r->tokens = RATE_BURST;
	r->last_ns = sbx_boot_ns();
	/* 53 where it is free, the same ports again for an adopted session */
	for (int tries = 0; tries < 8; tries++) {
		uint16_t want4u = s->dns_port4_udp ? s->dns_port4_udp : tries < 4 ? 53 : 0;
		uint16_t want4t = s->dns_port4_tcp ? s->dns_port4_tcp : tries < 4 ? 53 : 0;

		pr = (struct pair){ .nsfd = nsfd, .a4 = a4, .want_u = want4u, .want_t = want4t };
		pair_make(&pr);
		if ((pr.fds[0] < 0 && s->dns_port4_udp) || (pr.fds[1] < 0 && s->dns_port4_tcp)) {
			for (int i = 0; i < 2; i++)
				if (pr.fds[i] >= 0)
					close(pr.fds[i]);
			pr = (struct pair){ .nsfd = nsfd, .a4 = a4 };
			pair_make(&pr);
		}
		fds[0] = pr.fds[0];
		fds[1] = pr.fds[1];
		p4u = pr.got_u;
		p4t = pr.got_t;
		errno = pr.err;
		if (fds[0] >= 0 && fds[1] >= 0)
			break;
		if (fds[0] >= 0)
			close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
		fds[0] = fds[1] = -1;
		/* another session's or program's: the next address */
		a4 = addr4_of(s->serial + 7919ull * (tries + 1));
	}
	/* IPv6's ports are told apart across sessions by number
	 * (sbx_dns_ports): in a container's own network, IPv4 only, and its
	 * IPv6 port-53 traffic is refused */
	if (nsfd < 0) {
		fds[2] = bind_one(AF_INET6, SOCK_DGRAM, lo6, s->dns_port6_udp, &p6u);
		if (fds[2] < 0 && s->dns_port6_udp)
			fds[2] = bind_one(AF_INET6, SOCK_DGRAM, lo6, 0, &p6u);
		fds[3] = bind_one(AF_INET6, SOCK_STREAM, lo6, s->dns_port6_tcp, &p6t);
		if (fds[3] < 0 && s->dns_port6_tcp)
			fds[3] = bind_one(AF_INET6, SOCK_STREAM, lo6, 0, &p6t);
	} else {
		close(nsfd);
	}
	if (fds[0] < 0 || fds[1] < 0) {
		*err = sbx_asprintf("binding the session's resolver on 127.53.0.0/16%s: %s",
				    s->container ? " (in the container's network)" : "",
				    strerror(errno));
		for (int i = 0; i < 4; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		free(r);
		return -EADDRINUSE;
	}
	handle_init(&r->udp4, RK_UDP4, fds[0], s->cgid);
	handle_init(&r->tcp4, RK_TCP_LISTEN, fds[1], s->cgid);
	handle_init(&r->udp6, RK_UDP6, fds[2], s->cgid);
	handle_init(&r->tcp6, RK_TCP_LISTEN, fds[3], s->cgid);
	s->dns_addr4 = a4;
	s->dns_port4_udp = p4u;
	s->dns_port4_tcp = p4t;
	s->dns_port6_udp = fds[2] >= 0 ? p6u : 0;
	s->dns_port6_tcp = fds[3] >= 0 ? p6t : 0;
	kv.addr4 = a4;
	kv.port4_udp = htons(p4u);
	kv.port4_tcp = htons(p4t);
	/* no IPv6 (disabled): IPv6 port-53 traffic is refused (port 0) */
	kv.port6_udp = htons(s->dns_port6_udp);
	kv.port6_tcp = htons(s->dns_port6_tcp);
	for (int i = 0; i < 4; i++) {
		struct rhandle *h = i == 0 ? &r->udp4 : i == 1 ? &r->tcp4 : i == 2 ? &r->udp6 : &r->tcp6;

		if (h->fd < 0)
			continue;
		/* the daemon's: a session may reach it (the loopback listener check) */
		bpf_map_update_elem(d->k.listeners, &h->fd, &mark, BPF_ANY);
		ep_add(d, h->fd, h);
	}
	for (int i = 0; i < 2; i++) {
		__u16 port = i ? s->dns_port6_tcp : s->dns_port6_udp;

		if (port)
			bpf_map_update_elem(d->k.dns_ports, &port, &s->cgid, BPF_ANY);
	}
	s->resolver = r;
	if (bpf_map_update_elem(d->k.dns_resolvers, &s->cgid, &kv, BPF_ANY)) {
		int rc = -errno;

		*err = sbx_asprintf("registering the session's resolver: %s", strerror(-rc));
		sbx_resolver_close(d, s, false);
		return rc;
	}
	sbx_session_dirty(s);
	return 0;
}

void sbx_resolver_close(struct sbx_daemon *d, struct sbx_session_rt *s, bool keep_kernel)
{
	struct sbx_resolver *r = s->resolver;

	if (!keep_kernel)
		bpf_map_delete_elem(d->k.dns_resolvers, &s->cgid);
	for (int i = 0; i < 2 && !keep_kernel; i++) {
		__u16 port = i ? s->dns_port6_tcp : s->dns_port6_udp;
		__u64 owner;

		if (port && bpf_map_lookup_elem(d->k.dns_ports, &port, &owner) == 0 &&
		    owner == s->cgid)
			bpf_map_delete_elem(d->k.dns_ports, &port);
	}
	for (struct pend *p = pends, *nx; p; p = nx) {
		nx = p->next;
		if (p->h.cgid == s->cgid)
			pend_free(d, p);
	}
	for (struct tcpc *c = tcpcs, *nx; c; c = nx) {
		nx = c->next;
		if (c->h.cgid == s->cgid)
			tcpc_close(d, c);
	}
	if (!r)
		return;
	ep_del_close(d, &r->udp4.fd);
	ep_del_close(d, &r->tcp4.fd);
	ep_del_close(d, &r->udp6.fd);
	ep_del_close(d, &r->tcp6.fd);
	free(r);
	s->resolver = NULL;
}

/* ---- status ------------------------------------------------------------------------ */

json_t *sbx_resolver_status(const struct sbx_session_rt *s)
{
	char a[INET_ADDRSTRLEN] = "?";
	const struct sbx_dns_stats *t = &s->dns;

	inet_ntop(AF_INET, &s->dns_addr4, a, sizeof(a));
	return json_pack("{s:s,s:i,s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			 "resolver", a, "port_udp", (int)s->dns_port4_udp, "port6_udp",
			 (int)s->dns_port6_udp, "queries", (json_int_t)t->queries, "forwarded",
			 (json_int_t)t->forwarded, "denied", (json_int_t)t->denied, "asked",
			 (json_int_t)t->asked, "refused", (json_int_t)t->refused_exfil, "servfail",
			 (json_int_t)t->servfail, "rate_dropped", (json_int_t)t->rate_dropped,
			 "malformed", (json_int_t)t->malformed, "cap_dropped",
			 (json_int_t)t->cap_dropped, "learned", (json_int_t)sbx_learned_count(s),
			 "learned_total", (json_int_t)t->learned_total);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

json_t *sbx_resolver_latency(void)
{
	size_t n = lat_n < LAT_SAMPLES ? lat_n : LAT_SAMPLES;
	uint32_t *v;
	json_t *j;

	if (!n)
		return json_pack("{s:i}", "samples", 0);
	v = sbx_calloc(n, sizeof(*v));
	memcpy(v, lat_ns, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_u32);
	j = json_pack("{s:I,s:I,s:I,s:I}", "samples", (json_int_t)lat_n, "p50_ns",
		      (json_int_t)v[n / 2], "p99_ns", (json_int_t)v[(n * 99) / 100],
		      "max_ns", (json_int_t)v[n - 1]);
	free(v);
	return j;
}
