// SPDX-License-Identifier: GPL-2.0
/*
 * ports.bpf.c - the moment a datagram port may change hands.
 *
 * dns.bpf.c remembers, per session socket, the last loopback destination
 * whose listener was the session's own (sbx_dcache), so that a stream of
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
 * never per datagram. They are tracing programs on kernel functions, not
 * LSM hooks, because the kernel has no LSM hook for an autobind or for a
 * socket leaving its port (a close, a disconnect).
 *
 * The same places see a socket bound to a device take a port, or a socket
 * holding a port get bound to a device: the listener lookup of dns.bpf.c
 * cannot find such a socket, so its port is written down (sbx_dev_ports)
 * for that program to decide as an outside listener's.
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

/* a TCP or UDP socket of the current task, bound to a device, holds a
 * port: written down as the session's own while only its sockets held it */
static __always_inline void sbx_note_dev_port(struct sock *sk)
{
	struct sbx_dev_port_key k = {};
	__u64 cgid = 0, *held;
	__u16 fam;

	if (!sk || !sk->__sk_common.skc_bound_dev_if || !sk->__sk_common.skc_num)
		return;
	fam = sk->__sk_common.skc_family;
	if (fam != AF_INET && fam != AF_INET6)
		return;
	k.proto = sk->sk_protocol;
	if (k.proto != IPPROTO_TCP && k.proto != IPPROTO_UDP)
		return;
	k.port = sk->__sk_common.skc_num;
	if (sbx_maybe_in_session())
		cgid = bpf_get_current_ancestor_cgroup_id(sbx_session_level);
	held = bpf_map_lookup_elem(&sbx_dev_ports, &k);
	if (!held) {
		if (!bpf_map_update_elem(&sbx_dev_ports, &k, &cgid, BPF_NOEXIST)) {
			sbx_bump_epoch(SBX_EPOCH_DEV_PORTS);
			return;
		}
		held = bpf_map_lookup_elem(&sbx_dev_ports, &k);	/* another CPU's */
		if (!held) {
			/* cannot be written down: the top bit makes every
			 * loopback port count as held by an outside socket
			 * (dns.bpf.c), so nothing unseen is let through */
			__u32 k0 = SBX_EPOCH_DEV_PORTS;
			__u64 *n = bpf_map_lookup_elem(&sbx_epoch, &k0);

			if (n)
				__sync_fetch_and_or(n, 1ull << 63);
			sbx_stat_inc(SBX_STAT_ERRORS);
			return;
		}
	}
	if (*held != cgid)
		*held = 0;	/* never back: 0 is the only other value written */
}

/*
 * A socket whose owner is a session (recorded at its bind or listen,
 * before the kernel chose its port) took a port: the kernel's choice is
 * known only now (sbx_hold_port). A first datagram's owner is recorded
 * after its autobind, with the port (dns.bpf.c).
 */
static __always_inline void sbx_note_held_port(struct sock *sk)
{
	__u16 port = sk->__sk_common.skc_num;
	__u64 *o;

	if (!port)
		return;
	o = bpf_sk_storage_get(&sbx_sk_owner, sk, 0, 0);
	if (o && *o)
		sbx_hold_port(sk->sk_protocol, port);
}

/* a port taken by a UDP socket, by bind or any autobind */
SEC("fexit/udp_lib_get_port")
int BPF_PROG(sbx_udp_took_port, struct sock *sk)
{
	sbx_note_dev_port(sk);
	sbx_note_held_port(sk);
	sbx_bump_epoch(SBX_EPOCH_PORTS);
	return 0;
}

/* a port taken by a TCP socket: bind, or listen() and connect() on an
 * unbound one */
SEC("fexit/inet_csk_get_port")
int BPF_PROG(sbx_tcp_took_port, struct sock *sk)
{
	sbx_note_dev_port(sk);
	sbx_note_held_port(sk);
	return 0;
}

/* SO_BINDTODEVICE and SO_BINDTOIFINDEX, before or after the port */
SEC("fexit/sock_bindtoindex_locked")
int BPF_PROG(sbx_sock_bound_to_device, struct sock *sk)
{
	sbx_note_dev_port(sk);
	sbx_bump_epoch(SBX_EPOCH_PORTS);
	return 0;
}
