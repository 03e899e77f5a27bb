/* SPDX-License-Identifier: GPL-2.0 */
/*
 * resolver.h - the sessions' DNS resolver.
 *
 * Every session has its own sockets: UDP and TCP on 127.53.x.y:53 (x.y
 * from the session's serial; another port if 53 is taken there) and on
 * [::1] with ports of their own. dns.bpf.c sends every port-53 query of
 * the session to them, so the socket a query arrives on says whose it is.
 * Each query is parsed with ldns and decided by name with the session's
 * host rules (policy/decide.c, sbx_decide_host):
 *
 *   allow, audit  forwarded upstream (network.resolvers, or the host's
 *                 /etc/resolv.conf), as a new query built from the name and
 *                 type alone; the answer's A and AAAA addresses, after
 *                 CNAMEs, are learned (learned.c) before it is released
 *   deny          NXDOMAIN, and an event naming the domain
 *   ask           REFUSED now, a request of kind host; once approved, the
 *                 retry resolves (a name grant) and learns
 *
 * Nothing that is not allowed reaches an upstream, whatever its type (TXT,
 * NULL) or label; asks are escalated only for address queries with names a
 * person can read (no tunnel-like labels). Upstream down or silent:
 * SERVFAIL, and what was learned stays until it expires. The loop is never
 * blocked: every socket is non-blocking, upstream tries time out on the
 * tick. A session that floods is rate-limited (drops counted) without
 * slowing the others.
 */
#ifndef SBX_RESOLVER_H
#define SBX_RESOLVER_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "user/daemon/state.h"

/* Bind the session's sockets (the addresses it had, for an adopted one),
 * register them in the kernel and in the loop. */
int sbx_resolver_open(struct sbx_daemon *d, struct sbx_session_rt *s, char **err);
/* The session ends: its sockets, kernel entries and queries in flight go.
 * keep_kernel (the daemon stops): the kernel still sends the session's DNS
 * to the address, where nothing answers until a new daemon binds it. */
void sbx_resolver_close(struct sbx_daemon *d, struct sbx_session_rt *s, bool keep_kernel);
/* An epoll event for a tag that sbx_resolver_is_tag() accepts. */
bool sbx_resolver_is_tag(uint64_t tag);
void sbx_resolver_event(struct sbx_daemon *d, uint64_t tag, uint32_t events);
/* Timeouts of upstream tries and idle TCP clients (the loop's tick). */
void sbx_resolver_tick(struct sbx_daemon *d);
/* For status: the resolver's address and counters of s; and the time from
 * an upstream answer to the kernel map update, p50 and p99 in ns. */
json_t *sbx_resolver_status(const struct sbx_session_rt *s);
json_t *sbx_resolver_latency(void);

/*
 * The pure part, shared with the unit tests and the fuzzer: parse one
 * query message. 0 and the question's name (normalised into name, or
 * name[0] = 0 when it is not a host name), type and class; -1 when it is
 * not a query this resolver answers (*rcode then says what to answer:
 * FORMERR, NOTIMP, or -1 for no answer at all).
 */
int sbx_dns_parse_query(const uint8_t *wire, size_t len, char *name, size_t namelen,
			uint16_t *qtype, uint16_t *qclass, int *rcode);
/* Does a name look like data rather than a name (a tunnel)? */
bool sbx_dns_tunnel_like(const char *name);

#endif
