# IP destinations (tests/kernel/t_net.sh) on the fallback tier: the cgroup
# programs decide each connect and datagram themselves (sbx_cgroup_decides;
# no datagram cache: it lives in lsm/socket_sendmsg), TCP Fast Open in
# cgroup/connect4.
. "$ROOT/tests/kernel/t_net.sh"
nobpf_61_only connect_denied_ipv4 udp_sendto_denied tcp_fastopen_denied
