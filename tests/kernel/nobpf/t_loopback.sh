# Loopback listeners outside the session (tests/kernel/t_loopback.sh) on
# the fallback tier: the cgroup programs decide, with whose a port is from
# the tier's programs on security_socket_bind and _listen and from the
# full tier's fexit programs of bpf/ports.bpf.c (a socket bound to lo, a
# port that changes hands), which this tier loads too.
. "$ROOT/tests/kernel/t_loopback.sh"
nobpf_61_only outside_http_server_on_127_is_refused \
	remembered_own_udp_server_is_looked_up_again_when_its_port_changes_hands \
	outside_listener_bound_to_a_device_is_refused
