# Containers on the fallback tier: the OCI hook refuses them, so the
# runtime does not start a container that was to be confined; and no
# session makes a device node (tests/kernel/t_container.sh; its other
# tests need the bpf-lsm tier).
. "$ROOT/tests/kernel/t_container.sh"
unset -f test_a_runc_container_is_a_session_from_its_first_exec \
	test_runc_exec_into_a_container_is_confined_and_an_unhooked_one_is_not \
	test_crun_container_network_follows_host_rules_by_name \
	test_podman_reads_the_hooks_file_and_its_container_is_a_session
