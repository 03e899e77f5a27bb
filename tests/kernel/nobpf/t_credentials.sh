# Every credential location of the inventory (tests/kernel/t_credentials.sh)
# on the fallback tier: agent-default asks for reads and has name rules, so
# the daemon's program on security_file_open decides its sessions' reads,
# deny included (EPERM and the inventory's verdict in the event, as on the
# full tier). 6.1 runs it too: Landlock ABI 2, the weakest case.
. "$ROOT/tests/kernel/t_credentials.sh"
