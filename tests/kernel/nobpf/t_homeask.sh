# agent-strict's asks for a real build, git and tests (tests/kernel/t_homeask.sh)
# on the fallback tier, where the daemon's programs ask.
. "$ROOT/tests/kernel/t_homeask.sh"
nobpf_61_only __none__
