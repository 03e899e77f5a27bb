# Loopback decided on the listener (issue 12, accomplices): a listener on
# 127.0.0.0/8 or ::1 that a process outside the session serves acts for
# whoever connects (a local proxy, an `ssh -D` port, a database), so the
# cgroup connect/sendmsg programs (bpf/dns.bpf.c) look the listener up and
# refuse it by network.loopback (ask by default) unless a rule names its
# port or a person granted it. Listeners of the session itself, and the
# daemon's, stay reachable; a hidden one (the dashboard's) never is.

LPOL=$POL/loopback.yaml
HTTP="/usr/bin/python3 -I -S -m http.server"

# an HTTP server outside every session: http_outside ADDR PORT
http_outside() {
	rm -f /tmp/http-$2.log
	as_user sh -c "cd /tmp && exec $HTTP --bind $1 $2" >/tmp/http-$2.log 2>&1 &
	echo $! >/tmp/http-$2.pid
	wait_for as_user $SBXT connect $([ "${1#*:}" = "$1" ] && echo 4 || echo 6) $1 $2 ||
		fail "http server on $1:$2 did not start"
	: >/tmp/http-$2.log	# the probe above is not a request
}

http_stop() { kill "$(cat /tmp/http-$1.pid)" 2>/dev/null || true; }

# a GET from inside a session; prints OK or ERR <errno name>
GET='import errno, socket, sys
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)
    s.sendall(b"GET /secret HTTP/1.0\r\n\r\n"); s.recv(100); print("OK")
except OSError as e:
    print("ERR " + errno.errorcode.get(e.errno, str(e.errno)))'

test_outside_http_server_on_127_is_refused() {
	http_outside 127.0.0.1 7300
	expect "ERR EPERM" in_session $LPOL /usr/bin/python3 -I -S -c "$GET" 127.0.0.1 7300
	event operation=connect object=127.0.0.1:7300 verdict=ask
	# another address of 127/8 and 0.0.0.0 reach the same listener: refused too
	http_stop 7300
	# a port of its own: the stopped server may still hold 7300
	http_outside 0.0.0.0 7310
	expect "ERR EPERM" in_session $LPOL /usr/bin/python3 -I -S -c "$GET" 127.1.2.3 7310
	expect "ERR EPERM" in_session $LPOL /usr/bin/python3 -I -S -c "$GET" 0.0.0.0 7310
	expect "ERR EPERM" in_session $LPOL $SBXT connect 6 ::ffff:127.0.0.1 7310
	sleep 0.3
	grep -q "GET /secret" /tmp/http-7310.log && fail "the outside server got a request"
	# outside the session it is an ordinary server
	expect "OK" as_user /usr/bin/python3 -I -S -c "$GET" 127.0.0.1 7310
	http_stop 7310
}

test_outside_http_server_on_ipv6_loopback_is_refused() {
	[ -e /proc/net/if_inet6 ] || skip "no IPv6 in this kernel"
	http_outside ::1 7302
	expect "ERR EPERM" in_session $LPOL /usr/bin/python3 -I -S -c "$GET" ::1 7302
	expect "ERR EPERM" in_session $LPOL $SBXT connect 6 :: 7302
	event operation=connect "object=[::1]:7302" verdict=ask
	sleep 0.3
	grep -q "GET /secret" /tmp/http-7302.log && fail "the outside server got a request"
	http_stop 7302
}

test_same_session_server_and_client_work() {
	# (sh -c has no job control: the server is stopped by its pid, or its
	# session would outlive the test)
	expect "OK" in_session $LPOL sh -c "cd /tmp && $HTTP --bind 127.0.0.1 7303 >/tmp/http-7303.log 2>&1 & srv=\$!
		for i in \$(seq 100); do $SBXT connect 4 127.0.0.1 7303 >/dev/null 2>&1 && break; sleep 0.1; done
		/usr/bin/python3 -I -S -c '$GET' 127.0.0.1 7303; kill \$srv"
	grep -q "GET /secret" /tmp/http-7303.log || fail "the session's own server got no request"
	# and over IPv6
	expect "OK" in_session $LPOL sh -c "$SBXT listen 6 ::1 7304 1 >/tmp/srv7304 2>&1 &
		for i in \$(seq 50); do grep -q LISTENING /tmp/srv7304 && break; sleep 0.1; done
		$SBXT connect 6 ::1 7304"
}

