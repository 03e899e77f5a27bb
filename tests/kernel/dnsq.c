// SPDX-License-Identifier: GPL-2.0
/*
 * dnsq - the kernel suite's DNS client (t_dns.sh): one question to the
 * server it is told, over UDP or TCP, ignoring /etc/resolv.conf, and the
 * answer on one line: "NOERROR 10.99.0.1", "NXDOMAIN", "TIMEOUT",
 * "ERR EPERM", "BADID". ldns builds and reads the messages.
 *
 *   dnsq NAME [TYPE] [SERVER] [PORT] [tcp]
 *
 * (A python3 client cost about a second per query under TCG, most of it
 * importing its DNS library; this one starts in tens of milliseconds.)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <ldns/ldns.h>

#define TIMEOUT_MS 3000

static int say_errno(int e)
{
	const char *n = strerrorname_np(e);

	printf("ERR %s\n", n ? n : "?");
	return 0;
}

/* wait for fd to be readable; 0, or 1 on timeout */
static int wait_in(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, TIMEOUT_MS) <= 0;
}

static int read_full(int fd, uint8_t *b, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r;

		if (wait_in(fd))
			return 1;
		r = read(fd, b + got, n - got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *name, *type = "A", *server = "198.51.100.53";
	int port = 53, tcp = 0, fd, rc;
	struct sockaddr_storage ss = {};
	socklen_t sl;
	ldns_rr_type t;
	ldns_rdf *dn;
	ldns_pkt *q, *a = NULL;
	uint8_t *wire = NULL, buf[65536 + 2];
	size_t wlen = 0, alen = 0;
	uint16_t id;

	if (argc < 2) {
		fprintf(stderr, "usage: dnsq NAME [TYPE] [SERVER] [PORT] [tcp]\n");
		return 2;
	}
	name = argv[1];
	if (argc > 2)
		type = argv[2];
	if (argc > 3)
		server = argv[3];
	if (argc > 4)
		port = atoi(argv[4]);
	tcp = argc > 5 && !strcmp(argv[5], "tcp");

	if (strchr(server, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, server, &s6->sin6_addr) != 1)
			return 2;
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, server, &s4->sin_addr) != 1)
			return 2;
		sl = sizeof(*s4);
	}
	t = ldns_get_rr_type_by_name(type);
	dn = ldns_dname_new_frm_str(name);
	if (!t || !dn) {
		fprintf(stderr, "dnsq: bad name or type\n");
		return 2;
	}
	q = ldns_pkt_query_new(dn, t, LDNS_RR_CLASS_IN, LDNS_RD);
	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = (uint16_t)getpid();
	ldns_pkt_set_id(q, id);
	if (!q || ldns_pkt2wire(&wire, q, &wlen) != LDNS_STATUS_OK)
		return 2;

	fd = socket(ss.ss_family, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0)
		return say_errno(errno);
	if (tcp) {
		uint8_t len2[2] = { (uint8_t)(wlen >> 8), (uint8_t)wlen };

		if (connect(fd, (struct sockaddr *)&ss, sl))
			return say_errno(errno);
		if (write(fd, len2, 2) != 2 || write(fd, wire, wlen) != (ssize_t)wlen)
			return say_errno(errno);
		rc = read_full(fd, buf, 2);
		if (!rc) {
			alen = (size_t)buf[0] << 8 | buf[1];
			rc = read_full(fd, buf, alen);
		}
		if (rc > 0) {
			printf("TIMEOUT\n");
			return 0;
		}
		if (rc < 0)
			return say_errno(errno ? errno : ECONNRESET);
	} else {
		ssize_t r;

		if (sendto(fd, wire, wlen, 0, (struct sockaddr *)&ss, sl) < 0)
			return say_errno(errno);
		if (wait_in(fd)) {
			printf("TIMEOUT\n");
			return 0;
		}
		r = recv(fd, buf, sizeof(buf), 0);
		if (r < 0)
			return say_errno(errno);
		alen = (size_t)r;
	}
	if (ldns_wire2pkt(&a, buf, alen) != LDNS_STATUS_OK) {
		printf("FORMERR-REPLY\n");
		return 0;
	}
	if (ldns_pkt_id(a) != id) {
		printf("BADID\n");
		return 0;
	}
	{
		ldns_lookup_table *rcode = ldns_lookup_by_id(ldns_rcodes, ldns_pkt_get_rcode(a));
		ldns_rr_list *ans = ldns_pkt_answer(a);

		printf("%s", rcode ? rcode->name : "RCODE?");
		for (size_t i = 0; ans && i < ldns_rr_list_rr_count(ans); i++) {
			ldns_rr *rr = ldns_rr_list_rr(ans, i);
			ldns_rr_type rt = ldns_rr_get_type(rr);
			char *s;

			if (rt != LDNS_RR_TYPE_A && rt != LDNS_RR_TYPE_AAAA)
				continue;
			s = ldns_rdf2str(ldns_rr_rdf(rr, 0));
			printf(" %s", s ? s : "?");
			free(s);
		}
		printf("\n");
	}
	ldns_pkt_free(a);
	ldns_pkt_free(q);
	free(wire);
	close(fd);
	return 0;
}
