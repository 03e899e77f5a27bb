# Outside clients of a session's listeners (tests/kernel/t_inbound.sh) on
# the fallback tier: TCP and UDP by the cgroup programs on the cgroup root
# (bpf/inbound.bpf.c), unix sockets by the programs on security_unix_*.
. "$ROOT/tests/kernel/t_inbound.sh"
# on 6.1: bind and listen (TCP), a first datagram (UDP), unix sockets, a
# reserved port
nobpf_61_only outside_tcp_client_of_a_session_listener_is_refused \
	outside_udp_client_of_a_session_socket_is_refused \
	outside_client_of_a_session_unix_socket_is_refused reserved_ports_cannot_be_bound
