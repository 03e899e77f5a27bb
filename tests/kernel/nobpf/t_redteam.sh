# The review's first two waves (tests/kernel/t_redteam.sh) on the fallback
# tier, where each test says how the tier answers differently ($TIER):
# Landlock refuses a read or exec with EACCES ($FILE_DENIED), the
# never-list is run's seccomp filter (refused, no event). Exec without
# execve (ld.so, LD_PRELOAD, mprotect) is the twin on security_mmap_file
# and security_file_mprotect; other processes' /proc and signals to them
# the twins on security_ptrace_access_check and security_task_kill.
. "$ROOT/tests/kernel/t_redteam.sh"
# on 6.1: one test per hook family the 6.12 guest runs all of
nobpf_61_only rt06_ldso_runs_denied_binary rt07_ld_preload_denied_library \
	rt08_mprotect_exec_denied_file rt08b_read_implies_exec_maps_denied_file \
	rt12_proc_environ_of_outside_process \
	rt15_proc_root_of_outside_process rt21_kill_daemon rt25_signal_outside_process \
	rt17_sysctl_core_pattern rt36_fd_passed_over_unix_socket
