# Hardening (tests/kernel/t_hardening.sh) on the fallback tier: datagram
# destinations, SCTP (refused there whatever sandbox.sctp says), socket
# families, descriptor owners (seccomp), a protected path's parent, and
# the command lines of outside processes (sbx_ll_file_open).
. "$ROOT/tests/kernel/t_hardening.sh"
nobpf_61_only cmdline_of_outside_processes_is_hidden sctp_needs_its_switch_and_its_destinations_are_checked
