# The daemon: enforcement outlives it, a new one adopts, bad input.
# (runs last: it stops and restarts the daemon)

test_sigkill_daemon_session_stays_confined() {
	local from
	from=$(($(wc -l <$DLOG) + 1))
	rm -f /tmp/killed /tmp/restarted /tmp/counted /tmp/after-kill /tmp/after-restart
	# steps by marker files, not sleeps: a slow guest must not race them
	# (the session lives until the adopted count has been read)
	in_session $POL/core.yaml sh -c "while [ ! -e /tmp/killed ]; do sleep 0.1; done
		$SBXT open $THOME/.ssh/id_rsa >/tmp/after-kill
		while [ ! -e /tmp/restarted ]; do sleep 0.1; done
		$SBXT open $THOME/.ssh/id_rsa >/tmp/after-restart
		while [ ! -e /tmp/counted ]; do sleep 0.1; done" &
	bg=$!
	wait_for sh -c "[ \"\$($SBX status | sed -n 's/^sessions: //p')\" = 1 ]" || fail "no session"
	kill -9 "$(daemon_pid)"; wait_gone "$(daemon_pid)" || fail "daemon did not die"
	rm -f /tmp/sbx-daemon.pid
	touch /tmp/killed
	wait_for test -s /tmp/after-kill || fail "no result"
	grep -q "ERR EPERM" /tmp/after-kill || fail "unconfined without the daemon: $(cat /tmp/after-kill)"
	daemon_start
	touch /tmp/restarted
	grep -q "adopted session" $DLOG || fail "restarted daemon did not adopt: $(tail -n 3 $DLOG)"
	# the policies' shared state files are read with their sessions, not as sessions
	! tail -n +$from $DLOG | grep "unreadable session state" || fail "adoption misread a state file"
	[ "$($SBX status | sed -n 's/^sessions: //p')" = 1 ] || fail "status: $($SBX status)"
	touch /tmp/counted
	wait $bg || true
	grep -q "ERR EPERM" /tmp/after-restart || fail "after restart: $(cat /tmp/after-restart)"
	# the adopted session's denial reached the new daemon
	event operation=open_read object=$THOME/.ssh/id_rsa comm=sbxtest
	wait_for sh -c "[ \"\$($SBX status | sed -n 's/^sessions: //p')\" = 0 ]" || fail "adopted session not cleaned up"
}

# A session whose saved state a new daemon cannot read is still in the
# kernel: its policy's rules stay (swept, it would be decided by the
# defaults alone, a credential's deny gone)
test_a_session_whose_state_is_unreadable_keeps_its_rules() {
	local bg f
	rm -rf /tmp/restarted /tmp/after-restart /tmp/kept-state
	in_session $POL/core.yaml sh -c "while [ ! -e /tmp/restarted ]; do sleep 0.1; done
		$SBXT open $THOME/.ssh/id_rsa >/tmp/after-restart" &
	bg=$!
	wait_for sh -c "[ \"\$($SBX status | sed -n 's/^sessions: //p')\" = 1 ]" || fail "no session"
	daemon_stop
	mkdir /tmp/kept-state
	for f in /run/bpfsbx/sessions/*.json; do
		case ${f##*/} in policy-*) continue ;; esac
		cp -p "$f" /tmp/kept-state/ && echo '{"name": ' >"$f"
	done
	daemon_start
	grep -q "ignoring unreadable session state" $DLOG || fail "no state was unreadable"
	touch /tmp/restarted
	wait $bg || true
	grep -q "ERR EPERM" /tmp/after-restart || fail "its rules were swept: $(cat /tmp/after-restart)"
	# its state back, for the daemon to end it as any other
	daemon_stop
	cp -p /tmp/kept-state/*.json /run/bpfsbx/sessions/
	daemon_start
	wait_for sh -c "[ \"\$($SBX status | sed -n 's/^sessions: //p')\" = 0 ]" || fail "the session was not cleaned up"
	[ ! -e "$(ls -d /sys/fs/cgroup/bpfsbx/2* 2>/dev/null | head -n 1)" ] ||
		fail "its cgroup is left: $(ls /sys/fs/cgroup/bpfsbx)"
}

test_sigterm_leaves_enforcement_pinned() {
	p=$(daemon_pid)
	kill -TERM "$p"; wait_gone "$p" || fail "daemon ignored SIGTERM"
	rm -f /tmp/sbx-daemon.pid
	[ -e /sys/fs/bpf/bpfsbx/maps/sbx_sessions ] || fail "pins removed on SIGTERM"
	[ -e /sys/fs/bpf/bpfsbx/links/sbx_file_open ] || fail "links removed on SIGTERM"
	daemon_start
	grep -q "(pid [0-9]*, adopted)" $DLOG || fail "did not adopt pins"
}

# Entries no live session accounts for (a session that ended while no
# daemon ran, a grant made just before a kill) go when a daemon starts:
# a session's end deletes only the keys it recorded.
test_restarted_daemon_sweeps_grants_and_addresses_of_no_session() {
	local ghost=18446744073709551600	# a cgroup id no session has
	for m in sbx_grants sbx_learned; do
		sizes=$(bpftool map show pinned /sys/fs/bpf/bpfsbx/maps/$m |
			sed -n 's/.*key \([0-9]*\)B  *value \([0-9]*\)B.*/\1 \2/p')
		read -r ks vs <<<"$sizes"
		[ -n "$ks" ] || fail "no sizes for $m"
		key="f0 ff ff ff ff ff ff ff$(printf ' 00%.0s' $(seq $((ks - 8))))"
		val=$(printf '00 %.0s' $(seq $vs))
		bpftool map update pinned /sys/fs/bpf/bpfsbx/maps/$m key hex $key value hex $val ||
			fail "planting into $m"
		[ "$(map_keys_of $m $ghost)" = 1 ] || fail "$m: the planted entry is not there"
	done
	daemon_stop
	daemon_start
	for m in sbx_grants sbx_learned; do
		[ "$(map_keys_of $m $ghost)" = 0 ] || fail "$m: the restarted daemon kept an entry of no session"
	done
}

