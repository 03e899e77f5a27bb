# Events where fleets collect them: the systemd journal (a real
# systemd-journald, started here) and the Prometheus textfile.

journald_start() {
	[ -S /run/systemd/journal/socket ] && return 0
	[ -x /lib/systemd/systemd-journald ] || skip "systemd-journald is not installed"
	mkdir -p /run/systemd/journal /run/log/journal
	/lib/systemd/systemd-journald >/tmp/journald.log 2>&1 &
	wait_for test -S /run/systemd/journal/socket || fail "journald did not start: $(cat /tmp/journald.log)"
}

test_event_reaches_the_journal_with_its_fields() {
	journald_start
	in_session $POL/core.yaml "$SBXT" open $THOME/.ssh/id_rsa >/tmp/ops.out 2>&1 || true
	grep -q "ERR EPERM" /tmp/ops.out || fail "not denied: $(cat /tmp/ops.out)"
	event operation=open_read object=$THOME/.ssh/id_rsa
	for _ in $(seq 50); do
		journalctl --no-pager -o json SYSLOG_IDENTIFIER=bpfsbx SBX_OBJECT=$THOME/.ssh/id_rsa \
			>/tmp/ops.journal 2>&1
		[ -s /tmp/ops.journal ] && break
		sleep 0.1
	done
	python3 -S - /tmp/ops.journal <<'PY' || fail "journal entry: $(head -c 1500 /tmp/ops.journal)"
import json, sys
e = json.loads(open(sys.argv[1]).readline())
want = {"SBX_OPERATION": "open_read", "SBX_VERDICT": "deny", "SBX_COMM": "sbxtest",
        "PRIORITY": "4", "SYSLOG_IDENTIFIER": "bpfsbx"}
for k, v in want.items():
    assert e.get(k) == v, (k, e.get(k))
for k in ("SBX_SESSION", "SBX_RULE", "SBX_RULE_ID", "SBX_RULE_REASON", "SBX_PID", "SBX_UID",
          "MESSAGE", "MESSAGE_ID"):
    assert e.get(k), k
PY
}

test_metrics_textfile_parses_and_counts() {
	command -v promtool >/dev/null || skip "promtool (Debian package prometheus) is not installed"
	in_session $POL/core.yaml "$SBXT" open $THOME/.ssh/id_rsa >/dev/null 2>&1 || true
	# written once a second
	sleep 1.5
	f=$METRICS/bpfsbx.prom
	[ -s $f ] || fail "no $f: $(ls -la $METRICS)"
	[ "$(stat -c %a $f)" = 644 ] || fail "mode $(stat -c %a $f)"
	promtool check metrics <$f >/tmp/ops.lint 2>&1 || fail "promtool: $(cat /tmp/ops.lint)"
	for m in checks_total verdict_cache_hits_total denials_total asks_total events_lost_total \
		sessions pending_requests approval_latency_seconds_count; do
		grep -q "^bpfsbx_$m [0-9]" $f || fail "no bpfsbx_$m in: $(cat $f)"
	done
	d=$(sed -n 's/^bpfsbx_denials_total //p' $f)
	[ "$d" -ge 1 ] || fail "denials_total $d after a denial"
	c=$(sed -n 's/^bpfsbx_checks_total //p' $f)
	[ "$c" -ge 1 ] || fail "checks_total $c"
}

