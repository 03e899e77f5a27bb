# Terminals (issue 28): a session opens, reads and writes no terminal but
# its own controlling one and the ptys it made, so it can neither draw a
# fake request on `bpfsbx watch` nor read what the person types. Each test
# runs the terminal outside as the test user, tries it from a session,
# and judges by effect: the outside end got nothing, nothing leaked, and
# an event names the terminal with the built-in rule.

RT=$POL/redteam.yaml	# files default allow: only the terminal rule refuses
TERMINAL_RULE=$((0xffff0000 + 18))
tt_user() { in_session $RT "$@"; }
tt_root() { in_root_session $RT "$@"; }

# session-side probes: open PATH MODE [DATA] (r, w, rw or ioctl: access
# mode 3), recv SOCK WHAT (a descriptor over SCM_RIGHTS), own-pty
TT_PY=/tmp/tt.py
cat >$TT_PY <<'EOF'
import errno, fcntl, os, socket, sys
def err(e): print("ERR", errno.errorcode[e.errno]); sys.exit(0)
cmd = sys.argv[1]
if cmd == "open":
    path, mode = sys.argv[2], sys.argv[3]
    data = sys.argv[4].encode() if len(sys.argv) > 4 else b""
    fl = {"r": os.O_RDONLY, "w": os.O_WRONLY, "rw": os.O_RDWR, "ioctl": 3}[mode]
    try: fd = os.open(path, fl | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as e: err(e)
    if "w" in mode: os.write(fd, data)
    if "r" in mode:
        try: open("/tmp/tt-leak", "ab").write(os.read(fd, 200))
        except BlockingIOError: pass
    print("OK")
elif cmd == "recv":
    s = socket.socket(socket.AF_UNIX)
    try: s.connect(sys.argv[2]); s.send(sys.argv[3].encode())
    except OSError as e: err(e)
    msg, fds, flags, _ = socket.recv_fds(s, 16, 1)
    if not fds: print("ERR", "EPERM" if flags & socket.MSG_CTRUNC else "ENOENT"); sys.exit(0)
    fcntl.fcntl(fds[0], fcntl.F_SETFL, os.O_NONBLOCK)
    os.write(fds[0], b"FAKE-REQUEST-FD\n")
    print("OK")
elif cmd == "own-pty":
    import pty, tty
    m, sl = pty.openpty()
    tty.setraw(sl)
    # open the slave again by its path, as script and tmux do
    s2 = os.open(os.ttyname(sl), os.O_RDWR | os.O_NOCTTY)
    os.write(s2, b"own-pty-ok")
    print("OK" if os.read(m, 100) == b"own-pty-ok" else "ERR mismatch")
EOF
chmod 644 $TT_PY

# a pty made outside every session, as the test user: its slave is in raw
# mode, so what the master reads (to /tmp/tt-got) is exactly what was
# written to the slave; "person-typed" waits in the slave's input as if
# the person had typed it. /tmp/tt-fd.sock hands out the slave or the
# master. Prints "SLAVE PID SLAVE_FD".
tt_outside() {
	rm -f /tmp/tt-got /tmp/tt-leak /tmp/tt-out /tmp/tt-fd.sock
	as_user python3 -S -c '
import os, pty, socket, threading, tty
m, s = pty.openpty()
tty.setraw(s)
os.write(m, b"person-typed\n")
got = open("/tmp/tt-got", "ab", buffering=0)
def reader():
    while True:
        try: got.write(os.read(m, 4096))
        except OSError: return
threading.Thread(target=reader, daemon=True).start()
srv = socket.socket(socket.AF_UNIX)
srv.bind("/tmp/tt-fd.sock"); os.chmod("/tmp/tt-fd.sock", 0o777); srv.listen(4)
print(os.ttyname(s), os.getpid(), s, flush=True)
while True:
    c, _ = srv.accept()
    what = c.recv(16)
    socket.send_fds(c, [b"x"], [m if what == b"master" else s]); c.close()
' >/tmp/tt-out 2>&1 &
	echo $! >/tmp/tt-outside.pid
	wait_for grep -q /dev/pts/ /tmp/tt-out || fail "no outside pty: $(cat /tmp/tt-out)"
	read -r TT_PTS TT_PID TT_FD </tmp/tt-out
}
tt_outside_stop() { kill "$(cat /tmp/tt-outside.pid 2>/dev/null)" 2>/dev/null || true; }

# nothing the session tried reached the outside terminal or came back
nothing_crossed() {
	sleep 0.3
	! grep -q FAKE /tmp/tt-got 2>/dev/null || fail "the outside pty got: $(cat /tmp/tt-got)"
	! grep -q person-typed /tmp/tt-leak 2>/dev/null || fail "what the person typed leaked"
}

teardown_file() {
	tt_outside_stop
	as_user tmux -S /tmp/tmux-$TUID/tt kill-server 2>/dev/null || true
	rm -rf /tmp/tt-watch
	rm -rf /srv/ttycopy
}

# ---- someone else's pty ----------------------------------------------------------

test_a_session_cannot_write_to_a_pty_made_outside() {
	tt_outside
	expect "ERR EPERM" tt_user python3 -S $TT_PY open $TT_PTS w FAKE-REQUEST-1
	expect "ERR EPERM" tt_user python3 -S $TT_PY open $TT_PTS rw FAKE-REQUEST-2
	# an ioctl-only open (access mode 3): termios, window size, TIOCSCTTY
	expect "ERR EPERM" tt_user python3 -S $TT_PY open $TT_PTS ioctl
	out=$(tt_user sh -c "echo FAKE-REQUEST-3 >$TT_PTS" 2>&1) && fail "echo >$TT_PTS: $out"
	echo "$out" | grep -q "Operation not permitted" || fail "echo: $out"
	nothing_crossed
	event operation=open_write object=$TT_PTS verdict=deny rule.id=$TERMINAL_RULE
	# the same write outside the session arrives: the probe can see one
	as_user python3 -S $TT_PY open $TT_PTS w FAKE-OUTSIDE >/dev/null
	wait_for grep -q FAKE-OUTSIDE /tmp/tt-got || fail "the outside pty reads nothing at all"
	tt_outside_stop
}

test_a_session_cannot_read_what_is_typed_into_a_pty_made_outside() {
	tt_outside
	expect "ERR EPERM" tt_user python3 -S $TT_PY open $TT_PTS r
	nothing_crossed
	event operation=open_read object=$TT_PTS verdict=deny rule.id=$TERMINAL_RULE
	# outside, the same read gets the keystrokes: the probe can leak
	as_user python3 -S $TT_PY open $TT_PTS r >/dev/null
	grep -q person-typed /tmp/tt-leak || fail "the probe reads nothing even outside"
	tt_outside_stop
}

# a pty another session made is not this session's either
test_a_session_cannot_reach_a_pty_of_another_session() {
	rm -f /tmp/tt-other /tmp/tt-other-go
	tt_user python3 -S -c '
import os, pty, time
m, s = pty.openpty()
print(os.ttyname(s), flush=True)
for _ in range(600):
    if os.path.exists("/tmp/tt-other-go"): break
    time.sleep(0.05)' >/tmp/tt-other 2>&1 &
	p=$!
	wait_for grep -q /dev/pts/ /tmp/tt-other || fail "no pty in the first session"
	pts=$(head -n 1 /tmp/tt-other)
	expect "ERR EPERM" tt_user python3 -S $TT_PY open $pts w FAKE-OTHER
	touch /tmp/tt-other-go
	wait $p || true
}

# A pty the session made and closed leaves no right behind: the next pty
# of that number, made outside, is someone else's (the landlock tier
# keeps the mark by the inode's address, which the next pty's inode may
# well get; devpts_pty_kill removes it). One session throughout: the mark
# is the session's.
test_a_closed_pty_of_the_session_gives_no_right_to_the_next_one() {
	tt_outside_stop
	# both files exist before the session: the landlock tier refuses a
	# name made later in a directory its plan expanded (/tmp)
	rm -f /tmp/tt-reuse
	: >/tmp/tt-mine; : >/tmp/tt-next
	chown $TUSER /tmp/tt-mine
	tt_user python3 -S -c '
import errno, os, pty, time
m, s = pty.openpty()
open("/tmp/tt-mine", "w").write(os.ttyname(s) + "\n"); os.close(s); os.close(m)
for _ in range(600):
    if os.path.getsize("/tmp/tt-next"): break
    time.sleep(0.05)
path = open("/tmp/tt-next").read().strip()
try:
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK); os.write(fd, b"FAKE-REUSED")
    print("OK")
except OSError as e: print("ERR", errno.errorcode[e.errno])' >/tmp/tt-reuse 2>&1 &
	p=$!
	wait_for test -s /tmp/tt-mine || fail "no pty in the session: $(cat /tmp/tt-reuse)"
	sleep 1	# past the RCU grace period that frees the slave's inode
	tt_outside
	mine=$(cat /tmp/tt-mine)
	[ "$TT_PTS" = "$mine" ] || echo "the outside pty is $TT_PTS, the session's was $mine"
	echo $TT_PTS >/tmp/tt-next
	wait $p || true
	[ "$(cat /tmp/tt-reuse)" = "ERR EPERM" ] || fail "the next pty: $(tr "\n" " " </tmp/tt-reuse)"
	nothing_crossed
	tt_outside_stop
}