# A policy that leaves the kernel (its last session ended, its time in the
# cache ran out) takes every entry it put into every rule map with it: the
# daemon deletes the keys it recorded when it applied the policy, and walks
# no map for them.
test_released_policy_leaves_every_rule_map() {
	local p=/tmp/release-pol.yaml maps="sbx_inode_rules sbx_chain_rules sbx_name_rules sbx_net4 sbx_net6"
	local id m left
	cat >$p <<'YAML'
version: 1
files:
  default: allow
  rules:
    - {path: /srv/sbx/denied/, access: all, verdict: deny, reason: "an inode"}
    - {path: /srv/sbx/not-made-yet/file, access: all, verdict: deny, reason: "a chain"}
    - {path: "*.release-test", access: read, verdict: deny, reason: "a name"}
network:
  default: allow
  rules:
    - {cidr: [10.67.0.0/16, "fd67::/16"], verdict: deny, reason: "two prefixes"}
YAML
	chmod 644 $p
	daemon_stop
	DAEMON_ARGS="--policy-cache-ttl 0" daemon_start
	rm -f /tmp/go.rel
	in_session $p sh -c "while [ ! -e /tmp/go.rel ]; do sleep 0.05; done" &
	bg=$!
	wait_for sh -c "[ \"\$($SBX status | sed -n 's/^sessions: //p')\" = 1 ]" || fail "no session"
	id=$("$SBX" status --json | python3 -S -c 'import json, sys; print(json.load(sys.stdin)["sessions"][0]["policy_id"])')
	for m in $maps; do
		[ "$(policy_keys_of $m $id)" -ge 1 ] || fail "$m holds nothing of policy $id"
	done
	touch /tmp/go.rel
	wait $bg || true
	wait_for sh -c "[ \"\$($SBX status | sed -n 's/^sessions: //p')\" = 0 ]" || fail "the session did not end"
	for _ in $(seq 50); do
		left=""
		for m in $maps; do
			[ "$(policy_keys_of $m $id)" = 0 ] || left="$left $m"
		done
		[ -z "$left" ] && break
		sleep 0.1
	done
	[ -z "$left" ] || fail "policy $id left entries in:$left"
	daemon_stop
	daemon_start
}

test_second_daemon_refused() {
	out=$("$SBX" daemon --log /tmp/second.jsonl 2>&1) && fail "second daemon started"
	echo "$out" | grep -q "already running" || fail "unexpected: $out"
	"$SBX" status >/dev/null || fail "first daemon hurt"
}

