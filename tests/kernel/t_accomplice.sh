# Accomplices (issue 12): a same-user server outside the session acts for
# whoever connects. Each test runs the real server outside, tries it from
# a session under agent-default (or a policy extending it), and judges by
# effect: the marker was not written, the listener got nothing, and an
# event names the socket.

AD=$ROOT/policy/shipped/agent-default.yaml
ACP=$POL/accomplice.yaml
ac_user() { in_session $AD "$@"; }

# a listener outside every session, as the test user: `ac_listen KIND ADDR`
# writes what it receives to /tmp/ac-got and prints LISTENING
ac_listen() {
	rm -f /tmp/ac-got /tmp/ac-listen.out
	as_user python3 -S -c "
import socket, sys
kind, addr = sys.argv[1], sys.argv[2]
if addr.startswith('@'): addr = '\0' + addr[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM if kind == 'dgram' else socket.SOCK_STREAM)
s.bind(addr)
if kind != 'dgram': s.listen(4)
print('LISTENING', flush=True)
while True:
    if kind == 'dgram':
        data = s.recv(100)
    else:
        c, _ = s.accept(); data = c.recv(100) or b'(connected)'; c.close()
    open('/tmp/ac-got', 'ab').write(data)
" "$1" "$2" >/tmp/ac-listen.out 2>&1 &
	echo $! >/tmp/ac-listen.pid
	wait_for grep -q LISTENING /tmp/ac-listen.out || fail "listener did not start: $(cat /tmp/ac-listen.out)"
}
ac_unlisten() { kill "$(cat /tmp/ac-listen.pid)" 2>/dev/null || true; }

# a client: connect (stream) or sendto (dgram) ADDR and send "leak"
AC_CLIENT='
import socket, sys, errno
kind, addr = sys.argv[1], sys.argv[2]
if addr.startswith("@"): addr = "\0" + addr[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM if kind == "dgram" else socket.SOCK_STREAM)
try:
    if kind == "dgram": s.sendto(b"leak", addr)
    else: s.connect(addr); s.send(b"leak")
    print("OK")
except OSError as e: print("ERR", errno.errorcode[e.errno])'

nothing_received() {
	sleep 0.3
	[ ! -s /tmp/ac-got ] || fail "the listener outside received: $(cat /tmp/ac-got)"
}

# ---- real servers ---------------------------------------------------------------

# the review's example: tmux run-shell in the user's server outside
test_tmux_server_outside_cannot_run_commands() {
	command -v tmux >/dev/null || skip "tmux is not installed (make deps)"
	rm -rf /tmp/tmux-$TUID /tmp/ac-k
	mkdir -m 700 /tmp/tmux-$TUID && chown $TUSER /tmp/tmux-$TUID
	as_user env TERM=xterm tmux -S /tmp/tmux-$TUID/default new-session -d -s outside 'sleep 120' \
		2>/tmp/ac-tmux-start.err || true
	wait_for test -S /tmp/tmux-$TUID/default || fail "no tmux server: $(cat /tmp/ac-tmux-start.err)"
	ac_user env TERM=xterm tmux -S /tmp/tmux-$TUID/default run-shell "cat $THOME/.ssh/id_rsa > /tmp/ac-k" \
		2>/tmp/ac-tmux.err && fail "tmux run-shell succeeded"
	sleep 0.5
	[ ! -e /tmp/ac-k ] || fail "the server outside ran the command: $(cat /tmp/ac-k)"
	# the other ways in: new-window, send-keys, and the server found through $TMUX
	ac_user tmux -S /tmp/tmux-$TUID/default new-window "touch /tmp/ac-k" 2>/dev/null && fail "new-window"
	ac_user tmux -S /tmp/tmux-$TUID/default send-keys -t outside "touch /tmp/ac-k" Enter \
		2>/dev/null && fail "send-keys"
	sleep 0.5
	[ ! -e /tmp/ac-k ] || fail "the server outside ran a command"
	event operation=unix_connect object=/tmp/tmux-$TUID/default verdict=deny
	as_user tmux -S /tmp/tmux-$TUID/default kill-server || true
}

