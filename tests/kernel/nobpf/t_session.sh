# Sessions (tests/kernel/t_session.sh) on the fallback tier: exit status,
# cleanup, shared and recompiled policies, the session root made again, and
# a hard link made between sessions, which the plan grants by place and the
# daemon's program refuses by inode.
. "$ROOT/tests/kernel/t_session.sh"
nobpf_61_only hard_link_made_between_sessions_is_covered changed_policy_file_is_compiled_again