test_bad_cli_input() {
	rc=0; out=$("$SBX" run --bogus -- true 2>&1) || rc=$?
	[ $rc = 2 ] && echo "$out" | grep -q "unrecognized option\|unknown option" || fail "unknown flag: rc=$rc $out"
	rc=0; out=$(as_user "$SBX" run --policy /nonexistent.yaml -- true 2>&1) || rc=$?
	[ $rc = 1 ] && echo "$out" | grep -q "not found" || fail "missing policy: rc=$rc $out"
	rc=0; out=$(as_user "$SBX" unload 2>&1) || rc=$?
	[ $rc = 1 ] && echo "$out" | grep -q "only root" || fail "non-root unload: rc=$rc $out"
	rc=0; out=$("$SBX" frobnicate 2>&1) || rc=$?
	[ $rc = 2 ] || fail "unknown command: rc=$rc $out"
	rc=0; out=$(as_user "$SBX" run -- 2>&1) || rc=$?
	[ $rc = 2 ] || fail "no command: rc=$rc $out"
}

test_bad_policy_rejected_whole() {
	printf 'version: 1\nfiles:\n  default: allow\n  rules:\n    - path: ~/x\n      verdict: maybe\n      reason: r\nnetwork: {default: allow}\n' >/tmp/bad.yaml
	chmod 644 /tmp/bad.yaml
	rc=0; out=$(as_user "$SBX" run --policy /tmp/bad.yaml --project $PROJ -- true 2>&1) || rc=$?
	[ $rc = 1 ] || fail "bad policy: rc=$rc $out"
	echo "$out" | grep -q "bad.yaml:6:" || fail "no file:line in: $out"
	[ "$($SBX status | sed -n 's/^sessions: //p')" = 0 ] || fail "a session was left"
	[ -z "$(session_cgroups)" ] || fail "cgroup left: $(session_cgroups)"
}

test_unload_refuses_live_sessions_then_embedded_run() {
	in_session $POL/core.yaml sleep 3 &
	bg=$!
	sleep 1
	out=$("$SBX" unload 2>&1) && fail "unload with a live session succeeded"
	echo "$out" | grep -q "live session" || fail "unexpected: $out"
	wait $bg
	wait_for sh -c "[ \"\$($SBX status | sed -n 's/^sessions: //p')\" = 0 ]"
	"$SBX" unload || fail "unload failed"
	[ ! -e /sys/fs/bpf/bpfsbx ] || fail "pins left after unload"
	out=$("$SBX" unload 2>&1) || fail "a second unload failed: $out"
	echo "$out" | grep -q "nothing loaded" || fail "second unload: $out"
	rm -f /tmp/sbx-daemon.pid
	# no daemon: root runs a one-off session for the sudo user
	out=$(SUDO_UID=$TUID SUDO_GID=$TUID "$SBX" run --policy $POL/core.yaml --project $PROJ -- \
		sh -c "id -u; $SBXT open $THOME/.ssh/id_rsa" 2>&1 || true)
	echo "$out" | grep -qx "$TUID" || fail "command did not run as the sudo user: $out"
	echo "$out" | grep -q "ERR EPERM" || fail "embedded session not enforced: $out"
	[ ! -e /sys/fs/bpf/bpfsbx ] || fail "embedded daemon left its pins"
	# no daemon_start: a fresh load is half a minute of verifier under
	# TCG, and run-all starts the daemon again before any test that follows
}

test_no_bpf_lsm_clear_error() {
	daemon_stop	# the pins stay: nothing may change them below
	echo "lockdown,capability,landlock,yama" >/tmp/fake-lsm
	mount --bind /tmp/fake-lsm /sys/kernel/security/lsm
	rc=0; out=$("$SBX" daemon --log /tmp/x.jsonl 2>&1) || rc=$?
	drc=0; dout=$("$SBX" doctor 2>&1) || drc=$?
	rrc=0; rout=$("$SBX" run --policy $POL/core.yaml --project /root -- true 2>&1) || rrc=$?
	umount /sys/kernel/security/lsm
	[ $rc = 1 ] || fail "daemon without BPF-LSM: rc=$rc $out"
	echo "$out" | grep -q "BPF-LSM is not active" || fail "unclear message: $out"
	[ $rrc = 1 ] && echo "$rout" | grep -q "BPF-LSM is not active" || fail "run: rc=$rrc $rout"
	[ $drc = 1 ] || fail "doctor passed without BPF-LSM: $dout"
	# built in, not listed: the line is the real list (capability is implied) plus bpf
	echo "$dout" | grep -qF "'bpf' is not in its LSM list (lockdown,capability,landlock,yama)" ||
		fail "doctor's diagnosis: $dout"
	echo "$dout" | grep -qF 'add "lsm=lockdown,landlock,yama,bpf" to the kernel command line' ||
		fail "doctor does not say how to fix it: $dout"
	echo "$rout" | grep -qF 'add "lsm=lockdown,landlock,yama,bpf"' || fail "run's fix: $rout"
	# nothing half-made: no temporary pin directory, the old pins intact
	[ -z "$(ls -d /sys/fs/bpf/bpfsbx_new_* 2>/dev/null)" ] || fail "half-loaded state left"
	[ -e /sys/fs/bpf/bpfsbx/links/sbx_file_open ] || fail "pins damaged"
	daemon_start
	"$SBX" doctor >/tmp/doctor.out 2>&1 || fail "doctor fails with BPF-LSM: $(cat /tmp/doctor.out)"
}

