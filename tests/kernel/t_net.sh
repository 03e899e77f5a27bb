# Network: connect and sendmsg destinations, IPv4, IPv6, v4-mapped.

test_connect_denied_ipv4() {
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT connect 4 10.66.1.1 80
	event operation=connect object=10.66.1.1:80 verdict=deny
	# outside the session the same connect fails only for want of a route
	expect "ERR ENETUNREACH" as_user $SBXT connect 4 10.66.1.1 80
}

test_connect_denied_ipv6() {
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT connect 6 fd66::1 80
	event operation=connect "object=[fd66::1]:80"
}

test_connect_denied_v4_mapped() {
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT connect 6 ::ffff:10.66.1.1 80
}

test_connect_allowed_reaches_server() {
	$SBXT listen 4 127.0.0.1 7000 1 >/tmp/srv7000 2>&1 &
	wait_for grep -q LISTENING /tmp/srv7000 || fail "server did not start"
	expect "OK" in_session $POL/core.yaml $SBXT connect 4 127.0.0.1 7000
	wait_for grep -q ACCEPTED /tmp/srv7000 || fail "server saw no connection"
}

test_connect_denied_port_never_reaches_server() {
	$SBXT listen 4 127.0.0.1 7001 1 >/tmp/srv7001 2>&1 &
	srv=$!
	wait_for grep -q LISTENING /tmp/srv7001 || fail "server did not start"
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT connect 4 127.0.0.1 7001
	sleep 0.3
	grep -q ACCEPTED /tmp/srv7001 && fail "denied connection reached the server"
	# the same server is reachable from outside the session
	expect "OK" as_user $SBXT connect 4 127.0.0.1 7001
	wait $srv
}

test_udp_sendto_denied() {
	# (port 53 is DNS, which goes to the daemon's resolver: t_dns.sh)
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT sendto 4 10.66.1.1 54
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT sendto 6 fd66::53 54
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT sendto 6 ::ffff:10.66.0.9 54
	event operation=sendmsg object=10.66.1.1:54
	expect "OK" in_session $POL/core.yaml $SBXT sendto 4 127.0.0.1 9
}

test_udp_connect_denied() {
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT connect 4 10.66.1.1 54 udp
}

test_tcp_fastopen_denied() {
	# sendto(MSG_FASTOPEN) connects without security_socket_connect;
	# cgroup/connect4 refuses it, which the kernel runs for a fast open
	# too (pre_connect), on both tiers
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT fastopen 4 10.66.1.1 443
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT fastopen 6 ::ffff:10.66.1.1 443
	event operation=connect object=10.66.1.1:443
}

# A datagram socket remembers its last allowed destination (sbx_dcache):
# a stream to one peer is decided once. What it remembers must never
# outlive what decided it: another destination, a reload and a denied
# send on the same socket are each decided again.
test_datagram_stream_decided_once_and_the_socket_forgets_on_change() {
	rm -rf $PROJ/.sandbox
	cat >/tmp/udp-deny.yaml <<YAML
version: 1
extends: $POL/core.yaml
network:
  rules:
    - cidr: 127.0.0.1/32
      port: 7402
      verdict: deny
      reason: "test: reloaded"
YAML
	chmod 644 /tmp/udp-deny.yaml
	rm -f /tmp/go.*
	"$SBX" status --json >/tmp/st0.json
	in_session $POL/core.yaml $SBXT udp-seq 4 127.0.0.1,7402,50 @/tmp/go.1 \
		127.0.0.1,7403 127.0.0.1,7001 127.0.0.1,7402 @/tmp/go.2 127.0.0.1,7402 \
		>/tmp/udp-seq.out 2>&1 &
	bg=$!
	wait_for grep -q . /tmp/udp-seq.out || fail "no first result: $(cat /tmp/udp-seq.out)"
	"$SBX" status --json >/tmp/st1.json
	h0=$($SBXT json-get /tmp/st0.json stats.datagram_cache_hits)
	h1=$($SBXT json-get /tmp/st1.json stats.datagram_cache_hits)
	[ $((h1 - h0)) -ge 49 ] ||
		fail "50 datagrams to one peer: $((h1 - h0)) cache hits"
	touch /tmp/go.1
	wait_for sh -c '[ $(grep -c . /tmp/udp-seq.out) -ge 4 ]' || fail "steps: $(cat /tmp/udp-seq.out)"
	out=$(as_user "$SBX" reload --project $PROJ --policy /tmp/udp-deny.yaml 2>&1) || fail "reload: $out"
	touch /tmp/go.2
	wait $bg || true
	# 7402 x50, 7403, 7001 (denied by core.yaml), 7402 again, 7402 after the reload
	[ "$(tr '\n' ' ' </tmp/udp-seq.out)" = "OK OK ERR EPERM OK ERR EPERM " ] ||
		fail "results: $(tr '\n' ' ' </tmp/udp-seq.out)"
	event operation=sendmsg object=127.0.0.1:7001 verdict=deny
	event operation=sendmsg object=127.0.0.1:7402 verdict=deny
}

# Two threads send on one socket at once, one to an allowed destination
# (which the socket remembers) and one to a denied one: what the socket
# remembers is written under a sequence count and never read half-written.
test_datagram_cache_two_threads_never_mix_destinations() {
	out=$(in_session $POL/core.yaml $SBXT udp-race 127.0.0.1,7402 127.0.0.1,7001 5000)
	[ "$out" = "allowed 5000 denied 0" ] || fail "two threads on one socket: $out"
}

# The first datagram of a socket makes its storage in the kernel (whose
# port it is, sbx_sk_owner); two threads sending it at once both make it,
# and the one that loses the kernel's race must not fail its send.
test_first_datagram_of_two_threads_at_once_is_sent() {
	out=$(in_session $POL/core.yaml $SBXT udp-first 127.0.0.1,7402 1000)
	[ "$out" = "failed 0 of 2000" ] || fail "first datagrams sent at once: $out"
}
