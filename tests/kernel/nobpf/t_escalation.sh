# Asks and approvals (tests/kernel/t_escalation.sh) on the fallback tier:
# read, write and exec asks are decided in the kernel there
# (sbx_ll_file_open on security_file_open and the security_path_* twins,
# after run's plan let Landlock grant them), so an approval reaches the
# running session; where the tier answers differently, the test itself
# says so ($TIER).
. "$ROOT/tests/kernel/t_escalation.sh"