# A fleet's central collectors: a real denial in a session reaches
# systemd-journal-remote (by systemd-journal-upload from this guest's
# journald) and an OTLP/HTTP endpoint that decodes it with the
# OpenTelemetry project's definitions (tests/e2e/otlp-receiver.mjs).
timeout_test_denial_reaches_the_remote_journal_and_otlp=240
test_denial_reaches_the_remote_journal_and_otlp() {
	local sd=/lib/systemd rx=/tmp/ops-otlp.jsonl remote=/tmp/ops-remote pids=
	[ -x $sd/systemd-journal-remote ] && [ -x $sd/systemd-journal-upload ] ||
		skip "systemd-journal-remote is not installed (make deps)"
	[ -d "$ROOT/tests/e2e/node_modules/@opentelemetry/otlp-transformer" ] ||
		skip "tests/e2e/node_modules is missing (make e2e-deps)"
	journald_start
	rm -rf $rx* $remote /tmp/ops-otlp-queue
	mkdir -p $remote
	node "$ROOT/tests/e2e/otlp-receiver.mjs" 14318 $rx >/tmp/ops-rx.log 2>&1 &
	pids="$!"
	$sd/systemd-journal-remote --listen-http=127.0.0.1:19532 --output=$remote/remote.journal \
		--split-mode=none >/tmp/ops-remote.log 2>&1 &
	pids="$pids $!"
	# node starts slowly under TCG
	for _ in $(seq 600); do [ -e $rx.ready ] && break; sleep 0.1; done
	[ -e $rx.ready ] || { kill $pids; fail "the OTLP receiver did not start: $(cat /tmp/ops-rx.log)"; }
	daemon_stop
	DAEMON_ARGS="--otlp http://127.0.0.1:14318/v1/logs --otlp-queue /tmp/ops-otlp-queue" daemon_start
	in_session $POL/core.yaml "$SBXT" open $THOME/.ssh/id_rsa >/tmp/ops.out 2>&1 || true
	grep -q "ERR EPERM" /tmp/ops.out || { kill $pids; fail "not denied: $(cat /tmp/ops.out)"; }
	event operation=open_read object=$THOME/.ssh/id_rsa
	for _ in $(seq 100); do grep -q '"bpfsbx.verdict"' $rx 2>/dev/null && break; sleep 0.1; done
	$sd/systemd-journal-upload --url=http://127.0.0.1:19532 --merge --follow=no \
		--save-state=/tmp/ops-upload.state >/tmp/ops-upload.log 2>&1
	journalctl -D $remote -o json SBX_VERDICT=deny SBX_OBJECT=$THOME/.ssh/id_rsa \
		>/tmp/ops.remote 2>&1
	kill $pids 2>/dev/null
	daemon_stop
	daemon_start
	[ ! -s $rx.errors ] || fail "the OTLP receiver refused a request: $(head -c 1500 $rx.errors)"
	python3 -S - $rx /tmp/ops.remote "$THOME/.ssh/id_rsa" $TUSER <<'PY' ||
import json, sys
rx, remote, obj, user = sys.argv[1:]
recs = []
for line in open(rx):
    for rl in json.loads(line)["resourceLogs"]:
        res = {a["key"]: a["value"].get("stringValue") for a in rl["resource"]["attributes"]}
        for sl in rl["scopeLogs"]:
            for r in sl["logRecords"]:
                at = {a["key"]: list(a["value"].values())[0] for a in r["attributes"]}
                recs.append((res, at, r))
mine = [x for x in recs if x[1].get("bpfsbx.object") == obj and x[1].get("bpfsbx.verdict") == "deny"]
assert mine, ("no OTLP record of the denial", recs[:3])
res, at, r = mine[0]
assert res["user.name"] == user and res["bpfsbx.session"] and res["bpfsbx.project"] and res["host.name"], res
assert at["bpfsbx.operation"] == "open_read" and at["process.command"] == "sbxtest", at
assert r["severityNumber"] == 13, r
e = [json.loads(l) for l in open(remote) if l.startswith("{")]
assert e, ("not in the remote journal", open(remote).read()[:500])
assert e[0]["SBX_SESSION"] == res["bpfsbx.session"] and e[0]["SBX_COMM"] == "sbxtest", e[0]
assert e[0]["SYSLOG_IDENTIFIER"] == "bpfsbx" and e[0]["SBX_RULE_REASON"], e[0]
PY
		fail "$(head -c 800 /tmp/ops.remote) upload: $(tail -n 3 /tmp/ops-upload.log) otlp: $(head -c 800 $rx)"
}

flows_61_only