# ssh-agent signs for whoever connects: asked, and usable once approved
test_ssh_agent_is_asked_then_approved() {
	rm -rf /tmp/ssh-ac /tmp/go.* /tmp/try.* && mkdir -p /tmp/ssh-ac && chown $TUSER /tmp/ssh-ac
	as_user ssh-agent -a /tmp/ssh-ac/agent.42 >/tmp/ac-agent.out
	wait_for test -S /tmp/ssh-ac/agent.42 || fail "no agent"
	# ssh-add -l exits 2 when it cannot reach the agent, 1 for an empty one
	ac_user sh -c "for k in 1 2; do
		[ \$k = 1 ] || while [ ! -e /tmp/go.\$k ]; do sleep 0.05; done
		SSH_AUTH_SOCK=/tmp/ssh-ac/agent.42 ssh-add -l >/dev/null 2>&1; echo \$? >/tmp/try.\$k
	done" &
	step=$!
	[ "$(tried 1)" = 2 ] || fail "ssh-add reached the agent before approval: exit $(tried 1)"
	event operation=unix_connect object=/tmp/ssh-ac/agent.42 verdict=ask
	id=$(one_pending)
	[ "$(qfield pending $id object.access)" = "connect" ] || fail "request access: $(qfield pending $id object.access)"
	approve "$id" session
	wait_for test -e $PROJ/.sandbox/escalations/applied/$id || fail "decision not applied"
	touch /tmp/go.2
	[ "$(tried 2)" = 1 ] || fail "after approval ssh-add still cannot reach the agent: exit $(tried 2)"
	wait $step || true
	pkill -u $TUSER ssh-agent || true
}

# a path socket served outside: stream connect and datagram sendto
test_path_socket_outside_refused_stream_and_dgram() {
	ac_listen stream /tmp/ac-stream.sock
	expect "ERR EPERM" ac_user python3 -S -c "$AC_CLIENT" stream /tmp/ac-stream.sock
	nothing_received
	event operation=unix_connect object=/tmp/ac-stream.sock verdict=deny
	ac_unlisten
	ac_listen dgram /tmp/ac-dgram.sock
	expect "ERR EPERM" ac_user python3 -S -c "$AC_CLIENT" dgram /tmp/ac-dgram.sock
	nothing_received
	event operation=unix_connect object=/tmp/ac-dgram.sock verdict=deny
	ac_unlisten
}

# abstract sockets have no file to check: decided on the listener and the name
test_abstract_socket_outside_refused() {
	ac_listen stream @sbx-ac-abstract
	expect "ERR EPERM" ac_user python3 -S -c "$AC_CLIENT" stream @sbx-ac-abstract
	nothing_received
	event operation=unix_connect object=@sbx-ac-abstract verdict=deny
	ac_unlisten
	ac_listen dgram @sbx-ac-abstract-dg
	expect "ERR EPERM" ac_user python3 -S -c "$AC_CLIENT" dgram @sbx-ac-abstract-dg
	nothing_received
	ac_unlisten
}

# socat and screen are other servers of the same kind
test_socat_and_screen_outside_refused() {
	command -v socat >/dev/null || skip "socat is not installed (make deps)"
	rm -f /tmp/ac-socat.sock /tmp/ac-k
	as_user socat UNIX-LISTEN:/tmp/ac-socat.sock,fork EXEC:"sh -c 'touch /tmp/ac-k'" &
	srv=$!
	wait_for test -S /tmp/ac-socat.sock || fail "no socat"
	ac_user socat -u /dev/null UNIX-CONNECT:/tmp/ac-socat.sock 2>/dev/null && fail "socat connected"
	sleep 0.3
	[ ! -e /tmp/ac-k ] || fail "the socat server ran its command"
	event operation=unix_connect object=/tmp/ac-socat.sock verdict=deny
	kill $srv 2>/dev/null || true
	if command -v screen >/dev/null; then
		rm -rf /tmp/ac-screen && mkdir -m 700 /tmp/ac-screen && chown $TUSER /tmp/ac-screen
		as_user env SCREENDIR=/tmp/ac-screen screen -dmS outside sleep 60
		wait_for sh -c 'ls /tmp/ac-screen | grep -q outside' || fail "no screen"
		ac_user env SCREENDIR=/tmp/ac-screen screen -S outside -X stuff "touch /tmp/ac-k
" 2>/dev/null || true
		sleep 0.5
		[ ! -e /tmp/ac-k ] || fail "screen outside ran a command"
		as_user env SCREENDIR=/tmp/ac-screen screen -S outside -X quit || true
	fi
}

# ---- what stays allowed -----------------------------------------------------------

# a dev server and its client in the same session; a socketpair
test_listener_in_the_same_session_allowed() {
	rm -f /tmp/ac-got /tmp/ac-dev.out /tmp/ac-dev.sock
	expect "OK" ac_user sh -c "
		python3 -S -c \"
import socket, os
s = socket.socket(socket.AF_UNIX); s.bind('/tmp/ac-dev.sock'); s.listen(1)
s2 = socket.socket(socket.AF_UNIX); s2.bind('\0sbx-ac-dev'); s2.listen(1)
print('LISTENING', flush=True)
for x in (s, s2):
    c, _ = x.accept(); open('/tmp/ac-got', 'ab').write(c.recv(10))
\" >/tmp/ac-dev.out &
		while ! grep -q LISTENING /tmp/ac-dev.out 2>/dev/null; do sleep 0.1; done;
		python3 -S -c '$AC_CLIENT' stream /tmp/ac-dev.sock >/dev/null;
		python3 -S -c '$AC_CLIENT' stream @sbx-ac-dev; wait"
	[ "$(cat /tmp/ac-got)" = "leakleak" ] || fail "the same-session server got '$(cat /tmp/ac-got)'"
	rm -f /tmp/ac-dev.sock
	expect "OK" ac_user python3 -S -c "
import socket
a, b = socket.socketpair(); a.send(b'x'); print('OK' if b.recv(1) == b'x' else 'BAD')"
}

