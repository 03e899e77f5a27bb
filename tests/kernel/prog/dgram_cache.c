// SPDX-License-Identifier: GPL-2.0
/*
 * The datagram cache, through cgroup/sendmsg4: an allowed destination
 * is remembered on the socket (sbx_dcache) and answers the next datagram
 * without the policy maps; a denied one is never remembered; moving the
 * NET epoch (what the daemon does after any change a network decision
 * reads) makes the socket decide again. A loopback destination whose
 * listener is the session's own is remembered with its listener, under the
 * PORTS epoch too, and answered whole.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "bpf/sbx_values.h"
#include "prog_tests.h"

#define POLICY 9
#define PORT_OK 47001
#define PORT_NO 47002
#define RULE_OK 51

static int sock_fd;

/* one datagram from fd to 127.0.0.1:port */
static int send_from(int fd, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sendto(fd, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0;
}

static int send_to(void *port)
{
	return send_from(sock_fd, *(int *)port);
}

/* the key of both tests' rules: 127.0.0.1, under the test's policy */
static struct sbx_net4_key lo_key(void)
{
	return (struct sbx_net4_key){ .prefixlen = 64, .policy_id = htonl(POLICY),
				      .addr = { 127, 0, 0, 1 } };
}

/*
 * cgroup/sendmsg4 for a session whose network default denies, and
 * sock_fd, a datagram socket made in it (sent from a child of the
 * session: its storage is the socket's, read here through the same
 * descriptor). 0 when both are there.
 */
static int dgram_setup(struct pt *t)
{
	struct sbx_policy_hdr pol = { .policy_id = POLICY, .net_default = SBX_V_DENY };

	sock_fd = -1;
	if (pt_setup(t, "sbx_dns_sendmsg4", &pol))
		return -1;
	sock_fd = pt_socket_in_session(t, AF_INET, SOCK_DGRAM);
	PT_CHECK(t, sock_fd >= 0, "a socket in the session: %s", strerror(errno));
	return sock_fd < 0 ? -1 : 0;
}

static int dgram_cache(void)
{
	struct sbx_net4_key k = lo_key();
	struct sbx_net_rule r = { .count = 1 };
	struct sbx_dcache c;
	int ok = PORT_OK, no = PORT_NO, rc, n, net4, dc;
	uint64_t hits;
	struct pt t;

	if (dgram_setup(&t))
		goto out;
	net4 = bpf_map__fd(t.skel->maps.sbx_net4);
	dc = bpf_map__fd(t.skel->maps.sbx_dcache);
	r.r[0] = (struct sbx_net_port_rule){ .port_lo = PORT_OK, .port_hi = PORT_OK,
					     .verdict = SBX_V_ALLOW, .proto = IPPROTO_UDP,
					     .rule_id = RULE_OK };
	bpf_map_update_elem(net4, &k, &r, BPF_ANY);

	rc = pt_in_session(&t, send_to, &no);
	PT_CHECK(&t, rc == EPERM, "a datagram to a denied port: errno %d, want EPERM", rc);
	PT_CHECK(&t, bpf_map_lookup_elem(dc, &sock_fd, &c) || c.cgid == 0,
		 "a denied destination was remembered");
	n = pt_events(&t);
	PT_CHECK(&t, n == 1 && t.ev[0].op == SBX_OP_SENDMSG && t.ev[0].port == PORT_NO &&
		     t.ev[0].verdict == SBX_V_DENY,
		 "%d events (op %u port %u), want the denial of port %d", n,
		 n ? t.ev[0].op : 0, n ? t.ev[0].port : 0, PORT_NO);

	rc = pt_in_session(&t, send_to, &ok);
	PT_CHECK(&t, rc == 0, "a datagram to the allowed port: errno %d, want 0", rc);
	memset(&c, 0, sizeof(c));
	rc = bpf_map_lookup_elem(dc, &sock_fd, &c);
	PT_CHECK(&t, rc == 0, "the allowed destination was not remembered");
	PT_CHECK(&t, rc || (c.cgid == t.cgid && c.port == PORT_OK && c.family == AF_INET &&
			    c.proto == IPPROTO_UDP && c.epoch == 0 && !(c.gen & 1) &&
			    c.addr[0] == 127 && c.addr[3] == 1 && c.lo_epoch == ~0ull),
		 "remembered cgid %llu port %u family %u proto %u epoch %llu gen %u lo_epoch %llx"
		 " (nobody listens: its listener is looked up each time)",
		 (unsigned long long)c.cgid, c.port, c.family, c.proto,
		 (unsigned long long)c.epoch, c.gen, (unsigned long long)c.lo_epoch);

	/* the rule goes without the epoch moving: the socket still sends on
	 * its remembered verdict, which is what the cache is for */
	bpf_map_delete_elem(net4, &k);
	hits = pt_stat(&t, SBX_STAT_NET_CACHE_HIT);
	rc = pt_in_session(&t, send_to, &ok);
	PT_CHECK(&t, rc == 0, "the remembered destination: errno %d, want 0", rc);
	PT_CHECK(&t, pt_stat(&t, SBX_STAT_NET_CACHE_HIT) == hits + 1, "no cache hit counted");

	/* the epoch moves: decided again, now by the default */
	pt_epoch_bump(&t, SBX_EPOCH_NET);
	rc = pt_in_session(&t, send_to, &ok);
	PT_CHECK(&t, rc == EPERM, "after the epoch moved: errno %d, want EPERM", rc);
	n = pt_events(&t);
	PT_CHECK(&t, n == 1 && t.ev[0].port == PORT_OK, "%d events, want the denial of port %d",
		 n, PORT_OK);
out:
	pt_teardown(&t);
	if (sock_fd >= 0)
		close(sock_fd);
	return t.failed || !t.link;
}
PT_TEST(dgram_cache);

static int own_fd, own_port;

static int send_own(void *unused)
{
	(void)unused;
	return send_to(&own_port);
}

/* the server's first datagram (anywhere allowed) */
static int send_first(void *unused)
{
	(void)unused;
	return send_from(own_fd, PORT_OK);
}

static int dgram_cache_own_listener(void)
{
	struct sbx_net4_key k = lo_key();
	struct sbx_net_rule r = { .count = 1 };
	struct sbx_dcache c;
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	int srv = -1, rc, dc;
	uint64_t lo_hits, net_hits, ports;
	struct pt t;

	if (dgram_setup(&t))
		goto out;
	srv = pt_socket_in_session(&t, AF_INET, SOCK_DGRAM);
	PT_CHECK(&t, srv >= 0, "a second socket in the session: %s", strerror(errno));
	if (srv < 0)
		goto out;
	dc = bpf_map__fd(t.skel->maps.sbx_dcache);
	/* every port allowed: the listener alone tells the answers apart */
	r.r[0] = (struct sbx_net_port_rule){ .port_lo = 1, .port_hi = 65535,
					     .verdict = SBX_V_ALLOW, .proto = IPPROTO_UDP,
					     .rule_id = RULE_OK };
	bpf_map_update_elem(bpf_map__fd(t.skel->maps.sbx_net4), &k, &r, BPF_ANY);

	/* the server's first datagram gives it a port and marks it the
	 * session's (sbx_cg_mark_owner) */
	own_fd = srv;
	rc = pt_in_session(&t, send_first, NULL);
	PT_CHECK(&t, rc == 0 && !getsockname(srv, (struct sockaddr *)&a, &al),
		 "the server's first datagram: errno %d", rc);
	own_port = ntohs(a.sin_port);

	ports = pt_epoch(&t, SBX_EPOCH_PORTS);
	rc = pt_in_session(&t, send_own, NULL);
	PT_CHECK(&t, rc == 0, "to the session's own server: errno %d, want 0", rc);
	memset(&c, 0, sizeof(c));
	rc = bpf_map_lookup_elem(dc, &sock_fd, &c);
	PT_CHECK(&t, rc == 0 && c.port == own_port && c.lo_epoch == ports,
		 "remembered port %u lo_epoch %llu, want %d at PORTS %llu", c.port,
		 (unsigned long long)c.lo_epoch, own_port, (unsigned long long)ports);

	/* answered whole: neither the policy nor the listener looked at */
	lo_hits = pt_stat(&t, SBX_STAT_LO_CACHE_HIT);
	net_hits = pt_stat(&t, SBX_STAT_NET_CACHE_HIT);
	rc = pt_in_session(&t, send_own, NULL);
	PT_CHECK(&t, rc == 0 && pt_stat(&t, SBX_STAT_LO_CACHE_HIT) == lo_hits + 1 &&
		     pt_stat(&t, SBX_STAT_NET_CACHE_HIT) == net_hits,
		 "the whole answer: errno %d, %llu loopback and %llu verdict hits, want 1 and 0",
		 rc, (unsigned long long)(pt_stat(&t, SBX_STAT_LO_CACHE_HIT) - lo_hits),
		 (unsigned long long)(pt_stat(&t, SBX_STAT_NET_CACHE_HIT) - net_hits));

	/* a port changed hands: the verdict still holds, the listener is
	 * looked up again and remembered at the new epoch */
	pt_epoch_bump(&t, SBX_EPOCH_PORTS);
	lo_hits = pt_stat(&t, SBX_STAT_LO_CACHE_HIT);
	net_hits = pt_stat(&t, SBX_STAT_NET_CACHE_HIT);
	rc = pt_in_session(&t, send_own, NULL);
	memset(&c, 0, sizeof(c));
	bpf_map_lookup_elem(dc, &sock_fd, &c);
	PT_CHECK(&t, rc == 0 && pt_stat(&t, SBX_STAT_LO_CACHE_HIT) == lo_hits &&
		     pt_stat(&t, SBX_STAT_NET_CACHE_HIT) == net_hits + 1 &&
		     c.lo_epoch == ports + 1 && !(c.gen & 1),
		 "after PORTS moved: errno %d, lo_epoch %llu, want %llu", rc,
		 (unsigned long long)c.lo_epoch, (unsigned long long)(ports + 1));
out:
	pt_teardown(&t);
	if (sock_fd >= 0)
		close(sock_fd);
	if (srv >= 0)
		close(srv);
	return t.failed || !t.link;
}
PT_TEST(dgram_cache_own_listener);
