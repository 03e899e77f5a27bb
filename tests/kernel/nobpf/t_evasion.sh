# Other names for a denied file (tests/kernel/t_evasion.sh) on the fallback
# tier: Landlock decides on the object opened, so symlinks, hard links,
# "..", /proc/self/root and openat reach the same refusal (EACCES there).
. "$ROOT/tests/kernel/t_evasion.sh"
nobpf_61_only hard_link_made_before_session proc_self_root