# the journal socket is allowed by agent-default, with its reason
test_allowed_outside_socket_by_rule() {
	ac_listen dgram /tmp/ac-allowed.sock
	expect "OK" in_session $ACP python3 -S -c "$AC_CLIENT" dgram /tmp/ac-allowed.sock
	ac_unlisten
	ac_listen stream @sbx-ac-allowed-1
	if [ $TIER = landlock ] && [ "$(ll_abi)" -ge 6 ]; then
		# the rule lets it through, then Landlock's abstract-socket
		# scope (docs/FALLBACK.md) refuses every name bound outside
		expect "ERR EPERM" in_session $ACP python3 -S -c "$AC_CLIENT" stream @sbx-ac-allowed-1
	else
		expect "OK" in_session $ACP python3 -S -c "$AC_CLIENT" stream @sbx-ac-allowed-1
	fi
	ac_unlisten
	ac_listen stream @sbx-ac-other
	expect "ERR EPERM" in_session $ACP python3 -S -c "$AC_CLIENT" stream @sbx-ac-other
	ac_unlisten
}

# the outside's handles are not passed into a session
test_run_removes_accomplice_handles_from_the_environment() {
	out=$(as_user env SSH_AUTH_SOCK=/tmp/x TMUX=/tmp/y,1,0 DBUS_SESSION_BUS_ADDRESS=unix:path=/z \
		DISPLAY=:0 KEEPME=1 "$SBX" run --policy "$AD" --project "$PROJ" -- env)
	echo "$out" | grep -q "^KEEPME=1$" || fail "an ordinary variable was removed"
	for v in SSH_AUTH_SOCK TMUX DBUS_SESSION_BUS_ADDRESS DISPLAY; do
		echo "$out" | grep -q "^$v=" && fail "$v passed into the session"
	done
	out=$(as_user env SSH_AUTH_SOCK=/tmp/x DISPLAY=:0 "$SBX" run --policy "$ACP" --project "$PROJ" -- env)
	echo "$out" | grep -q "^DISPLAY=:0$" || fail "sandbox.keep_env did not keep DISPLAY"
	echo "$out" | grep -q "^SSH_AUTH_SOCK=" && fail "SSH_AUTH_SOCK passed into the session"
	true
}

# ---- the control socket --------------------------------------------------------------

# a connection made inside a session stays inside, whoever holds it later:
# the root harness takes the descriptor out with pidfd_getfd and sends reload
test_control_connection_from_a_session_stays_a_session_s() {
	rm -f /tmp/ac-ctl.out
	ac_user python3 -S -c "
import socket, time, os
s = socket.socket(socket.AF_UNIX); s.connect('/run/bpfsbx/control.sock')
print(os.getpid(), s.fileno(), flush=True); time.sleep(20)" >/tmp/ac-ctl.out &
	wait_for test -s /tmp/ac-ctl.out || fail "no client"
	read -r cpid cfd </tmp/ac-ctl.out
	out=$(python3 -S -c "
import ctypes, os, socket, sys, json
libc = ctypes.CDLL(None, use_errno=True)
pidfd = libc.syscall(434, int(sys.argv[1]), 0)          # pidfd_open
fd = libc.syscall(438, pidfd, int(sys.argv[2]), 0)       # pidfd_getfd
if fd < 0: print('getfd', ctypes.get_errno()); sys.exit()
s = socket.socket(fileno=fd)
s.send(json.dumps({'op': 'reload', 'session': 'x', 'policy_path': '/tmp/p.yaml'}).encode() + b'\n')
print(s.recv(4096).decode())" "$cpid" "$cfd")
	echo "$out" | grep -q "inside a session" || fail "reload over a session's connection: $out"
	kill "$cpid" 2>/dev/null || true
	# and from inside, only submit and status
	expect "OK" ac_user sh -c "'$SBX' status >/dev/null && echo OK"
	out=$(ac_user python3 -S -c "
import socket, json
s = socket.socket(socket.AF_UNIX); s.connect('/run/bpfsbx/control.sock')
s.send(json.dumps({'op': 'protect_listener'}).encode() + b'\n'); print(s.recv(4096).decode())")
	echo "$out" | grep -q "inside a session" || fail "protect_listener from a session: $out"
}
