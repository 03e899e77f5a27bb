# bpfsbx dashboard against the real kernel: a session cannot reach the
# page (the daemon hides its listening socket, protect_listener), and a
# person's decision on the page lets the session's retry succeed, over the
# API and in a real browser (headless Chromium, tests/e2e/live-dashboard.mjs).
# The page's own tests against a queue fixture are tests/e2e/test-dashboard.mjs.

DASH=/tmp/sbx-dash
DASH_POL=$POL/dashboard.yaml

# the browser test starts Chromium under QEMU's software emulation: minutes
timeout_test_live_session_in_chromium_approve_click_makes_the_retry_succeed=900

dash_fixture() {
	dash_stop
	rm -rf $DASH $PROJ/.sandbox $THOME/.aws
	mkdir -p $DASH $THOME/.aws
	echo "AKIA-TEST" >$THOME/.aws/credentials
	chown -R $TUSER:$TUSER $DASH $THOME/.aws
	# the dashboard serves this queue: the user's, as for bpfsbx watch
	as_user mkdir -p $PROJ/.sandbox
	# uconnect.py PATH: connect to a unix socket; OK or ERR ERRNO-NAME
	cat >$DASH/uconnect.py <<'EOF'
import errno, socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print("OK")
except OSError as e:
    print("ERR", errno.errorcode[e.errno])
EOF
	chmod 644 $DASH/uconnect.py
}

# dash_start [ARGS...]: the test user's dashboard on $PROJ, outside every
# session; sets DASH_PID, DASH_TOKEN, DASH_URL (and DASH_PORT for TCP)
dash_start() {
	as_user "$SBX" dashboard $PROJ --token-file $DASH/token.json "$@" >$DASH/out 2>&1 &
	DASH_PID=$!
	echo $DASH_PID >/tmp/sbx-dash.pid	# for dash_stop after a failed test
	for _ in $(seq 300); do
		[ -s $DASH/token.json ] && break
		kill -0 $DASH_PID 2>/dev/null || fail "the dashboard exited: $(cat $DASH/out)"
		sleep 0.1
	done
	[ -s $DASH/token.json ] || fail "the dashboard wrote no token file: $(cat $DASH/out)"
	[ "$(stat -c %a $DASH/token.json)" = 600 ] || fail "token file mode $(stat -c %a $DASH/token.json)"
	DASH_TOKEN=$("$SBXT" json-get $DASH/token.json token)
	DASH_URL=$("$SBXT" json-get $DASH/token.json url)
	DASH_PORT=$(echo "$DASH_URL" | sed -n 's|^http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p')
	grep -q "the kernel refuses every session's connect" $DASH/out ||
		fail "the daemon did not protect the dashboard: $(cat $DASH/out)"
}

dash_stop() {
	local p
	p=$(cat /tmp/sbx-dash.pid 2>/dev/null) || return 0
	kill "$p" 2>/dev/null && wait_gone "$p"
	rm -f /tmp/sbx-dash.pid
}

# api [CURL ARGS...] PATH: the HTTP status; the body in $DASH/body
api() {
	local p=${*: -1} args=("${@:1:$#-1}")
	if [ -n "${DASH_SOCK:-}" ]; then
		curl -s -m 20 --unix-socket "$DASH_SOCK" -o $DASH/body -w '%{http_code}' \
			-H "Authorization: Bearer $DASH_TOKEN" "${args[@]}" "http://localhost:8080$p"
	else
		curl -s -m 20 -o $DASH/body -w '%{http_code}' \
			-H "Authorization: Bearer $DASH_TOKEN" "${args[@]}" "http://127.0.0.1:$DASH_PORT$p"
	fi
}

# a decision the way the page makes it: token, CSRF token, its own Origin
api_decide() {
	local id=$1 verb=$2 body=$3 csrf
	[ "$(api /api/info)" = 200 ] || fail "GET /api/info: $(cat $DASH/body)"
	csrf=$(python3 -S -c 'import json,sys; print(json.load(open(sys.argv[1]))["csrf"])' $DASH/body)
	api -X POST -H "X-CSRF-Token: $csrf" -H 'Content-Type: application/json' \
		-H "Origin: http://127.0.0.1:$DASH_PORT" --data "$body" "/api/requests/$id/$verb"
}

# the first pending request on the API, and how long after its creation
# (its id carries the time) it was there: "ID MS"
api_first_pending() {
	python3 -S - "$DASH_PORT" "$DASH_TOKEN" <<'EOF'
import json, sys, time, urllib.request
from datetime import datetime, timezone
port, token = sys.argv[1], sys.argv[2]
req = urllib.request.Request(f"http://127.0.0.1:{port}/api/requests?state=pending",
                             headers={"Authorization": "Bearer " + token})
t_end = time.time() + 20
while time.time() < t_end:
    with urllib.request.urlopen(req, timeout=10) as r:
        items = json.load(r)["requests"]
    if items:
        rid = items[0]["request"]["id"]
        made = datetime.strptime(rid.split("-")[0], "%Y%m%dT%H%M%S.%fZ").replace(tzinfo=timezone.utc)
        print(rid, int((time.time() - made.timestamp()) * 1000))
        sys.exit(0)
    time.sleep(0.02)
print("none 0")
EOF
}