# Whose a loopback socket is, is recorded where it gets its port (bind,
# listen, an unconnected datagram), not at socket creation: a reply to a
# client's port the kernel picked, a listener bound by listen() alone, and
# a connected client all stay the session's own.
UDP_PAIR='import socket, sys
fam = socket.AF_INET6 if sys.argv[1] == "6" else socket.AF_INET
host, mode = sys.argv[2], sys.argv[3]
try:
    s = socket.socket(fam, socket.SOCK_DGRAM); s.bind((host, 0))
    c = socket.socket(fam, socket.SOCK_DGRAM)
    if mode == "connected":
        c.connect(s.getsockname()); c.send(b"ping")
    else:
        c.sendto(b"ping", s.getsockname())
    s.settimeout(3); c.settimeout(3)
    d, a = s.recvfrom(100); s.sendto(b"pong", a)
    print("OK" if c.recv(100) == b"pong" else "BAD")
except OSError as e:
    import errno; print("ERR " + errno.errorcode.get(e.errno, str(e.errno)))'

test_same_session_udp_reply_to_a_kernel_chosen_port() {
	local asked=$(event_count verdict=ask)
	expect "OK" in_session $LPOL /usr/bin/python3 -I -S -c "$UDP_PAIR" 4 127.0.0.1 sendto
	expect "OK" in_session $LPOL /usr/bin/python3 -I -S -c "$UDP_PAIR" 4 127.0.0.1 connected
	if [ -e /proc/net/if_inet6 ]; then
		expect "OK" in_session $LPOL /usr/bin/python3 -I -S -c "$UDP_PAIR" 6 ::1 sendto
	fi
	# a listener that listen() bound to a port of the kernel's choice
	expect "OK" in_session $LPOL /usr/bin/python3 -I -S -c 'import socket
l = socket.socket(); l.listen(1)
c = socket.create_connection(("127.0.0.1", l.getsockname()[1]), timeout=3)
print("OK")'
	sleep 0.3
	[ "$(event_count verdict=ask)" = "$asked" ] || fail "the session's own sockets were asked about"
}

test_udp_sendto_an_outside_loopback_listener_is_refused() {
	# the listener stays until told to stop, however slow the guest: a
	# listener that is gone is nobody's accomplice, and the connect passes
	rm -f /tmp/udp7305.stop
	as_user /usr/bin/python3 -I -S -c '
import os, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 7305))
print("LISTENING", flush=True); s.settimeout(0.5)
got = None
while got is None and not os.path.exists("/tmp/udp7305.stop"):
    try: got = s.recv(100)
    except OSError: pass
print("GOT %r" % got if got is not None else "NOTHING", flush=True)' >/tmp/udp7305 2>&1 &
	u=$!
	wait_for grep -q LISTENING /tmp/udp7305 || fail "udp listener"
	expect "ERR EPERM" in_session $LPOL $SBXT sendto 4 127.0.0.1 7305
	expect "ERR EPERM" in_session $LPOL $SBXT connect 4 127.0.0.1 7305 udp
	event operation=sendmsg object=127.0.0.1:7305
	touch /tmp/udp7305.stop
	wait $u || true
	grep -q NOTHING /tmp/udp7305 || fail "the outside UDP listener received: $(cat /tmp/udp7305)"
}

test_rule_naming_the_port_and_a_grant_allow_an_outside_listener() {
	rm -rf $PROJ/.sandbox
	$SBXT listen 4 127.0.0.1 7301 1 >/tmp/srv7301 2>&1 &
	wait_for grep -q LISTENING /tmp/srv7301 || fail "server"
	expect "OK" in_session $LPOL $SBXT connect 4 127.0.0.1 7301
	# asked, approved for the session, and the retry reaches it
	$SBXT listen 4 127.0.0.1 7306 1 >/tmp/srv7306 2>&1 &
	wait_for grep -q LISTENING /tmp/srv7306 || fail "server"
	rm -f /tmp/go.2 /tmp/l.*
	in_session $LPOL sh -c "$SBXT connect 4 127.0.0.1 7306 >/tmp/l.1
		while [ ! -e /tmp/go.2 ]; do sleep 0.1; done; $SBXT connect 4 127.0.0.1 7306 >/tmp/l.2" &
	st=$!
	wait_for test -s /tmp/l.1
	[ "$(cat /tmp/l.1)" = "ERR EPERM" ] || fail "first try: $(cat /tmp/l.1)"
	id=$(one_pending)
	approve $id session
	wait_for test -e $PROJ/.sandbox/escalations/applied/$id || fail "decision not applied"
	touch /tmp/go.2
	wait $st || true
	[ "$(cat /tmp/l.2)" = OK ] || fail "after approval: $(cat /tmp/l.2)"
	wait_for grep -q ACCEPTED /tmp/srv7306 || fail "server saw nothing"
}