# /proc/PID/fd/N of the outside holder, and /proc/self/fd/N of a
# descriptor opened outside and inherited: both are a new open of the
# same tty inode
test_a_tty_reopened_through_proc_fd_is_refused() {
	tt_outside
	out=$(tt_user python3 -S $TT_PY open /proc/$TT_PID/fd/$TT_FD w FAKE-PROC)
	[ "$out" = "ERR EPERM" ] || [ "$out" = "ERR EACCES" ] || fail "/proc/PID/fd: $out"
	out=$(tt_user sh -c "python3 -S $TT_PY open /proc/self/fd/5 w FAKE-SELF" 5>$TT_PTS)
	[ "$out" = "ERR EPERM" ] || fail "/proc/self/fd: $out"
	out=$(tt_user sh -c "python3 -S $TT_PY open /dev/fd/5 r" 5<$TT_PTS)
	[ "$out" = "ERR EPERM" ] || fail "/dev/fd (read): $out"
	nothing_crossed
	event operation=open_write object=$TT_PTS verdict=deny rule.id=$TERMINAL_RULE
	tt_outside_stop
}

test_a_tty_passed_in_over_scm_rights_is_refused() {
	tt_outside
	expect "ERR EPERM" tt_user python3 -S $TT_PY recv /tmp/tt-fd.sock slave
	event operation=file_receive object=$TT_PTS verdict=deny rule.id=$TERMINAL_RULE
	# the master: the person's keyboard and screen
	expect "ERR EPERM" tt_user python3 -S $TT_PY recv /tmp/tt-fd.sock master
	event operation=file_receive object=/dev/ptmx verdict=deny rule.id=$TERMINAL_RULE
	nothing_crossed
	# outside, the same client gets the descriptor and writes
	as_user python3 -S $TT_PY recv /tmp/tt-fd.sock slave >/dev/null
	wait_for grep -q FAKE-REQUEST-FD /tmp/tt-got || fail "the probe cannot pass a descriptor"
	tt_outside_stop
}

