# Accomplices without sockets (tests/kernel/t_ipc.sh) on the fallback
# tier: SysV IPC and kernel keys decided by the daemon's fmod_ret twins of
# the IPC and key hooks (bpf/ipc.bpf.c); where the tier answers
# differently, the test itself says so ($TIER).
. "$ROOT/tests/kernel/t_ipc.sh"
