# Names (issue 14): the daemon is the sessions' resolver. Port-53 traffic
# of a session goes to it whatever address the program used; names decide;
# the answer's addresses are learned by that session alone, for their TTL
# and a grace period. The upstream is a python3-dnslib server on loopback
# (tests/kernel/dns/server.py) serving .test names that point at
# listeners on 10.99.0.0/24, added to lo.

DNSD=$ROOT/tests/kernel/dns
DPOL=$POL/dns.yaml
DNSLOG=/tmp/dns-upstream.log
# the DNS client (tests/kernel/dnsq.c): NAME [TYPE] [SERVER] [PORT] [tcp]
Q=$ROOT/build/dnsq

dns_up() {
	ip addr add 10.99.0.0/24 dev lo 2>/dev/null || true
	ip -6 addr add fd99::1/128 dev lo 2>/dev/null || true
	if ! [ -s /tmp/dns-upstream.pid ] || ! kill -0 "$(cat /tmp/dns-upstream.pid)" 2>/dev/null; then
		/usr/bin/python3 $DNSD/server.py 5300 $DNSLOG >/tmp/dns-upstream.out 2>&1 &
		echo $! >/tmp/dns-upstream.pid
		wait_for grep -q SERVING /tmp/dns-upstream.out || fail "the test DNS server did not start"
	fi
	: >$DNSLOG
}

# serve N connections on ADDR:8080 outside every session, log to /tmp/srv-ADDR
serve() {
	# a listener a failed test left behind would hold the port
	[ -s /tmp/srv-$1.pid ] && kill "$(cat /tmp/srv-$1.pid)" 2>/dev/null && sleep 0.2
	$SBXT listen 4 "$1" 8080 "${2:-1}" >/tmp/srv-$1 2>&1 &
	echo $! >/tmp/srv-$1.pid
	wait_for grep -q LISTENING /tmp/srv-$1 || fail "server on $1 did not start"
}

test_allowed_name_resolves_and_connects() {
	dns_up
	serve 10.99.0.1
	# before a lookup the address is nobody's: the default (ask) refuses it
	expect "ERR EPERM" in_session $DPOL $SBXT connect 4 10.99.0.1 8080
	expect "OK" in_session $DPOL sh -c "$Q ok.test A >/tmp/q.out && $SBXT connect 4 10.99.0.1 8080"
	grep -q "^NOERROR 10.99.0.1$" /tmp/q.out || fail "answer: $(cat /tmp/q.out)"
	wait_for grep -q ACCEPTED /tmp/srv-10.99.0.1 || fail "the server saw no connection"
	grep -q "^ok.test. A$" $DNSLOG || fail "the query did not reach the upstream"
	# the port rule came along with the name: another port is still asked
	expect "ERR EPERM" in_session $DPOL sh -c "$Q ok.test A >/dev/null && $SBXT connect 4 10.99.0.1 8081"
}

test_wildcard_covers_names_below_only() {
	dns_up
	serve 10.99.0.5
	expect "OK" in_session $DPOL sh -c "$Q X.Wild.Test A >/dev/null && $SBXT connect 4 10.99.0.5 8080"
	# "*.wild.test" is not wild.test itself: the default (ask) answers
	expect "REFUSED" in_session $DPOL $Q wild.test A
	grep -q "^wild.test. A$" $DNSLOG && fail "an asked name reached the upstream"
	$SBXT connect 4 10.99.0.5 8080 >/dev/null || true
}

test_denied_name_gets_nxdomain_and_no_connection() {
	dns_up
	expect "NXDOMAIN" in_session $DPOL $Q denied.test A
	event operation=dns name=denied.test verdict=deny
	grep -q "denied.test" $DNSLOG && fail "a denied name reached the upstream"
	expect "ERR EPERM" in_session $DPOL sh -c "$Q denied.test A >/dev/null; $SBXT connect 4 10.99.0.6 8080"
}

