# Accomplices without sockets (tests/kernel/t_ipc.sh) on the fallback
# tier: SysV IPC and kernel keys decided by the daemon's fmod_ret twins of
# the IPC and key hooks (bpf/ipc.bpf.c); where the tier answers
# differently, the test itself says so ($TIER).
. "$ROOT/tests/kernel/t_ipc.sh"
# on 6.1: SysV IPC, keys, FIFOs, POSIX queues, no_new_privs
nobpf_61_only sysv_message_queue_outside_is_refused keys_outside_are_not_readable \
	fifo_made_outside_is_refused posix_message_queue_outside_is_refused \
	exec_gaining_privileges_is_refused exec_gaining_nothing_or_allowed_runs
