/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inet_owner.h - who serves a local TCP or UDP port: for the events of
 * loopback listeners that a session was refused (bpf/dns.bpf.c), which
 * name the listener's process like a unix socket's.
 */
#ifndef SBX_INET_OWNER_H
#define SBX_INET_OWNER_H

#include <stdint.h>
#include <sys/types.h>

/*
 * The pid of a process holding the socket that listens on (addr, port):
 * proto 6 or 17, addr 4 or 16 bytes in network order (a wildcard-bound
 * listener matches any address). 0 when none is found (it closed, or it
 * lives in another network namespace).
 */
pid_t sbx_inet_owner(int family, const uint8_t *addr, uint16_t port, uint8_t proto);

#endif