test_hidden_listener_is_refused_whatever_the_policy() {
	rm -f /tmp/hidden.stop
	as_user /usr/bin/python3 -I -S -c '
import json, socket, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", 7301)); l.listen(4)
c = socket.socket(socket.AF_UNIX); c.connect("/run/bpfsbx/control.sock")
socket.send_fds(c, [json.dumps({"op": "protect_listener"}).encode() + b"\n"], [l.fileno()])
print(c.makefile().readline().strip(), flush=True)
import os
l.settimeout(0.5)
got = False
while not got and not os.path.exists("/tmp/hidden.stop"):
    try: l.accept(); got = True
    except OSError: pass
print("ACCEPTED" if got else "NOTHING", flush=True)' >/tmp/hidden 2>&1 &
	h=$!
	wait_for grep -q '"ok": *true' /tmp/hidden || fail "protect_listener: $(cat /tmp/hidden)"
	# 7301 is allowed by a rule that names it: hidden wins
	expect "ERR EPERM" in_session $LPOL $SBXT connect 4 127.0.0.1 7301
	event operation=connect object=127.0.0.1:7301 verdict=deny
	touch /tmp/hidden.stop
	wait $h || true
	grep -q NOTHING /tmp/hidden || fail "the hidden listener accepted a session's connection"
}

# A session socket remembers the last loopback destination whose listener
# was the session's own (sbx_dcache, beside its verdict), so that a stream to a server of the
# session skips the lookup. Whoever takes over the port after that must be
# looked up again (bpf/ports.bpf.c). The session's server and an outside
# socket share the port (SO_REUSEADDR on both; the kernel gives a datagram
# to the one bound last, or to the one connected to its sender). After the
# change the next datagram reaches the outside socket unless it is looked
# up again, so each case is judged by what the outside socket received.
LO_SESSION='import errno, os, socket, sys, time
fam = socket.AF_INET6 if sys.argv[1] == "6" else socket.AF_INET
host, port, how = sys.argv[2], int(sys.argv[3]), sys.argv[4]
def wait(path):
    for _ in range(600):
        if os.path.exists(path): return
        time.sleep(0.05)
    sys.exit("TIMEOUT waiting for " + path)
r = socket.socket(fam, socket.SOCK_DGRAM)
r.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if how != "outside_binds":
    wait("/tmp/lo.bound")	# the outside socket first: the server takes over
r.bind((host, port))
s = socket.socket(fam, socket.SOCK_DGRAM)
for _ in range(20): s.sendto(b"own", (host, port))
r.settimeout(3)
print("OWN %d" % sum(1 for _ in range(20) if r.recv(100) == b"own"), flush=True)
open("/tmp/lo.cached", "w").close()
if how == "outside_binds":
    open("/tmp/lo.go", "w").close(); wait("/tmp/lo.bound")
elif how == "close":
    r.close()
elif how == "connect":
    r.connect((host, 9))	# now it receives only from port 9
try:
    s.sendto(b"leak", (host, port)); print("SENT")
except OSError as e:
    print("ERR " + errno.errorcode.get(e.errno, str(e.errno)))'

LO_OUTSIDE='import os, socket, sys, time
fam = socket.AF_INET6 if sys.argv[1] == "6" else socket.AF_INET
host, port, when = sys.argv[2], int(sys.argv[3]), sys.argv[4]
x = socket.socket(fam, socket.SOCK_DGRAM)
x.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if sys.argv[5:] == ["dev"]:	# bound to lo: the kernel delivers to it first
    x.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"lo")
while when == "after" and not os.path.exists("/tmp/lo.go"): time.sleep(0.05)
x.bind((host, port)); open("/tmp/lo.bound", "w").close()
x.settimeout(0.3); got = []
while not os.path.exists("/tmp/lo.stop"):
    try: got.append(x.recv(100))
    except OSError: pass
print("GOT %d %r" % (len(got), got[:3]), flush=True)'

lo_hits() { "$SBX" status --json | "$SBXT" json-get /dev/stdin stats.loopback_cache_hits; }

