// SPDX-License-Identifier: GPL-2.0
/*
 * The datagram cache, through cgroup/sendmsg4: an allowed destination
 * is remembered on the socket (sbx_dcache) and answers the next datagram
 * without the policy maps; a denied one is never remembered; moving the
 * NET epoch (what the daemon does after any change a network decision
 * reads) makes the socket decide again.
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

static int send_to(void *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(*(int *)port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sendto(sock_fd, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0;
}

static int dgram_cache(void)
{
	struct sbx_policy_hdr pol = { .policy_id = POLICY, .net_default = SBX_V_DENY };
	struct sbx_net4_key k = { .prefixlen = 64, .policy_id = htonl(POLICY),
				  .addr = { 127, 0, 0, 1 } };
	struct sbx_net_rule r = { .count = 1 };
	struct sbx_dcache c;
	int ok = PORT_OK, no = PORT_NO, rc, n, net4, dc;
	uint64_t hits;
	struct pt t;

	if (pt_setup(&t, "sbx_dns_sendmsg4", &pol))
		goto out;
	/* made in the session, sent from a child of it: storage is the
	 * socket's, read here through the same descriptor */
	sock_fd = pt_socket_in_session(&t, AF_INET, SOCK_DGRAM);
	PT_CHECK(&t, sock_fd >= 0, "a socket in the session: %s", strerror(errno));
	if (sock_fd < 0)
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
			    c.addr[0] == 127 && c.addr[3] == 1),
		 "remembered cgid %llu port %u family %u proto %u epoch %llu gen %u",
		 (unsigned long long)c.cgid, c.port, c.family, c.proto,
		 (unsigned long long)c.epoch, c.gen);

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
