# Terminals (tests/kernel/t_tty.sh) on the fallback tier: the person's
# `bpfsbx watch`, ptys made outside or by another session, VTs and the
# console, opened by path, by device or through /proc, or passed in over
# SCM_RIGHTS. Landlock sees only paths; the fmod_ret programs on
# security_file_open and security_file_receive decide by device, with the
# ptys a session made recorded by an fexit on devpts_pty_new.
. "$ROOT/tests/kernel/t_tty.sh"
