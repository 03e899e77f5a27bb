# The accomplice suite (tests/kernel/t_accomplice.sh) on the fallback tier:
# unix sockets are decided by listener there too, by the daemon's fentry
# and fmod_ret programs on security_unix_* (bpf/network.bpf.c), with the
# same verdicts and events; where Landlock answers differently the test
# itself says so ($TIER).
. "$ROOT/tests/kernel/t_accomplice.sh"
