# The shipped agent-default against the threats it names
# (tests/kernel/t_policy.sh) on the fallback tier: credential reads, paths
# that appear later, persistence writes, privilege escalation by name (a
# copy of sudo the plan never saw), metadata and private networks.
. "$ROOT/tests/kernel/t_policy.sh"
nobpf_61_only paths_that_appear_later_are_covered privilege_escalation_exec_blocked
