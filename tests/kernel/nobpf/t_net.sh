# IP destinations (tests/kernel/t_net.sh) on the fallback tier: the cgroup
# programs decide each connect and datagram, as they decide datagrams and
# TCP Fast Open on the full tier, with the same datagram cache; no LSM hook
# decided the connect before them.
. "$ROOT/tests/kernel/t_net.sh"
nobpf_61_only connect_denied_ipv4 udp_sendto_denied tcp_fastopen_denied