# Type=notify (tools/bpfsbx.service.in): READY=1 comes once the programs are
# loaded and attached and the daemon answers, so `systemctl start` returns
# when sessions can be confined; STOPPING=1 on SIGTERM. The guest has no
# systemd as PID 1: a datagram socket listens where NOTIFY_SOCKET points,
# as systemd's does, and checks the daemon at the moment each message lands.
test_notify_ready_only_once_confining() {
	# the programs stay pinned: the new daemon adopts them (a fresh load
	# takes minutes under TCG on a busy host); READY=1 is sent at the same
	# point either way, once sbx_daemon_init has returned
	daemon_stop
	rm -f /tmp/sbx-notify.sock /tmp/sbx-notify.log
	python3 -S - "$SBX" >/tmp/sbx-notify.log 2>&1 <<'PY' &
import os, socket, subprocess, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/tmp/sbx-notify.sock")
s.settimeout(150)
while True:
    msg = s.recv(4096).decode()
    if "STOPPING=1" in msg:	# the daemon is going: nothing to ask it
        print("MSG %r" % msg, flush=True)
        break
    st = subprocess.run([sys.argv[1], "status"], capture_output=True, text=True, timeout=60)
    linked = os.path.exists("/sys/fs/bpf/bpfsbx/links/sbx_file_open")
    print("MSG %r status=%d linked=%s %s" % (msg, st.returncode, linked,
          (st.stdout.splitlines() or [""])[0]), flush=True)
PY
	lp=$!
	wait_for test -S /tmp/sbx-notify.sock || fail "the listener did not start"
	NOTIFY_SOCKET=/tmp/sbx-notify.sock "$SBX" daemon --log "$EVENTS" >>"$DLOG" 2>&1 &
	echo $! >/tmp/sbx-daemon.pid
	for _ in $(seq 1200); do grep -q 'READY=1' /tmp/sbx-notify.log && break; sleep 0.1; done
	r=$(grep -m1 'READY=1' /tmp/sbx-notify.log) ||
		fail "no READY=1: $(cat /tmp/sbx-notify.log; tail -n 3 $DLOG)"
	# nothing before READY but (at most) STATUS lines
	! sed -n '1,/READY=1/p' /tmp/sbx-notify.log | grep -v 'READY=1' | grep -v "MSG 'STATUS=" ||
		fail "before READY: $(cat /tmp/sbx-notify.log)"
	echo "$r" | grep -q 'status=0 linked=True mode: kernel-enforced' ||
		fail "READY=1 before the daemon confined: $r"
	echo "$r" | grep -Eq 'STATUS=confining: programs (loaded|adopted) and attached' || fail "STATUS: $r"
	p=$(daemon_pid)
	kill -TERM "$p"; wait_gone "$p" || fail "daemon ignored SIGTERM"
	rm -f /tmp/sbx-daemon.pid
	for _ in $(seq 300); do grep -q "MSG 'STOPPING=1" /tmp/sbx-notify.log && break; sleep 0.1; done
	kill $lp 2>/dev/null || true	# gone already once it read STOPPING=1
	grep -q "MSG 'STOPPING=1" /tmp/sbx-notify.log || fail "no STOPPING=1: $(cat /tmp/sbx-notify.log)"
	rm -f /tmp/sbx-notify.sock
	daemon_start
}

flows_61_only sigkill_daemon_session_stays_confined sigterm_leaves_enforcement_pinned \
	restarted_daemon_sweeps_grants_and_addresses_of_no_session no_bpf_lsm_clear_error \
	notify_ready_only_once_confining