# ---- by device, not by path ------------------------------------------------------

test_terminals_are_decided_by_device_not_path() {
	tt_outside
	rm -rf /srv/ttycopy && mkdir -p /srv/ttycopy && chmod 755 /srv/ttycopy
	# copies made outside the session (mknod is not the session's to do),
	# owned by the test user, in a directory the session reaches
	read -r ma mi < <(stat -c '%t %T' $TT_PTS)
	mknod /srv/ttycopy/pts c $((16#$ma)) $((16#$mi))
	mknod /srv/ttycopy/vt c 4 2
	chown $TUSER /srv/ttycopy/* && chmod 666 /srv/ttycopy/*
	expect "ERR EPERM" tt_user python3 -S $TT_PY open /srv/ttycopy/pts w FAKE-COPY
	event operation=open_write object=/srv/ttycopy/pts verdict=deny rule.id=$TERMINAL_RULE
	# the VT copy is a working terminal outside the session (where the
	# guest has VTs)
	out=$(as_user python3 -S $TT_PY open /srv/ttycopy/vt w x)
	echo "outside, the VT copy: $out"
	expect "ERR EPERM" tt_user python3 -S $TT_PY open /srv/ttycopy/vt w FAKE-VT
	event operation=open_write object=/srv/ttycopy/vt verdict=deny rule.id=$TERMINAL_RULE
	nothing_crossed
	tt_outside_stop
}

# root in a session passes every permission check: only the rule stops it
test_vts_the_console_and_screen_memory_are_refused() {
	local d devs=()
	for d in /dev/tty1 /dev/tty2 /dev/console /dev/ttyS1 /dev/vcs /dev/vcsa /dev/vcs1 /dev/vcsa1; do
		[ -c $d ] && devs+=($d)
	done
	[ ${#devs[@]} -ge 2 ] || fail "no VT or console device here: ${devs[*]}"
	# root's sessions, each opening every device in turn
	EACH_SESSION=in_root_session expect_each "ERR EPERM" $RT python3 -S $TT_PY open {} w x -- "${devs[@]}"
	EACH_SESSION=in_root_session expect_each "ERR EPERM" $RT python3 -S $TT_PY open {} r -- "${devs[@]}"
	# the screen memory by device: /dev/vcs may not exist here
	rm -rf /srv/ttycopy && mkdir -p /srv/ttycopy
	mknod /srv/ttycopy/vcs c 7 1 && mknod /srv/ttycopy/vcsa c 7 129
	mknod /srv/ttycopy/console c 5 1
	EACH_SESSION=in_root_session expect_each "ERR EPERM" $RT python3 -S $TT_PY open {} r -- \
		/srv/ttycopy/vcs /srv/ttycopy/vcsa /srv/ttycopy/console
	event operation=open_read object=/srv/ttycopy/vcsa verdict=deny rule.id=$TERMINAL_RULE
}

# ---- what stays allowed ------------------------------------------------------

test_a_session_uses_the_ptys_it_makes() {
	expect "OK" tt_user python3 -S $TT_PY own-pty
	out=$(tt_user script -q -e -c 'echo hi-from-script' /dev/null </dev/null 2>&1) ||
		fail "script in the session: $out"
	echo "$out" | grep -q hi-from-script || fail "script: $out"
	# and pushing keystrokes into it is still refused (protect.bpf.c)
	expect "ERR EPERM" tt_user $SBXT tiocsti
}

# `script` outside gives `bpfsbx run` a pty as its controlling terminal
test_a_session_uses_its_own_controlling_terminal() {
	tt_outside
	rm -f /tmp/tt-ts
	as_user script -q -e -c "$SBX run --policy $RT --project $PROJ -- sh -c '
		echo via-dev-tty >/dev/tty && echo via-own-pts >\$(tty) &&
		python3 -S $TT_PY open /dev/tty ioctl >/dev/null && echo via-ioctl-open >/dev/tty;
		python3 -S $TT_PY open $TT_PTS w FAKE-WITH-CTTY >/tmp/tt-other-pts'" \
		/tmp/tt-ts </dev/null >/dev/null 2>&1 || fail "script: $(cat /tmp/tt-ts)"
	grep -q via-dev-tty /tmp/tt-ts || fail "/dev/tty: $(cat /tmp/tt-ts)"
	grep -q via-own-pts /tmp/tt-ts || fail "its own /dev/pts/N: $(cat /tmp/tt-ts)"
	grep -q via-ioctl-open /tmp/tt-ts || fail "an ioctl open of /dev/tty: $(cat /tmp/tt-ts)"
	# a controlling terminal is no licence for another one
	[ "$(cat /tmp/tt-other-pts)" = "ERR EPERM" ] || fail "other pty: $(cat /tmp/tt-other-pts)"
	nothing_crossed
	tt_outside_stop
}

# a VT as the controlling terminal: that VT, no other
test_a_session_on_a_vt_uses_that_vt_and_no_other() {
	[ -c /dev/tty3 ] && [ -c /dev/tty4 ] || skip "no VTs in this guest"
	rm -f /tmp/tt-vt
	mkdir -p /root/rtproj $ROOT_HOME
	setsid sh -c "exec <>/dev/tty3 >&0 2>&0
		HOME=$ROOT_HOME $SBX run --policy $RT --project /root/rtproj -- sh -c '
			python3 -S $TT_PY open /dev/tty3 w own-vt; python3 -S $TT_PY open /dev/tty4 w x
		' >/tmp/tt-vt" || true
	[ "$(cat /tmp/tt-vt | tr '\n' ' ')" = "OK ERR EPERM " ] || fail "vt: $(cat /tmp/tt-vt)"
}

# ---- the approver's screen ---------------------------------------------------------

TMS=/tmp/tmux-$TUID/tt
tt_screen_has() { as_user tmux -S $TMS capture-pane -p -t watch | grep -q -- "$1"; }

# The pane's whole output also goes to a log (pipe-pane): watch redraws
# its screen every few hundred ms, so a capture alone could miss a write
# that did arrive.
test_a_session_cannot_draw_on_the_watch_screen() {
	command -v tmux >/dev/null || skip "tmux is not installed (make deps)"
	rm -rf /tmp/tmux-$TUID /tmp/tt-watch /tmp/tt-pane.log
	mkdir -m 700 /tmp/tmux-$TUID && chown $TUSER /tmp/tmux-$TUID
	mkdir -p /tmp/tt-watch/.sandbox/escalations/{pending,claimed,done,out}
	chown -R $TUSER /tmp/tt-watch
	as_user env TERM=xterm tmux -S $TMS new-session -d -s watch -x 120 -y 30 \
		"$SBX watch /tmp/tt-watch" 2>/tmp/tt-tmux.err || fail "tmux: $(cat /tmp/tt-tmux.err)"
	as_user tmux -S $TMS pipe-pane -o -t watch 'cat >>/tmp/tt-pane.log'
	wait_for tt_screen_has "bpfsbx watch" || fail "watch shows nothing"
	pane=$(as_user tmux -S $TMS display -p -t watch '#{pane_tty}')
	[ -c "$pane" ] || fail "no pane tty: '$pane'"
	expect "ERR EPERM" tt_user python3 -S $TT_PY open $pane w \
		$'\e[2J\e[HFAKE-REQUEST: approve rm -rf ~ [a]pprove'
	out=$(tt_user sh -c "printf 'FAKE-REQUEST-SH' >$pane" 2>&1) && fail "printf >pane: $out"
	sleep 0.5
	! tt_screen_has FAKE || fail "the fake request is on the screen"
	! grep -q FAKE /tmp/tt-pane.log 2>/dev/null || fail "the fake request reached the pane"
	event operation=open_write object=$pane verdict=deny rule.id=$TERMINAL_RULE
	# the same write from outside does reach the pane: the check can fail
	as_user python3 -S $TT_PY open $pane w OUTSIDE-WRITE >/dev/null
	wait_for grep -q OUTSIDE-WRITE /tmp/tt-pane.log || fail "the pane log sees no write at all"
	as_user tmux -S $TMS kill-server || true
}
