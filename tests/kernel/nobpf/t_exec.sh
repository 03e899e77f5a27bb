# Exec by the file the kernel runs (tests/kernel/t_exec.sh) on the
# fallback tier: Landlock's EXECUTE right, on symlinks, hard links and
# /proc/self/fd alike.
. "$ROOT/tests/kernel/t_exec.sh"
nobpf_61_only exec_through_proc_fd
