/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dev_ports.h - the TCP and UDP ports that sockets bound to a device hold
 * now, written into sbx_dev_ports (bpf/ports.bpf.c fills it while its
 * fexit programs are attached; this covers the time they were not).
 */
#ifndef SBX_DEV_PORTS_H
#define SBX_DEV_PORTS_H

#include <stddef.h>

/*
 * Ask the kernel (NETLINK_SOCK_DIAG, every state, IPv4 and IPv6, TCP and
 * UDP, this network namespace) for every socket with a bound device and a
 * port, and record each port as held by an outside socket (value 0, the
 * value bpf/ports.bpf.c never takes back). *noted: ports written. Fails
 * when the kernel cannot be asked: the caller must not count on the map.
 */
int sbx_dev_ports_scan(int map_fd, size_t *noted, char **err);

#endif
