// SPDX-License-Identifier: GPL-2.0
/*
 * dev_ports.c - sockets bound to a device, from the kernel's socket
 * diagnostics (see dev_ports.h). /proc/net/{tcp,udp} do not show the
 * bound device; sock_diag's inet_diag_msg does (idiag_if).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <bpf/bpf.h>
#include "bpf/bpfsbx.h"
#include "lib/alloc.h"
#include "user/daemon/dev_ports.h"

/* one dump request and its answer: 0, or -errno */
static int dump(int nl, int family, int proto, int map_fd, size_t *noted)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = family, .sdiag_protocol = proto, .idiag_states = ~0u },
	};
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	static char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));

	if (sendto(nl, &req, sizeof(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	for (;;) {
		ssize_t len = recv(nl, buf, sizeof(buf), 0);
		size_t left;
		struct nlmsghdr *h;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (len == 0)
			return -EPIPE;
		left = (size_t)len;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			struct sbx_dev_port_key k = { .proto = proto };
			__u64 outside = 0;

			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error ? e->error : -EIO;
			}
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)) || !m->id.idiag_if ||
			    !m->id.idiag_sport)
				continue;
			k.port = ntohs(m->id.idiag_sport);
			if (bpf_map_update_elem(map_fd, &k, &outside, BPF_ANY))
				return -errno;
			(*noted)++;
		}
	}
}

int sbx_dev_ports_scan(int map_fd, size_t *noted, char **err)
{
	static const int fams[] = { AF_INET, AF_INET6 }, protos[] = { IPPROTO_TCP, IPPROTO_UDP };
	int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	int rc = 0;

	*noted = 0;
	if (nl < 0) {
		rc = -errno;
		*err = sbx_asprintf("sock_diag: %s", strerror(-rc));
		return rc;
	}
	for (size_t f = 0; f < 2 && !rc; f++) {
		for (size_t p = 0; p < 2 && !rc; p++) {
			rc = dump(nl, fams[f], protos[p], map_fd, noted);
			if (rc)
				*err = sbx_asprintf("listing %s %s sockets (sock_diag): %s",
						    protos[p] == IPPROTO_TCP ? "TCP" : "UDP",
						    fams[f] == AF_INET ? "IPv4" : "IPv6",
						    strerror(-rc));
		}
	}
	close(nl);
	return rc;
}
