// SPDX-License-Identifier: GPL-2.0
/*
 * ports.bpf.c - the moment a datagram port may change hands.
 *
 * dns.bpf.c remembers, per session socket, the last loopback destination
 * whose listener was the session's own (sbx_lo_seen), so that a stream of
 * datagrams to a server of the session skips the listener lookup. Which
 * socket a datagram to a port reaches changes only when a UDP socket
 * anywhere takes a port, leaves it, changes the address or device it
 * receives on, or connects to or disconnects from a peer (a connected
 * socket wins its peer's datagrams). Each of those ends in one of the
 * kernel functions below, whatever the path there: bind, the autobind of
 * a first sendto, connect or splice, close, connect(AF_UNSPEC),
 * SO_BINDTODEVICE (a rehash), UDP-Lite and IPv6 included. After each, the
 * PORTS epoch moves, and every remembered listener is looked up again.
 *
 * fexit, not fentry: the epoch moves after the change is visible, and
 * the cgroup program reads it before its lookup, so a lookup that saw the
 * old state stored an epoch that is already past. These run for every
 * process, in or out of a session; they cost a bump per socket event,
 * never per datagram. The kernel has no LSM hook for an autobind or for a
 * socket leaving its port (issue 17).
 */
#include "sbx_common.h"

/* one program per function: a program's name says which change it saw
 * (bpftool prog, the bench's profile) */
#define SBX_PORTS_MOVE_AFTER(fn, name)		\
	SEC("fexit/" #fn)			\
	int BPF_PROG(name)			\
	{					\
		sbx_bump_epoch(SBX_EPOCH_PORTS);	\
		return 0;			\
	}

SBX_PORTS_MOVE_AFTER(udp_lib_get_port, sbx_udp_took_port)
SBX_PORTS_MOVE_AFTER(udp_lib_unhash, sbx_udp_left_port)
/* a new receive address (connect of a wildcard-bound socket) or device */
SBX_PORTS_MOVE_AFTER(udp_lib_rehash, sbx_udp_rehashed)
/* a peer: the socket now receives only from it, and before any other
 * socket on its port (v4-mapped peers of IPv6 sockets come here too) */
SBX_PORTS_MOVE_AFTER(__ip4_datagram_connect, sbx_dgram4_connected)
SBX_PORTS_MOVE_AFTER(__ip6_datagram_connect, sbx_dgram6_connected)
/* connect(AF_UNSPEC), and SOCK_DESTROY: the peer goes, and the port too
 * unless bind() chose it */
SBX_PORTS_MOVE_AFTER(__udp_disconnect, sbx_udp_disconnected)