test_asked_name_escalated_by_name_then_retry_connects() {
	dns_up
	# (an earlier test's stepper leaves /tmp/try.1 behind: a stale answer)
	rm -rf $PROJ/.sandbox /tmp/try.* /tmp/go.2
	serve 10.99.0.7
	in_session $DPOL sh -c "$Q ask.test A >/tmp/try.1; while [ ! -e /tmp/go.2 ]; do sleep 0.1; done
		$Q ask.test A >/tmp/try.2; $SBXT connect 4 10.99.0.7 8080 >/tmp/try.3" &
	st=$!
	rm -f /tmp/go.2
	wait_for test -s /tmp/try.1 || fail "no first answer"
	[ "$(cat /tmp/try.1)" = REFUSED ] || fail "first try: $(cat /tmp/try.1)"
	id=$(one_pending)
	qfield pending $id kind | grep -qx host || fail "request kind: $(qfield pending $id kind)"
	qfield pending $id object.host | grep -qx ask.test || fail "the request does not name ask.test"
	grep -q "ask.test" $DNSLOG && fail "an asked name reached the upstream before approval"
	approve $id session
	wait_for test -e $PROJ/.sandbox/escalations/applied/$id || fail "decision not applied"
	touch /tmp/go.2
	wait $st || true
	grep -q "^NOERROR 10.99.0.7$" /tmp/try.2 || fail "retry after approval: $(cat /tmp/try.2)"
	[ "$(cat /tmp/try.3)" = OK ] || fail "connect after approval: $(cat /tmp/try.3)"
	wait_for grep -q ACCEPTED /tmp/srv-10.99.0.7 || fail "the server saw no connection"
}

test_program_that_ignores_resolv_conf_still_gets_the_daemon() {
	dns_up
	serve 10.99.0.1 3
	# any address on port 53, UDP or TCP, IPv4, IPv6 or v4-mapped, is the daemon
	expect "OK" in_session $DPOL sh -c "$Q ok.test A 198.51.100.53 53 >/tmp/q.1 &&
		$Q ok.test A 198.51.100.53 53 tcp >/tmp/q.2 && $Q ok.test A 8.8.8.8 >/tmp/q.3 &&
		$SBXT connect 4 10.99.0.1 8080"
	for k in 1 2 3; do
		grep -q "^NOERROR 10.99.0.1$" /tmp/q.$k || fail "query $k: $(cat /tmp/q.$k)"
	done
	if [ -e /proc/net/if_inet6 ]; then
		expect "NOERROR 10.99.0.1" in_session $DPOL $Q ok.test A 2001:db8::53
		expect "NOERROR 10.99.0.1" in_session $DPOL $Q ok.test A ::ffff:198.51.100.53
		expect "NOERROR 10.99.0.1" in_session $DPOL $Q ok.test A 2001:db8::53 53 tcp
	fi
	# glibc's stub checks where its answer came from: recvmsg shows the
	# address it asked, so getaddrinfo accepts the daemon's answer
	echo "nameserver 198.51.100.53" >/etc/resolv.conf
	in_session $DPOL getent ahostsv4 ok.test >/tmp/q.4 2>&1 || true
	head -n 1 /tmp/q.4 | grep -Eq '^10\.99\.0\.1 +STREAM ok\.test$' || fail "getaddrinfo: $(cat /tmp/q.4)"
	# the session reaches the upstream only through the daemon
	expect "ERR EPERM" in_session $DPOL $Q ok.test A 127.0.0.1 5300
	$SBXT connect 4 10.99.0.1 8080 >/dev/null; $SBXT connect 4 10.99.0.1 8080 >/dev/null || true
}

test_dot_mdns_doh_and_the_resolvers_own_address_are_denied() {
	dns_up
	expect "ERR EPERM" in_session $DPOL $SBXT connect 4 198.51.100.53 853
	event operation=connect object=198.51.100.53:853 verdict=deny
	expect "ERR EPERM" in_session $DPOL $SBXT sendto 4 198.51.100.53 853
	expect "ERR EPERM" in_session $DPOL $SBXT sendto 4 224.0.0.251 5353
	expect "ERR EPERM" in_session $DPOL $SBXT sendto 4 198.51.100.53 5355
	# DNS over HTTPS to a public resolver, by address
	expect "ERR EPERM" in_session $DPOL $SBXT connect 4 1.1.1.1 443
	expect "ERR EPERM" in_session $DPOL $SBXT connect 6 2606:4700:4700::1111 443
	event operation=connect object=1.1.1.1:443 verdict=deny
	# the resolvers' addresses, named directly on another port
	expect "ERR EPERM" in_session $DPOL $SBXT connect 4 127.53.1.1 5300
}

