# Grants (tests/kernel/t_grants.sh) on the fallback tier: what a person
# approved reaches the running session through the daemon's programs on
# security_file_open, never through a symlink or a hard link swapped in.
. "$ROOT/tests/kernel/t_grants.sh"
nobpf_61_only symlink_swapped_in_between_request_and_approval_is_not_granted a_hard_linked_file_is_not_granted