# lo_takeover FAM HOST PORT HOW OBJECT [dev]: the session's server is
# remembered, then HOW hands its port to the outside socket (bound to lo
# with dev); the next datagram is refused
lo_takeover() {
	local fam=$1 host=$2 port=$3 how=$4 when=before h0 h1 out
	[ "$how" = outside_binds ] && when=after
	rm -f /tmp/lo.go /tmp/lo.bound /tmp/lo.stop /tmp/lo.cached /tmp/lo.out
	as_user /usr/bin/python3 -I -S -c "$LO_OUTSIDE" $fam $host $port $when ${6:-} >/tmp/lo.out 2>&1 &
	local x=$!
	h0=$(lo_hits)
	out=$(in_session $LPOL /usr/bin/python3 -I -S -c "$LO_SESSION" $fam $host $port $how 2>&1)
	h1=$(lo_hits)
	touch /tmp/lo.stop
	wait $x || true
	case $out in "OWN 20"*) ;; *) fail "$how ($host): the session's own server: $out" ;; esac
	# 19 of the 20 found without a lookup (the first one looked)
	[ $((h1 - h0)) -ge 19 ] || fail "$how ($host): $((h1 - h0)) datagrams found the server remembered"
	[ "${out##*$'\n'}" = "ERR EPERM" ] || fail "$how ($host): after the port changed hands: ${out##*$'\n'}"
	grep -q '^GOT 0 ' /tmp/lo.out || fail "$how ($host): the outside socket received: $(cat /tmp/lo.out)"
	event operation=sendmsg "object=$5" verdict=ask
}

test_remembered_own_udp_server_is_looked_up_again_when_its_port_changes_hands() {
	lo_takeover 4 127.0.0.1 7320 outside_binds 127.0.0.1:7320
	lo_takeover 4 127.0.0.1 7321 close 127.0.0.1:7321
	lo_takeover 4 127.0.0.1 7322 connect 127.0.0.1:7322
	if [ -e /proc/net/if_inet6 ]; then
		lo_takeover 6 ::1 7323 outside_binds "[::1]:7323"
		lo_takeover 6 ::1 7324 close "[::1]:7324"
	fi
}

# A socket bound to a device (SO_BINDTODEVICE, unprivileged since Linux
# 5.7) is not found by the listener lookup, which looks up as from no
# device, yet the kernel delivers loopback traffic to it when it is bound
# to lo: its port is written down where it gets one, or where it gets its
# device (bpf/ports.bpf.c), and decided as an outside listener's.
# (DEV_LISTEN KIND PORT ORDER: the listener, in lib.sh; t_idle.sh uses it too)

# dev_outside KIND PORT ORDER CMD...: an outside socket bound to lo; CMD in
# the session is refused and the socket gets nothing
dev_outside() {
	local kind=$1 port=$2 order=$3 x; shift 3
	rm -f /tmp/dev$port.stop
	as_user /usr/bin/python3 -I -S -c "$DEV_LISTEN" $kind $port $order >/tmp/dev$port 2>&1 &
	x=$!
	wait_for grep -q LISTENING /tmp/dev$port || fail "$kind listener on $port: $(cat /tmp/dev$port)"
	expect "ERR EPERM" in_session $LPOL "$@"
	event "object=127.0.0.1:$port" verdict=ask
	touch /tmp/dev$port.stop
	wait $x || true
	grep -q NOTHING /tmp/dev$port || fail "the outside $kind socket on $port bound to lo received"
}

test_outside_listener_bound_to_a_device_is_refused() {
	dev_outside tcp 7341 device_first $SBXT connect 4 127.0.0.1 7341
	dev_outside tcp 7342 device_after $SBXT connect 4 127.0.0.1 7342
	dev_outside udp 7343 device_first $SBXT sendto 4 127.0.0.1 7343
	dev_outside udp 7344 device_after $SBXT sendto 4 127.0.0.1 7344
	# it joins the port of the session's own server, which the lookup
	# still finds (both SO_REUSEADDR), after the server was remembered
	lo_takeover 4 127.0.0.1 7345 outside_binds 127.0.0.1:7345 dev
}

test_session_own_listener_bound_to_a_device_stays_reachable() {
	local asked=$(event_count verdict=ask)
	expect "OK" in_session $LPOL /usr/bin/python3 -I -S -c 'import socket
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"lo")
l.bind(("127.0.0.1", 7346)); l.listen(1)
c = socket.create_connection(("127.0.0.1", 7346), timeout=3); l.accept()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"lo"); u.bind(("127.0.0.1", 7346))
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"own", ("127.0.0.1", 7346))
u.settimeout(3); print("OK" if u.recv(10) == b"own" else "BAD")'
	sleep 0.3
	[ "$(event_count verdict=ask)" = "$asked" ] || fail "the session's own sockets bound to lo were asked about"
}
