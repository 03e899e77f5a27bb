# Outside clients of a session's listeners (tests/kernel/t_inbound.sh) on
# the fallback tier: TCP and UDP by the cgroup programs on the cgroup root
# (bpf/inbound.bpf.c), unix sockets by the programs on security_unix_*.
. "$ROOT/tests/kernel/t_inbound.sh"