teardown_file() {
	dash_stop
	rm -rf $DASH
}

# The dashboard on a unix socket (for ssh -L): the daemon marks its
# listening socket hidden, and the kernel refuses a session's connect to
# it even where the policy allows every socket in that folder. A second
# listener in the same folder shows that the policy alone would allow it.
test_unix_socket_dashboard_is_refused_to_sessions_in_the_kernel() {
	dash_fixture
	DASH_SOCK=$DASH/dash.sock
	dash_start --socket $DASH_SOCK
	[ "$(stat -c '%a %U' $DASH_SOCK)" = "600 $TUSER" ] || fail "socket: $(stat -c '%a %U' $DASH_SOCK)"
	as_user python3 -S -c "import socket,time; s=socket.socket(socket.AF_UNIX); s.bind('$DASH/other.sock'); s.listen(4); time.sleep(60)" &
	other=$!
	wait_for test -S $DASH/other.sock || fail "no second listener"
	# outside every session the same user reaches the page
	[ "$(api /api/info)" = 200 ] || fail "outside a session: $(cat $DASH/body)"
	grep -q '"kernel_protected":true' $DASH/body || fail "/api/info: $(cat $DASH/body)"
	expect "OK" in_session $DASH_POL python3 -S $DASH/uconnect.py $DASH/other.sock
	expect "ERR EPERM" in_session $DASH_POL python3 -S $DASH/uconnect.py $DASH_SOCK
	# refused by the hidden mark (built-in listener-hidden), not by a rule
	event operation=unix_connect verdict=deny rule.id=$((0xffff0000 + 14))
	# curl inside the session gets no answer at all, not a 403
	code=$(in_session $DASH_POL curl -s -m 10 -o /dev/null -w '%{http_code}' --unix-socket $DASH_SOCK \
		-H "Authorization: Bearer $DASH_TOKEN" http://localhost/api/info || true)
	[ "$code" = 000 ] || fail "curl in a session got HTTP $code"
	kill $other 2>/dev/null || true
	dash_stop
	unset DASH_SOCK
}

# The dashboard on 127.0.0.1: a session may reach other loopback
# listeners (the policy allows every address), but not the page. The
# kernel finds the listener behind a loopback address with the cgroup
# connect4/6 programs (issue 14's names work); without them this test says
# so and skips.
test_tcp_dashboard_is_refused_to_sessions_in_the_kernel() {
	dash_fixture
	dash_start
	[ -n "$DASH_PORT" ] || fail "no port in $DASH_URL"
	$SBXT listen 4 127.0.0.1 47811 1 >$DASH/listen.out 2>&1 &
	lis=$!
	wait_for grep -q LISTENING $DASH/listen.out || fail "no second listener"
	expect "OK" in_session $DASH_POL $SBXT connect 4 127.0.0.1 47811
	[ "$(api /api/info)" = 200 ] || fail "outside a session: $(cat $DASH/body)"
	if ! bpftool cgroup tree 2>/dev/null | grep -E 'connect4' | grep -q 'sbx_'; then
		kill $lis 2>/dev/null || true
		dash_stop
		skip "no bpfsbx cgroup/connect4 program is attached (the loopback check comes with issue 14): a session reaches the TCP dashboard; only the token keeps it out"
	fi
	got=$(in_session $DASH_POL $SBXT connect 4 127.0.0.1 $DASH_PORT | tail -n 1)
	case $got in
	"ERR EPERM" | "ERR ECONNREFUSED") ;;
	*) fail "a session's connect to the TCP dashboard: '$got'" ;;
	esac
	got=$(in_session $DASH_POL $SBXT connect 6 ::ffff:127.0.0.1 $DASH_PORT | tail -n 1)
	case $got in
	"ERR EPERM" | "ERR ECONNREFUSED" | "ERR ENETUNREACH" | "ERR EAFNOSUPPORT") ;;
	*) fail "a session's connect to the TCP dashboard as ::ffff:127.0.0.1: '$got'" ;;
	esac
	kill $lis 2>/dev/null || true
	dash_stop
}

