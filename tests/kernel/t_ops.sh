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
	python3 - /tmp/ops.journal <<'PY' || fail "journal entry: $(head -c 1500 /tmp/ops.journal)"
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
