# Terminals (tests/kernel/t_tty.sh) on the fallback tier: the person's
# `bpfsbx watch`, ptys made outside or by another session, VTs and the
# console, opened by path, by device or through /proc, or passed in over
# SCM_RIGHTS. Landlock sees only paths; the fmod_ret programs on
# security_file_open and security_file_receive decide by device, with the
# ptys a session made recorded by an fexit on devpts_pty_new.
. "$ROOT/tests/kernel/t_tty.sh"
nobpf_61_only a_closed_pty_of_the_session_gives_no_right_to_the_next_one \
	a_session_cannot_draw_on_the_watch_screen a_tty_passed_in_over_scm_rights_is_refused
