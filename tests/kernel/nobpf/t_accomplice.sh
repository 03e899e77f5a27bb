# The accomplice suite (tests/kernel/t_accomplice.sh) on the fallback tier:
# unix sockets are decided by listener there too, by the daemon's fentry
# and fmod_ret programs on security_unix_* (bpf/network.bpf.c), with the
# same verdicts and events; where Landlock answers differently the test
# itself says so ($TIER).
. "$ROOT/tests/kernel/t_accomplice.sh"
# on 6.1: pathname (stream and datagram) and abstract sockets, an ask
nobpf_61_only path_socket_outside_refused_stream_and_dgram abstract_socket_outside_refused \
	ssh_agent_is_asked_then_approved
