# Asks and approvals (tests/kernel/t_escalation.sh) on the fallback tier:
# a read or exec ask is decided in the kernel there (sbx_ll_file_ask on
# security_file_open, after run's plan let Landlock grant it), so an
# approval reaches the running session; a write ask is a deny there, and
# the tests that need one say so ($TIER).
. "$ROOT/tests/kernel/t_escalation.sh"
