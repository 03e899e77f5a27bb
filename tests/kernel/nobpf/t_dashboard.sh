# The dashboard (tests/kernel/t_dashboard.sh) on the fallback tier: an
# approver's listener is hidden from sessions by the daemon's mark, read
# by the programs on security_unix_* for a unix socket and by the cgroup
# programs for a loopback one.
. "$ROOT/tests/kernel/t_dashboard.sh"
