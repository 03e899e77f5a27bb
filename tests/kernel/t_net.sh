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
	# sendto(MSG_FASTOPEN) connects without security_socket_connect
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT fastopen 4 10.66.1.1 443
	event operation=sendmsg object=10.66.1.1:443
}
