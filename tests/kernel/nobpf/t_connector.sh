# The hook's own compile (tests/kernel/t_connector.sh) on the fallback
# tier: the policy's reads are Landlock's there and its asks the daemon's
# program on security_file_open, so a read by the compile itself would be
# refused or asked as well. The file's other tests are flows of the full
# tier's suite.
. "$ROOT/tests/kernel/t_connector.sh"
unset -f test_hook_in_session_escalates_through_the_daemon \
	test_hook_in_session_cannot_write_the_queue_itself test_post_tool_use_audit_from_session
nobpf_61_only a_hook_in_session_reads_nothing_its_policy_refuses