test_txt_tunnel_sends_nothing_upstream() {
	dns_up
	# 180 queries from one process (one python start each is minutes under
	# TCG): random data labels, as TXT, NULL and A, under a name no rule has
	in_session $DPOL /usr/bin/python3 -I -c '
import os, socket
from dnslib import DNSRecord, RCODE
for i in range(60):
    l = os.urandom(24).hex()
    for t in ("TXT", "NULL", "A"):
        q = DNSRecord.question(l + ".exfil.test", t)
        try:
            a = DNSRecord.parse(q.send("198.51.100.53", 53, timeout=3))
            print(RCODE[a.header.rcode])
        except socket.timeout:
            print("TIMEOUT")
        except OSError as e:
            print("ERR", e.errno)
' >/tmp/tunnel.out
	[ "$(grep -c . /tmp/tunnel.out)" = 180 ] || fail "$(grep -c . /tmp/tunnel.out) answers of 180"
	grep -q "exfil" $DNSLOG && fail "a query under exfil.test reached the upstream"
	grep -v "^REFUSED$" /tmp/tunnel.out | head -3 | grep . && fail "not refused: $(grep -v REFUSED /tmp/tunnel.out | head -3)"
	# and nothing was escalated for them: a person sees no tunnel
	[ -z "$(pending_ids)" ] || ! grep -ql exfil $PROJ/.sandbox/escalations/pending/*.json ||
		fail "a tunnel query became a request"
}

test_expired_address_refused_while_an_open_connection_lives() {
	dns_up
	$SBXT listen 4 10.99.0.8 8080 2 >/tmp/srv-10.99.0.8 2>&1 &
	wait_for grep -q LISTENING /tmp/srv-10.99.0.8 || fail "server"
	# TTL 1 s + grace 2 s: learned for 3 s
	in_session $DPOL /usr/bin/python3 -I -S -c '
import socket, subprocess, sys, time
out = subprocess.run(sys.argv[1:], capture_output=True, text=True).stdout.strip()
s = socket.create_connection(("10.99.0.8", 8080), timeout=3)
print("first", out, flush=True)
time.sleep(4.5)
try:
    socket.create_connection(("10.99.0.8", 8080), timeout=3)
    print("second OK")
except OSError as e:
    print("second", e.errno)
s.send(b"still here")   # the open connection keeps working
print("open OK")
' $Q short.test A >/tmp/ttl.out 2>&1 || true
	grep -q "^first NOERROR 10.99.0.8$" /tmp/ttl.out || fail "$(cat /tmp/ttl.out)"
	grep -q "^second 1$" /tmp/ttl.out || fail "after TTL and grace: $(cat /tmp/ttl.out)"
	grep -q "^open OK$" /tmp/ttl.out || fail "the open connection: $(cat /tmp/ttl.out)"
	$SBXT connect 4 10.99.0.8 8080 >/dev/null || true
}

# the same for datagrams, which a socket's remembered verdict must not carry
# past the answer's lifetime
test_datagrams_to_an_expired_address_refused_on_the_same_socket() {
	dns_up
	rm -f /tmp/go.udp
	in_session $DPOL sh -c "$Q short.test A >/tmp/q.out && exec $SBXT udp-seq 4 10.99.0.8,8080,20 \
		@/tmp/go.udp 10.99.0.8,8080" >/tmp/udp-ttl.out 2>&1 &
	bg=$!
	wait_for grep -q . /tmp/udp-ttl.out || fail "no first result: $(cat /tmp/udp-ttl.out /tmp/q.out)"
	grep -q "^NOERROR 10.99.0.8$" /tmp/q.out || fail "answer: $(cat /tmp/q.out)"
	sleep 4	# TTL 1 s + grace 2 s
	touch /tmp/go.udp
	wait $bg || true
	[ "$(tr '\n' ' ' </tmp/udp-ttl.out)" = "OK ERR EPERM " ] ||
		fail "before and after the TTL and grace: $(tr '\n' ' ' </tmp/udp-ttl.out)"
	event operation=sendmsg object=10.99.0.8:8080 verdict=ask
}

test_answer_that_changes_and_cname_chain_are_followed() {
	dns_up
	serve 10.99.0.2; serve 10.99.0.3; serve 10.99.0.4
	expect "OK" in_session $DPOL sh -c "$Q flip.test A >/tmp/f.1 && $Q flip.test A >/tmp/f.2 &&
		$SBXT connect 4 10.99.0.2 8080 && $SBXT connect 4 10.99.0.3 8080 &&
		$Q cname.test A >/tmp/f.3 && $SBXT connect 4 10.99.0.4 8080"
	[ "$(cat /tmp/f.1)" != "$(cat /tmp/f.2)" ] || fail "the answer did not change: $(cat /tmp/f.1)"
	grep -q "^NOERROR 10.99.0.4$" /tmp/f.3 || fail "CNAME chain: $(cat /tmp/f.3)"
	# the address behind the chain has the name in events and status
	expect "ERR EPERM" in_session $DPOL sh -c "$Q cname.test A >/dev/null && $SBXT connect 4 10.99.0.4 9"
	event operation=connect "object=10.99.0.4:9 (cname.test)" name=cname.test
}

test_two_sessions_do_not_share_what_they_learned() {
	dns_up
	serve 10.99.0.1
	rm -f /tmp/go.b
	in_session $DPOL sh -c "$Q ok.test A >/tmp/a.out; while [ ! -e /tmp/go.b ]; do sleep 0.1; done" &
	a=$!
	wait_for grep -q NOERROR /tmp/a.out || fail "session A: $(cat /tmp/a.out)"
	# A holds 10.99.0.1; B never looked it up
	expect "ERR EPERM" in_session $DPOL $SBXT connect 4 10.99.0.1 8080
	# status names the domain behind the address, in A's session only
	"$SBX" status >/tmp/st.out 2>&1
	grep -q "10.99.0.1  ok.test" /tmp/st.out || fail "status: $(grep -A3 learned /tmp/st.out)"
	touch /tmp/go.b
	wait $a || true
	$SBXT connect 4 10.99.0.1 8080 >/dev/null || true
}

# The daemon deletes a session's learned addresses when it ends by its
# table's rows (no walk of the map).
test_a_sessions_learned_addresses_leave_the_kernel_when_it_ends() {
	dns_up
	rm -f /tmp/l.out /tmp/l.cg /tmp/go.l
	in_session $DPOL sh -c "$SBXT cgroup >/tmp/l.cg; $Q ok.test A >/tmp/l.out
		while [ ! -e /tmp/go.l ]; do sleep 0.1; done" &
	bg=$!
	wait_for grep -q NOERROR /tmp/l.out || fail "lookup: $(cat /tmp/l.out)"
	entries_leave_with_the_session sbx_learned /tmp/l.cg /tmp/go.l $bg
}

test_daemon_killed_mid_query_leaks_nothing_and_resolves_after_restart() {
	dns_up
	serve 10.99.0.1
	serve 10.99.0.11
	rm -f /tmp/go.k /tmp/k.*
	# slow.test takes the upstream 4 s; the daemon dies while it waits, so
	# its address (10.99.0.11) must never open
	in_session $DPOL sh -c "$Q slow.test A >/tmp/k.1; $SBXT connect 4 10.99.0.11 8080 >/tmp/k.2
		while [ ! -e /tmp/go.k ]; do sleep 0.1; done
		$Q ok.test A >/tmp/k.3; $SBXT connect 4 10.99.0.1 8080 >/tmp/k.4" &
	st=$!
	wait_for grep -q "slow.test" $DNSLOG || fail "the query did not reach the upstream"
	kill -KILL "$(daemon_pid)"
	wait_for test -s /tmp/k.2 || fail "no result"
	grep -Eq "^(TIMEOUT|SERVFAIL)$" /tmp/k.1 || fail "mid-query: $(cat /tmp/k.1)"
	[ "$(cat /tmp/k.2)" = "ERR EPERM" ] || fail "connect while the daemon is gone: $(cat /tmp/k.2)"
	t0=$(date +%s%N)
	daemon_start
	touch /tmp/go.k
	wait $st || true
	grep -q "^NOERROR 10.99.0.1$" /tmp/k.3 || fail "after restart: $(cat /tmp/k.3)"
	[ "$(cat /tmp/k.4)" = OK ] || fail "connect after restart: $(cat /tmp/k.4)"
	echo "MEASURE: resolving again $((($(date +%s%N) - t0) / 1000000)) ms after the daemon was started again"
	$SBXT connect 4 10.99.0.11 8080 >/dev/null || true
}

test_bad_input_and_floods_leave_the_daemon_and_others_alone() {
	dns_up
	# malformed messages, an over-long name, a compression loop, a response
	in_session $DPOL /usr/bin/python3 -I -S -c '
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.3)
hdr = lambda qd, flags=0x0100: struct.pack(">HHHHHH", 0x1234, flags, qd, 0, 0, 0)
bad = [b"", b"\x00", b"\xff" * 11, hdr(1), hdr(1) + b"\xc0\x0c\x00\x01\x00\x01",
       hdr(1) + (b"\x3f" + b"a" * 63) * 5 + b"\x00\x00\x01\x00\x01",
       hdr(2) + b"\x02ok\x04test\x00\x00\x01\x00\x01",
       hdr(1, 0x8180) + b"\x02ok\x04test\x00\x00\x01\x00\x01",
       bytes(range(256)) * 4]
for b in bad:
    s.sendto(b, ("198.51.100.53", 53))
    try: s.recv(4096)
    except OSError: pass
t = socket.create_connection(("198.51.100.53", 53), timeout=1)
t.send(b"\xff\xff" + b"x" * 100)   # announces 65535 bytes, sends 100, hangs up
t.close()
print("sent")
'
	# a flood: 10,000 queries as fast as one session can send them
	in_session $DPOL /usr/bin/python3 -I -S -c '
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setblocking(False)
q = struct.pack(">HHHHHH", 7, 0x0100, 1, 0, 0, 0) + b"\x02ok\x04test\x00\x00\x01\x00\x01"
for i in range(10000):
    try: s.sendto(q, ("198.51.100.53", 53))
    except BlockingIOError: pass
print("flooded", flush=True)
import time; time.sleep(6)
' >/tmp/flood.out 2>&1 &
	fl=$!
	# meanwhile another session resolves
	expect "NOERROR 10.99.0.1" in_session $DPOL $Q ok.test A
	wait_for grep -q flooded /tmp/flood.out || fail "flood: $(cat /tmp/flood.out)"
	kill -0 "$(daemon_pid)" || fail "the daemon died"
	"$SBX" status >/tmp/st.out 2>&1 || fail "status: $(cat /tmp/st.out)"
	# the flood's drops are counted, not silent
	grep -Eq "[1-9][0-9]* dropped by the rate limit" /tmp/st.out || fail "no drops counted: $(grep dns /tmp/st.out)"
	expect "NOERROR 10.99.0.1" in_session $DPOL $Q ok.test A
	wait $fl || true
}

# the resolver's handling of bad input and floods is the daemon's own code,
# the same on every kernel: run by the 6.12 guests (6.1 runs every test
# whose kernel step is the session's sockets and the learned addresses)
on_61_only "the resolver's input handling, user-space code the same on every kernel: run by the 6.12 guests" \
	allowed_name_resolves_and_connects wildcard_covers_names_below_only \
	denied_name_gets_nxdomain_and_no_connection \
	asked_name_escalated_by_name_then_retry_connects \
	program_that_ignores_resolv_conf_still_gets_the_daemon \
	dot_mdns_doh_and_the_resolvers_own_address_are_denied txt_tunnel_sends_nothing_upstream \
	expired_address_refused_while_an_open_connection_lives \
	datagrams_to_an_expired_address_refused_on_the_same_socket \
	answer_that_changes_and_cname_chain_are_followed \
	two_sessions_do_not_share_what_they_learned \
	a_sessions_learned_addresses_leave_the_kernel_when_it_ends \
	daemon_killed_mid_query_leaks_nothing_and_resolves_after_restart