# The loop of the issue over HTTP: a session's ask is on the API within a
# second of its creation, a decision made there (token, CSRF, own Origin)
# is applied by the daemon, and the session's retry succeeds. A foreign
# Origin or no token decides nothing.
test_live_session_request_on_the_api_and_approval_lets_the_retry_succeed() {
	dash_fixture
	dash_start
	stepper $DASH_POL $THOME/.aws/credentials 2
	[ "$(tried 1)" = "ERR EPERM" ] || fail "first try: $(tried 1)"
	read -r id ms < <(api_first_pending)
	[ "$id" != none ] || fail "no pending request on the API (queue: $(pending_ids))"
	echo "# dashboard (VM): the session's request was on the API ${ms} ms after it was made"
	# no timed assertion here: guest time under TCG says nothing about a
	# real machine; tests/e2e/test-dashboard.mjs holds the 1-second bar on
	# the host, and this test shows the request arrives at all
	st=$(curl -s -m 20 -o $DASH/body -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		--data '{"scope":"once"}' "http://127.0.0.1:$DASH_PORT/api/requests/$id/approve")
	[ "$st" = 401 ] || fail "without the token: $st"
	st=$(api -X POST -H 'Content-Type: application/json' -H 'Origin: http://evil.example' \
		--data '{"scope":"once"}' "/api/requests/$id/approve")
	[ "$st" = 403 ] || fail "foreign Origin: $st"
	[ -e $PROJ/.sandbox/escalations/pending/$id.json ] || fail "a refused call decided"
	st=$(api_decide $id approve '{"scope":"once"}')
	[ "$st" = 200 ] || fail "approve: $st $(cat $DASH/body)"
	wait_for test -e $PROJ/.sandbox/escalations/applied/$id || fail "the daemon did not apply it"
	touch /tmp/go.2
	[ "$(tried 2)" = "OK" ] || fail "retry after the page's approval: $(tried 2)"
	st=$(api_decide $id deny '{}')
	[ "$st" = 409 ] || fail "a second decision: $st"
	[ "$(qfield done $id decision.verdict)" = approve ] || fail "the decision changed"
	wait $STEPPER || true
	dash_stop
}

# The same loop in a real browser: Chromium has the page open before the
# session asks; the card appears, a click on "Approve once" decides, and
# the session's retry succeeds.
test_live_session_in_chromium_approve_click_makes_the_retry_succeed() {
	# Chromium under TCG takes minutes per page and times out under load;
	# the click-to-approve loop runs on the host (tests/e2e/test-dashboard.mjs)
	# and over the API here. SBX_VM_BROWSER=1 runs it in the guest too.
	[ "${SBX_VM_BROWSER:-0}" = 1 ] || skip "the browser in the guest is opt-in (SBX_VM_BROWSER=1): minutes per page under TCG"
	[ -x /usr/bin/chromium ] || fail "chromium is not installed (make deps installs it)"
	[ -d $ROOT/tests/e2e/node_modules/playwright-core ] || fail "tests/e2e/node_modules is missing (make deps runs npm ci)"
	dash_fixture
	dash_start
	shots=-
	[ -n "${DASH_SHOTS:-}" ] && [ -d "$DASH_SHOTS" ] && shots=$DASH_SHOTS
	as_user node $ROOT/tests/e2e/live-dashboard.mjs $DASH/token.json $shots >$DASH/browser.out 2>&1 &
	br=$!
	for _ in $(seq 6000); do
		grep -q '^READY' $DASH/browser.out && break
		kill -0 $br 2>/dev/null || fail "the browser gave up: $(tail -n 5 $DASH/browser.out)"
		sleep 0.1
	done
	grep -q '^READY' $DASH/browser.out || fail "the page did not load in 600 s"
	stepper $DASH_POL $THOME/.aws/credentials 2
	[ "$(tried 1)" = "ERR EPERM" ] || fail "first try: $(tried 1)"
	id=$(one_pending)
	for _ in $(seq 3000); do
		grep -q '^CLICKED\|^ERROR' $DASH/browser.out && break
		sleep 0.1
	done
	grep -q "^CLICKED $id" $DASH/browser.out || fail "no click on $id: $(tail -n 5 $DASH/browser.out)"
	ms=$(sed -n "s/^SEEN $id //p" $DASH/browser.out)
	echo "# dashboard (VM, Chromium under TCG): the card was on the page at most ${ms} ms after the request was made"
	[ "$(qfield done $id decision.verdict)" = approve ] || fail "decision: $(qfield done $id decision.verdict)"
	[ "$(qfield done $id decision.scope)" = once ] || fail "scope: $(qfield done $id decision.scope)"
	wait_for test -e $PROJ/.sandbox/escalations/applied/$id || fail "the daemon did not apply it"
	touch /tmp/go.2
	[ "$(tried 2)" = "OK" ] || fail "retry after the click: $(tried 2)"
	wait $br || fail "the browser script: $(tail -n 3 $DASH/browser.out)"
	wait $STEPPER || true
	dash_stop
}

flows_61_only unix_socket_dashboard_is_refused_to_sessions_in_the_kernel \
	tcp_dashboard_is_refused_to_sessions_in_the_kernel
